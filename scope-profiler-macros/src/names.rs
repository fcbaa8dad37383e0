//! The names `profile_all` gives functions inside impl blocks and traits.
//! A name never depends on how a path was spelled: a type or trait is named
//! by its last path segment, without generic arguments or lifetimes, so that
//! `super::Engine<u8>`, `crate::x::Engine` and `Engine` are one `Engine`,
//! and every instantiation of a generic impl shares one region.

use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::{ItemImpl, Path, Type, TypeParamBound};

/// What the functions of an impl block are prefixed with:
/// `Grid::`, `<[u8]>::`, `<dyn Shape>::` or `<Grid as Mesh>::`.
pub(crate) fn impl_prefix(block: &ItemImpl) -> String {
    let self_type = type_name(&block.self_ty);
    match &block.trait_ {
        Some((negative, path, _)) => {
            let bang = if negative.is_some() { "!" } else { "" };
            format!("<{self_type} as {bang}{}>::", path_name(path))
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

/// A path's own name: its last segment, without generic arguments
/// (`ops::IndexMut<usize>` -> `IndexMut`).
fn path_name(path: &Path) -> String {
    path.segments
        .last()
        .map(|segment| segment.ident.unraw().to_string())
        .unwrap_or_default()
}

/// A type's name, paths by their last segment, without generic arguments
/// or lifetimes.
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
                    TypeParamBound::Trait(t) => Some(path_name(&t.path)),
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
            "<G as Engine>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<T> crate::x::Engine<T> for ::y::G<T> {}
            )),
            "<G as Engine>::"
        );
        assert_eq!(
            prefix(quote!(impl ops::IndexMut<usize> for V {})),
            "<V as IndexMut>::"
        );
        assert_eq!(
            prefix(quote!(
                impl<T> geom::Grid<T> {}
            )),
            "Grid::"
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
        let name = |ty: TokenStream| type_name(&syn::parse2(ty).unwrap());
        assert_eq!(name(quote!(Vec<u8>)), "Vec");
        assert_eq!(name(quote!(&'a mut a::B<'a, T>)), "&mut B");
        assert_eq!(name(quote!([T; 3])), "[T; 3]");
        assert_eq!(name(quote!((u8,))), "(u8,)");
        assert_eq!(name(quote!(dyn Fn(u8) + Send + 'static)), "dyn Fn + Send");
        assert_eq!(name(quote!(*const u8)), "*const u8");
    }
}
