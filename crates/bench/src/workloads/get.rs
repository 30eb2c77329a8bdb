//! Seed 000: random point gets in one read transaction, with other tables in the environment.
//!
//! Keys are `u64` stored big-endian (8 bytes, byte-wise comparison) in every libmdbx/LMDB
//! variant — Tabula's default `u64` encoding — and as redb's native `u64`.
//!
//! Two sets of rows. **Typed** (the headline): values are [`Row`], the 60-byte serde
//! struct, each library storing it through its own serde codec and every get decoding it —
//! Tabula `tx.get::<Rows>` (serde + bincode 2 through Tabula's checked reader), heed
//! `SerdeBincode<Row>` (bincode 1), redb a typed table whose `Value` is bincode 2
//! `decode_from_slice`, redb's native tuple, and raw `mdbx_get` + bincode 2 `decode_from_slice`
//! (plain bincode, no damage guard: the floor). **Bytes**: 32-byte values only borrowed
//! (Tabula `get_bytes`, raw `mdbx_get`, heed `Bytes`, redb `&[u8]`). Every pass folds what it
//! read (every decoded field, or every byte) into a checksum that must equal the one computed
//! from the data written.
//!
//! get_cold also has investigation rows (`docs/benchmarks-get-cold.md`): the libmdbx and LMDB
//! variants with one environment setting changed, loaded side by side and timed in
//! interleaved rounds so that foreign load hits them alike. `TABULA_BENCH_VM=1` prints, for
//! every variant, the minor faults per pass, the data file's mapping (`/proc/self/smaps`) and
//! the B-tree's shape, with the read txn live.

use std::hint::black_box;
use std::mem::ManuallyDrop;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use heed::types::{Bytes, SerdeBincode};
use heed::{CommitOrAbort, EnvFlags as HeedFlags, EnvOpenOptions, PutFlags, RoTxn, WithTls};
use redb::{ReadOnlyTable, ReadableDatabase, TableDefinition};
use tabula::{Contains, Db, RoTx, Schema, TableStat, Unindexed};
use tempfile::TempDir;

use crate::data::{
    RedbRow, RedbTuple, Row, decode_row, expected_sum, fold_words, row, row_bytes, row_parts_sum,
    row_sum, verify,
};
use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{
    Kv, KvInt, KvIntSchema, KvSchema, Rows, RowsInt, RowsIntSchema, RowsSchema,
    open_with_extra_tables,
};
use crate::util::{ns_per, table_cname, table_name, time, value32};
use crate::vm::{self, Probe};

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

/// What a table holds and a pass decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data {
    /// 32-byte values ([`value32`]), borrowed.
    Bytes,
    /// [`Row`]s, decoded by every get.
    Typed,
    /// [`Row`]s in redb's native tuple (redb only).
    Tuple,
}

impl Data {
    /// The checksum a pass over `keys` must return.
    pub fn expected(self, keys: &[u64]) -> u64 {
        match self {
            Data::Bytes => expected_sum(keys, |k| fold_words(&value32(k))),
            Data::Typed | Data::Tuple => expected_sum(keys, |k| row_sum(&row(k, 0))),
        }
    }
}

/// Environment settings an investigation row changes: the libraries' own flags, and an
/// `madvise` the benchmark applies to the data file's whole mapping once the data is loaded
/// (before the read txn begins), replacing what the library advised.
#[derive(Clone, Copy, Debug)]
pub struct Knobs {
    /// `madvise` advice for the data-file mapping (`libc::MADV_*`).
    pub madvise: Option<libc::c_int>,
    /// `MDBX_NORDAHEAD` / `MDB_NORDAHEAD`.
    pub no_readahead: bool,
    /// Page size of a new libmdbx file (Tabula's `Options::page_size`); -1 = default.
    pub page_size: isize,
    /// `MDBX_WRITEMAP` / `MDB_WRITEMAP`.
    pub write_map: bool,
    /// `MDBX_EXCLUSIVE` (libmdbx only).
    pub exclusive: bool,
    /// `MDBX_VALIDATION` (raw libmdbx; Tabula's `Options::validation`).
    pub validation: bool,
    /// `MDBX_INTEGERKEY` with native-endian keys and libmdbx's integer comparator (raw only).
    pub integer_key: bool,
    /// A custom key comparator with libmdbx's default order ([`raw::lexical_cmp_branchy`],
    /// written in Rust, the one Tabula installed on its tables before its libmdbx compared
    /// keys that way in line: the branchy-search patch's gain; raw only).
    pub custom_cmp: bool,
}

