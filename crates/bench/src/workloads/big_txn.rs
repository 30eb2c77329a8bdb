//! big_txn (issue 26): the regimes of an initial sync, an import or a prune — millions of random
//! writes in **one** write transaction — on the peer benchmark's data (24-byte random keys,
//! 150-byte random values, [`crate::pairs`]).
//!
//! For each size N (full run 1,000,000 and 5,000,000; `--quick` a tenth), every library runs the
//! same phases on its own store, in this order, each phase timed from the start of its
//! transaction to the end of its commit (durable, every library's default):
//!
//! 1. `insert`: N random-key inserts in one write transaction (ns per entry).
//! 2. `range10`: N/10 range reads of 10 entries from a random start key, one read transaction
//!    (ns per range read).
//! 3. `delete`: the first N/2 keys inserted (random order) deleted in one write transaction (ns
//!    per key).
//! 4. `retain`: a walk of the whole table in one write transaction keeping every other entry
//!    (ns per entry walked).
//! 5. `pop`: N/10 pops, alternating first and last, in one write transaction (ns per pop).
//!
//! Every read is folded into a checksum over every byte of every key and value it returned and
//! compared with the sum the model ([`crate::pairs::Model`]) computes; after each write phase the
//! store is walked (untimed) and its entry count and checksum compared with the model's. With
//! `investigate`, each store is then compacted and the sizes printed.

use std::ops::Bound;
use std::path::Path;
use std::time::Duration;

use heed::types::Bytes;
use heed::{CommitOrAbort, CompactionOption, EnvOpenOptions};
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::pairs::{self, Key, Model, State, VALUE_LEN, check_state, pair_sum, value_of};
use crate::raw::{self, EnvFlags, Tune};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Pairs24, Pairs24Schema};
use crate::util::{ns_per, time};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Sizes of the big_txn workload.
#[derive(Clone, Copy, Debug)]
pub struct BigTxnSizes {
    /// Entries inserted for the `_1m` and the `_5m` rows.
    pub entries: [usize; 2],
}

/// The row labels of the two sizes (the full run's sizes; `--quick` runs a tenth under the same
/// names, and says so in the title).
pub const LABELS: [&str; 2] = ["1m", "5m"];

/// The libraries, in run order.
pub const LIBS: [&str; 4] = ["tabula", "raw", "heed", "redb"];

/// The phases, in run order.
pub const PHASES: [&str; 5] = ["insert", "range10", "delete", "retain", "pop"];

/// Entries per range read.
pub const SCAN_LEN: usize = 10;

/// Raw libmdbx as Tabula configures it: `MDBX_NOSTICKYTHREADS` (set by `RawStore::open`),
/// balanced pages (`Options::balance_pages`, Tabula's default), merges below a quarter full
/// (`Options::merge_threshold`'s default), durable, 16 MiB growth steps.
pub fn raw_like_tabula() -> Tune {
    Tune {
        options: raw::LIKE_TABULA.to_vec(),
        ..Tune::default()
    }
}

