//! The folded stacks export (`a;b;c <ns>` per call path, own time).

#![forbid(unsafe_code)]

use std::io::Write;

use crate::error::Error;
use crate::profile_reader::ProfileReader;

use super::budget::{Budgeted, out_err};
use super::filter::{Exported, Filter, Resolved};
use super::tree::{Grouping, events_tree};

impl ProfileReader {
    /// Writes the folded stacks of a file: one line `a;b;c <ns>` per call path
    /// with the time spent in `c` itself (outside its child calls) on that
    /// path, summed over every lane and rank; paths with no own time are left
    /// out. Names have `;` replaced by `:`. An aggregate file (no per-call
    /// events) gives one line per region with its exclusive total.
    ///
    /// Returns the number of lines written.
    ///
    /// # Errors
    ///
    /// As [`Self::call_tree`], and [`Error::Io`] if `out` fails.
    ///
    /// ```no_run
    /// use scope_profiler_reader::{ProfileReader, export};
    /// let reader = ProfileReader::open("profiling_data.h5")?;
    /// let mut out = std::io::BufWriter::new(std::fs::File::create("profile.folded").unwrap());
    /// reader.folded(&mut out)?;
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn folded(&self, out: impl Write) -> Result<u64, Error> {
        let reader = self;
        Ok(write_folded(reader, &Filter::new(), out)?.0)
    }
}

impl ProfileReader {
    /// [`Self::folded`] of the calls `filter` keeps: a kept call's path starts at
    /// it (its callers left out, as in the other exports); the own time of a
    /// call counts its children's as recorded, kept or not.
    ///
    /// # Errors
    ///
    /// As [`Self::folded`]; [`Error::Usage`] if `filter` names a region or lane the
    /// file does not have, or the file is an aggregate profile (no calls to
    /// filter).
    ///
    /// ```
    /// use scope_profiler::{self as sp, Options};
    /// use scope_profiler_reader::{ProfileReader, export};
    /// # let dir = std::env::temp_dir().join(format!("sp-folded-filter-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("folded.h5");
    /// sp::setup(Options::new().file_path(&path).verbose(false))?;
    /// sp::region("outer").run(|| sp::region("inner").run(|| std::thread::sleep(std::time::Duration::from_millis(1))));
    /// sp::region("other").run(|| ());
    /// sp::finalize()?;
    /// let reader = ProfileReader::open(&path)?;
    /// let mut folded = Vec::new();
    /// let done = reader.folded_filtered(&export::Filter::new().region("inner"), &mut folded)?;
    /// assert_eq!(String::from_utf8(folded).unwrap().split(' ').next(), Some("inner"));
    /// assert_eq!((done.events, done.left_out), (1, 0));
    /// # Ok::<(), sp::Error>(())
    /// ```
    pub fn folded_filtered(&self, filter: &Filter, out: impl Write) -> Result<Exported, Error> {
        let reader = self;
        Ok(write_folded(reader, filter, out)?.1)
    }
}

/// The folded stacks: the lines written and what was exported.
fn write_folded(
    reader: &ProfileReader,
    filter: &Filter,
    out: impl Write,
) -> Result<(u64, Exported), Error> {
    let mut out = Budgeted::for_export(reader, out);
    if reader.is_aggregate() && !filter.is_empty() {
        return Err(Error::Usage(format!(
            "{} is an aggregate profile (totals only, no calls): it cannot be filtered",
            reader.path().display()
        )));
    }
    let names: Vec<String> = reader
        .region_names()
        .iter()
        .map(|n| n.replace(';', ":"))
        .collect();
    let name = |id: u32| names.get(id as usize).map_or("?", String::as_str);
    let mut lines = 0;
    if reader.is_aggregate() {
        let mut own: Vec<i64> = vec![0; names.len()];
        for row in reader.aggregates() {
            if let Some(o) = own.get_mut(row.region_id as usize) {
                *o += row.exclusive.max(0);
            }
        }
        for (id, own) in own.iter().enumerate() {
            if *own > 0 {
                writeln!(out, "{} {own}", name(id as u32)).map_err(out_err)?;
                lines += 1;
            }
        }
        out.flush().map_err(out_err)?;
        let events = reader.aggregates().iter().map(|a| a.num_calls).sum();
        return Ok((
            lines,
            Exported {
                events,
                left_out: 0,
            },
        ));
    }
    let (tree, done) = if filter.is_empty() {
        let tree = reader.call_tree(Grouping::All)?;
        let calls = tree.nodes().filter(|n| n.region().is_some());
        let events = calls.map(|n| n.num_calls()).sum::<u64>();
        (
            tree,
            Exported {
                events,
                left_out: 0,
            },
        )
    } else {
        events_tree(reader, Grouping::All, &Resolved::new(reader, filter)?)?
    };
    let mut path: Vec<&str> = Vec::new();
    // Depth-first, children in order of first call.
    let mut todo: Vec<_> = tree
        .roots()
        .rev()
        .flat_map(|root| root.children().rev().map(|c| (c, 0)))
        .collect();
    let mut line = String::new();
    while let Some((n, depth)) = todo.pop() {
        path.truncate(depth);
        path.push(name(n.region().unwrap_or(u32::MAX)));
        if n.exclusive() > 0 {
            line.clear();
            for (i, part) in path.iter().enumerate() {
                if i > 0 {
                    line.push(';');
                }
                line.push_str(part);
            }
            writeln!(out, "{line} {}", n.exclusive()).map_err(out_err)?;
            lines += 1;
        }
        todo.extend(n.children().rev().map(|c| (c, depth + 1)));
    }
    out.flush().map_err(out_err)?;
    Ok((lines, done))
}
