//! Bad input: damaged entries give a decode error naming the table and the key; damaged,
//! truncated, empty or foreign files give an open error (or, when libmdbx can still open them,
//! errors and integrity-check problems) — never a crash.
//!
//! `Db::check` on a file with garbage in a tree page runs in a child process (this binary run
//! again with `TABULA_CHECK_CHILD=<dir>`): in builds with debug assertions libmdbx's checker can
//! abort on such a page (see `check_in_child`). The file has its own `main` (`harness = false`,
//! `tests/support/harness.rs`), so the child entry is not a test.
//!
//! Random damage is drawn from a seed per test, printed; `TABULA_SEED=<seed>` replays
//! it. A row that reads back as missing (`Ok(None)`) without any error is a silent loss and
//! fails every damage test.

#[path = "support/tempdb.rs"]
mod tempdb;
#[path = "support/harness.rs"]
#[macro_use]
mod harness;

#[path = "support/damage.rs"]
mod damage;
#[path = "support/random.rs"]
mod random;

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};
use tabula::{Db, Error, Index, Key, Options, Part, Schema, Table};

use random::{mix, seed};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Account {
    name: String,
    balance: i64,
    tags: Vec<u16>,
    owner: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct SlotKey {
    account: String,
    slot: u32,
}

#[derive(Table)]
#[table(name = "accounts", key = u64, value = Account)]
struct Accounts;

#[derive(Table)]
#[table(name = "slots", key = SlotKey, value = String)]
struct Slots;

#[derive(Table)]
#[table(name = "filler", key = u32, value = Vec<u8>, codec = tabula::Raw)]
struct Filler;

#[derive(Schema)]
struct Bank(Accounts, Slots, Filler);

/// A table with an index, and a dupsort table, for the checkers' random-damage test.
#[derive(Table)]
#[table(name = "transfers", key = u64, value = Account, indexed)]
struct Transfers;

#[derive(Index)]
#[index(on = Transfers, key = u32, by = owner)]
struct ByOwner;

fn owner(_: &u64, a: &Account) -> Option<u32> {
    a.owner
}

#[derive(Table)]
#[table(name = "labels", key = u32, value = String, dupsort)]
struct Labels;

#[derive(Schema)]
struct Payments(Transfers, ByOwner, Labels);

const CHECK_CHILD_VAR: &str = "TABULA_CHECK_CHILD";
/// The child of [`checkers_on_random_damage_report_it_never_crash`]: runs the checkers on the
/// database in this directory.
const CHECKERS_CHILD_VAR: &str = "TABULA_CHECKERS_CHILD";

fn main() {
    if let Some(dir) = std::env::var_os(CHECK_CHILD_VAR) {
        check_child(Path::new(&dir));
        return;
    }
    if let Some(dir) = std::env::var_os(CHECKERS_CHILD_VAR) {
        checkers_child(Path::new(&dir));
        return;
    }
    run_tests!(
        damaged_values_and_keys_give_decode_errors_naming_table_and_key,
        random_value_bytes_never_panic,
        zero_length_file_opens_as_a_fresh_database,
        file_truncated_to_half_is_refused_or_detected,
        random_bytes_over_the_meta_pages_are_an_open_error,
        random_bytes_over_a_tree_page_are_detected_never_a_crash,
        changed_bytes_inside_a_large_value_read_back_changed_without_an_error,
        a_file_that_is_not_an_mdbx_database_is_an_open_error,
        integrity_check_counts_zeroed_tree_pages,
        checkers_on_random_damage_report_it_never_crash,
    );
}

fn account(n: u64) -> Account {
    Account {
        name: format!("account {n}"),
        balance: n as i64 * 10 - 500,
        tags: vec![n as u16, 7],
        owner: Some(n as u32),
    }
}

fn bytes(seed: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| mix(seed.wrapping_mul(65_537).wrapping_add(i)) as u8)
        .collect()
}

