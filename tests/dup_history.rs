//! `dupsort` tables declared `history` against a model, as `tests/history.rs` checks tables of
//! one value a key: a map from each version to the whole state. Two tables: `Storage`, reth's
//! storage shape (a key, `u32` subkeys, `u32` values, several values a subkey possible), whose
//! history records each (key, subkey); and `Members` (no subkey), whose history records each
//! (key, value). Random write transactions — put, a write cursor's `upsert_dup`,
//! `delete_current` and `delete_current_dups`, `delete_dup`, `delete` of a key's every value,
//! `append_dup`, `delete_range`, `retain`, `clear`, nested transactions committed or aborted,
//! aborted transactions — at non-decreasing versions, with unwinds and prunes among them (some
//! rounds under `Options::keep_versions`). After each step every subkey's values as of every
//! retained version, every key's values, every (key, subkey)'s versions and every version's
//! changes are compared with the model, the history is checked, and a value watcher's changes
//! on `Storage`, replayed, give the table.

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::{BTreeMap, BTreeSet};

use random::Rng;
use tabula::{Change, Db, Error, History, Received, Schema, Table};

#[derive(Table)]
#[table(key = u64, subkey = u32, value = u32, dupsort, history)]
struct Storage;

#[derive(History)]
#[history(on = Storage)]
struct StorageHistory;

#[derive(Table)]
#[table(key = u64, value = u32, dupsort, history)]
struct Members;

#[derive(History)]
#[history(on = Members)]
struct MembersHistory;

#[derive(Schema)]
struct App(Storage, StorageHistory, Members, MembersHistory);

const KEYS: u64 = 6;
const SLOTS: u32 = 4;
const VALUES: u32 = 3;

/// `Storage`'s entries: (key, subkey, value).
type Entries = BTreeSet<(u64, u32, u32)>;
/// `Members`' entries: (key, value).
type Pairs = BTreeSet<(u64, u32)>;

/// What the model knows of one history, by unit `U`: which versions changed each unit, each
/// unit's mark (its highest pruned change), the horizon and the last version recorded.
#[derive(Clone)]
struct Hist<U> {
    touched: BTreeMap<U, BTreeSet<u64>>,
    pruned: BTreeMap<U, u64>,
    horizon: u64,
    last: Option<u64>,
    /// A change was recorded in the transaction in progress.
    changed_now: bool,
}

impl<U: Ord + Clone> Default for Hist<U> {
    fn default() -> Self {
        Hist {
            touched: BTreeMap::new(),
            pruned: BTreeMap::new(),
            horizon: 0,
            last: None,
            changed_now: false,
        }
    }
}

impl<U: Ord + Clone> Hist<U> {
    fn touch(&mut self, unit: U, version: u64) {
        self.touched.entry(unit).or_default().insert(version);
        self.last = self.last.max(Some(version));
        self.changed_now = true;
    }

    /// A prune below `below` run to its end; returns how many changes it dropped.
    fn prune(&mut self, below: u64) -> usize {
        self.horizon = self.horizon.max(below);
        let mut dropped = 0;
        for (u, vs) in self.touched.iter_mut() {
            if let Some(&p) = vs.range(..below).next_back() {
                let mark = self.pruned.entry(u.clone()).or_default();
                *mark = (*mark).max(p);
            }
            dropped += vs.range(..below).count();
            vs.retain(|v| *v >= below);
        }
        dropped
    }

    /// The commit of a transaction under `Options::keep_versions(n)`.
    fn keep_versions(&mut self, n: u64) {
        if !std::mem::take(&mut self.changed_now) {
            return;
        }
        if let Some(below) = self
            .last
            .and_then(|l| l.checked_sub(n - 1))
            .filter(|b| *b > 0)
        {
            let dropped = self.prune(below);
            assert!(dropped <= tabula::KEEP_VERSIONS_BATCH, "{dropped} changes");
        }
    }

