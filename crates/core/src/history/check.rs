//! The check of a history against its own layout (`Reads::check_history`): every change has
//! its log entry and every log entry its change; a mark (a pruned change) is below the horizon,
//! has no log entry, and is its key's earliest entry, one a key at most; the changes a prune
//! in progress has left below the horizon are all after every pruned one (a prune goes in
//! version order); no change is above the last version recorded; every stored key and value
//! before decodes.
//!
//! Then against the table's rows, for a history that recorded the table from its creation:
//! replaying its changes from an empty table must give the rows, so every row's key has an
//! entry in the keyed space (a change, or the mark of pruned ones), and a key whose earliest
//! entry is a change had no value before it. Of a history added to a populated table, nothing
//! is known of the rows before its start, so its rows are not checked. The after-values are
//! not stored (each is the next change's before-value, or the row): a row overwritten or
//! deleted behind the history's back cannot be told from one its last change wrote.

use crate::engine::{Dbi, RawTxn, op};
use crate::error::{At, Result};

use super::{
    Cx, Form, HORIZON, KEYED, LAST, LOG, WHOLE, before_of, befores_of, is_mark, keyed_key,
    keyed_prefix, log_key, parse_keyed, parse_log, version_of,
};

/// How a checked table holds its rows, which says what its history's keys are.
#[derive(Clone, Copy)]
pub(crate) enum Rows {
    /// One value a key: the history's keys are the stored keys.
    Plain,
    /// `dupsort`: the history's keys are units (`Form::key_part`), each stored value's unit found by
    /// the function (`Table::DUP_UNIT`), or by key alone when it is not known (`None`: the
    /// schema-less check, which then checks that each key has some unit in the history).
    Dup(Option<UnitFn>),
}

/// [`Table::DUP_UNIT`](crate::table::Table::DUP_UNIT): the length of a stored value's unit.
pub(crate) type UnitFn = fn(&[u8]) -> Option<usize>;

/// What a check of one history found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryCheck {
    /// Log entries read: the changes the history holds, one each.
    pub changes: u64,
    /// Entries of the history's keyed space read: the changes by key, marks included.
    pub entries: u64,
    /// The table's rows checked against the history: every row, unless the history was added
    /// to a populated table (its rows from before the start cannot be checked: none then).
    pub rows: u64,
    /// Problems found, up to the limit asked for, each naming the entry.
    pub problems: Vec<String>,
    /// Problems found in all.
    pub problem_count: u64,
}

impl HistoryCheck {
    /// Whether the history agrees with its layout and with its table's rows.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// assert!(db.read()?.check_history::<Ledger>(10)?.is_ok());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn is_ok(&self) -> bool {
        self.problem_count == 0
    }

    fn push(&mut self, limit: usize, problem: String) {
        self.problem_count += 1;
        if self.problems.len() < limit {
            self.problems.push(problem);
        }
    }
}

