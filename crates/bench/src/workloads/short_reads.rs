//! Seed 003: many short requests, each its own read transaction with one random get, from one
//! and eight threads (on however many cores the machine has), against one request-serving
//! actor thread.
//!
//! Values are [`value32v`](crate::data::value32v)s and every request checks the one it read, word by word. The
//! `_writer` rows run the same eight threads while a writer commits a 100-entry transaction
//! every millisecond (a parked snapshot is only free while nothing commits).

use std::hint::black_box;
use std::sync::mpsc;
use std::time::Duration;

use heed::types::Bytes;
use tabula::Db;

use crate::data::check_value32v;
use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Kv, KvSchema};
use crate::util::{median_of, mops, time};

use super::mixed::{load_heed, load_raw, load_tabula, with_writer, write_batch};

use super::{scratch_dir, tabula_options};

/// Sizes of the short-reads workload.
#[derive(Clone, Copy, Debug)]
pub struct ShortSizes {
    /// Entries in the table.
    pub entries: u64,
    /// Requests in all (split evenly between the threads).
    pub requests: usize,
    /// Repetitions (median taken).
    pub reps: usize,
}

/// Client threads of the multi-threaded variants.
pub const THREADS: usize = 8;

/// The `_writer` rows' writer commits at most once per this.
pub const WRITER_PACE: std::time::Duration = std::time::Duration::from_millis(1);

/// Runs every variant; `keys` holds one key per request.
pub fn run(sizes: ShortSizes, keys: &[u64]) -> Workload {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let title = format!(
        "{} requests (read txn + one get + end), {} entries, 1 and {THREADS} threads on {cores} cores",
        keys.len(),
        sizes.entries
    );
    let mut w = Workload::new("short_reads", title, Unit::Mops);
    let n = keys.len();
    let reps = sizes.reps;
    let base = Some("raw_park_8");
    {
        let dir = scratch_dir("short-tabula");
        let db = tabula_db(dir.path(), sizes.entries);
        w.add(
            "tabula_1",
            || mops(median_of(reps, || tabula(&db, keys, 1)), n),
            base,
        );
        w.add(
            "tabula_8",
            || mops(median_of(reps, || tabula(&db, keys, THREADS)), n),
            base,
        );
        let mut buf = Vec::with_capacity(32);
        let commit = |version| {
            let mut tx = db.write().expect("write");
            for (k, v) in write_batch(sizes.entries, version) {
                buf.clear();
                buf.extend_from_slice(&v);
                tx.put::<Kv>(&k, &buf).expect("put");
            }
            tx.commit().expect("commit");
        };
        writer_row(&mut w, "tabula_8_writer", reps, n, commit, || {
            tabula(&db, keys, THREADS)
        });
    }
    {
        let dir = scratch_dir("short-tabula-reset");
        let db = tabula_db_with(
            dir.path(),
            sizes.entries,
            tabula_options().reuse_read_snapshots(false),
        );
        w.extra(
            "tabula_reset_8",
            || mops(median_of(reps, || tabula(&db, keys, THREADS)), n),
            base,
        );
    }
    {
        let dir = scratch_dir("short-raw");
        let (env, dbi) = raw_env(dir.path(), sizes.entries);
        w.add(
            "raw_fresh_8",
            || mops(median_of(reps, || raw_fresh(&env, dbi, keys)), n),
            base,
        );
        w.add(
            "raw_reuse_8",
            || mops(median_of(reps, || raw_reuse(&env, dbi, keys)), n),
            base,
        );
        w.extra(
            "raw_reuse_1",
            || mops(median_of(reps, || raw_reuse_threads(&env, dbi, keys, 1)), n),
            base,
        );
        w.add(
            "raw_park_8",
            || mops(median_of(reps, || raw_park(&env, dbi, keys)), n),
            base,
        );
        w.extra(
            "raw_park_1",
            || mops(median_of(reps, || raw_park_threads(&env, dbi, keys, 1)), n),
            base,
        );
    }
    {
        let dir = scratch_dir("short-raw-writer");
        let flags = EnvFlags {
            no_sticky_threads: true,
            ..EnvFlags::DEFAULT
        };
        let (env, dbi) = load_raw(dir.path(), sizes.entries, flags);
        let commit = |version| {
            let mut txn = env.begin(true);
            for (k, v) in write_batch(sizes.entries, version) {
                txn.put(dbi, &k.to_be_bytes(), &v, 0);
            }
            txn.commit();
        };
        writer_row(&mut w, "raw_park_8_writer", reps, n, commit, || {
            raw_park(&env, dbi, keys)
        });
        let commit = |version| {
            let mut txn = env.begin(true);
            for (k, v) in write_batch(sizes.entries, version) {
                txn.put(dbi, &k.to_be_bytes(), &v, 0);
            }
            txn.commit();
        };
        writer_row(&mut w, "raw_reuse_8_writer", reps, n, commit, || {
            raw_reuse(&env, dbi, keys)
        });
    }
    {
        let dir = scratch_dir("short-heed-writer");
        let (env, db) = load_heed(dir.path(), sizes.entries);
        let commit = |version| {
            let mut wtxn = env.write_txn().expect("heed write");
            for (k, v) in write_batch(sizes.entries, version) {
                db.put(&mut wtxn, &k.to_be_bytes(), &v).expect("heed put");
            }
            wtxn.commit().expect("heed commit");
        };
        writer_row(&mut w, "heed_8_writer", reps, n, commit, || {
            heed_reads(&env, db, keys)
        });
    }
    w.add("heed_8", || mops(heed(sizes, keys), n), base);
    {
        let dir = scratch_dir("short-actor");
        let db = tabula_db(dir.path(), sizes.entries);
        w.add(
            "actor_8",
            || mops(median_of(reps, || actor(&db, keys)), n),
            base,
        );
    }
    w
}

