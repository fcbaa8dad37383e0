//! The external sort of the tree exports: calls sorted by [`Call::key`] in
//! runs of `SORT_RUN` calls, each run spilled to an unlinked scratch file in
//! compact blocks and merged when read back. A full run is sorted and
//! written by a thread while the next fills, and the runs are merged by a
//! thread while the caller walks the calls: two cores, when there are.
//!
//! A run is written as blocks of up to `BLOCK` calls, each decodable on its
//! own: per call, six varints of the differences to the call before it in
//! the block (lane, start, call id and region), the duration, and the parent
//! id less the call id. In key order the lane rarely changes, starts grow
//! within a lane and call ids are near each other, so a call takes about
//! 6-11 bytes instead of the 48 of its fields (100M calls: about 0.9 GB of
//! scratch writes instead of 4.8 GB). The scratch file is read back as
//! untrusted bytes: a block that does not decode to its count of calls in
//! exactly its length is an `InvalidData` error, never a panic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::filter::Resolved;
use super::{CHUNK, Lane, LaneMap};
use crate::error::Error;
use crate::profile_reader::ProfileReader;
use crate::scratch;

/// One call in the external sort (its runs are written to scratch files
/// encoded: see `sort`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(super) struct Call {
    pub(super) lane: u64,
    pub(super) start: i64,
    pub(super) duration: i64,
    pub(super) call_id: i64,
    pub(super) parent_id: i64,
    pub(super) region: u64,
}

/// The sort order of calls: lane, start, longest first, call id.
type CallKey = (u64, i64, Reverse<i64>, i64);

impl Call {
    pub(super) fn key(&self) -> CallKey {
        (self.lane, self.start, Reverse(self.duration), self.call_id)
    }

    pub(super) fn end(&self) -> i64 {
        self.start.wrapping_add(self.duration)
    }
}

/// Calls sorted in memory at once before a run is spilled to disk (4M
/// calls: 192 MB of buffer, two while a run is written as the next fills).
pub(super) const SORT_RUN: usize = 4 << 20;

/// Calls per encoded block of a run (and per merge buffer).
const BLOCK: usize = 1 << 14;

/// The sorted calls: in memory, or runs on disk merged by a thread of
/// their own, which hands them on in batches (the merge and the decoding
/// overlap with what the caller does with the calls).
pub(super) struct Sorted {
    memory: std::vec::IntoIter<Call>,
    merged: Option<Receiver<io::Result<Vec<Call>>>>,
}

/// Where one block of a run is in its scratch file.
#[derive(Clone, Copy, Debug)]
struct Block {
    offset: u64,
    len: usize,
    calls: usize,
}

/// A sorted run in a scratch file, read back a block at a time.
struct Run {
    file: File,
    blocks: std::vec::IntoIter<Block>,
    bytes: Vec<u8>,
    buffer: Vec<Call>,
    at: usize,
}

impl Run {
    fn peek(&mut self) -> io::Result<Option<Call>> {
        if self.at >= self.buffer.len() {
            let Some(block) = self.blocks.next() else {
                return Ok(None);
            };
            scratch::read_at(&self.file, block.offset, block.len, &mut self.bytes)?;
            decode(&self.bytes, block.calls, &mut self.buffer)?;
            self.at = 0;
        }
        Ok(self.buffer.get(self.at).copied())
    }
}

/// Batches of merged calls in flight between the merging thread and the
/// reader.
const BATCHES: usize = 4;

