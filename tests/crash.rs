//! Crashes during writes: a child process commits numbered batches in a loop, the parent
//! SIGKILLs it at a random point, reopens the database and checks that every batch the child
//! reported committed is present and whole, that no partial batch is visible, and that
//! libmdbx's own integrity check (`mdbx_env_chk`, [`tabula::Db::check`]) finds no problem.
//!
//! The child is this test binary run again with `TABULA_CRASH_CHILD=<dir>`: the test
//! `child_process_entry` writes when that variable is set and returns at once otherwise, so
//! nothing extra is built. The seed of the random kill points is printed; set
//! `TABULA_CRASH_SEED` to replay a run.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tabula::{Db, Options, Raw, Schema, SyncMode, Table};

/// One entry per item of a batch: `(batch, index) -> value`.
#[derive(Table)]
#[table(name = "items", key = (u64, u32), value = u64)]
struct Items;

/// One blob per batch, 0 to ~6 KB (the larger ones go to overflow pages).
#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

/// The checksum record of each batch, written in the same transaction.
#[derive(Table)]
#[table(name = "checks", key = u64, value = Check)]
struct Checks;

/// The last committed batch, overwritten by every batch (so pages are freed and reused).
#[derive(Table)]
#[table(name = "head", key = u8, value = u64)]
struct Head;

#[derive(Schema)]
struct CrashSchema(Items, Blobs, Checks, Head);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Check {
    items: u32,
    item_sum: u64,
    blob_len: u32,
    blob_sum: u64,
}

/// splitmix64: the batch contents and the kill points are derived from it.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// What batch `n` writes, derived from `n` alone so the parent can recompute it.
struct Batch {
    items: Vec<u64>,
    blob: Vec<u8>,
}

impl Batch {
    fn of(n: u64) -> Batch {
        let count = 1 + mix(n) % 24;
        let items = (0..count).map(|i| mix(n << 8 | i)).collect();
        let blob_len = mix(n ^ 0xb10b) % 6000;
        let blob = (0..blob_len).map(|i| mix(n * 10_007 + i) as u8).collect();
        Batch { items, blob }
    }

    fn check(&self) -> Check {
        Check {
            items: self.items.len() as u32,
            item_sum: self.items.iter().fold(0u64, |a, &v| a.wrapping_add(v)),
            blob_len: self.blob.len() as u32,
            blob_sum: self.blob.iter().map(|&b| u64::from(b)).sum(),
        }
    }
}

fn options(sync: SyncMode) -> Options {
    Options::new()
        .max_size(1 << 30)
        .max_size(256 << 20)
        .growth_step(1 << 20)
        .sync(sync)
}

const CHILD_VAR: &str = "TABULA_CRASH_CHILD";
const SYNC_VAR: &str = "TABULA_CRASH_SYNC";

/// The child process: when `TABULA_CRASH_CHILD` names a directory, commit batches there until
/// killed, printing `committed <n>` after each commit returns. Without the variable (a normal
/// test run) it does nothing.
#[test]
fn child_process_entry() {
    let Ok(dir) = std::env::var(CHILD_VAR) else {
        return;
    };
    let sync = match std::env::var(SYNC_VAR).as_deref() {
        Ok("safe_nosync") => SyncMode::SafeNoSync,
        Ok("nometasync") => SyncMode::NoMetaSync,
        Ok("utterly_nosync") => SyncMode::UtterlyNoSync,
        _ => SyncMode::Durable,
    };
    let db = tabula::open::<CrashSchema>(Path::new(&dir), options(sync)).unwrap();
    let mut next = db.read().unwrap().get::<Head>(&0).unwrap().unwrap_or(0) + 1;
    let mut out = std::io::stdout().lock();
    // libtest has printed `test child_process_entry ... ` without a newline: end that line.
    writeln!(out).unwrap();
    writeln!(out, "ready {next}").unwrap();
    out.flush().unwrap();
    loop {
        let batch = Batch::of(next);
        let mut tx = db.write().unwrap();
        for (i, v) in batch.items.iter().enumerate() {
            tx.put::<Items>(&(next, i as u32), v).unwrap();
        }
        tx.put::<Blobs>(&next, &batch.blob).unwrap();
        tx.put::<Checks>(&next, &batch.check()).unwrap();
        tx.put::<Head>(&0, &next).unwrap();
        tx.commit().unwrap();
        writeln!(out, "committed {next}").unwrap();
        out.flush().unwrap();
        next += 1;
    }
}

/// Checks every batch in the database; returns the head (the last whole batch).
fn verify(db: &Db<CrashSchema>) -> u64 {
    let tx = db.read().unwrap();
    let head = tx.get::<Head>(&0).unwrap().unwrap_or(0);
    // The checksum records are exactly 1..=head: no gap, nothing beyond the head.
    let checks: Vec<u64> = tx.iter::<Checks>().keys().map(Result::unwrap).collect();
    assert_eq!(checks, (1..=head).collect::<Vec<_>>(), "checksum records");
    let mut item_count = 0;
    for n in 1..=head {
        let batch = Batch::of(n);
        assert_eq!(
            tx.get::<Checks>(&n).unwrap(),
            Some(batch.check()),
            "check of {n}"
        );
        let items: Vec<u64> = tx
            .prefix::<Items, u64>(&n)
            .values()
            .map(Result::unwrap)
            .collect();
        assert_eq!(items, batch.items, "items of batch {n}");
        assert_eq!(
            tx.get::<Blobs>(&n).unwrap().as_deref(),
            Some(&batch.blob[..]),
            "blob of batch {n}"
        );
        item_count += items.len() as u64;
    }
    // Nothing of a later (uncommitted) batch is visible in any table.
    assert_eq!(
        tx.len::<Items>().unwrap(),
        item_count,
        "items beyond the head"
    );
    assert_eq!(tx.len::<Blobs>().unwrap(), head, "blobs beyond the head");
    head
}

