//! prune: delete every [`EVERY`]th entry of a table of `u64 -> u64` by walking it with a write
//! cursor, in one write transaction.
//!
//! Every row walks the whole table in key order, reads (decodes) every entry's key and value
//! into its checksum, deletes the entries at positions `EVERY - 1`, `2 · EVERY - 1`, … and moves
//! on. Tabula `Tx::cursor_mut` (`first`/`next`, `delete_current`; the headline) and
//! `Tx::retain`; raw libmdbx `MDBX_FIRST`/`MDBX_NEXT` and `mdbx_cursor_del`; heed `iter_mut`
//! and `del_current`; redb `Table::retain`.
//!
//! Only the walk is timed: the write transaction is begun before it, and after it (untimed) the
//! table is walked again in the same transaction to check what is left — the entry count and a
//! checksum of every remaining key and value — then aborted, so each round starts from the same
//! table and no figure includes a commit's flush (which measures the disk).

use std::hint::black_box;
use std::time::Duration;

use heed::byteorder::{BigEndian, NativeEndian};
use heed::types::U64;
use heed::{CommitOrAbort, EnvOpenOptions, PutFlags};
use redb::{ReadableTable, TableDefinition};

use crate::data::{BINCODE2, entry_sum, mix, verify};
use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Pairs, PairsSchema};
use crate::util::{Pass, interleaved, ns_per, time};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Every `EVERY`th entry is deleted.
pub const EVERY: u64 = 10;

/// The rows this workload writes to the JSON, in order.
pub const ROWS: [&str; 5] = ["tabula", "tabula_retain", "raw", "heed", "redb"];

/// Sizes of the prune workload.
#[derive(Clone, Copy, Debug)]
pub struct PruneSizes {
    /// Entries in the table (keys `0..entries`).
    pub entries: u64,
    /// Repetitions (median taken).
    pub reps: usize,
}

/// The value stored under `k` (a full 64-bit number: a 9-byte varint in bincode 2).
#[inline]
pub fn value(k: u64) -> u64 {
    mix(k) | (1 << 63)
}

/// What one entry read adds to a checksum.
#[inline]
pub fn pair_sum(k: u64, v: u64) -> u64 {
    entry_sum(k, mix(v))
}

/// Whether the walk deletes the entry at `position` (0-based).
#[inline]
pub fn deleted(position: u64) -> bool {
    position % EVERY == EVERY - 1
}

/// The walk's bookkeeping: entries seen, their checksum, and the position of the next one.
#[derive(Default)]
struct Walk {
    seen: u64,
    sum: u64,
}

impl Walk {
    /// Reads entry (`k`, `v`); returns whether to delete it.
    #[inline]
    fn read(&mut self, k: u64, v: u64) -> bool {
        let delete = deleted(self.seen);
        self.seen += 1;
        self.sum = self.sum.wrapping_add(pair_sum(k, v));
        delete
    }
}

/// What a store must hold after the walk: (entries, checksum) of every key not deleted.
fn expected_after(n: u64) -> (u64, u64) {
    (0..n)
        .filter(|&k| !deleted(k))
        .fold((0, 0u64), |(c, s), k| {
            (c + 1, s.wrapping_add(pair_sum(k, value(k))))
        })
}

/// redb's table.
const REDB_PAIRS: TableDefinition<u64, u64> = TableDefinition::new("pairs");

/// heed's table: big-endian keys (the same order), native `u64` values.
type HeedPairs = heed::Database<'static, U64<BigEndian>, U64<NativeEndian>>;

