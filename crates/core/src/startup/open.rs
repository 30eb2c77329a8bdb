//! [`open`]: the one startup path, which every typed [`Db`] comes from, and the hook
//! ([`Upgrade`]) that runs migration steps in it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::bootstrap::{Bootstrap, ExistingTable, TableHandle};
use super::check::{Declared, check_table, declare_traces};
use super::indexes;
use crate::codec::DictionaryLease;
use crate::engine::DatabaseFiles;
use crate::error::{Error, Result};
use crate::options::Options;
use crate::record::{SchemaRecord, TableRecord};
use crate::schema::{Descriptor, ValueTrace};
use crate::state::Db;
use crate::table::{Schema, TableInfo};

/// What the startup path runs before it verifies the schema's tables: the migration steps of
/// `tabula-migrate` (`Migrations` implements it). [`open`] calls [`upgrade`](Upgrade::upgrade)
/// once, in the startup's write transaction, with the stored schema record; a read-write
/// open whose read pass finds nothing to change, the hook included
/// ([`has_work`](Upgrade::has_work)), does not call it.
///
/// Control goes from the application to [`tabula::open_with`](crate::open_with) (in this
/// crate), which calls [`open`] with its `Migrations` as the hook ([`NoSteps`](super::NoSteps)
/// for [`tabula::open`](crate::open)); [`open`] begins the [`Bootstrap`], reads the record and
/// hands both to the hook, then checks and opens the schema's tables in the same transaction.
/// The hook runs the history check and the steps' protocol through
/// [`startup::upgrade`](super::upgrade), so `tabula-migrate` only declares and runs steps.
///
/// ```
/// use tabula::{Options, Schema, Table, TableFlags};
/// use tabula_core::record::SchemaRecord;
/// use tabula_core::startup::{self, Bootstrap, Upgrade};
///
/// #[derive(Table)]
/// #[table(name = "notes", key = u64, value = String)]
/// struct Notes;
/// #[derive(Schema)]
/// struct App(Notes);
///
/// /// Keeps a table of its own beside the schema's.
/// struct WithScratchpad;
///
/// impl Upgrade for WithScratchpad {
///     fn version(&self) -> u32 {
///         1
///     }
///
///     fn upgrade(
///         &self,
///         boot: &mut Bootstrap,
///         record: &mut SchemaRecord,
///         stored: bool,
///     ) -> tabula::Result<Vec<(u32, &'static str)>> {
///         if !stored {
///             record.version = self.version();
///         }
///         if boot.find_table("scratchpad")?.is_none() {
///             boot.create_table("scratchpad", TableFlags::NONE)?;
///         }
///         Ok(Vec::new())
///     }
/// }
///
/// # let dir = tabula::__doc::temp_dir();
/// let options = Options::new().extra_tables(1);
/// let (db, report) = startup::open::<App>(dir.path(), &options, &WithScratchpad)?;
/// assert_eq!(report.created, ["notes"]);
/// # drop(db);
/// # Ok::<(), tabula::Error>(())
/// ```
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

    /// Reports an index build the startup step runs after the steps (a new index, a
    /// redeclared one, or every index after a step): `done` of the source table's `total`
    /// rows read into index `index` of table `table`, after each committed batch. A build
    /// resumed after an interruption counts the rows done before it too (its first report is
    /// above them), and reports `done == total` when it ends. The default does nothing; `tabula-migrate`'s `Migrations` hands it
    /// to its progress callback and progress bar.
    ///
    /// ```
    /// # use tabula_core::startup::{Bootstrap, Upgrade};
    /// # use tabula_core::record::SchemaRecord;
    /// struct Quiet;
    /// impl Upgrade for Quiet {
    ///     fn version(&self) -> u32 { 1 }
    ///     fn upgrade(&self, _: &mut Bootstrap, record: &mut SchemaRecord, _: bool)
    ///         -> tabula_core::Result<Vec<(u32, &'static str)>> {
    ///         record.version = 1;
    ///         Ok(Vec::new())
    ///     }
    /// }
    /// Quiet.index_progress("by_sender", "transfers", 10, 10); // does nothing
    /// ```
    fn index_progress(&self, index: &str, table: &str, done: u64, total: u64) {
        let _ = (index, table, done, total);
    }

    /// Whether [`upgrade`](Upgrade::upgrade) may have work on the stored database whose
    /// record is `record`. A read-write [`open`] asks it in its read pass (`boot` is in a read
    /// transaction: it reads, and every write fails), before the tables are opened, with the
    /// record's fields but its tables (`record.tables` is empty: an unchanged open does not
    /// build them; a hook whose work depends on them answers `true`, and `upgrade` gets them
    /// all). `false`
    /// promises that `upgrade` would neither change nor refuse anything on this record, and
    /// lets an open that finds nothing else to change take no write transaction (`upgrade`
    /// is then not called). The default, `true`, sends every open through the write
    /// transaction, where `upgrade` runs. [`NoSteps`](super::NoSteps) and `tabula-migrate`'s
    /// `Migrations` answer from the version, the steps applied and the step in progress
    /// ([`nothing_pending`](super::nothing_pending)).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// use tabula_core::record::SchemaRecord;
    /// use tabula_core::startup::{Bootstrap, NoSteps, Upgrade};
    ///
    /// # let dir = temp_dir();
    /// drop(tabula::open::<App>(dir.path(), Options::new())?);
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new().read_only(true), 0)?;
    /// let mut record = boot.read_record()?.expect("recorded by the open");
    /// assert!(!NoSteps.has_work(&mut boot, &record));
    /// // A database migrated past version 1 is refused by `NoSteps`: its `upgrade` has work.
    /// record.version = 2;
    /// assert!(NoSteps.has_work(&mut boot, &record));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    fn has_work(&self, boot: &mut Bootstrap, record: &SchemaRecord) -> bool {
        let _ = (boot, record);
        true
    }
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
    /// The indexes built from their tables in this open (new, redeclared, or after a step).
    pub indexes_built: Vec<&'static str>,
    /// The histories this open added to tables that already held rows: each records from the
    /// first version written to its table (reads as of earlier versions are refused).
    pub histories_started: Vec<&'static str>,
}

