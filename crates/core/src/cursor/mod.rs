//! The typed cursor, written once for reading and writing: [`Cursor`] moves (this file), and
//! [`WriteCursor`], the same cursor in the write transaction, also writes at its position
//! (`write.rs`). The bulk [`Appender`] is the write side's other cursor (`append.rs`).
//!
//! A cursor knows where it stands ([`Position`]), and every call that acts on "the entry under
//! the cursor" checks that first: libmdbx leaves its C cursor wherever its last search ended
//! (on a neighbour after a search that found nothing, on the last entry after `MDBX_NEXT` ran
//! off the end), so asking libmdbx alone would delete or count the wrong entry.

use std::marker::PhantomData;

use crate::codec::AsKey;
use crate::engine::{Code, CursorNav, Visit, op};
use crate::error::{Error, Result};
use crate::mode::{Mode, Ro, Rw};
use crate::state::Shared;
use crate::stored::{cmp_keys, cursor_error, decode_entry, has_subkey, with_key, with_subkey};
use crate::table::{DupSort, Table};

mod append;
mod write;

pub use append::Appender;
pub(crate) use write::Opener;
pub use write::WriteCursors;

/// The decode of the entry a move lands on, forced inline into the move (see [`Visit`]).
struct Decode<T>(PhantomData<fn() -> T>);

impl<T: Table> Visit for Decode<T> {
    type Out = Result<(T::Key, T::Value)>;
    #[inline(always)]
    fn visit(self, key: &[u8], value: &[u8]) -> Self::Out {
        decode_entry::<T>(key, value)
    }
}

/// What a move found, decoded: the entry the cursor landed on, or `None`.
type Found<T> = Option<(<T as Table>::Key, <T as Table>::Value)>;

/// Where a cursor stands. Only [`OnEntry`](Position::OnEntry) lets a call act on "the current
/// entry"; every other state says how the cursor got off the entries, which decides where
/// `next` and `prev` go from there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    /// Not placed yet, or the last write through the cursor failed, or a `first`/`last` found
    /// the table empty: `next` starts at the first entry, `prev` at the last.
    Unpositioned,
    /// On an entry.
    OnEntry,
    /// A move forward found nothing: `next` finds nothing again, `prev` the last entry.
    AfterLast,
    /// A move backward found nothing: `prev` finds nothing again, `next` the first entry.
    BeforeFirst,
    /// A search found nothing: the cursor stands in the gap where what it looked for would be
    /// (`gap`): `next` finds the first entry after it, `prev` the last entry before it.
    Missed,
    /// The entry under the cursor was deleted: `next` (and `current`) find the entry that
    /// followed it, `prev` the one before it.
    Deleted,
}

impl Position {
    /// Says, for an error message, why the cursor is on no entry.
    fn off_entry(self) -> &'static str {
        match self {
            Position::Unpositioned => {
                "it is on no entry (not placed yet, or the last write through it failed)"
            }
            Position::OnEntry => "it is on an entry",
            Position::AfterLast => "it ran past the last entry",
            Position::BeforeFirst => "it ran before the first entry",
            Position::Missed => "the last search found nothing",
            Position::Deleted => "its entry was deleted",
        }
    }
}

