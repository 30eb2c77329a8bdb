//! `tabula`: inspect any Tabula database without the application's code.
//!
//! Every command opens the database read-only (except `copy`, which writes only the destination,
//! and `train-dict`, which adds a zstd dictionary) and reads the schema record Tabula keeps in its meta table: table flags, key descriptors and
//! value shapes. Keys are given and shown in their typed JSON form; values are decoded from the
//! recorded shape. `--json` makes every command print JSON for scripts.
//!
//! Exit codes: 0 success; 1 a problem with the database (missing, not MDBX, written by a newer
//! Tabula, a key not found, `check` found problems); 2 a usage error (bad arguments, unknown
//! table, a key that does not parse for the table's key descriptor).

#![forbid(unsafe_code)]

mod commands;
mod json;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Inspect any Tabula database without the application's code.
#[derive(Debug, Parser)]
#[command(name = "tabula", version, about, long_about = None)]
struct Cli {
    /// Print JSON instead of human-readable text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// File size, page size, geometry, last transaction, readers, schema version, migrations.
    Info {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
    },
    /// One row per table: DBI, flags, entries, depth, pages, bytes, key and value descriptors.
    Tables {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
        /// Include Tabula's own meta table and zstd dictionary table.
        #[arg(long)]
        all: bool,
    },
    /// The value(s) stored under one key.
    Get {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
        /// The table name.
        table: String,
        /// The key as JSON: `5`, `"alice"`, `["alice", 5]`, `{"account": "a", "block": 5}`.
        #[arg(allow_hyphen_values = true)]
        key: String,
    },
    /// Entries of a table in key order.
    Dump {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
        /// The table name.
        table: String,
        /// First key (inclusive), as JSON.
        #[arg(long, allow_hyphen_values = true)]
        from: Option<String>,
        /// Last key (inclusive), as JSON.
        #[arg(long, allow_hyphen_values = true)]
        to: Option<String>,
        /// At most this many entries.
        #[arg(long)]
        limit: Option<u64>,
        /// From the last entry to the first.
        #[arg(long)]
        reverse: bool,
        /// Output format (default `jsonl`; `json` with `--json`).
        #[arg(long, value_enum)]
        format: Option<DumpFormat>,
    },
    /// libmdbx's integrity check, then decode every key and value with its descriptor.
    Check {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
    },
    /// Live readers, the snapshot each reads and how far it lags.
    Readers {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
    },
    /// Copy the database; `--compact` leaves out free pages.
    Copy {
        /// Renumber pages and drop free space (`MDBX_CP_COMPACT`).
        #[arg(long)]
        compact: bool,
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
        /// The destination directory (created; the copy is `DEST/mdbx.dat`).
        dest: PathBuf,
    },
    /// Train a zstd dictionary from a `ZstdDict` table's values and store it in the database as
    /// the current dictionary of the table's dictionary name (values written after the
    /// application reopens use it; stored values keep theirs until the migration step
    /// `train_zstd_dictionary` re-encodes them).
    TrainDict {
        /// The database directory.
        path: PathBuf,
        /// The table name (its codec must be `ZstdDict`).
        table: String,
        /// Values to sample, spread over the table.
        #[arg(long, default_value_t = 10_000)]
        samples: usize,
        /// The dictionary's size at most, in bytes.
        #[arg(long, default_value_t = 32 * 1024)]
        size: usize,
    },
}

/// How `dump` prints entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DumpFormat {
    /// One JSON array of `{"key": .., "value": ..}` objects.
    Json,
    /// One `{"key": .., "value": ..}` object per line.
    Jsonl,
    /// `KEY_HEX VALUE_HEX` per line, the stored bytes.
    Hex,
}

/// Why a command failed, deciding the exit code.
#[derive(Debug)]
enum Failure {
    /// The database or its content: exit 1.
    Problem(String),
    /// How the command was called: exit 2.
    Usage(String),
}

impl From<tabula_core::Error> for Failure {
    fn from(e: tabula_core::Error) -> Self {
        Failure::Problem(e.to_string())
    }
}

type Outcome = Result<(), Failure>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { path } => commands::info(&path, cli.json),
        Command::Tables { path, all } => commands::tables(&path, all, cli.json),
        Command::Get { path, table, key } => commands::get(&path, &table, &key, cli.json),
        Command::Dump {
            path,
            table,
            from,
            to,
            limit,
            reverse,
            format,
        } => {
            let format = format.unwrap_or(if cli.json {
                DumpFormat::Json
            } else {
                DumpFormat::Jsonl
            });
            commands::dump(
                &path,
                &table,
                commands::DumpArgs {
                    from: from.as_deref(),
                    to: to.as_deref(),
                    limit,
                    reverse,
                    format,
                },
            )
        }
        Command::Check { path } => commands::check(&path, cli.json),
        Command::Readers { path } => commands::readers(&path, cli.json),
        Command::Copy {
            compact,
            path,
            dest,
        } => commands::copy(&path, &dest, compact, cli.json),
        Command::TrainDict {
            path,
            table,
            samples,
            size,
        } => commands::train_dict(&path, &table, samples, size, cli.json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Problem(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
        Err(Failure::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Lowercase hex of `bytes`, no prefix.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
