//! Tables and schemas: the compile-time description of a database.

use std::any::Any;

use crate::codec::{AsKey, AsValue, DecodeError, EncodeError, Key, Ordered, OrderedValue, Value};
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
    type Key: Key + 'static;
    /// The value type read and written.
    type Value: 'static;
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
    /// For an index (`#[derive(Index)]`): its source table and how its entries are computed;
    /// `None` for a table.
    const INDEX: Option<IndexInfo> = None;
    /// `#[table(.., indexed)]`: the table may have indexes (the write cursors and the appender
    /// then look for them in the schema; for any other table that costs nothing).
    const INDEXED: bool = false;
    /// `#[table(.., history)]`: every change of the table's rows is recorded in its history
    /// (`#[derive(History)]`), which as-of reads and unwinds read.
    const HISTORY: bool = false;
    /// For a history (`#[derive(History)]`): the name of the table whose changes it records;
    /// `None` for any other table.
    const HISTORY_OF: Option<&'static str> = None;
    /// Of a `dupsort` table: how many bytes at the front of a stored value name the unit a
    /// history records a change of, the value's subkey (its self-delimiting encoding) or, with
    /// no subkey, the whole value; `None` when they do not decode. The derive fills it in.
    #[doc(hidden)]
    const DUP_UNIT: fn(&[u8]) -> Option<usize> = crate::__private::whole_value;
    /// A stored key's `Debug` form, for errors that name a key; `None` when the key type has
    /// no `Debug` or the bytes do not decode. The derives fill it in.
    #[doc(hidden)]
    const DEBUG_KEY: fn(&[u8]) -> Option<String> = crate::__private::no_debug_key;
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
    /// For an index: what it indexes ([`Table::INDEX`]); `None` for a table.
    pub index: Option<IndexInfo>,
    /// Declared `history` ([`Table::HISTORY`]): its changes are recorded in its history.
    pub history: bool,
    /// For a history: the name of the table whose changes it records ([`Table::HISTORY_OF`]).
    pub history_of: Option<&'static str>,
    /// A stored key's `Debug` form, for errors; `None` when not known.
    #[doc(hidden)]
    pub debug_key: fn(&[u8]) -> Option<String>,
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
            && self.index == other.index
            && self.history == other.history
            && self.history_of == other.history_of
    }
}

impl Eq for TableInfo {}

impl TableInfo {
    /// The info of table `T`.
    pub const fn of<T: Table>() -> TableInfo {
        TableInfo {
            debug_key: T::DEBUG_KEY,
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
            index: T::INDEX,
            history: T::HISTORY,
            history_of: T::HISTORY_OF,
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
/// [`Ordered`]).
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

/// A value that can be written to table `T`: a reference to the table's value type, or a
/// borrowed form its codec stores the same way ([`AsValue`]: `&str` for a `String` value, `&[T]`
/// for a `Vec<T>` value, `&[u8]` for a `Raw` value). Every call that writes a value takes one,
/// so a value of the wrong type is a compile error naming the table and its value type.
///
/// Implemented for every [`AsValue`] of the table's codec; never implemented by hand.
///
/// ```
/// # use tabula::{Options, Schema, Table};
/// #[derive(Table)]
/// #[table(key = u64, value = String)]
/// struct Names;
/// # #[derive(Schema)]
/// # struct App(Names);
/// # let dir = tabula::__doc::temp_dir();
/// # let db = tabula::open::<App>(dir.path(), Options::new())?;
/// fn write_name(tx: &mut tabula::Tx<'_, App, tabula::Rw>, value: &(impl tabula::ValueOf<Names> + ?Sized)) -> tabula::Result<()> {
///     tx.put::<Names>(&1, value)
/// }
/// let mut tx = db.write()?;
/// write_name(&mut tx, "one")?; // a `&str` for a `String` value
/// write_name(&mut tx, &"one".to_string())?; // the value itself
/// // write_name(&mut tx, &5u32)?; // error: `u32` is not a value of table `Names`: its values are `String`
/// # Ok::<(), tabula::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value of table `{T}`: its values are `{V}`",
    label = "expected a `&{V}` (or a borrowed form of it)",
    note = "pass a reference to the table's value type; `&str` is accepted for `String` values, `&[T]` for `Vec<T>` values and `&[u8]` for `Raw` values"
)]
pub trait ValueOf<T: Table, V: ?Sized = <T as Table>::Value>: AsValue<T::Codec> {}

#[diagnostic::do_not_recommend]
impl<T: Table, Q: AsValue<T::Codec> + ?Sized> ValueOf<T> for Q {}

/// A table whose rows the application writes: every `#[derive(Table)]` table, never an index
/// (`#[derive(Index)]`) nor a history (`#[derive(History)]`), whose entries Tabula writes when
/// their source table is written. Every write path requires it, so writing an index or a
/// history directly does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a writable table (an index or a history cannot be written directly)",
    label = "not known to be writable",
    note = "an index's entries and a history's records follow their source table: write the source table's rows and Tabula keeps them exact; in generic code, bound the table by `tabula::Writable`"
)]
pub trait Writable: Table {}

