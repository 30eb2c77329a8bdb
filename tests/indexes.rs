//! Secondary indexes: every write path that takes an indexed table keeps its indexes exact,
//! unique keys are enforced (a violating write fails naming table, index and key, and writes
//! nothing), queries by index key agree with the rows, and the startup step builds, rebuilds
//! and drops index tables. The random sequences are `tests/index_model.rs`'s.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use tabula::{Error, Index, Options, Schema, Table};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Transfer {
    from: u32,
    to: u32,
    hash: Option<u64>,
    tags: Vec<u8>,
}

fn t(from: u32, to: u32, hash: Option<u64>, tags: &[u8]) -> Transfer {
    Transfer {
        from,
        to,
        hash,
        tags: tags.to_vec(),
    }
}

#[derive(Table)]
#[table(name = "transfers", key = u64, value = Transfer, indexed)]
struct Transfers;

#[derive(Index)]
#[index(on = Transfers, key = u32, by = sender)]
struct BySender;

#[derive(Index)]
#[index(on = Transfers, key = u32, by = recipient)]
struct ByRecipient;

#[derive(Index)]
#[index(on = Transfers, key = u64, unique, by = hash)]
struct ByHash;

#[derive(Index)]
#[index(on = Transfers, key = u8, by = tags)]
struct ByTag;

fn sender(_: &u64, t: &Transfer) -> u32 {
    t.from
}
fn recipient(_: &u64, t: &Transfer) -> u32 {
    t.to
}
fn hash(_: &u64, t: &Transfer) -> Option<u64> {
    t.hash
}
fn tags(_: &u64, t: &Transfer) -> Vec<u8> {
    t.tags.clone()
}

/// A table without indexes, for writes beside the indexed one.
#[derive(Table)]
#[table(key = u64, value = String)]
struct Plainly;

#[derive(Schema)]
struct Indexer(Transfers, BySender, ByRecipient, ByHash, ByTag, Plainly);

/// Every index table's entries, read from the table itself.
type Entries = (
    BTreeSet<(u32, u64)>,
    BTreeSet<(u32, u64)>,
    BTreeSet<(u64, u64)>,
    BTreeSet<(u8, u64)>,
);

fn stored<H: tabula::Handle<Schema = Indexer>>(tx: &tabula::Reads<H>) -> Entries {
    (
        tx.iter::<BySender>().map(Result::unwrap).collect(),
        tx.iter::<ByRecipient>().map(Result::unwrap).collect(),
        tx.iter::<ByHash>().map(Result::unwrap).collect(),
        tx.iter::<ByTag>().map(Result::unwrap).collect(),
    )
}

/// The entries recomputed from the rows.
fn recomputed<H: tabula::Handle<Schema = Indexer>>(tx: &tabula::Reads<H>) -> Entries {
    let mut out = Entries::default();
    for row in tx.iter::<Transfers>() {
        let (id, t) = row.unwrap();
        out.0.insert((t.from, id));
        out.1.insert((t.to, id));
        if let Some(h) = t.hash {
            out.2.insert((h, id));
        }
        for tag in t.tags {
            out.3.insert((tag, id));
        }
    }
    out
}

fn assert_exact<H: tabula::Handle<Schema = Indexer>>(tx: &tabula::Reads<H>) {
    assert_eq!(stored(tx), recomputed(tx));
}

#[test]
fn every_write_path_keeps_indexes_exact() {
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let db = std::sync::Arc::new(db);
    let mut tx = db.write().unwrap();
    tx.put::<Transfers>(&1, &t(1, 2, Some(10), &[1, 2, 2]))
        .unwrap();
    tx.insert::<Transfers>(&2, &t(1, 3, None, &[])).unwrap();
    tx.append::<Transfers>(&5, &t(2, 3, Some(50), &[3]))
        .unwrap();
    assert_exact(&tx);
    // An update that changes some keys and keeps others.
    tx.put::<Transfers>(&1, &t(1, 4, Some(11), &[2, 5]))
        .unwrap();
    assert_exact(&tx);
    assert_eq!(tx.get_unique::<ByHash>(&10).unwrap(), None);
    assert_eq!(
        tx.get_unique::<ByHash>(&11).unwrap(),
        Some((1, t(1, 4, Some(11), &[2, 5])))
    );
    // The repeated tag counts once.
    assert_eq!(tx.index_count::<ByTag>(&2).unwrap(), 1);
    assert!(tx.delete::<Transfers>(&2).unwrap());
    assert!(!tx.delete::<Transfers>(&2).unwrap());
    assert_exact(&tx);
    for id in 10..20u64 {
        tx.put::<Transfers>(&id, &t(id as u32 % 3, 7, Some(id * 100), &[id as u8 % 2]))
            .unwrap();
    }
    assert_eq!(tx.delete_range::<Transfers>(12..15).unwrap(), 3);
    assert_exact(&tx);
    assert_eq!(
        tx.retain::<Transfers>(|id, _| id % 2 == 0).unwrap(),
        6 // 1, 5, 11, 15, 17, 19
    );
    assert_exact(&tx);
    assert_eq!(tx.pop_first::<Transfers>().unwrap().unwrap().0, 10);
    assert_eq!(tx.pop_last::<Transfers>().unwrap().unwrap().0, 18);
    assert_exact(&tx);
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    assert_exact(&tx);
    let owned = db.read_owned().unwrap();
    assert_exact(&owned);
    drop((tx, owned));

    let mut tx = db.write().unwrap();
    tx.clear::<Transfers>().unwrap();
    assert_eq!(stored(&tx), Entries::default());
    tx.commit().unwrap();
}

