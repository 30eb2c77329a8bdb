//! Watching committed changes: the commit feed ([`Db::subscribe`]), typed key changes
//! ([`Db::watch`], [`Db::watch_prefix`]) and, across processes, a [`Follower`]
//! ([`Db::follow`]). `docs/design.md` ("Watching committed changes") explains the design; the
//! hub every database keeps (queues, filters, the pending changes of the write transaction) is
//! `hub.rs`.

pub(crate) mod hub;

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::codec::{AsPrefix, KeyRange, encode_prefix};
use crate::db::state::Db;
use crate::error::Result;
use crate::iter::Positions;
use crate::stored::{decode_key, decode_value};
use crate::table::{Contains, Schema, Table};
pub use hub::{Commit, Received, TableSet};
use hub::{KeyEvent, Op, Queue};

/// How many events a receiver's queue holds when none is given: see [`Db::subscribe`].
pub const DEFAULT_WATCH_CAPACITY: usize = 1024;

impl TableSet {
    /// Whether table `T` of schema `S` is in the set.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// let tabula::Received::Event(commit) = feed.recv().unwrap() else { unreachable!() };
    /// assert!(commit.tables.contains::<App, Names>());
    /// assert!(!commit.tables.contains::<App, Numbers>());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn contains<S: Contains<T>, T: Table>(&self) -> bool {
        self.contains_id(<S as Contains<T>>::ID)
    }
}

/// The receiving end of the commit feed: one [`Commit`] per write transaction this process
/// commits on the database, in commit order. Made by [`Db::subscribe`]; dropping it
/// unsubscribes.
///
/// With the `stream` feature it is also a `futures_core::Stream` of the same items.
pub struct CommitReceiver {
    queue: Arc<Queue<Commit>>,
}

impl CommitReceiver {
    /// Waits for the next commit (or a [`Received::Lagged`] report); `None` once the database
    /// is closed and every queued event was received.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// let mut tx = db.write()?;
    /// let id = tx.id();
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// match feed.recv() {
    ///     Some(tabula::Received::Event(commit)) => assert_eq!(commit.id, id),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn recv(&self) -> Option<Received<Commit>> {
        self.queue.recv(None)
    }

    /// [`recv`](Self::recv), waiting at most `timeout`: `None` when nothing came (or the
    /// database closed).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.abort(); // an aborted transaction is never reported
    /// assert!(feed.recv_timeout(std::time::Duration::from_millis(10)).is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Received<Commit>> {
        self.queue.recv(Some(Instant::now() + timeout))
    }

    /// The next event if one is queued, without waiting.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(16);
    /// assert!(feed.try_recv().is_none());
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?; // delivered before `commit` returns
    /// assert!(feed.try_recv().is_some());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn try_recv(&self) -> Option<Received<Commit>> {
        self.queue.poll(None).ok().flatten()
    }

    /// How many events are queued now, and the most the queue holds (its capacity).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(2);
    /// for k in 0..5u64 {
    ///     let mut tx = db.write()?;
    ///     tx.put::<Numbers>(&k, &k)?;
    ///     tx.commit()?; // never waits for the subscriber
    /// }
    /// assert_eq!(feed.queued(), (2, 2));
    /// feed.recv();
    /// feed.recv();
    /// assert!(matches!(feed.recv(), Some(tabula::Received::Lagged { missed: 3, .. })));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn queued(&self) -> (usize, usize) {
        (self.queue.len(), self.queue.limit())
    }
}

impl Drop for CommitReceiver {
    fn drop(&mut self) {
        self.queue.close();
    }
}

impl std::fmt::Debug for CommitReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (queued, capacity) = self.queued();
        f.debug_struct("CommitReceiver")
            .field("queued", &queued)
            .field("capacity", &capacity)
            .finish()
    }
}

