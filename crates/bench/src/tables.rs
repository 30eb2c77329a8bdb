//! Tabula's side of the benchmarks: the table declarations and how environments with many
//! tables are opened.

use std::path::Path;

use tabula::{Db, Options, Schema, Table, TableFlags, TableInfo};
use tabula_core::record::SchemaRecord;
use tabula_core::startup::{self, Bootstrap, Upgrade};

use crate::util::table_name_static;

/// The get and short-read workloads: big-endian `u64` keys (Tabula's default key encoding, the
/// same bytes the raw and heed variants store) and raw 32-byte values read with `get_bytes`, so
/// no variant pays a decode the others skip.
#[derive(Table)]
#[table(name = "kv", key = u64, value = Vec<u8>, codec = tabula::Raw)]
pub struct Kv;

/// Schema of the get and short-read workloads.
#[derive(Schema)]
pub struct KvSchema(Kv);

/// The typed rows: the same `u64` keys, values [`Row`](crate::data::Row) through Tabula's
/// default codec (serde + bincode 2): what `tx.get::<Rows>(&k)` decodes.
#[derive(Table)]
#[table(name = "rows", key = u64, value = crate::data::Row)]
pub struct Rows;

/// Schema of the typed workloads.
#[derive(Schema)]
pub struct RowsSchema(Rows);

/// [`Rows`] with `integer_key`: native-endian `u64` keys in libmdbx's integer order (the
/// get workloads' `tabula_typed_intkey` row).
#[derive(Table)]
#[table(name = "rows", key = u64, value = crate::data::Row, integer_key)]
pub struct RowsInt;

/// Schema of [`RowsInt`].
#[derive(Schema)]
pub struct RowsIntSchema(RowsInt);

/// Big raw values (big_values): `u64` keys, values read with `get_bytes` (borrowed) or `get`
/// (owned `Vec<u8>`).
#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>, codec = tabula::Raw)]
pub struct Blobs;

/// Schema of big_values.
#[derive(Schema)]
pub struct BlobsSchema(Blobs);

/// [`Kv`] with `integer_key`: native-endian `u64` keys in libmdbx's integer order (get_cold
/// investigation).
#[derive(Table)]
#[table(name = "kv", key = u64, value = Vec<u8>, codec = tabula::Raw, integer_key)]
pub struct KvInt;

/// Schema of [`KvInt`].
#[derive(Schema)]
pub struct KvIntSchema(KvInt);

/// The append workload: native-endian `u32` keys (`MDBX_INTEGERKEY`) and raw 100-byte values.
#[derive(Table)]
#[table(name = "log", key = u32, value = Vec<u8>, codec = tabula::Raw, integer_key)]
pub struct Log;

/// Schema of the append workload.
#[derive(Schema)]
pub struct LogSchema(Log);

/// The dup_seek workload: reth's storage shape — a 20-byte address, values sorted by a 32-byte
/// slot (the subkey), each with a 32-byte word. The stored dup is `slot ++ word` (the subkey's
/// key encoding, then `Ordered<[u8; 32]>`'s: the 32 bytes as they are), 64 bytes, so the raw and
/// LMDB tables (20-byte keys, 64-byte dups) hold the same bytes.
#[derive(Table)]
#[table(
    name = "slots",
    key = [u8; 20],
    subkey = [u8; 32],
    value = [u8; 32],
    codec = tabula::Ordered<[u8; 32]>,
    dupsort
)]
pub struct Slots;

/// Schema of dup_seek.
#[derive(Schema)]
pub struct SlotsSchema(Slots);

/// big_txn and small_commits (issue 26, the peer benchmark's table): byte-string keys (24
/// random bytes) and raw values (150 random bytes), as the peer's Tabula backend declared it.
#[derive(Table)]
#[table(name = "pairs24", key = Vec<u8>, value = Vec<u8>, codec = tabula::Raw)]
pub struct Pairs24;

/// Schema of big_txn and small_commits.
#[derive(Schema)]
pub struct Pairs24Schema(Pairs24);

/// The prune workload: `u64` keys (big-endian), `u64` values through Tabula's default codec
/// (bincode 2: a varint).
#[derive(Table)]
#[table(name = "pairs", key = u64, value = u64)]
pub struct Pairs;

/// Schema of prune.
#[derive(Schema)]
pub struct PairsSchema(Pairs);

