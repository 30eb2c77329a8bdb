//! The startup path: the one transaction that opens, creates and verifies every table of a
//! schema before its [`Db`](crate::Db) is published. By concept:
//!
//! - [`Bootstrap`] (`bootstrap.rs`): the startup transaction, with tables reached by name and
//!   read and written as bytes. The migration steps of `tabula-migrate` run in it, and so do
//!   tools that work without a schema. Its meta table and the schema record it keeps are in
//!   `meta.rs`, the zstd dictionaries it stores in `dictionaries.rs`, and the conversions of a
//!   typed table's keys and values to the bytes it stores ([`encode_stored_key`] and the like)
//!   in `conversions.rs`.
//! - [`open`] (`open.rs`): the startup path itself, in named phases, with the [`Upgrade`] hook
//!   through which `tabula-migrate` runs its steps, and [`data_file`], where a database keeps
//!   its data; the index builds it runs are in `indexes.rs`. The application's ways in
//!   (`tabula::open`, `open_with_report`, `open_with`) are in `entry.rs`, and the migration
//!   history check and upgrade protocol every hook runs ([`upgrade`], [`NoSteps`]) in
//!   `history.rs`.
//! - The schema checks (`check.rs`): [`declare`] before the file is opened, then
//!   [`check_table`] ([`check_flags`], [`check_record`]) for every table that exists.
//!   `tabula-migrate`'s `plan` runs the same checks to list what an open would refuse.

mod bootstrap;
mod check;
mod conversions;
mod dictionaries;
pub(crate) mod entry;
mod history;
mod indexes;
mod meta;
mod open;

pub use bootstrap::{Bootstrap, ExistingTable, META_TABLE, TableHandle, is_reserved};
pub use check::{check_flags, check_record, check_table, declare, describe_flag_bits};
pub use conversions::{
    convert_history_value, decode_stored_key, decode_stored_value, encode_stored_key,
    encode_stored_value,
};
pub use history::{
    DeclaredStep, NoSteps, nothing_pending, pending_steps, read_legacy_progress, resume_state,
    target_version, upgrade,
};
pub(crate) use meta::parse_record;
pub use open::{Report, Upgrade, data_file, open};
