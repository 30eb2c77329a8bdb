//! Transactions and typed table operations.

use std::marker::PhantomData;
use std::ops::RangeBounds;

use crate::codec::{AnyBytes, AsKey, Key, Value, ValueRef};
use crate::cursor::{Appender, Cursor, Opener, WriteCursor, WriteCursors};
use crate::engine::{self, Code, Dbi, RawTxn, Room};
use crate::error::{At, Error, KeyHex, Result};
use crate::iter::{Iter, Lazy, Positions};
use crate::mode::{ATransactionIsUsedByOneThreadAtATime, Mode, Ro, Rw};
use crate::state::Db;
use crate::stored::{
    dbi_of, decode_value, decode_value_ref, has_subkey, lookup, with_key, with_subkey,
};
use crate::table::{Contains, DupSort, Schema, Table};
use crate::telemetry;

/// A read transaction over schema `S`.
pub type RoTx<'db, S> = Tx<'db, S, Ro>;
/// The write transaction over schema `S`.
pub type RwTx<'db, S> = Tx<'db, S, Rw>;

/// A transaction: a consistent snapshot for reads, plus writes when `M` is [`Rw`].
///
/// Every typed call takes the table as a type parameter, `tx.get::<Headers>(&1)`, and compiles
/// only for tables of the schema `S`. The table's handle is `dbis[ID]` with `ID` a constant.
///
/// A read transaction, when dropped, is parked for reuse; a write transaction that is dropped
/// without [`commit`](Tx::commit) is aborted.
pub struct Tx<'db, S: Schema, M: Mode> {
    // The markers come first: the compiler reports the first field that is not `Send`/`Sync`.
    _mode: PhantomData<(M, M::ThreadMarker)>,
    _one_thread_at_a_time: PhantomData<std::cell::Cell<ATransactionIsUsedByOneThreadAtATime>>,
    pub(crate) raw: Option<RawTxn>,
    pub(crate) db: &'db Db<S>,
    pub(crate) scratch: M::Scratch,
    /// When a read transaction began (coarse clock, ns), for the long-read warning.
    started_ns: u64,
}

// `&Tx` changes nothing (every write takes `&mut self`); only the `Cell` in the marker that
// makes `Tx` `!Sync` would otherwise make it `!RefUnwindSafe`.
impl<S: Schema, M: Mode> std::panic::RefUnwindSafe for Tx<'_, S, M> {}

impl<'db, S: Schema, M: Mode> Tx<'db, S, M> {
    pub(crate) fn new(db: &'db Db<S>, raw: RawTxn) -> Self {
        Tx {
            raw: Some(raw),
            db,
            scratch: Default::default(),
            // Two coarse clock reads per read transaction (none per get), none when the warning
            // is off.
            started_ns: if M::READ_ONLY && db.shared.read_clock {
                engine::coarse_now_ns()
            } else {
                0
            },
            _mode: PhantomData,
            _one_thread_at_a_time: PhantomData,
        }
    }

    #[inline]
    pub(crate) fn raw(&self) -> &RawTxn {
        // `raw` is only taken by `commit`/`drop`, which consume the transaction.
        self.raw.as_ref().expect("transaction is live")
    }

    #[inline]
    fn raw_mut(&mut self) -> &mut RawTxn {
        self.raw.as_mut().expect("transaction is live")
    }

