//! The database's methods, in one place: read and write transactions, geometry, the integrity
//! check, the copy (this file), its owned read transactions (`owned`), its bulk load (`bulk`)
//! and watching (`watch`: the commit feed, key watches, followers).
//!
//! The [`Db`] struct and what its transactions share (`Shared`: the environment, the handle
//! array, the pools, beginning and parking read transactions) are in `state.rs`, below the
//! transactions (a `Tx` holds a `&Db` and hands its transaction back to `Shared` when it ends);
//! this folder sits above them, since it makes them.

pub(crate) mod bulk;
pub(crate) mod owned;
pub(crate) mod watch;

use std::marker::PhantomData;
use std::path::Path;

use crate::engine::{self, Code, RawTxn, ReaderInfo};
use crate::error::{At, Error, MdbxCode, Result};
use crate::mode::{Ro, Rw};
use crate::state::{Db, Shared};
use crate::table::Schema;
use crate::telemetry;
use crate::txn::Tx;

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
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// assert!(db.check()?.is_ok());
    /// # Ok::<(), tabula::Error>(())
    /// ```
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
    /// [`Options::write_map`](crate::Options::write_map) asked for, unless the file system cannot reserve the space such
    /// writes need (then it is off, and a warning said why: on a full tmpfs or copy-on-write
    /// file system, a write through the map kills the process with `SIGBUS`).
    pub write_map: bool,
    /// Whether libmdbx checks every page it loads (`MDBX_VALIDATION`): what
    /// [`Options::validation`](crate::Options::validation) asked for. (The startup of a
    /// writable open checks the pages it reads either way, and switches the checks off before
    /// [`tabula::open`](../tabula/fn.open.html) returns when they were not asked for.)
    pub validation: bool,
    /// Bytes committed but not yet flushed to disk: always 0 with
    /// [`SyncMode::Durable`](crate::SyncMode::Durable); in the other modes what a system crash
    /// could lose until [`Db::sync`] (or libmdbx's own flush) runs.
    pub unsynced_bytes: u64,
}

/// Space use of a database; see [`Db::stat`]. Byte counts are page counts times the page size.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DbStat {
    /// Page size in bytes.
    pub page_size: u32,
    /// Each table of the schema, in ID order.
    pub tables: Vec<TableUsage>,
    /// The data file's size.
    pub file_bytes: u64,
    /// The upper bound the file may grow to ([`Options::max_size`](crate::Options::max_size)).
    pub max_bytes: u64,
    /// Bytes up to the highest page in use; the file beyond is unused.
    pub used_bytes: u64,
    /// Free pages (libmdbx's GC, the free list) a write may reuse now.
    pub free_bytes: u64,
    /// Free pages a write may not reuse yet, because a reader's snapshot still sees them (and
    /// the GC's own pages).
    pub retained_bytes: u64,
}

/// Entries and pages of one table; see [`DbStat::tables`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableUsage {
    /// The table's name.
    pub name: &'static str,
    /// Entries (key-value pairs).
    pub entries: u64,
    /// Height of the B-tree.
    pub depth: u32,
    /// Branch pages.
    pub branch_pages: u64,
    /// Leaf pages.
    pub leaf_pages: u64,
    /// Overflow (large value) pages.
    pub overflow_pages: u64,
    /// Bytes of all its pages.
    pub bytes: u64,
}

impl<S: Schema> Db<S> {
    /// Publishes a database whose handles are all open (the startup path's last step).
    pub(crate) fn publish(shared: Shared) -> Self {
        Db {
            telemetry: telemetry::Labels::new(shared.path()),
            shared,
            _schema: PhantomData,
        }
    }

