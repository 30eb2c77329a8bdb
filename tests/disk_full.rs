//! A full file system is a clear error, never a crash, and loses nothing that was committed.
//!
//! Each scenario fills a small file system — a tmpfs, and an ext4 image mounted through a loop
//! device — until a write fails, in a child process (this test binary run again with
//! `TABULA_DISKFULL_CHILD` set), so that a crash (SIGBUS) is reported as the scenario's failure
//! instead of killing the test run. The scenarios cover every `SyncMode`, `write_map` on and
//! off, and three ways of writing (plain puts, the appender, `bulk_load`), with small and large
//! values. The parent then checks that the child exited normally with `Error::DiskFull` naming
//! the path, frees a little space (a ballast file made before the fill), reopens the database,
//! and finds exactly the entries of the commits that returned `Ok`, with `Db::check` clean.
//!
//! Beside them, one ext4 of another geometry (2 KiB blocks) that databases must open on.
//!
//! Mounting needs root (CI runs as root). When a mount fails the test fails, naming why, unless
//! `TABULA_ALLOW_SKIP` names `disk_full` (a comma-separated list of test groups): then it is
//! reported as `ignored` with the reason. The file has its own `main` (`harness = false`,
//! `tests/support/harness.rs`): the child entry is not a test.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::Ran;
use tabula::{Options, Raw, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "blobs", key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Schema)]
struct S(Blobs);

const CHILD_VAR: &str = "TABULA_DISKFULL_CHILD";
/// The group `TABULA_ALLOW_SKIP` names to let these tests skip where nothing can be mounted.
const GROUP: &str = "disk_full";

fn main() {
    if let Ok(spec) = std::env::var(CHILD_VAR) {
        child_fill(&spec);
        return;
    }
    run_tests!(
        a_full_tmpfs_with_write_map_is_an_error_not_a_crash,
        a_full_tmpfs_without_write_map_says_the_disk_is_full,
        a_full_ext4_with_write_map_is_an_error_not_a_crash,
        a_full_ext4_without_write_map_says_the_disk_is_full,
        opening_on_a_full_tmpfs_is_an_error_not_a_crash,
        write_map_is_used_only_where_space_can_be_reserved,
        a_database_opens_on_ext4_with_2_kib_blocks,
    );
}

/// A file system mounted in a temp dir for one test, unmounted on drop.
struct Mount {
    dir: tempfile::TempDir,
    /// The loop image's temp dir (ext4 only), removed after the unmount.
    _image: Option<tempfile::TempDir>,
    what: &'static str,
}

fn run(cmd: &mut Command) -> Result<(), String> {
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{:?}: {}{}",
            cmd,
            String::from_utf8_lossy(&out.stderr).trim(),
            String::from_utf8_lossy(&out.stdout).trim()
        )),
        Err(e) => Err(format!("{cmd:?}: {e}")),
    }
}

