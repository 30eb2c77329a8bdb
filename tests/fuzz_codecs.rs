//! Fuzzing by property tests: decoding arbitrary or damaged bytes never panics.
//!
//! `cargo fuzz` needs a nightly toolchain, which this project's machines do not have (only the
//! pinned stable 1.95), so the fuzz targets are proptest properties with many cases instead.
//! `crates/core/tests/key_codec.rs` already covers every built-in key type; this file adds the
//! value codecs (`Bincode<T>` for several shapes, `Raw`) and `#[derive(Key)]` structs, and runs
//! the same inputs through a real table (`put_bytes`, then typed reads).
//!
//! `PROPTEST_CASES` raises the case count (default here: 1024 per property). Each property
//! prints its RNG seed; `TABULA_SEED=<seed>` replays a run. A failing case is saved in
//! `tests/proptest-regressions/fuzz_codecs.txt`, which is committed: proptest runs the saved
//! cases first, every run.

#[path = "support/props.rs"]
mod props;
#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, TestRunner};
use serde::{Deserialize, Serialize};
use tabula::{AsKey, Bincode, Error, Key, Options, Part, Raw, Schema, Table, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Kind {
    Empty,
    Number(i64),
    Pair(u8, String),
    Nested {
        inner: Option<Box<Kind>>,
        tags: Vec<u16>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    id: u128,
    name: String,
    score: f64,
    flags: [bool; 3],
    kind: Kind,
    attrs: BTreeMap<String, Vec<u8>>,
    parent: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct AccountKey {
    account: String,
    slot: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct EventKey {
    stream: Vec<u8>,
    at: i64,
    tag: Option<String>,
    seen: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct NestedKey {
    owner: AccountKey,
    seq: u16,
}

fn kind() -> impl Strategy<Value = Kind> {
    let leaf = prop_oneof![
        Just(Kind::Empty),
        any::<i64>().prop_map(Kind::Number),
        (any::<u8>(), ".{0,8}").prop_map(|(a, s)| Kind::Pair(a, s)),
    ];
    leaf.prop_recursive(3, 8, 2, |inner| {
        (prop::option::of(inner), vec(any::<u16>(), 0..4)).prop_map(|(i, tags)| Kind::Nested {
            inner: i.map(Box::new),
            tags,
        })
    })
}

fn record() -> impl Strategy<Value = Record> {
    (
        any::<u128>(),
        ".{0,12}",
        any::<f64>().prop_filter("NaN is not equal to itself", |f| !f.is_nan()),
        any::<[bool; 3]>(),
        kind(),
        prop::collection::btree_map(".{0,4}", vec(any::<u8>(), 0..6), 0..3),
        any::<Option<u64>>(),
    )
        .prop_map(|(id, name, score, flags, kind, attrs, parent)| Record {
            id,
            name,
            score,
            flags,
            kind,
            attrs,
            parent,
        })
}

/// Bytes that look like bincode: small varints, the varint markers (251-254) and length
/// prefixes claiming far more than follows.
fn arbitrary_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..96),
        vec(prop_oneof![0u8..4, 250u8..=255], 0..48),
        (vec(any::<u8>(), 0..16)).prop_map(|tail| {
            let mut b = vec![253, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
            b.extend(tail);
            b
        }),
    ]
}

/// Encodes with a value codec, outside a transaction.
fn encode<C: Value>(item: &C::Item) -> Vec<u8> {
    let mut scratch = Vec::new();
    C::encode(item, &mut scratch).unwrap().to_vec()
}

/// Changes a valid encoding: cuts it, inserts a byte, or replaces one.
fn damage(mut bytes: Vec<u8>, at: Index, b: u8, how: u8) -> Vec<u8> {
    let i = at.index(bytes.len() + 1);
    match how {
        0 => bytes.truncate(i),
        1 => bytes.insert(i, b),
        _ => match bytes.get_mut(i) {
            Some(x) => *x = b,
            None => bytes.push(b),
        },
    }
    bytes
}

/// Decoding arbitrary bytes returns a value or an error; an accepted value re-encodes to a
/// value that decodes to itself (bincode varints have more than one form, so bytes may differ).
fn decode_total<C: Value>(bytes: &[u8]) -> Result<(), TestCaseError>
where
    C::Item: PartialEq + std::fmt::Debug,
{
    if let Ok(v) = C::decode(bytes) {
        let again = encode::<C>(&v);
        prop_assert_eq!(C::decode(&again).unwrap(), v);
    }
    Ok(())
}

fn key_bytes<K: Key>(k: &K) -> Vec<u8> {
    AsKey::<K>::encode(k).as_ref().to_vec()
}

fn key_decode_total<K: Key + std::fmt::Debug>(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(k) = K::decode(bytes) {
        // Key encodings are canonical: what decodes re-encodes to the same bytes.
        prop_assert_eq!(key_bytes(&k), bytes, "{:?}", k);
    }
    Ok(())
}

fn account_key() -> impl Strategy<Value = AccountKey> {
    ("[a\u{0}\u{ff}é]{0,6}", any::<u32>()).prop_map(|(account, slot)| AccountKey { account, slot })
}

fn event_key() -> impl Strategy<Value = EventKey> {
    (
        vec(prop_oneof![Just(0u8), Just(0xff), any::<u8>()], 0..6),
        any::<i64>(),
        prop::option::of("[a\u{0}]{0,3}"),
        any::<bool>(),
    )
        .prop_map(|(stream, at, tag, seen)| EventKey {
            stream,
            at,
            tag,
            seen,
        })
}

fn nested_key() -> impl Strategy<Value = NestedKey> {
    (account_key(), any::<u16>()).prop_map(|(owner, seq)| NestedKey { owner, seq })
}

proptest! {
    #![proptest_config(props::config("fuzz_codecs", 1024))]

    #[test]
    fn bincode_record_roundtrips(r in record()) {
        prop_assert_eq!(Bincode::<Record>::decode(&encode::<Bincode<Record>>(&r)).unwrap(), r);
    }

    #[test]
    fn bincode_values_decode_arbitrary_bytes_without_panic(bytes in arbitrary_bytes()) {
        decode_total::<Bincode<Record>>(&bytes)?;
        decode_total::<Bincode<Kind>>(&bytes)?;
        decode_total::<Bincode<String>>(&bytes)?;
        decode_total::<Bincode<Vec<u64>>>(&bytes)?;
        decode_total::<Bincode<(u8, Option<i32>, [u16; 2])>>(&bytes)?;
        decode_total::<Bincode<BTreeMap<u32, String>>>(&bytes)?;
        decode_total::<Bincode<u128>>(&bytes)?;
        decode_total::<Bincode<char>>(&bytes)?;
        decode_total::<Raw>(&bytes)?;
    }

    #[test]
    fn bincode_damaged_records_never_panic(
        r in record(), at in any::<Index>(), b in any::<u8>(), how in 0u8..3
    ) {
        let bytes = damage(encode::<Bincode<Record>>(&r), at, b, how);
        decode_total::<Bincode<Record>>(&bytes)?;
        // Cut short is always an error: every byte of the encoding is needed.
        if how == 0 && bytes.len() < encode::<Bincode<Record>>(&r).len() {
            prop_assert!(Bincode::<Record>::decode(&bytes).is_err());
        }
    }

    #[test]
    fn derived_keys_roundtrip_and_keep_order(a in event_key(), b in event_key()) {
        prop_assert_eq!(EventKey::decode(&key_bytes(&a)).unwrap(), a.clone());
        prop_assert_eq!(key_bytes(&a).cmp(&key_bytes(&b)), a.cmp(&b));
    }

    #[test]
    fn nested_derived_keys_roundtrip_and_keep_order(a in nested_key(), b in nested_key()) {
        prop_assert_eq!(NestedKey::decode(&key_bytes(&a)).unwrap(), a.clone());
        prop_assert_eq!(key_bytes(&a).cmp(&key_bytes(&b)), a.cmp(&b));
    }

    #[test]
    fn derived_keys_decode_arbitrary_bytes_without_panic(bytes in arbitrary_bytes()) {
        key_decode_total::<AccountKey>(&bytes)?;
        key_decode_total::<EventKey>(&bytes)?;
        key_decode_total::<NestedKey>(&bytes)?;
    }

    #[test]
    fn derived_keys_damaged_never_panic(
        k in event_key(), at in any::<Index>(), b in any::<u8>(), how in 0u8..3
    ) {
        let bytes = damage(key_bytes(&k), at, b, how);
        key_decode_total::<EventKey>(&bytes)?;
        let bytes = damage(key_bytes(&NestedKey { owner: AccountKey { account: "é\0".into(), slot: 1 }, seq: 2 }), at, b, how);
        key_decode_total::<NestedKey>(&bytes)?;
    }
}

// End to end: the same inputs as stored entries of a real table.

#[derive(Table)]
#[table(name = "records", key = EventKey, value = Record)]
struct Records;

#[derive(Schema)]
struct Fuzz(Records);

/// Keys for the stored entries: mostly valid `EventKey` encodings (so typed reads of them run),
/// some damaged, some arbitrary.
fn stored_key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => event_key().prop_map(|k| key_bytes(&k)),
        1 => (event_key(), any::<Index>(), any::<u8>(), 0u8..3)
            .prop_map(|(k, at, b, how)| damage(key_bytes(&k), at, b, how))
            .prop_filter("libmdbx keys are not empty", |k| !k.is_empty()),
        1 => vec(any::<u8>(), 1..40),
    ]
}

/// Values for the stored entries: mostly valid `Record` encodings, some damaged, some arbitrary.
fn stored_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => record().prop_map(|r| encode::<Bincode<Record>>(&r)),
        1 => (record(), any::<Index>(), any::<u8>(), 0u8..3)
            .prop_map(|(r, at, b, how)| damage(encode::<Bincode<Record>>(&r), at, b, how)),
        1 => arbitrary_bytes(),
    ]
}