    /// The database this transaction reads.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.db().path(), db.path());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn db(&self) -> &'db Db<S> {
        self.db
    }

    /// The libmdbx transaction ID (the snapshot a read transaction sees).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let before = db.read()?.id();
    /// let mut tx = db.write()?;
    /// assert_eq!(tx.id(), before + 1); // the write transaction makes the next snapshot
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.id(), before + 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn id(&self) -> u64 {
        self.raw().id()
    }

    /// Reads the value stored under `key`, decoded.
    ///
    /// In a `dupsort` table this is the first (smallest) value of the key; use
    /// [`dups`](Tx::dups) for all of them.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.get::<Names>(&1)?, Some("one".to_string()));
    /// assert_eq!(tx.get::<Names>(&9)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] when the stored bytes do not decode; [`Error::Mdbx`] on libmdbx failure.
    #[inline]
    pub fn get<T: Table>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<Option<T::Value>>
    where
        S: Contains<T>,
    {
        lookup::<S, T, _>(self.db, self.raw(), key, |k, v| {
            v.map(|v| decode_value::<T>(k, v)).transpose()
        })
    }

    /// The stored bytes of the value under `key`, borrowed from the database without copying.
    ///
    /// The slice lives as long as the borrow of the transaction: it cannot outlive it, and a
    /// write transaction cannot write while it is held.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// // The stored form: bincode writes the string's length, then its bytes.
    /// assert_eq!(tx.get_bytes::<Names>(&1)?, Some(&[3, b'o', b'n', b'e'][..]));
    /// assert_eq!(tx.get_bytes::<Names>(&9)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    #[inline]
    pub fn get_bytes<T: Table>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<Option<&[u8]>>
    where
        S: Contains<T>,
    {
        lookup::<S, T, _>(self.db, self.raw(), key, |_, v| Ok(v))
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
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// assert!(tx.contains_key::<Names>(&1)?);
    /// assert!(!tx.contains_key::<Names>(&9)?);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn contains_key<T: Table>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<bool>
    where
        S: Contains<T>,
    {
        Ok(self.get_bytes::<T>(key)?.is_some())
    }

    /// Number of entries in the table (in a `dupsort` table, key-value pairs).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String, dupsort)]
    /// # struct Topics;
    /// # #[derive(Schema)]
    /// # struct App(Names, Topics);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// # let mut tx = db.write()?;
    /// # for v in ["b", "a", "c"] { tx.put::<Topics>(&1, &v.to_string())?; }
    /// # tx.put::<Topics>(&2, &"z".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.len::<Names>()?, 3);
    /// assert_eq!(tx.len::<Topics>()?, 4); // 3 values under key 1, one under key 2
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
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
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// assert!(tx.is_empty::<Names>()?);
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// assert!(!tx.is_empty::<Names>()?);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn is_empty<T: Table>(&self) -> Result<bool>
    where
        S: Contains<T>,
    {
        Ok(self.len::<T>()? == 0)
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
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let stat = db.read()?.stat::<Names>()?;
    /// assert_eq!(stat.entries, 3);
    /// assert_eq!((stat.depth, stat.leaf_pages), (1, 1)); // three small entries fit in one page
    /// assert_eq!(stat.page_size, db.info()?.page_size);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn stat<T: Table>(&self) -> Result<TableStat>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        self.raw()
            .stat(dbi)
            .map(TableStat::from_raw)
            .map_err(|code| self.db.shared.fail(code, At::of::<T>("stat")))
    }

    /// A cursor over the table, for explicit positioning (`first`, `seek`, `next`, ...).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Names>()?;
    /// assert_eq!(cursor.seek(&2)?, Some((2, "two".to_string())));
    /// assert_eq!(cursor.next()?, Some((3, "three".to_string())));
    /// assert_eq!(cursor.next()?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn cursor<T: Table>(&self) -> Result<Cursor<'_, T>>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let raw = self
            .raw()
            .cursor_cached(dbi, &self.db.shared.cursors)
            .map_err(|code| self.db.shared.fail(code, At::of::<T>("open cursor")))?;
        Ok(Cursor::new(raw, &self.db.shared))
    }

    /// Every entry in key order. Double-ended: `.rev()` iterates from the last key.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut entries = tx.iter::<Names>();
    /// assert_eq!(entries.next().transpose()?, Some((1, "one".to_string())));
    /// assert_eq!(entries.next_back().transpose()?, Some((3, "three".to_string())));
    /// assert_eq!(entries.count(), 1); // key 2 is left in between
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn iter<T: Table>(&self) -> Iter<'_, T>
    where
        S: Contains<T>,
    {
        self.iter_between::<T>(Positions::all())
    }

    /// The entries whose keys fall in `range` (any `RangeBounds` of the key type), in key order.
    /// Double-ended.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for k in 1..=9 { tx.put::<Names>(&k, &k.to_string())?; }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let keys = |it: tabula::Iter<'_, Names>| it.keys().collect::<tabula::Result<Vec<u64>>>();
    /// assert_eq!(keys(tx.range::<Names>(3..6))?, [3, 4, 5]);
    /// assert_eq!(keys(tx.range::<Names>(7..))?, [7, 8, 9]);
    /// assert_eq!(keys(tx.range::<Names>(2..=4))?, [2, 3, 4]);
    /// let (last, _) = tx.range::<Names>(..=5).next_back().unwrap()?; // from the upper end
    /// assert_eq!(last, 5);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn range<T: Table>(&self, range: impl RangeBounds<T::Key>) -> Iter<'_, T>
    where
        S: Contains<T>,
    {
        self.iter_between::<T>(Positions::range::<T, _>(range))
    }

    /// The entries whose composite key starts with `prefix` (the key's first field, or a tuple
    /// of its first fields). Double-ended.
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
    /// # let mut tx = db.write()?;
    /// # tx.put::<Balances>(&("alice", 1), &10)?;
    /// # tx.put::<Balances>(&("alice", 2), &20)?;
    /// # tx.put::<Balances>(&("bob", 1), &5)?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let alice = tx.prefix::<Balances, _>(&"alice".to_string()).values();
    /// assert_eq!(alice.collect::<Result<Vec<u64>, _>>()?, [10, 20]);
    /// let (key, _) = tx.prefix::<Balances, _>(&"bob".to_string()).next().unwrap()?;
    /// assert_eq!(key, ("bob".to_string(), 1));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn prefix<T: Table, P: Key>(&self, prefix: &P) -> Iter<'_, T>
    where
        S: Contains<T>,
        T::Key: crate::codec::HasPrefix<P>,
    {
        self.iter_between::<T>(Positions::prefix::<P>(prefix))
    }

    /// The values of `key` in a `dupsort` table, in their order (by subkey, for a table with
    /// one). Yields `(key, value)` pairs like the other iterators; double-ended.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String, dupsort)]
    /// # struct Topics;
    /// # #[derive(Schema)]
    /// # struct App(Topics);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for v in ["b", "a", "c"] { tx.put::<Topics>(&1, &v.to_string())?; }
    /// # tx.put::<Topics>(&2, &"z".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let topics: Vec<String> = tx.dups::<Topics>(&1).values().collect::<Result<_, _>>()?;
    /// assert_eq!(topics, ["a", "b", "c"]); // sorted by value
    /// let last = tx.dups::<Topics>(&1).values().next_back().transpose()?;
    /// assert_eq!(last.as_deref(), Some("c"));
    /// assert_eq!(tx.dups::<Topics>(&3).count(), 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn dups<T: DupSort>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Iter<'_, T>
    where
        S: Contains<T>,
    {
        self.iter_between::<T>(Positions::exact::<T, _>(key))
    }

    /// The values of `key` from the first whose subkey is `>= subkey` (in a table without a
    /// subkey: the first value `>= subkey`), found with `MDBX_GET_BOTH_RANGE`. Double-ended:
    /// from the back it ends at that value.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, subkey = u32, value = String, dupsort)]
    /// struct Storage;
    /// # #[derive(Schema)]
    /// # struct App(Storage);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, slot, v) in [(1, 10, "a"), (1, 20, "b"), (1, 30, "c"), (2, 5, "d")] {
    /// #     tx.put::<Storage>(&k, &(slot, v.to_string()))?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let slot = |entry: tabula::Result<(u64, (u32, String))>| entry.map(|(_, (slot, _))| slot);
    /// let slots: Vec<u32> = tx.dups_from::<Storage>(&1, &15).map(slot).collect::<Result<_, _>>()?;
    /// assert_eq!(slots, [20, 30]);
    /// let back: Vec<u32> =
    ///     tx.dups_from::<Storage>(&1, &15).rev().map(slot).collect::<Result<_, _>>()?;
    /// assert_eq!(back, [30, 20]);
    /// assert_eq!(tx.dups_from::<Storage>(&1, &31).count(), 0); // not key 2's values
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn dups_from<T: DupSort>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
    ) -> Iter<'_, T>
    where
        S: Contains<T>,
    {
        self.iter_between::<T>(Positions::dups_from::<T, _, _>(key, subkey))
    }

    /// The value of `key` with exactly this subkey (in a table without a subkey: the value
    /// equal to `subkey`), or `None`.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, subkey = u32, value = String, dupsort)]
    /// struct Storage;
    /// # #[derive(Schema)]
    /// # struct App(Storage);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, slot, v) in [(1, 10, "a"), (1, 20, "b"), (2, 5, "c")] {
    /// #     tx.put::<Storage>(&k, &(slot, v.to_string()))?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.get_dup::<Storage>(&1, &20)?, Some((20, "b".to_string())));
    /// assert_eq!(tx.get_dup::<Storage>(&1, &15)?, None);
    /// assert_eq!(tx.get_dup::<Storage>(&3, &20)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn get_dup<T: DupSort>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
    ) -> Result<Option<T::Value>>
    where
        S: Contains<T>,
    {
        self.find_dup::<T>(key, subkey, true, "get_dup")
    }

    /// The first value of `key` whose subkey is `>= subkey` (in a table without a subkey: the
    /// first value `>= subkey`), found with one search of libmdbx's B-tree (no walk over the
    /// key's values); `None` when `key` has no such value.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, subkey = u32, value = String, dupsort)]
    /// struct Storage;
    /// # #[derive(Schema)]
    /// # struct App(Storage);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, slot, v) in [(1, 10, "a"), (1, 20, "b"), (2, 5, "c")] {
    /// #     tx.put::<Storage>(&k, &(slot, v.to_string()))?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.seek_dup::<Storage>(&1, &15)?, Some((20, "b".to_string())));
    /// assert_eq!(tx.seek_dup::<Storage>(&1, &21)?, None); // key 2's values do not count
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn seek_dup<T: DupSort>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
    ) -> Result<Option<T::Value>>
    where
        S: Contains<T>,
    {
        self.find_dup::<T>(key, subkey, false, "seek_dup")
    }

    /// `get_dup` (`exact`) and `seek_dup`: one lower-bound search over (key, value) pairs
    /// (`mdbx_get_equal_or_great`, which finds what `MDBX_GET_BOTH_RANGE` finds when the key
    /// has such a value, with a cursor on libmdbx's stack instead of a bound one), and a check
    /// that it landed on `key`.
    fn find_dup<T: DupSort>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
        exact: bool,
        name: &'static str,
    ) -> Result<Option<T::Value>>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        with_key::<T, _, _>(key, |k| {
            with_subkey::<T, _, _>(subkey, |s| match self.raw().get_lower_bound(dbi, k, s) {
                Ok(Some((found, v))) if found == k && (!exact || has_subkey::<T>(v, s)) => {
                    decode_value::<T>(k, v).map(Some)
                }
                Ok(_) => Ok(None),
                Err(code) => Err(self.db.shared.fail(code, At::of::<T>(name).key(k))),
            })
        })
    }

    /// Number of values of `key` in a `dupsort` table (0 when it is absent).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String, dupsort)]
    /// # struct Topics;
    /// # #[derive(Schema)]
    /// # struct App(Topics);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for v in ["b", "a", "c"] { tx.put::<Topics>(&1, &v.to_string())?; }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.dup_count::<Topics>(&1)?, 3);
    /// assert_eq!(tx.dup_count::<Topics>(&2)?, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn dup_count<T: DupSort>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<u64>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        with_key::<T, _, _>(key, |k| {
            self.raw()
                .count_values(dbi, k)
                .map(|n| n as u64)
                .map_err(|code| self.db.shared.fail(code, At::of::<T>("dup_count").key(k)))
        })
    }

    fn iter_between<T: Table>(&self, positions: Positions) -> Iter<'_, T>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        Iter::new(self.raw(), &self.db.shared.cursors, dbi, positions)
    }

    /// The value under `key` decoded in place, borrowing the stored bytes: `&[u8]` for a table
    /// with `codec = Raw`, `&T` for `codec = Pod<T>` (a [`ValueRef`] codec). Nothing is copied;
    /// the value lives as long as the borrow of the transaction (a write transaction cannot
    /// write while it is held). For other codecs this does not compile; use [`get`](Tx::get),
    /// or [`get_lazy`](Tx::get_lazy) to decide after reading whether to decode.
    ///
    /// ```
    /// use tabula::{Options, Pod, Schema, Table};
    /// use zerocopy::byteorder::{LittleEndian, U64};
    /// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};
    ///
    /// #[derive(Debug, PartialEq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
    /// #[repr(C)]
    /// struct Account { nonce: U64<LittleEndian>, balance: [u8; 32] }
    ///
    /// #[derive(Table)]
    /// #[table(key = [u8; 20], value = Account, codec = Pod<Account>)]
    /// struct Accounts;
    /// # #[derive(Schema)]
    /// # struct App(Accounts);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Accounts>(&[7; 20], &Account { nonce: U64::new(3), balance: [1; 32] })?;
    /// tx.commit()?;
    ///
    /// let tx = db.read()?;
    /// let account: &Account = tx.get_ref::<Accounts>(&[7; 20])?.unwrap(); // a view of the page
    /// assert_eq!(account.nonce.get(), 3);
    /// assert!(tx.get_ref::<Accounts>(&[8; 20])?.is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] when the stored bytes are not a value of the codec (for `Pod<T>`: not
    /// `size_of::<T>()` bytes); [`Error::Mdbx`] on libmdbx failure.
    #[inline]
    pub fn get_ref<T: Table>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
    ) -> Result<Option<<T::Codec as ValueRef>::Ref<'_>>>
    where
        S: Contains<T>,
        T::Codec: ValueRef,
    {
        lookup::<S, T, _>(self.db, self.raw(), key, |k, v| {
            v.map(|v| decode_value_ref::<T>(k, v)).transpose()
        })
    }

    /// The value under `key` read but not decoded: a [`Lazy`] holding the stored bytes,
    /// borrowed for as long as the transaction is, decoded when asked ([`Lazy::decode`]).
    /// Works with every codec.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let lazy = tx.get_lazy::<Names>(&1)?.expect("present");
    /// assert_eq!(lazy.bytes().len(), 4); // not decoded yet
    /// assert_eq!(lazy.decode()?, "one");
    /// assert!(tx.get_lazy::<Names>(&2)?.is_none());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure (decode errors come from [`Lazy::decode`]).
    #[inline]
    pub fn get_lazy<T: Table>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
    ) -> Result<Option<Lazy<'_, T>>>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        // The key is kept for a decode error's message: the stored copy in the page (the
        // encoded key given here is a temporary).
        with_key::<T, _, _>(key, |k| match self.raw().get_pair(dbi, k) {
            Ok(Some((stored_key, v))) => Ok(Some(Lazy::new(stored_key, v))),
            Ok(None) => Ok(None),
            Err(code) => Err(self.db.shared.fail(code, At::of::<T>("get").key(k))),
        })
    }
}

