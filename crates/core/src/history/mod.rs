//! Tables declared `history` (issue 36; docs/design.md, "History and unwind"): every change of
//! such a table's rows is recorded, with the version of the write transaction that made it and
//! the value before it, in the table's history (`#[derive(History)]`), one plain table of the
//! schema with three key spaces:
//!
//! - `00 ‖ version (u64 BE) ‖ stored key` → the value before the version (`00`: absent;
//!   `01 ‖ stored value`): the changes, in version order;
//! - `01 ‖ stored key as an escaped byte-string part ‖ version (u64 BE)` → empty: the history
//!   index, in (key, version) order (the escaped form keeps the keys' byte order);
//! - `02` → the horizon (the first version whose changes are kept), `03` → the last version
//!   recorded, `04` → empty when the history was added to a table that already held rows: its
//!   horizon then bounds the reads of every key, since nothing is known of the rows before it
//!   (the horizon is [`PENDING`] until the first version is written).
//!
//! A `dupsort` table's history records each (key, subkey) — without a subkey, each (key,
//! value) — its *unit*: where a plain table's history has the stored key, it has the unit's
//! key ([`unit_key`]: the stored key escaped, then the subkey's encoding), and a change holds
//! the unit's values before it (none, one, or [`MANY`]).
//!
//! The write pipeline plans a change of a history table ([`plan`]: the version checked, the
//! value before read) and records it after the row is written ([`record`]); the reads as of a
//! version and the unwind are here too.

mod check;
mod read;

pub use check::HistoryCheck;
pub(crate) use check::{Rows, check};
pub(crate) use read::{
    before, changed_after, changes_at, check_horizon, check_unwind, key_at, unit_at, unit_at_each,
    unit_changes_at, value_at, versions,
};

use crate::codec::{KeyBuf, decode_bytes_part, encode_bytes_part};
use crate::engine::{self, CursorNav, Dbi, LentTxn, RawCursorMut, RawTxn, op};
use crate::error::{At, Error, Result};
use crate::index::Store;
use crate::state::Shared;
use crate::table::{Table, TableInfo};

/// The first byte of a change's key.
const CHANGE: u8 = 0;
/// The first byte of a history index entry's key.
const INDEX: u8 = 1;
/// The key of the horizon.
const HORIZON: [u8; 1] = [2];
/// The key of the last version recorded.
const LAST: [u8; 1] = [3];
/// Present (empty) in a history added to a populated table: its horizon applies to every key.
const WHOLE: [u8; 1] = [4];
/// The horizon of a history added to a populated table before any version was written to it:
/// no read as of a version can be answered yet, and the first version written becomes the
/// horizon.
const PENDING: u64 = u64::MAX;
/// A change's value when the key held no value before it.
const ABSENT: u8 = 0;
/// The tag before the stored value a key held before a change.
const PRESENT: u8 = 1;
/// The tag before the stored values a unit of a `dupsort` table (a key's values of one subkey)
/// held before a change, when it held more than one: each as its length (u32 BE), then its
/// bytes.
const MANY: u8 = 2;

/// A change read back, as stored: the key and the value it held before (`None`: none).
pub(crate) type StoredChange = (Vec<u8>, Option<Vec<u8>>);

/// A change of a `dupsort` table's unit read back, as stored: the unit's history key
/// ([`unit_key`]) and the values it held before.
pub(crate) type StoredUnitChange = (Vec<u8>, Vec<Vec<u8>>);

/// The key of the change of `key` at `version`.
fn change_key(version: u64, key: &[u8]) -> KeyBuf {
    let mut out = KeyBuf::new();
    out.push(CHANGE);
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(key);
    out
}

/// The first key of the changes of `version`.
fn changes_from(version: u64) -> [u8; 9] {
    let mut out = [CHANGE; 9];
    out[1..].copy_from_slice(&version.to_be_bytes());
    out
}

/// The version and stored key of a change's key; `None` for a key of another space.
fn parse_change(key: &[u8]) -> Option<(u64, &[u8])> {
    match key {
        [CHANGE, rest @ ..] if rest.len() >= 8 => {
            let (version, key) = rest.split_at(8);
            Some((u64::from_be_bytes(version.try_into().ok()?), key))
        }
        _ => None,
    }
}

/// Every history index key of `key` begins with this.
pub(crate) fn index_prefix(key: &[u8]) -> KeyBuf {
    let mut out = KeyBuf::new();
    out.push(INDEX);
    encode_bytes_part(key, &mut out, false);
    out
}

/// Where the history index entries of every unit of the stored key `k` of a `dupsort` table
/// begin: [`index_prefix`] of its [`unit_key`]s without their unit, so the prefix of them all.
pub(crate) fn units_start(k: &[u8]) -> KeyBuf {
    let full = index_prefix(&unit_key(k, &[]));
    // Without the escaped part's terminator, which the longer unit keys do not have there.
    let full = full.as_slice();
    let mut start = KeyBuf::new();
    start.extend_from_slice(&full[..full.len() - 2]);
    start
}

/// The history index key of `key` at `version`.
fn index_key(key: &[u8], version: u64) -> KeyBuf {
    let mut out = index_prefix(key);
    out.extend_from_slice(&version.to_be_bytes());
    out
}

/// The stored key and version of a history index key; `None` for a key of another space.
fn parse_index(key: &[u8]) -> Option<(Vec<u8>, u64)> {
    let [INDEX, rest @ ..] = key else {
        return None;
    };
    let mut input = rest;
    let stored = decode_bytes_part(&mut input, false, "history index").ok()?;
    let version = u64::from_be_bytes(input.try_into().ok()?);
    Some((stored, version))
}

