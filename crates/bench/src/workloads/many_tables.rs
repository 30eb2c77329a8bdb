//! Seed 004: `begin read txn, open cursor, close cursor, end` with 10 and 10,000 tables in the
//! environment, every table's handle open (as a schema of that many tables opens them all at
//! startup). The cursor is opened on the table with the highest handle number; the
//! `*_first_dbi` investigation rows open it on the lowest (as the seed's C program does).

use std::time::Duration;

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvOpenOptions};
use tabula::Db;

use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload};
use crate::tables::{Kv, KvSchema, open_with_extra_tables};
use crate::util::{median_of, ns_per, table_cname, table_name, time};

use super::{HEED_MAP_SIZE, scratch_dir, tabula_options};

/// Sizes of the many-tables workload.
#[derive(Clone, Copy, Debug)]
pub struct ManySizes {
    /// Iterations per variant.
    pub iterations: usize,
    /// Repetitions (median taken; a run over three seconds is taken alone).
    pub reps: usize,
}

/// The table counts compared.
pub const COUNTS: [usize; 2] = [10, 10_000];

/// Runs every variant at each table count.
pub fn run(sizes: ManySizes) -> Workload {
    let title = format!(
        "{} × (begin read txn, open cursor, close cursor, end), all table handles open",
        sizes.iterations
    );
    let mut w = Workload::new("many_tables", title, Unit::Ns);
    let per = |d: Duration| ns_per(d, sizes.iterations);
    for n in COUNTS {
        let base = format!("raw_{n}");
        w.add(
            &format!("tabula_{n}"),
            || per(tabula(n, true, sizes)),
            Some(&base),
        );
    }
    for n in COUNTS {
        let base = format!("raw_{n}");
        w.add(&base, || per(raw_cursor(n, true, sizes)), Some(&base));
    }
    for n in COUNTS {
        w.add(
            &format!("heed_{n}"),
            || per(heed(n, sizes)),
            Some(&format!("raw_{n}")),
        );
    }
    for n in COUNTS {
        w.extra(
            &format!("tabula_reset_{n}"),
            || per(tabula_reset(n, sizes)),
            Some(&format!("raw_{n}")),
        );
    }
    for n in COUNTS {
        w.extra(
            &format!("tabula_open_{n}"),
            || per(tabula_unopened(n, sizes)),
            Some(&format!("raw_{n}")),
        );
    }
    let n = COUNTS[1];
    let base = format!("raw_{n}_first_dbi");
    w.extra(&base, || per(raw_cursor(n, false, sizes)), Some(&base));
    w.extra(
        &format!("tabula_{n}_first_dbi"),
        || per(tabula(n, false, sizes)),
        Some(&base),
    );
    w
}

fn loop_tabula(db: &Db<KvSchema>, sizes: ManySizes) -> Duration {
    median_of(sizes.reps, || {
        time(|| {
            for _ in 0..sizes.iterations {
                let tx = db.read().expect("read");
                let cursor = tx.cursor::<Kv>().expect("cursor");
                drop(cursor);
                drop(tx);
            }
        })
    })
}

/// Tabula with `n` tables whose handles are all open in its env (`n - 1` extra + the schema's,
/// opened last or first).
fn tabula(n: usize, last: bool, sizes: ManySizes) -> Duration {
    let dir = scratch_dir("many-tabula");
    let db = open_with_extra_tables::<KvSchema>(dir.path(), n - 1, last, tabula_options());
    loop_tabula(&db, sizes)
}

/// `tabula_N` with `Options::reuse_read_snapshots(false)`: finished read txns are reset and
/// renewed (Tabula's pool before parking), so each renew looks the table up again and each
/// reset sweeps the cursor slots up to the table's handle number.
fn tabula_reset(n: usize, sizes: ManySizes) -> Duration {
    let dir = scratch_dir("many-tabula-reset");
    let db = open_with_extra_tables::<KvSchema>(
        dir.path(),
        n - 1,
        true,
        tabula_options().reuse_read_snapshots(false),
    );
    loop_tabula(&db, sizes)
}

/// The shortcut: `n - 1` tables created by raw libmdbx in the file first, then `tabula::open`
/// with the one-table schema. The extra tables exist in the file but their handles are not
/// open in Tabula's env.
fn tabula_unopened(n: usize, sizes: ManySizes) -> Duration {
    let dir = scratch_dir("many-tabula-open");
    {
        let env = raw::Env::open(dir.path(), n as u64 + 1, EnvFlags::DEFAULT);
        let txn = env.begin(true);
        for i in 0..n - 1 {
            txn.open_table(&table_cname(i), raw::NO_FLAGS, true);
        }
        txn.commit();
    }
    let db = tabula::open::<KvSchema>(dir.path(), tabula_options().extra_tables(n as u32))
        .expect("open");
    loop_tabula(&db, sizes)
}

/// The seed's C loop on libmdbx: fresh `mdbx_txn_begin` / `mdbx_txn_abort` (default, sticky
/// threads), all `n` handles open; the cursor on the last (or first) table opened.
fn raw_cursor(n: usize, last: bool, sizes: ManySizes) -> Duration {
    let dir = scratch_dir("many-raw");
    let env = raw::Env::open(dir.path(), n as u64, EnvFlags::DEFAULT);
    let txn = env.begin(true);
    let dbis: Vec<raw::Dbi> = (0..n)
        .map(|i| txn.open_table(&table_cname(i), raw::NO_FLAGS, true))
        .collect();
    let dbi = if last { dbis[n - 1] } else { dbis[0] };
    txn.commit();
    median_of(sizes.reps, || {
        time(|| {
            for _ in 0..sizes.iterations {
                let txn = env.begin(false);
                txn.cursor(dbi).close();
                txn.abort();
            }
        })
    })
}

/// heed (LMDB): `n` databases created and open; read txn + `iter` (a cursor open, no
/// positioning) + drops.
fn heed(n: usize, sizes: ManySizes) -> Duration {
    let dir = scratch_dir("many-heed");
    // SAFETY: a fresh directory that nothing else opens while this env lives.
    let env = unsafe {
        EnvOpenOptions::new()
            .map_size(HEED_MAP_SIZE)
            .max_dbs(n as u32)
            .open(dir.path())
    }
    .expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            for i in 0..n - 1 {
                opener.create_database::<Bytes, Bytes>(wtxn, Some(&table_name(i)))?;
            }
            let last = opener.create_database::<Bytes, Bytes>(wtxn, Some(&table_name(n - 1)))?;
            Ok(CommitOrAbort::<_, ()>::Commit(last))
        })
        .expect("heed create")
        .unwrap_commit();
    median_of(sizes.reps, || {
        time(|| {
            for _ in 0..sizes.iterations {
                let rtxn = env.read_txn().expect("heed read");
                let iter = db.iter(&rtxn).expect("heed cursor");
                drop(iter);
                drop(rtxn);
            }
        })
    })
}
