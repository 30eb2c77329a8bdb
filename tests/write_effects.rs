//! Every write form has every effect of a write (`crates/core/src/pipeline`): for each form —
//! `Tx`'s puts, inserts, appends, deletes, ranges, retains, pops, clears and sequences, the
//! byte-level writes, nested transactions, the write cursor, the appender and the bulk load —
//! on plain, dupsort, subkey and indexed tables, a fresh database is written once and then:
//!
//! - the key watchers of every table (index tables included) received changes that, replayed
//!   on the table as it was, give the table as it is (and name every key whose value changed);
//!   the watchers of values (`Db::watch_values`) received the same changes with the values
//!   written, which replayed give the table's keys and values exactly;
//! - the commit feed reported a commit naming each table that changed;
//! - the indexes are exact (`check_indexes`);
//! - the indexed table and the two dupsort tables are declared `history`: read as of the
//!   seed's version each is the seed again, and an unwind to that version gives back the
//!   seed's rows (and exact indexes);
//! - with the `metrics` feature, one commit metric was recorded per commit the form made.
//!
//! A write form that skips an effect fails here.

#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use tabula::{Change, Db, History, Index, KeyReceiver, Options, Raw, Received, Schema, Table};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Item {
    group: String,
}

#[derive(Table)]
#[table(name = "plain", key = u64, value = String)]
struct Plain;

#[derive(Table)]
#[table(name = "topics", key = u64, value = String, dupsort, history)]
struct Topics;

#[derive(History)]
#[history(on = Topics)]
struct TopicsHistory;

#[derive(Table)]
#[table(name = "subs", key = u64, subkey = u64, value = u64, dupsort, history)]
struct Subs;

#[derive(History)]
#[history(on = Subs)]
struct SubsHistory;

#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Table)]
#[table(name = "items", key = u64, value = Item, indexed, history)]
struct Items;

#[derive(History)]
#[history(on = Items, name = "items_history")]
struct ItemsHistory;

#[derive(Index)]
#[index(on = Items, key = String, by = group)]
struct ByGroup;

fn group(_: &u64, item: &Item) -> String {
    item.group.clone()
}

#[derive(Schema)]
struct App(
    Plain,
    Topics,
    TopicsHistory,
    Subs,
    SubsHistory,
    Blobs,
    Items,
    ByGroup,
    ItemsHistory,
);

fn s(text: &str) -> String {
    text.to_string()
}

fn item(group: &str) -> Item {
    Item {
        group: group.to_string(),
    }
}

/// Keys 10, 20, .. 50 in every table (two values a key in the dupsort tables).
fn seed(db: &Db<App>) {
    let mut tx = db.write().unwrap();
    tx.set_version(SEEDED);
    for k in (10..=50u64).step_by(10) {
        tx.put::<Plain>(&k, &format!("p{k}")).unwrap();
        tx.put::<Topics>(&k, &format!("a{k}")).unwrap();
        tx.put::<Topics>(&k, &format!("b{k}")).unwrap();
        tx.put::<Subs>(&k, &(1, k)).unwrap();
        tx.put::<Subs>(&k, &(2, k)).unwrap();
        tx.put::<Blobs>(&k, &vec![k as u8; 4]).unwrap();
        tx.put::<Items>(&k, &item(if k % 20 == 0 { "even" } else { "odd" }))
            .unwrap();
    }
    tx.commit().unwrap();
}

/// One write form: its name, what it does to the database, and how many commits it makes.
struct Form {
    name: &'static str,
    run: fn(&Db<App>),
    commits: u64,
}

macro_rules! forms {
    ($($name:literal $(commits $n:literal)? => |$db:ident| $body:block)*) => {
        vec![$(Form {
            name: $name,
            run: |$db: &Db<App>| $body,
            commits: forms!(@n $($n)?),
        }),*]
    };
    (@n) => { 1 };
    (@n $n:literal) => { $n };
}

/// A nested transaction's error that undoes it.
#[derive(Debug)]
enum Undo {
    OnPurpose,
    #[allow(dead_code)] // only converted into
    Db(tabula::Error),
}

impl From<tabula::Error> for Undo {
    fn from(e: tabula::Error) -> Self {
        Undo::Db(e)
    }
}

