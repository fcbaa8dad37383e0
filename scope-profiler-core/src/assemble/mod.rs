//! From the records of every lane to the file's rows and columns, in
//! bounded memory.
//!
//! Per lane, records are stored in the order calls ended, each with its
//! depth. Walking a lane *backwards* meets every call after its parent: the
//! parent of a call at depth `d` is the last call seen at depth `d - 1`, so
//! one backward pass with a chain of the open ancestors (O(depth) memory)
//! gives every call its parent, its id (ids count calls in that backward
//! order, so a parent's id is smaller than its children's), the exclusive
//! times and the summary tree. Each call's place in the file is known
//! beforehand from a counting pass: rows region by region in registration
//! order, lanes in order within a row, calls in end order within a lane.
//! Placed calls (placement.rs) go straight into columns: an uncompressed
//! file's ([`Plan::write_direct`]), or scratch columns that [`Plan::emit`]
//! then hands to a sink in file order; or, when they fit the budget, into
//! memory.
//!
//! A [`Plan`] holds, by role: what the file tells of the session
//! (metadata, threads, tasks, health, counters), the `Layout` of its rows,
//! the `WalkInput` (the lanes' cut and what converts and matches their
//! records), the `Budget` (memory for the placed calls, the scratch
//! directory past it), and what is filled in when the file is written (the
//! walk's `Walked` per-row totals, the statistics, the call paths).
//!
//! The files: `plan.rs` (the [`Plan`] and [`plan()`], from a cut of the
//! lanes), `layout.rs` (the rows, each call's slot, what a row tells of its
//! region), `tables.rs` (the threads, tasks and recording health a cut
//! tells), `walk.rs` (the backward walk of a lane), `spilled.rs` (spilled
//! blocks, decoded once for both walks), `place.rs` (the two walks: calls
//! placed, call paths), `emit.rs` (the placed calls to a sink or into a
//! file's columns), `columns.rs` (a step of event columns), `rows.rs` (each
//! row's statistics, start deltas and `event_metadata`), `aggregate.rs` (an
//! aggregation-mode session's file, the region counters).

// No `forbid` here: it would reach `tests.rs`, which fills chunks with
// `unsafe` (every other file of the module forbids it).
#![deny(unsafe_code)]

mod aggregate;
mod columns;
mod emit;
mod layout;
mod place;
mod plan;
mod rows;
pub mod samples;
mod spilled;
mod tables;
mod walk;

pub use aggregate::{AggregatePlan, counter_totals, plan_aggregate};
pub use plan::{Plan, Span, plan};

#[cfg(test)]
mod tests;
