//! Iterators: the bounds of a walk ([`Positions`]), [`Iter`] from either end with its key,
//! value, lazy and borrowed adaptors, and [`Lazy`] values.

use std::cmp::Ordering;
use std::marker::PhantomData;
use std::ops::Bound;

use crate::codec::{AsKey, AsPrefix, Key, KeyBuf, KeyRange, ValueRef, encode_prefix};
use crate::engine::{Code, Dbi, RawCursor, RawTxn, op};
use crate::error::{Error, Result};
use crate::stored::{
    cmp_keys, cursor_error, decode_entry, decode_key, decode_value, decode_value_ref, with_key,
    with_subkey,
};
use crate::table::{DupSort, Table};

pub(crate) type Entry<'t> = (&'t [u8], &'t [u8]);

/// Decodes a raw entry of table `T`.
fn decode<T: Table>((k, v): Entry<'_>) -> Result<(T::Key, T::Value)> {
    decode_entry::<T>(k, v)
}

/// The encoded bounds of an iteration, in the form the table stores keys.
///
/// The keys share one buffer (`keys`), so that a range read moves and drops one [`KeyBuf`],
/// not three (a read of 10 entries spent ≈ 40 instructions moving three apart).
#[derive(Clone)]
pub(crate) struct Positions {
    /// The bounds' keys: the upper bound's at `..upper_end`, the lower bound's at
    /// `lower_start..lower_end` (the same bytes for an exact key), then `lower_dup`'s from
    /// `lower_end`.
    keys: KeyBuf,
    upper_end: u32,
    lower_start: u32,
    lower_end: u32,
    lower: Edge,
    upper: Edge,
    /// With an exact key (`lower` = `upper`, included): a stored value the front starts at
    /// (the first value `>=` it, found with `MDBX_GET_BOTH_RANGE`) and the back stops before.
    lower_dup: bool,
}

/// How a bound takes its key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Unbounded,
    Included,
    Excluded,
}

impl Edge {
    #[inline]
    fn as_bound<K>(self, key: K) -> Bound<K> {
        match self {
            Edge::Unbounded => Bound::Unbounded,
            Edge::Included => Bound::Included(key),
            Edge::Excluded => Bound::Excluded(key),
        }
    }
}

/// Where a walk starts and where it stops, for borrowed ([`Iter`]) and owned
/// ([`OwnedIter`](crate::OwnedIter)) iteration alike.
impl Positions {
    #[inline]
    fn empty() -> Self {
        Positions {
            keys: KeyBuf::new(),
            upper_end: 0,
            lower_start: 0,
            lower_end: 0,
            lower: Edge::Unbounded,
            upper: Edge::Unbounded,
            lower_dup: false,
        }
    }

    /// Appends the encoding of `b`'s key (if any) to `keys`; how the bound takes it.
    #[inline]
    fn push_bound<T: Table, Q: AsKey<T::Key> + ?Sized>(&mut self, b: Bound<&Q>) -> Edge {
        let (edge, q) = match b {
            Bound::Included(q) => (Edge::Included, q),
            Bound::Excluded(q) => (Edge::Excluded, q),
            Bound::Unbounded => return Edge::Unbounded,
        };
        with_key::<T, _, _>(q, |k| self.keys.extend_from_slice(k));
        edge
    }

    #[inline]
    fn end(&self) -> u32 {
        self.keys.len() as u32
    }

    /// The lower bound's key (empty when unbounded).
    #[inline]
    fn lower_key(&self) -> &[u8] {
        &self.keys.as_slice()[self.lower_start as usize..self.lower_end as usize]
    }

    /// The upper bound's key (empty when unbounded).
    #[inline(always)]
    fn upper_key(&self) -> &[u8] {
        &self.keys.as_slice()[..self.upper_end as usize]
    }

    fn lower_dup(&self) -> Option<&[u8]> {
        self.lower_dup
            .then(|| &self.keys.as_slice()[self.lower_end as usize..])
    }

    /// The lower bound, as the table stores keys.
    pub(crate) fn lower(&self) -> Bound<&[u8]> {
        self.lower.as_bound(self.lower_key())
    }

