//! Running migration steps inside the startup step.

use std::time::Instant;

use tabula_core::record::{AppliedStep, LEGACY_PROGRESS_KEY, SchemaRecord, StepProgress};
use tabula_core::startup::{Bootstrap, ExistingTable, convert_history_value};
use tabula_core::{Error, KeyHex, Result};

use crate::steps::{MapFn, Migrations, Op, Progress, Step};
use crate::tx::MigrationTx;

fn step_error(step: &Step, message: String) -> Error {
    Error::Migration {
        version: step.version,
        step: step.name.to_string(),
        message,
    }
}

/// Refuses an operation (`what`) that writes the rows of `table` beside Tabula's write path
/// (`rekey`, `copy` into it, the zstd re-encoding, or puts and deletes raw in a step's `run`;
/// a `transform` converts the history with the rows instead, `convert_history`) while the
/// database holds a history of it: the history records nothing of such a write, keeps the
/// rows' earlier values (and keys) as they were written, and would go on answering reads as
/// of a version and unwinds with them. Dropping the history first (this step or an earlier
/// one) lets it through; the next open starts the history again, recording from the first
/// version written after it.
pub(crate) fn refuse_beside_history(
    step: &Step,
    record: &SchemaRecord,
    what: &str,
    table: &str,
) -> Result<()> {
    let Some(history) = record.history_of(table) else {
        return Ok(());
    };
    Err(step_error(
        step,
        format!(
            "cannot {what}: table `{table}` has the history `{history}`, which records nothing \
             of this write, keeps the earlier values and keys of its rows as they were \
             written, and would go on answering reads as of a version and unwinds with them; \
             drop the history first (`drop_table(\"{history}\")` before this operation, in this \
             step or an earlier one): the next open starts it again, recording from the first \
             version written"
        ),
    ))
}

/// Where a batched operation of a step stands after a batch.
struct BatchDone<'a> {
    /// The operation's position in the step.
    index: usize,
    /// The last key done.
    after: &'a Option<Vec<u8>>,
    /// Entries done so far (including those done before a restart).
    done: u64,
    /// Entries in the source when the operation began.
    total: u64,
    /// The operation, as [`Progress::operation`] names it.
    operation: &'a str,
    /// Whether the batch is of the operation's history phase ([`StepProgress::history`]).
    history: bool,
}

/// Records where the operation stands in the step's progress, commits the batch with it, and
/// reports the progress.
fn batch_done(
    a: &mut Bootstrap,
    record: &mut SchemaRecord,
    migrations: &Migrations,
    step: &Step,
    at: BatchDone<'_>,
) -> Result<()> {
    let progress = record
        .in_progress
        .as_mut()
        .expect("apply_step marks the step in progress");
    progress.op = at.index;
    progress.after = at.after.clone();
    progress.done = at.done;
    progress.history = at.history;
    save(a, record)?;
    a.checkpoint()?;
    if let Some(f) = &migrations.progress {
        f(&Progress {
            version: step.version,
            step: step.name,
            operation: at.operation,
            done: at.done,
            total: at.total.max(at.done),
        });
    }
    Ok(())
}

fn save(a: &mut Bootstrap, record: &mut SchemaRecord) -> Result<()> {
    a.write_record(record)
}

/// Applies one step, resuming from `resume`, which the caller has checked belongs to this exact
/// declaration (`crate::resume_state`). Commits at every batch, with the record marking the step
/// in progress, and at the end, with the step recorded as applied; returns the number of
/// entries rewritten.
pub(crate) fn apply_step(
    a: &mut Bootstrap,
    step: &Step,
    record: &mut SchemaRecord,
    resume: Option<StepProgress>,
    migrations: &Migrations,
) -> Result<u64> {
    let started = Instant::now();
    debug_assert!(resume.as_ref().is_none_or(|p| p.version == step.version
        && p.name == step.name
        && step.checksum_matches(&p.checksum)));
    let first_op = resume.as_ref().map_or(0, |p| p.op);
    // Every commit before the step is recorded as applied carries this marker.
    record.in_progress = Some(resume.clone().unwrap_or_else(|| StepProgress {
        version: step.version,
        name: step.name.to_string(),
        checksum: step.checksum(),
        op: 0,
        after: None,
        done: 0,
        history: false,
    }));
    tracing::info!(
        version = step.version,
        step = step.name,
        resumed_at_op = resume.as_ref().map(|p| p.op),
        "migration step begun"
    );
    let mut entries = 0u64;
    for (index, op) in step.ops.iter().enumerate().skip(first_op) {
        let from = resume.as_ref().filter(|p| p.op == index);
        entries += apply_op(a, step, index, op, record, from, migrations).map_err(|e| match e {
            // A reserved name in a step's declaration: say which step.
            Error::InvalidTable { table, problem, .. } => {
                step_error(step, format!("table `{table}`: {problem}"))
            }
            e => e,
        })?;
    }
    record.version = step.version;
    record.in_progress = None;
    record.applied.push(AppliedStep {
        version: step.version,
        name: step.name.to_string(),
        checksum: step.checksum(),
    });
    save(a, record)?;
    a.meta_delete(LEGACY_PROGRESS_KEY)?;
    a.checkpoint()?;
    tracing::info!(
        version = step.version,
        step = step.name,
        entries,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "migration step finished"
    );
    Ok(entries)
}

