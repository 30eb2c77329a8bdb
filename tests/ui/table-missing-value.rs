use tabula::Table;

#[derive(Table)]
#[table(key = u64)]
pub struct Headers;

fn main() {}
