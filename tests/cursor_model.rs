//! Cursor positions against a model: random sequences of every cursor call (moves, searches,
//! the moves among a key's values, `current`, `dup_count`, and a write cursor's deletes and
//! writes) on a plain table, a dupsort table and a dupsort table with a subkey, through read
//! and write cursors, checked call by call against a model of where the cursor stands
//! (unpositioned, on an entry, past the last, before the first, after a miss, after a delete).
//!
//! Every pair of state and call is required to have run: the test fails if the random
//! sequences left one out, so a call cannot go unchecked in some state.
//!
//! The seed is printed; `TABULA_SEED=<seed>` replays a run and `TABULA_CURSOR_CASES`
//! sets the number of sequences (default 400).

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeSet;
use std::fmt::Debug;

use tabula::{Cursor, Error, Mode, Options, Rw, Schema, SyncMode, Table};

use random::{Rng, seed};

#[derive(Table)]
#[table(name = "plain", key = u8, value = u32)]
struct Plain;

#[derive(Table)]
#[table(name = "sets", key = u8, value = u8, dupsort)]
struct Sets;

#[derive(Table)]
#[table(name = "storage", key = u8, subkey = u8, value = u32, dupsort)]
struct Storage;

#[derive(Schema)]
struct App(Plain, Sets, Storage);

/// An entry as the model holds it: key, subkey (the value of `sets`, 0 in `plain`), value
/// (0 in `sets`). Entries are kept in the table's order, which is this tuple's order on
/// `(key, subkey)`.
type E = (u8, u8, u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Plain,
    Sets,
    Storage,
}

impl Kind {
    fn dupsort(self) -> bool {
        self != Kind::Plain
    }
}

#[derive(Clone, Copy, Debug)]
enum Call {
    First,
    Last,
    Next,
    Prev,
    Current,
    Seek(u8),
    SeekExact(u8),
    SeekDup(u8, u8),
    GetDup(u8, u8),
    FirstDup,
    LastDup,
    NextDup,
    PrevDup,
    NextNoDup,
    PrevNoDup,
    DupCount,
    DeleteCurrent,
    DeleteCurrentDups,
    /// `upsert` (plain, sets), `upsert_dup` (storage).
    Upsert(u8, u8, u32),
    /// `insert` (plain, sets).
    Insert(u8, u8, u32),
    /// `append` (plain), `append_dup` (sets).
    Append(u8, u8, u32),
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::First => "first",
            Call::Last => "last",
            Call::Next => "next",
            Call::Prev => "prev",
            Call::Current => "current",
            Call::Seek(..) => "seek",
            Call::SeekExact(..) => "seek_exact",
            Call::SeekDup(..) => "seek_dup",
            Call::GetDup(..) => "get_dup",
            Call::FirstDup => "first_dup",
            Call::LastDup => "last_dup",
            Call::NextDup => "next_dup",
            Call::PrevDup => "prev_dup",
            Call::NextNoDup => "next_no_dup",
            Call::PrevNoDup => "prev_no_dup",
            Call::DupCount => "dup_count",
            Call::DeleteCurrent => "delete_current",
            Call::DeleteCurrentDups => "delete_current_dups",
            Call::Upsert(..) => "upsert",
            Call::Insert(..) => "insert",
            Call::Append(..) => "append",
        }
    }

    fn applies(self, kind: Kind, write: bool) -> bool {
        let dup_only = matches!(
            self,
            Call::SeekDup(..)
                | Call::GetDup(..)
                | Call::FirstDup
                | Call::LastDup
                | Call::NextDup
                | Call::PrevDup
                | Call::NextNoDup
                | Call::PrevNoDup
                | Call::DupCount
                | Call::DeleteCurrentDups
        );
        let writes = matches!(
            self,
            Call::DeleteCurrent
                | Call::DeleteCurrentDups
                | Call::Upsert(..)
                | Call::Insert(..)
                | Call::Append(..)
        );
        // `storage` is written only through `upsert_dup`, which keeps one value per subkey.
        let storage_only_upsert =
            kind == Kind::Storage && matches!(self, Call::Insert(..) | Call::Append(..));
        (!dup_only || kind.dupsort()) && (!writes || write) && !storage_only_upsert
    }

    fn all() -> Vec<Call> {
        vec![
            Call::First,
            Call::Last,
            Call::Next,
            Call::Prev,
            Call::Current,
            Call::Seek(0),
            Call::SeekExact(0),
            Call::SeekDup(0, 0),
            Call::GetDup(0, 0),
            Call::FirstDup,
            Call::LastDup,
            Call::NextDup,
            Call::PrevDup,
            Call::NextNoDup,
            Call::PrevNoDup,
            Call::DupCount,
            Call::DeleteCurrent,
            Call::DeleteCurrentDups,
            Call::Upsert(0, 0, 0),
            Call::Insert(0, 0, 0),
            Call::Append(0, 0, 0),
        ]
    }
}

