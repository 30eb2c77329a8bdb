//! Cursors: read cursors (reused through `CursorCache`) and write cursors.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use mdbx_sys as sys;

use super::*;

/// What every engine cursor does: move, handing the entry it lands on to a closure, and count
/// the values of the key under it. The typed cursor is written once over this (`crate::cursor`).
/// `pub` only so that the sealed `Mode` trait can name it; the engine module is private.
pub trait CursorNav {
    /// Moves the cursor with `op` (and the key/value it takes) and hands the entry it lands on
    /// to `f`; `Ok(None)` when there is no such position. The slices never outlive the call.
    #[inline(always)]
    fn get_with<R>(
        &mut self,
        op: op::Op,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        f: impl for<'a> FnOnce(&'a [u8], &'a [u8]) -> R,
    ) -> Result<Option<R>, Code> {
        self.visit(op, key, value, f)
    }

    /// [`get_with`](Self::get_with) for any [`Visit`]: the typed cursor's decode is one whose
    /// `visit` is forced inline.
    fn visit<V: Visit>(
        &mut self,
        op: op::Op,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        f: V,
    ) -> Result<Option<V::Out>, Code>;

    /// Number of values of the key under the cursor (1 outside a `dupsort` table).
    fn count(&self) -> Result<usize, Code>;
}

/// What a cursor move hands the entry it lands on to: a closure, or a type whose `visit` is
/// marked `#[inline(always)]`. A closure's body is the optimiser's to inline or not: with the
/// typed cursor's move inlined into a large caller's loop, the decode was left out of line
/// (`crates/bench/examples/path_costs.rs`, `cursor_next`: 302 instructions an entry walked,
/// 278 with the decode a forced-inline `Visit`).
pub trait Visit {
    /// What the visit returns.
    type Out;
    /// Visits the entry `(key, value)`; the slices do not outlive the call.
    fn visit(self, key: &[u8], value: &[u8]) -> Self::Out;
}

impl<R, F: for<'a> FnOnce(&'a [u8], &'a [u8]) -> R> Visit for F {
    type Out = R;
    #[inline(always)]
    fn visit(self, key: &[u8], value: &[u8]) -> R {
        self(key, value)
    }
}

/// A cursor over one table in a transaction it borrows shared. On drop it goes back, still
/// bound, to its transaction's [`KeptCursor`] slot when it came from there and the slot is
/// empty; otherwise it is unbound and returned to its [`CursorCache`], or closed.
pub struct RawCursor<'t> {
    pub(super) ptr: NonNull<sys::MDBX_cursor>,
    pub(super) cache: Option<&'t CursorCache>,
    /// The slot it goes back to.
    pub(super) kept: Option<&'t KeptCursor>,
    pub(super) _txn: PhantomData<&'t RawTxn>,
}

/// The cursor object a transaction keeps for its range reads (`RawTxn::kept_cursor`): empty,
/// or one cursor object owned by the transaction, either unbound or bound to that same
/// transaction (libmdbx unbinds it itself when the transaction's snapshot ends: reset,
/// refresh onto a newer one, commit, abort). A range read that finds it bound to its table
/// skips `mdbx_cursor_bind`'s work and the unbind at the end (≈ 180 instructions of a range
/// read of 10 entries).
///
/// The transaction empties it, giving the cursor unbound to a [`CursorCache`] or closing it,
/// before anything else may touch the transaction: before it is parked, reset, committed or
/// aborted (`RawTxn::release_kept_cursor`, and the transaction's own methods as a fallback),
/// and it unbinds it before a nested transaction begins or ends and before a table is dropped
/// or renamed, since libmdbx refuses to bind a cursor of a parent transaction in its child.
pub(crate) struct KeptCursor(Cell<Option<NonNull<sys::MDBX_cursor>>>);

