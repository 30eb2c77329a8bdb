//! Watching committed changes in one process (`Db::subscribe`, `Db::watch`,
//! `Db::watch_prefix`): a model test of what each subscriber must see, and the bounds that keep a
//! slow subscriber from holding up commits or growing memory.
//!
//! The model test's seed is printed; `TABULA_SEED=<seed>` replays a run, `WATCH_ROUNDS=<n>`
//! changes its length (default 400 write transactions).

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tabula::{
    Change, Commit, CommitReceiver, Contains, Db, KeyReceiver, Options, Received, Schema, SyncMode,
    Table,
};

use random::{Rng, seed};

#[derive(Table)]
#[table(name = "nums", key = u16, value = u32)]
struct Nums;

#[derive(Table)]
#[table(name = "tags", key = u16, value = u16, dupsort)]
struct Tags;

#[derive(Table)]
#[table(name = "named", key = (String, u8), value = u32)]
struct Named;

/// Written, never watched by key.
#[derive(Table)]
#[table(name = "quiet", key = u16, value = u16)]
struct Quiet;

#[derive(Schema)]
struct Watched(Nums, Tags, Named, Quiet);

fn options() -> Options {
    Options::new().sync(SyncMode::SafeNoSync)
}

/// A change as the model expects a watcher to receive it.
#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Nums(u64, char, u16),
    NumsCleared(u64),
    Tags(u64, char, u16, Option<u16>),
    Named(u64, char, (String, u8)),
}

fn ev_nums(c: Change<Nums>) -> Ev {
    match c {
        Change::Put { txn, key, value } => {
            assert_eq!(value, None, "a plain table's change carries no value");
            Ev::Nums(txn, 'p', key)
        }
        Change::Delete { txn, key, value } => {
            assert_eq!(value, None);
            Ev::Nums(txn, 'd', key)
        }
        Change::Cleared { txn } => Ev::NumsCleared(txn),
    }
}

fn ev_tags(c: Change<Tags>) -> Ev {
    match c {
        Change::Put { txn, key, value } => Ev::Tags(txn, 'p', key, value),
        Change::Delete { txn, key, value } => Ev::Tags(txn, 'd', key, value),
        Change::Cleared { txn } => panic!("tags are never cleared (txn {txn})"),
    }
}

fn ev_named(c: Change<Named>) -> Ev {
    match c {
        Change::Put { txn, key, .. } => Ev::Named(txn, 'p', key),
        Change::Delete { txn, key, .. } => Ev::Named(txn, 'd', key),
        Change::Cleared { txn } => panic!("named is never cleared (txn {txn})"),
    }
}

/// What the database holds, in one transaction scope, and what that scope changed.
#[derive(Clone, Default)]
struct Scope {
    nums: BTreeMap<u16, u32>,
    tags: BTreeSet<(u16, u16)>,
    named: BTreeMap<(String, u8), u32>,
    quiet: BTreeMap<u16, u16>,
    /// Tables libmdbx marks written (a change took effect), by schema ID.
    dirty: BTreeSet<usize>,
    /// The changes recorded, in order.
    log: Vec<Ev>,
}

fn id<T: Table>() -> usize
where
    Watched: Contains<T>,
{
    <Watched as Contains<T>>::ID
}

const NAMES: [&str; 5] = ["a", "ab", "b", "", "ba"];

