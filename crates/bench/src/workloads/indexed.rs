//! indexed: writes and queries of a table with three secondary indexes (two non-unique, by
//! sender and by recipient, and one unique, by hash), Tabula's declared indexes against raw
//! libmdbx maintaining the same index tables by hand in the same write transactions.
//!
//! The third variant is native_db (0.8.2, on its own redb 2), which declares the same three
//! secondary keys on its model (two non-unique, one unique) and keeps them itself.
//!
//! Four timed phases per variant, on a fresh store each: `insert` (rows under scattered keys),
//! `query` (the rows of random senders, through the sender index), `update` (every row gets a
//! new recipient and hash, so two of its three index entries move) and `delete` (every row).
//! Rows `tabula_<op>`, `raw_<op>` and `native_db_<op>`, ns per row (per query for `query`).
//! The libmdbx stores are opened without a flush per commit (`SafeNoSync`), so the rows compare
//! the work, not the disk. native_db has no durability setting (every commit is redb's
//! `Durability::Immediate`, an fsync), so its file is put on tmpfs (`/dev/shm`, where an fsync
//! costs nothing) when there is one, to compare the work there too.
//! Each phase's outcome (entries per table, the sum of the amounts the queries found) is
//! checked against what the data says.

use std::ffi::CStr;
use std::time::Duration;

use mdbx_sys as sys;
use serde::{Deserialize, Serialize};
use tabula::{Index, Schema, SyncMode, Table};

use crate::data::{BINCODE2, mix};
use crate::raw::{Env, EnvFlags, Txn};
use crate::report::{Unit, Workload, variant_wanted};
use crate::util::{median_of, ns_per, time};

use super::{scratch_dir, tabula_options};

/// Sizes of the indexed workload.
#[derive(Clone, Copy, Debug)]
pub struct IndexedSizes {
    /// Rows inserted, updated and deleted.
    pub rows: u64,
    /// Rows per write transaction.
    pub batch: usize,
    /// Queries by sender.
    pub queries: usize,
    /// Repetitions (median taken), each on a fresh store.
    pub reps: usize,
}

/// Distinct senders and recipients: each sender has `rows / PEOPLE` transfers on average.
const PEOPLE: u64 = 1000;

/// A row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    from: u32,
    to: u32,
    amount: u64,
    hash: [u8; 32],
}

#[derive(Table)]
#[table(name = "transfers", key = u64, value = Transfer, indexed)]
struct Transfers;

#[derive(Index)]
#[index(name = "by_from", on = Transfers, key = u32, by = from)]
struct ByFrom;

#[derive(Index)]
#[index(name = "by_to", on = Transfers, key = u32, by = to)]
struct ByTo;

#[derive(Index)]
#[index(name = "by_hash", on = Transfers, key = [u8; 32], unique, by = hash)]
struct ByHash;

fn from(_: &u64, t: &Transfer) -> u32 {
    t.from
}

fn to(_: &u64, t: &Transfer) -> u32 {
    t.to
}

fn hash(_: &u64, t: &Transfer) -> [u8; 32] {
    t.hash
}

#[derive(Schema)]
struct Indexed(Transfers, ByFrom, ByTo, ByHash);

/// Row `i` at `version`: its key is scattered (`mix` is a bijection, so keys are distinct).
fn transfer(i: u64, version: u64) -> (u64, Transfer) {
    let r = mix(i ^ version << 48);
    let mut hash = [0u8; 32];
    for (n, chunk) in hash.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&mix(i ^ version << 48 ^ (n as u64) << 56).to_be_bytes());
    }
    (
        mix(i),
        Transfer {
            from: (mix(i ^ 0xf) % PEOPLE) as u32,
            to: (r % PEOPLE) as u32,
            amount: r % 10_000,
            hash,
        },
    )
}

/// What the phases must find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Outcome {
    /// Entries of the table and its three indexes after the inserts.
    inserted: [u64; 4],
    /// The sum of the amounts the queries found.
    queried: u64,
    /// Entries after the updates.
    updated: [u64; 4],
    /// Entries after the deletes.
    deleted: [u64; 4],
}

/// The four phases' times.
type Times = [Duration; 4];

