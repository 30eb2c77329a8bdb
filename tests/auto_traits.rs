//! The auto traits users rely on: a `Db` is shared between threads and survives a caught panic;
//! a read transaction moves between threads; none of these need `AssertUnwindSafe` around a
//! `catch_unwind`.

use std::panic::{RefUnwindSafe, UnwindSafe, catch_unwind};

use tabula::{Appender, Db, Options, RoTx, RwTx, Schema, SlowReaderAction, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Counts;

#[derive(Schema)]
struct Store(Counts);

fn unwind_safe<T: UnwindSafe + RefUnwindSafe>() {}
fn shared_between_threads<T: Send + Sync>() {}
fn moves_between_threads<T: Send>() {}

#[test]
fn the_public_types_keep_their_auto_traits() {
    unwind_safe::<Db<Store>>();
    unwind_safe::<Options>();
    unwind_safe::<RoTx<'static, Store>>();
    unwind_safe::<RwTx<'static, Store>>();
    fn ref_unwind_safe<T: RefUnwindSafe>() {}
    ref_unwind_safe::<Appender<'static, Counts>>();
    shared_between_threads::<Db<Store>>();
    shared_between_threads::<Options>();
    moves_between_threads::<RoTx<'static, Store>>();
}

#[test]
fn a_db_with_a_slow_reader_callback_is_usable_after_a_caught_panic() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options::new().on_slow_reader(|_| SlowReaderAction::Grow);
    let db = tabula::open::<Store>(dir.path(), options).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Counts>(&1, &10).unwrap();
    tx.commit().unwrap();

    // No AssertUnwindSafe: `&Db` and `Tx` are unwind safe.
    let caught = catch_unwind(|| {
        let tx = db.read().unwrap();
        assert_eq!(tx.get::<Counts>(&1).unwrap(), Some(10));
        panic!("a request handler fails while reading");
    });
    assert!(caught.is_err());

    let mut tx = db.write().unwrap();
    tx.put::<Counts>(&2, &20).unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Counts>(&1).unwrap(), Some(10));
    assert_eq!(tx.get::<Counts>(&2).unwrap(), Some(20));
}
