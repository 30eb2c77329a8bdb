//! Value codecs of `dupsort` tables: libmdbx sorts a key's values by their bytes, so a dupsort
//! table stores them in an order-preserving encoding.
//!
//! - [`Ordered<V>`]: a table without a subkey stores each value in its key encoding, so the
//!   values of a key come back in `V`'s [`Ord`] order. `V` must be an [`OrderedValue`].
//! - [`SubKeyed<S, C>`]: a table with a subkey (`#[table(key = .., subkey = S, value = V,
//!   dupsort)]`) stores the subkey in its self-delimiting key encoding followed by the value as
//!   codec `C` writes it, so the values of a key are sorted by subkey and a seek by subkey is
//!   one libmdbx `MDBX_GET_BOTH_RANGE` with the subkey's bytes.

use std::marker::PhantomData;

use super::{AsKey, AsValue, DecodeError, Descriptor, EncodeError, Key, KeyBuf, Value};

/// A type whose values can be the values of a `dupsort` table without a subkey: it has an
/// order-preserving encoding (it is a [`Key`] type), which [`Ordered`] stores.
///
/// Implemented for every key type Tabula ships and by `#[derive(Key)]`; implement it for a
/// hand-written [`Key`] type whose encoding keeps its order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the value of a `dupsort` table: it has no order-preserving encoding",
    label = "no order-preserving encoding",
    note = "libmdbx sorts the values of a key by their bytes, so a dupsort table stores them in their key encoding: use a key type as the value (integers, `bool`, `char`, `[u8; N]`, `Vec<u8>`, `String`, `Option`, tuples, `#[derive(Key)]` structs), or sort the values by a subkey: `#[table(key = .., subkey = S, value = V, dupsort)]`"
)]
pub trait OrderedValue: Key {}

macro_rules! ordered_value {
    ($($t:ty),* $(,)?) => {$(impl OrderedValue for $t {})*};
}

ordered_value!(
    u8,
    u16,
    u32,
    u64,
    u128,
    i8,
    i16,
    i32,
    i64,
    i128,
    bool,
    char,
    (),
    Vec<u8>,
    String
);

impl<const N: usize> OrderedValue for [u8; N] {}
impl<T: Key> OrderedValue for Option<T> {}

macro_rules! ordered_tuple {
    ($(($($T:ident),+))+) => {$(impl<$($T: Key),+> OrderedValue for ($($T,)+) {})+};
}

ordered_tuple! {
    (A)
    (A, B)
    (A, B, C)
    (A, B, C, D)
    (A, B, C, D, E)
    (A, B, C, D, E, F)
}

/// The value codec of a `dupsort` table without a subkey: each value stored in its
/// order-preserving key encoding, so libmdbx keeps a key's values in `V`'s [`Ord`] order.
///
/// ```
/// use tabula_core::{Ordered, Value};
///
/// let mut scratch = Vec::new();
/// let bytes = |v: u64, s: &mut Vec<u8>| Ordered::<u64>::encode(&v, s).unwrap().to_vec();
/// // Big-endian: 255 sorts before 256 byte by byte, as it does as a number.
/// assert!(bytes(255, &mut scratch) < bytes(256, &mut scratch));
/// assert_eq!(Ordered::<u64>::decode(&bytes(256, &mut scratch)).unwrap(), 256);
/// ```
pub struct Ordered<V>(PhantomData<fn() -> V>);

impl<V: OrderedValue> Value for Ordered<V> {
    type Item = V;
    const DESCRIPTOR: Descriptor = Descriptor::Ordered(&V::DESCRIPTOR);

    #[inline]
    fn encode<'a>(item: &'a V, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        scratch.extend_from_slice(AsKey::<V>::encode(item).as_ref());
        Ok(scratch)
    }

    #[inline]
    fn decode(bytes: &[u8]) -> Result<V, DecodeError> {
        V::decode(bytes)
    }

    /// The key descriptor of `V` (`u64`, `(str, u64)`, `Slot { .. }`): the structure of the
    /// encoding, recorded so that a changed `#[derive(Key)]` struct is caught at open.
    fn shape() -> Option<String> {
        Some(V::DESCRIPTOR.to_string())
    }
}

