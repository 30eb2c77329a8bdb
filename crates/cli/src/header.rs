//! The first line of a `jsonl` or `hex` dump ([`DumpHeader`]): what `tabula dump` writes and
//! `tabula load` reads back (the format is described in `load.rs`).

use serde::{Deserialize, Serialize};
use tabula_core::TableFlags;
use tabula_core::record::{AppliedStep, TableRecord};
use tabula_core::untyped::{UntypedDb, UntypedTable};

use crate::Failure;

/// The version of the header line this Tabula writes and reads.
pub(crate) const HEADER_VERSION: u32 = 1;

/// The first line of a `jsonl` or `hex` dump: what `load` needs to create the table and encode
/// its entries.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DumpHeader {
    /// Marks the header line, and its version ([`HEADER_VERSION`]).
    pub(crate) tabula_dump: u32,
    /// `jsonl` or `hex`: how the entries that follow are written.
    pub(crate) format: String,
    /// The dumped table's name.
    pub(crate) table: String,
    /// The table's libmdbx flags (`dupsort`, `integer_key`).
    pub(crate) flags: Vec<String>,
    /// What the source's schema record holds for the table; `null` when it records nothing
    /// (keys and values are then hex in `jsonl` too).
    pub(crate) record: Option<TableRecord>,
    /// The source's schema version (`null` for a file without a schema record).
    pub(crate) schema_version: Option<u32>,
    /// The migration steps applied to the source.
    #[serde(default)]
    pub(crate) applied: Vec<AppliedStep>,
}

impl DumpHeader {
    /// The header of a dump of table `found` of `db`, named `name`, its entries in `format`.
    pub(crate) fn of(db: &UntypedDb, name: &str, found: &UntypedTable, format: &str) -> DumpHeader {
        let record = db.record();
        DumpHeader {
            tabula_dump: HEADER_VERSION,
            format: format.to_string(),
            table: name.to_string(),
            flags: found.flags.iter().map(|f| (*f).to_string()).collect(),
            record: found.record.clone(),
            schema_version: record.map(|r| r.version),
            applied: record.map(|r| r.applied.clone()).unwrap_or_default(),
        }
    }

    /// The flags Tabula creates tables with, or why these cannot be.
    pub(crate) fn table_flags(&self) -> Result<TableFlags, String> {
        let mut flags = TableFlags::NONE;
        for f in &self.flags {
            match f.as_str() {
                "dupsort" => flags.dupsort = true,
                "integer_key" => flags.integer_key = true,
                other => {
                    return Err(format!(
                        "the dumped table has the libmdbx flag `{other}`, which Tabula does not \
                         create tables with (only `dupsort` and `integer_key`)"
                    ));
                }
            }
        }
        Ok(flags)
    }
}

/// Reads the header line `first` of the dump `source` (named in errors).
pub(crate) fn parse_header(first: &str, source: &str) -> Result<DumpHeader, Failure> {
    let not_a_dump = |why: String| {
        Failure::Problem(format!(
            "{source} is not a dump `tabula load` reads: {why}; it reads what `tabula dump` writes \
             in its `jsonl` (default) or `hex` format, which begin with a header line"
        ))
    };
    if first.trim_start().starts_with('[') {
        return Err(not_a_dump(
            "it is a `--format json` dump (one JSON array, without the table's description)".into(),
        ));
    }
    if first.trim().is_empty() {
        return Err(not_a_dump("it is empty".into()));
    }
    let header: DumpHeader = serde_json::from_str(first)
        .map_err(|e| not_a_dump(format!("its first line is not the header ({e})")))?;
    if header.tabula_dump != HEADER_VERSION {
        return Err(Failure::Problem(format!(
            "{source} is a dump in header version {}, and this Tabula reads version \
             {HEADER_VERSION}: load it with the Tabula that wrote it",
            header.tabula_dump
        )));
    }
    if header.format != "jsonl" && header.format != "hex" {
        return Err(not_a_dump(format!(
            "its header names the format `{}`",
            header.format
        )));
    }
    Ok(header)
}
