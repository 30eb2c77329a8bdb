use tabula::{Schema, Table};

#[derive(Table)]
#[table(name = "x", key = u64, value = u64)]
pub struct Headers;

#[derive(Table)]
#[table(name = "x", key = u64, value = u64)]
pub struct Bodies;

#[derive(Schema)]
pub struct Chain(Headers, Bodies);

fn main() {}