/// A writable table declared without `indexed` or `history`: the write paths that do not keep
/// indexes exact nor record history (`put_reserve`, and the dup operations) require it, so on
/// an indexed or history table they do not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a table without indexes or history: this write path does not keep indexes exact or record history",
    label = "declared `indexed` or `history`, an index, or not known to be neither",
    note = "write an indexed or history table through `put`, `insert`, `append`, `delete`, `delete_range`, `retain`, `pop_first`/`pop_last`, `clear`, `put_bytes`, `retain_bytes`, a write cursor, the appender or `Db::bulk_load`, which keep its indexes exact and record its history; in generic code, bound the table by `tabula::Unindexed`"
)]
pub trait Unindexed: Writable {}

/// A table declared `#[table(.., indexed)]`: the only kind an index may be declared on.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` is not declared `indexed`",
    label = "an index needs a table declared `indexed`",
    note = "add `indexed` to the table's `#[table(..)]`: its write paths then keep its indexes exact, and those that cannot are refused at compile time"
)]
pub trait Indexed: Writable {}

/// A table declared `#[table(.., history)]`: its changes are recorded, version by version, in
/// the history listed beside it in the schema ([`History`]), so it can be read as of a version
/// and unwound. Implemented by the table derive; never by hand.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` is not declared `history`",
    label = "a history needs a table declared `history`",
    note = "add `history` to the table's `#[table(..)]` and list its `#[derive(History)]` struct in the schema"
)]
pub trait HasHistory: Writable {}

/// A table declared `history` that holds one value a key (not `dupsort`): its history records
/// each key's value, read by [`get_as_of`](crate::Reads::get_as_of),
/// [`range_as_of`](crate::Reads::range_as_of), [`versions`](crate::Reads::versions) and
/// [`changes_at`](crate::Reads::changes_at). A `dupsort` table's history records each (key,
/// subkey) instead, read by the `dup_` forms ([`dup_as_of`](crate::Reads::dup_as_of), ..).
/// Implemented by the table derive; never by hand.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` is not known to hold one value a key: its history cannot be read by key",
    label = "a `dupsort` table, or not bound by `tabula::RowHistory`",
    note = "a `dupsort` table's history records each (key, subkey): read it with `dup_as_of` (one subkey's values), `dups_as_of` (a key's values), `dup_versions` and `dup_changes_at`; in generic code, bound the table by `tabula::RowHistory`"
)]
pub trait RowHistory: HasHistory {}

/// The history of table [`Source`](History::Source) (`#[derive(History)]`): every change of a
/// row, with the version of the transaction that made it and the value before it. A table of
/// the schema (created, opened and checked by the startup step), written only by the writes of
/// its source table: writing it directly does not compile. Implemented only by the derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a history",
    label = "not a history",
    note = "declare a table's history with `#[derive(History)]` and `#[history(on = Table)]`"
)]
pub trait History: Table {
    /// The table whose changes it records.
    type Source: HasHistory;
}

/// What an index function may return for one row: `K` (one entry), `Option<K>` (`None`: no
/// entry) or `Vec<K>` (several; a key repeated counts once).
pub trait IndexKeys<K> {
    /// Appends the keys to `out`.
    ///
    /// ```
    /// use tabula::IndexKeys;
    ///
    /// let mut keys = Vec::new();
    /// IndexKeys::<u32>::push_into(Some(7u32), &mut keys);
    /// IndexKeys::<u32>::push_into(None::<u32>, &mut keys);
    /// IndexKeys::<u32>::push_into(vec![1u32, 2], &mut keys);
    /// assert_eq!(keys, [7, 1, 2]);
    /// ```
    fn push_into(self, out: &mut Vec<K>);

