use tabula::Table;

// `integer_key` takes `u32` or `u64`; `i64` is a key, but not an integer key.
#[derive(Table)]
#[table(key = i64, value = u64, integer_key)]
pub struct Headers;

fn main() {}
