//! Which calls an export writes: the calls of some regions with their
//! subtrees, some lanes, a time window, and at most so many events.
//!
//! A [`Filter`] is what the caller asks (names, lane ids, times from the
//! session's start); [`Resolved`] is the same against one file (region
//! ids, absolute times), checked before anything is written: a region or
//! lane the file does not have is an error, never an empty output.

use std::fmt;
use std::str::FromStr;

use super::Lane;
use crate::error::Error;
use crate::profile_reader::ProfileReader;
use crate::value::Value;

/// A lane to keep, as `scope-prof inspect --threads` names it (parsed from
/// the text [`Filter::lane`] takes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LaneId {
    /// A thread lane by its index in the file's thread table (on every
    /// rank).
    Thread(i64),
    /// A task lane by its index in the file's task table.
    Task(i64),
    /// A thread lane by its name (on every rank).
    ThreadName(String),
}

impl FromStr for LaneId {
    type Err = String;

    /// The text [`Filter::lane`] takes.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("an empty lane".to_owned());
        }
        let split = |prefix: &str| {
            s.strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix([' ', ':']))
                .map(str::trim)
        };
        if let Some(rest) = split("task") {
            return rest
                .parse()
                .map(LaneId::Task)
                .map_err(|_| format!("{s:?}: a task lane is `task N`, N its index"));
        }
        let name = split("thread").unwrap_or(s);
        Ok(match name.parse() {
            Ok(n) => LaneId::Thread(n),
            Err(_) => LaneId::ThreadName(name.to_owned()),
        })
    }
}

impl fmt::Display for LaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaneId::Thread(n) => write!(f, "thread {n}"),
            LaneId::Task(n) => write!(f, "task {n}"),
            LaneId::ThreadName(name) => write!(f, "thread {name}"),
        }
    }
}

/// What an export writes (the default: everything). Filters combine: a
/// call is written when it passes every one given.
///
/// * `regions`: the calls of these regions and everything they call
///   (their whole subtrees, as recorded), without their callers; in the
///   tree exports (folded stacks, flame graph), such a call's path keeps
///   its callers' names.
/// * `lanes`: the calls of these lanes only.
/// * `from`/`to`: the calls that overlap the window, in ns after the
///   session's start (the file's `start_time_ns`, or its earliest call):
///   kept whole, not cut at the window's edges.
/// * `max_events`: at most this many calls (events) written, the first
///   in the order the export writes them (lane by lane, by start); the
///   export says how many it left out ([`Exported::left_out`]).
///
/// ```
/// use scope_profiler_reader::export::Filter;
/// let filter = Filter::new()
///     .region("solve")
///     .lane("thread 0")?
///     .window(Some(5_000_000), None)
///     .max_events(1000);
/// assert_eq!(filter.regions, ["solve"]);
/// assert!(!filter.is_empty());
/// assert!(Filter::new().is_empty());
/// # Ok::<(), scope_profiler::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Filter {
    /// Region names whose calls (with their subtrees) are kept.
    pub regions: Vec<String>,
    /// Lanes whose calls are kept ([`Filter::lane`]).
    lanes: Vec<LaneId>,
    /// Start of the window, ns after the session's start.
    pub from: Option<i64>,
    /// End of the window, ns after the session's start.
    pub to: Option<i64>,
    /// At most this many events (calls) are written.
    pub max_events: Option<u64>,
}

impl Filter {
    /// Everything: no filter.
    ///
    /// ```
    /// assert!(scope_profiler_reader::export::Filter::new().is_empty());
    /// ```
    pub fn new() -> Filter {
        Filter::default()
    }

    /// Keeps the calls of region `name` and their subtrees (repeatable).
    ///
    /// ```
    /// let f = scope_profiler_reader::export::Filter::new().region("a").region("b");
    /// assert_eq!(f.regions, ["a", "b"]);
    /// ```
    pub fn region(mut self, name: impl Into<String>) -> Filter {
        self.regions.push(name.into());
        self
    }

