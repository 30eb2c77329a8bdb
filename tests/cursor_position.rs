//! A cursor acts on "the current entry" only when it is on one. The regressions of issue 21
//! item 1: after a move that found nothing, `delete_current` used to delete a neighbour.

#[path = "support/tempdb.rs"]
mod tempdb;

use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(name = "named", key = u64, subkey = String, value = u64, dupsort)]
struct Named;

#[derive(Schema)]
struct App(Named);

fn fill(db: &tabula::Db<App>) {
    let mut tx = db.write().unwrap();
    tx.put::<Named>(&1, &("a".to_string(), 10)).unwrap();
    tx.put::<Named>(&1, &("b".to_string(), 11)).unwrap();
    tx.put::<Named>(&3, &("c".to_string(), 12)).unwrap();
    tx.commit().unwrap();
}

fn all(db: &tabula::Db<App>) -> Vec<(u64, String)> {
    let tx = db.read().unwrap();
    tx.iter::<Named>()
        .map(|e| {
            let (k, (s, _)) = e.unwrap();
            (k, s)
        })
        .collect()
}

fn kept() -> Vec<(u64, String)> {
    vec![(1, "a".into()), (1, "b".into()), (3, "c".into())]
}

#[test]
fn delete_after_next_ran_off_the_end_deletes_nothing() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    fill(&db);
    for dups in [false, true] {
        let mut tx = db.write().unwrap();
        let mut c = tx.cursor_mut::<Named>().unwrap();
        c.last().unwrap();
        assert_eq!(c.next().unwrap(), None);
        let res = if dups {
            c.delete_current_dups()
        } else {
            c.delete_current()
        };
        assert!(
            res.is_err(),
            "delete after running off the end returned Ok (dups: {dups})"
        );
        drop(c);
        tx.commit().unwrap();
        assert_eq!(all(&db), kept(), "dups: {dups}");
    }
}

#[test]
fn delete_after_prev_ran_off_the_start_deletes_nothing() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    fill(&db);
    for dups in [false, true] {
        let mut tx = db.write().unwrap();
        let mut c = tx.cursor_mut::<Named>().unwrap();
        c.first().unwrap();
        assert_eq!(c.prev().unwrap(), None);
        let res = if dups {
            c.delete_current_dups()
        } else {
            c.delete_current()
        };
        assert!(
            res.is_err(),
            "delete after running off the start returned Ok (dups: {dups})"
        );
        drop(c);
        tx.commit().unwrap();
        assert_eq!(all(&db), kept(), "dups: {dups}");
    }
}

#[test]
fn delete_after_get_dup_missed_deletes_nothing() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    fill(&db);
    let mut tx = db.write().unwrap();
    let mut c = tx.cursor_mut::<Named>().unwrap();
    assert_eq!(c.get_dup(&1, "aa").unwrap(), None);
    assert!(
        c.delete_current().is_err(),
        "delete after a get_dup miss returned Ok"
    );
    drop(c);
    tx.commit().unwrap();
    assert_eq!(all(&db), kept());
}

#[test]
fn dup_count_off_any_key_is_an_error() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    fill(&db);
    let tx = db.read().unwrap();
    let mut c = tx.cursor::<Named>().unwrap();
    assert!(c.dup_count().is_err(), "dup_count on a fresh cursor");
    c.last().unwrap();
    assert_eq!(c.next().unwrap(), None);
    assert!(
        c.dup_count().is_err(),
        "dup_count after running off the end"
    );
}
