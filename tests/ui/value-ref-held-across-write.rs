use tabula::{Db, Raw, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = Raw)]
pub struct Blobs;

#[derive(Schema)]
pub struct App(Blobs);

// A borrowed value (or a lazy one) points into the page: no write while it is held.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    let value = tx.get_ref::<Blobs>(&1)?;
    let lazy = tx.get_lazy::<Blobs>(&1)?;
    tx.put::<Blobs>(&2, &vec![1])?;
    println!("{value:?} {lazy:?}");
    Ok(())
}

fn main() {}
