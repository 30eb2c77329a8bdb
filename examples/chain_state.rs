//! Node state the way reth and Erigon keep it: plain state tables, storage as a dupsort table
//! with a subkey (address → slot → value), and changesets keyed by block that record the
//! values before each block, so the last blocks can be unwound by walking the changesets
//! backwards with write cursors.
//!
//! The example imports a few thousand blocks of random account and storage changes, looks up
//! storage slots by address and slot, then unwinds the last 100 blocks. Every step is checked
//! against an in-memory model (`BTreeMap`s); a mismatch panics.
//!
//! Run with `cargo run --example chain_state [BLOCKS] [SEED]` (3,000 blocks, seed 1 by default).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use tabula::{Key, Options, Schema, Table};

type Address = [u8; 20];
type Slot = [u8; 32];
/// A 256-bit word, big-endian.
type U256 = [u8; 32];

const ZERO: U256 = [0; 32];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Account {
    nonce: u64,
    balance: u128,
}

/// Address → account.
#[derive(Table)]
#[table(name = "PlainAccountState", key = Address, value = Account)]
struct PlainAccountState;

/// Address → (slot, value), sorted by slot. A zero value is not stored.
#[derive(Table)]
#[table(name = "PlainStorageState", key = Address, subkey = Slot, value = U256, dupsort)]
struct PlainStorageState;

/// Block → (address, the account before the block; `None`: it did not exist).
#[derive(Table)]
#[table(name = "AccountChangeSets", key = u64, subkey = Address, value = Option<Account>, dupsort)]
struct AccountChangeSets;

/// (block, address): the key of a storage changeset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Key)]
struct BlockAddress {
    block: u64,
    address: Address,
}

/// (block, address) → (slot, the value before the block).
#[derive(Table)]
#[table(name = "StorageChangeSets", key = BlockAddress, subkey = Slot, value = U256, dupsort)]
struct StorageChangeSets;

#[derive(Schema)]
struct Chain(
    PlainAccountState,
    PlainStorageState,
    AccountChangeSets,
    StorageChangeSets,
);

/// The state as plain maps: what the database must hold.
#[derive(Debug, Clone, Default, PartialEq)]
struct State {
    accounts: BTreeMap<Address, Account>,
    storage: BTreeMap<Address, BTreeMap<Slot, U256>>,
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
        a[19] = 0xaa;
        a
    }

    fn slot(&mut self) -> Slot {
        let mut s = [0u8; 32];
        s[24..].copy_from_slice(&self.below(64).to_be_bytes());
        s
    }

    fn word(&mut self) -> U256 {
        if self.below(5) == 0 {
            return ZERO; // a cleared slot
        }
        let mut w = [0u8; 32];
        w[16..24].copy_from_slice(&self.next().to_be_bytes());
        w
    }
}

/// One block's changes: new accounts and storage values.
struct Block {
    accounts: BTreeMap<Address, Account>,
    storage: BTreeMap<(Address, Slot), U256>,
}

fn random_block(rng: &mut Rng, state: &State) -> Block {
    let mut block = Block {
        accounts: BTreeMap::new(),
        storage: BTreeMap::new(),
    };
    for _ in 0..rng.below(6) {
        let address = rng.address();
        let before = state.accounts.get(&address).copied().unwrap_or(Account {
            nonce: 0,
            balance: 0,
        });
        block.accounts.insert(
            address,
            Account {
                nonce: before.nonce + 1,
                balance: u128::from(rng.next()),
            },
        );
    }
    for _ in 0..rng.below(8) {
        block
            .storage
            .insert((rng.address(), rng.slot()), rng.word());
    }
    block
}

/// Applies one block: the state tables get the new values, the changesets what they replace.
fn import(tx: &mut tabula::RwTx<'_, Chain>, number: u64, block: &Block) -> tabula::Result<()> {
    // Account changesets: the block's addresses in order, each appended after the last.
    for (address, account) in &block.accounts {
        let before = tx.get::<PlainAccountState>(address)?;
        tx.append_dup::<AccountChangeSets>(&number, &(*address, before))?;
        tx.put::<PlainAccountState>(address, account)?;
    }
    let (mut storage, mut changes) = tx.cursors_mut::<(PlainStorageState, StorageChangeSets)>()?;
    for ((address, slot), value) in &block.storage {
        let before = match storage.get_dup(address, slot)? {
            Some((_, (_, before))) => before,
            None => ZERO,
        };
        let key = BlockAddress {
            block: number,
            address: *address,
        };
        changes.append_dup(&key, &(*slot, before))?;
        if *value == ZERO {
            if before != ZERO {
                storage.get_dup(address, slot)?;
                storage.delete_current()?;
            }
        } else {
            storage.upsert_dup(address, slot, value)?;
        }
    }
    Ok(())
}

fn apply(state: &mut State, block: &Block) {
    state
        .accounts
        .extend(block.accounts.iter().map(|(a, v)| (*a, *v)));
    for ((address, slot), value) in &block.storage {
        let slots = state.storage.entry(*address).or_default();
        if *value == ZERO {
            slots.remove(slot);
        } else {
            slots.insert(*slot, *value);
        }
        if slots.is_empty() {
            state.storage.remove(address);
        }
    }
}

