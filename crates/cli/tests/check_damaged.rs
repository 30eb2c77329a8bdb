//! `tabula check` on a file with damaged pages: it goes on past every table it cannot read,
//! names each damaged table, prints libmdbx's own report, and prints its JSON report (`--json`)
//! on failure too, exiting 1. The pages are damaged the way `tests/bad_input.rs` does it: the
//! database is written in one transaction (every page holding an entry is live), the page
//! holding a chosen entry is found by searching the file for the entry's bytes, and zeroed (a
//! zero page trips no libmdbx assertion, so debug builds of the binary run to the end too).

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
