use tabula::{Key, Schema, Table};

// `crate = ..` takes a path, bare or in a string, without generic arguments.
#[derive(Table)]
#[tabula(crate = 1)]
#[table(key = u64, value = u64)]
pub struct Numbers;

#[derive(Table)]
#[tabula(crate = "tabula core")]
#[table(key = u64, value = u64)]
pub struct Words;

#[derive(Schema)]
#[tabula(crate = tabula<u8>)]
pub struct App(Numbers, Words);

#[derive(Key, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[tabula(crate)]
pub struct Slot {
    block: u64,
}

#[derive(Key, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[tabula(crate = )]
pub struct Empty {
    block: u64,
}

fn main() {}
