//! The environment: open (with the full-disk reservations of `space`), transactions begun from
//! it, geometry and counters, the reader table, copies, sync and the integrity check.

use std::ffi::{CString, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use mdbx_sys as sys;

use super::*;

/// How the environment syncs to disk; see `SyncMode` in the public API for what each may lose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    Durable,
    NoMetaSync,
    SafeNoSync,
    UtterlyNoSync,
}

/// Everything `Env::open` needs.
#[derive(Debug, Clone)]
pub(crate) struct EnvConfig {
    pub max_tables: u64,
    pub max_readers: Option<u64>,
    /// lower, now, upper, growth step, shrink threshold, page size; -1 = libmdbx default.
    pub geometry: [isize; 6],
    pub sync: Durability,
    /// The auto-sync threshold (`MDBX_opt_sync_bytes`) set after the open; `None` leaves the
    /// lock file's value alone.
    pub sync_bytes: Option<u64>,
    pub read_only: bool,
    pub exclusive: bool,
    pub write_map: bool,
    pub no_sub_dir: bool,
    /// `MDBX_VALIDATION`: check every page as it is loaded (for damaged or untrusted files).
    pub validation: bool,
    pub mode: u32,
    /// Cuttable read transactions and the slow-reader callback (`mdbx_env_set_hsr`), when a
    /// maximum read age or a slow-reader policy is configured.
    pub slow_readers: Option<SlowReaders>,
    /// libmdbx's in-process write settings, set after the open ([`Tuning`]).
    pub tuning: Tuning,
}

/// libmdbx's in-process settings for write transactions (`Options::balance_pages` and the
/// settings after it): each `None` leaves libmdbx's default. They live in this process's
/// environment handle, not in the file, and are set after the open of a writable environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Tuning {
    /// `MDBX_opt_prefer_waf_insteadof_balance`: `Some(true)` splits a full page in the middle and
    /// merges into the emptier neighbour; `Some(false)` splits at the insertion point and merges
    /// into an already-changed neighbour (libmdbx 0.14's default).
    pub balance: Option<bool>,
    /// `MDBX_opt_txn_dp_limit`, in pages.
    pub dirty_page_limit: Option<u64>,
    /// `MDBX_opt_spill_min_denominator` and `MDBX_opt_spill_max_denominator`.
    pub spill_denominators: Option<(u8, u8)>,
    /// `MDBX_opt_dp_reserve_limit`, in pages.
    pub dirty_page_reserve: Option<u64>,
    /// `MDBX_opt_merge_threshold`, in 1/65536 of a page (8192 to 32768).
    pub merge_threshold: Option<u64>,
}

#[cfg(test)]
impl EnvConfig {
    /// What the engine's unit tests open: two tables, durable, the given reader count and
    /// upper size, everything else libmdbx's default.
    pub(crate) fn for_tests(max_readers: Option<u64>, upper: isize) -> Self {
        EnvConfig {
            max_tables: 2,
            max_readers,
            geometry: [-1, -1, upper, 1 << 20, -1, -1],
            sync: Durability::Durable,
            sync_bytes: None,
            read_only: false,
            exclusive: false,
            write_map: false,
            no_sub_dir: false,
            validation: false,
            mode: 0o644,
            slow_readers: None,
            tuning: Tuning::default(),
        }
    }
}

/// The data file's name in a database directory (libmdbx's `MDBX_DATANAME`).
pub const DATA_FILE: &str = "mdbx.dat";
/// The lock file's name in a database directory (libmdbx's `MDBX_LOCKNAME`).
pub const LOCK_FILE: &str = "mdbx.lck";

/// The files of the environment at `path`, named as libmdbx 0.14.4 names them
/// (`env_handle_pathname` in mdbx.c), for the layout `no_sub_dir` the caller has checked
/// against what is at `path` (libmdbx picks the layout of an existing path itself).
///
/// - A directory: `mdbx.dat` and `mdbx.lck` in it.
/// - With `no_sub_dir`: the file `path` and `path-lck`; except that a path whose name is
///   `mdbx.dat` is the data file of the database in its directory, and libmdbx opens that
///   directory instead (`mdbx.lck` beside it), whatever the flag says.
///
/// libmdbx refuses to open the database while [`second_lock`](Self::second_lock) exists
/// (`MDBX_DUPLICATED_LCK`: "Alternative/Duplicate LCK-file is exists and should be removed
/// manually", mdbx.h): `mdbx.dat-lck` in a directory, or beside a data file `NAME.EXT` (or
/// `NAME`) the file `NAME.lck`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DatabaseFiles {
    pub data: PathBuf,
    pub lock: PathBuf,
    pub second_lock: PathBuf,
    /// A `no_sub_dir` path named `mdbx.dat`, which libmdbx opens as its directory.
    pub opened_as_directory: bool,
}

impl DatabaseFiles {
    pub fn of(path: &Path, no_sub_dir: bool) -> DatabaseFiles {
        let bytes = path.as_os_str().as_encoded_bytes();
        // libmdbx compares the path's tail with "/mdbx.dat" (or the whole path with "mdbx.dat");
        // then the path's last component is `mdbx.dat` and its parent is the directory.
        let named_data = bytes == b"mdbx.dat" || bytes.ends_with(b"/mdbx.dat");
        let dir = match (no_sub_dir, named_data) {
            (false, _) => Some(path),
            (true, true) => Some(path.parent().unwrap_or(Path::new(""))),
            (true, false) => None,
        };
        match dir {
            Some(dir) => DatabaseFiles {
                data: joined(dir, DATA_FILE),
                lock: joined(dir, LOCK_FILE),
                second_lock: joined(dir, "mdbx.dat-lck"),
                opened_as_directory: no_sub_dir,
            },
            None => {
                let mut lock = path.as_os_str().to_owned();
                lock.push("-lck");
                DatabaseFiles {
                    data: path.to_path_buf(),
                    lock: PathBuf::from(lock),
                    second_lock: lck_beside(path),
                    opened_as_directory: false,
                }
            }
        }
    }
}

/// `dir.join(name)`, allocated once at its size (`join` copies `dir` and grows the copy).
fn joined(dir: &Path, name: &str) -> PathBuf {
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
    path.push(dir);
    path.push(name);
    path
}

