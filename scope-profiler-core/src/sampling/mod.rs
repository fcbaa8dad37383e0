//! A session's samples (issue 39, [`Options::sample_hz`]): one sampling
//! event per recording thread (`platform::Sampler`), opened when the
//! thread joins the session and closed when the session ends, and a
//! background thread that drains their rings every few milliseconds into
//! per-lane lists of (time, address, task, call chain), within a bound on
//! their memory.
//!
//! Nothing here runs on a call's path: a thread opens its event once, when
//! it joins the session (`thread::Cold::attach`); the samples are given to
//! calls at the cut (`assemble::samples`).
//!
//! A sample taken while an instrumented task was polled belongs to the
//! task's calls, which are in no thread's lane: each thread logs the
//! intervals in which it polled a task (`PollLog`, a lock its thread and
//! the drainer share, only in a sampled session), and the drainer marks
//! the samples of each interval with the task's number, then forgets the
//! interval: the memory is the samples', not the polls'.
//!
//! Once the samples in memory pass half their bound, the drainer moves
//! each lane's oldest ones, those whose task is known for good (a poll
//! open since before the drain and still after it marks its samples as it
//! goes, so a long poll holds nothing back), to an unlinked scratch file
//! beside the store's (`blocks`), and the cut reads them back: a long
//! run's samples take disk, not memory. If that file cannot be written (a
//! full disk, a removed directory) or passes its limit, the newest samples
//! past the bound are counted, not kept (a warning says why once).
//!
//! [`Options::sample_hz`]: crate::options::Options::sample_hz

#![forbid(unsafe_code)]

mod blocks;

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use blocks::{Block, Buffers};

use crate::clock::{Anchor, TickConverter, ticks};
use crate::counters::perf_refusal;
use crate::platform::Sampler;
use crate::sync::lock;

/// Data pages of each thread's ring: 16 KiB, a few hundred samples with
/// short call chains, drained every 10 ms. Small, because the
/// kernel counts every ring against the user's `perf_event_mlock_kb`.
pub const RING_PAGES: usize = 4;

/// How often the rings are drained.
const DRAIN_EVERY: Duration = Duration::from_millis(10);

/// Bytes a kept sample takes besides its call chain: its time, its
/// address, its task and where its chain ends.
pub const SAMPLE_BYTES: usize = 24;

/// Return addresses kept of a sample's call chain at most (the innermost):
/// 8 bytes each.
pub const MAX_FRAMES: usize = crate::platform::SAMPLE_MAX_STACK as usize;

/// The samples' memory at most (so that a chain's end fits 32 bits).
const MAX_BYTES: usize = 16 << 30;

/// Polls a thread's log keeps between two drains at most (24 MiB).
pub const MAX_POLLS: usize = 1 << 20;

/// The task of a sample taken while no task was polled on its thread.
pub const NO_TASK: u32 = u32::MAX;

/// Threads named on stderr when their event cannot be opened; the rest
/// are only in the file's recording notes.
const PRINTED_FAILURES: usize = 8;

/// One lane's samples, in time order: CLOCK_MONOTONIC ns, the
/// interrupted instruction's address, the number of the task polled on the
/// thread then ([`NO_TASK`]: none), and the user call chain's return
/// addresses (innermost first; sample `i`'s are
/// `chains[chain_ends[i - 1]..chain_ends[i]]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneSamples {
    pub times: Vec<u64>,
    pub ips: Vec<u64>,
    pub tasks: Vec<u32>,
    pub chain_ends: Vec<u32>,
    pub chains: Vec<u64>,
}

