//! The opened database: `Db<S>`, its options, and the bootstrap the startup step drives.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossbeam_queue::ArrayQueue;

use crate::engine::{self, Code, Dbi, Env, EnvConfig, RawTxn};
use crate::error::{Error, MdbxCode, ReaderPin, Result};
use crate::table::Schema;
use crate::txn::{Ro, Rw, Tx};

/// How commits reach the disk. libmdbx's modes, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncMode {
    /// Every commit is flushed before it returns: nothing committed is lost on a crash or power
    /// failure (`MDBX_SYNC_DURABLE`). The default.
    #[default]
    Durable,
    /// Data is flushed at commit, the meta page is not: a system crash may roll back to the
    /// previous commit, never corrupt (`MDBX_NOMETASYNC`). A process crash loses nothing.
    NoMetaSync,
    /// Nothing is flushed at commit; the OS writes later. A system crash may lose recent commits
    /// but the file stays consistent (`MDBX_SAFE_NOSYNC`). A process crash loses nothing.
    SafeNoSync,
    /// No flushing and no ordering guarantee: a system crash may corrupt the file
    /// (`MDBX_UTTERLY_NOSYNC`). Only for data you can rebuild.
    UtterlyNoSync,
}

/// Settings for [`open`](../tabula/fn.open.html): size limits, readers, sync mode, read-only.
///
/// ```
/// use tabula_core::{Options, SyncMode};
///
/// let opts = Options::new()
///     .max_size(64 << 30)        // the file may grow to 64 GiB
///     .growth_step(256 << 20)    // 256 MiB at a time
///     .max_readers(256)
///     .sync(SyncMode::NoMetaSync);
/// assert_eq!(opts.max_size_bytes(), 64 << 30);
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    min_size: Option<usize>,
    now_size: Option<usize>,
    max_size: usize,
    growth_step: Option<usize>,
    shrink_threshold: Option<usize>,
    page_size: Option<usize>,
    max_readers: Option<u32>,
    sync: SyncMode,
    read_only: bool,
    exclusive: bool,
    write_map: bool,
    no_sub_dir: bool,
    validation: bool,
    extra_tables: u32,
    file_mode: u32,
    long_read_warning: Option<Duration>,
    reuse_read_snapshots: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_size: None,
            now_size: None,
            max_size: 1 << 40,
            growth_step: None,
            shrink_threshold: None,
            page_size: None,
            max_readers: None,
            sync: SyncMode::Durable,
            read_only: false,
            exclusive: false,
            write_map: false,
            no_sub_dir: false,
            validation: false,
            extra_tables: 8,
            file_mode: 0o644,
            long_read_warning: Some(DEFAULT_LONG_READ_WARNING),
            reuse_read_snapshots: true,
        }
    }
}

impl Options {
    /// Defaults: grows on demand up to 1 TiB in 16 MiB steps, libmdbx's page size and reader
    /// count, durable sync, read-write, the path is a directory.
    pub fn new() -> Self {
        Options::default()
    }

    /// The largest the file may grow to, in bytes (default 1 TiB). A write that needs more fails
    /// with [`Error::MapFull`].
    ///
    /// libmdbx reserves address space for the whole bound when it opens the file. Valid: at
    /// least the lower bound ([`min_size`](Self::min_size), or 64 pages when that is not set:
    /// 256 KiB with 4 KiB pages), at most 2³¹ pages (8 TiB with 4 KiB pages; up to 128 TiB, the
    /// most libmdbx maps, when [`page_size`](Self::page_size) is left to libmdbx, which then
    /// picks larger pages). Other values are refused by `open` with
    /// [`Error::InvalidOption`](crate::Error::InvalidOption).
    pub fn max_size(mut self, bytes: usize) -> Self {
        self.max_size = bytes;
        self
    }

    /// The configured upper size bound in bytes.
    pub fn max_size_bytes(&self) -> usize {
        self.max_size
    }

    /// The smallest the file shrinks to, in bytes (default: 64 pages). `0` means as small as
    /// libmdbx allows (three pages); otherwise at least 768 bytes and at most
    /// [`max_size`](Self::max_size).
    pub fn min_size(mut self, bytes: usize) -> Self {
        self.min_size = Some(bytes);
        self
    }

    /// The size to set the file to when opening, in bytes; at most
    /// [`max_size`](Self::max_size) and, when set, at least [`min_size`](Self::min_size).
    pub fn initial_size(mut self, bytes: usize) -> Self {
        self.now_size = Some(bytes);
        self
    }

    /// How much the file grows at a time, in bytes (default 16 MiB); when set, at most
    /// [`max_size`](Self::max_size).
    pub fn growth_step(mut self, bytes: usize) -> Self {
        self.growth_step = Some(bytes);
        self
    }

    /// Free space at the end of the file above which it shrinks, in bytes; at most
    /// [`max_size`](Self::max_size).
    pub fn shrink_threshold(mut self, bytes: usize) -> Self {
        self.shrink_threshold = Some(bytes);
        self
    }

    /// Page size for a new database: a power of two from 256 to 65536 bytes (default: the OS
    /// page size). It bounds the key size and, at 2³¹ pages, the database size
    /// ([`max_size`](Self::max_size)). An existing database keeps the page size it was created
    /// with.
    pub fn page_size(mut self, bytes: usize) -> Self {
        self.page_size = Some(bytes);
        self
    }

    /// Reader slots (concurrent read transactions across all processes): 1 to 32767.
    pub fn max_readers(mut self, readers: u32) -> Self {
        self.max_readers = Some(readers);
        self
    }

    /// How commits reach the disk (default [`SyncMode::Durable`]).
    pub fn sync(mut self, mode: SyncMode) -> Self {
        self.sync = mode;
        self
    }

