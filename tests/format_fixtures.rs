//! On-disk format fixtures (issue 13): small database files written by a release, which every
//! later release must open with the same declarations and read back entry for entry — or ship
//! a migration that does (docs/design.md, "Schema identity").
//!
//! `tests/fixtures/format-v1/` holds one set per writer:
//!
//! - `spelled/`: written by the release before structural identity (commit 00350fa), whose
//!   schema record spelled value types as written (`bincode<model::Account>`) and held no shape
//!   for a type whose enums serde-reflection could not finish (here `Flag` and `Event`, reached
//!   only through a `Vec`). These are the files users have.
//! - `structural/`: written by this release (`scripts/format-fixtures.sh` rewrites it).
//!
//! Each set has five databases: `plain` (byte keys, serde and raw values), `dupsort`,
//! `integer` (`integer_key` tables), `composite` (a `#[derive(Key)]` struct, tuples, `Option`,
//! signed and `char` parts) and `migrated` (two migration steps applied: a transform and a table
//! created and filled by code). The checks open a copy of each with the declarations below —
//! some value types spelled differently from the writer's (imported, aliased), which must not
//! matter — and compare every entry of every table with what the writer stored, through the
//! typed API and through the schema-less reader.
//!
//! This target has its own `main` (`harness = false`): with `TABULA_WRITE_FORMAT_FIXTURES=<dir>`
//! it writes the five databases into `<dir>` instead of testing. The writer uses only what the
//! release before structural identity offered, so the same code wrote `spelled/` there.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tabula::untyped::UntypedDb;
use tabula::{Contains, Migrations, Options, Schema, Table};

/// The value and key types, as the writer spells them (`model::..`).
mod model {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Account {
        pub balance: u64,
        pub nonce: u32,
        pub flags: Vec<Flag>,
    }

    /// Reached only through `Account::flags`: the release before recorded no shape for
    /// `Account`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum Flag {
        Frozen,
        Limit(u64),
        Note { text: String },
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Header {
        pub number: u64,
        pub parent: [u8; 8],
        pub miner: String,
        pub kind: Kind,
        pub extra: Option<u32>,
    }

    /// A direct field of `Header`: the release before recorded a shape for `Header`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum Kind {
        Genesis,
        Child(u64),
    }

    /// A dupsort value: ordered (a key type) since dup values are stored in their order;
    /// `Serialize`/`Deserialize` for the bincode the release before stored it as.
    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, tabula::Key)]
    pub struct Log {
        pub topic: u32,
        pub data: Vec<u8>,
    }

    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, tabula::Key)]
    pub struct SlotKey {
        pub addr: [u8; 20],
        pub slot: u64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct WalletV1 {
        pub balance: u64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Wallet {
        pub balance: u64,
        pub history: Vec<Event>,
    }

    /// Reached only through `Wallet::history`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub enum Event {
        Deposit(u64),
        Withdraw(u64),
    }
}

use model::{Account, Event, Flag, Header, Kind, Log, SlotKey, Wallet, WalletV1};

/// A type alias the reader uses for `model::Log`.
type LogEntry = model::Log;

/// Declares each table twice, `$writer` in the writer's spelling of its value type and `$reader`
/// in the reader's (`as C` names a codec).
macro_rules! tables {
    ($(
        $writer:ident / $reader:ident: name = $name:literal, key = $key:ty,
        value = $wv:ty | $rv:ty $(as $codec:ty)? $(, $flag:ident)*
    );* $(;)?) => {
        /// The writer's declarations.
        pub mod write {
            use super::*;
            $(
                #[derive(Table)]
                #[table(name = $name, key = $key, value = $wv $(, $flag)* $(, codec = $codec)?)]
                pub struct $writer;
            )*
        }
        /// The reader's declarations: the same tables, some value types spelled otherwise.
        pub mod read {
            use super::*;
            $(
                #[derive(Table)]
                #[table(name = $name, key = $key, value = $rv $(, $flag)* $(, codec = $codec)?)]
                pub struct $reader;
            )*
        }
    };
}

