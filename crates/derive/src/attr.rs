//! `#[table(..)]` and `#[tabula(..)]`: the attribute keywords and their parsers.
//!
//! This stage checks syntax only (known keys, no duplicates, the right kind of value); rules that
//! need the whole declaration live in `check`.

use std::fmt::{self, Display};

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::{Attribute, LitStr, Path, Token, Type};

use crate::ctxt::Ctxt;

/// An attribute keyword.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Symbol(pub &'static str);

/// `#[table(..)]`.
pub const TABLE: Symbol = Symbol("table");
/// `key = K`: the key type.
pub const KEY: Symbol = Symbol("key");
/// `value = V`: the value type.
pub const VALUE: Symbol = Symbol("value");
/// `name = "..."`: the table's name in the file.
pub const NAME: Symbol = Symbol("name");
/// `codec = C`: the value codec.
pub const CODEC: Symbol = Symbol("codec");
/// `dupsort`: several sorted values per key.
pub const DUPSORT: Symbol = Symbol("dupsort");
/// `integer_key`: native-endian `u32`/`u64` keys.
pub const INTEGER_KEY: Symbol = Symbol("integer_key");
/// `value_version = N`: the stated version of the stored values.
pub const VALUE_VERSION: Symbol = Symbol("value_version");
/// `subkey = S`: a dupsort table's values are `(S, V)` pairs sorted by `S`.
pub const SUBKEY: Symbol = Symbol("subkey");
/// `indexed`: the table has secondary indexes (`#[derive(Index)]`).
pub const INDEXED: Symbol = Symbol("indexed");
/// `history`: the table's changes are recorded in its history (`#[derive(History)]`).
pub const HISTORY: Symbol = Symbol("history");

/// `#[tabula(..)]`: what every derive of this crate reads, whatever it declares.
pub const TABULA: Symbol = Symbol("tabula");
/// `crate = path`: the path the generated code names Tabula by.
pub const CRATE: Symbol = Symbol("crate");

/// Every key `#[table(..)]` accepts, in the order the error message lists them.
const TABLE_KEYS: [Symbol; 10] = [
    KEY,
    SUBKEY,
    VALUE,
    NAME,
    CODEC,
    DUPSORT,
    INTEGER_KEY,
    VALUE_VERSION,
    INDEXED,
    HISTORY,
];

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// What the `#[table(..)]` attributes of one declaration say; `None` where a key is absent.
pub struct Table<'a> {
    /// The first `#[table(..)]` attribute, where errors about missing keys point.
    pub attr: Option<&'a Attribute>,
    pub key: Option<Type>,
    pub value: Option<Type>,
    pub name: Option<LitStr>,
    pub codec: Option<Type>,
    pub dupsort: bool,
    pub integer_key: bool,
    /// `value_version = N`, checked to be a `u32` of at least 1.
    pub value_version: Option<u32>,
    /// `subkey = S`, with the keyword where errors about it point.
    pub subkey: Option<(Path, Type)>,
    /// `indexed`, with the keyword where errors about it point.
    pub indexed: Option<Path>,
    /// `history`, with the keyword where errors about it point.
    pub history: Option<Path>,
}

