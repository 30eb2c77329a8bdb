//! The raw-libmdbx baseline: thin wrappers over `mdbx-sys`, each one C call.
//!
//! This is a benchmark binary, not the library: errors panic with the libmdbx message, and the
//! wrappers are `#[inline]` so the raw rows measure libmdbx itself.

use std::ffi::{CStr, CString, c_void};
use std::path::Path;
use std::ptr;

use mdbx_sys as sys;

use crate::workloads::MAX_SIZE;

pub use sys::MDBX_dbi as Dbi;

/// Panics with libmdbx's message when `rc` is not `MDBX_SUCCESS`.
#[inline]
#[track_caller]
pub fn check(rc: i32, what: &str) {
    if rc != sys::MDBX_SUCCESS {
        // SAFETY: mdbx_strerror returns a pointer to a static NUL-terminated string for any code.
        let msg = unsafe { CStr::from_ptr(sys::mdbx_strerror(rc)) };
        panic!("{what}: libmdbx error {rc}: {}", msg.to_string_lossy());
    }
}

#[inline]
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

/// How a raw environment is opened.
#[derive(Clone, Copy, Debug)]
pub struct EnvFlags {
    /// `MDBX_NOSTICKYTHREADS`: read txns are not bound to a thread (what Tabula sets).
    pub no_sticky_threads: bool,
    /// `MDBX_SAFE_NOSYNC` instead of `MDBX_SYNC_DURABLE`.
    pub safe_no_sync: bool,
    /// `MDBX_WRITEMAP`.
    pub write_map: bool,
    /// `MDBX_NORDAHEAD` (get_cold investigation).
    pub no_readahead: bool,
    /// `MDBX_EXCLUSIVE` (get_cold investigation).
    pub exclusive: bool,
    /// `MDBX_VALIDATION` (get_cold investigation).
    pub validation: bool,
    /// Page size for a new file; -1 is libmdbx's default (get_cold investigation).
    pub page_size: isize,
}

impl EnvFlags {
    /// libmdbx's defaults: durable, sticky threads, no write map.
    pub const DEFAULT: EnvFlags = EnvFlags {
        no_sticky_threads: false,
        safe_no_sync: false,
        write_map: false,
        no_readahead: false,
        exclusive: false,
        validation: false,
        page_size: -1,
    };

    fn bits(self) -> sys::MDBX_env_flags_t {
        let mut f = sys::MDBX_SYNC_DURABLE;
        if self.no_sticky_threads {
            f |= sys::MDBX_NOSTICKYTHREADS;
        }
        if self.safe_no_sync {
            f |= sys::MDBX_SAFE_NOSYNC;
        }
        if self.write_map {
            f |= sys::MDBX_WRITEMAP;
        }
        if self.no_readahead {
            f |= sys::MDBX_NORDAHEAD;
        }
        if self.exclusive {
            f |= sys::MDBX_EXCLUSIVE;
        }
        if self.validation {
            f |= sys::MDBX_VALIDATION;
        }
        f
    }
}

/// An open environment; closed on drop.
pub struct Env(*mut sys::MDBX_env);

// SAFETY: an MDBX_env may be used from any thread; read txns cross threads only in envs opened
// with MDBX_NOSTICKYTHREADS (the short-reads variants), write txns never leave their thread.
unsafe impl Send for Env {}
// SAFETY: as above; libmdbx synchronises env-level state itself.
unsafe impl Sync for Env {}

