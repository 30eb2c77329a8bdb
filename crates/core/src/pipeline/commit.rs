//! The one commit path, for a [`Tx`](crate::Tx) and for each batch of a bulk load: the
//! histories the transaction wrote are pruned to the versions `Options::keep_versions` keeps,
//! the watchers' event is prepared before libmdbx commits and delivered after it succeeded, and
//! the commit metric is recorded; a nested transaction's savepoint and rollback of the
//! watchers' records.

use crate::engine::{Code, ParentTxn, RawTxn};
use crate::error::{At, Result};
use crate::hub::{Mark, Pending};
use crate::state::Shared;
use crate::telemetry::{self, Labels};

/// Commits `raw` under the database's sync mode; `at` names the commit in an error.
#[inline]
pub(crate) fn commit(shared: &Shared, labels: &Labels, mut raw: RawTxn, at: At<'_>) -> Result<()> {
    before_commit(shared, &mut raw)?;
    // `None` (one relaxed load) unless someone watches; then it holds the watchers' lock until
    // the event is queued, so events come in commit order.
    let watched = shared.watch().before_commit(&raw, shared.dbis());
    #[cfg(feature = "metrics")]
    let committed = raw.commit_timed();
    #[cfg(not(feature = "metrics"))]
    let committed = raw.commit().map(|()| 0.0);
    ended(shared, labels, watched, committed, at)
}

/// Commits `raw` without flushing (a bulk load's batch, `mdbx_txn_checkpoint`) and goes on as
/// the next write transaction, whose writes the watchers record afresh.
pub(crate) fn checkpoint(
    shared: &Shared,
    labels: &Labels,
    raw: &mut RawTxn,
    at: At<'_>,
) -> Result<()> {
    before_commit(shared, raw)?;
    let watched = shared.watch().before_commit(raw, shared.dbis());
    let committed = raw.checkpoint_nosync();
    ended(shared, labels, watched, committed, at)?;
    super::begin(shared);
    Ok(())
}

/// The writes every commit makes last, in its transaction: the histories it wrote pruned to
/// the versions [`Options::keep_versions`](crate::Options::keep_versions) keeps. A failure
/// fails the commit (the transaction is then aborted).
#[inline(always)]
fn before_commit(shared: &Shared, raw: &mut RawTxn) -> Result<()> {
    match shared.run().keep_versions {
        Some(n) => crate::history::keep_versions(raw, shared, n),
        None => Ok(()),
    }
}

/// After a commit: its metric and the watchers' event when it succeeded, its error otherwise.
#[inline]
fn ended(
    shared: &Shared,
    labels: &Labels,
    watched: Option<Pending<'_>>,
    committed: std::result::Result<f64, Code>,
    at: At<'_>,
) -> Result<()> {
    match committed {
        Ok(seconds) => {
            telemetry::commit(labels, seconds);
            if let Some(pending) = watched {
                pending.deliver();
            }
            Ok(())
        }
        Err(code) => {
            drop(watched);
            Err(shared.fail(code, at))
        }
    }
}

/// A nested transaction begun in `raw` ([`RawTxn::nest`]), with where the watchers' records
/// stood: what [`unnest`] ends.
pub(crate) struct Savepoint {
    parent: ParentTxn,
    mark: Mark,
    versions: crate::version::Writer,
}

/// Begins a transaction nested in `raw`.
pub(crate) fn nest(shared: &Shared, raw: &mut RawTxn) -> Result<Savepoint> {
    let parent = raw
        .nest()
        .map_err(|code| shared.fail(code, At::env("begin a nested transaction")))?;
    Ok(Savepoint {
        parent,
        mark: shared.watch().mark(),
        versions: shared.history().mark(),
    })
}

/// Ends the nested transaction of `savepoint` in `raw`: merges it into its parent when
/// `commit`, else discards it, and with it what the watchers recorded since it began.
pub(crate) fn unnest(
    shared: &Shared,
    raw: &mut RawTxn,
    savepoint: Savepoint,
    commit: bool,
) -> std::result::Result<(), Code> {
    let ended = savepoint.parent.resume(raw, commit);
    if !commit || ended.is_err() {
        shared.watch().rollback(&savepoint.mark);
        shared.history().rollback(savepoint.versions);
    }
    ended
}
