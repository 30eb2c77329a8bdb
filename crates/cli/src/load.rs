//! `tabula load`: restores a table from what `tabula dump` wrote (its header line in
//! `header.rs`).
//!
//! A loadable dump is `dump`'s `jsonl` format (the default) or its `hex` format. Both begin
//! with one header line, a JSON object ([`DumpHeader`]): the table's name, its libmdbx flags,
//! what the schema record holds for it (key descriptor, value codec and shape), and the source's
//! schema version and applied migration steps. Then one entry per line:
//!
//! - `jsonl`: `{"key": .., "value": ..}` in the JSON forms of `tabula_core::untyped::json`
//!   (`"subkey"` too for a `dupsort` table with subkeys); an entry the dump could not decode is
//!   `{"key_hex": .., "value_hex": .., "error": ..}` and loads as those bytes. Keys and values
//!   are encoded again with the recorded encodings, as the application would write them.
//! - `hex`: `KEY_HEX VALUE_HEX`, the stored bytes, written as they are (exact, whatever the
//!   codec).
//!
//! `--format json` (one JSON array, for scripts) has no header and is not loadable.
//!
//! The whole load is one write transaction: it commits when every line has loaded, and leaves
//! nothing behind otherwise (a database it created is removed again).

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value as Json, json};
use tabula_core::record::{SchemaRecord, TableRecord};
use tabula_core::startup::{Bootstrap, TableHandle};
use tabula_core::untyped::{KeyShape, ValueShape};
use tabula_core::{Options, TableFlags};

use crate::commands::{keeping_geometry, print_json};
use crate::header::{DumpHeader, parse_header};
use crate::json::{json_bytes, unhex};
use crate::out::Out;
use crate::{Failure, Outcome, hex};

/// The parts of two table records that decide the stored bytes: flags, key descriptor, value
/// codec (the type name as written is shown, not compared: the shape identifies the type),
/// value shape and version.
fn same_encoding(a: &TableRecord, b: &TableRecord) -> bool {
    let codec = |r: &TableRecord| r.value.split('<').next().unwrap_or_default().to_owned();
    a.dupsort == b.dupsort
        && a.integer_key == b.integer_key
        && a.key == b.key
        && codec(a) == codec(b)
        && a.shape == b.shape
        && a.value_version == b.value_version
}

fn describe(r: &TableRecord) -> String {
    format!(
        "keys `{}`, values `{}`{}{}",
        r.key,
        r.value,
        if r.dupsort { ", dupsort" } else { "" },
        if r.integer_key { ", integer_key" } else { "" }
    )
}

/// How the entries of a dump become stored bytes.
struct Encoder {
    key: Option<KeyShape>,
    value: Option<ValueShape>,
    /// Hex values of a `zstd_dict` table name dictionaries of the source: checked against the
    /// destination's.
    zstd_dict: bool,
}

