//! history (issue 36): a table of `u64 -> u64` accounts declared `history` against raw libmdbx
//! keeping reth's layout by hand, per operation:
//!
//! - `put`: one write transaction at a new version puts [`HistorySizes::puts`] random keys
//!   (timed: the puts and, by hand, the history index updates the transaction needs at its
//!   end), then aborts;
//! - `get_as_of`: [`HistorySizes::queries`] reads of a random key as of a random version;
//! - `unwind`: one write transaction unwinds the last [`HistorySizes::unwound`] versions
//!   (timed, ns per change undone), then aborts.
//!
//! By hand (`hand_*`), as reth keeps account history: a `dupsort` changeset keyed by version
//! (big-endian) whose values are `key ‖ value before` (a tag byte `0`/`1` for absent/present
//! before the bincode bytes), only a key's first change of a version recorded; a history index
//! of sharded version lists keyed `key ‖ highest version in the shard` (`u64::MAX` for the open
//! shard, [`SHARD`] versions a shard, big-endian versions packed), updated once per key at the
//! end of each transaction; an as-of read seeks the shard, finds the first version above the
//! one asked for and looks up that version's changeset value of the key (or reads the current
//! row). Tabula: `#[table(.., history)]` with `Tx::set_version`, `get_as_of` and `Tx::unwind`.
//!
//! Both stores get the same history first (untimed): every key at version 1, then
//! [`HistorySizes::versions`] versions of [`HistorySizes::changes`] random puts each. Every
//! read is checked against a model (each key's values by version), and every unwind leaves the
//! state of the model at the version unwound to.
//!
//! The `storage_*` rows run the same operations on reth's storage shape, a `dupsort` table of
//! slots under each account declared `history`, against reth's storage changesets and history
//! index kept by hand ([`storage`]).

pub mod storage;

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::time::Duration;

use tabula::{History, Schema, Table};

use crate::data::{BINCODE2, mix, verify};
use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload, variant_wanted};
use crate::util::{Pass, XorShift, interleaved, ns_per, time};

use super::{scratch_dir, tabula_options};

/// The operations, each a pair of rows `tabula_{op}` and `hand_{op}`.
pub const OPS: [&str; 6] = [
    "put",
    "get_as_of",
    "unwind",
    "storage_put",
    "storage_get_as_of",
    "storage_unwind",
];

/// Versions a history index shard holds (reth's `NUM_OF_INDICES_IN_SHARD`).
pub const SHARD: usize = 2000;

/// Sizes of the history workload.
#[derive(Clone, Copy, Debug)]
pub struct HistorySizes {
    /// Accounts (keys `0..keys`).
    pub keys: u64,
    /// Versions after the first.
    pub versions: u64,
    /// Puts per version.
    pub changes: u64,
    /// Puts in the timed write transaction.
    pub puts: u64,
    /// As-of reads timed.
    pub queries: u64,
    /// Versions unwound.
    pub unwound: u64,
    /// Interleaved rounds (median taken).
    pub reps: usize,
}

/// The accounts, declared `history`.
#[derive(Table)]
#[table(name = "accounts", key = u64, value = u64, history)]
pub struct Accounts;

/// Their history.
#[derive(History)]
#[history(on = Accounts, name = "accounts_history")]
pub struct AccountsHistory;

#[derive(Schema)]
pub struct HistorySchema(Accounts, AccountsHistory);

/// The value of the `n`-th put.
fn value(n: u64) -> u64 {
    mix(n) | 1
}

/// The puts of version `v` (`v >= 2`): `changes` random keys, each with a value.
fn puts_of(sizes: &HistorySizes, v: u64) -> Vec<(u64, u64)> {
    let mut rng = XorShift::new(mix(v));
    (0..sizes.changes)
        .map(|i| (rng.below(sizes.keys), value(v * 1_000_003 + i)))
        .collect()
}

