use tabula::{Db, Raw, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = Raw)]
pub struct Blobs;

#[derive(Schema)]
pub struct App(Blobs);

// The reserved room is valid only until the next write: it cannot leave the closure.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    let mut kept = None;
    tx.put_reserve::<Blobs, _>(&1, 4, |room| kept = Some(room))?;
    tx.put::<Blobs>(&2, &vec![1])?;
    println!("{kept:?}");
    Ok(())
}

fn main() {}
