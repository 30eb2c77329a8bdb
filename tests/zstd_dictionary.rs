//! `ZstdDict<C, D>` values on real files: they work before any dictionary exists, a migration
//! step trains one from the table and re-encodes the table with it, values written with an
//! older dictionary keep decoding, a changed codec is refused with the step to add, a frame
//! whose dictionary is not loaded is a clear error, and two open databases that would give an
//! ID or a name two meanings in one process are refused.
//!
//! The registry of dictionaries is process-wide and the tests of this file run in parallel in
//! one process: each test uses dictionary names of its own, and trains from other samples or
//! to another size (zstd derives a dictionary's ID from its contents, so the same training
//! gives the same ID in two files, which is allowed).

#[path = "support/tempdb.rs"]
mod tempdb;

use std::path::Path;

use serde::{Deserialize, Serialize};
use tabula::{
    Bincode, Error, Migrations, Options, Schema, Table, Value, Zstd, ZstdDict, ZstdDictionary,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Receipt {
    id: u64,
    status: String,
    currency: String,
    memo: String,
    lines: Vec<(String, u64)>,
}

/// JSON-like records that resemble each other, as a dictionary likes them.
fn receipt(n: u64) -> Receipt {
    Receipt {
        id: n,
        status: ["settled", "pending", "refunded"][n as usize % 3].to_string(),
        currency: ["EUR", "USD"][n as usize % 2].to_string(),
        memo: format!(
            "{{\"customer\":\"customer-{}\",\"channel\":\"web\",\"note\":\"order {n} shipped\"}}",
            n % 97
        ),
        lines: (0..1 + n % 4)
            .map(|l| (format!("sku-{:04}", (n * 7 + l) % 500), l * 100 + n % 13))
            .collect(),
    }
}

/// The dictionary ID a zstd frame records (0: none), read from its header.
fn frame_dictionary(frame: &[u8]) -> u32 {
    assert_eq!(&frame[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    let descriptor = frame[4];
    let single_segment = descriptor & 0x20 != 0;
    let at = 5 + usize::from(!single_segment);
    match descriptor & 3 {
        0 => 0,
        1 => u32::from(frame[at]),
        2 => u32::from(u16::from_le_bytes([frame[at], frame[at + 1]])),
        _ => u32::from_le_bytes(frame[at..at + 4].try_into().unwrap()),
    }
}

fn bytes_of<T: Table<Key = u64>>(db: &tabula::Db<impl tabula::Contains<T>>, key: u64) -> Vec<u8> {
    db.read()
        .unwrap()
        .get_bytes::<T>(&key)
        .unwrap()
        .unwrap()
        .to_vec()
}

fn fill<T: tabula::Writable<Key = u64, Value = Receipt>>(
    db: &tabula::Db<impl tabula::Contains<T>>,
    keys: std::ops::Range<u64>,
) {
    let mut tx = db.write().unwrap();
    for n in keys {
        tx.put::<T>(&n, &receipt(n)).unwrap();
    }
    tx.commit().unwrap();
}

fn zstd_dictionary_error(result: tabula::Result<impl Sized>) -> String {
    match result {
        Err(Error::ZstdDictionary { message, .. }) => message,
        Err(other) => panic!("not a dictionary error: {other}"),
        Ok(_) => panic!("opened"),
    }
}

// ---- round trip, training, older dictionaries ----

struct RoundTrip;
impl ZstdDictionary for RoundTrip {
    const NAME: &'static str = "round-trip";
}

#[derive(Table)]
#[table(name = "receipts", key = u64, value = Receipt,
        codec = ZstdDict<Bincode<Receipt>, RoundTrip>)]
struct Receipts;

#[derive(Table)]
#[table(name = "archive", key = u64, value = Receipt,
        codec = ZstdDict<Bincode<Receipt>, RoundTrip, 9>)]
struct Archive;

#[derive(Schema)]
struct Shop(Receipts, Archive);