/// Each key's values by version: what every as-of read is checked against.
struct Model {
    values: Vec<Vec<(u64, u64)>>,
}

impl Model {
    fn build(sizes: &HistorySizes) -> Model {
        let mut values: Vec<Vec<(u64, u64)>> =
            (0..sizes.keys).map(|k| vec![(1, value(k))]).collect();
        for v in 2..=sizes.versions + 1 {
            for (k, x) in puts_of(sizes, v) {
                let at = &mut values[k as usize];
                match at.last_mut() {
                    Some(last) if last.0 == v => last.1 = x,
                    _ => at.push((v, x)),
                }
            }
        }
        Model { values }
    }

    /// The value of `k` at the end of `v`.
    fn at(&self, k: u64, v: u64) -> Option<u64> {
        let values = &self.values[k as usize];
        let i = values.partition_point(|(w, _)| *w <= v);
        (i > 0).then(|| values[i - 1].1)
    }

    /// A checksum of the whole state at the end of `v`.
    fn state_sum(&self, v: u64) -> u64 {
        (0..self.values.len() as u64).fold(0, |s, k| {
            s.wrapping_add(self.at(k, v).map_or(0, |x| mix(k ^ x)))
        })
    }
}

/// The queries: (key, version) pairs.
fn queries(sizes: &HistorySizes) -> Vec<(u64, u64)> {
    let mut rng = XorShift::new(7);
    (0..sizes.queries)
        .map(|_| (rng.below(sizes.keys), 1 + rng.below(sizes.versions + 1)))
        .collect()
}

/// What a query adds to a checksum.
fn query_sum(k: u64, v: u64, x: Option<u64>) -> u64 {
    x.map_or(mix(k ^ v), |x| mix(k ^ v ^ x))
}

fn encode(x: u64) -> Vec<u8> {
    bincode::encode_to_vec(x, BINCODE2).expect("encode")
}

fn decode(bytes: &[u8]) -> u64 {
    bincode::decode_from_slice(bytes, BINCODE2)
        .expect("decode")
        .0
}

/// The hand-kept store: the state, the changesets and the history index.
struct Hand {
    env: raw::Env,
    state: raw::Dbi,
    changes: raw::Dbi,
    index: raw::Dbi,
}

/// reth's sharded history index kept by hand: under `unit ‖ highest version in the shard`
/// (`u64::MAX` for the open shard), the versions at which the unit (a key, or an account's
/// slot) changed, [`SHARD`] a shard, big-endian, packed.
mod shard {
    use super::SHARD;
    use crate::raw;

    /// The key of `unit`'s shard whose highest version is `highest`: on the stack (units are
    /// at most 16 bytes).
    pub struct Key {
        buf: [u8; 24],
        len: usize,
    }

    impl Key {
        pub fn new(unit: &[u8], highest: u64) -> Key {
            let mut buf = [0u8; 24];
            buf[..unit.len()].copy_from_slice(unit);
            buf[unit.len()..unit.len() + 8].copy_from_slice(&highest.to_be_bytes());
            Key {
                buf,
                len: unit.len() + 8,
            }
        }

        pub fn as_slice(&self) -> &[u8] {
            &self.buf[..self.len]
        }
    }

    /// `v` added to `unit`'s open shard (a full shard is closed under its highest version
    /// first), once.
    pub fn add(txn: &mut raw::Txn, index: raw::Dbi, unit: &[u8], v: u64) {
        let open = Key::new(unit, u64::MAX);
        let mut list = txn
            .get(index, open.as_slice())
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        if list.ends_with(&v.to_be_bytes()) {
            return;
        }
        if list.len() / 8 >= SHARD {
            let highest = u64::from_be_bytes(list[list.len() - 8..].try_into().unwrap());
            txn.put(index, Key::new(unit, highest).as_slice(), &list, 0);
            list.clear();
        }
        list.extend_from_slice(&v.to_be_bytes());
        txn.put(index, open.as_slice(), &list, 0);
    }

