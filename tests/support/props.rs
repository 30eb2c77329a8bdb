//! The configuration of every property test: its case count, its seed (drawn and printed by
//! [`crate::random::seed`], so `TABULA_SEED=<seed>` replays a run) and where its failing cases
//! are saved.
//!
//! Included by path beside `random.rs`, which it needs at the crate root as `random`:
//! `#[path = "support/random.rs"] mod random;` and `#[path = "support/props.rs"] mod props;`.
#![allow(dead_code)] // each test file uses a part

use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};

/// The configuration of the properties of `what`: `PROPTEST_CASES` cases, or `default_cases`;
/// the seed of [`crate::random::seed`]; failing cases saved in [`regressions`]`(what)`, which
/// proptest runs first, every run.
pub fn config(what: &str, default_cases: u32) -> Config {
    // `default()` reads the other `PROPTEST_*` variables.
    let base = Config::default();
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        rng_seed: RngSeed::Fixed(crate::random::seed(what)),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions(what)))),
        ..base
    }
}

/// Where the failing cases of `what` are saved: `tests/proptest-regressions/<what>.txt` of the
/// package under test, committed with the tests.
pub fn regressions(what: &str) -> &'static str {
    let path = format!(
        "{}/tests/proptest-regressions/{what}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    Box::leak(path.into_boxed_str())
}
