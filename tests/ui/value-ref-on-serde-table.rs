use tabula::{Db, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = String)]
pub struct Names;

#[derive(Schema)]
pub struct App(Names);

// A bincode value has no borrowed form: the error says which codecs have one and what to use.
fn read(db: &Db<App>) -> tabula::Result<()> {
    let tx = db.read()?;
    let _name = tx.get_ref::<Names>(&1)?;
    let _entries = tx.iter::<Names>().borrowed();
    Ok(())
}

fn main() {}
