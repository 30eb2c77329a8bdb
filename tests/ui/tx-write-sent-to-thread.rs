use tabula::{Options, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u64)]
struct Counters;

#[derive(Schema)]
struct App(Counters);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    std::thread::scope(|s| {
        let tx = db.write().unwrap();
        s.spawn(move || tx.commit());
    });
}
