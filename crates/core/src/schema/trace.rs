//! Tracing a serde value type's structure: what [`Bincode<T>`](crate::codec::Bincode) records
//! in the schema record, so that a changed type is caught at open.
//!
//! The tracer is a serde `Deserializer` that never reads bytes: it answers each request of
//! `T::deserialize` with a sample value and records what was asked (serde's data model:
//! primitives, options, sequences, maps, tuples, and named containers with their field and
//! variant names). One call of `T::deserialize` builds one value, so it sees one variant of each
//! enum it passes through; the tracer therefore runs passes until every variant of every enum
//! and the content of every option, sequence and map has been seen:
//!
//! - an enum visited for the first time on a path takes its first variant not traced yet;
//!   options, sequences and maps are entered (`Some`, one element, one entry) while something
//!   inside them is still unknown — this is where serde-reflection stops, which left enums
//!   reached only through a `Vec`, `Option` or map without a shape;
//! - a container entered again inside itself (a recursive type) is built the shortest way known:
//!   `None`, empty sequences and maps, a variant known to end;
//! - a primitive whose sample the type refuses (a `NonZeroU64` refuses 0, a parsed string
//!   refuses "") gets the next sample in the following pass.
//!
//! Containers are told apart by their Rust type (not their serde name), so two types with the
//! same name in one value are two containers. Nothing of the result depends on Rust's type
//! names: only serde's container, field and variant names and the order of fields and variants,
//! so it is the same in every build. A type that cannot be traced to the end (its `Deserialize`
//! needs a self-describing format, or refuses every sample) yields what was seen and why it
//! stopped.

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};
use serde_reflection::{ContainerFormat, Format, Named, Registry, VariantFormat};

use super::identity::Structure;

/// What [`Value::trace`](crate::codec::Value::trace) found about a codec's stored format.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueTrace {
    /// The codec has no structure to trace (raw bytes, a custom codec): its descriptor
    /// identifies the format.
    Opaque,
    /// The whole structure: serde-reflection's `(Format, Registry)` as JSON, as
    /// [`Value::shape`](crate::codec::Value::shape) returns it.
    Complete(String),
    /// The trace stopped before seeing every part of the type.
    Partial {
        /// What it saw, with the parts it did not reach left unknown (Tabula's own JSON form).
        structure: String,
        /// Why it stopped.
        problem: String,
    },
}

/// `T`'s trace as the schema record keeps it: serde-reflection's `(Format, Registry)` as JSON
/// when the trace finished, else what it saw as a [`Structure`]'s partial JSON and why it
/// stopped. What [`Bincode<T>`](crate::codec::Bincode) records.
pub(crate) fn serde_trace<T: DeserializeOwned>() -> ValueTrace {
    let traced = trace::<T>();
    match traced.problem {
        None => ValueTrace::Complete(
            serde_json::to_string(&(traced.format, traced.registry))
                .expect("a complete shape holds no variables and serialises"),
        ),
        Some(problem) => ValueTrace::Partial {
            structure: Structure::of_formats(&traced.format, &traced.registry)
                .unwrap_or(Structure::Unknown)
                .to_partial(),
            problem,
        },
    }
}

/// What tracing a type found: serde-reflection's `(Format, Registry)` form, with unknown parts
/// left as unknown formats when the trace did not finish.
pub(crate) struct Traced {
    /// The format of the type itself.
    pub format: Format,
    /// Every named container reached, by name.
    pub registry: Registry,
    /// Why the trace stopped before seeing everything; `None` when it is complete.
    pub problem: Option<String>,
}

/// Passes before the tracer gives up (each pass traces one value of the type).
const MAX_PASSES: usize = 100_000;
/// Nested containers in one pass before the tracer gives up.
const MAX_DEPTH: usize = 512;

/// Traces `T`'s structure.
pub(crate) fn trace<T: DeserializeOwned>() -> Traced {
    let mut tracer = Tracer::default();
    let root = tracer.new_node();
    let mut problem = None;
    // What is known is summed up once after each pass: for the check of whether anything is
    // still unknown and for the next pass alike (nothing changes in between).
    tracer.begin_pass();
    for _pass in 0..MAX_PASSES {
        let result = T::deserialize(At {
            t: &mut tracer,
            node: root,
        });
        let progress = tracer.progress;
        tracer.begin_pass();
        match result {
            Ok(_) => {
                if !tracer.node_wants(root) {
                    break;
                }
                if !progress {
                    problem = Some("tracing stopped making progress".to_string());
                    break;
                }
            }
            Err(e) if !progress => {
                problem = Some(e.0);
                break;
            }
            Err(_) => {}
        }
    }
    if problem.is_none() && tracer.node_wants(root) {
        problem = Some(format!("tracing took more than {MAX_PASSES} passes"));
    }
    tracer.output(root, problem)
}

