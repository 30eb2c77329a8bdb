//! dup_seek: random seeks by subkey in a dupsort table of reth's storage shape — 20-byte keys
//! (addresses), each with [`SUBKEYS`] values sorted by a 32-byte subkey (slot) and carrying a
//! 32-byte word — in one read transaction.
//!
//! Each seek asks for an existing key and an existing subkey with its last byte lowered, so it
//! lands on that subkey as a `>=` match (never an exact one, never past the key's values). Every
//! row copies out the 32-byte subkey and the 32-byte word it found and folds both into the
//! checksum. Tabula `tx.seek_dup` (the headline) and `Cursor::seek_dup`; raw libmdbx one cursor
//! and `MDBX_GET_BOTH_RANGE`; LMDB the same through its C API (heed 0.23 has no such call and
//! keeps its cursors private); heed's own API (`get_duplicates` and a walk to the first value
//! `>=` the subkey); redb a `(key, subkey)` table and `range((key, subkey)..)`'s first entry.

use std::hint::black_box;

use heed::types::Bytes;
use heed::{CommitOrAbort, DatabaseFlags, EnvOpenOptions, PutFlags};
use redb::{ReadableDatabase, TableDefinition};

use crate::data::{fold_words, mix, verify};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Slots, SlotsSchema};
use crate::util::{Pass, XorShift, interleaved, ns_per, time};
use crate::{lmdb, raw};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Values (subkeys) per key.
pub const SUBKEYS: usize = 20;

/// The rows this workload writes to the JSON, in order.
pub const ROWS: [&str; 6] = [
    "tabula",
    "tabula_cursor",
    "raw",
    "lmdb",
    "heed_dups",
    "redb",
];

/// Sizes of the dup_seek workload.
#[derive(Clone, Copy, Debug)]
pub struct DupSeekSizes {
    /// Keys in the table (each with [`SUBKEYS`] values).
    pub keys: u64,
    /// Seeks per pass.
    pub seeks: usize,
    /// Repetitions (median taken).
    pub reps: usize,
}

/// A 20-byte key.
pub type Addr = [u8; 20];
/// A 32-byte subkey or value.
pub type Word = [u8; 32];

/// `N` pseudo-random bytes from `seed`.
fn bytes_of<const N: usize>(seed: u64) -> [u8; N] {
    let mut out = [0u8; N];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let w = mix(seed ^ mix(i as u64)).to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
    out
}

/// The `n` keys of the table, sorted (so the loads can append): random 20-byte addresses.
///
/// # Panics
///
/// When two keys collide (they are 160 random bits; it does not happen).
pub fn keys(n: u64) -> Vec<Addr> {
    let mut keys: Vec<Addr> = (0..n).map(|i| bytes_of(0xADD0_0000_0000 ^ i)).collect();
    keys.sort_unstable();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "distinct keys");
    keys
}

/// The subkeys of key number `i`, sorted: random 32-byte slots whose last byte is odd (so a
/// query can lower it) and whose first 31 bytes differ from each other's, so the subkey with its
/// last byte lowered still sorts after the previous subkey.
///
/// # Panics
///
/// When two subkeys share their first 31 bytes (248 random bits; it does not happen).
pub fn subkeys(i: u64) -> [Word; SUBKEYS] {
    let base = mix(0x5107_0000_0000 ^ i);
    let mut out: [Word; SUBKEYS] = std::array::from_fn(|j| {
        let mut s: Word = bytes_of(base ^ mix(j as u64 + 1));
        s[31] |= 1;
        s
    });
    out.sort_unstable();
    assert!(
        out.windows(2).all(|w| w[0][..31] < w[1][..31]),
        "subkeys of key {i} differ before their last byte"
    );
    out
}

/// The 32-byte value of key number `i`'s `j`-th subkey.
pub fn word(i: u64, j: usize) -> Word {
    bytes_of(0x7A1E_0000_0000 ^ (i * SUBKEYS as u64 + j as u64))
}

