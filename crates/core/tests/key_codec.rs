//! Property tests for the order-preserving key codecs.
//!
//! For every key type: decoding inverts encoding, and encoded bytes sort as the values do — as a
//! whole key and as a non-final part of a composite key, whatever bytes follow the part. Decoding
//! arbitrary bytes never panics, and whatever it accepts re-encodes to the same bytes.

use std::fmt::Debug;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use tabula_core::{AsKey, AsPrefix, Key, KeyBuf};

// ---------------------------------------------------------------------------------------------
// Encoding helpers

fn whole<K: Key>(key: &K) -> Vec<u8> {
    AsKey::<K>::encode(key).as_ref().to_vec()
}

fn part<K: Key>(key: &K, last: bool) -> Vec<u8> {
    let mut out = KeyBuf::new();
    AsKey::<K>::encode_part(key, &mut out, last);
    out.as_slice().to_vec()
}

fn decoded<K: Key>(result: Result<K, tabula_core::DecodeError>) -> Result<K, TestCaseError> {
    result.map_err(|e| TestCaseError::fail(format!("decode failed: {e}")))
}

// ---------------------------------------------------------------------------------------------
// Laws

/// `decode(encode(k)) == k` for the whole key and for a non-final part followed by `suffix`,
/// which must be left untouched (the part is self-delimiting).
fn check_roundtrip<K: Key + Debug>(key: &K, suffix: &[u8]) -> Result<(), TestCaseError> {
    let bytes = whole(key);
    prop_assert_eq!(
        &bytes,
        &part(key, true),
        "encode() differs from encode_part(.., true)"
    );
    prop_assert_eq!(&decoded(K::decode(&bytes))?, key);

    let mut bytes = part(key, false);
    if let Some(size) = K::FIXED_SIZE {
        prop_assert_eq!(whole(key).len(), size, "whole key is not FIXED_SIZE long");
        prop_assert_eq!(bytes.len(), size, "non-final part is not FIXED_SIZE long");
    }
    bytes.extend_from_slice(suffix);
    let mut input = &bytes[..];
    prop_assert_eq!(&decoded(K::decode_part(&mut input, false))?, key);
    prop_assert_eq!(input, suffix, "non-final part did not stop at its end");
    Ok(())
}

/// Encoded bytes compare as the keys do: whole keys, and non-final parts followed by arbitrary
/// bytes (what the next parts of a composite key would be).
fn check_order<K: Key + Debug>(
    a: &K,
    b: &K,
    after_a: &[u8],
    after_b: &[u8],
) -> Result<(), TestCaseError> {
    let expected = a.cmp(b);
    prop_assert_eq!(whole(a).cmp(&whole(b)), expected, "whole keys");
    let (mut pa, mut pb) = (part(a, false), part(b, false));
    prop_assert_eq!(pa.cmp(&pb), expected, "non-final parts");
    pa.extend_from_slice(after_a);
    pb.extend_from_slice(after_b);
    prop_assert_eq!(
        pa.cmp(&pb),
        expected.then(after_a.cmp(after_b)),
        "non-final parts followed by more bytes"
    );
    Ok(())
}

/// Decoding `bytes` returns `Ok` or `Err` without panicking, as a whole key and as a non-final
/// part; what it accepts is canonical: it re-encodes to exactly the bytes consumed.
fn check_decode_total<K: Key + Debug>(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(key) = K::decode(bytes) {
        prop_assert_eq!(
            whole(&key),
            bytes,
            "accepted a non-canonical whole key: {:?}",
            key
        );
    }
    let mut input = bytes;
    if let Ok(key) = K::decode_part(&mut input, false) {
        let consumed = &bytes[..bytes.len() - input.len()];
        prop_assert_eq!(
            part(&key, false),
            consumed,
            "accepted a non-canonical part: {:?}",
            key
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Strategies: small alphabets so that equal values, shared prefixes and zero bytes are common

/// Integers with the extremes and the values around zero well represented.
macro_rules! int {
    ($t:ty) => {
        prop_oneof![
            4 => any::<$t>(),
            1 => Just(<$t>::MIN),
            1 => Just(<$t>::MAX),
            2 => (-2i8..=2).prop_map(|x| x as $t),
        ]
    };
}

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![Just(0x00), Just(0x01), Just(0xFE), Just(0xFF), any::<u8>()]
}

fn blob() -> impl Strategy<Value = Vec<u8>> {
    vec(byte(), 0..6)
}

fn text() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        3 => Just('\0'),
        3 => Just('a'),
        2 => Just('\u{1}'),
        1 => Just('\u{FF}'),
        1 => Just('\u{10FFFF}'),
        2 => any::<char>(),
    ];
    vec(ch, 0..5).prop_map(String::from_iter)
}

