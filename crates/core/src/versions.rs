//! Tables declared `history`, on the transactions: the version a write transaction names
//! (`Tx::set_version`), reads as of a version on every transaction's reads, the unwind and the
//! prune. What is recorded, and how, is `history/`'s; docs/design.md, "History and unwind".

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::codec::{AsKey, AsPrefix, KeyRange};
use crate::engine;
use crate::engine::CursorNav;
use crate::error::{At, Result};
use crate::history;
use crate::index;
use crate::iter::Positions;
use crate::mode::Rw;
use crate::pipeline::{self, Landing};
use crate::read::{Handle, Reads};
use crate::stored::{dbi_of, decode_key, decode_value, with_key, with_subkey};
use crate::table::{Contains, DupSort, HasHistory, RowHistory, Schema, Table};
use crate::txn::Tx;

/// One change of a version ([`Reads::changes_at`]): the key, its value before the version and
/// its value at the version's end (`None`: no value).
pub type VersionChange<T> = (
    <T as Table>::Key,
    Option<<T as Table>::Value>,
    Option<<T as Table>::Value>,
);

/// One change of a version of a `dupsort` table ([`Reads::dup_changes_at`]): the key, the
/// values of one of its subkeys (without a subkey, one value: present or not) before the
/// version, and at its end. Each value is the table's `Value`, so `(subkey, value)` for a
/// table with a subkey.
pub type DupChange<T> = (
    <T as Table>::Key,
    Vec<<T as Table>::Value>,
    Vec<<T as Table>::Value>,
);

/// Unwinds every table of a schema declared `history`: implemented by `#[derive(Schema)]`,
/// which lists the tables. Not public API.
#[doc(hidden)]
pub trait Unwinding: Schema + Sized {
    /// Reverts every table of the schema declared `history` to the end of `version`; returns
    /// how many changes were reverted.
    fn unwind_tables(tx: &mut Tx<'_, Self, Rw>, version: u64) -> Result<u64>;
}
/// Reads of a table declared `history` as of a version.
impl<H: Handle> Reads<H> {
    /// The value under `key` at the end of `version` (after every write transaction of that
    /// version committed): what it holds now if it has not changed since, else the value its
    /// history recorded before its first change after `version`.
    ///
    /// ```
    /// # use tabula::{History, Options, Schema, Table};
    /// #[derive(Table)]
    /// #[table(key = u64, value = String, history)]
    /// struct Balances;
    /// #[derive(History)]
    /// #[history(on = Balances)]
    /// struct BalancesHistory;
    /// # #[derive(Schema)]
    /// # struct App(Balances, BalancesHistory);
    /// # let dir = tabula::__doc::temp_dir();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// for (version, value) in [(1, "one"), (2, "two")] {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.put::<Balances>(&7, value)?;
    ///     tx.commit()?;
    /// }
    /// let tx = db.read()?;
    /// assert_eq!(tx.get_as_of::<Balances>(&7, 0)?, None);
    /// assert_eq!(tx.get_as_of::<Balances>(&7, 1)?.as_deref(), Some("one"));
    /// assert_eq!(tx.get_as_of::<Balances>(&7, 2)?.as_deref(), Some("two"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`](crate::Error::BelowHorizon) when the changes after `version` were
    /// pruned; [`Error::Decode`](crate::Error::Decode), [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn get_as_of<T: RowHistory>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        version: u64,
    ) -> Result<Option<T::Value>>
    where
        H::Schema: Contains<T>,
    {
        let db = self.h.db();
        let shared = &db.shared;
        let dbi = dbi_of::<H::Schema, T>(db);
        let history = history::Of::<H::Schema, T>::dbi(shared)?;
        self.h.with_txn(|raw| {
            with_key::<T, _, _>(key, |k| {
                let form = const { history::Form::of::<T>() };
                history::value_at(raw, shared, (T::NAME, dbi, history), form, k, version)?
                    .map(|v| decode_value::<T>(k, v))
                    .transpose()
            })
        })
    }

