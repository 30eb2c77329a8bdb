//! Schema-less, read-only access to any database file, for the `tabula` command-line tool.
//!
//! [`Inspector`] opens an environment read-only without a schema; [`Snapshot`] is one read
//! transaction in which tables are found by name (every named table in the file, not only those
//! of a schema), counted and walked as raw bytes. Nothing here writes to the database.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::engine::{self, Code, Env, RawTxn};
use crate::error::{Error, Result};
use crate::files::open_env;
use crate::options::Options;
use crate::txn::TableStat;

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
    /// Reader slots in use.
    pub readers: u32,
    /// Reader slots.
    pub max_readers: u32,
}

/// One live reader (an occupied slot of the reader table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReaderInfo {
    /// The slot number.
    pub slot: i32,
    /// The reading process.
    pub pid: i32,
    /// The reading thread (`pthread_t`), 0 when the slot is not bound to a thread;
    /// [`ReaderInfo::PARKED`] for a transaction parked on its snapshot (`mdbx_txn_park`, what a
    /// Tabula `Db` does with finished reads), [`ReaderInfo::OUSTED`] for one a writer ousted.
    pub thread: u64,
    /// The snapshot (transaction ID) it reads; 0 for a reset slot (kept for reuse, pinning
    /// nothing).
    pub txn: u64,
    /// How many transactions behind the latest commit it is.
    pub lag: u64,
    /// Bytes of the database as of its snapshot.
    pub bytes_used: usize,
    /// Bytes the database cannot reuse while it reads.
    pub bytes_retained: usize,
}

impl ReaderInfo {
    /// [`thread`](Self::thread) of a read transaction parked on its snapshot.
    pub const PARKED: u64 = u64::MAX;
    /// [`thread`](Self::thread) of a parked read transaction a writer ousted.
    pub const OUSTED: u64 = u64::MAX - 1;
}

/// A table found by name in a [`Snapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FoundTable {
    /// The libmdbx handle (DBI number) in this inspection.
    pub dbi: u32,
    /// Several values per key (`MDBX_DUPSORT`).
    pub dupsort: bool,
    /// Native-endian integer keys (`MDBX_INTEGERKEY`).
    pub integer_key: bool,
    /// Every libmdbx table flag set, by name (`dupsort`, `integer_key`, `dupfixed`, ...).
    pub flags: Vec<&'static str>,
}

/// A database opened read-only without a schema. Not public API: for the `tabula` tool.
pub struct Inspector {
    env: Env,
    path: PathBuf,
}

impl Inspector {
    /// Turns a libmdbx code from `op` into an [`Error`] ([`crate::error::fail`]).
    fn err(&self, op: &'static str) -> impl Fn(Code) -> Error + Copy + '_ {
        move |code| crate::error::fail(code, crate::error::At::env(op), &self.env, &self.path)
    }

    /// Opens the database at `path` read-only: a directory holding `mdbx.dat` (a path to that
    /// `mdbx.dat` opens its directory), or a data file opened with `no_sub_dir`.
    ///
    /// # Errors
    ///
    /// [`Error::BadFile`] when the path (or the data or lock file in it) is a FIFO, socket,
    /// device, or a data file too short to be a database; [`Error::Open`] with a hint when the
    /// path does not exist, is not an MDBX database, or is already open in this process.
    pub fn open(path: &Path) -> Result<Inspector> {
        // `DIR/mdbx.dat` is opened as `DIR`, so the lock file is the one the application uses
        // (`DIR/mdbx.lck`); a data file opened by itself would get a second lock file
        // (`FILE-lck`) and its readers would be invisible to the application's writer.
        let dir_of_dat = path
            .file_name()
            .is_some_and(|n| n == "mdbx.dat")
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
            .extra_tables(INSPECT_MAX_TABLES)
            .env_config(0);
        let env = open_env(open_path, path, &cfg, false)?;
        Ok(Inspector {
            env,
            path: path.to_path_buf(),
        })
    }

    /// The path given to [`open`](Inspector::open).
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
    pub fn check(&self) -> Result<crate::CheckReport> {
        let r = self
            .env
            .check()
            .map_err(self.err("integrity check (mdbx_env_chk)"))?;
        Ok(crate::CheckReport {
            problems: r.problems,
            tables: r.tables,
            pages: r.pages,
            txn_id: r.txn_id,
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
        let raw = self.env.readers().map_err(self.err("list the readers"))?;
        Ok(raw
            .into_iter()
            .map(|r| ReaderInfo {
                slot: r.slot,
                pid: r.pid,
                thread: r.thread,
                txn: r.txnid,
                lag: r.lag,
                bytes_used: r.bytes_used,
                bytes_retained: r.bytes_retained,
            })
            .collect())
    }

    /// Writes a copy of the database to the file `dest`, which must not exist; `compact` leaves
    /// out free pages.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when `dest` exists or cannot be written.
    pub fn copy_to(&self, dest: &Path, compact: bool) -> Result<()> {
        self.env
            .copy_to(dest, compact)
            .map_err(self.err("copy the database"))
    }

    /// Begins a read transaction on the latest snapshot.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] / [`Error::ReadersFull`] when libmdbx refuses.
    pub fn snapshot(&self) -> Result<Snapshot<'_>> {
        let txn = self.env.begin(true).map_err(|code| {
            if code == Code::READERS_FULL {
                Error::ReadersFull {
                    max_readers: self.env.info().map(|i| i.max_readers).unwrap_or(0),
                }
            } else {
                self.err("begin read transaction")(code)
            }
        })?;
        Ok(Snapshot { txn, ins: self })
    }
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector")
            .field("path", &self.path)
            .finish()
    }
}

/// One read transaction of an [`Inspector`]; tables are named at run time.
pub struct Snapshot<'i> {
    txn: RawTxn,
    ins: &'i Inspector,
}