/// The timed phases, in order (rows `<variant>_<op>`).
pub const OPS: [&str; 4] = ["insert", "query", "update", "delete"];

pub fn run(sizes: IndexedSizes) -> Workload {
    let title = format!(
        "{} rows with two non-unique indexes and one unique, {} per write txn; {} queries by \
         sender",
        sizes.rows, sizes.batch, sizes.queries
    );
    let mut w = Workload::new("indexed", title, Unit::Ns);
    let senders: Vec<u32> = (0..sizes.queries as u64)
        .map(|q| (mix(q ^ 0x9e37) % PEOPLE) as u32)
        .collect();
    let want = expected(&sizes, &senders);
    let mut results: Vec<(&str, Times)> = Vec::new();
    type Lib = fn(&IndexedSizes, &[u32]) -> (Times, Outcome);
    let libs: [(&str, Lib); 3] = [("tabula", tabula), ("raw", raw), ("native_db", nativedb)];
    for (lib, f) in libs {
        if !OPS.iter().any(|op| variant_wanted(&format!("{lib}_{op}"))) {
            continue;
        }
        let mut runs: Vec<Times> = Vec::new();
        median_of(sizes.reps, || {
            let (times, got) = f(&sizes, &senders);
            assert_eq!(got, want, "{lib}: what the phases found");
            runs.push(times);
            times.iter().sum()
        });
        // Each phase's median over the repetitions.
        let mut times = [Duration::ZERO; 4];
        for (p, t) in times.iter_mut().enumerate() {
            let mut each: Vec<Duration> = runs.iter().map(|r| r[p]).collect();
            each.sort();
            *t = each[each.len() / 2];
        }
        results.push((lib, times));
    }
    for (p, op) in OPS.iter().enumerate() {
        let per = if *op == "query" {
            sizes.queries
        } else {
            sizes.rows as usize
        };
        let base = format!("raw_{op}");
        for (lib, times) in &results {
            let name = format!("{lib}_{op}");
            if variant_wanted(&name) {
                w.add(&name, || ns_per(times[p], per), Some(&base));
            }
        }
    }
    w
}

/// One variant's four phases at `sizes`, its outcome checked; the sum of the amounts its
/// queries found. For counting instructions (`examples/indexed_costs.rs`), not for timing.
pub fn run_variant(lib: &str, sizes: IndexedSizes) -> u64 {
    let senders: Vec<u32> = (0..sizes.queries as u64)
        .map(|q| (mix(q ^ 0x9e37) % PEOPLE) as u32)
        .collect();
    let f = match lib {
        "tabula" => tabula,
        "raw" => raw,
        "native_db" => nativedb,
        other => panic!("no variant {other}: tabula, raw or native_db"),
    };
    let (_, got) = f(&sizes, &senders);
    assert_eq!(
        got,
        expected(&sizes, &senders),
        "{lib}: what the phases found"
    );
    got.queried
}

/// The outcome the data dictates.
fn expected(sizes: &IndexedSizes, senders: &[u32]) -> Outcome {
    let n = sizes.rows;
    let mut by_from = vec![0u64; PEOPLE as usize];
    for i in 0..n {
        let (_, t) = transfer(i, 0);
        by_from[t.from as usize] += t.amount;
    }
    let queried = senders.iter().map(|s| by_from[*s as usize]).sum();
    Outcome {
        inserted: [n; 4],
        queried,
        updated: [n; 4],
        deleted: [0; 4],
    }
}

