use tabula::Table;

#[derive(Table)]
#[table(name = "__tabula_meta", key = u64, value = u64)]
pub struct Meta;

fn main() {}
