//! Tables declared `history` (issue 36; docs/design.md, "History and unwind"): every change of
//! such a table's rows is recorded, with the version of the write transaction that made it and
//! the value before it, in the table's history (`#[derive(History)]`), one plain table of the
//! schema with these key spaces:
//!
//! - `01 ‖ key part ‖ version (u64 BE)` → the value before the version (`00`: absent;
//!   `01 ‖ stored value`; of a `dupsort` table's unit also [`MANY`]), or empty: a *mark*, the
//!   highest pruned change of its key (`prune_batch`). The changes by key, in (key, version)
//!   order, so that a read as of a version is one search ([`read`]'s `as_of`);
//! - `00 ‖ version (u64 BE) ‖ key part` → empty: the log, in version order, so that a
//!   version's changes are one range (the unwind, the prune and `changes_at` walk it and find
//!   each change's value under its key);
//! - `02` → the horizon (the first version whose changes are kept), `03` → the last version
//!   recorded, `04` → empty when the history was added to a table that already held rows: its
//!   horizon then bounds the reads of every key, since nothing is known of the rows before it
//!   (the horizon is [`PENDING`] until the first version is written).
//!
//! The *key part* ([`Form`]) is the stored key as it is when the table's key has a fixed width,
//! escaped and terminated otherwise (either way no key part is a prefix of another, so a key's
//! entries are one run of the keyed space, in version order). A `dupsort` table's history
//! records each (key, subkey) — without a subkey, each (key, value) — its *unit*: the key part
//! is the key's, then the subkey's self-delimiting encoding (without a subkey, the value
//! escaped), and a change holds the unit's values before it (none, one, or [`MANY`]).
//!
//! The write pipeline plans a change of a history table ([`plan`]: the version checked, the
//! value before read) and records it after the row is written ([`record`]); the reads as of a
//! version and the unwind are here too.

mod check;
mod read;

pub use check::HistoryCheck;
pub(crate) use check::{Rows, check};
pub(crate) use read::{
    before, changed_after, changes_at, check_horizon, check_unwind, key_at, key_at_with, unit_at,
    unit_at_each, unit_changes_at, value_at, versions,
};

use std::borrow::Cow;

use crate::codec::{KeyBuf, decode_bytes_part, encode_bytes_part};
use crate::engine::{self, CursorNav, Dbi, LentTxn, RawCursorMut, RawTxn, op};
use crate::error::{At, Error, Result};
use crate::index::Store;
use crate::record::TableRecord;
use crate::schema::Descriptor;
use crate::state::Shared;
use crate::table::{Table, TableInfo};

/// The first byte of a log entry's key (a change's version, then its key part).
const LOG: u8 = 0;
/// The first byte of a change's key (its key part, then its version).
const KEYED: u8 = 1;
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

/// A change read back, as stored: the stored key and the value it held before (`None`: none).
pub(crate) type StoredChange = (Vec<u8>, Option<Vec<u8>>);

/// A change of a `dupsort` table's unit read back, as stored: the unit's key part
/// ([`Form::key_part`]) and the values it held before.
pub(crate) type StoredUnitChange = (Vec<u8>, Vec<Vec<u8>>);

/// How a history writes the stored keys of its table (of a `dupsort` table, its units) into
/// its own keys: the *key part*. No key part is a prefix of another, so `key part ‖ version`
/// keeps a key's changes together and in version order, and a search for `key part ‖ v`
/// lands on the key's first change at or after `v` or on another key's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Form {
    /// Every stored key is this many bytes (its recorded descriptor says so): written as it
    /// is. `None`: escaped and terminated (the key codec's non-last byte-string part).
    width: Option<usize>,
    /// What follows the key of a `dupsort` table's unit.
    unit: Unit,
}

/// What follows the key in a history's key part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// Nothing: a table of one value a key.
    None,
    /// The subkey's encoding as it starts each stored value: self-delimiting (a fixed width or
    /// a terminated part), so written as it is.
    Delimited,
    /// The whole value (a `dupsort` table without a subkey), which is not self-delimiting:
    /// escaped and terminated.
    Escaped,
}

