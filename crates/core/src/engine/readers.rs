//! Long readers: read transactions that may be cut while no call is using them
//! ([`CutTable`], [`CuttableTxn`]), and libmdbx's handle-slow-readers callback
//! (`mdbx_env_set_hsr`), through which a write that would otherwise grow the file cuts them.
//!
//! A cuttable transaction is one whose owner never lends out bytes of its snapshot beyond one
//! call ([`CuttableTxn::enter`] returns a guard that borrowing slices cannot outlive). Each slot of
//! the table holds a small state machine shared by the owner and a cutter (the writer thread
//! inside the callback):
//!
//! ```text
//! FREE --register--> IDLE --enter--> BUSY --leave--> IDLE
//!                     |                |
//!                     |                +--cut by its owner--> EXPIRED
//!                     +--CAS by a cutter--> CUTTING --reset--> CUT
//! IDLE / CUT / EXPIRED --unregister--> FREE      (waits while CUTTING)
//! IDLE --pin--> BUSY (pinned) --unregister--> FREE
//! ```
//!
//! Only the holder of `BUSY` (the owner) or `CUTTING` (a cutter) touches the transaction, so the
//! two never use it at once, and a cut happens only between calls, when no slice into the
//! snapshot is alive. An owner that lends slices beyond a call ([`CuttableTxn::pin`], the
//! borrowed reads of an owned transaction) keeps the slot `BUSY` until it drops the transaction:
//! from then on it is never cut, as a borrowed `Tx` never is.

use std::ffi::{c_int, c_uint};
use std::ops::Deref;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use crossbeam_queue::ArrayQueue;
use mdbx_sys as sys;

use super::*;

const FREE: u32 = 0;
const IDLE: u32 = 1;
const BUSY: u32 = 2;
const CUTTING: u32 = 3;
/// Cut by a writer's slow-reader callback.
const CUT: u32 = 4;
/// Cut by its owner at a call, for its age.
const EXPIRED: u32 = 5;

#[repr(align(64))]
struct CutSlot {
    state: AtomicU32,
    /// The registered transaction; read by a cutter only after its CAS to `CUTTING` succeeded
    /// (which pairs with the `Release` store of `IDLE` at registration).
    txn: AtomicPtr<sys::MDBX_txn>,
    snapshot: AtomicU64,
    started_ms: AtomicU64,
}

/// The registry of cuttable read transactions of one environment: one slot per reader slot
/// (each registered transaction holds a reader slot, so it never runs out before libmdbx does),
/// handed out through a lock-free free list.
pub(crate) struct CutTable {
    slots: Box<[CutSlot]>,
    free: ArrayQueue<u32>,
    /// A registered transaction this old (coarse ms) cuts itself at its next call; `u64::MAX`:
    /// never.
    max_age_ms: u64,
}

/// Why [`CuttableTxn::enter`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The transaction was cut, by a writer's slow-reader callback (`by_writer`) or at a call
    /// for its age: its snapshot is released.
    Cut { by_writer: bool },
    /// A call is already using it (re-entrant use); nothing was done.
    Busy,
}

/// What the registry knows about this process's cuttable transactions on one snapshot.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Survey {
    /// How many read the snapshot (idle or in a call).
    pub count: usize,
    /// When the oldest of them began (coarse clock, ms).
    pub oldest_start_ms: Option<u64>,
}

impl CutTable {
    pub fn new(slots: usize, max_age_ms: u64) -> Arc<Self> {
        let slots = slots.clamp(1, 1 << 16);
        let free = ArrayQueue::new(slots);
        for i in 0..slots {
            let _ = free.push(i as u32);
        }
        Arc::new(CutTable {
            slots: (0..slots)
                .map(|_| CutSlot {
                    state: AtomicU32::new(FREE),
                    txn: AtomicPtr::new(std::ptr::null_mut()),
                    snapshot: AtomicU64::new(0),
                    started_ms: AtomicU64::new(0),
                })
                .collect(),
            free,
            max_age_ms,
        })
    }

    /// The age (ms) after which a registered transaction cuts itself; `u64::MAX`: never.
    pub fn max_age_ms(&self) -> u64 {
        self.max_age_ms
    }

