//! Order-preserving key encodings.
//!
//! The invariant every impl keeps: for keys `a` and `b` of one type,
//! `encode(a).cmp(&encode(b)) == a.cmp(&b)`, and `decode(encode(a)) == a`.
//!
//! A key may be the last part of a composite key or not (`last`): parts of variable length
//! (strings, byte strings) are written raw when last and in an escaped, terminated form otherwise,
//! so `("a", "bc")` and `("ab", "c")` never collide and still sort as tuples do.

use super::DecodeError;
use crate::schema::Descriptor;

mod bytes;
mod composite;
mod prefix;
mod range;

pub use prefix::AsPrefix;
pub(crate) use prefix::encode_prefix;
pub use range::KeyRange;

// The parts the schema-less key codec (`codec/untyped/key.rs`) writes the same way.
pub(crate) use bytes::{decode_bytes_part, encode_bytes_part};
pub(super) use composite::{NONE, SOME};

/// Bytes of an encoded key: on the stack up to 64 bytes, on the heap beyond.
///
/// Fixed-size keys (integers, arrays, tuples of them) never allocate.
#[derive(Clone)]
pub struct KeyBuf {
    repr: Repr,
}

const INLINE: usize = 64;

#[derive(Clone)]
enum Repr {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Vec<u8>),
}

impl KeyBuf {
    /// An empty buffer.
    #[inline]
    pub const fn new() -> Self {
        KeyBuf {
            repr: Repr::Inline {
                len: 0,
                buf: [0; INLINE],
            },
        }
    }

    /// Appends bytes.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        match &mut self.repr {
            Repr::Inline { len, buf } => {
                let at = *len as usize;
                let end = at + bytes.len();
                if end <= INLINE {
                    buf[at..end].copy_from_slice(bytes);
                    *len = end as u8;
                } else {
                    let mut heap = Vec::with_capacity(end.max(2 * INLINE));
                    heap.extend_from_slice(&buf[..at]);
                    heap.extend_from_slice(bytes);
                    self.repr = Repr::Heap(heap);
                }
            }
            Repr::Heap(heap) => heap.extend_from_slice(bytes),
        }
    }

    /// Appends one byte.
    #[inline]
    pub fn push(&mut self, byte: u8) {
        self.extend_from_slice(&[byte]);
    }

    /// The bytes written so far.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match &self.repr {
            Repr::Inline { len, buf } => &buf[..*len as usize],
            Repr::Heap(heap) => heap,
        }
    }

    /// Number of bytes written.
    #[inline]
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether nothing has been written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf::new()
    }
}

impl AsRef<[u8]> for KeyBuf {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::fmt::Debug for KeyBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyBuf({:02x?})", self.as_slice())
    }
}

/// A type usable as a table key, stored in an order-preserving byte form.
///
/// Implemented for the unsigned and signed integers, `bool`, `char`, `()`, `[u8; N]`,
/// `Vec<u8>`, `String`, `Option<T>`, tuples of up to 6 keys, and structs with
/// `#[derive(Key)]` (fields in declaration order).
///
/// # Laws
///
/// For all `a`, `b`: `decode(&encode(a)) == Ok(a)` and the encoded bytes compare as `a.cmp(b)`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a key type",
    label = "not a key type",
    note = "keys are integers, `bool`, `char`, `[u8; N]`, `Vec<u8>`, `String`, `Option<K>`, tuples of keys, or structs with `#[derive(Key)]`"
)]
pub trait Key: Ord + Sized + AsKey<Self> {
    /// The shape of the encoding, recorded in the schema.
    const DESCRIPTOR: Descriptor;

    /// `Some(n)` when every value of the type encodes to exactly `n` bytes, the same bytes in any
    /// position (last part of a key or not).
    const FIXED_SIZE: Option<usize>;

    /// Decodes one key part from the front of `input`, advancing it past the bytes consumed.
    /// `last` says whether this part ends the key (and so may consume everything left).
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the bytes are not a valid encoding.
    fn decode_part(input: &mut &[u8], last: bool) -> Result<Self, DecodeError>;

