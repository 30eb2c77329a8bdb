//! A serde deserializer for bincode 2's standard format, reading straight from a borrowed slice:
//! what [`Bincode<T>`](super::Bincode) decodes with.
//!
//! Why not `bincode::serde::decode_from_slice`: bincode 2 allocates a string's or byte string's
//! claimed length before it reads the bytes (`vec![0; len]`), so a damaged length prefix aborts
//! the process unless a decode limit is set, and the limit's bookkeeping costs about as much as
//! the decode itself. Here every length is checked against the bytes that are left before
//! anything is allocated (a length longer than the input is an error), and strings are borrowed
//! from the input until the visitor copies them — no limit needed, nothing to pay for it.
//!
//! The format (bincode 2, `config::standard()`): little-endian; `u8`/`i8` one byte; wider
//! integers as a varint (one byte up to 250, else a marker 251/252/253/254 then the value as
//! `u16`/`u32`/`u64`/`u128`, a marker wider than the type being an error), signed ones zigzag
//! first; `f32`/`f64` raw; `char` its UTF-8 bytes; strings, byte strings, sequences and maps a
//! `u64` varint length then the contents; `Option` a tag byte; enums a `u32` varint variant index
//! then the contents; structs and tuples their fields in order. `crates/core/tests/bincode_format.rs`
//! checks this decoder against bincode's own, value for value and error for error.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use super::DecodeError;

/// Nesting deeper than this is refused, so damaged data cannot overflow the stack through a
/// recursive type (each level takes at least one byte of input).
const MAX_DEPTH: u32 = 512;

/// Decodes a whole value of type `T` from `bytes`; every byte must be used.
#[inline(always)]
pub(crate) fn decode<T: de::DeserializeOwned>(bytes: &[u8]) -> std::result::Result<T, DecodeError> {
    let mut de = Deserializer {
        input: bytes,
        pos: 0,
        depth: 0,
    };
    let value =
        T::deserialize(&mut de).map_err(|e| DecodeError::new(format!("bincode: {}", e.0)))?;
    if de.left() == 0 {
        Ok(value)
    } else {
        Err(DecodeError::new(format!(
            "bincode: {} byte(s) left over after the value",
            de.left()
        )))
    }
}

/// The deserializer's error: a message, behind one thin pointer so that every `Result` on the
/// per-field path stays small (a `Box<str>` or a plain `String` measured 15–18 % more
/// instructions per decode).
#[derive(Debug)]
#[allow(clippy::box_collection)]
pub(crate) struct Error(Box<String>);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl Error {
    #[cold]
    fn msg(message: String) -> Self {
        Error(Box::new(message))
    }
}

impl de::Error for Error {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        Error(Box::new(msg.to_string()))
    }
}

type Result<T> = std::result::Result<T, Error>;

/// Reads `input` from `pos` on (one index to advance, rather than a slice's pointer and length).
struct Deserializer<'de> {
    input: &'de [u8],
    pos: usize,
    depth: u32,
}

#[cold]
fn invalid_marker(what: &str, marker: u8, bits: u32) -> Error {
    Error::msg(format!(
        "{what}: varint marker 0x{marker:02x} is invalid for a {bits}-bit integer"
    ))
}

#[cold]
fn truncated(what: &str, needed: usize, left: usize) -> Error {
    Error::msg(format!("{what} needs {needed} byte(s), only {left} left"))
}

const U16_MARKER: u8 = 251;
const U32_MARKER: u8 = 252;
const U64_MARKER: u8 = 253;
const U128_MARKER: u8 = 254;

impl<'de> Deserializer<'de> {
    #[inline]
    fn left(&self) -> usize {
        self.input.len() - self.pos
    }

