//! The core crate's layering, checked on its source: every module imports only modules of its
//! own layer or below (so there is no import cycle between files), the engine and schema
//! identity import nothing from the rest of the crate and the codecs nothing but schema
//! identity, items are imported through their module (not the
//! crate root's re-exports, which would hide a dependency), and `unsafe` appears only in the
//! engine. `docs/design.md` ("Layers") explains the layers.
//!
//! Reads the files as text: a `crate::<module>` path anywhere in code (not in comments) is a
//! dependency on that module.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each module and its layer, lowest first: a top-level file or a folder, never part of one
/// (a folder's files may use each other). A module may use modules of a lower layer, or of its
/// own layer when the pair is listed in `SAME_LAYER` in that direction.
const LAYERS: &[(&str, u32)] = &[
    ("engine", 0),
    // Schema identity (`schema/`: descriptors, tracing, structural identity): what every codec
    // declares about its encoding, so the codecs sit on it.
    ("schema", 0),
    // The codecs: on schema identity and on the engine's UTF-8 check (`engine::text`, whose
    // `unsafe` stays in the engine).
    ("codec", 1),
    // The derive macros' support items (`lib.rs`'s `__private`), which a table's declaration
    // names to seal it.
    ("__private", 2),
    // Metric names and the calls that record them; imports nothing of the crate.
    ("telemetry", 2),
    // Read-only or read-write: the marker types and what each fixes at compile time.
    ("mode", 2),
    ("table", 3),
    ("error", 4),
    // A libmdbx failure turned into an `Error`, with what it takes to diagnose it.
    ("diagnose", 5),
    // The schema record (`record.rs`): it records table declarations, so it sits above them.
    ("record", 5),
    // The watchers' hub (`hub.rs`): queues, filters and the write transaction's change log,
    // which `Shared` holds and the write paths feed.
    ("hub", 5),
    ("options", 5),
    // The write transaction's version (`version.rs`), which `Shared` holds.
    ("version", 5),
    ("files", 6),
    // `Db` and what its transactions share (`state.rs`): below the transactions, which hold a
    // `&Db`; `Db`'s methods are in `db/`, above them (they make them).
    ("state", 6),
    ("stored", 7),
    // Iterators over a cursor's entries.
    ("iter", 8),
    // Secondary indexes kept exact (`index/`): the write side, which the write pipeline calls.
    ("index", 8),
    // The receivers of the commit feed and key watches (`watch/`); `Db`'s watching methods are
    // in `db/`.
    ("watch", 8),
    // Recording the changes of tables declared `history`, and reading them back as stored
    // bytes (`history/`): it keeps its entries through the indexes' `Store`, and the pipeline
    // records through it.
    ("history", 9),
    // The write pipeline (`pipeline/`): every write form's plan and effects, the refusals, the
    // commit path; over the indexes and the history, under the write cursors and the
    // transaction.
    ("pipeline", 10),
    // One cursor for reads and writes (`cursor/`); its writes go through the pipeline.
    ("cursor", 11),
    // Every read, once (`Reads`), on the cursors and iterators.
    ("read", 12),
    // The transaction: it dereferences to the reads and adds the writes.
    ("txn", 13),
    // The queries by index key (`query.rs`), on the reads they extend.
    ("query", 13),
    // Per-table sequences (`sequence.rs`): on the transaction and the reads.
    ("sequence", 14),
    // Versions on the transactions (`versions.rs`): set_version, reads as of a version,
    // unwind and prune.
    ("versions", 14),
    // The database's methods, its owned read transactions, its bulk load and watching (`db/`).
    ("db", 14),
    // The startup path (`startup/`: its transaction, `open`, and the schema checks).
    ("startup", 15),
    ("untyped", 16),
];

/// Same-layer dependencies allowed, as (user, used). Empty: no module uses one of its own
/// layer (the codecs sit above the engine and schema identity, a table above the derive
/// support items it is sealed with), and the test keeps it so.
const SAME_LAYER: &[(&str, &str)] = &[];

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The unit a file belongs to: its top-level module (`engine/txn.rs` -> `engine`, `txn.rs` ->
/// `txn`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

/// The code of a line, without a trailing `//` comment and without string literals' contents
/// being mistaken for paths (good enough for this crate: paths in strings are rare and flagged).
fn code_of(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed.starts_with("//") {
        return "";
    }
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Every `crate::<ident>` in a line of code.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let ident: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // `pub(crate)` is a visibility, not a path; `$crate` belongs to macros.
        let before = &rest[..i];
        if !ident.is_empty() && !before.ends_with('$') && !before.ends_with('(') {
            out.push(ident);
        }
        rest = after;
    }
    out
}