    /// Decodes a whole key.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the bytes are not a valid encoding or have bytes left over.
    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut input = bytes;
        let key = Self::decode_part(&mut input, true)?;
        if input.is_empty() {
            Ok(key)
        } else {
            Err(DecodeError::new(format!(
                "{} byte(s) left over after decoding a key of shape `{}`",
                input.len(),
                Self::DESCRIPTOR
            )))
        }
    }
}

/// A value that can be encoded as a key of type `K`: `K` itself, or a borrowed form of it
/// (`&str` for `String`, `&[u8]` for `Vec<u8>`, tuples of such).
///
/// Typed calls such as `get` take `&impl AsKey<T::Key>`, so `tx.get::<Users>("alice")` works
/// on a `String`-keyed table without allocating.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a key of type `{K}`",
    label = "expected a key of type `{K}`",
    note = "the table's key type is `{K}`; pass a `&{K}` (or a borrowed form such as `&str` for `String`)"
)]
pub trait AsKey<K: ?Sized> {
    /// The encoded whole key: an array, a borrowed slice or a [`KeyBuf`].
    type Encoded<'a>: AsRef<[u8]>
    where
        Self: 'a;

    /// Encodes `self` as a whole key (`last = true`).
    fn encode(&self) -> Self::Encoded<'_>;

    /// Appends `self` as one part of a composite key.
    fn encode_part(&self, out: &mut KeyBuf, last: bool);
}

impl<K: ?Sized, T: AsKey<K> + ?Sized> AsKey<K> for &T {
    type Encoded<'a>
        = T::Encoded<'a>
    where
        Self: 'a;

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        (**self).encode()
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, last: bool) {
        (**self).encode_part(out, last)
    }
}

/// Key types allowed on an `integer_key` table (`MDBX_INTEGERKEY`): `u32` and `u64`.
#[diagnostic::on_unimplemented(
    message = "`integer_key` needs a `u32` or `u64` key, not `{Self}`",
    label = "not `u32` or `u64`",
    note = "remove `integer_key` or change the key type to `u32` or `u64`"
)]
pub trait IntegerKey: Key {
    /// Width in bytes (4 or 8).
    const WIDTH: usize;
}

impl IntegerKey for u32 {
    const WIDTH: usize = 4;
}

impl IntegerKey for u64 {
    const WIDTH: usize = 8;
}

// ---------------------------------------------------------------------------------------------
// Integers

macro_rules! unsigned_key {
    ($($t:ty => $bits:literal),* $(,)?) => {$(
        impl AsKey<$t> for $t {
            type Encoded<'a> = [u8; $bits / 8];

            #[inline]
            fn encode(&self) -> Self::Encoded<'_> {
                self.to_be_bytes()
            }

            #[inline]
            fn encode_part(&self, out: &mut KeyBuf, _last: bool) {
                out.extend_from_slice(&self.to_be_bytes());
            }
        }

        impl Key for $t {
            const DESCRIPTOR: Descriptor = Descriptor::Unsigned($bits);
            const FIXED_SIZE: Option<usize> = Some($bits / 8);

            #[inline]
            fn decode_part(input: &mut &[u8], _last: bool) -> Result<Self, DecodeError> {
                Ok(<$t>::from_be_bytes(take_array(input, stringify!($t))?))
            }
        }
    )*};
}

unsigned_key!(u8 => 8, u16 => 16, u32 => 32, u64 => 64, u128 => 128);

macro_rules! signed_key {
    ($($t:ty, $u:ty => $bits:literal),* $(,)?) => {$(
        impl AsKey<$t> for $t {
            type Encoded<'a> = [u8; $bits / 8];

            #[inline]
            fn encode(&self) -> Self::Encoded<'_> {
                ((*self as $u) ^ (1 << ($bits - 1))).to_be_bytes()
            }

            #[inline]
            fn encode_part(&self, out: &mut KeyBuf, _last: bool) {
                out.extend_from_slice(&AsKey::<$t>::encode(self));
            }
        }

        impl Key for $t {
            const DESCRIPTOR: Descriptor = Descriptor::Signed($bits);
            const FIXED_SIZE: Option<usize> = Some($bits / 8);

            #[inline]
            fn decode_part(input: &mut &[u8], _last: bool) -> Result<Self, DecodeError> {
                let raw = <$u>::from_be_bytes(take_array(input, stringify!($t))?);
                Ok((raw ^ (1 << ($bits - 1))) as $t)
            }
        }
    )*};
}

