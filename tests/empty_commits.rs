//! A write that changes nothing writes nothing: an empty write transaction's commit, and the
//! startup step on a file whose schema is unchanged, leave the data file as it was (libmdbx
//! 0.14.4 would otherwise commit each as a new durable meta page, a write and a flush), and the
//! tables opened by such a startup work in every later transaction, on every thread.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::path::Path;

use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
struct Names;

#[derive(Table)]
#[table(key = String, value = u64)]
struct Ids;

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Later;

#[derive(Schema)]
struct App(Names, Ids);

#[derive(Schema)]
struct Grown(Names, Ids, Later);

fn data_file(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("mdbx.dat")).expect("read the data file")
}

fn fill(db: &tabula::Db<App>) {
    let mut tx = db.write().unwrap();
    for i in 0..100u64 {
        tx.put::<Names>(&i, &format!("name {i}")).unwrap();
        tx.put::<Ids>(&format!("name {i}"), &i).unwrap();
    }
    tx.commit().unwrap();
}

#[test]
fn an_empty_write_commit_leaves_the_file_as_it_was() {
    let (dir, db) = tempdb::open_with::<App>(Options::new());
    fill(&db);
    let txn = db.info().unwrap().last_txn;
    let before = data_file(dir.path());
    for _ in 0..3 {
        db.write().unwrap().commit().unwrap();
        // A write transaction that only reads commits nothing either.
        let tx = db.write().unwrap();
        assert_eq!(tx.get::<Names>(&7).unwrap().as_deref(), Some("name 7"));
        tx.commit().unwrap();
    }
    assert_eq!(
        db.info().unwrap().last_txn,
        txn,
        "no transaction was committed"
    );
    assert!(data_file(dir.path()) == before, "the data file changed");
    // A write still commits.
    let mut tx = db.write().unwrap();
    tx.put::<Names>(&1_000, &"new".to_string()).unwrap();
    tx.commit().unwrap();
    assert_eq!(db.info().unwrap().last_txn, txn + 1);
    assert_eq!(
        db.read().unwrap().get::<Names>(&1_000).unwrap().as_deref(),
        Some("new")
    );
}

#[test]
fn reopening_an_unchanged_schema_leaves_the_file_as_it_was_and_every_table_works() {
    let dir = tempfile::tempdir().unwrap();
    let txn = {
        let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
        fill(&db);
        db.info().unwrap().last_txn
    };
    let before = data_file(dir.path());
    for _ in 0..3 {
        let (db, report) = tabula::open_with_report::<App>(dir.path(), Options::new()).unwrap();
        assert!(!report.record_written && report.created.is_empty());
        assert_eq!(
            db.info().unwrap().last_txn,
            txn,
            "the startup committed a transaction"
        );
        drop(db);
    }
    assert!(data_file(dir.path()) == before, "the data file changed");

    // The handles that startup opened (and did not commit) serve every table, in reads and
    // writes, on this thread and on others.
    let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            let tx = db.read().unwrap();
            assert_eq!(tx.get::<Ids>(&"name 42".to_string()).unwrap(), Some(42));
            assert_eq!(tx.get::<Names>(&42).unwrap().as_deref(), Some("name 42"));
        });
        s.spawn(|| {
            let mut tx = db.write().unwrap();
            tx.put::<Ids>(&"other".to_string(), &7).unwrap();
            tx.put::<Names>(&7_000, &"other".to_string()).unwrap();
            tx.commit().unwrap();
        });
    });
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Ids>(&"other".to_string()).unwrap(), Some(7));
    assert_eq!(tx.get::<Names>(&7_000).unwrap().as_deref(), Some("other"));
    assert_eq!(tx.len::<Names>().unwrap(), 101);
}

