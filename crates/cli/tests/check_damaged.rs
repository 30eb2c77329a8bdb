//! `tabula check` on a file with damaged pages: it goes on past every table it cannot read,
//! names each damaged table, prints libmdbx's own report, and prints its JSON report (`--json`)
//! on failure too, exiting 1. The pages are damaged the way `tests/bad_input.rs` does it: the
//! database is written in one transaction (every page holding an entry is live), the page
//! holding a chosen entry is found by searching the file for the entry's bytes, and zeroed (a
//! zero page trips no libmdbx assertion, so debug builds of the binary run to the end too).

#[path = "../../../tests/support/damage.rs"]
mod damage;
#[path = "../../../tests/support/random.rs"]
mod random;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as Json;
use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(name = "ledger", key = u64, value = String)]
struct Ledger;

#[derive(Table)]
#[table(name = "notes", key = u64, value = String)]
struct Notes;

#[derive(Table)]
#[table(name = "intact", key = u64, value = u64)]
struct Intact;

#[derive(Schema)]
struct Books(Ledger, Notes, Intact);

const ENTRIES: u64 = 3000;

fn ledger(n: u64) -> String {
    format!("ledger entry {n:08}: paid in full, nothing owed")
}

fn note(n: u64) -> String {
    format!("note {n:08} about the account, written once")
}

/// Writes the three tables in one transaction; returns the data file and the page size.
fn write(dir: &Path) -> (PathBuf, u64) {
    let db = tabula::open::<Books>(dir, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..ENTRIES {
        tx.put::<Ledger>(&n, &ledger(n)).unwrap();
        tx.put::<Notes>(&n, &note(n)).unwrap();
    }
    for n in 0..10 {
        tx.put::<Intact>(&n, &(n * 7)).unwrap();
    }
    tx.commit().unwrap();
    assert!(db.check().unwrap().is_ok());
    let page = u64::from(db.info().unwrap().page_size);
    (dir.join("mdbx.dat"), page)
}

/// The start of the page that holds `needle`, which is in the file once.
fn page_of(data: &[u8], needle: &[u8], page: u64) -> u64 {
    let mut at = data
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i as u64);
    let first = at.next().expect("the entry is in the file");
    assert_eq!(at.next(), None, "the entry is in the file once");
    first / page * page
}

/// Zeroes the pages holding three entries of `ledger` and three of `notes`: six distinct
/// leaf pages.
fn damage(file: &Path, page: u64) -> Vec<u64> {
    let mut data = std::fs::read(file).unwrap();
    let mut pages = Vec::new();
    for n in [150, 1500, 2850] {
        pages.push(page_of(&data, ledger(n).as_bytes(), page));
        pages.push(page_of(&data, note(n).as_bytes(), page));
    }
    pages.sort();
    pages.dedup();
    assert_eq!(pages.len(), 6, "six distinct pages: {pages:?}");
    for &at in &pages {
        data[at as usize..(at + page) as usize].fill(0);
    }
    std::fs::write(file, data).unwrap();
    pages
}

fn tabula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .output()
        .expect("the tabula binary runs")
}

