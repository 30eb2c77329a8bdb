//! The schema-less key codec agrees with the typed one, for every key kind.
//!
//! For each key type `K` and arbitrary keys `k`: the shape taken from `K::DESCRIPTOR` renders as
//! the descriptor and parses back from it; encoding `k` through the shape gives exactly the bytes
//! the typed codec writes (as a whole key and as a non-final part); decoding the typed bytes
//! through the shape gives back `k`; and on arbitrary bytes both decoders accept and reject the
//! same inputs. Native-endian `integer_key` keys are checked through a real `integer_key` table's
//! stored form.

use proptest::collection::vec;
use proptest::prelude::*;
use tabula::untyped::{DynKey, KeyShape};
use tabula::{AsKey, Key, KeyBuf, Table};

/// A typed key as the schema-less codec holds it.
trait ToDyn {
    fn to_dyn(&self) -> DynKey;
}

macro_rules! unsigned {
    ($($t:ty)*) => {$(impl ToDyn for $t {
        fn to_dyn(&self) -> DynKey { DynKey::Unsigned(u128::from(*self)) }
    })*};
}
macro_rules! signed {
    ($($t:ty)*) => {$(impl ToDyn for $t {
        fn to_dyn(&self) -> DynKey { DynKey::Signed(i128::from(*self)) }
    })*};
}
unsigned!(u8 u16 u32 u64 u128);
signed!(i8 i16 i32 i64 i128);

impl ToDyn for bool {
    fn to_dyn(&self) -> DynKey {
        DynKey::Bool(*self)
    }
}
impl ToDyn for char {
    fn to_dyn(&self) -> DynKey {
        DynKey::Char(*self)
    }
}
impl ToDyn for () {
    fn to_dyn(&self) -> DynKey {
        DynKey::Unit
    }
}
impl<const N: usize> ToDyn for [u8; N] {
    fn to_dyn(&self) -> DynKey {
        DynKey::Bytes(self.to_vec())
    }
}
impl ToDyn for Vec<u8> {
    fn to_dyn(&self) -> DynKey {
        DynKey::Bytes(self.clone())
    }
}
impl ToDyn for String {
    fn to_dyn(&self) -> DynKey {
        DynKey::Str(self.clone())
    }
}
impl<T: ToDyn> ToDyn for Option<T> {
    fn to_dyn(&self) -> DynKey {
        DynKey::Option(self.as_ref().map(|k| Box::new(k.to_dyn())))
    }
}
macro_rules! tuple {
    ($(($($T:ident $i:tt),+))*) => {$(impl<$($T: ToDyn),+> ToDyn for ($($T,)+) {
        fn to_dyn(&self) -> DynKey { DynKey::Tuple(vec![$(self.$i.to_dyn()),+]) }
    })*};
}
tuple! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
}

#[derive(tabula::Key, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct SlotKey {
    account: [u8; 4],
    slot: Option<i32>,
    label: String,
}

impl ToDyn for SlotKey {
    fn to_dyn(&self) -> DynKey {
        DynKey::Tuple(vec![
            self.account.to_dyn(),
            self.slot.to_dyn(),
            self.label.to_dyn(),
        ])
    }
}

fn part<K: Key>(key: &K, last: bool) -> Vec<u8> {
    let mut out = KeyBuf::new();
    AsKey::<K>::encode_part(key, &mut out, last);
    out.as_slice().to_vec()
}

