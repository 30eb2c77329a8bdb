//! Tables declared `history` against a model: a map from each version to the whole state.
//! Random write transactions (several forms: put, insert, delete, a write cursor, delete_range,
//! retain, pop_first, clear, nested transactions committed or aborted, aborted transactions)
//! at non-decreasing versions, with unwinds and prunes among them; after each step every
//! as-of read at every retained version, every key's versions and every version's changes are
//! compared with the model, the secondary index is checked, and a key watcher's changes,
//! replayed, give the table. (A prune drops the changes below its version; a read as of an
//! earlier version than a key's highest pruned change is refused, any other read is exact.
//! Some rounds open with `Options::keep_versions`, whose commits prune too.)

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::{BTreeMap, BTreeSet};

use random::Rng;
use serde::{Deserialize, Serialize};
use tabula::{Change, Db, Error, History, Index, Received, Schema, Table};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Acct {
    owner: u32,
    balance: u64,
}

#[derive(Table)]
#[table(key = u64, value = Acct, indexed, history)]
struct Accounts;

#[derive(Index)]
#[index(on = Accounts, key = u32, by = owner)]
struct ByOwner;

fn owner(_: &u64, a: &Acct) -> u32 {
    a.owner
}

#[derive(History)]
#[history(on = Accounts)]
struct AccountsHistory;

/// String keys: their history escapes the key (no fixed width). A unique index on the
/// value: rows swap their values, which an unwind must swap back.
#[derive(Table)]
#[table(key = String, value = u64, indexed, history)]
struct Names;

#[derive(Index)]
#[index(on = Names, key = u64, unique, by = number)]
struct ByNumber;

fn number(_: &String, n: &u64) -> u64 {
    *n
}

#[derive(History)]
#[history(on = Names, name = "names_history")]
struct NamesHistory;

/// Not declared `history`: an unwind leaves it alone.
#[derive(Table)]
#[table(key = u64, value = u64)]
struct Plain;

#[derive(Schema)]
struct App(
    Accounts,
    ByOwner,
    AccountsHistory,
    Names,
    ByNumber,
    NamesHistory,
    Plain,
);

type Accts = BTreeMap<u64, Acct>;
type NameMap = BTreeMap<String, u64>;

/// The model: the tables now, at the end of each version written, and which versions changed
/// each key.
#[derive(Default, Clone)]
struct Model {
    accounts: Accts,
    names: NameMap,
    plain: BTreeMap<u64, u64>,
    at: BTreeMap<u64, (Accts, NameMap)>,
    touched_accounts: BTreeMap<u64, BTreeSet<u64>>,
    touched_names: BTreeMap<String, BTreeSet<u64>>,
    horizon_accounts: u64,
    horizon_names: u64,
    /// Each key's highest pruned change: reads as of an earlier version are refused.
    pruned_accounts: BTreeMap<u64, u64>,
    pruned_names: BTreeMap<String, u64>,
    /// The last version each table's history recorded (an unwind lowers it).
    last_accounts: Option<u64>,
    last_names: Option<u64>,
    /// The tables whose history the transaction in progress recorded a change in: what its
    /// commit prunes under `Options::keep_versions`.
    changed_now: BTreeSet<&'static str>,
}

