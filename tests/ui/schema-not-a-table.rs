use tabula::{Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
pub struct Headers;

pub struct Bodies;

#[derive(Schema)]
pub struct Chain(Headers, Bodies);

fn main() {}
