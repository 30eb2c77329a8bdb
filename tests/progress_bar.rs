//! `Migrations::with_progress_bar` (feature `progress`) on a migration step that runs: the bar
//! is drawn on the terminal and shows the step, the operation and every entry done.
//!
//! indicatif draws only on a terminal, so the migration runs in a child process (this binary
//! run again with `TABULA_PROGRESS_CHILD=<dir>`) whose output is a pseudo-terminal: the child is
//! started through `script` (util-linux), which gives it one and copies what it drew to its
//! own stdout. Without `script` the test fails unless `TABULA_ALLOW_SKIP` names `progress_bar`.
//! The file has its own `main` (`harness = false`, `tests/support/harness.rs`): the
//! child entry is not a test.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::path::Path;
use std::process::Command;

use harness::Ran;
use tabula::{Migrations, Options, Schema, Table};

#[derive(Table)]
#[table(name = "balances", key = u64, value = u64)]
struct Balances;

#[derive(Schema)]
struct App(Balances);

const CHILD_VAR: &str = "TABULA_PROGRESS_CHILD";
const ENTRIES: u64 = 25_000;
const BATCH: usize = 1000;

fn main() {
    if let Some(dir) = std::env::var_os(CHILD_VAR) {
        migrate(Path::new(&dir));
        return;
    }
    run_tests!(the_progress_bar_shows_a_migration_step_that_runs);
}

/// The child: opens the version-1 database with a step that rewrites every value in batches,
/// under the progress bar, and checks the step ran.
fn migrate(dir: &Path) {
    let migrations = Migrations::new()
        .with_progress_bar()
        .batch_size(BATCH)
        .step(2, "cents", |m| {
            m.transform::<Balances, u64>(|units| units * 100)
        });
    let (db, report) = tabula::open_with::<App>(dir, Options::new(), &migrations).unwrap();
    assert_eq!(report.version, 2);
    let tx = db.read().unwrap();
    assert_eq!(tx.len::<Balances>().unwrap(), ENTRIES);
    assert_eq!(tx.get::<Balances>(&7).unwrap(), Some(700));
    println!("migrated {ENTRIES}");
}

/// `text` without terminal control sequences (`ESC [ ... letter`) and carriage returns.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() {
                            break;
                        }
                    }
                }
            }
            '\r' => out.push('\n'),
            c => out.push(c),
        }
    }
    out
}

fn the_progress_bar_shows_a_migration_step_that_runs() -> Ran {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
        db.bulk_load::<Balances>((0..ENTRIES).map(|k| (k, k)))
            .unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("script")
        // -q: no start and end notes; -e: its exit code is the child's; -c: the command. The
        // paths are single-quoted for the shell `script` runs the command with.
        .args([
            "-q",
            "-e",
            "-c",
            &format!("'{}'", exe.display()),
            "/dev/null",
        ])
        .env(CHILD_VAR, dir.path())
        .env("COLUMNS", "160")
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return harness::skip(
                "progress_bar",
                "no `script` command (util-linux) to give the child a terminal",
            );
        }
        Err(e) => panic!("`script` (util-linux) did not start: {e}"),
    };
    let drawn = plain(&String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "the migrating child failed: {drawn}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(drawn.contains(&format!("migrated {ENTRIES}")), "{drawn}");
    // The bar: the step and operation, and every entry of the source table done.
    let bar_lines: Vec<&str> = drawn
        .lines()
        .filter(|l| l.contains("v2 cents: transform values of balances"))
        .collect();
    assert!(!bar_lines.is_empty(), "no progress bar was drawn:\n{drawn}");
    let done = format!("{ENTRIES}/{ENTRIES} entries");
    assert!(
        bar_lines.iter().any(|l| l.contains(&done)),
        "the bar never showed {done}:\n{}",
        bar_lines.join("\n")
    );
    eprintln!("{}", bar_lines.join("\n"));
    Ran::Completed
}
