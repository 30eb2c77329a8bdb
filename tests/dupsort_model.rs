//! Model-based test of dupsort tables: random sequences of dup reads, cursor walks (read and
//! write cursors, deleting while walking), table-level deletes and commits run against Tabula and
//! against `BTreeMap<K, BTreeMap<SK, V>>`, and every result must be the same.
//!
//! Two tables: `storage`, with a subkey (`(u16, u32)` values sorted by the `u16`), and `sets`,
//! without one (`i16` values, negative ones included, sorted as numbers). The model of `sets`
//! is `BTreeMap<u8, BTreeMap<i16, ()>>`. The model holds one value per subkey, so `put` and
//! `append_dup` on `storage` are applied only where they keep it so (`upsert_dup` replaces).
//!
//! A cursor walk stops at the first move that finds nothing, and after a delete the next move
//! is `next`, `prev` or `current`: where a cursor stands off the entries, and what every call
//! does there, is `tests/cursor_model.rs`'s subject. Read and write cursors run the same moves
//! (one generic `move_cursor`: they are one cursor type).
//!
//! `PROPTEST_CASES` raises the case count (default here: 64 sequences of up to 60 operations).
//! The RNG seed is printed; `TABULA_SEED=<seed>` replays a run. A failing case is saved in
//! `tests/proptest-regressions/dupsort_model.txt`.

#[path = "support/props.rs"]
mod props;
#[path = "support/random.rs"]
mod random;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::Bound;

use proptest::collection::vec;
use proptest::prelude::*;
use tabula::{Contains, DupSort, Error, Mode, Options, RwTx, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "storage", key = u8, subkey = u16, value = u32, dupsort)]
struct Storage;

#[derive(Table)]
#[table(name = "sets", key = u8, value = i16, dupsort)]
struct Sets;

#[derive(Schema)]
struct DupSchema(Storage, Sets);

type Tx<'db> = RwTx<'db, DupSchema>;

/// One of the two tables, with the model's view of its values: subkey `Sk`, value part `V`.
trait Side: DupSort<Key = u8, Value: Clone> + tabula::Unindexed + Sized
where
    DupSchema: Contains<Self>,
{
    type Sk: Ord + Copy + Debug;
    type V: Copy + Debug + PartialEq;
    fn sk(seed: u16) -> Self::Sk;
    fn v(seed: u32) -> Self::V;
    fn value(sk: Self::Sk, v: Self::V) -> Self::Value;
    fn split(value: Self::Value) -> (Self::Sk, Self::V);
    /// `sk` as the table's subkey type (what `seek_dup` takes).
    fn subkey(sk: Self::Sk) -> Self::SubKey;
    fn sk_number(sk: Self::Sk) -> i64;
}

impl Side for Storage {
    type Sk = u16;
    type V = u32;
    fn sk(seed: u16) -> u16 {
        seed % 24
    }
    fn v(seed: u32) -> u32 {
        // Every bincode varint width: 1, 3 and 5 bytes.
        [seed % 300, seed, seed % 70_000][(seed % 3) as usize]
    }
    fn value(sk: u16, v: u32) -> (u16, u32) {
        (sk, v)
    }
    fn split(value: (u16, u32)) -> (u16, u32) {
        value
    }
    fn subkey(sk: u16) -> u16 {
        sk
    }
    fn sk_number(sk: u16) -> i64 {
        i64::from(sk)
    }
}

impl Side for Sets {
    type Sk = i16;
    type V = ();
    fn sk(seed: u16) -> i16 {
        (seed % 24) as i16 - 12
    }
    fn v(_: u32) {}
    fn value(sk: i16, (): ()) -> i16 {
        sk
    }
    fn split(value: i16) -> (i16, ()) {
        (value, ())
    }
    fn subkey(sk: i16) -> i16 {
        sk
    }
    fn sk_number(sk: i16) -> i64 {
        i64::from(sk)
    }
}

type Values<S, V> = BTreeMap<u8, BTreeMap<S, V>>;

#[derive(Clone, Default, Debug, PartialEq)]
struct Model {
    storage: Values<u16, u32>,
    sets: Values<i16, ()>,
}

#[derive(Debug, Clone, Copy)]
enum Which {
    Storage,
    Sets,
}

#[derive(Debug, Clone, Copy)]
enum Start {
    First,
    Last,
    Seek(u8),
    SeekExact(u8),
    SeekDup(u8, u16),
    GetDup(u8, u16),
}

