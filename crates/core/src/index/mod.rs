//! Secondary indexes kept exact: the write side every write path of an indexed table goes
//! through (`write.rs`), and the queries by index key on [`Reads`](crate::Reads)
//! (`query.rs`). The declarations (`Index`, `IndexInfo`, the `Writable`/`Unindexed` markers)
//! live with the tables in `table.rs`; `docs/design.md` ("Secondary indexes") explains the
//! design.

mod check;
mod write;

pub(crate) use check::check;
pub use check::{IndexCheck, IndexProblem};

pub(crate) use write::{
    Changes, Deferred, EntryChange, Store, apply, clear, cursor_indexed, cursor_removal, entries,
    prepare, prepare_unchecked, removal,
};

use std::marker::PhantomData;

use crate::table::{IndexInfo, Schema, Table, TableInfo};

/// Whether schema `S` lists an index on table `T`: a constant, so the write paths of a table
/// without indexes fold the index branch away.
pub(crate) struct On<S, T>(PhantomData<(S, T)>);

impl<S: Schema, T: Table> On<S, T> {
    /// Some index of `S` has `T` as its source.
    pub(crate) const ANY: bool = any_on(S::TABLES, T::NAME);
}

const fn any_on(tables: &[TableInfo], name: &str) -> bool {
    let mut i = 0;
    while i < tables.len() {
        if let Some(index) = tables[i].index
            && crate::__private::str_eq(index.source, name)
        {
            return true;
        }
        i += 1;
    }
    false
}

/// The indexes of table `source` in `tables`: each index's position (its handle's ID), its
/// name and what it indexes.
pub(crate) fn indexes_on<'a>(
    tables: &'a [TableInfo],
    source: &'a str,
) -> impl Iterator<Item = (usize, &'static str, IndexInfo)> + 'a {
    tables.iter().enumerate().filter_map(move |(id, t)| {
        t.index
            .filter(|index| index.source == source)
            .map(|index| (id, t.name, index))
    })
}
