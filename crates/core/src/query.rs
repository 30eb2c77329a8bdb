//! Queries by index key, on [`Reads`]: so a [`Tx`](crate::Tx) and an
//! [`OwnedTx`](crate::OwnedTx) both have them. Each reads the index table (an ordinary table
//! of the schema), then the row each entry names.

use std::ops::Bound;

use crate::codec::{AsKey, AsPrefix, KeyRange};
use crate::error::{At, Error, KeyHex, Result};
use crate::iter::Lazy;
use crate::read::{Handle, Reads};
use crate::stored::{dbi_of, with_key};
use crate::table::{Contains, Index, Table, Unique};

/// The primary key of index `I`'s source table.
type Pk<I> = <<I as Index>::Source as Table>::Key;
/// A row of index `I`'s source table.
type Row<I> = <<I as Index>::Source as Table>::Value;

impl<H: Handle> Reads<H> {
    /// The row whose unique index key is `key`, with its primary key; `None` when no row has
    /// it. Only for indexes declared `unique` (a unique query on a non-unique index does not
    /// compile).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_indexer()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Transfers>(&1, &transfer(7, 8, Some(0xabc)))?;
    /// assert_eq!(tx.get_unique::<ByHash>(&0xabc)?, Some((1, transfer(7, 8, Some(0xabc)))));
    /// assert_eq!(tx.get_unique::<ByHash>(&0xdef)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::IndexOutOfStep`] when the entry names a row the table does not have;
    /// [`Error::Decode`], [`Error::Mdbx`].
    pub fn get_unique<I: Unique>(
        &self,
        key: &(impl AsKey<I::Key> + ?Sized),
    ) -> Result<Option<(Pk<I>, Row<I>)>>
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        match self.get::<I>(key)? {
            None => Ok(None),
            Some(primary) => {
                let primary = I::primary(primary);
                let row = self.row_of::<I>(key.encode().as_ref(), &primary)?;
                Ok(Some((primary, row)))
            }
        }
    }

    /// Every row whose index key is `key`, with its primary key, in primary-key order
    /// (`.rev()` for the other order).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_indexer()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Transfers>(&1, &transfer(7, 8, None))?;
    /// tx.put::<Transfers>(&2, &transfer(9, 8, None))?;
    /// tx.put::<Transfers>(&3, &transfer(7, 9, None))?;
    /// let from_7: Vec<u64> = tx
    ///     .by_index::<BySender>(&7)
    ///     .map(|row| row.map(|(id, _)| id))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(from_7, [1, 3]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Each item: [`Error::IndexOutOfStep`] when an entry names a row the table does not have;
    /// [`Error::Decode`], [`Error::Mdbx`].
    pub fn by_index<I: Index>(
        &self,
        key: &(impl AsKey<I::Key> + ?Sized),
    ) -> impl DoubleEndedIterator<Item = Result<(Pk<I>, Row<I>)>> + '_
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        self.rows_of_key::<I, _>(key)
    }

    /// [`by_index`](Reads::by_index) with the key's type named.
    fn rows_of_key<I: Index, Q: AsKey<I::Key> + ?Sized>(
        &self,
        key: &Q,
    ) -> impl DoubleEndedIterator<Item = Result<(Pk<I>, Row<I>)>> + '_
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        let encoded = key.encode().as_ref().to_vec();
        self.range::<I>((Bound::Included(key), Bound::Included(key)))
            .values()
            .map(move |primary| {
                let primary = I::primary(primary?);
                let row = self.row_of::<I>(&encoded, &primary)?;
                Ok((primary, row))
            })
    }

    /// [`by_index`](Reads::by_index) with each row read but not decoded: a [`Lazy`] holding
    /// its stored bytes, decoded when asked ([`Lazy::decode`]), for a query that looks at few
    /// of the rows it finds.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_indexer()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Transfers>(&1, &transfer(7, 8, None))?;
    /// tx.put::<Transfers>(&2, &transfer(7, 9, None))?;
    /// tx.commit()?;
    /// let tx = db.read()?;
    /// let mut rows = tx.by_index_lazy::<BySender>(&7);
    /// let (id, row) = rows.next().unwrap()?;
    /// assert_eq!((id, row.decode()?.to), (1, 8));
    /// assert_eq!(rows.count(), 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Each item: [`Error::IndexOutOfStep`] when an entry names a row the table does not have;
    /// [`Error::Decode`] for an entry, [`Error::Mdbx`].
    pub fn by_index_lazy<I: Index>(
        &self,
        key: &(impl AsKey<I::Key> + ?Sized),
    ) -> impl DoubleEndedIterator<Item = Result<(Pk<I>, Lazy<'_, I::Source>)>> + '_
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        self.lazy_rows_of_key::<I, _>(key)
    }

    /// [`by_index_lazy`](Reads::by_index_lazy) with the key's type named.
    fn lazy_rows_of_key<I: Index, Q: AsKey<I::Key> + ?Sized>(
        &self,
        key: &Q,
    ) -> impl DoubleEndedIterator<Item = Result<(Pk<I>, Lazy<'_, I::Source>)>> + '_
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        let encoded = key.encode().as_ref().to_vec();
        self.range::<I>((Bound::Included(key), Bound::Included(key)))
            .values()
            .map(move |primary| {
                let primary = I::primary(primary?);
                match self.get_lazy::<I::Source>(&primary)? {
                    Some(row) => Ok((primary, row)),
                    None => Err(out_of_step::<I>(&encoded, &primary)),
                }
            })
    }

    /// The rows whose index keys fall in `range`, as `(index key, primary key, row)`, in
    /// index-key order (then primary-key order); `.rev()` for the other direction.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_indexer()?;
    /// let mut tx = db.write()?;
    /// for (id, from) in [(1, 5), (2, 6), (3, 7), (4, 6)] {
    ///     tx.put::<Transfers>(&id, &transfer(from, 0, None))?;
    /// }
    /// let hits: Vec<(u32, u64)> = tx
    ///     .index_range::<BySender>(6..=7)
    ///     .rev()
    ///     .map(|e| e.map(|(from, id, _)| (from, id)))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(hits, [(7, 3), (6, 4), (6, 2)]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Each item: [`Error::IndexOutOfStep`], [`Error::Decode`], [`Error::Mdbx`].
    pub fn index_range<I: Index>(
        &self,
        range: impl KeyRange<I::Key>,
    ) -> impl DoubleEndedIterator<Item = Result<(I::Key, Pk<I>, Row<I>)>> + '_
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        self.range::<I>(range)
            .map(move |entry| self.entry_row::<I>(entry?))
    }

    /// The rows whose index keys start with `prefix` (a leading part of a composite index
    /// key), as `(index key, primary key, row)` in index-key order; `.rev()` for the other
    /// direction.
    ///
    /// ```
    /// # use tabula::{Index, Key, Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, value = (u32, u32), indexed)]
    /// struct Moves;
    /// #[derive(Key, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
    /// struct FromTo { from: u32, to: u32 }
    /// #[derive(Index)]
    /// #[index(on = Moves, key = FromTo, by = from_to)]
    /// struct ByRoute;
    /// fn from_to(_id: &u64, (from, to): &(u32, u32)) -> FromTo {
    ///     FromTo { from: *from, to: *to }
    /// }
    /// #[derive(Schema)]
    /// struct App(Moves, ByRoute);
    /// # let dir = tabula::__doc::temp_dir();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// tx.put::<Moves>(&1, &(1, 2))?;
    /// tx.put::<Moves>(&2, &(1, 3))?;
    /// tx.put::<Moves>(&3, &(2, 1))?;
    /// let from_1: Vec<u64> = tx
    ///     .index_prefix::<ByRoute>(&1)
    ///     .map(|e| e.map(|(_, id, _)| id))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(from_1, [1, 2]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Each item: [`Error::IndexOutOfStep`], [`Error::Decode`], [`Error::Mdbx`].
    pub fn index_prefix<I: Index>(
        &self,
        prefix: &(impl AsPrefix<I::Key> + ?Sized),
    ) -> impl DoubleEndedIterator<Item = Result<(I::Key, Pk<I>, Row<I>)>> + '_
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        self.prefix::<I>(prefix)
            .map(move |entry| self.entry_row::<I>(entry?))
    }

    /// How many rows have the index key `key` (0 or 1 for a unique index).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_indexer()?;
    /// let mut tx = db.write()?;
    /// tx.put::<Transfers>(&1, &transfer(7, 8, None))?;
    /// tx.put::<Transfers>(&2, &transfer(7, 9, None))?;
    /// assert_eq!(tx.index_count::<BySender>(&7)?, 2);
    /// assert_eq!(tx.index_count::<BySender>(&8)?, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn index_count<I: Index>(&self, key: &(impl AsKey<I::Key> + ?Sized)) -> Result<u64>
    where
        H::Schema: Contains<I>,
    {
        let dbi = dbi_of::<H::Schema, I>(self.h.db());
        with_key::<I, _, _>(key, |k| {
            self.h.with_txn(|raw| {
                raw.count_values(dbi, k).map(|n| n as u64).map_err(|code| {
                    self.h
                        .db()
                        .shared
                        .fail(code, At::of::<I>("index_count").key(k))
                })
            })
        })
    }

    /// The row an index entry `(index key, stored primary key)` names.
    fn entry_row<I: Index>(
        &self,
        (key, primary): (I::Key, I::Value),
    ) -> Result<(I::Key, Pk<I>, Row<I>)>
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        let primary = I::primary(primary);
        let row = self.row_of::<I>(key.encode().as_ref(), &primary)?;
        Ok((key, primary, row))
    }

    /// The row under `primary`, which the entry under the encoded index key `key` names.
    fn row_of<I: Index>(&self, key: &[u8], primary: &Pk<I>) -> Result<Row<I>>
    where
        H::Schema: Contains<I> + Contains<I::Source>,
    {
        self.get::<I::Source>(primary)?
            .ok_or_else(|| out_of_step::<I>(key, primary))
    }
}

/// The entry under the encoded index key `key` of index `I` names `primary`, which its table
/// does not have.
fn out_of_step<I: Index>(key: &[u8], primary: &Pk<I>) -> Error {
    Error::IndexOutOfStep {
        table: <I::Source as Table>::NAME,
        index: I::NAME,
        key: KeyHex::of::<I>(key),
        row: KeyHex::of::<I::Source>(primary.encode().as_ref()),
    }
}