/// A cursor over one table, positioned explicitly. Every move returns the entry it lands on,
/// decoded and owned, or `None` when there is none.
///
/// A cursor is always in one of these states, and the calls that act on "the entry under the
/// cursor" ([`current`](Cursor::current), [`dup_count`](Cursor::dup_count), the moves among a
/// key's values, and a write cursor's [`delete_current`](Cursor::delete_current)) act only when
/// it is **on an entry**:
///
/// | state | how it gets there | `next` | `prev` | `current` | acting on the entry |
/// |---|---|---|---|---|---|
/// | unpositioned | new; a failed write | the first entry | the last entry | `None` | error |
/// | on an entry | a move or search that found one; a write | the next entry | the previous one | the entry | acts |
/// | past the last | `next`/`seek` found nothing | `None` | the last entry | `None` | error |
/// | before the first | `prev` found nothing | the first entry | `None` | `None` | error |
/// | after a miss | `seek_exact`/`seek_dup`/`get_dup` found nothing | the first entry after what was sought | the last entry before it | `None` | error |
/// | after a delete | `delete_current`, `delete_current_dups` | the entry that followed | the entry before | the entry that followed (the cursor moves there) | error |
///
/// Off an entry, the moves among a key's values (`first_dup`, `next_dup`, ...) find `None`,
/// `next_no_dup` and `prev_no_dup` move like `next` and `prev`, and
/// [`dup_count`](Cursor::dup_count) is an error. The error ([`Error::NotOnEntry`]) names the
/// table, the call and why the cursor is on no entry; nothing is deleted or counted.
///
/// In a [`DupSort`] table the cursor also moves among the values of a key (`first_dup`,
/// `next_dup`, `next_no_dup`, ...) and seeks by key and subkey ([`seek_dup`](Cursor::seek_dup)).
/// In the write transaction the same cursor writes: [`WriteCursor`].
///
/// ```
/// # use tabula::__doc::*;
/// # let (dir, db) = open()?;
/// # let mut tx = db.write()?;
/// # for (k, v) in [(1, "one"), (3, "three")] {
/// #     tx.put::<Names>(&k, &v.to_string())?;
/// # }
/// # tx.commit()?;
/// let tx = db.read()?;
/// let mut cursor = tx.cursor::<Names>()?;
/// assert_eq!(cursor.seek_exact(&2)?, None); // a miss: the cursor is between 1 and 3
/// assert_eq!(cursor.current()?, None);
/// assert_eq!(cursor.next()?, Some((3, "three".to_string())));
/// assert_eq!(cursor.next()?, None); // past the last entry
/// assert_eq!(cursor.prev()?, Some((3, "three".to_string())));
/// # Ok::<(), tabula::Error>(())
/// ```
pub struct Cursor<'t, T: Table, M: Mode = Ro> {
    raw: M::RawCursor<'t>,
    at: Position,
    /// After a miss: the stored key that was sought, then the subkey (from `gap_sub`) when the
    /// search took one. Kept allocated for the next miss.
    gap: Vec<u8>,
    gap_sub: Option<usize>,
    scratch: M::Scratch,
    shared: &'t Shared,
    _table: PhantomData<fn() -> T>,
}

/// A cursor of the write transaction over table `T`: a [`Cursor`] that also writes at its
/// position. Created by [`Tx::cursor_mut`](crate::Tx::cursor_mut), or several at once by
/// [`Tx::cursors_mut`](crate::Tx::cursors_mut).
///
/// It moves exactly as a read cursor does (the moves are [`Cursor`]'s), and every move returns
/// the entry it lands on, decoded and owned, so a write through one cursor never invalidates
/// what another returned. Deleting while walking neither skips nor repeats an entry: after
/// [`delete_current`](Cursor::delete_current), [`next`](Cursor::next) returns the entry that
/// followed the deleted one and [`prev`](Cursor::prev) the one before it.
///
/// ```
/// # use tabula::__doc::*;
/// # let (dir, db) = open()?;
/// let mut tx = db.write()?;
/// for n in 1..=10u64 {
///     tx.put::<Numbers>(&n, &(n * n))?;
/// }
/// let mut cursor = tx.cursor_mut::<Numbers>()?;
/// let mut entry = cursor.first()?;
/// while let Some((n, _)) = entry {
///     if n % 3 == 0 {
///         cursor.delete_current()?;
///     }
///     entry = cursor.next()?;
/// }
/// // Past the last entry, the cursor is on none: nothing more is deleted.
/// assert!(matches!(cursor.delete_current(), Err(tabula::Error::NotOnEntry { .. })));
/// drop(cursor);
/// let left: Vec<u64> = tx.iter::<Numbers>().keys().collect::<Result<_, _>>()?;
/// assert_eq!(left, [1, 2, 4, 5, 7, 8, 10]);
/// # Ok::<(), tabula::Error>(())
/// ```
pub type WriteCursor<'t, T> = Cursor<'t, T, Rw>;

