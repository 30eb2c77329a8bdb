//! Tabula's benchmarks: the four seed workloads, side by side with raw libmdbx (`mdbx-sys`),
//! heed (LMDB) and redb.
//!
//! ```text
//! cargo run --release -p tabula-bench -- [--quick] [--json PATH] [--only WORKLOAD[,..]]
//!     [--variant NAME[,..]] [--scale F] [--no-investigate]
//! ```
//!
//! Prints one table per workload (variant, figure, ratio to the raw-libmdbx row), a line per
//! target saying whether it holds, and with `--json` writes the figures. `docs/benchmarks.md`
//! explains every row; `docs/benchmarks-get-cold.md` the get_cold investigation rows
//! (`TABULA_BENCH_VM=1` prints each variant's mapping, faults and tree shape,
//! `TABULA_BENCH_COLD_SWEEP=1` adds every environment setting tried).

use std::process::ExitCode;

use tabula_bench::report::{self, Workload};
use tabula_bench::workloads::append::AppendSizes;
use tabula_bench::workloads::get::GetSizes;
use tabula_bench::workloads::many_tables::ManySizes;
use tabula_bench::workloads::short_reads::ShortSizes;
use tabula_bench::{util, workloads};

/// Every workload's sizes.
struct Sizes {
    get_hot: GetSizes,
    get_cold: GetSizes,
    gets: usize,
    append: AppendSizes,
    short: ShortSizes,
    many: ManySizes,
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
        self
    }
}

const WORKLOADS: [&str; 5] = [
    "get_hot",
    "get_cold",
    "append",
    "short_reads",
    "many_tables",
];

struct Args {
    quick: bool,
    json: Option<std::path::PathBuf>,
    only: Vec<String>,
    variants: Vec<String>,
    scale: f64,
    investigate: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        json: None,
        only: Vec::new(),
        variants: Vec::new(),
        scale: 1.0,
        investigate: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--no-investigate" => args.investigate = false,
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
                     [--variant NAME[,..]] [--scale F] [--no-investigate]"
                        .to_string(),
                );
            }
            other => return Err(format!("unknown argument `{other}` (try --help)")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
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
    println!("\n== targets");
    for t in report::targets(&done) {
        let verdict = match t.holds {
            Some(true) => "HOLDS ",
            Some(false) => "MISSED",
            None => "  --  ",
        };
        println!("{verdict} {}", t.text);
    }
    println!("\nwall time {:.1} s", started.elapsed().as_secs_f64());
    if let Some(path) = args.json {
        if let Err(e) = std::fs::write(&path, report::to_json(&done)) {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}

fn heed_version() -> String {
    let v = heed::lmdb_version();
    format!("{}.{}.{}", v.major, v.minor, v.patch)
}
