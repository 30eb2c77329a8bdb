//! Typed access to any table from a migration step's `run` operation.

use tabula_core::startup::{
    Bootstrap, TableHandle, decode_stored_key, decode_stored_value, encode_stored_key,
    encode_stored_value,
};
use tabula_core::{Result, Table};

/// Typed access to any table during a migration step's [`run`](crate::Step::run) operation.
///
/// Tables are opened by their declared name (and created with their declared flags when
/// missing): this is the one place that may do so, because no handle has been published yet.
pub struct MigrationTx<'a> {
    pub(crate) boot: &'a mut Bootstrap,
}

impl MigrationTx<'_> {
    fn handle<T: Table>(&mut self) -> Result<TableHandle> {
        match self.boot.find_table(T::NAME)? {
            Some(t) => Ok(t.handle),
            None => self.boot.create_table(T::NAME, T::FLAGS),
        }
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
    /// [`Error::Encode`](tabula_core::Error::Encode) or [`Error::Mdbx`](tabula_core::Error::Mdbx).
    pub fn put<T: Table>(&mut self, key: &T::Key, value: &T::Value) -> Result<()> {
        let handle = self.handle::<T>()?;
        let k = encode_stored_key::<T>(key);
        let v = encode_stored_value::<T>(&k, value)?;
        self.boot.put_raw(T::NAME, handle, &k, &v, false)
    }

    /// Deletes `key`; returns whether it was present.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`](tabula_core::Error::Mdbx).
    pub fn delete<T: Table>(&mut self, key: &T::Key) -> Result<bool> {
        let handle = self.handle::<T>()?;
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
