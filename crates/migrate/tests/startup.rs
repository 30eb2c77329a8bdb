//! The startup step against real environments in temp dirs. This crate's tests name core
//! directly: the derives write `#[tabula(crate = tabula_core)]`; the facade's tests use
//! `::tabula`.
//!
//! Tests cap `max_size` at 1 GiB: under valgrind (`scripts/valgrind.sh`) the default 1 TiB
//! of address space cannot be reserved.

use tabula_core::{Error, Options};
use tabula_derive::{Schema, Table};

#[derive(Table)]
#[tabula(crate = tabula_core)]
#[table(name = "blocks", key = u64, value = (u32, u32))]
struct Blocks;

#[derive(Table)]
#[tabula(crate = tabula_core)]
#[table(name = "blobs", key = u32, value = Vec<u8>, codec = tabula_core::Raw, integer_key)]
struct Blobs;

#[derive(Table)]
#[tabula(crate = tabula_core)]
#[table(name = "tags", key = u64, value = Vec<u8>, dupsort)]
struct Tags;

// Same name as Blocks, other flags / other value type.
#[derive(Table)]
#[tabula(crate = tabula_core)]
#[table(name = "blocks", key = u64, value = (u32, u32), dupsort)]
struct BlocksDup;

#[derive(Table)]
#[tabula(crate = tabula_core)]
#[table(name = "blocks", key = u64, value = (u64, u32))]
struct BlocksV2;

#[derive(Schema)]
#[tabula(crate = tabula_core)]
struct V1(Blocks, Blobs, Tags);

#[derive(Schema)]
#[tabula(crate = tabula_core)]
struct OnlyBlocks(Blocks);

#[derive(Schema)]
#[tabula(crate = tabula_core)]
struct DupBlocks(BlocksDup);

#[derive(Schema)]
#[tabula(crate = tabula_core)]
struct V2(BlocksV2);

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn creates_then_verifies_and_data_survives() {
    let d = dir();
    let (db, report) =
        tabula_migrate::open_with_report::<V1>(d.path(), Options::new().max_size(1 << 30)).unwrap();
    assert_eq!(report.created, vec!["blocks", "blobs", "tags"]);
    assert!(report.verified.is_empty());
    assert!(report.record_written);
    let mut tx = db.write().unwrap();
    tx.put::<Blocks>(&7, &(1, 2)).unwrap();
    tx.put::<Blobs>(&9, &vec![1, 2, 3]).unwrap();
    tx.put::<Tags>(&1, &b"b".to_vec()).unwrap();
    tx.put::<Tags>(&1, &b"a".to_vec()).unwrap();
    tx.commit().unwrap();
    drop(db);

    let (db, report) =
        tabula_migrate::open_with_report::<V1>(d.path(), Options::new().max_size(1 << 30)).unwrap();
    assert!(report.created.is_empty());
    assert_eq!(report.verified, vec!["blocks", "blobs", "tags"]);
    assert!(
        !report.record_written,
        "an unchanged schema is not rewritten"
    );
    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Blocks>(&7).unwrap(), Some((1, 2)));
    assert_eq!(tx.get::<Blobs>(&9).unwrap(), Some(vec![1, 2, 3]));
    let tags: Vec<_> = tx.dups::<Tags>(&1).map(|r| r.unwrap().1).collect();
    assert_eq!(tags, vec![b"a".to_vec(), b"b".to_vec()]);
    // libmdbx allows one open of a file per process: a second open is a clear error.
    let err = tabula_migrate::open::<V1>(d.path(), Options::new().max_size(1 << 30)).unwrap_err();
    assert!(err.to_string().contains("already open"), "{err}");
    drop(tx);
    drop(db);
    let record = tabula::untyped::UntypedDb::open(d.path())
        .unwrap()
        .record()
        .cloned()
        .unwrap();
    assert_eq!(record.tables["blocks"].value, "bincode<(u32, u32)>");
    assert_eq!(record.tables["blobs"].key, "u32 native-endian");
    assert!(record.tables["tags"].dupsort);
}

