//! Derive macros for Tabula: `#[derive(Table)]`, `#[derive(Schema)]` and `#[derive(Key)]`.
//!
//! Use them through the `tabula` crate, which re-exports them next to the traits they implement;
//! the generated code names only `::tabula::..` and `::core::..` paths.
//!
//! # `#[tabula(crate = path)]`
//!
//! Every derive also reads `#[tabula(crate = path)]`, the path its code names Tabula by, for code
//! that does not see Tabula as `::tabula`: Tabula's own crates (`crate = crate` inside
//! `tabula-core`, `crate = tabula_core` in crates that depend on it alone), or a crate that
//! re-exports Tabula under another name (`crate = my_db::tabula`). The path is written bare, as
//! `#[table(..)]` takes its types, or in a string, as serde's `#[serde(crate = "..")]` takes it:
//!
//! ```text
//! use tabula_core::Table;
//! use tabula_derive::Table;
//!
//! #[derive(Table)]
//! #[tabula(crate = tabula_core)]
//! #[table(key = u64, value = String)]
//! struct Notes;
//! ```
//!
//! It has an attribute of its own rather than a key of `#[table(..)]` because it belongs to every
//! derive, and `#[derive(Schema)]` and `#[derive(Key)]` have no other attribute; the attribute is
//! named after the crate, as serde's is.
//!
//! Each derive runs the same stages: `attr` parses `#[table(..)]`, `ast` reads the input's
//! shape, `check` applies the rules that need the whole declaration, and `expand` generates the
//! impls, or, when there were mistakes, every error at once plus a stub from `fallback`.

#![forbid(unsafe_code)]

mod ast;
mod attr;
mod check;
mod ctxt;
mod dupsort;
mod expand;
mod fallback;
mod history;
mod index;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Declares a table: a unit struct whose `#[table(..)]` attribute names its key and value types.
///
/// ```text
/// use tabula::Table;
///
/// #[derive(Table)]
/// #[table(key = u64, value = Header)] // the name defaults to the type's: "Headers"
/// pub struct Headers;
///
/// #[derive(Table)]
/// #[table(name = "storage", key = Address, subkey = Slot, value = U256, dupsort)]
/// pub struct Storage;
/// ```
///
/// Keys of `#[table(..)]`:
///
/// | key | meaning |
/// |---|---|
/// | `key = K` | the key type; `K: tabula::Key` (required) |
/// | `value = V` | the value type (required) |
/// | `name = "..."` | the table's name in the file (default: the struct's name); names starting with `__tabula` are reserved |
/// | `codec = C` | the value codec, `C: tabula::Value<Item = V>` (default: `tabula::Bincode<V>`, which needs `V: Serialize + DeserializeOwned`) |
/// | `dupsort` | several values per key (`MDBX_DUPSORT`), stored in an order-preserving encoding: `V` must be a `tabula::OrderedValue` (a key type), and `codec` is not allowed |
/// | `subkey = S` | with `dupsort`: the values are `(S, V)` pairs, stored as `S`'s key encoding then `V` in its codec, sorted and sought by `S` |
/// | `integer_key` | native-endian integer keys (`MDBX_INTEGERKEY`); `K` must be `u32` or `u64` |
/// | `value_version = N` | the version of the stored values (`N ≥ 1`): raise it, with a migration step, when the values change in a way their structure does not show; required when the value type's structure cannot be traced |
///
/// The derive implements `tabula::Table` (and its seal, `__private::ImplementedByDeriveTableOnly`:
/// `Table` is not meant to be implemented by hand), with the name, flags, types, the value type
/// as written (`VALUE_TYPE`, shown in the schema record), the value version and the struct's
/// path (`RUST_NAME`, for messages) as constants. Mistakes are compile errors pointing at the
/// offending token: an unknown or repeated key, a missing `key`/`value`, a `name` that is not a
/// string literal or is reserved, a `value_version` that is not a number of at least 1, a key
/// type that is not a `Key`, a value type the codec cannot encode.
///
/// With `dupsort` it also implements `tabula::DupSort` (and, with `subkey`, `tabula::HasSubKey`),
/// which the dup operations require.
///
/// `#[tabula(crate = path)]` names Tabula by another path (see the crate docs).
#[proc_macro_derive(Table, attributes(table, tabula))]
pub fn derive_table(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_table(&input).into()
}

/// Declares a schema: a tuple struct listing the tables opened together.
///
/// ```text
/// use tabula::Schema;
///
/// #[derive(Schema)]
/// pub struct Chain(Headers, Storage, other_crate::Receipts); // table IDs 0, 1, 2
/// ```
///
/// Each table's position is its ID, fixed at compile time. The derive implements
/// `tabula::Schema` (`TABLES`: every table's `TableInfo`, in ID order) and, for each table `T`,
/// `tabula::Contains<T>` with `ID` = its position, so typed calls only compile for tables of the
/// schema. Tables may come from other crates, and one table type may belong to several schemas.
///
/// Listing one table type twice is a derive error at the second occurrence; two distinct tables
/// with the same name fail to compile with an error at the later one.
///
/// `#[tabula(crate = path)]` names Tabula by another path (see the crate docs).
#[proc_macro_derive(Schema, attributes(tabula))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_schema(&input).into()
}

