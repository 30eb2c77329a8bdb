//! `Bincode<T>::decode` reads exactly bincode 2's standard format: for arbitrary values it
//! decodes what `bincode::serde::encode_to_vec` wrote, and for arbitrary bytes it accepts and
//! rejects what `bincode::serde::decode_from_slice` does (whole input used), with equal values.
//! A damaged length prefix is an error, never an abort.

use std::collections::BTreeMap;
use std::fmt::Debug;

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tabula_core::{Bincode, Value};

const CONFIG: bincode::config::Configuration = bincode::config::standard();

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Kind {
    Plain,
    Wrapped(u16),
    Pair(i8, char),
    Named { x: f32, tag: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Meters(u32);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Unit;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    a: u64,
    b: i64,
    c: u8,
    d: i8,
    e: u16,
    f: i16,
    g: u32,
    h: i32,
    big: u128,
    neg: i128,
    size: usize,
    flag: bool,
    ch: char,
    text: String,
    blob: Vec<u8>,
    #[serde(with = "serde_bytes_like")]
    bytes: Vec<u8>,
    list: Vec<Kind>,
    map: BTreeMap<String, i32>,
    opt: Option<Box<Record2>>,
    tuple: (u8, String, Meters),
    arr: [u16; 3],
    unit: Unit,
    float: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record2 {
    kind: Kind,
    depth: Option<u32>,
}

/// `Vec<u8>` as a serde byte string (what `serde_bytes` does), to cover `deserialize_bytes`.
mod serde_bytes_like {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
        }
        d.deserialize_byte_buf(V)
    }
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Plain),
        any::<u16>().prop_map(Kind::Wrapped),
        (any::<i8>(), any::<char>()).prop_map(|(a, b)| Kind::Pair(a, b)),
        (-1e6f32..1e6, proptest::option::of(".{0,4}")).prop_map(|(x, tag)| Kind::Named { x, tag }),
    ]
}

fn int<T: Arbitrary + Copy + 'static>(edges: [T; 3]) -> impl Strategy<Value = T> {
    prop_oneof![
        3 => any::<T>(),
        1 => proptest::sample::select(edges.to_vec()),
    ]
}

prop_compose! {
    fn record()(
        a in int([0u64, 250, u64::MAX]), b in int([0i64, -126, i64::MIN]),
        c in any::<u8>(), d in any::<i8>(),
        e in int([250u16, 251, u16::MAX]), f in int([-1i16, 125, i16::MIN]),
        g in int([65535u32, 65536, u32::MAX]), h in int([i32::MAX, -32768, i32::MIN]),
        big in int([u128::MAX, 0, 1 << 64]), neg in int([i128::MIN, -1, i128::MAX]),
        size in any::<usize>(), flag in any::<bool>(), ch in any::<char>(),
        text in ".{0,12}", blob in vec(any::<u8>(), 0..300), bytes in vec(any::<u8>(), 0..8),
        list in vec(kind(), 0..4), map in btree_map(".{0,3}", any::<i32>(), 0..3),
        opt in proptest::option::of((kind(), proptest::option::of(any::<u32>()))),
        tuple in (any::<u8>(), ".{0,3}", any::<u32>()),
        arr in any::<[u16; 3]>(), float in any::<f64>().prop_filter("NaN != NaN", |x| !x.is_nan()),
    ) -> Record {
        Record {
            a, b, c, d, e, f, g, h, big, neg, size, flag, ch, text, blob, bytes, list, map,
            opt: opt.map(|(kind, depth)| Box::new(Record2 { kind, depth })),
            tuple: (tuple.0, tuple.1, Meters(tuple.2)),
            arr, unit: Unit, float,
        }
    }
}

/// What bincode itself makes of `bytes`: the value when it decodes and uses every byte. The
/// limit keeps a damaged length prefix from aborting bincode; valid inputs here stay far below.
fn bincode_reads<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    match bincode::serde::decode_from_slice::<T, _>(bytes, CONFIG.with_limit::<{ 1 << 20 }>()) {
        Ok((v, used)) if used == bytes.len() => Some(v),
        _ => None,
    }
}

