//! Each library's store of typed [`Row`]s under `u64` keys `0..entries` (version 0), shared by
//! scan, upsert and mixed. Keys are big-endian bytes in every libmdbx/LMDB store (Tabula's
//! encoding) and redb's native `u64`.

use std::path::Path;

use heed::types::{Bytes, SerdeBincode};
use heed::{CommitOrAbort, EnvFlags as HeedFlags, EnvOpenOptions, PutFlags};
use redb::TableDefinition;
use tabula::Db;

use crate::data::{RedbRow, Row, row, row_bytes};
use crate::raw::{self, EnvFlags};
use crate::tables::{Rows, RowsSchema};

use super::{HEED_MAP_SIZE, redb_file};

/// redb's typed table of rows.
pub const REDB_ROWS: TableDefinition<u64, RedbRow> = TableDefinition::new("rows");

/// heed's typed table of rows (heed's own serde codec).
pub type HeedRows = heed::Database<'static, Bytes, SerdeBincode<Row>>;

/// Tabula: `Db<RowsSchema>` with `options`, loaded with the appender.
pub fn tabula(dir: &Path, entries: u64, options: tabula::Options) -> Db<RowsSchema> {
    let db = tabula::open::<RowsSchema>(dir, options).expect("open");
    let mut tx = db.write().expect("write");
    {
        let mut ap = tx.appender::<Rows>().expect("appender");
        for k in 0..entries {
            ap.append(&k, &row(k, 0)).expect("append");
        }
    }
    tx.commit().expect("commit");
    db
}

/// Raw libmdbx: the rows as Tabula stores them (bincode 2), in table `rows` (libmdbx's own
/// comparator, as Tabula's tables).
pub fn raw(dir: &Path, entries: u64, flags: EnvFlags) -> (raw::Env, raw::Dbi) {
    let env = raw::Env::open(dir, 1, flags);
    let mut txn = env.begin(true);
    let dbi = txn.open_table(c"rows", raw::NO_FLAGS, true);
    for k in 0..entries {
        txn.put(dbi, &k.to_be_bytes(), &row_bytes(&row(k, 0)), raw::APPEND);
    }
    txn.commit();
    (env, dbi)
}

/// heed (LMDB) with `flags`: the rows through `SerdeBincode<Row>`.
pub fn heed(dir: &Path, entries: u64, flags: HeedFlags) -> (heed::Env, HeedRows) {
    let mut opts = EnvOpenOptions::new();
    opts.map_size(HEED_MAP_SIZE).max_dbs(1);
    // SAFETY: plain LMDB env flags (sync, write map) on a fresh directory nothing else opens.
    let env = unsafe {
        opts.flags(flags);
        opts.open(dir)
    }
    .expect("heed open");
    let wtxn = env.write_txn().expect("heed write");
    let db = env
        .create_databases_and_commit(wtxn, |opener, wtxn| -> heed::Result<_> {
            let db = opener.create_database::<Bytes, SerdeBincode<Row>>(wtxn, Some("rows"))?;
            for k in 0..entries {
                db.put_with_flags(wtxn, PutFlags::APPEND, &k.to_be_bytes(), &row(k, 0))?;
            }
            Ok(CommitOrAbort::<_, ()>::Commit(db))
        })
        .expect("heed create")
        .unwrap_commit();
    (env, db)
}

/// redb: the rows in [`REDB_ROWS`] (bincode 2 through [`RedbRow`]).
pub fn redb(dir: &Path, entries: u64) -> redb::Database {
    let db = redb::Database::create(redb_file(dir)).expect("redb create");
    let wtx = db.begin_write().expect("redb write");
    {
        let mut t = wtx.open_table(REDB_ROWS).expect("redb table");
        for k in 0..entries {
            t.insert(k, row(k, 0)).expect("redb insert");
        }
    }
    wtx.commit().expect("redb commit");
    db
}
