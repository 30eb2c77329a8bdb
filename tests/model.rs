//! Model-based test: random sequences of writes, reads, scans, commits, aborts and reopens run
//! against Tabula and against `BTreeMap`s, and every result must be the same — values, errors
//! (`KeyExists`, `AppendOutOfOrder`), deletions, scans in both directions, what a read
//! transaction sees, and what survives an abort or a reopen.
//!
//! `PROPTEST_CASES` raises the case count (default here: 96 sequences of up to 80 operations).
//! The RNG seed is printed; `TABULA_SEED=<seed>` replays a run. A failing case is saved in
//! `tests/proptest-regressions/model.txt`, which is committed: proptest runs the saved cases
//! first, every run.

#[path = "support/props.rs"]
mod props;
#[path = "support/random.rs"]
mod random;

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::ops::Bound;

use proptest::collection::vec;
use proptest::prelude::*;
use tabula::{Error, Options, Raw, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "numbers", key = u16, value = u32)]
struct Numbers;

#[derive(Table)]
#[table(name = "named", key = (String, u8), value = Vec<u8>, codec = Raw)]
struct Named;

#[derive(Schema)]
struct ModelSchema(Numbers, Named);

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u32),
    Insert(u16, u32),
    Append(u16, u32),
    Delete(u16),
    Get(u16),
    Range(Bound<u16>, Bound<u16>, bool),
    Len,
    PutNamed(String, u8, Vec<u8>),
    DeleteNamed(String, u8),
    Prefix(String, bool),
    /// Reads through a separate read transaction: sees only what was committed.
    ReadCommitted(u16),
    Commit,
    Abort,
    Reopen,
}

fn key() -> impl Strategy<Value = u16> {
    0u16..48
}

fn bound() -> impl Strategy<Value = Bound<u16>> {
    prop_oneof![
        Just(Bound::Unbounded),
        key().prop_map(Bound::Included),
        key().prop_map(Bound::Excluded),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "a", "ab", "b", "a\u{0}", "é"]).prop_map(String::from)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), any::<u32>()).prop_map(|(k, v)| Op::Put(k, v)),
        3 => (key(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => (0u16..56, any::<u32>()).prop_map(|(k, v)| Op::Append(k, v)),
        3 => key().prop_map(Op::Delete),
        3 => key().prop_map(Op::Get),
        3 => (bound(), bound(), any::<bool>()).prop_map(|(a, b, r)| Op::Range(a, b, r)),
        1 => Just(Op::Len),
        4 => (name(), 0u8..4, vec(any::<u8>(), 0..6)).prop_map(|(s, n, v)| Op::PutNamed(s, n, v)),
        2 => (name(), 0u8..4).prop_map(|(s, n)| Op::DeleteNamed(s, n)),
        2 => (name(), any::<bool>()).prop_map(|(s, r)| Op::Prefix(s, r)),
        2 => key().prop_map(Op::ReadCommitted),
        3 => Just(Op::Commit),
        1 => Just(Op::Abort),
        1 => Just(Op::Reopen),
    ]
}

#[derive(Clone, Default, Debug, PartialEq)]
struct Model {
    numbers: BTreeMap<u16, u32>,
    named: BTreeMap<(String, u8), Vec<u8>>,
}

fn valid_range(lo: Bound<u16>, hi: Bound<u16>) -> bool {
    // BTreeMap::range panics on inverted or empty-excluded ranges; Tabula returns nothing.
    match (lo, hi) {
        (Bound::Included(a), Bound::Included(b)) => a <= b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b)) => a < b,
        _ => true,
    }
}

