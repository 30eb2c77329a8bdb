//! End-to-end tests of the `tabula` binary against databases written with the library. Expected
//! values come from what each test wrote, never from the tool's own output.

use std::path::Path;
use std::process::{Command, Output};

use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};
use tabula::{Key, Migrations, Options, Schema, Table, TableFlags};
use tabula_core::startup::Bootstrap;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Key)]
struct AccountAt {
    account: String,
    block: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Kind {
    User,
    Contract { code_hash: u32 },
    Label(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Account {
    balance: u64,
    kind: Kind,
    note: Option<String>,
    delta: i64,
}

#[derive(Table)]
#[table(name = "accounts", key = AccountAt, value = Account)]
struct Accounts;

#[derive(Table)]
#[table(name = "pairs", key = (String, u64), value = String)]
struct Pairs;

#[derive(Table)]
#[table(name = "tags", key = u32, value = String, dupsort)]
struct Tags;

#[derive(Table)]
#[table(name = "heights", key = u64, value = i32, integer_key)]
struct Heights;

#[derive(Table)]
#[table(name = "blobs", key = i16, value = Vec<u8>, codec = tabula::Raw)]
struct Blobs;

#[derive(Schema)]
struct App(Accounts, Pairs, Tags, Heights, Blobs);

fn account(i: u64) -> Account {
    Account {
        balance: i * 1000,
        kind: match i % 3 {
            0 => Kind::User,
            1 => Kind::Contract {
                code_hash: i as u32 * 7,
            },
            _ => Kind::Label(format!("label-{i}")),
        },
        note: i.is_multiple_of(2).then(|| format!("note {i}")),
        delta: -(i as i64) * 3,
    }
}

const PAIR_NAMES: [&str; 3] = ["alice", "bob", "carol"];

/// Writes the fixture database and returns nothing; every table gets known contents.
fn write_fixture(path: &Path) {
    write_fixture_with(path, Options::new());
}

/// [`write_fixture`] with these options.
fn write_fixture_with(path: &Path, options: Options) {
    let db = tabula::open::<App>(path, options).unwrap();
    let mut tx = db.write().unwrap();
    for (n, name) in ["alice", "bob"].iter().enumerate() {
        for block in 0..3u64 {
            let key = AccountAt {
                account: name.to_string(),
                block,
            };
            tx.put::<Accounts>(&key, &account(n as u64 * 3 + block))
                .unwrap();
        }
    }
    for name in PAIR_NAMES {
        for i in 0..4u64 {
            tx.put::<Pairs>(&(name.to_string(), i), &format!("{name}/{i}"))
                .unwrap();
        }
    }
    for k in 0..5u32 {
        tx.put::<Tags>(&k, &format!("a{k}")).unwrap();
        tx.put::<Tags>(&k, &format!("b{k}")).unwrap();
    }
    for h in [1u64, 2, 300, 70_000, 1 << 40] {
        tx.put::<Heights>(&h, &(-(h as i64 % 1000) as i32)).unwrap();
    }
    tx.put::<Blobs>(&-5, &vec![0xde, 0xad, 0x00, 0x01]).unwrap();
    tx.put::<Blobs>(&7, &vec![]).unwrap();
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

/// Runs a command that must succeed and parses its stdout as JSON.
fn ok_json(args: &[&str]) -> Json {
    let out = tabula(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Runs a command that must fail with `code`; returns stderr.
fn ok_text(args: &[&str]) -> String {
    let out = tabula(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(args: &[&str], code: i32) -> String {
    let out = tabula(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: stderr {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    stderr
}

/// The entries of a `jsonl` dump, after its header line (checked to be one).
fn jsonl(out: &Output) -> Vec<Json> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).unwrap());
    let header = lines.next().expect("a header line");
    assert_eq!(header["tabula_dump"], json!(1), "the header line: {header}");
    lines.collect()
}

#[test]
fn info_and_tables_describe_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());

    let info = ok_json(&["info", db, "--json"]);
    assert!(info["file_size"].as_u64().unwrap() > 0);
    assert!(info["page_size"].as_u64().unwrap().is_power_of_two());
    for field in ["lower", "now", "upper", "growth"] {
        assert!(info["geometry"][field].is_u64(), "geometry.{field}: {info}");
    }
    // The default upper bound `Options::new()` sets.
    assert_eq!(info["geometry"]["upper"], json!(1u64 << 40));
    assert!(info["last_txn"].as_u64().unwrap() >= 1);
    assert!(info["readers"]["max"].as_u64().unwrap() > 0);
    assert_eq!(info["schema_version"], json!(1));
    assert_eq!(info["applied"], json!([]));

    let tables = ok_json(&["tables", db, "--json"]);
    let rows = tables.as_array().unwrap();
    let by_name = |name: &str| -> Json {
        rows.iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no row for {name}: {tables}"))
    };
    let mut names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["accounts", "blobs", "heights", "pairs", "tags"]);
    assert_eq!(by_name("accounts")["entries"], json!(6));
    assert_eq!(by_name("pairs")["entries"], json!(PAIR_NAMES.len() * 4));
    assert_eq!(by_name("tags")["entries"], json!(10));
    assert_eq!(by_name("tags")["flags"], json!(["dupsort"]));
    assert_eq!(by_name("heights")["flags"], json!(["integer_key"]));
    assert_eq!(by_name("pairs")["flags"], json!([]));
    assert_eq!(by_name("pairs")["key"], json!("(str, u64)"));
    assert_eq!(
        by_name("accounts")["key"],
        json!("AccountAt { account: str, block: u64 }")
    );
    assert_eq!(by_name("heights")["key"], json!("u64 native-endian"));
    assert_eq!(by_name("accounts")["value"], json!("bincode<Account>"));
    assert!(
        by_name("blobs")["value"]
            .as_str()
            .unwrap()
            .starts_with("raw")
    );
    let accounts = by_name("accounts");
    let pages = accounts["pages"]["branch"].as_u64().unwrap()
        + accounts["pages"]["leaf"].as_u64().unwrap()
        + accounts["pages"]["overflow"].as_u64().unwrap();
    assert_eq!(
        accounts["bytes"].as_u64().unwrap(),
        pages * info["page_size"].as_u64().unwrap()
    );

    let all = ok_json(&["tables", db, "--json", "--all"]);
    assert!(
        all.as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "__tabula_meta")
    );

    // Human output names every table.
    let out = tabula(&["tables", db]);
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["accounts", "pairs", "tags", "heights", "blobs", "DBI"] {
        assert!(text.contains(name), "{text}");
    }
    let out = tabula(&["info", db]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("schema version   1"));
}

#[test]
fn a_table_missing_from_the_record_is_listed_without_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    // Create a table behind the startup step's back: it exists in the file, not in the record.
    let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0).unwrap();
    let dbi = boot.create_table("stray", TableFlags::NONE).unwrap();
    boot.put_raw("stray", dbi, b"k\x01", b"\xff\x00", false)
        .unwrap();
    boot.checkpoint().unwrap();
    drop(boot);

    let db = p(dir.path());
    let tables = ok_json(&["tables", db, "--json"]);
    let stray = tables
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "stray")
        .cloned()
        .expect("the stray table is listed");
    assert_eq!(stray["entries"], json!(1));
    assert_eq!(stray["key"], Json::Null);
    assert_eq!(stray["value"], Json::Null);
    // Keys and values are hex.
    let got = ok_json(&["get", db, "stray", "\"6b01\"", "--json"]);
    assert_eq!(got, json!({"key": "6b01", "value": "ff00"}));
}

