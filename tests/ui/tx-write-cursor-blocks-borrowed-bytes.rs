use tabula::{Db, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
pub struct Names;

#[derive(Schema)]
pub struct App(Names);

// Bytes borrowed from the transaction cannot be held while a write cursor could delete them.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    let bytes = tx.get_bytes::<Names>(&1)?;
    let mut cursor = tx.cursor_mut::<Names>()?;
    cursor.delete_current()?;
    drop(cursor);
    println!("{bytes:?}");
    Ok(())
}

fn main() {}
