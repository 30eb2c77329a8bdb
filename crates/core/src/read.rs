//! Every read of a transaction, written once: [`Reads`], which both the transaction ([`Tx`],
//! read or write) and the owned read transaction ([`OwnedTx`]) dereference to. What differs
//! between the two is only how a read reaches the libmdbx transaction ([`Handle`]): a `Tx`
//! holds it; an `OwnedTx` may have been cut for its age, so a read enters it (and fails with
//! [`Error::ReadTxnTimedOut`](crate::Error::ReadTxnTimedOut) once it is cut), and a read whose
//! result borrows the pages pins it for the rest of its life.
//!
//! [`Tx`]: crate::Tx
//! [`OwnedTx`]: crate::OwnedTx

use crate::codec::{AsKey, AsPrefix, KeyRange, ValueRef};
use crate::cursor::Cursor;
use crate::engine;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{At, Result};
use crate::iter::{Iter, Lazy, Positions};
use crate::stored::{
    dbi_of, decode_value, decode_value_ref, has_subkey, lookup, with_key, with_subkey,
};
use crate::table::{Contains, DupSort, Table};

// The sealed supertrait of `Handle` names the crate's own `RawTxn`: reachable in name only,
// since nothing outside the crate can implement `Access` or call its methods.
#[allow(private_interfaces, private_bounds)]
pub(crate) mod sealed {
    use crate::engine::RawTxn;
    use crate::error::Result;
    use crate::state::Db;
    use crate::table::Schema;

    /// What [`Handle`](super::Handle) hides: how a read reaches the transaction.
    pub trait Access {
        /// The schema whose tables the reads take.
        type Schema: Schema;

        /// The database.
        fn db(&self) -> &Db<Self::Schema>;

        /// Runs `f` on the transaction for a read whose result borrows nothing from it.
        fn with_txn<R>(&self, f: impl FnOnce(&RawTxn) -> Result<R>) -> Result<R>;

        /// The transaction, lent for as long as `self` is borrowed, for a read whose result
        /// borrows its pages.
        fn lend(&self) -> Result<&RawTxn>;
    }
}

pub(crate) use sealed::Access;

/// How a transaction's reads reach its libmdbx transaction: implemented by the handles inside
/// [`Tx`](crate::Tx) ([`TxHandle`](crate::TxHandle)) and [`OwnedTx`](crate::OwnedTx)
/// ([`OwnedHandle`](crate::OwnedHandle)) only (sealed). `Handle<Schema = S>` names the schema
/// the reads are checked against.
pub trait Handle: Access {}

impl<A: Access> Handle for A {}

/// The reads of a transaction: what a [`Tx`](crate::Tx) (read or write) and an
/// [`OwnedTx`](crate::OwnedTx) have in common, written and documented once. Both dereference
/// to it, so every method here is called on the transaction itself (`tx.get::<T>(&key)`), with
/// nothing to import.
///
/// Each read takes the table as a type parameter and compiles only for a table of the
/// transaction's schema. Reads whose results borrow the pages (`get_bytes`, `get_ref`,
/// `get_lazy`, the iterators, `cursor`) borrow the transaction; on an [`OwnedTx`](crate::OwnedTx) they also
/// pin its snapshot: from then on it is never cut for its age or by a writer
/// ([`Options::max_read_age`](crate::Options::max_read_age)) until it is dropped.
///
/// A function that reads through either kind of transaction takes `&Reads<H>`:
///
/// ```
/// # use tabula::__doc::*;
/// # let dir = temp_dir();
/// use tabula::{Handle, Reads};
///
/// fn count_names<H: Handle<Schema = App>>(reads: &Reads<H>) -> tabula::Result<u64> {
///     reads.len::<Names>()
/// }
///
/// let db = std::sync::Arc::new(tabula::open::<App>(dir.path(), Options::new())?);
/// let mut tx = db.write()?;
/// tx.put::<Names>(&1, &"one".to_string())?;
/// assert_eq!(count_names(&tx)?, 1); // the write transaction sees its own write
/// tx.commit()?;
/// let (tx, owned) = (db.read()?, db.read_owned()?);
/// assert_eq!(count_names(&tx)?, 1);
/// assert_eq!(count_names(&owned)?, 1);
/// # Ok::<(), tabula::Error>(())
/// ```
pub struct Reads<H: Handle> {
    pub(crate) h: H,
}