/// What a found (subkey, value) adds to a pass's checksum.
#[inline]
pub fn hit_sum(subkey: &[u8], value: &[u8]) -> u64 {
    mix(fold_words(subkey)) ^ fold_words(value)
}

/// The queries of a pass — a random key and one of its subkeys with the last byte lowered —
/// and the checksum a pass that finds each one's subkey and value returns.
pub fn queries(n: u64, count: usize, seed: u64) -> (Vec<(Addr, Word)>, u64) {
    let keys = keys(n);
    let mut rng = XorShift::new(seed);
    let mut sum = 0u64;
    let qs = (0..count)
        .map(|_| {
            let i = rng.below(n);
            let j = rng.below(SUBKEYS as u64) as usize;
            let found = subkeys(i)[j];
            sum = sum.wrapping_add(hit_sum(&found, &word(i, j)));
            let mut q = found;
            q[31] -= 1;
            (keys[i as usize], q)
        })
        .collect();
    (qs, sum)
}

/// Calls `put(key, subkey, value, first_of_key)` for every entry, in key and subkey order.
fn for_each_entry(n: u64, mut put: impl FnMut(&Addr, &Word, &Word, bool)) {
    for (i, key) in keys(n).iter().enumerate() {
        let i = i as u64;
        for (j, s) in subkeys(i).iter().enumerate() {
            put(key, s, &word(i, j), j == 0);
        }
    }
}

/// `subkey ++ value`: the stored dup of every libmdbx/LMDB table here.
fn dup_bytes(subkey: &Word, value: &Word) -> [u8; 64] {
    let mut d = [0u8; 64];
    d[..32].copy_from_slice(subkey);
    d[32..].copy_from_slice(value);
    d
}

/// redb's table: `(key, subkey) -> value`.
const REDB_SLOTS: TableDefinition<(Addr, Word), Word> = TableDefinition::new("slots");

