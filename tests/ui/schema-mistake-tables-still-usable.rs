// A schema with a mistake still implements `Contains` for each distinct table, so code using its
// tables reports nothing more: only the table listed twice is reported.
use tabula::{Contains, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
pub struct Headers;

#[derive(Schema)]
pub struct Chain(Headers, Headers);

fn id<S: Contains<T>, T: Table>() -> usize {
    S::ID
}

fn main() {
    let _ = id::<Chain, Headers>();
}
