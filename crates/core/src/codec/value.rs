//! Value codecs.

use std::marker::PhantomData;

use serde::{Serialize, de::DeserializeOwned};

use super::{DecodeError, EncodeError};
use crate::schema::{Descriptor, ValueTrace};

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

    /// The length of `item`'s encoding when the codec knows it before encoding, so that a
    /// write can reserve that much room in the page and [`encode_into`](Value::encode_into) it
    /// there (libmdbx's `MDBX_RESERVE`) instead of encoding into a buffer that libmdbx then
    /// copies. `None` (the default) writes through [`encode`](Value::encode).
    ///
    /// Return `Some` only for a codec that writes its bytes (a fixed-size binary layout, a
    /// value assembled from parts); one whose `encode` borrows bytes the item already holds
    /// ([`Raw`], [`Pod`](super::Pod)) gains nothing: libmdbx's copy is the only one there.
    /// Writes into `dupsort` tables always go through `encode` (libmdbx cannot reserve there).
    ///
    /// ```
    /// use tabula_core::{Bincode, Raw, Value};
    ///
    /// assert_eq!(Raw::encoded_len(&vec![1, 2, 3]), None); // borrowed: nothing to save
    /// assert_eq!(Bincode::<u64>::encoded_len(&7), None);   // not known without encoding
    /// ```
    #[inline]
    fn encoded_len(item: &Self::Item) -> Option<usize> {
        let _ = item;
        None
    }

    /// Writes `item`'s encoding into `out`, which is exactly
    /// [`encoded_len`](Value::encoded_len) bytes long (zeroed). Called only after
    /// `encoded_len` returned `Some`; the default encodes with [`encode`](Value::encode) and
    /// copies, so a codec overriding `encoded_len` should override this too.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when the item cannot be encoded, or its encoding is not `out.len()`
    /// bytes long.
    fn encode_into(item: &Self::Item, out: &mut [u8]) -> Result<(), EncodeError> {
        let mut scratch = Vec::new();
        let bytes = Self::encode(item, &mut scratch)?;
        if bytes.len() != out.len() {
            return Err(EncodeError::new(format!(
                "the codec announced a {}-byte encoding (`encoded_len`) but wrote {} bytes",
                out.len(),
                bytes.len()
            )));
        }
        out.copy_from_slice(bytes);
        Ok(())
    }

    /// A structural description of the stored format (field names and types, variants), or
    /// `None` when the codec cannot describe it. The startup step records it and refuses to
    /// open a table whose shape changed without a migration, even when the type kept its name.
    fn shape() -> Option<String> {
        None
    }

    /// What the startup step records to recognise this codec's stored format: by default the
    /// [`shape`](Value::shape) when there is one, otherwise [`ValueTrace::Opaque`] (the
    /// [`DESCRIPTOR`](Value::DESCRIPTOR) alone identifies the format: bump a
    /// [`Descriptor::Custom`] name when the format changes).
    ///
    /// ```
    /// use tabula_core::{Bincode, Raw, Value, ValueTrace};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// enum Kind { A, B(u8) }
    ///
    /// assert!(matches!(Bincode::<Vec<Kind>>::trace(), ValueTrace::Complete(_)));
    /// assert_eq!(Raw::trace(), ValueTrace::Opaque);
    /// ```
    fn trace() -> ValueTrace {
        match Self::shape() {
            Some(shape) => ValueTrace::Complete(shape),
            None => ValueTrace::Opaque,
        }
    }
}

/// The default value codec: serde + bincode 2's format (standard configuration: little-endian,
/// variable-length integers).
///
/// Tabula writes and reads the format with its own serializer and deserializer: the bytes are
/// those the `bincode` 2 crate writes and reads, but Tabula does not depend on that crate (whose
/// development has ceased, RUSTSEC-2025-0141).
pub struct Bincode<T>(PhantomData<fn() -> T>);

impl<T: Serialize + DeserializeOwned> Value for Bincode<T> {
    type Item = T;
    const DESCRIPTOR: Descriptor = Descriptor::Bincode;

