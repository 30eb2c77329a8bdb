//! Table, put and cursor-operation flags as libmdbx spells them.

use mdbx_sys as sys;

/// Table flags as libmdbx spells them.
pub(crate) fn table_flags(dupsort: bool, integer_key: bool) -> u32 {
    let mut f = 0;
    if dupsort {
        f |= sys::MDBX_DUPSORT;
    }
    if integer_key {
        f |= sys::MDBX_INTEGERKEY;
    }
    f
}

/// Names of the libmdbx table flags set in `bits`.
pub(crate) fn table_flag_names(bits: u32) -> Vec<&'static str> {
    [
        (sys::MDBX_REVERSEKEY, "reversekey"),
        (sys::MDBX_DUPSORT, "dupsort"),
        (sys::MDBX_INTEGERKEY, "integer_key"),
        (sys::MDBX_DUPFIXED, "dupfixed"),
        (sys::MDBX_INTEGERDUP, "integerdup"),
        (sys::MDBX_REVERSEDUP, "reversedup"),
    ]
    .into_iter()
    .filter(|(bit, _)| bits & bit != 0)
    .map(|(_, name)| name)
    .collect()
}

/// The flag bits Tabula compares when verifying a table.
pub(crate) const TABLE_FLAG_MASK: u32 = sys::MDBX_DUPSORT
    | sys::MDBX_INTEGERKEY
    | sys::MDBX_REVERSEKEY
    | sys::MDBX_DUPFIXED
    | sys::MDBX_INTEGERDUP
    | sys::MDBX_REVERSEDUP;

/// Put flags.
pub(crate) mod put {
    use super::sys;
    pub const UPSERT: u32 = sys::MDBX_UPSERT;
    pub const NOOVERWRITE: u32 = sys::MDBX_NOOVERWRITE;
    pub const APPEND: u32 = sys::MDBX_APPEND;
    /// `MDBX_APPEND` alone overwrites a key equal to the last one; with `MDBX_NOOVERWRITE` an
    /// equal key is refused (`MDBX_KEYEXIST`), so append means "strictly greater".
    pub const APPEND_STRICT: u32 = sys::MDBX_APPEND | sys::MDBX_NOOVERWRITE;
    pub const APPENDDUP: u32 = sys::MDBX_APPENDDUP;
    /// For `dupsort` tables: a new greatest key, or the last key with a new greatest value;
    /// an equal pair is refused (`MDBX_NODUPDATA` gives `MDBX_KEYEXIST`).
    pub const APPEND_PAIR_STRICT: u32 =
        sys::MDBX_APPEND | sys::MDBX_APPENDDUP | sys::MDBX_NODUPDATA;
}

/// Cursor operations.
pub(crate) mod op {
    use super::sys;
    pub type Op = sys::MDBX_cursor_op;
    pub const FIRST: Op = sys::MDBX_FIRST;
    pub const LAST: Op = sys::MDBX_LAST;
    pub const NEXT: Op = sys::MDBX_NEXT;
    pub const PREV: Op = sys::MDBX_PREV;
    pub const SET_KEY: Op = sys::MDBX_SET_KEY;
    pub const SET_RANGE: Op = sys::MDBX_SET_RANGE;
    pub const GET_CURRENT: Op = sys::MDBX_GET_CURRENT;
    pub const NEXT_DUP: Op = sys::MDBX_NEXT_DUP;
    pub const NEXT_NODUP: Op = sys::MDBX_NEXT_NODUP;
    pub const PREV_NODUP: Op = sys::MDBX_PREV_NODUP;
    pub const LAST_DUP: Op = sys::MDBX_LAST_DUP;
    pub const GET_BOTH_RANGE: Op = sys::MDBX_GET_BOTH_RANGE;
}