    /// Begins a read transaction on the latest committed snapshot.
    ///
    /// Reuses a parked transaction when one is free, so short reads do not contend on libmdbx's
    /// reader table; never blocks on a Rust lock. A parked transaction whose snapshot is still
    /// the latest is reused as it is, tables already looked up included; otherwise it moves to
    /// the latest snapshot first (see [`Options::reuse_read_snapshots`](crate::Options::reuse_read_snapshots)).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    ///
    /// let tx = db.read()?;
    /// assert_eq!(tx.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ReadersFull`] when every reader slot is taken; [`Error::Env`] otherwise.
    #[inline]
    pub fn read(&self) -> Result<Tx<'_, S, Ro>> {
        self.shared.begin_read_then(|raw| Tx::new(self, raw))
    }

    /// Begins the write transaction, waiting while another one (in any process) is active.
    ///
    /// The transaction must commit or abort on this thread: `Tx<Rw>` is not `Send`.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?, None); // readers see it only after the commit
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the database was opened read-only or libmdbx refuses.
    pub fn write(&self) -> Result<Tx<'_, S, Rw>> {
        self.begin_write(false)
    }

    /// Begins a write transaction whose commit does not flush: in a database opened with
    /// [`SyncMode::Durable`](crate::SyncMode::Durable) (the default), this one transaction
    /// commits as [`SyncMode::SafeNoSync`](crate::SyncMode::SafeNoSync) would (libmdbx's
    /// per-transaction `MDBX_TXN_NOSYNC`, what [`bulk_load`](Db::bulk_load) uses between its
    /// batches). Everything else is [`write`](Db::write)'s.
    ///
    /// The guarantee: a process crash loses nothing (the commit is in the OS page cache). A
    /// system crash or power loss may undo this commit and every other commit since the last
    /// flush, never one before it, and never damages the file: libmdbx does not write over the
    /// pages of the last flushed commit until a newer one is flushed. The next flush makes it
    /// durable with everything before it: an ordinary commit ([`write`](Db::write)),
    /// [`Db::sync`], or libmdbx itself when an unflushed commit finds the file full.
    ///
    /// In the other sync modes this is the same as [`write`](Db::write): `SafeNoSync` and
    /// `UtterlyNoSync` do not flush at commit anyway, and under `NoMetaSync` the meta page of
    /// the last commit may not be on the disk yet, which unflushed commits could replace; so
    /// there the transaction commits as the mode says.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new())?; // durable
    /// for k in 0..100u64 {
    ///     let mut tx = db.write_nosync()?; // an import: one small commit per item, no flush
    ///     tx.put::<Names>(&k, &k.to_string())?;
    ///     tx.commit()?;
    /// }
    /// assert!(db.info()?.unsynced_bytes > 0); // committed, not yet flushed
    /// db.sync()?; // one flush makes the whole import durable
    /// assert_eq!(db.info()?.unsynced_bytes, 0);
    /// assert_eq!(db.read()?.len::<Names>()?, 100);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write`](Db::write).
    pub fn write_nosync(&self) -> Result<Tx<'_, S, Rw>> {
        self.begin_write(true)
    }

    /// [`write`](Db::write) and [`write_nosync`](Db::write_nosync).
    fn begin_write(&self, nosync: bool) -> Result<Tx<'_, S, Rw>> {
        if self.shared.run().read_only {
            return Err(Error::ReadOnly {
                op: "begin a write transaction",
                path: self.shared.path().to_path_buf(),
            });
        }
        let env = self.shared.env();
        let raw = if nosync {
            env.begin_write_nosync()
        } else {
            env.begin(false)
        };
        let raw = raw.map_err(|code| self.shared.fail(code, At::env("begin write transaction")))?;
        crate::pipeline::begin(&self.shared); // under the writer lock
        Ok(Tx::new(self, raw))
    }

    /// The path the database was opened at.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// assert_eq!(db.path(), dir.path());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        self.shared.path()
    }

    /// The tables of the schema, in ID order.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// // The examples' schema: `App(Names, Topics, Numbers, Sets, Blobs, Balances, Storage)`.
    /// let tables = db.tables();
    /// assert_eq!(tables.len(), 7);
    /// assert_eq!(tables[0].name, "Names");
    /// assert_eq!(tables[0].value_type, "String");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn tables(&self) -> &'static [crate::table::TableInfo] {
        S::TABLES
    }

    /// Geometry and counters.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let before = db.info()?;
    /// assert!(before.page_size.is_power_of_two());
    /// assert!(!before.validation); // `Options::validation` is off by default
    /// assert!(before.file_size <= before.max_size);
    ///
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.info()?.last_txn, before.last_txn + 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx cannot report them.
    pub fn info(&self) -> Result<DbInfo> {
        let i = self
            .shared
            .env()
            .info()
            .map_err(|code| self.shared.fail(code, At::env("read environment info")))?;
        Ok(DbInfo {
            map_size: i.map_size,
            file_size: i.file_size,
            max_size: i.upper,
            page_size: i.page_size,
            last_txn: i.last_txn,
            max_readers: i.max_readers,
            readers: i.readers,
            write_map: self.shared.env().write_map(),
            validation: self.shared.env().validates(),
            unsynced_bytes: i.unsynced,
        })
    }

    /// Runs libmdbx's own integrity check (`mdbx_env_chk`, what the `mdbx_chk` tool does) on
    /// the latest committed snapshot: meta pages, every page of every tree, the free-page
    /// records and the order of every key. It reads the whole file, so it takes time in
    /// proportion to its size; writers are not blocked.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let report = db.check()?;
    /// assert!(report.is_ok(), "{report:?}"); // problems == 0
    /// assert!(report.pages > 0);
    /// assert_eq!(report.txn_id, db.info()?.last_txn); // the latest snapshot was checked
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the check cannot run (e.g. no free reader slot); damage is reported
    /// in [`CheckReport::problems`], not as an error.
    pub fn check(&self) -> Result<CheckReport> {
        check(self.shared.env(), |code, at| self.shared.fail(code, at))
    }

    /// Checks that every index of the schema agrees with its table, in one read snapshot:
    /// every row's entries are in the index, and every index entry names a row that computes
    /// it. Keeps the first `limit` problems
    /// ([`IndexCheck::problems`](crate::IndexCheck::problems)) and counts them all.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_indexer()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Transfers>(&1, &transfer(7, 8, Some(3)))?;
    /// tx.commit()?;
    /// let check = db.check_indexes(10)?;
    /// assert!(check.is_ok(), "{:?}", check.problems);
    /// assert_eq!((check.rows, check.entries), (2, 2)); // each index: one row, one entry
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// On a database opened without [`Options::validation`](crate::Options::validation) it
    /// first walks every page of the file with libmdbx's checks (the B-tree walk of
    /// [`check`](Self::check), without its reading of every entry), and reads no row when the
    /// walk finds a damaged page: libmdbx trusts the pages it reads otherwise, and a damaged one
    /// can make a read fault (`SIGBUS`) instead of failing.
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](crate::Error::Decode) for a row that does not decode; an error
    /// beginning the read transaction; [`Error::Mdbx`](crate::Error::Mdbx) naming the table, for
    /// a damaged page (`MDBX_CORRUPTED`) among others.
    pub fn check_indexes(&self, limit: usize) -> Result<crate::index::IndexCheck> {
        if !self.shared.env().validates() {
            self.refuse_damage()?;
        }
        let tx = self.read()?;
        crate::index::check::<S>(tx.raw(), self, limit)
    }

    /// `Err` naming the first damaged tree when libmdbx's page walk
    /// ([`engine::Env::walk_report`]) counts any problem: before
    /// [`check_indexes`](Self::check_indexes) reads the file without `MDBX_VALIDATION`. The walk
    /// checks every page's bounds (not its key order); pages written after it come from
    /// libmdbx's writer, built from pages the walk checked, so a later snapshot holds no page
    /// the walk has not vouched for.
    fn refuse_damage(&self) -> Result<()> {
        let fail = |code| {
            self.shared
                .fail(code, At::env("walk the pages (mdbx_env_chk)"))
        };
        let walk = self.shared.env().walk_report().map_err(fail)?;
        if walk.result.problems == 0 {
            return Ok(());
        }
        // Named as the schema names it (errors carry `&'static str`), or as libmdbx names its
        // own trees.
        let first = walk
            .tables
            .iter()
            .find(|t| t.broken_pages > 0 || t.error.is_some());
        let table = match first.map(|t| &t.tree) {
            Some(engine::ChkTree::Named(name)) => S::TABLES
                .iter()
                .map(|t| t.name)
                .chain([crate::record::META_TABLE])
                .find(|n| n.as_bytes() == name.as_slice())
                .unwrap_or("@MAIN"),
            Some(engine::ChkTree::Gc) => "@GC",
            Some(engine::ChkTree::Meta) => "@META",
            Some(engine::ChkTree::Main) | None => "@MAIN",
        };
        let code = first
            .and_then(|t| t.error)
            .unwrap_or(engine::Code::CORRUPTED);
        Err(Error::Mdbx {
            table,
            op: "check the indexes (libmdbx's page walk, run first because the database was \
                 opened without `Options::validation`, found a damaged page; no row was read: \
                 run `Db::check`)",
            key: None,
            code: MdbxCode::from(code),
        })
    }

    /// The live readers of the file, in every process: one entry per occupied slot of
    /// libmdbx's reader table (`mdbx_reader_list`), with the snapshot each reads, how far
    /// behind the latest commit it is, and the bytes it keeps from reuse. Finished read
    /// transactions that a `Db` keeps parked for reuse show as [`ReaderInfo::PARKED`] readers.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let old = db.read()?; // holds its snapshot
    /// for n in 0..3 {
    ///     let mut tx = db.write()?;
    ///     tx.put::<Names>(&n, &n.to_string())?;
    ///     tx.commit()?;
    /// }
    /// let me = db.readers()?.into_iter().find(|r| r.txn == old.id()).unwrap();
    /// assert!(me.this_process);
    /// assert_eq!(me.lag, 3); // three commits since its snapshot
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx cannot list them.
    pub fn readers(&self) -> Result<Vec<ReaderInfo>> {
        readers(self.shared.env(), |code, at| self.shared.fail(code, at))
    }

    /// Writes a consistent copy of the database, as of the latest commit, to the directory
    /// `dest` (created when missing) as `dest/mdbx.dat`, which
    /// [`tabula::open`](../tabula/fn.open.html) opens as it opens this one. Readers and the
    /// writer go on meanwhile: the copy reads one snapshot (a long read transaction, so the
    /// file may grow while it runs). `compact` leaves out free pages and renumbers the rest,
    /// so the copy is as small as the data (`MDBX_CP_COMPACT`); otherwise the pages are copied
    /// as they are. The copy is flushed to disk before this returns.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// # let db = tabula::open::<App>(dir.path().join("live"), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    ///
    /// let backup = dir.path().join("backup");
    /// db.copy_to(&backup, true)?;
    /// let copy = tabula::open::<App>(&backup, Options::new())?;
    /// assert_eq!(copy.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// assert!(db.copy_to(&backup, true).is_err()); // never overwrites
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming both paths when `dest` is not a directory, already holds an
    /// `mdbx.dat`, or the copy cannot be written (the file system is full, no permission);
    /// a partly written copy is removed.
    pub fn copy_to(&self, dest: impl AsRef<Path>, compact: bool) -> Result<()> {
        copy_to(
            self.shared.env(),
            self.shared.path(),
            dest.as_ref(),
            compact,
        )
    }

    /// Flushes every commit not yet on disk and writes a durable meta page
    /// (`mdbx_env_sync_ex(force)`): after it returns, everything committed so far survives a
    /// power cut, whatever the [`SyncMode`](crate::SyncMode). With the default
    /// `SyncMode::Durable` every commit already did this, so there is nothing to do. Waits while
    /// a write transaction of another thread commits.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::SyncMode;
    /// # let dir = temp_dir();
    /// let db = tabula::open::<App>(dir.path(), Options::new().sync(SyncMode::SafeNoSync))?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert!(db.info()?.unsynced_bytes > 0); // not flushed yet in this mode
    /// db.sync()?;
    /// assert_eq!(db.info()?.unsynced_bytes, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::DiskFull`] or [`Error::Env`] when the flush fails; [`Error::ReadOnly`] on a
    /// read-only open.
    pub fn sync(&self) -> Result<()> {
        if self.shared.run().read_only {
            return Err(Error::ReadOnly {
                op: "sync",
                path: self.shared.path().to_path_buf(),
            });
        }
        self.shared
            .env()
            .sync()
            .map_err(|code| self.shared.fail(code, At::env("sync to disk")))
    }

    /// Space use, as of the latest commit: per table of the schema its entries and pages
    /// (`mdbx_dbi_stat`), and for the whole file the bytes in use, the free pages a write can
    /// reuse now (libmdbx's GC, the free list) and the free pages readers still keep from reuse
    /// (`mdbx_gc_info`, which walks the GC: a cost in proportion to its size).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// for n in 0..1000u64 {
    ///     tx.put::<Names>(&n, &"x".repeat(100))?;
    /// }
    /// tx.commit()?;
    /// let stat = db.stat()?;
    /// let names = &stat.tables[0];
    /// assert_eq!((names.name, names.entries), ("Names", 1000));
    /// assert_eq!(names.bytes, (names.branch_pages + names.leaf_pages + names.overflow_pages)
    ///     * u64::from(stat.page_size));
    /// assert!(names.bytes >= 100_000 && stat.used_bytes >= names.bytes);
    /// assert!(stat.used_bytes <= stat.file_bytes);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ReadersFull`] when no read transaction can begin; [`Error::Mdbx`] or
    /// [`Error::Env`] when libmdbx cannot report.
    pub fn stat(&self) -> Result<DbStat> {
        self.shared.begin_read_then(|mut raw| {
            let result = self.stat_in(&mut raw);
            self.shared.park(raw);
            result
        })?
    }

    fn stat_in(&self, raw: &mut RawTxn) -> Result<DbStat> {
        let mut tables = Vec::with_capacity(S::TABLES.len());
        let mut page_size = 0;
        for (info, &dbi) in S::TABLES.iter().zip(self.shared.dbis().iter()) {
            let s = raw
                .stat(dbi)
                .map_err(|code| self.shared.fail(code, At::table(info.name, "stat")))?;
            page_size = s.page_size;
            let pages = s.branch_pages + s.leaf_pages + s.overflow_pages;
            tables.push(TableUsage {
                name: info.name,
                entries: s.entries,
                depth: s.depth,
                branch_pages: s.branch_pages,
                leaf_pages: s.leaf_pages,
                overflow_pages: s.overflow_pages,
                bytes: pages * u64::from(s.page_size),
            });
        }
        if page_size == 0 {
            page_size = self
                .shared
                .env()
                .info()
                .map_err(|code| self.shared.fail(code, At::env("read environment info")))?
                .page_size;
        }
        let space = raw.space().map_err(|code| {
            self.shared
                .fail(code, At::env("read the free list (mdbx_gc_info)"))
        })?;
        let bytes = |pages: u64| pages * u64::from(page_size);
        Ok(DbStat {
            page_size,
            tables,
            file_bytes: bytes(space.backed_pages),
            max_bytes: bytes(space.total_pages),
            used_bytes: bytes(space.allocated_pages),
            free_bytes: bytes(space.reclaimable_pages),
            retained_bytes: bytes(space.gc_pages.saturating_sub(space.reclaimable_pages)),
        })
    }

    /// Publishes the database's gauges through the `metrics` crate facade (feature `metrics`):
    /// file size, upper bound, bytes in use, free bytes, live readers and the oldest reader's
    /// lag, and each table's bytes and entries (names in [`telemetry`](crate::telemetry)). Call
    /// it periodically or when your exporter is scraped; commits, commit latency and read
    /// transaction ages are recorded as they happen.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// use std::sync::{Arc, Mutex};
    /// use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
    ///
    /// // A recorder that keeps the names of the gauges set (an exporter would publish them).
    /// #[derive(Default)]
    /// struct Seen(Arc<Mutex<Vec<String>>>);
    /// struct Set(String, Arc<Mutex<Vec<String>>>);
    /// impl metrics::GaugeFn for Set {
    ///     fn increment(&self, _: f64) {}
    ///     fn decrement(&self, _: f64) {}
    ///     fn set(&self, _: f64) { self.1.lock().unwrap().push(self.0.clone()) }
    /// }
    /// impl Recorder for Seen {
    ///     fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    ///     fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    ///     fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    ///     fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter { Counter::noop() }
    ///     fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
    ///         Gauge::from_arc(Arc::new(Set(key.name().to_owned(), Arc::clone(&self.0))))
    ///     }
    ///     fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
    ///         Histogram::noop()
    ///     }
    /// }
    /// let recorder = Seen::default();
    /// metrics::with_local_recorder(&recorder, || db.record_metrics())?;
    /// let set = recorder.0.lock().unwrap();
    /// assert!(set.iter().any(|n| n == tabula::telemetry::FILE_BYTES));
    /// assert!(set.iter().any(|n| n == tabula::telemetry::TABLE_BYTES));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`stat`](Self::stat) and [`readers`](Self::readers).
    #[cfg(feature = "metrics")]
    pub fn record_metrics(&self) -> Result<()> {
        use crate::telemetry::{self as t, gauge, table_gauge};
        let stat = self.stat()?;
        let labels = &self.telemetry;
        gauge(labels, t::FILE_BYTES, stat.file_bytes as f64);
        gauge(labels, t::MAX_BYTES, stat.max_bytes as f64);
        gauge(labels, t::USED_BYTES, stat.used_bytes as f64);
        gauge(labels, t::FREE_BYTES, stat.free_bytes as f64);
        for table in &stat.tables {
            table_gauge(labels, t::TABLE_BYTES, table.name, table.bytes as f64);
            table_gauge(labels, t::TABLE_ENTRIES, table.name, table.entries as f64);
        }
        let readers = self.readers()?;
        let live = readers.iter().filter(|r| r.txn != 0);
        gauge(labels, t::READERS, live.clone().count() as f64);
        gauge(
            labels,
            t::OLDEST_READER_LAG,
            live.map(|r| r.lag).max().unwrap_or(0) as f64,
        );
        Ok(())
    }

    /// Largest encoded key a table with these flags accepts.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table, TableFlags};
    /// # #[derive(Table)]
    /// # #[table(key = String, value = u64)]
    /// # struct Owners;
    /// # #[derive(Schema)]
    /// # struct App(Owners);
    /// # let dir = tabula::__doc::temp_dir();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let max = db.max_key_size(TableFlags::NONE); // a whole-key `String` is stored as is
    /// let mut tx = db.write()?;
    /// tx.put::<Owners>(&"k".repeat(max), &1)?;
    /// assert!(matches!(
    ///     tx.put::<Owners>(&"k".repeat(max + 1), &2),
    ///     Err(tabula::Error::TooLarge { .. })
    /// ));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn max_key_size(&self, flags: crate::table::TableFlags) -> usize {
        self.shared
            .env()
            .max_key_size(engine::table_flags(flags.dupsort, flags.integer_key))
    }
}