    /// Registers an active read transaction begun at `started_ms`; gives it back when every
    /// slot is taken (it then simply cannot be cut).
    pub fn register(self: &Arc<Self>, txn: RawTxn, started_ms: u64) -> Result<CuttableTxn, RawTxn> {
        let Some(index) = self.free.pop() else {
            return Err(txn);
        };
        let slot = &self.slots[index as usize];
        slot.txn.store(txn.ptr.as_ptr(), Ordering::Relaxed);
        slot.snapshot.store(txn.id(), Ordering::Relaxed);
        slot.started_ms.store(started_ms, Ordering::Relaxed);
        // Publishes the fields above to a cutter's Acquire CAS.
        slot.state.store(IDLE, Ordering::Release);
        Ok(CuttableTxn {
            txn: std::mem::ManuallyDrop::new(txn),
            table: Arc::clone(self),
            index,
            pinned: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Counts the registered transactions reading `snapshot`.
    pub fn survey(&self, snapshot: u64) -> Survey {
        let mut survey = Survey::default();
        for slot in self.slots.iter() {
            let state = slot.state.load(Ordering::Acquire);
            if state == IDLE || state == BUSY {
                if slot.snapshot.load(Ordering::Relaxed) != snapshot {
                    continue;
                }
                survey.count += 1;
                let started = slot.started_ms.load(Ordering::Relaxed);
                survey.oldest_start_ms =
                    Some(survey.oldest_start_ms.map_or(started, |o| o.min(started)));
            }
        }
        survey
    }

    /// Cuts every idle registered transaction reading `snapshot` that began at or before
    /// `begun_by_ms`: resets it (releasing its snapshot and reader-slot pin) and marks it cut,
    /// so its owner's next call is refused. Returns how many were cut. Transactions in a call
    /// are left alone.
    pub fn cut(&self, snapshot: u64, begun_by_ms: u64) -> usize {
        let mut cut = 0;
        for slot in self.slots.iter() {
            if slot.state.load(Ordering::Relaxed) != IDLE
                || slot.snapshot.load(Ordering::Relaxed) != snapshot
            {
                continue;
            }
            if slot
                .state
                .compare_exchange(IDLE, CUTTING, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            // The slot may have been re-registered between the loads above and the CAS: check
            // again now that the fields are stable (no one else writes them while CUTTING).
            if slot.snapshot.load(Ordering::Relaxed) != snapshot
                || slot.started_ms.load(Ordering::Relaxed) > begun_by_ms
            {
                slot.state.store(IDLE, Ordering::Release);
                continue;
            }
            let txn = slot.txn.load(Ordering::Relaxed);
            // SAFETY: the slot is CUTTING, which this thread set from IDLE: the owner is in no
            // call (no slice, cursor or other use of the transaction is alive: it uses it only
            // while BUSY) and waits in `unregister` before it can free it, so the transaction is
            // live and used by this thread alone. The environment is opened with
            // MDBX_NOSTICKYTHREADS (and libmdbx built without owner checks), so any thread may
            // reset a read transaction; resetting releases its reader slot without any lock.
            let _ = unsafe { sys::mdbx_txn_reset(txn) };
            slot.state.store(CUT, Ordering::Release);
            cut += 1;
        }
        cut
    }
}

/// A read transaction registered in a [`CutTable`]: used through [`enter`](Self::enter), cut by
/// its owner ([`Using::cut`]) or by a writer's slow-reader callback between calls. Unregisters
/// (waiting for a cut in progress) and aborts the transaction on drop, or gives it back with
/// [`into_txn`](Self::into_txn).
pub(crate) struct CuttableTxn {
    txn: std::mem::ManuallyDrop<RawTxn>,
    table: Arc<CutTable>,
    index: u32,
    /// Pinned by its owner ([`pin`](Self::pin)): the slot stays `BUSY` until the transaction is
    /// unregistered, so slices borrowed from it may outlive a call. Only its owner reads or
    /// writes it (an atomic so as not to change the type's auto traits; relaxed suffices).
    pinned: std::sync::atomic::AtomicBool,
}

impl CuttableTxn {
    fn slot(&self) -> &CutSlot {
        &self.table.slots[self.index as usize]
    }

    /// The snapshot (transaction ID) it was registered on.
    pub fn snapshot(&self) -> u64 {
        self.slot().snapshot.load(Ordering::Relaxed)
    }

    /// Begins a call: until the guard is dropped no cutter touches the transaction. A
    /// transaction older than the table's maximum age is cut here and refused.
    #[inline]
    pub fn enter(&self) -> Result<Using<'_>, Refused> {
        if self.pinned.load(Ordering::Relaxed) {
            // The pin holds the slot BUSY: a call inside it neither takes nor gives it back.
            return Ok(Using {
                owner: self,
                leave: false,
            });
        }
        let slot = self.slot();
        match slot
            .state
            .compare_exchange(IDLE, BUSY, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {
                let using = Using {
                    owner: self,
                    leave: true,
                };
                let max_age = self.table.max_age_ms;
                if max_age != u64::MAX
                    && coarse_now_ms().saturating_sub(slot.started_ms.load(Ordering::Relaxed))
                        >= max_age
                {
                    using.cut();
                    return Err(Refused::Cut { by_writer: false });
                }
                Ok(using)
            }
            Err(BUSY) => Err(Refused::Busy),
            Err(EXPIRED) => Err(Refused::Cut { by_writer: false }),
            Err(_) => {
                // CUTTING finishes as CUT within a reset.
                while slot.state.load(Ordering::Acquire) == CUTTING {
                    std::hint::spin_loop();
                }
                Err(Refused::Cut { by_writer: true })
            }
        }
    }

    /// Enters a call that lasts until the transaction is unregistered (dropped or given back),
    /// and lends the transaction for as long as `self` is borrowed: no cutter touches it and it
    /// is not cut for its age from now on, so slices borrowed from it may outlive a call (the
    /// borrowed reads of an owned transaction). Pinning a pinned transaction lends it again.
    /// Refused, as [`enter`](Self::enter), when it was cut before.
    pub fn pin(&self) -> Result<&RawTxn, Refused> {
        if !self.pinned.load(Ordering::Relaxed) {
            let using = self.enter()?;
            // Keep the slot BUSY: the guard's drop would set it IDLE.
            std::mem::forget(using);
            self.pinned.store(true, Ordering::Relaxed);
        }
        Ok(&self.txn)
    }

    /// Whether it was cut (by its owner or a writer).
    pub fn is_cut(&self) -> bool {
        matches!(
            self.slot().state.load(Ordering::Acquire),
            CUT | CUTTING | EXPIRED
        )
    }

    /// Marks the slot free, waiting for a cut in progress; returns whether it was cut.
    fn unregister(&self) -> bool {
        let slot = self.slot();
        let was_cut = loop {
            match slot.state.load(Ordering::Acquire) {
                CUTTING => std::hint::spin_loop(),
                state => {
                    if slot
                        .state
                        .compare_exchange(state, FREE, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                    {
                        break state == CUT || state == EXPIRED;
                    }
                }
            }
        };
        let _ = self.table.free.push(self.index);
        was_cut
    }

    /// Unregisters and gives the transaction back (reset when it was cut).
    pub fn into_txn(self) -> RawTxn {
        self.unregister();
        let mut this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again (ManuallyDrop), so the transaction is
        // moved out exactly once and the `Arc` is released below.
        let txn = unsafe { std::mem::ManuallyDrop::take(&mut this.txn) };
        // SAFETY: as above: the table handle is moved out once and dropped here.
        drop(unsafe { std::ptr::read(&this.table) });
        txn
    }
}

impl Drop for CuttableTxn {
    fn drop(&mut self) {
        self.unregister();
        // SAFETY: the slot is FREE (no cutter will touch the transaction again) and `txn` is not
        // used after this; dropping aborts it.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.txn) }
    }
}

/// A call in progress on a [`CuttableTxn`]: derefs to the transaction; everything borrowed from
/// it ends with the guard. Dropping it ends the call.
pub(crate) struct Using<'a> {
    owner: &'a CuttableTxn,
    /// Whether dropping it ends the call (sets the slot IDLE); not for a call inside a pin.
    leave: bool,
}

impl Using<'_> {
    /// Cuts the transaction from its own call (it outlived its allowed age): resets it and marks
    /// it cut, so this and every later call is refused.
    pub fn cut(self) {
        let owner = self.owner;
        std::mem::forget(self);
        // SAFETY: the slot is BUSY, held by this call, so no cutter touches the transaction;
        // the guard is consumed, so nothing borrowed from it is alive, and `enter` refuses a
        // nested call, so no other guard exists.
        let _ = unsafe { sys::mdbx_txn_reset(owner.txn.ptr.as_ptr()) };
        owner.slot().state.store(EXPIRED, Ordering::Release);
    }
}

impl Deref for Using<'_> {
    type Target = RawTxn;
    #[inline]
    fn deref(&self) -> &RawTxn {
        &self.owner.txn
    }
}

impl Drop for Using<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.leave {
            self.owner.slot().state.store(IDLE, Ordering::Release);
        }
    }
}

