//! The history workload's reth-storage-shaped variant (`storage_*` rows): a `dupsort` table
//! with a subkey — an account (`u64`), its slots (`u64` subkeys), their values — declared
//! `history`, against reth's `PlainStorageState`, `StorageChangeSets` and `StoragesHistory`
//! kept by hand on raw libmdbx. The same histories as the accounts' rows: unit `k` of
//! [`HistorySizes::keys`] is slot `k % SLOTS` of account `k / SLOTS`, with the accounts'
//! versions and values.
//!
//! By hand: the state is a `dupsort` table of `slot ‖ value` under each account (an update
//! deletes the slot's value and puts the new one, as reth's storage writer does); the changes
//! a `dupsort` table keyed `version ‖ account` whose values are `slot ‖ tag ‖ value before`
//! (the first change of a slot in a version); the history index sharded version lists keyed
//! `account ‖ slot ‖ highest version in the shard`. Tabula: `#[table(key = u64, subkey = u64,
//! value = u64, dupsort, history)]` written with `upsert_dup`, read with `dup_as_of`, unwound
//! with `Tx::unwind`.

use std::collections::BTreeSet;

use tabula::{History, Schema, Table};

use super::HandKept;
use super::{decode, encode, puts_of, shard, value};
use crate::data::mix;
use crate::raw::{self, EnvFlags};
use crate::workloads::history::HistorySizes;

/// Slots an account holds.
pub const SLOTS: u64 = 16;

/// The account and slot of unit `k`.
pub fn unit(k: u64) -> (u64, u64) {
    (k / SLOTS, k % SLOTS)
}

/// The storage, declared `history`.
#[derive(Table)]
#[table(name = "storage", key = u64, subkey = u64, value = u64, dupsort, history)]
pub struct Storage;

/// Its history.
#[derive(History)]
#[history(on = Storage, name = "storage_history")]
pub struct StorageHistory;

#[derive(Schema)]
pub struct StorageSchema(Storage, StorageHistory);

/// Writes the puts of version `v` (unit, value) through one write cursor.
pub fn tabula_puts(tx: &mut tabula::RwTx<'_, StorageSchema>, v: u64, puts: &[(u64, u64)]) {
    tx.set_version(v);
    let mut cursor = tx.cursor_mut::<Storage>().expect("cursor");
    for &(k, x) in puts {
        let (a, s) = unit(k);
        cursor.upsert_dup(&a, &s, &x).expect("upsert_dup");
    }
}

/// The value of unit `k` at the end of `v`.
pub fn tabula_get_as_of(tx: &tabula::RoTx<'_, StorageSchema>, k: u64, v: u64) -> Option<u64> {
    let (a, s) = unit(k);
    let values = tx.dup_as_of::<Storage>(&a, &s, v).expect("dup_as_of");
    values.first().map(|(_, x)| *x)
}

/// A checksum of the table's state, as the model's `state_sum` makes it.
pub fn tabula_state_sum(tx: &tabula::RwTx<'_, StorageSchema>) -> u64 {
    tx.iter::<Storage>().fold(0u64, |sum, e| {
        let (a, (s, x)) = e.expect("iter");
        sum.wrapping_add(mix((a * SLOTS + s) ^ x))
    })
}

/// Loads the Tabula store: every unit at version 1, then the versions.
pub fn tabula_load(sizes: &HistorySizes, db: &tabula::Db<StorageSchema>) {
    let mut tx = db.write().expect("write");
    let first: Vec<(u64, u64)> = (0..sizes.keys).map(|k| (k, value(k))).collect();
    tabula_puts(&mut tx, 1, &first);
    tx.commit().expect("commit");
    for v in 2..=sizes.versions + 1 {
        let mut tx = db.write().expect("write");
        tabula_puts(&mut tx, v, &puts_of(sizes, v));
        tx.commit().expect("commit");
    }
}

/// reth's storage tables kept by hand.
pub struct Hand {
    pub env: raw::Env,
    state: raw::Dbi,
    changes: raw::Dbi,
    index: raw::Dbi,
}

/// The bytes of a slot's entry: `slot ‖ value`.
fn entry(s: u64, x: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + x.len());
    out.extend_from_slice(&s.to_be_bytes());
    out.extend_from_slice(x);
    out
}

/// The history index's unit: `account ‖ slot`.
fn unit_bytes(a: u64, s: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&a.to_be_bytes());
    out[8..].copy_from_slice(&s.to_be_bytes());
    out
}

impl Hand {
    pub fn open(dir: &std::path::Path) -> Hand {
        let env = raw::Env::open(dir, 8, EnvFlags::DEFAULT);
        let txn = env.begin(true);
        let state = txn.open_table(c"storage_state", raw::DUPSORT, true);
        let changes = txn.open_table(c"storage_changes", raw::DUPSORT, true);
        let index = txn.open_table(c"storage_index", raw::NO_FLAGS, true);
        txn.commit();
        Hand {
            env,
            state,
            changes,
            index,
        }
    }

