//! The write pipeline: every change of a table's rows, whatever the write form (`Tx`'s puts,
//! inserts, appends, deletes, ranges, retains, pops, clears and sequences; the write cursor;
//! the appender; the bulk load; the byte-level writes), goes through here, in two steps:
//!
//! 1. **Plan**: everything that can refuse the change is checked before anything is written —
//!    the row's old value read and decoded where an index needs it, every index entry the
//!    change removes or adds worked out (the index key functions run), sizes and unique keys
//!    checked (`index/write.rs`, [`index::prepare`]).
//! 2. **Apply**: the row is written (a refusal by libmdbx mapped once, [`refused`]), then
//!    [`applied`] carries out every effect of the change: the watchers' records
//!    (`hub.rs`) and the index entries of the plan.
//!
//! A new write form calls [`put`], [`delete`], [`delete_current`] or [`clear`]; a new effect
//! goes into [`applied`] (and [`cleared`]) and reaches every form. Commits (and the metric they
//! record) go through [`commit`] and [`checkpoint`], nested transactions through [`nest`] and
//! [`unnest`]. Where the row is written — a transaction's table, a write cursor, the
//! appender's cursor — is a [`Target`].

mod commit;
mod refusal;

pub(crate) use commit::{Savepoint, checkpoint, commit, nest, unnest};
pub(crate) use refusal::{Refusal, refused};

use crate::engine::{self, Code, CursorNav, Dbi, RawCursorMut, RawTxn, RawWriteCursor, Room};
use crate::error::{At, Error, KeyHex, Result};
use crate::history::{self, Planned, Plans};
use crate::index::{self, Changes, EntryChange, Store};
use crate::state::Shared;
use crate::stored::decode_value;
use crate::table::Table;

/// Where a change's row is written: a table of the write transaction ([`InTxn`]) or the table
/// of a write cursor. Index entries go through the same target ([`Store`]).
pub(crate) trait Target: Store {
    /// The row's table.
    fn dbi(&self) -> Dbi;
    /// Writes the row `(key, value)` with libmdbx's put `flags`.
    fn put_row(&mut self, key: &[u8], value: &[u8], flags: u32) -> std::result::Result<(), Code>;
    /// The table's last key, for a refused append (a cursor target moves), shown by `show`.
    fn last_key(&mut self, show: crate::error::ShowKey) -> Option<KeyHex>;
    /// The last value of `key`, for a refused `append_dup` (a cursor target moves).
    fn last_dup(&mut self, key: &[u8]) -> Option<KeyHex>;
}

/// Where a write through a cursor left the cursor, for the write cursor's [`Position`]
/// (`cursor/mod.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Landing {
    /// Not moved: the change was refused before anything was written.
    Unmoved,
    /// On the row it wrote.
    Written,
    /// On the gap the deleted row left.
    Deleted,
    /// On no entry: libmdbx refused the row, or the diagnosis of the refusal moved it.
    Refused,
}

/// One change of a row, as its effects see it.
#[derive(Clone, Copy)]
pub(crate) enum Change<'a> {
    /// `key` now holds `value` (empty when the value was written into the page in place).
    Put { key: &'a [u8], value: &'a [u8] },
    /// `key` lost the value `dup` (a dupsort table), or every value (`None`).
    Delete {
        key: &'a [u8],
        dup: Option<&'a [u8]>,
    },
}

/// Whether some effect needs the bytes of the rows a cursor deletes: a delete at the cursor
/// then copies the entry before it goes ([`delete_current`]). One relaxed load.
#[inline(always)]
fn sees_deleted_rows(shared: &Shared) -> bool {
    shared.watch().recording()
}

