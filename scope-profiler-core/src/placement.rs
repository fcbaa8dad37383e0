//! Where the backward walk puts each call: at its slot in the file.
//!
//! `DirectRuns` writes runs of consecutive slots straight into the columns
//! of an uncompressed file; `PackedRuns` packs them into an unlinked
//! scratch file that a sink then reads in file order (`PackedReader`);
//! [`InMemory`] keeps every placed call, when they fit the budget.

use std::fs::File;
use std::hash::Hasher;
use std::io;
use std::path::Path;

use crate::fxhash::FxHasher;
use crate::scratch;
use crate::sink::{
    CALL_IDS, ColumnStore, DURATIONS, PARENT_IDS, START_DELTAS, TASK_IDS, THREAD_IDS,
};
use crate::spill::{unzigzag, zigzag};

/// Bytes of a placed call in memory ([`InMemory`], [`SlotRun`]).
pub(crate) const PLACED_BYTES: usize = std::mem::size_of::<PlacedCall>();
/// Bytes of a call in the columns it is emitted in.
pub const COLUMN_BYTES: usize = 6 * 8;

/// Receives every call with its slot, in the order of the backward walk.
pub(crate) trait Placer {
    fn put(&mut self, p: PlacedCall) -> std::io::Result<()>;
}

/// Buffered runs of consecutive slots per region, written straight into
/// the file's columns.
pub(crate) struct DirectRuns<'a> {
    pub columns: &'a dyn ColumnStore,
    pub runs: Vec<SlotRun>,
    pub run_len: usize,
    pub with_tasks: bool,
    /// One column of a run, as written.
    pub values: Vec<i64>,
}

/// One column's value of a placed call.
type Field = fn(&PlacedCall) -> i64;

/// Calls of one region for consecutive slots, in the order they came:
/// descending (the backward walk) or ascending (async calls).
#[derive(Clone, Default)]
pub(crate) struct SlotRun {
    calls: Vec<PlacedCall>,
}

impl DirectRuns<'_> {
    fn flush(&mut self, region: usize) -> std::io::Result<()> {
        let run = &mut self.runs[region];
        if run.calls.is_empty() {
            return Ok(());
        }
        if run.calls.len() > 1 && run.calls[0].slot > run.calls[1].slot {
            run.calls.reverse();
        }
        let first = run.calls[0].slot as usize;
        let fields: [(usize, Field); 6] = [
            (START_DELTAS, |p| p.start),
            (DURATIONS, |p| p.duration),
            (CALL_IDS, |p| p.call),
            (PARENT_IDS, |p| p.parent),
            (THREAD_IDS, |p| p.thread as i64),
            (TASK_IDS, |p| p.task as i64),
        ];
        let written = 5 + usize::from(self.with_tasks);
        for (column, field) in fields.into_iter().take(written) {
            self.values.clear();
            self.values.extend(run.calls.iter().map(field));
            self.columns.write(column, first, &self.values)?;
        }
        run.calls.clear();
        Ok(())
    }

    pub(crate) fn flush_all(&mut self) -> std::io::Result<()> {
        (0..self.runs.len()).try_for_each(|r| self.flush(r))
    }
}

/// Whether `p`'s slot continues `run` (in either direction).
fn follows(run: &SlotRun, p: &PlacedCall) -> bool {
    match run.calls.as_slice() {
        [] => true,
        [only] => p.slot + 1 == only.slot || p.slot == only.slot + 1,
        [a, .., last] => {
            let down = a.slot > last.slot;
            if down {
                p.slot + 1 == last.slot
            } else {
                p.slot == last.slot + 1
            }
        }
    }
}

impl Placer for DirectRuns<'_> {
    fn put(&mut self, p: PlacedCall) -> std::io::Result<()> {
        let region = p.region as usize;
        if !follows(&self.runs[region], &p) || self.runs[region].calls.len() >= self.run_len {
            self.flush(region)?;
        }
        self.runs[region].calls.push(p);
        Ok(())
    }
}

/// One call with its place in the file.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlacedCall {
    pub slot: u64,
    pub start: i64,
    pub duration: i64,
    pub call: i64,
    pub parent: i64,
    pub thread: i32,
    pub task: i32,
    pub region: u32,
}

/// Every placed call, in memory: a session whose calls fit the budget.
#[derive(Default)]
pub struct InMemory {
    pub calls: Vec<PlacedCall>,
}

