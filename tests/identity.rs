//! Schema identity (issue 13): a value type is identified by its structure — every field and
//! every variant of every enum, wherever it sits — not by how its name is spelled.
//!
//! - a matrix of type changes, each refused without a migration step (naming the table struct,
//!   the field or variant that changed and the step to add) and accepted with one;
//! - renamed, moved, re-imported and aliased value types (and renamed key structs) open without
//!   a step;
//! - records written by the release before, which recorded spelled names and no shape for types
//!   serde-reflection could not finish: what is trusted and what is refused;
//! - value types that cannot be traced: refused unless the declaration states a `value_version`,
//!   which must then change (with a step) when the values do;
//! - the seal at run time: reserved and repeated names refused whatever implemented `Table` or
//!   `Schema`, in the startup step and in migration steps.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::Path;

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use tabula::{Contains, Error, Migrations, Options, Schema, Table};

/// Opens `S1`, stores `value` under keys 1..=3, closes.
fn write_v1<T: tabula::Writable<Key = u64>, S: Schema + Contains<T>>(
    path: &Path,
    value: &T::Value,
) {
    let db = tabula::open::<S>(path, Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    for k in 1..=3u64 {
        tx.put::<T>(&k, value).unwrap();
    }
    tx.commit().unwrap();
}

/// The matrix's check: `T2` (in schema `S2`) declares a changed value type. Opening without a
/// step is refused with `what = "value structure"`, naming `T2`'s struct, every expected change
/// and the transform step; `plan` reports the same; with a transform step from `Old` the file
/// opens and every value is converted; reopening with the step applied is a no-op.
fn refused_then_migrated<T1, S1, T2, S2>(
    value: T1::Value,
    convert: fn(T1::Value) -> T2::Value,
    expected: &[&str],
) where
    T1: tabula::Writable<Key = u64>,
    T1::Value: Clone + Serialize + DeserializeOwned,
    S1: Schema + Contains<T1>,
    T2: Table<Key = u64>,
    T2::Value: PartialEq + Debug,
    S2: Schema + Contains<T2>,
{
    let dir = tempfile::tempdir().unwrap();
    write_v1::<T1, S1>(dir.path(), &value);

    let err = tabula::open::<S2>(dir.path(), Options::new())
        .map(|_| ())
        .expect_err("a changed value type opened without a migration step");
    let msg = err.to_string();
    println!("{msg}");
    let Error::SchemaMismatch { what, detail, .. } = &err else {
        panic!("not a schema mismatch: {msg}")
    };
    let changes = &detail.changes;
    assert_eq!(*what, "value structure", "{msg}");
    for needle in expected {
        assert!(
            changes.iter().any(|c| c.contains(needle)),
            "no change mentions {needle:?}: {changes:#?}"
        );
    }
    assert!(msg.contains(&format!("(`{}`)", T2::RUST_NAME)), "{msg}");
    let ident = T2::RUST_NAME.rsplit("::").next().unwrap();
    assert!(
        msg.contains(&format!(
            "`.step(2, \"values-v2\", |m| m.transform::<{ident}, Old"
        )),
        "the advice names the exact step: {msg}"
    );
    let plan = tabula::plan::<S2>(dir.path(), &Migrations::new()).unwrap();
    assert_eq!(plan.problems, std::slice::from_ref(&msg), "{plan}");

    let steps = Migrations::new().step(2, "values-v2", |m| m.transform::<T2, T1::Value>(convert));
    let (db, report) = tabula::open_with::<S2>(dir.path(), Options::new(), &steps).unwrap();
    assert_eq!(report.applied, [(2, "values-v2")]);
    let expected_value = convert(value);
    let tx = db.read().unwrap();
    for k in 1..=3u64 {
        assert_eq!(tx.get::<T2>(&k).unwrap().as_ref(), Some(&expected_value));
    }
    drop(tx);
    drop(db);
    let (_, report) = tabula::open_with::<S2>(dir.path(), Options::new(), &steps).unwrap();
    assert!(report.applied.is_empty());
}

/// One case of the matrix: a module with `v1` and `v2` (each declaring `Value`, a table
/// `Values` named "values" and a schema `S`), and a test running `refused_then_migrated`.
macro_rules! case {
    (
        $name:ident,
        v1 { $($v1:item)* }
        v2 { $($v2:item)* }
        value = $value:expr,
        convert = |$old:ident| $convert:expr,
        expect = [$($expect:literal),+ $(,)?]
    ) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            pub mod v1 {
                #[allow(unused_imports)]
                use super::super::*;
                $($v1)*
                #[derive(Table)]
                #[table(name = "values", key = u64, value = Value)]
                pub struct Values;
                #[derive(Schema)]
                pub struct S(Values);
            }

            pub mod v2 {
                #[allow(unused_imports)]
                use super::super::*;
                $($v2)*
                #[derive(Table)]
                #[table(name = "values", key = u64, value = Value)]
                pub struct Values;
                #[derive(Schema)]
                pub struct S(Values);
            }

            #[test]
            fn refused_without_a_step_and_accepted_with_one() {
                #[allow(unused_imports)]
                use self::v1::*;
                refused_then_migrated::<v1::Values, v1::S, v2::Values, v2::S>(
                    $value,
                    |$old| $convert,
                    &[$($expect),+],
                );
            }
        }
    };
}