fn damaged_values_and_keys_give_decode_errors_naming_table_and_key() {
    let (_dir, db) = tempdb::open_with::<Bank>(Options::new().max_size(1 << 30));
    let mut tx = db.write().unwrap();
    tx.put::<Accounts>(&1, &account(1)).unwrap();
    // An encoding of account(2), cut short / with a byte too many / with a bad UTF-8 name.
    let mut encoded = Vec::new();
    tx.put::<Accounts>(&2, &account(2)).unwrap();
    encoded.extend_from_slice(tx.get_bytes::<Accounts>(&2).unwrap().unwrap());
    let cut = &encoded[..encoded.len() - 3];
    let mut longer = encoded.clone();
    longer.push(0);
    let mut bad_utf8 = encoded.clone();
    bad_utf8[1] = 0xff; // inside the name (after its one-byte length)
    tx.put_bytes::<Accounts>(&3u64.to_be_bytes(), cut).unwrap();
    tx.put_bytes::<Accounts>(&4u64.to_be_bytes(), &longer)
        .unwrap();
    tx.put_bytes::<Accounts>(&5u64.to_be_bytes(), &bad_utf8)
        .unwrap();
    tx.put_bytes::<Accounts>(&6u64.to_be_bytes(), &[]).unwrap();
    // A composite key whose string part is not terminated, and one that is not UTF-8.
    tx.put::<Slots>(
        &SlotKey {
            account: "ok".into(),
            slot: 1,
        },
        &"fine".to_string(),
    )
    .unwrap();
    tx.put_bytes::<Slots>(b"unterminated", &[4, b'f', b'i', b'n', b'e'])
        .unwrap();
    tx.put_bytes::<Slots>(&[0xc3, 0x28, 0, 0, 0, 0, 0, 1], &[0])
        .unwrap();
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Accounts>(&1).unwrap(), Some(account(1)));
    assert_eq!(tx.get::<Accounts>(&2).unwrap(), Some(account(2)));
    for n in 3..=6u64 {
        let err = tx.get::<Accounts>(&n).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Decode {
                    table: "accounts",
                    part: Part::Value,
                    ..
                }
            ),
            "{n}: {err}"
        );
        let msg = err.to_string();
        assert!(msg.contains("table `accounts`"), "{msg}");
        assert!(msg.contains(&format!("at key {n}:")), "{msg}"); // typed: a `u64` key
    }
    // Iteration in both directions reports each bad entry and goes on.
    let forward: Vec<_> = tx.iter::<Accounts>().collect();
    assert_eq!(forward.len(), 6);
    assert_eq!(forward.iter().filter(|r| r.is_err()).count(), 4);
    let backward: Vec<_> = tx.iter::<Accounts>().rev().collect();
    assert_eq!(backward.iter().filter(|r| r.is_err()).count(), 4);
    // Keys: decode errors name the part and show the stored key bytes.
    let slots: Vec<_> = tx.iter::<Slots>().collect();
    assert_eq!(slots.len(), 3);
    let key_errors: Vec<String> = slots
        .iter()
        .filter_map(|r| match r {
            Err(
                e @ Error::Decode {
                    table: "slots",
                    part: Part::Key,
                    ..
                },
            ) => Some(e.to_string()),
            Err(e) => panic!("unexpected {e}"),
            Ok(_) => None,
        })
        .collect();
    assert_eq!(key_errors.len(), 2, "{key_errors:?}");
    assert!(
        key_errors
            .iter()
            .any(|m| m.contains(&format!("0x{}", hex(b"unterminated")))),
        "{key_errors:?}"
    );
    // The cursor reports the same.
    let mut c = tx.cursor::<Slots>().unwrap();
    let mut errors = 0;
    let mut step = c.first();
    for _ in 0..3 {
        if step.is_err() {
            errors += 1;
        }
        step = c.next();
    }
    assert_eq!(errors, 2);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// Random value bytes under every key of a table: every read is a value or a decode error.