/// What a typed read of the stored entry `(k, v)` must give: the decoded key and value, or a
/// decode error naming the part that does not decode (the key first).
fn expected_read(k: &[u8], v: &[u8]) -> Result<(EventKey, Record), Part> {
    let key = EventKey::decode(k).map_err(|_| Part::Key)?;
    let value = Bincode::<Record>::decode(v).map_err(|_| Part::Value)?;
    Ok((key, value))
}

fn same_read(got: Result<(EventKey, Record), Error>, expected: &Result<(EventKey, Record), Part>) {
    match (got, expected) {
        // Compared by their encodings: a damaged or arbitrary value may decode to a NaN,
        // which is not equal to itself.
        (Ok(got), Ok(expected)) => {
            assert_eq!(got.0, expected.0);
            assert_eq!(
                encode::<Bincode<Record>>(&got.1),
                encode::<Bincode<Record>>(&expected.1),
                "{got:?} != {expected:?}"
            );
        }
        (
            Err(Error::Decode {
                table: "records",
                part,
                ..
            }),
            Err(expected),
        ) => assert_eq!(part, *expected),
        (got, expected) => panic!("read {got:?}, expected {expected:?}"),
    }
}

/// Random key and value bytes stored with `put_bytes`: iteration in both directions yields
/// every entry once, in key order, as its decoded key and value or a decode error naming the
/// table and the part that does not decode; typed `get` of every key that decodes returns the
/// stored value decoded, or a value decode error.
#[test]
fn stored_garbage_gives_decode_errors_naming_the_table() {
    let (_dir, db) = tempdb::open_with::<Fuzz>(Options::new().max_size(1 << 30));
    // Seeded like the properties: the printed seed replays these entries too.
    let mut runner = TestRunner::new(props::config("fuzz_codecs", 1024));
    let entries = vec((stored_key(), stored_value()), 64);
    let (mut iterated, mut gets, mut values_read, mut entries_stored) = (0u64, 0u64, 0u64, 0u64);
    for _ in 0..16 {
        let batch = entries.new_tree(&mut runner).unwrap().current();
        let mut tx = db.write().unwrap();
        tx.clear::<Records>().unwrap();
        for (k, v) in &batch {
            tx.put_bytes::<Records>(k, v).unwrap();
        }
        tx.commit().unwrap();
        // The stored entries, in key order; a repeated key keeps its last value.
        let stored: BTreeMap<&[u8], &[u8]> = batch.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        let expected: Vec<_> = stored.iter().map(|(k, v)| expected_read(k, v)).collect();
        entries_stored += stored.len() as u64;
        let tx = db.read().unwrap();
        let forward: Vec<_> = tx.iter::<Records>().collect();
        let mut backward: Vec<_> = tx.iter::<Records>().rev().collect();
        backward.reverse();
        for reads in [forward, backward] {
            assert_eq!(reads.len(), expected.len(), "every entry once");
            for (got, expected) in reads.into_iter().zip(&expected) {
                same_read(got, expected);
                iterated += 1;
            }
        }
        for ((k, _), expected) in stored.iter().zip(&expected) {
            let Ok(key) = EventKey::decode(k) else {
                continue;
            };
            let got = tx
                .get::<Records>(&key)
                .map(|v| (key.clone(), v.expect("stored")));
            same_read(got, expected);
            gets += 1;
            values_read += u64::from(expected.is_ok());
        }
    }
    eprintln!(
        "stored garbage: {entries_stored} entries, {iterated} iterated reads, {gets} typed gets \
         ({values_read} valid values)"
    );
    assert_eq!(iterated, 2 * entries_stored);
    // Most keys are valid encodings: the typed `get` branch runs for most entries.
    assert!(
        gets >= entries_stored / 2,
        "{gets} gets of {entries_stored} entries"
    );
    assert!(
        values_read >= entries_stored / 4,
        "{values_read} values read"
    );
}

/// Failing cases go to `tests/proptest-regressions/`, which is in the repository (with a
/// README saying to commit what proptest adds there), not to proptest's default for a file
/// outside `src/` (a `fuzz_codecs.proptest-regressions` file beside this one).
#[test]
fn failing_cases_are_saved_in_the_committed_regressions_directory() {
    let saved = props::config("fuzz_codecs", 1024)
        .failure_persistence
        .expect("failure persistence is on");
    let expected: Box<dyn proptest::test_runner::FailurePersistence> = Box::new(
        FileFailurePersistence::Direct(props::regressions("fuzz_codecs")),
    );
    assert!(saved == expected, "{saved:?}");
    let dir = std::path::Path::new(props::regressions("fuzz_codecs"))
        .parent()
        .unwrap();
    assert!(
        dir.join("README.md").is_file(),
        "{} is in the repository",
        dir.display()
    );
}