// Every state of the slot is valid at every moment (empty, or holding a cursor bound to its
// transaction or to none), so a panic cannot leave it broken: a walk that unwinds gives its
// cursor back from its drop, and one taken out and lost is only not reused.
impl std::panic::UnwindSafe for KeptCursor {}
impl std::panic::RefUnwindSafe for KeptCursor {}

impl KeptCursor {
    /// An empty slot.
    #[inline]
    pub(super) fn empty() -> KeptCursor {
        KeptCursor(Cell::new(None))
    }

    /// The kept cursor, and whether it is bound to `dbi` (in the transaction that owns the
    /// slot: the only one it is ever bound to). `mdbx_cursor_dbi` answers for a bound cursor
    /// only, so one that libmdbx unbound when a snapshot ended reads as unbound.
    #[inline]
    pub(super) fn take(&self, dbi: Dbi) -> Option<(NonNull<sys::MDBX_cursor>, bool)> {
        let c = self.0.take()?;
        // SAFETY: `c` is a cursor object owned by the slot; reading its table has no other
        // requirement (an unbound one gives `UINT_MAX`).
        let bound = unsafe { sys::mdbx_cursor_dbi(c.as_ptr()) } == dbi;
        Some((c, bound))
    }

    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.0.get().is_none()
    }

    /// Keeps `c`, a cursor object bound to the transaction that owns the slot, or unbound.
    #[inline]
    fn keep(&self, c: NonNull<sys::MDBX_cursor>) {
        self.0.set(Some(c));
    }

    /// Unbinds the kept cursor (if any) and keeps it, unbound.
    pub(super) fn unbind(&self) {
        if let Some(c) = self.0.take() {
            // SAFETY: `c` is a cursor object owned by the slot, unbound or bound to the
            // transaction that owns the slot, which is alive (the slot is one of its fields) and
            // has no nested transaction (callers unbind before nesting, and the child's own
            // slot before it ends). Unbinding an unbound cursor does nothing.
            if unsafe { sys::mdbx_cursor_unbind(c.as_ptr()) } == sys::MDBX_SUCCESS {
                self.0.set(Some(c));
            } else {
                // SAFETY: owned here; a cursor that cannot be unbound is closed (freed).
                unsafe { sys::mdbx_cursor_close(c.as_ptr()) }
            }
        }
    }

    /// Unbinds the kept cursor (if any) and gives it to `cache`, or closes it when the
    /// cache's slot for this thread is taken.
    #[inline(never)]
    pub(super) fn release(&self, cache: &CursorCache) {
        self.unbind();
        if let Some(c) = self.0.take()
            && !cache.put(c)
        {
            // SAFETY: an unbound cursor object owned here.
            unsafe { sys::mdbx_cursor_close(c.as_ptr()) }
        }
    }

    /// Closes the kept cursor, if any: one load when there is none.
    #[inline(always)]
    pub(super) fn close(&self) {
        if !self.is_empty() {
            self.close_now();
        }
    }

    #[cold]
    #[inline(never)]
    fn close_now(&self) {
        if let Some(c) = self.0.take() {
            // SAFETY: a cursor object owned by the slot, unbound or bound to the live
            // transaction that owns the slot; closing unlinks it from that transaction and
            // frees it.
            unsafe { sys::mdbx_cursor_close(c.as_ptr()) }
        }
    }
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

    /// Number of values of the key under the cursor (1 outside a `dupsort` table).
    pub fn count(&self) -> Result<usize, Code> {
        let mut n = 0usize;
        // SAFETY: the cursor is open in a live txn; `n` is an out-parameter.
        check(unsafe { sys::mdbx_cursor_count(self.ptr.as_ptr(), &mut n) })?;
        Ok(n)
    }
}

impl CursorNav for RawCursor<'_> {
    #[inline(always)]
    fn visit<V: Visit>(
        &mut self,
        op: op::Op,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        f: V,
    ) -> Result<Option<V::Out>, Code> {
        Ok(self.get(op, key, value)?.map(|(k, v)| f.visit(k, v)))
    }

    #[inline]
    fn count(&self) -> Result<usize, Code> {
        RawCursor::count(self)
    }
}

