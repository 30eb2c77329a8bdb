//! `#[derive(History)]`: the history of a table declared `history`. It parses `#[history(..)]`,
//! checks it, and expands to the history's `Table` impl (a plain table of stored bytes, whose
//! layout `tabula-core`'s `history/` module owns) and its `History` impl.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, LitStr, Path, Type};

use crate::attr::{self, Attr, Symbol, krate_at};
use crate::ctxt::Ctxt;

/// `#[history(..)]`.
const HISTORY: Symbol = Symbol("history");
/// `on = T`: the table whose changes it records.
const ON: Symbol = Symbol("on");
/// `name = "..."`: the history table's name.
const NAME: Symbol = Symbol("name");

const HISTORY_KEYS: [Symbol; 2] = [ON, NAME];

struct Attrs {
    on: Option<Type>,
    name: Option<LitStr>,
}

fn parse(cx: &Ctxt, input: &DeriveInput) -> Attrs {
    let mut on = Attr::none(cx, ON);
    let mut name = Attr::none(cx, NAME);
    for a in input.attrs.iter().filter(|a| *a.path() == HISTORY) {
        let parsed = a.parse_nested_meta(|meta| {
            if meta.path == ON {
                on.set_in(HISTORY, &meta.path, meta.value()?.parse()?);
            } else if meta.path == NAME {
                if let Some(lit) = attr::parse_name(cx, &meta)? {
                    name.set_in(HISTORY, &meta.path, lit);
                }
            } else {
                attr::unknown_key(cx, &meta, HISTORY, &HISTORY_KEYS)?;
            }
            Ok(())
        });
        if let Err(error) = parsed {
            cx.syn_error(error);
        }
    }
    let attrs = Attrs {
        on: on.get(),
        name: name.get(),
    };
    if attrs.on.is_none() {
        let at = input.attrs.iter().find(|a| *a.path() == HISTORY);
        let message = "missing `on = ..` in `#[history(..)]`: write `#[history(on = Table)]`";
        match at {
            Some(at) => cx.error_spanned_by(at, message),
            None => cx.error_spanned_by(&input.ident, message),
        }
    }
    match &input.data {
        Data::Struct(data) if matches!(data.fields, Fields::Unit) => {}
        _ => cx.error_spanned_by(
            &input.ident,
            format!(
                "a history is a unit struct: write `struct {};`",
                input.ident
            ),
        ),
    }
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(&input.generics, "a history cannot be generic");
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
    let Some(on) = &attrs.on else {
        unreachable!("parse reports a missing `on`");
    };
    let name = match &attrs.name {
        Some(lit) => lit.value(),
        None => ident.unraw().to_string(),
    };
    let rust_name = ident.unraw().to_string();
    let value_type = format!("history of {}", crate::ast::type_to_string(on));
    let at_on = krate_at(krate, on.span());
    let source = quote_spanned!(on.span()=> <#on as #at_on::Table>);
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::__private::ImplementedByDeriveTableOnly for #ident {}

            #[automatically_derived]
            impl #krate::Table for #ident {
                const NAME: &'static ::core::primitive::str = #name;
                const FLAGS: #krate::TableFlags = #krate::TableFlags::NONE;
                type Key = #krate::__private::Vec<::core::primitive::u8>;
                type Value = #krate::__private::Vec<::core::primitive::u8>;
                type Codec = #krate::Raw;
                const VALUE_TYPE: &'static ::core::primitive::str = #value_type;
                const RUST_NAME: &'static ::core::primitive::str =
                    ::core::concat!(::core::module_path!(), "::", #rust_name);
                const HISTORY_OF: ::core::option::Option<&'static ::core::primitive::str> =
                    ::core::option::Option::Some(#source::NAME);
            }

            #[automatically_derived]
            impl #krate::History for #ident {
                type Source = #on;
            }
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
    fn a_history_is_a_table_of_bytes_naming_its_source() {
        let out = expand("#[history(on = Accounts)] struct AccountsHistory;");
        assert!(
            out.contains("impl :: tabula :: Table for AccountsHistory"),
            "{out}"
        );
        assert!(
            out.contains("impl :: tabula :: History for AccountsHistory"),
            "{out}"
        );
        assert!(out.contains("type Source = Accounts"), "{out}");
        assert!(out.contains("HISTORY_OF"), "{out}");
        assert!(!out.contains("Writable"), "{out}");
    }

    #[test]
    fn every_mistake_is_reported() {
        let out = expand("#[history(colour = 1)] enum H {}");
        for message in [
            "unknown history attribute `colour`",
            "missing `on = ..` in `#[history(..)]`",
            "a history is a unit struct",
        ] {
            assert!(out.contains(message), "missing {message:?} in {out}");
        }
    }
}
