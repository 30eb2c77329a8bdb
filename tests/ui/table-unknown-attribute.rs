use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = u64, foo = 1, dupsrot)]
pub struct Headers;

fn main() {}