fn tabula(sizes: &IndexedSizes, senders: &[u32]) -> (Times, Outcome) {
    let dir = scratch_dir("indexed-tabula");
    let db = tabula::open::<Indexed>(dir.path(), tabula_options().sync(SyncMode::SafeNoSync))
        .expect("open");
    let counts = |db: &tabula::Db<Indexed>| {
        let tx = db.read().expect("read");
        [
            tx.len::<Transfers>().expect("len"),
            tx.len::<ByFrom>().expect("len"),
            tx.len::<ByTo>().expect("len"),
            tx.len::<ByHash>().expect("len"),
        ]
    };
    let write_all = |version: u64| {
        let ids: Vec<u64> = (0..sizes.rows).collect();
        for batch in ids.chunks(sizes.batch) {
            let mut tx = db.write().expect("write");
            for &i in batch {
                let (k, t) = transfer(i, version);
                tx.put::<Transfers>(&k, &t).expect("put");
            }
            tx.commit().expect("commit");
        }
    };
    let insert = time(|| write_all(0));
    let inserted = counts(&db);
    let mut queried = 0u64;
    let query = time(|| {
        let tx = db.read().expect("read");
        for s in senders {
            for row in tx.by_index::<ByFrom>(s) {
                queried += row.expect("row").1.amount;
            }
        }
    });
    let update = time(|| write_all(1));
    let updated = counts(&db);
    let delete = time(|| {
        let ids: Vec<u64> = (0..sizes.rows).collect();
        for batch in ids.chunks(sizes.batch) {
            let mut tx = db.write().expect("write");
            for &i in batch {
                assert!(tx.delete::<Transfers>(&mix(i)).expect("delete"));
            }
            tx.commit().expect("commit");
        }
    });
    let deleted = counts(&db);
    (
        [insert, query, update, delete],
        Outcome {
            inserted,
            queried,
            updated,
            deleted,
        },
    )
}

/// The raw store's four tables.
struct RawTables {
    rows: sys::MDBX_dbi,
    by_from: sys::MDBX_dbi,
    by_to: sys::MDBX_dbi,
    by_hash: sys::MDBX_dbi,
}

const NAMES: [&CStr; 4] = [c"transfers", c"by_from", c"by_to", c"by_hash"];

/// Removes `id`'s entry under `key` from the dupsort table `dbi`.
fn del_pair(txn: &Txn, dbi: sys::MDBX_dbi, key: &[u8], id: &[u8]) {
    let mut c = txn.cursor(dbi);
    let found = c.get_both_range(key, id) == Some(id);
    assert!(found, "the index entry is there");
    c.del_current();
    c.close();
}

