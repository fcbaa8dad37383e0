//! # scope-profiler-tracing
//!
//! A [`tracing_subscriber::Layer`] that records every `tracing` span of a
//! program and of its dependencies (`#[tracing::instrument]`,
//! `tracing::info_span!`, ...) as a [scope-profiler](scope_profiler) region,
//! in the same HDF5 file as the program's own regions: the Python
//! `scope-profiler` tools, and `scope-prof`, open it as it is.
//!
//! ```
//! use scope_profiler::{self as sp, Options};
//! use tracing_subscriber::prelude::*;
//!
//! # let dir = std::env::temp_dir().join(format!("sp-tracing-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("app.h5");
//! let subscriber = tracing_subscriber::registry().with(scope_profiler_tracing::layer());
//! # // (A program calls `.init()` on it instead, once, in `main`.)
//! tracing::subscriber::with_default(subscriber, || {
//!     let run = sp::setup(Options::new().file_path(&path).verbose(false))?;
//!     #[tracing::instrument(target = "app::db")] // target: the module path by default
//!     fn query(id: u32) -> u32 {
//!         id * 2
//!     }
//!     for id in 0..3 {
//!         query(id);
//!     }
//!     run.finalize()?;
//!     let profile = sp::read_profile(&path)?;
//!     assert_eq!(profile.region_names, ["app::db::query"]); // target::name
//!     assert_eq!(profile.events.len(), 3);
//!     Ok::<(), sp::Error>(())
//! })?;
//! # Ok::<(), sp::Error>(())
//! ```
//!
//! Each enter/exit of a span is one call of the region `target::name`
//! (`myapp::db::query`; [`ScopeProfilerLayer::plain_names`] for `query`),
//! on the thread where it ran, nested exactly with the regions of
//! `#[profile]` and `sp::region` there. The region's source file and line are
//! the span's. With [`ScopeProfilerLayer::span_lifetime`], a span is instead
//! one call from its first enter to its close, on a task lane of its own (as
//! `#[profile]` async fns are recorded). Events are ignored unless
//! [`ScopeProfilerLayer::events_as_marks`] is on.
//!
//! Which spans become regions is decided by the subscriber's filters as
//! usual: a per-layer filter
//! (`scope_profiler_tracing::layer().with_filter(EnvFilter::new("myapp=debug"))`)
//! selects the spans of this layer only. With no profiling session active
//! the layer records nothing and costs one load per callback.
//!
//! With [`ScopeProfilerLayer::record_fields`], a span's fields (those given
//! at creation and those recorded later) go into the `event_metadata` of
//! each of its calls.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use scope_profiler::Value;
use scope_profiler::{self as sp, AsyncCall, Guard, Region};
use tracing_core::field::Field;
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The layer with the default settings: spans as calls named
/// `target::name` on the threads where they are entered, events ignored.
///
/// ```
/// use tracing_subscriber::prelude::*;
/// let subscriber = tracing_subscriber::registry().with(scope_profiler_tracing::layer());
/// # let _ = subscriber;
/// ```
pub fn layer() -> ScopeProfilerLayer {
    ScopeProfilerLayer::default()
}

/// A [`tracing_subscriber::Layer`] recording spans as scope-profiler
/// regions; made by [`layer`], configured with its builder methods.
///
/// ```
/// let layer = scope_profiler_tracing::layer()
///     .plain_names(true)
///     .events_as_marks(true);
/// // Its settings, for a log line:
/// assert!(format!("{layer:?}").contains("plain_names: true"));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ScopeProfilerLayer {
    plain_names: bool,
    span_lifetime: bool,
    events_as_marks: bool,
    record_fields: bool,
}

impl ScopeProfilerLayer {
    /// Names regions by the bare span name (`query`) instead of
    /// `target::name` (`myapp::db::query`). Spans of one name from several
    /// modules then share one region.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// use tracing_subscriber::prelude::*;
    /// let layer = scope_profiler_tracing::layer().plain_names(true);
    /// tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
    ///     let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    ///     tracing::info_span!("load").in_scope(|| ());
    ///     let results = run.finalize().unwrap();
    ///     assert_eq!(results.profile().unwrap().region_names, ["load"]);
    /// });
    /// ```
    pub fn plain_names(mut self, on: bool) -> Self {
        self.plain_names = on;
        self
    }

