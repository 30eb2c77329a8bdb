//! Owned read transactions: [`OwnedTx`], a `'static` read transaction from an `Arc<Db>`, and
//! [`OwnedIter`], its lazy iterator over a range, which may own the transaction.
//!
//! An owned transaction never lends out bytes of its snapshot beyond one call: values come out
//! decoded or copied, and iterators read ahead in small batches. So between two calls nothing
//! points into its snapshot, which is what lets it be cut then (for its age, or by a write that
//! needs the pages it pins) without a lock on the read path: see `engine::readers`.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::time::Duration;

use crate::codec::{AsKey, HasPrefix, Key, ValueRef};
use crate::engine::{self, CuttableTxn, Dbi, RawTxn, Refused, op};
use crate::error::{At, Error, Result};
use crate::iter::{Iter, Lazy, Positions};
use crate::mode::ATransactionIsUsedByOneThreadAtATime;
use crate::state::Db;
use crate::stored::cmp_keys;
use crate::stored::{dbi_of, decode_key, decode_value, decode_value_ref, lookup, with_key};
use crate::table::{Contains, Schema, Table};
use crate::telemetry;
use crate::txn::{TableStat, warn_long_read};

/// The transaction an [`OwnedTx`] holds: registered for cutting when the database has
/// long-reader control ([`Options::max_read_age`](crate::Options::max_read_age) or
/// [`Options::on_slow_reader`](crate::Options::on_slow_reader)), plain otherwise.
enum Held {
    Plain(RawTxn),
    Cuttable(CuttableTxn),
}

/// A read transaction that owns its share of the database: `'static`, so it can be kept in a
/// struct, moved into a spawned task or thread, and iterated lazily
/// ([`into_range`](Self::into_range)) with no lifetime tying it to a stack frame. Begun by
/// [`Db::read_owned`] on an `Arc<Db>`, from the same pool of parked transactions as
/// [`Db::read`], at the same cost plus one reference count.
///
/// It reads one snapshot for its whole life, like a [`Tx`](crate::Tx). What differs: values
/// come out owned (decoded, or copied by [`get_bytes`](Self::get_bytes)), never borrowed from
/// the snapshot, and iterators read ahead in batches of up to 64 entries. That is what allows
/// long-reader control: with [`Options::max_read_age`](crate::Options::max_read_age) or
/// [`Options::on_slow_reader`](crate::Options::on_slow_reader), an owned transaction can be cut
/// between two calls (its snapshot released, so a writer reuses the pages it pinned instead of
/// growing the file), and its next call fails with [`Error::ReadTxnTimedOut`].
///
/// **`Send`, not `Sync`.** It may move to another thread or task between calls (the environment
/// does not tie read transactions to threads), but two threads may not use it at once: libmdbx
/// requires one thread at a time per transaction, and making it `Sync` would put a lock (or an
/// atomic handshake that can fail) on every read. Share the `Arc<Db>` instead and begin one
/// owned transaction per task: they come from the pool in well under a microsecond.
///
/// Dropping it returns the transaction to the pool.
///
/// ```
/// # use tabula::{Options, Schema, Table};
/// # #[derive(Table)]
/// # #[table(key = u64, value = String)]
/// # struct Names;
/// # #[derive(Schema)]
/// # struct App(Names);
/// # let dir = tempfile::tempdir().unwrap();
/// use std::sync::Arc;
///
/// let db = Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
/// let mut tx = db.write()?;
/// tx.put::<Names>(&1, &"one".to_string())?;
/// tx.commit()?;
///
/// struct Session { snapshot: tabula::OwnedTx<App> } // no lifetime
/// let session = Session { snapshot: db.read_owned()? };
/// let reader = std::thread::spawn(move || session.snapshot.get::<Names>(&1));
/// assert_eq!(reader.join().unwrap()?.as_deref(), Some("one"));
/// # Ok::<(), tabula::Error>(())
/// ```
pub struct OwnedTx<S: Schema> {
    // The marker comes first: the compiler reports the first field that is not `Sync`, and
    // names the rule as it does for a `Tx` (a `Cell` is `Send` but not `Sync`).
    _one_thread_at_a_time: PhantomData<std::cell::Cell<ATransactionIsUsedByOneThreadAtATime>>,
    held: Option<Held>,
    /// When it began (coarse ms clock; 0 when nothing needs its age).
    started_ms: u64,
    db: Arc<Db<S>>,
}

