//! The slow-reader policy: what [`Options::on_slow_reader`]'s callback sees and answers.

use std::sync::Arc;
use std::time::Duration;

#[cfg(doc)]
use super::Options;
use crate::engine;

/// A read transaction that keeps a write from reusing pages, as
/// [`Options::on_slow_reader`]'s callback sees it: the one with the oldest snapshot, in any
/// process using the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlowReader {
    /// The process holding it.
    pub pid: u32,
    /// Whether that is this process.
    pub this_process: bool,
    /// The thread holding it, as libmdbx records it (0 for Tabula's readers: the environment
    /// does not tie transactions to threads).
    pub thread: u64,
    /// The snapshot (transaction ID) it reads.
    pub txn_id: u64,
    /// How many transactions have committed since that snapshot.
    pub lag: u64,
    /// Bytes freed since that snapshot that the write could reuse if it ended.
    pub retained_bytes: u64,
    /// How many times the callback was already asked about this write's current attempt (0 the
    /// first time; it grows after each [`SlowReaderAction::Retry`] or cut).
    pub attempt: u32,
    /// This process's owned read transactions ([`Db::read_owned`](crate::Db::read_owned)) on
    /// that snapshot, which [`SlowReaderAction::Cut`] may cut (those in the middle of a call
    /// are skipped). Other readers on it (a [`Db::read`](crate::Db::read) transaction, another
    /// process) cannot be cut.
    pub cuttable: usize,
    /// The age of the oldest of them.
    pub oldest_age: Option<Duration>,
}

impl SlowReader {
    pub(super) fn from_laggard(l: &engine::Laggard) -> Self {
        SlowReader {
            pid: l.pid,
            this_process: l.this_process,
            thread: l.thread,
            txn_id: l.snapshot,
            lag: l.lag,
            retained_bytes: l.retained_bytes,
            attempt: l.retry,
            cuttable: l.cuttable.count,
            oldest_age: l
                .cuttable
                .oldest_start_ms
                .map(|start| Duration::from_millis(l.now_ms.saturating_sub(start))),
        }
    }
}

/// What a write does about a [`SlowReader`]; see [`Options::on_slow_reader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlowReaderAction {
    /// Grow the file (or fail the write with [`Error::MapFull`](crate::Error::MapFull) at
    /// [`Options::max_size`]).
    Grow,
    /// Cut this process's owned read transactions on that snapshot; grow when there are none
    /// to cut.
    Cut,
    /// The callback waited (or made the reader end); libmdbx looks at the readers again and
    /// asks again with the next [`attempt`](SlowReader::attempt). Bound the attempts: the write
    /// waits as long as the callback keeps answering this.
    Retry,
}

/// [`Options::on_slow_reader`]'s callback, shareable between clones of the options.
#[derive(Clone)]
pub(super) struct SlowReaderPolicy(
    pub(super) Arc<dyn Fn(&SlowReader) -> SlowReaderAction + Send + Sync>,
);

// A panic in the callback is caught where libmdbx calls it (`engine/readers.rs`) and changes no
// state: the callback sees a copy of the reader's figures and only returns an action. So a `Db`
// or `Options` holding one stays unwind safe, as they were before the callback existed.
impl std::panic::UnwindSafe for SlowReaderPolicy {}
impl std::panic::RefUnwindSafe for SlowReaderPolicy {}

impl std::fmt::Debug for SlowReaderPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SlowReaderPolicy(..)")
    }
}
