//! Dupsort tables: values in their type's order, subkeys, typed dup reads, write cursors.

#[path = "support/tempdb.rs"]
mod tempdb;

use serde::{Deserialize, Serialize};
use tabula::{Error, Key, Schema, Table};

#[derive(Table)]
#[table(name = "numbers", key = u64, value = u64, dupsort)]
struct Numbers;

#[derive(Table)]
#[table(name = "words", key = u64, value = String, dupsort)]
struct Words;

#[derive(Table)]
#[table(name = "signed", key = u64, value = i64, dupsort)]
struct Signed;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Slot {
    value: u64,
    note: String,
}

/// reth's `PlainStorageState` shape: address -> (slot, value), sorted by slot.
#[derive(Table)]
#[table(name = "storage", key = [u8; 20], subkey = [u8; 32], value = Slot, dupsort)]
struct Storage;

/// A variable-length subkey: self-delimiting, so "a" and "ab" stay apart.
#[derive(Table)]
#[table(name = "tags", key = u32, subkey = String, value = Vec<u8>, codec = tabula::Raw, dupsort)]
struct Tags;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct Version {
    major: u16,
    minor: i32,
}

#[derive(Table)]
#[table(name = "versions", key = String, value = Version, dupsort)]
struct Versions;

#[derive(Schema)]
struct Dups(Numbers, Words, Signed, Storage, Tags, Versions);

fn address(n: u8) -> [u8; 20] {
    [n; 20]
}

fn slot(n: u64) -> [u8; 32] {
    let mut s = [0u8; 32];
    s[24..].copy_from_slice(&n.to_be_bytes());
    s
}

fn note(n: u64) -> Slot {
    Slot {
        value: n * 7,
        note: format!("slot {n}"),
    }
}

/// Regression (issue 12): dup values were stored as bincode, so they came back ordered by
/// little-endian varint bytes (5, 250, 256, 300, 251, ...), strings shortest first and signed
/// integers as 0, -1, 1, -300, 300.
#[test]
fn dup_values_come_back_in_the_value_types_order() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    let numbers = [300u64, 5, 256, 255, 70000, 251, 250, 1 << 40];
    for n in numbers {
        tx.put::<Numbers>(&1, &n).unwrap();
    }
    let words = ["pear", "fig", "apple", "banana", "kiwi"];
    for w in words {
        tx.put::<Words>(&1, &w.to_string()).unwrap();
    }
    for i in [300i64, -1, 0, 1, -300, i64::MIN, i64::MAX] {
        tx.put::<Signed>(&1, &i).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let got: Vec<u64> = tx
        .dups::<Numbers>(&1)
        .values()
        .map(Result::unwrap)
        .collect();
    let mut want = numbers.to_vec();
    want.sort();
    assert_eq!(got, want);
    let got: Vec<String> = tx.dups::<Words>(&1).values().map(Result::unwrap).collect();
    assert_eq!(got, ["apple", "banana", "fig", "kiwi", "pear"]);
    let got: Vec<i64> = tx.dups::<Signed>(&1).values().map(Result::unwrap).collect();
    assert_eq!(got, [i64::MIN, -300, -1, 0, 1, 300, i64::MAX]);
    // From the back too.
    let got: Vec<u64> = tx
        .dups::<Numbers>(&1)
        .values()
        .rev()
        .map(Result::unwrap)
        .collect();
    want.reverse();
    assert_eq!(got, want);
}

/// Regression (issue 12): appending rising values failed once their bincode bytes stopped
/// rising (255 is `fb ff 00`, 256 is `fb 00 01`).
#[test]
fn append_dup_takes_values_rising_in_their_own_order() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    for n in [1u64, 250, 251, 255, 256, 65_535, 65_536, 1 << 40] {
        tx.append_dup::<Numbers>(&2, &n).unwrap();
    }
    let mut appender = tx.appender::<Numbers>().unwrap();
    for n in [1u64, 255, 256, 70_000] {
        appender.append_dup(&3, &n).unwrap();
    }
    drop(appender);
    assert_eq!(tx.len::<Numbers>().unwrap(), 12);
}

