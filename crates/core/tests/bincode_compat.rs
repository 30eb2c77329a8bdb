//! Tabula's own encoder of bincode 2's format agrees with the `bincode` 2 crate (a dev-dependency
//! only, the reference): for arbitrary values of a type that touches every part of serde's data
//! model, `Bincode<T>::encode` writes exactly the bytes `bincode::serde::encode_to_vec` writes
//! with `config::standard()`, Tabula's decoder reads what bincode wrote, and bincode reads what
//! Tabula wrote. Integers are drawn at the varint's boundaries (250/251, 2^16, 2^32, 2^64) and
//! zigzag's; floats from arbitrary bits (every NaN payload); strings from all of Unicode. Where
//! bincode refuses to encode (a serde custom error, a sequence or map of unknown length), so does
//! Tabula, and through a table the error names it.
//!
//! `PROPTEST_CASES` sets the case count (default here: 512 per property). Each property prints
//! its RNG seed; `TABULA_SEED=<seed>` replays a run. A failing case is saved in
//! `tests/proptest-regressions/bincode_compat.txt` and replayed first by every run.

#[path = "../../../tests/support/props.rs"]
mod props;
#[path = "../../../tests/support/random.rs"]
mod random;
#[path = "../../../tests/support/tempdb.rs"]
mod tempdb;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use proptest::collection::{btree_map, btree_set, hash_map, vec};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::ValueTree;
use serde::de::DeserializeOwned;
use serde::ser::{Error as _, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use tabula::{Error, Options, Schema, Table};
use tabula_core::{Bincode, Value};

const CONFIG: bincode::config::Configuration = bincode::config::standard();

// ---- the types ----

/// An `f32` compared by its bits, so that a NaN equals itself and its payload is checked.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
struct F32(f32);

impl PartialEq for F32 {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

/// An `f64` compared by its bits.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
struct F64(f64);

impl PartialEq for F64 {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

/// Every kind of enum variant, nested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Variant {
    Unit,
    Newtype(i64),
    Tuple(u16, String, char),
    Struct {
        id: u128,
        name: Option<String>,
        weight: F64,
    },
    Nested(Vec<Variant>, Box<Option<Variant>>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct UnitStruct;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Newtype(u64);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pair(i32, F32);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Inner {
    level: u8,
    label: String,
    children: Vec<Inner>,
}

/// Serde's whole data model in one struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Rich {
    u8_: u8,
    u16_: u16,
    u32_: u32,
    u64_: u64,
    u128_: u128,
    usize_: usize,
    i8_: i8,
    i16_: i16,
    i32_: i32,
    i64_: i64,
    i128_: i128,
    isize_: isize,
    f32_: F32,
    f64_: F64,
    flag: bool,
    ch: char,
    text: String,
    #[serde(with = "as_bytes")]
    blob: Vec<u8>,
    seq_of_u8: Vec<u8>,
    variants: Vec<Variant>,
    hash: HashMap<String, Vec<i32>>,
    tree: BTreeMap<u64, Option<i16>>,
    set: BTreeSet<char>,
    opt: Option<Option<u32>>,
    tuple: (u8, i64, String, ()),
    unit: (),
    unit_struct: UnitStruct,
    newtype: Newtype,
    pair: Pair,
    array: [u32; 4],
    bytes_array: [u8; 5],
    nested: Option<Box<Inner>>,
    ip: IpAddr,
    duration: Duration,
}

/// `Vec<u8>` as a serde byte string (what `serde_bytes` does): `serialize_bytes` and
/// `deserialize_byte_buf` rather than a sequence of `u8`.
mod as_bytes {
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

/// An enum variant of any index and kind, serialized by hand: variant indices past 250 (the
/// varint's one-byte limit) and up to `u32::MAX`, which a derived enum of a few variants never
/// reaches. Encoding only (no type reads such an index back).
#[derive(Debug, Clone)]
struct AnyVariant {
    index: u32,
    kind: u8,
    payload: i64,
}

impl Serialize for AnyVariant {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeStructVariant, SerializeTupleVariant};
        match self.kind % 4 {
            0 => s.serialize_unit_variant("AnyVariant", self.index, "V"),
            1 => s.serialize_newtype_variant("AnyVariant", self.index, "V", &self.payload),
            2 => {
                let mut t = s.serialize_tuple_variant("AnyVariant", self.index, "V", 2)?;
                t.serialize_field(&self.payload)?;
                t.serialize_field(&(self.payload as u8))?;
                t.end()
            }
            _ => {
                let mut t = s.serialize_struct_variant("AnyVariant", self.index, "V", 1)?;
                t.serialize_field("payload", &self.payload)?;
                t.end()
            }
        }
    }
}

// ---- the strategies ----

/// Unsigned values at the varint's boundaries: the last one-byte value (250), each marker's
/// first and last value, and the types' extremes.
const UNSIGNED_EDGES: [u128; 18] = [
    0,
    1,
    249,
    250,
    251,
    252,
    255,
    256,
    65_535,
    65_536,
    u32::MAX as u128 - 1,
    u32::MAX as u128,
    1 << 32,
    u64::MAX as u128 - 1,
    u64::MAX as u128,
    1 << 64,
    u128::MAX - 1,
    u128::MAX,
];

/// Signed values whose zigzag lands on those boundaries (125 → 250, -126 → 251, -32_768 →
/// 65_535, 32_768 → 65_536, ...), and the types' extremes.
const SIGNED_EDGES: [i128; 22] = [
    0,
    -1,
    1,
    125,
    -125,
    -126,
    126,
    127,
    -128,
    32_767,
    -32_768,
    32_768,
    i32::MAX as i128,
    i32::MIN as i128,
    1 << 31,
    -(1 << 31) - 1,
    i64::MAX as i128,
    i64::MIN as i128,
    1 << 63,
    -(1 << 63) - 1,
    i128::MAX,
    i128::MIN,
];

fn unsigned<T>() -> impl Strategy<Value = T>
where
    T: Arbitrary + TryFrom<u128> + Clone + Debug + 'static,
{
    let edges: Vec<T> = UNSIGNED_EDGES
        .iter()
        .filter_map(|&e| T::try_from(e).ok())
        .collect();
    let small: Vec<T> = (0u128..300).filter_map(|e| T::try_from(e).ok()).collect();
    prop_oneof![2 => any::<T>(), 2 => select(edges), 1 => select(small)]
}

fn signed<T>() -> impl Strategy<Value = T>
where
    T: Arbitrary + TryFrom<i128> + Clone + Debug + 'static,
{
    let edges: Vec<T> = SIGNED_EDGES
        .iter()
        .filter_map(|&e| T::try_from(e).ok())
        .collect();
    let small: Vec<T> = (-300i128..300)
        .filter_map(|e| T::try_from(e).ok())
        .collect();
    prop_oneof![2 => any::<T>(), 2 => select(edges), 1 => select(small)]
}

/// Any bits: NaNs with every payload, infinities, subnormals, -0.0.
fn f32_bits() -> impl Strategy<Value = F32> {
    prop_oneof![
        any::<u32>().prop_map(|b| F32(f32::from_bits(b))),
        select(vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            -0.0,
            f32::MIN_POSITIVE
        ])
        .prop_map(F32),
    ]
}

fn f64_bits() -> impl Strategy<Value = F64> {
    prop_oneof![
        any::<u64>().prop_map(|b| F64(f64::from_bits(b))),
        select(vec![
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            -0.0,
            f64::MIN_POSITIVE
        ])
        .prop_map(F64),
    ]
}

/// Text from all of Unicode (1- to 4-byte characters), sometimes longer than 250 bytes so its
/// length needs the varint's `u16` form.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "\\PC{0,12}",
        1 => "[a-zé€😀\u{10FFFF}\u{0}]{60,90}",
        1 => any::<String>(),
    ]
}

