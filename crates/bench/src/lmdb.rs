//! LMDB through its C API (`lmdb-master-sys`, the same LMDB 0.9.70 heed links), for the one
//! call heed 0.23's API does not offer: `MDB_GET_BOTH_RANGE` (dup_seek's LMDB row). heed keeps
//! its cursors, transaction and handle pointers private, so the row opens its own environment
//! here.
//!
//! Like [`crate::raw`], a benchmark baseline: errors panic with LMDB's message, and the
//! wrappers are `#[inline]`.

use std::ffi::{CStr, CString, c_void};
use std::path::Path;
use std::ptr;

use lmdb_master_sys as ffi;

pub use ffi::MDB_dbi as Dbi;

/// Panics with LMDB's message when `rc` is not `MDB_SUCCESS`.
#[inline]
#[track_caller]
fn check(rc: i32, what: &str) {
    if rc != ffi::MDB_SUCCESS {
        // SAFETY: mdb_strerror returns a pointer to a static NUL-terminated string for any code.
        let msg = unsafe { CStr::from_ptr(ffi::mdb_strerror(rc)) };
        panic!("{what}: LMDB error {rc}: {}", msg.to_string_lossy());
    }
}

#[inline]
fn val(bytes: &[u8]) -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: bytes.len(),
        mv_data: bytes.as_ptr() as *mut c_void,
    }
}

/// `MDB_DUPSORT`.
pub const DUPSORT: u32 = ffi::MDB_DUPSORT;
/// `MDB_APPEND`.
pub const APPEND: u32 = ffi::MDB_APPEND;
/// `MDB_APPENDDUP`.
pub const APPENDDUP: u32 = ffi::MDB_APPENDDUP;

/// An open LMDB environment; closed on drop.
pub struct Env(*mut ffi::MDB_env);

impl Env {
    /// Opens (creating) an environment in directory `path` with heed's settings in the
    /// benchmarks: map size [`crate::workloads::HEED_MAP_SIZE`], `max_tables` named tables,
    /// default flags (sync at commit, thread-local reader slots).
    pub fn open(path: &Path, max_tables: u32) -> Env {
        let mut env: *mut ffi::MDB_env = ptr::null_mut();
        // SAFETY: mdb_env_create writes a fresh handle into `env` on success.
        check(unsafe { ffi::mdb_env_create(&mut env) }, "mdb_env_create");
        let cpath = CString::new(path.as_os_str().as_encoded_bytes()).expect("path has no NUL");
        // SAFETY: `env` is created and not yet open, so the map size and table count may be
        // set; `cpath` is NUL-terminated and alive for the call.
        unsafe {
            check(
                ffi::mdb_env_set_mapsize(env, crate::workloads::HEED_MAP_SIZE),
                "mdb_env_set_mapsize",
            );
            check(
                ffi::mdb_env_set_maxdbs(env, max_tables),
                "mdb_env_set_maxdbs",
            );
            check(
                ffi::mdb_env_open(env, cpath.as_ptr(), 0, 0o644),
                "mdb_env_open",
            );
        }
        Env(env)
    }

    /// Begins a read (`write = false`) or write transaction.
    pub fn begin(&self, write: bool) -> Txn {
        let flags = if write { 0 } else { ffi::MDB_RDONLY };
        let mut txn: *mut ffi::MDB_txn = ptr::null_mut();
        // SAFETY: the env is open for the life of `self`; a top-level txn has a null parent;
        // LMDB writes the handle into `txn` on success.
        check(
            unsafe { ffi::mdb_txn_begin(self.0, ptr::null_mut(), flags, &mut txn) },
            "mdb_txn_begin",
        );
        Txn(txn)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: every txn of this env has ended (each workload ends its txns before dropping
        // the env).
        unsafe { ffi::mdb_env_close(self.0) };
    }
}

/// A transaction; ends only through [`Txn::commit`] / [`Txn::abort`].
pub struct Txn(*mut ffi::MDB_txn);

impl Txn {
    /// Opens (creating) the named table with `flags`.
    pub fn open_table(&self, name: &CStr, flags: u32) -> Dbi {
        let mut dbi: Dbi = 0;
        // SAFETY: the txn is live; `name` is NUL-terminated and alive for the call; LMDB
        // writes the handle into `dbi` on success.
        check(
            unsafe { ffi::mdb_dbi_open(self.0, name.as_ptr(), flags | ffi::MDB_CREATE, &mut dbi) },
            "mdb_dbi_open",
        );
        dbi
    }

    /// Opens a cursor on `dbi`.
    #[inline]
    pub fn cursor(&self, dbi: Dbi) -> Cursor {
        let mut c: *mut ffi::MDB_cursor = ptr::null_mut();
        // SAFETY: the txn is live; LMDB writes the cursor handle into `c` on success.
        check(
            unsafe { ffi::mdb_cursor_open(self.0, dbi, &mut c) },
            "mdb_cursor_open",
        );
        Cursor(c)
    }

    /// Commits and frees the txn.
    pub fn commit(self) {
        // SAFETY: the txn is live and owned; the call frees it and it is not used again.
        check(unsafe { ffi::mdb_txn_commit(self.0) }, "mdb_txn_commit");
    }

    /// Aborts and frees the txn (for a read txn: ends it).
    pub fn abort(self) {
        // SAFETY: the txn is live and owned; the call frees it and it is not used again.
        unsafe { ffi::mdb_txn_abort(self.0) };
    }
}

/// A cursor; closed with [`Cursor::close`].
pub struct Cursor(*mut ffi::MDB_cursor);

impl Cursor {
    /// `mdb_cursor_put` with `flags` (`MDB_APPEND`, `MDB_APPENDDUP`).
    #[inline]
    pub fn put(&mut self, key: &[u8], value: &[u8], flags: u32) {
        let mut k = val(key);
        let mut v = val(value);
        // SAFETY: the cursor is open in a live write txn; key and value are alive for the call
        // and LMDB copies them.
        check(
            unsafe { ffi::mdb_cursor_put(self.0, &mut k, &mut v, flags) },
            "mdb_cursor_put",
        );
    }

    /// `mdb_cursor_get(MDB_GET_BOTH_RANGE)`: the first value of `key` that is `>= value`,
    /// borrowed from the txn's pages; `None` when `key` is absent or has no such value.
    #[inline]
    pub fn get_both_range(&mut self, key: &[u8], value: &[u8]) -> Option<&[u8]> {
        let mut k = val(key);
        let mut v = val(value);
        // SAFETY: the cursor is open in a live txn; `k` and `v` point into `key` and `value`,
        // alive for the call; on success LMDB points `v` at the found value.
        let rc = unsafe { ffi::mdb_cursor_get(self.0, &mut k, &mut v, ffi::MDB_GET_BOTH_RANGE) };
        if rc == ffi::MDB_NOTFOUND {
            return None;
        }
        check(rc, "mdb_cursor_get(MDB_GET_BOTH_RANGE)");
        // SAFETY: on success `v` points at `mv_size` bytes inside the txn's snapshot (a read
        // txn: valid until it ends); the borrow of `self` keeps the cursor, and so its txn's
        // use, alive while the slice lives.
        Some(unsafe { std::slice::from_raw_parts(v.mv_data as *const u8, v.mv_size) })
    }

    /// Closes the cursor.
    pub fn close(self) {
        // SAFETY: the cursor is open and owned; its txn is still live (callers close cursors
        // before ending the txn).
        unsafe { ffi::mdb_cursor_close(self.0) };
    }
}