/// Checks the history `history` (of form `form`) of table `source` (handle `table`, holding
/// its rows as `rows` says); `decodes(key part, value before)` says what of a change does not
/// decode as the table's key and value types (of a `dupsort` table: the unit's key part, and
/// each value before, or `None` when it held none), `show` shows a stored key in a problem.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check(
    raw: &RawTxn,
    shared: &impl Cx,
    (source, table, history): (&'static str, Dbi, Dbi),
    (form, rows): (Form, Rows),
    limit: usize,
    decodes: impl Fn(&[u8], Option<&[u8]>) -> Option<String>,
    show: impl Fn(&[u8]) -> String,
) -> Result<HistoryCheck> {
    let fail = |code| shared.fail(code, At::table(source, "check history"));
    let mut out = HistoryCheck::default();
    let read_version = |key: &[u8]| -> Result<Option<Option<u64>>> {
        Ok(raw.get(history, key).map_err(fail)?.map(version_of))
    };
    let horizon = match read_version(&HORIZON)? {
        Some(Some(v)) => v,
        Some(None) => {
            out.push(limit, "the horizon is not a version (8 bytes)".to_string());
            0
        }
        None => 0,
    };
    let last = match read_version(&LAST)? {
        Some(Some(v)) => Some(v),
        Some(None) => {
            out.push(
                limit,
                "the last version is not a version (8 bytes)".to_string(),
            );
            None
        }
        None => None,
    };
    // Recorded from the table's creation: its rows are checked against it.
    let from_creation = raw.get(history, &WHOLE).map_err(fail)?.is_none();
    let mut cursor = shared.cursor(raw, history).map_err(fail)?;
    let mut at = cursor.get(op::FIRST, None, None).map_err(fail)?;
    // The first change left below the horizon (changes come in version order): a prune in
    // progress has deleted every change before it, none after it.
    let mut unpruned: Option<(u64, Vec<u8>)> = None;
    // The last pruned change (its key's mark) in version order.
    let mut pruned: Option<(u64, Vec<u8>)> = None;
    // The key part of the previous change, and whether that change was a mark.
    let mut previous: Option<(Vec<u8>, bool)> = None;
    while let Some((key, value)) = at {
        match key.first() {
            Some(&LOG) => {
                out.changes += 1;
                let Some((version, k)) = parse_log(key) else {
                    out.push(limit, format!("log entry {key:02x?}: too short"));
                    at = cursor.get(op::NEXT, None, None).map_err(fail)?;
                    continue;
                };
                if !value.is_empty() {
                    out.push(
                        limit,
                        format!("log entry of {k:02x?} at {version}: a value"),
                    );
                }
                if version < horizon && unpruned.is_none() {
                    unpruned = Some((version, k.to_vec()));
                }
                if last.is_none_or(|last| version > last) {
                    out.push(
                        limit,
                        format!("change of {k:02x?} at {version}: above the last version {last:?}"),
                    );
                }
                let change = raw
                    .get(history, keyed_key(k, version).as_slice())
                    .map_err(fail)?;
                match change {
                    None => out.push(
                        limit,
                        format!("log entry of {k:02x?} at {version}: no change"),
                    ),
                    Some(change) if is_mark(change) => out.push(
                        limit,
                        format!("log entry of {k:02x?} at {version}: its change is a mark"),
                    ),
                    Some(_) => {}
                }
            }
            Some(&KEYED) => {
                out.entries += 1;
                let Some((k, version)) = parse_keyed(key) else {
                    out.push(limit, format!("change {key:02x?}: not a key and a version"));
                    at = cursor.get(op::NEXT, None, None).map_err(fail)?;
                    continue;
                };
                let k = k.to_vec();
                let logged = raw
                    .get(history, log_key(version, &k).as_slice())
                    .map_err(fail)?
                    .is_some();
                let earliest = previous.as_ref().is_none_or(|(p, _)| *p != k);
                let mark = is_mark(value);
                if mark {
                    // A mark: its key's highest pruned change, so its earliest entry.
                    if version >= horizon {
                        out.push(
                            limit,
                            format!("mark of {k:02x?} at {version}: not below the horizon"),
                        );
                    }
                    if logged {
                        out.push(limit, format!("mark of {k:02x?} at {version}: a log entry"));
                    }
                    if !earliest {
                        let what = match previous {
                            Some((_, true)) => "two marks",
                            _ => "a mark after a change",
                        };
                        out.push(limit, format!("key {k:02x?}: {what}"));
                    }
                    if pruned.as_ref().is_none_or(|p| (version, &k) > (p.0, &p.1)) {
                        pruned = Some((version, k.clone()));
                    }
                } else {
                    if !logged {
                        out.push(
                            limit,
                            format!("change of {k:02x?} at {version}: no log entry"),
                        );
                    }
                    let befores = match rows {
                        Rows::Plain => before_of(value).map(|b| b.into_iter().collect()),
                        Rows::Dup(_) => befores_of(value),
                    };
                    if befores.is_none() {
                        out.push(limit, format!("change of {k:02x?} at {version}: no tag"));
                    }
                    let befores: Vec<&[u8]> = befores.unwrap_or_default();
                    let problem = match befores.is_empty() {
                        true => decodes(&k, None),
                        false => befores.iter().find_map(|b| decodes(&k, Some(b))),
                    };
                    if let Some(problem) = problem {
                        out.push(limit, format!("change of {k:02x?} at {version}: {problem}"));
                    }
                    // Replayed from an empty table, the key's first change creates its row.
                    if earliest && from_creation && !befores.is_empty() {
                        let shown = match form.split_key(&k) {
                            Some((stored, _)) => show(&stored),
                            None => format!("{k:02x?}"),
                        };
                        out.push(
                            limit,
                            format!(
                                "row of `{source}` at key {shown}: its first change, at version \
                                 {version}, has a value before it, though the history \
                                 recorded the table from its creation (a row written \
                                 without recording it)"
                            ),
                        );
                    }
                }
                previous = Some((k, mark));
            }
            Some(2..=4) if key.len() == 1 => {}
            _ => out.push(
                limit,
                format!("entry {key:02x?}: not of a history's layout"),
            ),
        }
        at = cursor.get(op::NEXT, None, None).map_err(fail)?;
    }
    drop(cursor);
    if let (Some((version, k)), Some((mv, mk))) = (&unpruned, &pruned)
        && (version, k) < (mv, mk)
    {
        out.push(
            limit,
            format!(
                "change of {k:02x?} at {version}: below the horizon {horizon}, and before the \
                 pruned change of {mk:02x?} at {mv} (a prune goes in version order)"
            ),
        );
    }
    if from_creation {
        check_rows(
            raw,
            shared,
            (source, table, history),
            (form, rows, limit),
            &show,
            &mut out,
        )?;
    }
    Ok(out)
}

