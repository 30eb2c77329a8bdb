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

use serde::{Deserialize, Serialize};
use std::hint::black_box;
use tabula::{Options, Raw, Schema, Table};

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
struct App(Kv, Accounts, Log, Nums);

fn main() {
    // Every path checks what it read through `sum`, printed at the end.
    let which = std::env::args().nth(1).unwrap();
    let n: u64 = std::env::args()
        .nth(2)
        .map_or(100_000, |s| s.parse().unwrap());
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
