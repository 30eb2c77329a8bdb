use tabula::Key;

#[derive(Key, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair<T> {
    a: u64,
    b: T,
}

fn main() {}
