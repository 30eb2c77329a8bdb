//! Shared helpers: the key sequence, timing, table names.

use std::ffi::CString;
use std::time::{Duration, Instant};

/// xorshift64*: a tiny deterministic PRNG, so every variant sees the same key sequence.
pub struct XorShift(u64);

impl XorShift {
    /// A generator from a non-zero seed.
    pub fn new(seed: u64) -> Self {
        XorShift(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (multiply-shift; the bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// `count` keys drawn uniformly from `0..entries`, the same for every variant.
pub fn key_sequence(seed: u64, entries: u64, count: usize) -> Vec<u64> {
    let mut rng = XorShift::new(seed);
    (0..count).map(|_| rng.below(entries)).collect()
}

/// The 32-byte value stored under key `i` in the get workloads.
pub fn value32(i: u64) -> [u8; 32] {
    let mut v = [0u8; 32];
    for chunk in v.chunks_exact_mut(8) {
        chunk.copy_from_slice(&i.to_le_bytes());
    }
    v
}

/// Runs `run` up to `reps` times and returns the median; a first run longer than fifteen
/// seconds is taken alone (the expensive variants are not worth repeating).
pub fn median_of(reps: usize, mut run: impl FnMut() -> Duration) -> Duration {
    let mut runs = vec![run()];
    if runs[0] < Duration::from_secs(15) {
        while runs.len() < reps {
            runs.push(run());
        }
    }
    runs.sort();
    runs[runs.len() / 2]
}

/// One variant of an [`interleaved`] measurement: its name and one timed pass.
pub type Pass<'a> = (String, Box<dyn FnMut() -> Duration + 'a>);

/// Runs every pass once untimed (page faults, allocator warm-up), then `rounds` interleaved
/// rounds — every pass once per round, the order rotating by one each round — and returns each
/// pass's median. Variants measured this way see the same machine: neither their order nor a
/// burst of foreign load favours one of them.
pub fn interleaved(rounds: usize, passes: &mut [Pass<'_>]) -> Vec<Duration> {
    for (_, pass) in passes.iter_mut() {
        pass();
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); passes.len()];
    for round in 0..rounds.max(1) {
        for j in 0..passes.len() {
            let i = (j + round) % passes.len();
            times[i].push((passes[i].1)());
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect()
}

/// Times one call of `f`. Never inlined: it is the function profiles count from
/// (`callgrind --toggle-collect='tabula_bench::util::time*'`, `docs/benchmarks.md`).
#[inline(never)]
pub fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

/// Nanoseconds per operation.
pub fn ns_per(d: Duration, ops: usize) -> f64 {
    d.as_nanos() as f64 / ops as f64
}

/// Millions of operations per second.
pub fn mops(d: Duration, ops: usize) -> f64 {
    ops as f64 / d.as_secs_f64() / 1e6
}

/// The name of the `i`-th filler table ("t00000", ...).
pub fn table_name(i: usize) -> String {
    format!("t{i:05}")
}

/// [`table_name`] as a C string.
pub fn table_cname(i: usize) -> CString {
    CString::new(table_name(i)).expect("no NUL")
}

/// [`table_name`] leaked to `'static`, as Tabula's startup step wants table names.
pub fn table_name_static(i: usize) -> &'static str {
    Box::leak(table_name(i).into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_rotates_and_takes_medians() {
        let order = std::cell::RefCell::new(Vec::new());
        let mut passes: Vec<Pass<'_>> = (0..3)
            .map(|i| {
                let order = &order;
                let mut n = 0u64;
                let pass: Box<dyn FnMut() -> Duration> = Box::new(move || {
                    order.borrow_mut().push(i);
                    n += 1;
                    Duration::from_millis(10 * i + n)
                });
                (format!("p{i}"), pass)
            })
            .collect();
        let medians = interleaved(3, &mut passes);
        // A warm-up pass each, then rounds starting at 0, 1, 2.
        assert_eq!(*order.borrow(), [0, 1, 2, 0, 1, 2, 1, 2, 0, 2, 0, 1]);
        // Timed calls 2..=4 of pass i return 10·i + 2..=4: the median is 10·i + 3.
        let want: Vec<Duration> = (0..3).map(|i| Duration::from_millis(10 * i + 3)).collect();
        assert_eq!(medians, want);
    }

    #[test]
    fn key_sequence_is_deterministic_and_in_range() {
        let a = key_sequence(7, 1024, 1000);
        assert_eq!(a, key_sequence(7, 1024, 1000));
        assert!(a.iter().all(|&k| k < 1024));
        assert_ne!(a, key_sequence(8, 1024, 1000));
    }
}