/// Unwinds every block after `target`: walks both changeset tables backwards from their last
/// entry, restores what each entry recorded, and deletes the entry. Returns the entries undone.
fn unwind(tx: &mut tabula::RwTx<'_, Chain>, target: u64) -> tabula::Result<(u64, u64)> {
    let mut undone = (0, 0);
    let (mut changes, mut accounts) = tx.cursors_mut::<(AccountChangeSets, PlainAccountState)>()?;
    let mut change = changes.last()?;
    while let Some((block, (address, before))) = change {
        if block <= target {
            break;
        }
        match before {
            Some(account) => accounts.upsert(&address, &account)?,
            None => {
                if accounts.seek_exact(&address)?.is_some() {
                    accounts.delete_current()?;
                }
            }
        }
        changes.delete_current()?;
        undone.0 += 1;
        change = changes.prev()?;
    }
    drop((changes, accounts));

    let (mut changes, mut storage) = tx.cursors_mut::<(StorageChangeSets, PlainStorageState)>()?;
    let mut change = changes.last()?;
    while let Some((key, (slot, before))) = change {
        if key.block <= target {
            break;
        }
        if before == ZERO {
            if storage.get_dup(&key.address, &slot)?.is_some() {
                storage.delete_current()?;
            }
        } else {
            storage.upsert_dup(&key.address, &slot, &before)?;
        }
        changes.delete_current()?;
        undone.1 += 1;
        change = changes.prev()?;
    }
    Ok(undone)
}

/// Everything the state tables hold.
fn read_state(db: &tabula::Db<Chain>) -> tabula::Result<State> {
    let tx = db.read()?;
    let mut state = State::default();
    for entry in tx.iter::<PlainAccountState>() {
        let (address, account) = entry?;
        state.accounts.insert(address, account);
    }
    for entry in tx.iter::<PlainStorageState>() {
        let (address, (slot, value)) = entry?;
        state
            .storage
            .entry(address)
            .or_default()
            .insert(slot, value);
    }
    Ok(state)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let blocks: u64 = args.next().map_or(Ok(3_000), |a| a.parse())?;
    let seed: u64 = args.next().map_or(Ok(1), |a| a.parse())?;
    let unwound = 100.min(blocks);
    let target = blocks - unwound;
    let dir = tempfile::tempdir()?;
    let db = tabula::open::<Chain>(dir.path(), Options::new().max_size(1 << 30))?;

    // Import, 100 blocks per transaction, checking the state against the model as it goes.
    let mut rng = Rng(seed.max(1));
    let mut model = State::default();
    let mut at_target = State::default();
    let mut changed_slots = BTreeSet::new();
    for first in (1..=blocks).step_by(100) {
        let mut tx = db.write()?;
        for number in first..(first + 100).min(blocks + 1) {
            let block = random_block(&mut rng, &model);
            import(&mut tx, number, &block)?;
            apply(&mut model, &block);
            changed_slots.extend(block.storage.keys().copied());
            if number == target {
                at_target = model.clone();
            }
        }
        tx.commit()?;
        assert!(
            read_state(&db)? == model,
            "state after block {}",
            first + 99
        );
    }
    let tx = db.read()?;
    println!(
        "imported {blocks} blocks: {} accounts, {} storage slots, {} account changes, {} storage \
         changes",
        tx.len::<PlainAccountState>()?,
        tx.len::<PlainStorageState>()?,
        tx.len::<AccountChangeSets>()?,
        tx.len::<StorageChangeSets>()?,
    );

    // Storage lookups by address and slot: exact, and the first slot at or after one.
    let mut checked = 0;
    for (address, slot) in &changed_slots {
        let want = model
            .storage
            .get(address)
            .and_then(|s| s.get(slot))
            .copied();
        let got = tx
            .get_dup::<PlainStorageState>(address, slot)?
            .map(|(_, v)| v);
        assert_eq!(got, want, "slot lookup");
        let want = model
            .storage
            .get(address)
            .and_then(|s| s.range(*slot..).next())
            .map(|(s, v)| (*s, *v));
        assert_eq!(
            tx.seek_dup::<PlainStorageState>(address, slot)?,
            want,
            "slot seek"
        );
        checked += 1;
    }
    println!("looked up {checked} storage slots by address and slot: all match the model");
    drop(tx);

    // Unwind the last blocks with write cursors, in one transaction.
    let mut tx = db.write()?;
    let (accounts, slots) = unwind(&mut tx, target)?;
    tx.commit()?;
    assert!(read_state(&db)? == at_target, "state after the unwind");
    let tx = db.read()?;
    let left = tx.iter::<AccountChangeSets>().next_back().transpose()?;
    assert!(left.is_none_or(|(block, _)| block <= target));
    let left = tx.iter::<StorageChangeSets>().next_back().transpose()?;
    assert!(left.is_none_or(|(key, _)| key.block <= target));
    println!(
        "unwound {unwound} blocks to block {target}: {accounts} account and {slots} storage \
         changes undone; the state matches the model at block {target}"
    );
    drop(tx);
    assert!(db.check()?.is_ok());
    Ok(())
}
