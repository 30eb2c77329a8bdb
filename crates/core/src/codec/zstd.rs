//! zstd-compressed values: [`Zstd<C>`] wraps another codec.

use std::cell::Cell;
use std::marker::PhantomData;

use zstd::bulk::{Compressor, Decompressor};
use zstd::zstd_safe;

use super::{DecodeError, EncodeError, Value};
use crate::schema::{Descriptor, ValueTrace};

/// Values of codec `C`, compressed with zstd at level `LEVEL` (3 by default; 1–22, negative
/// levels are faster still): `codec = Zstd<Bincode<Header>>`. Needs the `compression` feature.
///
/// Each value is one standard zstd frame holding its decompressed size, so any zstd tool
/// decompresses it. The schema records the codec as `zstd(bincode)`, so a file written
/// compressed is never read as plain bincode (and the reverse): a changed codec is refused at
/// open with the migration step that re-encodes the table. The value's structure is `C`'s, so
/// a changed value type is refused as it is without compression. The level is not recorded:
/// any level decompresses alike.
///
/// A value is compressed on its own, without a dictionary, so small values gain little: zstd
/// finds repetitions *within* a value (a record of a few hundred bytes with repeated keys or
/// text shrinks; 32 random bytes do not). A value whose header claims more than zstd can
/// expand its bytes to (32,768 times), or that does not decompress, is a [`DecodeError`], not
/// an allocation.
///
/// ```
/// use tabula_core::{Bincode, Value};
/// use tabula_core::codec::Zstd;
///
/// let text = "the same words again and again, ".repeat(20);
/// let mut scratch = Vec::new();
/// let plain = Bincode::<String>::encode(&text, &mut scratch)?.len();
/// let stored = Zstd::<Bincode<String>>::encode(&text, &mut scratch)?.to_vec();
/// assert!(stored.len() < plain / 4, "{} vs {plain}", stored.len());
/// assert_eq!(Zstd::<Bincode<String>>::decode(&stored)?, text);
/// assert_eq!(Zstd::<Bincode<String>>::DESCRIPTOR.to_string(), "zstd(bincode)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Zstd<C, const LEVEL: i32 = 3>(PhantomData<fn() -> C>);

/// How many bytes one stored byte can become, at most: a zstd block of 128 KiB repeating one
/// byte takes 4 bytes (an RLE block), and nothing compresses further.
const MAX_RATIO: u64 = 32 * 1024;

