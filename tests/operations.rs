//! The operations API: `Db::copy_to` (an online, consistent backup), `Db::sync`, `Db::stat`
//! (per-table bytes and pages, the free list) and `DbInfo::unsynced_bytes`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tabula::{Db, Error, Options, Raw, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "pairs", key = u64, value = u64)]
struct Pairs;

#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Schema)]
struct App(Pairs, Blobs);

fn open_at(path: &std::path::Path, options: Options) -> Db<App> {
    tabula::open::<App>(path, options.max_size(1 << 30)).unwrap()
}

/// Every commit of the writer sets keys 0 and 1 of `pairs` to the same counter and adds a
/// blob: a copy that mixed two snapshots would show different counters, or a blob count that
/// does not match them.
#[test]
fn copies_taken_while_a_writer_commits_are_consistent_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_at(
        &dir.path().join("live"),
        Options::new().sync(SyncMode::SafeNoSync),
    );
    let stop = AtomicBool::new(false);
    // The writer's counter of commits that returned.
    let committed = AtomicU64::new(0);
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let mut tx = db.write().unwrap();
                tx.put::<Pairs>(&0, &n).unwrap();
                tx.put::<Blobs>(&n, &vec![n as u8; 3000]).unwrap();
                tx.put::<Pairs>(&1, &n).unwrap();
                tx.commit().unwrap();
                committed.store(n, Ordering::Release);
            }
            n
        });
        // Let the writer get going, then copy three times while it runs.
        while db.info().unwrap().last_txn < 20 {
            std::thread::yield_now();
        }
        let mut copied = Vec::new();
        for (i, compact) in [(0, false), (1, true), (2, false)] {
            let to = dir.path().join(format!("copy{i}"));
            let low = committed.load(Ordering::Acquire);
            db.copy_to(&to, compact).unwrap();
            let high = committed.load(Ordering::Acquire);
            let copy = open_at(&to, Options::new());
            let tx = copy.read().unwrap();
            let a = tx.get::<Pairs>(&0).unwrap().unwrap();
            let b = tx.get::<Pairs>(&1).unwrap().unwrap();
            assert_eq!(a, b, "copy {i} mixes snapshots");
            assert_eq!(tx.len::<Blobs>().unwrap(), a, "copy {i}");
            assert!(copy.check().unwrap().is_ok(), "copy {i}");
            // The snapshot of the call: every commit that returned before it, and none begun
            // after it returned (at most the one in flight, visible before its `commit` returns).
            assert!(
                low <= a && a <= high + 1,
                "copy {i} holds commit {a}, outside the {low}..={high} committed during the call"
            );
            copied.push(a);
        }
        stop.store(true, Ordering::Relaxed);
        let last = writer.join().unwrap();
        // The live database holds every commit, the last one included.
        let tx = db.read().unwrap();
        assert_eq!(tx.get::<Pairs>(&0).unwrap(), Some(last));
        assert_eq!(tx.get::<Pairs>(&1).unwrap(), Some(last));
        assert_eq!(tx.len::<Blobs>().unwrap(), last);
        eprintln!("copies of commits {copied:?}; the writer made {last}");
    });
}

#[test]
fn a_compact_copy_leaves_out_free_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_at(&dir.path().join("live"), Options::new());
    let mut tx = db.write().unwrap();
    for n in 0..2000u64 {
        tx.put::<Blobs>(&n, &vec![1; 2000]).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    for n in 100..2000u64 {
        tx.delete::<Blobs>(&n).unwrap();
    }
    tx.commit().unwrap();
    db.copy_to(dir.path().join("full"), false).unwrap();
    db.copy_to(dir.path().join("compact"), true).unwrap();
    // The file keeps the database's geometry; the pages in use are what compaction shrinks.
    let used = |name: &str| {
        let copy = open_at(&dir.path().join(name), Options::new());
        assert_eq!(copy.read().unwrap().len::<Blobs>().unwrap(), 100, "{name}");
        copy.stat().unwrap().used_bytes
    };
    let (full, compact) = (used("full"), used("compact"));
    assert!(
        compact * 4 < full,
        "compact {compact} vs {full} bytes in use"
    );
}

