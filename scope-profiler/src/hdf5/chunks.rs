//! Compressed event columns, chunk by chunk on every core.
//!
//! A compressed column is a chunked dataset with HDF5's shuffle and deflate
//! filters. Rather than have HDF5 run the filters on one thread, the chunks
//! are filtered here the way those filters do (shuffle: byte `j` of every
//! element, then byte `j + 1`; deflate: a zlib stream) by worker threads,
//! with zlib-rs (through flate2), and handed to HDF5 already filtered
//! (`H5Dwrite_chunk`). Any reader decodes them with its stock filters.
//!
//! Reading goes the other way ([`ChunkReader`]): the stored chunks of such a
//! column, ours or the Python package's, are read raw and inflated with
//! zlib-rs and unshuffled here, off the library's lock, one column per
//! thread: zlib's inflate behind HDF5's filter was 57% of reading a big
//! file.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use flate2::{Compress, Decompress, FlushCompress, FlushDecompress, Status};

use super::h5::{Dataset, Result};

/// One chunk of a column, to be filtered and written.
struct Job<'a> {
    column: usize,
    /// Index of the chunk's first element in the column.
    first: usize,
    /// The chunk's values: a whole chunk, or the column's last values.
    values: &'a [i64],
}

/// A worker's own compressor and buffers, kept from batch to batch.
struct Worker {
    compressor: Compress,
    shuffled: Vec<u8>,
    deflated: Vec<u8>,
    padded: Vec<i64>,
    /// The filtered bytes of the last chunk of one repeated value: a column
    /// that is constant over a chunk (the thread ids of one thread, the
    /// task ids of sync calls) is deflated once per value, not per chunk
    /// (deflating 80 MB of one value took 81 ms of 630).
    constant: Option<(i64, Vec<u8>)>,
}

/// The compressed columns of a file being written in order: values are
/// gathered per column until a chunk is full; full chunks are filtered in
/// parallel, then written in order.
pub(super) struct ChunkWriter {
    /// Elements per chunk.
    chunk: usize,
    /// Per column: the values written, and those gathered for the next
    /// chunk (which follow them).
    pending: Vec<(usize, Vec<i64>)>,
    /// Events in each column.
    len: usize,
    workers: Vec<Worker>,
    /// The filtered chunks of a batch (buffers reused from batch to batch).
    filtered: Vec<Vec<u8>>,
}

impl ChunkWriter {
    /// A writer for `columns` columns of `len` values in chunks of `chunk`
    /// values, deflated at `level` (0-9, as HDF5's filter takes it).
    pub(super) fn new(columns: usize, len: usize, chunk: usize, level: u8) -> Result<ChunkWriter> {
        let level = flate2::Compression::new(u32::from(level.min(9)));
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(ChunkWriter {
            chunk: chunk.max(1),
            pending: (0..columns).map(|_| (0, Vec::new())).collect(),
            len,
            workers: (0..threads)
                .map(|_| Worker {
                    compressor: Compress::new(level, true),
                    shuffled: Vec::new(),
                    deflated: Vec::new(),
                    padded: Vec::new(),
                    constant: None,
                })
                .collect(),
            filtered: Vec::new(),
        })
    }

    /// Takes the values of each `(column, values)` of `parts` from element
    /// `offset` on (columns are filled in order, without gaps); writes every
    /// chunk this completes (the last one, partial, once the column is
    /// complete). Whole chunks are compressed from `parts` in place; only a
    /// chunk that straddles two calls is gathered in a buffer.
    pub(super) fn put(
        &mut self,
        offset: usize,
        datasets: &[&Dataset],
        parts: &[(usize, &[i64])],
    ) -> Result<()> {
        let chunk = self.chunk;
        // 1. Complete each column's straddling chunk from the new values.
        let mut rests: Vec<(usize, &[i64])> = Vec::with_capacity(parts.len());
        for &(column, values) in parts {
            let Some((written, pending)) = self.pending.get_mut(column) else {
                return Err(format!("no compressed column {column}").into());
            };
            if *written + pending.len() != offset || offset + values.len() > self.len {
                return Err(format!(
                    "values {offset}..+{} of a column filled up to {} of {}",
                    values.len(),
                    *written + pending.len(),
                    self.len
                )
                .into());
            }
            let top_up = if pending.is_empty() {
                0
            } else {
                (chunk - pending.len()).min(values.len())
            };
            pending.extend_from_slice(&values[..top_up]);
            rests.push((column, &values[top_up..]));
        }
        // 2. The chunks to write: the completed buffer, whole chunks of the
        // new values, a column's last partial chunk; what is left over is
        // kept for the next call.
        let mut jobs = Vec::new();
        let mut consumed = vec![false; self.pending.len()];
        let mut tails: Vec<(usize, &[i64])> = Vec::new();
        for &(column, rest) in &rests {
            let (written, pending) = &self.pending[column];
            // Every value of the column is in: its last chunk is written.
            let complete = *written + pending.len() + rest.len() == self.len;
            let mut first = *written;
            if !pending.is_empty() && (pending.len() == chunk || complete) {
                jobs.push(Job {
                    column,
                    first,
                    values: pending,
                });
                first += pending.len();
                consumed[column] = true;
            } else if !pending.is_empty() {
                continue; // still short of a chunk: `rest` is empty
            }
            let mut rest = rest;
            while rest.len() >= chunk || (complete && !rest.is_empty()) {
                let n = chunk.min(rest.len());
                jobs.push(Job {
                    column,
                    first,
                    values: &rest[..n],
                });
                first += n;
                rest = &rest[n..];
            }
            tails.push((column, rest));
        }
        if !jobs.is_empty() {
            self.filtered.resize_with(jobs.len(), Vec::new);
            filter(&jobs, chunk, &mut self.workers, &mut self.filtered)?;
            for (job, bytes) in jobs.iter().zip(&self.filtered) {
                datasets[job.column].write_chunk(job.first, bytes)?;
            }
        }
        let written_now: Vec<(usize, usize)> =
            jobs.iter().map(|j| (j.column, j.values.len())).collect();
        drop(jobs);
        // 3. Account for what was written; keep the tails.
        for (column, n) in written_now {
            self.pending[column].0 += n;
        }
        for (column, done) in consumed.into_iter().enumerate() {
            if done {
                self.pending[column].1.clear();
            }
        }
        for (column, tail) in tails {
            self.pending[column].1.extend_from_slice(tail);
        }
        Ok(())
    }