/// Regression: `Appender::append_dup` accepted a pair equal to the last one (`Ok(())`, nothing
/// written) where `Tx::append_dup` refused it; both refuse it now.
#[test]
fn appender_and_tx_append_dup_both_refuse_an_equal_pair() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    tx.append_dup::<Numbers>(&1, &7).unwrap();
    let err = tx.append_dup::<Numbers>(&1, &7).unwrap_err();
    assert!(
        matches!(
            err,
            Error::AppendDupOutOfOrder {
                table: "numbers",
                ..
            }
        ),
        "{err}"
    );
    let mut appender = tx.appender::<Numbers>().unwrap();
    appender.append_dup(&2, &7).unwrap();
    let err = appender.append_dup(&2, &7).unwrap_err();
    assert!(
        matches!(
            err,
            Error::AppendDupOutOfOrder {
                table: "numbers",
                ..
            }
        ),
        "{err}"
    );
    // A single value under a key too (libmdbx keeps it outside a nested tree).
    appender.append_dup(&3, &1).unwrap();
    let err = appender.append_dup(&3, &1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::AppendDupOutOfOrder {
                table: "numbers",
                ..
            }
        ),
        "{err}"
    );
    drop(appender);
    assert_eq!(tx.len::<Numbers>().unwrap(), 3);
}

#[test]
fn a_subkey_table_keeps_pairs_sorted_by_subkey_and_seeks_by_subkey() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    for n in [300u64, 5, 256, 255, 70000] {
        tx.put::<Storage>(&address(1), &(slot(n), note(n))).unwrap();
    }
    tx.put::<Storage>(&address(2), &(slot(1), note(1))).unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let slots = |it: tabula::Iter<'_, Storage>| -> Vec<[u8; 32]> {
        it.values().map(|v| v.unwrap().0).collect()
    };
    let sorted = [5u64, 255, 256, 300, 70000].map(slot);
    assert_eq!(slots(tx.dups::<Storage>(&address(1))), sorted);
    assert_eq!(tx.dup_count::<Storage>(&address(1)).unwrap(), 5);
    assert_eq!(
        tx.get_dup::<Storage>(&address(1), &slot(256)).unwrap(),
        Some((slot(256), note(256)))
    );
    assert_eq!(
        tx.get_dup::<Storage>(&address(1), &slot(257)).unwrap(),
        None
    );
    assert_eq!(
        tx.seek_dup::<Storage>(&address(1), &slot(257)).unwrap(),
        Some((slot(300), note(300)))
    );
    // Past the key's last slot: nothing, not the next key's first.
    assert_eq!(
        tx.seek_dup::<Storage>(&address(1), &slot(70001)).unwrap(),
        None
    );
    assert_eq!(tx.seek_dup::<Storage>(&address(3), &slot(0)).unwrap(), None);
    // `dups_from`, from both ends.
    let from = tx.dups_from::<Storage>(&address(1), &slot(256));
    assert_eq!(slots(from), [256u64, 300, 70000].map(slot));
    let back: Vec<[u8; 32]> = tx
        .dups_from::<Storage>(&address(1), &slot(6))
        .rev()
        .map(|e| e.unwrap().1.0)
        .collect();
    assert_eq!(back, [70000u64, 300, 256, 255].map(slot));
    let mut both = tx.dups_from::<Storage>(&address(1), &slot(255));
    assert_eq!(both.next().unwrap().unwrap().1.0, slot(255));
    assert_eq!(both.next_back().unwrap().unwrap().1.0, slot(70000));
    assert_eq!(slots(both), [256u64, 300].map(slot));
    // A cursor seeks by subkey and walks the key's values.
    let mut c = tx.cursor::<Storage>().unwrap();
    assert_eq!(
        c.seek_dup(&address(1), &slot(254)).unwrap(),
        Some((address(1), (slot(255), note(255))))
    );
    assert_eq!(c.next_dup().unwrap().unwrap().1.0, slot(256));
    assert_eq!(c.last_dup().unwrap().unwrap().1.0, slot(70000));
    assert_eq!(c.next_dup().unwrap(), None);
    assert_eq!(c.prev_dup().unwrap().unwrap().1.0, slot(300));
    assert_eq!(c.dup_count().unwrap(), 5);
    assert_eq!(c.next_no_dup().unwrap().unwrap().0, address(2));
    assert_eq!(c.prev_no_dup().unwrap().unwrap().1.0, slot(70000));
    assert_eq!(c.first_dup().unwrap().unwrap().1.0, slot(5));
}

