use tabula::Key;

#[derive(Key, PartialEq, Eq)]
pub struct Pair {
    a: u64,
    b: u32,
}

fn main() {}
