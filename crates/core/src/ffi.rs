//! The only module that calls libmdbx. Every `unsafe` block in Tabula is here, each with a
//! `// SAFETY:` note naming the invariant it relies on.
//!
//! The wrappers are thin and untyped (bytes in, bytes out, libmdbx codes as errors); the typed
//! layer in `txn` adds tables, codecs and error context.
//!
//! Ownership rules the types below encode:
//! - [`Env`] owns the environment and closes it on drop. Everything that uses it borrows it or
//!   is dropped first (`Db` drops its pooled read transactions before its `Env`).
//! - [`RawTxn`] owns a transaction object and aborts it on drop. A read transaction may move
//!   between threads (the environment is opened with `MDBX_NOSTICKYTHREADS`); a write transaction
//!   never does: its owner (`Tx<Rw>`) is `!Send`.
//! - Slices handed out by [`RawTxn::get`] and [`RawCursor::get`] live as long as the shared borrow
//!   of the transaction they came from. Writes take `&mut RawTxn`, so no slice can be alive when
//!   libmdbx changes the pages it points into; resetting or ending the transaction takes it by
//!   value or `&mut`, for the same reason.

use std::ffi::{CStr, CString, c_int, c_uint, c_void};
use std::marker::PhantomData;
use std::path::Path;
use std::ptr::{self, NonNull};

use mdbx_sys as sys;

pub(crate) use sys::MDBX_dbi as Dbi;

/// A libmdbx return code other than success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code(pub c_int);

impl Code {
    pub const NOTFOUND: Code = Code(sys::MDBX_NOTFOUND);
    pub const KEYEXIST: Code = Code(sys::MDBX_KEYEXIST);
    pub const MAP_FULL: Code = Code(sys::MDBX_MAP_FULL);
    pub const READERS_FULL: Code = Code(sys::MDBX_READERS_FULL);
    pub const BAD_VALSIZE: Code = Code(sys::MDBX_BAD_VALSIZE);
    pub const EKEYMISMATCH: Code = Code(sys::MDBX_EKEYMISMATCH);
    pub const INVALID: Code = Code(sys::MDBX_INVALID);
    pub const CORRUPTED: Code = Code(sys::MDBX_CORRUPTED);
    pub const PROBLEM: Code = Code(sys::MDBX_PROBLEM);
    pub const PAGE_NOTFOUND: Code = Code(sys::MDBX_PAGE_NOTFOUND);
    pub const VERSION_MISMATCH: Code = Code(sys::MDBX_VERSION_MISMATCH);
    pub const INCOMPATIBLE: Code = Code(sys::MDBX_INCOMPATIBLE);
    pub const DBS_FULL: Code = Code(sys::MDBX_DBS_FULL);
    pub const TXN_FULL: Code = Code(sys::MDBX_TXN_FULL);
    pub const ENOFILE: Code = Code(sys::MDBX_ENOFILE);
    pub const EACCESS: Code = Code(sys::MDBX_EACCESS);
    pub const EINVAL: Code = Code(sys::MDBX_EINVAL);
    pub const EAGAIN: Code = Code(libc::EAGAIN);
    pub const BUSY: Code = Code(sys::MDBX_BUSY);
    /// No space left on the file system.
    pub const ENOSPC: Code = Code(libc::ENOSPC);
    /// The user's disk quota is used up.
    pub const EDQUOT: Code = Code(libc::EDQUOT);
    /// An I/O error; libmdbx also reports a short write this way (a write that stopped when
    /// the file system filled up).
    pub const EIO: Code = Code(sys::MDBX_EIO);

    /// Whether the code says the file system is out of space (`ENOSPC`, `EDQUOT`).
    pub fn is_out_of_space(self) -> bool {
        self == Code::ENOSPC || self == Code::EDQUOT
    }

    /// libmdbx's own description of the code.
    pub fn describe(self) -> String {
        // SAFETY: mdbx_strerror returns a pointer to a static or thread-local NUL-terminated
        // string for every code (unknown ones included); it is copied out immediately.
        unsafe {
            let p = sys::mdbx_strerror(self.0);
            if p.is_null() {
                return format!("error {}", self.0);
            }
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }

    /// The symbolic name of the code, e.g. `MDBX_MAP_FULL`, or the errno name.
    pub fn name(self) -> &'static str {
        match self.0 {
            sys::MDBX_KEYEXIST => "MDBX_KEYEXIST",
            sys::MDBX_NOTFOUND => "MDBX_NOTFOUND",
            sys::MDBX_PAGE_NOTFOUND => "MDBX_PAGE_NOTFOUND",
            sys::MDBX_CORRUPTED => "MDBX_CORRUPTED",
            sys::MDBX_PANIC => "MDBX_PANIC",
            sys::MDBX_VERSION_MISMATCH => "MDBX_VERSION_MISMATCH",
            sys::MDBX_INVALID => "MDBX_INVALID",
            sys::MDBX_MAP_FULL => "MDBX_MAP_FULL",
            sys::MDBX_DBS_FULL => "MDBX_DBS_FULL",
            sys::MDBX_READERS_FULL => "MDBX_READERS_FULL",
            sys::MDBX_TXN_FULL => "MDBX_TXN_FULL",
            sys::MDBX_CURSOR_FULL => "MDBX_CURSOR_FULL",
            sys::MDBX_PAGE_FULL => "MDBX_PAGE_FULL",
            sys::MDBX_UNABLE_EXTEND_MAPSIZE => "MDBX_UNABLE_EXTEND_MAPSIZE",
            sys::MDBX_INCOMPATIBLE => "MDBX_INCOMPATIBLE",
            sys::MDBX_BAD_RSLOT => "MDBX_BAD_RSLOT",
            sys::MDBX_BAD_TXN => "MDBX_BAD_TXN",
            sys::MDBX_BAD_VALSIZE => "MDBX_BAD_VALSIZE",
            sys::MDBX_BAD_DBI => "MDBX_BAD_DBI",
            sys::MDBX_PROBLEM => "MDBX_PROBLEM",
            sys::MDBX_BUSY => "MDBX_BUSY",
            sys::MDBX_EMULTIVAL => "MDBX_EMULTIVAL",
            sys::MDBX_EBADSIGN => "MDBX_EBADSIGN",
            sys::MDBX_WANNA_RECOVERY => "MDBX_WANNA_RECOVERY",
            sys::MDBX_EKEYMISMATCH => "MDBX_EKEYMISMATCH",
            sys::MDBX_TOO_LARGE => "MDBX_TOO_LARGE",
            sys::MDBX_THREAD_MISMATCH => "MDBX_THREAD_MISMATCH",
            sys::MDBX_TXN_OVERLAPPING => "MDBX_TXN_OVERLAPPING",
            sys::MDBX_DUPLICATED_LCK => "MDBX_DUPLICATED_LCK",
            sys::MDBX_DANGLING_DBI => "MDBX_DANGLING_DBI",
            sys::MDBX_OUSTED => "MDBX_OUSTED",
            sys::MDBX_MVCC_RETARDED => "MDBX_MVCC_RETARDED",
            sys::MDBX_ENODATA => "ENODATA",
            sys::MDBX_EINVAL => "EINVAL",
            sys::MDBX_EACCESS => "EACCES",
            sys::MDBX_ENOMEM => "ENOMEM",
            sys::MDBX_EROFS => "EROFS",
            sys::MDBX_ENOSYS => "ENOSYS",
            sys::MDBX_EIO => "EIO",
            sys::MDBX_EPERM => "EPERM",
            sys::MDBX_EINTR => "EINTR",
            sys::MDBX_ENOFILE => "ENOENT",
            sys::MDBX_EREMOTE => "EREMOTE",
            sys::MDBX_EDEADLK => "EDEADLK",
            libc::EAGAIN => "EAGAIN",
            libc::EBUSY => "EBUSY",
            libc::ENOTDIR => "ENOTDIR",
            libc::ENOSPC => "ENOSPC",
            libc::EDQUOT => "EDQUOT",
            _ => "error",
        }
    }
}