fn agree<K: Key + ToDyn + std::fmt::Debug>(k: &K, noise: &[u8]) -> Result<(), TestCaseError> {
    let shape = KeyShape::of(&K::DESCRIPTOR).expect("a key descriptor has a shape");
    let rendered = K::DESCRIPTOR.to_string();
    prop_assert_eq!(shape.to_string(), rendered.clone());
    prop_assert_eq!(&KeyShape::parse(&rendered).expect("parses"), &shape);
    prop_assert_eq!(shape.fixed_size(), K::FIXED_SIZE);

    let d = k.to_dyn();
    let typed = AsKey::<K>::encode(k).as_ref().to_vec();
    prop_assert_eq!(
        &shape.encode(&d).expect("encodes"),
        &typed,
        "whole key {:?}",
        k
    );
    prop_assert_eq!(&shape.decode(&typed).expect("decodes"), &d);
    for last in [false, true] {
        let mut out = KeyBuf::new();
        shape.encode_part(&d, &mut out, last).expect("encodes");
        prop_assert_eq!(out.as_slice(), &part(k, last)[..], "part, last = {}", last);
    }

    // Arbitrary bytes: the decoders accept and reject the same inputs, and agree on what they
    // accept, as a whole key and as a non-final part.
    let typed = K::decode(noise);
    let dynamic = shape.decode(noise);
    prop_assert_eq!(
        typed.is_ok(),
        dynamic.is_ok(),
        "{:?} vs {:?}",
        typed,
        dynamic
    );
    if let (Ok(t), Ok(d)) = (typed, dynamic) {
        prop_assert_eq!(t.to_dyn(), d);
    }
    let (mut a, mut b) = (noise, noise);
    let typed = K::decode_part(&mut a, false);
    let dynamic = shape.decode_part(&mut b, false);
    prop_assert_eq!(typed.is_ok(), dynamic.is_ok());
    if let (Ok(t), Ok(d)) = (typed, dynamic) {
        prop_assert_eq!(t.to_dyn(), d);
        prop_assert_eq!(a.len(), b.len(), "consumed different lengths");
    }
    Ok(())
}

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![Just(0u8), Just(1), Just(0xff), any::<u8>()]
}

fn noise() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![vec(byte(), 0..24), vec(any::<u8>(), 0..24)]
}

fn text() -> impl Strategy<Value = String> {
    vec(prop_oneof![Just('\0'), Just('a'), any::<char>()], 0..5).prop_map(String::from_iter)
}

macro_rules! kinds {
    ($($name:ident: $ty:ty = $strategy:expr;)+) => {$(
        proptest! {
            #[test]
            fn $name(k in $strategy, noise in noise()) {
                agree::<$ty>(&k, &noise)?;
            }
        }
    )+};
}

kinds! {
    unsigned_8: u8 = any::<u8>();
    unsigned_16: u16 = any::<u16>();
    unsigned_32: u32 = any::<u32>();
    unsigned_64: u64 = any::<u64>();
    unsigned_128: u128 = any::<u128>();
    signed_8: i8 = any::<i8>();
    signed_16: i16 = any::<i16>();
    signed_32: i32 = any::<i32>();
    signed_64: i64 = any::<i64>();
    signed_128: i128 = any::<i128>();
    boolean: bool = any::<bool>();
    character: char = any::<char>();
    unit: () = Just(());
    array: [u8; 5] = any::<[u8; 5]>();
    bytes: Vec<u8> = vec(byte(), 0..8);
    string: String = text();
    option: Option<u16> = any::<Option<u16>>();
    option_of_string: Option<String> = proptest::option::of(text());
    tuple_1: (String,) = (text(),);
    tuple_2: (String, u64) = (text(), any::<u64>());
    tuple_3: (Vec<u8>, Option<String>, i16) = (vec(byte(), 0..4), proptest::option::of(text()), any::<i16>());
    tuple_6: (u8, bool, char, String, [u8; 2], Option<i64>) =
        (any::<u8>(), any::<bool>(), any::<char>(), text(), any::<[u8; 2]>(), any::<Option<i64>>());
    nested: ((String, u8), Option<(bool, String)>) =
        ((text(), any::<u8>()), proptest::option::of((any::<bool>(), text())));
    derived_struct: SlotKey = (any::<[u8; 4]>(), any::<Option<i32>>(), text())
        .prop_map(|(account, slot, label)| SlotKey { account, slot, label });
}

#[derive(Table)]
#[table(key = u64, value = (), integer_key)]
struct Wide;

#[derive(Table)]
#[table(key = u32, value = (), integer_key)]
struct Narrow;

fn native<T: Table>(k: &T::Key) -> Result<(), TestCaseError>
where
    T::Key: ToDyn,
{
    let descriptor = tabula::TableInfo::of::<T>().key;
    let shape = KeyShape::parse(&descriptor.to_string()).expect("parses");
    prop_assert_eq!(&shape, &KeyShape::of(&descriptor).expect("a key"));
    let stored = tabula_core::startup::encode_stored_key::<T>(k);
    prop_assert_eq!(&shape.encode(&k.to_dyn()).expect("encodes"), &stored);
    prop_assert_eq!(shape.decode(&stored).expect("decodes"), k.to_dyn());
    Ok(())
}

proptest! {
    #[test]
    fn native_endian_integer_keys(wide in any::<u64>(), narrow in any::<u32>()) {
        native::<Wide>(&wide)?;
        native::<Narrow>(&narrow)?;
    }
}