    /// Keeps the calls of `lane` (repeatable), named as
    /// `scope-prof inspect --threads` names it: `N` or `thread N` (a
    /// thread's index in the file's thread table, on every rank),
    /// `thread NAME` or `NAME` (a thread's name), `task N` (a task's
    /// index); `:` may stand for the space (`task:7`). An
    /// [`Error::Usage`] for an empty name or a task that is not `task N`;
    /// a lane the file does not have is an error of the export, naming the
    /// lanes it has.
    ///
    /// ```
    /// use scope_profiler_reader::export::Filter;
    /// assert!(!Filter::new().lane("task 2")?.is_empty());
    /// assert!(Filter::new().lane("worker-a").is_ok());
    /// assert!(Filter::new().lane("task x").is_err());
    /// assert!(Filter::new().lane(" ").is_err());
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn lane(mut self, lane: &str) -> Result<Filter, Error> {
        self.lanes.push(lane.parse().map_err(Error::Usage)?);
        Ok(self)
    }

    /// Keeps the calls that overlap `from..=to`, ns after the session's
    /// start (`None`: open on that side).
    ///
    /// ```
    /// let f = scope_profiler_reader::export::Filter::new().window(None, Some(10));
    /// assert_eq!((f.from, f.to), (None, Some(10)));
    /// ```
    pub fn window(mut self, from: Option<i64>, to: Option<i64>) -> Filter {
        (self.from, self.to) = (from, to);
        self
    }

    /// Writes at most `n` events (calls).
    ///
    /// ```
    /// assert_eq!(scope_profiler_reader::export::Filter::new().max_events(3).max_events, Some(3));
    /// ```
    pub fn max_events(mut self, n: u64) -> Filter {
        self.max_events = Some(n);
        self
    }

    /// Whether the filter keeps everything.
    ///
    /// ```
    /// assert!(!scope_profiler_reader::export::Filter::new().max_events(0).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
            && self.lanes.is_empty()
            && self.from.is_none()
            && self.to.is_none()
            && self.max_events.is_none()
    }
}

/// What a filtered export wrote.
///
/// ```
/// let e = scope_profiler_reader::export::Exported::default();
/// assert_eq!((e.events, e.left_out), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exported {
    /// Events (calls) written.
    pub events: u64,
    /// Events that passed the other filters but were left out by
    /// [`Filter::max_events`].
    pub left_out: u64,
}

/// A [`Filter`] against one file.
#[derive(Debug)]
pub(super) struct Resolved {
    /// Per region id, whether its calls start a kept subtree; `None`: all.
    regions: Option<Vec<bool>>,
    lanes: Vec<LaneId>,
    /// The window, absolute ns.
    from: i64,
    to: i64,
    pub max_events: u64,
}

impl Resolved {
    /// Checks `filter` against `reader`'s regions and finds the window's
    /// origin.
    pub fn new(reader: &ProfileReader, filter: &Filter) -> Result<Resolved, Error> {
        let regions = if filter.regions.is_empty() {
            None
        } else {
            let names = reader.region_names();
            let mut keep = vec![false; names.len()];
            for want in &filter.regions {
                let mut found = false;
                for (k, name) in keep.iter_mut().zip(names) {
                    if name == want {
                        (*k, found) = (true, true);
                    }
                }
                if !found {
                    return Err(Error::Usage(format!(
                        "no region named {want:?} in {}",
                        reader.path().display()
                    )));
                }
            }
            Some(keep)
        };
        let (mut from, mut to) = (i64::MIN, i64::MAX);
        if filter.from.is_some() || filter.to.is_some() {
            let start = session_start(reader)?;
            if let Some(f) = filter.from {
                from = start.saturating_add(f);
            }
            if let Some(t) = filter.to {
                to = start.saturating_add(t);
            }
            if from > to {
                return Err(Error::Usage(format!(
                    "an empty window: from {} ns after to {} ns",
                    filter.from.unwrap_or(0),
                    filter.to.unwrap_or(0)
                )));
            }
        }
        Ok(Resolved {
            regions,
            lanes: filter.lanes.clone(),
            from,
            to,
            max_events: filter.max_events.unwrap_or(u64::MAX),
        })
    }

