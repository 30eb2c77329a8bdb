//! The one error type.

use std::fmt;
use std::path::PathBuf;

use crate::codec::{DecodeError, EncodeError};
use crate::engine::{self, Code, ReaderInfo};

/// A `Result` whose error is Tabula's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A libmdbx return code, shown with its symbolic name, number and libmdbx's description.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MdbxCode(pub i32);

impl MdbxCode {
    /// The symbolic name, e.g. `MDBX_MAP_FULL`.
    pub fn name(self) -> &'static str {
        Code(self.0).name()
    }
}

impl From<Code> for MdbxCode {
    fn from(c: Code) -> Self {
        MdbxCode(c.0)
    }
}

impl fmt::Display for MdbxCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.name(),
            self.0,
            Code(self.0).describe()
        )
    }
}

impl fmt::Debug for MdbxCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MdbxCode({} = {})", self.name(), self.0)
    }
}

/// A stored key in an error: shown typed (its `Debug`, as `TxId { block: 0, position: 5 }`)
/// where the table's key type is known and has `Debug`, else as hex, truncated after 32 bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyHex(Box<Shown>);

/// Shows a stored key typed, or `None` ([`Table::DEBUG_KEY`](crate::table::Table::DEBUG_KEY)).
pub(crate) type ShowKey = fn(&[u8]) -> Option<String>;

/// What a [`KeyHex`] holds, behind one pointer so that errors carrying keys stay small.
#[derive(Clone, PartialEq, Eq)]
struct Shown {
    bytes: Vec<u8>,
    len: usize,
    typed: Option<Box<str>>,
}

const HEX_SHOWN: usize = 32;

/// A typed key's `Debug` shown in full up to this many characters, then cut.
const TYPED_SHOWN: usize = 200;

impl KeyHex {
    /// Keeps the first 32 bytes of `bytes` and its full length.
    ///
    /// ```
    /// let key = tabula::KeyHex::new(&[0, 0, 0, 5]);
    /// assert_eq!(key.to_string(), "0x00000005");
    /// assert_eq!(key.typed(), None);
    /// ```
    pub fn new(bytes: &[u8]) -> Self {
        KeyHex(Box::new(Shown {
            bytes: bytes[..bytes.len().min(HEX_SHOWN)].to_vec(),
            len: bytes.len(),
            typed: None,
        }))
    }

    /// The stored key `bytes` of table `T`, shown typed when its key type has `Debug` and the
    /// bytes decode.
    pub(crate) fn of<T: crate::table::Table>(bytes: &[u8]) -> Self {
        Self::shown(bytes, T::DEBUG_KEY)
    }

    /// The stored key `bytes`, shown typed by `show` (a table's [`Table::DEBUG_KEY`]).
    ///
    /// [`Table::DEBUG_KEY`]: crate::table::Table::DEBUG_KEY
    pub(crate) fn shown(bytes: &[u8], show: ShowKey) -> Self {
        let typed = show(bytes).map(|mut text| {
            if text.len() > TYPED_SHOWN {
                let mut cut = TYPED_SHOWN;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push('…');
            }
            text.into_boxed_str()
        });
        let mut key = Self::new(bytes);
        key.0.typed = typed;
        key
    }

    /// The key as its type's `Debug` shows it, when the table's key type is known and has
    /// `Debug` (the error's `Display` then shows that rather than hex).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// tx.insert::<Names>(&5, &"five".to_string())?;
    /// let Err(tabula::Error::KeyExists { key, .. }) = tx.insert::<Names>(&5, &"5".to_string()) else {
    ///     panic!("a second insert of key 5");
    /// };
    /// assert_eq!(key.typed(), Some("5"));
    /// assert_eq!(key.to_string(), "5");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn typed(&self) -> Option<&str> {
        self.0.typed.as_deref()
    }

    /// The stored bytes kept (the first 32) and the stored key's full length.
    ///
    /// ```
    /// let key = tabula::KeyHex::new(&[7; 40]);
    /// assert_eq!(key.stored(), (&[7u8; 32][..], 40));
    /// ```
    pub fn stored(&self) -> (&[u8], usize) {
        (&self.0.bytes, self.0.len)
    }
}

