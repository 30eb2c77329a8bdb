//! Long-reader control: `Options::max_read_age` cuts an owned read transaction at its next use
//! and lets a write cut it instead of growing the file (libmdbx's handle-slow-readers hook);
//! `Options::on_slow_reader` decides for the write; `Db::readers` lists who pins what.
//!
//! The file-size tests rewrite the same 4 MiB of values 50 times (200 MiB written) while an
//! owned read transaction holds the first snapshot. Pinned, every rewrite needs new pages and
//! the file passes 150 MiB; cut, the pages are reused and the file stays under 48 MiB.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tabula::{Db, Error, Options, Raw, Schema, SlowReader, SlowReaderAction, SyncMode, Table};

#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Schema)]
struct App(Blobs);

const MIB: u64 = 1 << 20;

/// `SafeNoSync` with libmdbx's own flush rule (`flush_threshold(0)`: a flush before each growth
/// step, after which freed pages are reused), so that what bounds the file here is the readers
/// alone. With the default 256 MiB threshold no page freed since the last flush is reused
/// before 256 MiB are written, reader or not (`docs/design.md`, "Transactions").
fn options() -> Options {
    Options::new()
        .max_size(1 << 30)
        .initial_size(4 << 20)
        .growth_step(4 << 20)
        // Every commit durable, so that the only snapshot that keeps freed pages from reuse is
        // the reader's: in `SafeNoSync` the last flushed snapshot is kept too (libmdbx patch
        // `nometasync-gc`), which grows the file by up to a growth step per flush on its own.
        .sync(SyncMode::Durable)
}

/// One round: 4096 values of 1 KiB under the same keys (4 MiB), one commit.
fn rewrite(db: &Db<App>, round: u64) {
    let mut tx = db.write().unwrap();
    let value = vec![round as u8; 1024];
    for key in 0..4096u64 {
        tx.put::<Blobs>(&key, &value).unwrap();
    }
    tx.commit().unwrap();
}

/// Writes 200 MiB in 50 rounds; returns the file size at the end.
fn write_200_mib(db: &Db<App>) -> u64 {
    for round in 1..=50 {
        rewrite(db, round);
    }
    db.info().unwrap().file_size
}

#[test]
fn a_reader_held_while_writing_200_mib_no_longer_grows_the_file_past_a_bound() {
    // Control: the same owned reader without long-reader control pins its snapshot, and every
    // rewrite needs new pages.
    let (_dir, db) = tempdb::open_with::<App>(options());
    let db = Arc::new(db);
    rewrite(&db, 0);
    let held = db.read_owned().unwrap();
    let pinned = write_200_mib(&db);
    assert!(
        pinned > 150 * MIB,
        "a pinned snapshot should make the file grow with what is written: {} MiB",
        pinned / MIB
    );
    assert_eq!(held.get::<Blobs>(&7).unwrap(), Some(vec![0; 1024]));
    drop(held);

    // With a maximum age the write cuts the reader (older than that) instead of growing.
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_millis(50))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let held = db.read_owned().unwrap();
    std::thread::sleep(Duration::from_millis(120));
    let cut = write_200_mib(&db);
    assert!(
        cut < 48 * MIB,
        "the held reader should have been cut and its pages reused: {} MiB",
        cut / MIB
    );
    eprintln!(
        "file after writing 200 MiB with a reader held: {} MiB pinned, {} MiB cut",
        pinned / MIB,
        cut / MIB
    );
    match held.get::<Blobs>(&7) {
        Err(Error::ReadTxnTimedOut {
            by_writer: true,
            age,
            limit: Some(limit),
            txn_id,
        }) => {
            assert!(age >= Duration::from_millis(100), "{age:?}");
            assert_eq!(limit, Duration::from_millis(50));
            assert!(txn_id > 0);
        }
        other => panic!("expected a cut by the writer, got {other:?}"),
    }
    // Every later use fails the same way, and the message says what happened and what to do.
    let err = held.get::<Blobs>(&7).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("was cut"), "{msg}");
    assert!(msg.contains("max_read_age"), "{msg}");
    assert!(msg.contains("Begin a new read transaction"), "{msg}");
    drop(held);
    // The pool goes on: a new reader sees the last round.
    assert_eq!(
        db.read_owned().unwrap().get::<Blobs>(&7).unwrap(),
        Some(vec![50; 1024])
    );
    assert!(db.check().unwrap().is_ok());
}

