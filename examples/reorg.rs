//! A chain reorganisation with tables declared `history`: node state (accounts, and storage
//! keyed by address and slot) whose every change Tabula records by block, so that the state
//! can be read as of any block and a fork unwound in one call. `chain_state.rs` keeps the same
//! state with changesets written and unwound by hand.
//!
//! The example applies a chain of blocks, reads the state as of earlier blocks, then a fork
//! arrives: the blocks after the fork point are unwound (`Tx::unwind`) and the other branch is
//! applied. Every step is checked against an in-memory model of the state after each block; a
//! mismatch panics.
//!
//! Run with `cargo run --example reorg [BLOCKS] [FORK_DEPTH] [SEED]` (1,000 blocks, a fork 64
//! blocks deep and seed 1 by default).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tabula::{History, Options, Schema, Table};

type Address = [u8; 20];
type Slot = [u8; 32];
/// A 256-bit word, big-endian.
type U256 = [u8; 32];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Account {
    nonce: u64,
    balance: u128,
}

/// Address → account, with its history.
#[derive(Table)]
#[table(name = "accounts", key = Address, value = Account, history)]
struct Accounts;

#[derive(History)]
#[history(on = Accounts, name = "accounts_history")]
struct AccountsHistory;

/// (address, slot) → value, with its history. A zero value is not stored.
#[derive(Table)]
#[table(name = "storage", key = (Address, Slot), value = U256, history)]
struct Storage;

#[derive(History)]
#[history(on = Storage, name = "storage_history")]
struct StorageHistory;

#[derive(Schema)]
struct Chain(Accounts, AccountsHistory, Storage, StorageHistory);

/// The state as plain maps: what the database must hold.
#[derive(Debug, Clone, Default, PartialEq)]
struct State {
    accounts: BTreeMap<Address, Account>,
    storage: BTreeMap<(Address, Slot), U256>,
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn address(&mut self) -> Address {
        let mut a = [0u8; 20];
        a[..8].copy_from_slice(&self.below(200).to_be_bytes());
        a
    }

    fn slot(&mut self) -> Slot {
        let mut s = [0u8; 32];
        s[24..].copy_from_slice(&self.below(64).to_be_bytes());
        s
    }
}

/// Applies one random block to the database (in `tx`, at version `number`) and to `state`.
fn apply_block(
    tx: &mut tabula::RwTx<'_, Chain>,
    rng: &mut Rng,
    state: &mut State,
    number: u64,
) -> tabula::Result<()> {
    tx.set_version(number);
    for _ in 0..1 + rng.below(5) {
        let address = rng.address();
        let nonce = state.accounts.get(&address).map_or(0, |a| a.nonce + 1);
        let account = Account {
            nonce,
            balance: u128::from(rng.next()),
        };
        tx.put::<Accounts>(&address, &account)?;
        state.accounts.insert(address, account);
    }
    for _ in 0..rng.below(8) {
        let key = (rng.address(), rng.slot());
        if rng.below(5) == 0 {
            // A cleared slot.
            tx.delete::<Storage>(&key)?;
            state.storage.remove(&key);
        } else {
            let mut value = [0u8; 32];
            value[16..24].copy_from_slice(&rng.next().to_be_bytes());
            tx.put::<Storage>(&key, &value)?;
            state.storage.insert(key, value);
        }
    }
    Ok(())
}

/// Everything the state tables hold.
fn read_state(db: &tabula::Db<Chain>) -> tabula::Result<State> {
    let tx = db.read()?;
    Ok(State {
        accounts: tx.iter::<Accounts>().collect::<tabula::Result<_>>()?,
        storage: tx.iter::<Storage>().collect::<tabula::Result<_>>()?,
    })
}

/// Every account and slot of `state` (and of `now`, which may hold keys `state` lacks) read as
/// of `block` agrees with `state`.
fn check_as_of(
    db: &tabula::Db<Chain>,
    block: u64,
    state: &State,
    now: &State,
) -> tabula::Result<usize> {
    let tx = db.read()?;
    let mut reads = 0;
    for address in state.accounts.keys().chain(now.accounts.keys()) {
        let got = tx.get_as_of::<Accounts>(address, block)?;
        assert_eq!(
            got.as_ref(),
            state.accounts.get(address),
            "account as of {block}"
        );
        reads += 1;
    }
    for key in state.storage.keys().chain(now.storage.keys()) {
        let got = tx.get_as_of::<Storage>(key, block)?;
        assert_eq!(got.as_ref(), state.storage.get(key), "slot as of {block}");
        reads += 1;
    }
    Ok(reads)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let blocks: u64 = args.next().map_or(Ok(1_000), |a| a.parse())?;
    let depth: u64 = args.next().map_or(Ok(64), |a| a.parse())?;
    let seed: u64 = args.next().map_or(Ok(1), |a| a.parse())?;
    let fork = blocks.saturating_sub(depth);
    let dir = tempfile::tempdir()?;
    let db = tabula::open::<Chain>(dir.path(), Options::new().max_size(1 << 30))?;

    // The canonical chain: one transaction per block, the model's state after each kept.
    let mut rng = Rng(seed.max(1));
    let mut state = State::default();
    let mut after: Vec<State> = vec![State::default()]; // after[n]: the state after block n
    for number in 1..=blocks {
        let mut tx = db.write()?;
        apply_block(&mut tx, &mut rng, &mut state, number)?;
        tx.commit()?;
        after.push(state.clone());
    }
    assert!(read_state(&db)? == state, "state after block {blocks}");
    println!(
        "applied {blocks} blocks: {} accounts, {} storage slots",
        state.accounts.len(),
        state.storage.len()
    );

    // Reads as of earlier blocks.
    let mut reads = 0;
    for block in [0, 1, blocks / 2, fork, blocks - 1, blocks] {
        reads += check_as_of(&db, block, &after[block as usize], &state)?;
    }
    println!("read {reads} accounts and slots as of 6 earlier blocks: all match the model");

    // A fork at block `fork`: unwind the blocks after it, in one transaction.
    let mut tx = db.write()?;
    let undone = tx.unwind(fork)?;
    tx.commit()?;
    state = after[fork as usize].clone();
    after.truncate(fork as usize + 1);
    assert!(read_state(&db)? == state, "state after the unwind");
    println!(
        "unwound {depth} blocks to block {fork}: {undone} changes undone; the state matches the \
         model at block {fork}"
    );

    // The other branch: as many blocks again, different ones.
    let mut rng = Rng(seed.wrapping_mul(31).max(1));
    for number in fork + 1..=blocks {
        let mut tx = db.write()?;
        apply_block(&mut tx, &mut rng, &mut state, number)?;
        tx.commit()?;
        after.push(state.clone());
    }
    assert!(read_state(&db)? == state, "state on the new branch");
    let mut reads = 0;
    for block in [fork - 1, fork, fork + 1, blocks] {
        reads += check_as_of(&db, block, &after[block as usize], &state)?;
    }
    println!(
        "applied the other branch, blocks {} to {blocks}: the state and {reads} reads as of \
         blocks around the fork match the model",
        fork + 1
    );
    assert!(db.check()?.is_ok());
    Ok(())
}
