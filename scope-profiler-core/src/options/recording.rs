//! What a session records: traced functions, the regions its tags
//! select, source texts, the session envelope, aggregation mode, or
//! nothing (deactivated).

#![forbid(unsafe_code)]

use super::Options;

impl Options {
    /// Make every traced function record, inside a recursive entrypoint or
    /// not. Also switched on by the environment variable
    /// `SCOPE_PROFILER_TRACE_ALL=1`.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().trace_all(true);
    /// # let _ = o;
    /// ```
    pub fn trace_all(mut self, on: bool) -> Self {
        self.trace_all = on;
        self
    }

    /// Enables opt-in tags (see [`register_opt_in_tag`](crate::register_opt_in_tag)):
    /// regions carrying one of them record in this session. `"*"` enables
    /// every opt-in tag. The tags listed in the environment variable
    /// `SCOPE_PROFILER_ENABLE_TAGS` (comma-separated, read by every `setup`)
    /// and those of [`Options::region_tags`] are enabled too, as in the
    /// Python package.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().enable_tags(["mylib"]);
    /// assert_eq!(scope_profiler_core::internal::options::read::enable_tags(&o), ["mylib"]);
    /// ```
    pub fn enable_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.enable_tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Records only regions carrying at least one of `tags` (the Python
    /// package's `region_tags`); every other region costs what a region of
    /// an opt-in tag that is off costs. Listing an opt-in tag here enables it.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().region_tags(["io"]);
    /// assert_eq!(scope_profiler_core::internal::options::read::region_tags(&o), Some(&["io".to_owned()][..]));
    /// ```
    pub fn region_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.region_tags = Some(tags.into_iter().map(Into::into).collect());
        self
    }

    /// Writes each region's source text (captured at compile time by
    /// `#[profile]` and `#[profile_all]`) into the file's `source_texts`
    /// column, where `scope-profiler inspect --source NAME` prints it.
    /// Off by default, as in the Python package. The texts are compiled in
    /// only with the crate feature `capture-source`; without it, `setup`
    /// with this on is an [`Error::InvalidOption`](crate::Error::InvalidOption)
    /// naming the feature.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().capture_region_source(true);
    /// assert!(scope_profiler_core::internal::options::read::capture_region_source(&o));
    /// ```
    pub fn capture_region_source(mut self, on: bool) -> Self {
        self.capture_region_source = on;
        self
    }

    /// Records the envelope region `scope_profiler.session` from `setup` to
    /// `finalize` on the thread that calls `setup`, as
    /// `session` always does (the Python name; `inspect`
    /// fills its "% session" column from it). Off by default for
    /// `setup`/`finalize`, as in Python.
    ///
    /// ```
    /// let o = scope_profiler::Options::new().session_region(true);
    /// assert!(scope_profiler_core::internal::options::read::session_region(&o));
    /// ```
    pub fn session_region(mut self, on: bool) -> Self {
        self.session_region = on;
        self
    }

    /// Aggregation mode (the Python package's `aggregation_mode`): each
    /// thread keeps, per region, only the count, total, minimum, maximum
    /// and exclusive time of its calls, no per-call records, so memory does
    /// not grow with the number of calls. The file is the Python package's
    /// aggregate layout (`storage_layout = "aggregate"`), one row per region
    /// (threads summed). Instrumented futures are not recorded as calls of
    /// their own in this mode (what they call is), and call metadata
    /// ([`call_metadata`](crate::callmeta::call_metadata), `record_outcome`) is not kept.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// sp::setup(Options::new().in_memory().verbose(false).aggregation(true))?;
    /// for _ in 0..1000 {
    ///     sp::region("hot").run(|| sp::region("inner").run(|| ()));
    /// }
    /// let results = sp::finalize()?;
    /// let hot = results.statistics_of("hot").unwrap();
    /// assert_eq!(hot.num_calls(), 1000);
    /// assert!(hot.exclusive() <= hot.total());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn aggregation(mut self, on: bool) -> Self {
        self.aggregation = on;
        self
    }

    /// Turns profiling off for this session (the Python package's
    /// `deactivate_profiling`): `setup` succeeds, nothing is recorded, no
    /// file is written, and `finalize` returns `Ok` with empty results.
    /// Every instrumented call then costs what a call with no session costs
    /// (the hot path sees no active session), so the instrumentation can
    /// stay in the code. `is_active` is `false` during
    /// such a session; `Run::is_active` is `true`
    /// until it is finalized, and a second `setup` meanwhile is
    /// [`Error::AlreadyConfigured`](crate::Error::AlreadyConfigured).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// let dir = std::env::temp_dir().join(format!("sp-doc-deact-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let run = sp::setup(Options::new().file_path(dir.join("off.h5")).deactivate(true))?;
    /// sp::region("work").run(|| ());
    /// assert!(!sp::is_active() && run.is_active());
    /// let results = run.finalize()?;
    /// assert!(results.profile().unwrap().events.is_empty());
    /// assert!(!dir.join("off.h5").exists());
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn deactivate(mut self, off: bool) -> Self {
        self.deactivate = off;
        self
    }
}