fn check(rc: c_int) -> Result<(), Code> {
    if rc == sys::MDBX_SUCCESS {
        Ok(())
    } else {
        Err(Code(rc))
    }
}

/// `Ok(false)` for `MDBX_NOTFOUND`, `Ok(true)` for success.
fn check_found(rc: c_int) -> Result<bool, Code> {
    match rc {
        sys::MDBX_SUCCESS => Ok(true),
        sys::MDBX_NOTFOUND => Ok(false),
        rc => Err(Code(rc)),
    }
}

fn val(bytes: &[u8]) -> sys::MDBX_val {
    sys::MDBX_val {
        iov_base: bytes.as_ptr() as *mut c_void,
        iov_len: bytes.len(),
    }
}

const EMPTY: sys::MDBX_val = sys::MDBX_val {
    iov_base: ptr::null_mut(),
    iov_len: 0,
};

/// Turns a value libmdbx returned into a slice.
///
/// # Safety
///
/// `v` must come from a successful libmdbx read in a transaction that stays alive and unmodified
/// for `'t`.
unsafe fn slice<'t>(v: &sys::MDBX_val) -> &'t [u8] {
    if v.iov_len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees the pointer and length describe bytes libmdbx keeps
        // valid (in the map or the txn's dirty pages) for 't.
        unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) }
    }
}

/// A key and a value borrowed from libmdbx.
pub(crate) type Pair<'a> = (&'a [u8], &'a [u8]);

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
    pub read_only: bool,
    pub exclusive: bool,
    pub write_map: bool,
    pub no_sub_dir: bool,
    /// `MDBX_VALIDATION`: check every page as it is loaded (for damaged or untrusted files).
    pub validation: bool,
    pub mode: u32,
}

/// An open environment. Closed on drop.
pub(crate) struct Env {
    ptr: NonNull<sys::MDBX_env>,
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
}

/// One slot of the reader table (`mdbx_reader_list`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawReader {
    pub slot: i32,
    pub pid: i32,
    pub thread: u64,
    pub txnid: u64,
    pub lag: u64,
    pub bytes_used: usize,
    pub bytes_retained: usize,
}

/// `mdbx_reader_list`'s callback: appends one slot to the `Vec<RawReader>` behind `ctx`.
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
    // SAFETY: `Env::readers` passes a `&mut Vec<RawReader>` as `ctx`, exclusively borrowed for
    // the duration of `mdbx_reader_list`, which calls this synchronously on the same thread.
    let out = unsafe { &mut *ctx.cast::<Vec<RawReader>>() };
    // `pthread_t` is `u64` on 64-bit Linux but not everywhere.
    #[allow(clippy::unnecessary_cast)]
    let thread = thread as u64;
    out.push(RawReader {
        slot,
        pid,
        thread,
        txnid,
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
}

/// Routes libmdbx's own log messages (warnings and worse) to `tracing`, target `libmdbx`.
fn route_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // libmdbx formats each message into this buffer before calling the logger; it must live
        // for the rest of the process, so it is leaked once.
        let buffer: &'static mut [u8] = Box::leak(vec![0u8; 1024].into_boxed_slice());
        // SAFETY: sets process-global logging options once; `log_line` matches the callback
        // signature, never unwinds, and the buffer is valid for the process lifetime.
        unsafe {
            sys::mdbx_setup_debug_nofmt(
                sys::MDBX_LOG_WARN,
                sys::MDBX_DBG_DONTCHANGE,
                Some(log_line),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
            );
        }
    });
}

unsafe extern "C" fn log_line(
    level: sys::MDBX_log_level_t,
    function: *const std::ffi::c_char,
    line: c_int,
    msg: *const std::ffi::c_char,
    length: c_uint,
) {
    let text = if msg.is_null() {
        String::new()
    } else {
        // SAFETY: libmdbx passes `length` valid bytes at `msg` for the duration of the call.
        let bytes = unsafe { std::slice::from_raw_parts(msg.cast::<u8>(), length as usize) };
        String::from_utf8_lossy(bytes).trim_end().to_owned()
    };
    let func = if function.is_null() {
        String::new()
    } else {
        // SAFETY: libmdbx passes a NUL-terminated function name that lives for the call.
        unsafe { CStr::from_ptr(function) }
            .to_string_lossy()
            .into_owned()
    };
    // A panic must not unwind into C.
    let _ = std::panic::catch_unwind(|| {
        if level <= sys::MDBX_LOG_ERROR {
            tracing::error!(target: "libmdbx", function = %func, line, "{text}");
        } else {
            tracing::warn!(target: "libmdbx", function = %func, line, "{text}");
        }
    });
}

/// Tabula's key comparator for tables whose keys compare as bytes: the order of libmdbx's
/// default comparator (`memcmp` of the common length, then the shorter key first), with the
/// result chosen by a conditional branch.
///
/// Why: libmdbx 0.14 searches a page with a branchless binary search, which turns each probe's
/// position into a data dependency of the previous comparison, so on a page that is not in the
/// CPU cache the probes' cache misses run one after another. A comparator whose sign comes out
/// of a branch lets the CPU predict it and start loading the next probe while the current miss
/// is outstanding — LMDB's search works that way. On the cold-get benchmark this brings libmdbx
/// from ≈ 1.3× LMDB's time to about LMDB's (`docs/benchmarks-get-cold.md`). `black_box` keeps
/// the compiler from turning the branches back into a conditional move.
///
/// # Safety
///
/// `a` and `b` point at valid `MDBX_val`s whose bytes are readable for the call (libmdbx's
/// comparator contract).
pub(crate) unsafe extern "C" fn byte_key_cmp(
    a: *const sys::MDBX_val,
    b: *const sys::MDBX_val,
) -> c_int {
    // SAFETY: libmdbx passes two valid values whose bytes live for the call; a zero length
    // with a dangling or null base is turned into an empty slice without reading it.
    let (a, b) = unsafe { (val_bytes(&*a), val_bytes(&*b)) };
    byte_order_branchy(a, b)
}

/// `MDBX_val` as a slice (empty when the length is 0, whatever the pointer).
///
/// # Safety
///
/// When `v.iov_len > 0`, `v.iov_base` points at `v.iov_len` readable bytes for `'a`.
unsafe fn val_bytes<'a>(v: &sys::MDBX_val) -> &'a [u8] {
    if v.iov_len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `iov_len` readable bytes at `iov_base`.
        unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) }
    }
}

