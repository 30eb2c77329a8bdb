use tabula::Key;

#[derive(Key, PartialEq, Eq, PartialOrd, Ord)]
pub struct Nothing;

fn main() {}
