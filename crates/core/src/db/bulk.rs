//! Bulk loading: sorted entries appended in batches that commit by themselves, flushed once at
//! the end.
//!
//! The load keeps one write transaction object for its whole length. After each batch it
//! commits without flushing (`mdbx_txn_checkpoint` with `MDBX_TXN_NOSYNC`, a "weak" commit)
//! and carries on in a new write transaction without releasing the writer lock; the last batch
//! commits under the database's [`SyncMode`](crate::SyncMode) and, unless turned off, one
//! `mdbx_env_sync_ex(force)` then makes everything durable. Under `SyncMode::Durable` that is
//! one flush per load where a loop of `write()` / `commit()` pays one per batch.
//!
//! Why this is safe for what was there before: libmdbx keeps every page of the last *steady*
//! (flushed) commit untouched until a newer steady commit exists, so a weak commit can be rolled
//! back but never damages the snapshot it started from.

use std::borrow::Borrow;
use std::marker::PhantomData;

use crate::codec::{AsKey, Value};
use crate::engine::{self, RawWriteCursor, put};
use crate::error::{At, Error, KeyHex, Result};
use crate::index;
use crate::pipeline::{self, InTxn, Landing};
use crate::state::Db;
use crate::stored::{dbi_of, with_key};
use crate::table::{Contains, Schema, Table, Writable};

/// One entry for [`Db::bulk_load`]: a `(key, value)` pair, each owned or borrowed.
///
/// Implemented for every `(K, V)` and `&(K, V)` where `K` is a key of the table in any accepted form
/// (`u64`, `&u64`, `&str` for a `String` key, ...) and `V` is the value type or a reference
/// to it.
pub trait BulkEntry<T: Table> {
    /// The key.
    type Key: AsKey<T::Key>;
    /// The value.
    type Value: Borrow<T::Value>;

    /// Both halves, borrowed.
    fn parts(&self) -> (&Self::Key, &Self::Value);
}

impl<T: Table, K: AsKey<T::Key>, V: Borrow<T::Value>> BulkEntry<T> for (K, V) {
    type Key = K;
    type Value = V;

    #[inline]
    fn parts(&self) -> (&K, &V) {
        (&self.0, &self.1)
    }
}

/// Iterating a collection of pairs by reference: `db.bulk_load::<T>(&pairs)`.
impl<T: Table, K: AsKey<T::Key>, V: Borrow<T::Value>> BulkEntry<T> for &(K, V) {
    type Key = K;
    type Value = V;

    #[inline]
    fn parts(&self) -> (&K, &V) {
        (&self.0, &self.1)
    }
}

/// What a bulk load wrote; also what the progress callback sees after each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct BulkReport {
    /// Entries committed.
    pub entries: u64,
    /// Batches committed (write transactions).
    pub batches: u64,
    /// Encoded key and value bytes committed (what the table stores, before page overhead).
    pub bytes: u64,
}

/// The default batch bound in entries, see [`BulkLoad::batch_entries`].
pub const DEFAULT_BULK_BATCH_ENTRIES: usize = 100_000;
/// The default batch bound in encoded bytes, see [`BulkLoad::batch_bytes`].
pub const DEFAULT_BULK_BATCH_BYTES: usize = 64 << 20;

/// The progress callback of a [`BulkLoad`].
type BatchCallback<'f> = Box<dyn FnMut(&BulkReport) + 'f>;

/// A configured bulk load into table `T`; from [`Db::bulk_loader`], run with
/// [`load`](BulkLoad::load).
///
/// ```
/// # use tabula::__doc::*;
/// # let (dir, db) = open()?;
/// let value = vec![0xab; 100];
/// let mut seen = 0;
/// let report = db
///     .bulk_loader::<Blobs>()
///     .batch_entries(1000) // commit every 1000 entries ...
///     .batch_bytes(16 << 20) // ... or 16 MiB, whichever comes first
///     .on_batch(|r| seen = r.entries) // after each committed batch
///     .load((0..5000u64).map(|k| (k, &value)))?;
/// assert_eq!((report.entries, report.batches), (5000, 5));
/// assert_eq!(seen, 5000);
/// # Ok::<(), tabula::Error>(())
/// ```
#[must_use = "a bulk loader does nothing until `load` is called"]
pub struct BulkLoad<'db, 'f, S: Schema, T: Table> {
    db: &'db Db<S>,
    batch_entries: usize,
    batch_bytes: usize,
    sync: bool,
    on_batch: Option<BatchCallback<'f>>,
    version: Option<u64>,
    _table: PhantomData<fn() -> T>,
}

