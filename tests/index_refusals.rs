//! A refused write of an indexed table changes nothing: every write form that takes an indexed
//! table (`put` of a new row and over an existing one, `insert`, `append`, `put_bytes`, a write
//! cursor's `upsert`/`insert`/`append`/`delete_current`, the appender, a `put` in a nested
//! transaction, `delete`, `delete_range`, `retain`, `retain_bytes`, `pop_first`, `pop_last`)
//! against every refusal it can meet (an index key too large for a non-unique and for a unique
//! index table, a row key too large for the table, a unique index key another row holds, an
//! index key function that panics, a full map; a delete meets only the last two). An index
//! entry's value, the row's key, cannot be too large for the index: libmdbx's value limit of a
//! dupsort table is the key limit of a plain one (`valsize_max` in mdbx.c), which the row's key
//! already met; and a row value over the limit of a table without `dupsort` (about 1 GiB) is
//! not written here. After each refused write the rows, every index table and
//! the key watchers are exactly as before, checked against a model: the index tables equal
//! their recomputation from the model's rows, `check_indexes` finds nothing, and the watchers of
//! the table and of an index receive only what the transaction did besides the refused write.
//! Where the engine lets the transaction go on (every refusal but a full map), it is usable
//! afterwards: a later write and the commit succeed. A full map leaves the transaction unusable
//! (libmdbx marks it `MDBX_TXN_ERROR`, "Transaction is unusable after an error", mdbx.h), so
//! there the commit must be refused and the database equal its state before the transaction;
//! in a nested transaction only the nested one is lost, and its parent goes on.
//!
//! Every case is fixed (no randomness): each form × refusal runs on its own database.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::{Deserialize, Serialize};
use tabula::{
    Change, Db, Error, Index, KeyReceiver, Options, Part, Received, RwTx, Schema, SyncMode, Table,
    TableFlags,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Item {
    group: String,
    code: Option<u32>,
    name: Option<String>,
    pad: Vec<u8>,
}

#[derive(Table)]
#[table(name = "items", key = String, value = Item, indexed)]
struct Items;

/// Not unique: a dupsort table whose values are the rows' keys.
#[derive(Index)]
#[index(on = Items, key = String, by = group)]
struct ByGroup;

#[derive(Index)]
#[index(on = Items, key = u32, unique, by = code)]
struct ByCode;

#[derive(Index)]
#[index(on = Items, key = String, unique, by = name)]
struct ByName;

/// Panics for the row whose key [`FUSE`] holds.
#[derive(Index)]
#[index(on = Items, key = u8, by = fuse)]
struct ByFuse;

/// Filler for the full-map cases (no indexes).
#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>)]
struct Blobs;

#[derive(Schema)]
struct App(Items, ByGroup, ByCode, ByName, ByFuse, Blobs);

fn group(_: &String, i: &Item) -> String {
    i.group.clone()
}
fn code(_: &String, i: &Item) -> Option<u32> {
    i.code
}
fn name(_: &String, i: &Item) -> Option<String> {
    i.name.clone()
}
fn fuse(pk: &String, _: &Item) -> u8 {
    if FUSE.with(|f| f.borrow().as_deref() == Some(pk.as_str())) {
        panic!("the index key function of `ByFuse` panics for {pk:?} on purpose");
    }
    0
}

thread_local! {
    /// The row key `fuse` panics for.
    static FUSE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Arms the fuse for `pk` while alive.
struct Armed;
impl Armed {
    fn new(pk: &str) -> Armed {
        FUSE.with(|f| *f.borrow_mut() = Some(pk.to_string()));
        Armed
    }
}
impl Drop for Armed {
    fn drop(&mut self) {
        FUSE.with(|f| *f.borrow_mut() = None);
    }
}

type Model = BTreeMap<String, Item>;

fn baseline() -> Model {
    (0..10u32)
        .map(|i| {
            let item = Item {
                group: format!("g{}", i % 3),
                code: Some(i),
                name: Some(format!("name{i}")),
                pad: vec![i as u8; 8],
            };
            (format!("k{i:02}"), item)
        })
        .collect()
}

/// The index tables' entries.
type Entries = (
    BTreeSet<(String, String)>,
    BTreeSet<(u32, String)>,
    BTreeSet<(String, String)>,
    BTreeSet<(u8, String)>,
);

fn recomputed(model: &Model) -> Entries {
    let mut e = Entries::default();
    for (k, item) in model {
        e.0.insert((item.group.clone(), k.clone()));
        if let Some(c) = item.code {
            e.1.insert((c, k.clone()));
        }
        if let Some(n) = &item.name {
            e.2.insert((n.clone(), k.clone()));
        }
        e.3.insert((0, k.clone()));
    }
    e
}

fn stored<H: tabula::Handle<Schema = App>>(tx: &tabula::Reads<H>) -> (Model, Entries) {
    let rows = tx.iter::<Items>().map(Result::unwrap).collect();
    let e = (
        tx.iter::<ByGroup>().map(Result::unwrap).collect(),
        tx.iter::<ByCode>().map(Result::unwrap).collect(),
        tx.iter::<ByName>().map(Result::unwrap).collect(),
        tx.iter::<ByFuse>().map(Result::unwrap).collect(),
    );
    (rows, e)
}

/// The rows equal `model` and every index its recomputation.
fn assert_state<H: tabula::Handle<Schema = App>>(tx: &tabula::Reads<H>, model: &Model, at: &str) {
    let (rows, entries) = stored(tx);
    assert_eq!(&rows, model, "{at}: the rows");
    assert_eq!(entries, recomputed(model), "{at}: the index tables");
}

fn assert_checked(db: &Db<App>, model: &Model, at: &str) {
    assert_state(&db.read().unwrap(), model, at);
    let check = db.check_indexes(10).unwrap();
    assert!(check.problems.is_empty(), "{at}: {check:?}");
}

/// The write forms.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    Put,
    /// `put` over the existing row `k03`.
    PutOver,
    Insert,
    Append,
    PutBytes,
    CursorUpsert,
    CursorInsert,
    CursorAppend,
    Appender,
    NestedPut,
    Delete,
    DeleteRange,
    Retain,
    RetainBytes,
    PopFirst,
    PopLast,
    CursorDelete,
}

const FORMS: [Form; 17] = [
    Form::Put,
    Form::PutOver,
    Form::Insert,
    Form::Append,
    Form::PutBytes,
    Form::CursorUpsert,
    Form::CursorInsert,
    Form::CursorAppend,
    Form::Appender,
    Form::NestedPut,
    Form::Delete,
    Form::DeleteRange,
    Form::Retain,
    Form::RetainBytes,
    Form::PopFirst,
    Form::PopLast,
    Form::CursorDelete,
];

impl Form {
    fn writes_a_row(self) -> bool {
        !matches!(
            self,
            Form::Delete
                | Form::DeleteRange
                | Form::Retain
                | Form::RetainBytes
                | Form::PopFirst
                | Form::PopLast
                | Form::CursorDelete
        )
    }

    fn appends(self) -> bool {
        matches!(self, Form::Append | Form::CursorAppend | Form::Appender)
    }

    /// A key for a new row: after every baseline key for the appending forms.
    fn new_key(self, len: usize) -> String {
        let lead = if self.appends() { "z" } else { "n" };
        format!("{lead}{}", "x".repeat(len.max(1) - 1))
    }

    /// The rows a delete form takes from `model`, and the row whose index function is made to
    /// panic (one in the middle, so a form that deletes row by row would have deleted some).
    fn doomed(self, model: &Model) -> (Vec<String>, String) {
        let keys: Vec<String> = model.keys().cloned().collect();
        let doomed: Vec<String> = match self {
            Form::Delete | Form::CursorDelete => vec!["k05".into()],
            Form::DeleteRange => keys[2..8].to_vec(),
            Form::Retain | Form::RetainBytes => keys.iter().step_by(2).cloned().collect(),
            Form::PopFirst => vec![keys[0].clone()],
            Form::PopLast => vec![keys[keys.len() - 1].clone()],
            _ => unreachable!(),
        };
        let middle = doomed[doomed.len() / 2].clone();
        (doomed, middle)
    }

    /// Runs the form: writes `(pk, item)` or deletes its rows.
    fn run(self, tx: &mut RwTx<'_, App>, pk: &str, item: &Item) -> Result<(), Error> {
        let pk = pk.to_string();
        match self {
            Form::Put | Form::PutOver => tx.put::<Items>(&pk, item),
            Form::Insert => tx.insert::<Items>(&pk, item),
            Form::Append => tx.append::<Items>(&pk, item),
            Form::PutBytes => {
                let mut buf = Vec::new();
                let v = <tabula::Bincode<Item> as tabula::Value>::encode(item, &mut buf).unwrap();
                tx.put_bytes::<Items>(pk.as_bytes(), v)
            }
            Form::CursorUpsert => tx.cursor_mut::<Items>()?.upsert(&pk, item),
            Form::CursorInsert => tx.cursor_mut::<Items>()?.insert(&pk, item),
            Form::CursorAppend => tx.cursor_mut::<Items>()?.append(&pk, item),
            Form::Appender => tx.appender::<Items>()?.append(&pk, item),
            Form::NestedPut => tx.nested(|tx| tx.put::<Items>(&pk, item)),
            Form::Delete => tx.delete::<Items>("k05").map(|found| assert!(found)),
            Form::DeleteRange => tx
                .delete_range::<Items>("k02".to_string().."k08".to_string())
                .map(|n| assert_eq!(n, 6)),
            Form::Retain => {
                let odd = |k: &String| k.as_bytes()[2] % 2 == 1;
                tx.retain::<Items>(|k, _| odd(k)).map(|n| assert_eq!(n, 5))
            }
            Form::RetainBytes => tx
                .retain_bytes::<Items>(.., |k, _| k[2] % 2 == 1)
                .map(|n| assert_eq!(n, 5)),
            Form::PopFirst => tx.pop_first::<Items>().map(|r| assert!(r.is_some())),
            Form::PopLast => tx.pop_last::<Items>().map(|r| assert!(r.is_some())),
            Form::CursorDelete => {
                let mut c = tx.cursor_mut::<Items>()?;
                assert!(c.seek_exact(&"k05".to_string())?.is_some());
                c.delete_current()
            }
        }
    }
}

/// The refusals.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Refusal {
    /// An index key over the index table's key limit.
    IndexKeyTooLarge,
    /// A key over the key limit of a unique index.
    UniqueKeyTooLarge,
    /// A row key over the table's key limit.
    RowKeyTooLarge,
    /// A unique index key another row holds.
    Unique,
    /// An index key function that panics.
    Panic,
    MapFull,
}

