//! The two walks of the same records, run at once: [`Placing`] (ids,
//! parents, slots, exclusive times, call metadata, the summary tree) and
//! [`Paths`] (the call paths).

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;

use super::Plan;
use super::rows::rows_metadata;
use super::samples::{LandedSample, Landing, Sampled, Span as CallSpan, Targets};
use super::spilled::Spilled;
use super::walk::{Met, Visitor, WalkInput, walk_lane};
use crate::callmatch::{KeyedMeta, LaneMeta};
use crate::calltree::{CallPaths, CallTree, TreeBuilder};
use crate::lane::{LaneCut, LaneKind};
use crate::lanemeta::ok_outcome;
use crate::placement::{PlacedCall, Placer};
use crate::sampling::{NO_CHAIN, SampleCut};
use crate::value::CallMetadata;

/// What the walk adds to the index rows, besides the calls it places.
#[derive(Default)]
pub(super) struct Walked {
    /// Exclusive ns per session region id.
    pub(super) exclusive: Vec<i64>,
    /// The `event_metadata` of the rows whose calls have any, by row.
    pub(super) row_metadata: HashMap<u32, String>,
}

impl Plan {
    /// The backward walk over every lane (threads' and tasks'): every call
    /// goes to `placer` with its slot; sets the rows' exclusive totals and
    /// returns the summary tree.
    ///
    /// Two walks of the same records run at once: this thread places the
    /// calls and builds the summary tree ([`Placing`]) while a helper thread
    /// decodes spilled blocks and builds the call paths ([`Paths`]), so that
    /// finalize uses two cores from the start (the scale test's 50M calls:
    /// with the summary tree on the helper, this thread waited for its
    /// blocks 0.2-0.5 of about 1.4 s; with it here, the helper waits
    /// 0.2-0.3 s for room to hand blocks on). Without a helper (the thread cannot be
    /// started), both walks run here in turn.
    pub(super) fn place<P: Placer>(&mut self, placer: &mut P) -> std::io::Result<CallTree> {
        let cut = self.sample_cut.take();
        let input = &self.walk;
        let layout = &self.layout;
        let mut placing = Placing {
            targets: cut.as_ref().map(|cut| Targets::new(cut, &input.task_pos)),
            exclusive: vec![0i64; layout.regions.len()],
            // Each lane's calls of a region fill its part of the row
            // backwards: `cursor` goes from the end of the lane's part to
            // its start, then past it to the end (the next lane's start).
            cursor: layout.row_offset.clone(),
            placer,
            call_meta: Vec::new(),
            call: 0,
            meta: None,
            keyed: input.keyed.as_ref(),
            matched: Vec::new(),
            // Every region with calls has a node at least.
            summary: TreeBuilder::with_capacity(layout.row_regions.len()),
        };
        // The paths' state is made by the thread that walks it, so that
        // its small, hot allocations come from that thread's own heap
        // arena: made here, beside `placing`'s, they shared cache lines
        // with it, and both walks ran at half speed (false sharing: 0.47
        // instead of 0.24 s for 10M calls, depending on the build's
        // allocation order).
        let walk_paths = |mut source: Spilled| -> std::io::Result<CallPaths> {
            let mut paths = Paths(CallPaths::default());
            for lane in &input.lanes {
                walk_lane(&mut paths, input, lane, &mut source)?;
            }
            Ok(paths.0)
        };
        let (placed, paths) = std::thread::scope(|s| {
            let (decode, mut receive) = Spilled::pair();
            let helper = std::thread::Builder::new()
                .name("scope-profiler-walk".into())
                .spawn_scoped(s, move || walk_paths(decode));
            if helper.is_err() {
                receive = Spilled::decode();
            }
            let placed: std::io::Result<()> = (|| {
                let mut call_base = 0i64;
                for lane in &input.lanes {
                    placing.lane(input, lane, call_base, &mut receive)?;
                    call_base += lane.len as i64;
                }
                Ok(())
            })();
            // A placing walk that stopped early takes no more blocks: the
            // helper's next hand-over must fail, not wait for room.
            drop(receive);
            let paths = match helper {
                Ok(helper) => helper
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("the walk's thread panicked"))),
                Err(_) => walk_paths(Spilled::decode()),
            };
            (placed, paths)
        });
        placed?;
        let paths = paths?;
        let Placing {
            exclusive,
            mut call_meta,
            summary,
            targets,
            ..
        } = placing;
        self.walked.exclusive = exclusive;
        let mut row_of = vec![u32::MAX; layout.regions.len()];
        for (row, &region) in layout.row_regions.iter().enumerate() {
            row_of[region as usize] = row as u32;
        }
        self.call_paths = paths.finish(|region| row_of[region as usize]);
        if let (Some(cut), Some(targets)) = (cut, targets) {
            self.sampled = Some(sampled(cut, targets.finish(), &row_of, &summary));
        }
        call_meta.sort_by_key(|(slot, _)| *slot); // stable: precedence kept
        self.walked.row_metadata = rows_metadata(layout, &call_meta);
        Ok(summary.finish(layout.regions.iter().map(|r| r.entry).collect()))
    }
}

