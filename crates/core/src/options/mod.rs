//! How to open a database: [`Options`] and [`SyncMode`], the builder (this file), checked
//! against libmdbx's limits before anything is opened (`validate.rs`), converted to what the
//! engine takes and what an open database keeps (`config.rs`), with the slow-reader policy
//! (`slow_reader.rs`).

mod config;
mod slow_reader;
mod validate;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use config::RunConfig;
use slow_reader::SlowReaderPolicy;
pub use slow_reader::{SlowReader, SlowReaderAction};

use crate::engine;
#[cfg(doc)]
use crate::error::Error;

/// How commits reach the disk. libmdbx's modes, strongest first.
///
/// A process crash (kill, panic, out of memory) loses nothing in any mode: what a commit
/// wrote is in the OS page cache. What a system crash or power cut may lose differs; in the
/// first three modes the file then still opens, checks clean and holds exactly the state after
/// one commit, whatever order the disk wrote unflushed pages back in (`docs/reliability.md`,
/// section 8, tests this with power cuts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SyncMode {
    /// Every commit is flushed before it returns: nothing committed is lost on a crash or power
    /// failure (`MDBX_SYNC_DURABLE`). The default.
    #[default]
    Durable,
    /// Each commit flushes its data but not its meta page, which the next commit's flush (or
    /// [`Db::sync`](crate::Db::sync), or closing) makes durable (`MDBX_NOMETASYNC`): about one
    /// flush per commit instead of two. A system crash or power cut may undo the last commit
    /// (and the unfinished batches of a bulk load), never an earlier one, and never leaves a
    /// damaged file.
    ///
    /// The pristine libmdbx 0.14.4 does not keep that promise (it may reuse pages of the last
    /// durable snapshot before the newer meta page is on the disk); the libmdbx Tabula builds
    /// does (its `nometasync-gc` patch), by keeping one more snapshot's freed pages from reuse
    /// until the next commit's flush. Tabula also flushes once when the database opens.
    NoMetaSync,
    /// Nothing is flushed at commit; the OS writes later. A flush happens when a commit leaves
    /// [`Options::flush_threshold`] bytes unflushed (256 MiB by default; with
    /// `flush_threshold(0)`, whenever the file is full at its current size), at
    /// [`Db::sync`](crate::Db::sync), at the end of a bulk load (by default) and when the
    /// database closes
    /// (`MDBX_SAFE_NOSYNC`). A system crash or power cut may undo every commit since the last
    /// flush, never an earlier one, and never leaves a damaged file. A file that `open`
    /// creates is flushed before `open` returns.
    ///
    /// As under [`NoMetaSync`](Self::NoMetaSync), Tabula flushes once at open, and the promise
    /// rests on the libmdbx Tabula builds: the pristine libmdbx 0.14.4 writes the checkpoint it
    /// makes when its free-page list runs dry without flushing it, and reuses the previous
    /// flushed commit's pages at once; the `nometasync-gc` patch flushes that checkpoint.
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
    flush_threshold: Option<u64>,
    read_only: bool,
    exclusive: bool,
    write_map: bool,
    no_sub_dir: bool,
    validation: bool,
    extra_tables: u32,
    file_mode: u32,
    long_read_warning: Option<Duration>,
    reuse_read_snapshots: bool,
    max_read_age: Option<Duration>,
    on_slow_reader: Option<SlowReaderPolicy>,
    keep_versions: Option<u64>,
    /// libmdbx's write-transaction settings (`balance_pages` and after).
    tuning: engine::Tuning,
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
            flush_threshold: None,
            read_only: false,
            exclusive: false,
            write_map: false,
            no_sub_dir: false,
            validation: false,
            extra_tables: 8,
            file_mode: 0o644,
            long_read_warning: Some(DEFAULT_LONG_READ_WARNING),
            reuse_read_snapshots: true,
            max_read_age: None,
            on_slow_reader: None,
            keep_versions: None,
            tuning: DEFAULT_TUNING,
        }
    }
}

