use tabula::{Index, Table};

#[derive(Table)]
#[table(key = u64, value = u32)]
struct Transfers;

// An index needs its table declared `indexed`, so the table's writes keep it exact.
#[derive(Index)]
#[index(on = Transfers, key = u32, by = amount)]
struct ByAmount;

fn amount(_id: &u64, value: &u32) -> u32 {
    *value
}

fn main() {}