/// Investigation rows (with `investigate`, printed, not in the JSON): raw libmdbx as Tabula
/// configures it with one setting changed (`raw.KNOB`).
pub fn raw_knobs() -> Vec<(&'static str, Tune)> {
    use mdbx_sys as sys;
    let with = |flags: sys::MDBX_env_flags_t, options: &[(sys::MDBX_option_t, u64)]| {
        let mut t = raw_like_tabula();
        t.extra_flags = flags;
        t.options.extend_from_slice(options);
        t
    };
    vec![
        // libmdbx's own default: split a full page where the new entry goes (fewer pages
        // rewritten per transaction, half-full leaves under random inserts).
        (
            "raw.fewer_writes",
            with(0, &[(sys::MDBX_opt_prefer_waf_insteadof_balance, 1)]),
        ),
        ("raw.writemap", with(sys::MDBX_WRITEMAP, &[])),
        // Fresh page buffers are not zeroed (they are overwritten by the page copied into them).
        ("raw.nomeminit", with(sys::MDBX_NOMEMINIT, &[])),
        // 256 MiB growth steps instead of 16 MiB.
        (
            "raw.grow_256m",
            Tune {
                growth_step: 256 << 20,
                ..raw_like_tabula()
            },
        ),
        // Merge pages below half full (the most libmdbx allows), a third (libmdbx's default),
        // 12.5 % (the least libmdbx allows); Tabula's default is a quarter (LMDB's
        // `FILL_THRESHOLD`).
        (
            "raw.merge_50",
            with(0, &[(sys::MDBX_opt_merge_threshold, 32_768)]),
        ),
        (
            "raw.merge_33",
            with(0, &[(sys::MDBX_opt_merge_threshold, 65_536 / 3)]),
        ),
        (
            "raw.merge_12",
            with(0, &[(sys::MDBX_opt_merge_threshold, 8_192)]),
        ),
        // Spill all changed pages when the limit is reached (denominators 0: no bounds).
        (
            "raw.dp_limit_64k_spill_all",
            with(
                0,
                &[
                    (sys::MDBX_opt_txn_dp_limit, 65_536),
                    (sys::MDBX_opt_spill_min_denominator, 0),
                    (sys::MDBX_opt_spill_max_denominator, 0),
                ],
            ),
        ),
        // Keep up to 255 freed dirty pages on the loose list (the most libmdbx allows; its
        // default is 64): a freed dirty page beyond it is removed from the dirty-page list.
        (
            "raw.loose_255",
            with(0, &[(sys::MDBX_opt_loose_limit, 255)]),
        ),
        // Keep up to 64K page buffers between transactions (libmdbx's default 1024).
        (
            "raw.dp_reserve_64k",
            with(0, &[(sys::MDBX_opt_dp_reserve_limit, 65_536)]),
        ),
        // GC: a small reclaim list limit, and a time limit of 1 s for the GC search.
        (
            "raw.rp_augment_1k",
            with(0, &[(sys::MDBX_opt_rp_augment_limit, 1024)]),
        ),
        (
            "raw.gc_time_1s",
            with(0, &[(sys::MDBX_opt_gc_time_limit, 65_536)]),
        ),
        // A small dirty-page limit (256 MiB of 4 KiB pages): spills early.
        (
            "raw.dp_limit_64k",
            with(0, &[(sys::MDBX_opt_txn_dp_limit, 65_536)]),
        ),
        // Smaller and larger dirty-page limits (libmdbx's default is (total + available RAM
        // pages) / 42: about 275K pages on this machine's 23 GiB).
        (
            "raw.dp_limit_16k",
            with(0, &[(sys::MDBX_opt_txn_dp_limit, 16_384)]),
        ),
        (
            "raw.dp_limit_32k",
            with(0, &[(sys::MDBX_opt_txn_dp_limit, 32_768)]),
        ),
        (
            "raw.dp_limit_128k",
            with(0, &[(sys::MDBX_opt_txn_dp_limit, 131_072)]),
        ),
        // Larger dirty-page limits (issue 26): 2 GiB and 4 GiB of 4 KiB pages, enough for
        // the 5M rows' transactions not to spill (about 350K leaves after the inserts).
        (
            "raw.dp_limit_512k",
            with(0, &[(sys::MDBX_opt_txn_dp_limit, 524_288)]),
        ),
        (
            "raw.dp_limit_1m",
            with(0, &[(sys::MDBX_opt_txn_dp_limit, 1_048_576)]),
        ),
        // The largest dirty-page limit: never spills.
        (
            "raw.dp_limit_max",
            with(0, &[(sys::MDBX_opt_txn_dp_limit, 0x7FFF_FFFF)]),
        ),
    ]
}

/// Tabula investigation rows (`tabula.KNOB`): one option changed.
fn tabula_knobs() -> Vec<(&'static str, tabula::Options)> {
    vec![
        // `range` with an owned bound and `retain` decoding every entry.
        ("tabula.typed", tabula_options()),
        // Unsorted input sorted in memory first, then appended in one transaction.
        ("tabula.sorted_insert", tabula_options()),
        ("tabula.fewer_writes", tabula_options().balance_pages(false)),
        // libmdbx's default merge threshold, a third (Tabula's is a quarter).
        ("tabula.merge_33", tabula_options().merge_threshold(33)),
        ("tabula.writemap", tabula_options().write_map(true)),
        // Larger dirty-page limits (`Options::dirty_page_limit`), as `raw.dp_limit_*`.
        (
            "tabula.dp_limit_512k",
            tabula_options().dirty_page_limit(524_288),
        ),
        (
            "tabula.dp_limit_1m",
            tabula_options().dirty_page_limit(1_048_576),
        ),
        // 65,536 freed page buffers kept between transactions (`Options::dirty_page_reserve`),
        // as `raw.dp_reserve_64k`.
        (
            "tabula.dp_reserve_64k",
            tabula_options().dirty_page_reserve(65_536),
        ),
    ]
}

/// The timed figures of one library at one size, in [`PHASES`] order.
#[derive(Clone, Copy, Debug, Default)]
struct Figures {
    times: [Duration; 5],
}

impl Figures {
    /// Each phase's median over `rounds` (the upper middle of an even count).
    fn median(rounds: &[Figures]) -> Figures {
        let mut m = Figures::default();
        for (p, time) in m.times.iter_mut().enumerate() {
            let mut times: Vec<Duration> = rounds.iter().map(|f| f.times[p]).collect();
            times.sort_unstable();
            *time = times[times.len() / 2];
        }
        m
    }
}

/// Rounds at each size. Run once, each figure was one sample taken at one place in the order
/// the libraries run in (one after the other, in one process), and moved by up to ±15 % (1M
/// rows) and ±25 % (5M rows) from run to run; so each round starts one library later and each
/// figure is the median of its rounds (the 5M rows, one round until 2026-12-07, add about five
/// minutes to a full run). Three rounds still left rows 2–7 % apart between two full runs
/// (Tabula ÷ raw libmdbx, the same engine, 0.93–1.16 on one row): five since 2026-12-08, every
/// library starting in each of the four places at least once.
const ROUNDS: usize = 5;