fn random_value_bytes_never_panic() {
    let seed = seed("random_value_bytes_never_panic");
    let (_dir, db) = tempdb::open_with::<Bank>(Options::new().max_size(1 << 30));
    let mut tx = db.write().unwrap();
    let mut slot_keys = std::collections::BTreeSet::new();
    for n in 0..500u64 {
        let r = mix(seed ^ n);
        let len = (r % 64) as usize;
        tx.put_bytes::<Accounts>(&n.to_be_bytes(), &bytes(r, len))
            .unwrap();
        let key = bytes(r ^ 1, 1 + len % 20);
        tx.put_bytes::<Slots>(&key, &bytes(r ^ 2, len)).unwrap();
        slot_keys.insert(key);
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let mut decoded = 0;
    let mut refused = 0;
    for n in 0..500u64 {
        match tx.get::<Accounts>(&n) {
            Ok(Some(_)) => decoded += 1,
            Err(Error::Decode {
                table: "accounts",
                part: Part::Value,
                ..
            }) => refused += 1,
            other => panic!("{n}: {other:?}"),
        }
    }
    assert_eq!(decoded + refused, 500);
    assert!(
        refused > 400,
        "random bytes mostly do not decode: {refused}"
    );
    // Every stored entry is seen once each way, as a key and value or as a decode error.
    for (way, entries) in [
        ("forward", tx.iter::<Slots>().collect::<Vec<_>>()),
        ("backward", tx.iter::<Slots>().rev().collect()),
    ] {
        for r in &entries {
            match r {
                Ok(_) | Err(Error::Decode { table: "slots", .. }) => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(
            entries.len(),
            slot_keys.len(),
            "{way}: entries seen, against distinct keys stored"
        );
    }
}

/// What a test database holds: `accounts` small entries (in B-tree leaf pages) and `large`
/// 5000-byte values (each on its own overflow pages).
#[derive(Clone, Copy)]
struct Contents {
    accounts: u32,
    large: u32,
}

/// Mostly large values: a file of a few MB.
const WITH_LARGE: Contents = Contents {
    accounts: 400,
    large: 400,
};
/// Mostly small entries (leaf pages), and a few large values.
const MOSTLY_SMALL: Contents = Contents {
    accounts: 10_000,
    large: 16,
};

fn large(n: u32) -> Vec<u8> {
    bytes(u64::from(n), 5000)
}

/// Writes `contents` in one write transaction and closes the database. One transaction: every
/// page of the file that holds an entry is then a live page (no earlier copy of it is left in
/// free space), so the page holding an entry is found by searching the file for its bytes.
/// Returns the data file and the page size.
fn make_db(dir: &Path, contents: Contents) -> (std::path::PathBuf, u64) {
    let db =
        tabula::open::<Bank>(dir, Options::new().max_size(1 << 30).growth_step(1 << 16)).unwrap();
    let mut tx = db.write().unwrap();
    for n in 0..contents.accounts {
        tx.put::<Accounts>(&u64::from(n), &account(u64::from(n)))
            .unwrap();
    }
    for n in 0..contents.large {
        tx.put::<Filler>(&n, &large(n)).unwrap();
    }
    tx.commit().unwrap();
    assert!(db.check().unwrap().is_ok());
    let page = u64::from(db.info().unwrap().page_size);
    drop(db);
    (dir.join("mdbx.dat"), page)
}

/// The stored bytes of `account(n)`.
fn encoded_account(n: u64) -> Vec<u8> {
    let mut scratch = Vec::new();
    <tabula::Bincode<Account> as tabula::Value>::encode(&account(n), &mut scratch)
        .unwrap()
        .to_vec()
}

/// Where `needle` is in `file`; it must be there exactly once.
fn offset_of(file: &Path, needle: &[u8]) -> u64 {
    let data = std::fs::read(file).unwrap();
    let mut found = data
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i as u64);
    let first = found.next().expect("the bytes are in the file");
    assert_eq!(found.next(), None, "the bytes are in the file once");
    first
}

/// What opening a damaged file led to.
#[derive(Debug)]
enum Outcome {
    /// `open` refused it.
    OpenError(String),
    /// It opened; the integrity check and/or the reads found the damage. `missing` rows read
    /// back as absent without an error (a silent loss), which every damage test refuses.
    Detected {
        problems: u64,
        read_errors: usize,
        missing: usize,
    },
    /// It opened; no error and no problem, and `missing` rows read back as absent: every row for
    /// a fresh, empty database; any other number is a silent loss.
    Clean { missing: usize },
}

impl Outcome {
    /// Rows that read back as absent without an error.
    fn missing(&self) -> usize {
        match self {
            Outcome::OpenError(_) => 0,
            Outcome::Detected { missing, .. } | Outcome::Clean { missing } => *missing,
        }
    }
}

/// Opens the damaged database with `Options::validation` and reads everything `contents` put
/// there; must not crash. Returns the outcome and how many large values read back changed
/// without an error: libmdbx checks page headers, not page contents (there are no data
/// checksums), so bytes inside a large value's overflow pages can change unseen. Small values
/// sit in B-tree pages whose damage is caught by the headers, so a wrong small value is a
/// failure.
fn try_open(dir: &Path, contents: Contents, run_check: bool) -> (Outcome, usize) {
    let db: Db<Bank> =
        match tabula::open::<Bank>(dir, Options::new().max_size(1 << 30).validation(true)) {
            Ok(db) => db,
            Err(e) => {
                assert!(
                    matches!(
                        e,
                        Error::Open { .. } | Error::Env { .. } | Error::Mdbx { .. }
                    ),
                    "{e}"
                );
                return (Outcome::OpenError(e.to_string()), 0);
            }
        };
    let problems = if run_check {
        match db.check() {
            Ok(r) => r.problems,
            Err(_) => 1,
        }
    } else {
        0
    };
    let mut read_errors = 0;
    let mut missing = 0;
    let mut changed = 0;
    match db.read() {
        Ok(tx) => {
            for n in 0..contents.large {
                match tx.get::<Filler>(&n) {
                    Ok(Some(v)) if v != large(n) => changed += 1,
                    Ok(Some(_)) => {}
                    Ok(None) => missing += 1,
                    Err(_) => read_errors += 1,
                }
            }
            for n in 0..u64::from(contents.accounts) {
                match tx.get::<Accounts>(&n) {
                    Ok(Some(a)) => assert_eq!(a, account(n), "account {n}"),
                    Ok(None) => missing += 1,
                    Err(_) => read_errors += 1,
                }
            }
            // A walk over the large values: an error, or every one of them, once, in order.
            let mut walked = 0u32;
            let mut walk_errors = 0;
            for entry in tx.iter::<Filler>() {
                match entry {
                    Ok((k, _)) => {
                        assert_eq!(k, walked, "the walk skipped or repeated a key");
                        walked += 1;
                    }
                    Err(_) => walk_errors += 1,
                }
            }
            read_errors += walk_errors;
            if walk_errors == 0 {
                missing += (contents.large - walked) as usize;
            }
        }
        Err(_) => read_errors += 1,
    }
    let outcome = if problems == 0 && read_errors == 0 {
        Outcome::Clean { missing }
    } else {
        Outcome::Detected {
            problems,
            read_errors,
            missing,
        }
    };
    (outcome, changed)
}

/// What a fresh, empty database reads back as missing in `try_open`: every account, and every
/// large value twice (by key, then in the walk).
fn rows(contents: Contents) -> usize {
    (contents.accounts + 2 * contents.large) as usize
}

fn overwrite(file: &Path, at: u64, data: &[u8]) {
    let mut f = OpenOptions::new().write(true).open(file).unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(data).unwrap();
    f.sync_all().unwrap();
}

/// The child process: `Db::check` on the database in `dir`, printing `problems <n>`, or
/// `check-error <e>` / `open-error <e>`.
fn check_child(dir: &Path) {
    match tabula::open::<Bank>(dir, Options::new().max_size(1 << 30).validation(true)) {
        Ok(db) => match db.check() {
            Ok(r) => println!("problems {}", r.problems),
            Err(e) => println!("check-error {e}"),
        },
        Err(e) => println!("open-error {e}"),
    }
}

/// What `Db::check` made of a damaged file, run in a child process.
#[derive(Debug)]
enum Checked {
    /// It ran and counted this many problems.
    Problems(u64),
    /// The open or the check returned an error.
    Error(String),
    /// It aborted on libmdbx's documented checker assertion (the line libmdbx printed).
    Assertion(String),
}

/// libmdbx 0.14.4's checker (`walk_pgno`) calls `page_numkeys` on a page `page_get` has just
/// reported broken. With libmdbx's assertions on (mdbx-sys turns them on in builds with debug
/// assertions) its assertion `mp->lower <= mp->upper` then aborts the process when the page's
/// header is garbage; release builds compile it out and count the page as a problem.
const CHECKER_ASSERTION: &str = "page_numkeys: Assertion `mp->lower <= mp->upper' failed";

/// Runs `Db::check` on `dir` in a child process. Any ending but a report, an error, or an abort
/// on [`CHECKER_ASSERTION`] fails the test.
fn check_in_child(dir: &Path) -> Checked {
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHECK_CHILD_VAR, dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let line = stdout.trim();
        if let Some(n) = line.strip_prefix("problems ") {
            return Checked::Problems(n.parse().unwrap());
        }
        return Checked::Error(line.to_string());
    }
    if out.status.signal() == Some(libc_sigabrt())
        && let Some(line) = stderr.lines().find(|l| l.contains(CHECKER_ASSERTION))
    {
        return Checked::Assertion(line.to_string());
    }
    panic!(
        "Db::check in a child process ended with {}\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
}

/// `SIGABRT`: 6 on every Unix this runs on.
fn libc_sigabrt() -> i32 {
    6
}

fn zero_length_file_opens_as_a_fresh_database() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = make_db(dir.path(), WITH_LARGE);
    OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&file)
        .unwrap();
    // libmdbx treats an empty data file as a new database: nothing to lose, nothing to crash on.
    // It opens as a fresh database: every table empty, the check clean.
    match try_open(dir.path(), WITH_LARGE, true).0 {
        Outcome::Clean { missing } => assert_eq!(missing, rows(WITH_LARGE), "a fresh database"),
        other => panic!("an empty data file is a fresh database, not {other:?}"),
    }
    let db = tabula::open::<Bank>(dir.path(), Options::new().max_size(1 << 30)).unwrap();
    let tx = db.read().unwrap();
    assert_eq!(tx.len::<Accounts>().unwrap(), 0);
    assert_eq!(tx.len::<Filler>().unwrap(), 0);
}

