//! Power cuts and I/O faults under Tabula, through the `tabula-faultfs` FUSE disk.
//!
//! A child process (this test binary run again with `TABULA_POWERCUT_CHILD` set) runs a fixed
//! workload on a database kept on a [`Disk`] mounted with FUSE: ordinary commits, a migration
//! with a `transform` step in small batches, a bulk load in small batches, more commits. After
//! each commit, migration batch, bulk batch and close it puts a mark into the disk's order of
//! events ([`tabula_faultfs::mark`]), so the test knows exactly which writes came before which
//! call returned.
//!
//! - Power cuts: the disk stops at a random mutating request; the child is killed; what the
//!   disk had made durable (plus, every other cut, a random subset of the pending writes) is
//!   written to a real directory and opened by this process, which has a different boot ID
//!   than the child (see [`tabula_faultfs::new_boot_namespace`]), as after a reboot. The open
//!   must succeed, `Db::check` must be clean, and the contents must equal the state after some
//!   unit of the workload, no older than the sync mode allows and no newer than the unit in
//!   flight.
//! - Faults: the disk fails the N-th write or fsync of `mdbx.dat` with `EIO` or `ENOSPC`. The
//!   Tabula call must return an error (the child prints it), the child must survive, reopen the
//!   database, find `Db::check` clean and nothing it committed before the fault missing; then
//!   the disk's durable image is checked as after a power cut.
//!
//! Skips (and says why) without `/dev/fuse` or without the privileges to mount. The seed is
//! printed; `TABULA_POWERCUT_SEED` replays a run, `TABULA_POWERCUT_CUTS` sets the number of
//! cuts (default 330), `TABULA_POWERCUT_FAULTS` the number of fault runs (default 24).
//!
//! The file has its own `main` (`harness = false`, the root's `tests/support/harness.rs`): the
//! child and verifier entries are not tests.

#[path = "../../../tests/support/harness.rs"]
#[macro_use]
mod harness;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tabula::{Db, Migrations, Options, Raw, Schema, SyncMode, Table};
use tabula_faultfs::{Disk, Fault, FaultOp, Mark, Piece, PieceOp, Reorder};

const CHILD_ENV: &str = "TABULA_POWERCUT_CHILD";
const DIR_ENV: &str = "TABULA_POWERCUT_DIR";
const VERIFY_ENV: &str = "TABULA_POWERCUT_VERIFY";

// ---------------------------------------------------------------------------------------------
// The schema, in two versions.

/// The last unit written; overwritten by every commit.
#[derive(Table)]
#[table(name = "head", key = u8, value = u64)]
struct Head;

/// Filled by the bulk load.
#[derive(Table)]
#[table(name = "bulk", key = u64, value = Vec<u8>, codec = Raw)]
struct Bulk;

mod v1 {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Item {
        pub payload: Vec<u8>,
    }

    #[derive(Table)]
    #[table(name = "items", key = u64, value = Item)]
    pub struct Items;

    #[derive(Schema)]
    pub struct App(Items, Head, Bulk);
}

mod v2 {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Item {
        pub payload: Vec<u8>,
        pub sum: u64,
    }

    #[derive(Table)]
    #[table(name = "items", key = u64, value = Item)]
    pub struct Items;

    #[derive(Schema)]
    pub struct App(Items, Head, Bulk);

    pub fn item(payload: &[u8]) -> Item {
        Item {
            payload: payload.to_vec(),
            sum: checksum(payload),
        }
    }

    /// Version 2 adds a checksum to every item, in batches of 8.
    pub fn migrations() -> Migrations {
        Migrations::new()
            .batch_size(8)
            .step(2, "items-with-sum", |m| {
                m.transform::<Items, v1::Item>(|old| item(&old.payload))
            })
    }
}

fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

// ---------------------------------------------------------------------------------------------
// The workload: a deterministic plan of actions, and the state after each unit.

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = mix(self.0);
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
struct State {
    items: BTreeMap<u64, Vec<u8>>,
    head: Option<u64>,
    bulk: BTreeMap<u64, Vec<u8>>,
}

/// How a unit's commit reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A commit under the database's sync mode.
    Commit,
    /// A bulk-load batch: a weak checkpoint, never flushed on its own.
    Weak,
    /// Flushed: closing the database (`mdbx_env_close_ex(dont_sync = false)`) or a bulk load
    /// that returned `Ok`.
    Synced,
}

#[derive(Debug, Clone)]
enum Action {
    /// `tabula::open` at version 1.
    Open1,
    /// A write transaction at version 1 (`v2 == false`) or 2.
    Commit {
        n: u64,
        v2: bool,
        puts: Vec<(u64, Vec<u8>)>,
        dels: Vec<u64>,
    },
    /// Drop the `Db`.
    Close { n: u64 },
    /// `open_with` version 2 and its migrations.
    Migrate,
    /// `bulk_load` into `bulk` in batches of `batch`.
    BulkLoad {
        entries: Vec<(u64, Vec<u8>)>,
        batch: usize,
    },
}

#[derive(Debug, Clone)]
struct Unit {
    label: String,
    kind: Kind,
    state: State,
}

struct Plan {
    actions: Vec<Action>,
    /// `units[0]` is the empty database before anything ran.
    units: Vec<Unit>,
}

impl Plan {
    fn new(seed: u64) -> Plan {
        let mut rng = Rng(seed);
        let mut actions = Vec::new();
        let mut units = vec![Unit {
            label: "start".into(),
            kind: Kind::Synced,
            state: State::default(),
        }];
        let mut state = State::default();
        let push = |units: &mut Vec<Unit>, label: String, kind: Kind, state: &State| {
            units.push(Unit {
                label,
                kind,
                state: state.clone(),
            })
        };
        let mut n = 0u64;
        let mut commits = |rng: &mut Rng,
                           actions: &mut Vec<Action>,
                           units: &mut Vec<Unit>,
                           state: &mut State,
                           count: u64,
                           v2: bool| {
            for _ in 0..count {
                n += 1;
                let mut puts = Vec::new();
                let mut dels = Vec::new();
                for _ in 0..1 + rng.below(10) {
                    let key = rng.below(160);
                    if rng.below(6) == 0 && !state.items.is_empty() {
                        dels.push(key);
                    } else {
                        // Mostly small values, some on overflow pages.
                        let len = if rng.below(5) == 0 {
                            2_000 + rng.below(4_000)
                        } else {
                            1 + rng.below(300)
                        } as usize;
                        let fill = rng.next();
                        let payload: Vec<u8> = (0..len)
                            .map(|i| (fill >> (i % 8 * 8)) as u8 ^ i as u8)
                            .collect();
                        puts.push((key, payload));
                    }
                }
                for (k, v) in &puts {
                    state.items.insert(*k, v.clone());
                }
                for k in &dels {
                    state.items.remove(k);
                }
                state.head = Some(n);
                actions.push(Action::Commit { n, v2, puts, dels });
                push(units, format!("c{n}"), Kind::Commit, state);
            }
        };

        actions.push(Action::Open1);
        push(&mut units, "open1".into(), Kind::Commit, &state);
        commits(&mut rng, &mut actions, &mut units, &mut state, 14, false);
        actions.push(Action::Close { n: 1 });
        push(&mut units, "close1".into(), Kind::Synced, &state);
        actions.push(Action::Migrate);
        push(&mut units, "open2".into(), Kind::Commit, &state);
        commits(&mut rng, &mut actions, &mut units, &mut state, 6, true);
        let count = 240 + rng.below(120);
        let batch = 40;
        let entries: Vec<(u64, Vec<u8>)> = (0..count)
            .map(|k| {
                let len = 8 + rng.below(200) as usize;
                (k * 3, vec![(k % 251) as u8; len])
            })
            .collect();
        for (b, chunk) in entries.chunks(batch).enumerate() {
            for (k, v) in chunk {
                state.bulk.insert(*k, v.clone());
            }
            push(&mut units, format!("bulk-{}", b + 1), Kind::Weak, &state);
        }
        push(&mut units, "bulk-done".into(), Kind::Synced, &state);
        actions.push(Action::BulkLoad { entries, batch });
        commits(&mut rng, &mut actions, &mut units, &mut state, 6, true);
        actions.push(Action::Close { n: 2 });
        push(&mut units, "close2".into(), Kind::Synced, &state);
        Plan { actions, units }
    }