#[test]
fn get_parses_typed_keys_and_decodes_values() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());

    // A derived struct key, as an object or an array; the value has an enum and an Option.
    for key in [r#"{"account": "bob", "block": 1}"#, r#"["bob", 1]"#] {
        let got = ok_json(&["get", db, "accounts", key, "--json"]);
        assert_eq!(
            got,
            json!({
                "key": serde_json::to_value(AccountAt { account: "bob".into(), block: 1 }).unwrap(),
                "value": serde_json::to_value(account(4)).unwrap(),
            })
        );
    }
    // Every enum variant and both Option cases decode.
    for (name, block, i) in [("alice", 0, 0u64), ("alice", 1, 1), ("alice", 2, 2)] {
        let key = json!([name, block]).to_string();
        let got = ok_json(&["get", db, "accounts", &key, "--json"]);
        assert_eq!(got["value"], serde_json::to_value(account(i)).unwrap());
    }
    // A tuple key.
    let got = ok_json(&["get", db, "pairs", r#"["carol", 3]"#, "--json"]);
    assert_eq!(got, json!({"key": ["carol", 3], "value": "carol/3"}));
    // Dupsort: every value, in order.
    let got = ok_json(&["get", db, "tags", "4", "--json"]);
    assert_eq!(got, json!({"key": 4, "values": ["a4", "b4"]}));
    // integer_key.
    let got = ok_json(&["get", db, "heights", "70000", "--json"]);
    assert_eq!(got, json!({"key": 70000, "value": -(70_000 % 1000)}));
    // A raw table: signed key, hex value.
    let got = ok_json(&["get", db, "blobs", "-5", "--json"]);
    assert_eq!(got, json!({"key": -5, "value": "dead0001"}));
    // Human output is the value alone.
    let out = tabula(&["get", db, "pairs", r#"["alice", 0]"#]);
    assert_eq!(
        serde_json::from_slice::<Json>(&out.stdout).unwrap(),
        json!("alice/0")
    );
}

#[test]
fn dump_walks_ranges_in_both_directions() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());

    let expected_pairs: Vec<Json> = PAIR_NAMES
        .iter()
        .flat_map(|n| (0..4u64).map(move |i| json!({"key": [n, i], "value": format!("{n}/{i}")})))
        .collect();
    let all = ok_json(&["dump", db, "pairs", "--json"]);
    assert_eq!(all, Json::Array(expected_pairs.clone()));

    // Inclusive bounds, a limit, and reverse.
    let out = tabula(&[
        "dump",
        db,
        "pairs",
        "--from",
        r#"["bob", 2]"#,
        "--to",
        r#"["carol", 1]"#,
    ]);
    assert_eq!(jsonl(&out), expected_pairs[6..10].to_vec());
    let out = tabula(&[
        "dump",
        db,
        "pairs",
        "--from",
        r#"["bob", 2]"#,
        "--to",
        r#"["carol", 1]"#,
        "--reverse",
    ]);
    let mut rev = expected_pairs[6..10].to_vec();
    rev.reverse();
    assert_eq!(jsonl(&out), rev);
    let out = tabula(&["dump", db, "pairs", "--limit", "2", "--reverse"]);
    assert_eq!(
        jsonl(&out),
        vec![expected_pairs[11].clone(), expected_pairs[10].clone()]
    );

    // integer_key tables walk in integer order, bounds compared as integers.
    let out = tabula(&["dump", db, "heights", "--from", "2", "--to", "70000"]);
    let keys: Vec<Json> = jsonl(&out).iter().map(|e| e["key"].clone()).collect();
    assert_eq!(keys, [json!(2), json!(300), json!(70000)]);
    let out = tabula(&["dump", db, "heights", "--reverse", "--to", "300"]);
    let keys: Vec<Json> = jsonl(&out).iter().map(|e| e["key"].clone()).collect();
    assert_eq!(keys, [json!(300), json!(2), json!(1)]);

    // Dupsort: each duplicate is an entry; reverse from a key starts at its last duplicate.
    let out = tabula(&["dump", db, "tags", "--to", "1", "--reverse"]);
    assert_eq!(
        jsonl(&out),
        vec![
            json!({"key": 1, "value": "b1"}),
            json!({"key": 1, "value": "a1"}),
            json!({"key": 0, "value": "b0"}),
            json!({"key": 0, "value": "a0"}),
        ]
    );

    // Hex: stored bytes (big-endian i16 with the sign bit flipped; raw value).
    let out = tabula(&["dump", db, "blobs", "--format", "hex"]);
    assert!(out.status.success());
    let enc = |k: i16| {
        let b = ((k as u16) ^ 0x8000).to_be_bytes();
        format!("{:02x}{:02x}", b[0], b[1])
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let (header, entries) = text.split_once('\n').unwrap();
    let header: Json = serde_json::from_str(header).unwrap();
    assert_eq!(header["format"], json!("hex"));
    assert_eq!(header["table"], json!("blobs"));
    assert_eq!(entries, format!("{} dead0001\n{} \n", enc(-5), enc(7)));
}

// ---- a migrated database ---------------------------------------------------------------------

#[derive(Serialize, Deserialize)]
struct BalanceV1 {
    balance: u64,
}

#[derive(Table)]
#[table(name = "balances", key = u64, value = BalanceV1)]
struct BalancesV1;

#[derive(Schema)]
struct V1(BalancesV1);

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Wallet {
    balance: u64,
    nonce: u32,
    memo: Option<String>,
}

#[derive(Table)]
#[table(name = "wallets", key = u64, value = Wallet)]
struct Wallets;

#[derive(Schema)]
struct V2(Wallets);

fn wallet(balance: u64) -> Wallet {
    Wallet {
        balance,
        nonce: (balance % 5) as u32,
        memo: None,
    }
}

#[test]
fn a_migrated_database_shows_its_version_steps_and_new_shape() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = tabula::open::<V1>(dir.path(), Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for i in 0..20u64 {
            tx.put::<BalancesV1>(&i, &BalanceV1 { balance: i * 11 })
                .unwrap();
        }
        tx.commit().unwrap();
    }
    let migrations = Migrations::new().step(2, "wallets", |m| {
        m.rename_table::<Wallets>("balances");
        m.transform::<Wallets, BalanceV1>(|old| wallet(old.balance));
    });
    drop(tabula::open_with::<V2>(dir.path(), Options::new(), &migrations).unwrap());

    let db = p(dir.path());
    let info = ok_json(&["info", db, "--json"]);
    assert_eq!(info["schema_version"], json!(2));
    let applied = info["applied"].as_array().unwrap();
    assert_eq!(applied.len(), 1);
    assert_eq!(applied[0]["version"], json!(2));
    assert_eq!(applied[0]["name"], json!("wallets"));

    let names: Vec<Json> = ok_json(&["tables", db, "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].clone())
        .collect();
    assert_eq!(names, [json!("wallets")]);
    let dump = ok_json(&["dump", db, "wallets", "--json", "--from", "18"]);
    assert_eq!(
        dump,
        json!([
            {"key": 18, "value": serde_json::to_value(wallet(18 * 11)).unwrap()},
            {"key": 19, "value": serde_json::to_value(wallet(19 * 11)).unwrap()},
        ])
    );
    let out = tabula(&["info", db]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("schema version   2"), "{text}");
    assert!(text.contains("wallets"), "{text}");
}

// ---- errors ----------------------------------------------------------------------------------

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every read command refused on a file that is not a database leaves its directory as it
/// found it: no lock file (`mdbx.lck` in a database directory, `FILE-lck` beside a data file
/// given by itself), no data file.
#[test]
fn a_refused_open_leaves_the_directory_as_it_found_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::create_dir(&db).unwrap();
    std::fs::write(db.join("mdbx.dat"), b"not a database\n".repeat(8192)).unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, b"not a database either\n".repeat(8192)).unwrap();
    let copy = dir.path().join("copy");
    for path in [p(&db), p(&file)] {
        for args in [
            &["info", path][..],
            &["tables", path],
            &["get", path, "t", "1"],
            &["dump", path, "t"],
            &["check", path],
            &["check", path, "--json"],
            &["readers", path],
            &["copy", path, p(&copy)],
        ] {
            let err = fails(args, 1);
            assert!(err.contains("not an MDBX database"), "{args:?}: {err}");
            assert_eq!(listing(&db), ["mdbx.dat"], "{args:?}");
            assert_eq!(listing(dir.path()), ["db", "notes.txt"], "{args:?}");
        }
    }
}

#[test]
fn errors_are_clear_and_exit_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());

    let missing = dir.path().join("nope");
    let err = fails(&["info", p(&missing)], 1);
    assert!(err.contains("does not exist"), "{err}");

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = fails(&["readers", p(&empty)], 1);
    assert!(err.contains("no database at this path"), "{err}");

    let not_mdbx = dir.path().join("not-a-db.txt");
    std::fs::write(&not_mdbx, vec![b'x'; 64 * 1024]).unwrap();
    let err = fails(&["tables", p(&not_mdbx)], 1);
    assert!(err.contains("not an MDBX database"), "{err}");

    let err = fails(&["get", db, "nosuch", "1"], 2);
    assert!(err.contains("no table `nosuch`"), "{err}");
    for name in ["accounts", "pairs", "tags", "heights", "blobs"] {
        assert!(err.contains(name), "the error lists the tables: {err}");
    }
    assert!(!err.contains("__tabula_meta"), "{err}");

    let err = fails(&["get", db, "pairs", "\"alice\""], 2);
    assert!(
        err.contains("(str, u64)"),
        "names the expected shape: {err}"
    );
    let err = fails(&["get", db, "pairs", "[alice, 1]"], 2);
    assert!(err.contains("not JSON"), "{err}");
    let err = fails(&["dump", db, "heights", "--from", "-1"], 2);
    assert!(err.contains("u64"), "{err}");
    let err = fails(&["get", db, "accounts", r#"{"account": "a"}"#], 2);
    assert!(err.contains("missing field `block`"), "{err}");

    let err = fails(&["get", db, "pairs", r#"["zed", 1]"#], 1);
    assert!(err.contains("not found"), "{err}");

    fails(&["dump", db], 2); // clap: missing TABLE
}

#[test]
fn a_record_from_a_newer_tabula_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0).unwrap();
    boot.meta_put("schema", br#"{"format": 99, "tables": {}}"#)
        .unwrap();
    boot.checkpoint().unwrap();
    drop(boot);
    for cmd in ["info", "tables"] {
        let err = fails(&[cmd, p(dir.path())], 1);
        assert!(err.contains("newer Tabula"), "{err}");
        assert!(err.contains("99"), "{err}");
    }
}

// ---- check, readers, copy ---------------------------------------------------------------------

#[test]
fn check_decodes_everything_and_reports_damage() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());
    let report = ok_json(&["check", db, "--json"]);
    assert_eq!(report["ok"], json!(true));
    assert_eq!(report["problems"], json!(0));
    // libmdbx's own check ran over the whole file.
    assert_eq!(report["libmdbx_check"]["ok"], json!(true));
    assert_eq!(report["libmdbx_check"]["problems"], json!(0));
    assert!(
        report["libmdbx_check"]["pages"].as_u64().unwrap() > 0,
        "{report}"
    );
    let accounts = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "accounts")
        .cloned()
        .unwrap();
    assert_eq!(accounts["entries"], json!(6));

    // A value that is not an `Account` (an enum variant number out of range).
    let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0).unwrap();
    let t = boot.find_table("accounts").unwrap().unwrap();
    let key = tabula_core::startup::encode_stored_key::<Accounts>(&AccountAt {
        account: "zed".into(),
        block: 0,
    });
    boot.put_raw("accounts", t.handle, &key, &[5, 9, 0, 0], false)
        .unwrap();
    boot.checkpoint().unwrap();
    drop(boot);
    let out = tabula(&["check", db, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["problems"], json!(1));
    assert_eq!(report["first_problems"][0]["table"], json!("accounts"));
    // dump still shows the entry, as hex with the error.
    let out = tabula(&["dump", db, "accounts", "--from", r#"["zed", 0]"#]);
    let entries = jsonl(&out);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["value_hex"], json!("05090000"));
    assert!(entries[0]["error"].is_string());
}

#[test]
fn readers_lists_a_live_reader_and_copy_compacts() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());

    {
        let app = tabula::open::<App>(dir.path(), Options::new()).unwrap();
        let tx = app.read().unwrap();
        let readers = ok_json(&["readers", db, "--json"]);
        let me = std::process::id() as i64;
        let mine: Vec<&Json> = readers["readers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["pid"].as_i64() == Some(me))
            .collect();
        assert!(
            !mine.is_empty(),
            "our read transaction is listed: {readers}"
        );
        assert!(mine.iter().all(|r| r["lag"].is_u64()));
        drop(tx);
        // The finished read transaction stays parked on its snapshot for the next read.
        let readers = ok_json(&["readers", db, "--json"]);
        let parked = readers["readers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["pid"].as_i64() == Some(me) && r["thread"].as_u64() == Some(u64::MAX));
        assert!(parked, "our parked read transaction is listed: {readers}");
        let text = ok_text(&["readers", db]);
        assert!(
            text.lines()
                .any(|l| l.contains(&me.to_string()) && l.contains("parked")),
            "{text}"
        );
        drop(app);
    }

    // Free space to compact away: 10,000 values of 3 KB written, then all but the last deleted
    // (the last keeps the file from shrinking at its end).
    {
        let app = tabula::open::<App>(dir.path(), Options::new()).unwrap();
        let mut tx = app.write().unwrap();
        for k in 1000..11_000i16 {
            tx.put::<Blobs>(&k, &vec![k as u8; 3000]).unwrap();
        }
        tx.commit().unwrap();
        let mut tx = app.write().unwrap();
        for k in 1000..10_999i16 {
            assert!(tx.delete::<Blobs>(&k).unwrap());
        }
        tx.commit().unwrap();
    }

    let dest = dir.path().join("copy");
    let report = ok_json(&["copy", "--compact", db, p(&dest), "--json"]);
    assert_eq!(report["compact"], json!(true));
    let copy = dest.join("mdbx.dat");
    assert!(copy.is_file());
    let (source_len, copy_len) = (
        std::fs::metadata(dir.path().join("mdbx.dat"))
            .unwrap()
            .len(),
        std::fs::metadata(&copy).unwrap().len(),
    );
    eprintln!("source {source_len} bytes, compacted copy {copy_len} bytes");
    assert!(
        copy_len * 2 < source_len,
        "the compacted copy ({copy_len} bytes) leaves the freed pages of the source \
         ({source_len} bytes) behind"
    );
    assert_same_contents(dir.path(), &dest);
    let err = fails(&["copy", "--compact", db, p(&dest)], 2);
    assert!(err.contains("already exists"), "{err}");
}

/// Every entry of `$table` in two read transactions, decoded with the table's types: equal and
/// not empty. Returns the count.
macro_rules! same_entries {
    ($a:expr, $b:expr, $table:ty) => {{
        let a: Vec<_> = $a.iter::<$table>().map(Result::unwrap).collect();
        let b: Vec<_> = $b.iter::<$table>().map(Result::unwrap).collect();
        assert!(!a.is_empty(), "{} is empty", stringify!($table));
        assert_eq!(a, b, "{} differs in the copy", stringify!($table));
        a.len()
    }};
}

/// The databases at `a` and `b` hold the same tables with the same entries: every table of the
/// file byte for byte (Tabula's meta table included), and every table of `App` through the
/// typed API, which also decodes every key and value; the copy passes `Db::check`.
fn assert_same_contents(a: &Path, b: &Path) {
    let raw = |path: &Path| {
        let db = tabula::untyped::UntypedDb::open(path).unwrap();
        let mut snap = db.read().unwrap();
        let mut tables = Vec::new();
        for name in snap.table_names().unwrap() {
            let table = snap.table(&name).unwrap().unwrap();
            let mut entries = Vec::new();
            snap.walk(&table, None, None, false, |k, v| {
                entries.push((k.to_vec(), v.to_vec()));
                true
            })
            .unwrap();
            tables.push((name, table.flags.clone(), entries));
        }
        tables
    };
    let (raw_a, raw_b) = (raw(a), raw(b));
    let names: Vec<&str> = raw_a.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "__tabula_meta",
            "accounts",
            "blobs",
            "heights",
            "pairs",
            "tags"
        ]
    );
    assert_eq!(raw_a, raw_b, "the raw tables differ");

    let options = || Options::new().read_only(true);
    let (db_a, db_b) = (
        tabula::open::<App>(a, options()).unwrap(),
        tabula::open::<App>(b, options()).unwrap(),
    );
    let (ta, tb) = (db_a.read().unwrap(), db_b.read().unwrap());
    let counts = [
        same_entries!(ta, tb, Accounts),
        same_entries!(ta, tb, Pairs),
        same_entries!(ta, tb, Tags),
        same_entries!(ta, tb, Heights),
        same_entries!(ta, tb, Blobs),
    ];
    assert_eq!(counts.len(), App::TABLES.len(), "every table of the schema");
    // What `write_fixture` wrote: 2 accounts x 3 blocks, 3 names x 4 pairs, 5 keys x 2 tags,
    // 5 heights, 2 blobs; and the one large blob kept above.
    assert_eq!(counts, [6, 12, 10, 5, 3]);
    let check = db_b.check().unwrap();
    assert!(check.is_ok(), "{check:?}");
}