#[test]
fn a_young_reader_is_not_cut_by_the_writer() {
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_secs(3600))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let held = db.read_owned().unwrap();
    for round in 1..=10 {
        rewrite(&db, round);
    }
    // Under its maximum age: the file grew instead, and the reader still reads its snapshot.
    assert!(db.info().unwrap().file_size > 40 * MIB);
    assert_eq!(held.get::<Blobs>(&1).unwrap(), Some(vec![0; 1024]));
}

#[test]
fn an_owned_reader_used_after_its_maximum_age_is_cut_at_that_use() {
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_millis(30))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let tx = db.read_owned().unwrap();
    assert_eq!(tx.get::<Blobs>(&1).unwrap(), Some(vec![0; 1024]));
    std::thread::sleep(Duration::from_millis(80));
    match tx.contains_key::<Blobs>(&1) {
        Err(Error::ReadTxnTimedOut {
            by_writer: false,
            age,
            limit,
            ..
        }) => {
            assert!(age >= Duration::from_millis(60), "{age:?}");
            assert_eq!(limit, Some(Duration::from_millis(30)));
        }
        other => panic!("expected a cut for its age, got {other:?}"),
    }
    let msg = tx.stat::<Blobs>().unwrap_err().to_string();
    assert!(msg.contains("after its maximum age"), "{msg}");
    // Its snapshot is released: the reader table no longer shows it.
    let id = tx.id();
    assert!(
        db.readers()
            .unwrap()
            .iter()
            .all(|r| r.txn != id || r.thread == tabula::ReaderInfo::PARKED),
        "{:?}",
        db.readers().unwrap()
    );
}

#[test]
fn an_iterator_cut_between_batches_ends_with_the_error() {
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_millis(30))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let mut it = db.read_owned().unwrap().into_range::<Blobs>(..);
    // The first batch (64 entries) is read at once...
    for key in 0..64u64 {
        assert_eq!(it.next().unwrap().unwrap().0, key);
    }
    std::thread::sleep(Duration::from_millis(80));
    // ...the next one finds the transaction too old.
    assert!(matches!(
        it.next(),
        Some(Err(Error::ReadTxnTimedOut {
            by_writer: false,
            ..
        }))
    ));
    assert!(it.next().is_none());
}

