//! Code generation. Each `derive_*` entry parses, checks, and either expands the declaration or,
//! when it has mistakes, emits every error plus a stub impl from `fallback`.
//!
//! Generated code is hygienic: it is wrapped in `const _: () = { .. };`, names items only by
//! absolute paths (`::tabula::..`, or the path of `#[tabula(crate = ..)]`; `::core::..`,
//! primitives through `::core::primitive`), calls trait items as `<T as ::tabula::Trait>::item`,
//! and names its locals `__tabula_*` with mixed-site hygiene. Bound assertions are spanned on the
//! user's tokens so rustc points there.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::DeriveInput;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::ast;
use crate::attr::krate_at;
use crate::check;
use crate::ctxt::Ctxt;
use crate::dupsort;
use crate::fallback;

pub fn derive_table(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let table = ast::Table::from_syn(&cx, input);
    check::table(&cx, &table);
    check::dupsort(&cx, &table);
    match cx.check() {
        Ok(()) => table_impl(&table),
        Err(errors) => with_fallback(errors, fallback::table(input, &table.krate)),
    }
}

pub fn derive_schema(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let schema = ast::Schema::from_syn(&cx, input);
    check::schema(&cx, &schema);
    match cx.check() {
        Ok(()) => schema_impl(&schema),
        Err(errors) => with_fallback(errors, fallback::schema(input, &schema)),
    }
}

pub fn derive_key(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let key = ast::Key::from_syn(&cx, input);
    check::key(&cx, &key);
    match cx.check() {
        Ok(()) => key_impl(&key),
        Err(errors) => with_fallback(errors, fallback::key(input, &key.krate)),
    }
}

fn with_fallback(errors: syn::Error, stub: TokenStream) -> TokenStream {
    let mut out = errors.into_compile_error();
    out.extend(stub);
    out
}

