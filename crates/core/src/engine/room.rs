//! `Room`: the room libmdbx reserved in a page for a value (`MDBX_RESERVE`), lent to the
//! caller to write the value into.

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

/// The room reserved in a database page for one value, written in place by
/// [`Tx::put_reserve`](crate::Tx::put_reserve)'s closure: sequentially with
/// [`write_all`](std::io::Write::write_all) (it is an [`std::io::Write`], so a serializer can
/// write into the page), or at any offset through [`zeroed`](Room::zeroed). Whatever is left
/// unwritten when the closure returns is stored as zero bytes.
///
/// The room is only lent for the closure's call: it is valid until the transaction's next
/// write, which cannot happen while the closure runs, and the closure cannot keep it.
pub struct Room<'a> {
    at: NonNull<u8>,
    len: usize,
    /// Bytes `..written` are written (initialised); the rest are not, unless `zeroed`.
    written: usize,
    zeroed: bool,
    _room: PhantomData<&'a mut [u8]>,
}

impl<'a> Room<'a> {
    /// # Safety
    ///
    /// `at` points at `len` bytes writable for `'a` that nothing else reads or writes for
    /// `'a` (they may be uninitialised).
    pub(super) unsafe fn new(at: NonNull<u8>, len: usize) -> Self {
        Room {
            at,
            len,
            written: 0,
            zeroed: false,
            _room: PhantomData,
        }
    }

    /// The room's size: the value's length as reserved.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// let len = tx.put_reserve::<Blobs, _>(&1, 10, |room| room.len())?;
    /// assert_eq!(len, 10);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the room is empty (a value of length 0).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// assert!(tx.put_reserve::<Blobs, _>(&1, 0, |room| room.is_empty())?);
    /// assert_eq!(tx.get_bytes::<Blobs>(&1)?, Some(&[][..]));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many bytes sequential writes have filled so far (the next one goes there).
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// use std::io::Write;
    /// let mut tx = db.write()?;
    /// let at = tx.put_reserve::<Blobs, _>(&1, 8, |room| {
    ///     room.write_all(b"abc").map(|()| room.position())
    /// })?;
    /// assert_eq!(at.unwrap(), 3);
    /// assert_eq!(tx.get_bytes::<Blobs>(&1)?, Some(&b"abc\0\0\0\0\0"[..])); // the rest is zero
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn position(&self) -> usize {
        self.written
    }

    /// The whole room as a slice, for writes at any offset: the part not written yet is
    /// zeroed first (once), what was written is kept.
    ///
    /// ```
    /// # use tabula::__doc::*;
    /// # let (dir, db) = open()?;
    /// let mut tx = db.write()?;
    /// tx.put_reserve::<Blobs, _>(&1, 4, |room| {
    ///     let bytes = room.zeroed();
    ///     bytes[3] = 9;
    ///     bytes[0] = 1;
    /// })?;
    /// assert_eq!(tx.get_bytes::<Blobs>(&1)?, Some(&[1, 0, 0, 9][..]));
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn zeroed(&mut self) -> &mut [u8] {
        self.zero_rest();
        // SAFETY: `at` points at `len` bytes that this room owns for `'a` (`new`); all of them
        // are initialised now (`..written` by writes, the rest by `zero_rest`); the slice
        // borrows `self` mutably, so nothing else touches them while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.at.as_ptr(), self.len) }
    }

    /// Zeroes the bytes not written yet (once).
    fn zero_rest(&mut self) {
        if !self.zeroed {
            // SAFETY: `written <= len`, so `at + written .. at + len` lies in the room, which
            // is writable (`new`).
            unsafe {
                ptr::write_bytes(
                    self.at.as_ptr().add(self.written),
                    0,
                    self.len - self.written,
                )
            };
            self.zeroed = true;
        }
    }
}

impl Drop for Room<'_> {
    /// What was not written is stored as zeros, not as whatever the page held, also when the
    /// closure writing the room panicked (and the panic was caught with the transaction alive).
    fn drop(&mut self) {
        self.zero_rest();
    }
}

impl std::fmt::Debug for Room<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Room")
            .field("len", &self.len)
            .field("position", &self.written)
            .finish()
    }
}

impl std::io::Write for Room<'_> {
    /// Copies as much of `bytes` as fits after what was written; `Ok(0)` when the room is full
    /// (so `write_all` of too much is an error of kind `WriteZero`).
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = bytes.len().min(self.len - self.written);
        // SAFETY: `written + n <= len`, so the destination lies in the room (writable, owned
        // for `'a`, `new`); `bytes` is a shared slice, which cannot overlap the room while
        // `&mut self` is held (the room is only reachable through this `Room`, or through a
        // `zeroed` slice, which borrows it mutably).
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), self.at.as_ptr().add(self.written), n);
        }
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