#[test]
fn an_aborted_nested_transaction_takes_its_index_entries_with_it() {
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Transfers>(&1, &t(1, 2, Some(10), &[1])).unwrap();
    let r: Result<(), Abort> = tx.nested(|tx| {
        tx.put::<Transfers>(&1, &t(3, 4, Some(30), &[9]))?;
        tx.put::<Transfers>(&2, &t(3, 4, Some(20), &[9]))?;
        Err(Abort::Stop)
    });
    assert!(matches!(r, Err(Abort::Stop)));
    assert_exact(&tx);
    assert_eq!(tx.index_count::<BySender>(&3).unwrap(), 0);
    assert_eq!(tx.get_unique::<ByHash>(&10).unwrap().unwrap().0, 1);
    tx.nested(|tx| tx.delete::<Transfers>(&1).map(drop))
        .unwrap();
    assert_exact(&tx);
    assert_eq!(tx.get_unique::<ByHash>(&10).unwrap(), None);
}

/// Why a nested transaction was given up.
#[derive(Debug)]
enum Abort {
    Db(#[allow(dead_code)] Error),
    Stop,
}

impl From<Error> for Abort {
    fn from(e: Error) -> Self {
        Abort::Db(e)
    }
}

/// Each path that can add a unique key: the violation names table, index and key, and the
/// write leaves the row and every index as they were.
#[test]
fn a_unique_violation_fails_and_writes_nothing_in_every_path() {
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Transfers>(&1, &t(1, 2, Some(10), &[1])).unwrap();
    tx.put::<Transfers>(&2, &t(1, 2, Some(20), &[1])).unwrap();
    let before = (stored(&tx), tx.iter::<Transfers>().count());
    let attempts: Vec<(&str, Result<(), Error>)> = vec![
        ("put new", tx.put::<Transfers>(&3, &t(5, 6, Some(10), &[7]))),
        (
            "put update",
            tx.put::<Transfers>(&2, &t(5, 6, Some(10), &[7])),
        ),
        (
            "insert",
            tx.insert::<Transfers>(&3, &t(5, 6, Some(10), &[7])),
        ),
        (
            "append",
            tx.append::<Transfers>(&9, &t(5, 6, Some(10), &[7])),
        ),
        (
            "nested",
            tx.nested(|tx| tx.put::<Transfers>(&4, &t(5, 6, Some(20), &[7]))),
        ),
    ];
    for (path, result) in attempts {
        match result {
            Err(Error::UniqueViolation {
                table, index, key, ..
            }) => {
                assert_eq!((table, index), ("transfers", "ByHash"), "{path}");
                let message = result_message(table, index, &key.to_string());
                assert!(message.contains("ByHash"), "{path}: {message}");
            }
            other => panic!("{path}: expected a unique violation, got {other:?}"),
        }
    }
    assert_eq!((stored(&tx), tx.iter::<Transfers>().count()), before);
    assert_eq!(
        tx.get::<Transfers>(&2).unwrap(),
        Some(t(1, 2, Some(20), &[1]))
    );
    // The message names table, index and key.
    let err = tx
        .put::<Transfers>(&3, &t(5, 6, Some(10), &[7]))
        .unwrap_err();
    let text = err.to_string();
    for part in ["transfers", "ByHash", "nothing was written"] {
        assert!(text.contains(part), "{text}");
    }
    // A row may keep its own key, and take one that was freed in the same transaction.
    tx.put::<Transfers>(&1, &t(9, 9, Some(10), &[])).unwrap();
    tx.delete::<Transfers>(&2).unwrap();
    tx.put::<Transfers>(&3, &t(5, 6, Some(20), &[7])).unwrap();
    assert_exact(&tx);
    // An insert of a present key is `KeyExists` before any index is looked at.
    assert!(matches!(
        tx.insert::<Transfers>(&3, &t(5, 6, Some(99), &[])),
        Err(Error::KeyExists { .. })
    ));
    assert!(matches!(
        tx.append::<Transfers>(&3, &t(5, 6, Some(98), &[])),
        Err(Error::AppendOutOfOrder { .. })
    ));
    assert_exact(&tx);
    assert_eq!(tx.get_unique::<ByHash>(&99).unwrap(), None);
    assert_eq!(tx.get_unique::<ByHash>(&98).unwrap(), None);
}

fn result_message(table: &str, index: &str, key: &str) -> String {
    format!("{table} {index} {key}")
}

#[test]
fn queries_by_index_key_in_both_directions() {
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let db = std::sync::Arc::new(db);
    let mut tx = db.write().unwrap();
    for (id, from, to) in [(1, 5, 1), (2, 6, 1), (3, 5, 2), (4, 7, 2), (5, 6, 3)] {
        tx.put::<Transfers>(&id, &t(from, to, Some(id * 7), &[]))
            .unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let ids = |it: &mut dyn Iterator<Item = tabula::Result<(u64, Transfer)>>| -> Vec<u64> {
        it.map(|r| r.unwrap().0).collect()
    };
    assert_eq!(ids(&mut tx.by_index::<BySender>(&5)), [1, 3]);
    assert_eq!(ids(&mut tx.by_index::<BySender>(&5).rev()), [3, 1]);
    assert_eq!(ids(&mut tx.by_index::<ByRecipient>(&2)), [3, 4]);
    assert_eq!(ids(&mut tx.by_index::<BySender>(&9)), Vec::<u64>::new());
    let range: Vec<(u32, u64)> = tx
        .index_range::<BySender>(6..)
        .map(|r| r.map(|(k, id, _)| (k, id)).unwrap())
        .collect();
    assert_eq!(range, [(6, 2), (6, 5), (7, 4)]);
    let back: Vec<(u32, u64)> = tx
        .index_range::<BySender>(..=6)
        .rev()
        .map(|r| r.map(|(k, id, _)| (k, id)).unwrap())
        .collect();
    assert_eq!(back, [(6, 5), (6, 2), (5, 3), (5, 1)]);
    assert_eq!(tx.index_count::<BySender>(&6).unwrap(), 2);
    assert_eq!(tx.index_count::<ByHash>(&21).unwrap(), 1);
    assert_eq!(tx.get_unique::<ByHash>(&21).unwrap().unwrap().0, 3);
    let owned = db.read_owned().unwrap();
    assert_eq!(ids(&mut owned.by_index::<BySender>(&6)), [2, 5]);
}

/// A schema without the indexes, for the startup tests: the same table.
#[derive(Schema)]
struct Plain(Transfers);

#[derive(Schema)]
struct WithSender(Transfers, BySender);

#[derive(Index)]
#[index(name = "BySender", on = Transfers, key = u32, by = sender, version = 2)]
struct BySender2;

#[derive(Schema)]
struct WithSender2(Transfers, BySender2);

#[test]
fn startup_builds_a_new_index_on_a_populated_table_and_drops_a_removed_one() {
    let dir = tempfile::tempdir().unwrap();
    // What `plan` says the open would build, before each open that the report then checks.
    fn planned<S: tabula::Schema>(dir: &std::path::Path, m: &tabula::Migrations) -> Vec<String> {
        let plan = tabula::plan::<S>(dir, m).unwrap();
        for index in &plan.indexes {
            assert!(
                plan.to_string().contains(&format!(
                    "build index {} of table {} ({})",
                    index.name, index.table, index.why
                )),
                "{plan}"
            );
        }
        plan.indexes
            .iter()
            .map(|i| format!("{}: {}", i.name, i.why))
            .collect()
    }
    let none = tabula::Migrations::new();
    {
        let db = tabula::open::<Plain>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for id in 0..25_000u64 {
            tx.put::<Transfers>(&id, &t((id % 100) as u32, 0, Some(id), &[]))
                .unwrap();
        }
        tx.commit().unwrap();
    }
    {
        assert_eq!(planned::<WithSender>(dir.path(), &none), ["BySender: new"]);
        let (db, report) =
            tabula::open_with_report::<WithSender>(dir.path(), Options::new()).unwrap();
        assert_eq!(report.indexes_built, ["BySender"]);
        let tx = db.read().unwrap();
        assert_eq!(tx.len::<BySender>().unwrap(), 25_000);
        assert_eq!(tx.index_count::<BySender>(&7).unwrap(), 250);
        for row in tx.by_index::<BySender>(&7) {
            assert_eq!(row.unwrap().1.from, 7);
        }
    }
    {
        // Opened again as declared: nothing to build.
        assert!(planned::<WithSender>(dir.path(), &none).is_empty());
        let plan = tabula::plan::<WithSender>(dir.path(), &none).unwrap();
        assert!(plan.to_string().contains("nothing to do"), "{plan}");
        let (_, report) =
            tabula::open_with_report::<WithSender>(dir.path(), Options::new()).unwrap();
        assert!(report.indexes_built.is_empty(), "{report:?}");
    }
    {
        // Redeclared (`version = 2`): rebuilt.
        assert_eq!(
            planned::<WithSender2>(dir.path(), &none),
            ["BySender: redeclared: its version, source or uniqueness changed"]
        );
        let (db, report) =
            tabula::open_with_report::<WithSender2>(dir.path(), Options::new()).unwrap();
        assert_eq!(report.indexes_built, ["BySender"]);
        assert_eq!(db.read().unwrap().len::<BySender2>().unwrap(), 25_000);
    }
    {
        // Dropped from the schema: its table goes.
        drop(tabula::open::<Plain>(dir.path(), Options::new()).unwrap());
        let names = tabula::untyped::UntypedDb::open(dir.path()).unwrap();
        let mut tx = names.read().unwrap();
        let tables = tx.table_names().unwrap();
        assert!(!tables.iter().any(|n| n == "BySender"), "{tables:?}");
        drop(tx);
        drop(names);
    }
    {
        // A migration step runs: every index is rebuilt (here also new again), and the plan says
        // so.
        let step = tabula::Migrations::new().step(2, "touch", |m| m.run("nothing", |_| Ok(())));
        assert_eq!(
            planned::<WithSender2>(dir.path(), &step),
            ["BySender: a migration step runs: every index is rebuilt from its table"]
        );
        let (_, report) =
            tabula::open_with::<WithSender2>(dir.path(), Options::new(), &step).unwrap();
        assert_eq!(report.indexes_built, ["BySender"]);
    }
}

#[test]
fn an_index_build_reports_its_progress_through_the_migrations() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Plain>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for id in 0..25_000u64 {
            tx.put::<Transfers>(&id, &t((id % 100) as u32, 0, None, &[]))
                .unwrap();
        }
        tx.commit().unwrap();
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let migrations = tabula::Migrations::new().on_progress(move |p| {
        let what = (p.version, p.step.to_string(), p.operation.to_string());
        sink.lock().unwrap().push((what, p.done, p.total));
    });
    let (db, report) =
        tabula::open_with::<WithSender>(dir.path(), Options::new(), &migrations).unwrap();
    assert_eq!(report.indexes_built, ["BySender"]);
    assert_eq!(db.read().unwrap().len::<BySender>().unwrap(), 25_000);
    let what = (
        migrations.version(),
        "build index".to_string(),
        "build index BySender of transfers".to_string(),
    );
    // One report per committed batch of 10,000 rows, the last at the whole table.
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (what.clone(), 10_000, 25_000),
            (what.clone(), 20_000, 25_000),
            (what, 25_000, 25_000),
        ]
    );
}

