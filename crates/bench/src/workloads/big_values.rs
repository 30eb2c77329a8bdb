//! big_values: random gets of 1 KiB, 16 KiB and 256 KiB values in one read transaction, each
//! value read borrowed (a slice of the mapped pages) or owned (copied into a `Vec<u8>`).
//!
//! Every variant folds one word of each 64-byte line of every value it read, its last 8 bytes
//! and its length into a checksum ([`fold_lines`]): a borrowed read looks at the whole value,
//! as a reader that uses it does, and a wrong or short value fails the run.

use std::hint::black_box;

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvOpenOptions, PutFlags};
use redb::{ReadableDatabase, TableDefinition};

use crate::data::{big_value, fold_lines, verify};
use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload};
use crate::tables::{Blobs, BlobsSchema};
use crate::util::{key_sequence, median_of, ns_per, time};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// The value sizes.
pub const SIZES: [usize; 3] = [1 << 10, 16 << 10, 256 << 10];

/// A size's row suffix: `1k`, `16k`, `256k`.
pub fn label(size: usize) -> String {
    format!("{}k", size >> 10)
}

/// Sizes of the big-values workload.
#[derive(Clone, Copy, Debug)]
pub struct BigSizes {
    /// Bytes stored per value size (entries = this / size).
    pub stored: usize,
    /// Bytes read per pass per value size (gets = this / size).
    pub read: usize,
    /// Repetitions (median taken).
    pub reps: usize,
}

