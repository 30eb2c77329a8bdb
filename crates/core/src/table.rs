//! Tables and schemas: the compile-time description of a database.

use crate::codec::{Key, Value};
use crate::schema::{Descriptor, ValueTrace};

/// A table: its name, flags, key type and value codec, all compile-time constants.
///
/// Implemented only by `#[derive(Table)]`: the trait is sealed by a hidden trait whose name says
/// so, so every table name in a program is a constant the schema can check at compile time. The
/// startup step checks names again when it runs (a reserved or repeated name is refused there
/// whatever implemented the trait).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a table",
    label = "not a table",
    note = "declare tables with `#[derive(Table)]` and `#[table(key = .., value = ..)]`"
)]
pub trait Table: crate::__private::ImplementedByDeriveTableOnly + 'static {
    /// The table's name in the database file.
    const NAME: &'static str;
    /// `dupsort` and `integer_key`.
    const FLAGS: TableFlags;
    /// The key type.
    type Key: Key;
    /// The value type read and written.
    type Value;
    /// How values become bytes ([`Bincode<Value>`](crate::Bincode) unless `codec = ..` is given).
    type Codec: Value<Item = Self::Value>;
    /// The value type's name as written in `#[table(value = ..)]`: recorded in the schema and
    /// shown in messages, not compared (a value type is identified by its structure).
    const VALUE_TYPE: &'static str;
    /// `#[table(value_version = N)]`: a version of the stored values that the declaration
    /// states. Changing it is a change of the table's values that needs a migration step, like
    /// a change of the value type's structure; a value type whose structure cannot be traced
    /// must have one (`None`: not stated, the same as 1).
    const VALUE_VERSION: Option<u32> = None;
    /// The table struct's path, `module::Name`, for messages.
    const RUST_NAME: &'static str = "";
}

/// The flags of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TableFlags {
    /// Several sorted values per key (`MDBX_DUPSORT`).
    pub dupsort: bool,
    /// Native-endian `u32`/`u64` keys compared as integers (`MDBX_INTEGERKEY`).
    pub integer_key: bool,
}

impl TableFlags {
    /// No flags.
    pub const NONE: TableFlags = TableFlags {
        dupsort: false,
        integer_key: false,
    };
}

impl std::fmt::Display for TableFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.dupsort, self.integer_key) {
            (false, false) => f.write_str("none"),
            (true, false) => f.write_str("dupsort"),
            (false, true) => f.write_str("integer_key"),
            (true, true) => f.write_str("dupsort, integer_key"),
        }
    }
}

/// What the schema record stores about one table, and what the startup step checks.
#[derive(Debug, Clone, Copy)]
pub struct TableInfo {
    /// The table's name in the file.
    pub name: &'static str,
    /// Its flags.
    pub flags: TableFlags,
    /// The key encoding.
    pub key: Descriptor,
    /// The value codec.
    pub value: Descriptor,
    /// The value type as written in the declaration.
    pub value_type: &'static str,
    /// The declared version of the stored values ([`Table::VALUE_VERSION`]).
    pub value_version: Option<u32>,
    /// The table struct's path ([`Table::RUST_NAME`]; empty when unknown).
    pub rust_name: &'static str,
    /// Traces the value codec's structure ([`Value::trace`]).
    pub value_trace: fn() -> ValueTrace,
}

impl PartialEq for TableInfo {
    /// Compares everything but `value_trace` (a function, determined by the codec, which the
    /// `value` descriptor and `value_type` already identify).
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.flags == other.flags
            && self.key == other.key
            && self.value == other.value
            && self.value_type == other.value_type
            && self.value_version == other.value_version
            && self.rust_name == other.rust_name
    }
}

impl Eq for TableInfo {}

impl TableInfo {
    /// The info of table `T`.
    pub const fn of<T: Table>() -> TableInfo {
        TableInfo {
            name: T::NAME,
            flags: T::FLAGS,
            key: if T::FLAGS.integer_key {
                match <T::Key as Key>::FIXED_SIZE {
                    Some(4) => Descriptor::NativeInteger(32),
                    _ => Descriptor::NativeInteger(64),
                }
            } else {
                <T::Key as Key>::DESCRIPTOR
            },
            value: <T::Codec as Value>::DESCRIPTOR,
            value_type: T::VALUE_TYPE,
            value_version: T::VALUE_VERSION,
            rust_name: T::RUST_NAME,
            value_trace: <T::Codec as Value>::trace,
        }
    }

