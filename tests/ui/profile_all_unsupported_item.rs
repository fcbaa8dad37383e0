use scope_profiler::profile_all;

#[profile_all]
pub struct Grid {
    pub cells: Vec<f64>,
}

#[profile_all]
pub fn run() {}

fn main() {
    let _ = Grid { cells: Vec::new() };
    run();
}