/// The byte order of [`byte_key_cmp`], returning -1, 0 or 1 through branches.
#[inline]
pub(crate) fn byte_order_branchy(a: &[u8], b: &[u8]) -> c_int {
    // The common case first (8-byte integer keys, or keys whose first 8 bytes differ): one
    // load of each, one branch.
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return if x < y {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    let common = a.len().min(b.len());
    let (a8, b8) = (a[..common].chunks_exact(8), b[..common].chunks_exact(8));
    let (a_tail, b_tail) = (a8.remainder(), b8.remainder());
    for (x, y) in a8.zip(b8) {
        let x = u64::from_be_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(y.try_into().expect("8 bytes"));
        if x != y {
            return if x < y {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    for (x, y) in a_tail.iter().zip(b_tail) {
        if x != y {
            return if x < y {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Less => std::hint::black_box(-1),
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => std::hint::black_box(1),
    }
}

/// libmdbx's own comparator for `flags` (`mdbx_get_keycmp`), for tests that pin
/// Tabula's key comparator (`byte_key_cmp`) to its order.
pub fn default_key_order(flags: u32, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // SAFETY: `mdbx_get_keycmp` only maps flags to one of libmdbx's built-in functions.
    let cmp = unsafe { sys::mdbx_get_keycmp(flags) }.expect("libmdbx has a comparator");
    let (a, b) = (val(a), val(b));
    // SAFETY: `a` and `b` describe slices alive for the call; built-in comparators only read.
    unsafe { cmp(&a, &b) }.cmp(&0)
}

/// Tabula's key comparator (`byte_key_cmp`) called the way libmdbx calls it, for the same
/// tests.
pub fn branchy_key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (a, b) = (val(a), val(b));
    // SAFETY: `a` and `b` describe slices alive for the call.
    unsafe { byte_key_cmp(&a, &b) }.cmp(&0)
}

/// libmdbx's limits, for checking `Options` before an environment is created.
pub(crate) mod limits {
    use super::sys;

    /// `MDBX_MIN_PAGESIZE`.
    pub const MIN_PAGE_SIZE: usize = sys::MDBX_MIN_PAGESIZE as usize;
    /// `MDBX_MAX_PAGESIZE`.
    pub const MAX_PAGE_SIZE: usize = sys::MDBX_MAX_PAGESIZE as usize;
    /// `MDBX_MAX_DBI`: named tables per environment (`MDBX_opt_max_db` refuses more).
    pub const MAX_TABLES: u64 = sys::MDBX_MAX_DBI as u64;
    /// `MDBX_READERS_LIMIT` (in libmdbx's internals, not in `mdbx.h`): `MDBX_opt_max_readers`
    /// accepts 1 to this many.
    pub const MAX_READERS: u32 = 32767;
    /// `NUM_METAS`: every data file starts with three meta pages.
    pub const META_PAGES: usize = 3;
    /// Pages in the lower size bound libmdbx picks when none is given (`MDBX_WORDBITS`).
    pub const DEFAULT_LOWER_PAGES: usize = usize::BITS as usize;
    /// `MAX_PAGENO + 1`: pages a database can hold.
    pub const MAX_PAGES: u64 = 1 << 31;

    /// The page size libmdbx uses when none is given: the OS page size, within the limits.
    pub fn default_page_size() -> usize {
        // SAFETY: a pure function of libmdbx's globals, which its library constructor sets
        // before any Rust code runs.
        unsafe { sys::mdbx_default_pagesize() }
    }

    /// The largest database, in bytes, with pages of `page_size` (a valid page size):
    /// `MAX_PAGES` pages, capped by the most libmdbx maps (less under Valgrind).
    pub fn max_db_size(page_size: usize) -> usize {
        // SAFETY: a pure function of its argument and libmdbx's globals (set by its library
        // constructor); it returns -1 for an invalid page size, which becomes 0 here.
        let bytes = unsafe { sys::mdbx_limits_dbsize_max(page_size as isize) };
        usize::try_from(bytes).unwrap_or(0)
    }
}

impl Code {
    /// A short read: for an open, the data file is too short for the meta pages libmdbx read.
    pub const ENODATA: Code = Code(sys::MDBX_ENODATA);
    /// Out of memory, or of address space for the map.
    pub const ENOMEM: Code = Code(sys::MDBX_ENOMEM);
    /// A size beyond libmdbx's limits.
    pub const TOO_LARGE: Code = Code(sys::MDBX_TOO_LARGE);
}

impl Env {
    /// Opens the environment, with the full-disk guarantees of `docs/design.md` ("A full
    /// disk"): the lock file's space is reserved before libmdbx zeroes it through a memory map,
    /// and `MDBX_WRITEMAP` is used only where every page libmdbx may write through the map is
    /// reserved on disk ([`MapSpace`]); elsewhere the environment is opened without it and a
    /// warning says why. Out of space while reserving is `ENOSPC`, before libmdbx is involved.
    pub fn open(path: &Path, cfg: &EnvConfig) -> Result<Env, Code> {
        Env::open_as(path, cfg, false)
    }

    /// Opens the environment read-only (`MDBX_RDONLY`: libmdbx never creates or initialises a
    /// database then) but configured as `cfg`'s read-write open would be, geometry and page size
    /// included, so libmdbx reads the meta pages at the same offsets; then closes it. An
    /// `ENODATA` from it means a read-write open would have found the file too short and
    /// initialised it as a new database.
    pub fn probe_read_only(path: &Path, cfg: &EnvConfig) -> Result<(), Code> {
        Env::open_as(path, cfg, true).map(drop)
    }

    fn open_as(path: &Path, cfg: &EnvConfig, probe: bool) -> Result<Env, Code> {
        route_logging();
        reserve_lock_file(path, cfg)?;
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
                    readers,
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
        Ok(RawTxn {
            ptr: NonNull::new(txn).ok_or(Code::EINVAL)?,
        })
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
        })
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
    pub fn readers(&self) -> Result<Vec<RawReader>, Code> {
        let mut out: Vec<RawReader> = Vec::new();
        // SAFETY: the env is open; `collect_reader` matches `MDBX_reader_list_func` and only
        // touches `out`, which outlives the call and is not otherwise used during it.
        let rc = unsafe {
            sys::mdbx_reader_list(
                self.ptr.as_ptr(),
                Some(collect_reader),
                (&mut out as *mut Vec<RawReader>).cast(),
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

/// Whether the disk space behind every page libmdbx may write through a writable map is
/// reserved: the condition for `MDBX_WRITEMAP`.
///
/// Through a writable map a page is written by a store to memory; when the file system has no
/// block for it at that moment the kernel can only kill the process (SIGBUS). libmdbx reserves
/// the space it grows the file by (`fallocate`), but on a tmpfs or ramfs it ignores `ENOSPC`
/// from that reservation (a workaround for its own tests), and on file systems without
/// `fallocate` it ignores `EOPNOTSUPP`: the file then grows with holes. Copy-on-write file
/// systems (btrfs, ZFS, bcachefs) need new blocks for every rewrite of a page, reserved or
/// not. Only ext4 and XFS are known to keep a reservation for later writes through a map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MapSpace {
    Reserved,
    /// Why not.
    Unreservable(String),
}

impl MapSpace {
    /// The verdict for a file system of type `f_type` (`statfs`).
    pub(crate) fn of_type(f_type: u64) -> MapSpace {
        const EXT4: u32 = 0xef53; // also ext2/ext3 (files without extents cannot fallocate)
        const XFS: u32 = 0x5846_5342;
        let name = match f_type as u32 {
            EXT4 | XFS => return MapSpace::Reserved,
            0x0102_1994 => "tmpfs (libmdbx ignores ENOSPC when it reserves space there)",
            0x8584_58f6 => "ramfs (libmdbx ignores ENOSPC when it reserves space there)",
            0x9123_683e => "btrfs (copy-on-write: rewriting a page needs new space)",
            0x2fc1_2fc1 => "ZFS (copy-on-write: rewriting a page needs new space)",
            0xca45_1a4e => "bcachefs (copy-on-write: rewriting a page needs new space)",
            0x794c_7630 => "overlayfs (the file system below is unknown)",
            0x6969 => "NFS",
            0x6573_5546 => "FUSE",
            0xf2f5_2010 => "F2FS (log-structured: rewriting a page needs new space)",
            _ => "",
        };
        MapSpace::Unreservable(if name.is_empty() {
            format!(
                "its file system (type {f_type:#x}) is not one known to keep reserved space for \
                 writes through a memory map (ext4, XFS)"
            )
        } else {
            format!("it is on {name}")
        })
    }

    /// The verdict for the file system holding `path` (`Reserved` when it cannot be asked:
    /// the check on the data file after the open decides then).
    #[cfg(target_os = "linux")]
    pub(crate) fn of_path(path: &Path) -> MapSpace {
        let Ok(cpath) = CString::new(path.as_os_str().as_encoded_bytes()) else {
            return MapSpace::Reserved;
        };
        // SAFETY: `statfs` is a plain C struct for which all-zero bytes are valid.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `cpath` is NUL-terminated and outlives the call; `fs` is a valid
        // out-parameter.
        if unsafe { libc::statfs(cpath.as_ptr(), &mut fs) } != 0 {
            return MapSpace::Reserved;
        }
        MapSpace::of_type(fs.f_type as u64)
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn of_path(_path: &Path) -> MapSpace {
        MapSpace::Reserved
    }
}

#[cold]
fn warn_write_map_off(path: &Path, why: &str) {
    tracing::warn!(
        target: "tabula",
        path = %path.display(),
        "write_map turned off for `{}`: {why}, so a write through the memory map could find no \
         disk space and kill the process (SIGBUS); libmdbx writes with pwrite instead, which \
         reports a full disk as an error",
        path.display()
    );
}

/// libmdbx's lock file for the environment at `path`: `mdbx.lck` in the directory, or the data
/// file's name with `-lck` appended (`MDBX_NOSUBDIR`).
fn lock_file_path(path: &Path, no_sub_dir: bool) -> std::path::PathBuf {
    if no_sub_dir {
        let mut name = path.as_os_str().to_owned();
        name.push("-lck");
        name.into()
    } else {
        path.join("mdbx.lck")
    }
}

/// libmdbx's default reader slot count (`DEFAULT_READERS`).
const LIBMDBX_DEFAULT_READERS: u64 = 61;
/// A reader slot (`reader_slot_t`): txnid, tid, pid, two counters.
const READER_SLOT_BYTES: u64 = 32;
/// An upper bound of libmdbx's lock-file header (`sizeof(lck_t)`, under 1 KiB in 0.14.4);
/// `the_lock_file_reservation_covers_what_libmdbx_maps` pins it.
const LOCK_HEADER_BOUND: u64 = 2048;

/// The bytes libmdbx's lock file takes with `max_readers` slots: libmdbx sizes it as the header
/// plus the slots, rounded up to the system page (`lck_setup_locked`).
fn lock_file_len(max_readers: Option<u64>) -> u64 {
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let readers = max_readers.unwrap_or(LIBMDBX_DEFAULT_READERS).min(32767);
    (readers * READER_SLOT_BYTES + LOCK_HEADER_BOUND).div_ceil(page) * page
}

/// Reserves the disk space of libmdbx's lock file before libmdbx opens it.
///
/// The first process to open an environment (read-only ones too) creates and sizes the lock
/// file (reserving its space with `fallocate`, whose `ENOSPC` libmdbx ignores on a tmpfs) and
/// zeroes it through a writable memory map: on a full tmpfs that store is a SIGBUS. Reserving
/// the range here first, with `FALLOC_FL_KEEP_SIZE` (the file's size and contents stay as they
/// are, so a process that is opening it at the same moment sees no change), turns that into
/// `ENOSPC` before libmdbx runs. The file is created as libmdbx would create it (same mode).
///
/// A lock file that already has a size is either in use (libmdbx joins it at that size) or
/// left by a process that died (libmdbx re-sizes it for this open's reader count): the range
/// reserved is the larger of the two, and when that does not fit, the existing size alone
/// will do (joining takes no new space). Other failures (no `fallocate` on this file system, no
/// permission to create the file, read-only media) are left for libmdbx to meet and report.
/// A read-only open of a path with no data file creates nothing (libmdbx fails it first).
#[cfg(target_os = "linux")]
fn reserve_lock_file(path: &Path, cfg: &EnvConfig) -> Result<(), Code> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let data_file = if cfg.no_sub_dir {
        path.to_path_buf()
    } else {
        path.join("mdbx.dat")
    };
    if cfg.read_only && !data_file.is_file() {
        // libmdbx fails such an open before it touches the lock file: create none.
        return Ok(());
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(cfg.mode)
        .open(lock_file_path(path, cfg.no_sub_dir))
    else {
        return Ok(());
    };
    let current = file.metadata().map_or(0, |m| m.len());
    let reserve = |len: u64| -> Result<(), Code> {
        // SAFETY: `file` is an open, writable descriptor owned here for the call; KEEP_SIZE
        // allocates blocks without changing the file's size or contents.
        let rc = unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                libc::FALLOC_FL_KEEP_SIZE,
                0,
                len as libc::off_t,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(Code(
                std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
            ))
        }
    };
    match reserve(lock_file_len(cfg.max_readers).max(current)) {
        Err(code) if code.is_out_of_space() => {
            if current > 0 && reserve(current).is_ok() {
                Ok(())
            } else {
                Err(code)
            }
        }
        _ => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
fn reserve_lock_file(_path: &Path, _cfg: &EnvConfig) -> Result<(), Code> {
    Ok(())
}

/// Bytes available to this process on the file system holding `path` (`statvfs`), or `None`
/// when it cannot be asked.
pub(crate) fn available_bytes(path: &Path) -> Option<u64> {
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: `statvfs` is a plain C struct for which all-zero bytes are valid.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `cpath` is NUL-terminated and outlives the call; `st` is a valid out-parameter.
    if unsafe { libc::statvfs(cpath.as_ptr(), &mut st) } != 0 {
        return None;
    }
    // Root may also use the blocks reserved for it (`f_bfree`); everyone else `f_bavail`.
    // SAFETY: geteuid has no preconditions and cannot fail.
    let blocks = if unsafe { libc::geteuid() } == 0 {
        st.f_bfree
    } else {
        st.f_bavail
    };
    Some(blocks as u64 * st.f_frsize as u64)
}

/// The largest key and value (in bytes) libmdbx accepts in a table with `flags` at
/// `page_size` (`mdbx_limits_keysize_max` / `mdbx_limits_valsize_max`), or `None` for a page
/// size libmdbx does not support.
pub(crate) fn limits_at_page_size(page_size: usize, flags: u32) -> Option<(usize, usize)> {
    // SAFETY: both are pure functions of their arguments; an unsupported page size gives -1.
    let (k, v) = unsafe {
        (
            sys::mdbx_limits_keysize_max(page_size as isize, flags),
            sys::mdbx_limits_valsize_max(page_size as isize, flags),
        )
    };
    (k > 0 && v > 0).then_some((k as usize, v as usize))
}

/// The largest page size libmdbx supports (64 KiB).
pub(crate) const MAX_PAGE_SIZE: usize = 65536;

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
        let callbacks: sys::MDBX_chk_callbacks_t = unsafe { std::mem::zeroed() };
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

/// A monotonic clock reading in milliseconds, cheap enough to take on every read transaction:
/// `CLOCK_MONOTONIC_COARSE` is read from the vDSO without a syscall (a few ns, a few ms of
/// resolution). Used to warn about long-lived read transactions, nothing finer.
#[inline]
pub(crate) fn coarse_now_ms() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out-parameter; CLOCK_MONOTONIC_COARSE exists on every Linux
        // since 2.6.32 and the call cannot fail with a valid clock and pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
        ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
    }
    #[cfg(not(target_os = "linux"))]
    {
        static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        BASE.get_or_init(std::time::Instant::now)
            .elapsed()
            .as_millis() as u64
    }
}

/// Table flags as libmdbx spells them.
pub(crate) fn table_flags(dupsort: bool, integer_key: bool) -> u32 {
    let mut f = 0;
    if dupsort {
        f |= sys::MDBX_DUPSORT;
    }
    if integer_key {
        f |= sys::MDBX_INTEGERKEY;
    }
    f
}

/// Names of the libmdbx table flags set in `bits`.
pub(crate) fn table_flag_names(bits: u32) -> Vec<&'static str> {
    [
        (sys::MDBX_REVERSEKEY, "reversekey"),
        (sys::MDBX_DUPSORT, "dupsort"),
        (sys::MDBX_INTEGERKEY, "integer_key"),
        (sys::MDBX_DUPFIXED, "dupfixed"),
        (sys::MDBX_INTEGERDUP, "integerdup"),
        (sys::MDBX_REVERSEDUP, "reversedup"),
    ]
    .into_iter()
    .filter(|(bit, _)| bits & bit != 0)
    .map(|(_, name)| name)
    .collect()
}

/// The flag bits Tabula compares when verifying a table.
pub(crate) const TABLE_FLAG_MASK: u32 = sys::MDBX_DUPSORT
    | sys::MDBX_INTEGERKEY
    | sys::MDBX_REVERSEKEY
    | sys::MDBX_DUPFIXED
    | sys::MDBX_INTEGERDUP
    | sys::MDBX_REVERSEDUP;

/// Put flags.
pub(crate) mod put {
    use super::sys;
    pub const UPSERT: u32 = sys::MDBX_UPSERT;
    pub const NOOVERWRITE: u32 = sys::MDBX_NOOVERWRITE;
    pub const APPEND: u32 = sys::MDBX_APPEND;
    /// `MDBX_APPEND` alone overwrites a key equal to the last one; with `MDBX_NOOVERWRITE` an
    /// equal key is refused (`MDBX_KEYEXIST`), so append means "strictly greater".
    pub const APPEND_STRICT: u32 = sys::MDBX_APPEND | sys::MDBX_NOOVERWRITE;
    pub const APPENDDUP: u32 = sys::MDBX_APPENDDUP;
    /// For `dupsort` tables: a new greatest key, or the last key with a new greatest value;
    /// an equal pair is refused (`MDBX_NODUPDATA` gives `MDBX_KEYEXIST`).
    pub const APPEND_PAIR_STRICT: u32 =
        sys::MDBX_APPEND | sys::MDBX_APPENDDUP | sys::MDBX_NODUPDATA;
}

/// Cursor operations.
pub(crate) mod op {
    use super::sys;
    pub type Op = sys::MDBX_cursor_op;
    pub const FIRST: Op = sys::MDBX_FIRST;
    pub const LAST: Op = sys::MDBX_LAST;
    pub const NEXT: Op = sys::MDBX_NEXT;
    pub const PREV: Op = sys::MDBX_PREV;
    pub const SET_KEY: Op = sys::MDBX_SET_KEY;
    pub const SET_RANGE: Op = sys::MDBX_SET_RANGE;
    pub const GET_CURRENT: Op = sys::MDBX_GET_CURRENT;
    pub const NEXT_DUP: Op = sys::MDBX_NEXT_DUP;
    pub const NEXT_NODUP: Op = sys::MDBX_NEXT_NODUP;
    pub const PREV_NODUP: Op = sys::MDBX_PREV_NODUP;
    pub const LAST_DUP: Op = sys::MDBX_LAST_DUP;
}

/// A transaction object: active, or reset (read-only, parked for reuse). Aborted on drop.
pub(crate) struct RawTxn {
    ptr: NonNull<sys::MDBX_txn>,
}

// SAFETY: the env is opened with MDBX_NOSTICKYTHREADS, so a read txn (active or reset) may be
// used from any thread as long as one thread at a time does; `RawTxn` methods take `&self`/`&mut
// self` and the typed owners are `!Sync`. Write txns are only ever owned by `Tx<Rw>`, which is
// `!Send`, so they stay on the thread that began them.
unsafe impl Send for RawTxn {}

impl RawTxn {
    /// Parks a read transaction: releases its snapshot, keeps the object for [`renew`](Self::renew).
    pub fn reset(&mut self) -> Result<(), Code> {
        // SAFETY: `self` is a live read txn (only read txns are pooled); `&mut self` means no
        // slice or cursor borrowed from it is alive.
        check(unsafe { sys::mdbx_txn_reset(self.ptr.as_ptr()) })
    }

    /// Re-activates a reset read transaction on the latest snapshot.
    pub fn renew(&mut self) -> Result<(), Code> {
        // SAFETY: `self` is a reset read txn owned by the caller.
        check(unsafe { sys::mdbx_txn_renew(self.ptr.as_ptr()) })
    }

    /// Parks a finished read transaction on the latest snapshot: moves it there first unless
    /// it is already on it (`mdbx_txn_refresh`), then parks it (`mdbx_txn_park`, no
    /// auto-unpark). The snapshot stays readable for a cheap [`resume`](Self::resume), but a
    /// writer that needs the pages it pins may oust it instead of growing the file.
    ///
    /// Only the latest snapshot is parked: an older one would be refreshed by the next resume
    /// anyway, and libmdbx 0.14.4 ousts a parked snapshot at a full map only after failing the
    /// first write that needs its pages (see `tests/read_snapshots.rs`).
    pub fn park_latest(&mut self) -> Result<(), Code> {
        let ptr = self.ptr.as_ptr();
        // SAFETY: `self` is a live txn handle owned by the caller; reading its flags has no
        // other requirement.
        let flags = unsafe { sys::mdbx_txn_flags(ptr) };
        if flags & sys::MDBX_TXN_ERROR as sys::MDBX_txn_flags_t != 0 {
            // A txn that hit an error (e.g. a damaged page) is not parked: libmdbx's park would
            // only release its reader slot and leave the handle looking active. The caller
            // aborts it instead.
            return Err(Code(sys::MDBX_BAD_TXN));
        }
        // SAFETY: `self` is a live, active read txn (only read txns are pooled) owned by the
        // caller with nothing borrowed from it (`&mut self`); refresh keeps it when it is on the
        // latest snapshot and otherwise resets and restarts it there.
        match unsafe { sys::mdbx_txn_refresh(ptr) } {
            sys::MDBX_SUCCESS | sys::MDBX_RESULT_TRUE => {}
            rc => return Err(Code(rc)),
        }
        // SAFETY: `self` is an active read txn in an env with a reader table (the caller checks
        // `max_readers != u32::MAX`; libmdbx dereferences the txn's reader slot here); no slice
        // or cursor borrowed from it is alive, so nothing reads the snapshot while it may be
        // ousted.
        check(unsafe { sys::mdbx_txn_park(ptr, false) })
    }

    /// Makes a pooled read transaction current, whether it was [parked](Self::park) or
    /// [reset](Self::reset): a parked one is unparked (libmdbx restarts it on the latest snapshot
    /// if a writer ousted it), then it moves to the latest snapshot unless it is already there
    /// (`mdbx_txn_refresh`: no work when nothing was committed since, so the tables it already
    /// looked up stay looked up); a reset one is renewed.
    pub fn resume(&mut self) -> Result<(), Code> {
        let ptr = self.ptr.as_ptr();
        // SAFETY: `self` is a live txn handle owned by the caller; reading its flags has no
        // other requirement.
        let flags = unsafe { sys::mdbx_txn_flags(ptr) };
        if flags & sys::MDBX_TXN_PARKED as sys::MDBX_txn_flags_t != 0 {
            // SAFETY: `self` is a read txn parked by `park` and owned by the caller; unparking
            // either restores it or (ousted) restarts it, both leave it active.
            let rc = unsafe { sys::mdbx_txn_unpark(ptr, true) };
            if rc == sys::MDBX_RESULT_TRUE {
                return Ok(()); // ousted and restarted: already on the latest snapshot
            }
            check(rc)?;
        }
        // SAFETY: `self` is an active or reset read txn owned by the caller with nothing
        // borrowed from it (`&mut self`); refresh keeps an active one that is still on the
        // latest snapshot, and otherwise (re)starts it on the latest.
        match unsafe { sys::mdbx_txn_refresh(ptr) } {
            sys::MDBX_SUCCESS | sys::MDBX_RESULT_TRUE => Ok(()),
            rc => Err(Code(rc)),
        }
    }

    pub fn commit(self) -> Result<(), Code> {
        let ptr = self.ptr.as_ptr();
        std::mem::forget(self);
        // SAFETY: the txn is live and owned; it is consumed here (forgotten above), so it is not
        // aborted again on drop. libmdbx frees the handle whether the commit succeeds or not.
        check(unsafe { sys::mdbx_txn_commit_ex(ptr, ptr::null_mut()) })
    }

    pub fn id(&self) -> u64 {
        // SAFETY: the txn handle is live.
        unsafe { sys::mdbx_txn_id(self.ptr.as_ptr()) }
    }

    /// Commits a write transaction without flushing (`MDBX_TXN_NOSYNC`: a "weak" commit that
    /// libmdbx rolls back after a system crash, never past the last flushed one) and goes on as
    /// a new write transaction on the same object, keeping the writer lock
    /// (`mdbx_txn_checkpoint`). Cursors opened before are not valid afterwards: callers drop
    /// them first (a write cursor borrows the transaction exclusively, so none can be alive).
    ///
    /// On error libmdbx has ended the transaction; dropping `self` then aborts nothing more.
    pub fn checkpoint_nosync(&mut self) -> Result<(), Code> {
        // SAFETY: `self` is a live write txn owned by the caller on its own thread (write txns
        // are only owned by `!Send` types); `&mut self` means no cursor or slice borrowed from
        // it is alive. A null latency pointer is allowed.
        let rc = unsafe {
            sys::mdbx_txn_checkpoint(self.ptr.as_ptr(), sys::MDBX_TXN_NOSYNC, ptr::null_mut())
        };
        // MDBX_RESULT_TRUE: nothing to commit, the transaction goes on unchanged.
        if rc == sys::MDBX_RESULT_TRUE {
            return Ok(());
        }
        check(rc)
    }

    /// Opens a table by name (`None` = the main table). `Ok(None)` when it does not exist and
    /// `create` is false.
    pub fn open_table(
        &mut self,
        name: Option<&str>,
        flags: u32,
        create: bool,
    ) -> Result<Option<Dbi>, Code> {
        self.open_table_with(name, flags, create, false)
    }

    /// [`open_table`](Self::open_table), optionally with [`byte_key_cmp`] as the key comparator
    /// (`branchy_cmp`). Only for tables whose keys are compared as bytes (not
    /// `MDBX_INTEGERKEY`): the comparator orders exactly like libmdbx's default one, so the
    /// file stays readable by every other program. libmdbx fixes a handle's comparator at its
    /// first open in the environment; if the handle is already open with the default one,
    /// this falls back to that (same order, so still correct).
    pub fn open_table_with(
        &mut self,
        name: Option<&str>,
        flags: u32,
        create: bool,
        branchy_cmp: bool,
    ) -> Result<Option<Dbi>, Code> {
        let cname = match name {
            Some(n) => Some(CString::new(n).map_err(|_| Code::EINVAL)?),
            None => None,
        };
        let cname_ptr = cname.as_ref().map_or(ptr::null(), |c| c.as_ptr());
        let mut dbi: Dbi = 0;
        if branchy_cmp {
            // With a comparator libmdbx wants the table's exact flags (`MDBX_DB_ACCEDE` is only
            // accepted with the default comparators): the declared ones.
            let exact = if create {
                flags | sys::MDBX_CREATE
            } else {
                flags
            };
            let keycmp: sys::MDBX_cmp_func = Some(byte_key_cmp);
            // SAFETY: the txn is live and exclusively borrowed; the name is NUL-terminated and
            // outlives the call; `dbi` is an out-parameter; `byte_key_cmp` is a plain function
            // valid for the life of the process that never unwinds and orders keys exactly like
            // libmdbx's default (byte-wise) comparator, and the caller passes it only for tables
            // declared without `MDBX_INTEGERKEY` (libmdbx refuses the open with
            // `MDBX_INCOMPATIBLE` if the stored flags differ from `exact`).
            #[allow(deprecated)]
            let rc = unsafe {
                sys::mdbx_dbi_open_ex(self.ptr.as_ptr(), cname_ptr, exact, &mut dbi, keycmp, None)
            };
            if rc != sys::MDBX_EINVAL && rc != sys::MDBX_INCOMPATIBLE {
                return Ok(check_found(rc)?.then_some(dbi));
            }
            // EINVAL: the handle is already open with libmdbx's own comparator (same order).
            // INCOMPATIBLE: the stored flags differ from the declared ones; open as below so
            // the caller sees the stored flags and reports the mismatch.
        }
        let flags = if create {
            flags | sys::MDBX_CREATE
        } else {
            // Open with whatever flags the table was created with; the caller compares them.
            sys::MDBX_DB_ACCEDE
        };
        // SAFETY: the txn is live and exclusively borrowed; the name is NUL-terminated and
        // outlives the call; `dbi` is an out-parameter.
        let rc = unsafe { sys::mdbx_dbi_open(self.ptr.as_ptr(), cname_ptr, flags, &mut dbi) };
        Ok(check_found(rc)?.then_some(dbi))
    }

    /// The flags a table was created with.
    pub fn table_flags(&self, dbi: Dbi) -> Result<u32, Code> {
        let mut flags: c_uint = 0;
        let mut state: c_uint = 0;
        // SAFETY: the txn is live; `dbi` was opened in this env; out-parameters are valid.
        check(unsafe { sys::mdbx_dbi_flags_ex(self.ptr.as_ptr(), dbi, &mut flags, &mut state) })?;
        Ok(flags)
    }

    /// Compares two keys with the table's own order (`mdbx_cmp`): integer order for
    /// `MDBX_INTEGERKEY` tables, bytes otherwise.
    pub fn cmp_keys(&self, dbi: Dbi, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        let (a, b) = (val(a), val(b));
        // SAFETY: the txn is live; `dbi` is open in it; `a` and `b` point into slices alive for
        // the call, which only reads them.
        unsafe { sys::mdbx_cmp(self.ptr.as_ptr(), dbi, &a, &b) }.cmp(&0)
    }

    /// The names of the named tables: the keys of the main table. Entries there that are not
    /// tables (libmdbx allows plain data in the main table) are listed too; opening them fails
    /// with `MDBX_INCOMPATIBLE`.
    pub fn main_keys(&mut self) -> Result<Vec<Vec<u8>>, Code> {
        let main = self.open_table(None, 0, false)?.ok_or(Code::NOTFOUND)?;
        let mut cur = self.cursor(main)?;
        let mut out = Vec::new();
        let mut entry = cur.get(op::FIRST, None, None)?;
        while let Some((k, _)) = entry {
            out.push(k.to_vec());
            entry = cur.get(op::NEXT_NODUP, None, None)?;
        }
        Ok(out)
    }

    pub fn stat(&self, dbi: Dbi) -> Result<RawStat, Code> {
        // SAFETY: MDBX_stat is a plain C struct for which all-zero bytes are valid.
        let mut st: sys::MDBX_stat = unsafe { std::mem::zeroed() };
        // SAFETY: the txn is live; `dbi` belongs to its env; `st` is a correctly sized
        // out-parameter.
        check(unsafe {
            sys::mdbx_dbi_stat(
                self.ptr.as_ptr(),
                dbi,
                &mut st,
                std::mem::size_of::<sys::MDBX_stat>(),
            )
        })?;
        Ok(RawStat {
            page_size: st.ms_psize,
            depth: st.ms_depth,
            branch_pages: st.ms_branch_pages,
            leaf_pages: st.ms_leaf_pages,
            overflow_pages: st.ms_overflow_pages,
            entries: st.ms_entries,
        })
    }

    #[inline]
    pub fn get<'t>(&'t self, dbi: Dbi, key: &[u8]) -> Result<Option<&'t [u8]>, Code> {
        let k = val(key);
        let mut data = EMPTY;
        // SAFETY: the txn is live and, being borrowed shared for 't, is not written to while the
        // returned slice lives (writes need `&mut`); `k` points into `key`, alive for the call.
        let rc = unsafe { sys::mdbx_get(self.ptr.as_ptr(), dbi, &k, &mut data) };
        if check_found(rc)? {
            // SAFETY: a successful get; the data stays valid while the txn is alive and unmodified,
            // which the shared borrow 't guarantees.
            Ok(Some(unsafe { slice(&data) }))
        } else {
            Ok(None)
        }
    }

    #[inline]
    pub fn put(&mut self, dbi: Dbi, key: &[u8], value: &[u8], flags: u32) -> Result<(), Code> {
        let k = val(key);
        let mut v = val(value);
        // SAFETY: the txn is a live write txn borrowed exclusively, so no slice into its pages is
        // alive; key and value point into caller buffers alive for the call (libmdbx copies them).
        check(unsafe { sys::mdbx_put(self.ptr.as_ptr(), dbi, &k, &mut v, flags) })
    }

    /// Deletes `key` (all its values), or one `(key, value)` pair in a dupsort table.
    /// Returns whether anything was deleted.
    pub fn del(&mut self, dbi: Dbi, key: &[u8], value: Option<&[u8]>) -> Result<bool, Code> {
        let k = val(key);
        let v = value.map(val);
        // SAFETY: as for `put`; a null data pointer asks libmdbx to delete every value of the key.
        let rc = unsafe {
            sys::mdbx_del(
                self.ptr.as_ptr(),
                dbi,
                &k,
                v.as_ref().map_or(ptr::null(), |v| v as *const _),
            )
        };
        check_found(rc)
    }

    /// Empties a table (`delete = false`) or deletes it from the file (`delete = true`, only
    /// while the handle is not shared: the startup step).
    pub fn drop_table(&mut self, dbi: Dbi, delete: bool) -> Result<(), Code> {
        // SAFETY: live write txn, exclusively borrowed. With `delete = true` the DBI slot is
        // closed; callers only do that before any handle is published.
        check(unsafe { sys::mdbx_drop(self.ptr.as_ptr(), dbi, delete) })
    }

    /// Gives a table a new name (within this write transaction).
    pub fn rename_table(&mut self, dbi: Dbi, name: &str) -> Result<(), Code> {
        let cname = CString::new(name).map_err(|_| Code::EINVAL)?;
        // SAFETY: live write txn, exclusively borrowed; `dbi` is open in it; the name is
        // NUL-terminated and outlives the call.
        check(unsafe { sys::mdbx_dbi_rename(self.ptr.as_ptr(), dbi, cname.as_ptr()) })
    }

    pub fn cursor(&self, dbi: Dbi) -> Result<RawCursor<'_>, Code> {
        let mut c: *mut sys::MDBX_cursor = ptr::null_mut();
        // SAFETY: the txn is live for the cursor's lifetime (the cursor borrows it); `c` is an
        // out-parameter.
        check(unsafe { sys::mdbx_cursor_open(self.ptr.as_ptr(), dbi, &mut c) })?;
        Ok(RawCursor {
            ptr: NonNull::new(c).ok_or(Code::EINVAL)?,
            cache: None,
            _txn: PhantomData,
        })
    }

    /// [`cursor`](Self::cursor), reusing a cursor object from `cache` (bound with
    /// `mdbx_cursor_bind`) instead of allocating one; on drop the cursor is unbound and goes
    /// back to `cache`. Saves libmdbx's `calloc`/`free` of a cursor (about a third of opening
    /// and closing one).
    pub fn cursor_cached<'t>(
        &'t self,
        dbi: Dbi,
        cache: &'t CursorCache,
    ) -> Result<RawCursor<'t>, Code> {
        if let Some(c) = cache.take() {
            // SAFETY: `c` is an unbound cursor object owned by the caller now (taken out of the
            // cache); the txn is live for the returned cursor's lifetime (it borrows the txn).
            let rc = unsafe { sys::mdbx_cursor_bind(self.ptr.as_ptr(), c.as_ptr(), dbi) };
            if rc == sys::MDBX_SUCCESS {
                return Ok(RawCursor {
                    ptr: c,
                    cache: Some(cache),
                    _txn: PhantomData,
                });
            }
            // SAFETY: the cursor object is owned here and bound to nothing usable; closing
            // frees it.
            unsafe { sys::mdbx_cursor_close(c.as_ptr()) };
            return Err(Code(rc));
        }
        let mut cursor = self.cursor(dbi)?;
        cursor.cache = Some(cache);
        Ok(cursor)
    }

    /// A cursor for writing; borrows the transaction exclusively.
    pub fn write_cursor(&mut self, dbi: Dbi) -> Result<RawWriteCursor<'_>, Code> {
        let mut c: *mut sys::MDBX_cursor = ptr::null_mut();
        // SAFETY: as for `cursor`; the exclusive borrow keeps every other reader of the txn's
        // pages away while the cursor writes.
        check(unsafe { sys::mdbx_cursor_open(self.ptr.as_ptr(), dbi, &mut c) })?;
        Ok(RawWriteCursor {
            ptr: NonNull::new(c).ok_or(Code::EINVAL)?,
            _txn: PhantomData,
        })
    }
}

