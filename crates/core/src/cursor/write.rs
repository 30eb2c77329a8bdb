//! The writes of a [`WriteCursor`] (a [`Cursor`] of the write transaction), and the sets of
//! write cursors [`Tx::cursors_mut`](crate::Tx::cursors_mut) opens together.
//!
//! Every read returns owned, decoded entries (never bytes borrowed from the transaction), so a
//! write through one cursor can never invalidate what another cursor, or this one, returned.
//! That is what lets several write cursors of one transaction work in turn, and entries be
//! deleted while walking.

use std::ops::Bound;

use super::{Cursor, Position, WriteCursor};
use crate::codec::{AsKey, KeyBuf, KeyRange};
use crate::engine::{Code, CursorNav, LentTxn, del, op, put};
use crate::error::{At, Result};
use crate::history;
use crate::mode::Rw;
use crate::pipeline::{self, Landing};
use crate::state::Db;
use crate::stored::{
    cmp_keys, cursor_error, dbi_of, encode_subkey_value, encode_value, has_subkey, with_key,
    with_subkey,
};
use crate::table::{Contains, DupSort, HasSubKey, Schema, Table, ValueOf, Writable};

/// The writes: at a key (the cursor lands on what it wrote) or at the entry under the cursor.
impl<'t, T: Table> Cursor<'t, T, Rw> {
    /// Writes with `flags` and maps the refusals: an existing key for `insert`, an
    /// out-of-order key or value for the appends.
    fn write(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
        flags: u32,
        name: &'static str,
    ) -> Result<()> {
        let Cursor {
            raw,
            scratch,
            shared,
            at,
            ..
        } = self;
        with_key::<T, _, _>(key, |k| {
            let v = encode_value::<T, _>(k, value, scratch)?;
            let indexed = pipeline::indexed::<T>(shared);
            let mut landing = Landing::Unmoved;
            let row = value.as_item();
            let written =
                pipeline::put::<T>(raw, shared, indexed, (k, v), row, flags, name, &mut landing);
            land(at, landing);
            written
        })
    }

