//! Two processes on one environment. The first (a child: this test binary run again with
//! `TABULA_MP_CHILD=<dir>`) creates the database and keeps writing; the second (the test)
//! runs the startup step while the first is writing, then reads. The reader must see the
//! writer's commits, each one whole (two tables whose sum is invariant, a log with exactly one
//! entry per commit), and the startup step must create, drop and rewrite nothing and must not
//! stop the writer.
//!
//! The file has its own `main` (`harness = false`, `tests/support/harness.rs`): the child entry
//! is not a test.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;
#[path = "support/random.rs"]
mod random;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use tabula::{Db, Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "left", key = u32, value = u64)]
struct Left;

#[derive(Table)]
#[table(name = "right", key = u32, value = u64)]
struct Right;

/// One entry per commit: `k -> k * 3`.
#[derive(Table)]
#[table(name = "log", key = u64, value = u64)]
struct Log;

#[derive(Table)]
#[table(name = "head", key = u8, value = u64)]
struct Head;

#[derive(Schema)]
struct Shared(Left, Right, Log, Head);

const SLOTS: u32 = 8;
const TOTAL: u64 = 2 * SLOTS as u64 * 500;
/// Commits the writer makes after it learns that the reader has opened the database.
const AFTER_OPEN: u64 = 150;
const CHILD_VAR: &str = "TABULA_MP_CHILD";
const MARKER: &str = "reader-opened";

fn options() -> Options {
    Options::new().max_size(64 << 20).sync(SyncMode::SafeNoSync)
}

/// Checks one snapshot; returns its head (the number of commits it holds).
fn check_snapshot(db: &Db<Shared>) -> u64 {
    let tx = db.read().unwrap();
    let head = tx.get::<Head>(&0).unwrap().unwrap_or(0);
    let left: u64 = tx.iter::<Left>().values().map(Result::unwrap).sum();
    let right: u64 = tx.iter::<Right>().values().map(Result::unwrap).sum();
    assert_eq!(left + right, TOTAL, "torn snapshot at head {head}");
    assert_eq!(tx.len::<Log>().unwrap(), head, "log entries at head {head}");
    if head > 0 {
        assert_eq!(tx.get::<Log>(&head).unwrap(), Some(head * 3));
        assert_eq!(tx.get::<Log>(&1).unwrap(), Some(3));
    }
    head
}

fn main() {
    if let Some(dir) = std::env::var_os(CHILD_VAR) {
        writer(Path::new(&dir));
        return;
    }
    run_tests!(second_process_opens_while_first_writes_and_reads_whole_commits);
}

/// The writing process: creates the database, commits until `AFTER_OPEN` commits after the
/// marker file appears, prints `committed <k>` after each commit and `done <k>` at the end.
fn writer(dir: &Path) {
    let db = tabula::open::<Shared>(dir, options()).unwrap();
    let mut tx = db.write().unwrap();
    for s in 0..SLOTS {
        tx.put::<Left>(&s, &500).unwrap();
        tx.put::<Right>(&s, &500).unwrap();
    }
    tx.commit().unwrap();
    let mut out = std::io::stdout().lock();
    let mut stop_at = u64::MAX;
    let mut k = 0u64;
    while k < stop_at {
        k += 1;
        let r = random::mix(k);
        let (from, to) = ((r % 8) as u32, ((r >> 8) % 8) as u32);
        let mut tx = db.write().unwrap();
        let have = tx.get::<Left>(&from).unwrap().unwrap();
        let amount = (r >> 16) % (have + 1);
        tx.put::<Left>(&from, &(have - amount)).unwrap();
        let got = tx.get::<Right>(&to).unwrap().unwrap();
        tx.put::<Right>(&to, &(got + amount)).unwrap();
        // Move it back the other way half the time, so the left side does not run dry.
        if k.is_multiple_of(2) {
            let have = tx.get::<Right>(&from).unwrap().unwrap();
            let amount = (r >> 32) % (have + 1);
            tx.put::<Right>(&from, &(have - amount)).unwrap();
            let got = tx.get::<Left>(&to).unwrap().unwrap();
            tx.put::<Left>(&to, &(got + amount)).unwrap();
        }
        tx.append::<Log>(&k, &(k * 3)).unwrap();
        tx.put::<Head>(&0, &k).unwrap();
        tx.commit().unwrap();
        writeln!(out, "committed {k}").unwrap();
        out.flush().unwrap();
        if stop_at == u64::MAX && dir.join(MARKER).exists() {
            stop_at = k + AFTER_OPEN;
        }
    }
    // The writer's own data is intact after the other process's startup step.
    assert_eq!(check_snapshot(&db), k);
    writeln!(out, "done {k}").unwrap();
    out.flush().unwrap();
}

fn second_process_opens_while_first_writes_and_reads_whole_commits() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD_VAR, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut last_reported = 0u64;
    let mut next_report = |last: &mut u64| -> Option<String> {
        let line = lines.next()?.unwrap();
        if let Some(k) = line.strip_prefix("committed ") {
            *last = k.parse().unwrap();
        }
        Some(line)
    };
    // Let the writer get going.
    while last_reported < 20 {
        next_report(&mut last_reported).expect("writer exited early");
    }

    // The startup step in this second process, while the first keeps committing.
    let (db, report) = tabula::open_with_report::<Shared>(dir.path(), options()).unwrap();
    assert!(report.created.is_empty(), "created {:?}", report.created);
    assert_eq!(report.verified.len(), 4, "{report:?}");
    assert!(!report.record_written, "the schema record was rewritten");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the writer is still running"
    );
    let head_at_open = check_snapshot(&db);
    assert!(head_at_open >= 20);
    std::fs::File::create(dir.path().join(MARKER)).unwrap();

    // Read while the writer goes on; every snapshot whole, heads never going back.
    let mut snapshots = 0u64;
    let mut heads_seen = std::collections::BTreeSet::new();
    let mut last = head_at_open;
    let mut done_at = None;
    while done_at.is_none() {
        let head = check_snapshot(&db);
        assert!(head >= last, "snapshot went back from {last} to {head}");
        last = head;
        heads_seen.insert(head);
        snapshots += 1;
        // Drain one report line per snapshot, so reading and writing interleave.
        match next_report(&mut last_reported) {
            Some(line) => {
                if let Some(k) = line.strip_prefix("done ") {
                    done_at = Some(k.parse::<u64>().unwrap());
                }
            }
            None => panic!("writer exited without `done`: {:?}", child.wait()),
        }
    }
    let done_at = done_at.unwrap();
    assert!(
        child.wait().unwrap().success(),
        "the writer's own checks passed"
    );
    // The writer kept committing after this process's startup step...
    assert!(done_at >= head_at_open + AFTER_OPEN);
    // ...and this reader saw those commits, ending on the last one.
    assert_eq!(check_snapshot(&db), done_at);
    assert!(heads_seen.len() > 1, "reader saw heads {heads_seen:?}");
    let tx = db.read().unwrap();
    let log: Vec<(u64, u64)> = tx.iter::<Log>().map(Result::unwrap).collect();
    assert_eq!(log, (1..=done_at).map(|k| (k, k * 3)).collect::<Vec<_>>());
    drop(tx);
    assert!(db.check().unwrap().is_ok());
    eprintln!(
        "multiprocess: writer made {done_at} commits ({} after the second open), reader checked \
         {snapshots} snapshots across {} distinct heads",
        done_at - head_at_open,
        heads_seen.len()
    );
}