impl Options {
    /// Defaults: grows on demand up to 1 TiB in 16 MiB steps, libmdbx's page size and reader
    /// count, durable sync, read-write, the path is a directory.
    ///
    /// ```
    /// use tabula::Options;
    ///
    /// let options = Options::new();
    /// assert_eq!(options.max_size_bytes(), 1 << 40);
    /// assert!(!options.is_read_only());
    /// ```
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
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new().max_size(64 << 20))?;
    /// assert_eq!(db.info()?.max_size, 64 << 20);
    /// # drop(db);
    /// let options = Options::new().max_size(4096);
    /// let err = tabula::open::<App>(dir.path(), options).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "max_size", .. }));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn max_size(mut self, bytes: usize) -> Self {
        self.max_size = bytes;
        self
    }

    /// The configured upper size bound in bytes.
    ///
    /// ```
    /// use tabula::Options;
    ///
    /// assert_eq!(Options::new().max_size(1 << 30).max_size_bytes(), 1 << 30);
    /// ```
    pub fn max_size_bytes(&self) -> usize {
        self.max_size
    }

    /// The smallest the file shrinks to, in bytes (default: 64 pages). `0` means as small as
    /// libmdbx allows (three pages); otherwise at least 768 bytes and at most
    /// [`max_size`](Self::max_size).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let options = Options::new().min_size(100);
    /// let err = tabula::open::<App>(dir.path(), options).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "min_size", .. }));
    /// let db = tabula::open::<App>(dir.path(), Options::new().min_size(1 << 20))?;
    /// assert!(db.info()?.file_size >= 1 << 20);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn min_size(mut self, bytes: usize) -> Self {
        self.min_size = Some(bytes);
        self
    }

    /// The size to set the file to when opening, in bytes; at most
    /// [`max_size`](Self::max_size) and, when set, at least [`min_size`](Self::min_size).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let options = Options::new().initial_size(4 << 20).growth_step(1 << 20);
    /// let db = tabula::open::<App>(dir.path(), options)?;
    /// assert_eq!(db.info()?.file_size, 4 << 20);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn initial_size(mut self, bytes: usize) -> Self {
        self.now_size = Some(bytes);
        self
    }

    /// How much the file grows at a time, in bytes (default 16 MiB); when set, at most
    /// [`max_size`](Self::max_size).
    ///
    /// Each growth reserves its space (a full disk is an error at the growth). On ext4 and XFS,
    /// in the sync modes that flush at every commit ([`SyncMode::Durable`],
    /// [`SyncMode::NoMetaSync`]), the commit after a growth also writes zeroes over what its
    /// own pages left of it (at most 16 MiB), so that later commits write into written blocks
    /// and their flushes stay short (docs/design.md, "A full disk"): a commit that grows the
    /// file copies that much into the page cache and flushes it.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let options = Options::new().max_size(1 << 20).growth_step(2 << 20);
    /// let err = tabula::open::<App>(dir.path(), options).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "growth_step", .. }));
    /// let db = tabula::open::<App>(dir.path(), Options::new().growth_step(1 << 20))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn growth_step(mut self, bytes: usize) -> Self {
        self.growth_step = Some(bytes);
        self
    }

    /// Free space at the end of the file above which it shrinks, in bytes; at most
    /// [`max_size`](Self::max_size).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let options = Options::new().max_size(1 << 20).shrink_threshold(2 << 20);
    /// let err = tabula::open::<App>(dir.path(), options).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "shrink_threshold", .. }));
    /// let db = tabula::open::<App>(dir.path(), Options::new().shrink_threshold(4 << 20))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn shrink_threshold(mut self, bytes: usize) -> Self {
        self.shrink_threshold = Some(bytes);
        self
    }

    /// Page size for a new database: a power of two from 256 to 65536 bytes (default: the OS
    /// page size). It bounds the key size and, at 2³¹ pages, the database size
    /// ([`max_size`](Self::max_size)). An existing database keeps the page size it was created
    /// with.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let options = Options::new().page_size(1000);
    /// let err = tabula::open::<App>(dir.path(), options).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "page_size", .. }));
    /// let db = tabula::open::<App>(dir.path(), Options::new().page_size(8192))?;
    /// assert_eq!(db.info()?.page_size, 8192);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn page_size(mut self, bytes: usize) -> Self {
        self.page_size = Some(bytes);
        self
    }

    /// Reader slots (concurrent read transactions across all processes): 1 to 32767.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let options = Options::new().max_readers(0);
    /// let err = tabula::open::<App>(dir.path(), options).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "max_readers", .. }));
    /// let db = tabula::open::<App>(dir.path(), Options::new().max_readers(16))?;
    /// assert!(db.info()?.max_readers >= 16);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn max_readers(mut self, readers: u32) -> Self {
        self.max_readers = Some(readers);
        self
    }

    /// How commits reach the disk (default [`SyncMode::Durable`]).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// use tabula::SyncMode;
    ///
    /// // A crash of the process loses nothing; one of the system may roll back recent commits.
    /// let db = tabula::open::<App>(dir.path(), Options::new().sync(SyncMode::SafeNoSync))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn sync(mut self, mode: SyncMode) -> Self {
        self.sync = mode;
        self
    }

    /// In [`SyncMode::SafeNoSync`] (and [`SyncMode::UtterlyNoSync`]), flush once this many
    /// bytes have been written since the last flush: the commit that crosses it flushes the
    /// file and becomes the point a system crash rolls back to (libmdbx's auto-sync threshold,
    /// `MDBX_opt_sync_bytes`). `0` keeps libmdbx's own rule: flush whenever a commit finds the
    /// file full at its current size, which in practice means a flush before every growth
    /// step. At most [`max_size`](Self::max_size).
    ///
    /// The default is [`DEFAULT_FLUSH_THRESHOLD`] (256 MiB), or a quarter of `max_size` if
    /// that is less, in `SafeNoSync`, and `0` in `UtterlyNoSync`. While no flush is due, pages
    /// freed since the last flush cannot be reused (the last flushed state must survive a
    /// crash), so the file may grow by up to the threshold beyond what the data needs; a flush
    /// makes that space reusable again. Keep a threshold well below `max_size`: one close to it
    /// can fill the map before it is reached ([`Error::MapFull`](crate::Error::MapFull)).
    /// Setting a threshold with [`SyncMode::Durable`] or [`SyncMode::NoMetaSync`] is refused:
    /// every commit flushes there. The threshold lives in the lock file, so every process
    /// using the file shares the last one set.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// use tabula::SyncMode;
    ///
    /// let err = tabula::open::<App>(dir.path(), Options::new().flush_threshold(64 << 20))
    ///     .unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "flush_threshold", .. }));
    ///
    /// // A system crash loses at most the last 64 MiB written.
    /// let options = Options::new().sync(SyncMode::SafeNoSync).flush_threshold(64 << 20);
    /// let db = tabula::open::<App>(dir.path(), options)?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// db.sync()?; // and a flush whenever you want one
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn flush_threshold(mut self, bytes: u64) -> Self {
        self.flush_threshold = Some(bytes);
        self
    }

    /// Open read-only: verify the schema instead of creating tables; `write()` then fails.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// # drop(tabula::open::<App>(dir.path(), Options::new())?); // create it
    /// let db = tabula::open::<App>(dir.path(), Options::new().read_only(true))?;
    /// assert!(matches!(db.write(), Err(tabula::Error::ReadOnly { .. })));
    /// assert_eq!(db.read()?.len::<Names>()?, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only = yes;
        self
    }

    /// Whether this is a read-only open.
    ///
    /// ```
    /// use tabula::Options;
    ///
    /// assert!(Options::new().read_only(true).is_read_only());
    /// assert!(!Options::new().is_read_only());
    /// ```
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Forbid other processes from opening the database while this one has it.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new().exclusive(true))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
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
    /// [`DbInfo::write_map`](crate::DbInfo::write_map) tells which it got.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new().write_map(true))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// // `true` on ext4 and XFS; on other file systems the database opened without it.
    /// let _writable_map: bool = db.info()?.write_map;
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn write_map(mut self, yes: bool) -> Self {
        self.write_map = yes;
        self
    }

    /// Treat the path as the data file itself rather than a directory holding `mdbx.dat`.
    ///
    /// A path named `mdbx.dat` is the data file of the database in its directory: libmdbx opens
    /// it as that directory (lock file `mdbx.lck` beside it), so it shares the database with
    /// whoever opened the directory.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let file = dir.path().join("app.mdbx");
    /// let db = tabula::open::<App>(&file, Options::new().no_sub_dir(true))?;
    /// assert!(file.is_file());
    /// assert_eq!(db.path(), file);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn no_sub_dir(mut self, yes: bool) -> Self {
        self.no_sub_dir = yes;
        self
    }

    /// Check every page as libmdbx loads it (`MDBX_VALIDATION`): for a file that may be damaged
    /// (after a disk or file-system error, a copy of unknown origin) or comes from an untrusted
    /// source. Off by default, because it costs every read that loads a page: each page is
    /// checked whole, every key compared with the next. Measured (`tabula-bench`,
    /// `tabula_validated` against `tabula_typed`): a random get 3.5–6.2× the time (4.8× the
    /// instructions in a 1,024-entry table, 12.5× in a 100,000-entry one), a scan 1.1–1.2× the
    /// time (1.10× the instructions); docs/benchmarks.md, "validation".
    ///
    /// mdbx.h on the flag: "The `MDBX_VALIDATION` enabled the simple safe/careful mode for
    /// working with damaged or untrusted DB. However, a notable performance degradation should
    /// be expected." **What a reader risks without it:** libmdbx checks the header of each page
    /// it loads (its number, type, transaction and free-space bounds), not the nodes in it, so
    /// a damaged node is used as it stands: a data size that points past the page and past the
    /// end of the file is handed out as a value, and reading it (libmdbx's own key comparison,
    /// or the copy of the value) faults. The process dies by `SIGBUS` (a read of the file's
    /// mapping past the file's end), or aborts on a libmdbx assertion in builds with debug
    /// assertions; no error is returned, and nothing can catch it. Seen with 16 random bytes
    /// written into pages of a copy of a database: `tabula check` and `tabula dump` died by
    /// `SIGBUS` before they read with checks on. With it, each page is checked whole when it is
    /// loaded (every node, its key and its data inside the page; a large value inside the
    /// allocated pages), so every byte libmdbx hands out lies in a checked page, and damage is
    /// `MDBX_CORRUPTED`, an [`Error::Mdbx`](crate::Error::Mdbx) naming the table. Neither mode
    /// checks the bytes of a value itself (libmdbx keeps no checksums).
    ///
    /// Checked either way: the startup of a writable open (the schema record, the table
    /// directory, the zstd dictionaries, index builds), which switches the checks off before
    /// `open` returns; [`Db::check`](crate::Db::check) (libmdbx's checker walks every page with
    /// the checks on, and reads the entries of a tree only when its pages passed);
    /// [`Db::check_indexes`](crate::Db::check_indexes), which walks the pages first; and
    /// [`UntypedDb`](crate::untyped::UntypedDb) and the `tabula` command, which always open with
    /// the checks. Not checked without it: every read of the open database, and the startup of a
    /// read-only open ([`read_only`](Self::read_only)), whose environment libmdbx does not let
    /// switch the checks off again (`mdbx_env_set_flags` returns `MDBX_EACCESS`).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new().validation(true))?;
    /// assert!(db.info()?.validation);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// assert!(db.check()?.is_ok());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn validation(mut self, yes: bool) -> Self {
        self.validation = yes;
        self
    }

    /// Table slots beyond the schema's own (for migrations that create tables), default 8.
    /// libmdbx allows 32765 named tables in all, Tabula's meta table included.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let options = Options::new().extra_tables(40_000);
    /// let err = tabula::open::<App>(dir.path(), options).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "extra_tables", .. }));
    /// let db = tabula::open::<App>(dir.path(), Options::new().extra_tables(0))?;
    /// assert_eq!(db.tables().len(), 7); // the schema's, no more
    /// # Ok::<(), tabula::Error>(())
    /// ```
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
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// use std::time::Duration;
    ///
    /// assert_eq!(tabula::DEFAULT_LONG_READ_WARNING, Duration::from_secs(60));
    /// let db = tabula::open::<App>(dir.path(), Options::new().long_read_warning(None))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn long_read_warning(mut self, after: Option<Duration>) -> Self {
        self.long_read_warning = after;
        self
    }

    /// Whether a finished read transaction stays parked on its snapshot for the next
    /// [`Db::read`](crate::Db::read) (default `true`), or is reset.
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
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new().reuse_read_snapshots(false))?;
    /// drop(db.read()?); // reset, not parked
    /// // A later read sees the commit.
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn reuse_read_snapshots(mut self, yes: bool) -> Self {
        self.reuse_read_snapshots = yes;
        self
    }

    /// The longest an owned read transaction ([`Db::read_owned`](crate::Db::read_owned)) may
    /// live; `None` (the default) for no limit. An owned read transaction used after this age
    /// is cut: its snapshot is released and that use, and every later one, fails with
    /// [`Error::ReadTxnTimedOut`](crate::Error::ReadTxnTimedOut) naming its age. A write that
    /// needs the pages such a transaction keeps from reuse, and would otherwise grow the file
    /// (or fail with `MapFull`), does not wait for its next use: it cuts it between two of its
    /// calls instead (unless [`on_slow_reader`](Self::on_slow_reader) decides otherwise). In
    /// [`SyncMode::SafeNoSync`] pages freed since the last flush are not reused either, so
    /// there the file may still grow by up to [`flush_threshold`](Self::flush_threshold).
    ///
    /// Only owned transactions are cut: a [`Db::read`](crate::Db::read) transaction lends out
    /// slices of its snapshot (`get_bytes`, iterators) that may be alive at any moment, so
    /// releasing its snapshot under them is impossible; it stays subject to
    /// [`long_read_warning`](Self::long_read_warning) only. At least 1 ms; the age is measured
    /// with a coarse clock (a few ms of resolution).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let options = Options::new().max_read_age(Some(Duration::from_millis(20)));
    /// let db = Arc::new(tabula::open::<App>(dir.path(), options)?);
    /// let tx = db.read_owned()?;
    /// assert_eq!(tx.get::<Names>(&1)?, None); // young: fine
    /// std::thread::sleep(Duration::from_millis(60));
    /// let err = tx.get::<Names>(&1).unwrap_err();
    /// assert!(matches!(err, tabula::Error::ReadTxnTimedOut { by_writer: false, .. }), "{err}");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn max_read_age(mut self, age: Option<Duration>) -> Self {
        self.max_read_age = age;
        self
    }

    /// What a write does about a read transaction that keeps it from reusing pages, when the
    /// file would otherwise grow (or, at [`max_size`](Self::max_size), the write fail with
    /// [`Error::MapFull`](crate::Error::MapFull)): libmdbx's handle-slow-readers hook
    /// (`mdbx_env_set_hsr`). A write that fits in the file as it is never asks.
    ///
    /// The callback gets the [`SlowReader`] holding the oldest snapshot (any process) and
    /// answers with a [`SlowReaderAction`]: [`Grow`](SlowReaderAction::Grow) the file (the
    /// default without a callback, or with [`max_read_age`](Self::max_read_age) set: cut this
    /// process's owned transactions older than it, else grow),
    /// [`Cut`](SlowReaderAction::Cut) this process's owned read transactions on that snapshot
    /// (those between two calls; their next use fails with
    /// [`Error::ReadTxnTimedOut`](crate::Error::ReadTxnTimedOut)), or
    /// [`Retry`](SlowReaderAction::Retry) after the callback waited for the reader (libmdbx
    /// looks again and calls again with the next [`attempt`](SlowReader::attempt)). `Cut` when
    /// nothing can be cut is `Grow`. A panic in the callback is `Grow`.
    ///
    /// It runs on the writing thread, inside the write, while libmdbx holds the writer lock:
    /// keep it short, and never begin a write transaction in it (it would wait for itself).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
    /// use tabula::SlowReaderAction;
    ///
    /// let asked = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&asked);
    /// let options = Options::new()
    ///     .initial_size(1 << 20)
    ///     .growth_step(1 << 20)
    ///     .on_slow_reader(move |reader| {
    ///         counter.fetch_add(1, Ordering::Relaxed);
    ///         if reader.this_process && reader.cuttable > 0 {
    ///             SlowReaderAction::Cut
    ///         } else {
    ///             SlowReaderAction::Grow
    ///         }
    ///     });
    /// let db = Arc::new(tabula::open::<App>(dir.path(), options)?);
    /// let old = db.read_owned()?; // holds the first snapshot
    /// for round in 0..16u8 {
    ///     let mut tx = db.write()?;
    ///     for key in 0..64u64 {
    ///         tx.put::<Blobs>(&key, &vec![round; 4096])?; // rewrites 256 KiB each round
    ///     }
    ///     tx.commit()?;
    /// }
    /// assert!(asked.load(Ordering::Relaxed) > 0);
    /// let err = old.get::<Blobs>(&0).unwrap_err();
    /// assert!(matches!(err, tabula::Error::ReadTxnTimedOut { by_writer: true, .. }), "{err}");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn on_slow_reader(
        mut self,
        callback: impl Fn(&SlowReader) -> SlowReaderAction + Send + Sync + 'static,
    ) -> Self {
        self.on_slow_reader = Some(SlowReaderPolicy(Arc::new(callback)));
        self
    }

    /// Keep the changes of the last `n` versions in the history of every table declared
    /// `history`, and prune the older ones as versions are written: each commit of a write
    /// transaction (and of each batch of a [`BulkLoad`](crate::BulkLoad) with a version)
    /// prunes every history it changed below that history's last version `+ 1 - n`, as
    /// [`Tx::prune_history`](crate::Tx::prune_history) does, in the same transaction. Unset
    /// (the default), every version is kept.
    ///
    /// The changes of versions `last - n + 1 ..= last` stay: reads as of every version from
    /// `last - n` on are exact, [`changes_at`](crate::Reads::changes_at) answers for the last
    /// `n` versions, and [`Tx::unwind`](crate::Tx::unwind) can go back `n` versions, to
    /// `last - n`. Further back, as after a manual prune, the horizon refuses: an unwind with
    /// [`Error::BelowHorizon`] before anything is written, a read where a pruned change would
    /// have answered it (a read that the kept changes still answer stays exact).
    ///
    /// Each commit does bounded work: at most [`KEEP_VERSIONS_BATCH`] changes of each history
    /// it changed, plus as many as it recorded itself, so the prune keeps pace with versions
    /// of any size. Whatever is left (after the option is turned on for a long history, say)
    /// is pruned by the following commits, a batch each; the horizon is raised at once. A
    /// history that no commit changes keeps its changes until one does (or until
    /// `prune_history`). At least 1; a read-only open ignores it.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::Error;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<Chain>(dir.path(), Options::new().keep_versions(2))?;
    /// for version in 1..=5 {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.put::<Ledger>(&1, &format!("v{version}"))?;
    ///     tx.commit()?; // at version 5: pruned below 4
    /// }
    /// let tx = db.read()?;
    /// assert_eq!(tx.versions::<Ledger>(&1)?, [4, 5]);
    /// assert_eq!(tx.get_as_of::<Ledger>(&1, 3)?.as_deref(), Some("v3"));
    /// let refused = tx.get_as_of::<Ledger>(&1, 2);
    /// assert!(matches!(refused, Err(Error::BelowHorizon { horizon: 4, .. })));
    ///
    /// let err = tabula::open::<Chain>(dir.path(), Options::new().keep_versions(0)).unwrap_err();
    /// assert!(matches!(err, Error::InvalidOption { option: "keep_versions", .. }));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn keep_versions(mut self, n: u64) -> Self {
        self.keep_versions = Some(n);
        self
    }

    // ---------------------------------------------------------------------------------------
    // libmdbx's settings for write transactions (issue 26). In-process settings: they apply to
    // this `Db`'s writes only, not to other processes using the file, and are not stored in it.
    // `docs/benchmarks.md` ("big_txn") has the measurements behind the defaults.

    /// Keep B-tree pages balanced (the default, `true`): a full page is split in the middle,
    /// and a page emptied by deletes is merged into its emptier neighbour. `false` is libmdbx
    /// 0.14's own default, which writes fewer pages per transaction instead: a full page is
    /// split where the new entry goes, and an emptied page merged into a neighbour the
    /// transaction already changed (`MDBX_opt_prefer_waf_insteadof_balance`).
    ///
    /// For keys inserted in random order the difference is large: libmdbx's default leaves
    /// leaves about half full (11.5 of 22 entries of 174 bytes per 4 KiB page, against 14.4
    /// balanced and 15.0 in LMDB), so the tree has 25 % more pages, is often a level deeper,
    /// and every transaction that touches it reads and writes more pages; a million random
    /// inserts in one transaction ran 1.6× faster balanced. Keys inserted in increasing order
    /// fill pages completely either way (a page that receives its last key is not split but
    /// followed by a new one).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// // Random keys: balanced pages hold more entries each.
    /// let leaves = |balance: bool, path: &std::path::Path| -> tabula::Result<u64> {
    ///     let db = tabula::open::<App>(path, Options::new().balance_pages(balance))?;
    ///     let mut tx = db.write()?;
    ///     let mut k = 1u64;
    ///     for _ in 0..20_000 {
    ///         k = k.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ///         tx.put::<Blobs>(&k, &vec![7; 150])?;
    ///     }
    ///     tx.commit()?;
    ///     Ok(db.read()?.stat::<Blobs>()?.leaf_pages)
    /// };
    /// let balanced = leaves(true, &dir.path().join("a"))?;
    /// let fewer_writes = leaves(false, &dir.path().join("b"))?;
    /// assert!(balanced * 10 < fewer_writes * 9, "{balanced} vs {fewer_writes} leaf pages");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn balance_pages(mut self, yes: bool) -> Self {
        self.tuning.balance = Some(yes);
        self
    }

    /// The most pages a write transaction keeps changed in memory before it writes some of
    /// them out early ("spills" them) to make room (`MDBX_opt_txn_dp_limit`). libmdbx's default
    /// is a 42nd of the machine's RAM plus its free RAM, in pages, taken when the database is
    /// opened. A spilled page is written to the file before the commit and read back if the
    /// transaction changes it again, so a lower limit bounds a big transaction's memory at the
    /// cost of more writes. The other way round, an import whose one transaction changes more
    /// pages than libmdbx's default limit can set the limit above them, at 4 KiB of memory a
    /// page: once a transaction spills, libmdbx keeps re-sorting its list of changed pages, and
    /// 5M random deletes in one transaction (≈ 350,000 pages changed) ran 2.6–4× faster with
    /// the limit above them (`docs/benchmarks.md`, "big_txn and small_commits").
    /// From 128 to 2³¹ − 1 pages; other values are refused by `open` with
    /// [`Error::InvalidOption`]. Ignored with [`write_map`](Self::write_map), where changed
    /// pages live in the file's map.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let err = tabula::open::<App>(dir.path(), Options::new().dirty_page_limit(16)).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "dirty_page_limit", .. }));
    ///
    /// // 256 changed pages at most in memory: this 4 MiB transaction spills, and commits.
    /// let db = tabula::open::<App>(dir.path(), Options::new().dirty_page_limit(256))?;
    /// let mut tx = db.write()?;
    /// for k in 0..1024u64 {
    ///     tx.put::<Blobs>(&k, &vec![1; 4000])?;
    /// }
    /// tx.commit()?;
    /// assert_eq!(db.read()?.len::<Blobs>()?, 1024);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn dirty_page_limit(mut self, pages: u64) -> Self {
        self.tuning.dirty_page_limit = Some(pages);
        self
    }

    /// How much a write transaction that reaches its [`dirty_page_limit`](Self::dirty_page_limit)
    /// spills at once: at least `1/min_denominator` of its changed pages and at most all but
    /// `1/max_denominator` of them (`MDBX_opt_spill_min_denominator`,
    /// `MDBX_opt_spill_max_denominator`; `0` lifts that bound). libmdbx's default is 8 and 8:
    /// between an eighth and seven eighths. Any `u8` is valid.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// // Spill half the changed pages at a time, when 256 are in memory.
    /// let options = Options::new().dirty_page_limit(256).spill_bounds(2, 2);
    /// let db = tabula::open::<App>(dir.path(), options)?;
    /// let mut tx = db.write()?;
    /// for k in 0..1024u64 {
    ///     tx.put::<Blobs>(&k, &vec![2; 4000])?;
    /// }
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get_bytes::<Blobs>(&7)?, Some(&[2u8; 4000][..]));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn spill_bounds(mut self, min_denominator: u8, max_denominator: u8) -> Self {
        self.tuning.spill_denominators = Some((min_denominator, max_denominator));
        self
    }

    /// How many page buffers a finished write transaction keeps for the next one instead of
    /// freeing them (`MDBX_opt_dp_reserve_limit`, libmdbx's default 1024 pages: 4 MiB with
    /// 4 KiB pages). A larger reserve saves allocations for a series of big transactions, at
    /// the cost of that memory staying allocated between them. At most 2³¹ − 1.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new().dirty_page_reserve(16_384))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn dirty_page_reserve(mut self, pages: u64) -> Self {
        self.tuning.dirty_page_reserve = Some(pages);
        self
    }

    /// Merge a page emptied by deletes into a neighbour once it is less than `percent` full
    /// (`MDBX_opt_merge_threshold`): from 13 to 50. Tabula's default is 25, LMDB's threshold
    /// (libmdbx's own default is a third). A higher threshold keeps pages fuller after deletes
    /// and costs the deletes more work: a page under the threshold takes its neighbour's
    /// entries one at a time at each further delete. In `docs/benchmarks.md` ("The merge
    /// threshold at a quarter"), after a million random inserts, deleting half of them and
    /// then every other entry left took 12–17 % and 4–25 % less time at 25 than at a third (two
    /// runs), and left a 35 % larger tree (97 MiB against 72; LMDB's 90). Other values are
    /// refused by `open` with [`Error::InvalidOption`].
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let err = tabula::open::<App>(dir.path(), Options::new().merge_threshold(80)).unwrap_err();
    /// assert!(matches!(err, tabula::Error::InvalidOption { option: "merge_threshold", .. }));
    /// // Denser pages after deletes, for more work per delete.
    /// let db = tabula::open::<App>(dir.path(), Options::new().merge_threshold(33))?;
    /// let mut tx = db.write()?;
    /// for k in 0..1000u64 {
    ///     tx.put::<Names>(&k, &k.to_string())?;
    /// }
    /// assert_eq!(tx.delete_range::<Names>(..900)?, 900);
    /// tx.commit()?;
    /// assert_eq!(db.read()?.len::<Names>()?, 100);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn merge_threshold(mut self, percent: u8) -> Self {
        // Kept as given: `validate_tuning` checks the range and converts.
        self.tuning.merge_threshold = Some(u64::from(percent));
        self
    }
}

