//! The indexed workload's variants at a chosen size, for counting instructions rather than
//! timing them (repeatable on a loaded machine). A variant runs the workload's four phases
//! (insert, query, update, delete) once on a fresh store and checks what they found.
//!
//! ```text
//! cargo build --release -p tabula-bench --example indexed_costs
//! # per query: the same rows, Q and 2Q queries
//! for q in 2000 4000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/indexed_costs tabula 20000 $q 2>&1 | grep Collected
//! done
//! # per row (the three write phases together): R and 2R rows, no queries
//! for r in 20000 40000; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/indexed_costs raw $r 0 2>&1 | grep Collected
//! done
//! ```
//!
//! Arguments: variant (`tabula`, `raw`, `native_db`), rows, queries.

use tabula_bench::workloads::indexed::{IndexedSizes, run_variant};

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: indexed_costs tabula|raw|native_db [ROWS] [QUERIES]";
    let lib = args.next().unwrap_or_default();
    let rows: Option<u64> = args.next().map_or(Some(20_000), |s| s.parse().ok());
    let queries: Option<usize> = args.next().map_or(Some(2_000), |s| s.parse().ok());
    let (Some(rows), Some(queries)) = (rows, queries) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if !["tabula", "raw", "native_db"].contains(&lib.as_str()) {
        eprintln!("{usage}");
        std::process::exit(2);
    }
    let sizes = IndexedSizes {
        rows,
        batch: 1000,
        queries,
        reps: 1,
    };
    println!("{lib}: queries found {}", run_variant(&lib, sizes));
}
