//! A tokio service on a shared `Db`: 5,000 concurrent requests, each one short read done
//! directly in its task, while a writer commits every millisecond on a blocking thread; a
//! session that keeps one snapshot across `.await`s (an owned read transaction); a long scan
//! moved to `spawn_blocking` with an owned iterator; a cache kept current by watching the
//! accounts' committed changes (`Db::watch`, no polling) and a commit counter on the commit feed
//! (`Db::subscribe`); then a backup and the database's space and readers. The crate docs'
//! "Services and async" section explains each choice.
//!
//! ```text
//! cargo run --release --example server
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tabula::{Change, Db, Options, Received, Schema, SyncMode, Table};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Account {
    balance: u64,
    /// The commit that last wrote it. Accounts `2j` and `2j + 1` are only ever written
    /// together, so in any one snapshot their versions agree.
    version: u64,
}

#[derive(Table)]
#[table(name = "accounts", key = u64, value = Account)]
struct Accounts;

#[derive(Table)]
#[table(name = "events", key = u64, value = String)]
struct Events;

#[derive(Schema)]
struct Bank(Accounts, Events);

const REQUESTS: usize = 5_000;
const ACCOUNTS: u64 = 1_000;

/// One request: a short read, done directly in the task. Beginning a pooled read transaction
/// and a point read cost microseconds; nothing here waits, so it does not hold up the runtime.
fn handle(db: &Db<Bank>, id: u64) -> tabula::Result<bool> {
    let tx = db.read()?;
    let pair = 2 * (id % (ACCOUNTS / 2));
    let a = tx.get::<Accounts>(&pair)?;
    let b = tx.get::<Accounts>(&(pair + 1))?;
    // One snapshot: both accounts come from the same commit (the writer moves them together).
    Ok(match (a, b) {
        (Some(a), Some(b)) => a.version == b.version,
        _ => false,
    })
}

/// A cache of account balances in front of the database, kept current by the committed changes
/// of the accounts table: each change reloads its key; a lag report (the cache fell more than
/// the queue's capacity behind) reloads everything from a snapshot.
struct Cache {
    balances: HashMap<u64, u64>,
    applied: u64,
    resyncs: u64,
}

impl Cache {
    fn load(db: &Db<Bank>) -> tabula::Result<Self> {
        let mut cache = Cache {
            balances: HashMap::new(),
            applied: 0,
            resyncs: 0,
        };
        cache.reload(db)?;
        Ok(cache)
    }

    fn reload(&mut self, db: &Db<Bank>) -> tabula::Result<()> {
        self.balances = db
            .read()?
            .iter::<Accounts>()
            .map(|e| e.map(|(k, a)| (k, a.balance)))
            .collect::<tabula::Result<_>>()?;
        Ok(())
    }

    fn apply(&mut self, db: &Db<Bank>, change: Received<Change<Accounts>>) -> tabula::Result<()> {
        match change {
            Received::Event(Change::Put { key, .. }) => {
                // The event names the key; the value is read from the latest snapshot (which
                // includes this commit: it was delivered after the commit returned).
                if let Some(account) = db.read()?.get::<Accounts>(&key)? {
                    self.balances.insert(key, account.balance);
                }
                self.applied += 1;
            }
            Received::Event(Change::Delete { key, .. }) => {
                self.balances.remove(&key);
                self.applied += 1;
            }
            Received::Event(Change::Cleared { .. }) => self.balances.clear(),
            Received::Lagged { .. } => {
                self.reload(db)?;
                self.resyncs += 1;
            }
        }
        Ok(())
    }
}