/// The startup path: opens the database at `path` with schema `S`, runs `upgrade` (the pending
/// migration steps), then opens every table of `S` in ID order (`S::TABLES[id]` is the table
/// whose `Contains::ID` is `id`: `#[derive(Schema)]` numbers them by position), creating the
/// missing ones (read-write) and checking the stored flags, key encoding and values of the
/// others against their declarations ([`check_table`](super::check_table)), records the schema, commits, and only
/// then publishes the `Db` with its handle array filled. Nothing opens a table after this.
///
/// Before the file is opened, every declaration is checked ([`declare`](super::declare)): names,
/// and the value types' structures, traced here.
///
/// Applications open through [`tabula::open`](crate::open) /
/// [`tabula::open_with`](crate::open_with), which call this with no steps or with their
/// migration steps; a hook of one's own implements [`Upgrade`] (see its example).
///
/// # Errors
///
/// Those of [`Bootstrap::begin`]; [`Error::InvalidTable`] for a declaration that cannot be
/// used; [`Error::SchemaMismatch`] naming the table, what is stored and what is declared;
/// [`Error::TableMissing`] when a read-only open lacks a declared table;
/// [`Error::IndexNotBuilt`] when a read-only open finds an index built for another declaration
/// or one whose build was interrupted;
/// [`Error::SchemaRecord`]; whatever `upgrade` refuses. Nothing is published then, and nothing
/// is written but what `upgrade` committed.
pub fn open<S: Schema>(
    path: &Path,
    options: &Options,
    upgrade: &dyn Upgrade,
) -> Result<(Db<S>, Report)> {
    let started = Instant::now();
    let declared = declare_traces(S::TABLES)?;
    let traces = &declared.traces;
    let traced_us = started.elapsed().as_micros() as u64;
    let mut startup = Startup::open_environment(path, options, S::TABLES, &declared)?;
    let read_pass = startup.read_pass(upgrade, traces);
    // Whether the open took the write transaction (for the log).
    let wrote = read_pass.is_none() && !startup.boot.is_read_only();
    let (handles, any_whole) = match read_pass {
        Some(checked) => checked,
        None => {
            if startup.boot.is_reading() {
                startup = startup.begin_writing(&declared)?;
            }
            startup.full_pass(upgrade, traces)?
        }
    };
    let (db, report) = startup.publish::<S>(handles)?;
    if any_whole {
        db.shared.history().note_whole();
    }
    tracing::info!(
        path = %path.display(),
        tables = S::TABLES.len(),
        created = report.created.len(),
        verified = report.verified.len(),
        migrations = report.applied.len(),
        version = report.version,
        write_transaction = wrote,
        traced_us,
        elapsed_us = started.elapsed().as_micros() as u64,
        "opened database"
    );
    Ok((db, report))
}