    /// The first version above `v` at which `unit` changed: its shard sought, the version
    /// found in it.
    pub fn first_after(txn: &raw::Txn, index: raw::Dbi, unit: &[u8], v: u64) -> Option<u64> {
        let mut cursor = txn.cursor(index);
        let changed = match cursor.get(raw::SET_RANGE, Some(Key::new(unit, v + 1).as_slice())) {
            Some((shard, list)) if shard.len() == unit.len() + 8 && shard.starts_with(unit) => list
                .chunks_exact(8)
                .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
                .find(|w| *w > v),
            _ => None,
        };
        cursor.close();
        changed
    }

    /// `unit`'s open shard cut after `to` (an unwind).
    pub fn cut(txn: &mut raw::Txn, index: raw::Dbi, unit: &[u8], to: u64) {
        let open = Key::new(unit, u64::MAX);
        let list = txn
            .get(index, open.as_slice())
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        let keep = list
            .chunks_exact(8)
            .take_while(|c| u64::from_be_bytes((*c).try_into().unwrap()) <= to)
            .count();
        if keep == 0 {
            txn.del(index, open.as_slice());
        } else {
            txn.put(index, open.as_slice(), &list[..keep * 8], 0);
        }
    }
}

impl Hand {
    fn open(dir: &std::path::Path) -> Hand {
        let env = raw::Env::open(dir, 8, EnvFlags::DEFAULT);
        let txn = env.begin(true);
        let state = txn.open_table(c"state", raw::NO_FLAGS, true);
        let changes = txn.open_table(c"changes", raw::DUPSORT, true);
        let index = txn.open_table(c"index", raw::NO_FLAGS, true);
        txn.commit();
        Hand {
            env,
            state,
            changes,
            index,
        }
    }
}

impl HandKept for Hand {
    fn env(&self) -> &raw::Env {
        &self.env
    }

    fn current(&self, txn: &raw::Txn, k: u64, _version: u64) -> Option<u64> {
        txn.get(self.state, &k.to_be_bytes()).map(decode)
    }

    /// Puts `(k, x)` at version `v`: the value before recorded once per key and version
    /// (`seen`), the row written.
    fn put(&self, txn: &mut raw::Txn, seen: &mut BTreeSet<u64>, v: u64, k: u64, x: u64) {
        let key = k.to_be_bytes();
        if seen.insert(k) {
            let mut change = Vec::with_capacity(24);
            change.extend_from_slice(&key);
            match txn.get(self.state, &key) {
                Some(before) => {
                    change.push(1);
                    change.extend_from_slice(before);
                }
                None => change.push(0),
            }
            txn.put(self.changes, &v.to_be_bytes(), &change, 0);
        }
        txn.put(self.state, &key, &encode(x), 0);
    }

    /// The end of a transaction at version `v`: each key it changed gets `v` in its open shard
    /// (a full shard is closed under its highest version first).
    fn index(&self, txn: &mut raw::Txn, seen: &BTreeSet<u64>, v: u64) {
        for &k in seen {
            shard::add(txn, self.index, &k.to_be_bytes(), v);
        }
    }

    /// The value of `k` at the end of `v`.
    fn get_as_of(&self, txn: &raw::Txn, k: u64, v: u64) -> Option<u64> {
        let key = k.to_be_bytes();
        let Some(w) = shard::first_after(txn, self.index, &key, v) else {
            return txn.get(self.state, &key).map(decode);
        };
        let mut cursor = txn.cursor(self.changes);
        let found = cursor.get_both_range(&w.to_be_bytes(), &key).map(|change| {
            assert_eq!(change[..8], key, "hand: the change of {k} at {w}");
            match change[8] {
                0 => None,
                _ => Some(decode(&change[9..])),
            }
        });
        cursor.close();
        found.expect("hand: a change the index names")
    }