    /// The unit a mark stands for. Every migration batch (`mig-*`) leaves the contents as they
    /// were: it stands for the unit of the migration's open.
    fn unit_of(&self, label: &str) -> Option<usize> {
        let label = if label.starts_with("mig-") {
            "open2"
        } else {
            label
        };
        self.units.iter().position(|u| u.label == label)
    }
}

/// How much a cut may take back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// After a power cut, under this sync mode.
    PowerCut(SyncMode),
    /// Reopened by the same process (same boot): nothing that returned may be lost.
    SameBoot,
}

/// The oldest and newest unit the contents may show, given the marks recorded before the cut.
fn bounds(plan: &Plan, labels: &[String], bound: Bound) -> Result<(usize, usize), String> {
    let mut marked = Vec::new();
    for label in labels {
        let unit = plan
            .unit_of(label)
            .ok_or_else(|| format!("the child marked `{label}`, which is not in the plan"))?;
        marked.push((unit, plan.units[unit].kind));
    }
    let last = marked.iter().map(|m| m.0).max().unwrap_or(0);
    let hi = (last + 1).min(plan.units.len() - 1);
    let last_of = |pred: &dyn Fn(Kind) -> bool| {
        marked
            .iter()
            .filter(|m| pred(m.1))
            .map(|m| m.0)
            .max()
            .unwrap_or(0)
    };
    let lo = match bound {
        Bound::SameBoot => last,
        Bound::PowerCut(SyncMode::Durable) => last_of(&|k| k != Kind::Weak),
        Bound::PowerCut(SyncMode::SafeNoSync) => last_of(&|k| k == Kind::Synced),
        Bound::PowerCut(SyncMode::NoMetaSync) => {
            // The meta page of a commit is flushed by the next commit's data flush (or by a
            // sync): only the last commit may roll back.
            let steady: Vec<usize> = marked
                .iter()
                .filter(|m| m.1 != Kind::Weak)
                .map(|m| m.0)
                .collect();
            let before_last = if steady.len() >= 2 {
                steady[steady.len() - 2]
            } else {
                0
            };
            before_last.max(last_of(&|k| k == Kind::Synced))
        }
        Bound::PowerCut(other) => return Err(format!("no bound for {other:?}")),
    };
    Ok((lo, hi))
}

fn options(mode: SyncMode, write_map: bool) -> Options {
    Options::new()
        .sync(mode)
        .write_map(write_map)
        .max_size(64 << 20)
        .growth_step(256 << 10)
        .long_read_warning(None)
}

/// Flush settings of a `SafeNoSync` writer beyond [`options`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flush {
    /// The default flush threshold.
    Threshold,
    /// `flush_threshold(0)`: libmdbx makes its own steady checkpoint whenever the file is full
    /// at its current size.
    Full,
    /// [`Flush::Full`], with long-reader control on (a maximum read age of an hour, which cuts
    /// nothing here), so that libmdbx's slow-reader hook runs in every write that would grow
    /// the file.
    FullHooked,
}

impl Flush {
    fn code(self) -> u8 {
        match self {
            Flush::Threshold => 0,
            Flush::Full => 1,
            Flush::FullHooked => 2,
        }
    }

    fn parse(s: &str) -> Flush {
        match s {
            "1" => Flush::Full,
            "2" => Flush::FullHooked,
            _ => Flush::Threshold,
        }
    }
}

/// The writer's options: [`options`] with `flush`'s settings.
fn writer_options(mode: SyncMode, write_map: bool, flush: Flush) -> Options {
    let o = options(mode, write_map);
    match flush {
        Flush::Threshold => o,
        Flush::Full => o.flush_threshold(0),
        Flush::FullHooked => o
            .flush_threshold(0)
            .max_read_age(Some(Duration::from_secs(3600))),
    }
}

/// Runs the plan on `dir`, marking each unit on the disk mounted there. Returns the label of
/// the action that failed and its error.
fn run_plan(
    dir: &Path,
    plan: &Plan,
    mode: SyncMode,
    write_map: bool,
    flush: Flush,
) -> Result<(), String> {
    let opts = || writer_options(mode, write_map, flush);
    let mark_here = |label: &str| mark(dir, label);
    let mut db1: Option<Db<v1::App>> = None;
    let mut db2: Option<Db<v2::App>> = None;
    for action in &plan.actions {
        match action {
            Action::Open1 => {
                db1 =
                    Some(tabula::open::<v1::App>(dir, opts()).map_err(|e| format!("open1: {e}"))?);
                mark_here("open1");
            }
            Action::Commit { n, v2, puts, dels } => {
                let label = format!("c{n}");
                let fail = |e: tabula::Error| format!("{label}: {e}");
                if *v2 {
                    let db = db2.as_ref().ok_or("no db")?;
                    let mut tx = db.write().map_err(fail)?;
                    for (k, v) in puts {
                        tx.put::<v2::Items>(k, &v2::item(v)).map_err(fail)?;
                    }
                    for k in dels {
                        tx.delete::<v2::Items>(k).map_err(fail)?;
                    }
                    tx.put::<Head>(&0, n).map_err(fail)?;
                    tx.commit().map_err(fail)?;
                } else {
                    let db = db1.as_ref().ok_or("no db")?;
                    let mut tx = db.write().map_err(fail)?;
                    for (k, v) in puts {
                        tx.put::<v1::Items>(k, &v1::Item { payload: v.clone() })
                            .map_err(fail)?;
                    }
                    for k in dels {
                        tx.delete::<v1::Items>(k).map_err(fail)?;
                    }
                    tx.put::<Head>(&0, n).map_err(fail)?;
                    tx.commit().map_err(fail)?;
                }
                mark_here(&label);
            }
            Action::Close { n } => {
                drop(db1.take());
                drop(db2.take());
                mark_here(&format!("close{n}"));
            }
            Action::Migrate => {
                let marks_dir = dir.to_path_buf();
                let batches = Arc::new(Mutex::new(0u64));
                let migrations = v2::migrations().on_progress(move |_| {
                    let mut n = batches.lock().unwrap_or_else(|p| p.into_inner());
                    *n += 1;
                    mark(&marks_dir, &format!("mig-{n}"));
                });
                let (db, _) = tabula::open_with::<v2::App>(dir, opts(), &migrations)
                    .map_err(|e| format!("open2 (migration): {e}"))?;
                db2 = Some(db);
                mark_here("open2");
            }
            Action::BulkLoad { entries, batch } => {
                let db = db2.as_ref().ok_or("no db")?;
                db.bulk_loader::<Bulk>()
                    .batch_entries(*batch)
                    .on_batch(|r| mark_here(&format!("bulk-{}", r.batches)))
                    .load(entries.iter().map(|(k, v)| (k, v)))
                    .map_err(|e| format!("bulk load: {e}"))?;
                mark_here("bulk-done");
            }
        }
    }
    Ok(())
}

