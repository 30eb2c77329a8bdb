//! Typed tables end to end, against real libmdbx environments in temp dirs.
//!
//! Tests cap `max_size` at 1 GiB: under valgrind (`scripts/valgrind.sh`) the default 1 TiB
//! of address space cannot be reserved.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tabula::{Error, Key, Options, Part, Raw, Schema, Table};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    parent: [u8; 4],
    gas: u64,
    note: String,
}

fn header(n: u64) -> Header {
    Header {
        parent: (n as u32).to_be_bytes(),
        gas: n * 1000,
        note: format!("block {n}"),
    }
}

#[derive(Table)]
#[table(key = u64, value = Header)]
struct Headers;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct AccountSlot {
    account: String,
    slot: u32,
}

#[derive(Table)]
#[table(name = "balances", key = AccountSlot, value = i64)]
struct Balances;

#[derive(Table)]
#[table(name = "logs", key = (String, u64), value = String, dupsort)]
struct Logs;

#[derive(Table)]
#[table(name = "blobs", key = u32, value = Vec<u8>, codec = Raw, integer_key)]
struct Blobs;

#[derive(Table)]
#[table(name = "names", key = String, value = u64)]
struct Names;

#[derive(Schema)]
struct Chain(Headers, Balances, Logs, Blobs, Names);

#[test]
fn put_get_insert_delete() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    tx.put::<Headers>(&1, &header(1)).unwrap();
    tx.put::<Headers>(&2, &header(2)).unwrap();
    tx.put::<Headers>(&2, &header(22)).unwrap(); // overwrite
    assert_eq!(tx.get::<Headers>(&2).unwrap(), Some(header(22)));
    let err = tx.insert::<Headers>(&1, &header(9)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::KeyExists {
                table: "Headers",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("key 1 already exists"), "{err}");
    tx.insert::<Headers>(&3, &header(3)).unwrap();
    assert!(tx.delete::<Headers>(&3).unwrap());
    assert!(!tx.delete::<Headers>(&3).unwrap());
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Headers>(&1).unwrap(), Some(header(1)));
    assert_eq!(tx.get::<Headers>(&2).unwrap(), Some(header(22)));
    assert_eq!(tx.get::<Headers>(&3).unwrap(), None);
    assert_eq!(tx.len::<Headers>().unwrap(), 2);
    assert!(tx.contains_key::<Headers>(&1).unwrap());
}

#[test]
fn aborted_writes_are_not_visible() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    tx.put::<Names>("alice", &1).unwrap();
    tx.abort();
    let mut tx = db.write().unwrap();
    tx.put::<Names>("bob", &2).unwrap();
    drop(tx); // dropping aborts too
    let tx = db.read().unwrap();
    assert_eq!(tx.len::<Names>().unwrap(), 0);
}

#[test]
fn borrowed_string_keys_and_bytes() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    tx.put::<Names>("alice", &7).unwrap();
    tx.put::<Names>(&String::from("bob"), &8).unwrap();
    tx.put::<Blobs>(&5, &vec![1, 2, 3]).unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Names>("alice").unwrap(), Some(7));
    assert_eq!(tx.get::<Names>(&"bob".to_string()).unwrap(), Some(8));
    let bytes: &[u8] = tx.get_bytes::<Blobs>(&5).unwrap().unwrap();
    assert_eq!(bytes, &[1, 2, 3]);
}