impl<H: Handle> Reads<H> {
    /// Reads the value stored under `key`, decoded.
    ///
    /// In a `dupsort` table this is the first (smallest) value of the key; use
    /// [`dups`](Reads::dups) for all of them.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        self.h.with_txn(|raw| {
            lookup::<H::Schema, T, _>(self.h.db(), raw, key, |k, v| {
                v.map(|v| decode_value::<T>(k, v)).transpose()
            })
        })
    }

    /// The stored bytes of the value under `key`, borrowed from the database without copying.
    ///
    /// The slice lives as long as the borrow of the transaction: it cannot outlive it, and a
    /// write transaction cannot write while it is held.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        lookup::<H::Schema, T, _>(self.h.db(), self.h.lend()?, key, |_, v| Ok(v))
    }

    /// Whether `key` is present.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        Ok(self.get_bytes::<T>(key)?.is_some())
    }

    /// Number of entries in the table (in a `dupsort` table, key-value pairs).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        Ok(self.stat::<T>()?.entries)
    }

    /// Whether the table is empty.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        Ok(self.len::<T>()? == 0)
    }

    /// Entry and page counts of the table.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        let dbi = dbi_of::<H::Schema, T>(self.h.db());
        self.h
            .with_txn(|raw| {
                raw.stat(dbi)
                    .map_err(|code| self.h.db().shared.fail(code, At::of::<T>("stat")))
            })
            .map(TableStat::from_raw)
    }

    /// A cursor over the table, for explicit positioning (`first`, `seek`, `next`, ...).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        let dbi = dbi_of::<H::Schema, T>(self.h.db());
        let raw = self
            .h
            .lend()?
            .cursor_cached(dbi, self.h.db().shared.cursors())
            .map_err(|code| self.h.db().shared.fail(code, At::of::<T>("open cursor")))?;
        Ok(Cursor::new(raw, &self.h.db().shared))
    }

    /// Every entry in key order. Double-ended: `.rev()` iterates from the last key.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        self.iter_between::<T>(Positions::all())
    }

    /// The entries whose keys fall in `range`, in key order: any [`KeyRange`] of the key type
    /// (`3..6`, `..=5`, `..`, a pair of `Bound`s), with bounds in any form the key accepts
    /// (`"a".."b"` for a `String` key, `("alice", 0)..` for a `(String, u64)` key), so a range
    /// needs no owned key. The bounds are encoded once, when the iterator is made.
    /// Double-ended.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    ///
    /// With borrowed bounds:
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = Vec<u8>, value = Vec<u8>, codec = Raw)]
    /// # struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tabula::__doc::temp_dir();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # for k in [&b"a"[..], b"b", b"c", b"d"] { tx.put_bytes::<Blobs>(k, b"v")?; }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let (start, end): (&[u8], &[u8]) = (b"b", b"d");
    /// let keys: Vec<Vec<u8>> = tx.range::<Blobs>(start..end).keys().collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [b"b".to_vec(), b"c".to_vec()]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn range<T: Table>(&self, range: impl KeyRange<T::Key>) -> Iter<'_, T>
    where
        H::Schema: Contains<T>,
    {
        self.iter_between::<T>(Positions::range::<T>(&range))
    }

    /// The entries whose composite key starts with `prefix`: the key's first part, or a tuple
    /// of its first parts, in any form the key accepts ([`AsPrefix`]): `"alice"` for a
    /// `(String, u64)` key. Double-ended.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # tx.put::<Balances>(&("alice", 1), &10)?;
    /// # tx.put::<Balances>(&("alice", 2), &20)?;
    /// # tx.put::<Balances>(&("bob", 1), &5)?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let alice = tx.prefix::<Balances>("alice").values();
    /// assert_eq!(alice.collect::<Result<Vec<u64>, _>>()?, [10, 20]);
    /// let (key, _) = tx.prefix::<Balances>("bob").next().unwrap()?;
    /// assert_eq!(key, ("bob".to_string(), 1));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn prefix<T: Table>(&self, prefix: &(impl AsPrefix<T::Key> + ?Sized)) -> Iter<'_, T>
    where
        H::Schema: Contains<T>,
    {
        self.iter_between::<T>(Positions::prefix::<T::Key>(prefix))
    }

    /// The values of `key` in a `dupsort` table, in their order (by subkey, for a table with
    /// one). Yields `(key, value)` pairs like the other iterators; double-ended.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
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
    /// # let dir = tabula::__doc::temp_dir();
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
        H::Schema: Contains<T>,
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
    /// # let dir = tabula::__doc::temp_dir();
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
        H::Schema: Contains<T>,
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
    /// # let dir = tabula::__doc::temp_dir();
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
        H::Schema: Contains<T>,
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
        H::Schema: Contains<T>,
    {
        let dbi = dbi_of::<H::Schema, T>(self.h.db());
        with_key::<T, _, _>(key, |k| {
            with_subkey::<T, _, _>(subkey, |s| {
                self.h.with_txn(|raw| match raw.get_lower_bound(dbi, k, s) {
                    Ok(Some((found, v))) if found == k && (!exact || has_subkey::<T>(v, s)) => {
                        decode_value::<T>(k, v).map(Some)
                    }
                    Ok(_) => Ok(None),
                    Err(code) => Err(self.h.db().shared.fail(code, At::of::<T>(name).key(k))),
                })
            })
        })
    }

    /// Number of values of `key` in a `dupsort` table (0 when it is absent).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        let dbi = dbi_of::<H::Schema, T>(self.h.db());
        with_key::<T, _, _>(key, |k| {
            self.h.with_txn(|raw| {
                raw.count_values(dbi, k).map(|n| n as u64).map_err(|code| {
                    self.h
                        .db()
                        .shared
                        .fail(code, At::of::<T>("dup_count").key(k))
                })
            })
        })
    }

    pub(crate) fn iter_between<T: Table>(&self, positions: Positions) -> Iter<'_, T>
    where
        H::Schema: Contains<T>,
    {
        let dbi = dbi_of::<H::Schema, T>(self.h.db());
        match self.h.lend() {
            Ok(raw) => Iter::new(raw, self.h.db().shared.cursors(), dbi, positions),
            Err(e) => Iter::failed(e),
        }
    }

    /// The value under `key` decoded in place, borrowing the stored bytes: `&[u8]` for a table
    /// with `codec = Raw`, `&T` for `codec = Pod<T>` (a [`ValueRef`] codec). Nothing is copied;
    /// the value lives as long as the borrow of the transaction (a write transaction cannot
    /// write while it is held). For other codecs this does not compile; use [`get`](Reads::get),
    /// or [`get_lazy`](Reads::get_lazy) to decide after reading whether to decode.
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
    /// # let dir = tabula::__doc::temp_dir();
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
        H::Schema: Contains<T>,
        T::Codec: ValueRef,
    {
        lookup::<H::Schema, T, _>(self.h.db(), self.h.lend()?, key, |k, v| {
            v.map(|v| decode_value_ref::<T>(k, v)).transpose()
        })
    }

    /// The value under `key` read but not decoded: a [`Lazy`] holding the stored bytes,
    /// borrowed for as long as the transaction is, decoded when asked ([`Lazy::decode`]).
    /// Works with every codec.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        H::Schema: Contains<T>,
    {
        let dbi = dbi_of::<H::Schema, T>(self.h.db());
        // The key is kept for a decode error's message: the stored copy in the page (the
        // encoded key given here is a temporary).
        let raw = self.h.lend()?;
        with_key::<T, _, _>(key, |k| match raw.get_pair(dbi, k) {
            Ok(Some((stored_key, v))) => Ok(Some(Lazy::new(stored_key, v))),
            Ok(None) => Ok(None),
            Err(code) => Err(self.h.db().shared.fail(code, At::of::<T>("get").key(k))),
        })
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
