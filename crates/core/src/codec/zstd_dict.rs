//! zstd-compressed values with a dictionary stored in the database: [`ZstdDict<C, D>`], the
//! [`ZstdDictionary`] that names its dictionary, the stored form of the dictionary table
//! ([`StoredDictionaries`]) and the process-wide registry the startup path loads it into.
//!
//! `Value::encode`/`decode` are context-free functions, so the dictionaries a database stores
//! are loaded at open into a registry of the process: by ID, for decoding (a zstd frame names
//! its dictionary by ID), and by name, the current one, for encoding. Each open database holds
//! a [`DictionaryLease`] on what it loaded, released when it closes. A lease that would make
//! an ID mean a different dictionary, or make a name's current dictionary a different one,
//! while another open database uses it, is refused: a value is then never encoded with a
//! dictionary its file does not store.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use zstd::zstd_safe::{self, CCtx, CDict, DCtx, DDict};

use super::zstd::{PLAIN, compress, decompress, frame_size, put_back};
use super::{DecodeError, EncodeError, Value};
use crate::schema::{Descriptor, ValueTrace};

/// The name of a zstd dictionary stored in the database, for [`ZstdDict`] values: a type
/// stands for it, so a table's codec names its dictionary.
///
/// The name is recorded in the schema (`zstd_dict(<name>,<codec>)`), and the dictionary table
/// keeps, per name, every dictionary trained for it (values written with an older one keep
/// decoding) and which one is current (new values use it). Names are 1–64 ASCII letters,
/// digits, `_`, `-` or `.`. Tables may share a name (then they share its dictionaries).
///
/// ```
/// use tabula_core::codec::{ZstdDict, ZstdDictionary};
/// use tabula_core::{Bincode, Value};
///
/// struct Receipts;
/// impl ZstdDictionary for Receipts {
///     const NAME: &'static str = "receipts";
/// }
/// type Codec = ZstdDict<Bincode<String>, Receipts>;
/// assert_eq!(Codec::DESCRIPTOR.to_string(), "zstd_dict(receipts,bincode)");
/// ```
pub trait ZstdDictionary {
    /// The dictionary's name in the database.
    const NAME: &'static str;
}

/// Values of codec `C`, compressed with zstd at level `LEVEL` (3 by default) using the current
/// dictionary named by `D` that the database stores: `codec = ZstdDict<Bincode<Receipt>,
/// Receipts>`. Needs the `compression` feature.
///
/// Small values that resemble each other (records of a few hundred bytes with the same field
/// names and common text) gain from a dictionary what [`Zstd`](super::Zstd) cannot find within
/// one value. Before any dictionary is trained, values are compressed without one (frame
/// dictionary ID 0), so the table works from day one; a migration step
/// (`Step::train_zstd_dictionary` in `tabula-migrate`) trains one from the table's values,
/// stores it in the database, makes it current and re-encodes the table with it.
///
/// Each value is one standard zstd frame recording its size and its dictionary's ID; decoding
/// looks the ID up among the dictionaries loaded from the open databases, so values written
/// with any dictionary ever trained for the name keep decoding. A frame whose dictionary is not
/// loaded is a [`DecodeError`] naming the ID. The schema records the codec as
/// `zstd_dict(<name>,<inner>)`: a file written with [`Zstd`](super::Zstd), with a dictionary
/// of another name, or uncompressed is refused at open with the migration step that re-encodes
/// it. The level is not recorded (any level decompresses alike).
///
/// This is a type of its own rather than a parameter of [`Zstd`](super::Zstd): a defaulted
/// type parameter after `Zstd`'s defaulted level would make naming a dictionary also state the
/// level, and the two record different descriptors anyway.
///
/// ```
/// use tabula_core::codec::{ZstdDict, ZstdDictionary};
/// use tabula_core::{Bincode, Value};
///
/// struct Notes;
/// impl ZstdDictionary for Notes {
///     const NAME: &'static str = "notes-doc";
/// }
/// type Codec = ZstdDict<Bincode<String>, Notes>;
/// // No database stores a dictionary named `notes-doc`: values are compressed without one.
/// let text = "the same words again and again, ".repeat(20);
/// let mut scratch = Vec::new();
/// let stored = Codec::encode(&text, &mut scratch)?.to_vec();
/// assert!(stored.len() < text.len() / 4);
/// assert_eq!(Codec::decode(&stored)?, text);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ZstdDict<C, D, const LEVEL: i32 = 3>(PhantomData<fn() -> (C, D)>);

