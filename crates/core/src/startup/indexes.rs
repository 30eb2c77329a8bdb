//! The startup step's part for secondary indexes: building an index that is new, was
//! redeclared, or whose table a migration step rewrote, from its source table's rows, in
//! batches that each commit with the build's progress (so a build that is killed resumes where
//! it stopped); and dropping the table of an index the schema no longer lists.

use super::bootstrap::{Bootstrap, TableHandle};
use crate::error::{Error, KeyHex, Result};
use crate::index;
use crate::schema::record::SchemaRecord;
use crate::table::{IndexInfo, RawEntry, TableInfo};

/// Rows read per batch while an index is built.
const BUILD_BATCH: usize = 10_000;

/// The meta-table key of the build in progress: the index's name, how it was declared
/// (`version`, `unique`), and the last source key whose entries are committed.
pub(crate) const PROGRESS_KEY: &str = "index-build";

/// The progress record: `name length (u16 BE) | name | version (u32 BE) | unique | last key`.
fn progress(name: &str, info: &TableInfo, index: &IndexInfo, after: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + name.len() + 5 + after.len());
    out.extend_from_slice(&(name.len() as u16).to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&info.value_version.unwrap_or(1).to_be_bytes());
    out.push(u8::from(index.unique));
    out.extend_from_slice(after);
    out
}

/// The index name a progress record is for, and the rest of it.
fn progress_name(record: &[u8]) -> Option<(&str, &[u8])> {
    let len = usize::from(u16::from_be_bytes(record.get(..2)?.try_into().ok()?));
    let name = std::str::from_utf8(record.get(2..2 + len)?).ok()?;
    Some((name, &record[2 + len..]))
}

/// Builds the index `info` (handle `handle`) from its source table `source` (handle
/// `source_handle`) in batches of rows, each committed with the build's progress. A build of
/// the same declaration that was interrupted resumes after its last committed batch, unless
/// `fresh` (a migration step ran in this open: the rows may have changed), when it starts
/// over. Returns the number of entries written by this call.
///
/// # Errors
///
/// [`Error::UniqueViolation`] naming the first two rows that share a key of a unique index:
/// the index table and the progress are then dropped (committed when batches were), so the
/// file holds no trace of the index; [`Error::Decode`] for a row that does not decode;
/// [`Error::Mdbx`].
pub(crate) fn build(
    boot: &mut Bootstrap,
    info: &TableInfo,
    handle: TableHandle,
    source: &'static str,
    source_handle: TableHandle,
    fresh: bool,
    progress_to: &dyn Fn(u64, u64),
) -> Result<u64> {
    let Some(index) = info.index else {
        return Ok(0);
    };
    let declared = progress(info.name, info, &index, &[]);
    let mut after: Option<Vec<u8>> = match boot.meta_get(PROGRESS_KEY)? {
        Some(p) if !fresh && p.starts_with(&declared) => Some(p[declared.len()..].to_vec()),
        _ => None,
    };
    if let Some(after) = &after {
        tracing::info!(index = info.name, table = source, after = %KeyHex::new(after), "resuming index build");
    } else {
        boot.clear_table(info.name, handle)?;
    }
    let total = boot.row_count(source, source_handle)?;
    let mut done = 0u64;
    let mut written = 0u64;
    let mut committed = false;
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
                    let violation = Error::UniqueViolation {
                        table: source,
                        index: info.name,
                        key: KeyHex::new(&entry.key),
                        rows: Box::new([KeyHex::new(&row), KeyHex::new(&entry.primary)]),
                    };
                    if committed {
                        boot.drop_table(info.name)?;
                        boot.meta_delete(PROGRESS_KEY)?;
                        boot.checkpoint()?;
                    }
                    return Err(violation);
                }
                boot.put_raw(info.name, handle, &entry.key, &entry.primary, false)?;
                written += 1;
            }
        }
        boot.meta_put(PROGRESS_KEY, &progress(info.name, info, &index, &last))?;
        boot.checkpoint()?;
        committed = true;
        done += batch.len() as u64;
        progress_to(done.min(total), total);
        tracing::info!(
            index = info.name,
            table = source,
            entries = written,
            "building index"
        );
        after = Some(last);
    }
    if committed || boot.meta_get(PROGRESS_KEY)?.is_some() {
        boot.meta_delete(PROGRESS_KEY)?;
    }
    if done < total {
        // A resumed build counted from where it resumed: it ends at the whole table.
        progress_to(total, total);
    }
    Ok(written)
}

/// Drops the table of every index `record` lists that `tables` no longer declares, and its
/// record; and the table of an interrupted build of an index `tables` does not declare, with
/// its progress. Returns the names dropped.
///
/// # Errors
///
/// [`Error::Mdbx`] when a table cannot be dropped.
pub(crate) fn drop_undeclared(
    boot: &mut Bootstrap,
    record: &mut SchemaRecord,
    tables: &[TableInfo],
) -> Result<Vec<String>> {
    let declared = |name: &str| tables.iter().any(|d| d.name == name && d.index.is_some());
    let mut gone: Vec<String> = record
        .tables
        .iter()
        .filter(|(name, t)| t.index.is_some() && !tables.iter().any(|d| d.name == name.as_str()))
        .map(|(name, _)| name.clone())
        .collect();
    if let Some(p) = boot.meta_get(PROGRESS_KEY)? {
        match progress_name(&p) {
            Some((name, _)) if declared(name) => {}
            Some((name, _)) => {
                if !gone.iter().any(|g| g == name) && !record.tables.contains_key(name) {
                    gone.push(name.to_string());
                }
                boot.meta_delete(PROGRESS_KEY)?;
            }
            None => boot.meta_delete(PROGRESS_KEY)?,
        }
    }
    for name in &gone {
        // A handful per open at most; table names are `&'static` throughout (errors carry them).
        let name: &'static str = Box::leak(name.clone().into_boxed_str());
        boot.drop_table(name)?;
        record.tables.remove(name);
        tracing::info!(index = name, "dropped index no longer in the schema");
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_record_names_its_index() {
        use crate::schema::{Descriptor, ValueTrace};
        use crate::table::TableFlags;
        let info = TableInfo {
            name: "by_sender",
            flags: TableFlags::NONE,
            key: Descriptor::Unsigned(32),
            value: Descriptor::Bincode,
            value_type: "key of transfers",
            value_version: Some(3),
            rust_name: "",
            value_trace: || ValueTrace::Opaque,
            index: Some(IndexInfo {
                source: "transfers",
                unique: true,
                entries: |_, _, _| Ok(()),
                keys: |_, _, _| false,
            }),
        };
        let p = progress("by_sender", &info, &info.index.unwrap(), b"k");
        assert_eq!(
            progress_name(&p),
            Some(("by_sender", &[0, 0, 0, 3, 1, b'k'][..]))
        );
        assert_eq!(progress_name(b"\x00"), None);
    }
}
