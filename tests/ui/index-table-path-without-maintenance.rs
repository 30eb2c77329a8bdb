use tabula::{Db, Index, Raw, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = Raw, indexed)]
struct Blobs;

#[derive(Index)]
#[index(on = Blobs, key = u8, by = first)]
struct ByFirst;

fn first(_id: &u64, value: &Vec<u8>) -> Option<u8> {
    value.first().copied()
}

#[derive(Schema)]
struct App(Blobs, ByFirst);

// `put_reserve` writes the value into the page after the call returns, too late to compute its
// index entries: on an indexed table it does not compile.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    tx.put_reserve::<Blobs, _>(&1, 4, |room| room.zeroed().fill(7))?;
    Ok(())
}

fn main() {}
