//! `SyncMode::NoMetaSync` kept crash-safe on libmdbx 0.14.4: [`Keeper`] holds a read
//! transaction on the newest snapshot whose meta page is on the disk, so that no write reuses
//! its pages before a newer meta page is durable.
//!
//! Why. Under `MDBX_NOMETASYNC` a commit flushes its data, then writes its meta page, signed
//! steady, without flushing it (the next commit's data flush or a sync does that). libmdbx's
//! GC treats the newest steady meta page as durable: the next write transaction may reuse the
//! pages the snapshot before it no longer needs, although after a power cut the disk may hold
//! only that older snapshot's meta page. If that transaction's data reaches the disk before the
//! newer meta page (the kernel and the disk write back dirty pages in any order between two
//! flushes), the older snapshot, the one the file falls back to, is overwritten. The
//! power-cut suite (`crates/faultfs/tests/powercut.rs`) showed it, `patches/nometasync-powercut.c`
//! reproduces it against raw libmdbx, and `patches/libmdbx-0.14.4-nometasync-gc.patch` fixes
//! it in libmdbx. The published crates build the registry's unpatched libmdbx, hence this.
//!
//! How. libmdbx never hands out pages a reader's snapshot still uses. At the start of every
//! write transaction (the writer lock held, so nothing commits meanwhile) the keeper finds the
//! newest snapshot that is durable — the newest meta page when nothing is unflushed, otherwise
//! the newest steady meta page older than the newest meta page, which the newest commit's data
//! flush made durable — and makes sure it holds a reader at or below it. It also starts a
//! reader on the latest snapshot, which the next write transaction will need. So it holds at
//! most two read transactions (two reader slots, added to `max_readers`), and moving them costs
//! a reset and a renew per write transaction. When it holds nothing old enough (the first
//! write after another process committed, or no reader slot free), it flushes instead
//! (`mdbx_env_sync_ex`), after which the latest snapshot is durable.
//!
//! The readers are active transactions, not parked ones: libmdbx ousts a parked reader when a
//! write needs its pages. The slow-reader callback lets the file grow rather than ask the
//! policy about them (`readers.rs`).
//!
//! At open, before any of this, the data file is flushed once (`fdatasync`): a meta page a
//! crashed process left unflushed in the page cache is then durable too (libmdbx takes the
//! newest meta page for flushed when it re-initialises the lock file).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mdbx_sys as sys;

use super::*;

/// Reader slots the keeper may hold.
pub(crate) const KEEPER_READERS: u64 = 2;

/// Holds the newest durable snapshot of a `NoMetaSync` environment; see the module docs.
pub(crate) struct Keeper {
    /// The held read transactions, oldest first (at most [`KEEPER_READERS`]).
    held: Mutex<Vec<RawTxn>>,
    /// The snapshots held, for the slow-reader callback (0: none).
    snapshots: [AtomicU64; KEEPER_READERS as usize],
}

impl Keeper {
    pub fn new() -> Keeper {
        Keeper {
            held: Mutex::new(Vec::new()),
            snapshots: [AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// Whether the keeper holds `snapshot` (the slow-reader callback asks).
    pub fn holds(&self, snapshot: u64) -> bool {
        snapshot != 0
            && self
                .snapshots
                .iter()
                .any(|s| s.load(Ordering::Relaxed) == snapshot)
    }

    /// At open: flushes the data file, then holds the latest snapshot.
    pub fn prime(&self, env: &Env) -> Result<(), Code> {
        env.flush_data_file()?;
        let mut held = self.lock();
        let txn = env.begin(true)?;
        held.push(txn);
        self.publish(&held);
        Ok(())
    }

    /// Called right after a write transaction with ID `write_txn` began, with the writer lock
    /// held: makes sure a reader holds the newest durable snapshot, and that one holds the
    /// latest (for the next write). On error the caller aborts the write transaction.
    pub fn before_write(&self, env: &Env, write_txn: u64) -> Result<(), Code> {
        let latest = write_txn.saturating_sub(1);
        let durable = durable_snapshot(env)?;
        let mut held = self.lock();
        // Keep the newest held snapshot at or below `durable`, drop older ones.
        let anchor = held.iter().rposition(|t| t.id() <= durable);
        let mut spare = Vec::new();
        match anchor {
            Some(i) => spare.extend(held.drain(..i)),
            None => {
                // Nothing old enough: make the latest snapshot durable instead. A snapshot
                // newer than `durable` is of no use then, except the latest itself.
                env.sync()?;
                let keep: Vec<RawTxn> = held.drain(..).collect();
                for t in keep {
                    if t.id() == latest {
                        held.push(t);
                    } else {
                        spare.push(t);
                    }
                }
            }
        }
        // Now hold the latest too (the anchor of the next write transaction).
        if held.last().is_none_or(|t| t.id() != latest) {
            let txn = match spare.pop() {
                Some(mut t) => t.reset().and_then(|()| t.renew()).map(|()| t),
                None => env.begin(true),
            };
            match txn {
                Ok(t) if t.id() == latest => held.push(t),
                // Another snapshot (cannot happen under the writer lock) or no reader slot
                // free: the next write transaction finds nothing to anchor on and flushes.
                Ok(_) | Err(_) => {}
            }
        }
        drop(spare); // aborted: their reader slots are free again
        self.publish(&held);
        Ok(())
    }

    /// Ends the held read transactions (before the environment closes).
    pub fn release(&self) {
        let mut held = self.lock();
        held.clear();
        self.publish(&held);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RawTxn>> {
        // A panic while the lock was held left the list as it was: still usable.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, held: &[RawTxn]) {
        for (i, slot) in self.snapshots.iter().enumerate() {
            slot.store(held.get(i).map_or(0, RawTxn::id), Ordering::Relaxed);
        }
    }
}

/// The newest snapshot whose meta page is durable and steady: the newest meta page when
/// nothing is unflushed, else the newest steady meta page older than the newest one (0: none).
fn durable_snapshot(env: &Env) -> Result<u64, Code> {
    // SAFETY: MDBX_envinfo is a plain C struct for which all-zero bytes are valid.
    let mut info: sys::MDBX_envinfo = unsafe { std::mem::zeroed() };
    // SAFETY: the env is open for the life of `env`; `info` is a properly sized out-parameter;
    // a null txn asks for the env-wide view (the caller holds the writer lock, so the meta
    // pages do not change meanwhile).
    check(unsafe {
        sys::mdbx_env_info_ex(
            env.ptr.as_ptr(),
            std::ptr::null(),
            &mut info,
            std::mem::size_of::<sys::MDBX_envinfo>(),
        )
    })?;
    let head = info.mi_recent_txnid;
    // libmdbx's signature: 0 none, 1 weak, anything above steady.
    let steady = |i: usize| info.mi_meta_sign[i] > 1;
    if info.mi_unsync_volume == 0 {
        let head_steady = (0..3).any(|i| info.mi_meta_txnid[i] == head && steady(i));
        if head_steady {
            return Ok(head);
        }
    }
    Ok((0..3)
        .filter(|&i| steady(i) && info.mi_meta_txnid[i] < head)
        .map(|i| info.mi_meta_txnid[i])
        .max()
        .unwrap_or(0))
}