tables! {
    Accounts / Accounts: name = "accounts", key = String, value = model::Account | model::Account;
    Notes / Notes: name = "notes", key = u64, value = String | String;
    Blobs / Blobs: name = "blobs", key = u64, value = Vec<u8> | Vec<u8> as tabula::Raw;
    Headers / Headers: name = "headers", key = u64, value = model::Header | Header;
    Topics / Topics: name = "topics", key = String, value = u32 | u32, dupsort;
    Logs / Logs: name = "logs", key = u64, value = model::Log | LogEntry, dupsort;
    Heights / Heights: name = "heights", key = u32, value = [u8; 32] | [u8; 32], integer_key;
    Numbers / Numbers: name = "numbers", key = u64, value = model::Header | Header, integer_key;
    Slots / Slots: name = "slots", key = model::SlotKey, value = u128 | u128;
    Pairs / Pairs: name = "pairs", key = (String, u64), value = String | String;
    Maybe / Maybe: name = "maybe", key = Option<u32>, value = bool | bool;
    Signed / Signed: name = "signed", key = (i64, bool, char), value = i16 | i16;
    WalletsV1 / WalletsV1: name = "wallets", key = u64, value = model::WalletV1 | WalletV1;
    Wallets / Wallets: name = "wallets", key = u64, value = model::Wallet | model::Wallet;
    Audit / Audit: name = "audit", key = u64, value = String | String;
}