    /// The table struct's name for messages and advice: the last segment of
    /// [`rust_name`](TableInfo::rust_name), or the table's name when that is unknown.
    ///
    /// ```
    /// use tabula::{Table, TableInfo};
    ///
    /// #[derive(Table)]
    /// #[table(name = "headers", key = u64, value = String)]
    /// struct Headers;
    ///
    /// let info = TableInfo::of::<Headers>();
    /// assert!(info.rust_name.ends_with("::Headers"));
    /// assert_eq!(info.rust_ident(), "Headers");
    /// ```
    pub fn rust_ident(&self) -> &'static str {
        match self.rust_name.rsplit("::").next() {
            Some(ident) if !ident.is_empty() => ident,
            _ => self.name,
        }
    }

    /// The key descriptor as stored in the schema record.
    pub fn key_descriptor(&self) -> String {
        self.key.to_string()
    }

    /// The value descriptor as stored in the schema record: codec and type, e.g. `bincode<Header>`.
    pub fn value_descriptor(&self) -> String {
        format!("{}<{}>", self.value, self.value_type)
    }
}

/// A set of tables opened together: implemented by `#[derive(Schema)]`, which assigns each listed
/// table its position as a dense ID at compile time.
pub trait Schema: 'static {
    /// The tables, in ID order.
    const TABLES: &'static [TableInfo];
}

/// Schema `Self` contains table `T`, at position [`ID`](Contains::ID).
///
/// Every typed call requires it, so using a table that is not in the schema does not compile.
#[diagnostic::on_unimplemented(
    message = "table `{T}` is not in schema `{Self}`",
    label = "`{T}` is not listed in `{Self}`",
    note = "add `{T}` to the tables of `#[derive(Schema)] struct {Self}(..)` so the startup step creates and opens it"
)]
pub trait Contains<T: Table>: Schema {
    /// The table's position in [`Schema::TABLES`], which indexes the handle array.
    const ID: usize;
}

/// Table names starting with this prefix are reserved for Tabula's own tables (the meta table).
pub const RESERVED_PREFIX: &str = "__tabula";

/// A `dupsort` table: several values per key, kept sorted. `#[derive(Table)]` implements it for
/// tables declared with `dupsort`, and the dup operations ([`dups`](crate::Reads::dups),
/// [`seek_dup`](crate::Reads::seek_dup), [`append_dup`](crate::Tx::append_dup), the cursors'
/// `next_dup`, ...) require it, so they do not compile on a table without `dupsort`.
///
/// A key's values are sorted and sought by the [`SubKey`](DupSort::SubKey): for a table declared
/// with `subkey = S` it is `S` (values are `(subkey, value)` pairs, stored with
/// [`SubKeyed`](crate::SubKeyed)); otherwise it is the value itself (stored with
/// [`Ordered`](crate::Ordered)).
#[diagnostic::on_unimplemented(
    message = "table `{Self}` is not a `dupsort` table",
    label = "declared without `dupsort`",
    note = "dup operations work on tables with several sorted values per key: declare `#[table(key = .., value = .., dupsort)]`, or `#[table(key = .., subkey = .., value = .., dupsort)]` for values sorted by a subkey"
)]
pub trait DupSort: Table + crate::__private::DupSealed {
    /// What the values of a key are sorted and sought by: the subkey of a table declared with
    /// `subkey = ..`, otherwise the value type.
    type SubKey: Key;
    /// Whether the table has a subkey (each stored value starts with the subkey's encoding).
    const HAS_SUBKEY: bool;
}

/// A `dupsort` table with a subkey (`#[table(key = K, subkey = S, value = V, dupsort)]`): its
/// values are `(S, V)` pairs sorted by `S`, the shape of reth's and Erigon's storage tables.
/// Subkey operations such as [`WriteCursor::upsert_dup`](crate::WriteCursor::upsert_dup)
/// require it.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` has no subkey",
    label = "declared without `subkey = ..`",
    note = "subkey operations work on tables whose values are (subkey, value) pairs: declare `#[table(key = .., subkey = .., value = .., dupsort)]`"
)]
pub trait HasSubKey: DupSort {
    /// The value stored after the subkey (`V` of `subkey = S, value = V`).
    type SubValue;
    /// How that value becomes bytes ([`Bincode<V>`](crate::Bincode) unless `codec = ..`).
    type SubCodec: Value<Item = Self::SubValue>;
}
