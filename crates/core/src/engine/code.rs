//! libmdbx return codes: names, descriptions, and the two checks every call goes through.

use std::ffi::{CStr, c_int};

use mdbx_sys as sys;

/// A libmdbx return code other than success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code(pub c_int);

impl Code {
    pub const NOTFOUND: Code = Code(sys::MDBX_NOTFOUND);
    pub const KEYEXIST: Code = Code(sys::MDBX_KEYEXIST);
    pub const MAP_FULL: Code = Code(sys::MDBX_MAP_FULL);
    pub const READERS_FULL: Code = Code(sys::MDBX_READERS_FULL);
    pub const BAD_VALSIZE: Code = Code(sys::MDBX_BAD_VALSIZE);
    pub const EKEYMISMATCH: Code = Code(sys::MDBX_EKEYMISMATCH);
    pub const INVALID: Code = Code(sys::MDBX_INVALID);
    pub const CORRUPTED: Code = Code(sys::MDBX_CORRUPTED);
    pub const PROBLEM: Code = Code(sys::MDBX_PROBLEM);
    pub const PAGE_NOTFOUND: Code = Code(sys::MDBX_PAGE_NOTFOUND);
    pub const VERSION_MISMATCH: Code = Code(sys::MDBX_VERSION_MISMATCH);
    pub const INCOMPATIBLE: Code = Code(sys::MDBX_INCOMPATIBLE);
    pub const DBS_FULL: Code = Code(sys::MDBX_DBS_FULL);
    pub const TXN_FULL: Code = Code(sys::MDBX_TXN_FULL);
    pub const ENOFILE: Code = Code(sys::MDBX_ENOFILE);
    pub const EACCESS: Code = Code(sys::MDBX_EACCESS);
    pub const EINVAL: Code = Code(sys::MDBX_EINVAL);
    pub const EAGAIN: Code = Code(libc::EAGAIN);
    pub const BUSY: Code = Code(sys::MDBX_BUSY);
    pub const DUPLICATED_LCK: Code = Code(sys::MDBX_DUPLICATED_LCK);
    /// No space left on the file system.
    pub const ENOSPC: Code = Code(libc::ENOSPC);
    /// The user's disk quota is used up.
    pub const EDQUOT: Code = Code(libc::EDQUOT);
    /// An I/O error; libmdbx also reports a short write this way (a write that stopped when
    /// the file system filled up).
    pub const EIO: Code = Code(sys::MDBX_EIO);

    /// Whether the code says the file system is out of space (`ENOSPC`, `EDQUOT`).
    pub fn is_out_of_space(self) -> bool {
        self == Code::ENOSPC || self == Code::EDQUOT
    }

