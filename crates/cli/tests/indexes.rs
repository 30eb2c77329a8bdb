//! The `tabula` tool on a database with secondary indexes: `tables` lists each index under its
//! table, `check` checks that every index entry names a row of its table, `get` on an index
//! gives the rows of an index key, and `load` refuses to bypass indexes.

use std::path::Path;
use std::process::{Command, Output};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use tabula::{Index, Options, Schema, Table};
use tabula_core::startup::Bootstrap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Transfer {
    from: u32,
    hash: u64,
}

#[derive(Table)]
#[table(name = "transfers", key = u64, value = Transfer, indexed, integer_key)]
struct Transfers;

#[derive(Table)]
#[table(name = "notes", key = u64, value = String)]
struct Notes;

#[derive(Index)]
#[index(name = "by_sender", on = Transfers, key = u32, by = sender)]
struct BySender;

#[derive(Index)]
#[index(name = "by_hash", on = Transfers, key = u64, unique, by = hash)]
struct ByHash;

fn sender(_: &u64, t: &Transfer) -> u32 {
    t.from
}

fn hash(_: &u64, t: &Transfer) -> u64 {
    t.hash
}

#[derive(Schema)]
struct App(BySender, Notes, Transfers, ByHash);

fn write(path: &Path) {
    let db = tabula::open::<App>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for id in 1..=6u64 {
        tx.put::<Transfers>(
            &id,
            &Transfer {
                from: (id % 2) as u32,
                hash: id * 100,
            },
        )
        .unwrap();
    }
    tx.put::<Notes>(&1, &"n".to_string()).unwrap();
    tx.commit().unwrap();
}

fn tabula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .output()
        .expect("the tabula binary runs")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn stdout_of(args: &[&str], code: i32) -> String {
    let out = tabula(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn tables_lists_each_index_under_its_table() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let rows: Json =
        serde_json::from_str(&stdout_of(&["tables", p(dir.path()), "--json"], 0)).unwrap();
    let names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert_eq!(at("by_hash"), at("transfers") + 1, "{names:?}");
    assert_eq!(at("by_sender"), at("transfers") + 2, "{names:?}");
    let by_hash = &rows[at("by_hash")];
    assert_eq!(by_hash["index"]["source"], "transfers");
    assert_eq!(by_hash["index"]["unique"], true);
    assert_eq!(rows[at("notes")]["index"], Json::Null);
    let text = stdout_of(&["tables", p(dir.path())], 0);
    let line = text.lines().find(|l| l.starts_with("by_sender ")).unwrap();
    assert!(line.contains("dupsort,index of transfers"), "{line}");
    let line = text.lines().find(|l| l.starts_with("by_hash ")).unwrap();
    assert!(line.contains("index of transfers,unique"), "{line}");
    // An index key's primary keys, through the index table.
    let get: Json = serde_json::from_str(&stdout_of(
        &["get", p(dir.path()), "by_sender", "1", "--json"],
        0,
    ))
    .unwrap();
    let rows = |from: u32, ids: &[u64]| -> Vec<Json> {
        ids.iter()
            .map(|id| serde_json::json!({"key": id, "value": {"from": from, "hash": id * 100}}))
            .collect()
    };
    assert_eq!(
        get,
        serde_json::json!({"key": 1, "index_of": "transfers", "rows": rows(1, &[1, 3, 5])})
    );
    let get: Json = serde_json::from_str(&stdout_of(
        &["get", p(dir.path()), "by_hash", "400", "--json"],
        0,
    ))
    .unwrap();
    assert_eq!(
        get,
        serde_json::json!({"key": 400, "index_of": "transfers", "rows": rows(0, &[4])})
    );
    let text = stdout_of(&["get", p(dir.path()), "by_sender", "0"], 0);
    assert!(
        text.starts_with("3 rows of index key 0 in `by_sender` (an index of `transfers`):"),
        "{text}"
    );
    assert!(text.contains("  4 -> "), "{text}");
}

#[test]
fn check_reports_index_entries_whose_row_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let report: Json =
        serde_json::from_str(&stdout_of(&["check", p(dir.path()), "--json"], 0)).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    let by_sender = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "by_sender")
        .unwrap();
    assert_eq!(by_sender["index_of"], "transfers");
    assert_eq!(by_sender["rows_checked"], 6);
    // Delete a row behind the index's back.
    {
        let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 4).unwrap();
        let transfers = boot.find_table("transfers").unwrap().unwrap().handle;
        assert!(
            boot.delete_raw("transfers", transfers, &4u64.to_ne_bytes())
                .unwrap()
        );
        boot.checkpoint().unwrap();
    }
    let report: Json =
        serde_json::from_str(&stdout_of(&["check", p(dir.path()), "--json"], 1)).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["problems"], 2, "{report}"); // by_sender and by_hash
    let text = stdout_of(&["check", p(dir.path())], 1);
    assert!(
        text.contains(
            "index entry names the row 0x0000000000000004 that table `transfers` does not have"
        ),
        "{text}"
    );
}

#[test]
fn load_refuses_to_bypass_indexes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    for table in ["transfers", "by_sender"] {
        let dump = tabula(&["dump", p(dir.path()), table]);
        assert!(dump.status.success());
        let file = dir.path().join(format!("{table}.jsonl"));
        std::fs::write(&file, &dump.stdout).unwrap();
        let dest = tempfile::tempdir().unwrap();
        // Into an existing database whose table has indexes, or of an index: refused.
        write(dest.path());
        let out = tabula(&["load", p(dest.path()), "notes2", "--input", p(&file)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if table == "by_sender" {
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            assert!(stderr.contains("is a secondary index"), "{stderr}");
            // One sentence, without the gaps a missing line continuation leaves.
            assert!(!stderr.contains("  "), "{stderr:?}");
        } else {
            assert!(
                out.status.success(),
                "into a table of another name: {stderr}"
            );
        }
        if table == "transfers" {
            let out = tabula(&["load", p(dest.path()), "--input", p(&file)]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            assert!(stderr.contains("has the index"), "{stderr}");
            assert!(!stderr.contains("  "), "{stderr:?}");
        }
    }
}