#[test]
fn a_resumed_index_build_counts_the_rows_done_before_the_interruption() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Plain>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for id in 0..45_000u64 {
            tx.put::<Transfers>(&id, &t((id % 100) as u32, 0, None, &[]))
                .unwrap();
        }
        tx.commit().unwrap();
    }
    // Interrupted after its second batch committed: the progress callback panics there (as a
    // kill would end the process), so the open fails with 20,000 rows' entries committed.
    let stop = tabula::Migrations::new().on_progress(|p| {
        assert!(
            p.done < 20_000,
            "the build interrupted on purpose at {} rows",
            p.done
        );
    });
    let interrupted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tabula::open_with::<WithSender>(dir.path(), Options::new(), &stop).map(|_| ())
    }));
    assert!(interrupted.is_err(), "the build went past its second batch");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let migrations = tabula::Migrations::new().on_progress(move |p| {
        sink.lock().unwrap().push((p.done, p.total));
    });
    let (db, report) =
        tabula::open_with::<WithSender>(dir.path(), Options::new(), &migrations).unwrap();
    assert_eq!(report.indexes_built, ["BySender"]);
    assert_eq!(db.read().unwrap().len::<BySender>().unwrap(), 45_000);
    assert!(db.check_indexes(5).unwrap().is_ok());
    // The resumed build counts the 20,000 rows done before: every report is above them, one
    // per batch of 10,000, the last at the whole table.
    assert_eq!(
        *seen.lock().unwrap(),
        [(30_000, 45_000), (40_000, 45_000), (45_000, 45_000)]
    );
}