impl Encoder {
    fn of(header: &DumpHeader) -> Result<Encoder, Failure> {
        let Some(r) = &header.record else {
            return Ok(Encoder {
                key: None,
                value: None,
                zstd_dict: false,
            });
        };
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            Failure::Problem(format!(
                "the dump header's {what} for table `{}` does not parse ({e}); was it written by \
                 a newer Tabula?",
                header.table
            ))
        };
        Ok(Encoder {
            key: Some(KeyShape::parse(&r.key).map_err(|e| bad("key descriptor", &e))?),
            value: ValueShape::of_record(&r.value, r.shape.as_deref())
                .map_err(|e| bad("value shape", &e))?,
            zstd_dict: r.value.contains("zstd_dict("),
        })
    }

    fn subkeyed(&self) -> bool {
        self.value
            .as_ref()
            .is_some_and(|v| v.subkey_shape().is_some())
    }

    /// A `jsonl` entry's stored key and value.
    fn jsonl(&self, line: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
        let entry: Json = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
        let Json::Object(m) = &entry else {
            return Err("not an entry (a JSON object with `key` and `value`)".into());
        };
        let hex_field = |name: &str| -> Option<Result<Vec<u8>, String>> {
            m.get(name).map(|v| {
                v.as_str()
                    .and_then(unhex)
                    .ok_or_else(|| format!("`{name}` is not a hex string"))
            })
        };
        let key = match (hex_field("key_hex"), m.get("key")) {
            (Some(bytes), _) => bytes?,
            (None, Some(k)) => match &self.key {
                Some(shape) => shape
                    .key_from_json(k)
                    .and_then(|k| shape.encode(&k))
                    .map_err(|e| format!("the key: {e}"))?,
                None => json_bytes(k)
                    .ok_or("the key is not a hex string (the table records no key encoding)")?,
            },
            (None, None) => return Err("no `key`".into()),
        };
        let value = match (hex_field("value_hex"), m.get("value")) {
            (Some(bytes), _) => bytes?,
            (None, Some(v)) => match &self.value {
                Some(shape) => {
                    let json = if self.subkeyed() {
                        let subkey = m.get("subkey").ok_or("no `subkey`")?;
                        Json::Array(vec![subkey.clone(), v.clone()])
                    } else {
                        v.clone()
                    };
                    shape
                        .value_from_json(&json)
                        .and_then(|d| shape.encode(&d))
                        .map_err(|e| format!("the value: {e}"))?
                }
                None => json_bytes(v)
                    .ok_or("the value is not a hex string (the table records no value shape)")?,
            },
            (None, None) => return Err("no `value`".into()),
        };
        Ok((key, value))
    }
}

/// A `hex` entry: `KEY_HEX VALUE_HEX`.
fn hex_entry(line: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let (k, v) = line
        .split_once(' ')
        .ok_or("not `KEY_HEX VALUE_HEX` (no space)")?;
    let key = unhex(k).ok_or("the key is not hex")?;
    let value = unhex(v.trim_end()).ok_or("the value is not hex")?;
    Ok((key, value))
}

/// What to undo if the load fails: the database it created.
struct Created<'a> {
    path: &'a Path,
    database: bool,
    directory: bool,
}

impl Created<'_> {
    fn undo(&self) {
        if self.database {
            let _ = std::fs::remove_file(self.path.join(tabula_core::DATA_FILE));
            let _ = std::fs::remove_file(self.path.join(tabula_core::LOCK_FILE));
        }
        if self.directory {
            let _ = std::fs::remove_dir(self.path);
        }
    }
}

/// `tabula load`.
pub fn load(
    out: &mut Out,
    path: &Path,
    table: Option<&str>,
    input: Option<&Path>,
    as_json: bool,
) -> Outcome {
    let (reader, total): (Box<dyn Read>, Option<u64>) = match input {
        Some(file) => {
            let f = File::open(file).map_err(|e| {
                Failure::Problem(format!("cannot read the dump `{}`: {e}", file.display()))
            })?;
            let len = f.metadata().ok().map(|m| m.len());
            (Box::new(f), len)
        }
        None => (Box::new(std::io::stdin().lock()), None),
    };
    let source = input.map_or("stdin".to_string(), |p| format!("`{}`", p.display()));
    let pb = progress(total);
    let mut lines = BufReader::with_capacity(256 * 1024, pb.wrap_read(reader)).lines();
    let read_error = |e: std::io::Error| Failure::Problem(format!("reading {source} failed: {e}"));

    let first = lines
        .next()
        .transpose()
        .map_err(read_error)?
        .unwrap_or_default();
    let header = parse_header(&first, &source)?;
    let name = table.unwrap_or(&header.table).to_string();
    // Tables are named by `&'static str` in core's errors; one per run.
    let name: &'static str = Box::leak(name.into_boxed_str());
    let flags = header
        .table_flags()
        .map_err(|e| Failure::Problem(format!("cannot load table `{}`: {e}", header.table)))?;
    let encoder = Encoder::of(&header)?;

    if path.exists() && !path.is_dir() {
        return Err(Failure::Usage(format!(
            "`{}` is not a directory; give a database directory (a new one is created)",
            path.display()
        )));
    }
    let exists = path.join(tabula_core::DATA_FILE).exists();
    if !exists
        && path.is_dir()
        && std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_some())
    {
        return Err(Failure::Usage(format!(
            "`{}` holds files but no database (`mdbx.dat`); load into an existing database, a new \
             directory or an empty one",
            path.display()
        )));
    }
    let created = Created {
        path,
        database: !exists,
        directory: !path.exists(),
    };
    let result = write(
        &mut lines,
        &header,
        &encoder,
        path,
        name,
        flags,
        !exists,
        &pb,
        &read_error,
    );
    pb.finish_and_clear();
    let (entries, created_table) = match result {
        Ok(done) => done,
        Err(e) => {
            created.undo();
            return Err(e);
        }
    };
    let what = if !exists {
        "a new database"
    } else if created_table {
        "a new table"
    } else {
        "an empty table"
    };
    if as_json {
        return print_json(
            out,
            &json!({
                "path": path.display().to_string(),
                "table": name,
                "entries": entries,
                "format": header.format,
                "new_database": !exists,
                "new_table": created_table,
            }),
        );
    }
    writeln!(
        out,
        "loaded {entries} entr{} into table `{name}` of {} ({what}) from {source} ({} dump)",
        if entries == 1 { "y" } else { "ies" },
        path.display(),
        header.format
    )?;
    Ok(())
}

