//! The writes of an indexed table: a row and every index entry it changes, in the same write
//! transaction, with unique keys checked before anything is written. Two callers: the
//! transaction's write paths (through [`RawTxn`]) and the write cursors and the appender
//! (through their [`RawCursorMut`], whose transaction they write without moving it).

use std::any::Any;
use std::cell::Cell;
use std::cmp::Ordering;
use std::ops::Range;

use crate::codec::{AsKey, DecodeError, Value};
use crate::engine::{self, Code, Dbi, RawCursorMut, RawTxn, RawWriteCursor};
use crate::error::{At, Error, KeyHex, Part, Result};
use crate::state::{Limits, Shared};
use crate::stored::{decode_key, decode_value};
use crate::table::{EntriesError, IndexInfo, KeysFn, RawEntry, Table};

use super::indexes_on;

/// Where index entries are read and written: the write transaction, or the transaction of a
/// write cursor.
pub(crate) trait Store {
    /// `read` of the value under `key` in table `dbi`, if there is one.
    fn store_get_with<R>(
        &self,
        dbi: Dbi,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> R,
    ) -> std::result::Result<Option<R>, Code>;
    /// Writes `(key, value)` into table `dbi` with libmdbx's put `flags`.
    fn store_put_flags(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
        flags: u32,
    ) -> std::result::Result<(), Code>;
    /// Writes `(key, value)` into table `dbi`.
    #[inline(always)]
    fn store_put(&mut self, dbi: Dbi, key: &[u8], value: &[u8]) -> std::result::Result<(), Code> {
        self.store_put_flags(dbi, key, value, engine::put::UPSERT)
    }
    /// Writes `(key, value)` into table `dbi` unless `key` is there already (`MDBX_NOOVERWRITE`,
    /// one search for both the test and the write); `Ok(false)`: it was, and nothing changed.
    #[inline(always)]
    fn store_put_new(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
    ) -> std::result::Result<bool, Code> {
        match self.store_put_flags(dbi, key, value, engine::put::NOOVERWRITE) {
            Ok(()) => Ok(true),
            Err(Code::KEYEXIST) => Ok(false),
            Err(code) => Err(code),
        }
    }
    /// The first value of `key` that is `>= value` in the dupsort table `dbi`, copied; `None`
    /// when `key` has none.
    fn store_get_dup_ge(
        &self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
    ) -> std::result::Result<Option<Vec<u8>>, Code>;
    /// Deletes `(key, value)` (every value of `key` when `None`) from table `dbi`.
    fn store_del(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> std::result::Result<bool, Code>;
}

impl Store for RawTxn {
    fn store_get_with<R>(
        &self,
        dbi: Dbi,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> R,
    ) -> std::result::Result<Option<R>, Code> {
        Ok(RawTxn::get(self, dbi, key)?.map(read))
    }

    #[inline(always)]
    fn store_put_flags(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
        flags: u32,
    ) -> std::result::Result<(), Code> {
        RawTxn::put(self, dbi, key, value, flags)
    }