    #[inline]
    fn encode<'a>(item: &'a T, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        super::bincode_ser::encode_into(item, scratch)?;
        Ok(scratch)
    }

    /// Decodes with Tabula's own reader of bincode's format (`bincode_de.rs`): lengths are
    /// checked against the input before anything is allocated, so a damaged value is an error,
    /// never an allocation that aborts, at no cost to valid ones. Forced inline, with the
    /// reader's entry: the typed get and the cursor step decode in the caller's body, the
    /// decoded value built in place rather than returned through two calls.
    #[inline(always)]
    fn decode(bytes: &[u8]) -> Result<T, DecodeError> {
        super::bincode_de::decode(bytes)
    }

    /// The serde data model of `T` as JSON (serde-reflection's `(Format, Registry)`), traced
    /// to the end: every variant of every enum, wherever it sits (`codec/trace.rs`). `None` when
    /// the trace cannot finish ([`trace`](Value::trace) says why).
    fn shape() -> Option<String> {
        match Self::trace() {
            ValueTrace::Complete(shape) => Some(shape),
            _ => None,
        }
    }

    fn trace() -> ValueTrace {
        crate::schema::trace::serde_trace::<T>()
    }
}

/// Values stored as the bytes given: `Vec<u8>` in and out, no encoding.
///
/// For zero-copy reads use `get_bytes` or `get_ref` (a [`ValueRef`](super::ValueRef) codec:
/// the stored bytes, borrowed for the transaction's lifetime). `put_reserve` writes a value
/// straight into the page (every byte string is a `Raw` value: [`AnyBytes`](super::AnyBytes)).
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

/// A form a value of codec `C` can be written from: the value itself (`&C::Item`), or a
/// borrowed form the codec stores the same way — `str` for a `String` value and `[T]` for a
/// `Vec<T>` (serde values, and the ordered values of a dupsort table), `[u8]` for a [`Raw`]
/// value — so that `tx.put::<Topics>(&1, "transfer")` needs no `String`, and a `&[u8]` goes
/// into a `Raw` table without a copy. As `AsKey` does for keys.
///
/// ```
/// # use tabula::{Options, Raw, Schema, Table};
/// #[derive(Table)]
/// #[table(key = u64, value = String)]
/// struct Names;
/// #[derive(Table)]
/// #[table(key = u64, value = Vec<u8>, codec = Raw)]
/// struct Blobs;
/// # #[derive(Schema)]
/// # struct App(Names, Blobs);
/// # let dir = tabula::__doc::temp_dir();
/// # let db = tabula::open::<App>(dir.path(), Options::new())?;
/// let mut tx = db.write()?;
/// tx.put::<Names>(&1, "one")?; // a `&str` for a `String` value
/// tx.put::<Names>(&2, &"two".to_string())?; // the value itself, as ever
/// tx.put::<Blobs>(&1, &b"bytes"[..])?; // a `&[u8]` for a `Raw` value
/// assert_eq!(tx.get::<Names>(&1)?.as_deref(), Some("one"));
/// assert_eq!(tx.get_bytes::<Blobs>(&1)?, Some(&b"bytes"[..]));
/// # Ok::<(), tabula::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written as a value of codec `{C}`",
    label = "not the table's value type (or a borrowed form of it)",
    note = "pass a reference to the table's value type; `&str` is accepted for `String` values and `&[T]` for `Vec<T>` values"
)]
pub trait AsValue<C: Value> {
    /// The stored bytes: in `scratch`, or borrowed from `self` when they are the same bytes.
    ///
    /// # Errors
    ///
    /// What the codec refuses to encode.
    fn encode_value<'a>(&'a self, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError>;

    /// The value itself when `self` is one (not a borrowed form): lets a codec that knows its
    /// encoded length ([`Value::encoded_len`]) write straight into the page.
    #[doc(hidden)]
    #[inline]
    fn as_item(&self) -> Option<&C::Item> {
        None
    }
}

#[diagnostic::do_not_recommend]
impl<C: Value> AsValue<C> for C::Item {
    #[inline]
    fn encode_value<'a>(&'a self, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        C::encode(self, scratch)
    }

    #[inline]
    fn as_item(&self) -> Option<&C::Item> {
        Some(self)
    }
}

/// A serde value written from a borrowed form serializes to the same bytes: serde writes `str`
/// as `String` and `[T]` as `Vec<T>`.
impl AsValue<Bincode<String>> for str {
    #[inline]
    fn encode_value<'a>(&'a self, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        super::bincode_ser::encode_into(self, scratch)?;
        Ok(scratch)
    }
}

impl<T: Serialize + DeserializeOwned> AsValue<Bincode<Vec<T>>> for [T] {
    #[inline]
    fn encode_value<'a>(&'a self, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        scratch.clear();
        super::bincode_ser::encode_into(self, scratch)?;
        Ok(scratch)
    }
}

