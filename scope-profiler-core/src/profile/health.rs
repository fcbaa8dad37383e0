//! How the recording of a session went ([`RecordingHealth`]): spilling,
//! and the calls dropped past the limits ([`DroppedCalls`]).

#![forbid(unsafe_code)]

/// Calls of one region that completed but whose events were not kept (the
/// memory limit was reached once spilling to disk had stopped): counted
/// exactly, with their total time.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// sp::region("a").run(|| ());
/// let results = sp::finalize()?;
/// assert!(results.health().dropped.is_empty()); // nothing dropped
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DroppedCalls {
    /// The region.
    pub name: String,
    /// Calls dropped.
    pub num_calls: u64,
    /// Their summed duration, ns.
    pub total: i64,
}

/// How the recording of a session went: what was spilled to disk, why
/// spilling stopped, and which calls were dropped. All empty for a run that
/// kept every call in memory.
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// let health = sp::finalize()?.health().clone();
/// assert_eq!(health.spilled_bytes, 0);
/// assert!(health.spill_error.is_none() && health.dropped.is_empty());
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordingHealth {
    /// Bytes of records written to the scratch file.
    pub spilled_bytes: u64,
    /// Why spilling stopped (naming the directory and the OS error), if it
    /// did.
    pub spill_error: Option<String>,
    /// Calls dropped, per region with any.
    pub dropped: Vec<DroppedCalls>,
    /// When the first call was dropped, ns after the session's start.
    pub events_stopped_ns: Option<i64>,
    /// A traced function (of `#[profile_all]` or `profile_all_items!`)
    /// that ran outside any recursive entrypoint, with `trace_all` off, and
    /// so recorded nothing; `None` if none did. A session whose functions
    /// all ran so records no calls: `Results` says why.
    pub traced_outside_entrypoints: Option<String>,
    /// The recording threads whose perf events (`Options::perf_events`)
    /// could not be opened, each `thread NAME (tid N): why`: their calls
    /// count no perf events, so the regions' perf counts leave them out.
    pub perf_events_not_counted: Vec<String>,
}
