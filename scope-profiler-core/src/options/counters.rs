//! Region counters: allocations (through `CountingAllocator`) and perf
//! events counted per region.

#![forbid(unsafe_code)]

use super::Options;

impl Options {
    /// Counts allocations per region: every allocation and deallocation
    /// made through [`CountingAllocator`](crate::counters::CountingAllocator)
    /// (which must be the global allocator: `setup` is an error otherwise)
    /// is attributed to the innermost open call of the recorder active on
    /// the thread (the thread's own, or the instrumented future polled
    /// there). Per region, the events `alloc-count`, `alloc-bytes`,
    /// `free-count` and `free-bytes`, inclusive of callees and own, are in
    /// [`Results::counters`](https://docs.rs/scope-profiler/latest/scope_profiler/struct.Results.html#method.counters)
    /// and the file's `rank0/perf_events` group. The profiler's own
    /// allocations are never counted. TOML key `track_allocations`,
    /// variable `SCOPE_PROFILER_TRACK_ALLOCATIONS=1`. A call of a session
    /// that counts allocations costs a few ns more than one of a session
    /// that does not (the README's "Region counters" has the figures).
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().track_allocations(true);
    /// assert!(scope_profiler_core::internal::options::read::track_allocations(&o));
    /// ```
    pub fn track_allocations(mut self, on: bool) -> Self {
        self.track_allocations = on;
        self
    }

    /// Kernel and hardware events counted per region (Linux only), by the
    /// Python package's names: `cycles`, `instructions`,
    /// `cache-references`, `cache-misses`, `branches`, `branch-misses`,
    /// `cpu-clock`, `task-clock`, `page-faults`, `context-switches`. Each
    /// recording thread opens one counter group (`perf_event_open`, pid 0,
    /// cpu -1) at its first call of the session and reads it at every enter
    /// and exit: a `read` system call per boundary, hundreds of ns (1.9 µs
    /// in a VM measured here) a call.
    /// An event the kernel refuses (no PMU in a VM, `perf_event_paranoid`,
    /// an unknown name) makes `setup` an error naming it. TOML key
    /// `perf_events`.
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().perf_events(["task-clock", "page-faults"]);
    /// assert_eq!(scope_profiler_core::internal::options::read::perf_events(&o), ["task-clock", "page-faults"]);
    /// ```
    pub fn perf_events<S: Into<String>>(mut self, events: impl IntoIterator<Item = S>) -> Self {
        self.perf_events = events.into_iter().map(Into::into).collect();
        self
    }
}