    /// Changes above `to`.
    fn above(&self, to: u64) -> usize {
        self.touched
            .values()
            .map(|vs| vs.range(to + 1..).count())
            .sum()
    }

    fn unwind(&mut self, to: u64) {
        for vs in self.touched.values_mut() {
            vs.retain(|v| *v <= to);
        }
        self.last = self.last.map(|l| l.min(to));
    }

    /// Whether a read of `unit` as of `version` is refused (a change after it was pruned).
    fn refused(&self, unit: &U, version: u64) -> bool {
        self.pruned.get(unit).is_some_and(|p| version < *p)
    }
}

#[derive(Default, Clone)]
struct Model {
    storage: Entries,
    members: Pairs,
    at: BTreeMap<u64, (Entries, Pairs)>,
    storage_h: Hist<(u64, u32)>,
    members_h: Hist<(u64, u32)>,
}

impl Model {
    fn state(&self, version: u64) -> (Entries, Pairs) {
        self.at
            .range(..=version)
            .next_back()
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    /// Removes every `Storage` entry of key `k` that `doomed` takes, each unit touched.
    fn remove_storage(&mut self, version: u64, doomed: impl Fn(&(u64, u32, u32)) -> bool) {
        let gone: Vec<_> = self.storage.iter().filter(|e| doomed(e)).copied().collect();
        for e in gone {
            self.storage.remove(&e);
            self.storage_h.touch((e.0, e.1), version);
        }
    }
}

/// The values of unit `(k, s)` in `entries`, sorted.
fn unit_values(entries: &Entries, k: u64, s: u32) -> Vec<(u32, u32)> {
    entries
        .range((k, s, 0)..=(k, s, u32::MAX))
        .map(|(_, s, v)| (*s, *v))
        .collect()
}

/// One write of a transaction at `version`, on the transaction and the model.
fn write(
    tx: &mut tabula::Tx<'_, App, tabula::Rw>,
    m: &mut Model,
    rng: &mut Rng,
    version: u64,
) -> tabula::Result<()> {
    let k = rng.below(KEYS);
    let s = rng.below(u64::from(SLOTS)) as u32;
    let v = rng.below(u64::from(VALUES)) as u32;
    match rng.below(14) {
        // A put adds a value to the subkey's (a unit may hold several).
        0..=2 => {
            tx.put::<Storage>(&k, &(s, v))?;
            m.storage.insert((k, s, v));
            m.storage_h.touch((k, s), version);
        }
        3 | 4 => {
            tx.cursor_mut::<Storage>()?.upsert_dup(&k, &s, &v)?;
            m.remove_storage(version, |e| (e.0, e.1) == (k, s));
            m.storage.insert((k, s, v));
            m.storage_h.touch((k, s), version);
        }
        5 => {
            let found = tx.delete_dup::<Storage>(&k, &(s, v))?;
            assert_eq!(found, m.storage.remove(&(k, s, v)));
            if found {
                m.storage_h.touch((k, s), version);
            }
        }
        6 => {
            let found = tx.delete::<Storage>(&k)?;
            assert_eq!(
                found,
                m.storage.range((k, 0, 0)..(k + 1, 0, 0)).next().is_some()
            );
            m.remove_storage(version, |e| e.0 == k);
        }
        7 => {
            // A write cursor: the key's first value, or all of them.
            let all = rng.chance(40);
            let mut cursor = tx.cursor_mut::<Storage>()?;
            if cursor.seek_exact(&k)?.is_some() {
                if all {
                    cursor.delete_current_dups()?;
                    m.remove_storage(version, |e| e.0 == k);
                } else {
                    // The first value in the stored order: the lowest subkey, and among its
                    // values the first by their bytes (bincode's), which the model does not
                    // know: the cursor says which.
                    let (_, (fs, fv)) = cursor.current()?.expect("on the key's first value");
                    cursor.delete_current()?;
                    assert!(m.storage.remove(&(k, fs, fv)));
                    m.storage_h.touch((k, fs), version);
                }
            }
        }
        8 => {
            // Above every subkey of the key: accepted.
            let top = m
                .storage
                .range((k, 0, 0)..(k + 1, 0, 0))
                .map(|e| e.1 + 1)
                .max()
                .unwrap_or(0);
            let s = top + rng.below(2) as u32;
            tx.append_dup::<Storage>(&k, &(s, v))?;
            m.storage.insert((k, s, v));
            m.storage_h.touch((k, s), version);
        }
        9 => {
            let end = k + rng.below(3);
            let n = tx.delete_range::<Storage>(k..end)?;
            let doomed = m.storage.range((k, 0, 0)..(end, 0, 0)).count();
            assert_eq!(n, doomed as u64);
            m.remove_storage(version, |e| (k..end).contains(&e.0));
        }
        10 => {
            if rng.chance(15) {
                tx.clear::<Storage>()?;
                m.remove_storage(version, |_| true);
            } else {
                tx.retain::<Storage>(|_, (_, value)| *value != v)?;
                m.remove_storage(version, |e| e.2 == v);
            }
        }
        11 => {
            tx.put::<Members>(&k, &v)?;
            m.members.insert((k, v));
            m.members_h.touch((k, v), version);
        }
        12 => {
            let found = tx.delete_dup::<Members>(&k, &v)?;
            assert_eq!(found, m.members.remove(&(k, v)));
            if found {
                m.members_h.touch((k, v), version);
            }
        }
        _ => {
            tx.delete::<Members>(&k)?;
            let gone: Vec<_> = m.members.range((k, 0)..(k + 1, 0)).copied().collect();
            for e in gone {
                m.members.remove(&e);
                m.members_h.touch(e, version);
            }
        }
    }
    Ok(())
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// Every read of the histories agrees with the model.
fn check(db: &Db<App>, m: &Model, last: u64, sample: &[u64]) {
    let tx = db.read().unwrap();
    let storage: Entries = tx
        .iter::<Storage>()
        .map(|e| {
            let (k, (s, v)) = e.unwrap();
            (k, s, v)
        })
        .collect();
    assert_eq!(storage, m.storage);
    let members: Pairs = tx.iter::<Members>().map(Result::unwrap).collect();
    assert_eq!(members, m.members);
    let every: Vec<u64> = (0..=last + 1).collect();
    let versions = if sample.is_empty() {
        &every[..]
    } else {
        sample
    };
    for &version in versions {
        let (entries, pairs) = m.state(version);
        for k in 0..KEYS {
            let mut key_refused = false;
            for s in 0..SLOTS + 2 {
                let got = tx.dup_as_of::<Storage>(&k, &s, version);
                if m.storage_h.refused(&(k, s), version) {
                    key_refused = true;
                    assert!(
                        matches!(got, Err(Error::BelowHorizon { .. })),
                        "storage ({k}, {s}) as of {version}: {got:?}"
                    );
                } else {
                    assert_eq!(
                        sorted(got.unwrap()),
                        unit_values(&entries, k, s),
                        "storage ({k}, {s}) as of {version}"
                    );
                }
            }
            // `append_dup` writes subkeys above those read one by one.
            let key_refused = key_refused
                || (m.storage_h.pruned.range((k, 0)..(k + 1, 0))).any(|(_, p)| version < *p);
            let got = tx.dups_as_of::<Storage>(&k, version);
            if key_refused {
                assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
            } else {
                let want: Vec<(u32, u32)> = entries
                    .range((k, 0, 0)..(k + 1, 0, 0))
                    .map(|(_, s, v)| (*s, *v))
                    .collect();
                let got = got.unwrap();
                // In the stored order: by subkey first.
                assert!(got.is_sorted_by_key(|(s, _)| *s), "{got:?}");
                assert_eq!(sorted(got), want, "storage {k} as of {version}");
            }
            let mut key_refused = false;
            for v in 0..VALUES {
                let got = tx.dup_as_of::<Members>(&k, &v, version);
                if m.members_h.refused(&(k, v), version) {
                    key_refused = true;
                    assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
                } else {
                    let want: Vec<u32> = pairs.contains(&(k, v)).then_some(v).into_iter().collect();
                    assert_eq!(got.unwrap(), want, "members ({k}, {v}) as of {version}");
                }
            }
            let got = tx.dups_as_of::<Members>(&k, version);
            if key_refused {
                assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
            } else {
                let want: Vec<u32> = pairs.range((k, 0)..(k + 1, 0)).map(|e| e.1).collect();
                assert_eq!(got.unwrap(), want, "members {k} as of {version}");
            }
        }
        // Ranges of keys as of the version: the model's entries there, unless a unit of the
        // range had a change after the version pruned.
        for (lo, hi) in [(0, KEYS), (1, 3), (KEYS - 1, KEYS + 3)] {
            let got = tx.dup_range_as_of::<Storage>(lo..hi, version);
            let refused =
                |h: &Hist<(u64, u32)>| h.pruned.range((lo, 0)..(hi, 0)).any(|(_, p)| version < *p);
            if refused(&m.storage_h) {
                assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
            } else {
                let got: Vec<(u64, u32, u32)> = got
                    .unwrap()
                    .into_iter()
                    .map(|(k, (s, v))| (k, s, v))
                    .collect();
                // In key order, each key's values by subkey first.
                assert!(got.is_sorted_by_key(|(k, s, _)| (*k, *s)), "{got:?}");
                let want: Vec<_> = entries.range((lo, 0, 0)..(hi, 0, 0)).copied().collect();
                assert_eq!(sorted(got), want, "storage {lo}..{hi} as of {version}");
            }
            let got = tx.dup_range_as_of::<Members>(lo..hi, version);
            if refused(&m.members_h) {
                assert!(matches!(got, Err(Error::BelowHorizon { .. })), "{got:?}");
            } else {
                let want: Vec<_> = pairs.range((lo, 0)..(hi, 0)).copied().collect();
                assert_eq!(got.unwrap(), want, "members {lo}..{hi} as of {version}");
            }
        }
        if version >= m.storage_h.horizon.max(1) {
            let (before, _) = m.state(version - 1);
            let want: Vec<_> = m
                .storage_h
                .touched
                .iter()
                .filter(|(_, vs)| vs.contains(&version))
                .map(|((k, s), _)| {
                    (
                        *k,
                        unit_values(&before, *k, *s),
                        unit_values(&entries, *k, *s),
                    )
                })
                .collect();
            let got: Vec<_> = tx
                .dup_changes_at::<Storage>(version)
                .unwrap()
                .into_iter()
                .map(|(k, b, a)| (k, sorted(b), sorted(a)))
                .collect();
            assert_eq!(got, want, "storage changes at {version}");
        }
        if version >= m.members_h.horizon.max(1) {
            let (_, before) = m.state(version - 1);
            let has = |set: &Pairs, k: u64, v: u32| -> Vec<u32> {
                set.contains(&(k, v)).then_some(v).into_iter().collect()
            };
            let want: Vec<_> = m
                .members_h
                .touched
                .iter()
                .filter(|(_, vs)| vs.contains(&version))
                .map(|((k, v), _)| (*k, has(&before, *k, *v), has(&pairs, *k, *v)))
                .collect();
            let got = tx.dup_changes_at::<Members>(version).unwrap();
            assert_eq!(got, want, "members changes at {version}");
        }
    }
    for k in 0..KEYS {
        for s in 0..SLOTS + 2 {
            let want: Vec<u64> = m
                .storage_h
                .touched
                .get(&(k, s))
                .map(|vs| vs.iter().copied().collect())
                .unwrap_or_default();
            assert_eq!(
                tx.dup_versions::<Storage>(&k, &s).unwrap(),
                want,
                "versions of ({k}, {s})"
            );
        }
        for v in 0..VALUES {
            let want: Vec<u64> = m
                .members_h
                .touched
                .get(&(k, v))
                .map(|vs| vs.iter().copied().collect())
                .unwrap_or_default();
            assert_eq!(tx.dup_versions::<Members>(&k, &v).unwrap(), want);
        }
    }
    for check in [
        tx.check_history::<Storage>(10).unwrap(),
        tx.check_history::<Members>(10).unwrap(),
    ] {
        assert!(check.is_ok(), "{:?}", check.problems);
    }
}

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
    let keep = rng.chance(40).then(|| 1 + rng.below(4));
    let options = match keep {
        Some(n) => tempdb::options().keep_versions(n),
        None => tempdb::options(),
    };
    let (_dir, db) = tempdb::open_with::<App>(options);
    let watcher = db.watch_values::<Storage>(.., 1 << 20);
    let mut watched = Entries::new();
    let mut m = Model::default();
    let mut version = 0u64;
    for step in 0..50 {
        match rng.below(20) {
            0 | 1 if version > 0 => {
                let horizon = m.storage_h.horizon.max(m.members_h.horizon);
                let to = horizon.saturating_sub(1) + rng.below(version + 2 - horizon.max(1));
                let mut tx = db.write().unwrap();
                let undone = tx.unwind(to).unwrap();
                let changes = m.storage_h.above(to) + m.members_h.above(to);
                assert_eq!(undone as usize, changes, "step {step}: changes undone");
                if rng.chance(20) {
                    drop(tx);
                    continue;
                }
                tx.commit().unwrap();
                let (entries, pairs) = m.state(to);
                m.storage = entries;
                m.members = pairs;
                m.at.retain(|v, _| *v <= to);
                m.storage_h.unwind(to);
                m.members_h.unwind(to);
                version = to.max(m.storage_h.horizon).max(m.members_h.horizon);
            }
            2 if version > 1 => {
                let below = rng.below(version);
                let mut tx = db.write().unwrap();
                if rng.chance(50) {
                    while tx.prune_history::<Storage>(below, 3).unwrap() == 3 {}
                    m.storage_h.prune(below);
                } else {
                    while tx.prune_history::<Members>(below, 3).unwrap() == 3 {}
                    m.members_h.prune(below);
                }
                tx.commit().unwrap();
            }
            _ => {
                version += rng.below(3);
                m.storage_h.changed_now = false;
                m.members_h.changed_now = false;
                let before = m.clone();
                let mut tx = db.write().unwrap();
                if let Some(last) = m.storage_h.last.filter(|l| *l > 0)
                    && rng.chance(30)
                {
                    tx.set_version(last - 1);
                    let refused = tx.put::<Storage>(&0, &(0, 0));
                    assert!(
                        matches!(refused, Err(Error::VersionBelow { last: l, .. }) if l == last),
                        "step {step}: {refused:?}"
                    );
                }
                tx.set_version(version);
                for _ in 0..1 + rng.below(6) {
                    if rng.chance(15) {
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
                m.at.insert(version, (m.storage.clone(), m.members.clone()));
                if let Some(n) = keep {
                    m.storage_h.keep_versions(n);
                    m.members_h.keep_versions(n);
                }
            }
        }
        let sample = [version, rng.below(version + 2), rng.below(version + 2)];
        check(&db, &m, version, if step == 49 { &[] } else { &sample });
        while let Some(event) = watcher.try_recv() {
            match event.unwrap() {
                Received::Event(Change::Put { key, value, .. }) => {
                    let (s, v) = value.expect("a dupsort change carries the value");
                    watched.insert((key, s, v));
                }
                Received::Event(Change::Delete {
                    key,
                    value: Some((s, v)),
                    ..
                }) => {
                    watched.remove(&(key, s, v));
                }
                Received::Event(Change::Delete {
                    key, value: None, ..
                }) => {
                    watched.retain(|e| e.0 != key);
                }
                Received::Event(Change::Cleared { .. }) => watched.clear(),
                other => panic!("step {step}: {other:?}"),
            }
        }
        assert_eq!(watched, m.storage, "step {step}: the watcher's replay");
    }
}

#[test]
fn dupsort_history_agrees_with_a_model_of_every_version() {
    let seed = random::seed("dupsort_history_agrees_with_a_model_of_every_version");
    for round in 0..8 {
        run(random::mix(seed ^ round));
    }
}

#[derive(Schema)]
struct StorageOnly(Storage, StorageHistory);

#[test]
fn a_transform_of_a_dupsort_history_tables_values_is_refused_until_the_history_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<StorageOnly>(dir.path(), tempdb::options()).unwrap();
    for version in [1, 2] {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.cursor_mut::<Storage>()
            .unwrap()
            .upsert_dup(&7, &1, &(version as u32))
            .unwrap();
        tx.commit().unwrap();
    }
    drop(db);

    // The history is keyed by (key, subkey): a map of the values may change the subkeys.
    type Stored = tabula::SubKeyed<u32, tabula::Bincode<u32>>;
    let transform = tabula::Migrations::new().step(2, "double", |m| {
        m.transform_with::<Storage, Stored>(|(s, v)| (s, v * 2));
    });
    let refused = tabula::open_with::<StorageOnly>(dir.path(), tempdb::options(), &transform);
    match refused {
        Err(Error::Migration { message, .. }) => {
            assert!(message.contains("transform values of Storage"), "{message}");
            assert!(
                message.contains("drop_table(\"StorageHistory\")"),
                "{message}"
            );
        }
        other => panic!("{:?}", other.map(|(_, report)| report)),
    }
    // Nothing of the step was committed.
    let db = tabula::open::<StorageOnly>(dir.path(), tempdb::options()).unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.dup_as_of::<Storage>(&7, &1, 1).unwrap(), [(1, 1)]);
    assert_eq!(tx.dup_as_of::<Storage>(&7, &1, 2).unwrap(), [(1, 2)]);
    drop(tx);
    drop(db);

    // Dropped first, the history lets the step through, and the open starts it again.
    let transform = tabula::Migrations::new().step(2, "double", |m| {
        m.drop_table("StorageHistory");
        m.transform_with::<Storage, Stored>(|(s, v)| (s, v * 2));
    });
    let (db, report) =
        tabula::open_with::<StorageOnly>(dir.path(), tempdb::options(), &transform).unwrap();
    assert_eq!(report.histories_started, ["StorageHistory"]);
    // Started on rows, the history records from the first version written.
    let mut tx = db.write().unwrap();
    tx.set_version(3);
    tx.cursor_mut::<Storage>()
        .unwrap()
        .upsert_dup(&7, &2, &9)
        .unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.dups_as_of::<Storage>(&7, 3).unwrap(), [(1, 4), (2, 9)]);
    assert_eq!(tx.dup_as_of::<Storage>(&7, &2, 3).unwrap(), [(2, 9)]);
    assert!(matches!(
        tx.dup_as_of::<Storage>(&7, &1, 1),
        Err(Error::BelowHorizon { horizon: 3, .. })
    ));
    assert!(tx.check_history::<Storage>(10).unwrap().is_ok());
}