/// Runs random writes in `tx` and mirrors them in `m`; nests (and aborts some nested scopes)
/// while `depth` allows.
fn random_writes(
    tx: &mut tabula::RwTx<'_, Watched>,
    m: &mut Scope,
    txn: u64,
    rng: &mut Rng,
    depth: u32,
) {
    let ops = 1 + rng.below(6);
    for _ in 0..ops {
        match rng.below(15) {
            0 | 1 => {
                let (k, v) = (rng.below(40) as u16, rng.below(4) as u32);
                tx.put::<Nums>(&k, &v).unwrap();
                if m.nums.insert(k, v) != Some(v) {
                    m.dirty.insert(id::<Nums>());
                }
                m.log.push(Ev::Nums(txn, 'p', k));
            }
            2 => {
                let (k, v) = (rng.below(40) as u16, rng.below(4) as u32);
                let r = tx.insert::<Nums>(&k, &v);
                if let std::collections::btree_map::Entry::Vacant(e) = m.nums.entry(k) {
                    r.unwrap();
                    e.insert(v);
                    m.dirty.insert(id::<Nums>());
                    m.log.push(Ev::Nums(txn, 'p', k));
                } else {
                    assert!(matches!(r, Err(tabula::Error::KeyExists { .. })), "{r:?}");
                }
            }
            3 => {
                let k = rng.below(40) as u16;
                let found = tx.delete::<Nums>(&k).unwrap();
                assert_eq!(found, m.nums.remove(&k).is_some());
                if found {
                    m.dirty.insert(id::<Nums>());
                    m.log.push(Ev::Nums(txn, 'd', k));
                }
            }
            4 => {
                // Through a write cursor: an upsert, then delete the first entry.
                let (k, v) = (rng.below(40) as u16, rng.below(4) as u32);
                let mut c = tx.cursor_mut::<Nums>().unwrap();
                c.upsert(&k, &v).unwrap();
                if m.nums.insert(k, v) != Some(v) {
                    m.dirty.insert(id::<Nums>());
                }
                m.log.push(Ev::Nums(txn, 'p', k));
                let first = c.first().unwrap().map(|(k, _)| k);
                assert_eq!(first, m.nums.keys().next().copied());
                if let Some(first) = first {
                    c.delete_current().unwrap();
                    m.nums.remove(&first);
                    m.dirty.insert(id::<Nums>());
                    m.log.push(Ev::Nums(txn, 'd', first));
                }
            }
            5 => {
                let a = rng.below(40) as u16;
                let b = a + rng.below(8) as u16;
                let n = tx.delete_range::<Nums>(a..b).unwrap();
                let gone: Vec<u16> = m.nums.range(a..b).map(|(k, _)| *k).collect();
                assert_eq!(n, gone.len() as u64);
                for k in gone {
                    m.nums.remove(&k);
                    m.dirty.insert(id::<Nums>());
                    m.log.push(Ev::Nums(txn, 'd', k));
                }
            }
            6 if rng.chance(25) => {
                tx.clear::<Nums>().unwrap();
                if !m.nums.is_empty() {
                    m.dirty.insert(id::<Nums>());
                }
                m.nums.clear();
                m.log.push(Ev::NumsCleared(txn));
            }
            7 | 8 => {
                let (k, v) = (rng.below(30) as u16, rng.below(5) as u16);
                tx.put::<Tags>(&k, &v).unwrap();
                if m.tags.insert((k, v)) {
                    m.dirty.insert(id::<Tags>());
                }
                m.log.push(Ev::Tags(txn, 'p', k, Some(v)));
            }
            9 => {
                let (k, v) = (rng.below(30) as u16, rng.below(5) as u16);
                let found = tx.delete_dup::<Tags>(&k, &v).unwrap();
                assert_eq!(found, m.tags.remove(&(k, v)));
                if found {
                    m.dirty.insert(id::<Tags>());
                    m.log.push(Ev::Tags(txn, 'd', k, Some(v)));
                }
            }
            10 => {
                let k = rng.below(30) as u16;
                let found = tx.delete::<Tags>(&k).unwrap();
                let had: Vec<_> = m.tags.range((k, 0)..=(k, u16::MAX)).copied().collect();
                assert_eq!(found, !had.is_empty());
                for p in had {
                    m.tags.remove(&p);
                }
                if found {
                    m.dirty.insert(id::<Tags>());
                    m.log.push(Ev::Tags(txn, 'd', k, None));
                }
            }
            11 => {
                let key = (
                    NAMES[rng.below(NAMES.len() as u64) as usize].to_string(),
                    rng.below(3) as u8,
                );
                let v = rng.below(3) as u32;
                tx.put::<Named>(&key, &v).unwrap();
                if m.named.insert(key.clone(), v) != Some(v) {
                    m.dirty.insert(id::<Named>());
                }
                m.log.push(Ev::Named(txn, 'p', key));
            }
            12 => {
                let key = (
                    NAMES[rng.below(NAMES.len() as u64) as usize].to_string(),
                    rng.below(3) as u8,
                );
                let found = tx.delete::<Named>(&key).unwrap();
                assert_eq!(found, m.named.remove(&key).is_some());
                if found {
                    m.dirty.insert(id::<Named>());
                    m.log.push(Ev::Named(txn, 'd', key));
                }
            }
            13 => {
                let (k, v) = (rng.below(10) as u16, rng.below(3) as u16);
                tx.put::<Quiet>(&k, &v).unwrap();
                if m.quiet.insert(k, v) != Some(v) {
                    m.dirty.insert(id::<Quiet>());
                }
            }
            _ if depth > 0 => {
                let keep = rng.chance(50);
                let mut child = m.clone();
                let r = tx.nested(|tx| {
                    random_writes(tx, &mut child, txn, rng, depth - 1);
                    if keep {
                        Ok(())
                    } else {
                        Err(tabula::Error::ReadOnly {
                            op: "abort the nested transaction",
                            path: Default::default(),
                        })
                    }
                });
                assert_eq!(r.is_ok(), keep);
                if keep {
                    *m = child;
                }
            }
            _ => {}
        }
    }
}

