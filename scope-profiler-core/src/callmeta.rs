//! Per-call metadata and outcomes: [`call_metadata`](crate::callmeta::call_metadata) scopes and
//! the outcome of `#[profile(record_outcome)]` functions. Each is kept beside
//! the thread's records (a `MetaEntry` of its lane; an async call's outcome,
//! or a call's on a task's recorder, a `KeyedEntry` of the session, its
//! record moving between recorders) and matched to its calls when the file
//! is assembled (`callmatch`); calls that use neither cost nothing more. An
//! ok outcome, the common one, is no entry but a flag of the call's record
//! (`Record::ok`), set as its guard ends it: no more than a plain call.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::active;
use crate::clock::ticks;
use crate::lanemeta::{MetaScope, encode, ok_outcome};
use crate::thread::{self, Guard};
use crate::value::{CallMetadata, Value};

/// Attaches `values` to every call that starts and ends inside the returned
/// scope, on this thread (the file's `event_metadata`, shown per call by
/// the Python reader). Scopes nest: an inner scope's values add to the outer
/// one's, and win for a key both set.
///
/// Costs nothing per call inside it, and nothing at all when no session
/// records. A scope of one key with an integer, float or bool value (the
/// common `[("step", i)]`) costs two timestamps and a store: a row of the
/// thread's own block, no lock and no allocation (the key is interned once,
/// up to 4096 keys of at most 256 bytes). Any other scope costs its
/// values' allocation and a lock. Calls of instrumented futures (async
/// tasks) are not reached by a scope.
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
    K: AsRef<str>,
    V: Into<Value>,
{
    let Some(generation) = recording() else {
        return CallMetadataScope {
            open: None,
            _not_send: PhantomData,
        };
    };
    let mut values = values.into_iter();
    let open = match (values.next(), values.next()) {
        (Some((key, value)), None) => {
            let value = value.into();
            match (encode(&value), thread::meta_key(key.as_ref())) {
                (Some((kind, bits)), Some(key)) => Open::Row {
                    generation,
                    start: ticks(),
                    key_kind: u64::from(key) << 8 | u64::from(kind),
                    bits,
                },
                _ => Open::Entry {
                    generation,
                    start: ticks(),
                    values: Arc::new(vec![(key.as_ref().to_owned(), value)]),
                },
            }
        }
        (first, second) => {
            let values = collect(first.into_iter().chain(second).chain(values));
            Open::Entry {
                generation,
                values,
                start: ticks(),
            }
        }
    };
    CallMetadataScope {
        open: Some(open),
        _not_send: PhantomData,
    }
}

/// A [`CallMetadataScope`] in progress: its start and values.
#[derive(Debug)]
enum Open {
    /// One key and a fixed-width value: a row of the thread's block
    /// (`lanemeta::MetaBlock`) when the scope ends.
    Row {
        generation: u32,
        start: u64,
        key_kind: u64,
        bits: u64,
    },
    /// Anything else: an entry of the thread's lane.
    Entry {
        generation: u32,
        start: u64,
        values: Arc<CallMetadata>,
    },
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
        K: AsRef<str>,
        V: Into<Value>,
    {
        let Some(generation) = recording() else {
            return false;
        };
        let values = collect(values);
        let at = ticks();
        thread::add_metadata(
            generation,
            |innermost| innermost.map(|depth| MetaScope::Call { depth, at }),
            values,
        )
    }
}

/// The session recording now, if one is (and the feature `enabled` is
/// on): until then the values are not even looked at.
#[inline(always)]
fn recording() -> Option<u32> {
    let generation = active::recording_generation();
    (cfg!(feature = "enabled") && generation != 0).then_some(generation)
}

/// `values` as one call's metadata.
fn collect<I, K, V>(values: I) -> Arc<CallMetadata>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: Into<Value>,
{
    Arc::new(
        values
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_owned(), v.into()))
            .collect(),
    )
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
    open: Option<Open>,
    _not_send: PhantomData<*const ()>,
}

impl CallMetadataScope {
    /// Whether the values will be attached to calls (a session records).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// assert!(!sp::call_metadata([("step", 1)]).is_recording()); // no session
    /// sp::setup(Options::new().in_memory().verbose(false))?;
    /// assert!(sp::call_metadata([("step", 1)]).is_recording());
    /// sp::finalize()?;
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn is_recording(&self) -> bool {
        self.open.is_some()
    }
}

impl Drop for CallMetadataScope {
    fn drop(&mut self) {
        match self.open.take() {
            Some(Open::Row {
                generation,
                start,
                key_kind,
                bits,
            }) => {
                thread::end_meta_row(generation, start, key_kind, bits);
            }
            Some(Open::Entry {
                generation,
                start,
                values,
            }) => {
                let end = ticks();
                thread::scope_ended(end);
                thread::add_metadata(
                    generation,
                    |_| Some(MetaScope::Interval { start, end }),
                    values,
                );
            }
            None => {}
        }
    }
}

/// How a `#[profile(record_outcome)]` call ended: `status` "ok", "error"
/// (with `exception`: the error type's name) or "panic".
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status(Ended);