/// The value a change records: the stored value before it, or none.
pub(crate) fn before_of(value: &[u8]) -> Option<Option<&[u8]>> {
    match value {
        [ABSENT] => Some(None),
        [PRESENT, rest @ ..] => Some(Some(rest)),
        _ => None,
    }
}

/// The values a change of a `dupsort` table's unit records: the stored values it held before
/// (none, one, or [`MANY`]), in their order.
pub(crate) fn befores_of(value: &[u8]) -> Option<Vec<&[u8]>> {
    match value {
        [MANY, rest @ ..] => {
            let mut out = Vec::new();
            let mut rest = rest;
            while !rest.is_empty() {
                let (len, tail) = rest.split_first_chunk::<4>()?;
                let len = u32::from_be_bytes(*len) as usize;
                if tail.len() < len {
                    return None;
                }
                let (one, tail) = tail.split_at(len);
                out.push(one);
                rest = tail;
            }
            Some(out)
        }
        _ => Some(before_of(value)?.into_iter().collect()),
    }
}

/// A change's value for a unit of a `dupsort` table that held `values` before it: as
/// [`change_value`] for none or one, [`MANY`] for more; read back by [`befores_of`].
fn dup_change_value(values: &[Vec<u8>]) -> Vec<u8> {
    match values {
        [] => change_value(None),
        [one] => change_value(Some(one)),
        many => {
            let len = many.iter().map(|v| 4 + v.len()).sum::<usize>();
            let mut value = Vec::with_capacity(1 + len);
            value.push(MANY);
            for one in many {
                // A stored value fits libmdbx's value size, well within 32 bits.
                value.extend_from_slice(&(one.len() as u32).to_be_bytes());
                value.extend_from_slice(one);
            }
            value
        }
    }
}

/// The history key of the unit `sub` (a subkey's encoding, or a whole value without a subkey)
/// of the stored key `k` of a `dupsort` table: `k` as an escaped, terminated byte string, then
/// `sub`. It keeps the byte order of (key, subkey), and the changes and index entries of a
/// dupsort table's history use it where a plain table's use the stored key.
pub(crate) fn unit_key(k: &[u8], sub: &[u8]) -> Vec<u8> {
    unit_key_buf(k, sub).as_slice().to_vec()
}

/// [`unit_key`] in a key buffer (a read's, without an allocation for most keys).
pub(crate) fn unit_key_buf(k: &[u8], sub: &[u8]) -> KeyBuf {
    let mut out = KeyBuf::new();
    encode_bytes_part(k, &mut out, false);
    out.extend_from_slice(sub);
    out
}

/// The stored key and the unit of a [`unit_key`] in the history of table `source`.
pub(crate) fn split_unit<'u>(source: &'static str, unit: &'u [u8]) -> Result<(Vec<u8>, &'u [u8])> {
    let mut input = unit;
    let k = decode_bytes_part(&mut input, false, "history unit")
        .map_err(|_| damaged(source, "a key and subkey", unit))?;
    Ok((k, input))
}

/// The unit of the stored value `v` of `dupsort` table `T`: its front [`Table::DUP_UNIT`]
/// bytes.
pub(crate) fn unit_of<T: Table>(k: &[u8], v: &[u8]) -> Result<usize> {
    (T::DUP_UNIT)(v).ok_or_else(|| Error::Decode {
        table: T::NAME,
        part: crate::error::Part::Value,
        key: crate::error::KeyHex::of::<T>(k),
        source: crate::codec::DecodeError::new(
            "the value's subkey does not decode: its history cannot record it".to_string(),
        ),
    })
}

/// The stored values of `k` in the unit `sub` of `dupsort` table `T` (table `dbi`) now, in
/// their order: one `mdbx_get_equal_or_great` each, and one more to find the end.
pub(crate) fn unit_values<T: Table>(
    store: &impl Store,
    dbi: Dbi,
    k: &[u8],
    sub: &[u8],
) -> std::result::Result<Vec<Vec<u8>>, engine::Code> {
    let mut out = Vec::new();
    let mut from = sub.to_vec();
    while let Some(v) = store.store_get_dup_ge(dbi, k, &from)? {
        if !v.starts_with(sub) || (T::DUP_UNIT)(&v) != Some(sub.len()) {
            break;
        }
        // The next value is at least this one followed by a zero byte.
        from.clear();
        from.extend_from_slice(&v);
        from.push(0);
        let whole = v.len() == sub.len();
        out.push(v);
        if whole {
            // Without a subkey a unit is one value.
            break;
        }
    }
    Ok(out)
}

/// [`unit_values`] through a cursor on the table: one `MDBX_GET_BOTH_RANGE`, then
/// `MDBX_NEXT_DUP` while the values are the unit's (where [`unit_values`] searches the tree
/// from its root for each, and once more for the end). Leaves the cursor anywhere.
pub(crate) fn unit_values_at<T: Table>(
    cursor: &mut impl CursorNav,
    k: &[u8],
    sub: &[u8],
) -> std::result::Result<Vec<Vec<u8>>, engine::Code> {
    let mut out = Vec::new();
    let walked = unit_values_each::<T, std::convert::Infallible>(cursor, k, sub, |v| {
        out.push(v.to_vec());
        Ok(())
    })?;
    match walked {
        Ok(()) => Ok(out),
    }
}

