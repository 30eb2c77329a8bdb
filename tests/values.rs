//! Values without copies (borrowed and lazy reads, `Pod` values), values written straight into
//! the page (`put_reserve`, codecs that know their length), on real libmdbx files.

#[path = "support/tempdb.rs"]
mod tempdb;

use tabula::zerocopy::byteorder::{LittleEndian, U32, U64};
use tabula::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};
use tabula::{
    DecodeError, Descriptor, EncodeError, Error, Options, Pod, Raw, Schema, Table, Value,
};

#[derive(Debug, Clone, PartialEq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[zerocopy(crate = "tabula::zerocopy")]
#[repr(C)]
struct Account {
    nonce: U64<LittleEndian>,
    code: U32<LittleEndian>,
    balance: [u8; 32],
}

fn account(n: u64) -> Account {
    Account {
        nonce: U64::new(n),
        code: U32::new(n as u32 ^ 0xdead),
        balance: [n as u8; 32],
    }
}

#[derive(Table)]
#[table(key = u64, value = Account, codec = Pod<Account>)]
struct Accounts;

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Table)]
#[table(key = u64, value = String)]
struct Names;

/// A point as two little-endian `u32`s: a codec that knows its length, so `put` writes it into
/// the page. Its `encode` fails, so a write that went through it would be seen.
struct Point;

impl Value for Point {
    type Item = (u32, u32);
    const DESCRIPTOR: Descriptor = Descriptor::Custom("point-v1");

    fn encode<'a>(_: &'a (u32, u32), _: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        Err(EncodeError::new(
            "encode is not used when the length is known",
        ))
    }

    fn decode(bytes: &[u8]) -> Result<(u32, u32), DecodeError> {
        let b: [u8; 8] = bytes
            .try_into()
            .map_err(|_| DecodeError::new("a point is 8 bytes"))?;
        let [x, y] = [&b[..4], &b[4..]].map(|h| u32::from_le_bytes(h.try_into().unwrap()));
        Ok((x, y))
    }

    fn encoded_len(_: &(u32, u32)) -> Option<usize> {
        Some(8)
    }

    fn encode_into(&(x, y): &(u32, u32), out: &mut [u8]) -> Result<(), EncodeError> {
        if x == u32::MAX {
            return Err(EncodeError::new("x = u32::MAX is not a point"));
        }
        out[..4].copy_from_slice(&x.to_le_bytes());
        out[4..].copy_from_slice(&y.to_le_bytes());
        Ok(())
    }
}

#[derive(Table)]
#[table(key = u64, value = (u32, u32), codec = Point)]
struct Points;

#[derive(Schema)]
struct App(Accounts, Blobs, Names, Points);

/// `get_ref` on a `Pod` table is a view of the stored bytes: the same address `get_bytes`
/// gives, whatever the alignment there, and equal to what was written.
#[test]
fn get_ref_views_pod_values_in_the_page_without_copying() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    for n in 0..500u64 {
        tx.put::<Accounts>(&n, &account(n)).unwrap();
    }
    // Within the write transaction too (dirty pages).
    let view = tx.get_ref::<Accounts>(&7).unwrap().unwrap();
    assert_eq!(view, &account(7));
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    let mut offsets = std::collections::BTreeSet::new();
    for n in 0..500u64 {
        let view: &Account = tx.get_ref::<Accounts>(&n).unwrap().unwrap();
        let bytes = tx.get_bytes::<Accounts>(&n).unwrap().unwrap();
        assert!(std::ptr::eq(
            (view as *const Account).cast::<u8>(),
            bytes.as_ptr()
        ));
        offsets.insert(bytes.as_ptr() as usize % 8);
        assert_eq!(view, &account(n));
        assert_eq!(tx.get::<Accounts>(&n).unwrap(), Some(account(n)));
    }
    assert!(offsets.len() > 1 || !offsets.contains(&0), "{offsets:?}");
    assert!(tx.get_ref::<Accounts>(&500).unwrap().is_none());
    // Raw values are the stored bytes.
    drop(tx);
    let mut tx = db.write().unwrap();
    tx.put::<Blobs>(&1, &b"abc".to_vec()).unwrap();
    let stored: &[u8] = tx.get_ref::<Blobs>(&1).unwrap().unwrap();
    assert_eq!(stored, b"abc");
}

