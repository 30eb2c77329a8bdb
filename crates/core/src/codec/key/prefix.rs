//! Prefixes of composite keys in any form a key accepts: [`AsPrefix`].
//!
//! A prefix is the key's first part, or a tuple of its first parts, each in a form [`AsKey`]
//! takes for that part (`&str` for a `String`, `&[u8]` for a `Vec<u8>`). A tuple key's first part
//! alone is written bare (`"alice"` for a `(String, u64)` key), several first parts as a tuple
//! (`("alice", 2020)` for a `(String, u16, u64)` key); a one-element tuple (`("alice",)`) works
//! too, and is the way to give a first part that is itself a tuple.
//!
//! Why the bare forms are listed type by type rather than as "anything that is `AsKey` of the
//! first part": that blanket rule would overlap the tuple rule wherever a tuple could be a key of
//! the first part, and Rust refuses overlapping impls. The key types Tabula defines are listed
//! here; `#[derive(Key)]` adds its own struct.

use super::{AsKey, Key, KeyBuf};

/// A prefix of a composite key of type `K`: its first part, or a tuple of its first parts, each
/// in a form [`AsKey`] accepts for that part.
///
/// A tuple key's first part alone is written bare (`"alice"` for a `(String, u64)` key) — for
/// the key types Tabula defines and `#[derive(Key)]` structs; several first parts as a tuple
/// (`("alice", 2020)` for a `(String, u16, u64)` key), each part in any [`AsKey`] form; a
/// one-part tuple (`("alice",)`) works too, and is how to give a first part that is itself a
/// tuple. A `#[derive(Key)]` struct's prefixes are its leading fields, owned (as `get` takes
/// the struct itself), and a `str` or `[u8]` for a `String` or `Vec<u8>` first field.
///
/// Prefix scans and watches take `&impl AsPrefix<T::Key>`, so
/// `tx.prefix::<Balances>("alice")` works on a `(String, u64)` table without allocating.
///
/// ```
/// # use tabula::{Options, Schema, Table};
/// # #[derive(Table)]
/// # #[table(key = (String, u16, u64), value = u64)]
/// # struct Balances;
/// # #[derive(Schema)]
/// # struct App(Balances);
/// # let dir = tabula::__doc::temp_dir();
/// # let db = tabula::open::<App>(dir.path(), Options::new())?;
/// let mut tx = db.write()?;
/// tx.put::<Balances>(&("alice", 2020, 1), &10)?;
/// tx.put::<Balances>(&("alice", 2021, 1), &20)?;
/// tx.put::<Balances>(&("bob", 2020, 1), &5)?;
/// let sum = |it: tabula::Iter<'_, Balances>| it.values().sum::<tabula::Result<u64>>();
/// assert_eq!(sum(tx.prefix::<Balances>("alice"))?, 30); // the first part, borrowed
/// assert_eq!(sum(tx.prefix::<Balances>(&("alice", 2021)))?, 20); // the first two parts
/// assert_eq!(sum(tx.prefix::<Balances>(&("bob".to_string(),)))?, 5); // a one-part tuple
/// # Ok::<(), tabula::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prefix of the key type `{K}`",
    label = "not a prefix of `{K}`",
    note = "a prefix of a composite key is its first part (`\"alice\"` for a `(String, u64)` key) or a tuple of its first parts, each in a form the key accepts"
)]
pub trait AsPrefix<K: ?Sized> {
    /// Appends the prefix's encoding: each part in its self-delimiting form, exactly as it
    /// appears at the front of a whole key.
    fn encode_prefix(&self, out: &mut KeyBuf);
}

impl<K: ?Sized, T: AsPrefix<K> + ?Sized> AsPrefix<K> for &T {
    #[inline]
    fn encode_prefix(&self, out: &mut KeyBuf) {
        (**self).encode_prefix(out)
    }
}

/// The bare first part: for each form `$form` of the key type `$owned`, a prefix of every tuple
/// of two to six parts that begins with `$owned`.
macro_rules! bare_first_part {
    ($( [$($generics:tt)*] $form:ty => $owned:ty; )+) => {$(
        bare_first_part!(@each [$($generics)*] $form => $owned; B);
        bare_first_part!(@each [$($generics)*] $form => $owned; B, C);
        bare_first_part!(@each [$($generics)*] $form => $owned; B, C, D);
        bare_first_part!(@each [$($generics)*] $form => $owned; B, C, D, E);
        bare_first_part!(@each [$($generics)*] $form => $owned; B, C, D, E, F);
    )+};
    (@each [$($generics:tt)*] $form:ty => $owned:ty; $($rest:ident),+) => {
        impl<$($generics)* $($rest: Key),+> AsPrefix<($owned, $($rest),+)> for $form {
            #[inline]
            fn encode_prefix(&self, out: &mut KeyBuf) {
                <Self as AsKey<$owned>>::encode_part(self, out, false);
            }
        }
    };
}

