//! Reads of a history table as of a version, on the stored bytes: one value ([`as_of`]), a
//! key's versions ([`versions`]) and one version's changes ([`changes_at`]). Their typed forms
//! are `versions.rs`'s.

use crate::engine::{Dbi, RawTxn, op};
use crate::error::{At, Error, Result};

use super::{
    Cx, Form, HORIZON, PENDING, StoredChange, StoredUnitChange, WHOLE, before_of, befores_of,
    damaged, is_mark, keyed_key, keyed_prefix, log_from, parse_keyed, parse_log, version_of,
};
use crate::index::Store;
use crate::table::Table;

/// What a key held at the end of a version.
enum AsOf<'t> {
    /// What it holds now: it has not changed since.
    Current,
    /// What its first change after the version recorded of the value before it (the change's
    /// value: [`before_of`], or for a `dupsort` table [`befores_of`]).
    Held(&'t [u8]),
}

/// The stored value before a change of table `source` whose key is `key` and value `change`.
pub(crate) fn before<'c>(
    source: &'static str,
    key: &[u8],
    change: &'c [u8],
) -> Result<Option<&'c [u8]>> {
    before_of(change).ok_or_else(|| damaged(source, "a change", key))
}

/// The stored values before a change of a unit of the `dupsort` table `source`.
pub(crate) fn befores<'c>(
    source: &'static str,
    key: &[u8],
    change: &'c [u8],
) -> Result<Vec<&'c [u8]>> {
    befores_of(change).ok_or_else(|| damaged(source, "a change", key))
}

/// The horizon of the history (`None`: none stored, nothing was pruned).
fn horizon(
    raw: &RawTxn,
    shared: &impl Cx,
    source: &'static str,
    history: Dbi,
) -> Result<Option<u64>> {
    let horizon = raw
        .get(history, &HORIZON)
        .map_err(|code| shared.fail(code, At::table(source, "read as of a version")))?;
    horizon
        .map(|h| version_of(h).ok_or_else(|| damaged(source, "the horizon", &HORIZON)))
        .transpose()
}

/// Refuses a read as of `version` when the history no longer holds every change after it
/// (or, added to a populated table, has not recorded a version yet).
pub(crate) fn check_horizon(
    raw: &RawTxn,
    shared: &impl Cx,
    source: &'static str,
    history: Dbi,
    version: u64,
) -> Result<()> {
    match horizon(raw, shared, source, history)? {
        Some(PENDING) => Err(Error::HistoryNotStarted {
            table: source,
            version,
        }),
        Some(horizon) if version.saturating_add(1) < horizon => Err(Error::BelowHorizon {
            table: source,
            version,
            horizon,
        }),
        _ => Ok(()),
    }
}

/// The check of an unwind to `version`: [`check_horizon`], except that a history added to a
/// populated table that recorded nothing yet has nothing to unwind.
pub(crate) fn check_unwind(
    raw: &RawTxn,
    shared: &impl Cx,
    source: &'static str,
    history: Dbi,
    version: u64,
) -> Result<()> {
    match horizon(raw, shared, source, history)? {
        Some(PENDING) => Ok(()),
        _ => check_horizon(raw, shared, source, history, version),
    }
}

/// Refuses a read as of `version` below the horizon of a history added to a populated table,
/// which bounds the reads of every key (nothing is known of the rows before it). A history
/// created with its table bounds only the reads of keys whose changes were pruned (their
/// marks, [`as_of`]).
pub(crate) fn check_whole(
    raw: &RawTxn,
    shared: &impl Cx,
    source: &'static str,
    history: Dbi,
    version: u64,
) -> Result<()> {
    if !shared.may_be_whole() {
        return Ok(());
    }
    let whole = raw
        .get(history, &WHOLE)
        .map_err(|code| shared.fail(code, At::table(source, "read as of a version")))?;
    match whole {
        Some(_) => check_horizon(raw, shared, source, history, version),
        None => Ok(()),
    }
}

