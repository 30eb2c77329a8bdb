//! Values read in place: codecs that decode *from* the stored bytes without copying them
//! ([`ValueRef`]), codecs whose every byte string is a value ([`AnyBytes`]), and the
//! fixed-layout codec [`Pod`].

use std::marker::PhantomData;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::{DecodeError, EncodeError, Raw, Value};
use crate::schema::Descriptor;

/// A codec that can decode a value *borrowing* the stored bytes: [`Raw`] gives the bytes
/// (`&[u8]`), [`Pod<T>`] a view of the struct (`&T`). A borrowed value lives as long as the
/// borrow of the transaction it was read in (`Tx::get_ref`, `Iter::borrowed`,
/// `Lazy::decode_ref`), so reading it copies nothing.
///
/// Serde codecs ([`Bincode`](super::Bincode)) have no borrowed form: their stored bytes are
/// not the value's memory layout. Compressed values ([`Zstd`](super)) neither: they must be
/// decompressed somewhere first.
///
/// ```
/// use tabula_core::codec::ValueRef;
/// use tabula_core::Raw;
///
/// let stored = [1u8, 2, 3];
/// let value: &[u8] = Raw::decode_ref(&stored)?;
/// assert!(std::ptr::eq(value, &stored[..])); // the stored bytes themselves
/// # Ok::<(), tabula_core::DecodeError>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "codec `{Self}` has no borrowed form: its values are decoded into owned ones",
    label = "values of this codec cannot be borrowed from the page",
    note = "borrowed reads (`get_ref`, `Iter::borrowed`, `Lazy::decode_ref`) work with `codec = Raw` (the stored bytes) and `codec = Pod<T>` (a fixed-layout struct viewed in place); for this table use `get`/`iter` (owned values), `get_lazy`/`Iter::lazy` (decode only the values you use) or `get_bytes` (the stored bytes)"
)]
pub trait ValueRef: Value {
    /// The borrowed value: `&'a [u8]` for [`Raw`], `&'a T` for [`Pod<T>`].
    type Ref<'a>
    where
        Self: 'a;

    /// Decodes the stored bytes in place, borrowing them.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the bytes are not a valid encoding (for [`Pod<T>`]: not
    /// `size_of::<T>()` bytes long); never a panic.
    fn decode_ref(bytes: &[u8]) -> Result<Self::Ref<'_>, DecodeError>;
}

impl ValueRef for Raw {
    type Ref<'a> = &'a [u8];

    #[inline]
    fn decode_ref(bytes: &[u8]) -> Result<&[u8], DecodeError> {
        Ok(bytes)
    }
}

/// A codec for which every byte string is a valid encoding, so a value can be written as
/// bytes, straight into the page (`Tx::put_reserve`). [`Raw`] is one.
///
/// Implementing it for a codec that rejects some byte strings is not unsafe, only unwise:
/// such a value would fail to decode when read ([`DecodeError`]).
///
/// ```
/// use tabula_core::codec::AnyBytes;
///
/// fn takes_any_bytes<C: AnyBytes>() {}
/// takes_any_bytes::<tabula_core::Raw>();
/// ```
#[diagnostic::on_unimplemented(
    message = "codec `{Self}` does not store arbitrary bytes, so `put_reserve` cannot write its values",
    label = "not a codec of plain bytes",
    note = "`put_reserve` fills the page with bytes as given, for tables whose codec stores bytes as they are (`codec = Raw`, or a codec implementing `AnyBytes`); for this table use `put` with a value of its type (a codec whose `Value::encoded_len` knows the size is written into the page by `put` itself)"
)]
pub trait AnyBytes: Value {}

impl AnyBytes for Raw {}