/// Runs every variant at every size.
pub fn run(sizes: BigSizes) -> Workload {
    let title = format!(
        "random gets of 1, 16 and 256 KiB values ({} MiB stored and {} MiB read per size), one read txn, borrowed and owned",
        sizes.stored >> 20,
        sizes.read >> 20
    );
    let mut w = Workload::new("big_values", title, Unit::Ns);
    for size in SIZES {
        let entries = (sizes.stored / size).max(2) as u64;
        let gets = (sizes.read / size).max(16);
        let keys = key_sequence(0x5EED_0006 ^ size as u64, entries, gets);
        let per_key: Vec<u64> = (0..entries)
            .map(|k| fold_lines(&big_value(k, size)))
            .collect();
        let expected = keys
            .iter()
            .fold(0u64, |s, &k| s.wrapping_add(per_key[k as usize]));
        let n = label(size);
        let raw_row = format!("raw_{n}");
        let base = Some(raw_row.as_str());
        let timed = |label: &str, pass: &mut dyn FnMut() -> u64| {
            let t = median_of(sizes.reps, || {
                time(|| verify(label, black_box(pass()), expected))
            });
            ns_per(t, keys.len())
        };
        {
            let dir = scratch_dir("big-tabula");
            let db = tabula::open::<BlobsSchema>(dir.path(), tabula_options()).expect("open");
            let mut tx = db.write().expect("write");
            {
                let mut ap = tx.appender::<Blobs>().expect("appender");
                for k in 0..entries {
                    ap.append(&k, &big_value(k, size)).expect("append");
                }
            }
            tx.commit().expect("commit");
            let tx = db.read().expect("read");
            let name = format!("tabula_borrowed_{n}");
            w.add(
                &name,
                || {
                    timed(&name, &mut || {
                        keys.iter().fold(0u64, |s, k| {
                            let v = tx.get_bytes::<Blobs>(k).expect("get");
                            s.wrapping_add(v.map_or(0, fold_lines))
                        })
                    })
                },
                base,
            );
            let name = format!("tabula_owned_{n}");
            w.add(
                &name,
                || {
                    timed(&name, &mut || {
                        keys.iter().fold(0u64, |s, k| {
                            let v = tx.get::<Blobs>(k).expect("get");
                            s.wrapping_add(v.as_deref().map_or(0, fold_lines))
                        })
                    })
                },
                base,
            );
        }
        {
            let dir = scratch_dir("big-raw");
            let env = raw::Env::open(dir.path(), 1, EnvFlags::DEFAULT);
            let mut txn = env.begin(true);
            let dbi = txn.open_table_with_cmp(c"blobs", Some(raw::lexical_cmp_branchy));
            for k in 0..entries {
                txn.put(dbi, &k.to_be_bytes(), &big_value(k, size), raw::APPEND);
            }
            txn.commit();
            let txn = env.begin(false);
            let name = format!("raw_{n}");
            w.add(
                &name,
                || {
                    timed(&name, &mut || {
                        keys.iter().fold(0u64, |s, k| {
                            let v = txn.get(dbi, &k.to_be_bytes());
                            s.wrapping_add(v.map_or(0, fold_lines))
                        })
                    })
                },
                base,
            );
            let name = format!("raw_owned_{n}");
            w.add(
                &name,
                || {
                    timed(&name, &mut || {
                        keys.iter().fold(0u64, |s, k| {
                            let v = txn.get(dbi, &k.to_be_bytes()).map(<[u8]>::to_vec);
                            s.wrapping_add(v.as_deref().map_or(0, fold_lines))
                        })
                    })
                },
                base,
            );
            txn.abort();
        }
        {
            let dir = scratch_dir("big-heed");
            // SAFETY: a fresh directory that nothing else opens while this env lives.
            let env = unsafe {
                EnvOpenOptions::new()
                    .map_size(HEED_MAP_SIZE)
                    .max_dbs(1)
                    .open(dir.path())
            }
            .expect("heed open");
            let wtxn = env.write_txn().expect("heed write");
            let db = env
                .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                    let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("blobs"))?;
                    for k in 0..entries {
                        let (key, v) = (k.to_be_bytes(), big_value(k, size));
                        db.put_with_flags(wtxn, PutFlags::APPEND, &key, &v)?;
                    }
                    Ok(CommitOrAbort::<_, ()>::Commit(db))
                })
                .expect("heed create")
                .unwrap_commit();
            let rtxn = env.read_txn().expect("heed read");
            for owned in [false, true] {
                let name = format!("heed_{}_{n}", if owned { "owned" } else { "borrowed" });
                w.add(
                    &name,
                    || {
                        timed(&name, &mut || {
                            keys.iter().fold(0u64, |s, k| {
                                let v = db.get(&rtxn, &k.to_be_bytes()).expect("heed get");
                                let sum = if owned {
                                    v.map(<[u8]>::to_vec).as_deref().map_or(0, fold_lines)
                                } else {
                                    v.map_or(0, fold_lines)
                                };
                                s.wrapping_add(sum)
                            })
                        })
                    },
                    base,
                );
            }
        }
        {
            const BLOBS: TableDefinition<u64, &[u8]> = TableDefinition::new("blobs");
            let dir = scratch_dir("big-redb");
            let db = redb::Database::create(redb_file(dir.path())).expect("redb create");
            let wtx = db.begin_write().expect("redb write");
            {
                let mut t = wtx.open_table(BLOBS).expect("redb table");
                for k in 0..entries {
                    t.insert(k, &big_value(k, size)[..]).expect("redb insert");
                }
            }
            wtx.commit().expect("redb commit");
            let rtx = db.begin_read().expect("redb read");
            let t = rtx.open_table(BLOBS).expect("redb table");
            for owned in [false, true] {
                let name = format!("redb_{}_{n}", if owned { "owned" } else { "borrowed" });
                w.add(
                    &name,
                    || {
                        timed(&name, &mut || {
                            keys.iter().fold(0u64, |s, &k| {
                                let g = t.get(k).expect("redb get");
                                let sum = match g {
                                    Some(g) if owned => fold_lines(&g.value().to_vec()),
                                    Some(g) => fold_lines(g.value()),
                                    None => 0,
                                };
                                s.wrapping_add(sum)
                            })
                        })
                    },
                    base,
                );
            }
        }
    }
    w
}