    /// Calls `each` with every key, in order (a repeated key each time), without collecting
    /// them: how the write paths read an index function's keys.
    ///
    /// ```
    /// use tabula::IndexKeys;
    ///
    /// let mut seen = Vec::new();
    /// IndexKeys::<u32>::for_each_key(vec![3u32, 1, 3], |k| seen.push(*k));
    /// assert_eq!(seen, [3, 1, 3]);
    /// ```
    fn for_each_key(self, mut each: impl FnMut(&K))
    where
        Self: Sized,
    {
        let mut keys = Vec::new();
        self.push_into(&mut keys);
        keys.iter().for_each(&mut each);
    }
}

impl<K: Key> IndexKeys<K> for K {
    fn push_into(self, out: &mut Vec<K>) {
        out.push(self);
    }

    #[inline]
    fn for_each_key(self, mut each: impl FnMut(&K)) {
        each(&self);
    }
}

impl<K: Key> IndexKeys<K> for Option<K> {
    fn push_into(self, out: &mut Vec<K>) {
        out.extend(self);
    }

    #[inline]
    fn for_each_key(self, mut each: impl FnMut(&K)) {
        if let Some(key) = &self {
            each(key);
        }
    }
}

impl<K: Key> IndexKeys<K> for Vec<K> {
    fn push_into(self, out: &mut Vec<K>) {
        out.extend(self);
    }

    #[inline]
    fn for_each_key(self, each: impl FnMut(&K)) {
        self.iter().for_each(each);
    }
}

/// A secondary index: a table of index key → primary key of [`Source`](Index::Source), kept
/// exact by every write of the source table that takes an indexed table. Implemented only by
/// `#[derive(Index)]`, which also implements [`Table`] for it (key: the index key; value: the
/// source's primary key; `dupsort` unless `unique`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an index",
    label = "not an index",
    note = "declare indexes with `#[derive(Index)]` and `#[index(on = .., key = .., by = ..)]`"
)]
pub trait Index: Table {
    /// The indexed table.
    type Source: Indexed;
    /// Whether an index key belongs to one row at most.
    const UNIQUE: bool;
    /// Appends the index keys of the row `(key, value)` to `out` (the declared `by` function).
    fn keys(
        key: &<Self::Source as Table>::Key,
        value: &<Self::Source as Table>::Value,
        out: &mut Vec<Self::Key>,
    );
    /// The primary key an entry's value holds (the index table's value is the source's key).
    fn primary(value: Self::Value) -> <Self::Source as Table>::Key;

    /// Calls `each` with every index key of the row `(key, value)` (the declared `by`
    /// function's keys, in its order, a repeated key each time), without collecting them: the
    /// derive implements it so that the write paths read a row's keys without allocating.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// use tabula::Index;
    ///
    /// let mut keys = Vec::new();
    /// BySender::for_each_key(&1, &transfer(7, 9, None), |k| keys.push(*k));
    /// ByHash::for_each_key(&1, &transfer(7, 9, None), |k| keys.push(u32::MAX)); // no hash, no key
    /// assert_eq!(keys, [7]);
    /// ```
    #[inline]
    fn for_each_key(
        key: &<Self::Source as Table>::Key,
        value: &<Self::Source as Table>::Value,
        each: impl FnMut(&Self::Key),
    ) {
        let mut keys = Vec::new();
        Self::keys(key, value, &mut keys);
        keys.iter().for_each(each);
    }
}

/// A `unique` index: [`Reads::get_unique`](crate::Reads::get_unique) requires it, so a unique
/// query on a non-unique index does not compile.
#[diagnostic::on_unimplemented(
    message = "index `{Self}` is not unique",
    label = "declared without `unique`",
    note = "an index key of a non-unique index may have several rows: use `by_index`, or declare `#[index(.., unique)]`"
)]
pub trait Unique: Index {}

/// One index entry in stored form: the index key and the primary key, as the index table
/// stores them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RawEntry {
    /// The index key, encoded.
    pub key: Vec<u8>,
    /// The primary key, in the index table's value encoding.
    pub primary: Vec<u8>,
}

/// Computes the entries of a stored row (key and value as the source table stores them),
/// sorted and without repeats.
pub type EntriesFn = fn(&[u8], &[u8], &mut Vec<RawEntry>) -> Result<(), EntriesError>;