impl LaneSamples {
    /// Sample `i`'s call chain, innermost first.
    ///
    /// ```
    /// use scope_profiler_core::internal::sampling::LaneSamples;
    /// let l = LaneSamples { chain_ends: vec![2, 2, 3], chains: vec![10, 11, 12], ..LaneSamples::default() };
    /// assert_eq!(l.chain(0), [10, 11]);
    /// assert!(l.chain(1).is_empty());
    /// assert_eq!(l.chain(2), [12]);
    /// assert!(l.chain(3).is_empty());
    /// ```
    pub fn chain(&self, i: usize) -> &[u64] {
        let start = match i.checked_sub(1) {
            Some(j) => self.chain_ends.get(j).copied().unwrap_or(0) as usize,
            None => 0,
        };
        let end = self.chain_ends.get(i).copied().unwrap_or(0) as usize;
        self.chains.get(start..end).unwrap_or(&[])
    }
}

/// An interval in which a thread polled a task: the task's number and the
/// ticks at the poll's start and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Poll {
    task: u32,
    start: u64,
    end: u64,
}

/// A thread's polls of tasks not yet read by the drainer.
#[derive(Debug)]
pub struct PollLog {
    lane: u32,
    polls: Mutex<Polls>,
}

/// The polls a thread ended, and the one it polls now: the task and the
/// tick it started at.
#[derive(Debug, Default)]
struct Polls {
    done: Vec<Poll>,
    open: Option<(u32, u64)>,
}

impl PollLog {
    /// At tick `now` the thread ended its poll of a task (`ended`: the
    /// task and the poll's start), or started polling task `starts`, or
    /// both. Past [`MAX_POLLS`] not yet drained (no drainer thread could
    /// start), an ended poll is not kept: its samples go to the thread's
    /// own calls.
    pub fn switch(&self, ended: Option<(u32, u64)>, starts: Option<u32>, now: u64) {
        let mut polls = lock(&self.polls);
        if let Some((task, start)) = ended
            && polls.done.len() < MAX_POLLS
        {
            polls.done.push(Poll {
                task,
                start,
                end: now,
            });
        }
        polls.open = starts.map(|task| (task, now));
    }
}

/// The samples of a session up to a cut.
#[derive(Clone, Debug, Default)]
pub struct SampleCut {
    /// Samples per second of a thread's CPU time.
    pub hz: u32,
    /// By thread lane index.
    pub lanes: Vec<LaneSamples>,
    /// Samples not kept: past the memory bound.
    pub dropped: u64,
    /// Samples the kernel lost (a ring was full when it wrote).
    pub lost: u64,
    /// Of the samples kept, those read back from the scratch file.
    pub spilled: u64,
    /// The threads whose event could not be opened, each with why.
    pub failures: Vec<String>,
}

impl SampleCut {
    /// Samples kept, on every lane.
    pub fn len(&self) -> usize {
        self.lanes.iter().map(|l| l.times.len()).sum()
    }

    /// Whether no sample was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A thread's event and the lane its samples go to.
struct ThreadSampler {
    lane: u32,
    sampler: Sampler,
}

#[derive(Default)]
struct Log {
    /// The samples in memory.
    lanes: Vec<LaneSamples>,
    /// Bytes of the samples in memory.
    bytes: usize,
    dropped: u64,
    lost: u64,
    /// The samples spilled before those in memory.
    spilled: Spilled,
}

/// The samples the drainer moved to a scratch file.
#[derive(Default)]
struct Spilled {
    file: Option<File>,
    /// Bytes written to it.
    len: u64,
    /// Per lane, its blocks in time order.
    blocks: Vec<Vec<Block>>,
    /// Spilling stopped for good (it failed or reached the limit).
    stopped: bool,
    buffers: Buffers,
}

/// A session's sampling: the threads' events and the samples drained.
pub struct Sampling {
    hz: u32,
    /// Bytes of samples in memory at most.
    max_bytes: usize,
    /// The directory of the scratch file the samples spill to.
    dir: PathBuf,
    /// Bytes of that file at most.
    max_disk: u64,
    threads: Mutex<Vec<ThreadSampler>>,
    log: Mutex<Log>,
    /// The threads whose event could not be opened, each with why.
    failures: Mutex<Vec<String>>,
    stop: Mutex<bool>,
    wake: Condvar,
    drainer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Closed: threads joining later open no event.
    closed: AtomicBool,
    /// The threads' polls of tasks (see the module's comment).
    poll_logs: Mutex<Vec<Arc<PollLog>>>,
    /// When sampling started: with the drain's time, the map from a poll's
    /// ticks to the samples' clock.
    start: Anchor,
}

impl Sampling {
    /// Sampling at `hz`, keeping at most `max_bytes` of samples in
    /// memory and `max_disk` in a scratch file in `dir`.
    pub fn new(hz: u32, max_bytes: usize, dir: PathBuf, max_disk: u64) -> Sampling {
        Sampling {
            hz,
            max_bytes: max_bytes.min(MAX_BYTES),
            dir,
            max_disk,
            threads: Mutex::new(Vec::new()),
            log: Mutex::new(Log::default()),
            failures: Mutex::new(Vec::new()),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            drainer: Mutex::new(None),
            closed: AtomicBool::new(false),
            poll_logs: Mutex::new(Vec::new()),
            start: Anchor::now(),
        }
    }

