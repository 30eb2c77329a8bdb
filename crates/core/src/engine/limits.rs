//! libmdbx's size limits, asked before an environment exists (option checks, error advice).

use mdbx_sys as sys;

/// `MDBX_MIN_PAGESIZE`.
pub const MIN_PAGE_SIZE: usize = sys::MDBX_MIN_PAGESIZE as usize;
/// `MDBX_MAX_PAGESIZE`.
pub const MAX_PAGE_SIZE: usize = sys::MDBX_MAX_PAGESIZE as usize;
/// `MDBX_MAX_DBI`: named tables per environment (`MDBX_opt_max_db` refuses more).
pub const MAX_TABLES: u64 = sys::MDBX_MAX_DBI as u64;
/// `MDBX_READERS_LIMIT` (in libmdbx's internals, not in `mdbx.h`): `MDBX_opt_max_readers`
/// accepts 1 to this many.
pub const MAX_READERS: u32 = 32767;
/// `NUM_METAS`: every data file starts with three meta pages.
pub const META_PAGES: usize = 3;
/// Pages in the lower size bound libmdbx picks when none is given (`MDBX_WORDBITS`).
pub const DEFAULT_LOWER_PAGES: usize = usize::BITS as usize;
/// `MAX_PAGENO + 1`: pages a database can hold.
pub const MAX_PAGES: u64 = 1 << 31;

/// The page size libmdbx uses when none is given: the OS page size, within the limits.
pub fn default_page_size() -> usize {
    // SAFETY: a pure function of libmdbx's globals, which its library constructor sets
    // before any Rust code runs.
    unsafe { sys::mdbx_default_pagesize() }
}

/// The largest database, in bytes, with pages of `page_size` (a valid page size):
/// `MAX_PAGES` pages, capped by the most libmdbx maps (less under Valgrind).
pub fn max_db_size(page_size: usize) -> usize {
    // SAFETY: a pure function of its argument and libmdbx's globals (set by its library
    // constructor); it returns -1 for an invalid page size, which becomes 0 here.
    let bytes = unsafe { sys::mdbx_limits_dbsize_max(page_size as isize) };
    usize::try_from(bytes).unwrap_or(0)
}

/// The largest key and value (in bytes) libmdbx accepts in a table with `flags` at
/// `page_size` (`mdbx_limits_keysize_max` / `mdbx_limits_valsize_max`), or `None` for a page
/// size libmdbx does not support.
pub(crate) fn limits_at_page_size(page_size: usize, flags: u32) -> Option<(usize, usize)> {
    // SAFETY: both are pure functions of their arguments; an unsupported page size gives -1.
    let (k, v) = unsafe {
        (
            sys::mdbx_limits_keysize_max(page_size as isize, flags),
            sys::mdbx_limits_valsize_max(page_size as isize, flags),
        )
    };
    (k > 0 && v > 0).then_some((k as usize, v as usize))
}
