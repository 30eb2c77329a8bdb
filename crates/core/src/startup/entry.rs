//! The application's ways in: [`open`], [`open_with_report`] and [`open_with`], re-exported by
//! the facade as `tabula::open` and the like. Each runs the startup path
//! ([`startup::open`](super::open)); `open_with` takes the migration steps as an [`Upgrade`]
//! (`tabula-migrate`'s `Migrations`), the others open a program without steps ([`NoSteps`]).

use std::path::Path;

use super::history::NoSteps;
use super::open::{Report, Upgrade};
use crate::error::Result;
use crate::options::Options;
use crate::state::Db;
use crate::table::Schema;

/// Opens the database at `path` with schema `S` and no migration steps (schema version 1).
///
/// Creates missing tables (read-write opens), checks every existing table's stored flags and
/// codec descriptors against the declaration, records the schema in the meta table, commits,
/// and then returns the [`Db`] whose table handles are all open. No table is opened after this.
///
/// ```
/// # use tabula::__doc::*;
/// # let dir = temp_dir();
/// let db = tabula::open::<App>(dir.path(), Options::new())?;
/// assert_eq!(db.tables().len(), App::TABLES.len());
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// - [`Error::Open`](crate::Error::Open) when the path is not a database, is damaged, or
///   cannot be created;
/// - [`Error::SchemaMismatch`](crate::Error::SchemaMismatch) naming the table, what is stored
///   and what is declared;
/// - [`Error::TableMissing`](crate::Error::TableMissing) when a read-only open lacks a declared
///   table;
/// - [`Error::IndexNotBuilt`](crate::Error::IndexNotBuilt) when a read-only open finds an index
///   built for another declaration or one whose build was interrupted;
/// - [`Error::SchemaRecord`](crate::Error::SchemaRecord) when the record is unreadable or from
///   a newer Tabula;
/// - [`Error::Migration`](crate::Error::Migration) when the database was migrated past version
///   1, or a migration step is in progress (interrupted) in it: only the release that declares
///   the step may open it.
///
/// Nothing is written when an error is returned.
pub fn open<S: Schema>(path: impl AsRef<Path>, options: Options) -> Result<Db<S>> {
    open_with_report::<S>(path, options).map(|(db, _)| db)
}

/// [`open`], also returning what the step did.
///
/// ```
/// # use tabula::__doc::*;
/// # let dir = temp_dir();
/// let (db, report) = tabula::open_with_report::<App>(dir.path(), Options::new())?;
/// assert_eq!(report.created.len(), App::TABLES.len()); // a new database
/// # drop(db);
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// As [`open`].
pub fn open_with_report<S: Schema>(
    path: impl AsRef<Path>,
    options: Options,
) -> Result<(Db<S>, Report)> {
    open_with::<S>(path, options, &NoSteps)
}

/// Opens the database at `path` with schema `S`, first applying the pending steps of
/// `migrations` (`tabula::Migrations`, or any [`Upgrade`]); returns the database and what was
/// done.
///
/// ```
/// # use tabula::__doc::*;
/// # let dir = temp_dir();
/// let migrations = tabula::Migrations::new();
/// let (db, report) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
/// assert_eq!(report.version, 1);
/// # drop(db);
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// As [`open`], plus [`Error::Migration`](crate::Error::Migration) when the database is newer
/// than the code, a recorded step differs from the code, a step cannot run, or steps are
/// pending on a read-only open. A step interrupted by an error (or a crash) keeps the batches
/// it committed and resumes at the next open by code that declares it unchanged; code that
/// declares it differently, or not at all, gets `Error::Migration` naming the step and what to
/// do, and opens nothing.
pub fn open_with<S: Schema>(
    path: impl AsRef<Path>,
    options: Options,
    migrations: &dyn Upgrade,
) -> Result<(Db<S>, Report)> {
    super::open::<S>(path.as_ref(), &options, migrations)
}