    /// An error unless every column was filled and written.
    pub(super) fn check_complete(&self) -> Result<()> {
        for (column, (start, pending)) in self.pending.iter().enumerate() {
            if *start != self.len || !pending.is_empty() {
                return Err(format!(
                    "compressed column {column}: {start} of {} values written",
                    self.len
                )
                .into());
            }
        }
        Ok(())
    }
}

/// Shuffles and deflates every job's chunk into `out` (one buffer per job),
/// each worker on a thread of its own.
fn filter(
    jobs: &[Job<'_>],
    chunk: usize,
    workers: &mut [Worker],
    out: &mut [Vec<u8>],
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<&mut Vec<u8>>> = out.iter_mut().map(Mutex::new).collect();
    let work = |worker: &mut Worker| -> std::result::Result<(), String> {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(i) else {
                return Ok(());
            };
            // A chunk is stored whole: the last one is padded (what lies
            // past the extent is never read).
            let values = if job.values.len() == chunk {
                job.values
            } else {
                worker.padded.clear();
                worker.padded.extend_from_slice(job.values);
                worker.padded.resize(chunk, 0);
                &worker.padded
            };
            let first = values[0];
            let constant = values.iter().all(|&v| v == first);
            if !constant || worker.constant.as_ref().is_none_or(|(v, _)| *v != first) {
                shuffle(values, &mut worker.shuffled);
                zlib_compress(
                    &mut worker.compressor,
                    &worker.shuffled,
                    &mut worker.deflated,
                )?;
                if constant {
                    worker.constant = Some((first, worker.deflated.clone()));
                }
            }
            let bytes = match &worker.constant {
                Some((v, bytes)) if constant && *v == first => bytes,
                _ => &worker.deflated,
            };
            // The batch keeps the compressed bytes only, not a bound each.
            let mut slot = crate::sync::lock(&slots[i]);
            slot.clear();
            slot.extend_from_slice(bytes);
        }
    };
    let busy = workers.len().min(jobs.len()).max(1);
    let (first, others) = workers[..busy].split_at_mut(1);
    let results: Vec<std::result::Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = others.iter_mut().map(|w| s.spawn(|| work(w))).collect();
        let mut results = vec![work(&mut first[0])];
        for h in handles {
            results.push(
                h.join()
                    .unwrap_or_else(|_| Err("a compression thread panicked".into())),
            );
        }
        results
    });
    for r in results {
        r?;
    }
    Ok(())
}

/// Decodes the chunks of one shuffled and deflated column of 64-bit
/// integers, keeping the last chunk decoded (reads go in order).
pub(super) struct ChunkReader {
    /// Elements per chunk.
    chunk: usize,
    state: Mutex<ReadState>,
}

/// A column reader's buffers and its last chunk.
struct ReadState {
    /// Index of the chunk in `values`.
    index: Option<usize>,
    values: Vec<i64>,
    raw: Vec<u8>,
    shuffled: Vec<u8>,
    decompressor: Decompress,
}

impl ChunkReader {
    /// A reader for `dataset`, if its chunks can be decoded here (see
    /// `Dataset::shuffled_deflate_i64_chunks`).
    pub(super) fn new(dataset: &Dataset) -> Result<Option<ChunkReader>> {
        Ok(dataset
            .shuffled_deflate_i64_chunks()?
            .map(|chunk| ChunkReader {
                chunk,
                state: Mutex::new(ReadState {
                    index: None,
                    values: Vec::new(),
                    raw: Vec::new(),
                    shuffled: Vec::new(),
                    decompressor: Decompress::new(true),
                }),
            }))
    }