/// The startup transaction of [`open`] between its phases: the schema's tables, the record as
/// stored and as it is being brought up to date, and what the open did so far.
struct Startup<'a> {
    path: &'a Path,
    tables: &'static [TableInfo],
    /// The record as the file held it.
    stored: Stored,
    /// The record this open writes.
    record: SchemaRecord,
    /// The stored record's tables are exactly the schema's declared ones and were not built:
    /// `record.tables` is empty and stands for them. Only in the read pass (an unchanged open
    /// needs the tables' records for nothing); the write pass, whose hook's
    /// [`upgrade`](Upgrade::upgrade) reads them, and a read-only open build them.
    tables_declared: bool,
    /// The zstd dictionaries the schema's codecs use.
    dictionary_names: Vec<&'static str>,
    /// Whether the schema or the record uses zstd dictionaries.
    uses_dictionaries: bool,
    dictionaries: DictionaryLease,
    report: Report,
    /// The schema version a step that would cover a changed table would migrate to.
    next_version: u32,
    /// The indexes to build from their tables (positions in `tables`).
    builds: Vec<usize>,
    /// The read pass found something to write (a history to start, the record changed).
    write_needed: bool,
    /// The startup transaction (last: dropped after the dictionaries, on an error).
    boot: Bootstrap,
}

impl<'a> Startup<'a> {
    /// Opens the environment at `path` and begins the startup transaction, reads the schema
    /// record, and loads the zstd dictionaries when the schema or the record uses some.
    ///
    /// A read-write open begins with a read transaction, the read pass
    /// ([`read_pass`](Self::read_pass)); a read-only one with the read transaction it runs in.
    fn open_environment(
        path: &'a Path,
        options: &Options,
        tables: &'static [TableInfo],
        declared: &Declared,
    ) -> Result<Self> {
        // A schema with `ZstdDict` tables also opens the dictionary table: room for it.
        let own_tables = 1 + usize::from(tables.iter().any(uses_dictionary));
        let boot = Bootstrap::begin_reading(path, options, tables.len(), own_tables)?;
        Self::read_state(path, tables, declared, boot)
    }

    /// Ends the read pass, which found something to change: the startup starts over in the
    /// write transaction, from the record as the file holds it now.
    fn begin_writing(self, declared: &Declared) -> Result<Self> {
        let Startup {
            path,
            tables,
            dictionaries,
            mut boot,
            ..
        } = self;
        drop(dictionaries); // released before the reload
        boot.begin_writing()?;
        Self::read_state(path, tables, declared, boot)
    }