/// Tells the writer to stop when dropped: on the normal path and on an early return alike (the
/// runtime waits for blocking threads when it shuts down, so a writer never told to stop would
/// keep the process alive).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> tabula::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // SafeNoSync: commits are not flushed one by one (a power cut may lose the last ones, never
    // corrupt); `Db::sync` below flushes them.
    let options = Options::new()
        .sync(SyncMode::SafeNoSync)
        .max_read_age(Some(Duration::from_secs(30)));
    let db = Arc::new(tabula::open::<Bank>(dir.path().join("bank"), options)?);
    {
        let mut tx = db.write()?;
        for id in 0..ACCOUNTS {
            let account = Account {
                balance: 100,
                version: 0,
            };
            tx.put::<Accounts>(&id, &account)?;
        }
        tx.commit()?;
    }

    // Watchers subscribe before the writer starts, so they see every one of its commits. The
    // receivers block, so they run on blocking threads (with the `stream` feature they are
    // also `Stream`s for async tasks).
    let changes = db.watch::<Accounts>(.., 4096);
    let feed = db.subscribe(tabula::DEFAULT_WATCH_CAPACITY);
    let cache_done = Arc::new(AtomicBool::new(false));
    let cache = {
        let (db, done) = (Arc::clone(&db), Arc::clone(&cache_done));
        tokio::task::spawn_blocking(move || -> tabula::Result<Cache> {
            let mut cache = Cache::load(&db)?;
            loop {
                match changes.recv_timeout(Duration::from_millis(5)) {
                    Some(change) => cache.apply(&db, change?)?,
                    // Told to finish, and nothing left: every commit was delivered before its
                    // `commit` returned.
                    None if done.load(Ordering::Relaxed) => return Ok(cache),
                    None => {}
                }
            }
        })
    };
    let feed_counter = tokio::task::spawn_blocking(move || {
        let (mut commits, mut last) = (0u64, 0u64);
        while let Some(event) = feed.recv() {
            match event {
                Received::Event(commit) => {
                    assert!(commit.id > last, "commits arrive in order");
                    assert!(commit.tables.contains::<Bank, Accounts>());
                    (commits, last) = (commits + 1, commit.id);
                }
                Received::Lagged { missed, latest } => (commits, last) = (commits + missed, latest),
            }
        }
        commits // the database closed
    });

    // The writer: a write transaction must begin and end on one thread (`RwTx` is not
    // `Send`), and a commit can wait for the disk, so it runs on a blocking thread, never in
    // an async task.
    let stop = Arc::new(AtomicBool::new(false));
    let stop_writer = StopOnDrop(Arc::clone(&stop));
    let commits = Arc::new(AtomicU64::new(0));
    let writer = {
        let (db, stop, commits) = (Arc::clone(&db), Arc::clone(&stop), Arc::clone(&commits));
        tokio::task::spawn_blocking(move || -> tabula::Result<()> {
            let mut version = 0;
            while !stop.load(Ordering::Relaxed) {
                version += 1;
                let mut tx = db.write()?;
                let pair = 2 * (version % (ACCOUNTS / 2));
                // Moves 1 from one account of a pair to the other; both carry the version.
                for (key, delta) in [(pair, -1i64), (pair + 1, 1)] {
                    let mut account = tx.get::<Accounts>(&key)?.expect("seeded");
                    account.balance = account.balance.saturating_add_signed(delta);
                    account.version = version;
                    tx.put::<Accounts>(&key, &account)?;
                }
                tx.put::<Events>(&version, &format!("transfer in pair {pair}"))?;
                tx.commit()?;
                commits.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        })
    };

    // Many concurrent requests, each a short read directly in its task, once the writer runs.
    while commits.load(Ordering::Relaxed) < 5 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let started = Instant::now();
    let tasks: Vec<_> = (0..REQUESTS as u64)
        .map(|id| {
            let db = Arc::clone(&db);
            tokio::spawn(async move {
                let begun = Instant::now();
                let consistent = handle(&db, id)?;
                Ok::<_, tabula::Error>((begun.elapsed(), consistent))
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(REQUESTS);
    let mut inconsistent = 0;
    for task in tasks {
        let (latency, consistent) = task.await.expect("the request task")?;
        latencies.push(latency);
        inconsistent += usize::from(!consistent);
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let pct = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    println!(
        "requests: {REQUESTS} ok, {inconsistent} inconsistent, {:.0} requests/s, p50 {:?}, p99 {:?}",
        REQUESTS as f64 / elapsed.as_secs_f64(),
        pct(50),
        pct(99)
    );

    // A session that keeps one snapshot across awaits: an owned read transaction is `'static`
    // and `Send`, so the future holding it can move between worker threads.
    let session = db.read_owned()?;
    let before = session.get::<Accounts>(&1)?;
    tokio::time::sleep(Duration::from_millis(20)).await; // the writer commits meanwhile
    let after = session.get::<Accounts>(&1)?;
    println!("session: same snapshot across awaits: {}", before == after);
    drop(session);

    // A long scan blocks for as long as it reads: move it to a blocking thread. The owned
    // iterator takes its transaction along, and reads ahead in small batches.
    let events = db.read_owned()?.into_range::<Events>(..);
    let scanned = tokio::task::spawn_blocking(move || events.count())
        .await
        .expect("the scan");

    drop(stop_writer);
    writer.await.expect("the writer")?;
    let committed = commits.load(Ordering::Relaxed);
    println!("writer: {committed} commits; scan saw {scanned} events");

    // The cache followed every commit without polling the table.
    cache_done.store(true, Ordering::Relaxed);
    let cache = cache.await.expect("the cache")?;
    let truth = Cache::load(&db)?;
    println!(
        "cache: in sync with the database: {} ({} changes applied, {} resyncs)",
        cache.balances == truth.balances,
        cache.applied,
        cache.resyncs
    );

    // Operations: flush, back up while serving, report space and readers.
    db.sync()?;
    let backup = dir.path().join("backup");
    db.copy_to(&backup, true)?;
    let copy = tabula::open::<Bank>(&backup, Options::new())?;
    let total: u64 = copy
        .read()?
        .iter::<Accounts>()
        .map(|e| e.map(|(_, a)| a.balance))
        .sum::<tabula::Result<u64>>()?;
    println!(
        "backup: {} accounts, total balance {total}",
        copy.read()?.len::<Accounts>()?
    );
    let stat = db.stat()?;
    for table in &stat.tables {
        println!(
            "table {}: {} entries, {} bytes",
            table.name, table.entries, table.bytes
        );
    }
    println!(
        "file: {} bytes, {} in use, {} free",
        stat.file_bytes, stat.used_bytes, stat.free_bytes
    );
    let lagging = db.readers()?.iter().filter(|r| r.lag > 0).count();
    println!("readers behind the latest commit: {lagging}");

    // Closing the database ends the feed: the counter saw every commit of the writer.
    drop(copy);
    let db = Arc::try_unwrap(db).expect("the last handle");
    drop(db);
    let fed = feed_counter.await.expect("the feed counter");
    println!("feed: {fed} commits of {committed} reported");
    Ok(())
}