impl<C: Value, D: ZstdDictionary, const LEVEL: i32> Value for ZstdDict<C, D, LEVEL> {
    type Item = C::Item;
    const DESCRIPTOR: Descriptor = Descriptor::ZstdDict {
        name: D::NAME,
        inner: &C::DESCRIPTOR,
    };

    fn encode<'a>(item: &'a C::Item, scratch: &'a mut Vec<u8>) -> Result<&'a [u8], EncodeError> {
        let mut plain = PLAIN.take();
        let result = match C::encode(item, &mut plain) {
            Ok(bytes) => compress_current(D::NAME, bytes, scratch, LEVEL),
            Err(e) => Err(e),
        };
        put_back(&PLAIN, plain);
        result.map(|()| &scratch[..])
    }

    fn decode(bytes: &[u8]) -> Result<C::Item, DecodeError> {
        let mut plain = PLAIN.take();
        let result = decompress_any(bytes, &mut plain).and_then(|()| C::decode(&plain));
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

/// What a [`ZstdDict`] codec states at compile time: its dictionary's name and its level. For
/// steps and tools that work on a table's dictionary: `T::Codec: ZstdDictCodec`.
///
/// ```
/// use tabula_core::codec::{ZstdDict, ZstdDictCodec, ZstdDictionary};
/// use tabula_core::Raw;
///
/// struct Blobs;
/// impl ZstdDictionary for Blobs {
///     const NAME: &'static str = "blobs";
/// }
/// assert_eq!(<ZstdDict<Raw, Blobs, 9> as ZstdDictCodec>::DICTIONARY, "blobs");
/// assert_eq!(<ZstdDict<Raw, Blobs, 9> as ZstdDictCodec>::LEVEL, 9);
/// ```
pub trait ZstdDictCodec: Value {
    /// The dictionary's name ([`ZstdDictionary::NAME`]).
    const DICTIONARY: &'static str;
    /// The compression level values are written at.
    const LEVEL: i32;
}

impl<C: Value, D: ZstdDictionary, const LEVEL: i32> ZstdDictCodec for ZstdDict<C, D, LEVEL> {
    const DICTIONARY: &'static str = D::NAME;
    const LEVEL: i32 = LEVEL;
}

thread_local! {
    // Per-thread zstd contexts for frames with a dictionary (taken out while in use).
    static CCTX: Cell<Option<CCtx<'static>>> = const { Cell::new(None) };
    static DCTX: Cell<Option<DCtx<'static>>> = const { Cell::new(None) };
}

/// One dictionary, ready for use: its bytes, prepared for decompression, and prepared for
/// compression at each level asked for.
struct Loaded {
    bytes: Box<[u8]>,
    ddict: DDict<'static>,
    cdicts: Mutex<Vec<(i32, Arc<CDict<'static>>)>>,
}

impl Loaded {
    fn new(bytes: &[u8]) -> Self {
        Loaded {
            bytes: bytes.into(),
            ddict: DDict::create(bytes),
            cdicts: Mutex::new(Vec::new()),
        }
    }

    fn cdict(&self, level: i32) -> Arc<CDict<'static>> {
        let mut cdicts = self.cdicts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, cdict)) = cdicts.iter().find(|(l, _)| *l == level) {
            return cdict.clone();
        }
        let cdict = Arc::new(CDict::create(&self.bytes, level));
        cdicts.push((level, cdict.clone()));
        cdict
    }
}

/// Compresses `plain` into `out` (cleared first) with `cdict`, recording size and dictionary ID.
fn compress_with(plain: &[u8], out: &mut Vec<u8>, cdict: &CDict<'_>) -> Result<(), EncodeError> {
    let mut cctx = CCTX.take().unwrap_or_else(CCtx::create);
    out.clear();
    out.reserve(zstd_safe::compress_bound(plain.len()));
    let result = cctx.compress_using_cdict(out, plain, cdict);
    CCTX.set(Some(cctx));
    result.map(drop).map_err(|code| {
        EncodeError::new(format!(
            "zstd: compression with a dictionary failed ({})",
            zstd_safe::get_error_name(code)
        ))
    })
}

