//! Many readers and one writer in one process: every read snapshot is whole (the money moved
//! between two tables always adds up), nothing deadlocks, and reader slots are reused rather
//! than leaked.

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tabula::{Db, Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "checking", key = u32, value = u64)]
struct Checking;

#[derive(Table)]
#[table(name = "savings", key = u32, value = u64)]
struct Savings;

#[derive(Schema)]
struct Bank(Checking, Savings);

const ACCOUNTS: u32 = 32;
const START: u64 = 1_000;
const TOTAL: u64 = 2 * ACCOUNTS as u64 * START;
const READERS: usize = 8;
const WRITES_PER_ROUND: u64 = 1000;
const ROUNDS: u64 = 3;

/// A fresh bank: every account holds `START` in both tables.
fn bank() -> (tempfile::TempDir, Db<Bank>) {
    // SafeNoSync keeps 900 commits quick; visibility and isolation do not depend on the mode.
    let (dir, db) =
        tempdb::open_with::<Bank>(Options::new().max_size(1 << 30).sync(SyncMode::SafeNoSync));
    let mut tx = db.write().unwrap();
    for a in 0..ACCOUNTS {
        tx.put::<Checking>(&a, &START).unwrap();
        tx.put::<Savings>(&a, &START).unwrap();
    }
    tx.commit().unwrap();
    (dir, db)
}

/// The total of both tables in one snapshot, read in two passes with a yield between them so
/// a torn snapshot (one table before a commit, the other after) would show.
fn total(db: &Db<Bank>) -> (u64, u64) {
    let tx = db.read().unwrap();
    let a: u64 = tx.iter::<Checking>().values().map(Result::unwrap).sum();
    std::thread::yield_now();
    let b: u64 = tx.iter::<Savings>().values().map(Result::unwrap).sum();
    (a + b, tx.id())
}

/// What the readers of one round saw.
struct Seen {
    /// Snapshots checked.
    snapshots: u64,
    /// The most distinct snapshot IDs one reader saw.
    distinct: u64,
    /// Snapshots taken while the writer was between its first and its last commit of the round.
    during: u64,
}

/// One writer moving value between the tables, `READERS` threads checking snapshots until it is
/// done. Every snapshot must be one of the round's commits (from the one before its first write
/// to its last), and a read begun after the writer finished must see its last commit.
fn round(db: &Db<Bank>, round: u64) -> Seen {
    let done = AtomicBool::new(false);
    let snapshots = AtomicU64::new(0);
    let distinct = AtomicU64::new(0);
    let during = AtomicU64::new(0);
    let start = Barrier::new(READERS + 1);
    // The snapshot before the round's first write, and (set by the writer before `done`) the
    // one of its last commit. A commit that changes nothing (a zero amount) keeps the ID.
    let before = db.info().unwrap().last_txn;
    let last = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..READERS {
            s.spawn(|| {
                start.wait();
                let mut ids = Vec::new();
                // At least a few snapshots each, then until the writer is done.
                let mut n = 0u64;
                while n < 20 || !done.load(Ordering::Acquire) {
                    let (sum, id) = total(db);
                    assert_eq!(sum, TOTAL, "torn or lost snapshot at txn {id}");
                    let last_id = ids.last().copied().unwrap_or(0);
                    assert!(id >= last_id, "snapshots go forward: {id} after {last_id}");
                    ids.push(id);
                    n += 1;
                }
                // The writer is done: a read begun now sees its last commit.
                let after = last.load(Ordering::Acquire);
                let (sum, id) = total(db);
                assert_eq!(sum, TOTAL);
                assert_eq!(id, after, "a read begun after the last commit of the round");
                // Every snapshot is one of the round's commits.
                let (first, latest) = (ids[0], ids[ids.len() - 1]);
                assert!(
                    before <= first && latest <= after,
                    "snapshots {first}..={latest} outside the round's commits {before}..={after}"
                );
                let mut distinct_ids = ids.clone();
                distinct_ids.dedup();
                let mid = ids.iter().filter(|&&id| id > before && id < after).count();
                snapshots.fetch_add(n, Ordering::Relaxed);
                distinct.fetch_max(distinct_ids.len() as u64, Ordering::Relaxed);
                during.fetch_add(mid as u64, Ordering::Relaxed);
            });
        }
        start.wait();
        // The readers stop when the writer is done, also when it panics (no hang on a failure).
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
            }
        }
        let _done = Done(&done);
        for i in 0..WRITES_PER_ROUND {
            let r = random::mix(round << 32 | i);
            let from = (r % u64::from(ACCOUNTS)) as u32;
            let to = ((r >> 16) % u64::from(ACCOUNTS)) as u32;
            let mut tx = db.write().unwrap();
            // Alternate direction so balances neither run dry nor pile up in one table.
            if i.is_multiple_of(2) {
                let have = tx.get::<Checking>(&from).unwrap().unwrap();
                let amount = (r >> 32) % (have + 1);
                tx.put::<Checking>(&from, &(have - amount)).unwrap();
                let got = tx.get::<Savings>(&to).unwrap().unwrap();
                tx.put::<Savings>(&to, &(got + amount)).unwrap();
            } else {
                let have = tx.get::<Savings>(&from).unwrap().unwrap();
                let amount = (r >> 32) % (have + 1);
                tx.put::<Savings>(&from, &(have - amount)).unwrap();
                let got = tx.get::<Checking>(&to).unwrap().unwrap();
                tx.put::<Checking>(&to, &(got + amount)).unwrap();
            }
            tx.commit().unwrap();
        }
        last.store(db.info().unwrap().last_txn, Ordering::Release);
    });
    Seen {
        snapshots: snapshots.load(Ordering::Relaxed),
        distinct: distinct.load(Ordering::Relaxed),
        during: during.load(Ordering::Relaxed),
    }
}

