//! The pure-Rust core of [scope-profiler](https://docs.rs/scope-profiler):
//! recording (clock, records, the per-thread recorder), lanes and memory
//! (the store, scratch files), names (the registry) and assembly (lanes and
//! names in, rows and columns out), with the platform code under them.
//!
//! **Use the `scope-profiler` crate**, which re-exports everything a user
//! names. This crate's one public (and hidden) module, [`internal`], holds
//! the internals the `scope-profiler` crates (`scope-profiler`,
//! `scope-profiler-hdf5`) share, released together and pinned to one
//! version, with no promise to anyone else. It builds and links no C code,
//! so a library that instruments itself (`scope-profiler` without its
//! `hdf5` feature) needs no C library.

#![warn(clippy::undocumented_unsafe_blocks)]

/// The core's modules, for the crates above it: see `internal.rs`.
#[doc(hidden)]
pub mod internal;

// Inside this crate every module keeps its short path (`crate::clock`),
// whether or not another module of it uses that path today.
#[cfg(feature = "mpi")]
use internal::comm;
#[allow(unused_imports)]
use internal::{
    active, assemble, callmatch, callmeta, callsite, calltree, clock, config, counters, error,
    fxhash, histogram, json, lane, lanemeta, metadata, open, options, placement, platform, profile,
    publish, record, region, registry, sampling, scratch, sink, spill, store, sync, task, thread,
    trace, value,
};
