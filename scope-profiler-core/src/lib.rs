//! The pure-Rust core of [scope-profiler](https://docs.rs/scope-profiler):
//! recording (clock, records, the per-thread recorder), lanes and memory
//! (the store, scratch files), names (the registry) and assembly (lanes and
//! names in, rows and columns out), with the platform code under them.
//!
//! **Use the `scope-profiler` crate**, which re-exports everything a user
//! names. This crate's modules are hidden: they are the internals the
//! `scope-profiler` crates (`scope-profiler`, `scope-profiler-hdf5`) share,
//! released together and pinned to one version, with no promise to anyone
//! else. It builds and links no C code, so a library that instruments itself
//! (`scope-profiler` without its `hdf5` feature) needs no C library.

#![warn(clippy::undocumented_unsafe_blocks)]

// The modules in layers, bottom first: a module uses only modules of its
// own layer or of the layers below it, with no cycle (tests/layers.rs checks
// it). ARCHITECTURE.md tells what each layer does. Layers 7 and 8 are the
// crates above this one (`scope-profiler-hdf5`, `scope-profiler`).

// 1. Foundation: plain data, errors, clocks, hashing, scratch files.
#[doc(hidden)]
pub mod clock;
#[cfg(feature = "mpi")]
#[doc(hidden)]
pub mod comm;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod counters;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod fxhash;
#[doc(hidden)]
pub mod histogram;
#[doc(hidden)]
pub mod json;
#[doc(hidden)]
pub mod options;
#[doc(hidden)]
pub mod platform;
#[doc(hidden)]
pub mod profile;
#[doc(hidden)]
pub mod publish;
#[doc(hidden)]
pub mod scratch;
#[doc(hidden)]
pub mod sync;
#[doc(hidden)]
pub mod value;

// 2. Records, lanes and memory.
#[doc(hidden)]
pub mod lane;
#[doc(hidden)]
pub mod record;
#[doc(hidden)]
pub mod spill;
#[doc(hidden)]
pub mod store;

// 3. Names.
#[doc(hidden)]
pub mod registry;

// 4. The active session, as recording sees it.
#[doc(hidden)]
pub mod active;

// 5. Recording: the per-thread recorder and the ways into it.
#[doc(hidden)]
pub mod callmeta;
#[doc(hidden)]
pub mod callsite;
#[doc(hidden)]
pub mod region;
#[doc(hidden)]
pub mod task;
#[doc(hidden)]
pub mod thread;
#[doc(hidden)]
pub mod trace;

// 6. Assembly: lanes and names in, rows and columns out.
#[doc(hidden)]
pub mod assemble;
#[doc(hidden)]
pub mod callmatch;
#[doc(hidden)]
pub mod calltree;
#[doc(hidden)]
pub mod metadata;
#[doc(hidden)]
pub mod placement;
#[doc(hidden)]
pub mod sink;
