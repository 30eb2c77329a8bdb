//! A value type's identity: its structure in serde's data model, without the names of its types.
//!
//! Two value types are the same to the startup step when their [`Structure`]s agree: the same
//! primitives, options, sequences, maps and tuples, and containers of the same kind with the
//! same field names (in order) and the same variants (names and indices, in order). The names
//! of the types themselves — and so their module paths, imports and aliases — are not part of it:
//! a type moved, renamed or aliased is the same type when nothing else changed. Field and variant
//! names are part of it, so a renamed field is a change (the code that reads the value changed
//! even if bincode's bytes did not).
//!
//! A `Structure` is built from a recorded or freshly traced serde-reflection shape (`(Format,
//! Registry)`), expanding each named container where it is used; a container used inside itself
//! becomes [`Structure::Recursive`], counting containers outwards. Parts a trace could not reach
//! are [`Structure::Unknown`] and agree with anything.

use serde::{Deserialize, Serialize};
use serde_reflection::{ContainerFormat, Format, Named, Registry, VariantFormat};

/// Nodes a structure may have: beyond this (only for types that use one deep type many times
/// over) the comparison falls back to the recorded text.
const MAX_NODES: usize = 200_000;

/// A value type's structure; see the module documentation. Serialised (JSON) into the schema
/// record for types whose trace did not finish.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Structure {
    /// Not reached by the trace: agrees with anything.
    Unknown,
    Unit,
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F32,
    F64,
    Char,
    Str,
    Bytes,
    Option(Box<Structure>),
    Seq(Box<Structure>),
    Map(Box<Structure>, Box<Structure>),
    /// A tuple whose parts are not all the same.
    Tuple(Vec<Structure>),
    /// A tuple of `n ≥ 2` equal parts, e.g. `[u8; 32]`.
    Array(Box<Structure>, usize),
    /// A named container: its serde name (shown in messages, not compared) and body.
    Container(String, Body),
    /// The container this many containers outwards (0: the innermost enclosing one).
    Recursive(usize),
}

/// What a container or an enum variant holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Body {
    /// A unit struct, or a unit variant.
    Unit,
    Newtype(Box<Structure>),
    Tuple(Vec<Structure>),
    Struct(Vec<(String, Structure)>),
    /// Variants in index order: index, name, content (`None`: not reached by the trace).
    Enum(Vec<(u32, String, Option<Body>)>),
}

impl Structure {
    /// The structure of a recorded shape (serde-reflection's `(Format, Registry)` as JSON).
    pub(crate) fn of_shape(shape: &str) -> Result<Structure, String> {
        let (format, registry): (Format, Registry) = serde_json::from_str(shape)
            .map_err(|e| format!("the recorded shape does not parse ({e})"))?;
        Structure::of_formats(&format, &registry)
    }

    /// The structure of `format`, with containers from `registry`.
    pub(crate) fn of_formats(format: &Format, registry: &Registry) -> Result<Structure, String> {
        let mut b = Builder {
            registry,
            stack: Vec::new(),
            nodes: 0,
        };
        b.format(format)
    }

    /// The structure of a partial record (JSON of a `Structure`).
    pub(crate) fn of_partial(json: &str) -> Result<Structure, String> {
        serde_json::from_str(json)
            .map_err(|e| format!("the recorded partial shape does not parse ({e})"))
    }

    /// This structure as a partial record.
    pub(crate) fn to_partial(&self) -> String {
        serde_json::to_string(self).expect("a structure always serialises")
    }

    fn prim_name(&self) -> Option<&'static str> {
        Some(match self {
            Structure::Unit => "()",
            Structure::Bool => "bool",
            Structure::I8 => "i8",
            Structure::I16 => "i16",
            Structure::I32 => "i32",
            Structure::I64 => "i64",
            Structure::I128 => "i128",
            Structure::U8 => "u8",
            Structure::U16 => "u16",
            Structure::U32 => "u32",
            Structure::U64 => "u64",
            Structure::U128 => "u128",
            Structure::F32 => "f32",
            Structure::F64 => "f64",
            Structure::Char => "char",
            Structure::Str => "String",
            Structure::Bytes => "bytes",
            _ => return None,
        })
    }

    /// The name of the outermost container, if the structure is one.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            Structure::Container(name, _) => Some(name),
            _ => None,
        }
    }
}

