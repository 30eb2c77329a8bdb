//! small_commits (issue 26): many write transactions of one entry each, on the peer benchmark's
//! data (24-byte random keys, 150-byte values, [`crate::pairs`]) added to a loaded table, at
//! every sync mode, each library at the mode with the same guarantee:
//!
//! | row suffix | Tabula | raw libmdbx | heed (LMDB) | redb |
//! |---|---|---|---|---|
//! | `durable` | `SyncMode::Durable` | `MDBX_SYNC_DURABLE` | default | `Durability::Immediate` |
//! | `nometasync` | `SyncMode::NoMetaSync` | `MDBX_NOMETASYNC` | `MDB_NOMETASYNC` | — |
//! | `safe_nosync` | `SyncMode::SafeNoSync` | `MDBX_SAFE_NOSYNC` | — | `Durability::None` |
//! | `utterly_nosync` | `SyncMode::UtterlyNoSync` | `MDBX_UTTERLY_NOSYNC` | `MDB_NOSYNC` | — |
//!
//! Why these pairs: `MDB_NOMETASYNC` flushes the data at commit and not the meta page, so a
//! system crash may undo the last commit, as `NoMetaSync`; `MDB_NOSYNC` flushes nothing and a
//! system crash may corrupt the file (LMDB's documentation: "a system crash can corrupt the
//! database"), as `UtterlyNoSync`; redb's `Durability::None` flushes nothing, and a crash rolls
//! the file back to the last durable commit, consistent, as `SafeNoSync` (which in addition
//! flushes once `Options::flush_threshold` bytes are unflushed, so that freed pages become
//! reusable; redb's file grows instead until a durable commit).
//!
//! Per mode, every library's store is loaded first (the same sorted entries, untimed), then the
//! commits are timed in interleaved rounds ([`crate::util::interleaved`]): each round makes a
//! fixed number of one-entry commits per library, every library drawing the same new random
//! keys. Figures are µs per commit, the median round. Afterwards every store is walked and its
//! entry count and checksum compared with the entries loaded and committed.

use std::path::Path;
use std::time::Duration;

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvFlags as HeedFlags, EnvOpenOptions, PutFlags};
use redb::{Durability, ReadableDatabase, ReadableTable, TableDefinition};
use tabula::SyncMode;

use crate::pairs::{self, Key, Model, State, VALUE_LEN, check_state, next_key, value_of};
use crate::raw::{self, EnvFlags, Tune};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Pairs24, Pairs24Schema};
use crate::util::{Pass, XorShift, interleaved, ns_per, time};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Sizes of the small_commits workload.
#[derive(Clone, Copy, Debug)]
pub struct SmallCommitsSizes {
    /// Entries loaded before the commits.
    pub loaded: usize,
    /// One-entry commits per library in the modes that flush at every commit (durable,
    /// nometasync), over all timed rounds.
    pub flushed_commits: usize,
    /// The same in the modes that do not (safe_nosync, utterly_nosync).
    pub unflushed_commits: usize,
    /// Timed rounds (an untimed one comes first).
    pub rounds: usize,
}

/// A sync mode and what each library runs at it (`None`: it has no such mode).
struct Mode {
    name: &'static str,
    tabula: SyncMode,
    raw: Tune,
    heed: Option<HeedFlags>,
    redb: Option<Durability>,
    flushes: bool,
}