/// Every effect of a change of table `T` whose row was just written: the watchers' records,
/// the change recorded in `T`'s history (`recorded`: its plans and the row's key, for a table
/// declared `history`; a delete of every value of a `dupsort` key changes several units), then
/// the index entries of `plan`. The one place a write's effects are applied. `change` is
/// `None` for a delete at a cursor when no effect needs its bytes ([`sees_deleted_rows`]).
#[inline(always)]
fn applied<T: Table>(
    store: &mut impl Store,
    shared: &Shared,
    change: Option<Change<'_>>,
    plan: &Changes,
    recorded: Option<(&[Planned], &[u8])>,
) -> Result<()> {
    match change {
        Some(Change::Put { key, value }) => shared.watch().put::<T>(key, value),
        Some(Change::Delete { key, dup }) => shared.watch().del::<T>(key, dup),
        None => {}
    }
    if T::HISTORY
        && let Some((planned, key)) = recorded
    {
        for planned in planned {
            history::record(store, shared, planned, key)?;
        }
    }
    if plan.is_empty() {
        return Ok(());
    }
    index::apply(store, shared, plan)?;
    if shared.watch().recording() {
        plan.for_each_entry(|index, dupsort, entry| match entry {
            EntryChange::Added(key, value) => shared.watch().put_in(index, dupsort, key, value),
            EntryChange::Removed(key, value) => shared.watch().del_in(index, dupsort, key, value),
        });
    }
    Ok(())
}

/// The effects of emptying table `T`: the watchers' records, and when `indexed` every index
/// on it emptied (and recorded). The one place a clear's effects are applied.
fn cleared<T: Table>(raw: &mut RawTxn, shared: &Shared, indexed: bool) -> Result<()> {
    shared.watch().clear::<T>();
    if indexed {
        index::clear::<T>(raw, shared, |index| shared.watch().clear_in(index))?;
    }
    Ok(())
}

/// A write transaction began (the writer lock is held; for a bulk load, also each batch after
/// the first, [`checkpoint`]): whether the watchers record its changes is decided now.
#[inline(always)]
pub(crate) fn begin(shared: &Shared) {
    shared.watch().begin();
    shared.history().begin();
}

/// A table of the write transaction as a [`Target`].
pub(crate) struct InTxn<'a> {
    pub(crate) raw: &'a mut RawTxn,
    pub(crate) dbi: Dbi,
}

impl Store for InTxn<'_> {
    #[inline(always)]
    fn store_get_with<R>(
        &self,
        dbi: Dbi,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> R,
    ) -> std::result::Result<Option<R>, Code> {
        self.raw.store_get_with(dbi, key, read)
    }

    #[inline(always)]
    fn store_put_flags(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
        flags: u32,
    ) -> std::result::Result<(), Code> {
        self.raw.store_put_flags(dbi, key, value, flags)
    }

    #[inline(always)]
    fn store_del(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> std::result::Result<bool, Code> {
        self.raw.store_del(dbi, key, value)
    }

    fn store_get_dup_ge(
        &self,
        dbi: Dbi,
        key: &[u8],
        value: &[u8],
    ) -> std::result::Result<Option<Vec<u8>>, Code> {
        self.raw.store_get_dup_ge(dbi, key, value)
    }
}

impl Target for InTxn<'_> {
    #[inline(always)]
    fn dbi(&self) -> Dbi {
        self.dbi
    }

    #[inline(always)]
    fn put_row(&mut self, key: &[u8], value: &[u8], flags: u32) -> std::result::Result<(), Code> {
        self.raw.put(self.dbi, key, value, flags)
    }

    fn last_key(&mut self, show: crate::error::ShowKey) -> Option<KeyHex> {
        let mut cursor = self.raw.write_cursor(self.dbi).ok()?;
        let (k, _) = cursor.get(engine::op::LAST).ok()??;
        Some(KeyHex::shown(k, show))
    }

    fn last_dup(&mut self, key: &[u8]) -> Option<KeyHex> {
        let mut cursor = self.raw.write_cursor(self.dbi).ok()?;
        cursor.get_at(engine::op::SET_KEY, Some(key)).ok()??;
        let (_, v) = cursor.get_at(engine::op::LAST_DUP, None).ok()??;
        Some(KeyHex::new(v))
    }
}

impl Target for RawCursorMut<'_> {
    #[inline(always)]
    fn dbi(&self) -> Dbi {
        RawCursorMut::dbi(self)
    }

    #[inline(always)]
    fn put_row(&mut self, key: &[u8], value: &[u8], flags: u32) -> std::result::Result<(), Code> {
        self.put(key, value, flags)
    }

    fn last_key(&mut self, show: crate::error::ShowKey) -> Option<KeyHex> {
        self.get_with(engine::op::LAST, None, None, |k, _| KeyHex::shown(k, show))
            .ok()
            .flatten()
    }

    fn last_dup(&mut self, key: &[u8]) -> Option<KeyHex> {
        self.get_with(engine::op::SET_KEY, Some(key), None, |_, _| ())
            .ok()??;
        self.get_with(engine::op::LAST_DUP, None, None, |_, v| KeyHex::new(v))
            .ok()
            .flatten()
    }
}

