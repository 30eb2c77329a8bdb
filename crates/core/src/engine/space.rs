//! Disk space: what must be reserved before libmdbx writes through a map, and how much is free.

use std::ffi::CString;
use std::path::Path;

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
