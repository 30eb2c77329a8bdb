//! Value codecs.

use std::marker::PhantomData;

use serde::{Serialize, de::DeserializeOwned};

use super::{DecodeError, Descriptor, EncodeError};

/// How a table's values become bytes and back: the codec named by `#[table(codec = ..)]`.
///
/// Tabula ships [`Bincode<T>`] (serde + bincode 2, the default) and [`Raw`] (bytes as they are).
/// Implement it for your own format:
///
/// ```
/// use tabula_core::{DecodeError, Descriptor, EncodeError, Value};
///
/// /// A point stored as two little-endian `f32`s.
/// #[derive(Debug, PartialEq)]
/// pub struct Point { x: f32, y: f32 }
///
/// pub struct PointCodec;
///
/// impl Value for PointCodec {
///     type Item = Point;
///     const DESCRIPTOR: Descriptor = Descriptor::Custom("point-f32le-v1");
///
///     fn encode<'a>(p: &'a Point, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
///         scratch.clear();
///         scratch.extend_from_slice(&p.x.to_le_bytes());
///         scratch.extend_from_slice(&p.y.to_le_bytes());
///         Ok(scratch)
///     }
///
///     fn decode(bytes: &[u8]) -> Result<Point, DecodeError> {
///         let b: [u8; 8] = bytes.try_into().map_err(|_| DecodeError::new("a point is 8 bytes"))?;
///         let (x, y) = b.split_at(4);
///         Ok(Point { x: f32::from_le_bytes(x.try_into().unwrap()), y: f32::from_le_bytes(y.try_into().unwrap()) })
///     }
/// }
///
/// let mut scratch = Vec::new();
/// let p = Point { x: 1.0, y: -2.5 };
/// let bytes = PointCodec::encode(&p, &mut scratch).unwrap().to_vec();
/// assert_eq!(PointCodec::decode(&bytes).unwrap(), p);
/// ```
pub trait Value {
    /// The Rust type read and written.
    type Item;

    /// The shape of the encoding, recorded in the schema and checked on open.
    const DESCRIPTOR: Descriptor;

    /// Encodes `item`, either by borrowing bytes it already holds or by writing into `scratch`
    /// (a buffer the transaction reuses, so steady-state writes do not allocate).
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when the item cannot be encoded.
    fn encode<'a>(item: &'a Self::Item, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError>;

    /// Decodes stored bytes.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the bytes are not a valid encoding; never a panic.
    fn decode(bytes: &[u8]) -> Result<Self::Item, DecodeError>;
}

/// The default value codec: serde + bincode 2 (standard configuration: little-endian,
/// variable-length integers).
pub struct Bincode<T>(PhantomData<fn() -> T>);

const BINCODE: bincode::config::Configuration = bincode::config::standard();

impl<T: Serialize + DeserializeOwned> Value for Bincode<T> {
    type Item = T;
    const DESCRIPTOR: Descriptor = Descriptor::Bincode;

    #[inline]
    fn encode<'a>(item: &'a T, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        bincode::serde::encode_into_std_write(item, scratch, BINCODE)
            .map_err(|e| EncodeError::new(e.to_string()))?;
        Ok(scratch)
    }

    #[inline]
    fn decode(bytes: &[u8]) -> Result<T, DecodeError> {
        let (value, used) =
            decode_bounded(bytes).map_err(|e| DecodeError::new(format!("bincode: {e}")))?;
        if used != bytes.len() {
            return Err(DecodeError::new(format!(
                "bincode: {} byte(s) left over after the value",
                bytes.len() - used
            )));
        }
        Ok(value)
    }
}

/// Decoded bytes per input byte that a valid encoding can claim: bincode counts an integer as
/// its in-memory size (a `u128` is 16) even when its varint takes one byte; strings and byte
/// strings claim their length, which the input must hold.
const MAX_CLAIM_PER_BYTE: usize = 16;