/// A change to a watched key of table `T`, as [`KeyReceiver`] reports it.
///
/// `value` is the value of a `dupsort` table's entry (for a table with a subkey, the
/// `(subkey, value)` pair, so the subkey is its first part); for a watcher made by
/// [`Db::watch_values`] or [`Db::watch_prefix_values`], also the value a put wrote in any
/// table; `None` otherwise, and for a delete of every value of a key.
pub enum Change<T: Table> {
    /// `key` was written (put, insert, append, upsert; also when the value was already there).
    Put {
        /// The transaction.
        txn: u64,
        /// The key.
        key: T::Key,
        /// The dupsort value written; with [`Db::watch_values`], the value written in any
        /// table.
        value: Option<T::Value>,
    },
    /// `key` was deleted (in a `dupsort` table, one value, or all of them when `value` is
    /// `None`). Only deletes that found what they deleted are reported.
    Delete {
        /// The transaction.
        txn: u64,
        /// The key.
        key: T::Key,
        /// The dupsort value deleted; `None` for every value of the key.
        value: Option<T::Value>,
    },
    /// The whole table was cleared ([`Tx::clear`](crate::Tx::clear)): every watcher of the
    /// table gets it, whatever its range.
    Cleared {
        /// The transaction.
        txn: u64,
    },
}

impl<T: Table> Change<T> {
    /// The transaction that made the change.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let keys = db.watch::<Numbers>(.., 16);
    /// let mut tx = db.write()?;
    /// let id = tx.id();
    /// tx.put::<Numbers>(&1, &10)?;
    /// tx.commit()?;
    /// let Some(Ok(tabula::Received::Event(change))) = keys.try_recv() else { panic!() };
    /// assert_eq!(change.txn(), id);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn txn(&self) -> u64 {
        match self {
            Change::Put { txn, .. } | Change::Delete { txn, .. } | Change::Cleared { txn } => *txn,
        }
    }
}

impl<T: Table> std::fmt::Debug for Change<T>
where
    T::Key: std::fmt::Debug,
    T::Value: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Put { txn, key, value } => f
                .debug_struct("Put")
                .field("txn", txn)
                .field("key", key)
                .field("value", value)
                .finish(),
            Change::Delete { txn, key, value } => f
                .debug_struct("Delete")
                .field("txn", txn)
                .field("key", key)
                .field("value", value)
                .finish(),
            Change::Cleared { txn } => f.debug_struct("Cleared").field("txn", txn).finish(),
        }
    }
}

impl<T: Table> PartialEq for Change<T>
where
    T::Key: PartialEq,
    T::Value: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                Change::Put {
                    txn: a,
                    key: k,
                    value: v,
                },
                Change::Put {
                    txn: b,
                    key: l,
                    value: w,
                },
            )
            | (
                Change::Delete {
                    txn: a,
                    key: k,
                    value: v,
                },
                Change::Delete {
                    txn: b,
                    key: l,
                    value: w,
                },
            ) => a == b && k == l && v == w,
            (Change::Cleared { txn: a }, Change::Cleared { txn: b }) => a == b,
            _ => false,
        }
    }
}

/// The receiving end of a key watch on table `T` ([`Db::watch`], [`Db::watch_prefix`]): the
/// changes this process commits to the watched keys, in commit order and, within a
/// transaction, in the order they were made. Dropping it stops the recording.
///
/// Items are `Result`s: the changes are kept as stored bytes and decoded when received, so a
/// key or value that does not decode (written with `put_bytes`) is an
/// [`Error::Decode`](crate::Error::Decode) for that change alone. With the `stream` feature
/// it is also a `futures_core::Stream` of the same items.
pub struct KeyReceiver<T: Table> {
    queue: Arc<Queue<KeyEvent>>,
    _table: PhantomData<fn() -> T>,
}