/// The walk that places the calls: ids, parents, slots, exclusive times
/// and call metadata.
struct Placing<'a, P: Placer> {
    /// Exclusive ns per session region id.
    exclusive: Vec<i64>,
    /// Per session region id, the slot after the next call's (see
    /// [`Plan::place`]).
    cursor: Vec<u64>,
    placer: &'a mut P,
    /// `(slot, metadata entry)` of every call with metadata.
    call_meta: Vec<(u64, Arc<CallMetadata>)>,
    /// The next call's id.
    call: i64,
    /// The metadata of the lane being walked (a thread's lane with any).
    meta: Option<LaneMeta>,
    /// The session's metadata of calls known by region and start.
    keyed: Option<&'a KeyedMeta>,
    matched: Vec<Arc<CallMetadata>>,
    summary: TreeBuilder,
    /// The session's samples, if it samples, given to the calls met.
    targets: Option<Targets>,
}

impl<'a, P: Placer> Placing<'a, P> {
    /// Places the calls of `lane`, whose first id is `call_base`.
    fn lane(
        &mut self,
        input: &'a WalkInput,
        lane: &'a LaneCut,
        call_base: i64,
        source: &mut Spilled,
    ) -> std::io::Result<()> {
        let past_lane = |cursor: &mut [u64]| {
            for (region, at) in cursor.iter_mut().enumerate() {
                *at += lane.counts.get(region).copied().unwrap_or(0);
            }
        };
        past_lane(&mut self.cursor);
        self.call = call_base;
        self.meta = match lane.lane.kind {
            LaneKind::Thread => LaneMeta::new(&lane.metadata),
            LaneKind::Tasks => None,
        };
        walk_lane(self, input, lane, source)?;
        past_lane(&mut self.cursor);
        Ok(())
    }
}

impl<P: Placer> Visitor for Placing<'_, P> {
    /// The call's id, region and node in the summary tree.
    type Link = (i64, u32, u32);

    fn visit(
        &mut self,
        parent: Option<(i64, u32, u32)>,
        c: &Met<'_>,
    ) -> std::io::Result<(i64, u32, u32)> {
        let region = c.record.region;
        let node = self
            .summary
            .call(parent.map(|p| p.2), region, c.start, c.duration);
        self.exclusive[region as usize] += c.duration;
        if let Some((_, parent_region, _)) = parent {
            self.exclusive[parent_region as usize] -= c.duration;
        }
        self.cursor[region as usize] -= 1;
        let slot = self.cursor[region as usize];
        if self.meta.is_some() || self.keyed.is_some() || c.record.ok() {
            self.matched.clear();
            if let Some(meta) = &self.meta {
                meta.matches(c.record, &mut self.matched);
            }
            if let Some(keyed) = self.keyed {
                keyed.matches(c.record, &mut self.matched);
            }
            // An ok outcome rides in the record: the call's last entry.
            if c.record.ok() {
                self.matched.push(ok_outcome());
            }
            self.call_meta
                .extend(self.matched.drain(..).map(|m| (slot, m)));
        }
        if let Some(targets) = &mut self.targets {
            let start = u64::try_from(c.start).unwrap_or(0);
            targets.call(
                c.thread,
                c.task,
                CallSpan {
                    start,
                    end: start.saturating_add(u64::try_from(c.duration).unwrap_or(0)),
                    depth: c.depth as u32,
                    region,
                    node,
                },
            );
        }
        let call = self.call;
        self.placer.put(PlacedCall {
            slot,
            start: c.start,
            duration: c.duration,
            call,
            parent: parent.map_or(-1, |(id, ..)| id),
            thread: c.thread,
            task: c.task,
            region,
        })?;
        self.call += 1;
        Ok((call, region, node))
    }
}

/// The samples of `cut`, each with the index row of the call it landed in
/// and that call's path of rows (`landed`, by lane; `row_of`, by session
/// region id; the paths from the walk's `summary` tree).
fn sampled(
    cut: SampleCut,
    landed: Vec<Vec<Option<Landing>>>,
    row_of: &[u32],
    summary: &TreeBuilder,
) -> Sampled {
    let row = |region: u32| {
        row_of
            .get(region as usize)
            .copied()
            .filter(|&r| r != u32::MAX)
    };
    let mut samples = Vec::with_capacity(cut.len());
    let mut paths: Vec<Vec<u32>> = Vec::new();
    let mut path_of: HashMap<u32, u32> = HashMap::new();
    for (lane, l) in cut.lanes.iter().enumerate() {
        let rows = landed.get(lane).map_or(&[][..], Vec::as_slice);
        for (i, (&time_ns, &ip)) in l.times.iter().zip(&l.ips).enumerate() {
            let landing = rows.get(i).copied().flatten();
            let path = landing.map(|landing| {
                *path_of.entry(landing.node).or_insert_with(|| {
                    paths.push(
                        summary
                            .path(landing.node)
                            .into_iter()
                            .filter_map(row)
                            .collect(),
                    );
                    paths.len() as u32 - 1
                })
            });
            samples.push(LandedSample {
                thread: lane as u32,
                time_ns,
                ip,
                row: landing.and_then(|landing| row(landing.region)),
                path,
                chain: l.chains.get(i).copied().unwrap_or(NO_CHAIN),
            });
        }
    }
    Sampled {
        hz: cut.hz,
        samples,
        paths,
        chains: cut.chains,
        missed: cut.dropped + cut.lost,
        failures: cut.failures,
    }
}

/// The walk that builds the call paths.
struct Paths(CallPaths);

impl Visitor for Paths {
    /// The call's path.
    type Link = u32;

    fn visit(&mut self, parent: Option<u32>, c: &Met<'_>) -> std::io::Result<u32> {
        let region = c.record.region;
        let path = self.0.call(
            parent,
            c.depth,
            (i64::from(c.thread), i64::from(c.task)),
            region,
            c.start,
            c.duration,
        );
        Ok(path)
    }
}
