use scope_profiler::profile_all;

#[profile_all]
#[path = "modules/physics.rs"]
mod physics;

fn main() {
    physics::gravity();
}
