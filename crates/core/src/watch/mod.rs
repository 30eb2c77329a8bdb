//! Watching committed changes: the receivers of the commit feed ([`Db::subscribe`]) and of
//! typed key changes ([`Db::watch`], [`Db::watch_prefix`]); `Db`'s watching methods and the
//! cross-process [`Follower`](crate::Follower) are in `db/watch.rs`. `docs/design.md`
//! ("Watching committed changes") explains the design; the hub every database keeps (queues,
//! filters, the pending changes of the write transaction) is `hub.rs`, below the
//! transactions.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::Result;
pub use crate::hub::{Commit, Received, TableSet};
use crate::hub::{KeyEvent, Op, Queue};
#[cfg(doc)]
use crate::state::Db;
use crate::stored::{decode_key, decode_value};
use crate::table::{Contains, Table};

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
    /// The receiver of `queue`, a subscription of the hub.
    pub(crate) fn new(queue: Arc<Queue<Commit>>) -> Self {
        CommitReceiver { queue }
    }

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
    /// The receiver of `queue`, a key watch of the hub on table `T`.
    pub(crate) fn new(queue: Arc<Queue<KeyEvent>>) -> Self {
        KeyReceiver {
            queue,
            _table: PhantomData,
        }
    }

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
