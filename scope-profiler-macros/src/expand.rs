//! One function to its instrumented form, sync and async in one place.
//!
//! The original statements are spliced after a guard (never nested as a
//! block, which would trip `unused_braces` in user code), and the generated
//! locals use `Span::mixed_site()` so user code can neither see nor shadow
//! them. The call site is a `static` declared inside the body, so every
//! function has its own, shared by all instantiations of a generic one.
//! Every path goes through the runtime crate (`::scope_profiler::__private`,
//! built-in macros included), so the expansion resolves in every edition.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    Attribute, Block, Expr, ExprAsync, ExprCall, FnArg, ForeignItemFn, Ident, Item, ItemFn, LitStr,
    Pat, ReturnType, Signature, Stmt, Token, Type,
};

use crate::args::{Location, Mode, ProfileArgs, ScopeArgs, runtime};
use crate::diag::{is_profile_attribute, is_scope_attribute, item_head, with_item};

/// What an instrumented function records: the region's name and its mode.
pub(crate) struct Region {
    /// An expression of type `&'static str`.
    pub name: TokenStream,
    pub mode: Mode,
    /// The path of the runtime crate.
    pub runtime: TokenStream,
    /// Where the call site is, when the function's tokens do not say it
    /// (`None`: `file!()` and `line!()` at the function's name).
    pub location: Option<Location>,
    /// `tags = [...]`.
    pub tags: Vec<LitStr>,
    /// The function's source text, captured at compile time.
    pub source: Option<String>,
    /// `record_outcome`: each call's status goes into its metadata.
    pub record_outcome: bool,
}

impl Region {
    /// The function's own name, `"solve"`.
    pub(crate) fn named_after(sig: &Signature, mode: Mode, runtime: TokenStream) -> Region {
        let name = LitStr::new(&sig.ident.unraw().to_string(), sig.ident.span());
        Region::explicit(&name, mode, runtime)
    }

    /// An explicit name, `#[profile("solver")]`.
    pub(crate) fn explicit(name: &LitStr, mode: Mode, runtime: TokenStream) -> Region {
        Region {
            name: name.into_token_stream(),
            mode,
            runtime,
            location: None,
            tags: Vec::new(),
            source: None,
            record_outcome: false,
        }
    }

