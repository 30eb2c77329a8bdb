//! Issue 26: big write transactions and many small commits.
//!
//! - Random inserts keep pages balanced by default (`Options::balance_pages`): libmdbx 0.14's
//!   own default splits a full page where the new entry goes and leaves leaves half full.
//! - `Db::write_nosync`: one commit without a flush in a durable database, made durable by the
//!   next flush; an ordinary transaction in the modes where weakening is not offered.
//! - The borrowed-bytes calls agree with their owned counterparts and with a model:
//!   `Tx::retain_bytes` (random ranges and predicates, plain and dupsort tables),
//!   `Tx::range_by`, and `Tx::append` / `Appender::append` of borrowed bytes.
//!
//! Random tests print their seed; `TABULA_SEED=<seed>` replays one.

#[path = "support/random.rs"]
mod random;
#[path = "support/tempdb.rs"]
mod tempdb;

use std::collections::BTreeMap;
use std::ops::Bound;

use tabula::{Options, Raw, Schema, SyncMode, Table};

use random::{Rng, seed};

#[derive(Table)]
#[table(key = Vec<u8>, value = Vec<u8>, codec = Raw)]
struct Pairs;

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, dupsort)]
struct Dups;

#[derive(Schema)]
struct App(Pairs, Dups);

/// Entries per leaf page after `n` random 24-byte keys with 150-byte values in one transaction.
fn entries_per_leaf(options: Options, n: u64) -> f64 {
    let (_dir, db) = tempdb::open_with::<App>(options);
    let mut rng = Rng::new(7);
    let mut tx = db.write().unwrap();
    for _ in 0..n {
        let key: Vec<u8> = (0..3).flat_map(|_| rng.next().to_le_bytes()).collect();
        tx.put_bytes::<Pairs>(&key, &[0xA5; 150]).unwrap();
    }
    tx.commit().unwrap();
    let st = db.read().unwrap().stat::<Pairs>().unwrap();
    st.entries as f64 / st.leaf_pages as f64
}

#[test]
fn random_inserts_keep_pages_balanced_by_default() {
    // 22 such entries fit a 4 KiB page. Split in the middle, random inserts leave leaves about
    // two thirds full (LMDB: 15 per leaf); split where the entry goes, about half (11.5).
    let balanced = entries_per_leaf(Options::new(), 40_000);
    let fewer_writes = entries_per_leaf(Options::new().balance_pages(false), 40_000);
    assert!(
        balanced >= 13.5,
        "the default should keep pages balanced: {balanced:.2} entries per leaf (libmdbx's own \
         default gives {fewer_writes:.2})"
    );
    assert!(
        fewer_writes < 12.5,
        "balance_pages(false) should be libmdbx's default split: {fewer_writes:.2} entries per leaf"
    );
}

#[test]
fn a_nosync_write_is_flushed_by_the_next_flushing_commit() {
    let (dir, db) = tempdb::open_with::<App>(Options::new());
    for k in 0..50u64 {
        let mut tx = db.write_nosync().unwrap();
        tx.put::<Dups>(&k, &vec![1; 100]).unwrap();
        tx.commit().unwrap();
    }
    let unsynced = db.info().unwrap().unsynced_bytes;
    assert!(
        unsynced > 0,
        "write_nosync commits in a durable database should stay unflushed, {unsynced} bytes are"
    );
    let mut tx = db.write().unwrap();
    tx.put::<Dups>(&99, &vec![2; 100]).unwrap();
    tx.commit().unwrap();
    assert_eq!(
        db.info().unwrap().unsynced_bytes,
        0,
        "an ordinary durable commit flushes what the nosync commits left"
    );
    assert_eq!(db.read().unwrap().len::<Dups>().unwrap(), 51);
    drop(db);
    let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
    assert_eq!(db.read().unwrap().len::<Dups>().unwrap(), 51);
}

