//! Tabula: typed tables on libmdbx.
//!
//! (The user manual lands here; see README.md.)

pub use tabula_core::*;
pub use tabula_derive::{Key, Schema, Table};
pub use tabula_migrate::{Report, open, open_with_report, read_schema_record};

/// Items the derive macros expand to. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use tabula_core::__private::*;
}