macro_rules! schemas {
    ($($name:ident($($t:ident),*);)*) => {
        pub mod write_schemas {
            use super::write::*;
            $(#[derive(tabula::Schema)] pub struct $name($($t),*);)*
        }
        pub mod read_schemas {
            use super::read::*;
            $(#[derive(tabula::Schema)] pub struct $name($($t),*);)*
        }
    };
}

schemas! {
    Plain(Accounts, Notes, Blobs, Headers);
    Dupsort(Topics, Logs);
    Integer(Heights, Numbers);
    Composite(Slots, Pairs, Maybe, Signed);
    MigratedV1(WalletsV1);
    Migrated(Wallets, Audit);
}

// ---- the data ------------------------------------------------------------------------------

fn accounts() -> Vec<(String, Account)> {
    (0..12u32)
        .map(|i| {
            let flags = match i % 4 {
                0 => vec![],
                1 => vec![Flag::Frozen],
                2 => vec![Flag::Limit(u64::from(i) * 1000), Flag::Frozen],
                _ => vec![Flag::Note {
                    text: format!("note {i}"),
                }],
            };
            let account = Account {
                balance: u64::from(i) * 17,
                nonce: i,
                flags,
            };
            (format!("acct-{i:02}"), account)
        })
        .collect()
}

fn notes() -> Vec<(u64, String)> {
    (0..8u64).map(|i| (i * 3, "ü".repeat(i as usize))).collect()
}

fn blobs() -> Vec<(u64, Vec<u8>)> {
    (0..6u64)
        .map(|i| (i, vec![i as u8; i as usize * 5]))
        .collect()
}

fn header(i: u64) -> Header {
    Header {
        number: i,
        parent: (i.wrapping_sub(1)).to_be_bytes(),
        miner: format!("miner-{}", i % 3),
        kind: if i == 0 {
            Kind::Genesis
        } else {
            Kind::Child(i - 1)
        },
        extra: i.is_multiple_of(2).then_some(i as u32 * 7),
    }
}

fn headers() -> Vec<(u64, Header)> {
    (0..10u64).map(|i| (i, header(i))).collect()
}

fn topics() -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for t in ["mint", "swap", "transfer"] {
        for v in [1u32, 300, 70_000] {
            out.push((t.to_string(), v + t.len() as u32));
        }
    }
    out
}

fn logs() -> Vec<(u64, Log)> {
    (0..4u64)
        .flat_map(|block| {
            (0..3u32).map(move |topic| {
                let log = Log {
                    topic,
                    data: vec![block as u8, topic as u8],
                };
                (block, log)
            })
        })
        .collect()
}

fn heights() -> Vec<(u32, [u8; 32])> {
    [0u32, 1, 255, 256, 65_536, u32::MAX]
        .into_iter()
        .map(|h| (h, [h as u8; 32]))
        .collect()
}

fn numbers() -> Vec<(u64, Header)> {
    [0u64, 7, 1 << 40, u64::MAX]
        .into_iter()
        .map(|n| (n, header(n % 5)))
        .collect()
}

fn slots() -> Vec<(SlotKey, u128)> {
    (0..6u8)
        .map(|i| {
            let key = SlotKey {
                addr: [i / 2; 20],
                slot: u64::from(i) * 1_000_003,
            };
            (key, u128::from(i) << 100)
        })
        .collect()
}

fn pairs() -> Vec<((String, u64), String)> {
    ["", "a", "a\0b", "ab"]
        .iter()
        .flat_map(|s| [(s.to_string(), 0u64), (s.to_string(), 9)])
        .map(|k| (k.clone(), format!("{}#{}", k.0, k.1)))
        .collect()
}

fn maybe() -> Vec<(Option<u32>, bool)> {
    vec![(None, false), (Some(0), true), (Some(u32::MAX), false)]
}

fn signed() -> Vec<((i64, bool, char), i16)> {
    vec![
        ((i64::MIN, false, 'a'), -1),
        ((-1, true, 'é'), i16::MIN),
        ((0, false, '\0'), 0),
        ((42, true, '😀'), i16::MAX),
    ]
}

fn wallets_v1() -> Vec<(u64, WalletV1)> {
    (0..10u64)
        .map(|i| (i, WalletV1 { balance: i * 11 }))
        .collect()
}

fn wallet(old: WalletV1) -> Wallet {
    let history = if old.balance.is_multiple_of(2) {
        vec![Event::Deposit(old.balance)]
    } else {
        vec![Event::Deposit(old.balance + 1), Event::Withdraw(1)]
    };
    Wallet {
        balance: old.balance,
        history,
    }
}

fn wallets() -> Vec<(u64, Wallet)> {
    wallets_v1()
        .into_iter()
        .map(|(k, v)| (k, wallet(v)))
        .collect()
}

fn audit() -> Vec<(u64, String)> {
    wallets()
        .into_iter()
        .map(|(k, w)| (k, format!("{} event(s)", w.history.len())))
        .collect()
}

/// The migrations of `migrated`: version 2 turns `WalletV1` into `Wallet`, version 3 creates
/// `audit` and fills it from `wallets`. The reader declares the very same steps with its own
/// table types (same names and structures, so the same checksums).
macro_rules! migrations {
    ($tables:ident) => {
        Migrations::new()
            .step(2, "wallets-history", |m| {
                m.transform::<$tables::Wallets, WalletV1>(wallet);
            })
            .step(3, "audit", |m| {
                m.create_table::<$tables::Audit>();
                m.run("fill-audit", |tx| {
                    let mut rows = Vec::new();
                    tx.for_each::<$tables::Wallets>(|k, w| {
                        rows.push((k, format!("{} event(s)", w.history.len())));
                        Ok(())
                    })?;
                    for (k, text) in rows {
                        tx.put::<$tables::Audit>(&k, &text)?;
                    }
                    Ok(())
                });
            })
    };
}

// ---- the writer ----------------------------------------------------------------------------

/// Small files: 1 KiB pages, the file as small as libmdbx allows; each database is then copied
/// compacted, so a fixture holds only the pages in use.
fn options() -> Options {
    Options::new()
        .page_size(1024)
        .min_size(0)
        .growth_step(1024)
        .max_size(1 << 24)
}

fn put_all<T: tabula::Writable, S: Schema + Contains<T>>(
    db: &tabula::Db<S>,
    rows: Vec<(T::Key, T::Value)>,
) {
    let mut tx = db.write().unwrap();
    for (k, v) in &rows {
        tx.put::<T>(k, v).unwrap();
    }
    tx.commit().unwrap();
}

fn write_all(out: &Path) {
    use write::*;
    use write_schemas::*;

    let scratch = tempfile::tempdir().unwrap();
    let place = |name: &str| {
        let dir = scratch.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };

    let dir = place("plain");
    let db = tabula::open::<Plain>(&dir, options()).unwrap();
    put_all::<Accounts, _>(&db, accounts());
    put_all::<Notes, _>(&db, notes());
    put_all::<Blobs, _>(&db, blobs());
    put_all::<Headers, _>(&db, headers());
    drop(db);

    let dir = place("dupsort");
    let db = tabula::open::<Dupsort>(&dir, options()).unwrap();
    put_all::<Topics, _>(&db, topics());
    put_all::<Logs, _>(&db, logs());
    drop(db);

    let dir = place("integer");
    let db = tabula::open::<Integer>(&dir, options()).unwrap();
    put_all::<Heights, _>(&db, heights());
    put_all::<Numbers, _>(&db, numbers());
    drop(db);

    let dir = place("composite");
    let db = tabula::open::<Composite>(&dir, options()).unwrap();
    put_all::<Slots, _>(&db, slots());
    put_all::<Pairs, _>(&db, pairs());
    put_all::<Maybe, _>(&db, maybe());
    put_all::<Signed, _>(&db, signed());
    drop(db);

    let dir = place("migrated");
    let db = tabula::open::<MigratedV1>(&dir, options()).unwrap();
    put_all::<WalletsV1, _>(&db, wallets_v1());
    drop(db);
    let (db, report) = tabula::open_with::<Migrated>(&dir, options(), &migrations!(write)).unwrap();
    assert_eq!(report.applied.len(), 2);
    drop(db);

    for name in FIXTURES {
        let dest = out.join(name);
        std::fs::create_dir_all(&dest).unwrap();
        let file = dest.join("mdbx.dat");
        if file.exists() {
            std::fs::remove_file(&file).unwrap();
        }
        UntypedDb::open(scratch.path().join(name))
            .unwrap()
            .copy_to(&dest, true)
            .unwrap();
        println!(
            "{}: {} bytes",
            file.display(),
            std::fs::metadata(&file).unwrap().len()
        );
    }
}

const FIXTURES: [&str; 5] = ["plain", "dupsort", "integer", "composite", "migrated"];

// ---- the checks ----------------------------------------------------------------------------

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1")
}

