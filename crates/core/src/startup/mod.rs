//! The startup path: the one transaction that opens, creates and verifies every table of a
//! schema before its [`Db`](crate::Db) is published. Three parts:
//!
//! - [`Bootstrap`] (`bootstrap.rs`): the startup transaction, with tables reached by name and
//!   read and written as bytes ([`encode_stored_key`] and the like convert a typed table's
//!   keys and values), and the meta table's records. The migration steps of `tabula-migrate`
//!   run in it, and so do tools that work without a schema.
//! - [`open`] (`open.rs`): the startup path itself, with the [`Upgrade`] hook through which
//!   `tabula-migrate` runs its steps, and [`data_file`], where a database keeps its data.
//! - The schema checks (`check.rs`): [`declare`] before the file is opened, then
//!   [`check_table`] ([`check_flags`], [`check_record`]) for every table that exists.
//!   `tabula-migrate`'s `plan` runs the same checks to list what an open would refuse.

mod bootstrap;
mod check;
mod indexes;
mod open;

pub(crate) use bootstrap::parse_record;
pub use bootstrap::{
    Bootstrap, ExistingTable, META_TABLE, TableHandle, decode_stored_key, decode_stored_value,
    encode_stored_key, encode_stored_value, is_reserved,
};
pub use check::{check_flags, check_record, check_table, declare, describe_flag_bits};
pub use open::{Report, Upgrade, data_file, open};
