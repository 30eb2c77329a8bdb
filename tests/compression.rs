//! `Zstd<C>` values on real files: they round-trip, take less room, and a file written
//! compressed is never read as plain bincode (nor the reverse): the open is refused with the
//! step that re-encodes, and that step works.

#[path = "support/tempdb.rs"]
mod tempdb;

use serde::{Deserialize, Serialize};
use tabula::{Bincode, Error, Migrations, Options, Schema, Table, Zstd};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Doc {
    id: u64,
    kind: String,
    tags: Vec<String>,
    body: String,
}

fn doc(n: u64) -> Doc {
    Doc {
        id: n,
        kind: ["transfer", "mint", "burn"][n as usize % 3].to_string(),
        tags: (0..n % 5).map(|t| format!("tag-{t}")).collect(),
        body: format!("account {n} sent {} units to account {}; ", n * 3, n + 1).repeat(4),
    }
}

#[derive(Table)]
#[table(name = "docs", key = u64, value = Doc, codec = Zstd<Bincode<Doc>>)]
struct Docs;

#[derive(Schema)]
struct Compressed(Docs);

#[derive(Table)]
#[table(name = "docs", key = u64, value = Doc)]
struct PlainDocs;

#[derive(Schema)]
struct Plain(PlainDocs);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct DocV2 {
    id: u64,
    kind: String,
    tags: Vec<String>,
    body: String,
    archived: bool,
}

#[derive(Table)]
#[table(name = "docs", key = u64, value = DocV2, codec = Zstd<Bincode<DocV2>>)]
struct DocsV2;

#[derive(Schema)]
struct CompressedV2(DocsV2);

#[test]
fn compressed_values_round_trip_and_take_less_room() {
    let (_dir, db) = tempdb::open_with::<Compressed>(Options::new());
    let mut tx = db.write().unwrap();
    for n in 0..300 {
        tx.put::<Docs>(&n, &doc(n)).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let (mut stored, mut plain) = (0, 0);
    let mut scratch = Vec::new();
    for n in 0..300 {
        assert_eq!(tx.get::<Docs>(&n).unwrap(), Some(doc(n)));
        stored += tx.get_bytes::<Docs>(&n).unwrap().unwrap().len();
        plain += <Bincode<Doc> as tabula::Value>::encode(&doc(n), &mut scratch)
            .unwrap()
            .len();
    }
    assert!(stored * 2 < plain, "{stored} compressed vs {plain} plain");
    let all: Vec<(u64, Doc)> = tx.iter::<Docs>().collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len(), 300);
    assert_eq!(all[299], (299, doc(299)));
    let lazy = tx.get_lazy::<Docs>(&7).unwrap().unwrap();
    assert_eq!(lazy.decode().unwrap(), doc(7));
}

/// A damaged compressed value is a decode error naming the table and key.
#[test]
fn a_damaged_compressed_value_is_a_decode_error() {
    let (_dir, db) = tempdb::open_with::<Compressed>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Docs>(&1, &doc(1)).unwrap();
    let mut bytes = tx.get_bytes::<Docs>(&1).unwrap().unwrap().to_vec();
    bytes.truncate(bytes.len() - 3);
    tx.put_bytes::<Docs>(&2u64.to_be_bytes(), &bytes).unwrap();
    // Plain bincode where compressed values belong.
    tx.put_bytes::<Docs>(&3u64.to_be_bytes(), &[1, 2, 3, 4, 5, 6, 7, 8])
        .unwrap();
    for key in [2u64, 3] {
        match tx.get::<Docs>(&key) {
            Err(Error::Decode { table, source, .. }) => {
                assert_eq!(table, "docs");
                assert!(source.message().starts_with("zstd"), "{source}");
            }
            other => panic!("{other:?}"),
        }
    }
}

fn mismatch(result: tabula::Result<impl Sized>) -> (String, String, String, String) {
    match result {
        Err(Error::SchemaMismatch {
            what,
            stored,
            declared,
            advice,
            ..
        }) => (what.to_string(), stored, declared, advice),
        Err(other) => panic!("not a schema mismatch: {other}"),
        Ok(_) => panic!("opened"),
    }
}