struct Builder<'r> {
    registry: &'r Registry,
    /// Names of the containers being expanded, outermost first.
    stack: Vec<String>,
    nodes: usize,
}

impl Builder<'_> {
    fn format(&mut self, format: &Format) -> Result<Structure, String> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(format!("the structure has more than {MAX_NODES} parts"));
        }
        Ok(match format {
            Format::Variable(v) => {
                let known = v.borrow().clone();
                match known {
                    Some(known) => return self.format(&known),
                    None => Structure::Unknown,
                }
            }
            Format::TypeName(name) => {
                if let Some(pos) = self.stack.iter().rposition(|n| n == name) {
                    return Ok(Structure::Recursive(self.stack.len() - 1 - pos));
                }
                let registry = self.registry;
                let container = registry
                    .get(name)
                    .ok_or_else(|| format!("the shape names a type `{name}` it does not define"))?;
                self.stack.push(name.clone());
                let body = self.container(container);
                self.stack.pop();
                Structure::Container(name.clone(), body?)
            }
            Format::Unit => Structure::Unit,
            Format::Bool => Structure::Bool,
            Format::I8 => Structure::I8,
            Format::I16 => Structure::I16,
            Format::I32 => Structure::I32,
            Format::I64 => Structure::I64,
            Format::I128 => Structure::I128,
            Format::U8 => Structure::U8,
            Format::U16 => Structure::U16,
            Format::U32 => Structure::U32,
            Format::U64 => Structure::U64,
            Format::U128 => Structure::U128,
            Format::F32 => Structure::F32,
            Format::F64 => Structure::F64,
            Format::Char => Structure::Char,
            Format::Str => Structure::Str,
            Format::Bytes => Structure::Bytes,
            Format::Option(f) => Structure::Option(Box::new(self.format(f)?)),
            Format::Seq(f) => Structure::Seq(Box::new(self.format(f)?)),
            Format::Map { key, value } => {
                Structure::Map(Box::new(self.format(key)?), Box::new(self.format(value)?))
            }
            Format::Tuple(parts) => {
                let parts = parts
                    .iter()
                    .map(|p| self.format(p))
                    .collect::<Result<Vec<_>, _>>()?;
                tuple(parts)
            }
            Format::TupleArray { content, size } => {
                let content = self.format(content)?;
                match size {
                    0 => Structure::Tuple(Vec::new()),
                    1 => Structure::Tuple(vec![content]),
                    n => Structure::Array(Box::new(content), *n),
                }
            }
        })
    }

    fn container(&mut self, container: &ContainerFormat) -> Result<Body, String> {
        Ok(match container {
            ContainerFormat::UnitStruct => Body::Unit,
            ContainerFormat::NewTypeStruct(f) => Body::Newtype(Box::new(self.format(f)?)),
            ContainerFormat::TupleStruct(parts) => Body::Tuple(
                parts
                    .iter()
                    .map(|p| self.format(p))
                    .collect::<Result<_, _>>()?,
            ),
            ContainerFormat::Struct(fields) => Body::Struct(self.fields(fields)?),
            ContainerFormat::Enum(variants) => Body::Enum(
                variants
                    .iter()
                    .map(|(&index, v)| Ok((index, v.name.clone(), self.variant(&v.value)?)))
                    .collect::<Result<_, String>>()?,
            ),
        })
    }

    fn fields(&mut self, fields: &[Named<Format>]) -> Result<Vec<(String, Structure)>, String> {
        fields
            .iter()
            .map(|f| Ok((f.name.clone(), self.format(&f.value)?)))
            .collect()
    }

    fn variant(&mut self, variant: &VariantFormat) -> Result<Option<Body>, String> {
        Ok(Some(match variant {
            VariantFormat::Variable(v) => {
                let known = v.borrow().clone();
                match known {
                    None => return Ok(None),
                    Some(known) => return self.variant(&known),
                }
            }
            VariantFormat::Unit => Body::Unit,
            VariantFormat::NewType(f) => Body::Newtype(Box::new(self.format(f)?)),
            VariantFormat::Tuple(parts) => Body::Tuple(
                parts
                    .iter()
                    .map(|p| self.format(p))
                    .collect::<Result<_, _>>()?,
            ),
            VariantFormat::Struct(fields) => Body::Struct(self.fields(fields)?),
        }))
    }
}

