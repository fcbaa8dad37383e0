// An error in the arguments of profile_all_items! is the only error: the
// items are still defined, so `main` finds them.
scope_profiler::profile_all_items! {
    sometimes;

    pub fn helper() -> u32 {
        1
    }
}

scope_profiler::profile_all_items! {
    crate = 42;

    pub fn other() {}
}

fn main() {
    helper();
    other();
}
