//! scan: iterate all of a table of typed rows in key order, decoding keys and values, in one
//! read transaction.
//!
//! Typed rows decode both (the checksum folds the decoded key and every decoded field):
//! Tabula `tx.iter::<Rows>()`, raw libmdbx `mdbx_cursor_get(NEXT)` + big-endian key +
//! bincode 2 `decode_from_slice` (the "raw cursor walk" the target compares with), heed
//! `Database<Bytes, SerdeBincode<Row>>::iter`, redb's typed table and native tuple. Bytes rows
//! walk the same bincode 2 bytes without decoding the value (Tabula `Iter::next_raw`, raw
//! cursor), for the cost of the walk alone.

use std::hint::black_box;

use heed::EnvFlags as HeedFlags;
use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use crate::data::{
    RedbTuple, decode_row, entry_sum, expected_sum, fold_words, row, row_bytes, row_parts_sum,
    row_sum, verify,
};
use crate::raw::EnvFlags;
use crate::report::{Unit, Workload};
use crate::tables::Rows;
use crate::util::{median_of, ns_per, time};

use super::{load, redb_file, scratch_dir, tabula_options};

/// Sizes of the scan workload.
#[derive(Clone, Copy, Debug)]
pub struct ScanSizes {
    /// Entries in the table (every pass reads them all).
    pub entries: u64,
    /// Repetitions (median taken).
    pub reps: usize,
}

/// Runs every variant.
pub fn run(sizes: ScanSizes) -> Workload {
    let n = sizes.entries;
    let title = format!(
        "iterate {n} entries in key order, decoding keys and {}-byte typed rows, one read txn",
        row_bytes(&row(n - 1, 0)).len()
    );
    let mut w = Workload::new("scan", title, Unit::Ns);
    let keys: Vec<u64> = (0..n).collect();
    let typed = expected_sum(&keys, |k| entry_sum(k, row_sum(&row(k, 0))));
    let bytes = expected_sum(&keys, |k| entry_sum(k, fold_words(&row_bytes(&row(k, 0)))));
    let per = |label: &str, expected: u64, mut pass: Box<dyn FnMut() -> (u64, u64) + '_>| {
        let t = median_of(sizes.reps, || {
            time(|| {
                let (count, sum) = pass();
                assert_eq!(count, n, "{label}: the walk saw {count} entries of {n}");
                verify(label, black_box(sum), expected);
            })
        });
        ns_per(t, n as usize)
    };
    let base = Some("raw_typed");
    w.add(
        "tabula_typed",
        || {
            let dir = scratch_dir("scan-tabula");
            let db = load::tabula(dir.path(), n, tabula_options());
            let tx = db.read().expect("read");
            per(
                "tabula_typed",
                typed,
                Box::new(|| {
                    let (mut count, mut sum) = (0, 0u64);
                    for e in tx.iter::<Rows>() {
                        let (k, r) = e.expect("iter");
                        count += 1;
                        sum = sum.wrapping_add(entry_sum(k, row_sum(&r)));
                    }
                    (count, sum)
                }),
            )
        },
        base,
    );
    w.add("raw_typed", || raw_walk(n, &per, typed, true), base);
    w.add(
        "heed_typed",
        || {
            let dir = scratch_dir("scan-heed");
            let (env, db) = load::heed(dir.path(), n, HeedFlags::empty());
            let rtxn = env.read_txn().expect("heed read");
            per(
                "heed_typed",
                typed,
                Box::new(|| {
                    let (mut count, mut sum) = (0, 0u64);
                    for e in db.iter(&rtxn).expect("heed iter") {
                        let (k, r) = e.expect("heed next");
                        let k = u64::from_be_bytes(k.try_into().expect("8-byte key"));
                        count += 1;
                        sum = sum.wrapping_add(entry_sum(k, row_sum(&r)));
                    }
                    (count, sum)
                }),
            )
        },
        base,
    );
    w.add(
        "redb_typed",
        || {
            let dir = scratch_dir("scan-redb");
            let db = load::redb(dir.path(), n);
            let rtx = db.begin_read().expect("redb read");
            let t = rtx.open_table(load::REDB_ROWS).expect("redb table");
            per(
                "redb_typed",
                typed,
                Box::new(|| {
                    let (mut count, mut sum) = (0, 0u64);
                    for e in t.iter().expect("redb iter") {
                        let (k, v) = e.expect("redb next");
                        count += 1;
                        sum = sum.wrapping_add(entry_sum(k.value(), row_sum(&v.value())));
                    }
                    (count, sum)
                }),
            )
        },
        base,
    );
    w.add("redb_tuple", || redb_tuple(n, &per, typed), base);
    w.add(
        "tabula_bytes",
        || {
            let dir = scratch_dir("scan-tabula-bytes");
            let db = load::tabula(dir.path(), n, tabula_options());
            let tx = db.read().expect("read");
            per(
                "tabula_bytes",
                bytes,
                Box::new(|| {
                    let (mut count, mut sum) = (0, 0u64);
                    let mut it = tx.iter::<Rows>();
                    while let Some(e) = it.next_raw() {
                        let (k, v) = e.expect("iter");
                        let k = u64::from_be_bytes(k.try_into().expect("8-byte key"));
                        count += 1;
                        sum = sum.wrapping_add(entry_sum(k, fold_words(v)));
                    }
                    (count, sum)
                }),
            )
        },
        Some("raw"),
    );
    w.add("raw", || raw_walk(n, &per, bytes, false), Some("raw"));
    w
}

