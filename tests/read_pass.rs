//! The startup's read pass: a read-write open that finds nothing to change runs in a read
//! transaction and takes no write transaction, so it opens while another process holds the
//! write lock; an open that must change something (a new table, a migration step) still does
//! it, in the write transaction; read-only opens work as before.
//!
//! The file has its own `main` (`harness = false`, `tests/support/harness.rs`): the child
//! process that holds the write lock is this binary run again with `TABULA_RP_CHILD=<dir>`.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tabula::{Error, Migrations, Options, Schema, Table};

#[derive(Table)]
#[table(name = "notes", key = u64, value = String)]
struct Notes;

#[derive(Table)]
#[table(name = "tags", key = u64, value = u32)]
struct Tags;

#[derive(Schema)]
struct One(Notes);

#[derive(Schema)]
struct Two(Notes, Tags);

const CHILD_VAR: &str = "TABULA_RP_CHILD";
const HOLDING: &str = "holding";

fn main() {
    if let Some(dir) = std::env::var_os(CHILD_VAR) {
        hold_write_lock(Path::new(&dir));
        return;
    }
    run_tests!(
        an_unchanged_open_takes_no_write_transaction,
        a_new_table_is_created_after_the_read_pass,
        a_pending_step_still_runs,
        a_read_only_open_still_works,
        a_hook_gets_the_record_s_tables_in_upgrade_only,
    );
}

/// Page checks on for the whole open (`Options::validation`): the startup then never switches
/// them, which libmdbx does under the write lock outside a write transaction.
fn options() -> Options {
    Options::new().validation(true)
}

/// The child: opens the database, begins a write transaction (libmdbx's write lock, shared by
/// every process on the file), says so, and holds it until its standard input closes.
fn hold_write_lock(dir: &Path) {
    let db = tabula::open::<One>(dir, options()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Notes>(&2, &"from the child".to_string()).unwrap();
    println!("{HOLDING}");
    std::io::stdout().flush().unwrap();
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    tx.commit().unwrap();
}

/// A child process holding the write lock of the database in `dir`, once it says it does.
fn lock_holder(dir: &Path) -> Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD_VAR, dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next().expect("the child exited").unwrap();
    assert_eq!(line, HOLDING);
    child
}

fn an_unchanged_open_takes_no_write_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<One>(dir.path(), options()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Notes>(&1, &"kept".to_string()).unwrap();
    tx.commit().unwrap();
    drop(db);

    let mut child = lock_holder(dir.path());
    // The open runs on another thread: an open that took the write transaction would wait
    // for the child, which holds the lock until this test lets it go.
    let (sent, opened) = mpsc::channel();
    let path = dir.path().to_path_buf();
    let opener = std::thread::spawn(move || {
        let result = tabula::open_with_report::<One>(&path, options());
        let _ = sent.send(result.map(|(db, report)| {
            let note = db.read().unwrap().get::<Notes>(&1).unwrap();
            (report, note)
        }));
    });
    let result = opened.recv_timeout(Duration::from_secs(20));
    drop(child.stdin.take()); // the child commits and exits
    assert!(child.wait().unwrap().success());
    opener.join().unwrap();
    let (report, note) = result
        .expect("the open waited for the other process's write transaction")
        .unwrap();
    assert_eq!(report.verified, ["notes"]);
    assert!(
        report.created.is_empty() && !report.record_written,
        "{report:?}"
    );
    assert_eq!(note.as_deref(), Some("kept"));

    // The child's commit landed after the open: the file is whole and the database usable.
    let db = tabula::open::<One>(dir.path(), options()).unwrap();
    let tx = db.read().unwrap();
    assert_eq!(
        tx.get::<Notes>(&2).unwrap().as_deref(),
        Some("from the child")
    );
}

fn a_new_table_is_created_after_the_read_pass() {
    let dir = tempfile::tempdir().unwrap();
    drop(tabula::open::<One>(dir.path(), Options::new()).unwrap());
    let (db, report) = tabula::open_with_report::<Two>(dir.path(), Options::new()).unwrap();
    assert_eq!(report.created, ["tags"]);
    assert_eq!(report.verified, ["notes"]);
    assert!(report.record_written);
    let mut tx = db.write().unwrap();
    tx.put::<Tags>(&1, &7).unwrap();
    tx.commit().unwrap();
    drop(db);
    // And the next open, unchanged, finds it recorded.
    let (_, report) = tabula::open_with_report::<Two>(dir.path(), Options::new()).unwrap();
    assert_eq!(report.verified, ["notes", "tags"]);
    assert!(!report.record_written, "{report:?}");
}

