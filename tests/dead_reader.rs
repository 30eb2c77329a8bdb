//! `MapFull` only when the map is really full, and its advice only when it is true.
//!
//! A read transaction pins the snapshot it sees: the writer cannot reuse pages freed after it
//! began, and with the file at its size limit that is a `MapFull`. The message must say so and
//! name the reader (its process, its snapshot), rather than advise a larger `max_size`. When the
//! reader's process dies, the next write must succeed at its first try: libmdbx 0.14.4 clears a
//! dead process's reader slot while failing the write that ran into it, and only the write
//! after that one succeeded.
//!
//! The reader is a child process: this test binary run again with `TABULA_DEAD_READER_CHILD`.
//! The file has its own `main` (`harness = false`, `tests/support/harness.rs`): the child entry
//! is not a test.

#[path = "support/tempdb.rs"]
mod tempdb;
#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use tabula::{Db, Error, Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "counter", key = u8, value = u64)]
struct Counter;

#[derive(Table)]
#[table(name = "blobs", key = u32, value = Vec<u8>)]
struct Blobs;

#[derive(Schema)]
struct S(Counter, Blobs);

const CHILD_VAR: &str = "TABULA_DEAD_READER_CHILD";

fn main() {
    if let Some(dir) = std::env::var_os(CHILD_VAR) {
        child_reader(Path::new(&dir));
        return;
    }
    run_tests!(
        a_reader_process_killed_after_the_map_filled_does_not_fail_the_next_write,
        a_long_read_transaction_of_this_process_is_named_when_the_map_fills,
        a_map_full_of_data_advises_a_larger_max_size,
    );
}

fn options() -> Options {
    Options::new()
        .max_size(4 << 20)
        .growth_step(1 << 20)
        .sync(SyncMode::SafeNoSync)
}

/// One round: rewrites 8 × 32 KiB blobs and the counter. A 4 MiB map holds many rounds only
/// if the writer can reuse the pages each round frees.
fn rewrite_round(db: &Db<S>, round: u32) -> Result<(), Error> {
    let mut tx = db.write()?;
    for k in 0..8u32 {
        tx.put::<Blobs>(&k, &vec![(round % 251) as u8; 32 << 10])?;
    }
    tx.put::<Counter>(&0, &u64::from(round))?;
    tx.commit()
}

/// Rewrites until the first error; returns it with the round that failed.
fn rewrite_until_error(db: &Db<S>, from: u32) -> (u32, Error) {
    for round in from..from + 1000 {
        if let Err(e) = rewrite_round(db, round) {
            return (round, e);
        }
    }
    panic!("a 4 MiB map never filled while a reader pinned its snapshot");
}

/// The reader (`TABULA_DEAD_READER_CHILD=<dir>`): opens the database, holds one read
/// transaction, prints `reading <pid>`, and waits on stdin until it is killed.
fn child_reader(dir: &Path) {
    let db = tabula::open::<S>(dir, options()).unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Blobs>(&3).unwrap().unwrap()[0], 0);
    let mut out = std::io::stdout().lock();
    writeln!(out).unwrap();
    writeln!(out, "reading {}", std::process::id()).unwrap();
    out.flush().unwrap();
    // Block until the parent kills this process (or closes stdin).
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    drop(tx);
}

fn a_reader_process_killed_after_the_map_filled_does_not_fail_the_next_write() {
    let (dir, db) = tempdb::open_with::<S>(options());
    rewrite_round(&db, 0).unwrap();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD_VAR, dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid: u32 = loop {
        let line = lines
            .next()
            .expect("the reader exited before reading")
            .unwrap();
        if let Some(pid) = line.strip_prefix("reading ") {
            break pid.parse().unwrap();
        }
    };
    assert_eq!(pid, child.id());

    // The reader pins round 0: the writer fills the map.
    let (failed_round, err) = rewrite_until_error(&db, 1);
    let message = err.to_string();
    eprintln!("round {failed_round}: {message}");
    assert!(
        matches!(
            err,
            Error::MapFull {
                table: Some("blobs"),
                ..
            }
        ),
        "{message}"
    );
    // The message names the reader that pins the space, and does not send the user to
    // `max_size`, which is not the problem.
    assert!(
        message.contains(&format!("process {pid}")),
        "names the reader's process: {message}"
    );
    assert!(
        !message.contains("larger `Options::max_size`"),
        "no max_size advice while a reader pins the space: {message}"
    );

    // The reader's process dies without ending its transaction.
    child.kill().unwrap();
    child.wait().unwrap();

    // The very next write succeeds: the dead reader no longer pins anything.
    rewrite_round(&db, failed_round)
        .unwrap_or_else(|e| panic!("the first write after the reader process died failed: {e}"));
    // And the writer goes on reusing space for many more rounds.
    for round in failed_round + 1..failed_round + 120 {
        rewrite_round(&db, round).unwrap();
    }
    let tx = db.read().unwrap();
    assert_eq!(
        tx.get::<Counter>(&0).unwrap(),
        Some(u64::from(failed_round + 119))
    );
    assert_eq!(
        tx.get::<Blobs>(&7).unwrap().unwrap()[0],
        ((failed_round + 119) % 251) as u8
    );
    drop(tx);
    assert!(db.check().unwrap().is_ok());
}

fn a_long_read_transaction_of_this_process_is_named_when_the_map_fills() {
    let (_dir, db) = tempdb::open_with::<S>(options());
    rewrite_round(&db, 0).unwrap();
    let pin = db.read().unwrap();
    let snapshot = pin.id();
    let (failed_round, err) = rewrite_until_error(&db, 1);
    let message = err.to_string();
    eprintln!("round {failed_round}: {message}");
    assert!(matches!(err, Error::MapFull { .. }), "{message}");
    assert!(
        message.contains("this process") && message.contains(&snapshot.to_string()),
        "names this process's read transaction and its snapshot {snapshot}: {message}"
    );
    assert!(
        !message.contains("larger `Options::max_size`"),
        "no max_size advice while a reader pins the space: {message}"
    );
    // Ending it is the remedy the message gives: the same write then succeeds.
    drop(pin);
    rewrite_round(&db, failed_round).unwrap();
}

fn a_map_full_of_data_advises_a_larger_max_size() {
    // No reader at all: the data fills the map, and a larger bound is the remedy.
    let (_dir, db) = tempdb::open_with::<S>(options());
    let mut tx = db.write().unwrap();
    let mut k = 0u32;
    let err = loop {
        if let Err(e) = tx.put::<Blobs>(&k, &vec![1u8; 32 << 10]) {
            break e;
        }
        k += 1;
        assert!(k < 1000, "a 4 MiB map fills up");
    };
    let message = err.to_string();
    assert!(matches!(err, Error::MapFull { .. }), "{message}");
    assert!(
        message.contains("larger `Options::max_size`"),
        "advises max_size: {message}"
    );
}
