//! Seed 000: random point gets in one read transaction, with other tables in the environment.
//!
//! Keys are `u64` stored big-endian (8 bytes, byte-wise comparison) in every libmdbx/LMDB
//! variant — Tabula's default `u64` encoding — and as redb's native `u64`. Values are 32 bytes;
//! every variant only borrows them (Tabula `get_bytes`, raw `mdbx_get`, heed `Bytes`, redb
//! `&[u8]`) and adds up their lengths, which is checked.
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

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvFlags as HeedFlags, EnvOpenOptions, PutFlags, RoTxn, WithTls};
use redb::{ReadableDatabase, TableDefinition};
use tabula::{Contains, Db, RoTx, Schema, Table};
use tempfile::TempDir;

use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Kv, KvInt, KvIntSchema, KvSchema, open_with_extra_tables};
use crate::util::{median_of, ns_per, table_cname, table_name, time, value32};
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

const REDB_KV: TableDefinition<u64, &[u8]> = TableDefinition::new("kv");

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
    /// `MDBX_VALIDATION` (raw libmdbx only).
    pub validation: bool,
    /// `MDBX_INTEGERKEY` with native-endian keys and libmdbx's integer comparator (raw only).
    pub integer_key: bool,
    /// A custom key comparator with libmdbx's default order ([`raw::lexical_cmp_branchy`];
    /// raw only).
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
        "{} random gets, {} entries (8-byte keys, 32-byte values), {} other tables, one read txn",
        keys.len(),
        sizes.entries,
        sizes.other_tables
    );
    let mut w = Workload::new(key, title, Unit::Ns);
    let n = keys.len();
    let d = Knobs::DEFAULT;
    let headline = |label: &str, mut reader: Box<dyn Reader>| {
        let mut probe = Probe::new(label, reader.file());
        let t = median_of(sizes.reps, || {
            probe.rep(|| {
                time(|| {
                    let sum = reader.pass(keys);
                    expect_all_found(black_box(sum), keys);
                })
            })
        });
        probe.report(n);
        if vm::enabled() {
            println!("  [vm] {label}: {}", reader.shape());
        }
        ns_per(t, n)
    };
    w.add(
        "tabula",
        || {
            let reader = TabulaReader::<KvSchema, Kv>::new(sizes, d);
            headline("tabula", Box::new(reader))
        },
        Some("raw"),
    );
    w.add(
        "raw",
        || headline("raw", Box::new(RawReader::new(sizes, d, false))),
        Some("raw"),
    );
    if key == "get_hot" {
        w.add(
            "raw_reopen_dbi",
            || headline("raw_reopen_dbi", Box::new(RawReader::new(sizes, d, true))),
            Some("raw"),
        );
    }
    w.add(
        "heed",
        || headline("heed", Box::new(HeedReader::new(sizes, d))),
        Some("raw"),
    );
    w.add("redb", || ns_per(redb(sizes, keys), n), Some("raw"));
    if key == "get_cold" && investigate {
        cold_investigation(&mut w, sizes, keys);
    }
    w
}

