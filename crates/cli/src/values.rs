//! Values from their recorded shape: a bincode 2 decoder (standard configuration: little-endian,
//! variable-length integers) driven by a serde-reflection `(Format, Registry)`, producing JSON.
//!
//! The JSON forms: structs → objects; tuple structs and tuples → arrays; newtype structs → the
//! inner value; unit structs and `()` → `null`; enums → `"Variant"` for a unit variant and
//! `{"Variant": ...}` otherwise; `Option` → `null` or the value; sequences → arrays; maps → objects
//! when every key is a string, else arrays of `[key, value]` pairs; `serde_bytes` byte strings →
//! lowercase hex strings (a plain `Vec<u8>` is a sequence: an array of numbers); `char` → a
//! one-character string; 128-bit integers → numbers when they fit in 64 bits, else decimal
//! strings; non-finite floats → strings (`"NaN"`, `"inf"`).

use serde_json::{Map, Value as Json};
use serde_reflection::{ContainerFormat, Format, Named, Registry, VariantFormat};

use crate::hex;
use crate::keys::{i128_json, u128_json};

/// A value's structure as recorded in the schema record's `shape`.
#[derive(Debug, Clone)]
pub struct ValueShape {
    format: Format,
    registry: Registry,
}

/// Guards against absurd nesting in damaged or hostile data.
const MAX_DEPTH: usize = 256;

impl ValueShape {
    /// Parses a recorded shape (`serde_json` of `(Format, Registry)`).
    ///
    /// # Errors
    ///
    /// A message when the JSON is not such a pair.
    pub fn parse(shape: &str) -> Result<ValueShape, String> {
        let (format, registry): (Format, Registry) = serde_json::from_str(shape)
            .map_err(|e| format!("the recorded value shape does not parse ({e})"))?;
        Ok(ValueShape { format, registry })
    }

