//! Finished read transactions stay parked on their snapshot (`Options::reuse_read_snapshots`,
//! on by default). These tests hold that to its two promises: a `read` always sees every commit
//! that finished before it began, and a parked snapshot never costs the writer space — libmdbx
//! ousts it when the writer needs its pages, where a live read transaction makes the map fill.

#[path = "support/tempdb.rs"]
mod tempdb;

use tabula::{Db, Error, Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "counter", key = u8, value = u64)]
struct Counter;

#[derive(Table)]
#[table(name = "blobs", key = u32, value = Vec<u8>)]
struct Blobs;

#[derive(Schema)]
struct S(Counter, Blobs);

fn options(reuse: bool) -> Options {
    Options::new()
        .max_size(4 << 20)
        .growth_step(1 << 20)
        .sync(SyncMode::SafeNoSync)
        .reuse_read_snapshots(reuse)
}

fn bump(db: &Db<S>, to: u64) {
    let mut tx = db.write().unwrap();
    tx.put::<Counter>(&0, &to).unwrap();
    tx.commit().unwrap();
}

/// Each read sees the commit made just before it, on this thread and on others (the pool hands
/// parked transactions between threads), in both modes.
fn reads_see_every_earlier_commit(reuse: bool) {
    let (_dir, db) = tempdb::open_with::<S>(options(reuse));
    for i in 1..=300u64 {
        // Two reads of the same snapshot first: the second reuses the parked one unchanged.
        for _ in 0..2 {
            let tx = db.read().unwrap();
            assert_eq!(tx.get::<Counter>(&0).unwrap(), (i > 1).then_some(i - 1));
        }
        bump(&db, i);
        assert_eq!(db.read().unwrap().get::<Counter>(&0).unwrap(), Some(i));
        if i % 50 == 0 {
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        let tx = db.read().unwrap();
                        assert_eq!(tx.get::<Counter>(&0).unwrap(), Some(i));
                    });
                }
            });
        }
    }
}

#[test]
fn parked_reads_see_every_earlier_commit() {
    reads_see_every_earlier_commit(true);
}

#[test]
fn reset_reads_see_every_earlier_commit() {
    reads_see_every_earlier_commit(false);
}

/// Rewrites 8 × 32 KiB blobs 120 times (≈ 30 MiB written) in a 4 MiB map: only possible if
/// the writer can reuse the pages each rewrite frees.
fn rewrite_blobs(db: &Db<S>, rounds: u32) -> Result<(), Error> {
    for round in 0..rounds {
        let mut tx = db.write()?;
        for k in 0..8u32 {
            tx.put::<Blobs>(&k, &vec![(round % 251) as u8; 32 << 10])?;
        }
        tx.put::<Counter>(&0, &u64::from(round))?;
        tx.commit()?;
    }
    Ok(())
}

#[test]
fn a_parked_snapshot_is_ousted_when_the_writer_needs_space() {
    let (_dir, db) = tempdb::open_with::<S>(options(true));
    rewrite_blobs(&db, 1).unwrap();
    // Park a snapshot on this thread's slot (the read reads the blobs of round 0).
    {
        let tx = db.read().unwrap();
        assert_eq!(tx.get::<Blobs>(&3).unwrap().unwrap()[0], 0);
    }
    // The parked snapshot does not stop the writer: it is ousted when its pages are needed.
    rewrite_blobs(&db, 120).unwrap();
    // The next read restarts on the latest snapshot.
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Counter>(&0).unwrap(), Some(119));
    assert_eq!(tx.get::<Blobs>(&3).unwrap().unwrap()[0], 119);
    drop(tx);
    assert!(db.check().unwrap().is_ok());
    assert!(db.info().unwrap().file_size <= 4 << 20);
}

#[test]
fn a_live_read_transaction_pins_its_snapshot_until_the_map_is_full() {
    // The control for the test above: the same rewrite with a read transaction still open
    // fails with `MapFull` (naming the table), and succeeds at the first try once the reader
    // ends.
    let (_dir, db) = tempdb::open_with::<S>(options(true));
    rewrite_blobs(&db, 1).unwrap();
    let pin = db.read().unwrap();
    match rewrite_blobs(&db, 120) {
        Err(Error::MapFull { table, .. }) => assert_eq!(table, Some("blobs")),
        other => panic!("expected MapFull while a reader pins its snapshot, got {other:?}"),
    }
    assert_eq!(pin.get::<Blobs>(&3).unwrap().unwrap()[0], 0);
    drop(pin);
    rewrite_blobs(&db, 120).unwrap();
    assert_eq!(db.read().unwrap().get::<Counter>(&0).unwrap(), Some(119));
    assert!(db.check().unwrap().is_ok());
}

#[test]
fn reset_mode_pins_nothing_between_reads() {
    let (_dir, db) = tempdb::open_with::<S>(options(false));
    rewrite_blobs(&db, 1).unwrap();
    drop(db.read().unwrap());
    rewrite_blobs(&db, 120).unwrap();
    assert_eq!(db.read().unwrap().get::<Counter>(&0).unwrap(), Some(119));
}

#[test]
fn after_a_full_map_reads_stop_parking() {
    // As above, with a small commit between the failure and the reader's end: the ended
    // reader would be parked on the latest snapshot, and with the file at its upper bound
    // libmdbx 0.14.4 then fails the next large write with MapFull where it succeeds with no
    // reader parked. After a full map the pool resets finished reads instead, so it succeeds.
    let (_dir, db) = tempdb::open_with::<S>(options(true));
    rewrite_blobs(&db, 1).unwrap();
    let pin = db.read().unwrap();
    assert!(matches!(
        rewrite_blobs(&db, 120),
        Err(Error::MapFull { .. })
    ));
    bump(&db, 7);
    drop(pin);
    rewrite_blobs(&db, 120).unwrap();
    assert_eq!(db.read().unwrap().get::<Counter>(&0).unwrap(), Some(119));
    // Reads still see every commit.
    bump(&db, 1000);
    assert_eq!(db.read().unwrap().get::<Counter>(&0).unwrap(), Some(1000));
}