    /// Whether `lane`'s calls are kept (`thread_name`: its thread's name).
    pub fn lane(&self, lane: &Lane, thread_name: Option<&str>) -> bool {
        self.lanes.is_empty() || self.lanes.iter().any(|id| matches(id, lane, thread_name))
    }

    /// An error naming the lane ids that match none of `lanes`, with the
    /// lanes the file has.
    pub fn unmatched(&self, reader: &ProfileReader, lanes: &[Lane]) -> Option<String> {
        let name = |l: &Lane| {
            let t = reader.threads().iter().find(|t| t.index == l.thread);
            t.map(|t| t.name.as_str())
        };
        let missing: Vec<String> = self
            .lanes
            .iter()
            .filter(|id| !lanes.iter().any(|l| matches(id, l, name(l))))
            .map(LaneId::to_string)
            .collect();
        if missing.is_empty() {
            return None;
        }
        let mut have: Vec<String> = lanes
            .iter()
            .map(|l| match l.task {
                t if t >= 0 => format!("task {t}"),
                _ => format!("thread {} ({})", l.thread, name(l).unwrap_or("?")),
            })
            .collect();
        have.sort();
        have.dedup();
        Some(format!(
            "no lane {} in {}; its lanes: {}",
            missing.join(", "),
            reader.path().display(),
            have.join(", ")
        ))
    }

    /// Whether a call of `region` starts a kept subtree.
    pub fn region(&self, region: u64) -> bool {
        match &self.regions {
            None => true,
            Some(keep) => keep.get(region as usize).copied().unwrap_or(false),
        }
    }

    /// Whether a call over `start..=end` overlaps the window.
    pub fn window(&self, start: i64, end: i64) -> bool {
        start <= self.to && end >= self.from
    }
}

/// Whether `id` names `lane`.
fn matches(id: &LaneId, lane: &Lane, thread_name: Option<&str>) -> bool {
    match id {
        LaneId::Thread(n) => lane.task < 0 && lane.thread == *n,
        LaneId::Task(n) => lane.task == *n,
        LaneId::ThreadName(name) => lane.task < 0 && thread_name == Some(name.as_str()),
    }
}

/// The session's start: the file's `start_time_ns`, or its earliest call.
fn session_start(reader: &ProfileReader) -> Result<i64, Error> {
    let meta = reader.metadata().iter().find(|(k, _)| k == "start_time_ns");
    match meta.map(|(_, v)| v) {
        Some(Value::Int(n)) => return Ok(*n),
        Some(Value::UInt(n)) => return Ok(i64::try_from(*n).unwrap_or(i64::MAX)),
        _ => {}
    }
    if reader.has_summaries() {
        return Ok(super::origin(reader));
    }
    let mut first = i64::MAX;
    for chunk in reader.chunks(super::CHUNK) {
        let chunk = chunk?;
        first = chunk.events.start_ns.iter().fold(first, |a, &b| a.min(b));
    }
    Ok(if first == i64::MAX { 0 } else { first })
}

#[cfg(test)]
mod tests {
    use super::LaneId;

    #[test]
    fn lanes_are_named_as_inspect_names_them() {
        assert_eq!("3".parse::<LaneId>(), Ok(LaneId::Thread(3)));
        assert_eq!("thread 3".parse::<LaneId>(), Ok(LaneId::Thread(3)));
        assert_eq!("task 7".parse::<LaneId>(), Ok(LaneId::Task(7)));
        assert_eq!("task:7".parse::<LaneId>(), Ok(LaneId::Task(7)));
        assert_eq!(
            "thread worker-a".parse::<LaneId>(),
            Ok(LaneId::ThreadName("worker-a".into()))
        );
        assert_eq!(
            "worker-a".parse::<LaneId>(),
            Ok(LaneId::ThreadName("worker-a".into()))
        );
        assert!("task x".parse::<LaneId>().is_err());
        assert!("".parse::<LaneId>().is_err());
        assert_eq!(LaneId::Task(7).to_string(), "task 7");
        assert_eq!(LaneId::ThreadName("w".into()).to_string(), "thread w");
    }
}