/// Runs every variant: every store is loaded first, each with its read txn live, then all
/// seek passes are timed in interleaved rounds ([`interleaved`]). `investigate` adds
/// `raw_customcmp` (raw libmdbx with a branchy key comparator written in Rust,
/// [`raw::lexical_cmp_branchy`], which Tabula installed before its libmdbx compared keys that
/// way itself; printed, not in the JSON).
pub fn run(sizes: DupSeekSizes, investigate: bool) -> Workload {
    let n = sizes.keys;
    let title = format!(
        "{} random seek_dup on {n} keys × {SUBKEYS} subkeys (20-byte keys, 32-byte subkeys, \
         32-byte values), one read txn",
        sizes.seeks
    );
    let mut w = Workload::new("dup_seek", title, Unit::Ns);
    let (qs, expected) = queries(n, sizes.seeks, 0x5EED_D0B5);
    let qs = &qs;
    let want = |names: &[&str]| names.iter().any(|v| variant_wanted(v));

    // The stores (only those a wanted row reads).
    let tabula_dir = scratch_dir("dup_seek-tabula");
    let tabula_db = want(&["tabula", "tabula_cursor"]).then(|| load_tabula(tabula_dir.path(), n));
    let tabula_tx = tabula_db.as_ref().map(|db| db.read().expect("read"));
    let raw_dir = scratch_dir("dup_seek-raw");
    let raw_store = want(&["raw"]).then(|| load_raw(raw_dir.path(), n, false));
    let raw_txn = raw_store
        .as_ref()
        .map(|(env, dbi)| (env.begin(false), *dbi));
    let custom_dir = scratch_dir("dup_seek-raw-customcmp");
    let custom_store =
        (investigate && want(&["raw_customcmp"])).then(|| load_raw(custom_dir.path(), n, true));
    let custom_txn = custom_store
        .as_ref()
        .map(|(env, dbi)| (env.begin(false), *dbi));
    let lmdb_dir = scratch_dir("dup_seek-lmdb");
    let lmdb_store = want(&["lmdb"]).then(|| load_lmdb(lmdb_dir.path(), n));
    let lmdb_txn = lmdb_store
        .as_ref()
        .map(|(env, dbi)| (env.begin(false), *dbi));
    let heed_dir = scratch_dir("dup_seek-heed");
    let heed_store = want(&["heed_dups"]).then(|| load_heed(heed_dir.path(), n));
    let heed_txn = heed_store
        .as_ref()
        .map(|(env, db)| (env.read_txn().expect("heed read"), *db));
    let redb_dir = scratch_dir("dup_seek-redb");
    let redb_table = want(&["redb"]).then(|| {
        let db = load_redb(redb_dir.path(), n);
        let rtx = db.begin_read().expect("redb read");
        let table = rtx.open_table(REDB_SLOTS).expect("redb table");
        (db, table)
    });

    // The passes: each returns (hits, checksum).
    type Seeks<'a> = Box<dyn FnMut() -> (usize, u64) + 'a>;
    let mut seeks: Vec<(&str, &str, Seeks<'_>)> = Vec::new();
    if let Some(tx) = &tabula_tx {
        seeks.push((
            "tabula",
            "raw",
            Box::new(move || {
                let (mut hits, mut sum) = (0, 0u64);
                for (k, q) in qs {
                    if let Some((s, v)) = tx.seek_dup::<Slots>(k, q).expect("seek_dup") {
                        hits += 1;
                        sum = sum.wrapping_add(hit_sum(&s, &v));
                    }
                }
                (hits, sum)
            }),
        ));
        seeks.push((
            "tabula_cursor",
            "raw",
            Box::new(move || {
                let (mut hits, mut sum) = (0, 0u64);
                let mut c = tx.cursor::<Slots>().expect("cursor");
                for (k, q) in qs {
                    if let Some((_, (s, v))) = c.seek_dup(k, q).expect("seek_dup") {
                        hits += 1;
                        sum = sum.wrapping_add(hit_sum(&s, &v));
                    }
                }
                (hits, sum)
            }),
        ));
    }
    if let Some((txn, dbi)) = &raw_txn {
        seeks.push(("raw", "raw", raw_seeks(txn, *dbi, qs)));
    }
    if let Some((txn, dbi)) = &custom_txn {
        seeks.push(("raw_customcmp", "raw", raw_seeks(txn, *dbi, qs)));
    }
    if let Some((txn, dbi)) = &lmdb_txn {
        seeks.push((
            "lmdb",
            "raw",
            Box::new(move || {
                let (mut hits, mut sum) = (0, 0u64);
                let mut c = txn.cursor(*dbi);
                for (k, q) in qs {
                    if let Some(d) = c.get_both_range(k, q) {
                        let (s, v) = split_dup(d);
                        hits += 1;
                        sum = sum.wrapping_add(hit_sum(&s, &v));
                    }
                }
                c.close();
                (hits, sum)
            }),
        ));
    }
    if let Some((rtxn, db)) = &heed_txn {
        seeks.push((
            "heed_dups",
            "raw",
            Box::new(move || {
                let (mut hits, mut sum) = (0, 0u64);
                for (k, q) in qs {
                    let Some(dups) = db.get_duplicates(rtxn, k).expect("heed get_duplicates")
                    else {
                        continue;
                    };
                    for e in dups {
                        let (_, d) = e.expect("heed next dup");
                        if d[..32] >= q[..] {
                            let (s, v) = split_dup(d);
                            hits += 1;
                            sum = sum.wrapping_add(hit_sum(&s, &v));
                            break;
                        }
                    }
                }
                (hits, sum)
            }),
        ));
    }
    if let Some((_, t)) = &redb_table {
        seeks.push((
            "redb",
            "raw",
            Box::new(move || {
                let (mut hits, mut sum) = (0, 0u64);
                for (k, q) in qs {
                    let mut range = t.range((*k, *q)..).expect("redb range");
                    if let Some(e) = range.next() {
                        let (key, value) = e.expect("redb next");
                        let (found, s) = key.value();
                        if found == *k {
                            let v = value.value();
                            hits += 1;
                            sum = sum.wrapping_add(hit_sum(&s, &v));
                        }
                    }
                }
                (hits, sum)
            }),
        ));
    }
    seeks.retain(|(name, ..)| variant_wanted(name));
    let labels: Vec<(&str, &str)> = seeks.iter().map(|(n, b, _)| (*n, *b)).collect();
    let count = sizes.seeks;
    let mut passes: Vec<Pass<'_>> = seeks
        .into_iter()
        .map(|(name, _, mut pass)| {
            let pass: Box<dyn FnMut() -> std::time::Duration + '_> = Box::new(move || {
                time(|| {
                    let (hits, sum) = pass();
                    assert_eq!(hits, count, "{name}: {hits} of {count} seeks found a value");
                    verify(name, black_box(sum), expected);
                })
            });
            (name.to_string(), pass)
        })
        .collect();
    let medians = interleaved(sizes.reps, &mut passes);
    drop(passes);
    for ((name, base), t) in labels.into_iter().zip(medians) {
        if ROWS.contains(&name) {
            w.add(name, || ns_per(t, count), Some(base));
        } else {
            w.extra(name, || ns_per(t, count), Some(base));
        }
    }
    for (txn, _) in [raw_txn, custom_txn].into_iter().flatten() {
        txn.abort();
    }
    if let Some((txn, _)) = lmdb_txn {
        txn.abort();
    }
    w
}