impl Env {
    /// Opens (creating) an environment in directory `path` with room for `max_tables` named
    /// tables and the benchmarks' geometry (grow in 16 MiB steps up to [`MAX_SIZE`]), with
    /// balanced pages and merges as Tabula sets them.
    pub fn open(path: &Path, max_tables: u64, flags: EnvFlags) -> Env {
        let mut env: *mut sys::MDBX_env = ptr::null_mut();
        // SAFETY: mdbx_env_create writes a fresh handle into `env` on success.
        check(unsafe { sys::mdbx_env_create(&mut env) }, "mdbx_env_create");
        let cpath = CString::new(path.as_os_str().as_encoded_bytes()).expect("path has no NUL");
        // SAFETY: `env` is created and not yet open, so options and geometry may be set; `cpath`
        // is a NUL-terminated string alive for the call.
        unsafe {
            check(
                sys::mdbx_env_set_option(env, sys::MDBX_opt_max_db, max_tables),
                "set max_db",
            );
            check(
                sys::mdbx_env_set_geometry(
                    env,
                    -1,
                    -1,
                    MAX_SIZE as isize,
                    16 << 20,
                    -1,
                    flags.page_size,
                ),
                "set geometry",
            );
            check(
                sys::mdbx_env_open(env, cpath.as_ptr(), flags.bits(), 0o644),
                "mdbx_env_open",
            );
            for (option, value) in LIKE_TABULA {
                check(sys::mdbx_env_set_option(env, option, value), "set option");
            }
        }
        Env(env)
    }

    /// Begins a read (`write = false`) or write transaction.
    #[inline]
    pub fn begin(&self, write: bool) -> Txn {
        let flags = if write {
            sys::MDBX_TXN_READWRITE
        } else {
            sys::MDBX_TXN_RDONLY
        };
        let mut txn: *mut sys::MDBX_txn = ptr::null_mut();
        // SAFETY: the env is open for the life of `self`; a top-level txn has a null parent;
        // libmdbx writes the handle into `txn` on success.
        let rc = unsafe {
            sys::mdbx_txn_begin_ex(self.0, ptr::null_mut(), flags, &mut txn, ptr::null_mut())
        };
        check(rc, "mdbx_txn_begin");
        Txn(txn)
    }
}

/// The settings Tabula gives libmdbx by default where libmdbx's own differ: balanced page
/// splits and merges (`Options::balance_pages`) and merges below a quarter full
/// (`Options::merge_threshold` 25, LMDB's threshold, in libmdbx's unit of 1/65536 of a page;
/// libmdbx's own is a third). [`Env::open`] sets them; `big_txn::raw_like_tabula` starts from
/// them.
pub const LIKE_TABULA: [(sys::MDBX_option_t, u64); 2] = [
    (sys::MDBX_opt_prefer_waf_insteadof_balance, 0),
    (sys::MDBX_opt_merge_threshold, 16_384),
];

/// libmdbx knobs for the append investigation (`-1` / `None` = libmdbx's default).
#[derive(Clone, Debug)]
pub struct Tune {
    /// `MDBX_UTTERLY_NOSYNC` (what LMDB's `MDB_NOSYNC` is) instead of `MDBX_SAFE_NOSYNC` when
    /// the flags ask for no sync.
    pub utterly: bool,
    /// Extra env flags (`MDBX_LIFORECLAIM`, `MDBX_NOMEMINIT`, ...).
    pub extra_flags: sys::MDBX_env_flags_t,
    /// Page size in bytes.
    pub page_size: isize,
    /// Size the file is created with.
    pub initial_size: isize,
    /// Growth step (the benchmarks' default is 16 MiB).
    pub growth_step: isize,
    /// `mdbx_env_set_option` calls made before the env opens.
    pub options: Vec<(sys::MDBX_option_t, u64)>,
}

impl Default for Tune {
    fn default() -> Self {
        Tune {
            utterly: false,
            extra_flags: 0,
            page_size: -1,
            initial_size: -1,
            growth_step: 16 << 20,
            options: Vec::new(),
        }
    }
}