impl Target for RawWriteCursor<'_> {
    #[inline(always)]
    fn dbi(&self) -> Dbi {
        RawWriteCursor::dbi(self)
    }

    #[inline(always)]
    fn put_row(&mut self, key: &[u8], value: &[u8], flags: u32) -> std::result::Result<(), Code> {
        self.put(key, value, flags)
    }

    fn last_key(&mut self, show: crate::error::ShowKey) -> Option<KeyHex> {
        let (k, _) = self.get(engine::op::LAST).ok()??;
        Some(KeyHex::shown(k, show))
    }

    fn last_dup(&mut self, key: &[u8]) -> Option<KeyHex> {
        self.get_at(engine::op::SET_KEY, Some(key)).ok()??;
        let (_, v) = self.get_at(engine::op::LAST_DUP, None).ok()??;
        Some(KeyHex::new(v))
    }
}

/// Writes the row `(k, v)` of table `T` with libmdbx's put `flags` (the write form named
/// `op`) into `target`, with every effect. `indexed`: whether `T` has indexes (a constant
/// `false` for most tables, so the plan folds away); `row` is the value `v` encodes when the
/// caller holds it (a typed write), so that the indexes need not decode `v`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn put<T: Table>(
    target: &mut impl Target,
    shared: &Shared,
    indexed: bool,
    (k, v): (&[u8], &[u8]),
    row: Option<&T::Value>,
    flags: u32,
    op: &'static str,
    landing: &mut Landing,
) -> Result<()> {
    if indexed || T::HISTORY {
        let how = (row, flags, op);
        return put_planned::<T>(target, shared, indexed, (k, v), how, None, landing);
    }
    match target.put_row(k, v, flags) {
        Ok(()) => {
            *landing = Landing::Written;
            applied::<T>(
                target,
                shared,
                Some(Change::Put { key: k, value: v }),
                &Changes::default(),
                None,
            )
        }
        Err(code) => {
            *landing = Landing::Refused;
            Err(refused::<T>(
                target,
                shared,
                code,
                flags,
                op,
                k,
                Some(v),
                v.len(),
            ))
        }
    }
}

