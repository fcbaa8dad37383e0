//! Region counters: what a session counts besides time (allocations through
//! [`CountingAllocator`], kernel and hardware events through a perf counter
//! group per thread), and the per-thread running allocation counts the
//! allocator adds to.
//!
//! The allocator touches one thread-local of plain cells (no destructor,
//! constant initializer: no lazy registration, usable from inside the
//! allocator) and counts only while its thread's state is exactly
//! `TRACK`: tracking on for the thread's session and not [`suspended`]
//! (the recorder suspends counting while it works, so the profiler's own
//! allocations are never counted). The recorder reads the running counts at
//! each enter and exit (`thread`), and turns the deltas into per-region
//! totals (`lane::CounterTable`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use crate::error::Error;
use crate::platform::{self, PerfGroup};

/// The event names of allocation tracking, in the order they are counted
/// and written.
pub const ALLOC_EVENTS: [&str; 4] = ["alloc-count", "alloc-bytes", "free-count", "free-bytes"];

/// The perf events the Python package knows: name, `perf_type_id`, config.
pub const PERF_EVENTS: [(&str, u32, u64); 10] = [
    ("cycles", 0, 0),
    ("instructions", 0, 1),
    ("cache-references", 0, 2),
    ("cache-misses", 0, 3),
    ("branches", 0, 4),
    ("branch-misses", 0, 5),
    ("cpu-clock", 1, 0),
    ("task-clock", 1, 1),
    ("page-faults", 1, 2),
    ("context-switches", 1, 3),
];

/// Most perf events one group reads.
pub const MAX_PERF_EVENTS: usize = PERF_EVENTS.len();

/// A thread's allocation tracking state: counting.
const TRACK: u8 = 1;
/// Added while the profiler itself runs on the thread.
const SUSPENDED: u8 = 2;

/// One thread's running allocation counts.
struct Running {
    state: Cell<u8>,
    counts: [Cell<u64>; 4],
}

thread_local! {
    static RUNNING: Running = const {
        Running {
            state: Cell::new(0),
            counts: [const { Cell::new(0) }; 4],
        }
    };
}

/// Adds one allocation (`sign` 0) or deallocation (`sign` 2) of `size`
/// bytes to the thread's counts, if it is counting.
#[inline(always)]
fn note(slot: usize, size: usize) {
    let _ = RUNNING.try_with(|r| {
        if r.state.get() == TRACK {
            let [n, bytes] = [&r.counts[slot], &r.counts[slot + 1]];
            n.set(n.get().wrapping_add(1));
            bytes.set(bytes.get().wrapping_add(size as u64));
        }
    });
}

/// A global allocator that counts, per thread, the allocations and
/// deallocations made through it (then handing them to `A`), so that a
/// session with [`Options::track_allocations`](crate::options::Options::track_allocations)
/// attributes them to the innermost open call. A `realloc` counts as one
/// allocation of the new size and one deallocation of the old. With no
/// session tracking allocations, it costs a thread-local load and a
/// compare per call over `A`.
///
/// ```
/// use scope_profiler::CountingAllocator;
/// #[global_allocator]
/// static ALLOC: CountingAllocator = CountingAllocator::system();
/// let v = vec![1u8; 10];
/// assert_eq!(v.len(), 10);
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAllocator<A = System> {
    inner: A,
}

impl CountingAllocator<System> {
    /// Counts the allocations of the system allocator.
    ///
    /// ```
    /// #[global_allocator]
    /// static ALLOC: scope_profiler::CountingAllocator =
    ///     scope_profiler::CountingAllocator::system();
    /// ```
    pub const fn system() -> Self {
        CountingAllocator { inner: System }
    }
}

impl<A> CountingAllocator<A> {
    /// Counts the allocations of `inner` (mimalloc, jemalloc...).
    ///
    /// ```
    /// use std::alloc::System;
    /// #[global_allocator]
    /// static ALLOC: scope_profiler::CountingAllocator<System> =
    ///     scope_profiler::CountingAllocator::new(System);
    /// ```
    pub const fn new(inner: A) -> Self {
        CountingAllocator { inner }
    }
}

