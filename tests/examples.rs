//! The examples are part of the documentation: run them, so they cannot rot.
//!
//! `cargo test` builds every example next to the test binaries (`target/<profile>/examples`).

use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/examples-<hash> → target/<profile>/examples/<name>
    let dir = exe.parent().unwrap().parent().unwrap().join("examples");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} was not built by `cargo test`",
        path.display()
    );
    path
}

fn run(name: &str) -> String {
    let out = Command::new(example(name)).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "example {name} failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn quickstart_runs_and_data_survives_reopen() {
    let out = run("quickstart");
    assert!(
        out.contains("created: [\"Headers\", \"balances\", \"topics\"]"),
        "{out}"
    );
    assert!(
        out.contains("prefix balances[alice] = block 1: 100 block 3: 70"),
        "{out}"
    );
    assert!(
        out.contains("dupsort Topics[4] = [\"approval\", \"transfer#4\"]"),
        "{out}"
    );
    assert!(out.contains("Headers[3] unchanged: true"), "{out}");
}

#[test]
fn migrate_example_upgrades_once() {
    let out = run("migrate");
    assert!(out.contains("step 2 `users-with-email`"), "{out}");
    assert!(
        out.contains("transform values of users: 10000/10000"),
        "{out}"
    );
    assert!(
        out.contains("users[0] = User { name: \"ada0\", email: Some(\"ada0@example.org\") }"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("applied []"), "{out}");
}

#[test]
fn chain_state_imports_looks_up_and_unwinds_against_its_model() {
    // The example checks every step against its in-memory model and panics on a mismatch.
    let out = run("chain_state");
    assert!(out.contains("imported 3000 blocks"), "{out}");
    assert!(
        out.contains("storage slots by address and slot: all match the model"),
        "{out}"
    );
    assert!(
        out.contains("unwound 100 blocks to block 2900")
            && out.contains("the state matches the model at block 2900"),
        "{out}"
    );
    // Another seed and length.
    let out = Command::new(example("chain_state"))
        .args(["700", "7"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("unwound 100 blocks to block 600"),
        "{stdout}"
    );
}

#[test]
fn reorg_applies_unwinds_and_applies_the_other_branch_against_its_model() {
    // The example checks every step against its in-memory model and panics on a mismatch.
    let out = run("reorg");
    assert!(out.contains("applied 1000 blocks"), "{out}");
    assert!(
        out.contains("as of 6 earlier blocks: all match the model"),
        "{out}"
    );
    assert!(
        out.contains("unwound 64 blocks to block 936")
            && out.contains("the state matches the model at block 936"),
        "{out}"
    );
    assert!(
        out.contains("applied the other branch, blocks 937 to 1000"),
        "{out}"
    );
}

#[test]
fn server_example_serves_consistent_reads_while_writing() {
    let out = run("server");
    assert!(out.contains("requests: 5000 ok, 0 inconsistent"), "{out}");
    assert!(
        out.contains("session: same snapshot across awaits: true"),
        "{out}"
    );
    assert!(
        out.contains("backup: 1000 accounts, total balance 100000"),
        "{out}"
    );
    assert!(out.contains("table accounts: 1000 entries"), "{out}");
    assert!(
        out.contains("cache: in sync with the database: true"),
        "{out}"
    );
    let committed = out
        .lines()
        .find_map(|l| l.strip_prefix("writer: "))
        .and_then(|l| l.split(' ').next())
        .unwrap();
    assert!(
        out.contains(&format!(
            "feed: {committed} commits of {committed} reported"
        )),
        "{out}"
    );
}

#[test]
fn follow_example_sees_every_commit_of_the_writer_process() {
    let out = run("follow");
    assert!(out.contains("writer exited: true"), "{out}");
    assert!(out.contains("followed: 200 commits in "), "{out}");
    assert!(out.contains("in order: true"), "{out}");
    assert!(out.contains("last total 200, orders stored 200"), "{out}");
}

#[test]
fn indexes_example_keeps_indexes_exact_and_builds_a_new_one() {
    let out = run("indexes");
    for line in [
        "refused: table `transfers`: unique index `by_hash`",
        "transfers: 30",
        "sent by bob: [\"1.2\", \"3.0\", \"4.1\", \"5.2\", \"7.0\", \"8.1\", \"9.2\"]",
        "sent by bob, latest first: [\"9.2\", \"8.1\", \"7.0\"]",
        "hash of 4.1 -> 4.1 (bob -> carol)",
        "deleted block 10: 3 transfers",
        "built: [\"by_recipient\"]",
        "recipient entries: 27",
        "received by carol: [\"1.1\", \"2.1\", \"3.1\", \"4.1\", \"5.1\", \"6.1\", \"7.1\", \"8.1\", \"9.1\"]",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    assert_eq!(out.matches("indexes check: true").count(), 2, "{out}");
}
