//! Keys whose type is known only at run time: a [`KeyShape`] parsed from the descriptor a
//! schema record stores (or taken from a [`Descriptor`]), and [`DynKey`] values it encodes and
//! decodes.
//!
//! The encoding is the one the static codecs write; the variable-length parts and `Option` tags
//! go through the same functions (`bytes.rs`, `composite.rs`), and the property tests in
//! `tests/dynamic_keys.rs` check that both sides produce the same bytes for every key
//! kind.

use std::fmt;

use crate::codec::key::{KeyBuf, NONE, SOME, decode_bytes_part, encode_bytes_part, take_array};
use crate::codec::{DecodeError, EncodeError};
use crate::schema::Descriptor;
use crate::schema::descriptor;

/// The structure of a key encoding, known at run time.
///
/// Its [`Display`](fmt::Display) form is the descriptor the schema record stores (the same text as
/// the static [`Descriptor`]), and [`KeyShape::parse`] reads it back:
///
/// ```
/// use tabula_core::AsKey;
/// use tabula_core::untyped::{DynKey, KeyShape};
///
/// let shape = KeyShape::parse("(str, u64)")?;
/// let key = DynKey::Tuple(vec![DynKey::Str("alice".into()), DynKey::Unsigned(5)]);
/// let bytes = shape.encode(&key)?;
/// // The bytes the typed codec writes for the key `("alice", 5)` of a `(String, u64)` table.
/// assert_eq!(bytes, AsKey::<(String, u64)>::encode(&("alice", 5u64)).as_ref());
/// assert_eq!(shape.decode(&bytes)?, key);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyShape {
    /// `()`: no bytes.
    Unit,
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// An unsigned integer of this many bits (8 to 128), big-endian.
    Unsigned(u32),
    /// A signed integer of this many bits (8 to 128), big-endian with the sign bit flipped.
    Signed(u32),
    /// A `char`: its scalar value as a big-endian `u32`.
    Char,
    /// `[u8; N]`: the bytes as they are.
    Array(usize),
    /// A byte string: raw when last in a key, escaped and terminated otherwise.
    Bytes,
    /// A UTF-8 string, encoded like [`KeyShape::Bytes`].
    Str,
    /// `Option<T>`: a tag byte (0 `None`, 1 `Some`), then the value.
    Option(Box<KeyShape>),
    /// A tuple: its parts in order.
    Tuple(Vec<KeyShape>),
    /// A `#[derive(Key)]` struct: its fields in order.
    Struct {
        /// The struct's name.
        name: String,
        /// Field names and shapes, in declaration order.
        fields: Vec<(String, KeyShape)>,
    },
    /// A `u32` or `u64` stored native-endian (an `integer_key` table).
    NativeInteger(u32),
}

/// A key value whose type is known at run time, as a [`KeyShape`] encodes and decodes it.
///
/// Integers of every width are held as `u128` / `i128`; tuples and `#[derive(Key)]` structs are
/// both [`DynKey::Tuple`] (the shape knows the field names).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DynKey {
    /// `()`.
    Unit,
    /// A `bool`.
    Bool(bool),
    /// An unsigned integer (also a native-endian `integer_key`).
    Unsigned(u128),
    /// A signed integer.
    Signed(i128),
    /// A `char`.
    Char(char),
    /// `[u8; N]` or a byte string.
    Bytes(Vec<u8>),
    /// A string.
    Str(String),
    /// `None` or `Some(key)`.
    Option(Option<Box<DynKey>>),
    /// The parts of a tuple, or the fields of a struct, in order.
    Tuple(Vec<DynKey>),
}

impl KeyShape {
    /// The shape of a key descriptor; `None` for a value codec's descriptor (`bincode`, `raw`,
    /// a custom codec), which describes no key.
    ///
    /// ```
    /// use tabula_core::untyped::KeyShape;
    /// use tabula_core::{Descriptor, Key};
    ///
    /// let shape = KeyShape::of(&<(String, Option<u32>)>::DESCRIPTOR).unwrap();
    /// assert_eq!(shape.to_string(), "(str, Option<u32>)");
    /// assert_eq!(KeyShape::of(&Descriptor::Bincode), None);
    /// ```
    pub fn of(d: &Descriptor) -> Option<KeyShape> {
        // Derived from the descriptor's text, as a shape read from a file is: the two cannot
        // differ. A value codec's descriptor (`bincode`, `raw`, ...) is no key and does not parse.
        KeyShape::parse(&d.to_string()).ok()
    }

