//! async_reads: a tokio service's reads. All requests are spawned at once on a multi-thread
//! runtime ([`WORKERS`] workers); each is one short read (a read transaction, one get of a
//! [`value32v`], checked word by word, end), while a writer thread
//! commits a 100-entry transaction every millisecond ([`WRITER_PACE`]).
//!
//! Per variant, three rows: requests per second (from the first spawn to the last
//! completion, median of the repetitions) and the 50th and 99th percentiles of the request
//! latency, from its spawn to its completion (what a client of the service waits, the
//! runtime's queueing included), over every request of every repetition. Variants:
//!
//! - `tabula_task`: `Db::read` directly in the task (a short read costs microseconds);
//! - `tabula_owned_task`: `Db::read_owned` in the task, the owned-transaction row (same pool as
//!   `Db::read`, plus an `Arc` count and an owned copy of the value);
//! - `tabula_blocking`: `Db::read` inside `spawn_blocking` (what a long read would need);
//! - `heed_task`, `heed_blocking`, `redb_task`, `redb_blocking`: the same reads through heed
//!   (LMDB) and redb.
//!
//! Target: `tabula_task_p99` at most every peer's `_task_p99`.
//!
//! Sizes: 1,000,000 entries and 5,000 requests × 5 repetitions (`--quick`: 100,000 entries,
//! 5,000 requests × 3).

use std::sync::Arc;
use std::time::{Duration, Instant};

use redb::{ReadableDatabase, TableDefinition};
use tokio::runtime::Runtime;

use crate::data::{check_value32v, value32v};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Kv, KvSchema};

use super::mixed::{load_tabula, with_writer, write_batch};
use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Sizes of the async-reads workload.
#[derive(Clone, Copy, Debug)]
pub struct AsyncSizes {
    /// Entries in the table.
    pub entries: u64,
    /// Requests spawned at once per repetition (one per key given to [`run`]).
    pub requests: usize,
    /// Repetitions.
    pub reps: usize,
}

/// The runtime's worker threads.
pub const WORKERS: usize = 4;

/// The writer commits at most once per this.
pub const WRITER_PACE: Duration = Duration::from_millis(1);

const REDB_KV: TableDefinition<u64, &[u8]> = TableDefinition::new("kv");

/// One variant's figures.
#[derive(Clone, Copy, Debug)]
struct Figures {
    per_sec: f64,
    p50_us: f64,
    p99_us: f64,
}

/// Runs every variant; `keys` holds one key per request.
pub fn run(sizes: AsyncSizes, keys: &[u64]) -> Workload {
    let title = format!(
        "{} concurrent requests (read txn + one get + end) on a {WORKERS}-worker tokio runtime \
         while a writer commits 100 entries every {} ms, {} entries",
        keys.len(),
        WRITER_PACE.as_millis(),
        sizes.entries
    );
    let mut w = Workload::new("async_reads", title, Unit::PerSec);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let keys: Arc<[u64]> = keys.into();
    {
        let dir = scratch_dir("async-tabula");
        let db = Arc::new(tabula::open::<KvSchema>(dir.path(), tabula_options()).expect("open"));
        load_tabula(&db, sizes.entries);
        let mut buf = Vec::with_capacity(32);
        let mut commit = |version| {
            let mut tx = db.write().expect("write");
            for (k, v) in write_batch(sizes.entries, version) {
                buf.clear();
                buf.extend_from_slice(&v);
                tx.put::<Kv>(&k, &buf).expect("put");
            }
            tx.commit().expect("commit");
        };
        let read = {
            let db = Arc::clone(&db);
            move |k: u64| {
                let tx = db.read().expect("read");
                let v = tx.get_bytes::<Kv>(&k).expect("get");
                v.is_some_and(|v| check_value32v(k, v))
            }
        };
        let owned = {
            let db = Arc::clone(&db);
            move |k: u64| {
                let tx = db.read_owned().expect("read_owned");
                let v = tx.get::<Kv>(&k).expect("get");
                v.is_some_and(|v| check_value32v(k, &v))
            }
        };
        variant(
            &mut w,
            &runtime,
            "tabula_task",
            sizes,
            &keys,
            &mut commit,
            read.clone(),
            false,
        );
        variant(
            &mut w,
            &runtime,
            "tabula_owned_task",
            sizes,
            &keys,
            &mut commit,
            owned,
            false,
        );
        variant(
            &mut w,
            &runtime,
            "tabula_blocking",
            sizes,
            &keys,
            &mut commit,
            read,
            true,
        );
    }
    {
        let dir = scratch_dir("async-heed");
        let (env, db) = load_heed(dir.path(), sizes.entries);
        // LMDB ties a read transaction's reader slot to its thread until the thread ends, and
        // `spawn_blocking` runs up to 512 threads: with heed's default 126 slots the blocking
        // variant fails with `MDB_READERS_FULL`.
        let mut commit = |version| {
            let mut wtxn = env.write_txn().expect("heed write");
            for (k, v) in write_batch(sizes.entries, version) {
                db.put(&mut wtxn, &k.to_be_bytes(), &v).expect("heed put");
            }
            wtxn.commit().expect("heed commit");
        };
        let read = {
            let env = env.clone();
            move |k: u64| {
                let rtxn = env.read_txn().expect("heed read");
                let v = db.get(&rtxn, &k.to_be_bytes()).expect("heed get");
                v.is_some_and(|v| check_value32v(k, v))
            }
        };
        variant(
            &mut w,
            &runtime,
            "heed_task",
            sizes,
            &keys,
            &mut commit,
            read.clone(),
            false,
        );
        variant(
            &mut w,
            &runtime,
            "heed_blocking",
            sizes,
            &keys,
            &mut commit,
            read,
            true,
        );
    }
    {
        let dir = scratch_dir("async-redb");
        let db = Arc::new(redb::Database::create(redb_file(dir.path())).expect("redb create"));
        let wtx = db.begin_write().expect("redb write");
        {
            let mut t = wtx.open_table(REDB_KV).expect("redb table");
            for k in 0..sizes.entries {
                t.insert(k, &value32v(k, 0)[..]).expect("redb insert");
            }
        }
        wtx.commit().expect("redb commit");
        let mut commit = |version| {
            let wtx = db.begin_write().expect("redb write");
            {
                let mut t = wtx.open_table(REDB_KV).expect("redb table");
                for (k, v) in write_batch(sizes.entries, version) {
                    t.insert(k, &v[..]).expect("redb insert");
                }
            }
            wtx.commit().expect("redb commit");
        };
        let read = {
            let db = Arc::clone(&db);
            move |k: u64| {
                let rtx = db.begin_read().expect("redb read");
                let t = rtx.open_table(REDB_KV).expect("redb table");
                let g = t.get(k).expect("redb get");
                g.is_some_and(|g| check_value32v(k, g.value()))
            }
        };
        variant(
            &mut w,
            &runtime,
            "redb_task",
            sizes,
            &keys,
            &mut commit,
            read.clone(),
            false,
        );
        variant(
            &mut w,
            &runtime,
            "redb_blocking",
            sizes,
            &keys,
            &mut commit,
            read,
            true,
        );
    }
    w
}