    #[inline]
    fn take(&mut self, n: usize, what: &str) -> Result<&'de [u8]> {
        match self.input.get(self.pos..).and_then(|rest| rest.get(..n)) {
            Some(head) => {
                self.pos += n;
                Ok(head)
            }
            None => Err(truncated(what, n, self.left())),
        }
    }

    #[inline]
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        match self
            .input
            .get(self.pos..)
            .and_then(<[u8]>::first_chunk::<N>)
        {
            Some(head) => {
                self.pos += N;
                Ok(*head)
            }
            None => Err(truncated(what, N, self.left())),
        }
    }

    #[inline]
    fn byte(&mut self, what: &str) -> Result<u8> {
        match self.input.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(truncated(what, 1, 0)),
        }
    }

    /// A varint of a type `bits` wide (at most 64): markers for wider types are errors, as in
    /// bincode. In 64-bit arithmetic, so the result stays in a register (a `Result<u128>` goes
    /// through memory: reading every integer as one cost 11 ns per 60-byte row). Inlined into
    /// each call site (with `bits` a constant there) as a chain of compares rather than one
    /// shared jump table: a struct's fields each take their own, well-predicted branch (a shared
    /// indirect jump mispredicted about twice per decoded row in the scan benchmark).
    #[inline(always)]
    fn varint64(&mut self, bits: u32, what: &str) -> Result<u64> {
        let first = self.byte(what)?;
        if first < U16_MARKER {
            return Ok(u64::from(first));
        }
        if first == U16_MARKER {
            Ok(u64::from(u16::from_le_bytes(self.array(what)?)))
        } else if bits >= 32 && first == U32_MARKER {
            Ok(u64::from(u32::from_le_bytes(self.array(what)?)))
        } else if bits >= 64 && first == U64_MARKER {
            Ok(u64::from_le_bytes(self.array(what)?))
        } else {
            Err(invalid_marker(what, first, bits))
        }
    }

    /// A varint of a 128-bit type: the `u128` form, or any narrower one.
    #[inline]
    fn varint(&mut self, bits: u32, what: &str) -> Result<u128> {
        if self.input.get(self.pos) == Some(&U128_MARKER) {
            self.pos += 1;
            return Ok(u128::from_le_bytes(self.array(what)?));
        }
        self.varint64(bits, what).map(u128::from)
    }

    #[inline]
    fn signed64(&mut self, bits: u32, what: &str) -> Result<i64> {
        let z = self.varint64(bits, what)?;
        Ok(if z & 1 == 0 {
            (z >> 1) as i64
        } else {
            !((z >> 1) as i64)
        })
    }

    #[inline]
    fn signed(&mut self, bits: u32, what: &str) -> Result<i128> {
        let z = self.varint(bits, what)?;
        // Zigzag, within the type's width: 0, -1, 1, -2, ... ↔ 0, 1, 2, 3, ...
        Ok(if z & 1 == 0 {
            (z >> 1) as i128
        } else {
            !((z >> 1) as i128)
        })
    }

    /// A length prefix (a `u64` varint). Byte strings check it against the input before
    /// taking anything; sequences and maps need not, since serde's collections preallocate at
    /// most 1 MiB whatever the claim, and a claim the input cannot back fails at the first
    /// missing element.
    #[inline]
    fn len(&mut self, what: &str) -> Result<usize> {
        let n = self.varint64(64, what)?;
        usize::try_from(n)
            .map_err(|_| Error::msg(format!("{what}: length {n} does not fit in usize")))
    }

    #[inline]
    fn bytes_len(&mut self, what: &str) -> Result<&'de [u8]> {
        let n = self.len(what)?;
        if n > self.left() {
            return Err(Error::msg(format!(
                "{what}: length {n} is longer than the {} byte(s) left",
                self.left()
            )));
        }
        self.take(n, what)
    }

    #[inline]
    fn str(&mut self) -> Result<&'de str> {
        let bytes = self.bytes_len("string")?;
        crate::engine::text::utf8(bytes)
            .map_err(|e| Error::msg(format!("string: invalid UTF-8: {e}")))
    }

    fn char(&mut self) -> Result<char> {
        let first = self.byte("char")?;
        let width = match first {
            0x00..=0x7f => return Ok(char::from(first)),
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => {
                return Err(Error::msg(format!(
                    "char: invalid UTF-8 lead byte 0x{first:02x}"
                )));
            }
        };
        let mut buf = [first, 0, 0, 0];
        buf[1..width].copy_from_slice(self.take(width - 1, "char")?);
        std::str::from_utf8(&buf[..width])
            .ok()
            .and_then(|s| s.chars().next())
            .ok_or_else(|| Error::msg("char: invalid UTF-8".into()))
    }

    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::msg(format!(
                "the value nests deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(())
    }
}

macro_rules! unsigned {
    ($($method:ident $visit:ident $t:ty => $bits:literal $read:ident),*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let n = self.$read($bits, stringify!($t))?;
            visitor.$visit(n as $t)
        }
    )*};
}