    /// The log of the polls of tasks on the thread of lane `lane`.
    pub fn poll_log(&self, lane: u32) -> Arc<PollLog> {
        let log = Arc::new(PollLog {
            lane,
            polls: Mutex::new(Polls::default()),
        });
        lock(&self.poll_logs).push(Arc::clone(&log));
        log
    }

    /// The rate asked for.
    pub fn hz(&self) -> u32 {
        self.hz
    }

    /// Opens the calling thread's event, its samples for lane `lane`; a
    /// thread whose event the kernel refuses is named (on stderr, the first
    /// few) and listed with the errno's meaning, never sampled as idle.
    pub fn open_thread(&self, lane: u32) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        match Sampler::open(self.hz, RING_PAGES) {
            Ok(sampler) => lock(&self.threads).push(ThreadSampler { lane, sampler }),
            Err(errno) => {
                let thread = std::thread::current();
                let what = format!(
                    "thread {} (tid {}): {}",
                    thread.name().unwrap_or("unnamed"),
                    crate::platform::native_thread_id(),
                    perf_refusal(errno)
                );
                let mut failures = lock(&self.failures);
                match failures.len() {
                    n if n < PRINTED_FAILURES => eprintln!(
                        "scope-profiler: warning: cannot sample {what}; its time has no \
                         samples (the file's metadata samples_not_taken lists such threads)"
                    ),
                    PRINTED_FAILURES => eprintln!(
                        "scope-profiler: warning: more threads cannot open their sampling \
                         event (samples_not_taken in the file lists them all)"
                    ),
                    _ => {}
                }
                failures.push(what);
            }
        }
    }

    /// Starts the thread that drains the rings; `false` if it cannot start
    /// (then the rings are drained only at each cut, and a busy thread's
    /// ring may fill: the kernel counts what it lost).
    pub fn start(self: &Arc<Self>) -> bool {
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("sp-sampler".into())
            .spawn(move || {
                let mut stop = lock(&me.stop);
                while !*stop {
                    stop = me
                        .wake
                        .wait_timeout(stop, DRAIN_EVERY)
                        .map_or_else(|e| e.into_inner().0, |(g, _)| g);
                    if *stop {
                        break;
                    }
                    drop(stop);
                    me.drain();
                    stop = lock(&me.stop);
                }
            });
        match spawned {
            Ok(handle) => {
                *lock(&self.drainer) = Some(handle);
                true
            }
            Err(_) => false,
        }
    }