#[test]
fn check_names_every_damaged_table_and_reports_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let (file, page) = write(dir.path());
    let pages = damage(&file, page);
    let db = dir.path().to_str().unwrap();

    // The library sees the damage.
    let lib = tabula::open::<Books>(dir.path(), Options::new().validation(true)).unwrap();
    let report = lib.check().unwrap();
    assert!(!report.is_ok(), "Db::check: {report:?}");
    drop(lib);

    // --json: the whole report on stdout, exit 1.
    let out = tabula(&["check", db, "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let json: Json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is the JSON report ({e}): {stdout:?}\n{stderr}"));
    assert_eq!(json["ok"], Json::Bool(false), "{json:#}");
    let damaged: Vec<&str> = json["damaged_tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        damaged.contains(&"ledger") && damaged.contains(&"notes"),
        "both damaged tables named: {damaged:?}"
    );
    assert!(!damaged.contains(&"intact"), "{damaged:?}");
    let libmdbx = &json["libmdbx_check"];
    assert_eq!(libmdbx["ok"], Json::Bool(false));
    assert!(libmdbx["problems"].as_u64().unwrap() > 0, "{libmdbx:#}");
    // libmdbx's B-tree walk stops at the first broken page (`walk_pages() failed`): it names
    // the first damaged table, with that page.
    let first = &libmdbx["damaged"][0];
    assert_eq!(first["name"], "ledger", "{libmdbx:#}");
    assert!(first["broken_pages"].as_u64().unwrap() >= 1, "{first}");
    // Its own report: the problem lines, naming a page that was zeroed.
    let report: Vec<&str> = libmdbx["report"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["problem"] == Json::Bool(true))
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    let named = |text: &str| {
        pages
            .iter()
            .any(|at| text.contains(&format!("page #{}:", at / page)))
    };
    assert!(
        report.iter().any(|l| named(l) && l.contains("corrupted")),
        "libmdbx's report names a damaged page, one of {pages:?} / {page}: {report:#?}"
    );
    assert!(
        report.iter().any(|l| l.contains("MDBX_CORRUPTED")),
        "{report:#?}"
    );
    // Every table was gone through: the intact one read to the end, each damaged one has its
    // error, naming it.
    let table = |name: &str| {
        json["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("table `{name}` in the report: {json:#}"))
    };
    let intact = table("intact");
    assert_eq!(intact["entries"], 10);
    assert_eq!(intact["read_error"], Json::Null);
    assert_eq!(intact["damaged"], Json::Bool(false));
    for name in ["ledger", "notes"] {
        let t = table(name);
        assert_eq!(t["damaged"], Json::Bool(true), "{t}");
        let error = t["read_error"].as_str().unwrap_or_default();
        assert!(
            error.contains(&format!("`{name}`")) && error.contains("MDBX_"),
            "{name}: {t}"
        );
    }

    // Text: libmdbx's report is printed, every damaged table named on stderr.
    let out = tabula(&["check", db]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("libmdbx's report:"), "{stdout}");
    assert!(
        stdout.lines().any(|l| named(l) && l.contains("corrupted")),
        "{stdout}"
    );
    assert!(
        stderr.contains("table `ledger`") && stderr.contains("table `notes`"),
        "{stderr}"
    );
    assert!(!stderr.contains("table `intact`"), "{stderr}");
    assert!(stderr.contains("restore it from a backup"), "{stderr}");
    eprintln!("{stdout}\n{stderr}");
}

// ---- random bytes in pages: every read command, never a signal --------------------------------

#[derive(Table)]
#[table(name = "accounts", key = u64, value = String)]
struct Accounts;

#[derive(Table)]
#[table(name = "tags", key = u32, value = String, dupsort)]
struct Tags;

#[derive(Table)]
#[table(name = "blobs", key = u32, value = Vec<u8>, codec = tabula::Raw)]
struct Blobs;

#[derive(Schema)]
struct Shelf(Accounts, Tags, Blobs);

/// The tables of [`Shelf`], with a key each holds.
const SHELF: [(&str, &str); 3] = [("accounts", "17"), ("tags", "40"), ("blobs", "3")];

/// Damaged copies per run, and pages damaged in each.
const COPIES: u64 = 12;
const PAGES_PER_COPY: u64 = 8;

/// A database of the three tables, written in one transaction: small and large values,
/// dupsort keys with a few values (a sub-page in the leaf) and with many (a nested tree).
fn write_shelf(dir: &Path) -> (PathBuf, u64) {
    let db = tabula::open::<Shelf>(dir, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..2000u64 {
        tx.put::<Accounts>(&n, &ledger(n)).unwrap();
    }
    for k in 0..200u32 {
        let values = if k % 20 == 0 { 300 } else { 4 };
        for v in 0..values {
            tx.put::<Tags>(&k, &format!("tag {v:05} of {k}")).unwrap();
        }
    }
    for n in 0..600u32 {
        // Every 50th value is larger than a page: it lives on large pages.
        let len = if n % 50 == 0 { 9000 } else { 48 };
        tx.put::<Blobs>(&n, &vec![n as u8; len]).unwrap();
    }
    tx.commit().unwrap();
    assert!(db.check().unwrap().is_ok());
    let page = u64::from(db.info().unwrap().page_size);
    (dir.join("mdbx.dat"), page)
}

/// Every read command of the CLI on `db`, with what it reads: `Some(table)` for a command that
/// reads one table.
fn read_commands(db: &str, dest: &Path) -> Vec<(Vec<String>, Option<&'static str>)> {
    let s = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let mut commands = vec![
        (s(&["info", db]), None),
        (s(&["info", db, "--json"]), None),
        (s(&["tables", db, "--all"]), None),
        (s(&["tables", db, "--json"]), None),
        (s(&["readers", db]), None),
        (s(&["check", db]), None),
        (s(&["check", db, "--json"]), None),
    ];
    for (table, key) in SHELF {
        commands.push((s(&["get", db, table, key]), Some(table)));
        commands.push((s(&["get", db, table, key, "--json"]), Some(table)));
        commands.push((s(&["dump", db, table]), Some(table)));
        commands.push((s(&["dump", db, table, "--format", "hex"]), Some(table)));
        commands.push((s(&["dump", db, table, "--json", "--reverse"]), Some(table)));
    }
    for (name, compact) in [("copy", false), ("compact", true)] {
        let to = dest.join(name);
        let mut args = s(&["copy", db, to.to_str().unwrap()]);
        if compact {
            args.insert(1, "--compact".to_owned());
        }
        commands.push((args, None));
    }
    commands
}

/// Random bytes in pages (headers, node sizes, keys and values) of copies of a database: every
/// read command of the CLI on every copy ends with an exit status, never a signal; damage is
/// exit 1 with a message naming the table a command reads; and `check` names every table that
/// another command found damaged.
#[test]
fn random_bytes_in_pages_never_kill_a_read_command() {
    let base = random::seed("random_bytes_in_pages_never_kill_a_read_command");
    let pristine = tempfile::tempdir().unwrap();
    let (file, page) = write_shelf(pristine.path());
    let mut failures = Vec::new();
    let mut assertions = Vec::new();
    for copy in 0..COPIES {
        let mut rng = random::Rng::new(base ^ copy);
        let dir = tempfile::tempdir().unwrap();
        let damaged = dir.path().join("db");
        std::fs::create_dir(&damaged).unwrap();
        std::fs::copy(&file, damaged.join("mdbx.dat")).unwrap();
        let done = damage::random_bytes_in_pages(
            &damaged.join("mdbx.dat"),
            page as usize,
            &mut rng,
            PAGES_PER_COPY,
        );
        let db = damaged.to_str().unwrap();
        let at = format!("seed {base} copy {copy} ({})", done.join(", "));
        // Damage to the table catalog can take Tabula's meta table out of it: the file is then
        // a plain libmdbx file to the tool, whose keys are hex, so a typed key is a usage
        // error (exit 2) there, and only there.
        let catalog = tabula(&["tables", db, "--all", "--json"]);
        let untyped = catalog.status.code() == Some(0)
            && !String::from_utf8_lossy(&catalog.stdout).contains("__tabula_meta");
        // Tables a command failed on, and whether anything failed.
        let mut failed_tables: Vec<&str> = Vec::new();
        let mut any_failed = false;
        let mut check_json = None;
        for (args, table) in read_commands(db, dir.path()) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = tabula(&args);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let shown = format!("{at}: `tabula {}`", args.join(" "));
            let Some(code) = out.status.code() else {
                match damage::assertion_after_damage(out.status, &stderr) {
                    Some(line) => assertions.push(format!("{shown}: {line}")),
                    None => failures.push(format!("{shown} died: {}\n{stderr}", out.status)),
                }
                continue;
            };
            match code {
                0 => {}
                1 => {
                    any_failed = true;
                    if let Some(t) = table {
                        // The open reads Tabula's meta table: its damage is named there.
                        if !stderr.contains(&format!("`{t}`"))
                            && !stderr.contains("`__tabula_meta`")
                        {
                            failures
                                .push(format!("{shown}: exit 1 without naming `{t}`: {stderr}"));
                        }
                        failed_tables.push(t);
                    }
                }
                2 if untyped && table.is_some() => {}
                other => failures.push(format!("{shown}: exit {other}: {stderr}")),
            }
            if args[0] == "check" && args.contains(&"--json") {
                check_json = Some((code, stdout.into_owned(), stderr.into_owned()));
            }
        }
        // `check` names every table another command could not read.
        let Some((code, stdout, stderr)) = check_json else {
            continue;
        };
        if any_failed && code != 1 {
            failures.push(format!(
                "{at}: a command found damage, `check --json` exit {code}: {stderr}"
            ));
            continue;
        }
        if code != 1 {
            continue;
        }
        match serde_json::from_str::<Json>(&stdout) {
            Ok(json) => {
                let damaged = json["damaged_tables"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let named = |t: &str| damaged.iter().any(|d| d == t || d == "@MAIN");
                for t in &failed_tables {
                    if !named(t) {
                        failures.push(format!(
                            "{at}: `check --json` does not name `{t}`: {damaged:?}"
                        ));
                    }
                }
            }
            // The open failed: the error says why.
            Err(_) if stdout.is_empty() && stderr.starts_with("error: ") => {}
            Err(e) => failures.push(format!(
                "{at}: `check --json` printed no report ({e}): {stdout}\n{stderr}"
            )),
        }
    }
    if !assertions.is_empty() {
        eprintln!(
            "{} libmdbx assertion abort(s), debug build:\n{}",
            assertions.len(),
            assertions.join("\n")
        );
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A file whose meta table lost its schema record (the record's key damaged): a typed key is
/// refused as damage (exit 1, naming the meta table), not as the user's mistake (exit 2), and a
/// hex key still reads. Seed 11523430824934641773 of the random test found it.
#[test]
fn a_lost_schema_record_is_damage_not_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = write(dir.path());
    let mut data = std::fs::read(&file).unwrap();
    // The record's key, `schema`, as a key in the meta table's leaf: not inside the record's
    // JSON (quoted there). An earlier copy of the leaf may be left in a free page too: every
    // copy is changed, so the live one is.
    let at: Vec<usize> = data
        .windows(8)
        .enumerate()
        .filter(|(_, w)| &w[1..7] == b"schema" && w[0] != b'"' && w[7] != b'"' && w[7] != b'_')
        .map(|(i, _)| i + 1)
        .collect();
    assert!(!at.is_empty(), "the record key is in the file");
    for at in at {
        data[at + 4] ^= 0x40; // `schema` -> `sche-a`: sorts where it did, under another name
    }
    std::fs::write(&file, data).unwrap();
    let db = dir.path().to_str().unwrap();

    let out = tabula(&["get", db, "ledger", "7"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`__tabula_meta`") && stderr.contains("damaged"),
        "{stderr}"
    );
    assert!(stderr.contains("`ledger`"), "{stderr}");

    let hex = tabula(&["get", db, "ledger", "0000000000000007"]);
    assert_eq!(
        hex.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&hex.stderr)
    );
    assert!(String::from_utf8_lossy(&hex.stdout).contains(&hex_of(&ledger(7))));
}

fn hex_of(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}
