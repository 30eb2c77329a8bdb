//! What an open database keeps for its watchers (`Shared::watch`): the subscribers' bounded
//! queues, the key watchers' filters, and each key watcher's changes of the write transaction
//! in progress (filtered as they are recorded, and bounded by the watcher's queue capacity).
//! Below the transactions: their write paths call the hooks here ([`Hub::put`], [`Hub::del`],
//! [`Hub::clear`]), their commit [`Hub::before_commit`] and [`Pending::deliver`]. The typed
//! receivers are in `watch/`. `docs/design.md` ("Watching committed changes") explains
//! the design.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::Waker;
use std::time::{Duration, Instant, SystemTime};

use crate::engine::{Dbi, RawTxn};
use crate::table::Table;

/// A set of tables, by their ID in the schema (`<S as Contains<T>>::ID`): a bitset.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct TableSet {
    words: Vec<u64>,
}

impl TableSet {
    /// The empty set.
    pub(crate) fn new() -> Self {
        TableSet { words: Vec::new() }
    }

    pub(crate) fn insert(&mut self, id: usize) {
        let word = id / 64;
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        self.words[word] |= 1 << (id % 64);
    }

    /// Whether the table with this ID is in the set.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// let tabula::Received::Event(commit) = feed.recv().unwrap() else { unreachable!() };
    /// let id = <App as tabula::Contains<Names>>::ID;
    /// assert!(commit.tables.contains_id(id));
    /// assert!(!commit.tables.contains_id(id + 1));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn contains_id(&self, id: usize) -> bool {
        self.words
            .get(id / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// The IDs in the set, rising.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.put::<Numbers>(&1, &1)?;
    /// tx.commit()?;
    /// let tabula::Received::Event(commit) = feed.recv().unwrap() else { unreachable!() };
    /// let ids: Vec<usize> = commit.tables.ids().collect();
    /// let mut expected = [<App as tabula::Contains<Names>>::ID, <App as tabula::Contains<Numbers>>::ID];
    /// expected.sort();
    /// assert_eq!(ids, expected);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            (0..64)
                .filter(move |b| w & (1u64 << b) != 0)
                .map(move |b| i * 64 + b)
        })
    }

    /// How many tables are in the set.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// let tabula::Received::Event(commit) = feed.recv().unwrap() else { unreachable!() };
    /// assert_eq!(commit.tables.len(), 1);
    /// assert!(!commit.tables.is_empty());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// let tabula::Received::Event(commit) = feed.recv().unwrap() else { unreachable!() };
    /// assert!(!commit.tables.is_empty());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
}

impl std::fmt::Debug for TableSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.ids()).finish()
    }
}

/// One committed write transaction, as the commit feed ([`Db::subscribe`](crate::Db::subscribe))
/// reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Commit {
    /// The transaction ID: what [`Tx::id`](crate::Tx::id) said in the write transaction, and
    /// what a read transaction that begins after the commit sees.
    pub id: u64,
    /// The tables it wrote (libmdbx's own record of the tables it changed).
    pub tables: TableSet,
    /// When the commit returned.
    pub at: SystemTime,
}

/// What a receiver gets: an event, or word that events were dropped because its queue was full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received<E> {
    /// The next event.
    Event(E),
    /// The queue was full: `missed` events after the ones received before this were dropped,
    /// the last of them from transaction `latest`. Events after this one are newer than
    /// `latest` (they were queued when the receiver had made room again); to catch up, read a
    /// snapshot (it sees `latest` and everything before).
    Lagged {
        /// How many events were dropped.
        missed: u64,
        /// The transaction ID of the last dropped event.
        latest: u64,
    },
}

/// A subscriber's bounded queue: the committing thread pushes without waiting, the receiver
/// blocks or polls.
pub(crate) struct Queue<E> {
    state: Mutex<QueueState<E>>,
    ready: Condvar,
    capacity: usize,
}

struct QueueState<E> {
    /// Events and lag reports in the order they are received: a report sits where the events
    /// it counts were dropped, so the events queued before come first and those queued after
    /// (when the receiver made room) are newer than its `latest`.
    items: VecDeque<Received<E>>,
    /// The events in `items` (reports take no room: at most one follows each event).
    events: usize,
    /// The receiver was dropped, or the database closed.
    closed: bool,
    /// Threads blocked in `recv`: a push wakes the condition variable only when there is one
    /// (a notify is a system call even with nobody waiting).
    waiting: usize,
    waker: Option<Waker>,
}

