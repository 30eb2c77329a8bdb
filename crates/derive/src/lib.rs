//! Derive macros for Tabula. Use them through the `tabula` crate.

use proc_macro::TokenStream;

/// Declares a table.
#[proc_macro_derive(Table, attributes(table))]
pub fn derive_table(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}

/// Declares a schema.
#[proc_macro_derive(Schema, attributes(schema))]
pub fn derive_schema(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}

/// Declares a composite key.
#[proc_macro_derive(Key)]
pub fn derive_key(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
