use scope_profiler::profile;

#[profile]
pub struct Config {
    pub steps: u32,
}

#[profile]
mod solver {
    pub fn run() {}
}

fn main() {
    let _ = Config { steps: 1 };
    solver::run();
}
