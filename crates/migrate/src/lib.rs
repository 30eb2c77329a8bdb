//! Tabula's startup step: the one place tables are created, verified, migrated and recorded.
//!
//! [`open`] runs before any table handle exists. It reads the schema record from the reserved
//! meta table, applies pending [`Migrations`] steps in order, creates missing tables, checks
//! every existing table's stored flags and codec descriptors against the declaration, writes the
//! record, commits, and only then publishes the [`Db`] with every handle in its array. A
//! read-only open verifies instead of creating. Applications reach it through the facade as
//! `tabula::open::<Schema>(path, options)` or `tabula::open_with(path, options, &migrations)`.
//!
//! # Migration guide
//!
//! When a release changes its tables, declare a step that brings old databases along, next to
//! the schema, and open with it:
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tabula::{Migrations, Options, Schema, Table};
//!
//! // Version 1 stored `AccountV1` in a table called "balances".
//! #[derive(Serialize, Deserialize)]
//! struct AccountV1 { balance: u64 }
//!
//! // Version 2 renames it to "accounts" and adds a field.
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! struct Account { balance: u64, nonce: u32 }
//!
//! #[derive(Table)]
//! #[table(name = "accounts", key = u64, value = Account)]
//! struct Accounts;
//!
//! #[derive(Schema)]
//! struct App(Accounts);
//!
//! fn migrations() -> Migrations {
//!     Migrations::new().step(2, "accounts-with-nonce", |m| {
//!         m.rename_table("balances", "accounts");
//!         m.transform::<Accounts, AccountV1>(|old| Account { balance: old.balance, nonce: 0 });
//!     })
//! }
//!
//! # fn main() -> tabula::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! let (db, report) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations())?;
//! // A new database is created at the latest version: no step runs.
//! assert!(report.applied.is_empty());
//! assert_eq!(report.version, 2);
//! # Ok(()) }
//! ```
//!
//! What a step can do ([`Step`]): [`create_table`](Step::create_table),
//! [`drop_table`](Step::drop_table), [`rename_table`](Step::rename_table),
//! [`transform`](Step::transform) every value from an old type to the new one,
//! [`rekey`](Step::rekey) every entry, [`copy`](Step::copy) a table into another, and
//! [`run`](Step::run) arbitrary code with typed access to any table ([`MigrationTx`]).
//!
//! The rules `open` follows:
//!
//! - Only pending steps run (versions above the database's), in order, each once. Every applied
//!   step is recorded with its version, name and a checksum of its declaration; reopening is a
//!   no-op.
//! - A database at a newer version than the code's last step is refused: no accidental
//!   downgrade. A recorded step whose name or checksum differs from the code's step of the same
//!   version is refused too: released steps must not change (add a new step instead).
//! - A table whose stored key or value descriptor — or, for serde values, its structural shape
//!   (field names and types, traced with `serde-reflection`) — differs from the declaration, with
//!   no step covering it, is refused with an error naming the table, both descriptors and the
//!   step to add. A changed field is caught even if nobody bumped a version.
//! - Long operations (transform, rekey, copy) run in batches of
//!   [`batch_size`](Migrations::batch_size) entries. Each batch commits together with the
//!   operation's progress (the last key done) in the meta table, so a crash or kill resumes after
//!   the last batch, with nothing lost or duplicated. The tables stay unpublished until every
//!   step is done.
//! - That progress belongs to one exact step declaration: it is recorded with the step's name
//!   and checksum, and resumed only by a step with both unchanged. A step changed while it was
//!   interrupted is refused, naming the step: restore the declaration that was running, open
//!   once to let it finish, then put the change in a new step.
//! - While a step is in progress (interrupted after some batches) only a release that declares
//!   it opens the file: any other refuses it, read-only too ("a migration to version N (`name`)
//!   is in progress; open with the release that declares it to finish it"). The record is then
//!   stored in a format that Tabula releases from before this rule refuse as well ("written by
//!   a newer Tabula"), and returns to the format every release reads when the step is done.
//! - [`plan`] tells what `open` would do without writing anything; [`Migrations::on_progress`]
//!   (or `with_progress_bar` with the `progress` feature) shows progress; `tracing` events mark
//!   each step begun and finished with counts and duration.

#![deny(missing_docs)]

mod record;
mod run;
mod steps;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