impl<S: Schema> Db<S> {
    /// Loads entries in increasing key order into table `T`, committing a batch every
    /// [`DEFAULT_BULK_BATCH_ENTRIES`] entries or [`DEFAULT_BULK_BATCH_BYTES`] encoded bytes, and
    /// makes the whole load durable with one flush at the end. The fast way to fill a table
    /// from sorted data; [`bulk_loader`](Db::bulk_loader) sets the batch size and a progress
    /// callback.
    ///
    /// Entries are `(key, value)` pairs, each owned or borrowed. Each key must sort after
    /// every key already in the table and after the key before it (strictly: an equal key is
    /// out of order). In a `dupsort` table a key may repeat with strictly increasing values.
    ///
    /// A table declared `indexed` is loaded with its indexes: each entry's index entries are
    /// written in its batch (random writes into the index tables, so slower than a load of a
    /// table without indexes), and an entry whose unique index key another row holds fails
    /// the load with [`Error::UniqueViolation`] like any failing entry.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let names = vec![(1u64, "one".to_string()), (2, "two".to_string())];
    /// let report = db.bulk_load::<Names>(&names)?; // borrowed pairs
    /// assert_eq!((report.entries, report.batches), (2, 1));
    ///
    /// db.bulk_load::<Names>(vec![(3u64, "three".to_string())])?; // owned pairs
    /// assert_eq!(db.read()?.len::<Names>()?, 3);
    ///
    /// // Each key must sort after the table's last key.
    /// let late = db.bulk_load::<Names>([(2u64, "again".to_string())]);
    /// assert!(matches!(late, Err(tabula::Error::AppendOutOfOrder { .. })));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Durability and crashes
    ///
    /// The load holds the writer lock from start to end: other writers wait, readers see each
    /// batch as it commits. The batches before the last commit without a flush; the last one
    /// commits under the database's [`SyncMode`](crate::SyncMode) and then everything is
    /// flushed once (`mdbx_env_sync_ex`). If the process or the machine dies mid-load:
    ///
    /// - What was committed before the load is never damaged, and lost only as far as the
    ///   `SyncMode` allows for any commit: in `SyncMode::Durable`, the default, never (it was
    ///   flushed, and libmdbx does not overwrite the pages of the last flushed commit until a
    ///   newer one is flushed).
    /// - The batch in progress is lost.
    /// - After a process crash (kill, panic with `abort`) the batches committed so far stay:
    ///   their pages are in the OS page cache, and libmdbx accepts the unflushed commit when it
    ///   is reopened in the same boot.
    /// - After a system crash or power loss the database rolls back to the last flushed commit:
    ///   any number of the load's batches, down to none, may be gone (libmdbx flushes on its own
    ///   once 1 GiB is unflushed, so in a long load the rollback may stop partway).
    ///
    /// Either way the file is consistent and a load that failed can resume after the table's
    /// last key. A load that returned `Ok` is durable (with [`BulkLoad::sync_at_end`], the
    /// default). `SyncMode::UtterlyNoSync` is the exception, as for any of its commits: a
    /// system crash during the load may corrupt the file.
    ///
    /// # Errors
    ///
    /// [`Error::AppendOutOfOrder`] naming the table, the key and the table's last key when a key
    /// does not sort after the one before; [`Error::UniqueViolation`]; [`Error::TooLarge`], [`Error::Encode`],
    /// [`Error::MapFull`], [`Error::Mdbx`] for an entry; [`Error::DiskFull`] when the file
    /// system fills up; [`Error::Env`] when a commit, the final flush or the write transaction
    /// fails otherwise (or the database was opened read-only). On error
    /// the batch in progress is rolled back, the batches committed before it stay, and they
    /// are flushed before the error is returned (best effort: the error returned is the first
    /// one).
    pub fn bulk_load<T: Writable>(
        &self,
        entries: impl IntoIterator<Item = impl BulkEntry<T>>,
    ) -> Result<BulkReport>
    where
        S: Contains<T>,
    {
        self.bulk_loader::<T>().load(entries)
    }

