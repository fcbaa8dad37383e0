//! An extension module whose kernels record into its own session.

use pyo3::prelude::*;

/// A region of this module: `inner` runs inside it.
#[scope_profiler::profile("ext_a.kernel")]
#[pyfunction]
fn kernel(n: u64) -> u64 {
    (0..4).map(|k| inner(n + k)).sum()
}

#[scope_profiler::profile("ext_a.inner")]
fn inner(n: u64) -> u64 {
    (0..n).fold(0u64, |a, x| a.wrapping_add(x.wrapping_mul(x)))
}

/// Calls back into Python `times` times, inside a region of its own: the
/// Python calls made then nest under it (Rust, then Python, then Rust).
#[scope_profiler::profile("ext_a.map")]
#[pyfunction]
fn map(callback: &Bound<'_, PyAny>, times: u32) -> PyResult<()> {
    for _ in 0..times {
        callback.call0()?;
    }
    Ok(())
}

/// An empty region: Python brackets it with `time.perf_counter_ns()`, so
/// that the check compares the two clocks.
#[scope_profiler::profile("ext_a.stamp")]
#[pyfunction]
fn stamp() {}

#[pymodule]
fn ext_a(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernel, m)?)?;
    m.add_function(wrap_pyfunction!(stamp, m)?)?;
    m.add_function(wrap_pyfunction!(map, m)?)?;
    scope_profiler::pyo3_session_functions!(m);
    Ok(())
}
