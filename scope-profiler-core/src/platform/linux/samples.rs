//! A thread's sampling event (issue 39): the kernel's `cpu-clock` software
//! timer, user space only (so it opens with `perf_event_paranoid` 2 and in
//! a VM without a PMU), whose samples (instruction address, thread, time
//! on CLOCK_MONOTONIC, the user call chain) the kernel writes to a ring
//! buffer mapped here, read by whichever thread drains it (never a signal
//! handler).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{PERF_TYPE_SOFTWARE, perf_attr, perf_event_open};
use crate::platform::Sample;

/// `PERF_COUNT_SW_CPU_CLOCK`.
const CPU_CLOCK: u64 = 0;
/// `sample_type`: `IP | TID | TIME | CALLCHAIN`.
const SAMPLE_IP: u64 = 1;
const SAMPLE_TID: u64 = 1 << 1;
const SAMPLE_TIME: u64 = 1 << 2;
const SAMPLE_CALLCHAIN: u64 = 1 << 5;
/// The attribute flags: `exclude_kernel`, `exclude_hv`, `freq` (a rate,
/// not a period), `exclude_callchain_kernel`, `use_clockid`.
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
const FREQ: u64 = 1 << 10;
const EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
const USE_CLOCKID: u64 = 1 << 25;
/// Record types in the ring.
const RECORD_LOST: u32 = 2;
const RECORD_SAMPLE: u32 = 9;
/// `perf_event_mmap_page`'s `data_head` and `data_tail`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;
/// The deepest call chain kept per sample (the kernel's own default limit
/// is 127 frames).
const MAX_CHAIN: usize = 128;
/// Call-chain context markers (`PERF_CONTEXT_*`): values from
/// `u64::MAX - 4095` up, which no user address reaches.
const CONTEXT_MARKERS: u64 = u64::MAX - 4095;

/// The calling thread's sampling event and its ring buffer.
pub struct Sampler {
    fd: i32,
    ring: NonNull<u8>,
    /// The mapping's length: one header page, then `data` bytes (a power
    /// of two pages).
    mapped: usize,
    data: usize,
    page: usize,
}

// SAFETY: the mapping and the descriptor belong to the Sampler alone, not
// to its thread: any thread may drain or drop it. The kernel, the ring's
// only writer, synchronizes through `data_head`/`data_tail` (acquire and
// release in `drain`).
unsafe impl Send for Sampler {}
// SAFETY: `&Sampler` reaches only `word` (atomics) and `copy_out` (reads
// of bytes the kernel does not write until `data_tail` moves, which only
// `drain`, taking `&mut self`, does).
unsafe impl Sync for Sampler {}