#[test]
fn write_nosync_is_an_ordinary_write_in_the_other_modes() {
    for mode in [SyncMode::NoMetaSync, SyncMode::SafeNoSync] {
        let unsynced = |nosync: bool| {
            let (_dir, db) = tempdb::open_with::<App>(Options::new().sync(mode));
            for k in 0..20u64 {
                let mut tx = if nosync {
                    db.write_nosync().unwrap()
                } else {
                    db.write().unwrap()
                };
                tx.put::<Dups>(&k, &vec![3; 100]).unwrap();
                tx.commit().unwrap();
            }
            db.info().unwrap().unsynced_bytes
        };
        assert_eq!(
            unsynced(true),
            unsynced(false),
            "{mode:?}: write_nosync should leave exactly what write leaves unflushed"
        );
    }
}

/// A random bound over keys `0..40` (encoded as one byte each, so that bounds between stored
/// keys occur too).
fn bound(rng: &mut Rng) -> Bound<Vec<u8>> {
    let k = vec![rng.below(40) as u8];
    match rng.below(3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(k),
        _ => Bound::Excluded(k),
    }
}

fn in_range(k: &[u8], lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>) -> bool {
    (match lower {
        Bound::Unbounded => true,
        Bound::Included(l) => k >= l.as_slice(),
        Bound::Excluded(l) => k > l.as_slice(),
    }) && (match upper {
        Bound::Unbounded => true,
        Bound::Included(u) => k <= u.as_slice(),
        Bound::Excluded(u) => k < u.as_slice(),
    })
}

#[test]
fn retain_bytes_and_range_by_agree_with_a_model() {
    let seed = seed("retain_bytes_and_range_by_agree_with_a_model");
    let mut rng = Rng::new(seed);
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    for round in 0..60 {
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let mut tx = db.write().unwrap();
        tx.clear::<Pairs>().unwrap();
        for _ in 0..rng.below(30) {
            // Even keys only, so odd bounds fall between entries.
            let k = vec![(rng.below(20) * 2) as u8];
            let v = vec![rng.below(256) as u8; 1 + rng.below(20) as usize];
            tx.put::<Pairs>(&k, &v).unwrap();
            model.insert(k, v);
        }
        let (lower, upper) = (bound(&mut rng), bound(&mut rng));
        // range with borrowed bounds walks what it does with owned ones.
        let borrowed = (
            lower.as_ref().map(Vec::as_slice),
            upper.as_ref().map(Vec::as_slice),
        );
        let by: Vec<(Vec<u8>, Vec<u8>)> = tx
            .range::<Pairs>(borrowed)
            .collect::<Result<_, _>>()
            .unwrap();
        let owned: Vec<(Vec<u8>, Vec<u8>)> = tx
            .range::<Pairs>((lower.clone(), upper.clone()))
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(by, owned, "round {round}: {lower:?}..{upper:?}");
        // retain_bytes over the range with a random predicate on the value's first byte.
        let parity = rng.below(2) as u8;
        let mut seen = Vec::new();
        let removed = tx
            .retain_bytes::<Pairs>((lower.clone(), upper.clone()), |k, v| {
                seen.push(k.to_vec());
                v[0] % 2 == parity
            })
            .unwrap();
        let want_seen: Vec<Vec<u8>> = model
            .keys()
            .filter(|k| in_range(k, &lower, &upper))
            .cloned()
            .collect();
        assert_eq!(
            seen, want_seen,
            "round {round}: keys judged in {lower:?}..{upper:?}"
        );
        let before = model.len();
        model.retain(|k, v| !in_range(k, &lower, &upper) || v[0] % 2 == parity);
        assert_eq!(
            removed as usize,
            before - model.len(),
            "round {round}: removed"
        );
        let left: Vec<(Vec<u8>, Vec<u8>)> = tx.iter::<Pairs>().collect::<Result<_, _>>().unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
        assert_eq!(left, want, "round {round}: what is left");
        tx.commit().unwrap();
    }
}

