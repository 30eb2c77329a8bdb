//! [`Bootstrap`]: the startup transaction and its API over tables reached by name, raw keys and
//! values, and the meta table. The startup path ([`open`](super::open)) runs in it, and so do
//! the migration steps of `tabula-migrate` (through [`Upgrade`](super::Upgrade)).

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

#[cfg(doc)]
use super::{decode_stored_key, decode_stored_value, encode_stored_key, encode_stored_value};
use crate::codec::DictionaryLease;
use crate::diagnose::fail;
use crate::engine::{self, Code, Dbi, Env, RawTxn};
use crate::error::{At, Error, KeyHex, MdbxCode, Result};
use crate::files::open_env;
use crate::options::{Options, RunConfig};
use crate::pipeline::Refusal;

use crate::state::{Db, Shared};
use crate::table::{Schema, TableFlags};

/// A table's handle in the startup transaction: valid for the [`Bootstrap`] that found or
/// created it (and, once the startup commits, in every later transaction). The raw methods take
/// it with the table's name, which their errors name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableHandle(pub(crate) Dbi);

/// What a bootstrap found for one table name ([`Bootstrap::find_table`]).
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
/// rewritten and recorded by name, before any handle is published. [`open`](super::open)
/// drives it; the migration steps of `tabula-migrate` run in it through
/// [`Upgrade`](super::Upgrade), and tools that work on a database without its schema (the
/// `tabula` command, the benchmarks) use it directly.
///
/// Tables are reached by name and read and written as bytes: the raw methods take a table's
/// name (which their errors name) and its [`TableHandle`]; a typed table's keys and values
/// convert to and from those bytes with [`encode_stored_key`], [`decode_stored_key`],
/// [`encode_stored_value`] and [`decode_stored_value`]. Names starting with `__tabula` are
/// Tabula's own and refused by every method that takes a name, but for the scratch tables it
/// hands out ([`scratch_table`](Self::scratch_table)) and the meta table's records
/// (`meta_*`, [`read_record`](Self::read_record)).
///
/// Nothing is written until [`checkpoint`](Self::checkpoint) commits (the startup path commits
/// the last transaction when it publishes the database); a bootstrap dropped before then
/// aborts what it did since.
///
/// ```
/// use tabula::{Options, TableFlags};
/// use tabula_core::startup::Bootstrap;
///
/// # let dir = tabula::__doc::temp_dir();
/// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
/// let notes = boot.create_table("notes", TableFlags::NONE)?;
/// boot.put_raw("notes", notes, b"k", b"v", false)?;
/// boot.checkpoint()?;
/// drop(boot);
///
/// let mut boot = Bootstrap::begin(dir.path(), &Options::new().read_only(true), 1)?;
/// let notes = boot.find_table("notes")?.expect("committed by the checkpoint");
/// assert_eq!(notes.entries, 1);
/// assert_eq!(boot.get_raw("notes", notes.handle, b"k")?, Some(b"v".to_vec()));
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// It owns a write transaction (a read transaction for read-only opens), which libmdbx requires
/// to end on the thread that began it, so it is neither `Send` nor `Sync`.
pub struct Bootstrap {
    pub(super) txn: Option<RawTxn>,
    /// The options the open database keeps while it runs (converted once, here).
    pub(super) run: RunConfig,
    env: Env,
    pub(super) path: PathBuf,
    /// The meta table (`meta.rs`).
    pub(super) meta: Option<Dbi>,
    /// The environment checks every page (`MDBX_VALIDATION`) for the startup only: a writable
    /// open without `Options::validation`, switched off when the database is published.
    validating_startup: bool,
    /// The startup's read pass ([`begin_reading`](Self::begin_reading)): a read transaction
    /// on a writable environment, until [`begin_writing`](Self::begin_writing).
    reading: bool,
    /// Keeps `Bootstrap` on the thread that began its transaction (`!Send`, `!Sync`).
    _stays_on_its_thread: PhantomData<*const ()>,
}

pub use crate::record::META_TABLE;

/// The prefix of the scratch tables migration steps rewrite tables into.
const SCRATCH_PREFIX: &str = "__tabula_tmp_";

fn scratch_name(table: &str) -> &'static str {
    // A handful per open at most; table names are `&'static` throughout (errors carry them).
    Box::leak(format!("{SCRATCH_PREFIX}{table}").into_boxed_str())
}

