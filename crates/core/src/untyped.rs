//! Schema-less, read-only access to any Tabula database: no table types, no schema.
//!
//! [`UntypedDb::open`] opens a file read-only and reads its schema record; [`UntypedDb::read`]
//! begins a read transaction ([`UntypedTx`]) in which every named table of the file is found by
//! name ([`UntypedTx::table`]) with the key and value encodings the record holds for it
//! ([`KeyShape`], [`ValueShape`]), so keys and values are encoded and decoded at run time
//! ([`DynKey`], [`DynValue`]) exactly as the typed codecs do. Raw bytes are always available
//! too. Nothing here writes to the database. The `tabula` command is built on it.
//!
//! Keys and values have a JSON form too ([`KeyShape::key_to_json`], [`DynValue::to_json`] and
//! their inverses [`KeyShape::key_from_json`], [`ValueShape::value_from_json`]; the forms are
//! listed in the [`json`] module), which is how the `tabula` command shows and reads them.
//!
//! ```
//! use tabula::untyped::{DynKey, DynValue, UntypedDb};
//! # use tabula::__doc::*;
//! # fn main() -> tabula::Result<()> {
//! # let (dir, db) = open()?;
//! # let mut tx = db.write()?;
//! # tx.put::<Names>(&7, &"seven".to_string())?;
//! # tx.commit()?;
//! # drop(db);
//! // No `App`, no `Names`: only the file.
//! let db = UntypedDb::open(dir.path())?;
//! let mut tx = db.read()?;
//! let names = tx.table("Names")?.expect("a table of the file");
//! assert_eq!(names.key_shape().unwrap().to_string(), "u64");
//! let values = tx.get(&names, &DynKey::Unsigned(7))?;
//! assert_eq!(values, [DynValue::Str("seven".into())]);
//! # Ok(()) }
//! ```

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

pub use crate::codec::KeyBuf;
pub use crate::codec::untyped::{DynKey, DynValue, KeyShape, ValueShape};
use crate::diagnose::fail;
use crate::engine::{self, Code, Env, RawTxn};
use crate::error::KeyHex;
use crate::error::{At, Error, Part, Result};
use crate::files::open_env;
use crate::options::Options;
use crate::read::TableStat;
use crate::record::SCHEMA_RECORD_KEY;
pub use crate::record::{AppliedStep, RecordProblem, SchemaRecord, StepProgress, TableRecord};
use crate::startup::{META_TABLE, parse_record};

mod history;
pub mod json;

pub use history::StoredVersionChange;

/// Table slots for an inspection open: libmdbx reserves per-transaction state for each, and a
/// file with more named tables than this reports `MDBX_DBS_FULL` when they are listed.
const INSPECT_MAX_TABLES: u32 = 1024;

/// Geometry and counters of a database, more complete than [`DbInfo`](crate::DbInfo).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvDetails {
    /// Size of the data file in bytes.
    pub file_size: u64,
    /// Current size of the memory map in bytes.
    pub map_size: u64,
    /// Page size in bytes.
    pub page_size: u32,
    /// The smallest the file shrinks to, in bytes.
    pub lower: u64,
    /// The current size of the database (the geometry's "now"), in bytes.
    pub current: u64,
    /// The largest the file may grow to, in bytes.
    pub upper: u64,
    /// How much the file grows at a time, in bytes.
    pub growth: u64,
    /// Free space at the end above which the file shrinks, in bytes.
    pub shrink: u64,
    /// ID of the latest committed transaction.
    pub last_txn: u64,
    /// The oldest transaction a live reader still uses.
    pub oldest_reader_txn: u64,
    /// The reader table's high-water mark: slots in use or used before and left free in the
    /// table's used part, this process's own included (libmdbx's `mi_numreaders`). Count
    /// [`UntypedDb::readers`] for the live ones.
    pub readers: u32,
    /// Reader slots.
    pub max_readers: u32,
}

