//! Owned read transactions (`Db::read_owned`, `OwnedTx`, `OwnedIter`): `'static` and `Send`,
//! reading one snapshot for their whole life, returning to the same pool as `Db::read`, and
//! iterating lazily in batches that find their place again by key. Every iteration is checked
//! against a borrowed `Tx`'s over the same snapshot, on tables with and without `dupsort` and
//! `integer_key`, across batch boundaries.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::sync::Arc;

use tabula::{Db, Options, OwnedIter, Schema, Table};

#[derive(Table)]
#[table(name = "names", key = u64, value = String)]
struct Names;

#[derive(Table)]
#[table(name = "tags", key = u32, value = u64, dupsort)]
struct Tags;

#[derive(Table)]
#[table(name = "heights", key = u64, value = u64, integer_key)]
struct Heights;

#[derive(Table)]
#[table(name = "balances", key = (String, u64), value = u64)]
struct Balances;

#[derive(Schema)]
struct App(Names, Tags, Heights, Balances);

/// 300 names, 5 tags with 1 to 150 values each, 300 heights with keys
/// around the byte boundaries an integer comparison must not confuse, balances of 3 owners.
fn fill(db: &Db<App>) {
    let mut tx = db.write().unwrap();
    for n in 0..300u64 {
        tx.put::<Names>(&(n * 3), &format!("name {n}")).unwrap();
        tx.put::<Heights>(&(n * 255 + (n << 32)), &n).unwrap();
    }
    for (tag, count) in [(1u32, 1u32), (2, 150), (3, 64), (4, 65), (9, 2)] {
        for v in 0..count {
            tx.put::<Tags>(&tag, &u64::from(v)).unwrap();
        }
    }
    for owner in ["alice", "bob", "carol"] {
        for block in 0..70u64 {
            tx.put::<Balances>(&(owner, block), &(block * 10)).unwrap();
        }
    }
    tx.commit().unwrap();
}

fn collect<S, T>(it: OwnedIter<S, T>) -> Vec<(T::Key, T::Value)>
where
    S: Schema + tabula::Contains<T>,
    T: Table,
{
    it.collect::<tabula::Result<_>>().unwrap()
}

fn assert_send<T: Send>(_: &T) {}
fn assert_static<T: 'static>(_: &T) {}

#[test]
fn owned_transactions_and_their_iterators_are_static_and_send() {
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let tx = db.read_owned().unwrap();
    assert_send(&tx);
    assert_static(&tx);
    let it = tx.into_range::<Names>(..);
    assert_send(&it);
    assert_static(&it);
    // A struct without lifetimes holds one, and a thread takes it.
    struct Job {
        names: OwnedIter<App, Names>,
    }
    let job = Job { names: it };
    let n = std::thread::spawn(move || job.names.count())
        .join()
        .unwrap();
    assert_eq!(n, 300);
}

#[test]
fn an_owned_transaction_reads_one_snapshot_for_its_whole_life() {
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let old = db.read_owned().unwrap();
    let id = old.id();
    let mut tx = db.write().unwrap();
    tx.put::<Names>(&0, &"changed".to_string()).unwrap();
    tx.delete::<Names>(&3).unwrap();
    tx.put::<Names>(&1, &"new".to_string()).unwrap();
    tx.commit().unwrap();
    assert_eq!(old.id(), id);
    assert_eq!(old.get::<Names>(&0).unwrap().as_deref(), Some("name 0"));
    assert_eq!(old.get::<Names>(&3).unwrap().as_deref(), Some("name 1"));
    assert_eq!(old.get::<Names>(&1).unwrap(), None);
    assert_eq!(old.len::<Names>().unwrap(), 300);
    // Moved to another thread, it still reads the same snapshot.
    let old = std::thread::spawn(move || {
        assert_eq!(old.get::<Names>(&0).unwrap().as_deref(), Some("name 0"));
        old
    })
    .join()
    .unwrap();
    let fresh = db.read_owned().unwrap();
    assert_eq!(fresh.id(), id + 1);
    assert_eq!(fresh.get::<Names>(&0).unwrap().as_deref(), Some("changed"));
    assert_eq!(fresh.len::<Names>().unwrap(), 300);
    drop(old);
}

