use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = String, codec = tabula::Raw)]
pub struct Names;

fn main() {}
