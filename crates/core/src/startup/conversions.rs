//! The stored form of a typed table's keys and values: what the raw methods of a
//! [`Bootstrap`](super::Bootstrap) take and return, for code that knows the table's type (the
//! typed operations of migration steps).

#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::table::Table;

/// The bytes table `T` stores for `key`: its key encoding ([`Key`](crate::codec::Key)), or the
/// native-endian integer of an `integer_key` table.
///
/// ```
/// use tabula::Table;
/// use tabula_core::startup::{decode_stored_key, encode_stored_key};
///
/// #[derive(Table)]
/// #[table(key = u32, value = String)]
/// struct Names;
/// #[derive(Table)]
/// #[table(key = u32, value = String, integer_key)]
/// struct Ids;
///
/// assert_eq!(encode_stored_key::<Names>(&1), [0, 0, 0, 1]); // big-endian: sorts as bytes
/// assert_eq!(encode_stored_key::<Ids>(&1), 1u32.to_ne_bytes());
/// assert_eq!(decode_stored_key::<Ids>(&1u32.to_ne_bytes())?, 1);
/// # Ok::<(), tabula::Error>(())
/// ```
pub fn encode_stored_key<T: Table>(key: &T::Key) -> Vec<u8> {
    crate::stored::with_key::<T, _, _>(key, <[u8]>::to_vec)
}

/// Decodes a key of table `T` from the bytes the table stores ([`encode_stored_key`]).
///
/// ```
/// use tabula::Table;
/// use tabula_core::startup::decode_stored_key;
///
/// #[derive(Table)]
/// #[table(key = u32, value = String)]
/// struct Names;
///
/// assert_eq!(decode_stored_key::<Names>(&[0, 0, 0, 7])?, 7);
/// assert!(decode_stored_key::<Names>(&[7]).is_err());
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Decode`] naming the table and key when the bytes are not a key of `T`.
pub fn decode_stored_key<T: Table>(stored: &[u8]) -> Result<T::Key> {
    crate::stored::decode_key::<T>(stored)
}

/// The bytes table `T` stores for `value` under the stored key `key` (which errors name): the
/// value encoded with the table's codec.
///
/// ```
/// use tabula::Table;
/// use tabula_core::startup::{decode_stored_value, encode_stored_key, encode_stored_value};
///
/// #[derive(Table)]
/// #[table(key = u32, value = String)]
/// struct Names;
///
/// let key = encode_stored_key::<Names>(&1);
/// let bytes = encode_stored_value::<Names>(&key, &"ada".to_string())?;
/// assert_eq!(decode_stored_value::<Names>(&key, &bytes)?, "ada");
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Encode`] naming the table and key when the codec refuses the value.
pub fn encode_stored_value<T: Table>(key: &[u8], value: &T::Value) -> Result<Vec<u8>> {
    let mut scratch = Vec::new();
    crate::stored::encode_value::<T, _>(key, value, &mut scratch).map(<[u8]>::to_vec)
}

/// Decodes a value of table `T`, stored under the stored key `key` (which errors name), from
/// the bytes the table stores ([`encode_stored_value`]).
///
/// ```
/// use tabula::Table;
/// use tabula_core::startup::decode_stored_value;
///
/// #[derive(Table)]
/// #[table(key = u32, value = String)]
/// struct Names;
///
/// // bincode: the length, then the bytes.
/// assert_eq!(decode_stored_value::<Names>(b"k", &[2, b'h', b'i'])?, "hi");
/// assert!(decode_stored_value::<Names>(b"k", &[5, b'h']).is_err());
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Decode`] naming the table and key when the bytes are not a value of `T`.
pub fn decode_stored_value<T: Table>(key: &[u8], stored: &[u8]) -> Result<T::Value> {
    crate::stored::decode_value::<T>(key, stored)
}