impl Snapshot<'_> {
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
            .map_err(self.ins.err("list the tables"))?;
        let mut names = Vec::with_capacity(keys.len());
        for key in keys {
            let Ok(name) = String::from_utf8(key) else {
                continue;
            };
            if self.open_table(&name)?.is_some() {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// Opens the table `name` with the flags it was created with; `None` when there is no such
    /// table (or the name is a plain entry of the main table).
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx fails otherwise.
    pub fn open_table(&mut self, name: &str) -> Result<Option<FoundTable>> {
        let dbi = match self.txn.open_table(Some(name), 0, false) {
            Ok(Some(dbi)) => dbi,
            Ok(None) => return Ok(None),
            Err(c) if c == Code::INCOMPATIBLE || c == Code::EINVAL => return Ok(None),
            Err(c) => return Err(self.ins.err("open a table")(c)),
        };
        let bits = self
            .txn
            .table_flags(dbi)
            .map_err(self.ins.err("read table flags"))?;
        let flags = engine::table_flag_names(bits);
        Ok(Some(FoundTable {
            dbi,
            dupsort: flags.contains(&"dupsort"),
            integer_key: flags.contains(&"integer_key"),
            flags,
        }))
    }

    /// Entry and page counts of a table opened by [`open_table`](Snapshot::open_table).
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx fails.
    pub fn stat(&self, table: &FoundTable) -> Result<TableStat> {
        let s = self
            .txn
            .stat(table.dbi)
            .map_err(self.ins.err("read table statistics"))?;
        Ok(TableStat {
            entries: s.entries,
            depth: s.depth,
            branch_pages: s.branch_pages,
            leaf_pages: s.leaf_pages,
            overflow_pages: s.overflow_pages,
            page_size: s.page_size,
        })
    }

    /// Every value stored under `key` (one for a plain table, all duplicates in order for a
    /// dupsort table), copied out; empty when the key is absent.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx fails.
    pub fn get_all(&self, table: &FoundTable, key: &[u8]) -> Result<Vec<Vec<u8>>> {
        let err = self.ins.err("read a key");
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

    /// Compares two stored keys in the table's own order (integer order for `integer_key`).
    pub fn compare_keys(&self, table: &FoundTable, a: &[u8], b: &[u8]) -> Ordering {
        self.txn.cmp_keys(table.dbi, a, b)
    }

    /// Calls `f` with each entry whose key lies within the inclusive bounds `from..=to` (in the
    /// table's order), first to last or last to first, until `f` returns `false`. Bounds are
    /// stored keys.
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when libmdbx fails.
    pub fn walk(
        &self,
        table: &FoundTable,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        reverse: bool,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        use engine::op;
        let err = self.ins.err("walk a table");
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

impl std::fmt::Debug for Snapshot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("id", &self.id()).finish()
    }
}