fn file_truncated_to_half_is_refused_or_detected() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = make_db(dir.path(), WITH_LARGE);
    let len = std::fs::metadata(&file).unwrap().len();
    assert!(len >= 2 << 20, "file is {len} bytes");
    OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let (outcome, _) = try_open(dir.path(), WITH_LARGE, true);
    eprintln!("truncated to half: {outcome:?}");
    assert!(
        matches!(outcome, Outcome::OpenError(_) | Outcome::Detected { .. }),
        "half the file is gone, unseen: {outcome:?}"
    );
    assert_eq!(
        outcome.missing(),
        0,
        "rows lost without an error: {outcome:?}"
    );
}

fn random_bytes_over_the_meta_pages_are_an_open_error() {
    let base = seed("random_bytes_over_the_meta_pages_are_an_open_error");
    for run in 0..3u64 {
        let seed = mix(base ^ run);
        let dir = tempfile::tempdir().unwrap();
        let (file, page) = make_db(dir.path(), WITH_LARGE);
        // libmdbx keeps three meta pages at the start of the file; damage all of them.
        overwrite(&file, 0, &bytes(seed, 3 * page as usize));
        match try_open(dir.path(), WITH_LARGE, true).0 {
            Outcome::OpenError(e) => assert!(e.contains("MDBX_"), "{e}"),
            other => panic!("run {run} (seed {base}): {other:?}"),
        }
    }
}

