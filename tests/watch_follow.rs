//! A reader process follows a writer process (`Db::follow`): it sees every commit ID of the
//! writer in order, or a jump it reports (`Followed::skipped`), each with the tables written,
//! and nothing after the last commit of a writer killed with SIGKILL in the middle of its
//! work.
//!
//! The writer is this test binary run again with `TABULA_WATCH_WRITER=<dir>` (the file has its
//! own `main`, `tests/support/harness.rs`, so the child entry is not a test). It prints
//! `committed <id>` after each commit returned.

#[path = "support/tempdb.rs"]
mod tempdb;
#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tabula::{Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "log", key = u64, value = u64)]
struct Log;

/// Written every third commit.
#[derive(Table)]
#[table(name = "every_third", key = u64, value = u64)]
struct EveryThird;

/// Never written by the writer.
#[derive(Table)]
#[table(name = "untouched", key = u64, value = u64)]
struct Untouched;

#[derive(Schema)]
struct Followed(Log, EveryThird, Untouched);

const CHILD_VAR: &str = "TABULA_WATCH_WRITER";
/// Commits the reader waits for before it kills the writer.
const KILL_AFTER: usize = 400;

fn options() -> Options {
    Options::new().max_size(64 << 20).sync(SyncMode::SafeNoSync)
}

fn main() {
    if let Some(dir) = std::env::var_os(CHILD_VAR) {
        writer(Path::new(&dir));
        return;
    }
    run_tests!(a_follower_sees_every_commit_of_another_process_in_order_and_nothing_after_a_kill);
}

/// The writing process: commits until it is killed, sleeping a varying little while between
/// commits (so the follower sees some commits one by one and some in bursts), and with a write
/// transaction open most of the time (so the kill often lands inside one).
fn writer(dir: &Path) {
    let db = tabula::open::<Followed>(dir, options()).unwrap();
    let mut out = std::io::stdout().lock();
    for k in 0u64.. {
        let mut tx = db.write().unwrap();
        let id = tx.id();
        tx.put::<Log>(&k, &id).unwrap();
        if k.is_multiple_of(3) {
            tx.put::<EveryThird>(&k, &id).unwrap();
        }
        std::thread::sleep(Duration::from_micros(k % 7 * 40));
        tx.commit().unwrap();
        writeln!(out, "committed {id}").unwrap();
        out.flush().unwrap();
        std::thread::sleep(Duration::from_micros(k % 5 * 30));
    }
}

/// The writer process, killed and reaped however the test ends.
struct Writer(std::process::Child);

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn a_follower_sees_every_commit_of_another_process_in_order_and_nothing_after_a_kill() {
    let (dir, db) = tempdb::open_with::<Followed>(options());
    let start = db.read().unwrap().id();
    let mut follower = db.follow().unwrap().max_wait(Duration::from_millis(2));
    assert_eq!(follower.last_id(), start);

    let mut child = Writer(
        Command::new(std::env::current_exe().unwrap())
            .env(CHILD_VAR, dir.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    // The writer's reports, read on a thread; the kill after `KILL_AFTER` of them.
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let id = line.strip_prefix("committed ").unwrap().parse().unwrap();
            if tx.send(id).is_err() {
                break;
            }
        }
    });

    let mut seen = Vec::new();
    let mut reported = Vec::new();
    let mut killed = false;
    loop {
        reported.extend(rx.try_iter());
        if !killed && reported.len() >= KILL_AFTER {
            child.0.kill().unwrap(); // SIGKILL
            child.0.wait().unwrap();
            killed = true;
        }
        match follower
            .next_commit_timeout(Duration::from_millis(300))
            .unwrap()
        {
            Some(f) => seen.push(f),
            None if killed => break, // nothing for 300 ms after the writer died
            None => {}
        }
    }
    reader.join().unwrap();
    reported.extend(rx.try_iter());

    // The writer's IDs are consecutive: a jump in what the follower saw is commits it missed.
    assert!(reported.len() >= KILL_AFTER);
    assert_eq!(reported[0], start + 1);
    assert!(
        reported.windows(2).all(|w| w[1] == w[0] + 1),
        "the writer's commit IDs are consecutive"
    );

    // In order, chained, every jump reported.
    let mut previous = start;
    for f in &seen {
        assert_eq!(f.previous, previous, "{f:?}");
        assert!(f.id > f.previous);
        assert_eq!(f.skipped(), f.id > f.previous + 1);
        assert!(f.tables.contains::<Followed, Log>(), "{f:?}");
        assert!(!f.tables.contains::<Followed, Untouched>(), "{f:?}");
        // `every_third` is in the set exactly when one of the commits since `previous` wrote
        // it: commit `id` wrote key `id - start - 1`.
        let wrote_third = (f.previous + 1..=f.id).any(|id| (id - start - 1).is_multiple_of(3));
        assert_eq!(
            f.tables.contains::<Followed, EveryThird>(),
            wrote_third,
            "{f:?}"
        );
        previous = f.id;
    }
    // Every commit the writer reported is one the follower saw or one inside a reported jump.
    let mut covered = std::collections::BTreeSet::new();
    for f in &seen {
        covered.extend(f.previous + 1..=f.id);
    }
    for id in &reported {
        assert!(
            covered.contains(id),
            "commit {id} neither seen nor inside a reported jump"
        );
    }
    // Nothing after the last commit: the follower ends on the last committed transaction (the
    // writer may have committed once more before it could print), and a transaction the kill
    // interrupted never shows.
    let last_committed = db.read().unwrap().id();
    let last_reported = *reported.last().unwrap();
    assert!(last_committed == last_reported || last_committed == last_reported + 1);
    assert_eq!(seen.last().unwrap().id, last_committed);
    assert!(follower.poll().unwrap().is_none());
    assert_eq!(
        db.read().unwrap().len::<Log>().unwrap(),
        last_committed - start,
        "one log entry per commit"
    );
    let one_by_one = seen.iter().filter(|f| !f.skipped()).count();
    eprintln!(
        "watch_follow: writer committed {} times before the kill; the follower saw {} events, \
         {one_by_one} of them single commits",
        last_committed - start,
        seen.len()
    );
    assert!(one_by_one > 0, "the follower saw no commit on its own");
}