/// Derives shared by every value type of the matrix.
macro_rules! value_type {
    ($($item:item)*) => { $(#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)] $item)* };
}

// ---- the matrix ----------------------------------------------------------------------------

case!(
    field_added,
    v1 { value_type! { pub struct Value { pub a: u64 } } }
    v2 { value_type! { pub struct Value { pub a: u64, pub b: String } } }
    value = Value { a: 7 },
    convert = |old| v2::Value { a: old.a, b: "new".into() },
    expect = ["`Value`: field `b: String` added"]
);

case!(
    field_removed,
    v1 { value_type! { pub struct Value { pub a: u64, pub b: u32 } } }
    v2 { value_type! { pub struct Value { pub a: u64 } } }
    value = Value { a: 7, b: 1 },
    convert = |old| v2::Value { a: old.a + u64::from(old.b) },
    expect = ["`Value`: field `b: u32` removed"]
);

case!(
    field_renamed,
    v1 { value_type! { pub struct Value { pub a: u64, pub b: u32 } } }
    v2 { value_type! { pub struct Value { pub a: u64, pub c: u32 } } }
    value = Value { a: 7, b: 1 },
    convert = |old| v2::Value { a: old.a, c: old.b },
    expect = ["`Value`: field `b` renamed to `c`"]
);

case!(
    fields_reordered,
    v1 { value_type! { pub struct Value { pub a: u64, pub b: u64 } } }
    v2 { value_type! { pub struct Value { pub b: u64, pub a: u64 } } }
    value = Value { a: 7, b: 1 },
    convert = |old| v2::Value { b: old.b, a: old.a },
    expect = ["`Value`: fields reordered from (a, b) to (b, a)"]
);

case!(
    field_type_changed,
    v1 { value_type! { pub struct Value { pub a: u32 } } }
    v2 { value_type! { pub struct Value { pub a: u64 } } }
    value = Value { a: 7 },
    convert = |old| v2::Value { a: old.a.into() },
    expect = ["`Value.a`: `u32` became `u64`"]
);

case!(
    variant_added,
    v1 { value_type! { pub struct Value { pub k: Kind } pub enum Kind { A, B } } }
    v2 { value_type! { pub struct Value { pub k: Kind } pub enum Kind { A, B, C } } }
    value = Value { k: Kind::B },
    convert = |_old| v2::Value { k: v2::Kind::C },
    expect = ["`Value.k` (`Kind`): variant `C` added"]
);

case!(
    variant_removed,
    v1 { value_type! { pub struct Value { pub k: Kind } pub enum Kind { A, B, C } } }
    v2 { value_type! { pub struct Value { pub k: Kind } pub enum Kind { A, B } } }
    value = Value { k: Kind::C },
    convert = |_old| v2::Value { k: v2::Kind::B },
    expect = ["`Value.k` (`Kind`): variant `C` removed"]
);

case!(
    variants_reordered,
    v1 { value_type! { pub struct Value { pub k: Kind } pub enum Kind { A, B } } }
    v2 { value_type! { pub struct Value { pub k: Kind } pub enum Kind { B, A } } }
    value = Value { k: Kind::A },
    convert = |_old| v2::Value { k: v2::Kind::A },
    expect = ["`Value.k` (`Kind`): variants reordered from (A, B) to (B, A)"]
);

case!(
    variant_added_inside_a_vec,
    v1 { value_type! { pub struct Value { pub ks: Vec<Kind> } pub enum Kind { A, B } } }
    v2 { value_type! { pub struct Value { pub ks: Vec<Kind> } pub enum Kind { A, B, C } } }
    value = Value { ks: vec![Kind::A, Kind::B] },
    convert = |old| v2::Value { ks: old.ks.iter().map(|_| v2::Kind::C).collect() },
    expect = ["`Value.ks[_]` (`Kind`): variant `C` added"]
);

case!(
    variant_payload_changed_inside_an_option,
    v1 { value_type! { pub struct Value { pub k: Option<Kind> } pub enum Kind { A, B(u8) } } }
    v2 { value_type! { pub struct Value { pub k: Option<Kind> } pub enum Kind { A, B(u16) } } }
    value = Value { k: Some(Kind::B(3)) },
    convert = |_old| v2::Value { k: Some(v2::Kind::B(300)) },
    expect = ["`Value.k?::B.0`: `u8` became `u16`"]
);

case!(
    variant_added_inside_a_map,
    v1 { value_type! { pub struct Value { pub m: BTreeMap<String, Kind> } pub enum Kind { A, B } } }
    v2 { value_type! { pub struct Value { pub m: BTreeMap<String, Kind> } pub enum Kind { A, B, C } } }
    value = Value { m: [("x".to_string(), Kind::B)].into() },
    convert = |old| v2::Value { m: old.m.into_keys().map(|k| (k, v2::Kind::C)).collect() },
    expect = ["`Value.m<value>` (`Kind`): variant `C` added"]
);

case!(
    field_added_inside_a_tuple,
    v1 { value_type! { pub struct Value { pub t: (u8, Inner) } pub struct Inner { pub x: u8 } } }
    v2 { value_type! { pub struct Value { pub t: (u8, Inner) } pub struct Inner { pub x: u8, pub y: u8 } } }
    value = Value { t: (1, Inner { x: 2 }) },
    convert = |old| v2::Value { t: (old.t.0, v2::Inner { x: old.t.1.x, y: 0 }) },
    expect = ["`Value.t.1` (`Inner`): field `y: u8` added"]
);

case!(
    field_type_changed_inside_a_box,
    v1 { value_type! { pub struct Value { pub b: Box<Inner> } pub struct Inner { pub x: u32 } } }
    v2 { value_type! { pub struct Value { pub b: Box<Inner> } pub struct Inner { pub x: i32 } } }
    value = Value { b: Box::new(Inner { x: 5 }) },
    convert = |old| v2::Value { b: Box::new(v2::Inner { x: old.b.x as i32 }) },
    expect = ["`Value.b.x`: `u32` became `i32`"]
);

case!(
    variant_added_at_depth_two,
    v1 { value_type! { pub struct Value { pub v: Vec<Option<Kind>> } pub enum Kind { A, B } } }
    v2 { value_type! { pub struct Value { pub v: Vec<Option<Kind>> } pub enum Kind { A, B, C } } }
    value = Value { v: vec![None, Some(Kind::A)] },
    convert = |old| v2::Value { v: old.v.iter().map(|k| k.as_ref().map(|_| v2::Kind::C)).collect() },
    expect = ["`Value.v[_]?` (`Kind`): variant `C` added"]
);

case!(
    variant_field_added_at_depth_three,
    v1 {
        value_type! {
            pub struct Value { pub o: Option<Vec<BTreeMap<u8, Kind>>> }
            pub enum Kind { A, B { x: u8 } }
        }
    }
    v2 {
        value_type! {
            pub struct Value { pub o: Option<Vec<BTreeMap<u8, Kind>>> }
            pub enum Kind { A, B { x: u8, y: bool } }
        }
    }
    value = Value { o: Some(vec![[(1, Kind::B { x: 1 })].into()]) },
    convert = |_old| v2::Value { o: Some(vec![[(1, v2::Kind::B { x: 1, y: true })].into()]) },
    expect = ["`Value.o?[_]<value>::B`: field `y: bool` added"]
);

case!(
    map_key_type_changed,
    v1 { value_type! { pub struct Value { pub m: BTreeMap<u32, String> } } }
    v2 { value_type! { pub struct Value { pub m: BTreeMap<u64, String> } } }
    value = Value { m: [(1, "one".to_string())].into() },
    convert = |old| v2::Value { m: old.m.into_iter().map(|(k, v)| (k.into(), v)).collect() },
    expect = ["`Value.m<key>`: `u32` became `u64`"]
);

case!(
    unit_variant_became_newtype_at_the_root,
    v1 { value_type! { pub enum Value { A, B } } }
    v2 { value_type! { pub enum Value { A, B(u8) } } }
    value = Value::B,
    convert = |_old| v2::Value::B(1),
    expect = ["`Value::B`: a unit variant became a newtype variant"]
);

case!(
    tuple_struct_grew,
    v1 { value_type! { pub struct Value(pub u8, pub u8); } }
    v2 { value_type! { pub struct Value(pub u8, pub u8, pub u8); } }
    value = Value(1, 2),
    convert = |old| v2::Value(old.0, old.1, 0),
    expect = ["`Value`: 2 fields became 3"]
);

// The report: `Kind` reached only through a `Vec` and an `Option` had no recorded shape,
// so adding `b` went through and every stored row then failed to decode.
case!(
    field_added_next_to_enums_only_in_a_vec_and_an_option,
    v1 {
        value_type! {
            pub struct Value { pub a: u64, pub kinds: Vec<Kind>, pub last: Option<Kind> }
            pub enum Kind { Open, Closed(u32) }
        }
    }
    v2 {
        value_type! {
            pub struct Value { pub a: u64, pub kinds: Vec<Kind>, pub last: Option<Kind>, pub b: String }
            pub enum Kind { Open, Closed(u32) }
        }
    }
    value = Value { a: 1, kinds: vec![Kind::Open, Kind::Closed(2)], last: None },
    convert = |old| v2::Value { a: old.a, kinds: vec![v2::Kind::Open], last: None, b: String::new() },
    expect = ["`Value`: field `b: String` added"]
);

// ---- non-changes -----------------------------------------------------------------------------

mod model {
    use super::*;

    value_type! {
        pub struct Thing { pub id: u64, pub kinds: Vec<Kind>, pub note: Option<String> }
        pub enum Kind { A, B(u8) }
    }

    #[derive(Table)]
    #[table(name = "things", key = u64, value = model::Thing)]
    pub struct Things;

    #[derive(Schema)]
    pub struct S(Things);

    pub fn thing() -> Thing {
        Thing {
            id: 9,
            kinds: vec![Kind::A, Kind::B(2)],
            note: Some("n".into()),
        }
    }
}

/// Release 2 imports the type instead of spelling its path.
mod imported {
    use super::*;
    use crate::model::Thing;

    #[derive(Table)]
    #[table(name = "things", key = u64, value = Thing)]
    pub struct Things;

    #[derive(Schema)]
    pub struct S(Things);
}

/// Release 2 names it through an alias.
mod aliased {
    use super::*;

    pub type Item = crate::model::Thing;

    #[derive(Table)]
    #[table(name = "things", key = u64, value = Item)]
    pub struct Things;

    #[derive(Schema)]
    pub struct S(Things);
}

/// Release 2 moved and renamed the type (and its enum); the structure is the same.
mod moved {
    use super::*;

    pub mod elsewhere {
        use super::*;

        value_type! {
            pub struct Record { pub id: u64, pub kinds: Vec<Sort>, pub note: Option<String> }
            pub enum Sort { A, B(u8) }
        }
    }

    #[derive(Table)]
    #[table(name = "things", key = u64, value = elsewhere::Record)]
    pub struct Items;

    #[derive(Schema)]
    pub struct S(Items);
}

#[test]
fn imported_aliased_moved_and_renamed_value_types_open_without_a_step() {
    let dir = tempfile::tempdir().unwrap();
    write_v1::<model::Things, model::S>(dir.path(), &model::thing());

    let db = tabula::open::<imported::S>(dir.path(), Options::new()).unwrap();
    assert_eq!(
        db.read().unwrap().get::<imported::Things>(&1).unwrap(),
        Some(model::thing())
    );
    drop(db);
    let db = tabula::open::<aliased::S>(dir.path(), Options::new()).unwrap();
    assert_eq!(
        db.read().unwrap().get::<aliased::Things>(&2).unwrap(),
        Some(model::thing())
    );
    drop(db);
    let (db, report) = tabula::open_with_report::<moved::S>(dir.path(), Options::new()).unwrap();
    assert_eq!(report.verified, ["things"]);
    let record = db.read().unwrap().get::<moved::Items>(&3).unwrap().unwrap();
    assert_eq!(
        record.kinds,
        [moved::elsewhere::Sort::A, moved::elsewhere::Sort::B(2)]
    );
    drop(db);
    // And back: every spelling is the same type.
    drop(tabula::open::<model::S>(dir.path(), Options::new()).unwrap());
}

mod keys_v1 {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, tabula::Key)]
    pub struct At {
        pub block: u64,
        pub index: u32,
    }

    #[derive(Table)]
    #[table(name = "events", key = At, value = String)]
    pub struct Events;

    #[derive(Schema)]
    pub struct S(Events);
}