/// The foundation imports nothing from the rest of the crate: the engine and schema identity
/// nothing at all, the codecs only schema identity (the descriptors and traces they declare)
/// and the engine (its text check, `engine::text`: the `unsafe` a decoder needs stays there).
fn foundation_may_use(module: &str, dep: &str) -> bool {
    match module {
        "engine" | "schema" => dep == module,
        "codec" => dep == "schema" || dep == "engine",
        _ => true,
    }
}

#[test]
fn modules_import_only_downwards_and_unsafe_stays_in_the_engine() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    source_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 20, "found only {} source files", files.len());

    let mut problems = Vec::new();
    let mut edges = 0;
    for file in &files {
        let module = module_of(&src, file);
        let shown = file.strip_prefix(&src).unwrap().display().to_string();
        let text = std::fs::read_to_string(file).expect("read source");
        if module == "lib" {
            continue; // the root declares and re-exports every module
        }
        let Some(&layer) = layers.get(module.as_str()) else {
            problems.push(format!("{shown}: module `{module}` has no layer in LAYERS"));
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let code = code_of(line);
            for dep in crate_paths(code) {
                if dep == module {
                    continue;
                }
                if dep.starts_with(|c: char| c.is_ascii_uppercase()) {
                    problems.push(format!(
                        "{shown}:{}: `crate::{dep}` goes through the crate root's re-exports; \
                         name the module the item lives in",
                        n + 1
                    ));
                    continue;
                }
                let Some(&dep_layer) = layers.get(dep.as_str()) else {
                    problems.push(format!("{shown}:{}: unknown module `crate::{dep}`", n + 1));
                    continue;
                };
                edges += 1;
                let allowed = dep_layer < layer
                    || (dep_layer == layer
                        && SAME_LAYER.contains(&(module.as_str(), dep.as_str())));
                if !allowed || !foundation_may_use(&module, &dep) {
                    problems.push(format!(
                        "{shown}:{}: `{module}` (layer {layer}) uses `{dep}` (layer {dep_layer})",
                        n + 1
                    ));
                }
            }
            if module != "engine"
                && (code.contains("unsafe {")
                    || code.contains("unsafe fn")
                    || code.contains("unsafe impl")
                    || code.contains("unsafe extern"))
            {
                problems.push(format!("{shown}:{}: `unsafe` outside the engine", n + 1));
            }
        }
    }
    assert!(
        edges > 30,
        "found only {edges} imports: is the parser still right?"
    );
    assert!(problems.is_empty(), "layering:\n{}", problems.join("\n"));
}

/// The parser finds what it must: the check above can fail.
#[test]
fn the_parser_sees_paths_and_skips_comments_and_visibility() {
    assert_eq!(crate_paths("use crate::engine::{Env};"), ["engine"]);
    assert_eq!(
        crate_paths("pub(crate) fn f(x: crate::table::Table) -> crate::Error"),
        ["table", "Error"]
    );
    assert!(crate_paths("macro: $crate::x").is_empty());
    assert_eq!(crate_paths("use crate::state::Db;"), ["state"]);
    assert_eq!(crate_paths("use crate::db::owned::OwnedTx;"), ["db"]);
    assert_eq!(crate_paths("use crate::schema::Descriptor;"), ["schema"]);
    assert!(foundation_may_use("codec", "schema"));
    assert!(foundation_may_use("codec", "engine"));
    assert!(!foundation_may_use("codec", "table"));
    assert!(!foundation_may_use("schema", "codec"));
    assert!(!foundation_may_use("engine", "schema"));
    assert_eq!(code_of("    // crate::txn in a comment"), "");
    assert_eq!(code_of("let a = 1; // crate::txn"), "let a = 1; ");
}

/// Method names std types (or serde's and the metrics crate's) have too: a call of one of
/// these says nothing about which module's method runs, so the call check skips them.
const STD_NAMES: &[&str] = &[
    "new",
    "default",
    "clone",
    "drop",
    "fmt",
    "eq",
    "cmp",
    "partial_cmp",
    "hash",
    "from",
    "into",
    "try_from",
    "as_ref",
    "as_mut",
    "deref",
    "deref_mut",
    "borrow",
    "next",
    "next_back",
    "len",
    "is_empty",
    "iter",
    "get",
    "insert",
    "remove",
    "push",
    "pop",
    "take",
    "map",
    "and_then",
    "unwrap",
    "expect",
    "contains",
    "extend",
    "clear",
    "first",
    "last",
    "count",
    "range",
    "keys",
    "values",
    "min",
    "max",
    "to_vec",
    "write",
    "read",
    "flush",
    "path",
    "sync",
    "index",
    "put",
    "as_slice",
    "as_str",
    "to_string",
    "parse",
    "store",
    "load",
    "swap",
    "reset",
    "into_iter",
    "position",
    "split",
    "find",
    "filter",
    "copy",
    "lock",
    "send",
    "err",
    "is_ok",
    "drain",
    "append",
    "entry",
    "contains_key",
    "extend_from_slice",
    "open",
    "next_entry",
    "record",
    "retain",
];

