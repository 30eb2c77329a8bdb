//! Values whose type is known only at run time: a [`ValueShape`] built from what a schema record
//! stores about a table's values, and the [`DynValue`]s it decodes and encodes.
//!
//! For [`Bincode<T>`](crate::codec::Bincode) tables the record holds `T`'s structure as serde
//! sees it (traced with `serde-reflection`); the shape walks bincode 2's standard encoding
//! (little-endian, variable-length integers, zigzag for signed ones, a varint length before
//! strings, sequences and maps, a varint variant index before an enum's contents) along that
//! structure. [`Raw`](crate::codec::Raw) values are their bytes.

use std::fmt;

use serde_reflection::{ContainerFormat, Format, Named, Registry, VariantFormat};

use super::key::{DynKey, KeyShape};
use crate::codec::bincode_ser::zigzag128 as zigzag;
use crate::codec::{DecodeError, EncodeError};

/// How a table's values are encoded, known at run time; see [`ValueShape::of_record`].
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use tabula_core::untyped::{DynValue, ValueShape};
/// use tabula_core::{Bincode, Value};
///
/// #[derive(Serialize, Deserialize)]
/// struct Header { number: u64, miner: String }
///
/// let shape = ValueShape::of_record("bincode<Header>", Bincode::<Header>::shape().as_deref())?
///     .expect("a bincode value with a recorded shape");
/// let header = Header { number: 7, miner: "ann".into() };
/// let mut scratch = Vec::new();
/// let bytes = Bincode::<Header>::encode(&header, &mut scratch)?;
/// let value = shape.decode(bytes)?;
/// assert_eq!(
///     value,
///     DynValue::Struct(vec![
///         ("number".into(), DynValue::Unsigned(7)),
///         ("miner".into(), DynValue::Str("ann".into())),
///     ])
/// );
/// assert_eq!(shape.encode(&value)?, bytes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct ValueShape {
    pub(crate) repr: Repr,
}

/// The encodings a [`ValueShape`] stands for (crate-visible for the JSON forms of
/// `untyped/json.rs`, which walk it).
#[derive(Clone, PartialEq)]
pub(crate) enum Repr {
    Raw,
    Bincode {
        format: Format,
        registry: Registry,
    },
    /// A dupsort table's values in their key encoding ([`Ordered`](crate::codec::Ordered)).
    Ordered(KeyShape),
    /// A dupsort table's `(subkey, value)` pairs ([`SubKeyed`](crate::codec::SubKeyed)).
    SubKeyed {
        subkey: KeyShape,
        value: Box<ValueShape>,
    },
    /// Values of the inner shape, each compressed as one zstd frame (`Zstd`), with the
    /// dictionary of this name (`ZstdDict`) when there is one.
    #[cfg(feature = "compression")]
    Zstd(Box<ValueShape>, Option<String>),
}

impl fmt::Debug for ValueShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Raw => f.write_str("ValueShape(raw)"),
            Repr::Bincode { format, .. } => write!(f, "ValueShape(bincode {format:?})"),
            Repr::Ordered(key) => write!(f, "ValueShape(ordered {key})"),
            Repr::SubKeyed { subkey, value } => {
                write!(f, "ValueShape(subkey {subkey} + {value:?})")
            }
            #[cfg(feature = "compression")]
            Repr::Zstd(inner, None) => write!(f, "ValueShape(zstd {inner:?})"),
            #[cfg(feature = "compression")]
            Repr::Zstd(inner, Some(name)) => write!(f, "ValueShape(zstd_dict {name} {inner:?})"),
        }
    }
}

/// A value whose type is known at run time: serde's data model, as a [`ValueShape`] decodes it.
///
/// Integers of every width are `u128` / `i128`; newtype structs are their inner value; unit
/// structs are [`DynValue::Unit`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DynValue {
    /// `()` or a unit struct.
    Unit,
    /// A `bool`.
    Bool(bool),
    /// An unsigned integer.
    Unsigned(u128),
    /// A signed integer.
    Signed(i128),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A `char`.
    Char(char),
    /// A string.
    Str(String),
    /// A byte string (`serde_bytes`, or a raw value), or a byte array (`[u8; N]`).
    Bytes(Vec<u8>),
    /// `None` or `Some(value)`.
    Option(Option<Box<DynValue>>),
    /// A sequence, or a fixed-size array (which is how the recorded shape may describe a tuple
    /// whose parts all have one type).
    Seq(Vec<DynValue>),
    /// A tuple or a tuple struct.
    Tuple(Vec<DynValue>),
    /// A map's entries in stored order.
    Map(Vec<(DynValue, DynValue)>),
    /// A struct's fields in declaration order.
    Struct(Vec<(String, DynValue)>),
    /// An enum variant: its name, index and contents (`Unit` for a unit variant).
    Variant {
        /// The variant's name.
        name: String,
        /// Its index (bincode's tag).
        index: u32,
        /// Its contents.
        value: Box<DynValue>,
    },
}