#[test]
fn flag_change_is_refused_naming_table_and_both_flags() {
    let d = dir();
    let db =
        tabula_migrate::open::<OnlyBlocks>(d.path(), Options::new().max_size(1 << 30)).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Blocks>(&1, &(1, 1)).unwrap();
    tx.commit().unwrap();
    drop(db);
    let err =
        tabula_migrate::open::<DupBlocks>(d.path(), Options::new().max_size(1 << 30)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, Error::SchemaMismatch { what: "flags", .. }),
        "{msg}"
    );
    assert!(msg.contains("table `blocks`"), "{msg}");
    assert!(msg.contains("stored flags is `none`"), "{msg}");
    assert!(msg.contains("declares `dupsort`"), "{msg}");
    // Refusal wrote nothing: the old schema still opens and the data is there.
    let db =
        tabula_migrate::open::<OnlyBlocks>(d.path(), Options::new().max_size(1 << 30)).unwrap();
    assert_eq!(db.read().unwrap().get::<Blocks>(&1).unwrap(), Some((1, 1)));
}

#[test]
fn value_encoding_change_is_refused() {
    let d = dir();
    drop(tabula_migrate::open::<OnlyBlocks>(d.path(), Options::new().max_size(1 << 30)).unwrap());
    let err = tabula_migrate::open::<V2>(d.path(), Options::new().max_size(1 << 30)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::SchemaMismatch {
                what: "value structure",
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("`[u32; 2]` became `(u64, u32)`")
            && msg.contains("m.transform::<BlocksV2, OldValue>"),
        "{msg}"
    );
}

#[test]
fn read_only_open_verifies_and_refuses_missing_tables() {
    let d = dir();
    drop(tabula_migrate::open::<OnlyBlocks>(d.path(), Options::new().max_size(1 << 30)).unwrap());
    let err =
        tabula_migrate::open::<V1>(d.path(), Options::new().max_size(1 << 30).read_only(true))
            .unwrap_err();
    assert!(
        matches!(&err, Error::TableMissing { table, .. } if table == "blobs"),
        "{err}"
    );
    let db = tabula_migrate::open::<OnlyBlocks>(
        d.path(),
        Options::new().max_size(1 << 30).read_only(true),
    )
    .unwrap();
    assert!(db.read().unwrap().get::<Blocks>(&1).unwrap().is_none());
    assert!(
        db.write().is_err(),
        "a read-only database refuses write transactions"
    );
}

#[test]
fn not_a_database_is_an_open_error() {
    let d = dir();
    std::fs::write(d.path().join("mdbx.dat"), vec![0x5a; 64 * 1024]).unwrap();
    let err = tabula_migrate::open::<V1>(d.path(), Options::new().max_size(1 << 30)).unwrap_err();
    assert!(matches!(err, Error::Open { .. }), "{err}");
    let err = tabula_migrate::open::<V1>(
        d.path().join("missing"),
        Options::new().max_size(1 << 30).read_only(true),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Open { .. }), "{err}");
}

// "blobs" declared with byte-compared keys, where the file holds it with integer keys.
#[derive(Table)]
#[tabula(crate = tabula_core)]
#[table(name = "blobs", key = u32, value = Vec<u8>, codec = tabula_core::Raw)]
struct BlobsBytes;

#[derive(Schema)]
#[tabula(crate = tabula_core)]
struct OnlyBlobsInt(Blobs);

#[derive(Schema)]
#[tabula(crate = tabula_core)]
struct OnlyBlobsBytes(BlobsBytes);

#[test]
fn integer_keyed_table_declared_byte_keyed_is_refused_and_left_intact() {
    // Byte-keyed tables are opened with Tabula's own key comparator; an integer-keyed table
    // must never get it (its keys do not compare as bytes). The open is refused on the flags,
    // and the table still reads correctly afterwards with its integer order.
    let d = dir();
    let opts = || Options::new().max_size(1 << 30);
    let db = tabula_migrate::open::<OnlyBlobsInt>(d.path(), opts()).unwrap();
    let mut tx = db.write().unwrap();
    for k in [1u32, 256, 65_536, 2, 300] {
        tx.put::<Blobs>(&k, &k.to_le_bytes().to_vec()).unwrap();
    }
    tx.commit().unwrap();
    drop(db);
    let err = tabula_migrate::open::<OnlyBlobsBytes>(d.path(), opts()).unwrap_err();
    assert!(
        matches!(err, Error::SchemaMismatch { what: "flags", .. }),
        "{err}"
    );
    let db = tabula_migrate::open::<OnlyBlobsInt>(d.path(), opts()).unwrap();
    let tx = db.read().unwrap();
    let keys: Vec<u32> = tx.iter::<Blobs>().keys().map(Result::unwrap).collect();
    assert_eq!(keys, [1, 2, 256, 300, 65_536]);
    assert_eq!(
        tx.get::<Blobs>(&65_536).unwrap(),
        Some(65_536u32.to_le_bytes().to_vec())
    );
    drop(tx);
    assert!(db.check().unwrap().is_ok());
}