impl<T: Table> KeyReceiver<T> {
    fn decode(r: Received<KeyEvent>) -> Result<Received<Change<T>>> {
        let e = match r {
            Received::Event(e) => e,
            Received::Lagged { missed, latest } => {
                return Ok(Received::Lagged { missed, latest });
            }
        };
        let txn = e.txn;
        let c = e.change;
        let value = |k: &[u8]| {
            c.dup
                .as_deref()
                .map(|v| decode_value::<T>(k, v))
                .transpose()
        };
        Ok(Received::Event(match c.op {
            Op::Clear => Change::Cleared { txn },
            Op::Put => Change::Put {
                txn,
                key: decode_key::<T>(&c.key)?,
                value: value(&c.key)?,
            },
            Op::Delete => Change::Delete {
                txn,
                key: decode_key::<T>(&c.key)?,
                value: value(&c.key)?,
            },
        }))
    }

    /// Waits for the next change (or a [`Received::Lagged`] report); `None` once the database
    /// is closed and every queued change was received.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let keys = db.watch::<Numbers>(10..20, 16);
    /// let mut tx = db.write()?;
    /// tx.put::<Numbers>(&5, &0)?; // outside the range
    /// tx.put::<Numbers>(&15, &1)?;
    /// tx.commit()?;
    /// match keys.recv() {
    ///     Some(Ok(tabula::Received::Event(tabula::Change::Put { key, .. }))) => assert_eq!(key, 15),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](crate::Error::Decode) when the stored key or value does not decode.
    pub fn recv(&self) -> Option<Result<Received<Change<T>>>> {
        self.queue.recv(None).map(Self::decode)
    }

    /// [`recv`](Self::recv), waiting at most `timeout`: `None` when nothing came.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let keys = db.watch::<Numbers>(.., 16);
    /// let mut tx = db.write()?;
    /// tx.put::<Numbers>(&1, &1)?;
    /// tx.nested(|tx| {
    ///     tx.put::<Numbers>(&2, &2)?;
    ///     Err::<(), tabula::Error>(tabula::Error::ReadOnly { op: "example", path: dir.path().into() })
    /// }).unwrap_err(); // the nested transaction aborts: its change is never reported
    /// tx.commit()?;
    /// let Some(Ok(tabula::Received::Event(tabula::Change::Put { key: 1, .. }))) = keys.recv() else { panic!() };
    /// assert!(keys.recv_timeout(std::time::Duration::from_millis(10)).is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`recv`](Self::recv).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Result<Received<Change<T>>>> {
        self.queue
            .recv(Some(Instant::now() + timeout))
            .map(Self::decode)
    }

    /// The next change if one is queued, without waiting.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let keys = db.watch::<Numbers>(.., 16);
    /// assert!(keys.try_recv().is_none());
    /// let mut tx = db.write()?;
    /// tx.put::<Numbers>(&1, &1)?;
    /// tx.delete::<Numbers>(&1)?;
    /// tx.commit()?;
    /// assert!(matches!(keys.try_recv(), Some(Ok(tabula::Received::Event(tabula::Change::Put { .. })))));
    /// assert!(matches!(keys.try_recv(), Some(Ok(tabula::Received::Event(tabula::Change::Delete { .. })))));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`recv`](Self::recv).
    pub fn try_recv(&self) -> Option<Result<Received<Change<T>>>> {
        self.queue.poll(None).ok().flatten().map(Self::decode)
    }

    /// How many changes are queued now, and the most the queue holds (its capacity).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let keys = db.watch::<Numbers>(.., 4);
    /// let mut tx = db.write()?;
    /// for k in 0..10u64 {
    ///     tx.put::<Numbers>(&k, &k)?;
    /// }
    /// tx.commit()?;
    /// assert_eq!(keys.queued(), (4, 4));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn queued(&self) -> (usize, usize) {
        (self.queue.len(), self.queue.limit())
    }
}

impl<T: Table> Drop for KeyReceiver<T> {
    fn drop(&mut self) {
        self.queue.close();
    }
}

impl<T: Table> std::fmt::Debug for KeyReceiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (queued, capacity) = self.queued();
        f.debug_struct("KeyReceiver")
            .field("table", &T::NAME)
            .field("queued", &queued)
            .field("capacity", &capacity)
            .finish()
    }
}