/// Raw libmdbx: the row in bincode 2 under its big-endian key; the index tables by hand (read
/// the old row, decode it, delete the entries that change, put the new ones; the unique one
/// checked first).
fn raw(sizes: &IndexedSizes, senders: &[u32]) -> (Times, Outcome) {
    let dir = scratch_dir("indexed-raw");
    let flags = EnvFlags {
        safe_no_sync: true,
        ..EnvFlags::DEFAULT
    };
    let env = Env::open(dir.path(), 8, flags);
    let t = {
        let txn = env.begin(true);
        let t = RawTables {
            rows: txn.open_table(NAMES[0], 0, true),
            by_from: txn.open_table(NAMES[1], sys::MDBX_DUPSORT, true),
            by_to: txn.open_table(NAMES[2], sys::MDBX_DUPSORT, true),
            by_hash: txn.open_table(NAMES[3], 0, true),
        };
        txn.commit();
        t
    };
    let count = |env: &Env| {
        let txn = env.begin(false);
        let n = [t.rows, t.by_from, t.by_to, t.by_hash].map(|dbi| {
            let mut c = txn.cursor(dbi);
            let mut n = 0u64;
            let mut first = true;
            while c.step(first).is_some() {
                first = false;
                n += 1;
            }
            c.close();
            n
        });
        txn.abort();
        n
    };
    let mut buf = [0u8; 256];
    let mut write_all = |version: u64| {
        let ids: Vec<u64> = (0..sizes.rows).collect();
        for batch in ids.chunks(sizes.batch) {
            let mut txn = env.begin(true);
            for &i in batch {
                let (k, new) = transfer(i, version);
                let key = k.to_be_bytes();
                let old: Option<Transfer> = txn.get(t.rows, &key).map(|v| {
                    bincode::serde::decode_from_slice(v, BINCODE2)
                        .expect("decode")
                        .0
                });
                if let Some(held) = txn.get(t.by_hash, &new.hash) {
                    assert_eq!(held, key, "a unique hash");
                }
                let n =
                    bincode::serde::encode_into_slice(&new, &mut buf, BINCODE2).expect("encode");
                txn.put(t.rows, &key, &buf[..n], 0);
                if let Some(old) = &old {
                    if old.from != new.from {
                        del_pair(&txn, t.by_from, &old.from.to_be_bytes(), &key);
                    }
                    if old.to != new.to {
                        del_pair(&txn, t.by_to, &old.to.to_be_bytes(), &key);
                    }
                    if old.hash != new.hash {
                        txn.del(t.by_hash, &old.hash);
                    }
                }
                if old.as_ref().is_none_or(|o| o.from != new.from) {
                    txn.put(t.by_from, &new.from.to_be_bytes(), &key, 0);
                }
                if old.as_ref().is_none_or(|o| o.to != new.to) {
                    txn.put(t.by_to, &new.to.to_be_bytes(), &key, 0);
                }
                if old.as_ref().is_none_or(|o| o.hash != new.hash) {
                    txn.put(t.by_hash, &new.hash, &key, 0);
                }
            }
            txn.commit();
        }
    };
    let insert = time(|| write_all(0));
    let inserted = count(&env);
    let mut queried = 0u64;
    let query = time(|| {
        let txn = env.begin(false);
        let mut c = txn.cursor(t.by_from);
        for s in senders {
            let sender = s.to_be_bytes();
            let mut entry = c
                .get(sys::MDBX_SET_KEY, Some(&sender))
                .map(|(_, v)| v.to_vec());
            while let Some(id) = entry {
                let row = txn.get(t.rows, &id).expect("the row");
                let (row, _): (Transfer, usize) =
                    bincode::serde::decode_from_slice(row, BINCODE2).expect("decode");
                queried += row.amount;
                entry = c.get(sys::MDBX_NEXT_DUP, None).map(|(_, v)| v.to_vec());
            }
        }
        c.close();
        txn.abort();
    });
    let update = time(|| write_all(1));
    let updated = count(&env);
    let delete = time(|| {
        let ids: Vec<u64> = (0..sizes.rows).collect();
        for batch in ids.chunks(sizes.batch) {
            let mut txn = env.begin(true);
            for &i in batch {
                let key = mix(i).to_be_bytes();
                let old: Transfer = bincode::serde::decode_from_slice(
                    txn.get(t.rows, &key).expect("the row"),
                    BINCODE2,
                )
                .expect("decode")
                .0;
                assert!(txn.del(t.rows, &key));
                del_pair(&txn, t.by_from, &old.from.to_be_bytes(), &key);
                del_pair(&txn, t.by_to, &old.to.to_be_bytes(), &key);
                assert!(txn.del(t.by_hash, &old.hash));
            }
            txn.commit();
        }
    });
    let deleted = count(&env);
    (
        [insert, query, update, delete],
        Outcome {
            inserted,
            queried,
            updated,
            deleted,
        },
    )
}

/// native_db's model, apart: its derives want native_db's and native_model's names in scope.
mod nd {
    use native_db::{ToKey, native_db};
    use native_model::{Model, native_model};
    use serde::{Deserialize, Serialize};

    use super::transfer;
    use crate::data::BINCODE2;

    /// native_db's model: the same fields plus the key (native_db keeps the primary key inside the
    /// value), encoded with the same bincode 2 configuration as the other variants.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[native_model(id = 1, version = 1, with = NdBincode2)]
    #[native_db(
        primary_key(id_key -> u64),
        secondary_key(sender_key -> u32),
        secondary_key(recipient_key -> u32),
        secondary_key(hash_key -> Vec<u8>, unique)
    )]
    pub struct NdTransfer {
        id: u64,
        from: u32,
        to: u32,
        pub(super) amount: u64,
        hash: [u8; 32],
    }

    impl NdTransfer {
        pub(super) fn new(i: u64, version: u64) -> NdTransfer {
            let (id, t) = transfer(i, version);
            NdTransfer {
                id,
                from: t.from,
                to: t.to,
                amount: t.amount,
                hash: t.hash,
            }
        }

        fn id_key(&self) -> u64 {
            self.id
        }

        fn sender_key(&self) -> u32 {
            self.from
        }

        fn recipient_key(&self) -> u32 {
            self.to
        }

        /// native_db has no key type for byte arrays; a `Vec<u8>` of the same bytes.
        fn hash_key(&self) -> Vec<u8> {
            self.hash.to_vec()
        }
    }

    /// native_model's codec hook: bincode 2 with the benchmarks' configuration.
    pub struct NdBincode2;

    impl<T: Serialize> native_model::Encode<T> for NdBincode2 {
        type Error = bincode::error::EncodeError;
        fn encode(obj: &T) -> Result<Vec<u8>, Self::Error> {
            bincode::serde::encode_to_vec(obj, BINCODE2)
        }
    }

    impl<T: for<'a> Deserialize<'a>> native_model::Decode<T> for NdBincode2 {
        type Error = bincode::error::DecodeError;
        fn decode(data: Vec<u8>) -> Result<T, Self::Error> {
            Ok(bincode::serde::decode_from_slice(&data, BINCODE2)?.0)
        }
    }
}

