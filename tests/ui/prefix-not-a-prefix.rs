use tabula::{Db, Schema, Table};

#[derive(Table)]
#[table(key = (String, u64), value = u64)]
pub struct Balances;

#[derive(Schema)]
pub struct App(Balances);

fn read(db: &Db<App>) -> tabula::Result<()> {
    let tx = db.read()?;
    // The first part is a `String`: a number is not a prefix.
    let _ = tx.prefix::<Balances>(&5u64).count();
    // Two type arguments, as before borrowed prefixes.
    let _ = tx.prefix::<Balances, String>(&"alice".to_string()).count();
    // A range of the wrong key type.
    let _ = tx.range::<Balances>(1u64..2).count();
    Ok(())
}

fn main() {}