/// How the pages of the data file are used at one snapshot; see [`UntypedTx::page_use`].
///
/// The file holds [`file_pages`](Self::file_pages) pages: [`allocated_pages`](Self::allocated_pages)
/// of them have been written, and of those [`free_pages`](Self::free_pages) are free (libmdbx's
/// free-page tree, the GC, lists them, or they hold that tree), which writers reuse before they
/// grow the file; the rest of the file has never been written. A file is never smaller than its
/// geometry's lower bound, so a file of 16 MiB may hold a few hundred used pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageUse {
    /// Page size in bytes.
    pub page_size: u32,
    /// Pages the data file holds now.
    pub file_pages: u64,
    /// Pages written so far, used or free (the first never-written page number).
    pub allocated_pages: u64,
    /// Of the allocated pages, those that are free: listed in the GC, or holding it.
    pub free_pages: u64,
    /// Of the free pages, those a writer may reuse now (no reader's snapshot needs them).
    pub reclaimable_pages: u64,
    /// Pages the geometry's upper bound allows.
    pub max_pages: u64,
}

impl PageUse {
    /// Pages holding data: the allocated pages that are not free (the meta pages, every
    /// table's tree and the directory of tables).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # drop(db);
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let pages = db.read()?.page_use()?;
    /// assert!(pages.used_pages() > 0);
    /// assert!(pages.used_pages() + pages.free_pages <= pages.file_pages);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn used_pages(&self) -> u64 {
        self.allocated_pages.saturating_sub(self.free_pages)
    }

    /// Bytes of the pages holding data ([`used_pages`](Self::used_pages) × page size).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # drop(db);
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let pages = db.read()?.page_use()?;
    /// assert_eq!(pages.used_bytes(), pages.used_pages() * u64::from(pages.page_size));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn used_bytes(&self) -> u64 {
        self.used_pages() * u64::from(self.page_size)
    }
}

/// One live reader (an occupied slot of the reader table): the typed API's reader record.
pub use crate::engine::ReaderInfo;

/// libmdbx's integrity check in full: its counts, its own report and what it found in each
/// tree of the file; see [`UntypedDb::check_report`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckDetails {
    /// The counts, as [`UntypedDb::check`] returns them.
    pub summary: crate::db::CheckReport,
    /// libmdbx's report (what its `mdbx_chk` tool prints), one entry per line: section headings,
    /// each problem, the summaries. Collected on x86-64 only (see the `Limits` below); empty
    /// elsewhere.
    ///
    /// # Limits
    ///
    /// libmdbx hands each piece of the report to a callback as a `printf` format with a
    /// `va_list`, which stable Rust cannot read: the pieces are formatted by the C library's
    /// `vsnprintf`, and the Rust type of a `va_list` parameter is known here for x86-64 only.
    pub report: Vec<CheckLine>,
    /// Every tree the check's B-tree walk reached (named tables, and libmdbx's own trees
    /// `@MAIN` and `@GC`), with what it found in each.
    pub tables: Vec<TableCheck>,
}

impl CheckDetails {
    /// The trees with a problem, in the order the check met them.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # drop(db);
    /// let found = tabula::untyped::UntypedDb::open(dir.path())?.check_report()?;
    /// let damaged: Vec<&str> = found.damaged().map(|t| t.name.as_str()).collect();
    /// assert!(damaged.is_empty(), "damaged: {damaged:?}");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn damaged(&self) -> impl Iterator<Item = &TableCheck> {
        self.tables.iter().filter(|t| t.damaged())
    }
}

/// One line of libmdbx's check report.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckLine {
    /// The nesting of the report section it is in (0 = top), for indenting.
    pub depth: u8,
    /// Whether libmdbx reported it as a problem (an error line).
    pub problem: bool,
    /// The text, without a line end.
    pub text: String,
}

/// What libmdbx's check found in one tree of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableCheck {
    /// The table's name; libmdbx's own trees are `@MAIN` (the directory of named tables) and
    /// `@GC` (free pages), as libmdbx names them.
    pub name: String,
    /// Whether this is a named table (not one of libmdbx's own trees).
    pub named: bool,
    /// Pages of the tree the walk reached.
    pub pages: u64,
    /// Of those, pages that are damaged (a bad header, a wrong type, unreadable).
    pub broken_pages: u64,
    /// Problems found while reading its entries. libmdbx reads the entries only when the B-tree
    /// walk found no damage, and stops at the first table whose entries cannot be read.
    pub entry_problems: u64,
    /// The error that ended the reading of its entries, if one did (`MDBX_CORRUPTED`, ...).
    pub error: Option<String>,
}

