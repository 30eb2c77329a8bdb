//! Migration steps killed at startup. A version-1 database goes through two steps: version 2
//! renames a table, transforms every value (a rewrite into a temporary table, in batches) and
//! drops another table; version 3 creates a table, copies one table into another (in batches)
//! and runs code. Every batch commits together with the step's progress; each step's end is one
//! more commit. The child runs the startup step with a batch size the parent draws and prints
//! `progress <version> <done>` after each batch commits; the parent kills it after 0-3 reports
//! plus a random 0-3 ms.
//!
//! Batches are deterministic, so the parent knows the whole sequence of states the database
//! passes through (`(recorded version, progress)` after each commit). After each kill it reads
//! the state (read-only, with the raw inspector) and checks that it is in the sequence, at or
//! after the child's last report and no further than the next commit the child would have
//! reported (the step-end commit is not reported, so that can be two commits: the step's end
//! and the next step's first batch); that the tables hold exactly what that state says (the
//! temporary or target table exactly `done` entries, each converted once: never a partial
//! batch); that `mdbx_env_chk` is clean and `tabula::plan` agrees; and that the next child's first report is the batch
//! right after that state (it resumes, neither redoing nor skipping a batch). A finished run is
//! opened with the typed API and checked entry by entry, and a new version-1 database starts.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tabula::untyped::{UntypedDb, UntypedTx};
use tabula::{Bincode, Key, Migrations, Options, Schema, Table, Value};

use crate::child::Child;
use crate::kills;
use crate::random::{mix, seed};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct AccountV1 {
    balance: u64,
}

#[derive(Table)]
#[table(name = "balances", key = u64, value = AccountV1)]
struct BalancesV1;

#[derive(Table)]
#[table(name = "legacy", key = u32, value = String)]
struct Legacy;

#[derive(Schema)]
struct V1(BalancesV1, Legacy);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Account {
    balance: u64,
    nonce: u32,
}

#[derive(Table)]
#[table(name = "accounts", key = u64, value = Account)]
struct Accounts;

#[derive(Table)]
#[table(name = "archive", key = u64, value = Account)]
struct Archive;

#[derive(Table)]
#[table(name = "totals", key = String, value = u64)]
struct Totals;

#[derive(Schema)]
struct V3(Accounts, Archive, Totals);

/// Accounts in each version-1 database.
const ENTRIES: u64 = 2000;
const BATCH_VAR: &str = "TABULA_CRASH_BATCH";
const TMP_ACCOUNTS: &str = "__tabula_tmp_accounts";
/// The index of the copy operation in step 3.
const COPY_OP: usize = 1;

fn migrations() -> Migrations {
    Migrations::new()
        .step(2, "accounts-with-nonce", |m| {
            m.rename_table::<Accounts>("balances");
            m.transform::<Accounts, AccountV1>(|old| Account {
                balance: old.balance,
                nonce: (old.balance % 7) as u32,
            });
            m.drop_table("legacy");
        })
        .step(3, "archive-and-total", |m| {
            m.create_table::<Totals>();
            m.copy::<Accounts, Archive>();
            m.run("total", |tx| {
                let mut total = 0;
                tx.for_each::<Accounts>(|_, a| {
                    total += a.balance;
                    Ok(())
                })?;
                tx.put::<Totals>(&"balance".to_string(), &total)
            });
        })
}

fn v1(k: u64) -> AccountV1 {
    AccountV1 { balance: k * 10 }
}

fn v2(k: u64) -> Account {
    let balance = k * 10;
    Account {
        balance,
        nonce: (balance % 7) as u32,
    }
}

fn total() -> u64 {
    (0..ENTRIES).map(|k| k * 10).sum()
}

fn write_v1(path: &Path) {
    let db = tabula::open::<V1>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    let mut app = tx.appender::<BalancesV1>().unwrap();
    for k in 0..ENTRIES {
        app.append(&k, &v1(k)).unwrap();
    }
    drop(app);
    tx.put::<Legacy>(&1, &"old".to_string()).unwrap();
    tx.commit().unwrap();
}

/// The child: runs the startup step with the migrations in batches of `TABULA_CRASH_BATCH`,
/// printing `ready`, then `progress <version> <done>` after each committed batch, then
/// `finished`.
pub fn child(dir: &Path) {
    let batch: usize = std::env::var(BATCH_VAR).unwrap().parse().unwrap();
    println!("ready");
    let m = migrations()
        .batch_size(batch)
        .on_progress(|p| println!("progress {} {}", p.version, p.done));
    tabula::open_with::<V3>(dir, Options::new(), &m).unwrap();
    println!("finished");
}

/// Where a database stands: the recorded version and the progress record of the step in
/// progress (`(step version, operation index, entries done)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State {
    version: u32,
    progress: Option<(u32, usize, u64)>,
}

