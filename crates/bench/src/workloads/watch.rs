//! watch (issue 25): what watching committed changes costs the writer, and how soon a watcher
//! learns of a commit.
//!
//! **Cost rows** (µs per commit, `SyncMode::SafeNoSync` so the flush does not drown the
//! difference): one-entry write transactions on the `kv` table (`u64` keys, 64-byte raw values)
//! of a store loaded with `loaded` entries — `append_*` with rising keys after the loaded ones,
//! `upsert_*` with random keys over them — with no subscriber (`_none`), with one commit-feed
//! subscriber (`_feed`, `Db::subscribe`), with one key watcher on the written table over all
//! its keys (`_keys`, `Db::watch`) and with one watcher of the values written (`_values`,
//! `Db::watch_values`: each change carries its 64-byte value, which the drain checks against
//! what the commit wrote); a thread reads every event as it comes. Each row has its own
//! store; they are timed in interleaved rounds ([`crate::util::interleaved`]), the median round
//! reported. The `_none` rows are the before/after check that unwatched commits do not move.
//!
//! **Latency rows** (µs, p50 and p99 over `samples` commits spaced `spacing` apart so the
//! receiver is idle each time): `latency_feed_*` (a thread blocked in `CommitReceiver::recv`)
//! and `latency_keys_*` (`KeyReceiver::recv`), from `Commit::at` — stamped when libmdbx's
//! commit returned, just before the events are queued and `Tx::commit` returns — to the
//! receiving thread holding the event (wall clock); `latency_follow_*` (a follower *process*,
//! this binary run again with `TABULA_BENCH_FOLLOWER=<dir>`, polling with `Db::follow` at its
//! default 10 ms `max_wait`), from the writer's wall-clock time when `commit` returned to the
//! follower's when it saw the ID.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tabula::{Change, Db, Received, SyncMode};

use crate::report::{Unit, Workload, variant_wanted};
use crate::tables::{Kv, KvSchema};
use crate::util::{Pass, XorShift, interleaved, ns_per};

use super::{scratch_dir, tabula_options};

/// Sizes of the watch workload.
#[derive(Clone, Copy, Debug)]
pub struct WatchSizes {
    /// Entries loaded before the commits.
    pub loaded: u64,
    /// One-entry commits per row and round.
    pub commits: usize,
    /// Timed rounds (an untimed one comes first).
    pub rounds: usize,
    /// Commits timed for each latency row.
    pub samples: usize,
    /// The pause between two of those commits.
    pub spacing: Duration,
}

/// The environment variable that makes this binary the follower process of the latency rows.
pub const FOLLOWER_VAR: &str = "TABULA_BENCH_FOLLOWER";

const VALUE: [u8; 64] = [0x5a; 64];

fn open(dir: &std::path::Path) -> Db<KvSchema> {
    tabula::open::<KvSchema>(dir, tabula_options().sync(SyncMode::SafeNoSync)).expect("open")
}

fn load(db: &Db<KvSchema>, n: u64) {
    db.bulk_loader::<Kv>()
        .load((0..n).map(|k| (k, VALUE.to_vec())))
        .expect("load");
}

/// What listens on a store while its row is timed.
#[derive(Clone, Copy, PartialEq)]
enum Listener {
    None,
    Feed,
    Keys,
    Values,
}

/// A loaded store with its listener, and the thread that drains it.
struct Store {
    db: Arc<Db<KvSchema>>,
    next: u64,
    version: u64,
    rng: XorShift,
    _dir: tempfile::TempDir,
    drain: Option<std::thread::JoinHandle<u64>>,
}