impl Model {
    /// The state at the end of `version`.
    fn state(&self, version: u64) -> (Accts, NameMap) {
        self.at
            .range(..=version)
            .next_back()
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    fn touch_account(&mut self, key: u64, version: u64) {
        self.touched_accounts
            .entry(key)
            .or_default()
            .insert(version);
        self.last_accounts = self.last_accounts.max(Some(version));
        self.changed_now.insert("Accounts");
    }

    fn touch_name(&mut self, key: &str, version: u64) {
        self.touched_names
            .entry(key.to_string())
            .or_default()
            .insert(version);
        self.last_names = self.last_names.max(Some(version));
        self.changed_now.insert("Names");
    }

    /// A prune of `Accounts`' history below `below`, run to its end: the horizon raised, each
    /// key's highest pruned change its mark. Returns how many changes it dropped.
    fn prune_accounts(&mut self, below: u64) -> usize {
        self.horizon_accounts = self.horizon_accounts.max(below);
        prune(&mut self.touched_accounts, &mut self.pruned_accounts, below)
    }

    /// [`prune_accounts`](Model::prune_accounts) of `Names`.
    fn prune_names(&mut self, below: u64) -> usize {
        self.horizon_names = self.horizon_names.max(below);
        prune(&mut self.touched_names, &mut self.pruned_names, below)
    }

    /// What the commit of a write transaction does under `Options::keep_versions(n)`: every
    /// history it recorded a change in pruned below its last version `+ 1 - n`.
    fn keep_versions(&mut self, n: u64) {
        for table in std::mem::take(&mut self.changed_now) {
            let last = match table {
                "Accounts" => self.last_accounts,
                _ => self.last_names,
            };
            let Some(below) = last.and_then(|l| l.checked_sub(n - 1)).filter(|b| *b > 0) else {
                continue;
            };
            let dropped = match table {
                "Accounts" => self.prune_accounts(below),
                _ => self.prune_names(below),
            };
            // The model prunes to the end: the test's histories never leave more than a batch.
            assert!(dropped <= tabula::KEEP_VERSIONS_BATCH, "{dropped} changes");
        }
    }
}

/// Drops the changes below `below` of `touched` (each key's versions), each key's highest one
/// kept in `pruned` as its mark; returns how many were dropped.
fn prune<K: Ord + Clone>(
    touched: &mut BTreeMap<K, BTreeSet<u64>>,
    pruned: &mut BTreeMap<K, u64>,
    below: u64,
) -> usize {
    let mut dropped = 0;
    for (k, vs) in touched.iter_mut() {
        if let Some(&p) = vs.range(..below).next_back() {
            let mark = pruned.entry(k.clone()).or_default();
            *mark = (*mark).max(p);
        }
        dropped += vs.range(..below).count();
        vs.retain(|v| *v >= below);
    }
    dropped
}

const KEYS: u64 = 24;

fn name(i: u64) -> String {
    // Some names hold a zero byte and some are prefixes of others, as escaping must handle.
    match i % 4 {
        0 => format!("n{i}"),
        1 => format!("n{}", i - 1),
        2 => format!("n{i}\0x"),
        _ => "a".repeat((i % 7) as usize),
    }
    .chars()
    .chain(std::iter::once(char::from(b'0' + (i % 10) as u8)))
    .collect()
}

fn acct(rng: &mut Rng) -> Acct {
    Acct {
        owner: rng.below(5) as u32,
        balance: rng.below(1000),
    }
}

/// One write of a transaction at `version`, on the transaction and the model.
fn write(
    tx: &mut tabula::Tx<'_, App, tabula::Rw>,
    m: &mut Model,
    rng: &mut Rng,
    version: u64,
) -> tabula::Result<()> {
    let k = rng.below(KEYS);
    match rng.below(14) {
        0..=2 => {
            let a = acct(rng);
            tx.put::<Accounts>(&k, &a)?;
            m.accounts.insert(k, a);
            m.touch_account(k, version);
        }
        3 => {
            let a = acct(rng);
            match tx.insert::<Accounts>(&k, &a) {
                Ok(()) => {
                    assert!(!m.accounts.contains_key(&k));
                    m.accounts.insert(k, a);
                    m.touch_account(k, version);
                }
                Err(Error::KeyExists { .. }) => assert!(m.accounts.contains_key(&k)),
                Err(e) => return Err(e),
            }
        }
        4 => {
            let found = tx.delete::<Accounts>(&k)?;
            assert_eq!(found, m.accounts.remove(&k).is_some());
            if found {
                m.touch_account(k, version);
            }
        }
        5 => {
            // A write cursor: upsert one key, delete the row at another.
            let a = acct(rng);
            let mut cursor = tx.cursor_mut::<Accounts>()?;
            cursor.upsert(&k, &a)?;
            m.accounts.insert(k, a);
            m.touch_account(k, version);
            let other = rng.below(KEYS);
            if cursor.seek_exact(&other)?.is_some() {
                cursor.delete_current()?;
                m.accounts.remove(&other);
                m.touch_account(other, version);
            }
        }
        6 => {
            let end = k + rng.below(4);
            let n = tx.delete_range::<Accounts>(k..end)?;
            let doomed: Vec<u64> = m.accounts.range(k..end).map(|(k, _)| *k).collect();
            assert_eq!(n, doomed.len() as u64);
            for d in doomed {
                m.accounts.remove(&d);
                m.touch_account(d, version);
            }
        }
        7 => {
            let limit = rng.below(1000);
            tx.retain::<Accounts>(|_, a| a.balance < limit)?;
            let doomed: Vec<u64> = m
                .accounts
                .iter()
                .filter(|(_, a)| a.balance >= limit)
                .map(|(k, _)| *k)
                .collect();
            for d in doomed {
                m.accounts.remove(&d);
                m.touch_account(d, version);
            }
        }
        8 => {
            let popped = tx.pop_first::<Names>()?;
            let expected = m.names.pop_first();
            assert_eq!(popped, expected);
            if let Some((key, _)) = popped {
                m.touch_name(&key, version);
            }
        }
        9 => {
            if rng.chance(20) {
                tx.clear::<Names>()?;
                let keys: Vec<String> = m.names.keys().cloned().collect();
                for key in keys {
                    m.touch_name(&key, version);
                }
                m.names.clear();
            } else {
                let key = name(k);
                let found = tx.delete::<Names>(key.as_str())?;
                assert_eq!(found, m.names.remove(&key).is_some());
                if found {
                    m.touch_name(&key, version);
                }
            }
        }
        10 | 11 => {
            let key = name(k);
            let value = rng.below(100);
            let held = m
                .names
                .iter()
                .any(|(other, v)| *v == value && *other != key);
            match tx.put::<Names>(key.as_str(), &value) {
                Ok(()) => {
                    assert!(!held, "{key:?} = {value}: another name holds it");
                    m.names.insert(key.clone(), value);
                    m.touch_name(&key, version);
                }
                // Refused before anything was written: the model is unchanged.
                Err(Error::UniqueViolation { .. }) => assert!(held, "{key:?} = {value}"),
                Err(e) => return Err(e),
            }
        }
        12 => {
            // Two names swap their values (through a third, free one): an unwind over it must
            // write each back although the other still holds its value when it is reached.
            let present: Vec<(String, u64)> =
                m.names.iter().map(|(k, v)| (k.clone(), *v)).collect();
            if present.len() >= 2 {
                let (a, va) = present[rng.below(present.len() as u64) as usize].clone();
                let (b, vb) = present[rng.below(present.len() as u64) as usize].clone();
                if a != b {
                    let free = (100..).find(|v| !m.names.values().any(|h| h == v)).unwrap();
                    tx.put::<Names>(a.as_str(), &free)?;
                    tx.put::<Names>(b.as_str(), &va)?;
                    tx.put::<Names>(a.as_str(), &vb)?;
                    m.names.insert(a.clone(), vb);
                    m.names.insert(b.clone(), va);
                    m.touch_name(&a, version);
                    m.touch_name(&b, version);
                }
            }
        }
        _ => {
            let value = rng.below(100);
            tx.put::<Plain>(&k, &value)?;
            m.plain.insert(k, value);
        }
    }
    Ok(())
}

/// Every read of the history agrees with the model: as of every retained version, below the
/// horizons, each key's versions and each version's changes; the current tables and index too.
fn check(db: &Db<App>, m: &Model, last: u64, sample: &[u64]) {
    let tx = db.read().unwrap();
    let accounts: Accts = tx.iter::<Accounts>().map(Result::unwrap).collect();
    assert_eq!(accounts, m.accounts);
    let names: NameMap = tx.iter::<Names>().map(Result::unwrap).collect();
    assert_eq!(names, m.names);
    let plain: BTreeMap<u64, u64> = tx.iter::<Plain>().map(Result::unwrap).collect();
    assert_eq!(plain, m.plain);
    let every: Vec<u64> = (0..=last + 1).collect();
    let versions = if sample.is_empty() {
        &every[..]
    } else {
        sample
    };
    for &version in versions {
        let (accts, nmap) = m.state(version);
        for k in 0..KEYS {
            let got = tx.get_as_of::<Accounts>(&k, version);
            if m.pruned_accounts.get(&k).is_some_and(|p| version < *p) {
                assert!(
                    matches!(got, Err(Error::BelowHorizon { .. })),
                    "accounts {k} as of {version} below horizon {}: {got:?}",
                    m.horizon_accounts
                );
            } else {
                assert_eq!(
                    got.unwrap(),
                    accts.get(&k).cloned(),
                    "accounts {k} as of {version}"
                );
            }
            let key = name(k);
            let got = tx.get_as_of::<Names>(key.as_str(), version);
            if m.pruned_names.get(&key).is_some_and(|p| version < *p) {
                assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
            } else {
                assert_eq!(
                    got.unwrap(),
                    nmap.get(&key).copied(),
                    "names {key:?} as of {version}"
                );
            }
        }
        // Ranges as of the version: the model's rows there, unless a row of the range had a
        // change after the version pruned.
        for (lo, hi) in [(0, KEYS), (3, 9), (KEYS / 2, KEYS + 5)] {
            let got = tx.range_as_of::<Accounts>(lo..hi, version);
            let refused = m.pruned_accounts.range(lo..hi).any(|(_, p)| version < *p);
            if refused {
                assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
            } else {
                let want: Vec<(u64, Acct)> =
                    accts.range(lo..hi).map(|(k, v)| (*k, v.clone())).collect();
                assert_eq!(got.unwrap(), want, "accounts {lo}..{hi} as of {version}");
            }
        }
        let got = tx.range_as_of::<Names>(.., version);
        if m.pruned_names.values().any(|p| version < *p) {
            assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
        } else {
            let want: Vec<(String, u64)> = nmap.iter().map(|(k, v)| (k.clone(), *v)).collect();
            assert_eq!(got.unwrap(), want, "names as of {version}");
        }
        if version >= m.horizon_accounts.max(1) {
            let (before, _) = m.state(version - 1);
            let mut expected: Vec<(u64, Option<Acct>, Option<Acct>)> = m
                .touched_accounts
                .iter()
                .filter(|(_, vs)| vs.contains(&version))
                .map(|(k, _)| (*k, before.get(k).cloned(), accts.get(k).cloned()))
                .collect();
            expected.sort_by_key(|(k, _, _)| *k);
            assert_eq!(
                tx.changes_at::<Accounts>(version).unwrap(),
                expected,
                "changes at {version}"
            );
        }
    }
    for k in 0..KEYS {
        let expected: Vec<u64> = m
            .touched_accounts
            .get(&k)
            .map(|vs| vs.iter().copied().collect())
            .unwrap_or_default();
        assert_eq!(
            tx.versions::<Accounts>(&k).unwrap(),
            expected,
            "versions of {k}"
        );
        let key = name(k);
        let expected: Vec<u64> = m
            .touched_names
            .get(&key)
            .map(|vs| vs.iter().copied().collect())
            .unwrap_or_default();
        assert_eq!(
            tx.versions::<Names>(key.as_str()).unwrap(),
            expected,
            "versions of {key:?}"
        );
    }
    for check in [
        tx.check_history::<Accounts>(10).unwrap(),
        tx.check_history::<Names>(10).unwrap(),
    ] {
        assert!(check.is_ok(), "{:?}", check.problems);
    }
    drop(tx);
    let report = db.check_indexes(10).unwrap();
    assert!(report.is_ok(), "{report:?}");
}

/// Why a nested transaction of the test ended without committing.
enum Abort {
    Chosen,
    Failed(Error),
}

impl From<Error> for Abort {
    fn from(e: Error) -> Self {
        Abort::Failed(e)
    }
}

fn run(seed: u64) {
    let mut rng = Rng::new(seed);
    // Some rounds keep only the last few versions: each commit prunes what it changed.
    let keep = rng.chance(40).then(|| 1 + rng.below(4));
    let options = match keep {
        Some(n) => tempdb::options().keep_versions(n),
        None => tempdb::options(),
    };
    let (_dir, db) = tempdb::open_with::<App>(options);
    let watcher = db.watch_values::<Accounts>(.., 1 << 20);
    let mut watched = Accts::new();
    let mut m = Model::default();
    let mut version = 0u64;
    for step in 0..60 {
        match rng.below(20) {
            // An unwind to a version at or above the horizon: the model's state then.
            0 | 1 if version > 0 => {
                let horizon = m.horizon_accounts.max(m.horizon_names);
                let to = horizon.saturating_sub(1) + rng.below(version + 2 - horizon.max(1));
                let mut tx = db.write().unwrap();
                let undone = tx.unwind(to).unwrap();
                let changes: usize = m
                    .touched_accounts
                    .values()
                    .chain(m.touched_names.values())
                    .map(|vs| vs.range(to + 1..).count())
                    .sum();
                assert_eq!(undone as usize, changes, "step {step}: changes undone");
                if rng.chance(20) {
                    drop(tx); // aborted: nothing changes
                    continue;
                }
                tx.commit().unwrap();
                let (accts, nmap) = m.state(to);
                m.accounts = accts;
                m.names = nmap;
                m.at.retain(|v, _| *v <= to);
                for vs in m
                    .touched_accounts
                    .values_mut()
                    .chain(m.touched_names.values_mut())
                {
                    vs.retain(|v| *v <= to);
                }
                m.last_accounts = m.last_accounts.map(|l| l.min(to));
                m.last_names = m.last_names.map(|l| l.min(to));
                // Writes below a horizon are refused: the next ones are at or above both.
                version = to.max(m.horizon_accounts).max(m.horizon_names);
            }
            // A prune of one table's history.
            2 if version > 1 => {
                let below = rng.below(version);
                let mut tx = db.write().unwrap();
                if rng.chance(50) {
                    while tx.prune_history::<Accounts>(below, 3).unwrap() == 3 {}
                    m.prune_accounts(below);
                } else {
                    while tx.prune_history::<Names>(below, 3).unwrap() == 3 {}
                    m.prune_names(below);
                }
                tx.commit().unwrap();
            }
            // A write transaction at the same or a later version.
            _ => {
                version += rng.below(3);
                m.changed_now.clear();
                let before = m.clone();
                let mut tx = db.write().unwrap();
                // A version below the last one recorded is refused, nothing written.
                if let Some(last) = m.last_accounts.filter(|l| *l > 0)
                    && rng.chance(30)
                {
                    tx.set_version(last - 1);
                    let refused = tx.put::<Accounts>(
                        &0,
                        &Acct {
                            owner: 0,
                            balance: 0,
                        },
                    );
                    assert!(
                        matches!(refused, Err(Error::VersionBelow { last: l, .. }) if l == last),
                        "step {step}: {refused:?}"
                    );
                }
                tx.set_version(version);
                for _ in 0..1 + rng.below(6) {
                    if rng.chance(15) {
                        // A nested transaction, committed or aborted.
                        let keep = rng.chance(50);
                        let saved = m.clone();
                        let ops = 1 + rng.below(3);
                        let result: Result<(), Abort> = tx.nested(|child| {
                            for _ in 0..ops {
                                write(child, &mut m, &mut rng, version)?;
                            }
                            if keep { Ok(()) } else { Err(Abort::Chosen) }
                        });
                        match result {
                            Ok(()) => assert!(keep),
                            Err(Abort::Chosen) => m = saved,
                            Err(Abort::Failed(e)) => panic!("step {step}: {e}"),
                        }
                    } else {
                        write(&mut tx, &mut m, &mut rng, version).unwrap();
                    }
                }
                if rng.chance(10) {
                    drop(tx);
                    m = before;
                    continue;
                }
                tx.commit().unwrap();
                m.at.insert(version, (m.accounts.clone(), m.names.clone()));
                if let Some(n) = keep {
                    m.keep_versions(n);
                }
            }
        }
        // A sample of versions after each step (the last, and two at random); all of them at
        // the end.
        let sample = [version, rng.below(version + 2), rng.below(version + 2)];
        check(&db, &m, version, if step == 59 { &[] } else { &sample });
        while let Some(event) = watcher.try_recv() {
            match event.unwrap() {
                Received::Event(Change::Put { key, value, .. }) => {
                    watched.insert(key, value.expect("watch_values carries the value"));
                }
                Received::Event(Change::Delete { key, .. }) => {
                    watched.remove(&key);
                }
                other => panic!("step {step}: {other:?}"),
            }
        }
        assert_eq!(watched, m.accounts, "step {step}: the watcher's replay");
    }
}

#[test]
fn history_agrees_with_a_model_of_every_version() {
    let seed = random::seed("history_agrees_with_a_model_of_every_version");
    for round in 0..8 {
        run(random::mix(seed ^ round));
    }
}

#[test]
fn a_write_without_a_version_or_below_the_last_is_refused_before_anything_is_written() {
    let (_dir, db) = tempdb::open::<App>();
    let mut tx = db.write().unwrap();
    tx.put::<Plain>(&1, &1).unwrap(); // not declared `history`: no version needed
    let refused = tx.put::<Accounts>(
        &1,
        &Acct {
            owner: 1,
            balance: 1,
        },
    );
    assert!(
        matches!(refused, Err(Error::NoVersion { table: "Accounts" })),
        "{refused:?}"
    );
    assert_eq!(tx.get::<Accounts>(&1).unwrap(), None);
    assert_eq!(tx.by_index::<ByOwner>(&1).count(), 0);
    tx.set_version(5);
    tx.put::<Accounts>(
        &1,
        &Acct {
            owner: 1,
            balance: 1,
        },
    )
    .unwrap();
    tx.commit().unwrap();

    let mut tx = db.write().unwrap();
    tx.set_version(4);
    let refused = tx.put::<Accounts>(
        &2,
        &Acct {
            owner: 2,
            balance: 2,
        },
    );
    assert!(
        matches!(
            refused,
            Err(Error::VersionBelow {
                version: 4,
                last: 5,
                ..
            })
        ),
        "{refused:?}"
    );
    let refused = tx.delete::<Accounts>(&1);
    assert!(
        matches!(refused, Err(Error::VersionBelow { .. })),
        "{refused:?}"
    );
    assert_eq!(tx.get::<Accounts>(&2).unwrap(), None);
    assert!(tx.get::<Accounts>(&1).unwrap().is_some());
    assert_eq!(tx.by_index::<ByOwner>(&2).count(), 0);
    // The same version as the last is allowed: several transactions may share one.
    tx.set_version(5);
    tx.put::<Accounts>(
        &2,
        &Acct {
            owner: 2,
            balance: 2,
        },
    )
    .unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.versions::<Accounts>(&2).unwrap(), [5]);
    assert_eq!(tx.get_as_of::<Accounts>(&2, 4).unwrap(), None);
}

