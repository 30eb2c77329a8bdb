//! The schema checks of the startup path: every declaration before the file is opened
//! ([`declare`]), and every existing table's stored flags ([`check_flags`]) and recorded key
//! encoding and values ([`check_record`]) against its declaration, with the migration step
//! that would bring the table along named in the refusal. `tabula-migrate`'s `plan` runs the
//! same checks to list what `open` would refuse.

use crate::error::{Error, MismatchDetail, Result};
use crate::record::TableRecord;
use crate::schema::ValueTrace;
use crate::schema::identity::{self, Structure};
use crate::table::{TableFlags, TableInfo};

use super::bootstrap::{Bootstrap, ExistingTable, not_reserved};

/// Checks the declarations of a schema's tables before anything is opened, and returns what the
/// schema record will hold for each (value types traced, [`TableRecord::traced`]).
///
/// The derives refuse these mistakes at compile time; this catches them whatever implemented
/// [`Table`](crate::Table) or [`Schema`](crate::Schema): an empty or reserved (`__tabula…`) name, a name used
/// twice, and a value type whose structure cannot be traced to the end without a stated
/// `value_version` (Tabula could not see it change).
///
/// ```
/// use tabula::{Schema, Table};
///
/// #[derive(Table)]
/// #[table(name = "notes", key = u64, value = String)]
/// struct Notes;
/// #[derive(Schema)]
/// struct App(Notes);
///
/// let records = tabula_core::startup::declare(App::TABLES)?;
/// assert_eq!(records[0].key, "u64");
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidTable`] naming the table, its struct and what to do.
pub fn declare(tables: &[TableInfo]) -> Result<Vec<TableRecord>> {
    let declared = declare_traces(tables)?;
    Ok(tables
        .iter()
        .zip(&declared.traces)
        .map(|(info, trace)| TableRecord::traced(info, trace))
        .collect())
}

/// What [`declare_traces`] learns of a schema's tables.
pub(super) struct Declared {
    /// Each table's value trace (the part of its record that costs a trace to know); the
    /// startup step builds a table's record from it only when the stored one differs
    /// ([`TableRecord::is_traced`]).
    pub(super) traces: Vec<ValueTrace>,
    /// The tables' positions in name order (as the schema record keeps them).
    pub(super) by_name: Vec<usize>,
}

/// [`declare`]'s checks, returning each table's value trace and the tables' name order.
pub(super) fn declare_traces(tables: &[TableInfo]) -> Result<Declared> {
    let mut traces = Vec::with_capacity(tables.len());
    // Repeated names sit side by side in name order (positions sorted by name, then position):
    // the first table whose name an earlier one has is the least second of such a pair, and
    // the pair's first is that earlier table. A schema's names usually come in order, which
    // the sort takes in one pass.
    let mut by_name: Vec<usize> = (0..tables.len()).collect();
    by_name.sort_unstable_by(|&a, &b| tables[a].name.cmp(tables[b].name).then(a.cmp(&b)));
    let repeated = by_name
        .windows(2)
        .filter(|pair| tables[pair[0]].name == tables[pair[1]].name)
        .map(|pair| (pair[1], pair[0]))
        .min();
    for (at, info) in tables.iter().enumerate() {
        let invalid = |problem: String| {
            Err(Error::InvalidTable {
                table: info.name.to_string(),
                rust_name: info.rust_name,
                problem,
            })
        };
        if info.name.is_empty() {
            return invalid("a table name cannot be empty".to_string());
        }
        if info.name.contains('\0') {
            return invalid("a table name cannot contain a NUL byte".to_string());
        }
        not_reserved(info.name).map_err(|e| match e {
            Error::InvalidTable { table, problem, .. } => Error::InvalidTable {
                table,
                rust_name: info.rust_name,
                problem,
            },
            e => e,
        })?;
        #[cfg(feature = "compression")]
        if let Some(name) = crate::codec::dictionary_name(&info.value)
            && let Err(problem) = crate::codec::check_dictionary_name(name)
        {
            return invalid(problem);
        }
        if let Some((_, first)) = repeated.filter(|&(second, _)| second == at) {
            let first = &tables[first];
            return invalid(format!(
                "the schema lists another table with this name{}; table names must be unique",
                match first.rust_name {
                    "" => String::new(),
                    rust => format!(" (`{rust}`)"),
                }
            ));
        }
        let trace = (info.value_trace)();
        if let ValueTrace::Partial { problem, .. } = &trace
            && info.value_version.is_none()
        {
            return invalid(format!(
                "its value type `{}` cannot be traced to the end ({problem}), so Tabula cannot \
                 see when a release changes it: state the version of its values with \
                 `#[table(.., value_version = 1)]` and raise it, with a migration step that \
                 converts the values, whenever the type changes",
                info.value_type
            ));
        }
        traces.push(trace);
    }
    Ok(Declared { traces, by_name })
}

