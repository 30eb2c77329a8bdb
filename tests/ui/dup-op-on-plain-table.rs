use tabula::{Db, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
pub struct Names;

#[derive(Schema)]
pub struct App(Names);

fn read(db: &Db<App>) -> tabula::Result<()> {
    let tx = db.read()?;
    let _ = tx.dups::<Names>(&1).count();
    let _ = tx.seek_dup::<Names>(&1, "a")?;
    let mut cursor = tx.cursor::<Names>()?;
    let _ = cursor.next_dup()?;
    Ok(())
}

fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    tx.append_dup::<Names>(&1, &"a".to_string())?;
    Ok(())
}

fn main() {}