#[test]
fn an_unwind_below_the_horizon_is_refused_before_anything_is_written() {
    let (_dir, db) = tempdb::open::<App>();
    for version in 1..=6 {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.put::<Accounts>(
            &1,
            &Acct {
                owner: 1,
                balance: version,
            },
        )
        .unwrap();
        tx.put::<Names>("n", &version).unwrap();
        tx.commit().unwrap();
    }
    let mut tx = db.write().unwrap();
    assert_eq!(tx.prune_history::<Names>(4, 100).unwrap(), 3);
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    let refused = tx.unwind(2);
    assert!(
        matches!(
            refused,
            Err(Error::BelowHorizon {
                table: "Names",
                version: 2,
                horizon: 4
            })
        ),
        "{refused:?}"
    );
    // Nothing was unwound, in either table.
    assert_eq!(tx.get::<Accounts>(&1).unwrap().unwrap().balance, 6);
    assert_eq!(tx.versions::<Accounts>(&1).unwrap(), [1, 2, 3, 4, 5, 6]);
    assert_eq!(tx.unwind(3).unwrap(), 6);
    assert_eq!(tx.get::<Accounts>(&1).unwrap().unwrap().balance, 3);
    assert_eq!(tx.get::<Names>("n").unwrap(), Some(3));
}

mod before {
    use tabula::{Schema, Table};

    /// `Names` before its history was declared.
    #[derive(Table)]
    #[table(name = "Names", key = String, value = u64)]
    pub struct Names;

    #[derive(Schema)]
    pub struct App(Names);
}

/// `Names` with its history, without the other tables.
#[derive(Schema)]
struct WithHistory(Names, NamesHistory);

