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
use crate::util::{ns_per, time};

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
    /// Tabula only: a growth step other than the benchmarks' 16 MiB.
    growth: Option<usize>,
    /// Tabula only, without flush: `UtterlyNoSync` (LMDB's `NOSYNC`) instead of `SafeNoSync`.
    utterly: bool,
    /// Tabula only: `NoMetaSync` (data flushed at every commit, the meta page later).
    nometa: bool,
}

const VALUE: [u8; 100] = [0xab; 100];
const REDB_LOG: TableDefinition<u32, &[u8]> = TableDefinition::new("log");

/// The base of the no-flush rows.
const NOSYNC_BASE: &str = "raw_cursor_put_nosync";

/// Runs every variant, then the investigation rows (sync mode, write map, batch size).
pub fn run(sizes: AppendSizes, investigate: bool) -> Workload {
    let title = format!(
        "{} appends (u32 integer keys, 100-byte values), {} per write txn, durable commits and \
         (_nosync) without a flush",
        sizes.entries, sizes.batch
    );
    let mut w = Workload::new("append", title, Unit::Ns);
    let durable = Cfg {
        durable: true,
        write_map: false,
        batch: sizes.batch,
        growth: None,
        utterly: false,
        nometa: false,
    };
    let n = sizes.entries as usize;
    // Investigation rows run once each: they explain, they are not published figures.
    let once = |f: &dyn Fn() -> Duration| ns_per(f(), n);
    let e = sizes.entries;
    // The headline rows wait on fsync, and on a shared disk a stall lasts seconds: run the
    // repetitions round-robin (rep 1 of every row, then rep 2, ...) so a stall lands on
    // several rows instead of deciding one row's median.
    let nosync = Cfg {
        durable: false,
        ..durable
    };
    // The no-flush rows with every option at its default: Tabula's `SyncMode::SafeNoSync`
    // against LMDB's `MDB_NOSYNC` (the "defaults that win").
    let headline: [(&str, &dyn Fn() -> Duration, &str); 9] = [
        ("tabula", &|| tabula(e, durable), "raw_cursor_put"),
        ("raw_put", &|| raw_put(e, durable, false), "raw_cursor_put"),
        (
            "raw_cursor_put",
            &|| raw_put(e, durable, true),
            "raw_cursor_put",
        ),
        ("heed", &|| heed(e, durable), "raw_cursor_put"),
        ("redb", &|| redb(e, durable), "raw_cursor_put"),
        ("tabula_nosync", &|| tabula(e, nosync), NOSYNC_BASE),
        (
            "raw_cursor_put_nosync",
            &|| raw_put(e, nosync, true),
            NOSYNC_BASE,
        ),
        ("heed_nosync", &|| heed(e, nosync), NOSYNC_BASE),
        ("redb_nosync", &|| redb(e, nosync), NOSYNC_BASE),
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); headline.len()];
    for _ in 0..sizes.reps.max(1) {
        for ((name, run, _), got) in headline.iter().zip(samples.iter_mut()) {
            if crate::report::variant_wanted(name) {
                got.push(run());
            }
        }
    }
    for ((name, _, base), mut got) in headline.iter().zip(samples) {
        got.sort();
        w.add(name, || ns_per(got[got.len() / 2], n), Some(base));
    }
    if investigate {
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
        let base = Some(NOSYNC_BASE);
        w.extra(
            "raw_put_nosync",
            || once(&|| raw_put(e, nosync, false)),
            base,
        );
        let nosync_grow = Cfg {
            growth: Some(256 << 20),
            ..nosync
        };
        w.extra(
            "tabula_nosync_grow256",
            || once(&|| tabula(e, nosync_grow)),
            base,
        );
        let utterly = Cfg {
            utterly: true,
            ..nosync
        };
        w.extra(
            "tabula_utterly_nosync",
            || once(&|| tabula(e, utterly)),
            base,
        );
        let nometa = Cfg {
            nometa: true,
            ..durable
        };
        w.extra(
            "tabula_nometasync",
            || once(&|| tabula(e, nometa)),
            Some("raw_cursor_put"),
        );
        let wm_nometa = Cfg {
            write_map: true,
            ..nometa
        };
        w.extra(
            "tabula_writemap_nometasync",
            || once(&|| tabula(e, wm_nometa)),
            Some("raw_cursor_put"),
        );
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
        bulk_rows(&mut w, sizes, &once);
        knob_rows(&mut w, sizes, &once);
    }
    w
}

