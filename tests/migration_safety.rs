//! Migrations that cannot skip data or be opened half-done.
//!
//! Each test kills a migration at an exact point: a child process (this test binary run again
//! with `TABULA_SAFETY_CHILD=<dir>` and `TABULA_SAFETY_SCENARIO=<name>`) runs the step with a
//! progress callback that stops after the chosen batch has committed, prints `paused <done>`
//! and waits; the parent SIGKILLs it there. The database then holds exactly that many
//! committed batches and the step's in-progress state, as after a crash.
//!
//! - A release that declares the interrupted step differently must not resume the progress
//!   (it belongs to another declaration: resuming it would skip entries).
//! - A release that does not declare the interrupted step must not open the half-migrated
//!   file, read-write or read-only.
//!
//! The file has its own `main` (`harness = false`, `tests/support/harness.rs`): the child entry
//! is not a test.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tabula::{Db, Error, Migrations, Options, Schema, Table};
use tabula_core::startup::Bootstrap;

const ENTRIES: u64 = 100;
const BATCH: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct OldVal {
    n: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct NewVal {
    n: u64,
    doubled: u64,
}

fn upgrade(old: OldVal) -> NewVal {
    NewVal {
        n: old.n,
        doubled: old.n * 2,
    }
}

// ---- item 1: two tables, a step whose declaration changes between releases -------------------

#[derive(Table)]
#[table(name = "ca", key = u64, value = OldVal)]
struct CaOld;

#[derive(Table)]
#[table(name = "cb", key = u64, value = OldVal)]
struct CbOld;

#[derive(Table)]
#[table(name = "ca", key = u64, value = NewVal)]
struct CaNew;

#[derive(Table)]
#[table(name = "cb", key = u64, value = NewVal)]
struct CbNew;

/// Version 1: both tables hold `OldVal`.
#[derive(Schema)]
struct TwoTablesV1(CaOld, CbOld);

/// Release A: step 2 converts `ca`.
#[derive(Schema)]
struct ReleaseA(CaNew, CbOld);

/// Release B: step 2 converts `cb`, then `ca`.
#[derive(Schema)]
struct ReleaseB(CaNew, CbNew);

fn release_a() -> Migrations {
    Migrations::new()
        .batch_size(BATCH)
        .step(2, "upgrade", |m| m.transform::<CaNew, OldVal>(upgrade))
}

fn release_b(name: &'static str) -> Migrations {
    Migrations::new().batch_size(BATCH).step(2, name, |m| {
        m.transform::<CbNew, OldVal>(upgrade);
        m.transform::<CaNew, OldVal>(upgrade);
    })
}

fn write_two_tables(path: &Path) {
    let db = tabula::open::<TwoTablesV1>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..ENTRIES {
        tx.put::<CaOld>(&n, &OldVal { n }).unwrap();
        tx.put::<CbOld>(&n, &OldVal { n }).unwrap();
    }
    tx.commit().unwrap();
}

// ---- item 2: a step that renames `accounts` to `wallets`, then transforms ---------------------

#[derive(Table)]
#[table(name = "accounts", key = u64, value = OldVal)]
struct Accounts;

#[derive(Table)]
#[table(name = "wallets", key = u64, value = NewVal)]
struct Wallets;

/// The previous release: version 1, no steps.
#[derive(Schema)]
struct Previous(Accounts);

/// The next release: step 2 renames and converts.
#[derive(Schema)]
struct Next(Wallets);

const WALLETS_STEP: &str = "accounts-to-wallets";

fn next_release() -> Migrations {
    Migrations::new()
        .batch_size(BATCH)
        .step(2, WALLETS_STEP, |m| {
            m.rename_table::<Wallets>("accounts");
            m.transform::<Wallets, OldVal>(upgrade);
        })
}

fn write_accounts(path: &Path) {
    let db = tabula::open::<Previous>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..ENTRIES {
        tx.put::<Accounts>(&n, &OldVal { n }).unwrap();
    }
    tx.commit().unwrap();
}

// ---- item 3: a transform of a table with a history ---------------------------------------------

/// Written at three versions (puts, overwrites, deletes), so its history holds values before.
#[derive(Table)]
#[table(name = "ledger", key = u64, value = u64, history)]
struct Ledger;

#[derive(tabula::History)]
#[history(on = Ledger, name = "ledger_history")]
struct LedgerHistory;

/// Both releases: the step changes what the values mean, not their type.
#[derive(Schema)]
struct Ledgers(Ledger, LedgerHistory);

const CENTS_STEP: &str = "ledger-in-cents";

/// Times 100: a value converted twice would read 10,000 times its old value.
fn cents_release() -> Migrations {
    Migrations::new()
        .batch_size(BATCH)
        .step(2, CENTS_STEP, |m| {
            m.transform::<Ledger, u64>(|units| units * 100)
        })
}

/// What version `version` (1 to 3) writes of key `n`: `Some(Some(v))` a put, `Some(None)` a
/// delete, `None` nothing.
fn ledger_write(version: u64, n: u64) -> Option<Option<u64>> {
    match version {
        1 => Some(Some(n)),
        2 if n.is_multiple_of(2) => Some(Some(n + 1000)),
        3 if n.is_multiple_of(3) => Some(None),
        _ => None,
    }
}

/// The ledger at the end of each version 0..=3.
fn ledger_states() -> Vec<Vec<(u64, u64)>> {
    let mut states = vec![Vec::new()];
    let mut state = std::collections::BTreeMap::new();
    for version in 1..=3 {
        for n in 0..ENTRIES {
            match ledger_write(version, n) {
                Some(Some(value)) => state.insert(n, value),
                Some(None) => state.remove(&n),
                None => None,
            };
        }
        states.push(state.iter().map(|(k, v)| (*k, *v)).collect());
    }
    states
}

fn write_ledger(path: &Path) {
    let db = tabula::open::<Ledgers>(path, Options::new()).unwrap();
    for version in 1..=3 {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        for n in 0..ENTRIES {
            match ledger_write(version, n) {
                Some(Some(value)) => tx.put::<Ledger>(&n, &value).unwrap(),
                Some(None) => drop(tx.delete::<Ledger>(&n).unwrap()),
                None => {}
            }
        }
        tx.commit().unwrap();
    }
}

// ---- the child process ------------------------------------------------------------------------

fn main() {
    if let Some(path) = std::env::var_os("TABULA_SAFETY_CHILD") {
        child(Path::new(&path));
        return;
    }
    run_tests!(
        changed_declaration_of_an_interrupted_step_is_refused,
        progress_without_a_checksum_is_refused,
        previous_release_refuses_a_file_with_a_migration_in_progress,
        every_batch_of_an_interrupted_step_is_marked_in_progress,
        a_transform_killed_in_its_history_converts_every_value_before_once,
    );
}

/// The child side: runs the scenario's migration and stops for good after `pause` entries have
/// committed, until the parent kills it.
fn child(path: &Path) {
    let scenario = std::env::var("TABULA_SAFETY_SCENARIO").unwrap();
    let pause: u64 = std::env::var("TABULA_SAFETY_PAUSE")
        .unwrap()
        .parse()
        .unwrap();
    let scenario_name = scenario.clone();
    let wait = move |p: &tabula::Progress<'_>| {
        let scenario = scenario_name.as_str();
        // Called after the batch (and the step's progress) committed.
        // The history scenario stops in the history's phase, whose count starts again at 0.
        let phase = scenario != "history-release" || p.operation.contains("history");
        if p.done == pause && phase {
            println!("paused {}", p.done);
            // Wait for SIGKILL; give up (failing the parent's wait) after a generous bound.
            std::thread::sleep(Duration::from_secs(120));
            std::process::exit(3);
        }
    };
    match scenario.as_str() {
        "release-a" => {
            tabula::open_with::<ReleaseA>(path, Options::new(), &release_a().on_progress(wait))
                .unwrap();
        }
        "next-release" => {
            tabula::open_with::<Next>(path, Options::new(), &next_release().on_progress(wait))
                .unwrap();
        }
        "history-release" => {
            tabula::open_with::<Ledgers>(path, Options::new(), &cents_release().on_progress(wait))
                .unwrap();
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("finished");
}

/// Runs `scenario` in a child process on `path` and SIGKILLs it once `pause` entries of the
/// running operation have committed.
fn kill_after(path: &Path, scenario: &str, pause: u64) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env("TABULA_SAFETY_CHILD", path)
        .env("TABULA_SAFETY_SCENARIO", scenario)
        .env("TABULA_SAFETY_PAUSE", pause.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut paused = false;
    for line in stdout.lines() {
        let line = line.unwrap();
        if line == format!("paused {pause}") {
            child.kill().unwrap(); // SIGKILL
            paused = true;
            break;
        }
    }
    let status = child.wait().unwrap();
    if !paused {
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        panic!("the child ({scenario}) never paused at {pause}: {status}\n{err}");
    }
}

fn values<T, S>(db: &Db<S>) -> Vec<(u64, T::Value)>
where
    T: Table<Key = u64>,
    S: Schema + tabula::Contains<T>,
{
    db.read().unwrap().iter::<T>().map(|e| e.unwrap()).collect()
}

fn converted() -> Vec<(u64, NewVal)> {
    (0..ENTRIES).map(|n| (n, upgrade(OldVal { n }))).collect()
}

fn unconverted() -> Vec<(u64, OldVal)> {
    (0..ENTRIES).map(|n| (n, OldVal { n })).collect()
}

// ---- item 1 ------------------------------------------------------------------------------------

/// Release A converts `ca` and is killed after 50 of 100 entries; release B declares step 2 as
/// "convert `cb`, then `ca`". B must not apply A's progress ("op 0, after key 49") to its own
/// op 0 (`cb`), which would leave `cb` with 50 of its 100 entries.
fn changed_declaration_of_an_interrupted_step_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_two_tables(dir.path());
    kill_after(dir.path(), "release-a", 50);

    let err = tabula::open_with::<ReleaseB>(dir.path(), Options::new(), &release_b("upgrade"))
        .map(|(db, _)| values::<CbNew, _>(&db).len())
        .expect_err("release B resumed release A's progress of step 2 (entries left in `cb`)");
    let msg = err.to_string();
    assert!(
        matches!(&err, Error::Migration { version: 2, step, .. } if step == "upgrade"),
        "{msg}"
    );
    assert!(msg.contains("is in progress"), "{msg}");
    assert!(msg.contains("declaration changed"), "{msg}");
    assert!(
        msg.contains("restore that declaration, open once to let it finish"),
        "{msg}"
    );
    // The plan gives the same refusal.
    let plan_err = tabula::plan::<ReleaseB>(dir.path(), &release_b("upgrade")).unwrap_err();
    assert_eq!(plan_err.to_string(), msg);

    // A renamed step is refused too, naming both names.
    let err = tabula::open_with::<ReleaseB>(dir.path(), Options::new(), &release_b("upgrade-2"))
        .map(|_| ())
        .expect_err("a renamed step resumed the progress");
    let msg = err.to_string();
    assert!(
        msg.contains("`upgrade`") && msg.contains("`upgrade-2`"),
        "{msg}"
    );
    assert!(msg.contains("restore step 2 `upgrade`"), "{msg}");

    // Nothing was lost: release A's plan resumes, and release A finishes the step with every
    // entry of `ca` converted and `cb` untouched.
    let plan = tabula::plan::<ReleaseA>(dir.path(), &release_a()).unwrap();
    assert!(plan.resumes, "{plan}");
    let (db, report) =
        tabula::open_with::<ReleaseA>(dir.path(), Options::new(), &release_a()).unwrap();
    assert_eq!(report.applied, vec![(2, "upgrade")]);
    assert_eq!(values::<CaNew, _>(&db), converted());
    assert_eq!(values::<CbOld, _>(&db), unconverted());
}

/// An interrupted step's progress written by a Tabula without declaration checksums (under the
/// `migration-progress` meta key, with a format-1 record) cannot be tied to a declaration: it
/// is refused, not resumed, and the build that began it can still finish it.
fn progress_without_a_checksum_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_two_tables(dir.path());
    kill_after(dir.path(), "release-a", 50);
    rewrite_as_legacy_progress(dir.path());

    // Even the matching declaration cannot prove it is the one that ran.
    let err = tabula::open_with::<ReleaseA>(dir.path(), Options::new(), &release_a())
        .map(|_| ())
        .expect_err("progress without a checksum was resumed");
    let msg = err.to_string();
    assert!(matches!(err, Error::Migration { version: 2, .. }), "{msg}");
    assert!(msg.contains("did not store the checksum"), "{msg}");
    assert!(
        msg.contains("with the build that began the migration"),
        "{msg}"
    );
    assert_eq!(
        tabula::plan::<ReleaseA>(dir.path(), &release_a())
            .unwrap_err()
            .to_string(),
        msg
    );
    // Code that does not know version 2 refuses it as a migration in progress.
    let err = tabula::open::<TwoTablesV1>(dir.path(), Options::new())
        .map(|_| ())
        .expect_err("version-1 code opened a file with a migration to 2 in progress");
    assert!(
        err.to_string().contains("a migration to version 2"),
        "{err}"
    );
    assert!(err.to_string().contains("is in progress"), "{err}");
}