/// A stored value of the wrong size is a decode error naming the table and the key, through
/// every borrowed path; never a panic or a view past the value.
#[test]
fn a_pod_value_of_the_wrong_size_is_a_decode_error_naming_the_table_and_key() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Accounts>(&1, &account(1)).unwrap();
    tx.put_bytes::<Accounts>(&2u64.to_be_bytes(), &[0; 43])
        .unwrap();
    tx.put::<Accounts>(&3, &account(3)).unwrap();
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    let check = |e: Error| match e {
        Error::Decode {
            table, key, source, ..
        } => {
            assert_eq!(table, "Accounts");
            assert_eq!(key.to_string(), "2", "typed: a `u64` key");
            assert!(source.message().contains("44 bytes"), "{source}");
            assert!(source.message().contains("found 43"), "{source}");
        }
        other => panic!("{other}"),
    };
    check(tx.get_ref::<Accounts>(&2).unwrap_err());
    check(tx.get::<Accounts>(&2).unwrap_err());
    check(
        tx.get_lazy::<Accounts>(&2)
            .unwrap()
            .unwrap()
            .decode_ref()
            .unwrap_err(),
    );
    let entries: Vec<_> = tx.iter::<Accounts>().borrowed().collect();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].as_ref().unwrap(), &(1, &account(1)));
    check(entries.into_iter().nth(1).unwrap().unwrap_err());
    // The iteration goes on past it, from both ends.
    let back: Vec<u64> = tx
        .iter::<Accounts>()
        .borrowed()
        .rev()
        .filter_map(|e| e.ok().map(|(k, _)| k))
        .collect();
    assert_eq!(back, [3, 1]);
}

/// `Iter::lazy` decodes only what is asked: a damaged value is reported when, and only when,
/// it is decoded, and every entry's bytes are there without decoding.
#[test]
fn lazy_values_are_decoded_only_when_asked() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    for n in 0..100u64 {
        tx.put::<Names>(&n, &format!("name {n}")).unwrap();
    }
    // Damaged: claims 9 bytes, has none.
    tx.put_bytes::<Names>(&50u64.to_be_bytes(), &[9]).unwrap();
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    let mut sizes = 0;
    for entry in tx.iter::<Names>().lazy() {
        let (key, value) = entry.expect("no decode happens");
        sizes += value.bytes().len();
        if key % 10 == 5 && key != 50 {
            assert_eq!(value.decode().unwrap(), format!("name {key}"));
        }
    }
    assert_eq!(
        sizes,
        1 + (0..100)
            .filter(|&n| n != 50)
            .map(|n| 1 + format!("name {n}").len())
            .sum::<usize>()
    );
    let damaged = tx.get_lazy::<Names>(&50).unwrap().unwrap();
    assert!(matches!(
        damaged.decode(),
        Err(Error::Decode { table: "Names", .. })
    ));
    // The lazy value names the key it was read under.
    let Err(Error::Decode { key, .. }) = damaged.decode() else {
        unreachable!()
    };
    assert_eq!(key.to_string(), "50", "typed: a `u64` key");
    // From the back, a range, and the value outlives the iterator (it borrows the txn).
    let last = tx
        .range::<Names>(10..20)
        .lazy()
        .next_back()
        .unwrap()
        .unwrap();
    assert_eq!(last.0, 19);
    assert_eq!(last.1.decode().unwrap(), "name 19");
    assert!(tx.get_lazy::<Names>(&100).unwrap().is_none());
}