struct Figures {
    kills: u32,
    kills_mid_batches: u32,
    reported: u64,
    verified_batches: u64,
}

fn kill_loop(sync: &str, mode: SyncMode, cycles: u32) -> Figures {
    let seed = std::env::var("TABULA_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("crash test ({sync}): seed {seed} (replay with TABULA_CRASH_SEED={seed})");
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut figures = Figures {
        kills: 0,
        kills_mid_batches: 0,
        reported: 0,
        verified_batches: 0,
    };
    let mut reported = 0u64;
    for cycle in 0..cycles {
        let mut child = Command::new(&exe)
            .args([
                "child_process_entry",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_VAR, dir.path())
            .env(SYNC_VAR, sync)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        // Wait until the child has opened the database, then let it write for 5-60 ms.
        let mut line = String::new();
        for seen in 0.. {
            assert!(seen < 100, "no `ready` line from the child");
            line.clear();
            let n = stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "child exited before opening: {:?}", child.wait());
            if let Some((_, first)) = line.trim().split_once("ready ") {
                let first: u64 = first.parse().unwrap();
                assert_eq!(first, reported + 1, "child resumes after the last report");
                break;
            }
        }
        let r = mix(seed ^ u64::from(cycle));
        std::thread::sleep(Duration::from_millis(5 + r % 56));
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        // Killed by our SIGKILL, not ended by a panic of its own.
        assert_eq!(status.signal(), Some(9), "child: {status}");
        figures.kills += 1;
        // Everything the child printed before it died: batches whose commit returned.
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let before = reported;
        for l in rest.lines() {
            if let Some(n) = l.strip_prefix("committed ") {
                let n: u64 = n.parse().unwrap();
                assert_eq!(n, reported + 1, "reports are consecutive");
                reported = n;
            }
        }
        if reported > before {
            figures.kills_mid_batches += 1;
        }
        let db = tabula::open::<CrashSchema>(dir.path(), options(mode)).unwrap();
        let head = verify(&db);
        // Every reported batch is there; at most one more (committed, killed before reporting).
        assert!(
            head == reported || head == reported + 1,
            "cycle {cycle}: head {head}, child reported {reported}"
        );
        reported = head;
        figures.verified_batches += head;
        let report = db.check().unwrap();
        assert!(report.is_ok(), "cycle {cycle}: mdbx_env_chk: {report:?}");
        assert!(report.tables >= 4, "{report:?}");
    }
    figures.reported = reported;
    eprintln!(
        "crash test ({sync}): {} kills ({} after at least one commit), {} batches committed, \
         {} batch verifications, mdbx_env_chk clean after every kill",
        figures.kills, figures.kills_mid_batches, figures.reported, figures.verified_batches
    );
    figures
}

/// Kills per test: the given default, or `TABULA_CRASH_KILLS` (the valgrind script lowers it).
fn kills(default: u32) -> u32 {
    std::env::var("TABULA_CRASH_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(default)
}

#[test]
fn durable_commits_survive_process_kills() {
    let n = kills(60);
    let f = kill_loop("durable", SyncMode::Durable, n);
    assert_eq!(f.kills, n);
    // The test means something only if kills landed while batches were being written.
    let mid = f.kills_mid_batches;
    assert!(mid >= n / 4, "only {mid} of {n} kills came after a commit");
}

/// `SafeNoSync` does not flush at commit, but a process kill does not lose the OS page cache:
/// nothing committed may be lost and the file must stay consistent.
#[test]
fn safe_nosync_commits_survive_process_kills() {
    let n = kills(30);
    let f = kill_loop("safe_nosync", SyncMode::SafeNoSync, n);
    assert_eq!(f.kills, n);
    let mid = f.kills_mid_batches;
    assert!(mid >= n / 4, "only {mid} of {n} kills came after a commit");
}

/// `NoMetaSync` defers only the meta page flush; a process kill keeps the page cache, so nothing
/// committed may be lost and the file must stay consistent.
#[test]
fn nometasync_commits_survive_process_kills() {
    let n = kills(15);
    let f = kill_loop("nometasync", SyncMode::NoMetaSync, n);
    assert_eq!(f.kills, n);
    let mid = f.kills_mid_batches;
    assert!(mid >= n / 4, "only {mid} of {n} kills came after a commit");
}

/// `UtterlyNoSync` risks the file only on a system crash or power loss (no flush, no ordering);
/// a process kill must still lose nothing committed and leave a consistent file.
#[test]
fn utterly_nosync_commits_survive_process_kills() {
    let n = kills(15);
    let f = kill_loop("utterly_nosync", SyncMode::UtterlyNoSync, n);
    assert_eq!(f.kills, n);
    let mid = f.kills_mid_batches;
    assert!(mid >= n / 4, "only {mid} of {n} kills came after a commit");
}