    /// Open read-only: verify the schema instead of creating tables; `write()` then fails.
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only = yes;
        self
    }

    /// Whether this is a read-only open.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Forbid other processes from opening the database while this one has it.
    pub fn exclusive(mut self, yes: bool) -> Self {
        self.exclusive = yes;
        self
    }

    /// Map the file writable (`MDBX_WRITEMAP`): faster large writes, less protection against
    /// stray pointer writes in the process.
    ///
    /// Only honoured where the file system keeps the disk space libmdbx reserves for the file
    /// (ext4 and XFS on Linux): a write through the map that finds no space kills the process
    /// with SIGBUS, where a `pwrite` returns an error. Elsewhere (tmpfs, btrfs, ZFS, ...) the
    /// database opens without it and a warning (`tracing`, target `tabula`) says why;
    /// [`DbInfo::write_map`] tells which it got.
    pub fn write_map(mut self, yes: bool) -> Self {
        self.write_map = yes;
        self
    }

    /// Treat the path as the data file itself rather than a directory holding `mdbx.dat`.
    pub fn no_sub_dir(mut self, yes: bool) -> Self {
        self.no_sub_dir = yes;
        self
    }

    /// Check every page as libmdbx loads it (`MDBX_VALIDATION`): for a file that may be damaged
    /// (after a disk or file-system error, a copy of unknown origin) or comes from an untrusted
    /// source. Off by default, because it slows every read.
    ///
    /// Without it libmdbx trusts the contents of the pages a meta page leads to: a damaged tree
    /// page can fail a libmdbx assertion (which aborts the process in builds with debug
    /// assertions) instead of returning `MDBX_CORRUPTED`. With it, damage is reported as an
    /// error. Either way, [`Db::check`] walks the whole file and counts what it finds.
    pub fn validation(mut self, yes: bool) -> Self {
        self.validation = yes;
        self
    }

    /// Table slots beyond the schema's own (for migrations that create tables), default 8.
    /// libmdbx allows 32765 named tables in all, Tabula's meta table included.
    pub fn extra_tables(mut self, n: u32) -> Self {
        self.extra_tables = n;
        self
    }

    /// Log a warning (`tracing`, target `tabula`, with the transaction's age and ID) when a read
    /// transaction ends after being open at least this long; `None` turns it off. Default 60 s.
    ///
    /// A long-lived read transaction pins the snapshot it sees: libmdbx cannot reuse pages freed
    /// after it began, so the file grows while it lives. The age is measured with a coarse
    /// clock (millisecond resolution, a few nanoseconds per read transaction).
    pub fn long_read_warning(mut self, after: Option<Duration>) -> Self {
        self.long_read_warning = after;
        self
    }

    /// Whether a finished read transaction stays parked on its snapshot for the next
    /// [`Db::read`] (default `true`), or is reset.
    ///
    /// Parked (`mdbx_txn_park`), the next `read` on the pool's transaction costs an unpark and
    /// a check that no write committed since; when none did, the snapshot and every table it
    /// already looked up are reused as they are, so starting a read does no work that grows with
    /// the number of tables. When a write did commit, the transaction moves to the latest
    /// snapshot first: `read` always sees every commit that finished before it began. A parked
    /// snapshot pins old pages only until a writer needs the space: libmdbx then ousts it
    /// (instead of growing the file), and the next `read` restarts it.
    ///
    /// With the file at its upper bound ([`max_size`](Self::max_size)), libmdbx 0.14.4 can fail
    /// a write with [`Error::MapFull`](crate::Error::MapFull) while a reader is parked, where the
    /// same write succeeds with none parked. After its first `MapFull` a `Db` therefore frees
    /// its parked transactions and resets finished reads from then on. Another process's parked
    /// readers are beyond its reach: processes that share a database kept near its size limit
    /// should turn this off.
    ///
    /// `false` resets finished read transactions instead (`mdbx_txn_reset`): the reader slot
    /// pins nothing between reads, and each `read` renews on the latest snapshot. An
    /// environment without a reader table (opened read-only on read-only media) always resets.
    pub fn reuse_read_snapshots(mut self, yes: bool) -> Self {
        self.reuse_read_snapshots = yes;
        self
    }

    pub(crate) fn env_config(&self, schema_tables: usize) -> EnvConfig {
        EnvConfig {
            // +1 for the meta table.
            max_tables: schema_tables as u64 + 1 + u64::from(self.extra_tables),
            max_readers: self.max_readers.map(u64::from),
            // Sizes above `isize::MAX` are refused by `validate`; `-1` is libmdbx's default.
            geometry: [
                self.min_size,
                self.now_size,
                Some(self.max_size),
                Some(self.growth_step.unwrap_or(DEFAULT_GROWTH_STEP)),
                self.shrink_threshold,
                self.page_size,
            ]
            .map(|v| v.map_or(-1, |v| isize::try_from(v).unwrap_or(isize::MAX))),
            sync: match self.sync {
                SyncMode::Durable => engine::Durability::Durable,
                SyncMode::NoMetaSync => engine::Durability::NoMetaSync,
                SyncMode::SafeNoSync => engine::Durability::SafeNoSync,
                SyncMode::UtterlyNoSync => engine::Durability::UtterlyNoSync,
            },
            read_only: self.read_only,
            exclusive: self.exclusive,
            write_map: self.write_map,
            no_sub_dir: self.no_sub_dir,
            validation: self.validation,
            mode: self.file_mode,
        }
    }

    /// Checks the options against libmdbx's limits, alone and together, before libmdbx is
    /// called: libmdbx refuses a bad value with a bare `EINVAL` (or silently turns a size above
    /// `isize::MAX` into its default), naming neither the option nor the range.
    pub(crate) fn validate(&self, schema_tables: usize) -> Result<()> {
        use engine::limits::{
            DEFAULT_LOWER_PAGES, MAX_PAGE_SIZE, MAX_PAGES, MAX_READERS, MAX_TABLES, META_PAGES,
            MIN_PAGE_SIZE, default_page_size, max_db_size,
        };
        fn bad(option: &'static str, value: String, problem: String) -> Result<()> {
            Err(Error::InvalidOption {
                option,
                value,
                problem,
            })
        }
        let bytes = |n: usize| format!("{n} byte{}", if n == 1 { "" } else { "s" });
        let max = self.max_size;

        if let Some(page) = self.page_size
            && !(page.is_power_of_two() && (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page))
        {
            return bad(
                "page_size",
                bytes(page),
                format!(
                    "is not a valid page size: a power of two from {MIN_PAGE_SIZE} to \
                     {MAX_PAGE_SIZE} bytes"
                ),
            );
        }
        if let Some(readers) = self.max_readers
            && !(1..=MAX_READERS).contains(&readers)
        {
            return bad(
                "max_readers",
                readers.to_string(),
                format!("is out of range: libmdbx allows 1 to {MAX_READERS} reader slots"),
            );
        }
        // The schema's tables and Tabula's meta table come first.
        let fixed = schema_tables as u64 + 1;
        let room = MAX_TABLES.saturating_sub(fixed);
        if u64::from(self.extra_tables) > room {
            return bad(
                "extra_tables",
                self.extra_tables.to_string(),
                format!(
                    "is too many: libmdbx allows {MAX_TABLES} named tables in all, and the \
                     schema's {schema_tables} table{} and Tabula's meta table leave room for at \
                     most {room} more",
                    if schema_tables == 1 { "" } else { "s" }
                ),
            );
        }

        // The upper bound: 2^31 pages, and no more than libmdbx maps. Left to libmdbx, the page
        // size grows with the bound (up to 64 KiB pages).
        let top = max_db_size(self.page_size.unwrap_or(MAX_PAGE_SIZE));
        if max > top {
            return match self.page_size {
                Some(page) if max <= max_db_size(MAX_PAGE_SIZE) => bad(
                    "max_size",
                    bytes(max),
                    format!(
                        "is too large for page_size({page}): a database holds at most 2^31 \
                         pages, so with {page}-byte pages max_size must be at most {top} bytes; \
                         lower max_size or raise page_size"
                    ),
                ),
                _ => bad(
                    "max_size",
                    bytes(max),
                    format!("is too large: libmdbx maps at most {top} bytes"),
                ),
            };
        }
        let min_lower = META_PAGES * MIN_PAGE_SIZE;
        if let Some(min) = self.min_size {
            if min != 0 && min < min_lower {
                return bad(
                    "min_size",
                    bytes(min),
                    format!(
                        "is too small: min_size must be 0 or at least {min_lower} bytes (three \
                         pages of {MIN_PAGE_SIZE} bytes); 0 means as small as libmdbx allows"
                    ),
                );
            }
            if min > max {
                return bad(
                    "min_size",
                    bytes(min),
                    format!("is larger than max_size ({max} bytes)"),
                );
            }
        }
        // The page size libmdbx will use for a new file (an existing one keeps its own).
        let page = self.page_size.unwrap_or_else(|| {
            let mut page = default_page_size();
            while max as u64 > page as u64 * MAX_PAGES && page < MAX_PAGE_SIZE {
                page <<= 1;
            }
            page
        });
        match self.min_size {
            None if max < DEFAULT_LOWER_PAGES * page => {
                let lower = DEFAULT_LOWER_PAGES * page;
                return bad(
                    "max_size",
                    bytes(max),
                    format!(
                        "is too small: without a min_size the lower bound is \
                         {DEFAULT_LOWER_PAGES} pages ({lower} bytes with {page}-byte pages), so \
                         max_size must be at least {lower} bytes; set a smaller \
                         Options::min_size to go lower"
                    ),
                );
            }
            Some(min) if max < min.max(min_lower).max(META_PAGES * page) => {
                let lower = min.max(min_lower).max(META_PAGES * page);
                return bad(
                    "max_size",
                    bytes(max),
                    format!(
                        "is too small: the file holds at least its three meta pages of \
                         {page} bytes and min_size ({min} bytes), so max_size must be at least \
                         {lower} bytes"
                    ),
                );
            }
            _ => {}
        }
        if let Some(now) = self.now_size {
            if now > max {
                return bad(
                    "initial_size",
                    bytes(now),
                    format!("is larger than max_size ({max} bytes)"),
                );
            }
            if let Some(min) = self.min_size
                && now < min
            {
                return bad(
                    "initial_size",
                    bytes(now),
                    format!("is smaller than min_size ({min} bytes)"),
                );
            }
        }
        if let Some(step) = self.growth_step
            && step > max
        {
            return bad(
                "growth_step",
                bytes(step),
                format!("is larger than max_size ({max} bytes)"),
            );
        }
        if let Some(shrink) = self.shrink_threshold
            && shrink > max
        {
            return bad(
                "shrink_threshold",
                bytes(shrink),
                format!("is larger than max_size ({max} bytes)"),
            );
        }
        Ok(())
    }
}

