use tabula::{Db, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
pub struct Names;

#[derive(Schema)]
pub struct App(Names);

// `put_reserve` writes bytes as given, which a bincode table does not store.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    tx.put_reserve::<Names, _>(&1, 4, |room| room.zeroed().fill(b'a'))?;
    Ok(())
}

fn main() {}
