//! Page use of the database file as a transaction sees it (`mdbx_gc_info`): how many pages are
//! allocated, and how many of those are free (listed in libmdbx's free-page tree, the GC).

use mdbx_sys as sys;

use super::*;

/// Page counts of the file at a transaction's snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageCounts {
    /// Pages the geometry's upper bound allows.
    pub total: u64,
    /// Pages the data file holds now.
    pub backed: u64,
    /// Pages ever allocated (the first unallocated page number): used or free, the rest of the
    /// file has never been written.
    pub allocated: u64,
    /// Allocated pages that are free: listed in the GC, and the GC's own tree.
    pub gc: u64,
    /// Of those, pages a writer may reuse now (no reader's snapshot still needs them).
    pub reclaimable: u64,
}

impl RawTxn {
    /// The page counts at this transaction's snapshot; walks the GC (cost grows with its size).
    pub fn page_counts(&mut self) -> Result<PageCounts, Code> {
        // SAFETY: MDBX_gc_info_t is a plain C struct for which all-zero bytes are valid.
        let mut info: sys::MDBX_gc_info_t = unsafe { std::mem::zeroed() };
        // SAFETY: the transaction is live and used by this thread alone (`&mut self`); `info` is
        // a properly sized out-parameter; no callback, so no context pointer.
        let rc = unsafe {
            sys::mdbx_gc_info(
                self.ptr.as_ptr(),
                &mut info,
                std::mem::size_of::<sys::MDBX_gc_info_t>(),
                None,
                std::ptr::null_mut(),
            )
        };
        // MDBX_NOTFOUND: the GC is empty; the counts are filled all the same.
        if rc != sys::MDBX_NOTFOUND {
            check(rc)?;
        }
        Ok(PageCounts {
            total: info.pages_total as u64,
            backed: info.pages_backed as u64,
            allocated: info.pages_allocated as u64,
            gc: info.pages_gc as u64,
            reclaimable: info.gc_reclaimable.pages as u64,
        })
    }
}