impl TableCheck {
    /// Whether the check found anything wrong in this tree.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # drop(db);
    /// let found = tabula::untyped::UntypedDb::open(dir.path())?.check_report()?;
    /// let names = found.tables.iter().find(|t| t.name == "Names").unwrap();
    /// assert!(!names.damaged());
    /// assert_eq!(names.broken_pages, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn damaged(&self) -> bool {
        self.broken_pages > 0 || self.entry_problems > 0 || self.error.is_some()
    }
}

/// A table found by name in an [`UntypedTx`], with the encodings its schema record names.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UntypedTable {
    /// The table's name.
    pub name: String,
    /// The libmdbx handle (DBI number) in this environment.
    dbi: u32,
    /// Several values per key (`MDBX_DUPSORT`).
    pub dupsort: bool,
    /// Native-endian integer keys (`MDBX_INTEGERKEY`).
    pub integer_key: bool,
    /// Every libmdbx table flag set, by name (`dupsort`, `integer_key`, `dupfixed`, ...).
    pub flags: Vec<&'static str>,
    /// What the schema record holds for it; `None` for a table Tabula did not record (or a
    /// file without a record).
    pub record: Option<TableRecord>,
    key: Option<KeyShape>,
    value: Option<ValueShape>,
}

impl UntypedTable {
    /// The libmdbx handle (DBI number) of the table in this environment.
    pub fn handle(&self) -> u32 {
        self.dbi
    }

    /// The key encoding, from the recorded descriptor (the meta table's keys are strings);
    /// `None` when no descriptor is recorded or it does not parse: keys are raw bytes then.
    pub fn key_shape(&self) -> Option<&KeyShape> {
        self.key.as_ref()
    }

    /// The value encoding, from the recorded descriptor and shape; `None` for a custom codec,
    /// a serde value whose shape could not be recorded, or a table without a record.
    pub fn value_shape(&self) -> Option<&ValueShape> {
        self.value.as_ref()
    }

    /// Whether this is Tabula's own meta table (the schema record lives there).
    pub fn is_meta(&self) -> bool {
        self.name == META_TABLE
    }
}

/// Any Tabula database, opened read-only without a schema; see the [module docs](self).
pub struct UntypedDb {
    env: Env,
    path: PathBuf,
    record: Option<SchemaRecord>,
    /// The zstd dictionaries the file stores, loaded for decoding (released on close).
    _dictionaries: crate::codec::DictionaryLease,
}