#[test]
fn a_history_added_to_a_populated_table_records_from_the_first_version_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<before::App>(dir.path(), tempdb::options()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<before::Names>("a", &1).unwrap();
    tx.put::<before::Names>("b", &2).unwrap();
    tx.commit().unwrap();
    drop(db);

    let (db, report) =
        tabula::open_with_report::<WithHistory>(dir.path(), tempdb::options()).unwrap();
    assert_eq!(report.histories_started, ["names_history"]);
    // Nothing recorded yet: no version can be answered, not even for an unchanged key.
    let not_started = |r: Result<Option<u64>, Error>, version: u64| {
        assert!(
            matches!(r, Err(Error::HistoryNotStarted { table: "Names", version: v }) if v == version),
            "{r:?}"
        );
    };
    let tx = db.read().unwrap();
    not_started(tx.get_as_of::<Names>("a", 5), 5);
    not_started(tx.get_as_of::<Names>("z", 0), 0);
    assert!(matches!(
        tx.range_as_of::<Names>(.., 5),
        Err(Error::HistoryNotStarted { .. })
    ));
    assert!(matches!(
        tx.changes_at::<Names>(5),
        Err(Error::HistoryNotStarted { .. })
    ));
    assert_eq!(tx.versions::<Names>("a").unwrap(), Vec::<u64>::new());
    assert!(tx.check_history::<Names>(10).unwrap().is_ok());
    drop(tx);
    // An unwind has nothing of it to undo.
    let mut tx = db.write().unwrap();
    assert_eq!(tx.unwind(3).unwrap(), 0);
    tx.commit().unwrap();

    // The first version written starts it: the rows as they were are its state at version 9.
    let mut tx = db.write().unwrap();
    tx.set_version(10);
    tx.put::<Names>("a", &11).unwrap();
    tx.put::<Names>("c", &3).unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(12);
    tx.delete::<Names>("b").unwrap();
    tx.commit().unwrap();

    let expect = |db: &Db<WithHistory>| {
        let tx = db.read().unwrap();
        assert_eq!(tx.get_as_of::<Names>("a", 9).unwrap(), Some(1));
        assert_eq!(tx.get_as_of::<Names>("b", 9).unwrap(), Some(2));
        assert_eq!(tx.get_as_of::<Names>("c", 9).unwrap(), None);
        assert_eq!(tx.get_as_of::<Names>("a", 10).unwrap(), Some(11));
        assert_eq!(tx.get_as_of::<Names>("b", 11).unwrap(), Some(2));
        assert_eq!(tx.get_as_of::<Names>("b", 12).unwrap(), None);
        let below = |r: Result<Option<u64>, Error>| {
            assert!(
                matches!(
                    r,
                    Err(Error::BelowHorizon {
                        table: "Names",
                        version: 8,
                        horizon: 10
                    })
                ),
                "{r:?}"
            );
        };
        // Below the first version written, every key is refused, changed or not.
        below(tx.get_as_of::<Names>("a", 8));
        below(tx.get_as_of::<Names>("b", 8));
        below(tx.get_as_of::<Names>("never", 8));
        assert!(matches!(
            tx.range_as_of::<Names>(.., 8),
            Err(Error::BelowHorizon { horizon: 10, .. })
        ));
        assert!(matches!(
            tx.changes_at::<Names>(9),
            Err(Error::BelowHorizon { horizon: 10, .. })
        ));
        assert_eq!(
            tx.range_as_of::<Names>(.., 9).unwrap(),
            [("a".to_string(), 1), ("b".to_string(), 2)]
        );
        assert_eq!(
            tx.range_as_of::<Names>(.., 11).unwrap(),
            [
                ("a".to_string(), 11),
                ("b".to_string(), 2),
                ("c".to_string(), 3)
            ]
        );
        assert_eq!(
            tx.changes_at::<Names>(10).unwrap(),
            [
                ("a".to_string(), Some(1), Some(11)),
                ("c".to_string(), None, Some(3))
            ]
        );
        assert_eq!(tx.versions::<Names>("a").unwrap(), [10]);
        assert_eq!(tx.versions::<Names>("b").unwrap(), [12]);
        let check = tx.check_history::<Names>(10).unwrap();
        assert!(check.is_ok(), "{check:?}");
        // "a" was there before the history, unrecorded: its rows are not checked.
        assert_eq!(check.rows, 0);
    };
    expect(&db);
    drop(db);
    // The open finds the mark in the file.
    let db = tabula::open::<WithHistory>(dir.path(), tempdb::options()).unwrap();
    expect(&db);

    // An unwind goes back to the rows as the history found them, and no further.
    let mut tx = db.write().unwrap();
    assert!(matches!(
        tx.unwind(8),
        Err(Error::BelowHorizon { horizon: 10, .. })
    ));
    assert_eq!(tx.unwind(9).unwrap(), 3);
    assert_eq!(tx.range::<Names>(..).count(), 2);
    assert_eq!(tx.get::<Names>("a").unwrap(), Some(1));
    assert_eq!(tx.get::<Names>("b").unwrap(), Some(2));
    tx.commit().unwrap();
    drop(db);

    // A migration drops it; declared again, it starts again.
    let drop_it = tabula::Migrations::new().step(2, "drop-names-history", |m| {
        m.drop_table("names_history");
    });
    let (db, _) =
        tabula::open_with::<before::App>(dir.path(), tempdb::options(), &drop_it).unwrap();
    drop(db);
    let untyped = tabula_core::untyped::UntypedDb::open(dir.path()).unwrap();
    let names = untyped.read().unwrap().table_names().unwrap();
    assert!(!names.contains(&"names_history".to_string()), "{names:?}");
    drop(untyped);
    let (db, report) =
        tabula::open_with::<WithHistory>(dir.path(), tempdb::options(), &drop_it).unwrap();
    assert_eq!(report.histories_started, ["names_history"]);
    assert!(matches!(
        db.read().unwrap().get_as_of::<Names>("a", 100),
        Err(Error::HistoryNotStarted { .. })
    ));
}

/// `Names` with `String` values, for a migration that transforms them.
mod stringly {
    use tabula::{History, Schema, Table};

    #[derive(Table)]
    #[table(name = "Names", key = String, value = String, history)]
    pub struct Names;

    #[derive(History)]
    #[history(on = Names, name = "names_history")]
    pub struct NamesHistory;

    #[derive(Schema)]
    pub struct App(Names, NamesHistory);
}

/// The transform of the history test: `Names`' numbers as text.
fn as_text(n: u64) -> String {
    format!("#{n}")
}

/// Every read as of `versions` of `Names` (or of `stringly::Names`, through `text`), each
/// answer or refusal written out: a key's value, a version's changes, the whole table.
fn as_of_reads<S, T>(db: &Db<S>, versions: std::ops::RangeInclusive<u64>) -> Vec<String>
where
    S: Schema + tabula::Contains<T>,
    T: tabula::RowHistory<Key = String>,
    T::Value: std::fmt::Debug,
{
    let tx = db.read().unwrap();
    let mut out = Vec::new();
    for v in versions {
        for key in ["a", "b", "c", "d", "z"] {
            out.push(format!("{v} {key}: {:?}", tx.get_as_of::<T>(key, v)));
        }
        out.push(format!("{v} changes: {:?}", tx.changes_at::<T>(v)));
        out.push(format!("{v} range: {:?}", tx.range_as_of::<T>(.., v)));
    }
    for key in ["a", "b", "c", "d", "z"] {
        out.push(format!("{key} versions: {:?}", tx.versions::<T>(key)));
    }
    out
}