/// The checks of a table the file holds, in the startup path's order, the first difference
/// refused: its stored flags ([`check_flags`]; skipped when `existing` is `None`), then, when
/// `record` holds its stored record and the record of its declaration, the encoding of a
/// `dupsort` table's values (bincode, as Tabula 0.1.0 stored them, where the declaration
/// stores them ordered) and the recorded key encoding and values ([`check_record`]). The advice
/// names the migration step to add, at `next_version`.
///
/// The startup path runs it for every table it finds; `tabula-migrate`'s `plan` runs it on the
/// records as the pending steps would leave them, so that what it lists is what the open would
/// refuse.
///
/// ```
/// use tabula::{Error, Options, Table, TableFlags, TableInfo};
/// use tabula_core::record::TableRecord;
/// use tabula_core::startup::{Bootstrap, check_table};
///
/// #[derive(Table)]
/// #[table(name = "notes", key = u64, value = String)]
/// struct Notes;
///
/// # let dir = tabula::__doc::temp_dir();
/// let info = TableInfo::of::<Notes>();
/// let declared = TableRecord::of(&info);
/// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
/// boot.create_table("notes", info.flags)?;
/// let existing = boot.find_table("notes")?.expect("created");
/// check_table(&info, Some(&existing), Some((&declared, &declared)), 2)?;
///
/// let mut stored = declared.clone();
/// stored.value = "raw<Vec<u8>>".to_string();
/// let err = check_table(&info, Some(&existing), Some((&stored, &declared)), 2).unwrap_err();
/// assert!(matches!(err, Error::SchemaMismatch { what: "value encoding", .. }));
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::SchemaMismatch`] naming the table, what differs, and the step to add.
pub fn check_table(
    info: &TableInfo,
    existing: Option<&ExistingTable>,
    record: Option<(&TableRecord, &TableRecord)>,
    next_version: u32,
) -> Result<()> {
    if let Some(existing) = existing {
        check_flags(info, existing, next_version)?;
    }
    if let Some((stored, declared)) = record {
        check_dup_encoding(info, stored, declared, next_version)?;
        check_record(info, stored, declared, next_version)?;
    }
    Ok(())
}

/// Refuses a table whose stored flags (`existing`, as [`Bootstrap::find_table`] found
/// it) differ from its declaration. The advice names the migration step to add (at
/// `next_version`): one that drops an empty table (the startup path then creates it with the
/// declared flags), or one that rewrites the entries into a table with the declared flags.
///
/// ```
/// use tabula::{Error, Options, Table, TableFlags, TableInfo};
/// use tabula_core::startup::{Bootstrap, check_flags};
///
/// #[derive(Table)]
/// #[table(name = "tags", key = u64, value = u64, dupsort)]
/// struct Tags;
///
/// # let dir = tabula::__doc::temp_dir();
/// let info = TableInfo::of::<Tags>();
/// let mut boot = Bootstrap::begin(dir.path(), &Options::new(), 1)?;
/// boot.create_table("tags", TableFlags::NONE)?;
/// let stored = boot.find_table("tags")?.expect("created");
/// let err = check_flags(&info, &stored, 2).unwrap_err();
/// assert!(matches!(err, Error::SchemaMismatch { what: "flags", .. }));
/// assert!(err.to_string().contains("recreate-tags"), "{err}");
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::SchemaMismatch`] naming the table, the stored and the declared flags.
pub fn check_flags(info: &TableInfo, existing: &ExistingTable, next_version: u32) -> Result<()> {
    if existing.flags == Bootstrap::flag_bits(info.flags) {
        return Ok(());
    }
    Err(Error::SchemaMismatch {
        table: info.name.to_string(),
        what: "flags",
        stored: describe_flag_bits(existing.flags),
        declared: info.flags.to_string(),
        detail: MismatchDetail::new(info.rust_name, Vec::new()),
        advice: if existing.entries == 0 {
            format!(
                "the table is empty: add a migration step that drops it (the startup step then \
                 creates it with the new flags): `.step({next_version}, \"recreate-{0}\", |m| \
                 m.drop_table(\"{0}\"))`",
                info.name
            )
        } else {
            format!(
                "changing flags needs a migration step that rewrites the table into the new \
                 flags, e.g. `.step({next_version}, \"{0}-flags\", |m| m.transform::<{1}, {2}>(\
                 |old| old))`, or restore the previous flags",
                info.name,
                info.rust_ident(),
                old_value_name(info, None)
            )
        },
    })
}

