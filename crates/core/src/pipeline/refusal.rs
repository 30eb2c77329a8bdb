//! libmdbx's refusals of a row write, read once for every write form: what `MDBX_KEYEXIST` or
//! `MDBX_EKEYMISMATCH` means depends on the flags the write asked for.

use super::Target;
use crate::engine::{Code, put};
use crate::error::{At, Error, KeyHex};
use crate::state::Shared;
use crate::table::Table;

/// What libmdbx's refusal `code` of a row write with `flags` means, said once for every write
/// form (the typed ones below, the startup's raw writes): a present key for a write that must
/// not overwrite, a value out of order for a strict dup append, a key out of order for an
/// append (libmdbx answers `MDBX_KEYEXIST` for an equal key and `MDBX_EKEYMISMATCH` for a
/// lower one), or something else, which the caller diagnoses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `insert`'s key is present.
    Exists,
    /// `append_dup`'s value is not after the key's last value.
    DupOutOfOrder,
    /// `append`'s key is not after the table's last key.
    OutOfOrder,
    /// Not a refusal of the key or value: the caller's diagnosis.
    Other,
}

impl Refusal {
    /// Reads `code`, returned by a put with `flags`.
    #[inline]
    pub(crate) fn of(code: Code, flags: u32) -> Refusal {
        let appending = flags & (put::APPEND | put::APPENDDUP) != 0;
        let out_of_order = code == Code::EKEYMISMATCH || code == Code::KEYEXIST;
        if code == Code::KEYEXIST && !appending {
            Refusal::Exists
        } else if flags == put::APPENDDUP_STRICT && out_of_order {
            Refusal::DupOutOfOrder
        } else if appending && out_of_order {
            Refusal::OutOfOrder
        } else {
            Refusal::Other
        }
    }
}

/// The error for the write of `(key, value_len bytes)` into table `T` with `flags` (named `op`)
/// that libmdbx refused with `code`: a present key for a write that must not overwrite
/// (`insert`), a key or value out of order for the appends (naming the table's last key, or
/// the key's last value, which the target reads: a cursor target moves), anything else as
/// [`Shared::fail`] diagnoses it. `value` is the encoded value when the caller has it (an
/// out-of-order `append_dup` names it).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn refused<T: Table>(
    target: &mut impl Target,
    shared: &Shared,
    code: Code,
    flags: u32,
    op: &'static str,
    key: &[u8],
    value: Option<&[u8]>,
    value_len: usize,
) -> Error {
    match Refusal::of(code, flags) {
        Refusal::Exists => Error::KeyExists {
            table: T::NAME,
            key: KeyHex::of::<T>(key),
        },
        Refusal::DupOutOfOrder => Error::AppendDupOutOfOrder {
            table: T::NAME,
            key: KeyHex::of::<T>(key),
            value: KeyHex::new(value.unwrap_or_default()),
            last: target.last_dup(key),
        },
        Refusal::OutOfOrder => Error::AppendOutOfOrder {
            table: T::NAME,
            key: KeyHex::of::<T>(key),
            last: target.last_key(T::DEBUG_KEY),
        },
        Refusal::Other => shared.fail(code, At::of::<T>(op).entry(key, value_len)),
    }
}