impl<S: Schema> Db<S> {
    /// Begins an owned read transaction on the latest committed snapshot: an [`OwnedTx`],
    /// `'static` and `Send`, for a struct, a spawned task or a lazy iterator
    /// ([`OwnedTx::into_range`]). Same pool and cost as [`read`](Self::read).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// use std::sync::Arc;
    ///
    /// let db = Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let mut tx = db.write()?;
    /// for n in 1..=3u64 {
    ///     tx.put::<Names>(&n, &n.to_string())?;
    /// }
    /// tx.commit()?;
    ///
    /// let entries = db.read_owned()?.into_range::<Names>(2..); // owns the transaction
    /// let later = std::thread::spawn(move || entries.collect::<tabula::Result<Vec<_>>>());
    /// assert_eq!(later.join().unwrap()?, [(2, "2".to_string()), (3, "3".to_string())]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    #[inline]
    pub fn read_owned(self: &Arc<Self>) -> Result<OwnedTx<S>> {
        self.begin_read_then(|raw| {
            let table = self.shared.env.cut_table();
            let started_ms = if table.is_some() || self.shared.read_clock {
                engine::coarse_now_ms()
            } else {
                0
            };
            let held = match table {
                Some(table) => match table.register(raw, started_ms) {
                    Ok(cuttable) => Held::Cuttable(cuttable),
                    Err(raw) => Held::Plain(raw),
                },
                None => Held::Plain(raw),
            };
            OwnedTx {
                _one_thread_at_a_time: PhantomData,
                held: Some(held),
                started_ms,
                db: Arc::clone(self),
            }
        })
    }
}

impl<S: Schema> OwnedTx<S> {
    #[inline]
    fn held(&self) -> &Held {
        // `held` is only taken by `drop`.
        self.held.as_ref().expect("transaction is live")
    }

    /// Runs `f` on the transaction within one call: a cuttable transaction is not cut while
    /// `f` runs, and nothing `f` borrows from it outlives the call.
    #[inline]
    fn with_txn<R>(&self, f: impl FnOnce(&RawTxn) -> Result<R>) -> Result<R> {
        match self.held() {
            Held::Plain(raw) => f(raw),
            Held::Cuttable(cuttable) => match cuttable.enter() {
                Ok(using) => f(&using),
                Err(refused) => Err(self.refused(refused)),
            },
        }
    }

    /// The transaction, lent for as long as `self` is borrowed, for reads whose results borrow
    /// its pages ([`get_ref`](Self::get_ref), [`get_lazy`](Self::get_lazy)). A cuttable
    /// transaction is pinned (`CuttableTxn::pin`): from the first such read on it is never cut,
    /// neither for its age nor by a writer, until it is dropped.
    fn lend(&self) -> Result<&RawTxn> {
        match self.held() {
            Held::Plain(raw) => Ok(raw),
            Held::Cuttable(cuttable) => cuttable.pin().map_err(|refused| self.refused(refused)),
        }
    }

    #[cold]
    #[inline(never)]
    fn refused(&self, refused: Refused) -> Error {
        match refused {
            Refused::Cut { by_writer } => {
                let limit = self
                    .db
                    .shared
                    .env
                    .cut_table()
                    .map(|t| t.max_age_ms())
                    .filter(|&ms| ms != u64::MAX)
                    .map(Duration::from_millis);
                Error::ReadTxnTimedOut {
                    txn_id: self.snapshot(),
                    age: self.age(),
                    limit,
                    by_writer,
                }
            }
            Refused::Busy => Error::Env {
                op: "use an owned read transaction that is already in a call",
                path: self.db.shared.path.clone(),
                code: engine::Code::BUSY.into(),
            },
        }
    }

    fn snapshot(&self) -> u64 {
        match self.held() {
            Held::Plain(raw) => raw.id(),
            Held::Cuttable(cuttable) => cuttable.snapshot(),
        }
    }

