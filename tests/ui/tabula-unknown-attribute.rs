use tabula::{Schema, Table};

// The crate path has its own attribute, which takes nothing else and `crate` once.
#[derive(Table)]
#[tabula(krate = tabula)]
#[table(key = u64, value = u64)]
pub struct Numbers;

#[derive(Table)]
#[table(key = u64, value = u64, crate = tabula)]
pub struct Words;

#[derive(Schema)]
#[tabula(crate = tabula, crate = "tabula")]
pub struct App(Numbers, Words);

fn main() {}
