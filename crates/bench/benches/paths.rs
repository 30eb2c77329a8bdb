//! Per-call paths, so regressions show: a hot get through Tabula and through raw libmdbx, a
//! pooled read-transaction begin/drop against a fresh raw begin/abort, the appender, and a typed
//! value's decode.
//!
//! `cargo bench -p tabula-bench` (the full seed workloads are the `tabula-bench` binary).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tabula::Options;
use tabula_bench::raw::{self, EnvFlags};
use tabula_bench::tables::{Kv, KvSchema, Log, LogSchema};
use tabula_bench::util::{key_sequence, value32};

const ENTRIES: u64 = 1024;

fn hot_get(c: &mut Criterion) {
    let keys = key_sequence(0x5EED, ENTRIES, 4096);
    let mut group = c.benchmark_group("get_hot");

    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<KvSchema>(dir.path(), Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for i in 0..ENTRIES {
        tx.put::<Kv>(&i, &value32(i).to_vec()).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let mut i = 0;
    group.bench_function("tabula_get_bytes", |b| {
        b.iter(|| {
            i = (i + 1) % keys.len();
            black_box(tx.get_bytes::<Kv>(&keys[i]).unwrap().map(<[u8]>::len))
        })
    });
    drop(tx);

    let raw_dir = tempfile::tempdir().unwrap();
    let env = raw::Env::open(raw_dir.path(), 1, EnvFlags::DEFAULT);
    let mut txn = env.begin(true);
    let dbi = txn.open_table(c"kv", raw::NO_FLAGS, true);
    for i in 0..ENTRIES {
        txn.put(dbi, &i.to_be_bytes(), &value32(i), raw::APPEND);
    }
    txn.commit();
    let txn = env.begin(false);
    group.bench_function("raw_mdbx_get", |b| {
        b.iter(|| {
            i = (i + 1) % keys.len();
            black_box(txn.get(dbi, &keys[i].to_be_bytes()).map(<[u8]>::len))
        })
    });
    txn.abort();
    group.finish();

    let mut group = c.benchmark_group("read_txn");
    group.bench_function("tabula_pooled_read_drop", |b| {
        b.iter(|| drop(black_box(db.read().unwrap())))
    });
    group.bench_function("raw_begin_abort", |b| {
        b.iter(|| black_box(env.begin(false)).abort())
    });
    group.finish();
}

fn append(c: &mut Criterion) {
    const BATCH: u32 = 1000;
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<LogSchema>(dir.path(), Options::new()).unwrap();
    let value = vec![0xab; 100];
    let mut group = c.benchmark_group("append");
    group.throughput(Throughput::Elements(u64::from(BATCH)));
    // One write txn per iteration, aborted: the appender path without a commit's fsync.
    group.bench_function("tabula_appender_1000_abort", |b| {
        b.iter(|| {
            let mut tx = db.write().unwrap();
            {
                let mut ap = tx.appender::<Log>().unwrap();
                for k in 0..BATCH {
                    ap.append(&k, &value).unwrap();
                }
            }
            tx.abort();
        })
    });
    group.finish();
}

/// The 60-byte serde value: what a typed `get` decodes after the lookup.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Account {
    nonce: u64,
    balance: u64,
    name: String,
    flags: u32,
    code_hash: [u8; 32],
}

/// Typed-value decode alone: Tabula's `Bincode<T>` codec against bincode 2's own decoder, plain
/// and under the decode limit that used to guard Tabula's (`with_limit::<4096>`).
fn value_decode(c: &mut Criterion) {
    use tabula::Value;
    let config = bincode::config::standard();
    let value = Account {
        nonce: 7,
        balance: 1 << 40,
        name: "alice the account holder".into(),
        flags: 3,
        code_hash: [0xab; 32],
    };
    let bytes = bincode::serde::encode_to_vec(&value, config).unwrap();
    assert_eq!(tabula::Bincode::<Account>::decode(&bytes).unwrap(), value);
    let mut group = c.benchmark_group("value_decode");
    group.bench_function("tabula_bincode_codec", |b| {
        b.iter(|| black_box(tabula::Bincode::<Account>::decode(black_box(&bytes)).unwrap()))
    });
    group.bench_function("bincode2_decode_from_slice", |b| {
        b.iter(|| {
            let (v, _): (Account, usize) =
                bincode::serde::decode_from_slice(black_box(&bytes), config).unwrap();
            black_box(v)
        })
    });
    group.bench_function("bincode2_with_limit_4096", |b| {
        b.iter(|| {
            let (v, _): (Account, usize) =
                bincode::serde::decode_from_slice(black_box(&bytes), config.with_limit::<4096>())
                    .unwrap();
            black_box(v)
        })
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

criterion_group! {
    name = paths;
    config = config();
    targets = hot_get, append, value_decode
}
criterion_main!(paths);