/// What a call returned: an entry, a count, nothing, or which error.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Out {
    Found(Option<E>),
    Count(u64),
    Done,
    NotOnEntry,
    KeyExists,
    Unordered,
}

/// Where the model's cursor stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Unpositioned,
    On(usize),
    AfterLast,
    BeforeFirst,
    /// After a miss: the key and subkey sought (`None`: the key alone).
    Missed(u8, Option<u8>),
    /// After a delete: the index of the entry that followed the deleted one.
    Deleted(usize),
}

impl At {
    fn name(self) -> &'static str {
        match self {
            At::Unpositioned => "unpositioned",
            At::On(_) => "on an entry",
            At::AfterLast => "past the last",
            At::BeforeFirst => "before the first",
            At::Missed(..) => "after a miss",
            At::Deleted(_) => "after a delete",
        }
    }
}

struct Model {
    kind: Kind,
    entries: Vec<E>,
    at: At,
}

impl Model {
    fn key_span(&self, key: u8) -> std::ops::Range<usize> {
        let lo = self.entries.partition_point(|e| e.0 < key);
        let hi = self.entries.partition_point(|e| e.0 <= key);
        lo..hi
    }

    /// The first entry at or after `(key, sub)` (`sub = None`: after every value of `key`
    /// that is absent anyway, so the first key `>= key`).
    fn first_from(&self, key: u8, sub: Option<u8>) -> Option<usize> {
        let i = match sub {
            None => self.entries.partition_point(|e| e.0 < key),
            Some(s) => self.entries.partition_point(|e| (e.0, e.1) < (key, s)),
        };
        (i < self.entries.len()).then_some(i)
    }

    fn land(&mut self, i: Option<usize>, miss: At) -> Out {
        match i {
            Some(i) => {
                self.at = At::On(i);
                Out::Found(Some(self.entries[i]))
            }
            None => {
                self.at = miss;
                Out::Found(None)
            }
        }
    }

    fn first(&self) -> Option<usize> {
        (!self.entries.is_empty()).then_some(0)
    }

    fn last(&self) -> Option<usize> {
        self.entries.len().checked_sub(1)
    }

    fn next(&mut self) -> Out {
        let n = self.entries.len();
        match self.at {
            At::On(i) => self.land((i + 1 < n).then_some(i + 1), At::AfterLast),
            At::Deleted(j) => self.land((j < n).then_some(j), At::AfterLast),
            At::Unpositioned | At::BeforeFirst => self.land(self.first(), At::AfterLast),
            At::AfterLast => Out::Found(None),
            At::Missed(k, s) => self.land(self.first_from(k, s), At::AfterLast),
        }
    }

    fn prev(&mut self) -> Out {
        match self.at {
            At::On(i) | At::Deleted(i) => self.land(i.checked_sub(1), At::BeforeFirst),
            At::Unpositioned | At::AfterLast => self.land(self.last(), At::BeforeFirst),
            At::BeforeFirst => Out::Found(None),
            At::Missed(k, s) => {
                let before = match self.first_from(k, s) {
                    Some(i) => i.checked_sub(1),
                    None => self.last(),
                };
                self.land(before, At::BeforeFirst)
            }
        }
    }

