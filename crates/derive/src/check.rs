//! Rules that need the whole declaration: required keys, table names, generics, duplicates.

use std::collections::HashMap;

use quote::ToTokens;
use syn::Generics;
use syn::ext::IdentExt;

use crate::ast;
use crate::ctxt::Ctxt;

/// Table names starting with this are reserved: core's `RESERVED_PREFIX`, which a proc-macro crate
/// cannot import. Checked here for a clear error; the expansion also asserts
/// `!is_reserved(NAME)` against core's constant, so the two cannot drift apart unnoticed.
pub const RESERVED_PREFIX: &str = "__tabula";

pub fn table(cx: &Ctxt, table: &ast::Table) {
    no_generics(cx, table.generics, "a table cannot be generic");

    let attrs = &table.attrs;
    match attrs.attr {
        None => cx.error_spanned_by(
            table.ident,
            format!(
                "missing `#[table(key = .., value = ..)]` on table `{}`",
                table.ident
            ),
        ),
        Some(attr) => {
            if attrs.key.is_none() {
                cx.error_spanned_by(attr, "missing `key = ..` in `#[table(..)]`");
            }
            if attrs.value.is_none() {
                cx.error_spanned_by(attr, "missing `value = ..` in `#[table(..)]`");
            }
        }
    }

    let (name, at) = match &attrs.name {
        Some(lit) => (lit.value(), lit.to_token_stream()),
        None => (
            table.ident.unraw().to_string(),
            table.ident.to_token_stream(),
        ),
    };
    if name.is_empty() {
        cx.error_spanned_by(at, "a table name cannot be empty");
    } else if name.starts_with(RESERVED_PREFIX) {
        cx.error_spanned_by(
            at,
            format!(
                "table names starting with `{RESERVED_PREFIX}` are reserved for Tabula's meta table"
            ),
        );
    } else if name.contains('\0') {
        cx.error_spanned_by(at, "a table name cannot contain a NUL byte");
    }
}

pub fn schema(cx: &Ctxt, schema: &ast::Schema) {
    no_generics(cx, schema.generics, "a schema cannot be generic");

    // The same type written twice would give two `Contains` impls for one table; name it here.
    // Types are compared as written, so `Headers` and `crate::Headers` are not caught here but by
    // the name check the expansion adds.
    let mut seen = HashMap::new();
    for (i, ty) in schema.tables.iter().enumerate() {
        let written = ast::type_to_string(ty);
        if let Some(first) = seen.get(&written) {
            cx.error_spanned_by(
                ty,
                format!(
                    "table `{written}` is listed twice in schema `{}` (first at position {first}): \
                     list each table once",
                    schema.ident
                ),
            );
        } else {
            seen.insert(written, i);
        }
    }
}

pub fn key(cx: &Ctxt, key: &ast::Key) {
    no_generics(cx, key.generics, "a composite key cannot be generic");
}

fn no_generics(cx: &Ctxt, generics: &Generics, message: &str) {
    if !generics.params.is_empty() {
        cx.error_spanned_by(generics, message);
    } else if let Some(where_clause) = &generics.where_clause {
        cx.error_spanned_by(where_clause, message);
    }
}

/// The rules of `dupsort` and `subkey = ..`: a subkey needs `dupsort`, and a dupsort table
/// without a subkey stores its values in their key encoding, so it takes no `codec`.
pub fn dupsort(cx: &Ctxt, table: &ast::Table) {
    let attrs = &table.attrs;
    if let Some((keyword, _)) = &attrs.subkey
        && !attrs.dupsort
    {
        cx.error_spanned_by(
            keyword,
            "`subkey` sorts the values of a key, which needs `dupsort`: write \
             `#[table(key = .., subkey = .., value = .., dupsort)]`",
        );
    }
    if attrs.dupsort
        && let Some(keyword) = &attrs.indexed
    {
        cx.error_spanned_by(
            keyword,
            "an `indexed` table cannot be `dupsort`: an index entry points at one row by its key",
        );
    }
    if attrs.dupsort
        && attrs.subkey.is_none()
        && let Some(codec) = &attrs.codec
    {
        cx.error_spanned_by(
            codec,
            "a `dupsort` table without a subkey stores each value in its order-preserving key \
             encoding, so libmdbx keeps a key's values in their order: remove `codec = ..`, or \
             sort the values by a subkey (`subkey = S`) and the codec encodes what follows it",
        );
    }
}
