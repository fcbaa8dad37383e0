//! The names `profile_all` gives functions inside impl blocks and traits.
//! A name never depends on how a path was spelled: a type or trait is named
//! by its last path segment, without lifetimes, so that `super::Engine`,
//! `crate::x::Engine` and `Engine` are one `Engine`. The implementing type
//! is named without its generic arguments, so that every instantiation of a
//! generic impl shares one region; the trait keeps its own, which tell
//! impls apart: `impl From<u8> for B` and `impl From<u16> for B` are
//! `<B as From<u8>>` and `<B as From<u16>>` (each argument named the same
//! way, its paths by their last segment, its generic arguments kept).

use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::{GenericArgument, ItemImpl, Path, PathArguments, ReturnType, Type, TypeParamBound};

/// What the functions of an impl block are prefixed with:
/// `Grid::`, `<[u8]>::`, `<dyn Shape>::`, `<Grid as Mesh>::` or
/// `<B as From<u8>>::`.
pub(crate) fn impl_prefix(block: &ItemImpl) -> String {
    let self_type = type_name(&block.self_ty, Args::Drop);
    match &block.trait_ {
        Some((negative, path, _)) => {
            let bang = if negative.is_some() { "!" } else { "" };
            format!("<{self_type} as {bang}{}>::", path_name(path, Args::Keep))
        }
        None if is_plain_path(&block.self_ty) => format!("{self_type}::"),
        None => format!("<{self_type}>::"),
    }
}

fn is_plain_path(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.qself.is_none(),
        Type::Paren(paren) => is_plain_path(&paren.elem),
        Type::Group(group) => is_plain_path(&group.elem),
        _ => false,
    }
}

/// Whether a name keeps the generic arguments of its paths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Args {
    /// `ops::IndexMut<usize>` -> `IndexMut`.
    Drop,
    /// `ops::IndexMut<usize>` -> `IndexMut<usize>`, `From<&'a [u8]>` ->
    /// `From<&[u8]>`, `From<Vec<String>>` -> `From<Vec<String>>`.
    Keep,
}

/// A path's own name: its last segment, with or without its generic
/// arguments (lifetimes never).
fn path_name(path: &Path, args: Args) -> String {
    let Some(segment) = path.segments.last() else {
        return String::new();
    };
    let name = segment.ident.unraw().to_string();
    if args == Args::Drop {
        return name;
    }
    match &segment.arguments {
        PathArguments::None => name,
        PathArguments::AngleBracketed(list) => {
            let args: Vec<String> = list.args.iter().filter_map(generic_arg_name).collect();
            if args.is_empty() {
                name
            } else {
                format!("{name}<{}>", args.join(", "))
            }
        }
        PathArguments::Parenthesized(list) => {
            let inputs: Vec<String> = list
                .inputs
                .iter()
                .map(|ty| type_name(ty, Args::Keep))
                .collect();
            let output = match &list.output {
                ReturnType::Default => String::new(),
                ReturnType::Type(_, ty) => format!(" -> {}", type_name(ty, Args::Keep)),
            };
            format!("{name}({}){output}", inputs.join(", "))
        }
    }
}

/// One generic argument's name (`None`: a lifetime, which names drop).
fn generic_arg_name(arg: &GenericArgument) -> Option<String> {
    Some(match arg {
        GenericArgument::Lifetime(_) => return None,
        GenericArgument::Type(ty) => type_name(ty, Args::Keep),
        GenericArgument::AssocType(assoc) => {
            format!("{} = {}", assoc.ident, type_name(&assoc.ty, Args::Keep))
        }
        other => other.to_token_stream().to_string(),
    })
}

