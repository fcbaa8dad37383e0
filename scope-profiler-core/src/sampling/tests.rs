//! The sampling's unit tests: the drainer, the bound, the spill.

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
    let bytes = l.times.len() * SAMPLE_BYTES;
    assert!(cut.len() <= 3, "{}", cut.len());
    assert!(bytes <= bound, "{bytes}");
    assert!(cut.dropped > 0, "{cut:?}");
    s.close();
}

/// Whether this build and machine sample: not in the portable build (the
/// tests above check that nothing is sampled there); a refused event is a
/// missing prerequisite (an error under `CI=true`).
fn can_sample() -> bool {
    if crate::platform::IMPLEMENTATION != "linux" {
        return false;
    }
    if Sampler::open(1000, 1).is_err() {
        crate::platform::prerequisite_missing("perf_event_open refused a cpu-clock event");
        return false;
    }
    true
}

/// Past half the bound the oldest samples spill and the cut reads
/// them back: every sample kept, the memory within the bound.
#[test]
fn samples_past_half_the_bound_spill_and_come_back() {
    if !can_sample() {
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
    assert_eq!(l.chains.len(), l.times.len());
    assert!(
        l.chains
            .iter()
            .all(|&c| c == NO_CHAIN || (c as usize) < cut.chains.len())
    );
    // A cut before the end reads back only what precedes it.
    let middle = l.times[l.times.len() / 2];
    let half = s.cut(middle);
    assert_eq!(half.lanes[0].times, l.times[..l.times.len() / 2]);
    assert_eq!(half.lanes[0].chains, l.chains[..l.times.len() / 2]);
    s.close();
}

/// A scratch directory that cannot take the file: the samples stay
/// within the bound in memory and the rest are counted.
#[test]
fn samples_that_cannot_spill_are_counted() {
    if !can_sample() {
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
    if !can_sample() {
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
