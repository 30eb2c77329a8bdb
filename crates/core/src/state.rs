//! What an open database shares between its transactions: the environment, the handle array,
//! the pools of parked read transactions and cursors ([`Shared`]), and the [`Db`] that owns them.
//! Below the typed layer: transactions hold a `&Db` and reach their handles here.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_queue::ArrayQueue;

use crate::codec::DictionaryLease;
use crate::diagnose;
use crate::engine::{self, Code, Dbi, Env, RawTxn};
use crate::error::{At, Error, Result};
use crate::hub::Hub;
use crate::options::RunConfig;
use crate::table::{Schema, TableInfo};
use crate::telemetry;

pub(crate) struct Shared {
    // Field order is drop order: parked read txns are aborted before the env closes.
    slots: engine::TxnSlots,
    pool: ArrayQueue<RawTxn>,
    /// Unbound cursor objects for reuse by read cursors (closed before the env).
    cursors: engine::CursorCache,
    dbis: Box<[Dbi]>,
    names: Box<[&'static str]>,
    /// The schema's tables, in ID order (the write cursors find a table's indexes here).
    tables: &'static [TableInfo],
    /// libmdbx's size limits of each table, in ID order: what a write of an indexed table
    /// checks its index entries against before it writes anything (`index/write.rs`).
    limits: Box<[Limits]>,
    /// The smallest key and value limits among the schema's index tables: a write whose index
    /// keys and row key are within them needs no check per entry.
    index_limits: (usize, usize),
    env: Env,
    path: PathBuf,
    /// The options it keeps while it runs, converted once at open.
    run: RunConfig,
    /// Whether finished read txns are parked now: `reuse_snapshots` until a write runs out of
    /// space, `false` from then on (the parked ones were freed, finished ones are reset, so
    /// later writes reclaim every page no live reader needs). The one flag the read path loads
    /// per begin and per end.
    ///
    /// It also tells `Db::read` how a pooled transaction was left: `park` resets instead of
    /// parking only after it loaded `false` here, and then hands the transaction over through
    /// a thread slot or the pool (release/acquire). So a reader that takes a transaction and
    /// then loads `true` took a parked one: the reset one's `false` happened before its load
    /// and the flag never goes back to `true` (read-read coherence).
    parking: AtomicBool,
    /// The commit feed's subscribers, the key watchers and the write transaction's change
    /// log (`hub.rs`).
    watch: Hub,
    /// The write transaction's version, for tables declared `history` (`history/`).
    history: crate::version::State,
    /// The zstd dictionaries this database loaded into the process-wide registry (released
    /// when it closes).
    _dictionaries: DictionaryLease,
}

/// libmdbx's size limits of one table at the database's page size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The largest key, in bytes (`mdbx_env_get_maxkeysize_ex`).
    pub(crate) key: usize,
    /// The largest value, in bytes (`mdbx_env_get_maxvalsize_ex`).
    pub(crate) value: usize,
    /// The table's libmdbx flags (for [`Error::TooLarge`]'s advice).
    pub(crate) flags: u32,
}

impl Limits {
    /// The limits of a table with `flags` in `env`.
    pub(crate) fn of(env: &Env, flags: crate::table::TableFlags) -> Limits {
        let flags = engine::table_flags(flags.dupsort, flags.integer_key);
        Limits {
            key: env.max_key_size(flags),
            value: env.max_value_size(flags),
            flags,
        }
    }
}

