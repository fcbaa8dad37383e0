//! The backward walk of a lane (see the module's comment): every call after
//! its parent, handed to a [`Visitor`] with its parent's link.

#![forbid(unsafe_code)]

use std::sync::Arc;

use super::spilled::Spilled;
use crate::callmatch::KeyedMeta;
use crate::clock::TickConverter;
use crate::lane::{LaneCut, LaneKind, SegmentCut};
use crate::record::Record;
use crate::store::Store;

/// What the backward walk reads.
pub(super) struct WalkInput {
    pub(super) conv: TickConverter,
    pub(super) store: Arc<Store>,
    pub(super) lanes: Vec<LaneCut>,
    /// The file's task index of each task number (-1: not in the file).
    pub(super) task_pos: Vec<i32>,
    /// The metadata of calls known by region and start, if any.
    pub(super) keyed: Option<KeyedMeta>,
}

/// A call as the backward walk meets it.
pub(super) struct Met<'r> {
    pub(super) record: &'r Record,
    pub(super) depth: usize,
    pub(super) start: i64,
    pub(super) duration: i64,
    /// The lane's thread (for a task's calls: the thread that first polled
    /// it).
    pub(super) thread: i32,
    /// The file's task index, -1 for a sync call outside any task.
    pub(super) task: i32,
}

/// What a backward walk does with each call.
pub(super) trait Visitor {
    /// What a call's children need of it.
    type Link: Copy;
    /// Visits `call`, whose parent's link is `parent` (none for a root).
    fn visit(&mut self, parent: Option<Self::Link>, call: &Met<'_>) -> std::io::Result<Self::Link>;
}

/// Walks `lane` backwards: every call after its parent (see the module's
/// comment), with the chain of its open ancestors' links.
pub(super) fn walk_lane<V: Visitor>(
    v: &mut V,
    input: &WalkInput,
    lane: &LaneCut,
    source: &mut Spilled,
) -> std::io::Result<()> {
    let mut chain: Vec<Option<V::Link>> = Vec::new();
    let mut thread = lane.lane.index as i32;
    // A tasks lane: each block's task, met backwards at its depth-0 call;
    // records after the last block belong to the lane's own task.
    let tasks_lane = lane.lane.kind == LaneKind::Tasks;
    let position = |number: u32| input.task_pos.get(number as usize).copied().unwrap_or(-1);
    let mut task = lane.lane.task_index.map_or(-1, position);
    let mut block = lane.tasks.len();
    for segment in lane.segments.iter().rev() {
        // Spilled records come with their times converted (once, by the
        // walk that decodes them); records in memory are converted here.
        let (records, times, below): (&[Record], &[(i64, i64)], u32) = match segment {
            SegmentCut::Memory(chunk, n, below) => (&chunk.records()[..*n], &[], *below),
            SegmentCut::Spilled {
                offset,
                len,
                bytes,
                depth,
            } => {
                let block = source.block(input, (*offset, *len, *bytes))?;
                (&block.records, &block.times, *depth)
            }
        };
        for (i, r) in records.iter().enumerate().rev() {
            // A nested lane's records, at their depth here.
            let placed;
            let r = if below == 0 {
                r
            } else {
                placed = r.at_depth(r.depth() + below);
                &placed
            };
            let depth = r.depth() as usize;
            if tasks_lane && depth == 0 && block > 0 {
                block -= 1;
                let t = &lane.tasks[block];
                (task, thread) = (position(t.index), t.first_lane as i32);
            }
            let parent = depth
                .checked_sub(1)
                .and_then(|d| chain.get(d).copied().flatten());
            let (start, duration) = match times.get(i) {
                Some(&t) => t,
                None => {
                    let start = input.conv.ns(r.start);
                    (start, input.conv.ns(r.end) - start)
                }
            };
            let met = Met {
                record: r,
                depth,
                start,
                duration,
                thread,
                task,
            };
            let link = v.visit(parent, &met)?;
            chain.resize(depth + 1, None);
            chain[depth] = Some(link);
        }
        if let SegmentCut::Spilled { .. } = segment {
            source.walked()?;
        }
    }
    Ok(())
}
