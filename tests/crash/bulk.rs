//! `Db::bulk_load` killed mid-load. The child bulk-loads from after the table's last key with a
//! batch size the parent draws, printing `batch <entries>` after each batch commits; the parent
//! kills it after 0-3 reported batches plus a random 0-3 ms, then checks
//! that the table holds the entries from before, then exactly the batches the child reported or
//! one batch more, never a partial batch, every value right, and that `mdbx_env_chk` is clean.

use std::path::Path;
use std::time::Duration;

use tabula::{Db, Options, Raw, Schema, Table};

use crate::child::Child;
use crate::kills;
use crate::random::{mix, seed};

/// The append workload's table: `u32` integer keys, raw byte values.
#[derive(Table)]
#[table(name = "log", key = u32, value = Vec<u8>, codec = Raw, integer_key)]
struct Log;

/// Written once before any load; no load touches it.
#[derive(Table)]
#[table(name = "names", key = String, value = u64)]
struct Names;

#[derive(Schema)]
struct BulkSchema(Log, Names);

/// Entries committed by a plain write transaction before any load.
const PRELOAD: u32 = 1000;
const BATCH_VAR: &str = "TABULA_CRASH_BATCH";

fn open(dir: &Path) -> Db<BulkSchema> {
    tabula::open::<BulkSchema>(dir, Options::new().max_size(1 << 30).growth_step(4 << 20)).unwrap()
}

/// The value stored under `k`: derived from the key so any entry can be checked alone.
fn value(k: u32) -> Vec<u8> {
    let len = 20 + (k % 80) as usize;
    (0..len).map(|i| (k as usize * 31 + i) as u8).collect()
}

/// The child: bulk-loads `Log` from after its last key until killed, in batches of
/// `TABULA_CRASH_BATCH` entries, printing `ready <first key>` and then `batch <entries>` after
/// each committed batch (entries loaded so far by this load).
pub fn child(dir: &Path) {
    let batch: usize = std::env::var(BATCH_VAR).unwrap().parse().unwrap();
    let db = open(dir);
    let last = db.read().unwrap().cursor::<Log>().unwrap().last().unwrap();
    let from = last.map_or(0, |(k, _)| k + 1);
    println!("ready {from}");
    // Far more than it gets to write before the kill.
    db.bulk_loader::<Log>()
        .batch_entries(batch)
        .on_batch(|r| println!("batch {}", r.entries))
        .load((from..from + 4_000_000).map(|k| (k, value(k))))
        .unwrap();
    println!("finished");
}

/// Checks the keys `from..` of `Log`: contiguous from `from`, every value right. Returns the
/// table's entry count.
fn verify_from(db: &Db<BulkSchema>, from: u32) -> u32 {
    let tx = db.read().unwrap();
    let len = tx.len::<Log>().unwrap() as u32;
    let mut expected = from;
    for e in tx.range::<Log>(from..) {
        let (k, v) = e.unwrap();
        assert_eq!(k, expected, "keys are contiguous");
        assert_eq!(v, value(k), "value of key {k}");
        expected += 1;
    }
    assert_eq!(expected, len, "entries below {from} changed");
    len
}

pub fn bulk_loads_survive_process_kills() {
    let seed = seed("bulk-load kills");
    let kills = kills(60);
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let mut tx = db.write().unwrap();
        for k in 0..PRELOAD {
            tx.put::<Log>(&k, &value(k)).unwrap();
        }
        tx.put::<Names>("before", &1).unwrap();
        tx.commit().unwrap();
    }
    let mut len = PRELOAD;
    let (mut after_a_batch, mut one_more, mut batches) = (0u32, 0u32, 0u64);
    for cycle in 0..kills {
        let r = mix(seed ^ 0xb01c ^ u64::from(cycle) << 20);
        let batch = 20 + (r % 381) as u32;
        // Every fourth kill lands during the open or the first batch; the others after 1-3
        // reported batches, each plus a random delay.
        let wait_batches = if cycle % 4 == 0 { 0 } else { 1 + (r >> 16) % 3 };
        let delay = Duration::from_micros((r >> 24) % 3000);
        let mut child = Child::spawn("bulk", dir.path(), &[(BATCH_VAR, batch.to_string())]);
        let from: u32 = child.wait_for("ready ").unwrap().parse().unwrap();
        assert_eq!(
            from, len,
            "cycle {cycle}: the load starts after the last key"
        );
        for _ in 0..wait_batches {
            child
                .wait_for("batch ")
                .expect("the load ended before the kill");
        }
        let ended = child.kill_after(delay);
        assert!(!ended.finished, "the load ended before the kill");
        // The reports: the entries loaded after each batch, whole batches in order.
        let reports: Vec<u32> = ended
            .lines
            .iter()
            .filter_map(|l| l.strip_prefix("batch "))
            .map(|n| n.parse().unwrap())
            .collect();
        let expected: Vec<u32> = (1..=reports.len() as u32).map(|i| i * batch).collect();
        assert_eq!(reports, expected, "cycle {cycle}: batches of {batch}");
        let reported = reports.last().copied().unwrap_or(0);

        let db = open(dir.path());
        let check = db.check().unwrap();
        assert!(check.is_ok(), "cycle {cycle}: mdbx_env_chk: {check:?}");
        let now = verify_from(&db, len);
        let loaded = now - len;
        // A process kill keeps the page cache: every batch whose commit returned is there, and
        // at most one more (committed, killed before it printed); never part of a batch.
        assert!(
            loaded == reported || loaded == reported + batch,
            "cycle {cycle}: {loaded} entries loaded, the child reported {reported} in batches \
             of {batch} (seed {seed})"
        );
        after_a_batch += u32::from(reported > 0);
        one_more += u32::from(loaded > reported);
        batches += u64::from(loaded / batch);
        len = now;
    }
    let db = open(dir.path());
    assert_eq!(verify_from(&db, 0), len, "the whole table");
    assert_eq!(db.read().unwrap().get::<Names>("before").unwrap(), Some(1));
    eprintln!(
        "bulk-load kills: {kills} kills ({after_a_batch} after at least one committed batch, \
         {one_more} found one batch beyond the last report), {batches} batches, {len} entries, \
         mdbx_env_chk clean after every kill"
    );
}