/// Guards against absurd nesting in damaged or hostile data.
const MAX_DEPTH: usize = 256;

impl ValueShape {
    /// The shape of raw values: bytes as they are.
    pub fn raw() -> ValueShape {
        ValueShape { repr: Repr::Raw }
    }

    /// The shape a schema record describes: `descriptor` is the recorded value descriptor
    /// (`bincode<Header>`, `raw<Vec<u8>>`, `custom name<Type>`) and `shape` the recorded
    /// structure, when there is one.
    ///
    /// ```
    /// use tabula_core::untyped::ValueShape;
    ///
    /// assert_eq!(ValueShape::of_record("raw<Vec<u8>>", None)?, Some(ValueShape::raw()));
    /// // A hand-written codec, or a bincode value whose shape could not be traced: unknown.
    /// assert_eq!(ValueShape::of_record("custom point-v1<Point>", None)?, None);
    /// assert_eq!(ValueShape::of_record("bincode<Header>", None)?, None);
    /// # Ok::<(), tabula_core::DecodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the recorded structure does not parse.
    pub fn of_record(descriptor: &str, shape: Option<&str>) -> Result<Option<Self>, DecodeError> {
        if let Some(repr) = shape_of_record(descriptor, shape)? {
            return Ok(Some(ValueShape { repr }));
        }
        let codec = descriptor.split('<').next().unwrap_or_default();
        let compressed = match codec
            .strip_prefix("zstd(")
            .and_then(|inner| inner.strip_suffix(')'))
        {
            Some(inner) => Some((None, inner)),
            // `zstd_dict(<name>,<inner>)`: with a dictionary stored in the database.
            None => codec
                .strip_prefix("zstd_dict(")
                .and_then(|inner| inner.strip_suffix(')'))
                .and_then(|inner| inner.split_once(','))
                .map(|(name, inner)| (Some(name), inner)),
        };
        if let Some((dictionary, inner)) = compressed {
            // `zstd(bincode)<T>`: the inner codec's record, read through the compression (with
            // the `compression` feature; otherwise unknown, shown as bytes).
            #[cfg(feature = "compression")]
            {
                let value_type = &descriptor[codec.len()..];
                return Ok(
                    ValueShape::of_record(&format!("{inner}{value_type}"), shape)?.map(|inner| {
                        ValueShape {
                            repr: Repr::Zstd(Box::new(inner), dictionary.map(str::to_string)),
                        }
                    }),
                );
            }
            #[cfg(not(feature = "compression"))]
            {
                let _ = (dictionary, inner);
                return Ok(None);
            }
        }
        match (codec, shape) {
            ("raw", _) => Ok(Some(ValueShape::raw())),
            ("bincode", Some(shape)) => {
                let (format, registry): (Format, Registry) =
                    serde_json::from_str(shape).map_err(|e| {
                        DecodeError::new(format!("the recorded value shape does not parse ({e})"))
                    })?;
                Ok(Some(ValueShape {
                    repr: Repr::Bincode { format, registry },
                }))
            }
            _ => Ok(None),
        }
    }

    /// Decodes a stored value; every byte must be used.
    ///
    /// ```
    /// use tabula_core::untyped::{DynValue, ValueShape};
    ///
    /// assert_eq!(ValueShape::raw().decode(b"ab")?, DynValue::Bytes(b"ab".to_vec()));
    /// # Ok::<(), tabula_core::DecodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`DecodeError`] saying where the bytes stopped matching the shape.
    pub fn decode(&self, bytes: &[u8]) -> Result<DynValue, DecodeError> {
        let (format, registry) = match &self.repr {
            Repr::Raw => return Ok(DynValue::Bytes(bytes.to_vec())),
            Repr::Bincode { format, registry } => (format, registry),
            Repr::Ordered(key) => return decode_ordered(key, bytes),
            Repr::SubKeyed { subkey, value } => {
                let mut input = bytes;
                let subkey = key_value(subkey, subkey.decode_part(&mut input, false)?);
                return Ok(DynValue::Tuple(vec![subkey, value.decode(input)?]));
            }
            #[cfg(feature = "compression")]
            Repr::Zstd(inner, _) => {
                return inner.decode(&crate::codec::zstd_dict::decompress_frame(bytes)?);
            }
        };
        let mut d = Decoder {
            input: bytes,
            registry,
            depth: 0,
        };
        let v = d.format(format).map_err(DecodeError::new)?;
        if !d.input.is_empty() {
            return Err(DecodeError::new(format!(
                "{} byte(s) left over after the value",
                d.input.len()
            )));
        }
        Ok(v)
    }