/// Raw libmdbx's pass: one cursor, `MDBX_GET_BOTH_RANGE` per query, the subkey and value
/// copied out; returns (hits, checksum).
fn raw_seeks<'a>(
    txn: &'a raw::Txn,
    dbi: raw::Dbi,
    qs: &'a [(Addr, Word)],
) -> Box<dyn FnMut() -> (usize, u64) + 'a> {
    Box::new(move || {
        let (mut hits, mut sum) = (0, 0u64);
        let mut c = txn.cursor(dbi);
        for (k, q) in qs {
            if let Some(d) = c.get_both_range(k, q) {
                let (s, v) = split_dup(d);
                hits += 1;
                sum = sum.wrapping_add(hit_sum(&s, &v));
            }
        }
        c.close();
        (hits, sum)
    })
}

/// A stored dup's subkey and value, copied out.
#[inline]
fn split_dup(d: &[u8]) -> (Word, Word) {
    let d: &[u8; 64] = d.try_into().expect("a 64-byte dup");
    let (s, v) = d.split_at(32);
    (
        s.try_into().expect("32 bytes"),
        v.try_into().expect("32 bytes"),
    )
}

/// Tabula: `Db<SlotsSchema>`, loaded with the appender (`append` for a key's first value,
/// `append_dup` for the others).
fn load_tabula(dir: &std::path::Path, n: u64) -> tabula::Db<SlotsSchema> {
    let db = tabula::open::<SlotsSchema>(dir, tabula_options()).expect("open");
    let mut tx = db.write().expect("write");
    {
        let mut ap = tx.appender::<Slots>().expect("appender");
        for_each_entry(n, |k, s, v, first| {
            let entry = (*s, *v);
            if first {
                ap.append(k, &entry).expect("append");
            } else {
                ap.append_dup(k, &entry).expect("append_dup");
            }
        });
    }
    tx.commit().expect("commit");
    db
}

/// Raw libmdbx: a dupsort table of the same stored bytes, with libmdbx's own key comparator
/// (as Tabula's tables) or, with `custom_cmp`, [`raw::lexical_cmp_branchy`].
fn load_raw(dir: &std::path::Path, n: u64, custom_cmp: bool) -> (raw::Env, raw::Dbi) {
    let env = raw::Env::open(dir, 1, raw::EnvFlags::DEFAULT);
    let txn = env.begin(true);
    let dbi = if custom_cmp {
        txn.open_table_with_cmp_flags(c"slots", raw::DUPSORT, Some(raw::lexical_cmp_branchy))
    } else {
        txn.open_table(c"slots", raw::DUPSORT, true)
    };
    let mut c = txn.cursor(dbi);
    for_each_entry(n, |k, s, v, first| {
        let flags = if first { raw::APPEND } else { raw::APPENDDUP };
        c.put(k, &dup_bytes(s, v), flags);
    });
    c.close();
    txn.commit();
    (env, dbi)
}

