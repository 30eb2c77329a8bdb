//! Code generation. Each `derive_*` entry parses, checks, and either expands the declaration or,
//! when it has mistakes, emits every error plus a stub impl from `fallback`.
//!
//! Generated code is hygienic: it is wrapped in `const _: () = { .. };`, names items only by
//! absolute paths (`::tabula::..`, `::core::..`, primitives through `::core::primitive`), calls
//! trait items as `<T as ::tabula::Trait>::item`, and names its locals `__tabula_*` with
//! mixed-site hygiene. Bound assertions are spanned on the user's tokens so rustc points there.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::DeriveInput;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use crate::ast;
use crate::check;
use crate::ctxt::Ctxt;
use crate::fallback;

pub fn derive_table(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let table = ast::Table::from_syn(&cx, input);
    check::table(&cx, &table);
    match cx.check() {
        Ok(()) => table_impl(&table),
        Err(errors) => with_fallback(errors, fallback::table(input)),
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
        Err(errors) => with_fallback(errors, fallback::key(input)),
    }
}

fn with_fallback(errors: syn::Error, stub: TokenStream) -> TokenStream {
    let mut out = errors.into_compile_error();
    out.extend(stub);
    out
}

fn table_impl(table: &ast::Table) -> TokenStream {
    let ident = table.ident;
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
        None => quote_spanned!(value.span()=> ::tabula::Bincode<#value>),
    };
    let value_type = ast::type_to_string(value);

    let assert_key = quote_spanned! {key.span()=>
        const _: () = ::tabula::__private::assert_key::<#key>();
    };
    let assert_integer_key = integer_key.then(|| {
        quote_spanned! {key.span()=>
            const _: () = ::tabula::__private::assert_integer_key::<#key>();
        }
    });
    let assert_codec = quote_spanned! {value.span()=>
        const _: () = ::tabula::__private::assert_codec::<#codec, #value>();
    };
    // `check::table` already rejects reserved names with a clear error; this keeps its copy of the
    // prefix honest against core's.
    let assert_not_reserved = quote_spanned! {name_span=>
        const _: () = ::core::assert!(
            !::tabula::__private::is_reserved(<#ident as ::tabula::Table>::NAME),
            "this table name is reserved for Tabula's meta table"
        );
    };

    quote! {
        const _: () = {
            #[automatically_derived]
            impl ::tabula::__private::Sealed for #ident {}

            #[automatically_derived]
            impl ::tabula::Table for #ident {
                const NAME: &'static ::core::primitive::str = #name;
                const FLAGS: ::tabula::TableFlags = ::tabula::TableFlags {
                    dupsort: #dupsort,
                    integer_key: #integer_key,
                };
                type Key = #key;
                type Value = #value;
                type Codec = #codec;
                const VALUE_TYPE: &'static ::core::primitive::str = #value_type;
            }

            #assert_key
            #assert_integer_key
            #assert_codec
            #assert_not_reserved
        };
    }
}

fn schema_impl(schema: &ast::Schema) -> TokenStream {
    let ident = schema.ident;
    let tables = &schema.tables;

    let infos = tables
        .iter()
        .map(|ty| quote_spanned!(ty.span()=> ::tabula::TableInfo::of::<#ty>()));
    let contains = tables.iter().enumerate().map(|(id, ty)| {
        quote! {
            #[automatically_derived]
            impl ::tabula::Contains<#ty> for #ident {
                const ID: ::core::primitive::usize = #id;
            }
        }
    });
    let assert_tables = tables.iter().map(|ty| {
        quote_spanned! {ty.span()=>
            const _: () = ::tabula::__private::assert_table::<#ty>();
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
        quote_spanned! {ty.span()=>
            const _: () = ::core::assert!(
                !::tabula::__private::name_repeats_earlier(
                    <#ident as ::tabula::Schema>::TABLES,
                    #at,
                ),
                #message
            );
        }
    });

    quote! {
        const _: () = {
            #[automatically_derived]
            impl ::tabula::Schema for #ident {
                const TABLES: &'static [::tabula::TableInfo] = &[#(#infos),*];
            }

            #(#contains)*
            #(#assert_tables)*
            #(#assert_unique_names)*
        };
    }
}

fn key_impl(key: &ast::Key) -> TokenStream {
    let ident = key.ident;
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
        quote! {
            <#ty as ::tabula::AsKey<#ty>>::encode_part(&self.#member, #out, #last);
        }
    });
    let decode_parts = fields.iter().enumerate().map(|(i, field)| {
        let (ty, member, last) = (field.ty, &field.member, is_last(i));
        quote! {
            #member: <#ty as ::tabula::Key>::decode_part(#input, #last)?
        }
    });
    let descriptors = fields.iter().map(|field| {
        let (ty, name) = (field.ty, &field.name);
        quote!((#name, <#ty as ::tabula::Key>::DESCRIPTOR))
    });
    let sizes = fields.iter().map(|field| {
        let ty = field.ty;
        quote!(<#ty as ::tabula::Key>::FIXED_SIZE)
    });
    let assert_fields = fields.iter().map(|field| {
        let ty = field.ty;
        quote_spanned! {ty.span()=>
            const _: () = ::tabula::__private::assert_key::<#ty>();
        }
    });
    // Every proper prefix: the first field alone, then tuples of the first 2, 3, .. fields.
    let prefixes = (1..fields.len()).map(|len| {
        let prefix = if len == 1 {
            let ty = fields[0].ty;
            quote!(#ty)
        } else {
            let tys = fields[..len].iter().map(|field| field.ty);
            quote!((#(#tys),*))
        };
        quote! {
            #[automatically_derived]
            impl ::tabula::HasPrefix<#prefix> for #ident {}
        }
    });

    quote! {
        const _: () = {
            #[automatically_derived]
            impl ::tabula::AsKey<#ident> for #ident {
                type Encoded<'a> = ::tabula::KeyBuf;

                #[inline]
                fn encode(&self) -> Self::Encoded<'_> {
                    let mut #out = ::tabula::KeyBuf::new();
                    <Self as ::tabula::AsKey<Self>>::encode_part(self, &mut #out, true);
                    #out
                }

                #[inline]
                fn encode_part(
                    &self,
                    #out: &mut ::tabula::KeyBuf,
                    #last: ::core::primitive::bool,
                ) {
                    #(#encode_parts)*
                }
            }

            #[automatically_derived]
            impl ::tabula::Key for #ident {
                const DESCRIPTOR: ::tabula::Descriptor = ::tabula::Descriptor::Struct {
                    name: #name,
                    fields: &[#(#descriptors),*],
                };
                const FIXED_SIZE: ::core::option::Option<::core::primitive::usize> =
                    ::tabula::__private::sum_fixed_sizes(&[#(#sizes),*]);

                #[inline]
                fn decode_part(
                    #input: &mut &[::core::primitive::u8],
                    #last: ::core::primitive::bool,
                ) -> ::core::result::Result<Self, ::tabula::DecodeError> {
                    ::core::result::Result::Ok(Self {
                        #(#decode_parts,)*
                    })
                }
            }

            #(#prefixes)*
            #(#assert_fields)*
        };
    }
}

/// A string literal usable as a `format_args!` string (as `assert!` reads its message): braces
/// doubled.
fn format_literal(message: &str) -> String {
    message.replace('{', "{{").replace('}', "}}")
}
