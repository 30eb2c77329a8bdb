//! The core crate's layering, checked on its source: every module imports only modules of its
//! own layer or below (so there is no import cycle between files), the engine and the codecs
//! import nothing from the rest of the crate, items are imported through their module (not the
//! crate root's re-exports, which would hide a dependency), and `unsafe` appears only in the
//! engine. `docs/design.md` ("Layers") explains the layers.
//!
//! Reads the files as text: a `crate::<module>` path anywhere in code (not in comments) is a
//! dependency on that module.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each module and its layer, lowest first. A module may use modules of a lower layer, or of
/// its own layer when the pair is listed in `SAME_LAYER` in that direction.
const LAYERS: &[(&str, u32)] = &[
    ("engine", 0),
    ("codec", 0),
    // The derive macros' support items (`lib.rs`'s `__private`) sit with the tables they seal.
    ("__private", 1),
    ("table", 1),
    // Metric names and the calls that record them; imports nothing of the crate.
    ("telemetry", 1),
    // Read-only or read-write: the marker types and what each fixes at compile time.
    ("mode", 1),
    ("error", 2),
    ("record", 3),
    ("options", 3),
    ("files", 4),
    ("state", 4),
    ("stored", 5),
    // One cursor for reads and writes (`cursor/`), and the iterators beside it; the
    // transaction makes both.
    ("cursor", 6),
    ("iter", 6),
    ("txn", 7),
    ("bulk", 8),
    ("db", 8),
    // The startup path (`startup/`: its transaction, `open`, and the schema checks).
    ("startup", 9),
    // Owned read transactions: `Db::read_owned` starts from `db`'s pooled begin.
    ("owned", 9),
    ("untyped", 10),
];

/// Same-layer dependencies allowed, as (user, used).
const SAME_LAYER: &[(&str, &str)] = &[("table", "__private"), ("state", "options")];

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

/// The top-level module a file belongs to (`engine/txn.rs` -> `engine`, `txn.rs` -> `txn`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
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
                if !allowed || ((module == "engine" || module == "codec") && dep != module) {
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
    assert_eq!(code_of("    // crate::txn in a comment"), "");
    assert_eq!(code_of("let a = 1; // crate::txn"), "let a = 1; ");
}