impl<'t, T: Table, M: Mode> Cursor<'t, T, M> {
    pub(crate) fn new(raw: M::RawCursor<'t>, shared: &'t Shared) -> Self {
        Cursor {
            raw,
            at: Position::Unpositioned,
            gap: Vec::new(),
            gap_sub: None,
            scratch: M::Scratch::default(),
            shared,
            _table: PhantomData,
        }
    }

    /// One libmdbx move: the entry it lands on, decoded, and the cursor on it; `None`, and the
    /// cursor in state `miss`, when there is none. A decode error leaves the cursor on the
    /// entry (so that a damaged entry can be deleted).
    #[inline(always)]
    fn land(
        &mut self,
        op: op::Op,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        miss: Position,
        name: &'static str,
    ) -> Result<Found<T>> {
        match self.raw.visit(op, key, value, Decode::<T>(PhantomData)) {
            Ok(Some(entry)) => {
                self.at = Position::OnEntry;
                entry.map(Some)
            }
            Ok(None) => {
                self.at = miss;
                Ok(None)
            }
            // "No data" for a move that needs a position: libmdbx's cursor was on none.
            Err(code) if code == Code::ENODATA => {
                self.at = miss;
                Ok(None)
            }
            Err(code) => {
                self.at = Position::Unpositioned;
                Err(cursor_error::<T>(name, code))
            }
        }
    }

    /// A search that found nothing: the cursor stands where `key` (and `subkey`) would be.
    fn missed(&mut self, key: &[u8], subkey: Option<&[u8]>) {
        self.at = Position::Missed;
        self.gap.clear();
        self.gap.extend_from_slice(key);
        self.gap_sub = subkey.map(|s| {
            let at = self.gap.len();
            self.gap.extend_from_slice(s);
            at
        });
    }

    /// After a miss: places libmdbx's cursor on the first entry after the gap; `false` when
    /// there is none.
    fn place_after_gap(&mut self, name: &'static str) -> Result<bool> {
        let (key, subkey) = match self.gap_sub {
            Some(at) => (&self.gap[..at], Some(&self.gap[at..])),
            None => (&self.gap[..], None),
        };
        let raw = &mut self.raw;
        let fail = |code| cursor_error::<T>(name, code);
        let Some(subkey) = subkey else {
            // The key sought is absent: the first key `>=` it comes after it.
            return raw
                .get_with(op::SET_RANGE, Some(key), None, |_, _| ())
                .map(|f| f.is_some())
                .map_err(fail);
        };
        // The key's values after the subkey sought (none equal it), else the next key's first.
        if raw
            .get_with(op::GET_BOTH_RANGE, Some(key), Some(subkey), |_, _| ())
            .map_err(fail)?
            .is_some()
        {
            return Ok(true);
        }
        let same_key = |k: &[u8], _: &[u8]| cmp_keys::<T>(k, key).is_eq();
        match raw
            .get_with(op::SET_RANGE, Some(key), None, same_key)
            .map_err(fail)?
        {
            Some(true) => raw
                .get_with(op::NEXT_NODUP, None, None, |_, _| ())
                .map(|f| f.is_some())
                .map_err(fail),
            Some(false) => Ok(true),
            None => Ok(false),
        }
    }

    /// A move forward with `op` from an entry; from no entry, where the next entry is depends
    /// on how the cursor got off the entries.
    #[inline(always)]
    fn forward(&mut self, op: op::Op, name: &'static str) -> Result<Found<T>> {
        // The walk's steady state, kept apart from the rest so that it inlines small.
        if self.at == Position::OnEntry {
            return self.land(op, None, None, Position::AfterLast, name);
        }
        self.forward_off_entry(op, name)
    }