/// `put_reserve` writes values of every size (inline, overflow pages, several MiB) straight
/// into the page, sequentially or at any offset; they read back before and after commit, and
/// the closure's result comes back.
#[test]
fn put_reserve_writes_values_of_every_size_into_the_page() {
    use std::io::Write;
    for write_map in [false, true] {
        let (dir, db) = tempdb::open_with::<App>(Options::new().write_map(write_map));
        let sizes = [0usize, 1, 100, 2000, 5000, 70_000, 3 << 20];
        let fill = |n: usize| (0..n).map(|i| (i * 7 + n) as u8).collect::<Vec<u8>>();
        let mut tx = db.write().unwrap();
        for (i, &n) in sizes.iter().enumerate() {
            let expect = fill(n);
            let (a, b) = expect.split_at(n / 3);
            let got = tx
                .put_reserve::<Blobs, _>(&(i as u64), n, |room| {
                    assert_eq!((room.len(), room.position()), (n, 0));
                    room.write_all(a).unwrap();
                    room.write_all(b).unwrap();
                    room.position() * 2
                })
                .unwrap();
            assert_eq!(got, n * 2);
            let at_random = tx
                .put_reserve::<Blobs, _>(&(100 + i as u64), n, |room| {
                    let bytes = room.zeroed();
                    assert!(bytes.iter().all(|&b| b == 0), "zeroed");
                    for j in (0..n).rev() {
                        bytes[j] = expect[j];
                    }
                })
                .map(|()| 1);
            assert_eq!(at_random.unwrap(), 1);
            for key in [i as u64, 100 + i as u64] {
                assert_eq!(tx.get_bytes::<Blobs>(&key).unwrap(), Some(&expect[..]));
            }
        }
        tx.commit().unwrap();
        drop(db);
        let db = tabula::open::<App>(dir.path(), Options::new()).unwrap();
        let tx = db.read().unwrap();
        for (i, &n) in sizes.iter().enumerate() {
            for key in [i as u64, 100 + i as u64] {
                assert_eq!(
                    tx.get::<Blobs>(&key).unwrap(),
                    Some(fill(n)),
                    "size {n}, write_map {write_map}"
                );
            }
        }
        assert_eq!(tx.len::<Blobs>().unwrap(), 2 * sizes.len() as u64);
        assert!(db.check().unwrap().is_ok(), "write_map {write_map}");
    }
}

/// What the closure leaves unwritten is stored as zeros, never as what the page held before
/// (a value replaced in place, a page reused after a delete); writing past the room is an
/// error of the writer and keeps what fit.
#[test]
fn put_reserve_stores_unwritten_bytes_as_zeros() {
    use std::io::Write;
    for write_map in [false, true] {
        let (_dir, db) = tempdb::open_with::<App>(Options::new().write_map(write_map));
        let mut tx = db.write().unwrap();
        for (key, n) in [(1u64, 40usize), (2, 5000), (3, 300_000)] {
            tx.put::<Blobs>(&key, &vec![0xff; n]).unwrap();
        }
        tx.commit().unwrap();
        let mut tx = db.write().unwrap();
        tx.delete::<Blobs>(&3).unwrap();
        for (key, n) in [(1u64, 40usize), (2, 5000), (3, 300_000), (4, 300_000)] {
            let full = tx
                .put_reserve::<Blobs, _>(&key, n, |room| {
                    room.write_all(b"head").unwrap();
                    room.write_all(&vec![7; n + 1]).unwrap_err().kind()
                })
                .unwrap();
            assert_eq!(full, std::io::ErrorKind::WriteZero);
            let stored = tx.get_bytes::<Blobs>(&key).unwrap().unwrap();
            assert_eq!(&stored[..4], b"head");
            assert!(stored[4..].iter().all(|&b| b == 7), "what fit is kept");
            tx.put_reserve::<Blobs, _>(&key, n, |room| room.write_all(b"x").unwrap())
                .unwrap();
            let stored = tx.get_bytes::<Blobs>(&key).unwrap().unwrap();
            assert_eq!(stored.len(), n);
            assert_eq!(stored[0], b'x');
            assert!(stored[1..].iter().all(|&b| b == 0), "key {key}: zeros");
        }
        tx.commit().unwrap();
        let tx = db.read().unwrap();
        let stored = tx.get_bytes::<Blobs>(&4).unwrap().unwrap();
        assert!(stored[1..].iter().all(|&b| b == 0));
    }
}