    /// libmdbx's own description of the code.
    pub fn describe(self) -> String {
        // SAFETY: mdbx_strerror returns a pointer to a static or thread-local NUL-terminated
        // string for every code (unknown ones included); it is copied out immediately.
        unsafe {
            let p = sys::mdbx_strerror(self.0);
            if p.is_null() {
                return format!("error {}", self.0);
            }
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }

    /// The symbolic name of the code, e.g. `MDBX_MAP_FULL`, or the errno name.
    pub fn name(self) -> &'static str {
        match self.0 {
            sys::MDBX_KEYEXIST => "MDBX_KEYEXIST",
            sys::MDBX_NOTFOUND => "MDBX_NOTFOUND",
            sys::MDBX_PAGE_NOTFOUND => "MDBX_PAGE_NOTFOUND",
            sys::MDBX_CORRUPTED => "MDBX_CORRUPTED",
            sys::MDBX_PANIC => "MDBX_PANIC",
            sys::MDBX_VERSION_MISMATCH => "MDBX_VERSION_MISMATCH",
            sys::MDBX_INVALID => "MDBX_INVALID",
            sys::MDBX_MAP_FULL => "MDBX_MAP_FULL",
            sys::MDBX_DBS_FULL => "MDBX_DBS_FULL",
            sys::MDBX_READERS_FULL => "MDBX_READERS_FULL",
            sys::MDBX_TXN_FULL => "MDBX_TXN_FULL",
            sys::MDBX_CURSOR_FULL => "MDBX_CURSOR_FULL",
            sys::MDBX_PAGE_FULL => "MDBX_PAGE_FULL",
            sys::MDBX_UNABLE_EXTEND_MAPSIZE => "MDBX_UNABLE_EXTEND_MAPSIZE",
            sys::MDBX_INCOMPATIBLE => "MDBX_INCOMPATIBLE",
            sys::MDBX_BAD_RSLOT => "MDBX_BAD_RSLOT",
            sys::MDBX_BAD_TXN => "MDBX_BAD_TXN",
            sys::MDBX_BAD_VALSIZE => "MDBX_BAD_VALSIZE",
            sys::MDBX_BAD_DBI => "MDBX_BAD_DBI",
            sys::MDBX_PROBLEM => "MDBX_PROBLEM",
            sys::MDBX_BUSY => "MDBX_BUSY",
            sys::MDBX_EMULTIVAL => "MDBX_EMULTIVAL",
            sys::MDBX_EBADSIGN => "MDBX_EBADSIGN",
            sys::MDBX_WANNA_RECOVERY => "MDBX_WANNA_RECOVERY",
            sys::MDBX_EKEYMISMATCH => "MDBX_EKEYMISMATCH",
            sys::MDBX_TOO_LARGE => "MDBX_TOO_LARGE",
            sys::MDBX_THREAD_MISMATCH => "MDBX_THREAD_MISMATCH",
            sys::MDBX_TXN_OVERLAPPING => "MDBX_TXN_OVERLAPPING",
            sys::MDBX_DUPLICATED_LCK => "MDBX_DUPLICATED_LCK",
            sys::MDBX_DANGLING_DBI => "MDBX_DANGLING_DBI",
            sys::MDBX_OUSTED => "MDBX_OUSTED",
            sys::MDBX_MVCC_RETARDED => "MDBX_MVCC_RETARDED",
            sys::MDBX_ENODATA => "ENODATA",
            sys::MDBX_EINVAL => "EINVAL",
            sys::MDBX_EACCESS => "EACCES",
            sys::MDBX_ENOMEM => "ENOMEM",
            sys::MDBX_EROFS => "EROFS",
            sys::MDBX_ENOSYS => "ENOSYS",
            sys::MDBX_EIO => "EIO",
            sys::MDBX_EPERM => "EPERM",
            sys::MDBX_EINTR => "EINTR",
            sys::MDBX_ENOFILE => "ENOENT",
            sys::MDBX_EREMOTE => "EREMOTE",
            sys::MDBX_EDEADLK => "EDEADLK",
            libc::EAGAIN => "EAGAIN",
            libc::EBUSY => "EBUSY",
            libc::ENOTDIR => "ENOTDIR",
            libc::ENOSPC => "ENOSPC",
            libc::EDQUOT => "EDQUOT",
            _ => "error",
        }
    }
}

impl Code {
    /// A short read: for an open, the data file is too short for the meta pages libmdbx read.
    pub const ENODATA: Code = Code(sys::MDBX_ENODATA);
    /// Out of memory, or of address space for the map.
    pub const ENOMEM: Code = Code(sys::MDBX_ENOMEM);
    /// A size beyond libmdbx's limits.
    pub const TOO_LARGE: Code = Code(sys::MDBX_TOO_LARGE);
}

pub(crate) fn check(rc: c_int) -> Result<(), Code> {
    if rc == sys::MDBX_SUCCESS {
        Ok(())
    } else {
        Err(Code(rc))
    }
}

/// `Ok(false)` for `MDBX_NOTFOUND`, `Ok(true)` for success.
pub(crate) fn check_found(rc: c_int) -> Result<bool, Code> {
    match rc {
        sys::MDBX_SUCCESS => Ok(true),
        sys::MDBX_NOTFOUND => Ok(false),
        rc => Err(Code(rc)),
    }
}
