//! The `metrics` feature: commits, commit latency, read-transaction ages and cut read
//! transactions are recorded through the `metrics` facade as they happen, and
//! `Db::record_metrics` sets the gauges (file, use, free list, readers, per-table sizes). A
//! recorder local to the test thread collects them.
#![cfg(feature = "metrics")]

#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};
use tabula::{Options, Schema, Table, telemetry};

#[derive(Table)]
#[table(name = "names", key = u64, value = String)]
struct Names;

#[derive(Schema)]
struct App(Names);

/// Every value recorded, by metric name and labels (`name{label=value,...}`).
#[derive(Default, Clone)]
struct Collected(Arc<Mutex<BTreeMap<String, Vec<f64>>>>);

struct Handle(String, Collected);

impl Collected {
    fn push(&self, key: &str, value: f64) {
        self.0
            .lock()
            .unwrap()
            .entry(key.to_owned())
            .or_default()
            .push(value);
    }
    fn get(&self, name: &str) -> Vec<(String, Vec<f64>)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.split('{').next() == Some(name))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl CounterFn for Handle {
    fn increment(&self, value: u64) {
        self.1.push(&self.0, value as f64);
    }
    fn absolute(&self, value: u64) {
        self.1.push(&self.0, value as f64);
    }
}
impl GaugeFn for Handle {
    fn increment(&self, value: f64) {
        self.1.push(&self.0, value);
    }
    fn decrement(&self, value: f64) {
        self.1.push(&self.0, -value);
    }
    fn set(&self, value: f64) {
        self.1.push(&self.0, value);
    }
}
impl HistogramFn for Handle {
    fn record(&self, value: f64) {
        self.1.push(&self.0, value);
    }
}

fn render(key: &Key) -> String {
    let labels: Vec<String> = key
        .labels()
        .map(|l| format!("{}={}", l.key(), l.value()))
        .collect();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl Recorder for Collected {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::new(Handle(render(key), self.clone())))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Arc::new(Handle(render(key), self.clone())))
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::new(Handle(render(key), self.clone())))
    }
}

#[test]
fn commits_latency_and_read_ages_are_recorded_as_they_happen() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(
        tabula::open::<App>(
            dir.path(),
            Options::new().max_read_age(Some(Duration::from_millis(20))),
        )
        .unwrap(),
    );
    let label = format!("db={}", dir.path().display());
    let collected = Collected::default();
    // How long each `commit` call took, measured around it: libmdbx's latency lies within.
    let mut outer = Vec::new();
    metrics::with_local_recorder(&collected, || {
        for n in 0..3u64 {
            let mut tx = db.write().unwrap();
            tx.put::<Names>(&n, &n.to_string()).unwrap();
            let start = Instant::now();
            tx.commit().unwrap();
            outer.push(start.elapsed().as_secs_f64());
        }
        let mut aborted = db.write().unwrap();
        aborted.put::<Names>(&9, &"no".to_string()).unwrap();
        aborted.abort(); // not a commit

        let tx = db.read().unwrap();
        std::thread::sleep(Duration::from_millis(30));
        drop(tx);

        let owned = db.read_owned().unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(owned.get::<Names>(&0).is_err()); // cut for its age
        drop(owned);
    });

    let commits = collected.get(telemetry::COMMITS);
    assert_eq!(commits.len(), 1, "{commits:?}");
    assert!(commits[0].0.contains(&label), "{commits:?}");
    assert_eq!(commits[0].1.iter().sum::<f64>(), 3.0);
    let latency = collected.get(telemetry::COMMIT_SECONDS);
    assert_eq!(latency[0].1.len(), 3, "{latency:?}");
    // In seconds, one per commit in order: more than zero (libmdbx rounds a nonzero time up to
    // its clock step, 1/65536 s), and at most the time the call took (it rounds down otherwise).
    const STEP: f64 = 1.0 / 65536.0;
    for (recorded, took) in latency[0].1.iter().zip(&outer) {
        assert!(
            *recorded > 0.0 && *recorded <= took.max(STEP),
            "recorded {recorded} s for a commit call of {took} s: {latency:?}"
        );
    }
    let ages = collected.get(telemetry::READ_TXN_AGE_SECONDS);
    let ages = &ages[0].1;
    assert_eq!(ages.len(), 2, "{ages:?}"); // the borrowed and the owned read
    assert!(ages.iter().all(|a| *a >= 0.02), "{ages:?}");
    let cut = collected.get(telemetry::READ_TXNS_CUT);
    assert_eq!(cut[0].1.iter().sum::<f64>(), 1.0, "{cut:?}");
}

#[test]
fn record_metrics_sets_the_gauges() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    for n in 0..1000u64 {
        tx.put::<Names>(&n, &"x".repeat(50)).unwrap();
    }
    tx.commit().unwrap();
    let held = db.read().unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Names>(&0, &"y".to_string()).unwrap();
    tx.commit().unwrap();

    let collected = Collected::default();
    metrics::with_local_recorder(&collected, || db.record_metrics()).unwrap();
    let stat = db.stat().unwrap();
    let one = |name: &str| {
        let found = collected.get(name);
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        *found[0].1.last().unwrap()
    };
    assert_eq!(one(telemetry::FILE_BYTES), stat.file_bytes as f64);
    assert_eq!(one(telemetry::MAX_BYTES), stat.max_bytes as f64);
    assert_eq!(one(telemetry::USED_BYTES), stat.used_bytes as f64);
    assert_eq!(one(telemetry::FREE_BYTES), stat.free_bytes as f64);
    assert!(one(telemetry::READERS) >= 1.0);
    assert_eq!(one(telemetry::OLDEST_READER_LAG), 1.0);
    let tables = collected.get(telemetry::TABLE_BYTES);
    assert!(tables[0].0.contains("table=names"), "{tables:?}");
    assert_eq!(*tables[0].1.last().unwrap(), stat.tables[0].bytes as f64);
    assert_eq!(one(telemetry::TABLE_ENTRIES), 1000.0);
    drop(held);
}

/// Each batch of a bulk load is a commit of the database, and records the commit metrics as a
/// `commit` does (the commit path is one for both): three batches, three commits.
#[test]
fn a_bulk_load_records_each_batch_commit() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let collected = Collected::default();
    let report = metrics::with_local_recorder(&collected, || {
        db.bulk_loader::<Names>()
            .batch_entries(10)
            .load((0..30u64).map(|n| (n, n.to_string())))
    })
    .unwrap();
    assert_eq!(report.batches, 3);
    let commits = collected.get(telemetry::COMMITS);
    assert_eq!(commits.len(), 1, "{commits:?}");
    assert_eq!(commits[0].1.iter().sum::<f64>(), 3.0, "{commits:?}");
    let latency = collected.get(telemetry::COMMIT_SECONDS);
    assert_eq!(latency.len(), 1, "{latency:?}");
    assert_eq!(latency[0].1.len(), 3, "{latency:?}");
}