mod keys_v2 {
    use super::*;

    /// The key struct renamed: same fields, same encoding.
    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, tabula::Key)]
    pub struct Position {
        pub block: u64,
        pub index: u32,
    }

    #[derive(Table)]
    #[table(name = "events", key = Position, value = String)]
    pub struct Events;

    #[derive(Schema)]
    pub struct S(Events);

    /// A key field renamed is a change, as for values.
    #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, tabula::Key)]
    pub struct Renamed {
        pub height: u64,
        pub index: u32,
    }

    #[derive(Table)]
    #[table(name = "events", key = Renamed, value = String)]
    pub struct EventsByHeight;

    #[derive(Schema)]
    pub struct R(EventsByHeight);
}

#[test]
fn a_renamed_key_struct_is_the_same_key_and_a_renamed_key_field_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<keys_v1::S>(dir.path(), Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    let at = keys_v1::At { block: 3, index: 1 };
    tx.put::<keys_v1::Events>(&at, &"e".to_string()).unwrap();
    tx.commit().unwrap();
    drop(db);
    let db = tabula::open::<keys_v2::S>(dir.path(), Options::new()).unwrap();
    let pos = keys_v2::Position { block: 3, index: 1 };
    assert_eq!(
        db.read().unwrap().get::<keys_v2::Events>(&pos).unwrap(),
        Some("e".to_string())
    );
    drop(db);
    let err = tabula::open::<keys_v2::R>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::SchemaMismatch {
                what: "key encoding",
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("(`identity::keys_v2::EventsByHeight`)")
            && msg.contains("m.rekey::<EventsByHeight, OldKey>(|old| ...)"),
        "{msg}"
    );
}

