//! The check of a history against its own layout (`Reads::check_history`): every change has
//! its index entry and every index entry above the horizon its change; below the horizon a key
//! keeps at most one entry, its mark, whose change is gone; no change is below the horizon or
//! above the last version recorded; every stored key and value before decodes.

use crate::engine::{Dbi, RawTxn, op};
use crate::error::{At, Result};

use super::{
    Cx, HORIZON, INDEX, LAST, before_of, change_key, index_key, parse_change, parse_index,
    version_of,
};

/// What a check of one history found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryCheck {
    /// Changes read.
    pub changes: u64,
    /// History index entries read (marks included).
    pub entries: u64,
    /// Problems found, up to the limit asked for, each naming the entry.
    pub problems: Vec<String>,
    /// Problems found in all.
    pub problem_count: u64,
}

impl HistoryCheck {
    /// Whether the history agrees with its layout.
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

/// Checks the history `history` of table `source`; `decodes(key, value before)` says what of a
/// change does not decode as the table's key and value types.
pub(crate) fn check(
    raw: &RawTxn,
    shared: &impl Cx,
    (source, history): (&'static str, Dbi),
    limit: usize,
    decodes: impl Fn(&[u8], Option<&[u8]>) -> Option<String>,
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
    let mut cursor = shared.cursor(raw, history).map_err(fail)?;
    let mut at = cursor.get(op::FIRST, None, None).map_err(fail)?;
    // The key of the previous index entry below the horizon: a key keeps one mark.
    let mut marked: Option<Vec<u8>> = None;
    while let Some((key, value)) = at {
        match key.first() {
            Some(0) => {
                out.changes += 1;
                let Some((version, k)) = parse_change(key) else {
                    out.push(limit, format!("change {key:02x?}: too short"));
                    at = cursor.get(op::NEXT, None, None).map_err(fail)?;
                    continue;
                };
                let before = before_of(value);
                if before.is_none() {
                    out.push(limit, format!("change of {k:02x?} at {version}: no tag"));
                }
                if let Some(problem) = decodes(k, before.flatten()) {
                    out.push(limit, format!("change of {k:02x?} at {version}: {problem}"));
                }
                if version < horizon {
                    out.push(
                        limit,
                        format!("change of {k:02x?} at {version}: below the horizon {horizon}"),
                    );
                }
                if last.is_none_or(|last| version > last) {
                    out.push(
                        limit,
                        format!("change of {k:02x?} at {version}: above the last version {last:?}"),
                    );
                }
                if raw
                    .get(history, index_key(k, version).as_slice())
                    .map_err(fail)?
                    .is_none()
                {
                    out.push(
                        limit,
                        format!("change of {k:02x?} at {version}: no index entry"),
                    );
                }
            }
            Some(&INDEX) => {
                out.entries += 1;
                let Some((k, version)) = parse_index(key) else {
                    out.push(
                        limit,
                        format!("index entry {key:02x?}: not a key and a version"),
                    );
                    at = cursor.get(op::NEXT, None, None).map_err(fail)?;
                    continue;
                };
                if !value.is_empty() {
                    out.push(
                        limit,
                        format!("index entry of {k:02x?} at {version}: a value"),
                    );
                }
                let change = raw
                    .get(history, change_key(version, &k).as_slice())
                    .map_err(fail)?;
                if version >= horizon {
                    if change.is_none() {
                        out.push(
                            limit,
                            format!("index entry of {k:02x?} at {version}: no change"),
                        );
                    }
                } else {
                    if change.is_some() {
                        out.push(
                            limit,
                            format!("mark of {k:02x?} at {version}: its change is still there"),
                        );
                    }
                    if marked.as_deref() == Some(&k[..]) {
                        out.push(limit, format!("key {k:02x?}: two marks below the horizon"));
                    }
                    marked = Some(k);
                }
            }
            Some(2..=4) if key.len() == 1 => {}
            _ => out.push(
                limit,
                format!("entry {key:02x?}: not of a history's layout"),
            ),
        }
        at = cursor.get(op::NEXT, None, None).map_err(fail)?;
    }
    Ok(out)
}