// SAFETY: every method hands the request to `inner` unchanged and returns
// its result; counting only adds to thread-local cells (no allocation).
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `inner`'s.
        let p = unsafe { self.inner.alloc(layout) };
        if !p.is_null() {
            note(0, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `inner`'s.
        let p = unsafe { self.inner.alloc_zeroed(layout) };
        if !p.is_null() {
            note(0, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `inner`'s.
        unsafe { self.inner.dealloc(ptr, layout) };
        note(2, layout.size());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is `inner`'s.
        let p = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(2, layout.size());
            note(0, new_size);
        }
        p
    }
}

/// The calling thread's running allocation counts (allocations, bytes,
/// deallocations, bytes), wrapping.
#[inline]
pub fn alloc_counts() -> [u64; 4] {
    RUNNING
        .try_with(|r| std::array::from_fn(|i| r.counts[i].get()))
        .unwrap_or([0; 4])
}

/// Turns the calling thread's allocation counting on or off (its session
/// tracks allocations, or not).
pub fn set_tracking(on: bool) {
    let _ = RUNNING.try_with(|r| {
        let suspended = r.state.get() & SUSPENDED;
        r.state.set(suspended | if on { TRACK } else { 0 });
    });
}

/// Restores the thread's counting state when dropped (see [`suspend`]).
pub struct Suspended {
    old: u8,
}

impl Drop for Suspended {
    fn drop(&mut self) {
        // Only the suspension is undone: tracking may have been turned on
        // or off meanwhile (a thread joining a session).
        let _ = RUNNING.try_with(|r| {
            r.state
                .set((r.state.get() & !SUSPENDED) | (self.old & SUSPENDED))
        });
    }
}

/// Stops counting the calling thread's allocations until the guard is
/// dropped: the profiler's own work (names, chunks, setup, finalize).
pub fn suspend() -> Suspended {
    let old = RUNNING
        .try_with(|r| {
            let old = r.state.get();
            r.state.set(old | SUSPENDED);
            old
        })
        .unwrap_or(0);
    Suspended { old }
}

/// Runs `f` with the calling thread's allocations not counted.
pub fn suspended<R>(f: impl FnOnce() -> R) -> R {
    let _s = suspend();
    f()
}

/// Whether the global allocator is a [`CountingAllocator`]: an allocation
/// made here with counting forced on is seen.
pub fn allocator_installed() -> bool {
    RUNNING
        .try_with(|r| {
            let old = r.state.get();
            let before: [u64; 4] = std::array::from_fn(|i| r.counts[i].get());
            r.state.set(TRACK);
            drop(std::hint::black_box(Box::new(std::hint::black_box(7u64))));
            r.state.set(old);
            let seen = r.counts[0].get() != before[0];
            // The probe is not an allocation of the program's.
            for (c, b) in r.counts.iter().zip(before) {
                c.set(b);
            }
            seen
        })
        .unwrap_or(false)
}

/// What a session counts: the event names (allocations first, then perf
/// events) and the perf events' `(type, config)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterSet {
    pub names: Vec<String>,
    pub allocations: bool,
    pub perf: Vec<(u32, u64)>,
}

impl CounterSet {
    /// Counters of `allocations` and the perf events `perf` (names
    /// checked); `None` if nothing is counted.
    pub fn new(allocations: bool, perf: &[String]) -> Result<Option<CounterSet>, Error> {
        if !allocations && perf.is_empty() {
            return Ok(None);
        }
        let mut set = CounterSet {
            allocations,
            ..CounterSet::default()
        };
        if allocations {
            set.names
                .extend(ALLOC_EVENTS.iter().map(|s| (*s).to_owned()));
        }
        for name in perf {
            let Some(&(known, kind, config)) = PERF_EVENTS.iter().find(|e| e.0 == name) else {
                let list: Vec<&str> = PERF_EVENTS.iter().map(|e| e.0).collect();
                return Err(Error::InvalidOption {
                    option: "perf_events",
                    message: format!(
                        "unknown perf event {name:?}: the known ones are {}",
                        list.join(", ")
                    ),
                });
            };
            if set.names.iter().any(|n| n == known) {
                return Err(Error::InvalidOption {
                    option: "perf_events",
                    message: format!("{name:?} is listed twice"),
                });
            }
            set.names.push(known.to_owned());
            set.perf.push((kind, config));
        }
        Ok(Some(set))
    }

