// Bytes borrowed from a write transaction keep it from writing: libmdbx may change the page
// they point into.
use tabula::{Options, Raw, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Schema)]
struct App(Blobs);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    let mut tx = db.write().unwrap();
    let old = tx.get_bytes::<Blobs>(&1).unwrap().unwrap();
    tx.put::<Blobs>(&1, &vec![0; 16]).unwrap();
    println!("{old:?}");
}