    /// The database it reads.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let tx = db.read_owned()?;
    /// assert!(std::sync::Arc::ptr_eq(tx.db(), &db));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn db(&self) -> &Arc<Db<S>> {
        &self.db
    }

    /// The snapshot (transaction ID) it reads, fixed for its life.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let tx = db.read_owned()?;
    /// let mut w = db.write()?;
    /// w.put::<Names>(&1, &"one".to_string())?;
    /// w.commit()?;
    /// assert_eq!(db.read()?.id(), tx.id() + 1); // it still reads the snapshot before
    /// assert_eq!(tx.get::<Names>(&1)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn id(&self) -> u64 {
        self.snapshot()
    }

    /// How long it has been open (a coarse clock: a few ms of resolution). Zero when nothing
    /// measures it: no [`Options::long_read_warning`](crate::Options::long_read_warning), no
    /// long-reader control and no `metrics` feature.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// use std::time::Duration;
    ///
    /// let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let tx = db.read_owned()?;
    /// std::thread::sleep(Duration::from_millis(30));
    /// assert!(tx.age() >= Duration::from_millis(20)); // the default warning measures it
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn age(&self) -> Duration {
        if self.started_ms == 0 {
            return Duration::ZERO;
        }
        Duration::from_millis(engine::coarse_now_ms().saturating_sub(self.started_ms))
    }

    /// Reads the value stored under `key`, decoded (in a `dupsort` table, its first value).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// assert_eq!(tx.get::<Names>(&1)?.as_deref(), Some("one"));
    /// assert_eq!(tx.get::<Names>(&2)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ReadTxnTimedOut`] when it was cut; otherwise as [`Tx::get`](crate::Tx::get).
    #[inline]
    pub fn get<T: Table>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<Option<T::Value>>
    where
        S: Contains<T>,
    {
        self.with_txn(|raw| {
            lookup::<S, T, _>(&self.db, raw, key, |k, v| {
                v.map(|v| decode_value::<T>(k, v)).transpose()
            })
        })
    }

    /// A copy of the stored bytes of the value under `key` (an owned transaction lends out
    /// nothing; [`Tx::get_bytes`](crate::Tx::get_bytes) borrows them instead).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// assert_eq!(tx.get_bytes::<Names>(&1)?, Some(vec![3, b'o', b'n', b'e']));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ReadTxnTimedOut`] when it was cut; [`Error::Mdbx`] on libmdbx failure.
    pub fn get_bytes<T: Table>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
    ) -> Result<Option<Vec<u8>>>
    where
        S: Contains<T>,
    {
        self.with_txn(|raw| lookup::<S, T, _>(&self.db, raw, key, |_, v| Ok(v.map(<[u8]>::to_vec))))
    }

    /// The value under `key` decoded in place, borrowing the stored bytes for as long as the
    /// owned transaction is borrowed: `&[u8]` for a table with `codec = Raw`, `&T` for
    /// `codec = Pod<T>` (a [`ValueRef`] codec), as [`Tx::get_ref`](crate::Tx::get_ref).
    ///
    /// An owned transaction otherwise lends nothing out beyond a call, which is what lets
    /// long-reader control ([`Options::max_read_age`](crate::Options::max_read_age),
    /// [`Options::on_slow_reader`](crate::Options::on_slow_reader)) cut it between calls. A
    /// borrowed read gives that up: from the first one on, the transaction is never cut (a
    /// writer that needs the pages it pins grows the file instead, as with a [`Tx`](crate::Tx))
    /// until it is dropped. Without long-reader control nothing changes.
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, value = Vec<u8>, codec = Raw)]
    /// struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Blobs>(&1, &b"abc".to_vec())?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// let bytes: &[u8] = tx.get_ref::<Blobs>(&1)?.unwrap(); // the page's bytes, not a copy
    /// assert_eq!(bytes, b"abc");
    /// assert!(tx.get_ref::<Blobs>(&2)?.is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ReadTxnTimedOut`] when it was cut before; [`Error::Decode`] when the stored
    /// bytes are not a value of the codec; [`Error::Mdbx`] on libmdbx failure.
    #[inline]
    pub fn get_ref<T: Table>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
    ) -> Result<Option<<T::Codec as ValueRef>::Ref<'_>>>
    where
        S: Contains<T>,
        T::Codec: ValueRef,
    {
        lookup::<S, T, _>(&self.db, self.lend()?, key, |k, v| {
            v.map(|v| decode_value_ref::<T>(k, v)).transpose()
        })
    }

    /// The value under `key` read but not decoded: a [`Lazy`] holding the stored bytes,
    /// borrowed for as long as the owned transaction is, decoded when asked
    /// ([`Lazy::decode`]), as [`Tx::get_lazy`](crate::Tx::get_lazy). Works with every codec.
    /// Like [`get_ref`](Self::get_ref), it keeps the transaction from being cut from then on.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// let lazy = tx.get_lazy::<Names>(&1)?.expect("present");
    /// assert_eq!(lazy.bytes().len(), 4); // not decoded yet
    /// assert_eq!(lazy.decode()?, "one");
    /// assert!(tx.get_lazy::<Names>(&2)?.is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ReadTxnTimedOut`] when it was cut before; [`Error::Mdbx`] on libmdbx failure
    /// (decode errors come from [`Lazy::decode`]).
    #[inline]
    pub fn get_lazy<T: Table>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
    ) -> Result<Option<Lazy<'_, T>>>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(&self.db);
        let raw = self.lend()?;
        // The key is kept for a decode error's message: the stored copy in the page.
        with_key::<T, _, _>(key, |k| match raw.get_pair(dbi, k) {
            Ok(Some((stored_key, v))) => Ok(Some(Lazy::new(stored_key, v))),
            Ok(None) => Ok(None),
            Err(code) => Err(self.db.shared.fail(code, At::of::<T>("get").key(k))),
        })
    }

    /// Whether `key` is present.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// assert!(tx.contains_key::<Names>(&1)?);
    /// assert!(!tx.contains_key::<Names>(&2)?);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`get_bytes`](Self::get_bytes).
    pub fn contains_key<T: Table>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<bool>
    where
        S: Contains<T>,
    {
        self.with_txn(|raw| lookup::<S, T, _>(&self.db, raw, key, |_, v| Ok(v.is_some())))
    }

    /// Entry and page counts of the table.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// assert_eq!(tx.stat::<Names>()?.entries, 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ReadTxnTimedOut`] when it was cut; [`Error::Mdbx`] on libmdbx failure.
    pub fn stat<T: Table>(&self) -> Result<TableStat>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(&self.db);
        let shared = &self.db.shared;
        self.with_txn(|raw| {
            raw.stat(dbi)
                .map(TableStat::from_raw)
                .map_err(|code| shared.fail(code, At::of::<T>("stat")))
        })
    }

    /// Number of entries in the table (in a `dupsort` table, key-value pairs).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let tx = db.read_owned()?;
    /// assert_eq!(tx.len::<Names>()?, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`stat`](Self::stat).
    pub fn len<T: Table>(&self) -> Result<u64>
    where
        S: Contains<T>,
    {
        Ok(self.stat::<T>()?.entries)
    }

    /// Whether the table is empty.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let tx = db.read_owned()?;
    /// assert!(tx.is_empty::<Names>()?);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`stat`](Self::stat).
    pub fn is_empty<T: Table>(&self) -> Result<bool>
    where
        S: Contains<T>,
    {
        Ok(self.len::<T>()? == 0)
    }

    /// The entries whose keys fall in `range`, in key order, read lazily; borrows the
    /// transaction ([`into_range`](Self::into_range) owns it).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # for n in 1..=9u64 { tx.put::<Names>(&n, &n.to_string())?; }
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// let keys: Vec<u64> = tx.range::<Names>(3..6).map(|e| e.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [3, 4, 5]);
    /// let last = tx.range::<Names>(..).reversed().next().unwrap()?;
    /// assert_eq!(last.0, 9);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn range<T: Table>(&self, range: impl RangeBounds<T::Key>) -> OwnedIter<S, T, &Self>
    where
        S: Contains<T>,
    {
        OwnedIter::new(self, Positions::range::<T, _>(range))
    }

    /// The entries whose keys fall in `range`, read lazily by an iterator that owns this
    /// transaction: `'static`, and `Send` when the key and value types are, so it can be
    /// returned from a function, kept in a struct or moved into a task. Use `..` for the whole
    /// table.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # for n in 1..=200u64 { tx.put::<Names>(&n, &n.to_string())?; }
    /// # tx.commit()?;
    /// fn all_names(db: &std::sync::Arc<tabula::Db<App>>) -> tabula::Result<tabula::OwnedIter<App, Names>> {
    ///     Ok(db.read_owned()?.into_range::<Names>(..))
    /// }
    /// let names = all_names(&db)?;
    /// assert_eq!(names.count(), 200);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn into_range<T: Table>(self, range: impl RangeBounds<T::Key>) -> OwnedIter<S, T>
    where
        S: Contains<T>,
    {
        OwnedIter::new(self, Positions::range::<T, _>(range))
    }

    /// The entries whose composite key starts with `prefix`, read lazily; borrows the
    /// transaction.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = (String, u64), value = u64)]
    /// # struct Balances;
    /// # #[derive(Schema)]
    /// # struct App(Balances);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Balances>(&("alice", 1), &10)?;
    /// # tx.put::<Balances>(&("alice", 2), &20)?;
    /// # tx.put::<Balances>(&("bob", 1), &5)?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// let alice: Vec<u64> = tx
    ///     .prefix::<Balances, _>(&"alice".to_string())
    ///     .map(|e| e.map(|(_, v)| v))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(alice, [10, 20]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn prefix<T: Table, P: Key>(&self, prefix: &P) -> OwnedIter<S, T, &Self>
    where
        S: Contains<T>,
        T::Key: HasPrefix<P>,
    {
        OwnedIter::new(self, Positions::prefix::<P>(prefix))
    }

    /// The entries whose composite key starts with `prefix`, read lazily by an iterator that
    /// owns this transaction.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = (String, u64), value = u64)]
    /// # struct Balances;
    /// # #[derive(Schema)]
    /// # struct App(Balances);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Balances>(&("alice", 1), &10)?;
    /// # tx.put::<Balances>(&("bob", 1), &5)?;
    /// # tx.commit()?;
    /// let bob = db.read_owned()?.into_prefix::<Balances, _>(&"bob".to_string());
    /// let found = std::thread::spawn(move || bob.collect::<tabula::Result<Vec<_>>>());
    /// assert_eq!(found.join().unwrap()?, [(("bob".to_string(), 1), 5)]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn into_prefix<T: Table, P: Key>(self, prefix: &P) -> OwnedIter<S, T>
    where
        S: Contains<T>,
        T::Key: HasPrefix<P>,
    {
        OwnedIter::new(self, Positions::prefix::<P>(prefix))
    }
}

