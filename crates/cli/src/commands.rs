//! The subcommands but `load` (`load.rs`): each opens the database read-only (but
//! `train-dict`, which adds a zstd dictionary, and `copy`, which writes its destination), reads
//! the schema record, and prints through [`Out`].

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value as Json, json};
use tabula_core::Options;
use tabula_core::codec::KeyBuf;
use tabula_core::untyped::KeyShape;
use tabula_core::untyped::{UntypedDb, UntypedTable, UntypedTx};

use crate::header::DumpHeader;
use crate::json::json_bytes;
use crate::out::Out;
use crate::{DumpFormat, Failure, Outcome, hex};

/// Entries above which `check` shows a progress bar (when stderr is a terminal).
const PROGRESS_THRESHOLD: u64 = 10_000;

pub(crate) fn open(path: &Path) -> Result<UntypedDb, Failure> {
    if !path.exists() {
        return Err(Failure::Problem(format!(
            "`{}` does not exist; give the database directory (or its `mdbx.dat` file)",
            path.display()
        )));
    }
    Ok(UntypedDb::open(path)?)
}

/// A table with what is known about its encoding (from the schema record, through core's
/// schema-less API).
pub(crate) struct View {
    pub name: String,
    pub found: UntypedTable,
    /// The file has Tabula's meta table but no schema record in it: damage (a lost record key
    /// or value), so a table's missing key shape is not the user's mistake.
    pub record_lost: bool,
}

impl View {
    pub fn new(found: UntypedTable) -> View {
        View {
            name: found.name.clone(),
            found,
            record_lost: false,
        }
    }

    /// A refusal for want of the key shape: a usage error, or damage when the schema record
    /// that would hold the shape is lost.
    fn no_shape(&self, usage: String) -> Failure {
        if self.record_lost {
            Failure::Problem(format!(
                "{usage}; table `{}` has no recorded key shape because Tabula's meta table                  `{}` holds no schema record: the file is damaged; run `tabula check`",
                self.name,
                tabula_core::startup::META_TABLE
            ))
        } else {
            Failure::Usage(usage)
        }
    }

    /// What a key of this table looks like, for messages.
    fn key_help(&self) -> String {
        match self.found.key_shape() {
            Some(shape) => format!(
                "table `{}` has keys of shape `{shape}`: give one as JSON, like {}",
                self.name,
                shape.json_example()
            ),
            None => format!(
                "table `{}` has no recorded key shape: give the key as a hex string, like \"00ff\"",
                self.name
            ),
        }
    }

    /// `text` as JSON. A bare word that is not JSON (`acct0007`) is taken as the string it
    /// spells, so a string key needs no quotes; a text that begins like JSON (`[`, `{`, `"`)
    /// and does not parse is refused with the parser's reason.
    fn parse_json(
        &self,
        what: &str,
        text: &str,
        help: &dyn Fn() -> String,
    ) -> Result<Json, Failure> {
        serde_json::from_str(text).or_else(|e| {
            if text.trim_start().starts_with(['[', '{', '"']) || text.trim().is_empty() {
                Err(Failure::Usage(format!(
                    "the {what} `{text}` is not JSON ({e}); {}",
                    help()
                )))
            } else {
                Ok(Json::String(text.to_string()))
            }
        })
    }

    /// [`parse_json`](Self::parse_json), then `fit`; a bare JSON scalar that does not fit
    /// (`5` or `true` where a string is wanted) is tried as the string it spells.
    fn parse_fitting<R>(
        &self,
        what: &str,
        text: &str,
        help: &dyn Fn() -> String,
        fit: impl Fn(&Json) -> Result<R, String>,
    ) -> Result<R, Failure> {
        let json = self.parse_json(what, text, help)?;
        fit(&json)
            .or_else(|e| match json {
                Json::Number(_) | Json::Bool(_) | Json::Null => {
                    fit(&Json::String(text.to_string())).map_err(|_| e)
                }
                _ => Err(e),
            })
            .map_err(|e| {
                Failure::Usage(format!("the {what} `{text}` does not fit: {e}; {}", help()))
            })
    }

    /// The stored bytes of the whole key `text` (JSON, or a bare word for a string).
    pub fn parse_key(&self, text: &str) -> Result<Vec<u8>, Failure> {
        let help = || self.key_help();
        self.parse_fitting("key", text, &help, |json| match self.found.key_shape() {
            Some(shape) => shape
                .key_from_json(json)
                .and_then(|k| shape.encode(&k))
                .map_err(|e| e.to_string()),
            None => json_bytes(json).ok_or_else(|| "not a hex string".to_string()),
        })
        .map_err(|e| match e {
            Failure::Usage(usage) if self.found.key_shape().is_none() => self.no_shape(usage),
            other => other,
        })
    }

    /// The bytes every key beginning with the parts `text` gives starts with: the leading parts
    /// of a tuple or struct key, each encoded as the part it is in a whole key.
    fn parse_prefix(&self, text: &str) -> Result<Vec<u8>, Failure> {
        let parts: Vec<(Option<&str>, &KeyShape)> = match self.found.key_shape() {
            Some(KeyShape::Tuple(parts)) => parts.iter().map(|p| (None, p)).collect(),
            Some(KeyShape::Struct { fields, .. }) => {
                fields.iter().map(|(n, p)| (Some(n.as_str()), p)).collect()
            }
            Some(shape) => {
                return Err(Failure::Usage(format!(
                    "`--prefix` takes the leading parts of a composite key, and table `{}` has \
                     keys of shape `{shape}`, which have one part: use `--from` and `--to`, or \
                     `get`",
                    self.name
                )));
            }
            None => {
                return Err(self.no_shape(format!(
                    "table `{}` has no recorded key shape, so its keys have no parts: use \
                     `--from` and `--to` with hex keys",
                    self.name
                )));
            }
        };
        let shape = self.found.key_shape().expect("a composite shape");
        let help = || {
            let first = parts[0].1.json_example();
            match parts[0].0 {
                Some(field) => format!(
                    "give the first fields of `{shape}` as an object or an array, like \
                     {{\"{field}\": {first}}} or [{first}]"
                ),
                None => format!("give the first parts of `{shape}` as an array, like [{first}]"),
            }
        };
        let json = self.parse_json("prefix", text, &help)?;
        let given: Vec<&Json> = match &json {
            Json::Array(items) => items.iter().collect(),
            Json::Object(map) => {
                // The leading fields, in declaration order, with none left out before the last.
                let mut taken = Vec::new();
                for (name, _) in &parts {
                    match name.and_then(|n| map.get(n)) {
                        Some(v) => taken.push(v),
                        None => break,
                    }
                }
                if taken.len() != map.len() {
                    return Err(Failure::Usage(format!(
                        "the prefix `{text}` is not the leading fields of `{shape}` (each field \
                         before the last one given must be given too); {}",
                        help()
                    )));
                }
                taken
            }
            scalar => vec![scalar],
        };
        if given.is_empty() || given.len() >= parts.len() {
            return Err(Failure::Usage(format!(
                "the prefix `{text}` gives {} of the {} parts of `{shape}`: a prefix gives from 1 \
                 to {} (for a whole key use `get`, or `--from` and `--to`); {}",
                given.len(),
                parts.len(),
                parts.len() - 1,
                help()
            )));
        }
        let mut bytes = KeyBuf::new();
        for ((_, part), json) in parts.iter().zip(given) {
            part.key_from_json(json)
                .and_then(|k| part.encode_part(&k, &mut bytes, false))
                .map_err(|e| {
                    Failure::Usage(format!("the prefix `{text}` does not fit: {e}; {}", help()))
                })?;
        }
        Ok(bytes.as_slice().to_vec())
    }