/// What every library does at one size, and what each phase must leave or return.
struct Plan {
    keys: Vec<Key>,
    starts: Vec<Key>,
    pops: usize,
    after_insert: State,
    range_sum: u64,
    after_delete: State,
    retained_removed: u64,
    after_retain: State,
    popped_sum: u64,
    after_pop: State,
}

impl Plan {
    fn new(n: usize, seed: u64) -> Plan {
        let keys = pairs::keys(seed, n);
        let starts = pairs::keys(seed ^ 0x5CA7, (n / 10).max(1));
        let pops = n / 10;
        let mut m = Model::inserted(&keys);
        let after_insert = m.state();
        let range_sum = m.range_sum(&starts, SCAN_LEN);
        m.delete(&keys[..n / 2]);
        let after_delete = m.state();
        let retained_removed = m.retain_even();
        let after_retain = m.state();
        let popped_sum = m.pop_alternating(pops);
        let after_pop = m.state();
        Plan {
            keys,
            starts,
            pops,
            after_insert,
            range_sum,
            after_delete,
            retained_removed,
            after_retain,
            popped_sum,
            after_pop,
        }
    }

    /// The keys the delete phase deletes.
    fn deletes(&self) -> &[Key] {
        &self.keys[..self.keys.len() / 2]
    }
}

/// One library's store, behind the phases.
trait Store {
    /// Inserts every key (value [`value_of`]) in one write transaction and commits.
    fn insert(&mut self, keys: &[Key]) -> Duration;
    /// `SCAN_LEN` entries from the first key `>=` each start, in one read transaction; returns
    /// the checksum of what was read.
    fn range(&mut self, starts: &[Key]) -> (Duration, u64);
    /// Deletes every key in one write transaction and commits.
    fn delete(&mut self, keys: &[Key]) -> Duration;
    /// Keeps every other entry (positions 0, 2, …) in one write transaction and commits;
    /// returns how many were removed and the checksum of every entry the walk saw.
    fn retain_even(&mut self) -> (Duration, u64, u64);
    /// `n` pops alternating first and last in one write transaction, committed; returns the
    /// checksum of the entries popped.
    fn pop(&mut self, n: usize) -> (Duration, u64);
    /// Entry count and checksum of the whole table (untimed).
    fn state(&mut self) -> State;
    /// The table's B-tree: depth, branch pages, leaf pages (of 4 KiB: every store here uses
    /// 4 KiB pages).
    fn shape(&mut self) -> (u32, u64, u64);
    /// Compacts a copy into `dest` (a fresh directory) and returns its size in bytes: the data
    /// file as written, and after reopening it and committing one more entry (what a
    /// directory listing shows, lock file included).
    fn compacted(&mut self, dest: &Path, key: &Key) -> (u64, u64);
    /// libmdbx's dirty-page limit and its counts of pages spilled and read back so far (raw
    /// libmdbx only; `None` where the library does not expose them).
    fn spills(&mut self) -> Option<(u64, u64, u64)> {
        None
    }
}

/// With `TABULA_BENCH_SPILLS` set, prints what `store` spilled so far (after `phase`).
fn print_spills(name: &str, phase: &str, store: &mut dyn Store) {
    if std::env::var_os("TABULA_BENCH_SPILLS").is_none() {
        return;
    }
    if let Some((limit, spilled, unspilled)) = store.spills() {
        eprintln!(
            "{name}: after {phase}: dirty-page limit {limit} pages; spilled {spilled} pages, \
             read back {unspilled} so far"
        );
    }
}

/// Runs the phases on `store` up to phase `last` (the later ones are left out, so a profile
/// with `--variant LIB_insert_5m` sees the inserts alone), checking each one against `plan`.
fn run_store(name: &str, store: &mut dyn Store, plan: &Plan, last: usize) -> Figures {
    let mut f = Figures::default();
    f.times[0] = store.insert(&plan.keys);
    print_spills(name, "insert", store);
    check_state(
        &format!("{name}: after insert"),
        store.state(),
        plan.after_insert,
    );
    if std::env::var_os("TABULA_BENCH_SHAPE").is_some() {
        let (depth, branch, leaf) = store.shape();
        eprintln!(
            "{name}: after inserting {} entries: depth {depth}, {branch} branch pages, {leaf} \
             leaf pages ({:.1} entries per leaf)",
            plan.keys.len(),
            plan.after_insert.count as f64 / leaf.max(1) as f64
        );
    }
    if last < 1 {
        return f;
    }
    let (t, sum) = store.range(&plan.starts);
    crate::data::verify(&format!("{name}: range reads"), sum, plan.range_sum);
    f.times[1] = t;
    if last < 2 {
        return f;
    }
    f.times[2] = store.delete(plan.deletes());
    print_spills(name, "delete", store);
    check_state(
        &format!("{name}: after delete"),
        store.state(),
        plan.after_delete,
    );
    if last < 3 {
        return f;
    }
    let (t, removed, seen) = store.retain_even();
    assert_eq!(removed, plan.retained_removed, "{name}: retain removed");
    crate::data::verify(
        &format!("{name}: retain's reads"),
        seen,
        plan.after_delete.sum,
    );
    print_spills(name, "retain", store);
    check_state(
        &format!("{name}: after retain"),
        store.state(),
        plan.after_retain,
    );
    f.times[3] = t;
    if last < 4 {
        return f;
    }
    let (t, popped) = store.pop(plan.pops);
    crate::data::verify(&format!("{name}: popped"), popped, plan.popped_sum);
    check_state(&format!("{name}: after pop"), store.state(), plan.after_pop);
    f.times[4] = t;
    f
}

