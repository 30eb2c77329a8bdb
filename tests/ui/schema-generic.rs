use tabula::{Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
pub struct Headers;

#[derive(Schema)]
pub struct Chain<T>(Headers, T);

fn main() {}