impl Form {
    /// The form of table `T`'s history, from its declaration (what its schema record holds).
    pub(crate) const fn of<T: Table>() -> Form {
        let info = TableInfo::of::<T>();
        Form::new(info.key.fixed_size(), T::FLAGS.dupsort, &info.value)
    }

    /// The form of the history of the table `record` describes (the schema-less reader and
    /// the migrations, which know the table by its schema record): as [`Form::of`] its type.
    pub(crate) fn of_record(record: &TableRecord) -> Form {
        Form::of_text(record.dupsort, &record.key, &record.value)
    }

    /// [`of_record`](Self::of_record) of a table's flag and recorded descriptors' texts.
    pub(crate) fn of_text(dupsort: bool, key: &str, value: &str) -> Form {
        let width = crate::codec::untyped::KeyShape::parse(key)
            .ok()
            .and_then(|shape| shape.fixed_size());
        let unit = match (dupsort, value.starts_with("subkey ")) {
            (false, _) => Unit::None,
            (true, true) => Unit::Delimited,
            (true, false) => Unit::Escaped,
        };
        Form { width, unit }
    }

    const fn new(width: Option<usize>, dupsort: bool, value: &Descriptor) -> Form {
        let unit = match (dupsort, value) {
            (false, _) => Unit::None,
            (true, Descriptor::SubKeyed { .. }) => Unit::Delimited,
            (true, _) => Unit::Escaped,
        };
        Form { width, unit }
    }

    /// Writes the key part of the stored key `k` (of a `dupsort` table, with its unit `sub`:
    /// the subkey's encoding, or the whole value) to `out`.
    pub(crate) fn write(&self, k: &[u8], sub: &[u8], out: &mut KeyBuf) {
        match self.width {
            Some(width) => {
                debug_assert_eq!(k.len(), width, "a key of a fixed-width table");
                out.extend_from_slice(k);
            }
            None => encode_bytes_part(k, out, false),
        }
        match self.unit {
            Unit::None => debug_assert!(sub.is_empty(), "a unit of a table of one value a key"),
            Unit::Delimited => out.extend_from_slice(sub),
            Unit::Escaped => encode_bytes_part(sub, out, false),
        }
    }

    /// The key part of `k` with the unit `sub` ([`write`](Self::write)).
    pub(crate) fn key_part(&self, k: &[u8], sub: &[u8]) -> KeyBuf {
        let mut out = KeyBuf::new();
        self.write(k, sub, &mut out);
        out
    }

    /// The key part of the stored key `k` of a table of one value a key: `k` itself when the
    /// keys have a fixed width (no copy).
    pub(crate) fn plain_part<'k>(&self, k: &'k [u8]) -> Cow<'k, [u8]> {
        match self.width {
            Some(_) => Cow::Borrowed(k),
            None => Cow::Owned(self.key_part(k, &[]).as_slice().to_vec()),
        }
    }

    /// Where the key parts of every unit of the stored key `k` of a `dupsort` table begin:
    /// the key's part alone, which starts all of them and no other key's.
    pub(crate) fn key_start(&self, k: &[u8]) -> KeyBuf {
        let mut out = KeyBuf::new();
        match self.width {
            Some(_) => out.extend_from_slice(k),
            None => encode_bytes_part(k, &mut out, false),
        }
        out
    }

    /// The stored key of the key part `part`, and the bytes after it (a unit's); `None` when
    /// `part` is not of this form.
    pub(crate) fn split_key<'p>(&self, part: &'p [u8]) -> Option<(Cow<'p, [u8]>, &'p [u8])> {
        match self.width {
            Some(width) if part.len() >= width => {
                let (k, rest) = part.split_at(width);
                Some((Cow::Borrowed(k), rest))
            }
            Some(_) => None,
            None => {
                let mut input = part;
                let k = decode_bytes_part(&mut input, false, "history key").ok()?;
                Some((Cow::Owned(k), input))
            }
        }
    }

    /// The stored key of the key part of a table of one value a key.
    pub(crate) fn key_of<'p>(&self, part: &'p [u8]) -> Option<Cow<'p, [u8]>> {
        match self.split_key(part)? {
            (k, []) => Some(k),
            _ => None,
        }
    }

    /// The stored key and the unit (the subkey's encoding, or the whole value) of the key part
    /// of a `dupsort` table's unit; `None` when `part` is not of this form.
    pub(crate) fn unit_of<'p>(&self, part: &'p [u8]) -> Option<KeyAndUnit<'p>> {
        let (k, rest) = self.split_key(part)?;
        let sub = match self.unit {
            Unit::None => return rest.is_empty().then_some((k, Cow::Borrowed(rest))),
            Unit::Delimited => Cow::Borrowed(rest),
            Unit::Escaped => {
                let mut input = rest;
                let sub = decode_bytes_part(&mut input, false, "history unit").ok()?;
                if !input.is_empty() {
                    return None;
                }
                Cow::Owned(sub)
            }
        };
        Some((k, sub))
    }

    /// [`unit_of`](Self::unit_of), a part that is not of this form the damage of an entry of
    /// the history of table `source`.
    pub(crate) fn split_unit<'p>(
        &self,
        source: &'static str,
        part: &'p [u8],
    ) -> Result<KeyAndUnit<'p>> {
        self.unit_of(part)
            .ok_or_else(|| damaged(source, "a key and subkey", part))
    }
}