/// The version of the seed's transaction, and of every form's (`Items`, `Topics` and `Subs`
/// record their histories).
const SEEDED: u64 = 1;
const WRITTEN: u64 = 2;

/// Runs `f` in a write transaction and commits.
fn write(db: &Db<App>, f: impl FnOnce(&mut tabula::RwTx<'_, App>) -> tabula::Result<()>) {
    let mut tx = db.write().unwrap();
    tx.set_version(WRITTEN);
    f(&mut tx).unwrap();
    tx.commit().unwrap();
}

fn every_form() -> Vec<Form> {
    forms! {
        // Plain table.
        "put (new key)" => |db| { write(db, |tx| tx.put::<Plain>(&15, &s("new"))) }
        "put (over a key)" => |db| { write(db, |tx| tx.put::<Plain>(&20, &s("over"))) }
        "insert" => |db| { write(db, |tx| tx.insert::<Plain>(&25, &s("ins"))) }
        "append" => |db| { write(db, |tx| tx.append::<Plain>(&60, &s("app"))) }
        "delete" => |db| { write(db, |tx| tx.delete::<Plain>(&30).map(|f| assert!(f))) }
        "delete_range" => |db| {
            write(db, |tx| tx.delete_range::<Plain>(20..=40).map(|n| assert_eq!(n, 3)))
        }
        "retain" => |db| { write(db, |tx| tx.retain::<Plain>(|k, _| k % 20 == 0).map(drop)) }
        "retain_bytes" => |db| {
            write(db, |tx| tx.retain_bytes::<Plain>(15.., |k, _| k[7] % 20 == 0).map(drop))
        }
        "pop_first" => |db| { write(db, |tx| tx.pop_first::<Plain>().map(drop)) }
        "pop_last" => |db| { write(db, |tx| tx.pop_last::<Plain>().map(drop)) }
        "clear" => |db| { write(db, |tx| tx.clear::<Plain>()) }
        "insert_next" => |db| {
            write(db, |tx| {
                tx.delete_range::<Plain>(..)?;
                tx.insert_next::<Plain>(&s("seq")).map(drop)
            })
        }
        "put_bytes" => |db| {
            write(db, |tx| tx.put_bytes::<Plain>(&35u64.to_be_bytes(), &[2, b'h', b'i']))
        }
        "nested (kept)" => |db| {
            write(db, |tx| tx.nested(|tx| tx.put::<Plain>(&45, &s("kept"))))
        }
        "nested (undone)" => |db| {
            write(db, |tx| {
                tx.put::<Plain>(&11, &s("outer"))?;
                let undone: Result<(), Undo> = tx.nested(|tx| {
                    tx.put::<Plain>(&12, &s("undone"))?;
                    tx.delete::<Plain>(&10)?;
                    Err(Undo::OnPurpose)
                });
                assert!(matches!(undone, Err(Undo::OnPurpose)));
                Ok(())
            })
        }
        "cursor upsert" => |db| {
            write(db, |tx| tx.cursor_mut::<Plain>()?.upsert(&20, &s("cur")))
        }
        "cursor insert" => |db| {
            write(db, |tx| tx.cursor_mut::<Plain>()?.insert(&21, &s("cur")))
        }
        "cursor append" => |db| {
            write(db, |tx| tx.cursor_mut::<Plain>()?.append(&99, &s("cur")))
        }
        "cursor delete_current" => |db| {
            write(db, |tx| {
                let mut c = tx.cursor_mut::<Plain>()?;
                c.seek_exact(&30)?;
                c.delete_current()?;
                c.next()?;
                c.delete_current()
            })
        }
        "cursors_mut" => |db| {
            write(db, |tx| {
                let (mut plain, mut topics) = tx.cursors_mut::<(Plain, Topics)>()?;
                plain.upsert(&77, &s("two"))?;
                topics.first()?;
                topics.delete_current()
            })
        }
        "appender" => |db| {
            write(db, |tx| {
                let mut a = tx.appender::<Plain>()?;
                a.append(&70, &s("x"))?;
                a.append(&80, &s("y"))
            })
        }
        "bulk load" commits 3 => |db| {
            let entries = (100..130u64).map(|k| (k, k.to_string()));
            db.bulk_loader::<Plain>().batch_entries(10).load(entries).unwrap();
        }
        // Dupsort table.
        "dupsort put" => |db| { write(db, |tx| tx.put::<Topics>(&10, &s("c10"))) }
        "append_dup" => |db| { write(db, |tx| tx.append_dup::<Topics>(&10, &s("z"))) }
        "dupsort delete" => |db| { write(db, |tx| tx.delete::<Topics>(&20).map(drop)) }
        "delete_dup" => |db| {
            write(db, |tx| tx.delete_dup::<Topics>(&20, &s("a20")).map(|f| assert!(f)))
        }
        "dupsort delete_range" => |db| {
            write(db, |tx| tx.delete_range::<Topics>(20..40).map(drop))
        }
        "dupsort retain" => |db| {
            write(db, |tx| tx.retain::<Topics>(|_, v| v.starts_with('a')).map(drop))
        }
        "dupsort retain_bytes" => |db| {
            write(db, |tx| tx.retain_bytes::<Topics>(.., |_, v| v[1] == b'b').map(drop))
        }
        "dupsort pop_last" => |db| { write(db, |tx| tx.pop_last::<Topics>().map(drop)) }
        "dupsort clear" => |db| { write(db, |tx| tx.clear::<Topics>()) }
        "cursor append_dup" => |db| {
            write(db, |tx| tx.cursor_mut::<Topics>()?.append_dup(&50, &s("z")))
        }
        "cursor delete_current (one value)" => |db| {
            write(db, |tx| {
                let mut c = tx.cursor_mut::<Topics>()?;
                c.last()?;
                c.delete_current()
            })
        }
        "cursor delete_current_dups" => |db| {
            write(db, |tx| {
                let mut c = tx.cursor_mut::<Topics>()?;
                c.first()?;
                c.delete_current_dups()
            })
        }
        "appender append_dup" => |db| {
            write(db, |tx| {
                let mut a = tx.appender::<Topics>()?;
                a.append_dup(&60, &s("a"))?;
                a.append_dup(&60, &s("b"))
            })
        }
        "dupsort bulk load" commits 2 => |db| {
            let entries = (60..70u64).flat_map(|k| [(k, "a".to_string()), (k, "b".to_string())]);
            db.bulk_loader::<Topics>().batch_entries(10).version(WRITTEN).load(entries).unwrap();
        }
        // Subkey table.
        "cursor upsert_dup" => |db| {
            write(db, |tx| tx.cursor_mut::<Subs>()?.upsert_dup(&20, &1, &99))
        }
        "subkey put (a second value of a subkey)" => |db| {
            write(db, |tx| tx.put::<Subs>(&20, &(1, 7)))
        }
        "subkey delete_dup" => |db| {
            write(db, |tx| tx.delete_dup::<Subs>(&30, &(2, 30)).map(|f| assert!(f)))
        }
        "subkey delete" => |db| { write(db, |tx| tx.delete::<Subs>(&40).map(|f| assert!(f))) }
        "subkey cursor delete_current_dups" => |db| {
            write(db, |tx| {
                let mut c = tx.cursor_mut::<Subs>()?;
                c.last()?;
                c.delete_current_dups()
            })
        }
        // Raw bytes, written in place.
        "put_reserve" => |db| {
            write(db, |tx| {
                tx.put_reserve::<Blobs, _>(&20, 3, |room| room.zeroed().fill(7))
            })
        }
        // Indexed table.
        "indexed put (new key)" => |db| { write(db, |tx| tx.put::<Items>(&15, &item("new"))) }
        "indexed put (over a key)" => |db| {
            write(db, |tx| tx.put::<Items>(&20, &item("moved")))
        }
        "indexed insert" => |db| { write(db, |tx| tx.insert::<Items>(&25, &item("ins"))) }
        "indexed append" => |db| { write(db, |tx| tx.append::<Items>(&60, &item("app"))) }
        "indexed delete" => |db| { write(db, |tx| tx.delete::<Items>(&30).map(drop)) }
        "indexed delete_range" => |db| {
            write(db, |tx| tx.delete_range::<Items>(20..=40).map(drop))
        }
        "indexed retain" => |db| {
            write(db, |tx| tx.retain::<Items>(|_, i| i.group == "odd").map(drop))
        }
        "indexed retain_bytes" => |db| {
            write(db, |tx| tx.retain_bytes::<Items>(..30, |_, _| false).map(drop))
        }
        "indexed pop_first" => |db| { write(db, |tx| tx.pop_first::<Items>().map(drop)) }
        "indexed clear" => |db| { write(db, |tx| tx.clear::<Items>()) }
        "indexed put_bytes" => |db| {
            // What `Item { group: "raw" }` encodes to: the string's length, then its bytes.
            write(db, |tx| tx.put_bytes::<Items>(&40u64.to_be_bytes(), &[3, b'r', b'a', b'w']))
        }
        "indexed nested (undone)" => |db| {
            write(db, |tx| {
                let undone: Result<(), Undo> = tx.nested(|tx| {
                    tx.put::<Items>(&10, &item("undone"))?;
                    Err(Undo::OnPurpose)
                });
                assert!(matches!(undone, Err(Undo::OnPurpose)));
                tx.put::<Items>(&11, &item("outer"))
            })
        }
        "indexed cursor upsert" => |db| {
            write(db, |tx| tx.cursor_mut::<Items>()?.upsert(&10, &item("cur")))
        }
        "indexed cursor delete_current" => |db| {
            write(db, |tx| {
                let mut c = tx.cursor_mut::<Items>()?;
                c.first()?;
                c.delete_current()
            })
        }
        "indexed appender" => |db| {
            write(db, |tx| tx.appender::<Items>()?.append(&70, &item("app")))
        }
        "indexed bulk load" commits 2 => |db| {
            let entries = (100..120u64).map(|k| (k, item(if k % 2 == 0 { "b0" } else { "b1" })));
            db.bulk_loader::<Items>().batch_entries(10).version(WRITTEN).load(entries).unwrap();
        }
    }
}

/// A table's entries, as `(key, value)` in their `Debug` forms.
fn contents<T: Table>(db: &Db<App>) -> BTreeSet<(String, String)>
where
    App: tabula::Contains<T>,
    T::Key: std::fmt::Debug,
    T::Value: std::fmt::Debug,
{
    let tx = db.read().unwrap();
    tx.iter::<T>()
        .map(|e| {
            let (k, v) = e.unwrap();
            (format!("{k:?}"), format!("{v:?}"))
        })
        .collect()
}

/// The entries of the `dupsort` table `T` (declared `history`) at the end of `version`, as
/// [`contents`] shows them: every key's values read through its history.
fn dups_as_of<T>(db: &Db<App>, version: u64) -> BTreeSet<(String, String)>
where
    App: tabula::Contains<T>,
    T: tabula::DupSort + tabula::HasHistory + Table<Key = u64>,
    T::Value: std::fmt::Debug,
{
    let tx = db.read().unwrap();
    (0..=200u64)
        .flat_map(|k| {
            let values = tx.dups_as_of::<T>(&k, version).unwrap();
            values
                .into_iter()
                .map(move |v| (format!("{k:?}"), format!("{v:?}")))
        })
        .collect()
}

/// One table's key watcher and watcher of values, and the table before the write.
struct Watched<T: Table> {
    keys: KeyReceiver<T>,
    values: KeyReceiver<T>,
    before: BTreeSet<(String, String)>,
}

/// Every change a receiver holds.
fn drained<T: Table>(receiver: &KeyReceiver<T>, at: &str) -> Vec<Change<T>>
where
    T::Key: std::fmt::Debug,
    T::Value: std::fmt::Debug,
{
    let mut changes = Vec::new();
    while let Some(received) = receiver.try_recv() {
        match received.unwrap() {
            Received::Event(change) => changes.push(change),
            lagged => panic!("{at}: {}: {lagged:?}", T::NAME),
        }
    }
    changes
}

impl<T: Table> Watched<T>
where
    App: tabula::Contains<T>,
    T::Key: std::fmt::Debug,
    T::Value: std::fmt::Debug,
{
    fn new(db: &Db<App>) -> Self {
        Watched {
            keys: db.watch::<T>(.., 1024),
            values: db.watch_values::<T>(.., 1024),
            before: contents::<T>(db),
        }
    }

    /// The watcher's changes, replayed on the table as it was, give the table as it is, and
    /// name every key whose value changed. Returns whether the table changed.
    fn check(self, db: &Db<App>, form: &str) -> bool {
        let after = contents::<T>(db);
        let changes = drained(&self.keys, form);
        let with_values = drained(&self.values, form);
        let at = format!("{form}: table {}: changes {changes:?}", T::NAME);
        // The watcher of values saw the same changes, each put with the value it wrote:
        // replayed, they give the table's entries exactly (for a dupsort table, as the key
        // watcher's do).
        assert_eq!(
            with_values.len(),
            changes.len(),
            "{at}: values {with_values:?}"
        );
        if !T::FLAGS.dupsort {
            let mut rows: std::collections::BTreeMap<String, String> =
                self.before.iter().cloned().collect();
            for change in &with_values {
                match change {
                    Change::Put { key, value, .. } => {
                        let value = value.as_ref().expect("a watcher of values gets the value");
                        rows.insert(format!("{key:?}"), format!("{value:?}"));
                    }
                    Change::Delete { key, .. } => {
                        rows.remove(&format!("{key:?}"));
                    }
                    Change::Cleared { .. } => rows.clear(),
                }
            }
            let rows: BTreeSet<(String, String)> = rows.into_iter().collect();
            assert_eq!(rows, after, "{at}: values {with_values:?}");
        } else {
            assert_eq!(
                format!("{with_values:?}"),
                format!("{changes:?}"),
                "{at}: a dupsort table's changes carry their values either way"
            );
        }
        if T::FLAGS.dupsort {
            // Every (key, value) pair put or deleted is recorded with its value.
            let mut pairs = self.before.clone();
            for change in &changes {
                match change {
                    Change::Put { key, value, .. } => {
                        let value = value.as_ref().expect("a dupsort put names its value");
                        pairs.insert((format!("{key:?}"), format!("{value:?}")));
                    }
                    Change::Delete {
                        key,
                        value: Some(value),
                        ..
                    } => {
                        pairs.remove(&(format!("{key:?}"), format!("{value:?}")));
                    }
                    Change::Delete {
                        key, value: None, ..
                    } => {
                        let key = format!("{key:?}");
                        pairs.retain(|(k, _)| *k != key);
                    }
                    Change::Cleared { .. } => pairs.clear(),
                }
            }
            assert_eq!(pairs, after, "{at}");
        } else {
            let keys = |set: &BTreeSet<(String, String)>| -> BTreeSet<String> {
                set.iter().map(|(k, _)| k.clone()).collect()
            };
            let mut present = keys(&self.before);
            let mut put = BTreeSet::new();
            for change in &changes {
                match change {
                    Change::Put { key, .. } => {
                        present.insert(format!("{key:?}"));
                        put.insert(format!("{key:?}"));
                    }
                    Change::Delete { key, .. } => {
                        present.remove(&format!("{key:?}"));
                    }
                    Change::Cleared { .. } => present.clear(),
                }
            }
            assert_eq!(present, keys(&after), "{at}");
            for (k, v) in &after {
                if !self.before.contains(&(k.clone(), v.clone())) {
                    assert!(put.contains(k), "{at}: key {k} changed unrecorded");
                }
            }
        }
        self.before != after
    }
}

#[cfg(feature = "metrics")]
mod commits {
    //! A recorder of the commit counter, local to the test thread.
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use metrics::{Counter, CounterFn, Gauge, Histogram, Key, KeyName, Metadata, Recorder};
    use metrics::{SharedString, Unit};

    #[derive(Default, Clone)]
    pub struct Commits(pub Arc<AtomicU64>);

    impl CounterFn for Commits {
        fn increment(&self, value: u64) {
            self.0.fetch_add(value, Ordering::Relaxed);
        }
        fn absolute(&self, _: u64) {}
    }

    impl Recorder for Commits {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
            if key.name() == tabula::telemetry::COMMITS {
                Counter::from_arc(Arc::new(self.clone()))
            } else {
                Counter::noop()
            }
        }
        fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
            Gauge::noop()
        }
        fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
            Histogram::noop()
        }
    }
}