/// Removes the lock file at `lock` unless a process uses it: only when an exclusive lock on the
/// whole file is granted (`F_OFD_SETLK`, non-blocking), which every lock libmdbx holds on it
/// refuses (its OFD and POSIX record locks alike), and only the file that was locked. Called
/// after a refused open whose lock file did not exist before it, so that the open leaves the
/// directory as it found it.
#[cfg(target_os = "linux")]
fn remove_unused_lock_file(lock: &Path) {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(lock)
    else {
        return;
    };
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are valid; zero start and
    // length with `SEEK_SET` cover the whole file.
    let mut whole: libc::flock = unsafe { std::mem::zeroed() };
    whole.l_type = libc::F_WRLCK as _;
    whole.l_whence = libc::SEEK_SET as _;
    // SAFETY: `file` is an open descriptor owned here; `whole` is a valid `flock`. An OFD lock
    // belongs to this open file description: it goes when `file` is closed below, and closing
    // it releases no other lock of this process.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &whole) } != 0 {
        return;
    }
    let same =
        |m: std::fs::Metadata, n: std::fs::Metadata| m.dev() == n.dev() && m.ino() == n.ino();
    if let (Ok(locked), Ok(named)) = (file.metadata(), lock.symlink_metadata())
        && same(locked, named)
    {
        let _ = std::fs::remove_file(lock);
    }
}

#[cfg(not(target_os = "linux"))]
fn remove_unused_lock_file(_lock: &Path) {}

/// `NAME.lck` for `NAME.EXT` or `NAME`: the path from its last `.` after its last `/` replaced
/// by `.lck`, or `.lck` appended (libmdbx's `osal_fileext` and the copy after it).
#[cfg(unix)]
fn lck_beside(path: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let after_sep = bytes.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    let stem = match bytes[after_sep..].iter().rposition(|&b| b == b'.') {
        Some(dot) => &bytes[..after_sep + dot],
        None => bytes,
    };
    let mut name = stem.to_vec();
    name.extend_from_slice(b".lck");
    PathBuf::from(std::ffi::OsStr::from_bytes(&name))
}

#[cfg(not(unix))]
fn lck_beside(path: &Path) -> PathBuf {
    path.with_extension("lck")
}

/// The long-reader settings of an environment: the age after which a cuttable read transaction
/// cuts itself at its next call (`u64::MAX`: none), and the policy a write asks before it grows
/// the file because of a reader (`None`: cut this process's cuttable transactions older than
/// that age, else grow).
#[derive(Clone)]
pub(crate) struct SlowReaders {
    pub max_age_ms: u64,
    pub policy: Option<Policy>,
}

impl std::fmt::Debug for SlowReaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlowReaders")
            .field("max_age_ms", &self.max_age_ms)
            .field("policy", &self.policy.as_ref().map(|_| "callback"))
            .finish()
    }
}

/// An open environment. Closed on drop.
pub(crate) struct Env {
    pub(super) ptr: NonNull<sys::MDBX_env>,
    /// The slow-reader callback's context (the environment's user context), freed after the
    /// environment is closed.
    hook: Option<Box<SlowReaderHook>>,
}

// SAFETY: an MDBX_env is designed to be shared between threads: every env-level call we make
// (txn begin, info, stat, close at drop with exclusive access) is thread-safe in libmdbx.
unsafe impl Send for Env {}
// SAFETY: as above; `&Env` only gives access to thread-safe calls.
unsafe impl std::marker::Sync for Env {}

/// Geometry and counters of an environment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EnvInfo {
    pub map_size: u64,
    pub file_size: u64,
    pub upper: u64,
    pub page_size: u32,
    pub last_txn: u64,
    pub max_readers: u32,
    pub readers: u32,
    /// Geometry: the lower bound, current size, shrink threshold and growth step, in bytes.
    pub lower: u64,
    pub current: u64,
    pub shrink: u64,
    pub growth: u64,
    /// The oldest transaction a reader still uses (equals `last_txn` when no reader lags).
    pub oldest_reader_txn: u64,
    /// Bytes committed but not yet flushed to disk (the no-sync modes).
    pub unsynced: u64,
}

/// One occupied slot of libmdbx's reader table: a read transaction of some process, or a slot
/// kept for reuse. See [`Db::readers`](crate::Db::readers); [`Error::MapFull`](crate::Error::MapFull)
/// names the one that pins freed pages. The engine's own description of a reader (what
/// `mdbx_reader_list` reports), so it is the only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReaderInfo {
    /// The slot number.
    pub slot: i32,
    /// The reading process.
    pub pid: i32,
    /// Whether that is this process.
    pub this_process: bool,
    /// The reading thread (`pthread_t`), 0 when the slot is not bound to a thread (Tabula's
    /// are not: its environments do not tie transactions to threads);
    /// [`ReaderInfo::PARKED`] for a transaction parked on its snapshot (`mdbx_txn_park`, what
    /// a Tabula `Db` does with finished reads), [`ReaderInfo::OUSTED`] for one a writer ousted.
    pub thread: u64,
    /// The snapshot (transaction ID) it reads; 0 for a reset slot (kept for reuse, pinning
    /// nothing).
    pub txn: u64,
    /// How many transactions behind the latest commit it is.
    pub lag: u64,
    /// Bytes of the database as of its snapshot.
    pub bytes_used: usize,
    /// Bytes freed since its snapshot that no write can reuse while it reads.
    pub bytes_retained: usize,
}

impl ReaderInfo {
    /// [`thread`](Self::thread) of a read transaction parked on its snapshot.
    pub const PARKED: u64 = u64::MAX;
    /// [`thread`](Self::thread) of a parked read transaction a writer ousted.
    pub const OUSTED: u64 = u64::MAX - 1;
}

