//! `faultfs-run`: runs a program on a fresh `tabula-faultfs` disk, cuts the power at a planned
//! point, and writes what the disk kept to a directory, for reproducing power-cut bugs outside
//! Rust (`crates/mdbx-sys/patches/nometasync-powercut.c` uses it).
//!
//! ```text
//! faultfs-run [--cut-at N | --cut-after LABEL | --cut-at-fsync-after LABEL]
//!             [--keep none|all|subset:SEED] [--lose FILE:START-END]... --image DIR --
//!             PROGRAM [ARG]...
//! ```
//!
//! The program runs with the mount point in `FAULTFS_DIR`, and every argument `{}` replaced by
//! it. It marks points in the disk's order of events by looking up `.faultfs-mark-LABEL` in
//! that directory (e.g. `stat`). The program and the image's reader see different boot IDs
//! (the run happens in a private mount namespace, see `tabula_faultfs::new_boot_namespace`).
//!
//! - `--cut-at N`: cut at the N-th mutating request (write, size change, fsync).
//! - `--cut-after LABEL`: cut at the first mutating request after the mark LABEL.
//! - `--cut-at-fsync-after LABEL`: cut at the first fsync after the mark LABEL.
//! - `--keep`: which pending (unflushed) pieces reach the disk: `none` (the default), `all`,
//!   or a random half (`subset:SEED`).
//! - `--lose FILE:START-END`: pending pieces of FILE overlapping the byte range are lost
//!   whatever `--keep` says (e.g. `mdbx.dat:0-12288`, the three meta pages at 4 KiB).
//!
//! Prints the marks, the cut and every pending piece with its fate to stderr. Exits 0 once the
//! image is written, 1 when the planned cut did not happen or something failed, 2 on bad usage.
//! Needs root and `/dev/fuse`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use tabula_faultfs::{Disk, PieceOp};

enum Keep {
    None,
    All,
    Subset(u64),
}

struct Lose {
    file: String,
    start: u64,
    end: u64,
}

struct Args {
    cut_at: Option<u64>,
    cut_after: Option<(String, bool)>,
    keep: Keep,
    lose: Vec<Lose>,
    image: PathBuf,
    program: Vec<String>,
}