macro_rules! signed {
    ($($method:ident $visit:ident $t:ty => $bits:literal $read:ident),*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let n = self.$read($bits, stringify!($t))?;
            visitor.$visit(n as $t)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value> {
        Err(Error::msg(
            "bincode does not describe itself: `deserialize_any` is not supported".into(),
        ))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value> {
        Err(Error::msg(
            "bincode does not describe itself: `deserialize_ignored_any` is not supported".into(),
        ))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value> {
        Err(Error::msg("bincode does not store identifiers".into()))
    }

    #[inline]
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.byte("bool")? {
            0 => visitor.visit_bool(false),
            1 => visitor.visit_bool(true),
            b => Err(Error::msg(format!(
                "bool: expected 0 or 1, found 0x{b:02x}"
            ))),
        }
    }

    #[inline]
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_u8(self.byte("u8")?)
    }

    #[inline]
    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_i8(self.byte("i8")? as i8)
    }

    unsigned!(
        deserialize_u16 visit_u16 u16 => 16 varint64,
        deserialize_u32 visit_u32 u32 => 32 varint64,
        deserialize_u64 visit_u64 u64 => 64 varint64,
        deserialize_u128 visit_u128 u128 => 128 varint
    );
    signed!(
        deserialize_i16 visit_i16 i16 => 16 signed64,
        deserialize_i32 visit_i32 i32 => 32 signed64,
        deserialize_i64 visit_i64 i64 => 64 signed64,
        deserialize_i128 visit_i128 i128 => 128 signed
    );

    #[inline]
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_f32(f32::from_le_bytes(self.array("f32")?))
    }

    #[inline]
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_f64(f64::from_le_bytes(self.array("f64")?))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_char(self.char()?)
    }

    #[inline]
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_borrowed_str(self.str()?)
    }

    #[inline]
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_borrowed_str(self.str()?)
    }

    #[inline]
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_borrowed_bytes(self.bytes_len("byte string")?)
    }

    #[inline]
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_borrowed_bytes(self.bytes_len("byte string")?)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.byte("Option tag")? {
            0 => visitor.visit_none(),
            1 => {
                self.enter()?;
                let v = visitor.visit_some(&mut *self);
                self.depth -= 1;
                v
            }
            t => Err(Error::msg(format!(
                "Option: expected tag 0 or 1, found 0x{t:02x}"
            ))),
        }
    }

    #[inline]
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    #[inline]
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_unit()
    }

    #[inline]
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    #[inline]
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let len = self.len("sequence length")?;
        self.deserialize_tuple(len, visitor)
    }

    #[inline]
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        self.enter()?;
        let v = visitor.visit_seq(Seq {
            de: &mut *self,
            left: len,
        });
        self.depth -= 1;
        v
    }

    #[inline]
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_tuple(len, visitor)
    }

    #[inline]
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let len = self.len("map length")?;
        self.enter()?;
        let v = visitor.visit_map(Seq {
            de: &mut *self,
            left: len,
        });
        self.depth -= 1;
        v
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_tuple(fields.len(), visitor)
    }

    #[inline]
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.enter()?;
        let v = visitor.visit_enum(&mut *self);
        self.depth -= 1;
        v
    }

    fn is_human_readable(&self) -> bool {
        false
    }
}

/// The elements of a sequence, tuple, struct or map.
struct Seq<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Seq<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    #[inline]
    fn size_hint(&self) -> Option<usize> {
        // serde's collections preallocate at most 1 MiB from a hint, whatever it says.
        Some(self.left)
    }
}

impl<'de> de::MapAccess<'de> for Seq<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(&mut *self.de)
    }

    #[inline]
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> de::EnumAccess<'de> for &mut Deserializer<'de> {
    type Error = Error;
    type Variant = Self;

    #[inline]
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let index = self.varint64(32, "enum variant index")? as u32;
        let value = seed.deserialize(index.into_deserializer())?;
        Ok((value, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut Deserializer<'de> {
    type Error = Error;

    #[inline]
    fn unit_variant(self) -> Result<()> {
        Ok(())
    }

    #[inline]
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }

    #[inline]
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_tuple(self, len, visitor)
    }

    #[inline]
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_tuple(self, fields.len(), visitor)
    }
}
