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

// The write paths that do not keep indexes exact refuse an indexed table at compile time.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    tx.put_bytes::<Transfers>(&[0; 8], &[0; 4])?;
    tx.retain_bytes::<Transfers>(.., |_, _| true)?;
    Ok(())
}

fn main() {}