#[test]
fn composite_keys_sort_and_prefix_scan() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    for (account, slot, v) in [
        ("b", 2, 20),
        ("a", 1, 10),
        ("ab", 0, 5),
        ("a", 0, 1),
        ("b", 1, 7),
    ] {
        let key = AccountSlot {
            account: account.into(),
            slot,
        };
        tx.put::<Balances>(&key, &v).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let all: Vec<(String, u32)> = tx
        .iter::<Balances>()
        .map(|r| r.map(|(k, _)| (k.account, k.slot)))
        .collect::<Result<_, _>>()
        .unwrap();
    let mut expected = all.clone();
    expected.sort();
    assert_eq!(all, expected);
    assert_eq!(all.len(), 5);
    // "a" must not match "ab": the string part is self-delimiting.
    let a: Vec<i64> = tx
        .prefix::<Balances>(&"a".to_string())
        .map(|r| r.unwrap().1)
        .collect();
    assert_eq!(a, vec![1, 10]);
    let b_rev: Vec<u32> = tx
        .prefix::<Balances>(&"b".to_string())
        .rev()
        .map(|r| r.unwrap().0.slot)
        .collect();
    assert_eq!(b_rev, vec![2, 1]);
}

#[test]
fn ranges_in_both_directions() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    for n in 0..100u64 {
        tx.append::<Headers>(&n, &header(n)).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let keys =
        |it: tabula::Iter<'_, Headers>| -> Vec<u64> { it.keys().map(Result::unwrap).collect() };
    assert_eq!(keys(tx.range::<Headers>(10..15)), vec![10, 11, 12, 13, 14]);
    assert_eq!(keys(tx.range::<Headers>(10..=12)), vec![10, 11, 12]);
    assert_eq!(keys(tx.range::<Headers>(97..)), vec![97, 98, 99]);
    assert_eq!(keys(tx.range::<Headers>(..3)), vec![0, 1, 2]);
    assert_eq!(tx.range::<Headers>(..).count(), 100);
    assert_eq!(tx.range::<Headers>(50..50).count(), 0);
    assert_eq!(tx.range::<Headers>(200..).count(), 0);
    let rev: Vec<u64> = tx
        .range::<Headers>(10..15)
        .rev()
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(rev, vec![14, 13, 12, 11, 10]);
    let rev: Vec<u64> = tx
        .range::<Headers>(..=2)
        .rev()
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(rev, vec![2, 1, 0]);
    let rev: Vec<u64> = tx
        .range::<Headers>(98..)
        .rev()
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(rev, vec![99, 98]);
    // Both ends meet in the middle without repeating an entry.
    let mut it = tx.range::<Headers>(0..5);
    let mut seen = vec![];
    loop {
        match (it.next(), it.next_back()) {
            (None, None) => break,
            (a, b) => {
                seen.extend(a.map(|r| r.unwrap().0));
                seen.extend(b.map(|r| r.unwrap().0));
            }
        }
    }
    seen.sort();
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
}

#[test]
fn integer_key_table_orders_numerically() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    for n in [300u32, 1, 256, 65_536, 2] {
        tx.put::<Blobs>(&n, &n.to_le_bytes().to_vec()).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let keys: Vec<u32> = tx.iter::<Blobs>().keys().map(Result::unwrap).collect();
    assert_eq!(keys, vec![1, 2, 256, 300, 65_536]);
    let keys: Vec<u32> = tx
        .range::<Blobs>(2..=300)
        .keys()
        .rev()
        .map(Result::unwrap)
        .collect();
    assert_eq!(keys, vec![300, 256, 2]);
    assert_eq!(
        tx.get::<Blobs>(&256).unwrap(),
        Some(256u32.to_le_bytes().to_vec())
    );
}

#[test]
fn append_out_of_order_names_table_and_keys() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    tx.append::<Headers>(&5, &header(5)).unwrap();
    let err = tx.append::<Headers>(&3, &header(3)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::AppendOutOfOrder {
                table: "Headers",
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("key 3 "), "{msg}");
    assert!(msg.contains("last key 5"), "{msg}");
    // The failed append changed nothing; the transaction is still usable.
    tx.append::<Headers>(&6, &header(6)).unwrap();
    let mut app = tx.appender::<Headers>().unwrap();
    app.append(&7, &header(7)).unwrap();
    let err = app.append(&7, &header(7)).unwrap_err();
    assert!(matches!(err, Error::AppendOutOfOrder { .. }), "{err}");
    drop(app);
    tx.commit().unwrap();
    let keys: Vec<u64> = db
        .read()
        .unwrap()
        .iter::<Headers>()
        .keys()
        .map(Result::unwrap)
        .collect();
    assert_eq!(keys, vec![5, 6, 7]);
}

