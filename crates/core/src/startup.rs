//! The startup path: the one transaction that opens, creates and verifies every table of a
//! schema before its [`Db`] is published ([`open`]), and the [`Bootstrap`] it runs in, which
//! migration steps ([`Upgrade`]) also use.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crossbeam_queue::ArrayQueue;

use std::time::Instant;

use crate::engine::{self, Code, Dbi, Env, RawTxn};
use crate::error::{At, Error, MdbxCode, Result, fail};
use crate::files::open_env;
use crate::options::Options;
use crate::record::{RECORD_FORMAT, RecordProblem, SCHEMA_RECORD_KEY, SchemaRecord, TableRecord};
use crate::state::{Db, Shared};
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
        options.validate(schema_tables)?;
        let cfg = options.env_config(schema_tables);
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
        declared: crate::table::TableFlags,
    ) -> Result<Option<ExistingTable>> {
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
    /// [`Error::Mdbx`] when libmdbx fails (e.g. `MDBX_DBS_FULL`).
    pub fn create_table(
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
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn drop_table(&mut self, name: &'static str) -> Result<bool> {
        let Some(t) = self.find_table(name)? else {
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
    /// [`Error::Mdbx`] when `from` is missing, `to` exists, or libmdbx fails.
    pub fn rename_table(&mut self, from: &'static str, to: &'static str) -> Result<()> {
        let t = self.find_table(from)?.ok_or(Error::Mdbx {
            table: from,
            op: "rename (the table does not exist)",
            key: None,
            code: MdbxCode(Code::NOTFOUND.0),
        })?;
        self.txn()
            .rename_table(t.handle.0, to)
            .map_err(|c| self.fail(c, At::table(from, "rename")))
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

    /// Commits the startup transaction and publishes the database with `handles` (the schema's
    /// tables in ID order).
    ///
    /// # Errors
    ///
    /// [`Error::Env`] when the commit fails; nothing is published then.
    fn publish<S: Schema>(mut self, handles: Vec<TableHandle>) -> Result<Db<S>> {
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
/// missing ones (read-write) and checking the stored flags and descriptors of the others
/// against their declarations, records the schema, commits, and only then publishes the `Db`
/// with its handle array filled. Nothing opens a table after this.
///
/// # Errors
///
/// Those of [`Bootstrap::begin`]; [`Error::SchemaMismatch`] naming the table, what is stored
/// and what is declared; [`Error::TableMissing`] when a read-only open lacks a declared table;
/// [`Error::SchemaRecord`]; whatever `upgrade` refuses. Nothing is published then, and nothing
/// is written but what `upgrade` committed.
pub fn open<S: Schema>(
    path: &Path,
    options: &Options,
    upgrade: &dyn Upgrade,
) -> Result<(Db<S>, Report)> {
    let started = Instant::now();
    let mut boot = Bootstrap::begin(path, options, S::TABLES.len())?;
    let stored = boot.read_record()?;
    let mut record = stored.clone().unwrap_or_else(SchemaRecord::empty);
    let mut report = Report {
        applied: upgrade.upgrade(&mut boot, &mut record, stored.is_some())?,
        ..Report::default()
    };
    let next_version = record.version.max(upgrade.version()) + 1;
    let mut handles = Vec::with_capacity(S::TABLES.len());
    for info in S::TABLES {
        let declared = TableRecord::of(info);
        let handle = match boot.find_schema_table(info.name, info.flags)? {
            Some(existing) => {
                check_flags(info, &existing, next_version)?;
                if let Some(old) = record.tables.get(info.name) {
                    check_dup_encoding(info, old, &declared, next_version)?;
                    check_record(info, old, &declared, next_version)?;
                }
                tracing::debug!(
                    table = info.name,
                    entries = existing.entries,
                    "verified table"
                );
                report.verified.push(info.name);
                existing.handle
            }
            None if boot.is_read_only() => {
                return Err(Error::TableMissing {
                    table: info.name.to_string(),
                    path: path.to_path_buf(),
                });
            }
            None => {
                let handle = boot.create_table(info.name, info.flags)?;
                tracing::info!(table = info.name, flags = %info.flags, "created table");
                report.created.push(info.name);
                handle
            }
        };
        handles.push(handle);
        record.tables.insert(info.name.to_string(), declared);
    }
    report.version = record.version;
    record.settle_format();
    if !boot.is_read_only() && stored.as_ref() != Some(&record) {
        boot.write_record(&mut record)?;
        report.record_written = true;
    }
    let db = boot.publish::<S>(handles)?;
    tracing::info!(
        path = %path.display(),
        tables = S::TABLES.len(),
        created = report.created.len(),
        verified = report.verified.len(),
        migrations = report.applied.len(),
        version = report.version,
        elapsed_us = started.elapsed().as_micros() as u64,
        "opened database"
    );
    Ok((db, report))
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
        advice: if existing.entries == 0 {
            format!(
                "the table is empty: add a migration step that drops it, e.g. \
                 `.step({next_version}, \"recreate-{0}\", |m| m.drop_table(\"{0}\"))`",
                info.name
            )
        } else {
            "changing flags needs a migration step that rewrites the table \
             (`transform` or `rekey`) into the new flags"
                .to_string()
        },
    })
}

/// Refuses a table whose recorded key or value descriptor (or value shape) differs from its
/// declaration; the advice names the step to add (`next_version`).
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
    let mismatch = |what: &'static str, stored: &str, declared: &str, advice: String| {
        Err(Error::SchemaMismatch {
            table: info.name.to_string(),
            what,
            stored: stored.to_string(),
            declared: declared.to_string(),
            advice,
        })
    };
    let next = next_version;
    if stored.key != declared.key {
        return mismatch(
            "key encoding",
            &stored.key,
            &declared.key,
            format!(
                "no migration step covers this change: add one that re-keys the table, e.g. \
                 `.step({next}, \"rekey-{0}\", |m| m.rekey::<{0}Table, OldKey>(|old| ...))`, or \
                 restore the old declaration",
                info.name
            ),
        );
    }
    let shape_changed = matches!((&stored.shape, &declared.shape), (Some(a), Some(b)) if a != b);
    if stored.value != declared.value || shape_changed {
        let (s, d) = if stored.value != declared.value {
            (stored.value.clone(), declared.value.clone())
        } else {
            (
                format!(
                    "{} with shape {}",
                    stored.value,
                    stored.shape.as_deref().unwrap_or("")
                ),
                format!(
                    "{} with shape {}",
                    declared.value,
                    declared.shape.as_deref().unwrap_or("")
                ),
            )
        };
        return mismatch(
            if shape_changed && stored.value == declared.value {
                "value shape"
            } else {
                "value encoding"
            },
            &s,
            &d,
            format!(
                "no migration step covers this change: add one that re-encodes the values, e.g. \
                 `.step({next}, \"upgrade-{0}\", |m| m.transform::<{0}Table, OldValue>(|old| ...))`, \
                 or restore the old declaration",
                info.name
            ),
        );
    }
    Ok(())
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
    let step = if declared.value.starts_with("subkey ") {
        format!(
            "`.step({next_version}, \"reencode-{0}\", |m| m.reencode_dups::<{0}Table>())` when \
             the old value was the (subkey, value) pair as a tuple or struct of those two fields, \
             or `m.transform::<{0}Table, OldValue>(|old| (subkey, value))` otherwise",
            info.name
        )
    } else {
        format!(
            "`.step({next_version}, \"reencode-{0}\", |m| m.reencode_dups::<{0}Table>())`",
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