/// Every state the migration passes through with batches of `batch`, one per commit.
fn sequence(batch: u64) -> Vec<State> {
    let batches = |version, op| {
        (1..=ENTRIES.div_ceil(batch)).map(move |k| State {
            version: version - 1,
            progress: Some((version, op, (k * batch).min(ENTRIES))),
        })
    };
    let mut seq = vec![State {
        version: 1,
        progress: None,
    }];
    seq.extend(batches(2, 1)); // step 2, operation 1: the transform
    seq.push(State {
        version: 2,
        progress: None,
    });
    seq.extend(batches(3, COPY_OP));
    seq.push(State {
        version: 3,
        progress: None,
    });
    seq
}

/// The state after `from` that the child reports (a batch), or the last state.
fn next_reported(seq: &[State], from: usize) -> usize {
    (from + 1..seq.len())
        .find(|&i| seq[i].progress.is_some())
        .unwrap_or(seq.len() - 1)
}

/// Every entry of table `name` with a `u64` key, decoded with codec `C`; `None` without the
/// table.
fn entries<C: Value>(snap: &mut UntypedTx<'_>, name: &str) -> Option<Vec<(u64, C::Item)>> {
    let table = snap.table(name).unwrap()?;
    let mut out = Vec::new();
    snap.walk(&table, None, None, false, |k, v| {
        let key = u64::decode(k).unwrap();
        let value = C::decode(v).unwrap_or_else(|e| panic!("`{name}` at {key}: {e}"));
        out.push((key, value));
        true
    })
    .unwrap();
    Some(out)
}

fn expected<T>(n: u64, f: impl Fn(u64) -> T) -> Option<Vec<(u64, T)>> {
    Some((0..n).map(|k| (k, f(k))).collect())
}

/// Reads the state of the database at `dir` and checks that its tables hold exactly what that
/// state says; checks it with `mdbx_env_chk` too.
fn read_state(dir: &Path) -> State {
    let inspector = UntypedDb::open(dir).unwrap();
    let report = inspector.check().unwrap();
    assert!(report.is_ok(), "mdbx_env_chk: {report:?}");
    let mut snap = inspector.read().unwrap();
    let meta = snap.table("__tabula_meta").unwrap().unwrap();
    let json = |key: &[u8]| -> Option<serde_json::Value> {
        let bytes = snap.get_raw(&meta, key).unwrap().pop()?;
        Some(serde_json::from_slice(&bytes).unwrap())
    };
    let record = json(b"schema").expect("a schema record");
    // A step in progress is recorded in the schema record itself (`in_progress`), written in
    // the same transaction as each batch; the old separate key must not come back.
    assert!(
        json(b"migration-progress").is_none(),
        "a separate progress record"
    );
    let progress = record.get("in_progress").filter(|p| !p.is_null()).map(|p| {
        (
            p["version"].as_u64().unwrap() as u32,
            p["op"].as_u64().unwrap() as usize,
            p["done"].as_u64().unwrap(),
        )
    });
    let state = State {
        version: record["version"].as_u64().unwrap() as u32,
        progress,
    };
    let names = snap.table_names().unwrap();
    let has = |name: &str| names.iter().any(|n| n == name);
    type B<T> = Bincode<T>;
    let v1_accounts = expected(ENTRIES, v1);
    let v2_accounts = expected(ENTRIES, v2);
    match state {
        State {
            version: 1,
            progress: None,
        } => {
            assert_eq!(entries::<B<AccountV1>>(&mut snap, "balances"), v1_accounts);
            assert!(!has("accounts") && has("legacy"), "{names:?}");
        }
        State {
            version: 1,
            progress: Some((2, 1, done)),
        } => {
            assert!(!has("balances") && has("legacy"), "{names:?}");
            assert_eq!(entries::<B<AccountV1>>(&mut snap, "accounts"), v1_accounts);
            assert_eq!(
                entries::<B<Account>>(&mut snap, TMP_ACCOUNTS),
                expected(done, v2),
                "the temporary table holds exactly the {done} entries done"
            );
        }
        State {
            version: 2,
            progress: None,
        } => {
            assert_eq!(entries::<B<Account>>(&mut snap, "accounts"), v2_accounts);
            assert!(
                !has(TMP_ACCOUNTS) && !has("legacy") && !has("archive"),
                "{names:?}"
            );
        }
        State {
            version: 2,
            progress: Some((3, COPY_OP, done)),
        } => {
            assert_eq!(entries::<B<Account>>(&mut snap, "accounts"), v2_accounts);
            assert_eq!(
                entries::<B<Account>>(&mut snap, "archive"),
                expected(done, v2),
                "the copy holds exactly the {done} entries done"
            );
            assert!(!has("totals") || snap_is_empty(&mut snap, "totals"));
        }
        State {
            version: 3,
            progress: None,
        } => {
            assert_eq!(entries::<B<Account>>(&mut snap, "archive"), v2_accounts);
            let totals = snap.table("totals").unwrap().expect("totals");
            let value = snap.get_raw(&totals, b"balance").unwrap();
            assert_eq!(value.len(), 1);
            assert_eq!(B::<u64>::decode(&value[0]).unwrap(), total());
        }
        other => panic!("a state no migration step writes: {other:?}"),
    }
    state
}