    /// Decodes a stored value into JSON; every byte must be used.
    ///
    /// # Errors
    ///
    /// A message saying where the bytes stopped matching the shape.
    pub fn decode(&self, bytes: &[u8]) -> Result<Json, String> {
        let mut d = Decoder {
            input: bytes,
            registry: &self.registry,
            depth: 0,
        };
        let v = d.format(&self.format)?;
        if !d.input.is_empty() {
            return Err(format!(
                "{} byte(s) left over after the value",
                d.input.len()
            ));
        }
        Ok(v)
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
        Ok(self.take(N, what)?.try_into().expect("length checked"))
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
        let z = self.unsigned(bits, what)?;
        // Zigzag: 0, -1, 1, -2, ... ↔ 0, 1, 2, 3, ...
        Ok(if z & 1 == 0 {
            (z >> 1) as i128
        } else {
            !((z >> 1) as i128)
        })
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

    fn format(&mut self, f: &Format) -> Result<Json, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("the value nests too deeply".into());
        }
        let v = self.format_inner(f);
        self.depth -= 1;
        v
    }

    fn format_inner(&mut self, f: &Format) -> Result<Json, String> {
        Ok(match f {
            Format::Variable(_) => return Err("the recorded shape is incomplete".into()),
            Format::TypeName(name) => {
                let c = self
                    .registry
                    .get(name)
                    .ok_or_else(|| format!("the recorded shape lacks type `{name}`"))?;
                self.container(name, c)?
            }
            Format::Unit => Json::Null,
            Format::Bool => match self.byte("bool")? {
                0 => Json::Bool(false),
                1 => Json::Bool(true),
                b => return Err(format!("bool byte {b:#04x} is neither 0 nor 1")),
            },
            Format::I8 => Json::from(self.byte("i8")? as i8),
            Format::U8 => Json::from(self.byte("u8")?),
            Format::I16 => i128_json(self.signed(16, "i16")?),
            Format::I32 => i128_json(self.signed(32, "i32")?),
            Format::I64 => i128_json(self.signed(64, "i64")?),
            Format::I128 => i128_json(self.signed(128, "i128")?),
            Format::U16 => u128_json(self.unsigned(16, "u16")?),
            Format::U32 => u128_json(self.unsigned(32, "u32")?),
            Format::U64 => u128_json(self.unsigned(64, "u64")?),
            Format::U128 => u128_json(self.unsigned(128, "u128")?),
            Format::F32 => float(f64::from(f32::from_le_bytes(self.fixed("f32")?))),
            Format::F64 => float(f64::from_le_bytes(self.fixed("f64")?)),
            Format::Char => Json::String(self.char()?.to_string()),
            Format::Str => {
                let n = self.len("string length")?;
                let b = self.take(n, "string")?;
                Json::String(
                    std::str::from_utf8(b)
                        .map_err(|_| "a string is not UTF-8")?
                        .to_owned(),
                )
            }
            Format::Bytes => {
                let n = self.len("byte string length")?;
                Json::String(hex(self.take(n, "byte string")?))
            }
            Format::Option(inner) => match self.byte("Option tag")? {
                0 => Json::Null,
                1 => self.format(inner)?,
                t => return Err(format!("Option tag {t:#04x} is neither 0 nor 1")),
            },
            Format::Seq(inner) => {
                let n = self.len("sequence length")?;
                let mut out = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    out.push(self.format(inner)?);
                }
                Json::Array(out)
            }
            Format::Map { key, value } => {
                let n = self.len("map length")?;
                let mut pairs = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    let k = self.format(key)?;
                    let v = self.format(value)?;
                    pairs.push((k, v));
                }
                if pairs.iter().all(|(k, _)| k.is_string()) {
                    let mut m = Map::new();
                    for (k, v) in pairs {
                        if let Json::String(k) = k {
                            m.insert(k, v);
                        }
                    }
                    Json::Object(m)
                } else {
                    Json::Array(
                        pairs
                            .into_iter()
                            .map(|(k, v)| Json::Array(vec![k, v]))
                            .collect(),
                    )
                }
            }
            Format::Tuple(parts) => self.tuple(parts)?,
            Format::TupleArray { content, size } => {
                let mut out = Vec::with_capacity((*size).min(4096));
                for _ in 0..*size {
                    out.push(self.format(content)?);
                }
                Json::Array(out)
            }
        })
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

    fn tuple(&mut self, parts: &[Format]) -> Result<Json, String> {
        parts
            .iter()
            .map(|p| self.format(p))
            .collect::<Result<_, _>>()
            .map(Json::Array)
    }

    fn fields(&mut self, fields: &[Named<Format>]) -> Result<Json, String> {
        let mut m = Map::new();
        for f in fields {
            let v = self
                .format(&f.value)
                .map_err(|e| format!("field `{}`: {e}", f.name))?;
            m.insert(f.name.clone(), v);
        }
        Ok(Json::Object(m))
    }

    fn container(&mut self, name: &str, c: &ContainerFormat) -> Result<Json, String> {
        Ok(match c {
            ContainerFormat::UnitStruct => Json::Null,
            ContainerFormat::NewTypeStruct(inner) => self.format(inner)?,
            ContainerFormat::TupleStruct(parts) => self.tuple(parts)?,
            ContainerFormat::Struct(fields) => self.fields(fields)?,
            ContainerFormat::Enum(variants) => {
                let index = self.unsigned(32, "enum variant index")?;
                let variant = u32::try_from(index)
                    .ok()
                    .and_then(|i| variants.get(&i))
                    .ok_or_else(|| format!("enum `{name}` has no variant number {index}"))?;
                let inner = match &variant.value {
                    VariantFormat::Unit => return Ok(Json::String(variant.name.clone())),
                    VariantFormat::NewType(inner) => self.format(inner)?,
                    VariantFormat::Tuple(parts) => self.tuple(parts)?,
                    VariantFormat::Struct(fields) => self.fields(fields)?,
                    VariantFormat::Variable(_) => {
                        return Err("the recorded shape is incomplete".into());
                    }
                };
                let mut m = Map::new();
                m.insert(variant.name.clone(), inner);
                Json::Object(m)
            }
        })
    }
}

fn float(x: f64) -> Json {
    serde_json::Number::from_f64(x).map_or_else(|| Json::String(x.to_string()), Json::Number)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::ValueShape;

    #[derive(Serialize, Deserialize)]
    enum Kind {
        Plain,
        Wrapped(u16),
        Pair(i8, char),
        Named { x: f32 },
    }

    #[derive(Serialize, Deserialize)]
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
    }

    fn shape_of<T: Serialize + for<'de> Deserialize<'de>>() -> ValueShape {
        let shape = <tabula_core::Bincode<T> as tabula_core::Value>::shape().unwrap();
        ValueShape::parse(&shape).unwrap()
    }

    #[test]
    fn decodes_bincode_from_the_traced_shape() {
        let v = Everything {
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
        };
        let bytes = bincode::serde::encode_to_vec(&v, bincode::config::standard()).unwrap();
        let shape = shape_of::<Everything>();
        assert_eq!(
            shape.decode(&bytes).unwrap(),
            json!({
                "a": 300, "b": -70000, "c": "hi",
                "kinds": ["Plain", {"Wrapped": 65535}, {"Pair": [-3, "é"]}, {"Named": {"x": 1.5}}],
                "seq": [1, 300],
                "map": {"k": 7},
                "big": u128::MAX.to_string(),
                "neg": i128::MIN.to_string(),
                "f": -0.25,
                "t": [true, null],
                "arr": [1, 2, 3],
            })
        );
        assert!(shape.decode(&bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(shape.decode(&longer).unwrap_err().contains("left over"));
    }
}