/// Before any dictionary exists values are frames without one (dictionary ID 0) and round
/// trip; the training step stores a dictionary, re-encodes the table with it (smaller), and
/// every value reads back, as do values written after it.
#[test]
fn values_round_trip_before_and_after_training() {
    let (dir, db) = tempdb::open_with::<Shop>(Options::new());
    fill::<Receipts>(&db, 0..3000);
    let before: usize = (0..3000).map(|n| bytes_of::<Receipts>(&db, n).len()).sum();
    assert_eq!(frame_dictionary(&bytes_of::<Receipts>(&db, 5)), 0);
    assert_eq!(
        db.read().unwrap().get::<Receipts>(&5).unwrap(),
        Some(receipt(5))
    );
    drop(db);

    let migrations = Migrations::new().step(2, "receipts-dictionary", |m| {
        m.train_zstd_dictionary::<Receipts>(2000, 8 * 1024)
    });
    let (db, report) = tabula::open_with::<Shop>(dir.path(), Options::new(), &migrations).unwrap();
    assert_eq!(report.applied, [(2, "receipts-dictionary")]);
    let id = frame_dictionary(&bytes_of::<Receipts>(&db, 5));
    assert_ne!(id, 0, "re-encoded with the trained dictionary");
    let after: usize = (0..3000).map(|n| bytes_of::<Receipts>(&db, n).len()).sum();
    assert!(after * 10 < before * 7, "{after} with vs {before} without");
    let tx = db.read().unwrap();
    for n in 0..3000 {
        assert_eq!(tx.get::<Receipts>(&n).unwrap(), Some(receipt(n)), "{n}");
    }
    drop(tx);
    // New values use the current dictionary, in both tables of the name.
    fill::<Receipts>(&db, 3000..3010);
    fill::<Archive>(&db, 0..10);
    assert_eq!(frame_dictionary(&bytes_of::<Receipts>(&db, 3005)), id);
    assert_eq!(frame_dictionary(&bytes_of::<Archive>(&db, 5)), id);
    assert_eq!(
        db.read().unwrap().get::<Archive>(&5).unwrap(),
        Some(receipt(5))
    );
    drop(db);

    // A second training (another size, so another dictionary): `receipts` is re-encoded,
    // `archive` keeps values written with the first one, which still decode.
    let migrations = migrations.step(3, "receipts-dictionary-2", |m| {
        m.train_zstd_dictionary::<Receipts>(1000, 4 * 1024)
    });
    let (db, report) = tabula::open_with::<Shop>(dir.path(), Options::new(), &migrations).unwrap();
    assert_eq!(report.applied, [(3, "receipts-dictionary-2")]);
    let second = frame_dictionary(&bytes_of::<Receipts>(&db, 5));
    assert_ne!(second, id);
    assert_ne!(second, 0);
    assert_eq!(frame_dictionary(&bytes_of::<Archive>(&db, 5)), id);
    let tx = db.read().unwrap();
    for n in 0..10 {
        assert_eq!(tx.get::<Archive>(&n).unwrap(), Some(receipt(n)));
    }
    assert_eq!(tx.get::<Receipts>(&3007).unwrap(), Some(receipt(3007)));
    drop(tx);
    drop(db);

    // A reopen with no step pending loads both dictionaries again.
    let (db, report) = tabula::open_with::<Shop>(dir.path(), Options::new(), &migrations).unwrap();
    assert!(report.applied.is_empty());
    assert_eq!(
        db.read().unwrap().get::<Archive>(&3).unwrap(),
        Some(receipt(3))
    );
    assert_eq!(
        db.read().unwrap().get::<Receipts>(&3).unwrap(),
        Some(receipt(3))
    );
}

// ---- too little to train from ----

struct Sparse;
impl ZstdDictionary for Sparse {
    const NAME: &'static str = "sparse";
}

#[derive(Table)]
#[table(name = "few", key = u64, value = Receipt, codec = ZstdDict<Bincode<Receipt>, Sparse>)]
struct Few;

#[derive(Schema)]
struct FewSchema(Few);