    /// Unwinds every version above `to`: the changesets walked from the last, each value
    /// before written back, each entry deleted; then each key's open shard cut at `to`.
    fn unwind(&self, txn: &mut raw::Txn, to: u64) -> u64 {
        let mut undone = 0;
        let mut keys = BTreeSet::new();
        loop {
            let mut cursor = txn.cursor(self.changes);
            let Some((version, change)) = cursor.get(raw::LAST, None) else {
                cursor.close();
                break;
            };
            let v = u64::from_be_bytes(version.try_into().unwrap());
            if v <= to {
                cursor.close();
                break;
            }
            let key: [u8; 8] = change[..8].try_into().unwrap();
            let before = (change[8] == 1).then(|| change[9..].to_vec());
            cursor.del_current();
            cursor.close();
            match before {
                Some(before) => txn.put(self.state, &key, &before, 0),
                None => {
                    txn.del(self.state, &key);
                }
            }
            keys.insert(u64::from_be_bytes(key));
            undone += 1;
        }
        for k in keys {
            shard::cut(txn, self.index, &k.to_be_bytes(), to);
        }
        undone
    }

    fn state_sum(&self, txn: &raw::Txn) -> u64 {
        let mut cursor = txn.cursor(self.state);
        let mut sum = 0u64;
        let mut first = true;
        while let Some((k, x)) = cursor.step(first) {
            first = false;
            let k = u64::from_be_bytes(k.try_into().unwrap());
            sum = sum.wrapping_add(mix(k ^ decode(x)));
        }
        cursor.close();
        sum
    }
}

/// Loads both stores with the same history: every key at version 1, then the versions.
fn load(sizes: &HistorySizes, tabula: Option<&tabula::Db<HistorySchema>>, hand: Option<&Hand>) {
    if let Some(db) = tabula {
        let mut tx = db.write().expect("write");
        tx.set_version(1);
        for k in 0..sizes.keys {
            tx.put::<Accounts>(&k, &value(k)).expect("put");
        }
        tx.commit().expect("commit");
        for v in 2..=sizes.versions + 1 {
            let mut tx = db.write().expect("write");
            tx.set_version(v);
            for (k, x) in puts_of(sizes, v) {
                tx.put::<Accounts>(&k, &x).expect("put");
            }
            tx.commit().expect("commit");
        }
    }
    if let Some(h) = hand {
        let mut txn = h.env.begin(true);
        let mut seen = BTreeSet::new();
        for k in 0..sizes.keys {
            HandKept::put(h, &mut txn, &mut seen, 1, k, value(k));
        }
        h.index(&mut txn, &seen, 1);
        txn.commit();
        for v in 2..=sizes.versions + 1 {
            let mut txn = h.env.begin(true);
            let mut seen = BTreeSet::new();
            for (k, x) in puts_of(sizes, v) {
                HandKept::put(h, &mut txn, &mut seen, v, k, x);
            }
            h.index(&mut txn, &seen, v);
            txn.commit();
        }
    }
}

/// Runs the workload: both stores loaded, then each operation's passes interleaved.
/// A timed pass of the workload.
type TimedPass<'a> = Box<dyn FnMut() -> Duration + 'a>;

/// One of the stores the workload times (Tabula's and the hand-kept layout, each in the
/// accounts and the storage shape): its three operations, each timed alone, with what the
/// pass checks afterwards.
trait Store {
    /// `puts` at `version` in a write transaction that is then dropped: the puts' time, and
    /// what the last put's key holds after them.
    fn put(&self, version: u64, puts: &[(u64, u64)]) -> (Duration, Option<u64>);
    /// The as-of reads of `queries` in one read transaction: their time and their
    /// [`query_sum`]s folded.
    fn get_as_of(&self, queries: &[(u64, u64)]) -> (Duration, u64);
    /// An unwind to the end of `to` in a write transaction that is then dropped: its time,
    /// the changes it undid and the state's sum after it.
    fn unwind(&self, to: u64) -> (Duration, u64, u64);
}