    /// The fully-qualified name: the module path at the expansion site, then
    /// `qualifier` (`run`, `Grid::refine`, `<Grid as Mesh>::refine`).
    pub(crate) fn qualified(
        qualifier: &str,
        span: Span,
        mode: Mode,
        runtime: TokenStream,
    ) -> Region {
        let qualifier = LitStr::new(qualifier, span);
        let name = quote_spanned! {span=>
            #runtime::__private::concat!(#runtime::__private::module_path!(), "::", #qualifier)
        };
        Region {
            name,
            mode,
            runtime,
            location: None,
            tags: Vec::new(),
            source: None,
            record_outcome: false,
        }
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
    let args: ProfileArgs = syn::parse2(args)?;
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
    let scope = take_scope(&mut function.attrs)?;
    if args.skip.is_some() {
        return Ok(Some(function.into_token_stream()));
    }
    if let Some(twice) = function.attrs.iter().find(|a| is_profile_attribute(a)) {
        return Err(syn::Error::new_spanned(
            twice,
            "#[profile] is given twice on this function",
        ));
    }
    check_signature(&function.sig)?;
    if !enabled {
        return Ok(Some(function.into_token_stream()));
    }
    let mode = args.mode();
    let runtime = runtime(args.krate.as_ref().or(scope.krate.as_ref()));
    let mut region = match &args.name {
        Some(name) => Region::explicit(name, mode, runtime),
        None if mode == Mode::Traced => {
            let qualifier = match &scope.qualifier {
                Some(qualifier) => qualifier.value(),
                None => function.sig.ident.unraw().to_string(),
            };
            Region::qualified(&qualifier, function.sig.ident.span(), mode, runtime)
        }
        None => Region::named_after(&function.sig, mode, runtime),
    };
    region.location = scope.location;
    region.tags = args
        .tags
        .as_ref()
        .map(|(_, tags)| tags.clone())
        .unwrap_or_default();
    if cfg!(feature = "capture-source") {
        region.source = Some(crate::source::text_of(&item, true));
    }
    region.record_outcome = args.record_outcome.is_some();
    if canonical_body_lint(&function.sig, &function.block).is_some() {
        // A canonical `partial_cmp` / `clone` body is one clippy checks for
        // its shape, which the guard breaks. Clippy reads that lint's level
        // on the impl block, out of this attribute's reach, but skips a
        // body whose block comes from a macro: the braces of this one (and
        // only they: the statements keep their spans) say so.
        function.block.brace_token = syn::token::Brace(Span::call_site());
    }
    instrument(&function.sig, &mut function.block, &region);
    Ok(Some(function.into_token_stream()))
}

/// Removes the hidden attribute an enclosing `profile_all` scope put after
/// this `#[profile]`, and returns what it carries.
fn take_scope(attrs: &mut Vec<Attribute>) -> syn::Result<ScopeArgs> {
    let Some(index) = attrs.iter().position(is_scope_attribute) else {
        return Ok(ScopeArgs::default());
    };
    let attribute = attrs.remove(index);
    match attribute.meta {
        syn::Meta::List(list) => syn::parse2(list.tokens),
        _ => Ok(ScopeArgs::default()),
    }
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

/// Clippy wants some trait methods in one canonical shape, which the guard
/// breaks: `partial_cmp` as `Some(self.cmp(other))` on an `Ord` type,
/// `clone` as `*self` on a `Copy` type. When the original body has that
/// shape, the lint to allow on the instrumented impl block (clippy reads
/// their level there, not on the method); a body that did not have it keeps
/// its lint.
pub(crate) fn canonical_body_lint(sig: &Signature, block: &Block) -> Option<TokenStream> {
    let [Stmt::Expr(body, None)] = block.stmts.as_slice() else {
        return None;
    };
    let name = sig.ident.unraw().to_string();
    // Compared without whitespace: the compiler and proc-macro2 print tokens
    // with different spacing.
    let body: String = body
        .to_token_stream()
        .to_string()
        .split_whitespace()
        .collect();
    match name.as_str() {
        "partial_cmp" => {
            let other = match sig.inputs.iter().nth(1) {
                Some(FnArg::Typed(arg)) => match &*arg.pat {
                    Pat::Ident(ident) => ident.ident.to_string(),
                    _ => return None,
                },
                _ => return None,
            };
            let canonical = [
                format!("Some(self.cmp({other}))"),
                format!("Some(Ord::cmp(self,{other}))"),
                format!("Some(Self::cmp(self,{other}))"),
            ];
            canonical
                .contains(&body)
                .then(|| quote!(clippy::non_canonical_partial_ord_impl))
        }
        "clone" => (body == "*self").then(|| quote!(clippy::non_canonical_clone_impl)),
        _ => None,
    }
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
    if !region.record_outcome {
        return std::iter::once(prologue).chain(stmts).collect();
    }
    // The body runs in a closure so that its value (also one given by
    // `return` or `?`) is seen before the guard ends the call; the outcome
    // is recorded while the call is still open (a panic: when unwinding
    // drops the outcome, before the guard).
    let runtime = &region.runtime;
    let outcome = Ident::new("__sp_outcome", Span::mixed_site());
    let begin: Stmt = syn::parse_quote! {
        let #outcome = #runtime::__private::Outcome::begin(&#guard);
    };
    if returns_never(&sig.output) {
        // A `-> !` function never returns a value: its statements stay as
        // they are (nothing after them would be reachable), and only a
        // panic, dropping the outcome while unwinding, is recorded.
        return [prologue, begin].into_iter().chain(stmts).collect();
    }
    let value = Ident::new("__sp_value", Span::mixed_site());
    // The value's type is the declared one (`impl Trait` in it inferred),
    // so that a body that diverges (`todo!()`) does not leave the closure's
    // return type to inference, which the probe below would misread. A
    // declared `impl Trait` says nothing more: such a value is ok.
    let declared = value_type(&sig.output);
    let annotation = declared.as_ref().map(|ty| quote!(: #ty));
    let status = match declared {
        Some(_) => quote! {{
            #[allow(unused_imports)]
            use #runtime::__private::{OutcomeOfAny as _, OutcomeOfResult as _};
            (&&#runtime::__private::OutcomeProbe(&#value)).outcome()
        }},
        None => quote!(#runtime::__private::opaque_outcome(&#value)),
    };
    vec![
        prologue,
        begin,
        syn::parse_quote! {
            #[allow(
                clippy::redundant_closure_call,
                clippy::let_unit_value,
                clippy::type_complexity
            )]
            let #value #annotation = (move || { #(#stmts)* })();
        },
        // The guard ends the call here: an ok one with the outcome in its
        // record (no more than a plain exit), any other after its outcome.
        syn::parse_quote! {
            #outcome.finish(#status, #guard);
        },
        Stmt::Expr(syn::parse_quote!(#value), None),
    ]
}

/// The body of an `async fn` becomes a future instrumented as one call:
/// `site.instrument(mode, async move { ...the original statements }).await`.
fn async_body(sig: &Signature, stmts: Vec<Stmt>, region: &Region) -> Vec<Stmt> {
    let site_ref = Ident::new("__sp_site", Span::mixed_site());
    let output = match &sig.output {
        // The outcome's probe needs the output's type: `()` is written out
        // (a body ending in `loop {}` would leave it to inference).
        ReturnType::Default if region.record_outcome => Some(syn::parse_quote!(())),
        ReturnType::Default => None,
        ReturnType::Type(_, ty) => Some((**ty).clone()),
    };
    let fake_return = fake_return_edge(output.as_ref(), sig.output.span());
    let future: Expr = syn::parse_quote! {
        async move {
            #fake_return
            #(#stmts)*
        }
    };
    let opaque = output.as_ref().is_some_and(says_nothing);
    let body = Ident::new("__sp_body", Span::mixed_site());
    let instrumented = instrument_future(&site_ref, region, syn::parse_quote!(#body), opaque);
    let tail: Expr = syn::parse_quote!(#instrumented.await);
    // An `async fn` that returns a future (declared: not a missing
    // `.await`) would make clippy's `async_yields_async` fire on the block
    // the body becomes, which clippy does not check in an `async fn`.
    let body_stmt: Stmt = match &sig.output {
        ReturnType::Type(..) => syn::parse_quote! {
            #[allow(clippy::async_yields_async)]
            let #body = #future;
        },
        ReturnType::Default => syn::parse_quote!(let #body = #future;),
    };
    vec![
        site_ref_stmt(&site_ref, sig, region),
        body_stmt,
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
        let mut future = std::mem::replace(async_expr, Expr::Verbatim(TokenStream::new()));
        let mut opaque = false;
        if region.record_outcome {
            // The outcome's probe needs the output's type: the `Output = T`
            // the signature gives (`impl Future<Output = T>`, `Pin<Box<dyn
            // Future<Output = T> + Send>>`), if it says one, becomes the
            // block's own fake return.
            let output = future_output(&sig.output);
            opaque = output.as_ref().is_some_and(says_nothing);
            if let (Expr::Async(block), Some(output)) = (&mut future, &output) {
                let edge = fake_return_edge(Some(output), output.span());
                let edge: Stmt = syn::parse_quote!(#edge);
                block.block.stmts.insert(0, edge);
            }
        }
        *async_expr = instrument_future(&site_ref, region, future, opaque);
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

/// `site.instrument(mode, future)`; with `record_outcome`,
/// `site.instrument_outcome(mode, future, classifier)`, the classifier
/// probing the output as the sync expansion does (`opaque`: the declared
/// output says nothing, see [`says_nothing`]: any value of it is ok).
fn instrument_future(site_ref: &Ident, region: &Region, future: Expr, opaque: bool) -> Expr {
    let runtime = &region.runtime;
    let mode = match region.mode {
        Mode::Plain => quote!(Plain),
        Mode::Entrypoint => quote!(Entrypoint),
        Mode::Traced => quote!(Traced),
    };
    if !region.record_outcome {
        return syn::parse_quote! {
            #site_ref.instrument(#runtime::__private::Mode::#mode, #future)
        };
    }
    let value = Ident::new("__sp_value", Span::mixed_site());
    let classify = if opaque {
        quote!(#runtime::__private::opaque_outcome)
    } else {
        quote! {
            |#value| {
                #[allow(unused_imports)]
                use #runtime::__private::{OutcomeOfAny as _, OutcomeOfResult as _};
                (&&#runtime::__private::OutcomeProbe(#value)).outcome()
            }
        }
    };
    syn::parse_quote! {
        #site_ref.instrument_outcome(#runtime::__private::Mode::#mode, #future, #classify)
    }
}

/// The `Output = T` of the `Future` a function's return type names, if it
/// names one (`impl Future<Output = T>`, `Pin<Box<dyn Future<Output = T>>>`).
fn future_output(output: &ReturnType) -> Option<Type> {
    /// Finds it (a `VisitMut` over a copy: syn's `visit` is not enabled).
    struct Find(Option<Type>);
    impl VisitMut for Find {
        fn visit_path_segment_mut(&mut self, segment: &mut syn::PathSegment) {
            if self.0.is_some() {
                return;
            }
            if segment.ident == "Future"
                && let syn::PathArguments::AngleBracketed(args) = &segment.arguments
            {
                self.0 = args.args.iter().find_map(|arg| match arg {
                    syn::GenericArgument::AssocType(assoc) if assoc.ident == "Output" => {
                        Some(assoc.ty.clone())
                    }
                    _ => None,
                });
            }
            syn::visit_mut::visit_path_segment_mut(self, segment);
        }
    }
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let mut find = Find(None);
    find.visit_type_mut(&mut ty.as_ref().clone());
    find.0
}

/// `let site_ref = { static SITE: CallSite = ...; &SITE };`
fn site_ref_stmt(site_ref: &Ident, sig: &Signature, region: &Region) -> Stmt {
    let site = site_ident();
    let declare = site_static(&site, sig, region);
    let runtime = &region.runtime;
    syn::parse_quote! {
        let #site_ref: &'static #runtime::__private::CallSite = { #declare &#site };
    }
}

fn site_ident() -> Ident {
    Ident::new("__SP_SITE", Span::mixed_site())
}

/// The call site of the function, at the line of its name.
fn site_static(site: &Ident, sig: &Signature, region: &Region) -> TokenStream {
    let Region { name, runtime, .. } = region;
    let (file, line) = match &region.location {
        Some(Location { file, line }) => (file.to_token_stream(), line.to_token_stream()),
        None => {
            // `file!()` and `line!()` report where their whole invocation
            // starts: every token of it, the runtime path included, is at
            // the function's name.
            let location = sig.ident.span();
            let runtime: TokenStream = runtime
                .clone()
                .into_iter()
                .map(|mut token| {
                    token.set_span(location);
                    token
                })
                .collect();
            (
                quote_spanned!(location=> #runtime::__private::file!()),
                quote_spanned!(location=> #runtime::__private::line!()),
            )
        }
    };
    let tags = &region.tags;
    let details = match (&region.source, tags.is_empty()) {
        (None, true) => TokenStream::new(),
        (source, _) => {
            let source = source.as_deref().unwrap_or("");
            quote!(.with_details(&[#(#tags),*], #source))
        }
    };
    quote! {
        static #site: #runtime::__private::CallSite =
            #runtime::__private::CallSite::new(#name, #file, #line) #details;
    }
}

/// An unreachable `return` of the declared type `output`, first in the
/// async block, so that `?` and `return` inside it infer the function's
/// return type (the technique of tracing-attributes). None for `!`, which
/// cannot be a `let` type on stable (the block's type is then inferred
/// from the `.await` in the `-> !` function).
fn fake_return_edge(output: Option<&Type>, span: Span) -> TokenStream {
    let Some(ty) = output.filter(|ty| !is_never(ty)) else {
        return TokenStream::new();
    };
    let mut ty = ty.clone();
    ImplTraitEraser.visit_type_mut(&mut ty);
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
            clippy::type_complexity,
            clippy::unreachable
        )]
        if false {
            let #value: #ty = loop {};
            return #value;
        }
    }
}

/// Whether the function is declared `-> !`.
fn returns_never(output: &ReturnType) -> bool {
    match output {
        ReturnType::Type(_, ty) => is_never(ty),
        ReturnType::Default => false,
    }
}

/// Whether a declared output type says nothing of the value: `!` (there
/// is none) or `impl Trait`. Its outcome is ok (or a panic), as for any
/// type that is not a `Result`; the probe cannot be used, since the type
/// it would see is left to inference (a body ending in `todo!()`).
fn says_nothing(ty: &Type) -> bool {
    is_never(ty) || matches!(ty, Type::ImplTrait(_))
}

/// Whether `ty` is `!`.
fn is_never(mut ty: &Type) -> bool {
    while let Type::Paren(inner) = ty {
        ty = &inner.elem;
    }
    matches!(ty, Type::Never(_))
}

/// The declared return type as a `let` type: `()` when none is written,
/// `impl Trait` in it erased to `_`; `None` when nothing would be left
/// (`-> impl Trait`: the body's value says the type).
fn value_type(output: &ReturnType) -> Option<Type> {
    let mut ty = match output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    ImplTraitEraser.visit_type_mut(&mut ty);
    (!matches!(ty, Type::Infer(_))).then_some(ty)
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
mod tests;