/// Merges `runs` into batches of `BLOCK` calls sent on `tx`, then an empty
/// batch; stops at the first error (sent) or when the reader is gone.
fn merge(mut runs: Vec<Run>, tx: SyncSender<io::Result<Vec<Call>>>) {
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, run) in runs.iter_mut().enumerate() {
        match run.peek() {
            Ok(Some(call)) => heap.push(Reverse((call.key(), i))),
            Ok(None) => {}
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
    let mut batch = Vec::with_capacity(BLOCK);
    while let Some(Reverse((_, i))) = heap.pop() {
        let r = &mut runs[i];
        let Some(&call) = r.buffer.get(r.at) else {
            continue;
        };
        r.at += 1;
        batch.push(call);
        match r.peek() {
            Ok(Some(next)) => heap.push(Reverse((next.key(), i))),
            Ok(None) => {}
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
        if batch.len() == BLOCK {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BLOCK));
            if tx.send(Ok(full)).is_err() {
                return;
            }
        }
    }
    if !batch.is_empty() && tx.send(Ok(batch)).is_err() {
        return;
    }
    let _ = tx.send(Ok(Vec::new()));
}

impl Sorted {
    pub(super) fn next_call(&mut self, path: &Path) -> Result<Option<Call>, Error> {
        if let Some(call) = self.memory.next() {
            return Ok(Some(call));
        }
        let Some(rx) = &self.merged else {
            return Ok(None);
        };
        let batch = match rx.recv() {
            Ok(batch) => batch.map_err(|e| Error::io(path, e))?,
            Err(_) => return Err(Error::io(path, io::Error::other(ENDED))),
        };
        if batch.is_empty() {
            self.merged = None;
        }
        self.memory = batch.into_iter();
        Ok(self.memory.next())
    }
}

/// The error of a sort thread that ended without its result.
const ENDED: &str = "the export sort's thread ended early";

/// A run being sorted, encoded and written by a thread of its own; the
/// thread hands back the run and the emptied buffer.
type Spilling = JoinHandle<Result<(Run, Vec<Call>), Error>>;

/// Calls sorted by [`Call::key`] in bounded memory: runs of `run_len`
/// calls sorted in memory and spilled to unlinked scratch files, merged
/// when read; with no more than `run_len` calls, sorted in memory only.
/// A full run is sorted and written by a thread while the next one fills
/// (two runs in memory at most).
pub(super) struct ExternalSort {
    run_len: usize,
    buffer: Vec<Call>,
    runs: Vec<Run>,
    spilling: Option<Spilling>,
    /// The buffer of the run spilled before, emptied, reused.
    spare: Vec<Call>,
    /// Where runs go when the system's temporary directory fails.
    fallback_dir: PathBuf,
}

impl ExternalSort {
    pub(super) fn new(run_len: usize, fallback_dir: PathBuf) -> ExternalSort {
        ExternalSort {
            run_len: run_len.max(1),
            buffer: Vec::new(),
            runs: Vec::new(),
            spilling: None,
            spare: Vec::new(),
            fallback_dir,
        }
    }

    pub(super) fn push(&mut self, call: Call) -> Result<(), Error> {
        self.buffer.push(call);
        if self.buffer.len() >= self.run_len {
            self.spill()?;
        }
        Ok(())
    }

    /// Waits for the run being spilled, if any.
    fn settle(&mut self) -> Result<(), Error> {
        if let Some(handle) = self.spilling.take() {
            let tmp = std::env::temp_dir();
            let (run, spare) = handle
                .join()
                .map_err(|_| Error::io(&tmp, io::Error::other(ENDED)))??;
            self.runs.push(run);
            self.spare = spare;
        }
        Ok(())
    }

    /// Hands the buffer to a thread that sorts it and writes it as a run of
    /// encoded blocks (after the run before it is written).
    fn spill(&mut self) -> Result<(), Error> {
        self.settle()?;
        let next = std::mem::take(&mut self.spare);
        let calls = std::mem::replace(&mut self.buffer, next);
        let fallback = self.fallback_dir.clone();
        let handle = std::thread::Builder::new()
            .name("export-sort".into())
            .spawn(move || write_run(calls, &fallback))
            .map_err(|e| Error::io(std::env::temp_dir(), e))?;
        self.spilling = Some(handle);
        Ok(())
    }

