//! Schema identity: what identifies a table's stored format.
//!
//! Every codec names its encoding with a [`Descriptor`] (a `const` tree, rendered as the text
//! the schema record keeps); a value codec's type is identified by its structure in serde's
//! data model, traced at open (`trace.rs`) and compared without the names of its types
//! (`identity.rs`). The schema record ([`record`](crate::record)) keeps both for every table,
//! and the startup step checks them on every open.
//!
//! The codecs build on this module (each declares its descriptor and its trace) and it uses
//! nothing else of the crate; the record sits higher, beside the table declarations it
//! records.

pub(crate) mod descriptor;
pub(crate) mod identity;
pub(crate) mod trace;

pub use descriptor::Descriptor;
pub use trace::ValueTrace;
