//! Secondary indexes on an indexer-shaped schema: transfers keyed by (block, position), with
//! non-unique indexes by sender and by recipient and a unique index by hash. Version 1 of the
//! schema indexes senders and hashes; version 2 adds the recipient index to the populated
//! table, and the startup step builds it. Run: `cargo run --example indexes`.

use serde::{Deserialize, Serialize};
use tabula::{Error, Index, Key, Options, Schema, Table};

/// A transfer's position: by block, then its place in the block.
#[derive(Key, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TxId {
    block: u64,
    position: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Transfer {
    from: String,
    to: String,
    amount: u64,
    hash: [u8; 8],
}

#[derive(Table)]
#[table(name = "transfers", key = TxId, value = Transfer, indexed)]
struct Transfers;

/// Every transfer a sender made.
#[derive(Index)]
#[index(name = "by_sender", on = Transfers, key = String, by = sender)]
struct BySender;

/// Every transfer a recipient got (added in version 2).
#[derive(Index)]
#[index(name = "by_recipient", on = Transfers, key = String, by = recipient)]
struct ByRecipient;

/// The one transfer with a hash.
#[derive(Index)]
#[index(name = "by_hash", on = Transfers, key = [u8; 8], unique, by = hash)]
struct ByHash;

fn sender(_id: &TxId, t: &Transfer) -> String {
    t.from.clone()
}

fn recipient(_id: &TxId, t: &Transfer) -> String {
    t.to.clone()
}

fn hash(_id: &TxId, t: &Transfer) -> [u8; 8] {
    t.hash
}

/// Version 1: senders and hashes indexed.
#[derive(Schema)]
struct IndexerV1(Transfers, BySender, ByHash);

/// Version 2: recipients too.
#[derive(Schema)]
struct IndexerV2(Transfers, BySender, ByHash, ByRecipient);

const PEOPLE: [&str; 4] = ["alice", "bob", "carol", "dave"];

fn transfer(block: u64, position: u32) -> Transfer {
    let n = block as usize * 3 + position as usize;
    let mut hash = [0u8; 8];
    hash[..8].copy_from_slice(&(block * 1000 + u64::from(position)).to_be_bytes());
    Transfer {
        from: PEOPLE[n % 4].to_string(),
        to: PEOPLE[(n + 1 + block as usize) % 4].to_string(),
        amount: 10 * (n as u64 + 1),
        hash,
    }
}

fn ids(
    rows: impl Iterator<Item = tabula::Result<(TxId, Transfer)>>,
) -> tabula::Result<Vec<String>> {
    rows.map(|row| row.map(|(id, _)| format!("{}.{}", id.block, id.position)))
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;

    // Version 1: index blocks 1..=10, three transfers each.
    {
        let db = tabula::open::<IndexerV1>(dir.path(), Options::new())?;
        let mut tx = db.write()?;
        for block in 1..=10u64 {
            for position in 0..3u32 {
                tx.append::<Transfers>(&TxId { block, position }, &transfer(block, position))?;
            }
        }
        // A hash is unique: a second transfer with one fails, and nothing of it is written.
        let mut copy = transfer(11, 0);
        copy.hash = transfer(4, 1).hash;
        match tx.put::<Transfers>(
            &TxId {
                block: 11,
                position: 0,
            },
            &copy,
        ) {
            Err(e @ Error::UniqueViolation { .. }) => println!("refused: {e}"),
            other => panic!("expected a unique violation, got {other:?}"),
        }
        tx.commit()?;

        let tx = db.read()?;
        println!("transfers: {}", tx.len::<Transfers>()?);
        println!("sent by bob: {:?}", ids(tx.by_index::<BySender>("bob"))?);
        println!(
            "sent by bob, latest first: {:?}",
            ids(tx.by_index::<BySender>("bob").rev().take(3))?
        );
        let (id, found) = tx
            .get_unique::<ByHash>(&transfer(4, 1).hash)?
            .expect("indexed");
        println!(
            "hash of 4.1 -> {}.{} ({} -> {})",
            id.block, id.position, found.from, found.to
        );
        println!(
            "senders: {}",
            tx.index_count::<BySender>("alice")?
                + tx.index_count::<BySender>("bob")?
                + tx.index_count::<BySender>("carol")?
                + tx.index_count::<BySender>("dave")?
        );
        // Index keys in order, here the senders from "b" up to (not including) "d".
        let range: Vec<String> = tx
            .index_range::<BySender>("b".to_string().."d".to_string())
            .filter_map(|row| row.ok())
            .filter(|(_, id, _)| id.block == 1)
            .map(|(from, id, _)| format!("{from}:{}.{}", id.block, id.position))
            .collect();
        println!("block 1 senders in b..d: {range:?}");
        // Deleting a block's transfers takes their index entries with them.
        let mut tx = db.write()?;
        let gone = tx.delete_range::<Transfers>(
            TxId {
                block: 10,
                position: 0,
            }..TxId {
                block: 11,
                position: 0,
            },
        )?;
        tx.commit()?;
        println!("deleted block 10: {gone} transfers");
        println!("indexes check: {}", db.check_indexes(10)?.is_ok());
    }

    // Version 2 adds `by_recipient`: the startup step builds it from the 27 transfers.
    let (db, report) = tabula::open_with_report::<IndexerV2>(dir.path(), Options::new())?;
    println!("built: {:?}", report.indexes_built);
    let tx = db.read()?;
    println!(
        "received by carol: {:?}",
        ids(tx.by_index::<ByRecipient>("carol"))?
    );
    println!("recipient entries: {}", tx.len::<ByRecipient>()?);
    println!("indexes check: {}", db.check_indexes(10)?.is_ok());
    Ok(())
}