impl fmt::Display for KeyHex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(typed) = &self.0.typed {
            return f.write_str(typed);
        }
        f.write_str("0x")?;
        for b in &self.0.bytes {
            write!(f, "{b:02x}")?;
        }
        if self.0.len > self.0.bytes.len() {
            write!(f, "… ({} bytes)", self.0.len)?;
        }
        Ok(())
    }
}

impl fmt::Debug for KeyHex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Which half of an entry failed to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The key.
    Key,
    /// The value.
    Value,
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Part::Key => "key",
            Part::Value => "value",
        })
    }
}

/// Everything that can go wrong. Each message names what it can: the table and the key (hex,
/// truncated) of a failed table operation, the database path of an environment-level one, the
/// libmdbx code by name, number and description, and says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// libmdbx failed an operation on a table.
    #[error("table `{table}`: {op} failed{}: {code}{}", key_suffix(.key), code_advice(*.code))]
    Mdbx {
        /// The table.
        table: &'static str,
        /// What was being done (`get`, `put`, `cursor`, ...).
        op: &'static str,
        /// The key involved, if any.
        key: Option<KeyHex>,
        /// The libmdbx code.
        code: MdbxCode,
    },

    /// libmdbx failed an environment-level operation (begin, commit, info).
    #[error("`{}`: {op} failed: {code}{}", .path.display(), code_advice(*.code))]
    Env {
        /// What was being done.
        op: &'static str,
        /// The database path.
        path: PathBuf,
        /// The libmdbx code.
        code: MdbxCode,
    },

    /// A write on a database opened read-only ([`Options::read_only`](crate::Options::read_only)).
    #[error(
        "`{}`: cannot {op}: the database was opened read-only (`Options::read_only`); open it \
         read-write to write",
        .path.display()
    )]
    ReadOnly {
        /// What was refused.
        op: &'static str,
        /// The database path.
        path: std::path::PathBuf,
    },

    /// `insert` found the key already present.
    #[error("table `{table}`: key {key} already exists; use `put` to overwrite it")]
    KeyExists {
        /// The table.
        table: &'static str,
        /// The key.
        key: KeyHex,
    },

    /// A change of a table declared `history` in a write transaction that named no version
    /// (`Tx::set_version`). Nothing of the change was written.
    #[error(
        "table `{table}` records its history, so a write transaction that changes it names its \
         version first (`Tx::set_version`, with a block number, say); nothing was written"
    )]
    NoVersion {
        /// The table.
        table: &'static str,
    },

    /// A change of a table declared `history` at a version below the last one its history
    /// recorded: versions never decrease. Nothing of the change was written.
    #[error(
        "table `{table}`: version {version} is below version {last}, the last its history \
         recorded; versions never decrease (unwind to a lower version first to write there); \
         nothing was written"
    )]
    VersionBelow {
        /// The table.
        table: &'static str,
        /// The transaction's version.
        version: u64,
        /// The last version the table's history recorded.
        last: u64,
    },

    /// A read as of a version whose changes were pruned from the table's history, or came
    /// before the history was added to the table: the value there is not known.
    #[error(
        "table `{table}`: version {version} is below the history's horizon: the changes of \
         versions before {horizon} were pruned (or made before the history was added to the \
         table), so a read as of {version} cannot be answered; read as of {horizon_read} or \
         later",
        horizon_read = horizon.saturating_sub(1)
    )]
    BelowHorizon {
        /// The table.
        table: &'static str,
        /// The version asked for.
        version: u64,
        /// The first version whose changes are kept.
        horizon: u64,
    },

    /// A read as of a version of a table whose history was added while the table held rows,
    /// before any version was written to it: the history records from the first version
    /// written, and nothing is known of the rows before it.
    #[error(
        "table `{table}`: its history was added while it held rows and starts at the first \
         version written to the table, which no transaction has written yet, so a read as of \
         {version} cannot be answered; write the table at a version first (reads as of that \
         version minus one and later are then answered)"
    )]
    HistoryNotStarted {
        /// The table.
        table: &'static str,
        /// The version asked for.
        version: u64,
    },

    /// A write would give a unique index's key a second row. Nothing of the write was done.
    #[error(
        "table `{table}`: unique index `{index}`: key {key} already belongs to the row {}, so \
         the row {} cannot have it; nothing was written (change or delete the row {} first, or \
         make the index non-unique)",
        rows[0], rows[1], rows[0]
    )]
    UniqueViolation {
        /// The indexed table.
        table: &'static str,
        /// The unique index.
        index: &'static str,
        /// The index key, encoded.
        key: KeyHex,
        /// The primary keys, as the index stores them, of the row that holds the key and of
        /// the row that would take it.
        rows: Box<[KeyHex; 2]>,
    },

    /// An index entry names a row its source table does not have, or the row does not map back
    /// to the entry: the index is out of step with its table.
    #[error(
        "index `{index}` of table `{table}`: the entry {key} -> {row} has no matching row; the \
         index is out of step with its table (run `tabula check`; a file written outside Tabula \
         or by a version without index maintenance can do this)"
    )]
    IndexOutOfStep {
        /// The indexed table.
        table: &'static str,
        /// The index.
        index: &'static str,
        /// The index key, encoded.
        key: KeyHex,
        /// The primary key the entry names, as the index stores it.
        row: KeyHex,
    },

    /// `append` was given a key that does not sort after the table's last key.
    #[error(
        "table `{table}`: append out of order: key {key} is not greater than the last key{}; \
         append takes keys in strictly increasing order (use `put` for others)",
        last.as_ref().map(|l| format!(" {l}")).unwrap_or_default()
    )]
    AppendOutOfOrder {
        /// The table.
        table: &'static str,
        /// The key given.
        key: KeyHex,
        /// The table's last key, when it could be read.
        last: Option<KeyHex>,
    },

    /// `append_dup` was given a value that does not sort after the last value of its key (in a
    /// `dupsort` table, whose values are kept in their encoded order).
    #[error(
        "table `{table}`: append_dup out of order: value {value} is not greater than the last \
         value{} of key {key}; append_dup takes each key's values in strictly increasing order \
         (use `put` for others)",
        last.as_ref().map(|l| format!(" {l}")).unwrap_or_default()
    )]
    AppendDupOutOfOrder {
        /// The table.
        table: &'static str,
        /// The key given.
        key: KeyHex,
        /// The value given, as stored.
        value: KeyHex,
        /// The key's last value as stored, when it could be read.
        last: Option<KeyHex>,
    },

    /// A cursor call that acts on the entry under the cursor (`delete_current`,
    /// `delete_current_dups`, `dup_count`) found the cursor on no entry: before any move,
    /// after a move or search that found nothing, after a delete, or after a refused write.
    /// Nothing was changed.
    #[error(
        "table `{table}`: {call} needs the cursor on an entry, but {position}; place it on one \
         first (`seek_exact`, `get_dup`, `first`, `next`, ...) and check that the move found it"
    )]
    NotOnEntry {
        /// The table.
        table: &'static str,
        /// The call refused (`delete_current`, `dup_count`, ...).
        call: &'static str,
        /// Why the cursor is on no entry.
        position: &'static str,
    },

    /// Stored bytes did not decode as the declared key or value type.
    #[error("table `{table}`: cannot decode the {part} at key {key}: {source}")]
    Decode {
        /// The table.
        table: &'static str,
        /// Key or value.
        part: Part,
        /// The (encoded) key of the entry.
        key: KeyHex,
        /// What was wrong.
        source: DecodeError,
    },

    /// A value could not be encoded.
    #[error("table `{table}`: cannot encode the value for key {key}: {source}")]
    Encode {
        /// The table.
        table: &'static str,
        /// The key.
        key: KeyHex,
        /// What went wrong.
        source: EncodeError,
    },

    /// A key or value is larger than libmdbx accepts for this table at this page size.
    #[error(
        "table `{table}`: the {part} at key {key} is {len} bytes, over the {max}-byte limit for \
         this table at this database's page size; {}",
        too_large_advice(*.fits_page_size, *.max_any_page_size)
    )]
    TooLarge {
        /// The table.
        table: &'static str,
        /// Key or value.
        part: Part,
        /// The key.
        key: KeyHex,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
        /// The smallest page size at which this table would accept it, when a larger page size
        /// than the database's would ([`Options::page_size`](crate::Options::page_size), fixed
        /// when the file is created); `None` when no page size would.
        fits_page_size: Option<usize>,
        /// The limit at the largest page size libmdbx supports (64 KiB): what no page size can
        /// raise. For values of tables without `dupsort` it is the same at every page size.
        max_any_page_size: usize,
    },

    /// The database reached its upper size bound: no room is left for the write.
    #[error(
        "{}no room left within the upper size limit of {upper} bytes \
         (MDBX_MAP_FULL); nothing of this transaction was written. {}",
        table_prefix(.table),
        map_full_advice(.pinned_by)
    )]
    MapFull {
        /// The table being written, when the failure came from a write to one (`None` for a
        /// commit, which writes every table at once).
        table: Option<&'static str>,
        /// The configured upper bound in bytes.
        upper: u64,
        /// The oldest read transaction still using a snapshot older than the latest one, when
        /// there is one: libmdbx cannot reuse the pages freed since that snapshot while it
        /// lives, and that, not the size limit, is what to fix. `None`: the data fills the
        /// limit.
        pinned_by: Option<ReaderInfo>,
    },

    /// The file system holding the database has no space left for a write.
    #[error(
        "{}{op} failed: the file system holding `{}` is {}full{}: {code}. Nothing of the failed \
         transaction was written and every commit that returned `Ok` is intact; free space on \
         that file system (or move the database to a larger one) and retry",
        table_prefix(.table),
        .path.display(),
        if *.certain { "" } else { "probably " },
        available_suffix(*.available)
    )]
    DiskFull {
        /// The table being written, when the failure came from a write to one.
        table: Option<&'static str>,
        /// What failed (`put`, `commit`, ...).
        op: &'static str,
        /// The database path.
        path: PathBuf,
        /// Bytes still available on that file system (`statvfs`) when the error was built.
        available: Option<u64>,
        /// `true` when the system said so (`ENOSPC`, `EDQUOT`); `false` when it is inferred
        /// from an I/O error (`EIO`, which is how libmdbx reports a write cut short) while the
        /// file system has (almost) no space left.
        certain: bool,
        /// The code libmdbx returned.
        code: MdbxCode,
    },

    /// Every reader slot is taken.
    #[error(
        "no free reader slot: {max_readers} read transactions are open in this and other \
         processes (MDBX_READERS_FULL); end some, or reopen with a larger `Options::max_readers`"
    )]
    ReadersFull {
        /// The environment's reader slot count.
        max_readers: u32,
    },

    /// The environment could not be opened.
    #[error("cannot open `{path}`: {code}{}", hint_suffix(.hint))]
    Open {
        /// The path given.
        path: PathBuf,
        /// The libmdbx code.
        code: MdbxCode,
        /// What it probably means and what to do.
        hint: &'static str,
    },

    /// What is at the database's path cannot be opened as a database, found before libmdbx
    /// touched it: a FIFO, socket, device or directory where the data file or the lock file
    /// belongs, a file where the database directory belongs, an empty data file opened
    /// read-only, a data file too short to hold a database's meta pages (truncated, or not a
    /// database), or a second lock file beside the database, which libmdbx would refuse
    /// (`MDBX_DUPLICATED_LCK`). Nothing was created or changed.
    #[error("cannot open `{path}`: {found}; {advice}")]
    BadFile {
        /// The file or directory that was checked (the data file, the lock file or the
        /// database directory).
        path: PathBuf,
        /// What was found there.
        found: String,
        /// What to do.
        advice: &'static str,
    },

    /// An [`Options`](crate::Options) value is outside what libmdbx accepts (alone or with the
    /// other options); refused before libmdbx is called.
    #[error("invalid `Options::{option}`: {value} {problem}")]
    InvalidOption {
        /// The setter, e.g. `page_size`.
        option: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it and the valid range.
        problem: String,
    },

    /// A table's stored flags, key encoding or values differ from its declaration.
    #[error(
        "table `{table}`{}: stored {what} is `{stored}` but the code declares `{declared}`{}; \
         {advice}",
        rust_suffix(detail.rust_name),
        changes_suffix(&detail.changes)
    )]
    SchemaMismatch {
        /// The table.
        table: String,
        /// What differs: `flags`, `key encoding`, `value encoding` (the codec), `value type`,
        /// `value version`, `value structure` or `dup value encoding` (a dupsort table written
        /// with bincode values).
        what: &'static str,
        /// What the file holds.
        stored: String,
        /// What the code declares.
        declared: String,
        /// What to do: the migration step to add, or the declaration to restore.
        advice: String,
        /// The table struct and what changed (boxed: errors stay small).
        detail: Box<MismatchDetail>,
    },

    /// A table's declaration cannot be used as it is: a reserved or repeated name (which the
    /// derives refuse at compile time, but a hand-written `impl Table` or `impl Schema` does
    /// not), or a value type whose structure cannot be traced and that states no
    /// `value_version`.
    #[error(
        "table `{table}`{} cannot be opened: {problem}",
        rust_suffix(rust_name)
    )]
    InvalidTable {
        /// The table's name.
        table: String,
        /// The table struct's path (`module::Name`; empty when unknown).
        rust_name: &'static str,
        /// What is wrong and what to do.
        problem: String,
    },

    /// A migration step cannot run, or the database's migration history does not fit the code.
    #[error("migration to version {version} (`{step}`): {message}")]
    Migration {
        /// The step's version (or the database's, for history problems).
        version: u32,
        /// The step's name.
        step: String,
        /// What is wrong and what to do.
        message: String,
    },

    /// A read-only open found a declared table missing from the file.
    #[error(
        "table `{table}` is missing from `{path}`; a read-only open cannot create it: open the \
         database read-write once (the startup step creates it) or check the path"
    )]
    TableMissing {
        /// The table.
        table: String,
        /// The database path.
        path: PathBuf,
    },

    /// A read-only open found an index that must be built for the declared index, which only a
    /// read-write open's startup step can do: it was redeclared (its `version`, source or
    /// uniqueness differs from the one the file's index was built for), or its build was
    /// interrupted (the process building it stopped), so its table holds some rows' entries.
    #[error(
        "index `{index}` of table `{table}` in `{}` is not built for this declaration ({what}); \
         a read-only open cannot build it: open the database read-write once with this \
         declaration (the startup step builds it, or finishes an interrupted build), or declare \
         the index as the file's writer does",
        .path.display()
    )]
    IndexNotBuilt {
        /// The index.
        index: String,
        /// Its source table.
        table: String,
        /// What differs, as the schema check words it.
        what: String,
        /// The database path.
        path: PathBuf,
    },

    /// The schema record in Tabula's meta table is unreadable or from a newer format.
    #[error("the schema record of `{path}` is unusable: {message}")]
    SchemaRecord {
        /// The database path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },

    /// The zstd dictionaries stored in the database (for `ZstdDict` tables, feature
    /// `compression`) cannot be used: the dictionary table is
    /// damaged, or another database open in this process uses a different dictionary under the
    /// same ID or a different current dictionary under the same name.
    #[error("zstd dictionaries of `{}`: {message}", .path.display())]
    ZstdDictionary {
        /// The database path.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },

    /// An owned read transaction ([`OwnedTx`](crate::OwnedTx)) was cut: it outlived
    /// [`Options::max_read_age`](crate::Options::max_read_age), or a write that needed the pages
    /// its snapshot pinned cut it (see [`Options::on_slow_reader`](crate::Options::on_slow_reader)).
    /// Its snapshot is released; every later use of it fails the same way.
    #[error(
        "the read transaction on snapshot {txn_id} was cut {:.3} s after it began: {}; its \
         snapshot is released, so it cannot be used any more. Begin a new read transaction, and \
         keep read transactions short (read a long range in several)",
        .age.as_secs_f64(),
        cut_reason(*.by_writer, *.limit)
    )]
    ReadTxnTimedOut {
        /// The snapshot (transaction ID) it read.
        txn_id: u64,
        /// How long it had been open when this error was made.
        age: std::time::Duration,
        /// The configured [`Options::max_read_age`](crate::Options::max_read_age), if any.
        limit: Option<std::time::Duration>,
        /// `true`: a write that needed the pages its snapshot pinned cut it (the slow-reader
        /// policy); `false`: it was older than `limit` when it was used.
        by_writer: bool,
    },

    /// A read of a table's history that the schema-less reader cannot make: a `dupsort`
    /// table's history records each (key, subkey), whose boundary in a stored value only the
    /// table's types know.
    #[error("table `{table}`: {problem}")]
    HistoryRead {
        /// The table's name.
        table: String,
        /// Why, and what to use instead.
        problem: String,
    },

    /// A file-system error outside libmdbx (creating the directory).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

