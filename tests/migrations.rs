//! Schema migrations at startup: each step kind, refusals, idempotence and plans. Steps killed
//! midway and resumed are tested in `tests/crash/migration.rs`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tabula::{Error, Key, Migrations, Options, Schema, Table};

// ---- version 1 -------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccountV1 {
    pub balance: u64,
}

#[derive(Table)]
#[table(name = "balances", key = u64, value = AccountV1)]
struct BalancesV1;

#[derive(Table)]
#[table(name = "legacy", key = u32, value = String)]
struct Legacy;

#[derive(Schema)]
struct V1(BalancesV1, Legacy);

// ---- version 2: rename + add a field (transform), drop `legacy`, add `audit` ------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Account {
    balance: u64,
    nonce: u32,
}

#[derive(Table)]
#[table(name = "accounts", key = u64, value = Account)]
struct Accounts;

#[derive(Table)]
#[table(name = "audit", key = u64, value = String)]
struct Audit;

#[derive(Schema)]
struct V2(Accounts, Audit);

fn v2_migrations() -> Migrations {
    Migrations::new().step(2, "accounts-with-nonce", |m| {
        m.rename_table::<Accounts>("balances");
        m.transform::<Accounts, AccountV1>(|old| Account {
            balance: old.balance,
            nonce: (old.balance % 7) as u32,
        });
        m.drop_table("legacy");
    })
}

fn expected_account(n: u64) -> Account {
    let balance = n * 10;
    Account {
        balance,
        nonce: (balance % 7) as u32,
    }
}

fn write_v1(path: &Path, n: u64) {
    let db = tabula::open::<V1>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    let mut app = tx.appender::<BalancesV1>().unwrap();
    for i in 0..n {
        app.append(&i, &AccountV1 { balance: i * 10 }).unwrap();
    }
    drop(app);
    tx.put::<Legacy>(&1, &"old".to_string()).unwrap();
    tx.commit().unwrap();
}

fn verify_v2(db: &tabula::Db<V2>, n: u64) {
    let tx = db.read().unwrap();
    assert_eq!(tx.len::<Accounts>().unwrap(), n);
    let mut expected = 0u64;
    for entry in tx.iter::<Accounts>() {
        let (k, v) = entry.unwrap();
        assert_eq!(k, expected, "keys are complete and in order");
        assert_eq!(v, expected_account(k));
        expected += 1;
    }
    assert_eq!(expected, n);
}

#[test]
fn upgrade_renames_transforms_drops_and_creates() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 1000);
    let (db, report) =
        tabula::open_with::<V2>(dir.path(), Options::new(), &v2_migrations()).unwrap();
    assert_eq!(report.applied, vec![(2, "accounts-with-nonce")]);
    assert_eq!(report.version, 2);
    assert_eq!(report.created, vec!["audit"]);
    verify_v2(&db, 1000);
    drop(db);

    let record = tabula::untyped::UntypedDb::open(dir.path())
        .unwrap()
        .record()
        .cloned()
        .unwrap();
    assert_eq!(record.version, 2);
    assert_eq!(record.applied.len(), 1);
    assert!(
        !record.tables.contains_key("legacy"),
        "{:?}",
        record.tables.keys()
    );
    assert!(!record.tables.contains_key("balances"));
    assert_eq!(record.tables["accounts"].value, "bincode<Account>");

    // Idempotent: reopening applies nothing and changes nothing.
    let (db, report) =
        tabula::open_with::<V2>(dir.path(), Options::new(), &v2_migrations()).unwrap();
    assert!(report.applied.is_empty());
    assert!(!report.record_written);
    verify_v2(&db, 1000);
}

#[test]
fn new_database_starts_at_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let (_db, report) =
        tabula::open_with::<V2>(dir.path(), Options::new(), &v2_migrations()).unwrap();
    assert!(report.applied.is_empty());
    assert_eq!(report.version, 2);
    assert_eq!(report.created, vec!["accounts", "audit"]);
}

#[test]
fn newer_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 3);
    drop(tabula::open_with::<V2>(dir.path(), Options::new(), &v2_migrations()).unwrap());
    // An older binary (no steps, version 1) must not open a version-2 database.
    let err = tabula::open::<V2>(dir.path(), Options::new()).unwrap_err();
    assert!(matches!(err, Error::Migration { version: 2, .. }), "{err}");
    assert!(err.to_string().contains("newer release"), "{err}");
}

