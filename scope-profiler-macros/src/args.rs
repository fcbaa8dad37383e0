//! Attribute arguments, parsed into typed structs. Every error is reported
//! on the token that caused it.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprAssign, ExprLit, ExprPath, Ident, Lit, LitStr, Token};

const PROFILE_EXPECTED: &str = "expected a region name (`\"solver\"` or `name = \"solver\"`), \
                                `recursive`, `traced` or `skip`";

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

/// The arguments of `#[profile(...)]`.
#[derive(Default)]
pub(crate) struct ProfileArgs {
    /// An explicit region name.
    pub name: Option<LitStr>,
    /// The `recursive` flag, kept for its span.
    pub recursive: Option<Ident>,
    /// The `traced` flag.
    pub traced: Option<Ident>,
    /// The `skip` flag.
    pub skip: Option<Ident>,
    /// `__qualifier = "Type::method"`: passed by an enclosing `profile_all`
    /// scope so that a `traced` function is named after its full path.
    pub qualifier: Option<LitStr>,
}

impl ProfileArgs {
    /// Parses the tokens between the attribute's parentheses.
    pub(crate) fn parse(tokens: TokenStream) -> syn::Result<ProfileArgs> {
        let exprs = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(tokens)?;
        let mut args = ProfileArgs::default();
        for expr in exprs {
            args.add(expr)?;
        }
        args.check_combination()?;
        Ok(args)
    }

    fn add(&mut self, expr: Expr) -> syn::Result<()> {
        match expr {
            Expr::Lit(ExprLit {
                lit: Lit::Str(name),
                attrs,
            }) if attrs.is_empty() => self.set_name(name),
            Expr::Lit(lit) => Err(name_not_literal(&lit)),
            Expr::Assign(assign) => self.add_assignment(assign),
            Expr::Path(path) => {
                let ident = single_ident(&path)
                    .ok_or_else(|| syn::Error::new_spanned(&path, PROFILE_EXPECTED))?;
                let path = ident.clone();
                let slot = match ident.to_string().as_str() {
                    "recursive" => &mut self.recursive,
                    "traced" => &mut self.traced,
                    "skip" => &mut self.skip,
                    "name" => {
                        return Err(syn::Error::new_spanned(
                            ident,
                            "`name` needs a value: `name = \"solver\"`",
                        ));
                    }
                    other => {
                        return Err(syn::Error::new_spanned(
                            ident,
                            format!("unknown argument `{other}`: {PROFILE_EXPECTED}"),
                        ));
                    }
                };
                set_flag(slot, ident)?;
                if let (Some(_), Some(_)) = (&self.recursive, &self.traced) {
                    return Err(syn::Error::new_spanned(
                        path,
                        "`recursive` and `traced` cannot be combined: a recursive entrypoint \
                         always records",
                    ));
                }
                Ok(())
            }
            Expr::Macro(_) | Expr::Binary(_) | Expr::Call(_) | Expr::MethodCall(_) => {
                Err(name_not_literal(&expr))
            }
            other => Err(syn::Error::new_spanned(other, PROFILE_EXPECTED)),
        }
    }

