//! The version a write transaction names for its changes to tables declared `history`
//! (`Tx::set_version`), and what the transaction knows of those tables' histories: held by the
//! database's shared state, since one write transaction runs at a time (`history/` records the
//! changes).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::engine::Dbi;

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
    /// Changes the write transaction recorded (in every history): what its commit may prune
    /// beyond [`KEEP_VERSIONS_BATCH`](crate::options::KEEP_VERSIONS_BATCH), so that a history kept to
    /// its last versions keeps up with the versions written. Not taken back by a nested
    /// transaction's abort: it only sizes the prune.
    recorded: AtomicUsize,
}

/// What [`State`] holds for the write transaction in progress; also what a nested transaction
/// takes back when it aborts.
#[derive(Default, Clone)]
pub(crate) struct Writer {
    /// The version `Tx::set_version` named.
    version: Option<u64>,
    /// Each history this transaction recorded a change in.
    touched: Vec<Touched>,
}

/// A history a write transaction recorded a change in.
#[derive(Clone, Copy)]
struct Touched {
    /// Its source's name.
    source: &'static str,
    /// The history's handle.
    history: Dbi,
    /// The last version the history holds, while this transaction knows it (`None` after an
    /// unwind or a prune): a change at that version needs no check.
    last: Option<u64>,
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
            self.recorded.store(0, Ordering::Relaxed);
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

    /// Forgets the last version this transaction knew `history` to hold (an unwind lowered
    /// it, a prune raised its horizon): its next change is checked again.
    pub(crate) fn forget_last(&self, history: Dbi) {
        for touched in &mut self.writer().touched {
            if touched.history == history {
                touched.last = None;
            }
        }
    }

    /// The last version this transaction knows `history` to hold, if any.
    #[inline]
    pub(crate) fn known_last(&self, history: Dbi) -> Option<u64> {
        let writer = self.writer();
        writer
            .touched
            .iter()
            .find(|t| t.history == history)
            .and_then(|t| t.last)
    }

    /// This transaction recorded a change of `history` (of table `source`), whose last version
    /// is now `last`.
    pub(crate) fn touch(&self, source: &'static str, history: Dbi, last: u64) {
        let mut writer = self.writer();
        match writer.touched.iter_mut().find(|t| t.history == history) {
            Some(touched) => touched.last = Some(last),
            None => writer.touched.push(Touched {
                source,
                history,
                last: Some(last),
            }),
        }
    }

    /// One change recorded (a new change entry).
    #[inline]
    pub(crate) fn note_recorded(&self) {
        // One write transaction at a time: a plain load and store, no read-modify-write.
        let n = self.recorded.load(Ordering::Relaxed);
        self.recorded.store(n.saturating_add(1), Ordering::Relaxed);
    }

    /// The histories this transaction recorded changes in (source, handle), and how many
    /// changes it recorded: what its commit prunes under `Options::keep_versions`.
    pub(crate) fn touched(&self) -> (Vec<(&'static str, Dbi)>, usize) {
        let touched = self
            .writer()
            .touched
            .iter()
            .map(|t| (t.source, t.history))
            .collect();
        (touched, self.recorded.load(Ordering::Relaxed))
    }
}

/// While it lives, rows written are not recorded ([`State::replay`]).
pub(crate) struct Replay<'a>(&'a State);

impl Drop for Replay<'_> {
    fn drop(&mut self) {
        self.0.replaying.store(false, Ordering::Relaxed);
    }
}