#[test]
fn plan_reports_a_flag_change_as_open_refuses_it() {
    // `plan` and `open` judge stored flags with one check: the problem `plan` lists is the
    // refusal `open` gives.
    let d = dir();
    let opts = || Options::new().max_size(1 << 30);
    let db = tabula_migrate::open::<OnlyBlocks>(d.path(), opts()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Blocks>(&1, &(1, 1)).unwrap();
    tx.commit().unwrap();
    drop(db);
    let plan =
        tabula_migrate::plan::<DupBlocks>(d.path(), &tabula_migrate::Migrations::new()).unwrap();
    let refusal = tabula_migrate::open::<DupBlocks>(d.path(), opts())
        .map(drop)
        .unwrap_err();
    assert!(
        matches!(refusal, Error::SchemaMismatch { what: "flags", .. }),
        "{refusal}"
    );
    assert_eq!(plan.problems, [refusal.to_string()], "{plan}");
}

#[test]
fn plan_finds_a_database_in_either_layout() {
    // A directory holding `mdbx.dat`, a data file opened with `no_sub_dir`, and the `mdbx.dat`
    // of a directory given as a file: each is the database that `open` would open.
    let d = dir();
    let opts = || Options::new().max_size(1 << 30);
    drop(tabula_migrate::open::<OnlyBlocks>(d.path().join("dir"), opts()).unwrap());
    drop(
        tabula_migrate::open::<OnlyBlocks>(d.path().join("app.db"), opts().no_sub_dir(true))
            .unwrap(),
    );
    for path in [
        d.path().join("dir"),
        d.path().join("dir").join("mdbx.dat"),
        d.path().join("app.db"),
    ] {
        let plan = tabula_migrate::plan::<V1>(&path, &tabula_migrate::Migrations::new()).unwrap();
        assert!(plan.exists, "{}: {plan}", path.display());
        assert_eq!(plan.create, ["blobs", "tags"], "{}: {plan}", path.display());
        assert!(plan.problems.is_empty(), "{}: {plan}", path.display());
    }
    let plan =
        tabula_migrate::plan::<V1>(d.path().join("none"), &tabula_migrate::Migrations::new())
            .unwrap();
    assert!(!plan.exists, "{plan}");
    assert_eq!(plan.create, ["blocks", "blobs", "tags"], "{plan}");
}

mod dupsort_010 {
    //! The database written by Tabula 0.1.0 in the facade's fixtures, whose dupsort tables
    //! store bincode values in bincode's byte order.

    use tabula_core::{Error, Options};
    use tabula_derive::{Schema, Table};

    #[derive(Table)]
    #[tabula(crate = tabula_core)]
    #[table(name = "numbers", key = u64, value = u64, dupsort)]
    struct Numbers;

    #[derive(Schema)]
    #[tabula(crate = tabula_core)]
    struct Current(Numbers);

    #[test]
    fn plan_reports_bincode_dup_values_as_open_refuses_them() {
        let dir = tempfile::tempdir().unwrap();
        let from = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/dupsort-0.1.0/mdbx.dat"
        );
        std::fs::copy(from, dir.path().join("mdbx.dat")).unwrap();
        let plan = tabula_migrate::plan::<Current>(dir.path(), &tabula_migrate::Migrations::new())
            .unwrap();
        let refusal = tabula_migrate::open::<Current>(dir.path(), Options::new().max_size(1 << 30))
            .map(drop)
            .unwrap_err();
        assert!(
            matches!(
                refusal,
                Error::SchemaMismatch {
                    what: "dup value encoding",
                    ..
                }
            ),
            "{refusal}"
        );
        assert_eq!(plan.problems, [refusal.to_string()], "{plan}");
    }
}
