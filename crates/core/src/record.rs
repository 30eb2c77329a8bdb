//! What the meta table stores: the schema record (tables, descriptors, schema version, applied
//! migration steps) and the progress of a running migration step. Parsed and written here only:
//! the startup path, the migrations and the schema-less reader all go through these types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::ValueTrace;
use crate::table::TableInfo;

/// The reserved table holding Tabula's schema record and migration log
/// (`Bootstrap::meta_get`, `Bootstrap::read_record`).
pub const META_TABLE: &str = "__tabula_meta";

/// The meta-table key of the schema record.
pub const SCHEMA_RECORD_KEY: &str = "schema";

/// The meta-table key under which Tabula releases before [`StepProgress`] kept an unfinished
/// migration step's progress. Read only to refuse such progress (it names no declaration) and
/// deleted when a step finishes.
pub const LEGACY_PROGRESS_KEY: &str = "migration-progress";

/// The reserved table holding the zstd dictionaries of [`ZstdDict`](crate::codec) tables: per
/// dictionary name, every dictionary trained for it (`dict\0<name>\0<ID, 4 bytes big-endian>`
/// → the dictionary) and the current one (`current\0<name>` → its ID).
pub const ZSTD_DICTIONARY_TABLE: &str = "__tabula_zstd_dict";

/// The newest schema record format this version reads.
///
/// A record is written in format 1, which every Tabula reads, except while a migration step is
/// in progress ([`SchemaRecord::in_progress`] is set): then it is written in format 2, so that
/// a Tabula from before this format refuses the half-migrated file ("written by a newer
/// Tabula") instead of opening it.
pub const RECORD_FORMAT: u32 = 2;

/// The format of a record with no migration step in progress.
const SETTLED_FORMAT: u32 = 1;

/// What the meta table remembers about a database: its schema version, the migration steps
/// applied to it, and every table Tabula created in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaRecord {
    /// Format of this record; a newer one is refused.
    pub format: u32,
    /// Schema version reached (1 for a database no migration step has touched).
    #[serde(default = "one")]
    pub version: u32,
    /// Migration steps applied, in order.
    #[serde(default)]
    pub applied: Vec<AppliedStep>,
    /// Tables by name.
    #[serde(deserialize_with = "tables_in_bulk")]
    pub tables: BTreeMap<String, TableRecord>,
    /// The migration step that began and has not finished (it was interrupted): the next open
    /// must finish it with the same declaration, and code that does not declare it refuses the
    /// file. Stored only in format 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_progress: Option<StepProgress>,
}

/// `tables` as JSON, byte for byte as `serde_json` writes them in a record (the fields of each
/// [`TableRecord`] in their order, the absent optional ones left out, strings escaped as
/// `serde_json` escapes them), written directly: through serde it cost 1,250 instructions a
/// table of the open bench, this about 700. The startup writes the declared tables' JSON
/// ([`write_declared_json`], through the same [`TableJson::write`]); this one is the tests',
/// which hold it to `serde_json`'s output and [`write_declared_json`] to it.
#[cfg(test)]
fn write_tables_json(out: &mut Vec<u8>, tables: &BTreeMap<String, TableRecord>) {
    out.push(b'{');
    for (at, (name, table)) in tables.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        TableJson::of(table).write(out, name);
    }
    out.push(b'}');
}

/// The `tables` of a record holding exactly the declarations `tables` (value types traced as
/// `traces`; `by_name`: their positions in name order, `str`'s byte order, as the record's
/// `BTreeMap<String, _>` keeps them), as JSON: the bytes `serde_json` writes for the [`TableRecord::traced`] records of
/// the declarations by name, written from the declarations without building those records (a
/// name, a key and a value text and a map node a table).
/// [`SchemaRecord::parse_declared`] compares stored bytes with it; a difference would only make
/// that comparison miss and the record be parsed whole (the tests hold it to the records'
/// JSON, `write_tables_json`, and that to `serde_json`'s).
pub(crate) fn write_declared_json(
    out: &mut Vec<u8>,
    tables: &[TableInfo],
    traces: &[ValueTrace],
    by_name: &[usize],
) {
    // The texts of descriptors that have no fixed one (`Descriptor::rendered`), reused.
    let (mut key, mut codec) = (String::new(), String::new());
    out.push(b'{');
    for (n, &at) in by_name.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        let (info, trace) = (&tables[at], &traces[at]);
        let key = info.key.rendered().unwrap_or_else(|| {
            key.clear();
            info.key.push_text(&mut key);
            &key
        });
        let codec = info.value.rendered().unwrap_or_else(|| {
            codec.clear();
            info.value.push_text(&mut codec);
            &codec
        });
        TableJson::declared(info, trace, key, codec).write(out, info.name);
    }
    out.push(b'}');
}

