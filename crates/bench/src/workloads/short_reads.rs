//! Seed 003: many short requests, each its own read transaction with one random get, from one
//! and eight threads (on however many cores the machine has), against one request-serving
//! actor thread.

use std::hint::black_box;
use std::sync::mpsc;
use std::time::Duration;

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvOpenOptions, PutFlags};
use tabula::Db;

use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload};
use crate::tables::{Kv, KvSchema};
use crate::util::{median_of, mops, time, value32};

use super::{HEED_MAP_SIZE, scratch_dir, tabula_options};

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
    let base = Some("raw_reuse_8");
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
        let env = raw_env(dir.path(), sizes.entries);
        w.add(
            "raw_fresh_8",
            || mops(median_of(reps, || raw_fresh(&env, keys)), n),
            base,
        );
        w.add(
            "raw_reuse_8",
            || mops(median_of(reps, || raw_reuse(&env, keys)), n),
            base,
        );
        w.extra(
            "raw_reuse_1",
            || mops(median_of(reps, || raw_reuse_threads(&env, keys, 1)), n),
            base,
        );
        w.extra(
            "raw_park_8",
            || mops(median_of(reps, || raw_park(&env, keys)), n),
            base,
        );
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

fn tabula_db(path: &std::path::Path, entries: u64) -> Db<KvSchema> {
    tabula_db_with(path, entries, tabula_options())
}

fn tabula_db_with(path: &std::path::Path, entries: u64, options: tabula::Options) -> Db<KvSchema> {
    let db = tabula::open::<KvSchema>(path, options).expect("open");
    let mut tx = db.write().expect("write");
    {
        let mut ap = tx.appender::<Kv>().expect("appender");
        let mut value = Vec::with_capacity(32);
        for i in 0..entries {
            value.clear();
            value.extend_from_slice(&value32(i));
            ap.append(&i, &value).expect("append");
        }
    }
    tx.commit().expect("commit");
    db
}

/// Splits `keys` into one chunk per thread, runs `body` on each in a scoped thread, and
/// returns the wall time until all have finished; the sum of value lengths is checked.
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
        assert_eq!(black_box(total), keys.len() * 32, "every key is present");
    })
}

fn tabula(db: &Db<KvSchema>, keys: &[u64], n: usize) -> Duration {
    threads(keys, n, |part| {
        let mut sum = 0;
        for k in part {
            let tx = db.read().expect("read");
            sum += tx.get_bytes::<Kv>(k).expect("get").map_or(0, <[u8]>::len);
        }
        sum
    })
}

fn raw_env(path: &std::path::Path, entries: u64) -> raw::Env {
    let flags = EnvFlags {
        no_sticky_threads: true,
        ..EnvFlags::DEFAULT
    };
    let env = raw::Env::open(path, 1, flags);
    let mut txn = env.begin(true);
    let dbi = txn.open_table(c"kv", raw::NO_FLAGS, true);
    for i in 0..entries {
        txn.put(dbi, &i.to_be_bytes(), &value32(i), raw::APPEND);
    }
    txn.commit();
    env
}

/// The table's handle: the first named table opened in the env is handle 2.
fn raw_dbi(env: &raw::Env) -> raw::Dbi {
    let txn = env.begin(false);
    let dbi = txn.open_table(c"kv", raw::NO_FLAGS, false);
    txn.abort();
    dbi
}

fn raw_fresh(env: &raw::Env, keys: &[u64]) -> Duration {
    let dbi = raw_dbi(env);
    threads(keys, THREADS, |part| {
        let mut sum = 0;
        for k in part {
            let txn = env.begin(false);
            sum += txn.get(dbi, &k.to_be_bytes()).map_or(0, <[u8]>::len);
            txn.abort();
        }
        sum
    })
}

fn raw_reuse(env: &raw::Env, keys: &[u64]) -> Duration {
    raw_reuse_threads(env, keys, THREADS)
}

fn raw_reuse_threads(env: &raw::Env, keys: &[u64], n: usize) -> Duration {
    let dbi = raw_dbi(env);
    threads(keys, n, |part| {
        let mut txn = env.begin(false);
        txn.reset();
        let mut sum = 0;
        for k in part {
            txn.renew();
            sum += txn.get(dbi, &k.to_be_bytes()).map_or(0, <[u8]>::len);
            txn.reset();
        }
        txn.abort();
        sum
    })
}

/// `raw_reuse_8` with Tabula's default pooling done by hand: each thread's txn parked on the
/// latest snapshot between requests and resumed with unpark + refresh instead of reset/renew.
fn raw_park(env: &raw::Env, keys: &[u64]) -> Duration {
    let dbi = raw_dbi(env);
    threads(keys, THREADS, |part| {
        let mut txn = env.begin(false);
        txn.park_latest();
        let mut sum = 0;
        for k in part {
            txn.unpark_latest();
            sum += txn.get(dbi, &k.to_be_bytes()).map_or(0, <[u8]>::len);
            txn.park_latest();
        }
        txn.abort();
        sum
    })
}

fn heed(sizes: ShortSizes, keys: &[u64]) -> Duration {
    let dir = scratch_dir("short-heed");
    // SAFETY: a fresh directory that nothing else opens while this env lives.
    let env = unsafe {
        EnvOpenOptions::new()
            .map_size(HEED_MAP_SIZE)
            .max_dbs(1)
            .open(dir.path())
    }
    .expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("kv"))?;
            for i in 0..sizes.entries {
                db.put_with_flags(wtxn, PutFlags::APPEND, &i.to_be_bytes(), &value32(i))?;
            }
            Ok(CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("heed create")
        .unwrap_commit();
    median_of(sizes.reps, || {
        threads(keys, THREADS, |part| {
            let mut sum = 0;
            for k in part {
                let rtxn = env.read_txn().expect("heed read");
                sum += db
                    .get(&rtxn, &k.to_be_bytes())
                    .expect("heed get")
                    .map_or(0, <[u8]>::len);
            }
            sum
        })
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
                    let len = tx
                        .get_bytes::<Kv>(&req.key)
                        .expect("get")
                        .map_or(0, <[u8]>::len);
                    drop(tx);
                    replies[req.client].send(len).expect("reply");
                }
            });
            clients.into_iter().map(|h| h.join().expect("client")).sum()
        });
        assert_eq!(black_box(total), keys.len() * 32, "every key is present");
    })
}