    fn store_del(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> std::result::Result<bool, Code> {
        RawTxn::del(self, dbi, key, value)
    }

    fn store_get_dup_ge(
        &self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
    ) -> std::result::Result<Option<Vec<u8>>, Code> {
        Ok(match RawTxn::get_lower_bound(self, dbi, key, value)? {
            Some((found, v)) if found == key => Some(v.to_vec()),
            _ => None,
        })
    }
}

macro_rules! cursor_store {
    ($cursor:ident) => {
        impl Store for $cursor<'_> {
            fn store_get_with<R>(
                &self,
                dbi: Dbi,
                key: &[u8],
                read: impl FnOnce(&[u8]) -> R,
            ) -> std::result::Result<Option<R>, Code> {
                Ok(self.txn_get(dbi, key)?.map(|value| read(&value)))
            }

            #[inline(always)]
            fn store_put_flags(
                &mut self,
                dbi: Dbi,
                key: &[u8],
                value: &[u8],
                flags: u32,
            ) -> std::result::Result<(), Code> {
                self.txn_put(dbi, key, value, flags)
            }

            fn store_del(
                &mut self,
                dbi: Dbi,
                key: &[u8],
                value: Option<&[u8]>,
            ) -> std::result::Result<bool, Code> {
                self.txn_del(dbi, key, value)
            }

            fn store_get_dup_ge(
                &self,
                dbi: Dbi,
                key: &[u8],
                value: &[u8],
            ) -> std::result::Result<Option<Vec<u8>>, Code> {
                self.txn_get_dup_ge(dbi, key, value)
            }
        }
    };
}

cursor_store!(RawCursorMut);
cursor_store!(RawWriteCursor);

/// What a write of a row changes in one index of its table. An entry is an index key with the
/// row's primary key ([`Scratch::primary`], the same for the old and the new row), so the
/// entries removed are the index keys of the old row that the new row does not have
/// (`removed`), and the entries added those of the new row the old one did not have
/// (`added`): each a sorted run without repeats of [`Scratch::keys`].
struct Change {
    dbi: Dbi,
    name: &'static str,
    unique: bool,
    /// The index table's ID: its size limits ([`Shared::limits`]) are what every added
    /// entry is checked against.
    table: usize,
    removed: Range<usize>,
    added: Range<usize>,
}

/// The buffers one write of an indexed table works in: every index key of the old and the new
/// row, one after another, and where each lies. A thread keeps one and every write reuses it
/// ([`Changes`] holds it during the write), so a write allocates nothing once the buffers have
/// grown to its rows' size.
struct Scratch {
    /// The encoded index keys, one after another.
    bytes: Vec<u8>,
    /// Where each key lies in `bytes`.
    keys: Vec<(usize, usize)>,
    /// One change per index of the table, in schema order.
    changes: Vec<Change>,
    /// The row's primary key as an index stores it (`Ordered<T::Key>`: the key's encoding).
    primary: Vec<u8>,
    /// The length of the longest key in `keys`.
    longest: usize,
}

/// Buffers above this size are not kept for the next write.
const KEEP_AT_MOST: usize = 1 << 20;

impl Scratch {
    const fn new() -> Scratch {
        Scratch {
            bytes: Vec::new(),
            keys: Vec::new(),
            changes: Vec::new(),
            primary: Vec::new(),
            longest: 0,
        }
    }

    /// The thread's buffers, emptied (fresh ones if a write of this thread holds them: an
    /// index function that writes another database).
    #[inline]
    fn take() -> Box<Scratch> {
        match SCRATCH.try_with(Cell::take) {
            Ok(Some(mut s)) => {
                s.bytes.clear();
                s.keys.clear();
                s.changes.clear();
                s.primary.clear();
                s.longest = 0;
                s
            }
            _ => Box::new(Scratch::new()),
        }
    }

    /// Gives the buffers back for the thread's next write, unless they grew large.
    #[inline]
    fn give_back(self: Box<Self>) {
        if self.bytes.capacity() <= KEEP_AT_MOST && self.keys.capacity() <= KEEP_AT_MOST {
            let _ = SCRATCH.try_with(|cell| cell.set(Some(self)));
        }
    }

    #[inline]
    fn key(&self, at: usize) -> &[u8] {
        let (start, end) = self.keys[at];
        &self.bytes[start..end]
    }

    /// Appends the index keys `keys` computes for the decoded row `(pk, row)` as a sorted run
    /// without repeats. `false` when the row is not of the index's source types.
    #[inline]
    fn push_keys(&mut self, keys: KeysFn, pk: &dyn Any, row: &dyn Any) -> bool {
        let start = self.keys.len();
        let Scratch {
            bytes,
            keys: at,
            longest,
            ..
        } = self;
        let mut push = |key: &[u8]| {
            *longest = (*longest).max(key.len());
            let from = bytes.len();
            bytes.extend_from_slice(key);
            at.push((from, bytes.len()));
        };
        if !keys(pk, row, &mut push) {
            return false;
        }
        if self.keys.len() - start > 1 {
            self.sort_run(start);
        }
        true
    }

