//! One database, two processes, two ways to name it: the directory `DIR`, or its data file
//! `DIR/mdbx.dat` with `Options::no_sub_dir(true)` (a tool pointed at the data file, say).
//! libmdbx opens `DIR/mdbx.dat` as `DIR`, with the one lock file `DIR/mdbx.lck`, so the two
//! processes share the database, each sees the other's commits, and no second lock file
//! appears. Earlier builds reserved `DIR/mdbx.dat-lck` first: libmdbx refused the second open
//! with MDBX_DUPLICATED_LCK, and the file left behind refused every later open of `DIR`.
//!
//! The file has its own `main` (`harness = false`, `tests/support/harness.rs`): the child entry
//! is not a test.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::path::Path;
use std::process::Command;

use tabula::{Db, Options, Schema, Table};

#[derive(Table)]
#[table(name = "items", key = u64, value = String)]
struct Items;

#[derive(Schema)]
struct Store(Items);

/// The child opens the path in this variable...
const CHILD_VAR: &str = "TABULA_LOCK_FILES_CHILD";
/// ...with `no_sub_dir(true)` when this one is `1`.
const NO_SUB_DIR_VAR: &str = "TABULA_LOCK_FILES_NO_SUB_DIR";
const CHILD_KEY: u64 = 2;

fn main() {
    if let Some(path) = std::env::var_os(CHILD_VAR) {
        let no_sub_dir = std::env::var(NO_SUB_DIR_VAR).as_deref() == Ok("1");
        child(Path::new(&path), no_sub_dir);
        return;
    }
    run_tests!(
        another_process_opens_the_data_file_while_the_directory_is_open,
        another_process_opens_the_directory_while_the_data_file_is_open,
    );
}

fn options(no_sub_dir: bool) -> Options {
    Options::new().max_size(64 << 20).no_sub_dir(no_sub_dir)
}

fn value(key: u64) -> String {
    format!("written for key {key}")
}

/// The second process: opens the database, reads what the first wrote, commits `CHILD_KEY`,
/// and prints `entries <n>` (or `refused <error>`).
fn child(path: &Path, no_sub_dir: bool) {
    match tabula::open::<Store>(path, options(no_sub_dir)) {
        Ok(db) => {
            let entries = db.read().unwrap().len::<Items>().unwrap();
            let mut tx = db.write().unwrap();
            tx.put::<Items>(&CHILD_KEY, &value(CHILD_KEY)).unwrap();
            tx.commit().unwrap();
            println!("entries {entries}");
        }
        Err(e) => println!("refused {e}"),
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs the child on `path` and returns what it printed.
fn run_child(path: &Path, no_sub_dir: bool) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHILD_VAR, path)
        .env(NO_SUB_DIR_VAR, if no_sub_dir { "1" } else { "0" })
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success(),
        "child failed ({:?}): {stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The first process opens `DIR` (through `first_no_sub_dir`'s path) and commits key 1; a
/// second opens it through the other path while the first holds it open.
fn two_processes(first_no_sub_dir: bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mdbx.dat");
    let path_of = |no_sub_dir: bool| {
        if no_sub_dir {
            file.as_path()
        } else {
            dir.path()
        }
    };
    let db: Db<Store> = tabula::open(path_of(first_no_sub_dir), options(first_no_sub_dir)).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Items>(&1, &value(1)).unwrap();
    tx.commit().unwrap();
    assert_eq!(listing(dir.path()), ["mdbx.dat", "mdbx.lck"]);

    let got = run_child(path_of(!first_no_sub_dir), !first_no_sub_dir);
    assert_eq!(got, "entries 1", "the second process's open");
    assert_eq!(
        listing(dir.path()),
        ["mdbx.dat", "mdbx.lck"],
        "no second lock file"
    );
    // The first process sees the second's commit: one database, one reader table.
    assert_eq!(
        db.read().unwrap().get::<Items>(&CHILD_KEY).unwrap(),
        Some(value(CHILD_KEY))
    );
    drop(db);

    // Both paths open again, in this process and another.
    for no_sub_dir in [false, true] {
        let db: Db<Store> = tabula::open(path_of(no_sub_dir), options(no_sub_dir))
            .unwrap_or_else(|e| panic!("no_sub_dir {no_sub_dir}: {e}"));
        assert_eq!(db.read().unwrap().len::<Items>().unwrap(), 2);
    }
    assert_eq!(run_child(path_of(false), false), "entries 2");
    assert_eq!(listing(dir.path()), ["mdbx.dat", "mdbx.lck"]);
}

fn another_process_opens_the_data_file_while_the_directory_is_open() {
    two_processes(false);
}

fn another_process_opens_the_directory_while_the_data_file_is_open() {
    two_processes(true);
}
