//! The run description stored as `/metadata` attributes.

use crate::options::read;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::clock::Anchor;
use crate::options::{MetadataDetail, Options};
use crate::value::Value;

/// The `/metadata` attributes of a session with `options`, started at
/// `wall_start` (wall clock) and `start`, ending at `end`; `features` are
/// the cargo features of the build (`MetadataDetail::Full` writes them).
pub fn run_metadata(
    options: &Options,
    wall_start: SystemTime,
    start: Anchor,
    end: Anchor,
    features: &[&str],
) -> Vec<(String, Value)> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    let omp = std::env::var("OMP_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(cores);
    let entries: Vec<(&str, Value)> = vec![
        ("label", read::label(options).into()),
        ("timestamp", iso8601(wall_start).into()),
        ("platform", platform().into()),
        ("chip_information", chip().into()),
        ("total_cores", cores.into()),
        ("omp_num_threads", omp.into()),
        ("mpi_size", 1i64.into()),
        ("num_nodes", 1i64.into()),
        ("start_time_ns", start.ns.into()),
        ("finalize_time_ns", end.ns.into()),
        // The process, so that `Profile::merge` can tell profiles of one
        // process (an extension's and its host's) from others'.
        ("pid", i64::from(std::process::id()).into()),
        // The timeline of the timestamps: another profile lines up with
        // them only on the same one (`Profile::merge` checks it).
        ("clock", crate::platform::CLOCK.into()),
        ("source", "rust".into()),
        ("source_language", "rust".into()),
        (
            "scope_profiler_rust_version",
            env!("CARGO_PKG_VERSION").into(),
        ),
    ];
    let mut out: Vec<(String, Value)> = entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    out.push((
        "metadata_detail".to_owned(),
        options.metadata_detail.as_str().into(),
    ));
    if options.metadata_detail == MetadataDetail::Full {
        out.extend(full_metadata(features));
    }
    out.extend(options.user_metadata.iter().cloned());
    out.into_iter().map(|(k, v)| (k, truncate(v))).collect()
}

/// What [`MetadataDetail::Full`] adds: the Python package's full level
/// (host, user, directory, environment) and the build.
fn full_metadata(features: &[&str]) -> Vec<(String, Value)> {
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let mut out: Vec<(String, Value)> = vec![
        ("hostname".into(), hostname().into()),
        ("uname".into(), uname().into()),
        ("working_directory".into(), cwd.into()),
        ("user".into(), user().into()),
        (
            "rustc_version".into(),
            env!("SCOPE_PROFILER_RUSTC_VERSION").into(),
        ),
        ("target".into(), env!("SCOPE_PROFILER_TARGET").into()),
        (
            "build_profile".into(),
            env!("SCOPE_PROFILER_PROFILE").into(),
        ),
        ("scope_profiler_features".into(), features.join(",").into()),
    ];
    for name in ENVIRONMENT_VARIABLES {
        if let Some(value) = std::env::var(name).ok().filter(|v| !v.is_empty()) {
            out.push(((*name).to_owned(), value.into()));
        }
    }
    let mut slurm: Vec<(String, String)> = std::env::vars()
        .filter(|(k, v)| SLURM_PREFIXES.iter().any(|p| k.starts_with(p)) && !v.is_empty())
        .collect();
    slurm.sort();
    out.extend(slurm.into_iter().map(|(k, v)| (k, v.into())));
    out
}

/// The environment variables the Python package records at its full level,
/// under their own names, when set.
const ENVIRONMENT_VARIABLES: &[&str] = &[
    "LD_LIBRARY_PATH",
    "LOADEDMODULES",
    "MODULEPATH",
    "MODULESHOME",
    "MODULES_CMD",
    "MODULES_RUN_QUARANTINE",
    "PATH",
    "PYTHON_HOME",
    "PYTHON_INC",
    "PYTHON_INCLUDE",
    "PYTHON_LIB",
    "VIRTUAL_ENV",
];

/// Every variable with one of these prefixes is recorded at the full level.
const SLURM_PREFIXES: &[&str] = &["SLURM_", "SLURMD_"];