    /// Records each span as one call from its first enter to its close, on
    /// a task lane of its own (the file's `task_ids` and `/task_table`, with
    /// the number of enters as its polls), instead of one call per
    /// enter/exit on the thread where it ran. For spans that follow async
    /// work (`Instrument::instrument`) across polls and threads, when the
    /// whole life of the task is what matters.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// use tracing_subscriber::prelude::*;
    /// let layer = scope_profiler_tracing::layer().span_lifetime();
    /// tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
    ///     let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    ///     let span = tracing::info_span!("request");
    ///     span.in_scope(|| ()); // first poll
    ///     span.in_scope(|| ()); // second poll
    ///     drop(span); // closed: the call ends
    ///     let results = run.finalize().unwrap();
    ///     let profile = results.profile().unwrap();
    ///     assert_eq!(profile.events.len(), 1);
    ///     assert_eq!(profile.tasks[0].steps, 2);
    /// });
    /// ```
    pub fn span_lifetime(mut self) -> Self {
        self.span_lifetime = true;
        self
    }

    /// Records each event (`tracing::info!` ...) as a call of the region
    /// `target::event` (`event` with [`plain_names`](Self::plain_names))
    /// that starts and ends at once (two timestamps back to back), nested in
    /// the call open on its thread: a mark on the timeline. Off by default.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// use tracing_subscriber::prelude::*;
    /// let layer = scope_profiler_tracing::layer().events_as_marks(true);
    /// tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
    ///     let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    ///     tracing::info!(target: "app::io", "flushed");
    ///     let results = run.finalize().unwrap();
    ///     assert_eq!(results.profile().unwrap().region_names, ["app::io::event"]);
    /// });
    /// ```
    pub fn events_as_marks(mut self, on: bool) -> Self {
        self.events_as_marks = on;
        self
    }

    /// Puts each span's fields into the metadata of its calls (the file's
    /// `event_metadata`, shown per call by the Python reader): integers,
    /// floats, booleans and strings as themselves, anything else as its
    /// `Debug` text. Fields recorded after the span's creation
    /// (`span.record(..)`) apply to the calls that end after them. Off by
    /// default; on, each call costs the copy of its fields. Calls of
    /// [`span_lifetime`](Self::span_lifetime) spans do not get them.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options, Value};
    /// use tracing_subscriber::prelude::*;
    /// let layer = scope_profiler_tracing::layer().record_fields(true);
    /// tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
    ///     let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    ///     tracing::info_span!("query", table = "users", rows = 3).in_scope(|| ());
    ///     let results = run.finalize().unwrap();
    ///     let calls = &results.profile().unwrap().rows[0].event_metadata;
    ///     assert_eq!(calls[0][0], ("table".to_owned(), Value::from("users")));
    ///     assert_eq!(calls[0][1], ("rows".to_owned(), Value::Int(3)));
    /// });
    /// ```
    pub fn record_fields(mut self, on: bool) -> Self {
        self.record_fields = on;
        self
    }
}

/// Hashes a callsite key (a `Metadata` address): it is already unique.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Metadata is at least 8-aligned: mix the bits above the alignment.
        self.0 = (n as u64 >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// This thread's state: the regions resolved per callsite, and the calls of
/// the spans entered on this thread and not exited yet (innermost last).
struct ThreadState {
    /// Key: the callsite's `Metadata` address, its low bit set for plain names.
    regions: HashMap<usize, Region, BuildHasherDefault<AddressHasher>>,
    open: Vec<(Id, Guard)>,
}

thread_local! {
    static STATE: RefCell<ThreadState> = RefCell::new(ThreadState {
        regions: HashMap::default(),
        open: Vec::new(),
    });
}

impl ThreadState {
    /// The region of a callsite in the active session: cached, resolved
    /// once per session (per thread) by its name.
    #[inline]
    fn region(&mut self, meta: &'static Metadata<'static>, plain: bool) -> Region {
        let key = meta as *const Metadata<'static> as usize | usize::from(plain);
        match self.regions.get(&key) {
            Some(region) if region.is_current() => *region,
            _ => {
                let region = resolve(meta, plain);
                self.regions.insert(key, region);
                region
            }
        }
    }
}

/// The region named after a callsite, with its source location.
#[cold]
#[inline(never)]
fn resolve(meta: &'static Metadata<'static>, plain: bool) -> Region {
    let name = if meta.is_event() {
        "event"
    } else {
        meta.name()
    };
    let file = meta.file().unwrap_or("");
    let line = meta.line().unwrap_or(0);
    if plain {
        sp::Region::at(name, file, line)
    } else {
        sp::Region::at(&format!("{}::{name}", meta.target()), file, line)
    }
}

/// A span's fields, kept in its extensions when `record_fields` is on.
#[derive(Default)]
struct SpanFields(Vec<(String, Value)>);

impl tracing_core::field::Visit for SpanFields {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field, Value::from(value));
    }
    fn record_i128(&mut self, field: &Field, value: i128) {
        self.set(field, Value::from(value));
    }
    fn record_u128(&mut self, field: &Field, value: u128) {
        self.set(field, Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field, Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, Value::from(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, Value::from(format!("{value:?}")));
    }
}