#[test]
fn a_startup_that_adds_a_table_still_commits_it() {
    let dir = tempfile::tempdir().unwrap();
    let txn = {
        let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
        fill(&db);
        db.info().unwrap().last_txn
    };
    {
        let (db, report) = tabula::open_with_report::<Grown>(dir.path(), Options::new()).unwrap();
        assert_eq!(report.created, ["Later"]);
        assert_eq!(db.info().unwrap().last_txn, txn + 1);
        let mut tx = db.write().unwrap();
        tx.put::<Later>(&1, &2).unwrap();
        tx.commit().unwrap();
    }
    let db = tabula::open::<Grown>(dir.path(), Options::new().read_only(true)).unwrap();
    assert_eq!(db.read().unwrap().get::<Later>(&1).unwrap(), Some(2));
    assert_eq!(db.read().unwrap().len::<Names>().unwrap(), 100);
}

/// A hook that changes the record of a file whose record holds exactly the schema's tables
/// (the startup recognises that record by its bytes and keeps only its other fields to
/// compare with): each change is written, and an unchanged record is not.
#[test]
fn a_record_changed_by_the_hook_is_written_when_the_stored_one_was_the_schema() {
    use tabula_core::record::{SchemaRecord, TableRecord};
    use tabula_core::startup::{self, Bootstrap, Upgrade};

    /// Changes the record as `change` says (on a stored record only).
    struct Changes(fn(&mut SchemaRecord));
    impl Upgrade for Changes {
        fn version(&self) -> u32 {
            1
        }
        fn upgrade(
            &self,
            _: &mut Bootstrap,
            record: &mut SchemaRecord,
            stored: bool,
        ) -> tabula::Result<Vec<(u32, &'static str)>> {
            if stored {
                (self.0)(record);
            }
            Ok(Vec::new())
        }
    }
    let record = |dir: &Path| {
        let mut boot = Bootstrap::begin(dir, &Options::new().read_only(true), 0).unwrap();
        boot.read_record().unwrap().expect("a record")
    };
    let dir = tempfile::tempdir().unwrap();
    drop(tabula::open::<App>(dir.path(), Options::new()).unwrap());
    let first = record(dir.path());

    let (db, report) = startup::open::<App>(dir.path(), &Options::new(), &Changes(|_| {})).unwrap();
    drop(db);
    assert!(!report.record_written, "nothing changed");
    assert_eq!(record(dir.path()), first);

    // Another table recorded beside the schema's.
    let (db, report) = startup::open::<App>(
        dir.path(),
        &Options::new(),
        &Changes(|r| {
            let names = r.tables.values().next().unwrap().clone();
            r.tables.insert(
                "kept".to_string(),
                TableRecord {
                    key: "u8".into(),
                    ..names
                },
            );
        }),
    )
    .unwrap();
    drop(db);
    assert!(report.record_written, "a table added to the record");
    let second = record(dir.path());
    assert_eq!(second.tables["kept"].key, "u8");
    assert_eq!(second.tables.len(), first.tables.len() + 1);

    // A record that is not the schema's is compared whole: unchanged, not written.
    let (db, report) = tabula::open_with_report::<App>(dir.path(), Options::new()).unwrap();
    drop(db);
    assert!(!report.record_written);
    assert_eq!(record(dir.path()), second);

    // Back to the schema's tables (written), then the fields beside the tables.
    let (db, report) = startup::open::<App>(
        dir.path(),
        &Options::new(),
        &Changes(|r| drop(r.tables.remove("kept"))),
    )
    .unwrap();
    drop(db);
    assert!(report.record_written);
    assert_eq!(record(dir.path()), first);
    for change in [
        (|r: &mut SchemaRecord| r.version = 1) as fn(&mut SchemaRecord),
        |r| r.version = 2,
        |r| r.applied.clear(),
        |r| {
            r.applied.push(tabula_core::record::AppliedStep {
                version: 1,
                name: "noted".to_string(),
                checksum: "c".to_string(),
            })
        },
    ] {
        let before = record(dir.path());
        let mut expected = before.clone();
        change(&mut expected);
        let (db, report) =
            startup::open::<App>(dir.path(), &Options::new(), &Changes(change)).unwrap();
        drop(db);
        assert_eq!(report.record_written, expected != before, "{expected:?}");
        assert_eq!(record(dir.path()), expected);
    }
}