#[test]
fn eight_readers_one_writer_no_torn_read_no_slot_leak() {
    let (_dir, db) = bank();
    // Warm up: as many read transactions at once as the rounds will ever hold (8 readers),
    // plus one; they are parked in the pool when dropped.
    let warm: Vec<_> = (0..=READERS).map(|_| db.read().unwrap()).collect();
    drop(warm);
    // `readers` is libmdbx's high-water mark of reader slots. With the pool reusing parked
    // transactions (and their slots) it must not move during the rounds; a leaked slot per
    // round, or a txn begun fresh instead of renewed, would raise it.
    let warm_high_water = db.info().unwrap().readers;
    assert!(warm_high_water as usize > READERS);
    let mut high_water = Vec::new();
    let (mut checked, mut during) = (0, 0);
    for r in 0..ROUNDS {
        let seen = round(&db, r);
        checked += seen.snapshots;
        during += seen.during;
        // Readers ran while the writer committed: they saw more than one snapshot, and some
        // between the round's first and last commit.
        assert!(
            seen.distinct >= 2,
            "round {r}: readers saw {} snapshot(s)",
            seen.distinct
        );
        assert!(
            seen.during > 0,
            "round {r}: no snapshot between the writer's first and last commit of {} \
             snapshots: the readers did not run while it wrote",
            seen.snapshots
        );
        high_water.push(db.info().unwrap().readers);
    }
    assert!(
        high_water.iter().all(|&h| h == warm_high_water),
        "reader slots grew from {warm_high_water}: {high_water:?}"
    );
    let (sum, _) = total(&db);
    assert_eq!(sum, TOTAL);
    assert!(db.check().unwrap().is_ok());
    eprintln!(
        "concurrency: {ROUNDS} rounds x {WRITES_PER_ROUND} write txns, {checked} reader \
         snapshots checked ({during} while the writer was mid-round), reader slots high-water \
         {high_water:?}"
    );
}

/// Read transactions are handed between threads (the pool parks and renews them): a parked txn
/// must not keep an old snapshot.
#[test]
fn pooled_read_txns_see_the_latest_commit() {
    let (_dir, db) = bank();
    for i in 0..50u64 {
        let mut tx = db.write().unwrap();
        tx.put::<Checking>(&0, &(START + i + 1)).unwrap();
        tx.put::<Savings>(&0, &(START - i - 1)).unwrap();
        tx.commit().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                let tx = db.read().unwrap();
                assert_eq!(tx.get::<Checking>(&0).unwrap(), Some(START + i + 1));
            });
        });
        let tx = db.read().unwrap();
        assert_eq!(tx.get::<Savings>(&0).unwrap(), Some(START - i - 1));
    }
}