fn apply_op(
    a: &mut Bootstrap,
    step: &Step,
    index: usize,
    op: &Op,
    record: &mut SchemaRecord,
    resume: Option<&StepProgress>,
    migrations: &Migrations,
) -> Result<u64> {
    match op {
        Op::Create {
            name,
            flags,
            record: rec,
        } => {
            if a.find_table(name)?.is_none() {
                a.create_table(name, *flags)?;
            }
            record.tables.insert(name.to_string(), rec.clone());
            Ok(0)
        }
        Op::Drop { name } => {
            if !a.drop_table(name)? {
                return Err(step_error(
                    step,
                    format!("cannot drop table `{name}`: it does not exist"),
                ));
            }
            record.tables.remove(*name);
            Ok(0)
        }
        Op::Rename { from, to } => {
            if a.find_table(from)?.is_none() {
                return Err(step_error(
                    step,
                    format!("cannot rename table `{from}`: it does not exist"),
                ));
            }
            if a.find_table(to)?.is_some() {
                return Err(step_error(
                    step,
                    format!("cannot rename table `{from}` to `{to}`: `{to}` already exists"),
                ));
            }
            a.rename_table(from, to)?;
            if let Some(rec) = record.tables.remove(*from) {
                record.tables.insert(to.to_string(), rec);
            }
            Ok(0)
        }
        Op::Run { f, .. } => {
            f(&mut MigrationTx {
                boot: a,
                step,
                record,
            })?;
            Ok(0)
        }
        #[cfg(feature = "compression")]
        Op::TrainZstd {
            table,
            dictionary,
            level,
            flags,
            samples,
            size,
        } => {
            let train = TrainZstd {
                table,
                dictionary,
                level: *level,
                flags: *flags,
                samples: *samples,
                size: *size,
            };
            if flags.dupsort {
                return Err(step_error(
                    step,
                    format!(
                        "cannot train a zstd dictionary for `{table}`: it is a `dupsort` table, \
                         whose values are not re-encoded by this step"
                    ),
                ));
            }
            refuse_beside_history(
                step,
                record,
                &format!("train a zstd dictionary for `{table}`"),
                table,
            )?;
            train_zstd(a, step, index, &train, record, resume, migrations)
        }
        Op::Rewrite {
            what,
            source,
            target,
            flags,
            record: rec,
            in_order,
            unique,
            map,
            converts_history,
            ..
        } => {
            let Some(src) = a.find_table(source)? else {
                return Err(step_error(
                    step,
                    format!("cannot {what}: table `{source}` does not exist"),
                ));
            };
            // A map of values alone takes the table's history along; one that changes keys,
            // or writes into another table, cannot.
            let history = match target {
                None if *converts_history => record.history_of(source).map(str::to_owned),
                _ => {
                    refuse_beside_history(step, record, what, target.unwrap_or(source))?;
                    None
                }
            };
            // Resumed in the history's phase, the rows are done and the scratch table has
            // replaced the source already.
            let rows_resume = resume.filter(|p| !p.history);
            let (done, carried) = if resume.is_some_and(|p| p.history) {
                (src.entries, 0)
            } else {
                let rewrite = Rewrite {
                    what,
                    source,
                    target: *target,
                    flags: *flags,
                    in_order: *in_order,
                    unique: *unique,
                    map,
                    defer_last: history.is_some(),
                };
                rewrite_rows(
                    a,
                    step,
                    index,
                    &rewrite,
                    src,
                    record,
                    rows_resume,
                    migrations,
                )?
            };
            record
                .tables
                .insert(target.unwrap_or(source).to_string(), rec.clone());
            let Some(history) = history else {
                return Ok(done);
            };
            let history_resume = resume.filter(|p| p.history);
            let converted = convert_history(
                a,
                step,
                index,
                what,
                (&history, rec),
                map,
                record,
                history_resume,
                carried,
                migrations,
            )?;
            Ok(done + converted)
        }
    }
}

/// The parameters of [`Op::Rewrite`] that its rows' pass uses.
struct Rewrite<'a> {
    what: &'a str,
    source: &'static str,
    target: Option<&'static str>,
    flags: tabula_core::TableFlags,
    in_order: bool,
    unique: bool,
    map: &'a MapFn,
    /// A history follows: the last batch of rows, when shorter than a batch, is left for the
    /// history's first batch to commit (so a step whose rows and history fit in one batch
    /// commits once, and a value of the history that does not convert leaves nothing
    /// committed, as a row that does not convert does).
    defer_last: bool,
}