    /// A bulk load into table `T` with settings: batch size, progress callback, final flush.
    /// See [`bulk_load`](Db::bulk_load) for what it does and [`BulkLoad`] for an example.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let report = db.bulk_loader::<Names>().batch_entries(2).load([
    ///     (1u64, "one".to_string()),
    ///     (2, "two".to_string()),
    ///     (3, "three".to_string()),
    /// ])?;
    /// assert_eq!((report.entries, report.batches), (3, 2));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn bulk_loader<T: Writable>(&self) -> BulkLoad<'_, 'static, S, T>
    where
        S: Contains<T>,
    {
        BulkLoad {
            db: self,
            batch_entries: DEFAULT_BULK_BATCH_ENTRIES,
            batch_bytes: DEFAULT_BULK_BATCH_BYTES,
            sync: true,
            on_batch: None,
            version: None,
            _table: PhantomData,
        }
    }
}

impl<'db, 'f, S: Schema + Contains<T>, T: Table> BulkLoad<'db, 'f, S, T> {
    /// Commit a batch after this many entries (default [`DEFAULT_BULK_BATCH_ENTRIES`]; 0 is
    /// taken as 1).
    ///
    /// Keep batches large: under `SyncMode::Durable` libmdbx writes every meta page, that of an
    /// unflushed batch commit too, through a descriptor opened with `O_DSYNC`, so each batch
    /// still costs one synchronous 4 KiB write. With 1,000-entry batches a load cost 0.7–4 µs
    /// per entry on the benchmark machine, about what plain durable commits cost; with 100,000
    /// it is noise.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let entries = (1..=5u64).map(|k| (k, k.to_string()));
    /// let report = db.bulk_loader::<Names>().batch_entries(2).load(entries)?;
    /// assert_eq!(report.batches, 3); // 2 + 2 + 1 entries
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn batch_entries(mut self, entries: usize) -> Self {
        self.batch_entries = entries.max(1);
        self
    }

