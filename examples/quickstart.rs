//! Quickstart: declare three tables (one with a composite key, one dupsort), open the database
//! once, write, read, range-scan, reopen, and show that the data survived.
//!
//! Run with `cargo run --example quickstart [PATH]` (a temp dir when PATH is omitted).

use serde::{Deserialize, Serialize};
use tabula::{Key, Options, Schema, Table};

/// A block header, stored with serde + bincode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    parent: u64,
    timestamp: u64,
    miner: String,
}

/// Block number → header.
#[derive(Table)]
#[table(key = u64, value = Header)]
struct Headers;

/// A composite key: one account's balance at one block. Fields sort in declaration order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Key)]
struct AccountAt {
    account: String,
    block: u64,
}

/// (account, block) → balance.
#[derive(Table)]
#[table(name = "balances", key = AccountAt, value = u128)]
struct Balances;

/// Block number → the topics logged in it: many sorted values per key.
#[derive(Table)]
#[table(name = "topics", key = u64, value = String, dupsort)]
struct Topics;

/// The schema: every table, opened once at startup. Table IDs are positions, fixed at compile time.
#[derive(Schema)]
struct Chain(Headers, Balances, Topics);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temp;
    let path = match std::env::args_os().nth(1) {
        Some(p) => std::path::PathBuf::from(p),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().join("chain")
        }
    };

    println!(
        "opening {} (creates the tables on first run)",
        path.display()
    );
    let (db, report) = tabula::open_with_report::<Chain>(&path, Options::new())?;
    println!(
        "  created: {:?}, verified: {:?}",
        report.created, report.verified
    );

    // One write transaction: three tables, committed atomically.
    let mut tx = db.write()?;
    for n in 1..=5u64 {
        let header = Header {
            parent: n - 1,
            timestamp: 1_700_000_000 + 12 * n,
            miner: format!("miner-{}", n % 2),
        };
        tx.append::<Headers>(&n, &header)?; // keys arrive in order: the append fast path
        tx.put::<Topics>(&n, &format!("transfer#{n}"))?;
        tx.put::<Topics>(&n, &"approval".to_string())?;
    }
    for (account, block, balance) in [("alice", 1, 100u128), ("alice", 3, 70), ("bob", 2, 5)] {
        let key = AccountAt {
            account: account.into(),
            block,
        };
        tx.put::<Balances>(&key, &balance)?;
    }
    tx.commit()?;
    println!("wrote 5 headers, 10 topics, 3 balances in one transaction");

    // Reads: point get, range scan, reverse scan, prefix scan, dupsort values.
    let tx = db.read()?;
    let h3 = tx.get::<Headers>(&3)?.expect("header 3 was written");
    println!("get Headers[3] = {h3:?}");
    print!("range Headers[2..4] =");
    for entry in tx.range::<Headers>(2..4) {
        let (n, h) = entry?;
        print!(" {n}:{}", h.miner);
    }
    println!();
    let newest: Vec<u64> = tx
        .iter::<Headers>()
        .keys()
        .rev()
        .take(2)
        .collect::<Result<_, _>>()?;
    println!("newest two headers = {newest:?}");
    print!("prefix balances[alice] =");
    for entry in tx.prefix::<Balances>(&"alice".to_string()) {
        let (key, balance) = entry?;
        print!(" block {}: {balance}", key.block);
    }
    println!();
    let topics: Vec<String> = tx.dups::<Topics>(&4).values().collect::<Result<_, _>>()?;
    println!("dupsort Topics[4] = {topics:?}");
    drop(tx);

    // Close and reopen: the startup step now verifies the tables instead of creating them.
    drop(db);
    let (db, report) = tabula::open_with_report::<Chain>(&path, Options::new())?;
    println!(
        "reopened: created {:?}, verified {:?}",
        report.created, report.verified
    );
    let tx = db.read()?;
    let survived = tx.get::<Headers>(&3)? == Some(h3);
    println!(
        "after reopen: {} headers, {} balances, {} topics; Headers[3] unchanged: {survived}",
        tx.len::<Headers>()?,
        tx.len::<Balances>()?,
        tx.len::<Topics>()?
    );
    assert!(survived, "data must survive a reopen");
    Ok(())
}
