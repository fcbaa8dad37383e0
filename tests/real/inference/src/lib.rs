//! A user crate whose type inference must not change by depending on
//! scope-profiler: `&[]` below is inferred through `u8: PartialEq<_>`, which
//! has exactly one impl unless a transitive dependency of the profiler adds
//! another (the `ascii` crate's `impl PartialEq<AsciiChar> for u8` did).

/// An instrumented function returning bytes.
#[scope_profiler::profile]
pub fn bytes() -> Vec<u8> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn comparing_with_an_untyped_empty_slice_infers_u8() {
        assert_eq!(&bytes()[..], &[]);
    }
}
