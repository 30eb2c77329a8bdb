//! Typed access to any table from a migration step's `run` operation.

use tabula_core::record::SchemaRecord;
use tabula_core::startup::{
    Bootstrap, TableHandle, decode_stored_key, decode_stored_value, encode_stored_key,
    encode_stored_value,
};
use tabula_core::{Result, Table};

use crate::run::refuse_beside_history;
use crate::steps::Step;

/// Typed access to any table during a migration step's [`run`](crate::Step::run) operation.
///
/// Tables are opened by their declared name (and created with their declared flags when
/// missing): this is the one place that may do so, because no handle has been published yet.
/// Its writes go beside Tabula's write path: they are refused on a table whose history the
/// database holds (drop the history first, in this step or an earlier one).
pub struct MigrationTx<'a> {
    pub(crate) boot: &'a mut Bootstrap,
    /// The step running, which a refusal names.
    pub(crate) step: &'a Step,
    /// The schema record as the step's operations before this one left it.
    pub(crate) record: &'a SchemaRecord,
}

impl MigrationTx<'_> {
    fn handle<T: Table>(&mut self) -> Result<TableHandle> {
        match self.boot.find_table(T::NAME)? {
            Some(t) => Ok(t.handle),
            None => self.boot.create_table(T::NAME, T::FLAGS),
        }
    }

    /// The handle of `T` for a raw write (`what`), refused while the database holds a history
    /// of `T`: the write would not be recorded in it.
    fn writable<T: Table>(&mut self, what: &str) -> Result<TableHandle> {
        let what = format!("{what} a row of `{}` in a step's `run`", T::NAME);
        refuse_beside_history(self.step, self.record, &what, T::NAME)?;
        self.handle::<T>()
    }

    /// Reads the value under `key`.
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](tabula_core::Error::Decode) or [`Error::Mdbx`](tabula_core::Error::Mdbx).
    pub fn get<T: Table>(&mut self, key: &T::Key) -> Result<Option<T::Value>> {
        let handle = self.handle::<T>()?;
        let k = encode_stored_key::<T>(key);
        match self.boot.get_raw(T::NAME, handle, &k)? {
            Some(v) => decode_stored_value::<T>(&k, &v).map(Some),
            None => Ok(None),
        }
    }

    /// Stores `value` under `key`.
    ///
    /// # Errors
    ///
    /// [`Error::Migration`](tabula_core::Error::Migration) when the database holds a history of
    /// `T` (naming it and the `drop_table` that lets the write through),
    /// [`Error::Encode`](tabula_core::Error::Encode) or [`Error::Mdbx`](tabula_core::Error::Mdbx).
    pub fn put<T: Table>(&mut self, key: &T::Key, value: &T::Value) -> Result<()> {
        let handle = self.writable::<T>("put")?;
        let k = encode_stored_key::<T>(key);
        let v = encode_stored_value::<T>(&k, value)?;
        self.boot.put_raw(T::NAME, handle, &k, &v, false)
    }

    /// Deletes `key`; returns whether it was present.
    ///
    /// # Errors
    ///
    /// [`Error::Migration`](tabula_core::Error::Migration) when the database holds a history of
    /// `T`, as for [`put`](Self::put); [`Error::Mdbx`](tabula_core::Error::Mdbx).
    pub fn delete<T: Table>(&mut self, key: &T::Key) -> Result<bool> {
        let handle = self.writable::<T>("delete")?;
        let k = encode_stored_key::<T>(key);
        self.boot.delete_raw(T::NAME, handle, &k)
    }

    /// Calls `f` with every entry of the table, in key order (read in batches).
    ///
    /// # Errors
    ///
    /// [`Error::Decode`](tabula_core::Error::Decode), [`Error::Mdbx`](tabula_core::Error::Mdbx), or what `f` returns.
    pub fn for_each<T: Table>(
        &mut self,
        mut f: impl FnMut(T::Key, T::Value) -> Result<()>,
    ) -> Result<()> {
        let handle = self.handle::<T>()?;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let batch = self
                .boot
                .read_batch(T::NAME, handle, after.as_deref(), 1024)?;
            let Some((last, _)) = batch.last() else {
                return Ok(());
            };
            let last = last.clone();
            for (k, v) in &batch {
                f(decode_stored_key::<T>(k)?, decode_stored_value::<T>(k, v)?)?;
            }
            after = Some(last);
        }
    }
}