/// The default of [`Options::growth_step`]: 16 MiB.
const DEFAULT_GROWTH_STEP: usize = 16 << 20;

/// The default of [`Options::long_read_warning`].
pub const DEFAULT_LONG_READ_WARNING: Duration = Duration::from_secs(60);

/// What libmdbx's integrity check found; see [`Db::check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckReport {
    /// Problems found: 0 means every meta page, tree page, GC record and key-value pair is
    /// consistent.
    pub problems: u64,
    /// Tables walked, counting libmdbx's main and GC trees.
    pub tables: u64,
    /// Pages visited.
    pub pages: u64,
    /// The transaction ID of the snapshot that was checked.
    pub txn_id: u64,
}

impl CheckReport {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems == 0
    }
}

/// Geometry and counters of an open database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DbInfo {
    /// Current size of the memory map in bytes.
    pub map_size: u64,
    /// Size of the data file in bytes.
    pub file_size: u64,
    /// Upper bound the file may grow to.
    pub max_size: u64,
    /// Page size in bytes.
    pub page_size: u32,
    /// ID of the latest committed transaction.
    pub last_txn: u64,
    /// Reader slots.
    pub max_readers: u32,
    /// Reader slots used so far: libmdbx's high-water mark of its reader table (slots of
    /// ended transactions are reused, not subtracted). Parked, reusable read transactions
    /// hold theirs.
    pub readers: u32,
    /// Whether the data file is mapped writable (`MDBX_WRITEMAP`): what
    /// [`Options::write_map`] asked for, unless the file system cannot reserve the space such
    /// writes need (then it is off, and a warning said why; see `docs/design.md`, "A full
    /// disk").
    pub write_map: bool,
}

