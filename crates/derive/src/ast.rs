//! The three inputs as the derives see them, with shape errors (an enum where a struct belongs,
//! fields where none belong) reported while they are built.

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Index, Member, Path, Type};

use crate::attr;
use crate::ctxt::Ctxt;

/// `#[derive(Table)] #[table(..)] struct X;`
pub struct Table<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    pub attrs: attr::Table<'a>,
    /// The path the generated code names Tabula by (`#[tabula(crate = ..)]`).
    pub krate: Path,
}

impl<'a> Table<'a> {
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> Self {
        let ident = &input.ident;
        match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Unit => {}
                fields => cx.error_spanned_by(
                    fields,
                    format!(
                        "a table is a unit struct: write `struct {ident};` and name the value type \
                         in `#[table(value = ..)]`"
                    ),
                ),
            },
            Data::Enum(data) => cx.error_spanned_by(
                data.enum_token,
                format!("a table is a unit struct, not an enum: write `struct {ident};`"),
            ),
            Data::Union(data) => cx.error_spanned_by(
                data.union_token,
                format!("a table is a unit struct, not a union: write `struct {ident};`"),
            ),
        }
        Table {
            ident,
            generics: &input.generics,
            attrs: attr::Table::from_attrs(cx, &input.attrs),
            krate: attr::crate_path(cx, &input.attrs),
        }
    }
}

/// `#[derive(Schema)] struct Chain(Headers, Storage);`
pub struct Schema<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    /// The table types, in ID order.
    pub tables: Vec<&'a Type>,
    /// The path the generated code names Tabula by (`#[tabula(crate = ..)]`).
    pub krate: Path,
}

impl<'a> Schema<'a> {
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> Self {
        let ident = &input.ident;
        let example = format!("write `struct {ident}(TableA, TableB);`");
        let mut tables = Vec::new();
        match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Unnamed(fields) if fields.unnamed.is_empty() => cx.error_spanned_by(
                    fields,
                    format!("a schema needs at least one table: {example}"),
                ),
                Fields::Unnamed(fields) => tables.extend(fields.unnamed.iter().map(|f| &f.ty)),
                Fields::Named(fields) => {
                    let listed: Vec<String> =
                        fields.named.iter().map(|f| type_to_string(&f.ty)).collect();
                    cx.error_spanned_by(
                        fields,
                        format!(
                            "a schema lists its tables as tuple fields: write `struct {ident}({});`",
                            listed.join(", ")
                        ),
                    );
                }
                Fields::Unit => cx.error_spanned_by(
                    ident,
                    format!("a schema needs at least one table: {example}"),
                ),
            },
            Data::Enum(data) => cx.error_spanned_by(
                data.enum_token,
                format!("a schema is a tuple struct listing its tables, not an enum: {example}"),
            ),
            Data::Union(data) => cx.error_spanned_by(
                data.union_token,
                format!("a schema is a tuple struct listing its tables, not a union: {example}"),
            ),
        }
        Schema {
            ident,
            generics: &input.generics,
            tables,
            krate: attr::crate_path(cx, &input.attrs),
        }
    }
}

/// `#[derive(Key)] struct SlotKey { addr: [u8; 20], slot: u64 }`
pub struct Key<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    /// The fields in declaration order, which is the sort order.
    pub fields: Vec<Field<'a>>,
    /// The path the generated code names Tabula by (`#[tabula(crate = ..)]`).
    pub krate: Path,
}

/// One field of a composite key.
pub struct Field<'a> {
    /// `self.<member>`: a name, or an index in a tuple struct.
    pub member: Member,
    /// The name recorded in the key's descriptor (`"0"`, `"1"`, .. for a tuple struct).
    pub name: String,
    pub ty: &'a Type,
}

impl<'a> Key<'a> {
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> Self {
        let ident = &input.ident;
        let mut fields = Vec::new();
        match &input.data {
            Data::Struct(data) => {
                for (i, field) in data.fields.iter().enumerate() {
                    let (member, name) = match &field.ident {
                        Some(name) => (Member::Named(name.clone()), name.unraw().to_string()),
                        None => (Member::Unnamed(Index::from(i)), i.to_string()),
                    };
                    fields.push(Field {
                        member,
                        name,
                        ty: &field.ty,
                    });
                }
                if fields.is_empty() {
                    let at = match &data.fields {
                        Fields::Unit => ident.to_token_stream(),
                        fields => fields.to_token_stream(),
                    };
                    cx.error_spanned_by(
                        at,
                        "a composite key needs at least one field: its fields, in order, are the \
                         parts of the key",
                    );
                }
            }
            Data::Enum(data) => cx.error_spanned_by(
                data.enum_token,
                "a composite key is a struct, not an enum: its fields, in order, are the parts of \
                 the key",
            ),
            Data::Union(data) => cx.error_spanned_by(
                data.union_token,
                "a composite key is a struct, not a union: its fields, in order, are the parts of \
                 the key",
            ),
        }
        Key {
            ident,
            generics: &input.generics,
            fields,
            krate: attr::crate_path(cx, &input.attrs),
        }
    }
}

/// A type as written, with spaces only where Rust needs them (between words) and after `,`/`;`:
/// `Vec<u8>`, `(u32, String)`, `[u8; 20]`, `&'static str`.
pub fn type_to_string(ty: &Type) -> String {
    let mut out = String::new();
    write_tokens(ty.to_token_stream(), &mut out);
    out
}

fn write_tokens(tokens: proc_macro2::TokenStream, out: &mut String) {
    use proc_macro2::{Delimiter, TokenTree};

    #[derive(PartialEq)]
    enum Prev {
        Start,
        Word,
        Separator,
        Other,
    }

    let mut prev = Prev::Start;
    for token in tokens {
        let is_word = matches!(token, TokenTree::Ident(_) | TokenTree::Literal(_));
        if prev == Prev::Separator || (is_word && prev == Prev::Word) {
            out.push(' ');
        }
        prev = match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                out.push_str(open);
                write_tokens(group.stream(), out);
                out.push_str(close);
                Prev::Other
            }
            TokenTree::Punct(punct) => {
                out.push(punct.as_char());
                if matches!(punct.as_char(), ',' | ';') {
                    Prev::Separator
                } else {
                    Prev::Other
                }
            }
            TokenTree::Ident(ident) => {
                out.push_str(&ident.to_string());
                Prev::Word
            }
            TokenTree::Literal(literal) => {
                out.push_str(&literal.to_string());
                Prev::Word
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::type_to_string;

    #[track_caller]
    fn check(written: &str, expected: &str) {
        let ty: syn::Type = syn::parse_str(written).unwrap();
        assert_eq!(type_to_string(&ty), expected);
    }

    #[test]
    fn types_print_as_written() {
        check("u64", "u64");
        check("Vec < u8 >", "Vec<u8>");
        check("Option<Vec<u8>>", "Option<Vec<u8>>");
        check("( u32 , String )", "(u32, String)");
        check("[u8;20]", "[u8; 20]");
        check("&'static str", "&'static str");
        check(
            ":: std :: collections :: BTreeMap<u32, Vec<u8>>",
            "::std::collections::BTreeMap<u32, Vec<u8>>",
        );
        check("<T as Trait>::Assoc", "<T as Trait>::Assoc");
        check("r#type::Foo", "r#type::Foo");
    }
}
