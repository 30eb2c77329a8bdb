use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Counters;

#[derive(Schema)]
struct App(Counters);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    let mut tx = db.read().unwrap();
    tx.put::<Counters>(&1, &2).unwrap();
}
