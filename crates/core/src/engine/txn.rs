//! `RawTxn`: one libmdbx transaction object, aborted on drop.

use std::ffi::{CString, c_uint};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use mdbx_sys as sys;

use super::*;

/// A transaction object: active, or reset (read-only, parked for reuse). Aborted on drop.
pub(crate) struct RawTxn {
    pub(super) ptr: NonNull<sys::MDBX_txn>,
    /// The cursor its range reads reuse ([`kept_cursor`](Self::kept_cursor)).
    pub(super) kept: KeptCursor,
}

// SAFETY: the env is opened with MDBX_NOSTICKYTHREADS, so a read txn (active or reset) may be
// used from any thread as long as one thread at a time does; `RawTxn` methods take `&self`/`&mut
// self` and the typed owners are `!Sync`. Write txns are only ever owned by `Tx<Rw>`, which is
// `!Send`, so they stay on the thread that began them.
unsafe impl Send for RawTxn {}

impl RawTxn {
    /// A transaction object taken over from libmdbx (or from a pool), with no kept cursor.
    #[inline]
    pub(super) fn from_ptr(ptr: NonNull<sys::MDBX_txn>) -> Self {
        RawTxn {
            ptr,
            kept: KeptCursor::empty(),
        }
    }

    /// Gives the cursor kept for range reads ([`kept_cursor`](Self::kept_cursor)) back to
    /// `cache`, unbound: what a transaction does before it is parked or ended, so that the
    /// next transaction's first range read on this thread binds it instead of allocating one.
    #[inline]
    pub fn release_kept_cursor(&mut self, cache: &CursorCache) {
        if !self.kept.is_empty() {
            self.kept.release(cache);
        }
    }

