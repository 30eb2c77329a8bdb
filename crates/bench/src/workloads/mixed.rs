//! mixed: reader threads doing short reads (a read transaction, one random get, end) while one
//! writer commits 100-entry transactions as fast as it can, durably (every library's default).
//!
//! Figures per library: the readers' per-request latency (median and 99th percentile over all
//! requests of all readers) and the writer's commits per second over the same time. Values are
//! [`value32v`]: each names its key and version with a check of both, and every read verifies
//! the value it got (a torn, wrong or missing value fails the run), whatever version the writer
//! has reached.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvOpenOptions, PutFlags};
use redb::{ReadableDatabase, TableDefinition};

use crate::data::{check_value32v, value32v};
use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload};
use crate::tables::{Kv, KvSchema};
use crate::util::{XorShift, key_sequence};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Sizes of the mixed workload.
#[derive(Clone, Copy, Debug)]
pub struct MixedSizes {
    /// Entries in the table.
    pub entries: u64,
    /// How long the readers and the writer run, per repetition.
    pub duration: Duration,
    /// Repetitions (the median of each figure is taken).
    pub reps: usize,
}

/// Reader threads.
pub const READERS: usize = 4;
/// Puts per write transaction.
pub const WRITE_BATCH: usize = 100;

const REDB_KV: TableDefinition<u64, &[u8]> = TableDefinition::new("kv");

/// One run's figures.
#[derive(Clone, Copy, Debug)]
struct Figures {
    p50: f64,
    p99: f64,
    commits_per_sec: f64,
}

/// Runs `readers` on this thread while a writer thread calls `commit(version)` with versions
/// 1, 2, … until `readers` returns (with `pace`, at most one commit per `pace`). Returns what
/// `readers` returned, the commits made and the writer's running time.
pub fn with_writer<R>(
    pace: Option<Duration>,
    mut commit: impl FnMut(u64) + Send,
    readers: impl FnOnce() -> R,
) -> (R, u64, Duration) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let started = Instant::now();
            let mut version = 0u64;
            while !stop.load(Ordering::Relaxed) {
                version += 1;
                commit(version);
                if let Some(p) = pace {
                    let next = started + p * version as u32;
                    if let Some(wait) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                }
            }
            (version, started.elapsed())
        });
        let out = readers();
        stop.store(true, Ordering::Relaxed);
        let (commits, elapsed) = writer.join().expect("writer");
        (out, commits, elapsed)
    })
}

/// The 100 (key, value) pairs of commit `version`: random keys, values naming the version.
pub fn write_batch(entries: u64, version: u64) -> impl Iterator<Item = (u64, [u8; 32])> {
    let mut rng = XorShift::new(version.wrapping_mul(0x9E37_79B9) ^ 0x5EED_0007);
    (0..WRITE_BATCH).map(move |_| {
        let k = rng.below(entries);
        (k, value32v(k, version))
    })
}