    /// Parses a key descriptor as the schema record stores it (`u64`, `(str, u64)`,
    /// `SlotKey { addr: [u8; 20], slot: i32 }`, `u64 native-endian`).
    ///
    /// ```
    /// use tabula_core::untyped::KeyShape;
    ///
    /// let shape = KeyShape::parse("SlotKey { addr: [u8; 20], slot: i32 }")?;
    /// assert_eq!(shape.to_string(), "SlotKey { addr: [u8; 20], slot: i32 }");
    /// assert!(KeyShape::parse("f64").is_err());
    /// # Ok::<(), tabula_core::DecodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`DecodeError`] naming the descriptor and where it stops making sense.
    pub fn parse(descriptor: &str) -> Result<KeyShape, DecodeError> {
        let mut p = Parser {
            s: descriptor.as_bytes(),
            at: 0,
        };
        p.shape()
            .and_then(|shape| {
                p.ws();
                if p.at == p.s.len() {
                    Ok(shape)
                } else {
                    Err(format!("unexpected text at byte {}", p.at))
                }
            })
            .map_err(|e| {
                DecodeError::new(format!("key descriptor `{descriptor}` does not parse: {e}"))
            })
    }

    /// `Some(n)` when every key of this shape encodes to exactly `n` bytes.
    pub fn fixed_size(&self) -> Option<usize> {
        match self {
            KeyShape::Unit => Some(0),
            KeyShape::Bool => Some(1),
            KeyShape::Unsigned(bits) | KeyShape::Signed(bits) | KeyShape::NativeInteger(bits) => {
                Some(*bits as usize / 8)
            }
            KeyShape::Char => Some(4),
            KeyShape::Array(n) => Some(*n),
            KeyShape::Bytes | KeyShape::Str | KeyShape::Option(_) => None,
            KeyShape::Tuple(parts) => parts.iter().map(KeyShape::fixed_size).sum(),
            KeyShape::Struct { fields, .. } => fields.iter().map(|(_, s)| s.fixed_size()).sum(),
        }
    }

    /// Encodes `key` as a whole key: the bytes the table stores.
    ///
    /// ```
    /// use tabula_core::untyped::{DynKey, KeyShape};
    ///
    /// assert_eq!(KeyShape::Signed(16).encode(&DynKey::Signed(-1))?, [0x7f, 0xff]);
    /// assert!(KeyShape::Unsigned(8).encode(&DynKey::Unsigned(256)).is_err());
    /// # Ok::<(), tabula_core::EncodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when `key` does not have this shape (a string for an integer, a number
    /// out of range, a wrong number of tuple parts).
    pub fn encode(&self, key: &DynKey) -> Result<Vec<u8>, EncodeError> {
        let mut out = KeyBuf::new();
        self.encode_part(key, &mut out, true)?;
        Ok(out.as_slice().to_vec())
    }

