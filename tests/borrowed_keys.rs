//! Every call that takes a key, a key range or a prefix takes the borrowed forms `get` takes
//! (`&str` for `String`, `&[u8]` for `Vec<u8>`, tuples of such), with one table type argument;
//! each answers as it does with owned keys. `tests/ui/prefix-not-a-prefix.rs` shows what a
//! prefix of the wrong type says.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::ops::Bound;

use tabula::{Change, Db, Index, Options, Raw, Received, Schema, Table};

/// Transfers keyed by (sender, nonce).
#[derive(Table)]
#[table(key = (String, u64), value = u64, indexed)]
struct Transfers;

/// By (receiver, amount) — a composite index key with a `String` first part.
#[derive(Index)]
#[index(on = Transfers, key = (String, u64), by = to_and_amount)]
struct ByReceiver;

fn to_and_amount(key: &(String, u64), amount: &u64) -> (String, u64) {
    // The receiver is the sender's name reversed: deterministic, distinct from the sender.
    (key.0.chars().rev().collect(), *amount)
}

/// Byte keys.
#[derive(Table)]
#[table(key = (Vec<u8>, u32), value = Vec<u8>, codec = Raw)]
struct Blobs;

/// Tags per name, dupsort.
#[derive(Table)]
#[table(key = String, value = String, dupsort)]
struct Tags;

#[derive(Schema)]
struct App(Transfers, ByReceiver, Blobs, Tags);

const NAMES: [&str; 4] = ["alice", "bob", "carol", "dave"];

