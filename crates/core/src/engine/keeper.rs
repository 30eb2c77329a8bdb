//! `SyncMode::NoMetaSync` and `SafeNoSync` kept crash-safe on libmdbx 0.14.4: [`Keeper`] holds a
//! read transaction on the newest snapshot whose steady meta page is on the disk, so that no
//! write reuses its pages before a newer meta page is durable.
//!
//! Why. libmdbx's GC hands out the pages that the newest steady meta page's snapshot no longer
//! uses, taking that meta page for durable. Two things write a steady meta page without
//! flushing it: a `MDBX_NOMETASYNC` commit (it flushes its data, then writes its meta page; the
//! next commit's data flush makes it durable), and the checkpoint libmdbx's GC makes when it
//! runs dry (`gc_alloc_ex`, under `MDBX_SAFE_NOSYNC`, which implies `MDBX_NOMETASYNC`). Until
//! that meta page is on the disk a power cut falls back to the previous steady one, whose
//! pages the next write may already have overwritten: the kernel and the disk write dirty
//! pages back in any order between two flushes. And libmdbx keeps only the newest steady meta
//! page out of the way of the next meta page written, so two weak commits after an unflushed
//! steady one may write over the durable one's slot. The power-cut suite
//! (`crates/faultfs/tests/powercut.rs`) showed both, `nometasync-powercut.c` reproduces the
//! first against raw libmdbx, and `libmdbx-0.14.4-nometasync-gc.patch` fixes libmdbx (both in
//! `crates/mdbx-sys/patches/`). This was written while Tabula built the registry's unpatched
//! libmdbx; its own build now applies the patch, and these measures stay until the power-cut
//! suite has shown them redundant on it and their cost is measured.
//!
//! How. libmdbx never hands out pages a reader's snapshot still uses. The keeper knows the
//! newest durable snapshot: everything after a flush (at open, `mdbx_env_sync_ex`, or when
//! libmdbx reports nothing unflushed); under `NoMetaSync` also the newest steady meta page
//! before the newest one, which that commit's data flush made durable. At the start of every
//! write transaction (the writer lock held, so nothing commits meanwhile) it makes sure it
//! holds a reader at or below that snapshot, and one on the latest snapshot (the next write's
//! anchor): at most two read transactions, moved by a reset and a renew per write. When it
//! holds nothing old enough (another process wrote, no reader slot was free), or a steady
//! meta page it cannot vouch for exists (libmdbx's own checkpoint), it flushes first; so
//! before a bulk load's weak commits too ([`Keeper::before_weak_commit`]).
//!
//! The readers are active transactions, not parked ones: libmdbx ousts a parked reader when a
//! write needs its pages. The slow-reader callback never cuts them nor asks the policy; where
//! libmdbx's own checkpoint just made the keeper the obstacle, it flushes that checkpoint and
//! lets the older snapshot go, so the write reuses the pages ([`Keeper::on_laggard`]).
//! `Db::readers` leaves the keeper's slots out.
//!
//! At open the data file is flushed once (`fdatasync`): a new file's meta pages, which libmdbx
//! writes without a flush, and a meta page a crashed process left in the page cache are then
//! durable (libmdbx takes the newest meta page for flushed when it re-initialises the lock
//! file).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use mdbx_sys as sys;

use super::*;

/// Reader slots the keeper may hold.
pub(crate) const KEEPER_READERS: u64 = 2;

/// Holds the newest durable snapshot of a `NoMetaSync` or `SafeNoSync` environment; see the
/// module docs.
pub(crate) struct Keeper {
    /// Whether every non-weak commit flushes its data, and with it every meta page written
    /// before (`NoMetaSync`); not under `SafeNoSync`.
    commits_flush: bool,
    state: Mutex<State>,
    /// The snapshots held, for the slow-reader callback (0: none).
    snapshots: [AtomicU64; KEEPER_READERS as usize],
}

struct State {
    /// The held read transactions, oldest first (at most [`KEEPER_READERS`]).
    held: Vec<RawTxn>,
    /// The newest snapshot whose steady meta page is known to be on the disk.
    durable: u64,
}

