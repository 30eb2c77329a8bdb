//! `Db::bulk_load`: sorted entries in self-committing batches, flushed once at the end.
//!
//! Real libmdbx environments in temp dirs (capped at 1 GiB so valgrind can reserve them). Loads
//! killed midway are tested in `tests/crash/bulk.rs`.

#[path = "support/tempdb.rs"]
mod tempdb;

use tabula::{BulkReport, Db, Error, Options, Raw, Schema, Table};

/// The append workload's table: `u32` integer keys, raw byte values.
#[derive(Table)]
#[table(name = "log", key = u32, value = Vec<u8>, codec = Raw, integer_key)]
struct Log;

/// String keys, bincode values: owned and borrowed entries.
#[derive(Table)]
#[table(name = "names", key = String, value = u64)]
struct Names;

/// Several values per key.
#[derive(Table)]
#[table(name = "tags", key = u64, value = String, dupsort)]
struct Tags;

#[derive(Schema)]
struct BulkSchema(Log, Names, Tags);

fn options() -> Options {
    Options::new().max_size(1 << 30).growth_step(4 << 20)
}

/// The value stored under `k`: derived from the key so any entry can be checked alone.
fn value(k: u32) -> Vec<u8> {
    let len = 20 + (k % 80) as usize;
    (0..len).map(|i| (k as usize * 31 + i) as u8).collect()
}

/// Every entry of `Log`, checked against `value`; returns the keys.
fn log_keys(db: &Db<BulkSchema>) -> Vec<u32> {
    let tx = db.read().unwrap();
    tx.iter::<Log>()
        .map(|e| {
            let (k, v) = e.unwrap();
            assert_eq!(v, value(k), "value of key {k}");
            k
        })
        .collect()
}

#[test]
fn round_trip_across_batches() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    let mut seen: Vec<BulkReport> = Vec::new();
    let report = db
        .bulk_loader::<Log>()
        .batch_entries(1000)
        .on_batch(|r| seen.push(*r))
        .load((0..10_500u32).map(|k| (k, value(k))))
        .unwrap();
    let bytes: u64 = (0..10_500u32).map(|k| 4 + value(k).len() as u64).sum();
    assert_eq!(report.entries, 10_500);
    assert_eq!(report.batches, 11, "10 full batches and a last one of 500");
    assert_eq!(report.bytes, bytes);
    assert_eq!(seen.len(), 11);
    assert_eq!(seen[0].entries, 1000);
    assert_eq!(seen[9].entries, 10_000);
    assert_eq!(seen.last(), Some(&report));
    assert_eq!(log_keys(&db), (0..10_500).collect::<Vec<_>>());
    assert_eq!(db.read().unwrap().len::<Log>().unwrap(), 10_500);
    let check = db.check().unwrap();
    assert!(check.is_ok(), "{check:?}");
}

#[test]
fn the_bytes_bound_cuts_batches_too() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    // Every value is 100 bytes + a 4-byte key: a 1040-byte bound closes a batch every 10.
    let v = vec![7u8; 100];
    let report = db
        .bulk_loader::<Log>()
        .batch_bytes(1040)
        .load((0..95u32).map(|k| (k, &v)))
        .unwrap();
    assert_eq!((report.entries, report.batches), (95, 10));
    assert_eq!(report.bytes, 95 * 104);
    assert_eq!(db.read().unwrap().len::<Log>().unwrap(), 95);
}

#[test]
fn loads_after_existing_data_and_with_the_short_form() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    let mut tx = db.write().unwrap();
    for k in 0..10u32 {
        tx.put::<Log>(&k, &value(k)).unwrap();
    }
    tx.commit().unwrap();
    let report = db
        .bulk_load::<Log>((10..20_000u32).map(|k| (k, value(k))))
        .unwrap();
    assert_eq!(report.entries, 19_990);
    assert_eq!(report.batches, 1, "the default batch holds 100,000 entries");
    assert_eq!(log_keys(&db), (0..20_000).collect::<Vec<_>>());
}

#[test]
fn out_of_order_key_names_the_table_and_keeps_committed_data() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    // Committed before the load.
    let mut tx = db.write().unwrap();
    for k in 0..100u32 {
        tx.put::<Log>(&k, &value(k)).unwrap();
    }
    tx.commit().unwrap();
    // 100..2600 in order, then 50: batches 100..1100 and 1100..2100 commit, the third (from
    // 2100) is in progress when 50 comes.
    let keys = (100..2600u32).chain([50]).chain(2600..3000);
    let mut batches = 0;
    let err = db
        .bulk_loader::<Log>()
        .batch_entries(1000)
        .on_batch(|_| batches += 1)
        .load(keys.map(|k| (k, value(k))))
        .unwrap_err();
    match &err {
        Error::AppendOutOfOrder { table, key, last } => {
            assert_eq!(*table, "log");
            // Typed, from the native-endian stored form of an `integer_key` table.
            assert_eq!(key.to_string(), "50");
            assert_eq!(key.stored().0, 50u32.to_ne_bytes());
            let last = last.as_ref().expect("the last key is named");
            assert_eq!(last.to_string(), "2599");
        }
        other => panic!("expected AppendOutOfOrder, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("table `log`"), "{msg}");
    assert!(msg.contains("out of order"), "{msg}");
    assert_eq!(batches, 2);
    // The data from before the load and the two committed batches; the batch in progress is
    // rolled back.
    assert_eq!(log_keys(&db), (0..2100).collect::<Vec<_>>());
    let check = db.check().unwrap();
    assert!(check.is_ok(), "{check:?}");
    // The load can resume after the last key.
    let last = db.read().unwrap().cursor::<Log>().unwrap().last().unwrap();
    let resume = last.unwrap().0 + 1;
    db.bulk_load::<Log>((resume..3000).map(|k| (k, value(k))))
        .unwrap();
    assert_eq!(log_keys(&db), (0..3000).collect::<Vec<_>>());
}

#[test]
fn a_key_equal_to_the_last_is_out_of_order() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    let err = db
        .bulk_load::<Log>([(1u32, value(1)), (2, value(2)), (2, vec![0])])
        .unwrap_err();
    assert!(
        matches!(err, Error::AppendOutOfOrder { table: "log", .. }),
        "{err:?}"
    );
    // One batch, rolled back whole.
    assert!(log_keys(&db).is_empty());
}

