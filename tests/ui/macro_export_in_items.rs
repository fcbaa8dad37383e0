// A `#[macro_export]` macro naming itself by path (`$crate::count!`) cannot
// be defined by a macro: the error says to move it out.
scope_profiler::profile_all_items! {
    #[macro_export]
    macro_rules! count {
        () => { 0usize };
        ($head:expr $(, $tail:expr)*) => { 1usize + $crate::count!($($tail),*) };
    }

    pub fn three() -> usize {
        count!(1, 2, 3)
    }
}

fn main() {
    three();
}