pub(crate) struct Shared {
    // Field order is drop order: parked read txns are aborted before the env closes.
    pub(crate) slots: engine::TxnSlots,
    pub(crate) pool: ArrayQueue<RawTxn>,
    /// Unbound cursor objects for reuse by read cursors (closed before the env).
    pub(crate) cursors: engine::CursorCache,
    pub(crate) dbis: Box<[Dbi]>,
    pub(crate) names: Box<[&'static str]>,
    pub(crate) env: Env,
    pub(crate) path: PathBuf,
    pub(crate) read_only: bool,
    pub(crate) upper: u64,
    pub(crate) max_readers: u32,
    /// Read transactions open at least this long (ms) warn when they end; `u64::MAX` = never.
    pub(crate) long_read_ms: u64,
    /// Finished read txns are parked on their snapshot (`true`) rather than reset.
    pub(crate) reuse_snapshots: bool,
    /// Set when a write ran out of space: from then on finished read txns are reset rather
    /// than parked, and the parked ones were freed, so later writes reclaim every page no live
    /// reader needs.
    pub(crate) map_was_full: AtomicBool,
}

/// Below this many available bytes, an I/O error from a write is reported as a (probably)
/// full disk: libmdbx reports a write that the file system cut short as `EIO`, and such a
/// write stops only when the file system has no block left.
const PROBABLY_FULL_BELOW: u64 = 1 << 20;

impl Shared {
    /// The error for a write on `table` that found the map full. Also frees the parked read
    /// transactions and stops parking for the rest of this `Db`'s life: with the file at its
    /// upper bound, libmdbx 0.14.4 ousts a parked snapshot when a write needs space, but that
    /// write can still fail with `MDBX_MAP_FULL` where it would succeed with no reader parked
    /// (`tests/read_snapshots.rs` reproduces it).
    ///
    /// The error names the oldest read transaction that still pins freed pages, if one does
    /// (after clearing the slots of dead processes): then that reader, not the size limit, is
    /// what to fix, and the message says so instead of advising a larger `max_size`.
    #[cold]
    pub(crate) fn map_full(&self, table: &'static str) -> Error {
        if self.reuse_snapshots && !self.map_was_full.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: "tabula",
                table,
                "the map is full: finished read transactions are reset from now on instead of \
                 parked on their snapshot (Options::reuse_read_snapshots)"
            );
            while let Some(txn) = self.slots.take_any() {
                drop(txn); // aborts, freeing its reader slot
            }
            while let Some(txn) = self.pool.pop() {
                drop(txn);
            }
        }
        Error::MapFull {
            table,
            upper: self.upper,
            pinned_by: self.oldest_pinning_reader(),
        }
    }

    /// The read transaction with the oldest snapshot among those that keep freed pages from
    /// being reused, in any process.
    fn oldest_pinning_reader(&self) -> Option<ReaderPin> {
        let _ = self.env.reader_check();
        let me = std::process::id();
        self.env
            .readers()
            .ok()?
            .into_iter()
            .filter(|r| r.txnid != 0 && r.lag > 0 && r.bytes_retained > 0)
            .max_by_key(|r| r.lag)
            .map(|r| ReaderPin {
                pid: r.pid as u32,
                this_process: r.pid as u32 == me,
                thread: r.thread,
                txn_id: r.txnid,
                lag: r.lag,
                retained_bytes: r.bytes_retained as u64,
            })
    }

    /// [`Error::DiskFull`] for `code` from a write (`op`, on `table` if any), when the code
    /// says the file system is out of space (`ENOSPC`, `EDQUOT`), or is `EIO` while it has
    /// less than [`PROBABLY_FULL_BELOW`] bytes available; `None` otherwise.
    #[cold]
    pub(crate) fn disk_full(
        &self,
        table: Option<&'static str>,
        op: &'static str,
        code: Code,
    ) -> Option<Error> {
        let certain = code.is_out_of_space();
        if !certain && code != Code::EIO {
            return None;
        }
        let available = engine::available_bytes(&self.path);
        if !certain && available.is_none_or(|a| a >= PROBABLY_FULL_BELOW) {
            return None;
        }
        Some(Error::DiskFull {
            table,
            op,
            path: self.path.clone(),
            available,
            certain,
            code: code.into(),
        })
    }

    /// The error for a commit (`op`, of writes to `table` when known) that failed with
    /// `code`: [`Error::MapFull`], [`Error::DiskFull`], or [`Error::Env`].
    #[cold]
    pub(crate) fn commit_error(
        &self,
        table: Option<&'static str>,
        op: &'static str,
        code: Code,
    ) -> Error {
        if code == Code::MAP_FULL {
            return self.map_full(table.unwrap_or("(commit)"));
        }
        self.disk_full(table, op, code).unwrap_or(Error::Env {
            op,
            code: code.into(),
        })
    }
}

/// An open database with schema `S`: every table created, verified and its handle opened.
///
/// Obtained only from the startup step (`tabula::open`); there is no other way to open a table.
/// `Db` is `Send + Sync`: share it with `Arc` or `&`. Each [`read`](Db::read) reuses a parked
/// libmdbx read transaction from a lock-free pool; [`write`](Db::write) begins the single write
/// transaction.
pub struct Db<S: Schema> {
    pub(crate) shared: Shared,
    _schema: PhantomData<fn() -> S>,
}