#[test]
fn dupsort_values_append_and_delete_one() {
    let (_d, db) = tempdb::open::<Chain>();
    let key = ("tx1".to_string(), 9u64);
    let mut tx = db.write().unwrap();
    tx.put::<Logs>(&key, &"b".to_string()).unwrap();
    tx.put::<Logs>(&key, &"a".to_string()).unwrap();
    tx.append_dup::<Logs>(&key, &"c".to_string()).unwrap();
    tx.put::<Logs>(&("tx0".to_string(), 1u64), &"z".to_string())
        .unwrap();
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    let vals: Vec<String> = tx.dups::<Logs>(&key).values().map(Result::unwrap).collect();
    assert_eq!(vals, vec!["a", "b", "c"]);
    let back: Vec<String> = tx
        .dups::<Logs>(&key)
        .values()
        .rev()
        .map(Result::unwrap)
        .collect();
    assert_eq!(back, vec!["c", "b", "a"]);
    assert_eq!(tx.len::<Logs>().unwrap(), 4);
    drop(tx);

    let mut tx = db.write().unwrap();
    assert!(tx.delete_dup::<Logs>(&key, &"b".to_string()).unwrap());
    assert!(!tx.delete_dup::<Logs>(&key, &"b".to_string()).unwrap());
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let vals: Vec<String> = tx.dups::<Logs>(&key).values().map(Result::unwrap).collect();
    assert_eq!(vals, vec!["a", "c"]);
    assert_eq!(
        tx.get::<Logs>(&("tx0".to_string(), 1u64))
            .unwrap()
            .as_deref(),
        Some("z")
    );
}

#[test]
fn cursor_moves() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    for n in [10u64, 20, 30] {
        tx.put::<Headers>(&n, &header(n)).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let mut c = tx.cursor::<Headers>().unwrap();
    assert_eq!(c.first().unwrap().unwrap().0, 10);
    assert_eq!(c.next().unwrap().unwrap().0, 20);
    assert_eq!(c.last().unwrap().unwrap().0, 30);
    assert_eq!(c.prev().unwrap().unwrap().0, 20);
    // `seek_exact` finds the key itself, `seek` the first key `>=` it.
    assert_eq!(c.seek_exact(&20).unwrap().unwrap().1, header(20));
    assert!(c.seek_exact(&25).unwrap().is_none());
    assert_eq!(c.seek(&25).unwrap().unwrap().0, 30);
    assert_eq!(c.seek(&20).unwrap().unwrap().0, 20);
    assert!(c.seek(&31).unwrap().is_none());
}

#[test]
fn clear_and_stat() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    for n in 0..1000u64 {
        tx.append::<Headers>(&n, &header(n)).unwrap();
    }
    let st = tx.stat::<Headers>().unwrap();
    assert_eq!(st.entries, 1000);
    assert!(st.leaf_pages > 1);
    tx.clear::<Headers>().unwrap();
    assert!(tx.is_empty::<Headers>().unwrap());
    tx.commit().unwrap();
    assert_eq!(db.read().unwrap().len::<Headers>().unwrap(), 0);
}

#[test]
fn corrupt_value_bytes_give_a_decode_error_not_a_panic() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    tx.put::<Headers>(&1, &header(1)).unwrap();
    tx.put_bytes::<Headers>(&2u64.to_be_bytes(), &[0xff, 0xff, 0xff])
        .unwrap();
    tx.put_bytes::<Headers>(&[1, 2, 3], b"short key").unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let err = tx.get::<Headers>(&2).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Decode {
                table: "Headers",
                part: Part::Value,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("key 2"), "{err}");
    // Iteration reports each bad entry and goes on.
    let results: Vec<_> = tx.iter::<Headers>().collect();
    assert_eq!(results.len(), 3);
    // Keys sort as bytes: 0x00..01, 0x00..02, then 0x010203.
    assert_eq!(results[0].as_ref().unwrap().0, 1);
    assert!(matches!(
        results[1],
        Err(Error::Decode {
            part: Part::Value,
            ..
        })
    ));
    assert!(matches!(
        results[2],
        Err(Error::Decode {
            part: Part::Key,
            ..
        })
    ));
}