impl<S: Schema> Drop for OwnedTx<S> {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        if self.started_ms != 0 {
            let age_ms = engine::coarse_now_ms().saturating_sub(self.started_ms);
            let threshold = self.db.shared.long_read_ms;
            if age_ms >= threshold {
                warn_long_read(self.snapshot_of(&held), age_ms);
            }
            telemetry::read_txn_ended(&self.db.telemetry, age_ms);
        }
        let raw = match held {
            Held::Plain(raw) => raw,
            Held::Cuttable(cuttable) => {
                if cuttable.is_cut() {
                    telemetry::read_txn_cut(&self.db.telemetry);
                }
                cuttable.into_txn()
            }
        };
        self.db.park(raw);
    }
}

impl<S: Schema> OwnedTx<S> {
    fn snapshot_of(&self, held: &Held) -> u64 {
        match held {
            Held::Plain(raw) => raw.id(),
            Held::Cuttable(cuttable) => cuttable.snapshot(),
        }
    }
}

impl<S: Schema> std::fmt::Debug for OwnedTx<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedTx")
            .field("id", &self.held.as_ref().map(|h| self.snapshot_of(h)))
            .field("age", &self.age())
            .finish()
    }
}

/// Entries read ahead per call of an [`OwnedIter`].
const BATCH_ENTRIES: usize = 64;
/// Value bytes read ahead per call of an [`OwnedIter`], at most (one entry always fits).
const BATCH_BYTES: usize = 256 << 10;

