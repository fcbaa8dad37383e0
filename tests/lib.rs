//! Helpers shared by the integration tests.
//!
//! A profiling session is process-wide, and the tests of one binary run on
//! parallel threads: every test that sets up a session holds [`serial`].

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Serializes the tests that use the process-wide session. A test that
/// panicked while holding it does not poison the others.
pub fn serial() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A previous test may have failed mid-session: start clean.
    let _ = scope_profiler::finalize();
    guard
}

/// A fresh temporary directory for one test.
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sp-test-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}
