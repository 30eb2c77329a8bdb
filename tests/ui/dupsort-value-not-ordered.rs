use serde::{Deserialize, Serialize};
use tabula::Table;

#[derive(Serialize, Deserialize)]
pub struct Header {
    pub number: u64,
}

#[derive(Table)]
#[table(key = u64, value = Header, dupsort)]
pub struct Headers;

fn main() {}