impl<S: Schema> Db<S> {
    /// Begins a read transaction on the latest committed snapshot.
    ///
    /// Reuses a parked transaction when one is free, so short reads do not contend on libmdbx's
    /// reader table; never blocks on a Rust lock. A parked transaction whose snapshot is still
    /// the latest is reused as it is, tables already looked up included; otherwise it moves to
    /// the latest snapshot first (see [`Options::reuse_read_snapshots`]).
    ///
    /// # Errors
    ///
    /// [`Error::ReadersFull`] when every reader slot is taken; [`Error::Env`] otherwise.
    #[inline]
    pub fn read(&self) -> Result<Tx<'_, S, Ro>> {
        // This thread's slot, then the shared pool, then any slot (threads that ended).
        let parked = self
            .shared
            .slots
            .take()
            .or_else(|| self.shared.pool.pop())
            .or_else(|| self.shared.slots.take_any());
        let raw = match parked {
            Some(mut txn) => {
                let made_current = if self.shared.reuse_snapshots {
                    txn.resume()
                } else {
                    txn.renew()
                };
                match made_current {
                    Ok(()) => txn,
                    Err(code) => return Err(self.env_error("begin read transaction", code)),
                }
            }
            None => self
                .shared
                .env
                .begin(true)
                .map_err(|code| self.env_error("begin read transaction", code))?,
        };
        Ok(Tx::new(self, raw))
    }

    /// Begins the write transaction, waiting while another one (in any process) is active.
    ///
    /// The transaction must commit or abort on this thread: `Tx<Rw>` is not `Send`.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the database was opened read-only or libmdbx refuses.
    pub fn write(&self) -> Result<Tx<'_, S, Rw>> {
        if self.shared.read_only {
            return Err(Error::Env {
                op: "begin write transaction (the database was opened read-only)",
                code: MdbxCode(engine::Code::EACCESS.0),
            });
        }
        let raw = self
            .shared
            .env
            .begin(false)
            .map_err(|code| self.env_error("begin write transaction", code))?;
        Ok(Tx::new(self, raw))
    }

    /// The path the database was opened at.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The tables of the schema, in ID order.
    pub fn tables(&self) -> &'static [crate::TableInfo] {
        S::TABLES
    }

    /// Geometry and counters.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx cannot report them.
    pub fn info(&self) -> Result<DbInfo> {
        let i = self
            .shared
            .env
            .info()
            .map_err(|code| self.env_error("read environment info", code))?;
        Ok(DbInfo {
            map_size: i.map_size,
            file_size: i.file_size,
            max_size: i.upper,
            page_size: i.page_size,
            last_txn: i.last_txn,
            max_readers: i.max_readers,
            readers: i.readers,
            write_map: self.shared.env.write_map(),
        })
    }

    /// Runs libmdbx's own integrity check (`mdbx_env_chk`, what the `mdbx_chk` tool does) on
    /// the latest committed snapshot: meta pages, every page of every tree, the free-page
    /// records and the order of every key. It reads the whole file, so it takes time in
    /// proportion to its size; writers are not blocked.
    ///
    /// ```text
    /// let report = db.check()?;
    /// assert!(report.is_ok(), "{report:?}");   // problems == 0
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the check cannot run (e.g. no free reader slot); damage is reported
    /// in [`CheckReport::problems`], not as an error.
    pub fn check(&self) -> Result<CheckReport> {
        let r = self
            .shared
            .env
            .check()
            .map_err(|code| self.env_error("integrity check (mdbx_env_chk)", code))?;
        Ok(CheckReport {
            problems: r.problems,
            tables: r.tables,
            pages: r.pages,
            txn_id: r.txn_id,
        })
    }

    /// Largest encoded key a table with these flags accepts.
    pub fn max_key_size(&self, flags: crate::TableFlags) -> usize {
        self.shared
            .env
            .max_key_size(engine::table_flags(flags.dupsort, flags.integer_key))
    }

    /// Returns a finished read transaction to the pool, parked on its snapshot or reset (see
    /// [`Options::reuse_read_snapshots`]), or frees it when the pool is full or parking fails.
    #[inline]
    pub(crate) fn park(&self, mut txn: RawTxn) {
        let parked =
            if self.shared.reuse_snapshots && !self.shared.map_was_full.load(Ordering::Relaxed) {
                txn.park_latest()
            } else {
                txn.reset()
            };
        if parked.is_ok() {
            // This thread's slot first; then the shared pool; a full pool drops (aborts) the
            // txn, freeing its reader slot.
            if let Err(txn) = self.shared.slots.put(txn) {
                let _ = self.shared.pool.push(txn);
            }
        }
    }

    pub(crate) fn env_error(&self, op: &'static str, code: Code) -> Error {
        if code == Code::READERS_FULL {
            Error::ReadersFull {
                max_readers: self.shared.max_readers,
            }
        } else {
            self.shared.disk_full(None, op, code).unwrap_or(Error::Env {
                op,
                code: code.into(),
            })
        }
    }
}

impl<S: Schema> std::fmt::Debug for Db<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.shared.path)
            .field("tables", &self.shared.names)
            .field("read_only", &self.shared.read_only)
            .finish()
    }
}

/// What a bootstrap found for one table name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExistingTable {
    /// The handle.
    pub dbi: u32,
    /// libmdbx flag bits it was created with (only the bits Tabula compares).
    pub flags: u32,
    /// Number of entries.
    pub entries: u64,
}

/// The one transaction of the startup step. Used by `tabula-migrate`; not public API.
///
/// It opens the environment, runs one write transaction (a read transaction for read-only opens)
/// in which tables are looked up, created and recorded by name, and on
/// [`finish`](Bootstrap::finish) commits and only then publishes the [`Db`] with its handle
/// array filled.
pub struct Bootstrap<S: Schema> {
    txn: Option<RawTxn>,
    long_read_ms: u64,
    reuse_snapshots: bool,
    env: Env,
    path: PathBuf,
    read_only: bool,
    dbis: Vec<Option<Dbi>>,
    meta: Option<Dbi>,
    _schema: PhantomData<fn() -> S>,
}

/// The reserved table holding Tabula's schema record and migration log.
pub const META_TABLE: &str = "__tabula_meta";

impl<S: Schema> Bootstrap<S> {
    /// Opens the environment at `path` and begins the startup transaction.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOption`] for an option libmdbx would refuse; [`Error::BadFile`] when
    /// the path holds something of the wrong kind (a FIFO, device, socket or directory where
    /// the data or lock file belongs) or a data file too short to be a database;
    /// [`Error::Open`] with a hint when the path is not a database, is locked, or is not
    /// writable; [`Error::Io`] when the directory cannot be created.
    pub fn begin(path: &Path, options: &Options) -> Result<Self> {
        options.validate(S::TABLES.len())?;
        let cfg = options.env_config(S::TABLES.len());
        let env = open_env(path, path, &cfg, !options.read_only)?;
        let txn = env.begin(options.read_only).map_err(|code| Error::Env {
            op: "begin the startup transaction",
            code: code.into(),
        })?;
        let mut boot = Bootstrap {
            txn: Some(txn),
            long_read_ms: options
                .long_read_warning
                .map_or(u64::MAX, |d| d.as_millis().min(u128::from(u64::MAX)) as u64),
            reuse_snapshots: options.reuse_read_snapshots,
            env,
            path: path.to_path_buf(),
            read_only: options.read_only,
            dbis: vec![None; S::TABLES.len()],
            meta: None,
            _schema: PhantomData,
        };
        boot.meta = boot
            .txn()
            .open_table(Some(META_TABLE), 0, false)
            .map_err(|c| table_error(META_TABLE, "open", c))?;
        Ok(boot)
    }