/// A lazy iterator over entries of table `T` of an owned read transaction, in key order (or
/// reverse, [`reversed`](Self::reversed)). Yields `Result<(key, value)>`.
///
/// `H` is what holds the transaction: the [`OwnedTx`] itself ([`OwnedTx::into_range`],
/// [`OwnedTx::into_prefix`]: `'static`) or a reference to it ([`OwnedTx::range`],
/// [`OwnedTx::prefix`]). It reads ahead in batches of up to 64 entries (and 256 KiB of values),
/// each in one call on the transaction, and finds its place again by key for the next batch,
/// so nothing points into the snapshot between batches: a transaction cut between two batches
/// ends the iteration with [`Error::ReadTxnTimedOut`].
pub struct OwnedIter<S: Schema, T: Table, H: Borrow<OwnedTx<S>> = OwnedTx<S>> {
    holder: H,
    dbi: Dbi,
    bounds: Positions,
    /// The last entry read (stored key, stored value), where the next batch starts after.
    resume: Option<(Vec<u8>, Vec<u8>)>,
    batch: VecDeque<Result<(T::Key, T::Value)>>,
    reverse: bool,
    done: bool,
    _schema: PhantomData<fn() -> S>,
}

impl<S: Schema, T: Table, H: Borrow<OwnedTx<S>>> OwnedIter<S, T, H>
where
    S: Contains<T>,
{
    fn new(holder: H, bounds: Positions) -> Self {
        let dbi = dbi_of::<S, T>(&holder.borrow().db);
        OwnedIter {
            holder,
            dbi,
            bounds,
            resume: None,
            batch: VecDeque::new(),
            reverse: false,
            done: false,
            _schema: PhantomData,
        }
    }

    /// The same entries from the other end: in descending key order (in a `dupsort` table,
    /// values of a key in descending order too). Starts over: entries already yielded come
    /// again.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # for n in 1..=5u64 { tx.put::<Names>(&n, &n.to_string())?; }
    /// # tx.commit()?;
    /// let keys: Vec<u64> = db
    ///     .read_owned()?
    ///     .into_range::<Names>(2..=4)
    ///     .reversed()
    ///     .map(|e| e.map(|(k, _)| k))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [4, 3, 2]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn reversed(mut self) -> Self {
        self.reverse = !self.reverse;
        self.resume = None;
        self.batch.clear();
        self.done = false;
        self
    }

    /// The transaction it reads.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let iter = db.read_owned()?.into_range::<Names>(..);
    /// assert_eq!(iter.tx().len::<Names>()?, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn tx(&self) -> &OwnedTx<S> {
        self.holder.borrow()
    }

    /// Reads the next batch into `self.batch` within one call on the transaction.
    fn fill(&mut self) {
        let OwnedIter {
            holder,
            dbi,
            bounds,
            resume,
            batch,
            reverse,
            done,
            ..
        } = self;
        let (dbi, reverse) = (*dbi, *reverse);
        let tx: &OwnedTx<S> = (*holder).borrow();
        let shared = &tx.db.shared;
        let result = tx.with_txn(|raw| {
            let mut cursor = raw
                .cursor_cached(dbi, &shared.cursors)
                .map_err(|code| shared.fail(code, At::of::<T>("open cursor")))?;
            let fail = |code| shared.fail(code, At::of::<T>("iterate"));
            let step = if reverse { op::PREV } else { op::NEXT };
            let mut entry = match resume.as_ref() {
                Some((key, value)) => {
                    // The snapshot is fixed, so the last entry read is still there: find it
                    // and step past it.
                    let found = if T::FLAGS.dupsort {
                        cursor.get(op::GET_BOTH_RANGE, Some(key), Some(value))
                    } else {
                        cursor.get(op::SET_RANGE, Some(key), None)
                    }
                    .map_err(fail)?;
                    match found {
                        Some((k, v))
                            if k == key.as_slice()
                                && (!T::FLAGS.dupsort || v == value.as_slice()) =>
                        {
                            cursor.get(step, None, None).map_err(fail)?
                        }
                        // Not found again (impossible on a fixed snapshot): stop rather than
                        // yield entries twice.
                        _ => None,
                    }
                }
                None if reverse => {
                    first_from_upper::<T>(&mut cursor, &bounds.upper).map_err(fail)?
                }
                None => first_from_lower::<T>(&mut cursor, &bounds.lower).map_err(fail)?,
            };
            let mut bytes = 0;
            let mut last = None;
            while let Some((k, v)) = entry {
                if !within::<T>(bounds, reverse, k) {
                    entry = None;
                    break;
                }
                batch.push_back(
                    decode_key::<T>(k).and_then(|key| Ok((key, decode_value::<T>(k, v)?))),
                );
                last = Some((k, v));
                bytes += v.len();
                if batch.len() >= BATCH_ENTRIES || bytes >= BATCH_BYTES {
                    break;
                }
                entry = cursor.get(step, None, None).map_err(fail)?;
            }
            let more = entry.is_some();
            if let Some((k, v)) = last {
                let (key, value) = resume.get_or_insert_with(Default::default);
                key.clear();
                key.extend_from_slice(k);
                value.clear();
                value.extend_from_slice(v);
            }
            Ok(more)
        });
        match result {
            Ok(more) => *done = !more,
            Err(e) => {
                batch.push_back(Err(e));
                *done = true;
            }
        }
    }
}

