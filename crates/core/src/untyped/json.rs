//! The JSON forms of schema-less keys and values: how the `tabula` command (and any tool built
//! on [`untyped`](super)) shows a [`DynKey`] or [`DynValue`] and reads one back, guided by the
//! table's [`KeyShape`] / [`ValueShape`]. Both directions live here, so what a dump prints is
//! what a load reads.
//!
//! Keys ([`KeyShape::key_to_json`], [`KeyShape::key_from_json`]): integers are numbers (decimal
//! strings beyond 64 bits), `char` and strings are strings, `[u8; N]` and byte strings are hex
//! strings (optionally `0x`-prefixed; arrays of numbers are read too), `Option` is `null` or the
//! value, tuples are arrays, `#[derive(Key)]` structs are objects (arrays in field order are read
//! too).
//!
//! Values ([`DynValue::to_json`], [`ValueShape::value_from_json`]): structs are objects; tuples,
//! tuple structs and arrays are arrays; newtype structs are the inner value; unit structs and
//! `()` are `null`; enums are `"Variant"` for a unit variant and `{"Variant": ...}` otherwise;
//! `Option` is `null` or the value; maps are objects when every key is a string, else arrays of
//! `[key, value]` pairs; byte strings and byte arrays (`[u8; N]`) are lowercase hex strings
//! (arrays of numbers are read too; a plain `Vec<u8>` is a sequence: an array of numbers); `char` is a one-character string; 128-bit integers are
//! numbers when they fit in 64 bits, else decimal strings; non-finite floats are the strings
//! `"NaN"`, `"inf"` and `"-inf"`. A `dupsort` table's values with a subkey are `[subkey, value]`
//! pairs, the subkey in its key form.
//!
//! # Limits
//!
//! `null` stands for `None`, `()` and a unit struct alike, so `Some(None)` of an
//! `Option<Option<T>>` and `Some(())` of an `Option<()>` read back as `None`; a NaN's payload
//! bits are not kept. The stored bytes (hex) are exact where this is not.

use serde_json::{Map, Value as Json};
use serde_reflection::{ContainerFormat, Format, Named, Registry, VariantFormat};

use crate::codec::EncodeError;
use crate::codec::untyped::{
    DynKey, DynValue, KeyShape, ValueRepr, ValueShape, key_value, value_key,
};

/// Guards against absurd nesting in hostile input.
const MAX_DEPTH: usize = 256;

