//! Write transactions killed mid-stream, under every `SyncMode`: the child commits numbered
//! batches in a loop and prints `committed <n>` after each commit returns; the parent lets it
//! write for a random 5-60 ms, SIGKILLs it, reopens and checks that every batch is whole, that
//! the head is the last reported batch or one more, that nothing of a later batch is visible,
//! and that `mdbx_env_chk` is clean; the next child resumes exactly after the head.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tabula::{Db, Options, Raw, Schema, SyncMode, Table};

use crate::child::Child;
use crate::kills;
use crate::random::{mix, seed};

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
        .max_size(256 << 20)
        .growth_step(1 << 20)
        .sync(sync)
}

const SYNC_VAR: &str = "TABULA_CRASH_SYNC";

fn sync_mode(name: &str) -> SyncMode {
    match name {
        "durable" => SyncMode::Durable,
        "safe_nosync" => SyncMode::SafeNoSync,
        "nometasync" => SyncMode::NoMetaSync,
        "utterly_nosync" => SyncMode::UtterlyNoSync,
        other => panic!("{SYNC_VAR}={other:?} is not a sync mode"),
    }
}

/// The child: commits batches in `dir` until killed, printing `ready <next>` once open and
/// `committed <n>` after each commit returns.
pub fn child(dir: &Path) {
    let sync = sync_mode(&std::env::var(SYNC_VAR).unwrap_or_else(|_| "durable".into()));
    let db = tabula::open::<CrashSchema>(dir, options(sync)).unwrap();
    let mut next = db.read().unwrap().get::<Head>(&0).unwrap().unwrap_or(0) + 1;
    println!("ready {next}");
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
        println!("committed {next}");
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
            .prefix::<Items>(&n)
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
    kills_after_a_commit: u32,
    one_more: u32,
    batches: u64,
    verified_batches: u64,
}

fn kill_loop(sync: &str, cycles: u32) -> Figures {
    let seed = seed(&format!("commit kills ({sync})"));
    let mode = sync_mode(sync);
    let dir = tempfile::tempdir().unwrap();
    let mut figures = Figures {
        kills: 0,
        kills_after_a_commit: 0,
        one_more: 0,
        batches: 0,
        verified_batches: 0,
    };
    let mut head = 0u64;
    for cycle in 0..cycles {
        let mut child = Child::spawn("commits", dir.path(), &[(SYNC_VAR, sync.to_string())]);
        // Wait until the child has opened the database, then let it write for 5-60 ms.
        let first: u64 = child.wait_for("ready ").unwrap().parse().unwrap();
        assert_eq!(
            first,
            head + 1,
            "cycle {cycle}: the child resumes after the head"
        );
        let delay = Duration::from_millis(5 + mix(seed ^ u64::from(cycle)) % 56);
        let ended = child.kill_after(delay);
        figures.kills += 1;
        // Batches whose commit returned, as the child reported them: consecutive from `first`.
        let mut reported = head;
        for l in &ended.lines {
            if let Some(n) = l.strip_prefix("committed ") {
                let n: u64 = n.parse().unwrap();
                assert_eq!(n, reported + 1, "cycle {cycle}: reports are consecutive");
                reported = n;
            }
        }
        if reported > head {
            figures.kills_after_a_commit += 1;
        }
        let db = tabula::open::<CrashSchema>(dir.path(), options(mode)).unwrap();
        let found = verify(&db);
        // Every reported batch is there; at most one more (committed, killed before reporting).
        assert!(
            found == reported || found == reported + 1,
            "cycle {cycle}: head {found}, child reported {reported} (seed {seed})"
        );
        if found == reported + 1 {
            figures.one_more += 1;
        }
        head = found;
        figures.verified_batches += head;
        let report = db.check().unwrap();
        assert!(report.is_ok(), "cycle {cycle}: mdbx_env_chk: {report:?}");
        assert!(report.tables >= 4, "{report:?}");
    }
    figures.batches = head;
    eprintln!(
        "commit kills ({sync}): {} kills ({} after at least one commit, {} found one batch \
         beyond the last report), {} batches committed, {} batch verifications, mdbx_env_chk \
         clean after every kill",
        figures.kills,
        figures.kills_after_a_commit,
        figures.one_more,
        figures.batches,
        figures.verified_batches
    );
    figures
}

fn kill_test(sync: &str, default_kills: u32) {
    let n = kills(default_kills);
    let f = kill_loop(sync, n);
    assert_eq!(f.kills, n);
    // The test means something only if kills landed while batches were being written.
    let after = f.kills_after_a_commit;
    assert!(
        after >= n / 4,
        "only {after} of {n} kills came after a commit"
    );
}

pub fn durable_commits_survive_process_kills() {
    kill_test("durable", 60);
}

/// `SafeNoSync` does not flush at commit, but a process kill does not lose the OS page cache:
/// nothing committed may be lost and the file must stay consistent.
pub fn safe_nosync_commits_survive_process_kills() {
    kill_test("safe_nosync", 30);
}

/// `NoMetaSync` defers only the meta page flush; a process kill keeps the page cache.
pub fn nometasync_commits_survive_process_kills() {
    kill_test("nometasync", 15);
}

/// `UtterlyNoSync` risks the file only on a system crash or power loss (no flush, no ordering);
/// a process kill must still lose nothing committed and leave a consistent file.
pub fn utterly_nosync_commits_survive_process_kills() {
    kill_test("utterly_nosync", 15);
}
