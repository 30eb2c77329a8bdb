//! Per-operation paths through the public API, for counting instructions rather than timing
//! them (repeatable on a loaded machine): run each path with N and 2N iterations under
//! callgrind and divide the difference by N.
//!
//! ```text
//! cargo build --release -p tabula-bench --example path_costs
//! for n in 20000 40000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/path_costs get_typed $n 2>&1 | grep Collected
//! done
//! ```
//!
//! Paths: `get_bytes` (hot get of a 32-byte raw value), `get_typed` (hot get decoding a 60-byte
//! serde value), `read_txn` (pooled read transaction begin and drop), `iter` (typed iteration,
//! per entry), `append` (appender, per entry, transaction aborted), `put` (hot typed upsert of
//! the same serde value, in one write transaction, aborted), `commit` (a write transaction of
//! one `u64` put, committed; the database opened `SafeNoSync` for this path, so no flush).
//! `watch_feed` and `watch_keys` append `commit`'s transactions with a commit-feed subscriber, or
//! a key watcher on the written table, that reads every event (`tabula::Db::subscribe`,
//! `tabula::Db::watch`).
//!
//! Issue 37's three-way paths, Tabula against raw libmdbx + bincode 2 (`raw_*`: `mdbx_get` or a
//! cursor, and plain `bincode::serde::decode_from_slice`, the bench's `raw_typed` floor) and
//! against redb's typed path (`redb_*`: a table whose `redb::Value` decodes the same bincode 2
//! rows, the bench's `redb_typed`), all in this one build: `row_get` (hot get of the bench's
//! 64-byte [`Row`], 1,024 rows), `row_scan` (a walk of those rows, per entry), `range10` (a range
//! read of 10 entries from a key, per range read, in one read transaction: Tabula's
//! `range(k..)` with `next_raw`, raw `SET_RANGE` + 9 `NEXT` on one cursor, redb's `range(k..)`),
//! and `raw_cursor_next` / `raw_prune` beside `cursor_next` / `prune`.
//!
//! Issue 36's `history_commit` and `history_commit_keep`: a write transaction at a new version
//! of one put into a table declared `history` (the `history` workload's accounts), committed
//! (`SafeNoSync`), without and with `Options::keep_versions(`[`KEEP`]`)`: what keeping the last
//! versions adds to a commit (in the steady state, each commit prunes the one change that
//! falls below the versions kept).

use serde::{Deserialize, Serialize};
use std::hint::black_box;
use tabula::{Options, Raw, Schema, Table};
use tabula_bench::data::{RedbRow, decode_row, row, row_bytes, row_sum};
use tabula_bench::raw::{self, EnvFlags};
use tabula_bench::tables::Rows;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Account {
    nonce: u64,
    balance: u64,
    name: String,
    flags: u32,
    code_hash: [u8; 32],
}

#[derive(Table)]
#[table(name = "kv", key = u64, value = Vec<u8>, codec = Raw)]
struct Kv;
#[derive(Table)]
#[table(name = "accounts", key = u64, value = Account)]
struct Accounts;
#[derive(Table)]
#[table(name = "log", key = u32, value = Vec<u8>, codec = Raw, integer_key)]
struct Log;
#[derive(Table)]
#[table(name = "nums", key = u64, value = u64)]
struct Nums;
#[derive(Schema)]
struct App(Kv, Accounts, Log, Nums, Rows);

