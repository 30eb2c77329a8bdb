//! The recorded migration history against the steps a program declares: which steps are
//! pending, whether an interrupted one may resume, and the upgrade protocol around them
//! ([`upgrade`]). `tabula-migrate` declares and runs the steps ([`DeclaredStep`] is what this
//! module needs to know of one); a program with none opens through [`NoSteps`], with the same
//! refusals.

use std::sync::Arc;

use super::bootstrap::{Bootstrap, META_TABLE};
use super::open::Upgrade;
use crate::error::{Error, Result};
use crate::record::{LEGACY_PROGRESS_KEY, LegacyProgress, SchemaRecord, StepProgress};

/// A migration step as the history check sees it: its version and name, the checksum of its
/// declaration, and how many operations it lists. `tabula-migrate`'s `Step` implements it.
pub trait DeclaredStep {
    /// The schema version the step migrates to.
    fn version(&self) -> u32;
    /// Its name.
    fn name(&self) -> &'static str;
    /// The checksum of its declaration, as this release computes it.
    fn checksum(&self) -> String;
    /// Whether `recorded` is its checksum, as this release or an earlier one computed it.
    fn checksum_matches(&self, recorded: &str) -> bool;
    /// How many operations it lists.
    fn operations(&self) -> usize;
}

impl<D: DeclaredStep + ?Sized> DeclaredStep for Arc<D> {
    fn version(&self) -> u32 {
        (**self).version()
    }
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn checksum(&self) -> String {
        (**self).checksum()
    }
    fn checksum_matches(&self, recorded: &str) -> bool {
        (**self).checksum_matches(recorded)
    }
    fn operations(&self) -> usize {
        (**self).operations()
    }
}

/// The schema version of a program whose steps are `steps` (in version order): the last
/// step's, 1 without steps.
pub fn target_version<D: DeclaredStep>(steps: &[D]) -> u32 {
    steps.last().map_or(1, D::version)
}

/// The upgrade protocol: brings `record` (stored: `stored`; a new database otherwise) to the
/// version of `steps`, applying the pending ones in order through `apply` (with the progress
/// of an interrupted one to resume from), after refusing a history that differs from `steps`
/// (a newer database, a changed step, a step in progress that `steps` cannot finish, steps
/// pending on a read-only open). Returns the steps applied (version, name).
///
/// # Errors
///
/// [`Error::Migration`] for those refusals; [`Error::SchemaRecord`] for an unreadable progress
/// record; whatever `apply` returns.
pub fn upgrade<D: DeclaredStep>(
    boot: &mut Bootstrap,
    record: &mut SchemaRecord,
    stored: bool,
    steps: &[D],
    mut apply: impl FnMut(&mut Bootstrap, &D, &mut SchemaRecord, Option<StepProgress>) -> Result<()>,
) -> Result<Vec<(u32, &'static str)>> {
    let target = target_version(steps);
    if !stored {
        // A new database starts at the latest version: there is nothing to migrate.
        record.version = target;
        return Ok(Vec::new());
    }
    if record.version > target && boot.is_read_only() {
        // A newer file, opened read-only by a program that does not carry its steps (a
        // tool, a sidecar): nothing is written, and the open goes on to compare every
        // table this program declares with the record, so it succeeds only where they all
        // match as they are now.
        return Ok(Vec::new());
    }
    let pending = pending_steps(record, steps)?;
    let legacy = read_legacy_progress(boot)?;
    let mut resume = resume_state(record, legacy, &pending, steps)?;
    if let Some(first) = pending.first()
        && boot.is_read_only()
    {
        let interrupted = match &resume {
            Some(p) => format!(
                " (step {} `{}` was interrupted after {} entries of operation {} and \
                 resumes there)",
                p.version,
                p.name,
                p.done,
                p.op + 1
            ),
            None => String::new(),
        };
        return Err(Error::Migration {
            version: first.version(),
            step: first.name().to_string(),
            message: format!(
                "{} migration step(s) are pending{interrupted} and a read-only open cannot \
                 apply them; open the database read-write once",
                pending.len()
            ),
        });
    }
    let mut applied = Vec::with_capacity(pending.len());
    for step in pending {
        apply(boot, step, record, resume.take())?;
        applied.push((step.version(), step.name()));
    }
    Ok(applied)
}