/// A tracing error: a message.
#[derive(Debug)]
struct TraceError(String);

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TraceError {}

impl de::Error for TraceError {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        TraceError(msg.to_string())
    }
}

type Result<T> = std::result::Result<T, TraceError>;
type NodeId = usize;
type Cid = usize;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Prim {
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
}

impl Prim {
    fn format(self) -> Format {
        match self {
            Prim::Unit => Format::Unit,
            Prim::Bool => Format::Bool,
            Prim::I8 => Format::I8,
            Prim::I16 => Format::I16,
            Prim::I32 => Format::I32,
            Prim::I64 => Format::I64,
            Prim::I128 => Format::I128,
            Prim::U8 => Format::U8,
            Prim::U16 => Format::U16,
            Prim::U32 => Format::U32,
            Prim::U64 => Format::U64,
            Prim::U128 => Format::U128,
            Prim::F32 => Format::F32,
            Prim::F64 => Format::F64,
            Prim::Char => Format::Char,
            Prim::Str => Format::Str,
            Prim::Bytes => Format::Bytes,
        }
    }
}

/// One place in the type where a value goes.
#[derive(Clone, Debug)]
enum Node {
    Unknown,
    Prim(Prim),
    Option(NodeId),
    Seq(NodeId),
    Map(NodeId, NodeId),
    Tuple(Vec<NodeId>),
    Ref(Cid),
}

#[derive(Debug)]
struct Slot {
    node: Node,
    /// Which sample the next pass offers (advanced when the type refuses one).
    sample: usize,
}

