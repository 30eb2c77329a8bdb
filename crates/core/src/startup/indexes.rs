//! The startup step's part for secondary indexes: building an index that is new, was
//! redeclared, or whose table a migration step rewrote, from its source table's rows; and
//! dropping the table of an index the schema no longer lists.

use super::bootstrap::{Bootstrap, TableHandle};
use crate::error::{Error, KeyHex, Result};
use crate::index;
use crate::schema::record::SchemaRecord;
use crate::table::{RawEntry, TableInfo};

/// Rows read per batch while an index is built.
const BUILD_BATCH: usize = 10_000;

/// Builds the index `info` (handle `handle`) from its source table `source` (handle
/// `source_handle`): empties it, then adds every row's entries, in the startup transaction.
/// Returns the number of entries written.
///
/// # Errors
///
/// [`Error::UniqueViolation`] naming the first two rows that share a key of a unique index
/// (nothing is then written: the startup transaction is aborted); [`Error::Decode`] for a row
/// that does not decode; [`Error::Mdbx`].
pub(crate) fn build(
    boot: &mut Bootstrap,
    info: &TableInfo,
    handle: TableHandle,
    source: &'static str,
    source_handle: TableHandle,
) -> Result<u64> {
    let Some(index) = info.index else {
        return Ok(0);
    };
    boot.clear_table(info.name, handle)?;
    let mut after: Option<Vec<u8>> = None;
    let mut written = 0u64;
    let mut rows = 0u64;
    loop {
        let batch = boot.read_batch(source, source_handle, after.as_deref(), BUILD_BATCH)?;
        let Some((last, _)) = batch.last() else {
            break;
        };
        let last = last.clone();
        for (k, v) in &batch {
            let entries: Vec<RawEntry> = index::entries(source, &index, info.name, k, v)?;
            for entry in entries {
                if index.unique
                    && let Some(row) = boot.get_raw(info.name, handle, &entry.key)?
                    && row != entry.primary
                {
                    return Err(Error::UniqueViolation {
                        table: source,
                        index: info.name,
                        key: KeyHex::new(&entry.key),
                        rows: Box::new([KeyHex::new(&row), KeyHex::new(&entry.primary)]),
                    });
                }
                boot.put_raw(info.name, handle, &entry.key, &entry.primary, false)?;
                written += 1;
            }
        }
        rows += batch.len() as u64;
        tracing::info!(
            index = info.name,
            table = source,
            rows,
            entries = written,
            "building index"
        );
        after = Some(last);
    }
    Ok(written)
}

/// Drops the table of every index `record` lists that `tables` no longer declares, and its
/// record. Returns their names.
///
/// # Errors
///
/// [`Error::Mdbx`] when a table cannot be dropped.
pub(crate) fn drop_undeclared(
    boot: &mut Bootstrap,
    record: &mut SchemaRecord,
    tables: &[TableInfo],
) -> Result<Vec<String>> {
    let gone: Vec<String> = record
        .tables
        .iter()
        .filter(|(name, t)| t.index.is_some() && !tables.iter().any(|d| d.name == name.as_str()))
        .map(|(name, _)| name.clone())
        .collect();
    for name in &gone {
        // A handful per open at most; table names are `&'static` throughout (errors carry them).
        let name: &'static str = Box::leak(name.clone().into_boxed_str());
        boot.drop_table(name)?;
        record.tables.remove(name);
        tracing::info!(index = name, "dropped index no longer in the schema");
    }
    Ok(gone)
}