/// A stored key and its unit, decoded from a key part (borrowed from it where they are
/// written as they are).
pub(crate) type KeyAndUnit<'p> = (Cow<'p, [u8]>, Cow<'p, [u8]>);

/// The key of the change of the key part `part` at `version`.
fn keyed_key(part: &[u8], version: u64) -> KeyBuf {
    let mut out = KeyBuf::new();
    out.push(KEYED);
    out.extend_from_slice(part);
    out.extend_from_slice(&version.to_be_bytes());
    out
}

/// The key of the log entry of the change of the key part `part` at `version`.
fn log_key(version: u64, part: &[u8]) -> KeyBuf {
    let mut out = KeyBuf::new();
    out.push(LOG);
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(part);
    out
}

/// The first key of the log entries of `version`.
fn log_from(version: u64) -> [u8; 9] {
    let mut out = [LOG; 9];
    out[1..].copy_from_slice(&version.to_be_bytes());
    out
}

/// The version and key part of a log entry's key; `None` for a key of another space.
fn parse_log(key: &[u8]) -> Option<(u64, &[u8])> {
    match key {
        [LOG, rest @ ..] if rest.len() >= 8 => {
            let (version, part) = rest.split_at(8);
            Some((u64::from_be_bytes(version.try_into().ok()?), part))
        }
        _ => None,
    }
}

/// The key part and version of a change's key; `None` for a key of another space.
fn parse_keyed(key: &[u8]) -> Option<(&[u8], u64)> {
    match key {
        [KEYED, rest @ ..] if rest.len() >= 8 => {
            let (part, version) = rest.split_at(rest.len() - 8);
            Some((part, u64::from_be_bytes(version.try_into().ok()?)))
        }
        _ => None,
    }
}

/// The start of the changes of the key part `part`: `01 ‖ part`.
fn keyed_prefix(part: &[u8]) -> KeyBuf {
    let mut out = KeyBuf::new();
    out.push(KEYED);
    out.extend_from_slice(part);
    out
}

/// Whether a change's value is a mark (a pruned change's, `prune_batch`): empty, which no
/// change's value is.
fn is_mark(value: &[u8]) -> bool {
    value.is_empty()
}