    /// Whether the table's values are `(subkey, value)` pairs (a `dupsort` table declared with
    /// a `subkey`).
    pub fn has_subkey(&self) -> bool {
        self.subkey_shape().is_some()
    }

    fn subkey_shape(&self) -> Option<&KeyShape> {
        self.found.value_shape().and_then(|v| v.subkey_shape())
    }

    /// The bytes every value with the subkey `text` (JSON) starts with.
    fn parse_subkey(&self, text: &str) -> Result<Vec<u8>, Failure> {
        let Some(shape) = self.subkey_shape() else {
            let why = if self.found.dupsort {
                format!(
                    "its values (`{}`) have no subkey",
                    self.found
                        .record
                        .as_ref()
                        .map_or("not recorded", |r| r.value.as_str())
                )
            } else {
                "it is not a dupsort table: each key has one value".to_string()
            };
            let usage = format!(
                "table `{}` takes no SUBKEY: {why}; give the key alone",
                self.name
            );
            return Err(if self.found.dupsort {
                self.no_shape(usage)
            } else {
                Failure::Usage(usage)
            });
        };
        let help = || {
            format!(
                "table `{}` has subkeys of shape `{shape}`: give one as JSON, like {}",
                self.name,
                shape.json_example()
            )
        };
        self.parse_fitting("subkey", text, &help, |json| {
            let mut bytes = KeyBuf::new();
            shape
                .key_from_json(json)
                .and_then(|k| shape.encode_part(&k, &mut bytes, false))
                .map_err(|e| e.to_string())?;
            Ok(bytes.as_slice().to_vec())
        })
    }

    pub fn key_json(&self, key: &[u8]) -> Result<Json, String> {
        match self.found.key_shape() {
            Some(shape) => shape
                .decode(key)
                .map(|k| shape.key_to_json(&k))
                .map_err(|e| e.to_string()),
            None => Ok(Json::String(hex(key))),
        }
    }

    pub fn value_json(&self, value: &[u8]) -> Result<Json, String> {
        if self.found.is_meta() {
            return serde_json::from_slice(value).or_else(|_| Ok(Json::String(hex(value))));
        }
        match self.found.value_shape() {
            Some(shape) => shape
                .decode(value)
                .map(|v| v.to_json())
                .map_err(|e| e.to_string()),
            None => Ok(Json::String(hex(value))),
        }
    }

    /// The value's fields of an entry: `"value"`, or `"subkey"` and `"value"` for a table with
    /// subkeys; an undecodable value as `"value_hex"` with the error.
    fn value_fields(&self, value: &[u8], m: &mut serde_json::Map<String, Json>) -> Option<String> {
        match self.value_json(value) {
            Ok(Json::Array(mut pair)) if self.has_subkey() && pair.len() == 2 => {
                let v = pair.pop().expect("two");
                m.insert("subkey".into(), pair.pop().expect("one"));
                m.insert("value".into(), v);
                None
            }
            Ok(v) => {
                m.insert("value".into(), v);
                None
            }
            Err(e) => {
                m.insert("value_hex".into(), Json::String(hex(value)));
                Some(format!("value: {e}"))
            }
        }
    }

    /// `{"key": .., "value": ..}` (with `"subkey"` for a table with subkeys); undecodable parts
    /// as `key_hex` / `value_hex` with an `error`.
    pub fn entry(&self, key: &[u8], value: &[u8]) -> Json {
        let mut m = serde_json::Map::new();
        let mut errors = Vec::new();
        match self.key_json(key) {
            Ok(k) => {
                m.insert("key".into(), k);
            }
            Err(e) => {
                m.insert("key_hex".into(), Json::String(hex(key)));
                errors.push(format!("key: {e}"));
            }
        }
        errors.extend(self.value_fields(value, &mut m));
        if !errors.is_empty() {
            m.insert("error".into(), Json::String(errors.join("; ")));
        }
        Json::Object(m)
    }

    /// One value of a key for `get`: its fields as in [`entry`](Self::entry), without the key.
    fn value_entry(&self, value: &[u8]) -> Json {
        let mut m = serde_json::Map::new();
        if let Some(e) = self.value_fields(value, &mut m) {
            m.insert("error".into(), Json::String(e));
        }
        Json::Object(m)
    }
}

/// Opens the table `name`, or a usage error listing the tables. A table the schema record
/// names that the file's table catalog (libmdbx's main tree) does not list is damage, not a
/// typing mistake: a problem (exit 1) that says so.
pub(crate) fn view(
    snap: &mut UntypedTx<'_>,
    db: &UntypedDb,
    path: &Path,
    name: &str,
) -> Result<View, Failure> {
    match snap.table(name)? {
        Some(found) => {
            let record_lost = db.record().is_none()
                && !found.is_meta()
                && matches!(snap.table(tabula_core::startup::META_TABLE), Ok(Some(_)));
            Ok(View {
                record_lost,
                ..View::new(found)
            })
        }
        None if db.record().is_some_and(|r| r.tables.contains_key(name)) => {
            Err(Failure::Problem(format!(
                "table `{name}` is in the schema record of `{}` but not in its table catalog \
                 (libmdbx's main tree): the file is damaged; run `tabula check`",
                path.display()
            )))
        }
        None => {
            let names: Vec<String> = snap
                .table_names()?
                .into_iter()
                .filter(|n| n != tabula_core::startup::META_TABLE)
                .collect();
            Err(Failure::Usage(format!(
                "no table `{name}` in `{}`; its tables: {}",
                path.display(),
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                }
            )))
        }
    }
}

/// How `get` prints: for people, JSON (pretty), or that JSON on one line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Line,
}

/// `v` as `format` asks for a JSON document: on one line for [`Format::Line`], else pretty.
fn print_document(out: &mut Out, v: &Json, format: Format) -> Outcome {
    if format == Format::Line {
        serde_json::to_writer(&mut *out, v).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(());
    }
    print_json(out, v)
}