/// Rewrites the rows of [`Op::Rewrite`]'s source into its target (or into the source's scratch
/// table, which then replaces the source), in batches, from `resume`'s last key; returns the
/// number of rows done and of those left uncommitted ([`Rewrite::defer_last`]).
#[allow(clippy::too_many_arguments)]
fn rewrite_rows(
    a: &mut Bootstrap,
    step: &Step,
    index: usize,
    op: &Rewrite<'_>,
    src: ExistingTable,
    record: &mut SchemaRecord,
    resume: Option<&StepProgress>,
    migrations: &Migrations,
) -> Result<(u64, usize)> {
    let Rewrite {
        what,
        source,
        target,
        flags,
        in_order,
        unique,
        map,
        defer_last,
    } = *op;
    let replace = target.is_none();
    let (target, dst) = match target {
        // A leftover scratch table without this operation's progress holds nothing committed
        // that counts: start it afresh.
        None => a.scratch_table(source, flags, resume.is_none())?,
        Some(target) => match a.find_table(target)? {
            Some(t) => (target, t.handle),
            None => (target, a.create_table(target, flags)?),
        },
    };
    let total = src.entries;
    let mut after = resume.and_then(|p| p.after.clone());
    let mut done = resume.map_or(0, |p| p.done);
    let mut carried = 0;
    let batch_size = migrations.batch_size_or_default();
    loop {
        let batch = a.read_batch(source, src.handle, after.as_deref(), batch_size)?;
        let Some((last, _)) = batch.last() else {
            break;
        };
        let last = last.clone();
        for (k, v) in &batch {
            let (nk, nv) = map(k, v)?;
            if unique && a.get_raw(target, dst, &nk)?.is_some() {
                return Err(step_error(
                    step,
                    format!(
                        "{what}: two entries map to the new key {} in `{source}`; the key \
                         function must be one-to-one",
                        KeyHex::new(&nk)
                    ),
                ));
            }
            a.put_raw(target, dst, &nk, &nv, in_order)?;
        }
        done += batch.len() as u64;
        if defer_last && batch.len() < batch_size {
            carried = batch.len();
            break;
        }
        after = Some(last);
        let at = BatchDone {
            index,
            after: &after,
            done,
            total,
            operation: what,
            history: false,
        };
        batch_done(a, record, migrations, step, at)?;
    }
    if replace {
        a.replace_with_scratch(source)?;
    }
    Ok((done, carried))
}

/// The second phase of a `transform` of a table with a history (`history`, the history
/// table's name; `source`, the record of the table it records): converts, in place and in
/// batches, every value before that the history records with the operation's `map` (`01 ‖ old
/// stored value` becomes `01 ‖ new stored value`; a change of a key that held no value, the
/// marks, the log, the horizon, the last version and the start mark stay). Each batch commits with the history's last key done, so a resumed run goes
/// on after it and no value is converted twice. The first batch is smaller by the `carried`
/// rows the rows' pass left for it to commit. Returns the number of values converted in this
/// run.
#[allow(clippy::too_many_arguments)]
fn convert_history(
    a: &mut Bootstrap,
    step: &Step,
    index: usize,
    what: &str,
    (history, source): (&str, &tabula_core::record::TableRecord),
    map: &MapFn,
    record: &mut SchemaRecord,
    resume: Option<&StepProgress>,
    carried: usize,
    migrations: &Migrations,
) -> Result<u64> {
    // The bootstrap names its tables for the life of the process, as its scratch tables.
    let history: &'static str = Box::leak(history.to_owned().into_boxed_str());
    let Some(table) = a.find_table(history)? else {
        return Ok(0);
    };
    let operation = format!("{what}: the values before in its history {history}");
    let mut after = resume.and_then(|p| p.after.clone());
    let mut done = resume.map_or(0, |p| p.done);
    let mut converted = 0u64;
    let batch_size = migrations.batch_size_or_default();
    let mut limit = batch_size.saturating_sub(carried).max(1);
    loop {
        let batch = a.read_batch(history, table.handle, after.as_deref(), limit)?;
        limit = batch_size;
        let Some((last, _)) = batch.last() else {
            break;
        };
        let last = last.clone();
        for (k, v) in &batch {
            let new = convert_history_value(source, k, v, |version, key, before| {
                let converted = map(key, before).map_err(|e| {
                    step_error(
                        step,
                        format!(
                            "{what}: the value before version {version} of key {} recorded in \
                             the history `{history}` does not convert, and nothing of this \
                             batch was written: {e}",
                            KeyHex::new(key)
                        ),
                    )
                })?;
                Ok(converted.1)
            })?;
            if let Some(new) = new {
                a.put_raw(history, table.handle, k, &new, false)?;
                converted += 1;
            }
        }
        done += batch.len() as u64;
        after = Some(last);
        let at = BatchDone {
            index,
            after: &after,
            done,
            total: table.entries,
            operation: &operation,
            history: true,
        };
        batch_done(a, record, migrations, step, at)?;
    }
    Ok(converted)
}

