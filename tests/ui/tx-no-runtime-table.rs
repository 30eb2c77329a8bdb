// There is no way to name a table by a runtime string: the typed API has no such method, and
// a string is not a table type.
use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Counters;

#[derive(Schema)]
struct App(Counters);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    let tx = db.read().unwrap();
    let name = String::from("Counters");
    let _ = tx.open_table(&name);
    let _ = tx.get::<"Counters">(&1);
}