    /// Appends `key` as one part of a composite key (`last` as in
    /// [`AsKey::encode_part`](crate::AsKey::encode_part)).
    ///
    /// # Errors
    ///
    /// As [`encode`](Self::encode).
    pub fn encode_part(
        &self,
        key: &DynKey,
        out: &mut KeyBuf,
        last: bool,
    ) -> Result<(), EncodeError> {
        let mismatch = || EncodeError::new(format!("a key of shape `{self}` cannot hold {key:?}"));
        match (self, key) {
            (KeyShape::Unit, DynKey::Unit) => {}
            (KeyShape::Bool, DynKey::Bool(b)) => out.push(u8::from(*b)),
            (KeyShape::Unsigned(bits), DynKey::Unsigned(n)) => {
                let n = fit_unsigned(*n, *bits)?;
                out.extend_from_slice(&n.to_be_bytes()[16 - width(*bits)..]);
            }
            (KeyShape::Signed(bits), DynKey::Signed(n)) => {
                let n = fit_signed(*n, *bits)?;
                let flipped = (n as u128) ^ (1u128 << (bits - 1));
                out.extend_from_slice(&flipped.to_be_bytes()[16 - width(*bits)..]);
            }
            (KeyShape::NativeInteger(bits), DynKey::Unsigned(n)) => {
                let n = fit_unsigned(*n, *bits)?;
                match bits {
                    32 => out.extend_from_slice(&(n as u32).to_ne_bytes()),
                    _ => out.extend_from_slice(&(n as u64).to_ne_bytes()),
                }
            }
            (KeyShape::Char, DynKey::Char(c)) => {
                out.extend_from_slice(&u32::from(*c).to_be_bytes())
            }
            (KeyShape::Array(n), DynKey::Bytes(b)) => {
                if b.len() != *n {
                    return Err(EncodeError::new(format!(
                        "a key part of shape `{self}` takes exactly {n} bytes, not {}",
                        b.len()
                    )));
                }
                out.extend_from_slice(b);
            }
            (KeyShape::Bytes, DynKey::Bytes(b)) => encode_bytes_part(b, out, last),
            (KeyShape::Str, DynKey::Str(s)) => encode_bytes_part(s.as_bytes(), out, last),
            (KeyShape::Option(_), DynKey::Option(None)) => out.push(NONE),
            (KeyShape::Option(inner), DynKey::Option(Some(k))) => {
                out.push(SOME);
                inner.encode_part(k, out, last)?;
            }
            (KeyShape::Tuple(parts), DynKey::Tuple(items)) => {
                encode_parts(self, parts.iter(), items, out, last)?;
            }
            (KeyShape::Struct { fields, .. }, DynKey::Tuple(items)) => {
                encode_parts(self, fields.iter().map(|(_, s)| s), items, out, last)?;
            }
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    /// Decodes a whole stored key; every byte must be used.
    ///
    /// ```
    /// use tabula_core::untyped::{DynKey, KeyShape};
    ///
    /// let shape = KeyShape::parse("Option<str>")?;
    /// assert_eq!(shape.decode(&[0])?, DynKey::Option(None));
    /// assert!(shape.decode(&[7]).is_err());
    /// # Ok::<(), tabula_core::DecodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the bytes are not a key of this shape.
    pub fn decode(&self, bytes: &[u8]) -> Result<DynKey, DecodeError> {
        let mut input = bytes;
        let key = self.decode_part(&mut input, true)?;
        if input.is_empty() {
            Ok(key)
        } else {
            Err(DecodeError::new(format!(
                "{} byte(s) left over after decoding a key of shape `{self}`",
                input.len()
            )))
        }
    }

    /// Decodes one key part from the front of `input`, advancing it (`last` as in
    /// [`Key::decode_part`](crate::Key::decode_part)).
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode).
    pub fn decode_part(&self, input: &mut &[u8], last: bool) -> Result<DynKey, DecodeError> {
        Ok(match self {
            KeyShape::Unit => DynKey::Unit,
            KeyShape::Bool => match take_array::<1>(input, "bool")? {
                [0] => DynKey::Bool(false),
                [1] => DynKey::Bool(true),
                [b] => {
                    return Err(DecodeError::new(format!(
                        "bool: expected 0x00 or 0x01, found 0x{b:02x}"
                    )));
                }
            },
            KeyShape::Unsigned(bits) => DynKey::Unsigned(take_be(input, *bits, self)?),
            KeyShape::Signed(bits) => {
                let raw = take_be(input, *bits, self)? ^ (1u128 << (bits - 1));
                // Sign-extend from `bits` to 128.
                let shift = 128 - bits;
                DynKey::Signed(((raw << shift) as i128) >> shift)
            }
            KeyShape::NativeInteger(bits) => DynKey::Unsigned(match bits {
                32 => u128::from(u32::from_ne_bytes(take_array(input, "u32 native-endian")?)),
                _ => u128::from(u64::from_ne_bytes(take_array(input, "u64 native-endian")?)),
            }),
            KeyShape::Char => {
                let scalar = u32::from_be_bytes(take_array(input, "char")?);
                DynKey::Char(char::from_u32(scalar).ok_or_else(|| {
                    DecodeError::new(format!(
                        "char: 0x{scalar:08x} is not a Unicode scalar value"
                    ))
                })?)
            }
            KeyShape::Array(n) => {
                if input.len() < *n {
                    return Err(DecodeError::truncated("byte array", *n, input.len()));
                }
                let (head, rest) = input.split_at(*n);
                *input = rest;
                DynKey::Bytes(head.to_vec())
            }
            KeyShape::Bytes => DynKey::Bytes(decode_bytes_part(input, last, "bytes")?),
            KeyShape::Str => {
                let bytes = decode_bytes_part(input, last, "str")?;
                DynKey::Str(String::from_utf8(bytes).map_err(|e| {
                    DecodeError::new(format!("str: invalid UTF-8: {}", e.utf8_error()))
                })?)
            }
            KeyShape::Option(inner) => match take_array::<1>(input, "Option tag")? {
                [NONE] => DynKey::Option(None),
                [SOME] => DynKey::Option(Some(Box::new(inner.decode_part(input, last)?))),
                [tag] => {
                    return Err(DecodeError::new(format!(
                        "Option: expected tag 0x00 (None) or 0x01 (Some), found 0x{tag:02x}"
                    )));
                }
            },
            KeyShape::Tuple(parts) => DynKey::Tuple(decode_parts(parts.iter(), input, last)?),
            KeyShape::Struct { fields, .. } => {
                DynKey::Tuple(decode_parts(fields.iter().map(|(_, s)| s), input, last)?)
            }
        })
    }
}

fn width(bits: u32) -> usize {
    bits as usize / 8
}

fn fit_unsigned(n: u128, bits: u32) -> Result<u128, EncodeError> {
    if bits < 128 && n >> bits != 0 {
        return Err(EncodeError::new(format!("{n} does not fit in u{bits}")));
    }
    Ok(n)
}

fn fit_signed(n: i128, bits: u32) -> Result<i128, EncodeError> {
    if bits < 128 {
        let half = 1i128 << (bits - 1);
        if n < -half || n >= half {
            return Err(EncodeError::new(format!("{n} does not fit in i{bits}")));
        }
    }
    Ok(n)
}

/// Takes a big-endian integer of `bits` bits.
fn take_be(input: &mut &[u8], bits: u32, shape: &KeyShape) -> Result<u128, DecodeError> {
    let n = width(bits);
    if input.len() < n {
        return Err(DecodeError::truncated(&shape.to_string(), n, input.len()));
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    let mut buf = [0u8; 16];
    buf[16 - n..].copy_from_slice(head);
    Ok(u128::from_be_bytes(buf))
}

/// Encodes the parts of a tuple or struct; only the final one inherits `last`.
fn encode_parts<'s>(
    whole: &KeyShape,
    shapes: impl ExactSizeIterator<Item = &'s KeyShape>,
    items: &[DynKey],
    out: &mut KeyBuf,
    last: bool,
) -> Result<(), EncodeError> {
    let n = shapes.len();
    if items.len() != n {
        return Err(EncodeError::new(format!(
            "a key of shape `{whole}` has {n} part(s), not {}",
            items.len()
        )));
    }
    for (i, (shape, item)) in shapes.zip(items).enumerate() {
        shape.encode_part(item, out, last && i + 1 == n)?;
    }
    Ok(())
}

fn decode_parts<'s>(
    shapes: impl ExactSizeIterator<Item = &'s KeyShape>,
    input: &mut &[u8],
    last: bool,
) -> Result<Vec<DynKey>, DecodeError> {
    let n = shapes.len();
    shapes
        .enumerate()
        .map(|(i, shape)| shape.decode_part(input, last && i + 1 == n))
        .collect()
}