    /// The subkey's key encoding, for the values of a `dupsort` table declared with a `subkey`
    /// ([`SubKeyed`](crate::codec::SubKeyed)): each value is stored as the subkey's self-delimiting
    /// key encoding ([`KeyShape::encode_part`] with `last = false`) followed by the value, so a
    /// key's values sort by subkey. `None` for every other codec.
    ///
    /// ```
    /// use tabula_core::codec::KeyBuf;
    /// use tabula_core::untyped::{DynKey, KeyShape, ValueShape};
    ///
    /// let shape = ValueShape::of_record(
    ///     "subkey u64 + raw<Vec<u8>>",
    ///     Some(r#"{"subkey": "u64", "value": "raw"}"#),
    /// )?
    /// .expect("a recorded subkey shape");
    /// let subkey = shape.subkey_shape().expect("a subkey table");
    /// assert_eq!(subkey, &KeyShape::Unsigned(64));
    /// // A key's values that have subkey 7 all begin with these bytes.
    /// let mut prefix = KeyBuf::new();
    /// subkey.encode_part(&DynKey::Unsigned(7), &mut prefix, false)?;
    /// assert_eq!(prefix.as_slice(), 7u64.to_be_bytes());
    /// assert_eq!(ValueShape::raw().subkey_shape(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn subkey_shape(&self) -> Option<&KeyShape> {
        match &self.repr {
            Repr::SubKeyed { subkey, .. } => Some(subkey),
            _ => None,
        }
    }

    /// Encodes a value into the bytes the table stores.
    ///
    /// ```
    /// use tabula_core::untyped::{DynValue, ValueShape};
    ///
    /// assert_eq!(ValueShape::raw().encode(&DynValue::Bytes(vec![1, 2]))?, [1, 2]);
    /// assert!(ValueShape::raw().encode(&DynValue::Bool(true)).is_err());
    /// # Ok::<(), tabula_core::EncodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when `value` does not have this shape.
    pub fn encode(&self, value: &DynValue) -> Result<Vec<u8>, EncodeError> {
        match &self.repr {
            Repr::Raw => match value {
                DynValue::Bytes(b) => Ok(b.clone()),
                other => Err(EncodeError::new(format!(
                    "a raw value is bytes, not {other:?}"
                ))),
            },
            Repr::Ordered(key) => key.encode(&value_key(key, value)?),
            #[cfg(feature = "compression")]
            Repr::Zstd(inner, None) => crate::codec::zstd::compress_frame(&inner.encode(value)?),
            #[cfg(feature = "compression")]
            Repr::Zstd(inner, Some(name)) => {
                crate::codec::zstd_dict::compress_frame_named(name, &inner.encode(value)?)
            }
            Repr::SubKeyed {
                subkey,
                value: shape,
            } => match value {
                DynValue::Tuple(parts) if parts.len() == 2 => {
                    let key = value_key(subkey, &parts[0])?;
                    let mut out = crate::codec::KeyBuf::new();
                    subkey.encode_part(&key, &mut out, false)?;
                    let mut bytes = out.as_slice().to_vec();
                    bytes.extend_from_slice(&shape.encode(&parts[1])?);
                    Ok(bytes)
                }
                other => Err(EncodeError::new(format!(
                    "a value with a subkey is a (subkey, value) pair, not {other:?}"
                ))),
            },
            Repr::Bincode { format, registry } => {
                let mut e = Encoder {
                    out: Vec::new(),
                    registry,
                    depth: 0,
                };
                e.format(format, value).map_err(EncodeError::new)?;
                Ok(e.out)
            }
        }
    }
}

struct Decoder<'a> {
    input: &'a [u8],
    registry: &'a Registry,
    depth: usize,
}

