//! Disk space: what must be reserved before libmdbx writes through a map, and how much is free.

use std::ffi::CString;
use std::path::Path;

use super::*;

/// Whether the disk space behind every page libmdbx may write through a writable map is
/// reserved: the condition for `MDBX_WRITEMAP`.
///
/// Through a writable map a page is written by a store to memory; when the file system has no
/// block for it at that moment the kernel can only kill the process (SIGBUS). libmdbx reserves
/// the space it grows the file by (`fallocate`), but on a tmpfs or ramfs it ignores `ENOSPC`
/// from that reservation (a workaround for its own tests), and on file systems without
/// `fallocate` it ignores `EOPNOTSUPP`: the file then grows with holes. Copy-on-write file
/// systems (btrfs, ZFS, bcachefs) need new blocks for every rewrite of a page, reserved or
/// not. Only ext4 and XFS are known to keep a reservation for later writes through a map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MapSpace {
    Reserved,
    /// Why not.
    Unreservable(String),
}

impl MapSpace {
    /// The verdict for a file system of type `f_type` (`statfs`).
    pub(crate) fn of_type(f_type: u64) -> MapSpace {
        const EXT4: u32 = 0xef53; // also ext2/ext3 (files without extents cannot fallocate)
        const XFS: u32 = 0x5846_5342;
        let name = match f_type as u32 {
            EXT4 | XFS => return MapSpace::Reserved,
            0x0102_1994 => "tmpfs (libmdbx ignores ENOSPC when it reserves space there)",
            0x8584_58f6 => "ramfs (libmdbx ignores ENOSPC when it reserves space there)",
            0x9123_683e => "btrfs (copy-on-write: rewriting a page needs new space)",
            0x2fc1_2fc1 => "ZFS (copy-on-write: rewriting a page needs new space)",
            0xca45_1a4e => "bcachefs (copy-on-write: rewriting a page needs new space)",
            0x794c_7630 => "overlayfs (the file system below is unknown)",
            0x6969 => "NFS",
            0x6573_5546 => "FUSE",
            0xf2f5_2010 => "F2FS (log-structured: rewriting a page needs new space)",
            _ => "",
        };
        MapSpace::Unreservable(if name.is_empty() {
            format!(
                "its file system (type {f_type:#x}) is not one known to keep reserved space for \
                 writes through a memory map (ext4, XFS)"
            )
        } else {
            format!("it is on {name}")
        })
    }