/// What every store's passes do and check against.
struct Run<'a> {
    version: u64,
    puts: &'a [(u64, u64)],
    queries: &'a [(u64, u64)],
    query_want: u64,
    to: u64,
    changes_above: u64,
    unwound_sum: u64,
}

impl<'a> Run<'a> {
    /// The three passes of `store`, named `{who}_{shape}{op}` and compared with the hand-kept
    /// layout's of the same shape.
    fn push(
        &'a self,
        passes: &mut Vec<(String, String, usize, TimedPass<'a>)>,
        who: &str,
        shape: &str,
        store: &'a dyn Store,
    ) {
        let name = |op: &str| format!("{who}_{shape}{op}");
        let base = |op: &str| format!("hand_{shape}{op}");
        let put = name("put");
        passes.push((
            put.clone(),
            base("put"),
            self.puts.len(),
            Box::new(move || {
                let (t, got) = store.put(self.version, self.puts);
                let (_, x) = self.puts[self.puts.len() - 1];
                assert_eq!(got, Some(x), "{put}");
                t
            }),
        ));
        let get = name("get_as_of");
        passes.push((
            get.clone(),
            base("get_as_of"),
            self.queries.len(),
            Box::new(move || {
                let (t, sum) = store.get_as_of(self.queries);
                verify(&get, black_box(sum), self.query_want);
                t
            }),
        ));
        let unwind = name("unwind");
        passes.push((
            unwind.clone(),
            base("unwind"),
            self.changes_above as usize,
            Box::new(move || {
                let (t, undone, sum) = store.unwind(self.to);
                assert_eq!(undone, self.changes_above, "{unwind}: changes undone");
                verify(&format!("{unwind} (state after)"), sum, self.unwound_sum);
                t
            }),
        ));
    }
}

impl Store for tabula::Db<HistorySchema> {
    fn put(&self, version: u64, puts: &[(u64, u64)]) -> (Duration, Option<u64>) {
        let mut tx = self.write().expect("write");
        let t = time(|| {
            tx.set_version(version);
            for (k, x) in puts {
                tx.put::<Accounts>(k, x).expect("put");
            }
        });
        let (k, _) = puts[puts.len() - 1];
        (t, tx.get::<Accounts>(&k).expect("get"))
    }

    fn get_as_of(&self, queries: &[(u64, u64)]) -> (Duration, u64) {
        let tx = self.read().expect("read");
        let mut sum = 0u64;
        let t = time(|| {
            for &(k, v) in queries {
                let x = tx.get_as_of::<Accounts>(&k, v).expect("get_as_of");
                sum = sum.wrapping_add(query_sum(k, v, x));
            }
        });
        (t, sum)
    }

    fn unwind(&self, to: u64) -> (Duration, u64, u64) {
        let mut tx = self.write().expect("write");
        let mut undone = 0;
        let t = time(|| undone = tx.unwind(to).expect("unwind"));
        let sum = tx.iter::<Accounts>().fold(0u64, |s, e| {
            let (k, x) = e.expect("iter");
            s.wrapping_add(mix(k ^ x))
        });
        (t, undone, sum)
    }
}

impl Store for tabula::Db<storage::StorageSchema> {
    fn put(&self, version: u64, puts: &[(u64, u64)]) -> (Duration, Option<u64>) {
        let mut tx = self.write().expect("write");
        let t = time(|| storage::tabula_puts(&mut tx, version, puts));
        let (k, _) = puts[puts.len() - 1];
        let (a, s) = storage::unit(k);
        let got = tx.get_dup::<storage::Storage>(&a, &s).expect("get_dup");
        (t, got.filter(|&(slot, _)| slot == s).map(|(_, x)| x))
    }

