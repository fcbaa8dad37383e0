use scope_profiler::profile;

pub trait Mesh {
    #[profile]
    fn refine(&mut self) -> usize;

    // A default method has a body: fine.
    #[profile]
    fn cells(&self) -> usize {
        0
    }
}

fn main() {}