#[derive(Debug)]
enum Content {
    Unit,
    Newtype(NodeId),
    Tuple(Vec<NodeId>),
    Struct(Vec<(&'static str, NodeId)>),
}

#[derive(Debug)]
enum Body {
    Unit,
    Newtype(NodeId),
    Tuple(Vec<NodeId>),
    Struct(Vec<(&'static str, NodeId)>),
    /// Variants in index order; `None` until the variant has been traced.
    Enum(Vec<(&'static str, Option<Content>)>),
}

#[derive(Debug)]
struct Container {
    name: &'static str,
    body: Body,
}

#[derive(Default)]
struct Tracer {
    slots: Vec<Slot>,
    containers: Vec<Container>,
    by_type: HashMap<TypeId, Cid, BuildHasherDefault<TypeIdHasher>>,
    /// Containers being built in this pass, outermost first.
    stack: Vec<Cid>,
    /// Above zero inside a container entered again inside itself: build the shortest way.
    finishing: usize,
    /// Whether this pass learned anything.
    progress: bool,
    /// Per container, at the start of the pass: something reachable from it is unknown.
    wants: Vec<bool>,
    /// Per container, at the start of the pass: a value of it can be built without entering
    /// unknown parts (options empty, sequences and maps empty, some variant known to end).
    ends: Vec<bool>,
}

/// The hasher of [`Tracer::by_type`]: a `TypeId` is already a hash of the type, so its bits
/// are mixed once instead of through SipHash (a lookup per container per pass). Also hashes
/// the container names of [`Tracer::output`] (the type's own names, not outside input).
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(32) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

const STR_SAMPLES: &[&str] = &[
    "",
    "0",
    "a",
    "1970-01-01T00:00:00Z",
    "1970-01-01",
    "00:00:00",
    "00000000-0000-0000-0000-000000000000",
    "127.0.0.1",
    "http://localhost/",
];
const BYTES_SAMPLES: &[&[u8]] = &[&[], &[0; 16], &[0; 32], &[0; 20], &[0; 8], &[0; 4]];
const CHAR_SAMPLES: &[char] = &['a', '0', ' '];
const INT_SAMPLES: usize = 2; // 0, 1
const FLOAT_SAMPLES: &[f64] = &[0.0, 1.0];

impl Tracer {
    fn new_node(&mut self) -> NodeId {
        self.slots.push(Slot {
            node: Node::Unknown,
            sample: 0,
        });
        self.progress = true;
        self.slots.len() - 1
    }

    fn new_nodes(&mut self, n: usize) -> Vec<NodeId> {
        (0..n).map(|_| self.new_node()).collect()
    }

    fn conflict(&self, node: NodeId, asked: &str) -> TraceError {
        TraceError(format!(
            "the type's `Deserialize` asked for {asked} where it asked for {:?} before: its \
             structure depends on the data (untagged or flattened), which bincode cannot store",
            self.slots[node].node
        ))
    }

    /// Records that `node` is primitive `p`; returns the sample to offer.
    fn prim(&mut self, node: NodeId, p: Prim) -> Result<usize> {
        match self.slots[node].node {
            Node::Unknown => {
                self.slots[node].node = Node::Prim(p);
                self.progress = true;
            }
            Node::Prim(q) if q == p => {}
            _ => return Err(self.conflict(node, &format!("{p:?}"))),
        }
        Ok(self.slots[node].sample)
    }

    /// Passes on the visitor's answer to a sample; when the type refused it, the next pass
    /// offers the next of `samples` samples.
    fn answer<T>(&mut self, node: NodeId, result: Result<T>, samples: usize) -> Result<T> {
        if result.is_err() && self.slots[node].sample + 1 < samples {
            self.slots[node].sample += 1;
            self.progress = true;
        }
        result
    }

    fn option(&mut self, node: NodeId) -> Result<NodeId> {
        match self.slots[node].node {
            Node::Unknown => {
                let inner = self.new_node();
                self.slots[node].node = Node::Option(inner);
                Ok(inner)
            }
            Node::Option(inner) => Ok(inner),
            _ => Err(self.conflict(node, "an option")),
        }
    }

    fn seq(&mut self, node: NodeId) -> Result<NodeId> {
        match self.slots[node].node {
            Node::Unknown => {
                let inner = self.new_node();
                self.slots[node].node = Node::Seq(inner);
                Ok(inner)
            }
            Node::Seq(inner) => Ok(inner),
            _ => Err(self.conflict(node, "a sequence")),
        }
    }

    fn map(&mut self, node: NodeId) -> Result<(NodeId, NodeId)> {
        match self.slots[node].node {
            Node::Unknown => {
                let (k, v) = (self.new_node(), self.new_node());
                self.slots[node].node = Node::Map(k, v);
                Ok((k, v))
            }
            Node::Map(k, v) => Ok((k, v)),
            _ => Err(self.conflict(node, "a map")),
        }
    }

    fn tuple(&mut self, node: NodeId, len: usize) -> Result<Vec<NodeId>> {
        match &self.slots[node].node {
            Node::Unknown => {
                let parts = self.new_nodes(len);
                self.slots[node].node = Node::Tuple(parts.clone());
                Ok(parts)
            }
            Node::Tuple(parts) if parts.len() == len => Ok(parts.clone()),
            _ => Err(self.conflict(node, &format!("a tuple of {len}"))),
        }
    }

    fn reference(&mut self, node: NodeId, cid: Cid) -> Result<()> {
        match self.slots[node].node {
            Node::Unknown => {
                self.slots[node].node = Node::Ref(cid);
                self.progress = true;
                Ok(())
            }
            Node::Ref(c) if c == cid => Ok(()),
            _ => Err(self.conflict(node, &format!("`{}`", self.containers[cid].name))),
        }
    }

    /// The container of Rust type `ty`, created with `make` on first sight; `fits` checks that
    /// a container seen before is asked for in the same way.
    fn container(
        &mut self,
        ty: TypeId,
        name: &'static str,
        make: impl FnOnce(&mut Self) -> Body,
        fits: impl FnOnce(&Body) -> bool,
    ) -> Result<Cid> {
        if let Some(&cid) = self.by_type.get(&ty) {
            let c = &self.containers[cid];
            if c.name != name || !fits(&c.body) {
                return Err(TraceError(format!(
                    "the `Deserialize` of `{name}` describes it differently from one pass to \
                     the next"
                )));
            }
            return Ok(cid);
        }
        let body = make(self);
        self.containers.push(Container { name, body });
        let cid = self.containers.len() - 1;
        self.by_type.insert(ty, cid);
        self.progress = true;
        Ok(cid)
    }

    /// Enters container `cid`; returns whether it was entered inside itself.
    fn enter(&mut self, cid: Cid) -> Result<bool> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(TraceError(format!(
                "more than {MAX_DEPTH} nested containers: `{}` has no value of finite size that \
                 the tracer can find",
                self.containers[cid].name
            )));
        }
        let again = self.stack.contains(&cid);
        self.stack.push(cid);
        if again {
            self.finishing += 1;
        }
        Ok(again)
    }

    fn leave(&mut self, again: bool) {
        self.stack.pop();
        if again {
            self.finishing -= 1;
        }
    }

    fn exploring(&self) -> bool {
        self.finishing == 0
    }

    /// The variant to build in this pass.
    fn pick_variant(&self, cid: Cid, again: bool) -> u32 {
        let Body::Enum(variants) = &self.containers[cid].body else {
            unreachable!("pick_variant on an enum")
        };
        let untraced = variants.iter().position(|(_, c)| c.is_none());
        let ends = variants
            .iter()
            .position(|(_, c)| c.as_ref().is_some_and(|c| self.content_ends(c)));
        let pick = if self.exploring() && !again {
            let wanting = variants
                .iter()
                .position(|(_, c)| c.as_ref().is_some_and(|c| self.content_wants(c)));
            untraced.or(wanting).or(ends)
        } else {
            ends.or(untraced)
        };
        pick.unwrap_or(0) as u32
    }

    /// Recomputes, from what is known, which containers still hold unknown parts and which can
    /// be built without entering unknown parts.
    fn begin_pass(&mut self) {
        self.stack.clear();
        self.finishing = 0;
        self.progress = false;
        let n = self.containers.len();
        // Refilled in place: one allocation per trace rather than two per pass.
        self.wants.clear();
        self.wants.resize(n, false);
        self.ends.clear();
        self.ends.resize(n, false);
        loop {
            let mut changed = false;
            for cid in 0..n {
                if !self.wants[cid] && self.body_wants(&self.containers[cid].body) {
                    self.wants[cid] = true;
                    changed = true;
                }
                if !self.ends[cid] && self.body_ends(&self.containers[cid].body) {
                    self.ends[cid] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    fn node_wants(&self, node: NodeId) -> bool {
        match &self.slots[node].node {
            Node::Unknown => true,
            Node::Prim(_) => false,
            Node::Option(n) | Node::Seq(n) => self.node_wants(*n),
            Node::Map(k, v) => self.node_wants(*k) || self.node_wants(*v),
            Node::Tuple(parts) => parts.iter().any(|&p| self.node_wants(p)),
            // A container created during this pass counts as wanting until the next.
            Node::Ref(c) => self.wants.get(*c).copied().unwrap_or(true),
        }
    }

    fn node_ends(&self, node: NodeId) -> bool {
        match &self.slots[node].node {
            Node::Unknown => false,
            Node::Prim(_) | Node::Option(_) | Node::Seq(_) | Node::Map(..) => true,
            Node::Tuple(parts) => parts.iter().all(|&p| self.node_ends(p)),
            Node::Ref(c) => self.ends.get(*c).copied().unwrap_or(false),
        }
    }

    fn content_wants(&self, content: &Content) -> bool {
        match content {
            Content::Unit => false,
            Content::Newtype(n) => self.node_wants(*n),
            Content::Tuple(parts) => parts.iter().any(|&p| self.node_wants(p)),
            Content::Struct(fields) => fields.iter().any(|&(_, p)| self.node_wants(p)),
        }
    }

    fn content_ends(&self, content: &Content) -> bool {
        match content {
            Content::Unit => true,
            Content::Newtype(n) => self.node_ends(*n),
            Content::Tuple(parts) => parts.iter().all(|&p| self.node_ends(p)),
            Content::Struct(fields) => fields.iter().all(|&(_, p)| self.node_ends(p)),
        }
    }

    fn body_wants(&self, body: &Body) -> bool {
        match body {
            Body::Unit => false,
            Body::Newtype(n) => self.node_wants(*n),
            Body::Tuple(parts) => parts.iter().any(|&p| self.node_wants(p)),
            Body::Struct(fields) => fields.iter().any(|&(_, p)| self.node_wants(p)),
            Body::Enum(variants) => variants
                .iter()
                .any(|(_, c)| c.as_ref().is_none_or(|c| self.content_wants(c))),
        }
    }

    fn body_ends(&self, body: &Body) -> bool {
        match body {
            Body::Unit => true,
            Body::Newtype(n) => self.node_ends(*n),
            Body::Tuple(parts) => parts.iter().all(|&p| self.node_ends(p)),
            Body::Struct(fields) => fields.iter().all(|&(_, p)| self.node_ends(p)),
            Body::Enum(variants) => variants
                .iter()
                .any(|(_, c)| c.as_ref().is_some_and(|c| self.content_ends(c))),
        }
    }

    /// Records the content of variant `index` of enum `cid` (made by `make` the first time);
    /// `fits` checks a content recorded before.
    fn content<T>(
        &mut self,
        cid: Cid,
        index: u32,
        make: impl FnOnce(&mut Self) -> Content,
        fits: impl FnOnce(&Content) -> Option<T>,
        fresh: impl FnOnce(&Content) -> T,
    ) -> Result<T> {
        let index = index as usize;
        let known = match &self.containers[cid].body {
            Body::Enum(variants) => variants[index].1.as_ref().map(fits),
            _ => unreachable!("content of an enum"),
        };
        match known {
            Some(Some(found)) => Ok(found),
            Some(None) => Err(TraceError(format!(
                "the `Deserialize` of `{}` describes a variant differently from one pass to the \
                 next",
                self.containers[cid].name
            ))),
            None => {
                let content = make(self);
                let found = fresh(&content);
                if let Body::Enum(variants) = &mut self.containers[cid].body {
                    variants[index].1 = Some(content);
                }
                self.progress = true;
                Ok(found)
            }
        }
    }

    /// The result: formats for every node, registry names for every container (the serde name;
    /// a second container with the same name gets `#2`, `#3`, ..).
    fn output(&self, root: NodeId, problem: Option<String>) -> Traced {
        let mut names: Vec<String> = Vec::with_capacity(self.containers.len());
        let mut seen: HashMap<&str, usize, BuildHasherDefault<TypeIdHasher>> = HashMap::default();
        for c in &self.containers {
            let count = seen.entry(c.name).or_insert(0);
            *count += 1;
            names.push(if *count == 1 {
                c.name.to_string()
            } else {
                format!("{}#{count}", c.name)
            });
        }
        let format_of = |node| self.format(node, &names);
        let fields = |fields: &[(&'static str, NodeId)]| {
            fields
                .iter()
                .map(|&(name, node)| Named {
                    name: name.to_string(),
                    value: format_of(node),
                })
                .collect::<Vec<_>>()
        };
        let mut registry = BTreeMap::new();
        for (cid, c) in self.containers.iter().enumerate() {
            let mut container = match &c.body {
                Body::Unit => ContainerFormat::UnitStruct,
                Body::Newtype(n) => ContainerFormat::NewTypeStruct(Box::new(format_of(*n))),
                Body::Tuple(parts) => {
                    ContainerFormat::TupleStruct(parts.iter().map(|&p| format_of(p)).collect())
                }
                Body::Struct(f) => ContainerFormat::Struct(fields(f)),
                Body::Enum(variants) => ContainerFormat::Enum(
                    variants
                        .iter()
                        .enumerate()
                        .map(|(i, (name, content))| {
                            let value = match content {
                                None => VariantFormat::unknown(),
                                Some(Content::Unit) => VariantFormat::Unit,
                                Some(Content::Newtype(n)) => {
                                    VariantFormat::NewType(Box::new(format_of(*n)))
                                }
                                Some(Content::Tuple(parts)) => VariantFormat::Tuple(
                                    parts.iter().map(|&p| format_of(p)).collect(),
                                ),
                                Some(Content::Struct(f)) => VariantFormat::Struct(fields(f)),
                            };
                            let name = name.to_string();
                            (i as u32, Named { name, value })
                        })
                        .collect(),
                ),
            };
            // serde-reflection writes tuples of one repeated format inside containers (not at
            // the top) as `TupleArray`; records written before this tracer have that form.
            normalize_container(&mut container);
            registry.insert(names[cid].clone(), container);
        }
        Traced {
            format: format_of(root),
            registry,
            problem,
        }
    }

    fn format(&self, node: NodeId, names: &[String]) -> Format {
        match &self.slots[node].node {
            Node::Unknown => Format::unknown(),
            Node::Prim(p) => p.format(),
            Node::Option(n) => Format::Option(Box::new(self.format(*n, names))),
            Node::Seq(n) => Format::Seq(Box::new(self.format(*n, names))),
            Node::Map(k, v) => Format::Map {
                key: Box::new(self.format(*k, names)),
                value: Box::new(self.format(*v, names)),
            },
            Node::Tuple(parts) => {
                Format::Tuple(parts.iter().map(|&p| self.format(p, names)).collect())
            }
            Node::Ref(c) => Format::TypeName(names[*c].clone()),
        }
    }
}

fn normalize_container(container: &mut ContainerFormat) {
    let all = |formats: &mut Vec<Format>| formats.iter_mut().for_each(normalize);
    let named =
        |fields: &mut Vec<Named<Format>>| fields.iter_mut().for_each(|f| normalize(&mut f.value));
    match container {
        ContainerFormat::UnitStruct => {}
        ContainerFormat::NewTypeStruct(f) => normalize(f),
        ContainerFormat::TupleStruct(formats) => all(formats),
        ContainerFormat::Struct(fields) => named(fields),
        ContainerFormat::Enum(variants) => {
            for variant in variants.values_mut() {
                match &mut variant.value {
                    VariantFormat::NewType(f) => normalize(f),
                    VariantFormat::Tuple(formats) => all(formats),
                    VariantFormat::Struct(fields) => named(fields),
                    VariantFormat::Unit | VariantFormat::Variable(_) => {}
                }
            }
        }
    }
}

/// serde-reflection's normalisation: a tuple of two or more equal formats becomes a
/// `TupleArray`, innermost first.
fn normalize(format: &mut Format) {
    match format {
        Format::Option(f) | Format::Seq(f) => normalize(f),
        Format::Map { key, value } => {
            normalize(key);
            normalize(value);
        }
        Format::TupleArray { content, .. } => normalize(content),
        Format::Tuple(formats) => {
            formats.iter_mut().for_each(normalize);
            if formats.len() > 1 && formats.iter().all(|f| *f == formats[0]) {
                let size = formats.len();
                let content = Box::new(formats.swap_remove(0));
                *format = Format::TupleArray { content, size };
            }
        }
        _ => {}
    }
}

/// The deserializer for one place of the type.
struct At<'t> {
    t: &'t mut Tracer,
    node: NodeId,
}

macro_rules! int {
    ($method:ident, $visit:ident, $prim:ident, $ty:ty) => {
        fn $method<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
            let At { t, node } = self;
            let sample = t.prim(node, Prim::$prim)?;
            let result = visitor.$visit(sample as $ty);
            t.answer(node, result, INT_SAMPLES)
        }
    };
}

impl<'t> de::Deserializer<'static> for At<'t> {
    type Error = TraceError;

    fn deserialize_any<V: Visitor<'static>>(self, _visitor: V) -> Result<V::Value> {
        Err(TraceError(
            "the type's `Deserialize` needs a self-describing format (`deserialize_any`: an \
             untagged or internally tagged enum, `flatten`, or a dynamic value), which bincode \
             cannot decode"
                .into(),
        ))
    }

    fn deserialize_ignored_any<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_identifier<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_bool<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let sample = t.prim(node, Prim::Bool)?;
        let result = visitor.visit_bool(sample % 2 == 1);
        t.answer(node, result, 2)
    }

    int!(deserialize_i8, visit_i8, I8, i8);
    int!(deserialize_i16, visit_i16, I16, i16);
    int!(deserialize_i32, visit_i32, I32, i32);
    int!(deserialize_i64, visit_i64, I64, i64);
    int!(deserialize_i128, visit_i128, I128, i128);
    int!(deserialize_u8, visit_u8, U8, u8);
    int!(deserialize_u16, visit_u16, U16, u16);
    int!(deserialize_u32, visit_u32, U32, u32);
    int!(deserialize_u64, visit_u64, U64, u64);
    int!(deserialize_u128, visit_u128, U128, u128);

    fn deserialize_f32<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let sample = t.prim(node, Prim::F32)?;
        let result = visitor.visit_f32(FLOAT_SAMPLES[sample] as f32);
        t.answer(node, result, FLOAT_SAMPLES.len())
    }

    fn deserialize_f64<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let sample = t.prim(node, Prim::F64)?;
        let result = visitor.visit_f64(FLOAT_SAMPLES[sample]);
        t.answer(node, result, FLOAT_SAMPLES.len())
    }

    fn deserialize_char<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let sample = t.prim(node, Prim::Char)?;
        let result = visitor.visit_char(CHAR_SAMPLES[sample]);
        t.answer(node, result, CHAR_SAMPLES.len())
    }

    fn deserialize_str<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let sample = t.prim(node, Prim::Str)?;
        let result = visitor.visit_borrowed_str(STR_SAMPLES[sample]);
        t.answer(node, result, STR_SAMPLES.len())
    }