/// The value a change records: the stored value before it, or none; `None` for a value of
/// another format (a mark among them).
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
/// change's version, the stored key and the stored value before), in the history (of form
/// `form`) of a table of one value a key: `Some(01 ‖ convert(..))` for a change that records a
/// value before; `None` for every other entry (a change of a key that held no value, a mark,
/// a log entry, the horizon, the last version, the start mark), which a conversion leaves as
/// it is.
pub(crate) fn converted_before(
    form: Form,
    key: &[u8],
    value: &[u8],
    convert: impl FnOnce(u64, &[u8], &[u8]) -> Result<Vec<u8>>,
) -> Result<Option<Vec<u8>>> {
    let Some((part, version)) = parse_keyed(key) else {
        return Ok(None);
    };
    let Some(Some(before)) = before_of(value) else {
        return Ok(None);
    };
    let k = form
        .key_of(part)
        .ok_or_else(|| damaged("history", "a change's key", key))?;
    let converted = convert(version, &k, before)?;
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
    /// How the history writes the table's keys.
    form: Form,
    /// Of a `dupsort` table: the key part of the unit changed ([`Form::key_part`]); `None`:
    /// the row's stored key's.
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
        unit: Some(planned.form.key_part(k, sub).as_slice().to_vec()),
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
        unit: Some(planned.form.key_part(k, sub).as_slice().to_vec()),
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
            unit: Some(planned.form.key_part(k, &sub).as_slice().to_vec()),
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
        form: const { Form::of::<T>() },
        unit: None,
        raise_last,
        note_last,
        settle_horizon,
    }))
}