    fn apply(&mut self, call: Call) -> Out {
        let n = self.entries.len();
        match call {
            Call::First => self.land(self.first(), At::Unpositioned),
            Call::Last => self.land(self.last(), At::Unpositioned),
            Call::Next => self.next(),
            Call::Prev => self.prev(),
            Call::Current => match self.at {
                At::On(i) => Out::Found(Some(self.entries[i])),
                At::Deleted(_) => self.next(),
                _ => Out::Found(None),
            },
            Call::Seek(k) => self.land(self.first_from(k, None), At::AfterLast),
            Call::SeekExact(k) => {
                let span = self.key_span(k);
                self.land(
                    (!span.is_empty()).then_some(span.start),
                    At::Missed(k, None),
                )
            }
            Call::SeekDup(k, s) => {
                let i = self
                    .first_from(k, Some(s))
                    .filter(|&i| self.entries[i].0 == k);
                self.land(i, At::Missed(k, Some(s)))
            }
            Call::GetDup(k, s) => {
                let i = self
                    .first_from(k, Some(s))
                    .filter(|&i| (self.entries[i].0, self.entries[i].1) == (k, s));
                self.land(i, At::Missed(k, Some(s)))
            }
            Call::FirstDup | Call::LastDup | Call::NextDup | Call::PrevDup => {
                let At::On(i) = self.at else {
                    return Out::Found(None);
                };
                let span = self.key_span(self.entries[i].0);
                let to = match call {
                    Call::FirstDup => Some(span.start),
                    Call::LastDup => Some(span.end - 1),
                    Call::NextDup => (i + 1 < span.end).then_some(i + 1),
                    _ => (i > span.start).then(|| i - 1),
                };
                // No such value: the cursor stays where it is.
                self.land(to, At::On(i))
            }
            Call::NextNoDup => match self.at {
                At::On(i) => {
                    let end = self.key_span(self.entries[i].0).end;
                    self.land((end < n).then_some(end), At::AfterLast)
                }
                _ => self.next(),
            },
            Call::PrevNoDup => match self.at {
                At::On(i) => {
                    let start = self.key_span(self.entries[i].0).start;
                    self.land(start.checked_sub(1), At::BeforeFirst)
                }
                _ => self.prev(),
            },
            Call::DupCount => match self.at {
                At::On(i) => Out::Count(self.key_span(self.entries[i].0).len() as u64),
                _ => Out::NotOnEntry,
            },
            Call::DeleteCurrent => match self.at {
                At::On(i) => {
                    self.entries.remove(i);
                    self.at = At::Deleted(i);
                    Out::Done
                }
                _ => Out::NotOnEntry,
            },
            Call::DeleteCurrentDups => match self.at {
                At::On(i) => {
                    let span = self.key_span(self.entries[i].0);
                    self.entries.drain(span.clone());
                    self.at = At::Deleted(span.start);
                    Out::Done
                }
                _ => Out::NotOnEntry,
            },
            Call::Upsert(k, s, v) => {
                let e = self.entry(k, s, v);
                match self.kind {
                    Kind::Plain => self.entries.retain(|x| x.0 != k),
                    Kind::Sets => self.entries.retain(|x| *x != e),
                    Kind::Storage => self.entries.retain(|x| (x.0, x.1) != (k, s)),
                }
                self.put(e)
            }
            Call::Insert(k, s, v) => {
                if !self.key_span(k).is_empty() {
                    self.at = At::Unpositioned;
                    return Out::KeyExists;
                }
                let e = self.entry(k, s, v);
                self.put(e)
            }
            Call::Append(k, s, v) => {
                let e = self.entry(k, s, v);
                let in_order = match self.kind {
                    Kind::Plain => self.entries.last().is_none_or(|l| l.0 < k),
                    _ => {
                        let span = self.key_span(k);
                        span.is_empty() || self.entries[span.end - 1].1 < s
                    }
                };
                if !in_order {
                    self.at = At::Unpositioned;
                    return Out::Unordered;
                }
                self.put(e)
            }
        }
    }

    fn entry(&self, k: u8, s: u8, v: u32) -> E {
        match self.kind {
            Kind::Plain => (k, 0, v),
            Kind::Sets => (k, s, 0),
            Kind::Storage => (k, s, v),
        }
    }