/// Operations each phase's figure is divided by.
fn ops(plan: &Plan, phase: usize) -> usize {
    match phase {
        0 => plan.keys.len(),
        1 => plan.starts.len(),
        2 => plan.deletes().len(),
        3 => plan.after_delete.count as usize,
        _ => plan.pops,
    }
    .max(1)
}

/// Runs every library at both sizes.
pub fn run(sizes: BigTxnSizes, quick: bool, investigate: bool) -> Workload {
    let title = format!(
        "{} and {} random inserts (24-byte keys, 150-byte values) in one write txn, then range \
         reads of {SCAN_LEN}, deletes of half, retain of every other, pops — each phase one \
         txn, durable commit included{}",
        sizes.entries[0],
        sizes.entries[1],
        if quick {
            " (--quick: a tenth of the full run's 1M and 5M, same row names)"
        } else {
            ""
        }
    );
    let mut w = Workload::new("big_txn", title, Unit::Ns);
    let mut compacted: Vec<(String, f64)> = Vec::new();
    for (i, (&n, label)) in sizes.entries.iter().zip(LABELS).enumerate() {
        let wanted = |lib: &str| {
            PHASES
                .iter()
                .any(|p| variant_wanted(&format!("{lib}_{p}_{label}")))
        };
        let knobs = if investigate { raw_knobs() } else { Vec::new() };
        let tabula_knobs = if investigate {
            tabula_knobs()
        } else {
            Vec::new()
        };
        let libs: Vec<&str> = LIBS
            .iter()
            .copied()
            .chain(tabula_knobs.iter().map(|(name, _)| *name))
            .chain(knobs.iter().map(|(name, _)| *name))
            .collect();
        if !libs.iter().any(|l| wanted(l)) {
            continue;
        }
        let plan = Plan::new(n, 0xB16_7A00 + i as u64);
        let open = |lib: &str, dir: &Path| -> Box<dyn Store> {
            match lib {
                "tabula" => Box::new(TabulaStore::open(dir, tabula_options())),
                "raw" => Box::new(RawStore::open(dir, &raw_like_tabula())),
                "heed" => Box::new(HeedStore::open(dir)),
                "redb" => Box::new(RedbStore::open(dir)),
                knob if knob.starts_with("tabula.") => {
                    let (_, options) = tabula_knobs
                        .iter()
                        .find(|(n, _)| *n == knob)
                        .expect("a knob");
                    let mut store = TabulaStore::open(dir, options.clone());
                    store.typed = knob == "tabula.typed";
                    store.sorted_insert = knob == "tabula.sorted_insert";
                    Box::new(store)
                }
                knob => {
                    let tune = &knobs.iter().find(|(n, _)| *n == knob).expect("a knob").1;
                    Box::new(RawStore::open(dir, tune))
                }
            }
        };
        // (library, last phase wanted, the figures of each round)
        let mut runs: Vec<(&str, usize, Vec<Figures>)> = libs
            .into_iter()
            .filter(|lib| wanted(lib))
            .map(|lib| {
                let last = (0..PHASES.len())
                    .rev()
                    .find(|&p| variant_wanted(&format!("{lib}_{}_{label}", PHASES[p])))
                    .unwrap_or(0);
                (lib, last, Vec::new())
            })
            .collect();
        for round in 0..ROUNDS {
            for k in 0..runs.len() {
                // Each round starts one library later in the order.
                let j = (k + round) % runs.len();
                let (lib, last) = (runs[j].0, runs[j].1);
                let dir = scratch_dir(&format!("big-{lib}"));
                let mut store = open(lib, dir.path());
                let f = run_store(lib, store.as_mut(), &plan, last);
                runs[j].2.push(f);
                if investigate && round == 0 {
                    // The table's B-tree after the phases: what a compacted copy holds of it.
                    let (_, branch, leaf) = store.shape();
                    compacted.push((
                        format!("{lib}_tree_{label}"),
                        ((branch + leaf) * 4096) as f64,
                    ));
                    let copy = scratch_dir(&format!("big-{lib}-compacted"));
                    let (written, reopened) = store.compacted(copy.path(), &pairs::keys(9, 1)[0]);
                    compacted.push((format!("{lib}_compacted_{label}"), written as f64));
                    compacted.push((format!("{lib}_reopened_{label}"), reopened as f64));
                }
            }
        }
        let figures: Vec<(&str, usize, Figures)> = runs
            .into_iter()
            .map(|(lib, last, rounds)| (lib, last, Figures::median(&rounds)))
            .collect();
        for (p, phase) in PHASES.iter().enumerate() {
            for (lib, last, f) in &figures {
                if p > *last {
                    continue;
                }
                let name = format!("{lib}_{phase}_{label}");
                let base = format!("raw_{phase}_{label}");
                let figure = || ns_per(f.times[p], ops(&plan, p));
                if LIBS.contains(lib) {
                    w.add(&name, figure, Some(&base));
                } else {
                    w.extra(&name, figure, Some(&base));
                }
            }
        }
    }
    for (name, bytes) in compacted {
        let base = format!(
            "heed_compacted_{}",
            name.rsplit('_').next().unwrap_or_default()
        );
        w.extra_in(&name, Unit::MiB, || bytes / (1 << 20) as f64, Some(&base));
    }
    w
}