impl Drop for RawTxn {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and live (commit forgets `self`); aborting a reset read
        // txn or an active txn of either kind frees it. Nothing borrowed from it outlives `self`.
        unsafe {
            sys::mdbx_txn_abort_ex(self.ptr.as_ptr(), ptr::null_mut());
        }
    }
}

/// One pointer slot per thread index, each on its own cache line: a thread that puts an object
/// back and takes it again in a loop touches no line another thread writes. A slot owns the
/// object whose pointer it holds; the swap in `take` hands it to exactly one taker. The owners
/// ([`TxnSlots`], [`CursorCache`]) free what is left on drop.
struct ThreadSlots<T> {
    slots: Box<[Slot<T>]>,
}

#[repr(align(64))]
struct Slot<T>(std::sync::atomic::AtomicPtr<T>);

fn thread_index() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    INDEX.with(|i| *i)
}

impl<T> ThreadSlots<T> {
    fn new(count: usize) -> Self {
        ThreadSlots {
            slots: (0..count.max(1))
                .map(|_| Slot(std::sync::atomic::AtomicPtr::new(ptr::null_mut())))
                .collect(),
        }
    }

    #[inline]
    fn slot(&self) -> &std::sync::atomic::AtomicPtr<T> {
        &self.slots[thread_index() % self.slots.len()].0
    }