fn modes() -> Vec<Mode> {
    use mdbx_sys as sys;
    // Raw libmdbx as Tabula configures it (balanced pages), with the mode's flags and options.
    let raw =
        |flags: sys::MDBX_env_flags_t, utterly: bool, options: &[(sys::MDBX_option_t, u64)]| {
            let mut t = super::big_txn::raw_like_tabula();
            t.extra_flags = flags;
            t.utterly = utterly;
            t.options.extend_from_slice(options);
            t
        };
    vec![
        Mode {
            name: "durable",
            tabula: SyncMode::Durable,
            raw: raw(0, false, &[]),
            heed: Some(HeedFlags::empty()),
            redb: Some(Durability::Immediate),
            flushes: true,
        },
        Mode {
            name: "nometasync",
            tabula: SyncMode::NoMetaSync,
            raw: raw(sys::MDBX_NOMETASYNC, false, &[]),
            heed: Some(HeedFlags::NO_META_SYNC),
            redb: None,
            flushes: true,
        },
        Mode {
            name: "safe_nosync",
            tabula: SyncMode::SafeNoSync,
            // Tabula's default flush threshold, so the raw row measures the same engine work.
            raw: raw(
                sys::MDBX_SAFE_NOSYNC,
                false,
                &[(sys::MDBX_opt_sync_bytes, tabula::DEFAULT_FLUSH_THRESHOLD)],
            ),
            heed: None,
            redb: Some(Durability::None),
            flushes: false,
        },
        Mode {
            name: "utterly_nosync",
            tabula: SyncMode::UtterlyNoSync,
            raw: raw(sys::MDBX_SAFE_NOSYNC, true, &[]),
            heed: Some(HeedFlags::NO_SYNC),
            redb: None,
            flushes: false,
        },
    ]
}

/// One library's store: a commit of one entry, and the state walk.
trait Store {
    /// Begins a write transaction, puts `key` (value [`value_of`]) and commits.
    fn commit_one(&mut self, key: &Key);
    /// Entry count and checksum of the whole table.
    fn state(&mut self) -> State;
}

