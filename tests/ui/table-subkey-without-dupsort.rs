use tabula::Table;

#[derive(Table)]
#[table(key = u64, subkey = u32, value = String)]
pub struct Storage;

fn main() {}