/// [`unit_values_at`] handing each value to `each` in the page, without a copy: the outer
/// error is libmdbx's, the inner one the first `each` returned (which ends the walk).
pub(crate) fn unit_values_each<T: Table, E>(
    cursor: &mut impl CursorNav,
    k: &[u8],
    sub: &[u8],
    mut each: impl FnMut(&[u8]) -> std::result::Result<(), E>,
) -> std::result::Result<std::result::Result<(), E>, engine::Code> {
    let (mut op, mut key, mut value) = (op::GET_BOTH_RANGE, Some(k), Some(sub));
    loop {
        let found = cursor.get_with(op, key, value, |_, v| {
            let of_unit = v.starts_with(sub) && (T::DUP_UNIT)(v) == Some(sub.len());
            // Without a subkey a unit is one value.
            of_unit.then(|| (each(v), v.len() == sub.len()))
        });
        match found {
            Ok(Some(Some((Err(e), _)))) => return Ok(Err(e)),
            Ok(Some(Some((Ok(()), whole)))) if !whole => {}
            Ok(_) => break,
            Err(code) if code == engine::Code::ENODATA => break,
            Err(code) => return Err(code),
        }
        (op, key, value) = (op::NEXT_DUP, None, None);
    }
    Ok(Ok(()))
}

/// A history entry's value with the value before its change converted by `convert` (given the
/// change's version, the stored key and the stored value before): `Some(01 ‖ convert(..))` for a
/// change that
/// records a value before; `None` for every other entry (a change of a key that held no value,
/// an index entry, the horizon, the last version, the mark), which a conversion leaves as it
/// is.
pub(crate) fn converted_before(
    key: &[u8],
    value: &[u8],
    convert: impl FnOnce(u64, &[u8], &[u8]) -> Result<Vec<u8>>,
) -> Result<Option<Vec<u8>>> {
    let Some((version, stored)) = parse_change(key) else {
        return Ok(None);
    };
    let Some(Some(before)) = before_of(value) else {
        return Ok(None);
    };
    let converted = convert(version, stored, before)?;
    Ok(Some(change_value(Some(&converted))))
}

/// A change's value: the stored value before it (`PRESENT ‖ value`), or none (`ABSENT`); read
/// back by [`before_of`].
fn change_value(before: Option<&[u8]>) -> Vec<u8> {
    match before {
        Some(before) => {
            let mut value = Vec::with_capacity(1 + before.len());
            value.push(PRESENT);
            value.extend_from_slice(before);
            value
        }
        None => vec![ABSENT],
    }
}

/// A version stored under [`HORIZON`] or [`LAST`].
fn version_of(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

/// What the reads of a history need of whoever reads it: a libmdbx failure turned into an
/// error, and cursors (the open database's cache, or new ones).
pub(crate) trait Cx {
    /// The error of `code` from the operation `at`.
    fn fail(&self, code: engine::Code, at: At<'_>) -> Error;
    /// A cursor on `dbi` in `raw`.
    fn cursor<'t>(
        &'t self,
        raw: &'t RawTxn,
        dbi: Dbi,
    ) -> std::result::Result<engine::RawCursor<'t>, engine::Code>;
    /// Whether a history read may be of a history added to a populated table (whose horizon
    /// bounds every read): `false` spares each read the lookup.
    fn may_be_whole(&self) -> bool;
}

impl Cx for Shared {
    fn fail(&self, code: engine::Code, at: At<'_>) -> Error {
        Shared::fail(self, code, at)
    }

    #[inline]
    fn cursor<'t>(
        &'t self,
        raw: &'t RawTxn,
        dbi: Dbi,
    ) -> std::result::Result<engine::RawCursor<'t>, engine::Code> {
        raw.cursor_cached(dbi, self.cursors())
    }

    #[inline]
    fn may_be_whole(&self) -> bool {
        self.history().any_whole()
    }
}

/// The entries that start the history of a table that already holds rows (the startup step
/// writes them into the empty history): its horizon, pending until the first version written,
/// and the mark that the horizon bounds the reads of every key.
pub(crate) fn started_on_rows() -> [(&'static [u8], &'static [u8]); 2] {
    const PENDING_BYTES: [u8; 8] = PENDING.to_be_bytes();
    [(&HORIZON, &PENDING_BYTES), (&WHOLE, &[])]
}

/// Whether `get(key)` finds the history added to a populated table ([`started_on_rows`]).
pub(crate) fn is_whole<E>(
    get: impl FnOnce(&[u8]) -> std::result::Result<bool, E>,
) -> std::result::Result<bool, E> {
    get(&WHOLE)
}

/// The handle of the history of table `source` in the open database: the schema lists it
/// (`#[derive(Schema)]` asserts so at compile time for every table declared `history`).
pub(crate) fn dbi_of(shared: &Shared, source: &'static str) -> Result<Dbi> {
    history_id(shared.tables(), source)
        .map(|id| shared.dbis()[id])
        .ok_or_else(|| Error::InvalidTable {
            table: source.to_string(),
            rust_name: "",
            problem: "it is declared `history` but the schema lists no history of it: list its \
                      `#[derive(History)]` struct in the schema"
                .to_string(),
        })
}