impl UntypedDb {
    /// Turns a libmdbx code from `op` into an [`Error`] ([`crate::diagnose::fail`]).
    fn err(&self, op: &'static str) -> impl Fn(Code) -> Error + Copy + '_ {
        move |code| self.fail(code, At::env(op))
    }

    /// `code` from `at` as an [`Error`] ([`crate::diagnose::fail`]).
    fn fail(&self, code: Code, at: At<'_>) -> Error {
        fail(code, at, &self.env, &self.path)
    }

    /// Opens the database at `path` read-only and reads its schema record: a directory holding
    /// `mdbx.dat` (a path to that `mdbx.dat` opens its directory), or a data file opened with
    /// `no_sub_dir`.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # drop(db);
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let record = db.record().expect("a Tabula database records its schema");
    /// assert_eq!(record.tables["Names"].key, "u64");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BadFile`] when the path (or the data or lock file in it) is a FIFO, socket,
    /// device, or a data file too short to be a database; [`Error::Open`] with a hint when the
    /// path does not exist, is not an MDBX database, or is already open in this process;
    /// [`Error::SchemaRecord`] when the schema record is damaged or from a newer Tabula.
    pub fn open(path: impl AsRef<Path>) -> Result<UntypedDb> {
        let path = path.as_ref();
        // `DIR/mdbx.dat` is opened as `DIR`, so the lock file is the one the application uses
        // (`DIR/mdbx.lck`); a data file opened by itself would get a second lock file
        // (`FILE-lck`) and its readers would be invisible to the application's writer.
        let dir_of_dat = path
            .file_name()
            .is_some_and(|n| n == crate::engine::DATA_FILE)
            .then(|| path.parent())
            .flatten()
            .filter(|p| p.is_dir());
        // Anything but a directory is taken for the data file itself: `open_env` names what it
        // is when it is not a regular file (a FIFO would block the open forever).
        let (open_path, is_file) = match dir_of_dat {
            Some(dir) => (dir, false),
            None => (path, std::fs::metadata(path).is_ok_and(|m| !m.is_dir())),
        };
        let cfg = Options::new()
            .read_only(true)
            .no_sub_dir(is_file)
            .validation(true)
            .extra_tables(INSPECT_MAX_TABLES)
            .checked_env_config(0, 1)?;
        let env = open_env(open_path, path, &cfg, false)?;
        let mut db = UntypedDb {
            env,
            path: path.to_path_buf(),
            record: None,
            _dictionaries: crate::codec::DictionaryLease::default(),
        };
        let record = {
            let mut tx = db.read()?;
            match tx.raw_table(META_TABLE)? {
                Some(meta) => tx.get_raw(&meta, SCHEMA_RECORD_KEY.as_bytes())?.pop(),
                None => None,
            }
        };
        db.record = record.map(|bytes| parse_record(&bytes, path)).transpose()?;
        #[cfg(feature = "compression")]
        {
            db._dictionaries = db.load_dictionaries()?;
        }
        Ok(db)
    }

    /// Loads the zstd dictionaries the file stores into the process-wide registry, for decoding
    /// only (this API never encodes with them).
    #[cfg(feature = "compression")]
    fn load_dictionaries(&self) -> Result<crate::codec::DictionaryLease> {
        use crate::record::ZSTD_DICTIONARY_TABLE;
        let mut entries = Vec::new();
        {
            let mut tx = self.read()?;
            if let Some(table) = tx.raw_table(ZSTD_DICTIONARY_TABLE)? {
                tx.walk(&table, None, None, false, |k, v| {
                    entries.push((k.to_vec(), v.to_vec()));
                    true
                })?;
            }
        }
        let problem = |message: String| Error::ZstdDictionary {
            path: self.path.clone(),
            message,
        };
        let stored = crate::codec::StoredDictionaries::parse(&entries).map_err(|p| {
            problem(format!(
                "the `{ZSTD_DICTIONARY_TABLE}` table is unusable: {p}; restore the database \
                 from a backup"
            ))
        })?;
        crate::codec::lease_dictionaries(&stored, &[], &self.path).map_err(problem)
    }

    /// The schema record: the schema version, applied migration steps and every table Tabula
    /// recorded with its flags and encodings; `None` for a file Tabula never recorded a schema
    /// in (a plain libmdbx file).
    pub fn record(&self) -> Option<&SchemaRecord> {
        self.record.as_ref()
    }

    /// The path given to [`open`](UntypedDb::open).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs libmdbx's own integrity check (`mdbx_env_chk`), as [`Db::check`](crate::Db::check)
    /// does for an opened schema.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the check cannot run; damage is counted in
    /// [`CheckReport::problems`](crate::CheckReport), not returned as an error.
    pub fn check(&self) -> Result<crate::db::CheckReport> {
        crate::db::check(&self.env, |code, at| self.fail(code, at))
    }

    /// Runs libmdbx's integrity check as [`check`](UntypedDb::check) does, and returns, with
    /// the counts, libmdbx's own report (problems, section summaries) and what it found in each
    /// tree, so that every damaged table can be named.
    ///
    /// ```
    /// use tabula::untyped::UntypedDb;
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # drop(db);
    /// let db = UntypedDb::open(dir.path())?;
    /// let found = db.check_report()?;
    /// assert!(found.summary.is_ok());
    /// assert_eq!(found.damaged().count(), 0);
    /// assert!(found.tables.iter().any(|t| t.named && t.name == "Names"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the check cannot run; damage is reported in the result.
    pub fn check_report(&self) -> Result<CheckDetails> {
        let r = self
            .env
            .check_report()
            .map_err(self.err("integrity check (mdbx_env_chk)"))?;
        Ok(CheckDetails {
            summary: crate::db::CheckReport {
                problems: r.result.problems,
                tables: r.result.tables,
                pages: r.result.pages,
                txn_id: r.result.txn_id,
            },
            report: r
                .lines
                .into_iter()
                .map(|l| CheckLine {
                    depth: l.depth,
                    problem: l.problem,
                    text: l.text,
                })
                .collect(),
            tables: r
                .tables
                .into_iter()
                .map(|t| {
                    let (name, named) = match t.tree {
                        engine::ChkTree::Main => ("@MAIN".to_owned(), false),
                        engine::ChkTree::Gc => ("@GC".to_owned(), false),
                        engine::ChkTree::Meta => ("@META".to_owned(), false),
                        engine::ChkTree::Named(n) => {
                            (String::from_utf8_lossy(&n).into_owned(), true)
                        }
                    };
                    TableCheck {
                        name,
                        named,
                        pages: t.pages,
                        broken_pages: t.broken_pages,
                        entry_problems: t.entry_problems,
                        error: t.error.map(|c| c.name().to_owned()),
                    }
                })
                .collect(),
        })
    }

    /// Geometry and counters.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx cannot report them.
    pub fn details(&self) -> Result<EnvDetails> {
        let i = self.env.info().map_err(self.err("read environment info"))?;
        Ok(EnvDetails {
            file_size: i.file_size,
            map_size: i.map_size,
            page_size: i.page_size,
            lower: i.lower,
            current: i.current,
            upper: i.upper,
            growth: i.growth,
            shrink: i.shrink,
            last_txn: i.last_txn,
            oldest_reader_txn: i.oldest_reader_txn,
            readers: i.readers,
            max_readers: i.max_readers,
        })
    }

    /// The live readers of the file, in every process.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx cannot list them.
    pub fn readers(&self) -> Result<Vec<ReaderInfo>> {
        crate::db::readers(&self.env, |code, at| self.fail(code, at))
    }

    /// Writes a consistent copy of the database, as of the latest commit, to the directory
    /// `dest` (created when missing) as `dest/mdbx.dat`, as [`Db::copy_to`](crate::Db::copy_to)
    /// does; `compact` leaves out free pages and renumbers the rest.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// # drop(tabula::open::<App>(dir.path().join("live"), Options::new())?);
    /// let db = tabula::untyped::UntypedDb::open(dir.path().join("live"))?;
    /// db.copy_to(dir.path().join("backup"), true)?;
    /// let copy = tabula::untyped::UntypedDb::open(dir.path().join("backup"))?;
    /// assert_eq!(copy.record(), db.record());
    /// assert!(db.copy_to(dir.path().join("backup"), true).is_err()); // never overwrites
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming both paths when `dest` is not a directory, already holds an
    /// `mdbx.dat`, or the copy cannot be written; a partly written copy is removed.
    pub fn copy_to(&self, dest: impl AsRef<Path>, compact: bool) -> Result<()> {
        crate::db::copy_to(&self.env, &self.path, dest.as_ref(), compact)
    }

    /// Begins a read transaction on the latest snapshot.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] / [`Error::ReadersFull`] when libmdbx refuses.
    pub fn read(&self) -> Result<UntypedTx<'_>> {
        let txn = self.env.begin(true).map_err(|code| {
            if code == Code::READERS_FULL {
                Error::ReadersFull {
                    max_readers: self.env.info().map(|i| i.max_readers).unwrap_or(0),
                }
            } else {
                self.err("begin read transaction")(code)
            }
        })?;
        Ok(UntypedTx { txn, db: self })
    }
}

