//! Running migration steps inside the startup step.

use std::time::Instant;

use tabula_core::__private::{
    Bootstrap, ExistingTable, decode_stored_key, decode_stored_value, encode_stored_key,
    encode_stored_value,
};
use tabula_core::{Error, KeyHex, Result, Schema, Table, TableFlags};

use crate::record::{AppliedStep, PROGRESS_KEY, SCHEMA_RECORD_KEY, SchemaRecord, StepProgress};
use crate::steps::{Migrations, Op, Progress, Step};

/// What the executor needs from the startup transaction; object-safe so [`MigrationTx`] does not
/// depend on the schema type.
pub(crate) trait Access {
    fn find(&mut self, name: &'static str) -> Result<Option<ExistingTable>>;
    fn create(&mut self, name: &'static str, flags: TableFlags) -> Result<u32>;
    fn drop_table(&mut self, name: &'static str) -> Result<bool>;
    fn rename(&mut self, from: &'static str, to: &'static str) -> Result<()>;
    fn clear(&mut self, name: &'static str, dbi: u32) -> Result<()>;
    #[allow(clippy::type_complexity)]
    fn read_batch(
        &mut self,
        name: &'static str,
        dbi: u32,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
    fn get_raw(&mut self, name: &'static str, dbi: u32, key: &[u8]) -> Result<Option<Vec<u8>>>;
    fn put_raw(
        &mut self,
        name: &'static str,
        dbi: u32,
        k: &[u8],
        v: &[u8],
        append: bool,
    ) -> Result<()>;
    fn delete_raw(&mut self, name: &'static str, dbi: u32, key: &[u8]) -> Result<bool>;
    fn meta_put(&mut self, key: &str, value: &[u8]) -> Result<()>;
    fn meta_delete(&mut self, key: &str) -> Result<()>;
    fn checkpoint(&mut self) -> Result<()>;
}

impl<S: Schema> Access for Bootstrap<S> {
    fn find(&mut self, name: &'static str) -> Result<Option<ExistingTable>> {
        self.find_table(name)
    }
    fn create(&mut self, name: &'static str, flags: TableFlags) -> Result<u32> {
        self.create_table(name, flags)
    }
    fn drop_table(&mut self, name: &'static str) -> Result<bool> {
        Bootstrap::drop_table(self, name)
    }
    fn rename(&mut self, from: &'static str, to: &'static str) -> Result<()> {
        self.rename_table(from, to)
    }
    fn clear(&mut self, name: &'static str, dbi: u32) -> Result<()> {
        self.clear_table(name, dbi)
    }
    fn read_batch(
        &mut self,
        name: &'static str,
        dbi: u32,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        Bootstrap::read_batch(self, name, dbi, after, limit)
    }
    fn get_raw(&mut self, name: &'static str, dbi: u32, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Bootstrap::get_raw(self, name, dbi, key)
    }
    fn put_raw(
        &mut self,
        name: &'static str,
        dbi: u32,
        k: &[u8],
        v: &[u8],
        append: bool,
    ) -> Result<()> {
        Bootstrap::put_raw(self, name, dbi, k, v, append)
    }
    fn delete_raw(&mut self, name: &'static str, dbi: u32, key: &[u8]) -> Result<bool> {
        Bootstrap::delete_raw(self, name, dbi, key)
    }
    fn meta_put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        Bootstrap::meta_put(self, key, value)
    }
    fn meta_delete(&mut self, key: &str) -> Result<()> {
        Bootstrap::meta_delete(self, key)
    }
    fn checkpoint(&mut self) -> Result<()> {
        Bootstrap::checkpoint(self)
    }
}

/// Typed access to any table during a migration step's [`run`](crate::Step::run) operation.
///
/// Tables are opened by their declared name (and created with their declared flags when
/// missing): this is the one place that may do so, because no handle has been published yet.
pub struct MigrationTx<'a> {
    access: &'a mut dyn Access,
}

impl MigrationTx<'_> {
    fn dbi<T: Table>(&mut self) -> Result<u32> {
        match self.access.find(T::NAME)? {
            Some(t) => Ok(t.dbi),
            None => self.access.create(T::NAME, T::FLAGS),
        }
    }

    /// Reads the value under `key`.
    ///
    /// # Errors
    ///
    /// [`Error::Decode`] or [`Error::Mdbx`].
    pub fn get<T: Table>(&mut self, key: &T::Key) -> Result<Option<T::Value>> {
        let dbi = self.dbi::<T>()?;
        let k = encode_stored_key::<T>(key);
        match self.access.get_raw(T::NAME, dbi, &k)? {
            Some(v) => decode_stored_value::<T>(&k, &v).map(Some),
            None => Ok(None),
        }
    }

    /// Stores `value` under `key`.
    ///
    /// # Errors
    ///
    /// [`Error::Encode`] or [`Error::Mdbx`].
    pub fn put<T: Table>(&mut self, key: &T::Key, value: &T::Value) -> Result<()> {
        let dbi = self.dbi::<T>()?;
        let k = encode_stored_key::<T>(key);
        let v = encode_stored_value::<T>(&k, value)?;
        self.access.put_raw(T::NAME, dbi, &k, &v, false)
    }

    /// Deletes `key`; returns whether it was present.
    ///
    /// # Errors
    ///
    /// [`Error::Mdbx`].
    pub fn delete<T: Table>(&mut self, key: &T::Key) -> Result<bool> {
        let dbi = self.dbi::<T>()?;
        let k = encode_stored_key::<T>(key);
        self.access.delete_raw(T::NAME, dbi, &k)
    }

    /// Calls `f` with every entry of the table, in key order (read in batches).
    ///
    /// # Errors
    ///
    /// [`Error::Decode`], [`Error::Mdbx`], or what `f` returns.
    pub fn for_each<T: Table>(
        &mut self,
        mut f: impl FnMut(T::Key, T::Value) -> Result<()>,
    ) -> Result<()> {
        let dbi = self.dbi::<T>()?;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let batch = self
                .access
                .read_batch(T::NAME, dbi, after.as_deref(), 1024)?;
            let Some((last, _)) = batch.last() else {
                return Ok(());
            };
            let last = last.clone();
            for (k, v) in &batch {
                f(decode_stored_key::<T>(k)?, decode_stored_value::<T>(k, v)?)?;
            }
            after = Some(last);
        }
    }
}

fn step_error(step: &Step, message: String) -> Error {
    Error::Migration {
        version: step.version,
        step: step.name.to_string(),
        message,
    }
}

fn save<A: Access>(a: &mut A, record: &mut SchemaRecord) -> Result<()> {
    let bytes = record.encode();
    a.meta_put(SCHEMA_RECORD_KEY, &bytes)
}

/// Applies one step, resuming from `resume`, which the caller has checked belongs to this exact
/// declaration (`crate::resume_state`). Commits at every batch, with the record marking the step
/// in progress, and at the end, with the step recorded as applied; returns the number of
/// entries rewritten.
pub(crate) fn apply_step<A: Access>(
    a: &mut A,
    step: &Step,
    record: &mut SchemaRecord,
    resume: Option<StepProgress>,
    migrations: &Migrations,
) -> Result<u64> {
    let started = Instant::now();
    debug_assert!(resume.as_ref().is_none_or(|p| p.version == step.version
        && p.name == step.name
        && p.checksum == step.checksum()));
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
        entries += apply_op(a, step, index, op, record, from, migrations)?;
    }
    record.version = step.version;
    record.in_progress = None;
    record.applied.push(AppliedStep {
        version: step.version,
        name: step.name.to_string(),
        checksum: step.checksum(),
    });
    save(a, record)?;
    a.meta_delete(PROGRESS_KEY)?;
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

fn apply_op<A: Access>(
    a: &mut A,
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
            if a.find(name)?.is_none() {
                a.create(name, *flags)?;
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
            if a.find(from)?.is_none() {
                return Err(step_error(
                    step,
                    format!("cannot rename table `{from}`: it does not exist"),
                ));
            }
            if a.find(to)?.is_some() {
                return Err(step_error(
                    step,
                    format!("cannot rename table `{from}` to `{to}`: `{to}` already exists"),
                ));
            }
            a.rename(from, to)?;
            if let Some(rec) = record.tables.remove(*from) {
                record.tables.insert(to.to_string(), rec);
            }
            Ok(0)
        }
        Op::Run { f, .. } => {
            f(&mut MigrationTx { access: a })?;
            Ok(0)
        }
        Op::Rewrite {
            what,
            source,
            target,
            flags,
            record: rec,
            replace,
            in_order,
            unique,
            map,
            ..
        } => {
            let Some(src) = a.find(source)? else {
                return Err(step_error(
                    step,
                    format!("cannot {what}: table `{source}` does not exist"),
                ));
            };
            let dst = match a.find(target)? {
                // A leftover temporary table without this operation's progress holds nothing
                // committed that counts: start it afresh.
                Some(t) if *replace && resume.is_none() => {
                    a.clear(target, t.dbi)?;
                    t.dbi
                }
                Some(t) => t.dbi,
                None => a.create(target, *flags)?,
            };
            let total = src.entries;
            let mut after = resume.and_then(|p| p.after.clone());
            let mut done = resume.map_or(0, |p| p.done);
            let batch_size = migrations.batch_size_or_default();
            loop {
                let batch = a.read_batch(source, src.dbi, after.as_deref(), batch_size)?;
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
            if *replace {
                a.drop_table(source)?;
                a.rename(target, source)?;
                record.tables.insert(source.to_string(), rec.clone());
            } else {
                record.tables.insert(target.to_string(), rec.clone());
            }
            Ok(done)
        }
    }
}
