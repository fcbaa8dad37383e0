//! A `#[macro_export]` macro calling itself through `$crate::` (smallvec's
//! `smallvec!` shape). rustc refuses paths to an exported macro that another
//! macro defined, so inside `profile_all_items!` such a macro is an error
//! saying to move it out (`tests/ui/macro_export_in_items.rs`); here it
//! stands before the macro, as that error says, and the instrumented
//! functions inside use it.

/// Counts its arguments, recursing through `$crate::count!`.
#[macro_export]
macro_rules! count {
    () => { 0usize };
    ($head:expr $(, $tail:expr)*) => { 1usize + $crate::count!($($tail),*) };
}

scope_profiler::profile_all_items! {
    always;

    /// A macro that is not exported stays inside.
    macro_rules! twice {
        ($e:expr) => { 2 * $e };
    }

    /// Instrumented, and uses both macros.
    pub fn three() -> usize {
        twice!(count!(1, 2, 3)) / 2
    }
}

#[cfg(test)]
mod tests {
    use scope_profiler as sp;

    #[test]
    fn the_macros_expand_and_the_function_records() {
        sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        assert_eq!(super::three(), 3);
        assert_eq!(crate::count!(), 0);
        let results = sp::finalize().unwrap();
        assert_eq!(
            results.profile().unwrap().region_names,
            ["real_macro_export::three"]
        );
    }
}