fn map_full_advice(pin: &Option<ReaderInfo>) -> String {
    match pin {
        Some(pin) => format!(
            "{} still reads snapshot {}, {} commits old: libmdbx cannot reuse the {} bytes freed \
             since. End that read transaction (keep read transactions short) and retry; a \
             larger size limit would only postpone this",
            if pin.this_process {
                format!("A read transaction of this process (process {})", pin.pid)
            } else {
                format!("A read transaction of process {}", pin.pid)
            },
            pin.txn,
            pin.lag,
            pin.bytes_retained
        ),
        None => "The data fills the limit: reopen with a larger `Options::max_size` (the file \
                 grows on demand up to that bound)"
            .to_owned(),
    }
}

fn cut_reason(by_writer: bool, limit: Option<std::time::Duration>) -> String {
    let limit = limit
        .map(|l| format!("`Options::max_read_age` is {:.3} s", l.as_secs_f64()))
        .unwrap_or_else(|| "no `Options::max_read_age` is set".to_owned());
    if by_writer {
        format!(
            "a write needed the pages its snapshot kept from reuse, and the slow-reader policy \
             cut it rather than grow the file ({limit}; `Options::on_slow_reader`)"
        )
    } else {
        format!("it was used after its maximum age ({limit})")
    }
}

fn too_large_advice(fits: Option<usize>, max_any: usize) -> String {
    match fits {
        Some(page) => format!(
            "a database created with `Options::page_size({page})` or larger accepts it (the page \
             size is fixed when the file is created)"
        ),
        None => format!(
            "no page size raises the limit that far (it is at most {max_any} bytes at any page \
             size): store it in smaller pieces, or outside the database"
        ),
    }
}