impl Knobs {
    /// Every library's defaults: the headline rows.
    pub const DEFAULT: Knobs = Knobs {
        madvise: None,
        no_readahead: false,
        page_size: -1,
        write_map: false,
        exclusive: false,
        validation: false,
        integer_key: false,
        custom_cmp: false,
    };
}

/// Runs every variant of `key` ("get_hot" or "get_cold") over `keys`; with `investigate`,
/// get_cold also runs the rows that look for where libmdbx's wall time goes.
pub fn run(key: &'static str, sizes: GetSizes, keys: &[u64], investigate: bool) -> Workload {
    let title = format!(
        "{} random gets, {} entries ({}-byte typed rows / 32-byte values, 8-byte keys), {} other tables, one read txn",
        keys.len(),
        sizes.entries,
        row_bytes(&row(sizes.entries - 1, 0)).len(),
        sizes.other_tables
    );
    let mut w = Workload::new(key, title, Unit::Ns);
    let n = keys.len();
    let d = Knobs::DEFAULT;
    let custom = Knobs {
        custom_cmp: true,
        ..d
    };
    let validated = Knobs {
        validation: true,
        ..d
    };
    let typed_sum = Data::Typed.expected(keys);
    let bytes_sum = Data::Bytes.expected(keys);
    type Make<'a> = Box<dyn FnOnce() -> Box<dyn Reader> + 'a>;
    let mut specs: Vec<(&str, &str, Make<'_>)> = vec![
        (
            "tabula_typed",
            "heed_typed",
            Box::new(|| Box::new(TabulaReader::rows(sizes, d))),
        ),
        (
            // `Options::validation` (`MDBX_VALIDATION`): what libmdbx's check of every page it
            // loads costs a get, against the row above.
            "tabula_validated",
            "tabula_typed",
            Box::new(|| Box::new(TabulaReader::rows(sizes, validated))),
        ),
        (
            // `integer_key` (`MDBX_INTEGERKEY`, native-endian keys): the same rows in libmdbx's
            // integer order, against the default row above.
            "tabula_typed_intkey",
            "tabula_typed",
            Box::new(|| Box::new(TabulaReader::rows_int(sizes, d))),
        ),
        (
            "heed_typed",
            "heed_typed",
            Box::new(|| Box::new(HeedReader::new(sizes, d, Data::Typed))),
        ),
        (
            "redb_typed",
            "heed_typed",
            Box::new(|| Box::new(RedbReader::new(sizes, Data::Typed))),
        ),
        (
            "redb_tuple",
            "heed_typed",
            Box::new(|| Box::new(RedbReader::new(sizes, Data::Tuple))),
        ),
        (
            "raw_typed",
            "heed_typed",
            Box::new(|| Box::new(RawReader::new(sizes, d, false, Data::Typed))),
        ),
        (
            "tabula_bytes",
            "raw",
            Box::new(|| Box::new(TabulaReader::<KvSchema>::bytes::<Kv>(sizes, d))),
        ),
        (
            "raw",
            "raw",
            Box::new(|| Box::new(RawReader::new(sizes, d, false, Data::Bytes))),
        ),
        (
            "raw_customcmp",
            "raw",
            Box::new(|| Box::new(RawReader::new(sizes, custom, false, Data::Bytes))),
        ),
        (
            "heed_bytes",
            "raw",
            Box::new(|| Box::new(HeedReader::new(sizes, d, Data::Bytes))),
        ),
        (
            "redb_bytes",
            "raw",
            Box::new(|| Box::new(RedbReader::new(sizes, Data::Bytes))),
        ),
    ];
    if key == "get_hot" {
        specs.push((
            "raw_reopen_dbi",
            "raw",
            Box::new(|| Box::new(RawReader::new(sizes, d, true, Data::Bytes))),
        ));
    }
    // Every variant is loaded first, each in its own store with its read txn live, and takes
    // one untimed pass (page faults); then all are timed in interleaved rounds (the order
    // rotating each round), so neither the order nor a burst of foreign load favours a row.
    type Loaded<'a> = (&'a str, &'a str, Box<dyn Reader>, Probe, u64);
    let mut readers: Vec<Loaded<'_>> = specs
        .into_iter()
        .filter(|(name, ..)| variant_wanted(name))
        .map(|(name, base, make)| {
            let mut reader = make();
            let expected = match reader.data() {
                Data::Bytes => bytes_sum,
                Data::Typed | Data::Tuple => typed_sum,
            };
            let mut probe = Probe::new(name, reader.file());
            probe.rep(|| verify(name, reader.pass(keys), expected));
            (name, base, reader, probe, expected)
        })
        .collect();
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); readers.len()];
    for round in 0..sizes.reps.max(1) {
        for j in 0..readers.len() {
            let i = (j + round) % readers.len();
            let (name, _, reader, probe, expected) = &mut readers[i];
            let t = probe.rep(|| {
                time(|| {
                    let sum = reader.pass(keys);
                    verify(name, black_box(sum), *expected);
                })
            });
            times[i].push(t);
        }
    }
    for ((name, base, reader, probe, _), mut t) in readers.into_iter().zip(times) {
        probe.report(n);
        if vm::enabled() {
            println!("  [vm] {name}: {}", reader.shape());
        }
        drop(reader);
        t.sort();
        let median = ns_per(t[t.len() / 2], n);
        w.add(name, || median, Some(base));
    }
    if key == "get_cold" && investigate {
        cold_investigation(&mut w, sizes, keys);
    }
    w
}