pub use record::{
    AppliedStep, RECORD_FORMAT, RecordProblem, SCHEMA_RECORD_KEY, SchemaRecord, StepProgress,
    TableRecord,
};
pub use run::MigrationTx;
pub use steps::{DEFAULT_BATCH, Migrations, Progress, Step};
use tabula_core::__private::{Bootstrap, META_TABLE};
use tabula_core::{Db, Error, Options, Result, Schema, TableFlags, TableInfo};

use crate::record::{LegacyProgress, PROGRESS_KEY};
use crate::steps::Op;

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

/// Opens the database at `path` with schema `S` and no migration steps (schema version 1).
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
/// - [`Error::SchemaRecord`] when the record is unreadable or from a newer Tabula;
/// - [`Error::Migration`] when the database was migrated past version 1, or a migration step
///   is in progress (interrupted) in it: only the release that declares the step may open it.
///
/// Nothing is written when an error is returned.
pub fn open<S: Schema>(path: impl AsRef<Path>, options: Options) -> Result<Db<S>> {
    open_with::<S>(path, options, &Migrations::new()).map(|(db, _)| db)
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
    open_with::<S>(path, options, &Migrations::new())
}

/// Opens the database at `path` with schema `S`, first applying the pending steps of
/// `migrations`; returns the database and what was done.
///
/// # Errors
///
/// As [`open`], plus [`Error::Migration`] when the database is newer than the code, a recorded
/// step differs from the code, a step cannot run, or steps are pending on a read-only open. A
/// step interrupted by an error (or a crash) keeps the batches it committed and resumes at the
/// next open by code that declares it unchanged; code that declares it differently, or not at
/// all, gets [`Error::Migration`] naming the step and what to do, and opens nothing.
pub fn open_with<S: Schema>(
    path: impl AsRef<Path>,
    options: Options,
    migrations: &Migrations,
) -> Result<(Db<S>, Report)> {
    let path = path.as_ref();
    let started = Instant::now();
    let mut boot = Bootstrap::<S>::begin(path, &options)?;
    let stored = read_record(&mut boot)?;
    let mut record = stored.clone().unwrap_or_else(SchemaRecord::empty);
    let mut report = Report::default();

    if stored.is_none() {
        // A new database starts at the latest version: there is nothing to migrate.
        record.version = migrations.version();
    } else {
        let pending = pending_steps(&record, migrations)?;
        let legacy = read_legacy_progress(&mut boot)?;
        let mut resume = resume_state(&record, legacy, &pending, migrations)?;
        if let Some(first) = pending.first()
            && boot.is_read_only()
        {
            let interrupted = match &resume {
                Some(p) => format!(
                    " (step {} `{}` was interrupted after {} entries of operation {} and \
                     resumes there)",
                    p.version,
                    p.name,
                    p.done,
                    p.op + 1
                ),
                None => String::new(),
            };
            return Err(Error::Migration {
                version: first.version,
                step: first.name.to_string(),
                message: format!(
                    "{} migration step(s) are pending{interrupted} and a read-only open cannot \
                     apply them; open the database read-write once",
                    pending.len()
                ),
            });
        }
        for step in pending {
            run::apply_step(&mut boot, step, &mut record, resume.take(), migrations)?;
            report.applied.push((step.version, step.name));
        }
    }

    for (id, info) in S::TABLES.iter().enumerate() {
        let declared = TableRecord::of(info);
        let dbi = match boot.find_schema_table(info.name, info.flags)? {
            Some(existing) => {
                let declared_bits = Bootstrap::<S>::flag_bits(info.flags);
                if existing.flags != declared_bits {
                    return Err(Error::SchemaMismatch {
                        table: info.name.to_string(),
                        what: "flags",
                        stored: describe_bits(existing.flags),
                        declared: info.flags.to_string(),
                        advice: if existing.entries == 0 {
                            format!(
                                "the table is empty: add a migration step that drops it, e.g. \
                                 `.step({}, \"recreate-{}\", |m| m.drop_table(\"{}\"))`",
                                record.version.max(migrations.version()) + 1,
                                info.name,
                                info.name
                            )
                        } else {
                            "changing flags needs a migration step that rewrites the table \
                             (`transform` or `rekey`) into the new flags"
                                .to_string()
                        },
                    });
                }
                if let Some(old) = record.tables.get(info.name) {
                    check_record(
                        info,
                        old,
                        &declared,
                        record.version.max(migrations.version()),
                    )?;
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

    report.version = record.version;
    record.settle_format();
    if !boot.is_read_only() && stored.as_ref() != Some(&record) {
        let bytes = record.encode();
        boot.meta_put(SCHEMA_RECORD_KEY, &bytes)?;
        report.record_written = true;
    }
    let db = boot.finish()?;
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

/// The steps above the database's version, after checking the recorded history against the
/// code.
fn pending_steps<'m>(record: &SchemaRecord, migrations: &'m Migrations) -> Result<Vec<&'m Step>> {
    let target = migrations.version();
    if record.version > target {
        let step = record
            .applied
            .last()
            .map(|s| s.name.clone())
            .unwrap_or_default();
        return Err(Error::Migration {
            version: record.version,
            step,
            message: format!(
                "the database is at schema version {} but this program knows versions up to \
                 {target}; it was written by a newer release. Run the newer release (there is \
                 no automatic downgrade)",
                record.version
            ),
        });
    }
    for applied in &record.applied {
        if let Some(step) = migrations
            .steps
            .iter()
            .find(|s| s.version == applied.version)
        {
            if step.name != applied.name {
                return Err(Error::Migration {
                    version: applied.version,
                    step: applied.name.clone(),
                    message: format!(
                        "the database applied step `{}` at this version but the code declares \
                         `{}`; released steps must not change: restore it and add a new step",
                        applied.name, step.name
                    ),
                });
            }
            let checksum = step.checksum();
            if checksum != applied.checksum {
                return Err(Error::Migration {
                    version: applied.version,
                    step: applied.name.clone(),
                    message: format!(
                        "the step's declaration changed since it was applied (checksum {} then, \
                         {checksum} now); released steps must not change: restore it and add a \
                         new step",
                        applied.checksum
                    ),
                });
            }
        }
    }
    Ok(migrations
        .steps
        .iter()
        .filter(|s| s.version > record.version)
        .map(|s| &**s)
        .collect())
}

/// Reads the progress record an interrupted step left under [`PROGRESS_KEY`] when it ran under
/// a Tabula release from before [`StepProgress`].
fn read_legacy_progress<S: Schema>(boot: &mut Bootstrap<S>) -> Result<Option<LegacyProgress>> {
    let Some(bytes) = boot.meta_get(PROGRESS_KEY)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::SchemaRecord {
            path: boot.path().to_path_buf(),
            message: format!(
                "the migration progress record (`{META_TABLE}[\"{PROGRESS_KEY}\"]`) does not \
                 parse ({e}); the meta table may be damaged"
            ),
        })
}

/// The interrupted step to resume, if any, after checking that it is exactly the step the code
/// declares and the first one pending. Progress belongs to one declaration: resuming it with
/// another would skip the entries it counts as done, so every doubt is a refusal.
fn resume_state(
    record: &SchemaRecord,
    legacy: Option<LegacyProgress>,
    pending: &[&Step],
    migrations: &Migrations,
) -> Result<Option<StepProgress>> {
    let declared = |version: u32| migrations.steps.iter().find(|s| s.version == version);
    let not_declared = |version: u32, name: &str| Error::Migration {
        version,
        step: name.to_string(),
        message: format!(
            "a migration to version {version} (`{name}`) is in progress; open with the release \
             that declares it to finish it. The database is at version {} and this program \
             does not declare step {version} (its steps reach version {}), so it cannot finish \
             the step and must not open the half-migrated tables",
            record.version,
            migrations.version()
        ),
    };
    let progress = match (&record.in_progress, legacy) {
        (Some(p), _) => p,
        (None, Some(old)) if old.version > record.version => {
            // Written by a Tabula that did not record which declaration the progress belongs
            // to: there is no way to tell whether this code's step is the one that ran.
            let Some(step) = declared(old.version) else {
                return Err(not_declared(
                    old.version,
                    "unnamed: recorded by an older Tabula",
                ));
            };
            return Err(Error::Migration {
                version: old.version,
                step: step.name.to_string(),
                message: format!(
                    "a migration to version {} is in progress (interrupted after {} entries of \
                     operation {}), recorded by an older Tabula that did not store the checksum \
                     of the step's declaration, so this program cannot tell whether its step \
                     {} `{}` is the declaration that was running, and resuming a different one \
                     would skip entries. Open the database once with the build that began the \
                     migration (it resumes and finishes the step), then open it with this one",
                    old.version,
                    old.done,
                    old.op + 1,
                    step.version,
                    step.name
                ),
            });
        }
        // Stale progress of a step already applied: nothing to resume.
        (None, _) => return Ok(None),
    };
    let (version, name) = (progress.version, progress.name.as_str());
    if version <= record.version {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "the schema record says the step is in progress but the database is already at \
                 version {}; the record is inconsistent (the `{META_TABLE}` table may be damaged)",
                record.version
            ),
        });
    }
    let Some(step) = declared(version) else {
        return Err(not_declared(version, name));
    };
    if step.name != name {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress, but this program \
                 declares step {version} as `{}`. The progress belongs to the declaration that \
                 was running: restore step {version} `{name}` exactly as it was, open once to \
                 let it finish, then make the change in a new step above version {version}",
                step.name
            ),
        });
    }
    let checksum = step.checksum();
    if checksum != progress.checksum {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress (interrupted after \
                 {} entries of operation {}), but the step's declaration changed since it began \
                 (checksum {} then, {checksum} now). The progress belongs to the declaration \
                 that was running: restore that declaration, open once to let it finish, then \
                 make the change in a new step above version {version}",
                progress.done,
                progress.op + 1,
                progress.checksum
            ),
        });
    }
    if let Some(first) = pending.first()
        && first.version != version
    {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress, but this program \
                 declares step {} `{}` below it, which the database has not applied and which \
                 would have to run first. Finish the migration to version {version} with the \
                 release that began it, and give new steps versions above the database's",
                first.version, first.name
            ),
        });
    }
    if progress.op >= step.ops.len() {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "the recorded progress is at operation {} but the step has {} operations; the \
                 record is inconsistent (the `{META_TABLE}` table may be damaged)",
                progress.op + 1,
                step.ops.len()
            ),
        });
    }
    Ok(Some(progress.clone()))
}

