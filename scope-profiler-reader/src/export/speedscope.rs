//! The speedscope JSON export (evented profiles, one per lane).

use std::io::Write;
use std::path::PathBuf;

use super::filter::{Exported, Filter, Resolved};
use super::walk::{Visitor, walk};
use super::{Call, Lane, origin, out_err};
use crate::error::Error;
use crate::json::{push_int, push_string as json_string};
use crate::profile_reader::ProfileReader;

impl ProfileReader {
    /// Writes a speedscope JSON document: one evented profile per lane (named
    /// "rank R - thread NAME" / "rank R - task ..."), an open and a close event
    /// per call at its start and end, nested as the call tree says, times in
    /// nanoseconds from the earliest call; frames are the regions that have
    /// calls, in order of first call.
    ///
    /// Events of a lane never go back in time, as speedscope requires: a call
    /// whose span sticks out of its parent's (a future first polled in one
    /// call and completed in a later one) is cut at its parent's start and
    /// end, and a call that overlaps an earlier sibling opens when that
    /// sibling closes. Calls that nest are written at their recorded times.
    ///
    /// Returns the number of calls written.
    ///
    /// # Errors
    ///
    /// As [`ProfileReader::call_tree`], and [`Error::Io`] if `out` fails.
    ///
    /// ```no_run
    /// use scope_profiler_reader::{ProfileReader, export};
    /// let reader = ProfileReader::open("profiling_data.h5")?;
    /// let out = std::io::BufWriter::new(std::fs::File::create("profile.speedscope.json").unwrap());
    /// reader.speedscope(out)?;
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn speedscope(&self, out: impl Write) -> Result<u64, Error> {
        let reader = self;
        Ok(reader.speedscope_filtered(&Filter::new(), out)?.events)
    }
}

impl ProfileReader {
    /// [`Self::speedscope`] of the calls `filter` keeps (see [`Filter`]): a lane
    /// with no kept call has no profile; a kept call's callers are left out
    /// (its subtree is a root).
    ///
    /// # Errors
    ///
    /// As [`Self::speedscope`]; [`Error::Usage`] if `filter` names a region or lane
    /// the file does not have.
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// use scope_profiler_reader::{ProfileReader, export};
    /// # let dir = std::env::temp_dir().join(format!("sp-speedscope-filter-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("speedscope.h5");
    /// sp::setup(Options::new().file_path(&path).verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| ()));
    /// sp::region("other").run(|| ());
    /// sp::finalize()?;
    /// let reader = ProfileReader::open(&path)?;
    /// let mut doc = Vec::new();
    /// let done = reader.speedscope_filtered(&export::Filter::new().region("outer"), &mut doc)?;
    /// assert_eq!(done.events, 2);
    /// assert!(!String::from_utf8(doc).unwrap().contains("other"));
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn speedscope_filtered(&self, filter: &Filter, out: impl Write) -> Result<Exported, Error> {
        let reader = self;
        let mut out = super::Budgeted::for_export(reader, out);
        let filter = Resolved::new(reader, filter)?;
        let mut writer = Speedscope {
            out: &mut out,
            buf: Vec::with_capacity(1 << 20),
            origin: origin(reader),
            frames: vec![u32::MAX; reader.region_names().len()],
            frame_order: Vec::new(),
            first_profile: true,
            first_event: true,
            lane_start: 0,
            lane_end: 0,
            lane_names: Vec::new(),
        };
        writer.buf.extend_from_slice(
            b"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"scope-profiler-rs\",\"activeProfileIndex\":0,\"profiles\":[\n",
        );
        let (_, done) = walk(reader, &filter, &mut writer)?;
        let mut buf = std::mem::take(&mut writer.buf);
        buf.extend_from_slice(b"\n],\"shared\":{\"frames\":[");
        for (i, &region) in writer.frame_order.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            buf.extend_from_slice(b"{\"name\":");
            json_string(&mut buf, &reader.region_names()[region as usize]);
            buf.push(b'}');
        }
        buf.extend_from_slice(b"]},\"name\":");
        let file_name = reader
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        json_string(&mut buf, &file_name);
        buf.extend_from_slice(b"}\n");
        out.write_all(&buf).map_err(out_err)?;
        out.flush().map_err(out_err)?;
        Ok(done)
    }
}

/// The speedscope visitor; profile names are filled in at each lane's
/// end (the lane table is complete only after the sort).
struct Speedscope<'w, W: Write> {
    out: &'w mut W,
    buf: Vec<u8>,
    origin: i64,
    frames: Vec<u32>,
    frame_order: Vec<u32>,
    first_profile: bool,
    first_event: bool,
    lane_start: i64,
    lane_end: i64,
    lane_names: Vec<String>,
}

impl<W: Write> Speedscope<'_, W> {
    fn event(&mut self, kind: u8, region: u64, at: i64) {
        if !self.first_event {
            self.buf.push(b',');
        }
        self.first_event = false;
        self.buf.extend_from_slice(b"{\"type\":\"");
        self.buf.push(kind);
        self.buf.extend_from_slice(b"\",\"frame\":");
        push_int(&mut self.buf, self.frames[region as usize] as i64);
        self.buf.extend_from_slice(b",\"at\":");
        push_int(&mut self.buf, at.wrapping_sub(self.origin));
        self.buf.push(b'}');
    }

    fn drain(&mut self) -> Result<(), Error> {
        if self.buf.len() > (1 << 20) {
            self.out.write_all(&self.buf).map_err(out_err)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl<W: Write> Visitor for Speedscope<'_, W> {
    fn open(&mut self, call: &Call, depth: usize, at: i64) -> Result<(), Error> {
        let region = call.region as usize;
        if self.frames.get(region).is_none() {
            return Err(Error::hdf5(
                PathBuf::new(),
                format!("region {region} out of range"),
            ));
        }
        if self.frames[region] == u32::MAX {
            self.frames[region] = self.frame_order.len() as u32;
            self.frame_order.push(region as u32);
        }
        if depth == 0 && self.first_event {
            self.lane_start = at;
        }
        self.event(b'O', call.region, at);
        self.drain()
    }

    fn close(&mut self, call: &Call, _depth: usize, _children: i64, at: i64) -> Result<(), Error> {
        self.event(b'C', call.region, at);
        self.lane_end = self.lane_end.max(at);
        self.drain()
    }

    fn lane(&mut self, lane: u64, begin: bool) -> Result<(), Error> {
        if begin {
            if !self.first_profile {
                self.buf.extend_from_slice(b",\n");
            }
            self.first_profile = false;
            self.first_event = true;
            self.lane_end = i64::MIN;
            self.buf
                .extend_from_slice(b"{\"type\":\"evented\",\"unit\":\"nanoseconds\",\"events\":[");
        } else {
            let (start, end) = (self.lane_start, self.lane_end.max(self.lane_start));
            self.buf.extend_from_slice(b"],\"startValue\":");
            push_int(&mut self.buf, start.wrapping_sub(self.origin));
            self.buf.extend_from_slice(b",\"endValue\":");
            push_int(&mut self.buf, end.wrapping_sub(self.origin));
            self.buf.extend_from_slice(b",\"name\":");
            let name = self
                .lane_names
                .get(lane as usize)
                .map_or("?", String::as_str);
            json_string(&mut self.buf, name);
            self.buf.push(b'}');
        }
        self.drain()
    }

    fn lanes(&mut self, lanes: &[Lane]) {
        self.lane_names = lanes
            .iter()
            .map(|l| format!("rank {} - {}", l.rank, l.name))
            .collect();
    }
}