/// A copy of fixture `set/name` in a temp dir (opening writes the lock file, and a read-write
/// open may rewrite the schema record).
fn copy_of(set: &str, name: &str) -> tempfile::TempDir {
    let from = fixtures_dir().join(set).join(name).join("mdbx.dat");
    assert!(
        from.is_file(),
        "missing fixture {}: run scripts/format-fixtures.sh",
        from.display()
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&from, dir.path().join("mdbx.dat")).unwrap();
    dir
}

/// Every entry of `T`, compared with `expected` (both sorted: dupsort values come back in the
/// order of their encoded bytes).
fn check_table<T, S>(db: &tabula::Db<S>, mut expected: Vec<(T::Key, T::Value)>)
where
    T: Table,
    T::Key: Debug,
    T::Value: Debug,
    S: Schema + Contains<T>,
{
    let tx = db.read().unwrap();
    let mut found: Vec<(T::Key, T::Value)> = tx.iter::<T>().map(|e| e.unwrap()).collect();
    assert_eq!(
        tx.len::<T>().unwrap(),
        expected.len() as u64,
        "entries of `{}`",
        T::NAME
    );
    let order = |rows: &mut Vec<(T::Key, T::Value)>| {
        rows.sort_by_cached_key(|row| format!("{row:?}"));
    };
    order(&mut found);
    order(&mut expected);
    assert_eq!(
        format!("{found:?}"),
        format!("{expected:?}"),
        "table `{}`",
        T::NAME
    );
}

