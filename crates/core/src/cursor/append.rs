//! The bulk appender: one write cursor that appends in increasing key order, and the errors
//! for an out-of-order append (also used by the bulk load).

use std::marker::PhantomData;

use crate::codec::{AnyBytes, AsKey, Value};
use crate::engine::{Code, RawWriteCursor, op, put};
use crate::error::{At, Error, KeyHex, Result};
use crate::state::Shared;
use crate::stored::with_key;
use crate::table::{DupSort, Table};

/// A bulk loader: one write cursor that appends entries in increasing key order.
///
/// Created by [`Tx::appender`](crate::Tx::appender). Borrows the write transaction exclusively.
pub struct Appender<'t, T: Table> {
    cursor: RawWriteCursor<'t>,
    scratch: &'t mut Vec<u8>,
    shared: &'t Shared,
    _table: PhantomData<fn() -> T>,
}

impl<'t, T: Table> Appender<'t, T> {
    pub(crate) fn new(
        cursor: RawWriteCursor<'t>,
        scratch: &'t mut Vec<u8>,
        shared: &'t Shared,
    ) -> Self {
        Appender {
            cursor,
            scratch,
            shared,
            _table: PhantomData,
        }
    }

    /// Appends an entry whose key sorts after every key in the table.
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String)]
    /// # struct Names;
    /// # #[derive(Schema)]
    /// # struct App(Names);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// let mut appender = tx.appender::<Names>()?;
    /// appender.append(&1, &"one".to_string())?;
    /// appender.append(&2, &"two".to_string())?;
    /// let late = appender.append(&1, &"again".to_string());
    /// assert!(matches!(late, Err(tabula::Error::AppendOutOfOrder { .. })));
    /// drop(appender);
    /// assert_eq!(tx.len::<Names>()?, 2);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendOutOfOrder`] naming the key and the last key when it does not;
    /// [`Error::TooLarge`], [`Error::MapFull`], [`Error::DiskFull`], [`Error::Encode`],
    /// [`Error::Mdbx`].
    #[inline]
    pub fn append(&mut self, key: &(impl AsKey<T::Key> + ?Sized), value: &T::Value) -> Result<()> {
        self.put(key, value, put::APPEND_STRICT)
    }

    /// In a `dupsort` table, appends `value` as the new greatest value of `key`: it must sort
    /// after every value the key has (a key without values takes any).
    ///
    /// ```
    /// # use tabula::{Options, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = u64, value = String, dupsort)]
    /// # struct Topics;
    /// # #[derive(Schema)]
    /// # struct App(Topics);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let mut tx = db.write()?;
    /// let mut appender = tx.appender::<Topics>()?;
    /// appender.append(&1, &"a".to_string())?;
    /// appender.append_dup(&1, &"b".to_string())?;
    /// appender.append(&2, &"a".to_string())?;
    /// let late = appender.append_dup(&2, &"0".to_string()); // sorts before "a"
    /// assert!(matches!(late, Err(tabula::Error::AppendDupOutOfOrder { .. })));
    /// let again = appender.append_dup(&2, &"a".to_string()); // equal to the last value
    /// assert!(matches!(again, Err(tabula::Error::AppendDupOutOfOrder { .. })));
    /// drop(appender);
    /// assert_eq!(tx.len::<Topics>()?, 3);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::AppendDupOutOfOrder`] naming the key, the value and the key's last value when
    /// the value does not sort after it (an equal value included); otherwise as
    /// [`append`](Appender::append).
    pub fn append_dup(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
    ) -> Result<()>
    where
        T: DupSort,
    {
        self.put(key, value, put::APPENDDUP_STRICT)
    }

    #[inline]
    fn put(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &T::Value,
        flags: u32,
    ) -> Result<()> {
        let Appender {
            cursor,
            scratch,
            shared,
            ..
        } = self;
        with_key::<T, _, _>(key, |k| {
            let v =
                <T::Codec as Value>::encode(value, scratch).map_err(|source| Error::Encode {
                    table: T::NAME,
                    key: KeyHex::new(k),
                    source,
                })?;
            put_stored::<T>(cursor, shared, k, v, flags)
        })
    }

    /// Appends an entry whose value is `value`'s bytes as they are, for a table whose codec
    /// stores bytes as given (`codec = Raw`, or another [`AnyBytes`] codec):
    /// [`append`](Appender::append) for a `&[u8]`, with no `Vec<u8>` built first. The key must
    /// sort after every key in the table, as for `append`.
    ///
    /// ```
    /// # use tabula::{Options, Raw, Schema, Table};
    /// # #[derive(Table)]
    /// # #[table(key = Vec<u8>, value = Vec<u8>, codec = Raw)]
    /// # struct Blobs;
    /// # #[derive(Schema)]
    /// # struct App(Blobs);
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = tabula::open::<App>(dir.path(), Options::new())?;
    /// let rows: [(&[u8], &[u8]); 2] = [(b"a", b"first"), (b"b", b"second")];
    /// let mut tx = db.write()?;
    /// let mut appender = tx.appender::<Blobs>()?;
    /// for (key, value) in rows {
    ///     appender.append_bytes(key, value)?; // both borrowed: nothing copied before the page
    /// }
    /// let late = appender.append_bytes(&b"a"[..], b"again");
    /// assert!(matches!(late, Err(tabula::Error::AppendOutOfOrder { .. })));
    /// drop(appender);
    /// assert_eq!(tx.get_bytes::<Blobs>(&b"b"[..])?, Some(&b"second"[..]));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`append`](Appender::append).
    #[inline]
    pub fn append_bytes(&mut self, key: &(impl AsKey<T::Key> + ?Sized), value: &[u8]) -> Result<()>
    where
        T::Codec: AnyBytes,
    {
        let Appender { cursor, shared, .. } = self;
        with_key::<T, _, _>(key, |k| {
            put_stored::<T>(cursor, shared, k, value, put::APPEND_STRICT)
        })
    }
}