fn filled() -> (tempfile::TempDir, Db<App>) {
    let (dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    for (i, name) in NAMES.iter().enumerate() {
        for nonce in 0..5u64 {
            tx.put::<Transfers>(&(*name, nonce), &(i as u64 * 10 + nonce))
                .unwrap();
            tx.put_bytes::<Blobs>(
                &AsBytes::key(name.as_bytes(), nonce as u32),
                name.as_bytes(),
            )
            .unwrap();
        }
        for tag in ["x", "y"] {
            tx.put::<Tags>(*name, &format!("{name}-{tag}")).unwrap();
        }
    }
    tx.commit().unwrap();
    (dir, db)
}

/// The stored form of a `Blobs` key, through the typed encoding.
struct AsBytes;

impl AsBytes {
    fn key(name: &[u8], n: u32) -> Vec<u8> {
        tabula::AsKey::<(Vec<u8>, u32)>::encode(&(name, n))
            .as_ref()
            .to_vec()
    }
}

type Row = ((String, u64), u64);

fn rows(it: tabula::Iter<'_, Transfers>) -> Vec<Row> {
    it.collect::<tabula::Result<_>>().unwrap()
}

#[test]
fn reads_take_borrowed_keys_ranges_and_prefixes() {
    let (_dir, db) = filled();
    let db = std::sync::Arc::new(db);
    let tx = db.read().unwrap();
    let name = String::from("bob");
    let bob: &str = &name;

    // Keys.
    assert_eq!(tx.get::<Transfers>(&(bob, 2)).unwrap(), Some(12));
    assert!(tx.get_bytes::<Transfers>(&(bob, 2)).unwrap().is_some());
    assert!(tx.contains_key::<Transfers>(&(bob, 4)).unwrap());
    assert_eq!(tx.dups::<Tags>(bob).count(), 2);
    assert_eq!(tx.dup_count::<Tags>(bob).unwrap(), 2);
    let mut cursor = tx.cursor::<Transfers>().unwrap();
    assert!(cursor.seek_exact(&(bob, 3)).unwrap().is_some());

    // Ranges: borrowed bounds and owned bounds walk the same entries.
    let owned = rows(tx.range::<Transfers>(("bob".to_string(), 1)..("carol".to_string(), 2)));
    assert_eq!(owned.len(), 4 + 2);
    assert_eq!(rows(tx.range::<Transfers>((bob, 1)..("carol", 2))), owned);
    assert_eq!(
        rows(tx.range::<Transfers>((Bound::Included((bob, 1)), Bound::Excluded(("carol", 2))))),
        owned
    );
    assert_eq!(rows(tx.range::<Transfers>((bob, 1)..=(bob, 2))).len(), 2);
    assert_eq!(rows(tx.range::<Transfers>(..(bob, 0))).len(), 5);
    assert_eq!(rows(tx.range::<Transfers>(..=(bob, 0))).len(), 6);
    assert_eq!(rows(tx.range::<Transfers>(("dave", 3)..)).len(), 2);
    assert_eq!(rows(tx.range::<Transfers>(..)).len(), 20);
    let from: &[u8] = b"bob";
    let to: &[u8] = b"carol";
    assert_eq!(tx.range::<Blobs>((from, 0)..(to, 0)).count(), 5);

    // Prefixes: the first part bare (borrowed or owned) or as a tuple.
    let all_bob = rows(tx.prefix::<Transfers>(&"bob".to_string()));
    assert_eq!(all_bob.len(), 5);
    assert!(all_bob.iter().all(|((n, _), _)| n == "bob"));
    assert_eq!(rows(tx.prefix::<Transfers>(bob)), all_bob);
    assert_eq!(rows(tx.prefix::<Transfers>(&bob)), all_bob);
    assert_eq!(rows(tx.prefix::<Transfers>(&(bob,))), all_bob);
    assert_eq!(tx.prefix::<Blobs>(from).count(), 5);
    assert_eq!(tx.prefix::<Blobs>(&from.to_vec()).count(), 5);
    assert_eq!(
        tx.prefix::<Transfers>("bo").count(),
        0,
        "a whole first part"
    );

    // Owned transactions.
    let owned_tx = || db.read_owned().unwrap();
    assert_eq!(
        owned_tx()
            .into_range::<Transfers>((bob, 1)..("carol", 2))
            .count(),
        6
    );
    assert_eq!(owned_tx().into_prefix::<Transfers>(bob).count(), 5);

    // Indexes: the receiver of bob's transfers is "bob" reversed.
    let receiver = "bob".chars().rev().collect::<String>();
    let by_receiver: &str = &receiver;
    assert_eq!(tx.by_index::<ByReceiver>(&(by_receiver, 12)).count(), 1);
    assert_eq!(tx.index_prefix::<ByReceiver>(by_receiver).count(), 5);
    assert_eq!(
        tx.index_range::<ByReceiver>((by_receiver, 11)..(by_receiver, 13))
            .count(),
        2
    );
    assert_eq!(tx.index_range::<ByReceiver>(..).count(), 20);
}

#[test]
fn writes_take_borrowed_keys_and_ranges() {
    let (_dir, db) = filled();
    let bob = String::from("bob");
    let mut tx = db.write().unwrap();
    assert!(tx.delete::<Transfers>(&(bob.as_str(), 0)).unwrap());
    assert_eq!(
        tx.delete_range::<Transfers>((bob.as_str(), 1)..=(bob.as_str(), 2))
            .unwrap(),
        2
    );
    let kept = tx
        .retain_bytes::<Transfers>(("carol", 0)..("dave", 0), |_, _| false)
        .unwrap();
    assert_eq!(kept, 5);
    let from: &[u8] = b"alice";
    assert_eq!(tx.delete_range::<Blobs>((from, 1)..(from, 3)).unwrap(), 2);
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.prefix::<Transfers>("bob").count(), 2);
    assert_eq!(tx.prefix::<Transfers>("carol").count(), 0);
    assert_eq!(tx.prefix::<Blobs>(from).count(), 3);
    drop(tx);
    assert!(db.check_indexes(10).unwrap().is_ok());
}

#[test]
fn watches_take_borrowed_ranges_and_prefixes() {
    let (_dir, db) = filled();
    let in_range = db.watch::<Transfers>(("bob", 0)..("bob", 10), 16);
    let prefixed = db.watch_prefix::<Transfers>("carol", 16);
    let by_tuple = db.watch_prefix::<Transfers>(&("carol",), 16);
    let mut tx = db.write().unwrap();
    tx.put::<Transfers>(&("bob", 7), &1).unwrap();
    tx.put::<Transfers>(&("bob", 10), &1).unwrap(); // outside the range
    tx.put::<Transfers>(&("carol", 9), &1).unwrap();
    tx.put::<Transfers>(&("caroline", 9), &1).unwrap(); // another first part
    tx.commit().unwrap();
    let key_of = |r: Option<tabula::Result<Received<Change<Transfers>>>>| match r {
        Some(Ok(Received::Event(Change::Put { key, .. }))) => key,
        other => panic!("{other:?}"),
    };
    assert_eq!(key_of(in_range.recv()), ("bob".to_string(), 7));
    assert!(in_range.try_recv().is_none());
    assert_eq!(key_of(prefixed.recv()), ("carol".to_string(), 9));
    assert!(prefixed.try_recv().is_none());
    assert_eq!(key_of(by_tuple.recv()), ("carol".to_string(), 9));
    assert!(by_tuple.try_recv().is_none());
}
