//! The `main` of the test targets declared with `harness = false` in the root `Cargo.toml`
//! (`crash`, `multiprocess`, `bad_input`, `disk_full`, `dead_reader`, ...). Each re-runs its own
//! binary as a child process; a child entry point written as a `#[test]` would pass vacuously in
//! every normal run and be counted as a test. So these targets have their own `main`: it runs
//! the child when an environment variable asks for it, and otherwise the listed tests through
//! libtest-mimic, which keeps libtest's command line (name filters, `--exact`, `--skip`,
//! `--list`, `--test-threads`) and its `test result:` line. Like libtest, it takes any number of
//! name filters and runs the tests that match any of them (libtest-mimic alone takes one).
//!
//! In such a file `#[test]` does nothing (the file is not compiled with `--test`): a test is a
//! plain `fn()` that fails by panicking, listed in `run_tests!`. A test left out of the list is
//! dead code, which `cargo clippy -- -D warnings` refuses. A test that cannot run here (it needs
//! root, say) returns [`Ran`] and calls [`skip`], which fails it unless `TABULA_ALLOW_SKIP`
//! names its group; an allowed skip is reported as `ignored` with the reason.

use std::ffi::OsString;

/// Runs the listed test functions (paths to `fn()` or `fn() -> Ran`) through libtest-mimic and
/// exits with its status. A test's name is its path as written
/// (`commits::durable_commits_survive_kills`).
macro_rules! run_tests {
    ($($test:path),+ $(,)?) => {
        $crate::harness::run(vec![$(
            ::libtest_mimic::Trial::ignorable_test(
                stringify!($test).replace(' ', ""),
                || Ok($crate::harness::Outcome::completion($test())),
            )
        ),+])
    };
}

/// How a test that may skip ended: it ran, or it skipped with the reason (only when
/// `TABULA_ALLOW_SKIP` allows it, see [`skip`]).
#[allow(dead_code)] // not every target that includes this file has a test that may skip
#[derive(Debug)]
#[must_use = "return it from the test"]
pub enum Ran {
    /// The test ran to the end.
    Completed,
    /// It could not run here and the skip is allowed; libtest-mimic reports it `ignored`.
    Skipped(String),
}

/// What a listed test function returns: `()` (it ran) or a [`Ran`].
pub trait Outcome {
    fn completion(self) -> libtest_mimic::Completion;
}

impl Outcome for () {
    fn completion(self) -> libtest_mimic::Completion {
        libtest_mimic::Completion::Completed
    }
}

impl Outcome for Ran {
    fn completion(self) -> libtest_mimic::Completion {
        match self {
            Ran::Completed => libtest_mimic::Completion::Completed,
            Ran::Skipped(why) => libtest_mimic::Completion::ignored_with(why),
        }
    }
}

/// The environment variable that allows tests to skip: a comma-separated list of test groups
/// (`disk_full`, ...). Without it a test that cannot run fails.
pub const ALLOW_SKIP_VAR: &str = "TABULA_ALLOW_SKIP";

/// Whether `TABULA_ALLOW_SKIP` names `group`.
#[allow(dead_code)] // not every target that includes this file has a test that may skip
pub fn skip_allowed(group: &str) -> bool {
    std::env::var(ALLOW_SKIP_VAR).is_ok_and(|groups| groups.split(',').any(|g| g.trim() == group))
}

/// A test of `group` cannot run here, for the reason `why`: panics (the test fails) unless
/// `TABULA_ALLOW_SKIP` names the group; otherwise prints the skip and returns it, for the test
/// to return. A skip is never silent: it fails, or it shows as `ignored` with its reason.
#[allow(dead_code)] // not every target that includes this file has a test that may skip
pub fn skip(group: &str, why: &str) -> Ran {
    if !skip_allowed(group) {
        panic!(
            "cannot run here: {why}. Run it where it can (docs/reliability.md, \"Skips are loud \
             and opt-in\"), or allow the skip with {ALLOW_SKIP_VAR}={group}"
        );
    }
    eprintln!("SKIPPED ({ALLOW_SKIP_VAR} names `{group}`): {why}");
    Ran::Skipped(format!("{ALLOW_SKIP_VAR}={group}: {why}"))
}

/// Runs `trials` with the process's command line; never returns.
pub fn run(trials: Vec<libtest_mimic::Trial>) -> ! {
    let (args, trials) = arguments(std::env::args_os().collect(), trials);
    libtest_mimic::run(&args, trials).exit()
}

/// libtest's options that take a value (`--name value` or `--name=value`).
const TAKES_VALUE: [&str; 6] = [
    "--test-threads",
    "--logfile",
    "--skip",
    "--color",
    "--format",
    "-Z",
];

/// Parses a libtest command line, which may hold several name filters; libtest-mimic's parser
/// takes at most one. With two or more, the tests that match none of them (by libtest-mimic's
/// own rule, `--exact` included) become exact `--skip`s, so its `filtered out` count stays right.
fn arguments(
    argv: Vec<OsString>,
    trials: Vec<libtest_mimic::Trial>,
) -> (libtest_mimic::Arguments, Vec<libtest_mimic::Trial>) {
    let mut rest = Vec::with_capacity(argv.len());
    let mut filters = Vec::new();
    let mut args = argv.into_iter();
    rest.extend(args.next()); // the program
    let mut only_filters = false;
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        if only_filters || !text.starts_with('-') {
            filters.push(text);
        } else if text == "--" {
            only_filters = true;
        } else {
            let takes_value = TAKES_VALUE.contains(&text.as_str());
            rest.push(arg);
            if takes_value {
                rest.extend(args.next());
            }
        }
    }
    let mut parsed = libtest_mimic::Arguments::from_iter(rest);
    if filters.len() <= 1 {
        parsed.filter = filters.pop();
        return (parsed, trials);
    }
    let matches_any = |trial: &libtest_mimic::Trial| {
        filters.iter().any(|f| {
            let mut one = parsed.clone();
            one.filter = Some(f.clone());
            !one.is_filtered_out(trial)
        })
    };
    let left_out: Vec<String> = trials
        .iter()
        .filter(|t| !matches_any(t))
        .map(|t| t.name().to_owned())
        .collect();
    // Exact from here on: each skip names one test; the filters and the caller's skips have been
    // applied with the caller's `--exact` above.
    parsed.exact = true;
    parsed.skip = left_out;
    (parsed, trials)
}