    fn add_assignment(&mut self, assign: ExprAssign) -> syn::Result<()> {
        let key = match &*assign.left {
            Expr::Path(path) => single_ident(path),
            _ => None,
        };
        let Some(key) = key else {
            return Err(syn::Error::new_spanned(&assign.left, PROFILE_EXPECTED));
        };
        match key.to_string().as_str() {
            "__qualifier" => match *assign.right {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(qualifier),
                    ..
                }) => {
                    self.qualifier = Some(qualifier);
                    Ok(())
                }
                other => Err(name_not_literal(&other)),
            },
            "name" => match *assign.right {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(name),
                    attrs,
                }) if attrs.is_empty() => self.set_name(name),
                other => Err(name_not_literal(&other)),
            },
            flag @ ("recursive" | "traced" | "skip") => Err(syn::Error::new_spanned(
                &assign,
                format!("`{flag}` takes no value: write `{flag}` alone"),
            )),
            other => Err(syn::Error::new_spanned(
                key,
                format!("unknown argument `{other}`: {PROFILE_EXPECTED}"),
            )),
        }
    }

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
        if let Some(skip) = &self.skip {
            if self.name.is_some() || self.recursive.is_some() || self.traced.is_some() {
                return Err(syn::Error::new_spanned(
                    skip,
                    "`skip` cannot be combined with other arguments: a skipped function is not \
                     instrumented",
                ));
            }
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

/// The arguments of `#[profile_all(...)]`.
#[derive(Default)]
pub(crate) struct ProfileAllArgs {
    /// `always`: the scope records whenever a session is active, not only
    /// inside a recursive entrypoint.
    pub always: Option<Ident>,
}

impl ProfileAllArgs {
    /// Parses the tokens between the attribute's parentheses.
    pub(crate) fn parse(tokens: TokenStream) -> syn::Result<ProfileAllArgs> {
        let exprs = Punctuated::<Expr, Token![,]>::parse_terminated.parse2(tokens)?;
        let mut args = ProfileAllArgs::default();
        for expr in exprs {
            let ident = match &expr {
                Expr::Path(path) => single_ident(path),
                _ => None,
            };
            match ident {
                Some(ident) if ident == "always" => set_flag(&mut args.always, ident)?,
                Some(ident) => {
                    return Err(syn::Error::new_spanned(
                        &ident,
                        format!("unknown argument `{ident}`: #[profile_all] accepts only `always`"),
                    ));
                }
                None => {
                    return Err(syn::Error::new_spanned(
                        expr,
                        "#[profile_all] accepts only `always`; a scope's functions are named \
                         after their path",
                    ));
                }
            }
        }
        Ok(args)
    }

    /// How the functions of the scope record.
    pub(crate) fn mode(&self) -> Mode {
        if self.always.is_some() {
            Mode::Plain
        } else {
            Mode::Traced
        }
    }
}

fn single_ident(path: &ExprPath) -> Option<Ident> {
    if path.qself.is_none() && path.attrs.is_empty() {
        path.path.get_ident().cloned()
    } else {
        None
    }
}

fn set_flag(slot: &mut Option<Ident>, ident: Ident) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new_spanned(
            &ident,
            format!("`{ident}` is given twice"),
        ));
    }
    *slot = Some(ident);
    Ok(())
}

fn name_not_literal(tokens: &dyn quote::ToTokens) -> syn::Error {
    syn::Error::new_spanned(
        tokens,
        "the region name must be a string literal, like `\"solver\"`",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn err(tokens: TokenStream) -> String {
        match ProfileArgs::parse(tokens) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn parses_every_form() {
        let args = ProfileArgs::parse(quote!()).unwrap();
        assert!(args.name.is_none() && args.mode() == Mode::Plain);
        let args = ProfileArgs::parse(quote!("solver")).unwrap();
        assert_eq!(args.name.unwrap().value(), "solver");
        let args = ProfileArgs::parse(quote!(name = "solver")).unwrap();
        assert_eq!(args.name.unwrap().value(), "solver");
        let args = ProfileArgs::parse(quote!("solve", recursive)).unwrap();
        assert_eq!(args.mode(), Mode::Entrypoint);
        let args = ProfileArgs::parse(quote!(traced,)).unwrap();
        assert_eq!(args.mode(), Mode::Traced);
        assert!(ProfileArgs::parse(quote!(skip)).unwrap().skip.is_some());
        assert_eq!(
            ProfileAllArgs::parse(quote!(always)).unwrap().mode(),
            Mode::Plain
        );
        assert_eq!(
            ProfileAllArgs::parse(quote!()).unwrap().mode(),
            Mode::Traced
        );
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(err(quote!(fast)).starts_with("unknown argument `fast`"));
        assert!(err(quote!(name = solver)).contains("string literal"));
        assert!(err(quote!(42)).contains("string literal"));
        assert!(err(quote!("a", name = "b")).contains("given twice"));
        assert!(err(quote!(recursive, recursive)).contains("`recursive` is given twice"));
        assert!(err(quote!(recursive, traced)).contains("cannot be combined"));
        assert!(err(quote!(skip, "x")).contains("`skip` cannot be combined"));
        assert!(err(quote!(recursive = true)).contains("takes no value"));
        assert!(err(quote!("")).contains("must not be empty"));
        assert!(ProfileAllArgs::parse(quote!(always, always)).is_err());
        assert!(ProfileAllArgs::parse(quote!(sometimes)).is_err());
    }
}