#[test]
fn every_write_form_has_every_effect() {
    let forms = every_form();
    for form in &forms {
        let (_dir, db) = tempdb::open_with::<App>(Options::new());
        seed(&db);
        let seeded = contents::<Items>(&db);
        let seeded_topics = contents::<Topics>(&db);
        let seeded_subs = contents::<Subs>(&db);
        let feed = db.subscribe(64);
        let plain = Watched::<Plain>::new(&db);
        let topics = Watched::<Topics>::new(&db);
        let subs = Watched::<Subs>::new(&db);
        let blobs = Watched::<Blobs>::new(&db);
        let items = Watched::<Items>::new(&db);
        let by_group = Watched::<ByGroup>::new(&db);

        #[cfg(feature = "metrics")]
        {
            let recorder = commits::Commits::default();
            metrics::with_local_recorder(&recorder, || (form.run)(&db));
            let recorded = recorder.0.load(std::sync::atomic::Ordering::Relaxed);
            assert_eq!(recorded, form.commits, "{}: commits recorded", form.name);
        }
        #[cfg(not(feature = "metrics"))]
        (form.run)(&db);

        let mut events = Vec::new();
        while let Some(Received::Event(commit)) = feed.try_recv() {
            events.push(commit);
        }
        assert_eq!(
            events.len() as u64,
            form.commits,
            "{}: commit events",
            form.name
        );
        let in_feed = |contains: fn(&tabula::Commit) -> bool| events.iter().any(contains);
        let changed = [
            (
                plain.check(&db, form.name),
                in_feed(|c| c.tables.contains::<App, Plain>()),
            ),
            (
                topics.check(&db, form.name),
                in_feed(|c| c.tables.contains::<App, Topics>()),
            ),
            (
                subs.check(&db, form.name),
                in_feed(|c| c.tables.contains::<App, Subs>()),
            ),
            (
                blobs.check(&db, form.name),
                in_feed(|c| c.tables.contains::<App, Blobs>()),
            ),
            (
                items.check(&db, form.name),
                in_feed(|c| c.tables.contains::<App, Items>()),
            ),
            (
                by_group.check(&db, form.name),
                in_feed(|c| c.tables.contains::<App, ByGroup>()),
            ),
        ];
        assert!(
            changed.iter().any(|(changed, _)| *changed),
            "{}: the form changed nothing",
            form.name
        );
        for (table, (changed, reported)) in changed.iter().enumerate() {
            assert!(
                !changed || *reported,
                "{}: table {table} not in the commit feed",
                form.name
            );
        }
        let check = db.check_indexes(10).unwrap();
        assert!(check.is_ok(), "{}: {:?}", form.name, check.problems);

        // The history of `Items`: as of the seed's version, the seed; unwound, the seed again.
        let now = contents::<Items>(&db);
        let tx = db.read().unwrap();
        let keys: BTreeSet<u64> = (0..=200).collect();
        let as_of: BTreeSet<(String, String)> = keys
            .iter()
            .filter_map(|k| {
                let row = tx.get_as_of::<Items>(k, SEEDED).unwrap()?;
                Some((format!("{k:?}"), format!("{row:?}")))
            })
            .collect();
        drop(tx);
        assert_eq!(
            as_of, seeded,
            "{}: items as of the seed's version",
            form.name
        );
        let now_dups = (contents::<Topics>(&db), contents::<Subs>(&db));
        assert_eq!(
            dups_as_of::<Topics>(&db, SEEDED),
            seeded_topics,
            "{}: topics as of the seed's version",
            form.name
        );
        assert_eq!(
            dups_as_of::<Subs>(&db, SEEDED),
            seeded_subs,
            "{}: subs as of the seed's version",
            form.name
        );
        let mut tx = db.write().unwrap();
        let undone = tx.unwind(SEEDED).unwrap();
        tx.commit().unwrap();
        assert_eq!(
            contents::<Items>(&db),
            seeded,
            "{}: items unwound",
            form.name
        );
        assert_eq!(
            (contents::<Topics>(&db), contents::<Subs>(&db)),
            (seeded_topics.clone(), seeded_subs.clone()),
            "{}: dupsort tables unwound",
            form.name
        );
        assert_eq!(
            undone == 0,
            now == seeded && now_dups == (seeded_topics, seeded_subs),
            "{}: {undone} changes undone",
            form.name
        );
        let check = db.check_indexes(10).unwrap();
        assert!(
            check.is_ok(),
            "{}: after the unwind: {:?}",
            form.name,
            check.problems
        );
    }
    assert!(forms.len() >= 50, "{} forms", forms.len());
}