pub(crate) fn print_json(out: &mut Out, v: &Json) -> Outcome {
    serde_json::to_writer_pretty(&mut *out, v).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// Bytes with a binary unit, e.g. `16.0 MiB`.
pub(crate) fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Options to open the existing database at `path` for writing without changing its geometry:
/// libmdbx applies the geometry an open asks for, and `Options::new()` asks for Tabula's
/// defaults (a 1 TiB upper bound, 16 MiB growth), not the application's.
pub(crate) fn keeping_geometry(path: &Path) -> Result<Options, Failure> {
    let d = open(path)?.details()?;
    let bytes = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Options::new()
        .max_size(bytes(d.upper))
        .growth_step(bytes(d.growth)))
}

/// Reader slots held by other processes: this command's own read transaction is not counted.
fn other_readers(db: &UntypedDb) -> Result<usize, Failure> {
    let me = std::process::id();
    Ok(db
        .readers()?
        .iter()
        .filter(|r| u32::try_from(r.pid).ok() != Some(me))
        .count())
}

/// `tabula info`.
pub fn info(out: &mut Out, path: &Path, as_json: bool) -> Outcome {
    let db = open(path)?;
    let d = db.details()?;
    let pages = db.read()?.page_use()?;
    let readers = other_readers(&db)?;
    let record = db.record();
    let page = u64::from(pages.page_size);
    let unwritten = pages.file_pages.saturating_sub(pages.allocated_pages);
    let free = pages.free_pages + unwritten;
    let applied: Vec<Json> = record
        .as_ref()
        .map(|r| {
            r.applied
                .iter()
                .map(|s| json!({"version": s.version, "name": s.name, "checksum": s.checksum}))
                .collect()
        })
        .unwrap_or_default();
    if as_json {
        return print_json(
            out,
            &json!({
                "path": path.display().to_string(),
                "file_size": d.file_size,
                "page_size": d.page_size,
                "pages": {
                    "file": pages.file_pages,
                    "used": pages.used_pages(),
                    "free": free,
                    "free_listed": pages.free_pages,
                    "never_written": unwritten,
                    "reclaimable": pages.reclaimable_pages,
                },
                "used_bytes": pages.used_bytes(),
                "geometry": {
                    "lower": d.lower, "now": d.current, "upper": d.upper,
                    "growth": d.growth, "shrink": d.shrink,
                },
                "last_txn": d.last_txn,
                "readers": {"used": readers, "max": d.max_readers},
                "schema_version": record.as_ref().map(|r| r.version),
                "record_format": record.as_ref().map(|r| r.format),
                "applied": applied,
                "libmdbx": tabula_core::libmdbx_version(),
            }),
        );
    }
    writeln!(out, "path             {}", path.display())?;
    writeln!(
        out,
        "file size        {} ({} bytes, {} pages of {} bytes)",
        size(d.file_size),
        d.file_size,
        pages.file_pages,
        pages.page_size
    )?;
    writeln!(
        out,
        "used             {} ({} pages; what `copy --compact` keeps)",
        size(pages.used_bytes()),
        pages.used_pages()
    )?;
    writeln!(
        out,
        "free             {} ({free} pages: {} freed by writes, for writers to reuse; {unwritten} \
         never written)",
        size(free * page),
        pages.free_pages,
    )?;
    writeln!(
        out,
        "geometry         lower {}, now {}, upper {}, growth {}, shrink {}",
        size(d.lower),
        size(d.current),
        size(d.upper),
        size(d.growth),
        size(d.shrink)
    )?;
    writeln!(out, "last transaction {}", d.last_txn)?;
    writeln!(
        out,
        "readers          {readers} in use by other processes, of {} slots",
        d.max_readers
    )?;
    match &record {
        Some(r) => {
            writeln!(
                out,
                "schema version   {} (record format {})",
                r.version, r.format
            )?;
            if r.applied.is_empty() {
                writeln!(out, "migrations       none applied")?;
            } else {
                writeln!(out, "migrations")?;
                for s in &r.applied {
                    writeln!(out, "  v{:<5} {}  ({})", s.version, s.name, s.checksum)?;
                }
            }
        }
        None => writeln!(out, "schema record    none (not written by Tabula)")?,
    }
    Ok(())
}

/// `tabula tables`.
pub fn tables(out: &mut Out, path: &Path, all: bool, as_json: bool) -> Outcome {
    let db = open(path)?;
    let page_size = u64::from(db.details()?.page_size);
    let mut snap = db.read()?;
    let mut rows = Vec::new();
    let (mut entries, mut branch, mut leaf, mut overflow) = (0u64, 0u64, 0u64, 0u64);
    for name in snap.table_names()? {
        let Some(found) = snap.table(&name)? else {
            continue;
        };
        let own = found.is_meta() || name == tabula_core::record::ZSTD_DICTIONARY_TABLE;
        if own && !all {
            continue;
        }
        let st = snap.stat(&found)?;
        let rec = found.record.as_ref();
        let pages = st.branch_pages + st.leaf_pages + st.overflow_pages;
        entries += st.entries;
        branch += st.branch_pages;
        leaf += st.leaf_pages;
        overflow += st.overflow_pages;
        rows.push(json!({
            "name": name,
            "dbi": found.handle(),
            "flags": found.flags,
            "entries": st.entries,
            "depth": st.depth,
            "pages": {"branch": st.branch_pages, "leaf": st.leaf_pages, "overflow": st.overflow_pages},
            "bytes": pages * page_size,
            "key": rec.map(|r| r.key.clone()),
            "value": rec.map(|r| r.value.clone()),
            "index": rec.and_then(|r| r.index.as_ref()).map(|i| json!({
                "source": i.source, "unique": i.unique,
            })),
        }));
    }
    // An index is listed under its table, flagged with what it indexes.
    let index_of = |r: &Json| r["index"]["source"].as_str().map(str::to_owned);
    let (indexes, mut ordered): (Vec<Json>, Vec<Json>) =
        rows.into_iter().partition(|r| index_of(r).is_some());
    let mut orphans = Vec::new();
    for index in indexes {
        let source = index_of(&index);
        match ordered
            .iter()
            .rposition(|r| r["name"].as_str() == source.as_deref() || index_of(r) == source)
        {
            Some(at) => ordered.insert(at + 1, index),
            None => orphans.push(index),
        }
    }
    ordered.extend(orphans);
    let rows = ordered;
    let total_pages = branch + leaf + overflow;
    if as_json {
        // One object per table, as ever; scripts add up what they need.
        return print_json(out, &Json::Array(rows));
    }
    let s = |v: &Json| match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        other => other.to_string(),
    };
    let b_l_o = |b: &Json, l: &Json, o: &Json| format!("{b}/{l}/{o}");
    let mut lines = vec![
        [
            "NAME",
            "DBI",
            "FLAGS",
            "ENTRIES",
            "DEPTH",
            "PAGES b/l/o",
            "BYTES",
            "KEY",
            "VALUE",
        ]
        .map(String::from),
    ];
    for r in &rows {
        let mut flags: Vec<String> = r["flags"]
            .as_array()
            .map(|a| a.iter().map(s).collect())
            .unwrap_or_default();
        if let Some(source) = r["index"]["source"].as_str() {
            flags.push(format!("index of {source}"));
            if r["index"]["unique"] == json!(true) {
                flags.push("unique".into());
            }
        }
        lines.push([
            s(&r["name"]),
            s(&r["dbi"]),
            if flags.is_empty() {
                "-".into()
            } else {
                flags.join(",")
            },
            s(&r["entries"]),
            s(&r["depth"]),
            b_l_o(
                &r["pages"]["branch"],
                &r["pages"]["leaf"],
                &r["pages"]["overflow"],
            ),
            size(r["bytes"].as_u64().unwrap_or(0)),
            s(&r["key"]),
            s(&r["value"]),
        ]);
    }
    lines.push([
        format!("total ({} tables)", rows.len()),
        String::new(),
        String::new(),
        entries.to_string(),
        String::new(),
        format!("{branch}/{leaf}/{overflow}"),
        size(total_pages * page_size),
        String::new(),
        String::new(),
    ]);
    use Align::{Left, Right};
    print_table(
        out,
        &lines,
        [Left, Right, Left, Right, Right, Right, Right, Left, Left],
        Some(lines.len() - 1),
    )?;
    writeln!(
        out,
        "PAGES b/l/o: branch pages (the tree's inner nodes) / leaf pages (the entries) / overflow \
         pages (values too large for a leaf page)."
    )?;
    writeln!(
        out,
        "BYTES: those pages × the page size ({page_size}). DBI: the libmdbx table handle in this \
         process."
    )?;
    Ok(())
}