/// Runs every mode.
pub fn run(sizes: SmallCommitsSizes, investigate: bool) -> Workload {
    let title = format!(
        "one-entry write txns (24-byte random keys, 150-byte values) into {} entries: {} per \
         library at the flushing modes, {} at the others, in {} interleaved rounds; each \
         library at the mode with the same guarantee",
        sizes.loaded, sizes.flushed_commits, sizes.unflushed_commits, sizes.rounds
    );
    let mut w = Workload::new("small_commits", title, Unit::Us);
    let loaded = {
        let mut k = pairs::keys(0x5_3A11, sizes.loaded);
        k.sort_unstable();
        k.dedup();
        k
    };
    let model = Model::inserted(&loaded);
    for mode in modes() {
        let rows: Vec<String> = ["tabula", "raw", "heed", "redb"]
            .iter()
            .map(|lib| format!("{lib}_{}", mode.name))
            .collect();
        let knob_rows = [
            format!("raw_{}.nomeminit", mode.name),
            format!("raw_{}.nordahead", mode.name),
            format!("raw_{}.writemap", mode.name),
            format!("tabula_{}.writemap", mode.name),
            format!("tabula_{}.writemap_1t", mode.name),
            "tabula_safe_nosync.flush8g".to_owned(),
        ];
        let wanted = rows.iter().any(|r| variant_wanted(r))
            || (investigate && knob_rows.iter().any(|r| variant_wanted(r)));
        if !wanted {
            continue;
        }
        let total = if mode.flushes {
            sizes.flushed_commits
        } else {
            sizes.unflushed_commits
        };
        let per_round = (total / sizes.rounds.max(1)).max(1);
        let dirs: Vec<tempfile::TempDir> = (0..4)
            .map(|i| scratch_dir(&format!("small-{}-{i}", mode.name)))
            .collect();
        let mut stores: Vec<(String, Box<dyn Store>)> = Vec::new();
        let mut extra_dirs: Vec<tempfile::TempDir> = Vec::new();
        if variant_wanted(&rows[0]) {
            let options = tabula_options().sync(mode.tabula);
            stores.push((
                rows[0].clone(),
                Box::new(TabulaStore::load(dirs[0].path(), options, &loaded)),
            ));
        }
        if variant_wanted(&rows[1]) {
            stores.push((
                rows[1].clone(),
                Box::new(RawStore::load(dirs[1].path(), &mode.raw, &loaded)),
            ));
        }
        if let (Some(flags), true) = (mode.heed, variant_wanted(&rows[2])) {
            stores.push((
                rows[2].clone(),
                Box::new(HeedStore::load(dirs[2].path(), flags, &loaded)),
            ));
        }
        if let (Some(durability), true) = (mode.redb, variant_wanted(&rows[3])) {
            stores.push((
                rows[3].clone(),
                Box::new(RedbStore::load(dirs[3].path(), durability, &loaded)),
            ));
        }
        if investigate {
            // The same engine without zeroing fresh page buffers (`MDBX_NOMEMINIT`): libmdbx
            // 0.14.4 zeroes every page buffer it hands out, reused ones included.
            let name = format!("raw_{}.nomeminit", mode.name);
            if variant_wanted(&name) {
                let mut tune = mode.raw.clone();
                tune.extra_flags |= mdbx_sys::MDBX_NOMEMINIT;
                let dir = scratch_dir(&format!("small-{}-nomeminit", mode.name));
                stores.push((name, Box::new(RawStore::load(dir.path(), &tune, &loaded))));
                extra_dirs.push(dir);
            }
            // Writes through a writable map (`MDBX_WRITEMAP`) instead of `pwrite`.
            let name = format!("raw_{}.writemap", mode.name);
            if variant_wanted(&name) {
                let mut tune = mode.raw.clone();
                tune.extra_flags |= mdbx_sys::MDBX_WRITEMAP;
                let dir = scratch_dir(&format!("small-{}-writemap", mode.name));
                stores.push((name, Box::new(RawStore::load(dir.path(), &tune, &loaded))));
                extra_dirs.push(dir);
            }
            // Without readahead (`MDBX_NORDAHEAD`: libmdbx advises the kernel not to read the
            // file ahead).
            let name = format!("raw_{}.nordahead", mode.name);
            if variant_wanted(&name) {
                let mut tune = mode.raw.clone();
                tune.extra_flags |= mdbx_sys::MDBX_NORDAHEAD;
                let dir = scratch_dir(&format!("small-{}-nordahead", mode.name));
                stores.push((name, Box::new(RawStore::load(dir.path(), &tune, &loaded))));
                extra_dirs.push(dir);
            }
            // Tabula with `Options::write_map(true)`, with the benchmarks' 8 GiB bound and with
            // the default 1 TiB one (libmdbx flushes a write map with `msync`).
            for (suffix, max_size) in [("writemap", super::MAX_SIZE), ("writemap_1t", 1 << 40)] {
                let name = format!("tabula_{}.{suffix}", mode.name);
                if variant_wanted(&name) {
                    let options = tabula::Options::new()
                        .max_size(max_size)
                        .sync(mode.tabula)
                        .write_map(true);
                    let dir = scratch_dir(&format!("small-{}-{suffix}", mode.name));
                    stores.push((
                        name,
                        Box::new(TabulaStore::load(dir.path(), options, &loaded)),
                    ));
                    extra_dirs.push(dir);
                }
            }
            if mode.name == "safe_nosync" {
                // A flush threshold never reached: no flush while the rows are timed.
                let name = "tabula_safe_nosync.flush8g".to_string();
                if variant_wanted(&name) {
                    let options = tabula_options().sync(mode.tabula).flush_threshold(8 << 30);
                    let dir = scratch_dir("small-safe-flush8g");
                    stores.push((
                        name,
                        Box::new(TabulaStore::load(dir.path(), options, &loaded)),
                    ));
                    extra_dirs.push(dir);
                }
            }
        }
        let names: Vec<String> = stores.iter().map(|(n, _)| n.clone()).collect();
        let seed = 0xC0_4417 ^ mode.name.len() as u64;
        let mut passes: Vec<Pass<'_>> = stores
            .iter_mut()
            .map(|(name, store)| {
                let mut rng = XorShift::new(seed);
                let pass: Box<dyn FnMut() -> Duration + '_> = Box::new(move || {
                    let keys: Vec<Key> = (0..per_round).map(|_| next_key(&mut rng)).collect();
                    time(|| {
                        for k in &keys {
                            store.commit_one(k);
                        }
                    })
                });
                (name.clone(), pass)
            })
            .collect();
        let medians = interleaved(sizes.rounds, &mut passes);
        drop(passes);
        // Every store holds the loaded entries and every key committed (the untimed round's
        // included), drawn from the same stream.
        let mut rng = XorShift::new(seed);
        let committed: Vec<Key> = (0..per_round * (sizes.rounds.max(1) + 1))
            .map(|_| next_key(&mut rng))
            .collect();
        let mut want = model.clone();
        want.insert(&committed);
        let want = want.state();
        for (name, store) in &mut stores {
            check_state(&format!("{name}: after the commits"), store.state(), want);
        }
        drop(stores);
        let base = format!("heed_{}", mode.name);
        let base = if names.contains(&base) {
            base
        } else {
            format!("raw_{}", mode.name)
        };
        for (name, t) in names.iter().zip(medians) {
            let figure = || ns_per(t, per_round) / 1000.0;
            if name.contains('.') {
                w.extra(name, figure, Some(&base));
            } else {
                w.add(name, figure, Some(&base));
            }
        }
        drop(extra_dirs);
    }
    w
}

