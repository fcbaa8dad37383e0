//! The configuration modes of `sp-child` (`tests/config.rs` drives them):
//! what depends on the process's environment runs here, in a process of its
//! own, with the environment the test gives it.
//!
//! - `env-options [LABEL]`: prints `Options::from_env()` (with `.label(LABEL)`
//!   applied after it, if given) as `describe_options` lines.
//! - `from-toml PATH`: prints `Options::from_toml(PATH)` the same way.
//! - `setup-from-env N`: `setup_from_env()`, `N` calls of the region
//!   `env/work`, `finalize()`; prints `write_path=...`, `file=...`,
//!   `calls=...` (the calls the session counted).

use std::path::Path;

use integration_tests::describe_options;
use scope_profiler::{self as sp, Options};

use crate::{Outcome, say};

pub fn env_options(label: Option<&str>) -> Outcome {
    let mut options = Options::from_env().map_err(|e| format!("from_env: {e}"))?;
    if let Some(label) = label {
        options = options.label(label);
    }
    say(&describe_options(&options));
    Ok(())
}

pub fn from_toml(path: &Path) -> Outcome {
    let options = Options::from_toml(path).map_err(|e| format!("from_toml: {e}"))?;
    say(&describe_options(&options));
    Ok(())
}

pub fn setup_from_env(n: u64) -> Outcome {
    let run = sp::setup_from_env().map_err(|e| format!("setup_from_env: {e}"))?;
    for _ in 0..n {
        sp::region("env/work").run(|| ());
    }
    let calls = sp::get_region("env/work").map_or(0, |r| r.num_calls());
    let results = run.finalize().map_err(|e| format!("finalize: {e}"))?;
    say(&format!("write_path={:?}", results.write_path()));
    say(&format!(
        "file={}",
        results
            .file_path()
            .map_or_else(String::new, |p| p.display().to_string())
    ));
    say(&format!("calls={calls}"));
    Ok(())
}