/// How a column's cells line up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// Prints `lines` (the first is the header) in columns two spaces apart; `rule_before` puts a
/// line of dashes before that line (a totals row).
fn print_table<const N: usize>(
    out: &mut Out,
    lines: &[[String; N]],
    align: [Align; N],
    rule_before: Option<usize>,
) -> Outcome {
    let mut widths = [0usize; N];
    for l in lines {
        for (w, cell) in widths.iter_mut().zip(l) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for (at, l) in lines.iter().enumerate() {
        if rule_before == Some(at) {
            let width = widths.iter().sum::<usize>() + 2 * (N - 1);
            writeln!(out, "{}", "-".repeat(width))?;
        }
        let mut text = String::new();
        for (i, ((w, cell), a)) in widths.iter().zip(l).zip(align).enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            match a {
                Align::Left => text.push_str(&format!("{cell:<w$}")),
                Align::Right => text.push_str(&format!("{cell:>w$}")),
            }
        }
        writeln!(out, "{}", text.trim_end())?;
    }
    Ok(())
}

/// `tabula get`.
pub fn get(
    out: &mut Out,
    path: &Path,
    table: &str,
    key: &str,
    (subkey, as_of): (Option<&str>, Option<u64>),
    format: Format,
) -> Outcome {
    let as_json = format != Format::Text;
    let db = open(path)?;
    let mut snap = db.read()?;
    let v = view(&mut snap, &db, path, table)?;
    let stored = v.parse_key(key)?;
    if let Some(version) = as_of {
        let history = history_of(&mut snap, &v, table)?;
        if v.found.dupsort {
            let mut values = snap.dups_as_of(&v.found, &history, &stored, version)?;
            if let Some(text) = subkey {
                let prefix = v.parse_subkey(text)?;
                values.retain(|value| value.starts_with(&prefix));
            }
            if values.is_empty() {
                return Err(Failure::Problem(format!(
                    "key {key}{} had no value in table `{table}` at the end of version \
                     {version}",
                    subkey.map_or(String::new(), |s| format!(" with subkey {s}"))
                )));
            }
            let key_json = v.key_json(&stored).unwrap_or(Json::String(hex(&stored)));
            let at = format!(" at the end of version {version}");
            return print_values(out, &v, (key_json, values), (table, subkey, &at), format);
        }
        let Some(value) = snap.get_as_of(&v.found, &history, &stored, version)? else {
            return Err(Failure::Problem(format!(
                "key {key} had no value in table `{table}` at the end of version {version}"
            )));
        };
        let key_json = v.key_json(&stored).unwrap_or(Json::String(hex(&stored)));
        let value = v.value_entry(&value);
        if as_json {
            let mut m = serde_json::Map::new();
            m.insert("key".into(), key_json);
            m.insert("as_of".into(), json!(version));
            if let Json::Object(fields) = value {
                m.extend(fields);
            }
            return print_document(out, &Json::Object(m), format);
        }
        return match &value {
            Json::Object(m) if !m.contains_key("error") => print_json(out, &m["value"]),
            _ => print_json(out, &value),
        };
    }
    let values = match subkey {
        Some(text) => {
            let prefix = v.parse_subkey(text)?;
            snap.get_raw_prefixed(&v.found, &stored, &prefix)?
        }
        None => snap.get_raw(&v.found, &stored)?,
    };
    if values.is_empty() {
        let absent = snap.get_raw(&v.found, &stored)?.is_empty();
        return Err(Failure::Problem(match subkey {
            Some(s) if !absent => format!("key {key} has no subkey {s} in table `{table}`"),
            _ => format!("key {key} not found in table `{table}`"),
        }));
    }
    let key_json = v.key_json(&stored).unwrap_or(Json::String(hex(&stored)));
    // A secondary index: its values are primary keys; the rows they name come with them.
    let index_source = v.found.record.as_ref().and_then(|r| r.index.as_ref());
    if let Some(index) = index_source {
        let source = view(&mut snap, &db, path, &index.source)?;
        let mut rows = Vec::new();
        for primary in &values {
            // An `integer_key` table stores its keys native-endian; the index, in key order.
            let mut row_key = primary.clone();
            if source.found.integer_key && cfg!(target_endian = "little") {
                row_key.reverse();
            }
            let pk = source
                .key_json(&row_key)
                .unwrap_or(Json::String(hex(&row_key)));
            let row = match snap.get_raw(&source.found, &row_key)?.first() {
                Some(value) => match source.value_entry(value) {
                    Json::Object(mut m) if !m.contains_key("error") => {
                        m.remove("value").unwrap_or(Json::Null)
                    }
                    other => other,
                },
                None => json!({"error": format!(
                    "no row under this key in `{}`: the index is out of step (run `tabula check`)",
                    index.source
                )}),
            };
            rows.push(json!({"key": pk, "value": row}));
        }
        if as_json {
            return print_document(
                out,
                &json!({"key": key_json, "index_of": index.source, "rows": rows}),
                format,
            );
        }
        writeln!(
            out,
            "{} row{} of index key {} in `{table}` (an index of `{}`):",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" },
            key_json,
            index.source
        )?;
        for row in &rows {
            writeln!(out, "  {} -> {}", row["key"], row["value"])?;
        }
        return Ok(());
    }
    if !v.found.dupsort {
        let value = v.value_entry(&values[0]);
        if as_json {
            let mut m = serde_json::Map::new();
            m.insert("key".into(), key_json);
            if let Json::Object(fields) = value {
                m.extend(fields);
            }
            return print_document(out, &Json::Object(m), format);
        }
        return match &value {
            Json::Object(m) if m.contains_key("error") => print_json(out, &value),
            Json::Object(m) => print_json(out, &m["value"]),
            _ => print_json(out, &value),
        };
    }
    print_values(out, &v, (key_json, values), (table, subkey, ""), format)
}