fn chr() -> impl Strategy<Value = char> {
    prop_oneof![
        Just('\0'),
        Just('a'),
        Just('b'),
        Just(char::MAX),
        any::<char>()
    ]
}

/// Bytes a composite key might have after a part.
fn after() -> impl Strategy<Value = Vec<u8>> {
    vec(byte(), 0..3)
}

/// Arbitrary input for the decoders: uniform bytes, and bytes rich in `0x00`/`0xFF`.
fn arbitrary_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![vec(any::<u8>(), 0..64), vec(byte(), 0..64)]
}

// ---------------------------------------------------------------------------------------------
// The laws for every key type

/// For each `name: Type = strategy;`, a module `name` with `roundtrip` and `order` properties.
/// A quarter of the `order` pairs are equal keys.
macro_rules! key_laws {
    ($($name:ident: $ty:ty = $strategy:expr;)+) => {$(
        mod $name {
            use super::*;

            fn key() -> impl Strategy<Value = $ty> {
                $strategy
            }

            fn pair() -> impl Strategy<Value = ($ty, $ty)> {
                prop_oneof![
                    3 => (key(), key()),
                    1 => key().prop_map(|k| (k.clone(), k)),
                ]
            }

            proptest! {
                #[test]
                fn roundtrip(k in key(), suffix in after()) {
                    check_roundtrip::<$ty>(&k, &suffix)?;
                }

                #[test]
                fn order((a, b) in pair(), after_a in after(), after_b in after()) {
                    check_order::<$ty>(&a, &b, &after_a, &after_b)?;
                }
            }
        }
    )+};
}

key_laws! {
    u8_: u8 = int!(u8);
    u16_: u16 = int!(u16);
    u32_: u32 = int!(u32);
    u64_: u64 = int!(u64);
    u128_: u128 = int!(u128);
    i8_: i8 = int!(i8);
    i16_: i16 = int!(i16);
    i32_: i32 = int!(i32);
    i64_: i64 = int!(i64);
    i128_: i128 = int!(i128);
    bool_: bool = any::<bool>();
    char_: char = chr();
    unit: () = Just(());
    array_4: [u8; 4] = prop::array::uniform4(byte());
    array_32: [u8; 32] = any::<[u8; 32]>();
    bytes: Vec<u8> = blob();
    string: String = text();
    option_u64: Option<u64> = prop::option::of(int!(u64));
    option_string: Option<String> = prop::option::of(text());
    option_option: Option<Option<String>> = prop::option::of(prop::option::of(text()));
    tuple_1: (String,) = text().prop_map(|s| (s,));
    u64_string: (u64, String) = (0u64..3, text());
    string_u64: (String, u64) = (text(), int!(u64));
    string_string_u8: (String, String, u8) = (text(), text(), int!(u8));
    bytes_option_i32: (Vec<u8>, Option<String>, i32) =
        (blob(), prop::option::of(text()), int!(i32));
    bool_char_i64_array: (bool, char, i64, [u8; 2]) =
        (any::<bool>(), chr(), -1i64..=1, prop::array::uniform2(byte()));
    tuple_5: (u8, String, Option<u16>, bool, Vec<u8>) =
        (0u8..2, text(), prop::option::of(0u16..2), any::<bool>(), blob());
    tuple_6: (i8, (), char, String, [u8; 3], Option<String>) = (
        -1i8..=0,
        Just(()),
        chr(),
        text(),
        prop::array::uniform3(0u8..2),
        prop::option::of(text()),
    );
    nested: ((String, u8), Option<Vec<u8>>) = ((text(), 0u8..2), prop::option::of(blob()));
}

// ---------------------------------------------------------------------------------------------
// Decoding is total and canonical