/// Decompresses `stored` into `out` (cleared first) with `ddict`.
fn decompress_with(stored: &[u8], out: &mut Vec<u8>, ddict: &DDict<'_>) -> Result<(), DecodeError> {
    let size = frame_size(stored)?;
    let mut dctx = DCTX.take().unwrap_or_else(DCtx::create);
    out.clear();
    out.reserve(size);
    let result = dctx.decompress_using_ddict(out, stored, ddict);
    DCTX.set(Some(dctx));
    match result {
        Ok(n) if n == size => Ok(()),
        Ok(n) => Err(DecodeError::new(format!(
            "zstd: the frame claims {size} decompressed bytes but holds {n}"
        ))),
        Err(code) => Err(DecodeError::new(format!(
            "zstd: {}",
            zstd_safe::get_error_name(code)
        ))),
    }
}

/// Compresses `plain` into `out` with the current dictionary of `name` in the registry, or
/// without a dictionary when the name has none.
fn compress_current(
    name: &str,
    plain: &[u8],
    out: &mut Vec<u8>,
    level: i32,
) -> Result<(), EncodeError> {
    match registry_current(name) {
        Some(dict) => compress_with(plain, out, &dict.cdict(level)),
        None => compress(plain, out, level),
    }
}

/// Decompresses any frame Tabula writes: without a dictionary, or with one the registry holds.
pub(super) fn decompress_any(stored: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    let Some(id) = zstd_safe::get_dict_id_from_frame(stored) else {
        return decompress(stored, out);
    };
    match registry_dictionary(id.get()) {
        Some(dict) => decompress_with(stored, out, &dict.ddict),
        None => Err(DecodeError::new(format!(
            "zstd: the value was compressed with dictionary ID {id}, which is not loaded: no \
             database open in this process stores it (dictionaries are loaded when the database \
             that stores them opens: one trained by another process after this one opened the \
             database needs a reopen; one whose dictionary table lost it cannot decode the value)"
        ))),
    }
}

/// One value's zstd frame decompressed into a new buffer (the schema-less reader's path); a
/// frame naming a dictionary is decompressed with it when it is loaded
/// ([`ZstdDict`]).
pub(super) fn decompress_frame(stored: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    decompress_any(stored, &mut out)?;
    Ok(out)
}

/// `plain` compressed as [`ZstdDict`] with dictionary name `name` stores it (level 3), for the
/// schema-less writer.
pub(super) fn compress_frame_named(name: &str, plain: &[u8]) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    compress_current(name, plain, &mut out, 3)?;
    Ok(out)
}

/// The dictionary name a value codec uses, if it compresses with one.
pub(crate) fn dictionary_name(descriptor: &Descriptor) -> Option<&'static str> {
    match descriptor {
        Descriptor::ZstdDict { name, .. } => Some(name),
        Descriptor::Zstd(inner) => dictionary_name(inner),
        Descriptor::SubKeyed { value, .. } => dictionary_name(value),
        _ => None,
    }
}

/// Why a dictionary name cannot be used, if it cannot.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "zstd dictionary name `{name}` is not 1 to 64 ASCII letters, digits, `_`, `-` or \
             `.`; change `ZstdDictionary::NAME`"
        ))
    }
}

/// Trains a zstd dictionary of at most `max_size` bytes from sample values (the plain bytes
/// the inner codec writes, not compressed frames), with `zstd::dict::from_samples`. zstd wants
/// samples totalling about 100 times the dictionary size, and at least a few dozen of them.
///
/// ```
/// let samples: Vec<Vec<u8>> = (0..2000)
///     .map(|i| format!("{{\"id\":{i},\"status\":\"settled\",\"memo\":\"order {}\"}}", i * 7).into_bytes())
///     .collect();
/// let dictionary = tabula_core::codec::train_zstd_dictionary(&samples, 4096)?;
/// assert!(dictionary.len() <= 4096);
/// # Ok::<(), tabula_core::EncodeError>(())
/// ```
///
/// # Errors
///
/// [`EncodeError`] when zstd cannot train one (too few or too small samples).
pub fn train_zstd_dictionary(samples: &[Vec<u8>], max_size: usize) -> Result<Vec<u8>, EncodeError> {
    let total: usize = samples.iter().map(Vec::len).sum();
    zstd::dict::from_samples(samples, max_size).map_err(|e| {
        EncodeError::new(format!(
            "zstd cannot train a dictionary of {max_size} bytes from {} samples of {total} bytes \
             in all ({e}); give more samples (about 100 times the dictionary size in all) or ask \
             for a smaller dictionary",
            samples.len()
        ))
    })
}

