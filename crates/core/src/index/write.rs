//! The writes of an indexed table: a row and every index entry it changes, in the same write
//! transaction, with unique keys checked before anything is written. Two callers: the
//! transaction's write paths (through [`RawTxn`]) and the write cursors and the appender
//! (through their [`RawCursorMut`], whose transaction they write without moving it).

use crate::db::state::{Db, Shared};
use crate::engine::{self, Code, Dbi, RawCursorMut, RawTxn, RawWriteCursor};
use crate::error::{At, Error, KeyHex, Part, Result};
use crate::table::{EntriesError, IndexInfo, RawEntry, Schema, Table};

use super::indexes_on;

/// Where index entries are read and written: the write transaction, or the transaction of a
/// write cursor.
pub(crate) trait Store {
    /// The value under `key` in table `dbi`, copied out.
    fn store_get(&self, dbi: Dbi, key: &[u8]) -> std::result::Result<Option<Vec<u8>>, Code>;
    /// Writes `(key, value)` into table `dbi`.
    fn store_put(&mut self, dbi: Dbi, key: &[u8], value: &[u8]) -> std::result::Result<(), Code>;
    /// Deletes `(key, value)` (every value of `key` when `None`) from table `dbi`.
    fn store_del(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> std::result::Result<bool, Code>;
}

impl Store for RawTxn {
    fn store_get(&self, dbi: Dbi, key: &[u8]) -> std::result::Result<Option<Vec<u8>>, Code> {
        Ok(RawTxn::get(self, dbi, key)?.map(<[u8]>::to_vec))
    }

    fn store_put(&mut self, dbi: Dbi, key: &[u8], value: &[u8]) -> std::result::Result<(), Code> {
        RawTxn::put(self, dbi, key, value, engine::put::UPSERT)
    }

    fn store_del(
        &mut self,
        dbi: Dbi,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> std::result::Result<bool, Code> {
        RawTxn::del(self, dbi, key, value)
    }
}

macro_rules! cursor_store {
    ($cursor:ident) => {
        impl Store for $cursor<'_> {
            fn store_get(
                &self,
                dbi: Dbi,
                key: &[u8],
            ) -> std::result::Result<Option<Vec<u8>>, Code> {
                self.txn_get(dbi, key)
            }

            fn store_put(
                &mut self,
                dbi: Dbi,
                key: &[u8],
                value: &[u8],
            ) -> std::result::Result<(), Code> {
                self.txn_put(dbi, key, value, engine::put::UPSERT)
            }

            fn store_del(
                &mut self,
                dbi: Dbi,
                key: &[u8],
                value: Option<&[u8]>,
            ) -> std::result::Result<bool, Code> {
                self.txn_del(dbi, key, value)
            }
        }
    };
}

cursor_store!(RawCursorMut);
cursor_store!(RawWriteCursor);

/// One index of the table being written, with the entries of the old and the new row.
pub(crate) struct Change {
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

/// For each index of table `table`: the entries the change from `old` to `new` (stored rows
/// under `k`) removes and adds.
fn changes(
    shared: &Shared,
    table: &'static str,
    k: &[u8],
    old: Option<&[u8]>,
    new: Option<&[u8]>,
) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    for (id, name, index) in indexes_on(shared.tables, table) {
        let old = match old {
            Some(v) => entries(table, &index, name, k, v)?,
            None => Vec::new(),
        };
        let new = match new {
            Some(v) => entries(table, &index, name, k, v)?,
            None => Vec::new(),
        };
        out.push(Change {
            dbi: shared.dbis[id],
            name,
            unique: index.unique,
            removed: minus(&old, &new),
            added: minus(&new, &old),
        });
    }
    Ok(out)
}

/// Fails if an added entry of a unique index names a key another row holds.
fn check_unique(
    store: &impl Store,
    shared: &Shared,
    table: &'static str,
    changes: &[Change],
) -> Result<()> {
    for change in changes.iter().filter(|c| c.unique) {
        for entry in &change.added {
            let held = store
                .store_get(change.dbi, &entry.key)
                .map_err(|code| shared.fail(code, At::table(change.name, "get").key(&entry.key)))?;
            if let Some(row) = held
                && row != entry.primary
            {
                return Err(Error::UniqueViolation {
                    table,
                    index: change.name,
                    key: KeyHex::new(&entry.key),
                    rows: Box::new([KeyHex::new(&row), KeyHex::new(&entry.primary)]),
                });
            }
        }
    }
    Ok(())
}

/// Writes the index entries of `changes` (the row is already written).
pub(crate) fn apply(store: &mut impl Store, shared: &Shared, changes: &[Change]) -> Result<()> {
    for change in changes {
        for entry in &change.removed {
            let value = (!change.unique).then_some(entry.primary.as_slice());
            store
                .store_del(change.dbi, &entry.key, value)
                .map_err(|code| {
                    shared.fail(code, At::table(change.name, "delete").key(&entry.key))
                })?;
        }
        for entry in &change.added {
            store
                .store_put(change.dbi, &entry.key, &entry.primary)
                .map_err(|code| {
                    shared.fail(
                        code,
                        At::table(change.name, "put").entry(&entry.key, entry.primary.len()),
                    )
                })?;
        }
    }
    Ok(())
}

/// What a write of the stored row `(k, v)` into table `T` (handle `dbi`) with `flags` changes
/// in its indexes, read and checked before anything is written: the old row is read (not for
/// an append, whose key has none), an insert of a present key is `KeyExists`, and a unique key
/// another row holds is `UniqueViolation`.
pub(crate) fn prepare<T: Table>(
    store: &impl Store,
    shared: &Shared,
    dbi: Dbi,
    k: &[u8],
    v: &[u8],
    flags: u32,
    op: &'static str,
) -> Result<Vec<Change>> {
    let old = if flags & engine::put::APPEND != 0 {
        None
    } else {
        store
            .store_get(dbi, k)
            .map_err(|code| shared.fail(code, At::of::<T>(op).key(k)))?
    };
    if old.is_some() && flags & engine::put::NOOVERWRITE != 0 {
        return Err(Error::KeyExists {
            table: T::NAME,
            key: KeyHex::new(k),
        });
    }
    let changes = changes(shared, T::NAME, k, old.as_deref(), Some(v))?;
    check_unique(store, shared, T::NAME, &changes)?;
    Ok(changes)
}

/// Writes the stored row `(k, v)` of the indexed table `T` (handle `dbi`) with `flags`
/// (`UPSERT`, `NOOVERWRITE` or `APPEND_STRICT`), and its index entries: the old row is read,
/// the changed entries computed, unique keys checked, and only then is anything written.
pub(crate) fn put<S: Schema, T: Table>(
    raw: &mut RawTxn,
    db: &Db<S>,
    dbi: Dbi,
    k: &[u8],
    v: &[u8],
    flags: u32,
    op: &'static str,
) -> Result<()> {
    let shared = &db.shared;
    let changes = prepare::<T>(raw, shared, dbi, k, v, flags, op)?;
    let appending = flags & engine::put::APPEND != 0;
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
            shared.fail(code, At::of::<T>(op).entry(k, v.len()))
        }
    })?;
    shared.watch.put::<T>(k, v);
    apply(raw, shared, &changes)
}

