use std::fmt;

/// The shape of a key or value encoding, stored in the schema record and checked on every open.
///
/// Descriptors are compile-time constants built from the types a table declares; their
/// [`Display`](fmt::Display) form (`u64`, `(str, u64)`, `bincode<Header>`) is what the schema record
/// keeps, so a changed key type or value codec is caught before any handle is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Descriptor {
    /// `()`.
    Unit,
    /// `bool`, one byte.
    Bool,
    /// An unsigned integer of this many bits, big-endian.
    Unsigned(u32),
    /// A signed integer of this many bits, big-endian with the sign bit flipped.
    Signed(u32),
    /// A `char`, as its `u32` scalar value, big-endian.
    Char,
    /// `[u8; N]`, raw.
    Array(usize),
    /// A byte string (`Vec<u8>`): raw when last in a key, escaped and terminated otherwise.
    Bytes,
    /// A string, encoded as its UTF-8 bytes like [`Descriptor::Bytes`].
    Str,
    /// `Option<T>`: a tag byte (0 = `None`, 1 = `Some`) then `T`.
    Option(&'static Descriptor),
    /// A tuple: its parts concatenated in order.
    Tuple(&'static [Descriptor]),
    /// A `#[derive(Key)]` struct: its fields concatenated in order.
    Struct {
        /// The struct's name.
        name: &'static str,
        /// Field names and descriptors, in declaration order.
        fields: &'static [(&'static str, Descriptor)],
    },
    /// An integer key stored native-endian for `MDBX_INTEGERKEY` (`u32` or `u64`).
    NativeInteger(u32),
    /// A value encoded with serde + bincode 2 (standard configuration).
    Bincode,
    /// A value stored as raw bytes.
    Raw,
    /// A hand-written codec, named by its author; bump the name when the format changes.
    Custom(&'static str),
    /// A fixed-layout value of this many bytes, stored as its memory
    /// ([`Pod`](crate::codec::Pod)).
    Pod(usize),
    /// Values of the inner codec, compressed with zstd ([`Zstd`](crate::codec)).
    Zstd(&'static Descriptor),
    /// Values of the inner codec, compressed with zstd and the current dictionary of this name
    /// stored in the database ([`ZstdDict`](crate::codec)); rendered `zstd_dict(<name>,<inner>)`.
    ZstdDict {
        /// The dictionary's name ([`ZstdDictionary::NAME`](crate::codec)).
        name: &'static str,
        /// The inner codec.
        inner: &'static Descriptor,
    },
    /// The values of a `dupsort` table stored in this key encoding
    /// ([`Ordered`](crate::Ordered)), so they sort in their type's order.
    Ordered(&'static Descriptor),
    /// The values of a `dupsort` table with a subkey ([`SubKeyed`](crate::SubKeyed)): the
    /// subkey in this key encoding, then the value in this codec's.
    SubKeyed {
        /// The subkey's key encoding.
        subkey: &'static Descriptor,
        /// The value's codec.
        value: &'static Descriptor,
    },
}

impl fmt::Display for Descriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Descriptor::Unit => f.write_str("()"),
            Descriptor::Bool => f.write_str("bool"),
            Descriptor::Unsigned(bits) => write!(f, "u{bits}"),
            Descriptor::Signed(bits) => write!(f, "i{bits}"),
            Descriptor::Char => f.write_str("char"),
            Descriptor::Array(n) => write!(f, "[u8; {n}]"),
            Descriptor::Bytes => f.write_str("bytes"),
            Descriptor::Str => f.write_str("str"),
            Descriptor::Option(inner) => write_option(f, inner),
            Descriptor::Tuple(parts) => write_tuple(f, parts),
            Descriptor::Struct { name, fields } => {
                write_struct(f, name, fields.iter().map(|(field, d)| (*field, d)))
            }
            Descriptor::NativeInteger(bits) => write!(f, "u{bits} native-endian"),
            Descriptor::Bincode => f.write_str("bincode"),
            Descriptor::Raw => f.write_str("raw"),
            Descriptor::Custom(name) => write!(f, "custom {name}"),
            Descriptor::Pod(size) => write!(f, "pod({size})"),
            Descriptor::Zstd(inner) => write!(f, "zstd({inner})"),
            Descriptor::ZstdDict { name, inner } => write!(f, "zstd_dict({name},{inner})"),
            // The key encoding is recorded as the value's shape (`Ordered::shape`).
            Descriptor::Ordered(_) => f.write_str("ordered"),
            Descriptor::SubKeyed { subkey, value } => write!(f, "subkey {subkey} + {value}"),
        }
    }
}

