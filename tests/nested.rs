//! Nested write transactions (`Tx::nested`), against a model: random writes, reads and scans in
//! nested scopes (up to three deep) that end by keeping their writes, by returning an error or
//! by panicking, compared at every step with a `BTreeMap` whose scopes are cloned and kept or
//! dropped the same way; then the outer transaction commits or aborts and what a reader sees is
//! compared with the model.
//!
//! `PROPTEST_CASES` sets the case count (default 64). The RNG seed is printed;
//! `TABULA_SEED=<seed>` replays a run.

#[path = "support/props.rs"]
mod props;
#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use proptest::collection::vec;
use proptest::prelude::*;
use tabula::{Db, Error, Options, RwTx, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "numbers", key = u16, value = u32)]
struct Numbers;

#[derive(Schema)]
struct App(Numbers);

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u32),
    Insert(u16, u32),
    Delete(u16),
    Get(u16),
    Scan,
    Nested(Vec<Op>, End),
}

/// How a nested scope ends.
#[derive(Debug, Clone, Copy)]
enum End {
    Keep,
    Fail,
    Panic,
}

fn op() -> impl Strategy<Value = Op> {
    let key = || 0u16..32;
    let leaf = prop_oneof![
        4 => (key(), any::<u32>()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => (key(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        2 => key().prop_map(Op::Delete),
        2 => key().prop_map(Op::Get),
        1 => Just(Op::Scan),
    ];
    leaf.prop_recursive(3, 96, 10, |inner| {
        let end = prop_oneof![Just(End::Keep), Just(End::Fail), Just(End::Panic)];
        prop_oneof![
            4 => inner.clone(),
            1 => (vec(inner, 0..10), end).prop_map(|(ops, end)| Op::Nested(ops, end)),
        ]
    })
}

/// Why a scope stopped: the planned error, or Tabula and the model disagreeing.
#[derive(Debug)]
enum Stop {
    Planned,
    Mismatch(String),
    Db(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Db(e)
    }
}

/// The payload of a planned panic, which the panic hook keeps quiet about.
struct PlannedPanic;

fn check<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), Stop> {
    if got == want {
        Ok(())
    } else {
        Err(Stop::Mismatch(format!(
            "{what}: got {got:?}, model {want:?}"
        )))
    }
}

fn run(tx: &mut RwTx<'_, App>, model: &mut BTreeMap<u16, u32>, ops: &[Op]) -> Result<(), Stop> {
    for op in ops {
        match op {
            Op::Put(k, v) => {
                tx.put::<Numbers>(k, v)?;
                model.insert(*k, *v);
            }
            Op::Insert(k, v) => {
                let got = tx.insert::<Numbers>(k, v);
                if model.contains_key(k) {
                    check(
                        "insert of a present key",
                        matches!(got, Err(Error::KeyExists { .. })),
                        true,
                    )?;
                } else {
                    got?;
                    model.insert(*k, *v);
                }
            }
            Op::Delete(k) => {
                check(
                    "delete",
                    tx.delete::<Numbers>(k)?,
                    model.remove(k).is_some(),
                )?;
            }
            Op::Get(k) => check("get", tx.get::<Numbers>(k)?, model.get(k).copied())?,
            Op::Scan => {
                let got: Vec<(u16, u32)> = tx.iter::<Numbers>().collect::<tabula::Result<_>>()?;
                let want: Vec<(u16, u32)> = model.iter().map(|(k, v)| (*k, *v)).collect();
                check("scan", got, want)?;
            }
            Op::Nested(inner, end) => {
                let mut scope = model.clone();
                let outcome = match end {
                    End::Keep => tx.nested(|tx| run(tx, &mut scope, inner)),
                    End::Fail => tx.nested(|tx| {
                        run(tx, &mut scope, inner)?;
                        Err::<(), _>(Stop::Planned)
                    }),
                    End::Panic => {
                        let caught = catch_unwind(AssertUnwindSafe(|| {
                            tx.nested(|tx| {
                                run(tx, &mut scope, inner)?;
                                std::panic::panic_any(PlannedPanic)
                            })
                        }));
                        match caught {
                            Ok(outcome) => outcome,
                            Err(payload) if payload.is::<PlannedPanic>() => Err(Stop::Planned),
                            Err(payload) => std::panic::resume_unwind(payload),
                        }
                    }
                };
                match outcome {
                    Ok(()) => *model = scope, // kept
                    Err(Stop::Planned) => {}  // undone: the model stays as it was
                    Err(other) => return Err(other),
                }
            }
        }
    }
    Ok(())
}

fn quiet_planned_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<PlannedPanic>() {
                default(info);
            }
        }));
    });
}

