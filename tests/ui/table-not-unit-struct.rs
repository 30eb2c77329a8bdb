use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = u64)]
pub struct Headers {
    value: u64,
}

fn main() {}
