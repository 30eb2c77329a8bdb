//! Declaring migrations: [`Migrations`], the steps and the operations a step lists.

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use tabula_core::startup::{
    DeclaredStep, decode_stored_key, decode_stored_value, encode_stored_key, encode_stored_value,
};
use tabula_core::{
    Bincode, DupSort, Error, Key, KeyHex, Part, Result, Table, TableFlags, TableInfo, Value,
};

use tabula_core::record::TableRecord;

/// Progress of a long migration operation, handed to [`Migrations::on_progress`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress<'a> {
    /// The step's version.
    pub version: u32,
    /// The step's name.
    pub step: &'a str,
    /// The operation running, e.g. `transform values of accounts`.
    pub operation: &'a str,
    /// Entries done so far in this operation (including those done before a restart).
    pub done: u64,
    /// Entries in the source table when the operation began. A transform of a table with a
    /// history reports its history's phase as a second operation (`transform values of
    /// accounts: the values before in its history accounts_history`), over every entry of
    /// the history table.
    pub total: u64,
}

type ProgressFn = dyn Fn(&Progress<'_>) + Send + Sync;

/// The ordered migration steps that bring a database up to the current schema version.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use tabula_migrate::Migrations;
/// # use tabula::{Schema, Table};
///
/// #[derive(Serialize, Deserialize)]
/// struct AccountV1 { balance: u64 }
/// #[derive(Serialize, Deserialize)]
/// struct Account { balance: u64, nonce: u32 }
///
/// #[derive(Table)]
/// #[table(name = "accounts", key = u64, value = Account)]
/// struct Accounts;
///
/// let migrations = Migrations::new()
///     .step(2, "rename-balances", |m| m.rename_table::<Accounts>("balances"))
///     .step(3, "add-nonce", |m| {
///         m.transform::<Accounts, AccountV1>(|old| Account { balance: old.balance, nonce: 0 })
///     });
/// assert_eq!(migrations.version(), 3);
/// ```
#[derive(Clone, Default)]
pub struct Migrations {
    pub(crate) steps: Vec<Arc<Step>>,
    pub(crate) progress: Option<Arc<ProgressFn>>,
    pub(crate) batch: Option<usize>,
}

impl fmt::Debug for Migrations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Migrations")
            .field("steps", &self.steps)
            .field("batch", &self.batch_size_or_default())
            .finish()
    }
}

/// Entries per transaction in long operations, unless [`Migrations::batch_size`] says otherwise.
pub const DEFAULT_BATCH: usize = 10_000;