/// The ways a call ends, told apart without comparing strings (a call's
/// `Ok` is decided where the value is classified, at no cost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    Ok,
    /// A `Result::Err`: the error type's name.
    Error(&'static str),
    Panic,
}

impl Status {
    const OK: Status = Status(Ended::Ok);

    /// Whether the call returned ok.
    #[inline(always)]
    fn is_ok(self) -> bool {
        matches!(self.0, Ended::Ok)
    }
}

/// A `record_outcome` call's guard, which [`Outcome::finish`] ends: an ok
/// call by [`Guard::end_ok`] (the outcome in its record), any other as a
/// drop. Not a public API.
#[doc(hidden)]
pub trait OutcomeGuard {
    /// The number of its call on its thread (0: not recording).
    fn call_seq(&self) -> u64;
    /// Ends the call, which returned ok.
    fn end_ok(self);
}

impl OutcomeGuard for Guard {
    #[inline(always)]
    fn call_seq(&self) -> u64 {
        self.seq()
    }

    #[inline(always)]
    fn end_ok(self) {
        Guard::end_ok(self)
    }
}

/// The outcome of one call of a `record_outcome` function; see the
/// attribute. Not a public API.
///
/// An ok call costs what a plain call does: the outcome is a flag of its
/// record, set as the guard ends it. An error or a panic (rare) is added
/// as the call's metadata while it is open.
#[doc(hidden)]
#[derive(Debug)]
pub struct Outcome {
    /// The call's number on its thread, 0 when it is not recorded (or
    /// already finished).
    seq: u64,
    _not_send: PhantomData<*const ()>,
}

impl Outcome {
    /// For the call `guard` just entered.
    #[inline(always)]
    pub fn begin(guard: &impl OutcomeGuard) -> Outcome {
        Outcome {
            seq: guard.call_seq(),
            _not_send: PhantomData,
        }
    }

    /// The call returned: its status, by the returned value's type (see
    /// [`OutcomeProbe`]), then `guard` ends it.
    #[inline(always)]
    pub fn finish<G: OutcomeGuard>(mut self, status: Status, guard: G) {
        let seq = std::mem::take(&mut self.seq);
        if status.is_ok() {
            guard.end_ok();
        } else {
            if seq != 0 {
                record(seq, status);
            }
            drop(guard);
        }
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        if self.seq != 0 && std::thread::panicking() {
            record(self.seq, PANIC);
        }
    }
}

/// The metadata of a call that ended with `status`.
fn status_values(status: Status) -> Arc<CallMetadata> {
    let (word, exception) = match status.0 {
        Ended::Ok => return ok_outcome(),
        Ended::Error(exception) => ("error", Some(exception)),
        Ended::Panic => ("panic", None),
    };
    let mut values = vec![("status".to_owned(), Value::from(word))];
    if let Some(exception) = exception {
        values.push(("exception".to_owned(), Value::from(exception)));
    }
    Arc::new(values)
}

/// Adds `status` as the metadata of call `seq`, open on this thread's
/// recorder (see `thread::add_call_metadata`).
#[cold]
#[inline(never)]
fn record(seq: u64, status: Status) {
    thread::add_call_metadata(seq, ticks(), status_values(status));
}

/// Records `status` as the outcome of an instrumented future's own call,
/// `seq` (open on the recorder being polled).
#[cold]
#[inline(never)]
pub(crate) fn record_future_outcome(seq: u64, status: Status) {
    thread::add_keyed_metadata(seq, status_values(status));
}

/// A call panicked: its status.
pub(crate) const PANIC: Status = Status(Ended::Panic);

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
            Err(_) => Status(Ended::Error(std::any::type_name::<E>())),
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
    use crate::thread::test_support::recorded_with_metadata;

    #[test]
    #[allow(clippy::needless_borrow)] // the expansion's form, as written there
    fn the_probe_tells_results_from_other_values() {
        let ok: Result<u8, std::io::Error> = Ok(1);
        let err: Result<u8, std::fmt::Error> = Err(std::fmt::Error);
        assert_eq!((&&OutcomeProbe(&ok)).outcome(), Status::OK);
        let status = (&&OutcomeProbe(&err)).outcome();
        assert_eq!(status, Status(Ended::Error("core::fmt::Error")));
        assert_eq!((&&OutcomeProbe(&5)).outcome(), Status::OK);
        assert_eq!((&&OutcomeProbe(&())).outcome(), Status::OK);
    }

    #[test]
    fn a_one_value_metadata_scope_is_a_row_of_the_threads_block() {
        let (records, entries, rows) = recorded_with_metadata(|g| {
            for i in 0..5_000u32 {
                // More than a block: the second is made on the slow path.
                let _m = call_metadata([("guard-tests-step", i)]);
                drop(thread::enter(0, g));
            }
            let _text = call_metadata([("guard-tests-text", "a")]);
            let _two = call_metadata([("a", 1), ("b", 2)]);
            drop(thread::enter(1, g));
        });
        assert_eq!(records.len(), 5_001);
        assert_eq!(rows, 5_000, "every one-value scope a row");
        assert_eq!(entries.len(), 2, "the others entries: {entries:?}");
    }
}
