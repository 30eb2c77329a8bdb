use std::sync::Arc;

use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Counters;

#[derive(Schema)]
struct App(Counters);

fn main() {
    let db = Arc::new(tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap());
    let tx = db.read_owned().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| tx.get::<Counters>(&1));
        s.spawn(|| tx.get::<Counters>(&2));
    });
}
