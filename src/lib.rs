//! Tabula: typed tables on libmdbx.
//!
//! (The user manual lands here; see README.md.)

// Lets the derives' `::tabula::..` paths resolve inside this crate too (unit tests, examples).
extern crate self as tabula;

pub use tabula_core::*;
pub use tabula_derive::{Key, Schema, Table};

/// Items the derive macros expand to. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use tabula_core::__private::*;
}
