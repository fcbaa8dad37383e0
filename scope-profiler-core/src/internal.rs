//! The core's modules, for the crates above it (`scope-profiler-hdf5`,
//! `scope-profiler`, and the workspace's tests and benchmarks): not a public
//! API, with no promise to anyone else (the `scope-profiler` crate
//! re-exports what a user names). One module, so that what the upper crates
//! reach of the core goes through one door; they name its modules as their
//! own (`use scope_profiler_core::internal::{clock, ...}`), so a module has
//! one path whichever crate holds it.
//!
//! The modules in layers, bottom first: a module uses only modules of its
//! own layer or of the layers below it, with no cycle (tests/layers.rs
//! checks it). ARCHITECTURE.md tells what each layer does. Layers 7 and 8
//! are the crates above this one (`scope-profiler-hdf5`, `scope-profiler`).
//! The files stay where they are (`src/clock.rs`...): `#[path]` only gives
//! them this one door.

// 1. Foundation: plain data, errors, clocks, hashing, scratch files.
#[path = "clock.rs"]
pub mod clock;
#[cfg(feature = "mpi")]
#[path = "comm.rs"]
pub mod comm;
#[path = "config/mod.rs"]
pub mod config;
#[path = "counters.rs"]
pub mod counters;
#[path = "error.rs"]
pub mod error;
#[path = "fxhash.rs"]
pub mod fxhash;
#[path = "histogram.rs"]
pub mod histogram;
#[path = "json.rs"]
pub mod json;
#[path = "options/mod.rs"]
pub mod options;
#[path = "platform/mod.rs"]
pub mod platform;
#[path = "profile/mod.rs"]
pub mod profile;
#[path = "publish.rs"]
pub mod publish;
#[path = "scratch.rs"]
pub mod scratch;
#[path = "sync.rs"]
pub mod sync;
#[path = "value.rs"]
pub mod value;

// 2. Records, lanes and memory.
#[path = "lane.rs"]
pub mod lane;
#[path = "lanemeta.rs"]
pub mod lanemeta;
#[path = "open.rs"]
pub mod open;
#[path = "record.rs"]
pub mod record;
#[path = "sampling/mod.rs"]
pub mod sampling;
#[path = "spill.rs"]
pub mod spill;
#[path = "store.rs"]
pub mod store;

// 3. Names.
#[path = "registry.rs"]
pub mod registry;

// 4. The active session, as recording sees it.
#[path = "active.rs"]
pub mod active;

// 5. Recording: the per-thread recorder and the ways into it.
#[path = "callmeta.rs"]
pub mod callmeta;
#[path = "callsite.rs"]
pub mod callsite;
#[path = "region.rs"]
pub mod region;
#[path = "task.rs"]
pub mod task;
#[path = "thread/mod.rs"]
pub mod thread;
#[path = "trace.rs"]
pub mod trace;

// 6. Assembly: lanes and names in, rows and columns out.
#[path = "assemble/mod.rs"]
pub mod assemble;
#[path = "callmatch.rs"]
pub mod callmatch;
#[path = "calltree/mod.rs"]
pub mod calltree;
#[path = "live/mod.rs"]
pub mod live;
#[path = "merge/mod.rs"]
pub mod merge;
#[path = "metadata.rs"]
pub mod metadata;
#[path = "placement.rs"]
pub mod placement;
#[path = "sink.rs"]
pub mod sink;
