//! Seed 000: random point gets in one read transaction, with other tables in the environment.
//!
//! Keys are `u64` stored big-endian (8 bytes, byte-wise comparison) in every libmdbx/LMDB
//! variant — Tabula's default `u64` encoding — and as redb's native `u64`. Values are 32 bytes;
//! every variant only borrows them (Tabula `get_bytes`, raw `mdbx_get`, heed `Bytes`, redb
//! `&[u8]`) and adds up their lengths, which is checked.

use std::hint::black_box;

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvOpenOptions, PutFlags};
use redb::{ReadableDatabase, TableDefinition};

use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload};
use crate::tables::{Kv, KvSchema, open_with_extra_tables};
use crate::util::{median_of, ns_per, table_cname, table_name, time, value32};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Sizes of one get workload.
#[derive(Clone, Copy, Debug)]
pub struct GetSizes {
    /// Entries in the table read.
    pub entries: u64,
    /// Other (empty) tables in the environment.
    pub other_tables: usize,
    /// Repetitions (median taken).
    pub reps: usize,
}

const REDB_KV: TableDefinition<u64, &[u8]> = TableDefinition::new("kv");

/// Runs every variant of `key` ("get_hot" or "get_cold") over `keys`.
pub fn run(key: &'static str, sizes: GetSizes, keys: &[u64]) -> Workload {
    let title = format!(
        "{} random gets, {} entries (8-byte keys, 32-byte values), {} other tables, one read txn",
        keys.len(),
        sizes.entries,
        sizes.other_tables
    );
    let mut w = Workload::new(key, title, Unit::Ns);
    let n = keys.len();
    w.add("tabula", || ns_per(tabula(sizes, keys), n), Some("raw"));
    w.add(
        "raw",
        || ns_per(raw_get(sizes, keys, false), n),
        Some("raw"),
    );
    if key == "get_hot" {
        w.add(
            "raw_reopen_dbi",
            || ns_per(raw_get(sizes, keys, true), n),
            Some("raw"),
        );
    }
    w.add("heed", || ns_per(heed(sizes, keys), n), Some("raw"));
    w.add("redb", || ns_per(redb(sizes, keys), n), Some("raw"));
    w
}

fn expect_all_found(sum: usize, keys: &[u64]) {
    assert_eq!(sum, keys.len() * 32, "every key is present");
}

fn tabula(sizes: GetSizes, keys: &[u64]) -> std::time::Duration {
    let dir = scratch_dir("get-tabula");
    let db =
        open_with_extra_tables::<KvSchema>(dir.path(), sizes.other_tables, true, tabula_options());
    let mut tx = db.write().expect("write");
    {
        let mut ap = tx.appender::<Kv>().expect("appender");
        let mut value = Vec::with_capacity(32);
        for i in 0..sizes.entries {
            value.clear();
            value.extend_from_slice(&value32(i));
            ap.append(&i, &value).expect("append");
        }
    }
    tx.commit().expect("commit");
    let tx = db.read().expect("read");
    median_of(sizes.reps, || {
        time(|| {
            let mut sum = 0;
            for k in keys {
                sum += tx.get_bytes::<Kv>(k).expect("get").map_or(0, <[u8]>::len);
            }
            expect_all_found(black_box(sum), keys);
        })
    })
}

fn raw_get(sizes: GetSizes, keys: &[u64], reopen_dbi: bool) -> std::time::Duration {
    let dir = scratch_dir("get-raw");
    let env = raw::Env::open(dir.path(), sizes.other_tables as u64 + 1, EnvFlags::DEFAULT);
    let name = c"kv";
    let mut txn = env.begin(true);
    for i in 0..sizes.other_tables {
        txn.open_table(&table_cname(i), raw::NO_FLAGS, true);
    }
    let dbi = txn.open_table(name, raw::NO_FLAGS, true);
    for i in 0..sizes.entries {
        txn.put(dbi, &i.to_be_bytes(), &value32(i), raw::APPEND);
    }
    txn.commit();
    let txn = env.begin(false);
    let d = median_of(sizes.reps, || {
        time(|| {
            let mut sum = 0;
            for k in keys {
                let dbi = if reopen_dbi {
                    // Seed 000's "before": a handle lookup by name on every get.
                    txn.open_table(name, raw::NO_FLAGS, false)
                } else {
                    dbi
                };
                sum += txn.get(dbi, &k.to_be_bytes()).map_or(0, <[u8]>::len);
            }
            expect_all_found(black_box(sum), keys);
        })
    });
    txn.abort();
    d
}

fn heed(sizes: GetSizes, keys: &[u64]) -> std::time::Duration {
    let dir = scratch_dir("get-heed");
    // SAFETY: a fresh directory that nothing else opens while this env lives.
    let env = unsafe {
        EnvOpenOptions::new()
            .map_size(HEED_MAP_SIZE)
            .max_dbs(sizes.other_tables as u32 + 1)
            .open(dir.path())
    }
    .expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            for i in 0..sizes.other_tables {
                opener.create_database::<Bytes, Bytes>(wtxn, Some(&table_name(i)))?;
            }
            let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("kv"))?;
            for i in 0..sizes.entries {
                db.put_with_flags(wtxn, PutFlags::APPEND, &i.to_be_bytes(), &value32(i))?;
            }
            Ok(CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("heed create")
        .unwrap_commit();
    let rtxn = env.read_txn().expect("heed read");
    median_of(sizes.reps, || {
        time(|| {
            let mut sum = 0;
            for k in keys {
                sum += db
                    .get(&rtxn, &k.to_be_bytes())
                    .expect("heed get")
                    .map_or(0, <[u8]>::len);
            }
            expect_all_found(black_box(sum), keys);
        })
    })
}

fn redb(sizes: GetSizes, keys: &[u64]) -> std::time::Duration {
    let dir = scratch_dir("get-redb");
    let db = redb::Database::create(redb_file(dir.path())).expect("redb create");
    let wtx = db.begin_write().expect("redb write");
    for i in 0..sizes.other_tables {
        let name = table_name(i);
        let def: TableDefinition<u64, &[u8]> = TableDefinition::new(&name);
        wtx.open_table(def).expect("redb table");
    }
    {
        let mut t = wtx.open_table(REDB_KV).expect("redb table");
        for i in 0..sizes.entries {
            t.insert(i, &value32(i)[..]).expect("redb insert");
        }
    }
    wtx.commit().expect("redb commit");
    let rtx = db.begin_read().expect("redb read");
    let t = rtx.open_table(REDB_KV).expect("redb table");
    median_of(sizes.reps, || {
        time(|| {
            let mut sum = 0;
            for &k in keys {
                sum += t.get(k).expect("redb get").map_or(0, |g| g.value().len());
            }
            expect_all_found(black_box(sum), keys);
        })
    })
}
