//! Streaming exports of a profile file: Chrome trace event JSON (Perfetto,
//! chrome://tracing), speedscope JSON, folded stacks, and the call tree.
//!
//! Every export reads the file through a [`ProfileReader`] in bounded
//! chunks, never the whole event table: the Chrome trace in file order, the
//! others through an external sort of the calls by (lane, start) in runs of
//! `SORT_RUN` calls spilled to unlinked scratch files and merged (see
//! `export/sort.rs`). The peak memory is two runs (one written as the next
//! fills) plus a block per run, whatever the file's size.
//!
//! JSON is written by hand (names escaped here), so the runtime needs no
//! JSON crate: see ARCHITECTURE.md, "Dependencies".
//!
//! A lane is what records calls one after another: a thread of a rank, or
//! an async task (calls with a `task_id`). The call tree of a lane follows
//! from `parent_ids` when the file has them, from time containment
//! otherwise (schema-2 files).
//!
//! ```
//! use scope_profiler::{self as sp, Options};
//! use scope_profiler_reader::{ProfileReader, export};
//! # let dir = std::env::temp_dir().join(format!("sp-export-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("export.h5");
//! sp::setup(Options::new().file_path(&path).verbose(false))?;
//! sp::region("outer").run(|| sp::region("inner").run(|| ()));
//! sp::finalize()?;
//! let reader = ProfileReader::open(&path)?;
//! let mut folded = Vec::new();
//! reader.folded(&mut folded)?;
//! assert!(String::from_utf8(folded).unwrap().contains("outer;inner "));
//! # Ok::<(), sp::Error>(())
//! ```

#![forbid(unsafe_code)]

use crate::calltree::CallTree;
use crate::error::Error;
use crate::profile_reader::ProfileReader;

mod budget;
mod chrome;
mod filter;
mod folded;
mod lanes;
mod sort;
mod speedscope;
mod tree;
mod visit;
mod walk;

use budget::Budgeted;
use budget::out_err;
use filter::Resolved;
pub use filter::{Exported, Filter};

use crate::calltree::Lane;
use lanes::LaneMap;
use sort::{Call, sort_calls};
pub use tree::Grouping;
use tree::{TreeWalk, events_tree, tree_of_paths};
pub use visit::CallVisit;
use visit::Visiting;
use walk::walk;

/// Events read from the file per chunk.
const CHUNK: usize = 1 << 18;

impl ProfileReader {
    /// [`Self::call_tree`] built from the events (one pass of the external sort, in
    /// bounded memory, even when the file stores its call paths), handing each
    /// call to `visit` on the way: lane by lane, each lane's calls by start, a
    /// call before the calls it holds. For views of every call (a timeline)
    /// that need the tree too, without a second pass.
    ///
    /// # Errors
    ///
    /// As [`Self::call_tree`].
    ///
    /// ```no_run
    /// use scope_profiler_reader::{ProfileReader, export};
    /// let reader = ProfileReader::open("profiling_data.h5")?;
    /// let mut deepest = 0;
    /// let tree = reader.call_tree_visiting(export::Grouping::All, |call| {
    ///     deepest = deepest.max(call.depth);
    /// })?;
    /// println!("{} call paths, {} levels", tree.len(), deepest + 1);
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn call_tree_visiting(
        &self,
        grouping: Grouping,
        visit: impl FnMut(&CallVisit),
    ) -> Result<CallTree, Error> {
        let reader = self;
        let mut visiting = Visiting {
            tree: TreeWalk::new(grouping),
            lanes: Vec::new(),
            visit,
        };
        let everything = Resolved::new(reader, &Filter::new())?;
        let (lanes, _) = walk(reader, &everything, &mut visiting)?;
        Ok(visiting.tree.finish(reader, lanes))
    }

    /// Builds the call tree of a file, grouped as `grouping` says: from the
    /// call paths the file stores when it has them, otherwise from its events,
    /// each call under its parent (by the file's parent ids; by time in a file
    /// without them, or for a call whose parent is not open when it starts: a
    /// call whose span does not nest in its parent's stays under it, and the
    /// calls after it keep their parents).
    ///
    /// The tree is a [`CallTree`], the type of `finalize`'s summary: its roots
    /// are the groups' (named by their labels), and every node knows its
    /// durations' minimum, maximum and quantiles and its lanes (a recursion is
    /// a path per level, not pooled as in the summary).
    ///
    /// # Errors
    ///
    /// [`Error::Hdf5`] if the events cannot be read, [`Error::Io`] if the
    /// scratch files of the sort cannot be written.
    ///
    /// ```no_run
    /// use scope_profiler_reader::{ProfileReader, export};
    /// let reader = ProfileReader::open("profiling_data.h5")?;
    /// let tree = reader.call_tree(export::Grouping::All)?;
    /// let all = tree.roots().next().unwrap(); // the group's root, named "all"
    /// for node in all.children() {
    ///     println!("{} {} calls, p95 {:?} ns", node.name(), node.num_calls(), node.quantile(0.95));
    /// }
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn call_tree(&self, grouping: Grouping) -> Result<CallTree, Error> {
        let reader = self;
        // The paths `finalize` stored are one process's (rank 0's) lanes.
        if let Some(paths) = reader.call_paths()
            && reader.rows().iter().all(|r| r.rank == 0)
        {
            return Ok(tree_of_paths(reader, paths, grouping));
        }
        let everything = Resolved::new(reader, &Filter::new())?;
        Ok(events_tree(reader, grouping, &everything)?.0)
    }
}

/// The earliest start in the file, from the rows' statistics when the file
/// has them (0 otherwise: timestamps stay absolute).
fn origin(reader: &ProfileReader) -> i64 {
    if !reader.has_summaries() {
        return 0;
    }
    reader
        .rows()
        .iter()
        .filter(|r| r.event_count > 0)
        .map(|r| r.stats.start_minimum)
        .min()
        .unwrap_or(0)
}