/// The position of the history of table `source` among `tables` (a constant for a schema's
/// tables: `Of`).
pub(crate) const fn history_id(tables: &[TableInfo], source: &str) -> Option<usize> {
    let mut i = 0;
    while i < tables.len() {
        if let Some(of) = tables[i].history_of
            && crate::__private::str_eq(of, source)
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The handle of the history of table `T` in a database of schema `S`: its position found at
/// compile time.
pub(crate) struct Of<S, T>(std::marker::PhantomData<(S, T)>);

impl<S: crate::table::Schema, T: Table> Of<S, T> {
    const ID: Option<usize> = history_id(S::TABLES, T::NAME);

    /// The history's handle.
    #[inline]
    pub(crate) fn dbi(shared: &Shared) -> Result<Dbi> {
        match Self::ID {
            Some(id) => Ok(shared.dbis()[id]),
            None => dbi_of(shared, T::NAME),
        }
    }
}

/// The damage of a history entry that does not have its format.
fn damaged(history: &'static str, what: &str, key: &[u8]) -> Error {
    Error::Decode {
        table: history,
        part: crate::error::Part::Value,
        key: crate::error::KeyHex::new(key),
        source: crate::codec::DecodeError::new(format!(
            "{what} does not have the format of a history entry"
        )),
    }
}

/// A change of a history table, planned before the row is written: where it is recorded, at
/// which version, and the value before it.
#[derive(Clone)]
pub(crate) struct Planned {
    source: &'static str,
    dbi: Dbi,
    version: u64,
    /// The change's value: what the row (or the unit) held before it ([`change_value`],
    /// [`dup_change_value`]).
    change: Vec<u8>,
    /// Of a `dupsort` table: the history key of the unit changed ([`unit_key`]); `None`: the
    /// row's stored key.
    unit: Option<Vec<u8>>,
    raise_last: bool,
    /// The last version was checked: once the change is recorded, the transaction knows it
    /// (and that it changed this history), so its next changes of the history skip the check.
    note_last: bool,
    /// The horizon is [`PENDING`]: this first version written becomes it.
    settle_horizon: bool,
}

/// What a write plans in a history: the change of one row (or unit), or, for a delete of
/// every value of a `dupsort` key, one change a unit; none while an unwind writes rows back.
/// One change needs no allocation.
pub(crate) enum Plans {
    /// One change.
    One(Planned),
    /// Any number.
    Many(Vec<Planned>),
}

impl Plans {
    /// The changes planned.
    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[Planned] {
        match self {
            Plans::One(planned) => std::slice::from_ref(planned),
            Plans::Many(planned) => planned,
        }
    }
}

impl From<Option<Planned>> for Plans {
    #[inline(always)]
    fn from(planned: Option<Planned>) -> Self {
        match planned {
            Some(planned) => Plans::One(planned),
            None => Plans::Many(Vec::new()),
        }
    }
}

/// Plans a change of the row under `k` of table `T` (declared `history`), stored in `dbi`,
/// written with libmdbx's put `flags` (`None` for a delete): the transaction's version checked
/// against the last one recorded, and the value before the change read. `Ok(None)` while an
/// unwind writes rows back. Nothing is written.
#[inline(never)]
pub(crate) fn plan<T: Table>(
    store: &impl Store,
    shared: &Shared,
    dbi: Dbi,
    k: &[u8],
    flags: Option<u32>,
    op: &'static str,
) -> Result<Option<Planned>> {
    let Some(planned) = versioned::<T>(store, shared, k, op)? else {
        return Ok(None);
    };
    // An append's key is above every key of the table, so it held nothing.
    let change = match flags {
        Some(flags) if flags & engine::put::APPEND != 0 => None,
        _ => store
            .store_get_with(dbi, k, |before| change_value(Some(before)))
            .map_err(|code| shared.fail(code, At::of::<T>(op).key(k)))?,
    };
    let change = change.unwrap_or_else(|| change_value(None));
    Ok(Some(Planned { change, ..planned }))
}

/// Plans the delete of the stored row `(k, v)` (under a cursor, or walked by a clear): as
/// [`plan`], with the value before in hand.
pub(crate) fn plan_removal<T: Table>(
    store: &impl Store,
    shared: &Shared,
    k: &[u8],
    v: &[u8],
    op: &'static str,
) -> Result<Option<Planned>> {
    let planned = versioned::<T>(store, shared, k, op)?;
    Ok(planned.map(|p| Planned {
        change: change_value(Some(v)),
        ..p
    }))
}

/// Plans a change of the unit of the stored value `v` (its subkey, or itself without one) of
/// the key `k` of the `dupsort` table `T` (declared `history`), stored in `dbi`: a put or a
/// delete of `v`. The unit's values before the change are read (a unit of a table with a
/// subkey may hold several), nothing is written. `Ok(None)` while an unwind writes rows back.
pub(crate) fn plan_dup<T: Table>(
    store: &impl Store,
    shared: &Shared,
    dbi: Dbi,
    (k, v): (&[u8], &[u8]),
    op: &'static str,
) -> Result<Option<Planned>> {
    let Some(planned) = versioned::<T>(store, shared, k, op)? else {
        return Ok(None);
    };
    let sub = &v[..unit_of::<T>(k, v)?];
    let values = unit_values::<T>(store, dbi, k, sub)
        .map_err(|code| shared.fail(code, At::of::<T>(op).key(k)))?;
    Ok(Some(Planned {
        change: dup_change_value(&values),
        unit: Some(unit_key(k, sub)),
        ..planned
    }))
}

/// Plans the replacement of the unit `sub` (a subkey's encoding) of the key `k` of the
/// `dupsort` table `T` (declared `history`) by one value, as `upsert_dup` writes it: one change
/// for its deletes and its put, whose values before the caller reads while it deletes them and
/// hands to [`Planned::with_befores`] (each delete and the put then plan nothing of their own).
/// The version is checked here, before anything is written; `Ok(None)` while an unwind writes
/// rows back.
pub(crate) fn plan_unit<T: Table>(
    store: &impl Store,
    shared: &Shared,
    (k, sub): (&[u8], &[u8]),
    op: &'static str,
) -> Result<Option<Planned>> {
    let Some(planned) = versioned::<T>(store, shared, k, op)? else {
        return Ok(None);
    };
    Ok(Some(Planned {
        unit: Some(unit_key(k, sub)),
        ..planned
    }))
}

impl Planned {
    /// The change of a unit planned by [`plan_unit`], with the stored values it held before.
    pub(crate) fn with_befores(self, values: &[Vec<u8>]) -> Planned {
        Planned {
            change: dup_change_value(values),
            ..self
        }
    }
}

/// Plans the delete of every value of the key `k` of the `dupsort` table `T` (declared
/// `history`), stored in `dbi`: a change of each of its units. Empty while an unwind writes
/// rows back, or when `k` has no value.
pub(crate) fn plan_dup_key<T: Table>(
    store: &impl Store,
    shared: &Shared,
    dbi: Dbi,
    k: &[u8],
    op: &'static str,
) -> Result<Plans> {
    let fail = |code| shared.fail(code, At::of::<T>(op).key(k));
    let mut out: Vec<Planned> = Vec::new();
    let Some(first) = store.store_get_dup_ge(dbi, k, &[]).map_err(fail)? else {
        return Ok(Plans::Many(out));
    };
    let Some(planned) = versioned::<T>(store, shared, k, op)? else {
        return Ok(Plans::Many(out));
    };
    let mut next = Some(first);
    while let Some(v) = next {
        let sub = v[..unit_of::<T>(k, &v)?].to_vec();
        let values = unit_values::<T>(store, dbi, k, &sub).map_err(fail)?;
        // The first value after the unit's last.
        let mut from = values.last().cloned().unwrap_or_else(|| v.clone());
        from.push(0);
        out.push(Planned {
            change: dup_change_value(&values),
            unit: Some(unit_key(k, &sub)),
            ..planned.clone()
        });
        next = store.store_get_dup_ge(dbi, k, &from).map_err(fail)?;
    }
    Ok(Plans::Many(out))
}

/// The version part of a plan: the transaction's version checked against the last version
/// `T`'s history recorded; the value before left out.
fn versioned<T: Table>(
    store: &impl Store,
    shared: &Shared,
    k: &[u8],
    op: &'static str,
) -> Result<Option<Planned>> {
    if shared.history().replaying() {
        return Ok(None);
    }
    let history = dbi_of(shared, T::NAME)?;
    let Some(version) = shared.history().version() else {
        return Err(Error::NoVersion { table: T::NAME });
    };
    let mut settle_horizon = false;
    let mut note_last = false;
    let raise_last = match shared.history().known_last(history) {
        Some(last) if last == version => false,
        _ => {
            let fail = |code| shared.fail(code, At::of::<T>(op).key(k));
            let last = store
                .store_get_with(history, &LAST, version_of)
                .map_err(fail)?;
            let raise = match last {
                None => true,
                Some(Some(last)) if version < last => {
                    return Err(Error::VersionBelow {
                        table: T::NAME,
                        version,
                        last,
                    });
                }
                Some(Some(last)) => version > last,
                Some(None) => return Err(damaged(T::NAME, "the last version recorded", &LAST)),
            };
            // Versions below the horizon were pruned: a change there would hide that.
            let horizon = store
                .store_get_with(history, &HORIZON, version_of)
                .map_err(fail)?;
            match horizon {
                Some(Some(PENDING)) => settle_horizon = true,
                Some(Some(horizon)) if version < horizon => {
                    return Err(Error::BelowHorizon {
                        table: T::NAME,
                        version,
                        horizon,
                    });
                }
                Some(None) => return Err(damaged(T::NAME, "the horizon", &HORIZON)),
                _ => {}
            }
            note_last = true;
            raise
        }
    };
    Ok(Some(Planned {
        source: T::NAME,
        dbi: history,
        version,
        change: Vec::new(),
        unit: None,
        raise_last,
        note_last,
        settle_horizon,
    }))
}

/// Records the change of the row under `k` (of a `dupsort` table: of the unit `planned` names)
/// that `planned` planned, after the row was written: the change (unless the key already
/// changed in this version: the first change of a version holds the value before it), the
/// history index entry, and the last version.
pub(crate) fn record(
    store: &mut impl Store,
    shared: &Shared,
    planned: &Planned,
    k: &[u8],
) -> Result<()> {
    let k = planned.unit.as_deref().unwrap_or(k);
    let fail =
        |code, key: &[u8]| shared.fail(code, At::table(planned.source, "record history").key(key));
    // The first change of a key in a version holds the value before it; a later one in the
    // same version finds its change there and leaves it (one search for both).
    let fresh = store
        .store_put_new(
            planned.dbi,
            change_key(planned.version, k).as_slice(),
            &planned.change,
        )
        .map_err(|code| fail(code, k))?;
    // A change and its index entry are written together, so a change found means its entry
    // is there too.
    if fresh {
        shared.history().note_recorded();
        store
            .store_put(planned.dbi, index_key(k, planned.version).as_slice(), &[])
            .map_err(|code| fail(code, k))?;
    }
    if planned.settle_horizon {
        store
            .store_put(planned.dbi, &HORIZON, &planned.version.to_be_bytes())
            .map_err(|code| fail(code, &HORIZON))?;
    }
    if planned.raise_last {
        store
            .store_put(planned.dbi, &LAST, &planned.version.to_be_bytes())
            .map_err(|code| fail(code, &LAST))?;
    }
    if planned.note_last {
        shared
            .history()
            .touch(planned.source, planned.dbi, planned.version);
    }
    Ok(())
}

/// How many history index entries an unwind collects, at most, before it deletes them (in key
/// order): a longer unwind deletes them in sorted batches.
const UNWIND_BATCH: usize = 1 << 16;
/// How many bytes of history index keys an unwind collects, at most, before it deletes them:
/// with [`UNWIND_BATCH`], the bound of its memory.
const UNWIND_BATCH_BYTES: usize = 1 << 24;

/// The change an unwind's walk is on: its version, stored key and value before, in buffers
/// the walk reuses.
#[derive(Default)]
pub(crate) struct Unwound {
    version: u64,
    key: Vec<u8>,
    /// The change's value, checked by the walk ([`before_of`], or for a `dupsort` table
    /// [`befores_of`]).
    change: Vec<u8>,
}

impl Unwound {
    /// The row's stored key (of a `dupsort` table: the unit's history key, [`unit_key`]).
    pub(crate) fn key(&self) -> &[u8] {
        &self.key
    }

    /// The stored value the row held before the change; `None`: none.
    pub(crate) fn before(&self) -> Option<&[u8]> {
        before_of(&self.change).flatten()
    }

    /// The stored values the unit of a `dupsort` table held before the change.
    pub(crate) fn befores(&self) -> Vec<&[u8]> {
        befores_of(&self.change).unwrap_or_default()
    }
}

/// An unwind of one history to a version: its changes walked down from the last one, each
/// deleted once its row is written back, and their history index entries collected and
/// deleted in key order ([`UNWIND_BATCH`] at a time) through a cursor of their own. In the
/// changes' order the index entries fall on the index's pages at random, and a delete by key
/// descends the tree from its root; in key order the next one is mostly on the leaf page the
/// cursor is on, where libmdbx's seek stays without a descent.
pub(crate) struct Unwind<'t> {
    changes: RawCursorMut<'t>,
    index: RawCursorMut<'t>,
    shared: &'t Shared,
    source: &'static str,
    version: u64,
    /// Of a `dupsort` table: a change may hold several values before it.
    dup: bool,
    at: Unwound,
    /// Whether `at` holds a change still to undo.
    more: bool,
    /// The stored keys of the changes undone whose index entries are still there, one after
    /// another; `doomed` holds each one's version and where it ends.
    keys: Vec<u8>,
    doomed: Vec<(u64, u32)>,
}

impl<'t> Unwind<'t> {
    /// The unwind of the history `history` of table `source` (`dup`: a `dupsort` table) to
    /// `version`, in `txn`: on the last change above `version`, if any.
    pub(crate) fn start(
        txn: LentTxn<'t>,
        shared: &'t Shared,
        (source, history, dup): (&'static str, Dbi, bool),
        version: u64,
    ) -> Result<Self> {
        let fail = |code| shared.fail(code, At::table(source, "unwind"));
        let mut changes = txn.cursor(history, shared.cursors()).map_err(fail)?;
        let index = txn.cursor(history, shared.cursors()).map_err(fail)?;
        // The changes come first: the last one is just before the first index entry.
        let first_index = changes
            .get_with(op::SET_RANGE, Some(&[INDEX]), None, |_, _| ())
            .map_err(fail)?;
        let mut unwind = Unwind {
            changes,
            index,
            shared,
            source,
            version,
            dup,
            at: Unwound::default(),
            more: false,
            keys: Vec::new(),
            doomed: Vec::new(),
        };
        unwind.step(if first_index.is_some() {
            op::PREV
        } else {
            op::LAST
        })?;
        Ok(unwind)
    }

    /// The change to undo now; `None` when the walk is done.
    pub(crate) fn change(&self) -> Option<&Unwound> {
        self.more.then_some(&self.at)
    }

    /// The change [`change`](Self::change) returned (its row written back) removed from the
    /// history, and the walk on the change before it.
    pub(crate) fn advance(&mut self) -> Result<()> {
        debug_assert!(self.more, "an unwind advanced past its last change");
        let (shared, source, key) = (self.shared, self.source, &self.at.key);
        self.changes
            .del(engine::del::CURRENT)
            .map_err(|code| shared.fail(code, At::table(source, "unwind").key(key)))?;
        if self.doomed.len() == UNWIND_BATCH || self.keys.len() >= UNWIND_BATCH_BYTES {
            self.delete_index_entries()?;
        }
        self.keys.extend_from_slice(&self.at.key);
        // `UNWIND_BATCH_BYTES` and the largest key keep the offsets within 32 bits.
        self.doomed.push((self.at.version, self.keys.len() as u32));
        self.step(op::PREV)
    }

    /// The end of the walk: the index entries of the changes undone that are still there
    /// deleted.
    pub(crate) fn delete_remaining_index_entries(mut self) -> Result<()> {
        debug_assert!(!self.more, "an unwind finished before its last change");
        self.delete_index_entries()
    }

    /// Moves the changes' cursor with `op` and copies the change it lands on into `at` when
    /// its version is above the unwind's; `more` says whether it was.
    fn step(&mut self, op: engine::op::Op) -> Result<()> {
        let (source, version, dup, at) = (self.source, self.version, self.dup, &mut self.at);
        let found = self
            .changes
            .get_with(op, None, None, |key, value| {
                let Some((changed, k)) = parse_change(key) else {
                    return Ok(false);
                };
                if changed <= version {
                    return Ok(false);
                }
                let valid = match dup {
                    true => befores_of(value).is_some(),
                    false => before_of(value).is_some(),
                };
                if !valid {
                    return Err(damaged(source, "a change", key));
                }
                at.version = changed;
                at.key.clear();
                at.key.extend_from_slice(k);
                at.change.clear();
                at.change.extend_from_slice(value);
                Ok(true)
            })
            .map_err(|code| self.shared.fail(code, At::table(source, "unwind")))?;
        self.more = found.unwrap_or(Ok(false))?;
        Ok(())
    }

    /// Deletes the collected index entries, in key order, and forgets them.
    fn delete_index_entries(&mut self) -> Result<()> {
        if self.doomed.is_empty() {
            return Ok(());
        }
        // The index's order is its stored keys' byte order, then the versions'. Sorted as
        // numbers first: each key's first bytes after the prefix every collected key shares
        // (twelve and its place among them in one number, when they all fit; sixteen beside
        // the place otherwise), then each run of equal first bytes by all their bytes and the
        // version. After the shared prefix, not from the start: a
        // `dupsort` table's unit key begins with its key escaped (two bytes for each zero
        // byte), so the first bytes of every unit of small integer keys are the same, and
        // every change fell in one run, sorted by comparing slices.
        let (shared, source) = (self.shared, self.source);
        let (keys, doomed) = (&self.keys, &self.doomed);
        let entry = |i: u32| {
            let i = i as usize;
            let (version, end) = doomed[i];
            let start = i.checked_sub(1).map_or(0, |before| doomed[before].1);
            (&keys[start as usize..end as usize], version)
        };
        // `UNWIND_BATCH` keeps the places within 32 bits.
        let n = doomed.len() as u32;
        let longest = (0..n).map(|i| entry(i).0.len()).max().unwrap_or(0);
        // Keys of up to twelve bytes (a plain table's integer keys) are sorted from their
        // start; longer ones after the prefix they share.
        let mut shared_prefix = 0;
        if longest > 12 {
            let first = entry(0).0;
            shared_prefix = first.len();
            for i in 1..n {
                let key = entry(i).0;
                if key.get(..shared_prefix) != Some(&first[..shared_prefix]) {
                    let same = first.iter().zip(key).take_while(|(a, b)| a == b).count();
                    shared_prefix = shared_prefix.min(same);
                }
            }
        }
        let head = |i: u32| {
            let key = &entry(i).0[shared_prefix..];
            let mut head = [0; 16];
            let m = key.len().min(16);
            head[..m].copy_from_slice(&key[..m]);
            u128::from_be_bytes(head)
        };
        let order: Vec<u32> = match longest - shared_prefix <= 12 {
            // Twelve bytes and the place in one number.
            true => index_order(
                n,
                entry,
                |i| head(i) | u128::from(i),
                |a, b| a >> 32 == b >> 32,
                |o| o as u32,
            ),
            false => index_order(n, entry, |i| (head(i), i), |a, b| a.0 == b.0, |o| o.1),
        };
        for o in order {
            let (key, version) = entry(o);
            let fail = |code| shared.fail(code, At::table(source, "unwind").key(key));
            let index_key = index_key(key, version);
            let found = self
                .index
                .get_with(op::SET_KEY, Some(index_key.as_slice()), None, |_, _| ())
                .map_err(fail)?;
            if found.is_some() {
                self.index.del(engine::del::CURRENT).map_err(fail)?;
            }
        }
        self.keys.clear();
        self.doomed.clear();
        Ok(())
    }
}

/// The places `0..n` of an unwind's collected index entries (`entry`: a place's stored key and
/// version) in the index's order: sorted as numbers first, each place by its `number` (the
/// first bytes of its key after the prefix they all share, zeros after its end, and the place),
/// then each run of numbers whose heads are the `same` by the keys' bytes and the versions;
/// `place` takes a place back out of its number.
fn index_order<'k, H: Ord + Copy>(
    n: u32,
    entry: impl Fn(u32) -> (&'k [u8], u64),
    number: impl Fn(u32) -> H,
    same: impl Fn(&H, &H) -> bool,
    place: impl Fn(H) -> u32,
) -> Vec<u32> {
    let mut order: Vec<H> = (0..n).map(number).collect();
    order.sort_unstable();
    for run in order.chunk_by_mut(|a, b| same(a, b)) {
        if run.len() > 1 {
            run.sort_unstable_by(|a, b| entry(place(*a)).cmp(&entry(place(*b))));
        }
    }
    order.into_iter().map(place).collect()
}

/// After an unwind to `version`: the last version recorded is at most `version`.
pub(crate) fn lower_last(
    raw: &mut RawTxn,
    shared: &Shared,
    source: &'static str,
    history: Dbi,
    version: u64,
) -> Result<()> {
    let fail = |code| shared.fail(code, At::table(source, "unwind"));
    let last = raw.get(history, &LAST).map_err(fail)?.map(version_of);
    match last {
        Some(Some(last)) if last > version => raw
            .put(history, &LAST, &version.to_be_bytes(), engine::put::UPSERT)
            .map_err(fail)?,
        Some(None) => return Err(damaged(source, "the last version recorded", &LAST)),
        _ => {}
    }
    shared.history().forget_last(history);
    Ok(())
}

/// One batch of a prune of the history (`dbi`) of table `source` below `below`: the horizon
/// raised to `below` first, then up to `limit` changes of versions below it deleted. Each key
/// keeps the index entry of its highest pruned change, whose change is gone: its mark, which a
/// read as of an earlier version finds first and refuses ([`as_of`]), while a read as of a
/// later one never meets it. Returns how many changes were deleted (fewer than `limit`: the
/// prune is complete).
pub(crate) fn prune_batch(
    raw: &mut RawTxn,
    shared: &Shared,
    source: &'static str,
    history: Dbi,
    below: u64,
    limit: usize,
) -> Result<usize> {
    let fail = |code| shared.fail(code, At::table(source, "prune history"));
    let horizon = raw.get(history, &HORIZON).map_err(fail)?.map(version_of);
    match horizon {
        Some(None) => return Err(damaged(source, "the horizon", &HORIZON)),
        Some(Some(horizon)) if horizon >= below => {}
        _ => raw
            .put(history, &HORIZON, &below.to_be_bytes(), engine::put::UPSERT)
            .map_err(fail)?,
    }
    // One cursor walks the changes from the first, deleting them; the other deletes each
    // pruned key's mark. Changes go in version order, so a key's index entries below a pruned
    // change are earlier pruned changes: the one left of them (the key's mark) goes, the new
    // one stays. The mark goes first, so that the walking cursor's next move is the one that
    // follows its own delete.
    let lent = raw.lend();
    let mut changes = lent.cursor(history, shared.cursors()).map_err(fail)?;
    let mut marks = lent.cursor(history, shared.cursors()).map_err(fail)?;
    let mut key = Vec::new();
    let mut pruned = 0;
    let mut op = op::FIRST;
    while pruned < limit {
        let change = match changes.get_with(op, None, None, |k, _| match parse_change(k) {
            Some((version, stored)) if version < below => {
                key.clear();
                key.extend_from_slice(stored);
                Some(version)
            }
            _ => None,
        }) {
            Ok(found) => found.flatten(),
            // After the table's last entry was deleted.
            Err(code) if code == engine::Code::ENODATA => None,
            Err(code) => return Err(fail(code)),
        };
        let Some(version) = change else {
            break;
        };
        let fail = |code| shared.fail(code, At::table(source, "prune history").key(&key));
        let prefix = index_prefix(&key);
        let marked = marks
            .get_with(op::SET_RANGE, Some(prefix.as_slice()), None, |entry, _| {
                if !entry.starts_with(prefix.as_slice()) {
                    return Ok(false);
                }
                let (_, marked) =
                    parse_index(entry).ok_or_else(|| damaged(source, "an index entry", entry))?;
                Ok(marked < version)
            })
            .map_err(fail)?
            .transpose()?;
        if marked == Some(true) {
            marks.del(engine::del::CURRENT).map_err(fail)?;
        }
        changes.del(engine::del::CURRENT).map_err(fail)?;
        pruned += 1;
        // After a delete, `MDBX_NEXT` lands on the entry that followed the deleted one.
        op = op::NEXT;
    }
    // The horizon may now be above a version this transaction wrote at: its next change is
    // checked again.
    shared.history().forget_last(history);
    Ok(pruned)
}

/// Under [`Options::keep_versions(n)`](crate::Options::keep_versions), at the commit of a write
/// transaction (and of each batch of a bulk load): every history it recorded changes in is
/// pruned below its last version `+ 1 - n` ([`prune_batch`]), so the changes of its last `n`
/// versions stay. One batch a history: at most
/// [`KEEP_VERSIONS_BATCH`](crate::options::KEEP_VERSIONS_BATCH) changes, plus as many as the
/// transaction recorded (so the prune keeps up with the versions written); the rest goes at
/// later commits. The horizon is raised at once, whatever is left.
pub(crate) fn keep_versions(raw: &mut RawTxn, shared: &Shared, n: u64) -> Result<()> {
    let (touched, recorded) = shared.history().touched();
    let limit = crate::options::KEEP_VERSIONS_BATCH.saturating_add(recorded);
    for (source, history) in touched {
        let last = raw
            .get(history, &LAST)
            .map_err(|code| shared.fail(code, At::table(source, "prune history")))?
            .map(|bytes| {
                version_of(bytes).ok_or_else(|| damaged(source, "the last version recorded", &LAST))
            })
            .transpose()?;
        // Versions `last - n + 1 ..= last` keep their changes (`n` is at least 1).
        let Some(below) = last.and_then(|last| last.checked_sub(n.saturating_sub(1))) else {
            continue;
        };
        if below > 0 {
            prune_batch(raw, shared, source, history, below, limit)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_units_values_before_read_back_and_its_keys_group_by_key() {
        for values in [
            vec![],
            vec![b"a".to_vec()],
            vec![b"a".to_vec(), vec![], b"\0c".to_vec()],
        ] {
            let change = dup_change_value(&values);
            let back: Vec<Vec<u8>> = befores_of(&change)
                .unwrap()
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect();
            assert_eq!(back, values);
            // A plain table's reader takes none and one as before, and refuses several.
            assert_eq!(before_of(&change).is_some(), values.len() < 2);
        }
        assert_eq!(befores_of(&[MANY, 0, 0, 0, 9, 1]), None);
        let (k, sub) = (b"k\0".as_slice(), b"\0\x01s".as_slice());
        let unit = unit_key(k, sub);
        assert_eq!(split_unit("T", &unit).unwrap(), (k.to_vec(), sub));
        // Every index entry of a unit of `k` starts with `units_start(k)`, none of `k ‖ 0`.
        let start = units_start(k);
        for sub in [&b""[..], b"\0", b"\xff\xff"] {
            let entry = index_key(&unit_key(k, sub), 3);
            assert!(entry.as_slice().starts_with(start.as_slice()), "{sub:?}");
            let other = index_key(&unit_key(b"k\0\0", sub), 3);
            assert!(!other.as_slice().starts_with(start.as_slice()), "{sub:?}");
        }
    }

    #[test]
    fn keys_parse_back_and_index_keys_sort_by_key_then_version() {
        let change = change_key(7, b"a\0b");
        assert_eq!(parse_change(change.as_slice()), Some((7, &b"a\0b"[..])));
        let index = index_key(b"a\0b", 9);
        assert_eq!(parse_index(index.as_slice()), Some((b"a\0b".to_vec(), 9)));
        let mut keys = [
            index_key(b"b", 1),
            index_key(b"a", 2),
            index_key(b"a\0", 0),
            index_key(b"a", 1),
            index_key(b"", 5),
        ]
        .map(|k| k.as_slice().to_vec());
        keys.sort();
        let parsed: Vec<_> = keys.iter().map(|k| parse_index(k).unwrap()).collect();
        assert_eq!(
            parsed,
            [
                (b"".to_vec(), 5),
                (b"a".to_vec(), 1),
                (b"a".to_vec(), 2),
                (b"a\0".to_vec(), 0),
                (b"b".to_vec(), 1)
            ]
        );
        assert_eq!(&changes_from(3)[..], change_key(3, b"").as_slice());
    }
}