/// The meta key prefix of a stored dictionary: `dict\0<name>\0<id, 4 bytes big-endian>`.
const DICT_PREFIX: &[u8] = b"dict\0";
/// The meta key prefix of a name's current dictionary: `current\0<name>` → the ID, 4 bytes
/// big-endian.
const CURRENT_PREFIX: &[u8] = b"current\0";

/// The dictionary table's key for dictionary `id` of `name`.
pub(crate) fn dictionary_key(name: &str, id: u32) -> Vec<u8> {
    let mut key = DICT_PREFIX.to_vec();
    key.extend_from_slice(name.as_bytes());
    key.push(0);
    key.extend_from_slice(&id.to_be_bytes());
    key
}

/// The dictionary table's key for the current dictionary of `name`.
pub(crate) fn current_key(name: &str) -> Vec<u8> {
    let mut key = CURRENT_PREFIX.to_vec();
    key.extend_from_slice(name.as_bytes());
    key
}

/// The dictionary ID a trained dictionary carries, if `bytes` is one.
pub(crate) fn dictionary_id(bytes: &[u8]) -> Option<u32> {
    zstd_safe::get_dict_id_from_dict(bytes).map(std::num::NonZeroU32::get)
}

/// The zstd dictionaries one database stores: every one trained, by ID, with the name it was
/// trained for, and each name's current one. Read with
/// [`Bootstrap::zstd_dictionaries`](crate::startup::Bootstrap::zstd_dictionaries).
#[derive(Clone, Default)]
pub struct StoredDictionaries {
    by_id: BTreeMap<u32, (String, Arc<Loaded>)>,
    current: BTreeMap<String, u32>,
}

impl fmt::Debug for StoredDictionaries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredDictionaries")
            .field(
                "by_id",
                &self
                    .by_id
                    .iter()
                    .map(|(id, (name, d))| (*id, name.as_str(), d.bytes.len()))
                    .collect::<Vec<_>>(),
            )
            .field("current", &self.current)
            .finish()
    }
}

impl StoredDictionaries {
    /// Reads the dictionary table's entries.
    pub(crate) fn parse(entries: &[(Vec<u8>, Vec<u8>)]) -> Result<Self, String> {
        let mut stored = StoredDictionaries::default();
        let mut currents = Vec::new();
        for (key, value) in entries {
            if let Some(rest) = key.strip_prefix(DICT_PREFIX) {
                let damaged = || format!("entry {:02x?} is not a dictionary key", key);
                let (name, id) = rest
                    .split_at_checked(rest.len().wrapping_sub(5))
                    .ok_or_else(damaged)?;
                let (0, Ok(id)) = (id[0], <[u8; 4]>::try_from(&id[1..])) else {
                    return Err(damaged());
                };
                let id = u32::from_be_bytes(id);
                let name = std::str::from_utf8(name).map_err(|_| damaged())?;
                if dictionary_id(value) != Some(id) {
                    return Err(format!(
                        "the dictionary stored as ID {id} of `{name}` is not a zstd dictionary \
                         with that ID; the table may be damaged"
                    ));
                }
                stored
                    .by_id
                    .insert(id, (name.to_string(), Arc::new(Loaded::new(value))));
            } else if let Some(name) = key.strip_prefix(CURRENT_PREFIX) {
                let name = String::from_utf8(name.to_vec())
                    .map_err(|_| format!("entry {key:02x?} is not a name"))?;
                let id = <[u8; 4]>::try_from(value.as_slice())
                    .map_err(|_| format!("the current dictionary of `{name}` is not an ID"))?;
                currents.push((name, u32::from_be_bytes(id)));
            } else {
                return Err(format!("unknown entry {key:02x?}"));
            }
        }
        for (name, id) in currents {
            if !stored.by_id.contains_key(&id) {
                return Err(format!(
                    "the current dictionary of `{name}` is ID {id}, which the table does not \
                     store; the table may be damaged"
                ));
            }
            stored.current.insert(name, id);
        }
        Ok(stored)
    }

    /// The name dictionary `id` was trained for, if this database stores it.
    pub(crate) fn name_of(&self, id: u32) -> Option<&str> {
        self.by_id.get(&id).map(|(name, _)| name.as_str())
    }

    /// The bytes of dictionary `id`, if this database stores it.
    pub(crate) fn bytes(&self, id: u32) -> Option<&[u8]> {
        self.by_id.get(&id).map(|(_, d)| &d.bytes[..])
    }