impl Env {
    /// As [`Env::open`], with the knobs in `tune`.
    pub fn open_tuned(path: &Path, max_tables: u64, flags: EnvFlags, tune: &Tune) -> Env {
        let mut env: *mut sys::MDBX_env = ptr::null_mut();
        // SAFETY: mdbx_env_create writes a fresh handle into `env` on success.
        check(unsafe { sys::mdbx_env_create(&mut env) }, "mdbx_env_create");
        let cpath = CString::new(path.as_os_str().as_encoded_bytes()).expect("path has no NUL");
        let mut bits = flags.bits() | tune.extra_flags;
        if tune.utterly && flags.safe_no_sync {
            bits |= sys::MDBX_UTTERLY_NOSYNC;
        }
        // SAFETY: `env` is created and not yet open, so options and geometry may be set; `cpath`
        // is a NUL-terminated string alive for the call.
        unsafe {
            check(
                sys::mdbx_env_set_option(env, sys::MDBX_opt_max_db, max_tables),
                "set max_db",
            );
            check(
                sys::mdbx_env_set_geometry(
                    env,
                    -1,
                    tune.initial_size,
                    MAX_SIZE as isize,
                    tune.growth_step,
                    -1,
                    tune.page_size,
                ),
                "set geometry",
            );
            // Some options may only be set before the open, others (sync_bytes) only after.
            let mut after = Vec::new();
            for &(opt, value) in &tune.options {
                let rc = sys::mdbx_env_set_option(env, opt, value);
                if rc == sys::MDBX_EPERM {
                    after.push((opt, value));
                } else {
                    check(rc, "set option");
                }
            }
            check(
                sys::mdbx_env_open(env, cpath.as_ptr(), bits, 0o644),
                "mdbx_env_open",
            );
            for (opt, value) in after {
                check(sys::mdbx_env_set_option(env, opt, value), "set option");
            }
        }
        Env(env)
    }

    /// Flushes everything not yet on disk (`mdbx_env_sync_ex(force)`).
    pub fn sync(&self) {
        // SAFETY: the env is open; the call is thread-safe.
        let rc = unsafe { sys::mdbx_env_sync_ex(self.0, true, false) };
        if rc != sys::MDBX_RESULT_TRUE {
            check(rc, "mdbx_env_sync_ex");
        }
    }

    /// Writes a compacted copy to the file `dest` (`mdbx_env_copy` with `MDBX_CP_COMPACT`).
    pub fn copy_compact(&self, dest: &Path) {
        let cpath = CString::new(dest.as_os_str().as_encoded_bytes()).expect("path has no NUL");
        // SAFETY: the env is open; the copy runs in its own read txn; `cpath` is NUL-terminated
        // and alive for the call.
        check(
            unsafe { sys::mdbx_env_copy(self.0, cpath.as_ptr(), sys::MDBX_CP_COMPACT) },
            "mdbx_env_copy",
        );
    }

    /// The raw env handle (for option experiments that call libmdbx directly).
    pub fn as_ptr(&self) -> *mut sys::MDBX_env {
        self.0
    }

    /// An option's current value (`mdbx_env_get_option`).
    pub fn option(&self, opt: sys::MDBX_option_t) -> u64 {
        let mut value = 0u64;
        // SAFETY: the env is open; `value` is a valid place for the call to write.
        check(
            unsafe { sys::mdbx_env_get_option(self.0, opt, &mut value) },
            "mdbx_env_get_option",
        );
        value
    }

    /// Dirty pages spilled and spilled pages read back (`mi_pgop_stat.spill` and `.unspill`
    /// of `mdbx_env_info_ex`: counted in the lock file since it was set up, i.e. since this
    /// process opened the env when no other has it open).
    pub fn spill_counts(&self) -> (u64, u64) {
        let mut info = std::mem::MaybeUninit::<sys::MDBX_envinfo>::zeroed();
        // SAFETY: the env is open; `info` is a zeroed MDBX_envinfo of the size passed, which
        // the call fills in.
        check(
            unsafe {
                sys::mdbx_env_info_ex(
                    self.0,
                    ptr::null(),
                    info.as_mut_ptr(),
                    std::mem::size_of::<sys::MDBX_envinfo>(),
                )
            },
            "mdbx_env_info_ex",
        );
        // SAFETY: mdbx_env_info_ex succeeded, so it wrote the whole struct (and it was zeroed).
        let info = unsafe { info.assume_init() };
        (info.mi_pgop_stat.spill, info.mi_pgop_stat.unspill)
    }

