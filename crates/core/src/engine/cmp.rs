//! Tabula's key comparator for byte-keyed tables (see `docs/design.md`, "Key comparator").

use std::ffi::c_int;

use mdbx_sys as sys;

use super::*;

/// Tabula's key comparator for tables whose keys compare as bytes: the order of libmdbx's
/// default comparator (`memcmp` of the common length, then the shorter key first), with the
/// result chosen by a conditional branch.
///
/// Why: libmdbx 0.14 searches a page with a branchless binary search, which turns each probe's
/// position into a data dependency of the previous comparison, so on a page that is not in the
/// CPU cache the probes' cache misses run one after another. A comparator whose sign comes out
/// of a branch lets the CPU predict it and start loading the next probe while the current miss
/// is outstanding — LMDB's search works that way. On the cold-get benchmark this brings libmdbx
/// from ≈ 1.3× LMDB's time to about LMDB's (`docs/benchmarks-get-cold.md`). `black_box` keeps
/// the compiler from turning the branches back into a conditional move.
///
/// # Safety
///
/// `a` and `b` point at valid `MDBX_val`s whose bytes are readable for the call (libmdbx's
/// comparator contract).
pub(crate) unsafe extern "C" fn byte_key_cmp(
    a: *const sys::MDBX_val,
    b: *const sys::MDBX_val,
) -> c_int {
    // SAFETY: libmdbx passes two valid `MDBX_val`s for the call.
    let (a, b) = unsafe { (&*a, &*b) };
    // Two 8-byte keys (a `u64` key, the most common) are decided here, equal keys included
    // (the last probe of every search that finds its key), from the two values as they
    // are: one load of each, no slice made.
    if a.iov_len == 8 && b.iov_len == 8 {
        // SAFETY: each value's 8 bytes are readable for the call (libmdbx's comparator
        // contract); keys on a page are only 2-byte aligned, so the reads are unaligned.
        let (x, y) = unsafe {
            (
                (a.iov_base as *const [u8; 8]).read_unaligned(),
                (b.iov_base as *const [u8; 8]).read_unaligned(),
            )
        };
        let (x, y) = (u64::from_be_bytes(x), u64::from_be_bytes(y));
        return if x < y {
            std::hint::black_box(-1)
        } else if x > y {
            std::hint::black_box(1)
        } else {
            0
        };
    }
    // Longer keys (composite and hash keys) are nearly always decided by their first 8 bytes:
    // read them the same way, with no check of a length that could be 0 (what a slice needs).
    if a.iov_len >= 8 && b.iov_len >= 8 {
        // SAFETY: each value's first 8 bytes are readable for the call (libmdbx's comparator
        // contract; both lengths are at least 8); keys on a page are only 2-byte aligned, so
        // the reads are unaligned.
        let (x, y) = unsafe {
            (
                (a.iov_base as *const u64).read_unaligned(),
                (b.iov_base as *const u64).read_unaligned(),
            )
        };
        if x != y {
            return if u64::from_be(x) < u64::from_be(y) {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    // SAFETY: as above; a zero length with a dangling or null base is turned into an empty
    // slice without reading it.
    let (a, b) = unsafe { (slice(a), slice(b)) };
    byte_order_branchy(a, b)
}

/// The byte order of [`byte_key_cmp`], returning -1, 0 or 1 through branches.
#[inline]
pub(crate) fn byte_order_branchy(a: &[u8], b: &[u8]) -> c_int {
    // The common case first (8-byte integer keys, or keys whose first 8 bytes differ): one
    // load of each, one branch.
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return if x < y {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    let common = a.len().min(b.len());
    let (a8, b8) = (a[..common].chunks_exact(8), b[..common].chunks_exact(8));
    let (a_tail, b_tail) = (a8.remainder(), b8.remainder());
    for (x, y) in a8.zip(b8) {
        let x = u64::from_be_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(y.try_into().expect("8 bytes"));
        if x != y {
            return if x < y {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    for (x, y) in a_tail.iter().zip(b_tail) {
        if x != y {
            return if x < y {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Less => std::hint::black_box(-1),
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => std::hint::black_box(1),
    }
}

/// libmdbx's own comparator for `flags` (`mdbx_get_keycmp`), for tests that pin
/// Tabula's key comparator (`byte_key_cmp`) to its order.
pub fn default_key_order(flags: u32, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // SAFETY: `mdbx_get_keycmp` only maps flags to one of libmdbx's built-in functions.
    let cmp = unsafe { sys::mdbx_get_keycmp(flags) }.expect("libmdbx has a comparator");
    let (a, b) = (val(a), val(b));
    // SAFETY: `a` and `b` describe slices alive for the call; built-in comparators only read.
    unsafe { cmp(&a, &b) }.cmp(&0)
}

/// Tabula's key comparator (`byte_key_cmp`) called the way libmdbx calls it, for the same
/// tests.
pub fn branchy_key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (a, b) = (val(a), val(b));
    // SAFETY: `a` and `b` describe slices alive for the call.
    unsafe { byte_key_cmp(&a, &b) }.cmp(&0)
}