fn a_pending_step_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<One>(dir.path(), Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Notes>(&1, &"one".to_string()).unwrap();
    tx.commit().unwrap();
    drop(db);
    let steps = || {
        Migrations::new().step(2, "add-tags", |m| {
            m.create_table::<Tags>();
        })
    };
    let (db, report) = tabula::open_with::<Two>(dir.path(), Options::new(), &steps()).unwrap();
    assert_eq!(report.applied, [(2, "add-tags")]);
    assert_eq!(report.version, 2);
    assert!(report.record_written);
    assert_eq!(
        db.read().unwrap().get::<Notes>(&1).unwrap().as_deref(),
        Some("one")
    );
    drop(db);
    // Applied: the next open has no work and changes nothing.
    let (_, report) = tabula::open_with::<Two>(dir.path(), Options::new(), &steps()).unwrap();
    assert!(
        report.applied.is_empty() && !report.record_written,
        "{report:?}"
    );
    assert_eq!(report.version, 2);
    // A program without the step refuses the migrated database, read pass or not.
    match tabula::open::<Two>(dir.path(), Options::new()) {
        Err(Error::Migration { version: 2, .. }) => {}
        other => panic!("{:?}", other.map(|_| ())),
    }
}

fn a_read_only_open_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<One>(dir.path(), Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Notes>(&1, &"one".to_string()).unwrap();
    tx.commit().unwrap();
    drop(db);
    let read_only = || Options::new().read_only(true);
    let (db, report) = tabula::open_with_report::<One>(dir.path(), read_only()).unwrap();
    assert_eq!(report.verified, ["notes"]);
    assert_eq!(
        db.read().unwrap().get::<Notes>(&1).unwrap().as_deref(),
        Some("one")
    );
    drop(db);
    match tabula::open::<Two>(dir.path(), read_only()) {
        Err(Error::TableMissing { table, .. }) => assert_eq!(table, "tags"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// `Upgrade::has_work` gets the stored record without its tables (an unchanged open does not
/// build them), whether or not they are the schema's; `upgrade`, in the write pass, gets them
/// all.
fn a_hook_gets_the_record_s_tables_in_upgrade_only() {
    use std::sync::Mutex;
    use tabula_core::record::SchemaRecord;
    use tabula_core::startup::{self, Bootstrap, Upgrade};

    /// Notes the tables each call got, and says it has work when `work`.
    struct Noting {
        work: bool,
        seen: Mutex<Vec<(&'static str, Vec<String>)>>,
    }
    impl Upgrade for Noting {
        fn version(&self) -> u32 {
            1
        }
        fn upgrade(
            &self,
            _: &mut Bootstrap,
            record: &mut SchemaRecord,
            _: bool,
        ) -> tabula::Result<Vec<(u32, &'static str)>> {
            let tables = record.tables.keys().cloned().collect();
            self.seen.lock().unwrap().push(("upgrade", tables));
            Ok(Vec::new())
        }
        fn has_work(&self, _: &mut Bootstrap, record: &SchemaRecord) -> bool {
            let tables = record.tables.keys().cloned().collect();
            self.seen.lock().unwrap().push(("has_work", tables));
            self.work
        }
    }
    let open = |work| {
        let dir = tempfile::tempdir().unwrap();
        drop(tabula::open::<Two>(dir.path(), Options::new()).unwrap());
        let hook = Noting {
            work,
            seen: Mutex::new(Vec::new()),
        };
        // The record holds the schema's tables (recognised by its bytes), then one more.
        let (_, report) = startup::open::<Two>(dir.path(), &Options::new(), &hook).unwrap();
        assert!(!report.record_written, "{report:?}");
        let (_, report) = startup::open::<One>(dir.path(), &Options::new(), &hook).unwrap();
        assert!(!report.record_written, "{report:?}");
        hook.seen.into_inner().unwrap()
    };
    let both = || vec!["notes".to_string(), "tags".to_string()];
    assert_eq!(
        open(true),
        [
            ("has_work", vec![]),
            ("upgrade", both()),
            ("has_work", vec![]),
            ("upgrade", both()),
        ]
    );
    assert_eq!(open(false), [("has_work", vec![]), ("has_work", vec![])]);
}
