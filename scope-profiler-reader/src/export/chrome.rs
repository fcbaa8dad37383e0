//! The Chrome trace event JSON export (Perfetto, chrome://tracing).

use std::io::Write;
use std::path::PathBuf;

use super::filter::{Exported, Filter, Resolved};
use super::walk::{Visitor, walk};
use super::{CHUNK, Call, Lane, LaneMap, origin, out_err};
use crate::error::Error;
use crate::json::{push_int, push_string as json_string};
use crate::profile_reader::ProfileReader;

impl ProfileReader {
    /// Writes a Chrome trace event JSON document (the format of Perfetto and
    /// chrome://tracing): one complete (`"ph":"X"`) event per call with its
    /// region as name, `pid` = rank, `tid` = lane (thread or task, named by
    /// metadata events), `ts`/`dur` in microseconds from the earliest call,
    /// and `call_id`/`parent_id` in `args`. Events come in file order, times
    /// as recorded (complete events need no order; a call whose span sticks
    /// out of its parent's is written as it was recorded).
    ///
    /// Returns the number of calls written.
    ///
    /// # Errors
    ///
    /// [`Error::Hdf5`] if the events cannot be read, [`Error::Io`] if `out`
    /// fails.
    ///
    /// ```no_run
    /// use scope_profiler_reader::{ProfileReader, export};
    /// let reader = ProfileReader::open("profiling_data.h5")?;
    /// let out = std::io::BufWriter::new(std::fs::File::create("trace.json").unwrap());
    /// let calls = reader.chrome_trace(out)?;
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn chrome_trace(&self, out: impl Write) -> Result<u64, Error> {
        let reader = self;
        Ok(reader.chrome_trace_filtered(&Filter::new(), out)?.events)
    }
}

impl ProfileReader {
    /// [`Self::chrome_trace`] of the calls `filter` keeps (see [`Filter`]); with a
    /// filter, the events come lane by lane in order of start instead of in
    /// file order, times as recorded.
    ///
    /// # Errors
    ///
    /// As [`Self::chrome_trace`]; [`Error::Usage`] if `filter` names a region or
    /// lane the file does not have.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// use scope_profiler_reader::{ProfileReader, export};
    /// # let dir = std::env::temp_dir().join(format!("sp-chrome-filter-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("trace.h5");
    /// sp::setup(Options::new().file_path(&path).verbose(false))?;
    /// for _ in 0..5 {
    ///     sp::region("step").run(|| ());
    /// }
    /// sp::finalize()?;
    /// let reader = ProfileReader::open(&path)?;
    /// let mut trace = Vec::new();
    /// let done = reader.chrome_trace_filtered(&export::Filter::new().max_events(2), &mut trace)?;
    /// assert_eq!((done.events, done.left_out), (2, 3));
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn chrome_trace_filtered(
        &self,
        filter: &Filter,
        out: impl Write,
    ) -> Result<Exported, Error> {
        let reader = self;
        let mut out = super::Budgeted::for_export(reader, out);
        let names: Vec<Vec<u8>> = reader
            .region_names()
            .iter()
            .map(|n| {
                let mut b = Vec::new();
                json_string(&mut b, n);
                b
            })
            .collect();
        let mut writer = Chrome {
            out: &mut out,
            names,
            origin: origin(reader),
            buf: Vec::with_capacity(1 << 20),
            first: true,
            calls: 0,
            used: Vec::new(),
            ranks: None,
        };
        writer.buf.extend_from_slice(b"{\"displayTimeUnit\":\"ms\",\"metadata\":{\"exporter\":\"scope-profiler-rs\"},\"traceEvents\":[\n");
        let (lanes, done) = if filter.is_empty() {
            // File order: no sort.
            let mut lanes = LaneMap::new(reader);
            for chunk in reader.chunks(CHUNK) {
                let chunk = chunk?;
                let row = &reader.rows()[chunk.row];
                let e = &chunk.events;
                for i in 0..e.len() {
                    let task = e.task_ids.as_ref().map_or(-1, |t| t[i]);
                    let call = Call {
                        lane: lanes.lane(row.rank, e.thread_ids[i], task),
                        start: e.start_ns[i],
                        duration: e.durations[i],
                        call_id: e.call_ids[i],
                        parent_id: e.parent_ids[i],
                        region: row.region_id as u64,
                    };
                    writer.event(&call, row.rank)?;
                }
            }
            let events = writer.calls;
            (
                lanes.lanes,
                Exported {
                    events,
                    left_out: 0,
                },
            )
        } else {
            walk(reader, &Resolved::new(reader, filter)?, &mut writer)?
        };
        let mut buf = std::mem::take(&mut writer.buf);
        let mut first = writer.first;
        let used = |id: usize| writer.used.get(id).copied().unwrap_or(false);
        let mut ranks: Vec<u32> = lanes
            .iter()
            .enumerate()
            .filter(|(id, _)| used(*id))
            .map(|(_, l)| l.rank)
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        for rank in ranks {
            if !first {
                buf.extend_from_slice(b",\n");
            }
            first = false;
            let _ = write!(
                buf,
                "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{rank},\"tid\":0,\"args\":{{\"name\":\"rank {rank}\"}}}}"
            );
        }
        for (id, lane) in lanes.iter().enumerate().filter(|(id, _)| used(*id)) {
            if !first {
                buf.extend_from_slice(b",\n");
            }
            first = false;
            let _ = write!(
                buf,
                "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{id},\"args\":{{\"name\":",
                lane.rank
            );
            json_string(&mut buf, &lane.name);
            buf.extend_from_slice(b"}}");
        }
        buf.extend_from_slice(b"\n]}\n");
        out.write_all(&buf).map_err(out_err)?;
        out.flush().map_err(out_err)?;
        Ok(done)
    }
}

