//! Tables declared `history` under SIGKILL. The child (`history`) runs numbered operations,
//! each one write transaction that also records its number: apply a version (200 puts and
//! deletes at the next version), unwind the last 6 versions (about 1,200 changes written back
//! in one transaction), or prune the history below an old version; it prints `op <n>` after
//! each. The operations are a function of their number, so the parent simulates them. After
//! each kill the parent reopens and checks that the table is exactly the state after the last
//! operation reported (or one more), never between two (an unwind killed part way included),
//! that reads as of every retained version give the simulated state at that version, and that
//! `mdbx_env_chk` is clean.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use tabula::{Db, History, Options, Schema, Table};

use crate::child::Child;
use crate::kills;
use crate::random::{mix, seed};

#[derive(Table)]
#[table(name = "state", key = u64, value = u64, history)]
struct State;

#[derive(History)]
#[history(on = State, name = "state_history")]
struct StateHistory;

/// The last operation's number.
#[derive(Table)]
#[table(name = "ops", key = u8, value = u64)]
struct Ops;

#[derive(Schema)]
struct HistorySchema(State, StateHistory, Ops);

fn options() -> Options {
    Options::new().max_size(1 << 30).growth_step(4 << 20)
}

/// Keys the operations write.
const KEYS: u64 = 2_000;
/// Versions an unwind undoes.
const UNWOUND: u64 = 6;

/// One operation.
enum Op {
    /// Version `.0`: put (value `Some`) or delete each key.
    Apply(u64, Vec<(u64, Option<u64>)>),
    /// Unwind to version `.0`.
    Unwind(u64),
    /// Prune the history below version `.0`.
    Prune(u64),
}

/// What operations `1..=n` leave: the version, the state at the end of every retained version,
/// and the horizon.
#[derive(Default)]
struct Sim {
    version: u64,
    states: BTreeMap<u64, BTreeMap<u64, u64>>,
    horizon: u64,
    /// Unwinds among the operations.
    unwinds: u64,
}

impl Sim {
    /// Operation `n` after this state.
    fn op(&self, n: u64) -> Op {
        if n % 5 == 4 && self.version > UNWOUND + self.horizon {
            return Op::Unwind(self.version - UNWOUND);
        }
        if n % 11 == 10 && self.version > 30 {
            return Op::Prune(self.version - 20);
        }
        let writes = (0..200)
            .map(|i| {
                let r = mix(n << 16 | i);
                (r % KEYS, (!r.is_multiple_of(7)).then_some(r >> 8))
            })
            .collect();
        Op::Apply(self.version + 1, writes)
    }

    /// The state now.
    fn state(&self) -> BTreeMap<u64, u64> {
        self.at(self.version)
    }

    /// The state at the end of `version`.
    fn at(&self, version: u64) -> BTreeMap<u64, u64> {
        self.states
            .range(..=version)
            .next_back()
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Apply(version, writes) => {
                let mut state = self.state();
                for (k, v) in writes {
                    match v {
                        Some(v) => state.insert(*k, *v),
                        None => state.remove(k),
                    };
                }
                self.states.insert(*version, state);
                self.version = *version;
            }
            Op::Unwind(to) => {
                self.states.retain(|v, _| *v <= *to);
                self.version = *to;
                self.unwinds += 1;
            }
            Op::Prune(below) => self.horizon = self.horizon.max(*below),
        }
    }

    fn after(n: u64) -> Sim {
        let mut sim = Sim::default();
        for i in 1..=n {
            let op = sim.op(i);
            sim.apply(&op);
        }
        sim
    }
}

pub fn child(dir: &Path) {
    let db = tabula::open::<HistorySchema>(dir, options()).unwrap();
    let mut n = db.read().unwrap().get::<Ops>(&0).unwrap().unwrap_or(0);
    let mut sim = Sim::after(n);
    println!("ready {n}");
    loop {
        n += 1;
        let op = sim.op(n);
        let mut tx = db.write().unwrap();
        match &op {
            Op::Apply(version, writes) => {
                tx.set_version(*version);
                for (k, v) in writes {
                    match v {
                        Some(v) => tx.put::<State>(k, v).unwrap(),
                        None => {
                            tx.delete::<State>(k).unwrap();
                        }
                    }
                }
            }
            Op::Unwind(to) => {
                tx.unwind(*to).unwrap();
            }
            Op::Prune(below) => {
                tx.prune_history::<State>(*below, usize::MAX).unwrap();
            }
        }
        tx.put::<Ops>(&0, &n).unwrap();
        tx.commit().unwrap();
        sim.apply(&op);
        println!("op {n}");
    }
}

/// The table and its reads as of every retained version agree with `sim`.
fn verify(db: &Db<HistorySchema>, sim: &Sim, cycle: u32) {
    let tx = db.read().unwrap();
    let state: BTreeMap<u64, u64> = tx.iter::<State>().map(Result::unwrap).collect();
    assert_eq!(
        state,
        sim.state(),
        "cycle {cycle}: the state at version {}",
        sim.version
    );
    let check = tx.check_history::<State>(10).unwrap();
    assert!(check.is_ok(), "cycle {cycle}: {:?}", check.problems);
    let first = sim.horizon.max(1);
    for version in (first..=sim.version).rev().take(12) {
        let rows: BTreeMap<u64, u64> = tx
            .range_as_of::<State>(.., version)
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(
            rows,
            sim.at(version),
            "cycle {cycle}: as of version {version}"
        );
    }
}

pub fn history_survives_process_kills() {
    let seed = seed("history kills");
    let kills = kills(50);
    let dir = tempfile::tempdir().unwrap();
    let mut last = 0u64;
    let mut one_more = 0u32;
    let mut unwinds = 0;
    for cycle in 0..kills {
        let r = mix(seed ^ 0x4157 ^ u64::from(cycle) << 20);
        let wait = (r % 6) as u32;
        let delay = Duration::from_micros((r >> 16) % 4000);
        let mut child = Child::spawn("history", dir.path(), &[]);
        let from: u64 = child.wait_for("ready ").unwrap().parse().unwrap();
        assert_eq!(
            from, last,
            "cycle {cycle}: resumes after the last operation"
        );
        for _ in 0..wait {
            child.wait_for("op ").expect("the child does not finish");
        }
        let ended = child.kill_after(delay);
        let reported = ended
            .lines
            .iter()
            .filter_map(|l| l.strip_prefix("op "))
            .map(|n| n.parse::<u64>().unwrap())
            .next_back()
            .unwrap_or(last);
        let db = tabula::open::<HistorySchema>(dir.path(), options()).unwrap();
        let check = db.check().unwrap();
        assert!(check.is_ok(), "cycle {cycle}: mdbx_env_chk: {check:?}");
        let n = db.read().unwrap().get::<Ops>(&0).unwrap().unwrap_or(0);
        assert!(
            n == reported || n == reported + 1,
            "cycle {cycle}: operation {n} found, {reported} reported (seed {seed})"
        );
        one_more += u32::from(n > reported);
        let sim = Sim::after(n);
        unwinds = sim.unwinds;
        verify(&db, &sim, cycle);
        last = n;
    }
    assert!(last > 10, "only {last} operations ran in {kills} kills");
    eprintln!(
        "history kills: {kills} kills, {last} operations ({unwinds} unwinds), {one_more} \
         found one operation beyond the last report; the state and reads as of every retained \
         version exact and mdbx_env_chk clean after every kill"
    );
}
