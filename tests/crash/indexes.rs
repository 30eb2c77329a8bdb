//! Secondary indexes under SIGKILL. Two kinds of child:
//!
//! - `index-writes`: numbered write transactions on an indexed table (each commit `n` inserts
//!   row `n`, moves row `n - 2` to another sender and hash, deletes row `n - 5`, and records `n`),
//!   printing `commit <n>` after each. After each kill the parent reopens, checks that the rows
//!   are exactly those of the last commit (the reported one or one more), and that every index
//!   equals its recomputation from the rows (`Db::check_indexes`, and each index table read
//!   whole against a recomputation).
//! - `index-build`: the startup step of a schema that adds an index to a populated table,
//!   which builds it in batches, each committed with its progress. After each kill the index
//!   table is absent (no batch committed), or holds exactly the entries of the rows up to the
//!   recorded progress (the next child resumes there), or is whole (then the parent drops it
//!   again by opening the schema without it, so the next child builds it again). The progress
//!   the child reported (`Migrations::on_progress`) rises from the rows done before it, never
//!   restarting at the rows this child did.
//!
//! `mdbx_env_chk` must be clean after every kill.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tabula::untyped::UntypedDb;
use tabula::{Db, Error, Index, Key, Options, Schema, Table};
use tabula_core::startup::Bootstrap;

use crate::child::Child;
use crate::kills;
use crate::random::{mix, seed};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Transfer {
    from: u32,
    hash: Option<u64>,
}

#[derive(Table)]
#[table(name = "transfers", key = u64, value = Transfer, indexed)]
struct Transfers;

/// The last commit's number.
#[derive(Table)]
#[table(name = "commits", key = u8, value = u64)]
struct Commits;

#[derive(Index)]
#[index(name = "by_sender", on = Transfers, key = u32, by = sender)]
struct BySender;

#[derive(Index)]
#[index(name = "by_hash", on = Transfers, key = u64, unique, by = hash)]
struct ByHash;

fn sender(_: &u64, t: &Transfer) -> u32 {
    t.from
}

fn hash(_: &u64, t: &Transfer) -> Option<u64> {
    t.hash
}

#[derive(Schema)]
struct Indexed(Transfers, Commits, BySender, ByHash);

#[derive(Schema)]
struct Unindexed(Transfers, Commits, ByHash);

fn options() -> Options {
    Options::new().max_size(1 << 30).growth_step(4 << 20)
}

/// Row `id` as commit `n` writes it.
fn row(id: u64, n: u64) -> Transfer {
    Transfer {
        from: (mix(id ^ n << 32) % 50) as u32,
        // Unique across rows: derived from the row and the commit that wrote it.
        hash: (!id.is_multiple_of(3)).then_some(n << 32 | id),
    }
}

/// The rows after commits `1..=n`.
fn rows_after(n: u64) -> std::collections::BTreeMap<u64, Transfer> {
    let mut rows = std::collections::BTreeMap::new();
    for c in 1..=n {
        rows.insert(c, row(c, c));
        if c >= 2 {
            rows.insert(c - 2, row(c - 2, c));
        }
        if c >= 5 {
            rows.remove(&(c - 5));
        }
    }
    rows.remove(&0);
    rows
}

pub fn writes_child(dir: &Path) {
    let db = tabula::open::<Indexed>(dir, options()).unwrap();
    let mut n = db.read().unwrap().get::<Commits>(&0).unwrap().unwrap_or(0);
    println!("ready {n}");
    loop {
        n += 1;
        let mut tx = db.write().unwrap();
        tx.put::<Transfers>(&n, &row(n, n)).unwrap();
        if n >= 3 {
            tx.put::<Transfers>(&(n - 2), &row(n - 2, n)).unwrap();
        }
        if n >= 6 {
            tx.delete::<Transfers>(&(n - 5)).unwrap();
        }
        tx.put::<Commits>(&0, &n).unwrap();
        tx.commit().unwrap();
        println!("commit {n}");
    }
}