    /// Moves what every ring holds into the lanes' lists, marks the
    /// samples taken during the polls of tasks logged since, and past half
    /// the bound spills the oldest.
    ///
    /// A sample may spill once its task is known for good: on a thread
    /// polling no task, those taken before the drain started; on one
    /// polling a task since before the drain and still after the rings
    /// were read, those too, marked with that task; on one whose poll
    /// changed meanwhile, those before that poll started.
    pub fn drain(&self) {
        // One drain at a time (the drainer's and a cut's): a cut's copy has
        // every poll it took marked.
        let mut threads = lock(&self.threads);
        // The polls first: each ended before the rings are read, so its
        // samples are read now or were before.
        let now = ticks();
        let logs: Vec<Arc<PollLog>> = lock(&self.poll_logs).clone();
        let polls: Vec<Polls> = logs
            .iter()
            .map(|l| {
                let mut p = lock(&l.polls);
                Polls {
                    done: std::mem::take(&mut p.done),
                    open: p.open,
                }
            })
            .collect();
        let mut log = lock(&self.log);
        let log = &mut *log;
        // Spilling, memory may pass the bound by what one drain reads (the
        // rings' size); it is back under half of it once spilled.
        let max = if log.spilled.stopped {
            self.max_bytes
        } else {
            usize::MAX
        };
        for t in threads.iter_mut() {
            let lane = t.lane as usize;
            if log.lanes.len() <= lane {
                log.lanes.resize_with(lane + 1, LaneSamples::default);
            }
            let (lanes, bytes, dropped) = (&mut log.lanes, &mut log.bytes, &mut log.dropped);
            let into = &mut lanes[lane];
            log.lost += t.sampler.drain(&mut |s| {
                let chain = &s.chain[..s.chain.len().min(MAX_FRAMES)];
                let size = SAMPLE_BYTES + 8 * chain.len();
                if bytes.saturating_add(size) <= max {
                    into.times.push(s.time_ns);
                    into.ips.push(s.ip);
                    into.tasks.push(NO_TASK);
                    into.chains.extend_from_slice(chain);
                    into.chain_ends.push(into.chains.len() as u32);
                    *bytes += size;
                } else {
                    *dropped += 1;
                }
            });
        }
        let conv = TickConverter::through(&[self.start, Anchor::now()]);
        let ns = |ticks: u64| u64::try_from(conv.ns(ticks)).unwrap_or(0);
        // Per lane, the time before which its samples may spill (a
        // millisecond's margin for the map from ticks to the clock).
        let margin = |t: u64| ns(t).saturating_sub(1_000_000);
        let mut horizons = vec![margin(now); log.lanes.len()];
        for (Polls { done, open }, l) in polls.into_iter().zip(&logs) {
            let lane = l.lane;
            let Some(samples) = log.lanes.get_mut(lane as usize) else {
                continue; // no sample on that thread yet: none in its polls
            };
            for p in done {
                let lo = samples.times.partition_point(|&t| t < ns(p.start));
                let hi = samples.times.partition_point(|&t| t < ns(p.end)).max(lo);
                for task in &mut samples.tasks[lo..hi] {
                    *task = p.task;
                }
            }
            let Some((task, start)) = open else {
                continue;
            };
            if lock(&l.polls).open == open {
                // The same poll since before the drain: every sample read
                // after its start was taken in it.
                let lo = samples.times.partition_point(|&t| t < ns(start));
                for t in &mut samples.tasks[lo..] {
                    *t = task;
                }
            } else {
                // It ended since (its samples are marked at the next drain).
                horizons[lane as usize] = horizons[lane as usize].min(margin(start));
            }
        }
        if log.bytes > self.max_bytes / 2 && !log.spilled.stopped {
            self.spill(log, &horizons);
        }
        if log.bytes > self.max_bytes {
            trim(log, self.max_bytes);
        }
    }