/// Runs every variant: every store is loaded first, then the walks are timed in interleaved
/// rounds ([`interleaved`]), each in a write transaction that is checked and aborted.
pub fn run(sizes: PruneSizes) -> Workload {
    let n = sizes.entries;
    let title = format!(
        "delete every {EVERY}th entry of {n} (u64 -> u64) walking a write cursor, one write \
         txn (the walk timed, not the commit)"
    );
    let mut w = Workload::new("prune", title, Unit::Ns);
    let read_sum = (0..n).fold(0u64, |s, k| s.wrapping_add(pair_sum(k, value(k))));
    let (left, left_sum) = expected_after(n);
    let want = |names: &[&str]| names.iter().any(|v| variant_wanted(v));
    // Checks a walk's reads and the state it leaves.
    let check = move |name: &str, walk: &Walk, after: (u64, u64)| {
        assert_eq!(
            walk.seen, n,
            "{name}: the walk read {} entries of {n}",
            walk.seen
        );
        verify(name, black_box(walk.sum), read_sum);
        assert_eq!(
            after.0, left,
            "{name}: {} entries left, expected {left}",
            after.0
        );
        verify(&format!("{name} (after the walk)"), after.1, left_sum);
    };

    let tabula_dir = scratch_dir("prune-tabula");
    let tabula_db = want(&["tabula", "tabula_retain"]).then(|| load_tabula(tabula_dir.path(), n));
    let raw_dir = scratch_dir("prune-raw");
    let raw_store = want(&["raw"]).then(|| load_raw(raw_dir.path(), n));
    let heed_dir = scratch_dir("prune-heed");
    let heed_store = want(&["heed"]).then(|| load_heed(heed_dir.path(), n));
    let redb_dir = scratch_dir("prune-redb");
    let redb_db = want(&["redb"]).then(|| load_redb(redb_dir.path(), n));

    type Timed<'a> = Box<dyn FnMut() -> Duration + 'a>;
    let mut passes: Vec<(&str, &str, Timed<'_>)> = Vec::new();
    if let Some(db) = &tabula_db {
        passes.push((
            "tabula",
            "raw",
            Box::new(move || {
                let mut tx = db.write().expect("write");
                let mut walk = Walk::default();
                let t = time(|| {
                    let mut c = tx.cursor_mut::<Pairs>().expect("cursor_mut");
                    let mut entry = c.first().expect("first");
                    while let Some((k, v)) = entry {
                        if walk.read(k, v) {
                            c.delete_current().expect("delete_current");
                        }
                        entry = c.next().expect("next");
                    }
                });
                let after = tx.iter::<Pairs>().fold((0, 0u64), |(c, s), e| {
                    let (k, v) = e.expect("iter");
                    (c + 1, s.wrapping_add(pair_sum(k, v)))
                });
                check("tabula", &walk, after);
                drop(tx);
                t
            }),
        ));
        passes.push((
            "tabula_retain",
            "raw",
            Box::new(move || {
                let mut tx = db.write().expect("write");
                let mut walk = Walk::default();
                let mut removed = 0;
                let t = time(|| {
                    removed = tx
                        .retain::<Pairs>(|&k, &v| !walk.read(k, v))
                        .expect("retain");
                });
                let after = tx.iter::<Pairs>().fold((0, 0u64), |(c, s), e| {
                    let (k, v) = e.expect("iter");
                    (c + 1, s.wrapping_add(pair_sum(k, v)))
                });
                assert_eq!(removed, n - left, "tabula_retain: deleted count");
                check("tabula_retain", &walk, after);
                drop(tx);
                t
            }),
        ));
    }
    if let Some((env, dbi)) = &raw_store {
        let dbi = *dbi;
        passes.push((
            "raw",
            "raw",
            Box::new(move || {
                let txn = env.begin(true);
                let mut walk = Walk::default();
                let t = time(|| {
                    let mut c = txn.cursor(dbi);
                    let mut first = true;
                    while let Some((k, v)) = c.step(first) {
                        first = false;
                        let (k, v) = decode_raw(k, v);
                        if walk.read(k, v) {
                            c.del_current();
                        }
                    }
                    c.close();
                });
                let mut after = (0, 0u64);
                let mut c = txn.cursor(dbi);
                let mut first = true;
                while let Some((k, v)) = c.step(first) {
                    first = false;
                    let (k, v) = decode_raw(k, v);
                    after = (after.0 + 1, after.1.wrapping_add(pair_sum(k, v)));
                }
                c.close();
                check("raw", &walk, after);
                txn.abort();
                t
            }),
        ));
    }
    if let Some((env, db)) = &heed_store {
        passes.push((
            "heed",
            "raw",
            Box::new(move || {
                let mut wtxn = env.write_txn().expect("heed write");
                let mut walk = Walk::default();
                let t = time(|| {
                    let mut it = db.iter_mut(&mut wtxn).expect("heed iter_mut");
                    while let Some(e) = it.next() {
                        let (k, v) = e.expect("heed next");
                        if walk.read(k, v) {
                            // SAFETY: nothing read from the table is borrowed (the key and
                            // value were decoded into `u64`s).
                            unsafe { it.del_current() }.expect("heed del_current");
                        }
                    }
                });
                let after = db
                    .iter(&wtxn)
                    .expect("heed iter")
                    .fold((0, 0u64), |(c, s), e| {
                        let (k, v) = e.expect("heed next");
                        (c + 1, s.wrapping_add(pair_sum(k, v)))
                    });
                check("heed", &walk, after);
                wtxn.abort();
                t
            }),
        ));
    }
    if let Some(db) = &redb_db {
        passes.push((
            "redb",
            "raw",
            Box::new(move || {
                let wtx = db.begin_write().expect("redb write");
                let mut walk = Walk::default();
                let t;
                {
                    let mut table = wtx.open_table(REDB_PAIRS).expect("redb table");
                    t = time(|| {
                        table.retain(|k, v| !walk.read(k, v)).expect("redb retain");
                    });
                    let after = table
                        .iter()
                        .expect("redb iter")
                        .fold((0, 0u64), |(c, s), e| {
                            let (k, v) = e.expect("redb next");
                            (c + 1, s.wrapping_add(pair_sum(k.value(), v.value())))
                        });
                    check("redb", &walk, after);
                }
                wtx.abort().expect("redb abort");
                t
            }),
        ));
    }
    passes.retain(|(name, ..)| variant_wanted(name));
    let labels: Vec<(&str, &str)> = passes.iter().map(|(n, b, _)| (*n, *b)).collect();
    let mut passes: Vec<Pass<'_>> = passes
        .into_iter()
        .map(|(name, _, pass)| (name.to_string(), pass))
        .collect();
    let medians = interleaved(sizes.reps, &mut passes);
    drop(passes);
    for ((name, base), t) in labels.into_iter().zip(medians) {
        w.add(name, || ns_per(t, n as usize), Some(base));
    }
    w
}

/// A raw entry: the big-endian key and the bincode 2 value (plain `decode_from_slice`, as
/// scan's raw_typed decodes).
#[inline]
fn decode_raw(k: &[u8], v: &[u8]) -> (u64, u64) {
    let k = u64::from_be_bytes(k.try_into().expect("8-byte key"));
    let v = bincode::serde::decode_from_slice::<u64, _>(v, BINCODE2)
        .expect("decode a value")
        .0;
    (k, v)
}

/// Tabula: `Db<PairsSchema>`, loaded with the appender.
fn load_tabula(dir: &std::path::Path, n: u64) -> tabula::Db<PairsSchema> {
    let db = tabula::open::<PairsSchema>(dir, tabula_options()).expect("open");
    let mut tx = db.write().expect("write");
    {
        let mut ap = tx.appender::<Pairs>().expect("appender");
        for k in 0..n {
            ap.append(&k, &value(k)).expect("append");
        }
    }
    tx.commit().expect("commit");
    db
}

/// Raw libmdbx: Tabula's bytes (big-endian keys, bincode 2 values) with libmdbx's own comparator, as Tabula's.
fn load_raw(dir: &std::path::Path, n: u64) -> (raw::Env, raw::Dbi) {
    let env = raw::Env::open(dir, 1, EnvFlags::DEFAULT);
    let mut txn = env.begin(true);
    let dbi = txn.open_table(c"pairs", raw::NO_FLAGS, true);
    let mut buf = [0u8; 16];
    for k in 0..n {
        let len = bincode::serde::encode_into_slice(value(k), &mut buf, BINCODE2)
            .expect("encode a value");
        txn.put(dbi, &k.to_be_bytes(), &buf[..len], raw::APPEND);
    }
    txn.commit();
    (env, dbi)
}

/// heed: [`HeedPairs`], appended.
fn load_heed(dir: &std::path::Path, n: u64) -> (heed::Env, HeedPairs) {
    let mut opts = EnvOpenOptions::new();
    opts.map_size(HEED_MAP_SIZE).max_dbs(1);
    // SAFETY: a fresh directory nothing else opens, default flags.
    let env = unsafe { opts.open(dir) }.expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let db =
                opener.create_database::<U64<BigEndian>, U64<NativeEndian>>(wtxn, Some("pairs"))?;
            for k in 0..n {
                db.put_with_flags(wtxn, PutFlags::APPEND, &k, &value(k))?;
            }
            Ok(CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("heed create")
        .unwrap_commit();
    (env, db)
}

/// redb: `u64 -> u64`, inserted in order.
fn load_redb(dir: &std::path::Path, n: u64) -> redb::Database {
    let db = redb::Database::create(redb_file(dir)).expect("redb create");
    let wtx = db.begin_write().expect("redb write");
    {
        let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
        for k in 0..n {
            t.insert(k, value(k)).expect("redb insert");
        }
    }
    wtx.commit().expect("redb commit");
    db
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workload at a tiny size: every row runs, reads every entry and leaves exactly the
    /// entries not deleted (each pass checks both, panicking otherwise), and is written under
    /// the names in [`ROWS`], which is what the report's targets name.
    #[test]
    fn every_row_runs_and_is_named_in_rows() {
        let w = run(PruneSizes {
            entries: 5_000,
            reps: 1,
        });
        let names: Vec<&str> = w.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ROWS);
        assert!(w.invalid().is_empty(), "{:?}", w.invalid());
    }

    #[test]
    fn every_tenth_entry_goes() {
        assert_eq!(expected_after(100).0, 90);
        assert!(!deleted(0) && deleted(9) && !deleted(10) && deleted(19));
    }
}