/// A closure that panics halfway leaves zeros after what it wrote, not the page's old bytes,
/// when the panic is caught and the transaction goes on.
#[test]
fn a_panic_while_filling_the_room_leaves_zeros() {
    use std::io::Write;
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Blobs>(&1, &vec![0xff; 3000]).unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tx.put_reserve::<Blobs, _>(&1, 3000, |room| {
            room.write_all(b"ab").unwrap();
            panic!("the source of the value failed");
        })
    }));
    assert!(caught.is_err());
    let stored = tx.get_bytes::<Blobs>(&1).unwrap().unwrap();
    assert_eq!(&stored[..2], b"ab");
    assert!(stored[2..].iter().all(|&b| b == 0));
}

/// A value too large for libmdbx is refused with the usual error, naming the table.
#[test]
fn put_reserve_of_a_value_too_large_is_too_large() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    let err = tx
        .put_reserve::<Blobs, _>(&1, usize::MAX / 2, |_| unreachable!("no room"))
        .unwrap_err();
    assert!(
        matches!(err, Error::TooLarge { table: "Blobs", .. }),
        "{err}"
    );
}

/// A codec that knows its encoded length is written through `encode_into` into the page
/// (its `encode` fails, so nothing else could have written it), by `put`, `insert` and
/// `append`, with their usual refusals.
#[test]
fn put_writes_a_codec_that_knows_its_length_into_the_page() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Points>(&1, &(10, 20)).unwrap();
    tx.put::<Points>(&1, &(11, 21)).unwrap();
    tx.insert::<Points>(&2, &(12, 22)).unwrap();
    tx.append::<Points>(&3, &(13, 23)).unwrap();
    assert!(matches!(
        tx.insert::<Points>(&2, &(0, 0)),
        Err(Error::KeyExists {
            table: "Points",
            ..
        })
    ));
    assert!(matches!(
        tx.append::<Points>(&3, &(0, 0)),
        Err(Error::AppendOutOfOrder {
            table: "Points",
            last: Some(_),
            ..
        })
    ));
    assert_eq!(tx.get::<Points>(&2).unwrap(), Some((12, 22)));
    tx.commit().unwrap();
    let tx = db.read().unwrap();
    let points: Vec<(u64, (u32, u32))> = tx.iter::<Points>().collect::<Result<_, _>>().unwrap();
    assert_eq!(points, [(1, (11, 21)), (2, (12, 22)), (3, (13, 23))]);
}