/// A table's record as JSON writes it: its fields, borrowed from a [`TableRecord`] or from a
/// declaration.
struct TableJson<'a> {
    dupsort: bool,
    integer_key: bool,
    key: &'a str,
    /// The value text: the whole text, or a declaration's codec and value type
    /// (`{codec}<{type}>`).
    value: (&'a str, Option<&'a str>),
    shape: Option<&'a str>,
    value_version: Option<u32>,
    partial_shape: Option<&'a str>,
    index: Option<(&'a str, bool)>,
    history_of: Option<&'a str>,
}

impl<'a> TableJson<'a> {
    #[cfg(test)]
    fn of(table: &'a TableRecord) -> Self {
        // Every field named, so that a field added to the record is written here too.
        let TableRecord {
            dupsort,
            integer_key,
            key,
            value,
            shape,
            value_version,
            partial_shape,
            index,
            history_of,
        } = table;
        TableJson {
            dupsort: *dupsort,
            integer_key: *integer_key,
            key,
            value: (value, None),
            shape: shape.as_deref(),
            value_version: *value_version,
            partial_shape: partial_shape.as_deref(),
            index: index.as_ref().map(|i| (i.source.as_str(), i.unique)),
            history_of: history_of.as_deref(),
        }
    }

    /// The fields [`TableRecord::traced`] gives `info` and `trace`, with the text of its key
    /// descriptor `key` and of its value codec `codec`.
    fn declared(info: &'a TableInfo, trace: &'a ValueTrace, key: &'a str, codec: &'a str) -> Self {
        let (shape, partial_shape) = traced_shapes(trace);
        TableJson {
            dupsort: info.flags.dupsort,
            integer_key: info.flags.integer_key,
            key,
            value: (codec, Some(info.value_type)),
            shape,
            value_version: info.value_version,
            partial_shape,
            index: info.index.map(|i| (i.source, i.unique)),
            history_of: info.history_of,
        }
    }

    /// `"name":{..}`.
    fn write(&self, out: &mut Vec<u8>, name: &str) {
        fn bool_field(out: &mut Vec<u8>, name: &[u8], value: bool) {
            out.extend_from_slice(name);
            out.extend_from_slice(if value { b"true" } else { b"false" });
        }
        fn str_field(out: &mut Vec<u8>, name: &[u8], value: &str) {
            out.extend_from_slice(name);
            json_string(out, value);
        }
        json_string(out, name);
        bool_field(out, b":{\"dupsort\":", self.dupsort);
        bool_field(out, b",\"integer_key\":", self.integer_key);
        str_field(out, b",\"key\":", self.key);
        out.extend_from_slice(b",\"value\":\"");
        let (codec, value_type) = self.value;
        json_text(out, codec);
        if let Some(value_type) = value_type {
            out.push(b'<');
            json_text(out, value_type);
            out.push(b'>');
        }
        out.push(b'"');
        if let Some(shape) = self.shape {
            str_field(out, b",\"shape\":", shape);
        }
        if let Some(version) = self.value_version {
            out.extend_from_slice(b",\"value_version\":");
            write_u32(out, version);
        }
        if let Some(partial) = self.partial_shape {
            str_field(out, b",\"partial_shape\":", partial);
        }
        if let Some((source, unique)) = self.index {
            str_field(out, b",\"index\":{\"source\":", source);
            bool_field(out, b",\"unique\":", unique);
            out.push(b'}');
        }
        if let Some(source) = self.history_of {
            str_field(out, b",\"history_of\":", source);
        }
        out.push(b'}');
    }
}

/// A traced value type's `shape` and `partial_shape`, as its record keeps them.
fn traced_shapes(trace: &ValueTrace) -> (Option<&str>, Option<&str>) {
    match trace {
        ValueTrace::Opaque => (None, None),
        ValueTrace::Complete(shape) => (Some(shape), None),
        ValueTrace::Partial { structure, .. } => (None, Some(structure)),
    }
}

/// A declared table's `key` and `value` texts ([`TableInfo::key_descriptor`],
/// [`TableInfo::value_descriptor`]: `{codec}<{type}>`), pushed onto `key` and `value` without
/// `format!`, which cost half of `declare`, and the common descriptors without the formatter at
/// all (`Descriptor::push_text`).
fn declared_descriptors(info: &TableInfo, key: &mut String, value: &mut String) {
    info.key.push_text(key);
    info.value.push_text(value);
    value.push('<');
    value.push_str(info.value_type);
    value.push('>');
}

/// `n` in decimal, as `serde_json` writes it.
fn write_u32(out: &mut Vec<u8>, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// `s` as a JSON string, escaped as `serde_json` escapes it ([`json_text`]).
fn json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    json_text(out, s);
    out.push(b'"');
}