fn expect_all_found(sum: usize, keys: &[u64]) {
    assert_eq!(sum, keys.len() * 32, "every key is present");
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

/// get_cold's investigation rows (printed, not in the JSON): every variant is loaded first,
/// each in its own environment with its read txn live, then all are timed in `rounds`
/// interleaved rounds (the order rotates each round) and each row is the median of its
/// rounds, compared with `raw.default`, the raw row's settings measured the same way.
fn cold_investigation(w: &mut Workload, sizes: GetSizes, keys: &[u64]) {
    // A pass of 500,000 gets is long enough once the rounds are interleaved, and keeps the
    // full run's extra time to about half a minute.
    let keys = &keys[..keys.len().min(INVESTIGATION_GETS)];
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
                Lib::Tabula => Box::new(TabulaReader::<KvSchema, Kv>::new(sizes, k)),
                Lib::TabulaIntKey => Box::new(TabulaReader::<KvIntSchema, KvInt>::new(sizes, k)),
                Lib::Raw => Box::new(RawReader::new(sizes, k, false)),
                Lib::Heed => Box::new(HeedReader::new(sizes, k)),
            };
            let mut probe = Probe::new(name, reader.file());
            // A first pass takes the page faults; it is not timed.
            probe.rep(|| expect_all_found(reader.pass(keys), keys));
            (name, reader, probe)
        })
        .collect();
    let rounds = sizes.reps.max(5);
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); readers.len()];
    for round in 0..rounds {
        for j in 0..readers.len() {
            let i = (j + round) % readers.len();
            let (_, reader, probe) = &mut readers[i];
            let t = probe.rep(|| {
                time(|| {
                    let sum = reader.pass(keys);
                    expect_all_found(black_box(sum), keys);
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
    /// One pass over `keys`: the sum of the value lengths found.
    fn pass(&mut self, keys: &[u64]) -> usize;
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

/// Tabula: `get_bytes` on a read txn of a `Db` whose environment has the other tables open;
/// `S` is a one-table schema of `T` ([`Kv`], or [`KvInt`] in an investigation row).
struct TabulaReader<S: Schema + Contains<T>, T: Table<Key = u64, Value = Vec<u8>>> {
    // Dropped first (see Drop): it borrows `*db`.
    tx: ManuallyDrop<RoTx<'static, S>>,
    db: Arc<Db<S>>,
    dir: TempDir,
    table: std::marker::PhantomData<T>,
}

impl<S: Schema + Contains<T>, T: Table<Key = u64, Value = Vec<u8>>> TabulaReader<S, T> {
    fn new(sizes: GetSizes, k: Knobs) -> Self {
        let dir = scratch_dir("get-tabula");
        let mut options = tabula_options()
            .write_map(k.write_map)
            .exclusive(k.exclusive);
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
        {
            let mut ap = tx.appender::<T>().expect("appender");
            let mut value = Vec::with_capacity(32);
            for i in 0..sizes.entries {
                value.clear();
                value.extend_from_slice(&value32(i));
                ap.append(&i, &value).expect("append");
            }
        }
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
            table: std::marker::PhantomData,
        }
    }
}

impl<S: Schema + Contains<T>, T: Table<Key = u64, Value = Vec<u8>>> Drop for TabulaReader<S, T> {
    fn drop(&mut self) {
        // SAFETY: `tx` is dropped exactly once, here, while `db` is still alive.
        unsafe { ManuallyDrop::drop(&mut self.tx) };
    }
}

impl<S: Schema + Contains<T>, T: Table<Key = u64, Value = Vec<u8>>> Reader for TabulaReader<S, T> {
    fn pass(&mut self, keys: &[u64]) -> usize {
        let mut sum = 0;
        for k in keys {
            sum += self
                .tx
                .get_bytes::<T>(k)
                .expect("get")
                .map_or(0, <[u8]>::len);
        }
        sum
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("mdbx.dat")
    }

    fn shape(&self) -> String {
        let _ = &self.db;
        let s = self.tx.stat::<T>().expect("stat");
        shape(s.depth, s.branch_pages, s.leaf_pages)
    }
}

/// Raw libmdbx: `mdbx_get` with the handle opened once (or, `reopen_dbi`, before every get).
struct RawReader {
    // Fields drop in order: the txn is ended in Drop, then the env closes, then the dir goes.
    txn: Option<raw::Txn>,
    env: raw::Env,
    dbi: raw::Dbi,
    reopen_dbi: bool,
    integer_key: bool,
    dir: TempDir,
}

impl RawReader {
    fn new(sizes: GetSizes, k: Knobs, reopen_dbi: bool) -> Self {
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
            txn.put(dbi, &key_bytes(i, k.integer_key), &value32(i), raw::APPEND);
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
    fn pass(&mut self, keys: &[u64]) -> usize {
        let txn = self.txn.as_ref().expect("live txn");
        let mut sum = 0;
        for k in keys {
            let dbi = if self.reopen_dbi {
                // Seed 000's "before": a handle lookup by name on every get.
                txn.open_table(c"kv", raw::NO_FLAGS, false)
            } else {
                self.dbi
            };
            sum += txn
                .get(dbi, &key_bytes(*k, self.integer_key))
                .map_or(0, <[u8]>::len);
        }
        sum
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

/// heed (LMDB): `Database<Bytes, Bytes>::get`.
struct HeedReader {
    // Fields drop in order: the txn (which holds its own handle on the env) first.
    txn: RoTxn<'static, WithTls>,
    db: heed::Database<'static, Bytes, Bytes>,
    dir: TempDir,
}

impl HeedReader {
    fn new(sizes: GetSizes, k: Knobs) -> Self {
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
                let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("kv"))?;
                for i in 0..sizes.entries {
                    db.put_with_flags(wtxn, PutFlags::APPEND, &i.to_be_bytes(), &value32(i))?;
                }
                Ok(CommitOrAbort::<_, ()>::Commit(db))
            })
            .expect("heed create")
            .unwrap_commit();
        apply(&k, &dir.path().join("data.mdb"));
        let txn = env.static_read_txn().expect("heed read");
        HeedReader { txn, db, dir }
    }
}

impl Reader for HeedReader {
    fn pass(&mut self, keys: &[u64]) -> usize {
        let mut sum = 0;
        for k in keys {
            sum += self
                .db
                .get(&self.txn, &k.to_be_bytes())
                .expect("heed get")
                .map_or(0, <[u8]>::len);
        }
        sum
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("data.mdb")
    }

    fn shape(&self) -> String {
        let s = self.db.stat(&self.txn).expect("heed stat");
        shape(s.depth, s.branch_pages as u64, s.leaf_pages as u64)
    }
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