const USAGE: &str = "usage: faultfs-run [--cut-at N | --cut-after LABEL | --cut-at-fsync-after LABEL] \
                     [--keep none|all|subset:SEED] [--lose FILE:START-END]... --image DIR -- \
                     PROGRAM [ARG]...";

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        cut_at: None,
        cut_after: None,
        keep: Keep::None,
        lose: Vec::new(),
        image: PathBuf::new(),
        program: Vec::new(),
    };
    let value = |it: &mut dyn Iterator<Item = String>, flag: &str| {
        it.next().ok_or_else(|| format!("{flag} needs a value"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--cut-at" => {
                let v = value(&mut it, &a)?;
                args.cut_at = Some(
                    v.parse()
                        .map_err(|_| format!("--cut-at {v}: not a count"))?,
                );
            }
            "--cut-after" => args.cut_after = Some((value(&mut it, &a)?, false)),
            "--cut-at-fsync-after" => args.cut_after = Some((value(&mut it, &a)?, true)),
            "--keep" => {
                let v = value(&mut it, &a)?;
                args.keep = match v.as_str() {
                    "none" => Keep::None,
                    "all" => Keep::All,
                    s => match s.strip_prefix("subset:").map(str::parse) {
                        Some(Ok(seed)) => Keep::Subset(seed),
                        _ => return Err(format!("--keep {v}: expected none, all or subset:SEED")),
                    },
                };
            }
            "--lose" => {
                let v = value(&mut it, &a)?;
                let bad = || format!("--lose {v}: expected FILE:START-END");
                let (file, range) = v.rsplit_once(':').ok_or_else(bad)?;
                let (start, end) = range.split_once('-').ok_or_else(bad)?;
                args.lose.push(Lose {
                    file: file.to_owned(),
                    start: start.parse().map_err(|_| bad())?,
                    end: end.parse().map_err(|_| bad())?,
                });
            }
            "--image" => args.image = PathBuf::from(value(&mut it, &a)?),
            "--" => {
                args.program = it.collect();
                break;
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.program.is_empty() || args.image.as_os_str().is_empty() {
        return Err("--image DIR and a program after -- are required".into());
    }
    if args.cut_at.is_some() && args.cut_after.is_some() {
        return Err("--cut-at and --cut-after / --cut-at-fsync-after exclude each other".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("faultfs-run: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("faultfs-run: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    tabula_faultfs::new_boot_namespace()
        .map_err(|e| format!("{e} (faultfs-run needs root and /dev/fuse)"))?;
    let disk = Disk::new();
    if let Some(n) = args.cut_at {
        disk.cut_at(n);
    }
    match &args.cut_after {
        Some((label, true)) => disk.cut_at_fsync_after(label),
        Some((label, false)) => disk.cut_after(label),
        None => {}
    }
    let mnt = std::env::temp_dir().join(format!("faultfs-run-{}", std::process::id()));
    std::fs::create_dir_all(&mnt).map_err(|e| format!("creating {}: {e}", mnt.display()))?;
    let result = run_mounted(args, &disk, &mnt);
    let _ = std::fs::remove_dir(&mnt);
    let planned = args.cut_at.is_some() || args.cut_after.is_some();
    let cut = result?;
    for m in disk.marks() {
        eprintln!(
            "faultfs-run: mark `{}` after {} mutating requests",
            m.label, m.after_ops
        );
    }
    if planned && !cut {
        return Err("the program ended before the planned cut".into());
    }
    if cut {
        eprintln!(
            "faultfs-run: power cut at mutating request #{} (not applied)",
            disk.stats().mutating
        );
    }
    let lost_by_range = |file: &str, op: &PieceOp| match op {
        PieceOp::Write { offset, len } => args
            .lose
            .iter()
            .any(|l| l.file == file && *offset < l.end && offset + len > l.start),
        PieceOp::SetLen(_) => false,
    };
    let mut rng = splitmix(match args.keep {
        Keep::Subset(seed) => seed,
        _ => 0,
    });
    let mut fates = Vec::new();
    let image = disk.durable_image_with(|p| {
        let keep = !lost_by_range(&p.file, &p.op)
            && match args.keep {
                Keep::None => false,
                Keep::All => true,
                Keep::Subset(_) => rng() & 1 == 1,
            };
        fates.push((p.clone(), keep));
        keep
    });
    for (p, keep) in &fates {
        let what = match p.op {
            PieceOp::Write { offset, len } => format!("write {len} bytes at {offset}"),
            PieceOp::SetLen(len) => format!("set length {len}"),
        };
        let fate = if *keep { "kept" } else { "lost" };
        eprintln!(
            "faultfs-run: pending {} #{}: {what}: {fate}",
            p.file, p.index
        );
    }
    image
        .write_to(&args.image)
        .map_err(|e| format!("writing the image: {e}"))?;
    eprintln!(
        "faultfs-run: image written to {} ({} pending pieces, {} kept)",
        args.image.display(),
        fates.len(),
        fates.iter().filter(|f| f.1).count()
    );
    Ok(())
}

/// Mounts `disk` on `mnt`, runs the program until it ends or the power is cut (then kills
/// it), unmounts. Returns whether the power was cut.
fn run_mounted(args: &Args, disk: &Disk, mnt: &Path) -> Result<bool, String> {
    let mounted = disk.mount(mnt).map_err(|e| e.to_string())?;
    let dir = mnt.to_string_lossy().into_owned();
    let argv: Vec<String> = args.program[1..]
        .iter()
        .map(|a| if a == "{}" { dir.clone() } else { a.clone() })
        .collect();
    let mut child = Command::new(&args.program[0])
        .args(&argv)
        .env("FAULTFS_DIR", mnt)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", args.program[0]))?;
    let started = Instant::now();
    let mut cut = false;
    loop {
        if disk.wait_cut(Duration::from_millis(2)) {
            cut = true;
            break;
        }
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            break;
        }
    }
    if cut {
        // Nothing of the program may run after a request failed.
        let _ = child.kill();
    }
    disk.release();
    let status = child.wait().map_err(|e| e.to_string())?;
    if !cut {
        eprintln!("faultfs-run: the program ended ({status})");
    }
    mounted.unmount().map_err(|e| format!("unmounting: {e}"))?;
    Ok(cut)
}

/// SplitMix64 from `seed`, for `--keep subset:SEED`.
fn splitmix(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