impl Drop for RawCursor<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(kept) = self.kept
            && kept.is_empty()
        {
            // Still bound to the transaction that owns `kept`, which outlives this cursor
            // ('t); the transaction empties the slot before it ends.
            kept.keep(self.ptr);
            return;
        }
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
    pub(super) fn take(&self) -> Option<NonNull<sys::MDBX_cursor>> {
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
    pub(super) ptr: NonNull<sys::MDBX_cursor>,
    pub(super) _txn: PhantomData<&'t mut RawTxn>,
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
        self.get_at(op, None)
    }

    /// [`get`](Self::get) with a key for the ops that take one (`MDBX_SET_KEY`, ...).
    pub fn get_at(&mut self, op: op::Op, key: Option<&[u8]>) -> Result<Option<Pair<'_>>, Code> {
        let mut k = key.map_or(EMPTY, val);
        let mut v = EMPTY;
        // SAFETY: open cursor in a live txn; the input key points into a buffer alive for the
        // call; the result borrows `self` mutably, so no write can happen through this cursor
        // (or the exclusively borrowed txn) while it lives.
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

/// A write transaction lent to cursors that write: made from `&'t mut RawTxn`, so nothing else
/// uses the transaction for `'t`, and copied into every [`RawCursorMut`] opened from it, so
/// several of them (on one table or several) can read and write in turn.
#[derive(Clone, Copy)]
pub(crate) struct LentTxn<'t> {
    pub(super) ptr: NonNull<sys::MDBX_txn>,
    pub(super) _txn: PhantomData<&'t mut RawTxn>,
}

impl<'t> LentTxn<'t> {
    /// Opens a cursor on `dbi`, reusing a cursor object from `cache` when it holds one (as
    /// [`RawTxn::cursor_cached`] does); on drop it goes back there.
    pub fn cursor(self, dbi: Dbi, cache: &'t CursorCache) -> Result<RawCursorMut<'t>, Code> {
        if let Some(c) = cache.take() {
            // SAFETY: `c` is an unbound cursor object owned here (taken out of the cache); the
            // txn is live for 't, which the returned cursor does not outlive.
            let rc = unsafe { sys::mdbx_cursor_bind(self.ptr.as_ptr(), c.as_ptr(), dbi) };
            if rc == sys::MDBX_SUCCESS {
                return Ok(RawCursorMut {
                    ptr: c,
                    cache: Some(cache),
                    _txn: PhantomData,
                });
            }
            // SAFETY: the cursor object is owned here and bound to nothing usable.
            unsafe { sys::mdbx_cursor_close(c.as_ptr()) };
            return Err(Code(rc));
        }
        let mut c: *mut sys::MDBX_cursor = ptr::null_mut();
        // SAFETY: the txn is live for 't; `c` is an out-parameter.
        check(unsafe { sys::mdbx_cursor_open(self.ptr.as_ptr(), dbi, &mut c) })?;
        Ok(RawCursorMut {
            ptr: NonNull::new(c).ok_or(Code::EINVAL)?,
            cache: Some(cache),
            _txn: PhantomData,
        })
    }
}

/// A cursor that reads and writes in a [`LentTxn`]. Another cursor of the same transaction may
/// write between two calls on this one, so what a move finds is handed to a closure and never
/// outlives the call: no slice into the transaction's pages escapes. The closure must not write
/// to the transaction (through another cursor) while it runs.
pub struct RawCursorMut<'t> {
    ptr: NonNull<sys::MDBX_cursor>,
    cache: Option<&'t CursorCache>,
    _txn: PhantomData<&'t mut RawTxn>,
}

