//! Variable-length key parts: byte strings (`Vec<u8>`, `[u8]`) and strings (`String`, `str`).
//!
//! Last in a key, a part is written raw: nothing follows it, so plain byte order is the order of
//! the values, and decoding takes everything left.
//!
//! Anywhere else it is escaped and terminated: each `0x00` becomes `0x00 0xFF` and the part ends
//! with `0x00 0x00`. The encoding is then prefix-free, so the part after it never takes part in
//! comparing this one, and it keeps the order of the values:
//!
//! - where two values first differ on non-zero bytes, the encodings differ on those same bytes;
//! - where one has `0x00` and the other a byte `b > 0`, the encodings have `0x00` against `b`;
//! - where one value ends and the other goes on, the terminator `0x00 0x00` meets either a byte
//!   `b > 0` or an escaped zero `0x00 0xFF`, and sorts first both times: `"a" < "a\0" < "ab"`.
//!
//! Decoding accepts only that form (any other byte after `0x00` is an error), so every accepted
//! input is the encoding of exactly one value.

use super::{AsKey, Key, KeyBuf};
use crate::codec::DecodeError;
use crate::schema::Descriptor;

/// Introduces an escape sequence or the terminator in a non-last part.
const ESCAPE: u8 = 0x00;
/// `ESCAPE, ESCAPED_ZERO` stands for one `0x00` of the value.
const ESCAPED_ZERO: u8 = 0xFF;
/// `ESCAPE, TERMINATOR` ends a non-last part; it sorts before every continuation.
const TERMINATOR: u8 = 0x00;

/// Appends `bytes` as a key part: raw when `last`, escaped and terminated otherwise.
#[inline]
pub(crate) fn encode_bytes_part(bytes: &[u8], out: &mut KeyBuf, last: bool) {
    if last {
        out.extend_from_slice(bytes);
        return;
    }
    // Byte by byte into a stack buffer, appended a buffer at a time: a part with many zero
    // bytes (a big-endian integer stored as bytes) costs no append per zero.
    let mut buf = [0u8; 64];
    if bytes.len() < buf.len() / 2 {
        // A short part fits in one buffer, terminator included: each byte written with an
        // `ESCAPED_ZERO` after it, which only a zero keeps (the next byte, or the terminator,
        // writes over it otherwise), without a branch or a check of the room.
        let mut n = 0;
        for &b in bytes {
            buf[n] = b;
            buf[n + 1] = ESCAPED_ZERO;
            n += 1 + usize::from(b == ESCAPE);
        }
        buf[n] = ESCAPE;
        buf[n + 1] = TERMINATOR;
        out.extend_from_slice(&buf[..n + 2]);
        return;
    }
    let mut n = 0;
    for &b in bytes {
        if n + 2 > buf.len() {
            out.extend_from_slice(&buf[..n]);
            n = 0;
        }
        if b == 0 {
            buf[n] = ESCAPE;
            buf[n + 1] = ESCAPED_ZERO;
            n += 2;
        } else {
            buf[n] = b;
            n += 1;
        }
    }
    if n + 2 > buf.len() {
        out.extend_from_slice(&buf[..n]);
        n = 0;
    }
    buf[n] = ESCAPE;
    buf[n + 1] = TERMINATOR;
    out.extend_from_slice(&buf[..n + 2]);
}

