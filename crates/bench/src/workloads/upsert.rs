//! upsert: random-key puts of typed rows into a loaded table, a fixed number per write
//! transaction, committed durably or without a flush (libmdbx `SAFE_NOSYNC`, LMDB `NOSYNC`,
//! redb `Durability::None`).
//!
//! Keys are drawn uniformly from `0..2 × entries`, so about half the puts overwrite a row and
//! half insert one. Every variant encodes the row through its own codec (Tabula's `Bincode`,
//! bincode 2 into a buffer for raw libmdbx, heed's `SerdeBincode`, redb's typed table). After
//! the timed puts each store is walked (untimed) and its entry count and checksum compared with
//! the state the puts must have left.

use std::time::Duration;

use heed::EnvFlags as HeedFlags;
use redb::{Durability, ReadableDatabase, ReadableTable};
use tabula::SyncMode;

use crate::data::{BINCODE2, Row, decode_row, entry_sum, row, row_sum, verify};
use crate::raw::EnvFlags;
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::Rows;
use crate::util::{key_sequence, median_of, ns_per, time};

use super::{load, scratch_dir, tabula_options};

/// Sizes of the upsert workload.
#[derive(Clone, Copy, Debug)]
pub struct UpsertSizes {
    /// Rows loaded before the puts.
    pub entries: u64,
    /// Puts timed.
    pub puts: usize,
    /// Puts per write transaction.
    pub batch: usize,
    /// Repetitions (median taken), each on a fresh store.
    pub reps: usize,
}

/// The final state the puts must leave: entry count and checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Final {
    count: u64,
    sum: u64,
}

/// Runs every variant, durable then without flush; with `investigate`, also Tabula without
/// flush with a 256 MiB growth step and with `UtterlyNoSync` (where the no-flush time goes).
pub fn run(sizes: UpsertSizes, investigate: bool) -> Workload {
    let title = format!(
        "{} random-key puts of typed rows (keys in 0..{}) into {} rows, {} per write txn",
        sizes.puts,
        2 * sizes.entries,
        sizes.entries,
        sizes.batch
    );
    let mut w = Workload::new("upsert", title, Unit::Ns);
    let keys = key_sequence(0x5EED_0005, 2 * sizes.entries, sizes.puts);
    let puts: Vec<(u64, Row)> = keys.iter().map(|&k| (k, row(k, 1))).collect();
    let want = final_state(sizes.entries, &keys);
    type Lib = fn(&UpsertSizes, &[(u64, Row)], bool) -> (Duration, Final);
    let libs: [(&str, Lib); 4] = [
        ("tabula", tabula),
        ("raw", raw_put),
        ("heed", heed),
        ("redb", redb),
    ];
    for (mode, durable) in [("durable", true), ("nosync", false)] {
        let base = format!("raw_{mode}");
        for (lib, f) in libs {
            let name = format!("{lib}_{mode}");
            if !variant_wanted(&name) {
                continue;
            }
            w.add(
                &name,
                || {
                    let t = median_of(sizes.reps, || {
                        let (t, got) = f(&sizes, &puts, durable);
                        assert_eq!(got.count, want.count, "{name}: entries after the puts");
                        verify(&name, got.sum, want.sum);
                        t
                    });
                    ns_per(t, puts.len())
                },
                Some(&base),
            );
        }
    }
    if investigate {
        let nosync = tabula_options().sync(SyncMode::SafeNoSync);
        let rows = [
            (
                "tabula_nosync_grow256",
                nosync.clone().growth_step(256 << 20),
            ),
            (
                "tabula_utterly_nosync",
                tabula_options().sync(SyncMode::UtterlyNoSync),
            ),
            (
                "tabula_nometasync",
                tabula_options().sync(SyncMode::NoMetaSync),
            ),
            ("tabula_nosync_flush0", nosync.clone().flush_threshold(0)),
            (
                "tabula_nosync_flush1g",
                nosync.clone().flush_threshold(1 << 30),
            ),
            (
                "tabula_nosync_flush8g",
                nosync.clone().flush_threshold(8 << 30),
            ),
        ];
        for (name, options) in rows {
            w.extra(
                name,
                || {
                    let (t, got) = tabula_with(&sizes, &puts, options);
                    assert_eq!(got.count, want.count, "{name}: entries after the puts");
                    verify(name, got.sum, want.sum);
                    ns_per(t, puts.len())
                },
                Some("raw_nosync"),
            );
        }
    }
    w
}

/// What `0..entries` at version 0, then a version-1 row at each of `keys`, leaves.
fn final_state(entries: u64, keys: &[u64]) -> Final {
    let mut put = vec![false; 2 * entries as usize];
    for &k in keys {
        put[k as usize] = true;
    }
    let mut f = Final { count: 0, sum: 0 };
    for (k, &p) in put.iter().enumerate() {
        let k = k as u64;
        let version = match (k < entries, p) {
            (_, true) => 1,
            (true, false) => 0,
            (false, false) => continue,
        };
        f.count += 1;
        f.sum = f.sum.wrapping_add(entry_sum(k, row_sum(&row(k, version))));
    }
    f
}