/// A table with too few values to train from: the step stores nothing and the values stay as
/// they were, readable.
#[test]
fn a_table_too_small_to_train_from_is_left_as_it_is() {
    let (dir, db) = tempdb::open_with::<FewSchema>(Options::new());
    fill::<Few>(&db, 0..3);
    drop(db);
    let migrations =
        Migrations::new().step(2, "few-dict", |m| m.train_zstd_dictionary::<Few>(100, 4096));
    let (db, report) =
        tabula::open_with::<FewSchema>(dir.path(), Options::new(), &migrations).unwrap();
    assert_eq!(report.version, 2);
    assert_eq!(frame_dictionary(&bytes_of::<Few>(&db, 1)), 0);
    assert_eq!(db.read().unwrap().get::<Few>(&1).unwrap(), Some(receipt(1)));
}

// ---- codec changes ----

struct Switch;
impl ZstdDictionary for Switch {
    const NAME: &'static str = "switch";
}

#[derive(Table)]
#[table(name = "docs", key = u64, value = Receipt, codec = ZstdDict<Bincode<Receipt>, Switch>)]
struct DictDocs;
#[derive(Schema)]
struct DictSchema(DictDocs);

#[derive(Table)]
#[table(name = "docs", key = u64, value = Receipt, codec = Zstd<Bincode<Receipt>>)]
struct ZstdDocs;
#[derive(Schema)]
struct ZstdSchema(ZstdDocs);

#[derive(Table)]
#[table(name = "docs", key = u64, value = Receipt)]
struct PlainDocs;
#[derive(Schema)]
struct PlainSchema(PlainDocs);

fn mismatch(result: tabula::Result<impl Sized>) -> (String, String, String) {
    match result {
        Err(Error::SchemaMismatch {
            stored,
            declared,
            advice,
            ..
        }) => (stored, declared, advice),
        Err(other) => panic!("not a schema mismatch: {other}"),
        Ok(_) => panic!("opened"),
    }
}

/// A file whose codec changed between `Zstd`, `ZstdDict` and plain bincode is refused at open
/// with the step that re-encodes, and that step works (from a trained dictionary too).
#[test]
fn a_changed_compression_is_refused_with_the_step_to_add() {
    let (dir, db) = tempdb::open_with::<ZstdSchema>(Options::new());
    fill::<ZstdDocs>(&db, 0..1500);
    drop(db);

    // `Zstd` → `ZstdDict`.
    let (stored, declared, advice) =
        mismatch(tabula::open::<DictSchema>(dir.path(), Options::new()));
    assert_eq!(stored, "zstd(bincode)<Receipt>");
    assert_eq!(declared, "zstd_dict(switch,bincode)<Receipt>");
    assert!(
        advice.contains(
            "m.transform_with::<DictDocs, tabula::Zstd<tabula::Bincode<Receipt>>>(|value| value)"
        ),
        "{advice}"
    );
    let migrations = Migrations::new()
        .step(2, "docs-v2", |m| {
            m.transform_with::<DictDocs, Zstd<Bincode<Receipt>>>(|value| value)
        })
        .step(3, "docs-dictionary", |m| {
            m.train_zstd_dictionary::<DictDocs>(1000, 4096)
        });
    let (db, _) = tabula::open_with::<DictSchema>(dir.path(), Options::new(), &migrations).unwrap();
    assert_ne!(frame_dictionary(&bytes_of::<DictDocs>(&db, 9)), 0);
    drop(db);

    // `ZstdDict` → plain, and → `Zstd`.
    let (stored, declared, advice) = mismatch(tabula::open_with::<PlainSchema>(
        dir.path(),
        Options::new(),
        &migrations,
    ));
    assert_eq!(stored, "zstd_dict(switch,bincode)<Receipt>");
    assert_eq!(declared, "bincode<Receipt>");
    assert!(
        advice.contains(
            "m.transform_with::<PlainDocs, tabula::ZstdDict<tabula::Bincode<Receipt>, \
             OldDictionary>>(|value| value)"
        ),
        "{advice}"
    );
    let (_, _, advice) = mismatch(tabula::open_with::<ZstdSchema>(
        dir.path(),
        Options::new(),
        &migrations,
    ));
    assert!(advice.contains("tabula::ZstdDict<"), "{advice}");
    // The advised step, with the dictionary type of the recorded name: the values decode
    // with the stored dictionary, loaded before the steps run.
    let migrations = migrations.step(4, "docs-plain", |m| {
        m.transform_with::<PlainDocs, ZstdDict<Bincode<Receipt>, Switch>>(|value| value)
    });
    let (db, _) =
        tabula::open_with::<PlainSchema>(dir.path(), Options::new(), &migrations).unwrap();
    let tx = db.read().unwrap();
    for n in 0..1500 {
        assert_eq!(tx.get::<PlainDocs>(&n).unwrap(), Some(receipt(n)));
    }
    drop(tx);
    drop(db);

    // Plain → `ZstdDict`.
    let (stored, declared, advice) = mismatch(tabula::open_with::<DictSchema>(
        dir.path(),
        Options::new(),
        &migrations,
    ));
    assert_eq!(stored, "bincode<Receipt>");
    assert_eq!(declared, "zstd_dict(switch,bincode)<Receipt>");
    assert!(
        advice.contains("m.transform::<DictDocs, Receipt>(|value| value)"),
        "{advice}"
    );
}

