use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
struct Names;

#[derive(Schema)]
struct App(Names);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    // A `&str` is a value of a `String` table; a number is not.
    tx.put::<Names>(&1, "one").unwrap();
    tx.put::<Names>(&2, &5u32).unwrap();
}