    /// Parks a read transaction: releases its snapshot, keeps the object for [`renew`](Self::renew).
    pub fn reset(&mut self) -> Result<(), Code> {
        self.kept.close();
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
    #[inline]
    pub fn park_latest(&mut self) -> Result<(), Code> {
        // Released to the cursor cache before parking (`release_kept_cursor`, by every owner
        // that parks): a pooled transaction keeps no cursor.
        debug_assert!(
            self.kept.is_empty(),
            "a read transaction parked with its cursor"
        );
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

    /// [`resume`](Self::resume) for a transaction the caller knows was parked by
    /// [`park_latest`](Self::park_latest) (not reset): the same unpark and refresh without
    /// asking libmdbx for the transaction's flags first — what raw libmdbx code that parks its
    /// own transaction does. Called on a reset transaction it fails (`MDBX_BAD_TXN`) without
    /// touching it.
    #[inline]
    pub fn resume_parked(&mut self) -> Result<(), Code> {
        let ptr = self.ptr.as_ptr();
        // SAFETY: `self` is a read txn parked by `park_latest` and owned by the caller;
        // unparking either restores it or (ousted) restarts it, both leave it active. (On a
        // txn that is not parked libmdbx checks the flags itself and refuses or does nothing.)
        let rc = unsafe { sys::mdbx_txn_unpark(ptr, true) };
        if rc == sys::MDBX_RESULT_TRUE {
            return Ok(()); // ousted and restarted: already on the latest snapshot
        }
        check(rc)?;
        // SAFETY: `self` is now an active read txn owned by the caller with nothing borrowed
        // from it (`&mut self`); refresh keeps it when it is still on the latest snapshot and
        // otherwise restarts it there.
        match unsafe { sys::mdbx_txn_refresh(ptr) } {
            sys::MDBX_SUCCESS | sys::MDBX_RESULT_TRUE => Ok(()),
            rc => Err(Code(rc)),
        }
    }

    /// Commits, and reports how long libmdbx took in seconds (`MDBX_commit_latency::whole`, a
    /// 16.16 fixed-point number of seconds, converted), for the commit-latency metric.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub fn commit_timed(self) -> Result<f64, Code> {
        self.kept.close();
        if self.writes_nothing() {
            drop(self); // aborts: see `commit`
            return Ok(0.0);
        }
        let ptr = self.ptr.as_ptr();
        std::mem::forget(self);
        // SAFETY: MDBX_commit_latency is a plain C struct for which all-zero bytes are valid.
        let mut latency: sys::MDBX_commit_latency = unsafe { std::mem::zeroed() };
        let _committing = Committing::enter();
        // SAFETY: as for `commit`; `latency` is a valid out-parameter for the call.
        check(unsafe { sys::mdbx_txn_commit_ex(ptr, &mut latency) })?;
        Ok(f64::from(latency.whole) / 65536.0)
    }

    /// Begins a transaction nested in this write transaction (`mdbx_txn_begin_ex` with this one
    /// as the parent) and makes `self` stand for it: from now on every call on `self` goes to
    /// the nested transaction, which sees the parent's writes; the parent is returned, to be
    /// resumed by [`ParentTxn::resume`] (which ends the nested one, committing it into the parent
    /// or discarding it) before anything else touches it.
    pub fn nest(&mut self) -> Result<ParentTxn, Code> {
        // libmdbx binds no cursor of the parent in its child: the kept cursor goes unbound.
        self.kept.unbind();
        let parent = self.ptr;
        // SAFETY: `self` is a live write txn (only `Tx<Rw>` calls this) owned by the caller on
        // its own thread; `mdbx_txn_env` only reads its env pointer.
        let env = unsafe { sys::mdbx_txn_env(parent.as_ptr()) };
        let mut child: *mut sys::MDBX_txn = ptr::null_mut();
        // SAFETY: `parent` is a live write txn of `env` with no nested txn (the only nested one
        // would be in `self`'s place); `child` is an out-parameter. While the child lives the
        // parent is reachable only through the returned `ParentTxn`, which does not use it.
        check(unsafe {
            sys::mdbx_txn_begin_ex(
                env,
                parent.as_ptr(),
                sys::MDBX_TXN_READWRITE,
                &mut child,
                ptr::null_mut(),
            )
        })?;
        self.ptr = NonNull::new(child).ok_or(Code::EINVAL)?;
        Ok(ParentTxn {
            parent,
            child: self.ptr,
        })
    }

    /// Pages of the whole file as this transaction sees it: total, backed by the file,
    /// allocated, in the GC, reclaimable, and the most any reader has retained
    /// (`mdbx_gc_info`, which walks the GC).
    pub fn space(&mut self) -> Result<RawSpace, Code> {
        // SAFETY: MDBX_gc_info_t is a plain C struct for which all-zero bytes are valid.
        let mut info: sys::MDBX_gc_info_t = unsafe { std::mem::zeroed() };
        // SAFETY: the txn is live and exclusively borrowed (libmdbx links a cursor into it for
        // the walk); `info` is a correctly sized out-parameter; no span callback.
        let rc = unsafe {
            sys::mdbx_gc_info(
                self.ptr.as_ptr(),
                &mut info,
                std::mem::size_of::<sys::MDBX_gc_info_t>(),
                None,
                ptr::null_mut(),
            )
        };
        // MDBX_NOTFOUND: the GC is empty, the counts are still filled in.
        if rc != sys::MDBX_NOTFOUND {
            check(rc)?;
        }
        Ok(RawSpace {
            total_pages: info.pages_total as u64,
            backed_pages: info.pages_backed as u64,
            allocated_pages: info.pages_allocated as u64,
            gc_pages: info.pages_gc as u64,
            reclaimable_pages: info.gc_reclaimable.pages as u64,
        })
    }

    /// Commits. A write transaction that changed nothing is aborted instead: libmdbx 0.14.4
    /// commits such a transaction as a new durable meta page (a write and a flush) once the
    /// latest one is steady, which costs a sync for nothing. Aborting it is the same for the
    /// data, and keeps the handles it opened for existing tables (libmdbx makes those available
    /// to every transaction at once; only a handle *created* in an aborted transaction is
    /// closed, and creating a table marks the transaction dirty).
    pub fn commit(self) -> Result<(), Code> {
        self.kept.close();
        if self.writes_nothing() {
            drop(self); // aborts
            return Ok(());
        }
        let ptr = self.ptr.as_ptr();
        std::mem::forget(self);
        let _committing = Committing::enter();
        // SAFETY: the txn is live and owned; it is consumed here (forgotten above), so it is not
        // aborted again on drop. libmdbx frees the handle whether the commit succeeds or not.
        check(unsafe { sys::mdbx_txn_commit_ex(ptr, ptr::null_mut()) })
    }

    /// Whether this is a top-level write transaction that changed nothing: no page, table,
    /// sequence or canary touched (libmdbx sets `MDBX_TXN_DIRTY` on the first change of any
    /// table), nothing spilled, no nested transaction, no error.
    #[inline]
    fn writes_nothing(&self) -> bool {
        // SAFETY: `self` is a live txn handle owned by the caller; reading its flags has no
        // other requirement (an invalid handle reads as all bits set, i.e. not this case).
        let flags = unsafe { sys::mdbx_txn_flags(self.ptr.as_ptr()) };
        let busy = (sys::MDBX_TXN_RDONLY
            | sys::MDBX_TXN_DIRTY
            | sys::MDBX_TXN_SPILLS
            | sys::MDBX_TXN_HAS_CHILD
            | sys::MDBX_TXN_ERROR
            | sys::MDBX_TXN_FINISHED) as sys::MDBX_txn_flags_t;
        flags & busy == 0
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
    /// Returns the commit's latency in seconds, as [`commit_timed`](Self::commit_timed)
    /// does (0 when there was nothing to commit).
    pub fn checkpoint_nosync(&mut self) -> Result<f64, Code> {
        self.kept.unbind();
        // SAFETY: MDBX_commit_latency is a plain C struct for which all-zero bytes are valid.
        let mut latency: sys::MDBX_commit_latency = unsafe { std::mem::zeroed() };
        // SAFETY: `self` is a live write txn owned by the caller on its own thread (write txns
        // are only owned by `!Send` types); `&mut self` means no cursor or slice borrowed from
        // it is alive. `latency` is a valid out-parameter for the call.
        let rc = unsafe {
            sys::mdbx_txn_checkpoint(self.ptr.as_ptr(), sys::MDBX_TXN_NOSYNC, &mut latency)
        };
        // MDBX_RESULT_TRUE: nothing to commit, the transaction goes on unchanged.
        if rc == sys::MDBX_RESULT_TRUE {
            return Ok(0.0);
        }
        check(rc)?;
        Ok(f64::from(latency.whole) / 65536.0)
    }

    /// Opens a table by name (`None` = the main table). `Ok(None)` when it does not exist and
    /// `create` is false.
    pub fn open_table(
        &mut self,
        name: Option<&str>,
        flags: u32,
        create: bool,
    ) -> Result<Option<Dbi>, Code> {
        // The name as libmdbx's `MDBX_val` (`mdbx_dbi_open2`): no NUL-terminated copy. A name
        // with a NUL inside is refused, as `mdbx_dbi_open`'s C string could not hold it.
        let name = match name {
            Some(n) if n.as_bytes().contains(&0) => return Err(Code::EINVAL),
            Some(n) => Some(super::val(n.as_bytes())),
            None => None,
        };
        let name_ptr = name
            .as_ref()
            .map_or(ptr::null(), |v| v as *const sys::MDBX_val);
        let mut dbi: Dbi = 0;
        let flags = if create {
            flags | sys::MDBX_CREATE
        } else {
            // Open with whatever flags the table was created with; the caller compares them.
            sys::MDBX_DB_ACCEDE
        };
        // SAFETY: the txn is live and exclusively borrowed; `name_ptr` is null (the main
        // table) or points at an `MDBX_val` whose bytes (the borrowed `&str`) outlive the call;
        // libmdbx copies the name it keeps; `dbi` is an out-parameter.
        let rc = unsafe { sys::mdbx_dbi_open2(self.ptr.as_ptr(), name_ptr, flags, &mut dbi) };
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

    /// Whether this write transaction changed the table (`MDBX_DBI_DIRTY`: set on its first
    /// change; a nested transaction's is merged into its parent when it commits and dropped
    /// when it aborts). `false` when libmdbx cannot say (a handle it does not know).
    pub fn wrote(&self, dbi: Dbi) -> bool {
        let mut flags: c_uint = 0;
        let mut state: c_uint = 0;
        // SAFETY: the txn is live; `dbi` was opened in this env; out-parameters are valid.
        let rc = unsafe { sys::mdbx_dbi_flags_ex(self.ptr.as_ptr(), dbi, &mut flags, &mut state) };
        rc == sys::MDBX_SUCCESS && state & sys::MDBX_DBI_DIRTY as c_uint != 0
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

    /// The table's sequence (`mdbx_dbi_sequence` with increment 0): allowed in a read
    /// transaction.
    pub fn sequence(&self, dbi: Dbi) -> Result<u64, Code> {
        let mut value = 0u64;
        // SAFETY: the txn is live; `dbi` belongs to its env; `value` is an out-parameter; an
        // increment of 0 changes nothing, which is what a shared borrow allows.
        check(unsafe { sys::mdbx_dbi_sequence(self.ptr.as_ptr(), dbi, &mut value, 0) })?;
        Ok(value)
    }

    /// Adds `increment` to the table's sequence (`mdbx_dbi_sequence`), returning its value
    /// before; `Ok(None)` when the sum would overflow (`MDBX_RESULT_TRUE`, nothing changed).
    /// Rolled back with the transaction.
    pub fn sequence_add(&mut self, dbi: Dbi, increment: u64) -> Result<Option<u64>, Code> {
        let mut before = 0u64;
        // SAFETY: the txn is live and borrowed exclusively (the call marks the table dirty);
        // `dbi` belongs to its env; `before` is an out-parameter.
        let rc = unsafe { sys::mdbx_dbi_sequence(self.ptr.as_ptr(), dbi, &mut before, increment) };
        if rc == sys::MDBX_RESULT_TRUE {
            return Ok(None);
        }
        check(rc)?;
        Ok(Some(before))
    }

    /// Raises the table's sequence to `at_least` when it is below (never lowers it).
    pub fn raise_sequence(&mut self, dbi: Dbi, at_least: u64) -> Result<(), Code> {
        let now = self.sequence(dbi)?;
        if now < at_least {
            // Below `at_least`, so the sum cannot overflow.
            self.sequence_add(dbi, at_least - now)?;
        }
        Ok(())
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
            mod_txnid: st.ms_mod_txnid,
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

    /// [`get`](Self::get), returning the stored copy of the key with the value
    /// (`mdbx_get_ex`, which points both at the pair in the page), so that both can be kept
    /// for as long as the transaction is borrowed.
    #[inline]
    pub fn get_pair<'t>(&'t self, dbi: Dbi, key: &[u8]) -> Result<Option<Pair<'t>>, Code> {
        let mut k = val(key);
        let mut v = EMPTY;
        // SAFETY: the txn is live and, being borrowed shared for 't, is not written to while
        // the returned slices live; `k` points into `key`, alive for the call, and libmdbx
        // overwrites it with a pointer to the stored key; a null count pointer is allowed.
        let rc =
            unsafe { sys::mdbx_get_ex(self.ptr.as_ptr(), dbi, &mut k, &mut v, ptr::null_mut()) };
        if check_found(rc)? {
            // SAFETY: a successful get: both point into pages (or the txn's dirty pages) valid
            // while the txn is alive and unmodified, which the shared borrow 't guarantees.
            Ok(Some(unsafe { (slice(&k), slice(&v)) }))
        } else {
            Ok(None)
        }
    }

    /// Number of values of `key` (0 when it is absent; at most 1 outside a dupsort table).
    pub fn count_values(&self, dbi: Dbi, key: &[u8]) -> Result<usize, Code> {
        let mut k = val(key);
        let mut v = EMPTY;
        let mut count = 0usize;
        // SAFETY: the txn is live; `k` points into `key`, alive for the call; `v` and `count`
        // are out-parameters (the value slice is not used).
        let rc = unsafe { sys::mdbx_get_ex(self.ptr.as_ptr(), dbi, &mut k, &mut v, &mut count) };
        Ok(if check_found(rc)? { count } else { 0 })
    }

    /// The first (key, value) pair `>=` (`key`, `value`) in table order, values of a dupsort
    /// key included (`mdbx_get_equal_or_great`, libmdbx's `MDBX_SET_LOWERBOUND` on a cursor it
    /// keeps on the stack); `Ok(None)` when there is none.
    #[inline]
    pub fn get_lower_bound<'t>(
        &'t self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
    ) -> Result<Option<Pair<'t>>, Code> {
        let mut k = val(key);
        let mut v = val(value);
        // SAFETY: the txn is live and, being borrowed shared for 't, is not written to while the
        // returned slices live; `k`/`v` point into buffers alive for the call, and libmdbx
        // overwrites them with pointers into the txn's pages.
        let rc = unsafe { sys::mdbx_get_equal_or_great(self.ptr.as_ptr(), dbi, &mut k, &mut v) };
        // `MDBX_RESULT_TRUE`: a greater pair was found, not an error.
        if rc == sys::MDBX_RESULT_TRUE || check_found(rc)? {
            // SAFETY: a successful search; both point into pages valid while the txn is alive
            // and unmodified, which the shared borrow 't guarantees.
            Ok(Some(unsafe { (slice(&k), slice(&v)) }))
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

    /// Puts `key` with a value of `len` bytes that `fill` writes straight into the page:
    /// `mdbx_put` with `MDBX_RESERVE` makes room for the value and returns where it is, and
    /// `fill` gets that room as a [`Room`]; what it leaves unwritten is zeroed after. Not for
    /// `MDBX_DUPSORT` tables: libmdbx does not allow `MDBX_RESERVE` there (callers check the
    /// table's flags first).
    ///
    /// The room is valid only until the next write of the transaction. `fill` borrows it for
    /// the call alone (its result cannot hold it: the closure's argument has a lifetime of its
    /// own), and `&mut self` keeps every other use of the transaction out meanwhile.
    #[inline]
    pub fn put_reserve<R>(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        len: usize,
        flags: u32,
        fill: impl FnOnce(&mut Room<'_>) -> R,
    ) -> Result<R, Code> {
        let k = val(key);
        let mut v = sys::MDBX_val {
            iov_base: ptr::null_mut(),
            iov_len: len,
        };
        // SAFETY: the txn is a live write txn borrowed exclusively, so no slice into its pages
        // is alive; `k` points into `key`, alive for the call; with `MDBX_RESERVE` libmdbx
        // reads only `v.iov_len` and overwrites `v.iov_base` with the reserved room.
        check(unsafe {
            sys::mdbx_put(
                self.ptr.as_ptr(),
                dbi,
                &k,
                &mut v,
                flags | sys::MDBX_RESERVE,
            )
        })?;
        let at = match NonNull::new(v.iov_base.cast::<u8>()) {
            Some(at) if len > 0 => at,
            _ => NonNull::dangling(),
        };
        let len = if at == NonNull::dangling() { 0 } else { len };
        // SAFETY: a successful reserve: `at` points at `len` writable bytes in a page of this
        // write txn (a dirty page, or the map with `MDBX_WRITEMAP`), which libmdbx leaves
        // uninitialised and which no one else reads or writes until the txn's next write;
        // `&mut self`, held until `fill` returns, rules that out. (A dangling pointer with
        // `len == 0` names no bytes.) The room does not escape: `fill`'s argument has a
        // lifetime of its own.
        let mut room = unsafe { Room::new(at, len) };
        // Dropping the room (after `fill`, or while unwinding from a panic in it) stores what
        // `fill` did not write as zeros, not as whatever the page held.
        Ok(fill(&mut room))
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

    /// Empties a table (`delete = false`), keeping its sequence, or deletes it from the file
    /// with its sequence (`delete = true`, only while the handle is not shared: the startup
    /// step).
    pub fn drop_table(&mut self, dbi: Dbi, delete: bool) -> Result<(), Code> {
        // No cursor of ours stays on a table that is emptied or closed.
        self.kept.unbind();
        // libmdbx's purge of a non-empty table zeroes its sequence (`tbl_purge`); a sequence
        // hands out each value once, so an emptied table's goes on where it was.
        let sequence = if delete { 0 } else { self.sequence(dbi)? };
        // SAFETY: live write txn, exclusively borrowed. With `delete = true` the DBI slot is
        // closed; callers only do that before any handle is published.
        check(unsafe { sys::mdbx_drop(self.ptr.as_ptr(), dbi, delete) })?;
        if sequence > 0 {
            self.raise_sequence(dbi, sequence)?;
        }
        Ok(())
    }

    /// Gives a table a new name (within this write transaction).
    pub fn rename_table(&mut self, dbi: Dbi, name: &str) -> Result<(), Code> {
        self.kept.unbind();
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
            kept: None,
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
                    kept: None,
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

    /// [`cursor_cached`](Self::cursor_cached) for a walk that places the cursor before it reads
    /// (a range read: `MDBX_FIRST`, `MDBX_LAST`, `MDBX_SET_RANGE`, `MDBX_GET_BOTH_RANGE`):
    /// the cursor this transaction keeps, when it holds one, rebound to `dbi` (only
    /// `mdbx_cursor_dbi` when it is bound to `dbi` already, wherever its last walk left it); on drop
    /// the cursor goes back there, still bound, when the slot is empty. A cursor from here
    /// must be placed before its first relative move (`MDBX_NEXT` on it does not start from
    /// the first entry).
    #[inline]
    pub fn kept_cursor<'t>(
        &'t self,
        dbi: Dbi,
        cache: &'t CursorCache,
    ) -> Result<RawCursor<'t>, Code> {
        if let Some((c, bound)) = self.kept.take(dbi) {
            if bound {
                // Bound to `dbi`, in this transaction (the slot's cursor is bound to no other).
                return Ok(RawCursor {
                    ptr: c,
                    cache: Some(cache),
                    kept: Some(&self.kept),
                    _txn: PhantomData,
                });
            }
            // SAFETY: `c` is a cursor object owned by this transaction's slot (taken out of it),
            // unbound or bound to this live transaction; binding (re)binds it to `dbi`. The
            // returned cursor borrows the transaction, so it does not outlive it.
            let rc = unsafe { sys::mdbx_cursor_bind(self.ptr.as_ptr(), c.as_ptr(), dbi) };
            if rc == sys::MDBX_SUCCESS {
                return Ok(RawCursor {
                    ptr: c,
                    cache: Some(cache),
                    kept: Some(&self.kept),
                    _txn: PhantomData,
                });
            }
            // SAFETY: the cursor object is owned here and bound to nothing usable.
            unsafe { sys::mdbx_cursor_close(c.as_ptr()) };
            return Err(Code(rc));
        }
        let mut cursor = self.cursor_cached(dbi, cache)?;
        cursor.kept = Some(&self.kept);
        Ok(cursor)
    }

    /// Lends the write transaction to cursors that write ([`LentTxn::cursor`]) for as long as
    /// it is borrowed.
    pub fn lend(&mut self) -> LentTxn<'_> {
        LentTxn {
            ptr: self.ptr,
            _txn: PhantomData,
        }
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

/// Page counts of the whole file ([`RawTxn::space`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawSpace {
    /// The upper bound, in pages.
    pub total_pages: u64,
    /// Pages the file holds now.
    pub backed_pages: u64,
    /// Pages up to the highest one ever used (the rest of the file is unused).
    pub allocated_pages: u64,
    /// Pages in the GC (free or waiting for readers), its own tree included.
    pub gc_pages: u64,
    /// GC pages a writer may reuse now.
    pub reclaimable_pages: u64,
}

/// A write transaction whose nested transaction runs in its place ([`RawTxn::nest`]). It is
/// not used until [`resume`](Self::resume) ends the nested one. Dropped without `resume`, it
/// aborts the parent only when it has no nested transaction left (else libmdbx would free the
/// nested one under its owner): otherwise it is leaked, writer lock included, which a caller
/// that always resumes never causes.
pub(crate) struct ParentTxn {
    parent: NonNull<sys::MDBX_txn>,
    child: NonNull<sys::MDBX_txn>,
}

impl ParentTxn {
    /// Ends the nested transaction `child` (the `RawTxn` that [`RawTxn::nest`] turned into it):
    /// commits it into the parent when `commit`, else aborts it; either way `child` stands for
    /// the parent again. A failed commit has discarded the nested transaction's writes. `child`
    /// must be that same transaction (`EINVAL` otherwise, and nothing is done).
    pub fn resume(self, child: &mut RawTxn, commit: bool) -> Result<(), Code> {
        if child.ptr != self.child {
            return Err(Code::EINVAL);
        }
        let this = std::mem::ManuallyDrop::new(self);
        // Bound to the nested transaction, the kept cursor would be left to libmdbx's end of it.
        child.kept.unbind();
        let nested = child.ptr.as_ptr();
        child.ptr = this.parent;
        if commit {
            // SAFETY: `nested` is the live nested txn begun by `nest`, owned by `child` until
            // now (it is no longer reachable through it); committing merges it into the parent
            // and frees it whether or not it succeeds.
            check(unsafe { sys::mdbx_txn_commit_ex(nested, ptr::null_mut()) })
        } else {
            // SAFETY: as above; aborting frees the nested txn and leaves the parent as it was
            // before `nest`.
            check(unsafe { sys::mdbx_txn_abort_ex(nested, ptr::null_mut()) })
        }
    }
}

impl Drop for ParentTxn {
    fn drop(&mut self) {
        // SAFETY: the parent is live (only `resume` or this drop end it); reading its flags has
        // no other requirement.
        let flags = unsafe { sys::mdbx_txn_flags(self.parent.as_ptr()) };
        if flags & sys::MDBX_TXN_HAS_CHILD as sys::MDBX_txn_flags_t == 0 {
            // SAFETY: no nested txn is left (it was ended through its owner, which no longer
            // holds it), so aborting the parent frees nothing anyone still uses.
            unsafe { sys::mdbx_txn_abort_ex(self.parent.as_ptr(), ptr::null_mut()) };
        }
    }
}

impl Drop for RawTxn {
    #[inline]
    fn drop(&mut self) {
        self.kept.close();
        // SAFETY: the handle is owned and live (commit forgets `self`); aborting a reset read
        // txn or an active txn of either kind frees it. Nothing borrowed from it outlives `self`.
        unsafe {
            sys::mdbx_txn_abort_ex(self.ptr.as_ptr(), ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &std::path::Path) -> Env {
        Env::open(dir, &EnvConfig::for_tests(Some(8), 1 << 26)).unwrap()
    }

    fn commit_one(env: &Env, key: &[u8]) {
        let mut w = env.begin(false).unwrap();
        let main = w.open_table(None, 0, false).unwrap().unwrap();
        w.put(main, key, b"v", 0).unwrap();
        w.commit().unwrap();
    }

    /// `Db::read` unparks a transaction it knows was parked with `resume_parked`, which skips
    /// `resume`'s look at the flags: it must bring a parked transaction to the latest snapshot
    /// as `resume` does, and refuse a reset one (`MDBX_BAD_TXN`) without harming it, so that
    /// `resume` still restarts it.
    #[test]
    fn resume_parked_moves_to_the_latest_snapshot_and_refuses_a_reset_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        commit_one(&env, b"a");
        let mut txn = env.begin(true).unwrap();
        let first = txn.id();

        txn.park_latest().unwrap();
        txn.resume_parked().unwrap();
        assert_eq!(txn.id(), first, "nothing committed: the same snapshot");

        txn.park_latest().unwrap();
        commit_one(&env, b"b");
        txn.resume_parked().unwrap();
        assert_eq!(txn.id(), first + 1, "a commit since: the latest snapshot");
        let main = txn.open_table(None, 0, false).unwrap().unwrap();
        assert_eq!(txn.get(main, b"b").unwrap(), Some(&b"v"[..]));

        txn.reset().unwrap();
        assert_eq!(txn.resume_parked(), Err(Code(sys::MDBX_BAD_TXN)));
        txn.resume().unwrap();
        assert_eq!(txn.id(), first + 1);
        assert_eq!(txn.get(main, b"a").unwrap(), Some(&b"v"[..]));
    }
}
