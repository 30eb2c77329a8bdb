//! The test runner of the `harness = false` targets (`tests/support/harness.rs`): it keeps
//! libtest's command line, several name filters included, and a test that cannot run fails
//! unless `TABULA_ALLOW_SKIP` names its group. Each test runs this binary again as a child
//! process with a command line and reads what the runner printed.
//!
//! With `TABULA_RUNNER_DEMO` set, `main` adds one more test, `demo::cannot_run_here`, which
//! always asks to skip (group `runner_demo`): the skip tests run it in a child. In a normal run it
//! is not listed.

#[path = "support/harness.rs"]
#[macro_use]
mod harness;

use std::process::{Command, Output};

const DEMO_VAR: &str = "TABULA_RUNNER_DEMO";

fn main() {
    if std::env::var_os(DEMO_VAR).is_some() {
        run_tests!(
            filters::several_filters_run_the_tests_matching_any,
            filters::exact_and_skip_apply_to_every_filter,
            filters::a_run_with_several_filters_counts_the_rest_as_filtered_out,
            skips::a_skip_fails_unless_its_group_is_allowed,
            demo::cannot_run_here,
        );
    }
    run_tests!(
        filters::several_filters_run_the_tests_matching_any,
        filters::exact_and_skip_apply_to_every_filter,
        filters::a_run_with_several_filters_counts_the_rest_as_filtered_out,
        skips::a_skip_fails_unless_its_group_is_allowed,
    );
}

/// Runs this binary with `args` (and `env`), with the demo test listed.
fn child(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(args)
        .env(DEMO_VAR, "1")
        .env_remove(harness::ALLOW_SKIP_VAR);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The test names `--list` printed (lines `name: test`).
fn listed(args: &[&str]) -> Vec<String> {
    let mut all = vec!["--list"];
    all.extend_from_slice(args);
    let out = child(&all, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "--list {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

mod filters {
    use super::{child, listed};

    pub fn several_filters_run_the_tests_matching_any() {
        // One filter, as before.
        assert_eq!(
            listed(&["several_filters_run"]),
            ["filters::several_filters_run_the_tests_matching_any"]
        );
        // Two and three filters: every test matching any of them, each once.
        assert_eq!(
            listed(&["several_filters_run", "a_skip_fails"]),
            [
                "filters::several_filters_run_the_tests_matching_any",
                "skips::a_skip_fails_unless_its_group_is_allowed",
            ]
        );
        assert_eq!(
            listed(&["demo::", "filters::", "filters::several"]),
            [
                "demo::cannot_run_here",
                "filters::a_run_with_several_filters_counts_the_rest_as_filtered_out",
                "filters::exact_and_skip_apply_to_every_filter",
                "filters::several_filters_run_the_tests_matching_any",
            ]
        );
        // Filters that match nothing: no test.
        assert!(listed(&["no_such_test", "nor_this"]).is_empty());
        // After `--`, every argument is a filter.
        assert_eq!(
            listed(&["--", "demo::", "a_skip_fails"]),
            [
                "demo::cannot_run_here",
                "skips::a_skip_fails_unless_its_group_is_allowed",
            ]
        );
    }

    pub fn exact_and_skip_apply_to_every_filter() {
        // `--exact`: whole names only; a part of a name matches nothing.
        assert_eq!(
            listed(&[
                "--exact",
                "demo::cannot_run_here",
                "skips::a_skip_fails_unless_its_group_is_allowed",
                "filters::",
            ]),
            [
                "demo::cannot_run_here",
                "skips::a_skip_fails_unless_its_group_is_allowed",
            ]
        );
        // `--skip` (a substring, repeatable, before or after the filters) still leaves out.
        assert_eq!(
            listed(&[
                "filters::",
                "--skip",
                "exact_and",
                "demo::",
                "--skip=several_filters_run"
            ]),
            [
                "demo::cannot_run_here",
                "filters::a_run_with_several_filters_counts_the_rest_as_filtered_out",
            ]
        );
        // Options that take a value do not swallow a filter, nor a filter their value.
        let out = child(
            &[
                "--list",
                "--test-threads",
                "1",
                "demo::",
                "--format",
                "terse",
                "a_skip_fails",
            ],
            &[],
        );
        assert!(out.status.success(), "{out:?}");
    }

    pub fn a_run_with_several_filters_counts_the_rest_as_filtered_out() {
        // Run two tests (each lists, so nothing recurses) by two exact filters.
        let out = child(
            &[
                "--exact",
                "--test-threads=1",
                "filters::several_filters_run_the_tests_matching_any",
                "filters::exact_and_skip_apply_to_every_filter",
            ],
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        assert!(stdout.contains("running 2 tests"), "{stdout}");
        assert!(
            stdout.contains(
                "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out"
            ),
            "{stdout}"
        );
    }
}

mod skips {
    use super::child;

    pub fn a_skip_fails_unless_its_group_is_allowed() {
        let run = |env: &[(&str, &str)]| {
            let out = child(&["--exact", "demo::cannot_run_here"], env);
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            (out.status.success(), text)
        };
        // Not allowed: the test fails, and the message says how to allow it.
        let (ok, text) = run(&[]);
        assert!(!ok, "{text}");
        assert!(
            text.contains("test demo::cannot_run_here ... FAILED"),
            "{text}"
        );
        assert!(text.contains("no such device here"), "{text}");
        assert!(text.contains("TABULA_ALLOW_SKIP=runner_demo"), "{text}");
        assert!(text.contains("0 passed; 1 failed"), "{text}");
        // Another group allowed: still fails.
        let (ok, text) = run(&[("TABULA_ALLOW_SKIP", "disk_full,runner")]);
        assert!(!ok, "{text}");
        // Its group among others: reported as ignored, with the reason, never as passed.
        let (ok, text) = run(&[("TABULA_ALLOW_SKIP", "disk_full, runner_demo")]);
        assert!(ok, "{text}");
        assert!(
            text.contains("test demo::cannot_run_here ... ignored"),
            "{text}"
        );
        assert!(text.contains("no such device here"), "{text}");
        assert!(text.contains("SKIPPED"), "{text}");
        assert!(text.contains("0 passed; 0 failed; 1 ignored"), "{text}");
    }
}

mod demo {
    use super::harness::{self, Ran};

    /// Always asks to skip: listed only when `TABULA_RUNNER_DEMO` is set.
    pub fn cannot_run_here() -> Ran {
        harness::skip("runner_demo", "no such device here")
    }
}