impl<'a> Table<'a> {
    /// Parses every `#[table(..)]` among `attrs`; several attributes are read as one list.
    pub fn from_attrs(cx: &Ctxt, attrs: &'a [Attribute]) -> Self {
        let mut key = Attr::none(cx, KEY);
        let mut value = Attr::none(cx, VALUE);
        let mut name = Attr::none(cx, NAME);
        let mut codec = Attr::none(cx, CODEC);
        let mut dupsort = Attr::none(cx, DUPSORT);
        let mut integer_key = Attr::none(cx, INTEGER_KEY);
        let mut value_version = Attr::none(cx, VALUE_VERSION);
        let mut subkey = Attr::none(cx, SUBKEY);
        let mut indexed = Attr::none(cx, INDEXED);
        let mut history = Attr::none(cx, HISTORY);
        let mut first = None;

        for attr in attrs.iter().filter(|attr| *attr.path() == TABLE) {
            first.get_or_insert(attr);
            let parsed = attr.parse_nested_meta(|meta| {
                if meta.path == KEY {
                    key.set(&meta.path, meta.value()?.parse()?);
                } else if meta.path == VALUE {
                    value.set(&meta.path, meta.value()?.parse()?);
                } else if meta.path == CODEC {
                    codec.set(&meta.path, meta.value()?.parse()?);
                } else if meta.path == NAME {
                    if let Some(lit) = parse_name(cx, &meta)? {
                        name.set(&meta.path, lit);
                    }
                } else if meta.path == DUPSORT {
                    parse_flag(cx, &meta, DUPSORT)?;
                    dupsort.set(&meta.path, ());
                } else if meta.path == SUBKEY {
                    subkey.set(&meta.path, (meta.path.clone(), meta.value()?.parse()?));
                } else if meta.path == INTEGER_KEY {
                    parse_flag(cx, &meta, INTEGER_KEY)?;
                    integer_key.set(&meta.path, ());
                } else if meta.path == VALUE_VERSION {
                    if let Some(version) = parse_version(cx, &meta)? {
                        value_version.set(&meta.path, version);
                    }
                } else if meta.path == INDEXED {
                    parse_flag(cx, &meta, INDEXED)?;
                    indexed.set(&meta.path, meta.path.clone());
                } else if meta.path == HISTORY {
                    parse_flag(cx, &meta, HISTORY)?;
                    history.set(&meta.path, meta.path.clone());
                } else {
                    let expected = TABLE_KEYS.map(|k| format!("`{k}`")).join(", ");
                    // The crate path belongs to every derive, so it has an attribute of its own.
                    let hint = if meta.path == CRATE {
                        "; the path to Tabula goes in `#[tabula(crate = ..)]`"
                    } else {
                        ""
                    };
                    cx.error_spanned_by(
                        &meta.path,
                        format!(
                            "unknown table attribute `{}`; expected one of {expected}{hint}",
                            path_to_string(&meta.path)
                        ),
                    );
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(error) = parsed {
                cx.syn_error(error);
            }
        }

        Table {
            attr: first,
            key: key.get(),
            value: value.get(),
            name: name.get(),
            codec: codec.get(),
            dupsort: dupsort.get().is_some(),
            integer_key: integer_key.get().is_some(),
            value_version: value_version.get(),
            subkey: subkey.get(),
            indexed: indexed.get(),
            history: history.get(),
        }
    }
}

/// The path the generated code names Tabula by: `#[tabula(crate = path)]` among `attrs`, or
/// `::tabula`, the facade users depend on.
///
/// The value is a path, written bare (`crate = tabula_core`, as `#[table(..)]` takes its types)
/// or as a string (`crate = "tabula_core"`, as `#[serde(crate = "..")]` takes it): code inside
/// Tabula's own crates, or a crate that re-exports Tabula under another name, says where the
/// items are. A bad value is reported and the default used, so the rest of the declaration is
/// still checked.
pub fn crate_path(cx: &Ctxt, attrs: &[Attribute]) -> Path {
    let mut krate = Attr::none(cx, CRATE);
    for attr in attrs.iter().filter(|attr| *attr.path() == TABULA) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path == CRATE {
                if let Some(path) = parse_crate(cx, &meta)? {
                    krate.set_in(TABULA, &meta.path, path);
                }
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown tabula attribute `{}`; expected `{CRATE}`: \
                         `#[tabula(crate = path::to::tabula)]`",
                        path_to_string(&meta.path)
                    ),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(error) = parsed {
            cx.syn_error(error);
        }
    }
    krate.get().unwrap_or_else(|| syn::parse_quote!(::tabula))
}

/// `krate` with every token at `span`, for code generated with `quote_spanned!`: a path to
/// Tabula written into the user's tokens takes their span, as the `::tabula` there always did,
/// so rustc reports a bound that fails in it at the user's token.
pub fn krate_at(krate: &Path, span: proc_macro2::Span) -> TokenStream {
    krate
        .to_token_stream()
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// `crate = path` or `crate = "path"`: a path without generic arguments. `Ok(None)` after
/// reporting a bad value.
fn parse_crate(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<Path>> {
    let expected =
        "expected the path to Tabula: `crate = tabula_core` or `crate = \"tabula_core\"`";
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(&meta.path, expected);
        skip_value(meta)?;
        return Ok(None);
    }
    let eq: Token![=] = meta.input.parse()?;
    let tokens = value_tokens(meta.input)?;
    if tokens.is_empty() {
        cx.error_spanned_by(quote::quote!(#eq), expected);
        return Ok(None);
    }
    let path = match syn::parse2::<LitStr>(tokens.clone()) {
        Ok(lit) => lit.parse_with(Path::parse_mod_style),
        Err(_) => syn::parse::Parser::parse2(Path::parse_mod_style, tokens.clone()),
    };
    match path {
        Ok(path) => Ok(Some(path)),
        Err(_) => {
            cx.error_spanned_by(tokens, expected);
            Ok(None)
        }
    }
}

/// Reports `meta` as an unknown key of the attribute `attr`, listing the `keys` it takes, and
/// skips its value, so the rest of the attribute is still read.
pub fn unknown_key(
    cx: &Ctxt,
    meta: &ParseNestedMeta,
    attr: Symbol,
    keys: &[Symbol],
) -> syn::Result<()> {
    let expected = keys
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    cx.error_spanned_by(
        &meta.path,
        format!(
            "unknown {attr} attribute `{}`; expected one of {expected}",
            path_to_string(&meta.path)
        ),
    );
    skip_value(meta)
}

/// One keyword's value, remembering that it was set so a second occurrence is an error.
pub struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: Symbol,
    value: Option<T>,
}

impl<'c, T> Attr<'c, T> {
    pub fn none(cx: &'c Ctxt, name: Symbol) -> Self {
        Attr {
            cx,
            name,
            value: None,
        }
    }

    /// Sets the value, or reports a duplicate at `obj` (the keyword as written the second time).
    pub fn set<A: ToTokens>(&mut self, obj: A, value: T) {
        self.set_in(TABLE, obj, value)
    }

    /// [`set`](Self::set) for a keyword of the attribute `attr`.
    pub fn set_in<A: ToTokens>(&mut self, attr: Symbol, obj: A, value: T) {
        if self.value.is_some() {
            let message = format!("duplicate {attr} attribute `{}`", self.name);
            self.cx.error_spanned_by(obj, message);
        } else {
            self.value = Some(value);
        }
    }

    pub fn get(self) -> Option<T> {
        self.value
    }
}

/// `name = "..."`: a string literal and nothing else. `Ok(None)` after reporting a bad value.
pub fn parse_name(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    let eq: Token![=] = meta.input.parse()?;
    let tokens = value_tokens(meta.input)?;
    if tokens.is_empty() {
        cx.error_spanned_by(
            quote::quote!(#eq),
            "expected a string after `name =`: `name = \"...\"`",
        );
        return Ok(None);
    }
    match syn::parse2::<LitStr>(tokens.clone()) {
        Ok(lit) => Ok(Some(lit)),
        Err(_) => {
            cx.error_spanned_by(tokens, "expected a string: `name = \"...\"`");
            Ok(None)
        }
    }
}

/// `value_version = N`: an integer literal from 1 to `u32::MAX`. `Ok(None)` after reporting a bad
/// value.
pub fn parse_version(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<u32>> {
    let eq: Token![=] = meta.input.parse()?;
    let tokens = value_tokens(meta.input)?;
    let expected = "expected a version number of at least 1: `value_version = 1`";
    if tokens.is_empty() {
        cx.error_spanned_by(quote::quote!(#eq), expected);
        return Ok(None);
    }
    match syn::parse2::<syn::LitInt>(tokens.clone()).map(|lit| lit.base10_parse::<u32>()) {
        Ok(Ok(version)) if version >= 1 => Ok(Some(version)),
        _ => {
            cx.error_spanned_by(tokens, expected);
            Ok(None)
        }
    }
}

/// A keyword that takes no value, such as `dupsort`. A value given anyway is reported and skipped.
pub fn parse_flag(cx: &Ctxt, meta: &ParseNestedMeta, flag: Symbol) -> syn::Result<()> {
    parse_flag_in(cx, meta, TABLE, flag)
}

/// [`parse_flag`] for a keyword of the attribute `attr`.
pub fn parse_flag_in(
    cx: &Ctxt,
    meta: &ParseNestedMeta,
    attr: Symbol,
    flag: Symbol,
) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{flag}` takes no value: write `#[{attr}(.., {flag})]`"),
        );
        skip_value(meta)?;
    }
    Ok(())
}

/// Skips whatever follows an unknown keyword (`= ..` or `(..)`) so parsing goes on with the next
/// key and every mistake in the attribute is reported.
pub fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.input.parse::<Token![=]>()?;
        value_tokens(meta.input)?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// The tokens of one value: up to the next comma that is not inside `<..>`.
fn value_tokens(input: ParseStream) -> syn::Result<TokenStream> {
    let mut tokens = TokenStream::new();
    let mut angle_depth = 0usize;
    while !input.is_empty() {
        if angle_depth == 0 && input.peek(Token![,]) {
            break;
        }
        let token: TokenTree = input.parse()?;
        if let TokenTree::Punct(punct) = &token {
            match punct.as_char() {
                '<' => angle_depth += 1,
                '>' => angle_depth = angle_depth.saturating_sub(1),
                _ => {}
            }
        }
        tokens.extend([token]);
    }
    Ok(tokens)
}

/// A path as written, without the spaces `to_string` puts around `::`.
pub fn path_to_string(path: &Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}