/// Runs every library.
pub fn run(sizes: MixedSizes) -> Workload {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let title = format!(
        "{READERS} reader threads doing short reads (read txn + one get + end) for {:.1} s while 1 writer commits {WRITE_BATCH}-entry txns (durable), {} entries, {cores} cores",
        sizes.duration.as_secs_f64(),
        sizes.entries
    );
    let mut w = Workload::new("mixed", title, Unit::Ns);
    let keys = key_sequence(0x5EED_0008, sizes.entries, 100_000 * READERS);
    type Lib = fn(&MixedSizes, &[u64]) -> Figures;
    let libs: [(&str, Lib); 4] = [
        ("tabula", tabula),
        ("raw", raw_park),
        ("heed", heed),
        ("redb", redb),
    ];
    for (lib, f) in libs {
        let wanted = ["read_p50", "read_p99", "commits"]
            .iter()
            .any(|r| crate::report::variant_wanted(&format!("{lib}_{r}")));
        if !wanted {
            continue;
        }
        let runs: Vec<Figures> = (0..sizes.reps.max(1)).map(|_| f(&sizes, &keys)).collect();
        let median = |pick: fn(&Figures) -> f64| {
            let mut v: Vec<f64> = runs.iter().map(pick).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        w.add_in(
            &format!("{lib}_read_p50"),
            Unit::Ns,
            || median(|f| f.p50),
            Some("raw_read_p50"),
        );
        w.add_in(
            &format!("{lib}_read_p99"),
            Unit::Ns,
            || median(|f| f.p99),
            Some("raw_read_p99"),
        );
        w.add_in(
            &format!("{lib}_commits"),
            Unit::PerSec,
            || median(|f| f.commits_per_sec),
            Some("raw_commits"),
        );
    }
    w
}

/// Splits `keys` between the reader threads, each going round its share running `request`
/// for each key (it returns whether the value read is right) until `duration` has passed, and
/// collects every request's latency. Every read must be right.
fn read_threads(
    keys: &[u64],
    duration: Duration,
    request: impl Fn(u64) -> bool + Sync,
) -> Vec<u32> {
    read_threads_with(keys, duration, || (), |(), k| request(k))
}

/// [`read_threads`] with per-thread state made by `make` (dropped when the thread ends).
fn read_threads_with<St>(
    keys: &[u64],
    duration: Duration,
    make: impl Fn() -> St + Sync,
    request: impl Fn(&mut St, u64) -> bool + Sync,
) -> Vec<u32> {
    let chunk = keys.len().div_ceil(READERS);
    let stop = AtomicBool::new(false);
    let per_thread: Vec<(usize, Vec<u32>)> = std::thread::scope(|s| {
        let handles: Vec<_> = keys
            .chunks(chunk)
            .map(|part| {
                let (request, make, stop) = (&request, &make, &stop);
                s.spawn(move || {
                    let mut state = make();
                    let mut lat = Vec::with_capacity(1 << 20);
                    let mut good = 0;
                    'run: loop {
                        for &k in part {
                            if stop.load(Ordering::Relaxed) {
                                break 'run;
                            }
                            let t = Instant::now();
                            good += usize::from(request(&mut state, k));
                            lat.push(t.elapsed().as_nanos().min(u128::from(u32::MAX)) as u32);
                        }
                    }
                    (good, lat)
                })
            })
            .collect();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().expect("reader"))
            .collect()
    });
    let good: usize = per_thread.iter().map(|(g, _)| g).sum();
    let reads: usize = per_thread.iter().map(|(_, l)| l.len()).sum();
    assert!(reads > 0, "the readers read");
    assert_eq!(
        good, reads,
        "every read returns a value of its key (checked word by word)"
    );
    per_thread.into_iter().flat_map(|(_, l)| l).collect()
}

fn figures(mut lat: Vec<u32>, commits: u64, elapsed: Duration) -> Figures {
    lat.sort_unstable();
    let at = |q: f64| f64::from(lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)]);
    Figures {
        p50: at(0.50),
        p99: at(0.99),
        commits_per_sec: commits as f64 / elapsed.as_secs_f64(),
    }
}

fn tabula(sizes: &MixedSizes, keys: &[u64]) -> Figures {
    let dir = scratch_dir("mixed-tabula");
    let db = tabula::open::<KvSchema>(dir.path(), tabula_options()).expect("open");
    load_tabula(&db, sizes.entries);
    let mut buf = Vec::with_capacity(32);
    let (lat, commits, elapsed) = with_writer(
        None,
        |version| {
            let mut tx = db.write().expect("write");
            for (k, v) in write_batch(sizes.entries, version) {
                buf.clear();
                buf.extend_from_slice(&v);
                tx.put::<Kv>(&k, &buf).expect("put");
            }
            tx.commit().expect("commit");
        },
        || {
            read_threads(keys, sizes.duration, |k| {
                let tx = db.read().expect("read");
                let v = tx.get_bytes::<Kv>(&k).expect("get");
                v.is_some_and(|v| check_value32v(k, v))
            })
        },
    );
    figures(lat, commits, elapsed)
}

/// Loads `0..entries` with version-0 [`value32v`]s.
pub fn load_tabula(db: &tabula::Db<KvSchema>, entries: u64) {
    let mut tx = db.write().expect("write");
    {
        let mut ap = tx.appender::<Kv>().expect("appender");
        let mut buf = Vec::with_capacity(32);
        for k in 0..entries {
            buf.clear();
            buf.extend_from_slice(&value32v(k, 0));
            ap.append(&k, &buf).expect("append");
        }
    }
    tx.commit().expect("commit");
}