    /// Sorts the run of keys from `start` to the end and drops its repeats.
    #[cold]
    fn sort_run(&mut self, start: usize) {
        let bytes = &self.bytes;
        self.keys[start..].sort_unstable_by(|a, b| bytes[a.0..a.1].cmp(&bytes[b.0..b.1]));
        let mut kept = start + 1;
        for at in start + 1..self.keys.len() {
            if self.key(at) != self.key(kept - 1) {
                self.keys[kept] = self.keys[at];
                kept += 1;
            }
        }
        self.keys.truncate(kept);
    }

    /// One index's change: the keys of the old row and of the new row (either may be absent),
    /// without those both have. `false` when the rows are not of the index's source types.
    fn push_change(
        &mut self,
        (dbi, name, index, table): (Dbi, &'static str, &IndexInfo, usize),
        pk: &dyn Any,
        old: Option<&dyn Any>,
        new: Option<&dyn Any>,
    ) -> bool {
        let start = self.keys.len();
        if let Some(row) = old
            && !self.push_keys(index.keys, pk, row)
        {
            return false;
        }
        let middle = self.keys.len();
        if let Some(row) = new
            && !self.push_keys(index.keys, pk, row)
        {
            return false;
        }
        let end = self.keys.len();
        let (removed, added) = if start == middle || middle == end {
            (start..middle, middle..end)
        } else if middle - start == 1 && end - middle == 1 {
            // One key each, the usual case.
            if self.key(start) == self.key(middle) {
                self.keys.truncate(start);
                (start..start, start..start)
            } else {
                (start..middle, middle..end)
            }
        } else {
            self.drop_common(start..middle, middle..end)
        };
        self.changes.push(Change {
            dbi,
            name,
            unique: index.unique,
            table,
            removed,
            added,
        });
        true
    }

    /// Takes the keys the sorted runs `old` and `new` (the last runs of `keys`, in this order)
    /// share out of both, leaving the keys only the old row has (the entries the write
    /// removes) and those only the new row has (the entries it adds), each still sorted.
    #[cold]
    fn drop_common(
        &mut self,
        old: Range<usize>,
        new: Range<usize>,
    ) -> (Range<usize>, Range<usize>) {
        // One walk of both runs; what is kept is written back behind the reads.
        let (mut i, mut j) = (old.start, new.start);
        let (mut removed, mut added) = (old.start, new.start);
        while i < old.end && j < new.end {
            match self.key(i).cmp(self.key(j)) {
                Ordering::Less => {
                    self.keys[removed] = self.keys[i];
                    removed += 1;
                    i += 1;
                }
                Ordering::Greater => {
                    self.keys[added] = self.keys[j];
                    added += 1;
                    j += 1;
                }
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
            }
        }
        while i < old.end {
            self.keys[removed] = self.keys[i];
            removed += 1;
            i += 1;
        }
        while j < new.end {
            self.keys[added] = self.keys[j];
            added += 1;
            j += 1;
        }
        self.keys.truncate(added);
        (old.start..removed, new.start..added)
    }
}

thread_local! {
    /// The thread's [`Scratch`] between writes.
    static SCRATCH: Cell<Option<Box<Scratch>>> = const { Cell::new(None) };
}

/// What a write of an indexed table changes in its indexes, worked out before the row is
/// written ([`prepare`], [`cursor_removal`]) and written after it ([`apply`]). Holds the
/// thread's [`Scratch`] until dropped. `Changes::default()` changes nothing.
#[derive(Default)]
pub(crate) struct Changes(Option<Box<Scratch>>);

impl Changes {
    /// Whether the write changes no index entry (a table without indexes).
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Calls `f(index table, dupsort, entry)` for every index entry the write changes, in the
    /// order [`apply`] writes them.
    pub(crate) fn for_each_entry(&self, mut f: impl FnMut(&'static str, bool, EntryChange<'_>)) {
        let Some(s) = &self.0 else {
            return;
        };
        let primary = s.primary.as_slice();
        for change in &s.changes {
            let dupsort = !change.unique;
            for at in change.removed.clone() {
                let value = dupsort.then_some(primary);
                f(change.name, dupsort, EntryChange::Removed(s.key(at), value));
            }
            for at in change.added.clone() {
                f(change.name, dupsort, EntryChange::Added(s.key(at), primary));
            }
        }
    }
}

impl Changes {
    /// Moves the entries this write adds to its unique indexes into `later`, which adds them
    /// after every other row of an unwind was written back ([`Deferred::apply`]): rows that
    /// swapped unique keys within the versions undone each hold the other's key until the
    /// other is reverted. What is left ([`apply`]) removes the old row's entries and adds the
    /// new row's entries of the other indexes.
    pub(crate) fn defer_unique(&mut self, later: &mut Deferred) {
        let Some(s) = &mut self.0 else {
            return;
        };
        let primary = s.primary.as_slice();
        for change in s.changes.iter_mut().filter(|c| c.unique) {
            for at in change.added.clone() {
                let (start, end) = s.keys[at];
                later.push(change, &s.bytes[start..end], primary);
            }
            change.added = change.added.start..change.added.start;
        }
    }
}

/// The entries of unique indexes an unwind adds once every changed row is written back
/// ([`Changes::defer_unique`]), each checked then: a key another row holds is
/// `UniqueViolation`, as for any write.
#[derive(Default)]
pub(crate) struct Deferred {
    /// Each entry's index key, then its row's primary key, one after another.
    bytes: Vec<u8>,
    entries: Vec<DeferredEntry>,
}

/// One entry of [`Deferred`]: its index and where its key and its row's key lie.
struct DeferredEntry {
    dbi: Dbi,
    name: &'static str,
    /// The index table's ID (its size limits, its key's display).
    table: usize,
    key: Range<usize>,
    primary: Range<usize>,
}

impl Deferred {
    fn push(&mut self, change: &Change, key: &[u8], primary: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        let middle = self.bytes.len();
        self.bytes.extend_from_slice(primary);
        self.entries.push(DeferredEntry {
            dbi: change.dbi,
            name: change.name,
            table: change.table,
            key: start..middle,
            primary: middle..self.bytes.len(),
        });
    }