    /// Moves each lane's samples before its horizon (ns) to the scratch
    /// file; stops spilling for good, with a warning, if it cannot.
    fn spill(&self, log: &mut Log, horizons: &[u64]) {
        let spilled = &mut log.spilled;
        for (index, lane) in log.lanes.iter_mut().enumerate() {
            let until_ns = horizons.get(index).copied().unwrap_or(0);
            let n = lane.times.partition_point(|&t| t < until_ns);
            if n == 0 {
                continue;
            }
            let (samples, frames) = spilled.buffers.encode(lane, n);
            let block = &spilled.buffers.block;
            let why = if spilled.len + block.len() as u64 > self.max_disk {
                Some(format!(
                    "the samples reached their disk limit ({} bytes)",
                    self.max_disk
                ))
            } else {
                let file = match spilled.file.take() {
                    Some(f) => Ok(f),
                    None => crate::scratch::create(&self.dir, "samples"),
                };
                match file.and_then(|f| {
                    crate::scratch::write_at(&f, block, spilled.len)?;
                    Ok(f)
                }) {
                    Ok(f) => {
                        spilled.file = Some(f);
                        None
                    }
                    Err(e) => Some(format!(
                        "cannot write its scratch file in {}: {e}",
                        self.dir.display()
                    )),
                }
            };
            if let Some(why) = why {
                spilled.stopped = true;
                spilled.file = None;
                eprintln!(
                    "scope-profiler: warning: samples stop spilling: {why}; they stay in memory \
                     up to their bound ({} bytes), and past it are counted, not kept",
                    self.max_bytes
                );
                return;
            }
            if spilled.blocks.len() <= index {
                spilled.blocks.resize_with(index + 1, Vec::new);
            }
            spilled.blocks[index].push(Block {
                offset: spilled.len,
                bytes: block.len() as u32,
                samples,
                frames,
            });
            spilled.len += block.len() as u64;
            log.bytes -= n * SAMPLE_BYTES + 8 * frames as usize;
            lane.times.drain(..n);
            lane.ips.drain(..n);
            lane.tasks.drain(..n);
            lane.chain_ends.drain(..n);
            lane.chains.drain(..frames as usize);
            for end in &mut lane.chain_ends {
                *end -= frames;
            }
        }
    }

    /// The samples taken before `until_ns` (CLOCK_MONOTONIC), the rings
    /// drained first; the session samples on.
    pub fn cut(&self, until_ns: u64) -> SampleCut {
        self.drain();
        let mut log = lock(&self.log);
        let log = &mut *log;
        // Samples of a block that cannot be read back (changed on disk).
        let mut unread = 0u64;
        let mut read_back = 0u64;
        let lanes = log
            .lanes
            .iter()
            .enumerate()
            .map(|(index, l)| {
                let mut cut = LaneSamples::default();
                let spilled = &mut log.spilled;
                for block in spilled.blocks.get(index).map_or(&[][..], |b| &b[..]) {
                    let buffers = &mut spilled.buffers;
                    let read = match &spilled.file {
                        Some(f) => crate::scratch::read_at(
                            f,
                            block.offset,
                            block.bytes as usize,
                            &mut buffers.block,
                        )
                        .and_then(|()| buffers.decode(block, &mut cut)),
                        None => Err(std::io::Error::other("the scratch file is gone")),
                    };
                    match read {
                        Ok(()) => read_back += u64::from(block.samples),
                        Err(_) => unread += u64::from(block.samples),
                    }
                }
                let n = l.times.partition_point(|&t| t < until_ns);
                let frames = n.checked_sub(1).map_or(0, |i| l.chain_ends[i] as usize);
                let base = cut.chains.len() as u32;
                cut.times.extend_from_slice(&l.times[..n]);
                cut.ips.extend_from_slice(&l.ips[..n]);
                cut.tasks.extend_from_slice(&l.tasks[..n]);
                cut.chain_ends
                    .extend(l.chain_ends[..n].iter().map(|e| e + base));
                cut.chains.extend_from_slice(&l.chains[..frames]);
                // A spilled sample at or past the cut (the clock's margin).
                let keep = cut.times.partition_point(|&t| t < until_ns);
                let cut_len = cut.times.len();
                if keep < cut_len {
                    let frames = keep
                        .checked_sub(1)
                        .map_or(0, |i| cut.chain_ends[i] as usize);
                    cut.times.truncate(keep);
                    cut.ips.truncate(keep);
                    cut.tasks.truncate(keep);
                    cut.chain_ends.truncate(keep);
                    cut.chains.truncate(frames);
                    read_back = read_back.saturating_sub((cut_len - keep) as u64);
                }
                cut
            })
            .collect();
        SampleCut {
            hz: self.hz,
            lanes,
            dropped: log.dropped + unread,
            spilled: read_back,
            lost: log.lost,
            failures: lock(&self.failures).clone(),
        }
    }