/// Takes a byte-string part from the front of `input`: everything when `last`, otherwise up to
/// and including the terminator, undoing the escapes. `what` names the type in errors.
pub(crate) fn decode_bytes_part(
    input: &mut &[u8],
    last: bool,
    what: &str,
) -> Result<Vec<u8>, DecodeError> {
    if last {
        let all = input.to_vec();
        *input = &[];
        return Ok(all);
    }
    let available = input.len();
    let unterminated = || {
        DecodeError::new(format!(
            "{what}: key part has no 0x00 0x00 terminator in the {available} byte(s) left"
        ))
    };
    let mut value = Vec::new();
    let mut rest = *input;
    loop {
        let Some(at) = rest.iter().position(|&b| b == ESCAPE) else {
            return Err(unterminated());
        };
        value.extend_from_slice(&rest[..at]);
        let (next, after) = match rest.get(at + 1..) {
            Some([next, after @ ..]) => (*next, after),
            _ => return Err(unterminated()),
        };
        match next {
            TERMINATOR => {
                *input = after;
                return Ok(value);
            }
            ESCAPED_ZERO => {
                value.push(0);
                rest = after;
            }
            other => {
                return Err(DecodeError::new(format!(
                    "{what}: invalid escape 0x00 0x{other:02x} in a key part \
                     (expected 0x00 0xff for a zero byte or 0x00 0x00 to end the part)"
                )));
            }
        }
    }
}

impl AsKey<Vec<u8>> for [u8] {
    type Encoded<'a> = &'a [u8];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        self
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, last: bool) {
        encode_bytes_part(self, out, last);
    }
}

impl AsKey<Vec<u8>> for Vec<u8> {
    type Encoded<'a> = &'a [u8];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        self
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, last: bool) {
        encode_bytes_part(self, out, last);
    }
}

impl Key for Vec<u8> {
    const DESCRIPTOR: Descriptor = Descriptor::Bytes;
    const FIXED_SIZE: Option<usize> = None;

    #[inline]
    fn decode_part(input: &mut &[u8], last: bool) -> Result<Self, DecodeError> {
        decode_bytes_part(input, last, "bytes")
    }
}

impl AsKey<String> for str {
    type Encoded<'a> = &'a [u8];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        self.as_bytes()
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, last: bool) {
        encode_bytes_part(self.as_bytes(), out, last);
    }
}

impl AsKey<String> for String {
    type Encoded<'a> = &'a [u8];

    #[inline]
    fn encode(&self) -> Self::Encoded<'_> {
        self.as_bytes()
    }

    #[inline]
    fn encode_part(&self, out: &mut KeyBuf, last: bool) {
        encode_bytes_part(self.as_bytes(), out, last);
    }
}

impl Key for String {
    const DESCRIPTOR: Descriptor = Descriptor::Str;
    const FIXED_SIZE: Option<usize> = None;

