use scope_profiler::profile_all;

#[profile_all(sometimes)]
mod a {}

#[profile_all(always, always)]
mod b {}

#[profile_all("name")]
mod c {}

fn main() {}