    /// The ID of the current dictionary of `name`, if one was trained.
    ///
    /// ```
    /// let none = tabula_core::codec::StoredDictionaries::default();
    /// assert_eq!(none.current("receipts"), None);
    /// ```
    pub fn current(&self, name: &str) -> Option<u32> {
        self.current.get(name).copied()
    }

    /// Every dictionary stored, by ID: the name it was trained for and its size in bytes.
    ///
    /// ```
    /// let none = tabula_core::codec::StoredDictionaries::default();
    /// assert!(none.list().is_empty());
    /// ```
    pub fn list(&self) -> Vec<(u32, &str, usize)> {
        self.by_id
            .iter()
            .map(|(id, (name, d))| (*id, name.as_str(), d.bytes.len()))
            .collect()
    }

    /// Decompresses a stored frame with the dictionaries of this database only (not the
    /// registry): what a migration step uses before they are loaded.
    ///
    /// ```
    /// let none = tabula_core::codec::StoredDictionaries::default();
    /// let frame = none.compress("receipts", b"plain bytes, plain bytes", 3)?;
    /// assert_eq!(none.decompress(&frame)?, b"plain bytes, plain bytes");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the frame is damaged or names a dictionary this database does not
    /// store.
    pub fn decompress(&self, frame: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        match zstd_safe::get_dict_id_from_frame(frame) {
            None => decompress(frame, &mut out)?,
            Some(id) => match self.by_id.get(&id.get()) {
                Some((_, dict)) => decompress_with(frame, &mut out, &dict.ddict)?,
                None => {
                    return Err(DecodeError::new(format!(
                        "zstd: the value was compressed with dictionary ID {id}, which this \
                         database does not store"
                    )));
                }
            },
        }
        Ok(out)
    }

    /// Compresses `plain` at `level` with the current dictionary of `name` in this database
    /// (without one when it has none), as [`ZstdDict`] stores values.
    ///
    /// ```
    /// let none = tabula_core::codec::StoredDictionaries::default();
    /// let frame = none.compress("receipts", &[7; 300], 3)?;
    /// assert!(frame.len() < 300);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when zstd fails.
    pub fn compress(&self, name: &str, plain: &[u8], level: i32) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        match self.current(name).and_then(|id| self.by_id.get(&id)) {
            Some((_, dict)) => compress_with(plain, &mut out, &dict.cdict(level))?,
            None => compress(plain, &mut out, level)?,
        }
        Ok(out)
    }
}

/// What the registry holds for one dictionary ID.
struct IdUse {
    dict: Arc<Loaded>,
    users: usize,
    path: PathBuf,
}

/// What the registry holds for one dictionary name: its current dictionary (`None`: values
/// are compressed without one).
struct NameUse {
    current: Option<u32>,
    users: usize,
    path: PathBuf,
}

struct Registry {
    ids: BTreeMap<u32, IdUse>,
    names: BTreeMap<String, NameUse>,
}

static REGISTRY: RwLock<Registry> = RwLock::new(Registry {
    ids: BTreeMap::new(),
    names: BTreeMap::new(),
});

fn registry_dictionary(id: u32) -> Option<Arc<Loaded>> {
    let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    registry.ids.get(&id).map(|u| u.dict.clone())
}

fn registry_current(name: &str) -> Option<Arc<Loaded>> {
    let registry = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    let id = registry.names.get(name)?.current?;
    registry.ids.get(&id).map(|u| u.dict.clone())
}

/// What one open database loaded into the registry; released when dropped (the database
/// closes).
#[derive(Default)]
pub(crate) struct DictionaryLease {
    ids: Vec<u32>,
    names: Vec<String>,
}

impl fmt::Debug for DictionaryLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DictionaryLease")
            .field("ids", &self.ids)
            .field("names", &self.names)
            .finish()
    }
}

impl Drop for DictionaryLease {
    fn drop(&mut self) {
        if self.ids.is_empty() && self.names.is_empty() {
            return;
        }
        let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
        for id in &self.ids {
            if let Some(u) = registry.ids.get_mut(id) {
                u.users -= 1;
                if u.users == 0 {
                    registry.ids.remove(id);
                }
            }
        }
        for name in &self.names {
            if let Some(u) = registry.names.get_mut(name) {
                u.users -= 1;
                if u.users == 0 {
                    registry.names.remove(name);
                }
            }
        }
    }
}