/// Turns the in-progress state this Tabula records into what Tabula releases before it left:
/// a format-1 record and `{version, op, after, done}` under `migration-progress`.
fn rewrite_as_legacy_progress(path: &Path) {
    let mut boot = Bootstrap::begin(path, &Options::new(), 0).unwrap();
    let bytes = boot.meta_get("schema").unwrap().unwrap();
    let mut record: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let fields = record.as_object_mut().unwrap();
    if let Some(p) = fields.remove("in_progress") {
        let legacy = serde_json::json!({
            "version": p["version"], "op": p["op"], "after": p["after"], "done": p["done"],
        });
        fields.insert("format".into(), 1.into());
        boot.meta_put("schema", &serde_json::to_vec(&record).unwrap())
            .unwrap();
        boot.meta_put("migration-progress", &serde_json::to_vec(&legacy).unwrap())
            .unwrap();
        boot.checkpoint().unwrap();
    }
    let progress = boot.meta_get("migration-progress").unwrap();
    assert!(progress.is_some(), "the interrupted step left progress");
}

// ---- item 2 ------------------------------------------------------------------------------------

/// The next release renames `accounts` to `wallets` and converts it, and is killed after 3
/// batches. The previous release must refuse the file (read-write and read-only) instead of
/// creating an empty `accounts` whose writes no step would ever migrate.
fn previous_release_refuses_a_file_with_a_migration_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    write_accounts(dir.path());
    kill_after(dir.path(), "next-release", 3 * BATCH as u64);

    let expected = format!(
        "a migration to version 2 (`{WALLETS_STEP}`) is in progress; open with the release \
         that declares it to finish it"
    );
    for read_only in [false, true] {
        let err = tabula::open::<Previous>(dir.path(), Options::new().read_only(read_only))
            .map(|db| values::<Accounts, _>(&db).len())
            .expect_err("the previous release opened the half-migrated file");
        let msg = err.to_string();
        assert!(
            matches!(&err, Error::Migration { version: 2, step, .. } if step == WALLETS_STEP),
            "read_only {read_only}: {msg}"
        );
        assert!(msg.contains(&expected), "read_only {read_only}: {msg}");
    }
    let plan_err = tabula::plan::<Previous>(dir.path(), &Migrations::new()).unwrap_err();
    assert!(plan_err.to_string().contains(&expected), "{plan_err}");

    // A Tabula from before the in-progress marker (record format 1 at most) refuses the file
    // too: the record is stored in a newer format while the step runs.
    let record = tabula::untyped::UntypedDb::open(dir.path())
        .unwrap()
        .record()
        .cloned()
        .unwrap();
    assert!(
        record.format > 1,
        "the half-migrated file's record has format {}, which older Tabula releases open",
        record.format
    );
    assert_eq!(record.version, 1, "the step is not applied");

    // The release that declares the step refuses a read-only open (it must write to finish),
    // saying the step was interrupted.
    let err =
        tabula::open_with::<Next>(dir.path(), Options::new().read_only(true), &next_release())
            .map(|_| ())
            .unwrap_err();
    assert!(err.to_string().contains("was interrupted"), "{err}");

    // It finishes the step read-write: nothing was lost or created by the refused opens.
    let plan = tabula::plan::<Next>(dir.path(), &next_release()).unwrap();
    assert!(plan.resumes, "{plan}");
    let (db, report) =
        tabula::open_with::<Next>(dir.path(), Options::new(), &next_release()).unwrap();
    assert_eq!(report.applied, vec![(2, WALLETS_STEP)]);
    assert_eq!(values::<Wallets, _>(&db), converted());
    drop(db);
    let record = tabula::untyped::UntypedDb::open(dir.path())
        .unwrap()
        .record()
        .cloned()
        .unwrap();
    assert_eq!(record.version, 2);
    assert_eq!(
        record.format, 1,
        "a settled record is readable by older Tabula releases"
    );
    assert!(!record.tables.contains_key("accounts"), "{record:?}");
}