    /// Commit a batch once its encoded keys and values reach this many bytes (default
    /// [`DEFAULT_BULK_BATCH_BYTES`]). A batch holds at least one entry. The bound caps the
    /// memory a batch's dirty pages take (libmdbx keeps them in memory until the commit, and
    /// writes them out early, "spills", past its dirty-page limit).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let entries = [(1u64, "a".to_string()), (2, "b".to_string()), (3, "c".to_string())];
    /// let report = db.bulk_loader::<Names>().batch_bytes(1).load(entries)?;
    /// assert_eq!(report.batches, 3); // one entry per batch at least
    /// assert_eq!(report.bytes, 3 * (8 + 2)); // a u64 key, a 1-byte string with its length
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes.max(1);
        self
    }

    /// Whether to flush everything with one `mdbx_env_sync_ex` at the end (default `true`).
    /// With `false` the last batch commits under the database's
    /// [`SyncMode`](crate::SyncMode) and nothing more: under `SyncMode::Durable` that commit
    /// flushes anyway; under the no-sync modes the load is then as durable as any commit.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let entries = (1..=5u64).map(|k| (k, k.to_string()));
    /// let report = db.bulk_loader::<Names>().sync_at_end(false).load(entries)?;
    /// assert_eq!(report.entries, 5);
    /// assert_eq!(db.read()?.len::<Names>()?, 5); // committed all the same
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn sync_at_end(mut self, yes: bool) -> Self {
        self.sync = yes;
        self
    }

    /// Calls `f` with the running totals after each batch commits (not yet flushed). Cheap: one
    /// call per batch. It runs while the load holds the writer lock: reading the database from
    /// it is fine; `Db::write` on the same thread fails (`MDBX_BUSY`), on another one it waits
    /// until the load ends.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let entries = (1..=5u64).map(|k| (k, k.to_string()));
    /// let mut totals = Vec::new();
    /// db.bulk_loader::<Names>()
    ///     .batch_entries(2)
    ///     .on_batch(|report| totals.push(report.entries))
    ///     .load(entries)?;
    /// assert_eq!(totals, [2, 4, 5]);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn on_batch<'g>(self, f: impl FnMut(&BulkReport) + 'g) -> BulkLoad<'db, 'g, S, T> {
        BulkLoad {
            db: self.db,
            batch_entries: self.batch_entries,
            batch_bytes: self.batch_bytes,
            sync: self.sync,
            on_batch: Some(Box::new(f)),
            version: self.version,
            _table: PhantomData,
        }
    }

    /// The version of the load's changes, for a table declared `history`
    /// ([`Tx::set_version`](crate::Tx::set_version)): every batch records its rows at it.
    /// Without one a load into such a table is refused
    /// ([`Error::NoVersion`](crate::Error::NoVersion)). Under
    /// [`Options::keep_versions`](crate::Options::keep_versions) each batch's commit prunes
    /// the history as a transaction's commit does.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open_chain()?;
    /// let entries = (1..=5u64).map(|k| (k, k.to_string()));
    /// db.bulk_loader::<Ledger>().batch_entries(2).version(7).load(entries)?;
    /// let tx = db.read()?;
    /// assert_eq!(tx.versions::<Ledger>(&5)?, [7]);
    /// assert_eq!(tx.get_as_of::<Ledger>(&5, 6)?, None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }

    /// Runs the load. See [`Db::bulk_load`] for the order rules, crash semantics and errors.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// // In a dupsort table a key repeats with increasing values.
    /// let entries = [(1u64, "a"), (1, "b"), (2, "a")].map(|(k, v)| (k, v.to_string()));
    /// let report = db.bulk_loader::<Topics>().load(entries)?;
    /// assert_eq!(report.entries, 3);
    /// assert_eq!(db.read()?.dups::<Topics>(&1).count(), 2);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Db::bulk_load`].
    pub fn load(
        mut self,
        entries: impl IntoIterator<Item = impl BulkEntry<T>>,
    ) -> Result<BulkReport> {
        let db = self.db;
        let mut report = BulkReport::default();
        let failed = self.run(entries.into_iter(), &mut report).err();
        // Flush what was committed, after an error too: the committed batches are the load's
        // progress, and a later `Durable` commit would flush them anyway.
        let synced = if self.sync && report.batches > 0 {
            db.shared.env().sync().map_err(|code| {
                db.shared.fail(
                    code,
                    At::commit(Some(T::NAME), "flush the bulk load (mdbx_env_sync_ex)"),
                )
            })
        } else {
            Ok(())
        };
        match failed {
            Some(e) => Err(e),
            None => synced.map(|()| report),
        }
    }

    /// The batch bounds: entries, bytes.
    fn limits(&self) -> (usize, usize) {
        (self.batch_entries, self.batch_bytes)
    }

    /// Appends every entry, keeping `report` at the totals committed so far.
    fn run(
        &mut self,
        mut entries: impl Iterator<Item = impl BulkEntry<T>>,
        report: &mut BulkReport,
    ) -> Result<()> {
        let db = self.db;
        if db.shared.run().read_only {
            return Err(Error::ReadOnly {
                op: "load a table",
                path: db.shared.path().to_path_buf(),
            });
        }
        let Some(mut entry) = entries.next() else {
            return Ok(());
        };
        let dbi = dbi_of::<S, T>(db);
        let flags = if T::FLAGS.dupsort {
            put::APPEND_PAIR_STRICT
        } else {
            put::APPEND_STRICT
        };
        let mut txn = match db.shared.env().begin(false) {
            Ok(t) => t,
            Err(code) => return Err(db.shared.fail(code, At::env("begin a bulk load"))),
        };
        pipeline::begin(&db.shared);
        if let Some(version) = self.version {
            db.shared.history().set_version(version);
        }
        // Declared after `txn`, so dropped before it on every return.
        let _no_growth_flush = NoGrowthFlush::set(db.shared.env());
        let mut scratch = Vec::new();
        loop {
            // One batch: entries until a bound is reached or the input ends. On error `txn`
            // is dropped (aborted): the batch in progress is lost.
            let (n, bytes, more) = if index::On::<S, T>::ANY {
                // Each entry with its index entries, through the path `Tx::append` takes.
                fill_batch(&mut entries, &mut entry, self.limits(), |e| {
                    append_indexed::<S, T>(db, &mut txn, dbi, &mut scratch, e)
                })?
            } else {
                let mut cursor = match txn.write_cursor(dbi) {
                    Ok(c) => c,
                    Err(code) => {
                        return Err(db.shared.fail(code, At::of::<T>("open cursor")));
                    }
                };
                fill_batch(&mut entries, &mut entry, self.limits(), |e| {
                    append_one::<S, T>(db, &mut cursor, &mut scratch, e, flags)
                })?
            };
            let batch = BulkReport {
                entries: report.entries + n as u64,
                batches: report.batches + 1,
                bytes: report.bytes + bytes as u64,
            };
            // Each batch's commit is one commit of the database: one event of the commit feed
            // (`hub.rs`), one commit metric.
            let at = At::commit(Some(T::NAME), "commit a bulk-load batch");
            if more {
                // The next batch is a transaction that begins now.
                pipeline::checkpoint(&db.shared, &db.telemetry, &mut txn, at)?;
                if let Some(version) = self.version {
                    db.shared.history().set_version(version);
                }
            } else {
                // The last batch: a plain commit, under the database's sync mode.
                pipeline::commit(&db.shared, &db.telemetry, txn, at)?;
                *report = batch;
                if let Some(f) = self.on_batch.as_mut() {
                    f(report);
                }
                return Ok(());
            }
            *report = batch;
            if let Some(f) = self.on_batch.as_mut() {
                f(report);
            }
        }
    }
}

