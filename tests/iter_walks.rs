//! Iterators walked from both ends in random interleavings, against a `BTreeMap` model.
//!
//! `Iter` takes a short path for steps from the front once the walk is under way and nothing
//! was taken from the back; these tests hold it to the same answers as the general path: the
//! upper bound, the meeting point with a walk from the back, the end of the table, and plain,
//! `integer_key` and `dupsort` tables.
//!
//! The random walks print their seed; `TABULA_SEED=<seed>` replays a run.

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeMap;
use std::ops::Bound;

use tabula::{Raw, Schema, Table};

use random::{Rng, seed};

#[derive(Table)]
#[table(name = "plain", key = u64, value = u32)]
struct Plain;

#[derive(Table)]
#[table(name = "ints", key = u32, value = Vec<u8>, codec = Raw, integer_key)]
struct Ints;

#[derive(Table)]
#[table(name = "dups", key = u16, value = u32, dupsort)]
struct Dups;

#[derive(Schema)]
struct App(Plain, Ints, Dups);

/// A random bound below `max`, or none.
fn bound(rng: &mut Rng, max: u64) -> Bound<u64> {
    match rng.below(4) {
        0 => Bound::Unbounded,
        1 => Bound::Excluded(rng.below(max)),
        _ => Bound::Included(rng.below(max)),
    }
}

/// Walks `got` and the model's `want` with the same random sequence of front and back steps
/// and checks that they yield the same entries, then the same end from both sides.
fn same_walk<E: PartialEq + std::fmt::Debug>(
    rng: &mut Rng,
    what: &str,
    mut got: impl DoubleEndedIterator<Item = tabula::Result<E>>,
    mut want: impl DoubleEndedIterator<Item = E>,
) {
    // Mostly from the front, so that long runs of front steps (the short path) happen, with
    // a back step now and then.
    let back_odds = 1 + rng.below(6);
    let mut steps = Vec::new();
    loop {
        let back = rng.below(16) < back_odds;
        steps.push(if back { 'b' } else { 'f' });
        let (g, w) = if back {
            (got.next_back(), want.next_back())
        } else {
            (got.next(), want.next())
        };
        let g = g.transpose().unwrap();
        let steps_so_far: String = steps.iter().collect();
        assert_eq!(g, w, "{what}: steps {steps_so_far}");
        if w.is_none() {
            break;
        }
    }
    assert!(
        got.next().transpose().unwrap().is_none(),
        "{what}: front after the end"
    );
    assert!(
        got.next_back().transpose().unwrap().is_none(),
        "{what}: back after the end"
    );
}

fn in_range(k: u64, lo: Bound<u64>, hi: Bound<u64>) -> bool {
    (match lo {
        Bound::Unbounded => true,
        Bound::Included(l) => k >= l,
        Bound::Excluded(l) => k > l,
    }) && match hi {
        Bound::Unbounded => true,
        Bound::Included(h) => k <= h,
        Bound::Excluded(h) => k < h,
    }
}

