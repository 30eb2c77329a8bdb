//! What the workloads store and how every variant proves it read the right thing: the typed
//! row, value generators, and the checksums over contents (not lengths) each pass returns.
//!
//! Every read is folded into a checksum of the bytes or decoded fields it saw; the expected
//! sum is computed from the generators before the timed pass, so a variant that read a wrong
//! value, a truncated one, or nothing, fails the run instead of posting a figure.

use serde::{Deserialize, Serialize};

/// The typed value of the typed rows (the 60-byte serde struct
/// `{u64, u64, String, u32, [u8; 32]}`): 64 bytes in bincode 2's standard encoding, 72 in
/// bincode 1's (heed's `SerdeBincode`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// The key it is stored under.
    pub id: u64,
    /// A large number (a 9-byte varint).
    pub amount: u64,
    /// 12 ASCII characters.
    pub name: String,
    /// A 32-bit field.
    pub flags: u32,
    /// 32 bytes.
    pub hash: [u8; 32],
}

/// splitmix64's finaliser: a cheap, well-mixed function of `x`.
#[inline]
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The row stored under key `k` at `version` (0 when loaded, higher when rewritten).
pub fn row(k: u64, version: u64) -> Row {
    let m = mix(k ^ version.rotate_left(40));
    let mut hash = [0u8; 32];
    for (i, chunk) in hash.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&mix(m.wrapping_add(i as u64)).to_le_bytes());
    }
    Row {
        id: k,
        amount: m | (1 << 63),
        name: format!("acct{:08}", (k ^ version) % 100_000_000),
        flags: m as u32,
        hash,
    }
}

/// The checksum of one decoded row: every field enters it.
#[inline]
pub fn row_sum(r: &Row) -> u64 {
    row_parts_sum(r.id, r.amount, r.name.as_bytes(), r.flags, &r.hash)
}

/// [`row_sum`] from the fields (for readers that decode into a tuple).
#[inline]
pub fn row_parts_sum(id: u64, amount: u64, name: &[u8], flags: u32, hash: &[u8; 32]) -> u64 {
    mix(id)
        ^ amount.rotate_left(17)
        ^ fold_words(name).rotate_left(5)
        ^ u64::from(flags).rotate_left(33)
        ^ fold_words(hash)
}

/// A checksum of every byte of a short value: its 8-byte words (the tail zero-padded) and its
/// length, folded in order.
#[inline]
pub fn fold_words(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01B3).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut tail = [0u8; 8];
        tail[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(tail))
            .wrapping_mul(0x0000_0100_0000_01B3)
            .rotate_left(29);
    }
    h
}

/// A checksum of a big value that reads every cache line of it: the first word of each
/// 64-byte line, the last 8 bytes and the length (what a reader that looks at the whole value
/// pays, without hashing every byte).
#[inline]
pub fn fold_lines(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    for line in bytes.chunks(64) {
        let mut w = [0u8; 8];
        let n = line.len().min(8);
        w[..n].copy_from_slice(&line[..n]);
        h = (h ^ u64::from_le_bytes(w))
            .wrapping_mul(0x0000_0100_0000_01B3)
            .rotate_left(29);
    }
    if bytes.len() >= 8 {
        let last: [u8; 8] = bytes[bytes.len() - 8..].try_into().expect("8 bytes");
        h ^= mix(u64::from_le_bytes(last));
    }
    h
}

/// The big value stored under key `k`: `len` bytes, every word a function of `k` and its
/// position.
pub fn big_value(k: u64, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    let base = mix(k);
    let mut i = 0u64;
    while v.len() < len {
        let w = mix(base ^ i).to_le_bytes();
        let n = (len - v.len()).min(8);
        v.extend_from_slice(&w[..n]);
        i += 1;
    }
    v
}

/// A 32-byte value that names its key and version and carries a check of both: words
/// `k`, `version`, `mix(k ^ version)`, `mix(!k ^ version)`. Readers of a table that a writer
/// is changing verify each value with [`check_value32v`].
pub fn value32v(k: u64, version: u64) -> [u8; 32] {
    let mut v = [0u8; 32];
    v[..8].copy_from_slice(&k.to_le_bytes());
    v[8..16].copy_from_slice(&version.to_le_bytes());
    v[16..24].copy_from_slice(&mix(k ^ version).to_le_bytes());
    v[24..].copy_from_slice(&mix(!k ^ version).to_le_bytes());
    v
}

