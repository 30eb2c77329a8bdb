//! What `dupsort` and `subkey = ..` add to `#[derive(Table)]`: the value type and codec the
//! table stores (values in their order-preserving key encoding, or `(subkey, value)` pairs
//! behind the subkey's encoding), and the `DupSort` / `HasSubKey` impls the dup operations
//! require.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Path;
use syn::spanned::Spanned;

use crate::attr::{self, krate_at};

/// `type Value` and `type Codec` of a dupsort table; `None` for a table without `dupsort`.
///
/// - no subkey: `V` stored by `Ordered<V>`, which needs `V: OrderedValue` (the error message
///   says what to declare instead);
/// - `subkey = S`: `(S, V)` stored by `SubKeyed<S, C>`, `C` the declared codec or `Bincode<V>`.
pub fn value_and_codec(attrs: &attr::Table, krate: &Path) -> Option<(TokenStream, TokenStream)> {
    if !attrs.dupsort {
        return None;
    }
    let value = attrs.value.as_ref()?;
    let at_value = krate_at(krate, value.span());
    Some(match &attrs.subkey {
        None => (
            quote!(#value),
            quote_spanned!(value.span()=> #at_value::Ordered<#value>),
        ),
        Some((_, subkey)) => {
            let codec = match &attrs.codec {
                Some(codec) => quote!(#codec),
                None => quote_spanned!(value.span()=> #at_value::Bincode<#value>),
            };
            let at_subkey = krate_at(krate, subkey.span());
            (
                quote!((#subkey, #value)),
                quote_spanned!(subkey.span()=> #at_subkey::SubKeyed<#subkey, #codec>),
            )
        }
    })
}

/// `Table::DUP_UNIT` of a dupsort table with a subkey (the subkey's encoding at the front of a
/// stored value is the unit its history records); the trait's default (the whole value) for
/// any other table.
pub fn unit(attrs: &attr::Table, krate: &Path) -> TokenStream {
    match (&attrs.subkey, attrs.dupsort) {
        (Some((_, subkey)), true) => quote! {
            const DUP_UNIT: fn(&[::core::primitive::u8]) -> ::core::option::Option<::core::primitive::usize> =
                #krate::__private::subkey_len::<#subkey>;
        },
        _ => TokenStream::new(),
    }
}

/// `DupSort` (and, with a subkey, `HasSubKey`) for a dupsort table; nothing otherwise.
pub fn impls(ident: &syn::Ident, attrs: &attr::Table, krate: &Path) -> TokenStream {
    if !attrs.dupsort {
        return TokenStream::new();
    }
    let Some(value) = &attrs.value else {
        return TokenStream::new();
    };
    let at_value = krate_at(krate, value.span());
    let dup_sort = |subkey: TokenStream, has_subkey: bool| {
        quote! {
            #[automatically_derived]
            impl #krate::__private::DupSealed for #ident {}

            #[automatically_derived]
            impl #krate::DupSort for #ident {
                type SubKey = #subkey;
                const HAS_SUBKEY: ::core::primitive::bool = #has_subkey;
            }
        }
    };
    match &attrs.subkey {
        // The values sort and are sought as themselves. `Ordered<V>` already asks for
        // `V: OrderedValue`; the subkey is spelled through it so that a value type without an
        // ordered encoding is reported once, with that trait's message.
        None => dup_sort(
            quote_spanned!(value.span()=> <#at_value::Ordered<#value> as #at_value::Value>::Item),
            false,
        ),
        Some((_, subkey)) => {
            let codec = match &attrs.codec {
                Some(codec) => quote!(#codec),
                None => quote_spanned!(value.span()=> #at_value::Bincode<#value>),
            };
            let mut out = dup_sort(quote!(#subkey), true);
            out.extend(quote! {
                #[automatically_derived]
                impl #krate::HasSubKey for #ident {
                    type SubValue = #value;
                    type SubCodec = #codec;
                }
            });
            out
        }
    }
}
