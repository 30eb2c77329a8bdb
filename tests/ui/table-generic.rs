use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = u64)]
pub struct Headers<const SHARD: u8>;

fn main() {}
