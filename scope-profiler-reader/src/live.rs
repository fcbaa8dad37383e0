//! The live server's snapshot (`GET /snapshot` of a session started with
//! `Options::live`): what it holds, written as JSON by the server and read
//! back by `scope-prof live`.
//!
//! The document is versioned (`"version": 1`). A reader takes what it knows
//! and skips the rest, so a newer `scope-prof` reads an older program's
//! snapshot and the other way round; a key a version adds is optional to
//! the readers of that version.

use std::borrow::Cow;

use crate::error::Error;
use crate::json::{self, Parser};

/// The version of the snapshot this crate writes.
///
/// ```
/// assert_eq!(scope_profiler_reader::live::VERSION, 1);
/// ```
pub const VERSION: i64 = 1;

/// A running session as the live server saw it at one instant.
///
/// ```
/// use scope_profiler_reader::live::{Snapshot, SnapshotRegion};
/// let mut s = Snapshot::default();
/// s.elapsed_ns = 2_000_000_000;
/// s.regions.push(SnapshotRegion { name: "solve".into(), calls: 3, total_ns: 900, own_ns: 600, max_ns: 400, dropped: 0 });
/// let back = Snapshot::parse(&s.to_json()).unwrap();
/// assert_eq!(back, s);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The document's version ([`VERSION`] when this crate wrote it).
    pub version: i64,
    /// Nanoseconds since the session started.
    pub elapsed_ns: i64,
    /// Whether recording is paused.
    pub paused: bool,
    /// The session's label (the output file's stem by default).
    pub label: String,
    /// Every region with calls, over every call finished so far.
    pub regions: Vec<SnapshotRegion>,
    /// The session's recording threads and tasks lanes.
    pub threads: Vec<SnapshotThread>,
    /// The instrumented futures in flight (polled, not finished), by
    /// thread and number.
    pub tasks: Vec<SnapshotTask>,
}

/// One region's calls finished so far.
///
/// ```
/// let r = scope_profiler_reader::live::SnapshotRegion { name: "io".into(), calls: 1, total_ns: 5, own_ns: 5, max_ns: 5, dropped: 0 };
/// assert_eq!(r.calls, 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotRegion {
    /// The region's name.
    pub name: String,
    /// Calls finished (and kept).
    pub calls: u64,
    /// Their summed durations, ns.
    pub total_ns: i64,
    /// Their summed durations minus their direct callees', ns.
    pub own_ns: i64,
    /// The longest call, ns.
    pub max_ns: i64,
    /// Calls finished but not kept (the memory limit, spilling stopped).
    pub dropped: u64,
}

/// One recording thread (or the tasks a thread completed) of the session.
///
/// ```
/// use scope_profiler_reader::live::{SnapshotCall, SnapshotThread};
/// let open = vec![SnapshotCall { name: "main".into(), open_ns: 2_000_000, depth: 0 }];
/// let t = SnapshotThread { index: 0, name: "main".into(), tasks: false, calls: 10, open };
/// assert!(!t.tasks && t.open[0].name == "main");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotThread {
    /// The thread's index in the session (the file's thread index).
    pub index: u32,
    /// The thread's name (empty for a tasks lane).
    pub name: String,
    /// Whether these are the async calls (tasks) the thread completed.
    pub tasks: bool,
    /// Calls finished so far.
    pub calls: u64,
    /// A thread's calls open now, outermost first (empty for a tasks lane,
    /// in aggregation mode, and in a snapshot from before this key).
    pub open: Vec<SnapshotCall>,
}

/// An instrumented future in flight (a task of its own) when the snapshot
/// was taken.
///
/// ```
/// use scope_profiler_reader::live::{SnapshotCall, SnapshotTask};
/// let open = vec![SnapshotCall { name: "request".into(), open_ns: 40_000_000, depth: 0 }];
/// let t = SnapshotTask { thread: 0, index: 7, polled: false, open };
/// assert_eq!(t.open[0].name, "request");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotTask {
    /// The lane index of the thread that first polled it.
    pub thread: u32,
    /// Its number in the session (the file's task index).
    pub index: u32,
    /// Being polled now: then only its own call is listed.
    pub polled: bool,
    /// Its open calls, its own first, with those of the instrumented
    /// futures it awaits (its frames) under the calls they were first
    /// polled in (see [`SnapshotCall::depth`]).
    pub open: Vec<SnapshotCall>,
}

