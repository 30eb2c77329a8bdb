//! Owned read transactions: [`OwnedTx`], a `'static` read transaction from an `Arc<Db>`, and
//! [`OwnedIter`], its lazy iterator over a range, which may own the transaction.
//!
//! An owned transaction never lends out bytes of its snapshot beyond one call: values come out
//! decoded or copied, and iterators read ahead in small batches. So between two calls nothing
//! points into its snapshot, which is what lets it be cut then (for its age, or by a write that
//! needs the pages it pins) without a lock on the read path: see `engine::readers`.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use crate::codec::{AsPrefix, KeyRange, ValueRef};
use crate::engine::{self, CuttableTxn, Dbi, RawTxn, Refused, op};
use crate::error::{At, Error, Result};
use crate::iter::{Iter, Lazy, Positions};
use crate::mode::ATransactionIsUsedByOneThreadAtATime;
use crate::read::{self, Access, Reads};
use crate::state::Db;
use crate::stored::{dbi_of, decode_key, decode_value};
use crate::table::{Contains, Schema, Table};
use crate::telemetry;
use crate::txn::warn_long_read;

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
/// It reads one snapshot for its whole life, like a [`Tx`](crate::Tx), and has every read a
/// `Tx` has: both dereference to [`Reads`], so `owned.get::<T>(&k)`, `owned.dups::<T>(&k)`,
/// `owned.cursor::<T>()` and the rest are the same calls, documented once there. What differs
/// is long-reader control: with [`Options::max_read_age`](crate::Options::max_read_age) or
/// [`Options::on_slow_reader`](crate::Options::on_slow_reader), an owned transaction can be cut
/// between two calls (its snapshot released, so a writer reuses the pages it pinned instead of
/// growing the file), and its next call fails with [`Error::ReadTxnTimedOut`]. A read whose
/// result borrows the snapshot (`get_bytes`, `get_ref`, `get_lazy`, the iterators, `cursor`)
/// pins it instead: from then on it is never cut, until it is dropped. To walk a range without
/// pinning, [`into_range`](Self::into_range) and [`into_prefix`](Self::into_prefix) read ahead
/// in batches of up to 64 entries and find their place again between batches.
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
/// # use tabula::__doc::*;
/// # let dir = temp_dir();
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
    reads: Reads<OwnedHandle<S>>,
}

/// What an [`OwnedTx`]'s reads go through ([`Handle`](crate::Handle)): the transaction it
/// holds, which long-reader control may cut between calls, and its share of the database.
/// Made only by Tabula.
pub struct OwnedHandle<S: Schema> {
    held: Option<Held>,
    /// When it began (coarse ms clock; 0 when nothing needs its age).
    started_ms: u64,
    db: Arc<Db<S>>,
}

impl<S: Schema> Deref for OwnedTx<S> {
    type Target = Reads<OwnedHandle<S>>;

    #[inline(always)]
    fn deref(&self) -> &Self::Target {
        &self.reads
    }
}

#[allow(private_interfaces, private_bounds)] // see `read::sealed`
impl<S: Schema> read::sealed::Access for OwnedHandle<S> {
    type Schema = S;

    #[inline(always)]
    fn db(&self) -> &Db<S> {
        &self.db
    }

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

    /// A cuttable transaction is pinned (`CuttableTxn::pin`): from the first such read on it
    /// is never cut, neither for its age nor by a writer, until it is dropped.
    fn lend(&self) -> Result<&RawTxn> {
        match self.held() {
            Held::Plain(raw) => Ok(raw),
            Held::Cuttable(cuttable) => cuttable.pin().map_err(|refused| self.refused(refused)),
        }
    }
}

impl<S: Schema> Db<S> {
    /// Begins an owned read transaction on the latest committed snapshot: an [`OwnedTx`],
    /// `'static` and `Send`, for a struct, a spawned task or a lazy iterator
    /// ([`OwnedTx::into_range`]). Same pool and cost as [`read`](Self::read).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
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
        self.shared.begin_read_then(|raw| {
            let table = self.shared.env().cut_table();
            let started_ms = if table.is_some() || self.shared.run().read_clock {
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
                reads: Reads {
                    h: OwnedHandle {
                        held: Some(held),
                        started_ms,
                        db: Arc::clone(self),
                    },
                },
            }
        })
    }
}