/// A tuple, as an array when its two or more parts all agree.
fn tuple(parts: Vec<Structure>) -> Structure {
    if parts.len() > 1 && parts.iter().all(|p| same(p, &parts[0])) {
        let n = parts.len();
        let first = parts.into_iter().next().expect("two or more parts");
        Structure::Array(Box::new(first), n)
    } else {
        Structure::Tuple(parts)
    }
}

/// Whether two structures are equal, container names aside; unknown parts agree with anything.
pub(crate) fn same(a: &Structure, b: &Structure) -> bool {
    use Structure as S;
    match (a, b) {
        (S::Unknown, _) | (_, S::Unknown) => true,
        (S::Option(a), S::Option(b)) | (S::Seq(a), S::Seq(b)) => same(a, b),
        (S::Map(ak, av), S::Map(bk, bv)) => same(ak, bk) && same(av, bv),
        (S::Tuple(a), S::Tuple(b)) => all_same(a, b),
        (S::Array(a, n), S::Array(b, m)) => n == m && same(a, b),
        (S::Container(_, a), S::Container(_, b)) => same_body(a, b),
        (S::Recursive(a), S::Recursive(b)) => a == b,
        (a, b) => a.prim_name().is_some() && a.prim_name() == b.prim_name(),
    }
}

fn all_same(a: &[Structure], b: &[Structure]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
}

fn same_fields(a: &[(String, Structure)], b: &[(String, Structure)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((an, a), (bn, b))| an == bn && same(a, b))
}

fn same_body(a: &Body, b: &Body) -> bool {
    match (a, b) {
        (Body::Unit, Body::Unit) => true,
        (Body::Newtype(a), Body::Newtype(b)) => same(a, b),
        (Body::Tuple(a), Body::Tuple(b)) => all_same(a, b),
        (Body::Struct(a), Body::Struct(b)) => same_fields(a, b),
        (Body::Enum(a), Body::Enum(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|((ai, an, a), (bi, bn, b))| {
                    ai == bi
                        && an == bn
                        && match (a, b) {
                            (Some(a), Some(b)) => same_body(a, b),
                            _ => true,
                        }
                })
        }
        _ => false,
    }
}

/// The outermost container with its fields or variants, e.g. `Event { a: u64, kinds: [Kind] }`;
/// other structures as [`render`]. Cut at about `limit` characters.
pub(crate) fn outline(s: &Structure, limit: usize) -> String {
    let mut out = String::new();
    let mut r = Render {
        stack: Vec::new(),
        out: &mut out,
    };
    match s {
        Structure::Container(name, body) => {
            r.stack.push(name.clone());
            r.out.push_str(name);
            r.body(body, false);
        }
        s => r.short(s),
    }
    if out.chars().count() > limit {
        let mut cut: String = out.chars().take(limit).collect();
        cut.push_str(" …");
        cut
    } else {
        out
    }
}

struct Render<'o> {
    stack: Vec<String>,
    out: &'o mut String,
}

impl Render<'_> {
    fn short(&mut self, s: &Structure) {
        if let Some(p) = s.prim_name() {
            self.out.push_str(p);
            return;
        }
        match s {
            Structure::Unknown => self.out.push('?'),
            Structure::Option(inner) => {
                self.out.push_str("Option<");
                self.short(inner);
                self.out.push('>');
            }
            Structure::Seq(inner) => {
                self.out.push('[');
                self.short(inner);
                self.out.push(']');
            }
            Structure::Map(k, v) => {
                self.out.push_str("Map<");
                self.short(k);
                self.out.push_str(", ");
                self.short(v);
                self.out.push('>');
            }
            Structure::Tuple(parts) => {
                self.out.push('(');
                self.list(parts);
                if parts.len() == 1 {
                    self.out.push(',');
                }
                self.out.push(')');
            }
            Structure::Array(inner, n) => {
                self.out.push('[');
                self.short(inner);
                self.out.push_str(&format!("; {n}]"));
            }
            Structure::Container(name, _) => self.out.push_str(name),
            Structure::Recursive(n) => {
                let name = self
                    .stack
                    .len()
                    .checked_sub(n + 1)
                    .map_or("Self", |i| self.stack[i].as_str())
                    .to_string();
                self.out.push_str(&name);
            }
            _ => unreachable!("primitives are rendered above"),
        }
    }

    fn list(&mut self, parts: &[Structure]) {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.short(p);
        }
    }

    fn fields(&mut self, fields: &[(String, Structure)]) {
        self.out.push_str(" { ");
        for (i, (name, s)) in fields.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(name);
            self.out.push_str(": ");
            self.short(s);
        }
        self.out.push_str(" }");
    }

    fn body(&mut self, body: &Body, variant: bool) {
        match body {
            Body::Unit => {}
            Body::Newtype(inner) => {
                self.out.push('(');
                self.short(inner);
                self.out.push(')');
            }
            Body::Tuple(parts) => {
                self.out.push('(');
                self.list(parts);
                self.out.push(')');
            }
            Body::Struct(fields) => self.fields(fields),
            Body::Enum(variants) if !variant => {
                self.out.push_str(" { ");
                for (i, (_, name, content)) in variants.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.out.push_str(name);
                    match content {
                        Some(content) => self.body(content, true),
                        None => self.out.push_str("(?)"),
                    }
                }
                self.out.push_str(" }");
            }
            Body::Enum(_) => {}
        }
    }
}