signed_key!(i8, u8 => 8, i16, u16 => 16, i32, u32 => 32, i64, u64 => 64, i128, u128 => 128);

// ---------------------------------------------------------------------------------------------
// bool, char, (), [u8; N]

impl AsKey<bool> for bool {
    type Encoded<'a> = [u8; 1];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        [u8::from(*self)]
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, _last: bool) {
        out.push(u8::from(*self));
    }
}

impl Key for bool {
    const DESCRIPTOR: Descriptor = Descriptor::Bool;
    const FIXED_SIZE: Option<usize> = Some(1);

    #[inline]
    fn decode_part(input: &mut &[u8], _last: bool) -> Result<Self, DecodeError> {
        match take_array(input, "bool")? {
            [0] => Ok(false),
            [1] => Ok(true),
            [b] => Err(DecodeError::new(format!(
                "bool: expected 0x00 or 0x01, found 0x{b:02x}"
            ))),
        }
    }
}

impl AsKey<char> for char {
    type Encoded<'a> = [u8; 4];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        u32::from(*self).to_be_bytes()
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, _last: bool) {
        out.extend_from_slice(&u32::from(*self).to_be_bytes());
    }
}

impl Key for char {
    const DESCRIPTOR: Descriptor = Descriptor::Char;
    const FIXED_SIZE: Option<usize> = Some(4);

    #[inline]
    fn decode_part(input: &mut &[u8], _last: bool) -> Result<Self, DecodeError> {
        let scalar = u32::from_be_bytes(take_array(input, "char")?);
        char::from_u32(scalar).ok_or_else(|| {
            DecodeError::new(format!(
                "char: 0x{scalar:08x} is not a Unicode scalar value"
            ))
        })
    }
}

impl AsKey<()> for () {
    type Encoded<'a> = [u8; 0];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        []
    }

    #[inline]
    fn encode_part(&self, _out: &mut KeyBuf, _last: bool) {}
}

impl Key for () {
    const DESCRIPTOR: Descriptor = Descriptor::Unit;
    const FIXED_SIZE: Option<usize> = Some(0);

    #[inline]
    fn decode_part(_input: &mut &[u8], _last: bool) -> Result<Self, DecodeError> {
        Ok(())
    }
}

impl<const N: usize> AsKey<[u8; N]> for [u8; N] {
    type Encoded<'a> = &'a [u8; N];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        self
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, _last: bool) {
        out.extend_from_slice(self);
    }
}

impl<const N: usize> Key for [u8; N] {
    const DESCRIPTOR: Descriptor = Descriptor::Array(N);
    const FIXED_SIZE: Option<usize> = Some(N);

    #[inline]
    fn decode_part(input: &mut &[u8], _last: bool) -> Result<Self, DecodeError> {
        take_array(input, "byte array")
    }
}