    /// Every call pushed, in key order (I/O errors name `path`). A thread
    /// the system does not start is an error, as a failed write is.
    pub(super) fn finish(mut self, path: &Path) -> Result<Sorted, Error> {
        if (self.spilling.is_some() || !self.runs.is_empty()) && !self.buffer.is_empty() {
            self.spill()?;
        }
        self.settle()?;
        self.spare = Vec::new();
        self.buffer.sort_unstable_by_key(Call::key);
        let merged = if self.runs.is_empty() {
            None
        } else {
            let (tx, rx) = sync_channel(BATCHES);
            let runs = std::mem::take(&mut self.runs);
            std::thread::Builder::new()
                .name("export-merge".into())
                .spawn(move || merge(runs, tx))
                .map_err(|e| Error::io(path, e))?;
            Some(rx)
        };
        Ok(Sorted {
            memory: self.buffer.into_iter(),
            merged,
        })
    }
}

/// Sorts `calls` and writes them as a run of encoded blocks to a scratch
/// file; hands back the run and the emptied buffer.
fn write_run(mut calls: Vec<Call>, fallback_dir: &Path) -> Result<(Run, Vec<Call>), Error> {
    calls.sort_unstable_by_key(Call::key);
    let tmp = std::env::temp_dir();
    let file = scratch::create(&tmp, "export-sort")
        .or_else(|_| scratch::create(fallback_dir, "export-sort"))
        .map_err(|e| Error::io(&tmp, e))?;
    let mut encoded = Vec::new();
    let mut blocks = Vec::with_capacity(calls.len().div_ceil(BLOCK));
    for chunk in calls.chunks(BLOCK) {
        let offset = encoded.len();
        encode(chunk, &mut encoded);
        blocks.push(Block {
            offset: offset as u64,
            len: encoded.len() - offset,
            calls: chunk.len(),
        });
    }
    scratch::write_at(&file, &encoded, 0).map_err(|e| Error::io(&tmp, e))?;
    calls.clear();
    let run = Run {
        file,
        blocks: blocks.into_iter(),
        bytes: Vec::new(),
        buffer: Vec::new(),
        at: 0,
    };
    Ok((run, calls))
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `calls` as one block: varints of each call's fields less the
/// call before it (the parent id less the call's own id).
fn encode(calls: &[Call], out: &mut Vec<u8>) {
    let mut prev = Call::default();
    for c in calls {
        put_varint(out, c.lane.wrapping_sub(prev.lane));
        put_varint(out, zigzag(c.start.wrapping_sub(prev.start)));
        put_varint(out, zigzag(c.duration));
        put_varint(out, zigzag(c.call_id.wrapping_sub(prev.call_id)));
        put_varint(out, zigzag(c.parent_id.wrapping_sub(c.call_id)));
        put_varint(out, zigzag(c.region.wrapping_sub(prev.region) as i64));
        prev = *c;
    }
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt export sort scratch block: {what}"),
    )
}

/// Reads one varint at `*at`; an error past the end or past 10 bytes.
fn get_varint(bytes: &[u8], at: &mut usize) -> io::Result<u64> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let Some(&b) = bytes.get(*at) else {
            return Err(corrupt("truncated"));
        };
        *at += 1;
        if shift == 63 && b > 1 {
            return Err(corrupt("varint overflow"));
        }
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(corrupt("varint overflow"))
}

/// Decodes a block of `calls` calls into `out` (replacing its contents):
/// an error unless `bytes` holds exactly that many.
fn decode(bytes: &[u8], calls: usize, out: &mut Vec<Call>) -> io::Result<()> {
    out.clear();
    let mut at = 0;
    let mut prev = Call::default();
    for _ in 0..calls {
        let lane = prev.lane.wrapping_add(get_varint(bytes, &mut at)?);
        let start = prev
            .start
            .wrapping_add(unzigzag(get_varint(bytes, &mut at)?));
        let duration = unzigzag(get_varint(bytes, &mut at)?);
        let call_id = prev
            .call_id
            .wrapping_add(unzigzag(get_varint(bytes, &mut at)?));
        let parent_id = call_id.wrapping_add(unzigzag(get_varint(bytes, &mut at)?));
        let region = prev
            .region
            .wrapping_add(unzigzag(get_varint(bytes, &mut at)?) as u64);
        prev = Call {
            lane,
            start,
            duration,
            call_id,
            parent_id,
            region,
        };
        out.push(prev);
    }
    if at != bytes.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(())
}

