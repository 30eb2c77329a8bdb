//! Transactions and typed table operations.

use std::marker::PhantomData;
use std::ops::Deref;

use crate::codec::{AnyBytes, AsKey, KeyRange, Value};
use crate::cursor::{Appender, Opener, WriteCursor, WriteCursors};
use crate::engine::{self, Code, RawTxn, Room};
use crate::error::{At, Error, Result};
use crate::index;
use crate::mode::{ATransactionIsUsedByOneThreadAtATime, Mode, Ro, Rw};
use crate::pipeline::{self, InTxn, Landing};
use crate::read::{self, Reads};
use crate::state::Db;
use crate::stored::{dbi_of, encode_value, with_key};
use crate::table::{Contains, DupSort, Schema, Table, Unindexed, ValueOf, Writable};
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
/// The reads (`get`, `iter`, `range`, `cursor`, ...) are [`Reads`]'s, which a `Tx` dereferences
/// to (an [`OwnedTx`](crate::OwnedTx) too); the writes are this type's.
///
/// A read transaction, when dropped, is parked for reuse; a write transaction that is dropped
/// without [`commit`](Tx::commit) is aborted.
pub struct Tx<'db, S: Schema, M: Mode> {
    // The markers come first: the compiler reports the first field that is not `Send`/`Sync`.
    _mode: PhantomData<(M, M::ThreadMarker)>,
    _one_thread_at_a_time: PhantomData<std::cell::Cell<ATransactionIsUsedByOneThreadAtATime>>,
    reads: Reads<TxHandle<'db, S>>,
    pub(crate) scratch: M::Scratch,
    /// When a read transaction began (coarse clock, ns), for the long-read warning.
    started_ns: u64,
}

/// What a [`Tx`]'s reads go through ([`Handle`](crate::Handle)): the libmdbx transaction it holds and its
/// database. Made only by Tabula.
pub struct TxHandle<'db, S: Schema> {
    raw: Option<RawTxn>,
    db: &'db Db<S>,
}

#[allow(private_interfaces, private_bounds)] // see `read::sealed`
impl<'db, S: Schema> read::sealed::Access for TxHandle<'db, S> {
    type Schema = S;

    #[inline(always)]
    fn db(&self) -> &Db<S> {
        self.db
    }

    #[inline(always)]
    fn with_txn<R>(&self, f: impl FnOnce(&RawTxn) -> Result<R>) -> Result<R> {
        f(self.raw())
    }

    #[inline(always)]
    fn lend(&self) -> Result<&RawTxn> {
        Ok(self.raw())
    }
}

impl<S: Schema> TxHandle<'_, S> {
    #[inline(always)]
    fn raw(&self) -> &RawTxn {
        // `raw` is only taken by `commit`/`drop`, which consume the transaction.
        self.raw.as_ref().expect("transaction is live")
    }
}

impl<'db, S: Schema, M: Mode> Deref for Tx<'db, S, M> {
    type Target = Reads<TxHandle<'db, S>>;

    #[inline(always)]
    fn deref(&self) -> &Self::Target {
        &self.reads
    }
}

// `&Tx` changes nothing (every write takes `&mut self`); only the `Cell` in the marker that
// makes `Tx` `!Sync` would otherwise make it `!RefUnwindSafe`.
impl<S: Schema, M: Mode> std::panic::RefUnwindSafe for Tx<'_, S, M> {}