#[test]
fn variable_length_subkeys_match_exactly() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    for (tag, value) in [
        ("ab", b"x".to_vec()),
        ("a", vec![]),
        ("b", vec![0, 0]),
        ("a\0", vec![1]),
    ] {
        tx.put::<Tags>(&1, &(tag.to_string(), value)).unwrap();
    }
    let tags: Vec<String> = tx.dups::<Tags>(&1).values().map(|v| v.unwrap().0).collect();
    assert_eq!(tags, ["a", "a\0", "ab", "b"]);
    assert_eq!(
        tx.get_dup::<Tags>(&1, "a").unwrap(),
        Some(("a".into(), vec![]))
    );
    assert_eq!(
        tx.get_dup::<Tags>(&1, "a\0").unwrap(),
        Some(("a\0".into(), vec![1]))
    );
    assert_eq!(tx.get_dup::<Tags>(&1, "aa").unwrap(), None);
    assert_eq!(
        tx.seek_dup::<Tags>(&1, "aa").unwrap(),
        Some(("ab".into(), b"x".to_vec()))
    );
    assert_eq!(
        tx.seek_dup::<Tags>(&1, "").unwrap(),
        Some(("a".into(), vec![]))
    );
    // A derived key type as the value of a table without a subkey: field order.
    for (major, minor) in [(1, 5), (0, 9), (1, -2), (0, -1)] {
        tx.put::<Versions>("crate", &Version { major, minor })
            .unwrap();
    }
    let versions: Vec<(u16, i32)> = tx
        .dups::<Versions>("crate")
        .values()
        .map(|v| v.map(|v| (v.major, v.minor)).unwrap())
        .collect();
    assert_eq!(versions, [(0, -1), (0, 9), (1, -2), (1, 5)]);
    let at_least = tx
        .seek_dup::<Versions>(
            "crate",
            &Version {
                major: 1,
                minor: -3,
            },
        )
        .unwrap();
    assert_eq!(
        at_least,
        Some(Version {
            major: 1,
            minor: -2
        })
    );
}

#[test]
fn upsert_dup_replaces_every_value_of_the_subkey() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    // `put` adds pairs: two values under one subkey.
    tx.put::<Storage>(&address(1), &(slot(1), note(1))).unwrap();
    tx.put::<Storage>(&address(1), &(slot(1), note(2))).unwrap();
    tx.put::<Storage>(&address(1), &(slot(2), note(2))).unwrap();
    tx.put::<Storage>(&address(2), &(slot(1), note(1))).unwrap();
    assert_eq!(tx.dup_count::<Storage>(&address(1)).unwrap(), 3);
    let mut c = tx.cursor_mut::<Storage>().unwrap();
    c.upsert_dup(&address(1), &slot(1), &note(9)).unwrap();
    assert_eq!(c.current().unwrap(), Some((address(1), (slot(1), note(9)))));
    c.upsert_dup(&address(1), &slot(3), &note(3)).unwrap(); // a new subkey
    c.upsert_dup(&address(1), &slot(3), &note(3)).unwrap(); // the same value again
    drop(c);
    let values: Vec<([u8; 32], Slot)> = tx
        .dups::<Storage>(&address(1))
        .values()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        values,
        [(slot(1), note(9)), (slot(2), note(2)), (slot(3), note(3))]
    );
    assert_eq!(
        tx.dup_count::<Storage>(&address(2)).unwrap(),
        1,
        "other keys untouched"
    );
}

