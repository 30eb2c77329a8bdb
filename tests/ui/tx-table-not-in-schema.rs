use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Listed;

#[derive(Table)]
#[table(key = u64, value = u64)]
struct NotListed;

#[derive(Schema)]
struct App(Listed);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    let tx = db.read().unwrap();
    let _ = tx.get::<NotListed>(&1);
    let _ = tx.cursor::<NotListed>();
    let mut w = db.write().unwrap();
    let _ = w.put::<NotListed>(&1, &2);
}
