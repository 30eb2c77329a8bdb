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
//!         m.rename_table::<Accounts>("balances");
//!         m.transform::<Accounts, AccountV1>(|old| Account { balance: old.balance, nonce: 0 });
//!     })
//! }
//!
//! # fn main() -> tabula::Result<()> {
//! # let dir = tabula::__doc::temp_dir();
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
//! - A table whose stored key encoding, value codec, value version or — for serde values — value
//!   structure (every field and every variant of every enum, wherever it sits, traced at open)
//!   differs from the declaration, with no step covering it, is refused with an error naming the
//!   table and its struct, what changed (`Event.kinds[_]` (`Kind`): variant `C` added) and the
//!   step to add. A changed field is caught even if nobody bumped a version; a value type moved,
//!   renamed, imported differently or aliased is not a change when its structure is the same.
//!   A value type whose structure cannot be traced must state `#[table(value_version = N)]`, and
//!   raise it (with a step) when it changes.
//! - Long operations (transform, rekey, copy) run in batches of
//!   [`batch_size`](Migrations::batch_size) entries. Each batch commits together with the
//!   operation's progress (the last key done) in the meta table, so a crash or kill resumes after
//!   the last batch, with nothing lost or duplicated. The tables stay unpublished until every
//!   step is done. A transform of a table declared `history` converts the values before that
//!   its history records too, after the rows, in batches that resume the same way.
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
#![forbid(unsafe_code)]

mod run;
mod steps;
mod tx;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub use steps::{DEFAULT_BATCH, Migrations, Progress, Step};
use tabula_core::record::{SchemaRecord, TableRecord};
pub use tabula_core::startup::Report;
// The ways in live in core (`tabula_core::open` and the like); re-exported here for code that
// names them through this crate.
use tabula_core::startup::{self, Bootstrap, Upgrade, check_table, data_file, is_reserved};
#[cfg(doc)]
use tabula_core::{Db, Error};
use tabula_core::{Options, Result, Schema};
pub use tabula_core::{open, open_with, open_with_report};
pub use tx::MigrationTx;

use crate::steps::Op;

/// The migration steps run by the startup path, before it verifies the schema's tables.
impl Upgrade for Migrations {
    fn version(&self) -> u32 {
        Migrations::version(self)
    }

    /// An index build after the steps reaches [`Migrations::on_progress`] (and the progress
    /// bar) as step `build index` at the code's version, operation `build index INDEX of
    /// TABLE`.
    fn index_progress(&self, index: &str, table: &str, done: u64, total: u64) {
        if let Some(f) = &self.progress {
            f(&Progress {
                version: self.version(),
                step: "build index",
                operation: &format!("build index {index} of {table}"),
                done,
                total,
            });
        }
    }

    /// No step pending or in progress, and the steps applied as declared
    /// ([`nothing_pending`](startup::nothing_pending)): an open that finds nothing else to
    /// change takes no write transaction.
    fn has_work(&self, boot: &mut Bootstrap, record: &SchemaRecord) -> bool {
        !startup::nothing_pending(boot, record, &self.steps)
    }

    fn upgrade(
        &self,
        boot: &mut Bootstrap,
        record: &mut SchemaRecord,
        stored: bool,
    ) -> Result<Vec<(u32, &'static str)>> {
        startup::upgrade(
            boot,
            record,
            stored,
            &self.steps,
            |boot, step, record, resume| {
                run::apply_step(boot, step, record, resume, self).map(|_| ())
            },
        )
    }
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
    /// Secondary indexes the open would build or rebuild from their tables' rows, in schema
    /// order, each with why.
    pub indexes: Vec<PlannedIndex>,
    /// Problems that would make the open fail, one sentence each: for each table, the refusal
    /// [`open_with`] would give (changed flags or descriptors that no step covers, with the step
    /// to add), and declarations it would refuse.
    pub problems: Vec<String>,
}