    /// The upper bound, as the table stores keys.
    pub(crate) fn upper(&self) -> Bound<&[u8]> {
        self.upper.as_bound(self.upper_key())
    }

    /// Places `cur` on the first entry at or after the lower bound (with `lower_dup`, the
    /// exact key's first value `>=` it).
    pub(crate) fn place_front<'t, T: Table>(
        &self,
        cur: &mut RawCursor<'t>,
    ) -> std::result::Result<Option<Entry<'t>>, Code> {
        let k = self.lower_key();
        match self.lower {
            Edge::Unbounded => cur.get(op::FIRST, None, None),
            Edge::Included => match self.lower_dup() {
                None => cur.get(op::SET_RANGE, Some(k), None),
                Some(d) => cur.get(op::GET_BOTH_RANGE, Some(k), Some(d)),
            },
            Edge::Excluded => match cur.get(op::SET_RANGE, Some(k), None)? {
                Some((found, _)) if cmp_keys::<T>(found, k).is_eq() => {
                    cur.get(op::NEXT_NODUP, None, None)
                }
                other => Ok(other),
            },
        }
    }

    /// Places `cur` on the last entry at or before the upper bound (in a `dupsort` table, the
    /// last value of the last key).
    pub(crate) fn place_back<'t, T: Table>(
        &self,
        cur: &mut RawCursor<'t>,
    ) -> std::result::Result<Option<Entry<'t>>, Code> {
        let k = self.upper_key();
        match self.upper {
            Edge::Unbounded => cur.get(op::LAST, None, None),
            Edge::Included => match cur.get(op::SET_RANGE, Some(k), None)? {
                None => cur.get(op::LAST, None, None),
                Some((found, _)) if cmp_keys::<T>(found, k).is_eq() => {
                    if T::FLAGS.dupsort {
                        cur.get(op::LAST_DUP, None, None)?;
                    }
                    cur.get(op::GET_CURRENT, None, None)
                }
                Some(_) => cur.get(op::PREV, None, None),
            },
            Edge::Excluded => match cur.get(op::SET_RANGE, Some(k), None)? {
                None => cur.get(op::LAST, None, None),
                Some(_) => cur.get(op::PREV, None, None),
            },
        }
    }

    /// Whether a stored key is at or below the upper bound.
    #[inline(always)]
    pub(crate) fn below_upper<T: Table>(&self, key: &[u8]) -> bool {
        match self.upper {
            Edge::Unbounded => true,
            Edge::Included => cmp_keys::<T>(key, self.upper_key()) != Ordering::Greater,
            Edge::Excluded => cmp_keys::<T>(key, self.upper_key()) == Ordering::Less,
        }
    }

    /// Whether a stored entry is at or above the lower bound (and `lower_dup`).
    pub(crate) fn above_lower<T: Table>(&self, (key, value): Entry<'_>) -> bool {
        match self.lower {
            Edge::Unbounded => true,
            Edge::Included => match cmp_keys::<T>(key, self.lower_key()) {
                Ordering::Less => false,
                // libmdbx orders a dupsort table's values by their bytes (`memcmp`, then the
                // shorter first), as slices compare.
                Ordering::Equal => self.lower_dup().is_none_or(|d| value >= d),
                Ordering::Greater => true,
            },
            Edge::Excluded => cmp_keys::<T>(key, self.lower_key()) == Ordering::Greater,
        }
    }

    pub(crate) fn all() -> Self {
        Self::empty()
    }

    pub(crate) fn range<T: Table>(r: &(impl KeyRange<T::Key> + ?Sized)) -> Self {
        let mut p = Self::empty();
        p.upper = p.push_bound::<T, _>(r.end());
        p.upper_end = p.end();
        p.lower_start = p.upper_end;
        p.lower = p.push_bound::<T, _>(r.start());
        p.lower_end = p.end();
        p
    }

    pub(crate) fn exact<T: Table, Q: AsKey<T::Key> + ?Sized>(key: &Q) -> Self {
        let mut p = Self::empty();
        p.upper = p.push_bound::<T, Q>(Bound::Included(key));
        p.lower = p.upper;
        p.upper_end = p.end();
        p.lower_end = p.upper_end;
        p
    }

    /// The values of `key` from the first whose subkey is `>= subkey` (a dupsort table).
    pub(crate) fn dups_from<T: DupSort, Q, P>(key: &Q, subkey: &P) -> Self
    where
        Q: AsKey<T::Key> + ?Sized,
        P: AsKey<T::SubKey> + ?Sized,
    {
        let mut positions = Self::exact::<T, Q>(key);
        with_subkey::<T, _, _>(subkey, |s| positions.keys.extend_from_slice(s));
        positions.lower_dup = true;
        positions
    }

    /// `[prefix, successor(prefix))`: every key that starts with the prefix's encoding.
    pub(crate) fn prefix<K: Key>(prefix: &(impl AsPrefix<K> + ?Sized)) -> Self {
        // A prefix is never the last part of the key, so it is encoded in its self-delimiting
        // form, exactly as it appears at the front of the full key.
        let start = encode_prefix::<K>(prefix);
        let bytes = start.as_slice();
        let mut p = Self::empty();
        if let Some(i) = bytes.iter().rposition(|&b| b != 0xff) {
            p.keys.extend_from_slice(&bytes[..i]);
            p.keys.push(bytes[i] + 1);
            p.upper = Edge::Excluded;
        }
        p.upper_end = p.end();
        p.lower_start = p.upper_end;
        p.keys.extend_from_slice(bytes);
        p.lower = Edge::Included;
        p.lower_end = p.end();
        p
    }
}

