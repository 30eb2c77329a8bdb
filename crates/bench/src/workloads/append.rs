//! Seed 001: sequential appends of `u32` keys (integer keys everywhere) with 100-byte values,
//! a fixed number per write transaction.

use std::time::Duration;

use heed::types::{Bytes, U32};
use heed::{CommitOrAbort, EnvFlags as HeedFlags, EnvOpenOptions, IntegerComparator, PutFlags};
use redb::{Durability, TableDefinition};
use tabula::SyncMode;

use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload};
use crate::tables::{Log, LogSchema};
use crate::util::{median_of, ns_per, time};

use super::{HEED_MAP_SIZE, redb_file, scratch_dir, tabula_options};

/// Sizes of the append workload.
#[derive(Clone, Copy, Debug)]
pub struct AppendSizes {
    /// Entries appended.
    pub entries: u32,
    /// Entries per write transaction.
    pub batch: u32,
    /// Repetitions (median taken), each on a fresh environment.
    pub reps: usize,
}

/// How one run is configured: the same knobs for every library where it has them.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    /// Flush every commit (libmdbx `SYNC_DURABLE`, LMDB default, redb `Immediate`); otherwise
    /// libmdbx `SAFE_NOSYNC`, LMDB `NO_SYNC`, redb `Durability::None`.
    durable: bool,
    /// libmdbx `WRITEMAP` / LMDB `WRITE_MAP`.
    write_map: bool,
    /// Entries per write transaction.
    batch: u32,
}

const VALUE: [u8; 100] = [0xab; 100];
const REDB_LOG: TableDefinition<u32, &[u8]> = TableDefinition::new("log");

/// Runs every variant, then the investigation rows (sync mode, write map, batch size).
pub fn run(sizes: AppendSizes, investigate: bool) -> Workload {
    let title = format!(
        "{} appends (u32 integer keys, 100-byte values), {} per write txn, durable commits",
        sizes.entries, sizes.batch
    );
    let mut w = Workload::new("append", title, Unit::Ns);
    let durable = Cfg {
        durable: true,
        write_map: false,
        batch: sizes.batch,
    };
    let n = sizes.entries as usize;
    let per = |f: &dyn Fn() -> Duration| ns_per(median_of(sizes.reps, f), n);
    // Investigation rows run once each: they explain, they are not published figures.
    let once = |f: &dyn Fn() -> Duration| ns_per(f(), n);
    let e = sizes.entries;
    w.add(
        "tabula",
        || per(&|| tabula(e, durable)),
        Some("raw_cursor_put"),
    );
    w.add(
        "raw_put",
        || per(&|| raw_put(e, durable, false)),
        Some("raw_cursor_put"),
    );
    w.add(
        "raw_cursor_put",
        || per(&|| raw_put(e, durable, true)),
        Some("raw_cursor_put"),
    );
    w.add("heed", || per(&|| heed(e, durable)), Some("raw_cursor_put"));
    w.add("redb", || per(&|| redb(e, durable)), Some("raw_cursor_put"));
    if investigate {
        let nosync = Cfg {
            durable: false,
            ..durable
        };
        let wm = Cfg {
            write_map: true,
            ..durable
        };
        let wm_nosync = Cfg {
            write_map: true,
            ..nosync
        };
        let big = Cfg {
            batch: sizes.batch * 10,
            ..durable
        };
        let base = Some("raw_cursor_put_nosync");
        w.extra("tabula_nosync", || once(&|| tabula(e, nosync)), base);
        w.extra(
            "raw_put_nosync",
            || once(&|| raw_put(e, nosync, false)),
            base,
        );
        w.extra(
            "raw_cursor_put_nosync",
            || once(&|| raw_put(e, nosync, true)),
            base,
        );
        w.extra("heed_nosync", || once(&|| heed(e, nosync)), base);
        w.extra("redb_nosync", || once(&|| redb(e, nosync)), base);
        w.extra(
            "tabula_writemap",
            || once(&|| tabula(e, wm)),
            Some("raw_cursor_put"),
        );
        w.extra(
            "heed_writemap",
            || once(&|| heed(e, wm)),
            Some("raw_cursor_put"),
        );
        w.extra(
            "tabula_writemap_nosync",
            || once(&|| tabula(e, wm_nosync)),
            base,
        );
        w.extra(
            "raw_cursor_put_writemap_nosync",
            || once(&|| raw_put(e, wm_nosync, true)),
            base,
        );
        w.extra(
            "heed_writemap_nosync",
            || once(&|| heed(e, wm_nosync)),
            base,
        );
        w.extra(
            "tabula_batch_x10",
            || once(&|| tabula(e, big)),
            Some("raw_cursor_put"),
        );
        w.extra(
            "heed_batch_x10",
            || once(&|| heed(e, big)),
            Some("raw_cursor_put"),
        );
    }
    w
}

