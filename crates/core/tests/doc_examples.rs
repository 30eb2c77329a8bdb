//! Every public method of the user-facing types carries a compiled, running doc example.
//!
//! Reads the sources of `tabula-core` and `tabula-migrate` line by line: for each inherent
//! `impl` of `Db`, `Tx`, `Cursor` (the write cursor's writes included: `WriteCursor` is `Cursor<'_, T, Rw>`), `Iter`, `Appender`, `BulkLoad`, `Migrations`,
//! `Options`, `OwnedTx`, `OwnedIter` and `Lazy` (trait impls such as `impl Iterator for Iter` are
//! not looked at), every `pub fn` at the impl's top level must have in its doc comment a code
//! block fenced with
//! plain ```` ``` ```` or ```` ```rust ```` (which rustdoc compiles and runs; `text`, `ignore`,
//! `no_run` and `compile_fail` blocks do not count) that asserts something (`assert`).

use std::fmt;
use std::path::{Path, PathBuf};

/// The types whose public methods must have an example.
const TYPES: &[&str] = &[
    "Db",
    "Tx",
    "Cursor",
    "Iter",
    "Appender",
    "BulkLoad",
    "Migrations",
    "Options",
    "OwnedTx",
    "OwnedIter",
    "Lazy",
];

/// A public method found in one of the impls.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Method {
    file: String,
    line: usize,
    ty: String,
    name: String,
    /// Whether its doc comment holds a compiled example that asserts.
    has_example: bool,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}::{}", self.file, self.line, self.ty, self.name)
    }
}

/// The type an `impl` line is for, when it is an inherent impl: `impl<'a, T: X> Tx<'a, T> {`
/// gives `Tx`; `impl<T> Iterator for Iter<'_, T> {` gives `None`.
fn inherent_impl_type(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("impl")?;
    if !(rest.starts_with('<') || rest.starts_with(' ')) || line.contains(" for ") {
        return None;
    }
    // Skip the impl's own generics, `<...>` with nesting.
    let mut rest = rest.trim_start();
    if rest.starts_with('<') {
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = rest[end? + 1..].trim_start();
    }
    let len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..len])
}

/// The method name of a `pub fn` line at an impl's top level (four spaces in).
fn public_method(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("    pub ")?;
    let mut rest = rest;
    for qualifier in ["const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..len])
}

/// Whether the doc comment lines (without their `///`) hold a code block that rustdoc compiles
/// and runs and that asserts something.
fn has_running_example(doc: &[&str]) -> bool {
    let mut in_block: Option<(usize, bool)> = None; // (fence length, counts)
    let mut asserts = false;
    for line in doc {
        let line = line.trim_start();
        let fence = line.chars().take_while(|&c| c == '`').count();
        match in_block {
            None if fence >= 3 => {
                let info = line[fence..].trim();
                let runs = info
                    .split(',')
                    .map(str::trim)
                    .all(|token| token.is_empty() || token == "rust");
                in_block = Some((fence, runs));
                asserts = false;
            }
            None => {}
            Some((open, runs)) if fence >= open && line[fence..].trim().is_empty() => {
                if runs && asserts {
                    return true;
                }
                in_block = None;
            }
            Some(_) => asserts |= line.contains("assert"),
        }
    }
    false
}

/// The public methods of the checked types in one source file.
fn methods_in(file: &str, source: &str) -> Vec<Method> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let mut current: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some(ty) = inherent_impl_type(line) {
            current = TYPES.contains(&ty).then_some(ty);
            continue;
        }
        if *line == "}" {
            current = None;
            continue;
        }
        let (Some(ty), Some(name)) = (current, public_method(line)) else {
            continue;
        };
        // The doc comment: the `///` lines above, past any attributes.
        let mut doc = Vec::new();
        for above in lines[..i].iter().rev() {
            let above = above.trim_start();
            if let Some(text) = above.strip_prefix("///") {
                doc.push(text);
            } else if !above.starts_with("#[") {
                break;
            }
        }
        doc.reverse();
        found.push(Method {
            file: file.to_string(),
            line: i + 1,
            ty: ty.to_string(),
            name: name.to_string(),
            has_example: has_running_example(&doc),
        });
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_public_method_has_a_compiled_example() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = core
        .join("../..")
        .canonicalize()
        .expect("the workspace directory");
    let mut files = Vec::new();
    rust_files(&core.join("src"), &mut files);
    rust_files(&workspace.join("crates/migrate/src"), &mut files);
    let mut methods = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let shown = path.strip_prefix(&workspace).unwrap_or(path);
        methods.extend(methods_in(&shown.display().to_string(), &source));
    }
    for ty in TYPES {
        let of_type: Vec<_> = methods.iter().filter(|m| m.ty == *ty).collect();
        println!(
            "{ty}: {} public methods: {}",
            of_type.len(),
            of_type
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        // Guards the parser: a type it no longer finds would pass vacuously.
        assert!(
            !of_type.is_empty(),
            "no public method of `{ty}` found in {} files: has the impl moved or changed form?",
            files.len()
        );
    }
    let missing: Vec<String> = methods
        .iter()
        .filter(|m| !m.has_example)
        .map(|m| m.to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "public methods without a compiled example (a ``` or ```rust block in the doc comment \
         that asserts something; ```text, ignore and no_run do not count):\n  {}",
        missing.join("\n  ")
    );
}