    /// What this thread's slot holds, if anything.
    #[inline]
    fn take(&self) -> Option<NonNull<T>> {
        NonNull::new(
            self.slot()
                .swap(ptr::null_mut(), std::sync::atomic::Ordering::Acquire),
        )
    }

    /// What any slot holds.
    fn take_any(&self) -> Option<NonNull<T>> {
        self.slots.iter().find_map(|s| {
            if s.0.load(std::sync::atomic::Ordering::Relaxed).is_null() {
                return None;
            }
            NonNull::new(s.0.swap(ptr::null_mut(), std::sync::atomic::Ordering::Acquire))
        })
    }

    /// Moves `p` into this thread's slot; `false` (the caller keeps it) when the slot is taken.
    #[inline]
    fn put(&self, p: NonNull<T>) -> bool {
        self.slot()
            .compare_exchange(
                ptr::null_mut(),
                p.as_ptr(),
                std::sync::atomic::Ordering::Release,
                std::sync::atomic::Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Empties every slot (exclusive access: on drop).
    fn drain(&mut self) -> impl Iterator<Item = NonNull<T>> + '_ {
        self.slots
            .iter_mut()
            .filter_map(|s| NonNull::new(std::mem::replace(s.0.get_mut(), ptr::null_mut())))
    }
}

/// Per-thread parking slots for finished read transactions, in front of the shared pool, so a
/// thread that reads in a loop takes back the transaction it parked without touching the
/// shared queue. A slot holds the pointer of a `RawTxn` whose ownership moved into it (`put`
/// forgets the `RawTxn`, `take` rebuilds it). Drop aborts whatever is still parked.
pub(crate) struct TxnSlots {
    slots: ThreadSlots<sys::MDBX_txn>,
}

impl TxnSlots {
    pub fn new(count: usize) -> Self {
        TxnSlots {
            slots: ThreadSlots::new(count),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.slots.len()
    }

    /// The transaction this thread parked, if it is still there.
    #[inline]
    pub fn take(&self) -> Option<RawTxn> {
        self.slots.take().map(|ptr| RawTxn { ptr })
    }

    /// Any parked transaction, from any thread's slot: reclaims what threads that ended (or
    /// moved on) left behind before a fresh one is begun.
    pub fn take_any(&self) -> Option<RawTxn> {
        self.slots.take_any().map(|ptr| RawTxn { ptr })
    }

    /// Parks `txn` in this thread's slot; gives it back when the slot is taken.
    #[inline]
    pub fn put(&self, txn: RawTxn) -> Result<(), RawTxn> {
        if self.slots.put(txn.ptr) {
            // Ownership moved into the slot.
            std::mem::forget(txn);
            Ok(())
        } else {
            Err(txn)
        }
    }
}

impl Drop for TxnSlots {
    fn drop(&mut self) {
        for ptr in self.slots.drain() {
            drop(RawTxn { ptr }); // aborts
        }
    }
}

/// A cursor over one table in a transaction it borrows shared. Closed on drop, or unbound and
/// returned to its [`CursorCache`].
pub(crate) struct RawCursor<'t> {
    ptr: NonNull<sys::MDBX_cursor>,
    cache: Option<&'t CursorCache>,
    _txn: PhantomData<&'t RawTxn>,
}

impl<'t> RawCursor<'t> {
    /// Moves the cursor; `Ok(None)` when there is no such position.
    #[inline]
    pub fn get(
        &mut self,
        op: op::Op,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<Option<Pair<'t>>, Code> {
        let mut k = key.map_or(EMPTY, val);
        let mut v = value.map_or(EMPTY, val);
        // SAFETY: the cursor is open in a live txn borrowed shared for 't (so unmodified); the
        // input key/value point into buffers alive for the call; libmdbx overwrites `k`/`v`
        // with pointers into the txn's pages.
        let rc = unsafe { sys::mdbx_cursor_get(self.ptr.as_ptr(), &mut k, &mut v, op) };
        if check_found(rc)? {
            // SAFETY: successful cursor_get: both slices point into pages valid for 't.
            Ok(Some(unsafe { (slice(&k), slice(&v)) }))
        } else {
            Ok(None)
        }
    }
}

impl Drop for RawCursor<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.cache {
            // SAFETY: the cursor is owned and bound to a txn that is still alive (borrowed for
            // 't); unbinding detaches it, after which it belongs to no txn.
            if unsafe { sys::mdbx_cursor_unbind(self.ptr.as_ptr()) } == sys::MDBX_SUCCESS
                && cache.put(self.ptr)
            {
                return;
            }
        }
        // SAFETY: the cursor is owned and open (bound or unbound); its txn, if any, is still
        // alive (borrowed for 't).
        unsafe { sys::mdbx_cursor_close(self.ptr.as_ptr()) }
    }
}

