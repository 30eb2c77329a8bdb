//! The startup path: the one transaction that opens, creates and verifies every table of a
//! schema before its [`Db`] is published ([`open`]), and the [`Bootstrap`] it runs in, which
//! migration steps ([`Upgrade`]) also use.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crossbeam_queue::ArrayQueue;

use std::time::Instant;

use crate::codec::DictionaryLease;
use crate::codec::ValueTrace;
use crate::codec::identity::{self, Structure};
use crate::db::state::{Db, Shared};
use crate::diagnose::fail;
use crate::engine::{self, Code, Dbi, Env, RawTxn};
use crate::error::{At, Error, MdbxCode, MismatchDetail, Result};
use crate::files::open_env;
use crate::options::Options;
#[cfg(feature = "compression")]
use crate::record::ZSTD_DICTIONARY_TABLE;
use crate::record::{RECORD_FORMAT, RecordProblem, SCHEMA_RECORD_KEY, SchemaRecord, TableRecord};
use crate::table::{Schema, TableFlags, TableInfo};

/// A table's handle in the startup transaction: valid for the [`Bootstrap`] that found or
/// created it (and, once the startup commits, in every later transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableHandle(pub(crate) Dbi);

/// What a bootstrap found for one table name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExistingTable {
    /// The handle.
    pub handle: TableHandle,
    /// libmdbx flag bits it was created with (only the bits Tabula compares).
    pub flags: u32,
    /// Number of entries.
    pub entries: u64,
}

/// The one transaction of the startup step: tables looked up, created, renamed, dropped,
/// rewritten and recorded by name, before any handle is published. [`open`] drives it; the
/// migration steps of `tabula-migrate` run in it through [`Upgrade`].
///
/// It owns a write transaction (a read transaction for read-only opens), which libmdbx requires
/// to end on the thread that began it, so it is neither `Send` nor `Sync`.
pub struct Bootstrap {
    txn: Option<RawTxn>,
    long_read_ms: u64,
    reuse_snapshots: bool,
    env: Env,
    path: PathBuf,
    read_only: bool,
    meta: Option<Dbi>,
    /// Keeps `Bootstrap` on the thread that began its transaction (`!Send`, `!Sync`).
    _stays_on_its_thread: PhantomData<*const ()>,
}

/// The reserved table holding Tabula's schema record and migration log.
pub const META_TABLE: &str = "__tabula_meta";

/// The prefix of the scratch tables migration steps rewrite tables into.
const SCRATCH_PREFIX: &str = "__tabula_tmp_";

fn scratch_name(table: &str) -> &'static str {
    // A handful per open at most; table names are `&'static` throughout (errors carry them).
    Box::leak(format!("{SCRATCH_PREFIX}{table}").into_boxed_str())
}

/// Refuses a reserved name (`__tabula…`) for a table reached by name.
fn not_reserved(name: &str) -> Result<()> {
    if crate::__private::is_reserved(name) {
        return Err(Error::InvalidTable {
            table: name.to_string(),
            rust_name: "",
            problem: format!(
                "names starting with `{}` are reserved for Tabula's own tables; give the \
                 table another name",
                crate::table::RESERVED_PREFIX
            ),
        });
    }
    Ok(())
}

impl Bootstrap {
    /// Opens the environment at `path`, sized for `schema_tables` tables, and begins the startup
    /// transaction.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOption`] for an option libmdbx would refuse; [`Error::BadFile`] when
    /// the path holds something of the wrong kind (a FIFO, device, socket or directory where
    /// the data or lock file belongs) or a data file too short to be a database;
    /// [`Error::Open`] with a hint when the path is not a database, is locked, or is not
    /// writable; [`Error::Io`] when the directory cannot be created.
    pub fn begin(path: &Path, options: &Options, schema_tables: usize) -> Result<Self> {
        Self::begin_with(path, options, schema_tables, 1)
    }