fn drain_feed(feed: &CommitReceiver) -> Vec<Commit> {
    let mut out = Vec::new();
    while let Some(r) = feed.try_recv() {
        match r {
            Received::Event(c) => out.push(c),
            Received::Lagged { .. } => panic!("the model's feed has room for every event"),
        }
    }
    out
}

fn drain<T: Table>(keys: &KeyReceiver<T>, f: fn(Change<T>) -> Ev) -> Vec<Ev> {
    let mut out = Vec::new();
    while let Some(r) = keys.try_recv() {
        match r.unwrap() {
            Received::Event(c) => out.push(f(c)),
            Received::Lagged { .. } => panic!("the model's watchers have room for every event"),
        }
    }
    out
}

#[test]
fn model_every_subscriber_sees_exactly_the_committed_changes_it_asked_for() {
    let seed = seed("watch model");
    let rounds: u64 = std::env::var("WATCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let mut rng = Rng::new(seed);
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let big = 1 << 20;
    let feed = db.subscribe(big);
    let nums_all = db.watch::<Nums>(.., big);
    let nums_mid = db.watch::<Nums>(10..30, big);
    let nums_top = db.watch::<Nums>(
        (std::ops::Bound::Excluded(35), std::ops::Bound::Unbounded),
        big,
    );
    let tags_low = db.watch::<Tags>(..=20, big);
    let named_a = db.watch_prefix::<Named>(&"a".to_string(), big);
    let named_all = db.watch::<Named>(.., big);

    let mut state = Scope::default();
    let (mut want_feed, mut want_all, mut want_mid, mut want_top) =
        (vec![], vec![], vec![], vec![]);
    let (mut want_tags, mut want_a, mut want_named) = (vec![], vec![], vec![]);
    let mut committed = 0;
    for _ in 0..rounds {
        let mut tx = db.write().unwrap();
        let txn = tx.id();
        let mut m = Scope {
            dirty: BTreeSet::new(),
            log: Vec::new(),
            ..state.clone()
        };
        random_writes(&mut tx, &mut m, txn, &mut rng, 2);
        if rng.chance(15) {
            tx.abort();
            continue;
        }
        tx.commit().unwrap();
        if m.dirty.is_empty() {
            // Nothing changed: no new transaction, nothing reported.
            assert_eq!(db.read().unwrap().id(), txn - 1);
            state = Scope { log: vec![], ..m };
            continue;
        }
        committed += 1;
        assert_eq!(db.read().unwrap().id(), txn);
        want_feed.push((txn, m.dirty.iter().copied().collect::<Vec<_>>()));
        for e in &m.log {
            match e {
                Ev::Nums(_, _, k) => {
                    want_all.push(e.clone());
                    if (10..30).contains(k) {
                        want_mid.push(e.clone());
                    }
                    if *k > 35 {
                        want_top.push(e.clone());
                    }
                }
                Ev::NumsCleared(_) => {
                    want_all.push(e.clone());
                    want_mid.push(e.clone());
                    want_top.push(e.clone());
                }
                Ev::Tags(_, _, k, _) => {
                    if *k <= 20 {
                        want_tags.push(e.clone());
                    }
                }
                Ev::Named(_, _, (s, _)) => {
                    want_named.push(e.clone());
                    // A prefix is the key's first part, whole: `"a"`, not `"ab"`.
                    if s == "a" {
                        want_a.push(e.clone());
                    }
                }
            }
        }
        state = Scope { log: vec![], ..m };
    }
    eprintln!("{committed} of {rounds} transactions committed a change");
    assert!(
        committed > rounds / 4,
        "the model barely committed: {committed}"
    );

    let got: Vec<(u64, Vec<usize>)> = drain_feed(&feed)
        .into_iter()
        .map(|c| (c.id, c.tables.ids().collect()))
        .collect();
    assert_eq!(got, want_feed, "seed {seed}: the commit feed");
    assert!(
        got.windows(2).all(|w| w[0].0 < w[1].0),
        "seed {seed}: ids rise"
    );
    assert_eq!(drain(&nums_all, ev_nums), want_all, "seed {seed}: nums ..");
    assert_eq!(
        drain(&nums_mid, ev_nums),
        want_mid,
        "seed {seed}: nums 10..30"
    );
    assert_eq!(
        drain(&nums_top, ev_nums),
        want_top,
        "seed {seed}: nums (35.."
    );
    assert_eq!(
        drain(&tags_low, ev_tags),
        want_tags,
        "seed {seed}: tags ..=20"
    );
    assert_eq!(
        drain(&named_a, ev_named),
        want_a,
        "seed {seed}: named prefix a"
    );
    assert_eq!(
        drain(&named_all, ev_named),
        want_named,
        "seed {seed}: named .."
    );

    // The model agrees with the database.
    let tx = db.read().unwrap();
    let nums: BTreeMap<u16, u32> = tx.iter::<Nums>().collect::<Result<_, _>>().unwrap();
    assert_eq!(nums, state.nums, "seed {seed}");
    let tags: BTreeSet<(u16, u16)> = tx.iter::<Tags>().collect::<Result<_, _>>().unwrap();
    assert_eq!(tags, state.tags, "seed {seed}");
}

#[test]
fn a_subscriber_that_stops_reading_never_holds_up_commits_and_stays_bounded() {
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    const CAP: usize = 64;
    const COMMITS: u64 = 5_000;
    let feed = db.subscribe(CAP);
    let keys = db.watch::<Nums>(.., CAP);
    let mut last = 0;
    for i in 0..COMMITS {
        let mut tx = db.write().unwrap();
        last = tx.id();
        tx.put::<Nums>(&((i % 1000) as u16), &(i as u32)).unwrap();
        tx.put::<Quiet>(&1, &(i as u16)).unwrap();
        tx.commit().unwrap();
        // The bound holds at every moment, not just at the end.
        assert!(feed.queued().0 <= CAP);
        assert!(keys.queued().0 <= CAP);
    }
    assert_eq!(feed.queued(), (CAP, CAP));
    assert_eq!(keys.queued(), (CAP, CAP));
    // The queued events first, in order, then the report of what was dropped.
    let first = last - COMMITS + 1;
    for n in 0..CAP as u64 {
        match feed.recv() {
            Some(Received::Event(c)) => assert_eq!(c.id, first + n),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        feed.recv(),
        Some(Received::Lagged {
            missed: COMMITS - CAP as u64,
            latest: last,
        })
    );
    assert!(feed.try_recv().is_none());
    for _ in 0..CAP {
        assert!(matches!(keys.recv(), Some(Ok(Received::Event(_)))));
    }
    match keys.recv() {
        Some(Ok(Received::Lagged { missed, latest })) => {
            assert_eq!((missed, latest), (COMMITS - CAP as u64, last));
        }
        other => panic!("{other:?}"),
    }
    // After the report, new events flow again.
    let mut tx = db.write().unwrap();
    let next = tx.id();
    tx.put::<Nums>(&7, &7).unwrap();
    tx.commit().unwrap();
    assert!(matches!(feed.recv(), Some(Received::Event(c)) if c.id == next));
    assert!(
        matches!(keys.recv(), Some(Ok(Received::Event(Change::Put { txn, key: 7, .. }))) if txn == next)
    );
}

#[test]
fn dropped_receivers_unsubscribe_and_a_closed_database_ends_the_feed() {
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let feed = db.subscribe(8);
    let gone = db.subscribe(8);
    let keys = db.watch::<Nums>(.., 8);
    drop(gone);
    let mut tx = db.write().unwrap();
    tx.put::<Nums>(&1, &1).unwrap();
    tx.commit().unwrap();
    assert!(matches!(feed.try_recv(), Some(Received::Event(_))));
    let waiter = std::thread::spawn(move || (feed.recv(), keys.recv().is_some()));
    std::thread::sleep(Duration::from_millis(20));
    drop(db);
    let (last, key_event_left) = waiter.join().unwrap();
    assert_eq!(last, None, "a closed database ends the feed");
    assert!(key_event_left, "the queued key change is still received");
}

#[test]
fn commits_from_several_threads_arrive_in_commit_order() {
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let db = std::sync::Arc::new(db);
    let feed = db.subscribe(100_000);
    let threads: Vec<_> = (0..4u16)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..300u16 {
                    let mut tx = db.write().unwrap();
                    tx.put::<Nums>(&(t * 1000 + i), &1).unwrap();
                    tx.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let ids: Vec<u64> = drain_feed(&feed).into_iter().map(|c| c.id).collect();
    assert_eq!(ids.len(), 1200);
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "in order, no gap: {ids:?}"
    );
}

#[test]
fn a_bulk_load_reports_each_batch_and_its_keys() {
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let feed = db.subscribe(1000);
    let keys = db.watch::<Nums>(100..110, 1000);
    let report = db
        .bulk_loader::<Nums>()
        .batch_entries(100)
        .load((0..1000u16).map(|k| (k, k as u32)))
        .unwrap();
    assert_eq!(report.batches, 10);
    let commits = drain_feed(&feed);
    assert_eq!(commits.len(), 10);
    assert!(
        commits
            .iter()
            .all(|c| c.tables.contains::<Watched, Nums>() && c.tables.len() == 1)
    );
    assert!(commits.windows(2).all(|w| w[0].id < w[1].id));
    let got = drain(&keys, ev_nums);
    let want: Vec<Ev> = (100..110)
        .map(|k| Ev::Nums(commits[1].id, 'p', k))
        .collect();
    assert_eq!(got, want);
    assert_eq!(commits.last().unwrap().id, db.read().unwrap().id());
}

#[test]
fn appenders_and_retain_bytes_are_recorded() {
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let keys = db.watch::<Nums>(.., 100);
    let mut tx = db.write().unwrap();
    let txn = tx.id();
    let mut a = tx.appender::<Nums>().unwrap();
    for k in 0..5u16 {
        a.append(&k, &(k as u32)).unwrap();
    }
    drop(a);
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    let txn2 = tx.id();
    // Small `u32` values are stored (bincode varint) as one byte: keep the even ones.
    assert_eq!(
        tx.retain_bytes::<Nums>(.., |_, v| v[0] % 2 == 0).unwrap(),
        2
    );
    tx.commit().unwrap();
    let mut want: Vec<Ev> = (0..5).map(|k| Ev::Nums(txn, 'p', k)).collect();
    want.extend([Ev::Nums(txn2, 'd', 1), Ev::Nums(txn2, 'd', 3)]);
    assert_eq!(drain(&keys, ev_nums), want);
}

#[test]
fn no_subscriber_means_no_recording() {
    // A watcher that subscribes while a transaction is open sees no partial transaction: keys
    // are recorded only for transactions that began after it subscribed.
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let mut tx = db.write().unwrap();
    tx.put::<Nums>(&1, &1).unwrap();
    let keys = db.watch::<Nums>(.., 10);
    tx.put::<Nums>(&2, &2).unwrap();
    tx.commit().unwrap();
    assert!(keys.try_recv().is_none());
    let mut tx = db.write().unwrap();
    tx.put::<Nums>(&3, &3).unwrap();
    tx.commit().unwrap();
    assert!(matches!(
        keys.try_recv(),
        Some(Ok(Received::Event(Change::Put { key: 3, .. })))
    ));
}

/// The receivers as `futures_core::Stream`s: the commit wakes the task waiting on the stream,
/// and a closed database ends it.
#[cfg(feature = "stream")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receivers_are_streams_woken_by_commits() {
    use futures_core::Stream;
    use std::pin::Pin;

    /// The stream's next item; fails the test when no wake-up comes within 10 s.
    async fn next<S: Stream + Unpin>(s: &mut S) -> Option<S::Item> {
        let item = std::future::poll_fn(|cx| Pin::new(&mut *s).poll_next(cx));
        tokio::time::timeout(Duration::from_secs(10), item)
            .await
            .expect("the stream was woken within 10 s")
    }

    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let db = std::sync::Arc::new(db);
    let mut feed = db.subscribe(1000);
    let mut keys = db.watch::<Nums>(5..10, 1000);
    let writer = {
        let db = db.clone();
        tokio::task::spawn_blocking(move || {
            let mut ids = Vec::new();
            for k in 0..20u16 {
                // Let the stream go idle between commits, so wake-ups are what moves it.
                std::thread::sleep(Duration::from_millis(1));
                let mut tx = db.write().unwrap();
                ids.push(tx.id());
                tx.put::<Nums>(&k, &1).unwrap();
                tx.commit().unwrap();
            }
            ids
        })
    };
    let mut seen = Vec::new();
    while seen.len() < 20 {
        match next(&mut feed).await {
            Some(Received::Event(c)) => seen.push(c.id),
            other => panic!("{other:?}"),
        }
    }
    let ids = writer.await.unwrap();
    assert_eq!(seen, ids);
    let mut changed = Vec::new();
    for _ in 5..10 {
        match next(&mut keys).await {
            Some(Ok(Received::Event(Change::Put { key, .. }))) => changed.push(key),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(changed, [5, 6, 7, 8, 9]);
    drop(std::sync::Arc::try_unwrap(db).ok().unwrap());
    assert!(next(&mut feed).await.is_none(), "the database closed");
    assert!(next(&mut keys).await.is_none());
}

#[test]
fn one_large_transaction_keeps_a_watcher_bounded() {
    // 100,000 changes in one transaction, a watcher of capacity 64 (and one over a narrow
    // range): the watcher holds 64 changes and counts the rest; memory does not grow with the
    // transaction (the unit test `pending_changes_are_bounded_by_the_watchers_capacity` checks
    // what is held while the transaction is open).
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let keys = db.watch::<Nums>(.., 64);
    let narrow = db.watch::<Nums>(100..103, 64);
    let mut tx = db.write().unwrap();
    let txn = tx.id();
    for i in 0..100_000u32 {
        tx.put::<Nums>(&((i % 60_000) as u16), &i).unwrap();
    }
    tx.commit().unwrap();
    assert_eq!(keys.queued(), (64, 64));
    for k in 0..64u16 {
        assert!(
            matches!(keys.recv(), Some(Ok(Received::Event(Change::Put { key, .. }))) if key == k)
        );
    }
    match keys.recv() {
        Some(Ok(Received::Lagged { missed, latest })) => {
            assert_eq!((missed, latest), (100_000 - 64, txn))
        }
        other => panic!("{other:?}"),
    }
    // Keys 100..103 were put twice each (i and i + 60,000).
    let got: Vec<Ev> = drain(&narrow, ev_nums);
    let want: Vec<Ev> = [100, 101, 102, 100, 101, 102]
        .map(|k| Ev::Nums(txn, 'p', k))
        .into();
    assert_eq!(got, want);
}

/// What a receiver gave, reduced to (transaction, key) for the order checks; `None`: nothing.
type Got = Option<Received<(u64, Option<u16>)>>;

fn from_feed(r: Option<Received<Commit>>) -> Got {
    r.map(|r| match r {
        Received::Event(c) => Received::Event((c.id, None)),
        Received::Lagged { missed, latest } => Received::Lagged { missed, latest },
    })
}

fn from_keys(r: Option<tabula::Result<Received<Change<Nums>>>>) -> Got {
    r.map(|r| match r.unwrap() {
        Received::Event(c) => match ev_nums(c) {
            Ev::Nums(txn, 'p', key) => Received::Event((txn, Some(key))),
            other => panic!("only puts are made here: {other:?}"),
        },
        Received::Lagged { missed, latest } => Received::Lagged { missed, latest },
    })
}

/// Puts `key` in a transaction of its own; returns its ID.
fn commit_put(db: &Db<Watched>, key: u16) -> u64 {
    let mut tx = db.write().unwrap();
    let id = tx.id();
    tx.put::<Nums>(&key, &1).unwrap();
    tx.commit().unwrap();
    id
}

/// Receivers of capacity 1: commit A is queued, B is dropped, the receiver takes A, then C
/// commits. The receiver gets the report of B before C: events after a report are newer than
/// its `latest`. `feed` and `keys` take the next item without waiting.
fn lag_report_then_newer_events(
    db: &Db<Watched>,
    mut feed: impl FnMut() -> Got,
    mut keys: impl FnMut() -> Got,
) {
    let a = commit_put(db, 1);
    let b = commit_put(db, 2);
    assert_eq!(feed(), Some(Received::Event((a, None))));
    assert_eq!(keys(), Some(Received::Event((a, Some(1)))));
    let c = commit_put(db, 3);
    let lagged = Some(Received::Lagged {
        missed: 1,
        latest: b,
    });
    let got = ([feed(), feed(), feed()], [keys(), keys(), keys()]);
    let want = (
        [lagged.clone(), Some(Received::Event((c, None))), None],
        [lagged, Some(Received::Event((c, Some(3)))), None],
    );
    assert_eq!(got, want, "(feed, key watcher)");
}

#[test]
fn a_lag_report_comes_before_newer_events() {
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let feed = db.subscribe(1);
    let keys = db.watch::<Nums>(.., 1);
    lag_report_then_newer_events(
        &db,
        || from_feed(feed.try_recv()),
        || from_keys(keys.try_recv()),
    );
}

/// [`a_lag_report_comes_before_newer_events`] through the receivers' `Stream`s.
#[cfg(feature = "stream")]
#[test]
fn a_lag_report_comes_before_newer_events_in_a_stream() {
    use futures_core::Stream;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    fn poll<S: Stream + Unpin>(s: &mut S) -> Option<S::Item> {
        match Pin::new(s).poll_next(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(item) => item,
            Poll::Pending => None,
        }
    }

    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let mut feed = db.subscribe(1);
    let mut keys = db.watch::<Nums>(.., 1);
    lag_report_then_newer_events(
        &db,
        || from_feed(poll(&mut feed)),
        || from_keys(poll(&mut keys)),
    );
}

#[test]
fn a_receiver_made_during_a_write_transaction_reports_the_next_one_first() {
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let mut tx = db.write().unwrap();
    tx.put::<Nums>(&1, &1).unwrap();
    let feed = db.subscribe(8);
    let keys = db.watch::<Nums>(.., 8);
    tx.put::<Nums>(&2, &2).unwrap();
    tx.commit().unwrap();
    let next = commit_put(&db, 3);
    let got = (
        [from_feed(feed.try_recv()), from_feed(feed.try_recv())],
        [from_keys(keys.try_recv()), from_keys(keys.try_recv())],
    );
    let want = (
        [Some(Received::Event((next, None))), None],
        [Some(Received::Event((next, Some(3)))), None],
    );
    assert_eq!(got, want, "(feed, key watcher)");

    // The same with receivers already there: those report the open transaction, the new ones
    // the next.
    let mut tx = db.write().unwrap();
    let open_id = tx.id();
    tx.put::<Nums>(&4, &4).unwrap();
    let (late_feed, late_keys) = (db.subscribe(8), db.watch::<Nums>(.., 8));
    tx.put::<Nums>(&5, &5).unwrap();
    tx.commit().unwrap();
    let next = commit_put(&db, 6);
    let got: Vec<Got> = [&feed, &late_feed]
        .iter()
        .flat_map(|f| [from_feed(f.try_recv()), from_feed(f.try_recv())])
        .collect();
    let want = [
        Some(Received::Event((open_id, None))),
        Some(Received::Event((next, None))),
        Some(Received::Event((next, None))),
        None,
    ];
    assert_eq!(got, want, "(the feed made before, the feed made during)");
    let got: Vec<Got> = [&keys, &late_keys]
        .iter()
        .flat_map(|k| [from_keys(k.try_recv()), from_keys(k.try_recv())])
        .collect();
    let want = [
        Some(Received::Event((open_id, Some(4)))),
        Some(Received::Event((open_id, Some(5)))),
        Some(Received::Event((next, Some(6)))),
        None,
    ];
    assert_eq!(
        got, want,
        "(the watcher made before, the watcher made during)"
    );
}

#[test]
fn a_receiver_made_during_a_bulk_load_reports_the_batches_that_begin_after() {
    // A bulk load's batches are transactions, each beginning when the one before commits:
    // receivers made after the first batch committed report from the third on.
    let (_dir, db) = tempdb::open_with::<Watched>(options());
    let made = std::cell::RefCell::new(None);
    let report = db
        .bulk_loader::<Nums>()
        .batch_entries(10)
        .on_batch(|r| {
            if r.batches == 1 {
                *made.borrow_mut() = Some((db.subscribe(8), db.watch::<Nums>(29..=30, 8)));
            }
        })
        .load((10..50u16).map(|k| (k, 1)))
        .unwrap();
    assert_eq!(report.batches, 4);
    let (feed, keys) = made.into_inner().unwrap();
    let ids: Vec<u64> = drain_feed(&feed).into_iter().map(|c| c.id).collect();
    let last = db.read().unwrap().id();
    // Key 29 is in batch 2, key 30 in batch 3.
    let keys_got = drain(&keys, ev_nums);
    assert_eq!(
        (ids, keys_got),
        (vec![last - 1, last], vec![Ev::Nums(last - 1, 'p', 30)]),
        "(feed, key watcher): batches 3 and 4"
    );
}