impl<'a> Decoder<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.input.len() < n {
            return Err(format!(
                "{what} needs {n} byte(s) but {} remain",
                self.input.len()
            ));
        }
        let (head, rest) = self.input.split_at(n);
        self.input = rest;
        Ok(head)
    }

    fn byte(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    fn fixed<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    /// bincode 2's varint: one byte up to 250, else a marker (251..=254) and a little-endian
    /// u16/u32/u64/u128.
    fn varint(&mut self, what: &str) -> Result<u128, String> {
        Ok(match self.byte(what)? {
            b @ 0..=250 => u128::from(b),
            251 => u128::from(u16::from_le_bytes(self.fixed(what)?)),
            252 => u128::from(u32::from_le_bytes(self.fixed(what)?)),
            253 => u128::from(u64::from_le_bytes(self.fixed(what)?)),
            254 => u128::from_le_bytes(self.fixed(what)?),
            b => return Err(format!("{what}: invalid varint marker {b:#04x}")),
        })
    }

    fn unsigned(&mut self, bits: u32, what: &str) -> Result<u128, String> {
        let n = self.varint(what)?;
        if bits < 128 && n >> bits != 0 {
            return Err(format!("{what}: {n} does not fit in u{bits}"));
        }
        Ok(n)
    }

    fn signed(&mut self, bits: u32, what: &str) -> Result<i128, String> {
        Ok(unzigzag(self.unsigned(bits, what)?))
    }

    fn len(&mut self, what: &str) -> Result<usize, String> {
        let n = self.varint(what)?;
        // Each element takes at least one byte, except zero-sized ones; a length beyond the
        // input is still allowed for those, but bounded to keep damaged data from looping long.
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.input.len().max(1 << 20))
            .ok_or_else(|| format!("{what}: length {n} is larger than the remaining input"))
    }

    fn format(&mut self, f: &Format) -> Result<DynValue, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("the value nests too deeply".into());
        }
        let v = self.format_inner(f);
        self.depth -= 1;
        v
    }

    fn format_inner(&mut self, f: &Format) -> Result<DynValue, String> {
        Ok(match f {
            Format::Variable(_) => return Err("the recorded shape is incomplete".into()),
            Format::TypeName(name) => {
                let c = self
                    .registry
                    .get(name)
                    .ok_or_else(|| format!("the recorded shape lacks type `{name}`"))?;
                self.container(name, c)?
            }
            Format::Unit => DynValue::Unit,
            Format::Bool => match self.byte("bool")? {
                0 => DynValue::Bool(false),
                1 => DynValue::Bool(true),
                b => return Err(format!("bool byte {b:#04x} is neither 0 nor 1")),
            },
            Format::I8 => DynValue::Signed(i128::from(self.byte("i8")? as i8)),
            Format::U8 => DynValue::Unsigned(u128::from(self.byte("u8")?)),
            Format::I16 => DynValue::Signed(self.signed(16, "i16")?),
            Format::I32 => DynValue::Signed(self.signed(32, "i32")?),
            Format::I64 => DynValue::Signed(self.signed(64, "i64")?),
            Format::I128 => DynValue::Signed(self.signed(128, "i128")?),
            Format::U16 => DynValue::Unsigned(self.unsigned(16, "u16")?),
            Format::U32 => DynValue::Unsigned(self.unsigned(32, "u32")?),
            Format::U64 => DynValue::Unsigned(self.unsigned(64, "u64")?),
            Format::U128 => DynValue::Unsigned(self.unsigned(128, "u128")?),
            Format::F32 => DynValue::F32(f32::from_le_bytes(self.fixed("f32")?)),
            Format::F64 => DynValue::F64(f64::from_le_bytes(self.fixed("f64")?)),
            Format::Char => DynValue::Char(self.char()?),
            Format::Str => {
                let n = self.len("string length")?;
                let b = self.take(n, "string")?;
                DynValue::Str(
                    std::str::from_utf8(b)
                        .map_err(|_| "a string is not UTF-8")?
                        .to_owned(),
                )
            }
            Format::Bytes => {
                let n = self.len("byte string length")?;
                DynValue::Bytes(self.take(n, "byte string")?.to_vec())
            }
            Format::Option(inner) => match self.byte("Option tag")? {
                0 => DynValue::Option(None),
                1 => DynValue::Option(Some(Box::new(self.format(inner)?))),
                t => return Err(format!("Option tag {t:#04x} is neither 0 nor 1")),
            },
            Format::Seq(inner) => {
                let n = self.len("sequence length")?;
                DynValue::Seq(self.repeat(inner, n)?)
            }
            Format::Map { key, value } => {
                let n = self.len("map length")?;
                let mut pairs = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    let k = self.format(key)?;
                    pairs.push((k, self.format(value)?));
                }
                DynValue::Map(pairs)
            }
            Format::Tuple(parts) => DynValue::Tuple(self.tuple(parts)?),
            // `[u8; N]`: its bytes, shown as hex like a byte string (bincode writes each `u8`
            // as one byte).
            Format::TupleArray { content, size } if **content == Format::U8 => {
                DynValue::Bytes(self.take(*size, "byte array")?.to_vec())
            }
            Format::TupleArray { content, size } => DynValue::Seq(self.repeat(content, *size)?),
        })
    }

    fn repeat(&mut self, f: &Format, n: usize) -> Result<Vec<DynValue>, String> {
        let mut out = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            out.push(self.format(f)?);
        }
        Ok(out)
    }

    fn char(&mut self) -> Result<char, String> {
        // bincode 2 writes a char as its UTF-8 bytes.
        let first = self.byte("char")?;
        let width = match first {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => return Err(format!("char: invalid UTF-8 lead byte {first:#04x}")),
        };
        let mut buf = [first, 0, 0, 0];
        buf[1..width].copy_from_slice(self.take(width - 1, "char")?);
        std::str::from_utf8(&buf[..width])
            .ok()
            .and_then(|s| s.chars().next())
            .ok_or_else(|| "char: invalid UTF-8".to_string())
    }

    fn tuple(&mut self, parts: &[Format]) -> Result<Vec<DynValue>, String> {
        parts.iter().map(|p| self.format(p)).collect()
    }

    fn fields(&mut self, fields: &[Named<Format>]) -> Result<DynValue, String> {
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            let v = self
                .format(&f.value)
                .map_err(|e| format!("field `{}`: {e}", f.name))?;
            out.push((f.name.clone(), v));
        }
        Ok(DynValue::Struct(out))
    }

    fn container(&mut self, name: &str, c: &ContainerFormat) -> Result<DynValue, String> {
        Ok(match c {
            ContainerFormat::UnitStruct => DynValue::Unit,
            ContainerFormat::NewTypeStruct(inner) => self.format(inner)?,
            ContainerFormat::TupleStruct(parts) => DynValue::Tuple(self.tuple(parts)?),
            ContainerFormat::Struct(fields) => self.fields(fields)?,
            ContainerFormat::Enum(variants) => {
                let index = self.unsigned(32, "enum variant index")?;
                let (index, variant) = u32::try_from(index)
                    .ok()
                    .and_then(|i| Some((i, variants.get(&i)?)))
                    .ok_or_else(|| format!("enum `{name}` has no variant number {index}"))?;
                let value = match &variant.value {
                    VariantFormat::Unit => DynValue::Unit,
                    VariantFormat::NewType(inner) => self.format(inner)?,
                    VariantFormat::Tuple(parts) => DynValue::Tuple(self.tuple(parts)?),
                    VariantFormat::Struct(fields) => self.fields(fields)?,
                    VariantFormat::Variable(_) => {
                        return Err("the recorded shape is incomplete".into());
                    }
                };
                DynValue::Variant {
                    name: variant.name.clone(),
                    index,
                    value: Box::new(value),
                }
            }
        })
    }
}

