//! `#[derive(Index)]`: a secondary index on a table declared `indexed`. It parses
//! `#[index(..)]`, checks it, and expands to the index's `Table` impl (index key → primary key;
//! `dupsort` unless `unique`), its `Index` impl and, for a unique one, `Unique`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, LitStr, Path, Type};

use crate::attr::{self, Attr, Symbol, krate_at};
use crate::ctxt::Ctxt;

/// `#[index(..)]`.
const INDEX: Symbol = Symbol("index");
/// `on = T`: the source table.
const ON: Symbol = Symbol("on");
/// `key = K`: the index key type.
const KEY: Symbol = Symbol("key");
/// `by = f`: the function computing a row's keys.
const BY: Symbol = Symbol("by");
/// `unique`: one row per index key.
const UNIQUE: Symbol = Symbol("unique");
/// `name = "..."`: the index table's name.
const NAME: Symbol = Symbol("name");
/// `version = N`: the version of how keys are computed.
const VERSION: Symbol = Symbol("version");

const INDEX_KEYS: [Symbol; 6] = [ON, KEY, BY, UNIQUE, NAME, VERSION];

struct Attrs {
    on: Option<Type>,
    key: Option<Type>,
    by: Option<Path>,
    unique: bool,
    name: Option<LitStr>,
    version: Option<u32>,
}

fn parse(cx: &Ctxt, input: &DeriveInput) -> Attrs {
    let mut on = Attr::none(cx, ON);
    let mut key = Attr::none(cx, KEY);
    let mut by = Attr::none(cx, BY);
    let mut unique = Attr::none(cx, UNIQUE);
    let mut name = Attr::none(cx, NAME);
    let mut version = Attr::none(cx, VERSION);
    let mut seen = false;
    for a in input.attrs.iter().filter(|a| *a.path() == INDEX) {
        seen = true;
        let parsed = a.parse_nested_meta(|meta| {
            if meta.path == ON {
                on.set_in(INDEX, &meta.path, meta.value()?.parse()?);
            } else if meta.path == KEY {
                key.set_in(INDEX, &meta.path, meta.value()?.parse()?);
            } else if meta.path == BY {
                by.set_in(INDEX, &meta.path, meta.value()?.parse()?);
            } else if meta.path == UNIQUE {
                attr::parse_flag_in(cx, &meta, INDEX, UNIQUE)?;
                unique.set_in(INDEX, &meta.path, ());
            } else if meta.path == NAME {
                if let Some(lit) = attr::parse_name(cx, &meta)? {
                    name.set_in(INDEX, &meta.path, lit);
                }
            } else if meta.path == VERSION {
                if let Some(v) = attr::parse_version(cx, &meta)? {
                    version.set_in(INDEX, &meta.path, v);
                }
            } else {
                attr::unknown_key(cx, &meta, INDEX, &INDEX_KEYS)?;
            }
            Ok(())
        });
        if let Err(error) = parsed {
            cx.syn_error(error);
        }
    }
    let attrs = Attrs {
        on: on.get(),
        key: key.get(),
        by: by.get(),
        unique: unique.get().is_some(),
        name: name.get(),
        version: version.get(),
    };
    let missing: Vec<&str> = [
        ("on = ..", attrs.on.is_none()),
        ("key = ..", attrs.key.is_none()),
        ("by = ..", attrs.by.is_none()),
    ]
    .into_iter()
    .filter_map(|(what, absent)| absent.then_some(what))
    .collect();
    if !missing.is_empty() {
        let at = input.attrs.iter().find(|a| *a.path() == INDEX);
        let message = format!(
            "missing {} in `#[index(..)]`: write `#[index(on = Table, key = K, by = function)]`",
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        match (seen, at) {
            (true, Some(at)) => cx.error_spanned_by(at, message),
            _ => cx.error_spanned_by(&input.ident, message),
        }
    }
    match &input.data {
        Data::Struct(data) if matches!(data.fields, Fields::Unit) => {}
        _ => cx.error_spanned_by(
            &input.ident,
            format!("an index is a unit struct: write `struct {};`", input.ident),
        ),
    }
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(&input.generics, "an index cannot be generic");
    }
    attrs
}

pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let krate = attr::crate_path(&cx, &input.attrs);
    let attrs = parse(&cx, input);
    match cx.check() {
        Ok(()) => expand(input, &krate, &attrs),
        Err(errors) => errors.into_compile_error(),
    }
}