impl KeyShape {
    /// A sample of the JSON a key of this shape is written as, for messages.
    ///
    /// ```
    /// use tabula_core::untyped::KeyShape;
    ///
    /// let shape = KeyShape::parse("K { a: str, b: Option<u64> }")?;
    /// assert_eq!(shape.json_example(), r#"{"a": "alice", "b": null or 5}"#);
    /// # Ok::<(), tabula_core::DecodeError>(())
    /// ```
    pub fn json_example(&self) -> String {
        match self {
            KeyShape::Unit => "null".into(),
            KeyShape::Bool => "true".into(),
            KeyShape::Unsigned(_) | KeyShape::NativeInteger(_) => "5".into(),
            KeyShape::Signed(_) => "-5".into(),
            KeyShape::Char => "\"c\"".into(),
            KeyShape::Array(n) => format!("\"{}\"", "00".repeat(*n)),
            KeyShape::Bytes => "\"00ff\"".into(),
            KeyShape::Str => "\"alice\"".into(),
            KeyShape::Option(inner) => format!("null or {}", inner.json_example()),
            KeyShape::Tuple(parts) => {
                let parts: Vec<String> = parts.iter().map(KeyShape::json_example).collect();
                format!("[{}]", parts.join(", "))
            }
            KeyShape::Struct { fields, .. } => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(n, s)| format!("\"{n}\": {}", s.json_example()))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
        }
    }

    /// The key `json` stands for (see the [module docs](self) for the forms).
    ///
    /// ```
    /// use serde_json::json;
    /// use tabula_core::untyped::{DynKey, KeyShape};
    ///
    /// let shape = KeyShape::parse("(str, i32)")?;
    /// let key = shape.key_from_json(&json!(["alice", -1]))?;
    /// assert_eq!(key, DynKey::Tuple(vec![DynKey::Str("alice".into()), DynKey::Signed(-1)]));
    /// assert!(shape.key_from_json(&json!("alice")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError`] saying what JSON the shape (or the part that does not fit) expects.
    pub fn key_from_json(&self, json: &Json) -> Result<DynKey, EncodeError> {
        self.key_part_from_json(json).map_err(EncodeError::new)
    }

    fn key_part_from_json(&self, json: &Json) -> Result<DynKey, String> {
        let mismatch = || {
            format!(
                "a key part of shape `{self}` is JSON like {}, not `{json}`",
                self.json_example()
            )
        };
        Ok(match self {
            KeyShape::Unit => match json {
                Json::Null => DynKey::Unit,
                Json::Array(a) if a.is_empty() => DynKey::Unit,
                _ => return Err(mismatch()),
            },
            KeyShape::Bool => DynKey::Bool(json.as_bool().ok_or_else(mismatch)?),
            KeyShape::Unsigned(_) | KeyShape::NativeInteger(_) => {
                DynKey::Unsigned(json_u128(json).ok_or_else(mismatch)?)
            }
            KeyShape::Signed(_) => DynKey::Signed(json_i128(json).ok_or_else(mismatch)?),
            KeyShape::Char => DynKey::Char(json_char(json).ok_or_else(mismatch)?),
            KeyShape::Array(_) | KeyShape::Bytes => {
                DynKey::Bytes(json_bytes(json).ok_or_else(mismatch)?)
            }
            KeyShape::Str => DynKey::Str(json.as_str().ok_or_else(mismatch)?.to_owned()),
            KeyShape::Option(inner) => DynKey::Option(match json {
                Json::Null => None,
                other => Some(Box::new(inner.key_part_from_json(other)?)),
            }),
            KeyShape::Tuple(parts) => {
                let items = json.as_array().ok_or_else(mismatch)?;
                if items.len() != parts.len() {
                    return Err(format!(
                        "expected {} parts for `{self}` (like {}), got {}",
                        parts.len(),
                        self.json_example(),
                        items.len()
                    ));
                }
                DynKey::Tuple(
                    parts
                        .iter()
                        .zip(items)
                        .map(|(p, item)| p.key_part_from_json(item))
                        .collect::<Result<_, _>>()?,
                )
            }
            KeyShape::Struct { fields, .. } => match json {
                Json::Object(map) => {
                    if let Some(extra) = map.keys().find(|k| !fields.iter().any(|(f, _)| f == *k)) {
                        return Err(format!("`{self}` has no field `{extra}`"));
                    }
                    DynKey::Tuple(
                        fields
                            .iter()
                            .map(|(name, part)| {
                                let item = map
                                    .get(name)
                                    .ok_or_else(|| format!("missing field `{name}` of `{self}`"))?;
                                part.key_part_from_json(item)
                            })
                            .collect::<Result<_, _>>()?,
                    )
                }
                Json::Array(items) if items.len() == fields.len() => DynKey::Tuple(
                    fields
                        .iter()
                        .zip(items)
                        .map(|((_, part), item)| part.key_part_from_json(item))
                        .collect::<Result<_, _>>()?,
                ),
                _ => return Err(mismatch()),
            },
        })
    }

    /// The JSON form of a key of this shape (structs become objects); a key that does not
    /// have this shape is shown part by part as well as it can be.
    ///
    /// ```
    /// use serde_json::json;
    /// use tabula_core::untyped::{DynKey, KeyShape};
    ///
    /// let shape = KeyShape::parse("K { a: str, b: u128 }")?;
    /// let key = DynKey::Tuple(vec![DynKey::Str("x".into()), DynKey::Unsigned(u128::MAX)]);
    /// assert_eq!(shape.key_to_json(&key), json!({"a": "x", "b": u128::MAX.to_string()}));
    /// # Ok::<(), tabula_core::DecodeError>(())
    /// ```
    pub fn key_to_json(&self, key: &DynKey) -> Json {
        match (self, key) {
            (KeyShape::Struct { fields, .. }, DynKey::Tuple(items)) => Json::Object(
                fields
                    .iter()
                    .zip(items)
                    .map(|((name, s), k)| (name.clone(), s.key_to_json(k)))
                    .collect(),
            ),
            (KeyShape::Tuple(parts), DynKey::Tuple(items)) => Json::Array(
                parts
                    .iter()
                    .zip(items)
                    .map(|(s, k)| s.key_to_json(k))
                    .collect(),
            ),
            (KeyShape::Option(inner), DynKey::Option(Some(k))) => inner.key_to_json(k),
            (_, k) => scalar_key(k),
        }
    }
}

