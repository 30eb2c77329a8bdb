//! Tabula's benchmarks: the four seed workloads and the new ones (scan, upsert, big values,
//! mixed, open, dup_seek, prune, indexed), side by side with raw libmdbx (`mdbx-sys`), heed (LMDB) and redb
//! (and native_db in `indexed`).
//!
//! ```text
//! cargo run --release -p tabula-bench -- [--quick] [--json PATH] [--only WORKLOAD[,..]]
//!     [--variant NAME[,..]] [--scale F] [--no-investigate] [--allow-misses]
//! ```
//!
//! Prints one table per workload (variant, figure, ratio to its base row), a line per target
//! saying whether it holds, and with `--json` writes the figures. Exits 1 when a target misses
//! (unless `--allow-misses`) or when a figure is broken (NaN, zero, a row missing), 2 on a bad
//! command line; a variant that reads wrong data panics (exit 101). `docs/benchmarks.md`
//! explains every row; `docs/benchmarks-get-cold.md` the get_cold investigation rows
//! (`TABULA_BENCH_VM=1` prints each variant's mapping, faults and tree shape,
//! `TABULA_BENCH_COLD_SWEEP=1` adds every environment setting tried).

use std::process::ExitCode;

use tabula_bench::report::{self, Verdict, Workload};
use tabula_bench::workloads::append::AppendSizes;
use tabula_bench::workloads::async_reads::AsyncSizes;
use tabula_bench::workloads::big_txn::BigTxnSizes;
use tabula_bench::workloads::big_values::BigSizes;
use tabula_bench::workloads::dup_seek::DupSeekSizes;
use tabula_bench::workloads::get::GetSizes;
use tabula_bench::workloads::history::HistorySizes;
use tabula_bench::workloads::indexed::IndexedSizes;
use tabula_bench::workloads::many_tables::ManySizes;
use tabula_bench::workloads::mixed::MixedSizes;
use tabula_bench::workloads::open::OpenSizes;
use tabula_bench::workloads::prune::PruneSizes;
use tabula_bench::workloads::scan::ScanSizes;
use tabula_bench::workloads::short_reads::ShortSizes;
use tabula_bench::workloads::small_commits::SmallCommitsSizes;
use tabula_bench::workloads::upsert::UpsertSizes;
use tabula_bench::workloads::watch::WatchSizes;
use tabula_bench::{targets, util, workloads};

/// Every workload's sizes.
struct Sizes {
    get_hot: GetSizes,
    get_cold: GetSizes,
    gets: usize,
    append: AppendSizes,
    short: ShortSizes,
    many: ManySizes,
    scan: ScanSizes,
    upsert: UpsertSizes,
    big: BigSizes,
    mixed: MixedSizes,
    async_reads: AsyncSizes,
    open: OpenSizes,
    dup_seek: DupSeekSizes,
    prune: PruneSizes,
    big_txn: BigTxnSizes,
    small_commits: SmallCommitsSizes,
    watch: WatchSizes,
    indexed: IndexedSizes,
    history: HistorySizes,
}

impl Sizes {
    /// The issue's sizes: the published figures.
    fn full() -> Sizes {
        Sizes {
            get_hot: GetSizes {
                entries: 1024,
                other_tables: 100,
                reps: 5,
            },
            get_cold: GetSizes {
                entries: 1_000_000,
                other_tables: 100,
                reps: 3,
            },
            gets: 2_000_000,
            append: AppendSizes {
                entries: 1_000_000,
                batch: 1000,
                reps: 3,
            },
            short: ShortSizes {
                entries: 100_000,
                requests: 400_000,
                reps: 3,
            },
            many: ManySizes {
                iterations: 500_000,
                reps: 3,
            },
            scan: ScanSizes {
                entries: 1_000_000,
                reps: 3,
            },
            upsert: UpsertSizes {
                entries: 1_000_000,
                puts: 1_000_000,
                batch: 1000,
                reps: 1,
            },
            big: BigSizes {
                stored: 128 << 20,
                read: 1 << 30,
                reps: 3,
            },
            mixed: MixedSizes {
                entries: 100_000,
                duration: std::time::Duration::from_secs(3),
                reps: 3,
            },
            async_reads: AsyncSizes {
                entries: 1_000_000,
                requests: 5_000,
                reps: 5,
            },
            open: OpenSizes { reps: 15 },
            dup_seek: DupSeekSizes {
                keys: 100_000,
                seeks: 1_000_000,
                reps: 5,
            },
            prune: PruneSizes {
                entries: 1_000_000,
                reps: 9,
            },
            big_txn: BigTxnSizes {
                entries: [1_000_000, 5_000_000],
            },
            small_commits: SmallCommitsSizes {
                loaded: 1_000_000,
                flushed_commits: 1_000,
                unflushed_commits: 50_000,
                rounds: 5,
            },
            watch: WatchSizes {
                loaded: 1_000_000,
                commits: 10_000,
                rounds: 5,
                samples: 2_000,
                spacing: std::time::Duration::from_millis(1),
            },
            indexed: IndexedSizes {
                rows: 1_000_000,
                batch: 1000,
                queries: 10_000,
                reps: 3,
            },
            history: HistorySizes {
                keys: 100_000,
                versions: 2_000,
                changes: 50,
                puts: 5_000,
                queries: 100_000,
                unwound: 1_000,
                reps: 5,
            },
        }
    }