type Per<'a> = dyn Fn(&str, u64, Box<dyn FnMut() -> (u64, u64) + '_>) -> f64 + 'a;

/// The raw cursor walk: `MDBX_FIRST`, then `MDBX_NEXT` until `MDBX_NOTFOUND`; `typed` decodes
/// each value with bincode 2.
fn raw_walk(n: u64, per: &Per<'_>, expected: u64, typed: bool) -> f64 {
    let dir = scratch_dir("scan-raw");
    let (env, dbi) = load::raw(dir.path(), n, EnvFlags::DEFAULT, true);
    let txn = env.begin(false);
    let label = if typed { "raw_typed" } else { "raw" };
    let figure = per(
        label,
        expected,
        Box::new(|| {
            let (mut count, mut sum) = (0, 0u64);
            let mut c = txn.cursor(dbi);
            let mut first = true;
            while let Some((k, v)) = c.step(first) {
                first = false;
                let k = u64::from_be_bytes(k.try_into().expect("8-byte key"));
                let s = if typed {
                    row_sum(&decode_row(v))
                } else {
                    fold_words(v)
                };
                count += 1;
                sum = sum.wrapping_add(entry_sum(k, s));
            }
            c.close();
            (count, sum)
        }),
    );
    txn.abort();
    figure
}

/// redb's native tuple: the same fields without serde.
fn redb_tuple(n: u64, per: &Per<'_>, expected: u64) -> f64 {
    const TUPLE: TableDefinition<u64, RedbTuple> = TableDefinition::new("rows");
    let dir = scratch_dir("scan-redb-tuple");
    let db = redb::Database::create(redb_file(dir.path())).expect("redb create");
    let wtx = db.begin_write().expect("redb write");
    {
        let mut t = wtx.open_table(TUPLE).expect("redb table");
        for k in 0..n {
            let r = row(k, 0);
            t.insert(k, (r.id, r.amount, r.name.as_str(), r.flags, r.hash))
                .expect("redb insert");
        }
    }
    wtx.commit().expect("redb commit");
    let rtx = db.begin_read().expect("redb read");
    let t = rtx.open_table(TUPLE).expect("redb table");
    per(
        "redb_tuple",
        expected,
        Box::new(|| {
            let (mut count, mut sum) = (0, 0u64);
            for e in t.iter().expect("redb iter") {
                let (k, v) = e.expect("redb next");
                let (id, amount, name, flags, hash) = v.value();
                count += 1;
                let s = row_parts_sum(id, amount, name.as_bytes(), flags, &hash);
                sum = sum.wrapping_add(entry_sum(k.value(), s));
            }
            (count, sum)
        }),
    )
}