fn scalar_key(key: &DynKey) -> Json {
    match key {
        DynKey::Unit | DynKey::Option(None) => Json::Null,
        DynKey::Bool(b) => Json::Bool(*b),
        DynKey::Unsigned(n) => u128_json(*n),
        DynKey::Signed(n) => i128_json(*n),
        DynKey::Char(c) => Json::String(c.to_string()),
        DynKey::Bytes(b) => Json::String(hex(b)),
        DynKey::Str(s) => Json::String(s.clone()),
        DynKey::Option(Some(k)) => scalar_key(k),
        DynKey::Tuple(items) => Json::Array(items.iter().map(scalar_key).collect()),
    }
}

impl DynValue {
    /// The JSON form of a value (see the [module docs](self) for the forms).
    ///
    /// ```
    /// use serde_json::json;
    /// use tabula_core::untyped::DynValue;
    ///
    /// let v = DynValue::Struct(vec![
    ///     ("hash".into(), DynValue::Bytes(vec![0xab, 0x01])),
    ///     ("note".into(), DynValue::Option(None)),
    /// ]);
    /// assert_eq!(v.to_json(), json!({"hash": "ab01", "note": null}));
    /// ```
    pub fn to_json(&self) -> Json {
        match self {
            DynValue::Unit | DynValue::Option(None) => Json::Null,
            DynValue::Bool(b) => Json::Bool(*b),
            DynValue::Unsigned(n) => u128_json(*n),
            DynValue::Signed(n) => i128_json(*n),
            DynValue::F32(x) => float(f64::from(*x)),
            DynValue::F64(x) => float(*x),
            DynValue::Char(c) => Json::String(c.to_string()),
            DynValue::Str(s) => Json::String(s.clone()),
            DynValue::Bytes(b) => Json::String(hex(b)),
            DynValue::Option(Some(v)) => v.to_json(),
            DynValue::Seq(items) | DynValue::Tuple(items) => {
                Json::Array(items.iter().map(DynValue::to_json).collect())
            }
            DynValue::Map(pairs) => {
                if pairs.iter().all(|(k, _)| matches!(k, DynValue::Str(_))) {
                    let mut m = Map::new();
                    for (k, v) in pairs {
                        if let DynValue::Str(k) = k {
                            m.insert(k.clone(), v.to_json());
                        }
                    }
                    Json::Object(m)
                } else {
                    Json::Array(
                        pairs
                            .iter()
                            .map(|(k, v)| Json::Array(vec![k.to_json(), v.to_json()]))
                            .collect(),
                    )
                }
            }
            DynValue::Struct(fields) => Json::Object(
                fields
                    .iter()
                    .map(|(n, v)| (n.clone(), v.to_json()))
                    .collect(),
            ),
            DynValue::Variant { name, value, .. } => match &**value {
                DynValue::Unit => Json::String(name.clone()),
                inner => {
                    let mut m = Map::new();
                    m.insert(name.clone(), inner.to_json());
                    Json::Object(m)
                }
            },
        }
    }
}

