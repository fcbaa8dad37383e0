//! What `scope-profiler` needs of this crate beyond its public API: the
//! JSON profile's writer (`finalize` writes `.json` and `.json.gz` paths
//! through it, `write_profile` too). Not a public API: it may change in any
//! release. The file stays where it is (`src/jsonfile/`): `#[path]` only
//! gives it this one door.

#[path = "jsonfile/mod.rs"]
pub mod jsonfile;