#[derive(Debug, Clone, Copy)]
enum Move {
    Next,
    Prev,
    NextDup,
    PrevDup,
    NextNoDup,
    PrevNoDup,
    FirstDup,
    LastDup,
    Current,
}

#[derive(Debug, Clone, Copy)]
enum Action {
    Keep,
    Delete,
    DeleteDups,
}

#[derive(Debug, Clone)]
enum Op {
    Put(Which, u8, u16, u32),
    UpsertDup(u8, u16, u32),
    AppendDup(Which, u8, u16, u32),
    DeleteDup(Which, u8, u16, u32),
    Delete(Which, u8),
    GetDup(Which, u8, u16),
    SeekDup(Which, u8, u16),
    DupCount(Which, u8),
    Dups(Which, u8, bool),
    DupsFrom(Which, u8, u16, bool),
    Walk(Which, Start, Vec<Move>),
    WriteWalk(Which, Start, Vec<(Move, Action)>),
    DeleteRange(Which, Bound<u8>, Bound<u8>),
    Retain(Which, u8),
    PopFirst(Which),
    PopLast(Which),
    /// Moves the values of `sets[k]` into `storage[k]` with two write cursors at once.
    MoveSets(u8),
    Commit,
    Abort,
}

fn key() -> impl Strategy<Value = u8> {
    0u8..6
}

fn which() -> impl Strategy<Value = Which> {
    prop_oneof![Just(Which::Storage), Just(Which::Sets)]
}

fn bound() -> impl Strategy<Value = Bound<u8>> {
    prop_oneof![
        Just(Bound::Unbounded),
        key().prop_map(Bound::Included),
        key().prop_map(Bound::Excluded),
    ]
}

fn start() -> impl Strategy<Value = Start> {
    prop_oneof![
        Just(Start::First),
        Just(Start::Last),
        key().prop_map(Start::Seek),
        key().prop_map(Start::SeekExact),
        (key(), any::<u16>()).prop_map(|(k, s)| Start::SeekDup(k, s)),
        (key(), any::<u16>()).prop_map(|(k, s)| Start::GetDup(k, s)),
    ]
}

fn a_move() -> impl Strategy<Value = Move> {
    prop::sample::select(vec![
        Move::Next,
        Move::Prev,
        Move::NextDup,
        Move::PrevDup,
        Move::NextNoDup,
        Move::PrevNoDup,
        Move::FirstDup,
        Move::LastDup,
        Move::Current,
    ])
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        4 => Just(Action::Keep),
        3 => Just(Action::Delete),
        1 => Just(Action::DeleteDups),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (which(), key(), any::<u16>(), any::<u32>()).prop_map(|(w, k, s, v)| Op::Put(w, k, s, v)),
        4 => (key(), any::<u16>(), any::<u32>()).prop_map(|(k, s, v)| Op::UpsertDup(k, s, v)),
        3 => (which(), key(), any::<u16>(), any::<u32>())
            .prop_map(|(w, k, s, v)| Op::AppendDup(w, k, s, v)),
        2 => (which(), key(), any::<u16>(), any::<u32>())
            .prop_map(|(w, k, s, v)| Op::DeleteDup(w, k, s, v)),
        1 => (which(), key()).prop_map(|(w, k)| Op::Delete(w, k)),
        2 => (which(), key(), any::<u16>()).prop_map(|(w, k, s)| Op::GetDup(w, k, s)),
        2 => (which(), key(), any::<u16>()).prop_map(|(w, k, s)| Op::SeekDup(w, k, s)),
        1 => (which(), key()).prop_map(|(w, k)| Op::DupCount(w, k)),
        2 => (which(), key(), any::<bool>()).prop_map(|(w, k, r)| Op::Dups(w, k, r)),
        2 => (which(), key(), any::<u16>(), any::<bool>())
            .prop_map(|(w, k, s, r)| Op::DupsFrom(w, k, s, r)),
        4 => (which(), start(), vec(a_move(), 0..12)).prop_map(|(w, s, m)| Op::Walk(w, s, m)),
        4 => (which(), start(), vec((a_move(), action()), 0..12))
            .prop_map(|(w, s, m)| Op::WriteWalk(w, s, m)),
        1 => (which(), bound(), bound()).prop_map(|(w, a, b)| Op::DeleteRange(w, a, b)),
        1 => (which(), 2u8..5).prop_map(|(w, m)| Op::Retain(w, m)),
        1 => which().prop_map(Op::PopFirst),
        1 => which().prop_map(Op::PopLast),
        1 => key().prop_map(Op::MoveSets),
        2 => Just(Op::Commit),
        1 => Just(Op::Abort),
    ]
}