    /// Sets an option on the open env (`mdbx_env_set_option`).
    pub fn set_option(&self, opt: sys::MDBX_option_t, value: u64) {
        // SAFETY: the env is open; runtime options may be changed at any time.
        check(
            unsafe { sys::mdbx_env_set_option(self.0, opt, value) },
            "mdbx_env_set_option",
        );
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: every txn of this env has ended (Txn borrows nothing, but each workload ends
        // its txns before dropping the env); closing without a final sync is not requested.
        unsafe { sys::mdbx_env_close_ex(self.0, false) };
    }
}

/// A transaction handle. Ends only through [`Txn::commit`] / [`Txn::abort`]: a raw baseline
/// owns its lifecycle explicitly, like the C programs in the seeds.
pub struct Txn(*mut sys::MDBX_txn);

// SAFETY: read txns move between threads only in NOSTICKYTHREADS envs, and each is used by one
// thread at a time (the short-reads workload hands one to each thread).
unsafe impl Send for Txn {}

impl Txn {
    /// Opens (or with `create`, creates) the named table.
    #[inline]
    pub fn open_table(&self, name: &CStr, flags: sys::MDBX_db_flags_t, create: bool) -> Dbi {
        let mut dbi: Dbi = 0;
        let flags = if create {
            flags | sys::MDBX_CREATE
        } else {
            flags
        };
        // SAFETY: the txn is live; `name` is NUL-terminated and alive for the call; libmdbx
        // writes the handle into `dbi` on success.
        check(
            unsafe { sys::mdbx_dbi_open(self.0, name.as_ptr(), flags, &mut dbi) },
            "mdbx_dbi_open",
        );
        dbi
    }

    /// `mdbx_get`: the stored value under `key`, borrowed from the txn's pages.
    #[inline]
    pub fn get(&self, dbi: Dbi, key: &[u8]) -> Option<&[u8]> {
        let k = val(key);
        let mut data = EMPTY;
        // SAFETY: the txn is live and not written to while the returned slice (tied to `&self`)
        // lives; `k` points into `key`, alive for the call.
        let rc = unsafe { sys::mdbx_get(self.0, dbi, &k, &mut data) };
        if rc == sys::MDBX_NOTFOUND {
            return None;
        }
        check(rc, "mdbx_get");
        // SAFETY: on success `data` points at `iov_len` bytes inside the txn's snapshot, valid
        // until the txn ends or writes, which the borrow of `self` prevents.
        Some(unsafe { std::slice::from_raw_parts(data.iov_base as *const u8, data.iov_len) })
    }

    /// Opens (creating) the named table with a custom key comparator (`mdbx_dbi_open_ex`,
    /// deprecated in libmdbx; get_cold investigation only).
    pub fn open_table_with_cmp(&self, name: &CStr, cmp: sys::MDBX_cmp_func) -> Dbi {
        let mut dbi: Dbi = 0;
        // SAFETY: the txn is live; `name` is NUL-terminated and alive for the call; `cmp` is a
        // comparator valid for the life of the process; libmdbx writes the handle into `dbi`.
        #[allow(deprecated)]
        check(
            unsafe {
                sys::mdbx_dbi_open_ex(self.0, name.as_ptr(), sys::MDBX_CREATE, &mut dbi, cmp, None)
            },
            "mdbx_dbi_open_ex",
        );
        dbi
    }

    /// Opens (creating) the named table with `flags` (say [`DUPSORT`]) and a custom key
    /// comparator (`mdbx_dbi_open_ex`, the way Tabula opens its tables; values keep libmdbx's
    /// default comparator, as in Tabula).
    pub fn open_table_with_cmp_flags(
        &self,
        name: &CStr,
        flags: sys::MDBX_db_flags_t,
        cmp: sys::MDBX_cmp_func,
    ) -> Dbi {
        let mut dbi: Dbi = 0;
        // SAFETY: the txn is live; `name` is NUL-terminated and alive for the call; `cmp` is a
        // comparator valid for the life of the process; libmdbx writes the handle into `dbi`.
        #[allow(deprecated)]
        check(
            unsafe {
                sys::mdbx_dbi_open_ex(
                    self.0,
                    name.as_ptr(),
                    flags | sys::MDBX_CREATE,
                    &mut dbi,
                    cmp,
                    None,
                )
            },
            "mdbx_dbi_open_ex",
        );
        dbi
    }

