//! What an open database shares between its transactions: the environment, the handle array,
//! the pools of parked read transactions and cursors ([`Shared`]), and the [`Db`] that owns them.
//! Below the typed layer: transactions hold a `&Db` and reach their handles here.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_queue::ArrayQueue;

use crate::engine::{self, Code, Dbi, Env, RawTxn};
use crate::error::{Error, ReaderPin};
use crate::table::Schema;

pub(crate) struct Shared {
    // Field order is drop order: parked read txns are aborted before the env closes.
    pub(crate) slots: engine::TxnSlots,
    pub(crate) pool: ArrayQueue<RawTxn>,
    /// Unbound cursor objects for reuse by read cursors (closed before the env).
    pub(crate) cursors: engine::CursorCache,
    pub(crate) dbis: Box<[Dbi]>,
    pub(crate) names: Box<[&'static str]>,
    pub(crate) env: Env,
    pub(crate) path: PathBuf,
    pub(crate) read_only: bool,
    pub(crate) upper: u64,
    pub(crate) max_readers: u32,
    /// Read transactions open at least this long (ms) warn when they end; `u64::MAX` = never.
    pub(crate) long_read_ms: u64,
    /// Finished read txns are parked on their snapshot (`true`) rather than reset.
    pub(crate) reuse_snapshots: bool,
    /// Set when a write ran out of space: from then on finished read txns are reset rather
    /// than parked, and the parked ones were freed, so later writes reclaim every page no live
    /// reader needs.
    pub(crate) map_was_full: AtomicBool,
}

/// Below this many available bytes, an I/O error from a write is reported as a (probably)
/// full disk: libmdbx reports a write that the file system cut short as `EIO`, and such a
/// write stops only when the file system has no block left.
const PROBABLY_FULL_BELOW: u64 = 1 << 20;

impl Shared {
    /// The error for a write on `table` that found the map full. Also frees the parked read
    /// transactions and stops parking for the rest of this `Db`'s life: with the file at its
    /// upper bound, libmdbx 0.14.4 ousts a parked snapshot when a write needs space, but that
    /// write can still fail with `MDBX_MAP_FULL` where it would succeed with no reader parked
    /// (`tests/read_snapshots.rs` reproduces it).
    ///
    /// The error names the oldest read transaction that still pins freed pages, if one does
    /// (after clearing the slots of dead processes): then that reader, not the size limit, is
    /// what to fix, and the message says so instead of advising a larger `max_size`.
    #[cold]
    pub(crate) fn map_full(&self, table: &'static str) -> Error {
        if self.reuse_snapshots && !self.map_was_full.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: "tabula",
                table,
                "the map is full: finished read transactions are reset from now on instead of \
                 parked on their snapshot (Options::reuse_read_snapshots)"
            );
            while let Some(txn) = self.slots.take_any() {
                drop(txn); // aborts, freeing its reader slot
            }
            while let Some(txn) = self.pool.pop() {
                drop(txn);
            }
        }
        Error::MapFull {
            table,
            upper: self.upper,
            pinned_by: self.oldest_pinning_reader(),
        }
    }

    /// The read transaction with the oldest snapshot among those that keep freed pages from
    /// being reused, in any process.
    fn oldest_pinning_reader(&self) -> Option<ReaderPin> {
        let _ = self.env.reader_check();
        let me = std::process::id();
        self.env
            .readers()
            .ok()?
            .into_iter()
            .filter(|r| r.txnid != 0 && r.lag > 0 && r.bytes_retained > 0)
            .max_by_key(|r| r.lag)
            .map(|r| ReaderPin {
                pid: r.pid as u32,
                this_process: r.pid as u32 == me,
                thread: r.thread,
                txn_id: r.txnid,
                lag: r.lag,
                retained_bytes: r.bytes_retained as u64,
            })
    }

    /// [`Error::DiskFull`] for `code` from a write (`op`, on `table` if any), when the code
    /// says the file system is out of space (`ENOSPC`, `EDQUOT`), or is `EIO` while it has
    /// less than [`PROBABLY_FULL_BELOW`] bytes available; `None` otherwise.
    #[cold]
    pub(crate) fn disk_full(
        &self,
        table: Option<&'static str>,
        op: &'static str,
        code: Code,
    ) -> Option<Error> {
        let certain = code.is_out_of_space();
        if !certain && code != Code::EIO {
            return None;
        }
        let available = engine::available_bytes(&self.path);
        if !certain && available.is_none_or(|a| a >= PROBABLY_FULL_BELOW) {
            return None;
        }
        Some(Error::DiskFull {
            table,
            op,
            path: self.path.clone(),
            available,
            certain,
            code: code.into(),
        })
    }

    /// The error for a commit (`op`, of writes to `table` when known) that failed with
    /// `code`: [`Error::MapFull`], [`Error::DiskFull`], or [`Error::Env`].
    #[cold]
    pub(crate) fn commit_error(
        &self,
        table: Option<&'static str>,
        op: &'static str,
        code: Code,
    ) -> Error {
        if code == Code::MAP_FULL {
            return self.map_full(table.unwrap_or("(commit)"));
        }
        self.disk_full(table, op, code).unwrap_or(Error::Env {
            op,
            code: code.into(),
        })
    }
}

/// An open database with schema `S`: every table created, verified and its handle opened.
///
/// Obtained only from the startup step (`tabula::open`); there is no other way to open a table.
/// `Db` is `Send + Sync`: share it with `Arc` or `&`. Each [`read`](Db::read) reuses a parked
/// libmdbx read transaction from a lock-free pool; [`write`](Db::write) begins the single write
/// transaction.
pub struct Db<S: Schema> {
    pub(crate) shared: Shared,
    _schema: PhantomData<fn() -> S>,
}

impl<S: Schema> Db<S> {
    /// Publishes a database whose handles are all open (the startup path's last step).
    pub(crate) fn publish(shared: Shared) -> Self {
        Db {
            shared,
            _schema: PhantomData,
        }
    }
}

impl<S: Schema> std::fmt::Debug for Db<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.shared.path)
            .field("tables", &self.shared.names)
            .field("read_only", &self.shared.read_only)
            .finish()
    }
}
