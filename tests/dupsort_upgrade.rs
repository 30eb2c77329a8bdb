//! A database written by Tabula 0.1.0 (`tests/fixtures/dupsort-0.1.0`), whose dupsort tables
//! store bincode values in bincode's byte order: the startup step refuses each such table with
//! the migration step to add, and that step re-encodes it into the values' order.

use tabula::{Error, Migrations, Options, Schema, Table};

#[derive(Table)]
#[table(name = "numbers", key = u64, value = u64, dupsort)]
struct Numbers;

#[derive(Table)]
#[table(name = "words", key = u64, value = String, dupsort)]
struct Words;

/// Was `value = (u64, u64), dupsort`: now (slot, value) pairs sorted by slot.
#[derive(Table)]
#[table(name = "storage", key = u64, subkey = u64, value = u64, dupsort)]
struct Storage;

#[derive(Table)]
#[table(name = "plain", key = u64, value = String)]
struct Plain;

#[derive(Schema)]
struct Current(Numbers, Words, Storage, Plain);

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/dupsort-0.1.0/mdbx.dat"
    );
    std::fs::copy(from, dir.path().join("mdbx.dat")).unwrap();
    dir
}

fn options() -> Options {
    Options::new().max_size(1 << 30)
}

#[test]
fn bincode_dup_values_are_refused_with_the_step_that_reencodes_them() {
    let dir = fixture();
    let record = || {
        let db = tabula::untyped::UntypedDb::open(dir.path()).unwrap();
        db.record().cloned().unwrap()
    };
    let before = record();
    let err = tabula::open::<Current>(dir.path(), options()).unwrap_err();
    let Error::SchemaMismatch {
        table,
        what,
        stored,
        declared,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!((table.as_str(), *what), ("numbers", "dup value encoding"));
    assert_eq!(
        (stored.as_str(), declared.as_str()),
        ("bincode<u64>", "ordered<u64>")
    );
    let message = err.to_string();
    for part in [
        "Tabula 0.1.0",
        "bincode's byte order",
        "m.reencode_dups::<Numbers>()",
    ] {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
    // Nothing was recorded: the schema record is as Tabula 0.1.0 left it.
    assert!(
        record() == before,
        "the refused open changed the schema record"
    );

    // A subkey table written as bincode tuples gets the same refusal and advice.
    #[derive(Schema)]
    struct StorageOnly(Storage);
    let err = tabula::open::<StorageOnly>(dir.path(), options()).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("table `storage`"), "{message}");
    assert!(message.contains("reencode_dups::<Storage>"), "{message}");
    assert!(
        message.contains("m.transform::<Storage, OldValue>"),
        "{message}"
    );
}

#[test]
fn the_reencoding_step_puts_every_value_in_its_order() {
    let dir = fixture();
    let migrations = Migrations::new().step(2, "reencode-dups", |m| {
        m.reencode_dups::<Numbers>();
        m.reencode_dups::<Words>();
        m.reencode_dups::<Storage>();
    });
    let (db, report) = tabula::open_with::<Current>(dir.path(), options(), &migrations).unwrap();
    assert_eq!(report.applied, [(2, "reencode-dups")]);
    let tx = db.read().unwrap();
    for k in 1..=3u64 {
        let mut want: Vec<u64> = [300u64, 5, 256, 255, 70000, 251, 250, 1 << 40]
            .map(|n| n + k)
            .to_vec();
        want.sort();
        let got: Vec<u64> = tx
            .dups::<Numbers>(&k)
            .values()
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, want, "numbers {k}");
        assert_eq!(
            tx.seek_dup::<Numbers>(&k, &(256 + k)).unwrap(),
            Some(256 + k)
        );

        let mut words: Vec<String> = ["pear", "fig", "apple", "banana", "kiwi"]
            .map(|w| format!("{w}{k}"))
            .to_vec();
        words.sort();
        let got: Vec<String> = tx.dups::<Words>(&k).values().map(Result::unwrap).collect();
        assert_eq!(got, words, "words {k}");

        let slots: Vec<(u64, u64)> = tx
            .dups::<Storage>(&k)
            .values()
            .map(Result::unwrap)
            .collect();
        let want: Vec<(u64, u64)> = [5u64, 255, 256, 300, 70000]
            .map(|slot| (slot, slot * 10 + k))
            .to_vec();
        assert_eq!(slots, want, "storage {k}");
        assert_eq!(
            tx.get_dup::<Storage>(&k, &256).unwrap(),
            Some((256, 2560 + k))
        );
        assert_eq!(tx.get::<Plain>(&k).unwrap(), Some(format!("plain {k}")));
    }
    assert!(db.check().unwrap().is_ok());
    drop(tx);
    drop(db);
    // Re-encoded once: the next open has nothing to do.
    let (_db, report) = tabula::open_with::<Current>(dir.path(), options(), &migrations).unwrap();
    assert!(report.applied.is_empty());
}