impl<'db, S: Schema> Tx<'db, S, Rw> {
    fn encode_value<'a, T: Table>(
        scratch: &'a mut Vec<u8>,
        key: &[u8],
        value: &'a T::Value,
    ) -> Result<&'a [u8]> {
        <T::Codec as Value>::encode(value, scratch).map_err(|source| Error::Encode {
            table: T::NAME,
            key: KeyHex::new(key),
            source,
        })
    }

    fn put_with<T: Table>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
        flags: u32,
        op: &'static str,
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let db = self.db;
        let Tx { raw, scratch, .. } = self;
        let raw = raw.as_mut().expect("transaction is live");
        with_key::<T, _, _>(key, |k| {
            // A codec that knows its encoded length writes straight into the page (libmdbx
            // cannot reserve room in a dupsort table). For the shipped codecs `encoded_len` is
            // a constant `None` and this folds away.
            if !T::FLAGS.dupsort
                && let Some(len) = <T::Codec as Value>::encoded_len(value)
            {
                return Self::put_reserved::<T>(raw, db, dbi, k, len, flags, op, |room| {
                    <T::Codec as Value>::encode_into(value, room)
                });
            }
            let v = Self::encode_value::<T>(scratch, k, value)?;
            raw.put(dbi, k, v, flags).map_err(|code| {
                let appending = flags & (engine::put::APPEND | engine::put::APPENDDUP) != 0;
                if code == Code::KEYEXIST && !appending {
                    Error::KeyExists {
                        table: T::NAME,
                        key: KeyHex::new(k),
                    }
                } else if flags == engine::put::APPENDDUP_STRICT
                    && (code == Code::EKEYMISMATCH || code == Code::KEYEXIST)
                {
                    Error::AppendDupOutOfOrder {
                        table: T::NAME,
                        key: KeyHex::new(k),
                        value: KeyHex::new(v),
                        last: last_value(raw, dbi, k),
                    }
                } else if code == Code::EKEYMISMATCH || code == Code::KEYEXIST {
                    Error::AppendOutOfOrder {
                        table: T::NAME,
                        key: KeyHex::new(k),
                        last: last_key(raw, dbi),
                    }
                } else {
                    db.shared.fail(code, At::of::<T>(op).entry(k, v.len()))
                }
            })
        })
    }

    /// `put_with` for a value of `len` bytes that `fill` writes into the page (`MDBX_RESERVE`;
    /// never a dupsort table). When `fill` fails (a codec that announced a length it then could
    /// not write) the half-written entry is deleted again, so no zeroed value can be committed:
    /// the key then holds nothing in this transaction, and the error says so.
    #[allow(clippy::too_many_arguments)]
    fn put_reserved<T: Table>(
        raw: &mut RawTxn,
        db: &Db<S>,
        dbi: Dbi,
        k: &[u8],
        len: usize,
        flags: u32,
        op: &'static str,
        fill: impl FnOnce(&mut [u8]) -> std::result::Result<(), crate::codec::EncodeError>,
    ) -> Result<()> {
        match raw.put_reserve(dbi, k, len, flags, |room| fill(room.zeroed())) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(source)) => {
                let undo = raw.del(dbi, k, None);
                Err(Error::Encode {
                    table: T::NAME,
                    key: KeyHex::new(k),
                    source: crate::codec::EncodeError::new(format!(
                        "{} (while writing into the room reserved in the page: {})",
                        source.message(),
                        match undo {
                            Ok(_) =>
                                "the entry was deleted, so the key now holds no value in                                       this transaction",
                            Err(_) =>
                                "the half-written entry could not be deleted: abort the                                        transaction",
                        }
                    )),
                })
            }
            Err(code) if code == Code::KEYEXIST && flags & engine::put::APPEND == 0 => {
                Err(Error::KeyExists {
                    table: T::NAME,
                    key: KeyHex::new(k),
                })
            }
            Err(code) if code == Code::EKEYMISMATCH || code == Code::KEYEXIST => {
                Err(Error::AppendOutOfOrder {
                    table: T::NAME,
                    key: KeyHex::new(k),
                    last: last_key(raw, dbi),
                })
            }
            Err(code) => Err(db.shared.fail(code, At::of::<T>(op).entry(k, len))),
        }
    }

    /// Stores `value` under `key`, replacing what was there. In a `dupsort` table, adds `value`
    /// to the key's values (a pair already present is left as is).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String, dupsort)]
    /// # struct Topics;
    /// # #[derive(Schema)]
    /// # struct App(Names, Topics);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.put::<Names>(&1, &"uno".to_string())?; // replaces
    /// assert_eq!(tx.get::<Names>(&1)?.as_deref(), Some("uno"));
    ///
    /// tx.put::<Topics>(&1, &"b".to_string())?;
    /// tx.put::<Topics>(&1, &"a".to_string())?; // dupsort: adds a value
    /// assert_eq!(tx.len::<Topics>()?, 2);
    /// tx.commit()?;
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`], [`Error::MapFull`], [`Error::DiskFull`], [`Error::Encode`],
    /// [`Error::Mdbx`].
    #[inline]
    pub fn put<T: Table>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        self.put_with::<T>(key, value, engine::put::UPSERT, "put")
    }

    /// Stores `value` under `key` only if the key is absent.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.insert::<Names>(&1, &"one".to_string())?;
    /// let again = tx.insert::<Names>(&1, &"uno".to_string());
    /// assert!(matches!(again, Err(tabula::Error::KeyExists { table: "Names", .. })));
    /// assert_eq!(tx.get::<Names>(&1)?.as_deref(), Some("one")); // unchanged
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::KeyExists`] when it is present; otherwise as [`put`](Tx::put).
    pub fn insert<T: Table>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        self.put_with::<T>(key, value, engine::put::NOOVERWRITE, "insert")
    }

    /// Adds an entry whose key is greater than every key in the table: the fast path for loading
    /// sorted data (no tree descent per entry). For many entries, [`appender`](Tx::appender)
    /// keeps one cursor and is faster still.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.append::<Names>(&1, &"one".to_string())?;
    /// tx.append::<Names>(&2, &"two".to_string())?;
    /// let late = tx.append::<Names>(&2, &"again".to_string()); // not after the last key
    /// assert!(matches!(late, Err(tabula::Error::AppendOutOfOrder { .. })));
    /// assert_eq!(tx.len::<Names>()?, 2);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendOutOfOrder`] naming the key and the table's last key when `key` does not
    /// sort after it; otherwise as [`put`](Tx::put).
    pub fn append<T: Table>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        self.put_with::<T>(key, value, engine::put::APPEND_STRICT, "append")
    }

    /// In a `dupsort` table, adds `value` as the new greatest value of `key`: it must sort after
    /// every value the key has (a key without values takes any), in the values' order (by
    /// subkey first, for a table with one).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = u64, dupsort)]
    /// # struct Heights;
    /// # #[derive(Schema)]
    /// # struct App(Heights);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.append_dup::<Heights>(&1, &255)?;
    /// tx.append_dup::<Heights>(&1, &256)?; // values rise in their own order
    /// let late = tx.append_dup::<Heights>(&1, &7); // not after 256
    /// assert!(matches!(late, Err(tabula::Error::AppendDupOutOfOrder { .. })));
    /// let again = tx.append_dup::<Heights>(&1, &256); // equal to the last value
    /// assert!(matches!(again, Err(tabula::Error::AppendDupOutOfOrder { .. })));
    /// assert_eq!(tx.len::<Heights>()?, 2);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendDupOutOfOrder`] naming the key, the value and the key's last value when
    /// the value does not sort after it (an equal value included); otherwise as [`put`](Tx::put).
    pub fn append_dup<T: DupSort>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        self.put_with::<T>(key, value, engine::put::APPENDDUP_STRICT, "append_dup")
    }

    /// Deletes `key` (in a `dupsort` table, all its values). Returns whether it was present.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let mut tx = db.write()?;
    /// assert!(tx.delete::<Names>(&1)?);
    /// assert!(!tx.delete::<Names>(&1)?); // already gone
    /// assert_eq!(tx.get::<Names>(&1)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn delete<T: Table>(&mut self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<bool>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let db = self.db;
        let raw = self.raw_mut();
        with_key::<T, _, _>(key, |k| {
            raw.del(dbi, k, None)
                .map_err(|code| db.shared.fail(code, At::of::<T>("delete").key(k)))
        })
    }

    /// Deletes one `(key, value)` pair of a `dupsort` table. Returns whether it was present.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String, dupsort)]
    /// # struct Topics;
    /// # #[derive(Schema)]
    /// # struct App(Topics);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for v in ["b", "a", "c"] { tx.put::<Topics>(&1, &v.to_string())?; }
    /// # tx.put::<Topics>(&2, &"z".to_string())?;
    /// # tx.commit()?;
    /// let mut tx = db.write()?;
    /// assert!(tx.delete_dup::<Topics>(&1, &"b".to_string())?);
    /// assert!(!tx.delete_dup::<Topics>(&1, &"x".to_string())?);
    /// let left: Vec<String> = tx.dups::<Topics>(&1).values().collect::<Result<_, _>>()?;
    /// assert_eq!(left, ["a", "c"]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Encode`], [`Error::Mdbx`].
    pub fn delete_dup<T: DupSort>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
    ) -> Result<bool>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let db = self.db;
        let Tx { raw, scratch, .. } = self;
        let raw = raw.as_mut().expect("transaction is live");
        with_key::<T, _, _>(key, |k| {
            let v = Self::encode_value::<T>(scratch, k, value)?;
            raw.del(dbi, k, Some(v)).map_err(|code| {
                db.shared
                    .fail(code, At::of::<T>("delete_dup").entry(k, v.len()))
            })
        })
    }

    /// Stores bytes exactly as given under exactly these key bytes, bypassing the key and value
    /// codecs: for repair tools and for tests that need damaged entries. Typed reads of such an
    /// entry fail with [`Error::Decode`] when the bytes are not a valid encoding.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put_bytes::<Names>(&1u64.to_be_bytes(), &[3, b'o', b'n', b'e'])?; // a valid encoding
    /// assert_eq!(tx.get::<Names>(&1)?.as_deref(), Some("one"));
    /// tx.put_bytes::<Names>(&2u64.to_be_bytes(), &[9])?; // claims 9 bytes, has none
    /// assert!(matches!(tx.get::<Names>(&2), Err(tabula::Error::Decode { .. })));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`put`](Tx::put).
    pub fn put_bytes<T: Table>(&mut self, key: &[u8], value: &[u8]) -> Result<()>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let db = self.db;
        self.raw_mut()
            .put(dbi, key, value, engine::put::UPSERT)
            .map_err(|code| {
                db.shared
                    .fail(code, At::of::<T>("put_bytes").entry(key, value.len()))
            })
    }

    /// Removes every entry of the table; the table itself stays.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let mut tx = db.write()?;
    /// tx.clear::<Names>()?;
    /// assert!(tx.is_empty::<Names>()?);
    /// tx.put::<Names>(&1, &"one".to_string())?; // the table is still there
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn clear<T: Table>(&mut self) -> Result<()>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let db = self.db;
        self.raw_mut()
            .drop_table(dbi, false)
            .map_err(|code| db.shared.fail(code, At::of::<T>("clear")))
    }

    /// A bulk loader holding one write cursor: each [`Appender::append`] adds an entry after the
    /// last one without descending the tree.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// let mut appender = tx.appender::<Names>()?;
    /// for k in 1..=100u64 {
    ///     appender.append(&k, &k.to_string())?;
    /// }
    /// drop(appender);
    /// assert_eq!(tx.len::<Names>()?, 100);
    /// tx.commit()?;
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when the cursor cannot be opened.
    pub fn appender<T: Table>(&mut self) -> Result<Appender<'_, T>>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let shared = &self.db.shared;
        let Tx { raw, scratch, .. } = self;
        let raw = raw.as_mut().expect("transaction is live");
        let cursor = raw.write_cursor(dbi).map_err(|code| Error::Mdbx {
            table: T::NAME,
            op: "open cursor",
            key: None,
            code: code.into(),
        })?;
        Ok(Appender::new(cursor, scratch, shared))
    }

    /// A write cursor over table `T`: it moves like a [`Cursor`] and writes at its position
    /// (`upsert`, `insert`, `append`, `append_dup`, `delete_current`, ...). Its reads return
    /// owned values, so entries can be deleted while walking. Borrows the transaction; for
    /// cursors over several tables at once, see [`cursors_mut`](Tx::cursors_mut).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// let mut cursor = tx.cursor_mut::<Names>()?;
    /// cursor.upsert(&1, &"one".to_string())?;
    /// cursor.upsert(&2, &"two".to_string())?;
    /// assert_eq!(cursor.first()?, Some((1, "one".to_string())));
    /// cursor.delete_current()?;
    /// drop(cursor);
    /// assert_eq!(tx.len::<Names>()?, 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when the cursor cannot be opened.
    pub fn cursor_mut<T: Table>(&mut self) -> Result<WriteCursor<'_, T>>
    where
        S: Contains<T>,
    {
        let db = self.db;
        Opener::new(self.raw_mut().lend(), db).cursor::<T>()
    }

    /// Write cursors over two to four tables at once, in the one write transaction: say,
    /// walking a changeset table backwards while restoring the state it describes. `C` is a
    /// tuple of tables, the result the tuple of their [`WriteCursor`]s.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, value = u64)]
    /// struct Balances;
    /// #[derive(Table)]
    /// #[table(key = u64, subkey = u64, value = u64, dupsort)]
    /// struct Changes; // block -> (account, balance before the block)
    /// # #[derive(Schema)]
    /// # struct App(Balances, Changes);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Balances>(&7, &30)?; // after block 2
    /// tx.put::<Changes>(&1, &(7, 0))?;
    /// tx.put::<Changes>(&2, &(7, 10))?;
    /// // Unwind block 2: restore what it changed and drop its changes.
    /// let (mut balances, mut changes) = tx.cursors_mut::<(Balances, Changes)>()?;
    /// let mut change = changes.last()?;
    /// while let Some((2, (account, before))) = change {
    ///     balances.upsert(&account, &before)?;
    ///     changes.delete_current()?;
    ///     change = changes.prev()?;
    /// }
    /// drop((balances, changes));
    /// assert_eq!(tx.get::<Balances>(&7)?, Some(10));
    /// assert_eq!(tx.len::<Changes>()?, 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when a cursor cannot be opened.
    pub fn cursors_mut<C: WriteCursors<S>>(&mut self) -> Result<C::Cursors<'_>> {
        let db = self.db;
        C::open(&Opener::new(self.raw_mut().lend(), db))
    }

    /// Deletes every entry whose key falls in `range` (in a `dupsort` table, every value of
    /// those keys), walking the range once with a write cursor. Returns how many (key, value)
    /// pairs were deleted.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = u64)]
    /// # struct Numbers;
    /// # #[derive(Schema)]
    /// # struct App(Numbers);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// for n in 1..=10u64 {
    ///     tx.put::<Numbers>(&n, &n)?;
    /// }
    /// assert_eq!(tx.delete_range::<Numbers>(3..=5)?, 3);
    /// assert_eq!(tx.delete_range::<Numbers>(9..)?, 2);
    /// let left: Vec<u64> = tx.iter::<Numbers>().keys().collect::<Result<_, _>>()?;
    /// assert_eq!(left, [1, 2, 6, 7, 8]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn delete_range<T: Table>(&mut self, range: impl RangeBounds<T::Key>) -> Result<u64>
    where
        S: Contains<T>,
    {
        self.cursor_mut::<T>()?.delete_range(range)
    }

    /// Keeps only the entries for which `keep(&key, &value)` is true (in a `dupsort` table,
    /// judged value by value), walking the table once with a write cursor. Returns how many
    /// were deleted.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = u64)]
    /// # struct Numbers;
    /// # #[derive(Schema)]
    /// # struct App(Numbers);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// for n in 1..=10u64 {
    ///     tx.put::<Numbers>(&n, &(n * n))?;
    /// }
    /// assert_eq!(tx.retain::<Numbers>(|_, square| square % 2 == 0)?, 5);
    /// let left: Vec<u64> = tx.iter::<Numbers>().keys().collect::<Result<_, _>>()?;
    /// assert_eq!(left, [2, 4, 6, 8, 10]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] when an entry does not decode (entries before it are already
    /// judged), [`Error::Mdbx`].
    pub fn retain<T: Table>(
        &mut self,
        mut keep: impl FnMut(&T::Key, &T::Value) -> bool,
    ) -> Result<u64>
    where
        S: Contains<T>,
    {
        let mut cursor = self.cursor_mut::<T>()?;
        let mut deleted = 0;
        let mut entry = cursor.first()?;
        while let Some((key, value)) = entry {
            if !keep(&key, &value) {
                cursor.delete_current()?;
                deleted += 1;
            }
            // After a delete, the entry that followed the deleted one.
            entry = cursor.next()?;
        }
        Ok(deleted)
    }

    /// Removes and returns the first entry (in a `dupsort` table, the first value of the first
    /// key); `None` when the table is empty.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Queue;
    /// # #[derive(Schema)]
    /// # struct App(Queue);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Queue>(&2, &"second".to_string())?;
    /// tx.put::<Queue>(&1, &"first".to_string())?;
    /// assert_eq!(tx.pop_first::<Queue>()?, Some((1, "first".to_string())));
    /// assert_eq!(tx.pop_first::<Queue>()?, Some((2, "second".to_string())));
    /// assert_eq!(tx.pop_first::<Queue>()?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] (nothing is removed then), [`Error::Mdbx`].
    pub fn pop_first<T: Table>(&mut self) -> Result<Option<(T::Key, T::Value)>>
    where
        S: Contains<T>,
    {
        let mut cursor = self.cursor_mut::<T>()?;
        let first = cursor.first()?;
        if first.is_some() {
            cursor.delete_current()?;
        }
        Ok(first)
    }

    /// Removes and returns the last entry (in a `dupsort` table, the last value of the last
    /// key); `None` when the table is empty.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Stack;
    /// # #[derive(Schema)]
    /// # struct App(Stack);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Stack>(&1, &"bottom".to_string())?;
    /// tx.put::<Stack>(&2, &"top".to_string())?;
    /// assert_eq!(tx.pop_last::<Stack>()?, Some((2, "top".to_string())));
    /// assert_eq!(tx.len::<Stack>()?, 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] (nothing is removed then), [`Error::Mdbx`].
    pub fn pop_last<T: Table>(&mut self) -> Result<Option<(T::Key, T::Value)>>
    where
        S: Contains<T>,
    {
        let mut cursor = self.cursor_mut::<T>()?;
        let last = cursor.last()?;
        if last.is_some() {
            cursor.delete_current()?;
        }
        Ok(last)
    }

    /// Commits: every write becomes visible to later transactions, durably per the
    /// [`SyncMode`](crate::SyncMode). A transaction that changed nothing ends without writing
    /// to the file (no new transaction ID, no flush).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.commit()?;
    /// assert_eq!(db.read()?.get::<Names>(&1)?.as_deref(), Some("one"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::MapFull`], [`Error::DiskFull`] (the file system filled up) or [`Error::Env`];
    /// the transaction is then aborted and nothing of it is written.
    pub fn commit(mut self) -> Result<()> {
        let raw = self.raw.take().expect("transaction is live");
        let shared = &self.db.shared;
        #[cfg(feature = "metrics")]
        return match raw.commit_timed() {
            Ok(seconds) => {
                telemetry::commit(&self.db.telemetry, seconds);
                Ok(())
            }
            Err(code) => Err(shared.fail(code, At::commit(None, "commit"))),
        };
        #[cfg(not(feature = "metrics"))]
        raw.commit()
            .map_err(|code| shared.fail(code, At::commit(None, "commit")))
    }

    /// Runs `f` in a transaction nested in this one (libmdbx's nested write transaction, a
    /// savepoint): `f` gets this transaction, and everything it writes is kept when it returns
    /// `Ok`, and undone, as if `f` had never run, when it returns `Err` or panics. Either way
    /// this transaction goes on, with every write made before the call. Nesting goes to any
    /// depth (`f` may call `nested` again), and nothing is visible to readers before the
    /// outermost [`commit`](Tx::commit).
    ///
    /// `f`'s error type is yours, as long as a Tabula [`Error`] converts into it (for the
    /// failure to begin or end the nested transaction).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = String, value = u64)]
    /// # struct Balances;
    /// # #[derive(Schema)]
    /// # struct Bank(Balances);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<Bank>(dir.path(), Options::new())?;
    /// #[derive(Debug)]
    /// enum TransferError { Insufficient, Db(tabula::Error) }
    /// impl From<tabula::Error> for TransferError {
    ///     fn from(e: tabula::Error) -> Self { TransferError::Db(e) }
    /// }
    ///
    /// let mut tx = db.write()?;
    /// tx.put::<Balances>("alice", &10)?;
    /// let transfer = |tx: &mut tabula::RwTx<'_, Bank>, amount: u64| {
    ///     tx.nested(|tx| {
    ///         let bob = tx.get::<Balances>("bob")?.unwrap_or(0);
    ///         tx.put::<Balances>("bob", &(bob + amount))?; // undone if alice is short
    ///         let alice = tx.get::<Balances>("alice")?.unwrap_or(0);
    ///         let left = alice.checked_sub(amount).ok_or(TransferError::Insufficient)?;
    ///         tx.put::<Balances>("alice", &left)?;
    ///         Ok(())
    ///     })
    /// };
    /// transfer(&mut tx, 4).unwrap();
    /// assert!(matches!(transfer(&mut tx, 50), Err(TransferError::Insufficient)));
    /// tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.get::<Balances>("alice")?, Some(6));
    /// assert_eq!(tx.get::<Balances>("bob")?, Some(4)); // the failed transfer left no trace
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `f`'s error; or [`Error::Env`] / [`Error::MapFull`] when libmdbx cannot begin the nested
    /// transaction or merge it into this one (its writes are then undone).
    pub fn nested<R, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> std::result::Result<R, E>,
    ) -> std::result::Result<R, E> {
        /// Ends the nested transaction and gives `tx` its parent back, discarding the nested
        /// writes unless `commit` is called: on an error and while unwinding from a panic.
        struct Resume<'a, 'db, S: Schema> {
            tx: &'a mut Tx<'db, S, Rw>,
            parent: Option<engine::ParentTxn>,
        }
        impl<S: Schema> Resume<'_, '_, S> {
            fn end(&mut self, commit: bool) -> std::result::Result<(), Code> {
                let parent = self.parent.take().expect("resumed once");
                parent.resume(self.tx.raw_mut(), commit)
            }
        }
        impl<S: Schema> Drop for Resume<'_, '_, S> {
            fn drop(&mut self) {
                if self.parent.is_some() {
                    let _ = self.end(false);
                }
            }
        }

        let db = self.db;
        let parent = self
            .raw_mut()
            .nest()
            .map_err(|code| db.shared.fail(code, At::env("begin a nested transaction")))?;
        let mut guard = Resume {
            tx: self,
            parent: Some(parent),
        };
        match f(guard.tx) {
            Ok(value) => {
                guard.end(true).map_err(|code| {
                    db.shared
                        .fail(code, At::commit(None, "commit a nested transaction"))
                })?;
                Ok(value)
            }
            Err(e) => {
                guard
                    .end(false)
                    .map_err(|code| db.shared.fail(code, At::env("abort a nested transaction")))?;
                Err(e)
            }
        }
    }

    /// Aborts: nothing of this transaction is written. Dropping the transaction does the same.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"one".to_string())?;
    /// tx.abort();
    /// assert_eq!(db.read()?.get::<Names>(&1)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn abort(self) {}

    /// Stores under `key` a value of `len` bytes that `fill` writes straight into the database
    /// page, with no buffer in between (libmdbx's `MDBX_RESERVE`): for tables whose codec
    /// stores bytes as given (`codec = Raw`, an [`AnyBytes`] codec), say a value assembled
    /// from parts or serialized by an `std::io::Write` serializer. Replaces what was there,
    /// like [`put`](Tx::put).
    ///
    /// `fill` gets the [`Room`]: write it in order ([`std::io::Write`]) or at any offset
    /// ([`Room::zeroed`]); bytes left unwritten are stored as zeros. It returns whatever it
    /// likes. The room is valid only until the transaction's next write, so it is lent to
    /// `fill` for the call alone: the closure cannot keep it, and the transaction is borrowed
    /// mutably meanwhile.
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// use std::io::Write;
    ///
    /// #[derive(Table)]
    /// #[table(key = u64, value = Vec<u8>, codec = Raw)]
    /// struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let (header, body) = (b"hdr:", b"payload");
    /// let mut tx = db.write()?;
    /// let written = tx.put_reserve::<Blobs, _>(&1, header.len() + body.len(), |room| {
    ///     room.write_all(header)?;
    ///     room.write_all(body)?;
    ///     std::io::Result::Ok(room.position())
    /// })?;
    /// assert_eq!(written?, 11);
    /// assert_eq!(tx.get_bytes::<Blobs>(&1)?, Some(&b"hdr:payload"[..]));
    /// tx.commit()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`], [`Error::MapFull`], [`Error::DiskFull`], [`Error::Mdbx`];
    /// [`Error::InvalidTable`] on a `dupsort` table (libmdbx cannot reserve room there).
    pub fn put_reserve<T: Table, R>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        len: usize,
        fill: impl FnOnce(&mut Room<'_>) -> R,
    ) -> Result<R>
    where
        S: Contains<T>,
        T::Codec: AnyBytes,
    {
        if T::FLAGS.dupsort {
            return Err(Error::InvalidTable {
                table: T::NAME.to_string(),
                rust_name: T::RUST_NAME,
                problem: "`put_reserve` writes into a reserved room of the page, which libmdbx \
                         does not allow in a dupsort table: use `put`"
                    .to_string(),
            });
        }
        let dbi = dbi_of::<S, T>(self.db);
        let db = self.db;
        let raw = self.raw_mut();
        with_key::<T, _, _>(key, |k| {
            raw.put_reserve(dbi, k, len, engine::put::UPSERT, fill)
                .map_err(|code| {
                    db.shared
                        .fail(code, At::of::<T>("put_reserve").entry(k, len))
                })
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Borrowed bytes (issue 26): ranges bounded by borrowed keys, appends of `&[u8]` values, and a
// walk that decides on the stored bytes without copying or decoding them.

impl<'db, S: Schema, M: Mode> Tx<'db, S, M> {
    /// [`range`](Tx::range) with bounds in any form the key accepts ([`AsKey`]): `&[u8]` for a
    /// `Vec<u8>` key, `&str` for a `String` key, so a range needs no owned key. The bounds are
    /// encoded once, when the iterator is made. The second type parameter is the bounds' type
    /// (`_` lets the compiler take it from the range).
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = Vec<u8>, value = Vec<u8>, codec = Raw)]
    /// # struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for k in [&b"a"[..], b"b", b"c", b"d"] { tx.put_bytes::<Blobs>(k, b"v")?; }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let start: &[u8] = b"b";
    /// let mut it = tx.range_by::<Blobs, _>(start..); // a borrowed bound
    /// assert_eq!(it.next_raw().unwrap()?.0, b"b");
    /// let end: &[u8] = b"d";
    /// let keys: Vec<Vec<u8>> = tx.range_by::<Blobs, _>(start..end).keys().collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [b"b".to_vec(), b"c".to_vec()]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn range_by<T: Table, Q: AsKey<T::Key> + ?Sized>(
        &self,
        range: impl RangeBounds<Q>,
    ) -> Iter<'_, T>
    where
        S: Contains<T>,
    {
        self.iter_between::<T>(Positions {
            lower: stored_bound::<T, _>(range.start_bound()),
            upper: stored_bound::<T, _>(range.end_bound()),
            lower_dup: None,
        })
    }
}