/// The default of [`Options::flush_threshold`] in [`SyncMode::SafeNoSync`]: 256 MiB (or a
/// quarter of [`Options::max_size`] if that is less).
pub const DEFAULT_FLUSH_THRESHOLD: u64 = 256 << 20;

/// The default of [`Options::growth_step`]: 16 MiB.
const DEFAULT_GROWTH_STEP: usize = 16 << 20;

/// The defaults of [`Options::balance_pages`] and the settings after it: balanced pages and
/// LMDB's merge threshold (where libmdbx's own defaults differ), the rest libmdbx's.
const DEFAULT_TUNING: engine::Tuning = engine::Tuning {
    balance: Some(true),
    dirty_page_limit: None,
    spill_denominators: None,
    dirty_page_reserve: None,
    merge_threshold: Some(DEFAULT_MERGE_THRESHOLD),
};

/// The default of [`Options::merge_threshold`], in percent: LMDB's `FILL_THRESHOLD`.
const DEFAULT_MERGE_THRESHOLD: u64 = 25;

/// The default of [`Options::long_read_warning`].
pub const DEFAULT_LONG_READ_WARNING: Duration = Duration::from_secs(60);

/// The changes a commit prunes from each history it changed under
/// [`Options::keep_versions`], beyond as many as it recorded itself: what bounds the work of
/// one commit when much is left to prune.
pub const KEEP_VERSIONS_BATCH: usize = 1024;