/// Whether `name` is reserved for Tabula's own tables: it starts with
/// [`RESERVED_PREFIX`](crate::table::RESERVED_PREFIX) (`__tabula`). [`Bootstrap`] refuses such
/// names, and so does the startup path in a schema.
///
/// ```
/// use tabula_core::startup::{META_TABLE, is_reserved};
///
/// assert!(is_reserved(META_TABLE));
/// assert!(is_reserved("__tabula_tmp_notes"));
/// assert!(!is_reserved("notes"));
/// ```
pub fn is_reserved(name: &str) -> bool {
    crate::__private::is_reserved(name)
}

/// Refuses a reserved name (`__tabula…`) for a table reached by name.
pub(super) fn not_reserved(name: &str) -> Result<()> {
    if is_reserved(name) {
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
    /// transaction (a read transaction when `options` are read-only). A read-write begin creates
    /// the database when there is none.
    ///
    /// ```
    /// use tabula::Options;
    /// use tabula_core::startup::Bootstrap;
    ///
    /// # let dir = tabula::__doc::temp_dir();
    /// let boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// assert!(!boot.is_read_only());
    /// drop(boot);
    /// // A read-only begin creates nothing.
    /// assert!(Bootstrap::begin(&dir.path().join("none"), &Options::new().read_only(true), 0).is_err());
    /// # Ok::<(), tabula::Error>(())
    /// ```
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
    pub(super) fn begin_with(
        path: &Path,
        options: &Options,
        schema_tables: usize,
        own_tables: usize,
    ) -> Result<Self> {
        Self::begin_as(path, options, schema_tables, own_tables, false)
    }

    /// [`begin_with`](Self::begin_with), but a read-write open begins with a read transaction:
    /// the startup's read pass, which [`begin_writing`](Self::begin_writing) ends when the
    /// open must change something. A read-only open is the same as with `begin_with`.
    pub(super) fn begin_reading(
        path: &Path,
        options: &Options,
        schema_tables: usize,
        own_tables: usize,
    ) -> Result<Self> {
        Self::begin_as(path, options, schema_tables, own_tables, true)
    }

    fn begin_as(
        path: &Path,
        options: &Options,
        schema_tables: usize,
        own_tables: usize,
        read_first: bool,
    ) -> Result<Self> {
        let mut cfg = options.checked_env_config(schema_tables, own_tables)?;
        let run = options.run_config();
        // The startup reads what the file says (the schema record, the table directory, the
        // zstd dictionaries, the rows an index is built from) before anything could check it:
        // with libmdbx's page checks, a damaged page there is `MDBX_CORRUPTED`, not a fault.
        // A read-only environment cannot switch them off again (`mdbx_env_set_flags` refuses
        // it), so it keeps what `Options::validation` says.
        let validating_startup = !run.read_only && !cfg.validation;
        cfg.validation |= validating_startup;
        let env = open_env(path, path, &cfg, !run.read_only)?;
        let reading = read_first && !run.read_only;
        let txn = env
            .begin(run.read_only || reading)
            .map_err(|code| fail(code, At::env("begin the startup transaction"), &env, path))?;
        let mut boot = Bootstrap {
            txn: Some(txn),
            run,
            env,
            path: path.to_path_buf(),
            meta: None,
            validating_startup,
            reading,
            _stays_on_its_thread: PhantomData,
        };
        let meta = boot.txn().open_table(Some(META_TABLE), 0, false);
        boot.meta = meta.map_err(|c| boot.fail(c, At::table(META_TABLE, "open")))?;
        Ok(boot)
    }

    /// Runs `f` (the opening of the schema's handles) with the startup's page checks done
    /// once: the catalog (libmdbx's main table, which names every table) is walked first with
    /// the checks on, so every page of it is checked, then `f` runs with them off, and they are
    /// switched on again for the rest of the startup. Each handle's open is a search of the
    /// catalog, which libmdbx would check page by page again on every search (with 1,000
    /// tables, a third of the open's time); the pages are the ones just checked, in this
    /// transaction. Only for the checks the startup makes for itself (a writable open without
    /// [`Options::validation`]); when the walk fails, `f` runs with the checks on, and meets
    /// the damage as it would have without the walk.
    pub(super) fn with_catalog_checked<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        if !self.validating_startup || self.check_catalog().is_err() {
            return f(self);
        }
        if self.env.set_validation(false).is_err() {
            return f(self);
        }
        let out = f(self);
        // Inside the startup's write transaction, which this thread owns, libmdbx changes the
        // flag without waiting for the write lock; in the read pass it takes the lock for the
        // change (uncontended: no system call). Should it fail, the startup goes on without
        // page checks, as every open did before they were made at startup.
        let _ = self.env.set_validation(true);
        out
    }

    /// Whether this is the read pass of a read-write open: a read transaction that
    /// [`begin_writing`](Self::begin_writing) replaces by the write transaction when the open
    /// must change something. Every write fails until then.
    pub(super) fn is_reading(&self) -> bool {
        self.reading
    }

    /// Ends the read pass: aborts its read transaction and begins the startup's write
    /// transaction, in which the startup starts over (another process may have written
    /// between the two). The handles the read pass opened are of tables that exist, which
    /// libmdbx makes available to every transaction at once, so they stay valid.
    pub(super) fn begin_writing(&mut self) -> Result<()> {
        debug_assert!(self.reading);
        drop(self.txn.take());
        self.reading = false;
        let txn = self
            .env
            .begin(false)
            .map_err(|code| self.fail(code, At::env("begin the startup transaction")))?;
        self.txn = Some(txn);
        // The meta table may have been created since the read pass looked.
        let meta = self.txn().open_table(Some(META_TABLE), 0, false);
        self.meta = meta.map_err(|c| self.fail(c, At::table(META_TABLE, "open")))?;
        Ok(())
    }

    /// Walks the catalog, every page of it loaded (and so checked, when page checks are on).
    fn check_catalog(&mut self) -> std::result::Result<(), Code> {
        let txn = self.txn();
        let Some(main) = txn.open_table(None, 0, false)? else {
            return Ok(());
        };
        let mut cursor = txn.cursor(main)?;
        let mut at = cursor.get(engine::op::FIRST, None, None)?;
        while at.is_some() {
            at = cursor.get(engine::op::NEXT, None, None)?;
        }
        Ok(())
    }

    /// `code` from `at` as an [`Error`], in this environment ([`diagnose::fail`]).
    pub(super) fn fail(&self, code: Code, at: At<'_>) -> Error {
        fail(code, at, &self.env, &self.path)
    }

    pub(super) fn txn(&mut self) -> &mut RawTxn {
        self.txn
            .as_mut()
            .expect("bootstrap transaction is live until finish")
    }

    /// Whether this is a read-only open: the bootstrap reads, and every write fails.
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// # drop(Bootstrap::begin(dir.path(), &Options::new(), 0)?);
    /// let boot = Bootstrap::begin(dir.path(), &Options::new().read_only(true), 0)?;
    /// assert!(boot.is_read_only());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn is_read_only(&self) -> bool {
        self.run.read_only
    }

    /// The database path, as given to [`begin`](Self::begin).
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// assert_eq!(boot.path(), dir.path());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Looks up a table by name without creating it: its handle, stored flags and entry count,
    /// or `None` when the file has no such table.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// assert!(boot.find_table("notes")?.is_none());
    /// boot.create_table("notes", TableFlags::NONE)?;
    /// assert_eq!(boot.find_table("notes")?.map(|t| t.entries), Some(0));
    /// // Tabula's own tables are not reachable by name.
    /// assert!(boot.find_table(tabula_core::startup::META_TABLE).is_err());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] for a reserved name (`__tabula…`: Tabula's own tables are not
    /// reachable through a bootstrap); [`Error::Mdbx`] when libmdbx fails.
    pub fn find_table(&mut self, name: &'static str) -> Result<Option<ExistingTable>> {
        not_reserved(name)?;
        self.find_any(name)
    }

    /// [`find_table`](Self::find_table) without the check of the name (Tabula's own tables).
    pub(super) fn find_any(&mut self, name: &'static str) -> Result<Option<ExistingTable>> {
        let Some((handle, flags)) = self.find_flags(name)? else {
            return Ok(None);
        };
        let entries = self.row_count(name, handle)?;
        Ok(Some(ExistingTable {
            handle,
            flags,
            entries,
        }))
    }

    /// [`find_any`](Self::find_any) without counting the entries: the handle and the stored
    /// flag bits Tabula compares.
    pub(super) fn find_flags(&mut self, name: &'static str) -> Result<Option<(TableHandle, u32)>> {
        let Some(dbi) = self
            .txn()
            .open_table(Some(name), 0, false)
            .map_err(|c| self.fail(c, At::table(name, "open")))?
        else {
            return Ok(None);
        };
        let txn = self.txn.as_ref().expect("live");
        let flags = txn
            .table_flags(dbi)
            .map_err(|c| self.fail(c, At::table(name, "read flags")))?
            & engine::TABLE_FLAG_MASK;
        Ok(Some((TableHandle(dbi), flags)))
    }

    /// Creates a table with the given flags (it must not exist).
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let ids = TableFlags { dupsort: false, integer_key: true };
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let handle = boot.create_table("ids", ids)?;
    /// let found = boot.find_table("ids")?.expect("created");
    /// assert_eq!((found.handle, found.flags), (handle, Bootstrap::flag_bits(ids)));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] for a reserved name; [`Error::Mdbx`] when libmdbx fails (e.g.
    /// `MDBX_DBS_FULL`).
    pub fn create_table(&mut self, name: &'static str, flags: TableFlags) -> Result<TableHandle> {
        not_reserved(name)?;
        self.create_any(name, flags)
    }

    pub(super) fn create_any(
        &mut self,
        name: &'static str,
        flags: TableFlags,
    ) -> Result<TableHandle> {
        let bits = engine::table_flags(flags.dupsort, flags.integer_key);
        let dbi = self
            .txn()
            .open_table(Some(name), bits, true)
            .map_err(|c| self.fail(c, At::table(name, "create")))?;
        Ok(TableHandle(dbi.expect("MDBX_CREATE returns a handle")))
    }

    /// libmdbx flag bits for declared flags, as [`ExistingTable::flags`] reports them.
    ///
    /// ```
    /// use tabula::TableFlags;
    /// use tabula_core::startup::Bootstrap;
    ///
    /// assert_eq!(Bootstrap::flag_bits(TableFlags::NONE), 0);
    /// assert_ne!(Bootstrap::flag_bits(TableFlags { dupsort: true, integer_key: false }), 0);
    /// ```
    pub fn flag_bits(flags: TableFlags) -> u32 {
        engine::table_flags(flags.dupsort, flags.integer_key)
    }

    /// Deletes a table, its contents and its sequence from the file. Allowed here because no
    /// handle has been published yet. Returns whether it existed.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// boot.create_table("old", TableFlags::NONE)?;
    /// assert!(boot.drop_table("old")?);
    /// assert!(!boot.drop_table("old")?);
    /// assert!(boot.find_table("old")?.is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] for a reserved name; [`Error::Mdbx`] when libmdbx fails.
    pub fn drop_table(&mut self, name: &'static str) -> Result<bool> {
        not_reserved(name)?;
        self.drop_any(name)
    }

    fn drop_any(&mut self, name: &'static str) -> Result<bool> {
        let Some(t) = self.find_any(name)? else {
            return Ok(false);
        };
        self.txn()
            .drop_table(t.handle.0, true)
            .map_err(|c| self.fail(c, At::table(name, "drop")))?;
        Ok(true)
    }

    /// Renames table `from` to `to`; its handle and contents stay.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let handle = boot.create_table("balances", TableFlags::NONE)?;
    /// boot.rename_table("balances", "accounts")?;
    /// assert!(boot.find_table("balances")?.is_none());
    /// assert_eq!(boot.find_table("accounts")?.map(|t| t.handle), Some(handle));
    /// // There is no `balances` any more.
    /// assert!(boot.rename_table("balances", "wallets").is_err());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] when either name is reserved; [`Error::Mdbx`] when `from` is
    /// missing, `to` exists, or libmdbx fails.
    pub fn rename_table(&mut self, from: &'static str, to: &'static str) -> Result<()> {
        not_reserved(from)?;
        not_reserved(to)?;
        self.rename_any(from, to).map(|_| ())
    }

    /// Renames table `from` to `to`, returning its handle (which stays).
    fn rename_any(&mut self, from: &'static str, to: &'static str) -> Result<TableHandle> {
        let t = self.find_any(from)?.ok_or(Error::Mdbx {
            table: from,
            op: "rename (the table does not exist)",
            key: None,
            code: MdbxCode(Code::NOTFOUND.0),
        })?;
        self.txn()
            .rename_table(t.handle.0, to)
            .map_err(|c| self.fail(c, At::table(from, "rename")))?;
        Ok(t.handle)
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
    /// # let dir = tabula::__doc::temp_dir();
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
        flags: TableFlags,
        fresh: bool,
    ) -> Result<(&'static str, TableHandle)> {
        not_reserved(table)?;
        let name = scratch_name(table);
        let handle = match self.find_any(name)? {
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
    /// ([`scratch_table`](Self::scratch_table)), which takes its name and its sequence (raised
    /// to `table`'s: a sequence never goes back).
    ///
    /// ```
    /// use tabula::{Options, TableFlags};
    /// use tabula_core::startup::Bootstrap;
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
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
        // The table's sequence goes on in its replacement: a sequence hands out each value once.
        let sequence = match self.find_any(table)? {
            Some(t) => self
                .txn()
                .sequence(t.handle.0)
                .map_err(|c| self.fail(c, At::table(table, "sequence")))?,
            None => 0,
        };
        self.drop_any(table)?;
        let handle = self.rename_any(scratch_name(table), table)?;
        self.txn()
            .raise_sequence(handle.0, sequence)
            .map_err(|c| self.fail(c, At::table(table, "sequence")))
    }

    /// The number of entries of `table` (handle `handle`) in the open transaction.
    pub(crate) fn row_count(&mut self, table: &'static str, handle: TableHandle) -> Result<u64> {
        let stat = self.txn().stat(handle.0);
        stat.map(|s| s.entries)
            .map_err(|c| self.fail(c, At::table(table, "stat")))
    }

    /// Empties a table; it stays, with its flags and its sequence.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let notes = boot.create_table("notes", TableFlags::NONE)?;
    /// boot.put_raw("notes", notes, b"k", b"v", false)?;
    /// boot.clear_table("notes", notes)?;
    /// assert_eq!(boot.find_table("notes")?.map(|t| t.entries), Some(0));
    /// # Ok::<(), tabula::Error>(())
    /// ```
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
    /// with keys after `after` (from the first when `None`), copied out. A table is read in
    /// batches by passing the last key of one batch as `after` of the next, until a batch is
    /// empty.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let notes = boot.create_table("notes", TableFlags::NONE)?;
    /// for key in [b"a", b"b", b"c"] {
    ///     boot.put_raw("notes", notes, key, b"v", false)?;
    /// }
    /// let first = boot.read_batch("notes", notes, None, 2)?;
    /// assert_eq!(first.len(), 2);
    /// let rest = boot.read_batch("notes", notes, Some(&first[1].0), 2)?;
    /// assert_eq!(rest, [(b"c".to_vec(), b"v".to_vec())]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
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

    /// Writes raw bytes into a table, replacing the key's value (adding one to a `dupsort`
    /// table's values); `append` for keys known to come in order, which is faster (a key
    /// equal to the last one is accepted, as without `append`).
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let notes = boot.create_table("notes", TableFlags::NONE)?;
    /// boot.put_raw("notes", notes, b"b", b"1", true)?;
    /// boot.put_raw("notes", notes, b"b", b"2", false)?;
    /// assert_eq!(boot.get_raw("notes", notes, b"b")?, Some(b"2".to_vec()));
    /// // Appending a key before the last one is refused, naming the last.
    /// match boot.put_raw("notes", notes, b"a", b"3", true) {
    ///     Err(tabula::Error::AppendOutOfOrder { last: Some(last), .. }) => {
    ///         assert_eq!(last.stored().0, b"b")
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// // A key equal to the last one replaces its value (a dupsort table's: adds one).
    /// boot.put_raw("notes", notes, b"b", b"4", true)?;
    /// assert_eq!(boot.get_raw("notes", notes, b"b")?, Some(b"4".to_vec()));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendOutOfOrder`] when `append` is given a key that is not after the table's
    /// last; [`Error::Mdbx`] (or [`Error::MapFull`], [`Error::TooLarge`], ...) when libmdbx
    /// fails.
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
        let Err(code) = self.txn().put(handle.0, key, value, flags) else {
            return Ok(());
        };
        Err(match Refusal::of(code, flags) {
            Refusal::OutOfOrder => Error::AppendOutOfOrder {
                table,
                key: KeyHex::new(key),
                last: self.last_key(handle),
            },
            _ => fail(
                code,
                At::table(table, "put").entry(key, value.len()),
                &self.env,
                &self.path,
            ),
        })
    }

    /// The table's last key, for an out-of-order append's error (none when it cannot be read).
    #[cold]
    fn last_key(&mut self, handle: TableHandle) -> Option<KeyHex> {
        let mut cursor = self.txn().write_cursor(handle.0).ok()?;
        let (k, _) = cursor.get(engine::op::LAST).ok()??;
        Some(KeyHex::new(k))
    }

    /// Reads raw bytes from a table: the key's value (a `dupsort` table's first), copied out.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let notes = boot.create_table("notes", TableFlags::NONE)?;
    /// boot.put_raw("notes", notes, b"k", b"v", false)?;
    /// assert_eq!(boot.get_raw("notes", notes, b"k")?, Some(b"v".to_vec()));
    /// assert_eq!(boot.get_raw("notes", notes, b"other")?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
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

    /// Deletes a key (all its values) from a table; returns whether it was there.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let notes = boot.create_table("notes", TableFlags::NONE)?;
    /// boot.put_raw("notes", notes, b"k", b"v", false)?;
    /// assert!(boot.delete_raw("notes", notes, b"k")?);
    /// assert!(!boot.delete_raw("notes", notes, b"k")?);
    /// # Ok::<(), tabula::Error>(())
    /// ```
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

    /// Commits what the startup step did so far and begins a new write transaction: bounds the
    /// size of long migrations. Handles opened so far stay valid.
    ///
    /// ```
    /// # use tabula::{Options, TableFlags};
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let notes = boot.create_table("notes", TableFlags::NONE)?;
    /// boot.put_raw("notes", notes, b"k", b"kept", false)?;
    /// boot.checkpoint()?;
    /// boot.put_raw("notes", notes, b"k", b"dropped", false)?;
    /// drop(boot); // aborts what came after the checkpoint
    ///
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
    /// let notes = boot.find_table("notes")?.expect("committed").handle;
    /// assert_eq!(boot.get_raw("notes", notes, b"k")?, Some(b"kept".to_vec()));
    /// # Ok::<(), tabula::Error>(())
    /// ```
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
            .begin(self.run.read_only)
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

    /// Commits the startup transaction and publishes the database with `handles` (the schema's
    /// tables in ID order).
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the commit fails; nothing is published then.
    pub(super) fn publish<S: Schema>(
        mut self,
        handles: Vec<TableHandle>,
        dictionaries: DictionaryLease,
    ) -> Result<Db<S>> {
        debug_assert_eq!(handles.len(), S::TABLES.len());
        let dbis: Box<[Dbi]> = handles.into_iter().map(|h| h.0).collect();
        if self.validating_startup {
            // Inside the startup's write transaction, which this thread owns, libmdbx changes
            // the flag without waiting for the write lock (`mdbx_env_set_flags`); after a read
            // pass it takes that lock for the change, as it does for the switches of
            // `with_catalog_checked` in the read pass.
            self.env
                .set_validation(false)
                .map_err(|code| self.fail(code, At::env("switch off the startup's page checks")))?;
        }
        let txn = self.txn.take().expect("live");
        // Committing a read-only txn (a read-only open's, or the read pass of a read-write
        // one that found nothing to change) keeps the handles it opened, like a write commit
        // does; they are handles of existing tables, which libmdbx makes available to every
        // transaction as soon as they are opened (`mdbx_dbi_open`).
        txn.commit()
            .map_err(|code| self.fail(code, At::commit(None, "commit the startup transaction")))?;
        let max_readers = self
            .env
            .max_readers()
            .map_err(|code| self.fail(code, At::env("read the reader slot count")))?;
        Ok(Db::publish(Shared::new(
            self.env,
            self.path,
            self.run,
            S::TABLES,
            dbis,
            dictionaries,
            max_readers,
        )))
    }
}
