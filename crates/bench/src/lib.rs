//! The pieces of Tabula's benchmark binary (`src/main.rs`) and of its criterion bench
//! (`benches/paths.rs`): raw libmdbx wrappers, the table declarations, the workloads and the
//! report. Not published; see `docs/benchmarks.md`.

pub mod raw;
pub mod report;
pub mod tables;
pub mod util;
pub mod vm;
pub mod workloads;
