//! The cursor a transaction keeps for its range reads (`engine::KeptCursor`): an iterator's end
//! takes it still bound to the table its last walk was on and gives it back when it is dropped,
//! so range and prefix reads stop binding and unbinding a cursor per call. These tests hold
//! every read that may reuse it to a `BTreeMap` model: ranges, prefixes and gets interleaved on
//! one read transaction (several iterators alive at once, both ends, tables switched), across
//! parked and reset snapshots of pooled and owned transactions, in a write transaction
//! interleaved with its own writes (puts, deletes, clears, write-cursor walks), and across
//! nested transactions that commit, fail or panic.
//!
//! The random runs print their seed; `TABULA_SEED=<seed>` replays a run.

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeMap;
use std::ops::Bound;

use tabula::{Db, Handle, Raw, Reads, Schema, Table};

use random::{Rng, seed};

#[derive(Table)]
#[table(name = "plain", key = u64, value = String)]
struct Plain;

#[derive(Table)]
#[table(name = "ints", key = u32, value = Vec<u8>, codec = Raw, integer_key)]
struct Ints;

#[derive(Table)]
#[table(name = "pairs", key = (String, u64), value = u64)]
struct Pairs;

#[derive(Schema)]
struct App(Plain, Ints, Pairs);

const OWNERS: [&str; 4] = ["ann", "bob", "cy", "dee"];