/// Why a verification failed. Every kind fails the test: no sync mode that the suite runs
/// (`Durable`, `NoMetaSync`, `SafeNoSync`) may leave a file that does not open, check clean and
/// hold one of the states its bound allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Failure {
    /// The reopen failed.
    Open,
    /// `Db::check` failed to run or found problems.
    Check,
    /// Reading the contents failed.
    Read,
    /// An item's checksum does not match its payload.
    Checksum,
    /// The contents are not the state of any unit within the bounds.
    Contents,
    /// The verifier process died (a libmdbx assertion, a panic, a signal).
    Crash,
    /// The writer misbehaved (exited after the cut, or failed without one).
    Writer,
}

impl Failure {
    fn name(self) -> &'static str {
        match self {
            Failure::Open => "open",
            Failure::Check => "check",
            Failure::Read => "read",
            Failure::Checksum => "checksum",
            Failure::Contents => "contents",
            Failure::Crash => "crash",
            Failure::Writer => "writer",
        }
    }

    fn parse(s: &str) -> Option<Failure> {
        [
            Failure::Open,
            Failure::Check,
            Failure::Read,
            Failure::Checksum,
            Failure::Contents,
        ]
        .into_iter()
        .find(|f| f.name() == s)
    }
}

/// Opens the database at `dir` at version 2 (finishing an interrupted migration), checks it,
/// and finds the unit whose state it holds within `lo..=hi`. `opened`: whether the writer's
/// first `tabula::open` had returned before the cut.
fn verify(
    dir: &Path,
    plan: &Plan,
    lo: usize,
    hi: usize,
    opened: bool,
) -> Result<usize, (Failure, String)> {
    let db = match open_verified(dir, opened)? {
        Some(db) => db,
        None => return Ok(0),
    };
    let state = read_state(&db)?;
    if let Some(j) = (lo..=hi).find(|&j| plan.units[j].state == state) {
        return Ok(j);
    }
    let elsewhere: Vec<&str> = plan
        .units
        .iter()
        .filter(|u| u.state == state)
        .map(|u| u.label.as_str())
        .collect();
    Err((
        Failure::Contents,
        format!(
            "the contents (head {:?}, {} items, {} bulk entries) are not the state of any unit \
             from `{}` to `{}`; they match {:?}",
            state.head,
            state.items.len(),
            state.bulk.len(),
            plan.units[lo].label,
            plan.units[hi].label,
            elsewhere
        ),
    ))
}

/// Opens the image at version 2 and runs `Db::check`. `None`: the cut came while the first
/// `tabula::open` was still creating the file (`opened` false, so the empty state is allowed)
/// and left a data file that is not yet a database: too short for its meta pages, or without
/// a valid one. Tabula refuses such a file rather than re-initialise it (a truncated or
/// damaged database looks the same); nothing committed is lost. After the first open returned
/// the same refusal is a failure: the file the open created must have been made durable.
fn open_verified(dir: &Path, opened: bool) -> Result<Option<Db<v2::App>>, (Failure, String)> {
    let result =
        tabula::open_with::<v2::App>(dir, options(SyncMode::Durable, false), &v2::migrations());
    let db = match result {
        Err(e @ tabula::Error::BadFile { .. }) if !opened => {
            eprintln!("TABULA-CREATION-CUT {e}");
            return Ok(None);
        }
        Err(e @ tabula::Error::Open { code, .. }) if !opened && code.name() == "MDBX_INVALID" => {
            eprintln!("TABULA-CREATION-CUT {e}");
            return Ok(None);
        }
        Err(e) => return Err((Failure::Open, format!("reopen failed: {e}"))),
        Ok((db, _)) => db,
    };
    let report = db
        .check()
        .map_err(|e| (Failure::Check, format!("Db::check failed: {e}")))?;
    if !report.is_ok() {
        return Err((
            Failure::Check,
            format!("Db::check found {} problems", report.problems),
        ));
    }
    Ok(Some(db))
}

fn read_state(db: &Db<v2::App>) -> Result<State, (Failure, String)> {
    let read = |e: tabula::Error| (Failure::Read, e.to_string());
    let tx = db.read().map_err(read)?;
    let mut state = State::default();
    for entry in tx.iter::<v2::Items>() {
        let (k, item) = entry.map_err(read)?;
        if item.sum != checksum(&item.payload) {
            return Err((Failure::Checksum, format!("item {k}: checksum mismatch")));
        }
        state.items.insert(k, item.payload);
    }
    state.head = tx.get::<Head>(&0).map_err(read)?;
    for entry in tx.iter::<Bulk>() {
        let (k, v) = entry.map_err(read)?;
        state.bulk.insert(k, v);
    }
    Ok(state)
}

// ---------------------------------------------------------------------------------------------
// The child.

fn main() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        match spec.strip_prefix("rewrite:") {
            Some(spec) => rewrite_child(spec),
            None => powercut_child(&spec),
        }
        return;
    }
    if let Ok(spec) = std::env::var(VERIFY_ENV) {
        powercut_verifier(&spec);
        return;
    }
    run_tests!(
        power_cuts_durable,
        power_cuts_durable_write_map,
        power_cuts_no_meta_sync,
        power_cuts_no_meta_sync_write_map,
        power_cuts_safe_no_sync,
        power_cuts_safe_no_sync_write_map,
        power_cuts_safe_no_sync_flush0,
        power_cuts_safe_no_sync_flush0_write_map,
        power_cuts_safe_no_sync_flush0_hooked,
        no_meta_sync_data_before_meta,
        no_meta_sync_data_before_meta_write_map,
        safe_no_sync_new_file_before_first_flush,
        safe_no_sync_new_file_before_first_flush_write_map,
        no_meta_sync_bulk_load_weak_metas,
        no_meta_sync_bulk_load_weak_metas_write_map,
        io_faults,
    );
}

/// The writer: runs the plan on the mounted disk. With `fault` set, an error is expected: it
/// is printed, the database reopened in this process and checked against the marks.
fn powercut_child(spec: &str) {
    let dir = PathBuf::from(std::env::var(DIR_ENV).expect("the child needs its directory"));
    let parts: Vec<&str> = spec.split(':').collect();
    let mode = parse_mode(parts[0]);
    let seed: u64 = parts[1].parse().expect("seed");
    let write_map = parts[2] == "1";
    let fault_run = parts[3] == "fault";
    let flush = Flush::parse(parts[4]);
    let plan = Plan::new(seed);
    match run_plan(&dir, &plan, mode, write_map, flush) {
        Ok(()) => println!("TABULA-DONE"),
        Err(e) => {
            println!("TABULA-ERROR {e}");
            if fault_run {
                // Same process, same boot: everything that returned must still be there.
                let labels = MARKS.lock().map(|m| m.clone()).unwrap_or_default();
                let outcome = bounds(&plan, &labels, Bound::SameBoot)
                    .map_err(|e| (Failure::Contents, e))
                    .and_then(|(lo, hi)| verify(&dir, &plan, lo, hi, true));
                match outcome {
                    Ok(j) => println!("TABULA-REOPENED {}", plan.units[j].label),
                    Err((kind, e)) => println!("TABULA-REOPEN-FAILED {}: {e}", kind.name()),
                }
            }
        }
    }
}