/// The reader a write is held up by, as libmdbx's slow-reader callback reports it, with what
/// this process's registry knows about it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Laggard {
    pub pid: u32,
    pub this_process: bool,
    pub thread: u64,
    pub snapshot: u64,
    pub lag: u64,
    pub retained_bytes: u64,
    pub retry: u32,
    /// This process's cuttable transactions on that snapshot.
    pub cuttable: Survey,
    pub now_ms: u64,
}

/// What the slow-reader policy decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Let libmdbx grow the file (or fail the write with `MDBX_MAP_FULL` at the upper bound).
    Grow,
    /// The policy waited or acted; libmdbx looks at the reader table again.
    Retry,
    /// Cut this process's idle cuttable transactions on the snapshot that began at or before
    /// this time (coarse ms).
    Cut { begun_by_ms: u64 },
}

/// A slow-reader policy: called in the writing thread, inside the write, with libmdbx's writer
/// lock held.
pub(crate) type Policy = Arc<dyn Fn(&Laggard) -> Verdict + Send + Sync>;

/// What the callback reaches through the environment's user context.
pub(crate) struct SlowReaderHook {
    pub table: Arc<CutTable>,
    pub policy: Policy,
}

// The policy runs inside `catch_unwind` (below) and sees only a copy of the reader's figures, so
// a panic in it leaves nothing half-changed: the environment holding the hook stays unwind safe.
impl std::panic::UnwindSafe for SlowReaderHook {}
impl std::panic::RefUnwindSafe for SlowReaderHook {}