/// `mdbx_reader_list`'s callback: appends one slot to the `Vec<ReaderInfo>` behind `ctx`.
unsafe extern "C" fn collect_reader(
    ctx: *mut c_void,
    _num: c_int,
    slot: c_int,
    pid: sys::mdbx_pid_t,
    thread: sys::mdbx_tid_t,
    txnid: u64,
    lag: u64,
    bytes_used: usize,
    bytes_retained: usize,
) -> c_int {
    // SAFETY: `Env::readers` passes a `&mut Vec<ReaderInfo>` as `ctx`, exclusively borrowed for
    // the duration of `mdbx_reader_list`, which calls this synchronously on the same thread.
    let out = unsafe { &mut *ctx.cast::<Vec<ReaderInfo>>() };
    // `pthread_t` is `u64` on 64-bit Linux but not everywhere.
    #[allow(clippy::unnecessary_cast)]
    let thread = thread as u64;
    out.push(ReaderInfo {
        slot,
        pid,
        this_process: pid as u32 == std::process::id(),
        thread,
        txn: txnid,
        lag,
        bytes_used,
        bytes_retained,
    });
    0
}

/// Page counts of one table (`MDBX_stat`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawStat {
    pub page_size: u32,
    pub depth: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub entries: u64,
    /// The transaction that last changed the table (`ms_mod_txnid`).
    pub mod_txnid: u64,
}

/// The patch set the linked libmdbx was built with (`mdbx_build.metadata`), if it says one.
pub(crate) fn linked_build_metadata() -> Option<String> {
    // SAFETY: `mdbx_build` is an immutable static of the C library; `metadata` is NULL or a
    // NUL-terminated string literal.
    let metadata = unsafe { sys::mdbx_build.metadata };
    if metadata.is_null() {
        return None;
    }
    // SAFETY: non-NULL, so a NUL-terminated literal that lives as long as the program.
    let text = unsafe { std::ffi::CStr::from_ptr(metadata) };
    Some(text.to_string_lossy().into_owned())
}

/// Refuses to open anything when the libmdbx linked into the program is not the one
/// `tabula-mdbx-sys` built (its build metadata names another patch set, or none): Tabula's
/// guarantees count on that build's fixes and settings. Cargo's `links = "mdbx"` keeps a second
/// libmdbx crate out of the dependency graph, but a `links` override in a Cargo config, or
/// another static library exporting the same symbols, could still put a different engine
/// behind the bindings. Checked once per process; the refusal is `ELIBBAD`, logged with both
/// names.
fn check_linked_build() -> Result<(), Code> {
    static MATCHES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let matches = *MATCHES
        .get_or_init(|| build_matches(linked_build_metadata().as_deref(), sys::BUILD_METADATA));
    if matches {
        Ok(())
    } else {
        Err(Code(libc::ELIBBAD))
    }
}

fn build_matches(linked: Option<&str>, expected: &str) -> bool {
    if linked == Some(expected) {
        return true;
    }
    tracing::error!(
        target: "libmdbx",
        "the linked libmdbx is not tabula-mdbx-sys's build: its build metadata is {linked:?}, \
         expected {expected:?}; remove the `links = \"mdbx\"` override or the other libmdbx \
         from the build"
    );
    false
}

impl Env {
    /// Opens the environment, with the full-disk guarantees of `docs/design.md` ("A full
    /// disk"): `MDBX_WRITEMAP` is used only where every page libmdbx may write through the map
    /// is reserved on disk ([`MapSpace`]); elsewhere the environment is opened without it and a
    /// warning says why. (The lock file, always mapped writable, is written whole by libmdbx
    /// before it maps it: out of space there is `ENOSPC` from the open, patch `lck-written`.)
    ///
    /// `lock_existed` says whether something was at the lock file's path before (`None`: look
    /// now): a refused open removes a lock file that was not there.
    pub fn open_checked(
        path: &Path,
        cfg: &EnvConfig,
        lock_existed: Option<bool>,
    ) -> Result<Env, Code> {
        Env::open_as(path, cfg, false, lock_existed)
    }

    /// [`open_checked`](Self::open_checked), looking at the lock file's path itself.
    #[cfg(test)]
    pub fn open(path: &Path, cfg: &EnvConfig) -> Result<Env, Code> {
        Env::open_as(path, cfg, false, None)
    }

    /// Opens the environment read-only (`MDBX_RDONLY`: libmdbx never creates or initialises a
    /// database then) but configured as `cfg`'s read-write open would be, geometry and page size
    /// included, so libmdbx reads the meta pages at the same offsets; then closes it. An
    /// `ENODATA` from it means a read-write open would have found the file too short and
    /// initialised it as a new database.
    pub fn probe_read_only(path: &Path, cfg: &EnvConfig) -> Result<(), Code> {
        Env::open_as(path, cfg, true, None).map(drop)
    }

    fn open_as(
        path: &Path,
        cfg: &EnvConfig,
        probe: bool,
        lock_existed: Option<bool>,
    ) -> Result<Env, Code> {
        let writable = !probe && !cfg.read_only;
        // A refused open leaves the directory as it found it: the lock file it created (libmdbx
        // creates it before it reads the data file) goes again.
        let lock_existed = lock_existed.unwrap_or_else(|| {
            DatabaseFiles::of(path, cfg.no_sub_dir)
                .lock
                .symlink_metadata()
                .is_ok()
        });
        let mut env = Self::open_reserved(path, cfg, probe).inspect_err(|_| {
            if !lock_existed {
                remove_unused_lock_file(&DatabaseFiles::of(path, cfg.no_sub_dir).lock);
            }
        })?;
        if writable && matches!(cfg.sync, Durability::NoMetaSync | Durability::SafeNoSync) {
            // Flushes the data file once. When libmdbx initialises the lock file (the first
            // open after every process closed or died) it takes the newest meta page for
            // flushed; after a process crash under these modes it may still be only in the page
            // cache, and the GC would reuse the pages of the snapshot before it at once. The
            // nometasync-gc patch leaves that case to the caller ("Not patched, a related
            // case" in `crates/mdbx-sys/patches/libmdbx-0.14.4-nometasync-gc.md`); the rest of
            // what these modes promise is the patched libmdbx's (`docs/reliability.md`).
            env.flush_data_file()?;
        }
        if let (Some(bytes), false) = (cfg.sync_bytes, probe) {
            env.set_sync_bytes(bytes)?;
        }
        if !probe && !cfg.read_only {
            env.set_tuning(&cfg.tuning)?;
        }
        if let (Some(slow), false) = (&cfg.slow_readers, probe) {
            env.install_slow_reader_hook(slow)?;
        }
        Ok(env)
    }

