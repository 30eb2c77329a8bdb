use tabula::Table;

// A path that resolves, but not to Tabula: rustc names what the path lacks.
#[derive(Table)]
#[tabula(crate = std::collections)]
#[table(key = u64, value = u64)]
pub struct Numbers;

fn main() {}
