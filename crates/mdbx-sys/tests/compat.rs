//! Files stay libmdbx's files: a database the patched libmdbx (`libmdbx/`, what this crate
//! compiles) writes is checked clean by the pristine libmdbx 0.14.4 (`pristine/`:
//! `mdbx_env_chk`, the engine of upstream's `mdbx_chk`, and every entry read back), and one the
//! pristine libmdbx writes opens, takes more writes and checks clean in the patched one.
//!
//! `tests/compat-tool.c` is built twice with the C compiler (`CC`, else `cc`), once against
//! each tree, with this crate's build settings (the thread-owner check off, the fallocate path,
//! assertions on); its writes exercise what the patches change (many tables, a transaction that
//! spills, pages freed and reused, large values, `MDBX_NOMETASYNC` commits).

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the tool against the libmdbx tree `tree` (`pristine` or `libmdbx`) into `out`.
fn build_tool(tree: &str, out: &Path) -> Result<(), String> {
    let dir = crate_dir().join(tree);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut cmd = Command::new(&cc);
    cmd.args(["-O1", "-w", "-pthread"])
        .arg("-DMDBX_BUILD_FLAGS=\"\"")
        .arg("-DMDBX_TXN_CHECKOWNER=0")
        .arg("-DMDBX_FORCE_ASSERTIONS=1");
    if cfg!(target_os = "linux") {
        cmd.arg("-DFALLOC_FL_ALLOCATE_RANGE=0x00");
    }
    cmd.arg("-I")
        .arg(&dir)
        .arg(crate_dir().join("tests/compat-tool.c"))
        .arg(dir.join("mdbx.c"))
        .arg("-o")
        .arg(out);
    let output = cmd.output().map_err(|e| format!("cannot run {cc}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cc} failed on the {tree} tree:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// Runs `tool args..`; its stdout when it succeeds.
fn run(tool: &Path, args: &[&str]) -> String {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} {} failed ({}):\n{stdout}{}",
        tool.file_name().unwrap().to_string_lossy(),
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("compat-tool") || l.contains("assert"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    stdout
}

#[test]
fn files_written_by_either_build_open_and_check_clean_in_the_other() {
    let work = tempfile::tempdir().unwrap();
    let pristine = work.path().join("tool-pristine");
    let patched = work.path().join("tool-patched");
    // The two builds in parallel: each compiles the whole amalgamation.
    std::thread::scope(|s| {
        let a = s.spawn(|| build_tool("pristine", &pristine));
        let b = s.spawn(|| build_tool("libmdbx", &patched));
        a.join().unwrap().unwrap();
        b.join().unwrap().unwrap();
    });
    let dir = |name: &str| {
        let d = work.path().join(name);
        std::fs::create_dir(&d).unwrap();
        d.to_str().unwrap().to_owned()
    };

    // Written by the patched build, two rounds (the second rewrites and deletes, so its pages
    // come from the GC); checked by the pristine build.
    let by_patched = dir("by-patched");
    run(&patched, &["write", &by_patched, "0"]);
    run(&patched, &["write", &by_patched, "1"]);
    let seen_by_pristine = run(&pristine, &["check", &by_patched, "2"]);

    // Written by the pristine build; the patched build writes a second round into it, and both
    // check the result.
    let by_pristine = dir("by-pristine");
    run(&pristine, &["write", &by_pristine, "0"]);
    run(&patched, &["check", &by_pristine, "1"]);
    run(&patched, &["write", &by_pristine, "1"]);
    let seen_by_patched = run(&patched, &["check", &by_pristine, "2"]);
    let seen_again_by_pristine = run(&pristine, &["check", &by_pristine, "2"]);

    // The same two rounds, whoever wrote them: the same contents.
    assert!(
        seen_by_pristine.contains("as written"),
        "{seen_by_pristine}"
    );
    assert_eq!(seen_by_pristine, seen_by_patched);
    assert_eq!(seen_by_patched, seen_again_by_pristine);

    // And the check can fail: the contents of one round are not those of two.
    let wrong = Command::new(&pristine)
        .args(["check", &by_patched, "1"])
        .output()
        .unwrap();
    assert!(
        !wrong.status.success(),
        "the check accepted the wrong round's contents"
    );
}