/// What the key part `part` of table `source` held at the end of `version`: one search, for
/// the key's first change above `version`, whose value holds it. A mark found there (the key's
/// highest pruned change, `prune_batch`) means a change of the key after `version` is gone,
/// and the read is refused. No other read is made: a key none of whose changes were pruned
/// reads exactly at any version.
fn as_of<'t>(
    raw: &'t RawTxn,
    shared: &'t impl Cx,
    source: &'static str,
    history: Dbi,
    part: &[u8],
    version: u64,
) -> Result<AsOf<'t>> {
    check_whole(raw, shared, source, history, version)?;
    let Some(after) = version.checked_add(1) else {
        return Ok(AsOf::Current);
    };
    let fail = |code| shared.fail(code, At::table(source, "read as of a version").key(part));
    let seek = keyed_key(part, after);
    let seek = seek.as_slice();
    let prefix = &seek[..seek.len() - 8];
    let mut cursor = shared.cursor(raw, history).map_err(fail)?;
    let found = cursor.get(op::SET_RANGE, Some(seek), None).map_err(fail)?;
    // The key's first change above `version`: its key part, then the version.
    match found {
        Some((entry, value)) if entry.len() == seek.len() && entry.starts_with(prefix) => {
            if is_mark(value) {
                check_horizon(raw, shared, source, history, version)?;
                return Err(damaged(source, "a mark above the horizon", entry));
            }
            Ok(AsOf::Held(value))
        }
        _ => Ok(AsOf::Current),
    }
}

/// The stored value under `k` of table `source` (handle `table`; its history `history` of
/// form `form`) at the end of `version`: what its history recorded ([`as_of`]), or what the
/// table holds now.
pub(crate) fn value_at<'t>(
    raw: &'t RawTxn,
    shared: &'t impl Cx,
    (source, table, history): (&'static str, Dbi, Dbi),
    form: Form,
    k: &[u8],
    version: u64,
) -> Result<Option<&'t [u8]>> {
    match as_of(raw, shared, source, history, &form.plain_part(k), version)? {
        AsOf::Held(held) => before(source, k, held),
        AsOf::Current => raw
            .get(table, k)
            .map_err(|code| shared.fail(code, At::table(source, "read as of a version").key(k))),
    }
}

/// The stored values of the unit `sub` of the stored key `k` of the `dupsort` table `T`
/// (handles `table` and `history`) at the end of `version`, in their order: what its history
/// recorded ([`as_of`] of the unit's history key), or what the table holds now.
pub(crate) fn unit_at<T: Table>(
    raw: &RawTxn,
    shared: &impl Cx,
    dbis: (Dbi, Dbi),
    unit: (&[u8], &[u8]),
    version: u64,
) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    unit_at_each::<T>(raw, shared, dbis, unit, version, |v| {
        out.push(v.to_vec());
        Ok(())
    })?;
    Ok(out)
}

/// [`unit_at`] handing each stored value to `each` (in the page, or in the change), without a
/// copy.
pub(crate) fn unit_at_each<T: Table>(
    raw: &RawTxn,
    shared: &impl Cx,
    (table, history): (Dbi, Dbi),
    (k, sub): (&[u8], &[u8]),
    version: u64,
    each: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let unit = const { Form::of::<T>() }.key_part(k, sub);
    let unit = unit.as_slice();
    match as_of(raw, shared, T::NAME, history, unit, version)? {
        AsOf::Held(held) => befores(T::NAME, unit, held)?.into_iter().try_for_each(each),
        AsOf::Current => {
            let fail = |code| shared.fail(code, At::of::<T>("read as of a version").key(k));
            let mut cursor = shared.cursor(raw, table).map_err(fail)?;
            super::unit_values_each::<T, Error>(&mut cursor, k, sub, each).map_err(fail)?
        }
    }
}

/// The stored values of the key `k` of the `dupsort` table `T` at the end of `version`, in
/// their order: its values now, each unit that changed after `version` set to what it held
/// then.
pub(crate) fn key_at<T: Table>(
    raw: &RawTxn,
    shared: &impl Cx,
    dbis: (Dbi, Dbi),
    k: &[u8],
    version: u64,
) -> Result<Vec<Vec<u8>>> {
    let form = const { Form::of::<T>() };
    let unit = |v: &[u8]| super::unit_of::<T>(k, v);
    key_at_with(raw, shared, (T::NAME, form, unit), dbis, k, version)
}