impl<'db, S: Schema, M: Mode> Tx<'db, S, M> {
    pub(crate) fn new(db: &'db Db<S>, raw: RawTxn) -> Self {
        Tx {
            reads: Reads {
                h: TxHandle { raw: Some(raw), db },
            },
            scratch: Default::default(),
            // Two coarse clock reads per read transaction (none per get), none when the warning
            // is off.
            started_ns: if M::READ_ONLY && db.shared.run().read_clock {
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
        self.reads.h.raw()
    }

    #[inline]
    pub(crate) fn raw_mut(&mut self) -> &mut RawTxn {
        self.reads.h.raw.as_mut().expect("transaction is live")
    }

    /// The database this transaction reads.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.db().path(), db.path());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn db(&self) -> &'db Db<S> {
        self.reads.h.db
    }

    /// The libmdbx transaction ID (the snapshot a read transaction sees).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
}

impl<'db, S: Schema> Tx<'db, S, Rw> {
    fn put_with<T: Table>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
        flags: u32,
        op: &'static str,
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db());
        let shared = &self.db().shared;
        let Tx {
            reads: Reads {
                h: TxHandle { raw, .. },
            },
            scratch,
            ..
        } = self;
        let raw = raw.as_mut().expect("transaction is live");
        let indexed = index::On::<S, T>::ANY;
        let mut target = InTxn { raw, dbi };
        with_key::<T, _, _>(key, |k| {
            // A codec that knows its encoded length writes straight into the page (libmdbx
            // cannot reserve room in a dupsort table). For the shipped codecs `encoded_len` is
            // a constant `None` and this folds away.
            if !indexed
                && !T::HISTORY
                && !T::FLAGS.dupsort
                && let Some(item) = value.as_item()
                && let Some(len) = <T::Codec as Value>::encoded_len(item)
            {
                return pipeline::put_encoded_in_place::<T>(
                    &mut target,
                    shared,
                    k,
                    len,
                    flags,
                    op,
                    |room| <T::Codec as Value>::encode_into(item, room),
                );
            }
            let v = encode_value::<T, _>(k, value, scratch)?;
            let row = value.as_item();
            let mut landing = Landing::Unmoved;
            pipeline::put::<T>(
                &mut target,
                shared,
                indexed,
                (k, v),
                row,
                flags,
                op,
                &mut landing,
            )
        })
    }

    /// Stores `value` under `key`, replacing what was there. In a `dupsort` table, adds `value`
    /// to the key's values (a pair already present is left as is).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn put<T: Writable>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        self.put_with::<T>(key, value, engine::put::UPSERT, "put")
    }

    /// Stores `value` under `key` only if the key is absent.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn insert<T: Writable>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn append<T: Writable>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// tx.append_dup::<Sets>(&1, &255)?;
    /// tx.append_dup::<Sets>(&1, &256)?; // values rise in their own order
    /// let late = tx.append_dup::<Sets>(&1, &7); // not after 256
    /// assert!(matches!(late, Err(tabula::Error::AppendDupOutOfOrder { .. })));
    /// let again = tx.append_dup::<Sets>(&1, &256); // equal to the last value
    /// assert!(matches!(again, Err(tabula::Error::AppendDupOutOfOrder { .. })));
    /// assert_eq!(tx.len::<Sets>()?, 2);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendDupOutOfOrder`] naming the key, the value and the key's last value when
    /// the value does not sort after it (an equal value included); otherwise as [`put`](Tx::put).
    pub fn append_dup<T: DupSort + Writable>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<()>
    where
        S: Contains<T>,
    {
        self.put_with::<T>(key, value, engine::put::APPENDDUP_STRICT, "append_dup")
    }

    /// Deletes `key` (in a `dupsort` table, all its values). Returns whether it was present.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn delete<T: Writable>(&mut self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<bool>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db());
        let shared = &self.db().shared;
        let mut target = InTxn {
            raw: self.raw_mut(),
            dbi,
        };
        let indexed = index::On::<S, T>::ANY;
        with_key::<T, _, _>(key, |k| {
            pipeline::delete::<T>(&mut target, shared, indexed, k, None, "delete")
        })
    }

    /// Deletes one `(key, value)` pair of a `dupsort` table. Returns whether it was present.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn delete_dup<T: DupSort + Writable>(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<bool>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db());
        let db = self.db();
        let Tx {
            reads: Reads {
                h: TxHandle { raw, .. },
            },
            scratch,
            ..
        } = self;
        let raw = raw.as_mut().expect("transaction is live");
        let mut target = InTxn { raw, dbi };
        with_key::<T, _, _>(key, |k| {
            let v = encode_value::<T, _>(k, value, scratch)?;
            pipeline::delete::<T>(&mut target, &db.shared, false, k, Some(v), "delete_dup")
        })
    }

    /// Stores bytes exactly as given under exactly these key bytes, bypassing the key and value
    /// codecs: for repair tools and for tests that need damaged entries. Typed reads of such an
    /// entry fail with [`Error::Decode`] when the bytes are not a valid encoding.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn put_bytes<T: Writable>(&mut self, key: &[u8], value: &[u8]) -> Result<()>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db());
        let shared = &self.db().shared;
        let mut target = InTxn {
            raw: self.raw_mut(),
            dbi,
        };
        let (indexed, flags) = (index::On::<S, T>::ANY, engine::put::UPSERT);
        let mut landing = Landing::Unmoved;
        let entry = (key, value);
        pipeline::put::<T>(
            &mut target,
            shared,
            indexed,
            entry,
            None,
            flags,
            "put_bytes",
            &mut landing,
        )
    }

    /// Removes every entry of the table; the table itself stays, and so does its
    /// [sequence](Tx::next_sequence).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn clear<T: Writable>(&mut self) -> Result<()>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db());
        let shared = &self.db().shared;
        pipeline::clear::<T>(self.raw_mut(), shared, dbi, index::On::<S, T>::ANY)
    }

    /// A bulk loader holding one write cursor: each [`Appender::append`] adds an entry after the
    /// last one without descending the tree.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn appender<T: Writable>(&mut self) -> Result<Appender<'_, T>>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db());
        let shared = &self.db().shared;
        let Tx {
            reads: Reads {
                h: TxHandle { raw, .. },
            },
            scratch,
            ..
        } = self;
        let raw = raw.as_mut().expect("transaction is live");
        let cursor = raw.write_cursor(dbi).map_err(|code| Error::Mdbx {
            table: T::NAME,
            op: "open cursor",
            key: None,
            code: code.into(),
        })?;
        Ok(Appender::new(cursor, scratch, shared))
    }

    /// A write cursor over table `T`: it moves like a [`Cursor`](crate::Cursor) and writes at its position
    /// (`upsert`, `insert`, `append`, `append_dup`, `delete_current`, ...). Its reads return
    /// owned values, so entries can be deleted while walking. Borrows the transaction; for
    /// cursors over several tables at once, see [`cursors_mut`](Tx::cursors_mut).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn cursor_mut<T: Writable>(&mut self) -> Result<WriteCursor<'_, T>>
    where
        S: Contains<T>,
    {
        let db = self.db();
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
    /// # let dir = tabula::__doc::temp_dir();
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
        let db = self.db();
        C::open(&Opener::new(self.raw_mut().lend(), db))
    }

    /// Deletes every entry whose key falls in `range` (in a `dupsort` table, every value of
    /// those keys), walking the range once with a write cursor. Returns how many (key, value)
    /// pairs were deleted.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn delete_range<T: Writable>(&mut self, range: impl KeyRange<T::Key>) -> Result<u64>
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    /// judged; in a table with indexes nothing is deleted then), [`Error::Mdbx`].
    pub fn retain<T: Writable>(
        &mut self,
        mut keep: impl FnMut(&T::Key, &T::Value) -> bool,
    ) -> Result<u64>
    where
        S: Contains<T>,
    {
        if index::On::<S, T>::ANY {
            // Judged first, each doomed row's index entries computed (its key functions run,
            // and may panic) before anything is deleted; then deleted row by row.
            let shared = &self.db().shared;
            let mut doomed = Vec::new();
            for row in self.iter::<T>() {
                let (key, value) = row?;
                if !keep(&key, &value) {
                    pipeline::plan_delete_row::<T>(shared, &key, &value)?;
                    doomed.push(key);
                }
            }
            for key in &doomed {
                self.delete::<T>(key)?;
            }
            return Ok(doomed.len() as u64);
        }
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&2, &"second".to_string())?;
    /// tx.put::<Names>(&1, &"first".to_string())?;
    /// assert_eq!(tx.pop_first::<Names>()?, Some((1, "first".to_string())));
    /// assert_eq!(tx.pop_first::<Names>()?, Some((2, "second".to_string())));
    /// assert_eq!(tx.pop_first::<Names>()?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] (nothing is removed then), [`Error::Mdbx`].
    pub fn pop_first<T: Writable>(&mut self) -> Result<Option<(T::Key, T::Value)>>
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Names>(&1, &"bottom".to_string())?;
    /// tx.put::<Names>(&2, &"top".to_string())?;
    /// assert_eq!(tx.pop_last::<Names>()?, Some((2, "top".to_string())));
    /// assert_eq!(tx.len::<Names>()?, 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] (nothing is removed then), [`Error::Mdbx`].
    pub fn pop_last<T: Writable>(&mut self) -> Result<Option<(T::Key, T::Value)>>
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        let mut raw = self.reads.h.raw.take().expect("transaction is live");
        let db = self.db();
        raw.release_kept_cursor(db.shared.cursors());
        pipeline::commit(&db.shared, &db.telemetry, raw, At::commit(None, "commit"))
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
    /// # let dir = tabula::__doc::temp_dir();
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
            savepoint: Option<pipeline::Savepoint>,
        }
        impl<S: Schema> Resume<'_, '_, S> {
            fn end(&mut self, commit: bool) -> std::result::Result<(), Code> {
                let savepoint = self.savepoint.take().expect("resumed once");
                let shared = &self.tx.db().shared;
                pipeline::unnest(shared, self.tx.raw_mut(), savepoint, commit)
            }
        }
        impl<S: Schema> Drop for Resume<'_, '_, S> {
            fn drop(&mut self) {
                if self.savepoint.is_some() {
                    let _ = self.end(false);
                }
            }
        }

        let db = self.db();
        let savepoint = pipeline::nest(&db.shared, self.raw_mut())?;
        let mut guard = Resume {
            tx: self,
            savepoint: Some(savepoint),
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    /// # let dir = tabula::__doc::temp_dir();
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
    pub fn put_reserve<T: Unindexed, R>(
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
        let dbi = dbi_of::<S, T>(self.db());
        let shared = &self.db().shared;
        let mut target = InTxn {
            raw: self.raw_mut(),
            dbi,
        };
        let flags = engine::put::UPSERT;
        with_key::<T, _, _>(key, |k| {
            pipeline::put_reserve::<T, R>(&mut target, shared, k, len, flags, "put_reserve", fill)
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Borrowed bytes (issue 26): a walk that decides on the stored bytes without copying or decoding
// them.

impl<'db, S: Schema> Tx<'db, S, Rw> {
    /// Walks the entries whose key is in `range`, in key order, and deletes those for which
    /// `keep(key, value)` returns `false` (in a `dupsort` table, value by value); returns how
    /// many were deleted. `keep` sees the stored bytes (the key's encoding and the value as the
    /// codec stored it), borrowed from the page: nothing is copied or decoded, where
    /// [`retain`](Tx::retain) decodes every entry into owned values. The closure cannot write
    /// to the transaction (it is borrowed by the walk).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn retain_bytes<T: Writable>(
        &mut self,
        range: impl KeyRange<T::Key>,
        mut keep: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64>
    where
        S: Contains<T>,
    {
        if index::On::<S, T>::ANY {
            // Judged first, each doomed row's index entries computed (its key functions run,
            // and may panic) before anything is deleted; then deleted row by row, each with
            // its index entries.
            let mut doomed = Vec::new();
            {
                let shared = &self.db().shared;
                let mut rows = self.range::<T>(range);
                while let Some(row) = rows.next_raw() {
                    let (k, v) = row?;
                    if !keep(k, v) {
                        pipeline::plan_delete_bytes::<T>(shared, k, v)?;
                        doomed.push(k.to_vec());
                    }
                }
            }
            let db = self.db();
            let mut target = InTxn {
                dbi: dbi_of::<S, T>(db),
                raw: self.raw_mut(),
            };
            for k in &doomed {
                pipeline::delete::<T>(&mut target, &db.shared, true, k, None, "delete")?;
            }
            return Ok(doomed.len() as u64);
        }
        use crate::engine::{CursorNav, del, op};
        /// What the walk does at an entry.
        enum Step {
            Skip,
            Keep,
            Delete,
            Stop,
        }
        let db = self.db();
        let dbi = dbi_of::<S, T>(db);
        let shared = &db.shared;
        let fail = |code| crate::stored::cursor_error::<T>("retain_bytes", code);
        let bounds = crate::iter::Positions::range::<T>(&range);
        let (lower, upper) = (bounds.lower(), bounds.upper());
        let raw = self.raw_mut();
        let mut cursor = raw.lend().cursor(dbi, shared.cursors()).map_err(fail)?;
        let (mut op, from, mut skip_from) = match lower {
            std::ops::Bound::Unbounded => (op::FIRST, None, false),
            std::ops::Bound::Included(k) => (op::SET_RANGE, Some(k), false),
            std::ops::Bound::Excluded(k) => (op::SET_RANGE, Some(k), true),
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
                let inside = match upper {
                    std::ops::Bound::Unbounded => true,
                    std::ops::Bound::Included(u) => cmp_keys::<T>(k, u).is_le(),
                    std::ops::Bound::Excluded(u) => cmp_keys::<T>(k, u).is_lt(),
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
                    let flags = del::CURRENT;
                    let op = ("retain_bytes", None);
                    let mut landing = Landing::Unmoved;
                    pipeline::delete_current::<T>(
                        &mut cursor,
                        shared,
                        false,
                        flags,
                        op,
                        &mut landing,
                    )?;
                    deleted += 1;
                }
            }
            // After a delete, `MDBX_NEXT` lands on the entry that followed the deleted one.
            op = op::NEXT;
        }
        Ok(deleted)
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
impl<S: Schema, M: Mode> Drop for Tx<'_, S, M> {
    #[inline]
    fn drop(&mut self) {
        if let Some(mut raw) = self.reads.h.raw.take() {
            raw.release_kept_cursor(self.db().shared.cursors());
            if M::READ_ONLY {
                if self.db().shared.run().read_clock {
                    let age_ns = engine::coarse_now_ns().saturating_sub(self.started_ns);
                    if age_ns >= self.db().shared.run().long_read_ns {
                        raw = warn_long_read_of(raw, age_ns / 1_000_000);
                    }
                    telemetry::read_txn_ended(&self.db().telemetry, age_ns / 1_000_000);
                }
                self.db().shared.park(raw);
            } else {
                drop(raw); // aborts
            }
        }
    }
}

impl<S: Schema, M: Mode> std::fmt::Debug for Tx<'_, S, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(if M::READ_ONLY { "RoTx" } else { "RwTx" })
            .field("id", &self.reads.h.raw.as_ref().map(RawTxn::id))
            .finish()
    }
}
