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

use std::sync::{Arc, Mutex, mpsc};

use flate2::{Compress, Decompress, FlushCompress, FlushDecompress, Status};

use super::h5::{Dataset, Result};

/// A chunk's values (a copy: the caller's buffers are reused), to be
/// shuffled and deflated by a worker.
struct Job {
    column: usize,
    /// Index of the chunk's first element in the column.
    first: usize,
    /// A whole chunk (the last one padded).
    values: Vec<i64>,
}

/// A filtered chunk, back from a worker.
struct Done {
    column: usize,
    first: usize,
    /// The chunk's one value, if it repeats one value (see
    /// [`ChunkWriter::constant`]).
    constant: Option<i64>,
    /// The job's buffer, to be reused.
    values: Vec<i64>,
    deflated: std::result::Result<Vec<u8>, String>,
}

/// A compressor and its buffers, kept from chunk to chunk.
struct Deflater {
    compressor: Compress,
    shuffled: Vec<u8>,
    out: Vec<u8>,
}

impl Deflater {
    fn new(level: flate2::Compression) -> Deflater {
        Deflater {
            compressor: Compress::new(level, true),
            shuffled: Vec::new(),
            out: Vec::new(),
        }
    }

    /// The job's chunk shuffled and deflated, as a zlib stream; a panic is
    /// an `Err`, so that a job is always answered.
    fn deflate(&mut self, job: Job) -> Done {
        let value = job.values.first().copied().unwrap_or(0);
        let constant = job.values.iter().all(|&v| v == value).then_some(value);
        let deflated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shuffle(&job.values, &mut self.shuffled);
            zlib_compress(&mut self.compressor, &self.shuffled, &mut self.out)
                .map(|()| self.out.clone())
        }))
        .unwrap_or_else(|_| Err("a compression thread panicked".to_owned()));
        Done {
            column: job.column,
            first: job.first,
            constant,
            values: job.values,
            deflated,
        }
    }
}

/// The compressed columns of a file being written in order: values are
/// gathered per column until a chunk is full; each full chunk is copied,
/// then shuffled and deflated by a pool of worker threads, one per core,
/// while the writing thread goes on making the next values; deflated
/// chunks are written (by the writing thread: HDF5 is not thread-safe) as
/// they come back, in any order.
pub(super) struct ChunkWriter {
    /// Elements per chunk.
    chunk: usize,
    /// Per column: the values handed to the pool, and those gathered for
    /// the next chunk (which follow them).
    pending: Vec<(usize, Vec<i64>)>,
    /// Events in each column.
    len: usize,
    /// Jobs for the workers; `None` once closed.
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<Done>,
    workers: Vec<std::thread::JoinHandle<()>>,
    /// Jobs sent and not answered yet, and at most how many.
    in_flight: usize,
    max_in_flight: usize,
    /// Value buffers to reuse.
    spare: Vec<Vec<i64>>,
    /// The writing thread's own deflater, when no worker could be started.
    local: Option<Deflater>,
    /// The deflated bytes of the last chunk of one repeated value: a column
    /// that is constant over a chunk (the thread ids of one thread, the
    /// task ids of sync calls) is deflated once per value, not per chunk
    /// (deflating 80 MB of one value took 81 ms of 630).
    constant: Option<(i64, Vec<u8>)>,
}

impl ChunkWriter {
    /// A writer for `columns` columns of `len` values in chunks of `chunk`
    /// values, deflated at `level` (0-9, as HDF5's filter takes it).
    pub(super) fn new(columns: usize, len: usize, chunk: usize, level: u8) -> Result<ChunkWriter> {
        let level = flate2::Compression::new(u32::from(level.min(9)));
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (jobs, queue) = mpsc::channel::<Job>();
        let (answers, done) = mpsc::channel::<Done>();
        let queue = Arc::new(Mutex::new(queue));
        let mut workers = Vec::new();
        for i in 0..threads {
            let (queue, answers) = (Arc::clone(&queue), answers.clone());
            let worker = move || {
                let mut deflater = Deflater::new(level);
                loop {
                    // One idle worker waits for the next job at a time.
                    let job = crate::sync::lock(&queue).recv();
                    let Ok(job) = job else { return };
                    if answers.send(deflater.deflate(job)).is_err() {
                        return;
                    }
                }
            };
            match std::thread::Builder::new()
                .name(format!("scope-profiler-deflate-{i}"))
                .spawn(worker)
            {
                Ok(handle) => workers.push(handle),
                Err(_) => break,
            }
        }
        let local = workers.is_empty().then(|| Deflater::new(level));
        Ok(ChunkWriter {
            chunk: chunk.max(1),
            pending: (0..columns).map(|_| (0, Vec::new())).collect(),
            len,
            jobs: Some(jobs),
            done,
            max_in_flight: 4 * workers.len() + 2,
            workers,
            in_flight: 0,
            spare: Vec::new(),
            local,
            constant: None,
        })
    }

