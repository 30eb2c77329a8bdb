//! The `tabula` tool on a table declared `history`: `get --as-of` reads a value at the end of a
//! version, `history --key` lists a key's versions, `history --version` a version's changes,
//! and `check` checks the history (and names the damage written into it by hand).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value as Json;
use tabula::{History, Options, Schema, Table};
use tabula_core::startup::Bootstrap;

#[derive(Table)]
#[table(name = "balances", key = String, value = u64, history)]
struct Balances;

#[derive(History)]
#[history(on = Balances, name = "balances_history")]
struct BalancesHistory;

#[derive(Schema)]
struct App(Balances, BalancesHistory);

/// Version 1: alice 10, bob 5; version 2: alice 20, bob deleted; version 3: carol 1.
fn write(path: &Path) {
    let db = tabula::open::<App>(path, Options::new()).unwrap();
    let steps: [&[(&str, Option<u64>)]; 3] = [
        &[("alice", Some(10)), ("bob", Some(5))],
        &[("alice", Some(20)), ("bob", None)],
        &[("carol", Some(1))],
    ];
    for (i, writes) in steps.iter().enumerate() {
        let mut tx = db.write().unwrap();
        tx.set_version(i as u64 + 1);
        for (k, v) in writes.iter() {
            match v {
                Some(v) => tx.put::<Balances>(*k, v).unwrap(),
                None => {
                    tx.delete::<Balances>(*k).unwrap();
                }
            }
        }
        tx.commit().unwrap();
    }
}

fn tabula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .output()
        .expect("the tabula binary runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &Output) -> Json {
    serde_json::from_str(&stdout(out)).unwrap()
}

#[test]
fn values_as_of_a_version_versions_and_changes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let p = dir.path().to_str().unwrap();
    assert_eq!(
        stdout(&tabula(&["get", p, "balances", "alice", "--as-of", "1"])).trim(),
        "10"
    );
    assert_eq!(
        stdout(&tabula(&["get", p, "balances", "alice", "--as-of", "2"])).trim(),
        "20"
    );
    let doc = json(&tabula(&[
        "--json", "get", p, "balances", "bob", "--as-of", "1",
    ]));
    assert_eq!(
        (doc["key"].clone(), doc["value"].clone()),
        (Json::from("bob"), Json::from(5))
    );
    // No value then: exit 1, saying so.
    let gone = tabula(&["get", p, "balances", "bob", "--as-of", "2"]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&gone.stderr)
            .contains("had no value in table `balances` at the end of version 2"),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );

    let doc = json(&tabula(&[
        "--json", "history", p, "balances", "--key", "alice",
    ]));
    assert_eq!(doc["versions"], serde_json::json!([1, 2]));
    let text = stdout(&tabula(&["history", p, "balances", "--key", "bob"]));
    assert!(text.contains("changed at 2 versions: 1, 2"), "{text}");

    let doc = json(&tabula(&[
        "--json",
        "history",
        p,
        "balances",
        "--version",
        "2",
    ]));
    assert_eq!(
        doc["changes"],
        serde_json::json!([
            {"key": "alice", "before": 10, "after": 20},
            {"key": "bob", "before": 5, "after": null},
        ])
    );

    // A table without a history.
    let none = tabula(&["history", p, "balances_history", "--version", "1"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("records no history"));
}

#[test]
fn check_checks_the_history() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let p = dir.path().to_str().unwrap();
    let out = tabula(&["check", p]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Alice's change at version 2 (under her key: a string key is escaped), deleted by hand.
    let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 2).unwrap();
    let history = boot.find_table("balances_history").unwrap().unwrap().handle;
    let mut entry = vec![1u8];
    entry.extend_from_slice(b"alice\0\0");
    entry.extend_from_slice(&2u64.to_be_bytes());
    assert!(
        boot.delete_raw("balances_history", history, &entry)
            .unwrap()
    );
    boot.checkpoint().unwrap();
    drop(boot);

    let out = tabula(&["check", p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("at 2: no change"), "{text}");
    assert!(text.contains("balances_history"), "{text}");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn check_finds_a_row_written_without_recording_its_change() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let p = dir.path().to_str().unwrap();
    // A row written beside Tabula's write path, by hand: its history knows nothing of it.
    let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 2).unwrap();
    let balances = boot.find_table("balances").unwrap().unwrap().handle;
    let value = boot
        .get_raw("balances", balances, b"alice")
        .unwrap()
        .unwrap();
    boot.put_raw("balances", balances, b"dave", &value, false)
        .unwrap();
    boot.checkpoint().unwrap();
    drop(boot);

    let out = tabula(&["check", p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(r#"problem: table `balances_history`: row of `balances` at key Str("dave"): not in the history"#),
        "{text}"
    );
    assert!(text.contains("written without recording it"), "{text}");
    let out = tabula(&["--json", "check", p]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], false, "{doc}");
    let problems = doc["first_problems"]
        .as_array()
        .expect("a list of problems");
    assert!(
        problems.iter().any(|p| p["table"] == "balances_history"
            && p["error"]
                .as_str()
                .is_some_and(|e| e.contains("Str(\"dave\")"))),
        "{doc}"
    );
}

