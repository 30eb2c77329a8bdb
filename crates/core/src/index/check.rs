//! Checking that every index agrees with its table: each row's entries are in the index, and
//! each index entry names a row that maps back to it ([`Db::check_indexes`](crate::Db::check_indexes)).

use crate::engine::{self, RawTxn};
use crate::error::{At, KeyHex, Result};
use crate::state::Db;
use crate::table::{Schema, TableInfo};

use super::write::entries;

/// One disagreement between an index and its table.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexProblem {
    /// The indexed table.
    pub table: &'static str,
    /// The index.
    pub index: &'static str,
    /// The index key, encoded.
    pub key: KeyHex,
    /// The primary key, as the index stores it.
    pub row: KeyHex,
    /// What is wrong: `"entry missing"` (the row computes this entry, the index lacks it),
    /// `"row missing"` (the entry names a row the table does not have) or `"entry not from
    /// its row"` (the row exists but does not compute this entry).
    pub what: &'static str,
}

impl std::fmt::Display for IndexProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "index `{}` of table `{}`: {} -> {}: {}",
            self.index, self.table, self.key, self.row, self.what
        )
    }
}

/// What [`Db::check_indexes`](crate::Db::check_indexes) found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexCheck {
    /// Index entries read.
    pub entries: u64,
    /// Rows of indexed tables read.
    pub rows: u64,
    /// Problems found, in table then index order, up to the limit asked for.
    pub problems: Vec<IndexProblem>,
    /// Problems found in all (more than `problems` holds when the limit was reached).
    pub problem_count: u64,
}

impl IndexCheck {
    /// Whether every index agrees with its table.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_indexer()?;
    /// assert!(db.check_indexes(10)?.is_ok());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn is_ok(&self) -> bool {
        self.problem_count == 0
    }

    fn push(&mut self, limit: usize, problem: IndexProblem) {
        self.problem_count += 1;
        if self.problems.len() < limit {
            self.problems.push(problem);
        }
    }
}

/// The stored key of the source row a primary key (as an index stores it) names: an
/// `integer_key` table stores it native-endian.
fn stored_key(source: &TableInfo, primary: &[u8]) -> Vec<u8> {
    let mut key = primary.to_vec();
    if source.flags.integer_key && cfg!(target_endian = "little") {
        key.reverse();
    }
    key
}

/// Checks every index of `S` in the transaction `raw`, keeping the first `limit` problems.
pub(crate) fn check<S: Schema>(raw: &RawTxn, db: &Db<S>, limit: usize) -> Result<IndexCheck> {
    let mut out = IndexCheck::default();
    for (at, info) in S::TABLES.iter().enumerate() {
        let Some(index) = info.index else { continue };
        let Some(source_at) = S::TABLES
            .iter()
            .position(|t| t.index.is_none() && t.name == index.source)
        else {
            continue;
        };
        let source = &S::TABLES[source_at];
        let (dbi, source_dbi) = (db.shared.dbis()[at], db.shared.dbis()[source_at]);
        let fail = |code, table, op| db.shared.fail(code, At::table(table, op));
        // Every row's entries are in the index.
        let mut cursor = raw
            .cursor(source_dbi)
            .map_err(|c| fail(c, source.name, "check"))?;
        let mut row = cursor
            .get(engine::op::FIRST, None, None)
            .map_err(|c| fail(c, source.name, "check"))?;
        while let Some((k, v)) = row {
            out.rows += 1;
            for entry in entries(source.name, &index, info.name, k, v)? {
                let found = raw
                    .get_lower_bound(dbi, &entry.key, &entry.primary)
                    .map_err(|c| fail(c, info.name, "check"))?;
                if found != Some((entry.key.as_slice(), entry.primary.as_slice())) {
                    out.push(
                        limit,
                        IndexProblem {
                            table: source.name,
                            index: info.name,
                            key: KeyHex::shown(&entry.key, info.debug_key),
                            row: KeyHex::shown(k, source.debug_key),
                            what: "entry missing",
                        },
                    );
                }
            }
            row = cursor
                .get(engine::op::NEXT, None, None)
                .map_err(|c| fail(c, source.name, "check"))?;
        }
        // Every entry names a row that computes it.
        let mut cursor = raw.cursor(dbi).map_err(|c| fail(c, info.name, "check"))?;
        let mut entry = cursor
            .get(engine::op::FIRST, None, None)
            .map_err(|c| fail(c, info.name, "check"))?;
        while let Some((key, primary)) = entry {
            out.entries += 1;
            let stored = stored_key(source, primary);
            let what = match raw
                .get(source_dbi, &stored)
                .map_err(|c| fail(c, source.name, "check"))?
            {
                None => Some("row missing"),
                Some(v) => {
                    let computed = entries(source.name, &index, info.name, &stored, v)?;
                    (!computed
                        .iter()
                        .any(|e| e.key == key && e.primary == primary))
                    .then_some("entry not from its row")
                }
            };
            if let Some(what) = what {
                out.push(
                    limit,
                    IndexProblem {
                        table: source.name,
                        index: info.name,
                        key: KeyHex::shown(key, info.debug_key),
                        row: KeyHex::shown(&stored, source.debug_key),
                        what,
                    },
                );
            }
            entry = cursor
                .get(engine::op::NEXT, None, None)
                .map_err(|c| fail(c, info.name, "check"))?;
        }
    }
    Ok(out)
}
