//! Keys and values as a table stores them: the typed codecs' bytes, native-endian for
//! `integer_key` tables, and decode errors that name the table and key. Shared by every typed
//! path (transactions, cursors, iterators, the appender, the bulk load, migrations).

use std::cmp::Ordering;

use crate::codec::{AsKey, AsValue, Key, KeyBuf, Value, ValueRef, encode_subkeyed};
use crate::engine::{Code, Dbi, RawTxn};
use crate::error::{At, Error, KeyHex, Part, Result};
use crate::state::Db;
use crate::table::{Contains, DupSort, HasSubKey, Table};

/// The handle of table `T` in `db`: an array index by a compile-time constant.
#[inline]
pub(crate) fn dbi_of<S: Contains<T>, T: Table>(db: &Db<S>) -> Dbi {
    db.shared.dbis()[<S as Contains<T>>::ID]
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

/// Reads the value stored under `key` in table `T` through `raw` and hands it, with the
/// encoded key (which decode errors name), to `found`: the one lookup behind every transaction's
/// `get`, `get_bytes`, `get_ref` and `contains_key`. A libmdbx failure is an error naming the
/// table and the key.
#[inline]
pub(crate) fn lookup<'t, S: Contains<T>, T: Table, R>(
    db: &Db<S>,
    raw: &'t RawTxn,
    key: &(impl AsKey<T::Key> + ?Sized),
    found: impl FnOnce(&[u8], Option<&'t [u8]>) -> Result<R>,
) -> Result<R> {
    let dbi = dbi_of::<S, T>(db);
    with_key::<T, _, _>(key, |k| {
        let v = raw
            .get(dbi, k)
            .map_err(|code| db.shared.fail(code, At::of::<T>("get").key(k)))?;
        found(k, v)
    })
}

/// Decodes a stored key of table `T`.
#[inline(always)]
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
#[inline(always)]
pub(crate) fn decode_value<T: Table>(stored_key: &[u8], stored: &[u8]) -> Result<T::Value> {
    <T::Codec as Value>::decode(stored).map_err(|source| Error::Decode {
        table: T::NAME,
        part: Part::Value,
        key: KeyHex::of::<T>(stored_key),
        source,
    })
}

/// Decodes a stored value of table `T` in place, borrowing the stored bytes.
#[inline]
pub(crate) fn decode_value_ref<'v, T: Table>(
    stored_key: &[u8],
    stored: &'v [u8],
) -> Result<<T::Codec as ValueRef>::Ref<'v>>
where
    T::Codec: ValueRef,
{
    <T::Codec as ValueRef>::decode_ref(stored).map_err(|source| Error::Decode {
        table: T::NAME,
        part: Part::Value,
        key: KeyHex::of::<T>(stored_key),
        source,
    })
}

/// Decodes a stored entry of table `T`.
#[inline(always)]
pub(crate) fn decode_entry<T: Table>(key: &[u8], value: &[u8]) -> Result<(T::Key, T::Value)> {
    Ok((decode_key::<T>(key)?, decode_value::<T>(key, value)?))
}

/// A cursor operation of table `T` that libmdbx failed.
#[cold]
pub(crate) fn cursor_error<T: Table>(op: &'static str, code: Code) -> Error {
    Error::Mdbx {
        table: T::NAME,
        op,
        key: None,
        code: code.into(),
    }
}

/// Compares stored keys of table `T` in the table's order: as integers for `integer_key`
/// tables (native-endian), as bytes otherwise.
#[inline]
pub(crate) fn cmp_keys<T: Table>(a: &[u8], b: &[u8]) -> Ordering {
    if T::FLAGS.integer_key && a.len() == b.len() && a.len() <= 8 {
        let mut x = [0u8; 8];
        let mut y = [0u8; 8];
        x[..a.len()].copy_from_slice(a);
        y[..b.len()].copy_from_slice(b);
        u64::from_ne_bytes(x).cmp(&u64::from_ne_bytes(y))
    } else {
        a.cmp(b)
    }
}

/// Encodes `subkey` as the front of the stored values of dupsort table `T` it selects, and hands
/// the bytes to `f`: a subkey in its self-delimiting form (every stored value with that subkey
/// starts with these bytes, and sorts after them), a plain dupsort table's value whole.
#[inline]
pub(crate) fn with_subkey<T: DupSort, Q: AsKey<T::SubKey> + ?Sized, R>(
    subkey: &Q,
    f: impl FnOnce(&[u8]) -> R,
) -> R {
    // A fixed-size encoding is the same in every position, so the whole-key form (on the stack
    // or borrowed) serves for a subkey too; the branch is on constants.
    if T::HAS_SUBKEY && <T::SubKey as Key>::FIXED_SIZE.is_none() {
        let mut front = KeyBuf::new();
        subkey.encode_part(&mut front, false);
        f(front.as_slice())
    } else {
        f(subkey.encode().as_ref())
    }
}

/// Whether the stored value `stored` of dupsort table `T` has the subkey whose encoding
/// ([`with_subkey`]) is `subkey`.
#[inline]
pub(crate) fn has_subkey<T: DupSort>(stored: &[u8], subkey: &[u8]) -> bool {
    if T::HAS_SUBKEY {
        // The subkey's encoding is self-delimiting: no other subkey's starts with it.
        stored.starts_with(subkey)
    } else {
        stored == subkey
    }
}

/// Encodes the value `(subkey, value)` of table `T` (which has a subkey) as the table stores it.
#[inline]
pub(crate) fn encode_subkey_value<'a, T: HasSubKey>(
    stored_key: &[u8],
    subkey: &(impl AsKey<T::SubKey> + ?Sized),
    value: &'a T::SubValue,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    encode_subkeyed::<T::SubKey, T::SubCodec>(subkey, value, scratch).map_err(|source| {
        Error::Encode {
            table: T::NAME,
            key: KeyHex::of::<T>(stored_key),
            source,
        }
    })
}

/// Encodes a value of table `T` (or a borrowed form of it) with its codec.
#[inline]
pub(crate) fn encode_value<'a, T: Table, Q: AsValue<T::Codec> + ?Sized>(
    stored_key: &[u8],
    value: &'a Q,
    scratch: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    value.encode_value(scratch).map_err(|source| Error::Encode {
        table: T::NAME,
        key: KeyHex::of::<T>(stored_key),
        source,
    })
}