impl AsValue<Raw> for [u8] {
    #[inline]
    fn encode_value<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Tabula recorded before the complete tracer (issue 13): serde-reflection's trace,
    /// repeated while clearing the "incomplete" mark of nested enums; `None` when an enum stayed
    /// incomplete (one reached only through a sequence, map or option) or the trace failed.
    fn legacy_shape<T: Serialize + DeserializeOwned>() -> Option<String> {
        use serde_reflection::{Error as TraceError, Tracer, TracerConfig};
        let mut nested: Vec<String> = Vec::new();
        for _attempt in 0..64 {
            let mut tracer = Tracer::new(TracerConfig::default());
            let mut format = tracer.trace_simple_type::<T>().ok()?.0;
            for _pass in 0..4096 {
                let mut incomplete = false;
                for name in &nested {
                    incomplete |= tracer.check_incomplete_enum(name).is_some();
                }
                if !incomplete {
                    break;
                }
                format = tracer.trace_simple_type::<T>().ok()?.0;
            }
            match tracer.registry() {
                Ok(registry) if !enums_complete(&registry) => return None,
                Ok(registry) => return serde_json::to_string(&(format, registry)).ok(),
                Err(TraceError::MissingVariants(names)) => {
                    let known = nested.len();
                    for name in names {
                        if !nested.contains(&name) {
                            nested.push(name);
                        }
                    }
                    if nested.len() == known {
                        return None;
                    }
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// Whether every enum in `registry` has its variants numbered `0..n`, as bincode numbers them.
    fn enums_complete(registry: &serde_reflection::Registry) -> bool {
        registry.values().all(|c| match c {
            serde_reflection::ContainerFormat::Enum(variants) => variants
                .keys()
                .enumerate()
                .all(|(i, &index)| index as usize == i),
            _ => true,
        })
    }

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

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct V1 {
        a: u32,
        b: String,
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct V2 {
        a: u32,
        b: String,
        c: Option<u64>,
    }

    #[test]
    fn bincode_shape_tracks_fields() {
        let v1 = Bincode::<V1>::shape().expect("serde types have a shape");
        assert!(v1.contains("\"a\"") && v1.contains("\"b\""), "{v1}");
        let v2 = Bincode::<V2>::shape().unwrap();
        assert_ne!(
            v1.replace("V1", "V2"),
            v2,
            "an added field changes the shape"
        );
        assert_eq!(
            Bincode::<V1>::shape().unwrap(),
            v1,
            "tracing is deterministic"
        );
        assert_eq!(Raw::shape(), None);
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    enum Inner {
        A,
        B(u8),
        C { x: Option<Box<Inner>> },
        D(u16, u16),
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        id: u64,
        inner: Inner,
        list: Vec<Inner>,
        again: (Inner, Option<Inner>),
    }

    /// Regression: a single tracing pass leaves nested enums incomplete, which made the shape
    /// `None` for any struct holding an enum.
    #[test]
    fn bincode_shape_covers_every_variant_of_nested_enums() {
        let shape = Bincode::<Outer>::shape().expect("a struct with a nested enum has a shape");
        for variant in ["\"A\"", "\"B\"", "\"C\"", "\"D\""] {
            assert!(shape.contains(variant), "{variant} missing from {shape}");
        }
        assert_eq!(Bincode::<Outer>::shape().unwrap(), shape, "deterministic");
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct InSeq {
        list: Vec<Inner>,
    }

    /// Regression (issue 13): serde-reflection stops entering a `Vec`, `Option` or map once it
    /// knows the element's type name, so an enum reached only through one never completed and
    /// the table recorded no shape at all: a changed type then opened unnoticed.
    #[test]
    fn an_enum_only_inside_a_sequence_has_a_complete_shape() {
        let shape = Bincode::<InSeq>::shape().expect("complete");
        for variant in ["\"A\"", "\"B\"", "\"C\"", "\"D\""] {
            assert!(shape.contains(variant), "{variant} missing from {shape}");
        }
        assert_eq!(legacy_shape::<InSeq>(), None, "what was recorded before");
    }

    mod twins {
        pub mod a {
            #[derive(serde::Serialize, serde::Deserialize)]
            pub struct Same {
                pub x: u8,
            }
        }
        pub mod b {
            #[derive(serde::Serialize, serde::Deserialize)]
            pub struct Same {
                pub y: String,
            }
        }
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    enum List {
        Cons(u8, Box<List>),
        Nil,
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
        label: Option<Box<Tree>>,
        kind: Inner,
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    enum Never {}

    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct Shapes {
        unit: (),
        unit_struct: UnitS,
        newtype: NewT,
        tuple_struct: TupleS,
        arrays: ([u8; 4], (u16, u16), [Option<Inner>; 2]),
        map: std::collections::BTreeMap<String, (Inner, u8)>,
        floats: (f32, f64),
        wide: (i128, u128, char, bool),
        never: Option<Never>,
        nested: Option<Vec<std::collections::BTreeMap<u8, Inner>>>,
        twins: (twins::a::Same, twins::b::Same),
        non_zero: std::num::NonZeroU64,
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    struct UnitS;
    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct NewT(u32);
    #[derive(serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct TupleS(u8, String);

    /// Records written before the complete tracer hold serde-reflection's shape wherever it had
    /// one: the tracer must give exactly that text for such types, so those records compare.
    #[test]
    fn the_shape_is_serde_reflections_wherever_serde_reflection_had_one() {
        fn check<T: Serialize + DeserializeOwned>(expect_legacy: bool) {
            let legacy = legacy_shape::<T>();
            assert_eq!(
                legacy.is_some(),
                expect_legacy,
                "{}",
                std::any::type_name::<T>()
            );
            let shape = Bincode::<T>::shape().unwrap_or_else(|| {
                panic!(
                    "{}: {:?}",
                    std::any::type_name::<T>(),
                    Bincode::<T>::trace()
                )
            });
            if let Some(legacy) = legacy {
                assert_eq!(shape, legacy, "{}", std::any::type_name::<T>());
            }
        }
        check::<V1>(true);
        check::<V2>(true);
        check::<Outer>(true);
        check::<Inner>(true);
        check::<(u32, String, Vec<u8>)>(true);
        check::<[u8; 3]>(true);
        check::<(u8, [u8; 3], Vec<(u8, u8)>)>(true);
        check::<Option<u64>>(true);
        check::<std::collections::BTreeMap<String, u32>>(true);
        check::<UnitS>(true);
        check::<NewT>(true);
        check::<TupleS>(true);
        check::<()>(true);
        check::<Box<Outer>>(true);
        // Where serde-reflection gave up, the tracer finishes.
        check::<std::num::NonZeroU64>(false);
        check::<InSeq>(false);
        // (serde-reflection recurses into `Cons` until the stack overflows on `List`.)
        check::<Tree>(true);
        check::<Shapes>(false);
    }

    #[test]
    fn recursive_and_unusual_types_are_traced_completely() {
        for (shape, needles) in [
            (Bincode::<List>::shape(), &["\"Cons\"", "\"Nil\""][..]),
            (
                Bincode::<Tree>::shape(),
                &["\"children\"", "\"label\"", "\"D\""][..],
            ),
            (
                Bincode::<Shapes>::shape(),
                &["\"Same\"", "\"Same#2\"", "\"Never\"", "\"TUPLEARRAY\""][..],
            ),
        ] {
            let shape = shape.expect("complete");
            for needle in needles {
                assert!(shape.contains(needle), "{needle} missing from {shape}");
            }
        }
        // The recorded shape decodes what bincode writes, through the schema-less reader.
        let value = Tree {
            children: vec![Tree {
                children: vec![],
                label: None,
                kind: Inner::D(1, 2),
            }],
            label: Some(Box::new(Tree {
                children: vec![],
                label: None,
                kind: Inner::C {
                    x: Some(Box::new(Inner::A)),
                },
            })),
            kind: Inner::B(7),
        };
        let mut scratch = Vec::new();
        let bytes = Bincode::<Tree>::encode(&value, &mut scratch)
            .unwrap()
            .to_vec();
        let shape = crate::codec::untyped::ValueShape::of_record(
            "bincode<Tree>",
            Bincode::<Tree>::shape().as_deref(),
        )
        .unwrap()
        .unwrap();
        let decoded = shape.decode(&bytes).unwrap();
        assert_eq!(shape.encode(&decoded).unwrap(), bytes);
    }

    /// A type whose `Deserialize` refuses every sample cannot be traced to the end: the trace
    /// says what it saw and why it stopped, and there is no shape.
    #[test]
    fn a_type_refusing_every_sample_is_a_partial_trace() {
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String")]
        struct Code(String);
        impl TryFrom<String> for Code {
            type Error = &'static str;
            fn try_from(s: String) -> Result<Self, &'static str> {
                if s.len() == 7 && s.starts_with('#') {
                    Ok(Code(s))
                } else {
                    Err("not a colour code")
                }
            }
        }
        #[derive(serde::Serialize, serde::Deserialize)]
        #[allow(dead_code)]
        struct Paint {
            name: String,
            code: Code,
            layers: u8,
        }
        assert_eq!(Bincode::<Paint>::shape(), None);
        let ValueTrace::Partial { structure, problem } = Bincode::<Paint>::trace() else {
            panic!("a partial trace")
        };
        assert!(problem.contains("not a colour code"), "{problem}");
        assert!(
            structure.contains("\"name\"") && structure.contains("\"layers\""),
            "{structure}"
        );
    }
}