/// The model's entries in stored order: `(key, subkey, value)`.
fn flat<S: Copy + Ord, V: Copy>(m: &Values<S, V>) -> Vec<(u8, S, V)> {
    m.iter()
        .flat_map(|(k, vs)| vs.iter().map(move |(s, v)| (*k, *s, *v)))
        .collect()
}

/// Where `mv` takes a cursor at `pos` in `entries`; `None` when there is no such entry.
fn model_move<S, V>(entries: &[(u8, S, V)], pos: usize, mv: Move) -> Option<usize> {
    let key = entries[pos].0;
    let first_of_key = entries.iter().position(|e| e.0 == key).unwrap();
    let last_of_key = entries.iter().rposition(|e| e.0 == key).unwrap();
    match mv {
        Move::Next => (pos + 1 < entries.len()).then_some(pos + 1),
        Move::Prev => pos.checked_sub(1),
        Move::NextDup => (pos < last_of_key).then_some(pos + 1),
        Move::PrevDup => (pos > first_of_key).then(|| pos - 1),
        Move::NextNoDup => (last_of_key + 1 < entries.len()).then_some(last_of_key + 1),
        Move::PrevNoDup => first_of_key.checked_sub(1),
        Move::FirstDup => Some(first_of_key),
        Move::LastDup => Some(last_of_key),
        Move::Current => Some(pos),
    }
}

/// Where `start` puts a cursor.
fn model_start<T: Side>(entries: &[(u8, T::Sk, T::V)], start: Start) -> Option<usize>
where
    DupSchema: Contains<T>,
{
    match start {
        Start::First => (!entries.is_empty()).then_some(0),
        Start::Last => entries.len().checked_sub(1),
        Start::Seek(k) => entries.iter().position(|e| e.0 >= k),
        Start::SeekExact(k) => entries.iter().position(|e| e.0 == k),
        Start::SeekDup(k, s) => {
            let s = T::sk(s);
            entries.iter().position(|e| e.0 == k && e.1 >= s)
        }
        Start::GetDup(k, s) => {
            let s = T::sk(s);
            entries.iter().position(|e| e.0 == k && e.1 == s)
        }
    }
}

type Entry<T> = Option<(u8, <T as Table>::Value)>;