    fn open_reserved(path: &Path, cfg: &EnvConfig, probe: bool) -> Result<Env, Code> {
        check_linked_build()?;
        route_logging();
        if probe {
            return Self::open_mapped(path, cfg, false, true);
        }
        if cfg.read_only {
            // The data file is never written: nothing to decide about its map.
            return Self::open_mapped(path, cfg, cfg.write_map, false);
        }
        if !cfg.write_map {
            return Self::open_mapped(path, cfg, false, false);
        }
        // The directory's file system first (the data file may not exist yet), so that the
        // common refusal (a tmpfs) costs no second open.
        let dir = if cfg.no_sub_dir {
            path.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
        } else {
            path
        };
        if let MapSpace::Unreservable(why) = MapSpace::of_path(dir) {
            warn_write_map_off(path, &why);
            return Self::open_mapped(path, cfg, false, false);
        }
        let env = Self::open_mapped(path, cfg, true, false)?;
        match env.reserve_data_file() {
            MapSpace::Reserved => Ok(env),
            MapSpace::Unreservable(why) => {
                drop(env);
                warn_write_map_off(path, &why);
                Self::open_mapped(path, cfg, false, false)
            }
        }
    }

    /// Sets up cuttable read transactions ([`CutTable`], one slot per reader slot) and, on a
    /// writable environment, libmdbx's slow-reader callback with `slow`'s policy.
    fn install_slow_reader_hook(&mut self, slow: &SlowReaders) -> Result<(), Code> {
        let readers = self.max_readers()?.min(limits::MAX_READERS);
        let max_age_ms = slow.max_age_ms;
        let policy: Policy = match &slow.policy {
            Some(policy) => std::sync::Arc::clone(policy),
            None => std::sync::Arc::new(move |laggard: &Laggard| {
                let begun_by_ms = laggard.now_ms.saturating_sub(max_age_ms);
                match laggard.cuttable.oldest_start_ms {
                    Some(oldest) if max_age_ms != u64::MAX && oldest <= begun_by_ms => {
                        Verdict::Cut { begun_by_ms }
                    }
                    _ => Verdict::Grow,
                }
            }),
        };
        let hook = Box::new(SlowReaderHook {
            table: CutTable::new(readers as usize, max_age_ms),
            policy,
        });
        let ctx = (&*hook as *const SlowReaderHook)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: the env is open; the context points into a box owned by `self` and freed only
        // after `mdbx_env_close_ex` (field drop order after `Drop::drop`), so the callback never
        // sees it dangling.
        check(unsafe { sys::mdbx_env_set_userctx(self.ptr.as_ptr(), ctx) })?;
        self.hook = Some(hook);
        let mut flags: c_uint = 0;
        // SAFETY: the env is open; `flags` is a valid out-parameter.
        check(unsafe { sys::mdbx_env_get_flags(self.ptr.as_ptr(), &mut flags) })?;
        if flags & sys::MDBX_RDONLY == 0 {
            // SAFETY: the env is open; `handle_slow_reader` matches `MDBX_hsr_func`, never
            // unwinds, and only reads the user context set above.
            check(unsafe { sys::mdbx_env_set_hsr(self.ptr.as_ptr(), Some(handle_slow_reader)) })?;
        }
        Ok(())
    }

    /// The registry of cuttable read transactions, when long-reader control is configured.
    #[inline]
    pub fn cut_table(&self) -> Option<&std::sync::Arc<CutTable>> {
        self.hook.as_ref().map(|h| &h.table)
    }

    /// Whether libmdbx checks every page it loads (`MDBX_VALIDATION`).
    pub fn validates(&self) -> bool {
        let mut flags: c_uint = 0;
        // SAFETY: the env is open; `flags` is a valid out-parameter.
        let rc = unsafe { sys::mdbx_env_get_flags(self.ptr.as_ptr(), &mut flags) };
        rc == sys::MDBX_SUCCESS && flags & sys::MDBX_VALIDATION != 0
    }

    /// Switches libmdbx's page checks (`MDBX_VALIDATION`) on or off for the cursors begun from
    /// now on (a cursor takes the flag when it is set up). libmdbx refuses it on a read-only
    /// environment (`MDBX_EACCESS`), and takes the write lock for it unless this thread holds
    /// the write transaction.
    pub fn set_validation(&self, on: bool) -> Result<(), Code> {
        // SAFETY: the env is open; `MDBX_VALIDATION` is one of the flags mdbx.c lets change at
        // run time (`ENV_CHANGEABLE_FLAGS`), under its own locking.
        check(unsafe { sys::mdbx_env_set_flags(self.ptr.as_ptr(), sys::MDBX_VALIDATION, on) })
    }

    /// Whether the data file is mapped writable (`MDBX_WRITEMAP`).
    pub fn write_map(&self) -> bool {
        let mut flags: c_uint = 0;
        // SAFETY: the env is open; `flags` is a valid out-parameter.
        let rc = unsafe { sys::mdbx_env_get_flags(self.ptr.as_ptr(), &mut flags) };
        rc == sys::MDBX_SUCCESS && flags & sys::MDBX_WRITEMAP != 0
    }