#[test]
fn random_interleaved_walks_match_the_model() {
    let mut rng = Rng::new(seed("iter_walks"));
    for round in 0..12 {
        let (_dir, db) = tempdb::open::<App>();
        let mut plain = BTreeMap::new();
        let mut ints = BTreeMap::new();
        let mut dups = BTreeMap::<(u16, u32), ()>::new();
        let mut tx = db.write().unwrap();
        for _ in 0..rng.below(300) {
            let k = rng.below(400);
            let v = rng.next() as u32;
            tx.put::<Plain>(&k, &v).unwrap();
            plain.insert(k, v);
            // Integer keys cross byte boundaries so that their order differs from the bytes'.
            let ik = (rng.below(400) * 97) as u32;
            let iv = vec![rng.below(256) as u8; rng.below(4) as usize];
            tx.put::<Ints>(&ik, &iv).unwrap();
            ints.insert(ik, iv);
            let dk = rng.below(40) as u16;
            let dv = rng.below(1000) as u32;
            tx.put::<Dups>(&dk, &dv).unwrap();
            dups.insert((dk, dv), ());
        }
        tx.commit().unwrap();

        let tx = db.read().unwrap();
        for walk in 0..20 {
            let what = format!("round {round} walk {walk}");
            let (lo, hi) = (bound(&mut rng, 420), bound(&mut rng, 420));

            let model = plain
                .iter()
                .filter(|(k, _)| in_range(**k, lo, hi))
                .map(|(k, v)| (*k, *v));
            let range = (lo, hi);
            same_walk(
                &mut rng,
                &format!("{what} plain {range:?}"),
                tx.range::<Plain>(range),
                model,
            );

            let model = plain.iter().map(|(k, v)| (*k, *v));
            same_walk(
                &mut rng,
                &format!("{what} plain all"),
                tx.iter::<Plain>(),
                model,
            );

            let (ilo, ihi) = (lo.map(|b| (b * 97) as u32), hi.map(|b| (b * 97) as u32));
            let model = ints
                .iter()
                .filter(|(k, _)| in_range(u64::from(**k), ilo.map(u64::from), ihi.map(u64::from)))
                .map(|(k, v)| (*k, v.clone()));
            same_walk(
                &mut rng,
                &format!("{what} ints {:?}", (ilo, ihi)),
                tx.range::<Ints>((ilo, ihi)),
                model,
            );

            let (dlo, dhi) = (lo.map(|b| (b / 10) as u16), hi.map(|b| (b / 10) as u16));
            let model = dups
                .keys()
                .filter(|(k, _)| in_range(u64::from(*k), dlo.map(u64::from), dhi.map(u64::from)))
                .cloned();
            same_walk(
                &mut rng,
                &format!("{what} dups {:?}", (dlo, dhi)),
                tx.range::<Dups>((dlo, dhi)),
                model,
            );

            // The undecoded and partial forms share the same steps.
            let model = plain
                .iter()
                .filter(|(k, _)| in_range(**k, lo, hi))
                .map(|(k, _)| *k);
            same_walk(
                &mut rng,
                &format!("{what} plain keys {range:?}"),
                tx.range::<Plain>(range).keys(),
                model,
            );
        }
    }
}

#[test]
fn a_forward_scan_stops_at_the_upper_bound_and_stays_ended() {
    let (_dir, db) = tempdb::open::<App>();
    let mut tx = db.write().unwrap();
    for k in 0..100u64 {
        tx.put::<Plain>(&k, &(k as u32)).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let mut it = tx.range::<Plain>(10..20);
    let keys: Vec<u64> = it.by_ref().map(|e| e.unwrap().0).collect();
    assert_eq!(keys, (10..20).collect::<Vec<_>>());
    assert!(
        it.next().is_none(),
        "a finished walk yields nothing more from the front"
    );
    assert!(it.next_back().is_none(), "nor from the back");
    let keys: Vec<u64> = tx.range::<Plain>(..=49).map(|e| e.unwrap().0).collect();
    assert_eq!(keys, (0..50).collect::<Vec<_>>());
    let keys: Vec<u64> = tx.iter::<Plain>().map(|e| e.unwrap().0).collect();
    assert_eq!(keys, (0..100).collect::<Vec<_>>());
}

#[test]
fn front_and_back_walks_meet_after_a_long_front_run() {
    let (_dir, db) = tempdb::open::<App>();
    let mut tx = db.write().unwrap();
    for k in 0..50u64 {
        tx.put::<Plain>(&k, &(k as u32)).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let mut it = tx.iter::<Plain>();
    for k in 0..30 {
        assert_eq!(it.next().unwrap().unwrap().0, k);
    }
    // A step from the back after many from the front, then the front runs into it.
    assert_eq!(it.next_back().unwrap().unwrap().0, 49);
    for k in 30..49 {
        assert_eq!(it.next().unwrap().unwrap().0, k);
    }
    assert!(
        it.next().is_none(),
        "the front stops at the back's last entry"
    );
    assert!(it.next_back().is_none());
}
