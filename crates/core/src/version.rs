//! The version a write transaction names for its changes to tables declared `history`
//! (`Tx::set_version`), and what the transaction knows of those tables' histories: held by the
//! database's shared state, since one write transaction runs at a time (`history/` records the
//! changes).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The write transaction's version and what it knows of its history tables: one write
/// transaction at a time holds it (the writer lock), so the lock is never contended.
#[derive(Default)]
pub(crate) struct State {
    writer: Mutex<Writer>,
    /// An unwind writes the rows back without recording them.
    replaying: AtomicBool,
    /// Whether a write transaction named a version since the last [`begin`](State::begin):
    /// a begin of a database without history tables costs one relaxed load.
    used: AtomicBool,
    /// Whether a history of the database was added to a populated table (`history/`): only
    /// then does a read as of a version look for the mark that says so.
    whole: AtomicBool,
}

/// What [`State`] holds for the write transaction in progress; also what a nested transaction
/// takes back when it aborts.
#[derive(Default, Clone)]
pub(crate) struct Writer {
    /// The version `Tx::set_version` named.
    version: Option<u64>,
    /// Each history table whose last version this transaction has written: its source's name
    /// and that version.
    raised: Vec<(&'static str, u64)>,
}

impl State {
    fn writer(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A write transaction began: no version yet.
    #[inline]
    pub(crate) fn begin(&self) {
        if self.used.load(Ordering::Relaxed) {
            *self.writer() = Writer::default();
            self.used.store(false, Ordering::Relaxed);
        }
    }

    /// The write transaction's version is `version`.
    pub(crate) fn set_version(&self, version: u64) {
        self.used.store(true, Ordering::Relaxed);
        self.writer().version = Some(version);
    }

    /// The write transaction's version.
    pub(crate) fn version(&self) -> Option<u64> {
        self.writer().version
    }

    /// What a nested transaction beginning now takes back if it aborts.
    pub(crate) fn mark(&self) -> Writer {
        self.writer().clone()
    }

    /// A nested transaction aborted: back to `mark`.
    pub(crate) fn rollback(&self, mark: Writer) {
        *self.writer() = mark;
    }

    /// A history of the database was added to a populated table (the open found its mark).
    pub(crate) fn note_whole(&self) {
        self.whole.store(true, Ordering::Relaxed);
    }

    /// Whether a history of the database may have been added to a populated table.
    #[inline]
    pub(crate) fn any_whole(&self) -> bool {
        self.whole.load(Ordering::Relaxed)
    }

    /// Whether an unwind is writing rows back (which are not recorded).
    #[inline]
    pub(crate) fn replaying(&self) -> bool {
        self.replaying.load(Ordering::Relaxed)
    }

    /// Rows written until the guard drops are not recorded: an unwind writes them back.
    pub(crate) fn replay(&self) -> Replay<'_> {
        self.replaying.store(true, Ordering::Relaxed);
        Replay(self)
    }

    /// Forgets that this transaction wrote `source`'s last version (an unwind lowered it).
    pub(crate) fn forget_raised(&self, source: &str) {
        self.writer().raised.retain(|(name, _)| *name != source);
    }

    /// The version this transaction last wrote as `source`'s last version, if any.
    pub(crate) fn raised(&self, source: &str) -> Option<u64> {
        let writer = self.writer();
        writer
            .raised
            .iter()
            .find(|(name, _)| *name == source)
            .map(|(_, v)| *v)
    }

    pub(crate) fn note_raised(&self, source: &'static str, version: u64) {
        let mut writer = self.writer();
        match writer.raised.iter_mut().find(|(name, _)| *name == source) {
            Some(entry) => entry.1 = version,
            None => writer.raised.push((source, version)),
        }
    }
}

/// While it lives, rows written are not recorded ([`State::replay`]).
pub(crate) struct Replay<'a>(&'a State);

impl Drop for Replay<'_> {
    fn drop(&mut self) {
        self.0.replaying.store(false, Ordering::Relaxed);
    }
}
