//! One function to its instrumented form, sync and async in one place.
//!
//! The original statements are spliced after a guard (never nested as a
//! block, which would trip `unused_braces` in user code), and the generated
//! locals use `Span::mixed_site()` so user code can neither see nor shadow
//! them. The call site is a `static` declared inside the body, so every
//! function has its own, shared by all instantiations of a generic one.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    Block, Expr, ExprAsync, ExprCall, ForeignItemFn, Ident, Item, ItemFn, LitStr, ReturnType,
    Signature, Stmt, Token, Type,
};

use crate::args::{Mode, ProfileArgs};
use crate::profile_all::{is_profile_attribute, item_head, with_item};

/// What an instrumented function records: the region's name and its mode.
pub(crate) struct Region {
    /// An expression of type `&'static str`.
    pub name: TokenStream,
    pub mode: Mode,
}

impl Region {
    /// The function's own name, `"solve"`.
    pub(crate) fn named_after(sig: &Signature, mode: Mode) -> Region {
        let name = LitStr::new(&sig.ident.unraw().to_string(), sig.ident.span());
        Region {
            name: name.into_token_stream(),
            mode,
        }
    }

    /// An explicit name, `#[profile("solver")]`.
    pub(crate) fn explicit(name: &LitStr, mode: Mode) -> Region {
        Region {
            name: name.into_token_stream(),
            mode,
        }
    }

