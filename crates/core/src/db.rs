//! The typed database handle's methods: read and write transactions, geometry, the integrity
//! check.

use std::path::Path;
use std::sync::atomic::Ordering;

use crate::engine::{self, RawTxn};
use crate::error::{At, Error, Result};
use crate::state::Db;
use crate::table::Schema;
use crate::txn::{Ro, Rw, Tx};

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
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
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
    /// writes need (then it is off, and a warning said why; see `docs/design.md`, "A full
    /// disk").
    pub write_map: bool,
}

impl<S: Schema> Db<S> {
    /// Begins a read transaction on the latest committed snapshot.
    ///
    /// Reuses a parked transaction when one is free, so short reads do not contend on libmdbx's
    /// reader table; never blocks on a Rust lock. A parked transaction whose snapshot is still
    /// the latest is reused as it is, tables already looked up included; otherwise it moves to
    /// the latest snapshot first (see [`Options::reuse_read_snapshots`](crate::Options::reuse_read_snapshots)).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
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
                    Err(code) => {
                        return Err(self.shared.fail(code, At::env("begin read transaction")));
                    }
                }
            }
            None => self
                .shared
                .env
                .begin(true)
                .map_err(|code| self.shared.fail(code, At::env("begin read transaction")))?,
        };
        Ok(Tx::new(self, raw))
    }

    /// Begins the write transaction, waiting while another one (in any process) is active.
    ///
    /// The transaction must commit or abort on this thread: `Tx<Rw>` is not `Send`.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
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
        if self.shared.read_only {
            return Err(Error::ReadOnly {
                op: "begin a write transaction",
                path: self.shared.path.clone(),
            });
        }
        let raw = self
            .shared
            .env
            .begin(false)
            .map_err(|code| self.shared.fail(code, At::env("begin write transaction")))?;
        Ok(Tx::new(self, raw))
    }

    /// The path the database was opened at.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// assert_eq!(db.path(), dir.path());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The tables of the schema, in ID order.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let tables = db.tables();
    /// assert_eq!(tables.len(), 1);
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
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let before = db.info()?;
    /// assert!(before.page_size.is_power_of_two());
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
            .env
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
            write_map: self.shared.env.write_map(),
        })
    }

    /// Runs libmdbx's own integrity check (`mdbx_env_chk`, what the `mdbx_chk` tool does) on
    /// the latest committed snapshot: meta pages, every page of every tree, the free-page
    /// records and the order of every key. It reads the whole file, so it takes time in
    /// proportion to its size; writers are not blocked.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
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
        let r = self.shared.env.check().map_err(|code| {
            self.shared
                .fail(code, At::env("integrity check (mdbx_env_chk)"))
        })?;
        Ok(CheckReport {
            problems: r.problems,
            tables: r.tables,
            pages: r.pages,
            txn_id: r.txn_id,
        })
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
    /// # let dir = tempfile::tempdir().unwrap();
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
            .env
            .max_key_size(engine::table_flags(flags.dupsort, flags.integer_key))
    }

    /// Returns a finished read transaction to the pool, parked on its snapshot or reset (see
    /// [`Options::reuse_read_snapshots`](crate::Options::reuse_read_snapshots)), or frees it when the pool is full or parking fails.
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