/// The in-progress marker is committed with every batch and cleared with the commit that
/// records the step: killed at any batch, the file is refused by the previous release, and a
/// resumed run ends with every entry converted once.
fn every_batch_of_an_interrupted_step_is_marked_in_progress() {
    for batches in [1, 5, 10] {
        let dir = tempfile::tempdir().unwrap();
        write_accounts(dir.path());
        kill_after(dir.path(), "next-release", batches * BATCH as u64);
        let err = tabula::open::<Previous>(dir.path(), Options::new())
            .map(|_| ())
            .expect_err("the previous release opened the half-migrated file");
        assert!(
            err.to_string().contains("is in progress"),
            "{batches}: {err}"
        );
        let (db, _) =
            tabula::open_with::<Next>(dir.path(), Options::new(), &next_release()).unwrap();
        assert_eq!(
            values::<Wallets, _>(&db),
            converted(),
            "killed after {batches} batches"
        );
        drop(db);
        // Once finished, the previous release gets the ordinary "newer release" refusal.
        let err = tabula::open::<Previous>(dir.path(), Options::new())
            .map(|_| ())
            .unwrap_err();
        assert!(err.to_string().contains("newer release"), "{err}");
    }
}

// ---- item 3 ------------------------------------------------------------------------------------

/// A transform of a table with a history converts the values before in the history after the
/// rows, in batches committed with their own progress: killed in that phase (at its first
/// batch, which also commits the rows' last, and again in a later one of the resumed run), the
/// run that finishes has converted every value before exactly once, and every read as of every
/// version gives the converted values.
fn a_transform_killed_in_its_history_converts_every_value_before_once() {
    let dir = tempfile::tempdir().unwrap();
    write_ledger(dir.path());
    let states = ledger_states();
    // 66 rows: six batches of 10, then 6 committed with the history's first 4 entries.
    kill_after(dir.path(), "history-release", 4);
    let record = tabula::untyped::UntypedDb::open(dir.path())
        .unwrap()
        .record()
        .cloned()
        .unwrap();
    let progress = record.in_progress.expect("the step is in progress");
    assert!(
        progress.history,
        "killed in the history's phase: {progress:?}"
    );
    assert_eq!(progress.done, 4);
    // In the changes of version 2, the first with values before (version 1's 100 created
    // their keys).
    kill_after(dir.path(), "history-release", 124);

    let (db, report) =
        tabula::open_with::<Ledgers>(dir.path(), Options::new(), &cents_release()).unwrap();
    assert_eq!(report.applied, vec![(2, CENTS_STEP)]);
    let cents = |state: &Vec<(u64, u64)>| -> Vec<(u64, u64)> {
        state.iter().map(|(k, v)| (*k, v * 100)).collect()
    };
    let tx = db.read().unwrap();
    assert_eq!(
        tx.iter::<Ledger>().map(|e| e.unwrap()).collect::<Vec<_>>(),
        cents(&states[3])
    );
    for version in 0..=3u64 {
        assert_eq!(
            tx.range_as_of::<Ledger>(.., version).unwrap(),
            cents(&states[version as usize]),
            "as of {version}"
        );
    }
    let check = tx.check_history::<Ledger>(10).unwrap();
    assert!(check.is_ok(), "{check:?}");
    drop(tx);
    assert!(db.check().unwrap().is_ok());
    // An unwind writes converted values back.
    let mut tx = db.write().unwrap();
    tx.unwind(1).unwrap();
    tx.commit().unwrap();
    assert_eq!(values::<Ledger, _>(&db), cents(&states[1]));
}