fn same_as_bincode<T>(bytes: &[u8]) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let ours = Bincode::<T>::decode(bytes).ok();
    let theirs = bincode_reads::<T>(bytes);
    prop_assert_eq!(ours, theirs, "input {:02x?}", bytes);
    Ok(())
}

fn noise() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        Just(0u8),
        Just(1),
        Just(250),
        Just(251),
        Just(252),
        Just(253),
        Just(254),
        Just(255),
        any::<u8>()
    ];
    prop_oneof![vec(byte, 0..40), vec(any::<u8>(), 0..40)]
}

proptest! {
    #[test]
    fn decodes_what_bincode_encodes(r in record()) {
        let bytes = bincode::serde::encode_to_vec(&r, CONFIG).unwrap();
        prop_assert_eq!(Bincode::<Record>::decode(&bytes).unwrap(), r);
        // Cut short anywhere: an error, as bincode says.
        let cut = bytes.len() / 2;
        prop_assert!(Bincode::<Record>::decode(&bytes[..cut]).is_err());
        prop_assert!(bincode_reads::<Record>(&bytes[..cut]).is_none());
    }

    #[test]
    fn arbitrary_bytes_like_bincode(bytes in noise()) {
        same_as_bincode::<u16>(&bytes)?;
        same_as_bincode::<i32>(&bytes)?;
        same_as_bincode::<u64>(&bytes)?;
        same_as_bincode::<i128>(&bytes)?;
        same_as_bincode::<char>(&bytes)?;
        same_as_bincode::<bool>(&bytes)?;
        same_as_bincode::<String>(&bytes)?;
        same_as_bincode::<Vec<u16>>(&bytes)?;
        same_as_bincode::<Option<(u8, String)>>(&bytes)?;
        same_as_bincode::<Kind>(&bytes)?;
        same_as_bincode::<BTreeMap<u8, bool>>(&bytes)?;
        same_as_bincode::<(u32, Meters, Unit, [u8; 2])>(&bytes)?;
    }

    #[test]
    fn mutated_records_like_bincode(r in record(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = bincode::serde::encode_to_vec(&r, CONFIG).unwrap();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let ours = Bincode::<Record>::decode(&bytes);
        let theirs = bincode_reads::<Record>(&bytes);
        // NaN floats compare unequal, so compare the outcome and the re-encoding.
        prop_assert_eq!(ours.is_ok(), theirs.is_some(), "byte {} set to {}", i, byte);
        if let (Ok(a), Some(b)) = (ours, theirs) {
            prop_assert_eq!(
                bincode::serde::encode_to_vec(&a, CONFIG).unwrap(),
                bincode::serde::encode_to_vec(&b, CONFIG).unwrap()
            );
        }
    }
}

#[test]
fn huge_length_prefixes_are_errors() {
    // 253 = the u64 varint marker, then a length near 2^63, then three bytes of contents.
    let mut bytes = vec![253u8];
    bytes.extend_from_slice(&(u64::MAX >> 1).to_le_bytes());
    bytes.extend_from_slice(b"abc");
    assert!(Bincode::<String>::decode(&bytes).is_err());
    assert!(Bincode::<Vec<u8>>::decode(&bytes).is_err());
    assert!(Bincode::<Vec<u64>>::decode(&bytes).is_err());
    assert!(Bincode::<BTreeMap<u64, u64>>::decode(&bytes).is_err());
}

#[test]
fn deep_recursion_is_an_error_not_a_stack_overflow() {
    #[derive(Debug, Serialize, Deserialize)]
    enum Tree {
        Leaf,
        Node(Box<Tree>),
    }
    // 100,000 nested `Node`s: variant index 1 each.
    let bytes = vec![1u8; 100_000];
    let err = Bincode::<Tree>::decode(&bytes).unwrap_err();
    assert!(err.message().contains("nests deeper"), "{err}");
    // Within the limit it decodes.
    let mut ok = vec![1u8; 100];
    ok.push(0);
    assert!(Bincode::<Tree>::decode(&ok).is_ok());
}