/// The meta pages as libmdbx's environment info shows them.
struct Metas {
    /// The newest meta page's transaction.
    head: u64,
    /// The transactions of the steady meta pages.
    steady: [Option<u64>; 3],
    /// Something committed is not flushed yet (pages, or the newest meta page).
    unsynced: bool,
}

impl Metas {
    fn read(env: &Env) -> Result<Metas, Code> {
        Metas::read_raw(env.ptr.as_ptr())
    }

    /// [`read`](Self::read) for the environment behind `env`, which must be open (the
    /// slow-reader callback has only the pointer).
    fn read_raw(env: *const sys::MDBX_env) -> Result<Metas, Code> {
        // SAFETY: MDBX_envinfo is a plain C struct for which all-zero bytes are valid.
        let mut info: sys::MDBX_envinfo = unsafe { std::mem::zeroed() };
        // SAFETY: the callers pass an open env; `info` is a properly sized out-parameter; a
        // null txn asks for the env-wide view.
        check(unsafe {
            sys::mdbx_env_info_ex(
                env,
                std::ptr::null(),
                &mut info,
                std::mem::size_of::<sys::MDBX_envinfo>(),
            )
        })?;
        // libmdbx's meta signature: 0 none, 1 weak, anything above steady.
        let steady = |i: usize| (info.mi_meta_sign[i] > 1).then_some(info.mi_meta_txnid[i]);
        Ok(Metas {
            head: info.mi_recent_txnid,
            steady: [steady(0), steady(1), steady(2)],
            unsynced: info.mi_unsync_volume != 0,
        })
    }

    /// The newest steady meta page's transaction (0: none).
    fn newest_steady(&self) -> u64 {
        self.steady.iter().flatten().copied().max().unwrap_or(0)
    }

    /// The newest steady meta page's transaction older than the newest meta page (0: none).
    fn newest_steady_below_head(&self) -> u64 {
        let head = self.head;
        self.steady
            .iter()
            .flatten()
            .copied()
            .filter(|&t| t < head)
            .max()
            .unwrap_or(0)
    }
}

