//! Keys from their recorded descriptor: parse the descriptor string (`(str, u64)`,
//! `SlotKey { addr: [u8; 20], slot: i32 }`, `u64 native-endian`), encode JSON keys given on the
//! command line into stored bytes, and decode stored bytes into JSON.
//!
//! The encodings mirror `tabula_core::codec::key`: unsigned integers big-endian, signed ones
//! big-endian with the sign bit flipped, `bool` one byte, `char` its `u32` big-endian, `[u8; N]`
//! raw, byte strings and strings raw when last and otherwise escaped (`00` → `00 ff`) and
//! terminated by `00 00`, `Option` a tag byte then the value, tuples and structs their parts in
//! order with only the last part "last".

use serde_json::{Map, Value as Json};

use crate::hex;

/// The structure of a key encoding, parsed from its descriptor string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyShape {
    /// `()`.
    Unit,
    /// `bool`.
    Bool,
    /// `uN`, big-endian.
    Unsigned(u32),
    /// `iN`, big-endian with the sign bit flipped.
    Signed(u32),
    /// `char`.
    Char,
    /// `[u8; N]`.
    Array(usize),
    /// `bytes`.
    Bytes,
    /// `str`.
    Str,
    /// `Option<T>`.
    Option(Box<KeyShape>),
    /// `(A, B, ..)`.
    Tuple(Vec<KeyShape>),
    /// `Name { f: T, .. }`.
    Struct {
        /// The struct's name.
        name: String,
        /// Its fields in order.
        fields: Vec<(String, KeyShape)>,
    },
    /// `uN native-endian` (an `integer_key` table).
    Native(u32),
    /// No descriptor is known: keys are hex strings.
    Raw,
}

impl std::fmt::Display for KeyShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyShape::Unit => f.write_str("()"),
            KeyShape::Bool => f.write_str("bool"),
            KeyShape::Unsigned(b) => write!(f, "u{b}"),
            KeyShape::Signed(b) => write!(f, "i{b}"),
            KeyShape::Char => f.write_str("char"),
            KeyShape::Array(n) => write!(f, "[u8; {n}]"),
            KeyShape::Bytes => f.write_str("bytes"),
            KeyShape::Str => f.write_str("str"),
            KeyShape::Option(inner) => write!(f, "Option<{inner}>"),
            KeyShape::Tuple(parts) => {
                let parts: Vec<String> = parts.iter().map(ToString::to_string).collect();
                if parts.len() == 1 {
                    write!(f, "({},)", parts[0])
                } else {
                    write!(f, "({})", parts.join(", "))
                }
            }
            KeyShape::Struct { name, fields } => {
                let fields: Vec<String> = fields.iter().map(|(n, s)| format!("{n}: {s}")).collect();
                write!(f, "{name} {{ {} }}", fields.join(", "))
            }
            KeyShape::Native(b) => write!(f, "u{b} native-endian"),
            KeyShape::Raw => f.write_str("raw bytes"),
        }
    }
}

impl KeyShape {
    /// Parses a descriptor string as the schema record stores it.
    ///
    /// # Errors
    ///
    /// A message naming the descriptor when it is not one Tabula writes.
    pub fn parse(descriptor: &str) -> Result<KeyShape, String> {
        let mut p = Parser {
            s: descriptor.as_bytes(),
            at: 0,
        };
        let shape = p
            .shape()
            .and_then(|s| {
                p.ws();
                if p.at == p.s.len() {
                    Ok(s)
                } else {
                    Err(format!("unexpected text at byte {}", p.at))
                }
            })
            .map_err(|e| format!("key descriptor `{descriptor}` does not parse: {e}"))?;
        Ok(shape)
    }

