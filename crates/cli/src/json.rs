//! How keys and values look on the command line. The JSON forms of typed keys and values are
//! core's ([`KeyShape::key_to_json`](tabula_core::codec::KeyShape::key_to_json),
//! [`DynValue::to_json`](tabula_core::codec::DynValue::to_json) and their inverses, listed in
//! `tabula_core::untyped::json`), so what `dump` prints is what `load` reads; this module holds
//! the one form of the tool's own: the bytes of a table without a recorded encoding.

use serde_json::Value as Json;

/// Bytes given as a hex string (optionally `0x`-prefixed) or an array of numbers: the keys and
/// values of a table whose encodings are not recorded.
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

/// Lowercase or uppercase hex digits, two per byte.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bytes_as_hex_or_numbers() {
        assert_eq!(json_bytes(&json!("0x00ff")), Some(vec![0, 0xff]));
        assert_eq!(json_bytes(&json!("00FF")), Some(vec![0, 0xff]));
        assert_eq!(json_bytes(&json!([1, 255])), Some(vec![1, 255]));
        assert_eq!(json_bytes(&json!("0")), None);
        assert_eq!(json_bytes(&json!([256])), None);
        assert_eq!(json_bytes(&json!("zz")), None);
    }
}
