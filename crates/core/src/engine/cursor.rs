//! Cursors: read cursors (reused through `CursorCache`) and write cursors.

use std::marker::PhantomData;
use std::ptr::NonNull;

use mdbx_sys as sys;

use super::*;

/// A cursor over one table in a transaction it borrows shared. Closed on drop, or unbound and
/// returned to its [`CursorCache`].
pub(crate) struct RawCursor<'t> {
    pub(super) ptr: NonNull<sys::MDBX_cursor>,
    pub(super) cache: Option<&'t CursorCache>,
    pub(super) _txn: PhantomData<&'t RawTxn>,
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