    fn deserialize_string<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let sample = t.prim(node, Prim::Bytes)?;
        let result = visitor.visit_borrowed_bytes(BYTES_SAMPLES[sample]);
        t.answer(node, result, BYTES_SAMPLES.len())
    }

    fn deserialize_byte_buf<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_unit<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        self.t.prim(self.node, Prim::Unit)?;
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let inner = t.option(node)?;
        if t.exploring() && t.node_wants(inner) {
            visitor.visit_some(At { t, node: inner })
        } else {
            visitor.visit_none()
        }
    }

    fn deserialize_seq<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let inner = t.seq(node)?;
        let parts = if t.exploring() && t.node_wants(inner) {
            vec![inner]
        } else {
            Vec::new()
        };
        visitor.visit_seq(Parts {
            t,
            parts: parts.into_iter(),
        })
    }

    fn deserialize_tuple<V: Visitor<'static>>(self, len: usize, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let parts = t.tuple(node, len)?;
        visitor.visit_seq(Parts {
            t,
            parts: parts.into_iter(),
        })
    }

    fn deserialize_map<V: Visitor<'static>>(self, visitor: V) -> Result<V::Value> {
        let At { t, node } = self;
        let (k, v) = t.map(node)?;
        let entry = (t.exploring() && (t.node_wants(k) || t.node_wants(v))).then_some((k, v));
        visitor.visit_map(Entries {
            t,
            entry,
            value: None,
        })
    }

    fn deserialize_unit_struct<V: Visitor<'static>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        let At { t, node } = self;
        let ty = typeid::of::<V::Value>();
        let cid = t.container(ty, name, |_| Body::Unit, |b| matches!(b, Body::Unit))?;
        t.reference(node, cid)?;
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'static>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        let At { t, node } = self;
        let ty = typeid::of::<V::Value>();
        let cid = t.container(
            ty,
            name,
            |t| Body::Newtype(t.new_node()),
            |b| matches!(b, Body::Newtype(_)),
        )?;
        t.reference(node, cid)?;
        let Body::Newtype(inner) = t.containers[cid].body else {
            unreachable!("checked by `container`")
        };
        let again = t.enter(cid)?;
        let result = visitor.visit_newtype_struct(At {
            t: &mut *t,
            node: inner,
        });
        t.leave(again);
        result
    }

    fn deserialize_tuple_struct<V: Visitor<'static>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        let At { t, node } = self;
        let ty = typeid::of::<V::Value>();
        let cid = t.container(
            ty,
            name,
            |t| Body::Tuple(t.new_nodes(len)),
            |b| matches!(b, Body::Tuple(p) if p.len() == len),
        )?;
        t.reference(node, cid)?;
        let Body::Tuple(parts) = &t.containers[cid].body else {
            unreachable!("checked by `container`")
        };
        let parts = parts.clone();
        let again = t.enter(cid)?;
        let result = visitor.visit_seq(Parts {
            t: &mut *t,
            parts: parts.into_iter(),
        });
        t.leave(again);
        result
    }

    fn deserialize_struct<V: Visitor<'static>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let At { t, node } = self;
        let ty = typeid::of::<V::Value>();
        let cid = t.container(
            ty,
            name,
            |t| Body::Struct(fields.iter().map(|&f| (f, t.new_node())).collect()),
            |b| {
                matches!(b, Body::Struct(known) if known.len() == fields.len()
                    && known.iter().zip(fields).all(|((a, _), b)| a == b))
            },
        )?;
        t.reference(node, cid)?;
        let Body::Struct(known) = &t.containers[cid].body else {
            unreachable!("checked by `container`")
        };
        let parts: Vec<NodeId> = known.iter().map(|&(_, n)| n).collect();
        let again = t.enter(cid)?;
        let result = visitor.visit_seq(Parts {
            t: &mut *t,
            parts: parts.into_iter(),
        });
        t.leave(again);
        result
    }

    fn deserialize_enum<V: Visitor<'static>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let At { t, node } = self;
        let ty = typeid::of::<V::Value>();
        let cid = t.container(
            ty,
            name,
            |_| Body::Enum(variants.iter().map(|&v| (v, None)).collect()),
            |b| {
                matches!(b, Body::Enum(known) if known.len() == variants.len()
                    && known.iter().zip(variants).all(|((a, _), b)| a == b))
            },
        )?;
        t.reference(node, cid)?;
        if variants.is_empty() {
            return Err(TraceError(format!(
                "enum `{name}` has no variants, so no value of it exists"
            )));
        }
        let again = t.enter(cid)?;
        let index = t.pick_variant(cid, again);
        let result = visitor.visit_enum(Variant {
            t: &mut *t,
            cid,
            index,
        });
        t.leave(again);
        result
    }

    fn is_human_readable(&self) -> bool {
        false
    }
}

