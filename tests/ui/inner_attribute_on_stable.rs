mod physics {
    #![scope_profiler::profile_all]

    pub fn gravity() {}
}

fn main() {
    physics::gravity();
}
