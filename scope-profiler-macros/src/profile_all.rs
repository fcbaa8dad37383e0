//! `profile_all`: walking a module, an impl block, a trait or a list of
//! items, naming each function after its path, and skipping what cannot or
//! should not be instrumented.

use std::cell::RefCell;

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{
    Attribute, Block, ImplItem, Item, ItemImpl, ItemMacro, ItemTrait, LitStr, Path, Signature,
    TraitItem,
};

use crate::args::{Mode, ProfileAllArgs, ScopeArgs, runtime};
use crate::diag::{head, is_profile_all_attribute, is_profile_attribute, item_head, with_item};
use crate::expand::{self, Region};
use crate::file_lines::{FileLines, inner_place};
use crate::macro_bodies::wrap_item_bodies;
use crate::names::impl_prefix;

/// How the functions of one scope are instrumented.
struct Scope {
    /// `Traced`, or `Plain` under `always`.
    mode: Mode,
    /// Whether instrumentation is compiled in (the `enabled` feature); when
    /// off, the items stay unchanged (nested attributes check themselves).
    enabled: bool,
    /// `crate = path`, passed on to functions with their own `#[profile]`.
    krate: Option<Path>,
    /// `macro_rules`: the scope's `macro_rules!` bodies are instrumented.
    macro_bodies: bool,
    /// The module file's lines, when its tokens lost their spans.
    lines: Option<FileLines>,
    /// Errors found on the way; the items are returned with them.
    errors: RefCell<Option<syn::Error>>,
}

impl Scope {
    fn new(args: ProfileAllArgs, enabled: bool, lines: Option<FileLines>) -> Scope {
        Scope {
            mode: args.mode(),
            enabled,
            macro_bodies: args.macro_rules.is_some(),
            krate: args.krate,
            lines,
            errors: RefCell::new(None),
        }
    }

    fn runtime(&self) -> TokenStream {
        runtime(self.krate.as_ref())
    }