    /// A tenth of the work (a whole run well under a minute on two cores).
    fn quick() -> Sizes {
        let full = Sizes::full();
        Sizes {
            get_hot: GetSizes {
                reps: 3,
                ..full.get_hot
            },
            get_cold: GetSizes {
                entries: 100_000,
                ..full.get_cold
            },
            gets: 200_000,
            append: AppendSizes {
                entries: 100_000,
                ..full.append
            },
            short: ShortSizes {
                entries: 10_000,
                requests: 40_000,
                reps: 3,
            },
            many: ManySizes {
                iterations: 50_000,
                reps: 3,
            },
            scan: ScanSizes {
                entries: 100_000,
                reps: 3,
            },
            upsert: UpsertSizes {
                entries: 100_000,
                puts: 100_000,
                ..full.upsert
            },
            big: BigSizes {
                stored: 16 << 20,
                read: 128 << 20,
                reps: 3,
            },
            mixed: MixedSizes {
                entries: 100_000,
                duration: std::time::Duration::from_secs(1),
                reps: 1,
            },
            async_reads: AsyncSizes {
                entries: 100_000,
                requests: 5_000,
                reps: 3,
            },
            open: OpenSizes { reps: 5 },
            dup_seek: DupSeekSizes {
                keys: 10_000,
                seeks: 100_000,
                reps: 9,
            },
            prune: PruneSizes {
                entries: 100_000,
                reps: 15,
            },
            big_txn: BigTxnSizes {
                entries: [100_000, 500_000],
            },
            small_commits: SmallCommitsSizes {
                loaded: 100_000,
                flushed_commits: 200,
                unflushed_commits: 5_000,
                rounds: 3,
            },
            watch: WatchSizes {
                loaded: 100_000,
                commits: 2_000,
                rounds: 5,
                samples: 500,
                spacing: std::time::Duration::from_millis(1),
            },
            indexed: IndexedSizes {
                rows: 100_000,
                queries: 1_000,
                ..full.indexed
            },
            history: HistorySizes {
                keys: 10_000,
                versions: 1_100,
                changes: 20,
                puts: 1_000,
                queries: 10_000,
                unwound: 1_000,
                reps: 3,
            },
        }
    }
}

impl Sizes {
    /// Operation counts (not table sizes) multiplied by `f`, for profiling under valgrind.
    fn scaled(mut self, f: f64) -> Sizes {
        let s = |n: usize| ((n as f64 * f) as usize).max(1);
        self.gets = s(self.gets);
        self.append.entries = s(self.append.entries as usize) as u32;
        self.append.batch = self.append.batch.min(self.append.entries);
        self.short.requests = s(self.short.requests).max(8);
        self.many.iterations = s(self.many.iterations);
        self.upsert.puts = s(self.upsert.puts).max(self.upsert.batch);
        self.big.read = s(self.big.read);
        self.mixed.duration = self.mixed.duration.mul_f64(f);
        self.dup_seek.seeks = s(self.dup_seek.seeks);
        self.big_txn.entries = self.big_txn.entries.map(|n| s(n).max(100));
        self.small_commits.flushed_commits = s(self.small_commits.flushed_commits).max(10);
        self.small_commits.unflushed_commits = s(self.small_commits.unflushed_commits).max(10);
        self.watch.commits = s(self.watch.commits).max(10);
        self.watch.samples = s(self.watch.samples).max(10);
        self.indexed.queries = s(self.indexed.queries).max(1);
        self.history.queries = s(self.history.queries as usize).max(1) as u64;
        self
    }
}

const WORKLOADS: [&str; 18] = [
    "get_hot",
    "get_cold",
    "append",
    "short_reads",
    "many_tables",
    "scan",
    "upsert",
    "big_values",
    "mixed",
    "async_reads",
    "open",
    "dup_seek",
    "prune",
    "big_txn",
    "small_commits",
    "watch",
    "indexed",
    "history",
];