fn start_cursor<T: Side, M: Mode>(c: &mut tabula::Cursor<'_, T, M>, start: Start) -> Entry<T>
where
    DupSchema: Contains<T>,
{
    match start {
        Start::First => c.first(),
        Start::Last => c.last(),
        Start::Seek(k) => c.seek(&k),
        Start::SeekExact(k) => c.seek_exact(&k),
        Start::SeekDup(k, s) => c.seek_dup(&k, &T::subkey(T::sk(s))),
        Start::GetDup(k, s) => c.get_dup(&k, &T::subkey(T::sk(s))),
    }
    .unwrap()
}

fn move_cursor<T: Side, M: Mode>(c: &mut tabula::Cursor<'_, T, M>, mv: Move) -> Entry<T>
where
    DupSchema: Contains<T>,
{
    match mv {
        Move::Next => c.next(),
        Move::Prev => c.prev(),
        Move::NextDup => c.next_dup(),
        Move::PrevDup => c.prev_dup(),
        Move::NextNoDup => c.next_no_dup(),
        Move::PrevNoDup => c.prev_no_dup(),
        Move::FirstDup => c.first_dup(),
        Move::LastDup => c.last_dup(),
        Move::Current => c.current(),
    }
    .unwrap()
}

/// A found entry as the model writes it.
fn found<T: Side>(entry: Entry<T>) -> Option<(u8, T::Sk, T::V)>
where
    DupSchema: Contains<T>,
{
    entry.map(|(k, value)| {
        let (s, v) = T::split(value);
        (k, s, v)
    })
}

fn in_range(k: u8, lo: Bound<u8>, hi: Bound<u8>) -> bool {
    let above = match lo {
        Bound::Included(a) => k >= a,
        Bound::Excluded(a) => k > a,
        Bound::Unbounded => true,
    };
    let below = match hi {
        Bound::Included(b) => k <= b,
        Bound::Excluded(b) => k < b,
        Bound::Unbounded => true,
    };
    above && below
}

/// Runs one operation on table `T` and its model `m`.
fn apply<T: Side>(
    tx: &mut Tx<'_>,
    m: &mut Values<T::Sk, T::V>,
    op: &Op,
) -> Result<(), TestCaseError>
where
    DupSchema: Contains<T>,
{
    match *op {
        Op::Put(_, k, s, v) => {
            let (s, v) = (T::sk(s), T::v(v));
            // One value per subkey in the model: `put` adds a pair, so only where that keeps it.
            if m.get(&k)
                .and_then(|vs| vs.get(&s))
                .is_none_or(|old| *old == v)
            {
                tx.put::<T>(&k, &T::value(s, v)).unwrap();
                m.entry(k).or_default().insert(s, v);
            }
        }
        Op::AppendDup(_, k, s, v) => {
            let (s, v) = (T::sk(s), T::v(v));
            let present = m.get(&k).is_some_and(|vs| vs.contains_key(&s));
            if <T as DupSort>::HAS_SUBKEY && present {
                return Ok(()); // would add a second value of that subkey, or be refused
            }
            let r = tx.append_dup::<T>(&k, &T::value(s, v));
            let last = m.get(&k).and_then(|vs| vs.keys().next_back().copied());
            if last.is_none_or(|l| s > l) {
                r.unwrap();
                m.entry(k).or_default().insert(s, v);
            } else {
                prop_assert!(
                    matches!(r, Err(Error::AppendDupOutOfOrder { .. })),
                    "append_dup {} {:?} after {:?}: {:?}",
                    k,
                    s,
                    last,
                    r
                );
            }
        }
        Op::DeleteDup(_, k, s, v) => {
            let (s, v) = (T::sk(s), T::v(v));
            let deleted = tx.delete_dup::<T>(&k, &T::value(s, v)).unwrap();
            let present = m.get(&k).and_then(|vs| vs.get(&s)) == Some(&v);
            prop_assert_eq!(deleted, present);
            if present {
                let vs = m.get_mut(&k).unwrap();
                vs.remove(&s);
                if vs.is_empty() {
                    m.remove(&k);
                }
            }
        }
        Op::Delete(_, k) => {
            prop_assert_eq!(tx.delete::<T>(&k).unwrap(), m.remove(&k).is_some());
        }
        Op::GetDup(_, k, s) => {
            let s = T::sk(s);
            let got = tx.get_dup::<T>(&k, &T::subkey(s)).unwrap().map(T::split);
            let want = m.get(&k).and_then(|vs| vs.get(&s)).map(|v| (s, *v));
            prop_assert_eq!(got, want);
        }
        Op::SeekDup(_, k, s) => {
            let s = T::sk(s);
            let got = tx.seek_dup::<T>(&k, &T::subkey(s)).unwrap().map(T::split);
            let want = m
                .get(&k)
                .and_then(|vs| vs.range(s..).next())
                .map(|(s, v)| (*s, *v));
            prop_assert_eq!(got, want);
        }
        Op::DupCount(_, k) => {
            let want = m.get(&k).map_or(0, BTreeMap::len) as u64;
            prop_assert_eq!(tx.dup_count::<T>(&k).unwrap(), want);
        }
        Op::Dups(_, k, rev) => {
            let it = tx.dups::<T>(&k).values().map(|v| T::split(v.unwrap()));
            let got: Vec<_> = if rev {
                it.rev().collect()
            } else {
                it.collect()
            };
            let mut want: Vec<_> = m
                .get(&k)
                .into_iter()
                .flatten()
                .map(|(s, v)| (*s, *v))
                .collect();
            if rev {
                want.reverse();
            }
            prop_assert_eq!(got, want);
        }
        Op::DupsFrom(_, k, s, rev) => {
            let s = T::sk(s);
            let it = tx.dups_from::<T>(&k, &T::subkey(s));
            let it = it.map(|e| {
                let (key, value) = e.unwrap();
                assert_eq!(key, k);
                T::split(value)
            });
            let got: Vec<_> = if rev {
                it.rev().collect()
            } else {
                it.collect()
            };
            let mut want: Vec<_> = m
                .get(&k)
                .map(|vs| vs.range(s..).map(|(s, v)| (*s, *v)).collect())
                .unwrap_or_default();
            if rev {
                want.reverse();
            }
            prop_assert_eq!(got, want);
        }
        Op::Walk(_, start, ref moves) => {
            let entries = flat(m);
            let mut c = tx.cursor::<T>().unwrap();
            let mut pos = model_start::<T>(&entries, start);
            let got = found::<T>(start_cursor(&mut c, start));
            prop_assert_eq!(got, pos.map(|p| entries[p]), "start {:?}", start);
            for &mv in moves {
                let Some(at) = pos else { break };
                pos = model_move(&entries, at, mv);
                let got = found::<T>(move_cursor(&mut c, mv));
                prop_assert_eq!(
                    got,
                    pos.map(|p| entries[p]),
                    "{:?} from {:?}",
                    mv,
                    entries[at]
                );
            }
        }
        Op::WriteWalk(_, start, ref steps) => {
            let mut entries = flat(m);
            let mut c = tx.cursor_mut::<T>().unwrap();
            let mut pos = model_start::<T>(&entries, start);
            let got = found::<T>(start_cursor(&mut c, start));
            prop_assert_eq!(got, pos.map(|p| entries[p]), "start {:?}", start);
            // Set after a delete: the entries on either side of the deleted ones.
            let mut gap: Option<usize> = None;
            for &(mv, act) in steps {
                if let Some(at) = gap.take() {
                    // After a delete: `next`/`current` find what followed, `prev` what came
                    // before.
                    let mv = match mv {
                        Move::Prev | Move::PrevDup | Move::PrevNoDup | Move::FirstDup => Move::Prev,
                        Move::Current => Move::Current,
                        _ => Move::Next,
                    };
                    pos = match mv {
                        Move::Prev => at.checked_sub(1),
                        _ => (at < entries.len()).then_some(at),
                    };
                    let got = found::<T>(move_cursor(&mut c, mv));
                    prop_assert_eq!(got, pos.map(|p| entries[p]), "{:?} after a delete", mv);
                } else {
                    let Some(at) = pos else { break };
                    pos = model_move(&entries, at, mv);
                    let got = found::<T>(move_cursor(&mut c, mv));
                    prop_assert_eq!(
                        got,
                        pos.map(|p| entries[p]),
                        "{:?} from {:?}",
                        mv,
                        entries[at]
                    );
                }
                let Some(at) = pos else { break };
                match act {
                    Action::Keep => {}
                    Action::Delete => {
                        c.delete_current().unwrap();
                        entries.remove(at);
                        gap = Some(at);
                    }
                    Action::DeleteDups => {
                        c.delete_current_dups().unwrap();
                        let key = entries[at].0;
                        let first = entries.iter().position(|e| e.0 == key).unwrap();
                        entries.retain(|e| e.0 != key);
                        gap = Some(first);
                    }
                }
            }
            drop(c);
            // The model follows the cursor's deletes.
            let mut rebuilt: Values<T::Sk, T::V> = BTreeMap::new();
            for (k, s, v) in entries {
                rebuilt.entry(k).or_default().insert(s, v);
            }
            *m = rebuilt;
        }
        Op::DeleteRange(_, lo, hi) => {
            let deleted = tx.delete_range::<T>((lo, hi)).unwrap();
            let keys: Vec<u8> = m.keys().copied().filter(|k| in_range(*k, lo, hi)).collect();
            let mut want = 0;
            for k in keys {
                want += m.remove(&k).unwrap().len() as u64;
            }
            prop_assert_eq!(deleted, want, "delete_range {:?}..{:?}", lo, hi);
        }
        Op::Retain(_, modulus) => {
            let keep = |k: u8, s: T::Sk| {
                (i64::from(k) + T::sk_number(s)).rem_euclid(i64::from(modulus)) != 0
            };
            let deleted = tx
                .retain::<T>(|k, value| {
                    let (s, _) = T::split(value.clone());
                    keep(*k, s)
                })
                .unwrap();
            let mut want = 0;
            for (k, vs) in m.iter_mut() {
                let n = vs.len();
                vs.retain(|s, _| keep(*k, *s));
                want += (n - vs.len()) as u64;
            }
            m.retain(|_, vs| !vs.is_empty());
            prop_assert_eq!(deleted, want);
        }
        Op::PopFirst(_) | Op::PopLast(_) => {
            let first = matches!(op, Op::PopFirst(_));
            let got = if first {
                tx.pop_first::<T>()
            } else {
                tx.pop_last::<T>()
            };
            let got = found::<T>(got.unwrap());
            let entries = flat(m);
            let want = if first {
                entries.first().copied()
            } else {
                entries.last().copied()
            };
            prop_assert_eq!(got, want);
            if let Some((k, s, _)) = want {
                let vs = m.get_mut(&k).unwrap();
                vs.remove(&s);
                if vs.is_empty() {
                    m.remove(&k);
                }
            }
        }
        _ => unreachable!("not a per-table operation: {op:?}"),
    }
    Ok(())
}

fn which_of(op: &Op) -> Option<Which> {
    Some(match *op {
        Op::Put(w, ..)
        | Op::AppendDup(w, ..)
        | Op::DeleteDup(w, ..)
        | Op::Delete(w, ..)
        | Op::GetDup(w, ..)
        | Op::SeekDup(w, ..)
        | Op::DupCount(w, ..)
        | Op::Dups(w, ..)
        | Op::DupsFrom(w, ..)
        | Op::Walk(w, ..)
        | Op::WriteWalk(w, ..)
        | Op::DeleteRange(w, ..)
        | Op::Retain(w, ..)
        | Op::PopFirst(w)
        | Op::PopLast(w) => w,
        _ => return None,
    })
}

/// Everything the database holds, as the model writes it.
fn contents(db: &tabula::Db<DupSchema>) -> Model {
    let tx = db.read().unwrap();
    let mut out = Model::default();
    for entry in tx.iter::<Storage>() {
        let (k, (s, v)) = entry.unwrap();
        out.storage.entry(k).or_default().insert(s, v);
    }
    for entry in tx.iter::<Sets>() {
        let (k, s) = entry.unwrap();
        out.sets.entry(k).or_default().insert(s, ());
    }
    out
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let options = Options::new().max_size(1 << 30).sync(SyncMode::SafeNoSync);
    let db = tabula::open::<DupSchema>(dir.path(), options).unwrap();
    let mut committed = Model::default();
    let mut i = 0;
    while i < ops.len() {
        let mut pending = committed.clone();
        let mut open = Some(db.write().unwrap());
        while let Some(op) = ops.get(i) {
            i += 1;
            let tx = open.as_mut().unwrap();
            match (op, which_of(op)) {
                (_, Some(Which::Storage)) => apply::<Storage>(tx, &mut pending.storage, op)?,
                (_, Some(Which::Sets)) => apply::<Sets>(tx, &mut pending.sets, op)?,
                (Op::UpsertDup(k, s, v), _) => {
                    let (s, v) = (Storage::sk(*s), Storage::v(*v));
                    tx.cursor_mut::<Storage>()
                        .unwrap()
                        .upsert_dup(k, &s, &v)
                        .unwrap();
                    pending.storage.entry(*k).or_default().insert(s, v);
                }
                (Op::MoveSets(k), _) => {
                    let (mut sets, mut storage) = tx.cursors_mut::<(Sets, Storage)>().unwrap();
                    // Backwards through the key's values, deleting each once moved.
                    let mut entry = match sets.seek_exact(k).unwrap() {
                        Some(_) => sets.last_dup().unwrap(),
                        None => None,
                    };
                    while let Some((key, value)) = entry {
                        if key != *k {
                            break;
                        }
                        let slot = (value + 12) as u16;
                        storage
                            .upsert_dup(k, &slot, &(value as i32 as u32))
                            .unwrap();
                        sets.delete_current().unwrap();
                        entry = sets.prev().unwrap();
                    }
                    if let Some(values) = pending.sets.remove(k) {
                        for value in values.into_keys() {
                            let slot = (value + 12) as u16;
                            pending
                                .storage
                                .entry(*k)
                                .or_default()
                                .insert(slot, value as i32 as u32);
                        }
                    }
                }
                (Op::Commit, _) => {
                    open.take().unwrap().commit().unwrap();
                    committed = pending.clone();
                    break;
                }
                (Op::Abort, _) => {
                    open = None;
                    break;
                }
                (op, None) => unreachable!("{op:?}"),
            }
        }
        if let Some(tx) = open {
            tx.commit().unwrap();
            committed = pending;
        }
        prop_assert_eq!(&contents(&db), &committed);
    }
    let tx = db.read().unwrap();
    let pairs = |m: &Values<u16, u32>| m.values().map(BTreeMap::len).sum::<usize>() as u64;
    prop_assert_eq!(tx.len::<Storage>().unwrap(), pairs(&committed.storage));
    drop(tx);
    prop_assert!(db.check().unwrap().is_ok());
    Ok(())
}

proptest! {
    #![proptest_config(props::config("dupsort_model", 64))]

    #[test]
    fn dup_operations_and_write_cursors_match_a_btreemap_model(ops in vec(op(), 1..60)) {
        run(&ops)?;
    }
}
