//! Reads of tables declared `history` without the schema's types, for the `tabula` command:
//! a stored key's value as of a version, its versions, a version's changes, and the check of
//! a history, on [`UntypedTx`]. The layout is `history/`'s.

use crate::engine::{Code, Dbi, RawCursor, RawTxn};
use crate::error::{At, Error, Result};
use crate::history::{self, Cx, HistoryCheck};

use super::{UntypedTable, UntypedTx, fail};

impl Cx for super::UntypedDb {
    fn fail(&self, code: Code, at: At<'_>) -> Error {
        fail(code, at, &self.env, &self.path)
    }

    fn cursor<'t>(&'t self, raw: &'t RawTxn, dbi: Dbi) -> std::result::Result<RawCursor<'t>, Code> {
        raw.cursor(dbi)
    }

    fn may_be_whole(&self) -> bool {
        true
    }
}

/// A changed key of a version, as stored: the key, the value before, the value at the end.
pub type StoredVersionChange = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// A changed unit of a version of a `dupsort` table (a key's values with one subkey; without
/// a subkey, one value), as stored: the key, the unit's values before and at the end.
pub type StoredDupChange = (Vec<u8>, Vec<Vec<u8>>, Vec<Vec<u8>>);

impl UntypedTx<'_> {
    /// The history of `table` (the table its schema record names as recording `table`'s
    /// changes); `None` when it has none.
    ///
    /// ```
    /// # let dir = tabula::__doc::ledger_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let ledger = tx.table("Ledger")?.expect("a table");
    /// assert_eq!(tx.history_of(&ledger)?.map(|h| h.name), Some("LedgerHistory".to_string()));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`] naming the table when libmdbx fails.
    pub fn history_of(&mut self, table: &UntypedTable) -> Result<Option<UntypedTable>> {
        let name = (self.db.record.as_ref())
            .and_then(|r| r.history_of(&table.name))
            .map(str::to_owned);
        match name {
            Some(name) => self.table(&name),
            None => Ok(None),
        }
    }

    /// The stored value under the stored key `key` of `table` at the end of `version`, read
    /// through its history `history` ([`history_of`](UntypedTx::history_of)).
    ///
    /// ```
    /// # let dir = tabula::__doc::ledger_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let ledger = tx.table("Ledger")?.expect("a table");
    /// let history = tx.history_of(&ledger)?.expect("declared `history`");
    /// let key = 7u64.to_be_bytes(); // the stored key
    /// let one = tx.get_as_of(&ledger, &history, &key, 1)?.expect("a value");
    /// assert_eq!(one, [3, b'o', b'n', b'e']); // bincode's length, then the bytes
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`] when a change of the key after `version` was pruned;
    /// [`Error::Mdbx`].
    pub fn get_as_of(
        &self,
        table: &UntypedTable,
        history: &UntypedTable,
        key: &[u8],
        version: u64,
    ) -> Result<Option<Vec<u8>>> {
        refuse_dupsort(table, "read a key as of a version")?;
        let source = super::intern(&table.name);
        let dbis = (source, table.dbi, history.dbi);
        let held = history::value_at(&self.txn, self.db, dbis, form_of(table), key, version)?;
        Ok(held.map(<[u8]>::to_vec))
    }

    /// The versions at which the stored key `key` changed, in increasing order.
    ///
    /// ```
    /// # let dir = tabula::__doc::ledger_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let ledger = tx.table("Ledger")?.expect("a table");
    /// let history = tx.history_of(&ledger)?.expect("declared `history`");
    /// let key = 7u64.to_be_bytes(); // the stored key
    /// assert_eq!(tx.versions(&ledger, &history, &key)?, [1, 2]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`].
    pub fn versions(
        &self,
        table: &UntypedTable,
        history: &UntypedTable,
        key: &[u8],
    ) -> Result<Vec<u64>> {
        let source = super::intern(&table.name);
        let form = form_of(table);
        if !table.dupsort {
            let part = form.plain_part(key);
            return history::versions(&self.txn, self.db, source, history.dbi, &part);
        }
        // Every unit's changes follow the key's start, which starts no other key's.
        let start = form.key_start(key);
        let mut versions =
            history::versions(&self.txn, self.db, source, history.dbi, start.as_slice())?;
        versions.sort_unstable();
        versions.dedup();
        Ok(versions)
    }

    /// The stored values of the stored key `key` of the `dupsort` table `table` at the end of
    /// `version`, in their order, read through its history `history`
    /// ([`history_of`](UntypedTx::history_of)); a unit's bounds (where a stored value's subkey
    /// ends) come from the table's recorded value shape.
    ///
    /// ```
    /// # let dir = tabula::__doc::slots_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let slots = tx.table("Slots")?.expect("a table");
    /// let history = tx.history_of(&slots)?.expect("declared `history`");
    /// let key = 7u64.to_be_bytes(); // the stored key
    /// // The subkey's bytes, then the value's (bincode: a `u64` below 251 is one byte).
    /// let stored = |s: u64, v: u8| [&s.to_be_bytes()[..], &[v]].concat();
    /// assert_eq!(tx.dups_as_of(&slots, &history, &key, 1)?, [stored(1, 10)]);
    /// assert_eq!(tx.dups_as_of(&slots, &history, &key, 2)?, [stored(1, 11), stored(2, 20)]);
    /// assert_eq!(tx.versions(&slots, &history, &key)?, [1, 2]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::HistoryRead`] when `table` is not `dupsort` (read it with
    /// [`get_as_of`](UntypedTx::get_as_of)) or its values' subkey shape is not recorded;
    /// [`Error::BelowHorizon`] when a change of the key after `version` was pruned;
    /// [`Error::Mdbx`].
    pub fn dups_as_of(
        &self,
        table: &UntypedTable,
        history: &UntypedTable,
        key: &[u8],
        version: u64,
    ) -> Result<Vec<Vec<u8>>> {
        let source = super::intern(&table.name);
        let unit = unit_len(table)?;
        let how = (source, form_of(table), unit);
        history::key_at_with(
            &self.txn,
            self.db,
            how,
            (table.dbi, history.dbi),
            key,
            version,
        )
    }

    /// The changes of `version`, in key order: each stored key, its value before the version
    /// and at its end.
    ///
    /// ```
    /// # let dir = tabula::__doc::ledger_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let ledger = tx.table("Ledger")?.expect("a table");
    /// let history = tx.history_of(&ledger)?.expect("declared `history`");
    /// let key = 7u64.to_be_bytes(); // the stored key
    /// let changes = tx.changes_at(&ledger, &history, 2)?;
    /// assert_eq!(changes.len(), 1);
    /// assert_eq!(changes[0].0, key);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BelowHorizon`] when the version was pruned; [`Error::Mdbx`].
    pub fn changes_at(
        &self,
        table: &UntypedTable,
        history: &UntypedTable,
        version: u64,
    ) -> Result<Vec<StoredVersionChange>> {
        refuse_dupsort(table, "list a version's changes")?;
        let source = super::intern(&table.name);
        history::check_horizon(
            &self.txn,
            self.db,
            source,
            history.dbi,
            version.saturating_sub(1),
        )?;
        let mut out = Vec::new();
        let at = (history.dbi, form_of(table));
        for (k, before) in history::changes_at(&self.txn, self.db, source, at, version)? {
            let after = self.get_as_of(table, history, &k, version)?;
            out.push((k, before, after));
        }
        Ok(out)
    }

    /// The changes of `version` in the `dupsort` table `table`, in (key, subkey) order: each
    /// stored key with the unit's stored values before the version and at its end.
    ///
    /// ```
    /// # let dir = tabula::__doc::slots_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let slots = tx.table("Slots")?.expect("a table");
    /// let history = tx.history_of(&slots)?.expect("declared `history`");
    /// let key = 7u64.to_be_bytes().to_vec(); // the stored key
    /// // The subkey's bytes, then the value's (bincode: a `u64` below 251 is one byte).
    /// let stored = |s: u64, v: u8| [&s.to_be_bytes()[..], &[v]].concat();
    /// assert_eq!(tx.dup_changes_at(&slots, &history, 2)?, [
    ///     (key.clone(), vec![stored(1, 10)], vec![stored(1, 11)]),
    ///     (key, vec![], vec![stored(2, 20)]),
    /// ]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`dups_as_of`](UntypedTx::dups_as_of); [`Error::BelowHorizon`] when the version was
    /// pruned.
    pub fn dup_changes_at(
        &self,
        table: &UntypedTable,
        history: &UntypedTable,
        version: u64,
    ) -> Result<Vec<StoredDupChange>> {
        let source = super::intern(&table.name);
        let unit = unit_len(table)?;
        let form = form_of(table);
        history::check_horizon(
            &self.txn,
            self.db,
            source,
            history.dbi,
            version.saturating_sub(1),
        )?;
        let mut out = Vec::new();
        let dbis = (table.dbi, history.dbi);
        for (part, before) in
            history::unit_changes_at(&self.txn, self.db, source, history.dbi, version)?
        {
            let (k, sub) = form.split_unit(source, &part)?;
            // The unit's values at the end of the version: the key's, of that unit.
            let mut after = Vec::new();
            for v in
                history::key_at_with(&self.txn, self.db, (source, form, &unit), dbis, &k, version)?
            {
                if v.len() >= sub.len() && v[..unit(&v)?] == *sub {
                    after.push(v);
                }
            }
            out.push((k.into_owned(), before, after));
        }
        Ok(out)
    }

    /// Checks `history` against its layout and `table`'s rows
    /// ([`Reads::check_history`](crate::Reads::check_history)), without decoding the keys and
    /// values (which `tabula check` decodes with the table's); a key in a problem is shown
    /// decoded when the table's record describes it.
    ///
    /// ```
    /// # let dir = tabula::__doc::ledger_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let mut tx = db.read()?;
    /// let ledger = tx.table("Ledger")?.expect("a table");
    /// let history = tx.history_of(&ledger)?.expect("declared `history`");
    /// let key = 7u64.to_be_bytes(); // the stored key
    /// assert!(tx.check_history(&ledger, &history, 10)?.is_ok());
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`].
    pub fn check_history(
        &self,
        table: &UntypedTable,
        history: &UntypedTable,
        limit: usize,
    ) -> Result<HistoryCheck> {
        let source = super::intern(&table.name);
        let dbis = (source, table.dbi, history.dbi);
        // Without the types a `dupsort` table's rows are checked by key (each has a subkey in
        // the history), not by subkey.
        let rows = match table.dupsort {
            true => history::Rows::Dup(None),
            false => history::Rows::Plain,
        };
        history::check(
            &self.txn,
            self.db,
            dbis,
            (form_of(table), rows),
            limit,
            |_, _| None,
            |k| show(table, k),
        )
    }
}

/// How the history of `table` writes its keys: from its recorded key and value descriptors, as
/// the typed API from its types (a table without a record: as a variable-width key's).
fn form_of(table: &UntypedTable) -> history::Form {
    match &table.record {
        Some(record) => history::Form::of_record(record),
        None => history::Form::of_text(table.dupsort, "", ""),
    }
}

/// The length of the unit at the front of a stored value of the `dupsort` table `table`: its
/// subkey's encoding (decoded with the recorded subkey shape), or the whole value.
fn unit_len(table: &UntypedTable) -> Result<impl Fn(&[u8]) -> Result<usize> + '_> {
    let refuse = |problem: String| Error::HistoryRead {
        table: table.name.clone(),
        problem,
    };
    if !table.dupsort {
        return Err(refuse(
            "it is not a `dupsort` table: read its keys' values as of a version with \
             `get_as_of`"
                .to_string(),
        ));
    }
    let subkeyed = (table.record.as_ref()).is_some_and(|r| r.value.starts_with("subkey "));
    let shape = table.value_shape().and_then(|v| v.subkey_shape());
    if subkeyed && shape.is_none() {
        return Err(refuse(
            "its values' subkey shape is not recorded in a form this build reads: where a \
             stored value's subkey ends is unknown; read it in Rust with `Reads::dups_as_of`"
                .to_string(),
        ));
    }
    Ok(move |v: &[u8]| match shape {
        Some(shape) => {
            let mut input = v;
            shape.decode_part(&mut input, false).map_err(|e| {
                refuse(format!(
                    "a stored value's subkey does not decode as its recorded shape: {e}"
                ))
            })?;
            Ok(v.len() - input.len())
        }
        None => Ok(v.len()),
    })
}

/// Refuses `what` of a `dupsort` table, whose history's keys are (key, subkey) units: the
/// `dup` forms read them.
fn refuse_dupsort(table: &UntypedTable, what: &str) -> Result<()> {
    match table.dupsort {
        true => Err(Error::HistoryRead {
            table: table.name.clone(),
            problem: format!(
                "cannot {what} as one value: it is a `dupsort` table, whose history \
                 records each (key, subkey); read a key's values with `dups_as_of` and a \
                 version's changes with `dup_changes_at`"
            ),
        }),
        false => Ok(()),
    }
}

/// The stored key `k` of `table` in a problem: decoded with its recorded shape when it
/// decodes, its bytes otherwise.
fn show(table: &UntypedTable, k: &[u8]) -> String {
    let decoded = table.key_shape().and_then(|shape| {
        // An `integer_key` table stores its key native-endian; the shape reads big-endian.
        let mut bytes = k.to_vec();
        if table.integer_key && cfg!(target_endian = "little") {
            bytes.reverse();
        }
        shape.decode(&bytes).ok()
    });
    match decoded {
        Some(key) => format!("{key:?}"),
        None => format!("{k:02x?}"),
    }
}