/// The parameters of [`Op::TrainZstd`].
#[cfg(feature = "compression")]
struct TrainZstd {
    table: &'static str,
    dictionary: &'static str,
    level: i32,
    flags: tabula_core::TableFlags,
    samples: usize,
    size: usize,
}

/// Trains, stores and applies a zstd dictionary ([`Op::TrainZstd`]). Without `resume` it
/// samples the table, trains and stores the dictionary (committed with the first batch of
/// re-encoded values); with `resume` the dictionary is stored already and the re-encoding goes
/// on after the last key done. Returns the number of values re-encoded.
#[cfg(feature = "compression")]
fn train_zstd(
    a: &mut Bootstrap,
    step: &Step,
    index: usize,
    op: &TrainZstd,
    record: &mut SchemaRecord,
    resume: Option<&StepProgress>,
    migrations: &Migrations,
) -> Result<u64> {
    use tabula_core::Part;
    use tabula_core::codec::train_zstd_dictionary;

    let TrainZstd {
        table,
        dictionary,
        level,
        flags,
        samples,
        size,
    } = *op;
    if samples == 0 || size < 256 {
        return Err(step_error(
            step,
            format!(
                "cannot train a zstd dictionary for `{table}` from {samples} samples of at most \
                 {size} bytes: give at least one sample and a size of at least 256 bytes"
            ),
        ));
    }
    let Some(src) = a.find_table(table)? else {
        return Err(step_error(
            step,
            format!("cannot train a zstd dictionary for `{table}`: the table does not exist"),
        ));
    };
    let decode_error = |key: &[u8], source| Error::Decode {
        table,
        part: Part::Value,
        key: KeyHex::new(key),
        source,
    };
    let batch_size = migrations.batch_size_or_default();
    let mut stored = a.zstd_dictionaries()?;
    if resume.is_none() {
        // Every `stride`-th value, so the samples span the table.
        let stride = (src.entries / samples as u64).max(1);
        let mut plain = Vec::new();
        let (mut at, mut after) = (0u64, None::<Vec<u8>>);
        while plain.len() < samples {
            let batch = a.read_batch(table, src.handle, after.as_deref(), batch_size)?;
            let Some((last, _)) = batch.last() else {
                break;
            };
            after = Some(last.clone());
            for (k, v) in &batch {
                if at % stride == 0 && plain.len() < samples {
                    plain.push(stored.decompress(v).map_err(|e| decode_error(k, e))?);
                }
                at += 1;
            }
        }
        let trained = match train_zstd_dictionary(&plain, size) {
            Ok(trained) => trained,
            Err(problem) => {
                tracing::warn!(
                    table,
                    dictionary,
                    samples = plain.len(),
                    %problem,
                    "no zstd dictionary trained: the values stay compressed without one"
                );
                return Ok(0);
            }
        };
        let id = a.add_zstd_dictionary(dictionary, &trained)?;
        tracing::info!(
            table,
            dictionary,
            id,
            bytes = trained.len(),
            "trained a zstd dictionary"
        );
        stored = a.zstd_dictionaries()?;
    }
    // Into the scratch table, in key order, which then replaces the table (its pages shrink
    // with the values); a leftover scratch table without progress is started afresh.
    let (scratch, dst) = a.scratch_table(table, flags, resume.is_none())?;
    let total = src.entries;
    let mut after = resume.and_then(|p| p.after.clone());
    let mut done = resume.map_or(0, |p| p.done);
    let what = format!("re-encode {table} with zstd dictionary {dictionary}");
    loop {
        let batch = a.read_batch(table, src.handle, after.as_deref(), batch_size)?;
        let Some((last, _)) = batch.last() else {
            break;
        };
        let last = last.clone();
        for (k, v) in &batch {
            let plain = stored.decompress(v).map_err(|e| decode_error(k, e))?;
            let frame = stored
                .compress(dictionary, &plain, level)
                .map_err(|source| Error::Encode {
                    table,
                    key: KeyHex::new(k),
                    source,
                })?;
            a.put_raw(scratch, dst, k, &frame, true)?;
        }
        done += batch.len() as u64;
        after = Some(last);
        let at = BatchDone {
            index,
            after: &after,
            done,
            total,
            operation: &what,
            history: false,
        };
        batch_done(a, record, migrations, step, at)?;
    }
    a.replace_with_scratch(table)?;
    Ok(done)
}