fn main() {
    // Every path checks what it read through `sum`, printed at the end.
    let which = std::env::args().nth(1).unwrap();
    let n: u64 = std::env::args()
        .nth(2)
        .map_or(100_000, |s| s.parse().unwrap());
    if let Some(sum) = raw_path(&which, n)
        .or_else(|| redb_path(&which, n))
        .or_else(|| history_path(&which, n))
    {
        eprintln!("{which}: {sum}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let options = Options::new().max_size(1 << 30);
    let options = if which == "commit" || which.starts_with("watch_") {
        options.sync(tabula::SyncMode::SafeNoSync)
    } else {
        options
    };
    let db = tabula::open::<App>(dir.path(), options).unwrap();
    let mut tx = db.write().unwrap();
    for i in 0..1024u64 {
        tx.put::<Kv>(&i, &vec![i as u8; 32]).unwrap();
        tx.put::<Accounts>(
            &i,
            &Account {
                nonce: i,
                balance: i << 20,
                name: "alice the account holder".into(),
                flags: 3,
                code_hash: [7; 32],
            },
        )
        .unwrap();
        tx.put::<Rows>(&i, &row(i, 0)).unwrap();
    }
    tx.commit().unwrap();
    let mut sum = 0u64;
    match which.as_str() {
        "get_bytes" => {
            let tx = db.read().unwrap();
            for i in 0..n {
                sum += tx.get_bytes::<Kv>(&(i * 7919 % 1024)).unwrap().unwrap()[0] as u64;
            }
        }
        "get_typed" => {
            let tx = db.read().unwrap();
            for i in 0..n {
                sum += tx
                    .get::<Accounts>(&(i * 7919 % 1024))
                    .unwrap()
                    .unwrap()
                    .nonce;
            }
        }
        "row_get" => {
            let tx = db.read().unwrap();
            for i in 0..n {
                let r = tx.get::<Rows>(&(i * 7919 % 1024)).unwrap().unwrap();
                sum = sum.wrapping_add(row_sum(&r));
            }
        }
        "row_scan" => {
            let tx = db.read().unwrap();
            for _ in 0..n / 1024 {
                for e in tx.iter::<Rows>() {
                    sum = sum.wrapping_add(row_sum(&e.unwrap().1));
                }
            }
        }
        "range10" => {
            let tx = db.read().unwrap();
            for i in 0..n {
                let mut it = tx.range::<Kv>(i * 7919 % 1014..);
                for _ in 0..10 {
                    let (_, v) = it.next_raw().unwrap().unwrap();
                    sum = sum.wrapping_add(v[0] as u64 + v.len() as u64);
                }
            }
        }
        "read_txn" => {
            for _ in 0..n {
                let tx = db.read().unwrap();
                sum += black_box(&tx).id();
            }
        }
        "iter" => {
            let tx = db.read().unwrap();
            for _ in 0..n / 1024 {
                for e in tx.iter::<Accounts>() {
                    sum += e.unwrap().1.nonce;
                }
            }
        }
        "append" => {
            let v = vec![0xab; 100];
            let mut k = 0u32;
            for _ in 0..n / 1000 {
                let mut tx = db.write().unwrap();
                {
                    let mut ap = tx.appender::<Log>().unwrap();
                    for _ in 0..1000 {
                        ap.append(&k, &v).unwrap();
                        k += 1;
                    }
                }
                tx.abort();
                k = 0;
            }
        }
        "put" => {
            // Hot upserts of the 1,024 typed values in one write transaction (aborted).
            let mut tx = db.write().unwrap();
            for i in 0..n {
                let k = i * 7919 % 1024;
                let account = Account {
                    nonce: i,
                    balance: k,
                    name: "alice the account holder".into(),
                    flags: 3,
                    code_hash: [7; 32],
                };
                tx.put::<Accounts>(&k, &account).unwrap();
                sum += 1;
            }
            tx.abort();
        }
        "commit" => {
            for i in 0..n {
                let mut tx = db.write().unwrap();
                tx.put::<Nums>(&(i % 1024), &i).unwrap();
                tx.commit().unwrap();
                sum += 1;
            }
        }
        "watch_feed" | "watch_keys" => {
            let feed = (which == "watch_feed").then(|| db.subscribe(16));
            let keys = (which == "watch_keys").then(|| db.watch::<Nums>(.., 16));
            for i in 0..n {
                let mut tx = db.write().unwrap();
                tx.put::<Nums>(&(i % 1024), &i).unwrap();
                tx.commit().unwrap();
                if let Some(Some(_)) = feed.as_ref().map(|f| f.try_recv()) {
                    sum += 1;
                }
                if let Some(Some(_)) = keys.as_ref().map(|k| k.try_recv()) {
                    sum += 1;
                }
            }
        }
        "prune" | "cursor_next" => {
            // A fixed 100,000 entries (setup, the same for every n), then a cursor walk over
            // the first n: deleting every 10th (`prune`, the write cursor) or reading (`cursor_next`).
            let mut tx = db.write().unwrap();
            for i in 0..100_000u64 {
                tx.put::<Nums>(&i, &i).unwrap();
            }
            if which == "prune" {
                let mut c = tx.cursor_mut::<Nums>().unwrap();
                let mut e = c.first().unwrap();
                for _ in 0..n {
                    let Some((k, v)) = e else { break };
                    if k % 10 == 0 {
                        c.delete_current().unwrap();
                    }
                    sum += v;
                    e = c.next().unwrap();
                }
            } else {
                let mut c = tx.cursor::<Nums>().unwrap();
                let mut e = c.first().unwrap();
                for _ in 0..n {
                    let Some((_, v)) = e else { break };
                    sum += v;
                    e = c.next().unwrap();
                }
            }
            tx.abort();
        }
        _ => panic!(),
    }
    eprintln!("{which}: {sum}");
}

/// The raw libmdbx + bincode 2 paths (`raw_*`), or `None` for another path.
/// The versions `history_commit_keep` keeps.
const KEEP: u64 = 16;

/// `history_commit` and `history_commit_keep`: 1,024 keys at version 1 and [`KEEP`] versions of
/// one put each first, then `n` commits of one put at a new version each.
fn history_path(which: &str, n: u64) -> Option<u64> {
    use tabula_bench::workloads::history::{Accounts, HistorySchema};
    let keep = match which {
        "history_commit" => false,
        "history_commit_keep" => true,
        _ => return None,
    };
    let dir = tempfile::tempdir().unwrap();
    let options = Options::new()
        .max_size(1 << 30)
        .sync(tabula::SyncMode::SafeNoSync);
    let options = if keep {
        options.keep_versions(KEEP)
    } else {
        options
    };
    let db = tabula::open::<HistorySchema>(dir.path(), options).unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(1);
    for i in 0..1024u64 {
        tx.put::<Accounts>(&i, &i).unwrap();
    }
    tx.commit().unwrap();
    let mut sum = 0;
    for version in 2..2 + KEEP + n {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        tx.put::<Accounts>(&(version % 1024), &version).unwrap();
        tx.commit().unwrap();
        sum += 1;
    }
    let tx = db.read().unwrap();
    let check = tx.check_history::<Accounts>(1).unwrap();
    assert!(check.is_ok(), "{:?}", check.problems);
    // Kept: the last `KEEP` versions' changes; else every change.
    let changes = if keep { KEEP } else { 1024 + KEEP + n };
    assert_eq!(check.changes, changes, "{which}");
    Some(sum)
}

fn raw_path(which: &str, n: u64) -> Option<u64> {
    if !which.starts_with("raw_") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let flags = EnvFlags {
        no_sticky_threads: true,
        ..EnvFlags::DEFAULT
    };
    let env = raw::Env::open(dir.path(), 4, flags);
    let mut txn = env.begin(true);
    let rows = txn.open_table(c"rows", raw::NO_FLAGS, true);
    let kv = txn.open_table(c"kv", raw::NO_FLAGS, true);
    let nums = txn.open_table(c"nums", raw::NO_FLAGS, true);
    for i in 0..1024u64 {
        txn.put(rows, &i.to_be_bytes(), &row_bytes(&row(i, 0)), raw::APPEND);
        txn.put(kv, &i.to_be_bytes(), &[i as u8; 32], raw::APPEND);
    }
    txn.commit();
    let config = bincode::config::standard();
    let mut sum = 0u64;
    match which {
        "raw_row_get" => {
            let txn = env.begin(false);
            for i in 0..n {
                let v = txn.get(rows, &(i * 7919 % 1024).to_be_bytes()).unwrap();
                sum = sum.wrapping_add(row_sum(&decode_row(v)));
            }
            txn.abort();
        }
        "raw_row_scan" => {
            let txn = env.begin(false);
            let mut c = txn.cursor(rows);
            for _ in 0..n / 1024 {
                let mut first = true;
                while let Some((k, v)) = c.step(first) {
                    first = false;
                    let k = u64::from_be_bytes(k.try_into().unwrap());
                    sum = sum.wrapping_add(k ^ row_sum(&decode_row(v)));
                }
            }
            c.close();
            txn.abort();
        }
        "raw_range10" => {
            let txn = env.begin(false);
            let mut c = txn.cursor(kv);
            for i in 0..n {
                let start = (i * 7919 % 1014).to_be_bytes();
                let mut e = c.get(raw::SET_RANGE, Some(&start));
                for j in 0..10 {
                    let (_, v) = e.unwrap();
                    sum = sum.wrapping_add(v[0] as u64 + v.len() as u64);
                    e = if j < 9 { c.get(raw::NEXT, None) } else { None };
                }
            }
            c.close();
            txn.abort();
        }
        "raw_cursor_next" | "raw_prune" => {
            // As `cursor_next` / `prune`: 100,000 `u64` values in bincode 2 put in the write
            // transaction, then a walk over the first n decoding each entry.
            let mut txn = env.begin(true);
            for i in 0..100_000u64 {
                let v = bincode::serde::encode_to_vec(i, config).unwrap();
                txn.put(nums, &i.to_be_bytes(), &v, 0);
            }
            let mut c = txn.cursor(nums);
            let mut first = true;
            for _ in 0..n {
                let Some((k, v)) = c.step(first) else { break };
                first = false;
                let k = u64::from_be_bytes(k.try_into().unwrap());
                let (v, _) = bincode::serde::decode_from_slice::<u64, _>(v, config).unwrap();
                sum = sum.wrapping_add(v);
                if which == "raw_prune" && k % 10 == 0 {
                    // The next `MDBX_NEXT` lands on the entry after the deleted one.
                    c.del_current();
                }
            }
            c.close();
            txn.abort();
        }
        _ => panic!("no path {which}"),
    }
    Some(sum)
}

/// redb's typed paths (`redb_*`): a table whose `redb::Value` decodes bincode 2 rows.
fn redb_path(which: &str, n: u64) -> Option<u64> {
    use redb::{ReadableDatabase, ReadableTable, TableDefinition};
    if !which.starts_with("redb_") {
        return None;
    }
    const ROWS: TableDefinition<u64, RedbRow> = TableDefinition::new("rows");
    const KV: TableDefinition<u64, &[u8]> = TableDefinition::new("kv");
    let dir = tempfile::tempdir().unwrap();
    let db = redb::Database::create(dir.path().join("redb")).unwrap();
    let wtx = db.begin_write().unwrap();
    {
        let mut rows = wtx.open_table(ROWS).unwrap();
        let mut kv = wtx.open_table(KV).unwrap();
        for i in 0..1024u64 {
            rows.insert(i, row(i, 0)).unwrap();
            kv.insert(i, &[i as u8; 32][..]).unwrap();
        }
    }
    wtx.commit().unwrap();
    let rtx = db.begin_read().unwrap();
    let mut sum = 0u64;
    match which {
        "redb_row_get" => {
            let t = rtx.open_table(ROWS).unwrap();
            for i in 0..n {
                let g = t.get(i * 7919 % 1024).unwrap().unwrap();
                sum = sum.wrapping_add(row_sum(&g.value()));
            }
        }
        "redb_row_scan" => {
            let t = rtx.open_table(ROWS).unwrap();
            for _ in 0..n / 1024 {
                for e in t.iter().unwrap() {
                    let (k, v) = e.unwrap();
                    sum = sum.wrapping_add(k.value() ^ row_sum(&v.value()));
                }
            }
        }
        "redb_range10" => {
            let t = rtx.open_table(KV).unwrap();
            for i in 0..n {
                for e in t.range(i * 7919 % 1014..).unwrap().take(10) {
                    let (_, v) = e.unwrap();
                    let v = v.value();
                    sum = sum.wrapping_add(v[0] as u64 + v.len() as u64);
                }
            }
        }
        _ => panic!("no path {which}"),
    }
    Some(sum)
}
