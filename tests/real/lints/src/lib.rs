//! Trait impls whose bodies clippy checks for a canonical shape, instrumented
//! by `#[profile_all]` and `profile_all_items!`.

use std::cmp::Ordering;

pub mod file_items;

/// A version number.
#[derive(PartialEq, Eq, Debug, Copy)]
pub struct Version(pub u32);

#[scope_profiler::profile_all(always)]
impl Ord for Version {
    fn cmp(&self, rhs: &Self) -> Ordering {
        self.0.cmp(&rhs.0)
    }
}

#[scope_profiler::profile_all(always)]
impl PartialOrd for Version {
    fn partial_cmp(&self, rhs: &Self) -> Option<Ordering> {
        Some(self.cmp(rhs))
    }
}

#[scope_profiler::profile_all(always)]
impl Clone for Version {
    fn clone(&self) -> Self {
        *self
    }
}

/// A version whose canonical methods carry a lone `#[profile]`.
#[derive(PartialEq, Eq, Debug, Copy)]
pub struct Lone(pub u32);

impl Ord for Lone {
    fn cmp(&self, rhs: &Self) -> Ordering {
        self.0.cmp(&rhs.0)
    }
}

impl PartialOrd for Lone {
    #[scope_profiler::profile]
    fn partial_cmp(&self, rhs: &Self) -> Option<Ordering> {
        Some(self.cmp(rhs))
    }
}

impl Clone for Lone {
    #[scope_profiler::profile]
    fn clone(&self) -> Self {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::{Lone, Version};
    use crate::file_items::Tag;
    use scope_profiler as sp;

    #[test]
    fn canonical_impls_record() {
        sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        let a = Version(1);
        #[allow(clippy::clone_on_copy)]
        let b = a.clone();
        assert!(a <= b);
        assert!(Tag(1) < Tag(2));
        #[allow(clippy::clone_on_copy)]
        let lone = Lone(3).clone();
        assert!(lone > Lone(2));
        let results = sp::finalize().unwrap();
        let mut names = results.profile().unwrap().region_names.clone();
        names.sort();
        assert_eq!(
            names,
            [
                "clone",
                "partial_cmp",
                "real_lints::<Version as Clone>::clone",
                "real_lints::<Version as Ord>::cmp",
                "real_lints::<Version as PartialOrd>::partial_cmp",
                "real_lints::file_items::<Tag as Ord>::cmp",
                "real_lints::file_items::<Tag as PartialOrd>::partial_cmp",
            ]
        );
    }
}