/// Every range of every shape, both directions, through an owning iterator (`into_range`,
/// `into_prefix`, on owned transactions of the same snapshot) and through the borrowed reads
/// an owned transaction shares with `Tx`, matches what a borrowed `Tx` yields; batches end at 64 entries, inside the 150 values of a
/// dupsort key and exactly at its end (64 values), so resuming by (key, value) is exercised.
#[test]
fn owned_iteration_matches_the_borrowed_iterators_across_batches() {
    use std::ops::Bound::{self, *};
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let owned = db.read_owned().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(owned.id(), tx.id());

    let name_keys = [0u64, 2, 3, 150, 447, 897, 898, 5000];
    let bounds = |k: u64| [Unbounded, Included(k), Excluded(k)];
    for &lo in &name_keys {
        for &hi in &name_keys {
            for (l, h) in bounds(lo)
                .into_iter()
                .flat_map(|l| bounds(hi).map(move |h| (l, h)))
            {
                let range = (l, h);
                let want: Vec<_> = tx
                    .range::<Names>(range)
                    .collect::<tabula::Result<_>>()
                    .unwrap();
                assert_eq!(
                    collect(db.read_owned().unwrap().into_range::<Names>(range)),
                    want,
                    "{range:?}"
                );
                let mut back = want.clone();
                back.reverse();
                assert_eq!(
                    collect(
                        db.read_owned()
                            .unwrap()
                            .into_range::<Names>(range)
                            .reversed()
                    ),
                    back,
                    "{range:?} reversed"
                );
            }
        }
    }

    for range in [
        (Unbounded, Unbounded),
        (Included(2u32), Included(2)),
        (Included(2), Excluded(4)),
        (Excluded(1), Included(4)),
        (Included(3), Unbounded),
        (Excluded(4), Unbounded),
        (Unbounded, Excluded(2)),
        (Included(5), Included(8)),
    ] {
        let want: Vec<_> = tx
            .range::<Tags>(range)
            .collect::<tabula::Result<_>>()
            .unwrap();
        assert_eq!(
            collect(db.read_owned().unwrap().into_range::<Tags>(range)),
            want,
            "tags {range:?}"
        );
        let mut back = want.clone();
        back.reverse();
        assert_eq!(
            collect(
                db.read_owned()
                    .unwrap()
                    .into_range::<Tags>(range)
                    .reversed()
            ),
            back,
            "tags {range:?} reversed"
        );
    }

    let heights: [Bound<u64>; 4] = [
        Unbounded,
        Included(255 + (1 << 32)),
        Excluded(100 * 255 + (100 << 32)),
        Included(u64::MAX),
    ];
    for l in heights {
        for h in heights {
            let want: Vec<_> = tx
                .range::<Heights>((l, h))
                .collect::<tabula::Result<_>>()
                .unwrap();
            assert_eq!(
                collect(db.read_owned().unwrap().into_range::<Heights>((l, h))),
                want,
                "{l:?}..{h:?}"
            );
        }
    }

    for owner in ["alice", "bob", "carol", "dave", "al"] {
        let owner = owner.to_string();
        let want: Vec<_> = tx
            .prefix::<Balances>(&owner)
            .collect::<tabula::Result<_>>()
            .unwrap();
        assert_eq!(
            collect(db.read_owned().unwrap().into_prefix::<Balances>(&owner)),
            want,
            "{owner}"
        );
    }

    // The consuming forms yield the same.
    let all: Vec<_> = tx.iter::<Tags>().collect::<tabula::Result<_>>().unwrap();
    assert_eq!(all.len(), 282);
    assert_eq!(
        collect(db.read_owned().unwrap().into_range::<Tags>(..)),
        all
    );
    let bob: Vec<_> = tx
        .prefix::<Balances>(&"bob".to_string())
        .collect::<tabula::Result<_>>()
        .unwrap();
    assert_eq!(
        collect(
            db.read_owned()
                .unwrap()
                .into_prefix::<Balances>(&"bob".to_string())
        ),
        bob
    );
}

#[test]
fn gets_match_the_borrowed_transaction() {
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let owned = db.read_owned().unwrap();
    let tx = db.read().unwrap();
    for k in 0..20u64 {
        assert_eq!(
            owned.get::<Names>(&k).unwrap(),
            tx.get::<Names>(&k).unwrap()
        );
        assert_eq!(
            owned.get_bytes::<Names>(&k).unwrap(),
            tx.get_bytes::<Names>(&k).unwrap()
        );
        assert_eq!(
            owned.contains_key::<Names>(&k).unwrap(),
            tx.contains_key::<Names>(&k).unwrap()
        );
    }
    assert_eq!(owned.get::<Tags>(&2).unwrap(), Some(0));
    assert_eq!(owned.stat::<Tags>().unwrap(), tx.stat::<Tags>().unwrap());
    assert_eq!(owned.len::<Balances>().unwrap(), 210);
    assert!(!owned.is_empty::<Heights>().unwrap());
}