/// `bincode::serde::decode_from_slice` with a limit on what the decoder may claim (and so
/// allocate), scaled to the input: a damaged length prefix (`u64::MAX` bytes of string) is an
/// error instead of an allocation that aborts the process. bincode's limit is a const
/// generic, so the input length picks one of a few power-of-16 buckets; a valid encoding never
/// reaches its bucket's limit, and a damaged one allocates at most that limit (at most 256
/// times its input plus 4 KiB).
#[inline]
fn decode_bounded<T: DeserializeOwned>(
    bytes: &[u8],
) -> Result<(T, usize), bincode::error::DecodeError> {
    let need = bytes
        .len()
        .saturating_mul(MAX_CLAIM_PER_BYTE)
        .saturating_add(64);
    macro_rules! bucket {
        ($($limit:expr),*) => {$(
            if need <= $limit {
                return bincode::serde::decode_from_slice(bytes, BINCODE.with_limit::<{ $limit }>());
            }
        )*};
    }
    bucket!(1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30);
    // Values over 64 MiB (rare in libmdbx, whose values stop at 2 GiB): no limit.
    bincode::serde::decode_from_slice(bytes, BINCODE)
}

/// Values stored as the bytes given: `Vec<u8>` in and out, no encoding.
///
/// For zero-copy reads use `get_bytes`, which borrows the stored bytes for the transaction's
/// lifetime.
pub struct Raw;

impl Value for Raw {
    type Item = Vec<u8>;
    const DESCRIPTOR: Descriptor = Descriptor::Raw;

    #[inline]
    fn encode<'a>(item: &'a Vec<u8>, _scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        Ok(item)
    }

    #[inline]
    fn decode(bytes: &[u8]) -> Result<Vec<u8>, DecodeError> {
        Ok(bytes.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a damaged length prefix used to make bincode allocate what it claimed
    /// (`u64::MAX` bytes for a `String`), aborting the process instead of returning an error.
    #[test]
    fn bincode_length_prefix_beyond_the_input_is_an_error_not_an_abort() {
        // 253 = u64 varint marker; then a huge length, then three bytes of "string".
        let mut bytes = vec![253];
        bytes.extend_from_slice(&(u64::MAX >> 1).to_le_bytes());
        bytes.extend_from_slice(b"abc");
        assert!(Bincode::<String>::decode(&bytes).is_err());
        assert!(Bincode::<Vec<u8>>::decode(&bytes).is_err());
        assert!(Bincode::<(u8, String)>::decode(&[[7].as_slice(), &bytes].concat()).is_err());
        // A length the input could hold but does not (1 MiB claimed, 3 bytes present).
        let mut mid = vec![253];
        mid.extend_from_slice(&(1u64 << 20).to_le_bytes());
        mid.extend_from_slice(b"abc");
        assert!(Bincode::<String>::decode(&mid).is_err());
        // Valid values at every size bucket still decode, the largest claims included.
        for len in [0usize, 200, 5_000, 70_000, 1 << 20] {
            let mut scratch = Vec::new();
            let s = "x".repeat(len);
            let bytes = Bincode::<String>::encode(&s, &mut scratch)
                .unwrap()
                .to_vec();
            assert_eq!(Bincode::<String>::decode(&bytes).unwrap(), s);
            let v: Vec<u128> = vec![1; len / 8];
            let bytes = Bincode::<Vec<u128>>::encode(&v, &mut scratch)
                .unwrap()
                .to_vec();
            assert_eq!(Bincode::<Vec<u128>>::decode(&bytes).unwrap(), v);
        }
    }

    #[test]
    fn bincode_round_trips_and_rejects_garbage() {
        let mut scratch = Vec::new();
        let v = (7u32, String::from("seven"), vec![1u8, 2, 3]);
        let bytes = Bincode::<(u32, String, Vec<u8>)>::encode(&v, &mut scratch)
            .unwrap()
            .to_vec();
        assert_eq!(
            Bincode::<(u32, String, Vec<u8>)>::decode(&bytes).unwrap(),
            v
        );
        // Truncated input is an error, not a panic.
        assert!(Bincode::<(u32, String, Vec<u8>)>::decode(&bytes[..bytes.len() - 1]).is_err());
        // Trailing bytes are an error too.
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Bincode::<(u32, String, Vec<u8>)>::decode(&longer).is_err());
        // A string that is not UTF-8.
        assert!(Bincode::<String>::decode(&[2, 0xff, 0xfe]).is_err());
    }
}