/// The rows of table `source` (handle `table`) against its history, recorded from the table's
/// creation: each row's key (of a `dupsort` table, each value's unit) has an entry in the
/// keyed space.
fn check_rows(
    raw: &RawTxn,
    shared: &impl Cx,
    (source, table, history): (&'static str, Dbi, Dbi),
    (form, rows_are, limit): (Form, Rows, usize),
    show: &impl Fn(&[u8]) -> String,
    out: &mut HistoryCheck,
) -> Result<()> {
    let fail = |code| shared.fail(code, At::table(source, "check history"));
    let mut rows = shared.cursor(raw, table).map_err(fail)?;
    let mut index = shared.cursor(raw, history).map_err(fail)?;
    let mut at = rows.get(op::FIRST, None, None).map_err(fail)?;
    while let Some((k, v)) = at {
        out.rows += 1;
        let prefix = match rows_are {
            Rows::Plain => keyed_prefix(form.key_part(k, &[]).as_slice()),
            Rows::Dup(Some(unit)) => match unit(v) {
                Some(n) => keyed_prefix(form.key_part(k, &v[..n]).as_slice()),
                None => {
                    out.push(
                        limit,
                        format!(
                            "row of `{source}` at key {}: its subkey does not decode",
                            show(k)
                        ),
                    );
                    at = rows.get(op::NEXT, None, None).map_err(fail)?;
                    continue;
                }
            },
            Rows::Dup(None) => keyed_prefix(form.key_start(k).as_slice()),
        };
        let entry = index
            .get(op::SET_RANGE, Some(prefix.as_slice()), None)
            .map_err(fail)?;
        if !entry.is_some_and(|(entry, _)| entry.starts_with(prefix.as_slice())) {
            out.push(
                limit,
                format!(
                    "row of `{source}` at key {}: not in the history, which recorded the table \
                     from its creation (a row written without recording it)",
                    show(k)
                ),
            );
        }
        at = rows.get(op::NEXT, None, None).map_err(fail)?;
    }
    Ok(())
}