/// The auto-sync threshold during a load; see [`NoGrowthFlush`].
const LOAD_SYNC_BYTES: u64 = 1 << 30;

/// Sets libmdbx's auto-sync threshold (`MDBX_opt_sync_bytes`) for the length of a load when
/// none is set (a `SafeNoSync` env keeps its own, see `Options::flush_threshold`), and restores
/// it on drop.
///
/// Without a threshold, each time a weak commit finds the file full at its current size
/// libmdbx first flushes everything and writes a steady meta page (so the pages freed since
/// the last steady commit may be reused) before growing the file: a load of 130 MB in 16 MiB
/// growth steps paid about 25 flushes of up to 16 MiB each, which made it ~1.5× slower. An
/// append frees next to nothing to reuse, and the load flushes
/// once at the end anyway. With the threshold set libmdbx grows the file instead and flushes
/// only when 1 GiB is unflushed, which also bounds what a system crash can roll back. The
/// last steady commit stays untouched either way, so the crash guarantees do not change.
///
/// Set while the load owns the write transaction (libmdbx then polls no flush), so no other
/// writer of any process commits while it is in force. The value lives in the lock file: if
/// the process dies mid-load it stays until the next load or until every process has closed
/// the database.
struct NoGrowthFlush<'e> {
    env: &'e engine::Env,
    set: bool,
}

impl<'e> NoGrowthFlush<'e> {
    fn set(env: &'e engine::Env) -> Self {
        let set = env.sync_bytes() == Ok(0) && env.set_sync_bytes(LOAD_SYNC_BYTES).is_ok();
        NoGrowthFlush { env, set }
    }
}

impl Drop for NoGrowthFlush<'_> {
    fn drop(&mut self) {
        if self.set {
            // Best effort: a failure leaves a 1 GiB auto-sync threshold, which is harmless.
            let _ = self.env.set_sync_bytes(0);
        }
    }
}