    /// A sample of the JSON this shape expects, for error messages.
    pub fn example(&self) -> String {
        match self {
            KeyShape::Unit => "null".into(),
            KeyShape::Bool => "true".into(),
            KeyShape::Unsigned(_) | KeyShape::Native(_) => "5".into(),
            KeyShape::Signed(_) => "-5".into(),
            KeyShape::Char => "\"c\"".into(),
            KeyShape::Array(n) => format!("\"{}\"", "00".repeat(*n)),
            KeyShape::Bytes | KeyShape::Raw => "\"00ff\"".into(),
            KeyShape::Str => "\"alice\"".into(),
            KeyShape::Option(inner) => format!("null or {}", inner.example()),
            KeyShape::Tuple(parts) => {
                let parts: Vec<String> = parts.iter().map(KeyShape::example).collect();
                format!("[{}]", parts.join(", "))
            }
            KeyShape::Struct { fields, .. } => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(n, s)| format!("\"{n}\": {}", s.example()))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            }
        }
    }

    /// Encodes a JSON key into the stored bytes.
    ///
    /// # Errors
    ///
    /// A message saying what JSON the shape expects.
    pub fn encode(&self, key: &Json) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.encode_part(key, &mut out, true)?;
        Ok(out)
    }

    fn encode_part(&self, key: &Json, out: &mut Vec<u8>, last: bool) -> Result<(), String> {
        let mismatch = || {
            format!(
                "a key part of shape `{self}` is JSON like {}, not `{key}`",
                self.example()
            )
        };
        match self {
            KeyShape::Unit => match key {
                Json::Null => {}
                Json::Array(a) if a.is_empty() => {}
                _ => return Err(mismatch()),
            },
            KeyShape::Bool => out.push(u8::from(key.as_bool().ok_or_else(mismatch)?)),
            KeyShape::Unsigned(bits) => {
                let n = json_u128(key).ok_or_else(mismatch)?;
                if *bits < 128 && n >> bits != 0 {
                    return Err(format!("{n} does not fit in u{bits}"));
                }
                out.extend_from_slice(&n.to_be_bytes()[16 - (*bits as usize / 8)..]);
            }
            KeyShape::Signed(bits) => {
                let n = json_i128(key).ok_or_else(mismatch)?;
                if *bits < 128 {
                    let half = 1i128 << (bits - 1);
                    if n < -half || n >= half {
                        return Err(format!("{n} does not fit in i{bits}"));
                    }
                }
                let flipped = (n as u128) ^ (1u128 << (bits - 1));
                out.extend_from_slice(&flipped.to_be_bytes()[16 - (*bits as usize / 8)..]);
            }
            KeyShape::Native(bits) => {
                let n = json_u128(key).ok_or_else(mismatch)?;
                if n >> bits != 0 {
                    return Err(format!("{n} does not fit in u{bits}"));
                }
                if *bits == 32 {
                    out.extend_from_slice(&(n as u32).to_ne_bytes());
                } else {
                    out.extend_from_slice(&(n as u64).to_ne_bytes());
                }
            }
            KeyShape::Char => {
                let s = key.as_str().ok_or_else(mismatch)?;
                let mut chars = s.chars();
                let (Some(c), None) = (chars.next(), chars.next()) else {
                    return Err(mismatch());
                };
                out.extend_from_slice(&u32::from(c).to_be_bytes());
            }
            KeyShape::Array(n) => {
                let bytes = json_bytes(key).ok_or_else(mismatch)?;
                if bytes.len() != *n {
                    return Err(format!(
                        "expected {n} bytes for `{self}`, got {}",
                        bytes.len()
                    ));
                }
                out.extend_from_slice(&bytes);
            }
            KeyShape::Bytes | KeyShape::Raw => {
                let bytes = json_bytes(key).ok_or_else(mismatch)?;
                bytes_part(&bytes, out, last);
            }
            KeyShape::Str => {
                let s = key.as_str().ok_or_else(mismatch)?;
                bytes_part(s.as_bytes(), out, last);
            }
            KeyShape::Option(inner) => {
                if key.is_null() {
                    out.push(0);
                } else {
                    out.push(1);
                    inner.encode_part(key, out, last)?;
                }
            }
            KeyShape::Tuple(parts) => {
                let items = key.as_array().ok_or_else(mismatch)?;
                if items.len() != parts.len() {
                    return Err(format!(
                        "expected {} parts for `{self}` (like {}), got {}",
                        parts.len(),
                        self.example(),
                        items.len()
                    ));
                }
                let n = parts.len();
                for (i, (part, item)) in parts.iter().zip(items).enumerate() {
                    part.encode_part(item, out, last && i + 1 == n)?;
                }
            }
            KeyShape::Struct { fields, .. } => {
                let n = fields.len();
                match key {
                    Json::Object(map) => {
                        if let Some(extra) =
                            map.keys().find(|k| !fields.iter().any(|(f, _)| f == *k))
                        {
                            return Err(format!("`{self}` has no field `{extra}`"));
                        }
                        for (i, (name, part)) in fields.iter().enumerate() {
                            let item = map
                                .get(name)
                                .ok_or_else(|| format!("missing field `{name}` of `{self}`"))?;
                            part.encode_part(item, out, last && i + 1 == n)?;
                        }
                    }
                    Json::Array(items) if items.len() == n => {
                        for (i, ((_, part), item)) in fields.iter().zip(items).enumerate() {
                            part.encode_part(item, out, last && i + 1 == n)?;
                        }
                    }
                    _ => return Err(mismatch()),
                }
            }
        }
        Ok(())
    }

    /// Decodes stored key bytes into JSON (structs become objects).
    ///
    /// # Errors
    ///
    /// A message when the bytes do not match the shape.
    pub fn decode(&self, bytes: &[u8]) -> Result<Json, String> {
        let mut input = bytes;
        let v = self.decode_part(&mut input, true)?;
        if !input.is_empty() {
            return Err(format!(
                "{} byte(s) left over after a key of shape `{self}`",
                input.len()
            ));
        }
        Ok(v)
    }

    fn decode_part(&self, input: &mut &[u8], last: bool) -> Result<Json, String> {
        Ok(match self {
            KeyShape::Unit => Json::Null,
            KeyShape::Bool => match take(input, 1, self)?[0] {
                0 => Json::Bool(false),
                1 => Json::Bool(true),
                b => return Err(format!("bool byte {b:#04x} is neither 0 nor 1")),
            },
            KeyShape::Unsigned(bits) => {
                let b = take(input, *bits as usize / 8, self)?;
                let mut buf = [0u8; 16];
                buf[16 - b.len()..].copy_from_slice(b);
                u128_json(u128::from_be_bytes(buf))
            }
            KeyShape::Signed(bits) => {
                let b = take(input, *bits as usize / 8, self)?;
                let mut buf = [0u8; 16];
                buf[16 - b.len()..].copy_from_slice(b);
                let raw = u128::from_be_bytes(buf) ^ (1u128 << (bits - 1));
                // Sign-extend from `bits`.
                let shift = 128 - bits;
                i128_json(((raw << shift) as i128) >> shift)
            }
            KeyShape::Native(bits) => {
                let b = take(input, *bits as usize / 8, self)?;
                if *bits == 32 {
                    Json::from(u32::from_ne_bytes(b.try_into().expect("4 bytes")))
                } else {
                    Json::from(u64::from_ne_bytes(b.try_into().expect("8 bytes")))
                }
            }
            KeyShape::Char => {
                let b = take(input, 4, self)?;
                let n = u32::from_be_bytes(b.try_into().expect("4 bytes"));
                let c = char::from_u32(n).ok_or_else(|| format!("{n:#x} is not a char"))?;
                Json::String(c.to_string())
            }
            KeyShape::Array(n) => Json::String(hex(take(input, *n, self)?)),
            KeyShape::Bytes | KeyShape::Raw => Json::String(hex(&bytes_part_decode(input, last)?)),
            KeyShape::Str => {
                let b = bytes_part_decode(input, last)?;
                Json::String(String::from_utf8(b).map_err(|_| "a str part is not UTF-8")?)
            }
            KeyShape::Option(inner) => match take(input, 1, self)?[0] {
                0 => Json::Null,
                1 => inner.decode_part(input, last)?,
                t => return Err(format!("Option tag {t:#04x} is neither 0 nor 1")),
            },
            KeyShape::Tuple(parts) => {
                let n = parts.len();
                let mut out = Vec::with_capacity(n);
                for (i, p) in parts.iter().enumerate() {
                    out.push(p.decode_part(input, last && i + 1 == n)?);
                }
                Json::Array(out)
            }
            KeyShape::Struct { fields, .. } => {
                let n = fields.len();
                let mut out = Map::new();
                for (i, (name, p)) in fields.iter().enumerate() {
                    out.insert(name.clone(), p.decode_part(input, last && i + 1 == n)?);
                }
                Json::Object(out)
            }
        })
    }
}