/// A name for the previous value type in advice: `Old` and the value type's name when it is a
/// plain path (`Old<last segment>`), else `OldValue`.
fn old_value_name(info: &TableInfo, stored: Option<&Structure>) -> String {
    let declared = info.value_type.rsplit("::").next().unwrap_or_default();
    let plain = !declared.is_empty() && declared.chars().all(|c| c.is_alphanumeric() || c == '_');
    match stored.and_then(Structure::name) {
        Some(name) if !name.contains('#') => format!("Old{name}"),
        _ if plain => format!("Old{declared}"),
        _ => "OldValue".to_string(),
    }
}

/// The codec part of a recorded value descriptor (`bincode` of `bincode<Header>`), given the
/// codec declared now (a custom codec's name may itself hold `<`).
fn stored_codec<'a>(stored: &'a str, declared_codec: &str) -> &'a str {
    match stored.strip_prefix(declared_codec) {
        Some(rest) if rest.starts_with('<') && rest.ends_with('>') => {
            &stored[..declared_codec.len()]
        }
        _ => stored.split('<').next().unwrap_or(stored),
    }
}

/// A recorded codec without its compression: `bincode` of `zstd(bincode)` and of
/// `zstd_dict(receipts,bincode)`.
fn zstd_of(codec: &str) -> &str {
    if let Some(inner) = codec
        .strip_prefix("zstd(")
        .and_then(|inner| inner.strip_suffix(')'))
    {
        return inner;
    }
    zstd_dict_of(codec).map_or(codec, |(_, inner)| inner)
}

/// The dictionary name and inner codec of a recorded `zstd_dict(<name>,<inner>)`.
fn zstd_dict_of(codec: &str) -> Option<(&str, &str)> {
    codec
        .strip_prefix("zstd_dict(")
        .and_then(|inner| inner.strip_suffix(')'))
        .and_then(|inner| inner.split_once(','))
}

/// How a recorded codec is spelled in Rust, for advice: `zstd(bincode)` with values `V` is
/// `tabula::Zstd<tabula::Bincode<V>>`; `None` for a custom codec.
fn codec_type(codec: &str, value_type: &str) -> Option<String> {
    if let Some(inner) = codec
        .strip_prefix("zstd(")
        .and_then(|inner| inner.strip_suffix(')'))
    {
        return Some(format!("tabula::Zstd<{}>", codec_type(inner, value_type)?));
    }
    if let Some((_, inner)) = zstd_dict_of(codec) {
        // `OldDictionary`: the `ZstdDictionary` type of the recorded name.
        return Some(format!(
            "tabula::ZstdDict<{}, OldDictionary>",
            codec_type(inner, value_type)?
        ));
    }
    match codec {
        "bincode" => Some(format!("tabula::Bincode<{value_type}>")),
        "raw" => Some("tabula::Raw".to_string()),
        _ if codec.starts_with("pod(") => Some(format!("tabula::Pod<{value_type}>")),
        _ => None,
    }
}