/// The Chrome trace's writer: one complete event per call, as recorded.
struct Chrome<'w, W: Write> {
    out: &'w mut W,
    names: Vec<Vec<u8>>,
    origin: i64,
    buf: Vec<u8>,
    first: bool,
    calls: u64,
    /// Per lane, whether it has an event.
    used: Vec<bool>,
    /// The rank of each lane, for the walk (which hands on calls only).
    ranks: Option<Vec<u32>>,
}

impl<W: Write> Chrome<'_, W> {
    fn event(&mut self, call: &Call, rank: u32) -> Result<(), Error> {
        let Some(name) = self.names.get(call.region as usize) else {
            return Err(Error::hdf5(
                PathBuf::new(),
                format!("region {} out of range", call.region),
            ));
        };
        let lane = call.lane as usize;
        if self.used.len() <= lane {
            self.used.resize(lane + 1, false);
        }
        self.used[lane] = true;
        let buf = &mut self.buf;
        if !self.first {
            buf.extend_from_slice(b",\n");
        }
        self.first = false;
        buf.extend_from_slice(b"{\"name\":");
        buf.extend_from_slice(name);
        buf.extend_from_slice(b",\"cat\":\"scope-profiler\",\"ph\":\"X\",\"ts\":");
        push_micros(buf, call.start.wrapping_sub(self.origin));
        buf.extend_from_slice(b",\"dur\":");
        push_micros(buf, call.duration);
        buf.extend_from_slice(b",\"pid\":");
        push_int(buf, rank as i64);
        buf.extend_from_slice(b",\"tid\":");
        push_int(buf, call.lane as i64);
        buf.extend_from_slice(b",\"args\":{\"call_id\":");
        push_int(buf, call.call_id);
        buf.extend_from_slice(b",\"parent_id\":");
        push_int(buf, call.parent_id);
        buf.extend_from_slice(b"}}");
        self.calls += 1;
        if self.buf.len() > (1 << 20) {
            self.out.write_all(&self.buf).map_err(out_err)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl<W: Write> Visitor for Chrome<'_, W> {
    fn open(&mut self, call: &Call, _depth: usize, _at: i64) -> Result<(), Error> {
        let rank = self
            .ranks
            .as_ref()
            .and_then(|r| r.get(call.lane as usize).copied())
            .unwrap_or(0);
        self.event(call, rank)
    }

    fn close(&mut self, _: &Call, _: usize, _: i64, _: i64) -> Result<(), Error> {
        Ok(())
    }

    fn lane(&mut self, _lane: u64, _begin: bool) -> Result<(), Error> {
        Ok(())
    }

    fn lanes(&mut self, lanes: &[Lane]) {
        self.ranks = Some(lanes.iter().map(|l| l.rank).collect());
    }
}

/// Appends nanoseconds as microseconds with three decimals (exact).
fn push_micros(buf: &mut Vec<u8>, ns: i64) {
    if ns < 0 {
        buf.push(b'-');
    }
    let n = ns.unsigned_abs();
    push_int(buf, (n / 1000) as i64);
    let frac = n % 1000;
    buf.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}