impl CursorNav for RawCursorMut<'_> {
    /// Moves the cursor and hands the entry it lands on to `f`; `Ok(None)` when there is none.
    #[inline(always)]
    fn visit<V: Visit>(
        &mut self,
        op: op::Op,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        f: V,
    ) -> Result<Option<V::Out>, Code> {
        let mut k = key.map_or(EMPTY, val);
        let mut v = value.map_or(EMPTY, val);
        // SAFETY: the cursor is open in a live txn lent to it for 't; the input key/value point
        // into buffers alive for the call; libmdbx overwrites `k`/`v` with pointers into the
        // txn's pages.
        let rc = unsafe { sys::mdbx_cursor_get(self.ptr.as_ptr(), &mut k, &mut v, op) };
        if check_found(rc)? {
            // SAFETY: a successful get: both point into pages that stay unchanged until the next
            // write to the txn. `f` cannot keep the slices (its result does not borrow them),
            // and the callers' visits (closures, the typed cursor's decode) only decode or copy
            // them, never write through another cursor of the txn while they hold them.
            let (k, v) = unsafe { (slice(&k), slice(&v)) };
            Ok(Some(f.visit(k, v)))
        } else {
            Ok(None)
        }
    }

    fn count(&self) -> Result<usize, Code> {
        let mut n = 0usize;
        // SAFETY: open cursor in a live txn; `n` is an out-parameter.
        check(unsafe { sys::mdbx_cursor_count(self.ptr.as_ptr(), &mut n) })?;
        Ok(n)
    }
}

impl RawCursorMut<'_> {
    /// `mdbx_cursor_put`: writes `(key, value)` with `flags`, leaving the cursor on it.
    #[inline]
    pub fn put(&mut self, key: &[u8], value: &[u8], flags: u32) -> Result<(), Code> {
        let k = val(key);
        let mut v = val(value);
        // SAFETY: open cursor in a live write txn lent to it; key/value buffers are alive for
        // the call and copied by libmdbx; no slice into the txn's pages is alive (reads hand
        // them only to closures that return before this can be called).
        check(unsafe { sys::mdbx_cursor_put(self.ptr.as_ptr(), &k, &mut v, flags) })
    }

    /// `mdbx_cursor_del`: deletes the entry under the cursor (`del::CURRENT`) or every value of
    /// its key (`del::ALLDUPS`). Afterwards `MDBX_NEXT` and `MDBX_GET_CURRENT` return the entry
    /// that followed it, `MDBX_PREV` the one before it.
    #[inline]
    pub fn del(&mut self, flags: u32) -> Result<(), Code> {
        // SAFETY: as for `put`.
        check(unsafe { sys::mdbx_cursor_del(self.ptr.as_ptr(), flags) })
    }
}