fn tabula(sizes: &UpsertSizes, puts: &[(u64, Row)], durable: bool) -> (Duration, Final) {
    let sync = if durable {
        SyncMode::Durable
    } else {
        SyncMode::SafeNoSync
    };
    tabula_with(sizes, puts, tabula_options().sync(sync))
}

fn tabula_with(
    sizes: &UpsertSizes,
    puts: &[(u64, Row)],
    options: tabula::Options,
) -> (Duration, Final) {
    let dir = scratch_dir("upsert-tabula");
    let db = load::tabula(dir.path(), sizes.entries, options);
    let t = time(|| {
        for batch in puts.chunks(sizes.batch) {
            let mut tx = db.write().expect("write");
            for (k, r) in batch {
                tx.put::<Rows>(k, r).expect("put");
            }
            tx.commit().expect("commit");
        }
    });
    let tx = db.read().expect("read");
    let mut f = Final { count: 0, sum: 0 };
    for e in tx.iter::<Rows>() {
        let (k, r) = e.expect("iter");
        f.count += 1;
        f.sum = f.sum.wrapping_add(entry_sum(k, row_sum(&r)));
    }
    (t, f)
}

/// Raw libmdbx: bincode 2 into a reused buffer, `mdbx_put` (upsert), on a table with
/// libmdbx's own comparator, as Tabula's.
fn raw_put(sizes: &UpsertSizes, puts: &[(u64, Row)], durable: bool) -> (Duration, Final) {
    let dir = scratch_dir("upsert-raw");
    let flags = EnvFlags {
        safe_no_sync: !durable,
        ..EnvFlags::DEFAULT
    };
    let (env, dbi) = load::raw(dir.path(), sizes.entries, flags);
    let mut buf = [0u8; 256];
    let t = time(|| {
        for batch in puts.chunks(sizes.batch) {
            let mut txn = env.begin(true);
            for (k, r) in batch {
                let n = bincode::serde::encode_into_slice(r, &mut buf, BINCODE2).expect("encode");
                txn.put(dbi, &k.to_be_bytes(), &buf[..n], 0);
            }
            txn.commit();
        }
    });
    let txn = env.begin(false);
    let mut f = Final { count: 0, sum: 0 };
    let mut c = txn.cursor(dbi);
    let mut first = true;
    while let Some((k, v)) = c.step(first) {
        first = false;
        let k = u64::from_be_bytes(k.try_into().expect("8-byte key"));
        f.count += 1;
        f.sum = f.sum.wrapping_add(entry_sum(k, row_sum(&decode_row(v))));
    }
    c.close();
    txn.abort();
    (t, f)
}

fn heed(sizes: &UpsertSizes, puts: &[(u64, Row)], durable: bool) -> (Duration, Final) {
    let dir = scratch_dir("upsert-heed");
    let flags = if durable {
        HeedFlags::empty()
    } else {
        HeedFlags::NO_SYNC
    };
    let (env, db) = load::heed(dir.path(), sizes.entries, flags);
    let t = time(|| {
        for batch in puts.chunks(sizes.batch) {
            let mut wtxn = env.write_txn().expect("heed write");
            for (k, r) in batch {
                db.put(&mut wtxn, &k.to_be_bytes(), r).expect("heed put");
            }
            wtxn.commit().expect("heed commit");
        }
    });
    let rtxn = env.read_txn().expect("heed read");
    let mut f = Final { count: 0, sum: 0 };
    for e in db.iter(&rtxn).expect("heed iter") {
        let (k, r) = e.expect("heed next");
        let k = u64::from_be_bytes(k.try_into().expect("8-byte key"));
        f.count += 1;
        f.sum = f.sum.wrapping_add(entry_sum(k, row_sum(&r)));
    }
    (t, f)
}

fn redb(sizes: &UpsertSizes, puts: &[(u64, Row)], durable: bool) -> (Duration, Final) {
    let dir = scratch_dir("upsert-redb");
    let db = load::redb(dir.path(), sizes.entries);
    let t = time(|| {
        for batch in puts.chunks(sizes.batch) {
            let mut wtx = db.begin_write().expect("redb write");
            if !durable {
                wtx.set_durability(Durability::None).expect("durability");
            }
            {
                let mut t = wtx.open_table(load::REDB_ROWS).expect("redb table");
                for (k, r) in batch {
                    t.insert(*k, r).expect("redb insert");
                }
            }
            wtx.commit().expect("redb commit");
        }
    });
    let rtx = db.begin_read().expect("redb read");
    let t2 = rtx.open_table(load::REDB_ROWS).expect("redb table");
    let mut f = Final { count: 0, sum: 0 };
    for e in t2.iter().expect("redb iter") {
        let (k, v) = e.expect("redb next");
        f.count += 1;
        f.sum = f
            .sum
            .wrapping_add(entry_sum(k.value(), row_sum(&v.value())));
    }
    (t, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_state_counts_inserts_once() {
        // 0..4 loaded; 1 and 6 put (6 twice): 5 entries, 1 and 6 at version 1.
        let f = final_state(4, &[1, 6, 6]);
        assert_eq!(f.count, 5);
        let mut sum = 0u64;
        for (k, v) in [(0, 0), (1, 1), (2, 0), (3, 0), (6, 1)] {
            sum = sum.wrapping_add(entry_sum(k, row_sum(&row(k, v))));
        }
        assert_eq!(f.sum, sum);
    }
}
