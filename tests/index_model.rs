//! Model-based test of secondary indexes: random sequences of every write path that takes an
//! indexed table (`put`, `insert`, `append`, `delete`, `delete_range`, `retain`, `pop_first`,
//! `pop_last`, `clear`, nested transactions that commit or abort, whole transactions that
//! commit or abort, write cursors that write and delete while walking, the appender,
//! `put_bytes`, `retain_bytes`, `Db::bulk_load`) run against Tabula and against a `BTreeMap` of rows. After
//! every operation and every transaction, each index table equals its recomputation from the
//! model, and the queries by index key (`by_index`, `by_index_lazy`, `get_unique`,
//! `index_range` both ways, `index_prefix`, `index_count`) equal the model's answers. Unique
//! violations are provoked on purpose (hashes come from a
//! small range): the model predicts them, and a violating write must change nothing.
//!
//! The table is `integer_key` (stored keys native-endian, index values in key order), and one
//! index is computed from the primary key as well as the row.
//!
//! `PROPTEST_CASES` raises the case count (default here: 48 sequences of up to 50 operations).
//! The RNG seed is printed; `TABULA_SEED=<seed>` replays a run. A failing case is saved in
//! `tests/proptest-regressions/index_model.txt`.

#[path = "support/props.rs"]
mod props;
#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::{BTreeMap, BTreeSet};

use proptest::collection::vec;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use tabula::{Error, Index, Options, RwTx, Schema, Table};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Transfer {
    from: u8,
    to: u8,
    hash: Option<u8>,
    tags: Vec<u8>,
}

#[derive(Table)]
#[table(name = "transfers", key = u64, value = Transfer, indexed, integer_key)]
struct Transfers;

#[derive(Index)]
#[index(on = Transfers, key = u8, by = sender)]
struct BySender;

#[derive(Index)]
#[index(on = Transfers, key = u8, by = recipient)]
struct ByRecipient;

#[derive(Index)]
#[index(on = Transfers, key = u8, unique, by = hash)]
struct ByHash;

#[derive(Index)]
#[index(on = Transfers, key = u8, by = tags)]
struct ByTag;

/// A key computed from the primary key and the row.
#[derive(Index)]
#[index(on = Transfers, key = (u64, u8), by = bucket)]
struct ByBucket;

fn sender(_: &u64, t: &Transfer) -> u8 {
    t.from
}
fn recipient(_: &u64, t: &Transfer) -> u8 {
    t.to
}
fn hash(_: &u64, t: &Transfer) -> Option<u8> {
    t.hash
}
fn tags(_: &u64, t: &Transfer) -> Vec<u8> {
    t.tags.clone()
}
fn bucket(id: &u64, t: &Transfer) -> (u64, u8) {
    (id / 4, t.to)
}

#[derive(Schema)]
struct Indexer(Transfers, BySender, ByRecipient, ByHash, ByTag, ByBucket);

type Model = BTreeMap<u64, Transfer>;

#[derive(Debug, Clone)]
enum Op {
    Put(u64, Transfer),
    Insert(u64, Transfer),
    Append(u64, Transfer),
    Delete(u64),
    DeleteRange(u64, u64),
    Retain(u64),
    PopFirst,
    PopLast,
    Clear,
    Nested(Vec<Op>, bool),
    /// Write cursor: `upsert`, `insert` or `append` (0, 1, 2) of a row.
    CursorWrite(u8, u64, Transfer),
    /// Write cursor: walks from the first row, deleting the rows for which
    /// `(key + seed) % 3 == 0`, and stops after `stop` rows.
    WalkDelete(u64, u8),
    /// The appender: these rows after the last key.
    Appender(Vec<Transfer>),
    /// `put_bytes` of the row's stored bytes.
    PutBytes(u64, Transfer),
    /// `retain_bytes` over `a..b`, keeping the rows whose stored key plus the seed is not a
    /// multiple of 3.
    RetainBytes(u64, u64, u64),
    Commit,
    Abort,
    /// Commits, then `Db::bulk_load`s these rows after the last key (one batch).
    Bulk(Vec<Transfer>),
}