impl Shared {
    /// What the database at `path` shares, once the startup transaction opened the handles
    /// `dbis` of `tables` (in ID order) and committed: the pools sized by libmdbx's reader
    /// table (`max_readers`), each table's size limits, the options kept while it runs.
    pub(crate) fn new(
        env: Env,
        path: PathBuf,
        mut run: RunConfig,
        tables: &'static [TableInfo],
        dbis: Box<[Dbi]>,
        dictionaries: DictionaryLease,
        max_readers: u32,
    ) -> Shared {
        // Parked read txns each hold a reader slot: keep the pool well below the slot count so
        // other processes and fresh begins still find one.
        let parked = (max_readers as usize / 2).clamp(2, 256);
        let slots = engine::TxnSlots::new((parked / 2).min(64));
        let cursors = engine::CursorCache::new(slots.len());
        let pool = parked - slots.len();
        // The limits depend on the flags alone: asked of libmdbx once for each of the four.
        let mut by_flags: [Option<Limits>; 4] = [None; 4];
        let limits: Box<[Limits]> = tables
            .iter()
            .map(|t| {
                let at = usize::from(t.flags.dupsort) * 2 + usize::from(t.flags.integer_key);
                *by_flags[at].get_or_insert_with(|| Limits::of(&env, t.flags))
            })
            .collect();
        let index_limits = tables
            .iter()
            .zip(&limits)
            .filter(|(t, _)| t.index.is_some())
            .fold((usize::MAX, usize::MAX), |(k, v), (_, l)| {
                (k.min(l.key), v.min(l.value))
            });
        // libmdbx parks through the txn's reader slot; without a reader table (a read-only
        // open on read-only media: libmdbx reports `u32::MAX` readers) a txn has none, so
        // reset instead.
        run.reuse_snapshots &= max_readers != u32::MAX;
        Shared {
            slots,
            cursors,
            pool: ArrayQueue::new(pool),
            dbis,
            names: tables.iter().map(|t| t.name).collect(),
            tables,
            limits,
            index_limits,
            env,
            path,
            run,
            parking: AtomicBool::new(run.reuse_snapshots),
            watch: Hub::default(),
            history: Default::default(),
            _dictionaries: dictionaries,
        }
    }

    /// Every table's handle, by table ID: what every typed call indexes.
    #[inline]
    pub(crate) fn dbis(&self) -> &[Dbi] {
        &self.dbis
    }

