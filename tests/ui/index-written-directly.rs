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

// An index's entries follow its table: writing them directly does not compile.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    tx.put::<ByAmount>(&7, &1)?;
    tx.delete::<ByAmount>(&7)?;
    tx.clear::<ByAmount>()?;
    tx.append_dup::<ByAmount>(&7, &2)?;
    let _ = tx.cursor_mut::<ByAmount>()?;
    drop(tx);
    db.bulk_load::<ByAmount>([(7u32, 1u64)])?;
    Ok(())
}

fn main() {}