fn transfer() -> impl Strategy<Value = Transfer> {
    (0..5u8, 0..5u8, prop::option::of(0..6u8), vec(0..4u8, 0..4)).prop_map(
        |(from, to, hash, tags)| Transfer {
            from,
            to,
            hash,
            tags,
        },
    )
}

fn write_op() -> impl Strategy<Value = Op> {
    let key = 0..40u64;
    prop_oneof![
        6 => (key.clone(), transfer()).prop_map(|(k, t)| Op::Put(k, t)),
        2 => (key.clone(), transfer()).prop_map(|(k, t)| Op::Insert(k, t)),
        2 => (key.clone(), transfer()).prop_map(|(k, t)| Op::Append(k, t)),
        3 => key.clone().prop_map(Op::Delete),
        1 => (key.clone(), key.clone()).prop_map(|(a, b)| Op::DeleteRange(a.min(b), a.max(b))),
        1 => (0..3u64).prop_map(Op::Retain),
        1 => Just(Op::PopFirst),
        1 => Just(Op::PopLast),
        3 => (0..3u8, key.clone(), transfer()).prop_map(|(how, k, t)| Op::CursorWrite(how, k, t)),
        1 => (0..3u64, 1..40u8).prop_map(|(seed, stop)| Op::WalkDelete(seed, stop)),
        1 => vec(transfer(), 1..4).prop_map(Op::Appender),
        1 => (key.clone(), transfer()).prop_map(|(k, t)| Op::PutBytes(k, t)),
        1 => (key.clone(), key.clone(), 0..3u64)
            .prop_map(|(a, b, seed)| Op::RetainBytes(a.min(b), a.max(b), seed)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => write_op(),
        1 => Just(Op::Clear),
        3 => (vec(write_op(), 1..6), any::<bool>()).prop_map(|(ops, commit)| Op::Nested(ops, commit)),
        3 => Just(Op::Commit),
        1 => Just(Op::Abort),
        1 => vec(transfer(), 1..6).prop_map(Op::Bulk),
    ]
}

/// Whether writing `t` under `k` would give another row's hash to `k`.
fn violates(model: &Model, k: u64, t: &Transfer) -> bool {
    t.hash
        .is_some_and(|h| model.iter().any(|(k2, t2)| *k2 != k && t2.hash == Some(h)))
}

/// Why a nested transaction was given up.
#[derive(Debug)]
enum Abort {
    Db(#[allow(dead_code)] Error),
    Stop,
}

impl From<Error> for Abort {
    fn from(e: Error) -> Self {
        Abort::Db(e)
    }
}

fn is_unique_violation(r: &Result<(), Error>) -> bool {
    matches!(
        r,
        Err(Error::UniqueViolation {
            table: "transfers",
            index: "ByHash",
            ..
        })
    )
}

/// Applies a write to Tabula and to the model, checking the outcome the model predicts.
fn apply(tx: &mut RwTx<'_, Indexer>, model: &mut Model, op: &Op) {
    match op {
        Op::Put(k, t) => {
            let r = tx.put::<Transfers>(k, t);
            if violates(model, *k, t) {
                assert!(is_unique_violation(&r), "{op:?}: {r:?}");
            } else {
                r.unwrap();
                model.insert(*k, t.clone());
            }
        }
        Op::Insert(k, t) => {
            let r = tx.insert::<Transfers>(k, t);
            if model.contains_key(k) {
                assert!(matches!(r, Err(Error::KeyExists { .. })), "{op:?}: {r:?}");
            } else if violates(model, *k, t) {
                assert!(is_unique_violation(&r), "{op:?}: {r:?}");
            } else {
                r.unwrap();
                model.insert(*k, t.clone());
            }
        }
        Op::Append(k, t) => {
            let r = tx.append::<Transfers>(k, t);
            let in_order = model.keys().next_back().is_none_or(|last| k > last);
            let violation = violates(model, *k, t);
            match (in_order, violation) {
                (true, false) => {
                    r.unwrap();
                    model.insert(*k, t.clone());
                }
                (true, true) => assert!(is_unique_violation(&r), "{op:?}: {r:?}"),
                (false, false) => {
                    assert!(
                        matches!(r, Err(Error::AppendOutOfOrder { .. })),
                        "{op:?}: {r:?}"
                    )
                }
                // Both wrong: either error, and nothing written.
                (false, true) => assert!(
                    is_unique_violation(&r) || matches!(r, Err(Error::AppendOutOfOrder { .. })),
                    "{op:?}: {r:?}"
                ),
            }
        }
        Op::Delete(k) => {
            assert_eq!(
                tx.delete::<Transfers>(k).unwrap(),
                model.remove(k).is_some()
            );
        }
        Op::DeleteRange(a, b) => {
            let doomed: Vec<u64> = model.range(a..b).map(|(k, _)| *k).collect();
            assert_eq!(
                tx.delete_range::<Transfers>(a..b).unwrap(),
                doomed.len() as u64
            );
            for k in doomed {
                model.remove(&k);
            }
        }
        Op::Retain(seed) => {
            let keep = |k: &u64, t: &Transfer| !(k + seed + u64::from(t.to)).is_multiple_of(3);
            let before = model.len();
            model.retain(|k, t| keep(k, t));
            assert_eq!(
                tx.retain::<Transfers>(keep).unwrap(),
                (before - model.len()) as u64
            );
        }
        Op::PopFirst => {
            let expected = model.pop_first();
            assert_eq!(tx.pop_first::<Transfers>().unwrap(), expected);
        }
        Op::PopLast => {
            let expected = model.pop_last();
            assert_eq!(tx.pop_last::<Transfers>().unwrap(), expected);
        }
        Op::CursorWrite(how, k, t) => {
            let mut c = tx.cursor_mut::<Transfers>().unwrap();
            let r = match how {
                0 => c.upsert(k, t),
                1 => c.insert(k, t),
                _ => c.append(k, t),
            };
            let exists = model.contains_key(k);
            let in_order = model.keys().next_back().is_none_or(|last| k > last);
            let violation = violates(model, *k, t);
            let refused_first = match how {
                1 => exists,
                2 => !in_order,
                _ => false,
            };
            if refused_first && !violation {
                assert!(
                    matches!(
                        r,
                        Err(Error::KeyExists { .. } | Error::AppendOutOfOrder { .. })
                    ),
                    "{op:?}: {r:?}"
                );
            } else if violation {
                assert!(
                    is_unique_violation(&r)
                        || matches!(
                            r,
                            Err(Error::KeyExists { .. } | Error::AppendOutOfOrder { .. })
                        ),
                    "{op:?}: {r:?}"
                );
            } else {
                r.unwrap();
                assert_eq!(
                    c.current().unwrap(),
                    Some((*k, t.clone())),
                    "{op:?}: on the row"
                );
                model.insert(*k, t.clone());
            }
        }
        Op::WalkDelete(seed, stop) => {
            let mut c = tx.cursor_mut::<Transfers>().unwrap();
            let mut entry = c.first().unwrap();
            let mut seen = 0u8;
            while let Some((k, t)) = entry {
                assert_eq!(model.get(&k), Some(&t), "{op:?}: the walk reads the rows");
                if (k + seed) % 3 == 0 {
                    c.delete_current().unwrap();
                    model.remove(&k);
                }
                seen += 1;
                if seen == *stop {
                    break;
                }
                entry = c.next().unwrap();
            }
        }
        Op::Appender(rows) => {
            let first = model.keys().next_back().map_or(0, |k| k + 1);
            let mut appender = tx.appender::<Transfers>().unwrap();
            for (k, t) in (first..).zip(rows) {
                let r = appender.append(&k, t);
                if violates(model, k, t) {
                    assert!(is_unique_violation(&r), "{op:?}: {r:?}");
                } else {
                    r.unwrap();
                    model.insert(k, t.clone());
                }
            }
        }
        Op::PutBytes(k, t) => {
            let mut buf = Vec::new();
            let v = <tabula::Bincode<Transfer> as tabula::Value>::encode(t, &mut buf).unwrap();
            // `transfers` is `integer_key`: its stored keys are native-endian.
            let r = tx.put_bytes::<Transfers>(&k.to_ne_bytes(), v);
            if violates(model, *k, t) {
                assert!(is_unique_violation(&r), "{op:?}: {r:?}");
            } else {
                r.unwrap();
                model.insert(*k, t.clone());
            }
        }
        Op::RetainBytes(a, b, seed) => {
            let keep = |k: &u64| !(k + seed).is_multiple_of(3);
            let doomed: Vec<u64> = model
                .range(a..b)
                .map(|(k, _)| *k)
                .filter(|k| !keep(k))
                .collect();
            let deleted = tx
                .retain_bytes::<Transfers>(a..b, |k, _| {
                    keep(&u64::from_ne_bytes(k.try_into().unwrap()))
                })
                .unwrap();
            assert_eq!(deleted, doomed.len() as u64, "{op:?}");
            for k in doomed {
                model.remove(&k);
            }
        }
        Op::Clear => {
            tx.clear::<Transfers>().unwrap();
            model.clear();
        }
        Op::Nested(ops, commit) => {
            let mut child = model.clone();
            let r: Result<(), Abort> = tx.nested(|tx| {
                for op in ops {
                    apply(tx, &mut child, op);
                    check(tx, &child);
                }
                if *commit { Ok(()) } else { Err(Abort::Stop) }
            });
            if *commit {
                r.unwrap();
                *model = child;
            } else {
                assert!(matches!(r, Err(Abort::Stop)), "{r:?}");
            }
        }
        Op::Commit | Op::Abort | Op::Bulk(_) => unreachable!("handled by the caller"),
    }
}

/// Every index's entries, from the index tables.
type Entries = (
    Vec<(u8, u64)>,
    Vec<(u8, u64)>,
    Vec<(u8, u64)>,
    Vec<(u8, u64)>,
    Vec<((u64, u8), u64)>,
);

fn stored<H: tabula::Handle<Schema = Indexer>>(tx: &tabula::Reads<H>) -> Entries {
    (
        tx.iter::<BySender>().map(Result::unwrap).collect(),
        tx.iter::<ByRecipient>().map(Result::unwrap).collect(),
        tx.iter::<ByHash>().map(Result::unwrap).collect(),
        tx.iter::<ByTag>().map(Result::unwrap).collect(),
        tx.iter::<ByBucket>().map(Result::unwrap).collect(),
    )
}

/// Every index's entries, recomputed from the model, in index order.
fn recomputed(model: &Model) -> Entries {
    let mut sender = BTreeSet::new();
    let mut recipient = BTreeSet::new();
    let mut hash = BTreeSet::new();
    let mut tag = BTreeSet::new();
    let mut bucket_ = BTreeSet::new();
    for (id, t) in model {
        sender.insert((t.from, *id));
        recipient.insert((t.to, *id));
        if let Some(h) = t.hash {
            hash.insert((h, *id));
        }
        for tg in &t.tags {
            tag.insert((*tg, *id));
        }
        bucket_.insert((bucket(id, t), *id));
    }
    (
        sender.into_iter().collect(),
        recipient.into_iter().collect(),
        hash.into_iter().collect(),
        tag.into_iter().collect(),
        bucket_.into_iter().collect(),
    )
}

/// Each index equals its recomputation, and the queries agree with the model.
fn check<H: tabula::Handle<Schema = Indexer>>(tx: &tabula::Reads<H>, model: &Model) {
    let expected = recomputed(model);
    assert_eq!(stored(tx), expected);
    for from in 0..5u8 {
        let rows: Vec<(u64, Transfer)> =
            tx.by_index::<BySender>(&from).map(Result::unwrap).collect();
        let want: Vec<(u64, Transfer)> = model
            .iter()
            .filter(|(_, t)| t.from == from)
            .map(|(k, t)| (*k, t.clone()))
            .collect();
        assert_eq!(rows, want, "by_index::<BySender>({from})");
        let lazy: Vec<(u64, Transfer)> = tx
            .by_index_lazy::<BySender>(&from)
            .map(|r| r.and_then(|(k, row)| Ok((k, row.decode()?))).unwrap())
            .collect();
        assert_eq!(lazy, want, "by_index_lazy::<BySender>({from})");
        let back: Vec<u64> = tx
            .by_index::<BySender>(&from)
            .rev()
            .map(|r| r.unwrap().0)
            .collect();
        let want_back: Vec<u64> = want.iter().rev().map(|(k, _)| *k).collect();
        assert_eq!(back, want_back);
        assert_eq!(
            tx.index_count::<BySender>(&from).unwrap(),
            want.len() as u64
        );
    }
    for h in 0..6u8 {
        let got = tx.get_unique::<ByHash>(&h).unwrap();
        let want = model
            .iter()
            .find(|(_, t)| t.hash == Some(h))
            .map(|(k, t)| (*k, t.clone()));
        assert_eq!(got, want, "get_unique::<ByHash>({h})");
    }
    let range: Vec<(u8, u64)> = tx
        .index_range::<ByTag>(1..3)
        .map(|r| r.map(|(tag, id, _)| (tag, id)).unwrap())
        .collect();
    let want: Vec<(u8, u64)> = expected
        .3
        .iter()
        .copied()
        .filter(|(tag, _)| (1..3).contains(tag))
        .collect();
    assert_eq!(range, want, "index_range::<ByTag>(1..3)");
    let back: Vec<(u8, u64)> = tx
        .index_range::<ByTag>(1..3)
        .rev()
        .map(|r| r.map(|(tag, id, _)| (tag, id)).unwrap())
        .collect();
    assert_eq!(back, want.into_iter().rev().collect::<Vec<_>>());
    let prefix: Vec<u64> = tx
        .index_prefix::<ByBucket>(&2)
        .map(|r| r.unwrap().1)
        .collect();
    let want: Vec<u64> = expected
        .4
        .iter()
        .filter(|((b, _), _)| *b == 2)
        .map(|(_, id)| *id)
        .collect();
    assert_eq!(prefix, want, "index_prefix::<ByBucket>(2)");
}

fn run(ops: &[Op]) {
    let (dir, db) = tempdb::open_with::<Indexer>(Options::new());
    let mut committed = Model::new();
    let mut model = committed.clone();
    let mut tx = db.write().unwrap();
    for op in ops {
        match op {
            Op::Commit => {
                tx.commit().unwrap();
                committed = model.clone();
                check(&db.read().unwrap(), &committed);
                tx = db.write().unwrap();
            }
            Op::Abort => {
                drop(tx);
                model = committed.clone();
                check(&db.read().unwrap(), &committed);
                tx = db.write().unwrap();
            }
            Op::Bulk(rows) => {
                tx.commit().unwrap();
                committed = model.clone();
                let first = model.keys().next_back().map_or(0, |k| k + 1);
                let rows: Vec<(u64, Transfer)> = (first..).zip(rows.iter().cloned()).collect();
                let mut after = model.clone();
                let mut violation = false;
                for (k, t) in &rows {
                    violation |= violates(&after, *k, t);
                    after.insert(*k, t.clone());
                }
                let r = db.bulk_loader::<Transfers>().batch_entries(100).load(&rows);
                if violation {
                    assert!(
                        matches!(
                            r,
                            Err(Error::UniqueViolation {
                                index: "ByHash",
                                ..
                            })
                        ),
                        "{rows:?}: {r:?}"
                    );
                } else {
                    r.unwrap();
                    model = after;
                    committed = model.clone();
                }
                check(&db.read().unwrap(), &committed);
                tx = db.write().unwrap();
            }
            op => {
                apply(&mut tx, &mut model, op);
                check(&tx, &model);
            }
        }
    }
    tx.commit().unwrap();
    check(&db.read().unwrap(), &model);
    drop(db);
    // Reopened, nothing is rebuilt, and every index is still exact.
    let (db, report) = tabula::open_with_report::<Indexer>(dir.path(), Options::new()).unwrap();
    assert!(report.indexes_built.is_empty(), "{report:?}");
    check(&db.read().unwrap(), &model);
}

proptest! {
    #![proptest_config(props::config("index_model", 48))]

    #[test]
    fn indexes_equal_their_recomputation_after_every_write(ops in vec(op(), 1..50)) {
        run(&ops);
    }
}

#[test]
fn the_index_types_are_what_the_model_assumes() {
    const { assert!(<ByHash as Index>::UNIQUE && !<BySender as Index>::UNIQUE) };
}