/// A key descriptor without the names of `#[derive(Key)]` structs (`SlotKey { a: u64 }` →
/// `{ a: u64 }`): renaming a key struct changes nothing stored.
fn key_structure(descriptor: &str) -> String {
    let mut out = String::with_capacity(descriptor.len());
    let mut word = String::new();
    let mut chars = descriptor.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        let names_a_struct = c == ' ' && chars.peek() == Some(&'{');
        if !names_a_struct {
            out.push_str(&word);
        }
        word.clear();
        out.push(c);
    }
    out.push_str(&word);
    out
}

/// The structure a record holds for its values: the complete shape, or what a partial trace
/// saw. `None` when it holds neither (a codec without structure, or a record from a Tabula that
/// could not trace the type); `Err` when it holds one that cannot be read.
fn recorded_structure(record: &TableRecord) -> std::result::Result<Option<Structure>, String> {
    match (&record.shape, &record.partial_shape) {
        (Some(shape), _) => Structure::of_shape(shape).map(Some),
        (None, Some(partial)) => Structure::of_partial(partial).map(Some),
        (None, None) => Ok(None),
    }
}

/// Refuses a table whose recorded key encoding or values differ from its declaration; the
/// advice names the table struct and the migration step to add (at `next_version`).
///
/// What is compared, in order (one step each, the first difference refused):
///
/// 1. the key encoding, without the names of `#[derive(Key)]` structs;
/// 2. the value codec (`bincode`, `raw`, `custom <name>`);
/// 3. the value version (`#[table(value_version = N)]`; not stated counts as 1);
/// 4. the value type's structure ([`Value::trace`](crate::Value::trace)): serde's data model
///    with field and variant names, without type names — so a value type moved, renamed,
///    imported differently or aliased is the same type when its structure is. Parts a partial
///    trace did not reach agree with anything.
///
/// A record written by a Tabula from before complete tracing may hold no structure for a type
/// that release could not trace (an enum reached only through a `Vec`, `Option` or map). It is
/// trusted as that release trusted it: the value type must be spelled as recorded (then this
/// open records the structure, and later opens compare structures); a different spelling cannot
/// be checked and is refused, with the way out in the advice.
///
/// ```
/// use tabula::{Error, Table, TableInfo};
/// use tabula_core::record::TableRecord;
/// use tabula_core::startup::check_record;
///
/// #[derive(Table)]
/// #[table(name = "notes", key = u64, value = String)]
/// struct Notes;
///
/// let info = TableInfo::of::<Notes>();
/// let declared = TableRecord::of(&info);
/// check_record(&info, &declared, &declared, 2)?;
///
/// let mut stored = declared.clone();
/// stored.key = "u32".to_string();
/// let err = check_record(&info, &stored, &declared, 2).unwrap_err();
/// assert!(matches!(err, Error::SchemaMismatch { what: "key encoding", .. }));
/// assert!(err.to_string().contains(".step(2, \"notes-v2\""), "{err}");
/// # Ok::<(), tabula::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::SchemaMismatch`].
pub fn check_record(
    info: &TableInfo,
    stored: &TableRecord,
    declared: &TableRecord,
    next_version: u32,
) -> Result<()> {
    if recorded_as_declared(info, stored, declared) {
        return Ok(());
    }
    let record = Comparison {
        info,
        stored,
        declared,
        next_version,
    };
    record.key_encoding()?;
    let old_codec = record.value_encoding()?;
    record.value_version()?;
    record.value_structure(old_codec)
}

/// The common case of [`check_record`], recognised without allocating: the same key encoding, a
/// value descriptor recorded as the declared codec followed by `<type>`, the same value
/// version, and the same shape text (or no structure on either side, as for `Raw` values). The
/// steps of [`Comparison`] accept exactly these too; everything else takes them, in their order.
fn recorded_as_declared(info: &TableInfo, stored: &TableRecord, declared: &TableRecord) -> bool {
    stored.key == declared.key
        && info
            .value
            .strip_from(&stored.value)
            .is_some_and(|rest| rest.starts_with('<') && rest.ends_with('>'))
        && stored.value_version.unwrap_or(1) == declared.value_version.unwrap_or(1)
        && stored.shape == declared.shape
        && (stored.shape.is_some()
            || (stored.partial_shape.is_none() && declared.partial_shape.is_none()))
}

