//! A serde serializer for bincode 2's standard format, writing into a `Vec<u8>`: what
//! [`Bincode<T>`](super::Bincode) encodes with, the counterpart of `bincode_de.rs`.
//!
//! Why not the `bincode` crate: its development has ceased (RUSTSEC-2025-0141), and the format is
//! small enough to own. The bytes are bincode 2's, byte for byte: files written through the crate
//! read back unchanged, and `crates/core/tests/bincode_compat.rs` checks this encoder against
//! bincode 2's own over a wide range of values.
//!
//! The format (bincode 2, `config::standard()`: little-endian, variable-length integers, no
//! limit): `u8`/`i8`/`bool` one byte; wider integers as a varint (one byte up to 250, else a
//! marker 251/252/253/254 then the value as little-endian `u16`/`u32`/`u64`/`u128`, the narrowest
//! that holds it), signed ones zigzag first (0, -1, 1, -2, ... → 0, 1, 2, 3, ...); `usize`/`isize`
//! as `u64`/`i64`; `f32`/`f64` their little-endian bits (NaN payloads kept); `char` its UTF-8
//! bytes; strings and byte strings a `u64` varint length then the bytes; sequences and maps a
//! `u64` varint length then the elements (a sequence or map whose length serde does not know is
//! an error, as in bincode); `Option` a tag byte 0/1 then the value; an enum variant its index as
//! a `u32` varint then its contents; structs, tuples and newtypes their fields in order, with
//! nothing around them; unit and unit structs nothing.
//!
//! Where bincode returns an error Tabula does too: a serde custom error from a `Serialize` impl,
//! and a sequence or map of unknown length. Like bincode, the serializer is not human-readable
//! (types such as `IpAddr` choose their compact form) and does not check that a sequence has as
//! many elements as it announced.

use serde::ser::{self, Serialize};

use super::EncodeError;

/// Appends `value`'s encoding to `out`.
#[inline]
pub(crate) fn encode_into<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> std::result::Result<(), EncodeError> {
    value
        .serialize(Serializer { out })
        .map_err(|e| EncodeError::new(format!("bincode: {}", e.0)))
}

/// The serializer's error: a message behind one thin pointer, so that every `Result` on the
/// per-field path is one word (as in `bincode_de.rs`).
#[derive(Debug)]
#[allow(clippy::box_collection)]
pub(crate) struct Error(Box<String>);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    #[cold]
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        Error(Box::new(msg.to_string()))
    }
}

#[cold]
fn unknown_length(what: &str) -> Error {
    Error(Box::new(format!(
        "a {what} whose length is not known in advance cannot be encoded (bincode writes the \
         length first): serialize it from a collection that knows its length"
    )))
}

type Result<T = ()> = std::result::Result<T, Error>;

const U16_MARKER: u8 = 251;
const U32_MARKER: u8 = 252;
const U64_MARKER: u8 = 253;
const U128_MARKER: u8 = 254;

/// bincode 2's varint of `n`: one byte up to 250, else a marker and the narrowest of `u16`,
/// `u32`, `u64` that holds it, little-endian. The same bytes whatever the integer's type.
#[inline]
pub(super) fn varint64(out: &mut Vec<u8>, n: u64) {
    if n <= 250 {
        out.push(n as u8);
    } else {
        varint64_wide(out, n);
    }
}