/// [`put`] into a table with indexes (`indexed`) or declared `history`: planned first.
/// `later`: for an unwind's write-back ([`put_reverting`]), where the entries of unique indexes
/// go, unchecked, instead of being checked and written now.
#[inline]
fn put_planned<T: Table>(
    target: &mut impl Target,
    shared: &Shared,
    indexed: bool,
    (k, v): (&[u8], &[u8]),
    (row, flags, op): (Option<&T::Value>, u32, &'static str),
    later: Option<&mut index::Deferred>,
    landing: &mut Landing,
) -> Result<()> {
    let plan = match (indexed, later) {
        (false, _) => Changes::default(),
        (true, None) => index::prepare::<T>(target, shared, target.dbi(), k, v, row, flags, op)?,
        (true, Some(later)) => {
            let dbi = target.dbi();
            let mut plan =
                index::prepare_unchecked::<T>(target, shared, dbi, k, v, row, flags, op)?;
            plan.defer_unique(later);
            plan
        }
    };
    let recorded = match T::HISTORY {
        true if T::FLAGS.dupsort => {
            history::plan_dup::<T>(target, shared, target.dbi(), (k, v), op)?
        }
        true => history::plan::<T>(target, shared, target.dbi(), k, Some(flags), op)?,
        false => None,
    };
    match target.put_row(k, v, flags) {
        Ok(()) => {
            *landing = Landing::Written;
            applied::<T>(
                target,
                shared,
                Some(Change::Put { key: k, value: v }),
                &plan,
                recorded.as_ref().map(|p| (std::slice::from_ref(p), k)),
            )
        }
        Err(code) => {
            *landing = Landing::Refused;
            Err(refused::<T>(
                target,
                shared,
                code,
                flags,
                op,
                k,
                Some(v),
                v.len(),
            ))
        }
    }
}

/// An unwind's write-back of the row `(k, v)` of the indexed table `T` (an upsert, with
/// every effect, as [`put`]), except that the entries it adds to unique indexes go to `later`:
/// rows that swapped unique keys within the versions undone each hold the other's key until
/// the other is written back. [`reverted`] adds them once every row is back.
pub(crate) fn put_reverting<T: Table>(
    target: &mut impl Target,
    shared: &Shared,
    (k, v): (&[u8], &[u8]),
    later: &mut index::Deferred,
    landing: &mut Landing,
) -> Result<()> {
    let how = (None, engine::put::UPSERT, "unwind");
    put_planned::<T>(target, shared, true, (k, v), how, Some(later), landing)
}

/// The end of an unwind of the indexed table `T`: the unique index entries its write-backs
/// left for later ([`put_reverting`]) checked (a key another row holds is `UniqueViolation`)
/// and added, each recorded for the watchers.
pub(crate) fn reverted<T: Table>(
    store: &mut impl Store,
    shared: &Shared,
    later: &index::Deferred,
) -> Result<()> {
    let watch = shared.watch();
    later.apply::<T>(store, shared, |index, key, primary| {
        watch.put_in(index, false, key, primary);
    })
}

/// Writes the value `v` of the unit of a `dupsort` table `T` (no indexes) that `upsert_dup`
/// emptied, its change planned by the caller (`planned`: [`history::plan_unit`], `None` for a
/// table without history or while an unwind writes rows back), with every effect. The change
/// is recorded even when the put is refused: the deletes before it were made.
#[inline(always)]
pub(crate) fn put_unit<T: Table>(
    target: &mut impl Target,
    shared: &Shared,
    (k, v): (&[u8], &[u8]),
    planned: Option<&Planned>,
    op: &'static str,
    landing: &mut Landing,
) -> Result<()> {
    let flags = engine::put::UPSERT;
    let recorded = planned.map(|p| (std::slice::from_ref(p), k));
    match target.put_row(k, v, flags) {
        Ok(()) => {
            *landing = Landing::Written;
            let change = Some(Change::Put { key: k, value: v });
            applied::<T>(target, shared, change, &Changes::default(), recorded)
        }
        Err(code) => {
            *landing = Landing::Refused;
            if let Some(planned) = planned {
                history::record(target, shared, planned, k)?;
            }
            Err(refused::<T>(
                target,
                shared,
                code,
                flags,
                op,
                k,
                Some(v),
                v.len(),
            ))
        }
    }
}

/// Writes under `k` of table `T` (never an indexed nor a dupsort table) a value of `len` bytes
/// that `fill` writes into the page (`MDBX_RESERVE`), with every effect.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_reserve<T: Table, R>(
    target: &mut InTxn<'_>,
    shared: &Shared,
    k: &[u8],
    len: usize,
    flags: u32,
    op: &'static str,
    fill: impl FnOnce(&mut Room<'_>) -> R,
) -> Result<R> {
    match target.raw.put_reserve(target.dbi, k, len, flags, fill) {
        Ok(filled) => {
            // The value is in the page only now: read back for a watcher of values.
            let written = match shared.watch().wants_values() {
                true => target
                    .raw
                    .get(target.dbi, k)
                    .ok()
                    .flatten()
                    .map(<[u8]>::to_vec),
                false => None,
            };
            let value = written.as_deref().unwrap_or_default();
            let change = Change::Put { key: k, value };
            applied::<T>(target, shared, Some(change), &Changes::default(), None)?;
            Ok(filled)
        }
        Err(code) => Err(refused::<T>(target, shared, code, flags, op, k, None, len)),
    }
}

/// [`put_reserve`] for a codec that writes a value of a length it knew beforehand: when it
/// then fails to write it, the half-written entry is deleted again, so no zeroed value can be
/// committed (the key then holds nothing in this transaction, and the error says so).
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_encoded_in_place<T: Table>(
    target: &mut InTxn<'_>,
    shared: &Shared,
    k: &[u8],
    len: usize,
    flags: u32,
    op: &'static str,
    fill: impl FnOnce(&mut [u8]) -> std::result::Result<(), crate::codec::EncodeError>,
) -> Result<()> {
    let filled = put_reserve::<T, _>(target, shared, k, len, flags, op, |room| {
        fill(room.zeroed())
    })?;
    let Err(source) = filled else {
        return Ok(());
    };
    let undo = delete::<T>(target, shared, false, k, None, op);
    Err(Error::Encode {
        table: T::NAME,
        key: KeyHex::of::<T>(k),
        source: crate::codec::EncodeError::new(format!(
            "{} (while writing into the room reserved in the page: {})",
            source.message(),
            match undo {
                Ok(_) => "the entry was deleted, so the key now holds no value in this transaction",
                Err(_) => "the half-written entry could not be deleted: abort the transaction",
            }
        )),
    })
}

/// Deletes the row under `k` of table `T` in the transaction (of a dupsort table: its value
/// `dup`, or every value when `None`), with every effect. Returns whether there was one.
#[inline(always)]
pub(crate) fn delete<T: Table>(
    target: &mut InTxn<'_>,
    shared: &Shared,
    indexed: bool,
    k: &[u8],
    dup: Option<&[u8]>,
    op: &'static str,
) -> Result<bool> {
    if T::HISTORY && T::FLAGS.dupsort {
        return delete_dup_recorded::<T>(target, shared, k, dup, op);
    }
    if indexed || T::HISTORY {
        return delete_planned::<T>(target, shared, indexed, k, op);
    }
    let fail = |code| match dup {
        Some(v) => shared.fail(code, At::of::<T>(op).entry(k, v.len())),
        None => shared.fail(code, At::of::<T>(op).key(k)),
    };
    let found = target.raw.del(target.dbi, k, dup).map_err(fail)?;
    if found {
        applied::<T>(
            target,
            shared,
            Some(Change::Delete { key: k, dup }),
            &Changes::default(),
            None,
        )?;
    }
    Ok(found)
}

/// [`delete`] of the value `dup` of `k` (every value when `None`) of a `dupsort` table declared
/// `history` (never indexed): the change of each unit it empties or shrinks planned first.
#[inline(never)]
fn delete_dup_recorded<T: Table>(
    target: &mut InTxn<'_>,
    shared: &Shared,
    k: &[u8],
    dup: Option<&[u8]>,
    op: &'static str,
) -> Result<bool> {
    let fail = |code| shared.fail(code, At::of::<T>(op).key(k));
    let dbi = target.dbi;
    let recorded: Plans = match dup {
        Some(v) => {
            let held = target.store_get_dup_ge(dbi, k, v).map_err(fail)?;
            if held.as_deref() != Some(v) {
                return Ok(false);
            }
            history::plan_dup::<T>(target, shared, dbi, (k, v), op)?.into()
        }
        None => history::plan_dup_key::<T>(target, shared, dbi, k, op)?,
    };
    let found = target.raw.del(dbi, k, dup).map_err(fail)?;
    if found {
        applied::<T>(
            target,
            shared,
            Some(Change::Delete { key: k, dup }),
            &Changes::default(),
            Some((recorded.as_slice(), k)),
        )?;
    }
    Ok(found)
}

/// [`delete`] of a row of a table with indexes (`indexed`) or declared `history` (never
/// dupsort): its old row read and its index entries and history worked out first.
#[inline]
fn delete_planned<T: Table>(
    target: &mut InTxn<'_>,
    shared: &Shared,
    indexed: bool,
    k: &[u8],
    op: &'static str,
) -> Result<bool> {
    let mut before = None;
    let old = target
        .store_get_with(target.dbi, k, |old| {
            if T::HISTORY {
                before = Some(old.to_vec());
            }
            indexed.then(|| decode_value::<T>(k, old))
        })
        .map_err(|code| shared.fail(code, At::of::<T>(op).key(k)))?;
    let Some(old) = old else {
        return Ok(false);
    };
    let plan = match old {
        Some(old) => index::removal::<T>(shared, &crate::stored::decode_key::<T>(k)?, &old?)?,
        None => Changes::default(),
    };
    let recorded = match before {
        Some(before) => history::plan_removal::<T>(target, shared, k, &before, op)?,
        None => None,
    };
    target
        .raw
        .del(target.dbi, k, None)
        .map_err(|code| shared.fail(code, At::of::<T>(op).key(k)))?;
    applied::<T>(
        target,
        shared,
        Some(Change::Delete { key: k, dup: None }),
        &plan,
        recorded.as_ref().map(|p| (std::slice::from_ref(p), k)),
    )?;
    Ok(true)
}

/// The plan of deleting the row under `cursor` of table `T`: its index entries (when
/// `indexed`). Also what a delete of several rows computes for every row before it deletes
/// the first, so that a row that does not decode or a key function that panics stops it
/// before it changed anything.
#[inline(always)]
pub(crate) fn plan_delete_current<T: Table>(
    cursor: &mut RawCursorMut<'_>,
    shared: &Shared,
    indexed: bool,
    op: &'static str,
) -> Result<Changes> {
    if !indexed {
        return Ok(Changes::default());
    }
    plan_delete_indexed::<T>(cursor, shared, op)
}

/// [`plan_delete_current`] in a table with indexes.
#[inline(never)]
fn plan_delete_indexed<T: Table>(
    cursor: &mut RawCursorMut<'_>,
    shared: &Shared,
    op: &'static str,
) -> Result<Changes> {
    cursor
        .get_with(engine::op::GET_CURRENT, None, None, |k, v| {
            plan_delete_bytes::<T>(shared, k, v)
        })
        .map_err(|code| crate::stored::cursor_error::<T>(op, code))?
        .unwrap_or_else(|| Ok(Changes::default()))
}

/// The plan of deleting the stored row `(k, v)` of the indexed table `T`, for a delete of
/// several rows that plans every row before it deletes the first ([`plan_delete_current`]).
pub(crate) fn plan_delete_bytes<T: Table>(shared: &Shared, k: &[u8], v: &[u8]) -> Result<Changes> {
    index::cursor_removal::<T>(shared, k, v)
}

/// [`plan_delete_bytes`] of a decoded row.
pub(crate) fn plan_delete_row<T: Table>(
    shared: &Shared,
    key: &T::Key,
    row: &T::Value,
) -> Result<Changes> {
    index::removal::<T>(shared, key, row)
}

/// Whether table `T` of the open database has indexes, for the write forms that know the
/// table but not the schema (the write cursor, the appender). A constant `false` for a table
/// declared without `indexed`.
#[inline(always)]
pub(crate) fn indexed<T: Table>(shared: &Shared) -> bool {
    index::cursor_indexed::<T>(shared)
}

/// Deletes the row under `cursor` of table `T` (with `flags`: `CURRENT` its value, `ALLDUPS`
/// every value of its key), with every effect. `key` names the row in an error, when known.
/// Always in line: out of line in `retain_bytes`'s walk it cost 45 instructions a deleted row.
#[inline(always)]
pub(crate) fn delete_current<T: Table>(
    cursor: &mut RawCursorMut<'_>,
    shared: &Shared,
    indexed: bool,
    flags: u32,
    (op, key): (&'static str, Option<&[u8]>),
    landing: &mut Landing,
) -> Result<()> {
    delete_current_with::<T>(cursor, shared, indexed, flags, (op, key), landing, true)
}

/// [`delete_current`] of one value of a unit of a `dupsort` table whose change the caller
/// plans and records itself (`upsert_dup`: [`history::plan_unit`], then [`put_unit`]): every
/// other effect applied.
#[inline(always)]
pub(crate) fn delete_current_in_unit<T: Table>(
    cursor: &mut RawCursorMut<'_>,
    shared: &Shared,
    (op, key): (&'static str, Option<&[u8]>),
    landing: &mut Landing,
) -> Result<()> {
    let flags = engine::del::CURRENT;
    delete_current_with::<T>(cursor, shared, false, flags, (op, key), landing, false)
}

/// [`delete_current`], its history planned when `history` (and `T` is declared `history`).
#[inline(always)]
fn delete_current_with<T: Table>(
    cursor: &mut RawCursorMut<'_>,
    shared: &Shared,
    indexed: bool,
    flags: u32,
    (op, key): (&'static str, Option<&[u8]>),
    landing: &mut Landing,
    history: bool,
) -> Result<()> {
    let plan = plan_delete_current::<T>(cursor, shared, indexed, op)?;
    let recorded = match T::HISTORY && history {
        true => plan_current_history::<T>(cursor, shared, flags, op)?,
        false => None,
    };
    let watched = watched_entry(cursor, shared, flags);
    if let Err(code) = cursor.del(flags) {
        *landing = Landing::Refused;
        let at = At::of::<T>(op);
        return Err(shared.fail(code, key.map_or(at, |k| at.key(k))));
    }
    *landing = Landing::Deleted;
    let change = watched.as_ref().map(|(key, dup)| Change::Delete {
        key,
        dup: dup.as_deref(),
    });
    let recorded = recorded.as_ref().map(|(p, k)| (p.as_slice(), k.as_slice()));
    applied::<T>(cursor, shared, change, &plan, recorded)
}

/// The history of deleting the row under `cursor` of table `T` (declared `history`) with
/// `flags`: the changes planned (of a `dupsort` table, of the value's unit, or with `ALLDUPS`
/// of every unit of the key), with the row's key.
#[inline(never)]
fn plan_current_history<T: Table>(
    cursor: &mut RawCursorMut<'_>,
    shared: &Shared,
    flags: u32,
    op: &'static str,
) -> Result<Option<(Plans, Vec<u8>)>> {
    if shared.history().replaying() {
        return Ok(None);
    }
    let row = cursor
        .get_with(engine::op::GET_CURRENT, None, None, |k, v| {
            (k.to_vec(), v.to_vec())
        })
        .map_err(|code| crate::stored::cursor_error::<T>(op, code))?;
    let Some((k, v)) = row else {
        return Ok(None);
    };
    let planned = match T::FLAGS.dupsort {
        true if flags == engine::del::ALLDUPS => {
            let dbi = cursor.dbi();
            history::plan_dup_key::<T>(cursor, shared, dbi, &k, op)?
        }
        true => {
            let dbi = cursor.dbi();
            history::plan_dup::<T>(cursor, shared, dbi, (&k, &v), op)?.into()
        }
        false => history::plan_removal::<T>(cursor, shared, &k, &v, op)?.into(),
    };
    Ok(Some((planned, k)))
}

/// The entry under the cursor, copied, when an effect needs it ([`sees_deleted_rows`]):
/// what a delete with `flags` is about to remove (the value only for one value, not for every
/// value of the key). `None`, after one relaxed load, otherwise.
#[inline(always)]
fn watched_entry(
    cursor: &mut RawCursorMut<'_>,
    shared: &Shared,
    flags: u32,
) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    if sees_deleted_rows(shared) {
        copy_entry(cursor, flags)
    } else {
        None
    }
}

/// [`watched_entry`]'s copy, out of line: a walk that deletes with no watcher pays one load.
#[inline(never)]
fn copy_entry(cursor: &mut RawCursorMut<'_>, flags: u32) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let one = flags != engine::del::ALLDUPS;
    cursor
        .get_with(engine::op::GET_CURRENT, None, None, |k, v| {
            (k.to_vec(), one.then(|| v.to_vec()))
        })
        .ok()
        .flatten()
}

/// Empties table `T` (its sequence stays) and, when `indexed`, every index on it, with every
/// effect.
pub(crate) fn clear<T: Table>(
    raw: &mut RawTxn,
    shared: &Shared,
    dbi: Dbi,
    indexed: bool,
) -> Result<()> {
    if T::HISTORY {
        record_clear::<T>(raw, shared, dbi)?;
    }
    raw.drop_table(dbi, false)
        .map_err(|code| shared.fail(code, At::of::<T>("clear")))?;
    cleared::<T>(raw, shared, indexed)
}

/// Records the delete of every row of table `T` (declared `history`), which a clear is about
/// to empty: the history holds each row as the value before the version.
#[inline(never)]
fn record_clear<T: Table>(raw: &mut RawTxn, shared: &Shared, dbi: Dbi) -> Result<()> {
    let fail = |code| shared.fail(code, At::of::<T>("clear"));
    let mut cursor = raw.write_cursor(dbi).map_err(fail)?;
    let mut at = cursor
        .get(engine::op::FIRST)
        .map_err(fail)?
        .map(|(k, v)| (k.to_vec(), v.to_vec()));
    // A `dupsort` key's units are planned together, then the walk goes to the next key.
    let next = match T::FLAGS.dupsort {
        true => engine::op::NEXT_NODUP,
        false => engine::op::NEXT,
    };
    while let Some((k, v)) = at {
        let planned = match T::FLAGS.dupsort {
            true => history::plan_dup_key::<T>(&cursor, shared, dbi, &k, "clear")?,
            false => history::plan_removal::<T>(&cursor, shared, &k, &v, "clear")?.into(),
        };
        for planned in planned.as_slice() {
            history::record(&mut cursor, shared, planned, &k)?;
        }
        at = cursor
            .get(next)
            .map_err(fail)?
            .map(|(k, v)| (k.to_vec(), v.to_vec()));
    }
    Ok(())
}