    /// The startup's state at its beginning, in `boot`'s transaction: the record read, the
    /// dictionaries loaded.
    fn read_state(
        path: &'a Path,
        tables: &'static [TableInfo],
        declared: &Declared,
        mut boot: Bootstrap,
    ) -> Result<Self> {
        let dictionary_names = dictionary_names(tables);
        let traces = &declared.traces;
        let (stored, record, tables_declared) =
            match boot.read_record_declared(tables, traces, &declared.by_name)? {
                None => (Stored::Nothing, SchemaRecord::empty(), false),
                Some((mut record, true)) => {
                    let stored = Stored::Declared(Stored::head(&record));
                    let build = !boot.is_reading();
                    if build {
                        record.tables = tables
                            .iter()
                            .zip(traces)
                            .map(|(info, trace)| {
                                (info.name.to_string(), TableRecord::traced(info, trace))
                            })
                            .collect();
                    }
                    (stored, record, !build)
                }
                Some((record, false)) => (Stored::Whole(record.clone()), record, false),
            };
        // Loaded before the migration steps (which may decode and encode such values), and
        // again after them when they ran (a step may have trained a dictionary). A schema
        // without `ZstdDict` tables loads them only when the record has some (a step may be
        // moving a table off `ZstdDict`), in the room `extra_tables` leaves.
        let uses_dictionaries = !dictionary_names.is_empty()
            || match tables_declared {
                // The record's tables are the declared ones (a value recorded as
                // `zstd_dict(..)` is a declared `ZstdDict`).
                true => tables
                    .iter()
                    .any(|t| matches!(t.value, Descriptor::ZstdDict { .. })),
                false => record
                    .tables
                    .values()
                    .any(|t| t.value.starts_with("zstd_dict(")),
            };
        let dictionaries = if uses_dictionaries {
            boot.lease_dictionaries(&dictionary_names)?
        } else {
            DictionaryLease::default()
        };
        Ok(Startup {
            path,
            tables,
            boot,
            stored,
            record,
            tables_declared,
            dictionary_names,
            uses_dictionaries,
            dictionaries,
            report: Report::default(),
            next_version: 0,
            builds: Vec::new(),
            write_needed: false,
        })
    }

    /// The read pass of a read-write open, in the read transaction it began with: when the
    /// open changes nothing (the record stored and unchanged, `upgrade` with no work
    /// ([`Upgrade::has_work`]), no index to drop or build, every table there and as declared,
    /// no history to start), the schema's handles, checked, and whether any history bounds
    /// every key's reads ([`start_histories`](Self::start_histories)). `None` when the
    /// open must write, or meets any error or refusal: the write transaction then runs the
    /// whole startup again ([`full_pass`](Self::full_pass)), which gives that error as an open
    /// without a read pass would. `None` at once for a read-only open, which runs the whole
    /// startup in its read transaction.
    fn read_pass(
        &mut self,
        upgrade: &dyn Upgrade,
        traces: &[ValueTrace],
    ) -> Option<(Vec<TableHandle>, bool)> {
        if !self.boot.is_reading()
            || matches!(self.stored, Stored::Nothing)
            || self.has_work(upgrade)
            // With the tables not built (`tables_declared`), the record lists no index the
            // schema does not declare, and the record passed has none: the same answer.
            || indexes::any_to_drop(&mut self.boot, &self.record, self.tables)
        {
            return None;
        }
        self.next_version = self.record.version.max(upgrade.version()) + 1;
        let (found, stop) = self.open_handles();
        if stop.is_some() {
            return None; // a missing table (created by the write pass) or an error
        }
        let handles = self.check_tables(traces, found).ok()?;
        if !self.builds.is_empty() {
            return None;
        }
        let any_whole = self.start_histories(&handles).ok()?;
        self.write_record().ok()?;
        (!self.write_needed).then_some((handles, any_whole))
    }

    /// [`Upgrade::has_work`] on the stored record without its tables (built or not: the hook
    /// sees the same either way).
    fn has_work(&mut self, upgrade: &dyn Upgrade) -> bool {
        let tables = std::mem::take(&mut self.record.tables);
        let has_work = upgrade.has_work(&mut self.boot, &self.record);
        self.record.tables = tables;
        has_work
    }