/// What changed from `old` to `new`, one sentence each, at most `limit` (then a count of the
/// rest). Paths start at the new type's name (or `value`) and go through fields (`.name`),
/// sequence elements (`[_]`), option contents (`?`), map keys and values (`<key>`, `<value>`),
/// tuple parts (`.0`) and enum variants (`::Name`).
///
/// Also returns the [`outline`]s (cut at `width` characters) of the innermost container holding
/// the first change, before and after (of the whole structures when no container holds it).
pub(crate) fn differences(
    old: &Structure,
    new: &Structure,
    limit: usize,
    width: usize,
) -> (Vec<String>, String, String) {
    let root = new.name().or(old.name()).unwrap_or("value").to_string();
    let mut d = Diff {
        out: Vec::new(),
        old_stack: Vec::new(),
        new_stack: Vec::new(),
        containers: Vec::new(),
        first: None,
        width,
    };
    d.structure(old, new, &root);
    if d.out.len() > limit {
        let rest = d.out.len() - limit;
        d.out.truncate(limit);
        d.out.push(format!("and {rest} more change(s)"));
    }
    let (was, now) = d
        .first
        .unwrap_or_else(|| (outline(old, width), outline(new, width)));
    (d.out, was, now)
}

struct Diff<'s> {
    out: Vec<String>,
    old_stack: Vec<String>,
    new_stack: Vec<String>,
    /// The containers being compared, innermost last.
    containers: Vec<(&'s Structure, &'s Structure)>,
    /// Outlines of the container holding the first change.
    first: Option<(String, String)>,
    width: usize,
}

impl<'s> Diff<'s> {
    fn note(&mut self, change: String) {
        if self.first.is_none() {
            self.first = self
                .containers
                .last()
                .map(|(o, n)| (outline(o, self.width), outline(n, self.width)));
        }
        self.out.push(change);
    }

    fn render_new(&self, s: &Structure) -> String {
        let mut out = String::new();
        Render {
            stack: self.new_stack.clone(),
            out: &mut out,
        }
        .short(s);
        out
    }

    fn render_old(&self, s: &Structure) -> String {
        let mut out = String::new();
        Render {
            stack: self.old_stack.clone(),
            out: &mut out,
        }
        .short(s);
        out
    }