/// `s` as the inside of a JSON string, escaped as `serde_json` escapes it: `"` and `\\` with
/// a backslash, the control characters with their short escapes or `\u00XX`, everything else
/// as it is. Most texts need no escape ([`plain`]): they are copied whole.
fn json_text(out: &mut Vec<u8>, s: &str) {
    if plain(s.as_bytes()) {
        out.extend_from_slice(s.as_bytes());
    } else {
        escape_into(out, s.as_bytes());
    }
}

/// Whether `bytes` hold nothing a JSON string escapes (`"`, `\\`, control characters below
/// 0x20): eight at a time (a byte below 0x20 sets its top bit in `x - 0x20..` where it is
/// clear in `x`; a byte equal to `"` or `\\` is a zero byte of `x ^ 0x22..` or `x ^ 0x5c..`,
/// below 1), the last few one by one.
fn plain(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS;
    let escaped = |x: u64| {
        below(x, 0x20)
            | below(x ^ (ONES * u64::from(b'"')), 1)
            | below(x ^ (ONES * u64::from(b'\\')), 1)
    };
    let mut chunks = bytes.chunks_exact(8);
    let mut any = 0;
    for chunk in &mut chunks {
        any |= escaped(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
    }
    any == 0
        && chunks
            .remainder()
            .iter()
            .all(|&b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// `bytes` escaped for a JSON string ([`json_text`]), byte by byte.
fn escape_into(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut from = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..0x20 => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..at]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        from = at + 1;
    }
    out.extend_from_slice(&bytes[from..]);
}

/// The fields of a stored record before its `tables` ([`SchemaRecord::parse_declared`]), with
/// [`SchemaRecord`]'s defaults; a `tables` field among them is noted, not parsed.
#[derive(Deserialize)]
struct RecordHead {
    format: u32,
    #[serde(default = "one")]
    version: u32,
    #[serde(default)]
    applied: Vec<AppliedStep>,
    /// Whether the fields before the tables hold a `tables` field too (`null` included).
    #[serde(default, deserialize_with = "present")]
    tables: bool,
    #[serde(default)]
    in_progress: Option<StepProgress>,
}

/// `true`: the field is there, whatever it holds.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// A record's `format` field alone (every other field skipped unparsed).
#[derive(Deserialize)]
struct FormatOnly {
    format: Option<u64>,
}

fn one() -> u32 {
    1
}

/// The `tables` map of a stored record, read into a list and built in one go
/// (`BTreeMap::from_iter` sorts the list, already in order as written, and fills the tree
/// without searching it): an insert per table cost a fifth of parsing a 100-table record.
/// Repeated names keep the last record, as inserting them one by one does.
fn tables_in_bulk<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, TableRecord>, D::Error> {
    struct Tables;
    impl<'de> serde::de::Visitor<'de> for Tables {
        type Value = BTreeMap<String, TableRecord>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut tables = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
            while let Some(entry) = map.next_entry::<String, TableRecord>()? {
                tables.push(entry);
            }
            Ok(tables.into_iter().collect())
        }
    }
    deserializer.deserialize_map(Tables)
}

/// Why stored schema-record bytes cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordProblem {
    /// The bytes are not a schema record (the JSON parser's message).
    Damaged(String),
    /// The record has this format, newer than [`RECORD_FORMAT`].
    Newer(u32),
}

impl SchemaRecord {
    /// Parses stored record bytes, checking the format before the fields, so a record written by
    /// a newer Tabula is reported as such even when its fields no longer parse here.
    ///
    /// # Errors
    ///
    /// [`RecordProblem`] when the bytes are damaged or from a newer format.
    pub fn parse(bytes: &[u8]) -> Result<Self, RecordProblem> {
        let newer = |format: u64| {
            (format > u64::from(RECORD_FORMAT))
                .then(|| RecordProblem::Newer(u32::try_from(format).unwrap_or(u32::MAX)))
        };
        // Straight into the typed record, the common case (no `serde_json::Value` tree: at 100
        // tables that tree cost a third of the startup step's instructions); only when that
        // fails is the format read alone, to tell a newer record from a damaged one.
        match serde_json::from_slice::<SchemaRecord>(bytes) {
            Ok(record) => match newer(u64::from(record.format)) {
                Some(problem) => Err(problem),
                None => Ok(record),
            },
            Err(e) => {
                let format = serde_json::from_slice::<FormatOnly>(bytes)
                    .ok()
                    .and_then(|f| f.format);
                Err(format
                    .and_then(newer)
                    .unwrap_or_else(|| RecordProblem::Damaged(e.to_string())))
            }
        }
    }

