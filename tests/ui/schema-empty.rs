use tabula::Schema;

#[derive(Schema)]
pub struct Chain;

fn main() {}
