use tabula::{Db, History, Schema, Table};

// A dupsort table's history records each (key, subkey): the reads of a table of one value a
// key do not compile on it, and the message names the `dup_` forms.
#[derive(Table)]
#[table(key = u64, subkey = u32, value = u64, dupsort, history)]
struct Storage;

#[derive(History)]
#[history(on = Storage)]
struct StorageHistory;

#[derive(Schema)]
struct App(Storage, StorageHistory);

fn read(db: &Db<App>) -> tabula::Result<()> {
    let tx = db.read()?;
    let _ = tx.get_as_of::<Storage>(&1, 3)?;
    let _ = tx.changes_at::<Storage>(3)?;
    // The dup forms compile.
    let _ = tx.dup_as_of::<Storage>(&1, &2, 3)?;
    let _ = tx.dup_changes_at::<Storage>(3)?;
    Ok(())
}

fn main() {
    let _ = read;
}
