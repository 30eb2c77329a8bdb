//! What the derives generate: table constants, schema IDs and infos, composite keys.

use serde::{Deserialize, Serialize};
use tabula::{
    AsKey, AsPrefix, Contains, Descriptor, Key, KeyBuf, Raw, Schema, Table, TableFlags, TableInfo,
};

#[derive(Debug, Serialize, Deserialize)]
pub struct Header {
    pub number: u64,
}

#[derive(Table)]
#[table(key = u64, value = Header)]
pub struct Headers;

#[derive(Table)]
#[table(name = "storage", key = SlotKey, value = Vec<u8>, dupsort)]
pub struct Storage;

#[derive(Table)]
#[table(key = u32, value = Vec<u8>, codec = Raw, integer_key, name = "bodies")]
pub struct Bodies;

#[derive(Table)]
#[table(key = u64, value = u64, dupsort, integer_key)]
pub struct Both;

/// A raw identifier: the name is the identifier without `r#`.
#[derive(Table)]
#[table(key = u64, value = u64)]
#[allow(non_camel_case_types)]
pub struct r#match;

#[derive(Schema)]
pub struct Chain(Headers, Storage, Bodies);

/// A second schema listing a table of the first.
#[derive(Schema)]
pub struct Index(Bodies, Headers);

#[derive(Key, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SlotKey {
    pub block: u64,
    pub slot: i32,
}

#[derive(Key, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair(u16, i8);

#[derive(Key, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Single {
    pub id: u32,
}

/// Tables declared in another module, reached only by path, as a downstream crate would.
mod other {
    pub mod tables {
        #[derive(tabula::Table)]
        #[table(key = u64, value = u64)]
        pub struct Receipts;
    }
}

#[derive(Schema)]
pub struct Mixed(other::tables::Receipts, crate::Headers);

