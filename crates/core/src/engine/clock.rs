//! A coarse monotonic clock for the long-read warning.

/// A monotonic clock reading in nanoseconds, cheap enough to take on every read transaction:
/// `CLOCK_MONOTONIC_COARSE` is read from the vDSO without a syscall (a few ns, a few ms of
/// resolution). Used to warn about long-lived read transactions, nothing finer. Nanoseconds
/// because they take one multiply-add from the `timespec` (milliseconds need a division).
#[inline]
pub(crate) fn coarse_now_ns() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out-parameter; CLOCK_MONOTONIC_COARSE exists on every Linux
        // since 2.6.32 and the call cannot fail with a valid clock and pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        BASE.get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
}

/// [`coarse_now_ns`] in milliseconds.
#[inline]
pub(crate) fn coarse_now_ms() -> u64 {
    coarse_now_ns() / 1_000_000
}