#[test]
fn a_transform_of_a_history_tables_values_converts_its_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<WithHistory>(dir.path(), tempdb::options()).unwrap();
    // Puts, overwrites and deletes at five versions; the first one pruned, leaving marks.
    // Each version's writes: a key and its value, or none for a delete.
    type Writes<'a> = &'a [(&'a str, Option<u64>)];
    let versions: [(u64, Writes<'_>); 5] = [
        (1, &[("a", Some(1)), ("b", Some(2)), ("d", Some(5))]),
        (2, &[("a", Some(10)), ("c", Some(3))]),
        (3, &[("b", None)]),
        (4, &[("b", Some(4)), ("a", None)]),
        (5, &[("c", Some(30)), ("d", Some(50))]),
    ];
    let mut states: BTreeMap<u64, NameMap> = BTreeMap::from([(0, NameMap::new())]);
    for (version, writes) in versions {
        let mut state = states[&(version - 1)].clone();
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        for (key, value) in writes {
            match value {
                Some(value) => {
                    tx.put::<Names>(*key, value).unwrap();
                    state.insert(key.to_string(), *value);
                }
                None => {
                    tx.delete::<Names>(*key).unwrap();
                    state.remove(*key);
                }
            }
        }
        tx.commit().unwrap();
        states.insert(version, state);
    }
    let mut tx = db.write().unwrap();
    assert_eq!(tx.prune_history::<Names>(2, 100).unwrap(), 3);
    tx.commit().unwrap();
    let before = as_of_reads::<_, Names>(&db, 0..=6);
    drop(db);

    let migrations = tabula::Migrations::new().step(2, "names-as-text", |m| {
        m.transform::<stringly::Names, u64>(as_text);
    });
    let (db, report) =
        tabula::open_with::<stringly::App>(dir.path(), tempdb::options(), &migrations).unwrap();
    assert_eq!(report.applied, [(2, "names-as-text")]);
    assert!(
        report.histories_started.is_empty(),
        "the history came along"
    );

    // Every answer as before, with the values transformed; every refusal as before.
    let transformed: Vec<String> = before
        .iter()
        .map(|line| {
            // The numbers the reads gave, in each form the reads print them.
            let mut out = line.clone();
            for n in [1u64, 2, 3, 4, 5, 10, 30, 50] {
                for (from, to) in [
                    (format!("Some({n})"), format!("Some({:?})", as_text(n))),
                    (format!("\", {n})"), format!("\", {:?})", as_text(n))),
                ] {
                    out = out.replace(&from, &to);
                }
            }
            out
        })
        .collect();
    assert_ne!(transformed, before, "the reads give values");
    let after = as_of_reads::<_, stringly::Names>(&db, 0..=6);
    assert_eq!(after, transformed);
    // And against the model, at every version from the horizon on.
    let text = |state: &NameMap| -> Vec<(String, String)> {
        state
            .iter()
            .map(|(k, v)| (k.clone(), as_text(*v)))
            .collect()
    };
    let tx = db.read().unwrap();
    for version in 2..=5 {
        assert_eq!(
            tx.range_as_of::<stringly::Names>(.., version).unwrap(),
            text(&states[&version]),
            "as of {version}"
        );
        for key in ["a", "b", "c", "d"] {
            assert_eq!(
                tx.get_as_of::<stringly::Names>(key, version).unwrap(),
                states[&version].get(key).copied().map(as_text),
                "{key} as of {version}"
            );
        }
    }
    assert_eq!(
        tx.changes_at::<stringly::Names>(4).unwrap(),
        [
            ("a".to_string(), Some(as_text(10)), None),
            ("b".to_string(), None, Some(as_text(4)))
        ]
    );
    let check = tx.check_history::<stringly::Names>(10).unwrap();
    assert!(check.is_ok(), "{check:?}");
    drop(tx);
    assert!(db.check().unwrap().is_ok());

    // An unwind writes the transformed values back.
    let mut tx = db.write().unwrap();
    assert_eq!(tx.unwind(2).unwrap(), 5);
    assert_eq!(tx.range::<stringly::Names>(..).count(), 4);
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(
        tx.iter::<stringly::Names>()
            .map(|e| e.unwrap())
            .collect::<Vec<_>>(),
        text(&states[&2])
    );
    let check = tx.check_history::<stringly::Names>(10).unwrap();
    assert!(check.is_ok(), "{check:?}");
    drop(tx);
    assert!(db.check().unwrap().is_ok());
    drop(db);
    // Applied once: the next open converts nothing again.
    let (db, report) =
        tabula::open_with::<stringly::App>(dir.path(), tempdb::options(), &migrations).unwrap();
    assert!(report.applied.is_empty());
    assert_eq!(
        db.read()
            .unwrap()
            .get_as_of::<stringly::Names>("a", 1)
            .unwrap(),
        Some(as_text(1))
    );
}

/// A table whose old values hold a variant the transform's old type lacks.
mod modes {
    use serde::{Deserialize, Serialize};
    use tabula::{History, Schema, Table};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum Mode {
        On,
        Off,
    }

    /// What the transform decodes: `Off` is not a value of it.
    #[derive(Serialize, Deserialize)]
    pub enum OnlyOn {
        On,
    }

    #[derive(Table)]
    #[table(name = "Modes", key = u64, value = Mode, history)]
    pub struct Modes;

    #[derive(History)]
    #[history(on = Modes, name = "modes_history")]
    pub struct ModesHistory;

    #[derive(Schema)]
    pub struct V1(Modes, ModesHistory);

    #[derive(Table)]
    #[table(name = "Modes", key = u64, value = String, history)]
    pub struct Named;

    #[derive(History)]
    #[history(on = Named, name = "modes_history")]
    pub struct NamedHistory;

    #[derive(Schema)]
    pub struct V2(Named, NamedHistory);
}

#[test]
fn a_transform_that_fails_on_a_value_in_the_history_commits_nothing() {
    use modes::{Mode, Modes, OnlyOn};
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<modes::V1>(dir.path(), tempdb::options()).unwrap();
    for (version, mode) in [(1, Mode::Off), (2, Mode::On)] {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.put::<Modes>(&7, &mode).unwrap();
        tx.commit().unwrap();
    }
    drop(db);

    // The row (`On`) converts; the value before version 2 (`Off`) does not.
    let migrations = tabula::Migrations::new().step(2, "modes-as-text", |m| {
        m.transform::<modes::Named, OnlyOn>(|OnlyOn::On| "on".to_string());
    });
    match tabula::open_with::<modes::V2>(dir.path(), tempdb::options(), &migrations) {
        Err(Error::Migration { message, .. }) => {
            assert!(message.contains("transform values of Modes"), "{message}");
            assert!(message.contains("`modes_history`"), "{message}");
            assert!(
                message.contains("the value before version 2 of key 0x0000000000000007"),
                "{message}"
            );
            assert!(message.contains("does not convert"), "{message}");
        }
        other => panic!("{:?}", other.map(|(_, report)| report)),
    }
    // Nothing of the step was committed: the rows, the history and the version are as they
    // were.
    let db = tabula::open::<modes::V1>(dir.path(), tempdb::options()).unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Modes>(&7).unwrap(), Some(Mode::On));
    assert_eq!(tx.get_as_of::<Modes>(&7, 1).unwrap(), Some(Mode::Off));
    assert_eq!(tx.get_as_of::<Modes>(&7, 0).unwrap(), None);
    assert!(tx.check_history::<Modes>(10).unwrap().is_ok());
}

#[test]
fn a_migration_that_rewrites_a_history_tables_keys_is_refused_until_the_history_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<WithHistory>(dir.path(), tempdb::options()).unwrap();
    for (version, a) in [(1, 1), (2, 2)] {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.put::<Names>("a", &a).unwrap();
        tx.commit().unwrap();
    }
    drop(db);

    // The history's keys are the old keys: rekeyed rows beside it would be read as of version
    // 1 through it, under keys they no longer have.
    let rekey = tabula::Migrations::new().step(2, "names-upper", |m| {
        m.rekey::<Names, String>(|name| name.to_uppercase());
    });
    let refused = tabula::open_with::<WithHistory>(dir.path(), tempdb::options(), &rekey);
    match refused {
        Err(Error::Migration { message, .. }) => {
            assert!(message.contains("rekey Names"), "{message}");
            assert!(message.contains("`names_history`"), "{message}");
            assert!(
                message.contains("drop_table(\"names_history\")"),
                "{message}"
            );
        }
        other => panic!("{:?}", other.map(|(_, report)| report)),
    }
    // Nothing of the step was committed.
    let db = tabula::open::<WithHistory>(dir.path(), tempdb::options()).unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Names>("a").unwrap(), Some(2));
    assert_eq!(tx.get_as_of::<Names>("a", 1).unwrap(), Some(1));
    drop(tx);
    drop(db);

    // Dropped first, the history lets the step through, and the open starts it again.
    let rekey = tabula::Migrations::new().step(2, "names-upper", |m| {
        m.drop_table("names_history");
        m.rekey::<Names, String>(|name| name.to_uppercase());
    });
    let (db, report) =
        tabula::open_with::<WithHistory>(dir.path(), tempdb::options(), &rekey).unwrap();
    assert_eq!(report.histories_started, ["names_history"]);
    let mut tx = db.write().unwrap();
    tx.set_version(3);
    tx.put::<Names>("A", &3).unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get_as_of::<Names>("A", 2).unwrap(), Some(2));
    assert!(matches!(
        tx.get_as_of::<Names>("A", 1),
        Err(Error::BelowHorizon { horizon: 3, .. })
    ));
    assert!(tx.check_history::<Names>(10).unwrap().is_ok());
}