/// Opens a `Db<S>` (a one-table schema) whose environment also holds `extra` other tables,
/// created and **opened** in the same startup transaction, so the environment has `extra + 1`
/// live table handles. With `schema_table_last` the schema's table is opened after the extra
/// ones and has the highest handle number (libmdbx's per-transaction handle bookkeeping grows
/// with that number), otherwise it is opened first.
///
/// This is what a schema of `extra + 1` tables would do at startup, without compiling
/// `extra + 1` table types: Tabula's startup path (`tabula_core::startup::open`, the one
/// `tabula::open` runs) with a hook that creates and opens the extra tables before the
/// schema's table is opened (or after it, when the hook opens the schema's table first).
///
/// # Panics
///
/// On any Tabula error (this is a benchmark).
pub fn open_with_extra_tables<S: Schema>(
    path: &Path,
    extra: usize,
    schema_table_last: bool,
    options: Options,
) -> Db<S> {
    assert_eq!(S::TABLES.len(), 1, "a one-table schema");
    let options = options.extra_tables(extra as u32 + 1);
    let hook = ExtraTables {
        extra,
        schema_table: (!schema_table_last).then(|| &S::TABLES[0]),
    };
    startup::open::<S>(path, &options, &hook)
        .expect("open with extra tables")
        .0
}

/// The startup hook of [`open_with_extra_tables`].
struct ExtraTables {
    extra: usize,
    /// The schema's table, to open before the extra ones.
    schema_table: Option<&'static tabula::TableInfo>,
}

impl Upgrade for ExtraTables {
    fn version(&self) -> u32 {
        1
    }

    fn upgrade(
        &self,
        boot: &mut Bootstrap,
        _record: &mut SchemaRecord,
        _stored: bool,
    ) -> tabula::Result<Vec<(u32, &'static str)>> {
        if let Some(info) = self.schema_table
            && boot.find_table(info.name)?.is_none()
        {
            boot.create_table(info.name, info.flags)?;
        }
        for i in 0..self.extra {
            let name = table_name_static(i);
            if boot.find_table(name)?.is_none() {
                boot.create_table(name, TableFlags::default())?;
            }
        }
        Ok(Vec::new())
    }
}

/// The most tables a [`Wide`] schema has.
pub const WIDE_MAX: usize = 10_000;

/// The names `t00000`, `t00001`, … of the [`Wide`] schemas' tables (the same names as
/// [`crate::util::table_name`]), as bytes a constant can point into.
static WIDE_NAMES: [[u8; 6]; WIDE_MAX] = {
    let mut names = [[0u8; 6]; WIDE_MAX];
    let mut i = 0;
    while i < WIDE_MAX {
        let mut n = i;
        let mut d = 5;
        names[i][0] = b't';
        while d > 0 {
            names[i][d] = b'0' + (n % 10) as u8;
            n /= 10;
            d -= 1;
        }
        i += 1;
    }
    names
};

/// The table list of [`Wide<N>`]: `N` tables like [`Kv`] (`u64` keys, raw values) named
/// `t00000` … as constants, so a schema of 10,000 tables needs no 10,000 table types.
const fn wide_tables<const N: usize>() -> [TableInfo; N] {
    assert!(N <= WIDE_MAX, "at most WIDE_MAX tables");
    let names: &'static [[u8; 6]; WIDE_MAX] = &WIDE_NAMES;
    let mut out = [TableInfo::of::<Kv>(); N];
    let mut i = 0;
    while i < N {
        out[i].name = match std::str::from_utf8(&names[i]) {
            Ok(s) => s,
            Err(_) => panic!("table names are ASCII"),
        };
        i += 1;
    }
    out
}

/// A schema of `N` tables (the open workload): what `#[derive(Schema)]` over `N` tables
/// declares, so `tabula::open::<Wide<N>>` runs the real startup step — every table found or
/// created, checked against its record, and recorded.
pub struct Wide<const N: usize>;

impl<const N: usize> Schema for Wide<N> {
    const TABLES: &'static [TableInfo] = &wide_tables::<N>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_tables_are_created_and_the_schema_table_works() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_with_extra_tables::<KvSchema>(dir.path(), 3, true, Options::new());
        let mut tx = db.write().unwrap();
        tx.put::<Kv>(&5, &vec![1, 2, 3]).unwrap();
        tx.commit().unwrap();
        let tx = db.read().unwrap();
        assert_eq!(tx.get_bytes::<Kv>(&5).unwrap(), Some(&[1u8, 2, 3][..]));
        assert_eq!(KvSchema::TABLES[0].name, Kv::NAME);
    }

    #[test]
    fn wide_schemas_open_their_tables() {
        assert_eq!(<Wide<WIDE_MAX> as Schema>::TABLES[9_999].name, "t09999");
        assert_eq!(
            <Wide<12> as Schema>::TABLES[11].name,
            crate::util::table_name(11)
        );
        let dir = tempfile::tempdir().unwrap();
        drop(tabula::open::<Wide<12>>(dir.path(), Options::new()).unwrap());
        let db = tabula::open::<Wide<12>>(dir.path(), Options::new()).unwrap();
        assert_eq!(db.tables().len(), 12);
        assert_eq!(db.tables()[3].name, "t00003");
    }
}