    #[inline(never)]
    fn forward_off_entry(&mut self, op: op::Op, name: &'static str) -> Result<Found<T>> {
        match self.at {
            Position::OnEntry | Position::Deleted => {
                self.land(op, None, None, Position::AfterLast, name)
            }
            Position::Unpositioned | Position::BeforeFirst => {
                self.land(op::FIRST, None, None, Position::AfterLast, name)
            }
            Position::AfterLast => Ok(None),
            Position::Missed => {
                if self.place_after_gap(name)? {
                    self.land(op::GET_CURRENT, None, None, Position::AfterLast, name)
                } else {
                    self.at = Position::AfterLast;
                    Ok(None)
                }
            }
        }
    }

    /// A move backward with `op` from an entry, as [`forward`](Self::forward).
    #[inline(always)]
    fn backward(&mut self, op: op::Op, name: &'static str) -> Result<Found<T>> {
        if self.at == Position::OnEntry {
            return self.land(op, None, None, Position::BeforeFirst, name);
        }
        self.backward_off_entry(op, name)
    }

    #[inline(never)]
    fn backward_off_entry(&mut self, op: op::Op, name: &'static str) -> Result<Found<T>> {
        match self.at {
            Position::OnEntry | Position::Deleted => {
                self.land(op, None, None, Position::BeforeFirst, name)
            }
            Position::Unpositioned | Position::AfterLast => {
                self.land(op::LAST, None, None, Position::BeforeFirst, name)
            }
            Position::BeforeFirst => Ok(None),
            Position::Missed => {
                let op = if self.place_after_gap(name)? {
                    op::PREV
                } else {
                    op::LAST
                };
                self.land(op, None, None, Position::BeforeFirst, name)
            }
        }
    }

    /// The error for `call`, which acts on the entry under the cursor, when it is on none.
    #[cold]
    fn not_on_entry(&self, call: &'static str) -> Error {
        Error::NotOnEntry {
            table: T::NAME,
            call,
            position: self.at.off_entry(),
        }
    }

