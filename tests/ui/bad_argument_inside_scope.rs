use scope_profiler::{profile, profile_all};

#[profile_all]
mod pipeline {
    use super::profile;

    #[profile(fast)]
    pub fn run() {}

    pub const fn constant() -> u32 {
        1
    }

    #[profile]
    pub const fn marked_constant() -> u32 {
        2
    }
}

fn main() {
    pipeline::run();
    let _ = pipeline::constant() + pipeline::marked_constant();
}