impl ValueShape {
    /// The value `json` stands for in a table whose values have this shape: the inverse of
    /// [`DynValue::to_json`] for a value this shape decoded (see the [module docs](self) for
    /// the forms and the [`Limits`](self#limits)). [`encode`](Self::encode) turns the result
    /// into the stored bytes.
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use serde_json::json;
    /// use tabula_core::untyped::ValueShape;
    /// use tabula_core::{Bincode, Value};
    ///
    /// #[derive(Serialize, Deserialize)]
    /// enum Kind { User, Label(String) }
    /// #[derive(Serialize, Deserialize)]
    /// struct Account { balance: u64, kind: Kind, note: Option<String> }
    ///
    /// let shape = ValueShape::of_record("bincode<Account>", Bincode::<Account>::shape().as_deref())?
    ///     .expect("a traced shape");
    /// let value = shape.value_from_json(&json!({"balance": 5, "kind": {"Label": "x"}, "note": null}))?;
    /// let account = Account { balance: 5, kind: Kind::Label("x".into()), note: None };
    /// let mut scratch = Vec::new();
    /// assert_eq!(shape.encode(&value)?, Bincode::<Account>::encode(&account, &mut scratch)?);
    /// assert_eq!(shape.decode(&shape.encode(&value)?)?.to_json()["kind"], json!({"Label": "x"}));
    /// assert!(shape.value_from_json(&json!({"balance": -1, "kind": "User", "note": null})).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError`] naming the part of `json` that does not fit the shape and what it should
    /// be.
    pub fn value_from_json(&self, json: &Json) -> Result<DynValue, EncodeError> {
        match &self.repr {
            ValueRepr::Raw => json_bytes(json).map(DynValue::Bytes).ok_or_else(|| {
                EncodeError::new(format!(
                    "a raw value is a hex string (like \"00ff\"), not `{json}`"
                ))
            }),
            ValueRepr::Bincode { format, registry } => Walk { registry, depth: 0 }
                .format(format, json)
                .map_err(EncodeError::new),
            ValueRepr::Ordered(key) => Ok(key_value(key, key.key_from_json(json)?)),
            ValueRepr::SubKeyed { subkey, value } => {
                let (s, v) = match json {
                    Json::Array(pair) if pair.len() == 2 => (&pair[0], &pair[1]),
                    _ => {
                        return Err(EncodeError::new(format!(
                            "a value with a subkey is a [subkey, value] pair, like [{}, ...], \
                             not `{json}`",
                            subkey.json_example()
                        )));
                    }
                };
                let s = subkey
                    .key_from_json(s)
                    .map_err(|e| EncodeError::new(format!("the subkey: {}", e.message())))?;
                // The encoder takes the subkey back through `value_key`: check it does here.
                let s = key_value(subkey, s);
                value_key(subkey, &s)?;
                Ok(DynValue::Tuple(vec![s, value.value_from_json(v)?]))
            }
            #[cfg(feature = "compression")]
            ValueRepr::Zstd(inner, _) => inner.value_from_json(json),
        }
    }
}

/// A walk of a bincode value's recorded structure, reading JSON along it.
struct Walk<'a> {
    registry: &'a Registry,
    depth: usize,
}