impl<'db, S: Schema> Tx<'db, S, Rw> {
    /// [`append`](Tx::append) of a `&[u8]` value stored as it is, for a table whose codec
    /// stores bytes as given (`codec = Raw`, or another [`AnyBytes`] codec): no `Vec<u8>` is
    /// built first. The key must sort after every key in the table. For many entries,
    /// [`Appender::append_bytes`] keeps one cursor.
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = Vec<u8>, codec = Raw)]
    /// # struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let frame: &[u8] = &[1, 2, 3];
    /// let mut tx = db.write()?;
    /// tx.append_bytes::<Blobs>(&1, frame)?;
    /// tx.append_bytes::<Blobs>(&2, &frame[1..])?;
    /// let late = tx.append_bytes::<Blobs>(&2, frame);
    /// assert!(matches!(late, Err(tabula::Error::AppendOutOfOrder { .. })));
    /// assert_eq!(tx.get_bytes::<Blobs>(&2)?, Some(&[2u8, 3][..]));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`append`](Tx::append).
    pub fn append_bytes<T: Table>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &[u8],
    ) -> Result<()>
    where
        S: Contains<T>,
        T::Codec: AnyBytes,
    {
        let dbi = dbi_of::<S, T>(self.db);
        let db = self.db;
        let raw = self.raw_mut();
        with_key::<T, _, _>(key, |k| {
            raw.put(dbi, k, value, engine::put::APPEND_STRICT)
                .map_err(|code| {
                    if code == Code::EKEYMISMATCH || code == Code::KEYEXIST {
                        Error::AppendOutOfOrder {
                            table: T::NAME,
                            key: KeyHex::new(k),
                            last: last_key(raw, dbi),
                        }
                    } else {
                        db.shared
                            .fail(code, At::of::<T>("append_bytes").entry(k, value.len()))
                    }
                })
        })
    }

    /// Walks the entries whose key is in `range`, in key order, and deletes those for which
    /// `keep(key, value)` returns `false` (in a `dupsort` table, value by value); returns how
    /// many were deleted. `keep` sees the stored bytes (the key's encoding and the value as the
    /// codec stored it), borrowed from the page: nothing is copied or decoded, where
    /// [`retain`](Tx::retain) decodes every entry into owned values. The closure cannot write
    /// to the transaction (it is borrowed by the walk).
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = Vec<u8>, codec = Raw)]
    /// # struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// for k in 1..=10u64 {
    ///     tx.put::<Blobs>(&k, &vec![k as u8; 3])?;
    /// }
    /// // Keys 3..=8: drop the values whose first byte is odd.
    /// let removed = tx.retain_bytes::<Blobs>(3..=8, |_key, value| value[0] % 2 == 0)?;
    /// assert_eq!(removed, 3); // 3, 5, 7
    /// let left: Vec<u64> = tx.iter::<Blobs>().keys().collect::<Result<_, _>>()?;
    /// assert_eq!(left, [1, 2, 4, 6, 8, 9, 10]);
    /// // The whole table: `..`; the key is the stored (big-endian) encoding.
    /// tx.retain_bytes::<Blobs>(.., |key, _| key[7] != 10)?;
    /// assert_eq!(tx.len::<Blobs>()?, 6);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure (entries before it are already judged).
    pub fn retain_bytes<T: Table>(
        &mut self,
        range: impl RangeBounds<T::Key>,
        mut keep: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64>
    where
        S: Contains<T>,
    {
        use crate::engine::{CursorNav, del, op};
        /// What the walk does at an entry.
        enum Step {
            Skip,
            Keep,
            Delete,
            Stop,
        }
        let dbi = dbi_of::<S, T>(self.db);
        let shared = &self.db.shared;
        let fail = |code| crate::stored::cursor_error::<T>("retain_bytes", code);
        let upper = stored_bound::<T, _>(range.end_bound());
        let lower = stored_bound::<T, _>(range.start_bound());
        let raw = self.raw.as_mut().expect("transaction is live");
        let mut cursor = raw.lend().cursor(dbi, &shared.cursors).map_err(fail)?;
        let (mut op, from, mut skip_from) = match &lower {
            std::ops::Bound::Unbounded => (op::FIRST, None, false),
            std::ops::Bound::Included(k) => (op::SET_RANGE, Some(k.as_slice()), false),
            std::ops::Bound::Excluded(k) => (op::SET_RANGE, Some(k.as_slice()), true),
        };
        let mut seek = from;
        let mut deleted = 0u64;
        loop {
            let step = cursor.get_with(op, seek.take(), None, |k, v| {
                use crate::stored::cmp_keys;
                if skip_from {
                    match from {
                        // An excluded lower bound: every value of that key is skipped.
                        Some(f) if cmp_keys::<T>(k, f).is_eq() => return Step::Skip,
                        _ => skip_from = false,
                    }
                }
                let inside = match &upper {
                    std::ops::Bound::Unbounded => true,
                    std::ops::Bound::Included(u) => cmp_keys::<T>(k, u.as_slice()).is_le(),
                    std::ops::Bound::Excluded(u) => cmp_keys::<T>(k, u.as_slice()).is_lt(),
                };
                match (inside, inside && keep(k, v)) {
                    (false, _) => Step::Stop,
                    (true, true) => Step::Keep,
                    (true, false) => Step::Delete,
                }
            });
            match step {
                Ok(None) | Ok(Some(Step::Stop)) => break,
                Err(code) if code == Code::ENODATA => break,
                Err(code) => return Err(fail(code)),
                Ok(Some(Step::Skip | Step::Keep)) => {}
                Ok(Some(Step::Delete)) => {
                    cursor
                        .del(del::CURRENT)
                        .map_err(|code| shared.fail(code, At::of::<T>("retain_bytes")))?;
                    deleted += 1;
                }
            }
            // After a delete, `MDBX_NEXT` lands on the entry that followed the deleted one.
            op = op::NEXT;
        }
        Ok(deleted)
    }
}