/// A call open on a thread when the snapshot was taken.
///
/// ```
/// let c = scope_profiler_reader::live::SnapshotCall { name: "solve".into(), open_ns: 1_500, depth: 0 };
/// assert_eq!(c.open_ns, 1_500);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotCall {
    /// The region's name.
    pub name: String,
    /// How long it has been open, in nanoseconds.
    pub open_ns: i64,
    /// How many calls of its list it is nested in: it is nested in the
    /// closest call before it one level up. A thread's calls are a path
    /// (0, 1, 2, ...); a task's list its frames too, and futures it awaits
    /// side by side (`join!`) are at one level. A document without it (an
    /// older program's) gives each call its place in the list.
    pub depth: u32,
}

impl Default for Snapshot {
    /// An empty snapshot of the current version.
    ///
    /// ```
    /// let s = scope_profiler_reader::live::Snapshot::default();
    /// assert_eq!(s.version, scope_profiler_reader::live::VERSION);
    /// ```
    fn default() -> Snapshot {
        Snapshot {
            version: VERSION,
            elapsed_ns: 0,
            paused: false,
            label: String::new(),
            regions: Vec::new(),
            threads: Vec::new(),
            tasks: Vec::new(),
        }
    }
}

impl Snapshot {
    /// An empty snapshot of the current version.
    ///
    /// ```
    /// let s = scope_profiler_reader::live::Snapshot::new();
    /// assert_eq!(s.version, scope_profiler_reader::live::VERSION);
    /// ```
    pub fn new() -> Snapshot {
        Snapshot::default()
    }

    /// The snapshot as one JSON object (UTF-8, no newline).
    ///
    /// ```
    /// let json = scope_profiler_reader::live::Snapshot::new().to_json();
    /// assert!(json.starts_with("{\"version\":1,"));
    /// ```
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(128 + 96 * self.regions.len());
        out.extend_from_slice(b"{\"version\":");
        json::push_int(&mut out, self.version);
        out.extend_from_slice(b",\"elapsed_ns\":");
        json::push_int(&mut out, self.elapsed_ns);
        out.extend_from_slice(if self.paused {
            b",\"paused\":true"
        } else {
            b",\"paused\":false"
        });
        out.extend_from_slice(b",\"label\":");
        json::push_string(&mut out, &self.label);
        out.extend_from_slice(b",\"regions\":[");
        for (i, r) in self.regions.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"name\":");
            json::push_string(&mut out, &r.name);
            for (key, v) in [
                ("calls", clamp(r.calls)),
                ("total_ns", r.total_ns),
                ("own_ns", r.own_ns),
                ("max_ns", r.max_ns),
                ("dropped", clamp(r.dropped)),
            ] {
                out.extend_from_slice(b",\"");
                out.extend_from_slice(key.as_bytes());
                out.extend_from_slice(b"\":");
                json::push_int(&mut out, v);
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"threads\":[");
        for (i, t) in self.threads.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"index\":");
            json::push_int(&mut out, i64::from(t.index));
            out.extend_from_slice(b",\"name\":");
            json::push_string(&mut out, &t.name);
            out.extend_from_slice(if t.tasks {
                b",\"tasks\":true"
            } else {
                b",\"tasks\":false"
            });
            out.extend_from_slice(b",\"calls\":");
            json::push_int(&mut out, clamp(t.calls));
            push_open(&mut out, &t.open);
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"tasks\":[");
        for (i, t) in self.tasks.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"thread\":");
            json::push_int(&mut out, i64::from(t.thread));
            out.extend_from_slice(b",\"index\":");
            json::push_int(&mut out, i64::from(t.index));
            out.extend_from_slice(if t.polled {
                b",\"polled\":true"
            } else {
                b",\"polled\":false"
            });
            push_open(&mut out, &t.open);
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
        // Only `push_string`'s UTF-8 and ASCII went in.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Reads a snapshot document: the keys this version knows, others
    /// skipped; a missing key keeps its default.
    ///
    /// # Errors
    /// [`Error::Json`] for malformed JSON, a wrong type, or a version before
    /// 1.
    ///
    /// ```
    /// use scope_profiler_reader::live::Snapshot;
    /// let s = Snapshot::parse(r#"{"version":1,"elapsed_ns":5,"paused":true,"future_key":[1,2]}"#).unwrap();
    /// assert!(s.paused && s.regions.is_empty());
    /// assert!(Snapshot::parse("{\"version\":0}").is_err());
    /// assert!(Snapshot::parse("[1}").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Snapshot, Error> {
        // A document without a version is not a snapshot.
        let mut s = Snapshot {
            version: 0,
            ..Snapshot::default()
        };
        json::whole(text, |p| {
            p.object(|p, key| {
                match key.as_ref() {
                    "version" => s.version = p.int()?,
                    "elapsed_ns" => s.elapsed_ns = p.int()?,
                    "paused" => s.paused = p.bool()?,
                    "label" => s.label = p.string()?.into_owned(),
                    "regions" => p.array(|p| {
                        s.regions.push(region(p)?);
                        Ok(())
                    })?,
                    "threads" => p.array(|p| {
                        s.threads.push(thread(p)?);
                        Ok(())
                    })?,
                    "tasks" => p.array(|p| {
                        s.tasks.push(task(p)?);
                        Ok(())
                    })?,
                    _ => p.skip()?,
                }
                Ok(())
            })
        })
        .map_err(|e| Error::json("snapshot", e))?;
        if s.version < 1 {
            return Err(Error::json(
                "snapshot",
                format!("version {} (a snapshot's version is 1 or more)", s.version),
            ));
        }
        Ok(s)
    }
}

