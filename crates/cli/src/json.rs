//! How keys and values look on the command line: JSON to and from Tabula's schema-less
//! [`DynKey`] / [`DynValue`]. The encodings themselves are core's ([`KeyShape`], `ValueShape`):
//! this module holds no codec, only the JSON forms.
//!
//! Keys: integers are numbers (decimal strings beyond 64 bits), `char` and strings are strings,
//! `[u8; N]` and byte strings are hex strings (optionally `0x`-prefixed) or arrays of numbers,
//! `Option` is `null` or the value, tuples are arrays, `#[derive(Key)]` structs are objects (or
//! arrays in field order).
//!
//! Values: structs → objects; tuples, tuple structs and arrays → arrays; newtype structs → the
//! inner value; unit structs and `()` → `null`; enums → `"Variant"` for a unit variant and
//! `{"Variant": ...}` otherwise; `Option` → `null` or the value; maps → objects when every key is
//! a string, else arrays of `[key, value]` pairs; byte strings → lowercase hex strings (a plain
//! `Vec<u8>` is a sequence: an array of numbers); `char` → a one-character string; 128-bit
//! integers → numbers when they fit in 64 bits, else decimal strings; non-finite floats →
//! strings (`"NaN"`, `"inf"`).

use serde_json::{Map, Value as Json};
use tabula_core::untyped::{DynKey, DynValue, KeyShape};

use crate::hex;

