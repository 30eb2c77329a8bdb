//! The one error type.

use std::fmt;
use std::path::PathBuf;

use crate::codec::{DecodeError, EncodeError};
use crate::engine::Code;

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

/// Encoded key bytes shown as hex, truncated after 32 bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyHex(Vec<u8>, usize);

const HEX_SHOWN: usize = 32;

impl KeyHex {
    /// Keeps the first 32 bytes of `bytes` and its full length.
    pub fn new(bytes: &[u8]) -> Self {
        KeyHex(bytes[..bytes.len().min(HEX_SHOWN)].to_vec(), bytes.len())
    }
}

impl fmt::Display for KeyHex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0x")?;
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        if self.1 > self.0.len() {
            write!(f, "… ({} bytes)", self.1)?;
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

/// Everything that can go wrong, each message naming the table, the key (hex, truncated) and the
/// libmdbx code where there is one, and saying what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// libmdbx failed an operation on a table.
    #[error("table `{table}`: {op} failed{}: {code}", key_suffix(.key))]
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
    #[error("{op} failed: {code}")]
    Env {
        /// What was being done.
        op: &'static str,
        /// The libmdbx code.
        code: MdbxCode,
    },

    /// `insert` found the key already present.
    #[error("table `{table}`: key {key} already exists; use `put` to overwrite it")]
    KeyExists {
        /// The table.
        table: &'static str,
        /// The key.
        key: KeyHex,
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
        "table `{table}`: no room left within the upper size limit of {upper} bytes \
         (MDBX_MAP_FULL); nothing of this transaction was written. {}",
        map_full_advice(.pinned_by)
    )]
    MapFull {
        /// The table being written.
        table: &'static str,
        /// The configured upper bound in bytes.
        upper: u64,
        /// The oldest read transaction still using a snapshot older than the latest one, when
        /// there is one: libmdbx cannot reuse the pages freed since that snapshot while it
        /// lives, and that, not the size limit, is what to fix. `None`: the data fills the
        /// limit.
        pinned_by: Option<ReaderPin>,
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
    /// read-only, or a data file too short to hold a database's meta pages (truncated, or not a
    /// database). Nothing was created or changed.
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

    /// A table's stored flags or codec descriptors differ from its declaration.
    #[error(
        "table `{table}`: stored {what} is `{stored}` but the schema declares `{declared}`; \
         {advice}"
    )]
    SchemaMismatch {
        /// The table.
        table: String,
        /// What differs: `flags`, `key encoding` or `value encoding`.
        what: &'static str,
        /// What the file holds.
        stored: String,
        /// What the code declares.
        declared: String,
        /// What to do.
        advice: String,
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

    /// The schema record in Tabula's meta table is unreadable or from a newer format.
    #[error("the schema record of `{path}` is unusable: {message}")]
    SchemaRecord {
        /// The database path.
        path: PathBuf,
        /// What is wrong.
        message: String,
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

/// A read transaction that keeps an old snapshot alive; see [`Error::MapFull`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReaderPin {
    /// The process holding it.
    pub pid: u32,
    /// Whether that is this process.
    pub this_process: bool,
    /// The thread that holds it, as libmdbx records it (0 when the environment does not
    /// track threads, as Tabula's does not: `MDBX_NOSTICKYTHREADS`).
    pub thread: u64,
    /// The snapshot (transaction ID) it reads.
    pub txn_id: u64,
    /// How many transactions have committed since that snapshot.
    pub lag: u64,
    /// Bytes freed since that snapshot, which libmdbx cannot reuse while it lives.
    pub retained_bytes: u64,
}

impl fmt::Display for ReaderPin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.this_process {
            write!(
                f,
                "A read transaction of this process (process {})",
                self.pid
            )?;
        } else {
            write!(f, "A read transaction of process {}", self.pid)?;
        }
        write!(
            f,
            " still reads snapshot {}, {} commits old: libmdbx cannot reuse the {} bytes freed \
             since",
            self.txn_id, self.lag, self.retained_bytes
        )
    }
}

fn map_full_advice(pin: &Option<ReaderPin>) -> String {
    match pin {
        Some(pin) => format!(
            "{pin}. End that read transaction (keep read transactions short) and retry; a \
             larger size limit would only postpone this"
        ),
        None => "The data fills the limit: reopen with a larger `Options::max_size` (the file \
                 grows on demand up to that bound)"
            .to_owned(),
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

fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!("; {hint}")
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