/// The check itself: it flags a method without an example, with only a `text`, `ignore` or
/// `no_run` block, or with an example that asserts nothing, and only methods of inherent impls
/// of the checked types.
#[test]
fn the_check_flags_missing_text_and_ignored_examples() {
    let source = r#"
impl<'db, S: Schema> Tx<'db, S, Rw> {
    /// Good.
    ///
    /// ```
    /// # let x = 1;
    /// assert_eq!(x, 1);
    /// ```
    #[inline]
    pub fn good(&self) {}

    /// Good too.
    ///
    /// ```rust
    /// assert!(true);
    /// ```
    pub fn good_rust(&self) {}

    /// No example.
    pub fn none(&self) {}

    /// ```text
    /// assert!(tx.get()?);
    /// ```
    pub fn text(&self) {}

    /// ```ignore
    /// assert!(tx.get()?);
    /// ```
    pub fn ignored(&self) {}

    /// ```no_run
    /// assert!(tx.get()?);
    /// ```
    pub fn not_run(&self) {}

    /// ```
    /// let _ = 1;
    /// ```
    pub fn asserts_nothing(&self) {}

    /// Not public.
    pub(crate) fn internal(&self) {}
}

impl<T: Table> Iterator for Iter<'_, T> {
    pub fn next(&mut self) {}
}

impl Unrelated {
    pub fn other(&self) {}
}
"#;
    let found: Vec<(String, bool)> = methods_in("x.rs", source)
        .into_iter()
        .map(|m| (format!("{}::{}", m.ty, m.name), m.has_example))
        .collect();
    let expected = [
        ("Tx::good", true),
        ("Tx::good_rust", true),
        ("Tx::none", false),
        ("Tx::text", false),
        ("Tx::ignored", false),
        ("Tx::not_run", false),
        ("Tx::asserts_nothing", false),
    ];
    assert_eq!(
        found,
        expected
            .iter()
            .map(|(n, ok)| (n.to_string(), *ok))
            .collect::<Vec<_>>()
    );
    assert_eq!(inherent_impl_type("impl Migrations {"), Some("Migrations"));
    assert_eq!(
        inherent_impl_type(
            "impl<'db, 'f, S: Schema + Contains<T>, T: Table> BulkLoad<'db, 'f, S, T> {"
        ),
        Some("BulkLoad")
    );
    assert_eq!(inherent_impl_type("impl Upgrade for Migrations {"), None);
}