    /// The whole startup in its transaction: the write transaction of a read-write open (after
    /// a read pass that found something to change), the read transaction of a read-only one.
    fn full_pass(
        &mut self,
        upgrade: &dyn Upgrade,
        traces: &[ValueTrace],
    ) -> Result<(Vec<TableHandle>, bool)> {
        self.upgrade(upgrade)?;
        let (found, stop) = self.open_handles();
        let handles = self.check_tables(traces, found)?;
        if let Some(e) = stop {
            return Err(e);
        }
        self.build_indexes(&handles, upgrade)?;
        let any_whole = self.start_histories(&handles)?;
        self.write_record()?;
        Ok((handles, any_whole))
    }

    /// Runs `upgrade` (the pending migration steps), reloads the dictionaries after steps,
    /// and drops the index tables the schema no longer declares (read-write).
    fn upgrade(&mut self, upgrade: &dyn Upgrade) -> Result<()> {
        let stored = !matches!(self.stored, Stored::Nothing);
        self.report.applied = upgrade.upgrade(&mut self.boot, &mut self.record, stored)?;
        if self.uses_dictionaries && self.steps_ran() {
            self.dictionaries = DictionaryLease::default(); // released before the reload
            self.dictionaries = self.boot.lease_dictionaries(&self.dictionary_names)?;
        }
        self.next_version = self.record.version.max(upgrade.version()) + 1;
        if !self.boot.is_read_only() {
            indexes::drop_undeclared(&mut self.boot, &mut self.record, self.tables)?;
        }
        Ok(())
    }

    /// Whether a migration step ran: a step may have rewritten any table without its
    /// indexes, so after one every index is rebuilt from its table.
    fn steps_ran(&self) -> bool {
        !self.report.applied.is_empty()
    }

    /// Opens (or, read-write, creates) every table's handle, in ID order, and returns them
    /// with the error that stopped the pass, if one did.
    ///
    /// One pass that allocates nothing of Tabula's between libmdbx's handle opens: libmdbx
    /// copies each name into its own small allocation and compares the name being opened
    /// with every open handle's name, so at 10,000 tables that scan is most of the open, and
    /// it runs faster over names allocated next to each other than over names scattered
    /// between the schema records a mixed loop frees and allocates. The checks follow in
    /// table order ([`check_tables`](Self::check_tables)); a table that could not be opened
    /// or created is reported after the checks of the tables before it, as a single pass
    /// would.
    fn open_handles(&mut self) -> (Vec<Opened>, Option<Error>) {
        let (tables, path) = (self.tables, self.path);
        self.boot
            .with_catalog_checked(|boot| Self::open_each(boot, tables, path))
    }

    /// [`open_handles`](Self::open_handles)' loop: each table of `tables` found or created.
    fn open_each(
        boot: &mut Bootstrap,
        tables: &[TableInfo],
        path: &Path,
    ) -> (Vec<Opened>, Option<Error>) {
        let mut found: Vec<Opened> = Vec::with_capacity(tables.len());
        // Whether the "verified table" debug events are wanted (they give each table's entries).
        let debug = tracing::enabled!(tracing::Level::DEBUG);
        for info in tables {
            // The names were checked by `declare` (none reserved): found without the check.
            let opened = match boot.find_flags(info.name) {
                Ok(Some((handle, flags))) => {
                    // The entries are counted only where something reads them: the refusal of
                    // a table whose stored flags differ from its declaration (its advice
                    // depends on whether the table is empty), and the debug events. 0 else.
                    let count = debug || flags != Bootstrap::flag_bits(info.flags);
                    match count {
                        true => boot.row_count(info.name, handle),
                        false => Ok(0),
                    }
                    .map(|entries| {
                        Opened::Existing(ExistingTable {
                            handle,
                            flags,
                            entries,
                        })
                    })
                }
                // The read pass stops here too: the write pass creates the table.
                Ok(None) if boot.is_read_only() || boot.is_reading() => Err(Error::TableMissing {
                    table: info.name.to_string(),
                    path: path.to_path_buf(),
                }),
                Ok(None) => boot
                    .create_table(info.name, info.flags)
                    .map(Opened::Created),
                Err(e) => Err(e),
            };
            match opened {
                Ok(f) => found.push(f),
                Err(e) => return (found, Some(e)),
            }
        }
        (found, None)
    }