impl Keeper {
    /// `commits_flush`: `NoMetaSync` (every commit flushes its data), not `SafeNoSync`.
    pub fn new(commits_flush: bool) -> Keeper {
        Keeper {
            commits_flush,
            state: Mutex::new(State {
                held: Vec::new(),
                durable: 0,
            }),
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

    /// At open: flushes the data file (so the newest steady meta page is durable), then holds
    /// the latest snapshot.
    pub fn prime(&self, env: &Env) -> Result<(), Code> {
        env.flush_data_file()?;
        let metas = Metas::read(env)?;
        let mut st = self.lock();
        st.durable = metas.newest_steady();
        let txn = env.begin(true)?;
        st.held.push(txn);
        self.publish(&st.held);
        Ok(())
    }

    /// Called right after a write transaction with ID `write_txn` began, with the writer lock
    /// held: makes sure a reader holds the newest durable snapshot, flushing first when none
    /// can, and that one holds the latest (for the next write). On error the caller aborts the
    /// write transaction.
    pub fn before_write(&self, env: &Env, write_txn: u64) -> Result<(), Code> {
        let latest = write_txn.saturating_sub(1);
        let metas = Metas::read(env)?;
        let mut st = self.lock();
        self.learn(&mut st, &metas);
        // A steady meta page that is not known to be on the disk, other than the newest
        // `NoMetaSync` commit's (which the anchor below covers): libmdbx's own checkpoint,
        // written without a flush when its GC ran dry. The next weak meta page could take the
        // durable one's slot: flush it now.
        let suspect = if self.commits_flush {
            metas.newest_steady_below_head()
        } else {
            metas.newest_steady()
        };
        if suspect > st.durable && metas.unsynced {
            self.flush(env, &mut st)?;
        }
        // The anchor: the newest held snapshot at or below the durable one.
        let newest_durable = |st: &State| st.held.iter().rposition(|t| t.id() <= st.durable);
        let mut anchor = newest_durable(&st);
        if anchor.is_none() {
            // Nothing old enough: make the latest snapshot durable instead.
            self.flush(env, &mut st)?;
            anchor = newest_durable(&st);
        }
        // Keep the anchor and the latest; the others are spares, renewed below or dropped.
        let mut spare = Vec::new();
        let mut kept = Vec::new();
        for (i, t) in st.held.drain(..).enumerate() {
            if Some(i) == anchor || t.id() == latest {
                kept.push(t);
            } else {
                spare.push(t);
            }
        }
        st.held = kept;
        // Hold the latest too: the anchor of the next write transaction.
        if st.held.last().is_none_or(|t| t.id() != latest) {
            let txn = match spare.pop() {
                Some(mut t) => t.reset().and_then(|()| t.renew()).map(|()| t),
                None => env.begin(true),
            };
            match txn {
                Ok(t) if t.id() == latest => st.held.push(t),
                // Another snapshot (cannot happen under the writer lock) or no reader slot
                // free: the next write transaction finds nothing to anchor on and flushes.
                Ok(_) | Err(_) => {}
            }
        }
        drop(spare); // aborted: their reader slots are free again
        self.publish(&st.held);
        Ok(())
    }

    /// Called by a write transaction before each weak commit (`mdbx_txn_checkpoint` with
    /// `MDBX_TXN_NOSYNC`): flushes when the newest steady meta page is not known to be on the
    /// disk. libmdbx keeps only the newest steady meta page out of the way of the next meta
    /// page written; while that one is not on the disk, two weak commits would write over the
    /// slot of the one that is, and a power cut could leave no intact steady meta page.
    pub fn before_weak_commit(&self, env: &Env) -> Result<(), Code> {
        let metas = Metas::read(env)?;
        let mut st = self.lock();
        self.learn(&mut st, &metas);
        if metas.newest_steady() > st.durable && metas.unsynced {
            self.flush(env, &mut st)?;
        }
        Ok(())
    }

    /// Updates the durable snapshot from what the meta pages show: everything, when nothing is
    /// unflushed; under `NoMetaSync`, the newest steady meta page before the newest one, which
    /// the newest commit's data flush made durable.
    fn learn(&self, st: &mut State, metas: &Metas) {
        let known = if !metas.unsynced {
            metas.newest_steady()
        } else if self.commits_flush {
            metas.newest_steady_below_head()
        } else {
            0
        };
        st.durable = st.durable.max(known);
    }

    /// Flushes everything (`mdbx_env_sync_ex`, a steady meta page included); the newest
    /// snapshot is durable then.
    fn flush(&self, env: &Env, st: &mut State) -> Result<(), Code> {
        env.sync()?;
        st.durable = st.durable.max(Metas::read(env)?.newest_steady());
        Ok(())
    }

    /// The slow-reader callback met the keeper's snapshot `laggard` holding up a write that
    /// would otherwise grow the file (or fail at the upper size bound). Under `SafeNoSync`
    /// that happens right after libmdbx made its own steady checkpoint, written without a
    /// flush, to reuse pages: the keeper keeps the write from reusing them until that
    /// checkpoint is durable. Then this flushes it (`mdbx_env_sync_ex` from the writing thread,
    /// which libmdbx allows: it syncs through the running write transaction), lets go of the
    /// older snapshot and returns 0 (libmdbx looks at the readers again and reuses the
    /// pages). Otherwise -1: grow (the keeper's snapshot is neither cut nor waited for).
    pub fn on_laggard(&self, env: *mut sys::MDBX_env, laggard: u64) -> std::ffi::c_int {
        let Ok(metas) = Metas::read_raw(env) else {
            return -1;
        };
        let mut st = self.lock();
        self.learn(&mut st, &metas);
        let suspect = if self.commits_flush {
            metas.newest_steady_below_head()
        } else {
            metas.newest_steady()
        };
        if suspect <= st.durable || !metas.unsynced || laggard > st.durable {
            return -1;
        }
        // SAFETY: libmdbx calls the slow-reader callback in the thread that runs the write
        // transaction, with the environment open; `mdbx_env_sync_ex` detects that this thread
        // owns the write transaction and flushes without taking the writer lock, updating
        // that transaction's view of the meta pages (as libmdbx's own checkpoint does).
        let rc = unsafe { sys::mdbx_env_sync_ex(env, true, false) };
        if rc != sys::MDBX_SUCCESS && rc != sys::MDBX_RESULT_TRUE {
            return -1;
        }
        let Ok(after) = Metas::read_raw(env) else {
            return -1;
        };
        st.durable = st.durable.max(after.newest_steady());
        // Only the held snapshots at or above the durable one stay.
        let durable = st.durable;
        let before = st.held.len();
        st.held.retain(|t| t.id() >= durable);
        if st.held.len() == before {
            return -1; // nothing let go: looking again would find the same reader
        }
        self.publish(&st.held);
        0
    }

    /// How many of the keeper's read transactions are on `snapshot` (`Db::readers` leaves them
    /// out).
    pub fn held_on(&self, snapshot: u64) -> usize {
        self.snapshots
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) == snapshot && snapshot != 0)
            .count()
    }