struct Args {
    quick: bool,
    json: Option<std::path::PathBuf>,
    only: Vec<String>,
    variants: Vec<String>,
    scale: f64,
    investigate: bool,
    allow_misses: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        json: None,
        only: Vec::new(),
        variants: Vec::new(),
        scale: 1.0,
        investigate: true,
        allow_misses: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--no-investigate" => args.investigate = false,
            "--allow-misses" => args.allow_misses = true,
            "--json" => args.json = Some(it.next().ok_or("--json needs a path")?.into()),
            "--only" => {
                let list = it.next().ok_or("--only needs a workload name")?;
                for name in list.split(',') {
                    if !WORKLOADS.contains(&name) {
                        return Err(format!(
                            "unknown workload `{name}`; expected one of {}",
                            WORKLOADS.join(", ")
                        ));
                    }
                    args.only.push(name.to_string());
                }
            }
            "--variant" => {
                let list = it.next().ok_or("--variant needs a variant name")?;
                args.variants.extend(list.split(',').map(str::to_string));
            }
            "--scale" => {
                let f = it.next().ok_or("--scale needs a factor")?;
                args.scale = f
                    .parse()
                    .ok()
                    .filter(|x: &f64| *x > 0.0 && *x <= 1.0)
                    .ok_or("--scale needs a factor in (0, 1]")?;
            }
            "-h" | "--help" => {
                return Err(
                    "usage: tabula-bench [--quick] [--json PATH] [--only WORKLOAD[,..]] \
                     [--variant NAME[,..]] [--scale F] [--no-investigate] [--allow-misses]"
                        .to_string(),
                );
            }
            other => return Err(format!("unknown argument `{other}` (try --help)")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    // The follower process of the watch workload's cross-process latency rows.
    if let Some(dir) = std::env::var_os(workloads::watch::FOLLOWER_VAR) {
        workloads::watch::follower(std::path::Path::new(&dir));
        return ExitCode::SUCCESS;
    }
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    let sizes = if args.quick {
        Sizes::quick()
    } else {
        Sizes::full()
    }
    .scaled(args.scale);
    report::only_variants(args.variants.clone());
    let wanted = |name: &str| args.only.is_empty() || args.only.iter().any(|o| o == name);
    println!(
        "tabula-bench ({} run): libmdbx {}, LMDB {} (heed), redb; {} cores",
        if args.quick { "quick" } else { "full" },
        tabula::libmdbx_version(),
        heed_version(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let started = std::time::Instant::now();
    let mut done: Vec<Workload> = Vec::new();
    let mut finish = |w: Workload| {
        print!("{}", w.render());
        done.push(w);
    };
    if wanted("get_hot") {
        let s = sizes.get_hot;
        let keys = util::key_sequence(0x5EED_0000, s.entries, sizes.gets);
        finish(workloads::get::run("get_hot", s, &keys, args.investigate));
    }
    if wanted("get_cold") {
        let s = sizes.get_cold;
        let keys = util::key_sequence(0x5EED_0001, s.entries, sizes.gets);
        finish(workloads::get::run("get_cold", s, &keys, args.investigate));
    }
    if wanted("append") {
        finish(workloads::append::run(sizes.append, args.investigate));
    }
    if wanted("short_reads") {
        let s = sizes.short;
        let keys = util::key_sequence(0x5EED_0003, s.entries, s.requests);
        finish(workloads::short_reads::run(s, &keys));
    }
    if wanted("many_tables") {
        finish(workloads::many_tables::run(sizes.many));
    }
    if wanted("scan") {
        finish(workloads::scan::run(sizes.scan));
    }
    if wanted("upsert") {
        finish(workloads::upsert::run(sizes.upsert, args.investigate));
    }
    if wanted("big_values") {
        finish(workloads::big_values::run(sizes.big));
    }
    if wanted("mixed") {
        finish(workloads::mixed::run(sizes.mixed));
    }
    if wanted("async_reads") {
        let s = sizes.async_reads;
        let keys = util::key_sequence(0x5EED_0004, s.entries, s.requests);
        finish(workloads::async_reads::run(s, &keys));
    }
    if wanted("open") {
        finish(workloads::open::run(sizes.open));
    }
    if wanted("dup_seek") {
        finish(workloads::dup_seek::run(sizes.dup_seek, args.investigate));
    }
    if wanted("prune") {
        finish(workloads::prune::run(sizes.prune));
    }
    if wanted("big_txn") {
        finish(workloads::big_txn::run(
            sizes.big_txn,
            args.quick,
            args.investigate,
        ));
    }
    if wanted("small_commits") {
        finish(workloads::small_commits::run(
            sizes.small_commits,
            args.investigate,
        ));
    }
    if wanted("watch") {
        finish(workloads::watch::run(sizes.watch));
    }
    if wanted("indexed") {
        finish(workloads::indexed::run(sizes.indexed));
    }
    if wanted("history") {
        finish(workloads::history::run(sizes.history));
    }
    println!("\n== targets");
    let targets = targets::targets(&done);
    let mut not_run = 0;
    for t in &targets {
        let verdict = match t.verdict {
            Verdict::Holds => "HOLDS ",
            Verdict::Missed => "MISSED",
            Verdict::NotRun => {
                not_run += 1;
                continue;
            }
            Verdict::Invalid(_) => "BROKEN",
        };
        println!("{verdict} {}", t.text);
    }
    if not_run > 0 {
        println!("  --   {not_run} target(s) of workloads or rows not run");
    }
    println!("\nwall time {:.1} s", started.elapsed().as_secs_f64());
    let invalid: Vec<String> = done.iter().flat_map(Workload::invalid).collect();
    if let Some(path) = args.json {
        let written = report::to_json(&done)
            .and_then(|json| std::fs::write(&path, json).map_err(|e| e.to_string()));
        match written {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => {
                eprintln!("cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    match report::outcome(&targets, &invalid, args.allow_misses) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::FAILURE
        }
    }
}

fn heed_version() -> String {
    let v = heed::lmdb_version();
    format!("{}.{}.{}", v.major, v.minor, v.patch)
}