#[test]
fn a_read_only_open_of_an_unbuilt_index_says_to_open_read_write_once() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<WithSender>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Transfers>(&1, &t(7, 8, None, &[])).unwrap();
        tx.commit().unwrap();
    }
    // Redeclared (`version = 2`): the index on file was built for the other declaration.
    let Err(err) = tabula::open::<WithSender2>(dir.path(), Options::new().read_only(true)) else {
        panic!("a read-only open cannot rebuild the index");
    };
    assert!(
        matches!(&err, Error::IndexNotBuilt { index, table, .. }
            if index == "BySender" && table == "transfers"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("open the database read-write once"),
        "{message}"
    );
    // The advice works: a read-write open rebuilds it, and read-only opens then succeed.
    drop(tabula::open::<WithSender2>(dir.path(), Options::new()).unwrap());
    let db = tabula::open::<WithSender2>(dir.path(), Options::new().read_only(true)).unwrap();
    assert_eq!(db.read().unwrap().index_count::<BySender2>(&7).unwrap(), 1);
}

#[derive(Schema)]
struct WithHash(Transfers, ByHash);

#[test]
fn a_new_unique_index_on_rows_that_break_it_fails_the_open_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Plain>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Transfers>(&1, &t(1, 1, Some(5), &[])).unwrap();
        tx.put::<Transfers>(&2, &t(1, 1, Some(6), &[])).unwrap();
        tx.put::<Transfers>(&3, &t(1, 1, Some(5), &[])).unwrap();
        tx.commit().unwrap();
    }
    let err = tabula::open::<WithHash>(dir.path(), Options::new()).unwrap_err();
    match &err {
        Error::UniqueViolation {
            table,
            index,
            key,
            rows,
        } => {
            assert_eq!((*table, *index), ("transfers", "ByHash"));
            // Typed: the index key and both rows' keys are `u64`s.
            assert_eq!(key.to_string(), "5");
            assert_eq!(rows[0].to_string(), "1");
            assert_eq!(rows[1].to_string(), "3");
        }
        other => panic!("expected a unique violation, got {other:?}"),
    }
    // Nothing changed: the plain schema opens with the same rows and no index table.
    let db = tabula::open::<Plain>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().len::<Transfers>().unwrap(), 3);
    drop(db);
    let names = tabula::untyped::UntypedDb::open(dir.path()).unwrap();
    let mut tx = names.read().unwrap();
    assert!(!tx.table_names().unwrap().iter().any(|n| n == "ByHash"));
}