/// Prints the values `values` of the key `key_json` of the `dupsort` table `v` shows (named
/// `table`; `subkey`: only those with the subkey given; `at`: when, said after the table).
fn print_values(
    out: &mut Out,
    v: &View,
    (key_json, values): (Json, Vec<Vec<u8>>),
    (table, subkey, at): (&str, Option<&str>, &str),
    format: Format,
) -> Outcome {
    let as_json = format != Format::Text;
    let entries: Vec<Json> = values.iter().map(|val| v.value_entry(val)).collect();
    if as_json {
        // Without subkeys each value as it decodes; with subkeys `{"subkey", "value"}` objects.
        let values: Vec<Json> = entries
            .into_iter()
            .map(|e| match e {
                Json::Object(mut m) if !v.has_subkey() && !m.contains_key("error") => {
                    m.remove("value").unwrap_or(Json::Null)
                }
                other => other,
            })
            .collect();
        return print_document(out, &json!({"key": key_json, "values": values}), format);
    }
    writeln!(
        out,
        "{} value{} of key {} in `{table}`{at}{}:",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" },
        key_json,
        if subkey.is_some() {
            " with that subkey"
        } else {
            ""
        }
    )?;
    for e in &entries {
        let field = |name: &str| e.get(name).map(Json::to_string);
        match (field("subkey"), field("value"), field("error")) {
            (_, _, Some(error)) => writeln!(
                out,
                "  value_hex {}  error {error}",
                field("value_hex").unwrap_or_default()
            )?,
            (Some(s), Some(value), None) => writeln!(out, "  subkey {s}  value {value}")?,
            (None, Some(value), None) => writeln!(out, "  value {value}")?,
            _ => writeln!(out, "  {e}")?,
        }
    }
    Ok(())
}

/// Options of `tabula dump`.
pub struct DumpArgs<'a> {
    /// First key, JSON.
    pub from: Option<&'a str>,
    /// Last key, JSON.
    pub to: Option<&'a str>,
    /// The leading parts of a composite key, JSON.
    pub prefix: Option<&'a str>,
    /// At most this many entries.
    pub limit: Option<u64>,
    /// Last to first.
    pub reverse: bool,
    /// Output format.
    pub format: DumpFormat,
}

/// `tabula dump`.
pub fn dump(out: &mut Out, path: &Path, table: &str, args: DumpArgs<'_>) -> Outcome {
    let db = open(path)?;
    let mut snap = db.read()?;
    let v = view(&mut snap, &db, path, table)?;
    let mut from = args.from.map(|k| v.parse_key(k)).transpose()?;
    let mut to = args.to.map(|k| v.parse_key(k)).transpose()?;
    let prefix = args.prefix.map(|p| v.parse_prefix(p)).transpose()?;
    if let Some(prefix) = &prefix {
        // Composite keys use the byte order (never `integer_key`): the prefix's keys lie from
        // the prefix itself up to the first key that no longer begins with it.
        if from.as_ref().is_none_or(|f| f < prefix) {
            from = Some(prefix.clone());
        }
        if let Some(after) = successor(prefix)
            && to.as_ref().is_none_or(|t| *t > after)
        {
            to = Some(after);
        }
    }
    let header = match args.format {
        DumpFormat::Json => None,
        DumpFormat::Jsonl => Some("jsonl"),
        DumpFormat::Hex => Some("hex"),
    };
    if let Some(format) = header {
        serde_json::to_writer(&mut *out, &DumpHeader::of(&db, &v.name, &v.found, format))
            .map_err(std::io::Error::from)?;
        writeln!(out)?;
    }
    let mut count = 0u64;
    let mut first = true;
    let mut io_error = None;
    if args.format == DumpFormat::Json {
        out.write_all(b"[")?;
    }
    snap.walk(
        &v.found,
        from.as_deref(),
        to.as_deref(),
        args.reverse,
        |key, value| {
            if let Some(prefix) = &prefix
                && !key.starts_with(prefix)
            {
                // Only `to` itself (the prefix's successor) can be met outside the prefix.
                return true;
            }
            if args.limit.is_some_and(|l| count >= l) {
                return false;
            }
            count += 1;
            let r = match args.format {
                DumpFormat::Hex => writeln!(out, "{} {}", hex(key), hex(value)),
                DumpFormat::Jsonl => writeln!(out, "{}", v.entry(key, value)),
                DumpFormat::Json => {
                    let sep = if first { "\n  " } else { ",\n  " };
                    first = false;
                    write!(out, "{sep}{}", v.entry(key, value))
                }
            };
            match r {
                Ok(()) => true,
                Err(e) => {
                    io_error = Some(e);
                    false
                }
            }
        },
    )?;
    if let Some(e) = io_error {
        return Err(e.into());
    }
    if args.format == DumpFormat::Json {
        out.write_all(if first { b"]\n" } else { b"\n]\n" })?;
    }
    Ok(())
}

/// The smallest byte string greater than every string that begins with `prefix`; `None` when
/// there is none (`prefix` is all `0xff`).
fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut next = prefix.to_vec();
    while let Some(last) = next.pop() {
        if last < 0xff {
            next.push(last + 1);
            return Some(next);
        }
    }
    None
}

/// `tabula readers`.
pub fn readers(out: &mut Out, path: &Path, as_json: bool) -> Outcome {
    let db = open(path)?;
    let last = db.details()?.last_txn;
    let list = db.readers()?;
    let rows: Vec<Json> = list
        .iter()
        .map(|r| {
            json!({
                "slot": r.slot, "pid": r.pid, "thread": r.thread,
                "txn": r.txn, "lag": r.lag,
                "bytes_used": r.bytes_used, "bytes_retained": r.bytes_retained,
            })
        })
        .collect();
    if as_json {
        return print_json(out, &json!({"last_txn": last, "readers": rows}));
    }
    if list.is_empty() {
        writeln!(out, "no live readers (last transaction {last})")?;
        return Ok(());
    }
    let mut lines = vec![
        [
            "SLOT",
            "PID",
            "THREAD",
            "SNAPSHOT",
            "LAG (txns)",
            "RETAINED",
        ]
        .map(String::from),
    ];
    for r in &list {
        lines.push([
            r.slot.to_string(),
            r.pid.to_string(),
            match r.thread {
                tabula_core::untyped::ReaderInfo::PARKED => "parked".into(),
                tabula_core::untyped::ReaderInfo::OUSTED => "ousted".into(),
                t => format!("{t:#x}"),
            },
            if r.txn == 0 {
                "idle".into()
            } else {
                r.txn.to_string()
            },
            r.lag.to_string(),
            size(r.bytes_retained as u64),
        ]);
    }
    use Align::{Left, Right};
    print_table(out, &lines, [Right, Right, Left, Right, Right, Right], None)?;
    writeln!(
        out,
        "(last transaction {last}; lag = transactions committed since the reader's snapshot)"
    )?;
    Ok(())
}