/// A tool or sidecar that does not carry the writer's steps reads a newer file read-only, as
/// long as every table it declares matches the file; a table that does not is refused by name.
#[test]
fn newer_database_opens_read_only_where_the_declared_tables_match() {
    #[derive(Schema)]
    struct AuditOnly(Audit);
    #[derive(Schema)]
    struct OldBalances(BalancesV1);

    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 3);
    {
        let (db, _) =
            tabula::open_with::<V2>(dir.path(), Options::new(), &v2_migrations()).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Audit>(&7, &"seven".to_string()).unwrap();
        tx.commit().unwrap();
    }
    let read_only = || Options::new().read_only(true);
    // No steps at all, read-only: the declared tables match, so it opens and reads.
    let db = tabula::open::<V2>(dir.path(), read_only()).unwrap();
    verify_v2(&db, 3);
    drop(db);
    let db = tabula::open::<AuditOnly>(dir.path(), read_only()).unwrap();
    assert_eq!(
        db.read().unwrap().get::<Audit>(&7).unwrap().as_deref(),
        Some("seven")
    );
    drop(db);
    // A table the file no longer has (renamed by the step the reader lacks) is named.
    let err = tabula::open::<OldBalances>(dir.path(), read_only()).unwrap_err();
    assert!(err.to_string().contains("balances"), "{err}");
    // Read-write is still refused: a writer must carry every step.
    let err = tabula::open::<AuditOnly>(dir.path(), Options::new()).unwrap_err();
    assert!(matches!(err, Error::Migration { version: 2, .. }), "{err}");
    assert!(err.to_string().contains("read_only"), "{err}");
}

/// Version 1 is the initial schema: a step numbered 1 is a declaration mistake, and the panic
/// says what the first step's number is.
#[test]
fn a_step_numbered_one_says_version_one_is_the_initial_schema() {
    let panic = std::panic::catch_unwind(|| Migrations::new().step(1, "first", |_| {}))
        .expect_err("a step 1 was accepted");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("version 1 is the initial"), "{message}");
    assert!(message.contains("the first step is version 2"), "{message}");
    let panic =
        std::panic::catch_unwind(|| Migrations::new().step(3, "b", |_| {}).step(2, "a", |_| {}))
            .expect_err("decreasing versions were accepted");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("(`b`) has version 3"), "{message}");
}

#[test]
fn changed_step_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 3);
    drop(tabula::open_with::<V2>(dir.path(), Options::new(), &v2_migrations()).unwrap());

    let renamed = Migrations::new().step(2, "something-else", |m| {
        m.rename_table::<Accounts>("balances");
    });
    let err = tabula::open_with::<V2>(dir.path(), Options::new(), &renamed).unwrap_err();
    assert!(err.to_string().contains("`something-else`"), "{err}");

    let changed = Migrations::new().step(2, "accounts-with-nonce", |m| {
        m.rename_table::<Accounts>("balances");
        m.transform::<Accounts, AccountV1>(|old| Account {
            balance: old.balance,
            nonce: 0,
        });
        // `legacy` no longer dropped: a different declaration.
    });
    let err = tabula::open_with::<V2>(dir.path(), Options::new(), &changed).unwrap_err();
    assert!(matches!(err, Error::Migration { version: 2, .. }), "{err}");
    assert!(err.to_string().contains("checksum"), "{err}");
}

// A value type that gained a field under the same name and the same table: no version bump.
mod changed_shape {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct AccountV1 {
        pub balance: u64,
        pub frozen: bool,
    }

    #[derive(Table)]
    #[table(name = "balances", key = u64, value = AccountV1)]
    pub struct BalancesV1;

    #[derive(Schema)]
    pub struct V1b(BalancesV1);
}

#[test]
fn missing_step_is_detected_from_the_value_shape() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 3);
    // Same type name, same table, one more field, no step.
    let err = tabula::open::<changed_shape::V1b>(dir.path(), Options::new()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::SchemaMismatch {
                what: "value structure",
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("table `balances`"), "{msg}");
    assert!(
        msg.contains("frozen"),
        "the declared shape names the new field: {msg}"
    );
    assert!(
        msg.contains("m.transform::<"),
        "the advice names the step to add: {msg}"
    );
    // The plan reports it too, without writing.
    let plan = tabula::plan::<changed_shape::V1b>(dir.path(), &Migrations::new()).unwrap();
    assert_eq!(plan.problems.len(), 1, "{plan}");
    // A transform step makes it open, with the data converted.
    let m = Migrations::new().step(2, "add-frozen", |m| {
        m.transform::<changed_shape::BalancesV1, AccountV1>(|old| changed_shape::AccountV1 {
            balance: old.balance,
            frozen: false,
        })
    });
    let (db, _) = tabula::open_with::<changed_shape::V1b>(dir.path(), Options::new(), &m).unwrap();
    let v = db
        .read()
        .unwrap()
        .get::<changed_shape::BalancesV1>(&2)
        .unwrap()
        .unwrap();
    assert_eq!(
        v,
        changed_shape::AccountV1 {
            balance: 20,
            frozen: false
        }
    );
}

mod dup_flags {
    use super::*;

    #[derive(Table)]
    #[table(name = "balances", key = u64, value = u64, dupsort)]
    pub struct BalancesDup;

    #[derive(Schema)]
    pub struct V1d(BalancesDup);
}