/// Reads every call of the lanes `filter` keeps and sorts them by (lane,
/// start, longest first, call id), spilling sorted runs of `SORT_RUN`
/// calls.
pub(super) fn sort_calls(
    reader: &ProfileReader,
    filter: &Resolved,
) -> Result<(Sorted, Vec<Lane>), Error> {
    let path = reader.path();
    let mut lanes = LaneMap::new(reader);
    lanes.filter = Some(filter);
    let mut sort = ExternalSort::new(SORT_RUN, scratch::dir_of(path));
    for chunk in reader.chunks(CHUNK) {
        let chunk = chunk?;
        let row = &reader.rows()[chunk.row];
        let e = &chunk.events;
        for i in 0..e.len() {
            let task = e.task_ids.as_ref().map_or(-1, |t| t[i]);
            let lane = lanes.lane(row.rank, e.thread_ids[i], task);
            if !lanes.kept(lane) {
                continue;
            }
            sort.push(Call {
                lane,
                start: e.start_ns[i],
                duration: e.durations[i],
                call_id: e.call_ids[i],
                parent_id: e.parent_ids[i],
                region: row.region_id as u64,
            })?;
        }
    }
    if let Some(message) = filter.unmatched(reader, &lanes.lanes) {
        return Err(Error::Usage(message));
    }
    Ok((sort.finish(path)?, lanes.lanes))
}

#[cfg(test)]
mod tests {
    //! The external sort behind the tree exports (issue 29, item 5), and
    //! the encoding of its runs (issue 37, item 6).

    use super::*;

    /// `n` calls in a scrambled order, with equal starts on a lane (longest
    /// first must win) and several lanes.
    fn scrambled(n: u64) -> Vec<Call> {
        (0..n)
            .map(|i| {
                let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                Call {
                    lane: x % 3,
                    start: (x % 7) as i64,
                    duration: (x % 5) as i64,
                    call_id: i as i64,
                    parent_id: -1,
                    region: x % 4,
                }
            })
            .collect()
    }

    fn drain(sort: ExternalSort) -> Vec<Call> {
        let path = Path::new("test");
        let mut sorted = sort.finish(path).unwrap();
        let mut out = Vec::new();
        while let Some(call) = sorted.next_call(path).unwrap() {
            out.push(call);
        }
        out
    }

    #[test]
    fn runs_on_disk_merge_into_the_order_of_one_sort() {
        // At most 300 runs: each is an open scratch file.
        let calls = scrambled(300);
        let mut want = calls.clone();
        want.sort_by_key(Call::key);
        for run_len in [1, 7, 64, 299, 300, 1000] {
            let mut sort = ExternalSort::new(run_len, std::env::temp_dir());
            for &c in &calls {
                sort.push(c).unwrap();
            }
            sort.settle().unwrap();
            let spilled = sort.runs.len();
            assert_eq!(
                spilled,
                300 / run_len,
                "runs spilled while pushing, of {run_len}"
            );
            let got = drain(sort);
            assert_eq!(got, want, "runs of {run_len}");
        }
    }

    #[test]
    fn a_run_of_several_blocks_merges_whole() {
        // Runs longer than a block: every block of every run read back.
        let calls = scrambled(3 * BLOCK as u64 + 5);
        let mut want = calls.clone();
        want.sort_by_key(Call::key);
        let mut sort = ExternalSort::new(BLOCK + BLOCK / 2, std::env::temp_dir());
        for &c in &calls {
            sort.push(c).unwrap();
        }
        sort.settle().unwrap();
        assert_eq!(sort.runs.len(), 2);
        assert_eq!(drain(sort), want);
    }

