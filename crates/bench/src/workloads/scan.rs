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
use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::Rows;
use crate::util::{Pass, interleaved, ns_per, time};

use super::{load, redb_file, scratch_dir, tabula_options};

/// Sizes of the scan workload.
#[derive(Clone, Copy, Debug)]
pub struct ScanSizes {
    /// Entries in the table (every pass reads them all).
    pub entries: u64,
    /// Repetitions (median taken).
    pub reps: usize,
}

/// Runs every variant: every store is loaded first, each with its read txn live, then all
/// walks are timed in interleaved rounds ([`interleaved`]).
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
    let want = |names: &[&str]| names.iter().any(|v| variant_wanted(v));

    // The stores (only those a wanted row reads).
    let tabula_dir = scratch_dir("scan-tabula");
    let tabula_db = want(&["tabula_typed", "tabula_bytes"])
        .then(|| load::tabula(tabula_dir.path(), n, tabula_options()));
    let tabula_tx = tabula_db.as_ref().map(|db| db.read().expect("read"));
    // The same rows in a `Db` opened with `Options::validation` (`MDBX_VALIDATION`): what
    // libmdbx's check of every page it loads costs a walk.
    let validated_dir = scratch_dir("scan-tabula-validated");
    let validated_db = want(&["tabula_validated"])
        .then(|| load::tabula(validated_dir.path(), n, tabula_options().validation(true)));
    let validated_tx = validated_db.as_ref().map(|db| db.read().expect("read"));
    let raw_dir = scratch_dir("scan-raw");
    let raw_store =
        want(&["raw_typed", "raw"]).then(|| load::raw(raw_dir.path(), n, EnvFlags::DEFAULT));
    let raw_txn = raw_store
        .as_ref()
        .map(|(env, dbi)| (env.begin(false), *dbi));
    let heed_dir = scratch_dir("scan-heed");
    let heed_store =
        want(&["heed_typed"]).then(|| load::heed(heed_dir.path(), n, HeedFlags::empty()));
    let heed_txn = heed_store
        .as_ref()
        .map(|(env, db)| (env.read_txn().expect("heed read"), *db));
    let redb_dir = scratch_dir("scan-redb");
    let redb_table = want(&["redb_typed"]).then(|| {
        let db = load::redb(redb_dir.path(), n);
        let rtx = db.begin_read().expect("redb read");
        let table = rtx.open_table(load::REDB_ROWS).expect("redb table");
        (db, table)
    });
    let tuple_dir = scratch_dir("scan-redb-tuple");
    let tuple_table = want(&["redb_tuple"]).then(|| redb_tuple_store(tuple_dir.path(), n));

    // The walks: each returns (entries seen, checksum).
    type Walk<'a> = Box<dyn FnMut() -> (u64, u64) + 'a>;
    let mut walks: Vec<(&str, &str, u64, Walk<'_>)> = Vec::new();
    if let Some(tx) = &tabula_tx {
        walks.push((
            "tabula_typed",
            "raw_typed",
            typed,
            Box::new(move || {
                let (mut count, mut sum) = (0, 0u64);
                for e in tx.iter::<Rows>() {
                    let (k, r) = e.expect("iter");
                    count += 1;
                    sum = sum.wrapping_add(entry_sum(k, row_sum(&r)));
                }
                (count, sum)
            }),
        ));
        walks.push((
            "tabula_bytes",
            "raw",
            bytes,
            Box::new(move || {
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
        ));
    }
    if let Some(tx) = &validated_tx {
        walks.push((
            "tabula_validated",
            "tabula_typed",
            typed,
            Box::new(move || {
                let (mut count, mut sum) = (0, 0u64);
                for e in tx.iter::<Rows>() {
                    let (k, r) = e.expect("iter");
                    count += 1;
                    sum = sum.wrapping_add(entry_sum(k, row_sum(&r)));
                }
                (count, sum)
            }),
        ));
    }
    if let Some((txn, dbi)) = &raw_txn {
        walks.push(("raw_typed", "raw_typed", typed, raw_walk(txn, *dbi, true)));
        walks.push(("raw", "raw", bytes, raw_walk(txn, *dbi, false)));
    }
    if let Some((rtxn, db)) = &heed_txn {
        walks.push((
            "heed_typed",
            "raw_typed",
            typed,
            Box::new(move || {
                let (mut count, mut sum) = (0, 0u64);
                for e in db.iter(rtxn).expect("heed iter") {
                    let (k, r) = e.expect("heed next");
                    let k = u64::from_be_bytes(k.try_into().expect("8-byte key"));
                    count += 1;
                    sum = sum.wrapping_add(entry_sum(k, row_sum(&r)));
                }
                (count, sum)
            }),
        ));
    }
    if let Some((_, t)) = &redb_table {
        walks.push((
            "redb_typed",
            "raw_typed",
            typed,
            Box::new(move || {
                let (mut count, mut sum) = (0, 0u64);
                for e in t.iter().expect("redb iter") {
                    let (k, v) = e.expect("redb next");
                    count += 1;
                    sum = sum.wrapping_add(entry_sum(k.value(), row_sum(&v.value())));
                }
                (count, sum)
            }),
        ));
    }
    if let Some((_, t)) = &tuple_table {
        walks.push((
            "redb_tuple",
            "raw_typed",
            typed,
            Box::new(move || {
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
        ));
    }
    walks.retain(|(name, ..)| variant_wanted(name));
    let labels: Vec<(&str, &str)> = walks.iter().map(|(n, b, ..)| (*n, *b)).collect();
    let mut passes: Vec<Pass<'_>> = walks
        .into_iter()
        .map(|(name, _, expected, mut walk)| {
            let pass: Box<dyn FnMut() -> std::time::Duration + '_> = Box::new(move || {
                time(|| {
                    let (count, sum) = walk();
                    assert_eq!(count, n, "{name}: the walk saw {count} entries of {n}");
                    verify(name, black_box(sum), expected);
                })
            });
            (name.to_string(), pass)
        })
        .collect();
    let medians = interleaved(sizes.reps, &mut passes);
    drop(passes);
    for ((name, base), t) in labels.into_iter().zip(medians) {
        w.add(name, || ns_per(t, n as usize), Some(base));
    }
    if let Some((txn, _)) = raw_txn {
        txn.abort();
    }
    w
}

/// The raw cursor walk: `MDBX_FIRST`, then `MDBX_NEXT` until `MDBX_NOTFOUND`; `typed` decodes
/// each value with bincode 2.
fn raw_walk(txn: &raw::Txn, dbi: raw::Dbi, typed: bool) -> Box<dyn FnMut() -> (u64, u64) + '_> {
    Box::new(move || {
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
    })
}

/// redb's native tuple store: the same fields without serde (the database, which must outlive
/// the table, and the table).
fn redb_tuple_store(
    dir: &std::path::Path,
    n: u64,
) -> (redb::Database, redb::ReadOnlyTable<u64, RedbTuple>) {
    const TUPLE: TableDefinition<u64, RedbTuple> = TableDefinition::new("rows");
    let db = redb::Database::create(redb_file(dir)).expect("redb create");
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
    let table = rtx.open_table(TUPLE).expect("redb table");
    (db, table)
}
