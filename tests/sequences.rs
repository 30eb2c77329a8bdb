//! Per-table sequences: monotonic across transactions and reopens, rolled back with an aborted
//! transaction or nested transaction, separate per table, and `insert_next` keeps indexes exact.

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
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
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