#[test]
fn an_index_is_a_table_of_the_schema_with_its_record() {
    let infos = Indexer::TABLES;
    assert_eq!(infos.len(), 6);
    let by_hash = infos.iter().find(|i| i.name == "ByHash").unwrap();
    let index = by_hash.index.unwrap();
    assert_eq!((index.source, index.unique), ("transfers", true));
    assert!(!by_hash.flags.dupsort);
    let by_sender = infos.iter().find(|i| i.name == "BySender").unwrap();
    assert!(by_sender.flags.dupsort);
    assert!(!by_sender.index.unwrap().unique);
    const { assert!(<ByHash as Index>::UNIQUE) };
    assert!(infos[0].index.is_none());
}

/// `Db::check_indexes` finds each way an index can disagree with its table (written here into
/// the file behind Tabula's back, through the startup transaction's raw writes).
#[test]
fn check_indexes_reports_entries_that_disagree_with_their_rows() {
    use tabula_core::startup::Bootstrap;
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Indexer>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Transfers>(&1, &t(5, 6, Some(10), &[1])).unwrap();
        tx.put::<Transfers>(&2, &t(5, 7, None, &[])).unwrap();
        tx.commit().unwrap();
        let check = db.check_indexes(10).unwrap();
        assert!(check.is_ok(), "{:?}", check.problems);
        // Rows: 2 per index; entries: 2 + 2 + 1 + 1.
        assert_eq!((check.rows, check.entries), (8, 6));
    }
    {
        let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 5).unwrap();
        let by_sender = boot.find_table("BySender").unwrap().unwrap().handle;
        let by_hash = boot.find_table("ByHash").unwrap().unwrap().handle;
        // An entry naming a row that does not exist.
        boot.put_raw(
            "BySender",
            by_sender,
            &9u32.to_be_bytes(),
            &77u64.to_be_bytes(),
            false,
        )
        .unwrap();
        // An entry naming a row that does not compute it.
        boot.put_raw(
            "BySender",
            by_sender,
            &8u32.to_be_bytes(),
            &1u64.to_be_bytes(),
            false,
        )
        .unwrap();
        // A row's entry removed.
        assert!(
            boot.delete_raw("ByHash", by_hash, &10u64.to_be_bytes())
                .unwrap()
        );
        boot.checkpoint().unwrap();
    }
    let db = tabula::open::<Indexer>(dir.path(), Options::new()).unwrap();
    let check = db.check_indexes(2).unwrap();
    assert_eq!(check.problem_count, 3, "{:?}", check.problems);
    assert_eq!(check.problems.len(), 2); // the limit
    let all = db.check_indexes(10).unwrap().problems;
    let seen: Vec<(&str, &str)> = all.iter().map(|p| (p.index, p.what)).collect();
    assert_eq!(
        seen,
        [
            ("BySender", "entry not from its row"),
            ("BySender", "row missing"),
            ("ByHash", "entry missing"),
        ]
    );
    assert!(
        all[1]
            .to_string()
            .contains("index `BySender` of table `transfers`")
    );
    // A query through the broken entry says so.
    let tx = db.read().unwrap();
    let err = tx.by_index::<BySender>(&9).next().unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            Error::IndexOutOfStep {
                index: "BySender",
                ..
            }
        ),
        "{err}"
    );
}