impl Placer for InMemory {
    fn put(&mut self, p: PlacedCall) -> std::io::Result<()> {
        self.calls.push(p);
        Ok(())
    }
}

/// Whether `total` events need more than `budget` bytes in memory (a
/// [`PlacedCall`] each, then its columns), and so go through
/// packed runs in scratch (`PackedRuns`) instead of [`InMemory`].
pub fn needs_scratch(total: usize, budget: usize) -> bool {
    total > (budget / (PLACED_BYTES + COLUMN_BYTES)).max(4096)
}

/// Placed calls packed into an unlinked scratch file, a run of consecutive
/// slots of one region at a time (a session past the budget that emits
/// through a sink). Each column of a run is its first value and the
/// zigzagged differences of the others from the value before, all at the
/// width of the largest (0, 1, 2, 4 or 8 bytes), so that the scale test's
/// calls take about 6 bytes instead of the 48 of raw columns (200M calls:
/// 1.2 instead of 9.6 GB through the page cache, which had been a third of
/// the placing walk's time), in loops as cheap as copying (LEB128 varints
/// took 2 ns a value each way). A run is
///
/// ```text
/// checksum u64 (Fx hash of what follows)
/// | per column: width u8 | first value i64 | (calls - 1) differences
/// ```
///
/// and an index in memory (24 bytes a run; runs have up to 8192 calls, at
/// least 64) tells where each run is and which slots it holds.
pub(crate) struct PackedRuns {
    file: File,
    runs: Vec<SlotRun>,
    run_len: usize,
    with_tasks: bool,
    /// Packed runs not yet written to the file.
    pending: Vec<u8>,
    /// Bytes written to the file so far.
    written: u64,
    index: Vec<RunEntry>,
}

/// Where a packed run is and what it holds.
#[derive(Clone, Copy, Debug)]
struct RunEntry {
    first_slot: u64,
    offset: u64,
    calls: u32,
    bytes: u32,
}

/// Packed runs are written to the file in pieces of this many bytes.
const PENDING_BYTES: usize = 1 << 20;

/// Bytes of a packed column besides its differences: width and first value.
const COLUMN_HEAD: usize = 1 + 8;

impl PackedRuns {
    /// Packed runs in a new scratch file in `dir`, for calls of `regions`
    /// regions, buffered `run_len` calls per region.
    pub(crate) fn new(
        dir: &Path,
        regions: usize,
        run_len: usize,
        with_tasks: bool,
    ) -> io::Result<PackedRuns> {
        Ok(PackedRuns {
            file: scratch::create(dir, "place")?,
            runs: vec![SlotRun::default(); regions],
            run_len,
            with_tasks,
            pending: Vec::new(),
            written: 0,
            index: Vec::new(),
        })
    }

    fn flush(&mut self, region: usize) -> io::Result<()> {
        let run = &mut self.runs[region];
        if run.calls.is_empty() {
            return Ok(());
        }
        if run.calls.len() > 1 && run.calls[0].slot > run.calls[1].slot {
            run.calls.reverse();
        }
        let at = self.pending.len();
        pack(&run.calls, self.with_tasks, &mut self.pending);
        self.index.push(RunEntry {
            first_slot: run.calls[0].slot,
            offset: self.written + at as u64,
            calls: run.calls.len() as u32,
            bytes: (self.pending.len() - at) as u32,
        });
        run.calls.clear();
        if self.pending.len() >= PENDING_BYTES {
            self.write_pending()?;
        }
        Ok(())
    }