#[test]
fn the_data_file_path_opens_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let file = dir.path().join("mdbx.dat");
    let got = ok_json(&["get", p(&file), "tags", "2", "--json"]);
    assert_eq!(got, json!({"key": 2, "values": ["a2", "b2"]}));
    assert!(
        !dir.path().join("mdbx.dat-lck").exists(),
        "no second lock file beside the data file"
    );
}

/// Runs `tabula args`, failing the test if it has not exited within a minute (a FIFO opened for
/// reading blocks forever); returns its exit code and stderr.
fn run_or_hang(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the tabula binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            return (status.code(), stderr);
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "`tabula {}` did not exit within a minute: it hangs",
                args.join(" ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn check_refuses_a_fifo_or_a_truncated_data_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo_db = dir.path().join("fifo");
    std::fs::create_dir(&fifo_db).unwrap();
    let status = Command::new("mkfifo")
        .arg(fifo_db.join("mdbx.dat"))
        .status()
        .expect("the `mkfifo` command (coreutils) runs");
    assert!(status.success());
    for path in [fifo_db.clone(), fifo_db.join("mdbx.dat")] {
        for command in ["check", "info"] {
            let (code, stderr) = run_or_hang(&[command, p(&path)]);
            assert_eq!(code, Some(1), "{command} {}: {stderr}", path.display());
            assert!(stderr.contains("FIFO"), "{stderr}");
            assert!(stderr.contains("not a regular file"), "{stderr}");
        }
    }

    let db = dir.path().join("db");
    write_fixture(&db);
    let file = db.join("mdbx.dat");
    let whole = std::fs::read(&file).unwrap();
    std::fs::write(&file, &whole[..4096]).unwrap();
    let (code, stderr) = run_or_hang(&["check", p(&db)]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("4096 bytes"), "{stderr}");
    assert!(stderr.contains("truncated"), "{stderr}");
    assert!(!stderr.contains("ENODATA"), "{stderr}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        &whole[..4096],
        "left untouched"
    );
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Note {
    id: u64,
    status: String,
    text: String,
}

fn note(n: u64) -> Note {
    Note {
        id: n,
        status: ["open", "closed"][n as usize % 2].to_string(),
        text: format!(
            "{{\"author\":\"user-{}\",\"body\":\"note number {n}\"}}",
            n % 37
        ),
    }
}

struct NoteDictionary;
impl tabula::ZstdDictionary for NoteDictionary {
    const NAME: &'static str = "cli-notes";
}

#[derive(Table)]
#[table(name = "notes", key = u64, value = Note,
        codec = tabula::ZstdDict<tabula::Bincode<Note>, NoteDictionary>)]
