//! Tables with byte keys order and find their keys in byte order (`memcmp` of the common length,
//! then the shorter first: libmdbx's default order, which every other reader of the file uses).
//!
//! Tabula's libmdbx compares keys in its page searches with the branchy-search patch's
//! comparator (`crates/mdbx-sys/patches/libmdbx-0.14.4-branchy-search.md`): 8 bytes at a time as
//! big-endian words, then byte by byte, then the length. The keys here reach each of its paths — shorter than 8
//! bytes, exactly 8 (a `u64` key), longer with equal or different first words, prefixes of one
//! another, bytes at 0x00, 0x7f, 0x80 and 0xff — in a plain table and as the values of a
//! `dupsort` table (searched with the same comparator), and every read is checked against a
//! `BTreeMap`/`BTreeSet` model: the walk in order, a get of every key written and of as many
//! others, and the first entry at or after each of those.
//!
//! The keys are random; the test prints its seed and `TABULA_SEED=<seed>` replays a run.

#[path = "../../../tests/support/random.rs"]
mod random;
#[path = "../../../tests/support/tempdb.rs"]
mod tempdb;

use std::collections::{BTreeMap, BTreeSet};

use tabula::{Raw, Schema, Table};

use random::{Rng, seed};

#[derive(Table)]
#[table(name = "plain", key = Vec<u8>, value = Vec<u8>, codec = Raw)]
struct Plain;

#[derive(Table)]
#[table(name = "sets", key = u8, value = Vec<u8>, dupsort)]
struct Sets;

#[derive(Schema)]
struct App(Plain, Sets);

/// First words many keys share, so that comparisons go on past them.
const WORDS: [[u8; 8]; 4] = [
    [0, 0, 0, 0, 0, 0, 0, 1],
    [0x7f, 0x80, 0, 0xff, 1, 2, 3, 4],
    [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe],
    *b"key-0000",
];

fn key(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(6) {
        0 => 1 + rng.below(7),
        1 | 2 => 8,
        _ => 9 + rng.below(16),
    } as usize;
    let mut k: Vec<u8> = (0..len)
        .map(|_| [0, 0x7f, 0x80, 0xff, rng.next() as u8][rng.below(5) as usize])
        .collect();
    if len >= 8 && rng.chance(50) {
        k[..8].copy_from_slice(&WORDS[rng.below(4) as usize]);
    }
    k
}

#[test]
fn byte_keys_are_ordered_and_found_in_byte_order() {
    let mut rng = Rng::new(seed("byte_keys_are_ordered_and_found_in_byte_order"));
    let (_dir, db) = tempdb::open::<App>();
    let written: Vec<Vec<u8>> = (0..20_000).map(|_| key(&mut rng)).collect();
    let mut plain = BTreeMap::new();
    let mut sets: BTreeMap<u8, BTreeSet<Vec<u8>>> = BTreeMap::new();
    let mut tx = db.write().unwrap();
    for (i, k) in written.iter().enumerate() {
        tx.put::<Plain>(k, &i.to_be_bytes().to_vec()).unwrap();
        plain.insert(k.clone(), i.to_be_bytes().to_vec());
        let set = (i % 16) as u8;
        tx.put::<Sets>(&set, k).unwrap();
        sets.entry(set).or_default().insert(k.clone());
        if i % 3 == 0 && i > 0 {
            let gone = &written[i / 2];
            tx.delete::<Plain>(gone).unwrap();
            plain.remove(gone);
        }
    }
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    let walked: Vec<(Vec<u8>, Vec<u8>)> = tx.iter::<Plain>().map(Result::unwrap).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = plain.clone().into_iter().collect();
    assert_eq!(walked, want, "the walk");
    for (set, values) in &sets {
        let got: Vec<Vec<u8>> = tx.dups::<Sets>(set).values().map(Result::unwrap).collect();
        let want: Vec<Vec<u8>> = values.iter().cloned().collect();
        assert_eq!(got, want, "the values of set {set}");
    }

    let probes: Vec<Vec<u8>> = (0..written.len()).map(|_| key(&mut rng)).collect();
    for (i, probe) in written.iter().chain(&probes).enumerate() {
        assert_eq!(
            tx.get::<Plain>(probe).unwrap(),
            plain.get(probe).cloned(),
            "get of {probe:02x?}"
        );
        let first = tx
            .range::<Plain>(probe.clone()..)
            .next()
            .transpose()
            .unwrap();
        let want = plain
            .range(probe.clone()..)
            .next()
            .map(|(k, v)| (k.clone(), v.clone()));
        assert_eq!(first, want, "first at or after {probe:02x?}");
        let set = (i % 16) as u8;
        let got = tx.seek_dup::<Sets>(&set, probe).unwrap();
        let want = sets[&set].range(probe.clone()..).next().cloned();
        assert_eq!(
            got, want,
            "first value of set {set} at or after {probe:02x?}"
        );
    }
}