/// Appends one entry through the load's cursor; returns its encoded size.
#[inline]
fn append_one<S: Schema + Contains<T>, T: Table>(
    db: &Db<S>,
    cursor: &mut RawWriteCursor<'_>,
    scratch: &mut Vec<u8>,
    entry: &impl BulkEntry<T>,
    flags: u32,
) -> Result<usize> {
    let (key, value) = entry.parts();
    with_key::<T, _, _>(key, |k| {
        let v = <T::Codec as Value>::encode(value.borrow(), scratch).map_err(|source| {
            Error::Encode {
                table: T::NAME,
                key: KeyHex::of::<T>(k),
                source,
            }
        })?;
        let mut landing = Landing::Unmoved;
        let op = "bulk load";
        pipeline::put::<T>(
            cursor,
            &db.shared,
            false,
            (k, v),
            None,
            flags,
            op,
            &mut landing,
        )?;
        Ok(k.len() + v.len())
    })
}

/// Appends `entry`, then the entries after it, with `append` (which returns the bytes it
/// wrote) until one of the `limits` (entries, bytes) is reached or the input ends; `entry` is
/// then the first entry of the next batch. Returns the entries and bytes appended and whether
/// more entries follow.
fn fill_batch<E>(
    entries: &mut impl Iterator<Item = E>,
    entry: &mut E,
    (max_entries, max_bytes): (usize, usize),
    mut append: impl FnMut(&E) -> Result<usize>,
) -> Result<(usize, usize, bool)> {
    let (mut n, mut bytes) = (0usize, 0usize);
    loop {
        bytes += append(entry)?;
        n += 1;
        match entries.next() {
            Some(next) => *entry = next,
            None => return Ok((n, bytes, false)),
        }
        if n >= max_entries || bytes >= max_bytes {
            return Ok((n, bytes, true));
        }
    }
}

/// [`append_one`] for a table with indexes: the entry and its index entries, unique keys
/// checked first ([`pipeline::put`]).
fn append_indexed<S: Schema + Contains<T>, T: Table>(
    db: &Db<S>,
    txn: &mut engine::RawTxn,
    dbi: engine::Dbi,
    scratch: &mut Vec<u8>,
    entry: &impl BulkEntry<T>,
) -> Result<usize> {
    let (key, value) = entry.parts();
    with_key::<T, _, _>(key, |k| {
        let v = <T::Codec as Value>::encode(value.borrow(), scratch).map_err(|source| {
            Error::Encode {
                table: T::NAME,
                key: KeyHex::of::<T>(k),
                source,
            }
        })?;
        let row = Some(value.borrow());
        let mut target = InTxn { raw: txn, dbi };
        let (flags, op) = (put::APPEND_STRICT, "bulk load");
        let mut landing = Landing::Unmoved;
        pipeline::put::<T>(
            &mut target,
            &db.shared,
            true,
            (k, v),
            row,
            flags,
            op,
            &mut landing,
        )?;
        Ok(k.len() + v.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &std::path::Path) -> engine::Env {
        engine::Env::open(dir, &engine::EnvConfig::for_tests(None, 1 << 30)).unwrap()
    }

    /// The threshold is really set during a load and put back after it: were `set_sync_bytes`
    /// refused (libmdbx allows it only on an open env), the load would silently flush at each
    /// growth step again.
    #[test]
    fn the_auto_sync_threshold_is_set_for_a_load_and_restored() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        assert_eq!(env.sync_bytes(), Ok(0));
        let txn = env.begin(false).unwrap();
        {
            let guard = NoGrowthFlush::set(&env);
            assert!(guard.set);
            assert_eq!(env.sync_bytes(), Ok(LOAD_SYNC_BYTES));
        }
        assert_eq!(env.sync_bytes(), Ok(0));
        drop(txn);
        // A threshold someone else set is left alone.
        env.set_sync_bytes(64 << 20).unwrap();
        {
            let guard = NoGrowthFlush::set(&env);
            assert!(!guard.set);
        }
        assert_eq!(env.sync_bytes(), Ok(64 << 20));
    }

    #[test]
    fn dupsort_flags_refuse_equal_pairs() {
        assert_ne!(put::APPEND_PAIR_STRICT & put::APPENDDUP, 0);
        assert_ne!(put::APPEND_PAIR_STRICT & put::APPEND, 0);
    }
}