impl Walk<'_> {
    fn format(&mut self, f: &Format, json: &Json) -> Result<DynValue, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("the value nests too deeply".into());
        }
        let r = self.format_inner(f, json);
        self.depth -= 1;
        r
    }

    fn format_inner(&mut self, f: &Format, json: &Json) -> Result<DynValue, String> {
        let expected = |what: &str| format!("expected {what}, not `{}`", short(json));
        Ok(match f {
            Format::Variable(_) => return Err("the recorded shape is incomplete".into()),
            Format::TypeName(name) => {
                let c = self
                    .registry
                    .get(name)
                    .ok_or_else(|| format!("the recorded shape lacks type `{name}`"))?;
                return self.container(name, c, json);
            }
            Format::Unit => match json {
                Json::Null => DynValue::Unit,
                _ => return Err(expected("null (`()`)")),
            },
            Format::Bool => DynValue::Bool(json.as_bool().ok_or_else(|| expected("a bool"))?),
            Format::U8 => unsigned(json, 8)?,
            Format::U16 => unsigned(json, 16)?,
            Format::U32 => unsigned(json, 32)?,
            Format::U64 => unsigned(json, 64)?,
            Format::U128 => unsigned(json, 128)?,
            Format::I8 => signed(json, 8)?,
            Format::I16 => signed(json, 16)?,
            Format::I32 => signed(json, 32)?,
            Format::I64 => signed(json, 64)?,
            Format::I128 => signed(json, 128)?,
            Format::F32 => {
                DynValue::F32(json_f64(json).ok_or_else(|| expected("a number"))? as f32)
            }
            Format::F64 => DynValue::F64(json_f64(json).ok_or_else(|| expected("a number"))?),
            Format::Char => {
                DynValue::Char(json_char(json).ok_or_else(|| expected("a one-character string"))?)
            }
            Format::Str => DynValue::Str(
                json.as_str()
                    .ok_or_else(|| expected("a string"))?
                    .to_owned(),
            ),
            Format::Bytes => DynValue::Bytes(
                json_bytes(json).ok_or_else(|| expected("a hex string of bytes, like \"00ff\""))?,
            ),
            Format::Option(inner) => DynValue::Option(match json {
                Json::Null => None,
                other => Some(Box::new(self.format(inner, other)?)),
            }),
            Format::Seq(inner) => {
                let items = json.as_array().ok_or_else(|| expected("an array"))?;
                DynValue::Seq(self.items(items, |_| inner)?)
            }
            // `[u8; N]`: hex, like a byte string (an array of numbers is read too).
            Format::TupleArray { content, size } if **content == Format::U8 => {
                let b = json_bytes(json).ok_or_else(|| {
                    expected(&format!("a hex string of {size} bytes, like \"00ff\""))
                })?;
                if b.len() != *size {
                    return Err(format!("expected {size} bytes, not {}", b.len()));
                }
                DynValue::Bytes(b)
            }
            Format::TupleArray { content, size } => {
                let items = json.as_array().ok_or_else(|| expected("an array"))?;
                if items.len() != *size {
                    return Err(format!(
                        "expected an array of {size}, not one of {}",
                        items.len()
                    ));
                }
                DynValue::Seq(self.items(items, |_| content)?)
            }
            Format::Tuple(parts) => DynValue::Tuple(self.tuple(parts, json)?),
            Format::Map { key, value } => {
                let mut pairs = Vec::new();
                match json {
                    Json::Object(map) => {
                        for (k, v) in map {
                            let k = self
                                .format(key, &Json::String(k.clone()))
                                .map_err(|e| format!("map key `{k}`: {e}"))?;
                            let v = self.format(value, v).map_err(|e| format!("[{k:?}]: {e}"))?;
                            pairs.push((k, v));
                        }
                    }
                    Json::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            let Some([k, v]) = item.as_array().map(Vec::as_slice) else {
                                return Err(format!(
                                    "map entry {i}: expected a [key, value] pair, not `{}`",
                                    short(item)
                                ));
                            };
                            let k = self
                                .format(key, k)
                                .map_err(|e| format!("map entry {i}, key: {e}"))?;
                            let v = self
                                .format(value, v)
                                .map_err(|e| format!("map entry {i}, value: {e}"))?;
                            pairs.push((k, v));
                        }
                    }
                    _ => return Err(expected("an object or an array of [key, value] pairs")),
                }
                DynValue::Map(pairs)
            }
        })
    }

    fn items<'f>(
        &mut self,
        items: &[Json],
        format_of: impl Fn(usize) -> &'f Format,
    ) -> Result<Vec<DynValue>, String> {
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                self.format(format_of(i), item)
                    .map_err(|e| format!("[{i}]: {e}"))
            })
            .collect()
    }

    fn tuple(&mut self, parts: &[Format], json: &Json) -> Result<Vec<DynValue>, String> {
        let items = json.as_array().ok_or_else(|| {
            format!(
                "expected an array of {} items, not `{}`",
                parts.len(),
                short(json)
            )
        })?;
        if items.len() != parts.len() {
            return Err(format!(
                "expected an array of {} items, not one of {}",
                parts.len(),
                items.len()
            ));
        }
        self.items(items, |i| &parts[i])
    }

    fn fields(&mut self, fields: &[Named<Format>], json: &Json) -> Result<DynValue, String> {
        let values = match json {
            Json::Object(map) => {
                if let Some(extra) = map.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
                    return Err(format!("no field `{extra}` in this struct"));
                }
                fields
                    .iter()
                    .map(|f| {
                        let item = map
                            .get(&f.name)
                            .ok_or_else(|| format!("missing field `{}`", f.name))?;
                        self.format(&f.value, item)
                            .map(|v| (f.name.clone(), v))
                            .map_err(|e| format!("field `{}`: {e}", f.name))
                    })
                    .collect::<Result<_, String>>()?
            }
            Json::Array(items) if items.len() == fields.len() => fields
                .iter()
                .zip(items)
                .map(|(f, item)| {
                    self.format(&f.value, item)
                        .map(|v| (f.name.clone(), v))
                        .map_err(|e| format!("field `{}`: {e}", f.name))
                })
                .collect::<Result<_, String>>()?,
            _ => {
                let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                return Err(format!(
                    "expected an object with the fields {names:?}, not `{}`",
                    short(json)
                ));
            }
        };
        Ok(DynValue::Struct(values))
    }

    fn container(
        &mut self,
        name: &str,
        c: &ContainerFormat,
        json: &Json,
    ) -> Result<DynValue, String> {
        match c {
            ContainerFormat::UnitStruct => match json {
                Json::Null => Ok(DynValue::Unit),
                _ => Err(format!(
                    "`{name}` is a unit struct: null, not `{}`",
                    short(json)
                )),
            },
            ContainerFormat::NewTypeStruct(inner) => self.format(inner, json),
            ContainerFormat::TupleStruct(parts) => self
                .tuple(parts, json)
                .map(DynValue::Tuple)
                .map_err(|e| format!("`{name}`: {e}")),
            ContainerFormat::Struct(fields) => self
                .fields(fields, json)
                .map_err(|e| format!("`{name}`: {e}")),
            ContainerFormat::Enum(variants) => {
                let (given, inner) = match json {
                    Json::String(s) => (s.as_str(), None),
                    Json::Object(map) if map.len() == 1 => {
                        let (k, v) = map.iter().next().expect("one entry");
                        (k.as_str(), Some(v))
                    }
                    _ => {
                        return Err(format!(
                            "enum `{name}`: expected \"Variant\" or {{\"Variant\": ...}}, not `{}`",
                            short(json)
                        ));
                    }
                };
                let (index, variant) =
                    variants
                        .iter()
                        .find(|(_, v)| v.name == given)
                        .ok_or_else(|| {
                            let names: Vec<&str> =
                                variants.values().map(|v| v.name.as_str()).collect();
                            format!(
                                "enum `{name}` has no variant `{given}` (its variants: {names:?})"
                            )
                        })?;
                let in_variant = |e: String| format!("`{name}::{given}`: {e}");
                let value = match (&variant.value, inner) {
                    (VariantFormat::Unit, None | Some(Json::Null)) => DynValue::Unit,
                    (VariantFormat::NewType(f), Some(v)) => {
                        self.format(f, v).map_err(in_variant)?
                    }
                    (VariantFormat::Tuple(parts), Some(v)) => {
                        DynValue::Tuple(self.tuple(parts, v).map_err(in_variant)?)
                    }
                    (VariantFormat::Struct(fields), Some(v)) => {
                        self.fields(fields, v).map_err(in_variant)?
                    }
                    (VariantFormat::Variable(_), _) => {
                        return Err("the recorded shape is incomplete".into());
                    }
                    (VariantFormat::Unit, Some(_)) => {
                        return Err(in_variant(
                            "a unit variant holds nothing: give \"Variant\"".into(),
                        ));
                    }
                    (_, None) => {
                        return Err(in_variant(
                            "the variant holds a value: give {\"Variant\": ...}".into(),
                        ));
                    }
                };
                Ok(DynValue::Variant {
                    name: given.to_owned(),
                    index: *index,
                    value: Box::new(value),
                })
            }
        }
    }
}

