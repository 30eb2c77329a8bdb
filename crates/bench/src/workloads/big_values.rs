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
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Blobs, BlobsSchema};
use crate::util::{Pass, interleaved, key_sequence, ns_per, time};

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
        let name = |lib: &str, how: &str| {
            if how.is_empty() {
                format!("{lib}_{n}")
            } else {
                format!("{lib}_{how}_{n}")
            }
        };
        let want = |lib: &str| {
            ["", "borrowed", "owned"]
                .iter()
                .any(|how| variant_wanted(&name(lib, how)))
        };
        let sum_of = |get: &mut dyn FnMut(u64) -> u64| {
            keys.iter().fold(0u64, |s, &k| s.wrapping_add(get(k)))
        };

        // The stores (only those a wanted row reads), each with its read txn live.
        let tabula_dir = scratch_dir("big-tabula");
        let tabula_db = want("tabula").then(|| {
            let db =
                tabula::open::<BlobsSchema>(tabula_dir.path(), tabula_options()).expect("open");
            let mut tx = db.write().expect("write");
            {
                let mut ap = tx.appender::<Blobs>().expect("appender");
                for k in 0..entries {
                    ap.append(&k, &big_value(k, size)).expect("append");
                }
            }
            tx.commit().expect("commit");
            db
        });
        let tabula_tx = tabula_db.as_ref().map(|db| db.read().expect("read"));
        let raw_dir = scratch_dir("big-raw");
        let raw_env = want("raw").then(|| {
            let env = raw::Env::open(raw_dir.path(), 1, EnvFlags::DEFAULT);
            let mut txn = env.begin(true);
            let dbi = txn.open_table(c"blobs", raw::NO_FLAGS, true);
            for k in 0..entries {
                txn.put(dbi, &k.to_be_bytes(), &big_value(k, size), raw::APPEND);
            }
            txn.commit();
            (env, dbi)
        });
        let raw_txn = raw_env.as_ref().map(|(env, dbi)| (env.begin(false), *dbi));
        let heed_dir = scratch_dir("big-heed");
        let heed_store = want("heed").then(|| {
            // SAFETY: a fresh directory that nothing else opens while this env lives.
            let env = unsafe {
                EnvOpenOptions::new()
                    .map_size(HEED_MAP_SIZE)
                    .max_dbs(1)
                    .open(heed_dir.path())
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
            (env, db)
        });
        let heed_txn = heed_store
            .as_ref()
            .map(|(env, db)| (env.read_txn().expect("heed read"), *db));
        const BLOBS: TableDefinition<u64, &[u8]> = TableDefinition::new("blobs");
        let redb_dir = scratch_dir("big-redb");
        let redb_store = want("redb").then(|| {
            let db = redb::Database::create(redb_file(redb_dir.path())).expect("redb create");
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
            (db, t)
        });

        // The passes: each returns the checksum of what it read.
        type Read<'a> = Box<dyn FnMut() -> u64 + 'a>;
        let mut reads: Vec<(String, Read<'_>)> = Vec::new();
        if let Some(tx) = &tabula_tx {
            reads.push((
                name("tabula", "borrowed"),
                Box::new(move || {
                    sum_of(&mut |k| {
                        let v = tx.get_bytes::<Blobs>(&k).expect("get");
                        v.map_or(0, fold_lines)
                    })
                }),
            ));
            reads.push((
                name("tabula", "owned"),
                Box::new(move || {
                    sum_of(&mut |k| {
                        let v = tx.get::<Blobs>(&k).expect("get");
                        v.as_deref().map_or(0, fold_lines)
                    })
                }),
            ));
        }
        if let Some((txn, dbi)) = &raw_txn {
            reads.push((
                name("raw", ""),
                Box::new(move || {
                    sum_of(&mut |k| txn.get(*dbi, &k.to_be_bytes()).map_or(0, fold_lines))
                }),
            ));
            reads.push((
                name("raw", "owned"),
                Box::new(move || {
                    sum_of(&mut |k| {
                        let v = txn.get(*dbi, &k.to_be_bytes()).map(<[u8]>::to_vec);
                        v.as_deref().map_or(0, fold_lines)
                    })
                }),
            ));
        }
        if let Some((rtxn, db)) = &heed_txn {
            for owned in [false, true] {
                reads.push((
                    name("heed", if owned { "owned" } else { "borrowed" }),
                    Box::new(move || {
                        sum_of(&mut |k| {
                            let v = db.get(rtxn, &k.to_be_bytes()).expect("heed get");
                            if owned {
                                v.map(<[u8]>::to_vec).as_deref().map_or(0, fold_lines)
                            } else {
                                v.map_or(0, fold_lines)
                            }
                        })
                    }),
                ));
            }
        }
        if let Some((_, t)) = &redb_store {
            for owned in [false, true] {
                reads.push((
                    name("redb", if owned { "owned" } else { "borrowed" }),
                    Box::new(move || {
                        sum_of(&mut |k| match t.get(k).expect("redb get") {
                            // The copy an owned read makes (kept: `black_box`).
                            Some(g) if owned => fold_lines(&black_box(g.value().to_vec())),
                            Some(g) => fold_lines(g.value()),
                            None => 0,
                        })
                    }),
                ));
            }
        }
        reads.retain(|(name, _)| variant_wanted(name));
        let names: Vec<String> = reads.iter().map(|(n, _)| n.clone()).collect();
        let mut passes: Vec<Pass<'_>> = reads
            .into_iter()
            .map(|(label, mut read)| {
                let pass: Box<dyn FnMut() -> std::time::Duration + '_> =
                    Box::new(move || time(|| verify(&label, black_box(read()), expected)));
                (String::new(), pass)
            })
            .collect();
        let medians = interleaved(sizes.reps, &mut passes);
        drop(passes);
        let base = name("raw", "");
        for (row, t) in names.iter().zip(medians) {
            w.add(row, || ns_per(t, keys.len()), Some(&base));
        }
        if let Some((txn, _)) = raw_txn {
            txn.abort();
        }
    }
    w
}