    /// The arguments of a `profile_all_items!` with this scope's mode and
    /// runtime path, their `;` included (`always, crate = sp;`).
    fn items_arguments(&self) -> TokenStream {
        let mut parts = Vec::new();
        if self.mode == Mode::Plain {
            parts.push(quote!(always));
        }
        if let Some(krate) = &self.krate {
            parts.push(quote!(crate = #krate));
        }
        if parts.is_empty() {
            TokenStream::new()
        } else {
            quote!(#(#parts),*;)
        }
    }

    fn error(&self, error: syn::Error) {
        let mut errors = self.errors.borrow_mut();
        match &mut *errors {
            Some(first) => first.combine(error),
            None => *errors = Some(error),
        }
    }

    /// The walked items, after the errors found on the way.
    fn finish(self, items: impl ToTokens) -> TokenStream {
        match self.errors.into_inner() {
            Some(error) => with_item(error, items),
            None => items.into_token_stream(),
        }
    }
}

/// `#[profile_all(...)]` on an item.
pub(crate) fn expand_profile_all(
    args: TokenStream,
    item: TokenStream,
    enabled: bool,
) -> TokenStream {
    let args: ProfileAllArgs = match syn::parse2(args) {
        Ok(args) => args,
        Err(error) => return with_item(error, item),
    };
    let mut parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(_) if syn::parse2::<syn::File>(item.clone()).is_ok() => {
            return crate_root_error().to_compile_error();
        }
        Err(error) => return with_item(error, item),
    };
    let lines = match &parsed {
        Item::Mod(module) if module.content.is_some() => {
            FileLines::for_file_module(module.mod_token.span)
        }
        _ => None,
    };
    let scope = Scope::new(args, enabled, lines);
    match walk_item(&mut parsed, &scope) {
        Ok(()) => scope.finish(parsed),
        Err(error) => with_item(error, item),
    }
}

/// As an inner attribute at the crate root (nightly), rustc hands the macro
/// the crate's items, its injected prelude import included, not one item.
/// They are not handed back: that would add rustc's errors about the import.
fn crate_root_error() -> syn::Error {
    syn::Error::new(
        proc_macro2::Span::call_site(),
        "#![profile_all] cannot be used at the crate root: put it first in a module file, or \
         wrap the items in `scope_profiler::profile_all_items! { ... }`",
    )
}

/// `profile_all_items! { [arguments;] items... }`: the items of a whole
/// file. On an error the items are still returned, so that only the error
/// is shown.
pub(crate) fn expand_profile_all_items(input: TokenStream, enabled: bool) -> TokenStream {
    let (args, items) = split_arguments(input);
    let args = match args.map(syn::parse2::<ProfileAllArgs>).transpose() {
        Ok(args) => args.unwrap_or_default(),
        Err(error) => return with_item(error, items),
    };
    let (mut parsed, inner_attributes) = match parse_items.parse2(items.clone()) {
        Ok(parsed) => parsed,
        Err(error) => return with_item(error, items),
    };
    let scope = Scope::new(args, enabled, None);
    if let Some(error) = inner_attributes {
        scope.error(error);
    }
    for item in &parsed {
        check_renamed_extern_crate(item, &scope);
    }
    walk_items(&mut parsed, "", &scope);
    scope.finish(quote!(#(#parsed)*))
}

/// The arguments before the first `;` (`always;`, `crate = sp;`,
/// `always, crate = sp;`), and the items after it. No item starts with
/// `ident ;`, `ident ,` or `ident =`. Arguments without their `;` are all
/// of the input, and the items none.
fn split_arguments(input: TokenStream) -> (Option<TokenStream>, TokenStream) {
    let tokens: Vec<TokenTree> = input.clone().into_iter().collect();
    let starts_with_arguments = match tokens.as_slice() {
        [TokenTree::Ident(_), TokenTree::Punct(p), ..] => matches!(p.as_char(), ';' | ',' | '='),
        _ => false,
    };
    if !starts_with_arguments {
        return (None, input);
    }
    let semi = tokens
        .iter()
        .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'));
    match semi {
        Some(semi) => (
            Some(tokens[..semi].iter().cloned().collect()),
            tokens[semi + 1..].iter().cloned().collect(),
        ),
        None => (Some(input), TokenStream::new()),
    }
}

/// The items, and an error for any inner attribute among them (skipped).
fn parse_items(input: ParseStream) -> syn::Result<(Vec<Item>, Option<syn::Error>)> {
    let mut items = Vec::new();
    let mut error: Option<syn::Error> = None;
    while !input.is_empty() {
        if input.peek(syn::Token![#]) && input.peek2(syn::Token![!]) {
            for attribute in input.call(Attribute::parse_inner)? {
                let inner = syn::Error::new_spanned(
                    &attribute,
                    "inner attributes and `//!` docs cannot be inside profile_all_items!: put \
                     them before the macro, at the top of the file",
                );
                match &mut error {
                    Some(first) => first.combine(inner),
                    None => error = Some(inner),
                }
            }
            continue;
        }
        items.push(input.parse()?);
    }
    Ok((items, error))
}

/// `extern crate x as y;` that a macro expands at the crate root may not
/// shadow a name given with `--extern` (rustc: "macro-expanded `extern
/// crate` items cannot shadow names passed with `--extern`"): the same file
/// can build and then fail under `cargo test`, whose dev-dependencies add
/// names. No expansion escapes it (the rule is about the item's expansion,
/// not its tokens), so a renaming `extern crate` is an error at once, in
/// any file: it has no function to instrument and works the same before
/// the macro. (`extern crate x;` never shadows one and stays.)
fn check_renamed_extern_crate(item: &Item, scope: &Scope) {
    let Item::ExternCrate(krate) = item else {
        return;
    };
    let Some((as_token, alias)) = &krate.rename else {
        return;
    };
    let tokens = head(&[
        &krate.vis,
        &krate.extern_token,
        &krate.crate_token,
        &krate.ident,
        as_token,
        alias,
        &krate.semi_token,
    ]);
    let name = &krate.ident;
    scope.error(syn::Error::new_spanned(
        tokens,
        format!(
            "`extern crate {name} as {alias};` cannot be inside profile_all_items!: at the crate root \
             rustc refuses a macro-expanded `extern crate` whose name is also passed with \
             `--extern` (e.g. by a dev-dependency under `cargo test`); move it before \
             `profile_all_items! {{ ... }}`, it has no function to instrument"
        ),
    ));
}

/// Instruments the functions of the item `#[profile_all]` is on.
fn walk_item(item: &mut Item, scope: &Scope) -> syn::Result<()> {
    match item {
        Item::Mod(module) => match &mut module.content {
            Some((_, items)) => walk_items(items, "", scope),
            None => {
                let ident = &module.ident;
                return Err(syn::Error::new_spanned(
                    head(&[&module.mod_token, &module.ident, &module.semi]),
                    format!(
                        "#[profile_all] cannot see the items of a file module (`mod {ident};`) on \
                         stable Rust: wrap the items of its file in \
                         `scope_profiler::profile_all_items! {{ ... }}`, or, on nightly, start the \
                         file with `#![scope_profiler::profile_all]`"
                    ),
                ));
            }
        },
        Item::Impl(block) => walk_impl(block, "", scope),
        Item::Trait(definition) => walk_trait(definition, "", scope),
        other => {
            return Err(syn::Error::new_spanned(
                item_head(other),
                "#[profile_all] applies to an inline `mod { ... }`, an `impl` block or a `trait`; \
                 for one function use #[profile(traced)] or #[profile]",
            ));
        }
    }
    Ok(())
}

/// Instruments an item list at `place` (see [`FileLines`]).
fn walk_items(items: &mut [Item], place: &str, scope: &Scope) {
    let exported = exported_macros(items);
    let mut containers = 0;
    for item in items {
        let inner = inner_place(place, containers);
        match item {
            Item::Fn(function) => {
                let qualifier = function.sig.ident.unraw().to_string();
                visit_fn(
                    &mut function.attrs,
                    &function.sig,
                    Some(&mut function.block),
                    &qualifier,
                    place,
                    scope,
                );
            }
            Item::Mod(module) => {
                if let Some((_, items)) = &mut module.content {
                    containers += 1;
                    if enter_container(&module.attrs) {
                        walk_items(items, &inner, scope);
                    }
                }
            }
            Item::Impl(block) => {
                containers += 1;
                if enter_container(&block.attrs) {
                    walk_impl(block, &inner, scope);
                }
            }
            Item::Trait(definition) => {
                containers += 1;
                if enter_container(&definition.attrs) {
                    walk_trait(definition, &inner, scope);
                }
            }
            Item::Macro(definition) => {
                check_exported_macro(definition, &exported, scope);
                if scope.macro_bodies && scope.enabled {
                    let runtime = scope.runtime();
                    let wrapper = quote!(#runtime::profile_all_items);
                    wrap_item_bodies(definition, &wrapper, &scope.items_arguments());
                }
            }
            // Functions nested in other items (consts, statics, macro
            // invocations): not visited.
            _ => {}
        }
    }
}

fn walk_impl(block: &mut ItemImpl, place: &str, scope: &Scope) {
    let prefix = impl_prefix(block);
    let mut lints = Vec::new();
    for member in &mut block.items {
        if let ImplItem::Fn(method) = member {
            if scope.enabled {
                lints.extend(expand::canonical_body_lint(&method.sig, &method.block));
            }
            let qualifier = format!("{prefix}{}", method.sig.ident.unraw());
            visit_fn(
                &mut method.attrs,
                &method.sig,
                Some(&mut method.block),
                &qualifier,
                place,
                scope,
            );
        }
    }
    if !lints.is_empty() {
        block.attrs.push(syn::parse_quote!(#[allow(#(#lints),*)]));
    }
}

fn walk_trait(definition: &mut ItemTrait, place: &str, scope: &Scope) {
    let prefix = definition.ident.unraw().to_string();
    for member in &mut definition.items {
        if let TraitItem::Fn(method) = member {
            let qualifier = format!("{prefix}::{}", method.sig.ident.unraw());
            visit_fn(
                &mut method.attrs,
                &method.sig,
                method.default.as_mut(),
                &qualifier,
                place,
                scope,
            );
        }
    }
}

/// Instruments one function of the scope, unless it cannot be (a `const fn`
/// runs at compile time, a trait method without a body has nothing to
/// record) or carries its own `#[profile(...)]`. That attribute then
/// expands it, `skip` included, and gets what only the scope knows (the
/// function's path, `crate = path`, the file's line) in a hidden attribute
/// right after it.
fn visit_fn(
    attrs: &mut Vec<Attribute>,
    sig: &Signature,
    body: Option<&mut Block>,
    qualifier: &str,
    place: &str,
    scope: &Scope,
) {
    let location = scope
        .lines
        .as_ref()
        .and_then(|lines| lines.take(place, &sig.ident.unraw().to_string()));
    if let Some(own) = attrs.iter().position(is_profile_attribute) {
        let hidden = ScopeArgs {
            qualifier: Some(LitStr::new(qualifier, sig.ident.span())),
            krate: scope.krate.clone(),
            location,
        };
        let runtime = scope.runtime();
        attrs.insert(
            own + 1,
            syn::parse_quote!(#[#runtime::__private::profile_scope(#hidden)]),
        );
        return;
    }
    if sig.constness.is_some() || !scope.enabled {
        return;
    }
    if let Some(body) = body {
        let mut region =
            Region::qualified(qualifier, sig.ident.span(), scope.mode, scope.runtime());
        let tokens = quote::quote!(#sig #body);
        // A module file's tokens carry the spans of its `mod x;` line (see
        // `FileLines`): their text is the tokens themselves.
        if cfg!(feature = "capture-source") {
            region.source = Some(match location {
                Some(_) => tokens.to_string(),
                None => crate::source::text_of(&tokens, false),
            });
        }
        region.location = location;
        expand::instrument(sig, body, &region);
    }
}

/// Whether to walk into a nested module, impl block or trait: not when it
/// carries its own `#[profile_all]` or `#[profile(...)]` (`skip`), which
/// expands it.
fn enter_container(attrs: &[Attribute]) -> bool {
    !attrs
        .iter()
        .any(|a| is_profile_all_attribute(a) || is_profile_attribute(a))
}

/// The names of the `#[macro_export] macro_rules!` of an item list.
fn exported_macros(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Macro(definition)
                if definition.mac.path.is_ident("macro_rules")
                    && definition
                        .attrs
                        .iter()
                        .any(|a| a.path().is_ident("macro_export")) =>
            {
                definition
                    .ident
                    .as_ref()
                    .map(|ident| ident.unraw().to_string())
            }
            _ => None,
        })
        .collect()
}

/// A `#[macro_export]` macro defined by a macro (this one) cannot be named
/// by a path (`$crate::name!`): rustc refuses it. A macro body naming one
/// of the scope's exported macros that way is an error saying what to do.
fn check_exported_macro(definition: &ItemMacro, exported: &[String], scope: &Scope) {
    if !definition.mac.path.is_ident("macro_rules") {
        return;
    }
    if let Some((name, path)) = crate_macro_path(definition.mac.tokens.clone(), exported) {
        scope.error(syn::Error::new_spanned(
            path,
            format!(
                "`{name}!` is a `#[macro_export]` macro defined inside profile_all, and rustc \
                 refuses paths to an exported macro that a macro defined (`$crate::{name}!`): \
                 move `macro_rules! {name}` out of `profile_all_items! {{ ... }}` (before it) or \
                 out of the `#[profile_all]` module; a macro has no functions to instrument"
            ),
        ));
    }
}

/// The first `$crate::name` naming one of `exported`, with its tokens.
fn crate_macro_path(tokens: TokenStream, exported: &[String]) -> Option<(String, TokenStream)> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        if let TokenTree::Group(group) = token
            && let Some(found) = crate_macro_path(group.stream(), exported)
        {
            return Some(found);
        }
        let window = &tokens[i..(i + 6).min(tokens.len())];
        let [
            TokenTree::Punct(dollar),
            TokenTree::Ident(krate),
            TokenTree::Punct(colon),
            TokenTree::Punct(_),
            TokenTree::Ident(name),
            TokenTree::Punct(bang),
        ] = window
        else {
            continue;
        };
        let name = name.to_string();
        if dollar.as_char() == '$'
            && krate == "crate"
            && colon.as_char() == ':'
            && bang.as_char() == '!'
            && exported.contains(&name)
        {
            return Some((name, window[..5].iter().cloned().collect()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(item: TokenStream, enabled: bool) -> String {
        let mut item: Item = syn::parse2(item).unwrap();
        let scope = Scope::new(ProfileAllArgs::default(), enabled, None);
        walk_item(&mut item, &scope).unwrap();
        scope.finish(item).to_string()
    }

    fn names(item: TokenStream) -> String {
        walk(item, true)
    }

    #[test]
    fn names_follow_the_path() {
        let out = names(quote! {
            mod m {
                fn run() {}
                impl<T> Grid<T> { fn refine(&self) {} }
                impl<T: Copy> geom::Mesh<T> for Grid<T> { fn refine(&self) {} }
                trait Shape { fn area(&self) -> f64 { 0.0 } fn name(&self); }
                mod inner { fn deep() {} }
            }
        });
        for name in [
            "\"run\"",
            "\"Grid::refine\"",
            "\"<Grid as Mesh<T>>::refine\"",
            "\"Shape::area\"",
            "\"deep\"",
        ] {
            assert!(out.contains(name), "{name} in {out}");
        }
        assert!(!out.contains("\"Shape::name\""), "{out}");
        assert!(
            out.contains(":: scope_profiler :: __private :: module_path"),
            "{out}"
        );
    }

    #[test]
    fn skips_const_fns_skip_markers_and_own_profile_all() {
        let out = names(quote! {
            mod m {
                const fn c() {}
                #[profile(skip)] fn s() {}
                #[profile_all(always)] impl A { fn a() {} }
                #[profile(skip)] mod hidden { fn h() {} }
            }
        });
        assert!(!out.contains("CallSite"), "{out}");
        assert!(
            out.contains("# [profile (skip)] # [:: scope_profiler :: __private :: profile_scope"),
            "{out}"
        );
        assert!(out.contains("# [profile (skip)] mod hidden"), "{out}");
        assert!(out.contains("profile_all (always)"), "{out}");
    }

    #[test]
    fn own_profile_attribute_gets_the_scope_in_a_hidden_attribute() {
        let mut item: Item = syn::parse2(quote! {
            impl Widget {
                #[profile("solver")] fn solve() {}
                #[scope_profiler::profile(traced,)] #[inline] fn step() {}
            }
        })
        .unwrap();
        let args: ProfileAllArgs = syn::parse2(quote!(crate = sp)).unwrap();
        let scope = Scope::new(args, true, None);
        walk_item(&mut item, &scope).unwrap();
        let out = scope.finish(item).to_string();
        assert!(!out.contains("CallSite"), "{out}");
        assert!(
            out.contains(
                "# [scope_profiler :: profile (traced ,)] \
                 # [sp :: __private :: profile_scope (qualifier = \"Widget::step\" , crate = sp ,)] \
                 # [inline] fn step"
            ),
            "{out}"
        );
        assert!(
            out.contains("# [profile (\"solver\")] # [sp :: __private"),
            "{out}"
        );
    }

    #[test]
    fn disabled_walk_changes_no_function() {
        let out = walk(
            quote!(
                mod m {
                    fn f() {}
                }
            ),
            false,
        );
        assert_eq!(
            out,
            quote!(
                mod m {
                    fn f() {}
                }
            )
            .to_string()
        );
    }

    #[test]
    fn items_take_arguments_before_a_semicolon() {
        let out = expand_profile_all_items(quote!(always; fn f() {}), true).to_string();
        assert!(
            out.contains("enter ()") && !out.contains("enter_traced"),
            "{out}"
        );
        let out = expand_profile_all_items(quote!(always, crate = sp; fn f() {}), true).to_string();
        assert!(out.contains("sp :: __private :: CallSite"), "{out}");
        let out = expand_profile_all_items(quote!(crate = sp; fn f() {}), true).to_string();
        assert!(out.contains("enter_traced"), "{out}");
    }

    #[test]
    fn errors_come_with_the_items() {
        let out = expand_profile_all_items(quote!(sometimes; fn f() {}), true).to_string();
        assert!(
            out.contains("compile_error") && out.ends_with("fn f () { }"),
            "{out}"
        );
        let out =
            expand_profile_all_items(quote!(#![allow(dead_code)] fn f() {}), true).to_string();
        assert!(
            out.contains("inner attributes") && out.contains("CallSite"),
            "{out}"
        );
    }

    #[test]
    fn exported_macro_named_by_crate_path_is_an_error() {
        let out = expand_profile_all_items(
            quote! {
                #[macro_export]
                macro_rules! count { () => { 0 }; ($x:expr) => { 1 + $crate::count!() }; }
                #[macro_export]
                macro_rules! plain { () => { $crate::other!() }; }
                macro_rules! local { () => { $crate::local!() }; }
            },
            true,
        )
        .to_string();
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(out.contains("move `macro_rules! count`"), "{out}");
        assert!(out.contains("macro_rules ! plain"), "{out}");
    }
}
