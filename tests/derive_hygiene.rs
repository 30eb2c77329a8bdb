//! The derives' output names nothing the user's scope could shadow.

#![allow(dead_code, non_camel_case_types)]

// Shadow the prelude and `core` (a local module, which `core::..` without `::` would find).
mod core {}
struct Result;
struct Ok;
struct Option;
struct Some;
struct None;
struct Vec;
struct String;
struct Box;
struct From;
struct Into;
struct usize;
struct u8;
struct str;
struct bool;
// Not shadowed: the derives' locals, named `__tabula_*` (a constant of such a name would turn a
// parameter into a pattern, as with serde's `__serializer`; stable Rust has no way around it).

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Header(::core::primitive::u64);

#[derive(tabula::Table)]
#[table(key = ::core::primitive::u64, value = Header)]
pub struct Headers;

#[derive(tabula::Table)]
#[table(name = "pairs", key = Pair, subkey = TuplePair, value = Header, dupsort)]
pub struct Pairs;

#[derive(tabula::Table)]
#[table(name = "sets", key = ::core::primitive::u64, value = Pair, dupsort)]
pub struct Sets;

// The dupsort derives expand too, with and without a subkey.
const _: () = ::core::assert!(<Pairs as tabula::DupSort>::HAS_SUBKEY);
const _: () = ::core::assert!(!<Sets as tabula::DupSort>::HAS_SUBKEY);

#[derive(tabula::Table)]
#[table(key = ::core::primitive::u32, value = Header, integer_key)]
pub struct ByNumber;

#[derive(tabula::Schema)]
pub struct Chain(Headers, Pairs, ByNumber, Sets);

// An indexed table and its indexes: one key per row, an optional one (unique), several.
#[derive(tabula::Table)]
#[table(key = ::core::primitive::u64, value = Header, indexed)]
pub struct Blocks;

#[derive(tabula::Index)]
#[index(on = Blocks, key = ::core::primitive::u64, by = number)]
pub struct ByHeader;

#[derive(tabula::Index)]
#[index(on = Blocks, key = ::core::primitive::u64, unique, by = maybe)]
pub struct ByMaybe;

#[derive(tabula::Index)]
#[index(on = Blocks, key = ::core::primitive::u64, by = many)]
pub struct ByMany;

fn number(_: &::core::primitive::u64, h: &Header) -> ::core::primitive::u64 {
    h.0
}

fn maybe(
    id: &::core::primitive::u64,
    _: &Header,
) -> ::core::option::Option<::core::primitive::u64> {
    ::core::option::Option::Some(*id)
}

fn many(id: &::core::primitive::u64, h: &Header) -> ::std::vec::Vec<::core::primitive::u64> {
    ::std::vec![*id, h.0]
}

#[derive(tabula::Schema)]
pub struct Indexed(Blocks, ByHeader, ByMaybe, ByMany);

#[derive(tabula::Key, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    a: ::core::primitive::u64,
    b: ::core::primitive::i32,
}

#[derive(tabula::Key, PartialEq, Eq, PartialOrd, Ord)]
pub struct TuplePair(::core::primitive::u16, ::core::primitive::u8);

mod no_prelude {
    #![no_implicit_prelude]

    #[derive(::tabula::Table)]
    #[table(key = Id, value = ::std::vec::Vec<::core::primitive::u8>, codec = ::tabula::Raw)]
    pub struct Blobs;

    #[derive(::tabula::Table)]
    #[table(key = ::core::primitive::u64, value = ::core::primitive::u64)]
    pub struct Counts;

    #[derive(::tabula::Schema)]
    pub struct Store(Blobs, Counts, super::Headers, super::Blocks, ByCount);

    #[derive(::tabula::Index)]
    #[index(on = super::Blocks, key = ::core::primitive::u64, unique, by = super::number)]
    pub struct ByCount;

    #[derive(
        ::tabula::Key,
        ::core::cmp::PartialEq,
        ::core::cmp::Eq,
        ::core::cmp::PartialOrd,
        ::core::cmp::Ord,
    )]
    pub struct Id {
        shard: ::core::primitive::u16,
        seq: ::core::primitive::u64,
    }
}

#[test]
fn derives_expand_with_everything_shadowed() {
    use tabula::{Contains, Key, Schema, Table};

    ::core::assert_eq!(Headers::NAME, "Headers");
    ::core::assert_eq!(<Chain as Contains<ByNumber>>::ID, 2);
    ::core::assert_eq!(Chain::TABLES.len(), 4);
    ::core::assert_eq!(Pair::FIXED_SIZE, ::core::option::Option::Some(12));
    ::core::assert_eq!(TuplePair::FIXED_SIZE, ::core::option::Option::Some(3));
    ::core::assert_eq!(no_prelude::Blobs::NAME, "Blobs");
    ::core::assert_eq!(<no_prelude::Store as Contains<Headers>>::ID, 2);
    ::core::assert_eq!(no_prelude::Id::FIXED_SIZE, ::core::option::Option::Some(10));
    ::core::assert_eq!(Indexed::TABLES.len(), 4);
    ::core::assert_eq!(<Indexed as Contains<ByMany>>::ID, 3);
    const { ::core::assert!(<no_prelude::ByCount as tabula::Index>::UNIQUE) };
}