fn expand(input: &DeriveInput, krate: &Path, attrs: &Attrs) -> TokenStream {
    let ident = &input.ident;
    let debug_key = crate::expand::debug_key(krate, ident);
    let (Some(on), Some(key), Some(by)) = (&attrs.on, &attrs.key, &attrs.by) else {
        unreachable!("parse reports a missing `on`, `key` or `by`");
    };
    let name = match &attrs.name {
        Some(lit) => lit.value(),
        None => ident.unraw().to_string(),
    };
    let rust_name = ident.unraw().to_string();
    let unique = attrs.unique;
    let version = match attrs.version {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let value_type = format!("key of {}", crate::ast::type_to_string(on));
    let at_on = krate_at(krate, on.span());
    let source = quote_spanned!(on.span()=> <#on as #at_on::Table>);
    let pk = quote!(#source::Key);
    let codec = quote_spanned!(on.span()=> #at_on::Ordered<#source::Key>);
    let at_by = krate_at(krate, by.span());
    let dup_impls = (!unique).then(|| {
        quote! {
            #[automatically_derived]
            impl #krate::__private::DupSealed for #ident {}

            #[automatically_derived]
            impl #krate::DupSort for #ident {
                type SubKey = #pk;
                const HAS_SUBKEY: ::core::primitive::bool = false;
            }
        }
    });
    let unique_impl = unique.then(|| {
        quote! {
            #[automatically_derived]
            impl #krate::Unique for #ident {}
        }
    });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::__private::ImplementedByDeriveTableOnly for #ident {}

            #[automatically_derived]
            impl #krate::Table for #ident {
                const NAME: &'static ::core::primitive::str = #name;
                const FLAGS: #krate::TableFlags = #krate::TableFlags {
                    dupsort: !#unique,
                    integer_key: false,
                };
                type Key = #key;
                type Value = #pk;
                type Codec = #codec;
                const VALUE_TYPE: &'static ::core::primitive::str = #value_type;
                const VALUE_VERSION: ::core::option::Option<::core::primitive::u32> = #version;
                const RUST_NAME: &'static ::core::primitive::str =
                    ::core::concat!(::core::module_path!(), "::", #rust_name);
                const INDEX: ::core::option::Option<#krate::IndexInfo> =
                    ::core::option::Option::Some(#krate::IndexInfo::of::<#ident>());
                #debug_key
            }

            #[automatically_derived]
            impl #krate::Index for #ident {
                type Source = #on;
                const UNIQUE: ::core::primitive::bool = #unique;

                #[inline]
                fn keys(
                    key: &#pk,
                    value: &#source::Value,
                    out: &mut #krate::__private::Vec<#key>,
                ) {
                    #at_by::IndexKeys::<#key>::push_into(#by(key, value), out);
                }

                #[inline]
                fn for_each_key(
                    key: &#pk,
                    value: &#source::Value,
                    each: impl ::core::ops::FnMut(&#key),
                ) {
                    #at_by::IndexKeys::<#key>::for_each_key(#by(key, value), each);
                }

                #[inline]
                fn primary(value: #pk) -> #pk {
                    value
                }
            }

            #dup_impls
            #unique_impl
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(input: &str) -> String {
        let input: DeriveInput = syn::parse_str(input).unwrap();
        derive(&input).to_string()
    }

    #[test]
    fn an_index_is_a_table_of_index_key_to_primary_key() {
        let out = expand("#[index(on = T, key = u32, by = f)] struct I;");
        assert!(out.contains("impl :: tabula :: Table for I"), "{out}");
        assert!(out.contains("type Key = u32"), "{out}");
        assert!(out.contains("dupsort : ! false"), "{out}");
        assert!(out.contains("impl :: tabula :: DupSort for I"), "{out}");
        assert!(!out.contains("Unique"), "{out}");
        let out = expand("#[index(on = T, key = u32, by = f, unique, version = 2)] struct I;");
        assert!(out.contains("impl :: tabula :: Unique for I"), "{out}");
        assert!(!out.contains("DupSort"), "{out}");
        assert!(out.contains("Some (2u32)"), "{out}");
    }

    #[test]
    fn every_mistake_is_reported() {
        let out = expand("#[index(on = T, colour = 1, unique = 3)] enum I {}");
        for message in [
            "unknown index attribute `colour`",
            "`unique` takes no value: write `#[index(.., unique)]`",
            "missing `key = ..`, `by = ..` in `#[index(..)]`",
            "an index is a unit struct",
        ] {
            assert!(out.contains(message), "missing {message:?} in {out}");
        }
    }

    #[test]
    fn the_crate_path_names_every_item() {
        let out =
            expand("#[tabula(crate = tabula_core)] #[index(on = T, key = u32, by = f)] struct I;");
        assert!(out.contains("tabula_core ::"), "{out}");
        assert!(!out.contains(":: tabula ::"), "{out}");
    }
}