/// The bulk-load rows: Tabula's `bulk_load` (durable at the end) and LMDB's nearest equivalent
/// (`MDB_NOSYNC` commits, then one `mdb_env_sync(force)`), compared with the durable rows.
fn bulk_rows(w: &mut Workload, sizes: AppendSizes, once: &dyn Fn(&dyn Fn() -> Duration) -> f64) {
    let e = sizes.entries;
    let base = Some("raw_cursor_put");
    let big = (sizes.entries as usize).min(tabula::DEFAULT_BULK_BATCH_ENTRIES);
    let small = sizes.batch as usize;
    w.extra("tabula_bulk", || once(&|| tabula_bulk(e, big, None)), base);
    w.extra(
        "tabula_bulk_1000",
        || once(&|| tabula_bulk(e, small, None)),
        base,
    );
    w.extra(
        "tabula_bulk_10000",
        || once(&|| tabula_bulk(e, 10 * small, None)),
        base,
    );
    w.extra("heed_bulk", || once(&|| heed_bulk(e, big as u32)), base);
    w.extra(
        "heed_bulk_1000",
        || once(&|| heed_bulk(e, small as u32)),
        base,
    );
    w.extra(
        "tabula_bulk_grow256",
        || once(&|| tabula_bulk(e, big, Some(256 << 20))),
        base,
    );
}

/// libmdbx knobs on the no-flush append (the seed's setting), raw `mdbx_cursor_put`, 1000 per
/// txn unless the row says otherwise.
fn knob_rows(w: &mut Workload, sizes: AppendSizes, once: &dyn Fn(&dyn Fn() -> Duration) -> f64) {
    use mdbx_sys as sys;
    let e = sizes.entries;
    let b = sizes.batch;
    let base = Some("raw_cursor_put_nosync");
    let t = raw::Tune::default;
    let rows: Vec<(&str, raw::Tune, bool)> = vec![
        ("knob_default", t(), false),
        (
            "knob_utterly_nosync",
            raw::Tune {
                utterly: true,
                ..t()
            },
            false,
        ),
        (
            "knob_sync_bytes_max",
            raw::Tune {
                options: vec![(sys::MDBX_opt_sync_bytes, u64::from(u32::MAX))],
                ..t()
            },
            false,
        ),
        (
            "knob_grow_256m",
            raw::Tune {
                growth_step: 256 << 20,
                ..t()
            },
            false,
        ),
        (
            "knob_initial_512m",
            raw::Tune {
                initial_size: 512 << 20,
                ..t()
            },
            false,
        ),
        (
            "knob_page_16k",
            raw::Tune {
                page_size: 16 << 10,
                ..t()
            },
            false,
        ),
        (
            "knob_page_64k",
            raw::Tune {
                page_size: 64 << 10,
                ..t()
            },
            false,
        ),
        (
            "knob_liforeclaim",
            raw::Tune {
                extra_flags: sys::MDBX_LIFORECLAIM,
                ..t()
            },
            false,
        ),
        (
            "knob_nomeminit",
            raw::Tune {
                extra_flags: sys::MDBX_NOMEMINIT,
                ..t()
            },
            false,
        ),
        (
            "knob_writemap",
            raw::Tune {
                extra_flags: sys::MDBX_WRITEMAP,
                ..t()
            },
            false,
        ),
        (
            "knob_dp_initial_4096",
            raw::Tune {
                options: vec![(sys::MDBX_opt_txn_dp_initial, 4096)],
                ..t()
            },
            false,
        ),
        (
            "knob_prefault_write",
            raw::Tune {
                options: vec![(sys::MDBX_opt_prefault_write_enable, 1)],
                ..t()
            },
            false,
        ),
        (
            "knob_spill_off",
            raw::Tune {
                options: vec![
                    (sys::MDBX_opt_spill_max_denominator, 0),
                    (sys::MDBX_opt_spill_min_denominator, 0),
                ],
                ..t()
            },
            false,
        ),
        ("knob_checkpoint", t(), true),
        (
            "knob_utterly_checkpoint",
            raw::Tune {
                utterly: true,
                ..t()
            },
            true,
        ),
        (
            "knob_sync_bytes_max_grow_256m",
            raw::Tune {
                options: vec![(sys::MDBX_opt_sync_bytes, u64::from(u32::MAX))],
                growth_step: 256 << 20,
                ..t()
            },
            false,
        ),
    ];
    for (name, tune, checkpoint) in rows {
        w.extra(name, || once(&|| raw_tuned(e, b, &tune, checkpoint)), base);
    }
    // Durable env, weak checkpoints, one durable commit at the end: what `bulk_load` does.
    let bulk_rows: Vec<(&str, raw::Tune)> = vec![
        ("knob_bulk", t()),
        (
            "knob_bulk_sync_bytes_max",
            raw::Tune {
                options: vec![(sys::MDBX_opt_sync_bytes, u64::from(u32::MAX))],
                ..t()
            },
        ),
        (
            "knob_bulk_initial_512m",
            raw::Tune {
                initial_size: 512 << 20,
                ..t()
            },
        ),
    ];
    let bulk_batch = (e as usize).min(tabula::DEFAULT_BULK_BATCH_ENTRIES) as u32;
    for (name, tune) in bulk_rows {
        w.extra(
            name,
            || once(&|| raw_bulk(e, bulk_batch, &tune)),
            Some("raw_cursor_put"),
        );
    }
    let big = raw::Tune::default();
    w.extra(
        "knob_batch_x100",
        || once(&|| raw_tuned(e, b * 100, &big, false)),
        base,
    );
}