fn table_prefix(table: &Option<&'static str>) -> String {
    table.map(|t| format!("table `{t}`: ")).unwrap_or_default()
}

fn available_suffix(available: Option<u64>) -> String {
    available
        .map(|b| format!(" ({b} bytes available, less than the write needed)"))
        .unwrap_or_default()
}

fn key_suffix(key: &Option<KeyHex>) -> String {
    key.as_ref()
        .map(|k| format!(" at key {k}"))
        .unwrap_or_default()
}

/// What a libmdbx failure of a table or the environment means, where the code says more than
/// its name: a device error, or a damaged file.
fn code_advice(code: MdbxCode) -> &'static str {
    match Code(code.0) {
        c if c == Code::EIO => {
            "; the device reported an I/O error: check the disk and the system log; nothing of \
             the failed transaction was written"
        }
        c if c == Code::CORRUPTED || c == Code::PROBLEM || c == Code::PAGE_NOTFOUND => {
            "; the database file is damaged: `tabula check` shows where; restore it from a backup"
        }
        _ => "",
    }
}

/// What an [`Error::SchemaMismatch`] tells beyond the stored and declared forms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MismatchDetail {
    /// The table struct's path (`module::Name`; empty when unknown).
    pub rust_name: &'static str,
    /// What changed, one sentence each, naming the field or variant (for `value structure`).
    pub changes: Vec<String>,
}