    /// The plan: checks every table found against its declaration (`traces`: the value
    /// types' structures), updates the record, and decides which indexes to build; returns
    /// the handles, in ID order.
    fn check_tables(
        &mut self,
        traces: &[ValueTrace],
        found: Vec<Opened>,
    ) -> Result<Vec<TableHandle>> {
        let read_only = self.boot.is_read_only();
        let steps_ran = self.steps_ran();
        let tables_declared = self.tables_declared;
        let record = &mut self.record;
        let mut handles = Vec::with_capacity(found.len());
        self.report.verified.reserve(found.len());
        for (at, ((info, trace), found)) in self.tables.iter().zip(traces).zip(found).enumerate() {
            // One lookup per table: the record it is checked against is the one updated below.
            // The tables not built are each recorded as declared: nothing to look up.
            let recorded = match tables_declared {
                true => None,
                false => record.tables.get_mut(info.name),
            };
            let is_recorded = tables_declared || recorded.is_some();
            // A record holding exactly what is declared (every open after the first, until
            // the declaration changes) passes every comparison of `check_table` after the
            // flags; it is recognised field by field without building the declared record.
            // Any other record is compared with the declared one, built here.
            let declared = match recorded.as_deref() {
                _ if tables_declared => None,
                Some(old) if old.is_traced(info, trace) => None,
                _ => Some(TableRecord::traced(info, trace)),
            };
            // An index that is new to the record, redeclared (its `version`, source or
            // uniqueness) or whose table a step rewrote is built again from its table, in this
            // transaction, rather than checked against its record.
            let rebuild = info.index.is_some()
                && !read_only
                && (matches!(found, Opened::Created(_))
                    || !is_recorded
                    || declared.is_some()
                    || steps_ran);
            if rebuild {
                self.builds.push(at);
            }
            let handle = match found {
                Opened::Existing(existing) => {
                    let unrecorded = !is_recorded;
                    let compared = recorded.as_deref().zip(declared.as_ref());
                    let compared = if rebuild { None } else { compared };
                    // An index a read-write open would build: say so, not which step to add.
                    // One with no record is a build that was interrupted (the commit that ends
                    // a build writes its record): its table holds the entries of some rows
                    // only.
                    let not_built = match (
                        check_table(info, Some(&existing), compared, self.next_version),
                        info.index,
                    ) {
                        (
                            Err(Error::SchemaMismatch {
                                what,
                                stored,
                                declared,
                                ..
                            }),
                            Some(index),
                        ) if read_only => Some((
                            index,
                            format!("{what}: {stored} on file, {declared} declared"),
                        )),
                        (Ok(()), Some(index)) if read_only && unrecorded => Some((
                            index,
                            "its build was interrupted before it finished".to_string(),
                        )),
                        (checked, _) => {
                            checked?;
                            None
                        }
                    };
                    if let Some((index, what)) = not_built {
                        return Err(Error::IndexNotBuilt {
                            index: info.name.to_string(),
                            table: index.source.to_string(),
                            what,
                            path: self.path.to_path_buf(),
                        });
                    }
                    tracing::debug!(
                        table = info.name,
                        entries = existing.entries,
                        "verified table"
                    );
                    self.report.verified.push(info.name);
                    existing.handle
                }
                Opened::Created(handle) => {
                    tracing::info!(table = info.name, flags = %info.flags, "created table");
                    self.report.created.push(info.name);
                    handle
                }
            };
            handles.push(handle);
            // In place: a table recorded as declared allocates no new name and frees no
            // record.
            match (recorded, declared) {
                (_, None) => {}
                (Some(recorded), Some(declared)) => *recorded = declared,
                (None, Some(declared)) => {
                    record.tables.insert(info.name.to_string(), declared);
                }
            }
        }
        Ok(handles)
    }

