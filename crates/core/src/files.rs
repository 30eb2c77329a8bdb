//! What is at a database's path before libmdbx opens it: only a missing or empty data file is
//! a new database; a FIFO, socket, device, directory or a file too short for its meta pages is
//! refused as it is, untouched.

use std::path::Path;

use crate::engine::{self, Code, DatabaseFiles, Env, EnvConfig};
use crate::error::{Error, Result};

/// The smallest data file that can hold a database: three meta pages of the smallest page size.
/// A shorter one that is not empty is truncated or not a database.
const MIN_DATA_FILE: u64 = (engine::limits::META_PAGES * engine::limits::MIN_PAGE_SIZE) as u64;

/// Data files at least this long are never short for libmdbx's meta-page reads: it reads
/// 256 bytes at up to twice the page size (at most 64 KiB), so a read-write open cannot take
/// one of them for a new database.
const PROBE_BELOW: u64 = (engine::limits::META_PAGES * engine::limits::MAX_PAGE_SIZE) as u64;

/// What a path holds, as the open that follows sees it (symbolic links followed).
fn kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// `metadata` of `path`, `None` when nothing is there. Other failures (permissions) are left
/// for libmdbx to report with its own code.
fn metadata(path: &Path) -> Option<std::fs::Metadata> {
    std::fs::metadata(path).ok()
}

fn bad_file(path: &Path, found: String, advice: &'static str) -> Error {
    Error::BadFile {
        path: path.to_path_buf(),
        found,
        advice,
    }
}

fn too_short(data: &Path, len: u64) -> Error {
    bad_file(
        data,
        format!(
            "the data file is {len} bytes, too short to hold the three meta pages an MDBX \
             database starts with"
        ),
        "it is truncated or not a database, and was left untouched: restore it from a backup \
         (or move it away to start a new, empty database)",
    )
}

/// The refusal for a file libmdbx takes for a second lock file of the database
/// (`second_lock`, see [`DatabaseFiles`]).
fn second_lock_file(second_lock: &Path, data: &Path, lock: &Path) -> Error {
    let name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let in_dir = data.file_name().is_some_and(|n| n == engine::DATA_FILE);
    let (found, advice) = if in_dir {
        (
            format!(
                "a second lock file for the database whose data file is `{}`: its lock file is \
                 `{}`, and libmdbx refuses to open the database while `{}` exists too \
                 (MDBX_DUPLICATED_LCK); earlier builds of Tabula left such a file behind when an \
                 open of the data file with `Options::no_sub_dir(true)` was refused",
                data.display(),
                name(lock),
                name(second_lock),
            ),
            "it is safe to remove when no process has the database open: stop every program \
             using the database, delete this file, and open it again",
        )
    } else {
        (
            format!(
                "libmdbx takes this file for a second lock file of the data file `{}` (whose \
                 lock file is `{}`) and refuses to open the database while it exists \
                 (MDBX_DUPLICATED_LCK)",
                data.display(),
                name(lock),
            ),
            "if it is a lock file left by an earlier open of this database, it is safe to \
             remove when no process has the database open; if it belongs to something else, \
             give the data file another name (libmdbx checks `NAME.lck` beside `NAME.EXT`)",
        )
    };
    bad_file(second_lock, found, advice)
}

/// The hint for a data file `DIR/mdbx.dat` opened with `no_sub_dir` while its database is
/// already open in this process: libmdbx opens such a path as the directory `DIR`.
const ALREADY_OPEN_THROUGH_DIRECTORY: &str = "a file named `mdbx.dat` is the data file of the \
     database in its directory, and libmdbx opens it as that directory (with the lock file \
     `mdbx.lck` beside it); that database is already open through its directory in this process \
     (or exclusively in another): libmdbx allows one open per process, so share the `Db` (it is \
     `Send + Sync`, wrap it in `Arc`) instead of opening it again; another process may open the \
     directory or this data file alike";

/// What [`check_files`] found at a database's paths, for the open that follows (which asks the
/// file system none of it again).
struct Found {
    /// The data file's length, `None` when it does not exist.
    data_len: Option<u64>,
    /// Whether the database directory exists (always `false` with `no_sub_dir`).
    dir_exists: bool,
    /// Whether something is at the lock file's path (a dangling symbolic link included).
    lock_exists: bool,
}