#[test]
fn table_name_defaults_to_the_type_name() {
    assert_eq!(Headers::NAME, "Headers");
    assert_eq!(r#match::NAME, "match");
}

#[test]
fn table_name_can_be_given() {
    assert_eq!(Storage::NAME, "storage");
    assert_eq!(Bodies::NAME, "bodies");
}

#[test]
fn table_flags() {
    assert_eq!(Headers::FLAGS, TableFlags::NONE);
    assert_eq!(
        Storage::FLAGS,
        TableFlags {
            dupsort: true,
            integer_key: false
        }
    );
    assert_eq!(
        Bodies::FLAGS,
        TableFlags {
            dupsort: false,
            integer_key: true
        }
    );
    assert_eq!(
        Both::FLAGS,
        TableFlags {
            dupsort: true,
            integer_key: true
        }
    );
}

#[test]
fn table_types_and_value_type_as_written() {
    fn same<A: 'static, B: 'static>() -> bool {
        std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
    }
    assert!(same::<<Headers as Table>::Key, u64>());
    assert!(same::<<Headers as Table>::Value, Header>());
    assert!(same::<<Headers as Table>::Codec, tabula::Bincode<Header>>());
    assert!(same::<<Bodies as Table>::Codec, Raw>());
    assert_eq!(Headers::VALUE_TYPE, "Header");
    assert_eq!(Storage::VALUE_TYPE, "Vec<u8>");
}

#[test]
fn schema_tables_in_id_order() {
    let names: Vec<&str> = Chain::TABLES.iter().map(|t| t.name).collect();
    assert_eq!(names, ["Headers", "storage", "bodies"]);
    assert_eq!(Chain::TABLES[0], TableInfo::of::<Headers>());
    assert_eq!(
        Chain::TABLES[1],
        TableInfo {
            name: "storage",
            flags: TableFlags {
                dupsort: true,
                integer_key: false
            },
            key: Descriptor::Struct {
                name: "SlotKey",
                fields: &[
                    ("block", Descriptor::Unsigned(64)),
                    ("slot", Descriptor::Signed(32))
                ],
            },
            // A dupsort table stores its values in their key encoding.
            value: Descriptor::Ordered(&Descriptor::Bytes),
            value_type: "Vec<u8>",
            value_version: None,
            rust_name: "derive::Storage",
            value_trace: || tabula::ValueTrace::Opaque, // not compared
            index: None,
            history: false,
            history_of: None,
            debug_key: tabula::__private::no_debug_key, // not compared
        }
    );
    assert_eq!(Chain::TABLES[2].key, Descriptor::NativeInteger(32));
    assert_eq!(Chain::TABLES[2].value, Descriptor::Raw);
}

#[test]
fn schema_ids_are_positions() {
    assert_eq!(<Chain as Contains<Headers>>::ID, 0);
    assert_eq!(<Chain as Contains<Storage>>::ID, 1);
    assert_eq!(<Chain as Contains<Bodies>>::ID, 2);
    // The ID indexes `TABLES`.
    assert_eq!(
        Chain::TABLES[<Chain as Contains<Bodies>>::ID].name,
        Bodies::NAME
    );
}

#[test]
fn two_schemas_share_a_table() {
    assert_eq!(<Index as Contains<Bodies>>::ID, 0);
    assert_eq!(<Index as Contains<Headers>>::ID, 1);
    assert_eq!(Index::TABLES[1], Chain::TABLES[0]);
}

#[test]
fn schema_of_tables_named_by_path() {
    assert_eq!(<Mixed as Contains<other::tables::Receipts>>::ID, 0);
    assert_eq!(<Mixed as Contains<Headers>>::ID, 1);
    let names: Vec<&str> = Mixed::TABLES.iter().map(|t| t.name).collect();
    assert_eq!(names, ["Receipts", "Headers"]);
}

#[test]
fn key_descriptors_and_sizes() {
    assert_eq!(
        SlotKey::DESCRIPTOR.to_string(),
        "SlotKey { block: u64, slot: i32 }"
    );
    assert_eq!(SlotKey::FIXED_SIZE, Some(12));
    assert_eq!(
        Pair::DESCRIPTOR,
        Descriptor::Struct {
            name: "Pair",
            fields: &[
                ("0", Descriptor::Unsigned(16)),
                ("1", Descriptor::Signed(8))
            ],
        }
    );
    assert_eq!(Pair::FIXED_SIZE, Some(3));
    assert_eq!(Single::FIXED_SIZE, Some(4));
}

#[test]
fn key_encodes_fields_in_order() {
    let key = SlotKey {
        block: 0x0102_0304_0506_0708,
        slot: -1,
    };
    let bytes = key.encode();
    let mut expected = 0x0102_0304_0506_0708u64.to_be_bytes().to_vec();
    expected.extend_from_slice(&(-1i32).encode());
    assert_eq!(bytes.as_ref(), expected.as_slice());
    assert_eq!(Pair(0x0a0b, 0).encode().as_ref(), [0x0a, 0x0b, 0x80]);
}

#[test]
fn key_round_trips() {
    for key in [
        SlotKey { block: 0, slot: 0 },
        SlotKey {
            block: u64::MAX,
            slot: i32::MIN,
        },
        SlotKey { block: 7, slot: -3 },
    ] {
        assert_eq!(SlotKey::decode(key.encode().as_ref()), Ok(key));
    }
    assert_eq!(Pair::decode(Pair(9, -9).encode().as_ref()), Ok(Pair(9, -9)));
    assert_eq!(
        Single::decode(Single { id: 5 }.encode().as_ref()),
        Ok(Single { id: 5 })
    );
}

#[test]
fn key_decode_rejects_bad_lengths() {
    let bytes = SlotKey { block: 1, slot: 2 }.encode();
    assert!(SlotKey::decode(&bytes.as_ref()[..11]).is_err());
    let mut longer = bytes.as_ref().to_vec();
    longer.push(0);
    assert!(SlotKey::decode(&longer).is_err());
}

#[test]
fn key_byte_order_is_ord() {
    // Chosen so that field-by-field order differs from comparing either field alone, and so that
    // signed fields cross zero.
    let mut keys = [
        SlotKey { block: 1, slot: 0 },
        SlotKey {
            block: 0,
            slot: i32::MAX,
        },
        SlotKey { block: 1, slot: -1 },
        SlotKey { block: 0, slot: -5 },
        SlotKey {
            block: 256,
            slot: i32::MIN,
        },
        SlotKey {
            block: 255,
            slot: 1,
        },
    ];
    for a in &keys {
        for b in &keys {
            assert_eq!(
                a.encode().as_ref().cmp(b.encode().as_ref()),
                a.cmp(b),
                "{a:?} vs {b:?}"
            );
        }
    }
    keys.sort();
    let mut by_bytes = keys;
    by_bytes.sort_by(|a, b| a.encode().as_ref().cmp(b.encode().as_ref()));
    assert_eq!(keys, by_bytes);

    let pairs = [Pair(1, -1), Pair(0, 127), Pair(1, 0), Pair(0, -128)];
    for a in &pairs {
        for b in &pairs {
            assert_eq!(a.encode().as_ref().cmp(b.encode().as_ref()), a.cmp(b));
        }
    }
}

#[test]
fn key_as_a_part_of_a_longer_key() {
    // `encode_part` with `last = false` writes the same fixed-size bytes, so a derived key can sit
    // inside another composite key.
    let key = SlotKey { block: 3, slot: 4 };
    let mut buf = tabula::KeyBuf::new();
    AsKey::<SlotKey>::encode_part(&key, &mut buf, false);
    AsKey::<SlotKey>::encode_part(&key, &mut buf, true);
    let mut input = buf.as_slice();
    assert_eq!(SlotKey::decode_part(&mut input, false), Ok(key));
    assert_eq!(SlotKey::decode_part(&mut input, true), Ok(key));
    assert!(input.is_empty());
}

#[test]
fn key_prefixes() {
    // The first field, owned or as a one-part tuple; the struct as a tuple key's first part.
    fn has_prefix<K: Key, P: AsPrefix<K>>() {}
    has_prefix::<SlotKey, u64>();
    has_prefix::<SlotKey, (u64,)>();
    has_prefix::<Pair, u16>();
    has_prefix::<(SlotKey, u8), SlotKey>();
    has_prefix::<(Pair, u8, u8, u8, u8, u8), Pair>();
    let front = |p: &dyn Fn(&mut KeyBuf)| {
        let mut buf = KeyBuf::new();
        p(&mut buf);
        buf.as_slice().to_vec()
    };
    let key = SlotKey { block: 9, slot: -1 };
    let whole = AsKey::<SlotKey>::encode(&key).as_slice().to_vec();
    assert!(whole.starts_with(&front(&|b| AsPrefix::<SlotKey>::encode_prefix(&9u64, b))));
    assert!(!whole.starts_with(&front(&|b| AsPrefix::<SlotKey>::encode_prefix(&8u64, b))));
    let pair = (key, 3u8);
    let whole = AsKey::<(SlotKey, u8)>::encode(&pair).as_slice().to_vec();
    let first = front(&|b| AsPrefix::<(SlotKey, u8)>::encode_prefix(&key, b));
    assert!(whole.starts_with(&first) && first.len() < whole.len());
}

#[test]
fn a_derived_key_keys_a_table() {
    assert_eq!(
        TableInfo::of::<Storage>().key_descriptor(),
        "SlotKey { block: u64, slot: i32 }"
    );
}