// The composite key encodings' text, written once: `Descriptor` renders with it, and so does
// the run-time `KeyShape` (`codec/untyped/key.rs`), whose text is a descriptor's by
// construction (its scalar parts render as `Descriptor`s).

/// `Option<T>`.
pub(crate) fn write_option(f: &mut fmt::Formatter<'_>, inner: &impl fmt::Display) -> fmt::Result {
    write!(f, "Option<{inner}>")
}

/// `(A, B)`; a tuple of one part is `(A,)`.
pub(crate) fn write_tuple(f: &mut fmt::Formatter<'_>, parts: &[impl fmt::Display]) -> fmt::Result {
    f.write_str("(")?;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{part}")?;
    }
    if parts.len() == 1 {
        f.write_str(",")?;
    }
    f.write_str(")")
}

/// `Name { a: A, b: B }`.
pub(crate) fn write_struct<'a, T: fmt::Display + 'a>(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    fields: impl Iterator<Item = (&'a str, &'a T)>,
) -> fmt::Result {
    write!(f, "{name} {{ ")?;
    for (i, (field, part)) in fields.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{field}: {part}")?;
    }
    f.write_str(" }")
}

impl Descriptor {
    /// `text` after this descriptor's [`Display`](fmt::Display) form, when `text` starts with
    /// it; `None` otherwise. Compares as it renders, without building the string: the startup
    /// step checks every recorded table's codec this way.
    pub(crate) fn strip_from<'a>(&self, text: &'a str) -> Option<&'a str> {
        if let Some(rendered) = self.rendered() {
            return text.strip_prefix(rendered);
        }
        /// The part of the text not yet matched; a write that does not match it fails.
        struct Strip<'a>(&'a str);
        impl fmt::Write for Strip<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0 = self.0.strip_prefix(s).ok_or(fmt::Error)?;
                Ok(())
            }
        }
        let mut rest = Strip(text);
        fmt::write(&mut rest, format_args!("{self}")).ok()?;
        Some(rest.0)
    }
}

impl Descriptor {
    /// `Some(n)` when every key this key descriptor describes is stored in exactly `n` bytes
    /// (as `KeyShape::fixed_size` says of the shape its text parses to); `None` for a
    /// variable width, and for every descriptor that is no key's (a custom codec's among
    /// them). A history writes such keys without escaping them (`history::Form`), so the
    /// typed API and the schema-less reader, which knows the key only by its recorded text,
    /// must agree on it: a test of `history` holds them together.
    pub(crate) const fn fixed_size(&self) -> Option<usize> {
        match self {
            Descriptor::Unit => Some(0),
            Descriptor::Bool => Some(1),
            Descriptor::Unsigned(bits)
            | Descriptor::Signed(bits)
            | Descriptor::NativeInteger(bits) => Some(*bits as usize / 8),
            Descriptor::Char => Some(4),
            Descriptor::Array(n) => Some(*n),
            Descriptor::Tuple(parts) => {
                let mut sum = 0;
                let mut i = 0;
                while i < parts.len() {
                    match parts[i].fixed_size() {
                        Some(n) => sum += n,
                        None => return None,
                    }
                    i += 1;
                }
                Some(sum)
            }
            Descriptor::Struct { fields, .. } => {
                let mut sum = 0;
                let mut i = 0;
                while i < fields.len() {
                    match fields[i].1.fixed_size() {
                        Some(n) => sum += n,
                        None => return None,
                    }
                    i += 1;
                }
                Some(sum)
            }
            _ => None,
        }
    }
}