// ---- a dictionary that is not loaded ----

struct Gone;
impl ZstdDictionary for Gone {
    const NAME: &'static str = "gone";
}

#[derive(Table)]
#[table(name = "gone", key = u64, value = Receipt, codec = ZstdDict<Bincode<Receipt>, Gone>)]
struct GoneDocs;
#[derive(Schema)]
struct GoneSchema(GoneDocs);

fn trained(dir: &Path) -> Migrations {
    let db = tabula::open::<GoneSchema>(dir, Options::new()).unwrap();
    fill::<GoneDocs>(&db, 0..1500);
    drop(db);
    let migrations = Migrations::new().step(2, "gone-dictionary", |m| {
        m.train_zstd_dictionary::<GoneDocs>(900, 3072)
    });
    drop(tabula::open_with::<GoneSchema>(dir, Options::new(), &migrations).unwrap());
    migrations
}

/// A frame whose dictionary no open database stores is a decode error naming the ID (the
/// dictionary is unloaded when the database that stored it closes).
#[test]
fn a_frame_whose_dictionary_is_not_loaded_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let migrations = trained(dir.path());
    let (db, _) = tabula::open_with::<GoneSchema>(dir.path(), Options::new(), &migrations).unwrap();
    let frame = bytes_of::<GoneDocs>(&db, 3);
    let id = frame_dictionary(&frame);
    assert_eq!(
        ZstdDict::<Bincode<Receipt>, Gone>::decode(&frame).unwrap(),
        receipt(3)
    );
    drop(db);
    let err = ZstdDict::<Bincode<Receipt>, Gone>::decode(&frame).unwrap_err();
    assert!(
        err.message()
            .contains(&format!("dictionary ID {id}, which is not loaded")),
        "{err}"
    );

    // The schema-less reader (the CLI's) loads the file's dictionaries too.
    let untyped = tabula_core::untyped::UntypedDb::open(dir.path()).unwrap();
    let mut tx = untyped.read().unwrap();
    let table = tx.table("gone").unwrap().unwrap();
    let values = tx
        .get(&table, &tabula_core::untyped::DynKey::Unsigned(3))
        .unwrap();
    let tabula_core::untyped::DynValue::Struct(fields) = &values[0] else {
        panic!("{values:?}");
    };
    assert_eq!(
        fields[0],
        (
            "id".to_string(),
            tabula_core::untyped::DynValue::Unsigned(3)
        )
    );
    drop(tx);
    assert!(ZstdDict::<Bincode<Receipt>, Gone>::decode(&frame).is_ok());
    drop(untyped);
    assert!(ZstdDict::<Bincode<Receipt>, Gone>::decode(&frame).is_err());
}