    /// Takes the values of each `(column, values)` of `parts` from element
    /// `offset` on (columns are filled in order, without gaps); hands every
    /// chunk this completes to the pool (the last one, partial, once the
    /// column is complete) and writes those deflated so far. Whole chunks
    /// are copied from `parts` for the workers; a chunk that straddles two
    /// calls is gathered in a buffer first.
    pub(super) fn put(
        &mut self,
        offset: usize,
        datasets: &[&Dataset],
        parts: &[(usize, &[i64])],
    ) -> Result<()> {
        let chunk = self.chunk;
        for &(column, values) in parts {
            let Some((sent, pending)) = self.pending.get_mut(column) else {
                return Err(format!("no compressed column {column}").into());
            };
            if *sent + pending.len() != offset || offset + values.len() > self.len {
                return Err(format!(
                    "values {offset}..+{} of a column filled up to {} of {}",
                    values.len(),
                    *sent + pending.len(),
                    self.len
                )
                .into());
            }
            // Every value of the column is in: its last chunk is written.
            let complete = offset + values.len() == self.len;
            let mut rest = values;
            // 1. The straddling chunk, completed from the new values.
            if !pending.is_empty() {
                let top_up = (chunk - pending.len()).min(rest.len());
                pending.extend_from_slice(&rest[..top_up]);
                rest = &rest[top_up..];
                if pending.len() < chunk && !complete {
                    continue; // still short of a chunk: `rest` is empty
                }
                let mut gathered = std::mem::take(&mut self.pending[column].1);
                self.send(datasets, column, &gathered)?;
                gathered.clear();
                self.pending[column].1 = gathered;
            }
            // 2. Whole chunks of the new values, and a complete column's
            // last one.
            while rest.len() >= chunk || (complete && !rest.is_empty()) {
                let n = chunk.min(rest.len());
                self.send(datasets, column, &rest[..n])?;
                rest = &rest[n..];
            }
            // 3. What is left waits for the next call.
            self.pending[column].1.extend_from_slice(rest);
        }
        self.receive(datasets, usize::MAX)
    }

    /// Hands the next chunk of `column` (`values`: a whole chunk, or the
    /// column's last values) to the pool, or writes it now if it repeats the
    /// value of the last constant chunk.
    fn send(&mut self, datasets: &[&Dataset], column: usize, values: &[i64]) -> Result<()> {
        let first = self.pending[column].0;
        self.pending[column].0 += values.len();
        // A chunk is stored whole: the last one is padded (what lies past
        // the extent is never read), so it repeats a value only if it pads
        // with its own.
        let padding = self.chunk - values.len();
        if let Some((cached, bytes)) = &self.constant
            && (padding == 0 || *cached == 0)
            && values.iter().all(|v| v == cached)
        {
            return write(datasets, column, first, bytes);
        }
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.clear();
        copy.extend_from_slice(values);
        copy.resize(self.chunk, 0);
        let job = Job {
            column,
            first,
            values: copy,
        };
        if let Some(local) = &mut self.local {
            let done = local.deflate(job);
            return self.finish_job(datasets, done);
        }
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err("the compression threads stopped".to_owned().into());
        }
        self.in_flight += 1;
        self.receive(datasets, self.max_in_flight - 1)
    }

    /// Writes the chunks deflated so far, waiting for more while over
    /// `in_flight` are still out.
    fn receive(&mut self, datasets: &[&Dataset], in_flight: usize) -> Result<()> {
        while self.in_flight > 0 {
            let done = if self.in_flight > in_flight {
                self.done
                    .recv()
                    .map_err(|_| "the compression threads stopped".to_owned())?
            } else {
                match self.done.try_recv() {
                    Ok(done) => done,
                    Err(_) => return Ok(()),
                }
            };
            self.in_flight -= 1;
            self.finish_job(datasets, done)?;
        }
        Ok(())
    }

    /// Writes a deflated chunk; keeps its buffer, and its bytes if constant.
    fn finish_job(&mut self, datasets: &[&Dataset], done: Done) -> Result<()> {
        self.spare.push(done.values);
        let bytes = done.deflated?;
        write(datasets, done.column, done.first, &bytes)?;
        if let Some(v) = done.constant {
            self.constant = Some((v, bytes));
        }
        Ok(())
    }

    /// Waits for every chunk handed to the pool and writes it.
    pub(super) fn flush(&mut self, datasets: &[&Dataset]) -> Result<()> {
        self.receive(datasets, 0)
    }

    /// An error unless every column was filled and written.
    pub(super) fn check_complete(&self) -> Result<()> {
        for (column, (sent, pending)) in self.pending.iter().enumerate() {
            if *sent != self.len || !pending.is_empty() || self.in_flight > 0 {
                return Err(format!(
                    "compressed column {column}: {sent} of {} values written",
                    self.len
                )
                .into());
            }
        }
        Ok(())
    }
}