fn unzigzag(z: u128) -> i128 {
    // 0, -1, 1, -2, ... ↔ 0, 1, 2, 3, ...
    if z & 1 == 0 {
        (z >> 1) as i128
    } else {
        !((z >> 1) as i128)
    }
}

struct Encoder<'a> {
    out: Vec<u8>,
    registry: &'a Registry,
    depth: usize,
}

impl Encoder<'_> {
    /// bincode 2's varint, as `Bincode<T>` writes it.
    fn varint(&mut self, n: u128) {
        crate::codec::bincode_ser::varint128(&mut self.out, n);
    }

    fn unsigned(&mut self, n: u128, bits: u32) -> Result<(), String> {
        if bits < 128 && n >> bits != 0 {
            return Err(format!("{n} does not fit in u{bits}"));
        }
        self.varint(n);
        Ok(())
    }

    fn signed(&mut self, n: i128, bits: u32) -> Result<(), String> {
        if bits < 128 {
            let half = 1i128 << (bits - 1);
            if n < -half || n >= half {
                return Err(format!("{n} does not fit in i{bits}"));
            }
        }
        self.varint(zigzag(n));
        Ok(())
    }

    fn format(&mut self, f: &Format, v: &DynValue) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("the value nests too deeply".into());
        }
        let r = self.format_inner(f, v);
        self.depth -= 1;
        r
    }

    fn format_inner(&mut self, f: &Format, v: &DynValue) -> Result<(), String> {
        let mismatch = || format!("a value of shape {f:?} cannot hold {v:?}");
        match (f, v) {
            (Format::Variable(_), _) => return Err("the recorded shape is incomplete".into()),
            (Format::TypeName(name), _) => {
                let c = self
                    .registry
                    .get(name)
                    .ok_or_else(|| format!("the recorded shape lacks type `{name}`"))?;
                return self.container(name, c, v);
            }
            (Format::Unit, DynValue::Unit) => {}
            (Format::Bool, DynValue::Bool(b)) => self.out.push(u8::from(*b)),
            (Format::U8, DynValue::Unsigned(n)) => {
                let n = u8::try_from(*n).map_err(|_| format!("{n} does not fit in u8"))?;
                self.out.push(n);
            }
            (Format::I8, DynValue::Signed(n)) => {
                let n = i8::try_from(*n).map_err(|_| format!("{n} does not fit in i8"))?;
                self.out.push(n as u8);
            }
            (Format::U16, DynValue::Unsigned(n)) => self.unsigned(*n, 16)?,
            (Format::U32, DynValue::Unsigned(n)) => self.unsigned(*n, 32)?,
            (Format::U64, DynValue::Unsigned(n)) => self.unsigned(*n, 64)?,
            (Format::U128, DynValue::Unsigned(n)) => self.unsigned(*n, 128)?,
            (Format::I16, DynValue::Signed(n)) => self.signed(*n, 16)?,
            (Format::I32, DynValue::Signed(n)) => self.signed(*n, 32)?,
            (Format::I64, DynValue::Signed(n)) => self.signed(*n, 64)?,
            (Format::I128, DynValue::Signed(n)) => self.signed(*n, 128)?,
            (Format::F32, DynValue::F32(x)) => self.out.extend_from_slice(&x.to_le_bytes()),
            (Format::F64, DynValue::F64(x)) => self.out.extend_from_slice(&x.to_le_bytes()),
            (Format::Char, DynValue::Char(c)) => {
                let mut buf = [0u8; 4];
                self.out
                    .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            (Format::Str, DynValue::Str(s)) => {
                self.varint(s.len() as u128);
                self.out.extend_from_slice(s.as_bytes());
            }
            (Format::Bytes, DynValue::Bytes(b)) => {
                self.varint(b.len() as u128);
                self.out.extend_from_slice(b);
            }
            (Format::Option(_), DynValue::Option(None)) => self.out.push(0),
            (Format::Option(inner), DynValue::Option(Some(x))) => {
                self.out.push(1);
                self.format(inner, x)?;
            }
            (Format::Seq(inner), DynValue::Seq(items)) => {
                self.varint(items.len() as u128);
                for item in items {
                    self.format(inner, item)?;
                }
            }
            (Format::TupleArray { content, size }, DynValue::Bytes(b))
                if **content == Format::U8 =>
            {
                if b.len() != *size {
                    return Err(format!(
                        "a byte array of {size} cannot hold {} bytes",
                        b.len()
                    ));
                }
                self.out.extend_from_slice(b);
            }
            (Format::TupleArray { content, size }, DynValue::Seq(items)) => {
                if items.len() != *size {
                    return Err(format!(
                        "an array of {size} cannot hold {} items",
                        items.len()
                    ));
                }
                for item in items {
                    self.format(content, item)?;
                }
            }
            (Format::Map { key, value }, DynValue::Map(pairs)) => {
                self.varint(pairs.len() as u128);
                for (k, v) in pairs {
                    self.format(key, k)?;
                    self.format(value, v)?;
                }
            }
            (Format::Tuple(parts), DynValue::Tuple(items)) => self.tuple(parts, items)?,
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    fn tuple(&mut self, parts: &[Format], items: &[DynValue]) -> Result<(), String> {
        if parts.len() != items.len() {
            return Err(format!(
                "a tuple of {} cannot hold {} items",
                parts.len(),
                items.len()
            ));
        }
        for (p, item) in parts.iter().zip(items) {
            self.format(p, item)?;
        }
        Ok(())
    }

    fn fields(&mut self, fields: &[Named<Format>], v: &DynValue) -> Result<(), String> {
        let DynValue::Struct(values) = v else {
            return Err(format!("a struct cannot hold {v:?}"));
        };
        if fields.len() != values.len()
            || fields
                .iter()
                .zip(values)
                .any(|(f, (name, _))| &f.name != name)
        {
            let expected: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            let given: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
            return Err(format!(
                "expected the fields {expected:?} in order, not {given:?}"
            ));
        }
        for (f, (_, value)) in fields.iter().zip(values) {
            self.format(&f.value, value)
                .map_err(|e| format!("field `{}`: {e}", f.name))?;
        }
        Ok(())
    }

    fn container(&mut self, name: &str, c: &ContainerFormat, v: &DynValue) -> Result<(), String> {
        match (c, v) {
            (ContainerFormat::UnitStruct, DynValue::Unit) => Ok(()),
            (ContainerFormat::NewTypeStruct(inner), v) => self.format(inner, v),
            (ContainerFormat::TupleStruct(parts), DynValue::Tuple(items)) => {
                self.tuple(parts, items)
            }
            (ContainerFormat::Struct(fields), v) => self.fields(fields, v),
            (
                ContainerFormat::Enum(variants),
                DynValue::Variant {
                    name: given, value, ..
                },
            ) => {
                let (index, variant) = variants
                    .iter()
                    .find(|(_, var)| &var.name == given)
                    .ok_or_else(|| format!("enum `{name}` has no variant `{given}`"))?;
                self.varint(u128::from(*index));
                match (&variant.value, &**value) {
                    (VariantFormat::Unit, DynValue::Unit) => Ok(()),
                    (VariantFormat::NewType(inner), v) => self.format(inner, v),
                    (VariantFormat::Tuple(parts), DynValue::Tuple(items)) => {
                        self.tuple(parts, items)
                    }
                    (VariantFormat::Struct(fields), v) => self.fields(fields, v),
                    (_, v) => Err(format!("variant `{given}` of `{name}` cannot hold {v:?}")),
                }
            }
            (_, v) => Err(format!("`{name}` cannot hold {v:?}")),
        }
    }
}

// The dynamic side of dupsort values (`Ordered`, `SubKeyed`): their shapes from the schema
// record, and their values to and from keys.

/// The run-time shape of a dupsort table's values from what the schema record stores:
/// `ordered<V>` with `V`'s key descriptor as shape, or `subkey S + C<V>` with the JSON that
/// [`SubKeyed::shape`](crate::codec::SubKeyed::shape) writes. `None` for any other codec.
fn shape_of_record(descriptor: &str, shape: Option<&str>) -> Result<Option<Repr>, DecodeError> {
    if descriptor.starts_with("ordered<") {
        let Some(key) = shape else { return Ok(None) };
        return Ok(Some(Repr::Ordered(KeyShape::parse(key)?)));
    }
    if !descriptor.starts_with("subkey ") {
        return Ok(None);
    }
    let Some(shape) = shape else { return Ok(None) };
    let parts: serde_json::Value = serde_json::from_str(shape)
        .map_err(|e| DecodeError::new(format!("the recorded subkey shape does not parse ({e})")))?;
    let text = |field: &str| {
        parts[field].as_str().map(str::to_string).ok_or_else(|| {
            DecodeError::new(format!(
                "the recorded subkey shape has no `{field}`: {shape}"
            ))
        })
    };
    let subkey = KeyShape::parse(&text("subkey")?)?;
    // The value's own record: its codec descriptor (with a stand-in type) and shape.
    let value_descriptor = format!("{}<_>", text("value")?);
    let value = ValueShape::of_record(&value_descriptor, parts["shape"].as_str())?
        .unwrap_or_else(ValueShape::raw);
    Ok(Some(Repr::SubKeyed {
        subkey,
        value: Box::new(value),
    }))
}

/// Decodes a value stored in the key encoding `shape` describes.
fn decode_ordered(shape: &KeyShape, bytes: &[u8]) -> Result<DynValue, DecodeError> {
    Ok(key_value(shape, shape.decode(bytes)?))
}

/// A decoded key as a value: `#[derive(Key)]` structs get their field names back.
pub(crate) fn key_value(shape: &KeyShape, key: DynKey) -> DynValue {
    match (shape, key) {
        (_, DynKey::Unit) => DynValue::Unit,
        (_, DynKey::Bool(b)) => DynValue::Bool(b),
        (_, DynKey::Unsigned(n)) => DynValue::Unsigned(n),
        (_, DynKey::Signed(n)) => DynValue::Signed(n),
        (_, DynKey::Char(c)) => DynValue::Char(c),
        (_, DynKey::Bytes(b)) => DynValue::Bytes(b),
        (_, DynKey::Str(s)) => DynValue::Str(s),
        (KeyShape::Option(inner), DynKey::Option(o)) => {
            DynValue::Option(o.map(|k| Box::new(key_value(inner, *k))))
        }
        (KeyShape::Struct { fields, .. }, DynKey::Tuple(parts)) => DynValue::Struct(
            fields
                .iter()
                .zip(parts)
                .map(|((name, shape), part)| (name.clone(), key_value(shape, part)))
                .collect(),
        ),
        (KeyShape::Tuple(shapes), DynKey::Tuple(parts)) => DynValue::Tuple(
            shapes
                .iter()
                .zip(parts)
                .map(|(shape, part)| key_value(shape, part))
                .collect(),
        ),
        (_, DynKey::Option(o)) => {
            DynValue::Option(o.map(|k| Box::new(key_value(&KeyShape::Unit, *k))))
        }
        (_, DynKey::Tuple(parts)) => DynValue::Tuple(
            parts
                .into_iter()
                .map(|p| key_value(&KeyShape::Unit, p))
                .collect(),
        ),
    }
}

/// A value as a key of shape `shape`, for encoding: the inverse of [`key_value`].
pub(crate) fn value_key(shape: &KeyShape, value: &DynValue) -> Result<DynKey, EncodeError> {
    let mismatch = || EncodeError::new(format!("a value of shape `{shape}` cannot hold {value:?}"));
    Ok(match (shape, value) {
        (KeyShape::Unit, DynValue::Unit) => DynKey::Unit,
        (KeyShape::Bool, DynValue::Bool(b)) => DynKey::Bool(*b),
        (KeyShape::Unsigned(_) | KeyShape::NativeInteger(_), DynValue::Unsigned(n)) => {
            DynKey::Unsigned(*n)
        }
        (KeyShape::Signed(_), DynValue::Signed(n)) => DynKey::Signed(*n),
        (KeyShape::Char, DynValue::Char(c)) => DynKey::Char(*c),
        (KeyShape::Array(_) | KeyShape::Bytes, DynValue::Bytes(b)) => DynKey::Bytes(b.clone()),
        (KeyShape::Str, DynValue::Str(s)) => DynKey::Str(s.clone()),
        (KeyShape::Option(inner), DynValue::Option(o)) => DynKey::Option(match o {
            None => None,
            Some(v) => Some(Box::new(value_key(inner, v)?)),
        }),
        (KeyShape::Tuple(shapes), DynValue::Tuple(parts)) if shapes.len() == parts.len() => {
            DynKey::Tuple(
                shapes
                    .iter()
                    .zip(parts)
                    .map(|(s, p)| value_key(s, p))
                    .collect::<Result<_, _>>()?,
            )
        }
        (KeyShape::Struct { fields, .. }, DynValue::Struct(named))
            if fields.len() == named.len() =>
        {
            DynKey::Tuple(
                fields
                    .iter()
                    .zip(named)
                    .map(|((_, s), (_, p))| value_key(s, p))
                    .collect::<Result<_, _>>()?,
            )
        }
        _ => return Err(mismatch()),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::codec::{Bincode, Value};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Kind {
        Plain,
        Wrapped(u16),
        Pair(i8, char),
        Named { x: f32 },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Meters(u32);

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Everything {
        a: u64,
        b: i64,
        c: Option<String>,
        kinds: (Kind, Kind, Kind, Kind),
        seq: Vec<u16>,
        map: BTreeMap<String, u32>,
        big: u128,
        neg: i128,
        f: f64,
        t: (bool, ()),
        arr: [u8; 3],
        m: Meters,
    }

    fn shape_of<T: Serialize + for<'de> Deserialize<'de>>() -> ValueShape {
        let shape = Bincode::<T>::shape().expect("traced");
        ValueShape::of_record("bincode<T>", Some(&shape))
            .expect("parses")
            .expect("bincode")
    }

    fn sample() -> Everything {
        Everything {
            a: 300,
            b: -70_000,
            c: Some("hi".into()),
            kinds: (
                Kind::Plain,
                Kind::Wrapped(65535),
                Kind::Pair(-3, 'é'),
                Kind::Named { x: 1.5 },
            ),
            seq: vec![1, 300],
            map: BTreeMap::from([("k".to_string(), 7)]),
            big: u128::MAX,
            neg: i128::MIN,
            f: -0.25,
            t: (true, ()),
            arr: [1, 2, 3],
            m: Meters(9),
        }
    }

    #[test]
    fn decodes_and_reencodes_bincode_from_the_traced_shape() {
        let v = sample();
        let bytes = bincode::serde::encode_to_vec(&v, bincode::config::standard()).unwrap();
        let shape = shape_of::<Everything>();
        let decoded = shape.decode(&bytes).unwrap();
        let variant = |name: &str, index, value| DynValue::Variant {
            name: name.into(),
            index,
            value: Box::new(value),
        };
        let DynValue::Struct(fields) = &decoded else {
            panic!("{decoded:?}")
        };
        let field = |n: &str| &fields.iter().find(|(f, _)| f == n).unwrap().1;
        assert_eq!(field("b"), &DynValue::Signed(-70_000));
        // serde-reflection records a tuple of one type as a fixed-size array.
        assert_eq!(
            field("kinds"),
            &DynValue::Seq(vec![
                variant("Plain", 0, DynValue::Unit),
                variant("Wrapped", 1, DynValue::Unsigned(65535)),
                variant(
                    "Pair",
                    2,
                    DynValue::Tuple(vec![DynValue::Signed(-3), DynValue::Char('é')])
                ),
                variant(
                    "Named",
                    3,
                    DynValue::Struct(vec![("x".into(), DynValue::F32(1.5))])
                ),
            ])
        );
        assert_eq!(field("big"), &DynValue::Unsigned(u128::MAX));
        assert_eq!(field("neg"), &DynValue::Signed(i128::MIN));
        assert_eq!(field("m"), &DynValue::Unsigned(9));
        assert_eq!(shape.encode(&decoded).unwrap(), bytes);

        assert!(shape.decode(&bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            shape
                .decode(&longer)
                .unwrap_err()
                .message()
                .contains("left over")
        );
    }

    #[test]
    fn zigzag_round_trips_at_the_extremes() {
        for n in [0, -1, 1, i128::MIN, i128::MAX, -70_000, 63, -64] {
            assert_eq!(unzigzag(zigzag(n)), n);
        }
    }

    #[test]
    fn encode_refuses_what_the_shape_cannot_hold() {
        let shape = shape_of::<Everything>();
        assert!(shape.encode(&DynValue::Unit).is_err());
        let e = shape_of::<u8>()
            .encode(&DynValue::Unsigned(256))
            .unwrap_err();
        assert_eq!(e.message(), "256 does not fit in u8");
        let e = shape_of::<Kind>()
            .encode(&DynValue::Variant {
                name: "Missing".into(),
                index: 0,
                value: Box::new(DynValue::Unit),
            })
            .unwrap_err();
        assert!(e.message().contains("no variant `Missing`"), "{e}");
    }
}