impl MismatchDetail {
    /// The detail of a mismatch of table struct `rust_name`.
    ///
    /// ```
    /// let detail = tabula::MismatchDetail::new("app::Events", vec!["`Event`: field `b` added".into()]);
    /// assert_eq!(detail.rust_name, "app::Events");
    /// assert_eq!(detail.changes.len(), 1);
    /// ```
    pub fn new(rust_name: &'static str, changes: Vec<String>) -> Box<Self> {
        Box::new(MismatchDetail { rust_name, changes })
    }
}

fn rust_suffix(rust_name: &str) -> String {
    if rust_name.is_empty() {
        String::new()
    } else {
        format!(" (`{rust_name}`)")
    }
}

fn changes_suffix(changes: &[String]) -> String {
    if changes.is_empty() {
        String::new()
    } else {
        format!(": {}", changes.join("; "))
    }
}

fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!("; {hint}")
    }
}

/// Where a libmdbx call failed: the operation, and the table and key when there are some. With
/// the code and the environment it is everything `diagnose::fail` needs to build the right
/// [`Error`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub(crate) table: Option<&'static str>,
    pub(crate) op: &'static str,
    pub(crate) key: Option<&'a [u8]>,
    /// For [`Error::TooLarge`]: the value's length and the table's libmdbx flags.
    pub(crate) value_len: usize,
    pub(crate) flags: u32,
    /// Shows the key typed ([`Table::DEBUG_KEY`](crate::table::Table::DEBUG_KEY)) when the
    /// table's type is known.
    pub(crate) show: ShowKey,
}

