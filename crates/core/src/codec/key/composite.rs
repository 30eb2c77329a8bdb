//! Composite keys: `Option<T>` and tuples of one to six keys (their prefixes: `prefix.rs`).
//!
//! A composite encodes as the concatenation of its parts. Only the part that ends the whole key
//! is written as last; every other part uses its self-delimiting form, so each part is compared
//! on its own and a longer first part never bleeds into the second: `("a", "bc")` and
//! `("ab", "c")` encode differently and sort as the tuples do.
//!
//! The borrowed forms compose: `(A, B)` is a key of type `(KA, KB)` when `A` is a key of type `KA`
//! and `B` one of type `KB`, so `("alice", 5)` looks up a `(String, u64)` key without allocating
//! a `String`.

use super::{AsKey, Key, KeyBuf, take_array};
use crate::codec::DecodeError;
use crate::schema::Descriptor;

/// Tag byte of `None`; sorts before [`SOME`], as `None < Some(_)`.
pub(crate) const NONE: u8 = 0;
/// Tag byte of `Some`, followed by the value.
pub(crate) const SOME: u8 = 1;

impl<K: Key, A: AsKey<K>> AsKey<Option<K>> for Option<A> {
    type Encoded<'a>
        = KeyBuf
    where
        Self: 'a;

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        let mut out = KeyBuf::new();
        self.encode_part(&mut out, true);
        out
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, last: bool) {
        match self {
            None => out.push(NONE),
            Some(value) => {
                out.push(SOME);
                value.encode_part(out, last);
            }
        }
    }
}

impl<T: Key> Key for Option<T> {
    const DESCRIPTOR: Descriptor = Descriptor::Option(&T::DESCRIPTOR);
    const FIXED_SIZE: Option<usize> = None;

    #[inline]
    fn decode_part(input: &mut &[u8], last: bool) -> Result<Self, DecodeError> {
        match take_array(input, "Option tag")? {
            [NONE] => Ok(None),
            [SOME] => T::decode_part(input, last).map(Some),
            [tag] => Err(DecodeError::new(format!(
                "Option: expected tag 0x00 (None) or 0x01 (Some), found 0x{tag:02x}"
            ))),
        }
    }
}

/// The size of a concatenation of parts: the sum when every part has a fixed size.
const fn fixed_sum(parts: &[Option<usize>]) -> Option<usize> {
    let mut total = 0;
    let mut i = 0;
    while i < parts.len() {
        match parts[i] {
            Some(size) => total += size,
            None => return None,
        }
        i += 1;
    }
    Some(total)
}

/// `AsKey` and `Key` for one tuple arity. Each tuple is written as `(A KA 0, ..; L KL n)`: the
/// leading parts (type, key type, index), then the final part, the only one that may be last.
macro_rules! tuple_key {
    ($( ($($T:ident $K:ident $i:tt),* ; $L:ident $KL:ident $l:tt) )+) => {$(
        impl<$($K: Key, $T: AsKey<$K>,)* $KL: Key, $L: AsKey<$KL>> AsKey<($($K,)* $KL,)>
            for ($($T,)* $L,)
        {
            type Encoded<'a>
                = KeyBuf
            where
                Self: 'a;

            #[inline]
            fn encode(&self) -> Self::Encoded<'_> {
                let mut out = KeyBuf::new();
                self.encode_part(&mut out, true);
                out
            }

            #[inline]
            fn encode_part(&self, out: &mut KeyBuf, last: bool) {
                $(AsKey::<$K>::encode_part(&self.$i, out, false);)*
                AsKey::<$KL>::encode_part(&self.$l, out, last);
            }
        }

        impl<$($T: Key,)* $L: Key> Key for ($($T,)* $L,) {
            const DESCRIPTOR: Descriptor =
                Descriptor::Tuple(&[$(<$T as Key>::DESCRIPTOR,)* <$L as Key>::DESCRIPTOR]);
            const FIXED_SIZE: Option<usize> =
                fixed_sum(&[$(<$T as Key>::FIXED_SIZE,)* <$L as Key>::FIXED_SIZE]);

            #[inline]
            fn decode_part(input: &mut &[u8], last: bool) -> Result<Self, DecodeError> {
                Ok((
                    $(<$T as Key>::decode_part(input, false)?,)*
                    <$L as Key>::decode_part(input, last)?,
                ))
            }
        }
    )+};
}