/// A type's name, paths by their last segment, without lifetimes, and
/// without generic arguments unless `args` keeps them.
fn type_name(ty: &Type, args: Args) -> String {
    let type_name = |ty: &Type| type_name(ty, args);
    match ty {
        Type::Path(path) if path.qself.is_none() => path_name(&path.path, args),
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
                    TypeParamBound::Trait(t) => Some(path_name(&t.path, args)),
                    _ => None,
                })
                .collect();
            format!("dyn {}", bounds.join(" + "))
        }
        Type::Never(_) => "!".to_owned(),
        other => other.to_token_stream().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;

    fn prefix(block: TokenStream) -> String {
        impl_prefix(&syn::parse2(block).unwrap())
    }

    #[test]
    fn spelling_does_not_change_the_name() {
        assert_eq!(prefix(quote!(impl Engine for G {})), "<G as Engine>::");
        assert_eq!(
            prefix(quote!(impl super::Engine<u8> for super::G {})),
            "<G as Engine<u8>>::"
        );
        assert_eq!(
            prefix(quote!(impl Engine<std::primitive::u8> for G {})),
            "<G as Engine<u8>>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<T> crate::x::Engine<T> for ::y::G<T> {}
            )),
            "<G as Engine<T>>::"
        );
        assert_eq!(
            prefix(quote!(impl ops::IndexMut<usize> for V {})),
            "<V as IndexMut<usize>>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<'a> Engine<'a> for G {}
            )),
            "<G as Engine>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<T> geom::Grid<T> {}
            )),
            "Grid::"
        );
    }

    #[test]
    fn impls_of_one_trait_with_other_arguments_have_other_names() {
        assert_eq!(prefix(quote!(impl From<u8> for B {})), "<B as From<u8>>::");
        assert_eq!(
            prefix(quote!(impl From<u16> for B {})),
            "<B as From<u16>>::"
        );
        // Arguments keep theirs (not `Vec` twice), drop lifetimes, and name
        // their paths by the last segment.
        assert_eq!(
            prefix(quote!(impl From<Vec<u8>> for B {})),
            "<B as From<Vec<u8>>>::"
        );
        assert_eq!(
            prefix(quote!(impl From<std::vec::Vec<u16>> for B {})),
            "<B as From<Vec<u16>>>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<'a> From<&'a [u8]> for B<'a> {}
            )),
            "<B as From<&[u8]>>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<'a> From<(&'a mut a::C<'a, u8>, [u8; 4])> for B {}
            )),
            "<B as From<(&mut C<u8>, [u8; 4])>>::"
        );
        assert_eq!(
            prefix(quote!(impl AsRef<dyn Fn(u8) -> u8 + Send> for B {})),
            "<B as AsRef<dyn Fn(u8) -> u8 + Send>>::"
        );
        assert_eq!(
            prefix(quote!(impl Engine<3, u8> for B {})),
            "<B as Engine<3, u8>>::"
        );
        // The implementing type is still named without its arguments.
        assert_eq!(
            prefix(quote!(
                impl<T> From<T> for Wrapper<T> {}
            )),
            "<Wrapper as From<T>>::"
        );
    }

    #[test]
    fn non_path_types_are_bracketed() {
        assert_eq!(prefix(quote!(impl dyn Shape {})), "<dyn Shape>::");
        assert_eq!(
            prefix(quote!(impl dyn shapes::Shape + Send {})),
            "<dyn Shape + Send>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<T> [T] {}
            )),
            "<[T]>::"
        );
        assert_eq!(
            prefix(quote!(impl Trait for dyn Shape {})),
            "<dyn Shape as Trait>::"
        );
        assert_eq!(prefix(quote!(impl !Send for G {})), "<G as !Send>::");
    }

    #[test]
    fn type_names_drop_generics_and_lifetimes() {
        let name = |ty: TokenStream| type_name(&syn::parse2(ty).unwrap(), Args::Drop);
        assert_eq!(name(quote!(Vec<u8>)), "Vec");
        assert_eq!(name(quote!(&'a mut a::B<'a, T>)), "&mut B");
        assert_eq!(name(quote!([T; 3])), "[T; 3]");
        assert_eq!(name(quote!((u8,))), "(u8,)");
        assert_eq!(name(quote!(dyn Fn(u8) + Send + 'static)), "dyn Fn + Send");
        assert_eq!(name(quote!(*const u8)), "*const u8");
    }
}
