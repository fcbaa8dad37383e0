//! Shared by every layer: the error-with-item expansion, the tokens an error
//! about an item points at, and recognising the crate's attributes (by their
//! last path segment, since macros run before names are resolved).

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, Item, Path};

/// An error, followed by the item so that the rest of the crate still
/// compiles and only the error is shown (no cascade of "cannot find
/// function" errors).
pub(crate) fn with_item(error: syn::Error, item: impl ToTokens) -> TokenStream {
    let mut tokens = error.to_compile_error();
    item.to_tokens(&mut tokens);
    tokens
}

/// The tokens of `parts`, for an error spanning all of them.
pub(crate) fn head(parts: &[&dyn ToTokens]) -> TokenStream {
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

/// Whether `attribute` is `#[profile]` or `#[profile(...)]`.
pub(crate) fn is_profile_attribute(attribute: &Attribute) -> bool {
    is_attribute(attribute.path(), "profile")
}

/// Whether `attribute` is `#[profile_all]` or `#[profile_all(...)]`.
pub(crate) fn is_profile_all_attribute(attribute: &Attribute) -> bool {
    is_attribute(attribute.path(), "profile_all")
}

/// Whether `attribute` is the hidden `#[<crate>::__private::profile_scope(...)]`
/// a `profile_all` scope hands to a function with its own `#[profile]`.
pub(crate) fn is_scope_attribute(attribute: &Attribute) -> bool {
    let segments = &attribute.path().segments;
    segments.len() >= 2
        && is_attribute(attribute.path(), "profile_scope")
        && segments[segments.len() - 2].ident == "__private"
}

/// `profile`, `scope_profiler::profile`, `sp::profile`: matched by the last
/// path segment.
fn is_attribute(path: &Path, name: &str) -> bool {
    path.segments
        .last()
        .is_some_and(|s| s.ident == name && s.arguments.is_none())
}