impl SpanFields {
    /// Sets a field, keeping its first position when it is recorded again.
    fn set(&mut self, field: &Field, value: Value) {
        match self.0.iter_mut().find(|(k, _)| k == field.name()) {
            Some(slot) => slot.1 = value,
            None => self.0.push((field.name().to_owned(), value)),
        }
    }
}

/// The async call of a span recorded with `span_lifetime`, kept in the
/// span's extensions from its first enter to its close.
struct SpanCall(AsyncCall);

impl ScopeProfilerLayer {
    fn enter_lifetime<S>(&self, id: &Id, ctx: &Context<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        if let Some(call) = extensions.get_mut::<SpanCall>() {
            call.0.poll_begin();
            return;
        }
        let meta = span.metadata();
        let Some(region) = STATE
            .try_with(|state| {
                state
                    .try_borrow_mut()
                    .ok()
                    .map(|mut state| state.region(meta, self.plain_names))
            })
            .ok()
            .flatten()
        else {
            return;
        };
        let mut call = region.start_async();
        if call.is_recording() {
            call.poll_begin();
            extensions.insert(SpanCall(call));
        }
    }
}

impl<S> tracing_subscriber::Layer<S> for ScopeProfilerLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    #[inline]
    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if !sp::is_active() {
            return;
        }
        if self.span_lifetime {
            return self.enter_lifetime(id, &ctx);
        }
        let Some(meta) = ctx.metadata(id) else { return };
        let _ = STATE.try_with(|state| {
            let Ok(mut state) = state.try_borrow_mut() else {
                return;
            };
            let guard = state.region(meta, self.plain_names).enter();
            if guard.is_recording() {
                state.open.push((id.clone(), guard));
            }
        });
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !self.record_fields || attrs.fields().is_empty() {
            return;
        }
        if let Some(span) = ctx.span(id) {
            let mut fields = SpanFields::default();
            attrs.record(&mut fields);
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if !self.record_fields {
            return;
        }
        if let Some(span) = ctx.span(id) {
            let mut extensions = span.extensions_mut();
            match extensions.get_mut::<SpanFields>() {
                Some(fields) => values.record(fields),
                None => {
                    let mut fields = SpanFields::default();
                    values.record(&mut fields);
                    extensions.insert(fields);
                }
            }
        }
    }

    #[inline]
    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        if self.span_lifetime {
            if sp::is_active()
                && let Some(span) = ctx.span(id)
                && let Some(call) = span.extensions_mut().get_mut::<SpanCall>()
            {
                call.0.poll_end();
            }
            return;
        }
        let guard = STATE
            .try_with(|state| {
                let mut state = state.try_borrow_mut().ok()?;
                // The innermost call of this span (exits come innermost
                // first, except when guards are dropped out of order).
                let pos = state.open.iter().rposition(|(open, _)| open == id)?;
                let innermost = pos + 1 == state.open.len();
                Some((state.open.remove(pos).1, innermost))
            })
            .ok()
            .flatten();
        let Some((guard, innermost)) = guard else {
            return;
        };
        if self.record_fields && innermost {
            // The span's call is still open, the innermost on this thread.
            if let Some(span) = ctx.span(id)
                && let Some(fields) = span.extensions().get::<SpanFields>()
            {
                sp::Guard::annotate(fields.0.iter().map(|(k, v)| (k.as_str(), v.clone())));
            }
        }
        // Ends the call (and any call entered inside it and still open, at
        // the same instant), outside the borrow.
        drop(guard);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if !self.span_lifetime {
            return;
        }
        if let Some(span) = ctx.span(&id)
            && let Some(SpanCall(call)) = span.extensions_mut().remove::<SpanCall>()
        {
            call.finish();
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !self.events_as_marks || !sp::is_active() {
            return;
        }
        let meta = event.metadata();
        let _ = STATE.try_with(|state| {
            let Ok(mut state) = state.try_borrow_mut() else {
                return;
            };
            drop(state.region(meta, self.plain_names).enter());
        });
    }
}

/// The crate README's example (what crates.io shows), compiled as a doc
/// test so that it stays true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