fn check_record(
    info: &TableInfo,
    stored: &TableRecord,
    declared: &TableRecord,
    version: u32,
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
    let next = version + 1;
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

/// What [`open_with`] would do to the database at `path`, found without writing anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// Whether a database exists at the path.
    pub exists: bool,
    /// Its schema version (the code's version for a new database).
    pub version: u32,
    /// The code's schema version.
    pub target: u32,
    /// Steps that would run, in order.
    pub pending: Vec<PlannedStep>,
    /// Whether a step was interrupted and would resume where it stopped (the code declares it
    /// unchanged; otherwise `plan` returns the refusal `open_with` would give).
    pub resumes: bool,
    /// Schema tables that would be created.
    pub create: Vec<&'static str>,
    /// Tables that steps would drop.
    pub drop: Vec<&'static str>,
    /// Problems that would make the open fail (changed descriptors no step covers, changed
    /// flags), one sentence each.
    pub problems: Vec<String>,
}

/// A pending step in a [`Plan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedStep {
    /// The version it migrates to.
    pub version: u32,
    /// Its name.
    pub name: &'static str,
    /// Its operations, described.
    pub operations: Vec<String>,
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.exists {
            writeln!(f, "new database at version {}", self.target)?;
        } else {
            writeln!(
                f,
                "database at version {}, code at version {}",
                self.version, self.target
            )?;
        }
        for step in &self.pending {
            writeln!(f, "  step {} `{}`:", step.version, step.name)?;
            for op in &step.operations {
                writeln!(f, "    - {op}")?;
            }
        }
        if self.resumes {
            writeln!(f, "  (resumes an interrupted step)")?;
        }
        for t in &self.create {
            writeln!(f, "  create table {t}")?;
        }
        for t in &self.drop {
            writeln!(f, "  drop table {t}")?;
        }
        for p in &self.problems {
            writeln!(f, "  problem: {p}")?;
        }
        if self.pending.is_empty() && self.create.is_empty() && self.problems.is_empty() {
            writeln!(f, "  nothing to do")?;
        }
        Ok(())
    }
}