    fn txn(&mut self) -> &mut RawTxn {
        self.txn
            .as_mut()
            .expect("bootstrap transaction is live until finish")
    }

    /// Whether this is a read-only open.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The database path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Looks up a table by name without creating it.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn find_table(&mut self, name: &'static str) -> Result<Option<ExistingTable>> {
        self.find_table_as(name, None)
    }

    /// [`find_table`](Self::find_table) for a table the schema declares with `declared` flags:
    /// a byte-keyed table gets Tabula's branchy key comparator (`engine::byte_key_cmp`, the same
    /// order as libmdbx's default). When the stored flags differ from the declared ones the
    /// table is opened with libmdbx's own comparator instead (libmdbx refuses a comparator with
    /// other flags), and the returned flags show the difference for the caller to report.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn find_schema_table(
        &mut self,
        name: &'static str,
        declared: crate::TableFlags,
    ) -> Result<Option<ExistingTable>> {
        self.find_table_as(name, Some(declared))
    }

    fn find_table_as(
        &mut self,
        name: &'static str,
        declared: Option<crate::TableFlags>,
    ) -> Result<Option<ExistingTable>> {
        let branchy = declared.is_some_and(|f| !f.integer_key);
        let bits = declared.map_or(0, |f| engine::table_flags(f.dupsort, f.integer_key));
        let Some(dbi) = self
            .txn()
            .open_table_with(Some(name), bits, false, branchy)
            .map_err(|c| table_error(name, "open", c))?
        else {
            return Ok(None);
        };
        let txn = self.txn.as_ref().expect("live");
        let flags = txn
            .table_flags(dbi)
            .map_err(|c| table_error(name, "read flags", c))?
            & engine::TABLE_FLAG_MASK;
        let entries = txn
            .stat(dbi)
            .map_err(|c| table_error(name, "stat", c))?
            .entries;
        Ok(Some(ExistingTable {
            dbi,
            flags,
            entries,
        }))
    }

    /// Creates a table with the given flags (it must not exist).
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails (e.g. `MDBX_DBS_FULL`).
    pub fn create_table(&mut self, name: &'static str, flags: crate::TableFlags) -> Result<u32> {
        let bits = engine::table_flags(flags.dupsort, flags.integer_key);
        // Byte-keyed tables get the branchy comparator (see `find_schema_table`).
        let dbi = self
            .txn()
            .open_table_with(Some(name), bits, true, !flags.integer_key)
            .map_err(|c| table_error(name, "create", c))?;
        Ok(dbi.expect("MDBX_CREATE returns a handle"))
    }

    /// libmdbx flag bits for declared flags, as [`ExistingTable::flags`] reports them.
    pub fn flag_bits(flags: crate::TableFlags) -> u32 {
        engine::table_flags(flags.dupsort, flags.integer_key)
    }

    /// Deletes a table and its contents from the file. Allowed here because no handle has
    /// been published yet. Returns whether it existed.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn drop_table(&mut self, name: &'static str) -> Result<bool> {
        let Some(t) = self.find_table(name)? else {
            return Ok(false);
        };
        self.txn()
            .drop_table(t.dbi, true)
            .map_err(|c| table_error(name, "drop", c))?;
        Ok(true)
    }

    /// Renames table `from` to `to`.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when `from` is missing, `to` exists, or libmdbx fails.
    pub fn rename_table(&mut self, from: &'static str, to: &'static str) -> Result<()> {
        let t = self.find_table(from)?.ok_or(Error::Mdbx {
            table: from,
            op: "rename (the table does not exist)",
            key: None,
            code: MdbxCode(Code::NOTFOUND.0),
        })?;
        self.txn()
            .rename_table(t.dbi, to)
            .map_err(|c| table_error(from, "rename", c))
    }

    /// Empties a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn clear_table(&mut self, table: &'static str, dbi: u32) -> Result<()> {
        self.txn()
            .drop_table(dbi, false)
            .map_err(|c| table_error(table, "clear", c))
    }

    /// Reads up to `limit` entries (more when needed to finish the duplicates of the last key)
    /// with keys after `after` (from the first when `None`), copied out.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    #[allow(clippy::type_complexity)]
    pub fn read_batch(
        &mut self,
        table: &'static str,
        dbi: u32,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let txn = self.txn.as_ref().expect("live");
        let err = |c| table_error(table, "read", c);
        let mut cur = txn.cursor(dbi).map_err(err)?;
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut entry = match after {
            None => cur.get(engine::op::FIRST, None, None).map_err(err)?,
            Some(k) => match cur.get(engine::op::SET_RANGE, Some(k), None).map_err(err)? {
                Some((found, _)) if found == k => {
                    cur.get(engine::op::NEXT_NODUP, None, None).map_err(err)?
                }
                other => other,
            },
        };
        while let Some((k, v)) = entry {
            if out.len() >= limit && out.last().is_some_and(|(last, _)| last.as_slice() != k) {
                break;
            }
            out.push((k.to_vec(), v.to_vec()));
            entry = cur.get(engine::op::NEXT, None, None).map_err(err)?;
        }
        Ok(out)
    }

    /// Writes raw bytes into a table (`append` for keys known to come in order).
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] / [`Error::KeyExists`] / [`Error::AppendOutOfOrder`].
    pub fn put_raw(
        &mut self,
        table: &'static str,
        dbi: u32,
        key: &[u8],
        value: &[u8],
        append: bool,
    ) -> Result<()> {
        let flags = if append {
            engine::put::APPEND
        } else {
            engine::put::UPSERT
        };
        self.txn().put(dbi, key, value, flags).map_err(|c| match c {
            c if c == Code::EKEYMISMATCH => Error::AppendOutOfOrder {
                table,
                key: crate::KeyHex::new(key),
                last: None,
            },
            c => Error::Mdbx {
                table,
                op: "put",
                key: Some(crate::KeyHex::new(key)),
                code: c.into(),
            },
        })
    }

    /// Reads raw bytes from a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn get_raw(
        &mut self,
        table: &'static str,
        dbi: u32,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        let txn = self.txn.as_ref().expect("live");
        txn.get(dbi, key)
            .map(|v| v.map(<[u8]>::to_vec))
            .map_err(|c| table_error(table, "get", c))
    }

    /// Deletes a key (all its values) from a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn delete_raw(&mut self, table: &'static str, dbi: u32, key: &[u8]) -> Result<bool> {
        self.txn()
            .del(dbi, key, None)
            .map_err(|c| table_error(table, "delete", c))
    }

    /// Deletes a meta record.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn meta_delete(&mut self, key: &str) -> Result<()> {
        if let Some(meta) = self.meta {
            self.txn()
                .del(meta, key.as_bytes(), None)
                .map_err(|c| table_error(META_TABLE, "delete", c))?;
        }
        Ok(())
    }

    /// Commits what the startup step did so far and begins a new write transaction: bounds the
    /// size of long migrations. Handles opened so far stay valid.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the commit or the new begin fails.
    pub fn checkpoint(&mut self) -> Result<()> {
        let txn = self.txn.take().expect("live");
        txn.commit().map_err(|code| Error::Env {
            op: "commit a migration batch",
            code: code.into(),
        })?;
        let txn = self.env.begin(self.read_only).map_err(|code| Error::Env {
            op: "begin the next migration batch",
            code: code.into(),
        })?;
        self.txn = Some(txn);
        // The meta table may have been created by the committed transaction.
        if self.meta.is_none() {
            self.meta = self
                .txn()
                .open_table(Some(META_TABLE), 0, false)
                .map_err(|c| table_error(META_TABLE, "open", c))?;
        }
        Ok(())
    }

    /// Records the handle of the table with schema ID `id`.
    pub fn set_handle(&mut self, id: usize, dbi: u32) {
        self.dbis[id] = Some(dbi);
    }

    /// Reads a record from the meta table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn meta_get(&mut self, key: &str) -> Result<Option<Vec<u8>>> {
        let Some(meta) = self.meta else {
            return Ok(None);
        };
        let txn = self.txn.as_ref().expect("live");
        txn.get(meta, key.as_bytes())
            .map(|v| v.map(<[u8]>::to_vec))
            .map_err(|c| table_error(META_TABLE, "get", c))
    }

    /// Writes a record to the meta table, creating the table if needed.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails (or the open is read-only).
    pub fn meta_put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        let meta = match self.meta {
            Some(m) => m,
            None => {
                let m = self
                    .txn()
                    .open_table(Some(META_TABLE), 0, true)
                    .map_err(|c| table_error(META_TABLE, "create", c))?
                    .expect("MDBX_CREATE returns a handle");
                self.meta = Some(m);
                m
            }
        };
        self.txn()
            .put(meta, key.as_bytes(), value, engine::put::UPSERT)
            .map_err(|c| table_error(META_TABLE, "put", c))
    }

    /// Commits the startup transaction and publishes the database.
    ///
    /// # Panics
    ///
    /// If a schema table has no handle (a bug in the startup step).
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the commit fails; nothing is published then.
    pub fn finish(mut self) -> Result<Db<S>> {
        let dbis: Box<[Dbi]> = self
            .dbis
            .iter()
            .enumerate()
            .map(|(i, d)| d.unwrap_or_else(|| panic!("no handle for table {}", S::TABLES[i].name)))
            .collect();
        let txn = self.txn.take().expect("live");
        // Committing a read-only txn keeps the handles it opened, like a write commit does.
        txn.commit().map_err(|code| Error::Env {
            op: "commit the startup transaction",
            code: code.into(),
        })?;
        let info = self.env.info().map_err(|code| Error::Env {
            op: "read environment info",
            code: code.into(),
        })?;
        // Parked read txns each hold a reader slot: keep the pool well below the slot count so
        // other processes and fresh begins still find one.
        let parked = (info.max_readers as usize / 2).clamp(2, 256);
        let slots = engine::TxnSlots::new((parked / 2).min(64));
        let cursors = engine::CursorCache::new(slots.len());
        let pool = parked - slots.len();
        Ok(Db {
            shared: Shared {
                slots,
                cursors,
                pool: ArrayQueue::new(pool),
                dbis,
                names: S::TABLES.iter().map(|t| t.name).collect(),
                env: self.env,
                path: self.path,
                read_only: self.read_only,
                upper: info.upper,
                max_readers: info.max_readers,
                long_read_ms: self.long_read_ms,
                // libmdbx parks through the txn's reader slot; without a reader table (a
                // read-only open on read-only media: libmdbx reports `u32::MAX` readers) a
                // txn has none, so reset instead.
                reuse_snapshots: self.reuse_snapshots && info.max_readers != u32::MAX,
                map_was_full: AtomicBool::new(false),
            },
            _schema: PhantomData,
        })
    }
}