    /// Builds the indexes [`check_tables`](Self::check_tables) chose from their tables' rows,
    /// reporting the progress to `upgrade`.
    fn build_indexes(&mut self, handles: &[TableHandle], upgrade: &dyn Upgrade) -> Result<()> {
        let tables = self.tables;
        let steps_ran = self.steps_ran();
        for &at in &self.builds {
            let info = &tables[at];
            let Some(index) = info.index else { continue };
            let Some(source_at) = tables
                .iter()
                .position(|t| t.index.is_none() && t.name == index.source)
            else {
                return Err(Error::InvalidTable {
                    table: info.name.to_string(),
                    rust_name: info.rust_name,
                    problem: format!(
                        "an index on table `{}`, which the schema does not list: list it",
                        index.source
                    ),
                });
            };
            let entries = indexes::build(
                &mut self.boot,
                info,
                handles[at],
                (tables[source_at].name, tables[source_at].debug_key),
                handles[source_at],
                steps_ran,
                &|done, total| upgrade.index_progress(info.name, index.source, done, total),
            )?;
            tracing::info!(
                index = info.name,
                table = index.source,
                entries,
                "built index"
            );
            self.report.indexes_built.push(info.name);
        }
        Ok(())
    }

    /// Starts the history added beside a table that already holds rows (read-write): its
    /// horizon pending until the first version written, and the mark that the horizon bounds
    /// the reads of every key, since nothing is known of the rows before it. A read-only open
    /// cannot start it and refuses. Returns whether any history of the schema carries that
    /// mark (reads as of a version then look for it).
    fn start_histories(&mut self, handles: &[TableHandle]) -> Result<bool> {
        let tables = self.tables;
        let mut any_whole = false;
        for (at, info) in tables.iter().enumerate() {
            let Some(source) = info.history_of else {
                continue;
            };
            let Some(source_at) = tables.iter().position(|t| t.name == source) else {
                continue;
            };
            let history = handles[at];
            if self.boot.row_count(info.name, history)? == 0 {
                let rows = self.boot.row_count(source, handles[source_at])?;
                if rows > 0 {
                    if self.boot.is_reading() {
                        self.write_needed = true; // the write pass starts it
                        continue;
                    }
                    if self.boot.is_read_only() {
                        return Err(Error::InvalidTable {
                            table: source.to_string(),
                            rust_name: tables[source_at].rust_name,
                            problem: format!(
                                "it holds {rows} rows and its history `{}` was not started: a \
                                 read-only open cannot start it; open the database read-write \
                                 once",
                                info.name
                            ),
                        });
                    }
                    for (key, value) in crate::history::started_on_rows() {
                        self.boot.put_raw(info.name, history, key, value, false)?;
                    }
                    tracing::info!(
                        table = source,
                        history = info.name,
                        rows,
                        "history added to a populated table: it records from the first version \
                         written"
                    );
                    self.report.histories_started.push(info.name);
                }
            }
            let boot = &mut self.boot;
            any_whole |= crate::history::is_whole(|key| {
                boot.get_raw(info.name, history, key).map(|v| v.is_some())
            })?;
        }
        Ok(any_whole)
    }

    /// Writes the schema record when this open changed it (read-write).
    fn write_record(&mut self) -> Result<()> {
        self.report.version = self.record.version;
        self.record.settle_format();
        if !self.boot.is_read_only()
            && self
                .stored
                .differs(&self.record, self.tables_declared, self.tables.len())
        {
            if self.boot.is_reading() {
                self.write_needed = true; // the write pass writes it
                return Ok(());
            }
            self.boot.write_record(&mut self.record)?;
            self.report.record_written = true;
        }
        Ok(())
    }