    /// Events open now (each holds a file descriptor).
    pub fn open_events(&self) -> usize {
        lock(&self.threads).len()
    }

    /// Ends sampling with the session: stops the drainer and closes every
    /// thread's event (its descriptor and ring), whether or not its thread
    /// still runs.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        *lock(&self.stop) = true;
        self.wake.notify_all();
        if let Some(handle) = lock(&self.drainer).take() {
            let _ = handle.join();
        }
        lock(&self.threads).clear();
    }
}

/// Drops the newest samples, on every lane, until those in memory fit
/// `max` bytes (spilling failed): counted, not kept.
fn trim(log: &mut Log, max: usize) {
    let mut newest: Vec<(u64, usize)> = log
        .lanes
        .iter()
        .flat_map(|l| (0..l.times.len()).map(|i| (l.times[i], SAMPLE_BYTES + 8 * l.chain(i).len())))
        .collect();
    newest.sort_unstable_by_key(|&(t, _)| std::cmp::Reverse(t));
    let mut excess = log.bytes.saturating_sub(max);
    let mut from = u64::MAX;
    for (t, size) in newest {
        if excess == 0 {
            break;
        }
        from = t;
        excess = excess.saturating_sub(size);
    }
    for l in &mut log.lanes {
        let keep = l.times.partition_point(|&t| t < from);
        let frames = keep.checked_sub(1).map_or(0, |i| l.chain_ends[i] as usize);
        let gone = l.times.len() - keep;
        log.bytes -= gone * SAMPLE_BYTES + 8 * (l.chains.len() - frames);
        log.dropped += gone as u64;
        l.times.truncate(keep);
        l.ips.truncate(keep);
        l.tasks.truncate(keep);
        l.chain_ends.truncate(keep);
        l.chains.truncate(frames);
    }
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling").field("hz", &self.hz).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spins for `ms` of the thread's CPU time (wall time where there is
    /// no thread CPU clock).
    fn busy(ms: u64) -> u64 {
        let ns = |start: std::time::Instant| {
            crate::platform::thread_cpu_ns().unwrap_or_else(|| start.elapsed().as_nanos() as i64)
        };
        let wall = std::time::Instant::now();
        let until = ns(wall) + ms as i64 * 1_000_000;
        let mut x = 1u64;
        while ns(wall) < until {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        x
    }

    /// Samples land in their thread's lane, in time order, and stop at
    /// the cut; closing leaves no event open.
    #[test]
    fn threads_samples_go_to_their_lanes_until_the_cut() {
        if crate::platform::IMPLEMENTATION != "linux" {
            let s = Sampling::new(1000, 1 << 20, std::env::temp_dir(), 1 << 30);
            s.open_thread(0);
            assert_eq!(s.open_events(), 0);
            assert_eq!(lock(&s.failures).len(), 1, "the portable build says why");
            return;
        }
        let s = Arc::new(Sampling::new(1000, 1 << 20, std::env::temp_dir(), 1 << 30));
        if Sampler::open(1000, 1).is_err() {
            crate::platform::prerequisite_missing("perf_event_open refused a cpu-clock event");
            return;
        }
        assert!(s.start());
        std::thread::scope(|scope| {
            for lane in [0u32, 3] {
                let s = &s;
                scope.spawn(move || {
                    s.open_thread(lane);
                    busy(150);
                });
            }
        });
        assert_eq!(s.open_events(), 2);
        let all = s.cut(u64::MAX);
        assert_eq!(all.lanes.len(), 4);
        assert!(all.lanes[1].times.is_empty() && all.lanes[2].times.is_empty());
        let valgrind = std::env::var_os("SP_MEMCHECK").is_some();
        for lane in [0, 3] {
            let l = &all.lanes[lane];
            assert!(l.times.is_sorted(), "lane {lane}");
            assert_eq!(l.times.len(), l.ips.len());
            // 150 ms of CPU at 1 kHz (valgrind runs it slower and its
            // rate is not the program's).
            if !valgrind {
                assert!(
                    (100..=200).contains(&l.times.len()),
                    "lane {lane}: {}",
                    l.times.len()
                );
            }
        }
        let middle = all.lanes[0].times[all.lanes[0].times.len() / 2];
        let cut = s.cut(middle);
        assert_eq!(cut.lanes[0].times.len(), all.lanes[0].times.len() / 2);
        assert!(cut.lanes[0].times.iter().all(|&t| t < middle));
        s.close();
        assert_eq!(s.open_events(), 0);
        s.open_thread(1);
        assert_eq!(s.open_events(), 0, "closed: no thread opens an event");
    }

    /// Past the memory bound samples are counted, not kept.
    #[test]
    fn samples_past_the_bound_are_counted() {
        if crate::platform::IMPLEMENTATION != "linux" {
            // The portable build samples nothing: nothing kept, the thread
            // named (`threads_samples_go_to_their_lanes_until_the_cut`).
            let s = Sampling::new(1000, 10 * SAMPLE_BYTES, std::env::temp_dir(), 0);
            s.open_thread(0);
            assert_eq!(s.cut(u64::MAX).len(), 0);
            return;
        }
        if Sampler::open(1000, 1).is_err() {
            crate::platform::prerequisite_missing("perf_event_open refused a cpu-clock event");
            return;
        }
        // Room for 3 samples without a chain: 100 ms of CPU at 1 kHz takes
        // more (under valgrind too, at its own rate).
        let bound = 3 * SAMPLE_BYTES;
        let s = Sampling::new(1000, bound, std::env::temp_dir(), 0);
        s.open_thread(0);
        busy(100);
        let cut = s.cut(u64::MAX);
        let l = &cut.lanes[0];
        let bytes = l.times.len() * SAMPLE_BYTES + 8 * l.chains.len();
        assert!(cut.len() <= 3, "{}", cut.len());
        assert!(bytes <= bound, "{bytes}");
        assert!(cut.dropped > 0, "{cut:?}");
        s.close();
    }

    /// Past half the bound the oldest samples spill and the cut reads
    /// them back: every sample kept, the memory within the bound.
    #[test]
    fn samples_past_half_the_bound_spill_and_come_back() {
        if crate::platform::IMPLEMENTATION != "linux" {
            return; // nothing is sampled (see the tests above)
        }
        if Sampler::open(1000, 1).is_err() {
            crate::platform::prerequisite_missing("perf_event_open refused a cpu-clock event");
            return;
        }
        // Room for 8 samples with a chain of 15 frames or so.
        let bound = 8 * (SAMPLE_BYTES + 8 * 15);
        let s = Sampling::new(1000, bound, std::env::temp_dir(), 1 << 30);
        s.open_thread(0);
        let mut taken = 0;
        for _ in 0..20 {
            busy(5);
            s.drain();
            let log = lock(&s.log);
            assert!(log.bytes <= bound, "{} in memory", log.bytes);
            taken = log.lanes[0].times.len()
                + log
                    .spilled
                    .blocks
                    .first()
                    .map_or(0, |b| b.iter().map(|b| b.samples as usize).sum::<usize>());
        }
        let spilled = lock(&s.log).spilled.blocks.first().map_or(0, Vec::len);
        assert!(spilled >= 2, "{spilled} blocks spilled");
        let cut = s.cut(u64::MAX);
        assert_eq!(cut.dropped, 0);
        assert!(cut.len() >= taken, "{} of {taken}", cut.len());
        let l = &cut.lanes[0];
        assert!(l.times.is_sorted());
        assert_eq!(l.chain_ends.len(), l.times.len());
        assert_eq!(*l.chain_ends.last().unwrap_or(&0) as usize, l.chains.len());
        assert!(l.chain_ends.is_sorted());
        // A cut before the end reads back only what precedes it.
        let middle = l.times[l.times.len() / 2];
        let half = s.cut(middle);
        assert_eq!(half.lanes[0].times, l.times[..l.times.len() / 2]);
        assert_eq!(half.lanes[0].chains, l.chains[..half.lanes[0].chains.len()]);
        s.close();
    }

    /// A scratch directory that cannot take the file: the samples stay
    /// within the bound in memory and the rest are counted.
    #[test]
    fn samples_that_cannot_spill_are_counted() {
        if crate::platform::IMPLEMENTATION != "linux" {
            return; // nothing is sampled (see the tests above)
        }
        if Sampler::open(1000, 1).is_err() {
            crate::platform::prerequisite_missing("perf_event_open refused a cpu-clock event");
            return;
        }
        let bound = 8 * (SAMPLE_BYTES + 8 * 15);
        let gone = std::env::temp_dir().join(format!("sp-no-such-dir-{}", std::process::id()));
        let s = Sampling::new(1000, bound, gone, 1 << 30);
        s.open_thread(0);
        for _ in 0..20 {
            busy(5);
            s.drain();
        }
        let log = lock(&s.log);
        assert!(log.spilled.stopped && log.spilled.blocks.is_empty());
        assert!(log.bytes <= bound);
        drop(log);
        let cut = s.cut(u64::MAX);
        assert!(cut.dropped > 0, "{cut:?}");
        s.close();
    }

    /// A long poll of a task does not hold its thread's samples in memory:
    /// those taken in it spill marked with the task, those after it with
    /// none.
    #[test]
    fn a_long_polls_samples_spill_marked_with_its_task() {
        if crate::platform::IMPLEMENTATION != "linux" {
            return; // nothing is sampled (see the tests above)
        }
        if Sampler::open(1000, 1).is_err() {
            crate::platform::prerequisite_missing("perf_event_open refused a cpu-clock event");
            return;
        }
        let bound = 8 * (SAMPLE_BYTES + 8 * 15);
        let s = Sampling::new(1000, bound, std::env::temp_dir(), 1 << 30);
        s.open_thread(0);
        let polls = s.poll_log(0);
        let start = ticks();
        polls.switch(None, Some(7), start);
        for _ in 0..20 {
            busy(5);
            s.drain();
        }
        let end = ticks();
        polls.switch(Some((7, start)), None, end);
        {
            let log = lock(&s.log);
            assert!(log.bytes <= bound, "{} bytes in memory", log.bytes);
            let blocks = log.spilled.blocks.first().map_or(0, Vec::len);
            assert!(blocks >= 2, "{blocks} blocks spilled in the poll");
        }
        busy(30);
        let cut = s.cut(u64::MAX);
        let l = &cut.lanes[0];
        assert_eq!(cut.dropped, 0);
        let conv = TickConverter::through(&[s.start, Anchor::now()]);
        let ns = |t: u64| u64::try_from(conv.ns(t)).unwrap_or(0);
        // Clear of the poll's edges by a millisecond (the map from ticks).
        let (start_ns, end_ns) = (ns(start) + 1_000_000, ns(end) - 1_000_000);
        let mut in_poll = 0;
        for (i, &t) in l.times.iter().enumerate() {
            if (start_ns..end_ns).contains(&t) {
                assert_eq!(l.tasks[i], 7, "a sample in the poll");
                in_poll += 1;
            }
            if t > end_ns + 2_000_000 {
                assert_eq!(l.tasks[i], NO_TASK, "a sample after the poll");
            }
        }
        assert!(in_poll >= 50, "{in_poll} samples in the poll");
        assert!(l.tasks.contains(&NO_TASK), "samples after the poll");
        s.close();
    }
}