/// Adds row `name` (Mops/s of the eight reader threads) and `{name}_commits` (the writer's
/// commits per second, investigation): `reads` timed while a writer thread runs `commit`
/// once per [`WRITER_PACE`] at most. Nothing runs when both rows are filtered out.
fn writer_row(
    w: &mut Workload,
    name: &str,
    reps: usize,
    requests: usize,
    commit: impl FnMut(u64) + Send,
    mut reads: impl FnMut() -> Duration,
) {
    let rate_row = format!("{name}_commits");
    if !variant_wanted(name) && !variant_wanted(&rate_row) {
        return;
    }
    let (t, commits, elapsed) =
        with_writer(Some(WRITER_PACE), commit, || median_of(reps, &mut reads));
    w.add(name, || mops(t, requests), Some("raw_park_8_writer"));
    w.extra_in(
        &rate_row,
        Unit::PerSec,
        || commits as f64 / elapsed.as_secs_f64(),
        None,
    );
}

fn tabula_db(path: &std::path::Path, entries: u64) -> Db<KvSchema> {
    tabula_db_with(path, entries, tabula_options())
}

fn tabula_db_with(path: &std::path::Path, entries: u64, options: tabula::Options) -> Db<KvSchema> {
    let db = tabula::open::<KvSchema>(path, options).expect("open");
    load_tabula(&db, entries);
    db
}

/// Splits `keys` into one chunk per thread, runs `body` on each in a scoped thread, and
/// returns the wall time until all have finished; `body` returns how many of its reads were
/// right ([`check_value32v`]), and every one must be.
fn threads(keys: &[u64], n: usize, body: impl Fn(&[u64]) -> usize + Sync) -> Duration {
    let chunk = keys.len().div_ceil(n);
    time(|| {
        let total: usize = std::thread::scope(|s| {
            let handles: Vec<_> = keys
                .chunks(chunk)
                .map(|part| s.spawn(|| body(part)))
                .collect();
            handles.into_iter().map(|h| h.join().expect("thread")).sum()
        });
        assert_eq!(
            black_box(total),
            keys.len(),
            "every read returns its key's value"
        );
    })
}

/// 1 when `v` is a right value of key `k`.
fn ok(k: u64, v: Option<&[u8]>) -> usize {
    usize::from(v.is_some_and(|v| check_value32v(k, v)))
}

fn tabula(db: &Db<KvSchema>, keys: &[u64], n: usize) -> Duration {
    threads(keys, n, |part| {
        let mut sum = 0;
        for k in part {
            let tx = db.read().expect("read");
            sum += ok(*k, tx.get_bytes::<Kv>(k).expect("get"));
        }
        sum
    })
}

