//! Watching, on [`Db`]: the commit feed ([`Db::subscribe`]), key watches ([`Db::watch`] and the
//! like) and, across processes, a [`Follower`] ([`Db::follow`]), which reads through the
//! database. The receivers are in `watch/`; the hub every database keeps is `hub.rs`.

use std::time::{Duration, Instant, SystemTime};

use crate::codec::{AsPrefix, KeyRange, encode_prefix};
use crate::error::Result;
use crate::hub::{self, TableSet};
use crate::iter::Positions;
use crate::state::Db;
use crate::table::{Contains, Schema, Table};
#[cfg(doc)]
use crate::watch::{Commit, DEFAULT_WATCH_CAPACITY, Received};
use crate::watch::{CommitReceiver, KeyReceiver};

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
        KeyReceiver::new(self.shared.watch().watch(T::NAME, filter, values, capacity))
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
        CommitReceiver::new(self.shared.watch().subscribe(capacity))
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
    /// # let dir = tabula::__doc::temp_dir();
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        for (i, &dbi) in self.db.shared.dbis().iter().enumerate() {
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