impl<S: Schema> OwnedHandle<S> {
    #[inline]
    fn held(&self) -> &Held {
        // `held` is only taken by `drop`.
        self.held.as_ref().expect("transaction is live")
    }

    /// Runs `f` on the transaction within one call: a cuttable transaction is not cut while
    /// `f` runs, and nothing `f` borrows from it outlives the call.
    #[cold]
    #[inline(never)]
    fn refused(&self, refused: Refused) -> Error {
        match refused {
            Refused::Cut { by_writer } => {
                let limit = self
                    .db
                    .shared
                    .env()
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
                path: self.db.shared.path().to_path_buf(),
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

    fn age(&self) -> Duration {
        if self.started_ms == 0 {
            return Duration::ZERO;
        }
        Duration::from_millis(engine::coarse_now_ms().saturating_sub(self.started_ms))
    }
}

impl<S: Schema> OwnedTx<S> {
    /// The database it reads.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let tx = db.read_owned()?;
    /// assert!(std::sync::Arc::ptr_eq(tx.db(), &db));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn db(&self) -> &Arc<Db<S>> {
        &self.reads.h.db
    }

    /// The snapshot (transaction ID) it reads, fixed for its life.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
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
        self.reads.h.snapshot()
    }

    /// How long it has been open (a coarse clock: a few ms of resolution). Zero when nothing
    /// measures it: no [`Options::long_read_warning`](crate::Options::long_read_warning), no
    /// long-reader control and no `metrics` feature.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// use std::time::Duration;
    ///
    /// let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let tx = db.read_owned()?;
    /// std::thread::sleep(Duration::from_millis(30));
    /// assert!(tx.age() >= Duration::from_millis(20)); // the default warning measures it
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn age(&self) -> Duration {
        self.reads.h.age()
    }

    /// The entries whose keys fall in `range`, read lazily by an iterator that owns this
    /// transaction: `'static`, and `Send` when the key and value types are, so it can be
    /// returned from a function, kept in a struct or moved into a task. Use `..` for the whole
    /// table.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
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
    pub fn into_range<T: Table>(self, range: impl KeyRange<T::Key>) -> OwnedIter<S, T>
    where
        S: Contains<T>,
    {
        OwnedIter::new(self, Positions::range::<T>(&range))
    }

    /// The entries whose composite key starts with `prefix`, read lazily by an iterator that
    /// owns this transaction.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let db = std::sync::Arc::new(db);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Balances>(&("alice", 1), &10)?;
    /// # tx.put::<Balances>(&("bob", 1), &5)?;
    /// # tx.commit()?;
    /// let bob = db.read_owned()?.into_prefix::<Balances>("bob");
    /// let found = std::thread::spawn(move || bob.collect::<tabula::Result<Vec<_>>>());
    /// assert_eq!(found.join().unwrap()?, [(("bob".to_string(), 1), 5)]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn into_prefix<T: Table>(self, prefix: &(impl AsPrefix<T::Key> + ?Sized)) -> OwnedIter<S, T>
    where
        S: Contains<T>,
    {
        OwnedIter::new(self, Positions::prefix::<T::Key>(prefix))
    }
}

impl<S: Schema> Drop for OwnedHandle<S> {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        if self.started_ms != 0 {
            let age_ms = engine::coarse_now_ms().saturating_sub(self.started_ms);
            let threshold = self.db.shared.run().long_read_ms;
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
        let mut raw = raw;
        raw.release_kept_cursor(self.db.shared.cursors());
        self.db.shared.park(raw);
    }
}

impl<S: Schema> OwnedHandle<S> {
    fn snapshot_of(&self, held: &Held) -> u64 {
        match held {
            Held::Plain(raw) => raw.id(),
            Held::Cuttable(cuttable) => cuttable.snapshot(),
        }
    }
}

impl<S: Schema> std::fmt::Debug for OwnedTx<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let h = &self.reads.h;
        f.debug_struct("OwnedTx")
            .field("id", &h.held.as_ref().map(|held| h.snapshot_of(held)))
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
/// It owns its transaction ([`OwnedTx::into_range`], [`OwnedTx::into_prefix`]), so it is
/// `'static`. It reads ahead in batches of up to 64 entries (and 256 KiB of values),
/// each in one call on the transaction, and finds its place again by key for the next batch,
/// so nothing points into the snapshot between batches: a transaction cut between two batches
/// ends the iteration with [`Error::ReadTxnTimedOut`].
pub struct OwnedIter<S: Schema, T: Table> {
    tx: OwnedTx<S>,
    dbi: Dbi,
    bounds: Positions,
    /// The last entry read (stored key, stored value), where the next batch starts after.
    resume: Option<(Vec<u8>, Vec<u8>)>,
    batch: VecDeque<Result<(T::Key, T::Value)>>,
    reverse: bool,
    done: bool,
    _schema: PhantomData<fn() -> S>,
}

impl<S: Schema, T: Table> OwnedIter<S, T>
where
    S: Contains<T>,
{
    fn new(tx: OwnedTx<S>, bounds: Positions) -> Self {
        let dbi = dbi_of::<S, T>(tx.reads.h.db());
        OwnedIter {
            tx,
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
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
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
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// let iter = db.read_owned()?.into_range::<Names>(..);
    /// assert_eq!(iter.tx().len::<Names>()?, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn tx(&self) -> &OwnedTx<S> {
        &self.tx
    }

    /// Reads the next batch into `self.batch` within one call on the transaction.
    fn fill(&mut self) {
        let OwnedIter {
            tx,
            dbi,
            bounds,
            resume,
            batch,
            reverse,
            done,
            ..
        } = self;
        let (dbi, reverse) = (*dbi, *reverse);
        let handle = &tx.reads.h;
        let shared = &handle.db().shared;
        let result = handle.with_txn(|raw| {
            // The transaction's kept cursor: every batch places it before its first step.
            let mut cursor = raw
                .kept_cursor(dbi, shared.cursors())
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
                None if reverse => bounds.place_back::<T>(&mut cursor).map_err(fail)?,
                None => bounds.place_front::<T>(&mut cursor).map_err(fail)?,
            };
            let mut bytes = 0;
            let mut last = None;
            while let Some((k, v)) = entry {
                let inside = if reverse {
                    bounds.above_lower::<T>((k, v))
                } else {
                    bounds.below_upper::<T>(k)
                };
                if !inside {
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

impl<S: Schema, T: Table> OwnedIter<S, T>
where
    S: Contains<T>,
{
    /// The same entries (its range, in its direction, from the start) as a walk of one cursor
    /// over the pages, lent for as long as the iterator is borrowed; the transaction is pinned
    /// first ([`Reads::get_ref`] says what that means).
    fn walk(&self) -> Result<Iter<'_, T>> {
        let tx = self.tx();
        let raw = tx.reads.h.lend()?;
        Ok(Iter::new(
            raw,
            tx.reads.h.db().shared.cursors(),
            self.dbi,
            self.bounds.clone(),
        ))
    }

    /// The same entries with their values left undecoded, borrowed from the pages for as long
    /// as the iterator is borrowed: each value is a [`Lazy`], decoded only when asked
    /// ([`Lazy::decode`]), as [`Iter::lazy`]. It walks the iterator's range in its direction
    /// from the start, whatever this iterator has yielded already. Like
    /// [`Reads::get_ref`], it keeps the transaction from being cut from then on; a
    /// transaction cut before yields [`Error::ReadTxnTimedOut`] as its one item.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let dir = temp_dir();
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
    /// # let dir = tabula::__doc::temp_dir();
    /// # let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
    /// # let mut tx = db.write()?;
    /// # tx.put::<Blobs>(&1, &b"ab".to_vec())?;
    /// # tx.put::<Blobs>(&2, &b"cde".to_vec())?;
    /// # tx.commit()?;
    /// let newest_first = db.read_owned()?.into_range::<Blobs>(..).reversed();
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

impl<S: Schema, T: Table> Iterator for OwnedIter<S, T>
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

impl<S: Schema, T: Table> std::fmt::Debug for OwnedIter<S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedIter")
            .field("table", &T::NAME)
            .field("tx", &self.tx)
            .field("reverse", &self.reverse)
            .field("done", &self.done)
            .finish()
    }
}