/// The elements of a sequence, tuple or struct.
struct Parts<'t, I> {
    t: &'t mut Tracer,
    parts: I,
}

impl<I: Iterator<Item = NodeId>> de::SeqAccess<'static> for Parts<'_, I> {
    type Error = TraceError;

    fn next_element_seed<S: DeserializeSeed<'static>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>> {
        match self.parts.next() {
            None => Ok(None),
            Some(node) => seed.deserialize(At { t: self.t, node }).map(Some),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.parts.size_hint().1
    }
}

/// The entries of a map: none or one.
struct Entries<'t> {
    t: &'t mut Tracer,
    entry: Option<(NodeId, NodeId)>,
    value: Option<NodeId>,
}

impl de::MapAccess<'static> for Entries<'_> {
    type Error = TraceError;

    fn next_key_seed<K: DeserializeSeed<'static>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.entry.take() {
            None => Ok(None),
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(At { t: self.t, node: k }).map(Some)
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'static>>(&mut self, seed: S) -> Result<S::Value> {
        let node = self
            .value
            .take()
            .ok_or_else(|| TraceError("a map value was asked for before its key".into()))?;
        seed.deserialize(At { t: self.t, node })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(self.entry.is_some()))
    }
}

/// The variant chosen for this pass.
struct Variant<'t> {
    t: &'t mut Tracer,
    cid: Cid,
    index: u32,
}

