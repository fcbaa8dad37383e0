//! A PyO3 extension module's session, started and finished from Python
//! ([`pyo3_session_functions!`](crate::pyo3_session_functions)).

/// Adds `scope_profiler_start(path=None)` and `scope_profiler_finish()` to
/// a PyO3 extension module, so that the Python program that imports it
/// starts and finishes the extension's session: one line in the
/// `#[pymodule]` function (which returns `PyResult<()>`).
///
/// An extension module that depends on this crate holds its own copy of
/// the runtime (each extension module its own), so it records into a
/// session of its own, written to a file of its own; `scope-prof merge
/// python.h5 ext.h5 -o merged.h5` then nests its calls under the Python
/// calls that ran them, thread by thread ([`Profile::merge`](crate::Profile::merge)).
///
/// - `scope_profiler_start(path=None) -> str` sets up a session with the
///   `SCOPE_PROFILER_*` settings of the environment (the Python package's
///   variables, [`Options::from_env`](crate::Options::from_env)), writing to
///   `path` (by default `<crate name>_profile.h5` in the working
///   directory), without a summary on stderr, and returns the path. A
///   `RuntimeError` if it cannot (a session is active, the path cannot be
///   written, a setting is wrong).
/// - `scope_profiler_finish() -> str | None` finalizes it and returns the
///   file written (`None` for a deactivated session); a `RuntimeError` if
///   no session is active or the file cannot be written.
///
/// The expansion names `::pyo3`, so the extension depends on `pyo3` (0.21
/// or later: the `Bound` API). The Python package's own
/// `finalize(native_traces="ext.h5")` also reads the extension's file, but
/// keeps only each region's start and end times: no threads (every native
/// call on one lane), nesting guessed from time, and a region name on
/// both sides is an error there; `scope-prof merge` keeps all of it.
///
/// ```ignore
/// use pyo3::prelude::*;
///
/// #[scope_profiler::profile]
/// #[pyfunction]
/// fn kernel(n: u64) -> u64 {
///     (0..n).sum()
/// }
///
/// #[pymodule]
/// fn my_ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
///     m.add_function(wrap_pyfunction!(kernel, m)?)?;
///     scope_profiler::pyo3_session_functions!(m);
///     Ok(())
/// }
/// ```
///
/// ```python
/// import my_ext, scope_profiler as sp
/// sp.setup(file_path="python.h5", track_threads=True)
/// my_ext.scope_profiler_start("my_ext.h5")
/// with sp.region("step"):
///     my_ext.kernel(1000)
/// my_ext.scope_profiler_finish()
/// sp.finalize()
/// ```
///
/// The repository's `examples/python-extension` builds two such modules
/// with maturin, runs them from Python threads and checks the merged
/// profile with the Python package's reader (in CI).
#[macro_export]
macro_rules! pyo3_session_functions {
    ($module:expr) => {
        #[::pyo3::pyfunction]
        #[pyo3(signature = (path = None))]
        fn scope_profiler_start(
            path: ::std::option::Option<::std::string::String>,
        ) -> ::pyo3::PyResult<::std::string::String> {
            let path = path.unwrap_or_else(|| {
                ::std::format!("{}_profile.h5", ::std::env!("CARGO_CRATE_NAME"))
            });
            let error =
                |e: $crate::Error| ::pyo3::exceptions::PyRuntimeError::new_err(e.to_string());
            let options = $crate::Options::from_env()
                .map_err(error)?
                .file_path(&path)
                .verbose(false);
            $crate::setup(options).map_err(error)?;
            ::std::result::Result::Ok(path)
        }

        #[::pyo3::pyfunction]
        fn scope_profiler_finish() -> ::pyo3::PyResult<::std::option::Option<::std::string::String>>
        {
            let results = $crate::finalize()
                .map_err(|e| ::pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
            ::std::result::Result::Ok(results.file_path().map(|p| p.display().to_string()))
        }

        $module.add_function(::pyo3::wrap_pyfunction!(scope_profiler_start, $module)?)?;
        $module.add_function(::pyo3::wrap_pyfunction!(scope_profiler_finish, $module)?)?;
    };
}