    /// [`begin`](Self::begin) with room for `own_tables` of Tabula's own tables (the meta
    /// table, and the zstd dictionary table for a schema with `ZstdDict` tables).
    fn begin_with(
        path: &Path,
        options: &Options,
        schema_tables: usize,
        own_tables: usize,
    ) -> Result<Self> {
        options.validate(schema_tables, own_tables)?;
        let cfg = options.env_config(schema_tables, own_tables);
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
            meta: None,
            _stays_on_its_thread: PhantomData,
        };
        let meta = boot.txn().open_table(Some(META_TABLE), 0, false);
        boot.meta = meta.map_err(|c| boot.fail(c, At::table(META_TABLE, "open")))?;
        Ok(boot)
    }

    /// `code` from `at` as an [`Error`], in this environment ([`diagnose::fail`]).
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
    /// [`Error::InvalidTable`] for a reserved name (`__tabula…`: Tabula's own tables are not
    /// reachable through a bootstrap); [`Error::Mdbx`] when libmdbx fails.
    pub fn find_table(&mut self, name: &'static str) -> Result<Option<ExistingTable>> {
        not_reserved(name)?;
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
    /// [`Error::InvalidTable`] for a reserved name; [`Error::Mdbx`] when libmdbx fails.
    pub fn find_schema_table(
        &mut self,
        name: &'static str,
        declared: crate::table::TableFlags,
    ) -> Result<Option<ExistingTable>> {
        not_reserved(name)?;
        self.find_table_as(name, Some(declared))
    }

    fn find_table_as(
        &mut self,
        name: &'static str,
        declared: Option<crate::table::TableFlags>,
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
            handle: TableHandle(dbi),
            flags,
            entries,
        }))
    }

    /// Creates a table with the given flags (it must not exist).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] for a reserved name; [`Error::Mdbx`] when libmdbx fails (e.g.
    /// `MDBX_DBS_FULL`).
    pub fn create_table(
        &mut self,
        name: &'static str,
        flags: crate::table::TableFlags,
    ) -> Result<TableHandle> {
        not_reserved(name)?;
        self.create_any(name, flags)
    }

    fn create_any(
        &mut self,
        name: &'static str,
        flags: crate::table::TableFlags,
    ) -> Result<TableHandle> {
        let bits = engine::table_flags(flags.dupsort, flags.integer_key);
        // Byte-keyed tables get the branchy comparator (see `find_schema_table`).
        let dbi = self
            .txn()
            .open_table_with(Some(name), bits, true, !flags.integer_key)
            .map_err(|c| self.fail(c, At::table(name, "create")))?;
        Ok(TableHandle(dbi.expect("MDBX_CREATE returns a handle")))
    }

    /// libmdbx flag bits for declared flags, as [`ExistingTable::flags`] reports them.
    pub fn flag_bits(flags: crate::table::TableFlags) -> u32 {
        engine::table_flags(flags.dupsort, flags.integer_key)
    }

    /// Deletes a table and its contents from the file. Allowed here because no handle has
    /// been published yet. Returns whether it existed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] for a reserved name; [`Error::Mdbx`] when libmdbx fails.
    pub fn drop_table(&mut self, name: &'static str) -> Result<bool> {
        not_reserved(name)?;
        self.drop_any(name)
    }

    fn drop_any(&mut self, name: &'static str) -> Result<bool> {
        let Some(t) = self.find_table_as(name, None)? else {
            return Ok(false);
        };
        self.txn()
            .drop_table(t.handle.0, true)
            .map_err(|c| self.fail(c, At::table(name, "drop")))?;
        Ok(true)
    }

    /// Renames table `from` to `to`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] when either name is reserved; [`Error::Mdbx`] when `from` is
    /// missing, `to` exists, or libmdbx fails.
    pub fn rename_table(&mut self, from: &'static str, to: &'static str) -> Result<()> {
        not_reserved(from)?;
        not_reserved(to)?;
        self.rename_any(from, to)
    }

    fn rename_any(&mut self, from: &'static str, to: &'static str) -> Result<()> {
        let t = self.find_table_as(from, None)?.ok_or(Error::Mdbx {
            table: from,
            op: "rename (the table does not exist)",
            key: None,
            code: MdbxCode(Code::NOTFOUND.0),
        })?;
        self.txn()
            .rename_table(t.handle.0, to)
            .map_err(|c| self.fail(c, At::table(from, "rename")))
    }

    /// The scratch table a migration step rewrites `table` into (`__tabula_tmp_<table>`, the
    /// one reserved name a bootstrap hands out), created with `flags` when missing and emptied
    /// when `fresh`. Returns its name and handle; [`replace_with_scratch`](Self::replace_with_scratch)
    /// puts it in `table`'s place.
    ///
    /// ```
    /// use tabula::{Options, TableFlags};
    /// use tabula_core::startup::Bootstrap;
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let old = boot.create_table("notes", TableFlags::NONE)?;
    /// boot.put_raw("notes", old, b"k", b"old", false)?;
    /// let (name, new) = boot.scratch_table("notes", TableFlags::NONE, true)?;
    /// assert_eq!(name, "__tabula_tmp_notes");
    /// boot.put_raw(name, new, b"k", b"new", false)?;
    /// boot.replace_with_scratch("notes")?;
    /// let notes = boot.find_table("notes")?.expect("the scratch table took its place");
    /// assert_eq!(boot.get_raw("notes", notes.handle, b"k")?, Some(b"new".to_vec()));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] when `table` is reserved; [`Error::Mdbx`] when libmdbx fails.
    pub fn scratch_table(
        &mut self,
        table: &'static str,
        flags: crate::table::TableFlags,
        fresh: bool,
    ) -> Result<(&'static str, TableHandle)> {
        not_reserved(table)?;
        let name = scratch_name(table);
        let handle = match self.find_table_as(name, None)? {
            Some(t) if fresh => {
                self.clear_table(name, t.handle)?;
                t.handle
            }
            Some(t) => t.handle,
            None => self.create_any(name, flags)?,
        };
        Ok((name, handle))
    }

    /// Replaces `table` (dropped with its contents) by its scratch table
    /// ([`scratch_table`](Self::scratch_table)), which takes its name.
    ///
    /// ```
    /// use tabula::{Options, TableFlags};
    /// use tabula_core::startup::Bootstrap;
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// boot.create_table("notes", TableFlags::NONE)?;
    /// // Without a scratch table there is nothing to put in its place.
    /// assert!(boot.replace_with_scratch("notes").is_err());
    /// boot.scratch_table("notes", TableFlags { dupsort: true, integer_key: false }, true)?;
    /// boot.replace_with_scratch("notes")?;
    /// let notes = boot.find_table("notes")?.expect("renamed");
    /// assert_eq!(notes.flags, Bootstrap::flag_bits(TableFlags { dupsort: true, integer_key: false }));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] when `table` is reserved; [`Error::Mdbx`] when there is no scratch
    /// table or libmdbx fails.
    pub fn replace_with_scratch(&mut self, table: &'static str) -> Result<()> {
        not_reserved(table)?;
        self.drop_any(table)?;
        self.rename_any(scratch_name(table), table)
    }

    /// Empties a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn clear_table(&mut self, table: &'static str, handle: TableHandle) -> Result<()> {
        self.txn()
            .drop_table(handle.0, false)
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
        handle: TableHandle,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let txn = self.txn.as_ref().expect("live");
        let err = |c| self.fail(c, At::table(table, "read"));
        let mut cur = txn.cursor(handle.0).map_err(err)?;
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
        handle: TableHandle,
        key: &[u8],
        value: &[u8],
        append: bool,
    ) -> Result<()> {
        let flags = if append {
            engine::put::APPEND
        } else {
            engine::put::UPSERT
        };
        self.txn()
            .put(handle.0, key, value, flags)
            .map_err(|c| match c {
                c if c == Code::EKEYMISMATCH => Error::AppendOutOfOrder {
                    table,
                    key: crate::error::KeyHex::new(key),
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
        handle: TableHandle,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        let txn = self.txn.as_ref().expect("live");
        txn.get(handle.0, key)
            .map(|v| v.map(<[u8]>::to_vec))
            .map_err(|c| self.fail(c, At::table(table, "get")))
    }

    /// Deletes a key (all its values) from a table.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn delete_raw(
        &mut self,
        table: &'static str,
        handle: TableHandle,
        key: &[u8],
    ) -> Result<bool> {
        self.txn()
            .del(handle.0, key, None)
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

    /// Reads the schema record; `None` for a database nothing has been recorded in.
    ///
    /// # Errors
    ///
    /// [`Error::SchemaRecord`] when the record does not parse or was written by a newer
    /// Tabula; [`Error::Mdbx`] when libmdbx fails.
    pub fn read_record(&mut self) -> Result<Option<SchemaRecord>> {
        let Some(bytes) = self.meta_get(SCHEMA_RECORD_KEY)? else {
            return Ok(None);
        };
        parse_record(&bytes, &self.path).map(Some)
    }

    /// Writes the schema record (in the format [`SchemaRecord::settle_format`] picks).
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails (or the open is read-only).
    pub fn write_record(&mut self, record: &mut SchemaRecord) -> Result<()> {
        let bytes = record.encode();
        self.meta_put(SCHEMA_RECORD_KEY, &bytes)
    }

    /// The zstd dictionaries this database stores for [`ZstdDict`](crate::codec::ZstdDict)
    /// tables (in the reserved table [`ZSTD_DICTIONARY_TABLE`]): every one trained, and each
    /// name's current one.
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tempfile::tempdir().unwrap();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// assert_eq!(boot.zstd_dictionaries()?.current("receipts"), None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ZstdDictionary`] when the table is damaged; [`Error::Mdbx`] when libmdbx fails.
    #[cfg(feature = "compression")]
    pub fn zstd_dictionaries(&mut self) -> Result<crate::codec::StoredDictionaries> {
        let Some(table) = self.find_table_as(ZSTD_DICTIONARY_TABLE, Some(TableFlags::default()))?
        else {
            return Ok(crate::codec::StoredDictionaries::default());
        };
        let mut entries = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        loop {
            let batch =
                self.read_batch(ZSTD_DICTIONARY_TABLE, table.handle, after.as_deref(), 64)?;
            let Some((last, _)) = batch.last() else {
                break;
            };
            after = Some(last.clone());
            entries.extend(batch);
        }
        crate::codec::StoredDictionaries::parse(&entries).map_err(|problem| Error::ZstdDictionary {
            path: self.path.clone(),
            message: format!(
                "the `{ZSTD_DICTIONARY_TABLE}` table is unusable: {problem}; restore the \
                     database from a backup"
            ),
        })
    }

    /// Stores `dictionary`, trained for the dictionary name `name` (e.g. with
    /// [`train_zstd_dictionary`](crate::codec::train_zstd_dictionary)), and makes it the
    /// current one of `name`; returns its ID. Dictionaries stored before stay, so values
    /// written with them keep decoding. The registry of the process sees it when the database
    /// is next published (the startup path loads the dictionaries after the migration steps).
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tempfile::tempdir().unwrap();
    /// let samples: Vec<Vec<u8>> = (0..1000)
    ///     .map(|i| format!("{{\"id\":{i},\"status\":\"settled\"}}").into_bytes())
    ///     .collect();
    /// let dictionary = tabula_core::codec::train_zstd_dictionary(&samples, 2048)?;
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let id = boot.add_zstd_dictionary("receipts", &dictionary)?;
    /// assert_eq!(boot.zstd_dictionaries()?.current("receipts"), Some(id));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ZstdDictionary`] for a name that is not 1–64 ASCII letters, digits, `_`, `-`
    /// or `.`, bytes that are not a trained zstd dictionary, or an ID the database already
    /// stores for another dictionary (train again); [`Error::Mdbx`] when libmdbx fails (or the
    /// open is read-only).
    #[cfg(feature = "compression")]
    pub fn add_zstd_dictionary(&mut self, name: &str, dictionary: &[u8]) -> Result<u32> {
        let path = self.path.clone();
        let bad = |message: String| Error::ZstdDictionary {
            path: path.clone(),
            message,
        };
        crate::codec::check_dictionary_name(name).map_err(bad)?;
        let Some(id) = crate::codec::dictionary_id(dictionary) else {
            return Err(bad(format!(
                "the dictionary given for `{name}` ({} bytes) is not a trained zstd dictionary \
                 (it carries no dictionary ID); train it with `train_zstd_dictionary`",
                dictionary.len()
            )));
        };
        let stored = self.zstd_dictionaries()?;
        if let Some(other) = stored.name_of(id)
            && (other != name || stored.bytes(id) != Some(dictionary))
        {
            return Err(bad(format!(
                "the new dictionary for `{name}` has ID {id}, which the database already \
                 stores for another dictionary (of `{other}`); train again with other samples \
                 or another size"
            )));
        }
        let flags = TableFlags::default();
        let handle = match self.find_table_as(ZSTD_DICTIONARY_TABLE, Some(flags))? {
            Some(table) => table.handle,
            None => self.create_any(ZSTD_DICTIONARY_TABLE, flags)?,
        };
        let key = crate::codec::dictionary_key(name, id);
        self.put_raw(ZSTD_DICTIONARY_TABLE, handle, &key, dictionary, false)?;
        let key = crate::codec::dictionary_current_key(name);
        self.put_raw(
            ZSTD_DICTIONARY_TABLE,
            handle,
            &key,
            &id.to_be_bytes(),
            false,
        )?;
        tracing::info!(
            name,
            id,
            bytes = dictionary.len(),
            "stored a zstd dictionary"
        );
        Ok(id)
    }

    /// Loads this database's zstd dictionaries into the process-wide registry for the
    /// dictionary names of the schema's tables (`names`; the current ones only for a
    /// read-write open, which may encode).
    fn lease_dictionaries(&mut self, names: &[&'static str]) -> Result<DictionaryLease> {
        #[cfg(feature = "compression")]
        {
            let stored = self.zstd_dictionaries()?;
            let names = if self.read_only { &[][..] } else { names };
            crate::codec::lease_dictionaries(&stored, names, &self.path).map_err(|message| {
                Error::ZstdDictionary {
                    path: self.path.clone(),
                    message,
                }
            })
        }
        #[cfg(not(feature = "compression"))]
        {
            let _ = names;
            Ok(DictionaryLease::default())
        }
    }

    /// Commits the startup transaction and publishes the database with `handles` (the schema's
    /// tables in ID order).
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the commit fails; nothing is published then.
    fn publish<S: Schema>(
        mut self,
        handles: Vec<TableHandle>,
        dictionaries: DictionaryLease,
    ) -> Result<Db<S>> {
        debug_assert_eq!(handles.len(), S::TABLES.len());
        let dbis: Box<[Dbi]> = handles.into_iter().map(|h| h.0).collect();
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
        // libmdbx parks through the txn's reader slot; without a reader table (a read-only
        // open on read-only media: libmdbx reports `u32::MAX` readers) a txn has none, so
        // reset instead.
        let reuse_snapshots = self.reuse_snapshots && info.max_readers != u32::MAX;
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
            long_read_ns: self.long_read_ms.saturating_mul(1_000_000),
            read_clock: self.long_read_ms != u64::MAX || cfg!(feature = "metrics"),
            reuse_snapshots,
            parking: AtomicBool::new(reuse_snapshots),
            _dictionaries: dictionaries,
        }))
    }
}

