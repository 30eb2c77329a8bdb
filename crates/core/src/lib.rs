//! Tabula's core: table and codec traits, the libmdbx layer, transactions and cursors.
//!
//! Applications depend on the `tabula` facade crate, whose docs are the user manual; this crate
//! holds the engine. The only module that calls libmdbx is `engine`, the only one with `unsafe`.

#![deny(missing_docs)]
// `unsafe` is refused everywhere but the engine module, which allows it for itself; every
// `unsafe` block there carries a `// SAFETY:` comment naming the invariant it relies on.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod codec;
mod cursor;
mod db;
mod diagnose;
mod engine;
mod error;
mod files;
mod history;
mod hub;
mod index;
mod iter;
mod mode;
mod options;
mod pipeline;
mod query;
mod read;
pub mod record;
pub mod schema;
mod sequence;
pub mod startup;
mod state;
mod stored;
pub mod table;
pub mod telemetry;
mod txn;
pub mod untyped;
mod version;
mod versions;
mod watch;

pub use codec::{
    AnyBytes, AsKey, AsPrefix, AsValue, Bincode, DecodeError, EncodeError, IntegerKey, Key, KeyBuf,
    KeyRange, Pod, Raw, Value, ValueRef,
};
pub use codec::{Ordered, OrderedValue, SubKeyed};
#[cfg(feature = "compression")]
pub use codec::{Zstd, ZstdDict, ZstdDictionary};
pub use cursor::{Appender, Cursor, WriteCursor, WriteCursors};
pub use db::bulk::{
    BulkEntry, BulkLoad, BulkReport, DEFAULT_BULK_BATCH_BYTES, DEFAULT_BULK_BATCH_ENTRIES,
};
pub use db::owned::{OwnedHandle, OwnedIter, OwnedTx};
pub use db::watch::{Followed, Follower};
pub use db::{CheckReport, DbInfo, DbStat, TableUsage, libmdbx_version};
pub use engine::{DATA_FILE, LOCK_FILE, ReaderInfo, Room};
pub use error::{Error, KeyHex, MdbxCode, MismatchDetail, Part, Result};
pub use history::HistoryCheck;
pub use index::{IndexCheck, IndexProblem};
pub use iter::{Iter, Lazy};
pub use mode::{Mode, Ro, Rw};
pub use options::{
    DEFAULT_FLUSH_THRESHOLD, DEFAULT_LONG_READ_WARNING, KEEP_VERSIONS_BATCH, Options, SlowReader,
    SlowReaderAction, SyncMode,
};
pub use read::{Handle, Reads, TableStat};
pub use schema::{Descriptor, ValueTrace};
pub use startup::entry::{open, open_with, open_with_report};
pub use state::Db;
pub use table::{Contains, Schema, Table, TableFlags, TableInfo};
pub use table::{DupSort, HasSubKey};
pub use table::{
    EntriesError, EntriesFn, Index, IndexInfo, IndexKeys, Indexed, KeysFn, RawEntry, Unindexed,
    Unique, ValueOf, Writable,
};
pub use table::{HasHistory, History, RowHistory};
pub use txn::{RoTx, RwTx, Tx, TxHandle};
pub use versions::{DupChange, VersionChange};
pub use watch::{
    Change, Commit, CommitReceiver, DEFAULT_WATCH_CAPACITY, KeyReceiver, Received, TableSet,
};
/// The `zerocopy` crate `Pod<T>` values are declared with (`FromBytes`, `IntoBytes`, ...,
/// and `zerocopy::byteorder`'s integers), re-exported so that its version is the one Tabula
/// uses.
pub use zerocopy;
// The names the compiler shows when a transaction is sent or shared across threads.
#[doc(hidden)]
pub use mode::{ATransactionIsUsedByOneThreadAtATime, AWriteTransactionEndsOnTheThreadThatBeganIt};

/// Items the derive macros expand to (and the key comparators, for core's comparator test).
/// Not public API: no stability promise. What other crates of Tabula need from core has a named
/// home: `tabula-migrate` works through [`startup`].
#[doc(hidden)]
pub mod __private {
    pub use crate::versions::Unwinding;

