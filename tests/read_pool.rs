//! The read-transaction pool's fast path (`Db::read`: this thread's slot, unparked without a
//! look at the transaction's flags) against the cases it must hand to the slow path: more
//! threads than slots, slots and pool shared between threads, and the switch from parking to
//! resetting after a full map. Every read must see every commit that finished before it began,
//! and the pool must never hold more reader slots than it was sized for.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};

use tabula::{Db, Error, Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "counter", key = u8, value = u64)]
struct Counter;

#[derive(Table)]
#[table(name = "blobs", key = u32, value = Vec<u8>)]
struct Blobs;

#[derive(Schema)]
struct S(Counter, Blobs);

/// 8 reader slots: the pool keeps 4 parked transactions, 2 in thread slots and 2 in the
/// shared queue, so the 6 threads below share two thread slots.
fn options(max_size: usize) -> Options {
    Options::new()
        .max_readers(8)
        .max_size(max_size)
        .growth_step(1 << 20)
        .sync(SyncMode::SafeNoSync)
}

fn bump(db: &Db<S>, to: u64) {
    let mut tx = db.write().unwrap();
    tx.put::<Counter>(&0, &to).unwrap();
    tx.commit().unwrap();
}

fn counter(db: &Db<S>) -> u64 {
    db.read().unwrap().get::<Counter>(&0).unwrap().unwrap_or(0)
}

#[test]
fn more_threads_than_slots_read_every_earlier_commit() {
    const THREADS: usize = 6;
    const COMMITS: u64 = 300;
    let (_dir, db) = tempdb::open_with::<S>(options(1 << 28));
    let committed = AtomicU64::new(0);
    let start = Barrier::new(THREADS + 1);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                start.wait();
                let mut last = 0;
                while last < COMMITS {
                    let before = committed.load(Ordering::Acquire);
                    let seen = counter(&db);
                    assert!(seen >= before, "read {seen} after commit {before} finished");
                    assert!(seen >= last, "went back from {last} to {seen}");
                    last = seen;
                }
            });
        }
        start.wait();
        for n in 1..=COMMITS {
            bump(&db, n);
            committed.store(n, Ordering::Release);
        }
    });
    // Reads on this thread, which took part in none of the above.
    assert_eq!(counter(&db), COMMITS);
    // Every parked transaction holds a reader slot; no more are held than the pool keeps
    // (half the reader slots libmdbx gives: the 8 asked for, rounded up to fill its page).
    let pool = (db.info().unwrap().max_readers / 2) as usize;
    let mine = db
        .readers()
        .unwrap()
        .into_iter()
        .filter(|r| r.this_process)
        .count();
    assert!(
        (1..=pool).contains(&mine),
        "{mine} reader slots held, the pool keeps {pool}"
    );
    let held: Vec<_> = (0..4).map(|_| db.read().unwrap()).collect();
    assert!(
        held.iter()
            .all(|tx| tx.get::<Counter>(&0).unwrap() == Some(COMMITS))
    );
}

/// Rewrites 8 × 32 KiB blobs `rounds` times (as `tests/read_snapshots.rs` does): in a 4 MiB
/// map only possible if the writer can reuse the pages each rewrite frees.
fn rewrite_blobs(db: &Db<S>, rounds: u32) -> Result<(), Error> {
    for round in 0..rounds {
        let mut tx = db.write()?;
        for k in 0..8u32 {
            tx.put::<Blobs>(&k, &vec![round as u8; 32 << 10])?;
        }
        tx.commit()?;
    }
    Ok(())
}

#[test]
fn transactions_reset_after_a_full_map_come_back_from_every_thread() {
    // Threads that each hold a read transaction across the full map end them afterwards: from
    // then on they are reset, not parked, and go to their thread slots and the shared queue.
    // The next reads take them back from there (on these threads and others) and still see
    // every commit, and the writer reclaims the space.
    const THREADS: usize = 3;
    let (_dir, db) = tempdb::open_with::<S>(options(4 << 20));
    rewrite_blobs(&db, 1).unwrap();
    let pinned = Barrier::new(THREADS + 1);
    let full = Barrier::new(THREADS + 1);
    let ended = Barrier::new(THREADS + 1);
    let again = Barrier::new(THREADS + 1);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                let pin = db.read().unwrap();
                pinned.wait();
                full.wait();
                assert_eq!(pin.get::<Blobs>(&3).unwrap().unwrap()[0], 0);
                drop(pin); // reset: the map was full
                ended.wait();
                again.wait();
                assert_eq!(counter(&db), 1000);
            });
        }
        pinned.wait();
        assert!(matches!(
            rewrite_blobs(&db, 120),
            Err(Error::MapFull { .. })
        ));
        full.wait();
        ended.wait();
        rewrite_blobs(&db, 120).unwrap();
        bump(&db, 1000);
        again.wait();
    });
    assert_eq!(counter(&db), 1000);
    assert_eq!(
        db.read().unwrap().get::<Blobs>(&3).unwrap().unwrap()[0],
        119
    );
    assert!(db.check().unwrap().is_ok());
}