struct Notes;

#[derive(Schema)]
struct NotesApp(Notes, Pairs);

/// The dictionary ID a zstd frame's header records (0: none).
fn frame_dictionary(frame: &[u8]) -> u32 {
    let descriptor = frame[4];
    let at = 5 + usize::from(descriptor & 0x20 == 0);
    match descriptor & 3 {
        0 => 0,
        1 => u32::from(frame[at]),
        2 => u32::from(u16::from_le_bytes([frame[at], frame[at + 1]])),
        _ => u32::from_le_bytes(frame[at..at + 4].try_into().unwrap()),
    }
}

/// `train-dict` trains a dictionary from a `ZstdDict` table and stores it as current: values
/// written after the reopen use it, values stored before keep decoding (by the tool too); a
/// table of another codec is a usage error.
#[test]
fn train_dict_stores_a_dictionary_new_values_use() {
    let dir = tempfile::tempdir().unwrap();
    // The application's geometry, which `train-dict` keeps.
    let geometry = || Options::new().max_size(256 << 20);
    let db = tabula::open::<NotesApp>(dir.path(), geometry()).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..2000 {
        tx.put::<Notes>(&n, &note(n)).unwrap();
    }
    tx.put::<Pairs>(&("a".to_string(), 1), &"x".to_string())
        .unwrap();
    tx.commit().unwrap();
    drop(db);

    let out = ok_json(&[
        "--json",
        "train-dict",
        p(dir.path()),
        "notes",
        "--samples",
        "1500",
        "--size",
        "4096",
    ]);
    assert_eq!(out["dictionary"], "cli-notes");
    assert_eq!(out["samples"], 1500);
    let id = out["id"].as_u64().unwrap() as u32;
    assert_ne!(id, 0);
    let info = ok_json(&["info", p(dir.path()), "--json"]);
    assert_eq!(info["geometry"]["upper"], json!(256 << 20), "{info}");

    let db = tabula::open::<NotesApp>(dir.path(), geometry()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Notes>(&5000, &note(5000)).unwrap();
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    assert_eq!(
        frame_dictionary(tx.get_bytes::<Notes>(&5000).unwrap().unwrap()),
        id
    );
    assert_eq!(
        frame_dictionary(tx.get_bytes::<Notes>(&7).unwrap().unwrap()),
        0
    );
    assert_eq!(tx.get::<Notes>(&7).unwrap(), Some(note(7)));
    assert_eq!(tx.get::<Notes>(&5000).unwrap(), Some(note(5000)));
    drop(tx);
    drop(db);

    let got = ok_json(&["--json", "get", p(dir.path()), "notes", "5000"]);
    let listed = |all: bool| -> Vec<String> {
        let args = ["--json", "tables", p(dir.path()), "--all"];
        let out = ok_json(&args[..if all { 4 } else { 3 }]);
        out.as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!listed(false).contains(&"__tabula_zstd_dict".to_string()));
    assert!(listed(true).contains(&"__tabula_zstd_dict".to_string()));
    assert_eq!(got["value"]["text"], note(5000).text, "{got}");

    let out = tabula(&["train-dict", p(dir.path()), "pairs"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not `ZstdDict` ones"), "{err}");
}

// ---- issue 23: get with a subkey, dump --prefix, info's pages, tables' columns, -v -------------

#[derive(Table)]
#[table(name = "slots", key = u32, subkey = u64, value = String, dupsort)]
struct Slots;

#[derive(Schema)]
struct SlotsApp(Slots, Tags);

fn write_slots(path: &Path) {
    let db = tabula::open::<SlotsApp>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for slot in [1u64, 7, 9] {
        tx.put::<Slots>(&5, &(slot, format!("at {slot}"))).unwrap();
    }
    // Two values under one subkey.
    tx.put::<Slots>(&6, &(7, "x".to_string())).unwrap();
    tx.put::<Slots>(&6, &(7, "y".to_string())).unwrap();
    tx.put::<Tags>(&4, &"a4".to_string()).unwrap();
    tx.put::<Tags>(&4, &"b4".to_string()).unwrap();
    tx.commit().unwrap();
}

/// `get` on a dupsort table with a subkey takes an optional SUBKEY (as `reth db get mdbx TABLE
/// KEY [SUBKEY]`) and shows `subkey`/`value` pairs, labelled, in text and JSON; `dump` labels
/// them the same way. A SUBKEY for a table without subkeys is a usage error.
#[test]
fn get_takes_a_subkey_and_labels_subkey_value_pairs() {
    let dir = tempfile::tempdir().unwrap();
    write_slots(dir.path());
    let db = p(dir.path());

    let pair = |s: u64, v: &str| json!({"subkey": s, "value": v});
    let all = ok_json(&["get", db, "slots", "5", "--json"]);
    assert_eq!(
        all,
        json!({"key": 5, "values": [pair(1, "at 1"), pair(7, "at 7"), pair(9, "at 9")]})
    );
    let one = ok_json(&["get", db, "slots", "5", "7", "--json"]);
    assert_eq!(one, json!({"key": 5, "values": [pair(7, "at 7")]}));
    let two = ok_json(&["get", db, "slots", "6", "7", "--json"]);
    assert_eq!(
        two,
        json!({"key": 6, "values": [pair(7, "x"), pair(7, "y")]})
    );

    let text = ok_text(&["get", db, "slots", "5"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "3 values of key 5 in `slots`:",
            "  subkey 1  value \"at 1\"",
            "  subkey 7  value \"at 7\"",
            "  subkey 9  value \"at 9\"",
        ],
        "{text}"
    );
    let text = ok_text(&["get", db, "slots", "5", "9"]);
    assert!(text.contains("  subkey 9  value \"at 9\""), "{text}");
    assert!(!text.contains("at 7"), "{text}");
    // Without subkeys: each value labelled too.
    let text = ok_text(&["get", db, "tags", "4"]);
    assert!(text.contains("  value \"a4\"\n  value \"b4\""), "{text}");

    let err = fails(&["get", db, "slots", "5", "8"], 1);
    assert!(err.contains("has no subkey 8"), "{err}");
    let err = fails(&["get", db, "slots", "4", "7"], 1);
    assert!(err.contains("key 4 not found"), "{err}");
    let err = fails(&["get", db, "slots", "5", "\"seven\""], 2);
    assert!(err.contains("subkeys of shape `u64`"), "{err}");
    let err = fails(&["get", db, "tags", "4", "1"], 2);
    assert!(err.contains("takes no SUBKEY"), "{err}");
    assert!(err.contains("have no subkey"), "{err}");

    let entries = jsonl(&tabula(&["dump", db, "slots", "--to", "5"]));
    assert_eq!(
        entries,
        [
            json!({"key": 5, "subkey": 1, "value": "at 1"}),
            json!({"key": 5, "subkey": 7, "value": "at 7"}),
            json!({"key": 5, "subkey": 9, "value": "at 9"}),
        ]
    );
}

/// `dump --prefix` takes the leading parts of a composite key (as an array, an object of the
/// first fields, or the first part alone) and walks the keys that begin with them, in both
/// directions and within `--from`/`--to`/`--limit`; a prefix is the parts' encoding, so `"al"`
/// does not match `"alice"`.
#[test]
fn dump_takes_a_prefix_of_a_composite_key() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());
    let pair = |n: &str, i: u64| json!({"key": [n, i], "value": format!("{n}/{i}")});
    let bob: Vec<Json> = (0..4).map(|i| pair("bob", i)).collect();

    for prefix in [r#"["bob"]"#, r#""bob""#] {
        let got = jsonl(&tabula(&["dump", db, "pairs", "--prefix", prefix]));
        assert_eq!(got, bob, "--prefix {prefix}");
    }
    let mut reversed = bob.clone();
    reversed.reverse();
    let got = jsonl(&tabula(&[
        "dump",
        db,
        "pairs",
        "--prefix",
        "[\"bob\"]",
        "--reverse",
    ]));
    assert_eq!(got, reversed);
    let got = jsonl(&tabula(&[
        "dump",
        db,
        "pairs",
        "--prefix",
        "[\"bob\"]",
        "--from",
        "[\"bob\", 1]",
        "--limit",
        "2",
    ]));
    assert_eq!(got, bob[1..3]);
    let got = jsonl(&tabula(&["dump", db, "pairs", "--prefix", "[\"al\"]"]));
    assert_eq!(
        got,
        Vec::<Json>::new(),
        "\"al\" is not a prefix of the part \"alice\""
    );
    // The last name: its keys run to the end of the table.
    let got = jsonl(&tabula(&[
        "dump",
        db,
        "pairs",
        "--prefix",
        "[\"carol\"]",
        "--reverse",
    ]));
    assert_eq!(got.len(), 4);
    assert_eq!(got[0], pair("carol", 3));

    // A struct key: the leading fields by name, or in order.
    for prefix in [r#"{"account": "alice"}"#, r#"["alice"]"#] {
        let got = jsonl(&tabula(&["dump", db, "accounts", "--prefix", prefix]));
        let blocks: Vec<&Json> = got.iter().map(|e| &e["key"]["block"]).collect();
        assert_eq!(
            blocks,
            [&json!(0), &json!(1), &json!(2)],
            "--prefix {prefix}"
        );
        assert!(got.iter().all(|e| e["key"]["account"] == "alice"));
    }
    let out = tabula(&[
        "dump",
        db,
        "pairs",
        "--prefix",
        "[\"bob\"]",
        "--format",
        "hex",
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1 + 4);

    let err = fails(&["dump", db, "heights", "--prefix", "1"], 2);
    assert!(err.contains("one part"), "{err}");
    let err = fails(&["dump", db, "pairs", "--prefix", "[\"bob\", 1]"], 2);
    assert!(err.contains("gives 2 of the 2 parts"), "{err}");
    let err = fails(&["dump", db, "accounts", "--prefix", r#"{"block": 1}"#], 2);
    assert!(err.contains("leading fields"), "{err}");
    let err = fails(&["dump", db, "pairs", "--prefix", "[5]"], 2);
    assert!(err.contains("does not fit"), "{err}");
}

/// `--json` with `--format hex` is refused (exit 2) instead of being dropped.
#[test]
fn dump_refuses_json_with_the_hex_format() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());
    let err = fails(&["dump", db, "blobs", "--json", "--format", "hex"], 2);
    assert!(
        err.contains("--json") && err.contains("--format hex"),
        "{err}"
    );
    // Either alone, or `--json` with a JSON format, is fine.
    assert!(
        tabula(&["dump", db, "blobs", "--format", "hex"])
            .status
            .success()
    );
    let lines = jsonl(&tabula(&[
        "dump", db, "blobs", "--json", "--format", "jsonl",
    ]));
    assert_eq!(lines.len(), 2);
    assert_eq!(
        ok_json(&["dump", db, "blobs", "--json"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// `info` shows the pages used and free: a 16 MiB file (its geometry's lower bound) holding a
/// few pages is not full. It counts the readers of other processes, not its own. `copy
/// --compact` shows the used size of both files.
#[test]
fn info_shows_used_and_free_pages_and_only_other_readers() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture_with(dir.path(), Options::new().min_size(16 << 20));
    let db = p(dir.path());

    let info = ok_json(&["info", db, "--json"]);
    let file_size = std::fs::metadata(dir.path().join("mdbx.dat"))
        .unwrap()
        .len();
    assert_eq!(info["file_size"], json!(file_size));
    assert!(file_size >= 16 << 20, "{file_size}");
    let page = info["page_size"].as_u64().unwrap();
    let pages = &info["pages"];
    let (used, free) = (
        pages["used"].as_u64().unwrap(),
        pages["free"].as_u64().unwrap(),
    );
    assert_eq!(pages["file"].as_u64().unwrap() * page, file_size, "{info}");
    assert_eq!(used + free, pages["file"].as_u64().unwrap(), "{info}");
    assert!(
        used > 0 && used * page < 1 << 20,
        "a few pages are used: {info}"
    );
    assert_eq!(info["used_bytes"].as_u64().unwrap(), used * page);
    assert_eq!(
        info["readers"]["used"],
        json!(0),
        "its own reader is not counted: {info}"
    );
    let text = ok_text(&["info", db]);
    assert!(text.contains(&format!("({used} pages;")), "{text}");
    assert!(text.contains(&format!("({free} pages: ")), "{text}");
    assert!(
        text.contains("readers          0 in use by other processes"),
        "{text}"
    );

    // A read transaction of this process is another process's reader to the command.
    let app = tabula::open::<App>(dir.path(), Options::new()).unwrap();
    let tx = app.read().unwrap();
    let info = ok_json(&["info", db, "--json"]);
    assert_eq!(info["readers"]["used"], json!(1), "{info}");
    drop(tx);
    drop(app);

    let dest = dir.path().join("compact");
    let copy = ok_json(&["copy", "--compact", db, p(&dest), "--json"]);
    let (source_used, dest_used) = (
        copy["source_used_bytes"].as_u64().unwrap(),
        copy["dest_used_bytes"].as_u64().unwrap(),
    );
    assert_eq!(source_used, used * page, "{copy}");
    assert!(dest_used > 0 && dest_used <= source_used, "{copy}");
    let text = ok_text(&["copy", "--compact", db, p(&dir.path().join("compact2"))]);
    assert!(text.contains("used) to"), "{text}");
}

/// `tables` right-aligns its numbers, ends with a totals row and explains `b/l/o`.
#[test]
fn tables_right_aligns_numbers_totals_them_and_explains_pages() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());
    let rows = ok_json(&["tables", db, "--json"]);
    let rows = rows.as_array().unwrap();
    let text = ok_text(&["tables", db]);
    let lines: Vec<&str> = text.lines().collect();
    let header = lines[0];
    let end_of = |heading: &str| header.find(heading).unwrap() + heading.len();
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}: {text}"));
        let entries = row["entries"].to_string();
        assert!(
            line[..end_of("ENTRIES")].ends_with(&format!(" {entries}")),
            "ENTRIES right-aligned for {name}: {text}"
        );
        let pages = &row["pages"];
        let b_l_o = format!(
            " {}/{}/{}",
            pages["branch"], pages["leaf"], pages["overflow"]
        );
        assert!(line[..end_of("PAGES b/l/o")].ends_with(&b_l_o), "{text}");
    }
    let sum = |f: &dyn Fn(&Json) -> u64| rows.iter().map(f).sum::<u64>();
    let total = lines
        .iter()
        .find(|l| l.starts_with("total"))
        .unwrap_or_else(|| panic!("a totals row: {text}"));
    let entries = sum(&|r| r["entries"].as_u64().unwrap());
    assert_eq!(entries, 6 + 12 + 10 + 5 + 2);
    assert!(
        total.starts_with(&format!("total ({} tables)", rows.len())),
        "{total}"
    );
    assert!(
        total[..end_of("ENTRIES")].ends_with(&format!(" {entries}")),
        "{text}"
    );
    let leaf = sum(&|r| r["pages"]["leaf"].as_u64().unwrap());
    let branch = sum(&|r| r["pages"]["branch"].as_u64().unwrap());
    let overflow = sum(&|r| r["pages"]["overflow"].as_u64().unwrap());
    assert!(
        total[..end_of("PAGES b/l/o")].ends_with(&format!(" {branch}/{leaf}/{overflow}")),
        "{text}"
    );
    for word in ["branch", "leaf", "overflow"] {
        assert!(text.contains(word), "the legend explains b/l/o: {text}");
    }
}

/// `-v` shows libmdbx's own log lines (through `tracing`) on stderr: here what it logs when it
/// meets a zeroed page. Without `-v` they are not printed.
#[test]
fn verbose_shows_libmdbx_log_lines() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path());
    let db = p(dir.path());
    let file = dir.path().join("mdbx.dat");
    let mut data = std::fs::read(&file).unwrap();
    let page = ok_json(&["info", db, "--json"])["page_size"]
        .as_u64()
        .unwrap() as usize;
    let at = data
        .windows(7)
        .position(|w| w == b"carol/3")
        .expect("the value is in the file");
    let start = at / page * page;
    data[start..start + page].fill(0);
    std::fs::write(&file, &data).unwrap();

    let out = tabula(&["-v", "dump", db, "pairs"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let logged: Vec<&str> = stderr.lines().filter(|l| l.contains("libmdbx:")).collect();
    assert!(
        !logged.is_empty(),
        "libmdbx's log lines on stderr: {stderr}"
    );
    assert!(
        logged
            .iter()
            .any(|l| l.contains("ERROR") && l.contains("page")),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("libmdbx"));

    let out = tabula(&["dump", db, "pairs"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        !stderr.contains("libmdbx:"),
        "no log lines without -v: {stderr}"
    );
    assert!(stderr.contains("MDBX_CORRUPTED"), "{stderr}");
}

// ---- issue 35: what people type, byte arrays as hex, one-line get ------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct HashedWallet {
    hash: [u8; 32],
    nonce: u64,
}

#[derive(Table)]
#[table(name = "wallets", key = String, value = HashedWallet)]
struct Wallets35;

#[derive(Schema)]
struct FirstHour(Wallets35, Pairs, Heights);

fn hashed(i: u8) -> HashedWallet {
    HashedWallet {
        hash: [i; 32],
        nonce: u64::from(i),
    }
}

fn write_first_hour(path: &Path) {
    let db = tabula::open::<FirstHour>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Wallets35>("acct0007", &hashed(7)).unwrap();
    tx.put::<Wallets35>("5", &hashed(5)).unwrap();
    tx.put::<Wallets35>("true", &hashed(1)).unwrap();
    for (name, n) in [("alice", 0u64), ("alice", 1), ("bob", 0)] {
        tx.put::<Pairs>(&(name, n), &format!("{name}/{n}")).unwrap();
    }
    tx.put::<Heights>(&3, &-3).unwrap();
    tx.commit().unwrap();
}

/// A string key needs no JSON quotes (`tabula get DB wallets acct0007`), in `get`, `--from`,
/// `--to` and `--prefix`; a bare number or `true` that does not fit a string shape is read as
/// the string it spells; a text that begins like JSON and does not parse is still refused.
#[test]
fn bare_words_are_string_keys() {
    let dir = tempfile::tempdir().unwrap();
    write_first_hour(dir.path());
    let db = p(dir.path());
    let hash = |i: u8| format!("{i:02x}").repeat(32);

    for key in ["acct0007", "\"acct0007\""] {
        let got = ok_json(&["get", db, "wallets", key, "--json"]);
        assert_eq!(
            got,
            json!({"key": "acct0007", "value": {"hash": hash(7), "nonce": 7}}),
            "{key}"
        );
    }
    // `5` and `true` are JSON, but not strings: taken as the strings they spell.
    let got = ok_json(&["get", db, "wallets", "5", "--json"]);
    assert_eq!(got["value"]["nonce"], json!(5));
    let got = ok_json(&["get", db, "wallets", "true", "--json"]);
    assert_eq!(got["value"]["nonce"], json!(1));
    // Bounds and prefixes.
    let rows = ok_text(&["dump", db, "wallets", "--from", "6", "--to", "z"]);
    assert_eq!(
        rows.lines().filter(|l| l.contains("acct0007")).count(),
        1,
        "{rows}"
    );
    assert!(!rows.contains("\"5\""), "{rows}");
    let rows = ok_text(&["dump", db, "pairs", "--prefix", "alice"]);
    assert!(
        rows.contains("alice/0") && rows.contains("alice/1"),
        "{rows}"
    );
    assert!(!rows.contains("bob/0"), "{rows}");
    // Where a string does not fit, the message says what does.
    let err = fails(&["get", db, "heights", "abc"], 2);
    assert!(err.contains("does not fit") && err.contains("u64"), "{err}");
    let err = fails(&["get", db, "wallets", "[acct"], 2);
    assert!(err.contains("not JSON"), "{err}");
    let err = fails(&["get", db, "wallets", "acct9999"], 1);
    assert!(err.contains("not found"), "{err}");
}

/// A `[u8; N]` field of a value prints as hex, as the same type does in a key, in `get` and
/// `dump`; `load` reads the dump back to the same bytes.
#[test]
fn byte_arrays_in_values_are_hex_and_load_back() {
    let dir = tempfile::tempdir().unwrap();
    write_first_hour(dir.path());
    let db = p(dir.path());
    let text = ok_text(&["get", db, "wallets", "acct0007"]);
    assert_eq!(
        serde_json::from_str::<Json>(&text).unwrap(),
        json!({"hash": "07".repeat(32), "nonce": 7}),
        "{text}"
    );
    assert!(text.lines().count() <= 4, "no line per byte: {text}");

    let dump = tabula(&["dump", db, "wallets"]);
    assert!(dump.status.success());
    let file = dir.path().join("wallets.jsonl");
    std::fs::write(&file, &dump.stdout).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let out = tabula(&["load", p(dest.path()), "--input", p(&file)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db2 = tabula::open::<FirstHour>(dest.path(), Options::new()).unwrap();
    let tx = db2.read().unwrap();
    assert_eq!(tx.get::<Wallets35>("acct0007").unwrap(), Some(hashed(7)));
    assert_eq!(tx.get::<Wallets35>("5").unwrap(), Some(hashed(5)));
}

/// `get --line` prints the document `--json` prints, on one line.
#[test]
fn get_prints_one_line() {
    let dir = tempfile::tempdir().unwrap();
    write_first_hour(dir.path());
    let db = p(dir.path());
    let line = ok_text(&["get", db, "wallets", "acct0007", "--line"]);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.ends_with('\n'));
    let json = ok_json(&["get", db, "wallets", "acct0007", "--json"]);
    assert_eq!(serde_json::from_str::<Json>(&line).unwrap(), json);
}
