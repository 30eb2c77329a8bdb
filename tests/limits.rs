//! Resource limits and misuse: oversized keys and values, appends out of order, inserts of
//! existing keys, a read-only open missing a table, a full map, more readers than reader slots,
//! and a read transaction kept open too long. Each gives a clear error (or a warning), keeps
//! what was committed, and leaves the database usable.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::io::Write;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use tabula::{Error, Options, Part, Raw, Schema, Table};

#[derive(Table)]
#[table(name = "names", key = String, value = u64)]
struct Names;

#[derive(Table)]
#[table(name = "tags", key = u32, value = String, dupsort)]
struct Tags;

#[derive(Table)]
#[table(name = "blobs", key = u32, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Schema)]
struct Limits(Names, Tags, Blobs);

#[derive(Schema)]
struct OnlyNames(Names);

#[test]
fn keys_at_the_limit_fit_and_one_byte_more_is_too_large() {
    let (_d, db) = tempdb::open_with::<Limits>(Options::new().max_size(1 << 30));
    let max = db.max_key_size(<Names as Table>::FLAGS);
    assert!(max > 100, "max key {max}");
    let mut tx = db.write().unwrap();
    let at_limit = "a".repeat(max);
    tx.put::<Names>(at_limit.as_str(), &1).unwrap();
    let over = "b".repeat(max + 1);
    let err = tx.put::<Names>(over.as_str(), &2).unwrap_err();
    match &err {
        Error::TooLarge {
            table: "names",
            part: Part::Key,
            len,
            max: m,
            ..
        } => {
            assert_eq!(*len, max + 1);
            assert_eq!(*m, max);
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("page_size"), "{err}");
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Names>(at_limit.as_str()).unwrap(), Some(1));
    assert_eq!(tx.len::<Names>().unwrap(), 1);
}

#[test]
fn dupsort_values_over_the_limit_are_too_large() {
    // In a dupsort table values are keys of the nested tree: bounded like keys.
    let (_d, db) = tempdb::open_with::<Limits>(Options::new().max_size(1 << 30));
    let mut tx = db.write().unwrap();
    tx.put::<Tags>(&1, &"small".to_string()).unwrap();
    let huge = "v".repeat(64 << 10);
    let err = tx.put::<Tags>(&1, &huge).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                table: "tags",
                part: Part::Value,
                ..
            }
        ),
        "{err}"
    );
    tx.commit().unwrap();
    let values: Vec<String> = db
        .read()
        .unwrap()
        .dups::<Tags>(&1)
        .values()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(values, ["small"]);
}

