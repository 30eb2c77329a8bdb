//! Per-table sequences: monotonic across transactions and reopens, rolled back with an aborted
//! transaction or nested transaction, separate per table, and `insert_next` keeps indexes exact.

#[path = "support/tempdb.rs"]
mod tempdb;

use serde::{Deserialize, Serialize};
use tabula::{Error, Index, Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
struct Notes;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    reference: u32,
}

#[derive(Table)]
#[table(key = u64, value = Order, indexed)]
struct Orders;

#[derive(Index)]
#[index(on = Orders, key = u32, unique, by = reference)]
struct ByReference;

fn reference(_: &u64, o: &Order) -> u32 {
    o.reference
}

#[derive(Schema)]
struct App(Notes, Orders, ByReference);

#[derive(Debug)]
struct Stop;

impl From<Error> for Stop {
    fn from(_: Error) -> Self {
        Stop
    }
}

#[test]
fn sequences_advance_once_per_value_and_roll_back_with_their_transaction() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        assert_eq!(tx.next_sequence::<Notes>().unwrap(), 0);
        assert_eq!(tx.next_sequence::<Notes>().unwrap(), 1);
        // Each table has its own.
        assert_eq!(tx.next_sequence::<Orders>().unwrap(), 0);
        // A nested transaction that aborts gives its values back.
        let r: Result<(), Stop> = tx.nested(|tx| {
            assert_eq!(tx.next_sequence::<Notes>()?, 2);
            Err(Stop)
        });
        assert!(r.is_err());
        assert_eq!(tx.sequence::<Notes>().unwrap(), 2);
        tx.commit().unwrap();
        // A transaction that aborts gives them back too.
        let mut tx = db.write().unwrap();
        assert_eq!(tx.next_sequence::<Notes>().unwrap(), 2);
        drop(tx);
        assert_eq!(db.read().unwrap().sequence::<Notes>().unwrap(), 2);
    }
    // Kept in the file.
    let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().sequence::<Notes>().unwrap(), 2);
    assert_eq!(db.read().unwrap().sequence::<Orders>().unwrap(), 1);
}

#[test]
fn insert_next_writes_under_the_next_key_and_keeps_indexes_exact() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    assert_eq!(
        tx.insert_next::<Orders>(&Order { reference: 7 }).unwrap(),
        0
    );
    assert_eq!(
        tx.insert_next::<Orders>(&Order { reference: 8 }).unwrap(),
        1
    );
    assert_eq!(
        tx.get_unique::<ByReference>(&8).unwrap(),
        Some((1, Order { reference: 8 }))
    );
    // A unique violation writes nothing; the sequence value it took is used up.
    let taken = tx.insert_next::<Orders>(&Order { reference: 7 });
    assert!(
        matches!(taken, Err(Error::UniqueViolation { .. })),
        "{taken:?}"
    );
    assert_eq!(tx.len::<Orders>().unwrap(), 2);
    // A key written otherwise is not overwritten.
    tx.put::<Orders>(&3, &Order { reference: 9 }).unwrap();
    let clash = tx.insert_next::<Orders>(&Order { reference: 10 });
    assert!(matches!(clash, Err(Error::KeyExists { .. })), "{clash:?}");
    assert_eq!(
        tx.insert_next::<Orders>(&Order { reference: 10 }).unwrap(),
        4
    );
    tx.commit().unwrap();
    assert!(db.check_indexes(10).unwrap().is_ok());
}

/// Takes values of `Notes`' sequence with `insert_next` up to `n` (exclusive) and commits.
fn take_notes_up_to(db: &tabula::Db<App>, n: u64) {
    let mut tx = db.write().unwrap();
    while tx.sequence::<Notes>().unwrap() < n {
        tx.insert_next::<Notes>(&"note".to_string()).unwrap();
    }
    tx.commit().unwrap();
}

