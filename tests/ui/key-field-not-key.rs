use tabula::Key;

#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub struct Opaque;

#[derive(Key, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    a: u64,
    b: Opaque,
}

fn main() {}