fn tabula(entries: u32, cfg: Cfg) -> Duration {
    let dir = scratch_dir("append-tabula");
    let sync = if cfg.durable {
        SyncMode::Durable
    } else {
        SyncMode::SafeNoSync
    };
    let db = tabula::open::<LogSchema>(
        dir.path(),
        tabula_options().sync(sync).write_map(cfg.write_map),
    )
    .expect("open");
    let value = VALUE.to_vec();
    time(|| {
        let mut next = 0u32;
        while next < entries {
            let end = entries.min(next + cfg.batch);
            let mut tx = db.write().expect("write");
            {
                let mut ap = tx.appender::<Log>().expect("appender");
                for k in next..end {
                    ap.append(&k, &value).expect("append");
                }
            }
            tx.commit().expect("commit");
            next = end;
        }
    })
}

fn raw_put(entries: u32, cfg: Cfg, cursor: bool) -> Duration {
    let dir = scratch_dir("append-raw");
    let flags = EnvFlags {
        no_sticky_threads: false,
        safe_no_sync: !cfg.durable,
        write_map: cfg.write_map,
        ..EnvFlags::DEFAULT
    };
    let env = raw::Env::open(dir.path(), 1, flags);
    let txn = env.begin(true);
    let dbi = txn.open_table(c"log", raw::INTEGER_KEY, true);
    txn.commit();
    time(|| {
        let mut next = 0u32;
        while next < entries {
            let end = entries.min(next + cfg.batch);
            let mut txn = env.begin(true);
            if cursor {
                // Seed 001's cursor variant: one cursor per batch.
                let mut c = txn.cursor(dbi);
                for k in next..end {
                    c.put(&k.to_ne_bytes(), &VALUE, raw::APPEND);
                }
                c.close();
            } else {
                for k in next..end {
                    txn.put(dbi, &k.to_ne_bytes(), &VALUE, raw::APPEND);
                }
            }
            txn.commit();
            next = end;
        }
    })
}

fn heed(entries: u32, cfg: Cfg) -> Duration {
    let dir = scratch_dir("append-heed");
    let mut opts = EnvOpenOptions::new();
    opts.map_size(HEED_MAP_SIZE).max_dbs(1);
    let mut flags = HeedFlags::empty();
    if !cfg.durable {
        flags |= HeedFlags::NO_SYNC;
    }
    if cfg.write_map {
        flags |= HeedFlags::WRITE_MAP;
    }
    // SAFETY: the flags are plain LMDB env flags; a fresh directory nothing else opens.
    let env = unsafe {
        opts.flags(flags);
        opts.open(dir.path())
    }
    .expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| {
            opener
                .database_options()
                .types::<U32<heed::byteorder::NativeEndian>, Bytes>()
                .key_comparator::<IntegerComparator>()
                .name("log")
                .create(wtxn)
                .map(CommitOrAbort::<_, ()>::Commit)
        })
        .expect("heed create")
        .unwrap_commit();
    time(|| {
        let mut next = 0u32;
        while next < entries {
            let end = entries.min(next + cfg.batch);
            let mut wtxn = env.write_txn().expect("heed write");
            for k in next..end {
                db.put_with_flags(&mut wtxn, PutFlags::APPEND, &k, &VALUE)
                    .expect("heed append");
            }
            wtxn.commit().expect("heed commit");
            next = end;
        }
    })
}

fn redb(entries: u32, cfg: Cfg) -> Duration {
    let dir = scratch_dir("append-redb");
    let db = redb::Database::create(redb_file(dir.path())).expect("redb create");
    time(|| {
        let mut next = 0u32;
        while next < entries {
            let end = entries.min(next + cfg.batch);
            let mut wtx = db.begin_write().expect("redb write");
            if !cfg.durable {
                wtx.set_durability(Durability::None).expect("durability");
            }
            {
                let mut t = wtx.open_table(REDB_LOG).expect("redb table");
                for k in next..end {
                    t.insert(k, &VALUE[..]).expect("redb insert");
                }
            }
            wtx.commit().expect("redb commit");
            next = end;
        }
    })
}
