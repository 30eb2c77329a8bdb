use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = String, value_version = "2")]
struct Notes;

fn main() {}