/// A count as a JSON integer (saturating past `i64::MAX`).
fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A non-negative integer.
fn count(p: &mut Parser<'_>) -> json::Result<u64> {
    let v = p.int()?;
    u64::try_from(v).or_else(|_| p.error(format!("a count of {v}")))
}

fn region(p: &mut Parser<'_>) -> json::Result<SnapshotRegion> {
    let mut r = SnapshotRegion::default();
    p.object(|p, key: Cow<'_, str>| {
        match key.as_ref() {
            "name" => r.name = p.string()?.into_owned(),
            "calls" => r.calls = count(p)?,
            "total_ns" => r.total_ns = p.int()?,
            "own_ns" => r.own_ns = p.int()?,
            "max_ns" => r.max_ns = p.int()?,
            "dropped" => r.dropped = count(p)?,
            _ => p.skip()?,
        }
        Ok(())
    })?;
    Ok(r)
}

fn thread(p: &mut Parser<'_>) -> json::Result<SnapshotThread> {
    let mut t = SnapshotThread::default();
    p.object(|p, key: Cow<'_, str>| {
        match key.as_ref() {
            "index" => t.index = index(p, "thread index")?,
            "name" => t.name = p.string()?.into_owned(),
            "tasks" => t.tasks = p.bool()?,
            "calls" => t.calls = count(p)?,
            "open" => t.open = open_calls(p)?,
            _ => p.skip()?,
        }
        Ok(())
    })?;
    Ok(t)
}

/// `,"open":[...]`: open calls.
fn push_open(out: &mut Vec<u8>, open: &[SnapshotCall]) {
    out.extend_from_slice(b",\"open\":[");
    for (j, c) in open.iter().enumerate() {
        if j > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        json::push_string(out, &c.name);
        out.extend_from_slice(b",\"open_ns\":");
        json::push_int(out, c.open_ns);
        out.extend_from_slice(b",\"depth\":");
        json::push_int(out, i64::from(c.depth));
        out.push(b'}');
    }
    out.push(b']');
}

fn index(p: &mut Parser<'_>, what: &str) -> json::Result<u32> {
    let v = p.int()?;
    u32::try_from(v).or_else(|_| p.error(format!("a {what} of {v}")))
}