    /// The versions at which `key` changed, in increasing order (those its history still
    /// holds: pruning drops the older ones).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// for version in [3, 5, 8] {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.put::<Ledger>(&1, &format!("at {version}"))?;
    ///     tx.commit()?;
    /// }
    /// assert_eq!(db.read()?.versions::<Ledger>(&1)?, [3, 5, 8]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](crate::Error::Decode) for a damaged history,
    /// [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn versions<T: RowHistory>(&self, key: &(impl AsKey<T::Key> + ?Sized)) -> Result<Vec<u64>>
    where
        H::Schema: Contains<T>,
    {
        let shared = &self.h.db().shared;
        let history = history::Of::<H::Schema, T>::dbi(shared)?;
        self.h.with_txn(|raw| {
            with_key::<T, _, _>(key, |k| {
                let part = const { history::Form::of::<T>() }.plain_part(k);
                history::versions(raw, shared, T::NAME, history, &part)
            })
        })
    }

    /// The rows of `range` at the end of `version`, in key order: those that have not changed
    /// since as they are, those that changed after it (deleted since included) as its history
    /// recorded them. Collected (not a lazy iterator): it merges the table's range with the
    /// history's.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(1);
    /// tx.put::<Ledger>(&1, "a")?;
    /// tx.put::<Ledger>(&2, "b")?;
    /// tx.commit()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(2);
    /// tx.delete::<Ledger>(&1)?;
    /// tx.put::<Ledger>(&3, "c")?;
    /// tx.commit()?;
    /// let tx = db.read()?;
    /// let s = |v: &str| v.to_string();
    /// assert_eq!(tx.range_as_of::<Ledger>(.., 1)?, [(1, s("a")), (2, s("b"))]);
    /// assert_eq!(tx.range_as_of::<Ledger>(2.., 2)?, [(2, s("b")), (3, s("c"))]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`](crate::Error::BelowHorizon) when a row of the range had a change
    /// after `version` pruned; [`Error::Decode`](crate::Error::Decode),
    /// [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn range_as_of<T: RowHistory>(
        &self,
        range: impl KeyRange<T::Key>,
        version: u64,
    ) -> Result<Vec<(T::Key, T::Value)>>
    where
        H::Schema: Contains<T>,
    {
        self.rows_as_of::<T>(Positions::range::<T>(&range), version)
    }

    /// The rows whose composite key starts with `prefix` ([`prefix`](Reads::prefix)) at the
    /// end of `version`, in key order, as [`range_as_of`](Reads::range_as_of) reads them.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// for (version, amount) in [(1, 10), (2, 20)] {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.put::<Holdings>(&("alice", 1), &amount)?;
    ///     tx.put::<Holdings>(&("bob", 1), &amount)?;
    ///     tx.commit()?;
    /// }
    /// let tx = db.read()?;
    /// assert_eq!(tx.prefix_as_of::<Holdings>("alice", 1)?, [(("alice".to_string(), 1), 10)]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`range_as_of`](Reads::range_as_of).
    pub fn prefix_as_of<T: RowHistory>(
        &self,
        prefix: &(impl AsPrefix<T::Key> + ?Sized),
        version: u64,
    ) -> Result<Vec<(T::Key, T::Value)>>
    where
        H::Schema: Contains<T>,
    {
        self.rows_as_of::<T>(Positions::prefix::<T::Key>(prefix), version)
    }

    /// Checks table `T`'s history against its layout: every change with its log entry and
    /// every log entry with its change, marks below the horizon, one a key at most,
    /// the changes a prune in progress left below it after every pruned one, none above the
    /// last version recorded, every key and value before decoding as `T`'s. Then against
    /// `T`'s rows, when the history recorded `T` from its creation (not one added to a
    /// populated table, whose earlier rows are unknown): replayed from an empty table, its
    /// changes must give the rows, so every row's key is in the history and a key's first
    /// change had no value before it. Reports up to `limit` problems.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(1);
    /// tx.put::<Ledger>(&1, "one")?;
    /// tx.commit()?;
    /// let check = db.read()?.check_history::<Ledger>(10)?;
    /// assert!(check.is_ok(), "{:?}", check.problems);
    /// assert_eq!((check.changes, check.entries), (1, 1));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`](crate::Error::Mdbx) when libmdbx fails; what the history holds is a
    /// problem of the check, not an error.
    pub fn check_history<T: HasHistory>(&self, limit: usize) -> Result<history::HistoryCheck>
    where
        H::Schema: Contains<T>,
    {
        let db = self.h.db();
        let shared = &db.shared;
        let dbis = (
            T::NAME,
            dbi_of::<H::Schema, T>(db),
            history::Of::<H::Schema, T>::dbi(shared)?,
        );
        let form = const { history::Form::of::<T>() };
        let decodes = |part: &[u8], before: Option<&[u8]>| {
            // A `dupsort` table's history is keyed by (key, subkey).
            let k = match T::FLAGS.dupsort {
                true => match form.split_unit(T::NAME, part) {
                    Ok((k, _)) => k,
                    Err(e) => return Some(e.to_string()),
                },
                false => match form.key_of(part) {
                    Some(k) => k,
                    None => return Some("not a key part of this table's history".to_string()),
                },
            };
            if let Err(e) = decode_key::<T>(&k) {
                return Some(e.to_string());
            }
            let before = before?;
            decode_value::<T>(&k, before).err().map(|e| e.to_string())
        };
        let show = |k: &[u8]| crate::error::KeyHex::of::<T>(k).to_string();
        let rows = match T::FLAGS.dupsort {
            true => history::Rows::Dup(Some(T::DUP_UNIT)),
            false => history::Rows::Plain,
        };
        self.h
            .with_txn(|raw| history::check(raw, shared, dbis, (form, rows), limit, decodes, show))
    }

    /// The handles of table `T` and of its history.
    fn table_and_history<T: HasHistory>(&self) -> Result<(engine::Dbi, engine::Dbi)>
    where
        H::Schema: Contains<T>,
    {
        let db = self.h.db();
        let history = history::Of::<H::Schema, T>::dbi(&db.shared)?;
        Ok((dbi_of::<H::Schema, T>(db), history))
    }

    /// The rows between `bounds` at the end of `version`: the table's rows, then every key of
    /// the range that changed after `version` set to what it held then.
    fn rows_as_of<T: RowHistory>(
        &self,
        bounds: Positions,
        version: u64,
    ) -> Result<Vec<(T::Key, T::Value)>>
    where
        H::Schema: Contains<T>,
    {
        let shared = &self.h.db().shared;
        let history = history::Of::<H::Schema, T>::dbi(shared)?;
        let mut rows: BTreeMap<T::Key, T::Value> = self
            .iter_between::<T>(bounds.clone())
            .collect::<Result<_>>()?;
        // Integer keys are stored native-endian, whose bytes do not sort as the keys: the
        // whole of the history's changes is walked for them.
        let form = const { history::Form::of::<T>() };
        let from = match (bounds.lower(), T::FLAGS.integer_key) {
            (Bound::Included(k) | Bound::Excluded(k), false) => Some(form.key_start(k)),
            _ => None,
        };
        self.h.with_txn(|raw| {
            history::changed_after(
                raw,
                shared,
                (T::NAME, history),
                (from, version),
                |part| {
                    // A part that is not of the form is reported by the second closure.
                    let Some(k) = form.key_of(part) else {
                        return Some(true);
                    };
                    if !bounds.below_upper::<T>(&k) {
                        // Past the range, unless integer keys' bytes do not sort as they do.
                        return T::FLAGS.integer_key.then_some(false);
                    }
                    Some(bounds.above_lower::<T>((&k, &[])))
                },
                |part, held| {
                    let k = form
                        .key_of(part)
                        .ok_or_else(|| crate::error::Error::Decode {
                            table: T::NAME,
                            part: crate::error::Part::Key,
                            key: crate::error::KeyHex::new(part),
                            source: crate::codec::DecodeError::new(
                                "not a key part of this table's history".to_string(),
                            ),
                        })?;
                    let k = &*k;
                    let key = decode_key::<T>(k)?;
                    match history::before(T::NAME, k, held)? {
                        Some(v) => rows.insert(key, decode_value::<T>(k, v)?),
                        None => rows.remove(&key),
                    };
                    Ok(())
                },
            )
        })?;
        Ok(rows.into_iter().collect())
    }

    /// The changes of `version`: every key it changed, in key order, with the value before
    /// the version and the value at its end (`None`: no value).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(1);
    /// tx.put::<Ledger>(&1, "a")?;
    /// tx.put::<Ledger>(&2, "b")?;
    /// tx.commit()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(2);
    /// tx.put::<Ledger>(&1, "A")?;
    /// tx.delete::<Ledger>(&2)?;
    /// tx.commit()?;
    /// let changes = db.read()?.changes_at::<Ledger>(2)?;
    /// assert_eq!(changes, [
    ///     (1, Some("a".to_string()), Some("A".to_string())),
    ///     (2, Some("b".to_string()), None),
    /// ]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`](crate::Error::BelowHorizon) when the version was pruned;
    /// [`Error::Decode`](crate::Error::Decode), [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn changes_at<T: RowHistory>(&self, version: u64) -> Result<Vec<VersionChange<T>>>
    where
        H::Schema: Contains<T>,
    {
        let db = self.h.db();
        let shared = &db.shared;
        let dbi = dbi_of::<H::Schema, T>(db);
        let history = history::Of::<H::Schema, T>::dbi(shared)?;
        self.h.with_txn(|raw| {
            history::check_horizon(raw, shared, T::NAME, history, version.saturating_sub(1))?;
            let mut out = Vec::new();
            let form = const { history::Form::of::<T>() };
            for (k, before) in history::changes_at(raw, shared, T::NAME, (history, form), version)?
            {
                let after =
                    history::value_at(raw, shared, (T::NAME, dbi, history), form, &k, version)?;
                let decode = |v: Option<&[u8]>| v.map(|v| decode_value::<T>(&k, v)).transpose();
                out.push((
                    decode_key::<T>(&k)?,
                    decode(before.as_deref())?,
                    decode(after)?,
                ));
            }
            Ok(out)
        })
    }
}