/// A load writes rows without recording their changes: into a table with a history it would
/// make reads as of a version wrong (here a row deleted at version 4 would read as present
/// then). Refused, naming the table and its history; into a new database it loads, and the
/// application's open starts the history on the loaded rows.
#[test]
fn load_refuses_a_table_with_a_history() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let p = dir.path().to_str().unwrap();
    let dumps = tempfile::tempdir().unwrap();
    let dump = dumps.path().join("balances.jsonl");
    std::fs::write(&dump, stdout(&tabula(&["dump", p, "balances"]))).unwrap();
    let dump = dump.to_str().unwrap();
    // Version 4 deletes every row: the table is empty, its history holds the deletes.
    let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    tx.set_version(4);
    tx.clear::<Balances>().unwrap();
    tx.commit().unwrap();
    drop(db);

    let out = tabula(&["load", p, "balances", "--input", dump]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("table `balances` of")
            && stderr(&out).contains("has the history `balances_history`"),
        "{}",
        stderr(&out)
    );
    // Nothing was loaded: alice had no value at the end of version 4, and has none.
    let gone = tabula(&["get", p, "balances", "alice", "--as-of", "4"]);
    assert_eq!(gone.status.code(), Some(1), "{}", stdout(&gone));
    let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().len::<Balances>().unwrap(), 0);
    drop(db);

    // Into a new database: loaded, and the history starts on the loaded rows.
    let fresh = tempfile::tempdir().unwrap();
    let f = fresh.path().to_str().unwrap();
    let out = tabula(&["load", f, "balances", "--input", dump]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (db, report) = tabula::open_with_report::<App>(fresh.path(), Options::new()).unwrap();
    assert_eq!(report.histories_started, ["balances_history"]);
    assert_eq!(db.read().unwrap().len::<Balances>().unwrap(), 2);
    drop(db);
    let out = tabula(&["check", f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[derive(Table)]
#[table(name = "storage", key = u64, subkey = u32, value = u64, dupsort, history)]
struct Storage;

#[derive(History)]
#[history(on = Storage, name = "storage_history")]
struct StorageHistory;

#[derive(Schema)]
struct Dups(Storage, StorageHistory);

/// A `dupsort` table's history: `check` checks it (and finds a row written by hand beside
/// it); `get --as-of` reads a key's values as of a version (a unit's bounds from the recorded
/// subkey shape), `history` lists a key's versions and a version's changes by (key, subkey).
#[test]
fn a_dupsort_tables_history_is_checked_and_read_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<Dups>(dir.path(), Options::new()).unwrap();
    // Version 1: key 7 slot 1 = 1; version 2: slot 1 = 2, slot 2 = 20; version 3: key 8.
    for version in 1..=3u64 {
        let mut tx = db.write().unwrap();
        tx.set_version(version);
        let mut cursor = tx.cursor_mut::<Storage>().unwrap();
        match version {
            3 => cursor.upsert_dup(&8, &1, &80).unwrap(),
            _ => cursor.upsert_dup(&7, &1, &version).unwrap(),
        }
        if version == 2 {
            cursor.upsert_dup(&7, &2, &20).unwrap();
        }
        drop(cursor);
        tx.commit().unwrap();
    }
    drop(db);
    let p = dir.path().to_str().unwrap();
    let out = tabula(&["check", p]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let pairs = |values: &Json| -> Vec<(u64, u64)> {
        (values.as_array().unwrap().iter())
            .map(|e| (e["subkey"].as_u64().unwrap(), e["value"].as_u64().unwrap()))
            .collect()
    };
    let as_of = |version: &str| {
        let got = json(&tabula(&[
            "--json", "get", p, "storage", "7", "--as-of", version,
        ]));
        assert_eq!(got["key"], 7, "{got}");
        pairs(&got["values"])
    };
    assert_eq!(as_of("1"), [(1, 1)]);
    assert_eq!(as_of("2"), [(1, 2), (2, 20)]);
    assert_eq!(as_of("3"), [(1, 2), (2, 20)]);
    // Before its first version the key had no value; nor slot 2 at version 1.
    for args in [
        &["get", p, "storage", "7", "--as-of", "0"][..],
        &["get", p, "storage", "7", "2", "--as-of", "1"][..],
    ] {
        let out = tabula(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("had no value"), "{}", stderr(&out));
    }
    let text = stdout(&tabula(&["get", p, "storage", "7", "--as-of", "1"]));
    assert!(text.contains("at the end of version 1"), "{text}");

    let versions = json(&tabula(&["--json", "history", p, "storage", "--key", "7"]));
    assert_eq!(
        versions["versions"],
        serde_json::json!([1, 2]),
        "{versions}"
    );
    let changes = json(&tabula(&[
        "--json",
        "history",
        p,
        "storage",
        "--version",
        "2",
    ]));
    let changes = changes["changes"].as_array().unwrap().clone();
    type Change = (u64, Vec<(u64, u64)>, Vec<(u64, u64)>);
    let got: Vec<Change> = (changes.iter())
        .map(|c| {
            let k = c["key"].as_u64().unwrap();
            (k, pairs(&c["before"]), pairs(&c["after"]))
        })
        .collect();
    assert_eq!(
        got,
        [(7, vec![(1, 1)], vec![(1, 2)]), (7, vec![], vec![(2, 20)])]
    );

    // A key written beside Tabula's write path: its history knows nothing of it.
    let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 2).unwrap();
    let storage = boot.find_table("storage").unwrap().unwrap().handle;
    let mut value = 1u32.to_be_bytes().to_vec();
    value.push(3);
    boot.put_raw("storage", storage, &9u64.to_be_bytes(), &value, false)
        .unwrap();
    boot.checkpoint().unwrap();
    drop(boot);
    let out = tabula(&["check", p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("row of `storage` at key"), "{text}");
    assert!(text.contains("written without recording it"), "{text}");
}