fn variant() -> impl Strategy<Value = Variant> {
    let leaf = prop_oneof![
        Just(Variant::Unit),
        signed::<i64>().prop_map(Variant::Newtype),
        (unsigned::<u16>(), text(), any::<char>()).prop_map(|(a, b, c)| Variant::Tuple(a, b, c)),
        (unsigned::<u128>(), proptest::option::of(text()), f64_bits())
            .prop_map(|(id, name, weight)| Variant::Struct { id, name, weight }),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        (vec(inner.clone(), 0..3), proptest::option::of(inner))
            .prop_map(|(list, one)| Variant::Nested(list, Box::new(one)))
    })
}

fn inner() -> impl Strategy<Value = Inner> {
    let leaf = (any::<u8>(), text()).prop_map(|(level, label)| Inner {
        level,
        label,
        children: Vec::new(),
    });
    leaf.prop_recursive(3, 10, 3, |inner| {
        (any::<u8>(), text(), vec(inner, 0..3)).prop_map(|(level, label, children)| Inner {
            level,
            label,
            children,
        })
    })
}

fn ip() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        any::<u32>().prop_map(|a| IpAddr::V4(Ipv4Addr::from(a))),
        any::<u128>().prop_map(|a| IpAddr::V6(Ipv6Addr::from(a))),
    ]
}

