//! What the kernel did with a variant's data-file mapping: investigation only (get_cold).
//!
//! libmdbx and LMDB both `mmap` the data file and read pages through the mapping, so a random
//! get over a table larger than the TLB's reach costs page walks whose number depends on how
//! the kernel maps the file: 4 KiB PTEs, or 2 MiB PMD entries over large page-cache folios
//! (`FilePmdMapped` in `/proc/self/smaps`). This module reads that report and the minor fault
//! counter, and can apply an `madvise` to a file's mapping, so the get workload can compare the
//! libraries' mappings while their read transactions are live.
//!
//! Printing is off unless `TABULA_BENCH_VM=1`; the `madvise` helpers are used by investigation
//! rows only.

use std::path::{Path, PathBuf};

/// Whether `TABULA_BENCH_VM` asks for the mapping reports.
pub fn enabled() -> bool {
    std::env::var_os("TABULA_BENCH_VM").is_some_and(|v| v != "0")
}

/// Minor page faults of this process so far (`getrusage(RUSAGE_SELF).ru_minflt`).
pub fn minor_faults() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` for the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc == 0 { usage.ru_minflt as u64 } else { 0 }
}

/// One VMA of `/proc/self/smaps` that maps a given file.
#[derive(Clone, Debug, Default)]
pub struct Vma {
    /// First address.
    pub start: usize,
    /// One past the last address.
    pub end: usize,
    /// `Rss`, KiB.
    pub rss_kib: u64,
    /// `FilePmdMapped`, KiB: file pages mapped by 2 MiB PMD entries.
    pub file_pmd_kib: u64,
    /// `AnonHugePages`, KiB.
    pub anon_huge_kib: u64,
    /// `MMUPageSize`, KiB.
    pub mmu_page_kib: u64,
    /// `VmFlags`, as the kernel prints them (`rr` = MADV_RANDOM, `hg`/`nh` = MADV_(NO)HUGEPAGE).
    pub vm_flags: String,
}

impl Vma {
    /// Whether the mapping starts on a 2 MiB boundary (a PMD can only map aligned file ranges
    /// to aligned addresses).
    pub fn aligned_2m(&self) -> bool {
        self.start.is_multiple_of(2 << 20)
    }
}

/// Every VMA of this process that maps `file` (canonicalised), in address order.
pub fn mappings_of(file: &Path) -> Vec<Vma> {
    let want: PathBuf = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let Ok(text) = std::fs::read_to_string("/proc/self/smaps") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cur: Option<Vma> = None;
    for line in text.lines() {
        if let Some(vma) = parse_header(line) {
            if let Some(done) = cur.take() {
                out.push(done);
            }
            cur = vma.1.filter(|p| Path::new(p) == want).map(|_| vma.0);
            continue;
        }
        let Some(v) = cur.as_mut() else { continue };
        let (key, rest) = line.split_once(':').unwrap_or((line, ""));
        let kib = || {
            rest.split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        match key {
            "Rss" => v.rss_kib = kib(),
            "FilePmdMapped" => v.file_pmd_kib = kib(),
            "AnonHugePages" => v.anon_huge_kib = kib(),
            "MMUPageSize" => v.mmu_page_kib = kib(),
            "VmFlags" => v.vm_flags = rest.trim().to_string(),
            _ => {}
        }
    }
    if let Some(done) = cur {
        out.push(done);
    }
    out
}

/// A VMA header line (`start-end perms offset dev inode [path]`): the VMA and its path.
fn parse_header(line: &str) -> Option<(Vma, Option<String>)> {
    let mut parts = line.split_whitespace();
    let range = parts.next()?;
    let (a, b) = range.split_once('-')?;
    let start = usize::from_str_radix(a, 16).ok()?;
    let end = usize::from_str_radix(b, 16).ok()?;
    let perms = parts.next()?;
    if perms.len() != 4 {
        return None;
    }
    let path = parts.nth(3).map(str::to_string);
    Some((
        Vma {
            start,
            end,
            ..Vma::default()
        },
        path,
    ))
}

/// One line per VMA of `file`: what `TABULA_BENCH_VM=1` prints for a variant.
pub fn describe(label: &str, file: &Path) -> String {
    let vmas = mappings_of(file);
    if vmas.is_empty() {
        return format!("  [vm] {label}: no mapping of {} found\n", file.display());
    }
    let mut s = String::new();
    for v in vmas {
        s += &format!(
            "  [vm] {label}: {:#x} +{} MiB aligned_2M={} Rss={} kB FilePmdMapped={} kB \
             AnonHugePages={} kB MMUPageSize={} kB VmFlags=[{}]\n",
            v.start,
            (v.end - v.start) >> 20,
            v.aligned_2m(),
            v.rss_kib,
            v.file_pmd_kib,
            v.anon_huge_kib,
            v.mmu_page_kib,
            v.vm_flags
        );
    }
    s
}

/// Applies `advice` (`libc::MADV_*`) to every VMA mapping `file`; returns how many it changed.
///
/// # Panics
///
/// If `madvise` fails.
pub fn madvise_file(file: &Path, advice: libc::c_int) -> usize {
    let vmas = mappings_of(file);
    for v in &vmas {
        // SAFETY: [start, end) is a whole VMA of this process mapping `file` (just read from
        // smaps); the advice values used here (HUGEPAGE, NOHUGEPAGE, RANDOM, NORMAL) change how
        // the kernel maps or reads ahead, never the contents of the mapping.
        let rc = unsafe { libc::madvise(v.start as *mut libc::c_void, v.end - v.start, advice) };
        assert_eq!(
            rc,
            0,
            "madvise({advice}): {}",
            std::io::Error::last_os_error()
        );
    }
    vmas.len()
}

/// Minor faults and mapping state around one variant's timed get loops.
pub struct Probe {
    label: String,
    file: PathBuf,
    faults: Vec<u64>,
}

impl Probe {
    /// A probe for variant `label` whose data file is `file`.
    pub fn new(label: &str, file: PathBuf) -> Self {
        Probe {
            label: label.to_string(),
            file,
            faults: Vec::new(),
        }
    }

    /// Runs one timed repetition, counting the minor faults it takes.
    pub fn rep<T>(&mut self, run: impl FnOnce() -> T) -> T {
        let before = minor_faults();
        let out = run();
        self.faults.push(minor_faults() - before);
        out
    }

    /// Prints the mapping report (call while the read txn is live) when enabled.
    pub fn report(&self, gets: usize) {
        if !enabled() {
            return;
        }
        let per: Vec<String> = self
            .faults
            .iter()
            .map(|f| format!("{f} ({:.4}/get)", *f as f64 / gets as f64))
            .collect();
        print!(
            "  [vm] {}: minor faults per rep: {}\n{}",
            self.label,
            per.join(", "),
            describe(&self.label, &self.file)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_mapped_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 16]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: a fresh read-only private mapping of a file this test owns, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                1 << 16,
                libc::PROT_READ,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&file),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let vmas = mappings_of(&path);
        assert_eq!(vmas.len(), 1);
        assert_eq!(vmas[0].start, p as usize);
        assert_eq!(madvise_file(&path, libc::MADV_RANDOM), 1);
        assert!(mappings_of(&path)[0].vm_flags.contains("rr"));
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(p, 1 << 16) };
    }
}