/// A nested transaction's own reason to roll back.
#[derive(Debug)]
enum Fail {
    Tabula(#[allow(dead_code)] tabula::Error),
    Rollback,
}

impl From<tabula::Error> for Fail {
    fn from(e: tabula::Error) -> Self {
        Fail::Tabula(e)
    }
}

/// What the three tables hold.
#[derive(Clone, Default, Debug, PartialEq)]
struct Model {
    plain: BTreeMap<u64, String>,
    ints: BTreeMap<u32, Vec<u8>>,
    pairs: BTreeMap<(String, u64), u64>,
}

fn bound(rng: &mut Rng, max: u64) -> Bound<u64> {
    match rng.below(4) {
        0 => Bound::Unbounded,
        1 => Bound::Excluded(rng.below(max)),
        _ => Bound::Included(rng.below(max)),
    }
}

/// One random write, applied to the transaction and the model.
fn write(rng: &mut Rng, tx: &mut tabula::RwTx<'_, App>, m: &mut Model) {
    match rng.below(10) {
        0..=3 => {
            let k = rng.below(64);
            let v = format!("v{}", rng.below(1000));
            tx.put::<Plain>(&k, &v).unwrap();
            m.plain.insert(k, v);
        }
        4 => {
            let k = rng.below(64);
            assert_eq!(
                tx.delete::<Plain>(&k).unwrap(),
                m.plain.remove(&k).is_some()
            );
        }
        5 | 6 => {
            let k = rng.below(64) as u32;
            let len = 1 + rng.below(8) as usize;
            let v = rng.bytes(len);
            tx.put::<Ints>(&k, &v).unwrap();
            m.ints.insert(k, v);
        }
        7 => {
            let owner = OWNERS[rng.below(4) as usize];
            let n = rng.below(16);
            let v = rng.next();
            tx.put::<Pairs>(&(owner, n), &v).unwrap();
            m.pairs.insert((owner.to_string(), n), v);
        }
        8 => {
            // A write-cursor walk over a range of the table a kept cursor may be bound to.
            let (lo, hi) = (rng.below(64), rng.below(64));
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            let n = tx.delete_range::<Plain>(lo..hi).unwrap();
            let before = m.plain.len();
            m.plain.retain(|k, _| !(lo..hi).contains(k));
            assert_eq!(n as usize, before - m.plain.len());
        }
        _ => {
            if rng.chance(20) {
                tx.clear::<Ints>().unwrap();
                m.ints.clear();
            } else {
                let keep = rng.below(3);
                tx.retain::<Ints>(|k, _| u64::from(*k) % 3 != keep).unwrap();
                m.ints.retain(|k, _| u64::from(*k) % 3 != keep);
            }
        }
    }
}

/// A burst of random reads through `reads`, each checked against `m`: gets, ranges and
/// prefixes, some walked from both ends, some left half-walked, several alive at once.
fn reads<H: Handle<Schema = App>>(rng: &mut Rng, reads: &Reads<H>, m: &Model) {
    for _ in 0..1 + rng.below(12) {
        match rng.below(6) {
            0 => {
                let k = rng.below(70);
                assert_eq!(reads.get::<Plain>(&k).unwrap(), m.plain.get(&k).cloned());
            }
            1 => {
                let (lo, hi) = (bound(rng, 70), bound(rng, 70));
                let got: Vec<(u64, String)> =
                    reads.range::<Plain>((lo, hi)).map(Result::unwrap).collect();
                let want: Vec<(u64, String)> = if matches!((lo, hi), (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) if a > b)
                    || matches!((lo, hi), (Bound::Excluded(a), Bound::Excluded(b)) if a == b)
                {
                    Vec::new()
                } else {
                    m.plain
                        .range((lo, hi))
                        .map(|(k, v)| (*k, v.clone()))
                        .collect()
                };
                assert_eq!(got, want, "range {lo:?}..{hi:?}");
            }
            2 => {
                // Two walks alive at once, on two tables, from both ends, the first left
                // unfinished: each takes its own cursor; whichever is dropped first is kept.
                let lo = rng.below(70);
                let mut a = reads.range::<Plain>(lo..);
                let mut want_a = m.plain.range(lo..).map(|(k, v)| (*k, v.clone()));
                let lo32 = rng.below(70) as u32;
                let mut b = reads.range::<Ints>(lo32..);
                let mut want_b = m.ints.range(lo32..).map(|(k, v)| (*k, v.clone()));
                for _ in 0..rng.below(6) {
                    if rng.chance(30) {
                        assert_eq!(a.next_back().map(Result::unwrap), want_a.next_back());
                        assert_eq!(b.next_back().map(Result::unwrap), want_b.next_back());
                    } else {
                        assert_eq!(a.next().map(Result::unwrap), want_a.next());
                        assert_eq!(b.next().map(Result::unwrap), want_b.next());
                    }
                }
                if rng.chance(50) {
                    drop(a);
                    assert_eq!(
                        b.map(Result::unwrap).collect::<Vec<_>>(),
                        want_b.collect::<Vec<_>>()
                    );
                } else {
                    drop(b);
                    assert_eq!(
                        a.map(Result::unwrap).collect::<Vec<_>>(),
                        want_a.collect::<Vec<_>>()
                    );
                }
            }
            3 => {
                let owner = OWNERS[rng.below(4) as usize];
                let want: Vec<((String, u64), u64)> = m
                    .pairs
                    .iter()
                    .filter(|((o, _), _)| o == owner)
                    .map(|(k, v)| (k.clone(), *v))
                    .collect();
                let got = reads.prefix::<Pairs>(owner);
                let got: Vec<_> = if rng.chance(50) {
                    got.map(Result::unwrap).collect()
                } else {
                    let mut back: Vec<_> = got.rev().map(Result::unwrap).collect();
                    back.reverse();
                    back
                };
                assert_eq!(got, want, "prefix {owner}");
            }
            4 => {
                let got: Vec<(u32, Vec<u8>)> = reads.iter::<Ints>().map(Result::unwrap).collect();
                let want: Vec<(u32, Vec<u8>)> =
                    m.ints.iter().map(|(k, v)| (*k, v.clone())).collect();
                assert_eq!(got, want);
            }
            _ => {
                // A walk abandoned after its first entry: the next one on the same table must
                // start where it is placed, not where this one stopped.
                let lo = rng.below(70);
                let first = reads.range::<Plain>(lo..).next().map(Result::unwrap);
                assert_eq!(
                    first,
                    m.plain.range(lo..).next().map(|(k, v)| (*k, v.clone()))
                );
                let last = reads.range::<Plain>(..lo).next_back().map(Result::unwrap);
                assert_eq!(
                    last,
                    m.plain
                        .range(..lo)
                        .next_back()
                        .map(|(k, v)| (*k, v.clone()))
                );
            }
        }
    }
}

/// Fills the database with a first random state and returns its model.
fn fill(rng: &mut Rng, db: &Db<App>) -> Model {
    let mut m = Model::default();
    let mut tx = db.write().unwrap();
    for _ in 0..200 {
        write(rng, &mut tx, &mut m);
    }
    tx.commit().unwrap();
    m
}

#[test]
fn ranges_prefixes_and_gets_interleaved_on_one_read_transaction() {
    let mut rng = Rng::new(seed(
        "ranges_prefixes_and_gets_interleaved_on_one_read_transaction",
    ));
    let (_dir, db) = tempdb::open::<App>();
    let m = fill(&mut rng, &db);
    let tx = db.read().unwrap();
    for _ in 0..300 {
        reads(&mut rng, &tx, &m);
    }
}

/// Pooled read transactions park on their snapshot (or are reset, with
/// `reuse_read_snapshots(false)`) between requests, with commits in between: every request's
/// ranges see the latest commit, whatever cursor the previous request left behind.
#[test]
fn ranges_across_parked_and_reset_snapshots() {
    for reuse in [true, false] {
        let mut rng = Rng::new(seed("ranges_across_parked_and_reset_snapshots"));
        let (_dir, db) = tempdb::open_with::<App>(tempdb::options().reuse_read_snapshots(reuse));
        let db = std::sync::Arc::new(db);
        let mut m = fill(&mut rng, &db);
        for round in 0..60 {
            {
                let tx = db.read().unwrap();
                reads(&mut rng, &tx, &m);
                // An iterator still open when the transaction ends goes with it.
                let mut open = tx.range::<Plain>(..);
                let _ = open.next();
            }
            {
                // Two at once on one thread: one of them parks in the shared queue rather than
                // this thread's slot, and comes back from there after the next commit.
                let (a, b) = (db.read().unwrap(), db.read().unwrap());
                reads(&mut rng, &a, &m);
                reads(&mut rng, &b, &m);
                let _walking = (a.range::<Plain>(..), b.prefix::<Pairs>("bob"));
            }
            {
                let owned = db.read_owned().unwrap();
                reads(&mut rng, &owned, &m);
            }
            if round % 3 != 2 {
                let mut tx = db.write().unwrap();
                for _ in 0..1 + rng.below(20) {
                    write(&mut rng, &mut tx, &mut m);
                }
                tx.commit().unwrap();
            }
        }
        // Other threads take the pooled transactions (and whatever cursors they kept) too.
        std::thread::scope(|s| {
            for t in 0..3 {
                let (db, m) = (&db, &m);
                s.spawn(move || {
                    let mut rng = Rng::new(seed("ranges_across_parked_and_reset_snapshots") ^ t);
                    for _ in 0..30 {
                        reads(&mut rng, &db.read().unwrap(), m);
                    }
                });
            }
        });
    }
}

/// A write transaction's ranges see its own writes: reads, puts, deletes, clears and
/// write-cursor walks interleaved, the kept cursor bound to the table being written.
#[test]
fn ranges_in_a_write_transaction_see_its_own_writes() {
    let mut rng = Rng::new(seed("ranges_in_a_write_transaction_see_its_own_writes"));
    let (_dir, db) = tempdb::open::<App>();
    let mut m = fill(&mut rng, &db);
    let mut tx = db.write().unwrap();
    for _ in 0..400 {
        reads(&mut rng, &tx, &m);
        for _ in 0..rng.below(4) {
            write(&mut rng, &mut tx, &mut m);
        }
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    for _ in 0..50 {
        reads(&mut rng, &tx, &m);
    }
}

/// Nested transactions: the parent's kept cursor is not used inside the child (libmdbx would
/// refuse it), the child's is not left bound to it when it ends, and every scope's ranges see
/// exactly its writes — whether the child commits, fails or panics.
#[test]
fn ranges_across_nested_transactions() {
    let mut rng = Rng::new(seed("ranges_across_nested_transactions"));
    let (_dir, db) = tempdb::open::<App>();
    let mut m = fill(&mut rng, &db);
    let mut tx = db.write().unwrap();
    for round in 0..80 {
        reads(&mut rng, &tx, &m);
        write(&mut rng, &mut tx, &mut m);
        reads(&mut rng, &tx, &m);
        let mut inner = m.clone();
        let ending = rng.below(3);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tx.nested(|tx| -> Result<(), Fail> {
                reads(&mut rng, tx, &inner);
                for _ in 0..1 + rng.below(5) {
                    write(&mut rng, tx, &mut inner);
                    reads(&mut rng, tx, &inner);
                }
                if round % 4 == 0 {
                    // Two levels deep, always rolled back.
                    let deeper = inner.clone();
                    let r = tx.nested(|tx| -> Result<(), Fail> {
                        let mut deeper = deeper.clone();
                        write(&mut rng, tx, &mut deeper);
                        reads(&mut rng, tx, &deeper);
                        Err(Fail::Rollback)
                    });
                    assert!(matches!(r, Err(Fail::Rollback)));
                    reads(&mut rng, tx, &inner);
                }
                match ending {
                    0 => Ok(()),
                    1 => Err(Fail::Rollback),
                    _ => panic!("rolled back by a panic"),
                }
            })
        }));
        match (ending, outcome) {
            (0, Ok(Ok(()))) => m = inner,
            (1, Ok(Err(Fail::Rollback))) | (2, Err(_)) => {}
            (e, o) => panic!("ending {e}: {:?}", o.map(|r| r.is_ok())),
        }
        reads(&mut rng, &tx, &m);
    }
    tx.commit().unwrap();
    reads(&mut rng, &db.read().unwrap(), &m);
}