impl Drop for ChunkWriter {
    /// Closes the queue and joins the workers (each finishes the job it
    /// holds, then finds the queue closed).
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// Writes the deflated chunk of `column` that starts at element `first`.
fn write(datasets: &[&Dataset], column: usize, first: usize, bytes: &[u8]) -> Result<()> {
    match datasets.get(column) {
        Some(dataset) => dataset.write_chunk(first, bytes),
        None => Err(format!("no compressed column {column}").into()),
    }
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
                // The output holds the chunk and nothing more: a stream
                // that would inflate past it (a deflate bomb) stops there.
                match d.decompress(&state.raw, &mut state.shuffled, FlushDecompress::Finish) {
                    Ok(Status::StreamEnd) if d.total_out() == self.chunk as u64 * 8 => {}
                    Ok(_) if d.total_out() == self.chunk as u64 * 8 => {
                        return Err(format!(
                            "the chunk at element {first} inflates past its {} bytes",
                            self.chunk * 8
                        )
                        .into());
                    }
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
    if n == 0 {
        return;
    }
    let whole = transposed(n);
    for i in (0..whole).step_by(8) {
        let mut x = [0u64; 8];
        for (j, word) in x.iter_mut().enumerate() {
            let at = j * n + i;
            *word = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        }
        transpose8(&mut x);
        for (v, word) in out[i..i + 8].iter_mut().zip(x) {
            *v = word as i64;
        }
    }
    for (j, plane) in bytes.chunks_exact(n).take(8).enumerate() {
        let shift = byte_shift(j);
        for (v, &b) in out[whole..].iter_mut().zip(&plane[whole..]) {
            *v |= i64::from(b) << shift;
        }
    }
}

/// How many of `n` elements [`shuffle`] and [`unshuffle`] take eight at a
/// time, by a transposition of 8x8 bytes in registers ([`transpose8`]; the
/// rest go byte by byte): all but the last `n % 8` on little-endian targets.
/// Plane by plane, a shift and a byte store per byte, shuffling had been 8%
/// of finalize's samples on the scale test, the most of any function.
fn transposed(n: usize) -> usize {
    if cfg!(target_endian = "little") {
        n / 8 * 8
    } else {
        0
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

/// Transposes the 8x8 bytes of `x` (byte `k` of word `r`, counted from the
/// least significant, goes to byte `r` of word `k`): three rounds of
/// swapping blocks of 1, 2 and 4 bytes.
#[inline]
fn transpose8(x: &mut [u64; 8]) {
    for (shift, mask, pairs) in [
        (
            8,
            0x00ff_00ff_00ff_00ffu64,
            [(0, 1), (2, 3), (4, 5), (6, 7)],
        ),
        (16, 0x0000_ffff_0000_ffff, [(0, 2), (1, 3), (4, 6), (5, 7)]),
        (32, 0x0000_0000_ffff_ffff, [(0, 4), (1, 5), (2, 6), (3, 7)]),
    ] {
        for (a, b) in pairs {
            let t = ((x[a] >> shift) ^ x[b]) & mask;
            x[b] ^= t;
            x[a] ^= t << shift;
        }
    }
}

/// HDF5's shuffle filter for 8-byte elements: byte `j` of every element,
/// for `j` in 0..8, each in the order of the elements.
fn shuffle(values: &[i64], out: &mut Vec<u8>) {
    let n = values.len();
    // Every byte is written below: a reused buffer is not zeroed first.
    out.truncate(n * 8);
    out.resize(n * 8, 0);
    if n == 0 {
        return;
    }
    let whole = transposed(n);
    for i in (0..whole).step_by(8) {
        let mut x = [0u64; 8];
        for (word, &v) in x.iter_mut().zip(&values[i..i + 8]) {
            *word = v as u64;
        }
        transpose8(&mut x);
        for (j, word) in x.into_iter().enumerate() {
            let at = j * n + i;
            out[at..at + 8].copy_from_slice(&word.to_le_bytes());
        }
    }
    for (j, plane) in out.chunks_exact_mut(n).enumerate() {
        let shift = byte_shift(j);
        for (b, &v) in plane[whole..].iter_mut().zip(&values[whole..]) {
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
    fn shuffle_by_eights_equals_byte_by_byte() {
        // Lengths around multiples of 8: the transposed part and the tail.
        for n in [1usize, 7, 8, 9, 15, 16, 17, 64, 1001] {
            let values: Vec<i64> = (0..n as i64)
                .map(|i| i.wrapping_mul(0x0123_4567_89ab_cdef) ^ (i << 13))
                .collect();
            let mut out = Vec::new();
            shuffle(&values, &mut out);
            let want: Vec<u8> = (0..8)
                .flat_map(|j| values.iter().map(move |v| v.to_ne_bytes()[j]))
                .collect();
            assert_eq!(out, want, "{n} values");
            let mut back = Vec::new();
            unshuffle(&out, &mut back);
            assert_eq!(back, values, "{n} values");
        }
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