#[test]
fn too_large_advises_a_page_size_only_when_one_would_take_it() {
    let (_d, db) = tempdb::open_with::<Limits>(Options::new().max_size(1 << 30).page_size(4096));
    let mut tx = db.write().unwrap();
    // A key one byte over the 4 KiB-page limit: 8 KiB pages take it, and the message says so.
    let max = db.max_key_size(<Names as Table>::FLAGS);
    let key = "k".repeat(max + 1);
    let err = tx.put::<Names>(key.as_str(), &1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                part: Part::Key,
                fits_page_size: Some(8192),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("`Options::page_size(8192)`"),
        "{err}"
    );
    // A dupsort value (a key of the nested tree) of 64 KiB: over the limit at every page size,
    // so no page size is advised.
    let huge = "v".repeat(64 << 10);
    let err = tx.put::<Tags>(&1, &huge).unwrap_err();
    let message = err.to_string();
    match &err {
        Error::TooLarge {
            part: Part::Value,
            fits_page_size: None,
            max_any_page_size,
            len,
            ..
        } => assert!(max_any_page_size < len, "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(!message.contains("Options::page_size"), "{message}");
    assert!(message.contains("no page size"), "{message}");
}

#[test]
fn appends_out_of_order_and_inserts_of_existing_keys_are_refused_and_change_nothing() {
    let (_d, db) = tempdb::open_with::<Limits>(Options::new().max_size(1 << 30));
    let mut tx = db.write().unwrap();
    {
        let mut app = tx.appender::<Blobs>().unwrap();
        for k in [1u32, 2, 5] {
            app.append(&k, &vec![k as u8]).unwrap();
        }
        for bad in [5u32, 3, 0] {
            let err = app.append(&bad, &vec![0]).unwrap_err();
            assert!(
                matches!(err, Error::AppendOutOfOrder { table: "blobs", .. }),
                "{bad}: {err}"
            );
        }
        app.append(&6, &vec![6]).unwrap();
    }
    let err = tx.append::<Blobs>(&4, &vec![4]).unwrap_err();
    assert!(
        err.to_string().contains("last key 6"),
        "names the last key: {err}"
    );
    let err = tx.insert::<Blobs>(&2, &vec![99]).unwrap_err();
    assert!(
        matches!(err, Error::KeyExists { table: "blobs", .. }),
        "{err}"
    );
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let all: Vec<(u32, Vec<u8>)> = tx.iter::<Blobs>().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        all,
        [(1, vec![1]), (2, vec![2]), (5, vec![5]), (6, vec![6])]
    );
}

#[test]
fn read_only_open_of_a_database_missing_a_table_names_it() {
    let (dir, db) = tempdb::open_with::<OnlyNames>(Options::new().max_size(1 << 30));
    let mut tx = db.write().unwrap();
    tx.put::<Names>("kept", &7).unwrap();
    tx.commit().unwrap();
    drop(db);
    let err = tabula::open::<Limits>(dir.path(), Options::new().max_size(1 << 30).read_only(true))
        .unwrap_err();
    assert!(
        matches!(&err, Error::TableMissing { table, .. } if table == "tags"),
        "{err}"
    );
    assert!(
        err.to_string().contains("read-write"),
        "says what to do: {err}"
    );
    // Nothing was created by the refused open; the data is there.
    let db =
        tabula::open::<OnlyNames>(dir.path(), Options::new().max_size(1 << 30).read_only(true))
            .unwrap();
    assert_eq!(db.read().unwrap().get::<Names>("kept").unwrap(), Some(7));
    assert!(db.write().is_err(), "a read-only open cannot write");
}

#[test]
fn a_full_map_says_how_to_grow_and_growing_works() {
    let dir = tempfile::tempdir().unwrap();
    let small = Options::new().max_size(1 << 20).growth_step(64 << 10);
    let db = tabula::open::<Limits>(dir.path(), small).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Names>("kept", &1).unwrap();
    tx.commit().unwrap();
    let blob = vec![7u8; 4096];
    let mut tx = db.write().unwrap();
    let mut written = 0u32;
    let err = loop {
        match tx.put::<Blobs>(&written, &blob) {
            Ok(()) => written += 1,
            Err(e) => break e,
        }
        assert!(written < 10_000, "a 1 MiB map fills up");
    };
    assert!(
        matches!(
            err,
            Error::MapFull {
                table: Some("blobs"),
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("Options::max_size"), "{msg}");
    assert!(msg.contains("1048576"), "names the current bound: {msg}");
    drop(tx);
    drop(db);
    // Following the advice: reopen with a larger bound, and the same write fits.
    let db = tabula::open::<Limits>(dir.path(), Options::new().max_size(64 << 20)).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..=written {
        tx.put::<Blobs>(&n, &blob).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.len::<Blobs>().unwrap(), u64::from(written) + 1);
    assert_eq!(tx.get::<Names>("kept").unwrap(), Some(1));
    drop(tx);
    assert!(db.check().unwrap().is_ok());
}

#[test]
fn more_readers_than_slots_is_readers_full_not_a_deadlock() {
    let (_d, db) = tempdb::open_with::<Limits>(Options::new().max_size(1 << 30).max_readers(4));
    let slots = db.info().unwrap().max_readers;
    // libmdbx rounds the slot count up to fill the lock file's pages.
    assert!(slots >= 4, "{slots}");
    let threads = 4usize;
    let per_thread = (slots as usize).div_ceil(threads) + 2;
    let barrier = Barrier::new(threads);
    let (held, refused) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut txs = Vec::new();
                    let mut refused = 0;
                    for _ in 0..per_thread {
                        match db.read() {
                            Ok(tx) => txs.push(tx),
                            Err(Error::ReadersFull { max_readers }) => {
                                assert_eq!(max_readers, slots);
                                refused += 1;
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                    // Hold them until every thread has tried.
                    barrier.wait();
                    (txs.len(), refused)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
    });
    assert_eq!(held + refused, threads * per_thread);
    assert_eq!(held, slots as usize, "every slot used, no more");
    assert!(refused >= threads * 2);
    let msg = Error::ReadersFull { max_readers: slots }.to_string();
    assert!(msg.contains("Options::max_readers"), "{msg}");
    // All released: reading works again, and writing never needed a reader slot.
    let mut tx = db.write().unwrap();
    tx.put::<Names>("after", &1).unwrap();
    tx.commit().unwrap();
    assert_eq!(db.read().unwrap().get::<Names>("after").unwrap(), Some(1));
}

/// A `tracing` writer collecting everything into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn with_captured_logs(f: impl FnOnce()) -> String {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    captured.text()
}

#[test]
fn a_long_read_transaction_is_logged_with_its_age() {
    let (_d, db) = tempdb::open_with::<Limits>(
        Options::new()
            .max_size(1 << 30)
            .long_read_warning(Some(Duration::from_millis(50))),
    );
    let logs = with_captured_logs(|| {
        let short = db.read().unwrap();
        drop(short);
        let long = db.read().unwrap();
        let id = long.id();
        std::thread::sleep(Duration::from_millis(150));
        drop(long);
        // The same txn object, renewed from the pool, starts a fresh clock.
        let again = db.read().unwrap();
        assert!(again.id() >= id);
        drop(again);
    });
    let warnings: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("read transaction was open"))
        .collect();
    assert_eq!(warnings.len(), 1, "{logs}");
    let w = warnings[0];
    assert!(w.contains("WARN"), "{w}");
    assert!(w.contains("age_ms="), "{w}");
    let age: u64 = w
        .split("age_ms=")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(age >= 140, "age {age} ms after sleeping 150 ms");
    assert!(w.contains("long_read_warning"), "says how to tune it: {w}");
}

/// Holds one read transaction for `hold` on a database opened with `options`; returns the
/// long-read warnings logged.
fn long_read_warnings(options: Options, hold: Duration) -> Vec<String> {
    let (_d, db) = tempdb::open_with::<Limits>(options);
    let logs = with_captured_logs(|| {
        let tx = db.read().unwrap();
        std::thread::sleep(hold);
        drop(tx);
    });
    logs.lines()
        .filter(|l| l.contains("read transaction was open"))
        .map(str::to_string)
        .collect()
}

/// `None` turns the warning off: the same read, held well past a short threshold and captured
/// the same way, warns with `Some(short)` (the control: the read is long enough and the capture
/// works) and stays quiet with `None`, also when `None` replaces a threshold set before, and
/// with the default 60 s.
#[test]
fn long_read_warning_none_stays_quiet_where_a_short_threshold_warns() {
    let short = Duration::from_millis(20);
    let hold = Duration::from_millis(120);
    let base = || Options::new().max_size(1 << 30);
    let warned = long_read_warnings(base().long_read_warning(Some(short)), hold);
    assert_eq!(
        warned.len(),
        1,
        "Some({short:?}), read held {hold:?}: {warned:?}"
    );
    let off = long_read_warnings(base().long_read_warning(None), hold);
    assert!(off.is_empty(), "None: {off:?}");
    let turned_off = long_read_warnings(
        base()
            .long_read_warning(Some(short))
            .long_read_warning(None),
        hold,
    );
    assert!(
        turned_off.is_empty(),
        "Some({short:?}) then None: {turned_off:?}"
    );
    let default = long_read_warnings(base(), hold);
    assert!(default.is_empty(), "the default (60 s): {default:?}");
}
