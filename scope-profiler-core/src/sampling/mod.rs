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
mod chains;

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use blocks::{Block, Buffers};
pub use chains::{ChainInterner, ChainTable, NO_CHAIN};

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

/// Bytes a kept sample takes: its time, its address, its task and the
/// number of its call chain (the chains are kept once each, apart).
pub const SAMPLE_BYTES: usize = 24;

/// Return addresses kept of a sample's call chain at most (the innermost):
/// 8 bytes each.
pub const MAX_FRAMES: usize = crate::platform::SAMPLE_MAX_STACK as usize;

/// The samples' memory at most.
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
/// thread then ([`NO_TASK`]: none), and the number of the user call
/// chain in the session's [`ChainTable`] ([`NO_CHAIN`]: none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneSamples {
    pub times: Vec<u64>,
    pub ips: Vec<u64>,
    pub tasks: Vec<u32>,
    pub chains: Vec<u32>,
}

impl LaneSamples {
    /// Samples in the lane.
    ///
    /// ```
    /// assert_eq!(scope_profiler_core::internal::sampling::LaneSamples::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether the lane has no sample.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Keeps the first `n` samples.
    fn truncate(&mut self, n: usize) {
        self.times.truncate(n);
        self.ips.truncate(n);
        self.tasks.truncate(n);
        self.chains.truncate(n);
    }

    /// Removes the first `n` samples.
    fn remove_first(&mut self, n: usize) {
        self.times.drain(..n);
        self.ips.drain(..n);
        self.tasks.drain(..n);
        self.chains.drain(..n);
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
    /// The samples' call chains, by number.
    pub chains: ChainTable,
    /// Samples not kept: past the memory bound.
    pub dropped: u64,
    /// Samples kept without their call chain: the chains' share of the
    /// memory bound was full.
    pub unchained: u64,
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
    /// Bytes of the samples in memory (their chains apart).
    bytes: usize,
    /// Every sample's call chain, once each (never spilled).
    chains: ChainInterner,
    dropped: u64,
    unchained: u64,
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
        // rings' size); it is back under half of it once spilled. The
        // chains may take half the bound; past it a sample keeps no chain.
        let max = if log.spilled.stopped {
            self.max_bytes
        } else {
            usize::MAX
        };
        let max_chains = self.max_bytes / 2;
        for t in threads.iter_mut() {
            let lane = t.lane as usize;
            if log.lanes.len() <= lane {
                log.lanes.resize_with(lane + 1, LaneSamples::default);
            }
            let Log {
                lanes,
                bytes,
                chains,
                dropped,
                unchained,
                ..
            } = &mut *log;
            let into = &mut lanes[lane];
            log.lost += t.sampler.drain(&mut |s| {
                if bytes.saturating_add(chains.bytes() + SAMPLE_BYTES) > max {
                    *dropped += 1;
                    return;
                }
                let chain = &s.chain[..s.chain.len().min(MAX_FRAMES)];
                let id = if chain.is_empty() {
                    NO_CHAIN
                } else if chains.bytes() + 8 * chain.len() <= max_chains {
                    chains.intern(chain)
                } else {
                    *unchained += 1;
                    NO_CHAIN
                };
                into.times.push(s.time_ns);
                into.ips.push(s.ip);
                into.tasks.push(NO_TASK);
                into.chains.push(id);
                *bytes += SAMPLE_BYTES;
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
        let room = self.max_bytes.saturating_sub(log.chains.bytes());
        if log.bytes > room / 2 && !log.spilled.stopped {
            self.spill(log, &horizons);
        }
        if log.bytes > room {
            trim(log, room);
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
            let samples = spilled.buffers.encode(lane, n);
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
            });
            spilled.len += block.len() as u64;
            log.bytes -= n * SAMPLE_BYTES;
            lane.remove_first(n);
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
                let chains = log.chains.table().len();
                for block in spilled.blocks.get(index).map_or(&[][..], |b| &b[..]) {
                    let buffers = &mut spilled.buffers;
                    let read = match &spilled.file {
                        Some(f) => crate::scratch::read_at(
                            f,
                            block.offset,
                            block.bytes as usize,
                            &mut buffers.block,
                        )
                        .and_then(|()| buffers.decode(block, chains, &mut cut)),
                        None => Err(std::io::Error::other("the scratch file is gone")),
                    };
                    match read {
                        Ok(()) => read_back += u64::from(block.samples),
                        Err(_) => unread += u64::from(block.samples),
                    }
                }
                let n = l.times.partition_point(|&t| t < until_ns);
                cut.times.extend_from_slice(&l.times[..n]);
                cut.ips.extend_from_slice(&l.ips[..n]);
                cut.tasks.extend_from_slice(&l.tasks[..n]);
                cut.chains.extend_from_slice(&l.chains[..n]);
                // A spilled sample at or past the cut (the clock's margin).
                let keep = cut.times.partition_point(|&t| t < until_ns);
                let cut_len = cut.len();
                if keep < cut_len {
                    cut.truncate(keep);
                    read_back = read_back.saturating_sub((cut_len - keep) as u64);
                }
                cut
            })
            .collect();
        SampleCut {
            hz: self.hz,
            lanes,
            chains: log.chains.table().clone(),
            dropped: log.dropped + unread,
            unchained: log.unchained,
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
    let mut newest: Vec<u64> = log
        .lanes
        .iter()
        .flat_map(|l| l.times.iter().copied())
        .collect();
    newest.sort_unstable_by_key(|&t| std::cmp::Reverse(t));
    let excess = log.bytes.saturating_sub(max).div_ceil(SAMPLE_BYTES);
    let Some(&from) = excess.checked_sub(1).and_then(|i| newest.get(i)) else {
        return;
    };
    for l in &mut log.lanes {
        let keep = l.times.partition_point(|&t| t < from);
        let gone = l.len() - keep;
        log.bytes -= gone * SAMPLE_BYTES;
        log.dropped += gone as u64;
        l.truncate(keep);
    }
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling").field("hz", &self.hz).finish()
    }
}

#[cfg(test)]
mod tests;