// ---------------------------------------------------------------------------------------------

struct TabulaStore {
    db: tabula::Db<Pairs24Schema>,
}

impl TabulaStore {
    fn load(dir: &Path, options: tabula::Options, keys: &[Key]) -> TabulaStore {
        let db = tabula::open::<Pairs24Schema>(dir, options).expect("open");
        let mut tx = db.write().expect("write");
        {
            let mut ap = tx.appender::<Pairs24>().expect("appender");
            for k in keys {
                ap.append(&k[..], &value_of(k).to_vec()).expect("append");
            }
        }
        tx.commit().expect("commit");
        TabulaStore { db }
    }
}

impl Store for TabulaStore {
    fn commit_one(&mut self, key: &Key) {
        let mut tx = self.db.write().expect("write");
        tx.put_reserve::<Pairs24, _>(&key[..], VALUE_LEN, |room| {
            room.zeroed().copy_from_slice(&value_of(key))
        })
        .expect("put_reserve");
        tx.commit().expect("commit");
    }

    fn state(&mut self) -> State {
        let tx = self.db.read().expect("read");
        let mut s = State::default();
        let mut it = tx.iter::<Pairs24>();
        while let Some(e) = it.next_raw() {
            let (k, v) = e.expect("next_raw");
            s.add(k, v);
        }
        s
    }
}

/// Raw libmdbx with the flags Tabula opens with (`MDBX_NOSTICKYTHREADS`, 16 MiB growth steps),
/// libmdbx's own key comparator (as Tabula's tables), and the mode's flags and options.
struct RawStore {
    env: raw::Env,
    dbi: raw::Dbi,
}

impl RawStore {
    fn load(dir: &Path, tune: &Tune, keys: &[Key]) -> RawStore {
        let flags = EnvFlags {
            no_sticky_threads: true,
            safe_no_sync: tune.extra_flags & mdbx_sys::MDBX_SAFE_NOSYNC != 0,
            ..EnvFlags::DEFAULT
        };
        let env = raw::Env::open_tuned(dir, 1, flags, tune);
        let mut txn = env.begin(true);
        let dbi = txn.open_table(c"pairs24", raw::NO_FLAGS, true);
        for k in keys {
            txn.put(dbi, k, &value_of(k), raw::APPEND);
        }
        txn.commit();
        RawStore { env, dbi }
    }
}

impl Store for RawStore {
    fn commit_one(&mut self, key: &Key) {
        let mut txn = self.env.begin(true);
        txn.put(self.dbi, key, &value_of(key), 0);
        txn.commit();
    }

    fn state(&mut self) -> State {
        let txn = self.env.begin(false);
        let mut c = txn.cursor(self.dbi);
        let mut s = State::default();
        let mut op = raw::FIRST;
        while let Some((k, v)) = c.get(op, None) {
            s.add(k, v);
            op = raw::NEXT;
        }
        c.close();
        txn.abort();
        s
    }
}

