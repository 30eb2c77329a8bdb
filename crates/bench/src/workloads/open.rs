//! open: the startup step on an existing file, for schemas of 10, 100, 1,000 and 10,000
//! tables, against heed opening as many databases.
//!
//! Each variant first creates its file with all the tables (untimed) and closes it; a timed
//! open is then everything from nothing open to every table usable: Tabula
//! `tabula::open::<Wide<N>>` (environment, startup transaction, every table found and checked
//! against the schema record, `Db` published); heed `EnvOpenOptions::open` + a read txn +
//! `open_database` for each name + commit; raw libmdbx `mdbx_env_open` + a read txn +
//! `mdbx_dbi_open` for each name + commit (for reference). Each open is closed again untimed.
//!
//! The timed part runs inside [`time`], so that callgrind's
//! `--toggle-collect='tabula_bench::util::time*'` counts the timed opens and nothing else.

use std::time::Duration;

use heed::types::Bytes;
use heed::{CommitOrAbort, EnvOpenOptions};

use crate::raw::{self, EnvFlags};
use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::Wide;
use crate::util::{table_cname, table_name, time};

use super::{HEED_MAP_SIZE, scratch_dir, tabula_options};

/// The schema sizes.
pub const COUNTS: [usize; 4] = [10, 100, 1_000, 10_000];

/// Sizes of the open workload.
#[derive(Clone, Copy, Debug)]
pub struct OpenSizes {
    /// Timed opens per variant (median taken); an open over 3 seconds is taken alone.
    pub reps: usize,
}

/// Runs every variant at every size.
pub fn run(sizes: OpenSizes) -> Workload {
    let title = "open an existing file and every table of a schema of N tables (10 … 10,000)";
    let mut w = Workload::new("open", title.to_string(), Unit::Us);
    for n in COUNTS {
        let base = format!("heed_{n}");
        let tabula_row = format!("tabula_{n}");
        if variant_wanted(&tabula_row) {
            let t = match n {
                10 => tabula::<10>(sizes),
                100 => tabula::<100>(sizes),
                1_000 => tabula::<1_000>(sizes),
                10_000 => tabula::<10_000>(sizes),
                _ => unreachable!("COUNTS"),
            };
            w.add(&tabula_row, || us(t), Some(&base));
        }
        w.add(&base, || us(heed(n, sizes)), Some(&base));
        w.add(&format!("raw_{n}"), || us(raw(n, sizes)), Some(&base));
    }
    w
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The median of up to `reps` timed runs; a first run over three seconds is taken alone.
fn median(reps: usize, mut run: impl FnMut() -> Duration) -> Duration {
    let mut runs = vec![run()];
    if runs[0] < Duration::from_secs(3) {
        while runs.len() < reps {
            runs.push(run());
        }
    }
    runs.sort();
    runs[runs.len() / 2]
}

fn tabula<const N: usize>(sizes: OpenSizes) -> Duration {
    let dir = scratch_dir("open-tabula");
    drop(tabula::open::<Wide<N>>(dir.path(), tabula_options()).expect("create"));
    median(sizes.reps, || {
        let mut db = None;
        let t = time(|| {
            db = Some(tabula::open::<Wide<N>>(dir.path(), tabula_options()).expect("open"))
        });
        let db = db.expect("opened");
        assert_eq!(db.tables().len(), N);
        drop(db);
        t
    })
}

fn heed(n: usize, sizes: OpenSizes) -> Duration {
    let dir = scratch_dir("open-heed");
    let options = || {
        let mut o = EnvOpenOptions::new();
        o.map_size(HEED_MAP_SIZE).max_dbs(n as u32);
        o
    };
    {
        // SAFETY: a fresh directory that nothing else opens while this env lives.
        let env = unsafe { options().open(dir.path()) }.expect("heed open");
        let wtxn = env.write_txn().expect("heed write");
        env.create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            for i in 0..n {
                opener.create_database::<Bytes, Bytes>(wtxn, Some(&table_name(i)))?;
            }
            Ok(CommitOrAbort::<(), ()>::Commit(()))
        })
        .expect("heed create")
        .unwrap_commit();
        env.prepare_for_closing().wait();
    }
    let names: Vec<String> = (0..n).map(table_name).collect();
    median(sizes.reps, || {
        let (mut opened, mut env) = (0, None);
        let t = time(|| {
            // SAFETY: the directory made above; the previous env of it is closed.
            let opened_env = unsafe { options().open(dir.path()) }.expect("heed open");
            let rtxn = opened_env.read_txn().expect("heed read");
            opened_env
                .open_databases_and_commit(rtxn, |opener, rtxn| -> heed::Result<_> {
                    for name in &names {
                        let db = opener.open_database::<Bytes, Bytes>(rtxn, Some(name))?;
                        opened += usize::from(db.is_some());
                    }
                    Ok(CommitOrAbort::<(), ()>::Commit(()))
                })
                .expect("heed open databases")
                .unwrap_commit();
            env = Some(opened_env);
        });
        let env = env.expect("opened");
        assert_eq!(opened, n, "every database opens");
        env.prepare_for_closing().wait();
        t
    })
}

fn raw(n: usize, sizes: OpenSizes) -> Duration {
    let dir = scratch_dir("open-raw");
    {
        let env = raw::Env::open(dir.path(), n as u64, EnvFlags::DEFAULT);
        let txn = env.begin(true);
        for i in 0..n {
            txn.open_table(&table_cname(i), raw::NO_FLAGS, true);
        }
        txn.commit();
    }
    let names: Vec<_> = (0..n).map(table_cname).collect();
    median(sizes.reps, || {
        let (mut dbis, mut env) = (Vec::new(), None);
        let t = time(|| {
            let opened_env = raw::Env::open(dir.path(), n as u64, EnvFlags::DEFAULT);
            let txn = opened_env.begin(false);
            dbis = names
                .iter()
                .map(|name| txn.open_table(name, raw::NO_FLAGS, false))
                .collect::<Vec<raw::Dbi>>();
            txn.commit();
            env = Some(opened_env);
        });
        let env = env.expect("opened");
        assert_eq!(dbis.len(), n);
        drop(env);
        t
    })
}