    fn write_pending(&mut self) -> io::Result<()> {
        scratch::write_at(&self.file, &self.pending, self.written)?;
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Every run written; a reader of the `total` placed calls in slot
    /// order.
    ///
    /// # Errors
    /// The scratch file's write error, or `InvalidData` if the runs do not
    /// hold every slot below `total` exactly once.
    pub(crate) fn finish(mut self, total: usize) -> io::Result<PackedReader> {
        (0..self.runs.len()).try_for_each(|r| self.flush(r))?;
        self.write_pending()?;
        self.index.sort_unstable_by_key(|e| e.first_slot);
        let mut next = 0u64;
        for e in &self.index {
            if e.first_slot != next {
                return Err(corrupt(&format!(
                    "the placed runs do not hold slot {next} exactly once"
                )));
            }
            next += u64::from(e.calls);
        }
        if next != total as u64 {
            return Err(corrupt(&format!(
                "the placed runs hold {next} calls, not {total}"
            )));
        }
        Ok(PackedReader {
            file: self.file,
            index: self.index,
            next_run: 0,
            with_tasks: self.with_tasks,
            block: Vec::new(),
            run: Default::default(),
            at: 0,
        })
    }
}

impl Placer for PackedRuns {
    fn put(&mut self, p: PlacedCall) -> io::Result<()> {
        let region = p.region as usize;
        if !follows(&self.runs[region], &p) || self.runs[region].calls.len() >= self.run_len {
            self.flush(region)?;
        }
        self.runs[region].calls.push(p);
        Ok(())
    }
}

/// A placed call's value in packed column `C` (start, duration, call,
/// parent, thread, task), chosen at compile time.
#[inline(always)]
fn packed<const C: usize>(p: &PlacedCall) -> i64 {
    match C {
        0 => p.start,
        1 => p.duration,
        2 => p.call,
        3 => p.parent,
        4 => p.thread as i64,
        _ => p.task as i64,
    }
}

/// Appends the packed run of `calls` (ascending slots, at least one) to
/// `out`.
fn pack(calls: &[PlacedCall], with_tasks: bool, out: &mut Vec<u8>) {
    let at = out.len();
    out.extend_from_slice(&[0; 8]);
    pack_column::<0>(calls, out);
    pack_column::<1>(calls, out);
    pack_column::<2>(calls, out);
    pack_column::<3>(calls, out);
    pack_column::<4>(calls, out);
    if with_tasks {
        pack_column::<5>(calls, out);
    }
    let sum = checksum(&out[at + 8..]);
    out[at..at + 8].copy_from_slice(&sum.to_le_bytes());
}

/// Appends column `C` of `calls` to `out`: its width, first value and
/// differences.
fn pack_column<const C: usize>(calls: &[PlacedCall], out: &mut Vec<u8>) {
    let Some((head, rest)) = calls.split_first() else {
        return;
    };
    let mut previous = packed::<C>(head);
    let mut widest = 0u64;
    for p in rest {
        let v = packed::<C>(p);
        widest |= zigzag(v.wrapping_sub(previous));
        previous = v;
    }
    let width = match widest {
        0 => 0,
        1..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xffff_ffff => 4,
        _ => 8,
    };
    out.push(width as u8);
    out.extend_from_slice(&packed::<C>(head).to_le_bytes());
    match width {
        0 => {}
        1 => pack_differences::<C, 1>(head, rest, out),
        2 => pack_differences::<C, 2>(head, rest, out),
        4 => pack_differences::<C, 4>(head, rest, out),
        _ => pack_differences::<C, 8>(head, rest, out),
    }
}

/// Appends the differences of column `C` over `rest` (after `head`), `W`
/// bytes each (they fit).
fn pack_differences<const C: usize, const W: usize>(
    head: &PlacedCall,
    rest: &[PlacedCall],
    out: &mut Vec<u8>,
) {
    let base = out.len();
    out.resize(base + rest.len() * W, 0);
    let mut previous = packed::<C>(head);
    for (bytes, p) in out[base..].chunks_exact_mut(W).zip(rest) {
        let v = packed::<C>(p);
        bytes.copy_from_slice(&zigzag(v.wrapping_sub(previous)).to_le_bytes()[..W]);
        previous = v;
    }
}

/// Appends to `column` the values after `first` whose differences are
/// `bytes`, `W` bytes each.
fn unpack_column<const W: usize>(first: i64, bytes: &[u8], column: &mut Vec<i64>) {
    let mut previous = first;
    column.extend(bytes.chunks_exact(W).map(|d| {
        let mut word = [0u8; 8];
        word[..W].copy_from_slice(d);
        previous = previous.wrapping_add(unzigzag(u64::from_le_bytes(word)));
        previous
    }));
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// Reads packed runs back in slot order, a step of calls at a time.
pub(crate) struct PackedReader {
    file: File,
    index: Vec<RunEntry>,
    next_run: usize,
    with_tasks: bool,
    /// A run's bytes as read.
    block: Vec<u8>,
    /// The columns of the run being read, and how many of its calls have
    /// been handed out.
    run: [Vec<i64>; 6],
    at: usize,
}

impl PackedReader {
    /// The next `len` calls' columns (start, duration, call, parent,
    /// thread, task: the task column only with tasks) in place of `out`'s.
    ///
    /// # Errors
    /// The scratch file's read error, or `InvalidData` naming the run if it
    /// is not what was written (a bit flip, a cut) or there are fewer than
    /// `len` calls left.
    pub(crate) fn fill(&mut self, len: usize, mut out: [&mut Vec<i64>; 6]) -> io::Result<()> {
        let columns = 5 + usize::from(self.with_tasks);
        for column in out.iter_mut() {
            column.clear();
        }
        let mut filled = 0;
        while filled < len {
            if self.at == self.run[0].len() {
                // A whole run that fits is unpacked straight into `out`.
                if let Some(entry) = self.index.get(self.next_run)
                    && entry.calls as usize <= len - filled
                {
                    self.next_run += 1;
                    filled += entry.calls as usize;
                    self.unpack(*entry, &mut out)?;
                    continue;
                }
                self.next()?;
            }
            let take = (len - filled).min(self.run[0].len() - self.at);
            for (column, run) in out.iter_mut().zip(&self.run).take(columns) {
                column.extend_from_slice(&run[self.at..self.at + take]);
            }
            self.at += take;
            filled += take;
        }
        Ok(())
    }

    /// Reads and unpacks the next run into the reader's own columns.
    fn next(&mut self) -> io::Result<()> {
        let Some(&entry) = self.index.get(self.next_run) else {
            return Err(corrupt("fewer placed calls than the file's rows hold"));
        };
        self.next_run += 1;
        let mut run = std::mem::take(&mut self.run);
        for column in &mut run {
            column.clear();
        }
        let unpacked = self.unpack(entry, &mut run.each_mut());
        self.run = run;
        self.at = 0;
        unpacked
    }

    /// Reads the run of `entry` and appends its calls' columns to `out`'s.
    fn unpack(&mut self, entry: RunEntry, out: &mut [&mut Vec<i64>; 6]) -> io::Result<()> {
        let whose = |what: &str| {
            corrupt(&format!(
                "the run of placed calls at byte {} of the scratch file: {what}",
                entry.offset
            ))
        };
        let calls = entry.calls as usize;
        let columns = 5 + usize::from(self.with_tasks);
        let bytes = entry.bytes as usize;
        if calls == 0
            || bytes < 8 + columns * COLUMN_HEAD
            || bytes > 8 + columns * (COLUMN_HEAD + 8 * calls)
        {
            return Err(whose("an impossible length"));
        }
        scratch::read_at(&self.file, entry.offset, bytes, &mut self.block)?;
        let sum = u64::from_le_bytes(self.block[..8].try_into().unwrap_or_default());
        let body = &self.block[8..];
        if checksum(body) != sum {
            return Err(whose("its checksum does not match"));
        }
        let mut at = 0;
        for column in out.iter_mut().take(columns) {
            let Some(head) = body.get(at..at + COLUMN_HEAD) else {
                return Err(whose("cut short"));
            };
            let width = usize::from(head[0]);
            let first = i64::from_le_bytes(head[1..].try_into().unwrap_or_default());
            at += COLUMN_HEAD;
            let Some(differences) = body.get(at..at + width * (calls - 1)) else {
                return Err(whose("cut short"));
            };
            at += differences.len();
            column.reserve(calls);
            column.push(first);
            match width {
                0 => column.extend(std::iter::repeat_n(first, calls - 1)),
                1 => unpack_column::<1>(first, differences, column),
                2 => unpack_column::<2>(first, differences, column),
                4 => unpack_column::<4>(first, differences, column),
                8 => unpack_column::<8>(first, differences, column),
                _ => return Err(whose("a column of an impossible width")),
            }
        }
        if at != body.len() {
            return Err(whose("longer than its calls"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of every packed width: equal (0 bytes), small, 2-, 4- and
    /// 8-byte differences, negative ones and the extremes.
    fn value(column: u64, i: u64) -> i64 {
        match (column + i) % 7 {
            0 => 5,
            1 => 5 + (i % 200) as i64,
            2 => -((i * 40_000) as i64),
            3 => (i as i64) << 40,
            4 => i64::MIN + i as i64,
            5 => i64::MAX - i as i64,
            _ => 1_000_000_007 * i as i64,
        }
    }

    /// The calls of `regions` rows of `per_row` slots each, as the backward
    /// walk puts them: descending slots per region, regions interleaved.
    fn calls(regions: u64, per_row: u64, varied: bool) -> Vec<PlacedCall> {
        let mut out = Vec::new();
        for k in (0..per_row).rev() {
            for region in 0..regions {
                let slot = region * per_row + k;
                let v = |c: u64| if varied { value(c, slot) } else { 7 };
                out.push(PlacedCall {
                    slot,
                    start: v(0),
                    duration: v(1),
                    call: v(2),
                    parent: v(3),
                    thread: v(4) as i32,
                    task: v(5) as i32,
                    region: region as u32,
                });
            }
        }
        out
    }

    fn pack_all(placed: &[PlacedCall], regions: usize, with_tasks: bool) -> PackedRuns {
        let mut packed = PackedRuns::new(&std::env::temp_dir(), regions, 64, with_tasks).unwrap();
        for p in placed {
            packed.put(*p).unwrap();
        }
        packed
    }

    #[test]
    fn packed_runs_read_back_in_slot_order_at_any_step() {
        for (varied, with_tasks) in [(true, true), (true, false), (false, true)] {
            let placed = calls(3, 1000, varied);
            let total = placed.len();
            let mut reader = pack_all(&placed, 3, with_tasks).finish(total).unwrap();
            // Packed: the scratch file holds less than raw columns would.
            assert!(reader.index.len() >= 3 * 1000 / 64);
            let mut by_slot = placed.clone();
            by_slot.sort_by_key(|p| p.slot);
            let mut columns: [Vec<i64>; 6] = Default::default();
            let mut first = 0;
            for step in [1usize, 63, 64, 65, 1000].iter().cycle() {
                if first == total {
                    break;
                }
                let len = (*step).min(total - first);
                reader.fill(len, columns.each_mut()).unwrap();
                for (i, p) in by_slot[first..first + len].iter().enumerate() {
                    let want = [
                        p.start,
                        p.duration,
                        p.call,
                        p.parent,
                        i64::from(p.thread),
                        i64::from(p.task),
                    ];
                    for (c, w) in want.iter().enumerate().take(5 + usize::from(with_tasks)) {
                        assert_eq!(columns[c][i], *w, "slot {} column {c}", p.slot);
                    }
                }
                assert_eq!(columns[5].len(), if with_tasks { len } else { 0 });
                first += len;
            }
            assert!(
                reader.fill(1, columns.each_mut()).is_err(),
                "read past the end"
            );
        }
    }

    #[test]
    fn equal_values_take_a_few_bytes_a_run() {
        let placed = calls(1, 4096, false);
        let packed = pack_all(&placed, 1, true);
        let reader = packed.finish(placed.len()).unwrap();
        let bytes: u64 = reader.index.iter().map(|e| u64::from(e.bytes)).sum();
        // 64 runs of 8 + 6 x 9 bytes: no differences at all.
        assert_eq!(bytes, 64 * (8 + 6 * 9));
    }

    #[test]
    fn missing_slots_and_changed_bytes_are_errors_naming_the_run() {
        let placed = calls(2, 300, true);
        let total = placed.len();
        let e = pack_all(&placed, 2, true).finish(total + 1).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let e = pack_all(&placed[1..], 2, true).finish(total).err().unwrap();
        assert!(e.to_string().contains("slot"), "{e}");

        let written: u64 = {
            let reader = pack_all(&placed, 2, true).finish(total).unwrap();
            reader.index.iter().map(|e| u64::from(e.bytes)).sum()
        };
        // Every byte of the file, flipped in turn, makes reading it all an
        // error (the checksum, or the lengths it guards).
        let mut columns: [Vec<i64>; 6] = Default::default();
        for at in (0..written).step_by(7) {
            let mut reader = pack_all(&placed, 2, true).finish(total).unwrap();
            let mut byte: Vec<u8> = Vec::new();
            scratch::read_at(&reader.file, at, 1, &mut byte).unwrap();
            byte[0] ^= 0x10;
            scratch::write_at(&reader.file, &byte, at).unwrap();
            let e = reader.fill(total, columns.each_mut()).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "byte {at}: {e}");
            assert!(e.to_string().contains("of the scratch file"), "{e}");
        }
    }
}
