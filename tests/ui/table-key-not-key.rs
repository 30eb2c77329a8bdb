use tabula::Table;

pub struct Id(u64);

#[derive(Table)]
#[table(key = Id, value = u64)]
pub struct Headers;

fn main() {}