impl<'a> At<'a> {
    /// An environment-level operation (begin, commit, info, check).
    pub(crate) const fn env(op: &'static str) -> Self {
        At {
            table: None,
            op,
            key: None,
            value_len: 0,
            flags: 0,
            show: crate::__private::no_debug_key,
        }
    }

    /// An operation on the table named `table`.
    pub(crate) const fn table(table: &'static str, op: &'static str) -> Self {
        At {
            table: Some(table),
            ..At::env(op)
        }
    }

    /// An operation on table `T` (its libmdbx flags included, for size limits).
    pub(crate) fn of<T: crate::table::Table>(op: &'static str) -> Self {
        At {
            flags: engine::table_flags(T::FLAGS.dupsort, T::FLAGS.integer_key),
            show: T::DEBUG_KEY,
            ..At::table(T::NAME, op)
        }
    }

    /// A commit of writes to `table`, when known.
    pub(crate) const fn commit(table: Option<&'static str>, op: &'static str) -> Self {
        At {
            table,
            ..At::env(op)
        }
    }

    /// The (stored) key involved.
    pub(crate) fn key(self, key: &'a [u8]) -> Self {
        At {
            key: Some(key),
            ..self
        }
    }

    /// The key and the length of the value being written.
    pub(crate) fn entry(self, key: &'a [u8], value_len: usize) -> Self {
        At {
            key: Some(key),
            value_len,
            ..self
        }
    }
}