/// A table's stored record against the record of its declaration: the steps of
/// [`check_record`], each refusing with the migration step that would cover the difference.
struct Comparison<'a> {
    info: &'a TableInfo,
    stored: &'a TableRecord,
    declared: &'a TableRecord,
    /// The version a new migration step would take, for the advice.
    next_version: u32,
}

impl<'a> Comparison<'a> {
    fn mismatch(
        &self,
        what: &'static str,
        stored: String,
        declared: String,
        changes: Vec<String>,
        advice: String,
    ) -> Error {
        Error::SchemaMismatch {
            table: self.info.name.to_string(),
            what,
            stored,
            declared,
            advice,
            detail: MismatchDetail::new(self.info.rust_name, changes),
        }
    }

    /// The migration step that runs `op`, as the advice spells it.
    fn step(&self, op: String) -> String {
        let next_version = self.next_version;
        format!(
            "`.step({next_version}, \"{0}-v{next_version}\", |m| {op})`",
            self.info.name
        )
    }

    /// The advice for values that need converting from the previous value type `old`.
    fn transform(&self, old: &str) -> String {
        format!(
            "add a migration step that converts the stored values: keep the previous value \
             type as `{old}` and add {} to the `Migrations` you open with, or restore the \
             previous declaration",
            self.step(format!(
                "m.transform::<{}, {old}>(|old| ...)",
                self.info.rust_ident()
            ))
        )
    }

    /// Step 1: the key encoding, without the names of `#[derive(Key)]` structs.
    fn key_encoding(&self) -> Result<()> {
        let (stored, declared) = (&self.stored.key, &self.declared.key);
        if stored == declared || key_structure(stored) == key_structure(declared) {
            return Ok(());
        }
        Err(self.mismatch(
            "key encoding",
            stored.clone(),
            declared.clone(),
            Vec::new(),
            format!(
                "add a migration step that re-keys the table: keep the previous key type as \
                 `OldKey` and add {} to the `Migrations` you open with, or restore the previous \
                 key type",
                self.step(format!(
                    "m.rekey::<{}, OldKey>(|old| ...)",
                    self.info.rust_ident()
                ))
            ),
        ))
    }