    fn structure(&mut self, old: &'s Structure, new: &'s Structure, path: &str) {
        use Structure as S;
        match (old, new) {
            (S::Unknown, _) | (_, S::Unknown) => {}
            (S::Option(a), S::Option(b)) => self.structure(a, b, &format!("{path}?")),
            (S::Seq(a), S::Seq(b)) => self.structure(a, b, &format!("{path}[_]")),
            (S::Map(ak, av), S::Map(bk, bv)) => {
                self.structure(ak, bk, &format!("{path}<key>"));
                self.structure(av, bv, &format!("{path}<value>"));
            }
            (S::Tuple(a), S::Tuple(b)) if a.len() == b.len() => {
                for (i, (a, b)) in a.iter().zip(b).enumerate() {
                    self.structure(a, b, &format!("{path}.{i}"));
                }
            }
            (S::Array(a, n), S::Array(b, m)) if n == m => {
                self.structure(a, b, &format!("{path}[_]"));
            }
            (S::Container(on, ob), S::Container(nn, nb)) => {
                self.old_stack.push(on.clone());
                self.new_stack.push(nn.clone());
                self.containers.push((old, new));
                let at = if path == nn {
                    format!("`{nn}`")
                } else {
                    format!("`{path}` (`{nn}`)")
                };
                self.body(ob, nb, path, &at);
                self.old_stack.pop();
                self.new_stack.pop();
                self.containers.pop();
            }
            (a, b) if same(a, b) => {}
            (a, b) => {
                let (a, b) = (self.render_old(a), self.render_new(b));
                self.note(format!("`{path}`: `{a}` became `{b}`"));
            }
        }
    }

    fn body(&mut self, old: &'s Body, new: &'s Body, path: &str, at: &str) {
        let variant = path
            .rsplit('.')
            .next()
            .is_some_and(|last| last.contains("::"));
        let kind = |b: &Body| match (b, variant) {
            (Body::Unit, false) => "a unit struct",
            (Body::Newtype(_), false) => "a newtype struct",
            (Body::Tuple(_), false) => "a tuple struct",
            (Body::Struct(_), false) => "a struct",
            (Body::Unit, true) => "a unit variant",
            (Body::Newtype(_), true) => "a newtype variant",
            (Body::Tuple(_), true) => "a tuple variant",
            (Body::Struct(_), true) => "a struct variant",
            (Body::Enum(_), _) => "an enum",
        };
        match (old, new) {
            (Body::Unit, Body::Unit) => {}
            (Body::Newtype(a), Body::Newtype(b)) => self.structure(a, b, &format!("{path}.0")),
            (Body::Tuple(a), Body::Tuple(b)) if a.len() == b.len() => {
                for (i, (a, b)) in a.iter().zip(b).enumerate() {
                    self.structure(a, b, &format!("{path}.{i}"));
                }
            }
            (Body::Tuple(a), Body::Tuple(b)) => {
                self.out
                    .push(format!("{at}: {} fields became {}", a.len(), b.len()))
            }
            (Body::Struct(a), Body::Struct(b)) => self.fields(a, b, path, at, "field"),
            (Body::Enum(a), Body::Enum(b)) => self.variants(a, b, path, at),
            (a, b) => self.note(format!("{at}: {} became {}", kind(a), kind(b))),
        }
    }

    fn fields(
        &mut self,
        old: &'s [(String, Structure)],
        new: &'s [(String, Structure)],
        path: &str,
        at: &str,
        what: &str,
    ) {
        let old_names: Vec<&str> = old.iter().map(|(n, _)| n.as_str()).collect();
        let new_names: Vec<&str> = new.iter().map(|(n, _)| n.as_str()).collect();
        let removed: Vec<usize> = (0..old.len())
            .filter(|&i| !new_names.contains(&old_names[i]))
            .collect();
        let added: Vec<usize> = (0..new.len())
            .filter(|&i| !old_names.contains(&new_names[i]))
            .collect();
        if let ([r], [a]) = (removed.as_slice(), added.as_slice())
            && r == a
            && same(&old[*r].1, &new[*a].1)
        {
            self.note(format!(
                "{at}: {what} `{}` renamed to `{}`",
                old_names[*r], new_names[*a]
            ));
        } else {
            let typed = |name: &str, ty: String| match ty.as_str() {
                "?" => name.to_string(),
                _ => format!("{name}: {ty}"),
            };
            for &r in &removed {
                let field = typed(old_names[r], self.render_old(&old[r].1));
                self.note(format!("{at}: {what} `{field}` removed"));
            }
            for &a in &added {
                let field = typed(new_names[a], self.render_new(&new[a].1));
                self.note(format!("{at}: {what} `{field}` added"));
            }
        }
        let kept_old: Vec<&str> = old_names
            .iter()
            .copied()
            .filter(|n| new_names.contains(n))
            .collect();
        let kept_new: Vec<&str> = new_names
            .iter()
            .copied()
            .filter(|n| old_names.contains(n))
            .collect();
        if kept_old != kept_new {
            self.note(format!(
                "{at}: {what}s reordered from ({}) to ({})",
                kept_old.join(", "),
                kept_new.join(", ")
            ));
        }
        for (name, o) in old {
            if let Some((_, n)) = new.iter().find(|(m, _)| m == name) {
                self.structure(o, n, &format!("{path}.{name}"));
            }
        }
    }