/// A range bound in the form table `T` stores keys.
fn stored_bound<T: Table, Q: AsKey<T::Key> + ?Sized>(
    b: std::ops::Bound<&Q>,
) -> std::ops::Bound<crate::codec::KeyBuf> {
    use std::ops::Bound;
    let stored = |q: &Q| {
        with_key::<T, _, _>(q, |k| {
            let mut buf = crate::codec::KeyBuf::new();
            buf.extend_from_slice(k);
            buf
        })
    };
    match b {
        Bound::Included(q) => Bound::Included(stored(q)),
        Bound::Excluded(q) => Bound::Excluded(stored(q)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

// ---------------------------------------------------------------------------------------------
// Per-transaction durability (issue 26): a write transaction that commits without a flush in a
// durable database, for an import phase between two durable commits, without reopening.

impl<S: Schema> Db<S> {
    /// Begins a write transaction whose commit does not flush: in a database opened with
    /// [`SyncMode::Durable`](crate::SyncMode::Durable) (the default), this one transaction
    /// commits as [`SyncMode::SafeNoSync`](crate::SyncMode::SafeNoSync) would (libmdbx's
    /// per-transaction `MDBX_TXN_NOSYNC`, what [`bulk_load`](Db::bulk_load) uses between its
    /// batches). Everything else is [`write`](Db::write)'s.
    ///
    /// The guarantee: a process crash loses nothing (the commit is in the OS page cache). A
    /// system crash or power loss may undo this commit and every other commit since the last
    /// flush, never one before it, and never damages the file: libmdbx does not write over the
    /// pages of the last flushed commit until a newer one is flushed. The next flush makes it
    /// durable with everything before it: an ordinary commit ([`write`](Db::write)),
    /// [`Db::sync`], or libmdbx itself when an unflushed commit finds the file full.
    ///
    /// In the other sync modes this is the same as [`write`](Db::write): `SafeNoSync` and
    /// `UtterlyNoSync` do not flush at commit anyway, and under `NoMetaSync` the meta page of
    /// the last commit may not be on the disk yet, which unflushed commits could replace; so
    /// there the transaction commits as the mode says.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = tabula::open::<App>(dir.path(), Options::new())?; // durable
    /// for k in 0..100u64 {
    ///     let mut tx = db.write_nosync()?; // an import: one small commit per item, no flush
    ///     tx.put::<Names>(&k, &k.to_string())?;
    ///     tx.commit()?;
    /// }
    /// assert!(db.info()?.unsynced_bytes > 0); // committed, not yet flushed
    /// db.sync()?; // one flush makes the whole import durable
    /// assert_eq!(db.info()?.unsynced_bytes, 0);
    /// assert_eq!(db.read()?.len::<Names>()?, 100);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`write`](Db::write).
    pub fn write_nosync(&self) -> Result<Tx<'_, S, Rw>> {
        if self.shared.read_only {
            return Err(Error::ReadOnly {
                op: "begin a write transaction",
                path: self.shared.path.clone(),
            });
        }
        let raw = self
            .shared
            .env
            .begin_write_nosync()
            .map_err(|code| self.shared.fail(code, At::env("begin write transaction")))?;
        Ok(Tx::new(self, raw))
    }
}

#[cold]
#[inline(never)]
pub(crate) fn warn_long_read(txn_id: u64, age_ms: u64) {
    tracing::warn!(
        target: "tabula",
        txn_id,
        age_ms,
        "a read transaction was open for {:.1} s: while it lives libmdbx cannot reuse pages \
         freed after its snapshot, so the file grows; keep read transactions short (threshold: \
         `Options::long_read_warning`)",
        age_ms as f64 / 1000.0
    );
}

/// [`warn_long_read`] for `raw`, which it takes and gives back by value: the drop's fast path
/// then keeps the transaction in a register instead of spilling it for this rare call.
#[cold]
#[inline(never)]
fn warn_long_read_of(raw: RawTxn, age_ms: u64) -> RawTxn {
    warn_long_read(raw.id(), age_ms);
    raw
}

/// The last value of `key`, for error messages.
fn last_value(raw: &mut RawTxn, dbi: Dbi, key: &[u8]) -> Option<KeyHex> {
    let mut c = raw.write_cursor(dbi).ok()?;
    c.get_at(engine::op::SET_KEY, Some(key)).ok()??;
    let (_, v) = c.get(engine::op::LAST_DUP).ok()??;
    Some(KeyHex::new(v))
}

/// The table's last key, for error messages.
fn last_key(raw: &mut RawTxn, dbi: Dbi) -> Option<KeyHex> {
    let mut c = raw.write_cursor(dbi).ok()?;
    let (k, _) = c.get(engine::op::LAST).ok()??;
    Some(KeyHex::new(k))
}

impl<S: Schema, M: Mode> Drop for Tx<'_, S, M> {
    #[inline]
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            if M::READ_ONLY {
                let mut raw = raw;
                if self.db.shared.read_clock {
                    let age_ns = engine::coarse_now_ns().saturating_sub(self.started_ns);
                    if age_ns >= self.db.shared.long_read_ns {
                        raw = warn_long_read_of(raw, age_ns / 1_000_000);
                    }
                    telemetry::read_txn_ended(&self.db.telemetry, age_ns / 1_000_000);
                }
                self.db.park(raw);
            } else {
                drop(raw); // aborts
            }
        }
    }
}

impl<S: Schema, M: Mode> std::fmt::Debug for Tx<'_, S, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(if M::READ_ONLY { "RoTx" } else { "RwTx" })
            .field("id", &self.raw.as_ref().map(RawTxn::id))
            .finish()
    }
}

/// Entry and page counts of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableStat {
    /// Entries (key-value pairs).
    pub entries: u64,
    /// Height of the B-tree.
    pub depth: u32,
    /// Branch pages.
    pub branch_pages: u64,
    /// Leaf pages.
    pub leaf_pages: u64,
    /// Overflow (large value) pages.
    pub overflow_pages: u64,
    /// Page size in bytes.
    pub page_size: u32,
}

impl TableStat {
    pub(crate) fn from_raw(s: engine::RawStat) -> Self {
        TableStat {
            entries: s.entries,
            depth: s.depth,
            branch_pages: s.branch_pages,
            leaf_pages: s.leaf_pages,
            overflow_pages: s.overflow_pages,
            page_size: s.page_size,
        }
    }
}
