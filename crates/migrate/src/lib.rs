//! Tabula's startup step: the one place tables are created, verified and recorded.
//!
//! [`open`] runs a single transaction that, for every table of the schema, creates it when it is
//! missing or checks its stored flags and codec descriptors when it exists, writes the schema
//! record into the reserved meta table, commits, and only then publishes the [`Db`] with every
//! table handle in its array. A read-only open verifies instead of creating.
//!
//! Applications call it through the facade as `tabula::open::<Schema>(path, options)`.

#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tabula_core::__private::Bootstrap;
use tabula_core::{Db, Error, Options, Result, Schema, TableFlags, TableInfo};

/// The meta-table key of the schema record.
pub const SCHEMA_RECORD_KEY: &str = "schema";

/// The schema record format this version writes and reads.
pub const RECORD_FORMAT: u32 = 1;

/// What the meta table remembers about every table Tabula has created in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaRecord {
    /// Format of this record; a newer one is refused.
    pub format: u32,
    /// Tables by name.
    pub tables: BTreeMap<String, TableRecord>,
}

/// One table in the [`SchemaRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRecord {
    /// Several values per key.
    pub dupsort: bool,
    /// Native-endian integer keys.
    pub integer_key: bool,
    /// The key encoding, e.g. `(str, u64)`.
    pub key: String,
    /// The value codec and type, e.g. `bincode<Header>`.
    pub value: String,
}

impl TableRecord {
    fn of(info: &TableInfo) -> Self {
        TableRecord {
            dupsort: info.flags.dupsort,
            integer_key: info.flags.integer_key,
            key: info.key_descriptor(),
            value: info.value_descriptor(),
        }
    }
}

/// What the startup step did, for logs and tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Tables created by this open.
    pub created: Vec<&'static str>,
    /// Tables that existed and matched their declaration.
    pub verified: Vec<&'static str>,
    /// Whether the schema record was (re)written.
    pub record_written: bool,
}

/// Opens the database at `path` with schema `S`: the single startup step.
///
/// Creates missing tables (read-write opens), checks every existing table's stored flags and
/// codec descriptors against the declaration, records the schema in the meta table, commits,
/// and then returns the [`Db`] whose table handles are all open. No table is opened after this.
///
/// # Errors
///
/// - [`Error::Open`] when the path is not a database, is damaged, or cannot be created;
/// - [`Error::SchemaMismatch`] naming the table, what is stored and what is declared;
/// - [`Error::TableMissing`] when a read-only open lacks a declared table;
/// - [`Error::SchemaRecord`] when the record is unreadable or from a newer Tabula.
///
/// Nothing is written when an error is returned.
pub fn open<S: Schema>(path: impl AsRef<Path>, options: Options) -> Result<Db<S>> {
    open_with_report::<S>(path, options).map(|(db, _)| db)
}

