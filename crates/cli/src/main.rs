//! `tabula`: inspect, dump and restore any Tabula database without the application's code.
//!
//! Every command opens the database read-only and reads the schema record Tabula keeps in its
//! meta table (table flags, key descriptors and value shapes), but three: `copy` writes only the
//! destination, `train-dict` adds a zstd dictionary to the database, and `load` writes a dump
//! into a new database or an empty table. Keys are given and shown in their typed JSON form;
//! values are decoded from the recorded shape. `--json` makes every command print JSON for
//! scripts; `-v` shows libmdbx's own log lines (and Tabula's warnings) on stderr.
//!
//! Every command reads with libmdbx's page checks on (`MDBX_VALIDATION`), so a damaged page is
//! an error naming its table (`MDBX_CORRUPTED`), never a crash.
//!
//! Exit codes: 0 success; 1 a problem with the database (missing, not MDBX, damaged, written by
//! a newer Tabula, a key not found, `check` found problems, a dump that does not load); 2 a
//! usage error (bad arguments, unknown table, a key that does not parse for the table's key
//! descriptor); 141 (128 + SIGPIPE, what a shell reports for `cat` in the same place) when the
//! reader of the output went away (`tabula dump … | head -1`): the command stops at once,
//! quietly.

#![forbid(unsafe_code)]
// Everything printed goes through `out::Out`, so that a closed pipe ends every command the same
// way (see `out.rs`); `println!` would panic on it.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod commands;
mod header;
mod json;
mod load;
mod out;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, Parser, Subcommand, ValueEnum};

use crate::out::Out;

/// Inspect, dump and restore any Tabula database without the application's code.
#[derive(Debug, Parser)]
#[command(name = "tabula", version, about, long_about = None)]
struct Cli {
    /// Print JSON instead of human-readable text.
    #[arg(long, global = true)]
    json: bool,
    /// Show libmdbx's own log lines and Tabula's warnings on stderr (`-vv`: Tabula's info
    /// lines too).
    #[arg(short, long, global = true, action = ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// File size, pages used and free, geometry, last transaction, readers, schema version,
    /// migrations.
    Info {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
    },
    /// One row per table: DBI, flags, entries, depth, pages, bytes, key and value descriptors,
    /// and a totals row. A secondary index is listed under its table (flags `index of T`,
    /// `unique`).
    Tables {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
        /// Include Tabula's own meta table and zstd dictionary table.
        #[arg(long)]
        all: bool,
    },
    /// The value(s) stored under one key; for a dupsort table with a subkey, under one
    /// (key, subkey) pair when SUBKEY is given. For a secondary index, the rows of that index
    /// key: each primary key and the row its table holds under it.
    Get {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
        /// The table name.
        table: String,
        /// The key as JSON: `5`, `"alice"`, `["alice", 5]`, `{"account": "a", "block": 5}`; a
        /// string may be given bare: `alice`.
        #[arg(allow_hyphen_values = true)]
        key: String,
        /// The subkey as JSON (dupsort tables declared with a `subkey`): only its values.
        #[arg(allow_hyphen_values = true)]
        subkey: Option<String>,
        /// One line: the JSON document `--json` prints, without line breaks (for `grep`, `jq`
        /// and shell loops).
        #[arg(long)]
        line: bool,
        /// The value at the end of this version, read through the table's history (a table
        /// declared `history`).
        #[arg(long)]
        as_of: Option<u64>,
    },
    /// A table's history (a table declared `history`): the versions at which a key changed
    /// (`--key`), or the changes of one version (`--version`: each key, its value before and
    /// at the end of the version).
    History {
        /// The database directory (or its `mdbx.dat` file).
        path: PathBuf,
        /// The table name (the table declared `history`, not its history's).
        table: String,
        /// The key, as `get` takes it: its versions.
        #[arg(long, allow_hyphen_values = true, conflicts_with = "version")]
        key: Option<String>,
        /// A version: its changes.
        #[arg(long, required_unless_present = "key")]
        version: Option<u64>,
    },
    /// Entries of a table in key order. The `jsonl` and `hex` formats begin with a header line
    /// describing the table, so that `tabula load` can restore them.
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
        /// Only keys whose leading parts are these (a composite key's first parts, as JSON:
        /// `["alice"]` for a `(str, u64)` key, `{"account": "alice"}` for a struct key).
        #[arg(long, allow_hyphen_values = true)]
        prefix: Option<String>,
        /// At most this many entries.
        #[arg(long)]
        limit: Option<u64>,
        /// From the last entry to the first.
        #[arg(long)]
        reverse: bool,
        /// Output format (default `jsonl`; `json` with `--json`, which `hex` refuses).
        #[arg(long, value_enum)]
        format: Option<DumpFormat>,
    },
    /// Restore a table from what `tabula dump` wrote (its `jsonl` or `hex` format): into a new
    /// database, or into an empty table of an existing one. Writes.
    Load {
        /// The database directory: a new one is created when it does not exist (or is empty).
        path: PathBuf,
        /// The table to load into (default: the dumped table's name). An existing table must
        /// be empty and have the dumped table's flags and encodings, and neither an index nor
        /// a history (whose entries the application writes with its rows: load those into a
        /// new database).
        table: Option<String>,
        /// Read the dump from this file instead of stdin.
        #[arg(long, short)]
        input: Option<PathBuf>,
    },
    /// libmdbx's integrity check, then decode every key and value with its descriptor; for a
    /// secondary index, also look up the row each entry names in its table.
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
    /// `train_zstd_dictionary` re-encodes them). Writes.
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
    /// One JSON array of `{"key": .., "value": ..}` objects, for scripts (no header; `load`
    /// does not read it).
    Json,
    /// A header line, then one `{"key": .., "value": ..}` object per line.
    Jsonl,
    /// A header line, then `KEY_HEX VALUE_HEX` per line: the stored bytes.
    Hex,
}

