//! An edition-2015 crate: `extern crate`, paths relative to the crate root,
//! instrumented with `#[profile]`, `#[profile_all]` and `profile_all_items!`.

extern crate scope_profiler;

use scope_profiler::{profile, profile_all};

pub mod items;

/// A plain region named after the function.
#[profile]
pub fn plain() -> u32 {
    1
}

/// The entrypoint: the traced functions below record while it runs.
#[profile(recursive)]
pub fn entry() -> u32 {
    plain() + shapes::area() + items::volume()
}

/// Every function traced, named after its path.
#[profile_all]
pub mod shapes {
    /// Traced: `real_edition2015::shapes::area`.
    pub fn area() -> u32 {
        2
    }
}

#[cfg(test)]
mod tests {
    use scope_profiler as sp;

    #[test]
    fn every_form_records_in_edition_2015() {
        sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        assert_eq!(::entry(), 6);
        let results = sp::finalize().unwrap();
        let mut names = results.profile().unwrap().region_names.clone();
        names.sort();
        assert_eq!(
            names,
            [
                "entry",
                "plain",
                "real_edition2015::items::volume",
                "real_edition2015::shapes::area",
            ]
        );
    }
}