/// Deleting while walking, in both directions, over enough entries to span many pages:
/// nothing is skipped or repeated.
#[test]
fn write_cursors_delete_while_walking_without_skipping_or_repeating() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    for k in 0..400u64 {
        for v in 0..(k % 7) {
            tx.put::<Numbers>(&k, &v).unwrap();
        }
    }
    let all: Vec<(u64, u64)> = tx.iter::<Numbers>().map(Result::unwrap).collect();
    // Forward: delete every third entry.
    let mut seen = Vec::new();
    let mut c = tx.cursor_mut::<Numbers>().unwrap();
    let mut entry = c.first().unwrap();
    while let Some(e) = entry {
        if seen.len() % 3 == 0 {
            c.delete_current().unwrap();
        }
        seen.push(e);
        entry = c.next().unwrap();
    }
    drop(c);
    assert!(seen == all, "the forward walk saw every entry once");
    let kept: Vec<(u64, u64)> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, e)| *e)
        .collect();
    let left: Vec<(u64, u64)> = tx.iter::<Numbers>().map(Result::unwrap).collect();
    assert!(left == kept);
    // Backward: delete every other entry, then whole keys.
    let mut seen = Vec::new();
    let mut c = tx.cursor_mut::<Numbers>().unwrap();
    let mut entry = c.last().unwrap();
    while let Some(e) = entry {
        if seen.len() % 2 == 0 {
            c.delete_current().unwrap();
        }
        seen.push(e);
        entry = c.prev().unwrap();
    }
    drop(c);
    let mut reversed = kept.clone();
    reversed.reverse();
    assert!(seen == reversed, "the backward walk saw every entry once");
    let mut c = tx.cursor_mut::<Numbers>().unwrap();
    let mut entry = c.first().unwrap();
    while let Some((k, _)) = entry {
        if k % 2 == 0 {
            c.delete_current_dups().unwrap();
            entry = c.next().unwrap();
        } else {
            entry = c.next_no_dup().unwrap();
        }
    }
    drop(c);
    assert!(tx.iter::<Numbers>().keys().all(|k| k.unwrap() % 2 == 1));
    tx.commit().unwrap();
    assert!(db.check().unwrap().is_ok());
}

/// Regression: right after deleting the last value of a key that keeps others, libmdbx
/// 0.14.4's `MDBX_GET_CURRENT` looks only among that key's values and returned the value before
/// the deleted one, so `current` gave `(1, 1)` where `next` gives the entry that followed.
#[test]
fn current_after_deleting_a_keys_last_value_is_the_entry_that_followed() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    for (k, v) in [(1u64, 1u64), (1, 2), (2, 1)] {
        tx.put::<Numbers>(&k, &v).unwrap();
    }
    let mut c = tx.cursor_mut::<Numbers>().unwrap();
    assert_eq!(c.seek_dup(&1, &2).unwrap(), Some((1, 2)));
    c.delete_current().unwrap();
    assert_eq!(c.current().unwrap(), Some((2, 1)));
    assert_eq!(c.current().unwrap(), Some((2, 1)), "and it stays there");
    assert_eq!(c.prev().unwrap(), Some((1, 1)));
}

#[test]
fn table_level_deletes_count_pairs() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    for k in 1..=5u64 {
        for v in 0..k {
            tx.put::<Numbers>(&k, &v).unwrap();
        }
    }
    assert_eq!(tx.delete_range::<Numbers>(2..4).unwrap(), 2 + 3);
    assert_eq!(tx.delete_range::<Numbers>(2..4).unwrap(), 0);
    assert_eq!(tx.retain::<Numbers>(|_, v| v % 2 == 0).unwrap(), 4);
    // Left: 1 -> [0]; 4 -> [0, 2]; 5 -> [0, 2, 4].
    assert_eq!(tx.pop_first::<Numbers>().unwrap(), Some((1, 0)));
    assert_eq!(tx.pop_last::<Numbers>().unwrap(), Some((5, 4)));
    assert_eq!(tx.pop_last::<Numbers>().unwrap(), Some((5, 2)));
    let left: Vec<(u64, u64)> = tx.iter::<Numbers>().map(Result::unwrap).collect();
    assert_eq!(left, [(4, 0), (4, 2), (5, 0)]);
    assert_eq!(tx.delete_range::<Numbers>(..).unwrap(), 3);
    assert_eq!(tx.pop_first::<Numbers>().unwrap(), None);
}