    /// Step 2: the value codec. Returns the recorded codec (the declared one).
    fn value_encoding(&self) -> Result<&'a str> {
        let info = self.info;
        let codec = info.value.to_string();
        let old_codec = stored_codec(&self.stored.value, &codec);
        if old_codec == codec {
            return Ok(old_codec);
        }
        let (ident, value_type) = (info.rust_ident(), info.value_type);
        let op = if zstd_of(old_codec) == zstd_of(&codec) {
            // Only the compression differs: the values are the same, re-encoded.
            match old_codec {
                "bincode" => format!("m.transform::<{ident}, {value_type}>(|value| value)"),
                _ => match codec_type(old_codec, value_type) {
                    Some(old) => format!("m.transform_with::<{ident}, {old}>(|value| value)"),
                    None => format!("m.transform_with::<{ident}, OldCodec>(|value| value)"),
                },
            }
        } else {
            match old_codec {
                "bincode" => format!(
                    "m.transform::<{ident}, {}>(|old| ...)",
                    old_value_name(info, None)
                ),
                "raw" => format!("m.transform_with::<{ident}, tabula::Raw>(|bytes| ...)"),
                _ => match codec_type(old_codec, &old_value_name(info, None)) {
                    Some(old) => format!("m.transform_with::<{ident}, {old}>(|old| ...)"),
                    None => format!("m.transform_with::<{ident}, OldCodec>(|old| ...)"),
                },
            }
        };
        Err(self.mismatch(
            "value encoding",
            self.stored.value.clone(),
            self.declared.value.clone(),
            Vec::new(),
            format!(
                "add a migration step that re-encodes the stored values: {} (with the previous \
                 codec), or restore the previous codec",
                self.step(op)
            ),
        ))
    }

    /// Step 3: the value version; not stated counts as 1.
    fn value_version(&self) -> Result<()> {
        let (old_version, new_version) = (
            self.stored.value_version.unwrap_or(1),
            self.declared.value_version.unwrap_or(1),
        );
        if old_version == new_version {
            return Ok(());
        }
        Err(self.mismatch(
            "value version",
            old_version.to_string(),
            new_version.to_string(),
            Vec::new(),
            self.transform(&old_value_name(self.info, None)),
        ))
    }

    /// Step 4: the value type's structure; `old_codec` is the recorded codec, which a record
    /// from before complete tracing spells the type after.
    fn value_structure(&self, old_codec: &str) -> Result<()> {
        let (info, stored, declared) = (self.info, self.stored, self.declared);
        // The common case, and the only one that costs nothing: the same shape text.
        if stored.shape.is_some() && stored.shape == declared.shape {
            return Ok(());
        }
        let (old, new) = match (recorded_structure(stored), recorded_structure(declared)) {
            (Ok(old), Ok(new)) => (old, new),
            // A structure too large to compare (or unreadable): the recorded text must match.
            _ if stored.shape == declared.shape
                && stored.partial_shape == declared.partial_shape =>
            {
                return Ok(());
            }
            (Err(problem), _) | (_, Err(problem)) => {
                return Err(self.mismatch(
                    "value structure",
                    stored.value.clone(),
                    declared.value.clone(),
                    vec![problem],
                    self.transform(&old_value_name(info, None)),
                ));
            }
        };
        match (old, new) {
            (Some(old), Some(new)) => {
                if identity::same(&old, &new) {
                    if stored.value != declared.value {
                        tracing::info!(
                            table = info.name,
                            stored = %stored.value,
                            declared = %declared.value,
                            "value type spelled differently, same structure"
                        );
                    }
                    return Ok(());
                }
                let (changes, was, now) = identity::differences(&old, &new, 8, 200);
                Err(self.mismatch(
                    "value structure",
                    was,
                    now,
                    changes,
                    self.transform(&old_value_name(info, Some(&old))),
                ))
            }
            // A record from a Tabula that could not trace the type: trusted by its spelling.
            (None, Some(_)) if stored.value != declared.value => {
                let spelled = |v: &str| {
                    v.strip_prefix(old_codec)
                        .and_then(|t| t.strip_prefix('<'))
                        .and_then(|t| t.strip_suffix('>'))
                        .unwrap_or(v)
                        .to_string()
                };
                let (was, now) = (spelled(&stored.value), spelled(&declared.value));
                Err(self.mismatch(
                    "value type",
                    stored.value.clone(),
                    declared.value.clone(),
                    Vec::new(),
                    format!(
                        "the schema record was written by a Tabula that could not trace this \
                         value type, so it holds no structure to compare and the new spelling \
                         cannot be checked: if `{now}` is the same type as `{was}`, open the \
                         database once with the previous declaration `value = {was}` (this \
                         Tabula then records the structure, and a later open compares \
                         structures, not spellings); otherwise {}",
                        self.transform(&old_value_name(info, None))
                    ),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// Refuses a `dupsort` table whose values were stored with bincode (by Tabula 0.1.0, before
/// dup values were stored in an order-preserving encoding) when the declaration stores them
/// ordered: libmdbx keeps them in bincode's byte order, so reading them as ordered values
/// would give wrong seeks and appends. The advice names the migration step that re-encodes it.
fn check_dup_encoding(
    info: &TableInfo,
    stored: &TableRecord,
    declared: &TableRecord,
    next_version: u32,
) -> Result<()> {
    let ordered = |value: &str| value.starts_with("ordered<") || value.starts_with("subkey ");
    if !(info.flags.dupsort && stored.dupsort)
        || ordered(&stored.value)
        || !ordered(&declared.value)
    {
        return Ok(());
    }
    let ident = info.rust_ident();
    let step = if declared.value.starts_with("subkey ") {
        format!(
            "`.step({next_version}, \"reencode-{0}\", |m| m.reencode_dups::<{ident}>())` when \
             the old value was the (subkey, value) pair as a tuple or struct of those two fields, \
             or `m.transform::<{ident}, OldValue>(|old| (subkey, value))` otherwise",
            info.name
        )
    } else {
        format!(
            "`.step({next_version}, \"reencode-{0}\", |m| m.reencode_dups::<{ident}>())`",
            info.name
        )
    };
    Err(Error::SchemaMismatch {
        table: info.name.to_string(),
        what: "dup value encoding",
        stored: stored.value.clone(),
        declared: declared.value.clone(),
        advice: format!(
            "this dupsort table was written by Tabula 0.1.0, which stored a key's values with \
             bincode, so libmdbx keeps them in bincode's byte order instead of the values' order; \
             re-encode them with a migration step: {step}"
        ),
        detail: MismatchDetail::new(info.rust_name, Vec::new()),
    })
}

/// Stored libmdbx flag bits as the schema spells flags (`dupsort, integer_key`), with any
/// other libmdbx flags named in hex.
///
/// ```
/// use tabula::TableFlags;
/// use tabula_core::startup::{Bootstrap, describe_flag_bits};
///
/// let both = TableFlags { dupsort: true, integer_key: true };
/// assert_eq!(describe_flag_bits(Bootstrap::flag_bits(both)), both.to_string());
/// assert_eq!(describe_flag_bits(0), TableFlags::NONE.to_string());
/// ```
pub fn describe_flag_bits(bits: u32) -> String {
    let flag = |dupsort, integer_key| {
        Bootstrap::flag_bits(TableFlags {
            dupsort,
            integer_key,
        })
    };
    let dupsort = bits & flag(true, false) != 0;
    let integer_key = bits & flag(false, true) != 0;
    let known = flag(dupsort, integer_key);
    let mut s = TableFlags {
        dupsort,
        integer_key,
    }
    .to_string();
    if bits != known {
        s.push_str(&format!(" (+ other libmdbx flags 0x{:x})", bits & !known));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    // Declared as an application declares tables: the derive, naming this crate.
    #[derive(tabula_derive::Table)]
    #[tabula(crate = crate)]
    #[table(name = "blobs", key = u64, value = Vec<u8>, codec = crate::codec::Raw)]
    struct Blobs;

    #[derive(tabula_derive::Table)]
    #[tabula(crate = crate)]
    #[table(name = "numbers", key = u64, value = u64)]
    struct Numbers;

    #[derive(tabula_derive::Table)]
    #[tabula(crate = crate)]
    #[table(name = "sorted", key = u64, value = u64, dupsort)]
    struct Sorted;

    /// A repeated name is refused at the first table (in schema order) whose name an earlier
    /// one has, naming that earlier one's struct, wherever the repeats stand; the name order
    /// returned is the tables' by name.
    #[test]
    fn the_first_repeated_name_is_refused_naming_the_first_table() {
        let table = |name: &'static str, rust_name: &'static str| TableInfo {
            name,
            rust_name,
            ..TableInfo::of::<Numbers>()
        };
        let schemas: [&[(&str, &str)]; 5] = [
            &[
                ("b", "B1"),
                ("a", "A1"),
                ("c", "C1"),
                ("a", "A2"),
                ("b", "B2"),
            ],
            &[("b", "B1"), ("a", "A1"), ("b", "B2"), ("a", "A2")],
            &[("a", "A1"), ("a", "A2"), ("a", "A3")],
            &[
                ("z", "Z1"),
                ("y", "Y1"),
                ("x", "X1"),
                ("y", "Y2"),
                ("z", "Z2"),
            ],
            &[("c", "C1"), ("b", "B1"), ("a", "A1")],
        ];
        for schema in schemas {
            let tables: Vec<TableInfo> = schema.iter().map(|&(n, r)| table(n, r)).collect();
            // The table a scan in schema order finds first, and the earlier one it repeats.
            let expected = (0..tables.len()).find_map(|at| {
                (0..at)
                    .find(|&first| tables[first].name == tables[at].name)
                    .map(|first| (tables[at].rust_name, tables[first].rust_name))
            });
            match (declare_traces(&tables), expected) {
                (Ok(declared), None) => {
                    let names: Vec<&str> =
                        declared.by_name.iter().map(|&at| tables[at].name).collect();
                    assert!(names.is_sorted(), "{names:?}");
                    assert_eq!(names.len(), tables.len());
                }
                (
                    Err(Error::InvalidTable {
                        rust_name, problem, ..
                    }),
                    Some((at, first)),
                ) => {
                    assert_eq!(rust_name, at, "{schema:?}");
                    assert!(problem.contains(&format!("(`{first}`)")), "{problem}");
                }
                (other, expected) => panic!("{schema:?}: {:?}, {expected:?}", other.map(|_| ())),
            }
        }
    }

    /// `check_record` accepts a record without allocating when it holds what is declared; the
    /// records around that case are judged as before (spelling alone, codec, key, version).
    #[test]
    fn records_near_the_declared_one_are_judged_by_the_full_comparison() {
        let info = TableInfo::of::<Blobs>();
        let declared = TableRecord::traced(&info, &ValueTrace::Opaque);
        let with = |f: fn(&mut TableRecord)| {
            let mut r = declared.clone();
            f(&mut r);
            check_record(&info, &r, &declared, 2)
        };
        assert!(with(|_| {}).is_ok());
        // No structure on either side: the type's spelling is not compared.
        assert!(with(|r| r.value = "raw<bytes::Bytes>".into()).is_ok());
        // A record of the codec alone, or with a malformed type part, keeps the codec.
        assert!(with(|r| r.value = "raw".into()).is_ok());
        assert!(with(|r| r.value = "raw<Vec<u8>".into()).is_ok());
        for (change, what) in [
            (
                (|r: &mut TableRecord| r.value = "rawx<Vec<u8>>".into()) as fn(&mut TableRecord),
                "value encoding",
            ),
            (|r| r.value = "bincode<Vec<u8>>".into(), "value encoding"),
            (|r| r.key = "u32".into(), "key encoding"),
            (|r| r.value_version = Some(2), "value version"),
        ] {
            match with(change) {
                Err(Error::SchemaMismatch { what: found, .. }) => assert_eq!(found, what),
                other => panic!("expected a {what} mismatch, got {other:?}"),
            }
        }
        // A stated version 1 is the unstated one.
        assert!(with(|r| r.value_version = Some(1)).is_ok());
    }

    /// What lets the startup step pass a record that `is_traced` recognises without building
    /// the declared record: the record of a declaration compared with itself passes both
    /// comparisons, whatever the trace holds (complete, partial, unreadable or nothing) and
    /// whatever the codec and flags.
    #[test]
    fn a_declared_record_compared_with_itself_passes() {
        let traces = [
            ValueTrace::Opaque,
            ValueTrace::Complete("[\"U64\",{}]".into()),
            ValueTrace::Complete("not a shape".into()),
            ValueTrace::Partial {
                structure: "not a structure".into(),
                problem: "p".into(),
            },
        ];
        let dupsort = TableFlags {
            dupsort: true,
            integer_key: false,
        };
        for info in [
            TableInfo::of::<Blobs>(),
            TableInfo::of::<Numbers>(),
            // Bincode values in a dupsort table, as Tabula 0.1.0 declared them (the derive
            // now stores a dupsort table's values ordered).
            TableInfo {
                flags: dupsort,
                ..TableInfo::of::<Numbers>()
            },
            TableInfo::of::<Sorted>(),
        ] {
            for trace in &traces {
                let record = TableRecord::traced(&info, trace);
                assert!(record.is_traced(&info, trace));
                check_dup_encoding(&info, &record, &record, 2).unwrap();
                check_record(&info, &record, &record, 2).unwrap();
            }
        }
    }
}