fn table_error(table: &'static str, op: &'static str, code: Code) -> Error {
    Error::Mdbx {
        table,
        op,
        key: None,
        code: code.into(),
    }
}

/// The smallest data file that can hold a database: three meta pages of the smallest page size.
/// A shorter one that is not empty is truncated or not a database.
const MIN_DATA_FILE: u64 = (engine::limits::META_PAGES * engine::limits::MIN_PAGE_SIZE) as u64;

/// Data files at least this long are never short for libmdbx's meta-page reads: it reads
/// 256 bytes at up to twice the page size (at most 64 KiB), so a read-write open cannot take
/// one of them for a new database.
const PROBE_BELOW: u64 = (engine::limits::META_PAGES * engine::limits::MAX_PAGE_SIZE) as u64;

/// What a path holds, as the open that follows sees it (symbolic links followed).
fn kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// `metadata` of `path`, `None` when nothing is there. Other failures (permissions) are left
/// for libmdbx to report with its own code.
fn metadata(path: &Path) -> Option<std::fs::Metadata> {
    std::fs::metadata(path).ok()
}

fn bad_file(path: &Path, found: String, advice: &'static str) -> Error {
    Error::BadFile {
        path: path.to_path_buf(),
        found,
        advice,
    }
}

fn too_short(data: &Path, len: u64) -> Error {
    bad_file(
        data,
        format!(
            "the data file is {len} bytes, too short to hold the three meta pages an MDBX \
             database starts with"
        ),
        "it is truncated or not a database, and was left untouched: restore it from a backup \
         (or move it away to start a new, empty database)",
    )
}