/// The key descriptor's text, rendered by [`Descriptor`]'s own code: a scalar part as the
/// descriptor it is, a composite one with the descriptor's writers.
impl fmt::Display for KeyShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scalar = match self {
            KeyShape::Option(inner) => return descriptor::write_option(f, inner),
            KeyShape::Tuple(parts) => return descriptor::write_tuple(f, parts),
            KeyShape::Struct { name, fields } => {
                let fields = fields.iter().map(|(field, shape)| (field.as_str(), shape));
                return descriptor::write_struct(f, name, fields);
            }
            KeyShape::Unit => Descriptor::Unit,
            KeyShape::Bool => Descriptor::Bool,
            KeyShape::Unsigned(bits) => Descriptor::Unsigned(*bits),
            KeyShape::Signed(bits) => Descriptor::Signed(*bits),
            KeyShape::Char => Descriptor::Char,
            KeyShape::Array(n) => Descriptor::Array(*n),
            KeyShape::Bytes => Descriptor::Bytes,
            KeyShape::Str => Descriptor::Str,
            KeyShape::NativeInteger(bits) => Descriptor::NativeInteger(*bits),
        };
        fmt::Display::fmt(&scalar, f)
    }
}

/// A recursive-descent parser of the descriptor text [`Descriptor`]'s `Display` writes.
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.ws();
        if self.s[self.at..].starts_with(token.as_bytes()) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(format!("expected `{token}` at byte {}", self.at))
        }
    }

    /// An identifier or path (`a::b::C`); a single `:` ends it (a field name). Identifiers may
    /// hold any letter or digit, as Rust's do (`Clé`).
    fn ident(&mut self) -> String {
        self.ws();
        // The text is a `&str` and every token before here is ASCII: `at` is a char boundary.
        let rest = std::str::from_utf8(&self.s[self.at..]).unwrap_or("");
        let mut len = rest.len();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            if c.is_alphanumeric() || c == '_' {
                continue;
            }
            if c == ':' && rest[i + 1..].starts_with(':') {
                chars.next();
                continue;
            }
            len = i;
            break;
        }
        self.at += len;
        rest[..len].to_string()
    }

    fn shape(&mut self) -> Result<KeyShape, String> {
        if self.eat("(") {
            if self.eat(")") {
                return Ok(KeyShape::Unit);
            }
            let mut parts = Vec::new();
            loop {
                parts.push(self.shape()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
                if self.eat(")") {
                    break;
                }
            }
            return Ok(KeyShape::Tuple(parts));
        }
        if self.eat("[") {
            self.expect("u8")?;
            self.expect(";")?;
            let n = self.ident();
            let n = n
                .parse()
                .map_err(|_| format!("expected an array length, got `{n}`"))?;
            self.expect("]")?;
            return Ok(KeyShape::Array(n));
        }
        let word = self.ident();
        let bits = |w: &str| {
            w.get(1..)
                .and_then(|b| b.parse::<u32>().ok())
                .filter(|b| [8, 16, 32, 64, 128].contains(b))
        };
        Ok(match word.as_str() {
            "" => return Err(format!("expected a type at byte {}", self.at)),
            "bool" => KeyShape::Bool,
            "char" => KeyShape::Char,
            "bytes" => KeyShape::Bytes,
            "str" => KeyShape::Str,
            "Option" => {
                self.expect("<")?;
                let inner = self.shape()?;
                self.expect(">")?;
                KeyShape::Option(Box::new(inner))
            }
            w if w.starts_with('u') && bits(w).is_some() => {
                let b = bits(w).unwrap_or(64);
                if self.eat("native-endian") {
                    if b != 32 && b != 64 {
                        return Err(format!(
                            "a native-endian integer key is u32 or u64, not {w}"
                        ));
                    }
                    KeyShape::NativeInteger(b)
                } else {
                    KeyShape::Unsigned(b)
                }
            }
            w if w.starts_with('i') && bits(w).is_some() => KeyShape::Signed(bits(w).unwrap_or(64)),
            _ => {
                if !self.eat("{") {
                    return Err(format!("`{word}` is not a key type"));
                }
                let mut fields = Vec::new();
                while !self.eat("}") {
                    let name = self.ident();
                    if name.is_empty() {
                        return Err(format!("expected a field name at byte {}", self.at));
                    }
                    self.expect(":")?;
                    fields.push((name, self.shape()?));
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                KeyShape::Struct { name: word, fields }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_descriptors_render() {
        for d in [
            "u64",
            "i32",
            "u128",
            "bool",
            "char",
            "()",
            "[u8; 20]",
            "bytes",
            "str",
            "Option<str>",
            "(str, u64)",
            "(bool,)",
            "SlotKey { addr: [u8; 20], slot: i32 }",
            "a::b::K { x: Option<(u8, str)> }",
            "u64 native-endian",
            "(u64, Option<str>, (bool,))",
        ] {
            assert_eq!(KeyShape::parse(d).unwrap().to_string(), d);
        }
    }

    /// `of` reads the descriptor's text back, so it has a shape for every key a derive can
    /// declare, names outside ASCII included (Rust identifiers may hold any letter), and none
    /// for a value codec's descriptor.
    #[test]
    fn every_key_descriptor_has_the_shape_of_its_text() {
        const KEYS: &[Descriptor] = &[
            Descriptor::Unsigned(64),
            Descriptor::NativeInteger(32),
            Descriptor::Array(20),
            Descriptor::Option(&Descriptor::Str),
            Descriptor::Tuple(&[Descriptor::Bytes, Descriptor::Char, Descriptor::Unit]),
            Descriptor::Struct {
                name: "Clé",
                fields: &[("année", Descriptor::Signed(16)), ("x_1", Descriptor::Bool)],
            },
            Descriptor::Struct {
                name: "a::b::K",
                fields: &[("p", Descriptor::Tuple(&[Descriptor::Unsigned(8)]))],
            },
        ];
        for d in KEYS {
            let shape = KeyShape::of(d).unwrap_or_else(|| panic!("no shape for `{d}`"));
            assert_eq!(shape.to_string(), d.to_string());
        }
        assert_eq!(KeyShape::of(&KEYS[5]).and_then(|s| s.fixed_size()), Some(3));
        for value in [
            Descriptor::Bincode,
            Descriptor::Raw,
            Descriptor::Custom("point-v1"),
            Descriptor::Pod(8),
            Descriptor::Zstd(&Descriptor::Raw),
            Descriptor::Ordered(&Descriptor::Unsigned(64)),
            Descriptor::SubKeyed {
                subkey: &Descriptor::Str,
                value: &Descriptor::Bincode,
            },
        ] {
            assert_eq!(KeyShape::of(&value), None, "{value}");
        }
    }

    #[test]
    fn refuses_what_no_key_renders() {
        for d in [
            "f64",
            "",
            "(u64",
            "[u8; x]",
            "u7",
            "u16 native-endian",
            "Option<u8",
            "K { a }",
            "u64 u64",
        ] {
            let err = KeyShape::parse(d).unwrap_err();
            assert!(err.message().contains(&format!("`{d}`")), "{d}: {err}");
        }
    }

    #[test]
    fn shape_mismatch_and_range_are_errors() {
        let s = KeyShape::parse("(str, i8)").unwrap();
        assert!(s.encode(&DynKey::Str("a".into())).is_err());
        let short = DynKey::Tuple(vec![DynKey::Str("a".into())]);
        assert!(
            s.encode(&short)
                .unwrap_err()
                .message()
                .contains("2 part(s), not 1")
        );
        let big = DynKey::Tuple(vec![DynKey::Str("a".into()), DynKey::Signed(-129)]);
        assert_eq!(
            s.encode(&big).unwrap_err().message(),
            "-129 does not fit in i8"
        );
        let ok = DynKey::Tuple(vec![DynKey::Str("a\0b".into()), DynKey::Signed(-128)]);
        let bytes = s.encode(&ok).unwrap();
        assert_eq!(bytes, [b'a', 0, 0xff, b'b', 0, 0, 0]);
        assert_eq!(s.decode(&bytes).unwrap(), ok);
        assert!(KeyShape::Array(2).encode(&DynKey::Bytes(vec![1])).is_err());
    }

    #[test]
    fn fixed_sizes() {
        assert_eq!(
            KeyShape::parse("(u64, [u8; 20], bool)")
                .unwrap()
                .fixed_size(),
            Some(29)
        );
        assert_eq!(KeyShape::parse("(u64, str)").unwrap().fixed_size(), None);
        assert_eq!(
            KeyShape::parse("u32 native-endian").unwrap().fixed_size(),
            Some(4)
        );
    }
}
