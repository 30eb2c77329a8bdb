//! The meta table, through a [`Bootstrap`]: its entries by key and the schema record it keeps
//! (parsed and written here, as `record.rs` defines it).

use std::path::Path;

use super::bootstrap::Bootstrap;
use crate::engine;
use crate::error::{At, Error, Result};
use crate::record::META_TABLE;
use crate::record::{
    RECORD_FORMAT, RecordProblem, SCHEMA_RECORD_KEY, SchemaRecord, write_declared_json,
};
use crate::schema::ValueTrace;
use crate::table::TableInfo;

/// The meta table and the schema record.
impl Bootstrap {
    /// Deletes a record of the meta table ([`META_TABLE`]); nothing happens when it is not
    /// there.
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// boot.meta_put("note", b"remove me")?;
    /// boot.meta_delete("note")?;
    /// assert_eq!(boot.meta_get("note")?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn meta_delete(&mut self, key: &str) -> Result<()> {
        if let Some(meta) = self.meta {
            self.txn()
                .del(meta, key.as_bytes(), None)
                .map_err(|c| self.fail(c, At::table(META_TABLE, "delete")))?;
        }
        Ok(())
    }

    /// Reads a record from the meta table ([`META_TABLE`]); `None` when it is not there.
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// assert_eq!(boot.meta_get("note")?, None);
    /// boot.meta_put("note", b"hello")?;
    /// assert_eq!(boot.meta_get("note")?, Some(b"hello".to_vec()));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails.
    pub fn meta_get(&mut self, key: &str) -> Result<Option<Vec<u8>>> {
        let Some(meta) = self.meta else {
            return Ok(None);
        };
        let txn = self.txn.as_ref().expect("live");
        txn.get(meta, key.as_bytes())
            .map(|v| v.map(<[u8]>::to_vec))
            .map_err(|c| self.fail(c, At::table(META_TABLE, "get")))
    }

    /// Writes a record to the meta table ([`META_TABLE`]), creating the table if needed.
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// boot.meta_put("note", b"one")?;
    /// boot.meta_put("note", b"two")?;
    /// assert_eq!(boot.meta_get("note")?, Some(b"two".to_vec()));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails (or the open is read-only).
    pub fn meta_put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        let meta = match self.meta {
            Some(m) => m,
            None => {
                let m = self
                    .txn()
                    .open_table(Some(META_TABLE), 0, true)
                    .map_err(|c| self.fail(c, At::table(META_TABLE, "create")))?
                    .expect("MDBX_CREATE returns a handle");
                self.meta = Some(m);
                m
            }
        };
        self.txn()
            .put(meta, key.as_bytes(), value, engine::put::UPSERT)
            .map_err(|c| self.fail(c, At::table(META_TABLE, "put")))
    }

    /// Reads the schema record; `None` for a database nothing has been recorded in.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// assert!(boot.read_record()?.is_none());
    /// drop(boot);
    /// drop(tabula::open::<App>(dir.path(), Options::new())?);
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new().read_only(true), 0)?;
    /// let record = boot.read_record()?.expect("recorded by the open");
    /// assert_eq!(record.tables["Names"].key, "u64");
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::SchemaRecord`] when the record does not parse or was written by a newer
    /// Tabula; [`Error::Mdbx`] when libmdbx fails.
    pub fn read_record(&mut self) -> Result<Option<SchemaRecord>> {
        let Some(bytes) = self.meta_get(SCHEMA_RECORD_KEY)? else {
            return Ok(None);
        };
        parse_record(&bytes, &self.path).map(Some)
    }

    /// [`read_record`](Self::read_record) for the startup of a schema declaring `tables`
    /// (value types traced as `traces`; `by_name`: their positions in name order): also returns whether the record's tables are exactly
    /// those, recognised by their bytes without parsing them
    /// ([`SchemaRecord::parse_declared`]), in which case the record returned has no tables.
    pub(super) fn read_record_declared(
        &mut self,
        tables: &[TableInfo],
        traces: &[ValueTrace],
        by_name: &[usize],
    ) -> Result<Option<(SchemaRecord, bool)>> {
        let Some(bytes) = self.meta_get(SCHEMA_RECORD_KEY)? else {
            return Ok(None);
        };
        let mut declared = Vec::with_capacity(bytes.len());
        write_declared_json(&mut declared, tables, traces, by_name);
        SchemaRecord::parse_declared(&bytes, &declared)
            .map_err(|problem| record_error(problem, &self.path))
            .map(Some)
    }

    /// Writes the schema record (in the format [`SchemaRecord::settle_format`] picks).
    ///
    /// ```
    /// # use tabula::Options;
    /// # use tabula_core::record::SchemaRecord;
    /// # use tabula_core::startup::Bootstrap;
    /// # let dir = tabula::__doc::temp_dir();
    /// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
    /// let mut record = SchemaRecord::empty();
    /// record.version = 3;
    /// boot.write_record(&mut record)?;
    /// assert_eq!(boot.read_record()?.map(|r| r.version), Some(3));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] when libmdbx fails (or the open is read-only).
    pub fn write_record(&mut self, record: &mut SchemaRecord) -> Result<()> {
        let bytes = record.encode();
        self.meta_put(SCHEMA_RECORD_KEY, &bytes)
    }
}

/// Parses stored schema-record bytes of the database at `path`.
pub(crate) fn parse_record(bytes: &[u8], path: &Path) -> Result<SchemaRecord> {
    SchemaRecord::parse(bytes).map_err(|problem| record_error(problem, path))
}

/// Why the schema record of the database at `path` cannot be used, as an [`Error`].
fn record_error(problem: RecordProblem, path: &Path) -> Error {
    Error::SchemaRecord {
        path: path.to_path_buf(),
        message: match problem {
            RecordProblem::Damaged(e) => {
                format!("it does not parse ({e}); the `{META_TABLE}` table may be damaged")
            }
            RecordProblem::Newer(format) => format!(
                "it has format {format} but this Tabula reads format {RECORD_FORMAT} at most: \
                 the database was written by a newer Tabula; upgrade the application"
            ),
        },
    }
}