/// For each `name: Type = strategy;`, a module `name` decoding arbitrary bytes, and valid
/// encodings with one byte changed, inserted or cut off.
macro_rules! decode_total {
    ($($name:ident: $ty:ty = $strategy:expr;)+) => {$(
        mod $name {
            use super::*;

            proptest! {
                #[test]
                fn arbitrary(bytes in arbitrary_bytes()) {
                    check_decode_total::<$ty>(&bytes)?;
                }

                #[test]
                fn damaged(k in $strategy, at in any::<Index>(), b in byte(), how in 0u8..3) {
                    let mut bytes = whole(&k);
                    bytes.extend_from_slice(&part(&k, false));
                    let i = at.index(bytes.len() + 1);
                    match how {
                        0 => bytes.truncate(i),
                        1 => bytes.insert(i, b),
                        _ => if let Some(x) = bytes.get_mut(i) { *x = b },
                    }
                    check_decode_total::<$ty>(&bytes)?;
                }
            }
        }
    )+};
}

mod decode {
    use super::*;

    decode_total! {
        u64_: u64 = int!(u64);
        i16_: i16 = int!(i16);
        bool_: bool = any::<bool>();
        char_: char = chr();
        array_4: [u8; 4] = prop::array::uniform4(byte());
        bytes: Vec<u8> = blob();
        string: String = text();
        option_string: Option<String> = prop::option::of(text());
        string_u64: (String, u64) = (text(), int!(u64));
        string_string_u8: (String, String, u8) = (text(), text(), int!(u8));
        bytes_option_i32: (Vec<u8>, Option<String>, i32) =
            (blob(), prop::option::of(text()), int!(i32));
        bool_char_i64_array: (bool, char, i64, [u8; 2]) =
            (any::<bool>(), chr(), int!(i64), prop::array::uniform2(byte()));
    }
}

// ---------------------------------------------------------------------------------------------
// Borrowed forms encode exactly like the owned keys

/// Encodes `key`, a borrowed form, as a key of type `K`.
fn part_as<K: Key>(key: &(impl AsKey<K> + ?Sized), last: bool) -> Vec<u8> {
    let mut out = KeyBuf::new();
    key.encode_part(&mut out, last);
    out.as_slice().to_vec()
}

fn whole_as<K: Key>(key: &(impl AsKey<K> + ?Sized)) -> Vec<u8> {
    key.encode().as_ref().to_vec()
}

proptest! {
    #[test]
    fn borrowed_forms_match_owned(
        s in text(),
        b in blob(),
        n in int!(u64),
        o in prop::option::of(text()),
    ) {
        prop_assert_eq!(whole_as::<String>(s.as_str()), whole(&s));
        prop_assert_eq!(whole_as::<Vec<u8>>(&b[..]), whole(&b));
        prop_assert_eq!(whole_as::<(String, u64)>(&(s.as_str(), n)), whole(&(s.clone(), n)));
        prop_assert_eq!(whole_as::<Option<String>>(&o.as_deref()), whole(&o));
        for last in [true, false] {
            prop_assert_eq!(part_as::<String>(s.as_str(), last), part(&s, last));
            prop_assert_eq!(part_as::<Vec<u8>>(&b[..], last), part(&b, last));
            prop_assert_eq!(
                part_as::<(String, u64)>(&(s.as_str(), n), last),
                part(&(s.clone(), n), last)
            );
            prop_assert_eq!(
                part_as::<(Vec<u8>, Option<String>)>(&(&b[..], o.as_deref()), last),
                part(&(b.clone(), o.clone()), last)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Prefix scans: a key's bytes start with a prefix's non-final encoding exactly when the key's
// leading parts equal the prefix

/// Whether `key` falls in a prefix scan for `prefix`.
fn in_scan<K: Key>(key: &K, prefix: &impl AsPrefix<K>) -> bool {
    let mut front = KeyBuf::new();
    prefix.encode_prefix(&mut front);
    whole(key).starts_with(front.as_slice())
}

proptest! {
    #[test]
    fn prefix_scans_select_exactly_the_leading_parts(
        key in (text(), 0u64..3, prop::option::of(text()), blob()),
        other in (text(), 0u64..3, prop::option::of(text())),
        same in any::<bool>(),
    ) {
        // Half the time the prefix is taken from the key itself.
        let p = if same { (key.0.clone(), key.1, key.2.clone()) } else { other };
        prop_assert_eq!(in_scan(&key, &p.0), key.0 == p.0);
        prop_assert_eq!(in_scan(&key, &(p.0.clone(), p.1)), (&key.0, key.1) == (&p.0, p.1));
        prop_assert_eq!(
            in_scan(&key, &(p.0.clone(), p.1, p.2.clone())),
            (&key.0, key.1, &key.2) == (&p.0, p.1, &p.2)
        );
    }
}
