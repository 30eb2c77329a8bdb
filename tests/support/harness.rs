//! The `main` of the test targets declared with `harness = false` in the root `Cargo.toml`
//! (`crash`, `multiprocess`, `bad_input`). Each re-runs its own binary as a child process; a
//! child entry point written as a `#[test]` would pass vacuously in every normal run and be
//! counted as a test. So these targets have their own `main`: it runs the child when an
//! environment variable asks for it, and otherwise the listed tests through libtest-mimic,
//! which keeps libtest's command line (name filters, `--exact`, `--list`, `--test-threads`)
//! and its `test result:` line.
//!
//! In such a file `#[test]` does nothing (the file is not compiled with `--test`): a test is a
//! plain `fn()` that fails by panicking, listed in `run_tests!`. A test left out of the list is
//! dead code, which `cargo clippy -- -D warnings` refuses.

/// Runs the listed test functions (paths to `fn()`) through libtest-mimic and exits with its
/// status. A test's name is its path as written (`commits::durable_commits_survive_kills`).
macro_rules! run_tests {
    ($($test:path),+ $(,)?) => {
        $crate::harness::run(vec![$(
            ::libtest_mimic::Trial::test(
                stringify!($test).replace(' ', ""),
                || {
                    $test();
                    Ok(())
                },
            )
        ),+])
    };
}

/// Runs `trials` with the process's command line; never returns.
pub fn run(trials: Vec<libtest_mimic::Trial>) -> ! {
    libtest_mimic::run(&libtest_mimic::Arguments::from_args(), trials).exit()
}

/// A random seed, or the one in the environment variable `var` to replay a run; printed either
/// way with the variable that replays it.
#[allow(dead_code)] // not every target that includes this file draws seeds
pub fn seed(var: &str, what: &str) -> u64 {
    let seed = match std::env::var(var) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={s:?} is not a seed (a u64)")),
        Err(_) => {
            // Fresh per run and per call: the clock mixed with the process ID and the caller.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            let mut h = nanos ^ u64::from(std::process::id()) << 32;
            for b in what.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
            h
        }
    };
    eprintln!("{what}: seed {seed} (replay with {var}={seed})");
    seed
}