/// Parses stored schema-record bytes of the database at `path`.
pub(crate) fn parse_record(bytes: &[u8], path: &Path) -> Result<SchemaRecord> {
    SchemaRecord::parse(bytes).map_err(|problem| Error::SchemaRecord {
        path: path.to_path_buf(),
        message: match problem {
            RecordProblem::Damaged(e) => {
                format!("it does not parse ({e}); the `{META_TABLE}` table may be damaged")
            }
            RecordProblem::Newer(format) => format!(
                "it has format {format} but this Tabula reads format {RECORD_FORMAT} at most: \
                 the database was written by a newer Tabula; upgrade the application"
            ),
        },
    })
}

/// What the startup path runs before it verifies the schema's tables: the migration steps of
/// `tabula-migrate` (`Migrations` implements it). [`open`] calls [`upgrade`](Upgrade::upgrade)
/// once, in the startup transaction, with the stored schema record.
pub trait Upgrade {
    /// The schema version the code is at: a new database is recorded at it, and the advice for
    /// a changed table names the step after it.
    fn version(&self) -> u32;

    /// Brings the database from `record` (stored: `stored` is `true`; a new database: `false`)
    /// up to [`version`](Upgrade::version), updating `record`, and returns the steps applied
    /// (version, name). Runs before any table of the schema is opened; may commit in batches
    /// with [`Bootstrap::checkpoint`].
    ///
    /// # Errors
    ///
    /// Whatever refuses the open: the database is newer than the code, its history differs
    /// from the code's steps, a step fails. The startup then publishes nothing.
    fn upgrade(
        &self,
        boot: &mut Bootstrap,
        record: &mut SchemaRecord,
        stored: bool,
    ) -> Result<Vec<(u32, &'static str)>>;
}

/// What the startup step did, for logs and tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Tables created by this open.
    pub created: Vec<&'static str>,
    /// Tables that existed and matched their declaration.
    pub verified: Vec<&'static str>,
    /// Migration steps applied by this open: version and name.
    pub applied: Vec<(u32, &'static str)>,
    /// The schema version the database is at now.
    pub version: u32,
    /// Whether the schema record was (re)written.
    pub record_written: bool,
}

/// The startup path: opens the database at `path` with schema `S`, runs `upgrade` (the pending
/// migration steps), then opens every table of `S` in ID order (`S::TABLES[id]` is the table
/// whose `Contains::ID` is `id`: `#[derive(Schema)]` numbers them by position), creating the
/// missing ones (read-write) and checking the stored flags, key encoding and values of the
/// others against their declarations ([`check_record`]), records the schema, commits, and only
/// then publishes the `Db` with its handle array filled. Nothing opens a table after this.
///
/// Before the file is opened, every declaration is checked ([`declare`]): names, and the value
/// types' structures, traced here.
///
/// # Errors
///
/// Those of [`Bootstrap::begin`]; [`Error::InvalidTable`] for a declaration that cannot be
/// used; [`Error::SchemaMismatch`] naming the table, what is stored and what is declared;
/// [`Error::TableMissing`] when a read-only open lacks a declared table;
/// [`Error::SchemaRecord`]; whatever `upgrade` refuses. Nothing is published then, and nothing
/// is written but what `upgrade` committed.
pub fn open<S: Schema>(
    path: &Path,
    options: &Options,
    upgrade: &dyn Upgrade,
) -> Result<(Db<S>, Report)> {
    let started = Instant::now();
    let traces = declare_traces(S::TABLES)?;
    let traced_us = started.elapsed().as_micros() as u64;
    // A schema with `ZstdDict` tables also opens the dictionary table: room for it.
    let dictionary_names = dictionary_names(S::TABLES);
    let own_tables = 1 + usize::from(!dictionary_names.is_empty());
    let mut boot = Bootstrap::begin_with(path, options, S::TABLES.len(), own_tables)?;
    let stored = boot.read_record()?;
    let mut record = stored.clone().unwrap_or_else(SchemaRecord::empty);
    // Loaded before the migration steps (which may decode and encode such values), and again
    // after them when they ran (a step may have trained a dictionary). A schema without
    // `ZstdDict` tables loads them only when the record has some (a step may be moving a
    // table off `ZstdDict`), in the room `extra_tables` leaves.
    let uses_dictionaries = !dictionary_names.is_empty()
        || record
            .tables
            .values()
            .any(|t| t.value.starts_with("zstd_dict("));
    let mut dictionaries = if uses_dictionaries {
        boot.lease_dictionaries(&dictionary_names)?
    } else {
        DictionaryLease::default()
    };
    let mut report = Report {
        applied: upgrade.upgrade(&mut boot, &mut record, stored.is_some())?,
        ..Report::default()
    };
    if uses_dictionaries && !report.applied.is_empty() {
        drop(dictionaries);
        dictionaries = boot.lease_dictionaries(&dictionary_names)?;
    }
    let next_version = record.version.max(upgrade.version()) + 1;
    // Every table's handle first, in one pass that allocates nothing of Tabula's between
    // libmdbx's handle opens: libmdbx copies each name into its own small allocation and
    // compares the name being opened with every open handle's name, so at 10,000 tables that
    // scan is most of the open, and it runs faster over names allocated next to each other
    // than over names scattered between the schema records a mixed loop frees and allocates.
    // The checks follow in table order; a table that could not be opened or created (`stop`)
    // is reported after the checks of the tables before it, as a single pass would.
    let mut found: Vec<Found> = Vec::with_capacity(S::TABLES.len());
    let mut stop = None;
    for info in S::TABLES {
        let opened = match boot.find_schema_table(info.name, info.flags) {
            Ok(Some(existing)) => Ok(Found::Existing(existing)),
            Ok(None) if boot.is_read_only() => Err(Error::TableMissing {
                table: info.name.to_string(),
                path: path.to_path_buf(),
            }),
            Ok(None) => boot.create_table(info.name, info.flags).map(Found::Created),
            Err(e) => Err(e),
        };
        match opened {
            Ok(f) => found.push(f),
            Err(e) => {
                stop = Some(e);
                break;
            }
        }
    }
    let mut handles = Vec::with_capacity(found.len());
    for ((info, trace), found) in S::TABLES.iter().zip(&traces).zip(found) {
        // One lookup per table: the record it is checked against is the one updated below.
        let recorded = record.tables.get_mut(info.name);
        // A record holding exactly what is declared (every open after the first, until the
        // declaration changes) passes every comparison of `check_dup_encoding` and
        // `check_record`; it is recognised field by field without building the declared
        // record. Any other record is compared with the declared one, built here.
        let declared = match recorded.as_deref() {
            Some(old) if old.is_traced(info, trace) => None,
            _ => Some(TableRecord::traced(info, trace)),
        };
        let handle = match found {
            Found::Existing(existing) => {
                check_flags(info, &existing, next_version)?;
                if let (Some(old), Some(declared)) = (recorded.as_deref(), &declared) {
                    check_dup_encoding(info, old, declared, next_version)?;
                    check_record(info, old, declared, next_version)?;
                }
                tracing::debug!(
                    table = info.name,
                    entries = existing.entries,
                    "verified table"
                );
                report.verified.push(info.name);
                existing.handle
            }
            Found::Created(handle) => {
                tracing::info!(table = info.name, flags = %info.flags, "created table");
                report.created.push(info.name);
                handle
            }
        };
        handles.push(handle);
        // In place: a table recorded as declared allocates no new name and frees no record.
        match (recorded, declared) {
            (_, None) => {}
            (Some(recorded), Some(declared)) => *recorded = declared,
            (None, Some(declared)) => {
                record.tables.insert(info.name.to_string(), declared);
            }
        }
    }
    if let Some(e) = stop {
        return Err(e);
    }
    report.version = record.version;
    record.settle_format();
    if !boot.is_read_only() && stored.as_ref() != Some(&record) {
        boot.write_record(&mut record)?;
        report.record_written = true;
    }
    let db = boot.publish::<S>(handles, dictionaries)?;
    tracing::info!(
        path = %path.display(),
        tables = S::TABLES.len(),
        created = report.created.len(),
        verified = report.verified.len(),
        migrations = report.applied.len(),
        version = report.version,
        traced_us,
        elapsed_us = started.elapsed().as_micros() as u64,
        "opened database"
    );
    Ok((db, report))
}

/// A schema table as the startup step's first pass left it.
enum Found {
    /// It existed: to be checked against its declaration.
    Existing(ExistingTable),
    /// It was missing and has been created.
    Created(TableHandle),
}

/// The zstd dictionary names the tables' codecs use ([`ZstdDict`](crate::codec::ZstdDict)),
/// each once.
fn dictionary_names(tables: &[TableInfo]) -> Vec<&'static str> {
    #[cfg(feature = "compression")]
    {
        let mut names: Vec<&'static str> = tables
            .iter()
            .filter_map(|t| crate::codec::dictionary_name(&t.value))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }
    #[cfg(not(feature = "compression"))]
    {
        let _ = tables;
        Vec::new()
    }
}