// The environment's operations, written once for `Db` and the schema-less `UntypedDb`
// (`untyped.rs`); `fail` turns a libmdbx code into an `Error` as the caller does.

/// libmdbx's integrity check of `env` ([`Db::check`]).
pub(crate) fn check(
    env: &engine::Env,
    fail: impl Fn(Code, At<'_>) -> Error,
) -> Result<CheckReport> {
    let r = env
        .check()
        .map_err(|code| fail(code, At::env("integrity check (mdbx_env_chk)")))?;
    Ok(CheckReport {
        problems: r.problems,
        tables: r.tables,
        pages: r.pages,
        txn_id: r.txn_id,
    })
}

/// The live readers of `env`, in every process ([`Db::readers`]).
pub(crate) fn readers(
    env: &engine::Env,
    fail: impl Fn(Code, At<'_>) -> Error,
) -> Result<Vec<ReaderInfo>> {
    env.readers()
        .map_err(|code| fail(code, At::env("list the readers")))
}

/// A copy of the database at `path` (`env`) into the directory `dest` ([`Db::copy_to`]).
pub(crate) fn copy_to(env: &engine::Env, path: &Path, dest: &Path, compact: bool) -> Result<()> {
    let file = dest.join(crate::engine::DATA_FILE);
    let io = |what: &str, source: std::io::Error| Error::Io {
        context: format!(
            "copying `{}` to `{}`: {what}",
            path.display(),
            dest.display()
        ),
        source,
    };
    std::fs::create_dir_all(dest).map_err(|e| io("cannot create the directory", e))?;
    if std::fs::symlink_metadata(&file).is_ok() {
        return Err(io(
            "it already holds `mdbx.dat`; remove it or choose another directory",
            std::io::ErrorKind::AlreadyExists.into(),
        ));
    }
    env.copy_to(&file, compact).map_err(|code| {
        // A failed copy can leave a partial file behind: it is not a database.
        let _ = std::fs::remove_file(&file);
        let source = if code.0 > 0 {
            std::io::Error::from_raw_os_error(code.0)
        } else {
            std::io::Error::other(MdbxCode::from(code).to_string())
        };
        io("the copy failed", source)
    })
}

/// libmdbx's version, e.g. `0.14.4`.
///
/// ```
/// let version = tabula::libmdbx_version();
/// assert!(version.starts_with("0."), "{version}");
/// ```
pub fn libmdbx_version() -> String {
    engine::version()
}

impl<S: Schema> std::fmt::Debug for Db<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.shared.path())
            .field("tables", &self.shared.names())
            .field("read_only", &self.shared.run().read_only)
            .finish()
    }
}
