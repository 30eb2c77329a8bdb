use tabula::Table;

pub struct Header {
    pub number: u64,
}

#[derive(Table)]
#[table(key = u64, value = Header)]
pub struct Headers;

fn main() {}