fn committed(db: &Db<App>) -> BTreeMap<u16, u32> {
    db.read()
        .unwrap()
        .iter::<Numbers>()
        .collect::<tabula::Result<_>>()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..props::config("nested", 64)
    })]

    #[test]
    fn nested_transactions_match_the_model(
        rounds in vec((vec(op(), 0..24), any::<bool>()), 1..4)
    ) {
        quiet_planned_panics();
        let (_dir, db) = tempdb::open_with::<App>(Options::new().sync(SyncMode::UtterlyNoSync));
        let mut model = BTreeMap::new();
        for (ops, commit) in rounds {
            let mut tx = db.write().unwrap();
            let mut pending = model.clone();
            match run(&mut tx, &mut pending, &ops) {
                Ok(()) => {}
                Err(Stop::Mismatch(m)) => return Err(TestCaseError::fail(m)),
                Err(Stop::Db(e)) => return Err(TestCaseError::fail(e.to_string())),
                Err(Stop::Planned) => unreachable!("a planned stop is handled in its scope"),
            }
            if commit {
                tx.commit().unwrap();
                model = pending;
            } else {
                tx.abort();
            }
            prop_assert_eq!(committed(&db), model.clone());
        }
    }
}

#[test]
fn an_error_undoes_only_the_nested_writes() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Numbers>(&1, &10).unwrap();
    let out: Result<(), Error> = tx.nested(|tx| {
        tx.put::<Numbers>(&1, &11)?;
        tx.put::<Numbers>(&2, &20)?;
        assert_eq!(tx.get::<Numbers>(&1)?, Some(11));
        tx.insert::<Numbers>(&2, &21) // KeyExists: the scope's error
    });
    assert!(matches!(out, Err(Error::KeyExists { .. })), "{out:?}");
    assert_eq!(tx.get::<Numbers>(&1).unwrap(), Some(10));
    assert_eq!(tx.get::<Numbers>(&2).unwrap(), None);
    tx.put::<Numbers>(&3, &30).unwrap(); // the transaction goes on
    tx.commit().unwrap();
    assert_eq!(committed(&db), BTreeMap::from([(1, 10), (3, 30)]));
}

#[test]
fn a_panic_undoes_the_nested_writes_and_the_transaction_goes_on() {
    quiet_planned_panics();
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Numbers>(&1, &10).unwrap();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        tx.nested(|tx| -> Result<(), Error> {
            tx.put::<Numbers>(&1, &11)?;
            tx.clear::<Numbers>()?;
            std::panic::panic_any(PlannedPanic)
        })
    }));
    assert!(caught.is_err());
    assert_eq!(tx.get::<Numbers>(&1).unwrap(), Some(10));
    tx.commit().unwrap();
    assert_eq!(committed(&db), BTreeMap::from([(1, 10)]));
}

#[test]
fn kept_nested_writes_are_undone_by_aborting_the_outer_transaction() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.nested(|tx| {
        tx.put::<Numbers>(&1, &10)?;
        tx.nested(|tx| tx.put::<Numbers>(&2, &20))
    })
    .unwrap();
    assert_eq!(tx.len::<Numbers>().unwrap(), 2);
    assert_eq!(committed(&db), BTreeMap::new()); // nothing visible before the outer commit
    tx.abort();
    assert_eq!(committed(&db), BTreeMap::new());

    let mut tx = db.write().unwrap();
    tx.nested(|tx| tx.put::<Numbers>(&1, &10)).unwrap();
    tx.commit().unwrap();
    assert_eq!(committed(&db), BTreeMap::from([(1, 10)]));
}

#[test]
fn a_nested_scope_can_use_an_appender() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Numbers>(&1, &10).unwrap();
    let out: Result<(), Error> = tx.nested(|tx| {
        let mut appender = tx.appender::<Numbers>()?;
        appender.append(&2, &20)?;
        appender.append(&3, &30)?;
        appender.append(&3, &31) // out of order: undoes the scope
    });
    assert!(
        matches!(out, Err(Error::AppendOutOfOrder { .. })),
        "{out:?}"
    );
    tx.nested(|tx| {
        let mut appender = tx.appender::<Numbers>()?;
        appender.append(&4, &40)
    })
    .unwrap();
    tx.commit().unwrap();
    assert_eq!(committed(&db), BTreeMap::from([(1, 10), (4, 40)]));
}
