use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = String, value_version = 0)]
struct Notes;

fn main() {}