    /// Loads the hand-kept store: every unit at version 1, then the versions.
    pub fn load(&self, sizes: &HistorySizes) {
        let mut txn = self.env.begin(true);
        let mut seen = BTreeSet::new();
        for k in 0..sizes.keys {
            self.put(&mut txn, &mut seen, 1, k, value(k));
        }
        self.index(&mut txn, &seen, 1);
        txn.commit();
        for v in 2..=sizes.versions + 1 {
            let mut txn = self.env.begin(true);
            let mut seen = BTreeSet::new();
            for (k, x) in puts_of(sizes, v) {
                self.put(&mut txn, &mut seen, v, k, x);
            }
            self.index(&mut txn, &seen, v);
            txn.commit();
        }
    }
}

impl HandKept for Hand {
    fn env(&self) -> &raw::Env {
        &self.env
    }

    fn current(&self, txn: &raw::Txn, k: u64, version: u64) -> Option<u64> {
        HandKept::get_as_of(self, txn, k, version)
    }

    /// Puts `x` into unit `k` at version `v`: the slot's value before recorded once per unit
    /// and version (`seen`), the old entry deleted, the new one put.
    fn put(&self, txn: &mut raw::Txn, seen: &mut BTreeSet<u64>, v: u64, k: u64, x: u64) {
        let (a, s) = unit(k);
        let account = a.to_be_bytes();
        let slot = s.to_be_bytes();
        let mut cursor = txn.cursor(self.state);
        let before = cursor
            .get_both_range(&account, &slot)
            .filter(|found| found.starts_with(&slot))
            .map(|found| found[8..].to_vec());
        if before.is_some() {
            cursor.del_current();
        }
        cursor.put(&account, &entry(s, &encode(x)), 0);
        cursor.close();
        if seen.insert(k) {
            let mut change = Vec::with_capacity(24);
            change.extend_from_slice(&slot);
            match &before {
                Some(before) => {
                    change.push(1);
                    change.extend_from_slice(before);
                }
                None => change.push(0),
            }
            txn.put(self.changes, &unit_bytes(v, a), &change, 0);
        }
    }

    /// The end of a transaction at version `v`: each unit it changed gets `v` in its shard.
    fn index(&self, txn: &mut raw::Txn, seen: &BTreeSet<u64>, v: u64) {
        for &k in seen {
            let (a, s) = unit(k);
            shard::add(txn, self.index, &unit_bytes(a, s), v);
        }
    }

    /// The value of unit `k` at the end of `v`.
    fn get_as_of(&self, txn: &raw::Txn, k: u64, v: u64) -> Option<u64> {
        let (a, s) = unit(k);
        let slot = s.to_be_bytes();
        let Some(w) = shard::first_after(txn, self.index, &unit_bytes(a, s), v) else {
            let mut cursor = txn.cursor(self.state);
            let found = cursor
                .get_both_range(&a.to_be_bytes(), &slot)
                .filter(|found| found.starts_with(&slot))
                .map(|found| decode(&found[8..]));
            cursor.close();
            return found;
        };
        let mut cursor = txn.cursor(self.changes);
        let found = cursor
            .get_both_range(&unit_bytes(w, a), &slot)
            .map(|change| {
                assert_eq!(change[..8], slot, "hand: the change of {k} at {w}");
                match change[8] {
                    0 => None,
                    _ => Some(decode(&change[9..])),
                }
            });
        cursor.close();
        found.expect("hand: a change the index names")
    }

    /// Unwinds every version above `to`: the changesets walked from the last, each slot's
    /// value before written back, each change deleted; then each unit's open shard cut.
    fn unwind(&self, txn: &mut raw::Txn, to: u64) -> u64 {
        let mut undone = 0;
        let mut units = BTreeSet::new();
        loop {
            let mut cursor = txn.cursor(self.changes);
            let Some((key, change)) = cursor.get(raw::LAST, None) else {
                cursor.close();
                break;
            };
            let v = u64::from_be_bytes(key[..8].try_into().unwrap());
            if v <= to {
                cursor.close();
                break;
            }
            let account: [u8; 8] = key[8..16].try_into().unwrap();
            let slot: [u8; 8] = change[..8].try_into().unwrap();
            let before = (change[8] == 1).then(|| change[9..].to_vec());
            cursor.del_current();
            cursor.close();
            let mut cursor = txn.cursor(self.state);
            if cursor
                .get_both_range(&account, &slot)
                .is_some_and(|found| found.starts_with(&slot))
            {
                cursor.del_current();
            }
            if let Some(before) = before {
                cursor.put(&account, &entry(u64::from_be_bytes(slot), &before), 0);
            }
            cursor.close();
            units.insert((u64::from_be_bytes(account), u64::from_be_bytes(slot)));
            undone += 1;
        }
        for (a, s) in units {
            shard::cut(txn, self.index, &unit_bytes(a, s), to);
        }
        undone
    }

    fn state_sum(&self, txn: &raw::Txn) -> u64 {
        let mut cursor = txn.cursor(self.state);
        let mut sum = 0u64;
        let mut first = true;
        while let Some((a, e)) = cursor.step(first) {
            first = false;
            let a = u64::from_be_bytes(a.try_into().unwrap());
            let s = u64::from_be_bytes(e[..8].try_into().unwrap());
            sum = sum.wrapping_add(mix((a * SLOTS + s) ^ decode(&e[8..])));
        }
        cursor.close();
        sum
    }
}