const REFUSALS: [Refusal; 6] = [
    Refusal::IndexKeyTooLarge,
    Refusal::UniqueKeyTooLarge,
    Refusal::RowKeyTooLarge,
    Refusal::Unique,
    Refusal::Panic,
    Refusal::MapFull,
];

fn options() -> Options {
    Options::new().sync(SyncMode::NoMetaSync)
}

/// The database with the baseline rows committed, and watchers of the table and of an index.
struct Case {
    _dir: tempfile::TempDir,
    db: Db<App>,
    items: KeyReceiver<Items>,
    groups: KeyReceiver<ByGroup>,
}

impl Case {
    fn new(options: Options) -> Case {
        let (dir, db) = tempdb::open_with::<App>(options);
        let mut tx = db.write().unwrap();
        for (k, item) in baseline() {
            tx.put::<Items>(&k, &item).unwrap();
        }
        tx.commit().unwrap();
        let items = db.watch::<Items>(.., 1000);
        let groups = db.watch::<ByGroup>(.., 1000);
        Case {
            _dir: dir,
            db,
            items,
            groups,
        }
    }

    /// What the watchers received since the last call: the table's keys put and deleted, and
    /// the index's (index key, row key) entries put and deleted.
    fn drain(&self) -> (Vec<String>, Vec<String>) {
        let mut items = Vec::new();
        while let Some(change) = self.items.try_recv() {
            items.push(match change.unwrap() {
                Received::Event(Change::Put { key, .. }) => format!("put {key}"),
                Received::Event(Change::Delete { key, .. }) => format!("delete {key}"),
                other => format!("{other:?}"),
            });
        }
        let mut groups = Vec::new();
        while let Some(change) = self.groups.try_recv() {
            groups.push(match change.unwrap() {
                Received::Event(Change::Put { key, value, .. }) => format!("put {key} {value:?}"),
                Received::Event(Change::Delete { key, value, .. }) => {
                    format!("delete {key} {value:?}")
                }
                other => format!("{other:?}"),
            });
        }
        (items, groups)
    }
}

