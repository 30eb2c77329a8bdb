use tabula::{Db, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String, dupsort)]
pub struct Topics;

#[derive(Schema)]
pub struct App(Topics);

fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    let mut cursor = tx.cursor_mut::<Topics>()?;
    cursor.upsert_dup(&1, "slot", &"value".to_string())?;
    Ok(())
}

fn main() {}