#[test]
fn a_migrations_raw_write_to_a_history_tables_rows_is_refused_until_the_history_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<WithHistory>(dir.path(), tempdb::options()).unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(1);
    tx.put::<Names>("a", &1).unwrap();
    tx.commit().unwrap();
    drop(db);

    // A put or a delete would change a row without recording it: refused, naming the table,
    // its history and the drop that lets it through; reads go through.
    type Write = fn(&mut tabula::MigrationTx<'_>) -> tabula::Result<()>;
    fn put(tx: &mut tabula::MigrationTx<'_>) -> tabula::Result<()> {
        assert_eq!(tx.get::<Names>(&"a".to_string())?, Some(1));
        tx.put::<Names>(&"b".to_string(), &2)
    }
    fn delete(tx: &mut tabula::MigrationTx<'_>) -> tabula::Result<()> {
        tx.delete::<Names>(&"a".to_string()).map(drop)
    }
    for (what, f) in [("put", put as Write), ("delete", delete)] {
        let steps = tabula::Migrations::new().step(2, "raw", move |m| m.run("raw write", f));
        match tabula::open_with::<WithHistory>(dir.path(), tempdb::options(), &steps) {
            Err(Error::Migration { message, .. }) => {
                assert!(
                    message.contains(&format!("{what} a row of `Names`")),
                    "{message}"
                );
                assert!(message.contains("`names_history`"), "{message}");
                assert!(
                    message.contains("drop_table(\"names_history\")"),
                    "{message}"
                );
            }
            other => panic!("{what}: {:?}", other.map(|(_, report)| report)),
        }
    }
    let db = tabula::open::<WithHistory>(dir.path(), tempdb::options()).unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Names>("a").unwrap(), Some(1));
    assert_eq!(tx.get::<Names>("b").unwrap(), None);
    assert_eq!(tx.versions::<Names>("a").unwrap(), [1]);
    drop(tx);
    drop(db);

    // Dropped first, the history lets the write through, and the open starts it again.
    let steps = tabula::Migrations::new().step(2, "raw", |m| {
        m.drop_table("names_history");
        m.run("raw write", |tx| tx.put::<Names>(&"b".to_string(), &2));
    });
    let (db, report) =
        tabula::open_with::<WithHistory>(dir.path(), tempdb::options(), &steps).unwrap();
    assert_eq!(report.histories_started, ["names_history"]);
    assert_eq!(db.read().unwrap().get::<Names>("b").unwrap(), Some(2));
}

/// Integer keys are stored native-endian: a range as of a version walks their whole history.
#[derive(Table)]
#[table(key = u64, value = u64, integer_key, history)]
struct Counters;

#[derive(History)]
#[history(on = Counters)]
struct CountersHistory;

#[derive(Schema)]
struct Integers(Counters, CountersHistory);

#[test]
fn a_range_of_integer_keys_reads_as_of_a_version() {
    let (_dir, db) = tempdb::open::<Integers>();
    let keys = [1u64, 2, 255, 256, 257, 513, 65_536];
    for version in 1..=3u64 {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        for k in keys {
            if (k + version) % 3 == 0 {
                tx.delete::<Counters>(&k).unwrap();
            } else {
                tx.put::<Counters>(&k, &(k * 10 + version)).unwrap();
            }
        }
        tx.commit().unwrap();
    }
    let tx = db.read().unwrap();
    for version in 0..=3u64 {
        let want: Vec<(u64, u64)> = keys
            .iter()
            .filter(|&&k| (2..=300).contains(&k))
            // Every version writes every key: the version itself decides.
            .filter(|&&k| version >= 1 && (k + version) % 3 != 0)
            .map(|&k| (k, k * 10 + version))
            .collect();
        assert_eq!(
            tx.range_as_of::<Counters>(2..=300, version).unwrap(),
            want,
            "as of {version}"
        );
    }
}

#[test]
fn the_history_check_finds_each_kind_of_damage() {
    use tabula_core::startup::Bootstrap;
    let (dir, db) = tempdb::open::<App>();
    for version in 1..=4u64 {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.put::<Names>("a", &version).unwrap();
        // Another value than "a"'s: `ByNumber` is unique.
        tx.put::<Names>("b", &(version + 10)).unwrap();
        tx.commit().unwrap();
    }
    let mut tx = db.write().unwrap();
    tx.prune_history::<Names>(2, 100).unwrap();
    tx.commit().unwrap();
    let check = db.read().unwrap().check_history::<Names>(10).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    // 3 versions kept of each key; each key's mark of version 1.
    assert_eq!((check.changes, check.entries), (6, 8));
    drop(db);

    // Each damage, written by hand into the history, is a problem of its own.
    let history = "names_history";
    /// A stored string key as the history writes it (escaped, terminated: a `String` key has
    /// no fixed width).
    fn key(k: &str) -> Vec<u8> {
        let mut stored = k.as_bytes().to_vec();
        stored.extend_from_slice(&[0, 0]);
        stored
    }
    /// The key of a log entry.
    fn log(v: u64, k: &str) -> Vec<u8> {
        [&[0][..], &v.to_be_bytes(), &key(k)].concat()
    }
    /// The key of a change (or a mark), under the key.
    fn change(k: &str, v: u64) -> Vec<u8> {
        [&[1][..], &key(k), &v.to_be_bytes()].concat()
    }
    type Damage = Box<dyn Fn(&mut Bootstrap, tabula_core::startup::TableHandle)>;
    let damages: Vec<(&str, Damage)> = vec![
        (
            "no log entry",
            Box::new(move |b, h| {
                b.delete_raw(history, h, &log(3, "a")).unwrap();
            }),
        ),
        (
            "no change",
            Box::new(move |b, h| {
                b.delete_raw(history, h, &change("b", 4)).unwrap();
            }),
        ),
        (
            "below the horizon",
            Box::new(move |b, h| {
                b.put_raw(history, h, &log(1, "a"), &[], false).unwrap();
            }),
        ),
        (
            "no tag",
            Box::new(move |b, h| {
                b.put_raw(history, h, &change("a", 3), &[7], false).unwrap();
            }),
        ),
        (
            "above the last version",
            Box::new(move |b, h| {
                b.put_raw(history, h, &change("a", 9), &[0], false).unwrap();
                b.put_raw(history, h, &log(9, "a"), &[], false).unwrap();
            }),
        ),
        (
            "two marks",
            Box::new(move |b, h| {
                b.put_raw(history, h, &change("a", 0), &[], false).unwrap();
            }),
        ),
        (
            "not below the horizon",
            Box::new(move |b, h| {
                b.put_raw(history, h, &change("b", 3), &[], false).unwrap();
            }),
        ),
    ];
    let copy = tempfile::tempdir().unwrap();
    for (what, damage) in damages {
        // A fresh copy of the good file for each damage.
        let _ = std::fs::remove_dir_all(copy.path());
        std::fs::create_dir_all(copy.path()).unwrap();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), copy.path().join(entry.file_name())).unwrap();
        }
        let mut boot = Bootstrap::begin(copy.path(), &tempdb::options(), 8).unwrap();
        let handle = boot
            .find_table(history)
            .unwrap()
            .expect("the history")
            .handle;
        damage(&mut boot, handle);
        boot.checkpoint().unwrap();
        drop(boot);
        let db = tabula::open::<App>(copy.path(), tempdb::options()).unwrap();
        let check = db.read().unwrap().check_history::<Names>(10).unwrap();
        assert!(
            check.problems.iter().any(|p| p.contains(what)),
            "{what}: {:?}",
            check.problems
        );
    }
}

/// A plain history table for the tests of `Options::keep_versions`.
#[derive(Table)]
#[table(key = u64, value = u64, history)]
struct Ledger;

#[derive(History)]
#[history(on = Ledger)]
struct LedgerHistory;

#[derive(Schema)]
struct Kept(Ledger, LedgerHistory);

type Rows = BTreeMap<u64, u64>;

/// The rows at the end of `version` (none before the first).
fn rows_at(states: &BTreeMap<u64, Rows>, version: u64) -> Rows {
    states
        .range(..=version)
        .next_back()
        .map(|(_, rows)| rows.clone())
        .unwrap_or_default()
}