impl Sampler {
    /// A sampling event of the calling thread at `hz` samples per second
    /// of its CPU time, with a ring of `pages` data pages (rounded up to a
    /// power of two); the errno if the kernel refused.
    pub fn open(hz: u32, pages: usize) -> Result<Sampler, i32> {
        let mut attr = perf_attr(PERF_TYPE_SOFTWARE, CPU_CLOCK);
        attr[2] = u64::from(hz.max(1));
        attr[3] = SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_CALLCHAIN;
        attr[5] = EXCLUDE_KERNEL | EXCLUDE_HV | FREQ | EXCLUDE_CALLCHAIN_KERNEL | USE_CLOCKID;
        // Byte 92 (the high half of word 11): `clockid`.
        let clock = u64::from(libc::CLOCK_MONOTONIC as u32) << 32;
        attr[11] = if cfg!(target_endian = "little") {
            clock
        } else {
            clock >> 32
        };
        // Bytes 108-109 (in word 13, after `aux_watermark`):
        // `sample_max_stack`.
        let max_stack = u64::from(crate::platform::SAMPLE_MAX_STACK);
        attr[13] = if cfg!(target_endian = "little") {
            max_stack << 32
        } else {
            max_stack << 16
        };
        let fd = perf_event_open(&attr, -1)?;
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|p| p.is_power_of_two())
            .unwrap_or(4096);
        let data = pages.max(1).next_power_of_two() * page;
        let mapped = data + page;
        // SAFETY: a shared mapping of the event's ring at an address of the
        // kernel's choosing touches no existing memory; checked below.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        let Some(ring) = NonNull::new(raw.cast::<u8>()).filter(|_| raw != libc::MAP_FAILED) else {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            // SAFETY: `fd` was opened above and is ours.
            unsafe { libc::close(fd) };
            return Err(errno);
        };
        Ok(Sampler {
            fd,
            ring,
            mapped,
            data,
            page,
        })
    }

    /// The header page's `u64` at byte `offset`, shared with the kernel.
    fn word(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: `offset` is 1024 or 1032, inside the header page, 8-byte
        // aligned (the mapping is page aligned); the kernel writes
        // `data_head` and reads `data_tail` there, as atomics of the size
        // of `AtomicU64`, for as long as the mapping lives, which `&self`
        // keeps.
        unsafe { &*self.ring.as_ptr().add(offset).cast::<AtomicU64>() }
    }

    /// Reads `out.len()` bytes of the data area from `at` (a ring offset,
    /// wrapping).
    fn copy_out(&self, at: u64, out: &mut [u8]) {
        let mask = self.data as u64 - 1;
        let start = (at & mask) as usize;
        let first = out.len().min(self.data - start);
        // SAFETY: the data area is `data` bytes from `page`; `start < data`
        // and `first <= data - start`, the rest (< data) wraps to its
        // start. The bytes lie between `data_tail` and `data_head`, which
        // the kernel does not write until `data_tail` moves past them.
        unsafe {
            let base = self.ring.as_ptr().add(self.page);
            std::ptr::copy_nonoverlapping(base.add(start), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(base, out.as_mut_ptr().add(first), out.len() - first);
        }
    }

    /// Hands `f` every sample the kernel wrote since the last drain, in
    /// order, and frees their room; the samples the kernel lost (a full
    /// ring) are returned.
    pub fn drain(&mut self, f: &mut dyn FnMut(&Sample)) -> u64 {
        let head = self.word(DATA_HEAD).load(Ordering::Acquire);
        let mut tail = self.word(DATA_TAIL).load(Ordering::Relaxed);
        let mut lost = 0;
        let mut record = Vec::new();
        let mut sample = Sample::default();
        while head.wrapping_sub(tail) >= 8 {
            let mut header = [0u8; 8];
            self.copy_out(tail, &mut header);
            let kind = u32::from_ne_bytes([header[0], header[1], header[2], header[3]]);
            let size = u16::from_ne_bytes([header[6], header[7]]) as u64;
            if size < 8 || size > head.wrapping_sub(tail) {
                break; // never written so: the rest is not trusted
            }
            record.resize(size as usize - 8, 0);
            self.copy_out(tail + 8, &mut record);
            match kind {
                RECORD_SAMPLE if parse(&record, &mut sample) => f(&sample),
                RECORD_LOST => lost += field(&record, 8).unwrap_or(0),
                _ => {}
            }
            tail = tail.wrapping_add(size);
        }
        self.word(DATA_TAIL).store(tail, Ordering::Release);
        lost
    }
}

/// The `u64` at byte `at` of `record`.
fn field(record: &[u8], at: usize) -> Option<u64> {
    let bytes = record.get(at..at + 8)?;
    Some(u64::from_ne_bytes(bytes.try_into().ok()?))
}

