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

/// The value of an entry of a history table (`#[derive(History)]`) with the value before the
/// change it records converted by `convert`, which is given the change's version, the stored key
/// and the stored value before (both as the history's source table stores them) and returns the
/// new stored value:
/// for a migration step that changes the source table's value type and takes its history along.
/// `source` is the schema record of the history's source table, whose key descriptor says how
/// the history writes its keys (as they are when they have a fixed width, escaped otherwise).
/// `Some(new entry value)` for a change that records a value before; `None` for every other
/// entry of the history (a change of a key that held no value, a mark, a log entry, the
/// horizon, the last version, the start mark), which such a conversion leaves as it is. The
/// layout is in docs/design.md, "History and unwind".
///
/// ```
/// use tabula::{History, Options, Schema, Table};
/// use tabula_core::startup::{
///     Bootstrap, convert_history_value, decode_stored_value, encode_stored_value,
/// };
/// use tabula_core::record::TableRecord;
/// use tabula_core::TableInfo;
///
/// #[derive(Table)]
/// #[table(name = "counts", key = u64, value = u64, history)]
/// struct Counts;
/// #[derive(History)]
/// #[history(on = Counts, name = "counts_history")]
/// struct CountsHistory;
/// #[derive(Schema)]
/// struct App(Counts, CountsHistory);
///
/// # fn main() -> tabula::Result<()> {
/// # let dir = tabula::__doc::temp_dir();
/// let db = tabula::open::<App>(dir.path(), Options::new())?;
/// for version in 1..=2 {
///     let mut tx = db.write()?;
///     tx.set_version(version);
///     tx.put::<Counts>(&7, &version)?;
///     tx.commit()?;
/// }
/// drop(db);
///
/// let source = TableRecord::of(&TableInfo::of::<Counts>());
/// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 0)?;
/// let history = boot.find_table("counts_history")?.expect("created by the open").handle;
/// let mut seen = Vec::new();
/// for (key, value) in boot.read_batch("counts_history", history, None, 100)? {
///     let converted = convert_history_value(&source, &key, &value, |version, stored, before| {
///         let n = decode_stored_value::<Counts>(stored, before)?;
///         seen.push((version, n));
///         encode_stored_value::<Counts>(stored, &(n * 100))
///     })?;
///     if let Some(converted) = converted {
///         boot.put_raw("counts_history", history, &key, &converted, false)?;
///     }
/// }
/// // Version 1 created the key (no value before it); version 2 changed its value 1.
/// assert_eq!(seen, [(2, 1)]);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// What `convert` returns; [`Error::Decode`](crate::Error::Decode) for a change whose key is
/// not of the source table's form.
pub fn convert_history_value(
    source: &crate::record::TableRecord,
    key: &[u8],
    value: &[u8],
    convert: impl FnOnce(u64, &[u8], &[u8]) -> Result<Vec<u8>>,
) -> Result<Option<Vec<u8>>> {
    crate::history::converted_before(crate::history::Form::of_record(source), key, value, convert)
}