    /// Ends the held read transactions (before the environment closes).
    pub fn release(&self) {
        let mut st = self.lock();
        st.held.clear();
        self.publish(&st.held);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held left the state as it was: still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, held: &[RawTxn]) {
        for (i, slot) in self.snapshots.iter().enumerate() {
            slot.store(held.get(i).map_or(0, RawTxn::id), Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `commits` transactions of one put each to the main table of a fresh `sync`
    /// environment; returns the environment, each write's ID and what the keeper held after it.
    fn write(sync: Durability, commits: u64) -> (tempfile::TempDir, Env, Vec<(u64, Vec<u64>)>) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = EnvConfig {
            sync,
            sync_bytes: (sync == Durability::SafeNoSync).then_some(1 << 30),
            ..EnvConfig::for_tests(Some(8), 1 << 26)
        };
        let env = Env::open(dir.path(), &cfg).unwrap();
        let mut seen = Vec::new();
        for i in 0..commits {
            let mut txn = env.begin(false).unwrap();
            let id = txn.id();
            let dbi = txn.open_table(None, 0, false).unwrap().unwrap();
            txn.put(dbi, &i.to_be_bytes(), b"value", 0).unwrap();
            txn.commit().unwrap();
            let keeper = env.keeper.as_ref().unwrap();
            let held = keeper.lock().held.iter().map(RawTxn::id).collect();
            seen.push((id, held));
        }
        (dir, env, seen)
    }

    /// Under `NoMetaSync` each write's data flush makes the meta page before it durable: after
    /// write N the keeper holds snapshot N - 1 (durable) and N (the next write's anchor), never
    /// more than two.
    #[test]
    fn under_no_meta_sync_the_keeper_holds_the_snapshot_before_the_latest() {
        let (_dir, env, seen) = write(Durability::NoMetaSync, 50);
        for (id, held) in &seen[1..] {
            // Write `id` began after `id - 1` committed: it anchored on `id - 2` and took `id - 1`.
            assert_eq!(held, &vec![id - 2, id - 1], "write {id}");
        }
        assert!(
            env.readers().unwrap().is_empty(),
            "Db::readers hides the keeper"
        );
    }

    /// Under `SafeNoSync` nothing is flushed between the writes (the threshold is far): the
    /// keeper goes on holding the snapshot flushed at open and the latest one, two readers in
    /// all however many writes there are (it once kept one per write).
    #[test]
    fn under_safe_no_sync_the_keeper_holds_the_flushed_snapshot_and_the_latest() {
        let (_dir, env, seen) = write(Durability::SafeNoSync, 200);
        let first = seen[0].1[0];
        for (id, held) in &seen {
            assert!(held.len() <= 2, "write {id}: {held:?}");
            assert_eq!(held[0], first, "write {id}: {held:?}");
            assert_eq!(*held.last().unwrap(), id - 1, "write {id}: {held:?}");
        }
        // Two slots: the keeper reuses them rather than taking new ones.
        assert!(
            env.info().unwrap().readers <= 3,
            "{:?}",
            env.info().unwrap().readers
        );
    }
}
