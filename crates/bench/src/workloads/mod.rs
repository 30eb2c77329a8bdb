//! The four seed workloads (get hot and cold are one module).

pub mod append;
pub mod get;
pub mod many_tables;
pub mod short_reads;

use std::path::Path;

/// heed's map size: a bound on the file, not an allocation.
pub const HEED_MAP_SIZE: usize = 8 << 30;

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