/// A sample record's body (`IP | TID | TIME | CALLCHAIN`) into `s`;
/// `false` if it is shorter than it says.
fn parse(record: &[u8], s: &mut Sample) -> bool {
    let (Some(ip), Some(pid_tid), Some(time), Some(nr)) = (
        field(record, 0),
        field(record, 8),
        field(record, 16),
        field(record, 24),
    ) else {
        return false;
    };
    s.ip = ip;
    // `pid` then `tid`, two u32s.
    s.tid = (if cfg!(target_endian = "little") {
        pid_tid >> 32
    } else {
        pid_tid
    }) as u32;
    s.time_ns = time;
    s.chain.clear();
    let nr = usize::try_from(nr).unwrap_or(usize::MAX);
    if nr > (record.len() - 32) / 8 {
        return false;
    }
    // The chain starts with a context marker and the interrupted address
    // itself; only the user frames' return addresses are kept.
    let mut skipped_ip = false;
    for i in 0..nr {
        let Some(addr) = field(record, 32 + 8 * i) else {
            return false;
        };
        if addr >= CONTEXT_MARKERS {
            continue;
        }
        if !skipped_ip && addr == ip {
            skipped_ip = true;
            continue;
        }
        if s.chain.len() < MAX_CHAIN {
            s.chain.push(addr);
        }
    }
    true
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: the mapping and the descriptor were made in `open` and
        // are this Sampler's alone; nothing refers to them after the drop.
        unsafe {
            libc::munmap(self.ring.as_ptr().cast(), self.mapped);
            libc::close(self.fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spins until `until` in plain arithmetic (no call inside the inner
    /// loop, in a debug build too), the clock read once in 100,000 rounds.
    #[inline(never)]
    fn busy(until: std::time::Instant) -> u64 {
        let mut x = 1u64;
        while std::time::Instant::now() < until {
            let mut i = 0;
            while i < 100_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                i += 1;
            }
        }
        std::hint::black_box(x)
    }

    /// Under valgrind (scripts/memcheck.sh sets SP_MEMCHECK) the thread
    /// runs valgrind's translation of its code, one thread at a time: the
    /// samples' addresses are not the program's and their rate is not its
    /// CPU time's. The ring's reading, what memcheck is there for, is
    /// checked all the same.
    fn under_valgrind() -> bool {
        std::env::var_os("SP_MEMCHECK").is_some()
    }

    #[test]
    fn a_busy_thread_is_sampled_at_its_rate_on_the_monotonic_clock() {
        // Before the event opens: every sample is taken after.
        let before = crate::platform::monotonic_ns() as u64;
        let mut sampler = match Sampler::open(1000, 16) {
            Ok(s) => s,
            Err(errno) => {
                let why = std::io::Error::from_raw_os_error(errno);
                crate::platform::prerequisite_missing(&format!(
                    "perf_event_open(cpu-clock): {why}"
                ));
                return;
            }
        };
        let cpu0 = crate::platform::thread_cpu_ns().unwrap_or(0);
        busy(std::time::Instant::now() + std::time::Duration::from_millis(300));
        let cpu = crate::platform::thread_cpu_ns().unwrap_or(0) - cpu0;
        let mut samples = Vec::new();
        let lost = sampler.drain(&mut |s| samples.push(s.clone()));
        // After the drain: every sample it gave was taken before.
        let after = crate::platform::monotonic_ns() as u64;
        assert_eq!(lost, 0);
        // 1 kHz of this thread's CPU time, within 20%.
        let expected = cpu as f64 / 1e6;
        let n = samples.len() as f64;
        assert!(
            (n - expected).abs() <= expected * 0.2 || under_valgrind() && n > 0.0,
            "{n} samples for {expected:.0} ms of CPU"
        );
        let tid = crate::platform::native_thread_id() as u32;
        let busy_at = busy as fn(std::time::Instant) -> u64 as usize as u64;
        for s in &samples {
            assert_eq!(s.tid, tid);
            assert!(
                before <= s.time_ns && s.time_ns <= after,
                "{s:?} not within {before}..{after}"
            );
        }
        // Most land in `busy` (its code follows `busy_at`).
        let inside = samples
            .iter()
            .filter(|s| s.ip >= busy_at && s.ip < busy_at + 4096)
            .count();
        assert!(
            inside * 2 > samples.len() || under_valgrind(),
            "{inside} of {}",
            samples.len()
        );
        // A second drain: only what came since (the timer runs on).
        let last = samples.iter().map(|s| s.time_ns).max().unwrap_or(0);
        sampler.drain(&mut |s| assert!(s.time_ns > last, "drained twice: {s:?}"));
    }

    fn open_or_skip(pages: usize) -> Option<Sampler> {
        match Sampler::open(1000, pages) {
            Ok(s) => Some(s),
            Err(errno) => {
                let why = std::io::Error::from_raw_os_error(errno);
                crate::platform::prerequisite_missing(&format!(
                    "perf_event_open(cpu-clock): {why}"
                ));
                None
            }
        }
    }

    /// A one-page ring drained every 20 ms: its records wrap around its
    /// end many times, and none is lost or torn.
    #[test]
    fn a_small_ring_drained_often_wraps_without_a_loss() {
        let Some(mut sampler) = open_or_skip(1) else {
            return;
        };
        let tid = crate::platform::native_thread_id() as u32;
        let cpu0 = crate::platform::thread_cpu_ns().unwrap_or(0);
        let (mut samples, mut lost, mut last) = (0usize, 0, 0);
        // 250 ms of this thread's CPU (however loaded the machine), in
        // slices of 20 ms of wall time, each drained.
        for _ in 0..500 {
            if crate::platform::thread_cpu_ns().unwrap_or(0) - cpu0 >= 250_000_000 {
                break;
            }
            busy(std::time::Instant::now() + std::time::Duration::from_millis(20));
            lost += sampler.drain(&mut |s| {
                assert_eq!(s.tid, tid);
                assert!(s.time_ns >= last, "in order");
                last = s.time_ns;
                samples += 1;
            });
        }
        let expected = (crate::platform::thread_cpu_ns().unwrap_or(0) - cpu0) as f64 / 1e6;
        assert_eq!(lost, 0);
        assert!(
            (samples as f64 - expected).abs() <= expected * 0.2 || under_valgrind(),
            "{samples} samples for {expected:.0} ms of CPU"
        );
        // More bytes went through the ring than it holds (a sample is at
        // least 40 bytes).
        assert!(samples * 40 > 2 * 4096 || under_valgrind(), "{samples}");
    }

    /// A ring not drained fills: the kernel counts what it could not write.
    #[test]
    fn a_full_ring_counts_its_losses() {
        let Some(mut sampler) = open_or_skip(1) else {
            return;
        };
        let cpu0 = crate::platform::thread_cpu_ns().unwrap_or(0);
        busy(std::time::Instant::now() + std::time::Duration::from_millis(400));
        let mut samples = 0u64;
        let mut lost = sampler.drain(&mut |_| samples += 1);
        // The kernel writes its count of lost samples once there is room.
        busy(std::time::Instant::now() + std::time::Duration::from_millis(50));
        lost += sampler.drain(&mut |_| samples += 1);
        assert!(lost > 0, "{samples} samples, none lost");
        assert!(samples > 10, "{samples}");
        // Every tick is a sample or a loss (1 kHz of CPU time, within 20%).
        let expected = (crate::platform::thread_cpu_ns().unwrap_or(0) - cpu0) as f64 / 1e6;
        let total = (samples + lost) as f64;
        assert!(
            (total - expected).abs() <= expected * 0.2 || under_valgrind(),
            "{samples} + {lost} lost for {expected:.0} ms of CPU"
        );
    }

    /// `depth` frames of recursion around `busy`: a deep stack.
    #[inline(never)]
    fn deep(depth: u32, until: std::time::Instant) -> u64 {
        if depth == 0 {
            return busy(until);
        }
        std::hint::black_box(deep(depth - 1, until)).wrapping_add(1)
    }

    /// The kernel takes `sample_max_stack` (a field at the wrong offset
    /// was `EINVAL`: `open_or_skip` would fail under `CI=true`), and no
    /// chain of a deep stack passes it. (Whether the walk reaches it needs
    /// frame pointers, which this unoptimized build does not keep; the
    /// integration tests' chains are checked in `tests/sampling.rs`.)
    #[test]
    fn a_deep_stacks_chain_stops_at_the_kept_depth() {
        let Some(mut sampler) = open_or_skip(16) else {
            return;
        };
        deep(
            150,
            std::time::Instant::now() + std::time::Duration::from_millis(100),
        );
        let mut longest = 0;
        let mut samples = 0;
        sampler.drain(&mut |s| {
            longest = longest.max(s.chain.len());
            samples += 1;
        });
        assert!(samples > 0);
        let max = usize::from(crate::platform::SAMPLE_MAX_STACK);
        assert!(longest <= max, "a chain of {longest} frames");
    }
}