fn describe(current: Option<u32>) -> String {
    match current {
        Some(id) => format!("dictionary ID {id}"),
        None => "no dictionary (none trained yet)".to_string(),
    }
}

/// Loads the dictionaries of the database at `path` into the registry: every one by ID (for
/// decoding), and the current one of each of `names` (for encoding; a read-only open passes
/// none).
///
/// # Errors
///
/// What conflicts with another open database, and what to do, when an ID is loaded with
/// other bytes or a name with another current dictionary.
pub(crate) fn lease(
    stored: &StoredDictionaries,
    names: &[&str],
    path: &Path,
) -> Result<DictionaryLease, String> {
    let mut registry = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    for (id, (name, dict)) in &stored.by_id {
        if let Some(other) = registry.ids.get(id)
            && other.dict.bytes != dict.bytes
        {
            return Err(format!(
                "its dictionary ID {id} (`{name}`) differs from the dictionary with that ID \
                 that `{}`, open in this process, stores; a value names its dictionary by ID \
                 only, so the two databases cannot be open in one process at once: close the \
                 other one first, or train a new dictionary for one of them",
                other.path.display()
            ));
        }
    }
    for name in names {
        let ours = stored.current(name);
        if let Some(other) = registry.names.get(*name)
            && other.current != ours
        {
            return Err(format!(
                "the current dictionary of `{name}` here is {} but `{}`, open in this process, \
                 uses {}; values are compressed with their name's current dictionary, which \
                 must be stored in the file they go to, so the two cannot be open for writing \
                 in one process at once: close the other one first, open one read-only, or give \
                 their tables different dictionary names",
                describe(ours),
                other.path.display(),
                describe(other.current)
            ));
        }
    }
    let mut lease = DictionaryLease::default();
    for (id, (_, dict)) in &stored.by_id {
        registry
            .ids
            .entry(*id)
            .or_insert_with(|| IdUse {
                dict: dict.clone(),
                users: 0,
                path: path.to_path_buf(),
            })
            .users += 1;
        lease.ids.push(*id);
    }
    for name in names {
        if lease.names.iter().any(|n| n == name) {
            continue;
        }
        registry
            .names
            .entry((*name).to_string())
            .or_insert_with(|| NameUse {
                current: stored.current(name),
                users: 0,
                path: path.to_path_buf(),
            })
            .users += 1;
        lease.names.push((*name).to_string());
    }
    Ok(lease)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Bincode, Raw};

    struct Unit;
    impl ZstdDictionary for Unit {
        const NAME: &'static str = "unit-test";
    }

    #[test]
    fn descriptor_names_the_dictionary() {
        assert_eq!(
            ZstdDict::<Raw, Unit>::DESCRIPTOR.to_string(),
            "zstd_dict(unit-test,raw)"
        );
        assert_eq!(
            dictionary_name(&ZstdDict::<Bincode<u8>, Unit, 9>::DESCRIPTOR),
            Some("unit-test")
        );
        assert!(check_name("a.b-c_9").is_ok());
        assert!(check_name("").is_err() && check_name("a,b").is_err());
    }

    #[test]
    fn keys_parse_back() {
        let samples: Vec<Vec<u8>> = (0..500)
            .map(|i| format!("{{\"n\":{i},\"kind\":\"sample value\"}}").into_bytes())
            .collect();
        let dict = train_zstd_dictionary(&samples, 1024).unwrap();
        let id = dictionary_id(&dict).unwrap();
        let entries = vec![
            (current_key("x"), id.to_be_bytes().to_vec()),
            (dictionary_key("x", id), dict.clone()),
        ];
        let stored = StoredDictionaries::parse(&entries).unwrap();
        assert_eq!(stored.current("x"), Some(id));
        assert_eq!(stored.list(), vec![(id, "x", dict.len())]);
        let frame = stored.compress("x", &samples[3], 3).unwrap();
        assert_eq!(
            zstd_safe::get_dict_id_from_frame(&frame).map(|i| i.get()),
            Some(id)
        );
        assert_eq!(stored.decompress(&frame).unwrap(), samples[3]);
        let bad = vec![(current_key("x"), 7u32.to_be_bytes().to_vec())];
        assert!(
            StoredDictionaries::parse(&bad)
                .unwrap_err()
                .contains("ID 7")
        );
    }
}