/// [`mixed::load_heed`](super::mixed::load_heed) with room for every blocking thread's reader
/// slot.
fn load_heed(
    path: &std::path::Path,
    entries: u64,
) -> (
    heed::Env,
    heed::Database<'static, heed::types::Bytes, heed::types::Bytes>,
) {
    use heed::{CommitOrAbort, EnvOpenOptions, PutFlags};
    // SAFETY: a fresh directory that nothing else opens while this env lives.
    let env = unsafe {
        EnvOpenOptions::new()
            .map_size(HEED_MAP_SIZE)
            .max_dbs(1)
            .max_readers(1024)
            .open(path)
    }
    .expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let db = opener
                .create_database::<heed::types::Bytes, heed::types::Bytes>(wtxn, Some("kv"))?;
            for k in 0..entries {
                db.put_with_flags(wtxn, PutFlags::APPEND, &k.to_be_bytes(), &value32v(k, 0))?;
            }
            Ok(CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("heed create")
        .unwrap_commit();
    (env, db)
}

/// Measures one variant while a writer runs `commit` and adds its three rows: `name`
/// (requests/s, compared with `heed_task`), `{name}_p50` and `{name}_p99` (µs, compared with
/// heed's). Nothing runs when all three are filtered out.
#[allow(clippy::too_many_arguments)]
fn variant(
    w: &mut Workload,
    runtime: &Runtime,
    name: &str,
    sizes: AsyncSizes,
    keys: &Arc<[u64]>,
    commit: &mut (impl FnMut(u64) + Send),
    read: impl Fn(u64) -> bool + Clone + Send + Sync + 'static,
    blocking: bool,
) {
    let (p50, p99) = (format!("{name}_p50"), format!("{name}_p99"));
    if ![name, p50.as_str(), p99.as_str()]
        .iter()
        .any(|n| variant_wanted(n))
    {
        return;
    }
    let (figures, _commits, _elapsed) = with_writer(Some(WRITER_PACE), commit, || {
        measure(runtime, keys, sizes.reps, read, blocking)
    });
    w.add(name, || figures.per_sec, Some("heed_task"));
    w.add_in(&p50, Unit::Us, || figures.p50_us, Some("heed_task_p50"));
    w.add_in(&p99, Unit::Us, || figures.p99_us, Some("heed_task_p99"));
}

/// `reps` times: spawns one task per key at once, each running `read` (in the task, or in
/// `spawn_blocking` when `blocking`), and waits for all. Every read must return its key's
/// value.
fn measure(
    runtime: &Runtime,
    keys: &Arc<[u64]>,
    reps: usize,
    read: impl Fn(u64) -> bool + Clone + Send + Sync + 'static,
    blocking: bool,
) -> Figures {
    let mut runs = Vec::with_capacity(reps);
    let mut latencies: Vec<u32> = Vec::with_capacity(keys.len() * reps);
    for _ in 0..reps.max(1) {
        let (elapsed, lat) = runtime.block_on(async {
            let started = Instant::now();
            let tasks: Vec<_> = keys
                .iter()
                .map(|&k| {
                    let read = read.clone();
                    let spawned = Instant::now();
                    tokio::spawn(async move {
                        let right = if blocking {
                            tokio::task::spawn_blocking(move || read(k))
                                .await
                                .expect("a blocking read")
                        } else {
                            read(k)
                        };
                        (right, spawned.elapsed())
                    })
                })
                .collect();
            let mut lat = Vec::with_capacity(tasks.len());
            for task in tasks {
                let (right, took) = task.await.expect("a request");
                assert!(
                    right,
                    "every read returns a value of its key (checked word by word)"
                );
                lat.push(took.as_nanos().min(u128::from(u32::MAX)) as u32);
            }
            (started.elapsed(), lat)
        });
        runs.push(elapsed);
        latencies.extend(lat);
    }
    runs.sort();
    latencies.sort_unstable();
    let at = |q: f64| {
        f64::from(latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)])
            / 1000.0
    };
    Figures {
        per_sec: keys.len() as f64 / runs[runs.len() / 2].as_secs_f64(),
        p50_us: at(0.50),
        p99_us: at(0.99),
    }
}