/// Declares a secondary index on a table declared `#[table(.., indexed)]`: a unit struct whose
/// `#[index(..)]` attribute names the source table, the index key type and the function that
/// computes a row's keys.
///
/// ```text
/// use tabula::{Index, Table};
///
/// #[derive(Table)]
/// #[table(key = u64, value = Transfer, indexed)]
/// pub struct Transfers;
///
/// #[derive(Index)]
/// #[index(on = Transfers, key = Address, by = sender)] // several transfers per sender
/// pub struct BySender;
///
/// fn sender(_id: &u64, transfer: &Transfer) -> Address {
///     transfer.from
/// }
/// ```
///
/// Keys of `#[index(..)]`:
///
/// | key | meaning |
/// |---|---|
/// | `on = T` | the source table; `T` must be declared `indexed` (required) |
/// | `key = K` | the index key type; `K: tabula::Key` (required) |
/// | `by = f` | a function `fn(&T::Key, &T::Value) -> R` with `R` one of `K`, `Option<K>` (`None`: no entry), `Vec<K>` (several entries) (required); it runs before the write changes anything, so if it panics the panic reaches the caller and the write has changed nothing |
/// | `unique` | an index key belongs to one row at most; a write that breaks it fails |
/// | `name = "..."` | the index table's name in the file (default: the struct's name) |
/// | `version = N` | the version of how keys are computed: raise it when `by` changes, and the startup step rebuilds the index |
///
/// The derive implements `tabula::Table` for the index (its table: index key → primary key,
/// `dupsort` unless `unique`), `tabula::Index` and, with `unique`, `tabula::Unique`. List the
/// index in `#[derive(Schema)]` next to its source table.
///
/// `#[tabula(crate = path)]` names Tabula by another path (see the crate docs).
#[proc_macro_derive(Index, attributes(index, tabula))]
pub fn derive_index(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    index::derive(&input).into()
}

/// Declares the history of a table declared `#[table(.., history)]`: a unit struct whose
/// `#[history(on = T)]` attribute names the table. Every change of `T`'s rows is recorded in it,
/// with the version of the write transaction that made it (`Tx::set_version`) and the value
/// before it, so `T` can be read as of a version and unwound.
///
/// ```text
/// use tabula::{History, Table};
///
/// #[derive(Table)]
/// #[table(key = Address, value = Account, history)]
/// pub struct Accounts;
///
/// #[derive(History)]
/// #[history(on = Accounts)]
/// pub struct AccountsHistory;
/// ```
///
/// Keys of `#[history(..)]`:
///
/// | key | meaning |
/// |---|---|
/// | `on = T` | the table; `T` must be declared `history` (required) |
/// | `name = "..."` | the history table's name in the file (default: the struct's name) |
///
/// The derive implements `tabula::Table` for the history (a table of stored bytes whose layout
/// Tabula owns: not writable, read through the as-of reads) and `tabula::History`. List it in
/// `#[derive(Schema)]` next to its table.
///
/// `#[tabula(crate = path)]` names Tabula by another path (see the crate docs).
#[proc_macro_derive(History, attributes(history, tabula))]
pub fn derive_history(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    history::derive(&input).into()
}

/// Declares a composite key: a struct whose fields, in declaration order, are the key's parts.
///
/// ```text
/// use tabula::Key;
///
/// #[derive(Key, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
/// pub struct BlockTx {
///     block: u64, // sorts first
///     index: u32, // then by this
/// }
/// ```
///
/// The key is stored as its fields' encodings concatenated in declaration order, so the byte
/// order of stored keys is the order of the fields compared one after another. That is the order
/// `#[derive(PartialOrd, Ord)]` gives when the fields are in the same order, and `tabula::Key`
/// requires `Ord`: derive both, and do not hand-write an `Ord` that compares fields in another
/// order, or range scans will disagree with it.
///
/// The derive implements `tabula::AsKey<Self>`, `tabula::Key` (a `Descriptor::Struct` naming the
/// fields; a fixed size when every field has one), `tabula::AsPrefix<Self>` for each proper
/// prefix of the fields (the first field's type — and `str` or `[u8]` for a `String` or
/// `Vec<u8>` first field — then tuples of the first 1, 2, .. field types), for prefix scans,
/// `tabula::AsPrefix<(Self, ..)>`, so the struct is a prefix of the tuple keys it begins, and
/// `tabula::OrderedValue`, so the struct can be the value of a `dupsort`
/// table. Every field type must be a `tabula::Key`. Generic structs are not supported.
///
/// `#[tabula(crate = path)]` names Tabula by another path (see the crate docs).
#[proc_macro_derive(Key, attributes(tabula))]
pub fn derive_key(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_key(&input).into()
}
