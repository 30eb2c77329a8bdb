use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = u64)]
#[table(key = u32, dupsort, dupsort)]
pub struct Headers;

fn main() {}