/// Deletes the row under the stored key `k` of the indexed table `T` and its index entries.
/// Returns whether there was one.
pub(crate) fn delete<S: Schema, T: Table>(
    raw: &mut RawTxn,
    db: &Db<S>,
    dbi: Dbi,
    k: &[u8],
) -> Result<bool> {
    let shared = &db.shared;
    let old = raw
        .store_get(dbi, k)
        .map_err(|code| shared.fail(code, At::of::<T>("delete").key(k)))?;
    let Some(old) = old else {
        return Ok(false);
    };
    let changes = changes(shared, T::NAME, k, Some(&old), None)?;
    raw.del(dbi, k, None)
        .map_err(|code| shared.fail(code, At::of::<T>("delete").key(k)))?;
    shared.watch.del::<T>(k, None);
    apply(raw, shared, &changes)?;
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

/// Whether table `T` of the open database has indexes: for the write cursors, which know the
/// table but not the schema. A constant `false` for a table declared without `indexed`.
#[inline(always)]
pub(crate) fn cursor_indexed<T: Table>(shared: &Shared) -> bool {
    T::INDEXED && indexes_on(shared.tables, T::NAME).next().is_some()
}

/// For a write cursor over the indexed table `T` about to delete the entry `(k, v)` under it:
/// the index entries that go with it.
pub(crate) fn cursor_removal<T: Table>(shared: &Shared, k: &[u8], v: &[u8]) -> Result<Vec<Change>> {
    changes(shared, T::NAME, k, Some(v), None)
}

/// The table's last key, for an append-out-of-order message.
fn last_key(raw: &mut RawTxn, dbi: Dbi) -> Option<KeyHex> {
    let mut cursor = raw.write_cursor(dbi).ok()?;
    let (k, _) = cursor.get(engine::op::LAST).ok()??;
    Some(KeyHex::new(k))
}
