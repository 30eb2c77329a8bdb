//! What an open database shares between its transactions: the environment, the handle array,
//! the pools of parked read transactions and cursors ([`Shared`]), and the [`Db`] that owns them.
//! Below the typed layer: transactions hold a `&Db` and reach their handles here.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_queue::ArrayQueue;

use crate::diagnose;
use crate::engine::{self, Code, Dbi, Env, RawTxn};
use crate::error::{At, Error, Result};
use crate::options::RunConfig;
use crate::table::Schema;
use crate::telemetry;

pub(crate) struct Shared {
    // Field order is drop order: parked read txns are aborted before the env closes.
    pub(crate) slots: engine::TxnSlots,
    pub(crate) pool: ArrayQueue<RawTxn>,
    /// Unbound cursor objects for reuse by read cursors (closed before the env).
    pub(crate) cursors: engine::CursorCache,
    pub(crate) dbis: Box<[Dbi]>,
    pub(crate) names: Box<[&'static str]>,
    /// The schema's tables, in ID order (the write cursors find a table's indexes here).
    pub(crate) tables: &'static [crate::table::TableInfo],
    /// libmdbx's size limits of each table, in ID order: what a write of an indexed table
    /// checks its index entries against before it writes anything (`index/write.rs`).
    pub(crate) limits: Box<[Limits]>,
    /// The smallest key and value limits among the schema's index tables: a write whose index
    /// keys and row key are within them needs no check per entry.
    pub(crate) index_limits: (usize, usize),
    pub(crate) env: Env,
    pub(crate) path: PathBuf,
    /// The options it keeps while it runs, converted once at open.
    pub(crate) run: RunConfig,
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
    pub(crate) parking: AtomicBool,
    /// The commit feed's subscribers, the key watchers and the write transaction's change
    /// log (`watch/hub.rs`).
    pub(crate) watch: crate::watch::hub::Hub,
    /// The write transaction's version, for tables declared `history` (`history/`).
    pub(crate) history: crate::version::State,
    /// The zstd dictionaries this database loaded into the process-wide registry (released
    /// when it closes).
    pub(crate) _dictionaries: crate::codec::DictionaryLease,
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
    _schema: PhantomData<fn() -> S>,
}

impl<S: Schema> Db<S> {
    /// Publishes a database whose handles are all open (the startup path's last step).
    pub(crate) fn publish(shared: Shared) -> Self {
        Db {
            telemetry: telemetry::Labels::new(&shared.path),
            shared,
            _schema: PhantomData,
        }
    }
}

impl<S: Schema> std::fmt::Debug for Db<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.shared.path)
            .field("tables", &self.shared.names)
            .field("read_only", &self.shared.run.read_only)
            .finish()
    }
}
