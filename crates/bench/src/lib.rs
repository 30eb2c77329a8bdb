//! The pieces of Tabula's benchmark binary (`src/main.rs`) and of its criterion bench
//! (`benches/paths.rs`): raw libmdbx wrappers, the table declarations, the stored data and its
//! checksums, the workloads and the report. Not published; see `docs/benchmarks.md`.
//!
//! The one crate besides `tabula-core`'s engine with `unsafe`: the raw-libmdbx baseline rows
//! must call libmdbx directly (through Tabula they would not be a baseline), and dup_seek's
//! LMDB row calls LMDB's C API (`lmdb`), which heed's API does not reach. Every block carries a
//! `// SAFETY:` comment.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod data;
pub mod lmdb;
pub mod pairs;
pub mod raw;
pub mod report;
pub mod tables;
pub mod targets;
pub mod util;
pub mod vm;
pub mod workloads;
