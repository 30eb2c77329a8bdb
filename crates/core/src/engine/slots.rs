//! Per-thread slots that park read transactions and cursor objects for reuse.

use std::ptr::{self, NonNull};

use mdbx_sys as sys;

use super::*;

/// One pointer slot per thread index, each on its own cache line: a thread that puts an object
/// back and takes it again in a loop touches no line another thread writes. A slot owns the
/// object whose pointer it holds; the swap in `take` hands it to exactly one taker. The owners
/// ([`TxnSlots`], [`CursorCache`]) free what is left on drop.
pub(crate) struct ThreadSlots<T> {
    slots: Box<[Slot<T>]>,
}

#[repr(align(64))]
struct Slot<T>(std::sync::atomic::AtomicPtr<T>);

/// This thread's index: 0, 1, 2, ... in the order threads first ask. A `const`-initialised
/// thread-local (no lazy-init state, no destructor), so the hot path is one thread-local load
/// and a compare; the first call of each thread takes the next number out of line.
#[inline]
fn thread_index() -> usize {
    use std::cell::Cell;
    thread_local! {
        static INDEX: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    let i = INDEX.get();
    if i != usize::MAX {
        i
    } else {
        assign_thread_index(&INDEX)
    }
}

#[cold]
#[inline(never)]
fn assign_thread_index(index: &'static std::thread::LocalKey<std::cell::Cell<usize>>) -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // Wraps only after `usize::MAX` threads; `MAX` itself is skipped (it means "unassigned").
    let mut i = NEXT.fetch_add(1, Ordering::Relaxed);
    if i == usize::MAX {
        i = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    index.set(i);
    i
}

impl<T> ThreadSlots<T> {
    pub(crate) fn new(count: usize) -> Self {
        ThreadSlots {
            slots: (0..count.max(1))
                .map(|_| Slot(std::sync::atomic::AtomicPtr::new(ptr::null_mut())))
                .collect(),
        }
    }

    #[inline]
    pub(crate) fn slot(&self) -> &std::sync::atomic::AtomicPtr<T> {
        let (i, n) = (thread_index(), self.slots.len());
        // No division while there are no more threads than slots (the common case).
        &self.slots[if i < n { i } else { i % n }].0
    }

    /// What this thread's slot holds, if anything.
    #[inline]
    pub(crate) fn take(&self) -> Option<NonNull<T>> {
        NonNull::new(
            self.slot()
                .swap(ptr::null_mut(), std::sync::atomic::Ordering::Acquire),
        )
    }

    /// What any slot holds.
    pub(crate) fn take_any(&self) -> Option<NonNull<T>> {
        self.slots.iter().find_map(|s| {
            if s.0.load(std::sync::atomic::Ordering::Relaxed).is_null() {
                return None;
            }
            NonNull::new(s.0.swap(ptr::null_mut(), std::sync::atomic::Ordering::Acquire))
        })
    }

    /// Moves `p` into this thread's slot; `false` (the caller keeps it) when the slot is taken.
    #[inline]
    pub(crate) fn put(&self, p: NonNull<T>) -> bool {
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
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = NonNull<T>> + '_ {
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
        self.slots.take().map(RawTxn::from_ptr)
    }

    /// Any parked transaction, from any thread's slot: reclaims what threads that ended (or
    /// moved on) left behind before a fresh one is begun.
    pub fn take_any(&self) -> Option<RawTxn> {
        self.slots.take_any().map(RawTxn::from_ptr)
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
            drop(RawTxn::from_ptr(ptr)); // aborts
        }
    }
}