/// The marker forms of [`varint64`], written with one copy each.
fn varint64_wide(out: &mut Vec<u8>, n: u64) {
    let b = n.to_le_bytes();
    if n <= u64::from(u16::MAX) {
        out.extend_from_slice(&[U16_MARKER, b[0], b[1]]);
    } else if n <= u64::from(u32::MAX) {
        out.extend_from_slice(&[U32_MARKER, b[0], b[1], b[2], b[3]]);
    } else {
        out.extend_from_slice(&[U64_MARKER, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }
}

/// A 128-bit varint: [`varint64`] when `n` fits in 64 bits, else the marker 254 and 16 bytes.
#[inline]
pub(super) fn varint128(out: &mut Vec<u8>, n: u128) {
    match u64::try_from(n) {
        Ok(n) => varint64(out, n),
        Err(_) => {
            out.push(U128_MARKER);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// Zigzag: 0, -1, 1, -2, ... ↔ 0, 1, 2, 3, ... (independent of the integer's width, so an `i16`
/// widened to `i64` maps to the number bincode's `i16` encoding writes).
#[inline]
fn zigzag64(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

#[inline]
pub(super) fn zigzag128(n: i128) -> u128 {
    ((n << 1) ^ (n >> 127)) as u128
}

/// Writes into `out`. One type serves as the serializer and as every compound (sequence, map,
/// struct, ...), as in bincode, since none needs state of its own.
struct Serializer<'a> {
    out: &'a mut Vec<u8>,
}

impl Serializer<'_> {
    #[inline]
    fn nested(&mut self) -> Serializer<'_> {
        Serializer { out: self.out }
    }

    #[inline]
    fn bytes(self, bytes: &[u8]) -> Result {
        varint64(self.out, bytes.len() as u64);
        self.out.extend_from_slice(bytes);
        Ok(())
    }
}

impl<'a> ser::Serializer for Serializer<'a> {
    type Ok = ();
    type Error = Error;

    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result {
        self.out.push(u8::from(v));
        Ok(())
    }

    #[inline]
    fn serialize_i8(self, v: i8) -> Result {
        self.out.push(v as u8);
        Ok(())
    }

    #[inline]
    fn serialize_i16(self, v: i16) -> Result {
        varint64(self.out, zigzag64(i64::from(v)));
        Ok(())
    }

    #[inline]
    fn serialize_i32(self, v: i32) -> Result {
        varint64(self.out, zigzag64(i64::from(v)));
        Ok(())
    }

    #[inline]
    fn serialize_i64(self, v: i64) -> Result {
        varint64(self.out, zigzag64(v));
        Ok(())
    }

    #[inline]
    fn serialize_i128(self, v: i128) -> Result {
        varint128(self.out, zigzag128(v));
        Ok(())
    }

    #[inline]
    fn serialize_u8(self, v: u8) -> Result {
        self.out.push(v);
        Ok(())
    }

    #[inline]
    fn serialize_u16(self, v: u16) -> Result {
        varint64(self.out, u64::from(v));
        Ok(())
    }

    #[inline]
    fn serialize_u32(self, v: u32) -> Result {
        varint64(self.out, u64::from(v));
        Ok(())
    }

    #[inline]
    fn serialize_u64(self, v: u64) -> Result {
        varint64(self.out, v);
        Ok(())
    }

    #[inline]
    fn serialize_u128(self, v: u128) -> Result {
        varint128(self.out, v);
        Ok(())
    }

    #[inline]
    fn serialize_f32(self, v: f32) -> Result {
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }

    #[inline]
    fn serialize_f64(self, v: f64) -> Result {
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }

    #[inline]
    fn serialize_char(self, v: char) -> Result {
        self.out
            .extend_from_slice(v.encode_utf8(&mut [0; 4]).as_bytes());
        Ok(())
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result {
        self.bytes(v.as_bytes())
    }

    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result {
        self.bytes(v)
    }

    #[inline]
    fn serialize_none(self) -> Result {
        self.out.push(0);
        Ok(())
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        self.out.push(1);
        value.serialize(self)
    }

    #[inline]
    fn serialize_unit(self) -> Result {
        Ok(())
    }

    #[inline]
    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        Ok(())
    }

    #[inline]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
    ) -> Result {
        varint64(self.out, u64::from(variant_index));
        Ok(())
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result {
        value.serialize(self)
    }

    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result {
        varint64(self.out, u64::from(variant_index));
        value.serialize(self)
    }

    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Self> {
        let len = len.ok_or_else(|| unknown_length("sequence"))?;
        varint64(self.out, len as u64);
        Ok(self)
    }

    #[inline]
    fn serialize_tuple(self, _len: usize) -> Result<Self> {
        Ok(self)
    }

    #[inline]
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self> {
        Ok(self)
    }

    #[inline]
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self> {
        varint64(self.out, u64::from(variant_index));
        Ok(self)
    }

    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Self> {
        let len = len.ok_or_else(|| unknown_length("map"))?;
        varint64(self.out, len as u64);
        Ok(self)
    }

    #[inline]
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self> {
        Ok(self)
    }

    #[inline]
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        variant_index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self> {
        varint64(self.out, u64::from(variant_index));
        Ok(self)
    }

    // `collect_str` keeps serde's default (format to a `String`, then `serialize_str`), as
    // bincode does with its `alloc` feature.

    fn is_human_readable(&self) -> bool {
        false
    }
}

/// The compounds: each element is written in place, nothing before or after (the length, or
/// the variant index, was written when the compound began).
macro_rules! compound {
    ($($trait:ident :: $method:ident($($name:ident: $t:ty),*)),* $(,)?) => {$(
        impl ser::$trait for Serializer<'_> {
            type Ok = ();
            type Error = Error;

            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, $($name: $t,)* value: &T) -> Result {
                $(let _ = $name;)*
                value.serialize(self.nested())
            }

            #[inline]
            fn end(self) -> Result {
                Ok(())
            }
        }
    )*};
}

compound!(
    SerializeSeq::serialize_element(),
    SerializeTuple::serialize_element(),
    SerializeTupleStruct::serialize_field(),
    SerializeTupleVariant::serialize_field(),
    SerializeStruct::serialize_field(key: &'static str),
    SerializeStructVariant::serialize_field(key: &'static str),
);

impl ser::SerializeMap for Serializer<'_> {
    type Ok = ();
    type Error = Error;

    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        key.serialize(self.nested())
    }

    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        value.serialize(self.nested())
    }

    #[inline]
    fn end(self) -> Result {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc<T: Serialize + ?Sized>(v: &T) -> Vec<u8> {
        let mut out = Vec::new();
        encode_into(v, &mut out).unwrap();
        out
    }

    #[test]
    fn varints_at_their_boundaries() {
        assert_eq!(enc(&250u64), [250]);
        assert_eq!(enc(&251u64), [251, 251, 0]);
        assert_eq!(enc(&65535u32), [251, 255, 255]);
        assert_eq!(enc(&65536u32), [252, 0, 0, 1, 0]);
        assert_eq!(enc(&(1u64 << 32)), [253, 0, 0, 0, 0, 1, 0, 0, 0]);
        let mut wide = vec![254];
        wide.extend_from_slice(&(1u128 << 64).to_le_bytes());
        assert_eq!(enc(&(1u128 << 64)), wide);
        // u8 and i8 are single raw bytes, never varints.
        assert_eq!(enc(&255u8), [255]);
        assert_eq!(enc(&-1i8), [255]);
    }

    #[test]
    fn signed_integers_zigzag() {
        assert_eq!(enc(&0i32), [0]);
        assert_eq!(enc(&-1i32), [1]);
        assert_eq!(enc(&1i32), [2]);
        assert_eq!(enc(&125i64), [250]); // zigzag 250: the last one-byte form
        assert_eq!(enc(&-126i64), [251, 251, 0]); // zigzag 251: the u16 form
        assert_eq!(enc(&i16::MIN), [251, 255, 255]);
        assert_eq!(zigzag128(i128::MIN), u128::MAX);
        assert_eq!(zigzag64(i64::MAX), u64::MAX - 1);
    }
}
