//! Dupsort tables: values in their type's order, subkeys, typed dup reads, write cursors.

use tabula::{Db, Error, Options, Schema, Table};

#[derive(Table)]
#[table(name = "numbers", key = u64, value = u64, dupsort)]
struct Numbers;

#[derive(Table)]
#[table(name = "words", key = u64, value = String, dupsort)]
struct Words;

#[derive(Table)]
#[table(name = "signed", key = u64, value = i64, dupsort)]
struct Signed;

#[derive(Schema)]
struct Dups(Numbers, Words, Signed);

fn open() -> (tempfile::TempDir, Db<Dups>) {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<Dups>(dir.path(), Options::new().max_size(1 << 30)).unwrap();
    (dir, db)
}

/// Regression (issue 12): dup values were stored as bincode, so they came back ordered by
/// little-endian varint bytes (5, 250, 256, 300, 251, ...), strings shortest first and signed
/// integers as 0, -1, 1, -300, 300.
#[test]
fn dup_values_come_back_in_the_value_types_order() {
    let (_d, db) = open();
    let mut tx = db.write().unwrap();
    let numbers = [300u64, 5, 256, 255, 70000, 251, 250, 1 << 40];
    for n in numbers {
        tx.put::<Numbers>(&1, &n).unwrap();
    }
    let words = ["pear", "fig", "apple", "banana", "kiwi"];
    for w in words {
        tx.put::<Words>(&1, &w.to_string()).unwrap();
    }
    for i in [300i64, -1, 0, 1, -300, i64::MIN, i64::MAX] {
        tx.put::<Signed>(&1, &i).unwrap();
    }
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let got: Vec<u64> = tx.dups::<Numbers>(&1).values().map(Result::unwrap).collect();
    let mut want = numbers.to_vec();
    want.sort();
    assert_eq!(got, want);
    let got: Vec<String> = tx.dups::<Words>(&1).values().map(Result::unwrap).collect();
    assert_eq!(got, ["apple", "banana", "fig", "kiwi", "pear"]);
    let got: Vec<i64> = tx.dups::<Signed>(&1).values().map(Result::unwrap).collect();
    assert_eq!(got, [i64::MIN, -300, -1, 0, 1, 300, i64::MAX]);
    // From the back too.
    let got: Vec<u64> = tx.dups::<Numbers>(&1).values().rev().map(Result::unwrap).collect();
    want.reverse();
    assert_eq!(got, want);
}

/// Regression (issue 12): appending rising values failed once their bincode bytes stopped
/// rising (255 is `fb ff 00`, 256 is `fb 00 01`).
#[test]
fn append_dup_takes_values_rising_in_their_own_order() {
    let (_d, db) = open();
    let mut tx = db.write().unwrap();
    for n in [1u64, 250, 251, 255, 256, 65_535, 65_536, 1 << 40] {
        tx.append_dup::<Numbers>(&2, &n).unwrap();
    }
    let mut appender = tx.appender::<Numbers>().unwrap();
    for n in [1u64, 255, 256, 70_000] {
        appender.append_dup(&3, &n).unwrap();
    }
    drop(appender);
    assert_eq!(tx.len::<Numbers>().unwrap(), 12);
}

/// Regression: `Appender::append_dup` accepted a pair equal to the last one (`Ok(())`, nothing
/// written) where `Tx::append_dup` refused it; both refuse it now.
#[test]
fn appender_and_tx_append_dup_both_refuse_an_equal_pair() {
    let (_d, db) = open();
    let mut tx = db.write().unwrap();
    tx.append_dup::<Numbers>(&1, &7).unwrap();
    let err = tx.append_dup::<Numbers>(&1, &7).unwrap_err();
    assert!(matches!(err, Error::AppendDupOutOfOrder { table: "numbers", .. }), "{err}");
    let mut appender = tx.appender::<Numbers>().unwrap();
    appender.append_dup(&2, &7).unwrap();
    let err = appender.append_dup(&2, &7).unwrap_err();
    assert!(matches!(err, Error::AppendDupOutOfOrder { table: "numbers", .. }), "{err}");
    // A single value under a key too (libmdbx keeps it outside a nested tree).
    appender.append_dup(&3, &1).unwrap();
    let err = appender.append_dup(&3, &1).unwrap_err();
    assert!(matches!(err, Error::AppendDupOutOfOrder { table: "numbers", .. }), "{err}");
    drop(appender);
    assert_eq!(tx.len::<Numbers>().unwrap(), 3);
}