/// The methods (functions taking `self`) each module defines in its inherent impls; trait
/// impls are skipped (their methods are reached through the trait, whose layer the import
/// check covers).
fn defined_methods(src: &Path, files: &[PathBuf]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let module = module_of(src, file);
        let text = std::fs::read_to_string(file).expect("read source");
        // Brace depth, and the depth at which a trait impl's body ends (`None`: not in one).
        let mut depth = 0i32;
        let mut trait_impl_at: Option<i32> = None;
        // A method whose parameters start on the next line (`fn name(` ends the line).
        let mut params_follow: Option<String> = None;
        for line in text.lines() {
            let code = without_strings(code_of(line));
            let trimmed = code.trim_start();
            if let Some(name) = params_follow.take()
                && ["&self", "&mut self", "self,", "mut self", "&'"]
                    .iter()
                    .any(|s| trimmed.starts_with(s))
            {
                let modules = out.entry(name).or_default();
                if !modules.contains(&module) {
                    modules.push(module.clone());
                }
            }
            if trait_impl_at.is_none()
                && (trimmed.starts_with("impl") || trimmed.starts_with("unsafe impl"))
                && trimmed.contains(" for ")
            {
                trait_impl_at = Some(depth);
            }
            if trait_impl_at.is_none()
                && let Some(i) = code.find("fn ")
                && (i == 0 || code[..i].ends_with(' '))
            {
                let after = &code[i + 3..];
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // The first parameter, after the name and any generics.
                let params = after.find('(').map(|p| after[p + 1..].trim_start());
                let takes_self = params.is_some_and(|p| {
                    ["&self", "&mut self", "self", "mut self", "&'"]
                        .iter()
                        .any(|s| p.starts_with(s))
                        && !p.starts_with("self_")
                });
                if !name.is_empty() && params.is_some_and(str::is_empty) {
                    params_follow = Some(name.clone());
                }
                if !name.is_empty() && takes_self {
                    let modules = out.entry(name).or_default();
                    if !modules.contains(&module) {
                        modules.push(module.clone());
                    }
                }
            }
            for c in code.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if trait_impl_at == Some(depth) {
                            trait_impl_at = None;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// A line of code with the contents of its string literals blanked (a message may name a
/// method).
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in code.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                out.push('"');
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

/// Every method called in a line of code: `.name(` and `.name::<`.
fn method_calls(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find('.') {
        let after = &rest[i + 1..];
        rest = after;
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let tail = &after[name.len()..];
        if !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && (tail.starts_with('(') || tail.starts_with("::<"))
        {
            out.push(name);
        }
    }
    out
}

/// Calls go downwards too: a module calls no method that only a higher layer defines (say,
/// a transaction's drop calling back into `Db`). A name some module at or below the caller's
/// layer also defines, or that std types have, is not counted: the check is on names, so it
/// flags only calls that can go nowhere but up.
#[test]
fn modules_call_only_downwards() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    source_files(&src, &mut files);
    files.sort();
    let defined = defined_methods(&src, &files);
    let layer_of = |m: &str| layers.get(m).copied();
    let mut problems = Vec::new();
    let mut calls = 0;
    for file in &files {
        let module = module_of(&src, file);
        let Some(layer) = layer_of(&module) else {
            continue; // `lib` and unknown modules: the import check reports those
        };
        let shown = file.strip_prefix(&src).unwrap().display().to_string();
        let text = std::fs::read_to_string(file).expect("read source");
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break; // unit tests may call anything
            }
            for name in method_calls(&without_strings(code_of(line))) {
                let Some(modules) = defined.get(&name) else {
                    continue; // not a method of this crate
                };
                calls += 1;
                if STD_NAMES.contains(&name.as_str()) {
                    continue;
                }
                let reachable = modules.iter().any(|m| {
                    m == &module
                        || m == "lib"
                        || layer_of(m).is_some_and(|l| {
                            l < layer
                                || (l == layer
                                    && SAME_LAYER.contains(&(module.as_str(), m.as_str())))
                        })
                });
                if !reachable {
                    problems.push(format!(
                        "{shown}:{}: `{module}` (layer {layer}) calls `.{name}()`, defined only in \
                         {modules:?}",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        calls > 300,
        "found only {calls} calls: is the parser still right?"
    );
    assert!(
        problems.is_empty(),
        "calls going up:\n{}",
        problems.join("\n")
    );
}

/// The call parser finds what it must: the check above can fail.
#[test]
fn the_call_parser_sees_method_calls() {
    assert_eq!(method_calls("self.db().park(raw);"), ["db", "park"]);
    assert_eq!(method_calls("x.get::<T>(k).map(f)"), ["get", "map"]);
    assert!(method_calls("let a = 1.5; s.field").is_empty());
}