/// Whether a stored key of table `T` is inside `bounds` on the side the iteration moves
/// towards (the upper bound going forward, the lower one in reverse).
fn within<T: Table>(bounds: &Positions, reverse: bool, key: &[u8]) -> bool {
    let (bound, past) = if reverse {
        (&bounds.lower, Ordering::Less)
    } else {
        (&bounds.upper, Ordering::Greater)
    };
    match bound {
        Bound::Unbounded => true,
        Bound::Included(b) => cmp_keys::<T>(key, b.as_slice()) != past,
        Bound::Excluded(b) => {
            let o = cmp_keys::<T>(key, b.as_slice());
            o != past && o != Ordering::Equal
        }
    }
}

/// Positions a cursor on the first entry at or after the lower bound.
fn first_from_lower<'t, T: Table>(
    cursor: &mut engine::RawCursor<'t>,
    lower: &Bound<crate::codec::KeyBuf>,
) -> std::result::Result<Option<engine::Pair<'t>>, engine::Code> {
    match lower {
        Bound::Unbounded => cursor.get(op::FIRST, None, None),
        Bound::Included(k) => cursor.get(op::SET_RANGE, Some(k.as_slice()), None),
        Bound::Excluded(k) => match cursor.get(op::SET_RANGE, Some(k.as_slice()), None)? {
            Some((found, _)) if cmp_keys::<T>(found, k.as_slice()).is_eq() => {
                cursor.get(op::NEXT_NODUP, None, None)
            }
            other => Ok(other),
        },
    }
}