/// The verifier: opens an image after a cut, in a process of its own (so a libmdbx assertion
/// is a reported failure, not the end of the test) that has a boot ID of its own.
fn powercut_verifier(spec: &str) {
    // libmdbx's log (rollbacks, what it found damaged) goes to stderr, for the report.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .try_init();
    let parts: Vec<&str> = spec.split('|').collect();
    let dir = Path::new(parts[0]);
    let opened = parts[4] == "1";
    let outcome = match parts[1] {
        "rewrite" => {
            let lo: u64 = parts[2].parse().expect("lo");
            let hi: u64 = parts[3].parse().expect("hi");
            verify_rewrite(dir, lo, hi, opened).map(|c| c as usize)
        }
        seed => {
            let seed: u64 = seed.parse().expect("seed");
            let lo: usize = parts[2].parse().expect("lo");
            let hi: usize = parts[3].parse().expect("hi");
            verify(dir, &Plan::new(seed), lo, hi, opened)
        }
    };
    match outcome {
        Ok(j) => println!("TABULA-VERIFIED {j}"),
        Err((kind, e)) => println!("TABULA-VERIFY-FAILED {}: {e}", kind.name()),
    }
}

/// The marks this process made, i.e. the units whose call returned.
static MARKS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Marks `label` on the disk mounted at `dir` and remembers it.
fn mark(dir: &Path, label: &str) {
    tabula_faultfs::mark(dir, label);
    MARKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(label.to_owned());
}

fn parse_mode(s: &str) -> SyncMode {
    match s {
        "durable" => SyncMode::Durable,
        "nometasync" => SyncMode::NoMetaSync,
        "safenosync" => SyncMode::SafeNoSync,
        other => panic!("unknown mode {other}"),
    }
}

fn mode_name(mode: SyncMode) -> &'static str {
    match mode {
        SyncMode::Durable => "durable",
        SyncMode::NoMetaSync => "nometasync",
        SyncMode::SafeNoSync => "safenosync",
        _ => "other",
    }
}

// ---------------------------------------------------------------------------------------------
// The parent.

/// Prints to stderr past libtest's output capture, so that the seed, the figures and a skip
/// show in a plain `cargo test` run.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// The group that names these tests in `TABULA_ALLOW_SKIP` (`harness::skip`).
const SKIP_GROUP: &str = "powercut";

/// This test cannot run here, for the reason `why`: fails (panics) unless `TABULA_ALLOW_SKIP`
/// names `powercut`; otherwise says so loudly and returns the skip, for the test to return
/// (reported `ignored`).
fn skip(test: &str, why: &str) -> Result<(), harness::Ran> {
    Err(harness::skip(SKIP_GROUP, &format!("{test}: {why}")))
}

/// Prepares this test thread: a private mount namespace with per-process boot IDs. `Err`
/// with the skip when the test cannot run here and the skip is allowed ([`skip`]).
fn prepare(test: &str) -> Result<(), harness::Ran> {
    if !Path::new("/dev/fuse").exists() {
        return skip(
            test,
            "/dev/fuse does not exist (load the fuse module, or run in a VM)",
        );
    }
    let ours = std::fs::read("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    if let Err(e) = tabula_faultfs::new_boot_namespace() {
        return skip(
            test,
            &format!("cannot set up a mount namespace (run as root): {e}"),
        );
    }
    // Each process started from here on must read a boot ID of its own (libmdbx judges
    // unflushed commits by it): without that the test would model a process crash, not a
    // power cut.
    let boot_id = || {
        Command::new("cat")
            .arg("/proc/sys/kernel/random/boot_id")
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default()
    };
    let (a, b) = (boot_id(), boot_id());
    assert!(
        !a.is_empty() && a != b && a != ours,
        "{test}: child processes do not get boot IDs of their own ({a:?}, {b:?}, ours {ours:?})"
    );
    // Mount once to see that FUSE works here.
    let dir = tempfile::tempdir().expect("tempdir");
    match Disk::new().mount(dir.path()) {
        Ok(m) => {
            if let Err(e) = m.unmount() {
                return skip(test, &format!("unmounting a FUSE file system failed: {e}"));
            }
        }
        Err(e) => {
            return skip(test, &format!("cannot mount a FUSE file system: {e}"));
        }
    }
    Ok(())
}