/// A page of random bytes over a live leaf page (the one holding a chosen account): every run
/// is detected by the reads and by `Db::check` (or, with libmdbx's assertions on, the checker
/// aborts on its documented assertion: counted and reported), and no other value changes.
fn random_bytes_over_a_tree_page_are_detected_never_a_crash() {
    let base = seed("random_bytes_over_a_tree_page_are_detected_never_a_crash");
    let (mut counted, mut aborted) = (0, 0);
    for run in 0..6u64 {
        let seed = mix(base ^ run);
        let dir = tempfile::tempdir().unwrap();
        let (file, page) = make_db(dir.path(), MOSTLY_SMALL);
        let k = seed % u64::from(MOSTLY_SMALL.accounts);
        let at = offset_of(&file, &encoded_account(k)) / page * page;
        overwrite(&file, at, &bytes(seed ^ 100, page as usize));
        let (outcome, changed) = try_open(dir.path(), MOSTLY_SMALL, false);
        eprintln!("run {run}: tree page of account {k} at {at} damaged: {outcome:?}");
        assert!(
            matches!(outcome, Outcome::Detected { read_errors, .. } if read_errors > 0),
            "run {run} (seed {base}): the reads did not see the damaged page of account {k}: \
             {outcome:?}"
        );
        assert_eq!(
            outcome.missing(),
            0,
            "run {run} (seed {base}): rows lost without an error: {outcome:?}"
        );
        // The large values are on overflow pages the damage did not touch: they read back as
        // written (a value changed without an error would count here).
        assert_eq!(changed, 0, "run {run} (seed {base}): large values changed");
        match check_in_child(dir.path()) {
            Checked::Problems(n) => {
                assert!(
                    n > 0,
                    "run {run} (seed {base}): mdbx_env_chk found no problem"
                );
                counted += 1;
            }
            Checked::Assertion(line) => {
                if !cfg!(debug_assertions) {
                    panic!("libmdbx's assertions are off in release builds, yet: {line}");
                }
                eprintln!("run {run}: Db::check aborted on libmdbx's assertion: {line}");
                aborted += 1;
            }
            Checked::Error(e) => panic!("run {run} (seed {base}): Db::check could not run: {e}"),
        }
    }
    eprintln!(
        "damaged tree pages: 6 of 6 detected by the reads; Db::check counted problems in \
         {counted}, aborted on libmdbx's checker assertion in {aborted}"
    );
}