/// Whether [`upgrade`] with `steps` would do nothing on the stored `record`, and refuse
/// nothing: no step pending, none in progress (nor an older Tabula's progress record above the
/// version), and the steps applied as `steps` declare them. What [`NoSteps`] and
/// `tabula-migrate`'s `Migrations` answer to [`Upgrade::has_work`] (negated). Reads the meta
/// table (`false` when it cannot: [`upgrade`] then meets the error).
///
/// ```
/// # use tabula::__doc::*;
/// use tabula_core::startup::{Bootstrap, DeclaredStep, nothing_pending};
/// # enum NoStep {}
/// # impl DeclaredStep for NoStep {
/// #     fn version(&self) -> u32 { match *self {} }
/// #     fn name(&self) -> &'static str { match *self {} }
/// #     fn checksum(&self) -> String { match *self {} }
/// #     fn checksum_matches(&self, _: &str) -> bool { match *self {} }
/// #     fn operations(&self) -> usize { match *self {} }
/// # }
///
/// # let dir = temp_dir();
/// drop(tabula::open::<App>(dir.path(), Options::new())?);
/// let mut boot = Bootstrap::begin(dir.path(), &Options::new().read_only(true), 0)?;
/// let record = boot.read_record()?.expect("recorded");
/// assert!(nothing_pending::<NoStep>(&mut boot, &record, &[]));
/// # Ok::<(), tabula::Error>(())
/// ```
pub fn nothing_pending<D: DeclaredStep>(
    boot: &mut Bootstrap,
    record: &SchemaRecord,
    steps: &[D],
) -> bool {
    let Ok(pending) = pending_steps(record, steps) else {
        return false;
    };
    if !pending.is_empty() {
        return false;
    }
    let Ok(legacy) = read_legacy_progress(boot) else {
        return false;
    };
    matches!(resume_state(record, legacy, &pending, steps), Ok(None))
}

/// The [`Upgrade`] of a program that declares no migration steps (schema version 1): what
/// [`open`](crate::open) runs. It records a new database at version 1 and refuses, as
/// `tabula-migrate`'s `Migrations` would with no steps (both run [`upgrade`]), a database
/// migrated past version 1 or with a step in progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSteps;

/// No step: the steps of [`NoSteps`].
enum NoStep {}

impl DeclaredStep for NoStep {
    fn version(&self) -> u32 {
        match *self {}
    }
    fn name(&self) -> &'static str {
        match *self {}
    }
    fn checksum(&self) -> String {
        match *self {}
    }
    fn checksum_matches(&self, _: &str) -> bool {
        match *self {}
    }
    fn operations(&self) -> usize {
        match *self {}
    }
}

impl Upgrade for NoSteps {
    fn version(&self) -> u32 {
        1
    }

    fn upgrade(
        &self,
        boot: &mut Bootstrap,
        record: &mut SchemaRecord,
        stored: bool,
    ) -> Result<Vec<(u32, &'static str)>> {
        upgrade::<NoStep>(boot, record, stored, &[], |_, step, _, _| match *step {})
    }

    fn has_work(&self, boot: &mut Bootstrap, record: &SchemaRecord) -> bool {
        !nothing_pending::<NoStep>(boot, record, &[])
    }
}

/// The steps above the database's version, after checking the recorded history against the
/// code.
pub fn pending_steps<'m, D: DeclaredStep>(
    record: &SchemaRecord,
    steps: &'m [D],
) -> Result<Vec<&'m D>> {
    let target = target_version(steps);
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
        if let Some(step) = steps.iter().find(|s| s.version() == applied.version) {
            if step.name() != applied.name {
                return Err(Error::Migration {
                    version: applied.version,
                    step: applied.name.clone(),
                    message: format!(
                        "the database applied step `{}` at this version but the code declares \
                         `{}`; released steps must not change: restore it and add a new step",
                        applied.name,
                        step.name()
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
    Ok(steps
        .iter()
        .filter(|s| s.version() > record.version)
        .collect())
}

/// Reads the progress record an interrupted step left under [`LEGACY_PROGRESS_KEY`] when it ran under
/// a Tabula release from before [`StepProgress`].
pub fn read_legacy_progress(boot: &mut Bootstrap) -> Result<Option<LegacyProgress>> {
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
pub fn resume_state<D: DeclaredStep>(
    record: &SchemaRecord,
    legacy: Option<LegacyProgress>,
    pending: &[&D],
    steps: &[D],
) -> Result<Option<StepProgress>> {
    let declared = |version: u32| steps.iter().find(|s| s.version() == version);
    let not_declared = |version: u32, name: &str| Error::Migration {
        version,
        step: name.to_string(),
        message: format!(
            "a migration to version {version} (`{name}`) is in progress; open with the release \
             that declares it to finish it. The database is at version {} and this program \
             does not declare step {version} (its steps reach version {}), so it cannot finish \
             the step and must not open the half-migrated tables",
            record.version,
            target_version(steps)
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
                step: step.name().to_string(),
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
                    step.version(),
                    step.name()
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
    if step.name() != name {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress, but this program \
                 declares step {version} as `{}`. The progress belongs to the declaration that \
                 was running: restore step {version} `{name}` exactly as it was, open once to \
                 let it finish, then make the change in a new step above version {version}",
                step.name()
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
        && first.version() != version
    {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "a migration to version {version} (`{name}`) is in progress, but this program \
                 declares step {} `{}` below it, which the database has not applied and which \
                 would have to run first. Finish the migration to version {version} with the \
                 release that began it, and give new steps versions above the database's",
                first.version(),
                first.name()
            ),
        });
    }
    if progress.op >= step.operations() {
        return Err(Error::Migration {
            version,
            step: name.to_string(),
            message: format!(
                "the recorded progress is at operation {} but the step has {} operations; the \
                 record is inconsistent (the `{META_TABLE}` table may be damaged)",
                progress.op + 1,
                step.operations()
            ),
        });
    }
    Ok(Some(progress.clone()))
}