fn base_seed() -> u64 {
    match std::env::var("TABULA_POWERCUT_SEED") {
        Ok(s) => s.parse().expect("TABULA_POWERCUT_SEED must be a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
    }
}

fn env_count(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

struct ChildRun {
    stdout: String,
    stderr: String,
    /// The disk lost power while the child ran.
    cut: bool,
    /// How the child ended (`None`: killed by the test after the cut).
    exit: Option<std::process::ExitStatus>,
    marks: Vec<Mark>,
}

/// The child's spec for the plan's workload.
fn plan_spec(mode: SyncMode, seed: u64, write_map: bool, fault: bool, flush: Flush) -> String {
    format!(
        "{}:{seed}:{}:{}:{}",
        mode_name(mode),
        u8::from(write_map),
        if fault { "fault" } else { "cut" },
        flush.code()
    )
}

fn spawn_child(mnt: &Path, spec: &str) -> Child {
    let exe = std::env::current_exe().expect("current exe");
    Command::new(exe)
        .env(CHILD_ENV, spec)
        .env(DIR_ENV, mnt)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child")
}

fn collect(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// Mounts a fresh disk, runs a child on the plan's workload until it ends or the power is cut
/// (then kills it), unmounts, and returns what happened with the disk.
fn run_child(
    setup: impl FnOnce(&Disk),
    mode: SyncMode,
    seed: u64,
    write_map: bool,
    fault: bool,
) -> (Disk, ChildRun) {
    run_spec(
        setup,
        &plan_spec(mode, seed, write_map, fault, Flush::Threshold),
    )
}

/// [`run_child`] for a child given by its spec.
fn run_spec(setup: impl FnOnce(&Disk), spec: &str) -> (Disk, ChildRun) {
    let disk = Disk::new();
    setup(&disk);
    let mnt = tempfile::tempdir().expect("tempdir");
    let mounted = disk.mount(mnt.path()).expect("mount");
    let mut child = spawn_child(mnt.path(), spec);
    let out = collect(child.stdout.take().expect("stdout"));
    let err = collect(child.stderr.take().expect("stderr"));
    let started = Instant::now();
    let mut exit = None;
    let mut cut = false;
    loop {
        if disk.wait_cut(Duration::from_millis(2)) {
            cut = true;
            break;
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            exit = Some(status);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the child ran for 5 minutes without finishing or reaching the cut"
        );
    }
    if cut {
        // Nothing of the child may run after a request failed: kill it, then let the waiting
        // requests fail.
        let _ = child.kill();
    }
    disk.release();
    let status = child.wait().expect("wait");
    if !cut {
        exit = Some(status);
    }
    let marks = disk.marks();
    mounted.unmount().expect("unmount");
    let run = ChildRun {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        cut,
        exit,
        marks,
    };
    (disk, run)
}

fn labels(marks: &[Mark]) -> Vec<String> {
    marks.iter().map(|m| m.label.clone()).collect()
}

/// Writes the disk's image after a cut (with `reorder`) to a new directory and verifies it in
/// a verifier process, with the bounds `bound` gives for `marks`. Returns `(lo, unit, hi)`.
fn verify_image(
    disk: &Disk,
    reorder: Reorder,
    seed: u64,
    plan: &Plan,
    marks: &[Mark],
    bound: Bound,
) -> Result<(usize, usize, usize), (Failure, String)> {
    let (lo, hi) = bounds(plan, &labels(marks), bound).map_err(|e| (Failure::Contents, e))?;
    let image = disk.durable_image(reorder);
    let keep = format!("seed{seed}-{}", marks.len());
    let spec = |dir: &Path| format!("{}|{seed}|{lo}|{hi}|{}", dir.display(), opened(marks));
    let j = verify_in_child(&image, &spec, &keep)?;
    Ok((lo, j, hi))
}

/// Whether the writer's first `tabula::open` returned (it marks `open1`, or `r-open`).
fn opened(marks: &[Mark]) -> u8 {
    u8::from(!marks.is_empty())
}

/// Writes `image` to a new directory and runs the verifier on it with the spec `spec(dir)`;
/// on failure keeps the image under `$TABULA_POWERCUT_KEEP/<keep>` when that is set.
fn verify_in_child(
    image: &tabula_faultfs::Image,
    spec: &dyn Fn(&Path) -> String,
    keep: &str,
) -> Result<usize, (Failure, String)> {
    let crash = |e: String| (Failure::Crash, e);
    let dir = tempfile::tempdir().map_err(|e| crash(e.to_string()))?;
    image
        .write_to(dir.path())
        .map_err(|e| crash(e.to_string()))?;
    let exe = std::env::current_exe().map_err(|e| crash(e.to_string()))?;
    let out = Command::new(exe)
        .env(VERIFY_ENV, spec(dir.path()))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| crash(format!("running the verifier: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let verified = stdout
        .split_once("TABULA-VERIFIED ")
        .and_then(|j| j.1.split_whitespace().next()?.parse::<usize>().ok());
    let failed = stdout.split_once("TABULA-VERIFY-FAILED ").map(|e| {
        let (kind, detail) = e.1.trim().split_once(": ").unwrap_or(("", e.1.trim()));
        (Failure::parse(kind), detail.to_owned())
    });
    let result = match (verified, failed) {
        (Some(j), None) if out.status.success() => Ok(j),
        (None, Some((Some(kind), detail))) if out.status.success() => Err((
            kind,
            format!("{detail}\n  libmdbx said:\n{}", indent(&stderr)),
        )),
        _ => Err((
            Failure::Crash,
            format!(
                "the verifier died or answered nothing valid ({}):\n{}\n{}",
                out.status,
                indent(&stdout),
                indent(&stderr)
            ),
        )),
    };
    if let (Err(_), Ok(to)) = (&result, std::env::var("TABULA_POWERCUT_KEEP")) {
        let to = Path::new(&to).join(keep);
        let _ = image.write_to(&to);
        say!("kept the image in {}", to.display());
    }
    result
}

fn indent(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("running ") && !l.starts_with("test "))
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Default)]
struct Tally {
    runs: u64,
    failures: Vec<String>,
    /// Failures by kind.
    kinds: BTreeMap<&'static str, u64>,
    /// Cuts by the phase the child was in (its last mark's action).
    phases: BTreeMap<&'static str, u64>,
    /// Units lost relative to the last mark (0 = nothing that returned was lost).
    rolled_back: BTreeMap<usize, u64>,
    /// Cuts where the in-flight unit turned out durable.
    in_flight_kept: u64,
    /// Cuts by what survived of the unflushed writes: drop-all, prefix, reordered.
    reorders: [u64; 3],
    /// Cuts during the first open that left a file that is not yet a database.
    creation_cuts: u64,
    ops: u64,
}

impl Tally {
    fn fail(&mut self, kind: Failure, what: String) {
        *self.kinds.entry(kind.name()).or_default() += 1;
        self.failures.push(what);
    }
}

fn phase(label: &str) -> &'static str {
    if label == "start" || label == "open1" {
        "open"
    } else if label.starts_with("mig-") || label == "close1" || label == "open2" {
        "migration"
    } else if label.starts_with("bulk-") && label != "bulk-done" {
        "bulk load"
    } else {
        "commits"
    }
}

fn cut_scenario(test: &str, mode: SyncMode, write_map: bool, cuts: u64) -> harness::Ran {
    cut_scenario_with(test, mode, write_map, Flush::Threshold, cuts)
}

/// [`cut_scenario`], with `flush` as in [`writer_options`].
fn cut_scenario_with(
    test: &str,
    mode: SyncMode,
    write_map: bool,
    flush: Flush,
    cuts: u64,
) -> harness::Ran {
    if let Err(skipped) = prepare(test) {
        return skipped;
    }
    let base = base_seed();
    let seed = mix(base ^ checksum(test.as_bytes()));
    say!("{test}: seed {base} (TABULA_POWERCUT_SEED={base} replays), {cuts} cuts");
    let plan = Plan::new(seed);
    let started = Instant::now();

    // A run without a cut: how many mutating requests the workload makes, and a clean end.
    let spec = plan_spec(mode, seed, write_map, false, flush);
    let (disk, run) = run_spec(|_| {}, &spec);
    assert!(
        run.stdout.contains("TABULA-DONE"),
        "{test}: the workload failed without a cut:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let total = disk.stats().mutating;
    let (_, j, _) = verify_image(
        &disk,
        Reorder::DropAll,
        seed,
        &plan,
        &run.marks,
        Bound::PowerCut(mode),
    )
    .unwrap_or_else(|(kind, e)| panic!("{test}: after a complete run: {}: {e}", kind.name()));
    assert_eq!(
        plan.units[j].label, "close2",
        "{test}: a complete run must keep everything"
    );
    let stats = disk.stats();
    say!(
        "{test}: one run = {} mutating requests ({} writes, {} fsyncs, {} resizes), {} marks",
        total,
        stats.writes,
        stats.fsyncs,
        stats.resizes,
        run.marks.len()
    );

    let mut tally = Tally::default();
    for i in 0..cuts {
        let cut_seed = mix(seed ^ mix(i + 1));
        let at = 1 + cut_seed % total;
        // Under `Durable` a third of the cuts keep a random subset of the unflushed writes; in
        // the no-sync modes, whose promise depends on what the disk writes back when, half.
        let reorder = match (mode == SyncMode::Durable, i % 3, i % 4) {
            (true, 0, _) | (false, _, 0) => Reorder::DropAll,
            (true, 1, _) | (false, _, 1) => Reorder::Prefix(mix(cut_seed)),
            _ => Reorder::Subset(mix(cut_seed)),
        };
        let (disk, run) = run_spec(|d| d.cut_at(at), &spec);
        tally.runs += 1;
        tally.ops += disk.stats().mutating;
        let replay = format!(
            "\n  replay: TABULA_POWERCUT_SEED={base} cargo test -p tabula-faultfs --test \
             powercut {test}"
        );
        if !run.cut {
            // The workload made fewer requests this time: the cut fell after its end.
            if !run.stdout.contains("TABULA-DONE") {
                tally.fail(
                    Failure::Writer,
                    format!(
                        "cut {i} (at request {at}): the child ended without a cut and without \
                         finishing:\n{}\n{}{replay}",
                        run.stdout, run.stderr
                    ),
                );
                continue;
            }
        } else if run.exit.is_some() {
            tally.fail(
                Failure::Writer,
                format!("cut {i}: the child exited after the cut{replay}"),
            );
        }
        let last = run.marks.last().map_or("start", |m| m.label.as_str());
        *tally.phases.entry(phase(last)).or_default() += 1;
        tally.reorders[match reorder {
            Reorder::DropAll => 0,
            Reorder::Prefix(_) => 1,
            Reorder::Subset(_) => 2,
        }] += 1;
        match verify_image(
            &disk,
            reorder,
            seed,
            &plan,
            &run.marks,
            Bound::PowerCut(mode),
        ) {
            Ok((_, 0, _)) if run.marks.is_empty() => tally.creation_cuts += 1,
            Ok((_, j, _)) => {
                let last = bounds(&plan, &labels(&run.marks), Bound::SameBoot)
                    .map(|b| b.0)
                    .unwrap_or(0);
                if j > last {
                    tally.in_flight_kept += 1;
                } else {
                    *tally.rolled_back.entry(last - j).or_default() += 1;
                }
            }
            // Every failure fails the test, whatever the mode and the write-back order: the
            // modes this suite runs promise a file that opens, checks clean and holds a state
            // within the bound (`UtterlyNoSync`, which does not, is not run here).
            Err((kind, e)) => tally.fail(
                kind,
                format!(
                    "cut {i} at request {at}/{total} ({reorder:?}) after mark `{last}`: {}: \
                     {e}{replay}",
                    kind.name()
                ),
            ),
        }
    }
    say!(
        "{test}: {} cuts in {:.1} s: by phase {:?}; drop-all / prefix / reordered {:?}; \
         cut while creating the file {}; units rolled back behind the last returned call: {:?}; \
         in-flight unit kept: {}; failed: {} {:?}",
        tally.runs,
        started.elapsed().as_secs_f64(),
        tally.phases,
        tally.reorders,
        tally.creation_cuts,
        tally.rolled_back,
        tally.in_flight_kept,
        tally.failures.len(),
        tally.kinds,
    );
    assert!(
        tally.failures.is_empty(),
        "{test}: {} of {} cuts failed ({:?}):\n{}",
        tally.failures.len(),
        tally.runs,
        tally.kinds,
        tally.failures.join("\n")
    );
    harness::Ran::Completed
}

/// The cuts of a scenario: its share (of 154) of `TABULA_POWERCUT_CUTS` (default 1540).
fn share(weight: u64) -> u64 {
    let total = env_count("TABULA_POWERCUT_CUTS", 1540);
    (total * weight).div_ceil(154).max(1)
}

/// `Durable`: nothing whose call returned is lost, ever.
fn power_cuts_durable() -> harness::Ran {
    cut_scenario("power_cuts_durable", SyncMode::Durable, false, share(16))
}

/// `Durable` with `write_map`: libmdbx writes through a shared memory map and flushes with
/// `msync`; the kernel writes the dirty pages back to the disk.
fn power_cuts_durable_write_map() -> harness::Ran {
    cut_scenario(
        "power_cuts_durable_write_map",
        SyncMode::Durable,
        true,
        share(8),
    )
}

/// `NoMetaSync`: at most the last commit rolls back, and the file is never damaged.
fn power_cuts_no_meta_sync() -> harness::Ran {
    cut_scenario(
        "power_cuts_no_meta_sync",
        SyncMode::NoMetaSync,
        false,
        share(30),
    )
}

/// `NoMetaSync` with `write_map`.
fn power_cuts_no_meta_sync_write_map() -> harness::Ran {
    cut_scenario(
        "power_cuts_no_meta_sync_write_map",
        SyncMode::NoMetaSync,
        true,
        share(15),
    )
}

/// `SafeNoSync`: back to the last flush (a close or a finished bulk load), never further, and
/// the file is never damaged.
fn power_cuts_safe_no_sync() -> harness::Ran {
    cut_scenario(
        "power_cuts_safe_no_sync",
        SyncMode::SafeNoSync,
        false,
        share(30),
    )
}

/// `SafeNoSync` with `write_map`.
fn power_cuts_safe_no_sync_write_map() -> harness::Ran {
    cut_scenario(
        "power_cuts_safe_no_sync_write_map",
        SyncMode::SafeNoSync,
        true,
        share(15),
    )
}

/// `SafeNoSync` with `flush_threshold(0)`: libmdbx flushes whenever the file is full at its
/// current size (its GC's steady checkpoint), not after a volume of commits.
fn power_cuts_safe_no_sync_flush0() -> harness::Ran {
    cut_scenario_with(
        "power_cuts_safe_no_sync_flush0",
        SyncMode::SafeNoSync,
        false,
        Flush::Full,
        share(20),
    )
}

/// [`power_cuts_safe_no_sync_flush0`] with the slow-reader hook installed (it runs in every
/// write that would grow the file, and cuts nothing here).
fn power_cuts_safe_no_sync_flush0_hooked() -> harness::Ran {
    cut_scenario_with(
        "power_cuts_safe_no_sync_flush0_hooked",
        SyncMode::SafeNoSync,
        false,
        Flush::FullHooked,
        share(10),
    )
}

/// [`power_cuts_safe_no_sync_flush0`] with `write_map`.
fn power_cuts_safe_no_sync_flush0_write_map() -> harness::Ran {
    cut_scenario_with(
        "power_cuts_safe_no_sync_flush0_write_map",
        SyncMode::SafeNoSync,
        true,
        Flush::Full,
        share(10),
    )
}

// ---------------------------------------------------------------------------------------------
// Targeted cuts: one small workload, the power cut at a chosen point, a chosen write-back order.

/// Rows the targeted workload rewrites in every commit, so that each commit frees the pages of
/// the snapshot before it.
const ROWS: u64 = 200;
/// Commits of the targeted workload.
const COMMITS: u64 = 6;
/// Its page size: the meta pages are the first three pages of `mdbx.dat`.
const PAGE: u64 = 4096;

/// Row `k` as commit `c` of the targeted workload writes it.
fn row_value(c: u64, k: u64) -> Vec<u8> {
    (0..96u64).map(|j| (c * 31 + k * 7 + j) as u8).collect()
}

/// The child of a targeted cut (spec `mode:write_map:commits:load`): opens, creating the file
/// (mark `r-open`), then `commits` commits that each rewrite `ROWS` rows of `bulk` and set
/// `head` to the commit's number (marks `c1`, `c2`, ...); with `load` = 1, then a bulk load of
/// 100 items in batches of 20 (marks `b1`, `b2`, ...); then closes.
fn rewrite_child(spec: &str) {
    let dir = PathBuf::from(std::env::var(DIR_ENV).expect("the child needs its directory"));
    let parts: Vec<&str> = spec.split(':').collect();
    let options = options(parse_mode(parts[0]), parts[1] == "1").page_size(PAGE as usize);
    let commits: u64 = parts[2].parse().expect("commits");
    let load = parts[3] == "1";
    let run = || -> Result<(), tabula::Error> {
        let db = tabula::open::<v2::App>(&dir, options)?;
        tabula_faultfs::mark(&dir, "r-open");
        for c in 1..=commits {
            let mut tx = db.write()?;
            for k in 0..ROWS {
                tx.put::<Bulk>(&k, &row_value(c, k))?;
            }
            tx.put::<Head>(&0, &c)?;
            tx.commit()?;
            tabula_faultfs::mark(&dir, &format!("c{c}"));
        }
        if load {
            let items: Vec<(u64, v2::Item)> =
                (0..100).map(|k| (k, v2::item(&[k as u8; 50]))).collect();
            db.bulk_loader::<v2::Items>()
                .batch_entries(20)
                .on_batch(|r| tabula_faultfs::mark(&dir, &format!("b{}", r.batches)))
                .load(items.iter().map(|(k, v)| (k, v)))?;
        }
        Ok(())
    };
    match run() {
        Ok(()) => println!("TABULA-DONE"),
        Err(e) => println!("TABULA-ERROR {e}"),
    }
}

/// Verifies an image of the targeted workload: it opens, checks clean, and holds the state
/// after one commit within `lo..=hi` (0: none, the empty database). Returns that commit.
fn verify_rewrite(dir: &Path, lo: u64, hi: u64, opened: bool) -> Result<u64, (Failure, String)> {
    let Some(db) = open_verified(dir, opened)? else {
        return Ok(0);
    };
    let read = |e: tabula::Error| (Failure::Read, e.to_string());
    let tx = db.read().map_err(read)?;
    let c = tx.get::<Head>(&0).map_err(read)?.unwrap_or(0);
    let mut rows = 0;
    for entry in tx.iter::<Bulk>() {
        let (k, v) = entry.map_err(read)?;
        if v != row_value(c, k) {
            return Err((
                Failure::Contents,
                format!("row {k} is not as commit {c} (the head) wrote it"),
            ));
        }
        rows += 1;
    }
    let want = if c == 0 { 0 } else { ROWS };
    // The targeted bulk load is cut before it ends: its batches are weak commits, all undone.
    let items = tx.len::<v2::Items>().map_err(read)?;
    if items != 0 {
        return Err((
            Failure::Contents,
            format!("{items} items of a bulk load cut before its end survived"),
        ));
    }
    if rows != want || !(lo..=hi).contains(&c) {
        return Err((
            Failure::Contents,
            format!("{rows} rows at commit {c}; expected {want} rows at a commit in {lo}..={hi}"),
        ));
    }
    Ok(c)
}

/// The targeted workload: its sync mode, `write_map`, how many commits, and whether a bulk load
/// follows them.
struct Targeted {
    mode: SyncMode,
    write_map: bool,
    commits: u64,
    load: bool,
}

/// Runs the targeted workload with the cut `plan` sets up, keeps of the unflushed writes
/// exactly those `keep` accepts (asked once per piece, in [`Disk::pending`] order), and
/// requires the image to hold a commit in `lo..=hi`.
fn targeted_cut(
    test: &str,
    work: Targeted,
    plan: impl FnOnce(&Disk),
    mut keep: impl FnMut(&Piece) -> bool,
    (lo, hi): (u64, u64),
) -> harness::Ran {
    if let Err(skipped) = prepare(test) {
        return skipped;
    }
    let spec = format!(
        "rewrite:{}:{}:{}:{}",
        mode_name(work.mode),
        u8::from(work.write_map),
        work.commits,
        u8::from(work.load)
    );
    let (disk, run) = run_spec(plan, &spec);
    assert!(
        run.cut && run.exit.is_none(),
        "{test}: the power was not cut where planned (the child ended: {:?}):\n{}\n{}",
        run.exit,
        run.stdout,
        run.stderr
    );
    let pending = disk.pending();
    let kept: Vec<bool> = pending.iter().map(&mut keep).collect();
    let lost: Vec<String> = pending
        .iter()
        .zip(&kept)
        .filter(|(_, k)| !**k)
        .map(|(p, _)| format!("{} {:?}", p.file, p.op))
        .collect();
    let mut fates = kept.into_iter();
    let image = disk.durable_image_with(|_| fates.next().unwrap_or(false));
    let last = run.marks.last().map_or("none", |m| m.label.as_str());
    say!(
        "{test}: cut after mark `{last}`; of {} unflushed pieces, lost: {}",
        pending.len(),
        lost.join(", ")
    );
    let spec = |dir: &Path| format!("{}|rewrite|{lo}|{hi}|{}", dir.display(), opened(&run.marks));
    match verify_in_child(&image, &spec, test) {
        Ok(c) => say!("{test}: the file opens, checks clean and holds commit {c}"),
        Err((kind, e)) => panic!("{test}: {}: {e}", kind.name()),
    }
    harness::Ran::Completed
}

/// A write of one of the meta pages (the first three pages of `mdbx.dat`).
fn meta_write(p: &Piece) -> bool {
    p.file == "mdbx.dat" && matches!(p.op, PieceOp::Write { offset, .. } if offset < 3 * PAGE)
}

/// `NoMetaSync`, cut at the data flush of commit 6: every page it wrote reached the disk, the
/// meta page commit 5 wrote without a flush did not (an order POSIX allows between two
/// flushes). The disk holds commit 4's meta page, flushed by commit 5's data flush: the file
/// must open at commit 4 (or 5), not with commit 6's pages over commit 4's.
fn no_meta_sync_data_before_meta() -> harness::Ran {
    targeted_cut(
        "no_meta_sync_data_before_meta",
        Targeted {
            mode: SyncMode::NoMetaSync,
            write_map: false,
            commits: COMMITS,
            load: false,
        },
        |d| d.cut_at_fsync_after("c5"),
        |p| !meta_write(p),
        (4, 5),
    )
}

/// [`no_meta_sync_data_before_meta`] with `write_map`: the pages reach the disk when the
/// commit's `msync` writes them back.
fn no_meta_sync_data_before_meta_write_map() -> harness::Ran {
    targeted_cut(
        "no_meta_sync_data_before_meta_write_map",
        Targeted {
            mode: SyncMode::NoMetaSync,
            write_map: true,
            commits: COMMITS,
            load: false,
        },
        |d| d.cut_at_fsync_after("c5"),
        |p| !meta_write(p),
        (4, 5),
    )
}

/// `SafeNoSync` on a new file, cut after 4 commits, before any flush: the weak meta pages and
/// data reached the disk, the three meta pages libmdbx wrote when it created the file did not.
/// The file `open` created must open (at the empty database: nothing was flushed since).
fn safe_no_sync_new_file_before_first_flush() -> harness::Ran {
    targeted_cut(
        "safe_no_sync_new_file_before_first_flush",
        Targeted {
            mode: SyncMode::SafeNoSync,
            write_map: false,
            commits: COMMITS,
            load: false,
        },
        |d| d.cut_after("c4"),
        |p| !(meta_write(p) && matches!(p.op, PieceOp::Write { len, .. } if len == PAGE)),
        (0, 4),
    )
}

/// [`safe_no_sync_new_file_before_first_flush`] with `write_map`.
fn safe_no_sync_new_file_before_first_flush_write_map() -> harness::Ran {
    targeted_cut(
        "safe_no_sync_new_file_before_first_flush_write_map",
        Targeted {
            mode: SyncMode::SafeNoSync,
            write_map: true,
            commits: COMMITS,
            load: false,
        },
        |d| d.cut_after("c4"),
        |p| !(meta_write(p) && matches!(p.op, PieceOp::Write { len, .. } if len == PAGE)),
        (0, 4),
    )
}

/// `NoMetaSync`, 3 commits, then a bulk load (weak commits) cut after its second batch: every
/// unflushed write reached the disk except the first meta page written since the last flush
/// (commit 3's, unless Tabula flushed it before the load). The file must open at commit 2 or 3
/// with the load undone, not fall back to an older snapshot whose pages were reused.
fn no_meta_sync_bulk_load_weak_metas() -> harness::Ran {
    bulk_load_weak_metas("no_meta_sync_bulk_load_weak_metas", false)
}

/// [`no_meta_sync_bulk_load_weak_metas`] with `write_map`.
fn no_meta_sync_bulk_load_weak_metas_write_map() -> harness::Ran {
    bulk_load_weak_metas("no_meta_sync_bulk_load_weak_metas_write_map", true)
}

fn bulk_load_weak_metas(test: &str, write_map: bool) -> harness::Ran {
    let mut first_meta = true;
    targeted_cut(
        test,
        Targeted {
            mode: SyncMode::NoMetaSync,
            write_map,
            commits: 3,
            load: true,
        },
        |d| d.cut_after("b2"),
        |p| !(meta_write(p) && std::mem::replace(&mut first_meta, false)),
        (2, 3),
    )
}

/// `message` with each path of a run's temporary directory (`/tmp/...`, up to the next quote,
/// blank or colon) replaced by `DIR`, so that the same error in two runs counts once.
fn without_paths(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("/tmp/") {
        out.push_str(&rest[..at]);
        out.push_str("DIR");
        let tail = &rest[at..];
        let end = tail.find(['`', ' ', ':']).unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// EIO and ENOSPC at the N-th write or fsync of the data file.
fn io_faults() -> harness::Ran {
    let test = "io_faults";
    if let Err(skipped) = prepare(test) {
        return skipped;
    }
    let runs = env_count("TABULA_POWERCUT_FAULTS", 24);
    let base = base_seed();
    let seed = mix(base ^ checksum(test.as_bytes()));
    say!("{test}: seed {base} (TABULA_POWERCUT_SEED={base} replays), {runs} faults");
    let plan = Plan::new(seed);
    let mode = SyncMode::Durable;
    let (disk, run) = run_child(|_| {}, mode, seed, false, true);
    assert!(
        run.stdout.contains("TABULA-DONE"),
        "{test}: workload failed:\n{}",
        run.stdout
    );
    let (writes, fsyncs) = disk.file_ops("mdbx.dat");
    say!("{test}: one run = {writes} writes and {fsyncs} fsyncs of mdbx.dat");

    let mut failures = Vec::new();
    let mut messages: BTreeMap<String, u64> = BTreeMap::new();
    for i in 0..runs {
        let r = mix(seed ^ mix(i + 1));
        let op = if i % 2 == 0 {
            FaultOp::Write
        } else {
            FaultOp::Fsync
        };
        let errno = if (i / 2) % 2 == 0 {
            libc::EIO
        } else {
            libc::ENOSPC
        };
        let count = if op == FaultOp::Write { writes } else { fsyncs };
        let nth = 1 + r % count;
        let fault = Fault {
            op,
            nth,
            errno,
            file: "mdbx.dat".into(),
        };
        let (disk, run) = run_child(|d| d.fail_at(fault.clone()), mode, seed, false, true);
        let injected = disk.fault_log();
        let what = format!("fault {i} ({fault:?})");
        let status = run.exit.expect("no cut in a fault run");
        if !status.success() {
            failures.push(format!(
                "{what}: the child did not survive ({status}):\n{}\n{}",
                run.stdout, run.stderr
            ));
            continue;
        }
        if injected.is_empty() {
            // The run made fewer requests of that kind this time.
            continue;
        }
        let error = run
            .stdout
            .lines()
            .find_map(|l| l.split_once("TABULA-ERROR ").map(|p| p.1))
            .map(str::to_owned);
        let Some(error) = error else {
            // libmdbx issues writes whose result it ignores: `page_kill` overwrites a page freed
            // in the same transaction with filler (seen with `strace -k`: `page_retire_ex` →
            // `page_kill` → `osal_pwrite`, its return value dropped). Such a write holds no
            // data, so a fault on it is harmless and nothing reports it. Accept a run whose
            // every call returned Ok only when the file then holds exactly what was committed.
            match verify_image(
                &disk,
                Reorder::DropAll,
                seed,
                &plan,
                &run.marks,
                Bound::PowerCut(mode),
            ) {
                Ok((_, unit, _)) if unit == plan.units.len() - 1 => {
                    *messages
                        .entry(format!(
                            "{} absorbed by libmdbx (every call Ok, every commit intact)",
                            injected[0].split(" #").next().unwrap_or("")
                        ))
                        .or_default() += 1;
                }
                Ok((_, unit, _)) => failures.push(format!(
                    "{what}: {injected:?}, every Tabula call returned Ok, and the file holds \
                     unit `{}` instead of the last one:\n{}",
                    plan.units[unit].label, run.stdout
                )),
                Err((kind, e)) => failures.push(format!(
                    "{what}: {injected:?}, every Tabula call returned Ok, and the file does not \
                     hold what was committed: {}: {e}\n{}",
                    kind.name(),
                    run.stdout
                )),
            }
            continue;
        };
        let fault_kind = injected[0].split(" #").next().unwrap_or("").to_owned();
        let during = error.split(':').next().unwrap_or("");
        let during = if during.starts_with('c') && during[1..].chars().all(|c| c.is_ascii_digit()) {
            "a commit"
        } else {
            during
        };
        let message = error.split_once(": ").map_or(error.as_str(), |p| p.1);
        *messages
            .entry(format!(
                "{fault_kind} during {during}: `{}`",
                without_paths(message)
            ))
            .or_default() += 1;
        if !run.stdout.contains("TABULA-REOPENED") {
            failures.push(format!(
                "{what}: error `{error}`, then the reopen in the same process failed:\n{}\n{}",
                run.stdout, run.stderr
            ));
            continue;
        }
        if let Err((kind, e)) = verify_image(
            &disk,
            Reorder::DropAll,
            seed,
            &plan,
            &run.marks,
            Bound::PowerCut(mode),
        ) {
            failures.push(format!(
                "{what}: after a power cut following the fault: {}: {e}",
                kind.name()
            ));
        }
    }
    say!("{test}: errors seen (fault -> message: count):");
    for (m, n) in &messages {
        say!("  {n} x {m}");
    }
    assert!(
        failures.is_empty(),
        "{test}: {} of {runs} fault runs failed (seed {base}):\n{}",
        failures.len(),
        failures.join("\n")
    );
    harness::Ran::Completed
}