/// Writes of indexed tables through a write cursor ([`RawCursorMut`], [`RawWriteCursor`]): the
/// index tables are written in the cursor's own transaction (`mdbx_cursor_txn`), which does not
/// move the cursor; libmdbx keeps every cursor of the transaction valid across the writes.
macro_rules! txn_of_cursor {
    ($cursor:ident) => {
        impl $cursor<'_> {
            /// The table the cursor is on (`mdbx_cursor_dbi`).
            pub fn dbi(&self) -> Dbi {
                // SAFETY: the cursor is open and bound to a live txn.
                unsafe { sys::mdbx_cursor_dbi(self.ptr.as_ptr()) }
            }

            /// `mdbx_get` on table `dbi` of the cursor's transaction, the value copied out.
            pub fn txn_get(&self, dbi: Dbi, key: &[u8]) -> Result<Option<Vec<u8>>, Code> {
                let k = val(key);
                let mut v = EMPTY;
                // SAFETY: the cursor is bound to a live write txn lent to it for its lifetime;
                // `k` points into `key`, alive for the call; libmdbx points `v` into the txn's
                // pages, copied out below before anything can write (`&self`).
                let rc = unsafe {
                    sys::mdbx_get(sys::mdbx_cursor_txn(self.ptr.as_ptr()), dbi, &k, &mut v)
                };
                if check_found(rc)? {
                    // SAFETY: a successful get: `v` points at `iov_len` bytes of the txn's
                    // pages, valid until the txn writes, which `&self` rules out until the copy.
                    Ok(Some(unsafe { slice(&v) }.to_vec()))
                } else {
                    Ok(None)
                }
            }

            /// The first value of `key` in the dupsort table `dbi` of the cursor's transaction
            /// that is `>= value` (`mdbx_get_equal_or_great`), copied out; `None` when `key`
            /// has none (a greater key is not a value of `key`).
            pub fn txn_get_dup_ge(
                &self,
                dbi: Dbi,
                key: &[u8],
                value: &[u8],
            ) -> Result<Option<Vec<u8>>, Code> {
                let mut k = val(key);
                let mut v = val(value);
                // SAFETY: as for `txn_get`; libmdbx overwrites `k` and `v` with pointers into
                // the txn's pages, read and copied out below before anything can write.
                let rc = unsafe {
                    sys::mdbx_get_equal_or_great(
                        sys::mdbx_cursor_txn(self.ptr.as_ptr()),
                        dbi,
                        &mut k,
                        &mut v,
                    )
                };
                if rc == sys::MDBX_RESULT_TRUE || check_found(rc)? {
                    // SAFETY: a successful search: both point at bytes of the txn's pages,
                    // valid until the txn writes, which `&self` rules out until the copy.
                    let (found, value) = unsafe { (slice(&k), slice(&v)) };
                    Ok((found == key).then(|| value.to_vec()))
                } else {
                    Ok(None)
                }
            }

            /// `mdbx_put` on table `dbi` of the cursor's transaction.
            pub fn txn_put(
                &mut self,
                dbi: Dbi,
                key: &[u8],
                value: &[u8],
                flags: u32,
            ) -> Result<(), Code> {
                let k = val(key);
                let mut v = val(value);
                // SAFETY: the cursor's txn is a live write txn lent to it, and `&mut self`
                // means no slice read through this cursor is alive; key and value are caller
                // buffers alive for the call, copied by libmdbx.
                check(unsafe {
                    sys::mdbx_put(
                        sys::mdbx_cursor_txn(self.ptr.as_ptr()),
                        dbi,
                        &k,
                        &mut v,
                        flags,
                    )
                })
            }

            /// `mdbx_del` on table `dbi` of the cursor's transaction: the pair `(key, value)`,
            /// or every value of `key` when `value` is `None`. Returns whether anything was
            /// there.
            pub fn txn_del(
                &mut self,
                dbi: Dbi,
                key: &[u8],
                value: Option<&[u8]>,
            ) -> Result<bool, Code> {
                let k = val(key);
                let v = value.map(val);
                // SAFETY: as for `txn_put`; a null data pointer deletes every value of the key.
                let rc = unsafe {
                    sys::mdbx_del(
                        sys::mdbx_cursor_txn(self.ptr.as_ptr()),
                        dbi,
                        &k,
                        v.as_ref().map_or(ptr::null(), |v| v as *const _),
                    )
                };
                check_found(rc)
            }
        }
    };
}

txn_of_cursor!(RawCursorMut);
txn_of_cursor!(RawWriteCursor);

impl Drop for RawCursorMut<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.cache {
            // SAFETY: the cursor is owned and bound to a txn that is still alive (lent for 't);
            // unbinding detaches it, after which it belongs to no txn.
            if unsafe { sys::mdbx_cursor_unbind(self.ptr.as_ptr()) } == sys::MDBX_SUCCESS
                && cache.put(self.ptr)
            {
                return;
            }
        }
        // SAFETY: the cursor is owned and open; its txn, if any, is still alive.
        unsafe { sys::mdbx_cursor_close(self.ptr.as_ptr()) }
    }
}