use nd::{NdTransfer, NdTransferKey};

/// native_db: `upsert` (which reads the old row and moves its index entries), queries by a
/// secondary-key range of one sender, deletes by `get` then `remove` (native_db removes an
/// item, not a key). On tmpfs when there is one (see the module's text).
fn nativedb(sizes: &IndexedSizes, senders: &[u32]) -> (Times, Outcome) {
    let dir = match std::path::Path::new("/dev/shm").is_dir() {
        true => tempfile::Builder::new()
            .prefix("tabula-bench-indexed-native_db-")
            .tempdir_in("/dev/shm")
            .expect("create a temp dir in /dev/shm"),
        false => scratch_dir("indexed-native_db"),
    };
    let mut models = native_db::Models::new();
    models.define::<NdTransfer>().expect("define the model");
    let db = native_db::Builder::new()
        .create(&models, dir.path().join("bench.native_db"))
        .expect("create");
    let counts = |db: &native_db::Database| {
        let r = db.r_transaction().expect("read");
        let len = r.len();
        [
            len.primary::<NdTransfer>().expect("len"),
            len.secondary::<NdTransfer>(NdTransferKey::sender_key)
                .expect("len"),
            len.secondary::<NdTransfer>(NdTransferKey::recipient_key)
                .expect("len"),
            len.secondary::<NdTransfer>(NdTransferKey::hash_key)
                .expect("len"),
        ]
    };
    let write_all = |version: u64| {
        let ids: Vec<u64> = (0..sizes.rows).collect();
        for batch in ids.chunks(sizes.batch) {
            let rw = db.rw_transaction().expect("write");
            for &i in batch {
                rw.upsert(NdTransfer::new(i, version)).expect("upsert");
            }
            rw.commit().expect("commit");
        }
    };
    let insert = time(|| write_all(0));
    let inserted = counts(&db);
    let mut queried = 0u64;
    let query = time(|| {
        let r = db.r_transaction().expect("read");
        for s in senders {
            let scan = r
                .scan()
                .secondary::<NdTransfer>(NdTransferKey::sender_key)
                .expect("scan");
            let rows = scan.range(*s..=*s).expect("range");
            for row in rows {
                queried += row.expect("row").amount;
            }
        }
    });
    let update = time(|| write_all(1));
    let updated = counts(&db);
    let delete = time(|| {
        let ids: Vec<u64> = (0..sizes.rows).collect();
        for batch in ids.chunks(sizes.batch) {
            let rw = db.rw_transaction().expect("write");
            for &i in batch {
                let row: NdTransfer = rw.get().primary(mix(i)).expect("get").expect("the row");
                rw.remove(row).expect("remove");
            }
            rw.commit().expect("commit");
        }
    });
    let deleted = counts(&db);
    (
        [insert, query, update, delete],
        Outcome {
            inserted,
            queried,
            updated,
            deleted,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three variants run end to end on a small store and find what the data says (the timed
    /// rows are the benchmark's; this checks the work is the same).
    #[test]
    fn every_variant_does_the_same_work() {
        let sizes = IndexedSizes {
            rows: 2000,
            batch: 100,
            queries: 50,
            reps: 1,
        };
        let senders: Vec<u32> = (0..50u64).map(|q| (mix(q) % PEOPLE) as u32).collect();
        let want = expected(&sizes, &senders);
        assert_eq!(tabula(&sizes, &senders).1, want);
        assert_eq!(raw(&sizes, &senders).1, want);
        assert_eq!(nativedb(&sizes, &senders).1, want);
    }
}