/// A fixed-layout value stored as its own bytes and read in place: `T` is a struct whose
/// memory layout *is* its encoding (`zerocopy`'s `FromBytes + IntoBytes + Immutable +
/// KnownLayout + Unaligned`, derived). `get` copies the value out; `get_ref` (a
/// [`ValueRef`]) gives a `&T` pointing into the page, with no copy and no decode.
///
/// The bytes libmdbx hands out are not aligned (a value sits after its key in the page), so
/// `T` must have alignment 1: `Unaligned` makes the compiler check that. Integers are
/// therefore `zerocopy::byteorder` types (`U64<LittleEndian>`, ...), whose byte order is
/// written in the type, so a file reads the same on every machine; byte arrays are fine as
/// they are.
///
/// The schema records `pod(N)` with `N = size_of::<T>()`: a change of size is refused at
/// open; a change that keeps the size (fields reordered, a field's type changed) is not
/// visible, so state `#[table(value_version = N)]` and raise it, with a migration step, when
/// the layout changes.
///
/// ```
/// use tabula_core::codec::{Pod, ValueRef};
/// use tabula_core::Value;
/// use zerocopy::byteorder::{LittleEndian, U64};
/// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};
///
/// #[derive(Debug, PartialEq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
/// #[repr(C)]
/// struct Account { nonce: U64<LittleEndian>, balance: [u8; 32] }
///
/// let account = Account { nonce: U64::new(7), balance: [1; 32] };
/// let mut scratch = Vec::new();
/// let stored = Pod::<Account>::encode(&account, &mut scratch)?.to_vec();
/// assert_eq!(stored.len(), 40);
/// // Any offset will do: the view needs no alignment.
/// let mut page = vec![0u8; 3];
/// page.extend_from_slice(&stored);
/// let view: &Account = Pod::<Account>::decode_ref(&page[3..])?;
/// assert_eq!(view.nonce.get(), 7);
/// assert!(Pod::<Account>::decode(&stored[1..]).is_err()); // a byte short
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Pod<T>(PhantomData<fn() -> T>);

impl<T> Pod<T> {
    #[cold]
    fn wrong_size(found: usize) -> DecodeError {
        DecodeError::new(format!(
            "a `{}` value is {} bytes (pod), found {found}",
            std::any::type_name::<T>(),
            std::mem::size_of::<T>()
        ))
    }
}

impl<T> Value for Pod<T>
where
    T: FromBytes + IntoBytes + Immutable + KnownLayout + Unaligned,
{
    type Item = T;
    const DESCRIPTOR: Descriptor = Descriptor::Pod(std::mem::size_of::<T>());

    #[inline]
    fn encode<'a>(item: &'a T, _scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        Ok(item.as_bytes())
    }

    #[inline]
    fn decode(bytes: &[u8]) -> Result<T, DecodeError> {
        T::read_from_bytes(bytes).map_err(|_| Self::wrong_size(bytes.len()))
    }
}

impl<T> ValueRef for Pod<T>
where
    T: FromBytes + IntoBytes + Immutable + KnownLayout + Unaligned,
{
    type Ref<'a>
        = &'a T
    where
        Self: 'a;

    #[inline]
    fn decode_ref(bytes: &[u8]) -> Result<&T, DecodeError> {
        T::ref_from_bytes(bytes).map_err(|_| Self::wrong_size(bytes.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zerocopy::byteorder::{BigEndian, LittleEndian, U32, U64};

    #[derive(Debug, PartialEq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
    #[repr(C)]
    struct Rec {
        a: U64<LittleEndian>,
        b: U32<BigEndian>,
        tag: [u8; 3],
    }

    #[test]
    fn pod_views_unaligned_bytes_at_every_offset() {
        let rec = Rec {
            a: U64::new(0x0102_0304_0506_0708),
            b: U32::new(9),
            tag: *b"abc",
        };
        let mut scratch = Vec::new();
        let stored = Pod::<Rec>::encode(&rec, &mut scratch).unwrap().to_vec();
        assert_eq!(stored.len(), 15);
        assert_eq!(&stored[..8], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&stored[8..12], &9u32.to_be_bytes());
        for offset in 0..8 {
            let mut page = vec![0xeeu8; offset];
            page.extend_from_slice(&stored);
            let view = Pod::<Rec>::decode_ref(&page[offset..]).unwrap();
            assert_eq!(view, &rec, "offset {offset}");
            assert_eq!(Pod::<Rec>::decode(&page[offset..]).unwrap(), rec);
        }
        for len in [0, 14, 16] {
            let bytes = vec![0u8; len];
            let err = Pod::<Rec>::decode_ref(&bytes).unwrap_err();
            assert!(err.message().contains("15 bytes"), "{err}");
            assert!(err.message().contains(&format!("found {len}")), "{err}");
            assert!(Pod::<Rec>::decode(&bytes).is_err());
        }
        assert_eq!(Pod::<Rec>::DESCRIPTOR.to_string(), "pod(15)");
    }
}