/// What [`open_with`] would do, without writing: pending steps, tables to create or drop, and
/// descriptor changes that no step covers.
///
/// # Errors
///
/// The refusals [`open_with`] would give for the migration history (newer database, changed
/// step, an interrupted step this code does not declare or declares differently), and
/// [`Error::Open`] for a path that is not a database.
pub fn plan<S: Schema>(path: impl AsRef<Path>, migrations: &Migrations) -> Result<Plan> {
    let path = path.as_ref();
    let target = migrations.version();
    let mut plan = Plan {
        target,
        ..Plan::default()
    };
    let data = path.join("mdbx.dat");
    if !path.exists() || (path.is_dir() && !data.exists()) {
        plan.version = target;
        plan.create = S::TABLES.iter().map(|t| t.name).collect();
        return Ok(plan);
    }
    plan.exists = true;
    let mut boot = Bootstrap::<NoSchema>::begin(path, &Options::new().read_only(true))?;
    let record = read_record(&mut boot)?;
    let Some(record) = record else {
        plan.version = target;
        for info in S::TABLES {
            if boot.find_table(info.name)?.is_none() {
                plan.create.push(info.name);
            }
        }
        return Ok(plan);
    };
    plan.version = record.version;
    let pending = pending_steps(&record, migrations)?;
    let legacy = read_legacy_progress(&mut boot)?;
    plan.resumes = resume_state(&record, legacy, &pending, migrations)?.is_some();
    // Simulate the steps on table names and records.
    let mut names: BTreeSet<String> = record.tables.keys().cloned().collect();
    for info in S::TABLES {
        if boot.find_table(info.name)?.is_some() {
            names.insert(info.name.to_string());
        }
    }
    let mut records: BTreeMap<String, TableRecord> = record.tables.clone();
    let mut rewritten: BTreeSet<String> = BTreeSet::new();
    for step in &pending {
        for op in &step.ops {
            match op {
                Op::Create { name, record, .. } => {
                    names.insert(name.to_string());
                    records.insert(name.to_string(), record.clone());
                    rewritten.insert(name.to_string());
                }
                Op::Drop { name } => {
                    names.remove(*name);
                    records.remove(*name);
                    plan.drop.push(name);
                }
                Op::Rename { from, to } => {
                    names.remove(*from);
                    names.insert(to.to_string());
                    if let Some(r) = records.remove(*from) {
                        records.insert(to.to_string(), r);
                    }
                }
                Op::Rewrite {
                    source,
                    target,
                    record,
                    replace,
                    ..
                } => {
                    let name = if *replace { source } else { target };
                    names.insert(name.to_string());
                    records.insert(name.to_string(), record.clone());
                    rewritten.insert(name.to_string());
                }
                Op::Run { .. } => {}
            }
        }
        plan.pending.push(PlannedStep {
            version: step.version,
            name: step.name,
            operations: step.descriptions(),
        });
    }
    for info in S::TABLES {
        if !names.contains(info.name) {
            plan.create.push(info.name);
            continue;
        }
        let declared = TableRecord::of(info);
        if let Some(stored) = records.get(info.name)
            && let Err(e) = check_record(info, stored, &declared, target)
        {
            plan.problems.push(e.to_string());
        }
        if !rewritten.contains(info.name)
            && let Some(existing) = boot.find_table(info.name)?
            && existing.flags != Bootstrap::<NoSchema>::flag_bits(info.flags)
        {
            plan.problems.push(format!(
                "table `{}`: stored flags are `{}` but the schema declares `{}`",
                info.name,
                describe_bits(existing.flags),
                info.flags
            ));
        }
    }
    drop(boot);
    Ok(plan)
}