/// Opens a copy of `set/name` read-only (nothing rewritten), then read-write, with schema `S`
/// and `migrations`, and runs `check` on both; then checks that the schema-less reader decodes
/// every key and value of every table.
fn check_fixture<S: Schema>(
    set: &str,
    name: &str,
    migrations: &Migrations,
    check: impl Fn(&tabula::Db<S>),
) {
    let dir = copy_of(set, name);
    let (db, report) = tabula::open_with::<S>(dir.path(), options().read_only(true), migrations)
        .unwrap_or_else(|e| panic!("{set}/{name} read-only: {e}"));
    assert!(
        report.applied.is_empty() && report.created.is_empty(),
        "{report:?}"
    );
    check(&db);
    drop(db);
    let plan = tabula::plan::<S>(dir.path(), migrations).unwrap();
    assert!(
        plan.pending.is_empty() && plan.create.is_empty() && plan.problems.is_empty(),
        "{set}/{name}: {plan}"
    );
    let (db, report) = tabula::open_with::<S>(dir.path(), options(), migrations)
        .unwrap_or_else(|e| panic!("{set}/{name}: {e}"));
    assert_eq!(report.verified.len(), S::TABLES.len(), "{report:?}");
    check(&db);
    drop(db);

    let untyped = UntypedDb::open(dir.path()).unwrap();
    let mut tx = untyped.read().unwrap();
    for info in S::TABLES {
        let table = tx.table(info.name).unwrap().expect("a table of the file");
        assert!(table.key_shape().is_some(), "{}", info.name);
        let values = table
            .value_shape()
            .cloned()
            .expect("a recorded value shape");
        let keys = table.key_shape().cloned().unwrap();
        let (mut n, mut problem) = (0, None);
        tx.walk(&table, None, None, false, |k, v| {
            problem = match (keys.decode(k), values.decode(v)) {
                (Ok(_), Ok(_)) => None,
                (Err(e), _) => Some(format!("key: {e}")),
                (_, Err(e)) => Some(format!("value: {e}")),
            };
            n += 1;
            problem.is_none()
        })
        .unwrap();
        assert_eq!(problem, None, "{set}/{name} `{}`", info.name);
        assert!(n > 0, "{}", info.name);
    }
}

fn check_plain(set: &str) {
    use read::*;
    check_fixture::<read_schemas::Plain>(set, "plain", &Migrations::new(), |db| {
        check_table::<Accounts, _>(db, accounts());
        check_table::<Notes, _>(db, notes());
        check_table::<Blobs, _>(db, blobs());
        check_table::<Headers, _>(db, headers());
    });
}

/// The `dupsort` sets written before dup values were stored in their order (`spelled/`, by
/// 00350fa) hold bincode dup values: this release refuses them with the step to add, and opens
/// them with it (the values re-encoded, every entry read back). `structural/` is written by this
/// release, in the order-preserving encoding, and opens as it is.
fn check_dupsort(set: &str) {
    use read::*;
    if set == "structural" {
        check_fixture::<read_schemas::Dupsort>(set, "dupsort", &Migrations::new(), |db| {
            check_table::<Topics, _>(db, topics());
            check_table::<Logs, _>(db, logs());
        });
        return;
    }
    let dir = copy_of(set, "dupsort");
    let refused = tabula::open::<read_schemas::Dupsort>(dir.path(), options()).unwrap_err();
    let message = refused.to_string();
    assert!(
        matches!(
            refused,
            tabula::Error::SchemaMismatch {
                what: "dup value encoding",
                ..
            }
        ) && message.contains("reencode_dups"),
        "{set}/dupsort: {message}"
    );
    let reencode = Migrations::new().step(2, "reencode-dups", |m| {
        m.reencode_dups::<Topics>();
        m.reencode_dups::<Logs>();
    });
    let (db, report) = tabula::open_with::<read_schemas::Dupsort>(dir.path(), options(), &reencode)
        .unwrap_or_else(|e| panic!("{set}/dupsort with the re-encode step: {e}"));
    assert_eq!(report.applied, [(2, "reencode-dups")]);
    check_table::<Topics, _>(&db, topics());
    check_table::<Logs, _>(&db, logs());
    // Now in their order: each key's values come back sorted.
    let tx = db.read().unwrap();
    for (k, _) in topics() {
        let values: Vec<u32> = tx.dups::<Topics>(&k).values().map(|v| v.unwrap()).collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{k}: {values:?}");
    }
}