#[test]
fn lazy_gets_borrow_what_the_borrowed_transaction_reads() {
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let owned = db.read_owned().unwrap();
    let tx = db.read().unwrap();
    // Several borrowed values of one owned transaction alive at once, with other calls between.
    let lazies: Vec<_> = (0..20u64)
        .map(|k| owned.get_lazy::<Names>(&k).unwrap())
        .collect();
    assert_eq!(owned.get::<Names>(&3).unwrap().as_deref(), Some("name 1"));
    for (k, lazy) in (0..20u64).zip(&lazies) {
        assert_eq!(
            lazy.map(|l| l.bytes()),
            tx.get_bytes::<Names>(&k).unwrap(),
            "key {k}"
        );
        assert_eq!(
            lazy.map(|l| l.decode().unwrap()),
            tx.get::<Names>(&k).unwrap(),
            "key {k}"
        );
    }
    assert_eq!(
        owned
            .get_lazy::<Tags>(&2)
            .unwrap()
            .unwrap()
            .decode()
            .unwrap(),
        0
    );
    assert!(owned.get_lazy::<Heights>(&1).unwrap().is_none());
}

#[test]
fn lazy_iteration_matches_the_borrowed_iterators() {
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let tx = db.read().unwrap();

    fn lazy_of<S, T>(it: &OwnedIter<S, T>) -> Vec<(T::Key, Vec<u8>, T::Value)>
    where
        S: Schema + tabula::Contains<T>,
        T: Table,
    {
        it.lazy()
            .map(|e| {
                let (k, v) = e.unwrap();
                (k, v.bytes().to_vec(), v.decode().unwrap())
            })
            .collect()
    }
    fn lazy_tx<T: Table>(it: tabula::Iter<'_, T>, rev: bool) -> Vec<(T::Key, Vec<u8>, T::Value)> {
        let it = it.lazy().map(|e| {
            let (k, v) = e.unwrap();
            (k, v.bytes().to_vec(), v.decode().unwrap())
        });
        if rev {
            it.rev().collect()
        } else {
            it.collect()
        }
    }

    assert_eq!(
        lazy_of(&db.read_owned().unwrap().into_range::<Names>(..)),
        lazy_tx(tx.iter::<Names>(), false)
    );
    assert_eq!(
        lazy_of(
            &db.read_owned()
                .unwrap()
                .into_range::<Names>(30..=600)
                .reversed()
        ),
        lazy_tx(tx.range::<Names>(30..=600), true)
    );
    assert_eq!(
        lazy_of(&db.read_owned().unwrap().into_range::<Tags>(2..4)),
        lazy_tx(tx.range::<Tags>(2..4), false)
    );
    assert_eq!(
        lazy_of(&db.read_owned().unwrap().into_range::<Heights>(1000..)),
        lazy_tx(tx.range::<Heights>(1000..), false)
    );
    assert_eq!(
        lazy_of(
            &db.read_owned()
                .unwrap()
                .into_prefix::<Balances>(&"bob".to_string())
        ),
        lazy_tx(tx.prefix::<Balances>(&"bob".to_string()), false)
    );
    // It starts over whatever the owned iterator has yielded, and leaves it where it was.
    let mut partly = db.read_owned().unwrap().into_range::<Names>(..);
    let first = partly.next().unwrap().unwrap();
    assert_eq!(lazy_of(&partly).len(), 300);
    assert_eq!(partly.next().unwrap().unwrap().0, first.0 + 3);
    // An owning iterator lends for as long as it is borrowed.
    let owning = db.read_owned().unwrap().into_range::<Names>(..9);
    let keys: Vec<u64> = owning.lazy().map(|e| e.unwrap().0).collect();
    assert_eq!(keys, [0, 3, 6]);
}

/// Owned transactions come from and go back to the pool `Db::read` uses: a thousand of them,
/// begun and dropped on several threads, never need more reader slots than are open at once.
#[test]
fn owned_transactions_reuse_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(tabula::open::<App>(dir.path(), Options::new().max_readers(16)).unwrap());
    fill(&db);
    std::thread::scope(|s| {
        for _ in 0..4 {
            let db = &db;
            s.spawn(move || {
                for i in 0..1000u64 {
                    let tx = db.read_owned().unwrap();
                    assert!(tx.get::<Names>(&((i % 300) * 3)).unwrap().is_some());
                }
            });
        }
    });
    // Four threads, one transaction each at a time: 16 slots were never exhausted, and the
    // reader table holds at most the pool's parked transactions plus a few.
    let info = db.info().unwrap();
    assert!(info.readers <= 8, "{} reader slots used", info.readers);
    let parked = db.read_owned().unwrap();
    assert!(parked.get::<Names>(&0).unwrap().is_some());
}