thread_local! {
    // Each thread keeps its zstd contexts and buffers, so a value costs no allocation once
    // warm. They are taken out while in use and put back after, so a codec that (oddly)
    // compresses inside its own encode finds none and makes its own rather than panicking.
    static COMPRESSOR: Cell<Option<(i32, Compressor<'static>)>> = const { Cell::new(None) };
    static DECOMPRESSOR: Cell<Option<Decompressor<'static>>> = const { Cell::new(None) };
    pub(super) static PLAIN: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Buffers larger than this are not kept between values.
const KEEP_BUFFER: usize = 1 << 20;

pub(super) fn put_back(slot: &'static std::thread::LocalKey<Cell<Vec<u8>>>, mut buf: Vec<u8>) {
    if buf.capacity() <= KEEP_BUFFER {
        buf.clear();
        slot.set(buf);
    }
}

/// Compresses `plain` into `out` (cleared first) as one frame recording its size.
pub(super) fn compress(plain: &[u8], out: &mut Vec<u8>, level: i32) -> Result<(), EncodeError> {
    let mut compressor = match COMPRESSOR.take() {
        Some((l, c)) if l == level => c,
        _ => Compressor::new(level)
            .map_err(|e| EncodeError::new(format!("zstd: cannot set up compression ({e})")))?,
    };
    out.clear();
    out.reserve(zstd_safe::compress_bound(plain.len()));
    let result = compressor
        .compress_to_buffer(plain, out)
        .map_err(|e| EncodeError::new(format!("zstd: compression failed ({e})")));
    COMPRESSOR.set(Some((level, compressor)));
    result.map(drop)
}

/// The decompressed size a frame records, checked against what its bytes can hold, so a
/// damaged header is an error rather than an allocation.
pub(super) fn frame_size(stored: &[u8]) -> Result<usize, DecodeError> {
    let size = match zstd_safe::get_frame_content_size(stored) {
        Ok(Some(size)) => size,
        Ok(None) => {
            return Err(DecodeError::new(
                "zstd: the frame does not record its decompressed size (not written by Tabula)",
            ));
        }
        Err(_) => {
            return Err(DecodeError::new(format!(
                "zstd: not a zstd frame ({} bytes starting {:02x?})",
                stored.len(),
                &stored[..stored.len().min(4)]
            )));
        }
    };
    let most = (stored.len() as u64).saturating_mul(MAX_RATIO);
    if size > most {
        return Err(DecodeError::new(format!(
            "zstd: the frame claims {size} decompressed bytes, more than its {} bytes can hold \
             (at most {most})",
            stored.len()
        )));
    }
    usize::try_from(size)
        .map_err(|_| DecodeError::new(format!("zstd: {size} decompressed bytes do not fit")))
}

/// Decompresses the frame `stored`, written without a dictionary, into `out` (cleared first).
pub(super) fn decompress(stored: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    let size = frame_size(stored)?;
    let mut decompressor = match DECOMPRESSOR.take() {
        Some(d) => d,
        None => Decompressor::new()
            .map_err(|e| DecodeError::new(format!("zstd: cannot set up decompression ({e})")))?,
    };
    out.clear();
    out.reserve(size);
    let result = decompressor.decompress_to_buffer(stored, out);
    DECOMPRESSOR.set(Some(decompressor));
    match result {
        Ok(n) if n == size => Ok(()),
        Ok(n) => Err(DecodeError::new(format!(
            "zstd: the frame claims {size} decompressed bytes but holds {n}"
        ))),
        Err(e) => Err(DecodeError::new(format!("zstd: {e}"))),
    }
}

/// `plain` compressed as the frame [`Zstd`] stores (level 3).
pub(super) fn compress_frame(plain: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    compress(plain, &mut out, 3)?;
    Ok(out)
}

impl<C: Value, const LEVEL: i32> Value for Zstd<C, LEVEL> {
    type Item = C::Item;
    const DESCRIPTOR: Descriptor = Descriptor::Zstd(&C::DESCRIPTOR);

    fn encode<'a>(item: &'a C::Item, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        let mut plain = PLAIN.take();
        let result = match C::encode(item, &mut plain) {
            Ok(bytes) => compress(bytes, scratch, LEVEL),
            Err(e) => Err(e),
        };
        put_back(&PLAIN, plain);
        result.map(|()| &scratch[..])
    }

    fn decode(bytes: &[u8]) -> Result<C::Item, DecodeError> {
        let mut plain = PLAIN.take();
        let result = decompress(bytes, &mut plain).and_then(|()| C::decode(&plain));
        put_back(&PLAIN, plain);
        result
    }

    /// `C`'s shape: the values' structure is the inner codec's.
    fn shape() -> Option<String> {
        C::shape()
    }

    fn trace() -> ValueTrace {
        C::trace()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Bincode, Raw};

    #[test]
    fn round_trips_at_every_size_and_level() {
        let mut scratch = Vec::new();
        for len in [0usize, 1, 31, 200, 4096, 300_000, 2 << 20] {
            let value: Vec<u8> = (0..len)
                .map(|i| (i % 251) as u8 ^ (i / 977) as u8)
                .collect();
            let stored = Zstd::<Raw>::encode(&value, &mut scratch).unwrap().to_vec();
            assert_eq!(Zstd::<Raw>::decode(&stored).unwrap(), value, "{len}");
            let stored = Zstd::<Raw, 19>::encode(&value, &mut scratch)
                .unwrap()
                .to_vec();
            assert_eq!(Zstd::<Raw>::decode(&stored).unwrap(), value, "{len}");
            let stored = Zstd::<Bincode<Vec<u8>>, -5>::encode(&value, &mut scratch)
                .unwrap()
                .to_vec();
            assert_eq!(Zstd::<Bincode<Vec<u8>>>::decode(&stored).unwrap(), value);
        }
    }

    /// A damaged value is an error, never a panic or an allocation of what a damaged header
    /// claims.
    #[test]
    fn damaged_frames_are_errors() {
        let mut scratch = Vec::new();
        let value = "abc".repeat(100);
        let stored = Zstd::<Bincode<String>>::encode(&value, &mut scratch)
            .unwrap()
            .to_vec();
        assert!(Zstd::<Bincode<String>>::decode(&[]).is_err());
        assert!(Zstd::<Bincode<String>>::decode(b"not zstd").is_err());
        for cut in 0..stored.len() {
            assert!(
                Zstd::<Bincode<String>>::decode(&stored[..cut]).is_err(),
                "{cut}"
            );
        }
        // Every single-byte change: an error or some value, never a panic.
        for at in 0..stored.len() {
            for bit in 0..8 {
                let mut bad = stored.clone();
                bad[at] ^= 1 << bit;
                let _ = Zstd::<Bincode<String>>::decode(&bad);
            }
        }
        // A frame header claiming 2^60 bytes: refused before anything is allocated.
        let mut huge = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
        huge.extend_from_slice(&(1u64 << 60).to_le_bytes());
        huge.extend_from_slice(&[1, 0, 0]);
        let err = Zstd::<Raw>::decode(&huge).unwrap_err();
        assert!(err.message().contains("claims"), "{err}");
    }

    #[test]
    fn descriptor_and_shape_are_the_inner_codecs() {
        assert_eq!(Zstd::<Raw>::DESCRIPTOR.to_string(), "zstd(raw)");
        assert_eq!(
            Zstd::<Bincode<(u8, String)>, 9>::shape(),
            Bincode::<(u8, String)>::shape()
        );
        assert_eq!(Zstd::<Raw>::trace(), ValueTrace::Opaque);
    }
}
