use tabula::Table;

#[derive(Table)]
#[table(name = "", key = u64, value = u64)]
pub struct Headers;

fn main() {}