/// Unbound cursor objects kept for reuse, one per thread slot, so a thread that opens and
/// closes cursors in a loop allocates none. Drop closes what is left; it must run before the
/// environment closes.
pub(crate) struct CursorCache {
    slots: ThreadSlots<sys::MDBX_cursor>,
}

impl CursorCache {
    pub fn new(count: usize) -> Self {
        CursorCache {
            slots: ThreadSlots::new(count),
        }
    }

    #[inline]
    fn take(&self) -> Option<NonNull<sys::MDBX_cursor>> {
        self.slots.take()
    }

    /// Keeps an unbound cursor; `false` (the caller closes it) when this thread's slot is taken.
    #[inline]
    fn put(&self, c: NonNull<sys::MDBX_cursor>) -> bool {
        self.slots.put(c)
    }
}

impl Drop for CursorCache {
    fn drop(&mut self) {
        for c in self.slots.drain() {
            // SAFETY: an unbound cursor object owned by the cache; the env is still open
            // (the cache is dropped before it).
            unsafe { sys::mdbx_cursor_close(c.as_ptr()) }
        }
    }
}

/// A cursor that writes, in a transaction it borrows exclusively. Closed on drop.
pub(crate) struct RawWriteCursor<'t> {
    ptr: NonNull<sys::MDBX_cursor>,
    _txn: PhantomData<&'t mut RawTxn>,
}