impl Error {
    /// The libmdbx code behind this error, if there is one.
    pub fn mdbx_code(&self) -> Option<MdbxCode> {
        match self {
            Error::Mdbx { code, .. }
            | Error::Env { code, .. }
            | Error::Open { code, .. }
            | Error::DiskFull { code, .. } => Some(*code),
            Error::MapFull { .. } => Some(MdbxCode(Code::MAP_FULL.0)),
            Error::ReadersFull { .. } => Some(MdbxCode(Code::READERS_FULL.0)),
            Error::KeyExists { .. } => Some(MdbxCode(Code::KEYEXIST.0)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader that pins freed pages is named as the error always named it (the message
    /// came from `ReaderPin`'s `Display` before `ReaderInfo` took its place).
    #[test]
    fn map_full_names_the_pinning_reader() {
        let pin = |this_process| ReaderInfo {
            slot: 3,
            pid: 4242,
            this_process,
            thread: 0,
            txn: 17,
            lag: 5,
            bytes_used: 1 << 20,
            bytes_retained: 65536,
        };
        let e = Error::MapFull {
            table: Some("blocks"),
            upper: 1 << 30,
            pinned_by: Some(pin(false)),
        };
        let msg = e.to_string();
        assert!(
            msg.contains(
                "A read transaction of process 4242 still reads snapshot 17, 5 commits old: \
                 libmdbx cannot reuse the 65536 bytes freed since. End that read transaction"
            ),
            "{msg}"
        );
        let e = Error::MapFull {
            table: None,
            upper: 1 << 30,
            pinned_by: Some(pin(true)),
        };
        let msg = e.to_string();
        assert!(
            msg.contains("A read transaction of this process (process 4242) still reads"),
            "{msg}"
        );
    }

    #[test]
    fn messages_name_table_key_and_code() {
        let e = Error::Mdbx {
            table: "Headers",
            op: "get",
            key: Some(KeyHex::new(&[0, 0, 0, 5])),
            code: MdbxCode(Code::CORRUPTED.0),
        };
        let s = e.to_string();
        assert!(s.contains("table `Headers`"), "{s}");
        assert!(s.contains("0x00000005"), "{s}");
        assert!(s.contains("MDBX_CORRUPTED (-30796)"), "{s}");
        assert!(s.contains("the database file is damaged"), "{s}");
    }

    #[test]
    fn long_keys_are_truncated() {
        let k = KeyHex::new(&[0xab; 100]);
        let s = k.to_string();
        assert!(s.starts_with("0xabab"));
        assert!(s.ends_with("(100 bytes)"), "{s}");
        assert_eq!(s.matches("ab").count(), 32);
    }
}