    /// Reads the values of `dataset` (the one this reader was made for)
    /// from element `offset` into `out`. `Ok(false)` when a chunk cannot be
    /// decoded here (never written, a filter skipped, not a whole deflated
    /// chunk): the caller then reads through HDF5, which says what is wrong
    /// if anything is.
    pub(super) fn read(&self, dataset: &Dataset, offset: usize, out: &mut [i64]) -> Result<bool> {
        let mut state = crate::sync::lock(&self.state);
        let state = &mut *state;
        let mut at = 0;
        while at < out.len() {
            let position = offset + at;
            let index = position / self.chunk;
            if state.index != Some(index) {
                state.index = None;
                let first = index * self.chunk;
                if dataset.read_raw_chunk(first, &mut state.raw)? != Some(0) {
                    return Ok(false);
                }
                state.shuffled.resize(self.chunk * 8, 0);
                let d = &mut state.decompressor;
                d.reset(true);
                match d.decompress(&state.raw, &mut state.shuffled, FlushDecompress::Finish) {
                    Ok(Status::StreamEnd) if d.total_out() == self.chunk as u64 * 8 => {}
                    _ => return Ok(false),
                }
                unshuffle(&state.shuffled, &mut state.values);
                state.index = Some(index);
            }
            let within = position - index * self.chunk;
            let n = (self.chunk - within).min(out.len() - at);
            out[at..at + n].copy_from_slice(&state.values[within..within + n]);
            at += n;
        }
        Ok(true)
    }
}

/// `input` as one zlib stream (the format of HDF5's deflate filter) in
/// `out`, which grows until the stream fits.
fn zlib_compress(
    z: &mut Compress,
    input: &[u8],
    out: &mut Vec<u8>,
) -> std::result::Result<(), String> {
    z.reset();
    // Shuffled event columns deflate to a tenth of their size or less; a
    // chunk that does not fit this gets more room below.
    out.resize(input.len() / 4 + 1024, 0);
    loop {
        let (read, written) = (z.total_in() as usize, z.total_out() as usize);
        let status = z
            .compress(&input[read..], &mut out[written..], FlushCompress::Finish)
            .map_err(|e| format!("deflate a chunk: {e}"))?;
        if status == Status::StreamEnd {
            out.truncate(z.total_out() as usize);
            return Ok(());
        }
        let more = out.len() / 2 + 1024;
        out.resize(out.len() + more, 0);
    }
}

/// The inverse of [`shuffle`]: 8-byte elements from their byte planes.
fn unshuffle(bytes: &[u8], out: &mut Vec<i64>) {
    let n = bytes.len() / 8;
    out.clear();
    out.resize(n, 0);
    // Plane by plane: each pass is a loop the compiler vectorizes.
    for (j, plane) in bytes.chunks_exact(n.max(1)).take(8).enumerate() {
        let shift = byte_shift(j);
        for (v, &b) in out.iter_mut().zip(plane) {
            *v |= i64::from(b) << shift;
        }
    }
}

/// Where byte `j` of an `i64`'s native representation sits in its bits.
fn byte_shift(j: usize) -> u32 {
    (if cfg!(target_endian = "big") {
        56 - 8 * j
    } else {
        8 * j
    }) as u32
}

/// HDF5's shuffle filter for 8-byte elements: byte `j` of every element,
/// for `j` in 0..8, each in the order of the elements.
fn shuffle(values: &[i64], out: &mut Vec<u8>) {
    let n = values.len();
    out.clear();
    out.resize(n * 8, 0);
    // Plane by plane: each pass is a loop the compiler vectorizes (1.7x
    // faster than element by element here).
    for (j, plane) in out.chunks_exact_mut(n.max(1)).enumerate() {
        let shift = byte_shift(j);
        for (b, &v) in plane.iter_mut().zip(values) {
            *b = (v as u64 >> shift) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_groups_bytes_by_position() {
        let mut out = Vec::new();
        shuffle(&[0x0102, 0x0304], &mut out);
        let (a, b) = (0x0102i64.to_ne_bytes(), 0x0304i64.to_ne_bytes());
        let want: Vec<u8> = (0..8).flat_map(|j| [a[j], b[j]]).collect();
        assert_eq!(out, want);
    }

    #[test]
    fn unshuffle_undoes_shuffle() {
        let values: Vec<i64> = (0..1000).map(|i| i * 7_919 - 300_000 + (i << 40)).collect();
        let (mut bytes, mut back) = (Vec::new(), Vec::new());
        shuffle(&values, &mut bytes);
        unshuffle(&bytes, &mut back);
        assert_eq!(back, values);
    }
}
