scope_profiler::profile_all_items! {
    //! Docs of the file.
    pub fn gravity() {}
}

mod fluids {
    scope_profiler::profile_all_items! {
        sometimes;
        pub fn drag() {}
    }
}

fn main() {}
