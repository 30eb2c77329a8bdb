//! A closed output pipe (`tabula … | head -1`) ends every command the same way: at once, with
//! exit status 141 (128 + SIGPIPE, what a shell shows for `cat`) and nothing on stderr — no
//! panic, no "failed printing to stdout". Each command runs with a stdout pipe whose reading end
//! is closed: before the command starts (every write fails), and after reading one line, as
//! `head -1` does (a race the command may win by writing everything first: then it exits 0),
//! many times.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(name = "heights", key = u64, value = String)]
struct Heights;

#[derive(Table)]
#[table(name = "tags", key = u32, value = String, dupsort)]
struct Tags;

#[derive(Schema)]
struct App(Heights, Tags);

/// Enough entries that a dump is many times a pipe's buffer (64 KiB on Linux).
const ENTRIES: u64 = 20_000;

fn write_fixture(path: &Path) {
    let db = tabula::open::<App>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..ENTRIES {
        tx.put::<Heights>(&n, &format!("block {n:08} and some text to fill the line"))
            .unwrap();
    }
    for n in 0..50 {
        tx.put::<Tags>(&1, &format!("tag {n:03}")).unwrap();
    }
    tx.commit().unwrap();
}

/// How the reader treats the pipe.
#[derive(Clone, Copy, Debug)]
enum Reader {
    /// Has closed it before the command starts.
    ClosedBefore,
    /// Reads one line, then closes it (`head -1`).
    ReadsOneLine,
}

/// Runs `tabula args` with stdout a pipe the reader closes; returns the exit status and stderr.
fn run(args: &[&str], reader: Reader) -> (ExitStatus, String) {
    let (read_end, write_end) = std::io::pipe().unwrap();
    let read_end = match reader {
        Reader::ClosedBefore => {
            drop(read_end);
            None
        }
        Reader::ReadsOneLine => Some(read_end),
    };
    let child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .stdout(write_end)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tabula binary runs");
    if let Some(read_end) = read_end {
        let mut line = String::new();
        BufReader::new(read_end).read_line(&mut line).unwrap();
        assert!(
            !line.is_empty(),
            "`tabula {}` printed nothing",
            args.join(" ")
        );
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every command that prints, with each reader, `RUNS` times: exit 141 and an empty stderr
/// whenever the pipe closed before the output was written (always when closed before the start, and for
/// a dump far larger than the pipe's buffer); exit 0 only when the command wrote everything
/// before `head -1` closed it.
#[test]
fn a_closed_pipe_ends_every_command_quietly_with_status_141() {
    const RUNS: usize = 20;
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = dir.path().to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["info", db],
        vec!["info", db, "--json"],
        vec!["tables", db],
        vec!["tables", db, "--json"],
        vec!["get", db, "heights", "7"],
        vec!["get", db, "tags", "1"],
        vec!["get", db, "tags", "1", "--json"],
        vec!["dump", db, "heights"],
        vec!["dump", db, "heights", "--json"],
        vec!["dump", db, "heights", "--format", "hex"],
        vec!["check", db],
        vec!["readers", db],
        vec!["--help"],
    ];
    let mut seen_141_after_a_line = 0;
    for args in &commands {
        let whole_dump = args[0] == "dump";
        for reader in [Reader::ClosedBefore, Reader::ReadsOneLine] {
            for run_number in 0..RUNS {
                let (status, stderr) = run(args, reader);
                let what = format!("`tabula {}`, {reader:?}, run {run_number}", args.join(" "));
                assert!(
                    stderr.is_empty(),
                    "{what}: stderr must be empty, got {stderr:?} (status {status})"
                );
                let must_see_the_close = matches!(reader, Reader::ClosedBefore) || whole_dump;
                match status.code() {
                    Some(141) => {
                        if matches!(reader, Reader::ReadsOneLine) {
                            seen_141_after_a_line += 1;
                        }
                    }
                    Some(0) if !must_see_the_close => {}
                    other => panic!("{what}: exit status {other:?}, expected 141: {stderr}"),
                }
            }
        }
    }
    // The dumps (three commands, RUNS times each) always outlast the pipe's buffer.
    assert!(seen_141_after_a_line >= 3 * RUNS, "{seen_141_after_a_line}");
}
