//! The options checked against libmdbx's limits, alone and together, before libmdbx is called.

use std::time::Duration;

use super::{Options, SyncMode};
use crate::engine;
use crate::error::{Error, Result};

impl Options {
    /// Checks the options against libmdbx's limits, alone and together, before libmdbx is
    /// called: libmdbx refuses a bad value with a bare `EINVAL` (or silently turns a size above
    /// `isize::MAX` into its default), naming neither the option nor the range.
    pub(crate) fn validate(&self, schema_tables: usize, own_tables: usize) -> Result<()> {
        self.validate_counts(schema_tables, own_tables)?;
        self.validate_sizes()?;
        self.validate_flush()?;
        self.validate_tuning()
    }

    /// The page size, the reader slots, the table count, the read age and the versions kept,
    /// each alone.
    fn validate_counts(&self, schema_tables: usize, own_tables: usize) -> Result<()> {
        use engine::limits::{MAX_PAGE_SIZE, MAX_READERS, MAX_TABLES, MIN_PAGE_SIZE};
        if let Some(page) = self.page_size
            && !(page.is_power_of_two() && (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page))
        {
            return bad(
                "page_size",
                bytes(page),
                format!(
                    "is not a valid page size: a power of two from {MIN_PAGE_SIZE} to \
                     {MAX_PAGE_SIZE} bytes"
                ),
            );
        }
        if let Some(age) = self.max_read_age
            && age < Duration::from_millis(1)
        {
            return bad(
                "max_read_age",
                format!("{age:?}"),
                "is too short: the age is measured in milliseconds, so it must be at least 1 ms; \
                 `None` turns the limit off"
                    .to_owned(),
            );
        }
        if self.keep_versions == Some(0) {
            return bad(
                "keep_versions",
                "0".to_owned(),
                "is too small: it keeps the changes of the last n versions, so n must be at \
                 least 1 (the version just written); leave it unset to keep every version"
                    .to_owned(),
            );
        }
        if let Some(readers) = self.max_readers
            && !(1..=MAX_READERS).contains(&readers)
        {
            return bad(
                "max_readers",
                readers.to_string(),
                format!("is out of range: libmdbx allows 1 to {MAX_READERS} reader slots"),
            );
        }
        // The schema's tables and Tabula's own tables come first.
        let fixed = (schema_tables + own_tables) as u64;
        let room = MAX_TABLES.saturating_sub(fixed);
        if u64::from(self.extra_tables) > room {
            return bad(
                "extra_tables",
                self.extra_tables.to_string(),
                format!(
                    "is too many: libmdbx allows {MAX_TABLES} named tables in all, and the \
                     schema's {schema_tables} table{} and Tabula's {} leave room for at most \
                     {room} more",
                    if schema_tables == 1 { "" } else { "s" },
                    if own_tables > 1 {
                        "meta and zstd dictionary tables"
                    } else {
                        "meta table"
                    }
                ),
            );
        }
        Ok(())
    }