    fn variants(
        &mut self,
        old: &'s [(u32, String, Option<Body>)],
        new: &'s [(u32, String, Option<Body>)],
        path: &str,
        at: &str,
    ) {
        // Variant names compare like field names (added, removed, renamed, reordered); their
        // contents are compared below.
        let names = |v: &[(u32, String, Option<Body>)]| -> Vec<(String, Structure)> {
            v.iter()
                .map(|(_, name, _)| (name.clone(), Structure::Unknown))
                .collect()
        };
        let (old_names, new_names) = (names(old), names(new));
        let mut by_name = Diff {
            out: Vec::new(),
            old_stack: self.old_stack.clone(),
            new_stack: self.new_stack.clone(),
            containers: self.containers.clone(),
            first: None,
            width: self.width,
        };
        by_name.fields(&old_names, &new_names, path, at, "variant");
        if self.first.is_none() {
            self.first = by_name.first;
        }
        self.out.append(&mut by_name.out);
        for (_, name, o) in old {
            if let Some((_, _, n)) = new.iter().find(|(_, m, _)| m == name)
                && let (Some(o), Some(n)) = (o, n)
            {
                let vpath = format!("{path}::{name}");
                let vat = format!("`{vpath}`");
                self.body(o, n, &vpath, &vat);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::trace::trace;

    fn structure<T: serde::de::DeserializeOwned>() -> Structure {
        let t = trace::<T>();
        assert!(t.problem.is_none(), "{:?}", t.problem);
        Structure::of_formats(&t.format, &t.registry).unwrap()
    }

    mod a {
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        pub struct Thing {
            pub id: u64,
            pub kinds: Vec<Kind>,
        }
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        pub enum Kind {
            A,
            B(u8),
        }
    }

    mod b {
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        pub struct Renamed {
            pub id: u64,
            pub kinds: Vec<Other>,
        }
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        pub enum Other {
            A,
            B(u8),
        }
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        pub struct Changed {
            pub id: u64,
            pub kinds: Vec<Other2>,
            pub extra: String,
        }
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        pub enum Other2 {
            A,
            B(u16),
            C,
        }
    }

    #[test]
    fn renamed_types_are_the_same_and_changes_are_named() {
        let a = structure::<a::Thing>();
        assert!(same(&a, &structure::<b::Renamed>()));
        let changed = structure::<b::Changed>();
        assert!(!same(&a, &changed));
        let (d, was, now) = differences(&a, &changed, 10, 100);
        assert_eq!(was, "Thing { id: u64, kinds: [Kind] }");
        assert_eq!(now, "Changed { id: u64, kinds: [Other2], extra: String }");
        assert_eq!(
            d,
            [
                "`Changed`: field `extra: String` added",
                "`Changed.kinds[_]` (`Other2`): variant `C` added",
                "`Changed.kinds[_]::B.0`: `u8` became `u16`",
            ],
            "{d:?}"
        );
        assert_eq!(outline(&a, 100), "Thing { id: u64, kinds: [Kind] }");
        assert_eq!(outline(&changed, 20), "Changed { id: u64, k …");
    }

    #[test]
    fn arrays_and_tuples_of_equal_parts_agree_as_serde_reflection_writes_them() {
        // serde-reflection writes `[u8; 3]` inside a container as a `TupleArray`, at the top as
        // a `Tuple`: both are one structure.
        let top = structure::<[u8; 3]>();
        let inner = structure::<(u8, [u8; 3])>();
        let Structure::Tuple(parts) = inner else {
            panic!("{inner:?}")
        };
        assert!(same(&top, &parts[1]), "{top:?} {:?}", parts[1]);
        assert!(matches!(top, Structure::Array(_, 3)));
    }

    #[test]
    fn partial_structures_round_trip_and_agree_where_known() {
        let s = structure::<a::Thing>();
        let back = Structure::of_partial(&s.to_partial()).unwrap();
        assert!(same(&s, &back));
        assert!(same(&Structure::Unknown, &s));
    }
}
