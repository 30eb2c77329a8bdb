use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
struct Names;

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Counters;

#[derive(Schema)]
struct App(Names, Counters);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    // A `&str` is a value of a `String` table; a number is not.
    tx.put::<Names>(&1, "one").unwrap();
    tx.put::<Names>(&2, &5u32).unwrap();
    // A string is not a value of a `u64` table, in any write form.
    tx.put::<Counters>(&1, &"one").unwrap();
    tx.insert::<Counters>(&1, "one").unwrap();
    tx.cursor_mut::<Counters>().unwrap().upsert(&1, "one").unwrap();
    tx.appender::<Counters>().unwrap().append(&1, "one").unwrap();
}