// ---- records written by the release before ---------------------------------------------------

/// Rewrites the record of `table` as the release before complete tracing wrote it: the value
/// type spelled `spelled`, and the shape kept (`keep_shape`, for types serde-reflection could
/// finish) or dropped (for an enum reached only through a `Vec`, `Option` or map).
fn rewrite_as_previous_release(path: &Path, table: &str, spelled: &str, keep_shape: bool) {
    let mut boot =
        tabula_core::startup::Bootstrap::begin(path, &Options::new(), 0).expect("bootstrap");
    let bytes = boot.meta_get("schema").unwrap().unwrap();
    let mut record: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let entry = record["tables"][table].as_object_mut().unwrap();
    entry.insert("value".into(), format!("bincode<{spelled}>").into());
    if !keep_shape {
        entry.remove("shape");
    }
    boot.meta_put("schema", &serde_json::to_vec(&record).unwrap())
        .unwrap();
    boot.checkpoint().unwrap();
}

fn recorded_table(path: &Path, table: &str) -> serde_json::Value {
    let mut boot = tabula_core::startup::Bootstrap::begin(path, &Options::new().read_only(true), 0)
        .expect("bootstrap");
    let bytes = boot.meta_get("schema").unwrap().unwrap();
    let record: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    record["tables"][table].clone()
}

