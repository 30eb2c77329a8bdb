//! The peer benchmark's data (issue 26): 24-byte random keys and 150-byte random values, the
//! same for every variant, with the checksums a pass folds what it read into, and the sorted
//! model of what a store holds after each phase of `big_txn`.

use crate::data::{entry_sum, fold_words, mix};
use crate::util::XorShift;

/// Key length in bytes.
pub const KEY_LEN: usize = 24;
/// Value length in bytes.
pub const VALUE_LEN: usize = 150;

/// A key.
pub type Key = [u8; KEY_LEN];

/// `n` random keys from `seed` (uniform bytes: duplicates have a chance of about n²/2¹⁹³).
pub fn keys(seed: u64, n: usize) -> Vec<Key> {
    let mut rng = XorShift::new(seed);
    (0..n).map(|_| next_key(&mut rng)).collect()
}

/// The next key of a stream.
pub fn next_key(rng: &mut XorShift) -> Key {
    let mut k = [0u8; KEY_LEN];
    for chunk in k.chunks_exact_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    k
}

/// The value stored under `key`: 150 bytes, every word a function of the key and its place.
#[inline]
pub fn value_of(key: &[u8]) -> [u8; VALUE_LEN] {
    let seed = mix(u64::from_le_bytes(key[..8].try_into().expect("8 bytes"))
        ^ u64::from_le_bytes(key[8..16].try_into().expect("8 bytes")).rotate_left(21)
        ^ u64::from_le_bytes(key[16..24].try_into().expect("8 bytes")).rotate_left(42));
    let mut v = [0u8; VALUE_LEN];
    for (i, chunk) in v.chunks_mut(8).enumerate() {
        let w = mix(seed.wrapping_add(i as u64)).to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
    v
}

/// What reading entry (`key`, `value`) adds to a checksum: every byte of both.
#[inline]
pub fn pair_sum(key: &[u8], value: &[u8]) -> u64 {
    entry_sum(fold_words(key), fold_words(value))
}

/// The checksum of the entry stored under `key` (its value being [`value_of`]).
#[inline]
pub fn stored_sum(key: &Key) -> u64 {
    pair_sum(key, &value_of(key))
}

/// A store's contents: entry count and the wrapping sum of [`pair_sum`] over every entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct State {
    /// Entries.
    pub count: u64,
    /// Checksum.
    pub sum: u64,
}

impl State {
    /// Adds one entry read.
    #[inline]
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(pair_sum(key, value));
    }
}

/// The keys a store must hold, sorted: the model each phase is checked against.
#[derive(Clone, Debug, Default)]
pub struct Model {
    live: Vec<Key>,
}

impl Model {
    /// After inserting `keys` into an empty table.
    pub fn inserted(keys: &[Key]) -> Model {
        let mut live = keys.to_vec();
        live.sort_unstable();
        live.dedup();
        Model { live }
    }

    /// Adds `keys`.
    pub fn insert(&mut self, keys: &[Key]) {
        self.live.extend_from_slice(keys);
        self.live.sort_unstable();
        self.live.dedup();
    }

    /// After deleting `keys` (absent ones are ignored).
    pub fn delete(&mut self, keys: &[Key]) {
        let mut gone = keys.to_vec();
        gone.sort_unstable();
        self.live.retain(|k| gone.binary_search(k).is_err());
    }

    /// After keeping the entries at even positions (0, 2, 4, … in key order); returns how many
    /// went.
    pub fn retain_even(&mut self) -> u64 {
        let before = self.live.len();
        self.live = self.live.iter().step_by(2).copied().collect();
        (before - self.live.len()) as u64
    }

    /// After `n` pops alternating first (even calls) and last (odd calls); returns the
    /// checksum of what the pops return.
    pub fn pop_alternating(&mut self, n: usize) -> u64 {
        let n = n.min(self.live.len());
        let front = n.div_ceil(2);
        let back = n / 2;
        let len = self.live.len();
        let popped = self.live[..front]
            .iter()
            .chain(&self.live[len - back..])
            .fold(0u64, |s, k| s.wrapping_add(stored_sum(k)));
        self.live.truncate(len - back);
        self.live.drain(..front);
        popped
    }

    /// The checksum of `len` entries read from the first key `>= start`, for each start.
    pub fn range_sum(&self, starts: &[Key], len: usize) -> u64 {
        starts.iter().fold(0u64, |s, start| {
            let at = self.live.partition_point(|k| k < start);
            self.live[at..(at + len).min(self.live.len())]
                .iter()
                .fold(s, |s, k| s.wrapping_add(stored_sum(k)))
        })
    }

    /// The state a store holding these keys has.
    pub fn state(&self) -> State {
        State {
            count: self.live.len() as u64,
            sum: self
                .live
                .iter()
                .fold(0u64, |s, k| s.wrapping_add(stored_sum(k))),
        }
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}

/// Panics unless `got` is the state the model says.
#[track_caller]
pub fn check_state(what: &str, got: State, want: State) {
    assert_eq!(
        got.count, want.count,
        "{what}: the store holds {} entries, the operations leave {}",
        got.count, want.count
    );
    crate::data::verify(what, got.sum, want.sum);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_pops_from_both_ends_and_keeps_even_positions() {
        let keys: Vec<Key> = (0u8..10).map(|i| [i; KEY_LEN]).collect();
        let mut m = Model::inserted(&keys);
        assert_eq!(m.retain_even(), 5); // 0 2 4 6 8
        let popped = m.pop_alternating(3); // 0, 8, 2
        let want = [0u8, 8, 2]
            .iter()
            .fold(0u64, |s, &i| s.wrapping_add(stored_sum(&[i; KEY_LEN])));
        assert_eq!(popped, want);
        assert_eq!(m.live, [[4u8; KEY_LEN], [6; KEY_LEN]]);
        assert_eq!(m.range_sum(&[[5; KEY_LEN]], 10), stored_sum(&[6; KEY_LEN]));
        m.delete(&[[6; KEY_LEN], [7; KEY_LEN]]);
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn values_depend_on_the_whole_key() {
        let a = [1u8; KEY_LEN];
        let mut b = a;
        b[23] ^= 1;
        assert_ne!(value_of(&a), value_of(&b));
        assert_ne!(stored_sum(&a), stored_sum(&b));
    }
}
