use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = u64)]
pub enum Headers {
    One,
}

fn main() {}