#[cfg(feature = "stream")]
mod stream {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::{Change, Commit, CommitReceiver, KeyReceiver, Received};
    use crate::error::Result;
    use crate::table::Table;

    impl futures_core::Stream for CommitReceiver {
        type Item = Received<Commit>;

        fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            match self.queue.poll(Some(cx.waker())) {
                Ok(Some(r)) => Poll::Ready(Some(r)),
                Ok(None) => Poll::Pending,
                Err(()) => Poll::Ready(None),
            }
        }
    }

    impl<T: Table> futures_core::Stream for KeyReceiver<T> {
        type Item = Result<Received<Change<T>>>;

        fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            match self.queue.poll(Some(cx.waker())) {
                Ok(Some(r)) => Poll::Ready(Some(Self::decode(r))),
                Ok(None) => Poll::Pending,
                Err(()) => Poll::Ready(None),
            }
        }
    }
}

/// A commit another process (or this one) made, as a [`Follower`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Followed {
    /// The latest transaction ID.
    pub id: u64,
    /// The ID the follower saw before (at [`Db::follow`], or its previous event).
    pub previous: u64,
    /// The tables written by the commits after `previous` up to `id` (each table's
    /// `ms_mod_txnid`, libmdbx's "Transaction ID of committed last modification").
    pub tables: TableSet,
    /// When the follower saw it.
    pub at: SystemTime,
}

impl Followed {
    /// Whether more than one commit happened since `previous` (IDs are not consecutive):
    /// the follower saw only the latest of them. libmdbx gives each commit the next ID, so
    /// a jump means commits happened between two polls.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut follower = db.follow()?;
    /// for k in 0..3u64 {
    ///     let mut tx = db.write()?;
    ///     tx.put::<Numbers>(&k, &k)?;
    ///     tx.commit()?;
    /// }
    /// let seen = follower.next_commit()?; // three commits, one look
    /// assert_eq!(seen.id, seen.previous + 3);
    /// assert!(seen.skipped());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn skipped(&self) -> bool {
        self.id > self.previous + 1
    }
}

/// Follows the commits of every process on a database by polling: see [`Db::follow`].
pub struct Follower<'db, S: Schema> {
    db: &'db Db<S>,
    last: u64,
    max_wait: Duration,
}

/// The first wait of a follower between polls, doubled up to its `max_wait`.
const FIRST_WAIT: Duration = Duration::from_micros(50);

impl<'db, S: Schema> Follower<'db, S> {
    /// The longest sleep between two polls (default 10 ms): the latency for a commit after a
    /// quiet spell. Under a steady commit rate the follower polls every 50–100 µs.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let follower = db.follow()?.max_wait(std::time::Duration::from_millis(1));
    /// # drop(follower);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait.max(FIRST_WAIT);
        self
    }

    /// The transaction ID seen last.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let follower = db.follow()?;
    /// assert_eq!(follower.last_id(), db.read()?.id());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn last_id(&self) -> u64 {
        self.last
    }

    /// One look: the commits since the last one seen, if any, without waiting.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut follower = db.follow()?;
    /// assert!(follower.poll()?.is_none());
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// let seen = follower.poll()?.unwrap();
    /// assert!(seen.tables.contains::<App, Names>());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Db::read`].
    pub fn poll(&mut self) -> Result<Option<Followed>> {
        let tx = self.db.read()?;
        let id = tx.id();
        if id <= self.last {
            return Ok(None);
        }
        let raw = tx.raw();
        let mut tables = TableSet::new();
        for (i, &dbi) in self.db.shared.dbis.iter().enumerate() {
            // A table libmdbx cannot stat is reported as written: better a spurious reload
            // than a missed one.
            if raw.stat(dbi).map_or(true, |st| st.mod_txnid > self.last) {
                tables.insert(i);
            }
        }
        let seen = Followed {
            id,
            previous: self.last,
            tables,
            at: SystemTime::now(),
        };
        self.last = id;
        Ok(Some(seen))
    }

    /// Waits for the next commit, polling with backoff (see [`max_wait`](Self::max_wait)).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut follower = db.follow()?;
    /// let mut tx = db.write()?;
    /// let id = tx.id();
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(follower.next_commit()?.id, id);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Db::read`].
    pub fn next_commit(&mut self) -> Result<Followed> {
        loop {
            if let Some(seen) = self.next_commit_timeout(Duration::from_secs(3600))? {
                return Ok(seen);
            }
        }
    }

    /// [`next_commit`](Self::next_commit), waiting at most `timeout`: `None` when nothing was
    /// committed.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut follower = db.follow()?;
    /// assert!(follower.next_commit_timeout(std::time::Duration::from_millis(5))?.is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Db::read`].
    pub fn next_commit_timeout(&mut self, timeout: Duration) -> Result<Option<Followed>> {
        let deadline = Instant::now() + timeout;
        let mut wait = FIRST_WAIT;
        loop {
            if let Some(seen) = self.poll()? {
                return Ok(Some(seen));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left == Duration::ZERO {
                return Ok(None);
            }
            std::thread::sleep(wait.min(left));
            wait = (wait * 2).min(self.max_wait);
        }
    }
}

