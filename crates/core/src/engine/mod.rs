//! The engine: the only module that calls libmdbx. Every `unsafe` block in Tabula is here, each with a
//! `// SAFETY:` note naming the invariant it relies on.
//!
//! The wrappers are thin and untyped (bytes in, bytes out, libmdbx codes as errors); the typed
//! layer in `txn` adds tables, codecs and error context.
//!
//! Ownership rules the types below encode:
//! - [`Env`] owns the environment and closes it on drop. Everything that uses it borrows it or
//!   is dropped first (`Db` drops its pooled read transactions before its `Env`).
//! - [`RawTxn`] owns a transaction object and aborts it on drop. A read transaction may move
//!   between threads (the environment is opened with `MDBX_NOSTICKYTHREADS`); a write transaction
//!   never does: its owner (`Tx<Rw>`) is `!Send`.
//! - Slices handed out by [`RawTxn::get`] and [`RawCursor::get`] live as long as the shared borrow
//!   of the transaction they came from. Writes take `&mut RawTxn`, so no slice can be alive when
//!   libmdbx changes the pages it points into; resetting or ending the transaction takes it by
//!   value or `&mut`, for the same reason.

//!
//! One file per concern: `code` (return codes), `env` (the environment), `chk` (the integrity
//! check's report), `txn` (transaction
//! objects), `gc` (page use), `cursor`, `room` (a value's room reserved in a page), `slots`
//! (per-thread reuse
//! of transactions and cursors), `readers` (cuttable read transactions and the slow-reader
//! callback), `cmp` (the key
//! comparator), `space` (disk-space reservations), `limits`, `flags`, `log`, `clock`. The rest of
//! the crate sees only the items re-exported here, and nothing here imports from outside this
//! module (`tests/layering.rs` checks both).

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::ptr;

use mdbx_sys as sys;

mod chk;
mod clock;
mod code;
mod cursor;
mod env;
mod flags;
mod gc;
pub(crate) mod limits;
mod log;
mod readers;
mod room;
mod slots;
mod space;
pub(crate) mod text;
mod txn;

pub(crate) use chk::*;
pub(crate) use clock::*;
pub(crate) use code::*;
pub(crate) use cursor::*;
pub(crate) use env::*;
pub use env::{DATA_FILE, LOCK_FILE, ReaderInfo};
pub(crate) use flags::*;
pub(crate) use limits::{MAX_PAGE_SIZE, limits_at_page_size};
pub(crate) use log::*;
pub(crate) use readers::*;
pub use room::Room;
pub(crate) use slots::*;
pub(crate) use space::*;
pub(crate) use txn::*;

pub(crate) use sys::MDBX_dbi as Dbi;

pub(crate) fn val(bytes: &[u8]) -> sys::MDBX_val {
    sys::MDBX_val {
        iov_base: bytes.as_ptr() as *mut c_void,
        iov_len: bytes.len(),
    }
}

pub(crate) const EMPTY: sys::MDBX_val = sys::MDBX_val {
    iov_base: ptr::null_mut(),
    iov_len: 0,
};

/// Turns a value libmdbx returned (or passed to a comparator) into a slice: empty when the
/// length is 0, whatever the pointer.
///
/// # Safety
///
/// When `v.iov_len > 0`, `v.iov_base` points at `v.iov_len` bytes that stay readable and
/// unmodified for `'t`: for a read, bytes in the map or in the transaction's dirty pages of a
/// transaction that stays alive and unmodified for `'t`; for a comparator, bytes libmdbx
/// keeps for the call.
pub(crate) unsafe fn slice<'t>(v: &sys::MDBX_val) -> &'t [u8] {
    if v.iov_len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees the pointer and length describe readable bytes for 't.
        unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) }
    }
}

/// A key and a value borrowed from libmdbx.
pub(crate) type Pair<'a> = (&'a [u8], &'a [u8]);
/// libmdbx's version string, e.g. `0.14.4`.
pub(crate) fn version() -> String {
    // SAFETY: `mdbx_version` is an immutable static initialised by the C library.
    let v = unsafe { sys::mdbx_version };
    format!("{}.{}.{}", v.major, v.minor, v.patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ext4_and_xfs_keep_reserved_space_for_the_map() {
        assert_eq!(MapSpace::of_type(0xef53), MapSpace::Reserved);
        assert_eq!(MapSpace::of_type(0x5846_5342), MapSpace::Reserved);
        for (magic, name) in [(0x0102_1994u64, "tmpfs"), (0x9123_683e, "btrfs")] {
            match MapSpace::of_type(magic) {
                MapSpace::Unreservable(why) => assert!(why.contains(name), "{why}"),
                MapSpace::Reserved => panic!("{name} reserves"),
            }
        }
        assert!(matches!(
            MapSpace::of_type(0x1234),
            MapSpace::Unreservable(why) if why.contains("0x1234")
        ));
    }
}
