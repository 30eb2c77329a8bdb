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
use tabula_faultfs::{Disk, Fault, FaultOp, Mark, Reorder};

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

/// Runs the plan on `dir`, marking each unit on the disk mounted there. Returns the label of
/// the action that failed and its error.
fn run_plan(dir: &Path, plan: &Plan, mode: SyncMode, write_map: bool) -> Result<(), String> {
    let opts = || options(mode, write_map);
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

/// Opens the database at `dir` at version 2 (finishing an interrupted migration), checks it,
/// and finds the unit whose state it holds within `lo..=hi`.
fn verify(dir: &Path, plan: &Plan, lo: usize, hi: usize) -> Result<usize, String> {
    let opened =
        tabula::open_with::<v2::App>(dir, options(SyncMode::Durable, false), &v2::migrations());
    let (db, _) = match opened {
        // A cut while the first open was still creating the file (no call had returned, so
        // the empty state is allowed) can leave a data file too short for its meta pages.
        // Tabula refuses such a file rather than re-initialise it (a truncated database looks
        // the same): nothing committed is lost, and the operator decides. Counted as `start`.
        Err(e @ tabula::Error::BadFile { .. }) if lo == 0 => {
            eprintln!("TABULA-CREATION-CUT {e}");
            return Ok(0);
        }
        other => other.map_err(|e| format!("reopen failed: {e}"))?,
    };
    let report = db.check().map_err(|e| format!("Db::check failed: {e}"))?;
    if !report.is_ok() {
        return Err(format!("Db::check found {} problems", report.problems));
    }
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
    Err(format!(
        "the contents (head {:?}, {} items, {} bulk entries) are not the state of any unit from \
         `{}` to `{}`; they match {:?}",
        state.head,
        state.items.len(),
        state.bulk.len(),
        plan.units[lo].label,
        plan.units[hi].label,
        elsewhere
    ))
}

fn read_state(db: &Db<v2::App>) -> Result<State, String> {
    let tx = db.read().map_err(|e| e.to_string())?;
    let mut state = State::default();
    for entry in tx.iter::<v2::Items>() {
        let (k, item) = entry.map_err(|e| e.to_string())?;
        if item.sum != checksum(&item.payload) {
            return Err(format!("item {k}: checksum mismatch"));
        }
        state.items.insert(k, item.payload);
    }
    state.head = tx.get::<Head>(&0).map_err(|e| e.to_string())?;
    for entry in tx.iter::<Bulk>() {
        let (k, v) = entry.map_err(|e| e.to_string())?;
        state.bulk.insert(k, v);
    }
    Ok(state)
}

// ---------------------------------------------------------------------------------------------
// The child.

fn main() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        powercut_child(&spec);
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
        power_cuts_safe_no_sync,
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
    let plan = Plan::new(seed);
    match run_plan(&dir, &plan, mode, write_map) {
        Ok(()) => println!("TABULA-DONE"),
        Err(e) => {
            println!("TABULA-ERROR {e}");
            if fault_run {
                // Same process, same boot: everything that returned must still be there.
                let labels = MARKS.lock().map(|m| m.clone()).unwrap_or_default();
                let outcome = bounds(&plan, &labels, Bound::SameBoot)
                    .and_then(|(lo, hi)| verify(&dir, &plan, lo, hi));
                match outcome {
                    Ok(j) => println!("TABULA-REOPENED {}", plan.units[j].label),
                    Err(e) => println!("TABULA-REOPEN-FAILED {e}"),
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
    let seed: u64 = parts[1].parse().expect("seed");
    let lo: usize = parts[2].parse().expect("lo");
    let hi: usize = parts[3].parse().expect("hi");
    match verify(dir, &Plan::new(seed), lo, hi) {
        Ok(j) => println!("TABULA-VERIFIED {j}"),
        Err(e) => println!("TABULA-VERIFY-FAILED {e}"),
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

/// Prepares this test thread: a private mount namespace with per-process boot IDs. `None`
/// (after printing why) when the test must skip.
fn prepare(test: &str) -> Option<()> {
    if !Path::new("/dev/fuse").exists() {
        say!("{test}: SKIPPED: /dev/fuse does not exist (load the fuse module, or run in a VM)");
        return None;
    }
    let ours = std::fs::read("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    if let Err(e) = tabula_faultfs::new_boot_namespace() {
        say!("{test}: SKIPPED: cannot set up a mount namespace (run as root): {e}");
        return None;
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
                say!("{test}: SKIPPED: unmounting a FUSE file system failed: {e}");
                return None;
            }
        }
        Err(e) => {
            say!("{test}: SKIPPED: cannot mount a FUSE file system: {e}");
            return None;
        }
    }
    Some(())
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

fn spawn_child(mnt: &Path, mode: SyncMode, seed: u64, write_map: bool, fault: bool) -> Child {
    let exe = std::env::current_exe().expect("current exe");
    Command::new(exe)
        .env(
            CHILD_ENV,
            format!(
                "{}:{seed}:{}:{}",
                mode_name(mode),
                u8::from(write_map),
                if fault { "fault" } else { "cut" }
            ),
        )
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

/// Mounts a fresh disk, runs a child on it until it ends or the power is cut (then kills it),
/// unmounts, and returns what happened with the disk.
fn run_child(
    setup: impl FnOnce(&Disk),
    mode: SyncMode,
    seed: u64,
    write_map: bool,
    fault: bool,
) -> (Disk, ChildRun) {
    let disk = Disk::new();
    setup(&disk);
    let mnt = tempfile::tempdir().expect("tempdir");
    let mounted = disk.mount(mnt.path()).expect("mount");
    let mut child = spawn_child(mnt.path(), mode, seed, write_map, fault);
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
) -> Result<(usize, usize, usize), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    disk.durable_image(reorder)
        .write_to(dir.path())
        .map_err(|e| e.to_string())?;
    let (lo, hi) = bounds(plan, &labels(marks), bound)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .env(
            VERIFY_ENV,
            format!("{}|{seed}|{lo}|{hi}", dir.path().display()),
        )
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running the verifier: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let result = if let Some(j) = stdout.split_once("TABULA-VERIFIED ") {
        let j = j.1.split_whitespace().next().unwrap_or("").parse::<usize>();
        j.map(|j| (lo, j, hi)).map_err(|e| e.to_string())
    } else if let Some(e) = stdout.split_once("TABULA-VERIFY-FAILED ") {
        Err(format!(
            "{}\n  libmdbx said:\n{}",
            e.1.trim(),
            indent(&stderr)
        ))
    } else {
        Err(format!(
            "the verifier died ({}):\n{}",
            out.status,
            indent(&stderr)
        ))
    };
    if let (Err(_), Ok(keep)) = (&result, std::env::var("TABULA_POWERCUT_KEEP")) {
        let to = Path::new(&keep).join(format!("seed{seed}-{}", marks.len()));
        let _ = disk.durable_image(reorder).write_to(&to);
        say!("kept the image in {}", to.display());
    }
    result
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
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
    /// Cuts by the phase the child was in (its last mark's action).
    phases: BTreeMap<&'static str, u64>,
    /// Units lost relative to the last mark (0 = nothing that returned was lost).
    rolled_back: BTreeMap<usize, u64>,
    /// Cuts where the in-flight unit turned out durable.
    in_flight_kept: u64,
    reordered: u64,
    /// Reordered cuts in a no-sync mode that left a damaged file (detected).
    damaged: Vec<String>,
    ops: u64,
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

fn cut_scenario(test: &str, mode: SyncMode, write_map: bool, cuts: u64) {
    if std::env::var_os(CHILD_ENV).is_some() || prepare(test).is_none() {
        return;
    }
    let base = base_seed();
    let seed = mix(base ^ checksum(test.as_bytes()));
    say!("{test}: seed {base} (TABULA_POWERCUT_SEED={base} replays), {cuts} cuts");
    let plan = Plan::new(seed);
    let started = Instant::now();

    // A run without a cut: how many mutating requests the workload makes, and a clean end.
    let (disk, run) = run_child(|_| {}, mode, seed, write_map, false);
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
    .unwrap_or_else(|e| panic!("{test}: after a complete run: {e}"));
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
        let reorder = match i % 3 {
            0 => Reorder::DropAll,
            1 => Reorder::Prefix(mix(cut_seed)),
            _ => Reorder::Subset(mix(cut_seed)),
        };
        let (disk, run) = run_child(|d| d.cut_at(at), mode, seed, write_map, false);
        tally.runs += 1;
        tally.ops += disk.stats().mutating;
        if !run.cut {
            // The workload made fewer requests this time: the cut fell after its end.
            if !run.stdout.contains("TABULA-DONE") {
                tally.failures.push(format!(
                    "cut {i} (at request {at}): the child ended without a cut and without \
                     finishing:\n{}\n{}",
                    run.stdout, run.stderr
                ));
                continue;
            }
        } else if run.exit.is_some() {
            tally
                .failures
                .push(format!("cut {i}: the child exited after the cut"));
        }
        let last = run.marks.last().map_or("start", |m| m.label.as_str());
        *tally.phases.entry(phase(last)).or_default() += 1;
        let reordered = matches!(reorder, Reorder::Subset(_));
        if reordered {
            tally.reordered += 1;
        }
        match verify_image(
            &disk,
            reorder,
            seed,
            &plan,
            &run.marks,
            Bound::PowerCut(mode),
        ) {
            Ok((_, j, hi)) => {
                let last = bounds(&plan, &labels(&run.marks), Bound::SameBoot)
                    .map(|b| b.0)
                    .unwrap_or(0);
                if j > last {
                    tally.in_flight_kept += 1;
                } else {
                    *tally.rolled_back.entry(last - j).or_default() += 1;
                }
                let _ = hi;
            }
            // libmdbx's no-sync modes leave the meta page of a commit unflushed and let the
            // next commit overwrite pages of the previous snapshot, trusting the disk to write
            // the meta page no later than those: with write-back in any order the file can be
            // damaged. Damage must then be detected (open, check or read fails), never a
            // wrong state served as a good one.
            Err(e) if reordered && mode != SyncMode::Durable && !e.starts_with("the contents") => {
                tally
                    .damaged
                    .push(format!("cut {i} after `{last}`: {}", first_line(&e)));
            }
            Err(e) => tally.failures.push(format!(
                "cut {i} at request {at}/{total} ({reorder:?}) after mark `{last}`: {e}\n  \
                 replay: TABULA_POWERCUT_SEED={base} cargo test -p tabula-faultfs --test \
                 powercut {test}"
            )),
        }
    }
    say!(
        "{test}: {} cuts in {:.1} s: by phase {:?}; {} with a random subset of unsynced writes \
         kept; units rolled back behind the last returned call: {:?}; in-flight unit kept: {}",
        tally.runs,
        started.elapsed().as_secs_f64(),
        tally.phases,
        tally.reordered,
        tally.rolled_back,
        tally.in_flight_kept
    );
    if !tally.damaged.is_empty() {
        say!(
            "{test}: {} of {} cuts with unsynced writes reordered left a damaged file, detected \
             at reopen (a known limit of libmdbx's no-sync modes, docs/reliability.md):\n  {}",
            tally.damaged.len(),
            tally.reordered,
            tally.damaged.join("\n  ")
        );
    }
    assert!(
        tally.failures.is_empty(),
        "{test}: {} of {} cuts failed:\n{}",
        tally.failures.len(),
        tally.runs,
        tally.failures.join("\n")
    );
}

fn share(weight: u64) -> u64 {
    let total = env_count("TABULA_POWERCUT_CUTS", 330);
    (total * weight).div_ceil(22).max(1)
}

/// `Durable`: nothing whose call returned is lost, ever.
fn power_cuts_durable() {
    cut_scenario("power_cuts_durable", SyncMode::Durable, false, share(8));
}

/// `Durable` with `write_map`: libmdbx writes through a shared memory map and flushes with
/// `msync`; the kernel writes the dirty pages back to the disk.
fn power_cuts_durable_write_map() {
    cut_scenario(
        "power_cuts_durable_write_map",
        SyncMode::Durable,
        true,
        share(4),
    );
}

/// `NoMetaSync`: at most the last commit rolls back.
fn power_cuts_no_meta_sync() {
    cut_scenario(
        "power_cuts_no_meta_sync",
        SyncMode::NoMetaSync,
        false,
        share(5),
    );
}

/// `SafeNoSync`: back to the last flush (a close or a finished bulk load), never further.
fn power_cuts_safe_no_sync() {
    cut_scenario(
        "power_cuts_safe_no_sync",
        SyncMode::SafeNoSync,
        false,
        share(5),
    );
}

/// EIO and ENOSPC at the N-th write or fsync of the data file.
fn io_faults() {
    let test = "io_faults";
    if std::env::var_os(CHILD_ENV).is_some() || prepare(test).is_none() {
        return;
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
                Err(e) => failures.push(format!(
                    "{what}: {injected:?}, every Tabula call returned Ok, and the file does not \
                     hold what was committed: {e}\n{}",
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
            .entry(format!("{fault_kind} during {during}: `{message}`"))
            .or_default() += 1;
        if !run.stdout.contains("TABULA-REOPENED") {
            failures.push(format!(
                "{what}: error `{error}`, then the reopen in the same process failed:\n{}\n{}",
                run.stdout, run.stderr
            ));
            continue;
        }
        if let Err(e) = verify_image(
            &disk,
            Reorder::DropAll,
            seed,
            &plan,
            &run.marks,
            Bound::PowerCut(mode),
        ) {
            failures.push(format!(
                "{what}: after a power cut following the fault: {e}"
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
}