/// Regression for the schema promise: a file written with `Zstd<Bincode<Doc>>` opened with
/// plain `Bincode<Doc>` (the same value type, so the same structure) is refused as a changed
/// value encoding, with the step that decompresses; that step then works.
#[test]
fn a_compressed_table_is_never_read_as_plain_bincode() {
    let (dir, db) = tempdb::open_with::<Compressed>(Options::new());
    let mut tx = db.write().unwrap();
    for n in 0..50 {
        tx.put::<Docs>(&n, &doc(n)).unwrap();
    }
    tx.commit().unwrap();
    drop(db);

    let (what, stored, declared, advice) =
        mismatch(tabula::open::<Plain>(dir.path(), Options::new()));
    assert_eq!(what, "value encoding");
    assert_eq!(stored, "zstd(bincode)<Doc>");
    assert_eq!(declared, "bincode<Doc>");
    assert!(
        advice.contains(
            ".step(2, \"docs-v2\", |m| m.transform_with::<PlainDocs, \
             tabula::Zstd<tabula::Bincode<Doc>>>(|value| value))"
        ),
        "{advice}"
    );
    // Read-only too.
    mismatch(tabula::open::<Plain>(
        dir.path(),
        Options::new().read_only(true),
    ));

    // The advised step.
    let migrations = Migrations::new().step(2, "docs-v2", |m| {
        m.transform_with::<PlainDocs, Zstd<Bincode<Doc>>>(|value| value)
    });
    let (db, _) = tabula::open_with::<Plain>(dir.path(), Options::new(), &migrations).unwrap();
    let tx = db.read().unwrap();
    for n in 0..50 {
        assert_eq!(tx.get::<PlainDocs>(&n).unwrap(), Some(doc(n)));
    }
}

/// The reverse: plain bincode values opened as compressed ones are refused, with the step that
/// compresses them; after it the stored values are zstd frames.
#[test]
fn a_plain_table_is_never_read_as_compressed() {
    let (dir, db) = tempdb::open_with::<Plain>(Options::new());
    let mut tx = db.write().unwrap();
    for n in 0..50 {
        tx.put::<PlainDocs>(&n, &doc(n)).unwrap();
    }
    tx.commit().unwrap();
    drop(db);

    let (what, stored, declared, advice) =
        mismatch(tabula::open::<Compressed>(dir.path(), Options::new()));
    assert_eq!(what, "value encoding");
    assert_eq!(
        (stored.as_str(), declared.as_str()),
        ("bincode<Doc>", "zstd(bincode)<Doc>")
    );
    assert!(
        advice.contains("m.transform::<Docs, Doc>(|value| value)"),
        "{advice}"
    );

    let migrations =
        Migrations::new().step(2, "docs-v2", |m| m.transform::<Docs, Doc>(|value| value));
    let (db, _) = tabula::open_with::<Compressed>(dir.path(), Options::new(), &migrations).unwrap();
    let tx = db.read().unwrap();
    for n in 0..50 {
        assert_eq!(tx.get::<Docs>(&n).unwrap(), Some(doc(n)));
        let bytes = tx.get_bytes::<Docs>(&n).unwrap().unwrap();
        assert_eq!(&bytes[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    }
}

/// The compressed values' structure is the inner codec's: a changed value type is refused as
/// it is without compression.
#[test]
fn a_changed_value_type_under_compression_is_refused_by_structure() {
    let dir = tempfile::tempdir().unwrap();
    drop(tabula::open::<Compressed>(dir.path(), Options::new()).unwrap());
    let (what, _, now, advice) = mismatch(tabula::open::<CompressedV2>(dir.path(), Options::new()));
    assert_eq!(what, "value structure");
    assert!(now.contains("archived"), "{now}");
    assert!(advice.contains("m.transform::<DocsV2, "), "{advice}");
}

/// The schema-less reader (what the `tabula` command uses) reads compressed values through
/// the compression, as the typed API does, and writes them back as the same frames decode.
#[test]
fn the_schema_less_reader_decompresses() {
    use tabula::untyped::UntypedDb;
    use tabula_core::untyped::{DynKey, DynValue};

    let (dir, db) = tempdb::open_with::<Compressed>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Docs>(&7, &doc(7)).unwrap();
    tx.commit().unwrap();
    drop(db);

    let untyped = UntypedDb::open(dir.path()).unwrap();
    let mut tx = untyped.read().unwrap();
    let table = tx.table("docs").unwrap().expect("recorded");
    let shape = table
        .value_shape()
        .expect("a zstd(bincode) value has a shape")
        .clone();
    let values = tx.get(&table, &DynKey::Unsigned(7)).unwrap();
    let [DynValue::Struct(fields)] = &values[..] else {
        panic!("{values:?}")
    };
    assert_eq!(fields[0], ("id".to_string(), DynValue::Unsigned(7)));
    assert_eq!(fields[3].1, DynValue::Str(doc(7).body));
    // Encoded back: a frame the typed codec reads as the same document.
    let bytes = shape.encode(&values[0]).unwrap();
    assert_eq!(
        <Zstd<Bincode<Doc>> as tabula::Value>::decode(&bytes).unwrap(),
        doc(7)
    );
    assert!(
        format!("{shape:?}").starts_with("ValueShape(zstd"),
        "{shape:?}"
    );
}
