//! A reader process following a writer process: the writer (this program run again with
//! `writer <dir>`) commits orders; the follower, in the first process, learns of each commit
//! with `Db::follow` — its ID, the tables it wrote, and whether it missed some between two looks
//! — and re-reads only what changed. libmdbx cannot wake another process, so the follower polls
//! its parked read snapshot with backoff (50 µs up to `max_wait`); typed key changes
//! (`Db::watch`) stay within the writing process.
//!
//! ```text
//! cargo run --example follow
//! ```

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tabula::{Options, Schema, SyncMode, Table};

#[derive(Table)]
#[table(name = "orders", key = u64, value = String)]
struct Orders;

#[derive(Table)]
#[table(name = "totals", key = String, value = u64)]
struct Totals;

#[derive(Schema)]
struct Shop(Orders, Totals);

const ORDERS: u64 = 200;

fn options() -> Options {
    Options::new().sync(SyncMode::SafeNoSync)
}

/// The writing process: one order per commit, the running total every tenth.
fn writer(dir: &Path) -> tabula::Result<()> {
    let db = tabula::open::<Shop>(dir, options())?;
    for n in 1..=ORDERS {
        let mut tx = db.write()?;
        tx.put::<Orders>(&n, &format!("order {n}"))?;
        if n % 10 == 0 {
            tx.put::<Totals>("orders", &n)?;
        }
        tx.commit()?;
        std::thread::sleep(Duration::from_micros(300));
    }
    Ok(())
}

fn main() -> tabula::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("writer") {
        return writer(Path::new(&args[2]));
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = tabula::open::<Shop>(dir.path(), options())?;
    let mut follower = db.follow()?.max_wait(Duration::from_millis(5));
    let start = follower.last_id();

    let mut child = Command::new(std::env::current_exe().expect("this program"))
        .arg("writer")
        .arg(dir.path())
        .spawn()
        .expect("the writer process");

    // The follower's loop; the writer is reaped whatever it returns.
    let mut follow = || -> tabula::Result<(u64, u64, u64, bool, u64)> {
        let (mut looks, mut missed, mut totals_reloads, mut in_order) = (0u64, 0u64, 0u64, true);
        let mut last_total = 0;
        loop {
            match follower.next_commit_timeout(Duration::from_millis(50))? {
                Some(seen) => {
                    looks += 1;
                    in_order &= seen.id > seen.previous;
                    if seen.skipped() {
                        missed += seen.id - seen.previous - 1;
                    }
                    // Re-read only the tables written since the last look.
                    if seen.tables.contains::<Shop, Totals>() {
                        totals_reloads += 1;
                        last_total = db.read()?.get::<Totals>("orders")?.unwrap_or(0);
                    }
                }
                // Nothing for 50 ms: done once the writer has exited.
                None => {
                    if child.try_wait().expect("the writer's status").is_some() {
                        return Ok((looks, missed, totals_reloads, in_order, last_total));
                    }
                }
            }
        }
    };
    let followed = follow();
    let status = child.wait().expect("the writer's status");
    let (looks, missed, totals_reloads, in_order, last_total) = followed?;
    let tx = db.read()?;
    println!("writer exited: {}", status.success());
    println!(
        "followed: {} commits in {looks} looks ({missed} seen only as part of a jump), in order: {in_order}",
        follower.last_id() - start
    );
    println!(
        "totals reloaded {totals_reloads} times, last total {last_total}, orders stored {}",
        tx.len::<Orders>()?
    );
    Ok(())
}