/// An iterator over entries of table `T` in key order, from either end.
///
/// Yields `Result<(key, value)>`: a decode error is reported for its entry and iteration can go
/// on. Created by [`Reads::iter`](crate::Reads::iter), [`range`](crate::Reads::range),
/// [`prefix`](crate::Reads::prefix), [`dups`](crate::Reads::dups) and
/// [`dups_from`](crate::Reads::dups_from).
pub struct Iter<'t, T: Table> {
    /// The transaction and the cursor cache; `None` for an iterator that could not begin
    /// ([`failed`](Self::failed)).
    from: Option<(&'t RawTxn, &'t crate::engine::CursorCache)>,
    /// Why it could not begin, or why a step from the front failed: yielded once, after which
    /// the walk is over.
    failed: Option<Error>,
    dbi: Dbi,
    bounds: Positions,
    front: Option<RawCursor<'t>>,
    back: Option<RawCursor<'t>>,
    front_started: bool,
    back_started: bool,
    /// The last entry the front yielded, written by the general path only: in the steady
    /// state the front cursor is on it (`next_back_entry` reads it back from there).
    front_last: Option<Entry<'t>>,
    back_last: Option<Entry<'t>>,
    done: bool,
    /// The forward walk's steady state: the front cursor is open and placed, nothing was
    /// taken from the back, and the walk has not ended. Then a step is one `MDBX_NEXT` and the
    /// upper-bound check (`front_step`'s fast path); everything else goes
    /// through `next_entry_slow`, which sets it.
    steady: bool,
    _table: PhantomData<fn() -> T>,
}

impl<'t, T: Table> Iter<'t, T> {
    pub(crate) fn new(
        txn: &'t RawTxn,
        cursors: &'t crate::engine::CursorCache,
        dbi: Dbi,
        bounds: Positions,
    ) -> Self {
        Iter {
            from: Some((txn, cursors)),
            failed: None,
            dbi,
            bounds,
            front: None,
            back: None,
            front_started: false,
            back_started: false,
            front_last: None,
            back_last: None,
            done: false,
            steady: false,
            _table: PhantomData,
        }
    }

    /// Compares stored keys in the table's order.
    /// An iterator that yields `error` and then ends: a read through a transaction that could
    /// not lend itself (an owned transaction already cut).
    pub(crate) fn failed(error: Error) -> Self
    where
        T: Table,
    {
        Iter {
            from: None,
            failed: Some(error),
            dbi: 0,
            bounds: Positions::all(),
            front: None,
            back: None,
            front_started: false,
            back_started: false,
            front_last: None,
            back_last: None,
            done: false,
            steady: false,
            _table: PhantomData,
        }
    }