    /// Reserves disk space for the whole data file as it is now (`fallocate` with
    /// `FALLOC_FL_KEEP_SIZE`), after checking that its file system keeps such a reservation
    /// for writes through a memory map. libmdbx reserves what it grows the file by itself
    /// (`osal_fsetsize`, and on these file systems it reports the failure); this covers what
    /// was there before: a file copied with holes, or one that grew on another file system.
    #[cfg(target_os = "linux")]
    fn reserve_data_file(&self) -> MapSpace {
        let mut fd: sys::mdbx_filehandle_t = -1;
        // SAFETY: the env is open; `fd` is a valid out-parameter. The descriptor stays owned
        // by libmdbx: it is only passed to fstatfs, fstat and fallocate below, never closed.
        let rc = unsafe { sys::mdbx_env_get_fd(self.ptr.as_ptr(), &mut fd) };
        if rc != sys::MDBX_SUCCESS {
            return MapSpace::Unreservable(format!(
                "its descriptor is unavailable ({})",
                Code(rc).name()
            ));
        }
        // SAFETY: `statfs` is a plain C struct for which all-zero bytes are valid.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is libmdbx's open data-file descriptor; `fs` is a valid out-parameter.
        if unsafe { libc::fstatfs(fd, &mut fs) } != 0 {
            return MapSpace::Unreservable("fstatfs failed on the data file".to_owned());
        }
        if let MapSpace::Unreservable(why) = MapSpace::of_type(fs.f_type as u64) {
            return MapSpace::Unreservable(why);
        }
        // SAFETY: `stat` is a plain C struct for which all-zero bytes are valid.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `st` is a valid out-parameter.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return MapSpace::Unreservable("fstat failed on the data file".to_owned());
        }
        if st.st_size <= 0 {
            return MapSpace::Reserved;
        }
        // SAFETY: `fd` is libmdbx's data-file descriptor, open for writing (not read-only);
        // KEEP_SIZE allocates blocks for the range without changing the file's size or
        // contents, so libmdbx's view of the file is unchanged.
        if unsafe { libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, st.st_size) } != 0 {
            let err = std::io::Error::last_os_error();
            return MapSpace::Unreservable(format!(
                "reserving the data file's {} bytes failed: {err}",
                st.st_size
            ));
        }
        MapSpace::Reserved
    }

    #[cfg(not(target_os = "linux"))]
    fn reserve_data_file(&self) -> MapSpace {
        MapSpace::Reserved
    }

    /// Creates, configures and opens the environment; `probe` as in [`Env::probe_read_only`].
    fn open_mapped(
        path: &Path,
        cfg: &EnvConfig,
        write_map: bool,
        probe: bool,
    ) -> Result<Env, Code> {
        let cpath = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| Code::EINVAL)?;
        let mut raw: *mut sys::MDBX_env = ptr::null_mut();
        // SAFETY: mdbx_env_create writes a new env handle into `raw` on success.
        check(unsafe { sys::mdbx_env_create(&mut raw) })?;
        let env = Env {
            ptr: NonNull::new(raw).ok_or(Code::EINVAL)?,
            hook: None,
        };
        let [lower, now, upper, step, shrink, page] = cfg.geometry;
        // SAFETY: `env.ptr` is a freshly created env that is not open yet: options and geometry
        // may be set. On any error `env` is dropped, which closes the handle.
        unsafe {
            check(sys::mdbx_env_set_option(
                env.ptr.as_ptr(),
                sys::MDBX_opt_max_db,
                cfg.max_tables,
            ))?;
            if let Some(readers) = cfg.max_readers {
                check(sys::mdbx_env_set_option(
                    env.ptr.as_ptr(),
                    sys::MDBX_opt_max_readers,
                    readers.min(u64::from(limits::MAX_READERS)),
                ))?;
            }
            if !cfg.read_only || probe {
                check(sys::mdbx_env_set_geometry(
                    env.ptr.as_ptr(),
                    lower,
                    now,
                    upper,
                    step,
                    shrink,
                    page,
                ))?;
            }
        }
        let mut flags = sys::MDBX_NOSTICKYTHREADS;
        flags |= match cfg.sync {
            Durability::Durable => sys::MDBX_SYNC_DURABLE,
            Durability::NoMetaSync => sys::MDBX_NOMETASYNC,
            Durability::SafeNoSync => sys::MDBX_SAFE_NOSYNC,
            Durability::UtterlyNoSync => sys::MDBX_UTTERLY_NOSYNC,
        };
        if cfg.read_only || probe {
            flags |= sys::MDBX_RDONLY;
        }
        if cfg.exclusive && !probe {
            flags |= sys::MDBX_EXCLUSIVE;
        }
        if write_map && !probe {
            flags |= sys::MDBX_WRITEMAP;
        }
        if cfg.no_sub_dir {
            flags |= sys::MDBX_NOSUBDIR;
        }
        if cfg.validation {
            flags |= sys::MDBX_VALIDATION;
        }
        // SAFETY: the env is created and configured but not yet open; `cpath` is a valid
        // NUL-terminated path that outlives the call.
        check(unsafe {
            sys::mdbx_env_open(env.ptr.as_ptr(), cpath.as_ptr(), flags, cfg.mode as _)
        })?;
        Ok(env)
    }

    pub fn begin(&self, read_only: bool) -> Result<RawTxn, Code> {
        let flags = if read_only {
            sys::MDBX_TXN_RDONLY
        } else {
            // Before a write, free the reader slots of processes that died holding a read
            // transaction. libmdbx 0.14.4 does that itself only when a write runs out of
            // space, and then fails that write anyway: `mvcc_kick_laggards` returns whether
            // the oldest reader moved on as computed *before* it cleared the dead slots, so
            // the page allocation gives up with `MDBX_MAP_FULL` and only the next write
            // finds the space (`tests/dead_reader.rs`). Scanning the reader table costs no
            // system call for this process's own slots and one `fcntl` lock probe per other
            // process with a reader; a failure here only means the check did not happen.
            let _ = self.reader_check();
            sys::MDBX_TXN_READWRITE
        };
        self.begin_flags(flags)
    }

    /// A write transaction whose commit is not flushed (`MDBX_TXN_NOSYNC`: libmdbx's
    /// `MDBX_SAFE_NOSYNC` for this transaction only), when the environment is durable
    /// (`MDBX_SYNC_DURABLE`). Otherwise an ordinary write transaction: the no-sync modes do not
    /// flush at commit anyway, and under `MDBX_NOMETASYNC` the newest steady meta page may not
    /// be on the disk yet, which unflushed commits could then replace (the bulk load flushes
    /// first there for that reason).
    pub fn begin_write_nosync(&self) -> Result<RawTxn, Code> {
        let _ = self.reader_check(); // as in `begin`
        let mut env_flags: c_uint = 0;
        // SAFETY: the env is open; `env_flags` is a valid out-parameter.
        check(unsafe { sys::mdbx_env_get_flags(self.ptr.as_ptr(), &mut env_flags) })?;
        let durable = env_flags & (sys::MDBX_SAFE_NOSYNC | sys::MDBX_NOMETASYNC) == 0;
        let flags = if durable {
            sys::MDBX_TXN_READWRITE | sys::MDBX_TXN_NOSYNC
        } else {
            sys::MDBX_TXN_READWRITE
        };
        self.begin_flags(flags)
    }

    /// `mdbx_txn_begin_ex` with `flags`, for [`begin`](Self::begin) and
    /// [`begin_write_nosync`](Self::begin_write_nosync).
    fn begin_flags(&self, flags: sys::MDBX_txn_flags_t) -> Result<RawTxn, Code> {
        let mut txn: *mut sys::MDBX_txn = ptr::null_mut();
        // SAFETY: the env is open for the life of `self`; a top-level txn has a null parent; on
        // success libmdbx writes a txn handle into `txn`.
        check(unsafe {
            sys::mdbx_txn_begin_ex(
                self.ptr.as_ptr(),
                ptr::null_mut(),
                flags,
                &mut txn,
                ptr::null_mut(),
            )
        })?;
        Ok(RawTxn::from_ptr(NonNull::new(txn).ok_or(Code::EINVAL)?))
    }

    /// Flushes the data file's written pages to the disk (`fdatasync` on libmdbx's
    /// descriptor), whatever libmdbx believes is flushed already.
    pub fn flush_data_file(&self) -> Result<(), Code> {
        let mut fd: sys::mdbx_filehandle_t = -1;
        // SAFETY: the env is open; `fd` is a valid out-parameter. The descriptor stays owned by
        // libmdbx: it is only passed to fdatasync below, never closed.
        check(unsafe { sys::mdbx_env_get_fd(self.ptr.as_ptr(), &mut fd) })?;
        // SAFETY: `fd` is libmdbx's open data-file descriptor.
        if unsafe { libc::fdatasync(fd) } != 0 {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            return Err(Code(errno));
        }
        Ok(())
    }

    pub fn info(&self) -> Result<EnvInfo, Code> {
        // SAFETY: MDBX_envinfo is a plain C struct for which all-zero bytes are valid.
        let mut info: sys::MDBX_envinfo = unsafe { std::mem::zeroed() };
        // SAFETY: the env is open; `info` is a properly sized out-parameter; a null txn asks for
        // the env-wide view.
        check(unsafe {
            sys::mdbx_env_info_ex(
                self.ptr.as_ptr(),
                ptr::null(),
                &mut info,
                std::mem::size_of::<sys::MDBX_envinfo>(),
            )
        })?;
        Ok(EnvInfo {
            map_size: info.mi_mapsize,
            file_size: info.mi_dxb_fsize,
            upper: info.mi_geo.upper,
            page_size: info.mi_dxb_pagesize,
            last_txn: info.mi_recent_txnid,
            max_readers: info.mi_maxreaders,
            readers: info.mi_numreaders,
            lower: info.mi_geo.lower,
            current: info.mi_geo.current,
            shrink: info.mi_geo.shrink,
            growth: info.mi_geo.grow,
            oldest_reader_txn: info.mi_latter_reader_txnid,
            unsynced: info.mi_unsync_volume,
        })
    }

    /// The reader slots of the lock file ([`EnvInfo::max_readers`], `env->max_readers`),
    /// read alone: [`info`](Self::info) also takes a snapshot of the meta pages, the geometry
    /// and the lock file's counters.
    pub fn max_readers(&self) -> Result<u32, Code> {
        let mut readers: u64 = 0;
        // SAFETY: the env is open; `readers` is a valid out-parameter. `MDBX_opt_max_readers`
        // reads the slot count the open settled on (`env->max_readers`, what
        // `mdbx_env_info_ex` reports as `mi_maxreaders`).
        check(unsafe {
            sys::mdbx_env_get_option(self.ptr.as_ptr(), sys::MDBX_opt_max_readers, &mut readers)
        })?;
        Ok(u32::try_from(readers).unwrap_or(u32::MAX))
    }

    /// Clears the reader slots of processes that no longer exist (`mdbx_reader_check`);
    /// returns how many were cleared.
    pub fn reader_check(&self) -> Result<u32, Code> {
        let mut dead: c_int = 0;
        // SAFETY: the env is open; `dead` is a valid out-parameter. libmdbx takes its reader
        // table lock itself when it finds a slot to clear.
        let rc = unsafe { sys::mdbx_reader_check(self.ptr.as_ptr(), &mut dead) };
        // MDBX_RESULT_TRUE: dead readers were found (and cleared).
        if rc != sys::MDBX_RESULT_TRUE {
            check(rc)?;
        }
        Ok(dead.max(0) as u32)
    }

    /// The occupied slots of the reader table, in every process using the file.
    pub fn readers(&self) -> Result<Vec<ReaderInfo>, Code> {
        let mut out: Vec<ReaderInfo> = Vec::new();
        // SAFETY: the env is open; `collect_reader` matches `MDBX_reader_list_func` and only
        // touches `out`, which outlives the call and is not otherwise used during it.
        let rc = unsafe {
            sys::mdbx_reader_list(
                self.ptr.as_ptr(),
                Some(collect_reader),
                (&mut out as *mut Vec<ReaderInfo>).cast(),
            )
        };
        // MDBX_RESULT_TRUE: the reader table is empty.
        if rc != sys::MDBX_RESULT_TRUE {
            check(rc)?;
        }
        Ok(out)
    }

    /// Writes a copy of the database to the file `dest` (which must not exist), dropping free
    /// pages and renumbering the rest when `compact`.
    pub fn copy_to(&self, dest: &Path, compact: bool) -> Result<(), Code> {
        let cpath = CString::new(dest.as_os_str().as_encoded_bytes()).map_err(|_| Code::EINVAL)?;
        let flags = if compact {
            sys::MDBX_CP_COMPACT
        } else {
            sys::MDBX_CP_DEFAULTS
        };
        // SAFETY: the env is open; the copy runs in its own read transaction inside libmdbx;
        // `cpath` is NUL-terminated and outlives the call.
        check(unsafe { sys::mdbx_env_copy(self.ptr.as_ptr(), cpath.as_ptr(), flags) })
    }

    /// Flushes every commit not yet on disk and writes a steady meta page
    /// (`mdbx_env_sync_ex(force = true)`), waiting for a running write transaction of another
    /// thread. Nothing to flush is success too.
    pub fn sync(&self) -> Result<(), Code> {
        // SAFETY: the env is open for the life of `self`; mdbx_env_sync_ex is thread-safe and
        // takes the writer lock itself when it has to write a meta page.
        let rc = unsafe { sys::mdbx_env_sync_ex(self.ptr.as_ptr(), true, false) };
        // MDBX_RESULT_TRUE: nothing was pending.
        if rc == sys::MDBX_RESULT_TRUE {
            return Ok(());
        }
        check(rc)
    }

    /// The auto-sync threshold in bytes (`MDBX_opt_sync_bytes`; 0 = none): in the no-sync
    /// modes a commit flushes once this much is unflushed.
    pub fn sync_bytes(&self) -> Result<u64, Code> {
        let mut value: u64 = 0;
        // SAFETY: the env is open; `value` is a valid out-parameter.
        check(unsafe {
            sys::mdbx_env_get_option(self.ptr.as_ptr(), sys::MDBX_opt_sync_bytes, &mut value)
        })?;
        Ok(value)
    }

    /// Sets the auto-sync threshold (see [`sync_bytes`](Self::sync_bytes)). A non-zero
    /// threshold also stops libmdbx from flushing a steady commit each time a weak (unflushed)
    /// commit fills the file at its current size. Shared with other processes (it lives in the
    /// lock file).
    pub fn set_sync_bytes(&self, bytes: u64) -> Result<(), Code> {
        // SAFETY: the env is open; libmdbx stores the value atomically and, when the calling
        // thread owns no write txn, polls a flush itself (taking the writer lock as needed).
        check(unsafe {
            sys::mdbx_env_set_option(self.ptr.as_ptr(), sys::MDBX_opt_sync_bytes, bytes)
        })
    }

    /// Sets libmdbx's in-process write settings ([`Tuning`]); each `None` is left alone. Called
    /// right after the open, before any transaction (libmdbx refuses a new dirty-page limit
    /// while a write transaction runs).
    pub fn set_tuning(&self, tuning: &Tuning) -> Result<(), Code> {
        let mut set: Vec<(sys::MDBX_option_t, u64)> = Vec::new();
        if let Some(balance) = tuning.balance {
            set.push((
                sys::MDBX_opt_prefer_waf_insteadof_balance,
                u64::from(!balance),
            ));
        }
        if let Some(pages) = tuning.dirty_page_limit {
            set.push((sys::MDBX_opt_txn_dp_limit, pages));
        }
        if let Some((min, max)) = tuning.spill_denominators {
            set.push((sys::MDBX_opt_spill_min_denominator, u64::from(min)));
            set.push((sys::MDBX_opt_spill_max_denominator, u64::from(max)));
        }
        if let Some(pages) = tuning.dirty_page_reserve {
            set.push((sys::MDBX_opt_dp_reserve_limit, pages));
        }
        if let Some(dot16) = tuning.merge_threshold {
            set.push((sys::MDBX_opt_merge_threshold, dot16));
        }
        for (option, value) in set {
            // SAFETY: the env is open; these options are in-process settings libmdbx stores in
            // the env handle (the dirty-page reserve and limit take the writer lock themselves,
            // and no write transaction of this env exists yet).
            check(unsafe { sys::mdbx_env_set_option(self.ptr.as_ptr(), option, value) })?;
        }
        Ok(())
    }

    /// Largest key (in bytes) a table with `flags` accepts.
    pub fn max_key_size(&self, flags: u32) -> usize {
        // SAFETY: the env is open; the call only reads its page size.
        let n = unsafe { sys::mdbx_env_get_maxkeysize_ex(self.ptr.as_ptr(), flags) };
        n.max(0) as usize
    }

    /// Largest value (in bytes) a table with `flags` accepts.
    pub fn max_value_size(&self, flags: u32) -> usize {
        // SAFETY: the env is open; the call only reads its page size.
        let n = unsafe { sys::mdbx_env_get_maxvalsize_ex(self.ptr.as_ptr(), flags) };
        n.max(0) as usize
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: `Env` is dropped last: `Db` drops its pooled transactions first, and every
        // transaction borrows the `Db`. The handle is not used after this.
        unsafe {
            sys::mdbx_env_close_ex(self.ptr.as_ptr(), false);
        }
    }
}