prop_compose! {
    fn integers()(
        u8_ in unsigned::<u8>(), u16_ in unsigned::<u16>(), u32_ in unsigned::<u32>(),
        u64_ in unsigned::<u64>(), u128_ in unsigned::<u128>(), usize_ in unsigned::<usize>(),
        i8_ in signed::<i8>(), i16_ in signed::<i16>(), i32_ in signed::<i32>(),
        i64_ in signed::<i64>(), i128_ in signed::<i128>(), isize_ in signed::<isize>(),
    ) -> (u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize) {
        (u8_, u16_, u32_, u64_, u128_, usize_, i8_, i16_, i32_, i64_, i128_, isize_)
    }
}

prop_compose! {
    fn rich()(
        ints in integers(),
        f32_ in f32_bits(), f64_ in f64_bits(), flag in any::<bool>(), ch in any::<char>(),
        text in text(),
        blob in prop_oneof![vec(any::<u8>(), 0..8), vec(any::<u8>(), 245..260)],
        seq_of_u8 in prop_oneof![vec(any::<u8>(), 0..8), vec(any::<u8>(), 245..300)],
        variants in vec(variant(), 0..4),
        hash in hash_map(text(), vec(signed::<i32>(), 0..3), 0..4),
        tree in btree_map(unsigned::<u64>(), proptest::option::of(signed::<i16>()), 0..4),
        set in btree_set(any::<char>(), 0..4),
        opt in proptest::option::of(proptest::option::of(unsigned::<u32>())),
        tuple in (any::<u8>(), signed::<i64>(), text()),
        newtype in unsigned::<u64>(), pair in (signed::<i32>(), f32_bits()),
        array in any::<[u32; 4]>(), bytes_array in any::<[u8; 5]>(),
        nested in proptest::option::of(inner()),
        ip in ip(), duration in (any::<u64>(), 0u32..1_000_000_000),
    ) -> Rich {
        let (u8_, u16_, u32_, u64_, u128_, usize_, i8_, i16_, i32_, i64_, i128_, isize_) = ints;
        Rich {
            u8_, u16_, u32_, u64_, u128_, usize_, i8_, i16_, i32_, i64_, i128_, isize_,
            f32_, f64_, flag, ch, text, blob, seq_of_u8, variants, hash, tree, set, opt,
            tuple: (tuple.0, tuple.1, tuple.2, ()),
            unit: (),
            unit_struct: UnitStruct,
            newtype: Newtype(newtype),
            pair: Pair(pair.0, pair.1),
            array, bytes_array,
            nested: nested.map(Box::new),
            ip,
            duration: Duration::new(duration.0, duration.1),
        }
    }
}

// ---- the checks ----

fn tabula_encodes<T: Serialize + DeserializeOwned>(v: &T) -> Vec<u8> {
    let mut scratch = Vec::new();
    Bincode::<T>::encode(v, &mut scratch)
        .expect("Tabula encodes")
        .to_vec()
}

fn bincode_encodes<T: Serialize>(v: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(v, CONFIG).expect("bincode encodes")
}

/// The three agreements for one value: the same bytes; Tabula reads bincode's bytes back to
/// the value; bincode reads Tabula's bytes back to the value, using every byte.
fn agree<T>(v: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let ours = tabula_encodes(v);
    let theirs = bincode_encodes(v);
    prop_assert_eq!(&ours, &theirs, "encodings of {:?}", v);
    let read = Bincode::<T>::decode(&theirs);
    prop_assert_eq!(
        read.as_ref(),
        Ok(v),
        "Tabula reading bincode's {:02x?}",
        theirs
    );
    let (read, used) = bincode::serde::decode_from_slice::<T, _>(&ours, CONFIG)
        .map_err(|e| TestCaseError::fail(format!("bincode cannot read {ours:02x?}: {e}")))?;
    prop_assert_eq!(&read, v, "bincode reading Tabula's {:02x?}", ours);
    prop_assert_eq!(used, ours.len());
    Ok(())
}