/// Reads of a `dupsort` table declared `history` as of a version: its history records each
/// (key, subkey) — without a subkey, each (key, value) — so these take a subkey where the reads
/// of a table of one value a key take a key.
impl<H: Handle> Reads<H> {
    /// The values of `key` with `subkey` at the end of `version` (in a table without a subkey,
    /// `subkey` is the value: it is there or not), in their order, as `(subkey, value)` pairs
    /// for a table with a subkey: what they are now if they have not changed since, else what
    /// the history recorded before their first change after `version`.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// for (version, value) in [(1, 10), (2, 20)] {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.cursor_mut::<Slots>()?.upsert_dup(&7, &1, &value)?;
    ///     tx.commit()?;
    /// }
    /// let tx = db.read()?;
    /// assert_eq!(tx.dup_as_of::<Slots>(&7, &1, 0)?, []);
    /// assert_eq!(tx.dup_as_of::<Slots>(&7, &1, 1)?, [(1, 10)]);
    /// assert_eq!(tx.dup_as_of::<Slots>(&7, &1, 2)?, [(1, 20)]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`](crate::Error::BelowHorizon) when the changes after `version` were
    /// pruned; [`Error::Decode`](crate::Error::Decode), [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn dup_as_of<T: DupSort + HasHistory>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
        version: u64,
    ) -> Result<Vec<T::Value>>
    where
        H::Schema: Contains<T>,
    {
        let shared = &self.h.db().shared;
        let dbis = self.table_and_history::<T>()?;
        self.h.with_txn(|raw| {
            with_key::<T, _, _>(key, |k| {
                with_subkey::<T, _, _>(subkey, |sub| {
                    let mut values = Vec::new();
                    history::unit_at_each::<T>(raw, shared, dbis, (k, sub), version, |v| {
                        values.push(decode_value::<T>(k, v)?);
                        Ok(())
                    })?;
                    Ok(values)
                })
            })
        })
    }

    /// Every value of `key` at the end of `version`, in their order: its values now, each
    /// subkey that changed after `version` as it was then.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(1);
    /// tx.put::<Slots>(&7, &(1, 10))?;
    /// tx.put::<Slots>(&7, &(2, 20))?;
    /// tx.commit()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(2);
    /// tx.delete_dup::<Slots>(&7, &(1, 10))?;
    /// tx.put::<Slots>(&7, &(3, 30))?;
    /// tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.dups_as_of::<Slots>(&7, 1)?, [(1, 10), (2, 20)]);
    /// assert_eq!(tx.dups_as_of::<Slots>(&7, 2)?, [(2, 20), (3, 30)]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`dup_as_of`](Reads::dup_as_of).
    pub fn dups_as_of<T: DupSort + HasHistory>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        version: u64,
    ) -> Result<Vec<T::Value>>
    where
        H::Schema: Contains<T>,
    {
        let shared = &self.h.db().shared;
        let dbis = self.table_and_history::<T>()?;
        self.h.with_txn(|raw| {
            with_key::<T, _, _>(key, |k| {
                let values = history::key_at::<T>(raw, shared, dbis, k, version)?;
                values.iter().map(|v| decode_value::<T>(k, v)).collect()
            })
        })
    }

    /// Every value of the keys in `range` at the end of `version`, in key order then value
    /// order, as [`dups_as_of`](Reads::dups_as_of) reads each key: the keys that hold values
    /// now and those whose values changed after `version`. Collected (not a lazy iterator).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(1);
    /// tx.put::<Slots>(&7, &(1, 10))?;
    /// tx.put::<Slots>(&8, &(1, 80))?;
    /// tx.commit()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(2);
    /// tx.delete::<Slots>(&8)?;
    /// tx.put::<Slots>(&7, &(2, 20))?;
    /// tx.put::<Slots>(&9, &(1, 90))?;
    /// tx.commit()?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.dup_range_as_of::<Slots>(.., 1)?, [(7, (1, 10)), (8, (1, 80))]);
    /// assert_eq!(tx.dup_range_as_of::<Slots>(7..=8, 2)?, [(7, (1, 10)), (7, (2, 20))]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`](crate::Error::BelowHorizon) when a key of the range had a change
    /// after `version` pruned; [`Error::Decode`](crate::Error::Decode),
    /// [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn dup_range_as_of<T: DupSort + HasHistory>(
        &self,
        range: impl KeyRange<T::Key>,
        version: u64,
    ) -> Result<Vec<(T::Key, T::Value)>>
    where
        H::Schema: Contains<T>,
    {
        let shared = &self.h.db().shared;
        let dbis = self.table_and_history::<T>()?;
        let bounds = Positions::range::<T>(&range);
        // The range's keys, by key: those with values now and those changed after `version`
        // (their stored bytes).
        let mut keys: BTreeMap<T::Key, Vec<u8>> = BTreeMap::new();
        for key in self.iter_between::<T>(bounds.clone()).keys() {
            let key = key?;
            let stored = AsKey::<T::Key>::encode(&key).as_ref().to_vec();
            keys.insert(key, stored);
        }
        let form = const { history::Form::of::<T>() };
        // Integer keys are stored native-endian, whose bytes do not sort as the keys: the
        // whole of the history's changes is walked for them.
        let from = match (bounds.lower(), T::FLAGS.integer_key) {
            (Bound::Included(k) | Bound::Excluded(k), false) => Some(form.key_start(k)),
            _ => None,
        };
        self.h.with_txn(|raw| {
            let mut changed = Vec::new();
            history::changed_after(
                raw,
                shared,
                (T::NAME, dbis.1),
                (from, version),
                |unit| {
                    // A unit that is not of the form is reported by the second closure.
                    let Ok((k, _)) = form.split_unit(T::NAME, unit) else {
                        return Some(true);
                    };
                    if !bounds.below_upper::<T>(&k) {
                        return T::FLAGS.integer_key.then_some(false);
                    }
                    Some(bounds.above_lower::<T>((&k, &[])))
                },
                |unit, _| {
                    let (k, _) = form.split_unit(T::NAME, unit)?;
                    if changed.last().is_none_or(|last: &Vec<u8>| **last != *k) {
                        changed.push(k.into_owned());
                    }
                    Ok(())
                },
            )?;
            for k in changed {
                keys.insert(decode_key::<T>(&k)?, k);
            }
            let mut out = Vec::new();
            for k in keys.values() {
                for v in history::key_at::<T>(raw, shared, dbis, k, version)? {
                    out.push((decode_key::<T>(k)?, decode_value::<T>(k, &v)?));
                }
            }
            Ok(out)
        })
    }

    /// The versions at which the values of `key` with `subkey` changed, in increasing order
    /// (those its history still holds).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// for version in [3, 5] {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.cursor_mut::<Slots>()?.upsert_dup(&7, &1, &version)?;
    ///     tx.cursor_mut::<Slots>()?.upsert_dup(&7, &version, &0)?;
    ///     tx.commit()?;
    /// }
    /// assert_eq!(db.read()?.dup_versions::<Slots>(&7, &1)?, [3, 5]);
    /// assert_eq!(db.read()?.dup_versions::<Slots>(&7, &5)?, [5]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](crate::Error::Decode) for a damaged history,
    /// [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn dup_versions<T: DupSort + HasHistory>(
        &self,
        key: &(impl AsKey<T::Key> + ?Sized),
        subkey: &(impl AsKey<T::SubKey> + ?Sized),
    ) -> Result<Vec<u64>>
    where
        H::Schema: Contains<T>,
    {
        let shared = &self.h.db().shared;
        let history = history::Of::<H::Schema, T>::dbi(shared)?;
        self.h.with_txn(|raw| {
            with_key::<T, _, _>(key, |k| {
                with_subkey::<T, _, _>(subkey, |sub| {
                    let unit = const { history::Form::of::<T>() }.key_part(k, sub);
                    history::versions(raw, shared, T::NAME, history, unit.as_slice())
                })
            })
        })
    }

    /// The changes of `version` in a `dupsort` table: every (key, subkey) it changed, in that
    /// order, with the subkey's values before the version and at its end.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(1);
    /// tx.put::<Slots>(&7, &(1, 10))?;
    /// tx.commit()?;
    /// let mut tx = db.write()?;
    /// tx.set_version(2);
    /// tx.cursor_mut::<Slots>()?.upsert_dup(&7, &1, &11)?;
    /// tx.put::<Slots>(&8, &(2, 20))?;
    /// tx.commit()?;
    /// let changes = db.read()?.dup_changes_at::<Slots>(2)?;
    /// assert_eq!(changes, [(7, vec![(1, 10)], vec![(1, 11)]), (8, vec![], vec![(2, 20)])]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`](crate::Error::BelowHorizon) when the version was pruned;
    /// [`Error::Decode`](crate::Error::Decode), [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn dup_changes_at<T: DupSort + HasHistory>(&self, version: u64) -> Result<Vec<DupChange<T>>>
    where
        H::Schema: Contains<T>,
    {
        let shared = &self.h.db().shared;
        let dbis = self.table_and_history::<T>()?;
        self.h.with_txn(|raw| {
            history::check_horizon(raw, shared, T::NAME, dbis.1, version.saturating_sub(1))?;
            let mut out = Vec::new();
            for (unit, before) in history::unit_changes_at(raw, shared, T::NAME, dbis.1, version)? {
                let form = const { history::Form::of::<T>() };
                let (k, sub) = form.split_unit(T::NAME, &unit)?;
                let after = history::unit_at::<T>(raw, shared, dbis, (&k, &sub), version)?;
                let decode = |values: &[Vec<u8>]| -> Result<Vec<T::Value>> {
                    values.iter().map(|v| decode_value::<T>(&k, v)).collect()
                };
                out.push((decode_key::<T>(&k)?, decode(&before)?, decode(&after)?));
            }
            Ok(out)
        })
    }
}