mod changed_thing {
    use super::*;

    value_type! {
        pub struct Thing { pub id: u64, pub kinds: Vec<Kind>, pub note: Option<String> }
        pub enum Kind { A, B(u8), C }
    }

    #[derive(Table)]
    #[table(name = "things", key = u64, value = model::Thing)]
    pub struct Things;

    #[derive(Schema)]
    pub struct S(Things);

    pub mod model {
        pub use super::Thing;
    }
}

#[test]
fn a_previous_record_without_shape_is_trusted_by_its_spelling_once_then_compared_by_structure() {
    let dir = tempfile::tempdir().unwrap();
    write_v1::<model::Things, model::S>(dir.path(), &model::thing());
    rewrite_as_previous_release(dir.path(), "things", "model::Thing", false);

    // Spelled as recorded: trusted, as the previous release trusted it; the structure is
    // recorded now.
    drop(tabula::open::<model::S>(dir.path(), Options::new()).unwrap());
    let recorded = recorded_table(dir.path(), "things");
    assert!(
        recorded["shape"].as_str().unwrap().contains("\"Kind\""),
        "{recorded}"
    );

    // From then on a change is caught even though the spelling stays `model::Thing`.
    let err = tabula::open::<changed_thing::S>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`Thing.kinds[_]` (`Kind`): variant `C` added"),
        "{err}"
    );
}