/// Whether `bytes` is a [`value32v`] of key `k` (any version): a read of the wrong key, a torn
/// or damaged value fails it.
#[inline]
pub fn check_value32v(k: u64, bytes: &[u8]) -> bool {
    let Ok(b) = <&[u8; 32]>::try_from(bytes) else {
        return false;
    };
    let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let (key, version) = (word(0), word(1));
    key == k && word(2) == mix(k ^ version) && word(3) == mix(!k ^ version)
}

/// The checksum of one entry of a walk or a final-state check: its key and its value's sum.
#[inline]
pub fn entry_sum(k: u64, value_sum: u64) -> u64 {
    mix(k.rotate_left(13)) ^ value_sum
}

/// The sum (wrapping) of `per_key(k)` over `keys`: what a pass over `keys` must return.
pub fn expected_sum(keys: &[u64], per_key: impl Fn(u64) -> u64) -> u64 {
    keys.iter().fold(0u64, |s, &k| s.wrapping_add(per_key(k)))
}

/// Panics unless a pass returned the expected checksum (a wrong read is a failed run, never a
/// figure).
#[track_caller]
pub fn verify(what: &str, got: u64, expected: u64) {
    assert_eq!(
        got, expected,
        "{what}: the checksum of what was read is {got:#x}, the data written gives {expected:#x}: \
         a variant read wrong or missing values"
    );
}

/// The bincode 2 configuration Tabula's `Bincode<T>` stores with (standard: varints).
pub const BINCODE2: bincode::config::Configuration = bincode::config::standard();

/// `row` encoded as Tabula stores it (bincode 2, standard configuration).
pub fn row_bytes(r: &Row) -> Vec<u8> {
    bincode::serde::encode_to_vec(r, BINCODE2).expect("encode a row")
}

/// Plain bincode 2 `decode_from_slice` (no limit: a damaged length prefix may allocate
/// without bound; the floor a bounded decoder is measured against).
#[inline]
pub fn decode_row(bytes: &[u8]) -> Row {
    bincode::serde::decode_from_slice::<Row, _>(bytes, BINCODE2)
        .expect("decode a row")
        .0
}

/// redb's typed value for [`Row`]: bincode 2 (standard), as the "redb typed" column.
#[derive(Debug)]
pub struct RedbRow;

impl redb::Value for RedbRow {
    type SelfType<'a> = Row;
    type AsBytes<'a> = Vec<u8>;

    fn fixed_width() -> Option<usize> {
        None
    }

    fn from_bytes<'a>(data: &'a [u8]) -> Row
    where
        Self: 'a,
    {
        decode_row(data)
    }

    fn as_bytes<'a, 'b: 'a>(value: &'a Row) -> Vec<u8>
    where
        Self: 'b,
    {
        row_bytes(value)
    }

    fn type_name() -> redb::TypeName {
        redb::TypeName::new("tabula_bench::Row(bincode2)")
    }
}

/// redb's native tuple for the same fields (no serde: the "redb native tuple" column).
pub type RedbTuple = (u64, u64, &'static str, u32, [u8; 32]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_see_contents_not_lengths() {
        let a = row(7, 0);
        let mut b = a.clone();
        b.hash[31] ^= 1;
        assert_ne!(row_sum(&a), row_sum(&b));
        let mut c = a.clone();
        c.name.replace_range(0..1, "b");
        assert_ne!(row_sum(&a), row_sum(&c));
        assert_eq!(decode_row(&row_bytes(&a)), a);
        let v = big_value(3, 16 << 10);
        let mut w = v.clone();
        w[64 * 100] ^= 1;
        assert_ne!(fold_lines(&v), fold_lines(&w));
        assert_ne!(fold_words(&[1, 2, 3]), fold_words(&[1, 2, 4]));
        assert_ne!(big_value(3, 1024), big_value(4, 1024));
        assert!(check_value32v(9, &value32v(9, 5)));
        assert!(!check_value32v(8, &value32v(9, 5)));
        let mut torn = value32v(9, 5);
        torn[20] ^= 1;
        assert!(!check_value32v(9, &torn));
    }

    #[test]
    fn a_wrong_read_fails_the_run() {
        let keys = [3, 5, 3];
        let good = expected_sum(&keys, |k| row_sum(&row(k, 0)));
        verify("ok", good, good);
        // One value read at the wrong version (same length, other contents) must not pass.
        let wrong =
            expected_sum(&[3, 3], |k| row_sum(&row(k, 0))).wrapping_add(row_sum(&row(5, 1)));
        let caught = std::panic::catch_unwind(|| verify("wrong", wrong, good));
        assert!(caught.is_err());
    }

    #[test]
    fn the_row_is_about_sixty_bytes() {
        let n = row_bytes(&row(999_999, 0)).len();
        assert!((56..=72).contains(&n), "{n} bytes");
    }
}