// ---------------------------------------------------------------------------------------------
// Tabula

/// Tabula: inserts through `put_reserve`, deletes through `delete`, pops through
/// `pop_first`/`pop_last`; range reads through `range` with borrowed bounds and `retain`
/// through `retain_bytes` (deciding on the stored bytes), or with `typed` through `range` (an
/// owned `Vec<u8>` bound per read) and `retain` (every entry decoded into owned values).
struct TabulaStore {
    db: tabula::Db<Pairs24Schema>,
    typed: bool,
    /// Inserts by sorting the keys first and appending (`Appender::append` of borrowed bytes), the sort
    /// timed with the transaction: the unsorted-import path of `docs/benchmarks.md`.
    sorted_insert: bool,
}

impl TabulaStore {
    fn open(dir: &Path, options: tabula::Options) -> TabulaStore {
        TabulaStore {
            db: tabula::open::<Pairs24Schema>(dir, options).expect("open"),
            typed: false,
            sorted_insert: false,
        }
    }
}

impl Store for TabulaStore {
    fn insert(&mut self, keys: &[Key]) -> Duration {
        if self.sorted_insert {
            return time(|| {
                let mut sorted = keys.to_vec();
                sorted.sort_unstable();
                sorted.dedup();
                let mut tx = self.db.write().expect("write");
                {
                    let mut ap = tx.appender::<Pairs24>().expect("appender");
                    for k in &sorted {
                        ap.append(&k[..], &value_of(k)[..]).expect("append");
                    }
                }
                tx.commit().expect("commit");
            });
        }
        time(|| {
            let mut tx = self.db.write().expect("write");
            for k in keys {
                tx.put_reserve::<Pairs24, _>(&k[..], VALUE_LEN, |room| {
                    room.zeroed().copy_from_slice(&value_of(k))
                })
                .expect("put_reserve");
            }
            tx.commit().expect("commit");
        })
    }

    fn range(&mut self, starts: &[Key]) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let tx = self.db.read().expect("read");
            for s in starts {
                let mut it = if self.typed {
                    tx.range::<Pairs24>(s.to_vec()..)
                } else {
                    tx.range::<Pairs24>(&s[..]..)
                };
                for _ in 0..SCAN_LEN {
                    match it.next_raw() {
                        Some(e) => {
                            let (k, v) = e.expect("next_raw");
                            sum = sum.wrapping_add(pair_sum(k, v));
                        }
                        None => break,
                    }
                }
            }
        });
        (t, sum)
    }

    fn delete(&mut self, keys: &[Key]) -> Duration {
        time(|| {
            let mut tx = self.db.write().expect("write");
            for k in keys {
                tx.delete::<Pairs24>(&k[..]).expect("delete");
            }
            tx.commit().expect("commit");
        })
    }

    fn retain_even(&mut self) -> (Duration, u64, u64) {
        let (mut removed, mut seen, mut i) = (0, 0u64, 0u64);
        let t = time(|| {
            let mut tx = self.db.write().expect("write");
            let mut keep = |k: &[u8], v: &[u8]| {
                seen = seen.wrapping_add(pair_sum(k, v));
                i += 1;
                i % 2 == 1
            };
            removed = if self.typed {
                tx.retain::<Pairs24>(|k, v| keep(k, v))
            } else {
                tx.retain_bytes::<Pairs24>(.., keep)
            }
            .expect("retain");
            tx.commit().expect("commit");
        });
        (t, removed, seen)
    }

    fn pop(&mut self, n: usize) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let mut tx = self.db.write().expect("write");
            for i in 0..n {
                let e = if i % 2 == 0 {
                    tx.pop_first::<Pairs24>()
                } else {
                    tx.pop_last::<Pairs24>()
                };
                let (k, v) = e.expect("pop").expect("an entry to pop");
                sum = sum.wrapping_add(pair_sum(&k, &v));
            }
            tx.commit().expect("commit");
        });
        (t, sum)
    }

    fn state(&mut self) -> State {
        let tx = self.db.read().expect("read");
        let mut s = State::default();
        let mut it = tx.iter::<Pairs24>();
        while let Some(e) = it.next_raw() {
            let (k, v) = e.expect("next_raw");
            s.add(k, v);
        }
        s
    }

    fn shape(&mut self) -> (u32, u64, u64) {
        let st = self
            .db
            .read()
            .expect("read")
            .stat::<Pairs24>()
            .expect("stat");
        (st.depth, st.branch_pages, st.leaf_pages)
    }

    fn compacted(&mut self, dest: &Path, key: &Key) -> (u64, u64) {
        let copy = dest.join("db");
        self.db.copy_to(&copy, true).expect("copy_to");
        let written = dir_size(&copy);
        let db = tabula::open::<Pairs24Schema>(&copy, tabula_options()).expect("open the copy");
        let mut tx = db.write().expect("write");
        tx.put::<Pairs24>(&key[..], &value_of(key).to_vec())
            .expect("put");
        tx.commit().expect("commit");
        drop(db);
        (written, dir_size(&copy))
    }
}

