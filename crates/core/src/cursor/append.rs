//! The bulk appender: one write cursor that appends in increasing key order, and the errors
//! for an out-of-order append (also used by the bulk load).

use std::marker::PhantomData;

use crate::codec::{AsKey, AsValue};
use crate::db::state::Shared;
use crate::engine::{Code, RawWriteCursor, op, put};
use crate::error::{At, Error, KeyHex, Result};
use crate::index;
use crate::stored::{encode_value, with_key};
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
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
    pub fn append(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl AsValue<T::Codec> + ?Sized),
    ) -> Result<()> {
        self.put(key, value, put::APPEND_STRICT)
    }

    /// In a `dupsort` table, appends `value` as the new greatest value of `key`: it must sort
    /// after every value the key has (a key without values takes any).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
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
        value: &(impl AsValue<T::Codec> + ?Sized),
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
        value: &(impl AsValue<T::Codec> + ?Sized),
        flags: u32,
    ) -> Result<()> {
        let Appender {
            cursor,
            scratch,
            shared,
            ..
        } = self;
        with_key::<T, _, _>(key, |k| {
            let v = encode_value::<T, _>(k, value, scratch)?;
            if index::cursor_indexed::<T>(shared) {
                return put_indexed::<T>(cursor, shared, k, v, value.as_item(), flags);
            }
            match cursor.put(k, v, flags) {
                Ok(()) => {
                    shared.watch.put::<T>(k, v);
                    Ok(())
                }
                Err(code) => Err(put_error::<T>(cursor, shared, k, v, flags, code)),
            }
        })
    }
}

/// [`Appender`]'s write for a table with indexes: its index entries checked before the append
/// and written after it. Apart from the plain path, which folds it away for a table declared
/// without `indexed`.
#[inline(never)]
fn put_indexed<T: Table>(
    cursor: &mut RawWriteCursor<'_>,
    shared: &Shared,
    k: &[u8],
    v: &[u8],
    row: Option<&T::Value>,
    flags: u32,
) -> Result<()> {
    let changes = index::prepare::<T>(cursor, shared, cursor.dbi(), k, v, row, flags, "append")?;
    match cursor.put(k, v, flags) {
        Ok(()) => {
            shared.watch.put::<T>(k, v);
            index::apply(cursor, shared, &changes)
        }
        Err(code) => Err(put_error::<T>(cursor, shared, k, v, flags, code)),
    }
}

/// The error for an appender's write that libmdbx refused with `code`.
#[cold]
#[inline(never)]
fn put_error<T: Table>(
    cursor: &mut RawWriteCursor<'_>,
    shared: &Shared,
    k: &[u8],
    v: &[u8],
    flags: u32,
    code: Code,
) -> Error {
    if code == Code::EKEYMISMATCH || code == Code::KEYEXIST {
        if flags == put::APPENDDUP_STRICT {
            append_dup_out_of_order::<T>(cursor, k, v)
        } else {
            append_out_of_order::<T>(cursor, k)
        }
    } else {
        shared.fail(code, At::of::<T>("append").entry(k, v.len()))
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