/// Draws the bytes of the dump read (or, from stdin, the bytes so far) on stderr when it is a
/// terminal.
fn progress(total: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    let template = match total {
        Some(_) => "loading {bar:40} {bytes}/{total_bytes} ({eta})",
        None => "loading {spinner} {bytes} read {elapsed}",
    };
    pb.set_style(ProgressStyle::with_template(template).expect("valid template"));
    pb
}

/// The write transaction of a load: the table found or created, the record updated, every
/// entry put, committed. Returns the entries loaded and whether the table was created.
#[allow(clippy::too_many_arguments)]
fn write(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    header: &DumpHeader,
    encoder: &Encoder,
    path: &Path,
    name: &'static str,
    flags: TableFlags,
    new: bool,
    pb: &ProgressBar,
    read_error: &dyn Fn(std::io::Error) -> Failure,
) -> Result<(u64, bool), Failure> {
    // An existing database keeps its geometry; a new one gets Tabula's defaults.
    let options = if new {
        Options::new()
    } else {
        keeping_geometry(path)?
    };
    let mut boot = Bootstrap::begin(path, &options, 2)?;
    let shown = path.display();
    let mut record = match boot.read_record()? {
        Some(record) => record,
        None if new => {
            let mut record = SchemaRecord::empty();
            record.version = header.schema_version.unwrap_or(1);
            record.applied = header.applied.clone();
            record
        }
        None => {
            return Err(Failure::Problem(format!(
                "`{shown}` holds no Tabula schema record (not a Tabula database, or never opened \
                 by its application): load into a Tabula database or a new directory"
            )));
        }
    };
    // Indexes are written by the application's code: a load must not bypass them.
    let is_index = record
        .tables
        .get(name)
        .and_then(|t| t.index.as_ref())
        .is_some()
        || header
            .record
            .as_ref()
            .and_then(|t| t.index.as_ref())
            .is_some();
    if is_index {
        return Err(Failure::Problem(format!(
            "table `{name}` is a secondary index: its entries are computed from its table's rows, \
             so it is not loaded; load its table, and the application's next open builds the \
             index"
        )));
    }
    if let Some((index, _)) = record
        .tables
        .iter()
        .find(|(_, t)| t.index.as_ref().is_some_and(|i| i.source == name))
    {
        return Err(Failure::Problem(format!(
            "table `{name}` of `{shown}` has the index `{index}`, which a load would leave out of \
             step: load into a new database (the application's open then builds its indexes)"
        )));
    }
    // A history is written by the application's write path with every change of its table:
    // rows loaded beside it would not be in it, and reads as of a version would find them
    // where they were not (or miss the values they replaced).
    if let Some(history) = record.history_of(name) {
        return Err(Failure::Problem(format!(
            "table `{name}` of `{shown}` has the history `{history}`, which records every change \
             of its rows with its version: a load would write rows it does not record, and reads \
             as of a version would be wrong; load into a new database (before the history's \
             own dump, if you restore it too; without one, the application's next open starts \
             the history on the loaded rows)"
        )));
    }
    let mut record_changed = new;
    match (record.tables.get(name), &header.record) {
        (Some(ours), Some(theirs)) if !same_encoding(ours, theirs) => {
            return Err(Failure::Problem(format!(
                "table `{name}` of `{shown}` is recorded with {}, and the dump of `{}` with {}: \
                 the entries would not decode; load into a table declared like the dumped one \
                 (or a new database)",
                describe(ours),
                header.table,
                describe(theirs)
            )));
        }
        (Some(ours), None) => {
            return Err(Failure::Problem(format!(
                "table `{name}` of `{shown}` is recorded with {}, and the dump of `{}` records no \
                 encodings (its table was not created by Tabula): load it into a new database or \
                 a table of another name",
                describe(ours),
                header.table
            )));
        }
        (Some(_), Some(_)) | (None, None) => {}
        (None, Some(theirs)) => {
            if !new && header.schema_version != Some(record.version) {
                return Err(Failure::Problem(format!(
                    "the dump of `{}` was taken at schema version {}, and `{shown}` is at version \
                     {}: its record cannot take the table; load into a new database, or into \
                     the table after the application at that version created it",
                    header.table,
                    header
                        .schema_version
                        .map_or("(none)".to_string(), |v| v.to_string()),
                    record.version
                )));
            }
            record.tables.insert(name.to_string(), theirs.clone());
            record_changed = true;
        }
    }
    let (handle, created): (TableHandle, bool) = match boot.find_table(name)? {
        Some(found) => {
            if found.entries > 0 {
                return Err(Failure::Problem(format!(
                    "table `{name}` of `{shown}` already holds {} entr{}: load restores a dump \
                     into an empty table only (or into a new database); empty it first, or load \
                     under another name (`tabula load {shown} OTHER_NAME`)",
                    found.entries,
                    if found.entries == 1 { "y" } else { "ies" }
                )));
            }
            if found.flags != Bootstrap::flag_bits(flags) {
                return Err(Failure::Problem(format!(
                    "table `{name}` of `{shown}` has other libmdbx flags than the dumped table \
                     ({}): load into a table declared like the dumped one",
                    if header.flags.is_empty() {
                        "none".to_string()
                    } else {
                        header.flags.join(", ")
                    }
                )));
            }
            (found.handle, false)
        }
        None => (boot.create_table(name, flags)?, true),
    };
    if record_changed {
        boot.write_record(&mut record)?;
    }
    let dictionaries = if encoder.zstd_dict && header.format == "hex" {
        Some(boot.zstd_dictionaries()?)
    } else {
        None
    };
    let mut entries = 0u64;
    for (at, line) in lines.enumerate() {
        let line = line.map_err(read_error)?;
        // Line 1 is the header.
        let number = at + 2;
        if line.trim().is_empty() {
            continue;
        }
        let parsed = if header.format == "hex" {
            hex_entry(&line)
        } else {
            encoder.jsonl(&line)
        };
        let (key, value) = parsed.map_err(|e| {
            Failure::Problem(format!(
                "line {number} of the dump does not load into table `{name}`: {e}; nothing was \
                 written"
            ))
        })?;
        if let Some(stored) = &dictionaries
            && let Err(e) = stored.decompress(&value)
        {
            return Err(Failure::Problem(format!(
                "line {number}: the value at key {} does not decompress in `{shown}` ({e}): a \
                 `hex` dump of a `ZstdDict` table holds values compressed with the source's \
                 dictionaries; load its `jsonl` dump instead (values are compressed again); \
                 nothing was written",
                hex(&key)
            )));
        }
        boot.put_raw(name, handle, &key, &value, false)?;
        entries += 1;
        if entries.is_multiple_of(4096) {
            pb.tick();
        }
    }
    boot.checkpoint()?;
    Ok((entries, created))
}