// ---------------------------------------------------------------------------------------------
// Raw libmdbx

/// Raw libmdbx with the flags Tabula opens with (`MDBX_NOSTICKYTHREADS`, durable, 16 MiB growth
/// steps) and libmdbx's own key comparator (as Tabula's tables), plus `tune`'s settings.
struct RawStore {
    env: raw::Env,
    dbi: raw::Dbi,
}

impl RawStore {
    fn open(dir: &Path, tune: &Tune) -> RawStore {
        let flags = EnvFlags {
            no_sticky_threads: true,
            ..EnvFlags::DEFAULT
        };
        let env = raw::Env::open_tuned(dir, 1, flags, tune);
        let txn = env.begin(true);
        let dbi = txn.open_table(c"pairs24", raw::NO_FLAGS, true);
        txn.commit();
        RawStore { env, dbi }
    }
}

impl Store for RawStore {
    fn insert(&mut self, keys: &[Key]) -> Duration {
        time(|| {
            let mut txn = self.env.begin(true);
            for k in keys {
                txn.put(self.dbi, k, &value_of(k), 0);
            }
            txn.commit();
        })
    }

    fn range(&mut self, starts: &[Key]) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let txn = self.env.begin(false);
            let mut c = txn.cursor(self.dbi);
            for s in starts {
                let mut e = c.get(raw::SET_RANGE, Some(s)).map(|(k, v)| pair_sum(k, v));
                for i in 0..SCAN_LEN {
                    match e {
                        Some(x) => sum = sum.wrapping_add(x),
                        None => break,
                    }
                    if i + 1 < SCAN_LEN {
                        e = c.get(raw::NEXT, None).map(|(k, v)| pair_sum(k, v));
                    }
                }
            }
            c.close();
            txn.abort();
        });
        (t, sum)
    }

    fn delete(&mut self, keys: &[Key]) -> Duration {
        time(|| {
            let mut txn = self.env.begin(true);
            for k in keys {
                txn.del(self.dbi, k);
            }
            txn.commit();
        })
    }

    fn retain_even(&mut self) -> (Duration, u64, u64) {
        let (mut removed, mut seen) = (0, 0u64);
        let t = time(|| {
            let txn = self.env.begin(true);
            let mut c = txn.cursor(self.dbi);
            let mut i = 0u64;
            let mut op = raw::FIRST;
            while let Some((k, v)) = c.get(op, None) {
                seen = seen.wrapping_add(pair_sum(k, v));
                if i % 2 == 1 {
                    c.del_current();
                    removed += 1;
                }
                i += 1;
                op = raw::NEXT;
            }
            c.close();
            txn.commit();
        });
        (t, removed, seen)
    }

    fn pop(&mut self, n: usize) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let txn = self.env.begin(true);
            for i in 0..n {
                // A cursor per pop, as a pop call is on its own.
                let mut c = txn.cursor(self.dbi);
                let op = if i % 2 == 0 { raw::FIRST } else { raw::LAST };
                let (k, v) = c.get(op, None).expect("an entry to pop");
                sum = sum.wrapping_add(pair_sum(k, v));
                c.del_current();
                c.close();
            }
            txn.commit();
        });
        (t, sum)
    }

    fn state(&mut self) -> State {
        let txn = self.env.begin(false);
        let mut c = txn.cursor(self.dbi);
        let mut s = State::default();
        let mut op = raw::FIRST;
        while let Some((k, v)) = c.get(op, None) {
            s.add(k, v);
            op = raw::NEXT;
        }
        c.close();
        txn.abort();
        s
    }

    fn shape(&mut self) -> (u32, u64, u64) {
        let txn = self.env.begin(false);
        let shape = txn.tree_shape(self.dbi);
        txn.abort();
        shape
    }

    fn spills(&mut self) -> Option<(u64, u64, u64)> {
        let (spilled, unspilled) = self.env.spill_counts();
        Some((
            self.env.option(mdbx_sys::MDBX_opt_txn_dp_limit),
            spilled,
            unspilled,
        ))
    }

    fn compacted(&mut self, dest: &Path, key: &Key) -> (u64, u64) {
        let copy = dest.join("db");
        std::fs::create_dir(&copy).expect("mkdir");
        self.env.copy_compact(&copy.join("mdbx.dat"));
        let written = dir_size(&copy);
        let env = RawStore::open(&copy, &raw_like_tabula());
        let mut txn = env.env.begin(true);
        txn.put(env.dbi, key, &value_of(key), 0);
        txn.commit();
        drop(env);
        (written, dir_size(&copy))
    }
}

// ---------------------------------------------------------------------------------------------
// heed (LMDB)

type HeedPairs = heed::Database<'static, Bytes, Bytes>;

struct HeedStore {
    env: heed::Env,
    db: HeedPairs,
}