fn task(p: &mut Parser<'_>) -> json::Result<SnapshotTask> {
    let mut t = SnapshotTask::default();
    p.object(|p, key: Cow<'_, str>| {
        match key.as_ref() {
            "thread" => t.thread = index(p, "thread index")?,
            "index" => t.index = index(p, "task index")?,
            "polled" => t.polled = p.bool()?,
            "open" => t.open = open_calls(p)?,
            _ => p.skip()?,
        }
        Ok(())
    })?;
    Ok(t)
}

/// An `open` array; a call without `depth` is at its place in the list.
fn open_calls(p: &mut Parser<'_>) -> json::Result<Vec<SnapshotCall>> {
    let mut calls = Vec::new();
    p.array(|p| {
        let mut c = SnapshotCall::default();
        let mut depth = None;
        p.object(|p, key: Cow<'_, str>| {
            match key.as_ref() {
                "name" => c.name = p.string()?.into_owned(),
                "open_ns" => c.open_ns = p.int()?,
                "depth" => depth = Some(index(p, "depth")?),
                _ => p.skip()?,
            }
            Ok(())
        })?;
        c.depth = depth.unwrap_or_else(|| u32::try_from(calls.len()).unwrap_or(u32::MAX));
        calls.push(c);
        Ok(())
    })?;
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_awkward_names() {
        let mut s = Snapshot::new();
        s.label = "run \"7\"".into();
        s.paused = true;
        s.regions.push(SnapshotRegion {
            name: "a\u{1b}[2Jb\n".into(),
            calls: u64::MAX,
            total_ns: 1,
            own_ns: 0,
            max_ns: 1,
            dropped: 3,
        });
        s.threads.push(SnapshotThread {
            index: 7,
            name: "wörker".into(),
            tasks: false,
            calls: 2,
            open: vec![
                SnapshotCall {
                    name: "main".into(),
                    open_ns: 5_000_000_000,
                    depth: 0,
                },
                SnapshotCall {
                    name: "x\"y".into(),
                    open_ns: 0,
                    depth: 1,
                },
            ],
        });
        s.tasks.push(SnapshotTask {
            thread: 7,
            index: u32::MAX,
            polled: true,
            open: vec![
                SnapshotCall {
                    name: "req".into(),
                    open_ns: 1,
                    depth: 0,
                },
                SnapshotCall {
                    name: "fetch".into(),
                    open_ns: 1,
                    depth: 1,
                },
                SnapshotCall {
                    name: "fetch".into(),
                    open_ns: 1,
                    depth: 1,
                },
            ],
        });
        let back = Snapshot::parse(&s.to_json()).unwrap();
        assert_eq!(back.tasks, s.tasks);
        // A version-1 document from before `open`: no open calls.
        let old = Snapshot::parse(r#"{"version":1,"threads":[{"index":1,"calls":3}]}"#).unwrap();
        assert!(old.threads[0].open.is_empty());
        // One from before `depth`: each call at its place in the list.
        let old = Snapshot::parse(
            r#"{"version":1,"tasks":[{"index":1,"open":[{"name":"a","open_ns":2},{"name":"b","open_ns":1}]}]}"#,
        )
        .unwrap();
        let depths: Vec<u32> = old.tasks[0].open.iter().map(|c| c.depth).collect();
        assert_eq!(depths, [0, 1]);
        let back = Snapshot::parse(&s.to_json()).unwrap();
        assert_eq!(back.regions[0].calls, i64::MAX as u64);
        assert_eq!(back.regions[0].name, s.regions[0].name);
        assert_eq!(back.threads, s.threads);
        assert_eq!(back.label, s.label);
    }

    #[test]
    fn hostile_documents_are_errors() {
        for bad in [
            "",
            "{",
            "{\"version\":1,\"regions\":[{\"calls\":-1}]}",
            "{\"version\":1,\"threads\":[{\"index\":4294967296}]}",
            "{\"version\":\"1\"}",
            "{\"version\":-3}",
            "{\"version\":1,\"tasks\":[{\"open\":[{\"depth\":-1}]}]}",
        ] {
            assert!(Snapshot::parse(bad).is_err(), "{bad}");
        }
    }
}
