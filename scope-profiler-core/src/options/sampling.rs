//! Sampling inside regions: a timer per recording thread whose ticks are
//! given to the regions open at them.

#![forbid(unsafe_code)]

use super::Options;

impl Options {
    /// Samples every recording thread `hz` times per second of its CPU time
    /// (0: off, the default), as the Python package's C library does with
    /// `SCOPE_PROFILER_SAMPLE_HZ`: on Linux each thread that records in
    /// the session opens a `perf_event_open` software `cpu-clock` event
    /// (user space only: it works with `perf_event_paranoid` 2 and in a VM
    /// without a PMU), whose ring buffer a background thread drains; each
    /// sample keeps the thread, the time and the interrupted instruction's
    /// address. Nothing is added to a call: at `finalize` each sample is
    /// given to the innermost call open on its thread at its time, and the
    /// samples are written beside the file as `<stem>_rank<NNNNN>.sps`,
    /// which the Python package's `scope-profiler native-lines` reads.
    ///
    /// `setup` is an `Err` if the kernel refuses the event (naming the
    /// errno's meaning), and off Linux or in a build with `--cfg
    /// scope_profiler_portable`. A thread that cannot open its event later
    /// (a file descriptor limit) is named once on stderr and in the file's
    /// recording notes. TOML key `sample_hz`, variable
    /// `SCOPE_PROFILER_SAMPLE_HZ`.
    ///
    /// ```
    /// use scope_profiler::Options;
    /// let o = Options::new().sample_hz(1000);
    /// assert_eq!(scope_profiler_core::internal::options::read::sample_hz(&o), Some(1000));
    /// assert_eq!(scope_profiler_core::internal::options::read::sample_hz(&o.sample_hz(0)), None);
    /// ```
    pub fn sample_hz(mut self, hz: u32) -> Self {
        self.sample_hz = hz;
        self
    }
}