/// Every index table equals its recomputation from the rows.
fn verify_indexes(db: &Db<Indexed>) {
    let check = db.check_indexes(5).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    let tx = db.read().unwrap();
    let mut senders = BTreeSet::new();
    let mut hashes = BTreeSet::new();
    for r in tx.iter::<Transfers>() {
        let (id, t) = r.unwrap();
        senders.insert((t.from, id));
        if let Some(h) = t.hash {
            hashes.insert((h, id));
        }
    }
    let stored: BTreeSet<(u32, u64)> = tx.iter::<BySender>().map(Result::unwrap).collect();
    assert_eq!(stored, senders);
    let stored: BTreeSet<(u64, u64)> = tx.iter::<ByHash>().map(Result::unwrap).collect();
    assert_eq!(stored, hashes);
}

pub fn index_writes_survive_process_kills() {
    let seed = seed("index-write kills");
    let kills = kills(50);
    let dir = tempfile::tempdir().unwrap();
    let mut last = 0u64;
    let mut one_more = 0u32;
    for cycle in 0..kills {
        let r = mix(seed ^ 0x1dc5 ^ u64::from(cycle) << 20);
        let wait = (r % 4) as u32;
        let delay = Duration::from_micros((r >> 16) % 3000);
        let mut child = Child::spawn("index-writes", dir.path(), &[]);
        let from: u64 = child.wait_for("ready ").unwrap().parse().unwrap();
        assert_eq!(from, last, "cycle {cycle}: resumes after the last commit");
        for _ in 0..wait {
            child
                .wait_for("commit ")
                .expect("the child does not finish");
        }
        let ended = child.kill_after(delay);
        let reported = ended
            .lines
            .iter()
            .filter_map(|l| l.strip_prefix("commit "))
            .map(|n| n.parse::<u64>().unwrap())
            .next_back()
            .unwrap_or(last);
        let db = tabula::open::<Indexed>(dir.path(), options()).unwrap();
        let check = db.check().unwrap();
        assert!(check.is_ok(), "cycle {cycle}: mdbx_env_chk: {check:?}");
        let n = db.read().unwrap().get::<Commits>(&0).unwrap().unwrap_or(0);
        assert!(
            n == reported || n == reported + 1,
            "cycle {cycle}: commit {n} found, {reported} reported (seed {seed})"
        );
        one_more += u32::from(n > reported);
        let rows: std::collections::BTreeMap<u64, Transfer> = db
            .read()
            .unwrap()
            .iter::<Transfers>()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows, rows_after(n), "cycle {cycle}: the rows of commit {n}");
        verify_indexes(&db);
        last = n;
    }
    eprintln!(
        "index-write kills: {kills} kills, {last} commits, {one_more} found one commit beyond \
         the last report; rows and indexes exact and mdbx_env_chk clean after every kill"
    );
}

/// Rows in the table the build children index.
const BUILD_ROWS: u64 = 60_000;

pub fn build_child(dir: &Path) {
    println!("ready");
    let migrations = tabula::Migrations::new().on_progress(|p| println!("done {}", p.done));
    let (_db, report) = tabula::open_with::<Indexed>(dir, options(), &migrations).unwrap();
    assert_eq!(report.indexes_built, ["by_sender"]);
    println!("finished");
}

/// Whether the file has a table named `name`.
fn has_table(dir: &Path, name: &str) -> bool {
    let db = UntypedDb::open(dir).unwrap();
    let mut tx = db.read().unwrap();
    tx.table_names().unwrap().iter().any(|n| n == name)
}

/// The last source key whose index entries an interrupted build committed, if one is in
/// progress (the meta table's `index-build` record ends with the rows done and that key).
fn build_progress(dir: &Path) -> Option<u64> {
    let mut boot = Bootstrap::begin(dir, &options().read_only(true), 0).unwrap();
    let record = boot.meta_get("index-build").unwrap()?;
    // `transfers` is not `integer_key`: its keys are stored big-endian.
    let key: [u8; 8] = record[record.len() - 8..].try_into().unwrap();
    let done: [u8; 8] = record[record.len() - 16..record.len() - 8]
        .try_into()
        .unwrap();
    let after = u64::from_be_bytes(key);
    // Rows 1..=after are done.
    assert_eq!(
        u64::from_be_bytes(done),
        after,
        "the rows done up to row {after}"
    );
    Some(after)
}

