//! A module file instrumented whole with the stable form.

scope_profiler::profile_all_items! {
    /// Traced: `real_edition2015::items::volume`.
    pub fn volume() -> u32 {
        3
    }
}
