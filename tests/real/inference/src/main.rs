//! The same inference in a binary that sets up a session.

use scope_profiler::{self as sp, Options};

fn main() -> Result<(), sp::Error> {
    let run = sp::setup(Options::new().in_memory().verbose(false))?;
    assert_eq!(&inference_fixture::bytes()[..], &[]);
    run.finalize()?;
    Ok(())
}