    /// [`parse`](Self::parse) for a startup whose declared tables, as JSON, are
    /// `declared_json` ([`write_declared_json`]): when the stored record's `tables` are
    /// exactly those, written as [`encode`](Self::encode) writes them (every open after the
    /// first until the schema changes), they are recognised by their bytes and only the fields
    /// before them are parsed: the record returned has no tables (the caller knows them: the
    /// declared ones, built only when needed, [`TableRecord::traced`]), and `true` says so.
    /// Any other bytes are parsed whole, as [`parse`](Self::parse) does, errors included, and
    /// `false` is returned.
    ///
    /// Sound because the fields before `"tables"` must parse as a whole JSON object of their
    /// own (ended where `"tables"` begins, so that comma is outside every string) holding no
    /// `tables` field, and what follows is the declared tables as JSON and the object's end:
    /// the bytes are then that object with the declared tables, which is what parsing them
    /// would give.
    ///
    /// # Errors
    ///
    /// As [`parse`](Self::parse).
    pub(crate) fn parse_declared(
        bytes: &[u8],
        declared_json: &[u8],
    ) -> Result<(Self, bool), RecordProblem> {
        match Self::head_with_declared(bytes, declared_json) {
            Some(head) => {
                let record = SchemaRecord {
                    format: head.format,
                    version: head.version,
                    applied: head.applied,
                    tables: BTreeMap::new(),
                    in_progress: head.in_progress,
                };
                match record.format > RECORD_FORMAT {
                    true => Err(RecordProblem::Newer(record.format)),
                    false => Ok((record, true)),
                }
            }
            None => Self::parse(bytes).map(|record| (record, false)),
        }
    }

    /// The fields before `"tables"` of `bytes` when the rest is `declared_json` and the
    /// record's end ([`parse_declared`](Self::parse_declared)); `None` otherwise.
    fn head_with_declared(bytes: &[u8], declared_json: &[u8]) -> Option<RecordHead> {
        const TABLES: &[u8] = b",\"tables\":";
        let before = bytes.strip_suffix(b"}")?.strip_suffix(declared_json)?;
        let at = before.strip_suffix(TABLES)?.len();
        // The fields before, closed where the tables' comma was.
        let mut head = Vec::with_capacity(at + 1);
        head.extend_from_slice(&bytes[..at]);
        head.push(b'}');
        let head: RecordHead = serde_json::from_slice(&head).ok()?;
        (!head.tables).then_some(head)
    }

    /// The name of the table the record lists as `table`'s history (`#[derive(History)]`), if
    /// it lists one.
    ///
    /// ```
    /// # let dir = tabula::__doc::ledger_at_two_versions()?;
    /// let db = tabula::untyped::UntypedDb::open(dir.path())?;
    /// let record = db.record().expect("a schema record");
    /// assert_eq!(record.history_of("Ledger"), Some("LedgerHistory"));
    /// assert_eq!(record.history_of("LedgerHistory"), None);
    /// # Ok::<(), tabula::Error>(())
    /// ```
    pub fn history_of(&self, table: &str) -> Option<&str> {
        self.tables
            .iter()
            .find(|(_, t)| t.history_of.as_deref() == Some(table))
            .map(|(name, _)| name.as_str())
    }

    /// The record of a database nothing has been recorded in yet: version 1, no tables.
    pub fn empty() -> Self {
        SchemaRecord {
            format: SETTLED_FORMAT,
            version: 1,
            applied: Vec::new(),
            tables: BTreeMap::new(),
            in_progress: None,
        }
    }

    /// Sets `format` to what the record must be written as: 2 while a step is in progress (a
    /// Tabula without [`in_progress`](Self::in_progress) refuses it), 1 otherwise.
    pub fn settle_format(&mut self) {
        self.format = if self.in_progress.is_some() {
            RECORD_FORMAT
        } else {
            SETTLED_FORMAT
        };
    }

    /// The bytes to store, in the format [`settle_format`](Self::settle_format) picks.
    pub fn encode(&mut self) -> Vec<u8> {
        self.settle_format();
        serde_json::to_vec(self).expect("a schema record always serialises")
    }
}

/// One applied migration step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedStep {
    /// The version the step migrates to.
    pub version: u32,
    /// Its name.
    pub name: String,
    /// Checksum of its declaration (the operations it lists).
    pub checksum: String,
}

/// One table in the [`SchemaRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRecord {
    /// Several values per key.
    pub dupsort: bool,
    /// Native-endian integer keys.
    pub integer_key: bool,
    /// The key encoding, e.g. `(str, u64)`.
    pub key: String,
    /// The value codec and type, e.g. `bincode<Header>`. The codec part is compared; the type
    /// as written is shown, not compared (the [`shape`](TableRecord::shape) identifies it).
    pub value: String,
    /// The value type's structural shape (serde data model as JSON), when the codec has one and
    /// it was traced to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// The version of the stored values the declaration states (`#[table(value_version = N)]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_version: Option<u32>,
    /// What a trace of the value type that could not finish saw (Tabula's own structure JSON,
    /// unreached parts unknown); only for such types, which must state a `value_version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_shape: Option<String>,
    /// For an index (`#[derive(Index)]`): what it indexes. Absent for a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexRecord>,
    /// For a history (`#[derive(History)]`): the name of the table whose changes it records.
    /// Absent for any other table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_of: Option<String>,
}

