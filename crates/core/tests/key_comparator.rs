//! Tabula's branchy key comparator (installed on every byte-keyed table) must order keys exactly
//! as libmdbx's default comparator does: other programs (`mdbx_chk`, the `tabula` CLI, a raw
//! libmdbx reader) open the same tables with the default one. Each case compares the sign of
//! the two comparators, called through the C ABI, with the sign of Rust's slice order.
//!
//! `PROPTEST_CASES` sets the case count (default here: 4096 per property). Each property prints
//! its RNG seed; `TABULA_SEED=<seed>` replays a run. A failing case is saved in
//! `tests/proptest-regressions/key_comparator.txt` and replayed first by every run.

#[path = "../../../tests/support/props.rs"]
mod props;
#[path = "../../../tests/support/random.rs"]
mod random;

use std::cmp::Ordering;

use proptest::collection::vec;
use proptest::prelude::*;
use tabula_core::__private::{branchy_key_order, default_key_order};

/// Byte-keyed tables: libmdbx's comparator for flags 0 (and for dupsort, whose keys compare
/// the same way).
const BYTE_KEYS: u32 = 0;

fn check(a: &[u8], b: &[u8]) -> Result<(), TestCaseError> {
    let default = default_key_order(BYTE_KEYS, a, b);
    let branchy = branchy_key_order(a, b);
    prop_assert_eq!(branchy, default, "a = {:02x?}, b = {:02x?}", a, b);
    prop_assert_eq!(branchy, a.cmp(b));
    prop_assert_eq!(branchy_key_order(b, a), branchy.reverse());
    Ok(())
}

proptest! {
    #![proptest_config(props::config("key_comparator", 4096))]

    #[test]
    fn random_keys(a in vec(any::<u8>(), 0..40), b in vec(any::<u8>(), 0..40)) {
        check(&a, &b)?;
    }

    /// Keys sharing a prefix, differing (or ending) at any position: within the 8-byte words,
    /// in the tail, or one a prefix of the other.
    #[test]
    fn shared_prefixes(
        prefix in vec(any::<u8>(), 0..33),
        a in vec(any::<u8>(), 0..12),
        b in vec(any::<u8>(), 0..12),
    ) {
        let (mut x, mut y) = (prefix.clone(), prefix);
        x.extend_from_slice(&a);
        y.extend_from_slice(&b);
        check(&x, &y)?;
        check(&x, &x)?;
    }

    /// Two 8-byte keys (`u64` keys), which the comparator decides on a path of their own:
    /// sharing their first `shared` bytes, and equal.
    #[test]
    fn eight_byte_keys(a in any::<[u8; 8]>(), b in any::<[u8; 8]>(), shared in 0..=8usize) {
        let mut b = b;
        b[..shared].copy_from_slice(&a[..shared]);
        check(&a, &b)?;
        check(&a, &a)?;
    }

    /// Bytes at the extremes, where a signed comparison would go wrong.
    #[test]
    fn extreme_bytes(a in vec(prop_oneof![Just(0u8), Just(0x7f), Just(0x80), Just(0xff)], 0..20),
                     b in vec(prop_oneof![Just(0u8), Just(0x7f), Just(0x80), Just(0xff)], 0..20)) {
        check(&a, &b)?;
    }
}

#[test]
fn empty_and_equal_keys() {
    assert_eq!(branchy_key_order(b"", b""), Ordering::Equal);
    assert_eq!(branchy_key_order(b"", b"\0"), Ordering::Less);
    assert_eq!(branchy_key_order(b"abcdefgh", b"abcdefgh"), Ordering::Equal);
    assert_eq!(branchy_key_order(b"abcdefgh", b"abcdefghi"), Ordering::Less);
    assert_eq!(
        default_key_order(BYTE_KEYS, b"abcdefghi", b"abcdefgh"),
        Ordering::Greater
    );
}

/// 8-byte keys (`u64` keys, the commonest) are decided by their first 8-byte word, equal ones
/// included; keys of 8 and more bytes whose first 8 are equal go on to the rest.
#[test]
fn eight_byte_keys_and_their_extensions() {
    let words = [
        0u64,
        1,
        0xff,
        0x100,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        u64::MAX,
    ];
    let mut keys: Vec<Vec<u8>> = words.iter().map(|w| w.to_be_bytes().to_vec()).collect();
    for w in words {
        for tail in [&[][..], &[0], &[0xff], &[1, 2, 3, 4, 5, 6, 7, 8, 9]] {
            let mut k = w.to_be_bytes().to_vec();
            k.extend_from_slice(tail);
            keys.push(k);
        }
    }
    keys.push(Vec::new());
    keys.push(vec![0; 7]);
    for a in &keys {
        for b in &keys {
            check(a, b).unwrap();
        }
    }
}