#[test]
fn no_write_that_empties_a_table_resets_its_sequence() {
    let (dir, db) = tempdb::open_with::<App>(Options::new());
    type Empty = fn(&mut tabula::RwTx<'_, App>);
    let forms: [(&str, Empty); 6] = [
        ("clear", |tx| tx.clear::<Notes>().unwrap()),
        ("delete_range(..)", |tx| {
            tx.delete_range::<Notes>(..).unwrap();
        }),
        ("retain", |tx| {
            tx.retain::<Notes>(|_, _| false).unwrap();
        }),
        ("retain_bytes", |tx| {
            tx.retain_bytes::<Notes>(.., |_, _| false).unwrap();
        }),
        ("pop_first", |tx| {
            while tx.pop_first::<Notes>().unwrap().is_some() {}
        }),
        ("pop_last", |tx| {
            while tx.pop_last::<Notes>().unwrap().is_some() {}
        }),
    ];
    let mut handed_out = 0;
    for (name, empty) in forms {
        // Values up to `handed_out + 5` are taken, so the table is not empty.
        take_notes_up_to(&db, handed_out + 5);
        handed_out += 5;
        let mut tx = db.write().unwrap();
        empty(&mut tx);
        assert!(tx.is_empty::<Notes>().unwrap(), "{name}");
        assert_eq!(
            tx.sequence::<Notes>().unwrap(),
            handed_out,
            "{name} moved the sequence in its transaction"
        );
        tx.commit().unwrap();
        assert_eq!(
            db.read().unwrap().sequence::<Notes>().unwrap(),
            handed_out,
            "{name} moved the committed sequence"
        );
        let mut tx = db.write().unwrap();
        let next = tx.insert_next::<Notes>(&"after".to_string()).unwrap();
        assert_eq!(
            next, handed_out,
            "after {name}, a value handed out before came again"
        );
        tx.commit().unwrap();
        handed_out += 1;
    }
    // The same for an indexed table, whose `clear` empties its index tables too.
    let mut tx = db.write().unwrap();
    for reference in 0..3 {
        tx.insert_next::<Orders>(&Order { reference }).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    tx.clear::<Orders>().unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    assert_eq!(
        tx.insert_next::<Orders>(&Order { reference: 0 }).unwrap(),
        3
    );
    tx.commit().unwrap();
    assert!(db.check_indexes(10).unwrap().is_ok());
    drop(db);
    let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().sequence::<Notes>().unwrap(), handed_out);
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    text: String,
    pinned: bool,
}

#[derive(Table)]
#[table(name = "entries", key = u64, value = String)]
struct EntriesV1;

#[derive(Table)]
#[table(name = "entries", key = u64, value = Entry)]
struct Entries;

#[derive(Schema)]
struct V1(EntriesV1);

#[derive(Schema)]
struct V2(Entries);

#[test]
fn a_migration_that_rewrites_a_table_keeps_its_sequence() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<V1>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for text in ["a", "b", "c", "d"] {
            tx.insert_next::<EntriesV1>(&text.to_string()).unwrap();
        }
        tx.delete::<EntriesV1>(&0).unwrap();
        tx.commit().unwrap();
    }
    // Through the scratch table that replaces `entries`.
    let migrations = tabula::Migrations::new().step(2, "entries-v2", |m| {
        m.transform::<Entries, String>(|text| Entry {
            text,
            pinned: false,
        })
    });
    let (db, report) = tabula::open_with::<V2>(dir.path(), Options::new(), &migrations).unwrap();
    assert_eq!(report.applied, [(2, "entries-v2")]);
    assert_eq!(db.read().unwrap().len::<Entries>().unwrap(), 3);
    assert_eq!(db.read().unwrap().sequence::<Entries>().unwrap(), 4);
    let mut tx = db.write().unwrap();
    let next = tx
        .insert_next::<Entries>(&Entry {
            text: "e".to_string(),
            pinned: true,
        })
        .unwrap();
    assert_eq!(
        next, 4,
        "a value handed out before the migration came again"
    );
    tx.commit().unwrap();
}