#[test]
fn a_copy_never_overwrites_and_names_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let db = open_at(&live, Options::new());
    let to = dir.path().join("backup");
    db.copy_to(&to, true).unwrap();
    let before = std::fs::read(to.join("mdbx.dat")).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Pairs>(&0, &1).unwrap();
    tx.commit().unwrap();
    let err = db.copy_to(&to, true).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&live.display().to_string()), "{msg}");
    assert!(msg.contains(&to.display().to_string()), "{msg}");
    assert!(msg.contains("already holds `mdbx.dat`"), "{msg}");
    assert_eq!(std::fs::read(to.join("mdbx.dat")).unwrap(), before);

    // A destination that is a file is refused with both paths too.
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let msg = db.copy_to(&file, false).unwrap_err().to_string();
    assert!(msg.contains("cannot create the directory"), "{msg}");
    assert!(msg.contains(&file.display().to_string()), "{msg}");
}

#[test]
fn sync_flushes_what_the_no_sync_modes_left_unflushed() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_at(dir.path(), Options::new().sync(SyncMode::SafeNoSync));
    let mut tx = db.write().unwrap();
    for n in 0..100u64 {
        tx.put::<Pairs>(&n, &n).unwrap();
    }
    tx.commit().unwrap();
    assert!(db.info().unwrap().unsynced_bytes > 0);
    db.sync().unwrap();
    assert_eq!(db.info().unwrap().unsynced_bytes, 0);
    db.sync().unwrap(); // nothing to do is fine
    drop(db);

    // Durable commits leave nothing to flush; a read-only open cannot sync.
    let db = open_at(dir.path(), Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Pairs>(&1000, &1).unwrap();
    tx.commit().unwrap();
    assert_eq!(db.info().unwrap().unsynced_bytes, 0);
    drop(db);
    let db = open_at(dir.path(), Options::new().read_only(true));
    assert!(matches!(db.sync(), Err(Error::ReadOnly { op: "sync", .. })));
}

#[test]
fn stat_counts_table_pages_and_the_free_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_at(dir.path(), Options::new());
    let empty = db.stat().unwrap();
    assert_eq!(empty.tables.len(), 2);
    assert_eq!(empty.tables[0].name, "pairs");
    assert_eq!(empty.tables[1].name, "blobs");
    assert!(empty.tables.iter().all(|t| t.entries == 0 && t.bytes == 0));

    let mut tx = db.write().unwrap();
    for n in 0..500u64 {
        tx.put::<Pairs>(&n, &n).unwrap();
        tx.put::<Blobs>(&n, &vec![7; 5000]).unwrap(); // overflow pages
    }
    tx.commit().unwrap();
    let full = db.stat().unwrap();
    let page = u64::from(full.page_size);
    let blobs = &full.tables[1];
    assert_eq!(blobs.entries, 500);
    assert!(blobs.overflow_pages * page >= 500 * 5000, "{blobs:?}");
    assert_eq!(
        blobs.bytes,
        (blobs.branch_pages + blobs.leaf_pages + blobs.overflow_pages) * page
    );
    assert_eq!(full.tables[0].entries, 500);
    assert!(full.used_bytes >= blobs.bytes + full.tables[0].bytes);
    assert!(full.used_bytes <= full.file_bytes && full.file_bytes <= full.max_bytes);
    assert_eq!(full.max_bytes, 1 << 30);

    // Deleted pages go to the free list; two commits later a write may reuse them.
    let mut tx = db.write().unwrap();
    tx.clear::<Blobs>().unwrap();
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Pairs>(&0, &1).unwrap();
    tx.commit().unwrap();
    let freed = db.stat().unwrap();
    assert_eq!(freed.tables[1].bytes, 0);
    assert!(
        freed.free_bytes >= 500 * 5000,
        "{} free bytes after freeing {} of blobs",
        freed.free_bytes,
        blobs.bytes
    );

    // A reader on the old snapshot keeps them from reuse: retained, not free.
    let mut tx = db.write().unwrap();
    for n in 0..500u64 {
        tx.put::<Blobs>(&n, &vec![8; 5000]).unwrap();
    }
    tx.commit().unwrap();
    let old = db.read().unwrap();
    let mut tx = db.write().unwrap();
    tx.clear::<Blobs>().unwrap();
    tx.commit().unwrap();
    let pinned = db.stat().unwrap();
    assert!(pinned.retained_bytes >= 500 * 5000, "{pinned:?}");
    drop(old);
}
