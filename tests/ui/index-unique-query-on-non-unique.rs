use tabula::{Db, Index, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u32, indexed)]
struct Transfers;

#[derive(Index)]
#[index(on = Transfers, key = u32, by = amount)]
struct ByAmount;

fn amount(_id: &u64, value: &u32) -> u32 {
    *value
}

#[derive(Schema)]
struct App(Transfers, ByAmount);

// Several rows may share an amount: there is no "the" row of one.
fn read(db: &Db<App>) -> tabula::Result<()> {
    let tx = db.read()?;
    let _ = tx.get_unique::<ByAmount>(&7)?;
    Ok(())
}

fn main() {}