    fn get_as_of(&self, queries: &[(u64, u64)]) -> (Duration, u64) {
        let tx = self.read().expect("read");
        let mut sum = 0u64;
        let t = time(|| {
            for &(k, v) in queries {
                let x = storage::tabula_get_as_of(&tx, k, v);
                sum = sum.wrapping_add(query_sum(k, v, x));
            }
        });
        (t, sum)
    }

    fn unwind(&self, to: u64) -> (Duration, u64, u64) {
        let mut tx = self.write().expect("write");
        let mut undone = 0;
        let t = time(|| undone = tx.unwind(to).expect("unwind"));
        (t, undone, storage::tabula_state_sum(&tx))
    }
}

/// The hand-kept layouts on raw libmdbx (the accounts and the storage shape): what their
/// passes call.
trait HandKept {
    /// The environment.
    fn env(&self) -> &raw::Env;
    /// Writes `k = x` at version `v`, noting `k` in `seen` (for [`index`](Self::index)).
    fn put(&self, txn: &mut raw::Txn, seen: &mut BTreeSet<u64>, v: u64, k: u64, x: u64);
    /// Adds version `v` to the history index of every key in `seen`.
    fn index(&self, txn: &mut raw::Txn, seen: &BTreeSet<u64>, v: u64);
    /// `k`'s value at the end of version `v`.
    fn get_as_of(&self, txn: &raw::Txn, k: u64, v: u64) -> Option<u64>;
    /// Reverts every change above `to`; the changes undone.
    fn unwind(&self, txn: &mut raw::Txn, to: u64) -> u64;
    /// The state's rows folded ([`mix`] of key and value).
    fn state_sum(&self, txn: &raw::Txn) -> u64;
    /// What `k` holds now, after puts at `version` (the put pass's check).
    fn current(&self, txn: &raw::Txn, k: u64, version: u64) -> Option<u64>;
}

impl<H: HandKept> Store for H {
    fn put(&self, version: u64, puts: &[(u64, u64)]) -> (Duration, Option<u64>) {
        let mut txn = self.env().begin(true);
        let t = time(|| {
            let mut seen = BTreeSet::new();
            for &(k, x) in puts {
                HandKept::put(self, &mut txn, &mut seen, version, k, x);
            }
            self.index(&mut txn, &seen, version);
        });
        let (k, _) = puts[puts.len() - 1];
        let got = self.current(&txn, k, version);
        txn.abort();
        (t, got)
    }

    fn get_as_of(&self, queries: &[(u64, u64)]) -> (Duration, u64) {
        let txn = self.env().begin(false);
        let mut sum = 0u64;
        let t = time(|| {
            for &(k, v) in queries {
                let x = HandKept::get_as_of(self, &txn, k, v);
                sum = sum.wrapping_add(query_sum(k, v, x));
            }
        });
        txn.abort();
        (t, sum)
    }

