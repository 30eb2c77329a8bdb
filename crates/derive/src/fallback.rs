//! Stub impls emitted next to the errors of a declaration with mistakes (after thiserror's
//! `fallback.rs`), so code that uses the type does not add "`X` is not a table" or "`X` is not a
//! key type" errors of its own: the user sees only the real mistake.
//!
//! Stubs use fixed, always-valid types rather than anything taken from the broken declaration,
//! which may itself be the mistake. A generic input gets no stub: its impl would need bounds the
//! declaration does not state.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::{DeriveInput, Path};

use crate::ast;

pub fn table(input: &DeriveInput, krate: &Path) -> TokenStream {
    if has_generics(input) {
        return TokenStream::new();
    }
    let ident = &input.ident;
    let name = ident.unraw().to_string();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::__private::ImplementedByDeriveTableOnly for #ident {}

            #[automatically_derived]
            impl #krate::Table for #ident {
                const NAME: &'static ::core::primitive::str = #name;
                const FLAGS: #krate::TableFlags = #krate::TableFlags::NONE;
                type Key = ::core::primitive::u64;
                type Value = <#krate::Raw as #krate::Value>::Item;
                type Codec = #krate::Raw;
                const VALUE_TYPE: &'static ::core::primitive::str = "";
            }

            #[automatically_derived]
            impl #krate::Writable for #ident {}

            #[automatically_derived]
            impl #krate::Unindexed for #ident {}
        };
    }
}

pub fn schema(input: &DeriveInput, schema: &ast::Schema) -> TokenStream {
    let krate = &schema.krate;
    if has_generics(input) {
        return TokenStream::new();
    }
    let ident = &input.ident;
    // `Contains` for each distinct table, so uses of those tables in transactions still
    // type-check; a table listed twice is the kind of mistake that lands here.
    let mut seen = Vec::new();
    let contains = schema.tables.iter().enumerate().filter_map(|(id, ty)| {
        let written = ast::type_to_string(ty);
        if seen.contains(&written) {
            return None;
        }
        seen.push(written);
        Some(quote! {
            #[automatically_derived]
            impl #krate::Contains<#ty> for #ident {
                const ID: ::core::primitive::usize = #id;
            }
        })
    });
    let contains: Vec<TokenStream> = contains.collect();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::Schema for #ident {
                const TABLES: &'static [#krate::TableInfo] = &[];
            }

            #(#contains)*
        };
    }
}

pub fn key(input: &DeriveInput, krate: &Path) -> TokenStream {
    if has_generics(input) {
        return TokenStream::new();
    }
    let ident = &input.ident;
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::AsKey<#ident> for #ident {
                type Encoded<'a> = #krate::KeyBuf;

                fn encode(&self) -> Self::Encoded<'_> {
                    ::core::unreachable!()
                }

                fn encode_part(&self, _: &mut #krate::KeyBuf, _: ::core::primitive::bool) {
                    ::core::unreachable!()
                }
            }

            #[automatically_derived]
            impl #krate::OrderedValue for #ident {}

            #[automatically_derived]
            impl #krate::Key for #ident {
                const DESCRIPTOR: #krate::Descriptor = #krate::Descriptor::Unit;
                const FIXED_SIZE: ::core::option::Option<::core::primitive::usize> =
                    ::core::option::Option::None;

                fn decode_part(
                    _: &mut &[::core::primitive::u8],
                    _: ::core::primitive::bool,
                ) -> ::core::result::Result<Self, #krate::DecodeError> {
                    ::core::unreachable!()
                }
            }
        };
    }
}

fn has_generics(input: &DeriveInput) -> bool {
    !input.generics.params.is_empty() || input.generics.where_clause.is_some()
}