/// What the [`SchemaRecord`] keeps of an index: its source table and whether it is unique.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRecord {
    /// The source table's name.
    pub source: String,
    /// Whether each index key belongs to one row at most.
    pub unique: bool,
}

impl TableRecord {
    /// The record of a declared table (traces its value type: see [`TableRecord::traced`]).
    pub fn of(info: &TableInfo) -> Self {
        TableRecord::traced(info, &(info.value_trace)())
    }

    /// The record of a declared table whose value type traced as `trace`.
    ///
    /// ```
    /// use tabula::{Table, TableInfo, Value, ValueTrace};
    /// use tabula_core::record::TableRecord;
    ///
    /// #[derive(Table)]
    /// #[table(name = "notes", key = u64, value = String, value_version = 2)]
    /// struct Notes;
    ///
    /// let info = TableInfo::of::<Notes>();
    /// let record = TableRecord::traced(&info, &(info.value_trace)());
    /// assert_eq!(record.value, "bincode<String>");
    /// assert_eq!(record.value_version, Some(2));
    /// assert!(record.shape.is_some() && record.partial_shape.is_none());
    /// let opaque = TableRecord::traced(&info, &ValueTrace::Opaque);
    /// assert_eq!(opaque.shape, None);
    /// ```
    pub fn traced(info: &TableInfo, trace: &ValueTrace) -> Self {
        let (shape, partial_shape) = traced_shapes(trace);
        let mut key = String::with_capacity(16);
        let mut value = String::with_capacity(info.value_type.len() + 18);
        declared_descriptors(info, &mut key, &mut value);
        TableRecord {
            dupsort: info.flags.dupsort,
            integer_key: info.flags.integer_key,
            key,
            value,
            shape: shape.map(str::to_string),
            value_version: info.value_version,
            partial_shape: partial_shape.map(str::to_string),
            index: info.index.map(|index| IndexRecord {
                source: index.source.to_string(),
                unique: index.unique,
            }),
            history_of: info.history_of.map(str::to_string),
        }
    }
}

impl TableRecord {
    /// Whether this record is exactly the one [`traced`](TableRecord::traced) makes of `info`
    /// and `trace`: compared field by field as the declaration renders, without building it.
    /// The startup step checks a recorded table this way first; only a record that differs
    /// gets the declared record built and every comparison of `check_record` made.
    pub(crate) fn is_traced(&self, info: &TableInfo, trace: &ValueTrace) -> bool {
        let (shape, partial_shape) = traced_shapes(trace);
        self.dupsort == info.flags.dupsort
            && self.integer_key == info.flags.integer_key
            && info.key.strip_from(&self.key) == Some("")
            && info
                .value
                .strip_from(&self.value)
                .and_then(|rest| rest.strip_prefix('<'))
                .and_then(|rest| rest.strip_suffix('>'))
                == Some(info.value_type)
            && self.value_version == info.value_version
            && self.shape.as_deref() == shape
            && self.partial_shape.as_deref() == partial_shape
            && match (&self.index, &info.index) {
                (None, None) => true,
                (Some(recorded), Some(declared)) => {
                    recorded.source == declared.source && recorded.unique == declared.unique
                }
                _ => false,
            }
            && self.history_of.as_deref() == info.history_of
    }
}

/// Where a migration step that has begun stands, and which exact declaration it belongs to;
/// written in the schema record in the same transaction as each batch, cleared with the
/// transaction that records the step as applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepProgress {
    /// The version the step migrates to.
    pub version: u32,
    /// The step's name.
    pub name: String,
    /// The checksum of the step's declaration (`tabula_migrate::Step::checksum`):
    /// the progress is resumed only by a step with this checksum.
    pub checksum: String,
    /// Operations before this index are complete.
    pub op: usize,
    /// The last source key (stored bytes) whose entries are done, for the operation at `op`.
    pub after: Option<Vec<u8>>,
    /// Entries done in that operation.
    pub done: u64,
    /// Whether the operation at `op` has rewritten its table's rows and is converting the
    /// values before recorded in the table's history (a `transform` of a table with a
    /// history): `after` and `done` are then of the history's entries. Absent (false) in
    /// records written before it existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub history: bool,
}