proptest! {
    #![proptest_config(props::config("bincode_compat", 512))]

    /// The whole data model at once, nested.
    #[test]
    fn rich_values_agree_with_bincode(v in rich()) {
        agree(&v)?;
    }

    /// Each integer type alone, at the varint's and zigzag's boundaries.
    #[test]
    fn integers_agree_with_bincode(ints in integers()) {
        let (a, b, c, d, e, f, g, h, i, j, k, l) = ints;
        agree(&a)?;
        agree(&b)?;
        agree(&c)?;
        agree(&d)?;
        agree(&e)?;
        agree(&f)?;
        agree(&g)?;
        agree(&h)?;
        agree(&i)?;
        agree(&j)?;
        agree(&k)?;
        agree(&l)?;
    }

    /// Floats by their bits (every NaN payload), chars and strings alone.
    #[test]
    fn scalars_agree_with_bincode(f in f32_bits(), g in f64_bits(), c in any::<char>(), s in text()) {
        agree(&f)?;
        agree(&g)?;
        agree(&c)?;
        agree(&s)?;
        agree(&(c, s.clone(), f, ()))?;
        agree(&Some(s))?;
    }

    /// Top-level collections and enums.
    #[test]
    fn collections_and_enums_agree_with_bincode(
        list in vec(variant(), 0..6),
        map in hash_map(signed::<i64>(), text(), 0..6),
        tree in btree_map(text(), vec(unsigned::<u32>(), 0..4), 0..6),
    ) {
        agree(&list)?;
        agree(&map)?;
        agree(&tree)?;
        for v in &list {
            agree(v)?;
        }
    }

    /// Variant indices beyond what a derived enum reaches, in every variant kind.
    #[test]
    fn variant_indices_agree_with_bincode(
        index in unsigned::<u32>(), kind in any::<u8>(), payload in signed::<i64>(),
    ) {
        let v = AnyVariant { index, kind, payload };
        // Through a wrapper that reads nothing back (no type reads an arbitrary index).
        prop_assert_eq!(tabula_encodes(&Wrapped(&v)), bincode_encodes(&v), "{:?}", v);
    }
}

/// Serializes its content; deserializes to nothing (only the encoding is compared).
struct Wrapped<T>(T);

impl<T: Serialize> Serialize for Wrapped<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T> Deserialize<'de> for Wrapped<T> {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom("encoding-only test type"))
    }
}

// ---- where bincode refuses, Tabula refuses too ----

/// A value whose `Serialize` fails halfway, with a serde custom error.
#[derive(Debug, Deserialize)]
struct Refuses {
    _n: u32,
}

impl Serialize for Refuses {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Refuses", 2)?;
        st.serialize_field("n", &7u32)?;
        Err(S::Error::custom("refused: the second field is not ready"))
    }
}

/// A sequence and a map whose length serde cannot tell in advance (`collect_seq` and
/// `collect_map` over filtered iterators pass `None` to `serialize_seq` / `serialize_map`).
#[derive(Debug, Deserialize)]
enum Unknown {
    Seq(Vec<u8>),
    Map(BTreeMap<u8, u8>),
}

impl Serialize for Unknown {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Unknown::Seq(v) => s.collect_seq(v.iter().filter(|b| **b > 0)),
            Unknown::Map(m) => s.collect_map(m.iter().filter(|(k, _)| **k > 0)),
        }
    }
}

#[test]
fn a_serde_custom_error_is_an_error_for_both() {
    let v = Refuses { _n: 7 };
    assert!(bincode::serde::encode_to_vec(&v, CONFIG).is_err());
    let err = Bincode::<Refuses>::encode(&v, &mut Vec::new()).unwrap_err();
    assert_eq!(
        err.message(),
        "bincode: refused: the second field is not ready"
    );
}