    /// The verdict for the file system holding `path` (`Reserved` when it cannot be asked:
    /// the check on the data file after the open decides then).
    #[cfg(target_os = "linux")]
    pub(crate) fn of_path(path: &Path) -> MapSpace {
        let Ok(cpath) = CString::new(path.as_os_str().as_encoded_bytes()) else {
            return MapSpace::Reserved;
        };
        // SAFETY: `statfs` is a plain C struct for which all-zero bytes are valid.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `cpath` is NUL-terminated and outlives the call; `fs` is a valid
        // out-parameter.
        if unsafe { libc::statfs(cpath.as_ptr(), &mut fs) } != 0 {
            return MapSpace::Reserved;
        }
        MapSpace::of_type(fs.f_type as u64)
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn of_path(_path: &Path) -> MapSpace {
        MapSpace::Reserved
    }
}

#[cold]
pub(crate) fn warn_write_map_off(path: &Path, why: &str) {
    tracing::warn!(
        target: "tabula",
        path = %path.display(),
        "write_map turned off for `{}`: {why}, so a write through the memory map could find no \
         disk space and kill the process (SIGBUS); libmdbx writes with pwrite instead, which \
         reports a full disk as an error",
        path.display()
    );
}

/// libmdbx's default reader slot count (`DEFAULT_READERS`).
const LIBMDBX_DEFAULT_READERS: u64 = 61;
/// A reader slot (`reader_slot_t`): txnid, tid, pid, two counters.
const READER_SLOT_BYTES: u64 = 32;
/// An upper bound of libmdbx's lock-file header (`sizeof(lck_t)`, under 1 KiB in 0.14.4);
/// `the_lock_file_reservation_covers_what_libmdbx_maps` pins it.
const LOCK_HEADER_BOUND: u64 = 2048;

/// The bytes libmdbx's lock file takes with `max_readers` slots: libmdbx sizes it as the header
/// plus the slots, rounded up to the system page (`lck_setup_locked`).
pub(crate) fn lock_file_len(max_readers: Option<u64>) -> u64 {
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let readers = max_readers.unwrap_or(LIBMDBX_DEFAULT_READERS).min(32767);
    (readers * READER_SLOT_BYTES + LOCK_HEADER_BOUND).div_ceil(page) * page
}

/// Reserves the disk space of libmdbx's lock file before libmdbx opens it.
///
/// The first process to open an environment (read-only ones too) creates and sizes the lock
/// file (reserving its space with `fallocate`, whose `ENOSPC` libmdbx ignores on a tmpfs) and
/// zeroes it through a writable memory map: on a full tmpfs that store is a SIGBUS. Reserving
/// the range here first, with `FALLOC_FL_KEEP_SIZE` (the file's size and contents stay as they
/// are, so a process that is opening it at the same moment sees no change), turns that into
/// `ENOSPC` before libmdbx runs. The file is created as libmdbx would create it (same mode).
///
/// A lock file that already has a size is either in use (libmdbx joins it at that size) or
/// left by a process that died (libmdbx re-sizes it for this open's reader count): the range
/// reserved is the larger of the two, and when that does not fit, the existing size alone
/// will do (joining takes no new space). Other failures (no `fallocate` on this file system, no
/// permission to create the file, read-only media) are left for libmdbx to meet and report.
/// A read-only open of a path with no data file creates nothing (libmdbx fails it first).
#[cfg(target_os = "linux")]
pub(crate) fn reserve_lock_file(path: &Path, cfg: &EnvConfig) -> Result<(), Code> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    // The files libmdbx will use: for a `no_sub_dir` path named `mdbx.dat`, the lock file of
    // its directory, never a second one (`mdbx.dat-lck`) that libmdbx would refuse.
    let files = DatabaseFiles::of(path, cfg.no_sub_dir);
    if cfg.read_only && !files.data.is_file() {
        // libmdbx fails such an open before it touches the lock file: create none.
        return Ok(());
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(cfg.mode)
        .open(&files.lock)
    else {
        return Ok(());
    };
    let current = file.metadata().map_or(0, |m| m.len());
    let reserve = |len: u64| -> Result<(), Code> {
        // SAFETY: `file` is an open, writable descriptor owned here for the call; KEEP_SIZE
        // allocates blocks without changing the file's size or contents.
        let rc = unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                libc::FALLOC_FL_KEEP_SIZE,
                0,
                len as libc::off_t,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(Code(
                std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
            ))
        }
    };
    match reserve(lock_file_len(cfg.max_readers).max(current)) {
        Err(code) if code.is_out_of_space() => {
            if current > 0 && reserve(current).is_ok() {
                Ok(())
            } else {
                Err(code)
            }
        }
        _ => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn reserve_lock_file(_path: &Path, _cfg: &EnvConfig) -> Result<(), Code> {
    Ok(())
}

/// Bytes available to this process on the file system holding `path` (`statvfs`), or `None`
/// when it cannot be asked.
pub(crate) fn available_bytes(path: &Path) -> Option<u64> {
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: `statvfs` is a plain C struct for which all-zero bytes are valid.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `cpath` is NUL-terminated and outlives the call; `st` is a valid out-parameter.
    if unsafe { libc::statvfs(cpath.as_ptr(), &mut st) } != 0 {
        return None;
    }
    // Root may also use the blocks reserved for it (`f_bfree`); everyone else `f_bavail`.
    // SAFETY: geteuid has no preconditions and cannot fail.
    let blocks = if unsafe { libc::geteuid() } == 0 {
        st.f_bfree
    } else {
        st.f_bavail
    };
    Some(blocks as u64 * st.f_frsize as u64)
}
