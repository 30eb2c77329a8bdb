//! The startup path: the one transaction that opens, creates and verifies every table of a
//! schema before its [`Db`] is published.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crossbeam_queue::ArrayQueue;

use crate::engine::{self, Code, Dbi, Env, RawTxn};
use crate::error::{At, Error, MdbxCode, Result, fail};
use crate::files::open_env;
use crate::options::Options;
use crate::state::{Db, Shared};
use crate::table::Schema;

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
        let txn = env
            .begin(options.read_only)
            .map_err(|code| fail(code, At::env("begin the startup transaction"), &env, path))?;
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
        let meta = boot.txn().open_table(Some(META_TABLE), 0, false);
        boot.meta = meta.map_err(|c| boot.fail(c, At::table(META_TABLE, "open")))?;
        Ok(boot)
    }

    /// `code` from `at` as an [`Error`], in this environment ([`error::fail`]).
    fn fail(&self, code: Code, at: At<'_>) -> Error {
        fail(code, at, &self.env, &self.path)
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
            .map_err(|c| self.fail(c, At::table(name, "open")))?
        else {
            return Ok(None);
        };
        let txn = self.txn.as_ref().expect("live");
        let flags = txn
            .table_flags(dbi)
            .map_err(|c| self.fail(c, At::table(name, "read flags")))?
            & engine::TABLE_FLAG_MASK;
        let entries = txn
            .stat(dbi)
            .map_err(|c| self.fail(c, At::table(name, "stat")))?
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
            .map_err(|c| self.fail(c, At::table(name, "create")))?;
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
            .map_err(|c| self.fail(c, At::table(name, "drop")))?;
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
            .map_err(|c| self.fail(c, At::table(from, "rename")))
    }

    /// Empties a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn clear_table(&mut self, table: &'static str, dbi: u32) -> Result<()> {
        self.txn()
            .drop_table(dbi, false)
            .map_err(|c| self.fail(c, At::table(table, "clear")))
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
        let err = |c| self.fail(c, At::table(table, "read"));
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
            c => fail(
                c,
                At::table(table, "put").entry(key, value.len()),
                &self.env,
                &self.path,
            ),
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
            .map_err(|c| self.fail(c, At::table(table, "get")))
    }

    /// Deletes a key (all its values) from a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn delete_raw(&mut self, table: &'static str, dbi: u32, key: &[u8]) -> Result<bool> {
        self.txn()
            .del(dbi, key, None)
            .map_err(|c| self.fail(c, At::table(table, "delete")))
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
                .map_err(|c| self.fail(c, At::table(META_TABLE, "delete")))?;
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
        txn.commit()
            .map_err(|code| self.fail(code, At::commit(None, "commit a migration batch")))?;
        let txn = self
            .env
            .begin(self.read_only)
            .map_err(|code| self.fail(code, At::env("begin the next migration batch")))?;
        self.txn = Some(txn);
        // The meta table may have been created by the committed transaction.
        if self.meta.is_none() {
            self.meta = self
                .txn()
                .open_table(Some(META_TABLE), 0, false)
                .map_err(|c| self.fail(c, At::table(META_TABLE, "open")))?;
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
            .map_err(|c| self.fail(c, At::table(META_TABLE, "get")))
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
                    .map_err(|c| self.fail(c, At::table(META_TABLE, "create")))?
                    .expect("MDBX_CREATE returns a handle");
                self.meta = Some(m);
                m
            }
        };
        self.txn()
            .put(meta, key.as_bytes(), value, engine::put::UPSERT)
            .map_err(|c| self.fail(c, At::table(META_TABLE, "put")))
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
        txn.commit()
            .map_err(|code| self.fail(code, At::commit(None, "commit the startup transaction")))?;
        let info = self
            .env
            .info()
            .map_err(|code| self.fail(code, At::env("read environment info")))?;
        // Parked read txns each hold a reader slot: keep the pool well below the slot count so
        // other processes and fresh begins still find one.
        let parked = (info.max_readers as usize / 2).clamp(2, 256);
        let slots = engine::TxnSlots::new((parked / 2).min(64));
        let cursors = engine::CursorCache::new(slots.len());
        let pool = parked - slots.len();
        Ok(Db::publish(Shared {
            slots,
            cursors,
            pool: ArrayQueue::new(pool),
            dbis,
            names: S::TABLES.iter().map(|t| t.name).collect(),
            env: self.env,
            path: self.path,
            read_only: self.read_only,
            long_read_ms: self.long_read_ms,
            // libmdbx parks through the txn's reader slot; without a reader table (a
            // read-only open on read-only media: libmdbx reports `u32::MAX` readers) a
            // txn has none, so reset instead.
            reuse_snapshots: self.reuse_snapshots && info.max_readers != u32::MAX,
            map_was_full: AtomicBool::new(false),
        }))
    }
}
