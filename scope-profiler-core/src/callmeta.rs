//! Per-call metadata and outcomes: [`call_metadata`](crate::callmeta::call_metadata) scopes and
//! the outcome of `#[profile(record_outcome)]` functions. Each is kept beside
//! the thread's records (a `MetaEntry` of its lane; an async call's outcome
//! a `KeyedEntry` of the session, its record moving between recorders) and
//! matched to its calls when the file is assembled (`callmatch`); calls that
//! use neither cost nothing more.

use std::marker::PhantomData;
use std::sync::{Arc, LazyLock};

use crate::active;
use crate::clock::ticks;
use crate::lane::MetaScope;
use crate::thread::{self, Guard};
use crate::value::{CallMetadata, Value};

/// Attaches `values` to every call that starts and ends inside the returned
/// scope, on this thread (the file's `event_metadata`, shown per call by
/// the Python reader). Scopes nest: an inner scope's values add to the outer
/// one's, and win for a key both set.
///
/// Costs two timestamps and one allocation per scope, and nothing per call
/// inside it; nothing at all when no session records. Calls of instrumented
/// futures (async tasks) are not reached by a scope.
///
/// ```
/// use scope_profiler::{self as sp, Options, Value};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// for step in 0..3 {
///     let _m = sp::call_metadata([("timestep", Value::from(step)), ("phase", Value::from("predictor"))]);
///     sp::region("advance").run(|| ());
/// }
/// sp::region("advance").run(|| ()); // outside any scope: {}
/// let results = sp::finalize()?;
/// let row = &results.profile().unwrap().rows[0];
/// assert_eq!(row.event_metadata.len(), 4);
/// assert_eq!(row.event_metadata[1][0], ("timestep".to_owned(), Value::Int(1)));
/// assert!(row.event_metadata[3].is_empty());
/// # Ok::<(), sp::Error>(())
/// ```
pub fn call_metadata<I, K, V>(values: I) -> CallMetadataScope
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<Value>,
{
    CallMetadataScope {
        open: recording(values).map(|(generation, values)| (generation, ticks(), values)),
        _not_send: PhantomData,
    }
}

impl Guard {
    /// Attaches `values` to the call open innermost on this thread (the
    /// call of the function this runs in, under `#[profile]`, whose guard
    /// the expansion holds), as the Python package's `profile(metadata=...)`
    /// does for a decorated function's call: metadata computed from the
    /// call's own arguments or results. `false` if nothing was attached: no
    /// session records, no call is open here, or an instrumented future is
    /// being polled (its calls are not reached yet). Several annotations of
    /// one call add up, the later winning a key both set.
    ///
    /// An associated function, not a method: the call it annotates is the
    /// innermost open one, which a `#[profile]` function cannot name.
    ///
    /// ```
    /// use scope_profiler::{self as sp, profile, Guard, Options, Value};
    ///
    /// #[profile]
    /// fn solve(n: u32) -> u32 {
    ///     Guard::annotate([("n", n)]);
    ///     n * 2
    /// }
    ///
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// solve(7);
    /// assert!(!Guard::annotate([("outside", 1)])); // no call is open
    /// let results = sp::finalize()?;
    /// let calls = &results.profile().unwrap().rows[0].event_metadata;
    /// assert_eq!(calls[0], [("n".to_owned(), Value::Int(7))]);
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn annotate<I, K, V>(values: I) -> bool
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<Value>,
    {
        let Some((generation, values)) = recording(values) else {
            return false;
        };
        let at = ticks();
        thread::add_metadata(
            generation,
            |innermost| innermost.map(|depth| MetaScope::Call { depth, at }),
            values,
        )
    }
}

/// The session recording now and `values` collected, if one is (the
/// values are not even looked at otherwise).
fn recording<I, K, V>(values: I) -> Option<(u32, Arc<CallMetadata>)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<Value>,
{
    let generation = active::recording_generation();
    if !cfg!(feature = "enabled") || generation == 0 {
        return None;
    }
    let values = values
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    Some((generation, Arc::new(values)))
}

/// The scope of [`call_metadata`]: the values apply to calls that complete
/// before it is dropped (on the thread that made it).
///
/// ```
/// let scope = scope_profiler::call_metadata([("k", 1)]);
/// assert!(!scope.is_recording()); // no session
/// ```
#[derive(Debug)]
#[must_use = "the metadata applies to calls made while the scope lives"]
pub struct CallMetadataScope {
    open: Option<(u32, u64, Arc<CallMetadata>)>,
    _not_send: PhantomData<*const ()>,
}

impl CallMetadataScope {
    /// Whether the values will be attached to calls (a session records).
    pub fn is_recording(&self) -> bool {
        self.open.is_some()
    }
}

impl Drop for CallMetadataScope {
    fn drop(&mut self) {
        if let Some((generation, start, values)) = self.open.take() {
            let end = ticks();
            thread::add_metadata(
                generation,
                |_| Some(MetaScope::Interval { start, end }),
                values,
            );
        }
    }
}

/// How a `#[profile(record_outcome)]` call ended: `status` "ok", "error"
/// (with `exception`: the error type's name) or "panic".
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    status: &'static str,
    exception: Option<&'static str>,
}

impl Status {
    const OK: Status = Status {
        status: "ok",
        exception: None,
    };
}