impl<S: Schema> std::fmt::Debug for Follower<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("last", &self.last)
            .field("max_wait", &self.max_wait)
            .finish()
    }
}

/// The keys of table `T` that begin with `prefix`, as a filter on stored keys: a prefix is
/// never the last part of a key, so its self-delimiting form, as it appears at the front of the
/// stored key.
fn prefix_filter<T: Table>(prefix: &(impl AsPrefix<T::Key> + ?Sized)) -> hub::KeyFilter {
    let front = encode_prefix::<T::Key>(prefix);
    Box::new(move |k: &[u8]| k.starts_with(front.as_slice()))
}

/// A stored key range of table `T`, as a filter on stored keys in the table's order.
fn range_filter<T: Table>(range: &impl KeyRange<T::Key>) -> hub::KeyFilter {
    // The bounds a range read walks between, so a watch takes the keys that read sees.
    let bounds = Positions::range::<T>(range);
    Box::new(move |k: &[u8]| bounds.above_lower::<T>((k, &[])) && bounds.below_upper::<T>(k))
}

/// Watching: the commit feed, key watches and followers.
impl<S: Schema> Db<S> {
    /// A key watcher of table `T` over the stored keys `filter` takes; with the values written
    /// when `values`.
    fn key_receiver<T: Table>(
        &self,
        filter: hub::KeyFilter,
        values: bool,
        capacity: usize,
    ) -> KeyReceiver<T> {
        KeyReceiver {
            queue: self.shared.watch.watch(T::NAME, filter, values, capacity),
            _table: PhantomData,
        }
    }

