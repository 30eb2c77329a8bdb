//! Text the value decoder reads from a page: a string checked for UTF-8 once, as cheaply as its
//! bytes allow.

/// `bytes` as a `str`, or the reason they are not UTF-8.
///
/// ASCII bytes (every byte below 0x80) are checked a word at a time and taken as they are;
/// only a string with other bytes goes through the full UTF-8 check. For the short strings
/// rows hold, `std::str::from_utf8` walks byte by byte until its input is word-aligned, which
/// cost a typed get of a row with a 12-byte name about 70 of its ~1,400 instructions
/// (`crates/bench`, callgrind of get_hot and scan).
#[inline]
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: every byte is below 0x80, and a sequence of ASCII bytes is valid UTF-8.
        Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        std::str::from_utf8(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::utf8;

    #[test]
    fn agrees_with_the_standard_check() {
        let cases: [&[u8]; 8] = [
            b"",
            b"acct00000042",
            b"a longer ascii string past two words",
            "caf\u{e9}".as_bytes(),
            "\u{1F600} and ascii".as_bytes(),
            b"\xff",
            b"ascii then \xc3",
            b"\x7f\x00\x41",
        ];
        for bytes in cases {
            assert_eq!(utf8(bytes), std::str::from_utf8(bytes), "{bytes:02x?}");
        }
    }
}