/// Positions a cursor on the last entry at or before the upper bound (in a `dupsort` table,
/// the last value of the last key).
fn first_from_upper<'t, T: Table>(
    cursor: &mut engine::RawCursor<'t>,
    upper: &Bound<crate::codec::KeyBuf>,
) -> std::result::Result<Option<engine::Pair<'t>>, engine::Code> {
    match upper {
        Bound::Unbounded => cursor.get(op::LAST, None, None),
        Bound::Included(k) => match cursor.get(op::SET_RANGE, Some(k.as_slice()), None)? {
            None => cursor.get(op::LAST, None, None),
            Some((found, _)) if cmp_keys::<T>(found, k.as_slice()).is_eq() => {
                if T::FLAGS.dupsort {
                    cursor.get(op::LAST_DUP, None, None)?;
                }
                cursor.get(op::GET_CURRENT, None, None)
            }
            Some(_) => cursor.get(op::PREV, None, None),
        },
        Bound::Excluded(k) => match cursor.get(op::SET_RANGE, Some(k.as_slice()), None)? {
            None => cursor.get(op::LAST, None, None),
            Some(_) => cursor.get(op::PREV, None, None),
        },
    }
}

impl<S: Schema, T: Table, H: Borrow<OwnedTx<S>>> OwnedIter<S, T, H>
where
    S: Contains<T>,
{
    /// The same entries (its range, in its direction, from the start) as a walk of one cursor
    /// over the pages, lent for as long as the iterator is borrowed; the transaction is pinned
    /// first ([`OwnedTx::get_ref`] says what that means).
    fn walk(&self) -> Result<Iter<'_, T>> {
        let tx = self.tx();
        let raw = tx.lend()?;
        Ok(Iter::new(
            raw,
            &tx.db.shared.cursors,
            self.dbi,
            self.bounds.clone(),
        ))
    }

    /// The same entries with their values left undecoded, borrowed from the pages for as long
    /// as the iterator is borrowed: each value is a [`Lazy`], decoded only when asked
    /// ([`Lazy::decode`]), as [`Iter::lazy`]. It walks the iterator's range in its direction
    /// from the start, whatever this iterator has yielded already. Like
    /// [`OwnedTx::get_ref`], it keeps the transaction from being cut from then on; a
    /// transaction cut before yields [`Error::ReadTxnTimedOut`] as its one item.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let entries = db.read_owned()?.into_range::<Names>(2..);
    /// let mut long = Vec::new();
    /// for entry in entries.lazy() {
    ///     let (key, value) = entry?;
    ///     if value.bytes().len() > 4 { // bincode: one length byte, then the text
    ///         long.push((key, value.decode()?));
    ///     }
    /// }
    /// assert_eq!(long, [(3, "three".to_string())]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn lazy(&self) -> impl Iterator<Item = Result<(T::Key, Lazy<'_, T>)>> + '_ {
        Lent::new(self.walk().map(Iter::lazy), self.reverse)
    }

    /// The same entries with their values borrowed from the pages, decoded in place by the
    /// table's [`ValueRef`] codec (`&[u8]` for `codec = Raw`, `&T` for `codec = Pod<T>`), for
    /// as long as the iterator is borrowed, as [`Iter::borrowed`]. It walks the iterator's
    /// range in its direction from the start, and pins the transaction, as
    /// [`lazy`](Self::lazy).
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, value = Vec<u8>, codec = Raw)]
    /// struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Blobs>(&1, &b"ab".to_vec())?;
    /// # tx.put::<Blobs>(&2, &b"cde".to_vec())?;
    /// # tx.commit()?;
    /// let tx = db.read_owned()?;
    /// let newest_first = tx.range::<Blobs>(..).reversed();
    /// let sizes: Vec<(u64, usize)> = newest_first
    ///     .borrowed()
    ///     .map(|e| e.map(|(key, bytes): (u64, &[u8])| (key, bytes.len())))
    ///     .collect::<tabula::Result<_>>()?;
    /// assert_eq!(sizes, [(2, 3), (1, 2)]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn borrowed(
        &self,
    ) -> impl Iterator<Item = Result<(T::Key, <T::Codec as ValueRef>::Ref<'_>)>> + '_
    where
        T::Codec: ValueRef,
    {
        Lent::new(self.walk().map(Iter::borrowed), self.reverse)
    }
}

