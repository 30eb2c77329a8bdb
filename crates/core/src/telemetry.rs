//! The names of the metrics Tabula records through the `metrics` crate facade (feature
//! `metrics`): what transactions record as they run (commits, commit latency, read-transaction
//! ages, cut read transactions) and the gauges `Db::record_metrics` sets. Every metric carries
//! the label `db` (the database's path); the per-table gauges also `table`. Without the feature
//! nothing is recorded, and the calls that would record cost nothing.

/// Commits (`Tx::commit` of a write transaction), labelled `db`.
pub const COMMITS: &str = "tabula_commits_total";
/// How long each commit took in libmdbx, in seconds (histogram), labelled `db`.
pub const COMMIT_SECONDS: &str = "tabula_commit_seconds";
/// How long each read transaction was open when it ended, in seconds (histogram; a coarse
/// clock, so short reads record 0), labelled `db`.
pub const READ_TXN_AGE_SECONDS: &str = "tabula_read_txn_age_seconds";
/// Owned read transactions cut for their age or by a writer (counter), labelled `db`.
pub const READ_TXNS_CUT: &str = "tabula_read_txns_cut_total";
/// The data file's size in bytes (gauge), labelled `db`.
pub const FILE_BYTES: &str = "tabula_file_bytes";
/// The upper bound the file may grow to, in bytes (gauge), labelled `db`.
pub const MAX_BYTES: &str = "tabula_max_bytes";
/// Bytes up to the highest page in use (gauge), labelled `db`.
pub const USED_BYTES: &str = "tabula_used_bytes";
/// Bytes of free pages a write may reuse now (gauge), labelled `db`.
pub const FREE_BYTES: &str = "tabula_free_bytes";
/// Live readers in the reader table, every process (gauge), labelled `db`.
pub const READERS: &str = "tabula_readers";
/// Commits since the snapshot of the oldest live reader (gauge), labelled `db`.
pub const OLDEST_READER_LAG: &str = "tabula_oldest_reader_lag";
/// Bytes of each table's pages (gauge), labelled `db` and `table`.
pub const TABLE_BYTES: &str = "tabula_table_bytes";
/// Entries of each table (gauge), labelled `db` and `table`.
pub const TABLE_ENTRIES: &str = "tabula_table_entries";

/// The labels every metric of one database carries: `db`, its path.
#[derive(Debug)]
pub(crate) struct Labels {
    #[cfg(feature = "metrics")]
    db: metrics::SharedString,
}

impl Labels {
    pub(crate) fn new(path: &std::path::Path) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = path;
        Labels {
            #[cfg(feature = "metrics")]
            db: metrics::SharedString::from(path.display().to_string()),
        }
    }
}

/// A commit that took `seconds` in libmdbx.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
#[inline]
pub(crate) fn commit(labels: &Labels, seconds: f64) {
    #[cfg(feature = "metrics")]
    {
        metrics::counter!(COMMITS, "db" => labels.db.clone()).increment(1);
        metrics::histogram!(COMMIT_SECONDS, "db" => labels.db.clone()).record(seconds);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (labels, seconds);
}

/// A read transaction that ended after `age_ms`.
#[inline]
pub(crate) fn read_txn_ended(labels: &Labels, age_ms: u64) {
    #[cfg(feature = "metrics")]
    metrics::histogram!(READ_TXN_AGE_SECONDS, "db" => labels.db.clone())
        .record(age_ms as f64 / 1000.0);
    #[cfg(not(feature = "metrics"))]
    let _ = (labels, age_ms);
}

/// An owned read transaction that was cut.
#[inline]
pub(crate) fn read_txn_cut(labels: &Labels) {
    #[cfg(feature = "metrics")]
    metrics::counter!(READ_TXNS_CUT, "db" => labels.db.clone()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = labels;
}

/// Sets the gauge `name` of the database.
#[cfg(feature = "metrics")]
pub(crate) fn gauge(labels: &Labels, name: &'static str, value: f64) {
    metrics::gauge!(name, "db" => labels.db.clone()).set(value);
}

/// Sets the gauge `name` of one table.
#[cfg(feature = "metrics")]
pub(crate) fn table_gauge(labels: &Labels, name: &'static str, table: &'static str, value: f64) {
    metrics::gauge!(name, "db" => labels.db.clone(), "table" => table).set(value);
}