    /// The table's B-tree shape: (depth, branch pages, leaf pages).
    pub fn tree_shape(&self, dbi: Dbi) -> (u32, u64, u64) {
        // SAFETY: MDBX_stat is a plain C struct for which all-zero bytes are valid.
        let mut st: sys::MDBX_stat = unsafe { std::mem::zeroed() };
        // SAFETY: the txn is live, `dbi` is open in its env, `st` is a correctly sized
        // out-parameter.
        check(
            unsafe {
                sys::mdbx_dbi_stat(self.0, dbi, &mut st, std::mem::size_of::<sys::MDBX_stat>())
            },
            "mdbx_dbi_stat",
        );
        (st.ms_depth, st.ms_branch_pages, st.ms_leaf_pages)
    }

    /// `mdbx_put` with `flags` (e.g. `MDBX_APPEND`).
    #[inline]
    pub fn put(&mut self, dbi: Dbi, key: &[u8], value: &[u8], flags: sys::MDBX_put_flags_t) {
        let k = val(key);
        let mut v = val(value);
        // SAFETY: a live write txn borrowed exclusively; key and value are alive for the call
        // and libmdbx copies them.
        check(
            unsafe { sys::mdbx_put(self.0, dbi, &k, &mut v, flags) },
            "mdbx_put",
        );
    }

    /// `mdbx_del` of `key` (every value); whether it was there.
    #[inline]
    pub fn del(&mut self, dbi: Dbi, key: &[u8]) -> bool {
        let k = val(key);
        // SAFETY: a live write txn borrowed exclusively; `key` is alive for the call; a null
        // data pointer deletes every value of the key.
        let rc = unsafe { sys::mdbx_del(self.0, dbi, &k, ptr::null()) };
        if rc == sys::MDBX_NOTFOUND {
            return false;
        }
        check(rc, "mdbx_del");
        true
    }

    /// The raw transaction handle (for option experiments that call libmdbx directly).
    pub fn as_ptr(&self) -> *mut sys::MDBX_txn {
        self.0
    }

    /// Opens a cursor on `dbi`.
    #[inline]
    pub fn cursor(&self, dbi: Dbi) -> Cursor {
        let mut c: *mut sys::MDBX_cursor = ptr::null_mut();
        // SAFETY: the txn is live; libmdbx writes the cursor handle into `c` on success.
        check(
            unsafe { sys::mdbx_cursor_open(self.0, dbi, &mut c) },
            "mdbx_cursor_open",
        );
        Cursor(c)
    }

    /// `mdbx_txn_reset`: parks a read txn, keeping its reader slot.
    #[inline]
    pub fn reset(&mut self) {
        // SAFETY: a live read txn with no cursor or borrowed slice outstanding (`&mut self`).
        check(unsafe { sys::mdbx_txn_reset(self.0) }, "mdbx_txn_reset");
    }

    /// `mdbx_txn_refresh` + `mdbx_txn_park`: parks a finished read txn on the latest snapshot
    /// (what Tabula's pool does with `Options::reuse_read_snapshots`, the default).
    #[inline]
    pub fn park_latest(&mut self) {
        // SAFETY: a live read txn with no cursor or borrowed slice outstanding (`&mut self`);
        // refresh keeps it or restarts it on the latest snapshot.
        let rc = unsafe { sys::mdbx_txn_refresh(self.0) };
        assert!(
            rc == sys::MDBX_SUCCESS || rc == sys::MDBX_RESULT_TRUE,
            "mdbx_txn_refresh failed: {rc}"
        );
        // SAFETY: an active read txn in an env with a reader table; nothing borrowed from it.
        check(
            unsafe { sys::mdbx_txn_park(self.0, false) },
            "mdbx_txn_park",
        );
    }

    /// `mdbx_txn_unpark` + `mdbx_txn_refresh`: makes a txn parked by
    /// [`park_latest`](Self::park_latest) current again.
    #[inline]
    pub fn unpark_latest(&mut self) {
        // SAFETY: a read txn parked by `park_latest`; unparking restores or restarts it.
        let rc = unsafe { sys::mdbx_txn_unpark(self.0, true) };
        if rc == sys::MDBX_RESULT_TRUE {
            return;
        }
        check(rc, "mdbx_txn_unpark");
        // SAFETY: an active read txn with nothing borrowed from it.
        let rc = unsafe { sys::mdbx_txn_refresh(self.0) };
        assert!(
            rc == sys::MDBX_SUCCESS || rc == sys::MDBX_RESULT_TRUE,
            "mdbx_txn_refresh failed: {rc}"
        );
    }