fn snap_is_empty(snap: &mut UntypedTx<'_>, name: &str) -> bool {
    let table = snap.table(name).unwrap().unwrap();
    snap.stat(&table).unwrap().entries == 0
}

/// The finished migration through the typed API: nothing left to apply, every entry right.
fn verify_finished(dir: &Path) {
    let (db, report) = tabula::open_with::<V3>(dir, Options::new(), &migrations()).unwrap();
    assert!(report.applied.is_empty(), "{report:?}");
    let tx = db.read().unwrap();
    let accounts: Vec<(u64, Account)> = tx.iter::<Accounts>().map(Result::unwrap).collect();
    assert_eq!(Some(accounts), expected(ENTRIES, v2));
    let archive: Vec<(u64, Account)> = tx.iter::<Archive>().map(Result::unwrap).collect();
    assert_eq!(Some(archive), expected(ENTRIES, v2));
    assert_eq!(tx.get::<Totals>("balance").unwrap(), Some(total()));
    drop(tx);
    drop(db); // one open of a file per process
    let record = tabula::untyped::UntypedDb::open(dir)
        .unwrap()
        .record()
        .cloned()
        .unwrap();
    assert_eq!(record.version, 3);
    assert_eq!(record.applied.len(), 2);
}

pub fn migration_steps_survive_process_kills() {
    let seed = seed("migration kills");
    let target = kills(60);
    let (mut kills, mut rounds, mut cycles) = (0u32, 0u32, 0u64);
    let (mut beyond_report, mut between_steps) = (0u32, 0u32);
    while kills < target {
        rounds += 1;
        let dir = tempfile::tempdir().unwrap();
        write_v1(dir.path());
        let batch = 50 + mix(seed ^ u64::from(rounds)) % 251;
        let seq = sequence(batch);
        let mut at = 0; // the state the database is in
        while at < seq.len() - 1 {
            cycles += 1;
            assert!(
                cycles < 20 * u64::from(target),
                "no progress: at {:?}",
                seq[at]
            );
            let r = mix(seed ^ 0x316 ^ cycles << 16);
            let wait_reports = if cycles % 4 == 0 {
                0
            } else {
                1 + (r >> 16) % 3
            };
            let delay = Duration::from_micros((r >> 24) % 3000);
            let mut child =
                Child::spawn("migration", dir.path(), &[(BATCH_VAR, batch.to_string())]);
            child.wait_for("ready");
            for _ in 0..wait_reports {
                if child.wait_for("progress ").is_none() {
                    break; // finished
                }
            }
            let ended = child.kill_after(delay);
            // Each report is the batch after the previous one, the first one the batch after
            // where the last kill left the database.
            let mut reported = at;
            for l in &ended.lines {
                if let Some(p) = l.strip_prefix("progress ") {
                    let (v, done) = p.split_once(' ').unwrap();
                    let next = next_reported(&seq, reported);
                    let (version, done): (u32, u64) = (v.parse().unwrap(), done.parse().unwrap());
                    assert!(
                        matches!(seq[next].progress, Some((pv, _, d)) if (pv, d) == (version, done)),
                        "round {rounds}, batch {batch}: reported step {version} at {done}, \
                         expected {:?} after {:?} (seed {seed})",
                        seq[next],
                        seq[reported]
                    );
                    reported = next;
                }
            }
            let state = read_state(dir.path());
            // The dry run sees the same: the steps still pending, and whether one resumes.
            let plan = tabula::plan::<V3>(dir.path(), &migrations()).unwrap();
            assert_eq!(plan.pending.len(), 3 - state.version as usize, "{plan}");
            assert_eq!(plan.resumes, state.progress.is_some(), "{plan}");
            let found = seq.iter().position(|s| *s == state).unwrap_or_else(|| {
                panic!("round {rounds}, batch {batch}: {state:?} is not a state of the migration")
            });
            // Every reported batch is there, and at most what the child committed before it
            // could report the next one.
            let limit = next_reported(&seq, reported);
            assert!(
                (reported..=limit).contains(&found),
                "round {rounds}, batch {batch}: found {:?}, the child reported {:?} (seed {seed})",
                seq[found],
                seq[reported]
            );
            if ended.finished {
                assert_eq!(found, seq.len() - 1, "finished, yet {:?}", seq[found]);
            } else {
                kills += 1;
                beyond_report += u32::from(found > reported);
                between_steps += u32::from(seq[found].progress.is_none() && found > 0);
            }
            at = found;
        }
        verify_finished(dir.path());
    }
    eprintln!(
        "migration kills: {kills} kills over {rounds} migrations of {ENTRIES} entries ({} \
         cycles; {beyond_report} found a commit beyond the last report, {between_steps} \
         stopped between two steps), mdbx_env_chk clean after every kill",
        cycles
    );
}