/// Calls `each` with the encoded index key of every entry of a decoded row: `key` and `value`
/// are the source table's key and value (`&<Source as Table>::Key` and `&..::Value` as
/// [`Any`]); the keys come in the index function's order, a repeated key each time. Returns
/// `false`, without calling `each`, when `key` or `value` is not of those types. The write
/// paths decode a row once and call this for each of its table's indexes.
pub type KeysFn = fn(key: &dyn Any, value: &dyn Any, each: &mut dyn FnMut(&[u8])) -> bool;

/// Why a stored row's entries could not be computed.
#[derive(Debug)]
pub enum EntriesError {
    /// The row's key did not decode.
    Key(DecodeError),
    /// The row's value did not decode.
    Value(DecodeError),
    /// An index key or the primary key did not encode.
    Encode(EncodeError),
}

/// What the schema knows of an index ([`Table::INDEX`]).
#[derive(Clone, Copy)]
pub struct IndexInfo {
    /// The source table's name.
    pub source: &'static str,
    /// Whether each index key belongs to one row at most.
    pub unique: bool,
    /// Computes a stored row's entries (decoding the row).
    pub entries: EntriesFn,
    /// The encoded index keys of a decoded row (the write paths' way).
    pub keys: KeysFn,
}

impl std::fmt::Debug for IndexInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexInfo")
            .field("source", &self.source)
            .field("unique", &self.unique)
            .finish_non_exhaustive()
    }
}

impl PartialEq for IndexInfo {
    /// Compares the source and uniqueness (the function is the index's code, which its
    /// `version` stands for).
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.unique == other.unique
    }
}

impl Eq for IndexInfo {}

impl IndexInfo {
    /// The info of index `I`.
    pub const fn of<I: Index>() -> IndexInfo
    where
        <I::Source as Table>::Key: OrderedValue,
    {
        IndexInfo {
            source: <I::Source as Table>::NAME,
            unique: I::UNIQUE,
            entries: entries_of::<I>,
            keys: keys_of::<I>,
        }
    }
}

/// [`KeysFn`] of index `I`.
fn keys_of<I: Index>(key: &dyn Any, value: &dyn Any, each: &mut dyn FnMut(&[u8])) -> bool {
    type Src<I> = <I as Index>::Source;
    let (Some(key), Some(value)) = (
        key.downcast_ref::<<Src<I> as Table>::Key>(),
        value.downcast_ref::<<Src<I> as Table>::Value>(),
    ) else {
        return false;
    };
    I::for_each_key(key, value, |k| each(AsKey::<I::Key>::encode(k).as_ref()));
    true
}

/// [`EntriesFn`] of index `I`.
fn entries_of<I: Index>(
    key: &[u8],
    value: &[u8],
    out: &mut Vec<RawEntry>,
) -> Result<(), EntriesError>
where
    <I::Source as Table>::Key: OrderedValue,
{
    type Src<I> = <I as Index>::Source;
    // `integer_key` tables store native-endian integers (`stored::with_key`).
    let mut ordered = [0u8; 8];
    let stored_key =
        if <Src<I> as Table>::FLAGS.integer_key && cfg!(target_endian = "little") && key.len() <= 8
        {
            let n = key.len();
            ordered[..n].copy_from_slice(key);
            ordered[..n].reverse();
            &ordered[..n]
        } else {
            key
        };
    let pk = <<Src<I> as Table>::Key as Key>::decode(stored_key).map_err(EntriesError::Key)?;
    let row = <<Src<I> as Table>::Codec as Value>::decode(value).map_err(EntriesError::Value)?;
    let mut keys = Vec::new();
    I::keys(&pk, &row, &mut keys);
    let mut scratch = Vec::new();
    let primary = <Ordered<<Src<I> as Table>::Key> as Value>::encode(&pk, &mut scratch)
        .map_err(EntriesError::Encode)?
        .to_vec();
    let start = out.len();
    for k in &keys {
        out.push(RawEntry {
            key: k.encode().as_ref().to_vec(),
            primary: primary.clone(),
        });
    }
    out[start..].sort_unstable();
    let mut i = start + 1;
    while i < out.len() {
        if out[i] == out[i - 1] {
            out.remove(i);
        } else {
            i += 1;
        }
    }
    Ok(())
}