/// Raw `mdbx_cursor_put(APPEND)` without flush (`SAFE_NOSYNC`, or `UTTERLY_NOSYNC` when
/// tuned so), `batch` per txn; `checkpoint` continues one txn object with
/// `mdbx_txn_checkpoint` instead of commit + begin.
fn raw_tuned(entries: u32, batch: u32, tune: &raw::Tune, checkpoint: bool) -> Duration {
    let dir = scratch_dir("append-knob");
    let flags = EnvFlags {
        safe_no_sync: true,
        ..EnvFlags::DEFAULT
    };
    let env = raw::Env::open_tuned(dir.path(), 1, flags, tune);
    let txn = env.begin(true);
    let dbi = txn.open_table(c"log", raw::INTEGER_KEY, true);
    txn.commit();
    time(|| {
        let mut next = 0u32;
        let mut txn = env.begin(true);
        while next < entries {
            let end = entries.min(next + batch);
            let mut c = txn.cursor(dbi);
            for k in next..end {
                c.put(&k.to_ne_bytes(), &VALUE, raw::APPEND);
            }
            c.close();
            next = end;
            if checkpoint && next < entries {
                txn.checkpoint_nosync();
            } else {
                txn.commit();
                if next < entries {
                    txn = env.begin(true);
                } else {
                    break;
                }
            }
        }
    })
}

/// Raw libmdbx bulk load: a durable env, `mdbx_txn_checkpoint(MDBX_TXN_NOSYNC)` after every
/// `batch` entries, a durable commit at the end.
fn raw_bulk(entries: u32, batch: u32, tune: &raw::Tune) -> Duration {
    let dir = scratch_dir("append-knob-bulk");
    let env = raw::Env::open_tuned(dir.path(), 1, EnvFlags::DEFAULT, tune);
    let txn = env.begin(true);
    let dbi = txn.open_table(c"log", raw::INTEGER_KEY, true);
    txn.commit();
    time(|| {
        let mut next = 0u32;
        let mut txn = env.begin(true);
        loop {
            let end = entries.min(next + batch);
            let mut c = txn.cursor(dbi);
            for k in next..end {
                c.put(&k.to_ne_bytes(), &VALUE, raw::APPEND);
            }
            c.close();
            next = end;
            if next < entries {
                txn.checkpoint_nosync();
            } else {
                txn.commit();
                break;
            }
        }
    })
}

/// `Db::bulk_load` of the same entries, durable at the end, `batch` entries per commit;
/// `growth` overrides the growth step.
fn tabula_bulk(entries: u32, batch: usize, growth: Option<usize>) -> Duration {
    let dir = scratch_dir("append-bulk");
    let mut opts = tabula_options();
    if let Some(g) = growth {
        opts = opts.growth_step(g);
    }
    let db = tabula::open::<LogSchema>(dir.path(), opts).expect("open");
    let value = VALUE.to_vec();
    time(|| {
        let report = db
            .bulk_loader::<Log>()
            .batch_entries(batch)
            .load((0..entries).map(|k| (k, &value)))
            .expect("bulk load");
        assert_eq!(report.entries, u64::from(entries));
    })
}

/// heed's nearest bulk load: `MDB_NOSYNC` commits of `batch` entries, then one
/// `mdb_env_sync(force)`. Unlike Tabula's, a system crash mid-load may corrupt the file
/// (LMDB's `NOSYNC` keeps no steady snapshot).
fn heed_bulk(entries: u32, batch: u32) -> Duration {
    let dir = scratch_dir("append-heed-bulk");
    let mut opts = EnvOpenOptions::new();
    opts.map_size(HEED_MAP_SIZE).max_dbs(1);
    // SAFETY: plain LMDB env flags on a fresh directory nothing else opens.
    let env = unsafe {
        opts.flags(HeedFlags::NO_SYNC);
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
            let end = entries.min(next + batch);
            let mut wtxn = env.write_txn().expect("heed write");
            for k in next..end {
                db.put_with_flags(&mut wtxn, PutFlags::APPEND, &k, &VALUE)
                    .expect("heed append");
            }
            wtxn.commit().expect("heed commit");
            next = end;
        }
        env.force_sync().expect("heed sync");
    })
}

fn tabula(entries: u32, cfg: Cfg) -> Duration {
    let dir = scratch_dir("append-tabula");
    let sync = if cfg.nometa {
        SyncMode::NoMetaSync
    } else if cfg.durable {
        SyncMode::Durable
    } else if cfg.utterly {
        SyncMode::UtterlyNoSync
    } else {
        SyncMode::SafeNoSync
    };
    let mut opts = tabula_options().sync(sync).write_map(cfg.write_map);
    if let Some(g) = cfg.growth {
        opts = opts.growth_step(g);
    }
    let db = tabula::open::<LogSchema>(dir.path(), opts).expect("open");
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