/// The outcome of one call of a `record_outcome` function; see the
/// attribute. Not a public API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Outcome {
    /// The session, 0 when the call is not recorded (or already finished).
    generation: u32,
    _not_send: PhantomData<*const ()>,
}

impl Outcome {
    /// For the call just entered, if it records.
    #[inline]
    pub fn begin(recording: bool) -> Outcome {
        let generation = if recording {
            active::active_generation()
        } else {
            0
        };
        Outcome {
            generation,
            _not_send: PhantomData,
        }
    }

    /// The call returned: its status, by the returned value's type (see
    /// [`OutcomeProbe`]).
    #[inline]
    pub fn finish(mut self, status: Status) {
        let generation = std::mem::take(&mut self.generation);
        if generation != 0 {
            record(generation, status);
        }
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        if self.generation != 0 && std::thread::panicking() {
            record(self.generation, PANIC);
        }
    }
}

/// The metadata of an "ok" call, shared by every such call.
static OK_VALUES: LazyLock<Arc<CallMetadata>> =
    LazyLock::new(|| Arc::new(vec![("status".to_owned(), Value::from("ok"))]));

/// The metadata of a call that ended with `status`.
fn status_values(status: Status) -> Arc<CallMetadata> {
    if status == Status::OK {
        Arc::clone(&OK_VALUES)
    } else {
        let mut values = vec![("status".to_owned(), Value::from(status.status))];
        if let Some(exception) = status.exception {
            values.push(("exception".to_owned(), Value::from(exception)));
        }
        Arc::new(values)
    }
}

#[cold]
#[inline(never)]
fn record(generation: u32, status: Status) {
    let values = status_values(status);
    let at = ticks();
    thread::add_metadata(
        generation,
        |innermost| innermost.map(|depth| MetaScope::Call { depth, at }),
        values,
    );
}

/// Records `status` as the outcome of an instrumented future's own call,
/// `seq` (open on the recorder being polled).
#[cold]
#[inline(never)]
pub(crate) fn record_future_outcome(seq: u64, status: Status) {
    thread::add_keyed_metadata(seq, status_values(status));
}

/// A call panicked: its status.
pub(crate) const PANIC: Status = Status {
    status: "panic",
    exception: None,
};

/// How an instrumented future classifies its output, if it records its
/// outcome: see `CallSite::instrument_outcome`.
#[doc(hidden)]
pub trait OutcomeOf<T> {
    /// Whether the outcome is recorded: `false` costs nothing per poll.
    const RECORDS: bool;
    /// The status of a call that returned `value`.
    fn status(&self, value: &T) -> Status;
}

/// The future of a function without `record_outcome`: no outcome.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NoOutcome;

impl<T> OutcomeOf<T> for NoOutcome {
    const RECORDS: bool = false;

    #[inline(always)]
    fn status(&self, _: &T) -> Status {
        Status::OK
    }
}

/// The future of a `record_outcome` function: its output's status, by
/// the classifier the expansion made (an [`OutcomeProbe`] of the output).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Classify<C>(pub C);

impl<T, C: Fn(&T) -> Status> OutcomeOf<T> for Classify<C> {
    const RECORDS: bool = true;

    #[inline]
    fn status(&self, value: &T) -> Status {
        (self.0)(value)
    }
}

/// The status of a value whose declared type says nothing of it (`-> impl
/// Trait`; `-> !`, whose value never comes): ok, as any value that is not a
/// `Result`.
#[doc(hidden)]
#[inline]
pub fn opaque_outcome<T: ?Sized>(_: &T) -> Status {
    Status::OK
}

/// Classifies a returned value: `Result::Err` is an error, anything else
/// ok. The expansion calls `(&&OutcomeProbe(&value)).outcome()`, which
/// picks [`OutcomeOfResult`] for a `Result` and [`OutcomeOfAny`] for
/// everything else (method resolution tries `&&OutcomeProbe` first).
#[doc(hidden)]
pub struct OutcomeProbe<'a, T>(pub &'a T);

#[doc(hidden)]
pub trait OutcomeOfResult {
    fn outcome(&self) -> Status;
}

impl<T, E> OutcomeOfResult for &OutcomeProbe<'_, Result<T, E>> {
    #[inline]
    fn outcome(&self) -> Status {
        match self.0 {
            Ok(_) => Status::OK,
            Err(_) => Status {
                status: "error",
                exception: Some(std::any::type_name::<E>()),
            },
        }
    }
}

#[doc(hidden)]
pub trait OutcomeOfAny {
    fn outcome(&self) -> Status;
}

impl<T> OutcomeOfAny for OutcomeProbe<'_, T> {
    #[inline]
    fn outcome(&self) -> Status {
        Status::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::needless_borrow)] // the expansion's form, as written there
    fn the_probe_tells_results_from_other_values() {
        let ok: Result<u8, std::io::Error> = Ok(1);
        let err: Result<u8, std::fmt::Error> = Err(std::fmt::Error);
        assert_eq!((&&OutcomeProbe(&ok)).outcome(), Status::OK);
        let status = (&&OutcomeProbe(&err)).outcome();
        assert_eq!(status.status, "error");
        assert_eq!(status.exception, Some("core::fmt::Error"));
        assert_eq!((&&OutcomeProbe(&5)).outcome(), Status::OK);
        assert_eq!((&&OutcomeProbe(&())).outcome(), Status::OK);
    }
}