type HeedPairs = heed::Database<'static, Bytes, Bytes>;

struct HeedStore {
    env: heed::Env,
    db: HeedPairs,
}

impl HeedStore {
    fn load(dir: &Path, flags: HeedFlags, keys: &[Key]) -> HeedStore {
        let mut opts = EnvOpenOptions::new();
        opts.map_size(HEED_MAP_SIZE).max_dbs(1);
        // SAFETY: plain LMDB sync flags on a fresh directory nothing else opens.
        let env = unsafe {
            opts.flags(flags);
            opts.open(dir)
        }
        .expect("heed open");
        let wtxn = env.write_txn().expect("heed write");
        let db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
                let db = opener.create_database::<Bytes, Bytes>(wtxn, Some("pairs24"))?;
                for k in keys {
                    db.put_with_flags(wtxn, PutFlags::APPEND, k, &value_of(k))?;
                }
                Ok(CommitOrAbort::<_, ()>::Commit(db))
            })
            .expect("heed create")
            .unwrap_commit();
        HeedStore { env, db }
    }
}

impl Store for HeedStore {
    fn commit_one(&mut self, key: &Key) {
        let mut wtxn = self.env.write_txn().expect("heed write");
        self.db
            .put(&mut wtxn, key, &value_of(key))
            .expect("heed put");
        wtxn.commit().expect("heed commit");
    }

    fn state(&mut self) -> State {
        let rtxn = self.env.read_txn().expect("heed read");
        let mut s = State::default();
        for e in self.db.iter(&rtxn).expect("heed iter") {
            let (k, v) = e.expect("heed next");
            s.add(k, v);
        }
        s
    }
}

const REDB_PAIRS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("pairs24");

struct RedbStore {
    db: redb::Database,
    durability: Durability,
}

impl RedbStore {
    fn load(dir: &Path, durability: Durability, keys: &[Key]) -> RedbStore {
        let db = redb::Database::create(redb_file(dir)).expect("redb create");
        let wtx = db.begin_write().expect("redb write");
        {
            let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
            for k in keys {
                t.insert(&k[..], &value_of(k)[..]).expect("redb insert");
            }
        }
        wtx.commit().expect("redb commit");
        RedbStore { db, durability }
    }
}

impl Store for RedbStore {
    fn commit_one(&mut self, key: &Key) {
        let mut wtx = self.db.begin_write().expect("redb write");
        wtx.set_durability(self.durability).expect("durability");
        {
            let mut t = wtx.open_table(REDB_PAIRS).expect("redb table");
            t.insert(&key[..], &value_of(key)[..]).expect("redb insert");
        }
        wtx.commit().expect("redb commit");
    }

    fn state(&mut self) -> State {
        let rtx = self.db.begin_read().expect("redb read");
        let t = rtx.open_table(REDB_PAIRS).expect("redb table");
        let mut s = State::default();
        for e in t.iter().expect("redb iter") {
            let (k, v) = e.expect("redb next");
            s.add(k.value(), v.value());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workload at a tiny size: every library runs at every mode it has, and every store
    /// holds exactly what was loaded and committed (checked inside, panicking otherwise).
    #[test]
    fn every_mode_runs_and_checks_out() {
        let w = run(
            SmallCommitsSizes {
                loaded: 2_000,
                flushed_commits: 6,
                unflushed_commits: 30,
                rounds: 2,
            },
            true,
        );
        for row in [
            "tabula_durable",
            "raw_durable",
            "heed_durable",
            "redb_durable",
            "tabula_nometasync",
            "heed_nometasync",
            "tabula_safe_nosync",
            "redb_safe_nosync",
            "tabula_utterly_nosync",
            "heed_utterly_nosync",
        ] {
            assert!(w.get(row).is_some(), "row {row} missing");
        }
        assert!(w.get("redb_nometasync").is_none() && w.get("heed_safe_nosync").is_none());
        assert!(w.invalid().is_empty(), "{:?}", w.invalid());
    }
}
