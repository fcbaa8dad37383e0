//! `profile_all(macro_rules)`: the functions a scope's `macro_rules!`
//! expand to. `profile_all` sees a macro's definition and invocations as
//! tokens, never their expansions; with the argument, each rule of the
//! scope's own (not `#[macro_export]`) `macro_rules!` whose body is items
//! with functions gets its body wrapped in `profile_all_items! { ... }` with
//! the scope's mode, so every expansion is instrumented where it lands and
//! named after that module. Opt-in: a body is recognised as items by its
//! tokens (`fn`, `impl`, `trait` or `mod` at its top level, no `let`), and a
//! macro invoked where an expression is expected would no longer compile.

use proc_macro2::{Group, TokenStream, TokenTree};
use quote::quote;
use syn::ItemMacro;

/// Wraps the item bodies of `definition`'s rules in `wrapper! { args;
/// body }` (`wrapper`: the runtime's `profile_all_items`). Leaves any other
/// macro, and exported ones (their users need not depend on the runtime),
/// as they are.
pub(crate) fn wrap_item_bodies(
    definition: &mut ItemMacro,
    wrapper: &TokenStream,
    args: &TokenStream,
) {
    let exported = definition
        .attrs
        .iter()
        .any(|a| a.path().is_ident("macro_export"));
    if !definition.mac.path.is_ident("macro_rules") || exported {
        return;
    }
    let tokens: Vec<TokenTree> = std::mem::take(&mut definition.mac.tokens)
        .into_iter()
        .collect();
    let mut out = Vec::with_capacity(tokens.len());
    for (i, token) in tokens.iter().enumerate() {
        let after_arrow = i >= 2
            && matches!(&tokens[i - 2], TokenTree::Punct(p) if p.as_char() == '=')
            && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '>');
        match token {
            TokenTree::Group(body) if after_arrow && defines_functions(body.stream()) => {
                let inner = body.stream();
                let mut wrapped = Group::new(body.delimiter(), quote!(#wrapper! { #args #inner }));
                wrapped.set_span(body.span());
                out.push(TokenTree::Group(wrapped));
            }
            other => out.push(other.clone()),
        }
    }
    definition.mac.tokens = out.into_iter().collect();
}

/// Whether a rule's body is items with functions in them: `fn`, `impl`,
/// `trait` or `mod` among its top-level tokens, and no `let`.
fn defines_functions(body: TokenStream) -> bool {
    let mut items = false;
    for token in body {
        if let TokenTree::Ident(ident) = token {
            match ident.to_string().as_str() {
                "let" => return false,
                "fn" | "impl" | "trait" | "mod" => items = true,
                _ => {}
            }
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(definition: TokenStream) -> String {
        let mut definition: ItemMacro = syn::parse2(definition).unwrap();
        wrap_item_bodies(&mut definition, &quote!(::sp::items), &quote!(always;));
        definition.mac.tokens.to_string()
    }

    #[test]
    fn item_bodies_are_wrapped() {
        let out = wrapped(quote! {
            macro_rules! getter {
                ($name:ident) => { pub fn $name() -> u32 { 1 } };
                ($name:ident, $t:ty) => ( impl $t { fn $name(&self) {} } );
            }
        });
        assert!(
            out.contains("=> { :: sp :: items ! { always ; pub fn $ name ()"),
            "{out}"
        );
        assert!(
            out.contains("=> (:: sp :: items ! { always ; impl $ t"),
            "{out}"
        );
    }

    #[test]
    fn expression_bodies_and_exported_macros_stay() {
        let expression = quote! {
            macro_rules! twice {
                ($e:expr) => { $e * 2 };
                ($e:expr, $f:ident) => {{ fn $f() {} let x = $e; x }};
                () => { let f: fn() = || (); f };
            }
        };
        let out = wrapped(expression.clone());
        assert!(!out.contains("items"), "{out}");
        let out = wrapped(quote! {
            #[macro_export]
            macro_rules! getter { ($name:ident) => { pub fn $name() {} }; }
        });
        assert!(!out.contains("items"), "{out}");
        let out = wrapped(quote!(other! { () => { fn f() {} } }));
        assert!(!out.contains("items"), "{out}");
    }
}