    fn put(&mut self, e: E) -> Out {
        let i = self.entries.partition_point(|x| (x.0, x.1) < (e.0, e.1));
        self.entries.insert(i, e);
        self.at = At::On(i);
        Out::Done
    }
}

/// A table of the test, with its entries in the model's form.
trait Side: tabula::Unindexed + Sized
where
    App: tabula::Contains<Self>,
{
    const KIND: Kind;
    fn model(key: Self::Key, value: Self::Value) -> E;
    fn nav<M: Mode>(c: &mut Cursor<'_, Self, M>, call: Call) -> tabula::Result<Out>;
    fn write(c: &mut Cursor<'_, Self, Rw>, call: Call) -> tabula::Result<Out>;
    fn fill(tx: &mut tabula::RwTx<'_, App>, e: E);
}

fn found<T: Side>(r: tabula::Result<Option<(T::Key, T::Value)>>) -> tabula::Result<Out>
where
    App: tabula::Contains<T>,
{
    r.map(|f| Out::Found(f.map(|(k, v)| T::model(k, v))))
}

fn error(e: Error) -> tabula::Result<Out> {
    match e {
        Error::NotOnEntry { .. } => Ok(Out::NotOnEntry),
        Error::KeyExists { .. } => Ok(Out::KeyExists),
        Error::AppendOutOfOrder { .. } | Error::AppendDupOutOfOrder { .. } => Ok(Out::Unordered),
        other => Err(other),
    }
}

fn done(r: tabula::Result<()>) -> tabula::Result<Out> {
    r.map(|()| Out::Done).or_else(error)
}

/// The moves and searches every table has.
fn plain_nav<T: Side, M: Mode>(c: &mut Cursor<'_, T, M>, call: Call) -> Option<tabula::Result<Out>>
where
    App: tabula::Contains<T>,
    u8: tabula::AsKey<T::Key>,
{
    Some(match call {
        Call::First => found::<T>(c.first()),
        Call::Last => found::<T>(c.last()),
        Call::Next => found::<T>(c.next()),
        Call::Prev => found::<T>(c.prev()),
        Call::Current => found::<T>(c.current()),
        Call::Seek(k) => found::<T>(c.seek(&k)),
        Call::SeekExact(k) => found::<T>(c.seek_exact(&k)),
        _ => return None,
    })
}

/// The calls of a dupsort table.
fn dup_nav<T: Side + tabula::DupSort, M: Mode>(
    c: &mut Cursor<'_, T, M>,
    call: Call,
) -> tabula::Result<Out>
where
    App: tabula::Contains<T>,
    u8: tabula::AsKey<T::Key> + tabula::AsKey<T::SubKey>,
{
    if let Some(out) = plain_nav(c, call) {
        return out;
    }
    match call {
        Call::SeekDup(k, s) => found::<T>(c.seek_dup(&k, &s)),
        Call::GetDup(k, s) => found::<T>(c.get_dup(&k, &s)),
        Call::FirstDup => found::<T>(c.first_dup()),
        Call::LastDup => found::<T>(c.last_dup()),
        Call::NextDup => found::<T>(c.next_dup()),
        Call::PrevDup => found::<T>(c.prev_dup()),
        Call::NextNoDup => found::<T>(c.next_no_dup()),
        Call::PrevNoDup => found::<T>(c.prev_no_dup()),
        Call::DupCount => c.dup_count().map(Out::Count).or_else(error),
        other => panic!("{other:?} is not a read"),
    }
}

impl Side for Plain {
    const KIND: Kind = Kind::Plain;
    fn model(k: u8, v: u32) -> E {
        (k, 0, v)
    }
    fn nav<M: Mode>(c: &mut Cursor<'_, Self, M>, call: Call) -> tabula::Result<Out> {
        plain_nav(c, call).unwrap_or_else(|| panic!("{call:?} on a plain table"))
    }
    fn write(c: &mut Cursor<'_, Self, Rw>, call: Call) -> tabula::Result<Out> {
        match call {
            Call::DeleteCurrent => done(c.delete_current()),
            Call::Upsert(k, _, v) => done(c.upsert(&k, &v)),
            Call::Insert(k, _, v) => done(c.insert(&k, &v)),
            Call::Append(k, _, v) => done(c.append(&k, &v)),
            _ => Self::nav(c, call),
        }
    }
    fn fill(tx: &mut tabula::RwTx<'_, App>, (k, _, v): E) {
        tx.put::<Plain>(&k, &v).unwrap();
    }
}

impl Side for Sets {
    const KIND: Kind = Kind::Sets;
    fn model(k: u8, v: u8) -> E {
        (k, v, 0)
    }
    fn nav<M: Mode>(c: &mut Cursor<'_, Self, M>, call: Call) -> tabula::Result<Out> {
        dup_nav(c, call)
    }
    fn write(c: &mut Cursor<'_, Self, Rw>, call: Call) -> tabula::Result<Out> {
        match call {
            Call::DeleteCurrent => done(c.delete_current()),
            Call::DeleteCurrentDups => done(c.delete_current_dups()),
            Call::Upsert(k, s, _) => done(c.upsert(&k, &s)),
            Call::Insert(k, s, _) => done(c.insert(&k, &s)),
            Call::Append(k, s, _) => done(c.append_dup(&k, &s)),
            _ => Self::nav(c, call),
        }
    }
    fn fill(tx: &mut tabula::RwTx<'_, App>, (k, s, _): E) {
        tx.put::<Sets>(&k, &s).unwrap();
    }
}

impl Side for Storage {
    const KIND: Kind = Kind::Storage;
    fn model(k: u8, (s, v): (u8, u32)) -> E {
        (k, s, v)
    }
    fn nav<M: Mode>(c: &mut Cursor<'_, Self, M>, call: Call) -> tabula::Result<Out> {
        dup_nav(c, call)
    }
    fn write(c: &mut Cursor<'_, Self, Rw>, call: Call) -> tabula::Result<Out> {
        match call {
            Call::DeleteCurrent => done(c.delete_current()),
            Call::DeleteCurrentDups => done(c.delete_current_dups()),
            Call::Upsert(k, s, v) => done(c.upsert_dup(&k, &s, &v)),
            _ => Self::nav(c, call),
        }
    }
    fn fill(tx: &mut tabula::RwTx<'_, App>, (k, s, v): E) {
        tx.put::<Storage>(&k, &(s, v)).unwrap();
    }
}

/// A random call of those that apply; keys 0..6 and subkeys 0..4 so that searches hit and
/// miss alike.
fn random_call(rng: &mut Rng, kind: Kind, write: bool) -> Call {
    loop {
        let (k, s, v) = (
            rng.below(6) as u8,
            rng.below(4) as u8,
            rng.below(1000) as u32,
        );
        let call = match rng.below(21) {
            0 => Call::First,
            1 => Call::Last,
            2 | 3 => Call::Next,
            4 | 5 => Call::Prev,
            6 => Call::Current,
            7 => Call::Seek(k),
            8 => Call::SeekExact(k),
            9 => Call::SeekDup(k, s),
            10 => Call::GetDup(k, s),
            11 => Call::FirstDup,
            12 => Call::LastDup,
            13 => Call::NextDup,
            14 => Call::PrevDup,
            15 => Call::NextNoDup,
            16 => Call::PrevNoDup,
            17 => Call::DupCount,
            18 => [Call::DeleteCurrent, Call::DeleteCurrentDups][rng.below(2) as usize],
            19 => Call::Upsert(k, s, v),
            _ => [Call::Insert(k, s, v), Call::Append(k, s, v)][rng.below(2) as usize],
        };
        if call.applies(kind, write) {
            return call;
        }
    }
}

type Seen = BTreeSet<(Kind, bool, &'static str, &'static str)>;

fn run_case<T: Side>(db: &tabula::Db<App>, rng: &mut Rng, write: bool, seen: &mut Seen)
where
    App: tabula::Contains<T>,
{
    // A fresh table of 0 to 9 entries.
    let mut entries: Vec<E> = Vec::new();
    {
        let mut tx = db.write().unwrap();
        tx.clear::<T>().unwrap();
        let mut m = Model {
            kind: T::KIND,
            entries: Vec::new(),
            at: At::Unpositioned,
        };
        for _ in 0..rng.below(10) {
            let (k, s, v) = (
                rng.below(6) as u8,
                rng.below(4) as u8,
                rng.below(1000) as u32,
            );
            m.apply(Call::Upsert(k, s, v));
        }
        for &e in &m.entries {
            T::fill(&mut tx, e);
        }
        entries.clone_from(&m.entries);
        tx.commit().unwrap();
    }
    let mut model = Model {
        kind: T::KIND,
        entries,
        at: At::Unpositioned,
    };
    let steps = 1 + rng.below(24);
    let mut trail = Vec::new();
    let mut check =
        |model: &mut Model, call: Call, got: tabula::Result<Out>, trail: &mut Vec<String>| {
            let state = model.at.name();
            let before = model.at;
            let want = model.apply(call);
            let got =
                got.unwrap_or_else(|e| panic!("{call:?} from {before:?} failed: {e}\n{trail:#?}"));
            trail.push(format!("{call:?} from {before:?} -> {got:?}"));
            assert_eq!(
                got,
                want,
                "{:?} {} cursor: {call:?} {state} ({before:?}) on {:?}\n{trail:#?}",
                T::KIND,
                if write { "write" } else { "read" },
                model.entries
            );
            seen.insert((T::KIND, write, state, call.name()));
        };
    if write {
        let mut tx = db.write().unwrap();
        let mut c = tx.cursor_mut::<T>().unwrap();
        for _ in 0..steps {
            let call = random_call(rng, T::KIND, true);
            let got = T::write(&mut c, call);
            check(&mut model, call, got, &mut trail);
        }
        drop(c);
        let stored: Vec<E> = tx
            .iter::<T>()
            .map(|e| {
                let (k, v) = e.unwrap();
                T::model(k, v)
            })
            .collect();
        assert_eq!(
            stored, model.entries,
            "the table after the writes\n{trail:#?}"
        );
    } else {
        let tx = db.read().unwrap();
        let mut c = tx.cursor::<T>().unwrap();
        for _ in 0..steps {
            let call = random_call(rng, T::KIND, false);
            let got = T::nav(&mut c, call);
            check(&mut model, call, got, &mut trail);
        }
    }
}

#[test]
fn every_cursor_call_in_every_position_matches_the_model() {
    let cases: u64 = std::env::var("TABULA_CURSOR_CASES")
        .ok()
        .map(|s| s.parse().expect("TABULA_CURSOR_CASES is a number"))
        .unwrap_or(400);
    let mut rng = Rng::new(seed("cursor model"));
    let (_dir, db) = tempdb::open_with::<App>(Options::new().sync(SyncMode::UtterlyNoSync));
    let mut seen = Seen::new();
    // Every state a cursor can be in, with every call that applies, must run at least once:
    // after the cases asked for, more run (up to 20 times as many) until every pair has.
    let missing = |seen: &Seen| {
        let states = [
            "unpositioned",
            "on an entry",
            "past the last",
            "before the first",
            "after a miss",
            "after a delete",
        ];
        let mut missing = Vec::new();
        for kind in [Kind::Plain, Kind::Sets, Kind::Storage] {
            for write in [false, true] {
                for state in states {
                    if state == "after a delete" && !write {
                        continue;
                    }
                    for call in Call::all() {
                        if call.applies(kind, write)
                            && !seen.contains(&(kind, write, state, call.name()))
                        {
                            missing.push(format!("{kind:?} write={write} {state} {}", call.name()));
                        }
                    }
                }
            }
        }
        missing
    };
    let mut ran = 0;
    while ran < cases || (ran < 20 * cases && !missing(&seen).is_empty()) {
        for write in [false, true] {
            run_case::<Plain>(&db, &mut rng, write, &mut seen);
            run_case::<Sets>(&db, &mut rng, write, &mut seen);
            run_case::<Storage>(&db, &mut rng, write, &mut seen);
        }
        ran += 1;
    }
    let missing = missing(&seen);
    assert!(
        missing.is_empty(),
        "state and call pairs never run ({ran} cases): {missing:#?}"
    );
}