fn take<'a>(input: &mut &'a [u8], n: usize, shape: &KeyShape) -> Result<&'a [u8], String> {
    if input.len() < n {
        return Err(format!(
            "a key part of shape `{shape}` needs {n} byte(s), {} left",
            input.len()
        ));
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Ok(head)
}

fn bytes_part(bytes: &[u8], out: &mut Vec<u8>, last: bool) {
    if last {
        out.extend_from_slice(bytes);
        return;
    }
    for &b in bytes {
        if b == 0 {
            out.extend_from_slice(&[0, 0xff]);
        } else {
            out.push(b);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

fn bytes_part_decode(input: &mut &[u8], last: bool) -> Result<Vec<u8>, String> {
    if last {
        let all = input.to_vec();
        *input = &[];
        return Ok(all);
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < input.len() {
        if input[i] == 0 {
            match input.get(i + 1) {
                Some(0) => {
                    *input = &input[i + 2..];
                    return Ok(out);
                }
                Some(0xff) => out.push(0),
                _ => return Err("a string part has a bad escape sequence".into()),
            }
            i += 2;
        } else {
            out.push(input[i]);
            i += 1;
        }
    }
    Err("a string part is not terminated".into())
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
pub fn u128_json(n: u128) -> Json {
    u64::try_from(n).map_or_else(|_| Json::String(n.to_string()), Json::from)
}

/// An `i128` as a JSON number when it fits in `i64`, else as a decimal string.
pub fn i128_json(n: i128) -> Json {
    i64::try_from(n).map_or_else(|_| Json::String(n.to_string()), Json::from)
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
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

    fn ident(&mut self) -> String {
        self.ws();
        let start = self.at;
        while self.at < self.s.len()
            && (self.s[self.at].is_ascii_alphanumeric()
                || self.s[self.at] == b'_'
                || self.s[self.at] == b':')
        {
            // `::` belongs to a path; a single `:` ends a field name.
            if self.s[self.at] == b':' && self.s.get(self.at + 1) != Some(&b':') {
                break;
            }
            self.at += if self.s[self.at] == b':' { 2 } else { 1 };
        }
        String::from_utf8_lossy(&self.s[start..self.at]).into_owned()
    }

    fn number(&mut self) -> Result<usize, String> {
        let id = self.ident();
        id.parse()
            .map_err(|_| format!("expected a number, got `{id}`"))
    }

    fn shape(&mut self) -> Result<KeyShape, String> {
        if self.eat("(") {
            let mut parts = Vec::new();
            if self.eat(")") {
                return Ok(KeyShape::Unit);
            }
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
            let n = self.number()?;
            self.expect("]")?;
            return Ok(KeyShape::Array(n));
        }
        let word = self.ident();
        let bits = |w: &str| {
            w[1..]
                .parse::<u32>()
                .ok()
                .filter(|b| [8, 16, 32, 64, 128].contains(b))
        };
        let shape = match word.as_str() {
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
                let b = bits(w).expect("checked");
                if self.eat("native-endian") {
                    KeyShape::Native(b)
                } else {
                    KeyShape::Unsigned(b)
                }
            }
            w if w.starts_with('i') && bits(w).is_some() => {
                KeyShape::Signed(bits(w).expect("checked"))
            }
            _ => {
                self.expect("{")?;
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
        };
        Ok(shape)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::KeyShape;

    #[test]
    fn parses_what_descriptors_render() {
        for d in [
            "u64",
            "i32",
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
            "u64 native-endian",
            "(u64, Option<str>, (bool,))",
        ] {
            assert_eq!(KeyShape::parse(d).unwrap().to_string(), d);
        }
        assert!(KeyShape::parse("float").is_err());
    }

    #[test]
    fn encodes_like_the_core_codecs() {
        let s = KeyShape::parse("(str, i32)").unwrap();
        let bytes = s.encode(&json!(["a\u{0}b", -1])).unwrap();
        assert_eq!(bytes, [b'a', 0, 0xff, b'b', 0, 0, 0x7f, 0xff, 0xff, 0xff]);
        assert_eq!(s.decode(&bytes).unwrap(), json!(["a\u{0}b", -1]));
        let st = KeyShape::parse("K { a: u16, b: Option<bool> }").unwrap();
        let b = st.encode(&json!({"a": 258, "b": true})).unwrap();
        assert_eq!(b, [1, 2, 1, 1]);
        assert_eq!(st.encode(&json!([258, true])).unwrap(), b);
        assert_eq!(st.decode(&b).unwrap(), json!({"a": 258, "b": true}));
        assert!(s.encode(&json!("alice")).unwrap_err().contains("JSON like"));
        assert!(KeyShape::Unsigned(8).encode(&json!(256)).is_err());
        assert!(KeyShape::Signed(8).encode(&json!(-129)).is_err());
        assert_eq!(KeyShape::Signed(8).encode(&json!(-128)).unwrap(), [0]);
    }
}