pub(crate) fn spinner(message: &'static str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"),
    );
    pb.set_message(message);
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

/// `tabula copy`.
pub fn copy(out: &mut Out, path: &Path, dest: &Path, compact: bool, as_json: bool) -> Outcome {
    let db = open(path)?;
    let details = db.details()?;
    let before = details.file_size;
    let used_before = db.read()?.page_use()?.used_bytes();
    if dest.exists() && !dest.is_dir() {
        return Err(Failure::Usage(format!(
            "`{}` exists and is not a directory; give a new directory for the copy",
            dest.display()
        )));
    }
    let file = dest.join(tabula_core::DATA_FILE);
    if file.exists() {
        return Err(Failure::Usage(format!(
            "`{}` already exists; copy into a new directory",
            file.display()
        )));
    }
    std::fs::create_dir_all(dest)
        .map_err(|e| Failure::Problem(format!("cannot create `{}`: {e}", dest.display())))?;
    let pb = spinner(if compact {
        "compacting copy"
    } else {
        "copying"
    });
    let result = db.copy_to(dest, compact);
    pb.finish_and_clear();
    result?;
    let after = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    let used_after = open(dest)?.read()?.page_use()?.used_bytes();
    if as_json {
        return print_json(
            out,
            &json!({
                "source": path.display().to_string(),
                "dest": dest.display().to_string(),
                "compact": compact,
                "source_bytes": before,
                "source_used_bytes": used_before,
                "dest_bytes": after,
                "dest_used_bytes": used_after,
            }),
        );
    }
    writeln!(
        out,
        "copied {} (file {}, {} used) to {} (file {}, {} used){}",
        path.display(),
        size(before),
        size(used_before),
        dest.display(),
        size(after),
        size(used_after),
        if compact {
            format!(
                ", compacted (libmdbx sizes a compacted file to its used pages rounded up to a \
                 whole growth step, {}, and at least its geometry's lower bound, {})",
                size(details.growth),
                size(details.lower)
            )
        } else {
            String::new()
        }
    )?;
    Ok(())
}