/// `Db::bulk_load` loads an indexed table with its indexes, batch by batch; a unique violation
/// fails the load, its batch rolled back and the batches before it kept, indexes exact.
#[test]
fn bulk_load_keeps_indexes_exact() {
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let db = std::sync::Arc::new(db);
    let rows: Vec<(u64, Transfer)> = (1..=1000u64)
        .map(|id| {
            (
                id,
                t(
                    (id % 7) as u32,
                    (id % 5) as u32,
                    Some(id),
                    &[(id % 3) as u8],
                ),
            )
        })
        .collect();
    let report = db
        .bulk_loader::<Transfers>()
        .batch_entries(300)
        .load(&rows)
        .unwrap();
    assert_eq!((report.entries, report.batches), (1000, 4));
    assert_exact(&db.read().unwrap());
    assert_eq!(db.read().unwrap().index_count::<BySender>(&3).unwrap(), 143);
    // Entry 1250 takes row 5's hash: the batch 1201..=1300 is rolled back.
    let more = (1001..=1400u64).map(|id| {
        let hash = if id == 1250 { 5 } else { id };
        (id, t(1, 2, Some(hash), &[]))
    });
    let err = db
        .bulk_loader::<Transfers>()
        .batch_entries(100)
        .load(more)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::UniqueViolation {
                index: "ByHash",
                ..
            }
        ),
        "{err}"
    );
    let tx = db.read().unwrap();
    assert_eq!(tx.len::<Transfers>().unwrap(), 1200);
    assert_exact(&tx);
    assert!(db.check_indexes(10).unwrap().is_ok());
}

/// A unique index built in batches whose collision is found after batches committed: the open
/// fails naming both rows, and the index table and the build's progress are gone.
#[test]
fn a_unique_collision_found_after_committed_batches_leaves_no_index() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Plain>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for id in 1..=25_000u64 {
            let hash = if id == 24_000 { 7 } else { id };
            tx.put::<Transfers>(&id, &t(1, 1, Some(hash), &[])).unwrap();
        }
        tx.commit().unwrap();
    }
    let err = tabula::open::<WithHash>(dir.path(), Options::new()).unwrap_err();
    match &err {
        Error::UniqueViolation { index, rows, .. } => {
            assert_eq!(*index, "ByHash");
            assert_eq!(rows[0].to_string(), "7");
            assert_eq!(rows[1].to_string(), "24000");
        }
        other => panic!("expected a unique violation, got {other:?}"),
    }
    {
        let names = tabula::untyped::UntypedDb::open(dir.path()).unwrap();
        let mut tx = names.read().unwrap();
        assert!(!tx.table_names().unwrap().iter().any(|n| n == "ByHash"));
    }
    {
        let mut boot =
            tabula_core::startup::Bootstrap::begin(dir.path(), &Options::new(), 0).unwrap();
        assert_eq!(boot.meta_get("index-build").unwrap(), None);
    }
    let db = tabula::open::<Plain>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().len::<Transfers>().unwrap(), 25_000);
}