/// Records the change of the row under `k` (of a `dupsort` table: of the unit `planned` names)
/// that `planned` planned, after the row was written: the change under its key part (unless
/// the key already changed in this version: the first change of a version holds the value
/// before it), its log entry, and the last version.
pub(crate) fn record(
    store: &mut impl Store,
    shared: &Shared,
    planned: &Planned,
    k: &[u8],
) -> Result<()> {
    let escaped;
    let part = match (&planned.unit, planned.form.width) {
        (Some(unit), _) => unit.as_slice(),
        (None, Some(_)) => k,
        (None, None) => {
            escaped = planned.form.key_part(k, &[]);
            escaped.as_slice()
        }
    };
    let fail =
        |code, key: &[u8]| shared.fail(code, At::table(planned.source, "record history").key(key));
    // The first change of a key in a version holds the value before it; a later one in the
    // same version finds its change there and leaves it (one search for both).
    let fresh = store
        .store_put_new(
            planned.dbi,
            keyed_key(part, planned.version).as_slice(),
            &planned.change,
        )
        .map_err(|code| fail(code, k))?;
    // A change and its log entry are written together, so a change found means its log entry
    // is there too.
    if fresh {
        shared.history().note_recorded();
        store
            .store_put(planned.dbi, log_key(planned.version, part).as_slice(), &[])
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

/// How many log entries an unwind collects, at most, before it undoes their keys (in key
/// order): a longer unwind goes in sorted batches.
const UNWIND_BATCH: usize = 1 << 16;
/// How many bytes of key parts an unwind collects, at most, before it undoes their keys: with
/// [`UNWIND_BATCH`], the bound of its memory.
const UNWIND_BATCH_BYTES: usize = 1 << 24;

/// A key an unwind reverts: its stored key (of a `dupsort` table's unit, also the unit) and
/// the value of its earliest change above the unwind's version, which holds what it held at
/// the end of that version; in buffers the unwind reuses.
#[derive(Default)]
pub(crate) struct Unwound {
    key: Vec<u8>,
    sub: Vec<u8>,
    /// The change's value, checked ([`before_of`], or for a `dupsort` table [`befores_of`]).
    change: Vec<u8>,
}

impl Unwound {
    /// The row's stored key.
    pub(crate) fn key(&self) -> &[u8] {
        &self.key
    }

    /// Of a `dupsort` table: the unit (the subkey's encoding, or the whole value).
    pub(crate) fn sub(&self) -> &[u8] {
        &self.sub
    }

    /// The stored value the row held at the end of the unwind's version; `None`: none.
    pub(crate) fn before(&self) -> Option<&[u8]> {
        before_of(&self.change).flatten()
    }

    /// The stored values the unit of a `dupsort` table held at the end of the unwind's
    /// version.
    pub(crate) fn befores(&self) -> Vec<&[u8]> {
        befores_of(&self.change).unwrap_or_default()
    }
}

/// An unwind of one history to a version, key by key: the log walked down from its last entry
/// to the version, each entry deleted and its key part collected; then, in key order, each key
/// once ([`next`](Unwind::next)): its earliest change above the version (one search in the
/// keyed space) is its value at the end of the version, which the caller writes back, and its
/// changes above the version are deleted there, one run. A key is written back once however
/// many versions changed it, and the keyed space is visited in its order, mostly on the leaf
/// page its cursor is on. [`UNWIND_BATCH`] log entries at a time: a key whose changes span
/// several batches is reverted with the first (its earliest change is found by key, wherever
/// its log entry is), and the later batches find nothing of it left.
pub(crate) struct Unwind<'t> {
    log: RawCursorMut<'t>,
    keyed: RawCursorMut<'t>,
    shared: &'t Shared,
    source: &'static str,
    version: u64,
    form: Form,
    /// Of a `dupsort` table: a change may hold several values before it.
    dup: bool,
    /// The log's next move: `None` once the walk is past the version (or the log's start).
    op: Option<engine::op::Op>,
    /// The key parts of the batch, one after another, and where each ends.
    parts: Vec<u8>,
    ends: Vec<u32>,
    /// The batch's places in key order, and the next one to undo.
    order: Vec<u32>,
    next: usize,
    at: Unwound,
    /// Log entries deleted: the changes undone.
    undone: u64,
}

impl<'t> Unwind<'t> {
    /// The unwind of the history `history` of table `source` (`dup`: a `dupsort` table; its
    /// keys written as `form` says) to `version`, in `txn`.
    pub(crate) fn start(
        txn: LentTxn<'t>,
        shared: &'t Shared,
        (source, history, dup): (&'static str, Dbi, bool),
        form: Form,
        version: u64,
    ) -> Result<Self> {
        let fail = |code| shared.fail(code, At::table(source, "unwind"));
        let mut log = txn.cursor(history, shared.cursors()).map_err(fail)?;
        let keyed = txn.cursor(history, shared.cursors()).map_err(fail)?;
        // The log comes first: its last entry is just before the first change.
        let first_change = log
            .get_with(op::SET_RANGE, Some(&[KEYED]), None, |_, _| ())
            .map_err(fail)?;
        let op = match first_change {
            Some(()) => op::PREV,
            None => op::LAST,
        };
        Ok(Unwind {
            log,
            keyed,
            shared,
            source,
            version,
            form,
            dup,
            op: Some(op),
            parts: Vec::new(),
            ends: Vec::new(),
            order: Vec::new(),
            next: 0,
            at: Unwound::default(),
            undone: 0,
        })
    }

    /// The next key to write back, its changes above the version already removed from the
    /// history; `None` when the unwind is done.
    pub(crate) fn next(&mut self) -> Result<Option<&Unwound>> {
        loop {
            while self.next < self.order.len() {
                let place = self.order[self.next];
                self.next += 1;
                let part = part_at(&self.parts, &self.ends, place);
                // A key changed at several versions of the batch is undone once.
                if self.next >= 2
                    && part_at(&self.parts, &self.ends, self.order[self.next - 2]) == part
                {
                    continue;
                }
                let what = (self.shared, self.source, self.version, self.form, self.dup);
                if take(&mut self.keyed, &mut self.at, what, part)? {
                    return Ok(Some(&self.at));
                }
            }
            if self.op.is_none() {
                return Ok(None);
            }
            self.fill_batch()?;
        }
    }

    /// How many changes the unwind removed (log entries deleted).
    pub(crate) fn undone(&self) -> u64 {
        self.undone
    }

    /// Walks the log down, deleting each entry above the version, until a batch is collected
    /// or the walk is done; then orders the batch by key part.
    fn fill_batch(&mut self) -> Result<()> {
        let (shared, source, version) = (self.shared, self.source, self.version);
        let fail = |code| shared.fail(code, At::table(source, "unwind"));
        self.parts.clear();
        self.ends.clear();
        self.order.clear();
        self.next = 0;
        while let Some(op) = self.op {
            if self.ends.len() == UNWIND_BATCH || self.parts.len() >= UNWIND_BATCH_BYTES {
                break;
            }
            let parts = &mut self.parts;
            let found = self
                .log
                .get_with(op, None, None, |key, _| match parse_log(key) {
                    Some((changed, part)) if changed > version => {
                        parts.extend_from_slice(part);
                        true
                    }
                    _ => false,
                })
                .map_err(fail)?;
            if found != Some(true) {
                self.op = None;
                break;
            }
            // `UNWIND_BATCH_BYTES` and the largest key keep the offsets within 32 bits.
            self.ends.push(self.parts.len() as u32);
            self.log.del(engine::del::CURRENT).map_err(fail)?;
            self.undone += 1;
            self.op = Some(op::PREV);
        }
        // The keyed space's order is the key parts' byte order. Sorted as numbers first:
        // each part's first bytes after the prefix every collected part shares (twelve and
        // its place among them in one number, when they all fit; sixteen beside the place
        // otherwise), then each run of equal first bytes by all their bytes.
        let (parts, ends) = (&self.parts, &self.ends);
        let entry = |i: u32| part_at(parts, ends, i);
        // `UNWIND_BATCH` keeps the places within 32 bits.
        let n = ends.len() as u32;
        let longest = (0..n).map(|i| entry(i).len()).max().unwrap_or(0);
        // Parts of up to twelve bytes (a plain table's integer keys) are sorted from their
        // start; longer ones after the prefix they share.
        let mut shared_prefix = 0;
        if longest > 12 {
            let first = entry(0);
            shared_prefix = first.len();
            for i in 1..n {
                let part = entry(i);
                if part.get(..shared_prefix) != Some(&first[..shared_prefix]) {
                    let same = first.iter().zip(part).take_while(|(a, b)| a == b).count();
                    shared_prefix = shared_prefix.min(same);
                }
            }
        }
        let head = |i: u32| {
            let part = &entry(i)[shared_prefix..];
            let mut head = [0; 16];
            let m = part.len().min(16);
            head[..m].copy_from_slice(&part[..m]);
            u128::from_be_bytes(head)
        };
        self.order = match longest - shared_prefix <= 12 {
            // Twelve bytes and the place in one number.
            true => key_order(
                n,
                entry,
                |i| head(i) | u128::from(i),
                |a, b| a >> 32 == b >> 32,
                |o| o as u32,
            ),
            false => key_order(n, entry, |i| (head(i), i), |a, b| a.0 == b.0, |o| o.1),
        };
        Ok(())
    }
}

/// The key part at `place` of an unwind's batch.
fn part_at<'p>(parts: &'p [u8], ends: &[u32], place: u32) -> &'p [u8] {
    let i = place as usize;
    let start = i.checked_sub(1).map_or(0, |before| ends[before]);
    &parts[start as usize..ends[i] as usize]
}

