//! The writes of an indexed table: a row and every index entry it changes, in the same write
//! transaction, with unique keys checked before anything is written.

use crate::db::state::Db;
use crate::engine::{self, Code, Dbi, RawTxn};
use crate::error::{At, Error, KeyHex, Part, Result};
use crate::table::{EntriesError, IndexInfo, RawEntry, Schema, Table};

use super::indexes_on;

/// One index of the table being written, with the entries of the old and the new row.
struct Change {
    dbi: Dbi,
    name: &'static str,
    unique: bool,
    removed: Vec<RawEntry>,
    added: Vec<RawEntry>,
}

/// The entries of the stored row `(k, v)` of table `table` in `index` (named `name`).
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

/// `a` without the entries of `b` (both sorted).
fn minus(a: &[RawEntry], b: &[RawEntry]) -> Vec<RawEntry> {
    a.iter()
        .filter(|e| b.binary_search(e).is_err())
        .cloned()
        .collect()
}

/// For each index of `T`: the entries the change from `old` to `new` (stored rows under `k`)
/// removes and adds.
fn changes<S: Schema, T: Table>(
    db: &Db<S>,
    k: &[u8],
    old: Option<&[u8]>,
    new: Option<&[u8]>,
) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    for (id, name, index) in indexes_on(S::TABLES, T::NAME) {
        let old = match old {
            Some(v) => entries(T::NAME, &index, name, k, v)?,
            None => Vec::new(),
        };
        let new = match new {
            Some(v) => entries(T::NAME, &index, name, k, v)?,
            None => Vec::new(),
        };
        out.push(Change {
            dbi: db.shared.dbis[id],
            name,
            unique: index.unique,
            removed: minus(&old, &new),
            added: minus(&new, &old),
        });
    }
    Ok(out)
}

/// Fails if an added entry of a unique index names a key another row holds.
fn check_unique<T: Table>(raw: &RawTxn, db: &Db<impl Schema>, changes: &[Change]) -> Result<()> {
    for change in changes.iter().filter(|c| c.unique) {
        for entry in &change.added {
            let held = raw.get(change.dbi, &entry.key).map_err(|code| {
                db.shared
                    .fail(code, At::table(change.name, "get").key(&entry.key))
            })?;
            if let Some(row) = held
                && row != entry.primary.as_slice()
            {
                return Err(Error::UniqueViolation {
                    table: T::NAME,
                    index: change.name,
                    key: KeyHex::new(&entry.key),
                    rows: Box::new([KeyHex::new(row), KeyHex::new(&entry.primary)]),
                });
            }
        }
    }
    Ok(())
}

/// Writes the index entries of `changes` (the row is already written).
fn apply(raw: &mut RawTxn, db: &Db<impl Schema>, changes: &[Change]) -> Result<()> {
    for change in changes {
        for entry in &change.removed {
            let value = (!change.unique).then_some(entry.primary.as_slice());
            raw.del(change.dbi, &entry.key, value).map_err(|code| {
                db.shared
                    .fail(code, At::table(change.name, "delete").key(&entry.key))
            })?;
        }
        for entry in &change.added {
            raw.put(change.dbi, &entry.key, &entry.primary, engine::put::UPSERT)
                .map_err(|code| {
                    db.shared.fail(
                        code,
                        At::table(change.name, "put").entry(&entry.key, entry.primary.len()),
                    )
                })?;
        }
    }
    Ok(())
}

/// Writes the stored row `(k, v)` of the indexed table `T` (handle `dbi`) with `flags`
/// (`UPSERT`, `NOOVERWRITE` or `APPEND_STRICT`), and its index entries: the old row is read,
/// the changed entries computed, unique keys checked, and only then is anything written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn put<S: Schema, T: Table>(
    raw: &mut RawTxn,
    db: &Db<S>,
    dbi: Dbi,
    k: &[u8],
    v: &[u8],
    flags: u32,
    op: &'static str,
) -> Result<()> {
    let appending = flags & engine::put::APPEND != 0;
    // An appended key is after every key, so it has no old row (else the append fails below,
    // before anything is written).
    let old = if appending {
        None
    } else {
        raw.get(dbi, k)
            .map_err(|code| db.shared.fail(code, At::of::<T>(op).key(k)))?
            .map(<[u8]>::to_vec)
    };
    if old.is_some() && flags & engine::put::NOOVERWRITE != 0 {
        return Err(Error::KeyExists {
            table: T::NAME,
            key: KeyHex::new(k),
        });
    }
    let changes = changes::<S, T>(db, k, old.as_deref(), Some(v))?;
    check_unique::<T>(raw, db, &changes)?;
    raw.put(dbi, k, v, flags).map_err(|code| {
        if appending && (code == Code::EKEYMISMATCH || code == Code::KEYEXIST) {
            Error::AppendOutOfOrder {
                table: T::NAME,
                key: KeyHex::new(k),
                last: last_key(raw, dbi),
            }
        } else if code == Code::KEYEXIST {
            Error::KeyExists {
                table: T::NAME,
                key: KeyHex::new(k),
            }
        } else {
            db.shared.fail(code, At::of::<T>(op).entry(k, v.len()))
        }
    })?;
    apply(raw, db, &changes)
}

/// Deletes the row under the stored key `k` of the indexed table `T` and its index entries.
/// Returns whether there was one.
pub(crate) fn delete<S: Schema, T: Table>(
    raw: &mut RawTxn,
    db: &Db<S>,
    dbi: Dbi,
    k: &[u8],
) -> Result<bool> {
    let old = raw
        .get(dbi, k)
        .map_err(|code| db.shared.fail(code, At::of::<T>("delete").key(k)))?
        .map(<[u8]>::to_vec);
    let Some(old) = old else {
        return Ok(false);
    };
    let changes = changes::<S, T>(db, k, Some(&old), None)?;
    raw.del(dbi, k, None)
        .map_err(|code| db.shared.fail(code, At::of::<T>("delete").key(k)))?;
    apply(raw, db, &changes)?;
    Ok(true)
}

/// Empties every index of table `T` (which is being emptied).
pub(crate) fn clear<S: Schema, T: Table>(raw: &mut RawTxn, db: &Db<S>) -> Result<()> {
    for (id, name, _) in indexes_on(S::TABLES, T::NAME) {
        raw.drop_table(db.shared.dbis[id], false)
            .map_err(|code| db.shared.fail(code, At::table(name, "clear")))?;
    }
    Ok(())
}

/// The table's last key, for an append-out-of-order message.
fn last_key(raw: &mut RawTxn, dbi: Dbi) -> Option<KeyHex> {
    let mut cursor = raw.write_cursor(dbi).ok()?;
    let (k, _) = cursor.get(engine::op::LAST).ok()??;
    Some(KeyHex::new(k))
}