    fn cmp_keys(a: &[u8], b: &[u8]) -> Ordering {
        cmp_keys::<T>(a, b)
    }

    /// Compares entries: by key, then (dupsort) by value bytes.
    fn cmp_entries(a: Entry<'_>, b: Entry<'_>) -> Ordering {
        Self::cmp_keys(a.0, b.0).then_with(|| {
            if T::FLAGS.dupsort {
                a.1.cmp(b.1)
            } else {
                Ordering::Equal
            }
        })
    }

    #[inline(always)]
    fn below_upper(&self, key: &[u8]) -> bool {
        self.bounds.below_upper::<T>(key)
    }

    fn above_lower(&self, entry: Entry<'_>) -> bool {
        self.bounds.above_lower::<T>(entry)
    }

    /// A cursor for one end: the transaction's kept cursor when it is free (each end places
    /// its cursor before its first step), else one from the cache.
    fn open(&mut self) -> Result<RawCursor<'t>> {
        match self.from {
            Some((txn, cursors)) => txn
                .kept_cursor(self.dbi, cursors)
                .map_err(|code| cursor_error::<T>("open cursor", code)),
            None => Err(self
                .failed
                .take()
                .unwrap_or_else(|| cursor_error::<T>("iterate", Code::EINVAL))),
        }
    }

    fn front_raw(&mut self) -> Result<Option<Entry<'t>>> {
        if self.front.is_none() {
            self.front = Some(self.open()?);
        }
        let started = self.front_started;
        self.front_started = true;
        let cur = self.front.as_mut().expect("opened above");
        let res = if started {
            cur.get(op::NEXT, None, None)
        } else {
            self.bounds.place_front::<T>(cur)
        };
        res.map_err(|code| cursor_error::<T>("iterate", code))
    }

    fn back_raw(&mut self) -> Result<Option<Entry<'t>>> {
        if self.back.is_none() {
            self.back = Some(self.open()?);
        }
        let started = self.back_started;
        self.back_started = true;
        let cur = self.back.as_mut().expect("opened above");
        let res = if started {
            cur.get(op::PREV, None, None)
        } else {
            self.bounds.place_back::<T>(cur)
        };
        res.map_err(|code| cursor_error::<T>("iterate", code))
    }

    /// The next entry from the front, undecoded: `Ok(None)` at the end of the walk.
    #[inline(always)]
    fn next_entry(&mut self) -> Result<Option<Entry<'t>>> {
        match self.front_step() {
            Some(entry) => Ok(Some(entry)),
            None => self.front_end(),
        }
    }

    /// What a front step that found no entry yields: the failure it kept in `failed` (once),
    /// else the end of the walk.
    #[inline(always)]
    fn front_end(&mut self) -> Result<Option<Entry<'t>>> {
        if self.failed.is_some() {
            return self.take_failure();
        }
        Ok(None)
    }

    #[cold]
    #[inline(never)]
    fn take_failure(&mut self) -> Result<Option<Entry<'t>>> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(None),
        }
    }

    /// The next entry from the front, or `None` when there is none to yield: past the upper
    /// bound or the last entry, or a failure, which it keeps in `failed` for
    /// [`front_end`](Self::front_end).
    ///
    /// A scan spends most of its steps here, so the steady state (the `steady` field) takes
    /// a short path that the compiler inlines into the caller's loop: one `MDBX_NEXT`, the
    /// upper-bound check, and the entry returned in registers (no error travels with it, and
    /// nothing else is written: the front cursor itself is on the last entry it yielded, which
    /// `next_back_entry` reads back when the back end comes into play). The first step, the
    /// steps after one from the back, and the end of the walk go through the general path.
    #[inline(always)]
    fn front_step(&mut self) -> Option<Entry<'t>> {
        if self.steady
            && let Some(cur) = self.front.as_mut()
        {
            // Each way out takes only scalars, so that the entry stays in registers.
            match cur.get(op::NEXT, None, None) {
                Ok(Some(entry)) if self.bounds.below_upper::<T>(entry.0) => return Some(entry),
                Ok(_) => self.front_ended(),
                Err(code) => self.front_failed(code),
            }
            return None;
        }
        // The general path answers in one register and leaves its entry in `front_last`: an
        // entry returned through memory would take the fast path's through memory too.
        if self.next_entry_slow() {
            self.front_last
        } else {
            None
        }
    }

    /// The fast path's way out past the upper bound or the last entry: the walk is over.
    #[cold]
    #[inline(never)]
    fn front_ended(&mut self) {
        self.steady = false;
        self.done = true;
    }

    /// The fast path's way out on a libmdbx failure, kept in `failed`: the walk is over.
    #[cold]
    #[inline(never)]
    fn front_failed(&mut self, code: Code) {
        self.front_ended();
        self.failed = Some(cursor_error::<T>("iterate", code));
    }

    /// The general path of [`front_step`](Self::front_step): whether it found an entry, left in
    /// `front_last`.
    #[inline(never)]
    fn next_entry_slow(&mut self) -> bool {
        self.steady = false;
        if self.done {
            return false;
        }
        let entry = match self.front_raw() {
            Ok(Some(e)) => e,
            Ok(None) => {
                self.done = true;
                return false;
            }
            Err(e) => {
                self.done = true;
                self.failed = Some(e);
                return false;
            }
        };
        let past_back = self
            .back_last
            .is_some_and(|b| Self::cmp_entries(entry, b) != Ordering::Less);
        if past_back || !self.below_upper(entry.0) {
            self.done = true;
            return false;
        }
        self.front_last = Some(entry);
        // The front cursor is open and placed: the next step from the front is a plain
        // `MDBX_NEXT`, unless the back end is in play (its last entry bounds the walk).
        self.steady = self.back_last.is_none();
        true
    }

    /// The entry under the front cursor: the last one the fast path yielded.
    fn front_current(&mut self) -> Result<Option<Entry<'t>>> {
        let Some(cur) = self.front.as_mut() else {
            return Ok(None);
        };
        cur.get(op::GET_CURRENT, None, None).map_err(|code| {
            self.done = true;
            cursor_error::<T>("iterate", code)
        })
    }

    fn next_back_entry(&mut self) -> Result<Option<Entry<'t>>> {
        if self.done {
            return Ok(None);
        }
        // A step from the back bounds the front walk by its entry: leave the fast path. The
        // fast path does not write down what it yields; the front cursor is on it.
        if self.steady {
            self.steady = false;
            self.front_last = self.front_current()?;
        }
        let entry = match self.back_raw() {
            Ok(Some(e)) => e,
            Ok(None) => {
                self.done = true;
                return Ok(None);
            }
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        let past_front = self
            .front_last
            .is_some_and(|f| Self::cmp_entries(entry, f) != Ordering::Greater);
        if past_front || !self.above_lower(entry) {
            self.done = true;
            return Ok(None);
        }
        self.back_last = Some(entry);
        Ok(Some(entry))
    }

    /// The next entry's stored bytes, undecoded and borrowed from the transaction.
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
    /// let (key, value) = entries.next_raw().unwrap()?;
    /// assert_eq!(key, 1u64.to_be_bytes()); // keys are stored big-endian
    /// assert_eq!(value, [3, b'o', b'n', b'e']); // bincode: the length, then the bytes
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`](crate::Error::Mdbx) on libmdbx failure.
    #[inline(always)]
    pub fn next_raw(&mut self) -> Option<Result<(&'t [u8], &'t [u8])>> {
        self.next_entry().transpose()
    }

    /// Only the keys, decoded.
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
    /// let keys: Vec<u64> = tx.iter::<Names>().keys().collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [1, 2, 3]);
    /// let last = tx.iter::<Names>().keys().next_back().transpose()?;
    /// assert_eq!(last, Some(3));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn keys(self) -> impl DoubleEndedIterator<Item = Result<T::Key>> + 't {
        KeysOf { inner: self }
    }

    /// Only the values, decoded.
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
    /// let values: Vec<String> = tx.range::<Names>(2..).values().collect::<Result<_, _>>()?;
    /// assert_eq!(values, ["two", "three"]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn values(self) -> impl DoubleEndedIterator<Item = Result<T::Value>> + 't {
        ValuesOf { inner: self }
    }

    /// The entries with their values left undecoded: each value is a [`Lazy`] holding the
    /// stored bytes, decoded only when asked ([`Lazy::decode`]). A scan that looks at a few
    /// values, or only at their size, pays for no decode of the others (heed's
    /// `lazily_decode_data`, reth's `RawTable`).
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
    /// let mut long = Vec::new();
    /// for entry in tx.iter::<Names>().lazy() {
    ///     let (key, value) = entry?;
    ///     if value.bytes().len() > 4 { // bincode: one length byte, then the text
    ///         long.push((key, value.decode()?));
    ///     }
    /// }
    /// assert_eq!(long, [(3, "three".to_string())]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn lazy(self) -> impl DoubleEndedIterator<Item = Result<(T::Key, Lazy<'t, T>)>> + 't {
        LazyOf { inner: self }
    }

    /// The entries with their values borrowed from the pages, decoded in place by the table's
    /// [`ValueRef`] codec: `&[u8]` for `codec = Raw`, `&T` for `codec = Pod<T>`. No value is
    /// copied; each lives as long as the borrow of the transaction.
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, value = Vec<u8>, codec = Raw)]
    /// struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tabula::__doc::temp_dir();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// # let mut tx = db.write()?;
    /// # tx.put::<Blobs>(&1, &b"ab".to_vec())?;
    /// # tx.put::<Blobs>(&2, &b"cde".to_vec())?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let mut total = 0;
    /// for entry in tx.iter::<Blobs>().borrowed() {
    ///     let (_key, bytes): (u64, &[u8]) = entry?;
    ///     total += bytes.len();
    /// }
    /// assert_eq!(total, 5);
    /// let (last, bytes) = tx.iter::<Blobs>().borrowed().next_back().unwrap()?;
    /// assert_eq!((last, bytes), (2, &b"cde"[..]));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn borrowed(
        self,
    ) -> impl DoubleEndedIterator<Item = Result<(T::Key, <T::Codec as ValueRef>::Ref<'t>)>> + 't
    where
        T::Codec: ValueRef,
    {
        BorrowedOf { inner: self }
    }
}

impl<T: Table> Iterator for Iter<'_, T> {
    type Item = Result<(T::Key, T::Value)>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_entry() {
            Ok(Some(e)) => Some(decode::<T>(e)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl<T: Table> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self.next_back_entry() {
            Ok(Some(e)) => Some(decode::<T>(e)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

struct KeysOf<'t, T: Table> {
    inner: Iter<'t, T>,
}

impl<T: Table> Iterator for KeysOf<'_, T> {
    type Item = Result<T::Key>;
    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_entry()
                .transpose()?
                .and_then(|(k, _)| decode_key::<T>(k)),
        )
    }
}

impl<T: Table> DoubleEndedIterator for KeysOf<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_back_entry()
                .transpose()?
                .and_then(|(k, _)| decode_key::<T>(k)),
        )
    }
}

struct ValuesOf<'t, T: Table> {
    inner: Iter<'t, T>,
}

impl<T: Table> Iterator for ValuesOf<'_, T> {
    type Item = Result<T::Value>;
    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_entry()
                .transpose()?
                .and_then(|(k, v)| decode_value::<T>(k, v)),
        )
    }
}

impl<T: Table> DoubleEndedIterator for ValuesOf<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_back_entry()
                .transpose()?
                .and_then(|(k, v)| decode_value::<T>(k, v)),
        )
    }
}

struct LazyOf<'t, T: Table> {
    inner: Iter<'t, T>,
}

impl<'t, T: Table> Iterator for LazyOf<'t, T> {
    type Item = Result<(T::Key, Lazy<'t, T>)>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_entry()
                .transpose()?
                .and_then(|(k, v)| Ok((decode_key::<T>(k)?, Lazy::new(k, v)))),
        )
    }
}

impl<T: Table> DoubleEndedIterator for LazyOf<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_back_entry()
                .transpose()?
                .and_then(|(k, v)| Ok((decode_key::<T>(k)?, Lazy::new(k, v)))),
        )
    }
}

struct BorrowedOf<'t, T: Table> {
    inner: Iter<'t, T>,
}

impl<'t, T: Table> Iterator for BorrowedOf<'t, T>
where
    T::Codec: ValueRef,
{
    type Item = Result<(T::Key, <T::Codec as ValueRef>::Ref<'t>)>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_entry()
                .transpose()?
                .and_then(|(k, v)| Ok((decode_key::<T>(k)?, decode_value_ref::<T>(k, v)?))),
        )
    }
}

impl<T: Table> DoubleEndedIterator for BorrowedOf<'_, T>
where
    T::Codec: ValueRef,
{
    fn next_back(&mut self) -> Option<Self::Item> {
        Some(
            self.inner
                .next_back_entry()
                .transpose()?
                .and_then(|(k, v)| Ok((decode_key::<T>(k)?, decode_value_ref::<T>(k, v)?))),
        )
    }
}

/// A value of table `T` read but not decoded: the stored bytes, borrowed from the transaction
/// for `'t`, decoded only when asked. Returned by [`Reads::get_lazy`](crate::Reads::get_lazy) and
/// [`Iter::lazy`]; it costs nothing to make (two slices) and nothing to drop.
pub struct Lazy<'t, T: Table> {
    key: &'t [u8],
    bytes: &'t [u8],
    _table: PhantomData<fn() -> T>,
}