/// The value codec of a `dupsort` table with a subkey: each value stored as the subkey's
/// self-delimiting key encoding followed by the value as codec `C` writes it, so libmdbx keeps a
/// key's values sorted by subkey. Typed calls read and write `(subkey, value)` pairs.
///
/// ```
/// use tabula_core::{Bincode, SubKeyed, Value};
///
/// type Slots = SubKeyed<u64, Bincode<String>>;
/// let mut scratch = Vec::new();
/// let stored = Slots::encode(&(256, "x".to_string()), &mut scratch).unwrap().to_vec();
/// assert_eq!(stored, [0, 0, 0, 0, 0, 0, 1, 0, 1, b'x']); // the subkey, then bincode
/// assert_eq!(Slots::decode(&stored).unwrap(), (256, "x".to_string()));
/// ```
pub struct SubKeyed<S, C>(PhantomData<fn() -> (S, C)>);

/// A dupsort table's ordered values written from a borrowed form: the key encoding of `str` is
/// `String`'s, that of `[u8]` is `Vec<u8>`'s.
impl AsValue<Ordered<String>> for str {
    #[inline]
    fn encode_value<'a>(&'a self, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        scratch.extend_from_slice(AsKey::<String>::encode(self).as_ref());
        Ok(scratch)
    }
}

impl AsValue<Ordered<Vec<u8>>> for [u8] {
    #[inline]
    fn encode_value<'a>(&'a self, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        scratch.extend_from_slice(AsKey::<Vec<u8>>::encode(self).as_ref());
        Ok(scratch)
    }
}

impl<S: Key, C: Value> Value for SubKeyed<S, C> {
    type Item = (S, C::Item);
    const DESCRIPTOR: Descriptor = Descriptor::SubKeyed {
        subkey: &S::DESCRIPTOR,
        value: &C::DESCRIPTOR,
    };

    #[inline]
    fn encode<'a>(item: &'a Self::Item, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        encode_subkeyed::<S, C>(&item.0, &item.1, scratch)
    }

    fn decode(bytes: &[u8]) -> Result<Self::Item, DecodeError> {
        let mut input = bytes;
        let subkey = S::decode_part(&mut input, false)?;
        Ok((subkey, C::decode(input)?))
    }

    /// The subkey's key descriptor, the value codec's descriptor and the value's shape, as
    /// JSON: `{"subkey": "[u8; 32]", "value": "bincode", "shape": ...}`.
    fn shape() -> Option<String> {
        let shape = serde_json::json!({
            "subkey": S::DESCRIPTOR.to_string(),
            "value": C::DESCRIPTOR.to_string(),
            "shape": C::shape(),
        });
        Some(shape.to_string())
    }
}