#[test]
fn the_iterator_hands_back_its_transaction() {
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let mut it = db.read_owned().unwrap().into_range::<Names>(..);
    let first = it.next().unwrap().unwrap();
    assert_eq!(first, (0, "name 0".to_string()));
    assert_eq!(it.tx().get::<Names>(&3).unwrap().as_deref(), Some("name 1"));
    assert_eq!(it.count(), 299);
}

/// Every read of a `Tx` is a read of an owned transaction too (one surface, `Reads`): each
/// returns what the borrowed transaction returns on the same snapshot.
#[test]
fn every_read_of_a_transaction_works_on_an_owned_one() {
    let (_dir, db) = tempdb::open::<App>();
    let db = Arc::new(db);
    fill(&db);
    let owned = db.read_owned().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(owned.id(), tx.id());
    let all = |it: tabula::Iter<'_, Names>| it.collect::<tabula::Result<Vec<_>>>().unwrap();
    let dups = |it: tabula::Iter<'_, Tags>| it.collect::<tabula::Result<Vec<_>>>().unwrap();

    assert_eq!(
        owned.get::<Names>(&3).unwrap(),
        tx.get::<Names>(&3).unwrap()
    );
    assert!(owned.get::<Names>(&3).unwrap().is_some());
    assert_eq!(
        owned.get_bytes::<Names>(&3).unwrap(),
        tx.get_bytes::<Names>(&3).unwrap()
    );
    assert_eq!(
        owned
            .get_lazy::<Names>(&3)
            .unwrap()
            .unwrap()
            .decode()
            .unwrap(),
        tx.get::<Names>(&3).unwrap().unwrap()
    );
    assert!(owned.contains_key::<Names>(&3).unwrap());
    assert!(!owned.contains_key::<Names>(&4).unwrap());
    assert_eq!(owned.len::<Names>().unwrap(), tx.len::<Names>().unwrap());
    assert!(!owned.is_empty::<Names>().unwrap());
    assert_eq!(owned.stat::<Tags>().unwrap(), tx.stat::<Tags>().unwrap());
    assert_eq!(all(owned.iter::<Names>()), all(tx.iter::<Names>()));
    assert_eq!(
        all(owned.range::<Names>(10..40)),
        all(tx.range::<Names>(10..40))
    );
    assert_eq!(
        owned
            .range::<Names>(10..40)
            .rev()
            .collect::<tabula::Result<Vec<_>>>()
            .unwrap(),
        tx.range::<Names>(10..40)
            .rev()
            .collect::<tabula::Result<Vec<_>>>()
            .unwrap()
    );
    let bob = "bob".to_string();
    assert_eq!(
        owned.prefix::<Balances>(&bob).count(),
        tx.prefix::<Balances>(&bob).count()
    );
    for tag in 0..6u32 {
        assert_eq!(
            dups(owned.dups::<Tags>(&tag)),
            dups(tx.dups::<Tags>(&tag)),
            "tag {tag}"
        );
        assert_eq!(
            dups(owned.dups_from::<Tags>(&tag, &7)),
            dups(tx.dups_from::<Tags>(&tag, &7)),
            "tag {tag} from 7"
        );
        assert_eq!(
            owned.dup_count::<Tags>(&tag).unwrap(),
            tx.dup_count::<Tags>(&tag).unwrap()
        );
        assert_eq!(
            owned.get_dup::<Tags>(&tag, &7).unwrap(),
            tx.get_dup::<Tags>(&tag, &7).unwrap()
        );
        assert_eq!(
            owned.seek_dup::<Tags>(&tag, &7).unwrap(),
            tx.seek_dup::<Tags>(&tag, &7).unwrap()
        );
    }
    let mut a = owned.cursor::<Tags>().unwrap();
    let mut b = tx.cursor::<Tags>().unwrap();
    assert_eq!(a.last().unwrap(), b.last().unwrap());
    assert_eq!(a.prev_no_dup().unwrap(), b.prev_no_dup().unwrap());
    assert_eq!(a.dup_count().unwrap(), b.dup_count().unwrap());
}