impl HeedStore {
    fn open(dir: &Path) -> HeedStore {
        let mut opts = EnvOpenOptions::new();
        opts.map_size(HEED_MAP_SIZE).max_dbs(1);
        // SAFETY: a fresh directory nothing else opens, default flags.
        let env = unsafe { opts.open(dir) }.expect("heed open");
        let wtxn = env.write_txn().expect("heed write");
        let db: HeedPairs = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("pairs24"))?;
                Ok(CommitOrAbort::<_, ()>::Commit(db))
            })
            .expect("heed create")
            .unwrap_commit();
        HeedStore { env, db }
    }
}

impl Store for HeedStore {
    fn insert(&mut self, keys: &[Key]) -> Duration {
        time(|| {
            let mut wtxn = self.env.write_txn().expect("heed write");
            for k in keys {
                self.db.put(&mut wtxn, k, &value_of(k)).expect("heed put");
            }
            wtxn.commit().expect("heed commit");
        })
    }

    fn range(&mut self, starts: &[Key]) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let rtxn = self.env.read_txn().expect("heed read");
            for s in starts {
                let bounds = (Bound::Included(&s[..]), Bound::Unbounded);
                let it = self.db.range(&rtxn, &bounds).expect("heed range");
                for e in it.take(SCAN_LEN) {
                    let (k, v) = e.expect("heed next");
                    sum = sum.wrapping_add(pair_sum(k, v));
                }
            }
        });
        (t, sum)
    }

    fn delete(&mut self, keys: &[Key]) -> Duration {
        time(|| {
            let mut wtxn = self.env.write_txn().expect("heed write");
            for k in keys {
                self.db.delete(&mut wtxn, &k[..]).expect("heed delete");
            }
            wtxn.commit().expect("heed commit");
        })
    }

    fn retain_even(&mut self) -> (Duration, u64, u64) {
        let (mut removed, mut seen) = (0, 0u64);
        let t = time(|| {
            let mut wtxn = self.env.write_txn().expect("heed write");
            {
                let mut it = self.db.iter_mut(&mut wtxn).expect("heed iter_mut");
                let mut i = 0u64;
                while let Some(e) = it.next() {
                    let (k, v) = e.expect("heed next");
                    seen = seen.wrapping_add(pair_sum(k, v));
                    if i % 2 == 1 {
                        // SAFETY: nothing read from the table is borrowed past this point
                        // (the checksum was taken).
                        unsafe { it.del_current() }.expect("heed del_current");
                        removed += 1;
                    }
                    i += 1;
                }
            }
            wtxn.commit().expect("heed commit");
        });
        (t, removed, seen)
    }

    fn pop(&mut self, n: usize) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let mut wtxn = self.env.write_txn().expect("heed write");
            for i in 0..n {
                if i % 2 == 0 {
                    let mut it = self.db.iter_mut(&mut wtxn).expect("heed iter_mut");
                    let (k, v) = it.next().expect("an entry").expect("heed next");
                    sum = sum.wrapping_add(pair_sum(k, v));
                    // SAFETY: the checksum was taken; nothing borrowed is used after this.
                    unsafe { it.del_current() }.expect("heed del_current");
                } else {
                    let mut it = self.db.rev_iter_mut(&mut wtxn).expect("heed rev_iter_mut");
                    let (k, v) = it.next().expect("an entry").expect("heed next");
                    sum = sum.wrapping_add(pair_sum(k, v));
                    // SAFETY: as above.
                    unsafe { it.del_current() }.expect("heed del_current");
                }
            }
            wtxn.commit().expect("heed commit");
        });
        (t, sum)
    }

    fn state(&mut self) -> State {
        let rtxn = self.env.read_txn().expect("heed read");
        let mut s = State::default();
        for e in self.db.iter(&rtxn).expect("heed iter") {
            let (k, v) = e.expect("heed next");
            s.add(k, v);
        }
        s
    }

    fn shape(&mut self) -> (u32, u64, u64) {
        let rtxn = self.env.read_txn().expect("heed read");
        let st = self.db.stat(&rtxn).expect("heed stat");
        (st.depth, st.branch_pages as u64, st.leaf_pages as u64)
    }

    fn compacted(&mut self, dest: &Path, key: &Key) -> (u64, u64) {
        let copy = dest.join("db");
        std::fs::create_dir(&copy).expect("mkdir");
        self.env
            .copy_to_path(copy.join("data.mdb"), CompactionOption::Enabled)
            .expect("heed copy");
        let written = dir_size(&copy);
        let mut opts = EnvOpenOptions::new();
        opts.map_size(HEED_MAP_SIZE).max_dbs(1);
        // SAFETY: the copy's directory, which nothing else opens.
        let env = unsafe { opts.open(&copy) }.expect("heed open the copy");
        let rtxn = env.read_txn().expect("heed read");
        let db: HeedPairs = env
            .open_databases_and_commit(rtxn, |opener, rtxn| -> heed::Result<_> {
                let db = opener.open_database::<Bytes, Bytes>(rtxn, Some("pairs24"))?;
                Ok(CommitOrAbort::<_, ()>::Commit(db.expect("the table")))
            })
            .expect("heed open db")
            .unwrap_commit();
        let mut wtxn = env.write_txn().expect("heed write");
        db.put(&mut wtxn, key, &value_of(key)).expect("heed put");
        wtxn.commit().expect("heed commit");
        env.prepare_for_closing().wait();
        (written, dir_size(&copy))
    }
}

