//! The randomness of every randomised test: one seed per test, drawn fresh each run and printed,
//! or taken from [`SEED_VAR`] to replay a run; one generator (splitmix64) drawn from it.
//!
//! Included by path (`#[path = "support/random.rs"] mod random;`) at the root of a test crate,
//! here and in `crates/*/tests`; it needs only `std`.
#![allow(dead_code)] // each test file uses a part

/// The one environment variable that replays a random test: `TABULA_SEED=<seed>`, with the
/// seed the test printed.
pub const SEED_VAR: &str = "TABULA_SEED";

/// The seed of the random test `what`: the one in [`SEED_VAR`] to replay a run, or a fresh one;
/// printed either way with the line that replays it.
///
/// # Panics
///
/// If [`SEED_VAR`] is set to something other than a `u64`.
pub fn seed(what: &str) -> u64 {
    let seed = match std::env::var(SEED_VAR) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_VAR}={s:?} is not a seed (a u64)")),
        Err(_) => {
            // Fresh per run and per call: the clock mixed with the process ID and the caller.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            let mut h = nanos ^ u64::from(std::process::id()) << 32;
            for b in what.bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
            mix(h)
        }
    };
    eprintln!("{what}: seed {seed} (replay with {SEED_VAR}={seed})");
    seed
}

/// splitmix64's step: a bijection of `u64` that scatters nearby inputs, so the n-th random
/// number of a seed can be drawn directly as `mix(seed ^ n)`.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// splitmix64: a stream of random numbers from one seed (any `u64`, zero included).
pub struct Rng(u64);

impl Rng {
    /// The stream of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        let out = mix(self.0);
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        out
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}