/// The write forms that cannot know a unit's values before them are refused before anything is
/// written: a write without a version, or below the last one recorded.
#[test]
fn a_dupsort_write_without_a_version_or_below_the_last_is_refused_before_anything_is_written() {
    let (_dir, db) = tempdb::open::<App>();
    let mut tx = db.write().unwrap();
    let refused = tx.cursor_mut::<Storage>().unwrap().upsert_dup(&1, &1, &1);
    assert!(
        matches!(refused, Err(Error::NoVersion { table: "Storage" })),
        "{refused:?}"
    );
    let refused = tx.delete::<Members>(&1);
    // Nothing to delete: nothing to refuse either.
    assert!(matches!(refused, Ok(false)), "{refused:?}");
    tx.set_version(5);
    tx.put::<Members>(&1, &1).unwrap();
    tx.put::<Storage>(&1, &(1, 1)).unwrap();
    tx.put::<Storage>(&1, &(1, 2)).unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(4);
    // `upsert_dup` deletes the unit's values before it puts: refused before the first delete.
    let refused = tx.cursor_mut::<Storage>().unwrap().upsert_dup(&1, &1, &3);
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
    assert_eq!(tx.dups::<Storage>(&1).values().count(), 2);
    let refused = tx.delete_dup::<Members>(&1, &1);
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
    let refused = tx.clear::<Members>();
    assert!(
        matches!(refused, Err(Error::VersionBelow { .. })),
        "{refused:?}"
    );
    drop(tx);
    let tx = db.read().unwrap();
    assert_eq!(tx.dups::<Members>(&1).values().count(), 1);
    assert_eq!(tx.dup_versions::<Members>(&1, &1).unwrap(), [5]);
    assert_eq!(
        tx.dup_as_of::<Storage>(&1, &1, 5).unwrap(),
        [(1, 1), (1, 2)]
    );
    drop(tx);
    // At a later version, one change of the unit records both values before it.
    let mut tx = db.write().unwrap();
    tx.set_version(6);
    tx.cursor_mut::<Storage>()
        .unwrap()
        .upsert_dup(&1, &1, &3)
        .unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.dup_versions::<Storage>(&1, &1).unwrap(), [5, 6]);
    assert_eq!(
        tx.dup_as_of::<Storage>(&1, &1, 5).unwrap(),
        [(1, 1), (1, 2)]
    );
    assert_eq!(tx.dup_as_of::<Storage>(&1, &1, 6).unwrap(), [(1, 3)]);
    assert_eq!(tx.dup_changes_at::<Storage>(6).unwrap().len(), 1);
}

