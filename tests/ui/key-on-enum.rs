use tabula::Key;

#[derive(Key, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    Left,
    Right,
}

fn main() {}
