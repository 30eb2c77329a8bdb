//! The two kinds of transaction, as the type parameter `M` of [`Tx`](crate::Tx) and
//! [`Cursor`](crate::Cursor): read-only ([`Ro`]) or read-write ([`Rw`]), with what differs
//! between them at compile time (thread rules, the encoding buffer, the engine cursor).

use crate::engine;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Ro {}
    impl Sealed for super::Rw {}
}

/// Read-only or read-write: the second parameter of [`Tx`](crate::Tx).
pub trait Mode: sealed::Sealed + 'static {
    #[doc(hidden)]
    const READ_ONLY: bool;
    #[doc(hidden)]
    type ThreadMarker;
    /// The encoding buffer a transaction keeps: a `Vec<u8>` for writes, nothing for reads (so
    /// a read transaction has no buffer to build or free).
    #[doc(hidden)]
    type Scratch: Default;
    /// The engine cursor a [`Cursor`](crate::Cursor) of this mode moves: one that borrows the transaction
    /// shared (reads only), or one the write transaction is lent to (reads and writes).
    #[doc(hidden)]
    type RawCursor<'t>: engine::CursorNav;
}

/// Marks a read transaction ([`RoTx`](crate::RoTx)). Read transactions may move between threads.
#[derive(Debug)]
pub enum Ro {}

/// Marks the write transaction ([`RwTx`](crate::RwTx)). It stays on the thread that began it.
#[derive(Debug)]
pub enum Rw {}

impl Mode for Ro {
    const READ_ONLY: bool = true;
    type ThreadMarker = ();
    type Scratch = ();
    type RawCursor<'t> = engine::RawCursor<'t>;
}

impl Mode for Rw {
    const READ_ONLY: bool = false;
    type ThreadMarker = *const AWriteTransactionEndsOnTheThreadThatBeganIt;
    type Scratch = Vec<u8>;
    type RawCursor<'t> = engine::RawCursorMut<'t>;
}

/// Makes `Tx<Rw>` `!Send`: libmdbx requires a write transaction to commit or abort on the
/// thread that began it. A raw pointer to this type is the marker, so that the compiler's first
/// line for a write transaction sent to another thread names the rule ("`*const
/// AWriteTransactionEndsOnTheThreadThatBeganIt` cannot be sent between threads safely").
#[doc(hidden)]
pub enum AWriteTransactionEndsOnTheThreadThatBeganIt {}

/// Makes every `Tx` `!Sync` (a `Cell` is `Send` but not `Sync`): libmdbx requires that one
/// thread at a time uses a transaction. Named so that the compiler's first line for a
/// transaction shared between threads names the rule.
#[doc(hidden)]
pub enum ATransactionIsUsedByOneThreadAtATime {}