/// Checks the declarations of a schema's tables before anything is opened, and returns what the
/// schema record will hold for each (value types traced, [`TableRecord::traced`]).
///
/// The derives refuse these mistakes at compile time; this catches them whatever implemented
/// [`Table`](crate::Table) or [`Schema`]: an empty or reserved (`__tabula…`) name, a name used
/// twice, and a value type whose structure cannot be traced to the end without a stated
/// `value_version` (Tabula could not see it change).
///
/// ```
/// use tabula::{Schema, Table};
///
/// #[derive(Table)]
/// #[table(name = "notes", key = u64, value = String)]
/// struct Notes;
/// #[derive(Schema)]
/// struct App(Notes);
///
/// let records = tabula_core::startup::declare(App::TABLES)?;
/// assert_eq!(records[0].key, "u64");
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidTable`] naming the table, its struct and what to do.
pub fn declare(tables: &[TableInfo]) -> Result<Vec<TableRecord>> {
    let traces = declare_traces(tables)?;
    Ok(tables
        .iter()
        .zip(&traces)
        .map(|(info, trace)| TableRecord::traced(info, trace))
        .collect())
}

/// [`declare`]'s checks, returning each table's value trace (the part of its record that costs
/// a trace to know); the startup step builds a table's record from it only when the stored one
/// differs ([`TableRecord::is_traced`]).
fn declare_traces(tables: &[TableInfo]) -> Result<Vec<ValueTrace>> {
    let mut traces = Vec::with_capacity(tables.len());
    // Names seen so far, with their table's position: one lookup per table (a scan of the
    // earlier tables made a schema of 10,000 tables cost 50 million comparisons).
    let mut seen: std::collections::HashMap<&str, usize, NameHash> =
        std::collections::HashMap::with_capacity_and_hasher(tables.len(), NameHash::default());
    for (at, info) in tables.iter().enumerate() {
        let invalid = |problem: String| {
            Err(Error::InvalidTable {
                table: info.name.to_string(),
                rust_name: info.rust_name,
                problem,
            })
        };
        if info.name.is_empty() {
            return invalid("a table name cannot be empty".to_string());
        }
        if info.name.contains('\0') {
            return invalid("a table name cannot contain a NUL byte".to_string());
        }
        not_reserved(info.name).map_err(|e| match e {
            Error::InvalidTable { table, problem, .. } => Error::InvalidTable {
                table,
                rust_name: info.rust_name,
                problem,
            },
            e => e,
        })?;
        #[cfg(feature = "compression")]
        if let Some(name) = crate::codec::dictionary_name(&info.value)
            && let Err(problem) = crate::codec::check_dictionary_name(name)
        {
            return invalid(problem);
        }
        if let Some(&first) = seen.get(info.name) {
            let first = &tables[first];
            return invalid(format!(
                "the schema lists another table with this name{}; table names must be unique",
                match first.rust_name {
                    "" => String::new(),
                    rust => format!(" (`{rust}`)"),
                }
            ));
        }
        seen.insert(info.name, at);
        let trace = (info.value_trace)();
        if let ValueTrace::Partial { problem, .. } = &trace
            && info.value_version.is_none()
        {
            return invalid(format!(
                "its value type `{}` cannot be traced to the end ({problem}), so Tabula cannot \
                 see when a release changes it: state the version of its values with \
                 `#[table(.., value_version = 1)]` and raise it, with a migration step that \
                 converts the values, whenever the type changes",
                info.value_type
            ));
        }
        traces.push(trace);
    }
    Ok(traces)
}