    /// Moves to the first entry.
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
    /// assert_eq!(cursor.first()?, Some((1, "one".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn first(&mut self) -> Result<Found<T>> {
        self.land(
            op::FIRST,
            None,
            None,
            Position::Unpositioned,
            "cursor first",
        )
    }

    /// Moves to the last entry.
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
    /// assert_eq!(cursor.last()?, Some((3, "three".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn last(&mut self) -> Result<Found<T>> {
        self.land(op::LAST, None, None, Position::Unpositioned, "cursor last")
    }

    /// Moves to the next entry (the next value of the same key first, in a `dupsort` table).
    /// From a cursor on no entry, see the table on [`Cursor`]: an unpositioned cursor starts at
    /// the first entry, one past the last finds `None`.
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
    /// // An unpositioned cursor moves to the first entry.
    /// assert_eq!(cursor.next()?, Some((1, "one".to_string())));
    /// assert_eq!(cursor.next()?, Some((2, "two".to_string())));
    /// assert_eq!(cursor.next()?, Some((3, "three".to_string())));
    /// assert_eq!(cursor.next()?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next(&mut self) -> Result<Found<T>> {
        self.forward(op::NEXT, "cursor next")
    }

    /// Moves to the previous entry. From a cursor on no entry, see the table on [`Cursor`]: an
    /// unpositioned cursor starts at the last entry, one before the first finds `None`.
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
    /// cursor.last()?;
    /// assert_eq!(cursor.prev()?, Some((2, "two".to_string())));
    /// assert_eq!(cursor.prev()?, Some((1, "one".to_string())));
    /// assert_eq!(cursor.prev()?, None);
    /// assert_eq!(cursor.next()?, Some((1, "one".to_string()))); // from before the first
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn prev(&mut self) -> Result<Found<T>> {
        self.backward(op::PREV, "cursor prev")
    }

    /// The entry under the cursor; `None` when it is on no entry. Right after a delete it is
    /// the entry that followed the deleted one, and the cursor moves onto it.
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
    /// assert_eq!(cursor.current()?, None); // not placed yet
    /// cursor.seek_exact(&2)?;
    /// assert_eq!(cursor.current()?, Some((2, "two".to_string()))); // does not move
    /// assert_eq!(cursor.current()?, Some((2, "two".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn current(&mut self) -> Result<Found<T>> {
        match self.at {
            Position::OnEntry => self.land(
                op::GET_CURRENT,
                None,
                None,
                Position::Unpositioned,
                "cursor current",
            ),
            // After a delete libmdbx's `MDBX_GET_CURRENT` may look only among the deleted
            // value's key (0.14.4 returns the value before it when the key keeps others);
            // `MDBX_NEXT` lands on the entry that followed in every case.
            Position::Deleted => {
                self.land(op::NEXT, None, None, Position::AfterLast, "cursor current")
            }
            _ => Ok(None),
        }
    }

    /// Moves to the first entry whose key is `>= key` (libmdbx's `MDBX_SET_RANGE`); `None`,
    /// and the cursor past the last entry, when every key is smaller.
    /// [`seek_exact`](Cursor::seek_exact) finds only `key` itself.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(10, "ten"), (20, "twenty")] {
    /// #     tx.put::<Names>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Names>()?;
    /// assert_eq!(cursor.seek(&10)?, Some((10, "ten".to_string())));
    /// assert_eq!(cursor.seek(&11)?, Some((20, "twenty".to_string())));
    /// assert_eq!(cursor.seek(&21)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn seek(&mut self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<Found<T>> {
        with_key::<T, _, _>(key, |k| {
            self.land(
                op::SET_RANGE,
                Some(k),
                None,
                Position::AfterLast,
                "cursor seek",
            )
        })
    }

    /// Moves to `key` exactly (its first value, in a `dupsort` table); `None` when it is
    /// absent, and the cursor then stands where it would be: `next` finds the first key after
    /// it, `prev` the last key before it. [`seek`](Cursor::seek) finds the first key `>=` the
    /// one given.
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
    /// assert_eq!(cursor.seek_exact(&2)?, Some((2, "two".to_string())));
    /// assert_eq!(cursor.seek_exact(&9)?, None);
    /// assert_eq!(cursor.prev()?, Some((3, "three".to_string()))); // the last key before 9
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn seek_exact(&mut self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<Found<T>> {
        with_key::<T, _, _>(key, |k| {
            let found = self.land(
                op::SET_KEY,
                Some(k),
                None,
                Position::Missed,
                "cursor seek_exact",
            )?;
            if found.is_none() {
                self.missed(k, None);
            }
            Ok(found)
        })
    }
}

/// The moves among the values of a key, and the seeks by subkey, of a [`DupSort`] table.
impl<'t, T: Table, M: Mode> Cursor<'t, T, M> {
    /// A move among the values of the key under the cursor: `None` when the cursor is on no
    /// entry, and when there is no such value (the cursor then stays where it is).
    fn among_values(&mut self, op: op::Op, name: &'static str) -> Result<Found<T>> {
        if self.at != Position::OnEntry {
            return Ok(None);
        }
        self.land(op, None, None, Position::OnEntry, name)
    }

    /// Moves to the first value of the current key; `None` when the cursor is on no entry.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "a"), (1, "b"), (1, "c"), (2, "d")] {
    /// #     tx.put::<Topics>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Topics>()?;
    /// assert_eq!(cursor.first_dup()?, None); // on no key yet
    /// cursor.seek_dup(&1, "b")?;
    /// assert_eq!(cursor.first_dup()?, Some((1, "a".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn first_dup(&mut self) -> Result<Found<T>>
    where
        T: DupSort,
    {
        self.among_values(op::FIRST_DUP, "cursor first_dup")
    }

