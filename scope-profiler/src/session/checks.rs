//! What `setup` checks before it starts a session: no session active, the
//! options consistent, the output path usable (its directory exists and
//! takes a file).

#![forbid(unsafe_code)]

use std::path::Path;

use super::deactivated;
use crate::error::Error;
use crate::options::{Options, Output, read};
use crate::{active, metadata, scratch};

/// Why `setup` cannot start a session with `options`.
pub(super) fn check_setup(options: &Options) -> Result<(), Error> {
    if active::is_active() || deactivated().is_some() {
        return Err(Error::AlreadyConfigured);
    }
    check_options(options)?;
    if read::deactivate(options) {
        return Ok(());
    }
    check_sampling(options)?;
    if let Output::File(path) = read::output(options) {
        check_output_path(path)?;
        check_json_output(options, path)?;
    }
    Ok(())
}

/// An MPI session's collective writers write HDF5 only: a `.json` path
/// (at `setup` or `Run::finalize_to`) is refused on every rank.
#[cfg_attr(not(feature = "mpi"), allow(unused_variables))]
pub(super) fn check_json_output(options: &Options, path: &Path) -> Result<(), Error> {
    #[cfg(feature = "mpi")]
    if read::communicator(options).is_some()
        && crate::reader::internal::jsonfile::is_json_path(path)
    {
        return Err(Error::InvalidOption {
            option: "mpi",
            message: format!(
                "{}: an MPI session writes an HDF5 file: a JSON profile is not available in \
                 MPI sessions yet",
                path.display()
            ),
        });
    }
    Ok(())
}

/// A session that samples needs records to give the samples to, and an
/// event the kernel opens: tried here, on the thread that calls `setup`.
fn check_sampling(options: &Options) -> Result<(), Error> {
    let Some(hz) = read::sample_hz(options) else {
        return Ok(());
    };
    let refuse = |message: String| {
        Err(Error::InvalidOption {
            option: "sample_hz",
            message,
        })
    };
    if !crate::platform::HAS_PERF_EVENTS {
        return refuse(format!(
            "sampling needs Linux's perf_event_open; this build is for {}, which has \
             none{}",
            std::env::consts::OS,
            if cfg!(scope_profiler_portable) {
                " (built with --cfg scope_profiler_portable)"
            } else {
                ""
            }
        ));
    }
    if read::aggregation(options) {
        return refuse(
            "an aggregation-mode session keeps per-region totals, not the calls a sample \
             is given to: sample a session that records calls"
                .to_owned(),
        );
    }
    match crate::platform::Sampler::open(hz, crate::sampling::RING_PAGES) {
        Ok(_) => Ok(()),
        Err(errno) => refuse(format!(
            "the kernel refused a cpu-clock sampling event at {hz} Hz: {}",
            crate::counters::perf_refusal(errno)
        )),
    }
}

/// Option values `setup` refuses, naming the option.
fn check_options(options: &Options) -> Result<(), Error> {
    // HDF5 chunks are at most 4 GiB; the event columns hold 8-byte values.
    const MAX_CHUNK_EVENTS: usize = (u32::MAX / 8) as usize;
    if let Some(n) = read::chunk_size(options)
        && (n == 0 || n > MAX_CHUNK_EVENTS)
    {
        return Err(Error::InvalidOption {
            option: "chunk_size",
            message: format!("{n} events: a chunk holds 1 to {MAX_CHUNK_EVENTS} events"),
        });
    }
    #[cfg(not(feature = "capture-source"))]
    if read::capture_region_source(options) {
        return Err(Error::InvalidOption {
            option: "capture_region_source",
            message: "source texts are compiled into the binary only with the feature \
                      `capture-source` of scope-profiler, which this build leaves out"
                .to_owned(),
        });
    }
    #[cfg(feature = "mpi")]
    if read::communicator(options).is_some() {
        let refuse = |message: &str| {
            Err(Error::InvalidOption {
                option: "mpi",
                message: message.to_owned(),
            })
        };
        if *read::output(options) == Output::Memory {
            return refuse("an MPI session writes a file: give it a file path, not in_memory()");
        }
        if read::aggregation(options) {
            return refuse("aggregation mode is not available in MPI sessions yet");
        }
        crate::collective::writer(options)?;
    }
    for (key, _) in read::metadata(options) {
        if key.is_empty() || metadata::is_reserved_key(key) {
            return Err(Error::InvalidOption {
                option: "metadata",
                message: format!(
                    "the key {key:?} is {}",
                    if key.is_empty() {
                        "empty"
                    } else {
                        "one the run description writes itself"
                    }
                ),
            });
        }
    }
    Ok(())
}

/// Fails early, naming the path, when the profile could not be published
/// there: a missing directory, a directory as the path, no write permission.
pub(super) fn check_output_path(path: &Path) -> Result<(), Error> {
    if path.as_os_str().is_empty() {
        return Err(Error::invalid_path(path, "the path is empty"));
    }
    // Without `hdf5`, the JSON profile is the one file format (and
    // uncompressed: gzip comes with the feature).
    #[cfg(not(feature = "hdf5"))]
    if !crate::reader::internal::jsonfile::is_json_path(path) {
        return Err(Error::needs_hdf5(path, "an HDF5 file"));
    } else if crate::reader::internal::jsonfile::is_gzip_path(path) {
        return Err(Error::needs_hdf5(path, "gzip (.json.gz)"));
    }
    check_output_dir(path)
}

/// The rest of `check_output_path`: the path names a file in a directory
/// this process can write.
fn check_output_dir(path: &Path) -> Result<(), Error> {
    if path.is_dir() {
        return Err(Error::invalid_path(path, "it is a directory"));
    }
    let names_a_file =
        path.file_name().is_some() && !path.as_os_str().as_encoded_bytes().ends_with(b"/");
    if !names_a_file {
        return Err(Error::invalid_path(path, "it does not name a file"));
    }
    let dir = scratch::dir_of(path);
    if !dir.is_dir() {
        return Err(Error::invalid_path(
            path,
            format!("the directory {} does not exist", dir.display()),
        ));
    }
    // The file is published by creating a sibling and renaming it: probe that.
    let probe = dir.join(format!(".scope-profiler-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::invalid_path(
            path,
            format!("cannot create files in {}: {e}", dir.display()),
        )),
    }
}