/// The row a put form writes for `refusal`, under which key, and the error it must give.
fn the_write(form: Form, refusal: Refusal, db: &Db<App>) -> Option<(String, Item)> {
    let table_key = db.max_key_size(TableFlags::NONE);
    let plain = Item {
        group: "g9".into(),
        code: Some(77),
        name: None,
        pad: vec![1; 8],
    };
    let pk = if form == Form::PutOver {
        "k03".to_string()
    } else {
        form.new_key(3)
    };
    Some(match refusal {
        Refusal::IndexKeyTooLarge => (
            pk,
            Item {
                group: "g".repeat(5000),
                ..plain
            },
        ),
        Refusal::UniqueKeyTooLarge => (
            pk,
            Item {
                name: Some("u".repeat(5000)),
                ..plain
            },
        ),
        Refusal::RowKeyTooLarge if form != Form::PutOver => (form.new_key(table_key + 1), plain),
        Refusal::Unique => (
            pk,
            Item {
                code: Some(1), // k01's
                ..plain
            },
        ),
        Refusal::Panic => (pk, plain),
        _ => return None,
    })
}

fn assert_refusal(form: Form, refusal: Refusal, r: &Result<(), Error>) {
    let ok = match refusal {
        Refusal::IndexKeyTooLarge => matches!(
            r,
            Err(Error::TooLarge {
                table: "ByGroup",
                part: Part::Key,
                ..
            })
        ),
        Refusal::UniqueKeyTooLarge => matches!(
            r,
            Err(Error::TooLarge {
                table: "ByName",
                part: Part::Key,
                ..
            })
        ),
        Refusal::RowKeyTooLarge => matches!(
            r,
            Err(Error::TooLarge {
                table: "items",
                part: Part::Key,
                ..
            })
        ),
        Refusal::Unique => matches!(
            r,
            Err(Error::UniqueViolation {
                table: "items",
                index: "ByCode",
                ..
            })
        ),
        Refusal::Panic | Refusal::MapFull => unreachable!(),
    };
    assert!(ok, "{form:?} × {refusal:?}: {r:?}");
}