fn raw_env(path: &std::path::Path, entries: u64) -> (raw::Env, raw::Dbi) {
    let flags = EnvFlags {
        no_sticky_threads: true,
        ..EnvFlags::DEFAULT
    };
    load_raw(path, entries, flags)
}

fn raw_fresh(env: &raw::Env, dbi: raw::Dbi, keys: &[u64]) -> Duration {
    threads(keys, THREADS, |part| {
        let mut sum = 0;
        for k in part {
            let txn = env.begin(false);
            sum += ok(*k, txn.get(dbi, &k.to_be_bytes()));
            txn.abort();
        }
        sum
    })
}

fn raw_reuse(env: &raw::Env, dbi: raw::Dbi, keys: &[u64]) -> Duration {
    raw_reuse_threads(env, dbi, keys, THREADS)
}

fn raw_reuse_threads(env: &raw::Env, dbi: raw::Dbi, keys: &[u64], n: usize) -> Duration {
    threads(keys, n, |part| {
        let mut txn = env.begin(false);
        txn.reset();
        let mut sum = 0;
        for k in part {
            txn.renew();
            sum += ok(*k, txn.get(dbi, &k.to_be_bytes()));
            txn.reset();
        }
        txn.abort();
        sum
    })
}

/// `raw_reuse_8` with Tabula's default pooling done by hand: each thread's txn parked on the
/// latest snapshot between requests and resumed with unpark + refresh instead of reset/renew.
fn raw_park(env: &raw::Env, dbi: raw::Dbi, keys: &[u64]) -> Duration {
    raw_park_threads(env, dbi, keys, THREADS)
}

fn raw_park_threads(env: &raw::Env, dbi: raw::Dbi, keys: &[u64], n: usize) -> Duration {
    threads(keys, n, |part| {
        let mut txn = env.begin(false);
        txn.park_latest();
        let mut sum = 0;
        for k in part {
            txn.unpark_latest();
            sum += ok(*k, txn.get(dbi, &k.to_be_bytes()));
            txn.park_latest();
        }
        txn.abort();
        sum
    })
}

fn heed(sizes: ShortSizes, keys: &[u64]) -> Duration {
    let dir = scratch_dir("short-heed");
    let (env, db) = load_heed(dir.path(), sizes.entries);
    median_of(sizes.reps, || heed_reads(&env, db, keys))
}

fn heed_reads(env: &heed::Env, db: heed::Database<'_, Bytes, Bytes>, keys: &[u64]) -> Duration {
    threads(keys, THREADS, |part| {
        let mut sum = 0;
        for k in part {
            let rtxn = env.read_txn().expect("heed read");
            sum += ok(*k, db.get(&rtxn, &k.to_be_bytes()).expect("heed get"));
        }
        sum
    })
}

/// A request to the actor: which client asks, and for which key.
struct Request {
    client: usize,
    key: u64,
}

/// One thread owns the reads and serves requests in turn (each with its own read txn); every
/// client sends a request and waits for the answer on its own reply channel.
fn actor(db: &Db<KvSchema>, keys: &[u64]) -> Duration {
    let chunk = keys.len().div_ceil(THREADS);
    time(|| {
        let total: usize = std::thread::scope(|s| {
            let (to_actor, requests) = mpsc::channel::<Request>();
            let mut replies = Vec::new();
            let mut clients = Vec::new();
            for (client, part) in keys.chunks(chunk).enumerate() {
                let (reply_to, answers) = mpsc::channel::<usize>();
                replies.push(reply_to);
                let to_actor = to_actor.clone();
                clients.push(s.spawn(move || {
                    let mut sum = 0;
                    for &key in part {
                        to_actor.send(Request { client, key }).expect("send");
                        sum += answers.recv().expect("reply");
                    }
                    sum
                }));
            }
            drop(to_actor);
            s.spawn(move || {
                for req in requests {
                    let tx = db.read().expect("read");
                    let good = ok(req.key, tx.get_bytes::<Kv>(&req.key).expect("get"));
                    drop(tx);
                    replies[req.client].send(good).expect("reply");
                }
            });
            clients.into_iter().map(|h| h.join().expect("client")).sum()
        });
        assert_eq!(
            black_box(total),
            keys.len(),
            "every read returns its key's value"
        );
    })
}
