//! The workloads: the four seed workloads (get hot and cold are one module) and the ones users
//! run beyond them (scan, upsert, big values, mixed reads and writes, open, seeks by subkey in a
//! dupsort table, pruning with a write cursor).

pub mod append;
pub mod async_reads;
pub mod big_txn;
pub mod big_values;
pub mod dup_seek;
pub mod get;
pub mod history;
pub mod indexed;
pub mod load;
pub mod many_tables;
pub mod mixed;
pub mod open;
pub mod prune;
pub mod scan;
pub mod short_reads;
pub mod small_commits;
pub mod upsert;
pub mod watch;

use std::path::Path;

/// The largest any benchmark file may grow (a bound, not an allocation), the same for every
/// variant: libmdbx's upper geometry bound and heed's map size. Small enough for valgrind to
/// reserve the address space (Tabula's default of 1 TiB is not).
pub const MAX_SIZE: usize = 8 << 30;

/// heed's map size.
pub const HEED_MAP_SIZE: usize = MAX_SIZE;

/// Tabula's options in every benchmark: the defaults (durable sync) with [`MAX_SIZE`].
/// `TABULA_BENCH_FEWER_WRITES=1` sets `balance_pages(false)` (libmdbx's own page split, Tabula's
/// default before issue 26) for before/after comparisons of the other workloads.
pub fn tabula_options() -> tabula::Options {
    let options = tabula::Options::new().max_size(MAX_SIZE);
    if std::env::var_os("TABULA_BENCH_FEWER_WRITES").is_some() {
        options.balance_pages(false)
    } else {
        options
    }
}

/// A fresh directory for one variant, removed on drop.
pub fn scratch_dir(variant: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("tabula-bench-{variant}-"))
        .tempdir()
        .expect("create a temp dir")
}

/// The redb file inside a variant's directory.
pub fn redb_file(dir: &Path) -> std::path::PathBuf {
    dir.join("bench.redb")
}