/// A walk lent by an [`OwnedIter`] ([`OwnedIter::lazy`], [`OwnedIter::borrowed`]): the
/// borrowed iterator in the owned one's direction, or the error that kept it from starting,
/// yielded once.
struct Lent<I> {
    walk: Option<Result<I>>,
    reverse: bool,
}

impl<I> Lent<I> {
    fn new(walk: Result<I>, reverse: bool) -> Self {
        Lent {
            walk: Some(walk),
            reverse,
        }
    }
}

impl<X, I: DoubleEndedIterator<Item = Result<X>>> Iterator for Lent<I> {
    type Item = Result<X>;

    fn next(&mut self) -> Option<Result<X>> {
        match self.walk.as_mut()? {
            Ok(walk) if self.reverse => walk.next_back(),
            Ok(walk) => walk.next(),
            Err(_) => match self.walk.take() {
                Some(Err(e)) => Some(Err(e)),
                _ => None,
            },
        }
    }
}

impl<S: Schema, T: Table, H: Borrow<OwnedTx<S>>> Iterator for OwnedIter<S, T, H>
where
    S: Contains<T>,
{
    type Item = Result<(T::Key, T::Value)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.batch.is_empty() && !self.done {
            self.fill();
        }
        self.batch.pop_front()
    }
}

impl<S: Schema, T: Table, H: Borrow<OwnedTx<S>>> std::fmt::Debug for OwnedIter<S, T, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedIter")
            .field("table", &T::NAME)
            .field("tx", self.holder.borrow())
            .field("reverse", &self.reverse)
            .field("done", &self.done)
            .finish()
    }
}