/// The stored form of the dup `(subkey, value)` of a table with a subkey: `subkey`'s
/// self-delimiting encoding, then `value` as `C` encodes it, in `scratch`.
///
/// # Errors
///
/// [`EncodeError`] when `C` cannot encode the value.
pub(crate) fn encode_subkeyed<'a, S: Key, C: Value>(
    subkey: &(impl AsKey<S> + ?Sized),
    value: &'a C::Item,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8], EncodeError> {
    // A fixed-size encoding is the same in every position (see `stored::with_subkey`).
    let whole;
    let mut part = KeyBuf::new();
    let front = if S::FIXED_SIZE.is_some() {
        whole = subkey.encode();
        whole.as_ref()
    } else {
        subkey.encode_part(&mut part, false);
        part.as_slice()
    };
    // `C` either writes into `scratch` or borrows bytes the value holds. Where the bytes are is
    // learnt from their address (no borrow is kept), then the subkey goes in front of them.
    let (at, len) = {
        let bytes = C::encode(value, scratch)?;
        (bytes.as_ptr() as usize, bytes.len())
    };
    let base = scratch.as_ptr() as usize;
    if len == 0 {
        scratch.clear();
        scratch.extend_from_slice(front);
    } else if at >= base && at + len <= base + scratch.len() {
        let start = at - base;
        scratch.truncate(start + len);
        scratch.drain(..start);
        scratch.splice(0..0, front.iter().copied());
    } else {
        // Borrowed from the value: encode again into an empty buffer, which such a codec
        // leaves untouched (no allocation), and copy both parts into `scratch`.
        let mut unused = Vec::new();
        let bytes = C::encode(value, &mut unused)?;
        scratch.clear();
        scratch.extend_from_slice(front);
        scratch.extend_from_slice(bytes);
    }
    Ok(scratch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Bincode, Raw};

    fn stored<C: Value>(item: &C::Item) -> Vec<u8> {
        C::encode(item, &mut Vec::new()).unwrap().to_vec()
    }

    #[test]
    fn ordered_values_sort_as_the_type_does() {
        let mut numbers = [300u64, 5, 256, 255, 70000, 251, 250, 1 << 40];
        let mut by_bytes = numbers.map(|n| stored::<Ordered<u64>>(&n));
        numbers.sort();
        by_bytes.sort();
        let decoded = by_bytes.map(|b| Ordered::<u64>::decode(&b).unwrap());
        assert_eq!(decoded, numbers);
        let mut signed = [300i64, -1, 0, 1, -300, i64::MIN, i64::MAX];
        let mut by_bytes = signed.map(|n| stored::<Ordered<i64>>(&n));
        signed.sort();
        by_bytes.sort();
        assert_eq!(
            by_bytes.map(|b| Ordered::<i64>::decode(&b).unwrap()),
            signed
        );
        let mut words = ["pear", "fig", "apple", "banana", "kiwi", ""].map(String::from);
        let mut by_bytes = words.clone().map(|w| stored::<Ordered<String>>(&w));
        words.sort();
        by_bytes.sort();
        assert_eq!(
            by_bytes.map(|b| Ordered::<String>::decode(&b).unwrap()),
            words
        );
        assert_eq!(Ordered::<u64>::shape().as_deref(), Some("u64"));
        assert_eq!(Ordered::<(String, u32)>::DESCRIPTOR.to_string(), "ordered");
        assert_eq!(
            Ordered::<(String, u32)>::shape().as_deref(),
            Some("(str, u32)")
        );
    }

    #[test]
    fn subkeyed_values_sort_by_subkey_and_keep_both_parts() {
        // A variable-length subkey is self-delimiting: ("a", "bc") and ("ab", "c") differ and
        // sort by subkey first.
        type S = SubKeyed<String, Bincode<String>>;
        let a = stored::<S>(&("a".into(), "bc".into()));
        let ab = stored::<S>(&("ab".into(), "c".into()));
        assert_ne!(a, ab);
        assert!(a < ab);
        assert_eq!(S::decode(&ab).unwrap(), ("ab".into(), "c".into()));
        // A codec that borrows from the value (`Raw`), and an empty value.
        type R = SubKeyed<u16, Raw>;
        assert_eq!(stored::<R>(&(7, vec![1, 2])), [0, 7, 1, 2]);
        assert_eq!(stored::<R>(&(7, vec![])), [0, 7]);
        assert_eq!(R::decode(&[0, 7]).unwrap(), (7, vec![]));
        // The scratch buffer is reused: a long value then a short one.
        let mut scratch = Vec::new();
        let long = (1u16, "x".repeat(100));
        type B = SubKeyed<u16, Bincode<String>>;
        let first = B::encode(&long, &mut scratch).unwrap().to_vec();
        assert_eq!(B::decode(&first).unwrap(), long);
        let short = B::encode(&(2, "y".into()), &mut scratch).unwrap().to_vec();
        assert_eq!(short, [0, 2, 1, b'y']);
        // Truncated subkeys are errors, not panics.
        assert!(B::decode(&[0]).is_err());
        assert_eq!(
            B::DESCRIPTOR.to_string(),
            "subkey u16 + bincode",
            "the record names both parts"
        );
    }
}