/// No data checksums in libmdbx: bytes changed inside a large value's overflow page read back
/// changed, with no read error, and `mdbx_env_chk` does not see it either
/// (`docs/reliability.md`, "Bad input").
fn changed_bytes_inside_a_large_value_read_back_changed_without_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = make_db(dir.path(), WITH_LARGE);
    let value = large(123);
    let at = offset_of(&file, &value[2000..2064]);
    let flipped: Vec<u8> = value[2000..2016].iter().map(|b| !b).collect();
    overwrite(&file, at, &flipped);
    let (outcome, changed) = try_open(dir.path(), WITH_LARGE, true);
    assert!(
        matches!(outcome, Outcome::Clean { missing: 0 }),
        "{outcome:?}"
    );
    assert_eq!(changed, 1, "the damaged value reads back changed");
}

fn a_file_that_is_not_an_mdbx_database_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mdbx.dat"),
        "this is a text file, not a database\n".repeat(2000),
    )
    .unwrap();
    // A refused open leaves the directory as it found it: no lock file.
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    match try_open(dir.path(), WITH_LARGE, true).0 {
        Outcome::OpenError(e) => assert!(e.contains("not an MDBX database"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(listing(), ["mdbx.dat"]);
    let err = tabula::open::<Bank>(dir.path(), Options::new().max_size(1 << 30)).unwrap_err();
    assert!(err.to_string().contains("not an MDBX database"), "{err}");
    assert_eq!(listing(), ["mdbx.dat"]);
    // Read-only opens say the same.
    let err = tabula::open::<Bank>(dir.path(), Options::new().max_size(1 << 30).read_only(true))
        .unwrap_err();
    assert!(matches!(err, Error::Open { .. }), "{err}");
    assert_eq!(listing(), ["mdbx.dat"]);
    let err = tabula::untyped::UntypedDb::open(dir.path()).unwrap_err();
    assert!(err.to_string().contains("not an MDBX database"), "{err}");
    assert_eq!(listing(), ["mdbx.dat"]);
}

/// A zeroed live leaf page: the reads and `Db::check` both find it, every time. A zero page's
/// bounds are consistent, so libmdbx's checker assertion (above) does not fire and the check
/// runs in this process in every build.
fn integrity_check_counts_zeroed_tree_pages() {
    let base = seed("integrity_check_counts_zeroed_tree_pages");
    for run in 0..3u64 {
        let dir = tempfile::tempdir().unwrap();
        let (file, page) = make_db(dir.path(), MOSTLY_SMALL);
        let k = mix(base ^ run) % u64::from(MOSTLY_SMALL.accounts);
        let at = offset_of(&file, &encoded_account(k)) / page * page;
        overwrite(&file, at, &vec![0u8; page as usize]);
        let (reads, changed) = try_open(dir.path(), MOSTLY_SMALL, false);
        let (checked, _) = try_open(dir.path(), MOSTLY_SMALL, true);
        eprintln!(
            "run {run}: zeroed page of account {k} at {at}: reads {reads:?}, with check \
             {checked:?}"
        );
        assert!(
            matches!(reads, Outcome::Detected { read_errors, .. } if read_errors > 0),
            "run {run} (seed {base}): {reads:?}"
        );
        assert!(
            matches!(checked, Outcome::Detected { problems, .. } if problems > 0),
            "run {run} (seed {base}): the check missed what the reads saw: {checked:?}"
        );
        assert_eq!(
            reads.missing(),
            0,
            "run {run} (seed {base}): rows lost: {reads:?}"
        );
        assert_eq!(changed, 0, "run {run} (seed {base}): large values changed");
    }
}

// ---- the checkers on random damage, opened without `Options::validation` ----------------------

/// Damaged copies per run, and pages damaged in each.
const CHECKER_COPIES: u64 = 12;
const CHECKER_PAGES: u64 = 8;

/// The child: on the database in `dir`, opened with the default options (no
/// `Options::validation`), `Db::check`, `Db::check_indexes`, and `UntypedDb`'s check and a
/// read of every table; one line each.
fn checkers_child(dir: &Path) {
    match tabula::open::<Payments>(dir, Options::new().max_size(1 << 30)) {
        Ok(db) => {
            println!("open ok");
            match db.check() {
                Ok(r) => println!("check problems {}", r.problems),
                Err(e) => println!("check-error {e}"),
            }
            match db.check_indexes(10) {
                Ok(c) => println!("indexes problems {}", c.problems.len()),
                Err(e) => println!("indexes-error {e}"),
            }
        }
        Err(e) => println!("open-error {e}"),
    }
    let db = match tabula::untyped::UntypedDb::open(dir) {
        Ok(db) => db,
        Err(e) => return println!("untyped-open-error {e}"),
    };
    match db.check_report() {
        Ok(r) => println!("untyped-check problems {}", r.summary.problems),
        Err(e) => println!("untyped-check-error {e}"),
    }
    for name in ["transfers", "ByOwner", "labels"] {
        let read = db.read().and_then(|mut tx| {
            let table = tx.table(name)?.expect("a table of the file");
            tx.walk(&table, None, None, false, |_, _| true)
        });
        match read {
            Ok(()) => println!("read {name} ok"),
            Err(e) => println!("read-error {name} {e}"),
        }
    }
}

/// Random bytes in pages (headers, node sizes, keys and values) of copies of a database with an
/// index and a dupsort table, opened without `Options::validation`: `Db::check`,
/// `Db::check_indexes` and `UntypedDb` (its check, and a read of every table) end, in a child
/// process, with a result or an error naming the table, never a signal. In builds with debug
/// assertions an abort on one of [`damage::DAMAGE_ASSERTIONS`] is printed and accepted.
fn checkers_on_random_damage_report_it_never_crash() {
    let base = seed("checkers_on_random_damage_report_it_never_crash");
    let pristine = tempfile::tempdir().unwrap();
    let page = {
        let db =
            tabula::open::<Payments>(pristine.path(), Options::new().max_size(1 << 30)).unwrap();
        let mut tx = db.write().unwrap();
        for n in 0..3000u64 {
            tx.put::<Transfers>(&n, &account(n % 700)).unwrap();
        }
        for k in 0..200u32 {
            for v in 0..if k % 20 == 0 { 300 } else { 4 } {
                tx.put::<Labels>(&k, &format!("label {v:05} of {k}"))
                    .unwrap();
            }
        }
        tx.commit().unwrap();
        assert!(db.check().unwrap().is_ok());
        assert!(db.check_indexes(10).unwrap().is_ok());
        // The startup checked the pages it read, and switched the checks off again.
        assert!(!db.info().unwrap().validation);
        db.info().unwrap().page_size as usize
    };
    let mut failures = Vec::new();
    for copy in 0..CHECKER_COPIES {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            pristine.path().join("mdbx.dat"),
            dir.path().join("mdbx.dat"),
        )
        .unwrap();
        let mut rng = random::Rng::new(base ^ copy);
        let done = damage::random_bytes_in_pages(
            &dir.path().join("mdbx.dat"),
            page,
            &mut rng,
            CHECKER_PAGES,
        );
        let at = format!("seed {base} copy {copy} ({})", done.join(", "));
        let out = Command::new(std::env::current_exe().unwrap())
            .env(CHECKERS_CHILD_VAR, dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            match damage::assertion_after_damage(out.status, &stderr) {
                Some(line) => eprintln!("{at}: libmdbx assertion (debug build): {line}"),
                None => failures.push(format!(
                    "{at}: the child ended with {}\n{stdout}\n{stderr}",
                    out.status
                )),
            }
            continue;
        }
        for line in stdout.lines() {
            let named = |names: &[&str]| names.iter().any(|n| line.contains(&format!("`{n}`")));
            let ok = match line.split_once(' ').map_or(line, |(what, _)| what) {
                "open" | "check" | "indexes" | "untyped-check" | "read" => true,
                // The open reads Tabula's meta table.
                "open-error" | "untyped-open-error" => {
                    named(&["__tabula_meta"]) || line.contains("damaged")
                }
                "indexes-error" => named(&[
                    "transfers",
                    "ByOwner",
                    "labels",
                    "__tabula_meta",
                    "@MAIN",
                    "@GC",
                ]),
                "read-error" => line
                    .split(' ')
                    .nth(1)
                    .is_some_and(|t| line.contains(&format!("`{t}`"))),
                _ => false,
            };
            if !ok {
                failures.push(format!("{at}: {line}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