impl Store {
    fn new(name: &str, loaded: u64, listener: Listener) -> Store {
        let dir = scratch_dir(name);
        let db = Arc::new(open(dir.path()));
        load(&db, loaded);
        let drain = match listener {
            Listener::None => None,
            Listener::Feed => {
                let feed = db.subscribe(tabula::DEFAULT_WATCH_CAPACITY);
                Some(std::thread::spawn(move || {
                    let mut n = 0;
                    while let Some(e) = feed.recv() {
                        n += matches!(e, Received::Event(_)) as u64;
                    }
                    n
                }))
            }
            Listener::Keys => {
                let keys = db.watch::<Kv>(.., tabula::DEFAULT_WATCH_CAPACITY);
                Some(std::thread::spawn(move || {
                    let mut n = 0;
                    while let Some(e) = keys.recv() {
                        n += matches!(e, Ok(Received::Event(_))) as u64;
                    }
                    n
                }))
            }
            Listener::Values => {
                let values = db.watch_values::<Kv>(.., tabula::DEFAULT_WATCH_CAPACITY);
                Some(std::thread::spawn(move || {
                    // Each change carries the value its commit wrote: the version in its first
                    // 8 bytes rises by one from commit to commit, the rest is `VALUE`'s.
                    let mut n = 0u64;
                    while let Some(e) = values.recv() {
                        let Ok(Received::Event(Change::Put { value: Some(v), .. })) = e else {
                            panic!("watch values: not a put with its value: {e:?}");
                        };
                        n += 1;
                        assert_eq!(v.len(), VALUE.len(), "watch values: the value's length");
                        assert_eq!(v[..8], n.to_le_bytes(), "watch values: the value written");
                        assert_eq!(v[8..], VALUE[8..], "watch values: the value written");
                    }
                    n
                }))
            }
        };
        Store {
            db,
            next: loaded,
            version: 0,
            rng: XorShift::new(0x9e37_79b9 ^ loaded),
            _dir: dir,
            drain,
        }
    }

    fn commits(&mut self, n: usize, append: bool, loaded: u64) {
        for _ in 0..n {
            let k = if append {
                self.next += 1;
                self.next
            } else {
                self.rng.next_u64() % loaded
            };
            // A value that differs from the stored one, so every commit changes something.
            self.version += 1;
            let mut value = VALUE;
            value[..8].copy_from_slice(&self.version.to_le_bytes());
            let mut tx = self.db.write().expect("write");
            tx.put::<Kv>(&k, &value[..]).expect("put");
            tx.commit().expect("commit");
        }
    }

    /// Closes the store; returns the events its listener received.
    fn close(self) -> u64 {
        let Store { db, drain, .. } = self;
        drop(Arc::into_inner(db).expect("the last handle"));
        drain.map_or(0, |d| d.join().expect("the drain thread"))
    }
}

/// Runs the watch workload.
pub fn run(sizes: WatchSizes) -> Workload {
    let mut w = Workload::new(
        "watch",
        format!(
            "watch: one-entry commits (SafeNoSync) over {} entries with no / a feed / a key \
             watcher / a watcher of values, µs per commit; latency commit→event over {} spaced commits",
            sizes.loaded, sizes.samples
        ),
        Unit::Us,
    );
    let loaded = sizes.loaded.max(1);
    for append in [true, false] {
        let kind = if append { "append" } else { "upsert" };
        let rows = [
            (format!("{kind}_none"), Listener::None),
            (format!("{kind}_feed"), Listener::Feed),
            (format!("{kind}_keys"), Listener::Keys),
            (format!("{kind}_values"), Listener::Values),
        ];
        let wanted: Vec<_> = rows.iter().filter(|(n, _)| variant_wanted(n)).collect();
        if wanted.is_empty() {
            continue;
        }
        let stores: Vec<std::cell::RefCell<Store>> = wanted
            .iter()
            .map(|(name, l)| std::cell::RefCell::new(Store::new(name, loaded, *l)))
            .collect();
        let mut passes: Vec<Pass<'_>> = wanted
            .iter()
            .zip(&stores)
            .map(|((name, _), store)| {
                let f: Box<dyn FnMut() -> Duration + '_> = Box::new(move || {
                    let t = Instant::now();
                    store.borrow_mut().commits(sizes.commits, append, loaded);
                    t.elapsed()
                });
                (name.clone(), f)
            })
            .collect();
        let times = interleaved(sizes.rounds, &mut passes);
        drop(passes);
        let per_row = (sizes.rounds.max(1) + 1) * sizes.commits;
        for (((name, listener), t), store) in wanted.iter().zip(times).zip(stores) {
            let received = store.into_inner().close();
            // Every commit reached the listener (its drain thread keeps up, or the figures
            // would measure a dropped-event path).
            if *listener != Listener::None {
                assert_eq!(received as usize, per_row, "{name}: events received");
            }
            let base = format!("{kind}_none");
            let base = (name.as_str() != base).then_some(base.as_str());
            w.add(name, || ns_per(t, sizes.commits) / 1000.0, base);
        }
    }
    latency_in_process(&mut w, sizes, Listener::Feed, "latency_feed");
    latency_in_process(&mut w, sizes, Listener::Keys, "latency_keys");
    latency_follow(&mut w, sizes);
    w
}

/// p50 and p99 of `samples`, in µs.
fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |p: usize| {
        samples[(samples.len() * p / 100).min(samples.len() - 1)].as_nanos() as f64 / 1000.0
    };
    (at(50), at(99))
}