    /// `mdbx_txn_renew`: resumes a parked read txn on the latest snapshot.
    #[inline]
    pub fn renew(&mut self) {
        // SAFETY: a read txn that was reset; renewing it is the documented reuse.
        check(unsafe { sys::mdbx_txn_renew(self.0) }, "mdbx_txn_renew");
    }

    /// Commits and frees the txn.
    #[inline]
    /// Commits without a flush and goes on as a new write txn (`mdbx_txn_checkpoint` with
    /// `MDBX_TXN_NOSYNC`).
    pub fn checkpoint_nosync(&mut self) {
        // SAFETY: a live write txn on its own thread; no cursor of it is open (callers close
        // theirs first).
        let rc = unsafe { sys::mdbx_txn_checkpoint(self.0, sys::MDBX_TXN_NOSYNC, ptr::null_mut()) };
        if rc != sys::MDBX_RESULT_TRUE {
            check(rc, "mdbx_txn_checkpoint");
        }
    }

    pub fn commit(self) {
        // SAFETY: the txn is live and owned; it is freed by the call and not used again.
        check(
            unsafe { sys::mdbx_txn_commit_ex(self.0, ptr::null_mut()) },
            "mdbx_txn_commit",
        );
    }

    /// Aborts and frees the txn (for a read txn: ends it).
    #[inline]
    pub fn abort(self) {
        // SAFETY: the txn is live (or reset) and owned; it is freed by the call.
        check(
            unsafe { sys::mdbx_txn_abort_ex(self.0, ptr::null_mut()) },
            "mdbx_txn_abort",
        );
    }
}

/// A cursor; closed with [`Cursor::close`].
pub struct Cursor(*mut sys::MDBX_cursor);

impl Cursor {
    /// `mdbx_cursor_put` with `flags` (e.g. `MDBX_APPEND`).
    #[inline]
    pub fn put(&mut self, key: &[u8], value: &[u8], flags: sys::MDBX_put_flags_t) {
        let k = val(key);
        let mut v = val(value);
        // SAFETY: the cursor is open in a live write txn; key and value are alive for the call.
        check(
            unsafe { sys::mdbx_cursor_put(self.0, &k, &mut v, flags) },
            "mdbx_cursor_put",
        );
    }

    /// `mdbx_cursor_get` with `MDBX_FIRST` (`first`) or `MDBX_NEXT`: the next entry in key
    /// order, borrowed from the txn's pages (the caller ends nothing while it holds them: the
    /// slices live until the txn writes or ends).
    #[inline]
    pub fn step(&mut self, first: bool) -> Option<(&[u8], &[u8])> {
        let mut k = EMPTY;
        let mut v = EMPTY;
        let op = if first {
            sys::MDBX_FIRST
        } else {
            sys::MDBX_NEXT
        };
        // SAFETY: the cursor is open in a live txn; libmdbx writes the entry into `k`, `v`.
        let rc = unsafe { sys::mdbx_cursor_get(self.0, &mut k, &mut v, op) };
        if rc == sys::MDBX_NOTFOUND {
            return None;
        }
        check(rc, "mdbx_cursor_get");
        // SAFETY: on success both point at bytes inside the txn's snapshot, valid until the
        // txn writes or ends; the borrow of `self` keeps the cursor (and so the walk) alive.
        Some(unsafe {
            (
                std::slice::from_raw_parts(k.iov_base as *const u8, k.iov_len),
                std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len),
            )
        })
    }