// ---- registry conflicts ----

struct Shared;
impl ZstdDictionary for Shared {
    const NAME: &'static str = "shared-name";
}

#[derive(Table)]
#[table(name = "notes", key = u64, value = Receipt, codec = ZstdDict<Bincode<Receipt>, Shared>)]
struct Notes;
#[derive(Schema)]
struct NotesSchema(Notes);

/// Two databases that would give one dictionary name two current dictionaries in one process
/// (one trained, one not) cannot be open for writing at once: the second open is refused,
/// naming the first; read-only it opens; once the first closes it opens read-write.
#[test]
fn a_name_with_another_current_dictionary_in_the_process_is_refused() {
    let trained_dir = tempfile::tempdir().unwrap();
    let fresh_dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<NotesSchema>(trained_dir.path(), Options::new()).unwrap();
    fill::<Notes>(&db, 0..1500);
    drop(db);
    let migrations = Migrations::new().step(2, "notes-dictionary", |m| {
        m.train_zstd_dictionary::<Notes>(800, 2048)
    });
    let (trained, _) =
        tabula::open_with::<NotesSchema>(trained_dir.path(), Options::new(), &migrations).unwrap();

    let message = zstd_dictionary_error(tabula::open::<NotesSchema>(
        fresh_dir.path(),
        Options::new(),
    ));
    assert!(
        message.contains("current dictionary of `shared-name`"),
        "{message}"
    );
    assert!(
        message.contains(&trained_dir.path().display().to_string()),
        "{message}"
    );
    // Nothing was created by the refused open.
    assert!(tabula::open::<NotesSchema>(fresh_dir.path(), Options::new().read_only(true)).is_err());
    drop(trained);
    let fresh = tabula::open::<NotesSchema>(fresh_dir.path(), Options::new()).unwrap();
    fill::<Notes>(&fresh, 0..3);
    assert_eq!(frame_dictionary(&bytes_of::<Notes>(&fresh, 1)), 0);
    // And now the trained one is refused while the fresh one is open, but opens read-only.
    zstd_dictionary_error(tabula::open_with::<NotesSchema>(
        trained_dir.path(),
        Options::new(),
        &migrations,
    ));
    let (reader, _) = tabula::open_with::<NotesSchema>(
        trained_dir.path(),
        Options::new().read_only(true),
        &migrations,
    )
    .unwrap();
    assert_eq!(
        reader.read().unwrap().get::<Notes>(&7).unwrap(),
        Some(receipt(7))
    );
}

struct IdA;
impl ZstdDictionary for IdA {
    const NAME: &'static str = "id-clash-a";
}
struct IdB;
impl ZstdDictionary for IdB {
    const NAME: &'static str = "id-clash-b";
}

#[derive(Table)]
#[table(name = "a", key = u64, value = Receipt, codec = ZstdDict<Bincode<Receipt>, IdA>)]
struct ClashA;
#[derive(Schema)]
struct ClashSchemaA(ClashA);

#[derive(Table)]
#[table(name = "b", key = u64, value = Receipt, codec = ZstdDict<Bincode<Receipt>, IdB>)]
struct ClashB;
#[derive(Schema)]
struct ClashSchemaB(ClashB);

