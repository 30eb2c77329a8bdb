//! The untyped codecs: keys and values whose types are known only at run time, encoded and
//! decoded along a shape read from the schema record ([`KeyShape`] and [`DynKey`] in `key.rs`,
//! [`ValueShape`] and [`DynValue`] in `value.rs`).
//!
//! They write the bytes the typed codecs write, through the same part encoders, so they sit
//! beside them. Their public home is [`crate::untyped`], the schema-less API, which re-exports
//! them: "untyped" is the one word for access without the application's types.

mod key;
mod value;

pub use key::{DynKey, KeyShape};
pub use value::{DynValue, ValueShape};
// The JSON forms of the schema-less API (`untyped/json.rs`) walk a value shape.
pub(crate) use value::{Repr as ValueRepr, key_value, value_key};