#[test]
fn a_previous_record_without_shape_and_another_spelling_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    write_v1::<model::Things, model::S>(dir.path(), &model::thing());
    rewrite_as_previous_release(dir.path(), "things", "model::Thing", false);

    let err = tabula::open::<imported::S>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::SchemaMismatch {
                what: "value type",
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("open the database once with the previous declaration `value = model::Thing`"),
        "{msg}"
    );
    // Which works: the previous spelling records the structure, then the new one matches it.
    drop(tabula::open::<model::S>(dir.path(), Options::new()).unwrap());
    drop(tabula::open::<imported::S>(dir.path(), Options::new()).unwrap());
}

#[test]
fn a_previous_record_with_a_shape_compares_by_structure_whatever_the_spelling() {
    let dir = tempfile::tempdir().unwrap();
    write_v1::<model::Things, model::S>(dir.path(), &model::thing());
    // `bincode<model::Thing>` and serde-reflection's shape, as the previous release recorded
    // for types it could finish (the tracer writes the same text for those).
    rewrite_as_previous_release(dir.path(), "things", "model::Thing", true);
    let (db, report) = tabula::open_with_report::<moved::S>(dir.path(), Options::new()).unwrap();
    assert!(report.record_written, "the new spelling is recorded");
    assert_eq!(
        db.read()
            .unwrap()
            .get::<moved::Items>(&1)
            .unwrap()
            .unwrap()
            .id,
        9
    );
    drop(db);
    assert_eq!(
        recorded_table(dir.path(), "things")["value"],
        "bincode<elsewhere::Record>"
    );
}

// ---- value types that cannot be traced -------------------------------------------------------

/// A colour code: `#` and six characters. Its `Deserialize` refuses every sample the tracer
/// offers, so its structure cannot be traced past it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Code(String);

impl TryFrom<String> for Code {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.len() == 7 && s.starts_with('#') {
            Ok(Code(s))
        } else {
            Err(format!("`{s}` is not a colour code"))
        }
    }
}

impl From<Code> for String {
    fn from(c: Code) -> String {
        c.0
    }
}

mod paint {
    use super::*;

    value_type! {
        pub struct Paint { pub name: String, pub code: Code, pub layers: u8 }
        pub struct Renamed { pub title: String, pub code: Code, pub layers: u8 }
    }

    pub fn paint() -> Paint {
        Paint {
            name: "red".into(),
            code: Code("#ff0000".into()),
            layers: 2,
        }
    }

    pub mod unversioned {
        use super::*;
        #[derive(Table)]
        #[table(name = "paints", key = u64, value = Paint)]
        pub struct Paints;
        #[derive(Schema)]
        pub struct S(Paints);
    }

    pub mod v1 {
        use super::*;
        #[derive(Table)]
        #[table(name = "paints", key = u64, value = Paint, value_version = 1)]
        pub struct Paints;
        #[derive(Schema)]
        pub struct S(Paints);
    }

    pub mod v2 {
        use super::*;
        #[derive(Table)]
        #[table(name = "paints", key = u64, value = Paint, value_version = 2)]
        pub struct Paints;
        #[derive(Schema)]
        pub struct S(Paints);
    }

    /// A change before the point the trace stops at, without a new version.
    pub mod renamed_field {
        use super::*;
        #[derive(Table)]
        #[table(name = "paints", key = u64, value = Renamed, value_version = 1)]
        pub struct Paints;
        #[derive(Schema)]
        pub struct S(Paints);
    }
}