fn table_impl(table: &ast::Table) -> TokenStream {
    let ident = table.ident;
    let krate = &table.krate;
    let attrs = &table.attrs;
    let (Some(key), Some(value)) = (&attrs.key, &attrs.value) else {
        unreachable!("check::table reports a missing key or value");
    };
    let (name, name_span) = match &attrs.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (ident.unraw().to_string(), ident.span()),
    };
    let dupsort = attrs.dupsort;
    let integer_key = attrs.integer_key;
    let codec = match &attrs.codec {
        Some(codec) => quote!(#codec),
        None => {
            let krate = krate_at(krate, value.span());
            quote_spanned!(value.span()=> #krate::Bincode<#value>)
        }
    };
    let value_type = ast::type_to_string(value);
    let rust_name = ident.unraw().to_string();
    let value_version = match attrs.value_version {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    // A dupsort table stores its values in an ordered form (`dupsort.rs`).
    let (value, codec) = dupsort::value_and_codec(attrs, krate).unwrap_or((quote!(#value), codec));
    let dup_impls = dupsort::impls(ident, attrs, krate);
    let dup_unit = dupsort::unit(attrs, krate);
    // Every table is written by the application; one declared `indexed` only through the
    // write paths that keep its indexes exact (`Unindexed` bounds the others).
    let indexed = attrs.indexed.is_some();
    // A table declared `history` records every change: the paths that cannot (`Unindexed`)
    // are refused on it too.
    let history = attrs.history.is_some();
    let write_marker = if indexed {
        Some(quote!(#krate::Indexed))
    } else if history {
        None
    } else {
        Some(quote!(#krate::Unindexed))
    };
    let write_marker = write_marker.map(|marker| {
        quote! {
            #[automatically_derived]
            impl #marker for #ident {}
        }
    });
    let row_history = (!attrs.dupsort).then(|| {
        quote! {
            #[automatically_derived]
            impl #krate::RowHistory for #ident {}
        }
    });
    let history_impl = history.then(|| {
        quote! {
            #[automatically_derived]
            impl #krate::HasHistory for #ident {}
            #row_history
        }
    });

    // `type Key = K` and `type Codec = C` in the impl are the bound checks for `K: Key` and
    // `C: Value<Item = V>`: they carry the user's tokens (the default codec is spanned on the value
    // type), so rustc reports there. Separate assertions would only repeat those errors.
    let assert_integer_key = integer_key.then(|| {
        let krate = krate_at(krate, key.span());
        quote_spanned! {key.span()=>
            const _: () = #krate::__private::assert_integer_key::<#key>();
        }
    });
    // `check::table` already rejects reserved names with a clear error; this keeps its copy of the
    // prefix honest against core's.
    let at_name = krate_at(krate, name_span);
    let assert_not_reserved = quote_spanned! {name_span=>
        const _: () = ::core::assert!(
            !#at_name::__private::is_reserved(<#ident as #at_name::Table>::NAME),
            "this table name is reserved for Tabula's meta table"
        );
    };
    let debug_key = debug_key(krate, ident);

    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::__private::ImplementedByDeriveTableOnly for #ident {}

            #[automatically_derived]
            impl #krate::Table for #ident {
                const NAME: &'static ::core::primitive::str = #name;
                const FLAGS: #krate::TableFlags = #krate::TableFlags {
                    dupsort: #dupsort,
                    integer_key: #integer_key,
                };
                type Key = #key;
                type Value = #value;
                type Codec = #codec;
                const VALUE_TYPE: &'static ::core::primitive::str = #value_type;
                const VALUE_VERSION: ::core::option::Option<::core::primitive::u32> =
                    #value_version;
                const RUST_NAME: &'static ::core::primitive::str =
                    ::core::concat!(::core::module_path!(), "::", #rust_name);
                const INDEXED: ::core::primitive::bool = #indexed;
                const HISTORY: ::core::primitive::bool = #history;
                #dup_unit
                #debug_key
            }

            #[automatically_derived]
            impl #krate::Writable for #ident {}

            #write_marker
            #history_impl

            #dup_impls
            #assert_integer_key
            #assert_not_reserved
        };
    }
}

fn schema_impl(schema: &ast::Schema) -> TokenStream {
    let ident = schema.ident;
    let krate = &schema.krate;
    let tables = &schema.tables;

    let infos = tables.iter().map(|ty| {
        let krate = krate_at(krate, ty.span());
        quote_spanned!(ty.span()=> #krate::TableInfo::of::<#ty>())
    });
    // Spanned on the table's type, so "`X` is not a table" from the impl's bound lands there, like
    // the one from `TableInfo::of::<X>()` (which is why there is no separate assertion).
    let contains = tables.iter().enumerate().map(|(id, ty)| {
        let krate = krate_at(krate, ty.span());
        quote_spanned! {ty.span()=>
            #[automatically_derived]
            impl #krate::Contains<#ty> for #ident {
                const ID: ::core::primitive::usize = #id;
            }
        }
    });
    // One assertion per table after the first, spanned on that table, so a clash is reported at
    // the later of the two. It reads the names from `TABLES`, keeping the expansion linear in the
    // number of tables.
    let assert_unique_names = tables.iter().enumerate().skip(1).map(|(at, ty)| {
        let message = format_literal(&format!(
            "table `{}` has the same name as an earlier table in schema `{ident}`: table names \
             must be unique",
            ast::type_to_string(ty)
        ));
        let krate = krate_at(krate, ty.span());
        quote_spanned! {ty.span()=>
            const _: () = ::core::assert!(
                !#krate::__private::name_repeats_earlier(
                    <#ident as #krate::Schema>::TABLES,
                    #at,
                ),
                #message
            );
        }
    });

    // An index's source table must be listed too: its writes are what keep the index exact.
    let assert_sources_listed = tables.iter().enumerate().map(|(at, ty)| {
        let message = format_literal(&format!(
            "`{}` is an index on a table that is not in schema `{ident}`: list its source table \
             (`#[index(on = ..)]`) in the schema too",
            ast::type_to_string(ty)
        ));
        let krate = krate_at(krate, ty.span());
        quote_spanned! {ty.span()=>
            const _: () = ::core::assert!(
                #krate::__private::index_source_listed(<#ident as #krate::Schema>::TABLES, #at),
                #message
            );
        }
    });

    // A history's source table must be listed, and a table declared `history` its history:
    // its writes record there.
    let assert_histories_listed = tables.iter().enumerate().map(|(at, ty)| {
        let name = ast::type_to_string(ty);
        let source_message = format_literal(&format!(
            "`{name}` is the history of a table that is not in schema `{ident}`: list its \
             source table (`#[history(on = ..)]`) in the schema too"
        ));
        let history_message = format_literal(&format!(
            "`{name}` is declared `history` but schema `{ident}` does not list its history: \
             list its `#[derive(History)]` struct in the schema too"
        ));
        let krate = krate_at(krate, ty.span());
        quote_spanned! {ty.span()=>
            const _: () = ::core::assert!(
                #krate::__private::history_source_listed(<#ident as #krate::Schema>::TABLES, #at),
                #source_message
            );
            const _: () = ::core::assert!(
                #krate::__private::history_listed(<#ident as #krate::Schema>::TABLES, #at),
                #history_message
            );
        }
    });
    // One call per table (first every check, then every unwind), so a listed type that is not
    // a table adds one error here, not two.
    let unwind_tables = tables
        .iter()
        .map(|ty| quote!(undone += tx.__unwind_table::<#ty>(version, check)?;));

    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::Schema for #ident {
                const TABLES: &'static [#krate::TableInfo] = &[#(#infos),*];
            }

            #[automatically_derived]
            impl #krate::__private::Unwinding for #ident {
                fn unwind_tables(
                    tx: &mut #krate::Tx<'_, Self, #krate::Rw>,
                    version: ::core::primitive::u64,
                ) -> #krate::Result<::core::primitive::u64> {
                    let mut undone = 0;
                    for check in [true, false] {
                        #(#unwind_tables)*
                    }
                    ::core::result::Result::Ok(undone)
                }
            }

            #(#contains)*
            #(#assert_unique_names)*
            #(#assert_sources_listed)*
            #(#assert_histories_listed)*
        };
    }
}

fn key_impl(key: &ast::Key) -> TokenStream {
    let ident = key.ident;
    let krate = &key.krate;
    let name = ident.unraw().to_string();
    let fields = &key.fields;
    let out = Ident::new("__tabula_out", Span::mixed_site());
    let input = Ident::new("__tabula_input", Span::mixed_site());
    let last = Ident::new("__tabula_last", Span::mixed_site());

    // Only the final field may be the end of the key; every earlier one is followed by more.
    let is_last = |i: usize| {
        if i + 1 == fields.len() {
            quote!(#last)
        } else {
            quote!(false)
        }
    };
    let encode_parts = fields.iter().enumerate().map(|(i, field)| {
        let (ty, member, last) = (field.ty, &field.member, is_last(i));
        // Through a helper bounded by `Key`, so a field that is not a key reads "`F` is not a key
        // type" here as in `decode_part`, not `AsKey`'s message about borrowed key forms.
        quote! {
            #krate::__private::encode_key_part::<#ty>(&self.#member, #out, #last);
        }
    });
    let decode_parts = fields.iter().enumerate().map(|(i, field)| {
        let (ty, member, last) = (field.ty, &field.member, is_last(i));
        quote! {
            #member: <#ty as #krate::Key>::decode_part(#input, #last)?
        }
    });
    let descriptors = fields.iter().map(|field| {
        let (ty, name) = (field.ty, &field.name);
        quote!((#name, <#ty as #krate::Key>::DESCRIPTOR))
    });
    let sizes = fields.iter().map(|field| {
        let ty = field.ty;
        quote!(<#ty as #krate::Key>::FIXED_SIZE)
    });
    // Every proper prefix, as `AsPrefix` forms: the first field alone (and `str` or `[u8]` for
    // a `String` or `Vec<u8>` one), then tuples of the first 1, 2, .. fields. Owned forms, as
    // `get` takes the key itself: a borrowed first part would overlap the tuple forms.
    let as_prefix = |form: TokenStream, owned: TokenStream| {
        quote! {
            #[automatically_derived]
            impl #krate::AsPrefix<#ident> for #form {
                #[inline]
                fn encode_prefix(&self, #out: &mut #krate::KeyBuf) {
                    <Self as #krate::AsKey<#owned>>::encode_part(self, #out, false);
                }
            }
        }
    };
    let mut prefixes = Vec::new();
    if fields.len() > 1 {
        let first = fields[0].ty;
        prefixes.push(as_prefix(quote!(#first), quote!(#first)));
        match ast::type_to_string(first).as_str() {
            "String" => prefixes.push(as_prefix(quote!(::core::primitive::str), quote!(#first))),
            "Vec<u8>" => prefixes.push(as_prefix(quote!([::core::primitive::u8]), quote!(#first))),
            _ => {}
        }
    }
    for len in 1..fields.len() {
        let tys = fields[..len].iter().map(|field| field.ty);
        let tuple = quote!((#(#tys,)*));
        prefixes.push(as_prefix(tuple.clone(), tuple));
    }
    // The struct as the first part of a tuple key of two to six parts.
    let rest = [
        "__TabulaB",
        "__TabulaC",
        "__TabulaD",
        "__TabulaE",
        "__TabulaF",
    ]
    .map(|name| Ident::new(name, Span::mixed_site()));
    for len in 1..=rest.len() {
        let rest = &rest[..len];
        prefixes.push(quote! {
            #[automatically_derived]
            impl<#(#rest: #krate::Key),*> #krate::AsPrefix<(#ident, #(#rest),*)> for #ident {
                #[inline]
                fn encode_prefix(&self, #out: &mut #krate::KeyBuf) {
                    <Self as #krate::AsKey<Self>>::encode_part(self, #out, false);
                }
            }
        });
    }

    quote! {
        const _: () = {
            #[automatically_derived]
            impl #krate::AsKey<#ident> for #ident {
                type Encoded<'a> = #krate::KeyBuf;

                #[inline]
                fn encode(&self) -> Self::Encoded<'_> {
                    let mut #out = #krate::KeyBuf::new();
                    <Self as #krate::AsKey<Self>>::encode_part(self, &mut #out, true);
                    #out
                }

                #[inline]
                fn encode_part(
                    &self,
                    #out: &mut #krate::KeyBuf,
                    #last: ::core::primitive::bool,
                ) {
                    #(#encode_parts)*
                }
            }

            #[automatically_derived]
            impl #krate::OrderedValue for #ident {}

            #[automatically_derived]
            impl #krate::Key for #ident {
                const DESCRIPTOR: #krate::Descriptor = #krate::Descriptor::Struct {
                    name: #name,
                    fields: &[#(#descriptors),*],
                };
                const FIXED_SIZE: ::core::option::Option<::core::primitive::usize> =
                    #krate::__private::sum_fixed_sizes(&[#(#sizes),*]);

                #[inline]
                fn decode_part(
                    #input: &mut &[::core::primitive::u8],
                    #last: ::core::primitive::bool,
                ) -> ::core::result::Result<Self, #krate::DecodeError> {
                    ::core::result::Result::Ok(Self {
                        #(#decode_parts,)*
                    })
                }
            }

            #(#prefixes)*
        };
    }
}

/// `Table::DEBUG_KEY` of the table or index `ident`: the stored key's `Debug` form when its key
/// type has one (`ShowDebug`, found first by method lookup), else nothing (`ShowNothing`).
pub(crate) fn debug_key(krate: &impl quote::ToTokens, ident: &Ident) -> TokenStream {
    quote! {
        const DEBUG_KEY: fn(&[::core::primitive::u8]) -> ::core::option::Option<::std::string::String> = {
            fn show(
                stored: &[::core::primitive::u8],
            ) -> ::core::option::Option<::std::string::String> {
                #[allow(unused_imports)]
                use #krate::__private::{ShowDebug as _, ShowNothing as _};
                ((&&#krate::__private::Shown::<#ident>::NEW).show())(stored)
            }
            show
        };
    }
}

/// A string literal usable as a `format_args!` string (as `assert!` reads its message): braces
/// doubled.
fn format_literal(message: &str) -> String {
    message.replace('{', "{{").replace('}', "}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(derive: fn(&DeriveInput) -> TokenStream, input: &str) -> String {
        let input: DeriveInput = syn::parse_str(input).unwrap();
        derive(&input).to_string()
    }

    #[test]
    fn key_implements_every_proper_prefix() {
        let out = expand(
            derive_key,
            "struct K { a: u64, b: [u8; 20], c: i32, d: u16 }",
        );
        assert!(out.contains("impl :: tabula :: AsPrefix < K > for u64"));
        assert!(out.contains("impl :: tabula :: AsPrefix < K > for (u64 ,)"));
        assert!(out.contains("impl :: tabula :: AsPrefix < K > for (u64 , [u8 ; 20] ,)"));
        assert!(out.contains("impl :: tabula :: AsPrefix < K > for (u64 , [u8 ; 20] , i32 ,)"));
        assert_eq!(
            out.matches("AsPrefix < K >").count(),
            4,
            "not the whole key: {out}"
        );
        // As the first part of tuple keys of two to six parts.
        assert_eq!(out.matches("AsPrefix < (K ,").count(), 5, "{out}");
    }

    #[test]
    fn a_string_or_bytes_first_field_is_a_prefix_borrowed_too() {
        let out = expand(derive_key, "struct K { name: String, n: u64 }");
        assert!(
            out.contains("AsPrefix < K > for :: core :: primitive :: str"),
            "{out}"
        );
        let out = expand(derive_key, "struct K(Vec<u8>, u64);");
        assert!(
            out.contains("AsPrefix < K > for [:: core :: primitive :: u8]"),
            "{out}"
        );
    }

    #[test]
    fn key_with_one_field_has_no_prefix() {
        let out = expand(derive_key, "struct K(u64);");
        assert!(!out.contains("AsPrefix < K >"), "{out}");
        assert!(out.contains("(\"0\" , < u64 as :: tabula :: Key > :: DESCRIPTOR)"));
    }

    #[test]
    fn only_the_final_field_may_end_the_key() {
        let out = expand(derive_key, "struct K { a: u64, b: u32 }");
        assert!(out.contains("encode_key_part :: < u64 > (& self . a , __tabula_out , false)"));
        assert!(
            out.contains("encode_key_part :: < u32 > (& self . b , __tabula_out , __tabula_last)")
        );
        assert!(out.contains("decode_part (__tabula_input , false)"));
        assert!(out.contains("decode_part (__tabula_input , __tabula_last)"));
    }

    #[test]
    fn every_mistake_is_reported_at_once_with_a_stub() {
        let out = expand(
            derive_table,
            r#"#[table(foo, name = 1, key = u64, key = u32)] enum T<X> {}"#,
        );
        for message in [
            "a table is a unit struct, not an enum",
            "unknown table attribute `foo`",
            "expected a string: `name = \\\"...\\\"`",
            "duplicate table attribute `key`",
            "missing `value = ..` in `#[table(..)]`",
            "a table cannot be generic",
        ] {
            assert!(out.contains(message), "missing {message:?} in {out}");
        }
        assert_eq!(out.matches("compile_error").count(), 6);
        // No stub for a generic input: it would need bounds the declaration does not state.
        assert!(!out.contains("impl"), "{out}");
    }

    #[test]
    fn table_with_a_mistake_gets_a_stub_impl() {
        let out = expand(derive_table, "#[table(key = u64)] struct T;");
        assert!(out.contains("compile_error"));
        assert!(out.contains("impl :: tabula :: Table for T"));
        assert!(out.contains("impl :: tabula :: __private :: ImplementedByDeriveTableOnly for T"));
    }

    #[test]
    fn value_version_and_rust_name_are_constants() {
        let out = expand(
            derive_table,
            "#[table(key = u64, value = u8, value_version = 3)] struct r#T;",
        );
        assert!(
            out.contains(":: core :: option :: Option :: Some (3u32)"),
            "{out}"
        );
        assert!(out.contains("module_path ! () , \"::\" , \"T\""), "{out}");
        for bad in ["0", "\"1\"", "-1", "4294967296", "1.5"] {
            let out = expand(
                derive_table,
                &format!("#[table(key = u64, value = u8, value_version = {bad})] struct T;"),
            );
            assert!(
                out.contains("expected a version number of at least 1"),
                "{bad}: {out}"
            );
        }
    }

    #[test]
    fn the_crate_path_names_every_item() {
        for (derive, input) in [
            (
                derive_table as fn(&DeriveInput) -> TokenStream,
                "#[table(key = u64, value = u8, integer_key, dupsort)] struct T;",
            ),
            (
                derive_table,
                "#[table(key = u64, subkey = u8, value = u8, dupsort)] struct T;",
            ),
            (derive_schema, "struct S(A, B);"),
            (derive_key, "struct K { a: u64, b: u32 }"),
            // A mistake: the stub impls name the path too.
            (derive_table, "#[table(key = u64)] struct T;"),
            (derive_schema, "struct S(A, A);"),
            (derive_key, "enum K {}"),
        ] {
            for path in ["tabula_core", "\"tabula_core\""] {
                let out = expand(derive, &format!("#[tabula(crate = {path})] {input}"));
                assert!(out.contains("tabula_core ::"), "{input}: {out}");
                assert!(!out.contains(":: tabula ::"), "{input}: {out}");
            }
            let out = expand(derive, &format!("#[tabula(crate = crate)] {input}"));
            assert!(out.contains("crate ::"), "{input}: {out}");
            assert!(!out.contains(":: tabula ::"), "{input}: {out}");
            let out = expand(derive, input);
            assert!(out.contains(":: tabula ::"), "{input}: {out}");
        }
    }

    #[test]
    fn value_type_is_recorded_as_written() {
        let out = expand(
            derive_table,
            "#[table(key = u64, value = std::collections::BTreeMap<u32, Vec<u8>>)] struct T;",
        );
        assert!(
            out.contains(r#""std::collections::BTreeMap<u32, Vec<u8>>""#),
            "{out}"
        );
    }
}