    /// Moves to the last value of the current key; `None` when the cursor is on no entry.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "a"), (1, "b"), (1, "c"), (2, "d")] {
    /// #     tx.put::<Topics>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Topics>()?;
    /// cursor.first()?;
    /// assert_eq!(cursor.last_dup()?, Some((1, "c".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn last_dup(&mut self) -> Result<Found<T>>
    where
        T: DupSort,
    {
        self.among_values(op::LAST_DUP, "cursor last_dup")
    }

    /// Moves to the next value of the current key; `None` after its last value (the cursor
    /// stays there) and when the cursor is on no entry.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "a"), (1, "b"), (2, "c"), (3, "d"), (3, "e")] {
    /// #     tx.put::<Topics>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Topics>()?;
    /// assert_eq!(cursor.first()?, Some((1, "a".to_string())));
    /// assert_eq!(cursor.next_dup()?, Some((1, "b".to_string())));
    /// assert_eq!(cursor.next_dup()?, None); // key 1 has no more values
    /// assert_eq!(cursor.current()?, Some((1, "b".to_string())));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn next_dup(&mut self) -> Result<Found<T>>
    where
        T: DupSort,
    {
        self.among_values(op::NEXT_DUP, "cursor next_dup")
    }

    /// Moves to the previous value of the current key; `None` before its first value (the
    /// cursor stays there) and when the cursor is on no entry.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "a"), (1, "b"), (2, "c")] {
    /// #     tx.put::<Topics>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Topics>()?;
    /// cursor.seek_dup(&1, "b")?;
    /// assert_eq!(cursor.prev_dup()?, Some((1, "a".to_string())));
    /// assert_eq!(cursor.prev_dup()?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn prev_dup(&mut self) -> Result<Found<T>>
    where
        T: DupSort,
    {
        self.among_values(op::PREV_DUP, "cursor prev_dup")
    }

    /// Moves to the first value of the next key, skipping the rest of this key's values. From
    /// a cursor on no entry it moves as [`next`](Cursor::next) does.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "a"), (1, "b"), (2, "c"), (3, "d"), (3, "e")] {
    /// #     tx.put::<Topics>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Topics>()?;
    /// assert_eq!(cursor.first()?, Some((1, "a".to_string())));
    /// assert_eq!(cursor.next_no_dup()?, Some((2, "c".to_string()))); // skips (1, "b")
    /// assert_eq!(cursor.next_no_dup()?, Some((3, "d".to_string())));
    /// assert_eq!(cursor.next_no_dup()?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn next_no_dup(&mut self) -> Result<Found<T>>
    where
        T: DupSort,
    {
        let op = if self.at == Position::OnEntry {
            op::NEXT_NODUP
        } else {
            op::NEXT
        };
        self.forward(op, "cursor next_no_dup")
    }

    /// Moves to the last value of the previous key. From a cursor on no entry it moves as
    /// [`prev`](Cursor::prev) does.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "a"), (1, "b"), (2, "c"), (3, "d"), (3, "e")] {
    /// #     tx.put::<Topics>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Topics>()?;
    /// assert_eq!(cursor.last()?, Some((3, "e".to_string())));
    /// assert_eq!(cursor.prev_no_dup()?, Some((2, "c".to_string()))); // skips (3, "d")
    /// assert_eq!(cursor.prev_no_dup()?, Some((1, "b".to_string()))); // the last value of key 1
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn prev_no_dup(&mut self) -> Result<Found<T>>
    where
        T: DupSort,
    {
        let op = if self.at == Position::OnEntry {
            op::PREV_NODUP
        } else {
            op::PREV
        };
        self.backward(op, "cursor prev_no_dup")
    }

