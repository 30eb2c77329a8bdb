//! `tabula load` restores what `tabula dump` wrote, on every key kind (integers, `integer_key`,
//! strings, bytes, fixed arrays, `Option`, tuples, `#[derive(Key)]` structs) and dupsort tables
//! with and without a subkey: into a new database or an empty table, from the `jsonl` dump
//! (keys and values encoded again from their JSON forms) and the `hex` dump (the stored bytes).
//! A restored table is compared with its source byte for byte and through the typed API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};
use tabula::untyped::UntypedDb;
use tabula::{Key, Options, Schema, Table};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct AccountAt {
    account: String,
    block: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Kind {
    User,
    Contract { code_hash: [u8; 4] },
    Label(String),
    Pair(i8, char),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Unit;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Account {
    balance: u128,
    kind: Kind,
    note: Option<String>,
    delta: i64,
    ratio: f64,
    small: f32,
    tags: Vec<u16>,
    meta: BTreeMap<String, u32>,
    by_slot: BTreeMap<u8, bool>,
    pair: (bool, char, ()),
    unit: Unit,
}

fn account(i: u64) -> Account {
    Account {
        balance: u128::from(i) << 70 | u128::from(i),
        kind: match i % 4 {
            0 => Kind::User,
            1 => Kind::Contract {
                code_hash: (i as u32).to_be_bytes(),
            },
            2 => Kind::Label(format!("label \"{i}\"\n")),
            _ => Kind::Pair(-(i as i8), 'é'),
        },
        note: i.is_multiple_of(3).then(|| format!("note {i}")),
        delta: -(i as i64) * 1_000_000_007,
        ratio: i as f64 / 7.0,
        small: -(i as f32) / 3.0,
        tags: (0..(i % 5) as u16).map(|t| t * 300).collect(),
        meta: BTreeMap::from([("k".to_string(), i as u32), ("z".into(), 0)]),
        by_slot: BTreeMap::from([(i as u8, true), (0, false)]),
        pair: (i.is_multiple_of(2), 'x', ()),
        unit: Unit,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Note {
    id: u64,
    text: String,
}

#[derive(Table)]
#[table(name = "by_u64", key = u64, value = Account)]
struct ByU64;

#[derive(Table)]
#[table(name = "by_i32", key = i32, value = String)]
struct ByI32;

#[derive(Table)]
#[table(name = "by_int", key = u32, value = u64, integer_key)]
struct ByInt;

#[derive(Table)]
#[table(name = "by_str", key = String, value = Vec<u8>, codec = tabula::Raw)]
struct ByStr;

#[derive(Table)]
#[table(name = "by_bytes", key = Vec<u8>, value = String)]
struct ByBytes;

#[derive(Table)]
#[table(name = "by_array", key = [u8; 20], value = u64)]
struct ByArray;

#[derive(Table)]
#[table(name = "by_option", key = Option<u32>, value = String)]
struct ByOption;

#[derive(Table)]
#[table(name = "by_tuple", key = (String, u64), value = String)]
struct ByTuple;

#[derive(Table)]
#[table(name = "by_scalars", key = (bool, char, i128), value = u8)]
struct ByScalars;

#[derive(Table)]
#[table(name = "by_struct", key = AccountAt, value = Account)]
struct ByStruct;

#[derive(Table)]
#[table(name = "dup_plain", key = u32, value = String, dupsort)]
struct DupPlain;

#[derive(Table)]
#[table(name = "dup_ordered", key = u32, value = (String, u64), dupsort)]
struct DupOrdered;

#[derive(Table)]
#[table(name = "dup_sub", key = u32, subkey = u64, value = Account, dupsort)]
struct DupSub;

#[derive(Table)]
#[table(name = "dup_sub_str", key = [u8; 4], subkey = String, value = Vec<u8>, codec = tabula::Raw, dupsort)]
struct DupSubStr;

#[derive(Table)]
#[table(name = "zstd", key = u64, value = Note, codec = tabula::Zstd<tabula::Bincode<Note>>)]
struct Compressed;

#[derive(Schema)]
struct App(
    ByU64,
    ByI32,
    ByInt,
    ByStr,
    ByBytes,
    ByArray,
    ByOption,
    ByTuple,
    ByScalars,
    ByStruct,
    DupPlain,
    DupOrdered,
    DupSub,
    DupSubStr,
    Compressed,
);

const TABLES: [&str; 15] = [
    "by_u64",
    "by_i32",
    "by_int",
    "by_str",
    "by_bytes",
    "by_array",
    "by_option",
    "by_tuple",
    "by_scalars",
    "by_struct",
    "dup_plain",
    "dup_ordered",
    "dup_sub",
    "dup_sub_str",
    "zstd",
];

const N: u64 = 40;

fn write_source(path: &Path) {
    let db = tabula::open::<App>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for i in 0..N {
        let n = i as u32;
        tx.put::<ByU64>(&(i * 1_000_003), &account(i)).unwrap();
        tx.put::<ByI32>(&(n as i32 - 20), &format!("i32 {i}"))
            .unwrap();
        tx.put::<ByInt>(&(n * 70_001), &(i << 40)).unwrap();
        tx.put::<ByStr>(&format!("k\u{0}{i}é"), &vec![i as u8, 0, 255])
            .unwrap();
        tx.put::<ByBytes>(&vec![i as u8, 0, 0xff, 0], &format!("bytes {i}"))
            .unwrap();
        let mut addr = [0u8; 20];
        addr[19] = i as u8;
        addr[0] = 0xfe;
        tx.put::<ByArray>(&addr, &i).unwrap();
        let opt = (i % 7 != 0).then_some(n);
        tx.put::<ByOption>(&opt, &format!("option {opt:?}"))
            .unwrap();
        tx.put::<ByTuple>(&(format!("name{}", i % 5), i), &format!("t{i}"))
            .unwrap();
        let scalars = (
            i.is_multiple_of(2),
            char::from(b'a' + (i % 26) as u8),
            -(i128::from(n) << 90),
        );
        tx.put::<ByScalars>(&scalars, &(i as u8)).unwrap();
        let at = AccountAt {
            account: format!("acct{}", i % 3),
            block: i,
        };
        tx.put::<ByStruct>(&at, &account(i + 1)).unwrap();
        tx.put::<DupPlain>(&(n % 4), &format!("dup {i}")).unwrap();
        tx.put::<DupOrdered>(&(n % 3), &(format!("o{}", i % 6), i))
            .unwrap();
        tx.put::<DupSub>(&(n % 5), &(i * 11, account(i))).unwrap();
        tx.put::<DupSubStr>(&(n % 2).to_be_bytes(), &(format!("s{i}"), vec![i as u8; 3]))
            .unwrap();
        tx.put::<Compressed>(
            &i,
            &Note {
                id: i,
                text: format!("note {i} ").repeat(20),
            },
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn tabula(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(args)
        .output()
        .expect("the tabula binary runs")
}

/// A dump that must succeed, written to `file`.
fn dump_to(db: &Path, table: &str, extra: &[&str], file: &Path) {
    let mut args = vec!["dump", p(db), table];
    args.extend_from_slice(extra);
    let out = tabula(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(file, &out.stdout).unwrap();
}

/// `tabula load dest [table] --input file` that must succeed, with nothing on stderr.
fn load_ok(dest: &Path, table: Option<&str>, file: &Path) -> String {
    let mut args = vec!["load", p(dest)];
    args.extend(table);
    args.extend(["--input", p(file)]);
    let out = tabula(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    assert!(
        stderr.is_empty(),
        "no progress bar off a terminal: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `tabula load …` that must fail with `code`; returns stderr.
fn load_fails(args: &[&str], code: i32) -> String {
    let out = tabula(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

type RawTable = (Vec<&'static str>, Vec<(Vec<u8>, Vec<u8>)>);

/// The flags and every entry (stored bytes) of `table`.
fn raw(path: &Path, table: &str) -> RawTable {
    let db = UntypedDb::open(path).unwrap();
    let mut tx = db.read().unwrap();
    let found = tx.table(table).unwrap().expect("the table exists");
    let mut entries = Vec::new();
    tx.walk(&found, None, None, false, |k, v| {
        entries.push((k.to_vec(), v.to_vec()));
        true
    })
    .unwrap();
    (found.flags.clone(), entries)
}

/// Every table of `App` holds the same entries in both files, read with the typed API.
fn same_typed(a: &Path, b: &Path) {
    let options = || Options::new().read_only(true);
    let (da, db) = (
        tabula::open::<App>(a, options()).unwrap(),
        tabula::open::<App>(b, options()).unwrap(),
    );
    let (ta, tb) = (da.read().unwrap(), db.read().unwrap());
    macro_rules! same {
        ($($t:ty),*) => {$({
            let x: Vec<_> = ta.iter::<$t>().map(Result::unwrap).collect();
            let y: Vec<_> = tb.iter::<$t>().map(Result::unwrap).collect();
            assert!(!x.is_empty(), "{}", stringify!($t));
            assert_eq!(x, y, "{} differs", stringify!($t));
        })*};
    }
    same!(
        ByU64, ByI32, ByInt, ByStr, ByBytes, ByArray, ByOption, ByTuple, ByScalars, ByStruct,
        DupPlain, DupOrdered, DupSub, DupSubStr, Compressed
    );
}

/// Every table dumped (in `format`) and loaded into a new database: the same bytes, the same
/// record, the same typed entries.
#[test]
fn every_key_kind_round_trips_into_a_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    write_source(&src);
    for format in ["jsonl", "hex"] {
        let dest = dir.path().join(format!("restored-{format}"));
        for table in TABLES {
            let file = dir.path().join(format!("{table}.{format}"));
            dump_to(&src, table, &["--format", format], &file);
            let said = load_ok(&dest, None, &file);
            let entries = raw(&src, table).1.len();
            assert!(
                said.contains(&format!("loaded {entries} entries into table `{table}`")),
                "{said}"
            );
            assert_eq!(
                raw(&src, table),
                raw(&dest, table),
                "`{table}` restored from its {format} dump differs"
            );
        }
        // The record: the same tables, flags and encodings, and the same schema version.
        let (a, b) = (
            UntypedDb::open(&src).unwrap(),
            UntypedDb::open(&dest).unwrap(),
        );
        let (ra, rb) = (a.record().unwrap(), b.record().unwrap());
        assert_eq!(ra.tables, rb.tables);
        assert_eq!((ra.version, &ra.applied), (rb.version, &rb.applied));
        drop((a, b));
        // The application opens the restored file as its own.
        same_typed(&src, &dest);
    }
}

/// Into the empty tables an application created: every table loads (by its name); a table
/// that holds entries is refused by name, and so is one with other encodings; a dump loads
/// under another name as a new table.
#[test]
fn load_fills_empty_tables_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    write_source(&src);
    let dest = dir.path().join("app");
    // The application's geometry: `load` keeps it.
    let geometry = Options::new().max_size(64 << 20).growth_step(1 << 20);
    drop(tabula::open::<App>(&dest, geometry).unwrap());
    for table in TABLES {
        let file = dir.path().join(format!("{table}.jsonl"));
        dump_to(&src, table, &[], &file);
        let said = load_ok(&dest, None, &file);
        assert!(said.contains("(an empty table)"), "{said}");
        assert_eq!(raw(&src, table), raw(&dest, table), "`{table}`");
    }
    same_typed(&src, &dest);
    let details = UntypedDb::open(&dest).unwrap().details().unwrap();
    assert_eq!((details.upper, details.growth), (64 << 20, 1 << 20));

    let file = dir.path().join("by_tuple.jsonl");
    let err = load_fails(&["load", p(&dest), "--input", p(&file)], 1);
    assert!(err.contains("table `by_tuple`"), "{err}");
    assert!(err.contains(&format!("already holds {N} entries")), "{err}");
    // Other encodings: `(str, u64)` keys into a table of `u64` keys.
    let err = load_fails(&["load", p(&dest), "by_u64", "--input", p(&file)], 1);
    assert!(err.contains("table `by_u64`"), "{err}");
    assert!(
        err.contains("(str, u64)") && err.contains("keys `u64`"),
        "{err}"
    );
    // Under a new name: a new table, recorded like the dumped one.
    let said = load_ok(&dest, Some("tuples_again"), &file);
    assert!(said.contains("(a new table)"), "{said}");
    assert_eq!(raw(&src, "by_tuple"), raw(&dest, "tuples_again"));
    let db = UntypedDb::open(&dest).unwrap();
    let record = db.record().unwrap();
    assert_eq!(record.tables["tuples_again"], record.tables["by_tuple"]);
    drop(db);
    // From stdin.
    let copy = dir.path().join("from-stdin");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args(["load", p(&copy)])
        .stdin(std::fs::File::open(&file).unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(raw(&src, "by_tuple"), raw(&copy, "by_tuple"));
}

/// What `load` cannot restore is refused with a message that says why, and leaves nothing
/// behind: a `--format json` dump, a file that is not a dump, a line that does not fit the
/// table (the new database is removed again), a directory holding something else.
#[test]
fn load_refuses_what_it_cannot_restore_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    write_source(&src);
    let dest = dir.path().join("dest");

    let file = dir.path().join("array.json");
    dump_to(&src, "by_u64", &["--format", "json"], &file);
    let err = load_fails(&["load", p(&dest), "--input", p(&file)], 1);
    assert!(err.contains("`--format json` dump"), "{err}");
    assert!(!dest.exists(), "nothing created");

    let file = dir.path().join("not-a-dump");
    std::fs::write(&file, "hello\n").unwrap();
    let err = load_fails(&["load", p(&dest), "--input", p(&file)], 1);
    assert!(err.contains("is not the header"), "{err}");
    assert!(!dest.exists());

    // A line that does not fit: the value of line 3 is not an `Account`.
    let file = dir.path().join("bad.jsonl");
    dump_to(&src, "by_u64", &[], &file);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut entry: Json = serde_json::from_str(&lines[2]).unwrap();
    entry["value"]["kind"] = json!("Missing");
    lines[2] = entry.to_string();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let err = load_fails(&["load", p(&dest), "--input", p(&file)], 1);
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("no variant `Missing`"), "{err}");
    assert!(!dest.exists(), "the new database is removed again");
    // Into an existing database: nothing written, the table stays empty.
    drop(tabula::open::<App>(&dest, Options::new()).unwrap());
    load_fails(&["load", p(&dest), "--input", p(&file)], 1);
    assert_eq!(raw(&dest, "by_u64").1, vec![]);

    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let good = dir.path().join("good.jsonl");
    dump_to(&src, "by_i32", &[], &good);
    let err = load_fails(&["load", p(&other), "--input", p(&good)], 2);
    assert!(err.contains("no database"), "{err}");
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1, "left alone");
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Memo {
    id: u64,
    body: String,
}

struct MemoDictionary;
impl tabula::ZstdDictionary for MemoDictionary {
    const NAME: &'static str = "load-memos";
}

#[derive(Table)]
#[table(name = "memos", key = u64, value = Memo,
        codec = tabula::ZstdDict<tabula::Bincode<Memo>, MemoDictionary>)]
struct Memos;

#[derive(Schema)]
struct MemoApp(Memos);

fn memo(n: u64) -> Memo {
    Memo {
        id: n,
        body: format!(
            "{{\"author\":\"user-{}\",\"body\":\"memo number {n}\"}}",
            n % 37
        ),
    }
}

/// A `ZstdDict` table whose values use a trained dictionary: its `jsonl` dump loads into a new
/// database (values compressed again, without the source's dictionary), while its `hex` dump,
/// whose frames name a dictionary the new database lacks, is refused before anything is
/// written.
#[test]
fn a_zstd_dict_table_loads_from_jsonl_and_its_hex_dump_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    {
        let db = tabula::open::<MemoApp>(&src, Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for n in 0..1500 {
            tx.put::<Memos>(&n, &memo(n)).unwrap();
        }
        tx.commit().unwrap();
    }
    let out = tabula(&["train-dict", p(&src), "memos", "--size", "4096"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    {
        // Values written after the reopen use the dictionary.
        let db = tabula::open::<MemoApp>(&src, Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for n in 1500..1600 {
            tx.put::<Memos>(&n, &memo(n)).unwrap();
        }
        tx.commit().unwrap();
    }
    let jsonl = dir.path().join("memos.jsonl");
    dump_to(&src, "memos", &[], &jsonl);
    let dest = dir.path().join("dest");
    load_ok(&dest, None, &jsonl);
    let db = tabula::open::<MemoApp>(&dest, Options::new().read_only(true)).unwrap();
    let tx = db.read().unwrap();
    let memos: Vec<(u64, Memo)> = tx.iter::<Memos>().map(Result::unwrap).collect();
    assert_eq!(memos.len(), 1600);
    assert!(memos.iter().all(|(n, m)| *m == memo(*n)));
    drop(tx);
    drop(db);

    let hex = dir.path().join("memos.hex");
    dump_to(&src, "memos", &["--format", "hex"], &hex);
    let dest = dir.path().join("dest-hex");
    let err = load_fails(&["load", p(&dest), "--input", p(&hex)], 1);
    assert!(err.contains("does not decompress"), "{err}");
    assert!(err.contains("load its `jsonl` dump instead"), "{err}");
    assert!(!dest.exists());
}

/// On a terminal, `load` draws a progress bar on stderr (the test above checks that it draws
/// nothing when stderr is not one). The load runs through `script` (util-linux), which gives it
/// a pseudo-terminal and copies what it drew to its own stdout; without `script` the test fails
/// unless `TABULA_ALLOW_SKIP` names `cli_progress_bar`.
#[test]
fn load_draws_a_progress_bar_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    {
        let db = tabula::open::<App>(&src, Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        for i in 0..20_000u64 {
            tx.put::<ByI32>(&(i as i32), &format!("value {i} ").repeat(8))
                .unwrap();
        }
        tx.commit().unwrap();
    }
    let file: PathBuf = dir.path().join("by_i32.jsonl");
    dump_to(&src, "by_i32", &[], &file);
    let dest = dir.path().join("dest");
    let command = format!(
        "{} load {} --input {}",
        env!("CARGO_BIN_EXE_tabula"),
        p(&dest),
        p(&file)
    );
    let out = match Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            let allowed = std::env::var("TABULA_ALLOW_SKIP")
                .is_ok_and(|g| g.split(',').any(|g| g.trim() == "cli_progress_bar"));
            assert!(
                allowed,
                "`script` (util-linux) does not run ({e}): install it, or allow the skip with \
                 TABULA_ALLOW_SKIP=cli_progress_bar"
            );
            eprintln!("SKIPPED (TABULA_ALLOW_SKIP names `cli_progress_bar`): {e}");
            return;
        }
    };
    let drawn = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{drawn}");
    assert!(drawn.contains("loading"), "the bar was drawn: {drawn:?}");
    assert!(drawn.contains("MiB") || drawn.contains("KiB"), "{drawn:?}");
    assert!(drawn.contains("loaded 20000 entries"), "{drawn:?}");
    assert_eq!(raw(&src, "by_i32"), raw(&dest, "by_i32"));
}