/// Which library a row reads through.
#[derive(Clone, Copy, Debug)]
enum Lib {
    Tabula,
    /// Tabula on an `integer_key` table ([`KvInt`]).
    TabulaIntKey,
    Raw,
    Heed,
}

/// The most gets one investigation pass makes (the first of the workload's keys).
const INVESTIGATION_GETS: usize = 500_000;

fn cold_investigation(w: &mut Workload, sizes: GetSizes, keys: &[u64]) {
    // A pass of 500,000 gets is long enough once the rounds are interleaved, and keeps the
    // full run's extra time to about half a minute.
    let keys = &keys[..keys.len().min(INVESTIGATION_GETS)];
    let expected = Data::Bytes.expected(keys);
    let d = Knobs::DEFAULT;
    let advise = |a| Knobs {
        madvise: Some(a),
        ..d
    };
    let page = |p| Knobs { page_size: p, ..d };
    let flag = |f: fn(&mut Knobs)| {
        let mut k = d;
        f(&mut k);
        k
    };
    // Run with every investigation: the interleaved baseline, raw libmdbx with a branchy
    // comparator like Tabula's (`raw.customcmp`), and Tabula's `integer_key` opt-in.
    let mut specs: Vec<(&str, Lib, Knobs)> = vec![
        ("raw.default", Lib::Raw, d),
        ("tabula.default", Lib::Tabula, d),
        ("heed.default", Lib::Heed, d),
        ("raw.customcmp", Lib::Raw, flag(|k| k.custom_cmp = true)),
        ("tabula.integerkey", Lib::TabulaIntKey, d),
    ];
    // The other settings (lead 1's huge-page mappings included), with
    // `TABULA_BENCH_COLD_SWEEP=1` (a few minutes).
    if std::env::var_os("TABULA_BENCH_COLD_SWEEP").is_some_and(|v| v != "0") {
        specs.extend([
            ("raw.hugepage", Lib::Raw, advise(libc::MADV_HUGEPAGE)),
            ("heed.nohugepage", Lib::Heed, advise(libc::MADV_NOHUGEPAGE)),
            ("tabula.hugepage", Lib::Tabula, advise(libc::MADV_HUGEPAGE)),
            ("heed.random", Lib::Heed, advise(libc::MADV_RANDOM)),
            ("heed.nordahead", Lib::Heed, flag(|k| k.no_readahead = true)),
            ("raw.nordahead", Lib::Raw, flag(|k| k.no_readahead = true)),
            ("raw.page1k", Lib::Raw, page(1024)),
            ("raw.page2k", Lib::Raw, page(2048)),
            ("tabula.page1k", Lib::Tabula, page(1024)),
            ("tabula.page2k", Lib::Tabula, page(2048)),
            ("raw.page8k", Lib::Raw, page(8192)),
            ("raw.page16k", Lib::Raw, page(16384)),
            ("raw.writemap", Lib::Raw, flag(|k| k.write_map = true)),
            ("heed.writemap", Lib::Heed, flag(|k| k.write_map = true)),
            ("raw.exclusive", Lib::Raw, flag(|k| k.exclusive = true)),
            ("raw.validation", Lib::Raw, flag(|k| k.validation = true)),
            ("raw.integerkey", Lib::Raw, flag(|k| k.integer_key = true)),
        ]);
    }
    let mut readers: Vec<(&str, Box<dyn Reader>, Probe)> = specs
        .into_iter()
        .filter(|(name, ..)| variant_wanted(name))
        .map(|(name, lib, k)| {
            let mut reader: Box<dyn Reader> = match lib {
                Lib::Tabula => Box::new(TabulaReader::<KvSchema>::bytes::<Kv>(sizes, k)),
                Lib::TabulaIntKey => {
                    Box::new(TabulaReader::<KvIntSchema>::bytes::<KvInt>(sizes, k))
                }
                Lib::Raw => Box::new(RawReader::new(sizes, k, false, Data::Bytes)),
                Lib::Heed => Box::new(HeedReader::new(sizes, k, Data::Bytes)),
            };
            let mut probe = Probe::new(name, reader.file());
            // A first pass takes the page faults; it is not timed.
            probe.rep(|| verify(name, reader.pass(keys), expected));
            (name, reader, probe)
        })
        .collect();
    let rounds = sizes.reps.max(5);
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); readers.len()];
    for round in 0..rounds {
        for j in 0..readers.len() {
            let i = (j + round) % readers.len();
            let (name, reader, probe) = &mut readers[i];
            let t = probe.rep(|| {
                time(|| {
                    let sum = reader.pass(keys);
                    verify(name, black_box(sum), expected);
                })
            });
            times[i].push(t);
        }
    }
    let n = keys.len();
    for ((name, reader, probe), mut t) in readers.iter().zip(times) {
        t.sort();
        let median = ns_per(t[t.len() / 2], n);
        if vm::enabled() {
            println!(
                "  [vm] {name}: {} rounds, ns/get min {:.1} median {median:.1} max {:.1}; {}",
                t.len(),
                ns_per(t[0], n),
                ns_per(t[t.len() - 1], n),
                reader.shape()
            );
            probe.report(n);
        }
        w.extra(name, || median, Some("raw.default"));
    }
}