/// Two files storing different dictionaries under one ID (IDs are random, so this is forged
/// here) cannot be open in one process at once: a frame names its dictionary by ID only.
#[test]
fn one_id_for_two_dictionaries_in_the_process_is_refused() {
    use tabula_core::startup::Bootstrap;

    let samples = |salt: &str| -> Vec<Vec<u8>> {
        (0..2000)
            .map(|n| format!("{{\"n\":{n},\"salt\":\"{salt}\",\"k\":\"{}\"}}", n % 31).into_bytes())
            .collect()
    };
    let first = tabula_core::codec::train_zstd_dictionary(&samples("first"), 2048).unwrap();
    let mut second = tabula_core::codec::train_zstd_dictionary(&samples("second"), 2048).unwrap();
    assert_ne!(first, second);
    second[4..8].copy_from_slice(&first[4..8]);

    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (dir, name, dictionary) in [
        (dir_a.path(), "id-clash-a", &first),
        (dir_b.path(), "id-clash-b", &second),
    ] {
        let mut boot = Bootstrap::begin(dir, &Options::new(), 1).unwrap();
        boot.add_zstd_dictionary(name, dictionary).unwrap();
        boot.checkpoint().unwrap();
    }
    let a = tabula::open::<ClashSchemaA>(dir_a.path(), Options::new()).unwrap();
    let message = zstd_dictionary_error(tabula::open::<ClashSchemaB>(
        dir_b.path(),
        Options::new().read_only(true),
    ));
    let id = u32::from_le_bytes(first[4..8].try_into().unwrap());
    assert!(
        message.contains(&format!("dictionary ID {id}")),
        "{message}"
    );
    assert!(
        message.contains(&dir_a.path().display().to_string()),
        "{message}"
    );
    drop(a);
    let b = tabula::open::<ClashSchemaB>(dir_b.path(), Options::new()).unwrap();
    fill::<ClashB>(&b, 0..3);
    assert_eq!(frame_dictionary(&bytes_of::<ClashB>(&b, 1)), id);
    assert_eq!(
        b.read().unwrap().get::<ClashB>(&2).unwrap(),
        Some(receipt(2))
    );
}

// ---- interrupted training ----

struct Resumed;
impl ZstdDictionary for Resumed {
    const NAME: &'static str = "resumed";
}

#[derive(Table)]
#[table(name = "resumed", key = u64, value = Receipt, codec = ZstdDict<Bincode<Receipt>, Resumed>)]
struct ResumedDocs;
#[derive(Schema)]
struct ResumedSchema(ResumedDocs);

/// The training step interrupted after two batches (a panic in the progress callback, after
/// the batch committed) resumes at the third batch: the dictionary stored with the first
/// batch is kept, not trained again, and every value ends up re-encoded with it.
#[test]
fn an_interrupted_training_step_resumes_after_the_last_batch() {
    use std::sync::{Arc, Mutex};

    let (dir, db) = tempdb::open_with::<ResumedSchema>(Options::new());
    fill::<ResumedDocs>(&db, 0..3000);
    drop(db);
    let migrations = |on: Arc<Mutex<Vec<u64>>>, stop_at: u64| {
        Migrations::new()
            .step(2, "resumed-dictionary", |m| {
                m.train_zstd_dictionary::<ResumedDocs>(1000, 5000)
            })
            .batch_size(500)
            .on_progress(move |p| {
                on.lock().unwrap().push(p.done);
                assert!(p.done < stop_at, "interrupted after {} values", p.done);
            })
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let interrupted = std::panic::catch_unwind(|| {
        tabula::open_with::<ResumedSchema>(
            dir.path(),
            Options::new(),
            &migrations(seen.clone(), 1000),
        )
        .map(drop)
    });
    assert!(interrupted.is_err());
    assert_eq!(*seen.lock().unwrap(), [500, 1000]);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let (db, report) = tabula::open_with::<ResumedSchema>(
        dir.path(),
        Options::new(),
        &migrations(seen.clone(), u64::MAX),
    )
    .unwrap();
    assert_eq!(report.applied, [(2, "resumed-dictionary")]);
    assert_eq!(*seen.lock().unwrap(), [1500, 2000, 2500, 3000]);
    let id = frame_dictionary(&bytes_of::<ResumedDocs>(&db, 0));
    assert_ne!(id, 0);
    let tx = db.read().unwrap();
    for n in 0..3000 {
        assert_eq!(
            frame_dictionary(tx.get_bytes::<ResumedDocs>(&n).unwrap().unwrap()),
            id
        );
        assert_eq!(tx.get::<ResumedDocs>(&n).unwrap(), Some(receipt(n)));
    }
}