    /// Implemented only by `#[derive(Table)]`; seals [`Table`](crate::Table). Its name is what
    /// a hand-written `impl Table` has to write out, so that no one bypasses the derive by
    /// accident (the derive is what checks names, key types and codecs at compile time).
    #[diagnostic::on_unimplemented(
        message = "`Table` can only be implemented by `#[derive(Table)]`",
        label = "hand-written `impl Table` is not allowed",
        note = "write `#[derive(Table)]` with `#[table(key = .., value = ..)]` on a unit struct instead"
    )]
    pub trait ImplementedByDeriveTableOnly {}

    /// Implemented only by `#[derive(Table)]`; seals [`DupSort`](crate::DupSort).
    #[diagnostic::on_unimplemented(
        message = "`DupSort` can only be implemented by `#[derive(Table)]`",
        label = "hand-written `impl DupSort` is not allowed",
        note = "declare the table with `#[derive(Table)]` and `#[table(.., dupsort)]` instead"
    )]
    pub trait DupSealed {}

    /// A table's [`Table::DEBUG_KEY`](crate::Table::DEBUG_KEY) when its key has no `Debug`.
    pub fn no_debug_key(_stored: &[u8]) -> Option<String> {
        None
    }

    /// [`Table::DUP_UNIT`](crate::Table::DUP_UNIT) of a `dupsort` table without a subkey: the
    /// whole stored value is its unit of change.
    pub fn whole_value(stored: &[u8]) -> Option<usize> {
        Some(stored.len())
    }

    /// [`Table::DUP_UNIT`](crate::Table::DUP_UNIT) of a table with subkey `S`: the length of
    /// the subkey's self-delimiting encoding at the front of a stored value; `None` when it
    /// does not decode.
    pub fn subkey_len<S: crate::Key>(stored: &[u8]) -> Option<usize> {
        if let Some(n) = S::FIXED_SIZE {
            return (stored.len() >= n).then_some(n);
        }
        let mut input = stored;
        S::decode_part(&mut input, false).ok()?;
        Some(stored.len() - input.len())
    }

    /// Table `T`, for the derives' choice of a key's `Debug` form: `(&&Shown::<T>::NEW).show(..)`
    /// finds [`ShowDebug`] when `T::Key: Debug`, else [`ShowNothing`] (method lookup tries
    /// `&&Shown` before `&Shown`).
    pub struct Shown<T>(core::marker::PhantomData<fn() -> T>);

    impl<T> Shown<T> {
        /// The value.
        pub const NEW: Self = Shown(core::marker::PhantomData);
    }

    /// A key shown through its `Debug`.
    pub trait ShowDebug {
        /// The stored key's `Debug` form, or `None` when it does not decode.
        fn show(&self) -> fn(&[u8]) -> Option<String>;
    }

    impl<T: crate::Table> ShowDebug for &Shown<T>
    where
        T::Key: core::fmt::Debug,
    {
        fn show(&self) -> fn(&[u8]) -> Option<String> {
            |stored| {
                crate::stored::decode_key::<T>(stored)
                    .ok()
                    .map(|key| format!("{key:?}"))
            }
        }
    }

    /// A key without `Debug`: not shown.
    pub trait ShowNothing {
        /// Always [`no_debug_key`].
        fn show(&self) -> fn(&[u8]) -> Option<String>;
    }

    impl<T> ShowNothing for Shown<T> {
        fn show(&self) -> fn(&[u8]) -> Option<String> {
            no_debug_key
        }
    }

    /// Byte-wise string equality usable in constants.
    pub const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether `name` starts with the prefix reserved for Tabula's own tables.
    pub const fn is_reserved(name: &str) -> bool {
        let (n, p) = (name.as_bytes(), crate::table::RESERVED_PREFIX.as_bytes());
        if n.len() < p.len() {
            return false;
        }
        let mut i = 0;
        while i < p.len() {
            if n[i] != p[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether the name of `tables[at]` repeats the name of a table that comes earlier: the
    /// check `#[derive(Schema)]` asserts for each table after the first.
    pub const fn name_repeats_earlier(tables: &[crate::TableInfo], at: usize) -> bool {
        let mut i = 0;
        while i < at {
            if str_eq(tables[i].name, tables[at].name) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Whether the table at `at` is a table, or an index whose source table is listed too (a
    /// table, not another index).
    pub const fn index_source_listed(tables: &[crate::TableInfo], at: usize) -> bool {
        let Some(index) = tables[at].index else {
            return true;
        };
        let mut i = 0;
        while i < tables.len() {
            if tables[i].index.is_none() && str_eq(tables[i].name, index.source) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Whether the table at `at` is not a history, or a history whose source table is listed
    /// too (a table declared `history`, checked by the history's bound).
    pub const fn history_source_listed(tables: &[crate::TableInfo], at: usize) -> bool {
        let Some(source) = tables[at].history_of else {
            return true;
        };
        let mut i = 0;
        while i < tables.len() {
            if tables[i].index.is_none()
                && tables[i].history_of.is_none()
                && str_eq(tables[i].name, source)
            {
                return true;
            }
            i += 1;
        }
        false
    }

    /// Whether the table at `at`, declared `history` or not, has its history listed in
    /// `tables` when it needs one.
    pub const fn history_listed(tables: &[crate::TableInfo], at: usize) -> bool {
        if !tables[at].history {
            return true;
        }
        let mut i = 0;
        while i < tables.len() {
            if let Some(source) = tables[i].history_of
                && str_eq(source, tables[at].name)
            {
                return true;
            }
            i += 1;
        }
        false
    }

    /// The sum of the sizes, or `None` if any is `None` (or the sum overflows): a composite key's
    /// `FIXED_SIZE` from its fields'.
    pub const fn sum_fixed_sizes(sizes: &[Option<usize>]) -> Option<usize> {
        let mut total: usize = 0;
        let mut i = 0;
        while i < sizes.len() {
            total = match sizes[i] {
                Some(size) => match total.checked_add(size) {
                    Some(sum) => sum,
                    None => return None,
                },
                None => return None,
            };
            i += 1;
        }
        Some(total)
    }

    /// Appends `key` as one part of a composite key: `#[derive(Key)]`'s call for each field, bounded
    /// by [`Key`](crate::Key) so a field type that is not a key is reported as such.
    #[inline]
    pub fn encode_key_part<K: crate::Key>(key: &K, out: &mut crate::KeyBuf, last: bool) {
        <K as crate::AsKey<K>>::encode_part(key, out, last)
    }

    /// Compile-time check used by `#[derive(Table)]` with `integer_key`.
    pub const fn assert_integer_key<K: crate::IntegerKey>() {}

    /// `Vec`, for the index derive's expansion (which names nothing from the prelude).
    pub use std::vec::Vec;
}

pub use table::RESERVED_PREFIX;

#[cfg(test)]
mod tests {
    use super::__private::*;

    #[test]
    fn const_helpers() {
        assert!(str_eq("a", "a"));
        assert!(!str_eq("a", "ab"));
        assert!(is_reserved("__tabula_meta"));
        assert!(!is_reserved("__tab"));
        assert!(!is_reserved("headers"));
        assert_eq!(sum_fixed_sizes(&[Some(8), Some(4)]), Some(12));
        assert_eq!(sum_fixed_sizes(&[Some(8), None, Some(4)]), None);
        assert_eq!(sum_fixed_sizes(&[]), Some(0));
        assert_eq!(sum_fixed_sizes(&[Some(usize::MAX), Some(1)]), None);
    }

    #[test]
    fn name_repeats_earlier_compares_names() {
        let info = |name| crate::TableInfo {
            name,
            flags: crate::TableFlags::NONE,
            key: crate::Descriptor::Unsigned(64),
            value: crate::Descriptor::Raw,
            value_type: "Vec<u8>",
            value_version: None,
            rust_name: "",
            value_trace: || crate::ValueTrace::Opaque,
            debug_key: crate::__private::no_debug_key,
            index: None,
            history: false,
            history_of: None,
        };
        let tables = [info("a"), info("b"), info("a")];
        assert!(!name_repeats_earlier(&tables, 0));
        assert!(!name_repeats_earlier(&tables, 1));
        assert!(name_repeats_earlier(&tables, 2));
    }
}
