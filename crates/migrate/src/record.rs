//! What the meta table stores: the schema record and the progress of a running migration.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tabula_core::TableInfo;

/// The meta-table key of the schema record.
pub const SCHEMA_RECORD_KEY: &str = "schema";

/// The meta-table key of an unfinished migration step's progress.
pub const PROGRESS_KEY: &str = "migration-progress";

/// The schema record format this version writes and reads.
pub const RECORD_FORMAT: u32 = 1;

/// What the meta table remembers about a database: its schema version, the migration steps
/// applied to it, and every table Tabula created in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaRecord {
    /// Format of this record; a newer one is refused.
    pub format: u32,
    /// Schema version reached (1 for a database no migration step has touched).
    #[serde(default = "one")]
    pub version: u32,
    /// Migration steps applied, in order.
    #[serde(default)]
    pub applied: Vec<AppliedStep>,
    /// Tables by name.
    pub tables: BTreeMap<String, TableRecord>,
}

fn one() -> u32 {
    1
}

impl SchemaRecord {
    pub(crate) fn empty() -> Self {
        SchemaRecord {
            format: RECORD_FORMAT,
            version: 1,
            applied: Vec::new(),
            tables: BTreeMap::new(),
        }
    }
}

/// One applied migration step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedStep {
    /// The version the step migrates to.
    pub version: u32,
    /// Its name.
    pub name: String,
    /// Checksum of its declaration (the operations it lists).
    pub checksum: String,
}

/// One table in the [`SchemaRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRecord {
    /// Several values per key.
    pub dupsort: bool,
    /// Native-endian integer keys.
    pub integer_key: bool,
    /// The key encoding, e.g. `(str, u64)`.
    pub key: String,
    /// The value codec and type, e.g. `bincode<Header>`.
    pub value: String,
    /// The value type's structural shape (serde data model as JSON), when the codec has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
}

impl TableRecord {
    /// The record of a declared table.
    pub fn of(info: &TableInfo) -> Self {
        TableRecord {
            dupsort: info.flags.dupsort,
            integer_key: info.flags.integer_key,
            key: info.key_descriptor(),
            value: info.value_descriptor(),
            shape: (info.value_shape)(),
        }
    }
}

/// Where an interrupted migration step stands; written in the same transaction as each batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ProgressRecord {
    /// The step's version.
    pub version: u32,
    /// Operations before this index are complete.
    pub op: usize,
    /// The last source key (stored bytes) whose entries are done, for the operation at `op`.
    pub after: Option<Vec<u8>>,
    /// Entries done in that operation.
    pub done: u64,
}
