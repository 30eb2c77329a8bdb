use tabula::{Index, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u32, indexed)]
struct Transfers;

#[derive(Table)]
#[table(key = u64, value = u32)]
struct Other;

#[derive(Index)]
#[index(on = Transfers, key = u32, by = amount)]
struct ByAmount;

fn amount(_id: &u64, value: &u32) -> u32 {
    *value
}

// The index is listed, its table is not.
#[derive(Schema)]
struct App(Other, ByAmount);

fn main() {}