tuple_key! {
    (; A KA 0)
    (A KA 0; B KB 1)
    (A KA 0, B KB 1; C KC 2)
    (A KA 0, B KB 1, C KC 2; D KD 3)
    (A KA 0, B KB 1, C KC 2, D KD 3; E KE 4)
    (A KA 0, B KB 1, C KC 2, D KD 3, E KE 4; F KF 5)
}

#[cfg(test)]
mod tests {
    use super::super::Repr;
    use super::*;

    fn bytes<K: Key>(key: &impl AsKey<K>) -> Vec<u8> {
        key.encode().as_ref().to_vec()
    }

    fn part<K: Key>(key: &impl AsKey<K>, last: bool) -> Vec<u8> {
        let mut out = KeyBuf::new();
        key.encode_part(&mut out, last);
        out.as_slice().to_vec()
    }

    fn is_inline(buf: &KeyBuf) -> bool {
        matches!(buf.repr, Repr::Inline { .. })
    }

    #[test]
    fn split_strings_do_not_collide() {
        let a = (String::from("a"), String::from("bc"));
        let b = (String::from("ab"), String::from("c"));
        let (ea, eb) = (bytes(&a), bytes(&b));
        assert_eq!(ea, [b'a', 0, 0, b'b', b'c']);
        assert_eq!(eb, [b'a', b'b', 0, 0, b'c']);
        assert_eq!(ea.cmp(&eb), a.cmp(&b));
        assert_eq!(<(String, String)>::decode(&ea).unwrap(), a);
        assert_eq!(<(String, String)>::decode(&eb).unwrap(), b);
    }

    #[test]
    fn only_the_final_part_is_last() {
        let key = (String::from("x\0"), vec![0u8], String::from("y\0"));
        assert_eq!(bytes(&key), [b'x', 0, 0xFF, 0, 0, 0, 0xFF, 0, 0, b'y', 0]);
        // Not last: the final part is escaped and terminated too.
        assert_eq!(
            part(&key, false),
            [b'x', 0, 0xFF, 0, 0, 0, 0xFF, 0, 0, b'y', 0, 0xFF, 0, 0]
        );
        // A nested tuple that is not last writes all its parts escaped.
        let nested = ((String::from("a"), String::from("b")), 7u8);
        assert_eq!(bytes(&nested), [b'a', 0, 0, b'b', 0, 0, 7]);
        assert_eq!(
            <((String, String), u8)>::decode(&bytes(&nested)).unwrap(),
            nested
        );
    }

    #[test]
    fn empty_strings_in_every_position() {
        let key = (String::new(), String::new(), String::new());
        assert_eq!(bytes(&key), [0, 0, 0, 0]);
        assert_eq!(
            <(String, String, String)>::decode(&[0, 0, 0, 0]).unwrap(),
            key
        );
        // The empty first part sorts before any non-empty one, whatever follows.
        assert!(bytes(&("", "zzz")) < bytes(&("\0", "")));
    }

    #[test]
    fn options_tag_then_value() {
        assert_eq!(bytes::<Option<u16>>(&None::<u16>), [0]);
        assert_eq!(bytes::<Option<u16>>(&Some(0x0102u16)), [1, 1, 2]);
        assert_eq!(bytes::<Option<String>>(&Some("a\0")), [1, b'a', 0]);
        assert_eq!(
            part::<Option<String>>(&Some("a\0"), false),
            [1, b'a', 0, 0xFF, 0, 0]
        );
        assert!(bytes::<Option<String>>(&None::<&str>) < bytes::<Option<String>>(&Some("")));
        assert_eq!(Option::<String>::decode(&[1]).unwrap(), Some(String::new()));
        assert_eq!(Option::<u8>::decode(&[0]).unwrap(), None);
    }

    #[test]
    fn bad_option_tag_is_an_error() {
        let err = Option::<u8>::decode(&[2, 0]).unwrap_err();
        assert!(err.message().contains("found 0x02"), "{err}");
        let err = Option::<u8>::decode(&[]).unwrap_err();
        assert!(err.message().contains("Option tag"), "{err}");
        // `None` followed by anything is not a whole key.
        assert!(Option::<u8>::decode(&[0, 0]).is_err());
    }