    fn decode_part(input: &mut &[u8], last: bool) -> Result<Self, DecodeError> {
        let invalid = |e: std::str::Utf8Error| DecodeError::new(format!("str: invalid UTF-8: {e}"));
        if last {
            let s = std::str::from_utf8(input).map_err(invalid)?.to_owned();
            *input = &[];
            Ok(s)
        } else {
            let bytes = decode_bytes_part(input, false, "str")?;
            String::from_utf8(bytes).map_err(|e| invalid(e.utf8_error()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(value: &(impl AsKey<String> + ?Sized), last: bool) -> Vec<u8> {
        let mut out = KeyBuf::new();
        value.encode_part(&mut out, last);
        out.as_slice().to_vec()
    }

    fn bytes_part(value: &(impl AsKey<Vec<u8>> + ?Sized), last: bool) -> Vec<u8> {
        let mut out = KeyBuf::new();
        value.encode_part(&mut out, last);
        out.as_slice().to_vec()
    }

    #[test]
    fn last_parts_are_raw() {
        assert_eq!(part("a\0b", true), b"a\0b");
        assert_eq!(part("", true), b"");
        assert_eq!(bytes_part(&[0u8, 0xFF, 0][..], true), [0, 0xFF, 0]);
        assert_eq!(AsKey::<String>::encode("héllo"), "héllo".as_bytes());
        assert_eq!(AsKey::<Vec<u8>>::encode(&vec![0u8, 1]), [0, 1]);
    }

    #[test]
    fn non_last_parts_escape_zeros_and_terminate() {
        assert_eq!(part("", false), [0, 0]);
        assert_eq!(part("ab", false), [b'a', b'b', 0, 0]);
        assert_eq!(part("a\0b", false), [b'a', 0, 0xFF, b'b', 0, 0]);
        assert_eq!(part("\0", false), [0, 0xFF, 0, 0]);
        assert_eq!(part("\0\0", false), [0, 0xFF, 0, 0xFF, 0, 0]);
        assert_eq!(
            bytes_part(&[0xFF, 0, 0, 0xFF][..], false),
            [0xFF, 0, 0xFF, 0, 0xFF, 0xFF, 0, 0]
        );
    }

    #[test]
    fn escaped_parts_sort_like_their_values() {
        let values = [
            "", "\0", "\0\0", "\0a", "a", "a\0", "a\0\0", "a\0b", "a\x01", "ab", "b",
        ];
        for pair in values.windows(2) {
            assert!(pair[0] < pair[1], "test table out of order: {pair:?}");
            assert!(
                part(pair[0], false) < part(pair[1], false),
                "{:?} should encode below {:?}",
                pair[0],
                pair[1]
            );
        }
    }

    #[test]
    fn non_last_decode_stops_after_terminator() {
        let mut input: &[u8] = &[b'a', 0, 0xFF, b'b', 0, 0, 7, 8];
        assert_eq!(String::decode_part(&mut input, false).unwrap(), "a\0b");
        assert_eq!(input, [7, 8]);

        let mut input: &[u8] = &[0, 0];
        assert_eq!(Vec::<u8>::decode_part(&mut input, false).unwrap(), b"");
        assert!(input.is_empty());
    }

    #[test]
    fn last_decode_takes_everything() {
        let mut input: &[u8] = b"a\0\0b";
        assert_eq!(String::decode_part(&mut input, true).unwrap(), "a\0\0b");
        assert!(input.is_empty());
        assert_eq!(Vec::<u8>::decode(&[]).unwrap(), b"");
        assert_eq!(Vec::<u8>::decode(&[0, 0xFF]).unwrap(), [0, 0xFF]);
    }

    #[test]
    fn malformed_escape_is_an_error() {
        for bad in [0x01u8, 0x7F, 0xFE] {
            let mut input: &[u8] = &[b'a', 0, bad, 0, 0];
            let err = Vec::<u8>::decode_part(&mut input, false).unwrap_err();
            assert!(err.message().contains("invalid escape"), "{err}");
            assert!(err.message().contains(&format!("0x{bad:02x}")), "{err}");
        }
    }

    #[test]
    fn missing_terminator_is_an_error() {
        let cases: [&[u8]; 5] = [&[], b"abc", &[b'a', 0], &[0, 0xFF], &[b'a', 0, 0xFF, b'b']];
        for bad in cases {
            let mut input = bad;
            let err = String::decode_part(&mut input, false).unwrap_err();
            assert!(
                err.message().contains("no 0x00 0x00 terminator"),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn invalid_utf8_is_an_error_in_both_positions() {
        let err = String::decode(&[b'a', 0xC3]).unwrap_err();
        assert!(err.message().starts_with("str: invalid UTF-8"), "{err}");

        let mut input: &[u8] = &[0xFF, 0xFE, 0, 0];
        let err = String::decode_part(&mut input, false).unwrap_err();
        assert!(err.message().starts_with("str: invalid UTF-8"), "{err}");

        // An escaped zero is a valid UTF-8 NUL once unescaped.
        let mut input: &[u8] = &[0, 0xFF, 0, 0];
        assert_eq!(String::decode_part(&mut input, false).unwrap(), "\0");
    }

    #[test]
    fn descriptors_and_sizes() {
        assert_eq!(String::DESCRIPTOR, Descriptor::Str);
        assert_eq!(Vec::<u8>::DESCRIPTOR, Descriptor::Bytes);
        assert_eq!(String::FIXED_SIZE, None);
        assert_eq!(Vec::<u8>::FIXED_SIZE, None);
    }
}