// ---------------------------------------------------------------------------------------------
// redb

const REDB_PAIRS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("pairs24");

struct RedbStore {
    db: redb::Database,
    dir: std::path::PathBuf,
}

impl RedbStore {
    fn open(dir: &Path) -> RedbStore {
        let db = redb::Database::create(redb_file(dir)).expect("redb create");
        let wtx = db.begin_write().expect("redb write");
        wtx.open_table(REDB_PAIRS).expect("redb table");
        wtx.commit().expect("redb commit");
        RedbStore {
            db,
            dir: dir.to_path_buf(),
        }
    }
}

impl Store for RedbStore {
    fn insert(&mut self, keys: &[Key]) -> Duration {
        time(|| {
            let wtx = self.db.begin_write().expect("redb write");
            {
                let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
                for k in keys {
                    t.insert(&k[..], &value_of(k)[..]).expect("redb insert");
                }
            }
            wtx.commit().expect("redb commit");
        })
    }

    fn range(&mut self, starts: &[Key]) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let rtx = self.db.begin_read().expect("redb read");
            let t = rtx.open_table(REDB_PAIRS).expect("redb table");
            for s in starts {
                for e in t.range(&s[..]..).expect("redb range").take(SCAN_LEN) {
                    let (k, v) = e.expect("redb next");
                    sum = sum.wrapping_add(pair_sum(k.value(), v.value()));
                }
            }
        });
        (t, sum)
    }

    fn delete(&mut self, keys: &[Key]) -> Duration {
        time(|| {
            let wtx = self.db.begin_write().expect("redb write");
            {
                let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
                for k in keys {
                    t.remove(&k[..]).expect("redb remove");
                }
            }
            wtx.commit().expect("redb commit");
        })
    }

    fn retain_even(&mut self) -> (Duration, u64, u64) {
        let (mut seen, mut i, mut removed) = (0u64, 0u64, 0u64);
        let t = time(|| {
            let wtx = self.db.begin_write().expect("redb write");
            {
                let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
                t.retain(|k, v| {
                    seen = seen.wrapping_add(pair_sum(k, v));
                    i += 1;
                    let keep = i % 2 == 1;
                    removed += u64::from(!keep);
                    keep
                })
                .expect("redb retain");
            }
            wtx.commit().expect("redb commit");
        });
        (t, removed, seen)
    }

    fn pop(&mut self, n: usize) -> (Duration, u64) {
        let mut sum = 0u64;
        let t = time(|| {
            let wtx = self.db.begin_write().expect("redb write");
            {
                let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
                for i in 0..n {
                    let e = if i % 2 == 0 {
                        t.pop_first()
                    } else {
                        t.pop_last()
                    };
                    let (k, v) = e.expect("redb pop").expect("an entry to pop");
                    sum = sum.wrapping_add(pair_sum(k.value(), v.value()));
                }
            }
            wtx.commit().expect("redb commit");
        });
        (t, sum)
    }

    fn state(&mut self) -> State {
        let rtx = self.db.begin_read().expect("redb read");
        let t = rtx.open_table(REDB_PAIRS).expect("redb table");
        let mut s = State::default();
        for e in t.iter().expect("redb iter") {
            let (k, v) = e.expect("redb next");
            s.add(k.value(), v.value());
        }
        assert_eq!(t.len().expect("redb len"), s.count);
        s
    }

    fn shape(&mut self) -> (u32, u64, u64) {
        let rtx = self.db.begin_read().expect("redb read");
        let t = rtx.open_table(REDB_PAIRS).expect("redb table");
        let st = t.stats().expect("redb stats");
        (st.tree_height(), st.branch_pages(), st.leaf_pages())
    }

    fn compacted(&mut self, _dest: &Path, key: &Key) -> (u64, u64) {
        // redb compacts in place.
        while self.db.compact().expect("redb compact") {}
        let written = dir_size(&self.dir);
        let wtx = self.db.begin_write().expect("redb write");
        {
            let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
            t.insert(&key[..], &value_of(key)[..]).expect("redb insert");
        }
        wtx.commit().expect("redb commit");
        (written, dir_size(&self.dir))
    }
}

/// The bytes of every file in `dir` (what the peer benchmark measures).
fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").metadata().expect("metadata").len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workload at a tiny size: every row of every library runs, every phase's reads and
    /// the state it leaves match the model (each phase panics otherwise), and no figure is
    /// broken.
    #[test]
    fn every_row_runs_and_checks_out() {
        let w = run(
            BigTxnSizes {
                entries: [2_000, 3_000],
            },
            true,
            true,
        );
        for label in LABELS {
            for phase in PHASES {
                for lib in LIBS {
                    let name = format!("{lib}_{phase}_{label}");
                    assert!(w.get(&name).is_some(), "row {name} missing");
                }
            }
        }
        assert!(w.invalid().is_empty(), "{:?}", w.invalid());
    }
}