impl<'t> de::EnumAccess<'static> for Variant<'t> {
    type Error = TraceError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'static>>(self, seed: S) -> Result<(S::Value, Self)> {
        let value = seed.deserialize(VariantIndex(self.index))?;
        Ok((value, self))
    }
}

impl<'t> de::VariantAccess<'static> for Variant<'t> {
    type Error = TraceError;

    fn unit_variant(self) -> Result<()> {
        self.t.content(
            self.cid,
            self.index,
            |_| Content::Unit,
            |c| matches!(c, Content::Unit).then_some(()),
            |_| (),
        )
    }

    fn newtype_variant_seed<S: DeserializeSeed<'static>>(self, seed: S) -> Result<S::Value> {
        let Variant { t, cid, index } = self;
        let node = t.content(
            cid,
            index,
            |t| Content::Newtype(t.new_node()),
            |c| match c {
                Content::Newtype(n) => Some(*n),
                _ => None,
            },
            |c| match c {
                Content::Newtype(n) => *n,
                _ => unreachable!("made above"),
            },
        )?;
        seed.deserialize(At { t, node })
    }

    fn tuple_variant<V: Visitor<'static>>(self, len: usize, visitor: V) -> Result<V::Value> {
        let Variant { t, cid, index } = self;
        let parts = t.content(
            cid,
            index,
            |t| Content::Tuple(t.new_nodes(len)),
            |c| match c {
                Content::Tuple(p) if p.len() == len => Some(p.clone()),
                _ => None,
            },
            |c| match c {
                Content::Tuple(p) => p.clone(),
                _ => unreachable!("made above"),
            },
        )?;
        visitor.visit_seq(Parts {
            t,
            parts: parts.into_iter(),
        })
    }

    fn struct_variant<V: Visitor<'static>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let Variant { t, cid, index } = self;
        let nodes = |known: &Vec<(&'static str, NodeId)>| known.iter().map(|&(_, n)| n).collect();
        let parts: Vec<NodeId> = t.content(
            cid,
            index,
            |t| Content::Struct(fields.iter().map(|&f| (f, t.new_node())).collect()),
            |c| match c {
                Content::Struct(known)
                    if known.len() == fields.len()
                        && known.iter().zip(fields).all(|((a, _), b)| a == b) =>
                {
                    Some(nodes(known))
                }
                _ => None,
            },
            |c| match c {
                Content::Struct(known) => nodes(known),
                _ => unreachable!("made above"),
            },
        )?;
        visitor.visit_seq(Parts {
            t,
            parts: parts.into_iter(),
        })
    }
}

/// The variant index, as bincode gives it to a variant identifier.
struct VariantIndex(u32);

impl<'de> de::Deserializer<'de> for VariantIndex {
    type Error = TraceError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_u32(self.0)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }

    fn is_human_readable(&self) -> bool {
        false
    }
}
