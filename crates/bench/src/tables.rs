//! Tabula's side of the benchmarks: the table declarations and how environments with many
//! tables are opened.

use std::path::Path;

use tabula::__private::Bootstrap;
use tabula::{Db, Options, Schema, Table, TableFlags};

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

/// Opens a `Db<S>` (a one-table schema) whose environment also holds `extra` other tables,
/// created and **opened** in the same startup transaction, so the environment has `extra + 1`
/// live table handles. With `schema_table_last` the schema's table is opened after the extra
/// ones and has the highest handle number (libmdbx's per-transaction handle bookkeeping grows
/// with that number), otherwise it is opened first.
///
/// This is what a schema of `extra + 1` tables would do at startup, without compiling
/// `extra + 1` table types. It drives the startup step's building block
/// (`tabula::__private::Bootstrap`, the one `tabula::open` uses) directly and skips the schema
/// record, which no benchmark reads.
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
    let mut boot = Bootstrap::<S>::begin(path, &options).expect("begin startup");
    let info = &S::TABLES[0];
    let open_schema_table = |boot: &mut Bootstrap<S>| {
        let dbi = match boot
            .find_schema_table(info.name, info.flags)
            .expect("find table")
        {
            Some(existing) => existing.dbi,
            None => boot.create_table(info.name, info.flags).expect("create"),
        };
        boot.set_handle(0, dbi);
    };
    if !schema_table_last {
        open_schema_table(&mut boot);
    }
    for i in 0..extra {
        let name = table_name_static(i);
        if boot.find_table(name).expect("find table").is_none() {
            boot.create_table(name, TableFlags::default())
                .expect("create table");
        }
    }
    if schema_table_last {
        open_schema_table(&mut boot);
    }
    boot.finish().expect("finish startup")
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
}
