//! A second extension module, with a runtime copy of its own.

use pyo3::prelude::*;

#[scope_profiler::profile("ext_b.solve")]
#[pyfunction]
fn solve(n: u64) -> u64 {
    (1..=n).fold(1u64, |a, x| a.wrapping_mul(x | 1))
}

#[pymodule]
fn ext_b(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    scope_profiler::pyo3_session_functions!(m);
    Ok(())
}