/// Keys the run description writes itself, at either level: a user entry
/// ([`Options::metadata`]) may not take one.
pub fn is_reserved_key(key: &str) -> bool {
    const OWN: &[&str] = &[
        "label",
        "timestamp",
        "platform",
        "chip_information",
        "total_cores",
        "omp_num_threads",
        "mpi_size",
        "num_nodes",
        "start_time_ns",
        "finalize_time_ns",
        "pid",
        "clock",
        "source",
        "source_language",
        "scope_profiler_rust_version",
        "metadata_detail",
        "hostname",
        "rank_hostnames",
        "uname",
        "working_directory",
        "user",
        "rustc_version",
        "target",
        "build_profile",
        "scope_profiler_features",
    ];
    OWN.contains(&key)
        || ENVIRONMENT_VARIABLES.contains(&key)
        || SLURM_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// HDF5 attributes cannot exceed 64 KiB: longer strings are cut, as the
/// Python package cuts them.
fn truncate(value: Value) -> Value {
    const MAX_CHARS: usize = 60_000;
    const MARKER: &str = "...[truncated]";
    match value {
        Value::Str(s) if s.chars().count() > MAX_CHARS => {
            let kept: String = s.chars().take(MAX_CHARS - MARKER.len()).collect();
            Value::Str(kept + MARKER)
        }
        other => other,
    }
}

/// The source file of a region as the file shows it at `detail`: at
/// [`MetadataDetail::Minimal`] never an absolute path (the Python package
/// writes paths relative to the working directory or the import root, else
/// the file name): relative to the working directory if under it, from the
/// crate's directory for a crate in Cargo's registry or git checkouts, else
/// from the crate's directory (the one holding `src/`) or, outside any
/// `src/`, the file name alone. Always a suffix of `path`.
pub fn shown_source_file(detail: MetadataDetail, path: &str) -> &str {
    if detail == MetadataDetail::Full || !path.starts_with('/') {
        return path;
    }
    if let Ok(cwd) = std::env::current_dir()
        && let Some(rest) = cwd
            .to_str()
            .and_then(|cwd| path.strip_prefix(cwd))
            .and_then(|rest| rest.strip_prefix('/'))
    {
        return rest;
    }
    // .../registry/src/<index>/<crate-version>/src/lib.rs and
    // .../git/checkouts/<repo>/<rev>/src/lib.rs: from <crate-version> or
    // the checkout's files on.
    for (marker, skip) in [("/registry/src/", 1), ("/git/checkouts/", 2)] {
        if let Some(at) = path.find(marker) {
            let mut rest = &path[at + marker.len()..];
            for _ in 0..skip {
                rest = rest.split_once('/').map_or("", |(_, r)| r);
            }
            if !rest.is_empty() {
                return rest;
            }
        }
    }
    // /somewhere/mycrate/src/lib.rs: from `mycrate/` on.
    if let Some(src) = path.rfind("/src/")
        && let Some(dir) = path[..src].rfind('/')
    {
        return &path[dir + 1..];
    }
    path.rsplit('/').next().unwrap_or(path)
}

/// `s` as a JSON string literal, quoted and escaped (RFC 8259). The runtime
/// writes a few JSON values into string attributes; a JSON crate would
/// bring trait impls into every user's crate (see the crate's dependency
/// policy in ARCHITECTURE.md), so this one function does it.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    crate::value::write_json_string(&mut out, s);
    out
}

/// `2026-12-02T11:15:15.202952+00:00`, as Python's `datetime.isoformat()`.
pub fn iso8601(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:06}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

pub use crate::platform::{hostname, platform, uname};

/// The user name, as Python's `getpass.getuser()` finds it: `LOGNAME`,
/// `USER`, `LNAME` or `USERNAME`, else the password database.
fn user() -> String {
    for var in ["LOGNAME", "USER", "LNAME", "USERNAME"] {
        if let Some(name) = std::env::var(var).ok().filter(|v| !v.is_empty()) {
            return name;
        }
    }
    crate::platform::user_from_database()
}

fn chip() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn iso8601_matches_python() {
        let t = UNIX_EPOCH + Duration::from_micros(1_796_210_115_202_952);
        assert_eq!(iso8601(t), "2026-12-02T11:15:15.202952+00:00");
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000000+00:00");
    }

    #[test]
    fn minimal_source_files_are_never_absolute() {
        let m = MetadataDetail::Minimal;
        let cwd = std::env::current_dir().unwrap();
        let inside = format!("{}/src/lib.rs", cwd.display());
        assert_eq!(shown_source_file(m, &inside), "src/lib.rs");
        assert_eq!(shown_source_file(m, "src/main.rs"), "src/main.rs");
        assert_eq!(
            shown_source_file(
                m,
                "/home/ann/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/toml-1.2.2/src/de.rs"
            ),
            "toml-1.2.2/src/de.rs"
        );
        assert_eq!(
            shown_source_file(
                m,
                "/home/ann/.cargo/git/checkouts/foo-1234/abcdef/src/lib.rs"
            ),
            "src/lib.rs"
        );
        assert_eq!(shown_source_file(m, "/opt/elsewhere/gen.rs"), "gen.rs");
        assert_eq!(
            shown_source_file(m, "/opt/build/vendor/zstd/src/lib.rs"),
            "zstd/src/lib.rs"
        );
        assert_eq!(shown_source_file(MetadataDetail::Full, &inside), inside);
    }

    #[test]
    fn long_values_are_cut_as_python_cuts_them() {
        let Value::Str(cut) = truncate(Value::Str("x".repeat(70_000))) else {
            panic!("a string stays a string");
        };
        assert_eq!(cut.chars().count(), 60_000);
        assert!(cut.ends_with("...[truncated]"));
    }

    #[test]
    fn host_description_is_filled() {
        assert!(!hostname().is_empty());
        assert!(platform().contains('-'));
        assert!(!chip().is_empty());
        assert!(uname().contains(&hostname()));
        // The portable platform knows the user from the environment alone.
        if crate::platform::IMPLEMENTATION == "linux" {
            assert!(!user().is_empty());
        }
    }
}