impl Mount {
    /// A tmpfs of `size` bytes, or why it cannot be mounted.
    fn tmpfs(size: u64) -> Result<Mount, String> {
        let dir = tempfile::tempdir().unwrap();
        match run(Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path()))
        {
            Ok(()) => Ok(Mount {
                dir,
                _image: None,
                what: "tmpfs",
            }),
            Err(e) => Err(format!("cannot mount a tmpfs (the test needs root): {e}")),
        }
    }

    /// An ext4 file system of `size` bytes in an image file, mounted through a loop device, or
    /// why it cannot be made.
    fn ext4(size: u64) -> Result<Mount, String> {
        Mount::ext4_with(size, &[])
    }

    /// [`ext4`](Self::ext4) made with `mkfs.ext4`'s extra arguments `args`.
    fn ext4_with(size: u64, args: &[&str]) -> Result<Mount, String> {
        let image_dir = tempfile::tempdir().unwrap();
        let image = image_dir.path().join("fs.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size)
            .unwrap();
        // `mkfs.ext4` may be outside PATH (it lives in /usr/sbin).
        let mut made = Err(String::new());
        for mkfs in ["mkfs.ext4", "/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4"] {
            made = run(Command::new(mkfs).args(["-q", "-F"]).args(args).arg(&image));
            if made.is_ok() {
                break;
            }
        }
        if let Err(e) = made {
            return Err(format!(
                "cannot make an ext4 image (mkfs.ext4, from e2fsprogs): {e}"
            ));
        }
        let dir = tempfile::tempdir().unwrap();
        match run(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(dir.path()))
        {
            Ok(()) => Ok(Mount {
                dir,
                _image: Some(image_dir),
                what: "ext4",
            }),
            Err(e) => Err(format!(
                "cannot loop-mount an ext4 image (the test needs root and a loop device): {e}"
            )),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Bytes still available (`df`).
    fn available(&self) -> u64 {
        let out = Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(self.path())
            .output()
            .expect("df runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let last = text.lines().last().unwrap_or("").trim();
        last.parse()
            .unwrap_or_else(|_| panic!("df's available bytes: {text:?}"))
    }

    /// Waits until the file system has at least `bytes` available again. The space of the files
    /// a scenario removed can come back after `remove_dir_all` has returned: with nothing of
    /// them left open in this process, `df` said 0 bytes available just before the next
    /// scenario's child started, whose open then failed with `ENOSPC`, and 23 MB once it had
    /// failed (ext4, about one run in three of `cargo test --all-features --test disk_full`;
    /// CI saw the same failure on both file systems). `sync -f` commits ext4's journal, which
    /// may hold freed blocks back until then.
    fn wait_for(&self, bytes: u64) {
        let start = std::time::Instant::now();
        loop {
            let available = self.available();
            if available >= bytes {
                return;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "{}: {available} bytes available 30 s after the last scenario's files were \
                 removed, {bytes} expected",
                self.what
            );
            let _ = Command::new("sync").arg("-f").arg(self.path()).status();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Fills the file system completely with a file of non-zero bytes.
    fn fill(&self, name: &str) {
        let mut f = std::fs::File::create(self.path().join(name)).unwrap();
        let chunk = vec![0x5au8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if run(Command::new("umount").arg(self.dir.path())).is_err() {
            // Busy (a failed test left something open): detach lazily, never leave it mounted.
            let _ = run(Command::new("umount").arg("-l").arg(self.dir.path()));
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum How {
    Puts,
    Appender,
    BulkLoad,
    /// Only open, read-only.
    ReadOnly,
}

#[derive(Debug, Clone, Copy)]
struct Scenario {
    mode: SyncMode,
    write_map: bool,
    how: How,
    value_len: usize,
}

const MODES: [SyncMode; 4] = [
    SyncMode::Durable,
    SyncMode::NoMetaSync,
    SyncMode::SafeNoSync,
    SyncMode::UtterlyNoSync,
];
const SMALL: usize = 100;
const LARGE: usize = 40_000;

fn mode_name(m: SyncMode) -> &'static str {
    match m {
        SyncMode::Durable => "durable",
        SyncMode::NoMetaSync => "nometasync",
        SyncMode::SafeNoSync => "safenosync",
        _ => "utterlynosync",
    }
}

impl Scenario {
    fn encode(&self, dir: &Path) -> String {
        format!(
            "{}|{}|{}|{:?}|{}",
            dir.display(),
            mode_name(self.mode),
            self.write_map,
            self.how,
            self.value_len
        )
    }

    fn decode(s: &str) -> (PathBuf, Scenario) {
        let parts: Vec<&str> = s.split('|').collect();
        let mode = MODES
            .into_iter()
            .find(|m| mode_name(*m) == parts[1])
            .unwrap();
        let how = match parts[3] {
            "Puts" => How::Puts,
            "Appender" => How::Appender,
            "ReadOnly" => How::ReadOnly,
            _ => How::BulkLoad,
        };
        (
            PathBuf::from(parts[0]),
            Scenario {
                mode,
                write_map: parts[2] == "true",
                how,
                value_len: parts[4].parse().unwrap(),
            },
        )
    }

    fn options(&self) -> Options {
        Options::new()
            .sync(self.mode)
            .write_map(self.write_map)
            .growth_step(1 << 20)
            .read_only(self.how == How::ReadOnly)
    }

    /// Entries per transaction (or bulk batch): about 100 KB (small values) or 800 KB.
    fn per_commit(&self) -> u64 {
        if self.value_len == SMALL { 1000 } else { 20 }
    }
}

/// The value stored under key `k`.
fn value(k: u64, len: usize) -> Vec<u8> {
    vec![(k % 251) as u8 + 1; len]
}

/// The child (`TABULA_DISKFULL_CHILD=<scenario>`): writes until an error, printing
/// `committed <entries>` after each commit that returned `Ok`, then the error.
fn child_fill(spec: &str) {
    let (dir, sc) = Scenario::decode(spec);
    let mut out = std::io::stdout().lock();
    writeln!(out).unwrap();
    let db = match tabula::open::<S>(&dir, sc.options()) {
        Ok(db) => db,
        Err(e) => {
            writeln!(out, "open-error {e}").unwrap();
            return;
        }
    };
    if sc.how == How::ReadOnly {
        writeln!(out, "opened").unwrap();
        return;
    }
    let per = sc.per_commit();
    let mut committed = 0u64;
    let err = loop {
        let start = committed;
        let r: tabula::Result<u64> = match sc.how {
            How::Puts => (|| {
                let mut tx = db.write()?;
                for k in start..start + per {
                    tx.put::<Blobs>(&k, &value(k, sc.value_len))?;
                }
                tx.commit()?;
                Ok(start + per)
            })(),
            How::Appender => (|| {
                let mut tx = db.write()?;
                {
                    let mut app = tx.appender::<Blobs>()?;
                    for k in start..start + per {
                        app.append(&k, &value(k, sc.value_len))?;
                    }
                }
                tx.commit()?;
                Ok(start + per)
            })(),
            How::ReadOnly => unreachable!(),
            How::BulkLoad => {
                // One load of many batches; progress comes from the batch callback, which
                // prints it as each batch commits.
                db.bulk_loader::<Blobs>()
                    .batch_entries(per as usize)
                    .on_batch(|r| println!("committed {}", start + r.entries))
                    .load((start..start + 1_000_000).map(|k| (k, value(k, sc.value_len))))
                    .map(|r| start + r.entries)
            }
        };
        match r {
            Ok(n) => {
                committed = n;
                writeln!(out, "committed {committed}").unwrap();
                out.flush().unwrap();
            }
            Err(e) => break e,
        }
    };
    // The variant's name, from its `Debug` form.
    let debug = format!("{err:?}");
    let kind = debug.split([' ', '{', '(']).next().unwrap_or("");
    writeln!(out, "error-kind {kind}").unwrap();
    writeln!(out, "error {err}").unwrap();
    out.flush().unwrap();
}

fn spawn_child(spec: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .env(CHILD_VAR, spec)
        .output()
        .unwrap()
}

fn describe_exit(out: &Output) -> String {
    match (out.status.code(), out.status.signal()) {
        (_, Some(7)) => "killed by SIGBUS".to_owned(),
        (_, Some(s)) => format!("killed by signal {s}"),
        (Some(c), None) => format!("exit code {c}"),
        _ => "unknown".to_owned(),
    }
}

/// Runs one scenario on `fs` and checks everything the task promises.
fn fill_and_check(fs: &Mount, empty: u64, sc: Scenario) {
    let name = format!(
        "{} {} write_map={} {:?} {}-byte values",
        fs.what,
        mode_name(sc.mode),
        sc.write_map,
        sc.how,
        sc.value_len
    );
    let dir = fs.path().join("db");
    // Every scenario starts on the file system as the first found it (give or take its
    // directories' blocks).
    fs.wait_for(empty.saturating_sub(1 << 20));
    // A little space to free after the fill, so that the reopen can create its lock file.
    std::fs::write(fs.path().join("ballast"), vec![0xa5u8; 512 << 10]).unwrap();
    let out = spawn_child(&sc.encode(&dir));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{name}: the writing process died ({}) with {} bytes available; its output:\n{stdout}\n\
         {stderr}",
        describe_exit(&out),
        fs.available()
    );
    let line = |prefix: &str| {
        stdout
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .next_back()
            .map(str::to_owned)
    };
    let committed: u64 = line("committed ").map_or(0, |n| n.parse().unwrap());
    let kind = line("error-kind ").unwrap_or_else(|| {
        panic!(
            "{name}: no error ({} bytes available):\n{stdout}",
            fs.available()
        )
    });
    let message = line("error ").unwrap();
    assert_eq!(kind, "DiskFull", "{name}: {message}");
    assert!(
        message.contains(&dir.display().to_string()) && message.contains("full"),
        "{name}: the message names the path and says the disk is full: {message}"
    );
    assert!(
        committed > 0,
        "{name}: nothing was committed before the disk filled"
    );

    std::fs::remove_file(fs.path().join("ballast")).unwrap();
    let db = tabula::open::<S>(&dir, sc.options())
        .unwrap_or_else(|e| panic!("{name}: reopen after freeing space: {e}"));
    {
        let tx = db.read().unwrap();
        assert_eq!(
            tx.len::<Blobs>().unwrap(),
            committed,
            "{name}: exactly the committed entries are there"
        );
        for entry in tx.iter::<Blobs>() {
            let (k, v) = entry.unwrap();
            assert!(k < committed, "{name}: key {k} of an uncommitted write");
            assert!(v == value(k, sc.value_len), "{name}: value of key {k}");
        }
    }
    let report = db.check().unwrap();
    assert!(report.is_ok(), "{name}: {report:?}");
    drop(db);
    std::fs::remove_dir_all(&dir).unwrap();
    eprintln!("{name}: {committed} entries committed, then: {message}");
}

/// Every sync mode × every way of writing, the value size alternating so that both sizes meet
/// every mode and every way.
fn scenarios(write_map: bool) -> Vec<Scenario> {
    let mut out = Vec::new();
    for (i, mode) in MODES.into_iter().enumerate() {
        for (j, how) in [How::Puts, How::Appender, How::BulkLoad]
            .into_iter()
            .enumerate()
        {
            out.push(Scenario {
                mode,
                write_map,
                how,
                value_len: if (i + j) % 2 == 0 { SMALL } else { LARGE },
            });
        }
    }
    out
}

fn a_full_tmpfs_with_write_map_is_an_error_not_a_crash() -> Ran {
    let fs = match Mount::tmpfs(8 << 20) {
        Ok(fs) => fs,
        Err(why) => return harness::skip(GROUP, &why),
    };
    let scenarios = scenarios(true);
    assert_eq!(scenarios.len(), 12);
    let empty = fs.available();
    for sc in scenarios {
        fill_and_check(&fs, empty, sc);
    }
    Ran::Completed
}

fn a_full_tmpfs_without_write_map_says_the_disk_is_full() -> Ran {
    let fs = match Mount::tmpfs(8 << 20) {
        Ok(fs) => fs,
        Err(why) => return harness::skip(GROUP, &why),
    };
    let scenarios = scenarios(false);
    assert_eq!(scenarios.len(), 12);
    let empty = fs.available();
    for sc in scenarios {
        fill_and_check(&fs, empty, sc);
    }
    Ran::Completed
}

fn a_full_ext4_with_write_map_is_an_error_not_a_crash() -> Ran {
    let fs = match Mount::ext4(32 << 20) {
        Ok(fs) => fs,
        Err(why) => return harness::skip(GROUP, &why),
    };
    let scenarios = scenarios(true);
    assert_eq!(scenarios.len(), 12);
    let empty = fs.available();
    for sc in scenarios {
        fill_and_check(&fs, empty, sc);
    }
    Ran::Completed
}

fn a_full_ext4_without_write_map_says_the_disk_is_full() -> Ran {
    let fs = match Mount::ext4(32 << 20) {
        Ok(fs) => fs,
        Err(why) => return harness::skip(GROUP, &why),
    };
    let scenarios = scenarios(false);
    assert_eq!(scenarios.len(), 12);
    let empty = fs.available();
    for sc in scenarios {
        fill_and_check(&fs, empty, sc);
    }
    Ran::Completed
}

/// On ext4 made with 2 KiB blocks the largest file offset is 8 TiB - 2 KiB, and libmdbx
/// 0.14.4's search for it (`osal_fseek_shut`, where every file an open opens is parked) ended
/// on a refused probe and returned that offset: every open failed with `EINVAL` ("Invalid
/// argument") when it parked the lock file there. Fixed by the patch `open-probes`
/// (`crates/mdbx-sys/patches/libmdbx-0.14.4-open-probes.md`, "the search's last probe").
fn a_database_opens_on_ext4_with_2_kib_blocks() -> Ran {
    let fs = match Mount::ext4_with(32 << 20, &["-b", "2048"]) {
        Ok(fs) => fs,
        Err(why) => return harness::skip(GROUP, &why),
    };
    let dir = fs.path().join("db");
    for round in 0..2u64 {
        let db = tabula::open::<S>(&dir, Options::new())
            .unwrap_or_else(|e| panic!("open {round} on ext4 with 2 KiB blocks: {e}"));
        let mut tx = db.write().unwrap();
        tx.put::<Blobs>(&round, &value(round, 100)).unwrap();
        tx.commit().unwrap();
        let tx = db.read().unwrap();
        for k in 0..=round {
            assert_eq!(tx.get::<Blobs>(&k).unwrap(), Some(value(k, 100)), "key {k}");
        }
    }
    Ran::Completed
}

/// Opening on a file system with no space left: libmdbx sizes the lock file and zeroes it
/// through its memory map, which on a full tmpfs is a SIGBUS. It must be an open error.
fn opening_on_a_full_tmpfs_is_an_error_not_a_crash() -> Ran {
    let fs = match Mount::tmpfs(4 << 20) {
        Ok(fs) => fs,
        Err(why) => return harness::skip(GROUP, &why),
    };
    let existing = fs.path().join("existing");
    {
        let db = tabula::open::<S>(&existing, Options::new()).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Blobs>(&1, &value(1, 1000)).unwrap();
        tx.commit().unwrap();
    }
    fs.fill("filler");
    for (dir, write_map, how) in [
        (existing.clone(), false, How::Puts),
        (existing.clone(), true, How::Puts),
        (existing.clone(), false, How::ReadOnly),
        (fs.path().join("new"), false, How::Puts),
    ] {
        let sc = Scenario {
            mode: SyncMode::Durable,
            write_map,
            how,
            value_len: SMALL,
        };
        let out = spawn_child(&sc.encode(&dir));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "open of {} (write_map={write_map}, {how:?}) on a full tmpfs: the process died \
             ({}):\n{stdout}\n{}",
            dir.display(),
            describe_exit(&out),
            String::from_utf8_lossy(&out.stderr)
        );
        let err = stdout
            .lines()
            .find_map(|l| l.strip_prefix("open-error "))
            .unwrap_or_else(|| panic!("the open on a full tmpfs failed cleanly:\n{stdout}"));
        assert!(
            err.contains("ENOSPC") && err.contains("full"),
            "the open error says the disk is full: {err}"
        );
        eprintln!("{how:?}, write_map={write_map}: {err}");
    }
    // Free the space: the database opens with its data intact.
    std::fs::remove_file(fs.path().join("filler")).unwrap();
    let db = tabula::open::<S>(&existing, Options::new()).unwrap();
    assert_eq!(
        db.read().unwrap().get::<Blobs>(&1).unwrap(),
        Some(value(1, 1000))
    );
    assert!(db.check().unwrap().is_ok());
    Ran::Completed
}

/// Where the file system can reserve the pages libmdbx writes through the map (ext4), the map
/// stays writable; on a tmpfs (libmdbx ignores a failed reservation there) it is turned off.
fn write_map_is_used_only_where_space_can_be_reserved() -> Ran {
    let mut tested = Vec::new();
    let mut missing = Vec::new();
    for fs in [Mount::ext4(16 << 20), Mount::tmpfs(8 << 20)] {
        let fs = match fs {
            Ok(fs) => fs,
            Err(why) => {
                missing.push(why);
                continue;
            }
        };
        let db = tabula::open::<S>(&fs.path().join("db"), Options::new().write_map(true)).unwrap();
        let info = db.info().unwrap();
        assert_eq!(info.write_map, fs.what == "ext4", "{}: {info:?}", fs.what);
        // Without asking for it, never.
        drop(db);
        let db = tabula::open::<S>(&fs.path().join("db"), Options::new()).unwrap();
        assert!(!db.info().unwrap().write_map);
        tested.push(fs.what);
    }
    // Both file systems, or a skip that names what is missing: never a pass over none.
    if !missing.is_empty() {
        return harness::skip(
            GROUP,
            &format!("tested only {tested:?}; {}", missing.join("; ")),
        );
    }
    assert_eq!(tested, ["ext4", "tmpfs"]);
    Ran::Completed
}