    /// Subscribes to the commit feed: a [`Commit`] (ID, tables written, time) for every write
    /// transaction this process commits on this database from now on, in commit order, after
    /// the commit returned — so as durable as the sync mode makes it. Aborted and failed
    /// commits, and transactions that changed nothing, are never reported. A bulk load
    /// reports each batch it commits.
    ///
    /// "From now on", for this feed and for key watchers ([`watch`](Db::watch)) alike: the
    /// first transaction a receiver reports is the first write transaction that begins after
    /// the receiver was made. A write transaction begins when [`write`](Db::write) returns it;
    /// one already open when the receiver is made (in this thread or another) is never
    /// reported, whatever it writes afterwards; each batch of a bulk load is a transaction
    /// that begins when the batch before it commits.
    ///
    /// `capacity` bounds the queue (at least 1; [`DEFAULT_WATCH_CAPACITY`] is a fair start).
    /// A commit never waits for a subscriber: when its queue is full, events are dropped and
    /// the receiver gets the queued events, then one [`Received::Lagged`] with how many were
    /// dropped and the latest ID, then newer events (those committed after the receiver made
    /// room again). Other processes' commits are not in the feed: see
    /// [`follow`](Db::follow).
    ///
    /// Costs nothing while nobody subscribes (one relaxed load per commit); with a
    /// subscriber, one `mdbx_dbi_flags_ex` per table per commit.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let feed = db.subscribe(tabula::DEFAULT_WATCH_CAPACITY);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// let Some(tabula::Received::Event(commit)) = feed.recv() else { panic!() };
    /// assert!(commit.tables.contains::<App, Names>());
    /// assert_eq!(db.read()?.id(), commit.id);
    ///
    /// // Made while a write transaction is open: that one is not reported.
    /// let mut open = db.write()?;
    /// let late = db.subscribe(16);
    /// open.put::<Names>(&2, &"two".to_string())?;
    /// open.commit()?;
    /// assert!(late.try_recv().is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn subscribe(&self, capacity: usize) -> CommitReceiver {
        CommitReceiver {
            queue: self.shared.watch.subscribe(capacity),
        }
    }

    /// Watches the keys of table `T` in `range`: every put and every effective delete of such
    /// a key that this process commits from now on (from the first write transaction that
    /// begins after this call, as for [`subscribe`](Db::subscribe)), with the typed key (and,
    /// in a `dupsort` table, the value, whose front is the subkey), in commit order; a
    /// [`clear`](crate::Tx::clear) of the table too. Changes made in a nested transaction that
    /// aborted are not reported. Bounded like [`subscribe`](Db::subscribe), counting changes.
    ///
    /// Keys are recorded only while someone watches, and only for watched tables: without a
    /// watcher a write pays one relaxed load. Keys are recorded by the typed write paths of
    /// this process (`Tx`, write cursors, appenders, bulk loads); the schema-less API
    /// ([`untyped`](crate::untyped)) and other processes are not seen. `T` may be an
    /// [`Index`](crate::Index): its entries are reported as the writes of its source table
    /// add and remove them (the value is the source row's key; an update that keeps a row's
    /// index key writes nothing there), and a `clear` of the source table clears it.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let keys = db.watch::<Topics>(1..=1, 16);
    /// let mut tx = db.write()?;
    /// tx.put::<Topics>(&1, &"rust".to_string())?;
    /// tx.put::<Topics>(&2, &"c".to_string())?; // another key
    /// tx.commit()?;
    /// match keys.recv() {
    ///     Some(Ok(tabula::Received::Event(tabula::Change::Put { key, value, .. }))) => {
    ///         assert_eq!((key, value.as_deref()), (1, Some("rust")));
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// assert!(keys.try_recv().is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn watch<T: Table>(&self, range: impl KeyRange<T::Key>, capacity: usize) -> KeyReceiver<T>
    where
        S: Contains<T>,
    {
        self.key_receiver(range_filter::<T>(&range), false, capacity)
    }

    /// [`watch`](Db::watch), and each put's change carries the value written, typed
    /// (`Change::Put { value: Some(..) }`) in every table, not only `dupsort` ones: exactly the
    /// value committed under the key by that write, so a watcher needs no read of its own
    /// (which could see a newer value). The cost: each watched put copies its value into the
    /// watcher's queue (the `watch` workload's `_values` rows), and a value written into the
    /// page after the call ([`Tx::put_reserve`](crate::Tx::put_reserve)) is read back once.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let names = db.watch_values::<Names>(.., 16);
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.put::<Names>(&1, &"uno".to_string())?; // a second write: a second change
    /// tx.delete::<Names>(&1)?;
    /// tx.commit()?;
    /// let value = |c| match c {
    ///     Some(Ok(tabula::Received::Event(tabula::Change::Put { value, .. }))) => value,
    ///     other => panic!("{other:?}"),
    /// };
    /// assert_eq!(value(names.recv()).as_deref(), Some("one"));
    /// assert_eq!(value(names.recv()).as_deref(), Some("uno"));
    /// assert!(matches!(names.recv(), Some(Ok(tabula::Received::Event(tabula::Change::Delete { value: None, .. })))));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn watch_values<T: Table>(
        &self,
        range: impl KeyRange<T::Key>,
        capacity: usize,
    ) -> KeyReceiver<T>
    where
        S: Contains<T>,
    {
        self.key_receiver(range_filter::<T>(&range), true, capacity)
    }

    /// [`watch`](Db::watch) for the keys of `T` that begin with `prefix` (the keys
    /// [`Reads::prefix`](crate::Reads::prefix) walks).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = (String, u64), value = u64)]
    /// struct Balances;
    /// # #[derive(Schema)]
    /// # struct App(Balances);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let alice = db.watch_prefix::<Balances>("alice", 16);
    /// let mut tx = db.write()?;
    /// tx.put::<Balances>(&("alice".to_string(), 1), &10)?;
    /// tx.put::<Balances>(&("alicia".to_string(), 1), &20)?; // not alice's
    /// tx.commit()?;
    /// let Some(Ok(tabula::Received::Event(tabula::Change::Put { key, .. }))) = alice.recv() else { panic!() };
    /// assert_eq!(key, ("alice".to_string(), 1));
    /// assert!(alice.try_recv().is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn watch_prefix<T: Table>(
        &self,
        prefix: &(impl AsPrefix<T::Key> + ?Sized),
        capacity: usize,
    ) -> KeyReceiver<T>
    where
        S: Contains<T>,
    {
        self.key_receiver(prefix_filter::<T>(prefix), false, capacity)
    }

    /// [`watch_prefix`](Db::watch_prefix) with the values written, as
    /// [`watch_values`](Db::watch_values) gives them.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = (String, u64), value = u64)]
    /// # struct Balances;
    /// # #[derive(Schema)]
    /// # struct App(Balances);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let alice = db.watch_prefix_values::<Balances>("alice", 16);
    /// let mut tx = db.write()?;
    /// tx.put::<Balances>(&("alice", 1), &10)?;
    /// tx.put::<Balances>(&("bob", 1), &20)?; // not alice's
    /// tx.commit()?;
    /// let Some(Ok(tabula::Received::Event(tabula::Change::Put { value, .. }))) = alice.recv() else { panic!() };
    /// assert_eq!(value, Some(10));
    /// assert!(alice.try_recv().is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn watch_prefix_values<T: Table>(
        &self,
        prefix: &(impl AsPrefix<T::Key> + ?Sized),
        capacity: usize,
    ) -> KeyReceiver<T>
    where
        S: Contains<T>,
    {
        self.key_receiver(prefix_filter::<T>(prefix), true, capacity)
    }

    /// Follows the commits of every process on this database (a reader process following a
    /// writer process): [`Follower::next_commit`] waits for the next commit and says its ID, the ID
    /// seen before (a jump of more than one is [`Followed::skipped`]: several commits
    /// between two looks) and the tables written since.
    ///
    /// libmdbx has no way to wake a process when another commits, so a follower polls: each
    /// look refreshes a parked read transaction (as [`read`](Db::read) does) and compares
    /// IDs, and it sleeps between looks from 50 µs doubling up to
    /// [`max_wait`](Follower::max_wait) (10 ms), back to 50 µs after each commit. It sees
    /// only committed transactions, never one out of order. Which keys changed is not known
    /// across processes ([`watch`](Db::watch) is in-process).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut follower = db.follow()?; // in practice: in another process
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// let seen = follower.next_commit()?;
    /// assert_eq!(seen.id, follower.last_id());
    /// assert!(seen.tables.contains::<App, Names>());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read`](Db::read).
    pub fn follow(&self) -> Result<Follower<'_, S>> {
        let last = self.read()?.id();
        Ok(Follower {
            db: self,
            last,
            max_wait: Duration::from_millis(10),
        })
    }
}
