//! Processes killed while writing. A child process (this binary run again with
//! `TABULA_CRASH_CHILD=<kind>`) writes and reports each commit on its stdout; the parent
//! SIGKILLs it at a random point, reopens the database and checks that it holds exactly what the
//! child reported committed (or one commit more: committed, killed before it reported), never a
//! partial commit, and that libmdbx's integrity check (`mdbx_env_chk`) finds no problem. Six
//! kinds of writes, each killed at least 50 times per run:
//!
//! - `commits`: numbered write transactions, under each `SyncMode` ([`commits`]);
//! - `bulk`: `Db::bulk_load` batches ([`bulk`]);
//! - `migration`: migration steps committing batches at startup ([`migration`]);
//! - `index-writes` and `index-build`: writes that keep indexes exact, and the startup step
//!   building a new index ([`indexes`]);
//! - `history`: versions applied to a table declared `history`, unwinds and prunes
//!   ([`history`]).
//!
//! Every kill point is drawn from a seed, printed per test; `TABULA_SEED=<seed>` replays
//! it, `TABULA_CRASH_KILLS=<n>` changes the number of kills per test (the valgrind script lowers
//! it). The file has its own `main` (`harness = false`, `tests/support/harness.rs`): the child
//! entry is not a test.

#[path = "../support/harness.rs"]
#[macro_use]
mod harness;
#[path = "../support/random.rs"]
mod random;

mod bulk;
mod child;
mod commits;
mod history;
mod indexes;
mod migration;

fn main() {
    if let Some(kind) = child::requested() {
        let dir = child::dir();
        match kind.as_str() {
            "commits" => commits::child(&dir),
            "bulk" => bulk::child(&dir),
            "migration" => migration::child(&dir),
            "index-writes" => indexes::writes_child(&dir),
            "index-build" => indexes::build_child(&dir),
            "history" => history::child(&dir),
            other => panic!("unknown {} kind {other:?}", child::KIND_VAR),
        }
        return;
    }
    run_tests!(
        commits::durable_commits_survive_process_kills,
        commits::safe_nosync_commits_survive_process_kills,
        commits::nometasync_commits_survive_process_kills,
        commits::utterly_nosync_commits_survive_process_kills,
        bulk::bulk_loads_survive_process_kills,
        migration::migration_steps_survive_process_kills,
        indexes::index_writes_survive_process_kills,
        indexes::index_builds_survive_process_kills,
        history::history_survives_process_kills,
    );
}

/// Kills per test: `default`, or `TABULA_CRASH_KILLS`.
pub fn kills(default: u32) -> u32 {
    match std::env::var("TABULA_CRASH_KILLS") {
        Ok(k) => k
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("TABULA_CRASH_KILLS={k:?} is not a number")),
        Err(_) => default,
    }
}
