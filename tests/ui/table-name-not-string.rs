use tabula::Table;

const NAME: &str = "headers";

#[derive(Table)]
#[table(name = NAME, key = u64, value = u64)]
pub struct Headers;

fn main() {}