/// Writes the stored key and value bytes `k`, `v` with an append flag, mapping libmdbx's
/// refusals to Tabula's errors (the appender's `append`, `append_dup` and `append_bytes`).
#[inline]
fn put_stored<T: Table>(
    cursor: &mut RawWriteCursor<'_>,
    shared: &Shared,
    k: &[u8],
    v: &[u8],
    flags: u32,
) -> Result<()> {
    match cursor.put(k, v, flags) {
        Ok(()) => Ok(()),
        Err(code) if code == Code::EKEYMISMATCH || code == Code::KEYEXIST => {
            Err(if flags == put::APPENDDUP_STRICT {
                append_dup_out_of_order::<T>(cursor, k, v)
            } else {
                append_out_of_order::<T>(cursor, k)
            })
        }
        Err(code) => Err(shared.fail(code, At::of::<T>("append").entry(k, v.len()))),
    }
}

/// The error for an append of `key` that libmdbx refused as out of order (`MDBX_EKEYMISMATCH`,
/// or `MDBX_KEYEXIST` for an equal key), naming the table's last key.
#[cold]
pub(crate) fn append_out_of_order<T: Table>(cursor: &mut RawWriteCursor<'_>, key: &[u8]) -> Error {
    let last = cursor
        .get(op::LAST)
        .ok()
        .flatten()
        .map(|(lk, _)| KeyHex::new(lk));
    Error::AppendOutOfOrder {
        table: T::NAME,
        key: KeyHex::new(key),
        last,
    }
}

/// The error for an `append_dup` of `(key, value)` that libmdbx refused as out of order,
/// naming the key's last value.
#[cold]
pub(crate) fn append_dup_out_of_order<T: Table>(
    cursor: &mut RawWriteCursor<'_>,
    key: &[u8],
    value: &[u8],
) -> Error {
    let last = match cursor.get_at(op::SET_KEY, Some(key)) {
        Ok(Some(_)) => cursor
            .get_at(op::LAST_DUP, None)
            .ok()
            .flatten()
            .map(|(_, lv)| KeyHex::new(lv)),
        _ => None,
    };
    Error::AppendDupOutOfOrder {
        table: T::NAME,
        key: KeyHex::new(key),
        value: KeyHex::new(value),
        last,
    }
}