#[test]
fn the_slow_reader_callback_sees_the_reader_and_decides() {
    let seen: Arc<Mutex<Vec<SlowReader>>> = Arc::default();
    let record = Arc::clone(&seen);
    let options = options().on_slow_reader(move |reader| {
        record.lock().unwrap().push(*reader);
        // Waits once (as a callback that lets the reader finish would), then cuts.
        if reader.attempt == 0 {
            SlowReaderAction::Retry
        } else {
            SlowReaderAction::Cut
        }
    });
    let (_dir, db) = tempdb::open_with::<App>(options);
    let db = Arc::new(db);
    rewrite(&db, 0);
    let held = db.read_owned().unwrap();
    let snapshot = held.id();
    std::thread::sleep(Duration::from_millis(20));
    let size = write_200_mib(&db);
    assert!(size < 48 * MIB, "{} MiB", size / MIB);
    let seen = seen.lock().unwrap();
    let first = seen.first().expect("the callback was called");
    assert_eq!(first.pid, std::process::id());
    assert!(first.this_process);
    assert_eq!(first.txn_id, snapshot);
    assert!(first.lag >= 1, "{first:?}");
    assert!(first.retained_bytes > 0, "{first:?}");
    assert_eq!(first.cuttable, 1);
    assert!(first.oldest_age.unwrap() >= Duration::from_millis(10));
    assert_eq!(first.attempt, 0);
    assert_eq!(seen[1].attempt, 1, "Retry asks again: {seen:?}");
    // No maximum age here: the error says the policy cut it.
    match held.get::<Blobs>(&0) {
        Err(Error::ReadTxnTimedOut {
            by_writer: true,
            limit: None,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_slow_reader_callback_that_answers_grow_keeps_the_reader() {
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    let options = options()
        .max_read_age(Some(Duration::from_millis(1)))
        .on_slow_reader(move |_| {
            count.fetch_add(1, Ordering::Relaxed);
            SlowReaderAction::Grow
        });
    let (_dir, db) = tempdb::open_with::<App>(options);
    let db = Arc::new(db);
    rewrite(&db, 0);
    let held = db.read_owned().unwrap();
    for round in 1..=10 {
        rewrite(&db, round);
    }
    assert!(asked.load(Ordering::Relaxed) > 0);
    assert!(db.info().unwrap().file_size > 40 * MIB);
    // The callback overrides the age for the writer; the age still applies at the next use.
    assert!(matches!(
        held.get::<Blobs>(&0),
        Err(Error::ReadTxnTimedOut {
            by_writer: false,
            ..
        })
    ));
}

#[test]
fn a_panicking_slow_reader_callback_lets_the_file_grow() {
    let options = options().on_slow_reader(|_| panic!("a bug in the callback"));
    let (_dir, db) = tempdb::open_with::<App>(options);
    let db = Arc::new(db);
    rewrite(&db, 0);
    let held = db.read_owned().unwrap();
    for round in 1..=10 {
        rewrite(&db, round);
    }
    assert!(db.info().unwrap().file_size > 40 * MIB);
    assert_eq!(held.get::<Blobs>(&0).unwrap(), Some(vec![0; 1024]));
}

/// A `Db::read` transaction lends out slices of its snapshot at any time, so it is never cut:
/// the file grows and its reads stay correct.
#[test]
fn a_borrowed_read_transaction_is_never_cut() {
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_millis(1))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let tx = db.read().unwrap();
    let bytes = tx.get_bytes::<Blobs>(&5).unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    for round in 1..=10 {
        rewrite(&db, round);
    }
    assert!(db.info().unwrap().file_size > 40 * MIB);
    assert_eq!(bytes, &[0u8; 1024][..]);
    assert_eq!(tx.get::<Blobs>(&5).unwrap(), Some(vec![0; 1024]));
}

/// A borrowed read from an owned transaction (`get_ref`, `get_lazy`) lends out a slice of its
/// snapshot, so from then on it is treated as a `Db::read` transaction: never cut, for its age
/// or by a writer; the file grows and the borrowed bytes stay the ones read.
#[test]
fn an_owned_transaction_that_lent_a_borrowed_value_is_never_cut() {
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_millis(1))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let tx = db.read_owned().unwrap();
    let bytes: &[u8] = tx.get_ref::<Blobs>(&5).unwrap().unwrap();
    let lazy = tx.get_lazy::<Blobs>(&6).unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    for round in 1..=10 {
        rewrite(&db, round);
    }
    assert!(db.info().unwrap().file_size > 40 * MIB);
    assert_eq!(bytes, &[0u8; 1024][..]);
    assert_eq!(lazy.bytes(), &[0u8; 1024][..]);
    // Past its maximum age, and still not cut: its calls go on reading its snapshot.
    assert_eq!(tx.get::<Blobs>(&5).unwrap(), Some(vec![0; 1024]));
    assert_eq!(tx.get_ref::<Blobs>(&7).unwrap(), Some(&[0u8; 1024][..]));
    drop(tx);
    // Dropped, it goes back to the pool; a new owned transaction is cut for its age again.
    let fresh = db.read_owned().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    assert!(matches!(
        fresh.get::<Blobs>(&5),
        Err(Error::ReadTxnTimedOut {
            by_writer: false,
            ..
        })
    ));
}

/// A borrowed read cannot revive an owned transaction that was cut: it fails as every call.
#[test]
fn a_borrowed_read_from_a_cut_owned_transaction_is_refused() {
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_millis(1))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let tx = db.read_owned().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    assert!(matches!(
        tx.get_ref::<Blobs>(&5),
        Err(Error::ReadTxnTimedOut {
            by_writer: false,
            ..
        })
    ));
    assert!(matches!(
        tx.get_lazy::<Blobs>(&5),
        Err(Error::ReadTxnTimedOut {
            by_writer: false,
            ..
        })
    ));
}

/// The borrowed forms of an owned iterator pin its transaction as `get_ref` does, and a cut
/// transaction yields the cut as their one item.
#[test]
fn borrowed_owned_iteration_pins_its_transaction_or_reports_the_cut() {
    let (_dir, db) =
        tempdb::open_with::<App>(options().max_read_age(Some(Duration::from_millis(1))));
    let db = Arc::new(db);
    rewrite(&db, 0);
    let entries = db.read_owned().unwrap().into_range::<Blobs>(10..20);
    let values: Vec<(u64, &[u8])> = entries.borrowed().map(|e| e.unwrap()).collect();
    std::thread::sleep(Duration::from_millis(10));
    for round in 1..=10 {
        rewrite(&db, round);
    }
    assert!(db.info().unwrap().file_size > 40 * MIB);
    assert_eq!(values.len(), 10);
    assert!(values.iter().all(|(_, v)| *v == &[0u8; 1024][..]));
    drop(values);
    drop(entries);

    let cut = db.read_owned().unwrap().into_range::<Blobs>(..);
    std::thread::sleep(Duration::from_millis(10));
    let mut lazy = cut.lazy();
    assert!(matches!(
        lazy.next(),
        Some(Err(Error::ReadTxnTimedOut {
            by_writer: false,
            ..
        }))
    ));
    assert!(
        lazy.next().is_none(),
        "the error comes once, then the walk is over"
    );
}

#[test]
fn readers_lists_the_pinning_reader_with_its_lag() {
    let (_dir, db) = tempdb::open_with::<App>(options());
    let db = Arc::new(db);
    rewrite(&db, 0);
    let held = db.read_owned().unwrap();
    for round in 1..=3 {
        rewrite(&db, round);
    }
    let readers = db.readers().unwrap();
    let me = readers
        .iter()
        .find(|r| r.txn == held.id())
        .unwrap_or_else(|| panic!("{readers:?}"));
    assert!(me.this_process);
    assert_eq!(me.pid as u32, std::process::id());
    // libmdbx counts transaction IDs; a large commit can take more than one.
    assert!(me.lag >= 3, "{me:?}");
    assert!(me.bytes_retained > 0, "{me:?}");
    drop(held);
    // Dropped, it is parked on the latest snapshot: no lag.
    assert!(
        db.readers()
            .unwrap()
            .iter()
            .all(|r| r.lag == 0 || r.txn == 0)
    );
}

#[test]
fn a_maximum_read_age_under_a_millisecond_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = tabula::open::<App>(
        dir.path(),
        Options::new().max_read_age(Some(Duration::from_micros(500))),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidOption {
                option: "max_read_age",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("at least 1 ms"), "{err}");
}

/// Writes that fit in the file never cut a reader or ask the policy: libmdbx also calls its
/// slow-reader hook while a commit prepares its GC update, with room to spare in the file, and
/// earlier builds cut the reader there, on the second one-value commit
/// (`ReadTxnTimedOut { by_writer: true }`).
#[test]
fn commits_that_fit_in_the_file_neither_ask_nor_cut() {
    for sync in [
        SyncMode::Durable,
        SyncMode::NoMetaSync,
        SyncMode::SafeNoSync,
        SyncMode::UtterlyNoSync,
    ] {
        let asked: Arc<Mutex<Vec<SlowReader>>> = Arc::default();
        let record = Arc::clone(&asked);
        let options = Options::new()
            .initial_size(8 * MIB as usize)
            .sync(sync)
            .on_slow_reader(move |reader| {
                record.lock().unwrap().push(*reader);
                SlowReaderAction::Cut
            });
        let (_dir, db) = tempdb::open_with::<App>(options);
        let db = Arc::new(db);
        let mut tx = db.write().unwrap();
        tx.put::<Blobs>(&0, &vec![0; 100]).unwrap();
        tx.commit().unwrap();
        let size = db.info().unwrap().file_size;
        let held = db.read_owned().unwrap();
        for round in 1..=5u8 {
            let mut tx = db.write().unwrap();
            tx.put::<Blobs>(&0, &vec![round; 100]).unwrap();
            tx.commit().unwrap();
            assert_eq!(
                held.get::<Blobs>(&0)
                    .unwrap_or_else(|e| panic!("{sync:?}, round {round}: {e}")),
                Some(vec![0; 100]),
                "{sync:?}"
            );
        }
        assert_eq!(
            db.info().unwrap().file_size,
            size,
            "{sync:?}: the file grew"
        );
        assert!(
            asked.lock().unwrap().is_empty(),
            "{sync:?}: asked about a reader with room in the file: {:?}",
            asked.lock().unwrap()
        );
    }
}

/// With `max_read_age` and no policy, a reader past its age held across commits that fit in
/// the file is cut at its own next use, for its age (`by_writer: false`), not by a writer.
#[test]
fn commits_that_fit_in_the_file_leave_an_old_reader_to_its_next_use() {
    let options = Options::new()
        .initial_size(8 * MIB as usize)
        .max_read_age(Some(Duration::from_millis(1)));
    let (_dir, db) = tempdb::open_with::<App>(options);
    let db = Arc::new(db);
    let mut tx = db.write().unwrap();
    tx.put::<Blobs>(&0, &vec![0; 100]).unwrap();
    tx.commit().unwrap();
    let held = db.read_owned().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    for round in 1..=5u8 {
        let mut tx = db.write().unwrap();
        tx.put::<Blobs>(&0, &vec![round; 100]).unwrap();
        tx.commit().unwrap();
    }
    match held.get::<Blobs>(&0) {
        Err(Error::ReadTxnTimedOut {
            by_writer: false,
            age,
            ..
        }) => assert!(age >= Duration::from_millis(20), "{age:?}"),
        other => panic!("expected a cut at its own use, for its age: {other:?}"),
    }
}

/// What one run of [`rewrite_small`] rounds saw: the round of the first call of the policy, the
/// round of the first growth of the file, and the first write that failed.
#[derive(Debug)]
struct Run {
    first_asked: Option<u64>,
    first_grown: Option<u64>,
    failed: Option<(u64, Error)>,
    final_size: u64,
}

/// Opens with `options` and the given policy answer, holds an owned reader on the first
/// snapshot, and rewrites 64 values of 1 KiB per round for `rounds` rounds (or until a write
/// fails), noting in which round the policy was first asked and the file first grew.
fn rewrite_small(
    options: Options,
    answer: SlowReaderAction,
    rounds: u64,
) -> (Run, Result<(), Error>) {
    let round = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let first_asked = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let (r, f) = (Arc::clone(&round), Arc::clone(&first_asked));
    let options = options.sync(SyncMode::Durable).on_slow_reader(move |_| {
        let _ = f.compare_exchange(
            0,
            r.load(Ordering::Relaxed),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        answer
    });
    let (_dir, db) = tempdb::open_with::<App>(options);
    let db = Arc::new(db);
    let write = |value: u8| -> Result<(), Error> {
        let mut tx = db.write()?;
        for key in 0..64u64 {
            tx.put::<Blobs>(&key, &vec![value; 1024])?;
        }
        tx.commit()
    };
    write(0).unwrap();
    let held = db.read_owned().unwrap();
    let start = db.info().unwrap().file_size;
    let mut run = Run {
        first_asked: None,
        first_grown: None,
        failed: None,
        final_size: start,
    };
    for k in 1..=rounds {
        round.store(k, Ordering::Relaxed);
        if let Err(e) = write(k as u8) {
            run.failed = Some((k, e));
            break;
        }
        let size = db.info().unwrap().file_size;
        if size > start && run.first_grown.is_none() {
            run.first_grown = Some(k);
        }
        run.final_size = size;
    }
    let asked = first_asked.load(Ordering::Relaxed);
    run.first_asked = (asked > 0).then_some(asked);
    let read = held.get::<Blobs>(&0).map(drop);
    (run, read)
}

/// A file that cannot grow (its size is its upper bound): the policy is first asked in the
/// round whose write would otherwise fail with MapFull, not before; answering `Cut` there
/// keeps every write going.
#[test]
fn at_the_upper_bound_the_policy_is_asked_exactly_when_the_write_would_fail() {
    let fixed = || Options::new().initial_size(1 << 20).max_size(1 << 20);
    let (grow, read) = rewrite_small(fixed(), SlowReaderAction::Grow, 500);
    eprintln!("fixed size, answered Grow: {grow:?}");
    let (k_full, err) = grow
        .failed
        .as_ref()
        .expect("the held reader fills the file");
    assert!(matches!(err, Error::MapFull { .. }), "{err}");
    assert_eq!(grow.first_asked, Some(*k_full), "{grow:?}");
    assert_eq!(grow.first_grown, None);
    read.unwrap();

    let (cut, read) = rewrite_small(fixed(), SlowReaderAction::Cut, 500);
    eprintln!("fixed size, answered Cut: {cut:?}");
    assert_eq!(cut.first_asked, Some(*k_full), "{cut:?}");
    assert!(cut.failed.is_none(), "{cut:?}");
    assert!(
        matches!(
            read,
            Err(Error::ReadTxnTimedOut {
                by_writer: true,
                ..
            })
        ),
        "{read:?}"
    );
}

/// A file that can grow: the policy is first asked in the round in which the file would
/// otherwise first grow, not before; answering `Cut` there keeps the file at its size.
#[test]
fn a_growing_file_asks_the_policy_exactly_when_it_would_grow() {
    let growable = || {
        Options::new()
            .initial_size(1 << 20)
            .growth_step(1 << 20)
            .max_size(256 << 20)
    };
    let (grow, read) = rewrite_small(growable(), SlowReaderAction::Grow, 60);
    eprintln!("growable, answered Grow: {grow:?}");
    assert!(grow.failed.is_none(), "{grow:?}");
    let k_grown = grow
        .first_grown
        .expect("the held reader makes the file grow");
    assert_eq!(grow.first_asked, Some(k_grown), "{grow:?}");
    read.unwrap();

    let (cut, read) = rewrite_small(growable(), SlowReaderAction::Cut, 60);
    eprintln!("growable, answered Cut: {cut:?}");
    assert_eq!(cut.first_asked, Some(k_grown), "{cut:?}");
    assert!(cut.failed.is_none(), "{cut:?}");
    assert_eq!(cut.first_grown, None, "{cut:?}");
    assert!(
        matches!(
            read,
            Err(Error::ReadTxnTimedOut {
                by_writer: true,
                ..
            })
        ),
        "{read:?}"
    );
}
