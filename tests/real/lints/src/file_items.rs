//! The same canonical impls inside `profile_all_items!`.

use std::cmp::Ordering;

scope_profiler::profile_all_items! {
    always;

    /// A tag, ordered by its number.
    #[derive(PartialEq, Eq, Debug, Clone, Copy)]
    pub struct Tag(pub u8);

    impl Ord for Tag {
        fn cmp(&self, other: &Self) -> Ordering {
            self.0.cmp(&other.0)
        }
    }

    impl PartialOrd for Tag {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
}