/// A loaded variant with its read txn live.
trait Reader {
    /// One pass over `keys`: the checksum of what was read.
    fn pass(&mut self, keys: &[u64]) -> u64;
    /// What it reads.
    fn data(&self) -> Data;
    /// The data file, for the mapping report.
    fn file(&self) -> PathBuf;
    /// The table's B-tree: depth, branch and leaf pages.
    fn shape(&self) -> String;
}

fn shape(depth: u32, branch: u64, leaf: u64) -> String {
    format!("depth {depth}, {branch} branch + {leaf} leaf pages")
}

/// Applies the knobs' `madvise`, if any, to the data file's mapping.
fn apply(k: &Knobs, file: &std::path::Path) {
    if let Some(advice) = k.madvise {
        assert!(
            vm::madvise_file(file, advice) > 0,
            "the data file is mapped"
        );
    }
}

/// A pass through a Tabula read txn.
type TabulaPass<S> = fn(&RoTx<'static, S>, &[u64]) -> u64;

/// Tabula: a read txn of a `Db` whose environment has the other tables open; `S` is a
/// one-table schema, `pass` reads its table (`get_bytes`, or a typed `get`).
struct TabulaReader<S: Schema> {
    // Dropped first (see Drop): it borrows `*db`.
    tx: ManuallyDrop<RoTx<'static, S>>,
    db: Arc<Db<S>>,
    dir: TempDir,
    pass: TabulaPass<S>,
    stat: fn(&RoTx<'static, S>) -> TableStat,
    data: Data,
}

impl TabulaReader<RowsSchema> {
    /// The typed rows: `tx.get::<Rows>(&k)`.
    fn rows(sizes: GetSizes, k: Knobs) -> Self {
        TabulaReader::typed::<Rows>(sizes, k)
    }
}

impl TabulaReader<RowsIntSchema> {
    /// The typed rows on an `integer_key` table: `tx.get::<RowsInt>(&k)`.
    fn rows_int(sizes: GetSizes, k: Knobs) -> Self {
        TabulaReader::typed::<RowsInt>(sizes, k)
    }
}

impl<S: Schema> TabulaReader<S> {
    /// [`Row`]s through `tx.get::<T>`.
    fn typed<T: Unindexed<Key = u64, Value = Row>>(sizes: GetSizes, k: Knobs) -> Self
    where
        S: Contains<T>,
    {
        TabulaReader::new(
            sizes,
            k,
            Data::Typed,
            |tx, entries| {
                let mut ap = tx.appender::<T>().expect("appender");
                for i in 0..entries {
                    ap.append(&i, &row(i, 0)).expect("append");
                }
            },
            |tx, keys| {
                let mut sum = 0u64;
                for k in keys {
                    let r = tx.get::<T>(k).expect("get");
                    sum = sum.wrapping_add(r.as_ref().map_or(0, row_sum));
                }
                sum
            },
            |tx| tx.stat::<T>().expect("stat"),
        )
    }
}

impl<S: Schema> TabulaReader<S> {
    /// 32-byte values through `get_bytes` on table `T`.
    fn bytes<T: Unindexed<Key = u64, Value = Vec<u8>>>(sizes: GetSizes, k: Knobs) -> Self
    where
        S: Contains<T>,
    {
        TabulaReader::new(
            sizes,
            k,
            Data::Bytes,
            |tx, entries| {
                let mut ap = tx.appender::<T>().expect("appender");
                let mut value = Vec::with_capacity(32);
                for i in 0..entries {
                    value.clear();
                    value.extend_from_slice(&value32(i));
                    ap.append(&i, &value).expect("append");
                }
            },
            |tx, keys| {
                let mut sum = 0u64;
                for k in keys {
                    let v = tx.get_bytes::<T>(k).expect("get");
                    sum = sum.wrapping_add(v.map_or(0, fold_words));
                }
                sum
            },
            |tx| tx.stat::<T>().expect("stat"),
        )
    }

    fn new(
        sizes: GetSizes,
        k: Knobs,
        data: Data,
        load: fn(&mut tabula::RwTx<'_, S>, u64),
        pass: TabulaPass<S>,
        stat: fn(&RoTx<'static, S>) -> TableStat,
    ) -> Self {
        let dir = scratch_dir("get-tabula");
        let mut options = tabula_options()
            .write_map(k.write_map)
            .exclusive(k.exclusive)
            .validation(k.validation);
        if k.page_size > 0 {
            options = options.page_size(k.page_size as usize);
        }
        assert!(!k.no_readahead, "Tabula has no readahead option");
        let db = Arc::new(open_with_extra_tables::<S>(
            dir.path(),
            sizes.other_tables,
            true,
            options,
        ));
        let mut tx = db.write().expect("write");
        load(&mut tx, sizes.entries);
        tx.commit().expect("commit");
        apply(&k, &dir.path().join("mdbx.dat"));
        // SAFETY: the `Db` lives in an `Arc` this struct holds, so its address is stable and
        // it outlives `tx`, which `Drop` ends before the fields (and so the `Arc`) drop.
        let db_ref: &'static Db<S> = unsafe { &*Arc::as_ptr(&db) };
        let tx = ManuallyDrop::new(db_ref.read().expect("read"));
        TabulaReader {
            tx,
            db,
            dir,
            pass,
            stat,
            data,
        }
    }
}

impl<S: Schema> Drop for TabulaReader<S> {
    fn drop(&mut self) {
        // SAFETY: `tx` is dropped exactly once, here, while `db` is still alive.
        unsafe { ManuallyDrop::drop(&mut self.tx) };
    }
}

impl<S: Schema> Reader for TabulaReader<S> {
    fn pass(&mut self, keys: &[u64]) -> u64 {
        (self.pass)(&self.tx, keys)
    }

    fn data(&self) -> Data {
        self.data
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("mdbx.dat")
    }

    fn shape(&self) -> String {
        let _ = &self.db;
        let s = (self.stat)(&self.tx);
        shape(s.depth, s.branch_pages, s.leaf_pages)
    }
}

/// Raw libmdbx: `mdbx_get` with the handle opened once (or, `reopen_dbi`, before every get);
/// typed: + bincode 2 `decode_from_slice`.
struct RawReader {
    // Fields drop in order: the txn is ended in Drop, then the env closes, then the dir goes.
    txn: Option<raw::Txn>,
    env: raw::Env,
    dbi: raw::Dbi,
    reopen_dbi: bool,
    integer_key: bool,
    data: Data,
    dir: TempDir,
}

impl RawReader {
    fn new(sizes: GetSizes, k: Knobs, reopen_dbi: bool, data: Data) -> Self {
        let dir = scratch_dir("get-raw");
        let flags = EnvFlags {
            write_map: k.write_map,
            no_readahead: k.no_readahead,
            exclusive: k.exclusive,
            validation: k.validation,
            page_size: k.page_size,
            ..EnvFlags::DEFAULT
        };
        let env = raw::Env::open(dir.path(), sizes.other_tables as u64 + 1, flags);
        let mut txn = env.begin(true);
        for i in 0..sizes.other_tables {
            txn.open_table(&table_cname(i), raw::NO_FLAGS, true);
        }
        let table_flags = if k.integer_key {
            raw::INTEGER_KEY
        } else {
            raw::NO_FLAGS
        };
        let dbi = if k.custom_cmp {
            txn.open_table_with_cmp(c"kv", Some(raw::lexical_cmp_branchy))
        } else {
            txn.open_table(c"kv", table_flags, true)
        };
        for i in 0..sizes.entries {
            let key = key_bytes(i, k.integer_key);
            match data {
                Data::Bytes => txn.put(dbi, &key, &value32(i), raw::APPEND),
                Data::Typed | Data::Tuple => {
                    txn.put(dbi, &key, &row_bytes(&row(i, 0)), raw::APPEND);
                }
            }
        }
        txn.commit();
        apply(&k, &dir.path().join("mdbx.dat"));
        let txn = Some(env.begin(false));
        RawReader {
            txn,
            env,
            dbi,
            reopen_dbi,
            integer_key: k.integer_key,
            data,
            dir,
        }
    }
}

/// A raw key: big-endian (byte-wise order), or native-endian for an `MDBX_INTEGERKEY` table.
fn key_bytes(k: u64, integer_key: bool) -> [u8; 8] {
    if integer_key {
        k.to_ne_bytes()
    } else {
        k.to_be_bytes()
    }
}

impl Drop for RawReader {
    fn drop(&mut self) {
        if let Some(txn) = self.txn.take() {
            txn.abort();
        }
    }
}

impl Reader for RawReader {
    fn pass(&mut self, keys: &[u64]) -> u64 {
        let txn = self.txn.as_ref().expect("live txn");
        let mut sum = 0u64;
        for k in keys {
            let dbi = if self.reopen_dbi {
                // Seed 000's "before": a handle lookup by name on every get.
                txn.open_table(c"kv", raw::NO_FLAGS, false)
            } else {
                self.dbi
            };
            let v = txn.get(dbi, &key_bytes(*k, self.integer_key));
            let s = match self.data {
                Data::Bytes => v.map_or(0, fold_words),
                Data::Typed | Data::Tuple => v.map_or(0, |b| row_sum(&decode_row(b))),
            };
            sum = sum.wrapping_add(s);
        }
        sum
    }

    fn data(&self) -> Data {
        self.data
    }

    fn file(&self) -> PathBuf {
        let _ = &self.env;
        self.dir.path().join("mdbx.dat")
    }

    fn shape(&self) -> String {
        let (depth, branch, leaf) = self.txn.as_ref().expect("live txn").tree_shape(self.dbi);
        shape(depth, branch, leaf)
    }
}

/// heed's table: raw bytes, or heed's own serde codec.
enum HeedDb {
    Bytes(heed::Database<'static, Bytes, Bytes>),
    Typed(heed::Database<'static, Bytes, SerdeBincode<Row>>),
}

/// heed (LMDB): `Database<Bytes, Bytes>::get`, or `Database<Bytes, SerdeBincode<Row>>::get`.
struct HeedReader {
    // Fields drop in order: the txn (which holds its own handle on the env) first.
    txn: RoTxn<'static, WithTls>,
    db: HeedDb,
    dir: TempDir,
}

impl HeedReader {
    fn new(sizes: GetSizes, k: Knobs, data: Data) -> Self {
        let dir = scratch_dir("get-heed");
        assert!(
            k.page_size < 0 && !k.exclusive,
            "LMDB's page size is the OS page; no exclusive mode here"
        );
        let mut flags = HeedFlags::empty();
        if k.no_readahead {
            flags |= HeedFlags::NO_READ_AHEAD;
        }
        if k.write_map {
            flags |= HeedFlags::WRITE_MAP;
        }
        let mut opts = EnvOpenOptions::new();
        opts.map_size(HEED_MAP_SIZE)
            .max_dbs(sizes.other_tables as u32 + 1);
        // SAFETY: NO_READ_AHEAD and WRITE_MAP turn off no sync and no locking.
        unsafe { opts.flags(flags) };
        // SAFETY: a fresh directory that nothing else opens while this env lives.
        let env = unsafe { opts.open(dir.path()) }.expect("heed open");
        let wtxn = env.write_txn().expect("heed write");
        let db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                for i in 0..sizes.other_tables {
                    opener.create_database::<Bytes, Bytes>(wtxn, Some(&table_name(i)))?;
                }
                let dbs = match data {
                    Data::Bytes => {
                        let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("kv"))?;
                        for i in 0..sizes.entries {
                            let (k, v) = (i.to_be_bytes(), value32(i));
                            db.put_with_flags(wtxn, PutFlags::APPEND, &k, &v)?;
                        }
                        (Some(db), None)
                    }
                    Data::Typed | Data::Tuple => {
                        let db =
                            opener.create_database::<Bytes, SerdeBincode<Row>>(wtxn, Some("kv"))?;
                        for i in 0..sizes.entries {
                            let (k, v) = (i.to_be_bytes(), row(i, 0));
                            db.put_with_flags(wtxn, PutFlags::APPEND, &k, &v)?;
                        }
                        (None, Some(db))
                    }
                };
                Ok(CommitOrAbort::<_, ()>::Commit(dbs))
            })
            .expect("heed create")
            .unwrap_commit();
        let db = match db {
            (Some(db), _) => HeedDb::Bytes(db),
            (None, Some(db)) => HeedDb::Typed(db),
            (None, None) => unreachable!("one table was created"),
        };
        apply(&k, &dir.path().join("data.mdb"));
        let txn = env.static_read_txn().expect("heed read");
        HeedReader { txn, db, dir }
    }
}

impl Reader for HeedReader {
    fn pass(&mut self, keys: &[u64]) -> u64 {
        let mut sum = 0u64;
        match &self.db {
            HeedDb::Bytes(db) => {
                for k in keys {
                    let v = db.get(&self.txn, &k.to_be_bytes()).expect("heed get");
                    sum = sum.wrapping_add(v.map_or(0, fold_words));
                }
            }
            HeedDb::Typed(db) => {
                for k in keys {
                    let v = db.get(&self.txn, &k.to_be_bytes()).expect("heed get");
                    sum = sum.wrapping_add(v.as_ref().map_or(0, row_sum));
                }
            }
        }
        sum
    }

    fn data(&self) -> Data {
        match self.db {
            HeedDb::Bytes(_) => Data::Bytes,
            HeedDb::Typed(_) => Data::Typed,
        }
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("data.mdb")
    }

    fn shape(&self) -> String {
        let s = match &self.db {
            HeedDb::Bytes(db) => db.stat(&self.txn),
            HeedDb::Typed(db) => db.stat(&self.txn),
        }
        .expect("heed stat");
        shape(s.depth, s.branch_pages as u64, s.leaf_pages as u64)
    }
}

/// redb's table, by what it stores.
enum RedbTable {
    Bytes(ReadOnlyTable<u64, &'static [u8]>),
    Typed(ReadOnlyTable<u64, RedbRow>),
    Tuple(ReadOnlyTable<u64, RedbTuple>),
}

/// redb: `ReadOnlyTable::get` on `&[u8]` values, typed rows ([`RedbRow`], bincode 2), or the
/// native tuple.
struct RedbReader {
    table: RedbTable,
    _db: redb::Database,
    dir: TempDir,
}

impl RedbReader {
    fn new(sizes: GetSizes, data: Data) -> Self {
        let dir = scratch_dir("get-redb");
        let db = redb::Database::create(redb_file(dir.path())).expect("redb create");
        let wtx = db.begin_write().expect("redb write");
        for i in 0..sizes.other_tables {
            let name = table_name(i);
            let def: TableDefinition<u64, &[u8]> = TableDefinition::new(&name);
            wtx.open_table(def).expect("redb table");
        }
        const BYTES: TableDefinition<u64, &[u8]> = TableDefinition::new("kv");
        const TYPED: TableDefinition<u64, RedbRow> = TableDefinition::new("kv");
        const TUPLE: TableDefinition<u64, RedbTuple> = TableDefinition::new("kv");
        {
            match data {
                Data::Bytes => {
                    let mut t = wtx.open_table(BYTES).expect("redb table");
                    for i in 0..sizes.entries {
                        t.insert(i, &value32(i)[..]).expect("redb insert");
                    }
                }
                Data::Typed => {
                    let mut t = wtx.open_table(TYPED).expect("redb table");
                    for i in 0..sizes.entries {
                        t.insert(i, row(i, 0)).expect("redb insert");
                    }
                }
                Data::Tuple => {
                    let mut t = wtx.open_table(TUPLE).expect("redb table");
                    for i in 0..sizes.entries {
                        let r = row(i, 0);
                        let v = (r.id, r.amount, r.name.as_str(), r.flags, r.hash);
                        t.insert(i, v).expect("redb insert");
                    }
                }
            }
        }
        wtx.commit().expect("redb commit");
        let rtx = db.begin_read().expect("redb read");
        let table = match data {
            Data::Bytes => RedbTable::Bytes(rtx.open_table(BYTES).expect("redb table")),
            Data::Typed => RedbTable::Typed(rtx.open_table(TYPED).expect("redb table")),
            Data::Tuple => RedbTable::Tuple(rtx.open_table(TUPLE).expect("redb table")),
        };
        RedbReader {
            table,
            _db: db,
            dir,
        }
    }
}

impl Reader for RedbReader {
    fn pass(&mut self, keys: &[u64]) -> u64 {
        let mut sum = 0u64;
        match &self.table {
            RedbTable::Bytes(t) => {
                for &k in keys {
                    let g = t.get(k).expect("redb get");
                    sum = sum.wrapping_add(g.map_or(0, |g| fold_words(g.value())));
                }
            }
            RedbTable::Typed(t) => {
                for &k in keys {
                    let g = t.get(k).expect("redb get");
                    sum = sum.wrapping_add(g.map_or(0, |g| row_sum(&g.value())));
                }
            }
            RedbTable::Tuple(t) => {
                for &k in keys {
                    let g = t.get(k).expect("redb get");
                    sum = sum.wrapping_add(g.map_or(0, |g| {
                        let (id, amount, name, flags, hash) = g.value();
                        row_parts_sum(id, amount, name.as_bytes(), flags, &hash)
                    }));
                }
            }
        }
        sum
    }

    fn data(&self) -> Data {
        match self.table {
            RedbTable::Bytes(_) => Data::Bytes,
            RedbTable::Typed(_) => Data::Typed,
            RedbTable::Tuple(_) => Data::Tuple,
        }
    }

    fn file(&self) -> PathBuf {
        redb_file(self.dir.path())
    }

    fn shape(&self) -> String {
        "redb (no B-tree statistics here)".to_string()
    }
}
