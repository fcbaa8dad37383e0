//! Attribute arguments, parsed with `impl Parse` into typed structs. Every
//! error is reported on the token that caused it.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, Lit, LitInt, LitStr, Path, Token};

use crate::diag::head;

mod kw {
    syn::custom_keyword!(name);
    syn::custom_keyword!(recursive);
    syn::custom_keyword!(traced);
    syn::custom_keyword!(skip);
    syn::custom_keyword!(always);
    syn::custom_keyword!(qualifier);
    syn::custom_keyword!(file);
    syn::custom_keyword!(line);
    syn::custom_keyword!(tags);
    syn::custom_keyword!(record_outcome);
    syn::custom_keyword!(macro_rules);
}

const PROFILE_EXPECTED: &str = "expected a region name (`\"solver\"` or `name = \"solver\"`), \
                                `recursive`, `traced`, `tags = [\"io\"]`, `record_outcome`, \
                                `skip` or `crate = path`";

const PROFILE_ALL_EXPECTED: &str = "#[profile_all] accepts only `always`, `macro_rules` and \
                                    `crate = path`; a scope's functions are named after their \
                                    path";

/// How an instrumented function records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Records whenever a session is active.
    Plain,
    /// A recursive entrypoint: records, and lets traced functions record
    /// while it runs on the same thread.
    Entrypoint,
    /// Records only inside a recursive entrypoint.
    Traced,
}

/// The path of the runtime crate in the expansion: `::scope_profiler`, or
/// the `crate = path` argument for a renamed dependency.
pub(crate) fn runtime(krate: Option<&Path>) -> TokenStream {
    match krate {
        Some(path) => path.to_token_stream(),
        None => quote!(::scope_profiler),
    }
}

/// The arguments of `#[profile(...)]`.
#[derive(Default)]
pub(crate) struct ProfileArgs {
    /// An explicit region name.
    pub name: Option<LitStr>,
    /// The `recursive` flag, kept for its span.
    pub recursive: Option<kw::recursive>,
    /// The `traced` flag.
    pub traced: Option<kw::traced>,
    /// The `skip` flag.
    pub skip: Option<kw::skip>,
    /// `crate = path`: where the runtime crate is.
    pub krate: Option<Path>,
    /// `tags = ["io", ...]`, with the keyword for its span.
    pub tags: Option<(kw::tags, Vec<LitStr>)>,
    /// The `record_outcome` flag.
    pub record_outcome: Option<kw::record_outcome>,
}