impl<E> QueueState<E> {
    /// Counts `n` events of transaction `txn` dropped: into the report at the end of the
    /// queue, or a new one there when an event is last (the receiver took the report before,
    /// or the events it counts were queued before these were dropped).
    fn miss(&mut self, n: u64, txn: u64) {
        if let Some(Received::Lagged { missed, latest }) = self.items.back_mut() {
            *missed += n;
            *latest = txn;
        } else {
            self.items.push_back(Received::Lagged {
                missed: n,
                latest: txn,
            });
        }
    }
}

impl<E> Queue<E> {
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Queue {
            state: Mutex::new(QueueState {
                items: VecDeque::new(),
                events: 0,
                closed: false,
                waiting: 0,
                waker: None,
            }),
            ready: Condvar::new(),
            capacity: capacity.max(1),
        })
    }

    fn lock(&self) -> MutexGuard<'_, QueueState<E>> {
        // A panic while holding the lock leaves plain data behind: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `events` of transaction `txn`; those that do not fit are counted as missed.
    fn push(&self, txn: u64, events: impl Iterator<Item = E>) {
        self.push_and_miss(txn, events, 0);
    }

    /// [`push`](Self::push), and counts `missed` more events of `txn` dropped before they
    /// reached the queue.
    fn push_and_miss(&self, txn: u64, events: impl Iterator<Item = E>, missed: u64) {
        let (waker, waiting) = {
            let mut s = self.lock();
            if s.closed {
                return;
            }
            for e in events {
                if s.events < self.capacity {
                    s.items.push_back(Received::Event(e));
                    s.events += 1;
                } else {
                    s.miss(1, txn);
                }
            }
            if missed > 0 {
                s.miss(missed, txn);
            }
            (s.waker.take(), s.waiting > 0)
        };
        if waiting {
            self.ready.notify_all();
        }
        if let Some(w) = waker {
            w.wake();
        }
    }

    pub(crate) fn close(&self) {
        let waker = {
            let mut s = self.lock();
            s.closed = true;
            s.waker.take()
        };
        self.ready.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// The next event or lag report; `None` when there is none.
    fn take(s: &mut QueueState<E>) -> Option<Received<E>> {
        let r = s.items.pop_front()?;
        if let Received::Event(_) = r {
            s.events -= 1;
        }
        Some(r)
    }

    /// Waits until an event or a lag report is there (`None`: closed, or `deadline` passed).
    pub(crate) fn recv(&self, deadline: Option<Instant>) -> Option<Received<E>> {
        let mut s = self.lock();
        loop {
            if let Some(r) = Self::take(&mut s) {
                return Some(r);
            }
            if s.closed {
                return None;
            }
            s.waiting += 1;
            s = match deadline {
                None => self.ready.wait(s).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left == Duration::ZERO {
                        s.waiting -= 1;
                        return None;
                    }
                    self.ready
                        .wait_timeout(s, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
            s.waiting -= 1;
        }
    }

    /// The next event without waiting; `Err(())` when closed and drained.
    pub(crate) fn poll(&self, waker: Option<&Waker>) -> Result<Option<Received<E>>, ()> {
        let mut s = self.lock();
        if let Some(r) = Self::take(&mut s) {
            return Ok(Some(r));
        }
        if s.closed {
            return Err(());
        }
        if let Some(w) = waker {
            s.waker = Some(w.clone());
        }
        Ok(None)
    }

    /// Events queued now (not counting missed ones).
    pub(crate) fn len(&self) -> usize {
        self.lock().events
    }

    pub(crate) fn limit(&self) -> usize {
        self.capacity
    }
}

/// What a write did to a key, as recorded (stored bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Put,
    Delete,
    Clear,
}

/// A recorded change of a watched table, in stored bytes: the key; for a dupsort table the
/// stored value (which begins with the subkey), `None` for a delete of every value of the key.
#[derive(Debug, Clone)]
pub(crate) struct RawChange {
    pub(crate) op: Op,
    pub(crate) key: Box<[u8]>,
    pub(crate) dup: Option<Box<[u8]>>,
}

/// A change queued for a key watcher: the change and its transaction.
pub(crate) struct KeyEvent {
    pub(crate) txn: u64,
    pub(crate) change: RawChange,
}

/// Whether a stored key is one a watcher asked for.
pub(crate) type KeyFilter = Box<dyn Fn(&[u8]) -> bool + Send + Sync>;

struct Watcher {
    table: &'static str,
    filter: KeyFilter,
    /// Whether it takes the values written to a table that is not `dupsort` too
    /// ([`Db::watch_values`](crate::Db::watch_values)).
    values: bool,
    queue: Arc<Queue<KeyEvent>>,
    /// Whether it records the write transaction in progress (it existed when that began).
    recording: bool,
    /// The changes of the write transaction in progress that it takes: at most its queue's
    /// capacity (more could not be queued anyway), the rest counted in `missed`. So one large
    /// transaction holds no more memory for a watcher than its queue does.
    pending: Vec<RawChange>,
    missed: u64,
}

/// A commit-feed subscriber.
struct Feed {
    queue: Arc<Queue<Commit>>,
    /// [`Hub::begun`] when it subscribed: it reports the transactions numbered above.
    since: u64,
}

#[derive(Default)]
struct Inner {
    feeds: Vec<Feed>,
    watchers: Vec<Watcher>,
}

/// Where each key watcher's pending changes stood before a nested transaction (for
/// [`Hub::rollback`] when it aborts); empty when nothing records.
pub(crate) struct Mark(Vec<(usize, u64)>);

const FEED: u8 = 1;
const KEYS: u8 = 2;

/// The watchers of one database.
#[derive(Default)]
pub(crate) struct Hub {
    /// `FEED`: a commit-feed subscriber may exist; `KEYS`: a key watcher may exist. The one
    /// load a commit pays when nobody watches.
    active: AtomicU8,
    /// Whether the write transaction in progress records keys (decided when it began: a key
    /// watcher existed). Stored only by the writing thread, under the writer lock; the one
    /// load a write pays.
    recording: AtomicBool,
    /// The write transactions begun while a commit-feed subscriber existed, the one in
    /// progress included: a feed reports the transactions that began after it subscribed, so
    /// those numbered above what this was then. Stored only by the writing thread, under the
    /// writer lock (no read-modify-write); the number of a transaction is read at its commit.
    begun: AtomicU64,
    /// Whether a watcher of values ([`Db::watch_values`](crate::Db::watch_values)) was ever
    /// made: only then does a value filled in the page get read back. Never cleared.
    values: AtomicBool,
    inner: Mutex<Inner>,
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new commit-feed subscriber's queue.
    pub(crate) fn subscribe(&self, capacity: usize) -> Arc<Queue<Commit>> {
        let q = Queue::new(capacity);
        let mut inner = self.lock();
        inner.feeds.push(Feed {
            queue: q.clone(),
            since: self.begun.load(Ordering::Relaxed),
        });
        self.active.fetch_or(FEED, Ordering::Relaxed);
        q
    }

    /// A new key watcher's queue over `table`.
    pub(crate) fn watch(
        &self,
        table: &'static str,
        filter: KeyFilter,
        values: bool,
        capacity: usize,
    ) -> Arc<Queue<KeyEvent>> {
        let q = Queue::new(capacity);
        let mut inner = self.lock();
        if values {
            self.values.store(true, Ordering::Relaxed);
        }
        inner.watchers.push(Watcher {
            table,
            filter,
            values,
            queue: q.clone(),
            recording: false,
            pending: Vec::new(),
            missed: 0,
        });
        self.active.fetch_or(KEYS, Ordering::Relaxed);
        q
    }

    /// A write transaction began (the writer lock is held; for a bulk load, also each batch
    /// after the first): the receivers that exist now report it, those made later do not.
    /// It is numbered when a feed exists, and records keys when a key watcher exists. Two
    /// relaxed loads when nobody watches.
    #[inline]
    pub(crate) fn begin(&self) {
        let active = self.active.load(Ordering::Relaxed);
        if active != 0 || self.recording.load(Ordering::Relaxed) {
            if active & FEED != 0 {
                self.begun
                    .store(self.begun.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
            if active & KEYS != 0 || self.recording.load(Ordering::Relaxed) {
                self.begin_slow();
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn begin_slow(&self) {
        let mut inner = self.lock();
        for w in &mut inner.watchers {
            // What an aborted or failed transaction left goes; every watcher there now records.
            w.pending.clear();
            w.missed = 0;
            w.recording = true;
        }
        let keys = self.active.load(Ordering::Relaxed) & KEYS != 0;
        self.recording.store(keys, Ordering::Relaxed);
    }

    /// A put of `key` (with its stored `value`, kept for a dupsort table) into `T` succeeded.
    #[inline(always)]
    pub(crate) fn put<T: Table>(&self, key: &[u8], value: &[u8]) {
        self.put_in(T::NAME, T::FLAGS.dupsort, key, value);
    }

    /// [`put`](Self::put) into the table named `table` (an index table, which its source's
    /// write paths know by name).
    #[inline(always)]
    pub(crate) fn put_in(&self, table: &'static str, dupsort: bool, key: &[u8], value: &[u8]) {
        if self.recording.load(Ordering::Relaxed) {
            self.note(table, Op::Put, key, dupsort.then_some(value), Some(value));
        }
    }

    /// Whether a watcher of the values written may exist: then a write whose value is filled
    /// in the page after the call ([`Tx::put_reserve`](crate::Tx::put_reserve)) reads it back
    /// for [`put`](Self::put). One relaxed load.
    #[inline(always)]
    pub(crate) fn wants_values(&self) -> bool {
        self.recording.load(Ordering::Relaxed) && self.values.load(Ordering::Relaxed)
    }

    /// A delete of `key` from `T` took effect: of one value `dup` of a dupsort table, or of
    /// every value (`None`).
    #[inline(always)]
    pub(crate) fn del<T: Table>(&self, key: &[u8], dup: Option<&[u8]>) {
        self.del_in(T::NAME, T::FLAGS.dupsort, key, dup);
    }

    /// [`del`](Self::del) from the table named `table`.
    #[inline(always)]
    pub(crate) fn del_in(
        &self,
        table: &'static str,
        dupsort: bool,
        key: &[u8],
        dup: Option<&[u8]>,
    ) {
        if self.recording.load(Ordering::Relaxed) {
            self.note(table, Op::Delete, key, dup.filter(|_| dupsort), None);
        }
    }

    /// `T` was cleared.
    #[inline(always)]
    pub(crate) fn clear<T: Table>(&self) {
        self.clear_in(T::NAME);
    }

    /// [`clear`](Self::clear) of the table named `table`.
    #[inline(always)]
    pub(crate) fn clear_in(&self, table: &'static str) {
        if self.recording.load(Ordering::Relaxed) {
            self.note(table, Op::Clear, &[], None, None);
        }
    }

    /// Whether writes are recorded now (for a write path that must copy bytes first).
    #[inline(always)]
    pub(crate) fn recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    #[cold]
    #[inline(never)]
    /// Records a change for the watchers that take it: `dup` is the `dupsort` value every
    /// watcher gets, `written` the value of a put, which a watcher of values gets instead
    /// when there is no `dup`.
    fn note(
        &self,
        table: &'static str,
        op: Op,
        key: &[u8],
        dup: Option<&[u8]>,
        written: Option<&[u8]>,
    ) {
        let mut inner = self.lock();
        // Copied once, for the first watcher that takes it (a table nobody watches costs no
        // copy), cloned for the others; with the value for watchers of values.
        let mut change: Option<RawChange> = None;
        let mut with_value: Option<RawChange> = None;
        for w in &mut inner.watchers {
            if !w.recording || w.table != table || (op != Op::Clear && !(w.filter)(key)) {
                continue;
            }
            if w.pending.len() >= w.queue.limit() {
                w.missed += 1;
                continue;
            }
            let value = if w.values { dup.or(written) } else { dup };
            let slot = if w.values && dup.is_none() {
                &mut with_value
            } else {
                &mut change
            };
            let c = slot.get_or_insert_with(|| RawChange {
                op,
                key: key.into(),
                dup: value.map(Into::into),
            });
            w.pending.push(c.clone());
        }
    }

    /// Where the watchers' pending changes stand: taken before a nested transaction, to
    /// [`rollback`](Self::rollback) to when it aborts.
    #[inline]
    pub(crate) fn mark(&self) -> Mark {
        if self.recording.load(Ordering::Relaxed) {
            let inner = self.lock();
            Mark(
                inner
                    .watchers
                    .iter()
                    .map(|w| (w.pending.len(), w.missed))
                    .collect(),
            )
        } else {
            Mark(Vec::new())
        }
    }

    /// A nested transaction aborted: its recorded changes go. Watchers are only added (at the
    /// end, not recording) and removed at a commit, so the mark's entries are the same
    /// watchers, in order.
    #[inline]
    pub(crate) fn rollback(&self, mark: &Mark) {
        if self.recording.load(Ordering::Relaxed) {
            let mut inner = self.lock();
            for (w, &(len, missed)) in inner.watchers.iter_mut().zip(&mark.0) {
                w.pending.truncate(len);
                w.missed = missed;
            }
        }
    }

    /// Before `raw` commits: when someone watches, what to deliver once it committed — its ID
    /// and the tables it wrote — with the hub locked until then, so that commits of this
    /// database are delivered in commit order. `None` (one relaxed load) when nobody watches.
    #[inline]
    pub(crate) fn before_commit(&self, raw: &RawTxn, dbis: &[Dbi]) -> Option<Pending<'_>> {
        if self.active.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.before_commit_slow(raw, dbis)
    }

    #[cold]
    #[inline(never)]
    fn before_commit_slow(&self, raw: &RawTxn, dbis: &[Dbi]) -> Option<Pending<'_>> {
        let mut tables = TableSet::new();
        for (id, &dbi) in dbis.iter().enumerate() {
            if raw.wrote(dbi) {
                tables.insert(id);
            }
        }
        Some(Pending {
            inner: self.lock(),
            hub: self,
            id: raw.id(),
            begun: self.begun.load(Ordering::Relaxed),
            tables,
        })
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let inner = self.lock();
        for f in &inner.feeds {
            f.queue.close();
        }
        for w in &inner.watchers {
            w.queue.close();
        }
    }
}

/// A commit about to happen, with the hub locked: [`deliver`](Self::deliver) after it succeeded;
/// dropped otherwise (the pending changes are discarded when the next write transaction
/// begins).
pub(crate) struct Pending<'h> {
    inner: MutexGuard<'h, Inner>,
    hub: &'h Hub,
    id: u64,
    /// The transaction's number ([`Hub::begun`]).
    begun: u64,
    tables: TableSet,
}

impl Pending<'_> {
    /// The transaction committed: queue its event for every subscriber, and its changes for
    /// every key watcher whose filter takes them. A transaction that wrote no table of the
    /// schema delivers nothing.
    #[cold]
    #[inline(never)]
    pub(crate) fn deliver(self) {
        let at = SystemTime::now();
        let Pending {
            mut inner,
            hub,
            id,
            begun,
            tables,
        } = self;
        let changed = !tables.is_empty();
        // The pending changes go, delivered or not (nothing changed: say, only puts of values
        // already there; libmdbx gives the transaction no ID and Tabula aborts it, so there is
        // nothing to report). A bulk load's next batch records afresh.
        let taken: Vec<(Vec<RawChange>, u64)> = inner
            .watchers
            .iter_mut()
            .map(|w| {
                (
                    std::mem::take(&mut w.pending),
                    std::mem::take(&mut w.missed),
                )
            })
            .collect();
        if !changed {
            return;
        }
        let commit = Commit { id, tables, at };
        for f in inner.feeds.iter().filter(|f| f.since < begun) {
            f.queue.push(id, std::iter::once(commit.clone()));
        }
        for (w, (pending, missed)) in inner.watchers.iter().zip(taken) {
            if !pending.is_empty() || missed > 0 {
                let events = pending
                    .into_iter()
                    .map(|change| KeyEvent { txn: id, change });
                w.queue.push_and_miss(id, events, missed);
            }
        }
        let before = inner.feeds.len() + inner.watchers.len();
        inner.feeds.retain(|f| !f.queue.is_closed());
        inner.watchers.retain(|w| !w.queue.is_closed());
        if inner.feeds.len() + inner.watchers.len() != before {
            let mut active = 0;
            if !inner.feeds.is_empty() {
                active |= FEED;
            }
            if !inner.watchers.is_empty() {
                active |= KEYS;
            }
            hub.active.store(active, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One large transaction holds no more changes for a watcher than its queue's capacity,
    /// counts the rest, and a nested rollback restores both.
    #[test]
    fn pending_changes_are_bounded_by_the_watchers_capacity() {
        let hub = Hub::default();
        let evens = hub.watch("t", Box::new(|k: &[u8]| k[0].is_multiple_of(2)), false, 4);
        let all = hub.watch("t", Box::new(|_: &[u8]| true), false, 1000);
        hub.begin();
        assert!(hub.recording());
        for k in 0..100u8 {
            hub.note("t", Op::Put, &[k], None, None);
            hub.note("other", Op::Put, &[k], None, None); // nobody watches it
        }
        let state = |hub: &Hub| {
            let inner = hub.lock();
            inner
                .watchers
                .iter()
                .map(|w| (w.pending.len(), w.missed))
                .collect::<Vec<_>>()
        };
        assert_eq!(state(&hub), [(4, 46), (100, 0)]);
        let mark = hub.mark();
        for k in 100..110u8 {
            hub.note("t", Op::Delete, &[k], None, None);
        }
        assert_eq!(state(&hub), [(4, 51), (110, 0)]);
        hub.rollback(&mark);
        assert_eq!(state(&hub), [(4, 46), (100, 0)]);
        // A watcher added now does not record the transaction in progress.
        let late = hub.watch("t", Box::new(|_: &[u8]| true), false, 10);
        hub.note("t", Op::Put, &[200], None, None);
        assert_eq!(state(&hub), [(4, 47), (101, 0), (0, 0)]);
        // The next transaction starts afresh, the late watcher included.
        hub.begin();
        assert_eq!(state(&hub), [(0, 0), (0, 0), (0, 0)]);
        drop((evens, all, late));
    }
}
