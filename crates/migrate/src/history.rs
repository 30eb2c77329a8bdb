//! The recorded migration history against the code's steps: which steps are pending, and
//! whether an interrupted one may resume.

use tabula_core::record::{LEGACY_PROGRESS_KEY, LegacyProgress, SchemaRecord, StepProgress};
use tabula_core::startup::{Bootstrap, META_TABLE};
use tabula_core::{Error, Result};

use crate::steps::{Migrations, Step};

/// The steps above the database's version, after checking the recorded history against the
/// code.
pub(crate) fn pending_steps<'m>(
    record: &SchemaRecord,
    migrations: &'m Migrations,
) -> Result<Vec<&'m Step>> {
    let target = migrations.version();
    if record.version > target {
        let step = record
            .applied
            .last()
            .map(|s| s.name.clone())
            .unwrap_or_default();
        return Err(Error::Migration {
            version: record.version,
            step,
            message: format!(
                "the database is at schema version {} but this program knows versions up to \
                 {target}; a newer release (or a program with more migration steps) wrote it. \
                 Every program that opens it read-write must carry the whole list of steps; to \
                 only read it, open it with `Options::read_only(true)`, which works when every \
                 table this program declares matches the file (there is no automatic \
                 downgrade)",
                record.version
            ),
        });
    }
    for applied in &record.applied {
        if let Some(step) = migrations
            .steps
            .iter()
            .find(|s| s.version == applied.version)
        {
            if step.name != applied.name {
                return Err(Error::Migration {
                    version: applied.version,
                    step: applied.name.clone(),
                    message: format!(
                        "the database applied step `{}` at this version but the code declares \
                         `{}`; released steps must not change: restore it and add a new step",
                        applied.name, step.name
                    ),
                });
            }
            let checksum = step.checksum();
            if !step.checksum_matches(&applied.checksum) {
                return Err(Error::Migration {
                    version: applied.version,
                    step: applied.name.clone(),
                    message: format!(
                        "the step's declaration changed since it was applied (checksum {} then, \
                         {checksum} now); released steps must not change: restore it and add a \
                         new step",
                        applied.checksum
                    ),
                });
            }
        }
    }
    Ok(migrations
        .steps
        .iter()
        .filter(|s| s.version > record.version)
        .map(|s| &**s)
        .collect())
}

/// Reads the progress record an interrupted step left under [`LEGACY_PROGRESS_KEY`] when it ran under
/// a Tabula release from before [`StepProgress`].
pub(crate) fn read_legacy_progress(boot: &mut Bootstrap) -> Result<Option<LegacyProgress>> {
    let Some(bytes) = boot.meta_get(LEGACY_PROGRESS_KEY)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::SchemaRecord {
            path: boot.path().to_path_buf(),
            message: format!(
                "the migration progress record (`{META_TABLE}[\"{LEGACY_PROGRESS_KEY}\"]`) does not \
                 parse ({e}); the meta table may be damaged"
            ),
        })
}

/// The interrupted step to resume, if any, after checking that it is exactly the step the code
/// declares and the first one pending. Progress belongs to one declaration: resuming it with
/// another would skip the entries it counts as done, so every doubt is a refusal.
pub(crate) fn resume_state(
    record: &SchemaRecord,
    legacy: Option<LegacyProgress>,
    pending: &[&Step],
    migrations: &Migrations,
) -> Result<Option<StepProgress>> {
    let declared = |version: u32| migrations.steps.iter().find(|s| s.version == version);
    let not_declared = |version: u32, name: &str| Error::Migration {
        version,
        step: name.to_string(),
        message: format!(
            "a migration to version {version} (`{name}`) is in progress; open with the release \
             that declares it to finish it. The database is at version {} and this program \
             does not declare step {version} (its steps reach version {}), so it cannot finish \
             the step and must not open the half-migrated tables",
            record.version,
            migrations.version()
        ),
    };
    let progress = match (&record.in_progress, legacy) {
        (Some(p), _) => p,
        (None, Some(old)) if old.version > record.version => {
            // Written by a Tabula that did not record which declaration the progress belongs
            // to: there is no way to tell whether this code's step is the one that ran.
            let Some(step) = declared(old.version) else {
                return Err(not_declared(
                    old.version,
                    "unnamed: recorded by an older Tabula",
                ));
            };
            return Err(Error::Migration {
                version: old.version,
                step: step.name.to_string(),
                message: format!(
                    "a migration to version {} is in progress (interrupted after {} entries of \
                     operation {}), recorded by an older Tabula that did not store the checksum \
                     of the step's declaration, so this program cannot tell whether its step \
                     {} `{}` is the declaration that was running, and resuming a different one \
                     would skip entries. Open the database once with the build that began the \
                     migration (it resumes and finishes the step), then open it with this one",
                    old.version,
                    old.done,
                    old.op + 1,
                    step.version,
                    step.name
                ),
            });
        }
        // Stale progress of a step already applied: nothing to resume.
        (None, _) => return Ok(None),
    };
    let (version, name) = (progress.version, progress.name.as_str());
    if version <= record.version {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "the schema record says the step is in progress but the database is already at \
                 version {}; the record is inconsistent (the `{META_TABLE}` table may be damaged)",
                record.version
            ),
        });
    }
    let Some(step) = declared(version) else {
        return Err(not_declared(version, name));
    };
    if step.name != name {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress, but this program \
                 declares step {version} as `{}`. The progress belongs to the declaration that \
                 was running: restore step {version} `{name}` exactly as it was, open once to \
                 let it finish, then make the change in a new step above version {version}",
                step.name
            ),
        });
    }
    let checksum = step.checksum();
    if !step.checksum_matches(&progress.checksum) {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress (interrupted after \
                 {} entries of operation {}), but the step's declaration changed since it began \
                 (checksum {} then, {checksum} now). The progress belongs to the declaration \
                 that was running: restore that declaration, open once to let it finish, then \
                 make the change in a new step above version {version}",
                progress.done,
                progress.op + 1,
                progress.checksum
            ),
        });
    }
    if let Some(first) = pending.first()
        && first.version != version
    {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress, but this program \
                 declares step {} `{}` below it, which the database has not applied and which \
                 would have to run first. Finish the migration to version {version} with the \
                 release that began it, and give new steps versions above the database's",
                first.version, first.name
            ),
        });
    }
    if progress.op >= step.ops.len() {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "the recorded progress is at operation {} but the step has {} operations; the \
                 record is inconsistent (the `{META_TABLE}` table may be damaged)",
                progress.op + 1,
                step.ops.len()
            ),
        });
    }
    Ok(Some(progress.clone()))
}