    /// Commits the startup transaction and publishes the `Db` with its handle array filled.
    fn publish<S: Schema>(self, handles: Vec<TableHandle>) -> Result<(Db<S>, Report)> {
        let db = self.boot.publish::<S>(handles, self.dictionaries)?;
        Ok((db, self.report))
    }
}

/// The schema record as the file held it, kept to tell at the end whether the open changed it.
enum Stored {
    /// A new database: nothing recorded.
    Nothing,
    /// A record whose tables were exactly the schema's, as declared
    /// ([`SchemaRecord::parse_declared`]): its other fields, with no tables. After
    /// [`check_tables`](Startup::check_tables) every table of the schema is recorded as
    /// declared, so the record's tables are the stored ones again exactly when it has no
    /// others: as many as the schema has (or when they were never built:
    /// [`Startup::tables_declared`]).
    Declared(SchemaRecord),
    /// Any other record, whole.
    Whole(SchemaRecord),
}

impl Stored {
    /// `record`'s fields other than its tables (cloned; the tables left empty).
    fn head(record: &SchemaRecord) -> SchemaRecord {
        SchemaRecord {
            format: record.format,
            version: record.version,
            applied: record.applied.clone(),
            tables: Default::default(),
            in_progress: record.in_progress.clone(),
        }
    }

    /// Whether `record`, checked by [`check_tables`](Startup::check_tables) against a schema of
    /// `schema_tables` tables, differs from what the file held; `tables_declared`: its tables
    /// were not built ([`Startup::tables_declared`]), and are the stored ones.
    fn differs(&self, record: &SchemaRecord, tables_declared: bool, schema_tables: usize) -> bool {
        match self {
            Stored::Nothing => true,
            Stored::Whole(stored) => stored != record,
            Stored::Declared(head) => {
                // Every field named, so that a field added to the record is compared here too.
                let SchemaRecord {
                    format,
                    version,
                    applied,
                    tables: _,
                    in_progress,
                } = head;
                (!tables_declared && record.tables.len() != schema_tables)
                    || *format != record.format
                    || *version != record.version
                    || *applied != record.applied
                    || *in_progress != record.in_progress
            }
        }
    }
}

/// A schema table as the startup step's first pass left it.
enum Opened {
    /// It existed: to be checked against its declaration.
    Existing(ExistingTable),
    /// It was missing and has been created.
    Created(TableHandle),
}

/// Whether `table`'s codec uses a zstd dictionary ([`ZstdDict`](crate::codec::ZstdDict)).
fn uses_dictionary(table: &TableInfo) -> bool {
    #[cfg(feature = "compression")]
    {
        crate::codec::dictionary_name(&table.value).is_some()
    }
    #[cfg(not(feature = "compression"))]
    {
        let _ = table;
        false
    }
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

/// The data file of the database at `path`, named as libmdbx names it: `mdbx.dat` in the
/// database directory `path`; with `no_sub_dir` ([`Options::no_sub_dir`]) the file `path`
/// itself, except that a path named `mdbx.dat` is the data file of the database in its
/// directory either way (libmdbx opens it as that directory).
///
/// ```
/// use std::path::Path;
/// use tabula_core::startup::data_file;
///
/// assert_eq!(data_file(Path::new("db"), false), Path::new("db/mdbx.dat"));
/// assert_eq!(data_file(Path::new("app.db"), true), Path::new("app.db"));
/// assert_eq!(data_file(Path::new("db/mdbx.dat"), true), Path::new("db/mdbx.dat"));
/// ```
pub fn data_file(path: &Path, no_sub_dir: bool) -> PathBuf {
    DatabaseFiles::of(path, no_sub_dir).data
}