#[test]
fn a_sequence_or_map_of_unknown_length_is_an_error_for_both() {
    for (v, what) in [
        (Unknown::Seq(vec![1, 0, 2]), "sequence"),
        (Unknown::Map(BTreeMap::from([(0, 1), (2, 3)])), "map"),
    ] {
        let theirs = bincode::serde::encode_to_vec(&v, CONFIG).unwrap_err();
        assert!(
            format!("{theirs:?}").contains("SequenceMustHaveLength"),
            "{theirs:?}"
        );
        let ours = Bincode::<Unknown>::encode(&v, &mut Vec::new()).unwrap_err();
        assert!(
            ours.message().contains(&format!(
                "a {what} whose length is not known in advance cannot be encoded"
            )),
            "{ours}"
        );
    }
    // With a length (an unfiltered iterator), both write the same bytes.
    struct Known(Vec<u8>);
    impl Serialize for Known {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter())
        }
    }
    let known = Known((0..=255).collect());
    assert_eq!(tabula_encodes(&Wrapped(&known)), bincode_encodes(&known));
}

/// `collect_str` (a `Display` value written as a string) is a string for both.
#[test]
fn collect_str_writes_a_string_like_bincode() {
    struct Shown(u64, &'static str);
    impl Serialize for Shown {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(&format_args!("{}-{}", self.0, self.1))
        }
    }
    let v = Shown(u64::MAX, "größe 😀");
    let ours = tabula_encodes(&Wrapped(&v));
    assert_eq!(ours, bincode_encodes(&v));
    assert_eq!(
        Bincode::<String>::decode(&ours).unwrap(),
        "18446744073709551615-größe 😀"
    );
}

/// Types whose serde form depends on `is_human_readable` take their compact form, as in
/// bincode: an IPv4 address is its four bytes, not the text "127.0.0.1".
#[test]
fn the_encoder_is_not_human_readable() {
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let ours = tabula_encodes(&ip);
    assert_eq!(ours, [0, 127, 0, 0, 1]);
    assert_eq!(ours, bincode_encodes(&ip));
}

// ---- through a table ----

#[derive(Table)]
#[table(key = u64, value = Unknown)]
struct Unknowns;

#[derive(Table)]
#[table(key = u64, value = Rich)]
struct Riches;

#[derive(Schema)]
struct App(Unknowns, Riches);

/// A value the codec refuses is an `Error::Encode` naming the table, and nothing is stored.
#[test]
fn a_value_of_unknown_length_is_refused_by_put_naming_the_table() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    let err = tx
        .put::<Unknowns>(&1, &Unknown::Seq(vec![1, 2]))
        .unwrap_err();
    let Error::Encode { table, source, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*table, "Unknowns");
    assert!(source.message().contains("length is not known"), "{err}");
    assert!(
        err.to_string()
            .starts_with("table `Unknowns`: cannot encode"),
        "{err}"
    );
    tx.commit().unwrap();
    assert_eq!(db.read().unwrap().len::<Unknowns>().unwrap(), 0);
}

/// What `put` stores is bincode 2's encoding: read back raw, it is the crate's bytes, and a
/// value stored as the crate's bytes reads back through the typed API.
#[test]
fn a_table_stores_bincodes_bytes_and_reads_them() {
    let mut runner = proptest::test_runner::TestRunner::new(props::config("bincode_compat", 512));
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let values: Vec<Rich> = (0..32)
        .map(|_| rich().new_tree(&mut runner).unwrap().current())
        .collect();
    let mut tx = db.write().unwrap();
    for (k, v) in values.iter().enumerate() {
        tx.put::<Riches>(&(k as u64), v).unwrap();
        // The same value again under another key, written as bincode's bytes.
        // (`put_bytes` takes the stored key: a `u64` key is stored big-endian.)
        tx.put_bytes::<Riches>(&(1000 + k as u64).to_be_bytes(), &bincode_encodes(v))
            .unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    for (k, v) in values.iter().enumerate() {
        let stored = tx.get_bytes::<Riches>(&(k as u64)).unwrap().unwrap();
        assert!(
            stored == bincode_encodes(v),
            "key {k}: Tabula stored {stored:02x?}, bincode writes {:02x?}",
            bincode_encodes(v)
        );
        assert_eq!(
            tx.get::<Riches>(&(1000 + k as u64)).unwrap().as_ref(),
            Some(v)
        );
    }
}