#[test]
fn flags_changed_on_a_non_empty_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 3);
    let err = tabula::open::<dup_flags::V1d>(dir.path(), Options::new()).unwrap_err();
    assert!(
        matches!(err, Error::SchemaMismatch { what: "flags", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("rewrites the table"), "{err}");
}

/// The advice depends on the table's entries, which the startup counts only for a table whose
/// flags changed: an empty one is dropped and created again by a step, read-write and
/// read-only alike.
#[test]
fn flags_changed_on_an_empty_table_advise_dropping_it() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 0);
    for read_only in [false, true] {
        let options = Options::new().read_only(read_only);
        let err = tabula::open::<dup_flags::V1d>(dir.path(), options).unwrap_err();
        assert!(
            matches!(err, Error::SchemaMismatch { what: "flags", .. }),
            "{err}"
        );
        assert!(
            err.to_string().contains("the table is empty")
                && err.to_string().contains("recreate-balances"),
            "{err}"
        );
    }
}

// ---- rekey, copy, run ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct ByOwner {
    owner: String,
    id: u64,
}

#[derive(Table)]
#[table(name = "balances", key = ByOwner, value = AccountV1)]
struct BalancesByOwner;

#[derive(Table)]
#[table(name = "backup", key = ByOwner, value = AccountV1)]
struct Backup;

#[derive(Table)]
#[table(name = "stats", key = String, value = u64)]
struct Stats;

#[derive(Schema)]
struct V3(BalancesByOwner, Backup, Stats);

#[test]
fn rekey_copy_and_run() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 10);
    let m = Migrations::new()
        .step(2, "rekey-by-owner", |m| {
            m.drop_table("legacy");
            m.rekey::<BalancesByOwner, u64>(|id| ByOwner {
                owner: if id % 2 == 0 { "even" } else { "odd" }.to_string(),
                id,
            });
        })
        .step(3, "backup-and-count", |m| {
            m.create_table::<Stats>();
            m.copy::<BalancesByOwner, Backup>();
            m.run("count balances", |tx| {
                let mut total = 0;
                tx.for_each::<BalancesByOwner>(|_, v| {
                    total += v.balance;
                    Ok(())
                })?;
                tx.put::<Stats>(&"total".to_string(), &total)
            });
        });
    let (db, report) = tabula::open_with::<V3>(dir.path(), Options::new(), &m).unwrap();
    assert_eq!(
        report.applied,
        vec![(2, "rekey-by-owner"), (3, "backup-and-count")]
    );
    let tx = db.read().unwrap();
    let even: Vec<u64> = tx
        .prefix::<BalancesByOwner>(&"even".to_string())
        .keys()
        .map(|k| k.unwrap().id)
        .collect();
    assert_eq!(even, vec![0, 2, 4, 6, 8]);
    assert_eq!(tx.len::<Backup>().unwrap(), 10);
    let key = ByOwner {
        owner: "odd".into(),
        id: 3,
    };
    assert_eq!(
        tx.get::<Backup>(&key).unwrap(),
        Some(AccountV1 { balance: 30 })
    );
    assert_eq!(
        tx.get::<Stats>("total").unwrap(),
        Some((0..10).map(|i| i * 10).sum())
    );
}

#[test]
fn rekey_that_is_not_one_to_one_is_refused_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 4);
    let m = Migrations::new().step(2, "collapse", |m| {
        m.drop_table("legacy");
        m.rekey::<BalancesByOwner, u64>(|_| ByOwner {
            owner: "same".into(),
            id: 0,
        });
    });
    let err = tabula::open_with::<V3>(dir.path(), Options::new(), &m).unwrap_err();
    assert!(err.to_string().contains("one-to-one"), "{err}");
    // The old data is intact and the old schema still opens.
    let db = tabula::open::<V1>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().len::<BalancesV1>().unwrap(), 4);
}

#[test]
fn plan_lists_the_work_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let plan = tabula::plan::<V2>(dir.path().join("none"), &v2_migrations()).unwrap();
    assert!(!plan.exists);
    assert_eq!(plan.create, vec!["accounts", "audit"]);

    write_v1(dir.path(), 5);
    let before = std::fs::read(dir.path().join("mdbx.dat")).unwrap();
    let plan = tabula::plan::<V2>(dir.path(), &v2_migrations()).unwrap();
    assert_eq!(plan.version, 1);
    assert_eq!(plan.target, 2);
    assert_eq!(plan.pending.len(), 1);
    assert_eq!(
        plan.pending[0].operations,
        vec![
            "rename table balances to accounts",
            "transform values of accounts",
            "drop table legacy"
        ]
    );
    assert_eq!(plan.create, vec!["audit"]);
    assert_eq!(plan.drop, vec!["legacy"]);
    assert!(plan.problems.is_empty(), "{plan}");
    let text = plan.to_string();
    assert!(text.contains("step 2 `accounts-with-nonce`"), "{text}");
    assert_eq!(
        std::fs::read(dir.path().join("mdbx.dat")).unwrap(),
        before,
        "plan wrote nothing"
    );
}

#[test]
fn progress_is_reported_per_batch() {
    let dir = tempfile::tempdir().unwrap();
    write_v1(dir.path(), 2500);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let m = v2_migrations()
        .batch_size(1000)
        .on_progress(move |p| sink.lock().unwrap().push((p.done, p.total)));
    tabula::open_with::<V2>(dir.path(), Options::new(), &m).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(1000, 2500), (2000, 2500), (2500, 2500)]
    );
}
