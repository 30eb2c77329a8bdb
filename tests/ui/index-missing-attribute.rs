use tabula::{Index, Table};

#[derive(Table)]
#[table(key = u64, value = u32, indexed)]
struct Transfers;

#[derive(Index)]
#[index(on = Transfers, colour = 3)]
struct ByAmount;

#[derive(Table)]
#[table(key = u64, value = u32, indexed, dupsort)]
struct Sets;

fn main() {}
