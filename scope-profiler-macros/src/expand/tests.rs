//! Unit tests of `expand`: the token shapes of each expansion.
use super::*;

fn expand(item: TokenStream, mode: Mode) -> String {
    let mut f: ItemFn = syn::parse2(item).unwrap();
    let region = Region::named_after(&f.sig, mode, runtime(None));
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
    // The body's future, bound first (declared output: clippy's
    // async_yields_async allowed on it), then instrumented and awaited.
    assert!(
        out.contains("# [allow (clippy :: async_yields_async)] let __sp_body = async move"),
        "{out}"
    );
    assert!(
        out.contains("instrument (:: scope_profiler :: __private :: Mode :: Traced , __sp_body)"),
        "{out}"
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
fn canonical_bodies_name_their_lint() {
    let lint = |f: TokenStream| {
        let f: ItemFn = syn::parse2(f).unwrap();
        canonical_body_lint(&f.sig, &f.block).map(|l| l.to_string())
    };
    let partial_ord = "clippy :: non_canonical_partial_ord_impl";
    assert_eq!(
        lint(quote!(
            fn partial_cmp(&self, rhs: &Self) -> Option<Ordering> {
                Some(self.cmp(rhs))
            }
        ))
        .as_deref(),
        Some(partial_ord)
    );
    assert_eq!(
        lint(quote!(
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(Ord::cmp(self, o))
            }
        ))
        .as_deref(),
        Some(partial_ord)
    );
    assert_eq!(
        lint(quote!(
            fn clone(&self) -> Self {
                *self
            }
        ))
        .as_deref(),
        Some("clippy :: non_canonical_clone_impl")
    );
    assert_eq!(
        lint(quote!(
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                None
            }
        )),
        None
    );
    assert_eq!(
        lint(quote!(
            fn clone(&self) -> Self {
                Self(self.0)
            }
        )),
        None
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
