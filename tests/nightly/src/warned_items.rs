//! The stable form on a module file, with a deliberate warning: it points
//! at the line of the unused variable.

scope_profiler::profile_all_items! {
    always;

    pub fn noisy() -> u32 {
        let unused_in_stable_form = 1;
        3
    }
}