#[test]
fn oversized_key_is_a_clear_error() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    let huge = "k".repeat(10_000);
    let err = tx.put::<Names>(huge.as_str(), &1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                table: "names",
                part: Part::Key,
                ..
            }
        ),
        "{err}"
    );
    // The transaction survives the refused write.
    tx.put::<Names>("ok", &1).unwrap();
    tx.commit().unwrap();
    assert_eq!(db.read().unwrap().get::<Names>("ok").unwrap(), Some(1));
}

#[test]
fn full_map_is_a_clear_error_and_keeps_committed_data() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::new().max_size(1 << 20).growth_step(64 << 10);
    let db = tabula::open::<Chain>(dir.path(), opts).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Names>("kept", &1).unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    let blob = vec![7u8; 4096];
    let mut err = None;
    for n in 0..10_000u32 {
        if let Err(e) = tx.put::<Blobs>(&n, &blob) {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("a 1 MiB map fills up");
    assert!(
        matches!(
            err,
            Error::MapFull {
                table: Some("blobs"),
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("max_size"), "{err}");
    drop(tx);
    assert_eq!(db.read().unwrap().get::<Names>("kept").unwrap(), Some(1));
}

#[test]
fn readers_run_in_parallel_and_see_commits() {
    let (_d, db) = tempdb::open::<Chain>();
    let db = Arc::new(db);
    let mut tx = db.write().unwrap();
    for n in 0..100u64 {
        tx.append::<Headers>(&n, &header(n)).unwrap();
    }
    tx.commit().unwrap();
    let readers: Vec<_> = (0..8)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for i in 0..500u64 {
                    let tx = db.read().unwrap();
                    let n = (i * 7 + t) % 100;
                    assert_eq!(tx.get::<Headers>(&n).unwrap(), Some(header(n)));
                }
            })
        })
        .collect();
    for r in readers {
        r.join().unwrap();
    }
    // A read transaction begun after a commit sees it; one begun before does not.
    let before = db.read().unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Headers>(&1000, &header(1000)).unwrap();
    tx.commit().unwrap();
    assert!(before.get::<Headers>(&1000).unwrap().is_none());
    drop(before);
    assert!(db.read().unwrap().get::<Headers>(&1000).unwrap().is_some());
    // Parked readers hold slots but stay within the limit.
    let info = db.info().unwrap();
    assert!(info.readers <= info.max_readers, "{info:?}");
}

#[test]
fn read_txn_can_move_to_another_thread() {
    let (_d, db) = tempdb::open::<Chain>();
    let mut tx = db.write().unwrap();
    tx.put::<Names>("x", &1).unwrap();
    tx.commit().unwrap();
    std::thread::scope(|s| {
        let tx = db.read().unwrap();
        s.spawn(move || assert_eq!(tx.get::<Names>("x").unwrap(), Some(1)))
            .join()
            .unwrap();
    });
}

#[test]
fn data_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Chain>(dir.path(), Options::new().max_size(1 << 30)).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Names>("persist", &42).unwrap();
        tx.commit().unwrap();
    }
    let db = tabula::open::<Chain>(dir.path(), Options::new().max_size(1 << 30)).unwrap();
    assert_eq!(
        db.read().unwrap().get::<Names>("persist").unwrap(),
        Some(42)
    );
    let ro = {
        drop(db);
        tabula::open::<Chain>(dir.path(), Options::new().max_size(1 << 30).read_only(true)).unwrap()
    };
    assert_eq!(
        ro.read().unwrap().get::<Names>("persist").unwrap(),
        Some(42)
    );
}
