//! The bulk appender: one write cursor that appends in increasing key order.

use std::marker::PhantomData;

use crate::codec::AsKey;
use crate::engine::{RawWriteCursor, put};
use crate::error::Result;
use crate::pipeline::{self, Landing};
use crate::state::Shared;
use crate::stored::{encode_value, with_key};
use crate::table::{DupSort, Table, ValueOf};

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
    /// [`Error::AppendOutOfOrder`](crate::Error::AppendOutOfOrder) naming the key and the last key when it does not;
    /// [`Error::TooLarge`](crate::Error::TooLarge), [`Error::MapFull`](crate::Error::MapFull), [`Error::DiskFull`](crate::Error::DiskFull), [`Error::Encode`](crate::Error::Encode),
    /// [`Error::Mdbx`](crate::Error::Mdbx).
    #[inline]
    pub fn append(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
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
    /// [`Error::AppendDupOutOfOrder`](crate::Error::AppendDupOutOfOrder) naming the key, the value and the key's last value when
    /// the value does not sort after it (an equal value included); otherwise as
    /// [`append`](Appender::append).
    pub fn append_dup(
        &mut self,
        key: &(impl AsKey<T::Key> + ?Sized),
        value: &(impl ValueOf<T> + ?Sized),
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
        value: &(impl ValueOf<T> + ?Sized),
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
            let indexed = pipeline::indexed::<T>(shared);
            let row = value.as_item();
            let mut landing = Landing::Unmoved;
            pipeline::put::<T>(
                cursor,
                shared,
                indexed,
                (k, v),
                row,
                flags,
                "append",
                &mut landing,
            )
        })
    }
}