/// The write cursors and the appender keep indexes exact, deleting while walking included, and
/// refuse a unique key another row holds without writing anything.
#[test]
fn write_cursors_and_the_appender_keep_indexes_exact() {
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let mut tx = db.write().unwrap();
    {
        let mut c = tx.cursor_mut::<Transfers>().unwrap();
        c.upsert(&1, &t(1, 2, Some(10), &[1])).unwrap();
        c.insert(&2, &t(1, 3, Some(20), &[2])).unwrap();
        c.append(&3, &t(2, 3, Some(30), &[])).unwrap();
        c.upsert(&1, &t(4, 2, Some(11), &[1, 3])).unwrap(); // keys move
        for (path, r) in [
            ("upsert", c.upsert(&4, &t(5, 5, Some(20), &[]))),
            ("insert", c.insert(&4, &t(5, 5, Some(20), &[]))),
            ("append", c.append(&4, &t(5, 5, Some(20), &[]))),
            ("upsert over", c.upsert(&1, &t(5, 5, Some(30), &[]))),
        ] {
            assert!(
                matches!(
                    r,
                    Err(Error::UniqueViolation {
                        index: "ByHash",
                        ..
                    })
                ),
                "{path}: {r:?}"
            );
        }
    }
    assert_exact(&tx);
    assert_eq!(tx.len::<Transfers>().unwrap(), 3);
    assert_eq!(tx.get_unique::<ByHash>(&11).unwrap().unwrap().0, 1);
    {
        let mut appender = tx.appender::<Transfers>().unwrap();
        for id in 4..=9u64 {
            appender
                .append(&id, &t(id as u32 % 2, 9, Some(id * 10), &[id as u8]))
                .unwrap();
        }
        let r = appender.append(&10, &t(0, 0, Some(11), &[]));
        assert!(matches!(r, Err(Error::UniqueViolation { .. })), "{r:?}");
    }
    assert_exact(&tx);
    // Deleting while walking: every other row.
    {
        let (mut rows, mut notes) = tx.cursors_mut::<(Transfers, Plainly)>().unwrap();
        let mut entry = rows.first().unwrap();
        while let Some((id, _)) = entry {
            if id % 2 == 0 {
                rows.delete_current().unwrap();
                notes.upsert(&id, &"deleted".to_string()).unwrap();
            }
            entry = rows.next().unwrap();
        }
    }
    assert_exact(&tx);
    let left: Vec<u64> = tx.iter::<Transfers>().keys().map(Result::unwrap).collect();
    assert_eq!(left, [1, 3, 5, 7, 9]);
    assert_eq!(tx.len::<Plainly>().unwrap(), 4);
    tx.commit().unwrap();
    assert!(db.check_indexes(10).unwrap().is_ok());
}

/// A key watcher on an indexed table sees the writes that go through the index write path
/// (put, delete, retain_bytes), as on a table without indexes.
#[test]
fn key_watchers_see_writes_to_indexed_tables() {
    use tabula::{Change, Received};
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let watcher = db.watch::<Transfers>(.., 100);
    let mut tx = db.write().unwrap();
    tx.put::<Transfers>(&1, &t(1, 2, Some(10), &[])).unwrap();
    tx.put::<Transfers>(&2, &t(3, 4, None, &[5])).unwrap();
    tx.put::<Transfers>(&3, &t(3, 5, None, &[])).unwrap();
    assert!(tx.delete::<Transfers>(&1).unwrap());
    assert_eq!(
        tx.retain_bytes::<Transfers>(.., |k, _| k != 2u64.to_be_bytes())
            .unwrap(),
        1
    );
    tx.commit().unwrap();
    let mut seen = Vec::new();
    while let Some(event) = watcher.try_recv() {
        match event.unwrap() {
            Received::Event(Change::Put { key, .. }) => seen.push(('p', key)),
            Received::Event(Change::Delete { key, .. }) => seen.push(('d', key)),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, [('p', 1), ('p', 2), ('p', 3), ('d', 1), ('d', 2)]);
    assert_exact(&db.read().unwrap());
}

/// The changes a key watcher of an index table has queued: 'p'ut or 'd'elete, index key,
/// source key (the dupsort value; `None` for a unique index or a delete of every value).
fn index_events<T: Table<Value = u64, Key: std::fmt::Debug>>(
    watcher: &tabula::KeyReceiver<T>,
) -> Vec<(char, T::Key, Option<u64>)> {
    use tabula::{Change, Received};
    let mut seen = Vec::new();
    while let Some(event) = watcher.try_recv() {
        match event.unwrap() {
            Received::Event(Change::Put { key, value, .. }) => seen.push(('p', key, value)),
            Received::Event(Change::Delete { key, value, .. }) => seen.push(('d', key, value)),
            other => panic!("unexpected {other:?}"),
        }
    }
    seen
}

#[test]
fn watchers_of_an_index_see_the_entries_its_source_table_writes() {
    let (_dir, db) = tempdb::open_with::<Indexer>(Options::new());
    // Sender 7's transfers, through the index; and every hash, through the unique one.
    let by_sender = db.watch::<BySender>(7..=7, 16);
    let by_hash = db.watch::<ByHash>(.., 16);
    let mut tx = db.write().unwrap();
    tx.put::<Transfers>(&1, &t(7, 8, Some(100), &[])).unwrap();
    tx.put::<Transfers>(&2, &t(9, 7, None, &[])).unwrap();
    tx.commit().unwrap();
    // Row 1 moves from sender 7 to sender 5; row 2 is deleted (not sender 7's).
    let mut tx = db.write().unwrap();
    tx.put::<Transfers>(&1, &t(5, 8, Some(100), &[])).unwrap();
    tx.delete::<Transfers>(&2).unwrap();
    tx.commit().unwrap();
    assert_eq!(
        index_events(&by_sender),
        [('p', 7, Some(1)), ('d', 7, Some(1))]
    );
    // Row 1's hash did not change with its sender: the unique index was written once.
    assert_eq!(index_events(&by_hash), [('p', 100, None)]);
    // Clearing the source table clears its indexes: every watcher of them is told.
    let mut tx = db.write().unwrap();
    tx.clear::<Transfers>().unwrap();
    tx.commit().unwrap();
    assert!(matches!(
        by_sender.try_recv(),
        Some(Ok(tabula::Received::Event(tabula::Change::Cleared { .. })))
    ));
}

// ---- errors show keys typed ---------------------------------------------------------------------

/// A transfer's place, with `Debug`: errors show it as written.
#[derive(tabula::Key, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TxId {
    block: u64,
    position: u32,
}