/// What libmdbx's integrity check (`mdbx_env_chk`) found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChkResult {
    /// Problems found (`result.total_problems`); 0 means the file is consistent.
    pub problems: u64,
    /// Tables walked, the main and GC trees included.
    pub tables: u64,
    /// Pages visited.
    pub pages: u64,
    /// The transaction ID of the checked snapshot.
    pub txn_id: u64,
}

impl Env {
    /// The environment, for the calls made in sibling modules (`chk`).
    pub(super) fn raw_env(&self) -> *mut sys::MDBX_env {
        self.ptr.as_ptr()
    }

    /// Runs `mdbx_env_chk` in its default read-only mode: a read transaction on the latest
    /// snapshot, every meta page, the page tree, the GC and every key-value pair of every table
    /// walked. Problems are counted, not printed (no print callbacks).
    ///
    /// `Err` only when the check itself could not run; a damaged file gives `Ok` with
    /// `problems > 0`.
    pub fn check(&self) -> Result<ChkResult, Code> {
        // SAFETY: MDBX_chk_callbacks_t is a struct of nullable function pointers; all-zero bytes
        // are all `None`, which mdbx.h allows ("All callback functions are optional, unused ones
        // must be set to nullptr"): without print callbacks libmdbx still counts every problem.
        let mut callbacks: sys::MDBX_chk_callbacks_t = unsafe { std::mem::zeroed() };
        // libmdbx 0.14.4 does not fill `result.recent_txnid`; the stage callback records the ID
        // of the read transaction the check walks, while it is live.
        callbacks.stage_begin = Some(record_checked_txn);
        // SAFETY: MDBX_chk_context_t is a plain C struct; mdbx_env_chk requires `internal` to be
        // null on entry, which all-zero bytes give, and fills in the rest.
        let mut ctx: sys::MDBX_chk_context_t = unsafe { std::mem::zeroed() };
        // SAFETY: the env is open for the life of `self`; `callbacks` and `ctx` outlive the
        // call, which is synchronous, begins and aborts its own read txn, and frees its
        // internal state before returning. Afterwards only the plain counters in `ctx.result`
        // are read, never its `tables` pointer (freed with that state).
        let rc = unsafe {
            sys::mdbx_env_chk(
                self.ptr.as_ptr(),
                &callbacks,
                &mut ctx,
                sys::MDBX_CHK_DEFAULTS,
                sys::MDBX_chk_error,
                0,
            )
        };
        let result = &ctx.result;
        let found = ChkResult {
            problems: result.total_problems as u64,
            tables: result.table_total as u64,
            pages: result.processed_pages as u64,
            txn_id: result.recent_txnid,
        };
        match rc {
            sys::MDBX_SUCCESS => Ok(found),
            // MDBX_PROBLEM is how the check says "problems were counted"; a corruption code means
            // the walk hit a damaged structure: both are findings, not a failure to check.
            sys::MDBX_PROBLEM
            | sys::MDBX_CORRUPTED
            | sys::MDBX_PAGE_NOTFOUND
            | sys::MDBX_WANNA_RECOVERY
            | sys::MDBX_PANIC => Ok(ChkResult {
                problems: found.problems.max(1),
                ..found
            }),
            rc => Err(Code(rc)),
        }
    }
}