/// The hasher of [`declare`]'s name set: FNV-1a. The names are the schema's own constants,
/// not input an attacker picks, so the std hasher's flood resistance buys nothing here, and its
/// SipHash cost a fifth of `declare`.
type NameHash = std::hash::BuildHasherDefault<Fnv>;

/// 64-bit FNV-1a.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Refuses a table whose stored flags differ from its declaration.
fn check_flags(info: &TableInfo, existing: &ExistingTable, next_version: u32) -> Result<()> {
    if existing.flags == Bootstrap::flag_bits(info.flags) {
        return Ok(());
    }
    Err(Error::SchemaMismatch {
        table: info.name.to_string(),
        what: "flags",
        stored: describe_flag_bits(existing.flags),
        declared: info.flags.to_string(),
        detail: MismatchDetail::new(info.rust_name, Vec::new()),
        advice: if existing.entries == 0 {
            format!(
                "the table is empty: add a migration step that drops it (the startup step then \
                 creates it with the new flags): `.step({next_version}, \"recreate-{0}\", |m| \
                 m.drop_table(\"{0}\"))`",
                info.name
            )
        } else {
            format!(
                "changing flags needs a migration step that rewrites the table into the new \
                 flags, e.g. `.step({next_version}, \"{0}-flags\", |m| m.transform::<{1}, {2}>(\
                 |old| old))`, or restore the previous flags",
                info.name,
                info.rust_ident(),
                old_value_name(info, None)
            )
        },
    })
}

