//! Keys and values as a table stores them: the typed codecs' bytes, native-endian for
//! `integer_key` tables, and decode errors that name the table and key. Shared by every typed
//! path (transactions, cursors, iterators, the appender, the bulk load, migrations).

use crate::codec::{AsKey, Key, Value};
use crate::engine::Dbi;
use crate::error::{Error, KeyHex, Part, Result};
use crate::state::Db;
use crate::table::{Contains, Table};

/// The handle of table `T` in `db`: an array index by a compile-time constant.
#[inline]
pub(crate) fn dbi_of<S: Contains<T>, T: Table>(db: &Db<S>) -> Dbi {
    db.shared.dbis[<S as Contains<T>>::ID]
}

/// Encodes `key` in the form libmdbx stores for table `T` and hands the bytes to `f`.
///
/// `integer_key` tables store native-endian integers; every other table the order-preserving
/// form. The branch is on a constant and folds away.
#[inline]
pub(crate) fn with_key<T: Table, Q: AsKey<T::Key> + ?Sized, R>(
    key: &Q,
    f: impl FnOnce(&[u8]) -> R,
) -> R {
    let enc = key.encode();
    let bytes = enc.as_ref();
    if T::FLAGS.integer_key {
        let mut native = [0u8; 8];
        let n = bytes.len().min(8);
        native[..n].copy_from_slice(&bytes[..n]);
        if cfg!(target_endian = "little") {
            native[..n].reverse();
        }
        f(&native[..n])
    } else {
        f(bytes)
    }
}

/// Decodes a stored key of table `T`.
#[inline]
pub(crate) fn decode_key<T: Table>(stored: &[u8]) -> Result<T::Key> {
    let result = if T::FLAGS.integer_key && cfg!(target_endian = "little") && stored.len() <= 8 {
        let mut ordered = [0u8; 8];
        let n = stored.len();
        ordered[..n].copy_from_slice(stored);
        ordered[..n].reverse();
        <T::Key as Key>::decode(&ordered[..n])
    } else {
        <T::Key as Key>::decode(stored)
    };
    result.map_err(|source| Error::Decode {
        table: T::NAME,
        part: Part::Key,
        key: KeyHex::new(stored),
        source,
    })
}

/// Decodes a stored value of table `T`.
#[inline]
pub(crate) fn decode_value<T: Table>(stored_key: &[u8], stored: &[u8]) -> Result<T::Value> {
    <T::Codec as Value>::decode(stored).map_err(|source| Error::Decode {
        table: T::NAME,
        part: Part::Value,
        key: KeyHex::new(stored_key),
        source,
    })
}