impl RawWriteCursor<'_> {
    #[inline]
    pub fn put(&mut self, key: &[u8], value: &[u8], flags: u32) -> Result<(), Code> {
        let k = val(key);
        let mut v = val(value);
        // SAFETY: open cursor in a live write txn borrowed exclusively; key/value buffers are
        // alive for the call and copied by libmdbx. No slice borrowed from this cursor is alive
        // (`get` ties its result to `&mut self`).
        check(unsafe { sys::mdbx_cursor_put(self.ptr.as_ptr(), &k, &mut v, flags) })
    }

    /// Moves the cursor; the returned bytes are valid until the next call on this cursor.
    pub fn get(&mut self, op: op::Op) -> Result<Option<Pair<'_>>, Code> {
        let mut k = EMPTY;
        let mut v = EMPTY;
        // SAFETY: open cursor in a live txn; the result borrows `self` mutably, so no write can
        // happen through this cursor (or the exclusively borrowed txn) while it lives.
        let rc = unsafe { sys::mdbx_cursor_get(self.ptr.as_ptr(), &mut k, &mut v, op) };
        if check_found(rc)? {
            // SAFETY: successful get; valid until the next modification, which needs `&mut self`.
            Ok(Some(unsafe { (slice(&k), slice(&v)) }))
        } else {
            Ok(None)
        }
    }
}