/// A name for the previous value type in advice: `Old` and the value type's name when it is a
/// plain path (`Old<last segment>`), else `OldValue`.
fn old_value_name(info: &TableInfo, stored: Option<&Structure>) -> String {
    let declared = info.value_type.rsplit("::").next().unwrap_or_default();
    let plain = !declared.is_empty() && declared.chars().all(|c| c.is_alphanumeric() || c == '_');
    match stored.and_then(Structure::name) {
        Some(name) if !name.contains('#') => format!("Old{name}"),
        _ if plain => format!("Old{declared}"),
        _ => "OldValue".to_string(),
    }
}

/// The codec part of a recorded value descriptor (`bincode` of `bincode<Header>`), given the
/// codec declared now (a custom codec's name may itself hold `<`).
fn stored_codec<'a>(stored: &'a str, declared_codec: &str) -> &'a str {
    match stored.strip_prefix(declared_codec) {
        Some(rest) if rest.starts_with('<') && rest.ends_with('>') => {
            &stored[..declared_codec.len()]
        }
        _ => stored.split('<').next().unwrap_or(stored),
    }
}

/// A recorded codec without its compression: `bincode` of `zstd(bincode)` and of
/// `zstd_dict(receipts,bincode)`.
fn zstd_of(codec: &str) -> &str {
    if let Some(inner) = codec
        .strip_prefix("zstd(")
        .and_then(|inner| inner.strip_suffix(')'))
    {
        return inner;
    }
    zstd_dict_of(codec).map_or(codec, |(_, inner)| inner)
}

/// The dictionary name and inner codec of a recorded `zstd_dict(<name>,<inner>)`.
fn zstd_dict_of(codec: &str) -> Option<(&str, &str)> {
    codec
        .strip_prefix("zstd_dict(")
        .and_then(|inner| inner.strip_suffix(')'))
        .and_then(|inner| inner.split_once(','))
}

/// How a recorded codec is spelled in Rust, for advice: `zstd(bincode)` with values `V` is
/// `tabula::Zstd<tabula::Bincode<V>>`; `None` for a custom codec.
fn codec_type(codec: &str, value_type: &str) -> Option<String> {
    if let Some(inner) = codec
        .strip_prefix("zstd(")
        .and_then(|inner| inner.strip_suffix(')'))
    {
        return Some(format!("tabula::Zstd<{}>", codec_type(inner, value_type)?));
    }
    if let Some((_, inner)) = zstd_dict_of(codec) {
        // `OldDictionary`: the `ZstdDictionary` type of the recorded name.
        return Some(format!(
            "tabula::ZstdDict<{}, OldDictionary>",
            codec_type(inner, value_type)?
        ));
    }
    match codec {
        "bincode" => Some(format!("tabula::Bincode<{value_type}>")),
        "raw" => Some("tabula::Raw".to_string()),
        _ if codec.starts_with("pod(") => Some(format!("tabula::Pod<{value_type}>")),
        _ => None,
    }
}

/// A key descriptor without the names of `#[derive(Key)]` structs (`SlotKey { a: u64 }` →
/// `{ a: u64 }`): renaming a key struct changes nothing stored.
fn key_structure(descriptor: &str) -> String {
    let mut out = String::with_capacity(descriptor.len());
    let mut word = String::new();
    let mut chars = descriptor.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        let names_a_struct = c == ' ' && chars.peek() == Some(&'{');
        if !names_a_struct {
            out.push_str(&word);
        }
        word.clear();
        out.push(c);
    }
    out.push_str(&word);
    out
}

/// The structure a record holds for its values: the complete shape, or what a partial trace
/// saw. `None` when it holds neither (a codec without structure, or a record from a Tabula that
/// could not trace the type); `Err` when it holds one that cannot be read.
fn recorded_structure(record: &TableRecord) -> std::result::Result<Option<Structure>, String> {
    match (&record.shape, &record.partial_shape) {
        (Some(shape), _) => Structure::of_shape(shape).map(Some),
        (None, Some(partial)) => Structure::of_partial(partial).map(Some),
        (None, None) => Ok(None),
    }
}