#[test]
fn an_untraceable_value_type_needs_a_stated_version_which_then_identifies_it() {
    let dir = tempfile::tempdir().unwrap();
    // No version: refused before the file is touched, saying what to add.
    let err = tabula::open::<paint::unversioned::S>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidTable { .. }), "{msg}");
    assert!(
        msg.contains("(`identity::paint::unversioned::Paints`)")
            && msg.contains("`#[table(.., value_version = 1)]`")
            && msg.contains("is not a colour code"),
        "{msg}"
    );
    assert!(!dir.path().join("mdbx.dat").exists(), "nothing was created");

    // Version 1: opens, records the version and what the trace saw.
    write_v1::<paint::v1::Paints, paint::v1::S>(dir.path(), &paint::paint());
    let recorded = recorded_table(dir.path(), "paints");
    assert_eq!(recorded["value_version"], 1, "{recorded}");
    assert!(recorded.get("shape").is_none(), "{recorded}");
    assert!(
        recorded["partial_shape"]
            .as_str()
            .unwrap()
            .contains("\"name\""),
        "{recorded}"
    );
    drop(tabula::open::<paint::v1::S>(dir.path(), Options::new()).unwrap());

    // What the trace saw still counts: a renamed field before the untraceable one is refused.
    let err = tabula::open::<paint::renamed_field::S>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.to_string().contains("field `name` renamed to `title`"),
        "{err}"
    );

    // Version 2 without a step: refused; with one: converted.
    let err = tabula::open::<paint::v2::S>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::SchemaMismatch {
                what: "value version",
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.contains("stored value version is `1` but the code declares `2`")
            && msg.contains("m.transform::<Paints, OldPaint>(|old| ...)"),
        "{msg}"
    );
    let steps = Migrations::new().step(2, "more-layers", |m| {
        m.transform::<paint::v2::Paints, paint::Paint>(|old| paint::Paint {
            layers: old.layers + 1,
            ..old
        })
    });
    let (db, _) = tabula::open_with::<paint::v2::S>(dir.path(), Options::new(), &steps).unwrap();
    assert_eq!(
        db.read()
            .unwrap()
            .get::<paint::v2::Paints>(&1)
            .unwrap()
            .unwrap()
            .layers,
        3
    );
}

// ---- the seal at run time --------------------------------------------------------------------

/// A table implemented by hand, bypassing the derive (which refuses the reserved name at
/// compile time). The seal's name has to be written out.
pub struct Meta;
impl tabula::__private::ImplementedByDeriveTableOnly for Meta {}
impl Table for Meta {
    const NAME: &'static str = "__tabula_meta";
    const FLAGS: tabula::TableFlags = tabula::TableFlags::NONE;
    type Key = u64;
    type Value = Vec<u8>;
    type Codec = tabula::Raw;
    const VALUE_TYPE: &'static str = "Vec<u8>";
    const RUST_NAME: &'static str = "identity::Meta";
}

#[derive(Schema)]
pub struct WithMeta(Meta);

#[derive(Table)]
#[table(name = "plain", key = u64, value = u64)]
pub struct Plain;

#[derive(Schema)]
pub struct PlainSchema(Plain);

/// Two tables with one name, in a schema implemented by hand (the derive refuses it at compile
/// time).
pub struct Twice;
impl Schema for Twice {
    const TABLES: &'static [tabula::TableInfo] = &[
        tabula::TableInfo::of::<Plain>(),
        tabula::TableInfo::of::<Plain>(),
    ];
}

#[test]
fn reserved_and_repeated_names_are_refused_at_run_time_whatever_implemented_the_traits() {
    let dir = tempfile::tempdir().unwrap();
    write_v1::<Plain, PlainSchema>(dir.path(), &5);

    let err = tabula::open::<WithMeta>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidTable { .. }), "{msg}");
    assert!(
        msg.contains("table `__tabula_meta` (`identity::Meta`)") && msg.contains("reserved"),
        "{msg}"
    );
    let err = tabula::open::<Twice>(dir.path(), Options::new())
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the schema lists another table with this name (`identity::Plain`)"),
        "{err}"
    );
    // A migration step cannot reach the meta table either, by name or through a table type.
    for steps in [
        Migrations::new().step(2, "drop-meta", |m| m.drop_table("__tabula_meta")),
        Migrations::new().step(2, "rename-meta", |m| {
            m.rename_table::<Plain>("__tabula_meta")
        }),
        Migrations::new().step(2, "overwrite-meta", |m| {
            m.run("overwrite", |tx| tx.put::<Meta>(&1, &b"x".to_vec()))
        }),
    ] {
        let err = tabula::open_with::<PlainSchema>(dir.path(), Options::new(), &steps)
            .map(|_| ())
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Migration { .. }), "{msg}");
        assert!(
            msg.contains("`__tabula_meta`") && msg.contains("reserved"),
            "{msg}"
        );
    }
    // The record and the data are intact.
    let db = tabula::open::<PlainSchema>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().get::<Plain>(&1).unwrap(), Some(5));
}

// ---- cost at open ------------------------------------------------------------------------------

