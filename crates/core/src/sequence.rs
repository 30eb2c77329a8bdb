//! Per-table sequences (`mdbx_dbi_sequence`): a monotonic counter each table keeps in the
//! file, advanced by a write transaction and rolled back with it, for generated keys. libmdbx
//! zeroes it when it empties a non-empty table; `RawTxn::drop_table` puts it back, so no write
//! lowers it.

use crate::error::{At, Error, Result};
use crate::mode::Rw;
use crate::read::{Handle, Reads};
use crate::stored::dbi_of;
use crate::table::{Contains, Schema, Table, ValueOf, Writable};
use crate::txn::Tx;

impl<H: Handle> Reads<H> {
    /// Table `T`'s sequence: the next value [`next_sequence`](Tx::next_sequence) returns (0
    /// for a table whose sequence never moved).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// assert_eq!(db.read()?.sequence::<Names>()?, 0);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] on libmdbx failure.
    pub fn sequence<T: Table>(&self) -> Result<u64>
    where
        H::Schema: Contains<T>,
    {
        let dbi = dbi_of::<H::Schema, T>(self.h.db());
        self.h.with_txn(|raw| {
            raw.sequence(dbi)
                .map_err(|code| self.h.db().shared.fail(code, At::of::<T>("sequence")))
        })
    }
}

impl<S: Schema> Tx<'_, S, Rw> {
    /// Takes the next value of table `T`'s sequence: 0, 1, 2, ... across transactions, each
    /// value once. An aborted transaction gives its values back. No write lowers it: emptying
    /// the table ([`clear`](Tx::clear), [`delete_range`](Tx::delete_range), ...) and a
    /// migration step that rewrites it keep it; it goes only with the table, when a migration
    /// step drops the table.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// assert_eq!(tx.next_sequence::<Names>()?, 0);
    /// assert_eq!(tx.next_sequence::<Names>()?, 1);
    /// tx.commit()?;
    /// let mut tx = db.write()?;
    /// assert_eq!(tx.next_sequence::<Names>()?, 2);
    /// drop(tx); // aborted: 2 is taken again
    /// let mut tx = db.write()?;
    /// assert_eq!(tx.next_sequence::<Names>()?, 2);
    /// tx.put::<Names>(&2, &"two".to_string())?;
    /// tx.clear::<Names>()?; // the table is empty; its sequence goes on
    /// assert_eq!(tx.next_sequence::<Names>()?, 3);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTable`] when the sequence is at `u64::MAX`; [`Error::Mdbx`].
    pub fn next_sequence<T: Writable>(&mut self) -> Result<u64>
    where
        S: Contains<T>,
    {
        let dbi = dbi_of::<S, T>(self.db());
        let db = self.db();
        match self.raw_mut().sequence_add(dbi, 1) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(Error::InvalidTable {
                table: T::NAME.to_string(),
                rust_name: T::RUST_NAME,
                problem: "its sequence is at u64::MAX and cannot advance".to_string(),
            }),
            Err(code) => Err(db.shared.fail(code, At::of::<T>("next_sequence"))),
        }
    }

    /// Inserts `value` under the next value of table `T`'s sequence, and returns that key: an
    /// auto-increment insert. Indexes of `T` are kept exact, as by [`insert`](Tx::insert).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// let first = tx.insert_next::<Names>(&"one".to_string())?;
    /// let second = tx.insert_next::<Names>(&"two".to_string())?;
    /// assert_eq!((first, second), (0, 1));
    /// assert_eq!(tx.get::<Names>(&1)?.as_deref(), Some("two"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::KeyExists`] when the key was written otherwise (nothing is written, and the
    /// sequence value is used up); as [`insert`](Tx::insert) and
    /// [`next_sequence`](Tx::next_sequence).
    pub fn insert_next<T: Writable<Key = u64>>(
        &mut self,
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<u64>
    where
        S: Contains<T>,
    {
        let key = self.next_sequence::<T>()?;
        self.insert::<T>(&key, value)?;
        Ok(key)
    }
}