impl Drop for RawWriteCursor<'_> {
    fn drop(&mut self) {
        // SAFETY: the cursor is owned and open; its txn is alive (borrowed for 't).
        unsafe { sys::mdbx_cursor_close(self.ptr.as_ptr()) }
    }
}

/// libmdbx's version string, e.g. `0.14.4`.
pub(crate) fn version() -> String {
    // SAFETY: `mdbx_version` is an immutable static initialised by the C library.
    let v = unsafe { sys::mdbx_version };
    format!("{}.{}.{}", v.major, v.minor, v.patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(max_readers: Option<u64>) -> EnvConfig {
        EnvConfig {
            max_tables: 2,
            max_readers,
            geometry: [-1, -1, 1 << 30, 1 << 20, -1, -1],
            sync: Durability::Durable,
            read_only: false,
            exclusive: false,
            write_map: false,
            no_sub_dir: false,
            validation: false,
            mode: 0o644,
        }
    }

    /// The lock-file space reserved before libmdbx opens it must cover every byte libmdbx
    /// then zeroes through its map: the file's size after the open, for the default reader
    /// count and for counts around page boundaries.
    #[test]
    fn the_lock_file_reservation_covers_what_libmdbx_maps() {
        for readers in [
            None,
            Some(1),
            Some(61),
            Some(62),
            Some(126),
            Some(127),
            Some(1000),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let env = Env::open(dir.path(), &config(readers)).unwrap();
            let size = std::fs::metadata(dir.path().join("mdbx.lck"))
                .unwrap()
                .len();
            let reserved = lock_file_len(readers);
            assert!(
                size <= reserved,
                "{readers:?} readers: libmdbx's lock file is {size} bytes, {reserved} reserved"
            );
            // The bound is tight: at most one page more than libmdbx uses.
            assert!(reserved - size <= 4096, "{readers:?}: {size} vs {reserved}");
            drop(env);
        }
    }

    #[test]
    fn only_ext4_and_xfs_keep_reserved_space_for_the_map() {
        assert_eq!(MapSpace::of_type(0xef53), MapSpace::Reserved);
        assert_eq!(MapSpace::of_type(0x5846_5342), MapSpace::Reserved);
        for (magic, name) in [(0x0102_1994u64, "tmpfs"), (0x9123_683e, "btrfs")] {
            match MapSpace::of_type(magic) {
                MapSpace::Unreservable(why) => assert!(why.contains(name), "{why}"),
                MapSpace::Reserved => panic!("{name} reserves"),
            }
        }
        assert!(matches!(
            MapSpace::of_type(0x1234),
            MapSpace::Unreservable(why) if why.contains("0x1234")
        ));
    }
}