/// `mdbx_env_chk`'s stage callback: records the ID of the transaction being checked in
/// `ctx.result.recent_txnid` (libmdbx leaves that field unset) as soon as the check has one.
///
/// # Safety
///
/// libmdbx calls it with the live context of a running `mdbx_env_chk`.
unsafe extern "C" fn record_checked_txn(
    ctx: *mut sys::MDBX_chk_context_t,
    _stage: sys::MDBX_chk_stage_t,
) -> std::ffi::c_int {
    // SAFETY: `ctx` is the context `Env::check` passed to `mdbx_env_chk`, valid for the call;
    // while the check runs its `txn` is null or the check's own live read transaction.
    unsafe {
        let ctx = &mut *ctx;
        if !ctx.txn.is_null() && ctx.result.recent_txnid == 0 {
            ctx.result.recent_txnid = sys::mdbx_txn_id(ctx.txn);
        }
    }
    sys::MDBX_SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The linked libmdbx is tabula-mdbx-sys's build, so opens go ahead; another patch set's
    /// name, an empty one (libmdbx's default) or none at all is refused.
    #[test]
    fn only_the_sys_crates_libmdbx_build_is_accepted() {
        let linked = linked_build_metadata();
        assert_eq!(linked.as_deref(), Some(sys::BUILD_METADATA));
        assert_eq!(check_linked_build(), Ok(()));
        assert!(build_matches(
            Some(sys::BUILD_METADATA),
            sys::BUILD_METADATA
        ));
        assert!(!build_matches(
            Some("tabula-mdbx-sys:other"),
            sys::BUILD_METADATA
        ));
        assert!(!build_matches(Some(""), sys::BUILD_METADATA));
        assert!(!build_matches(None, sys::BUILD_METADATA));
    }

    fn files(path: &str, no_sub_dir: bool) -> (String, String, String, bool) {
        let f = DatabaseFiles::of(Path::new(path), no_sub_dir);
        let s = |p: &Path| p.display().to_string();
        (
            s(&f.data),
            s(&f.lock),
            s(&f.second_lock),
            f.opened_as_directory,
        )
    }

    /// `Options::balance_pages` and the settings after it reach libmdbx: each option reads back
    /// as set, and an environment without them keeps libmdbx's defaults.
    #[test]
    fn tuning_is_set_in_libmdbx() {
        let get = |env: &Env, option: sys::MDBX_option_t| {
            let mut value = 0u64;
            // SAFETY: the env is open; `value` is a valid out-parameter.
            let rc = unsafe { sys::mdbx_env_get_option(env.ptr.as_ptr(), option, &mut value) };
            assert_eq!(rc, sys::MDBX_SUCCESS);
            value
        };
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = EnvConfig::for_tests(None, 1 << 30);
        let plain = Env::open(dir.path(), &cfg).unwrap();
        assert_eq!(get(&plain, sys::MDBX_opt_prefer_waf_insteadof_balance), 1);
        assert_eq!(get(&plain, sys::MDBX_opt_spill_min_denominator), 8);
        drop(plain);
        cfg.tuning = Tuning {
            balance: Some(true),
            dirty_page_limit: Some(1000),
            spill_denominators: Some((2, 3)),
            dirty_page_reserve: Some(77),
            merge_threshold: Some(16_384),
        };
        let env = Env::open(dir.path(), &cfg).unwrap();
        assert_eq!(get(&env, sys::MDBX_opt_prefer_waf_insteadof_balance), 0);
        assert_eq!(get(&env, sys::MDBX_opt_txn_dp_limit), 1000);
        assert_eq!(get(&env, sys::MDBX_opt_spill_min_denominator), 2);
        assert_eq!(get(&env, sys::MDBX_opt_spill_max_denominator), 3);
        assert_eq!(get(&env, sys::MDBX_opt_dp_reserve_limit), 77);
        assert_eq!(get(&env, sys::MDBX_opt_merge_threshold), 16_384);
    }

    /// The names libmdbx 0.14.4's `env_handle_pathname` gives (mdbx.c): the lock file it uses
    /// and the one whose presence makes it refuse with MDBX_DUPLICATED_LCK.
    #[test]
    fn files_are_named_as_libmdbx_names_them() {
        let t = |a: &str, b: &str, c: &str, d| (a.into(), b.into(), c.into(), d);
        assert_eq!(
            files("d", false),
            t("d/mdbx.dat", "d/mdbx.lck", "d/mdbx.dat-lck", false)
        );
        assert_eq!(
            files("d/mdbx.dat", true),
            t("d/mdbx.dat", "d/mdbx.lck", "d/mdbx.dat-lck", true)
        );
        assert_eq!(
            files("mdbx.dat", true),
            t("mdbx.dat", "mdbx.lck", "mdbx.dat-lck", true)
        );
        assert_eq!(
            files("d/store.db", true),
            t("d/store.db", "d/store.db-lck", "d/store.lck", false)
        );
        assert_eq!(
            files("d.x/store", true),
            t("d.x/store", "d.x/store-lck", "d.x/store.lck", false)
        );
        assert_eq!(
            files("d/a.b.c", true),
            t("d/a.b.c", "d/a.b.c-lck", "d/a.b.lck", false)
        );
        // Only the exact name: `xmdbx.dat` is a data file of its own.
        assert_eq!(
            files("d/xmdbx.dat", true),
            t("d/xmdbx.dat", "d/xmdbx.dat-lck", "d/xmdbx.lck", false)
        );
    }
}