/// The progress record of Tabula releases before [`StepProgress`], under [`LEGACY_PROGRESS_KEY`]: it
/// names the step's version only.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct LegacyProgress {
    /// The step's version.
    pub version: u32,
    /// Operations before this index are complete.
    pub op: usize,
    /// Entries done in that operation.
    pub done: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_record_is_newer_even_when_its_fields_do_not_parse() {
        let newer = br#"{"format": 7, "tables": "a list now"}"#;
        assert_eq!(SchemaRecord::parse(newer), Err(RecordProblem::Newer(7)));
        let newer_parsing = br#"{"format": 3, "tables": {}}"#;
        assert_eq!(
            SchemaRecord::parse(newer_parsing),
            Err(RecordProblem::Newer(3))
        );
        let huge = br#"{"format": 99999999999, "tables": 1}"#;
        assert_eq!(
            SchemaRecord::parse(huge),
            Err(RecordProblem::Newer(u32::MAX))
        );
    }

    #[test]
    fn a_traced_record_spells_descriptors_as_table_info_does() {
        use crate::schema::Descriptor;
        use crate::table::{TableFlags, TableInfo};
        let info = TableInfo {
            name: "pairs",
            flags: TableFlags::NONE,
            key: Descriptor::Tuple(&[Descriptor::Str, Descriptor::Unsigned(64)]),
            value: Descriptor::Zstd(&Descriptor::Bincode),
            value_type: "std::collections::BTreeMap<String, Vec<u8>>",
            value_version: None,
            rust_name: "",
            value_trace: || ValueTrace::Opaque,
            debug_key: crate::__private::no_debug_key,
            index: None,
            history: false,
            history_of: None,
        };
        let record = TableRecord::traced(&info, &ValueTrace::Opaque);
        assert_eq!(record.key, info.key_descriptor());
        assert_eq!(record.value, info.value_descriptor());
        assert_eq!(
            record.value,
            "zstd(bincode)<std::collections::BTreeMap<String, Vec<u8>>>"
        );
    }

    /// `is_traced` agrees with building the record and comparing, for the record itself and
    /// for every field changed.
    #[test]
    fn is_traced_is_equality_with_the_traced_record() {
        use crate::schema::Descriptor;
        use crate::table::{TableFlags, TableInfo};
        let info = TableInfo {
            name: "pairs",
            flags: TableFlags::NONE,
            key: Descriptor::Tuple(&[Descriptor::Str, Descriptor::Unsigned(64)]),
            value: Descriptor::Bincode,
            value_type: "Pair<u8>",
            value_version: Some(3),
            rust_name: "",
            value_trace: || ValueTrace::Opaque,
            debug_key: crate::__private::no_debug_key,
            index: None,
            history: false,
            history_of: None,
        };
        let traces = [
            ValueTrace::Opaque,
            ValueTrace::Complete("[\"U64\",{}]".to_string()),
            ValueTrace::Partial {
                structure: "{\"unknown\":null}".to_string(),
                problem: "p".to_string(),
            },
        ];
        let changes: [fn(&mut TableRecord); 12] = [
            |_| {},
            |r| r.dupsort = !r.dupsort,
            |r| r.integer_key = !r.integer_key,
            |r| r.key.push(' '),
            |r| r.key = "(str, u64".to_string(),
            |r| r.value = "bincode<Pair<u8>".to_string(),
            |r| r.value = "bincode<Pair<u16>>".to_string(),
            |r| r.value = "bincodex<Pair<u8>>".to_string(),
            |r| r.value_version = None,
            |r| r.shape = Some("other".to_string()),
            |r| r.partial_shape = r.shape.take(),
            |r| r.shape = r.partial_shape.take(),
        ];
        for trace in &traces {
            let declared = TableRecord::traced(&info, trace);
            for (i, change) in changes.iter().enumerate() {
                let mut record = declared.clone();
                change(&mut record);
                assert_eq!(
                    record.is_traced(&info, trace),
                    record == declared,
                    "change {i}, {record:?}"
                );
            }
        }
    }

    #[test]
    fn tables_parse_in_any_order_and_a_repeated_name_keeps_its_last_record() {
        let table = |key: &str| {
            format!(r#"{{"dupsort":false,"integer_key":false,"key":"{key}","value":"raw<V>"}}"#)
        };
        let bytes = format!(
            r#"{{"format":1,"tables":{{"b":{},"a":{},"c":{},"b":{}}}}}"#,
            table("u8"),
            table("u16"),
            table("u32"),
            table("u64")
        );
        let record = SchemaRecord::parse(bytes.as_bytes()).unwrap();
        let keys: Vec<(&str, &str)> = record
            .tables
            .iter()
            .map(|(name, t)| (name.as_str(), t.key.as_str()))
            .collect();
        assert_eq!(keys, [("a", "u16"), ("b", "u64"), ("c", "u32")]);
        // Not a map: the JSON parser's own words, as before the tables were read in bulk.
        match SchemaRecord::parse(br#"{"format": 1, "tables": ["a"]}"#) {
            Err(RecordProblem::Damaged(e)) => assert!(e.contains("expected a map"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    /// `parse_declared` gives what `parse` gives, for records whose tables are the declared
    /// ones as written and for every near miss, and says which it recognised by their bytes.
    #[test]
    fn parse_declared_is_parse() {
        let table = |key: &str| TableRecord {
            dupsort: false,
            integer_key: true,
            key: key.to_string(),
            value: "raw<Vec<u8>>".to_string(),
            shape: Some("[\"U64\",{\"a\":1}]".to_string()),
            value_version: None,
            partial_shape: None,
            index: None,
            history_of: None,
        };
        let declared: BTreeMap<String, TableRecord> = [("a", "u64"), ("b\"q", "u32")]
            .into_iter()
            .map(|(name, key)| (name.to_string(), table(key)))
            .collect();
        let mut record = SchemaRecord::empty();
        record.version = 3;
        record.applied.push(AppliedStep {
            version: 2,
            name: "two".to_string(),
            checksum: "c".to_string(),
        });
        record.tables = declared.clone();
        let written = String::from_utf8(record.encode()).unwrap();
        let tables = serde_json::to_string(&declared).unwrap();
        let cases: Vec<(String, bool)> = vec![
            (written.clone(), true),
            (written.replace("u32", "u16"), false),
            (written.replace(r#""version":3"#, r#""version":4"#), true),
            (written.replace(r#""format":1"#, r#""format":3"#), true),
            (written.replace(r#""format":1"#, r#""format":"x""#), false),
            (written.replace(r#""format":1,"#, ""), false),
            (written.replace(r#""version":3,"#, ""), true),
            (
                format!(r#"{{"format":1,"tables":null,"tables":{tables}}}"#),
                false,
            ),
            (
                format!(r#"{{"format":1,"x":"a,\"tables\":{tables}}}"#),
                false,
            ),
            (
                format!(r#"{{"format":1,"tables":{tables},"in_progress":null}}"#),
                false,
            ),
            (format!(r#"{{"format":1,"tables":{tables}}}"#), true),
            (format!(r#"{{"tables":{tables}}}"#), false),
            (format!(r#"{{"format":1}}"tables":{tables}}}"#), false),
            (written.replace(r#""b\"q""#, r#""c""#), false),
        ];
        let mut declared_json = Vec::new();
        write_tables_json(&mut declared_json, &declared);
        for (bytes, recognised) in cases {
            let parsed = SchemaRecord::parse(bytes.as_bytes());
            let declared_parse = SchemaRecord::parse_declared(bytes.as_bytes(), &declared_json);
            if let Ok((record, by_bytes)) = &declared_parse {
                assert_eq!(*by_bytes, recognised, "{bytes}");
                // Recognised: the tables are the declared ones, left to the caller to build.
                assert!(!by_bytes || record.tables.is_empty(), "{bytes}");
            }
            let with_tables = declared_parse.map(|(mut record, by_bytes)| {
                if by_bytes {
                    record.tables = declared.clone();
                }
                record
            });
            assert_eq!(with_tables, parsed, "{bytes}");
        }
        // The format check comes first, as in `parse`.
        let newer = written.replace(r#""format":1"#, r#""format":3"#);
        assert_eq!(
            SchemaRecord::parse_declared(newer.as_bytes(), &declared_json),
            Err(RecordProblem::Newer(3))
        );
    }

    /// The tables written directly are `serde_json`'s bytes, for every field present or
    /// absent and every character that needs escaping (else `parse_declared` would never
    /// recognise a record).
    #[test]
    fn tables_are_written_as_serde_json_writes_them() {
        let every_char: String = (0u8..0x80)
            .map(char::from)
            .chain("é✓\u{1F600}".chars())
            .collect();
        let plain = TableRecord {
            dupsort: true,
            integer_key: false,
            key: "(str, u64)".to_string(),
            value: "bincode<Vec<u8>>".to_string(),
            shape: None,
            value_version: None,
            partial_shape: None,
            index: None,
            history_of: None,
        };
        let full = TableRecord {
            dupsort: false,
            integer_key: true,
            key: every_char.clone(),
            value: "zstd(bincode)<\"q\">".to_string(),
            shape: Some("[\"U64\",{\"a\\\\b\":[1,2]}]".to_string()),
            value_version: Some(4_000_000_000),
            partial_shape: Some("{\"unknown\":null}\n".to_string()),
            index: Some(IndexRecord {
                source: "src\t".to_string(),
                unique: true,
            }),
            history_of: Some("Ledger".to_string()),
        };
        let only_history = TableRecord {
            history_of: Some(String::new()),
            value_version: Some(0),
            ..plain.clone()
        };
        let cases: [Vec<(&str, &TableRecord)>; 4] = [
            vec![],
            vec![("a", &plain)],
            vec![
                (every_char.as_str(), &full),
                ("b", &plain),
                ("", &only_history),
            ],
            vec![
                ("t00000", &plain),
                ("t00001", &full),
                ("t00002", &only_history),
            ],
        ];
        for tables in cases {
            let tables: BTreeMap<String, TableRecord> = tables
                .into_iter()
                .map(|(name, table)| (name.to_string(), table.clone()))
                .collect();
            let mut written = Vec::new();
            write_tables_json(&mut written, &tables);
            assert_eq!(
                String::from_utf8(written).unwrap(),
                serde_json::to_string(&tables).unwrap()
            );
        }
    }

    /// The declared tables' JSON written from the declarations is the JSON of their traced
    /// records by name: for every optional field present and absent, names out of order, and
    /// characters that need escaping (else `parse_declared` would never recognise a record).
    #[test]
    fn declared_json_is_the_traced_records_json() {
        use crate::schema::Descriptor;
        use crate::table::{IndexInfo, TableFlags, TableInfo};
        let table = |name: &'static str| TableInfo {
            name,
            flags: TableFlags::NONE,
            key: Descriptor::Unsigned(64),
            value: Descriptor::Bincode,
            value_type: "Row",
            value_version: None,
            rust_name: "",
            value_trace: || ValueTrace::Opaque,
            debug_key: crate::__private::no_debug_key,
            index: None,
            history: false,
            history_of: None,
        };
        let tables = [
            table("rows"),
            TableInfo {
                flags: TableFlags {
                    dupsort: true,
                    integer_key: false,
                },
                key: Descriptor::Tuple(&[Descriptor::Str, Descriptor::NativeInteger(32)]),
                value: Descriptor::Zstd(&Descriptor::Custom("my \"codec\"\t")),
                value_type: "Vec<\"q\">",
                value_version: Some(7),
                ..table("by\nname")
            },
            TableInfo {
                flags: TableFlags {
                    dupsort: false,
                    integer_key: true,
                },
                key: Descriptor::NativeInteger(64),
                index: Some(IndexInfo {
                    source: "rows",
                    unique: true,
                    entries: |_, _, _| Ok(()),
                    keys: |_, _, _| false,
                }),
                ..table("Bz\u{e9}")
            },
            TableInfo {
                history_of: Some("rows"),
                ..table("a")
            },
            table("rows2"),
        ];
        let traces = [
            ValueTrace::Complete("[\"U64\",{\"a\\\\b\":[1,2]}]".to_string()),
            ValueTrace::Partial {
                structure: "{\"unknown\":null}\n".to_string(),
                problem: "p".to_string(),
            },
            ValueTrace::Opaque,
            ValueTrace::Complete("[]".to_string()),
            ValueTrace::Opaque,
        ];
        for n in 0..=tables.len() {
            let (tables, traces) = (&tables[..n], &traces[..n]);
            let records: BTreeMap<String, TableRecord> = tables
                .iter()
                .zip(traces)
                .map(|(info, trace)| (info.name.to_string(), TableRecord::traced(info, trace)))
                .collect();
            let (mut declared, mut recorded) = (Vec::new(), Vec::new());
            let mut by_name: Vec<usize> = (0..n).collect();
            by_name.sort_by_key(|&at| tables[at].name);
            write_declared_json(&mut declared, tables, traces, &by_name);
            write_tables_json(&mut recorded, &records);
            assert_eq!(
                String::from_utf8(declared).unwrap(),
                String::from_utf8(recorded).unwrap()
            );
        }
    }

    /// `plain` finds every byte a JSON string escapes, wherever it stands, and no other.
    #[test]
    fn plain_is_no_byte_to_escape() {
        for len in 1..=17 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = byte;
                    let escaped = byte < 0x20 || byte == b'"' || byte == b'\\';
                    assert_eq!(plain(&bytes), !escaped, "{byte:#x} at {at} of {len}");
                }
            }
        }
        assert!(plain(b""));
        assert!(plain("é✓\u{1F600} ~\x7f".as_bytes()));
    }

    #[test]
    fn damaged_records_are_damaged_and_good_ones_parse() {
        for bytes in [
            &br#"{"format": 1, "tables": "#[..],
            br#"{"format": 1}"#,
            br#"{"format": "one", "tables": {}}"#,
            b"\xff\x00",
        ] {
            assert!(
                matches!(SchemaRecord::parse(bytes), Err(RecordProblem::Damaged(_))),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        let mut record = SchemaRecord::empty();
        record.version = 4;
        assert_eq!(SchemaRecord::parse(&record.encode()), Ok(record));
    }
}