impl Migrations {
    /// No steps: the schema is at version 1.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::Migrations;
    /// # let dir = temp_dir();
    /// let migrations = Migrations::new();
    /// assert_eq!(migrations.version(), 1);
    /// let (_db, report) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(report.version, 1);
    /// assert!(report.applied.is_empty());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn new() -> Self {
        Migrations::default()
    }

    /// Adds the step that migrates the database to `version`, named `name`. `declare` lists its
    /// operations on the [`Step`] builder; they run in that order, once, at the next open.
    ///
    /// ```
    /// # use tabula::{Migrations, Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(name = "balances", key = u64, value = u64)]
    /// # struct Balances;
    /// # #[derive(Schema)]
    /// # struct V1(Balances);
    /// # let dir = tabula::__doc::temp_dir();
    /// # let db = tabula::open::<V1>(dir.path(), Options::new())?;
    /// # db.bulk_load::<Balances>([(1u64, 100u64)])?;
    /// # drop(db);
    /// #[derive(Table)]
    /// #[table(name = "accounts", key = u64, value = u64)]
    /// struct Accounts;
    /// #[derive(Schema)]
    /// struct V2(Accounts);
    ///
    /// let migrations = Migrations::new().step(2, "rename-balances", |m| {
    ///     m.rename_table::<Accounts>("balances");
    /// });
    /// // A database at version 1 (with a `balances` table) is migrated when it is opened.
    /// let (db, report) = tabula::open_with::<V2>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(report.applied, [(2, "rename-balances")]);
    /// assert_eq!(db.read()?.get::<Accounts>(&1)?, Some(100));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Panics
    ///
    /// When `version` is 1 or less (version 1 is the initial schema, so the first step is 2),
    /// not greater than the previous step's, or the name is empty: a programming error in the
    /// declaration, found the first time the list is built.
    pub fn step(
        mut self,
        version: u32,
        name: &'static str,
        declare: impl FnOnce(&mut Step),
    ) -> Self {
        assert!(
            version > 1,
            "migration step `{name}` has version {version}, but version 1 is the initial \
             schema (the tables a new database is created with, before any step): the first \
             step is version 2"
        );
        if let Some(previous) = self.steps.last() {
            assert!(
                version > previous.version,
                "migration step `{name}` has version {version}, but the step before it \
                 (`{}`) has version {}: versions must increase",
                previous.name,
                previous.version
            );
        }
        assert!(!name.is_empty(), "migration step {version} needs a name");
        let mut step = Step {
            version,
            name,
            ops: Vec::new(),
        };
        declare(&mut step);
        self.steps.push(Arc::new(step));
        self
    }

    /// Calls `f` as long operations progress (after every batch).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::Migrations;
    /// # let (dir, db) = open()?; // at version 1
    /// # db.bulk_load::<Numbers>((1..=5u64).map(|k| (k, k)))?;
    /// # drop(db);
    /// use std::sync::{Arc, Mutex};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let migrations = Migrations::new()
    ///     .on_progress(move |p| sink.lock().unwrap().push((p.done, p.total)))
    ///     .step(2, "cents", |m| m.transform::<Numbers, u64>(|units| units * 100));
    /// let (db, _) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(*seen.lock().unwrap(), [(5, 5)]); // one batch of the 5 entries
    /// assert_eq!(db.read()?.get::<Numbers>(&2)?, Some(200));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn on_progress(mut self, f: impl Fn(&Progress<'_>) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Shows an `indicatif` progress bar on stderr for long operations.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::Migrations;
    /// # let dir = temp_dir();
    /// let migrations = Migrations::new()
    ///     .with_progress_bar()
    ///     .step(2, "create-names", |m| m.create_table::<Names>());
    /// assert_eq!(migrations.version(), 2);
    /// let (_db, report) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(report.version, 2); // a new database starts at the latest version
    /// # Ok::<(), tabula::Error>(())
    /// ```
    #[cfg(feature = "progress")]
    pub fn with_progress_bar(self) -> Self {
        let bar = indicatif::ProgressBar::hidden();
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:30}] {pos}/{len} entries ({per_sec}, eta {eta})",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        self.on_progress(move |p| {
            bar.set_length(p.total.max(p.done));
            bar.set_position(p.done);
            bar.set_message(format!("v{} {}: {}", p.version, p.step, p.operation));
            if p.done >= p.total {
                bar.finish();
                bar.reset();
            }
        })
    }

    /// Entries per transaction in long operations (default 10,000). Each batch commits with
    /// the operation's progress, so an interrupted migration resumes after the last batch.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::Migrations;
    /// # let (dir, db) = open()?; // at version 1
    /// # db.bulk_load::<Numbers>((1..=5u64).map(|k| (k, k)))?;
    /// # drop(db);
    /// use std::sync::{Arc, Mutex};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let migrations = Migrations::new()
    ///     .batch_size(2)
    ///     .on_progress(move |p| sink.lock().unwrap().push(p.done))
    ///     .step(2, "cents", |m| m.transform::<Numbers, u64>(|units| units * 100));
    /// tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(*seen.lock().unwrap(), [2, 4, 5]); // one commit per batch
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn batch_size(mut self, entries: usize) -> Self {
        self.batch = Some(entries.max(1));
        self
    }

    pub(crate) fn batch_size_or_default(&self) -> usize {
        self.batch.unwrap_or(DEFAULT_BATCH)
    }

    /// The schema version these steps reach: the last step's version, or 1.
    ///
    /// ```
    /// use tabula::Migrations;
    ///
    /// assert_eq!(Migrations::new().version(), 1);
    /// let migrations = Migrations::new()
    ///     .step(2, "drop-logs", |m| m.drop_table("logs"))
    ///     .step(5, "drop-cache", |m| m.drop_table("cache"));
    /// assert_eq!(migrations.version(), 5);
    /// ```
    pub fn version(&self) -> u32 {
        self.steps.last().map_or(1, |s| s.version)
    }
}

/// What the startup path's history check needs of a step.
impl DeclaredStep for Step {
    fn version(&self) -> u32 {
        self.version
    }
    fn name(&self) -> &'static str {
        self.name
    }
    fn checksum(&self) -> String {
        Step::checksum(self)
    }
    fn checksum_matches(&self, recorded: &str) -> bool {
        Step::checksum_matches(self, recorded)
    }
    fn operations(&self) -> usize {
        self.ops.len()
    }
}

/// One migration step: a version, a name, and the operations it lists.
pub struct Step {
    pub(crate) version: u32,
    pub(crate) name: &'static str,
    pub(crate) ops: Vec<Op>,
}

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Step")
            .field("version", &self.version)
            .field("name", &self.name)
            .field("ops", &self.descriptions())
            .finish()
    }
}