/// The typed check goes unit by unit: a value of a new subkey written beside the history's
/// back, under a key the history knows, is found (the schema-less check, which goes key by key,
/// cannot tell).
#[test]
fn the_dupsort_history_check_finds_a_subkey_written_without_recording_it() {
    use tabula_core::startup::Bootstrap;

    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<StorageOnly>(dir.path(), tempdb::options()).unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(1);
    tx.put::<Storage>(&7, &(1, 1)).unwrap();
    tx.put::<Storage>(&7, &(1, 2)).unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(2);
    // The unit (7, 1) held two values before version 2.
    tx.cursor_mut::<Storage>()
        .unwrap()
        .upsert_dup(&7, &1, &3)
        .unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(
        sorted(tx.dup_as_of::<Storage>(&7, &1, 1).unwrap()),
        [(1, 1), (1, 2)]
    );
    let check = tx.check_history::<Storage>(10).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    assert_eq!((check.changes, check.rows), (2, 1));
    drop(tx);
    drop(db);

    let mut boot = Bootstrap::begin(dir.path(), &tempdb::options(), 1).unwrap();
    let storage = boot.find_table("Storage").unwrap().unwrap().handle;
    // Subkey 5 (four bytes, big-endian), then bincode's 9.
    let value = [0, 0, 0, 5, 9];
    boot.put_raw("Storage", storage, &7u64.to_be_bytes(), &value, false)
        .unwrap();
    boot.checkpoint().unwrap();
    drop(boot);
    let db = tabula::open::<StorageOnly>(dir.path(), tempdb::options()).unwrap();
    let check = db.read().unwrap().check_history::<Storage>(10).unwrap();
    assert_eq!(check.problem_count, 1, "{:?}", check.problems);
    assert!(
        check.problems[0].contains("row of `Storage` at key 7: not in the history"),
        "{:?}",
        check.problems
    );
}