/// Refuses a table whose recorded key encoding or values differ from its declaration; the
/// advice names the table struct and the migration step to add (at `next_version`).
///
/// What is compared, in order:
///
/// 1. the key encoding, without the names of `#[derive(Key)]` structs;
/// 2. the value codec (`bincode`, `raw`, `custom <name>`);
/// 3. the value version (`#[table(value_version = N)]`; not stated counts as 1);
/// 4. the value type's structure ([`Value::trace`](crate::Value::trace)): serde's data model
///    with field and variant names, without type names — so a value type moved, renamed,
///    imported differently or aliased is the same type when its structure is. Parts a partial
///    trace did not reach agree with anything.
///
/// A record written by a Tabula from before complete tracing may hold no structure for a type
/// that release could not trace (an enum reached only through a `Vec`, `Option` or map). It is
/// trusted as that release trusted it: the value type must be spelled as recorded (then this
/// open records the structure, and later opens compare structures); a different spelling cannot
/// be checked and is refused, with the way out in the advice.
///
/// # Errors
///
/// [`Error::SchemaMismatch`].
pub fn check_record(
    info: &TableInfo,
    stored: &TableRecord,
    declared: &TableRecord,
    next_version: u32,
) -> Result<()> {
    // The common case, checked without allocating: the same key encoding, a value descriptor
    // recorded as the declared codec followed by `<type>`, the same value version, and the
    // same shape text (or no structure on either side, as for `Raw` values). The comparisons
    // below accept exactly these too; everything else takes them, in their order.
    if stored.key == declared.key
        && info
            .value
            .strip_from(&stored.value)
            .is_some_and(|rest| rest.starts_with('<') && rest.ends_with('>'))
        && stored.value_version.unwrap_or(1) == declared.value_version.unwrap_or(1)
        && stored.shape == declared.shape
        && (stored.shape.is_some()
            || (stored.partial_shape.is_none() && declared.partial_shape.is_none()))
    {
        return Ok(());
    }
    let ident = info.rust_ident();
    let mismatch = |what: &'static str,
                    stored: String,
                    declared: String,
                    changes: Vec<String>,
                    advice: String| {
        Err(Error::SchemaMismatch {
            table: info.name.to_string(),
            what,
            stored,
            declared,
            advice,
            detail: MismatchDetail::new(info.rust_name, changes),
        })
    };
    let step = |op: String| {
        format!(
            "`.step({next_version}, \"{0}-v{next_version}\", |m| {op})`",
            info.name
        )
    };
    let transform = |old: &str| {
        format!(
            "add a migration step that converts the stored values: keep the previous value \
             type as `{old}` and add {} to the `Migrations` you open with, or restore the \
             previous declaration",
            step(format!("m.transform::<{ident}, {old}>(|old| ...)"))
        )
    };

    if stored.key != declared.key && key_structure(&stored.key) != key_structure(&declared.key) {
        return mismatch(
            "key encoding",
            stored.key.clone(),
            declared.key.clone(),
            Vec::new(),
            format!(
                "add a migration step that re-keys the table: keep the previous key type as \
                 `OldKey` and add {} to the `Migrations` you open with, or restore the previous \
                 key type",
                step(format!("m.rekey::<{ident}, OldKey>(|old| ...)"))
            ),
        );
    }

    let codec = info.value.to_string();
    let old_codec = stored_codec(&stored.value, &codec);
    if old_codec != codec {
        let value_type = info.value_type;
        let op = if zstd_of(old_codec) == zstd_of(&codec) {
            // Only the compression differs: the values are the same, re-encoded.
            match old_codec {
                "bincode" => format!("m.transform::<{ident}, {value_type}>(|value| value)"),
                _ => match codec_type(old_codec, value_type) {
                    Some(old) => format!("m.transform_with::<{ident}, {old}>(|value| value)"),
                    None => format!("m.transform_with::<{ident}, OldCodec>(|value| value)"),
                },
            }
        } else {
            match old_codec {
                "bincode" => format!(
                    "m.transform::<{ident}, {}>(|old| ...)",
                    old_value_name(info, None)
                ),
                "raw" => format!("m.transform_with::<{ident}, tabula::Raw>(|bytes| ...)"),
                _ => match codec_type(old_codec, &old_value_name(info, None)) {
                    Some(old) => format!("m.transform_with::<{ident}, {old}>(|old| ...)"),
                    None => format!("m.transform_with::<{ident}, OldCodec>(|old| ...)"),
                },
            }
        };
        return mismatch(
            "value encoding",
            stored.value.clone(),
            declared.value.clone(),
            Vec::new(),
            format!(
                "add a migration step that re-encodes the stored values: {} (with the previous \
                 codec), or restore the previous codec",
                step(op)
            ),
        );
    }

    let (old_version, new_version) = (
        stored.value_version.unwrap_or(1),
        declared.value_version.unwrap_or(1),
    );
    if old_version != new_version {
        return mismatch(
            "value version",
            old_version.to_string(),
            new_version.to_string(),
            Vec::new(),
            transform(&old_value_name(info, None)),
        );
    }

    // The common case, and the only one that costs nothing: the same shape text.
    if stored.shape.is_some() && stored.shape == declared.shape {
        return Ok(());
    }
    let (old, new) = match (recorded_structure(stored), recorded_structure(declared)) {
        (Ok(old), Ok(new)) => (old, new),
        // A structure too large to compare (or unreadable): the recorded text must match.
        _ if stored.shape == declared.shape && stored.partial_shape == declared.partial_shape => {
            return Ok(());
        }
        (Err(problem), _) | (_, Err(problem)) => {
            return mismatch(
                "value structure",
                stored.value.clone(),
                declared.value.clone(),
                vec![problem],
                transform(&old_value_name(info, None)),
            );
        }
    };
    match (old, new) {
        (Some(old), Some(new)) => {
            if identity::same(&old, &new) {
                if stored.value != declared.value {
                    tracing::info!(
                        table = info.name,
                        stored = %stored.value,
                        declared = %declared.value,
                        "value type spelled differently, same structure"
                    );
                }
                return Ok(());
            }
            let (changes, was, now) = identity::differences(&old, &new, 8, 200);
            mismatch(
                "value structure",
                was,
                now,
                changes,
                transform(&old_value_name(info, Some(&old))),
            )
        }
        // A record from a Tabula that could not trace the type: trusted by its spelling.
        (None, Some(_)) if stored.value != declared.value => {
            let spelled = |v: &str| {
                v.strip_prefix(old_codec)
                    .and_then(|t| t.strip_prefix('<'))
                    .and_then(|t| t.strip_suffix('>'))
                    .unwrap_or(v)
                    .to_string()
            };
            let (was, now) = (spelled(&stored.value), spelled(&declared.value));
            mismatch(
                "value type",
                stored.value.clone(),
                declared.value.clone(),
                Vec::new(),
                format!(
                    "the schema record was written by a Tabula that could not trace this value \
                     type, so it holds no structure to compare and the new spelling cannot be \
                     checked: if `{now}` is the same type as `{was}`, open the database once \
                     with the previous declaration `value = {was}` (this Tabula then records \
                     the structure, and a later open compares structures, not spellings); \
                     otherwise {}",
                    transform(&old_value_name(info, None))
                ),
            )
        }
        _ => Ok(()),
    }
}