/// [`key_at`] of the `dupsort` table `source` whose history has the form `form`, `unit`
/// telling the length of a stored value's unit (the table's `Table::DUP_UNIT`, or what the
/// schema-less reader works out from the recorded shape).
pub(crate) fn key_at_with(
    raw: &RawTxn,
    shared: &impl Cx,
    (source, form, unit): (&'static str, Form, impl Fn(&[u8]) -> Result<usize>),
    (table, history): (Dbi, Dbi),
    k: &[u8],
    version: u64,
) -> Result<Vec<Vec<u8>>> {
    let fail = |code| shared.fail(code, At::table(source, "read as of a version").key(k));
    // The key's values now, by unit (a unit's bytes sort as its values do).
    let mut units: std::collections::BTreeMap<Vec<u8>, Vec<Vec<u8>>> = Default::default();
    let mut from = Vec::new();
    while let Some(v) = raw.store_get_dup_ge(table, k, &from).map_err(fail)? {
        let sub = v[..unit(&v)?].to_vec();
        from.clear();
        from.extend_from_slice(&v);
        from.push(0);
        units.entry(sub).or_default().push(v);
    }
    let head = form.key_start(k);
    let head = head.as_slice();
    changed_after(
        raw,
        shared,
        (source, history),
        (Some(form.key_start(k)), version),
        |unit| unit.starts_with(head).then_some(true),
        |unit, held| {
            let values = befores(source, unit, held)?;
            let (_, sub) = form.split_unit(source, unit)?;
            let sub = sub.into_owned();
            match values.is_empty() {
                true => units.remove(&sub),
                false => units.insert(sub, values.into_iter().map(<[u8]>::to_vec).collect()),
            };
            Ok(())
        },
    )?;
    Ok(units.into_values().flatten().collect())
}

/// The versions at which the key part `part` of table `source` changed, in increasing order.
pub(crate) fn versions(
    raw: &RawTxn,
    shared: &impl Cx,
    source: &'static str,
    history: Dbi,
    part: &[u8],
) -> Result<Vec<u64>> {
    let fail = |code| shared.fail(code, At::table(source, "versions").key(part));
    // A key's mark (its highest pruned change, `prune_batch`) is below the horizon.
    let horizon = match raw.get(history, &HORIZON).map_err(fail)? {
        Some(bytes) => version_of(bytes).ok_or_else(|| damaged(source, "the horizon", &HORIZON))?,
        None => 0,
    };
    let prefix = keyed_prefix(part);
    let prefix = prefix.as_slice();
    let mut cursor = shared.cursor(raw, history).map_err(fail)?;
    let mut out = Vec::new();
    let mut at = cursor
        .get(op::SET_RANGE, Some(prefix), None)
        .map_err(fail)?;
    while let Some((entry, value)) = at {
        // No key part is a prefix of another: an entry that starts with the prefix is the key's.
        if !entry.starts_with(prefix) {
            break;
        }
        let (_, version) =
            parse_keyed(entry).ok_or_else(|| damaged(source, "a change's key", entry))?;
        if version >= horizon && !is_mark(value) {
            out.push(version);
        }
        at = cursor.get(op::NEXT, None, None).map_err(fail)?;
    }
    Ok(out)
}

/// The changes of `version` in table `source` (its history of form `form`): each stored key
/// changed and the value it held before, in key order.
pub(crate) fn changes_at(
    raw: &RawTxn,
    shared: &impl Cx,
    source: &'static str,
    (history, form): (Dbi, Form),
    version: u64,
) -> Result<Vec<StoredChange>> {
    let mut out = Vec::new();
    changes_of(raw, shared, (source, history), version, |part, change| {
        let k = form
            .key_of(part)
            .ok_or_else(|| damaged(source, "a change's key", part))?;
        let before = before(source, &k, change)?;
        out.push((k.into_owned(), before.map(<[u8]>::to_vec)));
        Ok(())
    })?;
    Ok(out)
}

/// The changes of `version` in the `dupsort` table `source`: each unit changed (its key part,
/// [`Form::key_part`]) and the stored values it held before, in (key, unit) order.
pub(crate) fn unit_changes_at(
    raw: &RawTxn,
    shared: &impl Cx,
    source: &'static str,
    history: Dbi,
    version: u64,
) -> Result<Vec<StoredUnitChange>> {
    let mut out = Vec::new();
    changes_of(raw, shared, (source, history), version, |unit, change| {
        let values = befores(source, unit, change)?;
        out.push((
            unit.to_vec(),
            values.into_iter().map(<[u8]>::to_vec).collect(),
        ));
        Ok(())
    })?;
    Ok(out)
}

/// Hands `each` the key part and the value of every change of `version`, in key order: the
/// log's entries of `version`, each change found under its key part (a second cursor, which
/// the log's key order keeps moving forward).
fn changes_of(
    raw: &RawTxn,
    shared: &impl Cx,
    (source, history): (&'static str, Dbi),
    version: u64,
    mut each: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    let fail = |code| shared.fail(code, At::table(source, "changes of a version"));
    let from = log_from(version);
    let mut log = shared.cursor(raw, history).map_err(fail)?;
    let mut at = log.get(op::SET_RANGE, Some(&from), None).map_err(fail)?;
    while let Some((key, _)) = at {
        match parse_log(key) {
            Some((v, part)) if v == version => {
                let change = keyed_key(part, version);
                match raw.get(history, change.as_slice()).map_err(fail)? {
                    Some(value) if !is_mark(value) => each(part, value)?,
                    _ => return Err(damaged(source, "a log entry without its change", key)),
                }
            }
            _ => break,
        }
        at = log.get(op::NEXT, None, None).map_err(fail)?;
    }
    Ok(())
}

/// Walks the changes of table `source` by key from `from` (the first when `None`;
/// [`keyed_prefix`] of a key part, or of [`Form::key_start`]), in byte order of the key parts,
/// and hands `each` every key part that changed after `version` and that `wanted` takes
/// (`Some(true)`; `Some(false)` skips the key, `None` ends the walk) with the value of its
/// first change after `version`, which holds what it held at the end of `version` ([`before`],
/// [`befores`]). A wanted key whose first change above `version` is its mark (a pruned change)
/// is refused.
pub(crate) fn changed_after(
    raw: &RawTxn,
    shared: &impl Cx,
    (source, history): (&'static str, Dbi),
    (from, version): (Option<crate::codec::KeyBuf>, u64),
    wanted: impl Fn(&[u8]) -> Option<bool>,
    mut each: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    check_whole(raw, shared, source, history, version)?;
    let fail = |code| shared.fail(code, At::table(source, "read a range as of a version"));
    let start = keyed_prefix(from.as_ref().map_or(&[][..], |f| f.as_slice()));
    let mut cursor = shared.cursor(raw, history).map_err(fail)?;
    let mut at = cursor
        .get(op::SET_RANGE, Some(start.as_slice()), None)
        .map_err(fail)?;
    // The key part whose value as of `version` was handed over (its later entries are skipped).
    let mut done: Option<Vec<u8>> = None;
    while let Some((entry, value)) = at {
        if entry.first() != Some(&super::KEYED) {
            break;
        }
        let (part, changed) =
            parse_keyed(entry).ok_or_else(|| damaged(source, "a change's key", entry))?;
        if changed > version && done.as_deref() != Some(part) {
            match wanted(part) {
                None => return Ok(()),
                Some(false) => {}
                Some(true) if is_mark(value) => {
                    check_horizon(raw, shared, source, history, version)?;
                    return Err(damaged(source, "a mark above the horizon", entry));
                }
                Some(true) => each(part, value)?,
            }
            done = Some(part.to_vec());
        }
        at = cursor.get(op::NEXT, None, None).map_err(fail)?;
    }
    Ok(())
}