impl<T: Table> Clone for Lazy<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Table> Copy for Lazy<'_, T> {}

impl<T: Table> std::fmt::Debug for Lazy<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy")
            .field("table", &T::NAME)
            .field("len", &self.bytes.len())
            .finish()
    }
}

impl<'t, T: Table> Lazy<'t, T> {
    #[inline]
    pub(crate) fn new(key: &'t [u8], bytes: &'t [u8]) -> Self {
        Lazy {
            key,
            bytes,
            _table: PhantomData,
        }
    }

    /// The stored bytes, as the table's codec wrote them.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let lazy = tx.get_lazy::<Names>(&1)?.unwrap();
    /// assert_eq!(lazy.bytes(), [3, b'o', b'n', b'e']); // bincode: the length, then the text
    /// # Ok::<(), tabula::Error>(())
    /// ```
    #[inline]
    pub fn bytes(&self) -> &'t [u8] {
        self.bytes
    }

    /// Decodes the value with the table's codec.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # tx.put::<Names>(&1, &"one".to_string())?;
    /// # tx.put_bytes::<Names>(&2u64.to_be_bytes(), &[9])?; // claims 9 bytes, has none
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.get_lazy::<Names>(&1)?.unwrap().decode()?, "one");
    /// // A damaged value is found when it is decoded, not when it is read.
    /// let damaged = tx.get_lazy::<Names>(&2)?.unwrap();
    /// assert!(matches!(damaged.decode(), Err(tabula::Error::Decode { table: "Names", .. })));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](crate::Error::Decode) naming the table and key when the bytes do not decode.
    #[inline]
    pub fn decode(&self) -> Result<T::Value> {
        decode_value::<T>(self.key, self.bytes)
    }

    /// Decodes the value in place, borrowing the stored bytes for `'t` (a [`ValueRef`]
    /// codec: `codec = Raw` or `codec = Pod<T>`).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// # let mut tx = db.write()?;
    /// # tx.put::<Blobs>(&1, &b"abc".to_vec())?;
    /// # tx.commit()?;
    /// let tx = db.read()?;
    /// let lazy = tx.get_lazy::<Blobs>(&1)?.unwrap();
    /// assert_eq!(lazy.decode_ref()?, b"abc");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](crate::Error::Decode) naming the table and key when the bytes do not decode.
    #[inline]
    pub fn decode_ref(&self) -> Result<<T::Codec as ValueRef>::Ref<'t>>
    where
        T::Codec: ValueRef,
    {
        decode_value_ref::<T>(self.key, self.bytes)
    }
}