    #[test]
    fn an_empty_sort_yields_nothing() {
        assert!(drain(ExternalSort::new(4, std::env::temp_dir())).is_empty());
    }

    /// Calls at the limits of every field, in an order that makes every
    /// difference overflow.
    fn extremes() -> Vec<Call> {
        let ints = [i64::MIN, i64::MIN + 1, -1, 0, 1, 127, 128, i64::MAX];
        let uints = [0, 1, 127, 128, u64::MAX - 1, u64::MAX];
        let mut calls = Vec::new();
        for (i, &a) in ints.iter().enumerate() {
            for (j, &b) in ints.iter().enumerate() {
                calls.push(Call {
                    lane: uints[(i + j) % uints.len()],
                    start: a,
                    duration: b,
                    call_id: ints[(i * 3 + j) % ints.len()],
                    parent_id: ints[(i + j * 5) % ints.len()],
                    region: uints[(i * 7 + j) % uints.len()],
                });
            }
        }
        calls
    }

    #[test]
    fn blocks_round_trip_boundary_values() {
        let calls = extremes();
        let mut bytes = Vec::new();
        encode(&calls, &mut bytes);
        let mut out = vec![Call::default(); 3];
        decode(&bytes, calls.len(), &mut out).unwrap();
        assert_eq!(out, calls);
        // An empty block is no bytes.
        bytes.clear();
        encode(&[], &mut bytes);
        assert!(bytes.is_empty());
        decode(&bytes, 0, &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn sorted_calls_take_few_bytes() {
        // One lane, starts 10 ns apart, ids in order, parents near: what
        // the sort's key order mostly meets.
        let calls: Vec<Call> = (0..1000)
            .map(|i| Call {
                lane: 3,
                start: 1_000_000 + i * 10,
                duration: 5,
                call_id: i,
                parent_id: i - 1,
                region: (i % 3) as u64,
            })
            .collect();
        let mut bytes = Vec::new();
        encode(&calls, &mut bytes);
        assert!(bytes.len() <= 6 * calls.len() + 16, "{} bytes", bytes.len());
    }

    #[test]
    fn corrupt_blocks_are_errors() {
        let calls = extremes();
        let mut bytes = Vec::new();
        encode(&calls, &mut bytes);
        let mut out = Vec::new();
        // Truncated anywhere, or with a byte more: an error.
        for len in 0..bytes.len() {
            let err = decode(&bytes[..len], calls.len(), &mut out).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "cut at {len}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer, calls.len(), &mut out).is_err());
        // A count that does not match the bytes.
        assert!(decode(&bytes, calls.len() - 1, &mut out).is_err());
        assert!(decode(&bytes, calls.len() + 1, &mut out).is_err());
        // A varint of 11 bytes, and one over 64 bits.
        assert!(decode(&[0xff; 11], 1, &mut out).is_err());
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert!(decode(&over, 1, &mut out).is_err());
        // Any byte flipped: a value or an error, never a panic.
        for i in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[i] ^= 0x80;
            let _ = decode(&flipped, calls.len(), &mut out);
        }
    }

    #[test]
    fn a_corrupt_scratch_file_is_an_error() {
        let calls = scrambled(2 * BLOCK as u64);
        let mut sort = ExternalSort::new(BLOCK, std::env::temp_dir());
        for &c in &calls {
            sort.push(c).unwrap();
        }
        sort.settle().unwrap();
        assert_eq!(sort.runs.len(), 2);
        // Overwrite the second run's bytes with a truncated varint.
        let len = sort.runs[1].blocks.as_slice()[0].len;
        scratch::write_at(&sort.runs[1].file, &vec![0xffu8; len], 0).unwrap();
        let path = Path::new("scratch");
        let err = match sort.finish(path) {
            Err(e) => e,
            Ok(mut sorted) => loop {
                match sorted.next_call(path) {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("a corrupt run merged without an error"),
                    Err(e) => break e,
                }
            },
        };
        assert!(err.to_string().contains("corrupt"), "{err}");
    }
}