    /// Stores `value` under `key`, replacing what was there (in a `dupsort` table, adding it
    /// to the key's values), and leaves the cursor on it.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// let mut cursor = tx.cursor_mut::<Names>()?;
    /// cursor.upsert(&1, &"one".to_string())?;
    /// cursor.upsert(&1, &"uno".to_string())?;
    /// assert_eq!(cursor.current()?, Some((1, "uno".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`](crate::Error::TooLarge), [`Error::MapFull`](crate::Error::MapFull), [`Error::DiskFull`](crate::Error::DiskFull), [`Error::Encode`](crate::Error::Encode),
    /// [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn upsert(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<()> {
        self.write(key, value, put::UPSERT, "upsert")
    }

    /// Stores `value` under `key` only if the key is absent.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// let mut cursor = tx.cursor_mut::<Names>()?;
    /// cursor.insert(&1, &"one".to_string())?;
    /// let again = cursor.insert(&1, &"uno".to_string());
    /// assert!(matches!(again, Err(tabula::Error::KeyExists { .. })));
    /// assert_eq!(cursor.seek_exact(&1)?, Some((1, "one".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::KeyExists`](crate::Error::KeyExists) when it is present; otherwise as [`upsert`](Cursor::upsert).
    pub fn insert(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<()> {
        self.write(key, value, put::NOOVERWRITE, "insert")
    }

    /// Adds an entry whose key is greater than every key in the table, without descending the
    /// tree.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// let mut cursor = tx.cursor_mut::<Names>()?;
    /// cursor.append(&1, &"one".to_string())?;
    /// cursor.append(&2, &"two".to_string())?;
    /// let late = cursor.append(&2, &"again".to_string());
    /// assert!(matches!(late, Err(tabula::Error::AppendOutOfOrder { .. })));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendOutOfOrder`](crate::Error::AppendOutOfOrder) naming the key and the table's last key when `key` does not
    /// sort after it; otherwise as [`upsert`](Cursor::upsert).
    pub fn append(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<()> {
        self.write(key, value, put::APPEND_STRICT, "append")
    }

    /// Deletes the entry under the cursor (in a `dupsort` table, that one value). The cursor
    /// stays between its neighbours: [`next`](Cursor::next) returns the entry that followed
    /// it, [`prev`](Cursor::prev) the one before it. A cursor on no entry (see the table on
    /// [`Cursor`]: after a move or search that found nothing, after a delete) deletes nothing
    /// and says why.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// # for (k, v) in [(1, "one"), (2, "two"), (3, "three")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// let mut cursor = tx.cursor_mut::<Names>()?;
    /// cursor.seek_exact(&2)?;
    /// cursor.delete_current()?;
    /// assert_eq!(cursor.next()?, Some((3, "three".to_string())));
    /// assert_eq!(cursor.seek_exact(&2)?, None); // a miss: on no entry
    /// assert!(matches!(cursor.delete_current(), Err(tabula::Error::NotOnEntry { .. })));
    /// drop(cursor);
    /// assert_eq!(tx.len::<Names>()?, 2);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::NotOnEntry`](crate::Error::NotOnEntry) when the cursor is on no entry; [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn delete_current(&mut self) -> Result<()> {
        self.delete(del::CURRENT, "delete_current")
    }

    fn delete(&mut self, flags: u32, name: &'static str) -> Result<()> {
        if self.at != Position::OnEntry {
            return Err(self.not_on_entry(name));
        }
        let indexed = pipeline::indexed::<T>(self.shared);
        let mut landing = Landing::Unmoved;
        let op = (name, None);
        let deleted = pipeline::delete_current::<T>(
            &mut self.raw,
            self.shared,
            indexed,
            flags,
            op,
            &mut landing,
        );
        land(&mut self.at, landing);
        deleted
    }

    /// Deletes every entry whose key is in `range`, walking from its start; returns how many
    /// (key, value) pairs were deleted. [`Tx::delete_range`](crate::Tx::delete_range).
    pub(crate) fn delete_range<R: KeyRange<T::Key>>(&mut self, range: R) -> Result<u64> {
        self.at = Position::Unpositioned;
        let stored = |key: &R::Form| {
            with_key::<T, _, _>(key, |k| {
                let mut buf = KeyBuf::new();
                buf.extend_from_slice(k);
                buf
            })
        };
        let upper = match range.end() {
            Bound::Included(k) => Bound::Included(stored(k)),
            Bound::Excluded(k) => Bound::Excluded(stored(k)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let seek = |c: &mut Self, op, k: Option<&[u8]>| -> Result<bool> {
            match c.raw.get_with(op, k, None, |_, _| ()) {
                Ok(found) => Ok(found.is_some()),
                Err(code) if code == Code::ENODATA => Ok(false),
                Err(code) => Err(cursor_error::<T>("delete_range", code)),
            }
        };
        // Onto the range's first entry; whether there is one.
        let start = |c: &mut Self| -> Result<bool> {
            match range.start() {
                Bound::Unbounded => seek(c, op::FIRST, None),
                Bound::Included(k) => seek(c, op::SET_RANGE, Some(stored(k).as_slice())),
                Bound::Excluded(k) => {
                    let from = stored(k);
                    let found = seek(c, op::SET_RANGE, Some(from.as_slice()))?;
                    match c.current_key()? {
                        Some(at)
                            if found && cmp_keys::<T>(at.as_slice(), from.as_slice()).is_eq() =>
                        {
                            seek(c, op::NEXT_NODUP, None)
                        }
                        _ => Ok(found),
                    }
                }
            }
        };
        // Whether the cursor is on an entry of the range.
        let inside = |c: &mut Self| -> Result<bool> {
            Ok(c.current_key()?.is_some_and(|at| match &upper {
                Bound::Unbounded => true,
                Bound::Included(u) => cmp_keys::<T>(at.as_slice(), u.as_slice()).is_le(),
                Bound::Excluded(u) => cmp_keys::<T>(at.as_slice(), u.as_slice()).is_lt(),
            }))
        };
        let indexed = pipeline::indexed::<T>(self.shared);
        if indexed {
            // Every row's index entries are computed (its key functions run, and may panic)
            // before the first row is deleted: a row that does not decode stops the delete
            // before it changed anything. (An indexed table is never `dupsort`.)
            let mut on_entry = start(self)?;
            while on_entry && inside(self)? {
                pipeline::plan_delete_current::<T>(
                    &mut self.raw,
                    self.shared,
                    true,
                    "delete_range",
                )?;
                on_entry = seek(self, op::NEXT, None)?;
            }
        }
        let mut on_entry = start(self)?;
        let mut deleted = 0u64;
        while on_entry && inside(self)? {
            if T::FLAGS.dupsort {
                let values = self
                    .raw
                    .count()
                    .map_err(|code| cursor_error::<T>("delete_range", code))?;
                self.delete_here(indexed, del::ALLDUPS)?;
                deleted += values as u64;
            } else {
                self.delete_here(indexed, del::CURRENT)?;
                deleted += 1;
            }
            // After a delete, `MDBX_NEXT` lands on the entry that followed.
            on_entry = seek(self, op::NEXT, None)?;
        }
        Ok(deleted)
    }

    /// The stored key under libmdbx's cursor, copied; `None` when it is on none.
    fn current_key(&mut self) -> Result<Option<KeyBuf>> {
        let copy = |k: &[u8], _: &[u8]| {
            let mut buf = KeyBuf::new();
            buf.extend_from_slice(k);
            buf
        };
        match self.raw.get_with(op::GET_CURRENT, None, None, copy) {
            Ok(found) => Ok(found),
            Err(code) if code == Code::ENODATA => Ok(None),
            Err(code) => Err(cursor_error::<T>("delete_range", code)),
        }
    }

    /// `delete_range`'s delete: the cursor was just placed on the entry by its own walk.
    /// Deletes the entry under the cursor, for [`delete_range`](Self::delete_range) (which
    /// leaves the cursor unpositioned).
    fn delete_here(&mut self, indexed: bool, flags: u32) -> Result<()> {
        let op = ("delete_range", None);
        let mut landing = Landing::Unmoved;
        pipeline::delete_current::<T>(&mut self.raw, self.shared, indexed, flags, op, &mut landing)
    }
}

/// The dup writes of a [`DupSort`] table.
impl<'t, T: Table> Cursor<'t, T, Rw> {
    /// Adds `value` as the new greatest value of `key`: it must sort after every value the key
    /// has (a key without values takes any). Leaves the cursor on it.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// let mut cursor = tx.cursor_mut::<Sets>()?;
    /// cursor.append_dup(&1, &255)?;
    /// cursor.append_dup(&1, &256)?; // values rise in their own order
    /// let late = cursor.append_dup(&1, &7);
    /// assert!(matches!(late, Err(tabula::Error::AppendDupOutOfOrder { .. })));
    /// cursor.seek_exact(&1)?; // a refused write leaves the cursor on no entry
    /// assert_eq!(cursor.dup_count()?, 2);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendDupOutOfOrder`](crate::Error::AppendDupOutOfOrder) naming the key, the value and the key's last value when
    /// the value does not sort after it (an equal value included); otherwise as
    /// [`upsert`](Cursor::upsert).
    pub fn append_dup(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
    ) -> Result<()>
    where
        T: DupSort,
    {
        self.write(key, value, put::APPENDDUP_STRICT, "append_dup")
    }

    /// Deletes every value of the key under the cursor; [`next`](Cursor::next) then
    /// returns the first value of the next key. A cursor on no entry deletes nothing and says
    /// why.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// # for (k, v) in [(1, 10), (1, 20), (2, 5)] {
    /// #     tx.put::<Sets>(&k, &v)?;
    /// # }
    /// let mut cursor = tx.cursor_mut::<Sets>()?;
    /// cursor.first()?;
    /// cursor.delete_current_dups()?;
    /// assert_eq!(cursor.next()?, Some((2, 5)));
    /// drop(cursor);
    /// assert_eq!(tx.len::<Sets>()?, 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::NotOnEntry`](crate::Error::NotOnEntry) when the cursor is on no entry; [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn delete_current_dups(&mut self) -> Result<()>
    where
        T: DupSort,
    {
        self.delete(del::ALLDUPS, "delete_current_dups")
    }
}

/// The subkey writes of a table declared with `subkey = ..`.
impl<'t, T: Table> Cursor<'t, T, Rw> {
    /// Sets the value of `subkey` under `key`: the values of `key` with this subkey are
    /// replaced by `(subkey, value)` (added when there is none). Leaves the cursor on it.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// let mut cursor = tx.cursor_mut::<Storage>()?;
    /// cursor.upsert_dup(&1, &10, &"a".to_string())?;
    /// cursor.upsert_dup(&1, &20, &"b".to_string())?;
    /// cursor.upsert_dup(&1, &10, &"z".to_string())?; // replaces slot 10's value
    /// assert_eq!(cursor.dup_count()?, 2);
    /// assert_eq!(cursor.get_dup(&1, &10)?, Some((1, (10, "z".to_string()))));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`upsert`](Cursor::upsert).
    pub fn upsert_dup(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
        value: &T::SubValue,
    ) -> Result<()>
    where
        T: HasSubKey,
    {
        let Cursor {
            raw,
            scratch,
            shared,
            at,
            ..
        } = self;
        // Whatever happens below moves the cursor; it lands on the value only if all succeeds.
        *at = Position::Unpositioned;
        with_key::<T, _, _>(key, |k| {
            with_subkey::<T, _, _>(subkey, |front| {
                // A table declared `history` records one change of the unit for the deletes
                // and the put, its values before read by the deletes' lookups (the version
                // checked first, before anything is written).
                let planned = match T::HISTORY {
                    true => history::plan_unit::<T>(raw, shared, (k, front), "upsert_dup")?,
                    false => None,
                };
                let mut befores: Vec<Vec<u8>> = Vec::new();
                // Every stored value of this subkey starts with `front` (self-delimiting) and
                // sorts at or after it: delete them one `MDBX_GET_BOTH_RANGE` at a time.
                loop {
                    let keep = planned.is_some();
                    let same = |_: &[u8], old: &[u8]| {
                        let same = has_subkey::<T>(old, front);
                        (same, (same && keep).then(|| old.to_vec()))
                    };
                    match raw.get_with(op::GET_BOTH_RANGE, Some(k), Some(front), same) {
                        Ok(Some((true, old))) => {
                            befores.extend(old);
                            let op = ("upsert_dup", Some(k));
                            let mut landing = Landing::Unmoved;
                            pipeline::delete_current_in_unit::<T>(raw, shared, op, &mut landing)?;
                        }
                        Ok(_) => break,
                        Err(code) if code == Code::ENODATA => break,
                        Err(code) => return Err(cursor_error::<T>("upsert_dup", code)),
                    }
                }
                let planned = planned.map(|p| p.with_befores(&befores));
                let v = encode_subkey_value::<T>(k, subkey, value, scratch)?;
                let mut landing = Landing::Unmoved;
                let op = "upsert_dup";
                pipeline::put_unit::<T>(raw, shared, (k, v), planned.as_ref(), op, &mut landing)?;
                *at = Position::OnEntry;
                Ok(())
            })
        })
    }
}

/// Where a write through the pipeline left the cursor.
#[inline(always)]
fn land(at: &mut Position, landing: Landing) {
    match landing {
        Landing::Unmoved => {}
        Landing::Written => *at = Position::OnEntry,
        Landing::Deleted => *at = Position::Deleted,
        // What the refusal's diagnosis read moved the cursor: it is on no entry.
        Landing::Refused => *at = Position::Unpositioned,
    }
}

/// Opens the write cursors of one [`Tx::cursors_mut`](crate::Tx::cursors_mut) call: the write
/// transaction lent to them, and the database whose handles they use. Not constructible outside
/// Tabula.
#[doc(hidden)]
pub struct Opener<'t, S: Schema> {
    txn: LentTxn<'t>,
    db: &'t Db<S>,
}

impl<'t, S: Schema> Opener<'t, S> {
    pub(crate) fn new(txn: LentTxn<'t>, db: &'t Db<S>) -> Self {
        Opener { txn, db }
    }

    /// A write cursor over `T`.
    pub(crate) fn cursor<T: Table>(&self) -> Result<WriteCursor<'t, T>>
    where
        S: Contains<T>,
    {
        let shared = &self.db.shared;
        let raw = self
            .txn
            .cursor(dbi_of::<S, T>(self.db), shared.cursors())
            .map_err(|code| shared.fail(code, At::of::<T>("open write cursor")))?;
        Ok(Cursor::new(raw, shared))
    }
}

/// Tables whose write cursors [`Tx::cursors_mut`](crate::Tx::cursors_mut) opens together: a
/// tuple of two to four tables of schema `S`, giving a tuple of [`WriteCursor`]s that read and
/// write in turn in the one write transaction (say, walking a changeset table while restoring
/// the state table it describes).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tuple of tables of schema `{S}`",
    label = "expected a tuple of 2 to 4 tables",
    note = "write `tx.cursors_mut::<(TableA, TableB)>()`, each table listed in the schema"
)]
pub trait WriteCursors<S: Schema> {
    /// The cursors, in the tuple's order.
    type Cursors<'t>;

    /// Opens one cursor per table.
    #[doc(hidden)]
    fn open<'t>(opener: &Opener<'t, S>) -> Result<Self::Cursors<'t>>;
}

macro_rules! write_cursors {
    ($(($($T:ident),+))+) => {$(
        impl<S: Schema $(+ Contains<$T>)+, $($T: Writable),+> WriteCursors<S> for ($($T,)+) {
            type Cursors<'t> = ($(WriteCursor<'t, $T>,)+);

            fn open<'t>(opener: &Opener<'t, S>) -> Result<Self::Cursors<'t>> {
                Ok(($(opener.cursor::<$T>()?,)+))
            }
        }
    )+};
}

write_cursors! {
    (A, B)
    (A, B, C)
    (A, B, C, D)
}