/// A sample of the JSON a key of `shape` is given as, for error messages.
pub fn example(shape: &KeyShape) -> String {
    match shape {
        KeyShape::Unit => "null".into(),
        KeyShape::Bool => "true".into(),
        KeyShape::Unsigned(_) | KeyShape::NativeInteger(_) => "5".into(),
        KeyShape::Signed(_) => "-5".into(),
        KeyShape::Char => "\"c\"".into(),
        KeyShape::Array(n) => format!("\"{}\"", "00".repeat(*n)),
        KeyShape::Bytes => "\"00ff\"".into(),
        KeyShape::Str => "\"alice\"".into(),
        KeyShape::Option(inner) => format!("null or {}", example(inner)),
        KeyShape::Tuple(parts) => {
            let parts: Vec<String> = parts.iter().map(example).collect();
            format!("[{}]", parts.join(", "))
        }
        KeyShape::Struct { fields, .. } => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(n, s)| format!("\"{n}\": {}", example(s)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        _ => "?".into(),
    }
}

/// The key `json` stands for in a table with keys of `shape`.
///
/// # Errors
///
/// A message saying what JSON the shape expects.
pub fn key_from_json(shape: &KeyShape, json: &Json) -> Result<DynKey, String> {
    let mismatch = || {
        format!(
            "a key part of shape `{shape}` is JSON like {}, not `{json}`",
            example(shape)
        )
    };
    Ok(match shape {
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
        KeyShape::Char => {
            let s = json.as_str().ok_or_else(mismatch)?;
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => DynKey::Char(c),
                _ => return Err(mismatch()),
            }
        }
        KeyShape::Array(_) | KeyShape::Bytes => {
            DynKey::Bytes(json_bytes(json).ok_or_else(mismatch)?)
        }
        KeyShape::Str => DynKey::Str(json.as_str().ok_or_else(mismatch)?.to_owned()),
        KeyShape::Option(inner) => DynKey::Option(match json {
            Json::Null => None,
            other => Some(Box::new(key_from_json(inner, other)?)),
        }),
        KeyShape::Tuple(parts) => {
            let items = json.as_array().ok_or_else(mismatch)?;
            if items.len() != parts.len() {
                return Err(format!(
                    "expected {} parts for `{shape}` (like {}), got {}",
                    parts.len(),
                    example(shape),
                    items.len()
                ));
            }
            DynKey::Tuple(
                parts
                    .iter()
                    .zip(items)
                    .map(|(p, item)| key_from_json(p, item))
                    .collect::<Result<_, _>>()?,
            )
        }
        KeyShape::Struct { fields, .. } => match json {
            Json::Object(map) => {
                if let Some(extra) = map.keys().find(|k| !fields.iter().any(|(f, _)| f == *k)) {
                    return Err(format!("`{shape}` has no field `{extra}`"));
                }
                DynKey::Tuple(
                    fields
                        .iter()
                        .map(|(name, part)| {
                            let item = map
                                .get(name)
                                .ok_or_else(|| format!("missing field `{name}` of `{shape}`"))?;
                            key_from_json(part, item)
                        })
                        .collect::<Result<_, _>>()?,
                )
            }
            Json::Array(items) if items.len() == fields.len() => DynKey::Tuple(
                fields
                    .iter()
                    .zip(items)
                    .map(|((_, part), item)| key_from_json(part, item))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return Err(mismatch()),
        },
        _ => return Err(mismatch()),
    })
}

/// The JSON form of a decoded key (structs become objects).
pub fn key_to_json(shape: &KeyShape, key: &DynKey) -> Json {
    match (shape, key) {
        (KeyShape::Struct { fields, .. }, DynKey::Tuple(items)) => Json::Object(
            fields
                .iter()
                .zip(items)
                .map(|((name, s), k)| (name.clone(), key_to_json(s, k)))
                .collect(),
        ),
        (KeyShape::Tuple(parts), DynKey::Tuple(items)) => Json::Array(
            parts
                .iter()
                .zip(items)
                .map(|(s, k)| key_to_json(s, k))
                .collect(),
        ),
        (KeyShape::Option(inner), DynKey::Option(Some(k))) => key_to_json(inner, k),
        (_, k) => scalar_key(k),
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
        _ => Json::Null,
    }
}

/// The JSON form of a decoded value.
pub fn value_to_json(value: &DynValue) -> Json {
    match value {
        DynValue::Unit | DynValue::Option(None) => Json::Null,
        DynValue::Bool(b) => Json::Bool(*b),
        DynValue::Unsigned(n) => u128_json(*n),
        DynValue::Signed(n) => i128_json(*n),
        DynValue::F32(x) => float(f64::from(*x)),
        DynValue::F64(x) => float(*x),
        DynValue::Char(c) => Json::String(c.to_string()),
        DynValue::Str(s) => Json::String(s.clone()),
        DynValue::Bytes(b) => Json::String(hex(b)),
        DynValue::Option(Some(v)) => value_to_json(v),
        DynValue::Seq(items) | DynValue::Tuple(items) => {
            Json::Array(items.iter().map(value_to_json).collect())
        }
        DynValue::Map(pairs) => {
            if pairs.iter().all(|(k, _)| matches!(k, DynValue::Str(_))) {
                let mut m = Map::new();
                for (k, v) in pairs {
                    if let DynValue::Str(k) = k {
                        m.insert(k.clone(), value_to_json(v));
                    }
                }
                Json::Object(m)
            } else {
                Json::Array(
                    pairs
                        .iter()
                        .map(|(k, v)| Json::Array(vec![value_to_json(k), value_to_json(v)]))
                        .collect(),
                )
            }
        }
        DynValue::Struct(fields) => Json::Object(
            fields
                .iter()
                .map(|(n, v)| (n.clone(), value_to_json(v)))
                .collect(),
        ),
        DynValue::Variant { name, value, .. } => match &**value {
            DynValue::Unit => Json::String(name.clone()),
            inner => {
                let mut m = Map::new();
                m.insert(name.clone(), value_to_json(inner));
                Json::Object(m)
            }
        },
        _ => Json::Null,
    }
}

fn float(x: f64) -> Json {
    serde_json::Number::from_f64(x).map_or_else(|| Json::String(x.to_string()), Json::Number)
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
pub fn json_bytes(v: &Json) -> Option<Vec<u8>> {
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
    use serde_json::json;
    use tabula_core::untyped::KeyShape;

    use super::*;

    fn roundtrip(descriptor: &str, key: Json) -> Vec<u8> {
        let shape = KeyShape::parse(descriptor).unwrap();
        let bytes = shape.encode(&key_from_json(&shape, &key).unwrap()).unwrap();
        assert_eq!(key_to_json(&shape, &shape.decode(&bytes).unwrap()), key);
        bytes
    }

    #[test]
    fn keys_as_json() {
        assert_eq!(
            roundtrip("(str, i32)", json!(["a\u{0}b", -1])),
            [b'a', 0, 0xff, b'b', 0, 0, 0x7f, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            roundtrip(
                "K { a: u16, b: Option<bool> }",
                json!({"a": 258, "b": true})
            ),
            [1, 2, 1, 1]
        );
        assert_eq!(roundtrip("Option<u8>", json!(null)), [0]);
        assert_eq!(roundtrip("u128", json!(u128::MAX.to_string())), [0xff; 16]);
        assert_eq!(roundtrip("[u8; 2]", json!("00ff")), [0, 0xff]);
        let shape = KeyShape::parse("K { a: u16, b: Option<bool> }").unwrap();
        let from_array = key_from_json(&shape, &json!([258, true])).unwrap();
        assert_eq!(shape.encode(&from_array).unwrap(), [1, 2, 1, 1]);
        let s = KeyShape::parse("(str, i32)").unwrap();
        assert!(
            key_from_json(&s, &json!("alice"))
                .unwrap_err()
                .contains("JSON like")
        );
        assert!(
            key_from_json(&shape, &json!({"c": 1}))
                .unwrap_err()
                .contains("no field `c`")
        );
    }

    #[test]
    fn values_as_json() {
        let v = DynValue::Struct(vec![
            ("n".into(), DynValue::Signed(i128::MIN)),
            ("f".into(), DynValue::F64(f64::NAN)),
            (
                "m".into(),
                DynValue::Map(vec![(DynValue::Str("k".into()), DynValue::Unsigned(7))]),
            ),
            (
                "e".into(),
                DynValue::Variant {
                    name: "Unit".into(),
                    index: 0,
                    value: Box::new(DynValue::Unit),
                },
            ),
            (
                "w".into(),
                DynValue::Variant {
                    name: "Wrapped".into(),
                    index: 1,
                    value: Box::new(DynValue::Bytes(vec![0xab])),
                },
            ),
        ]);
        assert_eq!(
            value_to_json(&v),
            json!({"n": i128::MIN.to_string(), "f": "NaN", "m": {"k": 7}, "e": "Unit",
                   "w": {"Wrapped": "ab"}})
        );
    }
}