/// LMDB through its C API: a dupsort table of the same bytes (LMDB's default comparators).
fn load_lmdb(dir: &std::path::Path, n: u64) -> (lmdb::Env, lmdb::Dbi) {
    let env = lmdb::Env::open(dir, 1);
    let txn = env.begin(true);
    let dbi = txn.open_table(c"slots", lmdb::DUPSORT);
    let mut c = txn.cursor(dbi);
    for_each_entry(n, |k, s, v, first| {
        let flags = if first { lmdb::APPEND } else { lmdb::APPENDDUP };
        c.put(k, &dup_bytes(s, v), flags);
    });
    c.close();
    txn.commit();
    (env, dbi)
}

/// heed's store: `Database<Bytes, Bytes>` with `DUP_SORT`, the same bytes.
type HeedSlots = heed::Database<'static, Bytes, Bytes>;

fn load_heed(dir: &std::path::Path, n: u64) -> (heed::Env, HeedSlots) {
    let mut opts = EnvOpenOptions::new();
    opts.map_size(HEED_MAP_SIZE).max_dbs(1);
    // SAFETY: a fresh directory nothing else opens, default flags.
    let env = unsafe { opts.open(dir) }.expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let db = opener
                .database_options()
                .types::<Bytes, Bytes>()
                .name("slots")
                .flags(DatabaseFlags::DUP_SORT)
                .create(wtxn)?;
            let mut result = Ok(());
            for_each_entry(n, |k, s, v, first| {
                let flags = if first {
                    PutFlags::APPEND
                } else {
                    PutFlags::APPEND_DUP
                };
                if result.is_ok() {
                    result = db.put_with_flags(wtxn, flags, k, &dup_bytes(s, v));
                }
            });
            result?;
            Ok(CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("heed create")
        .unwrap_commit();
    (env, db)
}

/// redb: `(key, subkey) -> value`, inserted in order.
fn load_redb(dir: &std::path::Path, n: u64) -> redb::Database {
    let db = redb::Database::create(redb_file(dir)).expect("redb create");
    let wtx = db.begin_write().expect("redb write");
    {
        let mut t = wtx.open_table(REDB_SLOTS).expect("redb table");
        for_each_entry(n, |k, s, v, _| {
            t.insert((*k, *s), *v).expect("redb insert");
        });
    }
    wtx.commit().expect("redb commit");
    db
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_subkey_lands_on_its_subkey() {
        let s = subkeys(7);
        for j in 0..SUBKEYS {
            let mut q = s[j];
            q[31] -= 1;
            assert!(q < s[j]);
            if j > 0 {
                assert!(s[j - 1] < q, "subkey {j} of key 7");
            }
        }
        let (qs, sum) = queries(50, 200, 1);
        assert_eq!(qs.len(), 200);
        assert_ne!(sum, queries(50, 200, 2).1);
    }

    /// The workload at a tiny size: every row runs, finds every subkey (a wrong or missing
    /// value panics in `verify`) and is written under the names in [`ROWS`], which is what the
    /// report's targets name.
    #[test]
    fn every_row_runs_and_is_named_in_rows() {
        let w = run(
            DupSeekSizes {
                keys: 300,
                seeks: 2_000,
                reps: 1,
            },
            true,
        );
        let names: Vec<&str> = w
            .rows
            .iter()
            .filter(|r| r.json)
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, ROWS);
        assert!(
            w.get("raw_customcmp").is_some(),
            "the investigation row ran"
        );
        assert!(w.invalid().is_empty(), "{:?}", w.invalid());
    }
}