impl<'db, S: Schema> Tx<'db, S, Rw> {
    /// Names the version of this transaction's changes to tables declared `history` (a block
    /// number, say): each change is recorded at it. Versions never decrease: a change at a
    /// version below the last one a table's history recorded is refused, as is a change of such
    /// a table before a version is named. Several transactions may share a version. A nested
    /// transaction shares its parent's.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::Error;
    /// # let (dir, db) = open_chain()?;
    /// let mut tx = db.write()?;
    /// let refused = tx.put::<Ledger>(&1, "a");
    /// assert!(matches!(refused, Err(Error::NoVersion { table: "Ledger" })));
    /// tx.set_version(10);
    /// tx.put::<Ledger>(&1, "a")?;
    /// tx.commit()?;
    ///
    /// let mut tx = db.write()?;
    /// tx.set_version(9);
    /// let refused = tx.put::<Ledger>(&1, "b");
    /// assert!(matches!(refused, Err(Error::VersionBelow { version: 9, last: 10, .. })));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn set_version(&mut self, version: u64) {
        self.db().shared.history().set_version(version);
    }

    /// The version [`set_version`](Tx::set_version) named, if any.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// assert_eq!(tx.version(), None);
    /// tx.set_version(3);
    /// assert_eq!(tx.version(), Some(3));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn version(&self) -> Option<u64> {
        self.db().shared.history().version()
    }

    /// Reverts every table declared `history` to the end of `version`: each change recorded
    /// at a higher version is undone and removed from the history, in this transaction, so
    /// the unwind commits or aborts as one. Each key changed is written back (or deleted)
    /// once, to its value at the end of `version`, with its secondary index entries, and its
    /// key watchers told of that one change. Returns how many changes were undone. Writes
    /// after it name a version of at least `version`.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// for (version, value) in [(1, "one"), (2, "two"), (3, "three")] {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.put::<Ledger>(&7, value)?;
    ///     tx.put::<Ledger>(&version, "new")?;
    ///     tx.commit()?;
    /// }
    /// let mut tx = db.write()?;
    /// assert_eq!(tx.unwind(1)?, 4); // two changes at each of versions 2 and 3
    /// assert_eq!(tx.get::<Ledger>(&7)?.as_deref(), Some("one"));
    /// assert_eq!(tx.get::<Ledger>(&3)?, None);
    /// assert_eq!(tx.versions::<Ledger>(&7)?, [1]);
    /// tx.commit()?;
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`](crate::Error::BelowHorizon), before anything is written, when
    /// a table's history was pruned above `version`. What the writes back can fail with
    /// ([`Error::MapFull`](crate::Error::MapFull), ..); [`Error::Decode`](crate::Error::Decode)
    /// for a damaged history: abort the transaction then, as part of the unwind may be written.
    pub fn unwind(&mut self, version: u64) -> Result<u64>
    where
        S: Unwinding,
    {
        S::unwind_tables(self, version)
    }

    /// [`unwind`](Tx::unwind) of table `T` alone (nothing when `T` is not declared
    /// `history`): what `#[derive(Schema)]`'s [`Unwinding`] calls for each table, first with
    /// `check` (the unwind is refused, before anything is written, when a table's history was
    /// pruned above `version`), then without.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// for version in [1, 2] {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.put::<Ledger>(&1, &version.to_string())?;
    ///     tx.commit()?;
    /// }
    /// let mut tx = db.write()?;
    /// assert_eq!(tx.__unwind_table::<Ledger>(1, true)?, 0); // the check writes nothing
    /// assert_eq!(tx.__unwind_table::<LedgerHistory>(1, false)?, 0); // not declared `history`
    /// assert_eq!(tx.__unwind_table::<Ledger>(1, false)?, 1);
    /// assert_eq!(tx.get::<Ledger>(&1)?.as_deref(), Some("1"));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    #[doc(hidden)]
    pub fn __unwind_table<T: Table>(&mut self, version: u64, check: bool) -> Result<u64>
    where
        S: Contains<T>,
    {
        if !T::HISTORY {
            return Ok(0);
        }
        let db = self.db();
        let shared = &db.shared;
        let dbi = dbi_of::<S, T>(db);
        let indexed = index::On::<S, T>::ANY;
        let history = history::Of::<S, T>::dbi(shared)?;
        let raw = self.raw_mut();
        if check {
            history::check_unwind(raw, shared, T::NAME, history, version)?;
            return Ok(0);
        }
        let _replay = shared.history().replay();
        let undone;
        {
            // Cursors of the transaction: the unwind's walk the history down from its last
            // change, and one that writes the rows back through the pipeline.
            let lent = raw.lend();
            let fail = |code| shared.fail(code, At::of::<T>("unwind"));
            let dup = T::FLAGS.dupsort;
            let form = const { history::Form::of::<T>() };
            let mut unwind =
                history::Unwind::start(lent, shared, (T::NAME, history, dup), form, version)?;
            let mut rows = lent.cursor(dbi, shared.cursors()).map_err(fail)?;
            // The entries of unique indexes are added once every row is back: rows may have
            // swapped their unique keys within the versions undone.
            let mut later = index::Deferred::default();
            // Each key once: its value at the end of `version`.
            while let Some(at) = unwind.next()? {
                let k = at.key();
                let mut landing = Landing::Unmoved;
                if dup {
                    unwind_unit::<T>(&mut rows, shared, at)?;
                    continue;
                }
                match at.before() {
                    Some(v) if indexed => {
                        pipeline::put_reverting::<T>(
                            &mut rows,
                            shared,
                            (k, v),
                            &mut later,
                            &mut landing,
                        )?;
                    }
                    Some(v) => pipeline::put::<T>(
                        &mut rows,
                        shared,
                        false,
                        (k, v),
                        None,
                        engine::put::UPSERT,
                        "unwind",
                        &mut landing,
                    )?,
                    None => {
                        let found = rows
                            .get_with(engine::op::SET_KEY, Some(k), None, |_, _| ())
                            .map_err(fail)?;
                        if found.is_some() {
                            pipeline::delete_current::<T>(
                                &mut rows,
                                shared,
                                indexed,
                                engine::del::CURRENT,
                                ("unwind", Some(k)),
                                &mut landing,
                            )?;
                        }
                    }
                }
            }
            if indexed {
                pipeline::reverted::<T>(&mut rows, shared, &later)?;
            }
            undone = unwind.undone();
        }
        history::lower_last(raw, shared, T::NAME, history, version)?;
        Ok(undone)
    }

    /// Drops from table `T`'s history the changes of versions below `below`, at most `limit`
    /// of them, and raises its horizon to `below`: reads as of `below - 1` and later stay
    /// exact, earlier ones are refused ([`Error::BelowHorizon`](crate::Error::BelowHorizon)).
    /// Returns how many changes were dropped: fewer than `limit` means none is left below
    /// `below`. A prune of a long history runs in several transactions of `limit` changes.
    /// [`Options::keep_versions`](crate::Options::keep_versions) prunes at every commit.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula::Error;
    /// # let (dir, db) = open_chain()?;
    /// for version in 1..=5 {
    ///     let mut tx = db.write()?;
    ///     tx.set_version(version);
    ///     tx.put::<Ledger>(&1, &format!("v{version}"))?;
    ///     tx.commit()?;
    /// }
    /// loop {
    ///     let mut tx = db.write()?;
    ///     let dropped = tx.prune_history::<Ledger>(4, 2)?;
    ///     tx.commit()?;
    ///     if dropped < 2 {
    ///         break;
    ///     }
    /// }
    /// let tx = db.read()?;
    /// assert_eq!(tx.versions::<Ledger>(&1)?, [4, 5]);
    /// assert_eq!(tx.get_as_of::<Ledger>(&1, 3)?.as_deref(), Some("v3"));
    /// assert!(matches!(tx.get_as_of::<Ledger>(&1, 2), Err(Error::BelowHorizon { horizon: 4, .. })));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](crate::Error::Decode) for a damaged history;
    /// [`Error::Mdbx`](crate::Error::Mdbx).
    pub fn prune_history<T: HasHistory>(&mut self, below: u64, limit: usize) -> Result<usize>
    where
        S: Contains<T>,
    {
        let shared = &self.db().shared;
        let history = history::Of::<S, T>::dbi(shared)?;
        history::prune_batch(self.raw_mut(), shared, T::NAME, history, below, limit)
    }
}