/// `tags = ["io", "mylib"]`: a list of non-empty string literals, given once.
fn set_tags(slot: &mut Option<(kw::tags, Vec<LitStr>)>, input: ParseStream) -> syn::Result<()> {
    let key: kw::tags = input.parse()?;
    if !input.peek(Token![=]) {
        return Err(syn::Error::new_spanned(
            key,
            "`tags` needs a list of string literals: `tags = [\"io\", \"mylib\"]`",
        ));
    }
    input.parse::<Token![=]>()?;
    if !input.peek(syn::token::Bracket) {
        let value: syn::Expr = input.parse()?;
        return Err(syn::Error::new_spanned(
            value,
            "`tags` takes a list of string literals in brackets: `tags = [\"io\"]`",
        ));
    }
    let content;
    syn::bracketed!(content in input);
    let mut tags: Vec<LitStr> = Vec::new();
    while !content.is_empty() {
        if !content.peek(LitStr) {
            let value: syn::Expr = content.parse()?;
            return Err(syn::Error::new_spanned(
                value,
                "a tag must be a string literal, like `\"io\"`",
            ));
        }
        let tag: LitStr = content.parse()?;
        if tag.value().is_empty() {
            return Err(syn::Error::new_spanned(tag, "a tag must not be empty"));
        }
        if tags.iter().any(|t| t.value() == tag.value()) {
            return Err(syn::Error::new_spanned(tag, "this tag is given twice"));
        }
        tags.push(tag);
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    if slot.is_some() {
        return Err(syn::Error::new_spanned(key, "`tags` is given twice"));
    }
    *slot = Some((key, tags));
    Ok(())
}

impl Parse for ProfileArgs {
    fn parse(input: ParseStream) -> syn::Result<ProfileArgs> {
        let mut args = ProfileArgs::default();
        while !input.is_empty() {
            if input.peek(LitStr) {
                args.set_name(input.parse()?)?;
            } else if input.peek(Lit) {
                return Err(name_not_literal(&input.parse::<Lit>()?));
            } else if input.peek(kw::name) {
                let key: kw::name = input.parse()?;
                if !input.peek(Token![=]) {
                    return Err(syn::Error::new_spanned(
                        key,
                        "`name` needs a value: `name = \"solver\"`",
                    ));
                }
                input.parse::<Token![=]>()?;
                if !input.peek(LitStr) {
                    return Err(name_not_literal(&input.parse::<syn::Expr>()?));
                }
                args.set_name(input.parse()?)?;
            } else if input.peek(kw::recursive) {
                set_flag(&mut args.recursive, input)?;
            } else if input.peek(kw::traced) {
                set_flag(&mut args.traced, input)?;
            } else if input.peek(kw::skip) {
                set_flag(&mut args.skip, input)?;
            } else if input.peek(kw::tags) {
                set_tags(&mut args.tags, input)?;
            } else if input.peek(kw::record_outcome) {
                set_flag(&mut args.record_outcome, input)?;
            } else if input.peek(Token![crate]) {
                set_crate(&mut args.krate, input)?;
            } else if input.peek(Ident::peek_any) && input.peek2(Token![!]) {
                return Err(name_not_literal(&input.parse::<syn::Macro>()?));
            } else if input.peek(Ident::peek_any) {
                let other = input.call(Ident::parse_any)?;
                return Err(syn::Error::new_spanned(
                    &other,
                    format!("unknown argument `{other}`: {PROFILE_EXPECTED}"),
                ));
            } else {
                return Err(input.error(PROFILE_EXPECTED));
            }
            if let (Some(_), Some(traced)) = (&args.recursive, &args.traced) {
                return Err(syn::Error::new_spanned(
                    traced,
                    "`recursive` and `traced` cannot be combined: a recursive entrypoint \
                     always records",
                ));
            }
            comma(input)?;
        }
        args.check_combination()?;
        Ok(args)
    }
}

impl ProfileArgs {
    fn set_name(&mut self, name: LitStr) -> syn::Result<()> {
        if self.name.is_some() {
            return Err(syn::Error::new_spanned(
                name,
                "the region name is given twice: keep one of the names",
            ));
        }
        if name.value().is_empty() {
            return Err(syn::Error::new_spanned(
                name,
                "the region name must not be empty",
            ));
        }
        self.name = Some(name);
        Ok(())
    }

    fn check_combination(&self) -> syn::Result<()> {
        if let Some(skip) = &self.skip
            && (self.name.is_some()
                || self.recursive.is_some()
                || self.traced.is_some()
                || self.tags.is_some()
                || self.record_outcome.is_some())
        {
            return Err(syn::Error::new_spanned(
                skip,
                "`skip` cannot be combined with other arguments: a skipped function is not \
                     instrumented",
            ));
        }
        Ok(())
    }

    /// How the function records.
    pub(crate) fn mode(&self) -> Mode {
        if self.recursive.is_some() {
            Mode::Entrypoint
        } else if self.traced.is_some() {
            Mode::Traced
        } else {
            Mode::Plain
        }
    }
}

/// The arguments of `#[profile_all(...)]`, and of `profile_all_items!`
/// before its `;`.
#[derive(Default)]
pub(crate) struct ProfileAllArgs {
    /// `always`: the scope records whenever a session is active, not only
    /// inside a recursive entrypoint.
    pub always: Option<kw::always>,
    /// `macro_rules`: the functions the scope's `macro_rules!` expand to
    /// are instrumented too (see `macro_bodies`).
    pub macro_rules: Option<kw::macro_rules>,
    /// `crate = path`: where the runtime crate is.
    pub krate: Option<Path>,
}

impl Parse for ProfileAllArgs {
    fn parse(input: ParseStream) -> syn::Result<ProfileAllArgs> {
        let mut args = ProfileAllArgs::default();
        while !input.is_empty() {
            if input.peek(kw::always) {
                set_flag(&mut args.always, input)?;
            } else if input.peek(kw::macro_rules) {
                set_flag(&mut args.macro_rules, input)?;
            } else if input.peek(Token![crate]) {
                set_crate(&mut args.krate, input)?;
            } else if input.peek(Ident::peek_any) {
                let other = input.call(Ident::parse_any)?;
                return Err(syn::Error::new_spanned(
                    &other,
                    format!("unknown argument `{other}`: {PROFILE_ALL_EXPECTED}"),
                ));
            } else {
                return Err(input.error(PROFILE_ALL_EXPECTED));
            }
            comma(input)?;
        }
        Ok(args)
    }
}

impl ProfileAllArgs {
    /// How the functions of the scope record.
    pub(crate) fn mode(&self) -> Mode {
        if self.always.is_some() {
            Mode::Plain
        } else {
            Mode::Traced
        }
    }
}

/// Where a call site is, when its tokens cannot say (a module file under
/// the nightly inner attribute): the file as `file!()` gives it, and a line.
#[derive(Clone)]
pub(crate) struct Location {
    pub file: LitStr,
    pub line: LitInt,
}

impl Location {
    pub(crate) fn new(file: &str, line: usize) -> Location {
        let span = Span::call_site();
        Location {
            file: LitStr::new(file, span),
            line: LitInt::new(&format!("{line}u32"), span),
        }
    }
}

/// The hidden `#[<crate>::__private::profile_scope(...)]` a `profile_all`
/// scope puts after a function's own `#[profile(...)]`: what only the scope
/// knows. Written by the crate's own expansion, never by users.
#[derive(Default)]
pub(crate) struct ScopeArgs {
    /// `qualifier = "Type::method"`, the function's path inside its module.
    pub qualifier: Option<LitStr>,
    /// `crate = path`, the scope's runtime path.
    pub krate: Option<Path>,
    /// `file = "src/m.rs", line = 12`.
    pub location: Option<Location>,
}

impl Parse for ScopeArgs {
    fn parse(input: ParseStream) -> syn::Result<ScopeArgs> {
        let mut args = ScopeArgs::default();
        while !input.is_empty() {
            if input.peek(kw::qualifier) {
                input.parse::<kw::qualifier>()?;
                input.parse::<Token![=]>()?;
                args.qualifier = Some(input.parse()?);
            } else if input.peek(Token![crate]) {
                set_crate(&mut args.krate, input)?;
            } else {
                input.parse::<kw::file>()?;
                input.parse::<Token![=]>()?;
                let file = input.parse()?;
                input.parse::<Token![,]>()?;
                input.parse::<kw::line>()?;
                input.parse::<Token![=]>()?;
                let line = input.parse()?;
                args.location = Some(Location { file, line });
            }
            comma(input)?;
        }
        Ok(args)
    }
}

impl ToTokens for ScopeArgs {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        if let Some(qualifier) = &self.qualifier {
            tokens.extend(quote!(qualifier = #qualifier,));
        }
        if let Some(krate) = &self.krate {
            tokens.extend(quote!(crate = #krate,));
        }
        if let Some(Location { file, line }) = &self.location {
            tokens.extend(quote!(file = #file, line = #line,));
        }
    }
}

/// A flag keyword, given at most once and without a value.
fn set_flag<K: Parse + ToTokens>(slot: &mut Option<K>, input: ParseStream) -> syn::Result<()> {
    let flag: K = input.parse()?;
    let text = flag.to_token_stream().to_string();
    if input.peek(Token![=]) {
        let eq: Token![=] = input.parse()?;
        let value: syn::Expr = input.parse()?;
        return Err(syn::Error::new_spanned(
            head(&[&flag, &eq, &value]),
            format!("`{text}` takes no value: write `{text}` alone"),
        ));
    }
    if slot.is_some() {
        return Err(syn::Error::new_spanned(
            flag,
            format!("`{text}` is given twice"),
        ));
    }
    *slot = Some(flag);
    Ok(())
}

/// `crate = path` or `crate = "path"`, at most once.
fn set_crate(slot: &mut Option<Path>, input: ParseStream) -> syn::Result<()> {
    let key: Token![crate] = input.parse()?;
    if !input.peek(Token![=]) {
        return Err(syn::Error::new_spanned(
            key,
            "`crate` needs the path of the scope_profiler crate: `crate = my_profiler`",
        ));
    }
    input.parse::<Token![=]>()?;
    let path = if input.peek(LitStr) {
        let text: LitStr = input.parse()?;
        text.parse_with(Path::parse_mod_style).map_err(|_| {
            syn::Error::new_spanned(
                &text,
                "expected the path of the scope_profiler crate: `crate = my_profiler` or \
                 `crate = \"my_profiler\"`",
            )
        })?
    } else if input.peek(Token![::]) || input.peek(Ident::peek_any) {
        input.call(Path::parse_mod_style)?
    } else {
        return Err(
            input.error("expected the path of the scope_profiler crate: `crate = my_profiler`")
        );
    };
    if slot.is_some() {
        return Err(syn::Error::new_spanned(path, "`crate` is given twice"));
    }
    *slot = Some(path);
    Ok(())
}

/// The `,` between arguments (optional after the last).
fn comma(input: ParseStream) -> syn::Result<()> {
    if !input.is_empty() {
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

fn name_not_literal(tokens: &dyn ToTokens) -> syn::Error {
    syn::Error::new_spanned(
        tokens,
        "the region name must be a string literal, like `\"solver\"`",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tokens: TokenStream) -> syn::Result<ProfileArgs> {
        syn::parse2(tokens)
    }

    fn err(tokens: TokenStream) -> String {
        match parse(tokens) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn parses_every_form() {
        let args = parse(quote!()).unwrap();
        assert!(args.name.is_none() && args.mode() == Mode::Plain);
        let args = parse(quote!("solver")).unwrap();
        assert_eq!(args.name.unwrap().value(), "solver");
        let args = parse(quote!(name = "solver")).unwrap();
        assert_eq!(args.name.unwrap().value(), "solver");
        let args = parse(quote!("solve", recursive)).unwrap();
        assert_eq!(args.mode(), Mode::Entrypoint);
        let args = parse(quote!(traced,)).unwrap();
        assert_eq!(args.mode(), Mode::Traced);
        assert!(parse(quote!(skip)).unwrap().skip.is_some());
        let args = parse(quote!(traced, crate = ::my::sp)).unwrap();
        assert_eq!(runtime(args.krate.as_ref()).to_string(), ":: my :: sp");
        let args = parse(quote!(crate = "sp")).unwrap();
        assert_eq!(runtime(args.krate.as_ref()).to_string(), "sp");
        assert_eq!(runtime(None).to_string(), ":: scope_profiler");
        let args = parse(quote!("io.load", tags = ["io", "mylib"], record_outcome)).unwrap();
        let tags: Vec<String> = args.tags.unwrap().1.iter().map(LitStr::value).collect();
        assert_eq!(tags, ["io", "mylib"]);
        assert!(args.record_outcome.is_some());
        assert!(parse(quote!(tags = [])).unwrap().tags.unwrap().1.is_empty());
        let all: ProfileAllArgs = syn::parse2(quote!(always, crate = sp)).unwrap();
        assert_eq!(all.mode(), Mode::Plain);
        let all: ProfileAllArgs = syn::parse2(quote!(macro_rules, always)).unwrap();
        assert!(all.macro_rules.is_some() && all.mode() == Mode::Plain);
        let all: ProfileAllArgs = syn::parse2(quote!()).unwrap();
        assert_eq!(all.mode(), Mode::Traced);
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(err(quote!(fast)).starts_with("unknown argument `fast`"));
        assert!(err(quote!(name = solver)).contains("string literal"));
        assert!(err(quote!(42)).contains("string literal"));
        assert!(err(quote!(concat!("a"))).contains("string literal"));
        assert!(err(quote!("a", name = "b")).contains("given twice"));
        assert!(err(quote!(recursive, recursive)).contains("`recursive` is given twice"));
        assert!(err(quote!(recursive, traced)).contains("cannot be combined"));
        assert!(err(quote!(skip, "x")).contains("`skip` cannot be combined"));
        assert!(err(quote!(recursive = true)).contains("takes no value"));
        assert!(err(quote!("")).contains("must not be empty"));
        assert!(err(quote!(crate)).contains("needs the path"));
        assert!(err(quote!(crate = 1)).contains("expected the path"));
        assert!(err(quote!(crate = a, crate = b)).contains("`crate` is given twice"));
        assert!(err(quote!(tags)).contains("needs a list"));
        assert!(err(quote!(tags = "io")).contains("in brackets"));
        assert!(err(quote!(tags = [io])).contains("must be a string literal"));
        assert!(err(quote!(tags = [""])).contains("must not be empty"));
        assert!(err(quote!(tags = ["a", "a"])).contains("given twice"));
        assert!(err(quote!(tags = ["a"], tags = ["b"])).contains("`tags` is given twice"));
        assert!(err(quote!(record_outcome = true)).contains("takes no value"));
        assert!(err(quote!(skip, tags = ["a"])).contains("`skip` cannot be combined"));
        assert!(syn::parse2::<ProfileAllArgs>(quote!(always, always)).is_err());
        assert!(syn::parse2::<ProfileAllArgs>(quote!(sometimes)).is_err());
    }

    #[test]
    fn scope_arguments_round_trip() {
        let args = ScopeArgs {
            qualifier: Some(LitStr::new("Grid::refine", Span::call_site())),
            krate: Some(syn::parse_quote!(sp)),
            location: Some(Location::new("src/m.rs", 12)),
        };
        let again: ScopeArgs = syn::parse2(args.to_token_stream()).unwrap();
        assert_eq!(again.qualifier.unwrap().value(), "Grid::refine");
        assert_eq!(again.krate.unwrap().to_token_stream().to_string(), "sp");
        let location = again.location.unwrap();
        assert_eq!(location.file.value(), "src/m.rs");
        assert_eq!(location.line.base10_parse::<u32>().unwrap(), 12);
    }
}
