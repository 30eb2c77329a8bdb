//! Running migration steps inside the startup step.

use std::time::Instant;

use tabula_core::record::{AppliedStep, LEGACY_PROGRESS_KEY, SchemaRecord, StepProgress};
use tabula_core::startup::Bootstrap;
use tabula_core::{Error, KeyHex, Result};

use crate::steps::{Migrations, Op, Progress, Step};
use crate::tx::MigrationTx;

fn step_error(step: &Step, message: String) -> Error {
    Error::Migration {
        version: step.version,
        step: step.name.to_string(),
        message,
    }
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
            f(&mut MigrationTx { boot: a })?;
            Ok(0)
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
            ..
        } => {
            let Some(src) = a.find_table(source)? else {
                return Err(step_error(
                    step,
                    format!("cannot {what}: table `{source}` does not exist"),
                ));
            };
            let replace = target.is_none();
            let (target, dst) = match target {
                // A leftover scratch table without this operation's progress holds nothing
                // committed that counts: start it afresh.
                None => a.scratch_table(source, *flags, resume.is_none())?,
                Some(target) => match a.find_table(target)? {
                    Some(t) => (*target, t.handle),
                    None => (*target, a.create_table(target, *flags)?),
                },
            };
            let total = src.entries;
            let mut after = resume.and_then(|p| p.after.clone());
            let mut done = resume.map_or(0, |p| p.done);
            let batch_size = migrations.batch_size_or_default();
            loop {
                let batch = a.read_batch(source, src.handle, after.as_deref(), batch_size)?;
                let Some((last, _)) = batch.last() else {
                    break;
                };
                let last = last.clone();
                for (k, v) in &batch {
                    let (nk, nv) = map(k, v)?;
                    if *unique && a.get_raw(target, dst, &nk)?.is_some() {
                        return Err(step_error(
                            step,
                            format!(
                                "{what}: two entries map to the new key {} in `{source}`; \
                                 the key function must be one-to-one",
                                KeyHex::new(&nk)
                            ),
                        ));
                    }
                    a.put_raw(target, dst, &nk, &nv, *in_order)?;
                }
                done += batch.len() as u64;
                after = Some(last);
                let progress = record
                    .in_progress
                    .as_mut()
                    .expect("apply_step marks the step in progress");
                progress.op = index;
                progress.after = after.clone();
                progress.done = done;
                save(a, record)?;
                a.checkpoint()?;
                if let Some(f) = &migrations.progress {
                    f(&Progress {
                        version: step.version,
                        step: step.name,
                        operation: what,
                        done,
                        total: total.max(done),
                    });
                }
            }
            if replace {
                a.replace_with_scratch(source)?;
                record.tables.insert(source.to_string(), rec.clone());
            } else {
                record.tables.insert(target.to_string(), rec.clone());
            }
            Ok(done)
        }
    }
}