/// Raw libmdbx, readers parking their txn on the latest snapshot between requests (what
/// Tabula's pool does), in a `NOSTICKYTHREADS` env; the table with libmdbx's own comparator, as Tabula's.
fn raw_park(sizes: &MixedSizes, keys: &[u64]) -> Figures {
    let dir = scratch_dir("mixed-raw");
    let flags = EnvFlags {
        no_sticky_threads: true,
        ..EnvFlags::DEFAULT
    };
    let (env, dbi) = load_raw(dir.path(), sizes.entries, flags);
    let (lat, commits, elapsed) = with_writer(
        None,
        |version| {
            let mut txn = env.begin(true);
            for (k, v) in write_batch(sizes.entries, version) {
                txn.put(dbi, &k.to_be_bytes(), &v, 0);
            }
            txn.commit();
        },
        || {
            read_threads_with(
                keys,
                sizes.duration,
                || {
                    let mut t = env.begin(false);
                    t.park_latest();
                    Parked(Some(t))
                },
                |p, k| {
                    let txn = p.0.as_mut().expect("parked txn");
                    txn.unpark_latest();
                    let ok = txn
                        .get(dbi, &k.to_be_bytes())
                        .is_some_and(|v| check_value32v(k, v));
                    txn.park_latest();
                    ok
                },
            )
        },
    );
    figures(lat, commits, elapsed)
}

/// A reader thread's raw txn, parked between requests and ended when the thread is done.
pub struct Parked(pub Option<raw::Txn>);

impl Drop for Parked {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            t.abort();
        }
    }
}

/// A raw env holding `0..entries` with version-0 [`value32v`]s in table `kv` (libmdbx's own
/// comparator, as Tabula's).
pub fn load_raw(path: &std::path::Path, entries: u64, flags: EnvFlags) -> (raw::Env, raw::Dbi) {
    let env = raw::Env::open(path, 1, flags);
    let mut txn = env.begin(true);
    let dbi = txn.open_table(c"kv", raw::NO_FLAGS, true);
    for k in 0..entries {
        txn.put(dbi, &k.to_be_bytes(), &value32v(k, 0), raw::APPEND);
    }
    txn.commit();
    (env, dbi)
}

/// A heed env holding `0..entries` with version-0 [`value32v`]s.
pub fn load_heed(
    path: &std::path::Path,
    entries: u64,
) -> (heed::Env, heed::Database<'static, Bytes, Bytes>) {
    // SAFETY: a fresh directory that nothing else opens while this env lives.
    let env = unsafe {
        EnvOpenOptions::new()
            .map_size(HEED_MAP_SIZE)
            .max_dbs(1)
            .open(path)
    }
    .expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("kv"))?;
            for k in 0..entries {
                db.put_with_flags(wtxn, PutFlags::APPEND, &k.to_be_bytes(), &value32v(k, 0))?;
            }
            Ok(CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("heed create")
        .unwrap_commit();
    (env, db)
}

fn heed(sizes: &MixedSizes, keys: &[u64]) -> Figures {
    let dir = scratch_dir("mixed-heed");
    let (env, db) = load_heed(dir.path(), sizes.entries);
    let (lat, commits, elapsed) = with_writer(
        None,
        |version| {
            let mut wtxn = env.write_txn().expect("heed write");
            for (k, v) in write_batch(sizes.entries, version) {
                db.put(&mut wtxn, &k.to_be_bytes(), &v).expect("heed put");
            }
            wtxn.commit().expect("heed commit");
        },
        || {
            read_threads(keys, sizes.duration, |k| {
                let rtxn = env.read_txn().expect("heed read");
                let v = db.get(&rtxn, &k.to_be_bytes()).expect("heed get");
                v.is_some_and(|v| check_value32v(k, v))
            })
        },
    );
    figures(lat, commits, elapsed)
}

fn redb(sizes: &MixedSizes, keys: &[u64]) -> Figures {
    let dir = scratch_dir("mixed-redb");
    let db = redb::Database::create(redb_file(dir.path())).expect("redb create");
    let wtx = db.begin_write().expect("redb write");
    {
        let mut t = wtx.open_table(REDB_KV).expect("redb table");
        for k in 0..sizes.entries {
            t.insert(k, &value32v(k, 0)[..]).expect("redb insert");
        }
    }
    wtx.commit().expect("redb commit");
    let (lat, commits, elapsed) = with_writer(
        None,
        |version| {
            let wtx = db.begin_write().expect("redb write");
            {
                let mut t = wtx.open_table(REDB_KV).expect("redb table");
                for (k, v) in write_batch(sizes.entries, version) {
                    t.insert(k, &v[..]).expect("redb insert");
                }
            }
            wtx.commit().expect("redb commit");
        },
        || {
            read_threads(keys, sizes.duration, |k| {
                let rtx = db.begin_read().expect("redb read");
                let t = rtx.open_table(REDB_KV).expect("redb table");
                let g = t.get(k).expect("redb get");
                g.is_some_and(|g| check_value32v(k, g.value()))
            })
        },
    );
    figures(lat, commits, elapsed)
}