#[test]
fn two_write_cursors_work_in_turn() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    for v in 1..=50u64 {
        tx.put::<Numbers>(&1, &v).unwrap();
    }
    let (mut numbers, mut signed) = tx.cursors_mut::<(Numbers, Signed)>().unwrap();
    let mut entry = numbers.first().unwrap();
    while let Some((k, v)) = entry {
        signed.upsert(&k, &-(v as i64)).unwrap();
        numbers.delete_current().unwrap();
        entry = numbers.next().unwrap();
    }
    drop((numbers, signed));
    assert_eq!(tx.len::<Numbers>().unwrap(), 0);
    let moved: Vec<i64> = tx.dups::<Signed>(&1).values().map(Result::unwrap).collect();
    assert_eq!(moved, (-50..=-1).collect::<Vec<i64>>());
}

#[test]
fn write_cursor_refusals_name_the_table_and_what_to_do() {
    let (_d, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    let mut c = tx.cursor_mut::<Words>().unwrap();
    let err = c.delete_current().unwrap_err();
    assert!(err.to_string().contains("table `words`"), "{err}");
    c.append(&5, &"e".to_string()).unwrap();
    let err = c.append(&4, &"d".to_string()).unwrap_err();
    assert!(
        matches!(err, Error::AppendOutOfOrder { table: "words", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("last key 5"), "{err}");
    let err = c.insert(&5, &"f".to_string()).unwrap_err();
    assert!(
        matches!(err, Error::KeyExists { table: "words", .. }),
        "{err}"
    );
    c.append_dup(&5, &"f".to_string()).unwrap();
    let err = c.append_dup(&5, &"a".to_string()).unwrap_err();
    // The message names the value and the key's last value, as stored ("a" and "f").
    let message = err.to_string();
    assert!(
        matches!(err, Error::AppendDupOutOfOrder { table: "words", .. }),
        "{message}"
    );
    assert!(
        message.contains("value 0x61 is not greater than the last value 0x66"),
        "{message}"
    );
    assert!(message.contains("of key 5"), "{message}");
}

/// The schema-less reader (the `tabula` command) decodes ordered values and subkey pairs
/// from what the schema record says.
#[test]
fn the_schema_less_reader_decodes_dup_values() {
    use tabula::untyped::{DynKey, DynValue, UntypedDb};
    let (dir, db) = tempdb::open::<Dups>();
    let mut tx = db.write().unwrap();
    tx.put::<Versions>(
        "crate",
        &Version {
            major: 1,
            minor: -2,
        },
    )
    .unwrap();
    tx.put::<Storage>(&address(1), &(slot(3), note(3))).unwrap();
    tx.put::<Signed>(&1, &-5).unwrap();
    tx.commit().unwrap();
    drop(db);
    let untyped = UntypedDb::open(dir.path()).unwrap();
    let mut tx = untyped.read().unwrap();
    let versions = tx.table("versions").unwrap().unwrap();
    let storage = tx.table("storage").unwrap().unwrap();
    let signed = tx.table("signed").unwrap().unwrap();
    let got = tx.get(&versions, &DynKey::Str("crate".into())).unwrap();
    assert_eq!(
        got,
        [DynValue::Struct(vec![
            ("major".into(), DynValue::Unsigned(1)),
            ("minor".into(), DynValue::Signed(-2)),
        ])]
    );
    let got = tx
        .get(&storage, &DynKey::Bytes(address(1).to_vec()))
        .unwrap();
    assert_eq!(
        got,
        [DynValue::Tuple(vec![
            DynValue::Bytes(slot(3).to_vec()),
            DynValue::Struct(vec![
                ("value".into(), DynValue::Unsigned(21)),
                ("note".into(), DynValue::Str("slot 3".into())),
            ]),
        ])]
    );
    assert_eq!(
        tx.get(&signed, &DynKey::Unsigned(1)).unwrap(),
        [DynValue::Signed(-5)]
    );
    // And they encode back to the stored bytes.
    let shape = storage.value_shape().unwrap();
    let raw = tx.get_raw(&storage, &address(1)).unwrap();
    assert_eq!(
        shape.encode(&shape.decode(&raw[0]).unwrap()).unwrap(),
        raw[0]
    );
}