    /// Moves to the first value of `key` whose subkey is `>= subkey` (in a table without a
    /// subkey: the first value `>= subkey`), with one `MDBX_GET_BOTH_RANGE`; `None` when `key`
    /// has no such value, and the cursor then stands after the key's values: `next` finds the
    /// next key's first value, `prev` the last value before `subkey`.
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
    /// let mut cursor = tx.cursor::<Storage>()?;
    /// assert_eq!(cursor.seek_dup(&1, &15)?, Some((1, (20, "b".to_string()))));
    /// assert_eq!(cursor.seek_dup(&1, &21)?, None); // not the next key's values
    /// assert_eq!(cursor.next()?, Some((2, (5, "c".to_string()))));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn seek_dup(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
    ) -> Result<Found<T>>
    where
        T: DupSort,
    {
        with_key::<T, _, _>(key, |k| {
            with_subkey::<T, _, _>(subkey, |s| {
                let found = self.land(
                    op::GET_BOTH_RANGE,
                    Some(k),
                    Some(s),
                    Position::Missed,
                    "cursor seek_dup",
                )?;
                if found.is_none() {
                    self.missed(k, Some(s));
                }
                Ok(found)
            })
        })
    }

    /// Moves to the value of `key` with exactly this subkey (in a table without a subkey: the
    /// value equal to `subkey`); `None` when there is none, and the cursor then stands where
    /// it would be: on no entry, so [`delete_current`](Cursor::delete_current) deletes nothing.
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
    /// let mut cursor = tx.cursor::<Storage>()?;
    /// assert_eq!(cursor.get_dup(&1, &20)?, Some((1, (20, "b".to_string()))));
    /// assert_eq!(cursor.get_dup(&1, &15)?, None);
    /// assert_eq!(cursor.current()?, None);
    /// assert_eq!(cursor.next()?, Some((1, (20, "b".to_string())))); // the first value after 15
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn get_dup(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
    ) -> Result<Found<T>>
    where
        T: DupSort,
    {
        with_key::<T, _, _>(key, |k| {
            with_subkey::<T, _, _>(subkey, |s| {
                let exact =
                    |k: &[u8], v: &[u8]| has_subkey::<T>(v, s).then(|| decode_entry::<T>(k, v));
                match self
                    .raw
                    .get_with(op::GET_BOTH_RANGE, Some(k), Some(s), exact)
                {
                    Ok(Some(Some(entry))) => {
                        self.at = Position::OnEntry;
                        entry.map(Some)
                    }
                    Ok(_) => {
                        self.missed(k, Some(s));
                        Ok(None)
                    }
                    Err(code) if code == Code::ENODATA => {
                        self.missed(k, Some(s));
                        Ok(None)
                    }
                    Err(code) => {
                        self.at = Position::Unpositioned;
                        Err(cursor_error::<T>("cursor get_dup", code))
                    }
                }
            })
        })
    }

    /// Number of values of the key under the cursor.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # for (k, v) in [(1, "a"), (1, "b"), (1, "c"), (2, "d")] {
    /// #     tx.put::<Topics>(&k, &v.to_string())?;
    /// # }
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut cursor = tx.cursor::<Topics>()?;
    /// assert!(cursor.dup_count().is_err()); // on no key yet
    /// cursor.first()?;
    /// assert_eq!(cursor.dup_count()?, 3);
    /// cursor.next_no_dup()?;
    /// assert_eq!(cursor.dup_count()?, 1);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::NotOnEntry`] when the cursor is on no entry; [`Error::Mdbx`].
    pub fn dup_count(&mut self) -> Result<u64>
    where
        T: DupSort,
    {
        if self.at != Position::OnEntry {
            return Err(self.not_on_entry("dup_count"));
        }
        self.raw
            .count()
            .map(|n| n as u64)
            .map_err(|code| cursor_error::<T>("cursor dup_count", code))
    }
}

impl<T: Table, M: Mode> std::fmt::Debug for Cursor<'_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(if M::READ_ONLY {
            "Cursor"
        } else {
            "WriteCursor"
        })
        .field("table", &T::NAME)
        .field("position", &self.at)
        .finish()
    }
}
