//! Key ranges with bounds in any form a key accepts: [`KeyRange`].

use std::ops::{
    Bound, Range, RangeBounds, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive,
};

use super::{AsKey, Key};

/// A range of keys of type `K` whose bounds are in any form [`AsKey`] accepts for `K`: `3..6`,
/// `"a".."b"` for a `String` key, `("alice", 0)..("alice", 10)` for a `(String, u64)` key, `..`,
/// or a pair of [`Bound`]s. Range reads, range deletes and range watches take
/// `impl KeyRange<T::Key>`, so a range needs no owned key and the call one type argument.
///
/// ```
/// # use tabula::__doc::*;
/// # use std::ops::Bound;
/// # let (dir, db) = open()?;
/// let mut tx = db.write()?;
/// for (name, n) in [("alice", 1), ("alice", 2), ("bob", 1), ("carol", 1)] {
///     tx.put::<Balances>(&(name, n), &n)?;
/// }
/// let count = |it: tabula::Iter<'_, Balances>| it.count();
/// assert_eq!(count(tx.range::<Balances>(("alice", 2)..("carol", 0))), 2); // borrowed bounds
/// assert_eq!(count(tx.range::<Balances>(..)), 4);
/// let from_bob = (Bound::Included(("bob", 0)), Bound::Unbounded);
/// assert_eq!(count(tx.range::<Balances>(from_bob)), 2);
/// # Ok::<(), tabula::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a range of keys of type `{K}`",
    label = "expected a range of `{K}` keys",
    note = "a key range is `a..b`, `a..=b`, `a..`, `..b`, `..=b`, `..` or a `(Bound, Bound)` pair, with bounds in a form the key accepts (`&str` for `String`)"
)]
pub trait KeyRange<K: ?Sized> {
    /// The bounds' type: `K` or a borrowed form of it.
    type Form: AsKey<K> + ?Sized;

    /// The lower bound.
    fn start(&self) -> Bound<&Self::Form>;

    /// The upper bound.
    fn end(&self) -> Bound<&Self::Form>;
}

impl<K: ?Sized, R: KeyRange<K> + ?Sized> KeyRange<K> for &R {
    type Form = R::Form;

    #[inline]
    fn start(&self) -> Bound<&Self::Form> {
        (**self).start()
    }

    #[inline]
    fn end(&self) -> Bound<&Self::Form> {
        (**self).end()
    }
}

/// `KeyRange` for the standard range types over bounds of type `Q`, with their own
/// [`RangeBounds`] (so an exhausted `a..=b` is empty here too).
macro_rules! std_range {
    ($($range:ident),+) => {$(
        impl<K: ?Sized, Q: AsKey<K>> KeyRange<K> for $range<Q> {
            type Form = Q;

            #[inline]
            fn start(&self) -> Bound<&Q> {
                RangeBounds::<Q>::start_bound(self)
            }

            #[inline]
            fn end(&self) -> Bound<&Q> {
                RangeBounds::<Q>::end_bound(self)
            }
        }
    )+};
}

std_range!(Range, RangeInclusive, RangeFrom, RangeTo, RangeToInclusive);

impl<K: Key> KeyRange<K> for RangeFull {
    type Form = K;

    #[inline]
    fn start(&self) -> Bound<&K> {
        Bound::Unbounded
    }

    #[inline]
    fn end(&self) -> Bound<&K> {
        Bound::Unbounded
    }
}

impl<K: ?Sized, Q: AsKey<K>> KeyRange<K> for (Bound<Q>, Bound<Q>) {
    type Form = Q;

    #[inline]
    fn start(&self) -> Bound<&Q> {
        self.0.as_ref()
    }

    #[inline]
    fn end(&self) -> Bound<&Q> {
        self.1.as_ref()
    }
}