/// One form × one refusal (not a full map): the refused write leaves everything as before, and
/// the transaction goes on.
fn refused(form: Form, refusal: Refusal) {
    let at = format!("{form:?} × {refusal:?}");
    let case = Case::new(options());
    let model = baseline();
    let mut tx = case.db.write().unwrap();
    if form.writes_a_row() {
        let Some((pk, item)) = the_write(form, refusal, &case.db) else {
            return;
        };
        let r = if refusal == Refusal::Panic {
            let _armed = Armed::new(&pk);
            let caught = catch_unwind(AssertUnwindSafe(|| form.run(&mut tx, &pk, &item)));
            assert!(
                caught.is_err(),
                "{at}: the key function did not panic: {caught:?}"
            );
            None
        } else {
            Some(form.run(&mut tx, &pk, &item))
        };
        if let Some(r) = r {
            assert_refusal(form, refusal, &r);
        }
    } else {
        if refusal != Refusal::Panic {
            return; // a delete meets no size or unique refusal
        }
        let (_, middle) = form.doomed(&model);
        let _armed = Armed::new(&middle);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            form.run(&mut tx, "", &baseline()["k00"])
        }));
        assert!(
            caught.is_err(),
            "{at}: the key function did not panic: {caught:?}"
        );
    }
    assert_state(&tx, &model, &at);
    // The transaction goes on: a later write, and the commit.
    let after = Item {
        group: "g5".into(),
        code: Some(55),
        name: Some("after".into()),
        pad: vec![],
    };
    tx.put::<Items>(&"m-after".to_string(), &after).unwrap();
    let mut model = model;
    model.insert("m-after".into(), after);
    assert_state(&tx, &model, &format!("{at}, then a put"));
    tx.commit().unwrap();
    assert_checked(&case.db, &model, &format!("{at}, committed"));
    assert_eq!(
        case.drain(),
        (
            vec!["put m-after".to_string()],
            vec!["put g5 Some(\"m-after\")".to_string()]
        ),
        "{at}: the watchers see the later put only"
    );
}

