//! `profile_all`: walking a module, an impl block, a trait or a list of
//! items, naming each function after its path, and skipping what cannot or
//! should not be instrumented.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{
    Attribute, Block, ImplItem, Item, ItemImpl, ItemTrait, Meta, Path, Signature, Token, TraitItem,
    Type,
};

use crate::args::{Mode, ProfileAllArgs, ProfileArgs};
use crate::expand::{self, Region};

/// How the functions of one scope are instrumented.
struct Scope {
    /// `Traced`, or `Plain` under `always`.
    mode: Mode,
    /// Whether instrumentation is compiled in (the `enabled` feature); when
    /// off, the items stay unchanged (nested attributes check themselves).
    enabled: bool,
}

/// `#[profile_all(...)]` on an item.
pub(crate) fn expand_profile_all(
    args: TokenStream,
    item: TokenStream,
    enabled: bool,
) -> TokenStream {
    let args = match ProfileAllArgs::parse(args) {
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
    match walk_item(args, &mut parsed, enabled) {
        Ok(()) => parsed.into_token_stream(),
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

/// `profile_all_items! { [always;] items... }`: the items of a whole file.
pub(crate) fn expand_profile_all_items(input: TokenStream, enabled: bool) -> TokenStream {
    let (args, mut items) = match parse_items.parse2(input) {
        Ok(parsed) => parsed,
        Err(error) => return error.to_compile_error(),
    };
    let scope = Scope {
        mode: args.mode(),
        enabled,
    };
    walk_items(&mut items, &scope);
    quote!(#(#items)*)
}

/// An error, followed by the item so that the rest of the crate still
/// compiles and only the error is shown.
pub(crate) fn with_item(error: syn::Error, item: TokenStream) -> TokenStream {
    let mut tokens = error.to_compile_error();
    tokens.extend(item);
    tokens
}

/// Instruments the functions of one item.
fn walk_item(args: ProfileAllArgs, item: &mut Item, enabled: bool) -> syn::Result<()> {
    let scope = Scope {
        mode: args.mode(),
        enabled,
    };
    match item {
        Item::Mod(module) => match &mut module.content {
            Some((_, items)) => walk_items(items, &scope),
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
        Item::Impl(block) => walk_impl(block, &scope),
        Item::Trait(definition) => walk_trait(definition, &scope),
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

fn parse_items(input: ParseStream) -> syn::Result<(ProfileAllArgs, Vec<Item>)> {
    // Arguments come first, ended by `;`: no item starts with `ident ;` or `ident ,`.
    let args = if input.peek(syn::Ident) && (input.peek2(Token![;]) || input.peek2(Token![,])) {
        let mut tokens = TokenStream::new();
        while !input.peek(Token![;]) {
            if input.is_empty() {
                return Err(input.error("expected `;` after the arguments of profile_all_items!"));
            }
            tokens.extend(std::iter::once(input.parse::<proc_macro2::TokenTree>()?));
        }
        input.parse::<Token![;]>()?;
        ProfileAllArgs::parse(tokens)?
    } else {
        ProfileAllArgs::default()
    };
    let mut items = Vec::new();
    while !input.is_empty() {
        if input.peek(Token![#]) && input.peek2(Token![!]) {
            let attribute = input.call(Attribute::parse_inner)?;
            return Err(syn::Error::new_spanned(
                &attribute[0],
                "inner attributes and `//!` docs cannot be inside profile_all_items!: put them \
                 before the macro, at the top of the file",
            ));
        }
        items.push(input.parse()?);
    }
    Ok((args, items))
}

fn walk_items(items: &mut [Item], scope: &Scope) {
    for item in items {
        match item {
            Item::Fn(function) => {
                let qualifier = function.sig.ident.unraw().to_string();
                visit_fn(
                    &mut function.attrs,
                    &function.sig,
                    Some(&mut function.block),
                    &qualifier,
                    scope,
                );
            }
            Item::Mod(module) if enter_container(&module.attrs) => {
                if let Some((_, items)) = &mut module.content {
                    walk_items(items, scope);
                }
            }
            Item::Impl(block) if enter_container(&block.attrs) => walk_impl(block, scope),
            Item::Trait(definition) if enter_container(&definition.attrs) => {
                walk_trait(definition, scope)
            }
            // Containers with their own attribute, and functions nested in
            // other items (consts, statics, macro invocations): not visited.
            _ => {}
        }
    }
}

fn walk_impl(block: &mut ItemImpl, scope: &Scope) {
    let self_type = type_name(&block.self_ty);
    let prefix = match &block.trait_ {
        Some((negative, path, _)) => {
            let bang = if negative.is_some() { "!" } else { "" };
            format!("<{self_type} as {bang}{}>::", path_name(path))
        }
        None => format!("{self_type}::"),
    };
    for member in &mut block.items {
        if let ImplItem::Fn(method) = member {
            let qualifier = format!("{prefix}{}", method.sig.ident.unraw());
            visit_fn(
                &mut method.attrs,
                &method.sig,
                Some(&mut method.block),
                &qualifier,
                scope,
            );
        }
    }
}

fn walk_trait(definition: &mut ItemTrait, scope: &Scope) {
    let prefix = definition.ident.unraw().to_string();
    for member in &mut definition.items {
        if let TraitItem::Fn(method) = member {
            let qualifier = format!("{prefix}::{}", method.sig.ident.unraw());
            visit_fn(
                &mut method.attrs,
                &method.sig,
                method.default.as_mut(),
                &qualifier,
                scope,
            );
        }
    }
}

/// Instruments one function of the scope, unless it carries its own
/// `#[profile(...)]` (which then expands it, `skip` included) or cannot be
/// instrumented: a `const fn` runs at compile time, and a trait method
/// without a body has nothing to record.
fn visit_fn(
    attrs: &mut [Attribute],
    sig: &Signature,
    body: Option<&mut Block>,
    qualifier: &str,
    scope: &Scope,
) {
    if let Some(own) = attrs.iter_mut().find(|a| is_profile_attribute(a)) {
        pass_qualifier(own, qualifier);
        return;
    }
    if sig.constness.is_some() || !scope.enabled {
        return;
    }
    if let Some(body) = body {
        let region = Region::qualified(qualifier, sig.ident.span(), scope.mode);
        expand::instrument(sig, body, &region);
    }
}

/// A `#[profile(traced)]` inside a scope is named after its path, type
/// included, which only the scope knows: it is passed on as a hidden
/// argument. Arguments that do not parse are left for the attribute's own
/// expansion to report.
fn pass_qualifier(attribute: &mut Attribute, qualifier: &str) {
    let Meta::List(list) = &mut attribute.meta else {
        return;
    };
    let Ok(args) = ProfileArgs::parse(list.tokens.clone()) else {
        return;
    };
    if args.mode() != Mode::Traced || args.name.is_some() || args.qualifier.is_some() {
        return;
    }
    let ends_with_comma = matches!(
        list.tokens.clone().into_iter().last(),
        Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == ','
    );
    let separator = if ends_with_comma { quote!() } else { quote!(,) };
    let qualifier = syn::LitStr::new(qualifier, list.delimiter.span().join());
    list.tokens
        .extend(quote!(#separator __qualifier = #qualifier));
}

/// Whether to walk into a nested module, impl block or trait: not when it
/// carries its own `#[profile_all]` or `#[profile(...)]` (`skip`), which
/// expands it.
fn enter_container(attrs: &[Attribute]) -> bool {
    !attrs
        .iter()
        .any(|a| is_attribute(a.path(), "profile_all") || is_profile_attribute(a))
}

/// Whether `attribute` is `#[profile]` or `#[profile(...)]`.
pub(crate) fn is_profile_attribute(attribute: &Attribute) -> bool {
    is_attribute(attribute.path(), "profile")
}

/// `profile`, `scope_profiler::profile`, `sp::profile`: matched by the last
/// path segment, since the walk runs before names are resolved.
fn is_attribute(path: &Path, name: &str) -> bool {
    path.segments
        .last()
        .is_some_and(|s| s.ident == name && s.arguments.is_none())
}

/// A path without its generic arguments: `geom::Grid<T>` -> `geom::Grid`.
fn path_name(path: &Path) -> String {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|s| s.ident.unraw().to_string())
        .collect();
    let lead = if path.leading_colon.is_some() {
        "::"
    } else {
        ""
    };
    format!("{lead}{}", segments.join("::"))
}

/// The self type of an impl block as written, without generic arguments or
/// lifetimes, so that every instantiation shares one region.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(path) if path.qself.is_none() => path_name(&path.path),
        Type::Reference(reference) => {
            let mutability = if reference.mutability.is_some() {
                "mut "
            } else {
                ""
            };
            format!("&{mutability}{}", type_name(&reference.elem))
        }
        Type::Ptr(pointer) => {
            let kind = if pointer.mutability.is_some() {
                "mut"
            } else {
                "const"
            };
            format!("*{kind} {}", type_name(&pointer.elem))
        }
        Type::Slice(slice) => format!("[{}]", type_name(&slice.elem)),
        Type::Array(array) => {
            let len = &array.len;
            format!("[{}; {}]", type_name(&array.elem), quote!(#len))
        }
        Type::Tuple(tuple) => {
            let elems: Vec<String> = tuple.elems.iter().map(type_name).collect();
            let comma = if elems.len() == 1 { "," } else { "" };
            format!("({}{comma})", elems.join(", "))
        }
        Type::Paren(paren) => type_name(&paren.elem),
        Type::Group(group) => type_name(&group.elem),
        Type::TraitObject(object) => {
            let bounds: Vec<String> = object
                .bounds
                .iter()
                .filter_map(|bound| match bound {
                    syn::TypeParamBound::Trait(t) => Some(path_name(&t.path)),
                    _ => None,
                })
                .collect();
            format!("dyn {}", bounds.join(" + "))
        }
        Type::Never(_) => "!".to_owned(),
        other => other.to_token_stream().to_string(),
    }
}

fn head(parts: &[&dyn ToTokens]) -> TokenStream {
    let mut tokens = TokenStream::new();
    for part in parts {
        part.to_tokens(&mut tokens);
    }
    tokens
}

/// The tokens an error about an item points at: its keyword and name.
pub(crate) fn item_head(item: &Item) -> TokenStream {
    match item {
        Item::Const(i) => head(&[&i.const_token, &i.ident]),
        Item::Enum(i) => head(&[&i.enum_token, &i.ident]),
        Item::ExternCrate(i) => head(&[&i.extern_token, &i.crate_token, &i.ident]),
        Item::Fn(i) => head(&[&i.sig.fn_token, &i.sig.ident]),
        Item::ForeignMod(i) => i.abi.to_token_stream(),
        Item::Impl(i) => head(&[&i.impl_token, &i.self_ty]),
        Item::Macro(i) => i.mac.path.to_token_stream(),
        Item::Mod(i) => head(&[&i.mod_token, &i.ident]),
        Item::Static(i) => head(&[&i.static_token, &i.ident]),
        Item::Struct(i) => head(&[&i.struct_token, &i.ident]),
        Item::Trait(i) => head(&[&i.trait_token, &i.ident]),
        Item::TraitAlias(i) => head(&[&i.trait_token, &i.ident]),
        Item::Type(i) => head(&[&i.type_token, &i.ident]),
        Item::Union(i) => head(&[&i.union_token, &i.ident]),
        Item::Use(i) => head(&[&i.use_token, &i.tree]),
        other => other.to_token_stream(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(item: TokenStream) -> String {
        let mut item: Item = syn::parse2(item).unwrap();
        walk_item(ProfileAllArgs::default(), &mut item, true).unwrap();
        item.into_token_stream().to_string()
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
            "\"<Grid as geom::Mesh>::refine\"",
            "\"Shape::area\"",
            "\"deep\"",
        ] {
            assert!(out.contains(name), "{name} in {out}");
        }
        assert!(!out.contains("\"Shape::name\""), "{out}");
    }

    #[test]
    fn type_names_drop_generics_and_lifetimes() {
        let name = |ty: TokenStream| type_name(&syn::parse2(ty).unwrap());
        assert_eq!(name(quote!(Vec<u8>)), "Vec");
        assert_eq!(name(quote!(&'a mut a::B<'a, T>)), "&mut a::B");
        assert_eq!(name(quote!([T; 3])), "[T; 3]");
        assert_eq!(name(quote!((u8,))), "(u8,)");
        assert_eq!(name(quote!(dyn Fn(u8) + Send + 'static)), "dyn Fn + Send");
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
        assert!(out.contains("# [profile (skip)] fn s"), "{out}");
        assert!(out.contains("# [profile (skip)] mod hidden"), "{out}");
        assert!(out.contains("profile_all (always)"), "{out}");
    }

    #[test]
    fn own_profile_attribute_expands_itself() {
        let out = names(quote! {
            impl Widget {
                #[profile("solver")] fn solve() {}
                #[profile(recursive)] fn run() {}
                #[scope_profiler::profile(traced,)] fn step() {}
                #[profile(traced, bogus)] fn bad() {}
            }
        });
        assert!(!out.contains("CallSite"), "{out}");
        assert!(out.contains("# [profile (\"solver\")] fn solve"), "{out}");
        assert!(out.contains("# [profile (recursive)] fn run"), "{out}");
        assert!(
            out.contains("profile (traced , __qualifier = \"Widget::step\")] fn step"),
            "{out}"
        );
        assert!(out.contains("# [profile (traced , bogus)] fn bad"), "{out}");
    }

    #[test]
    fn disabled_walk_changes_nothing() {
        let tokens = quote!(
            mod m {
                #[profile(skip)]
                fn s() {}
                fn f() {}
            }
        );
        let mut item: Item = syn::parse2(tokens.clone()).unwrap();
        walk_item(ProfileAllArgs::default(), &mut item, false).unwrap();
        assert_eq!(item.into_token_stream().to_string(), tokens.to_string());
    }

    #[test]
    fn items_take_arguments_before_a_semicolon() {
        let out = expand_profile_all_items(quote!(always; fn f() {}), true).to_string();
        assert!(
            out.contains("enter ()") && !out.contains("enter_traced"),
            "{out}"
        );
        let out = expand_profile_all_items(quote!(sometimes; fn f() {}), true).to_string();
        assert!(out.contains("compile_error"), "{out}");
        let out =
            expand_profile_all_items(quote!(#![allow(dead_code)] fn f() {}), true).to_string();
        assert!(out.contains("inner attributes"), "{out}");
    }
}
