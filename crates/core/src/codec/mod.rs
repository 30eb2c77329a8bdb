//! Key and value codecs: how typed keys and values become the bytes libmdbx stores.
//!
//! Keys use an order-preserving encoding ([`Key`]), so the byte order libmdbx sorts by equals the
//! key type's [`Ord`]. Values use a [`Value`] codec: serde + bincode 2 by default ([`Bincode`]),
//! raw bytes ([`Raw`]), fixed-layout structs read in place ([`Pod`]), compressed values
//! (`Zstd`, with the `compression` feature), or one you write yourself.
//!
//! Each codec names its encoding with a [`Descriptor`](crate::schema::Descriptor) and reports
//! its values' structure as a [`ValueTrace`](crate::schema::ValueTrace) ([`crate::schema`]).
//! The same encodings driven by a shape known only at run time, for access without the
//! application's types, are the untyped codecs, public through [`crate::untyped`].

mod bincode_de;
mod bincode_ser;
mod borrowed;
mod dup;
mod key;
pub(crate) mod untyped;
mod value;
#[cfg(feature = "compression")]
mod zstd;
#[cfg(feature = "compression")]
mod zstd_dict;

pub use borrowed::{AnyBytes, Pod, ValueRef};
pub(crate) use dup::encode_subkeyed;
pub use dup::{Ordered, OrderedValue, SubKeyed};
pub use key::{AsKey, AsPrefix, IntegerKey, Key, KeyBuf, KeyRange};
pub(crate) use key::{decode_bytes_part, encode_bytes_part, encode_prefix};
pub use value::{AsValue, Bincode, Raw, Value};
#[cfg(feature = "compression")]
pub use zstd::Zstd;
#[cfg(feature = "compression")]
pub(crate) use zstd_dict::{
    DictionaryLease, check_name as check_dictionary_name, current_key as dictionary_current_key,
    dictionary_id, dictionary_key, dictionary_name, lease as lease_dictionaries,
};
#[cfg(feature = "compression")]
pub use zstd_dict::{
    StoredDictionaries, ZstdDict, ZstdDictCodec, ZstdDictionary, train_zstd_dictionary,
};

/// Without the `compression` feature there are no dictionaries to hold. (A braced struct with a
/// `Drop`, like the real lease, so the startup code reads the same with the feature off.)
#[cfg(not(feature = "compression"))]
#[derive(Debug, Default)]
pub(crate) struct DictionaryLease {}

#[cfg(not(feature = "compression"))]
impl Drop for DictionaryLease {
    fn drop(&mut self) {}
}

use std::fmt;

/// Bytes that could not be decoded into the expected type.
///
/// Carried inside [`Error::Decode`](crate::Error::Decode), which adds the table and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    message: String,
}

impl DecodeError {
    /// A decode error with a message saying what was wrong with the bytes.
    pub fn new(message: impl Into<String>) -> Self {
        DecodeError {
            message: message.into(),
        }
    }

    /// The input ended before `what` was complete.
    pub fn truncated(what: &str, needed: usize, had: usize) -> Self {
        DecodeError::new(format!("{what}: needed {needed} byte(s), only {had} left"))
    }

    /// The message, without the table and key that [`Error`](crate::Error) adds.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// A value that could not be encoded (for example a serde `Serialize` impl that failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    message: String,
}

impl EncodeError {
    /// An encode error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        EncodeError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EncodeError {}