/// A key type without `Debug`: errors show its stored bytes.
#[derive(tabula::Key, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Opaque(u16);

#[derive(Table)]
#[table(name = "by_place", key = TxId, value = Transfer, indexed)]
struct ByPlace;

#[derive(Index)]
#[index(name = "by_place_hash", on = ByPlace, key = (String, u64), unique, by = named_hash)]
struct ByPlaceHash;

fn named_hash(_: &TxId, t: &Transfer) -> Option<(String, u64)> {
    t.hash.map(|h| (format!("h{}", t.from), h))
}

#[derive(Table)]
#[table(name = "opaque", key = Opaque, value = u8)]
struct OpaqueKeys;

#[derive(Schema)]
struct Places(ByPlace, ByPlaceHash, OpaqueKeys);

#[test]
fn errors_show_keys_typed_where_the_key_type_has_debug() {
    let (_dir, db) = tempdb::open_with::<Places>(Options::new());
    let mut tx = db.write().unwrap();
    let first = TxId {
        block: 0,
        position: 5,
    };
    let second = TxId {
        block: 7,
        position: 1,
    };
    tx.put::<ByPlace>(&first, &t(3, 4, Some(9), &[])).unwrap();
    let err = tx
        .put::<ByPlace>(&second, &t(3, 5, Some(9), &[]))
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, Error::UniqueViolation { .. }), "{message}");
    assert!(
        message.contains(
            "key (\"h3\", 9) already belongs to the row TxId { block: 0, position: 5 }, so the \
             row TxId { block: 7, position: 1 } cannot have it"
        ),
        "{message}"
    );
    let Error::UniqueViolation { key, rows, .. } = err else {
        unreachable!()
    };
    assert_eq!(key.typed(), Some("(\"h3\", 9)"));
    assert_eq!(rows[0].typed(), Some("TxId { block: 0, position: 5 }"));

    let exists = tx
        .insert::<ByPlace>(&first, &t(1, 1, None, &[]))
        .unwrap_err();
    assert!(
        exists
            .to_string()
            .contains("key TxId { block: 0, position: 5 } already exists"),
        "{exists}"
    );
    let late = tx
        .append::<ByPlace>(
            &TxId {
                block: 0,
                position: 1,
            },
            &t(1, 1, None, &[]),
        )
        .unwrap_err();
    assert!(
        late.to_string()
            .contains("last key TxId { block: 0, position: 5 }"),
        "{late}"
    );

    // Without `Debug`, the stored bytes.
    tx.insert::<OpaqueKeys>(&Opaque(0x0102), &1).unwrap();
    let opaque = tx.insert::<OpaqueKeys>(&Opaque(0x0102), &2).unwrap_err();
    assert!(
        opaque.to_string().contains("key 0x0102 already exists"),
        "{opaque}"
    );
    let Error::KeyExists { key, .. } = opaque else {
        unreachable!()
    };
    assert_eq!(key.typed(), None);
    assert_eq!(key.stored(), (&[1u8, 2][..], 2));
}