/// An index a [`Plan`] would build or rebuild.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlannedIndex {
    /// The index.
    pub name: &'static str,
    /// The table it indexes.
    pub table: &'static str,
    /// Why it is built: it is new, it was redeclared, or a migration step runs (after one,
    /// every index is rebuilt from its table, since a step may rewrite rows without them).
    pub why: &'static str,
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
        for i in &self.indexes {
            writeln!(
                f,
                "  build index {} of table {} ({})",
                i.name, i.table, i.why
            )?;
        }
        for p in &self.problems {
            writeln!(f, "  problem: {p}")?;
        }
        if self.pending.is_empty()
            && self.create.is_empty()
            && self.indexes.is_empty()
            && self.problems.is_empty()
        {
            writeln!(f, "  nothing to do")?;
        }
        Ok(())
    }
}

/// What [`open_with`] would do, without writing: pending steps, tables to create or drop, the
/// secondary indexes it would build or rebuild (and why), and descriptor changes that no step
/// covers.
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
    // Either layout: a database directory, or the data file itself (`Options::no_sub_dir`).
    let no_sub_dir = path.is_file();
    if !data_file(path, no_sub_dir).exists() {
        plan.version = target;
        plan.create = S::TABLES.iter().map(|t| t.name).collect();
        return Ok(plan);
    }
    plan.exists = true;
    let options = Options::new().read_only(true).no_sub_dir(no_sub_dir);
    let mut boot = Bootstrap::begin(path, &options, 0)?;
    let record = boot.read_record()?;
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
    let pending = startup::pending_steps(&record, &migrations.steps)?;
    let legacy = startup::read_legacy_progress(&mut boot)?;
    plan.resumes = startup::resume_state(&record, legacy, &pending, &migrations.steps)?.is_some();
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
                    if is_reserved(name) {
                        plan.problems.push(format!(
                            "step {} `{}` drops `{name}`, a name reserved for Tabula's own tables",
                            step.version, step.name
                        ));
                        continue;
                    }
                    names.remove(*name);
                    records.remove(*name);
                    plan.drop.push(name);
                }
                Op::Rename { from, to } => {
                    if is_reserved(from) {
                        plan.problems.push(format!(
                            "step {} `{}` renames `{from}`, a name reserved for Tabula's own \
                             tables",
                            step.version, step.name
                        ));
                        continue;
                    }
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
                    ..
                } => {
                    let name = target.unwrap_or(source);
                    names.insert(name.to_string());
                    records.insert(name.to_string(), record.clone());
                    rewritten.insert(name.to_string());
                }
                Op::Run { .. } => {}
                #[cfg(feature = "compression")]
                Op::TrainZstd { .. } => {}
            }
        }
        plan.pending.push(PlannedStep {
            version: step.version,
            name: step.name,
            operations: step.descriptions(),
        });
    }
    let declared = match startup::declare(S::TABLES) {
        Ok(declared) => declared,
        Err(e) => {
            plan.problems.push(e.to_string());
            S::TABLES.iter().map(TableRecord::of).collect()
        }
    };
    // The indexes the open would build: as its startup step decides (`startup::open`).
    for (info, declared) in S::TABLES.iter().zip(&declared) {
        let Some(index) = info.index else { continue };
        let why = if !plan.pending.is_empty() {
            "a migration step runs: every index is rebuilt from its table"
        } else if !names.contains(info.name) || !records.contains_key(info.name) {
            "new"
        } else if records.get(info.name) != Some(declared) {
            "redeclared: its version, source or uniqueness changed"
        } else {
            continue;
        };
        plan.indexes.push(PlannedIndex {
            name: info.name,
            table: index.source,
            why,
        });
    }
    for (info, declared) in S::TABLES.iter().zip(&declared) {
        if !names.contains(info.name) {
            plan.create.push(info.name);
            continue;
        }
        // The open's checks, on the records as the steps leave them: what `open_with` would
        // refuse for this table. A table a step rewrites gets the declared flags.
        let existing = match rewritten.contains(info.name) {
            true => None,
            false => boot.find_table(info.name)?,
        };
        let stored = records.get(info.name).map(|stored| (stored, declared));
        if let Err(e) = check_table(info, existing.as_ref(), stored, target + 1) {
            plan.problems.push(e.to_string());
        }
    }
    drop(boot);
    Ok(plan)
}
