//! `Options::flush_threshold`: in `SyncMode::SafeNoSync` the file grows without a flush until
//! the threshold (256 MiB by default) is unflushed, instead of flushing before every growth
//! step (libmdbx's own rule, `flush_threshold(0)`); a smaller threshold flushes once that much
//! is unflushed; and a threshold with a mode that flushes every commit is refused.

#[path = "support/tempdb.rs"]
mod tempdb;

use tabula::{Error, Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(key = u64, value = Vec<u8>)]
struct Blobs;

#[derive(Schema)]
struct App(Blobs);

/// 1 MiB growth steps, so a few MiB of writes cross many of them.
fn options(sync: SyncMode) -> Options {
    Options::new().sync(sync).growth_step(1 << 20)
}

/// Commits `mib` MiB of 2 KiB values, 256 KiB per write transaction, and returns the largest
/// `unsynced_bytes` seen after a commit together with the last one.
fn write_mib(db: &tabula::Db<App>, mib: u64) -> (u64, u64) {
    let value = vec![0x5a_u8; 2048];
    let mut most = 0;
    let mut last = 0;
    for batch in 0..mib * 4 {
        let mut tx = db.write().unwrap();
        for i in 0..128 {
            tx.put::<Blobs>(&(batch * 128 + i), &value).unwrap();
        }
        tx.commit().unwrap();
        last = db.info().unwrap().unsynced_bytes;
        most = most.max(last);
    }
    (most, last)
}

#[test]
fn safe_no_sync_grows_without_flushing_by_default() {
    let (dir, db) = tempdb::open_with::<App>(options(SyncMode::SafeNoSync));
    let (_, unsynced) = write_mib(&db, 12);
    let file = db.info().unwrap().file_size;
    // Twelve 1 MiB growth steps and not one flush: everything written is still unflushed.
    assert!(
        file >= 12 << 20,
        "the file should have grown past 12 MiB, is {file} bytes"
    );
    assert!(
        unsynced >= 12 << 20,
        "nothing should have been flushed below the default 256 MiB threshold, but only \
         {unsynced} bytes are unflushed after writing 12 MiB"
    );
    db.sync().unwrap();
    assert_eq!(db.info().unwrap().unsynced_bytes, 0);
    drop(db);
    let db = tabula::open::<App>(dir.path(), options(SyncMode::SafeNoSync)).unwrap();
    let count = db.read().unwrap().iter::<Blobs>().count();
    assert_eq!(count, 12 * 4 * 128);
}

/// The most bytes left unflushed after any commit of 12 MiB written under `options`.
fn most_unflushed(options: Options) -> u64 {
    let (_dir, db) = tempdb::open_with::<App>(options);
    write_mib(&db, 12).0
}

#[test]
fn threshold_zero_flushes_before_growing() {
    let most = most_unflushed(options(SyncMode::SafeNoSync).flush_threshold(0));
    // libmdbx's own rule: a commit that finds the file full flushes first, so what is unflushed
    // never reaches much more than one growth step plus one transaction.
    assert!(
        most < 4 << 20,
        "with flush_threshold(0) a growth should flush, but {most} bytes were unflushed at once"
    );
}

#[test]
fn a_small_threshold_bounds_what_is_unflushed() {
    let most = most_unflushed(options(SyncMode::SafeNoSync).flush_threshold(2 << 20));
    // The commit that crosses 2 MiB flushes: at most the threshold plus one transaction's pages.
    assert!(
        most < 3 << 20,
        "flush_threshold(2 MiB) should flush once 2 MiB are unflushed, but {most} bytes were"
    );
}

#[test]
fn a_threshold_with_a_flushing_mode_is_refused() {
    for sync in [SyncMode::Durable, SyncMode::NoMetaSync] {
        let dir = tempfile::tempdir().unwrap();
        let Err(err) = tabula::open::<App>(dir.path(), options(sync).flush_threshold(1 << 20))
        else {
            panic!("a threshold with SyncMode::{sync:?} must be refused");
        };
        assert!(
            matches!(
                err,
                Error::InvalidOption {
                    option: "flush_threshold",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("SafeNoSync"), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let too_big = Options::new()
        .sync(SyncMode::SafeNoSync)
        .max_size(64 << 20)
        .flush_threshold(128 << 20);
    let Err(err) = tabula::open::<App>(dir.path(), too_big) else {
        panic!("a threshold above max_size must be refused");
    };
    assert!(err.to_string().contains("max_size"), "{err}");
}