    /// Number of counters.
    pub fn width(&self) -> usize {
        self.names.len()
    }

    /// Checks at `setup` that these counters can be counted here: the
    /// allocator installed, the perf group opened on the calling thread.
    pub fn check(&self) -> Result<(), Error> {
        if self.allocations && !allocator_installed() {
            return Err(Error::InvalidOption {
                option: "track_allocations",
                message:
                    "the global allocator is not scope_profiler::CountingAllocator: install it \
                          with `#[global_allocator] static A: scope_profiler::CountingAllocator = \
                          scope_profiler::CountingAllocator::system();` (or \
                          `CountingAllocator::new(inner)` around another allocator)"
                        .to_owned(),
            });
        }
        if !self.perf.is_empty() {
            if !platform::HAS_PERF_EVENTS {
                let first = usize::from(self.allocations) * ALLOC_EVENTS.len();
                let names: Vec<String> = self.names[first..]
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect();
                return Err(Error::InvalidOption {
                    option: "perf_events",
                    message: format!(
                        "cannot count {}: perf events are counted on Linux only \
                         (perf_event_open), and not in a build with --cfg scope_profiler_portable",
                        names.join(", ")
                    ),
                });
            }
            self.open_perf()?;
        }
        Ok(())
    }

    /// Opens this set's perf group on the calling thread (`None` if it has
    /// no perf events); the error names the event the kernel refused.
    pub fn open_perf(&self) -> Result<Option<PerfGroup>, Error> {
        if self.perf.is_empty() {
            return Ok(None);
        }
        PerfGroup::open(&self.perf).map(Some).map_err(|(i, errno)| {
            let first = usize::from(self.allocations) * ALLOC_EVENTS.len();
            let name = self.names.get(first + i).map_or("?", String::as_str);
            Error::InvalidOption {
                option: "perf_events",
                message: format!(
                    "could not open perf event {name:?}: {}",
                    perf_refusal(errno)
                ),
            }
        })
    }
}

/// Why the kernel refused a perf event (`perf_event_open` or its ring's
/// `mmap`): the errno's meaning and what usually causes it.
///
/// ```
/// use scope_profiler_core::internal::counters::perf_refusal;
/// assert!(perf_refusal(13).contains("perf_event_paranoid"));
/// assert!(perf_refusal(24).contains("file descriptors"));
/// ```
pub fn perf_refusal(errno: i32) -> String {
    let reason = std::io::Error::from_raw_os_error(errno);
    let hint = match errno {
        1 | 13 => {
            "; kernel policy may forbid this (check /proc/sys/kernel/perf_event_paranoid, \
             and for a sampling ring /proc/sys/kernel/perf_event_mlock_kb)"
        }
        2 | 19 | 95 => "; this machine (a VM without a PMU, say) does not count it",
        22 => {
            "; the kernel does not take these settings (a sampling rate above \
             /proc/sys/kernel/perf_event_max_sample_rate, say)"
        }
        23 | 24 => "; the process is out of file descriptors (ulimit -n)",
        38 => {
            "; perf events are counted on Linux only, not in a build with \
             --cfg scope_profiler_portable"
        }
        _ => "",
    };
    format!("{reason}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_repeated_events_are_refused() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(CounterSet::new(false, &[]).unwrap().is_none());
        let err = CounterSet::new(false, &names(&["cycels"])).unwrap_err();
        assert!(err.to_string().contains("cycels"), "{err}");
        assert!(CounterSet::new(false, &names(&["cycles", "cycles"])).is_err());
        let set = CounterSet::new(true, &names(&["page-faults"]))
            .unwrap()
            .unwrap();
        assert_eq!(set.width(), 5);
        assert_eq!(set.names[4], "page-faults");
    }

    #[test]
    fn without_the_allocator_nothing_is_counted() {
        set_tracking(true);
        let before = alloc_counts();
        drop(std::hint::black_box(vec![0u8; 100]));
        assert_eq!(alloc_counts(), before);
        assert!(!allocator_installed());
        set_tracking(false);
    }
}