fn check_integer(set: &str) {
    use read::*;
    check_fixture::<read_schemas::Integer>(set, "integer", &Migrations::new(), |db| {
        check_table::<Heights, _>(db, heights());
        check_table::<Numbers, _>(db, numbers());
    });
}

fn check_composite(set: &str) {
    use read::*;
    check_fixture::<read_schemas::Composite>(set, "composite", &Migrations::new(), |db| {
        check_table::<Slots, _>(db, slots());
        check_table::<Pairs, _>(db, pairs());
        check_table::<Maybe, _>(db, maybe());
        check_table::<Signed, _>(db, signed());
    });
}

fn check_migrated(set: &str) {
    use read::*;
    check_fixture::<read_schemas::Migrated>(set, "migrated", &migrations!(read), |db| {
        assert_eq!(db.read().unwrap().len::<Wallets>().unwrap(), 10);
        check_table::<Wallets, _>(db, wallets());
        check_table::<Audit, _>(db, audit());
    });
}

fn spelled_plain_opens_and_reads_back() {
    check_plain("spelled");
}
fn spelled_dupsort_opens_and_reads_back() {
    check_dupsort("spelled");
}
fn spelled_integer_opens_and_reads_back() {
    check_integer("spelled");
}
fn spelled_composite_opens_and_reads_back() {
    check_composite("spelled");
}
fn spelled_migrated_opens_and_reads_back() {
    check_migrated("spelled");
}
fn structural_plain_opens_and_reads_back() {
    check_plain("structural");
}
fn structural_dupsort_opens_and_reads_back() {
    check_dupsort("structural");
}
fn structural_integer_opens_and_reads_back() {
    check_integer("structural");
}
fn structural_composite_opens_and_reads_back() {
    check_composite("structural");
}
fn structural_migrated_opens_and_reads_back() {
    check_migrated("structural");
}

/// The fixtures stay small (a few pages each), so they can be committed.
fn fixtures_are_small() {
    for set in ["spelled", "structural"] {
        for name in FIXTURES {
            let file = fixtures_dir().join(set).join(name).join("mdbx.dat");
            let len = std::fs::metadata(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
                .len();
            assert!(len <= 128 * 1024, "{}: {len} bytes", file.display());
        }
    }
}

fn main() {
    if let Some(out) = std::env::var_os("TABULA_WRITE_FORMAT_FIXTURES") {
        write_all(Path::new(&out));
        return;
    }
    run_tests!(
        spelled_plain_opens_and_reads_back,
        spelled_dupsort_opens_and_reads_back,
        spelled_integer_opens_and_reads_back,
        spelled_composite_opens_and_reads_back,
        spelled_migrated_opens_and_reads_back,
        structural_plain_opens_and_reads_back,
        structural_dupsort_opens_and_reads_back,
        structural_integer_opens_and_reads_back,
        structural_composite_opens_and_reads_back,
        structural_migrated_opens_and_reads_back,
        fixtures_are_small,
    );
}