#[test]
fn keep_versions_keeps_the_changes_of_the_last_n_versions() {
    const N: u64 = 3;
    const LAST: u64 = 30;
    let mut rng = Rng::new(random::seed(
        "keep_versions_keeps_the_changes_of_the_last_n_versions",
    ));
    let (dir, db) = tempdb::open_with::<Kept>(tempdb::options().keep_versions(N));
    // Zero would prune each change as it is written: refused before the open, naming it.
    let none = tabula::open::<Kept>(dir.path(), tempdb::options().keep_versions(0));
    let Err(
        e @ Error::InvalidOption {
            option: "keep_versions",
            ..
        },
    ) = none
    else {
        panic!("{:?}", none.map(|_| ()));
    };
    assert!(e.to_string().contains("at least 1"), "{e}");
    let mut states: BTreeMap<u64, Rows> = BTreeMap::new();
    // The keys each version changed.
    let mut changed: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    let mut rows = Rows::new();
    let mut refused = 0;
    for version in 1..=LAST {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        for i in 0..1 + rng.below(6) {
            let k = rng.below(KEYS);
            if i > 0 && rng.chance(30) {
                if tx.delete::<Ledger>(&k).unwrap() {
                    rows.remove(&k);
                    changed.entry(version).or_default().insert(k);
                }
            } else {
                let v = rng.below(1000);
                tx.put::<Ledger>(&k, &v).unwrap();
                rows.insert(k, v);
                changed.entry(version).or_default().insert(k);
            }
        }
        tx.commit().unwrap();
        states.insert(version, rows.clone());

        // The changes of versions `version - N + 1 ..= version` stay: their horizon.
        let horizon = (version + 1).saturating_sub(N);
        let tx = db.read().unwrap();
        // As of every version from `version - N` on: exact, key by key and as a range.
        for at in version.saturating_sub(N)..=version {
            let want = rows_at(&states, at);
            for k in 0..KEYS {
                let got = tx.get_as_of::<Ledger>(&k, at).unwrap();
                assert_eq!(got, want.get(&k).copied(), "{k} as of {at} at {version}");
            }
            let range: Vec<(u64, u64)> = want.into_iter().collect();
            assert_eq!(tx.range_as_of::<Ledger>(.., at).unwrap(), range);
        }
        for at in horizon.max(1)..=version {
            let (before, after) = (rows_at(&states, at - 1), rows_at(&states, at));
            let want: Vec<_> = changed[&at]
                .iter()
                .map(|k| (*k, before.get(k).copied(), after.get(k).copied()))
                .collect();
            assert_eq!(
                tx.changes_at::<Ledger>(at).unwrap(),
                want,
                "changes at {at}"
            );
        }
        // Further back: the changes of a version are gone; a read is refused where a pruned
        // change would answer it, exact where a kept one (or the row) still does.
        for at in 0..version.saturating_sub(N) {
            if at > 0 {
                let got = tx.changes_at::<Ledger>(at);
                assert!(
                    matches!(got, Err(Error::BelowHorizon { horizon: h, .. }) if h == horizon),
                    "changes at {at} at {version}: {got:?}"
                );
            }
            let want = rows_at(&states, at);
            for k in 0..KEYS {
                match tx.get_as_of::<Ledger>(&k, at) {
                    Err(Error::BelowHorizon { horizon: h, .. }) => {
                        assert_eq!(h, horizon);
                        refused += 1;
                    }
                    got => assert_eq!(got.unwrap(), want.get(&k).copied(), "{k} as of {at}"),
                }
            }
        }
        for k in 0..KEYS {
            let want: Vec<u64> = changed
                .range(horizon..)
                .filter(|(_, keys)| keys.contains(&k))
                .map(|(v, _)| *v)
                .collect();
            assert_eq!(tx.versions::<Ledger>(&k).unwrap(), want, "versions of {k}");
        }
        let check = tx.check_history::<Ledger>(10).unwrap();
        assert!(check.is_ok(), "{:?}", check.problems);
        let kept: usize = changed.range(horizon..).map(|(_, keys)| keys.len()).sum();
        assert_eq!(check.changes, kept as u64, "changes kept at {version}");
    }
    assert!(refused > 0, "no read below the kept versions was refused");

    // An unwind goes back N versions, and no further.
    let mut tx = db.write().unwrap();
    let refused = tx.unwind(LAST - N - 1);
    assert!(
        matches!(
            refused,
            Err(Error::BelowHorizon { table: "Ledger", version, horizon })
                if version == LAST - N - 1 && horizon == LAST - N + 1
        ),
        "{refused:?}"
    );
    let undone = tx.unwind(LAST - N).unwrap();
    let kept: usize = changed.range(LAST - N + 1..).map(|(_, k)| k.len()).sum();
    assert_eq!(undone, kept as u64);
    let now: Rows = tx.iter::<Ledger>().map(Result::unwrap).collect();
    assert_eq!(now, rows_at(&states, LAST - N));
    tx.commit().unwrap();
    let check = db.read().unwrap().check_history::<Ledger>(10).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
}

/// Keys `0..n` at `value`, written at `version` in one transaction.
fn write_all(db: &Db<Kept>, version: u64, n: u64, value: u64) {
    let mut tx = db.write().unwrap();
    tx.set_version(version);
    for k in 0..n {
        tx.put::<Ledger>(&k, &value).unwrap();
    }
    tx.commit().unwrap();
}

#[test]
fn keep_versions_prunes_a_long_history_a_batch_per_commit() {
    const KEYS: u64 = 1500;
    let batch = tabula::KEEP_VERSIONS_BATCH as u64;
    let dir = tempfile::tempdir().unwrap();
    // Two versions of every key, kept while the option is off: 3000 changes.
    let db = tabula::open::<Kept>(dir.path(), tempdb::options()).unwrap();
    write_all(&db, 1, KEYS, 1);
    write_all(&db, 2, KEYS, 2);
    drop(db);

    // On: each commit of one change prunes the batch and one more, no more.
    let db = tabula::open::<Kept>(dir.path(), tempdb::options().keep_versions(1)).unwrap();
    let changes = |db: &Db<Kept>| db.read().unwrap().check_history::<Ledger>(1).unwrap();
    let mut left = 2 * KEYS;
    let mut commits = 0;
    for version in 3.. {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.put::<Ledger>(&0, &version).unwrap();
        tx.commit().unwrap();
        commits += 1;
        // Everything left is below this version; this commit's own change stays.
        let pruned = left.min(batch + 1);
        left = left + 1 - pruned;
        let check = changes(&db);
        assert!(check.is_ok(), "version {version}: {:?}", check.problems);
        assert_eq!(check.changes, left, "version {version}");

        let tx = db.read().unwrap();
        // The horizon is raised at once, whatever is left to prune.
        assert!(matches!(
            tx.changes_at::<Ledger>(version - 1),
            Err(Error::BelowHorizon { horizon, .. }) if horizon == version
        ));
        assert_eq!(
            tx.changes_at::<Ledger>(version).unwrap(),
            [(0, Some(version - 1), Some(version))]
        );
        // Reads stay exact or are refused, never wrong.
        for k in [1, KEYS / 2, KEYS - 1] {
            match tx.get_as_of::<Ledger>(&k, 1) {
                Err(Error::BelowHorizon { .. }) => {}
                got => assert_eq!(got.unwrap(), Some(1), "{k} as of 1"),
            }
            assert_eq!(tx.get_as_of::<Ledger>(&k, 2).unwrap(), Some(2));
        }
        if left == 1 {
            break;
        }
    }
    // 3000 changes, a commit prunes 1025 and adds one: three commits, each bounded.
    assert_eq!(commits, 3);
    let tx = db.read().unwrap();
    assert_eq!(tx.versions::<Ledger>(&1).unwrap(), Vec::<u64>::new());
    assert!(matches!(
        tx.get_as_of::<Ledger>(&1, 1),
        Err(Error::BelowHorizon { .. })
    ));
}

#[test]
fn an_unwind_longer_than_a_sorted_batch_removes_every_change_and_index_entry() {
    // 68,000 changes undone: more than the 65,536 index entries an unwind deletes in one
    // sorted batch, so the entries go in two batches.
    const KEYS: u64 = 34_000;
    let (_dir, db) = tempdb::open::<Kept>();
    for version in 1..=3 {
        write_all(&db, version, KEYS, version);
    }
    let mut tx = db.write().unwrap();
    assert_eq!(tx.unwind(1).unwrap(), 2 * KEYS);
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let check = tx.check_history::<Ledger>(10).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    assert_eq!(
        (check.changes, check.entries, check.rows),
        (KEYS, KEYS, KEYS)
    );
    for k in [0, 1, KEYS / 2, KEYS - 1] {
        assert_eq!(tx.get::<Ledger>(&k).unwrap(), Some(1));
        assert_eq!(tx.versions::<Ledger>(&k).unwrap(), [1]);
    }
}

/// An unwind writes each key back once, with its value at the end of the version (its
/// earliest change above it), however many versions above changed it: a watcher is told one
/// change a key reverted, not one a change undone.
#[test]
fn an_unwind_reverts_each_key_once_and_tells_its_watcher_once() {
    let (_dir, db) = tempdb::open::<App>();
    let acct = |owner: u32| Acct {
        owner,
        balance: u64::from(owner) * 10,
    };
    for version in 1..=4u64 {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.put::<Accounts>(&7, &acct(version as u32)).unwrap();
        if version == 2 {
            tx.put::<Accounts>(&8, &acct(9)).unwrap();
        }
        if version >= 3 {
            tx.put::<Accounts>(&8, &acct(version as u32 + 10)).unwrap();
        }
        tx.commit().unwrap();
    }
    let watcher = db.watch_values::<Accounts>(.., 1 << 10);
    let mut tx = db.write().unwrap();
    // Key 7 changed at 2, 3 and 4, key 8 at 2, 3 and 4: six changes undone.
    assert_eq!(tx.unwind(1).unwrap(), 6);
    tx.commit().unwrap();
    let mut seen = Vec::new();
    while let Some(event) = watcher.try_recv() {
        match event.unwrap() {
            Received::Event(Change::Put { key, value, .. }) => seen.push((key, value)),
            Received::Event(Change::Delete { key, .. }) => seen.push((key, None)),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, [(7, Some(acct(1))), (8, None)]);
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Accounts>(&7).unwrap(), Some(acct(1)));
    assert_eq!(tx.get::<Accounts>(&8).unwrap(), None);
    assert_eq!(tx.versions::<Accounts>(&7).unwrap(), [1]);
    assert_eq!(tx.versions::<Accounts>(&8).unwrap(), Vec::<u64>::new());
    let check = tx.check_history::<Accounts>(10).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
}