pub(crate) type MapFn = dyn Fn(&[u8], &[u8]) -> Result<(Vec<u8>, Vec<u8>)> + Send + Sync;
pub(crate) type RunFn = dyn Fn(&mut crate::tx::MigrationTx<'_>) -> Result<()> + Send + Sync;

/// What a step does, in declaration order.
pub(crate) enum Op {
    Create {
        name: &'static str,
        flags: TableFlags,
        record: TableRecord,
    },
    Drop {
        name: &'static str,
    },
    Rename {
        from: &'static str,
        to: &'static str,
    },
    /// Reads every entry of `source`, maps it, and writes it to `target`, or, when `target` is
    /// `None`, to the bootstrap's scratch table for `source`, which replaces `source` at the end.
    Rewrite {
        what: String,
        source: &'static str,
        target: Option<&'static str>,
        flags: TableFlags,
        record: TableRecord,
        in_order: bool,
        unique: bool,
        map: Box<MapFn>,
        /// The map changes values only, keys stay (a `transform`): a history of `source` is
        /// converted with the same map after the rows (`run::convert_history`). Without it,
        /// the operation is refused on a table whose history the database holds.
        converts_history: bool,
        /// The structural declaration that goes into the checksum.
        declaration: String,
        /// The declarations Tabula releases before complete tracing gave this operation (their
        /// shapes were `None` where serde-reflection could not finish): a step they applied is
        /// recognised by any of these.
        legacy: Vec<String>,
    },
    Run {
        label: &'static str,
        f: Box<RunFn>,
    },
    /// Trains a zstd dictionary from `samples` values of `table`, stores it as the current one
    /// of `dictionary`, and re-encodes the table's values with it (through a scratch table).
    #[cfg(feature = "compression")]
    TrainZstd {
        table: &'static str,
        dictionary: &'static str,
        level: i32,
        flags: TableFlags,
        samples: usize,
        size: usize,
    },
}

impl Op {
    pub(crate) fn describe(&self) -> String {
        match self {
            Op::Create {
                name,
                flags,
                record,
            } => format!(
                "create table {name} (flags {flags}; key {}; value {})",
                record.key, record.value
            ),
            Op::Drop { name } => format!("drop table {name}"),
            Op::Rename { from, to } => format!("rename table {from} to {to}"),
            Op::Rewrite { what, .. } => what.clone(),
            Op::Run { label, .. } => format!("run {label}"),
            #[cfg(feature = "compression")]
            Op::TrainZstd {
                table,
                dictionary,
                samples,
                size,
                ..
            } => format!(
                "train zstd dictionary {dictionary} (at most {size} bytes, from up to {samples} \
                 values of {table}) and re-encode {table}"
            ),
        }
    }

    fn declaration(&self) -> String {
        match self {
            Op::Rewrite { declaration, .. } => declaration.clone(),
            Op::Create { record, .. } => {
                format!(
                    "{} shape {:?}{}",
                    self.describe(),
                    record.shape,
                    version_suffix(record.value_version)
                )
            }
            _ => self.describe(),
        }
    }

    /// What earlier releases wrote into the checksum for this operation; see `Op::Rewrite`'s
    /// `legacy`.
    fn legacy_declarations(&self) -> Vec<String> {
        match self {
            Op::Rewrite { legacy, .. } => legacy.clone(),
            Op::Create { record, .. } => shapes_or_none(&record.shape)
                .into_iter()
                .map(|shape| format!("{} shape {shape:?}", self.describe()))
                .collect(),
            _ => vec![self.describe()],
        }
    }
}

/// ` version N` for a stated value version (nothing otherwise, as in earlier releases).
fn version_suffix(version: Option<u32>) -> String {
    version.map(|v| format!(" version {v}")).unwrap_or_default()
}

/// The shapes an earlier release may have recorded for a shape traced now: the same, or none
/// (where serde-reflection could not finish the type).
fn shapes_or_none(shape: &Option<String>) -> Vec<Option<String>> {
    match shape {
        Some(_) => vec![shape.clone(), None],
        None => vec![None],
    }
}

/// FNV-1a, 64 bit, of a step's declaration: stable across Rust versions and platforms.
fn fnv(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Legacy checksums tried per step at most (each shape-bearing operation doubles them).
const MAX_LEGACY_CHECKSUMS: usize = 4096;

impl Step {
    /// The operations, described in words.
    ///
    /// ```
    /// use tabula::Migrations;
    ///
    /// Migrations::new().step(2, "cleanup", |m| {
    ///     m.drop_table("sessions");
    ///     assert_eq!(m.descriptions(), ["drop table sessions"]);
    /// });
    /// ```
    pub fn descriptions(&self) -> Vec<String> {
        self.ops.iter().map(Op::describe).collect()
    }

    /// Checksum of the step's declaration: version, name, and each operation with the tables,
    /// flags and value shapes it involves (not the closures' code, which cannot be hashed: give
    /// a step a new version when you change what its code does). Recorded when the step is
    /// applied; a later open refuses a step whose declaration changed since.
    ///
    /// ```
    /// use tabula::Migrations;
    ///
    /// let mut sums = Vec::new();
    /// for table in ["sessions", "tokens"] {
    ///     Migrations::new().step(2, "cleanup", |m| {
    ///         m.drop_table(table);
    ///         sums.push(m.checksum());
    ///     });
    /// }
    /// assert_eq!(sums[0].len(), 16);
    /// assert_ne!(sums[0], sums[1], "another table is another declaration");
    /// ```
    pub fn checksum(&self) -> String {
        let mut text = format!("{}\n{}\n", self.version, self.name);
        for op in &self.ops {
            text.push_str(&op.declaration());
            text.push('\n');
        }
        fnv(&text)
    }

    /// Whether `recorded` is this step's checksum, as this release computes it or as a release
    /// before complete tracing did (which recorded no shape for value types it could not trace
    /// to the end, so its checksum of an unchanged step differs).
    pub(crate) fn checksum_matches(&self, recorded: &str) -> bool {
        if self.checksum() == recorded {
            return true;
        }
        let mut texts = vec![format!("{}\n{}\n", self.version, self.name)];
        for op in &self.ops {
            let alternatives = op.legacy_declarations();
            if texts.len() * alternatives.len() > MAX_LEGACY_CHECKSUMS {
                return false;
            }
            texts = texts
                .iter()
                .flat_map(|text| alternatives.iter().map(move |alt| format!("{text}{alt}\n")))
                .collect();
        }
        texts.iter().any(|text| fnv(text) == recorded)
    }

    /// The step's version.
    ///
    /// ```
    /// tabula::Migrations::new().step(3, "cleanup", |m| assert_eq!(m.version(), 3));
    /// ```
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The step's name.
    ///
    /// ```
    /// tabula::Migrations::new().step(3, "cleanup", |m| assert_eq!(m.name(), "cleanup"));
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Creates table `T` (with its declared flags) if it does not exist. Tables of the schema
    /// are created by `open` anyway; this is for tables a later operation of the step fills.
    ///
    /// ```
    /// use tabula::{Migrations, Table};
    ///
    /// #[derive(Table)]
    /// #[table(name = "archive", key = u64, value = String, dupsort)]
    /// struct Archive;
    ///
    /// Migrations::new().step(2, "archive", |m| {
    ///     m.create_table::<Archive>();
    ///     assert_eq!(
    ///         m.descriptions(),
    ///         ["create table archive (flags dupsort; key u64; value ordered<String>)"]
    ///     );
    /// });
    /// ```
    pub fn create_table<T: Table>(&mut self) {
        let info = TableInfo::of::<T>();
        self.ops.push(Op::Create {
            name: T::NAME,
            flags: T::FLAGS,
            record: TableRecord::of(&info),
        });
    }

    /// Deletes the stored table `name` and everything in it, its sequence too (a table the code
    /// may no longer declare; one created again under the name starts a new sequence at 0). Names reserved for Tabula's own tables (`__tabula…`) are refused when the step
    /// runs.
    ///
    /// ```
    /// use tabula::{Migrations, Options, Schema, Table};
    ///
    /// #[derive(Table)]
    /// #[table(name = "sessions", key = u64, value = String)]
    /// struct Sessions;
    /// #[derive(Table)]
    /// #[table(name = "users", key = u64, value = String)]
    /// struct Users;
    /// #[derive(Schema)]
    /// struct V1(Users, Sessions);
    /// #[derive(Schema)]
    /// struct V2(Users);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// drop(tabula::open::<V1>(dir.path(), Options::new())?);
    /// let migrations = Migrations::new().step(2, "no-sessions", |m| m.drop_table("sessions"));
    /// let (_, report) = tabula::open_with::<V2>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(report.applied, [(2, "no-sessions")]);
    /// # Ok(()) }
    /// ```
    pub fn drop_table(&mut self, name: &'static str) {
        self.ops.push(Op::Drop { name });
    }

    /// Renames the stored table `from` to the name of the declared table `To`, keeping its
    /// contents (and its recorded declaration: a value type that changed too needs a
    /// [`transform`](Step::transform) after the rename). The new name comes from a table
    /// declaration, so a migration step cannot create a table whose name is made at run time.
    ///
    /// ```
    /// use tabula::{Migrations, Options, Schema, Table};
    ///
    /// #[derive(Table)]
    /// #[table(name = "accounts", key = u64, value = u64)]
    /// struct Accounts;
    ///
    /// #[derive(Schema)]
    /// struct App(Accounts);
    ///
    /// // Release 1 called the table "balances".
    /// #[derive(Table)]
    /// #[table(name = "balances", key = u64, value = u64)]
    /// struct Balances;
    /// #[derive(Schema)]
    /// struct AppV1(Balances);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// let db = tabula::open::<AppV1>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Balances>(&1, &100)?;
    /// tx.commit()?;
    /// drop(db);
    ///
    /// let migrations = Migrations::new().step(2, "rename-balances", |m| {
    ///     m.rename_table::<Accounts>("balances");
    /// });
    /// let (db, _) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(db.read()?.get::<Accounts>(&1)?, Some(100));
    /// # Ok(()) }
    /// ```
    pub fn rename_table<To: Table>(&mut self, from: &'static str) {
        self.ops.push(Op::Rename { from, to: To::NAME });
    }

    /// Re-encodes every value of table `T`: each stored value is decoded as `Old` (serde +
    /// bincode, the default codec) and replaced by `f(old)` encoded with `T`'s codec. Keys stay,
    /// and so does the table's [sequence](tabula_core::Tx::next_sequence).
    /// Runs in batches and resumes after an interruption. This is the step the startup step's
    /// advice names when a table's value type changed.
    ///
    /// A table declared `history` keeps its history: after the rows, every value before that
    /// the history records is converted with the same `f` (decoded as `Old`, encoded with
    /// `T`'s codec), in place, in batches with their own resume point (a value is converted
    /// once, however often the step is interrupted), so reads as of a version and unwinds
    /// give `T`'s values. The versions, keys and horizon stay. A value of the history that
    /// does not decode as `Old` fails the step as a row would. A `dupsort` table's history is
    /// not converted (its keys hold the values' subkeys, which the map may change): the step
    /// is refused while the database holds one (drop the history first: the next open starts
    /// it again).
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use tabula::{Migrations, Options, Schema, Table};
    ///
    /// #[derive(Serialize, Deserialize)]
    /// struct OldUser { name: String }
    /// #[derive(Debug, PartialEq, Serialize, Deserialize)]
    /// struct User { name: String, admin: bool }
    ///
    /// #[derive(Table)]
    /// #[table(name = "users", key = u64, value = OldUser)]
    /// struct UsersV1;
    /// #[derive(Schema)]
    /// struct V1(UsersV1);
    /// #[derive(Table)]
    /// #[table(name = "users", key = u64, value = User)]
    /// struct Users;
    /// #[derive(Schema)]
    /// struct V2(Users);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// let db = tabula::open::<V1>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<UsersV1>(&1, &OldUser { name: "ann".into() })?;
    /// tx.commit()?;
    /// drop(db);
    ///
    /// let migrations = Migrations::new().step(2, "users-v2", |m| {
    ///     m.transform::<Users, OldUser>(|old| User { name: old.name, admin: false })
    /// });
    /// let (db, _) = tabula::open_with::<V2>(dir.path(), Options::new(), &migrations)?;
    /// let user = db.read()?.get::<Users>(&1)?;
    /// assert_eq!(user, Some(User { name: "ann".into(), admin: false }));
    /// # Ok(()) }
    /// ```
    pub fn transform<T: Table, Old: DeserializeOwned + serde::Serialize + 'static>(
        &mut self,
        f: impl Fn(Old) -> T::Value + Send + Sync + 'static,
    ) {
        self.transform_with::<T, Bincode<Old>>(f);
    }

    /// [`transform`](Step::transform) with the old values stored by codec `C`, e.g. raw bytes
    /// that become serde values. A table's history is converted with it, as by `transform`.
    ///
    /// ```
    /// use tabula::{Migrations, Options, Raw, Schema, Table};
    ///
    /// #[derive(Table)]
    /// #[table(name = "sizes", key = u64, value = Vec<u8>, codec = Raw)]
    /// struct RawSizes;
    /// #[derive(Schema)]
    /// struct V1(RawSizes);
    /// #[derive(Table)]
    /// #[table(name = "sizes", key = u64, value = u32)]
    /// struct Sizes;
    /// #[derive(Schema)]
    /// struct V2(Sizes);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// let db = tabula::open::<V1>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<RawSizes>(&1, &7u32.to_le_bytes().to_vec())?;
    /// tx.commit()?;
    /// drop(db);
    ///
    /// let migrations = Migrations::new().step(2, "sizes-as-numbers", |m| {
    ///     m.transform_with::<Sizes, Raw>(|bytes| u32::from_le_bytes(bytes.try_into().unwrap()))
    /// });
    /// let (db, _) = tabula::open_with::<V2>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(db.read()?.get::<Sizes>(&1)?, Some(7));
    /// # Ok(()) }
    /// ```
    pub fn transform_with<T: Table, C: Value + 'static>(
        &mut self,
        f: impl Fn(C::Item) -> T::Value + Send + Sync + 'static,
    ) {
        let info = TableInfo::of::<T>();
        let record = TableRecord::of(&info);
        let old_shape = C::shape();
        let text = |old: &Option<String>, new: &Option<String>| {
            format!(
                "transform {} from {} shape {old:?} to {} shape {new:?} flags {}",
                T::NAME,
                C::DESCRIPTOR,
                record.value,
                T::FLAGS
            )
        };
        let declaration = format!(
            "{}{}",
            text(&old_shape, &record.shape),
            version_suffix(record.value_version)
        );
        let legacy = shapes_or_none(&old_shape)
            .iter()
            .flat_map(|old| {
                shapes_or_none(&record.shape)
                    .into_iter()
                    .map(|new| text(old, &new))
                    .collect::<Vec<_>>()
            })
            .collect();
        let map = move |k: &[u8], v: &[u8]| -> Result<(Vec<u8>, Vec<u8>)> {
            let old = C::decode(v).map_err(|source| Error::Decode {
                table: T::NAME,
                part: Part::Value,
                key: KeyHex::new(k),
                source,
            })?;
            let new = f(old);
            Ok((k.to_vec(), encode_stored_value::<T>(k, &new)?))
        };
        self.ops.push(Op::Rewrite {
            what: format!("transform values of {}", T::NAME),
            source: T::NAME,
            target: None,
            flags: T::FLAGS,
            record,
            in_order: !T::FLAGS.dupsort,
            unique: false,
            map: Box::new(map),
            // A `dupsort` table's history is keyed by (key, subkey) — without a subkey, by the
            // value itself — which a map of the values can change: not converted but refused.
            converts_history: !T::FLAGS.dupsort,
            declaration,
            legacy,
        });
    }

    /// Re-encodes a `dupsort` table written by Tabula 0.1.0, which stored a key's values with
    /// bincode (so libmdbx kept them in bincode's byte order): each value is decoded with
    /// bincode as `T::Value` and stored in the table's order-preserving encoding. For a table
    /// with a subkey, `T::Value` is the `(subkey, value)` pair, which decodes what bincode wrote
    /// for a tuple or a struct of those two fields; for another old shape use
    /// [`transform`](Step::transform). The startup step refuses such a table until this runs.
    ///
    /// ```
    /// # use tabula::{Migrations, Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(name = "topics", key = u64, value = String, dupsort)]
    /// struct Topics;
    /// # #[derive(Schema)]
    /// # struct App(Topics);
    /// # let dir = tabula::__doc::temp_dir();
    /// let migrations = Migrations::new().step(2, "reencode-topics", |m| {
    ///     m.reencode_dups::<Topics>();
    /// });
    /// // A new database starts at version 2; one written by Tabula 0.1.0 is re-encoded.
    /// let (db, report) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(report.version, 2);
    /// # let _ = db;
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn reencode_dups<T: DupSort>(&mut self)
    where
        T::Value: DeserializeOwned + serde::Serialize + 'static,
    {
        self.transform::<T, T::Value>(|value| value);
    }

    /// Changes the key of every entry of table `T`: each stored key is decoded as `OldKey` and
    /// replaced by `f(old)`; values stay. Two old keys mapping to one new key is an error (in a
    /// table without `dupsort`). Runs in batches and resumes after an interruption. A table
    /// whose history the database holds is refused: the history records the old keys, which
    /// this step does not convert (drop the history first: the next open starts it again;
    /// [`transform`](Step::transform), which keeps the keys, takes a history along).
    ///
    /// ```
    /// use tabula::{Migrations, Options, Schema, Table};
    ///
    /// #[derive(Table)]
    /// #[table(name = "blocks", key = u32, value = String)]
    /// struct BlocksV1;
    /// #[derive(Schema)]
    /// struct V1(BlocksV1);
    /// #[derive(Table)]
    /// #[table(name = "blocks", key = u64, value = String)]
    /// struct Blocks;
    /// #[derive(Schema)]
    /// struct V2(Blocks);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// let db = tabula::open::<V1>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<BlocksV1>(&7, &"seven".to_string())?;
    /// tx.commit()?;
    /// drop(db);
    ///
    /// let migrations = Migrations::new().step(2, "wide-heights", |m| {
    ///     m.rekey::<Blocks, u32>(u64::from)
    /// });
    /// let (db, _) = tabula::open_with::<V2>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(db.read()?.get::<Blocks>(&7)?, Some("seven".to_string()));
    /// # Ok(()) }
    /// ```
    pub fn rekey<T: Table, OldKey: Key + 'static>(
        &mut self,
        f: impl Fn(OldKey) -> T::Key + Send + Sync + 'static,
    ) {
        let info = TableInfo::of::<T>();
        let record = TableRecord::of(&info);
        let declaration = format!(
            "rekey {} from {} to {} flags {}",
            T::NAME,
            OldKey::DESCRIPTOR,
            record.key,
            T::FLAGS
        );
        let map = move |k: &[u8], v: &[u8]| -> Result<(Vec<u8>, Vec<u8>)> {
            let old = OldKey::decode(k).map_err(|source| Error::Decode {
                table: T::NAME,
                part: Part::Key,
                key: KeyHex::new(k),
                source,
            })?;
            Ok((encode_stored_key::<T>(&f(old)), v.to_vec()))
        };
        self.ops.push(Op::Rewrite {
            what: format!("rekey {}", T::NAME),
            source: T::NAME,
            target: None,
            flags: T::FLAGS,
            record,
            in_order: false,
            unique: !T::FLAGS.dupsort,
            map: Box::new(map),
            converts_history: false,
            legacy: vec![declaration.clone()],
            declaration,
        });
    }

    /// Copies every entry of table `From` into table `To` (created if missing), decoding with
    /// `From`'s codecs and encoding with `To`'s. `From` is left as it is. A `To` whose history
    /// the database holds is refused: the copied rows would not be recorded in it (drop the
    /// history first: the next open starts it again).
    ///
    /// ```
    /// use tabula::{Migrations, Options, Schema, Table};
    ///
    /// #[derive(Table)]
    /// #[table(name = "prices", key = u64, value = u64)]
    /// struct Prices;
    /// #[derive(Table)]
    /// #[table(name = "prices_by_number", key = u64, value = u64, integer_key)]
    /// struct PricesByNumber;
    /// #[derive(Schema)]
    /// struct V1(Prices);
    /// #[derive(Schema)]
    /// struct V2(Prices, PricesByNumber);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// let db = tabula::open::<V1>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Prices>(&3, &30)?;
    /// tx.commit()?;
    /// drop(db);
    ///
    /// let migrations = Migrations::new().step(2, "integer-keyed-prices", |m| {
    ///     m.copy::<Prices, PricesByNumber>()
    /// });
    /// let (db, _) = tabula::open_with::<V2>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(db.read()?.get::<PricesByNumber>(&3)?, Some(30));
    /// # Ok(()) }
    /// ```
    pub fn copy<From: Table, To: Table<Key = From::Key, Value = From::Value>>(&mut self) {
        let info = TableInfo::of::<To>();
        let record = TableRecord::of(&info);
        let declaration = format!(
            "copy {} into {} ({} -> {}, {} -> {})",
            From::NAME,
            To::NAME,
            TableInfo::of::<From>().key_descriptor(),
            record.key,
            TableInfo::of::<From>().value_descriptor(),
            record.value
        );
        let map = |k: &[u8], v: &[u8]| -> Result<(Vec<u8>, Vec<u8>)> {
            let key = decode_stored_key::<From>(k)?;
            let value = decode_stored_value::<From>(k, v)?;
            let new_key = encode_stored_key::<To>(&key);
            let new_value = encode_stored_value::<To>(&new_key, &value)?;
            Ok((new_key, new_value))
        };
        self.ops.push(Op::Rewrite {
            what: format!("copy {} into {}", From::NAME, To::NAME),
            source: From::NAME,
            target: Some(To::NAME),
            flags: To::FLAGS,
            record,
            in_order: false,
            unique: false,
            map: Box::new(map),
            converts_history: false,
            legacy: vec![declaration.clone()],
            declaration,
        });
    }

    /// Trains a zstd dictionary for table `T`, whose codec is
    /// [`ZstdDict`](tabula_core::codec::ZstdDict): samples up to `samples` of its values, spread
    /// over the table (decompressed to the inner codec's bytes), trains a dictionary of at most
    /// `dictionary_size` bytes from them (`zstd::dict::from_samples`), stores it in the
    /// database as the current dictionary of `T`'s dictionary name (older ones stay, so values
    /// written with them still decode), and re-encodes every value of `T` with it (into a
    /// scratch table that then replaces `T`, as [`transform`](Step::transform) does, so the
    /// table's pages shrink with its values).
    /// Needs the `compression` feature.
    ///
    /// The training and the first batch of re-encoded values commit together; the rest runs in
    /// batches and resumes after an interruption like the other steps. zstd wants samples
    /// totalling about 100 times the dictionary size: when the table holds too few values to
    /// train from, the step logs a warning, stores nothing and leaves the values as they are
    /// (still compressed without a dictionary; a later step can train again). Not for
    /// `dupsort` tables (the step fails), nor for a table whose history the database holds:
    /// the values before in the history are not re-encoded by this step (drop the history
    /// first: the next open starts it again).
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use tabula::{Bincode, Migrations, Options, Schema, Table};
    /// use tabula_core::codec::{ZstdDict, ZstdDictionary};
    ///
    /// #[derive(Debug, PartialEq, Serialize, Deserialize)]
    /// struct Receipt {
    ///     status: String,
    ///     memo: String,
    /// }
    /// struct ReceiptDict;
    /// impl ZstdDictionary for ReceiptDict {
    ///     const NAME: &'static str = "receipts-doc";
    /// }
    /// #[derive(Table)]
    /// #[table(name = "receipts", key = u64, value = Receipt,
    ///         codec = ZstdDict<Bincode<Receipt>, ReceiptDict>)]
    /// struct Receipts;
    /// #[derive(Schema)]
    /// struct App(Receipts);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// let receipt = |i: u64| Receipt {
    ///     status: ["settled", "pending"][i as usize % 2].into(),
    ///     memo: format!("invoice {i} paid by transfer from account {}", i * 7),
    /// };
    /// let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// for i in 0..2000 {
    ///     tx.put::<Receipts>(&i, &receipt(i))?;
    /// }
    /// tx.commit()?;
    /// drop(db);
    ///
    /// let migrations = Migrations::new().step(2, "receipts-dictionary", |m| {
    ///     m.train_zstd_dictionary::<Receipts>(1000, 4096)
    /// });
    /// let (db, _) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(db.read()?.get::<Receipts>(&42)?, Some(receipt(42)));
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "compression")]
    pub fn train_zstd_dictionary<T: Table>(&mut self, samples: usize, dictionary_size: usize)
    where
        T::Codec: tabula_core::codec::ZstdDictCodec,
    {
        use tabula_core::codec::ZstdDictCodec;
        self.ops.push(Op::TrainZstd {
            table: T::NAME,
            dictionary: <T::Codec as ZstdDictCodec>::DICTIONARY,
            level: <T::Codec as ZstdDictCodec>::LEVEL,
            flags: T::FLAGS,
            samples,
            size: dictionary_size,
        });
    }

    /// Runs arbitrary code on the startup write transaction, with typed access to any table by
    /// its type ([`MigrationTx`](crate::MigrationTx)). `label` names it in plans and in the
    /// step's checksum.
    ///
    /// ```
    /// use tabula::{Migrations, Options, Schema, Table};
    ///
    /// #[derive(Table)]
    /// #[table(name = "settings", key = String, value = String)]
    /// struct Settings;
    /// #[derive(Schema)]
    /// struct App(Settings);
    ///
    /// # fn main() -> tabula::Result<()> {
    /// # let dir = tabula::__doc::temp_dir();
    /// // A database from before version 2 (a new one starts at the latest version).
    /// drop(tabula::open::<App>(dir.path(), Options::new())?);
    /// let migrations = Migrations::new().step(2, "default-theme", |m| {
    ///     m.run("set the theme", |tx| tx.put::<Settings>(&"theme".into(), &"dark".into()))
    /// });
    /// let (db, _) = tabula::open_with::<App>(dir.path(), Options::new(), &migrations)?;
    /// assert_eq!(db.read()?.get::<Settings>("theme")?, Some("dark".to_string()));
    /// # Ok(()) }
    /// ```
    pub fn run(
        &mut self,
        label: &'static str,
        f: impl Fn(&mut crate::tx::MigrationTx<'_>) -> Result<()> + Send + Sync + 'static,
    ) {
        self.ops.push(Op::Run {
            label,
            f: Box::new(f),
        });
    }
}