/// Why a command stopped, deciding the exit code.
#[derive(Debug)]
enum Failure {
    /// The database or its content: exit 1.
    Problem(String),
    /// How the command was called: exit 2.
    Usage(String),
    /// The reader of stdout went away (a closed pipe): exit 141, nothing printed.
    Closed,
}

impl From<tabula_core::Error> for Failure {
    fn from(e: tabula_core::Error) -> Self {
        Failure::Problem(e.to_string())
    }
}

/// What a failed write to stdout means: the reader left ([`Failure::Closed`]), or a real
/// problem (a full disk behind a redirect).
impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::Closed
        } else {
            Failure::Problem(format!("writing the output failed: {e}"))
        }
    }
}

type Outcome = Result<(), Failure>;

/// The exit status of a command whose output's reader went away: 128 + SIGPIPE (13), what a
/// shell reports for `cat` killed by SIGPIPE.
const CLOSED_PIPE_STATUS: u8 = 141;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help`, `--version` (exit 0) and usage errors (exit 2), printed by clap; its help
        // goes to stdout, which may be a closed pipe too.
        Err(e) => {
            return match e.print() {
                Err(io) if io.kind() == std::io::ErrorKind::BrokenPipe => {
                    ExitCode::from(CLOSED_PIPE_STATUS)
                }
                _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
            };
        }
    };
    log_to_stderr(cli.verbose);
    let mut out = Out::stdout();
    let result = run(cli, &mut out).and_then(|()| out.flush().map_err(Failure::from));
    let (code, message) = match result {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Failure::Closed) => return ExitCode::from(CLOSED_PIPE_STATUS),
        Err(Failure::Problem(msg)) => (1, msg),
        Err(Failure::Usage(msg)) => (2, msg),
    };
    // What was printed before the failure goes out first; stdout may be closed by now.
    let _ = out.flush();
    // A closed stderr is no reason to panic either.
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(code)
}

fn run(cli: Cli, out: &mut Out) -> Outcome {
    let as_json = cli.json;
    match cli.command {
        Command::Info { path } => commands::info(out, &path, as_json),
        Command::Tables { path, all } => commands::tables(out, &path, all, as_json),
        Command::Get {
            path,
            table,
            key,
            subkey,
            line,
            as_of,
        } => {
            let format = if line {
                commands::Format::Line
            } else if as_json {
                commands::Format::Json
            } else {
                commands::Format::Text
            };
            commands::get(out, &path, &table, &key, (subkey.as_deref(), as_of), format)
        }
        Command::History {
            path,
            table,
            key,
            version,
        } => commands::history(out, &path, &table, key.as_deref(), version, as_json),
        Command::Dump {
            path,
            table,
            from,
            to,
            prefix,
            limit,
            reverse,
            format,
        } => {
            let format = match (format, as_json) {
                (Some(DumpFormat::Hex), true) => {
                    return Err(Failure::Usage(
                        "`--json` and `--format hex` ask for two different outputs: the hex \
                         format is `KEY_HEX VALUE_HEX` lines; drop `--json`, or use \
                         `--format json` / `--format jsonl` for JSON"
                            .to_string(),
                    ));
                }
                (Some(format), _) => format,
                (None, true) => DumpFormat::Json,
                (None, false) => DumpFormat::Jsonl,
            };
            commands::dump(
                out,
                &path,
                &table,
                commands::DumpArgs {
                    from: from.as_deref(),
                    to: to.as_deref(),
                    prefix: prefix.as_deref(),
                    limit,
                    reverse,
                    format,
                },
            )
        }
        Command::Load { path, table, input } => {
            load::load(out, &path, table.as_deref(), input.as_deref(), as_json)
        }
        Command::Check { path } => commands::check(out, &path, as_json),
        Command::Readers { path } => commands::readers(out, &path, as_json),
        Command::Copy {
            compact,
            path,
            dest,
        } => commands::copy(out, &path, &dest, compact, as_json),
        Command::TrainDict {
            path,
            table,
            samples,
            size,
        } => commands::train_dict(out, &path, &table, samples, size, as_json),
    }
}

/// With `-v`, prints `tracing` events on stderr: libmdbx's own log lines (core routes them to
/// target `libmdbx`, warnings and errors) and Tabula's warnings; `-vv` adds Tabula's info lines,
/// `-vvv` its debug lines.
fn log_to_stderr(verbose: u8) {
    use tracing_subscriber::filter::LevelFilter;
    let level = match verbose {
        0 => return,
        1 => LevelFilter::WARN,
        2 => LevelFilter::INFO,
        _ => LevelFilter::DEBUG,
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .without_time()
        .with_ansi(false)
        .init();
}

/// Lowercase hex of `bytes`, no prefix.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