    #[test]
    fn truncated_and_trailing_input_are_errors() {
        let err = <(u32, u16)>::decode(&[0, 0, 0, 1, 0]).unwrap_err();
        assert!(err.message().contains("u16"), "{err}");
        let err = <(u32, u16)>::decode(&[0, 0, 0, 1, 0, 2, 9]).unwrap_err();
        assert!(err.message().contains("1 byte(s) left over"), "{err}");
        assert!(err.message().contains("(u32, u16)"), "{err}");
        // The first part of a string tuple must be terminated.
        assert!(<(String, u8)>::decode(b"ab").is_err());
    }

    #[test]
    fn borrowed_forms_encode_like_owned_keys() {
        let owned = (String::from("alice"), 5u64);
        assert_eq!(bytes::<(String, u64)>(&("alice", 5)), bytes(&owned));
        assert_eq!(bytes::<(String, u64)>(&(&owned.0, &owned.1)), bytes(&owned));
        let blob = vec![0u8, 1];
        assert_eq!(
            bytes::<(Vec<u8>, Option<String>)>(&(&blob[..], Some("x"))),
            bytes(&(blob.clone(), Some(String::from("x"))))
        );
        assert_eq!(bytes::<Option<String>>(&Some("x")), [1, b'x']);
    }

    #[test]
    fn fixed_sizes() {
        assert_eq!(<(u64,)>::FIXED_SIZE, Some(8));
        assert_eq!(<(u64, [u8; 20], bool, char, ())>::FIXED_SIZE, Some(33));
        assert_eq!(<(u64, String)>::FIXED_SIZE, None);
        assert_eq!(<(u8, Option<u8>)>::FIXED_SIZE, None);
        assert_eq!(Option::<u8>::FIXED_SIZE, None);
    }

    #[test]
    fn descriptors() {
        assert_eq!(<(String, u64)>::DESCRIPTOR.to_string(), "(str, u64)");
        assert_eq!(<(i32,)>::DESCRIPTOR.to_string(), "(i32,)");
        assert_eq!(
            <(Vec<u8>, Option<String>, [u8; 4], (bool, char, ()))>::DESCRIPTOR.to_string(),
            "(bytes, Option<str>, [u8; 4], (bool, char, ()))"
        );
    }

    #[test]
    fn fixed_size_keys_stay_inline() {
        let key = (u64::MAX, [7u8; 32], -1i128, true, 'x');
        let buf = AsKey::<(u64, [u8; 32], i128, bool, char)>::encode(&key);
        assert_eq!(buf.len(), 61);
        assert!(is_inline(&buf));
        assert!(is_inline(&AsKey::<Option<u64>>::encode(&Some(1u64))));
        // Past 64 bytes the buffer spills to the heap, still with the right bytes.
        let big = ([1u8; 32], [2u8; 32], 3u8);
        let buf = AsKey::<([u8; 32], [u8; 32], u8)>::encode(&big);
        assert!(!is_inline(&buf));
        assert_eq!(
            <([u8; 32], [u8; 32], u8)>::decode(buf.as_slice()).unwrap(),
            big
        );
    }

    /// Whether `key` falls in a prefix scan for `prefix`: its bytes start with the prefix
    /// encoded as a non-final part.
    fn in_scan<K: Key>(key: &K, prefix: &impl super::super::AsPrefix<K>) -> bool {
        bytes(key).starts_with(super::super::encode_prefix::<K>(prefix).as_slice())
    }

    #[test]
    fn prefixes_are_byte_prefixes() {
        let key = (7u8, String::from("a\0"), 'x', Some(1u16), vec![0u8], ());
        assert!(in_scan(&key, &7u8));
        assert!(!in_scan(&key, &8u8));
        assert!(in_scan(&key, &(7u8, String::from("a\0"))));
        assert!(!in_scan(&key, &(7u8, String::from("a"))));
        assert!(in_scan(&key, &(7u8, String::from("a\0"), 'x')));
        assert!(in_scan(&key, &(7u8, String::from("a\0"), 'x', Some(1u16))));
        assert!(!in_scan(
            &key,
            &(7u8, String::from("a\0"), 'x', None::<u16>)
        ));
        assert!(in_scan(
            &key,
            &(7u8, String::from("a\0"), 'x', Some(1u16), vec![0u8])
        ));
        assert!(!in_scan(
            &key,
            &(7u8, String::from("a\0"), 'x', Some(1u16), vec![])
        ));
        let pair = (String::from("ab"), 1u32);
        assert!(in_scan(&pair, &String::from("ab")));
        assert!(!in_scan(&pair, &String::from("a")));
    }
}