    /// The fully-qualified name: the module path at the expansion site, then
    /// `qualifier` (`run`, `Grid::refine`, `<Grid as Mesh>::refine`).
    pub(crate) fn qualified(qualifier: &str, span: Span, mode: Mode) -> Region {
        let qualifier = LitStr::new(qualifier, span);
        let name = quote_spanned! {span=>
            ::core::concat!(::core::module_path!(), "::", #qualifier)
        };
        Region { name, mode }
    }
}

/// `#[profile(...)]` on an item.
pub(crate) fn expand_profile(args: TokenStream, item: TokenStream, enabled: bool) -> TokenStream {
    match profile_item(args, item.clone(), enabled) {
        Ok(Some(expanded)) => expanded,
        Ok(None) => item,
        Err(error) => with_item(error, item),
    }
}

/// The instrumented function, or `None` to keep the item unchanged.
fn profile_item(
    args: TokenStream,
    item: TokenStream,
    enabled: bool,
) -> syn::Result<Option<TokenStream>> {
    let args = ProfileArgs::parse(args)?;
    let mut function = match syn::parse2::<ItemFn>(item.clone()) {
        Ok(function) => function,
        Err(not_a_fn) => {
            if args.skip.is_some() {
                return Ok(None);
            }
            if let Ok(declaration) = syn::parse2::<ForeignItemFn>(item.clone()) {
                return Err(missing_body(&declaration.sig, &declaration.semi_token));
            }
            return Err(match syn::parse2::<Item>(item) {
                Ok(other) => syn::Error::new_spanned(
                    item_head(&other),
                    match other {
                        Item::Mod(_) | Item::Impl(_) | Item::Trait(_) => {
                            "#[profile] applies to functions: use #[profile_all] to instrument \
                             every function in it"
                        }
                        _ => "#[profile] applies only to functions and methods",
                    },
                ),
                Err(_) => not_a_fn,
            });
        }
    };
    if args.skip.is_some() {
        return Ok(None);
    }
    if let Some(twice) = function.attrs.iter().find(|a| is_profile_attribute(a)) {
        return Err(syn::Error::new_spanned(
            twice,
            "#[profile] is given twice on this function",
        ));
    }
    check_signature(&function.sig)?;
    if !enabled {
        return Ok(None);
    }
    let mode = args.mode();
    let region = match &args.name {
        Some(name) => Region::explicit(name, mode),
        None if mode == Mode::Traced => {
            let qualifier = match &args.qualifier {
                Some(qualifier) => qualifier.value(),
                None => function.sig.ident.unraw().to_string(),
            };
            Region::qualified(&qualifier, function.sig.ident.span(), mode)
        }
        None => Region::named_after(&function.sig, mode),
    };
    instrument(&function.sig, &mut function.block, &region);
    Ok(Some(function.into_token_stream()))
}

/// The error for `#[profile]` on a function without a body.
fn missing_body(sig: &Signature, semi: &Token![;]) -> syn::Error {
    syn::Error::new_spanned(
        quote!(#sig #semi),
        "#[profile] needs a function body: put it on the implementations of this method, or \
         #[profile_all] on their impl blocks",
    )
}

/// Rejects what cannot be instrumented: a `const fn` runs at compile time.
fn check_signature(sig: &Signature) -> syn::Result<()> {
    if let Some(constness) = &sig.constness {
        return Err(syn::Error::new_spanned(
            constness,
            "#[profile] cannot instrument a `const fn`: a region is recorded at run time; \
             remove `const` or the attribute",
        ));
    }
    Ok(())
}

/// Rewrites the body of one function so that each call records `region`.
pub(crate) fn instrument(sig: &Signature, block: &mut Block, region: &Region) {
    let stmts = std::mem::take(&mut block.stmts);
    block.stmts = if sig.asyncness.is_some() {
        async_body(sig, stmts, region)
    } else if returns_async_block(&stmts) {
        future_returning_body(sig, stmts, region)
    } else {
        sync_body(sig, stmts, region)
    };
}

/// `let guard = { static SITE; SITE.enter() }; ...the original statements`
fn sync_body(sig: &Signature, stmts: Vec<Stmt>, region: &Region) -> Vec<Stmt> {
    let site = site_ident();
    let guard = Ident::new("__sp_guard", Span::mixed_site());
    let declare = site_static(&site, sig, region);
    let enter = match region.mode {
        Mode::Plain => quote!(enter),
        Mode::Entrypoint => quote!(enter_entrypoint),
        Mode::Traced => quote!(enter_traced),
    };
    let prologue: Stmt = syn::parse_quote! {
        let #guard = { #declare #site.#enter() };
    };
    std::iter::once(prologue).chain(stmts).collect()
}

/// The body of an `async fn` becomes a future instrumented as one call:
/// `site.instrument(mode, async move { ...the original statements }).await`.
fn async_body(sig: &Signature, stmts: Vec<Stmt>, region: &Region) -> Vec<Stmt> {
    let site_ref = Ident::new("__sp_site", Span::mixed_site());
    let fake_return = fake_return_edge(&sig.output);
    let future: Expr = syn::parse_quote! {
        async move {
            #fake_return
            #(#stmts)*
        }
    };
    let instrumented = instrument_future(&site_ref, region.mode, future);
    let tail: Expr = syn::parse_quote!(#instrumented.await);
    vec![
        site_ref_stmt(&site_ref, sig, region),
        Stmt::Expr(tail, None),
    ]
}

/// A function returning `Box::pin(async move { ... })` or `async move { ... }`,
/// the shape `#[async_trait]` gives an `async fn`: the returned future is
/// what is instrumented, so the call's wall time is recorded, not the
/// creation of the future.
fn future_returning_body(sig: &Signature, mut stmts: Vec<Stmt>, region: &Region) -> Vec<Stmt> {
    let site_ref = Ident::new("__sp_site", Span::mixed_site());
    if let Some(Stmt::Expr(tail, None)) = stmts.last_mut() {
        let async_expr = match tail {
            Expr::Call(call) => &mut call.args[0],
            other => other,
        };
        let future = std::mem::replace(async_expr, Expr::Verbatim(TokenStream::new()));
        *async_expr = instrument_future(&site_ref, region.mode, future);
    }
    std::iter::once(site_ref_stmt(&site_ref, sig, region))
        .chain(stmts)
        .collect()
}

/// Whether the body ends in an `async` block, bare or `Box::pin`-ed.
fn returns_async_block(stmts: &[Stmt]) -> bool {
    match stmts.last() {
        Some(Stmt::Expr(Expr::Async(_), None)) => true,
        Some(Stmt::Expr(Expr::Call(ExprCall { func, args, .. }), None)) => {
            let pins = match &**func {
                Expr::Path(path) => {
                    let segments: Vec<String> = path
                        .path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect();
                    segments.ends_with(&["Box".to_owned(), "pin".to_owned()])
                }
                _ => false,
            };
            pins && args.len() == 1 && matches!(args[0], Expr::Async(ExprAsync { .. }))
        }
        _ => false,
    }
}

fn instrument_future(site_ref: &Ident, mode: Mode, future: Expr) -> Expr {
    let mode = match mode {
        Mode::Plain => quote!(Plain),
        Mode::Entrypoint => quote!(Entrypoint),
        Mode::Traced => quote!(Traced),
    };
    syn::parse_quote! {
        #site_ref.instrument(::scope_profiler::__private::Mode::#mode, #future)
    }
}

/// `let site_ref = { static SITE: CallSite = ...; &SITE };`
fn site_ref_stmt(site_ref: &Ident, sig: &Signature, region: &Region) -> Stmt {
    let site = site_ident();
    let declare = site_static(&site, sig, region);
    syn::parse_quote! {
        let #site_ref: &'static ::scope_profiler::__private::CallSite = { #declare &#site };
    }
}

fn site_ident() -> Ident {
    Ident::new("__SP_SITE", Span::mixed_site())
}

/// The call site of the function, at the line of its name.
fn site_static(site: &Ident, sig: &Signature, region: &Region) -> TokenStream {
    let name = &region.name;
    let location = sig.ident.span();
    let file = quote_spanned!(location=> ::core::file!());
    let line = quote_spanned!(location=> ::core::line!());
    quote! {
        static #site: ::scope_profiler::__private::CallSite =
            ::scope_profiler::__private::CallSite::new(#name, #file, #line);
    }
}

/// An unreachable `return` of the declared type, first in the async block,
/// so that `?` and `return` inside it infer the function's return type
/// (the technique of tracing-attributes).
fn fake_return_edge(output: &ReturnType) -> TokenStream {
    let ReturnType::Type(_, ty) = output else {
        return TokenStream::new();
    };
    let mut ty = (**ty).clone();
    ImplTraitEraser.visit_type_mut(&mut ty);
    let span = output.span();
    let value = Ident::new("__sp_return", Span::mixed_site());
    quote_spanned! {span=>
        #[allow(
            unknown_lints,
            unreachable_code,
            clippy::diverging_sub_expression,
            clippy::empty_loop,
            clippy::let_unit_value,
            clippy::let_with_type_underscore,
            clippy::needless_return,
            clippy::unreachable
        )]
        if false {
            let #value: #ty = loop {};
            return #value;
        }
    }
}

/// `impl Trait` cannot be written as a `let` type: it becomes `_`.
struct ImplTraitEraser;

impl VisitMut for ImplTraitEraser {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::ImplTrait(impl_trait) = ty {
            *ty = Type::Infer(syn::TypeInfer {
                underscore_token: Token![_](impl_trait.span()),
            });
        } else {
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(item: TokenStream, mode: Mode) -> String {
        let mut f: ItemFn = syn::parse2(item).unwrap();
        let region = Region::named_after(&f.sig, mode);
        instrument(&f.sig, &mut f.block, &region);
        f.into_token_stream().to_string()
    }

    #[test]
    fn sync_fn_gets_a_guard_and_keeps_its_statements() {
        let out = expand(
            quote!(
                fn solve(x: u32) -> u32 {
                    let y = x;
                    y + 1
                }
            ),
            Mode::Plain,
        );
        assert!(out.contains("CallSite :: new (\"solve\""), "{out}");
        assert!(out.contains("__SP_SITE . enter ()"), "{out}");
        assert!(out.ends_with("let y = x ; y + 1 }"), "{out}");
    }

    #[test]
    fn modes_pick_their_enter() {
        assert!(
            expand(
                quote!(
                    fn f() {}
                ),
                Mode::Entrypoint
            )
            .contains("enter_entrypoint ()")
        );
        assert!(
            expand(
                quote!(
                    fn f() {}
                ),
                Mode::Traced
            )
            .contains("enter_traced ()")
        );
    }

    #[test]
    fn async_fn_instruments_its_body_future() {
        let out = expand(
            quote!(
                async fn f() -> impl Sized {
                    1
                }
            ),
            Mode::Traced,
        );
        assert!(
            out.contains(
                "instrument (:: scope_profiler :: __private :: Mode :: Traced , async move"
            )
        );
        assert!(out.contains("let __sp_return : _ = loop { }"), "{out}");
        assert!(out.ends_with(". await }"), "{out}");
    }

    #[test]
    fn boxed_future_is_instrumented_inside_the_box() {
        let out = expand(
            quote!(
                fn f() -> Pin<Box<dyn Future<Output = u8>>> {
                    Box::pin(async move { 1 })
                }
            ),
            Mode::Plain,
        );
        assert!(
            out.contains("Box :: pin (__sp_site . instrument (:: scope_profiler"),
            "{out}"
        );
        assert!(!out.contains("enter ()"), "{out}");
    }

    #[test]
    fn disabled_expansion_keeps_the_item_but_still_checks() {
        let item = quote!(
            #[inline]
            pub fn solve(x: u32) -> u32 {
                x
            }
        );
        let out = expand_profile(quote!("solver", recursive), item.clone(), false);
        assert_eq!(out.to_string(), item.to_string());
        let out = expand_profile(quote!(fast), item, false).to_string();
        assert!(
            out.contains("compile_error") && out.contains("unknown argument"),
            "{out}"
        );
        let out = expand_profile(
            quote!(),
            quote!(
                const fn f() {}
            ),
            false,
        )
        .to_string();
        assert!(out.contains("`const fn`"), "{out}");
    }

    #[test]
    fn skip_keeps_any_item_unchanged() {
        let item = quote!(
            struct S;
        );
        assert_eq!(
            expand_profile(quote!(skip), item.clone(), true).to_string(),
            item.to_string()
        );
    }

    #[test]
    fn const_fn_is_rejected() {
        let f: ItemFn = syn::parse2(quote!(
            const fn f() {}
        ))
        .unwrap();
        let err = check_signature(&f.sig).unwrap_err();
        assert!(err.to_string().contains("`const fn`"));
    }
}