/// Undoes the key part `part` in an unwind to `version`, through `keyed` (a cursor on the
/// history): its earliest change above `version` copied into `at` with its key decoded, and
/// every change of it above `version` deleted. `false`: none is left (an earlier batch undid
/// the key).
fn take(
    keyed: &mut RawCursorMut<'_>,
    at: &mut Unwound,
    (shared, source, version, form, dup): (&Shared, &'static str, u64, Form, bool),
    part: &[u8],
) -> Result<bool> {
    let fail = |code| shared.fail(code, At::table(source, "unwind").key(part));
    let seek = keyed_key(part, version.saturating_add(1));
    let change = &mut at.change;
    let found = keyed
        .get_with(op::SET_RANGE, Some(seek.as_slice()), None, |key, value| {
            let of_part = parse_keyed(key).is_some_and(|(p, _)| p == part);
            of_part.then(|| {
                change.clear();
                change.extend_from_slice(value);
            })
        })
        .map_err(fail)?
        .flatten();
    if found.is_none() {
        return Ok(false);
    }
    let valid = match dup {
        true => befores_of(&at.change).is_some(),
        false => before_of(&at.change).is_some(),
    };
    if !valid {
        // A mark is below the horizon, which the unwind's check keeps at most one above it.
        return Err(damaged(source, "a change", seek.as_slice()));
    }
    // The change found, then the key's later ones: one run.
    loop {
        keyed.del(engine::del::CURRENT).map_err(fail)?;
        let more = match keyed.get_with(op::GET_CURRENT, None, None, |key, _| {
            parse_keyed(key).is_some_and(|(p, _)| p == part)
        }) {
            Ok(more) => more == Some(true),
            // The table's last entry was deleted.
            Err(code) if code == engine::Code::ENODATA => false,
            Err(code) => return Err(fail(code)),
        };
        if !more {
            break;
        }
    }
    let (k, sub) = match dup {
        true => form.split_unit(source, part)?,
        false => {
            let k = form
                .key_of(part)
                .ok_or_else(|| damaged(source, "a change's key", part))?;
            (k, Cow::Borrowed(&[][..]))
        }
    };
    at.key.clear();
    at.key.extend_from_slice(&k);
    at.sub.clear();
    at.sub.extend_from_slice(&sub);
    Ok(true)
}

/// The places `0..n` of an unwind's collected key parts (`entry`: a place's part) in the
/// keyed space's order: sorted as numbers first, each place by its `number` (the first bytes
/// of its part after the prefix they all share, zeros after its end, and the place), then each
/// run of numbers whose heads are the `same` by the parts' bytes; `place` takes a place back
/// out of its number.
fn key_order<'k, H: Ord + Copy>(
    n: u32,
    entry: impl Fn(u32) -> &'k [u8],
    number: impl Fn(u32) -> H,
    same: impl Fn(&H, &H) -> bool,
    place: impl Fn(H) -> u32,
) -> Vec<u32> {
    let mut order: Vec<H> = (0..n).map(number).collect();
    order.sort_unstable();
    for run in order.chunk_by_mut(|a, b| same(a, b)) {
        if run.len() > 1 {
            run.sort_unstable_by(|a, b| entry(place(*a)).cmp(entry(place(*b))));
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
/// keeps its highest pruned change with an empty value: its mark, which a read as of an
/// earlier version finds first and refuses (`read::as_of`), while a read as of a later one
/// never meets it. Returns how many changes were deleted (fewer than `limit`: the
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
    // One cursor walks the log from its first entry, deleting each entry below `below`; the
    // other turns the entry's change into its key's mark (an empty value) and deletes the
    // key's previous mark. The log goes in version order, so a key's changes below a pruned
    // one were pruned before it: the one left of them (its mark) is just before it. The
    // marks go first, so that the walking cursor's next move is the one that follows its own
    // delete.
    let lent = raw.lend();
    let mut log = lent.cursor(history, shared.cursors()).map_err(fail)?;
    let mut marks = lent.cursor(history, shared.cursors()).map_err(fail)?;
    let mut part = Vec::new();
    let mut pruned = 0;
    let mut op = op::FIRST;
    while pruned < limit {
        let change = match log.get_with(op, None, None, |k, _| match parse_log(k) {
            Some((version, p)) if version < below => {
                part.clear();
                part.extend_from_slice(p);
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
        let fail = |code| shared.fail(code, At::table(source, "prune history").key(&part));
        let key = keyed_key(&part, version);
        let found = marks
            .get_with(op::SET_KEY, Some(key.as_slice()), None, |_, _| ())
            .map_err(fail)?;
        if found.is_some() {
            marks
                .put(key.as_slice(), &[], engine::put::UPSERT)
                .map_err(fail)?;
            let earlier = marks
                .get_with(op::PREV, None, None, |k, v| {
                    is_mark(v) && parse_keyed(k).is_some_and(|(p, _)| p == part.as_slice())
                })
                .map_err(fail)?;
            if earlier == Some(true) {
                marks.del(engine::del::CURRENT).map_err(fail)?;
            }
        }
        log.del(engine::del::CURRENT).map_err(fail)?;
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
    fn a_units_values_before_read_back() {
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
        assert_eq!(before_of(&[]), None, "a mark is no change");
    }

    /// Every form's key parts: decoded back, and sorted by (key part, version) they keep each
    /// key's entries together in version order, and keys in their byte order.
    #[test]
    fn key_parts_parse_back_and_keep_each_keys_changes_together() {
        let fixed = Form {
            width: Some(2),
            unit: Unit::None,
        };
        let open = Form {
            width: None,
            unit: Unit::None,
        };
        let units = Form {
            width: Some(2),
            unit: Unit::Delimited,
        };
        let whole = Form {
            width: None,
            unit: Unit::Escaped,
        };
        type Keys = Vec<(&'static [u8], &'static [u8])>;
        let cases: [(Form, Keys); 4] = [
            (
                fixed,
                vec![
                    (b"\0\0", b""),
                    (b"a\0", b""),
                    (b"ab", b""),
                    (b"\xff\xff", b""),
                ],
            ),
            (
                open,
                vec![
                    (b"", b""),
                    (b"a", b""),
                    (b"a\0", b""),
                    (b"ab", b""),
                    (b"b", b""),
                ],
            ),
            (
                units,
                vec![(b"k\0", b"\x01"), (b"k\0", b"\x02"), (b"k\x01", b"\x01")],
            ),
            (
                whole,
                vec![
                    (b"k", b""),
                    (b"k", b"\0"),
                    (b"k", b"a"),
                    (b"k", b"ab"),
                    (b"k\0", b""),
                ],
            ),
        ];
        for (form, keys) in cases {
            let mut entries = Vec::new();
            for (i, (k, sub)) in keys.iter().enumerate() {
                let part = form.key_part(k, sub);
                let part = part.as_slice();
                match form.unit {
                    Unit::None => assert_eq!(form.key_of(part).as_deref(), Some(*k)),
                    _ => {
                        let (kk, ss) = form.unit_of(part).unwrap();
                        assert_eq!((&*kk, &*ss), (*k, *sub));
                    }
                }
                assert!(form.key_start(k).as_slice().len() <= part.len());
                assert!(part.starts_with(form.key_start(k).as_slice()));
                for version in [0, 1, 256, u64::MAX] {
                    entries.push((keyed_key(part, version).as_slice().to_vec(), i, version));
                    let (p, v) = parse_keyed(entries.last().unwrap().0.as_slice()).unwrap();
                    assert_eq!((p, v), (part, version));
                    let log = log_key(version, part);
                    assert_eq!(parse_log(log.as_slice()), Some((version, part)));
                }
            }
            let mut sorted = entries.clone();
            sorted.sort();
            let order: Vec<_> = sorted.iter().map(|(_, i, v)| (*i, *v)).collect();
            let mut want: Vec<_> = entries.iter().map(|(_, i, v)| (*i, *v)).collect();
            want.sort();
            assert_eq!(order, want, "{form:?}");
        }
        assert_eq!(&log_from(3)[..], log_key(3, b"").as_slice());
    }

    #[test]
    fn fixed_sizes_are_the_parsed_shapes() {
        use crate::codec::Key;
        use crate::codec::untyped::KeyShape;
        use crate::schema::Descriptor;
        const FIELDS: &[(&str, Descriptor)] =
            &[("a", Descriptor::Array(20)), ("b", Descriptor::Signed(32))];
        const OPEN: &[(&str, Descriptor)] =
            &[("a", Descriptor::Unsigned(8)), ("b", Descriptor::Str)];
        let all = [
            Descriptor::Unit,
            Descriptor::Bool,
            Descriptor::Unsigned(8),
            Descriptor::Unsigned(128),
            Descriptor::Signed(64),
            Descriptor::Char,
            Descriptor::Array(32),
            Descriptor::Bytes,
            Descriptor::Str,
            Descriptor::NativeInteger(32),
            Descriptor::NativeInteger(64),
            <Option<u8>>::DESCRIPTOR,
            <(u64, [u8; 20], bool, char, ())>::DESCRIPTOR,
            <(u64, String)>::DESCRIPTOR,
            <((u8, u16), u32)>::DESCRIPTOR,
            Descriptor::Struct {
                name: "S",
                fields: FIELDS,
            },
            Descriptor::Struct {
                name: "T",
                fields: OPEN,
            },
            Descriptor::Custom("key-v1"),
            Descriptor::Bincode,
        ];
        for d in all {
            let parsed = KeyShape::of(&d).and_then(|shape| shape.fixed_size());
            assert_eq!(d.fixed_size(), parsed, "{d}");
        }
        assert_eq!(
            <(u64, [u8; 20], bool, char, ())>::DESCRIPTOR.fixed_size(),
            Some(33)
        );
    }
}