/// Runs `ops` against a fresh database and the model; returns the number of ops executed.
fn run(ops: &[Op]) -> Result<usize, TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let options = || Options::new().max_size(1 << 30).sync(SyncMode::SafeNoSync);
    let mut committed = Model::default();
    let mut i = 0;
    'sessions: loop {
        let db = tabula::open::<ModelSchema>(dir.path(), options()).unwrap();
        // After (re)opening, the database holds exactly what was committed.
        {
            let tx = db.read().unwrap();
            let numbers: BTreeMap<u16, u32> =
                tx.iter::<Numbers>().collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(&numbers, &committed.numbers);
            let named: BTreeMap<(String, u8), Vec<u8>> =
                tx.iter::<Named>().collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(&named, &committed.named);
        }
        loop {
            let mut pending = committed.clone();
            let mut tx = db.write().unwrap();
            loop {
                let Some(op) = ops.get(i) else {
                    tx.commit().unwrap();
                    committed = pending;
                    break 'sessions;
                };
                i += 1;
                match op.clone() {
                    Op::Put(k, v) => {
                        tx.put::<Numbers>(&k, &v).unwrap();
                        pending.numbers.insert(k, v);
                    }
                    Op::Insert(k, v) => {
                        let r = tx.insert::<Numbers>(&k, &v);
                        match pending.numbers.entry(k) {
                            Entry::Occupied(_) => prop_assert!(
                                matches!(
                                    r,
                                    Err(Error::KeyExists {
                                        table: "numbers",
                                        ..
                                    })
                                ),
                                "{:?}",
                                r
                            ),
                            Entry::Vacant(slot) => {
                                r.unwrap();
                                slot.insert(v);
                            }
                        }
                    }
                    Op::Append(k, v) => {
                        let r = tx.append::<Numbers>(&k, &v);
                        let last = pending.numbers.keys().next_back().copied();
                        if last.is_none_or(|l| k > l) {
                            r.unwrap();
                            pending.numbers.insert(k, v);
                        } else {
                            prop_assert!(
                                matches!(
                                    r,
                                    Err(Error::AppendOutOfOrder {
                                        table: "numbers",
                                        ..
                                    })
                                ),
                                "{:?}",
                                r
                            );
                        }
                    }
                    Op::Delete(k) => {
                        let deleted = tx.delete::<Numbers>(&k).unwrap();
                        prop_assert_eq!(deleted, pending.numbers.remove(&k).is_some());
                    }
                    Op::Get(k) => {
                        let got = tx.get::<Numbers>(&k).unwrap();
                        prop_assert_eq!(got, pending.numbers.get(&k).copied());
                    }
                    Op::Range(lo, hi, rev) => {
                        let got: Vec<(u16, u32)> = if rev {
                            tx.range::<Numbers>((lo, hi))
                                .rev()
                                .collect::<Result<_, _>>()
                        } else {
                            tx.range::<Numbers>((lo, hi)).collect::<Result<_, _>>()
                        }
                        .unwrap();
                        let mut want: Vec<(u16, u32)> = if valid_range(lo, hi) {
                            pending
                                .numbers
                                .range((lo, hi))
                                .map(|(k, v)| (*k, *v))
                                .collect()
                        } else {
                            Vec::new()
                        };
                        if rev {
                            want.reverse();
                        }
                        prop_assert_eq!(got, want, "range {:?}..{:?} rev {}", lo, hi, rev);
                    }
                    Op::Len => {
                        prop_assert_eq!(tx.len::<Numbers>().unwrap(), pending.numbers.len() as u64);
                    }
                    Op::PutNamed(s, n, v) => {
                        tx.put::<Named>(&(s.as_str(), n), &v).unwrap();
                        pending.named.insert((s, n), v);
                    }
                    Op::DeleteNamed(s, n) => {
                        let deleted = tx.delete::<Named>(&(s.as_str(), n)).unwrap();
                        prop_assert_eq!(deleted, pending.named.remove(&(s, n)).is_some());
                    }
                    Op::Prefix(s, rev) => {
                        let got: Vec<((String, u8), Vec<u8>)> = if rev {
                            tx.prefix::<Named>(&s).rev().collect::<Result<_, _>>()
                        } else {
                            tx.prefix::<Named>(&s).collect::<Result<_, _>>()
                        }
                        .unwrap();
                        let mut want: Vec<((String, u8), Vec<u8>)> = pending
                            .named
                            .iter()
                            .filter(|((name, _), _)| *name == s)
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect();
                        if rev {
                            want.reverse();
                        }
                        prop_assert_eq!(got, want, "prefix {:?}", s);
                    }
                    Op::ReadCommitted(k) => {
                        let read = db.read().unwrap();
                        prop_assert_eq!(
                            read.get::<Numbers>(&k).unwrap(),
                            committed.numbers.get(&k).copied()
                        );
                    }
                    Op::Commit => {
                        tx.commit().unwrap();
                        committed = pending;
                        break;
                    }
                    Op::Abort => {
                        drop(tx);
                        break;
                    }
                    Op::Reopen => {
                        // The open write transaction is aborted with the database closed.
                        continue 'sessions;
                    }
                }
            }
        }
    }
    // The final state, read back after one more reopen.
    let db = tabula::open::<ModelSchema>(dir.path(), options()).unwrap();
    let tx = db.read().unwrap();
    let numbers: BTreeMap<u16, u32> = tx.iter::<Numbers>().collect::<Result<_, _>>().unwrap();
    prop_assert_eq!(&numbers, &committed.numbers);
    let named: BTreeMap<(String, u8), Vec<u8>> =
        tx.iter::<Named>().collect::<Result<_, _>>().unwrap();
    prop_assert_eq!(&named, &committed.named);
    prop_assert_eq!(tx.len::<Numbers>().unwrap(), numbers.len() as u64);
    drop(tx);
    prop_assert!(db.check().unwrap().is_ok());
    Ok(i)
}

proptest! {
    #![proptest_config(props::config("model", 96))]

    #[test]
    fn tabula_matches_a_btreemap_model(ops in vec(op(), 1..80)) {
        run(&ops)?;
    }
}