/// Checks what is at the database's paths before libmdbx opens anything: the directory (when
/// the path is one), the data file and the lock file must each be missing or of the right kind
/// (opening a FIFO would block forever; a device or socket is no database), and a data file
/// that is not empty must be long enough for its meta pages.
fn check_files(path: &Path, no_sub_dir: bool, read_only: bool) -> Result<Found> {
    let dir = if no_sub_dir { None } else { metadata(path) };
    if let Some(meta) = &dir
        && !meta.is_dir()
    {
        return Err(bad_file(
            path,
            format!("it is {}, not a directory", kind(&meta.file_type())),
            "without `Options::no_sub_dir` the path is a directory holding the data file \
             `mdbx.dat`; to open a data file itself, set `Options::no_sub_dir(true)`",
        ));
    }
    let DatabaseFiles {
        data,
        lock,
        second_lock,
        ..
    } = DatabaseFiles::of(path, no_sub_dir);
    let len = match metadata(&data) {
        None => None,
        Some(meta) if meta.is_file() => Some(meta.len()),
        Some(meta) => {
            let advice = if !no_sub_dir {
                "a database directory holds its data file `mdbx.dat` as a regular file: check \
                 the path, or move this one away"
            } else if meta.is_dir() {
                "with `Options::no_sub_dir(true)` the path is the data file itself; to open a \
                 database directory, leave `no_sub_dir` off"
            } else {
                "with `Options::no_sub_dir(true)` the path is the data file itself, a regular \
                 file: check the path"
            };
            return Err(bad_file(
                &data,
                format!("it is {}, not a regular file", kind(&meta.file_type())),
                advice,
            ));
        }
    };
    // The path itself first (a symbolic link is followed for its kind, as opening it would).
    let lock_entry = std::fs::symlink_metadata(&lock).ok();
    let lock_meta = match &lock_entry {
        Some(entry) if entry.is_symlink() => metadata(&lock),
        entry => entry.clone(),
    };
    if let Some(meta) = lock_meta
        && !meta.is_file()
    {
        return Err(bad_file(
            &lock,
            format!("it is {}, not a regular file", kind(&meta.file_type())),
            "this is where libmdbx keeps the database's lock file (its reader table): move it \
             away (libmdbx creates a missing lock file) or check the path",
        ));
    }
    // libmdbx refuses the open while this file exists (MDBX_DUPLICATED_LCK), after Tabula
    // would have created the lock file: refuse first, naming it, with nothing created. (A
    // read-only open of a missing data file fails before libmdbx looks for it.)
    if (len.is_some() || !read_only) && metadata(&second_lock).is_some() {
        return Err(second_lock_file(&second_lock, &data, &lock));
    }
    let found = Found {
        data_len: len,
        dir_exists: dir.is_some(),
        lock_exists: lock_entry.is_some(),
    };
    match len {
        Some(0) if read_only => Err(bad_file(
            &data,
            "the data file is empty (0 bytes)".to_string(),
            "no database was ever written to it, and a read-only open does not create one: \
             open it read-write once, or check the path",
        )),
        Some(len) if len > 0 && len < MIN_DATA_FILE => Err(too_short(&data, len)),
        _ => Ok(found),
    }
}

/// Opens the environment at `path` after [`check_files`]; `shown` is the path errors name.
/// With `create_dir` (a read-write open of a database directory) the directory is created
/// first, when `check_files` did not find it. Only a missing or empty data file becomes a new
/// database: libmdbx initialises any data file it cannot read three meta pages from, so before
/// a read-write open of a short file libmdbx first opens it read-only
/// ([`Env::probe_read_only`]), which reports the short read (`ENODATA`) instead, and the file
/// is refused untouched.
pub(crate) fn open_env(
    path: &Path,
    shown: &Path,
    cfg: &EnvConfig,
    create_dir: bool,
) -> Result<Env> {
    let found = check_files(path, cfg.no_sub_dir, cfg.read_only)?;
    let len = found.data_len;
    if create_dir && !cfg.no_sub_dir && !found.dir_exists {
        std::fs::create_dir_all(path).map_err(|source| Error::Io {
            context: format!("creating the database directory `{}`", path.display()),
            source,
        })?;
    }
    let files = DatabaseFiles::of(path, cfg.no_sub_dir);
    let data = files.data;
    let probe = !cfg.read_only && len.is_some_and(|len| len > 0 && len < PROBE_BELOW);
    if probe && Env::probe_read_only(path, cfg) == Err(Code::ENODATA) {
        return Err(too_short(&data, len.unwrap_or(0)));
    }
    // What `check_files` saw of the lock file, unless the probe's open came between (it may
    // have created it).
    let lock_existed = (!probe).then_some(found.lock_exists);
    Env::open_checked(path, cfg, lock_existed).map_err(|code| match len {
        Some(len) if len > 0 && code == Code::ENODATA => too_short(&data, len),
        _ => Error::Open {
            path: shown.to_path_buf(),
            code: code.into(),
            hint: match code {
                c if files.opened_as_directory && (c == Code::EAGAIN || c == Code::BUSY) => {
                    ALREADY_OPEN_THROUGH_DIRECTORY
                }
                c => open_hint(c, cfg.read_only),
            },
        },
    })
}

pub(crate) fn open_hint(code: Code, read_only: bool) -> &'static str {
    match code {
        c if c == Code::INVALID => {
            "the file is not an MDBX database (or its header is damaged); check the path"
        }
        c if c == Code::CORRUPTED || c == Code::PROBLEM || c == Code::PAGE_NOTFOUND => {
            "the database file is damaged or truncated; restore it from a backup"
        }
        c if c == Code::VERSION_MISMATCH || c == Code::INCOMPATIBLE => {
            "the file was written by an incompatible libmdbx version or with other options"
        }
        c if c == Code::ENOFILE && read_only => {
            "no database at this path; a read-only open does not create one"
        }
        c if c == Code::ENOFILE => "the path does not exist",
        c if c == Code::EAGAIN || c == Code::BUSY => {
            "the database is already open (in this process, or exclusively in another): libmdbx \
             allows one open per process, so share the `Db` (it is `Send + Sync`, wrap it in \
             `Arc`) instead of opening it again"
        }
        c if c == Code::DUPLICATED_LCK => {
            "libmdbx found a second lock file for this database (`mdbx.dat-lck` beside \
             `mdbx.lck` in its directory, or `NAME.lck` beside `NAME.EXT-lck`) and opens a \
             database with one lock file only: the one not in use is safe to remove when no \
             process has the database open"
        }
        c if c == Code::EACCESS => "permission denied; check the file's owner and mode",
        c if c == Code::ENOMEM => {
            "libmdbx reserves address space for the whole `Options::max_size` when it opens the \
             file: lower it"
        }
        c if c == Code::TOO_LARGE => {
            "the size bounds are beyond what the database's page size allows (2^31 pages): \
             lower `Options::max_size`"
        }
        c if c.is_out_of_space() => {
            "the file system holding the database is full; free space on it and open again \
             (every earlier commit is intact)"
        }
        _ => "",
    }
}