    fn unwind(&self, to: u64) -> (Duration, u64, u64) {
        let mut txn = self.env().begin(true);
        let mut undone = 0;
        let t = time(|| undone = HandKept::unwind(self, &mut txn, to));
        let sum = self.state_sum(&txn);
        txn.abort();
        (t, undone, sum)
    }
}

pub fn run(sizes: HistorySizes) -> Workload {
    let last = sizes.versions + 1;
    let title = format!(
        "{} accounts (u64 -> u64) with a history of {} versions of {} puts: a write txn of {} \
         puts at a new version, as-of reads at random versions, an unwind of {} versions \
         (history table vs reth's changesets and sharded history index kept by hand on raw \
         libmdbx; `storage_*`: the same on {} slots an account of a dupsort table)",
        sizes.keys,
        sizes.versions,
        sizes.changes,
        sizes.puts,
        sizes.unwound,
        storage::SLOTS
    );
    let mut w = Workload::new("history", title, Unit::Ns);
    let model = Model::build(&sizes);
    let want = |op: &str, who: &str| variant_wanted(&format!("{who}_{op}"));
    let any = |who: &str| OPS.iter().any(|op| want(op, who));

    let tabula_dir = scratch_dir("history-tabula");
    let tabula_db = any("tabula")
        .then(|| tabula::open::<HistorySchema>(tabula_dir.path(), tabula_options()).expect("open"));
    let hand_dir = scratch_dir("history-hand");
    let hand = any("hand").then(|| Hand::open(hand_dir.path()));
    load(&sizes, tabula_db.as_ref(), hand.as_ref());
    // reth's storage shape: the same histories, unit `k` an account's slot.
    let storage_wanted = |who: &str| OPS[3..].iter().any(|op| want(op, who));
    let storage_dir = scratch_dir("history-storage-tabula");
    let storage_db = storage_wanted("tabula").then(|| {
        let db = tabula::open::<storage::StorageSchema>(storage_dir.path(), tabula_options())
            .expect("open");
        storage::tabula_load(&sizes, &db);
        db
    });
    let storage_hand_dir = scratch_dir("history-storage-hand");
    let storage_hand = storage_wanted("hand").then(|| {
        let hand = storage::Hand::open(storage_hand_dir.path());
        hand.load(&sizes);
        hand
    });

    let new_puts: Vec<(u64, u64)> = {
        let mut rng = XorShift::new(11);
        (0..sizes.puts)
            .map(|i| (rng.below(sizes.keys), value(u64::MAX / 2 + i)))
            .collect()
    };
    let queries = queries(&sizes);
    let query_want = queries.iter().fold(0u64, |s, &(k, v)| {
        s.wrapping_add(query_sum(k, v, model.at(k, v)))
    });
    let to = last - sizes.unwound.min(last - 1);
    let unwound_sum = model.state_sum(to);
    let changes_above: u64 = model
        .values
        .iter()
        .map(|vs| vs.iter().filter(|(w, _)| *w > to).count() as u64)
        .sum();

    let run = Run {
        version: last + 1,
        puts: &new_puts,
        queries: &queries,
        query_want,
        to,
        changes_above,
        unwound_sum,
    };
    let mut passes: Vec<(String, String, usize, TimedPass<'_>)> = Vec::new();
    let stores: [(&str, &str, Option<&dyn Store>); 4] = [
        ("tabula", "", tabula_db.as_ref().map(|db| db as &dyn Store)),
        (
            "tabula",
            "storage_",
            storage_db.as_ref().map(|db| db as &dyn Store),
        ),
        (
            "hand",
            "storage_",
            storage_hand.as_ref().map(|h| h as &dyn Store),
        ),
        ("hand", "", hand.as_ref().map(|h| h as &dyn Store)),
    ];
    for (who, shape, store) in stores {
        if let Some(store) = store {
            run.push(&mut passes, who, shape, store);
        }
    }
    passes.retain(|(name, ..)| variant_wanted(name));
    let labels: Vec<(String, String, usize)> = passes
        .iter()
        .map(|(n, b, ops, _)| (n.clone(), b.clone(), *ops))
        .collect();
    let mut passes: Vec<Pass<'_>> = passes
        .into_iter()
        .map(|(name, _, _, p)| (name, p))
        .collect();
    let medians = interleaved(sizes.reps, &mut passes);
    drop(passes);
    let mut rows: BTreeMap<usize, (String, String, f64)> = BTreeMap::new();
    for (i, ((name, base, ops), t)) in labels.into_iter().zip(medians).enumerate() {
        rows.insert(i, (name, base, ns_per(t, ops)));
    }
    for op in OPS {
        for who in ["tabula", "hand"] {
            let name = format!("{who}_{op}");
            if let Some((_, (name, base, ns))) = rows.iter().find(|(_, (n, ..))| *n == name) {
                w.add(name, || *ns, Some(base));
            }
        }
    }
    w
}