/// What a probe of the full-map search found.
enum Probe {
    /// The filler itself did not fit.
    FillerFull,
    /// The form's write fit.
    Fits,
    /// The form's write found the map full: checked.
    Checked,
}

/// One form against a full map: `fillers` filler values written first in the same transaction,
/// then the form's write with large rows and index keys.
fn probe_full(form: Form, fillers: u64) -> Probe {
    let at = format!("{form:?} × MapFull with {fillers} fillers");
    let case = Case::new(options().max_size(1 << 20).growth_step(64 << 10));
    let model = baseline();
    let mut tx = case.db.write().unwrap();
    for n in 0..fillers {
        match tx.put::<Blobs>(&n, &vec![7u8; 512]) {
            Ok(()) => {}
            Err(Error::MapFull { .. }) => return Probe::FillerFull,
            Err(e) => panic!("{at}: {e}"),
        }
    }
    let big = Item {
        group: "g".repeat(1500),
        code: Some(900),
        name: Some("n".repeat(1500)),
        pad: vec![3; 3000],
    };
    let r = if form.writes_a_row() {
        form.run(&mut tx, &form.new_key(1500), &big)
    } else {
        form.run(&mut tx, "", &big)
    };
    match r {
        Ok(()) => return Probe::Fits,
        Err(Error::MapFull { .. }) => {}
        Err(e) => panic!("{at}: {e}"),
    }
    if form == Form::NestedPut {
        // Only the nested transaction is lost: its parent goes on, without the nested write.
        assert_state(&tx, &model, &at);
        match tx.commit() {
            Ok(()) | Err(Error::MapFull { .. }) => {}
            Err(e) => panic!("{at}: {e}"),
        }
    } else {
        // libmdbx marked the transaction unusable: its commit is refused, and nothing of it
        // is written, as `Error::MapFull` says.
        let committed = tx.commit();
        assert!(committed.is_err(), "{at}: the commit after a full map");
    }
    assert_checked(&case.db, &model, &at);
    assert_eq!(case.drain(), (vec![], vec![]), "{at}: the watchers");
    Probe::Checked
}

/// Finds, by bisection on the fillers, a transaction in which the form's write (not a filler)
/// meets the full map, and checks it.
fn full_map(form: Form) {
    let (mut lo, mut hi) = (0u64, 4096u64);
    while lo <= hi {
        let mid = (lo + hi) / 2;
        match probe_full(form, mid) {
            Probe::Checked => return,
            Probe::Fits => lo = mid + 1,
            Probe::FillerFull if mid == 0 => break,
            Probe::FillerFull => hi = mid - 1,
        }
    }
    panic!("{form:?}: no filler count left the filler room and the form none");
}

/// Every form × every refusal; each cell runs to the end, and the failures are listed together.
#[test]
fn a_refused_write_changes_nothing() {
    let mut failed = Vec::new();
    for form in FORMS {
        for refusal in REFUSALS {
            let cell = catch_unwind(|| {
                if refusal == Refusal::MapFull {
                    full_map(form);
                } else {
                    refused(form, refusal);
                }
            });
            if let Err(panic) = cell {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                // The first lines: a row with a 5,000-byte key would fill the screen.
                let message: String = message.chars().take(300).collect();
                failed.push(format!("{form:?} × {refusal:?}: {message}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} cells failed:\n{}",
        failed.len(),
        FORMS.len() * REFUSALS.len(),
        failed.join("\n")
    );
}