/// [`open`], also returning what the step did.
///
/// # Errors
///
/// As [`open`].
pub fn open_with_report<S: Schema>(
    path: impl AsRef<Path>,
    options: Options,
) -> Result<(Db<S>, Report)> {
    let path = path.as_ref();
    let started = Instant::now();
    let mut boot = Bootstrap::<S>::begin(path, &options)?;
    let stored = read_record(&mut boot)?;
    let mut record = stored.clone().unwrap_or_else(|| SchemaRecord {
        format: RECORD_FORMAT,
        tables: BTreeMap::new(),
    });
    let mut report = Report::default();

    for (id, info) in S::TABLES.iter().enumerate() {
        let declared = TableRecord::of(info);
        let dbi = match boot.find_table(info.name)? {
            Some(existing) => {
                let declared_bits = Bootstrap::<S>::flag_bits(info.flags);
                if existing.flags != declared_bits {
                    return Err(Error::SchemaMismatch {
                        table: info.name.to_string(),
                        what: "flags",
                        stored: describe_bits(existing.flags),
                        declared: info.flags.to_string(),
                        advice: if existing.entries == 0 {
                            "the table is empty: a migration step can drop and re-create it"
                        } else {
                            "changing flags needs a migration that copies the table into a new one"
                        },
                    });
                }
                if let Some(old) = record.tables.get(info.name) {
                    check_descriptor(info.name, "key encoding", &old.key, &declared.key)?;
                    check_descriptor(info.name, "value encoding", &old.value, &declared.value)?;
                }
                tracing::debug!(
                    table = info.name,
                    entries = existing.entries,
                    "verified table"
                );
                report.verified.push(info.name);
                existing.dbi
            }
            None if boot.is_read_only() => {
                return Err(Error::TableMissing {
                    table: info.name.to_string(),
                    path: path.to_path_buf(),
                });
            }
            None => {
                let dbi = boot.create_table(info.name, info.flags)?;
                tracing::info!(table = info.name, flags = %info.flags, "created table");
                report.created.push(info.name);
                dbi
            }
        };
        boot.set_handle(id, dbi);
        record.tables.insert(info.name.to_string(), declared);
    }

    if !boot.is_read_only() && stored.as_ref() != Some(&record) {
        let bytes = serde_json::to_vec(&record).expect("a schema record always serialises");
        boot.meta_put(SCHEMA_RECORD_KEY, &bytes)?;
        report.record_written = true;
    }
    let db = boot.finish()?;
    tracing::info!(
        path = %path.display(),
        tables = S::TABLES.len(),
        created = report.created.len(),
        verified = report.verified.len(),
        elapsed_us = started.elapsed().as_micros() as u64,
        "opened database"
    );
    Ok((db, report))
}

/// Reads the schema record of the database at `path` without opening any table.
///
/// # Errors
///
/// As [`open`] for a read-only open.
pub fn read_schema_record(path: impl AsRef<Path>) -> Result<Option<SchemaRecord>> {
    struct NoTables;
    impl Schema for NoTables {
        const TABLES: &'static [TableInfo] = &[];
    }
    let mut boot = Bootstrap::<NoTables>::begin(path.as_ref(), &Options::new().read_only(true))?;
    let record = read_record(&mut boot)?;
    drop(boot.finish()?);
    Ok(record)
}

fn read_record<S: Schema>(boot: &mut Bootstrap<S>) -> Result<Option<SchemaRecord>> {
    let Some(bytes) = boot.meta_get(SCHEMA_RECORD_KEY)? else {
        return Ok(None);
    };
    let record: SchemaRecord = serde_json::from_slice(&bytes).map_err(|e| Error::SchemaRecord {
        path: boot.path().to_path_buf(),
        message: format!("it does not parse ({e}); the meta table may be damaged"),
    })?;
    if record.format > RECORD_FORMAT {
        return Err(Error::SchemaRecord {
            path: boot.path().to_path_buf(),
            message: format!(
                "it has format {} but this Tabula reads format {RECORD_FORMAT} at most: the \
                 database was written by a newer Tabula; upgrade the application",
                record.format
            ),
        });
    }
    Ok(Some(record))
}

fn check_descriptor(table: &str, what: &'static str, stored: &str, declared: &str) -> Result<()> {
    if stored == declared {
        return Ok(());
    }
    Err(Error::SchemaMismatch {
        table: table.to_string(),
        what,
        stored: stored.to_string(),
        declared: declared.to_string(),
        advice: "the stored data was written with the old encoding: add a migration step that \
                 re-encodes the table, or restore the old declaration",
    })
}

fn describe_bits(bits: u32) -> String {
    let dupsort =
        bits & Bootstrap::<NoSchema>::flag_bits(TableFlags {
            dupsort: true,
            integer_key: false,
        }) != 0;
    let integer_key =
        bits & Bootstrap::<NoSchema>::flag_bits(TableFlags {
            dupsort: false,
            integer_key: true,
        }) != 0;
    let known = Bootstrap::<NoSchema>::flag_bits(TableFlags {
        dupsort,
        integer_key,
    });
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

struct NoSchema;
impl Schema for NoSchema {
    const TABLES: &'static [TableInfo] = &[];
}
