//! How often a write of an indexed table decodes a row: at most once per row it reads, for all
//! of the table's indexes together, and not at all for a row a typed write holds. The table's
//! codec counts its decodes (per thread, so the count is this test's own).

#[path = "support/tempdb.rs"]
mod tempdb;

use std::cell::Cell;

use tabula::{DecodeError, Descriptor, EncodeError, Index, Options, Schema, Table, Value};

thread_local! {
    static DECODES: Cell<usize> = const { Cell::new(0) };
}

/// The decodes since the last call.
fn decodes() -> usize {
    DECODES.with(|d| d.replace(0))
}

/// A row as three little-endian integers; counts its decodes.
struct Counted;

impl Value for Counted {
    type Item = (u32, u32, u64);
    const DESCRIPTOR: Descriptor = Descriptor::Custom("counted-v1");

    fn encode<'a>(
        &(a, b, c): &'a (u32, u32, u64),
        scratch: &'a mut Vec<u8>,
    ) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        scratch.extend_from_slice(&a.to_le_bytes());
        scratch.extend_from_slice(&b.to_le_bytes());
        scratch.extend_from_slice(&c.to_le_bytes());
        Ok(scratch)
    }

    fn decode(bytes: &[u8]) -> Result<(u32, u32, u64), DecodeError> {
        DECODES.with(|d| d.set(d.get() + 1));
        let b: [u8; 16] = bytes
            .try_into()
            .map_err(|_| DecodeError::new("a row is 16 bytes"))?;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        Ok((
            u32_at(0),
            u32_at(4),
            u64::from_le_bytes(b[8..].try_into().unwrap()),
        ))
    }
}

#[derive(Table)]
#[table(key = u64, value = (u32, u32, u64), codec = Counted, indexed)]
struct Rows;

#[derive(Index)]
#[index(on = Rows, key = u32, by = first)]
struct ByFirst;

#[derive(Index)]
#[index(on = Rows, key = u32, by = second)]
struct BySecond;

#[derive(Index)]
#[index(on = Rows, key = u64, unique, by = third)]
struct ByThird;

fn first(_: &u64, r: &(u32, u32, u64)) -> u32 {
    r.0
}
fn second(_: &u64, r: &(u32, u32, u64)) -> u32 {
    r.1
}
fn third(_: &u64, r: &(u32, u32, u64)) -> u64 {
    r.2
}

#[derive(Schema)]
struct App(Rows, ByFirst, BySecond, ByThird);

fn encoded(row: (u32, u32, u64)) -> Vec<u8> {
    let mut scratch = Vec::new();
    Counted::encode(&row, &mut scratch).unwrap().to_vec()
}

#[test]
fn a_write_decodes_each_row_it_reads_once_for_all_indexes() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    decodes();

    // A typed write holds its row: nothing to decode (there is no old row).
    tx.put::<Rows>(&1, &(10, 20, 30)).unwrap();
    assert_eq!(decodes(), 0, "put of a new row");
    // Over a row: the old one, once, for the three indexes.
    tx.put::<Rows>(&1, &(11, 20, 31)).unwrap();
    assert_eq!(decodes(), 1, "put over a row");
    // Bytes: the old row and the new bytes, once each.
    tx.put_bytes::<Rows>(&1u64.to_be_bytes(), &encoded((12, 21, 32)))
        .unwrap();
    assert_eq!(decodes(), 2, "put_bytes over a row");
    assert!(tx.delete::<Rows>(&1).unwrap());
    assert_eq!(decodes(), 1, "delete");

    // The write cursor and the appender: the same.
    {
        let mut cursor = tx.cursor_mut::<Rows>().unwrap();
        cursor.upsert(&2, &(1, 2, 3)).unwrap();
        assert_eq!(decodes(), 0, "cursor upsert of a new row");
        cursor.upsert(&2, &(1, 5, 6)).unwrap();
        assert_eq!(decodes(), 1, "cursor upsert over a row");
        cursor.delete_current().unwrap();
        assert_eq!(decodes(), 1, "cursor delete_current");
    }
    {
        let mut appender = tx.appender::<Rows>().unwrap();
        appender.append(&3, &(7, 8, 9)).unwrap();
        assert_eq!(decodes(), 0, "append");
    }

    // And the indexes are what the rows say.
    assert_eq!(tx.index_count::<ByFirst>(&7).unwrap(), 1);
    assert_eq!(tx.get_unique::<ByThird>(&9).unwrap(), Some((3, (7, 8, 9))));
    assert_eq!(tx.index_count::<BySecond>(&5).unwrap(), 0);
    tx.commit().unwrap();
    assert!(db.check_indexes(10).unwrap().is_ok());
}
