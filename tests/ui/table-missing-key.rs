use tabula::Table;

#[derive(Table)]
#[table(value = u64)]
pub struct Headers;

fn main() {}