/// A stored value whose length prefix claims more bytes than it has is a decode error through
/// every in-line decode — `get`, an iterator's step from either end, a range reusing the kept
/// cursor — never an allocation of the claimed length or a read past the value; the entries
/// around it still read.
#[test]
fn a_length_prefix_beyond_the_value_is_an_error_on_every_read_path() {
    let (_dir, db) = tempdb::open::<App>();
    let mut tx = db.write().unwrap();
    tx.put::<Plain>(&1, &"one".to_string()).unwrap();
    // bincode 2: 251 then a u16 length (65,535), and two bytes; then a u64 length of 2^62.
    tx.put_bytes::<Plain>(&2u64.to_be_bytes(), &[251, 0xff, 0xff, b'a', b'b'])
        .unwrap();
    let mut huge = vec![253];
    huge.extend_from_slice(&(1u64 << 62).to_le_bytes());
    huge.extend_from_slice(b"xy");
    tx.put_bytes::<Plain>(&3u64.to_be_bytes(), &huge).unwrap();
    tx.put::<Plain>(&4, &"four".to_string()).unwrap();
    fn check<H: Handle<Schema = App>>(reads: &Reads<H>) {
        assert_eq!(reads.get::<Plain>(&1).unwrap().as_deref(), Some("one"));
        for k in [2u64, 3] {
            let e = reads.get::<Plain>(&k).unwrap_err();
            assert!(
                matches!(e, tabula::Error::Decode { table: "plain", .. }),
                "get {k}: {e}"
            );
        }
        for _ in 0..3 {
            let got: Vec<Result<u64, String>> = reads
                .range::<Plain>(1..)
                .map(|e| e.map(|(k, _)| k).map_err(|e| e.to_string()))
                .collect();
            assert_eq!(got.len(), 4);
            assert_eq!((got[0].clone(), got[3].clone()), (Ok(1), Ok(4)));
            assert!(got[1].as_ref().unwrap_err().contains("plain"), "{got:?}");
            assert!(got[2].is_err(), "{got:?}");
            let back: Vec<bool> = reads.range::<Plain>(..).rev().map(|e| e.is_ok()).collect();
            assert_eq!(back, [true, false, false, true]);
            let values: Vec<bool> = reads.iter::<Plain>().values().map(|e| e.is_ok()).collect();
            assert_eq!(values, [true, false, false, true]);
        }
    }
    check(&tx);
    tx.commit().unwrap();
    check(&db.read().unwrap());
}