/// `json` for a message: at most 60 characters of it.
fn short(json: &Json) -> String {
    let text = json.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn unsigned(json: &Json, bits: u32) -> Result<DynValue, String> {
    let n = json_u128(json).ok_or_else(|| {
        format!(
            "expected a u{bits} (a number, or a decimal string), not `{}`",
            short(json)
        )
    })?;
    if bits < 128 && n >> bits != 0 {
        return Err(format!("{n} does not fit in u{bits}"));
    }
    Ok(DynValue::Unsigned(n))
}

fn signed(json: &Json, bits: u32) -> Result<DynValue, String> {
    let n = json_i128(json).ok_or_else(|| {
        format!(
            "expected an i{bits} (a number, or a decimal string), not `{}`",
            short(json)
        )
    })?;
    if bits < 128 {
        let half = 1i128 << (bits - 1);
        if n < -half || n >= half {
            return Err(format!("{n} does not fit in i{bits}"));
        }
    }
    Ok(DynValue::Signed(n))
}

fn float(x: f64) -> Json {
    serde_json::Number::from_f64(x).map_or_else(|| Json::String(x.to_string()), Json::Number)
}

/// A JSON number, or the strings a non-finite float is written as (`"NaN"`, `"inf"`, `"-inf"`).
fn json_f64(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn json_char(v: &Json) -> Option<char> {
    let mut chars = v.as_str()?.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

/// A JSON number (or a decimal string, for 128-bit values) as `u128`.
fn json_u128(v: &Json) -> Option<u128> {
    match v {
        Json::Number(n) => n.as_u64().map(u128::from),
        Json::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn json_i128(v: &Json) -> Option<i128> {
    match v {
        Json::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from)),
        Json::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Bytes given as a hex string (optionally `0x`-prefixed) or an array of numbers.
fn json_bytes(v: &Json) -> Option<Vec<u8>> {
    match v {
        Json::String(s) => unhex(s.strip_prefix("0x").unwrap_or(s)),
        Json::Array(items) => items
            .iter()
            .map(|i| i.as_u64().and_then(|n| u8::try_from(n).ok()))
            .collect(),
        _ => None,
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// A `u128` as a JSON number when it fits in `u64`, else as a decimal string.
fn u128_json(n: u128) -> Json {
    u64::try_from(n).map_or_else(|_| Json::String(n.to_string()), Json::from)
}

/// An `i128` as a JSON number when it fits in `i64`, else as a decimal string.
fn i128_json(n: i128) -> Json {
    i64::try_from(n).map_or_else(|_| Json::String(n.to_string()), Json::from)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;
    use crate::codec::{Bincode, Value};

    fn key_roundtrip(descriptor: &str, key: Json) -> Vec<u8> {
        let shape = KeyShape::parse(descriptor).unwrap();
        let bytes = shape.encode(&shape.key_from_json(&key).unwrap()).unwrap();
        assert_eq!(shape.key_to_json(&shape.decode(&bytes).unwrap()), key);
        bytes
    }

    #[test]
    fn keys_as_json() {
        assert_eq!(
            key_roundtrip("(str, i32)", json!(["a\u{0}b", -1])),
            [b'a', 0, 0xff, b'b', 0, 0, 0x7f, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            key_roundtrip(
                "K { a: u16, b: Option<bool> }",
                json!({"a": 258, "b": true})
            ),
            [1, 2, 1, 1]
        );
        assert_eq!(key_roundtrip("Option<u8>", json!(null)), [0]);
        assert_eq!(
            key_roundtrip("u128", json!(u128::MAX.to_string())),
            [0xff; 16]
        );
        assert_eq!(key_roundtrip("[u8; 2]", json!("00ff")), [0, 0xff]);
        let shape = KeyShape::parse("K { a: u16, b: Option<bool> }").unwrap();
        let from_array = shape.key_from_json(&json!([258, true])).unwrap();
        assert_eq!(shape.encode(&from_array).unwrap(), [1, 2, 1, 1]);
        let s = KeyShape::parse("(str, i32)").unwrap();
        let e = s.key_from_json(&json!("alice")).unwrap_err();
        assert!(e.message().contains("JSON like"), "{e}");
        let e = shape.key_from_json(&json!({"c": 1})).unwrap_err();
        assert!(e.message().contains("no field `c`"), "{e}");
    }

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
    struct Unit;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Everything {
        a: u64,
        b: i64,
        c: Option<String>,
        kinds: Vec<Kind>,
        map: BTreeMap<String, u32>,
        by_number: BTreeMap<u16, bool>,
        big: u128,
        neg: i128,
        f: f64,
        nan: f32,
        t: (bool, (), char),
        arr: [u8; 3],
        words: [u16; 2],
        m: Meters,
        u: Unit,
        #[serde(with = "serde_bytes_like")]
        bytes: Vec<u8>,
    }

    /// `serde_bytes`' encoding without the crate: a byte string, not a sequence.
    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(b)
        }
        pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Vec<u8>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                    Ok(v.to_vec())
                }
            }
            d.deserialize_bytes(V)
        }
    }

    fn sample() -> Everything {
        Everything {
            a: 300,
            b: -70_000,
            c: Some("hi".into()),
            kinds: vec![
                Kind::Plain,
                Kind::Wrapped(65535),
                Kind::Pair(-3, 'é'),
                Kind::Named { x: 1.5 },
            ],
            map: BTreeMap::from([("k".to_string(), 7)]),
            by_number: BTreeMap::from([(3, true), (9, false)]),
            big: u128::MAX,
            neg: i128::MIN,
            f: -0.1,
            nan: f32::NAN,
            t: (true, (), 'z'),
            arr: [1, 2, 3],
            words: [7, 300],
            m: Meters(9),
            u: Unit,
            bytes: vec![0xde, 0xad],
        }
    }

    /// Stored bytes → value → JSON → value → the same bytes, for every part of the data model.
    #[test]
    fn values_round_trip_through_json() {
        let shape = ValueShape::of_record(
            "bincode<Everything>",
            Bincode::<Everything>::shape().as_deref(),
        )
        .unwrap()
        .unwrap();
        let mut scratch = Vec::new();
        let bytes = Bincode::<Everything>::encode(&sample(), &mut scratch)
            .unwrap()
            .to_vec();
        let json = shape.decode(&bytes).unwrap().to_json();
        assert_eq!(json["kinds"][0], json!("Plain"));
        assert_eq!(json["kinds"][2], json!({"Pair": [-3, "é"]}));
        assert_eq!(json["by_number"], json!([[3, true], [9, false]]));
        assert_eq!(json["big"], json!(u128::MAX.to_string()));
        assert_eq!(json["nan"], json!("NaN"));
        assert_eq!(json["bytes"], json!("dead"));
        // A byte array is hex too; other arrays are arrays.
        assert_eq!(json["arr"], json!("010203"));
        assert_eq!(json["words"], json!([7, 300]));
        assert_eq!(json["u"], json!(null));
        let back = shape.value_from_json(&json).unwrap();
        assert_eq!(shape.encode(&back).unwrap(), bytes);

        let wrong = |path: &str, bad: Json| {
            let mut j = json.clone();
            j[path] = bad;
            shape.value_from_json(&j).unwrap_err().message().to_owned()
        };
        assert!(wrong("a", json!(-1)).contains("field `a`"));
        assert!(wrong("kinds", json!(["Nope"])).contains("no variant `Nope`"));
        assert!(wrong("words", json!([1, 2, 3])).contains("array of 2"));
        assert!(wrong("arr", json!("0102")).contains("3 bytes"));
        assert!(wrong("arr", json!([1, 2])).contains("3 bytes"));
        // A byte array written as numbers (a dump made before byte arrays were hex) reads.
        let mut numbers = json.clone();
        numbers["arr"] = json!([1, 2, 3]);
        let back = shape.value_from_json(&numbers).unwrap();
        assert_eq!(shape.encode(&back).unwrap(), bytes);
        assert!(wrong("bytes", json!("xyz")).contains("hex"));
    }

    #[test]
    fn ordered_and_subkeyed_values_use_the_key_forms() {
        let ordered = ValueShape::of_record("ordered<(String, u64)>", Some("(str, u64)"))
            .unwrap()
            .unwrap();
        let v = ordered.value_from_json(&json!(["a", 5])).unwrap();
        assert_eq!(
            ordered
                .decode(&ordered.encode(&v).unwrap())
                .unwrap()
                .to_json(),
            json!(["a", 5])
        );

        let sub = ValueShape::of_record(
            "subkey str + raw<Vec<u8>>",
            Some(r#"{"subkey": "str", "value": "raw"}"#),
        )
        .unwrap()
        .unwrap();
        let v = sub.value_from_json(&json!(["slot", "00ff"])).unwrap();
        let bytes = sub.encode(&v).unwrap();
        assert_eq!(bytes, [b's', b'l', b'o', b't', 0, 0, 0, 0xff]);
        assert_eq!(
            sub.decode(&bytes).unwrap().to_json(),
            json!(["slot", "00ff"])
        );
        assert!(sub.value_from_json(&json!("slot")).is_err());
    }
}
