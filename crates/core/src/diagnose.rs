//! Turning a libmdbx failure into an [`Error`], with the diagnosis that makes it useful: the
//! read transaction that pins old pages (`MapFull`), whether the file system is full
//! (`DiskFull`), the page size that would take a too-large entry (`TooLarge`). The error types
//! and their messages are `error`'s; what has to be looked up (the reader table, the free
//! space, libmdbx's limits) is done here, where the failure is handled.

use std::path::Path;

use crate::engine::ReaderInfo;
use crate::engine::{self, Code, Env};
use crate::error::{At, Error, KeyHex, Part};

/// Below this many bytes available, an `EIO` from a write is taken for a full file system
/// (libmdbx reports a write cut short as `EIO`: `osal_pwritev` has no errno for it).
const PROBABLY_FULL_BELOW: u64 = 1 << 20;

/// The one place a libmdbx code becomes an [`Error`]: `code` from the operation `at`, in the
/// environment `env` opened at `path`.
///
/// - `MDBX_MAP_FULL` is [`Error::MapFull`], naming the read transaction that pins old pages if
///   one does (after clearing dead processes' reader slots);
/// - `ENOSPC`/`EDQUOT`, or `EIO` with (almost) no space left, is [`Error::DiskFull`];
/// - `MDBX_BAD_VALSIZE` on an entry is [`Error::TooLarge`] with the page size that would take it;
/// - `MDBX_READERS_FULL` is [`Error::ReadersFull`];
/// - anything else is [`Error::Mdbx`] naming the table and key, or [`Error::Env`] naming the path.
#[cold]
#[inline(never)]
pub(crate) fn fail(code: Code, at: At<'_>, env: &Env, path: &Path) -> Error {
    if code == Code::MAP_FULL {
        return Error::MapFull {
            table: at.table,
            upper: env.info().map_or(0, |i| i.upper),
            pinned_by: oldest_pinning_reader(env),
        };
    }
    if code == Code::READERS_FULL {
        return Error::ReadersFull {
            max_readers: env.info().map_or(0, |i| i.max_readers),
        };
    }
    if let Some(e) = disk_full(code, at, path) {
        return e;
    }
    if code == Code::BAD_VALSIZE
        && let (Some(table), Some(key)) = (at.table, at.key)
    {
        return too_large(env, table, key, at.value_len, at.flags);
    }
    match at.table {
        Some(table) => Error::Mdbx {
            table,
            op: at.op,
            key: at.key.map(|k| KeyHex::shown(k, at.show)),
            code: code.into(),
        },
        None => Error::Env {
            op: at.op,
            path: path.to_path_buf(),
            code: code.into(),
        },
    }
}

/// [`Error::DiskFull`] when `code` says the file system is out of space (`ENOSPC`, `EDQUOT`),
/// or is `EIO` while it has less than [`PROBABLY_FULL_BELOW`] bytes available.
fn disk_full(code: Code, at: At<'_>, path: &Path) -> Option<Error> {
    let certain = code.is_out_of_space();
    if !certain && code != Code::EIO {
        return None;
    }
    let available = engine::available_bytes(path);
    if !certain && available.is_none_or(|a| a >= PROBABLY_FULL_BELOW) {
        return None;
    }
    Some(Error::DiskFull {
        table: at.table,
        op: at.op,
        path: path.to_path_buf(),
        available,
        certain,
        code: code.into(),
    })
}

/// The read transaction with the oldest snapshot among those that keep freed pages from being
/// reused, in any process.
fn oldest_pinning_reader(env: &Env) -> Option<ReaderInfo> {
    let _ = env.reader_check();
    env.readers()
        .ok()?
        .into_iter()
        .filter(|r| r.txn != 0 && r.lag > 0 && r.bytes_retained > 0)
        .max_by_key(|r| r.lag)
}

/// [`Error::TooLarge`] for an entry libmdbx refused as too large, with the page size that
/// would take it, if any: libmdbx's limits for larger pages are asked
/// (`mdbx_limits_keysize_max` / `mdbx_limits_valsize_max`), so the advice is only given when a
/// larger page really raises the limit far enough (it never does for a value of a table
/// without `dupsort`: that limit is the same at every page size).
fn too_large(env: &Env, table: &'static str, key: &[u8], value_len: usize, flags: u32) -> Error {
    let max_key = env.max_key_size(flags);
    let (part, len, max) = if key.len() > max_key {
        (Part::Key, key.len(), max_key)
    } else {
        (Part::Value, value_len, env.max_value_size(flags))
    };
    let page = env.info().map_or(4096, |i| i.page_size as usize);
    let (fits_page_size, max_any_page_size) = larger_page_fit(part, flags, len, page);
    Error::TooLarge {
        table,
        part,
        key: KeyHex::new(key),
        len,
        max,
        fits_page_size,
        max_any_page_size: max_any_page_size.max(max),
    }
}

/// The smallest page size above `page` at which a table with libmdbx `flags` accepts a `part`
/// of `len` bytes (`None`: none does), and the limit at the largest page size.
fn larger_page_fit(part: Part, flags: u32, len: usize, page: usize) -> (Option<usize>, usize) {
    let limit_at = |page: usize| {
        engine::limits_at_page_size(page, flags).map_or(0, |(k, v)| match part {
            Part::Key => k,
            Part::Value => v,
        })
    };
    let fits = std::iter::successors(Some(page.max(256) * 2), |p| Some(p * 2))
        .take_while(|p| *p <= engine::MAX_PAGE_SIZE)
        .find(|p| limit_at(*p) >= len);
    (fits, limit_at(engine::MAX_PAGE_SIZE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_gib_value_fits_no_page_size() {
        // The value limit of a table without `dupsort` is the same at every page size
        // (libmdbx's MDBX_MAXDATASIZE): no page size is advised for a 2 GiB value.
        for flags in [0, engine::table_flags(false, true)] {
            let at_4k = engine::limits_at_page_size(4096, flags).unwrap().1;
            let at_64k = engine::limits_at_page_size(65536, flags).unwrap().1;
            assert_eq!(at_4k, at_64k);
            assert_eq!(
                larger_page_fit(Part::Value, flags, 2 << 30, 4096),
                (None, at_64k)
            );
        }
    }

    #[test]
    fn a_key_over_the_limit_fits_the_next_page_size_that_allows_it() {
        let flags = 0;
        let key_max = |page| engine::limits_at_page_size(page, flags).unwrap().0;
        // One byte over the 4 KiB limit fits at 8 KiB; one byte over the 16 KiB limit at 32.
        assert_eq!(
            larger_page_fit(Part::Key, flags, key_max(4096) + 1, 4096).0,
            Some(8192)
        );
        assert_eq!(
            larger_page_fit(Part::Key, flags, key_max(16384) + 1, 4096).0,
            Some(32768)
        );
        // Over the 64 KiB limit: nothing fits.
        assert_eq!(
            larger_page_fit(Part::Key, flags, key_max(65536) + 1, 4096),
            (None, key_max(65536))
        );
        // Already at 64 KiB pages there is nothing larger to advise.
        assert_eq!(
            larger_page_fit(Part::Key, flags, key_max(65536) + 1, 65536).0,
            None
        );
    }
}
