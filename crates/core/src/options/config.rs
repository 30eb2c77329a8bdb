//! The options as the engine takes them ([`EnvConfig`]) and as an open database keeps them
//! while it runs ([`RunConfig`]).

use std::sync::Arc;

use super::slow_reader::{SlowReader, SlowReaderAction, SlowReaderPolicy};
use super::{DEFAULT_FLUSH_THRESHOLD, DEFAULT_GROWTH_STEP, Options, SyncMode};
use crate::engine::{self, EnvConfig};
use crate::error::Result;

impl Options {
    /// The environment's configuration, once [`validate`](Self::validate) accepted the
    /// options: what every open (a schema's startup, the schema-less `UntypedDb`) opens with.
    pub(crate) fn checked_env_config(
        &self,
        schema_tables: usize,
        own_tables: usize,
    ) -> Result<EnvConfig> {
        self.validate(schema_tables, own_tables)?;
        Ok(self.env_config(schema_tables, own_tables))
    }

    /// `own_tables`: Tabula's own tables the startup opens (the meta table, and the zstd
    /// dictionary table for a schema with `ZstdDict` tables).
    fn env_config(&self, schema_tables: usize, own_tables: usize) -> EnvConfig {
        EnvConfig {
            max_tables: (schema_tables + own_tables) as u64 + u64::from(self.extra_tables),
            max_readers: self.max_readers.map(u64::from),
            // Sizes above `isize::MAX` are refused by `validate`; `-1` is libmdbx's default.
            geometry: [
                self.min_size,
                self.now_size,
                Some(self.max_size),
                Some(self.growth_step.unwrap_or(DEFAULT_GROWTH_STEP)),
                self.shrink_threshold,
                self.page_size,
            ]
            .map(|v| v.map_or(-1, |v| isize::try_from(v).unwrap_or(isize::MAX))),
            sync: match self.sync {
                SyncMode::Durable => engine::Durability::Durable,
                SyncMode::NoMetaSync => engine::Durability::NoMetaSync,
                SyncMode::SafeNoSync => engine::Durability::SafeNoSync,
                SyncMode::UtterlyNoSync => engine::Durability::UtterlyNoSync,
            },
            sync_bytes: self.sync_bytes(),
            read_only: self.read_only,
            exclusive: self.exclusive,
            write_map: self.write_map,
            no_sub_dir: self.no_sub_dir,
            validation: self.validation,
            mode: self.file_mode,
            slow_readers: self.slow_readers(),
            tuning: engine::Tuning {
                // libmdbx's unit: 1/65536 of a page (the range is checked by `validate`).
                merge_threshold: self.tuning.merge_threshold.map(|p| p * 65_536 / 100),
                ..self.tuning
            },
        }
    }

    /// The auto-sync threshold to set after the open, if any: see [`Options::flush_threshold`].
    fn sync_bytes(&self) -> Option<u64> {
        match (self.read_only, self.sync, self.flush_threshold) {
            (true, ..) => None,
            (false, SyncMode::SafeNoSync, threshold) => Some(threshold.unwrap_or(
                // Pages freed since the last flush are not reused, so a threshold near the
                // map's size would fill it (`MapFull` at 256 MiB in a 4 MiB map,
                // `tests/read_snapshots.rs`): a quarter of it at most.
                DEFAULT_FLUSH_THRESHOLD.min(self.max_size as u64 / 4),
            )),
            (false, SyncMode::UtterlyNoSync, threshold) => threshold,
            (false, SyncMode::Durable | SyncMode::NoMetaSync, _) => None,
        }
    }

    /// The engine's long-reader settings, when either option is set.
    fn slow_readers(&self) -> Option<engine::SlowReaders> {
        if self.max_read_age.is_none() && self.on_slow_reader.is_none() {
            return None;
        }
        let max_age_ms = self.max_read_age.map_or(u64::MAX, |age| {
            u64::try_from(age.as_millis()).unwrap_or(u64::MAX - 1)
        });
        let policy = self
            .on_slow_reader
            .clone()
            .map(|SlowReaderPolicy(callback)| {
                let policy: Arc<dyn Fn(&engine::Laggard) -> engine::Verdict + Send + Sync> =
                    Arc::new(move |laggard: &engine::Laggard| {
                        let reader = SlowReader::from_laggard(laggard);
                        match callback(&reader) {
                            SlowReaderAction::Grow => engine::Verdict::Grow,
                            SlowReaderAction::Retry => engine::Verdict::Retry,
                            SlowReaderAction::Cut => engine::Verdict::Cut {
                                begun_by_ms: u64::MAX,
                            },
                        }
                    });
                policy
            });
        Some(engine::SlowReaders { max_age_ms, policy })
    }

    /// What the open database keeps of these options while it runs, converted once (the rest
    /// goes to libmdbx through [`env_config`](Self::env_config)).
    pub(crate) fn run_config(&self) -> RunConfig {
        let long_read_ms = self
            .long_read_warning
            .map_or(u64::MAX, |d| d.as_millis().min(u128::from(u64::MAX)) as u64);
        RunConfig {
            read_only: self.read_only,
            long_read_ms,
            long_read_ns: long_read_ms.saturating_mul(1_000_000),
            read_clock: long_read_ms != u64::MAX || cfg!(feature = "metrics"),
            reuse_snapshots: self.reuse_read_snapshots,
            keep_versions: self.keep_versions,
        }
    }
}

/// The options an open database consults while it runs: [`Options`] converted once, at open
/// ([`Options::run_config`]), and owned by the shared state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunConfig {
    /// Opened read-only: writes are refused.
    pub(crate) read_only: bool,
    /// Read transactions open at least this long (ms) warn when they end; `u64::MAX` = never.
    pub(crate) long_read_ms: u64,
    /// The same in nanoseconds (saturating), for `Tx`, which times itself in nanoseconds.
    pub(crate) long_read_ns: u64,
    /// Whether a read transaction reads the coarse clock when it begins and ends: the
    /// long-read warning is on or metrics record read ages. Decided once, so the read path
    /// branches on a plain `bool`.
    pub(crate) read_clock: bool,
    /// Finished read transactions are parked on their snapshot rather than reset.
    pub(crate) reuse_snapshots: bool,
    /// Each commit prunes the histories it wrote to their last this many versions
    /// ([`Options::keep_versions`]).
    pub(crate) keep_versions: Option<u64>,
}