fn latency_in_process(w: &mut Workload, sizes: WatchSizes, listener: Listener, name: &str) {
    let (p50, p99) = (format!("{name}_p50"), format!("{name}_p99"));
    if !variant_wanted(&p50) && !variant_wanted(&p99) {
        return;
    }
    let dir = scratch_dir(name);
    let db = open(dir.path());
    // The start of each sample: `Commit::at`, stamped when libmdbx's commit returned, before
    // the events are queued (for the key watcher, read from a feed the writer holds).
    let feed = db.subscribe(sizes.samples + 1);
    let (tx, rx) = mpsc::channel::<SystemTime>();
    let receiver = match listener {
        Listener::Feed => {
            let feed = db.subscribe(sizes.samples + 1);
            std::thread::spawn(move || {
                while let Some(Received::Event(_)) = feed.recv() {
                    if tx.send(SystemTime::now()).is_err() {
                        break;
                    }
                }
            })
        }
        _ => {
            let keys = db.watch::<Kv>(.., sizes.samples + 1);
            std::thread::spawn(move || {
                while let Some(Ok(Received::Event(_))) = keys.recv() {
                    if tx.send(SystemTime::now()).is_err() {
                        break;
                    }
                }
            })
        }
    };
    let mut samples = Vec::with_capacity(sizes.samples);
    for k in 0..sizes.samples as u64 {
        std::thread::sleep(sizes.spacing);
        let mut wtx = db.write().expect("write");
        wtx.put::<Kv>(&k, &VALUE[..]).expect("put");
        wtx.commit().expect("commit");
        let Some(Received::Event(commit)) = feed.try_recv() else {
            panic!("the commit's event is queued when `commit` returns");
        };
        let got = rx.recv().expect("the event");
        samples.push(got.duration_since(commit.at).unwrap_or_default());
    }
    drop(feed);
    drop(db);
    receiver.join().expect("the receiver");
    let (a, b) = percentiles(samples);
    w.add(&p50, || a, None);
    w.add(&p99, || b, None);
}

/// Wall-clock microseconds since the epoch (comparable between two processes on one machine).
fn wall_us() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_micros()
}

/// The follower process: follows the database at `dir` and prints `<id> <wall µs>` per commit
/// seen, until its stdin closes.
pub fn follower(dir: &std::path::Path) {
    let db = open(dir);
    let mut follower = db.follow().expect("follow");
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready {}", follower.last_id()).expect("stdout");
    out.flush().expect("stdout");
    // The writer closes our stdin when it is done.
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut sink = String::new();
        let _ = std::io::stdin().read_line(&mut sink);
        let _ = done_tx.send(());
    });
    while done_rx.try_recv().is_err() {
        if let Some(seen) = follower
            .next_commit_timeout(Duration::from_millis(50))
            .expect("follow")
        {
            let at = wall_us();
            writeln!(out, "{} {at}", seen.id).expect("stdout");
            out.flush().expect("stdout");
        }
    }
}

fn latency_follow(w: &mut Workload, sizes: WatchSizes) {
    let (p50, p99) = ("latency_follow_p50", "latency_follow_p99");
    if !variant_wanted(p50) && !variant_wanted(p99) {
        return;
    }
    let dir = scratch_dir("latency_follow");
    let db = open(dir.path());
    let mut child = Command::new(std::env::current_exe().expect("this binary"))
        .env(FOLLOWER_VAR, dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the follower process");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let ready = lines.next().expect("the follower starts").expect("a line");
    assert!(ready.starts_with("ready "), "{ready}");
    let mut samples = Vec::with_capacity(sizes.samples);
    for k in 0..sizes.samples as u64 {
        std::thread::sleep(sizes.spacing);
        let mut wtx = db.write().expect("write");
        let id = wtx.id();
        wtx.put::<Kv>(&k, &VALUE[..]).expect("put");
        wtx.commit().expect("commit");
        let returned = wall_us();
        let line = lines
            .next()
            .expect("the follower's report")
            .expect("a line");
        let (seen, at) = line.split_once(' ').expect("`<id> <µs>`");
        assert_eq!(
            seen.parse::<u64>().expect("an id"),
            id,
            "one look per spaced commit"
        );
        let at: u128 = at.parse().expect("µs");
        samples.push(Duration::from_micros(at.saturating_sub(returned) as u64));
    }
    drop(child.stdin.take()); // tells the follower to stop
    child.wait().expect("the follower exits");
    let (a, b) = percentiles(samples);
    w.add(p50, || a, None);
    w.add(p99, || b, None);
}