pub fn index_builds_survive_process_kills() {
    let seed = seed("index-build kills");
    let kills = kills(50);
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<Unindexed>(dir.path(), options()).unwrap();
        let mut tx = db.write().unwrap();
        for id in 1..=BUILD_ROWS {
            tx.put::<Transfers>(&id, &row(id, id)).unwrap();
        }
        tx.commit().unwrap();
    }
    let (mut absent, mut partial, mut resumed, mut complete) = (0u32, 0u32, 0u32, 0u32);
    for cycle in 0..kills {
        let r = mix(seed ^ 0xb11d ^ u64::from(cycle) << 20);
        // Most kills land during the open; every fifth waits long enough for the build to end.
        let delay = if cycle % 5 == 4 {
            Duration::from_secs(1)
        } else {
            Duration::from_micros(r % 300_000)
        };
        let before = build_progress(dir.path());
        resumed += u32::from(before.is_some());
        let mut child = Child::spawn("index-build", dir.path(), &[]);
        child.wait_for("ready").unwrap();
        let ended = child.kill_after(delay);
        // The reports go on from the rows done before (every row up to the recorded key),
        // rising, never past the table.
        let reported: Vec<u64> = ended
            .lines
            .iter()
            .filter_map(|l| l.strip_prefix("done "))
            .map(|n| n.parse().unwrap())
            .collect();
        let mut floor = before.unwrap_or(0);
        for &done in &reported {
            assert!(
                done > floor && done <= BUILD_ROWS,
                "cycle {cycle}: reports {reported:?} after {before:?} rows done (seed {seed})"
            );
            floor = done;
        }
        let state = (
            has_table(dir.path(), "by_sender"),
            build_progress(dir.path()),
        );
        let read_only = || tabula::open::<Indexed>(dir.path(), options().read_only(true));
        match state {
            (_, Some(after)) => {
                // Interrupted after a batch: the index holds exactly the entries of the rows up
                // to the last committed batch, which the next child resumes after.
                partial += 1;
                assert!(
                    before.is_none_or(|b| after >= b),
                    "cycle {cycle}: progress went back"
                );
                // A typed read-only open refuses the partial index; the file is read untyped.
                match read_only() {
                    Err(Error::IndexNotBuilt { index, what, .. }) => {
                        assert_eq!(index, "by_sender", "cycle {cycle}");
                        assert!(what.contains("interrupted"), "cycle {cycle}: {what}");
                    }
                    Err(e) => panic!("cycle {cycle}: {e}"),
                    Ok(_) => panic!("cycle {cycle}: a half-built index opened read-only"),
                }
                let db = UntypedDb::open(dir.path()).unwrap();
                assert!(db.check().unwrap().is_ok(), "cycle {cycle}: mdbx_env_chk");
                let mut tx = db.read().unwrap();
                let index = tx.table("by_sender").unwrap().expect("the index table");
                let mut stored: BTreeSet<(u32, u64)> = BTreeSet::new();
                tx.walk(&index, None, None, false, |k, v| {
                    stored.insert((u32::decode(k).unwrap(), u64::decode(v).unwrap()));
                    true
                })
                .unwrap();
                let want: BTreeSet<(u32, u64)> =
                    (1..=after).map(|id| (row(id, id).from, id)).collect();
                assert_eq!(stored, want, "cycle {cycle}: the entries up to {after}");
            }
            (true, None) => {
                // The build's last commit (the open's) is in: the index is whole.
                complete += 1;
                let db = tabula::open::<Indexed>(dir.path(), options()).unwrap();
                assert!(db.check().unwrap().is_ok(), "cycle {cycle}: mdbx_env_chk");
                assert_eq!(db.read().unwrap().len::<BySender>().unwrap(), BUILD_ROWS);
                verify_indexes(&db);
                drop(db);
                // Back to no index: the next child builds it again.
                drop(tabula::open::<Unindexed>(dir.path(), options()).unwrap());
                assert!(!has_table(dir.path(), "by_sender"));
            }
            (false, None) => {
                absent += 1;
                let check = tabula::open::<Unindexed>(dir.path(), options().read_only(true))
                    .unwrap()
                    .check()
                    .unwrap();
                assert!(check.is_ok(), "cycle {cycle}: mdbx_env_chk: {check:?}");
                assert!(!ended.finished, "cycle {cycle}: finished without the index");
                assert!(
                    before.is_none(),
                    "cycle {cycle}: a build in progress vanished"
                );
            }
        }
    }
    eprintln!(
        "index-build kills: {kills} kills ({absent} before the first batch committed: no index \
         table; {partial} after some batches: the entries of those rows exactly, {resumed} \
         children resumed such a build; {complete} after the build: the index whole); \
         mdbx_env_chk clean after every kill"
    );
}