/// When `encode_into` fails after the room was reserved, the half-written (zeroed) entry is
/// deleted, so a commit cannot store it, and the error says so.
#[test]
fn a_failed_encode_into_leaves_no_zeroed_value_behind() {
    let (_dir, db) = tempdb::open_with::<App>(Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Points>(&1, &(1, 1)).unwrap();
    let err = tx.put::<Points>(&1, &(u32::MAX, 0)).unwrap_err();
    let Error::Encode { table, source, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(*table, "Points");
    assert!(source.message().contains("not a point"), "{source}");
    assert!(source.message().contains("no value"), "{source}");
    assert_eq!(tx.get::<Points>(&1).unwrap(), None);
    let err = tx.put::<Points>(&2, &(u32::MAX, 0)).unwrap_err();
    assert!(matches!(err, Error::Encode { .. }));
    tx.commit().unwrap();
    assert_eq!(db.read().unwrap().len::<Points>().unwrap(), 0);
}

#[derive(Debug, Clone, PartialEq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[zerocopy(crate = "tabula::zerocopy")]
#[repr(C)]
struct AccountV2 {
    nonce: U64<LittleEndian>,
    code: U32<LittleEndian>,
    balance: [u8; 32],
    frozen: u8,
}

#[derive(Table)]
#[table(name = "Accounts", key = u64, value = AccountV2, codec = Pod<AccountV2>)]
struct AccountsV2;

#[derive(Schema)]
struct AppV2(AccountsV2);

/// A `Pod` value's size is recorded (`pod(44)`): a layout of another size is refused at open,
/// with the step that converts the values.
#[test]
fn a_pod_layout_of_another_size_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    drop(tabula::open::<App>(dir.path(), Options::new()).unwrap());
    match tabula::open::<AppV2>(dir.path(), Options::new()) {
        Err(Error::SchemaMismatch {
            what,
            stored,
            declared,
            advice,
            ..
        }) => {
            assert_eq!(what, "value encoding");
            assert_eq!(stored, "pod(44)<Account>");
            assert_eq!(declared, "pod(45)<AccountV2>");
            assert!(
                advice.contains("m.transform_with::<AccountsV2, tabula::Pod<OldAccountV2>>"),
                "{advice}"
            );
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("opened a 44-byte layout as a 45-byte one"),
    }
}

/// Values are written from their borrowed forms too, as keys are: `&str` for a `String`, `&[T]`
/// for a `Vec<T>` (serde and ordered dupsort values), `&[u8]` for a `Raw` value; each stores
/// the bytes the owned value stores, through every write path.
#[test]
fn values_are_written_from_borrowed_forms() {
    use tabula::{Raw, Schema, Table};
    #[derive(Table)]
    #[table(name = "names", key = u64, value = String)]
    struct Names;
    #[derive(Table)]
    #[table(name = "lists", key = u64, value = Vec<u32>)]
    struct Lists;
    #[derive(Table)]
    #[table(name = "topics", key = u64, value = String, dupsort)]
    struct Topics;
    #[derive(Table)]
    #[table(name = "blobs", key = u64, value = Vec<u8>, codec = Raw)]
    struct Blobs;
    #[derive(Schema)]
    struct Borrowed(Names, Lists, Topics, Blobs);

    let (_dir, db) = tempdb::open_with::<Borrowed>(tabula::Options::new());
    let mut tx = db.write().unwrap();
    tx.put::<Names>(&1, "one").unwrap();
    tx.put::<Names>(&2, &"two".to_string()).unwrap();
    tx.insert::<Names>(&3, "three").unwrap();
    tx.put::<Lists>(&1, &[1u32, 2, 3][..]).unwrap();
    tx.put::<Lists>(&2, &vec![1u32, 2, 3]).unwrap();
    tx.put::<Topics>(&1, "transfer").unwrap();
    tx.put::<Topics>(&1, "approval").unwrap();
    tx.append_dup::<Topics>(&1, "zzz").unwrap();
    tx.put::<Blobs>(&1, &b"raw bytes"[..]).unwrap();
    tx.append::<Blobs>(&2, &b"appended"[..]).unwrap();
    {
        let mut appender = tx.appender::<Blobs>().unwrap();
        appender.append(&3, &b"by the appender"[..]).unwrap();
    }
    {
        let mut cursor = tx.cursor_mut::<Names>().unwrap();
        cursor.upsert(&4, "four").unwrap();
        assert_eq!(cursor.current().unwrap(), Some((4, "four".to_string())));
    }
    tx.commit().unwrap();

    let tx = db.read().unwrap();
    assert_eq!(tx.get::<Names>(&1).unwrap().as_deref(), Some("one"));
    assert_eq!(
        tx.get_bytes::<Names>(&1).unwrap(),
        Some(&[3, b'o', b'n', b'e'][..])
    );
    assert_eq!(tx.get::<Names>(&3).unwrap().as_deref(), Some("three"));
    assert_eq!(tx.get::<Names>(&4).unwrap().as_deref(), Some("four"));
    assert_eq!(
        tx.get_bytes::<Lists>(&1).unwrap(),
        tx.get_bytes::<Lists>(&2).unwrap(),
        "a slice stores what the vector stores"
    );
    assert_eq!(tx.get::<Lists>(&1).unwrap(), Some(vec![1, 2, 3]));
    let topics: Vec<String> = tx
        .dups::<Topics>(&1)
        .values()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(topics, ["approval", "transfer", "zzz"]);
    assert_eq!(tx.get_bytes::<Blobs>(&1).unwrap(), Some(&b"raw bytes"[..]));
    assert_eq!(tx.get_bytes::<Blobs>(&2).unwrap(), Some(&b"appended"[..]));
    assert_eq!(
        tx.get_bytes::<Blobs>(&3).unwrap(),
        Some(&b"by the appender"[..])
    );
}
