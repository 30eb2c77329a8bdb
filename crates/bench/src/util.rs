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
    let probes = probes();
    let cpu = probes.cpu.then(|| (on_cpu_ns(), minor_faults()));
    let perf = probes.perf_for_this_call();
    if let Some(ctl) = &perf {
        ctl.send("enable");
    }
    let t = Instant::now();
    f();
    let wall = t.elapsed();
    if let Some(ctl) = &perf {
        ctl.send("disable");
    }
    if let Some((Some(before), faults_before)) = cpu
        && let Some(after) = on_cpu_ns()
    {
        let on = after.saturating_sub(before);
        let faults = faults_before
            .zip(minor_faults())
            .map_or(String::new(), |(b, a)| {
                format!(", {} minor page faults", a.saturating_sub(b))
            });
        eprintln!(
            "timed: {:.1} ms wall, {:.1} ms on this thread's CPU, {:.1} ms off it{faults}",
            wall.as_secs_f64() * 1e3,
            on as f64 / 1e6,
            (wall.as_nanos() as f64 - on as f64) / 1e6
        );
    }
    wall
}

/// This thread's time on a CPU so far, in nanoseconds (the first field of
/// `/proc/thread-self/schedstat`); `None` where the kernel does not say.
fn on_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// This thread's minor page faults so far (field 10 of `/proc/thread-self/stat`, counted after
/// the command name's closing parenthesis); `None` where the kernel does not say.
fn minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(7)?.parse().ok()
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

/// What `TABULA_BENCH_CPU` and `TABULA_BENCH_PERF_CTL` / `TABULA_BENCH_PERF_NTH` ask of
/// [`time`], read from the environment once (not in every timed call: callgrind's figures
/// toggled on `time` count what it does around the closure).
struct Probes {
    /// Print each closure's time on the CPU, time off it and minor page faults.
    cpu: bool,
    /// perf's fifos and which call of [`time`] (1 for the first) they are for.
    perf: Option<(PerfControl, u64)>,
    /// Calls of [`time`] so far, counted only while `perf` is set.
    calls: std::sync::atomic::AtomicU64,
}

impl Probes {
    fn perf_for_this_call(&self) -> Option<&PerfControl> {
        let (ctl, nth) = self.perf.as_ref()?;
        let call = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        (call == *nth).then_some(ctl)
    }
}

fn probes() -> &'static Probes {
    static PROBES: std::sync::OnceLock<Probes> = std::sync::OnceLock::new();
    PROBES.get_or_init(|| {
        let perf = std::env::var("TABULA_BENCH_PERF_CTL")
            .ok()
            .zip(std::env::var("TABULA_BENCH_PERF_NTH").ok())
            .and_then(|(spec, nth)| {
                let (ctl, ack) = spec.split_once(',')?;
                let control = PerfControl {
                    ctl: ctl.into(),
                    ack: ack.into(),
                };
                Some((control, nth.parse().ok()?))
            });
        Probes {
            cpu: std::env::var_os("TABULA_BENCH_CPU").is_some(),
            perf,
            calls: std::sync::atomic::AtomicU64::new(0),
        }
    })
}

/// `perf record --control fifo:CTL,ACK -D -1`'s two fifos: [`time`] sends `enable` before the
/// closure it was asked for and `disable` after it, so perf samples that closure alone.
struct PerfControl {
    ctl: std::path::PathBuf,
    ack: std::path::PathBuf,
}

impl PerfControl {
    fn send(&self, command: &str) {
        use std::io::{Read, Write};
        let mut ctl = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.ctl)
            .expect("perf's control fifo");
        ctl.write_all(format!("{command}\n").as_bytes())
            .expect("a command to perf");
        let mut ack = [0u8; 5];
        std::fs::File::open(&self.ack)
            .and_then(|mut f| f.read_exact(&mut ack))
            .expect("perf's acknowledgement");
    }
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