/// `tabula check`: libmdbx's integrity check (with its own report), then the decode pass over
/// every table. A table that cannot be read is recorded with its error and the pass goes on to
/// the next; every damaged table is named, and the report (`--json` too) is printed whether the
/// file is sound or not.
pub fn check(out: &mut Out, path: &Path, as_json: bool) -> Outcome {
    let db = open(path)?;
    // Before the snapshot: the check takes a reader slot of its own and walks every page.
    let chk = db.check_report()?;
    let summary = chk.summary;
    // Tables that could not be read (listed, found or walked), with the error.
    let mut read_errors: Vec<(String, String)> = Vec::new();
    let mut snap = db.read()?;
    let names = match snap.table_names() {
        Ok(names) => names,
        Err(e) => {
            read_errors.push(("@MAIN".to_owned(), format!("list the tables: {e}")));
            snap = db.read()?;
            Vec::new()
        }
    };
    let mut views = Vec::new();
    let mut total = 0u64;
    for name in names {
        let found = match snap.table(&name) {
            Ok(Some(found)) => found,
            Ok(None) => continue,
            Err(e) => {
                read_errors.push((name, e.to_string()));
                snap = db.read()?;
                continue;
            }
        };
        match snap.stat(&found) {
            Ok(stat) => total += stat.entries,
            Err(e) => {
                read_errors.push((name, e.to_string()));
                snap = db.read()?;
            }
        }
        views.push(View::new(found));
    }
    // A table the schema record names that the catalog does not list: its catalog entry is
    // damaged (or gone).
    if let Some(record) = db.record() {
        for name in record.tables.keys() {
            let seen =
                views.iter().any(|v| &v.name == name) || read_errors.iter().any(|(n, _)| n == name);
            if !seen {
                read_errors.push((
                    name.clone(),
                    "in the schema record, but not in the table catalog (libmdbx's main tree)"
                        .to_owned(),
                ));
            }
        }
    }
    let pb = if total >= PROGRESS_THRESHOLD && std::io::stderr().is_terminal() {
        let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} entries {msg} ({eta})")
                .expect("valid template"),
        );
        pb
    } else {
        ProgressBar::hidden()
    };
    const SHOWN: usize = 20;
    let mut problems: Vec<Json> = Vec::new();
    let mut problem_count = 0u64;
    let mut tables = Vec::new();
    // Tables with entries that do not decode: damaged too (random bytes in a value).
    let mut undecodable: Vec<String> = Vec::new();
    for v in &views {
        pb.set_message(v.name.clone());
        let mut checked = 0u64;
        let mut bad = 0u64;
        let decodes_keys = v.found.key_shape().is_some();
        let decodes_values = v.found.value_shape().is_some() || v.found.is_meta();
        // An index (its record says so): each entry's value is the primary key of a row its
        // source table must have. Whether the row computes the entry needs the application's
        // code (`Db::check_indexes`).
        let source = v
            .found
            .record
            .as_ref()
            .and_then(|r| r.index.as_ref())
            .and_then(|index| views.iter().find(|w| w.name == index.source));
        let mut rows_checked = 0u64;
        let walked = snap.walk(&v.found, None, None, false, |key, value| {
            checked += 1;
            if checked.is_multiple_of(4096) {
                pb.inc(4096);
            }
            let mut errs = Vec::new();
            if decodes_keys && let Err(e) = v.key_json(key) {
                errs.push(format!("key: {e}"));
            }
            if decodes_values && let Err(e) = v.value_json(value) {
                errs.push(format!("value: {e}"));
            }
            if let Some(source) = source {
                // The source stores an `integer_key` key native-endian.
                let mut row = value.to_vec();
                if source.found.integer_key && cfg!(target_endian = "little") {
                    row.reverse();
                }
                rows_checked += 1;
                match snap.get_raw(&source.found, &row) {
                    Ok(found) if found.is_empty() => errs.push(format!(
                        "index entry names the row 0x{} that table `{}` does not have",
                        hex(value),
                        source.name
                    )),
                    Ok(_) => {}
                    Err(e) => errs.push(format!("reading the row of table `{}`: {e}", source.name)),
                }
            }
            if !errs.is_empty() {
                bad += 1;
                if problems.len() < SHOWN {
                    problems.push(json!({
                        "table": v.name, "key_hex": hex(key), "error": errs.join("; "),
                    }));
                }
            }
            true
        });
        pb.inc(checked % 4096);
        let read_error = match walked {
            Ok(()) => None,
            Err(e) => {
                // A damaged page can leave the transaction unusable: the next table gets a
                // fresh one.
                snap = db.read()?;
                Some(e.to_string())
            }
        };
        if let Some(e) = &read_error {
            read_errors.push((v.name.clone(), e.clone()));
        }
        // A history (its record says whose): its changes and index agree with its layout.
        let history_of = v.found.record.as_ref().and_then(|r| r.history_of.as_ref());
        if read_error.is_none()
            && let Some(source) = history_of.and_then(|s| views.iter().find(|w| &w.name == s))
        {
            match snap.check_history(&source.found, &v.found, SHOWN) {
                Ok(found) => {
                    bad += found.problem_count;
                    for p in found.problems {
                        if problems.len() < SHOWN {
                            problems.push(json!({"table": v.name, "error": p}));
                        }
                    }
                }
                Err(e) => {
                    snap = db.read()?;
                    read_errors.push((v.name.clone(), e.to_string()));
                }
            }
        }
        if bad > 0 {
            undecodable.push(v.name.clone());
        }
        problem_count += bad;
        let libmdbx = chk.tables.iter().find(|t| t.named && t.name == v.name);
        tables.push(json!({
            "name": v.name, "entries": checked, "problems": bad,
            "keys_decoded": decodes_keys, "values_decoded": decodes_values,
            "index_of": source.map(|w| w.name.clone()), "rows_checked": rows_checked,
            "read_error": read_error,
            "damaged": read_error.is_some() || libmdbx.is_some_and(|t| t.damaged()),
            "libmdbx": libmdbx.map(|t| json!({
                "pages": t.pages, "broken_pages": t.broken_pages,
                "entry_problems": t.entry_problems, "error": t.error,
            })),
        }));
    }
    pb.finish_and_clear();

    // Every damaged tree, in the order met: libmdbx's findings, then tables that failed to read,
    // then tables with entries that do not decode.
    let mut damaged: Vec<String> = chk.damaged().map(|t| t.name.clone()).collect();
    for name in read_errors.iter().map(|(name, _)| name).chain(&undecodable) {
        if !damaged.contains(name) {
            damaged.push(name.clone());
        }
    }
    let libmdbx = json!({
        "ok": summary.is_ok(), "problems": summary.problems, "tables": summary.tables,
        "pages": summary.pages, "txn_id": summary.txn_id,
        "damaged": chk.damaged().map(|t| json!({
            "name": t.name, "named": t.named, "pages": t.pages,
            "broken_pages": t.broken_pages, "entry_problems": t.entry_problems,
            "error": t.error,
        })).collect::<Vec<_>>(),
        "report": chk.report.iter().map(|l| json!({
            "depth": l.depth, "problem": l.problem, "text": l.text,
        })).collect::<Vec<_>>(),
    });
    let ok = problem_count == 0 && summary.is_ok() && damaged.is_empty();
    if as_json {
        print_json(
            out,
            &json!({
                "ok": ok,
                "problems": problem_count,
                "first_problems": problems,
                "damaged_tables": damaged,
                "read_errors": read_errors.iter().map(|(t, e)| json!({"table": t, "error": e}))
                    .collect::<Vec<_>>(),
                "tables": tables,
                "libmdbx_check": libmdbx,
            }),
        )?;
    } else {
        writeln!(
            out,
            "libmdbx check (mdbx_env_chk): {} problem(s) in {} table(s), {} page(s), txn {}",
            summary.problems, summary.tables, summary.pages, summary.txn_id
        )?;
        if !summary.is_ok() {
            writeln!(out, "libmdbx's report:")?;
            for l in &chk.report {
                writeln!(
                    out,
                    "  {}{}{}",
                    "  ".repeat(usize::from(l.depth)),
                    if l.problem { "! " } else { "" },
                    l.text
                )?;
            }
        }
        for t in &tables {
            let what = match (t["keys_decoded"].as_bool(), t["values_decoded"].as_bool()) {
                (Some(true), Some(true)) => "keys and values decoded",
                (Some(true), _) => "keys decoded (values have no recorded shape)",
                (_, Some(true)) => "values decoded (keys have no descriptor)",
                _ => "nothing to decode (no descriptor)",
            };
            let index = match t["index_of"].as_str() {
                Some(source) => format!("; index of `{source}`: each entry's row looked up"),
                None => String::new(),
            };
            writeln!(
                out,
                "{:<24} {:>10} entries  {:>6} problems  {what}{index}{}",
                t["name"].as_str().unwrap_or(""),
                t["entries"].as_u64().unwrap_or(0),
                t["problems"].as_u64().unwrap_or(0),
                if t["damaged"] == json!(true) {
                    "  DAMAGED"
                } else {
                    ""
                }
            )?;
        }
        for p in &problems {
            // A history's problems name their entry (or row) themselves.
            let key = match p["key_hex"].as_str() {
                Some(hex) => format!(" key 0x{hex}"),
                None => String::new(),
            };
            writeln!(
                out,
                "problem: table `{}`{key}: {}",
                p["table"].as_str().unwrap_or(""),
                p["error"].as_str().unwrap_or("")
            )?;
        }
        for (_, e) in &read_errors {
            writeln!(out, "read error: {e}")?;
        }
    }
    if !damaged.is_empty() || !summary.is_ok() {
        let named: Vec<String> = damaged.iter().map(|t| describe_tree(t)).collect();
        return Err(Failure::Problem(format!(
            "the file is damaged (libmdbx's integrity check found {} problem(s)){}{}; restore \
             it from a backup (or `tabula copy` what still reads)",
            summary.problems,
            if named.is_empty() {
                String::new()
            } else {
                format!("; damaged: {}", named.join(", "))
            },
            if read_errors.is_empty() {
                String::new()
            } else {
                format!("; {} could not be read to the end", read_errors.len())
            },
        )));
    }
    if problem_count > 0 {
        return Err(Failure::Problem(format!(
            "{problem_count} entr{} did not decode",
            if problem_count == 1 { "y" } else { "ies" }
        )));
    }
    if !as_json {
        writeln!(
            out,
            "ok: libmdbx finds no damage and every key and value decodes with its descriptor"
        )?;
    }
    Ok(())
}

/// A tree's name for a message: a table, or what libmdbx's own trees hold.
fn describe_tree(name: &str) -> String {
    match name {
        "@MAIN" => "libmdbx's main tree (`@MAIN`, the directory of tables)".to_owned(),
        "@GC" => "libmdbx's free-page tree (`@GC`)".to_owned(),
        "@META" => "the meta pages".to_owned(),
        table => format!("table `{table}`"),
    }
}