macro_rules! hundred_tables {
    ($($t:ident)*) => {
        mod hundred {
            use super::*;

            value_type! {
                pub struct Row { pub id: u64, pub owner: String, pub tags: Vec<Tag>, pub last: Option<Tag>,
                                 pub amounts: BTreeMap<String, (u64, Option<Tag>)> }
                pub enum Tag { A, B(u32), C { x: u8, y: Vec<u8> }, D(Box<Tag>) }
            }

            $(
                #[derive(Table)]
                #[table(key = u64, value = Row)]
                pub struct $t;
            )*

            #[derive(Schema)]
            pub struct S($($t),*);
        }
    };
}

hundred_tables!(
    T00 T01 T02 T03 T04 T05 T06 T07 T08 T09 T10 T11 T12 T13 T14 T15 T16 T17 T18 T19
    T20 T21 T22 T23 T24 T25 T26 T27 T28 T29 T30 T31 T32 T33 T34 T35 T36 T37 T38 T39
    T40 T41 T42 T43 T44 T45 T46 T47 T48 T49 T50 T51 T52 T53 T54 T55 T56 T57 T58 T59
    T60 T61 T62 T63 T64 T65 T66 T67 T68 T69 T70 T71 T72 T73 T74 T75 T76 T77 T78 T79
    T80 T81 T82 T83 T84 T85 T86 T87 T88 T89 T90 T91 T92 T93 T94 T95 T96 T97 T98 T99
);

/// Shapes are traced at every open: the cost for 100 tables, printed (not asserted).
#[test]
fn a_hundred_table_schema_traces_and_verifies_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let declared = tabula_core::startup::declare(hundred::S::TABLES).unwrap();
    let traced = started.elapsed();
    assert_eq!(declared.len(), 100);
    assert!(declared.iter().all(|r| r.shape.is_some()));
    let started = std::time::Instant::now();
    let (_, report) = tabula::open_with_report::<hundred::S>(dir.path(), Options::new()).unwrap();
    let created = started.elapsed();
    assert_eq!(report.created.len(), 100);
    let started = std::time::Instant::now();
    let (_, report) = tabula::open_with_report::<hundred::S>(dir.path(), Options::new()).unwrap();
    let verified = started.elapsed();
    assert_eq!(report.verified.len(), 100);
    assert!(!report.record_written);
    println!(
        "100 tables: tracing {traced:?}; open creating them {created:?}; open verifying them \
         {verified:?}"
    );
}

mod first_problem {
    use tabula::{Schema, Table};

    #[derive(Table)]
    #[table(name = "first", key = u64, value = String)]
    pub struct First;
    #[derive(Table)]
    #[table(name = "second", key = u64, value = u32)]
    pub struct Second;
    #[derive(Schema)]
    pub struct Before(First, Second);

    /// `first` with another value type.
    #[derive(Table)]
    #[table(name = "first", key = u64, value = u64)]
    pub struct FirstChanged;
    /// A table the file does not have.
    #[derive(Table)]
    #[table(name = "third", key = u64, value = u32)]
    pub struct Third;
    #[derive(Schema)]
    pub struct After(FirstChanged, Second, Third);
    #[derive(Schema)]
    pub struct WithThird(First, Second, Third);
}

/// The startup step opens every table's handle before it checks them; the error is still that
/// of the first table in schema order with a problem: a changed `first` is reported, not the
/// missing `third` after it (read-only) — and the `third` a read-write open would create is not
/// left behind when `first` is refused.
#[test]
fn the_first_table_with_a_problem_is_reported_and_nothing_is_created() {
    use first_problem::{After, Before, WithThird};
    let dir = tempfile::tempdir().unwrap();
    drop(tabula::open::<Before>(dir.path(), Options::new()).unwrap());
    for read_only in [true, false] {
        let err = tabula::open::<After>(dir.path(), Options::new().read_only(read_only))
            .err()
            .unwrap_or_else(|| panic!("read_only {read_only}: a changed `first` opened"));
        match err {
            Error::SchemaMismatch { table, what, .. } => {
                assert_eq!((table.as_str(), what), ("first", "value structure"));
            }
            other => panic!("read_only {read_only}: expected first's mismatch, got {other}"),
        }
    }
    match tabula::open::<WithThird>(dir.path(), Options::new().read_only(true)) {
        Err(Error::TableMissing { table, .. }) => assert_eq!(table, "third"),
        Err(other) => panic!("expected `third` missing, got {other}"),
        Ok(_) => panic!("the refused open left `third` created"),
    }
}