thread_local! {
    /// Whether this thread is inside `mdbx_txn_commit_ex` ([`Committing`]).
    static COMMITTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as committing a write transaction until dropped: the slow-reader
/// callback then tells libmdbx's GC-update reservations from allocations that do not fit in
/// the file ([`handle_slow_reader`]). Held around the commit of every top-level write
/// transaction (a nested one merges into its parent and updates no GC).
pub(crate) struct Committing(bool);

impl Committing {
    #[inline]
    pub fn enter() -> Self {
        Committing(COMMITTING.with(|c| c.replace(true)))
    }
}

impl Drop for Committing {
    #[inline]
    fn drop(&mut self) {
        COMMITTING.with(|c| c.set(self.0));
    }
}

/// Bytes between the write transaction's last used page and the end of the file at its current
/// size (`mdbx_txn_info`: `txn_space_limit_soft - txn_space_used`); `None` when libmdbx cannot
/// say.
fn room_in_file(txn: *const sys::MDBX_txn) -> Option<u64> {
    if txn.is_null() {
        return None;
    }
    // SAFETY: MDBX_txn_info is a plain C struct for which all-zero bytes are valid.
    let mut info: sys::MDBX_txn_info = unsafe { std::mem::zeroed() };
    // SAFETY: `txn` is the write transaction libmdbx passed to the slow-reader callback, live
    // and used by this thread for the whole call; for a write transaction `mdbx_txn_info`
    // without the reader-table scan only reads the transaction's own geometry and counters.
    let rc = unsafe { sys::mdbx_txn_info(txn, &mut info, false) };
    (rc == sys::MDBX_SUCCESS).then(|| {
        info.txn_space_limit_soft
            .saturating_sub(info.txn_space_used)
    })
}

/// libmdbx's handle-slow-readers callback (`MDBX_hsr_func`): asks the policy what to do about the
/// reader holding up a write that would otherwise grow the file, and does it.
///
/// mdbx.h promises that the callback "will be called when there is not enough space in the
/// database (i.e. before increasing the database size or before MDBX_MAP_FULL error)". libmdbx
/// 0.14.4 calls it from two places in its page allocator (`gc_alloc_ex`, mdbx.c): when an
/// allocation does not fit in the file ("Avoid kick lagging reader(s) if is enough unallocated
/// space at the end of database file" guards that call), and, with that guard skipped, when a
/// commit reserves pages for updating the GC (`ALLOC_RESERVE`, `gc_prepare_stockpile`): there
/// it asks on every commit a reader lags behind, however much room the file has, and when the
/// reservation fails the commit takes unused pages at the end of the file instead. So during a
/// commit ([`Committing`]) the policy is asked only when the file has no unused page left: with
/// `MDBX_ENABLE_BIGFOOT` (on in this build) every page the GC update allocates is a single page,
/// so while one is left nothing in the commit grows the file. Outside a commit every call is
/// an allocation that does not fit.
///
/// Returns -1 (grow or fail; mdbx.h: "The callback was unable to solve the problem and agreed
/// on MDBX_MAP_FULL error; libmdbx should increase the database size or return MDBX_MAP_FULL
/// error"), 0 (something changed: libmdbx rescans the reader table), never a value that tells
/// libmdbx to clear a slot itself. Never unwinds.
///
/// # Safety
///
/// libmdbx calls it with an environment whose user context is a live `SlowReaderHook`
/// (`Env::install_slow_reader_hook`).
pub(crate) unsafe extern "C" fn handle_slow_reader(
    env: *const sys::MDBX_env,
    txn: *const sys::MDBX_txn,
    pid: sys::mdbx_pid_t,
    tid: sys::mdbx_tid_t,
    laggard: u64,
    gap: c_uint,
    space: usize,
    retry: c_int,
) -> c_int {
    if retry < 0 {
        return 0; // the end-of-loop notice; its result is ignored
    }
    if COMMITTING.with(|c| c.get()) && room_in_file(txn).is_some_and(|room| room > 0) {
        return -1; // a GC-update reservation with room in the file: nothing would grow
    }
    // SAFETY: the user context was set to a `SlowReaderHook` owned by the `Env`, which closes
    // the environment (so no write, so no call of this) before freeing it.
    let hook = unsafe { &*(sys::mdbx_env_get_userctx(env) as *const SlowReaderHook) };
    let this_process = pid as u32 == std::process::id();
    // `pthread_t` is `u64` on 64-bit Linux but not everywhere.
    #[allow(clippy::unnecessary_cast)]
    let thread = tid as u64;
    let found = Laggard {
        pid: pid as u32,
        this_process,
        thread,
        snapshot: laggard,
        lag: u64::from(gap),
        retained_bytes: space as u64,
        retry: retry as u32,
        cuttable: if this_process {
            hook.table.survey(laggard)
        } else {
            Survey::default()
        },
        now_ms: coarse_now_ms(),
    };
    let verdict = catch_unwind(AssertUnwindSafe(|| (hook.policy)(&found))).unwrap_or_else(|_| {
        tracing::error!(
            target: "tabula",
            "the slow-reader callback panicked; the file grows instead (Options::on_slow_reader)"
        );
        Verdict::Grow
    });
    match verdict {
        Verdict::Grow => -1,
        Verdict::Retry => 0,
        Verdict::Cut { begun_by_ms } => {
            if this_process && hook.table.cut(laggard, begun_by_ms) > 0 {
                0
            } else {
                -1 // nothing was cut: rescanning would find the same reader forever
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &std::path::Path) -> Env {
        Env::open(dir, &EnvConfig::for_tests(Some(8), 1 << 26)).unwrap()
    }

    /// A cutter leaves a transaction in a call alone, cuts it once the call ended, and its
    /// owner is refused from then on; the slot is reused after the owner lets go.
    #[test]
    fn a_transaction_is_cut_only_between_calls() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        let table = CutTable::new(2, u64::MAX);
        let txn = env.begin(true).unwrap();
        let snapshot = txn.id();
        let owned = table.register(txn, coarse_now_ms()).map_err(drop).unwrap();
        assert_eq!(table.survey(snapshot).count, 1);
        {
            let using = owned.enter().unwrap();
            assert_eq!(owned.enter().err(), Some(Refused::Busy));
            assert_eq!(table.cut(snapshot, u64::MAX), 0, "cut during a call");
            assert_eq!(using.id(), snapshot);
        }
        assert_eq!(table.cut(snapshot + 1, u64::MAX), 0, "another snapshot");
        assert_eq!(table.cut(snapshot, 0), 0, "began after the cutoff");
        assert!(!owned.is_cut());
        assert_eq!(table.cut(snapshot, u64::MAX), 1);
        assert!(owned.is_cut());
        assert_eq!(owned.enter().err(), Some(Refused::Cut { by_writer: true }));
        assert_eq!(table.cut(snapshot, u64::MAX), 0, "already cut");
        // Given back, reset: it renews on the latest snapshot.
        let mut txn = owned.into_txn();
        txn.renew().unwrap();
        assert_eq!(txn.id(), snapshot);
        assert_eq!(table.free.len(), 2);
    }

    #[test]
    fn a_transaction_past_its_age_cuts_itself_at_its_next_call() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        let table = CutTable::new(1, 5);
        let owned = table
            .register(env.begin(true).unwrap(), coarse_now_ms())
            .map_err(drop)
            .unwrap();
        // Every slot taken: the next one is handed back, not registered.
        assert!(table.register(env.begin(true).unwrap(), 0).is_err());
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(owned.enter().err(), Some(Refused::Cut { by_writer: false }));
        assert_eq!(owned.enter().err(), Some(Refused::Cut { by_writer: false }));
        drop(owned);
        assert_eq!(table.free.len(), 1);
    }
}