    /// `mdbx_cursor_get` with `op` (`MDBX_FIRST`, `MDBX_LAST`, `MDBX_NEXT`, ...; `key` for the
    /// ops that take one, such as `MDBX_SET_RANGE`): the entry found, borrowed from the txn's
    /// pages until the txn writes or ends.
    #[inline]
    pub fn get(&mut self, op: sys::MDBX_cursor_op, key: Option<&[u8]>) -> Option<(&[u8], &[u8])> {
        let mut k = key.map_or(EMPTY, val);
        let mut v = EMPTY;
        // SAFETY: the cursor is open in a live txn; `k` points into `key` (alive for the call)
        // or is empty; libmdbx writes the entry found into `k`, `v`.
        let rc = unsafe { sys::mdbx_cursor_get(self.0, &mut k, &mut v, op) };
        if rc == sys::MDBX_NOTFOUND {
            return None;
        }
        check(rc, "mdbx_cursor_get");
        // SAFETY: on success both point at bytes inside the txn's snapshot (or its dirty
        // pages), valid until the txn writes or ends; the borrow of `self` keeps the cursor
        // alive meanwhile.
        Some(unsafe {
            (
                std::slice::from_raw_parts(k.iov_base as *const u8, k.iov_len),
                std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len),
            )
        })
    }

    /// `mdbx_cursor_get(MDBX_GET_BOTH_RANGE)`: in a dupsort table, the first value of `key`
    /// that is `>= value`, borrowed from the txn's pages; `None` when `key` is absent or has
    /// no such value.
    #[inline]
    pub fn get_both_range(&mut self, key: &[u8], value: &[u8]) -> Option<&[u8]> {
        let mut k = val(key);
        let mut v = val(value);
        // SAFETY: the cursor is open in a live txn; `k` and `v` point into `key` and `value`,
        // alive for the call; on success libmdbx points `v` at the value found.
        let rc = unsafe { sys::mdbx_cursor_get(self.0, &mut k, &mut v, sys::MDBX_GET_BOTH_RANGE) };
        if rc == sys::MDBX_NOTFOUND {
            return None;
        }
        check(rc, "mdbx_cursor_get(MDBX_GET_BOTH_RANGE)");
        // SAFETY: on success `v` points at `iov_len` bytes inside the txn's snapshot, valid
        // until the txn writes or ends; the borrow of `self` keeps the cursor alive meanwhile.
        Some(unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) })
    }

    /// `mdbx_cursor_del(MDBX_CURRENT)`: deletes the entry under the cursor (what Tabula's
    /// `WriteCursor::delete_current` calls); a following `MDBX_NEXT` lands on the entry after
    /// it.
    #[inline]
    pub fn del_current(&mut self) {
        // SAFETY: the cursor is open in a live write txn and positioned (callers delete only
        // after a move found an entry); no slice read through it is alive (`&mut self`).
        check(
            unsafe { sys::mdbx_cursor_del(self.0, sys::MDBX_CURRENT) },
            "mdbx_cursor_del",
        );
    }

    /// Closes the cursor.
    #[inline]
    pub fn close(self) {
        // SAFETY: the cursor is open and owned; its txn is still live (callers close cursors
        // before ending the txn).
        unsafe { sys::mdbx_cursor_close(self.0) };
    }
}