/// Refuses a `dupsort` table whose values were stored with bincode (by Tabula 0.1.0, before
/// dup values were stored in an order-preserving encoding) when the declaration stores them
/// ordered: libmdbx keeps them in bincode's byte order, so reading them as ordered values
/// would give wrong seeks and appends. The advice names the migration step that re-encodes it.
fn check_dup_encoding(
    info: &TableInfo,
    stored: &TableRecord,
    declared: &TableRecord,
    next_version: u32,
) -> Result<()> {
    let ordered = |value: &str| value.starts_with("ordered<") || value.starts_with("subkey ");
    if !(info.flags.dupsort && stored.dupsort)
        || ordered(&stored.value)
        || !ordered(&declared.value)
    {
        return Ok(());
    }
    let ident = info.rust_ident();
    let step = if declared.value.starts_with("subkey ") {
        format!(
            "`.step({next_version}, \"reencode-{0}\", |m| m.reencode_dups::<{ident}>())` when \
             the old value was the (subkey, value) pair as a tuple or struct of those two fields, \
             or `m.transform::<{ident}, OldValue>(|old| (subkey, value))` otherwise",
            info.name
        )
    } else {
        format!(
            "`.step({next_version}, \"reencode-{0}\", |m| m.reencode_dups::<{ident}>())`",
            info.name
        )
    };
    Err(Error::SchemaMismatch {
        table: info.name.to_string(),
        what: "dup value encoding",
        stored: stored.value.clone(),
        declared: declared.value.clone(),
        advice: format!(
            "this dupsort table was written by Tabula 0.1.0, which stored a key's values with \
             bincode, so libmdbx keeps them in bincode's byte order instead of the values' order; \
             re-encode them with a migration step: {step}"
        ),
        detail: MismatchDetail::new(info.rust_name, Vec::new()),
    })
}

/// Stored libmdbx flag bits as the schema spells flags (`dupsort, integer_key`), with any
/// other libmdbx flags named in hex.
pub fn describe_flag_bits(bits: u32) -> String {
    let flag = |dupsort, integer_key| {
        Bootstrap::flag_bits(TableFlags {
            dupsort,
            integer_key,
        })
    };
    let dupsort = bits & flag(true, false) != 0;
    let integer_key = bits & flag(false, true) != 0;
    let known = flag(dupsort, integer_key);
    let mut s = TableFlags {
        dupsort,
        integer_key,
    }
    .to_string();
    if bits != known {
        s.push_str(&format!(" (+ other libmdbx flags 0x{:x})", bits & !known));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Descriptor;

    fn raw_table() -> TableInfo {
        TableInfo {
            name: "blobs",
            flags: TableFlags::NONE,
            key: Descriptor::Unsigned(64),
            value: Descriptor::Raw,
            value_type: "Vec<u8>",
            value_version: None,
            rust_name: "app::Blobs",
            value_trace: || ValueTrace::Opaque,
        }
    }

    /// `check_record` accepts a record without allocating when it holds what is declared; the
    /// records around that case are judged as before (spelling alone, codec, key, version).
    #[test]
    fn records_near_the_declared_one_are_judged_by_the_full_comparison() {
        let info = raw_table();
        let declared = TableRecord::traced(&info, &ValueTrace::Opaque);
        let with = |f: fn(&mut TableRecord)| {
            let mut r = declared.clone();
            f(&mut r);
            check_record(&info, &r, &declared, 2)
        };
        assert!(with(|_| {}).is_ok());
        // No structure on either side: the type's spelling is not compared.
        assert!(with(|r| r.value = "raw<bytes::Bytes>".into()).is_ok());
        // A record of the codec alone, or with a malformed type part, keeps the codec.
        assert!(with(|r| r.value = "raw".into()).is_ok());
        assert!(with(|r| r.value = "raw<Vec<u8>".into()).is_ok());
        for (change, what) in [
            (
                (|r: &mut TableRecord| r.value = "rawx<Vec<u8>>".into()) as fn(&mut TableRecord),
                "value encoding",
            ),
            (|r| r.value = "bincode<Vec<u8>>".into(), "value encoding"),
            (|r| r.key = "u32".into(), "key encoding"),
            (|r| r.value_version = Some(2), "value version"),
        ] {
            match with(change) {
                Err(Error::SchemaMismatch { what: found, .. }) => assert_eq!(found, what),
                other => panic!("expected a {what} mismatch, got {other:?}"),
            }
        }
        // A stated version 1 is the unstated one.
        assert!(with(|r| r.value_version = Some(1)).is_ok());
    }

    /// What lets the startup step pass a record that `is_traced` recognises without building
    /// the declared record: the record of a declaration compared with itself passes both
    /// comparisons, whatever the trace holds (complete, partial, unreadable or nothing) and
    /// whatever the codec and flags.
    #[test]
    fn a_declared_record_compared_with_itself_passes() {
        const ORDERED: Descriptor = Descriptor::Ordered(&Descriptor::Unsigned(64));
        let traces = [
            ValueTrace::Opaque,
            ValueTrace::Complete("[\"U64\",{}]".into()),
            ValueTrace::Complete("not a shape".into()),
            ValueTrace::Partial {
                structure: "not a structure".into(),
                problem: "p".into(),
            },
        ];
        for (value, dupsort) in [
            (Descriptor::Raw, false),
            (Descriptor::Bincode, false),
            (Descriptor::Bincode, true),
            (ORDERED, true),
        ] {
            let info = TableInfo {
                value,
                flags: TableFlags {
                    dupsort,
                    integer_key: false,
                },
                ..raw_table()
            };
            for trace in &traces {
                let record = TableRecord::traced(&info, trace);
                assert!(record.is_traced(&info, trace));
                check_dup_encoding(&info, &record, &record, 2).unwrap();
                check_record(&info, &record, &record, 2).unwrap();
            }
        }
    }
}
