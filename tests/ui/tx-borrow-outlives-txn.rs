use tabula::{Options, Raw, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = Raw)]
struct Blobs;

#[derive(Schema)]
struct App(Blobs);

fn main() {
    let db = tabula::open::<App>("/tmp/never-opened", Options::new()).unwrap();
    let bytes: &[u8] = {
        let tx = db.read().unwrap();
        tx.get_bytes::<Blobs>(&1).unwrap().unwrap()
    };
    println!("{bytes:?}");
}