#[test]
fn retain_bytes_judges_dupsort_values_one_by_one() {
    let seed = seed("retain_bytes_judges_dupsort_values_one_by_one");
    let mut rng = Rng::new(seed);
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    let mut model: BTreeMap<(u64, Vec<u8>), ()> = BTreeMap::new();
    for _ in 0..400 {
        let k = rng.below(30);
        let v = vec![rng.below(256) as u8, rng.below(256) as u8];
        tx.put::<Dups>(&k, &v).unwrap();
        model.insert((k, v), ());
    }
    // Keys 5 (excluded) to 20 (included): drop odd first bytes.
    let removed = tx
        .retain_bytes::<Dups>((Bound::Excluded(5), Bound::Included(20)), |_, v| {
            v[0] % 2 == 0
        })
        .unwrap();
    let before = model.len();
    model.retain(|(k, v), _| !(*k > 5 && *k <= 20) || v[0] % 2 == 0);
    assert_eq!(removed as usize, before - model.len());
    let left: Vec<(u64, Vec<u8>)> = tx.iter::<Dups>().collect::<Result<_, _>>().unwrap();
    let want: Vec<(u64, Vec<u8>)> = model.into_keys().collect();
    assert_eq!(left, want);
}

#[test]
fn append_of_borrowed_bytes_appends_in_order_and_refuses_the_rest() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    {
        let mut ap = tx.appender::<Pairs>().unwrap();
        for k in 0..100u8 {
            ap.append(&[k, 0][..], &[k; 7][..]).unwrap();
        }
        let err = ap.append(&[50u8][..], &b"x"[..]).unwrap_err();
        assert!(
            matches!(err, tabula::Error::AppendOutOfOrder { .. }),
            "{err}"
        );
    }
    tx.append::<Pairs>(&[200u8][..], &b"last"[..]).unwrap();
    let err = tx.append::<Pairs>(&[1u8][..], &b"early"[..]).unwrap_err();
    assert!(
        matches!(err, tabula::Error::AppendOutOfOrder { .. }),
        "{err}"
    );
    let all: Vec<(Vec<u8>, Vec<u8>)> = tx.iter::<Pairs>().collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len(), 101);
    assert_eq!(all[42], (vec![42, 0], vec![42; 7]));
    assert_eq!(all[100], (vec![200], b"last".to_vec()));
}

/// Leaf pages left after 20,000 random inserts and a delete of about 70 % of them, each in one
/// transaction, with `options`.
fn leaves_after_deletes(options: Options) -> u64 {
    let (_dir, db) = tempdb::open_with::<App>(options);
    let mut rng = Rng::new(11);
    let keys: Vec<Vec<u8>> = (0..20_000)
        .map(|_| (0..3).flat_map(|_| rng.next().to_le_bytes()).collect())
        .collect();
    let mut tx = db.write().unwrap();
    for k in &keys {
        tx.put_bytes::<Pairs>(k, &[7; 150]).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = db.write().unwrap();
    for k in keys.iter().filter(|_| rng.below(10) < 7) {
        tx.delete::<Pairs>(&k[..]).unwrap();
    }
    tx.commit().unwrap();
    db.read().unwrap().stat::<Pairs>().unwrap().leaf_pages
}

#[test]
fn a_higher_merge_threshold_leaves_fewer_pages_after_deletes() {
    let leaves = |percent: u8| leaves_after_deletes(Options::new().merge_threshold(percent));
    let (sparse, dense) = (leaves(13), leaves(50));
    assert!(
        sparse * 10 > dense * 12,
        "merging below half full should leave far fewer leaves than below 13 %: {dense} vs {sparse}"
    );
}

#[test]
fn the_default_merge_threshold_is_lmdbs_quarter() {
    let default = leaves_after_deletes(Options::new());
    let quarter = leaves_after_deletes(Options::new().merge_threshold(25));
    let third = leaves_after_deletes(Options::new().merge_threshold(33));
    assert_eq!(default, quarter, "the default should merge below 25 % full");
    assert!(
        default > third,
        "merging below a third should leave fewer leaves than the default: {third} vs {default}"
    );
}
