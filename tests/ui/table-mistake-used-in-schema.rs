// A table with a mistake still gets a stub impl, so the schema that lists it adds no errors of its
// own: only the missing `key` is reported.
use tabula::{Schema, Table};

#[derive(Table)]
#[table(value = u64)]
pub struct Headers;

#[derive(Schema)]
pub struct Chain(Headers);

fn main() {}