impl std::fmt::Debug for UntypedDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UntypedDb")
            .field("path", &self.path)
            .finish()
    }
}

/// One read transaction of an [`UntypedDb`]; tables are named at run time.
pub struct UntypedTx<'db> {
    txn: RawTxn,
    db: &'db UntypedDb,
}

impl UntypedTx<'_> {
    /// Turns a libmdbx code from `op` on the table `name` into an [`Error::Mdbx`] naming it
    /// ([`crate::diagnose::fail`]).
    fn table_err(&self, name: &str, op: &'static str) -> impl Fn(Code) -> Error + Copy + '_ {
        let name = intern(name);
        move |code| fail(code, At::table(name, op), &self.db.env, &self.db.path)
    }

    /// The snapshot's transaction ID.
    pub fn id(&self) -> u64 {
        self.txn.id()
    }

    /// The names of every named table in the file, in byte order (Tabula's meta table
    /// included). Entries of the main table that are not tables, and names that are not UTF-8,
    /// are left out.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx fails.
    pub fn table_names(&mut self) -> Result<Vec<String>> {
        let keys = self
            .txn
            .main_keys()
            .map_err(self.db.err("list the tables"))?;
        let mut names = Vec::with_capacity(keys.len());
        for key in keys {
            let Ok(name) = String::from_utf8(key) else {
                continue;
            };
            if self.raw_table(&name)?.is_some() {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// The table `name` with the flags it was created with and the encodings its record
    /// names; `None` when there is no such table (or the name is a plain entry of the main
    /// table).
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] naming the table when libmdbx fails otherwise.
    pub fn table(&mut self, name: &str) -> Result<Option<UntypedTable>> {
        let Some(mut table) = self.raw_table(name)? else {
            return Ok(None);
        };
        table.record = self
            .db
            .record
            .as_ref()
            .and_then(|r| r.tables.get(name).cloned());
        table.key = if table.is_meta() {
            Some(KeyShape::Str)
        } else {
            table
                .record
                .as_ref()
                .and_then(|r| KeyShape::parse(&r.key).ok())
        };
        table.value = table
            .record
            .as_ref()
            .and_then(|r| ValueShape::of_record(&r.value, r.shape.as_deref()).ok())
            .flatten();
        Ok(Some(table))
    }

    /// The table `name` without its record's encodings.
    fn raw_table(&mut self, name: &str) -> Result<Option<UntypedTable>> {
        let dbi = match self.txn.open_table(Some(name), 0, false) {
            Ok(Some(dbi)) => dbi,
            Ok(None) => return Ok(None),
            Err(c) if c == Code::INCOMPATIBLE || c == Code::EINVAL => return Ok(None),
            Err(c) => return Err(self.table_err(name, "open the table")(c)),
        };
        let bits = self
            .txn
            .table_flags(dbi)
            .map_err(self.table_err(name, "read the table's flags"))?;
        let flags = engine::table_flag_names(bits);
        Ok(Some(UntypedTable {
            name: name.to_owned(),
            dbi,
            dupsort: flags.contains(&"dupsort"),
            integer_key: flags.contains(&"integer_key"),
            flags,
            record: None,
            key: None,
            value: None,
        }))
    }

    /// Entry and page counts of a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] naming the table when libmdbx fails (`MDBX_CORRUPTED` for a damaged page).
    pub fn stat(&self, table: &UntypedTable) -> Result<TableStat> {
        self.txn
            .stat(table.dbi)
            .map(TableStat::from_raw)
            .map_err(self.table_err(&table.name, "read the table's statistics"))
    }

    /// Every value stored under `key` (one for a plain table, all duplicates in order for a
    /// dupsort table), copied out; empty when the key is absent.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] naming the table when libmdbx fails (`MDBX_CORRUPTED` for a damaged page).
    pub fn get_raw(&self, table: &UntypedTable, key: &[u8]) -> Result<Vec<Vec<u8>>> {
        let err = self.table_err(&table.name, "read a key");
        let mut out = Vec::new();
        if !table.dupsort {
            if let Some(v) = self.txn.get(table.dbi, key).map_err(err)? {
                out.push(v.to_vec());
            }
            return Ok(out);
        }
        let mut cur = self.txn.cursor(table.dbi).map_err(err)?;
        let mut entry = cur.get(engine::op::SET_KEY, Some(key), None).map_err(err)?;
        while let Some((_, v)) = entry {
            out.push(v.to_vec());
            entry = cur.get(engine::op::NEXT_DUP, None, None).map_err(err)?;
        }
        Ok(out)
    }

    /// The values stored under `key` that begin with the bytes `prefix`, in order, copied out:
    /// for a `dupsort` table, the key's values from the first one at or after `prefix`
    /// (`MDBX_GET_BOTH_RANGE`) while they begin with it, so that a subkey's values are found
    /// without reading the others (encode the subkey with [`KeyShape::encode_part`], `last =
    /// false`: see [`ValueShape::subkey_shape`]); for any other table, its one value if it
    /// begins with `prefix`. Empty when there are none.
    ///
    /// ```
    /// use tabula::untyped::{DynKey, KeyBuf, UntypedDb};
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for slot in [1u32, 7, 9] {
    /// #     tx.put::<Storage>(&5, &(slot, format!("at {slot}")))?;
    /// # }
    /// # tx.commit()?;
    /// # drop(db);
    /// let db = UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let slots = tx.table("Storage")?.expect("a table of the file");
    /// let subkey = slots.value_shape().and_then(|v| v.subkey_shape()).expect("a subkey");
    /// let mut prefix = KeyBuf::new();
    /// subkey.encode_part(&DynKey::Unsigned(7), &mut prefix, false)?;
    /// let key = slots.key_shape().unwrap().encode(&DynKey::Unsigned(5))?;
    /// let found = tx.get_raw_prefixed(&slots, &key, prefix.as_slice())?;
    /// assert_eq!(found.len(), 1);
    /// assert_eq!(slots.value_shape().unwrap().decode(&found[0])?.to_json(), serde_json::json!([7, "at 7"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] naming the table when libmdbx fails (`MDBX_CORRUPTED` for a damaged page).
    pub fn get_raw_prefixed(
        &self,
        table: &UntypedTable,
        key: &[u8],
        prefix: &[u8],
    ) -> Result<Vec<Vec<u8>>> {
        let err = self.table_err(&table.name, "read a key");
        if !table.dupsort {
            let value = self.txn.get(table.dbi, key).map_err(err)?;
            return Ok(value
                .filter(|v| v.starts_with(prefix))
                .map(<[u8]>::to_vec)
                .into_iter()
                .collect());
        }
        let mut out = Vec::new();
        let mut cur = self.txn.cursor(table.dbi).map_err(err)?;
        let mut entry = cur
            .get(engine::op::GET_BOTH_RANGE, Some(key), Some(prefix))
            .map_err(err)?;
        while let Some((_, v)) = entry {
            if !v.starts_with(prefix) {
                break;
            }
            out.push(v.to_vec());
            entry = cur.get(engine::op::NEXT_DUP, None, None).map_err(err)?;
        }
        Ok(out)
    }

    /// How the pages of the file are used at this snapshot: allocated, free (in libmdbx's
    /// free-page tree) and used. Reads the whole free-page tree (`mdbx_gc_info`), so it costs
    /// more on a file with much free space.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # drop(db);
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let pages = db.read()?.page_use()?;
    /// let file_size = std::fs::metadata(dir.path().join("mdbx.dat")).unwrap().len();
    /// assert_eq!(pages.file_pages * u64::from(pages.page_size), file_size);
    /// assert!(pages.allocated_pages <= pages.file_pages);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx fails (a damaged free-page tree, for one).
    pub fn page_use(&mut self) -> Result<PageUse> {
        let counts = self
            .txn
            .page_counts()
            .map_err(self.db.err("read the page use (mdbx_gc_info)"))?;
        let page_size = self
            .db
            .env
            .info()
            .map_err(self.db.err("read environment info"))?
            .page_size;
        Ok(PageUse {
            page_size,
            file_pages: counts.backed,
            allocated_pages: counts.allocated,
            free_pages: counts.gc,
            reclaimable_pages: counts.reclaimable,
            max_pages: counts.total,
        })
    }

    /// Every value stored under `key`, decoded, encoding the key and decoding the values with
    /// the table's recorded encodings; empty when the key is absent.
    ///
    /// # Errors
    ///
    /// [`Error::Encode`] when `key` does not have the table's key shape, [`Error::Decode`] when
    /// a stored value does not decode, [`Error::SchemaRecord`] when the record names no
    /// encoding for the table (use [`get_raw`](Self::get_raw) then).
    pub fn get(&self, table: &UntypedTable, key: &DynKey) -> Result<Vec<DynValue>> {
        let (Some(keys), Some(values)) = (table.key_shape(), table.value_shape()) else {
            return Err(Error::SchemaRecord {
                path: self.db.path.clone(),
                message: format!(
                    "it records no key and value encoding for table `{}`; read raw bytes",
                    table.name
                ),
            });
        };
        let stored = keys.encode(key).map_err(|source| Error::Encode {
            table: intern(&table.name),
            key: KeyHex::new(&[]),
            source,
        })?;
        self.get_raw(table, &stored)?
            .iter()
            .map(|v| {
                values.decode(v).map_err(|source| Error::Decode {
                    table: intern(&table.name),
                    part: Part::Value,
                    key: KeyHex::new(&stored),
                    source,
                })
            })
            .collect()
    }

    /// Compares two stored keys in the table's own order (integer order for `integer_key`).
    pub fn compare_keys(&self, table: &UntypedTable, a: &[u8], b: &[u8]) -> Ordering {
        self.txn.cmp_keys(table.dbi, a, b)
    }

    /// Calls `f` with each entry whose key lies within the inclusive bounds `from..=to` (in the
    /// table's order), first to last or last to first, until `f` returns `false`. Bounds are
    /// stored keys.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] naming the table when libmdbx fails (`MDBX_CORRUPTED` for a damaged page).
    pub fn walk(
        &self,
        table: &UntypedTable,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        reverse: bool,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        use engine::op;
        let err = self.table_err(&table.name, "walk the table");
        let dbi = table.dbi;
        let mut cur = self.txn.cursor(dbi).map_err(err)?;
        if !reverse {
            let mut entry = match from {
                Some(k) => cur.get(op::SET_RANGE, Some(k), None).map_err(err)?,
                None => cur.get(op::FIRST, None, None).map_err(err)?,
            };
            while let Some((k, v)) = entry {
                if to.is_some_and(|to| self.txn.cmp_keys(dbi, k, to) == Ordering::Greater) {
                    break;
                }
                if !f(k, v) {
                    break;
                }
                entry = cur.get(op::NEXT, None, None).map_err(err)?;
            }
            return Ok(());
        }
        let mut entry = match to {
            None => cur.get(op::LAST, None, None).map_err(err)?,
            Some(to) => match cur.get(op::SET_RANGE, Some(to), None).map_err(err)? {
                Some((k, _)) if self.txn.cmp_keys(dbi, k, to) == Ordering::Equal => {
                    if table.dupsort {
                        cur.get(op::LAST_DUP, None, None).map_err(err)?
                    } else {
                        cur.get(op::GET_CURRENT, None, None).map_err(err)?
                    }
                }
                Some(_) => cur.get(op::PREV, None, None).map_err(err)?,
                None => cur.get(op::LAST, None, None).map_err(err)?,
            },
        };
        while let Some((k, v)) = entry {
            if from.is_some_and(|from| self.txn.cmp_keys(dbi, k, from) == Ordering::Less) {
                break;
            }
            if !f(k, v) {
                break;
            }
            entry = cur.get(op::PREV, None, None).map_err(err)?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for UntypedTx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UntypedTx").field("id", &self.id()).finish()
    }
}

/// A table name as the `&'static str` errors carry, each distinct name stored once for the life
/// of the process (a file has a bounded number of tables; errors name them).
fn intern(name: &str) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = names.get(name) {
        return known;
    }
    let stored: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(stored);
    stored
}