/// Byte-wise key order, shorter first on a common prefix (libmdbx's default, `cmp_lexical`),
/// written so that the sign comes from a conditional branch, not arithmetic on the loaded
/// bytes: the CPU then predicts it and starts the binary search's next load early, as LMDB's
/// branchy search lets it (get_cold investigation).
///
/// # Safety
///
/// `a` and `b` point at valid `MDBX_val`s whose bytes are readable (libmdbx's contract).
pub unsafe extern "C" fn lexical_cmp_branchy(
    a: *const sys::MDBX_val,
    b: *const sys::MDBX_val,
) -> i32 {
    // SAFETY: libmdbx passes two valid values, alive for the call.
    let (a, b) = unsafe { (&*a, &*b) };
    // 8-byte keys, then the first 8 bytes of longer ones, decided the way Tabula's comparator
    // (`engine::byte_key_cmp`) decides them: one load of each from the values as they are.
    if a.iov_len == 8 && b.iov_len == 8 {
        // SAFETY: each value's 8 bytes are readable for the call (libmdbx's comparator
        // contract); keys on a page are only 2-byte aligned, so the reads are unaligned.
        let (x, y) = unsafe {
            (
                (a.iov_base as *const [u8; 8]).read_unaligned(),
                (b.iov_base as *const [u8; 8]).read_unaligned(),
            )
        };
        let (x, y) = (u64::from_be_bytes(x), u64::from_be_bytes(y));
        return if x < y {
            std::hint::black_box(-1)
        } else if x > y {
            std::hint::black_box(1)
        } else {
            0
        };
    }
    if a.iov_len >= 8 && b.iov_len >= 8 {
        // SAFETY: both values have at least 8 readable bytes (libmdbx's contract); keys on a
        // page are only 2-byte aligned, so the reads are unaligned.
        let (x, y) = unsafe {
            (
                (a.iov_base as *const u64).read_unaligned(),
                (b.iov_base as *const u64).read_unaligned(),
            )
        };
        if x != y {
            return if u64::from_be(x) < u64::from_be(y) {
                std::hint::black_box(-1)
            } else {
                std::hint::black_box(1)
            };
        }
    }
    // SAFETY: as above; a zero length is an empty slice whatever the pointer.
    let (a, b) = unsafe {
        (
            slice_of(a.iov_base as *const u8, a.iov_len),
            slice_of(b.iov_base as *const u8, b.iov_len),
        )
    };
    // Other lengths (dup_seek's 20-byte keys) the way Tabula's comparator
    // (`engine::byte_key_cmp`) walks them, so the raw rows compare keys at the same cost: the
    // first 8-byte words (which decide almost every comparison of random keys), then every
    // 8-byte word, the tail, and the length, each decided by a branch.
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

/// The bytes of a value libmdbx passed: empty when the length is 0, whatever the pointer.
///
/// # Safety
///
/// With `len > 0`, `ptr` points at `len` readable bytes alive for `'a`.
unsafe fn slice_of<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// `MDBX_INTEGERKEY`.
pub const INTEGER_KEY: sys::MDBX_db_flags_t = sys::MDBX_INTEGERKEY;
/// Default table flags.
pub const NO_FLAGS: sys::MDBX_db_flags_t = sys::MDBX_DB_DEFAULTS;
/// `MDBX_APPEND`.
pub const APPEND: sys::MDBX_put_flags_t = sys::MDBX_APPEND;
/// `MDBX_APPENDDUP`.
pub const APPENDDUP: sys::MDBX_put_flags_t = sys::MDBX_APPENDDUP;
/// `MDBX_DUPSORT`.
pub const DUPSORT: sys::MDBX_db_flags_t = sys::MDBX_DUPSORT;
/// `MDBX_FIRST`.
pub const FIRST: sys::MDBX_cursor_op = sys::MDBX_FIRST;
/// `MDBX_LAST`.
pub const LAST: sys::MDBX_cursor_op = sys::MDBX_LAST;
/// `MDBX_NEXT`.
pub const NEXT: sys::MDBX_cursor_op = sys::MDBX_NEXT;
/// `MDBX_SET_RANGE`: the first key `>=` the one given.
pub const SET_RANGE: sys::MDBX_cursor_op = sys::MDBX_SET_RANGE;
/// `MDBX_CURRENT`.
pub const GET_CURRENT: sys::MDBX_cursor_op = sys::MDBX_GET_CURRENT;

#[cfg(test)]
mod tests {
    use super::*;

    /// The branchy comparator orders keys of every length as byte slices do (libmdbx's
    /// default order), so a raw table with it holds the same order as Tabula's.
    #[test]
    fn the_branchy_comparator_orders_like_bytes() {
        let mut rng = crate::util::XorShift::new(0xC0FFEE);
        // Lengths 0..24 and few distinct byte values, so equal prefixes and keys are common.
        let mut key = || -> Vec<u8> {
            let len = rng.below(24) as usize;
            (0..len).map(|_| rng.below(3) as u8 * 0x7F).collect()
        };
        for _ in 0..20_000 {
            let (a, b) = (key(), key());
            let (va, vb) = (val(&a), val(&b));
            // SAFETY: both values point into live vectors for the call.
            let got = unsafe { lexical_cmp_branchy(&va, &vb) };
            assert_eq!(got.cmp(&0), a.cmp(&b), "{a:?} vs {b:?}");
        }
    }
}