/// Takes exactly `N` bytes from the front of `input`.
#[inline]
pub(crate) fn take_array<const N: usize>(
    input: &mut &[u8],
    what: &str,
) -> Result<[u8; N], DecodeError> {
    match input.split_first_chunk::<N>() {
        Some((head, rest)) => {
            *input = rest;
            Ok(*head)
        }
        None => Err(DecodeError::truncated(what, N, input.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How typed calls take keys: `&impl AsKey<T::Key>`, unsized forms allowed.
    fn encode_as<K: ?Sized>(key: &(impl AsKey<K> + ?Sized)) -> Vec<u8> {
        key.encode().as_ref().to_vec()
    }

    #[test]
    fn integer_literal_infers_the_table_key_type() {
        // The shape of a typed `get` on a `u64`-keyed table, with no type named at the call.
        fn get_u64(key: &(impl AsKey<u64> + ?Sized)) -> Vec<u8> {
            key.encode().as_ref().to_vec()
        }
        assert_eq!(get_u64(&5), [0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(get_u64(&u64::MAX), [0xFF; 8]);
        assert_eq!(encode_as::<u64>(&5), [0, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(encode_as::<i16>(&-1), [0x7F, 0xFF]);
        assert_eq!(encode_as::<u64>(&&7), [0, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(
            encode_as::<(String, u64)>(&("alice", 5)),
            b"alice\0\0\0\0\0\0\0\0\0\x05"
        );
        assert_eq!(encode_as::<Option<u32>>(&Some(1)), [1, 0, 0, 0, 1]);
    }

    #[test]
    fn borrowed_whole_keys_are_zero_copy() {
        let s = String::from("alice");
        let encoded: &[u8] = AsKey::<String>::encode(s.as_str());
        assert!(std::ptr::eq(encoded, s.as_bytes()));
        let v = [1u8, 2, 3];
        let encoded: &[u8] = AsKey::<Vec<u8>>::encode(&v[..]);
        assert!(std::ptr::eq(encoded, &v[..]));
        let a = [9u8; 4];
        assert!(std::ptr::eq(AsKey::<[u8; 4]>::encode(&a), &a));
        assert_eq!(encode_as::<String>("alice"), b"alice");
        assert_eq!(encode_as::<Vec<u8>>(&b"\0x"[..]), b"\0x");
    }

    #[test]
    fn scalar_encodings() {
        assert_eq!(encode_as::<bool>(&false), [0]);
        assert_eq!(encode_as::<bool>(&true), [1]);
        assert_eq!(encode_as::<char>(&'A'), [0, 0, 0, 0x41]);
        assert_eq!(encode_as::<char>(&'\u{10FFFF}'), [0, 0x10, 0xFF, 0xFF]);
        assert_eq!(encode_as::<()>(&()), [0u8; 0]);
        assert_eq!(encode_as::<[u8; 3]>(&[3, 0, 1]), [3, 0, 1]);
        assert!(bool::decode(&[1]).unwrap());
        assert_eq!(char::decode(&[0, 0, 0xE9, 0x9E]).unwrap(), '\u{E99E}');
        assert_eq!(<()>::decode(&[]).unwrap(), ());
        assert_eq!(<[u8; 2]>::decode(&[0, 0xFF]).unwrap(), [0, 0xFF]);
    }

    #[test]
    fn scalar_descriptors_and_sizes() {
        assert_eq!(
            (bool::DESCRIPTOR, bool::FIXED_SIZE),
            (Descriptor::Bool, Some(1))
        );
        assert_eq!(
            (char::DESCRIPTOR, char::FIXED_SIZE),
            (Descriptor::Char, Some(4))
        );
        assert_eq!(
            (<()>::DESCRIPTOR, <()>::FIXED_SIZE),
            (Descriptor::Unit, Some(0))
        );
        assert_eq!(
            (<[u8; 20]>::DESCRIPTOR, <[u8; 20]>::FIXED_SIZE),
            (Descriptor::Array(20), Some(20))
        );
    }

    #[test]
    fn invalid_scalars_are_errors() {
        let err = bool::decode(&[2]).unwrap_err();
        assert_eq!(err.message(), "bool: expected 0x00 or 0x01, found 0x02");
        let err = char::decode(&[0, 0, 0xD8, 0x00]).unwrap_err();
        assert_eq!(
            err.message(),
            "char: 0x0000d800 is not a Unicode scalar value"
        );
        assert!(char::decode(&[0, 0x11, 0, 0]).is_err());
        let err = <[u8; 4]>::decode(&[1, 2, 3]).unwrap_err();
        assert_eq!(err.message(), "byte array: needed 4 byte(s), only 3 left");
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        let err = u32::decode(&[0, 0, 0, 1, 0]).unwrap_err();
        assert_eq!(
            err.message(),
            "1 byte(s) left over after decoding a key of shape `u32`"
        );
        let err = <()>::decode(&[0, 0]).unwrap_err();
        assert!(err.message().contains("2 byte(s) left over"), "{err}");
        assert!(bool::decode(&[1, 1]).is_err());
        // A last variable-length part takes the rest, so nothing can be left over.
        assert_eq!(String::decode(b"ab").unwrap(), "ab");
    }
}
