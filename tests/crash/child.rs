//! Running this binary as a child writer, reading what it reports, and killing it.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Duration;

/// Names the kind of child to run (`commits`, `bulk`, `migration`).
pub const KIND_VAR: &str = "TABULA_CRASH_CHILD";
/// The database directory the child writes.
const DIR_VAR: &str = "TABULA_CRASH_DIR";

/// The child kind asked for, when this process is a child.
pub fn requested() -> Option<String> {
    std::env::var(KIND_VAR).ok()
}

/// The child's database directory.
pub fn dir() -> PathBuf {
    PathBuf::from(
        std::env::var_os(DIR_VAR).unwrap_or_else(|| panic!("{KIND_VAR} is set, {DIR_VAR} is not")),
    )
}

/// A running child writer and the lines it printed so far.
pub struct Child {
    process: std::process::Child,
    stdout: BufReader<ChildStdout>,
    stderr: ChildStderr,
    /// Every line read from the child's stdout, in order.
    pub lines: Vec<String>,
}

/// How a child ended.
pub struct Ended {
    /// Every line the child printed.
    pub lines: Vec<String>,
    /// Whether it printed `finished` (it ran to the end before the kill).
    pub finished: bool,
}

impl Child {
    /// Starts a child of `kind` on `dir` with extra environment variables.
    pub fn spawn(kind: &str, dir: &Path, env: &[(&str, String)]) -> Child {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.env(KIND_VAR, kind)
            .env(DIR_VAR, dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut process = cmd.spawn().unwrap();
        let stdout = BufReader::new(process.stdout.take().unwrap());
        let stderr = process.stderr.take().unwrap();
        Child {
            process,
            stdout,
            stderr,
            lines: Vec::new(),
        }
    }

    /// Reads lines until one starts with `prefix` and returns the rest of it; `None` when the
    /// child prints `finished` first. Panics (with the child's stderr) when it exits early.
    pub fn wait_for(&mut self, prefix: &str) -> Option<String> {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            if n == 0 {
                let status = self.process.wait().unwrap();
                let mut err = String::new();
                let _ = self.stderr.read_to_string(&mut err);
                panic!("the child exited before `{prefix}` ({status}): {err}");
            }
            let line = line.trim_end().to_string();
            self.lines.push(line.clone());
            if line == "finished" {
                return None;
            }
            if let Some(rest) = line.strip_prefix(prefix) {
                return Some(rest.to_string());
            }
        }
    }

    /// Sleeps `delay`, SIGKILLs the child, and collects everything it printed. A child that
    /// printed `finished` must have exited by itself with success; any other must have been
    /// killed by this SIGKILL (not ended by a panic of its own).
    pub fn kill_after(mut self, delay: Duration) -> Ended {
        std::thread::sleep(delay);
        self.process.kill().unwrap(); // SIGKILL; also fine on a child that has already exited
        let status: ExitStatus = self.process.wait().unwrap();
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        self.lines.extend(rest.lines().map(str::to_string));
        let mut err = String::new();
        let _ = self.stderr.read_to_string(&mut err);
        let finished = self.lines.iter().any(|l| l == "finished");
        if finished {
            // It may have been killed while closing the database after `finished`.
            assert!(
                status.success() || status.signal() == Some(9),
                "child: {status}: {err}"
            );
        } else {
            assert_eq!(status.signal(), Some(9), "child: {status}: {err}");
        }
        Ended {
            lines: self.lines,
            finished,
        }
    }
}