    /// The geometry: the upper bound against the page size, and every other size against it.
    fn validate_sizes(&self) -> Result<()> {
        use engine::limits::{
            DEFAULT_LOWER_PAGES, MAX_PAGE_SIZE, MAX_PAGES, META_PAGES, MIN_PAGE_SIZE,
            default_page_size, max_db_size,
        };
        let max = self.max_size;
        // The upper bound: 2^31 pages, and no more than libmdbx maps. Left to libmdbx, the page
        // size grows with the bound (up to 64 KiB pages).
        let top = max_db_size(self.page_size.unwrap_or(MAX_PAGE_SIZE));
        if max > top {
            return match self.page_size {
                Some(page) if max <= max_db_size(MAX_PAGE_SIZE) => bad(
                    "max_size",
                    bytes(max),
                    format!(
                        "is too large for page_size({page}): a database holds at most 2^31 \
                         pages, so with {page}-byte pages max_size must be at most {top} bytes; \
                         lower max_size or raise page_size"
                    ),
                ),
                _ => bad(
                    "max_size",
                    bytes(max),
                    format!("is too large: libmdbx maps at most {top} bytes"),
                ),
            };
        }
        let min_lower = META_PAGES * MIN_PAGE_SIZE;
        if let Some(min) = self.min_size {
            if min != 0 && min < min_lower {
                return bad(
                    "min_size",
                    bytes(min),
                    format!(
                        "is too small: min_size must be 0 or at least {min_lower} bytes (three \
                         pages of {MIN_PAGE_SIZE} bytes); 0 means as small as libmdbx allows"
                    ),
                );
            }
            if min > max {
                return bad(
                    "min_size",
                    bytes(min),
                    format!("is larger than max_size ({max} bytes)"),
                );
            }
        }
        // The page size libmdbx will use for a new file (an existing one keeps its own).
        let page = self.page_size.unwrap_or_else(|| {
            let mut page = default_page_size();
            while max as u64 > page as u64 * MAX_PAGES && page < MAX_PAGE_SIZE {
                page <<= 1;
            }
            page
        });
        match self.min_size {
            None if max < DEFAULT_LOWER_PAGES * page => {
                let lower = DEFAULT_LOWER_PAGES * page;
                return bad(
                    "max_size",
                    bytes(max),
                    format!(
                        "is too small: without a min_size the lower bound is \
                         {DEFAULT_LOWER_PAGES} pages ({lower} bytes with {page}-byte pages), so \
                         max_size must be at least {lower} bytes; set a smaller \
                         Options::min_size to go lower"
                    ),
                );
            }
            Some(min) if max < min.max(min_lower).max(META_PAGES * page) => {
                let lower = min.max(min_lower).max(META_PAGES * page);
                return bad(
                    "max_size",
                    bytes(max),
                    format!(
                        "is too small: the file holds at least its three meta pages of \
                         {page} bytes and min_size ({min} bytes), so max_size must be at least \
                         {lower} bytes"
                    ),
                );
            }
            _ => {}
        }
        if let Some(now) = self.now_size {
            if now > max {
                return bad(
                    "initial_size",
                    bytes(now),
                    format!("is larger than max_size ({max} bytes)"),
                );
            }
            if let Some(min) = self.min_size
                && now < min
            {
                return bad(
                    "initial_size",
                    bytes(now),
                    format!("is smaller than min_size ({min} bytes)"),
                );
            }
        }
        if let Some(step) = self.growth_step
            && step > max
        {
            return bad(
                "growth_step",
                bytes(step),
                format!("is larger than max_size ({max} bytes)"),
            );
        }
        if let Some(shrink) = self.shrink_threshold
            && shrink > max
        {
            return bad(
                "shrink_threshold",
                bytes(shrink),
                format!("is larger than max_size ({max} bytes)"),
            );
        }
        Ok(())
    }

    /// The flush threshold: only with a mode that does not flush at commit, and within the
    /// upper bound.
    fn validate_flush(&self) -> Result<()> {
        let max = self.max_size;
        if let Some(threshold) = self.flush_threshold {
            if matches!(self.sync, SyncMode::Durable | SyncMode::NoMetaSync) {
                return bad(
                    "flush_threshold",
                    threshold.to_string(),
                    format!(
                        "has no effect with SyncMode::{:?}, which flushes at every commit: use it \
                         with SyncMode::SafeNoSync or UtterlyNoSync, or drop it",
                        self.sync
                    ),
                );
            }
            if threshold > max as u64 {
                return bad(
                    "flush_threshold",
                    format!("{threshold} bytes"),
                    format!("is larger than max_size ({max} bytes)"),
                );
            }
        }
        Ok(())
    }

    /// Checks the settings above against libmdbx's ranges (`mdbx_env_set_option` refuses
    /// others with a bare `EINVAL`).
    fn validate_tuning(&self) -> Result<()> {
        // libmdbx: at least 4 × CURSOR_STACK_SIZE (32 on 64-bit targets), at most PAGELIST_LIMIT.
        const DIRTY_PAGES: std::ops::RangeInclusive<u64> = 128..=0x7FFF_FFFF;
        if let Some(pages) = self.tuning.dirty_page_limit
            && !DIRTY_PAGES.contains(&pages)
        {
            return bad(
                "dirty_page_limit",
                format!("{pages} pages"),
                "is out of range: libmdbx allows 128 to 2147483647 pages".to_owned(),
            );
        }
        if let Some(percent) = self.tuning.merge_threshold
            && !(13..=50).contains(&percent)
        {
            return bad(
                "merge_threshold",
                format!("{percent} %"),
                "is out of range: libmdbx merges pages below 12.5 % to 50 % full, so \
                 give a percentage from 13 to 50"
                    .to_owned(),
            );
        }
        if let Some(pages) = self.tuning.dirty_page_reserve
            && pages > 0x7FFF_FFFF
        {
            return bad(
                "dirty_page_reserve",
                format!("{pages} pages"),
                "is out of range: libmdbx allows at most 2147483647 pages".to_owned(),
            );
        }
        Ok(())
    }
}

/// An [`Error::InvalidOption`] for `option`.
fn bad(option: &'static str, value: String, problem: String) -> Result<()> {
    Err(Error::InvalidOption {
        option,
        value,
        problem,
    })
}

/// `n` bytes, in words.
fn bytes(n: usize) -> String {
    format!("{n} byte{}", if n == 1 { "" } else { "s" })
}