    /// Adds the entries of the unique indexes of table `T`, each checked first; `added` is
    /// called with each entry written (its index, key and row's key).
    pub(crate) fn apply<T: Table>(
        &self,
        store: &mut impl Store,
        shared: &Shared,
        mut added: impl FnMut(&'static str, &[u8], &[u8]),
    ) -> Result<()> {
        for entry in &self.entries {
            let key = &self.bytes[entry.key.clone()];
            let primary = &self.bytes[entry.primary.clone()];
            let index = (entry.dbi, entry.name, entry.table);
            refuse_held::<T>(store, shared, index, key, primary)?;
            put_entry(store, shared, index, key, primary)?;
            added(entry.name, key, primary);
        }
        Ok(())
    }
}

/// An index entry a write changes.
pub(crate) enum EntryChange<'a> {
    /// `(key, value)` added.
    Added(&'a [u8], &'a [u8]),
    /// `(key, value)` removed; every value of `key` when `None` (a unique index, whose key has
    /// one value).
    Removed(&'a [u8], Option<&'a [u8]>),
}

impl Drop for Changes {
    #[inline]
    fn drop(&mut self) {
        if let Some(scratch) = self.0.take() {
            scratch.give_back();
        }
    }
}

/// An index that names table `T` as its source but computes its keys from other types: two
/// tables of the schema share a name (which the startup step refuses, so this is not
/// reached).
#[cold]
fn not_its_source<T: Table>(index: &'static str) -> Error {
    Error::InvalidTable {
        table: index.to_string(),
        rust_name: "",
        problem: format!(
            "its source table `{}` has other key or value types than the table it was \
             declared on; give each table of the schema its own name",
            T::NAME
        ),
    }
}

/// The entries of the stored row `(k, v)` of table `table` in `index` (named `name`): for
/// the checks and the index build, which take one index at a time.
pub(crate) fn entries(
    table: &'static str,
    index: &IndexInfo,
    name: &'static str,
    k: &[u8],
    v: &[u8],
) -> Result<Vec<RawEntry>> {
    let mut out = Vec::new();
    (index.entries)(k, v, &mut out).map_err(|e| match e {
        EntriesError::Key(source) => Error::Decode {
            table,
            part: Part::Key,
            key: KeyHex::new(k),
            source,
        },
        EntriesError::Value(source) => Error::Decode {
            table,
            part: Part::Value,
            key: KeyHex::new(k),
            source,
        },
        EntriesError::Encode(source) => Error::Encode {
            table: name,
            key: KeyHex::new(k),
            source,
        },
    })?;
    Ok(out)
}

/// For each index of table `T`: the keys of the decoded rows `old` and `new` under the
/// primary key `pk`, into the thread's scratch. Each row is decoded once by
/// the caller, whatever the number of indexes. This is where the indexes' key functions run
/// (they may panic): every caller calls it before it writes anything.
fn changes<T: Table>(
    shared: &Shared,
    pk: &T::Key,
    old: Option<&T::Value>,
    new: Option<&T::Value>,
) -> Result<Changes> {
    let mut s = Scratch::take();
    // What `Ordered<T::Key>` stores: the key's encoding (`codec/dup.rs`).
    s.primary
        .extend_from_slice(AsKey::<T::Key>::encode(pk).as_ref());
    let old = old.map(|row| row as &dyn Any);
    let new = new.map(|row| row as &dyn Any);
    for (id, table) in shared.tables().iter().enumerate() {
        let Some(index) = &table.index else {
            continue;
        };
        if same_name(index.source, T::NAME)
            && !s.push_change((shared.dbis()[id], table.name, index, id), pk, old, new)
        {
            return Err(not_its_source::<T>(table.name));
        }
    }
    Ok(Changes(Some(s)))
}

/// A stored value of table `T` under `k` that did not decode.
#[cold]
fn value_error<T: Table>(k: &[u8], source: DecodeError) -> Error {
    Error::Decode {
        table: T::NAME,
        part: Part::Value,
        key: KeyHex::of::<T>(k),
        source,
    }
}

/// `a == b`, at once when they are the same constant.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    (std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()) || a == b
}

/// Fails with [`Error::TooLarge`], as libmdbx would refuse the write, if an index entry the
/// write adds is over its index table's size limits: checked before anything is written, so
/// that once the row is written only an engine failure (a full map, which leaves the
/// transaction unusable) can stop the index entries that go with it. (The row `(k, v)` is the
/// first thing written, so libmdbx's refusal of a too-large row writes nothing.)
fn check_sizes<T: Table>(
    shared: &Shared,
    k: &[u8],
    value_len: usize,
    changes: &Changes,
) -> Result<()> {
    let Some(s) = &changes.0 else {
        return Ok(());
    };
    // Every key and the row's key within the smallest limits of any index: nothing to look
    // at entry by entry (the usual case, two comparisons).
    let (max_key, max_value) = shared.index_limits();
    if s.longest <= max_key && s.primary.len() <= max_value {
        return Ok(());
    }
    check_entries::<T>(shared, k, value_len, s)
}

/// [`check_sizes`] entry by entry, for a write with a key over some index's limits.
#[cold]
#[inline(never)]
fn check_entries<T: Table>(shared: &Shared, k: &[u8], value_len: usize, s: &Scratch) -> Result<()> {
    let primary = s.primary.as_slice();
    for change in &s.changes {
        let limits = shared.limits()[change.table];
        for at in change.added.clone() {
            let key = s.key(at);
            if key.len() > limits.key || primary.len() > limits.value {
                let entry = (change.name, key, primary.len(), limits);
                return Err(too_large::<T>(shared, (k, value_len), entry));
            }
        }
    }
    Ok(())
}

/// The [`Error::TooLarge`] for the index entry `(table, key, value_len bytes, limits)` of the
/// row `(k, v_len bytes)` of table `T`: the row's, when the row is over its own table's limits
/// too (an entry's value is the row's key, so a too-large row key is met here first), else
/// the entry's; as libmdbx's refusal maps to.
#[cold]
#[inline(never)]
fn too_large<T: Table>(
    shared: &Shared,
    (k, v_len): (&[u8], usize),
    (table, key, value_len, limits): (&'static str, &[u8], usize, Limits),
) -> Error {
    let own = shared
        .tables()
        .iter()
        .position(|t| same_name(t.name, T::NAME));
    let (table, key, value_len, limits) = match own.map(|id| shared.limits()[id]) {
        Some(own) if k.len() > own.key || v_len > own.value => (T::NAME, k, v_len, own),
        _ => (table, key, value_len, limits),
    };
    let at = At {
        flags: limits.flags,
        ..At::table(table, "put").entry(key, value_len)
    };
    shared.fail(Code::BAD_VALSIZE, at)
}

/// Fails if an added entry of a unique index names a key another row of table `T` holds.
fn check_unique<T: Table>(store: &impl Store, shared: &Shared, changes: &Changes) -> Result<()> {
    let Some(s) = &changes.0 else {
        return Ok(());
    };
    for change in s.changes.iter().filter(|c| c.unique) {
        for at in change.added.clone() {
            let index = (change.dbi, change.name, change.table);
            refuse_held::<T>(store, shared, index, s.key(at), &s.primary)?;
        }
    }
    Ok(())
}

/// Fails with `UniqueViolation` if another row of table `T` than `primary` holds `key` in the
/// unique index `(dbi, name, table ID)`.
fn refuse_held<T: Table>(
    store: &impl Store,
    shared: &Shared,
    (dbi, name, table): (Dbi, &'static str, usize),
    key: &[u8],
    primary: &[u8],
) -> Result<()> {
    let held = store
        .store_get_with(dbi, key, |row| {
            (row != primary).then(|| KeyHex::of::<T>(row))
        })
        .map_err(|code| shared.fail(code, At::table(name, "get").key(key)))?;
    match held {
        Some(Some(row)) => Err(Error::UniqueViolation {
            table: T::NAME,
            index: name,
            key: KeyHex::shown(key, shared.tables()[table].debug_key),
            rows: Box::new([row, KeyHex::of::<T>(primary)]),
        }),
        _ => Ok(()),
    }
}

/// Writes the entry `(key, primary)` into the index `(dbi, name, table ID)`, a refusal shown
/// with the index table's flags.
fn put_entry(
    store: &mut impl Store,
    shared: &Shared,
    (dbi, name, table): (Dbi, &'static str, usize),
    key: &[u8],
    primary: &[u8],
) -> Result<()> {
    store.store_put(dbi, key, primary).map_err(|code| {
        let at = At::table(name, "put").entry(key, primary.len());
        let flags = shared.limits()[table].flags;
        shared.fail(code, At { flags, ..at })
    })
}

/// Writes the index entries of `changes` (the row is already written): per index, the
/// entries removed, then those added; unchanged entries are not touched. (The other effects
/// of the entries are the write pipeline's, [`Changes::for_each_entry`].)
pub(crate) fn apply(store: &mut impl Store, shared: &Shared, changes: &Changes) -> Result<()> {
    let Some(s) = &changes.0 else {
        return Ok(());
    };
    let primary = s.primary.as_slice();
    for change in &s.changes {
        for at in change.removed.clone() {
            let key = s.key(at);
            let value = (!change.unique).then_some(primary);
            store
                .store_del(change.dbi, key, value)
                .map_err(|code| shared.fail(code, At::table(change.name, "delete").key(key)))?;
        }
        for at in change.added.clone() {
            put_entry(
                store,
                shared,
                (change.dbi, change.name, change.table),
                s.key(at),
                primary,
            )?;
        }
    }
    Ok(())
}

/// What a write of the stored row `(k, v)` into table `T` (handle `dbi`) with `flags` changes
/// in its indexes, read and checked before anything is written: the old row is read (not for
/// an append, whose key has none) and decoded, an insert of a present key is `KeyExists`, the
/// indexes' key functions run, a row or an added index entry over its table's size limits is
/// `TooLarge`, and a unique key another row holds is `UniqueViolation`. After it only an
/// engine failure can stop the write. `row` is the value `v` encodes when
/// the caller holds it (a typed write), so `v` is decoded only when it is `None`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare<T: Table>(
    store: &impl Store,
    shared: &Shared,
    dbi: Dbi,
    k: &[u8],
    v: &[u8],
    row: Option<&T::Value>,
    flags: u32,
    op: &'static str,
) -> Result<Changes> {
    let changes = prepare_unchecked::<T>(store, shared, dbi, k, v, row, flags, op)?;
    check_unique::<T>(store, shared, &changes)?;
    Ok(changes)
}

/// [`prepare`] without the unique keys' check: for an unwind, which adds the unique entries
/// after every row is written back and checks them then ([`Changes::defer_unique`]).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn prepare_unchecked<T: Table>(
    store: &impl Store,
    shared: &Shared,
    dbi: Dbi,
    k: &[u8],
    v: &[u8],
    row: Option<&T::Value>,
    flags: u32,
    op: &'static str,
) -> Result<Changes> {
    // The old row, decoded where it lies (not for an append, whose key has none, nor for an
    // insert, which a present key refuses).
    let mut old = None;
    let found = flags & engine::put::APPEND == 0
        && store
            .store_get_with(dbi, k, |bytes| {
                if flags & engine::put::NOOVERWRITE == 0 {
                    old = Some(<T::Codec as Value>::decode(bytes));
                }
            })
            .map_err(|code| shared.fail(code, At::of::<T>(op).key(k)))?
            .is_some();
    if found && flags & engine::put::NOOVERWRITE != 0 {
        return Err(Error::KeyExists {
            table: T::NAME,
            key: KeyHex::of::<T>(k),
        });
    }
    let pk = decode_key::<T>(k)?;
    let old = match old {
        Some(Ok(old)) => Some(old),
        Some(Err(source)) => return Err(value_error::<T>(k, source)),
        None => None,
    };
    let decoded;
    let new = match row {
        Some(row) => row,
        None => {
            decoded = decode_value::<T>(k, v)?;
            &decoded
        }
    };
    let changes = changes::<T>(shared, &pk, old.as_ref(), Some(new))?;
    check_sizes::<T>(shared, k, v.len(), &changes)?;
    Ok(changes)
}

/// Empties every index of table `T` (which is being emptied); `f` is called with the name of
/// each index emptied.
pub(crate) fn clear<T: Table>(
    raw: &mut RawTxn,
    shared: &Shared,
    mut f: impl FnMut(&'static str),
) -> Result<()> {
    for (id, name, _) in indexes_on(shared.tables(), T::NAME) {
        raw.drop_table(shared.dbis()[id], false)
            .map_err(|code| shared.fail(code, At::table(name, "clear")))?;
        f(name);
    }
    Ok(())
}

/// Whether table `T` of the open database has indexes: for the write cursors, which know the
/// table but not the schema. A constant `false` for a table declared without `indexed`.
#[inline(always)]
pub(crate) fn cursor_indexed<T: Table>(shared: &Shared) -> bool {
    T::INDEXED && indexes_on(shared.tables(), T::NAME).next().is_some()
}

/// For a write cursor over the indexed table `T` about to delete the entry `(k, v)` under it:
/// the index entries that go with it. Also what a delete of several rows computes for each
/// row before it deletes the first, so that a row that does not decode or a key function that
/// panics stops it before it changed anything.
pub(crate) fn cursor_removal<T: Table>(shared: &Shared, k: &[u8], v: &[u8]) -> Result<Changes> {
    let pk = decode_key::<T>(k)?;
    let old = decode_value::<T>(k, v)?;
    removal::<T>(shared, &pk, &old)
}

/// The index entries of the decoded row `(pk, row)` of table `T`, which its delete takes with
/// it ([`cursor_removal`]).
pub(crate) fn removal<T: Table>(shared: &Shared, pk: &T::Key, row: &T::Value) -> Result<Changes> {
    changes::<T>(shared, pk, Some(row), None)
}