/// Writes back, through `rows` (a cursor on it), the unit of the `dupsort` table `T` that the
/// unwind's change `at` names: the values it holds now and did not hold before the change
/// deleted, those it held and does not hold now put back, each through the pipeline (so the
/// watchers are told).
fn unwind_unit<T: Table>(
    rows: &mut engine::RawCursorMut<'_>,
    shared: &crate::state::Shared,
    at: &history::Unwound,
) -> Result<()> {
    let fail = |code| shared.fail(code, At::of::<T>("unwind"));
    let (k, sub) = (at.key(), at.sub());
    let before = at.befores();
    let now = history::unit_values_at::<T>(rows, k, sub).map_err(fail)?;
    for v in now.iter().filter(|v| !before.contains(&v.as_slice())) {
        let found = rows
            .get_with(engine::op::GET_BOTH_RANGE, Some(k), Some(v), |_, found| {
                found == v.as_slice()
            })
            .map_err(fail)?;
        if found == Some(true) {
            let mut landing = Landing::Unmoved;
            let op = ("unwind", Some(k));
            pipeline::delete_current::<T>(
                rows,
                shared,
                false,
                engine::del::CURRENT,
                op,
                &mut landing,
            )?;
        }
    }
    for v in before.iter().filter(|v| !now.iter().any(|n| n == *v)) {
        let mut landing = Landing::Unmoved;
        pipeline::put::<T>(
            rows,
            shared,
            false,
            (k, v),
            None,
            engine::put::UPSERT,
            "unwind",
            &mut landing,
        )?;
    }
    Ok(())
}