/// The data file and lock file of the database at `path`, as libmdbx names them: `mdbx.dat` and
/// `mdbx.lck` in the directory `path`, or with `no_sub_dir` the file `path` and `path-lck`.
fn database_files(path: &Path, no_sub_dir: bool) -> (PathBuf, PathBuf) {
    if no_sub_dir {
        let mut lock = path.as_os_str().to_os_string();
        lock.push("-lck");
        (path.to_path_buf(), PathBuf::from(lock))
    } else {
        (path.join("mdbx.dat"), path.join("mdbx.lck"))
    }
}

/// Checks what is at the database's paths before libmdbx opens anything: the directory (when
/// the path is one), the data file and the lock file must each be missing or of the right kind
/// (opening a FIFO would block forever; a device or socket is no database), and a data file
/// that is not empty must be long enough for its meta pages. Returns the data file's length,
/// `None` when it does not exist.
fn check_files(path: &Path, no_sub_dir: bool, read_only: bool) -> Result<Option<u64>> {
    if !no_sub_dir
        && let Some(meta) = metadata(path)
        && !meta.is_dir()
    {
        return Err(bad_file(
            path,
            format!("it is {}, not a directory", kind(&meta.file_type())),
            "without `Options::no_sub_dir` the path is a directory holding the data file \
             `mdbx.dat`; to open a data file itself, set `Options::no_sub_dir(true)`",
        ));
    }
    let (data, lock) = database_files(path, no_sub_dir);
    let len = match metadata(&data) {
        None => None,
        Some(meta) if meta.is_file() => Some(meta.len()),
        Some(meta) => {
            let advice = if !no_sub_dir {
                "a database directory holds its data file `mdbx.dat` as a regular file: check \
                 the path, or move this one away"
            } else if meta.is_dir() {
                "with `Options::no_sub_dir(true)` the path is the data file itself; to open a \
                 database directory, leave `no_sub_dir` off"
            } else {
                "with `Options::no_sub_dir(true)` the path is the data file itself, a regular \
                 file: check the path"
            };
            return Err(bad_file(
                &data,
                format!("it is {}, not a regular file", kind(&meta.file_type())),
                advice,
            ));
        }
    };
    if let Some(meta) = metadata(&lock)
        && !meta.is_file()
    {
        return Err(bad_file(
            &lock,
            format!("it is {}, not a regular file", kind(&meta.file_type())),
            "this is where libmdbx keeps the database's lock file (its reader table): move it \
             away (libmdbx creates a missing lock file) or check the path",
        ));
    }
    match len {
        Some(0) if read_only => Err(bad_file(
            &data,
            "the data file is empty (0 bytes)".to_string(),
            "no database was ever written to it, and a read-only open does not create one: \
             open it read-write once, or check the path",
        )),
        Some(len) if len > 0 && len < MIN_DATA_FILE => Err(too_short(&data, len)),
        _ => Ok(len),
    }
}

/// Opens the environment at `path` after [`check_files`]; `shown` is the path errors name.
/// With `create_dir` (a read-write open of a database directory) the directory is created
/// first. Only a missing or empty data file becomes a new database: libmdbx initialises any
/// data file it cannot read three meta pages from, so before a read-write open of a short file
/// libmdbx first opens it read-only ([`Env::probe_read_only`]), which reports the short read
/// (`ENODATA`) instead, and the file is refused untouched.
pub(crate) fn open_env(
    path: &Path,
    shown: &Path,
    cfg: &EnvConfig,
    create_dir: bool,
) -> Result<Env> {
    let len = check_files(path, cfg.no_sub_dir, cfg.read_only)?;
    if create_dir && !cfg.no_sub_dir {
        std::fs::create_dir_all(path).map_err(|source| Error::Io {
            context: format!("creating the database directory `{}`", path.display()),
            source,
        })?;
    }
    let data = database_files(path, cfg.no_sub_dir).0;
    if !cfg.read_only
        && let Some(len) = len.filter(|&len| len > 0 && len < PROBE_BELOW)
        && Env::probe_read_only(path, cfg) == Err(Code::ENODATA)
    {
        return Err(too_short(&data, len));
    }
    Env::open(path, cfg).map_err(|code| match len {
        Some(len) if len > 0 && code == Code::ENODATA => too_short(&data, len),
        _ => Error::Open {
            path: shown.to_path_buf(),
            code: code.into(),
            hint: open_hint(code, cfg.read_only),
        },
    })
}

pub(crate) fn open_hint(code: Code, read_only: bool) -> &'static str {
    match code {
        c if c == Code::INVALID => {
            "the file is not an MDBX database (or its header is damaged); check the path"
        }
        c if c == Code::CORRUPTED || c == Code::PROBLEM || c == Code::PAGE_NOTFOUND => {
            "the database file is damaged or truncated; restore it from a backup"
        }
        c if c == Code::VERSION_MISMATCH || c == Code::INCOMPATIBLE => {
            "the file was written by an incompatible libmdbx version or with other options"
        }
        c if c == Code::ENOFILE && read_only => {
            "no database at this path; a read-only open does not create one"
        }
        c if c == Code::ENOFILE => "the path does not exist",
        c if c == Code::EAGAIN || c == Code::BUSY => {
            "the database is already open (in this process, or exclusively in another): libmdbx \
             allows one open per process, so share the `Db` (it is `Send + Sync`, wrap it in \
             `Arc`) instead of opening it again"
        }
        c if c == Code::EACCESS => "permission denied; check the file's owner and mode",
        c if c == Code::ENOMEM => {
            "libmdbx reserves address space for the whole `Options::max_size` when it opens the \
             file: lower it"
        }
        c if c == Code::TOO_LARGE => {
            "the size bounds are beyond what the database's page size allows (2^31 pages): \
             lower `Options::max_size`"
        }
        c if c.is_out_of_space() => {
            "the file system holding the database is full; free space on it and open again \
             (every earlier commit is intact)"
        }
        _ => "",
    }
}

/// libmdbx's version, e.g. `0.14.4`.
pub fn libmdbx_version() -> String {
    engine::version()
}
