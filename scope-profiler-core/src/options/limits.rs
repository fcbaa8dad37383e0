//! The bounds of a session: memory for recorded calls, disk for the calls
//! spilled past it, and what happens when spilling fails.

#![forbid(unsafe_code)]

use super::Options;

/// What happens to calls past the memory limit once the scratch file
/// cannot be written (a full disk, a removed directory, a file size limit):
/// set with [`Options::drop_calls_on_spill_failure`].
///
/// Either way a warning line on stderr names the directory and the error,
/// and `Results::health().spill_error` reports it.
///
/// ```
/// use scope_profiler_core::internal::options::{OnSpillFailure, read};
/// assert_eq!(OnSpillFailure::default(), OnSpillFailure::KeepInMemory);
/// let o = scope_profiler::Options::new().drop_calls_on_spill_failure(true);
/// assert_eq!(read::on_spill_failure(&o), OnSpillFailure::DropCalls);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnSpillFailure {
    /// Keep recording in memory past the limit: nothing is lost, memory
    /// grows.
    #[default]
    KeepInMemory,
    /// Drop calls past the limit, counting them and their total time per
    /// region (`Results::health().dropped` and
    /// the file's metadata): memory stays bounded.
    DropCalls,
}

impl Options {
    /// Bound on the recorded calls held in memory (default 256 MiB). Past
    /// half of it, full per-thread buffers are spilled to a scratch file
    /// beside the output by a background writer; nothing is dropped, and
    /// `finalize` writes the same file as without spilling. If the scratch
    /// file cannot be written, see [`Options::drop_calls_on_spill_failure`]; past
    /// [`Options::disk_limit`], calls are dropped and counted.
    ///
    /// The limit counts recorded calls. Region names and per-region state
    /// are outside it: about 75 bytes per distinct region plus its name
    /// while recording, and about 270 bytes per region with calls plus its
    /// name at the peak of `finalize` (the summary tree, the region table,
    /// per-region counts, the statistics the results keep; index rows are
    /// made and written 16k at a time), so a session with a million
    /// distinct regions needs about 290 MB more at `finalize`. One region's
    /// durations are kept for exact percentiles while they fit an eighth of
    /// `finalize`'s budget (half this limit, at least 8 MiB): 2M calls of a
    /// region by default.
    ///
    /// When the session ends, its record memory is kept for the next
    /// session (a process that records session after session takes no page
    /// fault for it): 8 chunks (16 MiB at most) as they are, and more,
    /// within half this limit, only where the OS can take their pages back
    /// when it needs memory (Linux's `MADV_FREE`; until it does, they count
    /// in the process's resident size). The rest is given back.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().memory_limit(64 << 20);
    /// assert_eq!(scope_profiler_core::internal::options::read::memory_limit(&o), 64 << 20);
    /// ```
    pub fn memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = bytes;
        self
    }

    /// Bound on the bytes of the scratch file that takes the calls spilled
    /// past the memory limit. Default: half the space free in its directory
    /// at `setup` (unbounded where that cannot be read). Past it, spilling
    /// stops and, once memory is full too, the run degrades gracefully:
    /// each call's event is dropped, while calls and their total time per
    /// region stay exact (`Results::health().dropped`,
    /// `Results::health().events_stopped_ns` and
    /// the file's metadata say which and since when).
    ///
    /// ```
    /// let o = scope_profiler::Options::new().disk_limit(1 << 30);
    /// assert_eq!(scope_profiler_core::internal::options::read::disk_limit(&o), Some(1 << 30));
    /// assert_eq!(scope_profiler_core::internal::options::read::disk_limit(&scope_profiler::Options::new()), None); // chosen at setup
    /// ```
    pub fn disk_limit(mut self, bytes: u64) -> Self {
        self.disk_limit = Some(bytes);
        self
    }

    /// What happens past the memory limit if spilling to disk fails (a
    /// full disk, a removed directory, a file size limit): with `false`, the
    /// default, calls are kept in memory past the limit (nothing is lost,
    /// memory grows); with `true` they are dropped, counted with their
    /// total time per region (`Results::health().dropped` and the file's
    /// metadata), and memory stays bounded. Either way a warning line on
    /// stderr names the directory and the error, and
    /// `Results::health().spill_error` reports it.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let run = sp::setup(Options::new().in_memory().verbose(false)
    ///     .memory_limit(64 << 20)
    ///     .drop_calls_on_spill_failure(true))?;
    /// sp::region("a").run(|| ());
    /// assert!(run.finalize()?.health().dropped.is_empty()); // the disk did not fail
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn drop_calls_on_spill_failure(mut self, on: bool) -> Self {
        self.on_spill_failure = if on {
            OnSpillFailure::DropCalls
        } else {
            OnSpillFailure::KeepInMemory
        };
        self
    }
}
