//! The startup step's part for secondary indexes: building an index that is new, was
//! redeclared, or whose table a migration step rewrote, from its source table's rows, in
//! batches that each commit with the build's progress (so a build that is killed resumes where
//! it stopped); and dropping the table of an index the schema no longer lists.

use super::bootstrap::{Bootstrap, TableHandle};
use crate::error::{Error, KeyHex, Result};
use crate::index;
use crate::record::SchemaRecord;
use crate::table::{IndexInfo, RawEntry, TableInfo};

/// Rows read per batch while an index is built.
const BUILD_BATCH: usize = 10_000;

/// The meta-table key of the build in progress: the index's name, how it was declared
/// (`version`, `unique`), how many source rows are done, and the last source key whose
/// entries are committed.
pub(crate) const PROGRESS_KEY: &str = "index-build";

/// The progress record's declaration part: `name length (u16 BE) | name | version (u32 BE) |
/// unique`; a build in progress is recorded as that, `done (u64 BE)`, and the last key.
fn declared(name: &str, info: &TableInfo, index: &IndexInfo) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + name.len() + 5 + 8);
    out.extend_from_slice(&(name.len() as u16).to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&info.value_version.unwrap_or(1).to_be_bytes());
    out.push(u8::from(index.unique));
    out
}

/// The progress record of a build of `declared` that has done `done` rows up to key `after`.
fn progress(declared: &[u8], done: u64, after: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(declared.len() + 8 + after.len());
    out.extend_from_slice(declared);
    out.extend_from_slice(&done.to_be_bytes());
    out.extend_from_slice(after);
    out
}

/// The rows done and the last key of a progress record for `declared`; `None` when it is
/// for another declaration (or malformed): the build starts over.
fn resume_point<'r>(record: &'r [u8], declared: &[u8]) -> Option<(u64, &'r [u8])> {
    let rest = record.strip_prefix(declared)?;
    let (done, after) = rest.split_first_chunk::<8>()?;
    Some((u64::from_be_bytes(*done), after))
}

/// The index name a progress record is for, and the rest of it.
fn progress_name(record: &[u8]) -> Option<(&str, &[u8])> {
    let len = usize::from(u16::from_be_bytes(record.get(..2)?.try_into().ok()?));
    let name = std::str::from_utf8(record.get(2..2 + len)?).ok()?;
    Some((name, &record[2 + len..]))
}

/// Builds the index `info` (handle `handle`) from its source table `source` (handle
/// `source_handle`; `show_row` shows its keys in errors) in batches of rows, each committed with the build's progress. A build of
/// the same declaration that was interrupted resumes after its last committed batch, unless
/// `fresh` (a migration step ran in this open: the rows may have changed), when it starts
/// over. `progress_to` gets the rows done after each batch, those done before an
/// interruption included. Returns the number of entries written by this call.
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
    (source, show_row): (&'static str, crate::error::ShowKey),
    source_handle: TableHandle,
    fresh: bool,
    progress_to: &dyn Fn(u64, u64),
) -> Result<u64> {
    let Some(index) = info.index else {
        return Ok(0);
    };
    let declared = declared(info.name, info, &index);
    let record = boot.meta_get(PROGRESS_KEY)?;
    let resume = record
        .as_deref()
        .filter(|_| !fresh)
        .and_then(|p| resume_point(p, &declared));
    let (mut done, mut after) = match resume {
        Some((done, after)) => (done, Some(after.to_vec())),
        None => (0, None),
    };
    if let Some(after) = &after {
        tracing::info!(index = info.name, table = source, done, after = %KeyHex::new(after), "resuming index build");
    } else {
        boot.clear_table(info.name, handle)?;
    }
    let total = boot.row_count(source, source_handle)?;
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
                        key: KeyHex::shown(&entry.key, info.debug_key),
                        rows: Box::new([
                            KeyHex::shown(&row, show_row),
                            KeyHex::shown(&entry.primary, show_row),
                        ]),
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
        done += batch.len() as u64;
        boot.meta_put(PROGRESS_KEY, &progress(&declared, done, &last))?;
        boot.checkpoint()?;
        committed = true;
        progress_to(done.min(total), total);
        tracing::info!(
            index = info.name,
            table = source,
            entries = written,
            "building index"
        );
        after = Some(last);
    }
    if committed || record.is_some() {
        boot.meta_delete(PROGRESS_KEY)?;
    }
    if done < total {
        // Only when rows were counted otherwise than now (a record of another count): the
        // last report is at the whole table.
        progress_to(total, total);
    }
    Ok(written)
}

/// Whether [`drop_undeclared`] may have work: `record` lists an index `tables` no longer
/// declares, or a build is in progress (its progress record is there, to resume or to drop).
/// `true` when the meta table cannot be read: the write pass meets the error.
pub(crate) fn any_to_drop(
    boot: &mut Bootstrap,
    record: &SchemaRecord,
    tables: &[TableInfo],
) -> bool {
    record
        .tables
        .iter()
        .any(|(name, t)| t.index.is_some() && !tables.iter().any(|d| d.name == name.as_str()))
        || !matches!(boot.meta_get(PROGRESS_KEY), Ok(None))
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
            debug_key: crate::__private::no_debug_key,
            index: Some(IndexInfo {
                source: "transfers",
                unique: true,
                entries: |_, _, _| Ok(()),
                keys: |_, _, _| false,
            }),
            history: false,
            history_of: None,
        };
        let declared = declared("by_sender", &info, &info.index.unwrap());
        let p = progress(&declared, 258, b"k");
        assert_eq!(
            progress_name(&p),
            Some((
                "by_sender",
                &[0, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 1, 2, b'k'][..]
            ))
        );
        assert_eq!(resume_point(&p, &declared), Some((258, &b"k"[..])));
        assert_eq!(resume_point(&p[..p.len() - 2], &declared), None);
        assert_eq!(progress_name(b"\x00"), None);
    }
}