/// `tabula train-dict`: samples a `ZstdDict` table's values, trains a zstd dictionary from
/// them and stores it as the current one of the table's dictionary name, in one transaction.
/// Stored values are not re-encoded (they keep decoding with the dictionary they name).
pub fn train_dict(
    out: &mut Out,
    path: &Path,
    table: &str,
    samples: usize,
    max_size: usize,
    as_json: bool,
) -> Outcome {
    use tabula_core::codec::train_zstd_dictionary;
    use tabula_core::startup::Bootstrap;

    if !path.is_dir() {
        return Err(Failure::Usage(format!(
            "`{}` is not a database directory; give the directory that holds `mdbx.dat`",
            path.display()
        )));
    }
    if samples == 0 || max_size < 256 {
        return Err(Failure::Usage(format!(
            "cannot train from {samples} samples into at most {max_size} bytes: give --samples of \
             at least 1 and --size of at least 256"
        )));
    }
    let mut boot = Bootstrap::begin(path, &keeping_geometry(path)?, 0)?;
    let record = boot.read_record()?.ok_or_else(|| {
        Failure::Problem(format!(
            "`{}` holds no Tabula schema record; open it with the application once",
            path.display()
        ))
    })?;
    let Some(recorded) = record.tables.get(table) else {
        let names: Vec<&str> = record.tables.keys().map(String::as_str).collect();
        return Err(Failure::Usage(format!(
            "no table `{table}` in the schema record; tables: {}",
            names.join(", ")
        )));
    };
    let Some(dictionary) = recorded
        .value
        .strip_prefix("zstd_dict(")
        .and_then(|rest| rest.split_once(','))
        .map(|(name, _)| name.to_string())
    else {
        return Err(Failure::Usage(format!(
            "table `{table}` stores `{}` values, not `ZstdDict` ones (recorded as \
             `zstd_dict(<name>,<codec>)`): a dictionary would not be used",
            recorded.value
        )));
    };
    // Names reach errors as `&'static str`; one per run.
    let name: &'static str = Box::leak(table.to_string().into_boxed_str());
    let Some(found) = boot.find_table(name)? else {
        return Err(Failure::Problem(format!(
            "table `{table}` is recorded but missing from the file"
        )));
    };
    let stored = boot.zstd_dictionaries()?;
    let stride = (found.entries / samples as u64).max(1);
    let (mut plain, mut at, mut after) = (Vec::new(), 0u64, None::<Vec<u8>>);
    while plain.len() < samples {
        let batch = boot.read_batch(name, found.handle, after.as_deref(), 1000)?;
        let Some((last, _)) = batch.last() else {
            break;
        };
        after = Some(last.clone());
        for (key, value) in &batch {
            if at % stride == 0 && plain.len() < samples {
                plain.push(stored.decompress(value).map_err(|e| {
                    Failure::Problem(format!(
                        "table `{table}`: the value at key {} does not decompress: {e}",
                        hex(key)
                    ))
                })?);
            }
            at += 1;
        }
    }
    let trained = train_zstd_dictionary(&plain, max_size)
        .map_err(|e| Failure::Problem(format!("table `{table}`: {e}")))?;
    let id = boot.add_zstd_dictionary(&dictionary, &trained)?;
    boot.checkpoint()?;
    if as_json {
        print_json(
            out,
            &json!({
                "table": table,
                "dictionary": dictionary,
                "id": id,
                "bytes": trained.len(),
                "samples": plain.len(),
            }),
        )?;
    } else {
        writeln!(
            out,
            "stored zstd dictionary {id} ({}, from {} values of `{table}`) as the current one \
             of `{dictionary}`; values written after the application reopens use it, stored \
             values keep theirs (the migration step `train_zstd_dictionary` re-encodes them)",
            size(trained.len() as u64),
            plain.len()
        )?;
    }
    Ok(())
}

/// The history of the table `v` shows, or the problem that it has none.
fn history_of(snap: &mut UntypedTx<'_>, v: &View, table: &str) -> Result<UntypedTable, Failure> {
    snap.history_of(&v.found)?.ok_or_else(|| {
        Failure::Problem(format!(
            "table `{table}` records no history (it is not declared `history`, or its history \
             is not in the file's schema record)"
        ))
    })
}

/// `tabula history`: the versions of a key, or the changes of a version.
pub fn history(
    out: &mut Out,
    path: &Path,
    table: &str,
    key: Option<&str>,
    version: Option<u64>,
    as_json: bool,
) -> Outcome {
    let db = open(path)?;
    let mut snap = db.read()?;
    let v = view(&mut snap, &db, path, table)?;
    let history = history_of(&mut snap, &v, table)?;
    if let Some(key) = key {
        let stored = v.parse_key(key)?;
        let versions = snap.versions(&v.found, &history, &stored)?;
        let key_json = v.key_json(&stored).unwrap_or(Json::String(hex(&stored)));
        if as_json {
            return print_json(out, &json!({"key": key_json, "versions": versions}));
        }
        let list: Vec<String> = versions.iter().map(u64::to_string).collect();
        writeln!(
            out,
            "key {key_json} of `{table}` changed at {} version{}: {}",
            versions.len(),
            if versions.len() == 1 { "" } else { "s" },
            list.join(", ")
        )?;
        return Ok(());
    }
    let Some(version) = version else {
        return Err(Failure::Usage(
            "give `--key KEY` or `--version V`".to_string(),
        ));
    };
    let one = |bytes: &[u8]| match v.value_entry(bytes) {
        Json::Object(mut m) if !m.contains_key("error") => m.remove("value").unwrap_or(Json::Null),
        other => other,
    };
    let key = |k: &[u8]| v.key_json(k).unwrap_or(Json::String(hex(k)));
    // A `dupsort` table's changes are by (key, subkey): the values before and after, listed.
    let rows: Vec<Json> = match v.found.dupsort {
        true => {
            // With subkeys `{"subkey", "value"}` objects, as `get` shows them.
            let entry = |b: &[u8]| match v.has_subkey() {
                true => v.value_entry(b),
                false => one(b),
            };
            let list = |values: &[Vec<u8>]| Json::Array(values.iter().map(|b| entry(b)).collect());
            (snap.dup_changes_at(&v.found, &history, version)?.iter())
                .map(|(k, before, after)| {
                    json!({"key": key(k), "before": list(before), "after": list(after)})
                })
                .collect()
        }
        false => {
            let value = |value: &Option<Vec<u8>>| value.as_deref().map_or(Json::Null, one);
            (snap.changes_at(&v.found, &history, version)?.iter())
                .map(|(k, before, after)| {
                    json!({"key": key(k), "before": value(before), "after": value(after)})
                })
                .collect()
        }
    };
    if as_json {
        return print_json(out, &json!({"version": version, "changes": rows}));
    }
    writeln!(
        out,
        "{} change{} of `{table}` at version {version} ({}: no value):",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        if v.found.dupsort { "[]" } else { "null" }
    )?;
    for row in &rows {
        writeln!(
            out,
            "  {}: {} -> {}",
            row["key"], row["before"], row["after"]
        )?;
    }
    Ok(())
}