    /// Every table's name, by table ID.
    #[inline]
    pub(crate) fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// The schema's tables, in ID order (a write finds a table's indexes here).
    #[inline]
    pub(crate) fn tables(&self) -> &'static [TableInfo] {
        self.tables
    }

    /// libmdbx's size limits of each table, by table ID.
    #[inline]
    pub(crate) fn limits(&self) -> &[Limits] {
        &self.limits
    }

    /// The smallest key and value limits among the schema's index tables.
    #[inline]
    pub(crate) fn index_limits(&self) -> (usize, usize) {
        self.index_limits
    }

    /// The unbound cursor objects read cursors reuse.
    #[inline]
    pub(crate) fn cursors(&self) -> &engine::CursorCache {
        &self.cursors
    }

    /// The environment.
    #[inline]
    pub(crate) fn env(&self) -> &Env {
        &self.env
    }

    /// The database's directory.
    #[inline]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The options it keeps while it runs.
    #[inline]
    pub(crate) fn run(&self) -> &RunConfig {
        &self.run
    }

    /// The watchers' hub.
    #[inline]
    pub(crate) fn watch(&self) -> &Hub {
        &self.watch
    }

    /// The write transaction's version, for tables declared `history`.
    #[inline]
    pub(crate) fn history(&self) -> &crate::version::State {
        &self.history
    }

    /// `code` from the operation `at` as an [`Error`] ([`diagnose::fail`], the one conversion).
    ///
    /// A full map also frees the parked read transactions and stops parking for the rest of
    /// this `Db`'s life: with the file at its upper bound, libmdbx 0.14.4 ousts a parked
    /// snapshot when a write needs space, but that write can still fail with `MDBX_MAP_FULL`
    /// where it would succeed with no reader parked (`tests/read_snapshots.rs` reproduces it).
    #[cold]
    #[inline(never)]
    pub(crate) fn fail(&self, code: Code, at: At<'_>) -> Error {
        if code == Code::MAP_FULL && self.parking.swap(false, Ordering::Relaxed) {
            tracing::warn!(
                target: "tabula",
                "the map is full: finished read transactions are reset from now on instead of \
                 parked on their snapshot (Options::reuse_read_snapshots)"
            );
            while let Some(txn) = self.slots.take_any() {
                drop(txn); // aborts, freeing its reader slot
            }
            while let Some(txn) = self.pool.pop() {
                drop(txn);
            }
        }
        diagnose::fail(code, at, &self.env, &self.path)
    }

    /// Takes a read transaction object on the latest snapshot, from the pool when one is
    /// parked, and hands it to `then` (what [`Db::read`](crate::Db::read) and
    /// [`Db::read_owned`](crate::Db::read_owned) start from); it goes back with [`park`](Self::park).
    /// A continuation rather than a returned `Result<RawTxn>`: inlined, `read` compiles to
    /// what it was when this was its body (returning the transaction cost 6 instructions per
    /// `read`, callgrind).
    ///
    /// The fast path, inlined into the caller: the transaction this thread parked, unparked and
    /// refreshed — the calls raw libmdbx code makes for its own parked transaction. Everything
    /// else (the shared pool, other threads' slots, a fresh begin, reset transactions) is
    /// [`begin_read_slow`](Self::begin_read_slow).
    #[inline(always)]
    pub(crate) fn begin_read_then<R>(&self, then: impl FnOnce(RawTxn) -> R) -> Result<R> {
        let raw = match self.slots.take() {
            // Loaded after the take: `true` means the transaction was parked, not reset (see
            // `Shared::parking`), so it needs no look at its flags.
            Some(mut txn) if self.parking.load(Ordering::Relaxed) => match txn.resume_parked() {
                Ok(()) => txn,
                Err(code) => return Err(self.begin_read_failed(code)),
            },
            mine => self.begin_read_slow(mine)?,
        };
        Ok(then(raw))
    }

    /// The rest of [`begin_read_then`](Self::begin_read_then): `mine` (this thread's slot, when
    /// parking is off), then the shared pool, then any slot (threads that ended), then a fresh
    /// `mdbx_txn_begin`.
    #[cold]
    #[inline(never)]
    fn begin_read_slow(&self, mine: Option<RawTxn>) -> Result<RawTxn> {
        let parked = mine
            .or_else(|| self.pool.pop())
            .or_else(|| self.slots.take_any());
        match parked {
            Some(mut txn) => {
                let made_current = if !self.run.reuse_snapshots {
                    txn.renew()
                } else if self.parking.load(Ordering::Relaxed) {
                    txn.resume_parked() // loaded after the take, as in the fast path
                } else {
                    txn.resume() // parked or reset: asks libmdbx which
                };
                match made_current {
                    Ok(()) => Ok(txn),
                    Err(code) => Err(self.begin_read_failed(code)),
                }
            }
            None => self
                .env
                .begin(true)
                .map_err(|code| self.begin_read_failed(code)),
        }
    }

    #[cold]
    #[inline(never)]
    fn begin_read_failed(&self, code: engine::Code) -> Error {
        self.fail(code, At::env("begin read transaction"))
    }

    /// Returns a finished read transaction to the pool, parked on its snapshot or reset (see
    /// [`Options::reuse_read_snapshots`](crate::Options::reuse_read_snapshots)), or frees it
    /// when the pool is full or parking fails. The fast path (parked into this thread's free
    /// slot) is inline; the rest is [`park_slow`](Self::park_slow).
    #[inline]
    pub(crate) fn park(&self, mut txn: RawTxn) {
        if self.parking.load(Ordering::Relaxed) {
            if txn.park_latest().is_err() {
                return; // dropped: aborted, its reader slot freed
            }
            if let Err(txn) = self.slots.put(txn) {
                self.park_slow(txn, true);
            }
        } else {
            self.park_slow(txn, false);
        }
    }

    /// [`park`](Self::park) when the transaction is not parked yet (`parked == false`: reset
    /// it) or this thread's slot is taken: into the shared pool; a full pool drops (aborts) the
    /// txn, freeing its reader slot.
    #[cold]
    #[inline(never)]
    fn park_slow(&self, mut txn: RawTxn, parked: bool) {
        if !parked {
            if txn.reset().is_err() {
                return; // dropped: aborted
            }
            match self.slots.put(txn) {
                Ok(()) => return,
                Err(back) => txn = back,
            }
        }
        let _ = self.pool.push(txn);
    }
}

/// An open database with schema `S`: every table created, verified and its handle opened.
///
/// Obtained only from the startup step (`tabula::open`); there is no other way to open a table.
/// `Db` is `Send + Sync`: share it with `Arc` or `&`. Each [`read`](Db::read) reuses a parked
/// libmdbx read transaction from a lock-free pool; [`write`](Db::write) begins the single write
/// transaction.
pub struct Db<S: Schema> {
    pub(crate) shared: Shared,
    /// The labels of its metrics (nothing without the `metrics` feature).
    pub(crate) telemetry: telemetry::Labels,
    pub(crate) _schema: PhantomData<fn() -> S>,
}
