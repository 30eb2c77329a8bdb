use tabula::{Db, History, Schema, Table};

#[derive(Table)]
#[table(key = u64, value = u32, history)]
struct Balances;

#[derive(History)]
#[history(on = Balances)]
struct BalancesHistory;

#[derive(Table)]
#[table(key = u64, value = Vec<u8>, codec = tabula::Raw, history)]
struct Blobs;

#[derive(History)]
#[history(on = Blobs)]
struct BlobsHistory;

#[derive(Schema)]
struct App(Balances, BalancesHistory, Blobs, BlobsHistory);

// A history is written only by its table's writes; a table declared `history` refuses the
// writes that cannot record the value before them.
fn write(db: &Db<App>) -> tabula::Result<()> {
    let mut tx = db.write()?;
    tx.put::<BalancesHistory>(&vec![1u8], &vec![2u8])?;
    tx.put_reserve::<Blobs, _>(&1, 4, |room| room.zeroed().fill(0))?;
    Ok(())
}

// A table declared `history` whose history the schema does not list.
#[derive(Schema)]
struct Forgotten(Balances);

// A history of a table not declared `history`.
#[derive(Table)]
#[table(key = u64, value = u32)]
struct Plain;

#[derive(History)]
#[history(on = Plain)]
struct PlainHistory;

fn main() {
    let _ = write;
    let _ = <Forgotten as Schema>::TABLES;
}
