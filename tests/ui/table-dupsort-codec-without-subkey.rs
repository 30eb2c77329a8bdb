use tabula::Table;

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = tabula::Raw, dupsort)]
pub struct Blobs;

fn main() {}