/// Reads the schema record of the database at `path` without opening any table.
///
/// # Errors
///
/// As [`open`] for a read-only open.
pub fn read_schema_record(path: impl AsRef<Path>) -> Result<Option<SchemaRecord>> {
    let mut boot = Bootstrap::<NoSchema>::begin(path.as_ref(), &Options::new().read_only(true))?;
    let record = read_record(&mut boot)?;
    drop(boot);
    Ok(record)
}

fn read_record<S: Schema>(boot: &mut Bootstrap<S>) -> Result<Option<SchemaRecord>> {
    let Some(bytes) = boot.meta_get(SCHEMA_RECORD_KEY)? else {
        return Ok(None);
    };
    match SchemaRecord::parse(&bytes) {
        Ok(record) => Ok(Some(record)),
        Err(RecordProblem::Damaged(e)) => Err(Error::SchemaRecord {
            path: boot.path().to_path_buf(),
            message: format!("it does not parse ({e}); the `{META_TABLE}` table may be damaged"),
        }),
        Err(RecordProblem::Newer(format)) => Err(Error::SchemaRecord {
            path: boot.path().to_path_buf(),
            message: format!(
                "it has format {format} but this Tabula reads format {RECORD_FORMAT} at most: \
                 the database was written by a newer Tabula; upgrade the application"
            ),
        }),
    }
}

fn describe_bits(bits: u32) -> String {
    let flag = |dupsort, integer_key| {
        Bootstrap::<NoSchema>::flag_bits(TableFlags {
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

/// A schema without tables, for looking at a file without opening any table.
struct NoSchema;
impl Schema for NoSchema {
    const TABLES: &'static [TableInfo] = &[];
}