impl Descriptor {
    /// The [`Display`](fmt::Display) form of the descriptors that have one fixed text (the
    /// common key and codec descriptors), without running the formatter.
    pub(crate) fn rendered(&self) -> Option<&'static str> {
        Some(match self {
            Descriptor::Unit => "()",
            Descriptor::Bool => "bool",
            Descriptor::Char => "char",
            Descriptor::Bytes => "bytes",
            Descriptor::Str => "str",
            Descriptor::Bincode => "bincode",
            Descriptor::Raw => "raw",
            Descriptor::Ordered(_) => "ordered",
            Descriptor::Unsigned(8) => "u8",
            Descriptor::Unsigned(16) => "u16",
            Descriptor::Unsigned(32) => "u32",
            Descriptor::Unsigned(64) => "u64",
            Descriptor::Unsigned(128) => "u128",
            Descriptor::Signed(8) => "i8",
            Descriptor::Signed(16) => "i16",
            Descriptor::Signed(32) => "i32",
            Descriptor::Signed(64) => "i64",
            Descriptor::Signed(128) => "i128",
            Descriptor::NativeInteger(32) => "u32 native-endian",
            Descriptor::NativeInteger(64) => "u64 native-endian",
            _ => return None,
        })
    }

    /// Appends the [`Display`](fmt::Display) form to `out`, without the formatter when it is a
    /// fixed text ([`rendered`](Self::rendered)): the startup writes two descriptors a table.
    pub(crate) fn push_text(&self, out: &mut String) {
        match self.rendered() {
            Some(text) => out.push_str(text),
            None => {
                use fmt::Write as _;
                let _ = write!(out, "{self}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Descriptor;

    #[test]
    fn fixed_renderings_are_the_display_form() {
        let mut all = vec![
            Descriptor::Unit,
            Descriptor::Bool,
            Descriptor::Char,
            Descriptor::Bytes,
            Descriptor::Str,
            Descriptor::Bincode,
            Descriptor::Raw,
            Descriptor::Ordered(&Descriptor::Str),
            Descriptor::Array(4),
            Descriptor::Custom("mine"),
        ];
        for bits in [1, 8, 16, 32, 64, 128, 256] {
            all.extend([
                Descriptor::Unsigned(bits),
                Descriptor::Signed(bits),
                Descriptor::NativeInteger(bits),
            ]);
        }
        for d in all {
            if let Some(text) = d.rendered() {
                assert_eq!(text, d.to_string());
            }
            let mut pushed = "before ".to_string();
            d.push_text(&mut pushed);
            assert_eq!(pushed, format!("before {d}"));
            let text = d.to_string();
            assert_eq!(d.strip_from(&format!("{text}<T>")), Some("<T>"), "{text}");
            assert_eq!(d.strip_from(&text[..text.len() - 1]), None, "{text}");
        }
    }

    #[test]
    fn strips_its_rendering_and_nothing_else() {
        const D: Descriptor = Descriptor::Zstd(&Descriptor::Tuple(&[
            Descriptor::Unsigned(64),
            Descriptor::Str,
        ]));
        assert_eq!(D.to_string(), "zstd((u64, str))");
        assert_eq!(D.strip_from("zstd((u64, str))<T>"), Some("<T>"));
        assert_eq!(D.strip_from("zstd((u64, str))"), Some(""));
        for other in ["zstd((u64, str)", "zstd((u64, st))<T>", "", "bincode<T>"] {
            assert_eq!(D.strip_from(other), None, "{other}");
        }
        assert_eq!(
            Descriptor::Raw.strip_from("raw<Vec<u8>>"),
            Some("<Vec<u8>>")
        );
        assert_eq!(Descriptor::Unsigned(64).strip_from("u6"), None);
    }

    #[test]
    fn renders_nested_shapes() {
        const D: Descriptor = Descriptor::Tuple(&[
            Descriptor::Unsigned(64),
            Descriptor::Option(&Descriptor::Str),
            Descriptor::Tuple(&[Descriptor::Bool]),
        ]);
        assert_eq!(D.to_string(), "(u64, Option<str>, (bool,))");
        let s = Descriptor::Struct {
            name: "SlotKey",
            fields: &[
                ("addr", Descriptor::Array(20)),
                ("slot", Descriptor::Signed(32)),
            ],
        };
        assert_eq!(s.to_string(), "SlotKey { addr: [u8; 20], slot: i32 }");
    }
}
