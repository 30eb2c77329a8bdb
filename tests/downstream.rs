//! A downstream crate builds its own schema from tables declared in another crate plus its own,
//! and two schemas share one table type (with different IDs).

use tabula::{Contains, Options, Schema, Table};
use tabula_test_upstream::{Canonical, Core, Header, Headers};

#[derive(Table)]
#[table(name = "receipts", key = u64, value = String)]
struct Receipts;

/// Downstream: its own table first, then two upstream tables.
#[derive(Schema)]
struct Indexer(Receipts, Headers, Canonical);

#[test]
fn downstream_schema_mixes_crates_and_ids_are_per_schema() {
    assert_eq!(<Core as Contains<Headers>>::ID, 0);
    assert_eq!(<Indexer as Contains<Headers>>::ID, 1);
    assert_eq!(<Indexer as Contains<Receipts>>::ID, 0);
    let names: Vec<_> = Indexer::TABLES.iter().map(|t| t.name).collect();
    assert_eq!(names, ["receipts", "Headers", "canonical"]);
}

#[test]
fn both_schemas_open_the_same_file_and_see_shared_tables() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Core>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Headers>(&1, &Header { parent: 0 }).unwrap();
        tx.put::<Canonical>(&1, &[1, 2, 3, 4]).unwrap();
        tx.commit().unwrap();
    }
    // The downstream schema adds its table and verifies the upstream ones.
    let (db, report) = tabula::open_with_report::<Indexer>(dir.path(), Options::new()).unwrap();
    assert_eq!(report.created, ["receipts"]);
    assert_eq!(report.verified, ["Headers", "canonical"]);
    let mut tx = db.write().unwrap();
    assert_eq!(tx.get::<Headers>(&1).unwrap(), Some(Header { parent: 0 }));
    tx.put::<Receipts>(&1, &"ok".to_string()).unwrap();
    tx.commit().unwrap();
    drop(db);
    // The upstream schema still opens: the record kept the downstream table's entry too.
    let db = tabula::open::<Core>(dir.path(), Options::new()).unwrap();
    assert_eq!(
        db.read().unwrap().get::<Canonical>(&1).unwrap(),
        Some([1, 2, 3, 4])
    );
    drop(db);
    let record = tabula::untyped::UntypedDb::open(dir.path())
        .unwrap()
        .record()
        .cloned()
        .unwrap();
    let names: Vec<_> = record.tables.keys().cloned().collect();
    assert_eq!(names, ["Headers", "canonical", "receipts"]);
}