#[test]
fn a_bulk_load_with_a_version_prunes_at_each_batch_under_keep_versions() {
    let (_dir, db) = tempdb::open_with::<Kept>(tempdb::options().keep_versions(1));
    let load = |version: u64, keys: std::ops::Range<u64>| {
        db.bulk_loader::<Ledger>()
            .batch_entries(500)
            .version(version)
            .load(keys.map(move |k| (k, version)))
            .unwrap()
    };
    load(1, 0..3000);
    let report = load(2, 3000..6000);
    assert_eq!(report.batches, 6);
    let tx = db.read().unwrap();
    let check = tx.check_history::<Ledger>(10).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    // Version 1's 3000 changes are gone: more than one commit may prune (the batch and the
    // 500 changes each batch recorded), so the load's batches pruned them.
    assert_eq!(check.changes, 3000);
    const { assert!(3000 > tabula::KEEP_VERSIONS_BATCH + 500) };
    assert!(matches!(
        tx.changes_at::<Ledger>(1),
        Err(Error::BelowHorizon { horizon: 2, .. })
    ));
    assert!(matches!(
        tx.get_as_of::<Ledger>(&7, 0),
        Err(Error::BelowHorizon { horizon: 2, .. })
    ));
    assert_eq!(tx.get_as_of::<Ledger>(&7, 1).unwrap(), Some(1));
    assert_eq!(tx.get_as_of::<Ledger>(&3007, 1).unwrap(), None);
    assert_eq!(tx.versions::<Ledger>(&3007).unwrap(), [2]);
}

#[test]
fn the_history_check_finds_rows_written_behind_its_back() {
    use tabula_core::startup::Bootstrap;
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<Kept>(dir.path(), tempdb::options()).unwrap();
    for version in 1..=3 {
        write_all(&db, version, 4, version);
    }
    let mut tx = db.write().unwrap();
    tx.set_version(4);
    tx.delete::<Ledger>(&3).unwrap();
    tx.commit().unwrap();
    let check = db.read().unwrap().check_history::<Ledger>(10).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    assert_eq!(check.rows, 3);
    drop(db);

    // Rows written by hand, beside Tabula's write path: 100 and 200 new, 1 overwritten.
    let mut boot = Bootstrap::begin(dir.path(), &tempdb::options(), 8).unwrap();
    let ledger = boot.find_table("Ledger").unwrap().unwrap().handle;
    let value = boot
        .get_raw("Ledger", ledger, &1u64.to_be_bytes())
        .unwrap()
        .unwrap();
    for k in [100u64, 200] {
        boot.put_raw("Ledger", ledger, &k.to_be_bytes(), &value, false)
            .unwrap();
    }
    boot.put_raw("Ledger", ledger, &1u64.to_be_bytes(), &value, false)
        .unwrap();
    boot.checkpoint().unwrap();
    drop(boot);

    let db = tabula::open::<Kept>(dir.path(), tempdb::options()).unwrap();
    // 200 then changes through Tabula: its first change holds the row found there.
    let mut tx = db.write().unwrap();
    tx.set_version(5);
    tx.put::<Ledger>(&200, &5).unwrap();
    tx.commit().unwrap();
    let check = db.read().unwrap().check_history::<Ledger>(10).unwrap();
    assert_eq!(check.rows, 5);
    assert_eq!(check.problem_count, 2, "{:?}", check.problems);
    assert!(
        check.problems.iter().any(
            |p| p.contains("row of `Ledger` at key 100: not in the history")
                && p.contains("written without recording")
        ),
        "{:?}",
        check.problems
    );
    assert!(
        check.problems.iter().any(|p| p.contains(
            "row of `Ledger` at key 200: its first change, at version 5, has a value before it"
        )),
        "{:?}",
        check.problems
    );
    // Key 1, overwritten in place, is beyond the check: the values after a change are not
    // stored (each is the next change's value before, or the row).
    assert!(!check.problems.iter().any(|p| p.contains("key 1:")));
}

/// A transaction that prunes above its own version: its next change, which would land below
/// the new horizon, is refused (it used to skip the check, knowing the last version already).
#[test]
fn a_change_after_a_prune_above_its_version_in_the_same_transaction_is_refused() {
    let (_dir, db) = tempdb::open::<Kept>();
    let mut tx = db.write().unwrap();
    tx.set_version(5);
    tx.put::<Ledger>(&1, &1).unwrap();
    assert_eq!(tx.prune_history::<Ledger>(7, 100).unwrap(), 1);
    let refused = tx.put::<Ledger>(&2, &2);
    assert!(
        matches!(
            refused,
            Err(Error::BelowHorizon {
                table: "Ledger",
                version: 5,
                horizon: 7
            })
        ),
        "{refused:?}"
    );
    assert_eq!(tx.get::<Ledger>(&2).unwrap(), None);
}

#[test]
fn a_key_changed_twice_in_one_version_keeps_the_value_before_the_first_change() {
    let (_dir, db) = tempdb::open::<App>();
    let mut tx = db.write().unwrap();
    tx.set_version(1);
    tx.put::<Names>("k", &1).unwrap();
    tx.commit().unwrap();
    // Version 2: two puts in one transaction, then a delete and a put in a second one that
    // shares the version.
    let mut tx = db.write().unwrap();
    tx.set_version(2);
    tx.put::<Names>("k", &2).unwrap();
    tx.put::<Names>("k", &3).unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(2);
    tx.delete::<Names>("k").unwrap();
    tx.put::<Names>("k", &4).unwrap();
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    assert_eq!(tx.get_as_of::<Names>("k", 1).unwrap(), Some(1));
    assert_eq!(tx.get_as_of::<Names>("k", 2).unwrap(), Some(4));
    assert_eq!(tx.versions::<Names>("k").unwrap(), [1, 2]);
    assert_eq!(
        tx.changes_at::<Names>(2).unwrap(),
        [("k".to_string(), Some(1), Some(4))]
    );
    assert!(tx.check_history::<Names>(10).unwrap().is_ok());
    drop(tx);
    let mut tx = db.write().unwrap();
    assert_eq!(tx.unwind(1).unwrap(), 1, "one change of version 2 to undo");
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Names>("k").unwrap(), Some(1));
    assert_eq!(tx.versions::<Names>("k").unwrap(), [1]);
    assert!(tx.check_history::<Names>(10).unwrap().is_ok());
}

#[test]
fn an_unwind_gives_back_unique_keys_that_rows_swapped() {
    let (_dir, db) = tempdb::open::<App>();
    let mut tx = db.write().unwrap();
    tx.set_version(1);
    tx.put::<Names>("a", &1).unwrap();
    tx.put::<Names>("b", &2).unwrap();
    tx.commit().unwrap();
    // At version 2 the rows swap their unique values (through a third); at version 3 "b"
    // moves on, so the unwind reaches each row while the other holds its value.
    let mut tx = db.write().unwrap();
    tx.set_version(2);
    tx.put::<Names>("a", &3).unwrap();
    tx.put::<Names>("b", &1).unwrap();
    tx.put::<Names>("a", &2).unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(3);
    tx.put::<Names>("b", &4).unwrap();
    tx.put::<Names>("c", &1).unwrap();
    tx.commit().unwrap();

    let mut tx = db.write().unwrap();
    assert_eq!(tx.unwind(1).unwrap(), 4); // a key changed twice in a version is one change
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let rows: Vec<(String, u64)> = tx.iter::<Names>().map(Result::unwrap).collect();
    assert_eq!(rows, [("a".to_string(), 1), ("b".to_string(), 2)]);
    for (n, name) in [(1, Some("a")), (2, Some("b")), (3, None), (4, None)] {
        let got = tx.get_unique::<ByNumber>(&n).unwrap().map(|(k, _)| k);
        assert_eq!(got.as_deref(), name, "{n}");
    }
    drop(tx);
    let report = db.check_indexes(10).unwrap();
    assert!(report.is_ok(), "{report:?}");
}