bare_first_part! {
    [] u8 => u8;
    [] u16 => u16;
    [] u32 => u32;
    [] u64 => u64;
    [] u128 => u128;
    [] i8 => i8;
    [] i16 => i16;
    [] i32 => i32;
    [] i64 => i64;
    [] i128 => i128;
    [] bool => bool;
    [] char => char;
    [] String => String;
    [] str => String;
    [] Vec<u8> => Vec<u8>;
    [] [u8] => Vec<u8>;
    [const N: usize,] [u8; N] => [u8; N];
    [KO: Key, AO: AsKey<KO>,] Option<AO> => Option<KO>;
}

/// Tuples of first parts: for each tuple key, every proper prefix as a tuple of forms
/// (`$Q: AsKey<$K>` for each part taken).
macro_rules! tuple_prefix {
    ($( $key:tt => $( $prefix:tt ),+ ; )+) => {$($(
        tuple_prefix!(@impl $key $prefix);
    )+)+};
    (@impl ($($K:ident),+) [$($Q:ident),+]) => {
        impl<$($K: Key,)+ $($Q: AsKey<tuple_prefix!(@part $Q)>),+> AsPrefix<($($K,)+)> for ($($Q,)+) {
            #[inline]
            fn encode_prefix(&self, out: &mut KeyBuf) {
                #[allow(non_snake_case)]
                let ($($Q,)+) = self;
                $( $Q.encode_part(out, false); )+
            }
        }
    };
    (@part QA) => { A };
    (@part QB) => { B };
    (@part QC) => { C };
    (@part QD) => { D };
    (@part QE) => { E };
}

tuple_prefix! {
    (A, B) => [QA];
    (A, B, C) => [QA], [QA, QB];
    (A, B, C, D) => [QA], [QA, QB], [QA, QB, QC];
    (A, B, C, D, E) => [QA], [QA, QB], [QA, QB, QC], [QA, QB, QC, QD];
    (A, B, C, D, E, F) => [QA], [QA, QB], [QA, QB, QC], [QA, QB, QC, QD], [QA, QB, QC, QD, QE];
}

/// The encoding of `prefix` as it appears at the front of a whole key of type `K`.
pub(crate) fn encode_prefix<K: Key>(prefix: &(impl AsPrefix<K> + ?Sized)) -> KeyBuf {
    let mut out = KeyBuf::new();
    prefix.encode_prefix(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the stored key `key` begins with `prefix`: what a prefix scan walks.
    fn in_prefix<K: Key>(key: &[u8], prefix: &(impl AsPrefix<K> + ?Sized)) -> bool {
        key.starts_with(encode_prefix::<K>(prefix).as_slice())
    }

    fn whole<K: Key>(key: &(impl AsKey<K> + ?Sized)) -> Vec<u8> {
        key.encode().as_ref().to_vec()
    }

    fn front<K: Key>(prefix: &(impl AsPrefix<K> + ?Sized)) -> Vec<u8> {
        encode_prefix::<K>(prefix).as_slice().to_vec()
    }

    #[test]
    fn every_form_of_a_prefix_encodes_as_the_front_of_the_whole_key() {
        type K3 = (String, u16, Vec<u8>);
        let key = whole::<K3>(&("alice", 2021u16, &b"x\0y"[..]));
        let forms: [Vec<u8>; 6] = [
            front::<K3>("alice"),
            front::<K3>(&"alice".to_string()),
            front::<K3>(&("alice",)),
            front::<K3>(&("alice".to_string(),)),
            front::<K3>(&("alice", 2021u16)),
            front::<K3>(&(&"alice".to_string(), &2021u16)),
        ];
        for form in &forms {
            assert!(
                key.starts_with(form),
                "{form:?} is not the front of {key:?}"
            );
            assert!(form.len() < key.len());
        }
        assert_eq!(forms[0], forms[3]);
        assert!(forms[4].len() > forms[0].len());
        // The self-delimiting form: "al" is not a prefix of "alice" as a first part.
        assert!(!in_prefix::<K3>(&key, "al"));
        assert!(in_prefix::<K3>(&key, "alice"));
        assert!(!in_prefix::<K3>(&key, &("alice", 2020u16)));

        type B2 = (Vec<u8>, u64);
        let key = whole::<B2>(&(&[1u8, 0, 2][..], 7u64));
        assert!(in_prefix::<B2>(&key, &[1u8, 0, 2][..]));
        assert!(in_prefix::<B2>(&key, &vec![1u8, 0, 2]));
        assert!(!in_prefix::<B2>(&key, &[1u8, 0][..]));

        type O2 = (Option<String>, u8);
        let key = whole::<O2>(&(Some("a"), 1u8));
        assert!(in_prefix::<O2>(&key, &Some("a")));
        assert!(!in_prefix::<O2>(&key, &None::<&str>));

        type A2 = ([u8; 2], i32);
        let key = whole::<A2>(&([9u8, 8], -1i32));
        assert!(in_prefix::<A2>(&key, &[9u8, 8]));
    }
}