#[test]
fn a_first_key_not_after_the_table_is_refused() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    db.bulk_load::<Log>((0..10u32).map(|k| (k, value(k))))
        .unwrap();
    let before = db.info().unwrap().last_txn;
    let err = db
        .bulk_load::<Log>((5..20u32).map(|k| (k, value(k))))
        .unwrap_err();
    assert!(
        matches!(err, Error::AppendOutOfOrder { table: "log", .. }),
        "{err:?}"
    );
    assert_eq!(db.info().unwrap().last_txn, before, "nothing committed");
    assert_eq!(log_keys(&db), (0..10).collect::<Vec<_>>());
}

#[test]
fn an_empty_load_commits_nothing() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    let before = db.info().unwrap().last_txn;
    let mut calls = 0;
    let report = db
        .bulk_loader::<Log>()
        .on_batch(|_| calls += 1)
        .load(std::iter::empty::<(u32, Vec<u8>)>())
        .unwrap();
    assert_eq!(report, BulkReport::default());
    assert_eq!(calls, 0);
    assert_eq!(db.info().unwrap().last_txn, before);
    assert!(db.read().unwrap().is_empty::<Log>().unwrap());
}

#[test]
fn owned_and_borrowed_entries() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    let names: Vec<(String, u64)> = ["ada", "bob", "eve"]
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), i as u64))
        .collect();
    // Borrowed key (`&str` for a `String` key) and borrowed value.
    db.bulk_load::<Names>(names.iter().map(|(k, v)| (k.as_str(), v)))
        .unwrap();
    // Owned, after them; then a collection by reference.
    db.bulk_load::<Names>(vec![("fay".to_string(), 3u64), ("gus".to_string(), 4)])
        .unwrap();
    let more = vec![("hal".to_string(), 5u64)];
    db.bulk_load::<Names>(&more).unwrap();
    let tx = db.read().unwrap();
    let all: Vec<(String, u64)> = tx.iter::<Names>().map(Result::unwrap).collect();
    assert_eq!(
        all,
        [
            ("ada", 0),
            ("bob", 1),
            ("eve", 2),
            ("fay", 3),
            ("gus", 4),
            ("hal", 5)
        ]
        .map(|(k, v)| (k.to_string(), v))
    );
}

#[test]
fn dupsort_takes_pairs_in_order_and_refuses_the_rest() {
    let (_dir, db) = tempdb::open_with::<BulkSchema>(options());
    let pairs = [
        (1u64, "a"),
        (1, "b"),
        (1, "c"),
        (2, "a"),
        (3, "x"),
        (3, "y"),
    ]
    .map(|(k, v)| (k, v.to_string()));
    let report = db
        .bulk_loader::<Tags>()
        .batch_entries(2)
        .load(pairs.clone())
        .unwrap();
    assert_eq!((report.entries, report.batches), (6, 3));
    let tx = db.read().unwrap();
    let all: Vec<(u64, String)> = tx.iter::<Tags>().map(Result::unwrap).collect();
    assert_eq!(all, pairs.to_vec());
    drop(tx);
    // The same pair again, a smaller value of the last key, a smaller key: all out of order.
    for bad in [(3u64, "y"), (3, "a"), (2, "z")] {
        let err = db
            .bulk_load::<Tags>([(bad.0, bad.1.to_string())])
            .unwrap_err();
        assert!(
            matches!(err, Error::AppendOutOfOrder { table: "tags", .. }),
            "{bad:?}: {err:?}"
        );
    }
    // A greater value of the last key and a new key are fine.
    db.bulk_load::<Tags>([(3u64, "z".to_string()), (4, "a".to_string())])
        .unwrap();
    assert_eq!(db.read().unwrap().len::<Tags>().unwrap(), 8);
}

#[test]
fn without_the_final_flush_the_load_is_still_committed() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<BulkSchema>(dir.path(), options()).unwrap();
        let report = db
            .bulk_loader::<Log>()
            .batch_entries(300)
            .sync_at_end(false)
            .load((0..1000u32).map(|k| (k, value(k))))
            .unwrap();
        assert_eq!((report.entries, report.batches), (1000, 4));
    }
    // Reopened: every batch is there (the last commit was durable under `SyncMode::Durable`).
    let db = tabula::open::<BulkSchema>(dir.path(), options()).unwrap();
    assert_eq!(log_keys(&db), (0..1000).collect::<Vec<_>>());
    let check = db.check().unwrap();
    assert!(check.is_ok(), "{check:?}");
}

#[test]
fn a_read_only_database_refuses_a_load() {
    let dir = tempfile::tempdir().unwrap();
    drop(tabula::open::<BulkSchema>(dir.path(), options()).unwrap());
    let db = tabula::open::<BulkSchema>(dir.path(), options().read_only(true)).unwrap();
    let err = db.bulk_load::<Log>([(1u32, value(1))]).unwrap_err();
    assert!(matches!(err, Error::ReadOnly { .. }), "{err:?}");
    assert!(err.to_string().contains("read-only"), "{err}");
}
