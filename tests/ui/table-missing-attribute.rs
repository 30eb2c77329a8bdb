use tabula::Table;

#[derive(Table)]
pub struct Headers;

fn main() {}
