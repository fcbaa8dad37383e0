//! Options from a TOML file (the Python package's `[profiling]` table,
//! `profile_config.py`'s `load_profiling_config`) and from the
//! `SCOPE_PROFILER_*` environment variables (`ProfileManager.setup_from_env`).
//!
//! The file is read with toml's spanned document parser (no serde): every
//! key and value keeps its byte range, so an error names the line and
//! column. Precedence is the Python package's: what the program sets with
//! builder calls after `from_env` wins over the environment, which wins over
//! the file, which wins over the defaults.
//!
//! The TOML part is `file.rs` (feature `toml`).

#[cfg(feature = "toml")]
use std::path::Path;
use std::path::PathBuf;

use crate::error::Error;
use crate::options::{Options, read};

#[cfg(feature = "toml")]
mod file;

impl Options {
    /// Options from the `SCOPE_PROFILER_*` environment variables, over the
    /// TOML file `SCOPE_PROFILER_CONFIG` names (if it is set), over the
    /// defaults: what the Python package's `ProfileManager.setup_from_env`
    /// reads, plus this crate's own variables. Builder calls on the result
    /// win over all of them: `Options::from_env()?.label("x")`.
    ///
    /// | variable | Python | sets |
    /// | --- | --- | --- |
    /// | `SCOPE_PROFILER_CONFIG` | same | the TOML file read first ([`Options::from_toml`]) |
    /// | `SCOPE_PROFILER_OUTPUT` | same (`output`) | [`Options::file_path`] (an HDF5 file; a JSON profile for `.json`/`.json.gz`; `.html` names are an `Err`) |
    /// | `SCOPE_PROFILER_RECURSIVE` | same (`recursive_profile`) | [`Options::trace_all`] |
    /// | `SCOPE_PROFILER_TRACE_ALL` | — | [`Options::trace_all`] (must agree with `SCOPE_PROFILER_RECURSIVE` if both are set) |
    /// | `SCOPE_PROFILER_ENABLE_TAGS` | same | tags added to [`Options::enable_tags`] (comma-separated) |
    /// | `SCOPE_PROFILER_DISABLE` | — | [`Options::deactivate`] |
    /// | `SCOPE_PROFILER_LIVE` | — | [`Options::live`] (`127.0.0.1:7878`) |
    /// | `SCOPE_PROFILER_LIVE_TOKEN` | — | [`Options::live_token`] |
    /// | `SCOPE_PROFILER_AUTO_FINALIZE` | same | nothing: one warning line if true (see the README) |
    /// | `SCOPE_PROFILER_SAMPLE_HZ` | the C library's | [`Options::sample_hz`] (`0`: off) |
    /// | `SCOPE_PROFILER_MPI` | same | with the `mpi` feature, true: `Options::mpi` on the world communicator (MPI initialized by the application first, else an `Err`); ignored without the feature |
    ///
    /// Booleans are `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`, in any
    /// case; any other value (the empty one too) is an [`Error::Env`] naming
    /// the variable and the value (the Python package reads it as false).
    ///
    /// ```
    /// use scope_profiler::Options;
    /// // With none of the variables set, these are the defaults; the
    /// // builder call wins over whatever the environment says.
    /// let o = Options::from_env()?.label("from-code");
    /// assert_eq!(scope_profiler_core::internal::options::read::label(&o), "from-code");
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn from_env() -> Result<Options, Error> {
        let get = |name: &str| -> Result<Option<String>, Error> {
            match std::env::var(name) {
                Ok(v) => Ok(Some(v)),
                Err(std::env::VarError::NotPresent) => Ok(None),
                Err(std::env::VarError::NotUnicode(v)) => Err(Error::Env {
                    variable: name.to_owned(),
                    value: v.to_string_lossy().into_owned(),
                    message: "not valid UTF-8".to_owned(),
                }),
            }
        };
        Options::new().with_env(get)
    }

    /// These options with the configuration file and the variables `get`
    /// gives applied (`get` reads the environment; tests give a map).
    pub(crate) fn with_env(
        self,
        get: impl Fn(&str) -> Result<Option<String>, Error>,
    ) -> Result<Options, Error> {
        let mut options = match get(CONFIG)? {
            Some(path) if path.is_empty() => {
                return Err(env_error(CONFIG, &path, "empty: name a TOML file"));
            }
            #[cfg(feature = "toml")]
            Some(path) => self.with_toml(Path::new(&path))?,
            #[cfg(not(feature = "toml"))]
            Some(path) => {
                return Err(env_error(
                    CONFIG,
                    &path,
                    "reading a TOML file needs the feature `toml` of scope-profiler \
                     (a default feature), which this build leaves out",
                ));
            }
            None => self,
        };
        if let Some(path) = get(OUTPUT)? {
            options = options.file_path(output_path(&path)?);
        }
        let recursive = env_bool(RECURSIVE, get(RECURSIVE)?)?;
        let trace_all = env_bool(TRACE_ALL, get(TRACE_ALL)?)?;
        if let (Some(r), Some(t)) = (recursive, trace_all)
            && r != t
        {
            return Err(env_error(
                TRACE_ALL,
                &get(TRACE_ALL)?.unwrap_or_default(),
                format!(
                    "disagrees with {RECURSIVE}={:?}",
                    get(RECURSIVE)?.unwrap_or_default()
                ),
            ));
        }
        if let Some(on) = recursive.or(trace_all) {
            options = options.trace_all(on);
        }
        if let Some(tags) = get(ENABLE_TAGS)? {
            let mut all = read::enable_tags(&options).to_vec();
            for tag in tags.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                if !all.iter().any(|t| t == tag) {
                    all.push(tag.to_owned());
                }
            }
            options = options.enable_tags(all);
        }
        if let Some(on) = env_bool(TRACK_ALLOCATIONS, get(TRACK_ALLOCATIONS)?)? {
            options = options.track_allocations(on);
        }
        if let Some(off) = env_bool(DISABLE, get(DISABLE)?)? {
            options = options.deactivate(off);
        }
        match get(LIVE)? {
            Some(addr) if addr.trim().is_empty() => {
                return Err(env_error(
                    LIVE,
                    &addr,
                    "empty: name an address (127.0.0.1:7878)",
                ));
            }
            Some(addr) => options = options.live(addr.trim()),
            None => {}
        }
        if let Some(token) = get(LIVE_TOKEN)? {
            options = options.live_token(token);
        }
        if let Some(hz) = get(SAMPLE_HZ)? {
            match hz.trim().parse::<u32>() {
                Ok(hz) => options = options.sample_hz(hz),
                Err(_) => {
                    return Err(env_error(
                        SAMPLE_HZ,
                        &hz,
                        "expected 0 (off) or a rate in Hz, a whole number",
                    ));
                }
            }
        }
        #[cfg(feature = "mpi")]
        if env_bool(MPI, get(MPI)?)? == Some(true) {
            if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
                return Err(env_error(
                    MPI,
                    &get(MPI)?.unwrap_or_default(),
                    "MPI is not initialized: call mpi::initialize() before Options::from_env()",
                ));
            }
            options = options.mpi(&mpi::topology::SimpleCommunicator::world());
        }
        if env_bool(AUTO_FINALIZE, get(AUTO_FINALIZE)?)? == Some(true) {
            eprintln!(
                "scope-profiler: {AUTO_FINALIZE} is ignored: Rust has no interpreter exit to finalize at; \
                 use scope_profiler::session(..), whose guard finalizes when dropped"
            );
        }
        Ok(options)
    }
}

const CONFIG: &str = "SCOPE_PROFILER_CONFIG";
const OUTPUT: &str = "SCOPE_PROFILER_OUTPUT";
const RECURSIVE: &str = "SCOPE_PROFILER_RECURSIVE";
const TRACE_ALL: &str = "SCOPE_PROFILER_TRACE_ALL";
const ENABLE_TAGS: &str = "SCOPE_PROFILER_ENABLE_TAGS";
const TRACK_ALLOCATIONS: &str = "SCOPE_PROFILER_TRACK_ALLOCATIONS";
const DISABLE: &str = "SCOPE_PROFILER_DISABLE";
const LIVE: &str = "SCOPE_PROFILER_LIVE";
const LIVE_TOKEN: &str = "SCOPE_PROFILER_LIVE_TOKEN";
const SAMPLE_HZ: &str = "SCOPE_PROFILER_SAMPLE_HZ";
const AUTO_FINALIZE: &str = "SCOPE_PROFILER_AUTO_FINALIZE";
#[cfg(feature = "mpi")]
const MPI: &str = "SCOPE_PROFILER_MPI";

fn env_error(variable: &str, value: &str, message: impl Into<String>) -> Error {
    Error::Env {
        variable: variable.to_owned(),
        value: value.to_owned(),
        message: message.into(),
    }
}

/// A boolean variable, as the Python package's `env_bool` reads it, but
/// strict: a value that is neither true nor false is an `Err`.
fn env_bool(variable: &str, value: Option<String>) -> Result<Option<bool>, Error> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(Some(true)),
        "0" | "false" | "no" | "off" => Ok(Some(false)),
        _ => Err(env_error(
            variable,
            &value,
            "expected 1/true/yes/on or 0/false/no/off",
        )),
    }
}

/// The output file `SCOPE_PROFILER_OUTPUT` names: an HDF5 file, or a JSON
/// profile for a `.json`/`.json.gz` name (as the Python package chooses by
/// name); an HTML report (which the Python package writes by name) is not
/// written by this crate.
fn output_path(value: &str) -> Result<PathBuf, Error> {
    if value.is_empty() {
        return Err(env_error(OUTPUT, value, "empty: name the output file"));
    }
    let lower = value.to_ascii_lowercase();
    let foreign = [".html", ".htm"];
    if foreign.iter().any(|ext| lower.ends_with(ext)) {
        return Err(env_error(
            OUTPUT,
            value,
            "this crate writes HDF5 and JSON profiles, not HTML reports (the Python package \
             writes one by name); name an .h5 or .json file and make the report with \
             `scope-profiler report`",
        ));
    }
    Ok(PathBuf::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    #[cfg(feature = "mpi")]
    #[test]
    fn output_mode_and_scope_profiler_mpi() {
        use crate::options::MpiOutput;
        let dir = std::env::temp_dir().join(format!("sp-output-mode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.toml");
        for (value, want) in [
            ("auto", MpiOutput::Auto),
            ("direct", MpiOutput::Direct),
            ("parallel", MpiOutput::Parallel),
        ] {
            std::fs::write(&path, format!("[profiling]\noutput_mode = \"{value}\"\n")).unwrap();
            assert_eq!(read::mpi_output(&Options::from_toml(&path).unwrap()), want);
            assert_eq!(want.as_str(), value);
        }
        std::fs::write(&path, "[profiling]\noutput_mode = \"serial\"\n").unwrap();
        let err = Options::from_toml(&path).unwrap_err().to_string();
        assert!(
            err.contains("line 2") && err.contains("\"serial\""),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        // MPI is not initialized in this process: an error naming the fix.
        let err = Options::new().with_env(env(&[(MPI, "1")])).unwrap_err();
        assert!(err.to_string().contains("mpi::initialize()"), "{err}");
        let o = Options::new().with_env(env(&[(MPI, "0")])).unwrap();
        assert_eq!(read::mpi(&o), None);
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Result<Option<String>, Error> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| Ok(map.get(name).cloned())
    }

    #[test]
    fn env_live() {
        let o = Options::new()
            .with_env(env(&[(LIVE, " 127.0.0.1:0 "), (LIVE_TOKEN, "t0k")]))
            .unwrap();
        assert_eq!(read::live(&o), Some("127.0.0.1:0"));
        assert_eq!(read::live_token(&o), Some("t0k"));
        let err = Options::new().with_env(env(&[(LIVE, " ")])).unwrap_err();
        assert!(err.to_string().contains(LIVE), "{err}");
    }

    #[test]
    fn env_sample_hz() {
        let o = Options::new()
            .with_env(env(&[(SAMPLE_HZ, " 997 ")]))
            .unwrap();
        assert_eq!(read::sample_hz(&o), Some(997));
        let o = Options::new()
            .sample_hz(50)
            .with_env(env(&[(SAMPLE_HZ, "0")]))
            .unwrap();
        assert_eq!(read::sample_hz(&o), None);
        for bad in ["", "-1", "1e3", "fast", "4294967296"] {
            let text = Options::new()
                .with_env(env(&[(SAMPLE_HZ, bad)]))
                .unwrap_err()
                .to_string();
            assert!(
                text.contains(SAMPLE_HZ) && text.contains(&format!("{bad:?}")),
                "{text}"
            );
        }
    }

    #[test]
    fn env_bools() {
        for (v, b) in [
            ("1", true),
            ("TRUE", true),
            ("Yes", true),
            ("on", true),
            ("0", false),
            ("off", false),
            ("No", false),
        ] {
            let o = Options::new().with_env(env(&[(DISABLE, v)])).unwrap();
            assert_eq!(read::deactivate(&o), b, "{v}");
        }
        for bad in ["", "2", "maybe", "enabled"] {
            let err = Options::new()
                .with_env(env(&[(RECURSIVE, bad)]))
                .unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains(RECURSIVE) && text.contains(&format!("{bad:?}")),
                "{text}"
            );
        }
    }

    #[test]
    fn env_tags_merge_and_trace_all_agree() {
        let o = Options::new()
            .enable_tags(["a"])
            .with_env(env(&[
                (ENABLE_TAGS, " b, a ,,c"),
                (RECURSIVE, "yes"),
                (TRACE_ALL, "1"),
            ]))
            .unwrap();
        assert_eq!(read::enable_tags(&o), ["a", "b", "c"]);
        assert!(o.trace_all);
        let err = Options::new()
            .with_env(env(&[(RECURSIVE, "1"), (TRACE_ALL, "0")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("disagrees"), "{err}");
    }

    #[test]
    fn env_output() {
        let o = Options::new()
            .in_memory()
            .with_env(env(&[(OUTPUT, "x/run.h5")]))
            .unwrap();
        assert_eq!(read::file_path(&o), Some(Path::new("x/run.h5")));
        let o = Options::new()
            .with_env(env(&[(OUTPUT, "run.json")]))
            .unwrap();
        assert_eq!(read::file_path(&o), Some(Path::new("run.json")));
        let err = Options::new()
            .with_env(env(&[(OUTPUT, "run.html")]))
            .unwrap_err();
        assert!(matches!(err, Error::Env { .. }), "{err}");
    }

    /// Hostile values (issue 26): every variable given empty, NUL, control
    /// and replacement characters, a megabyte, and seeded random strings
    /// gives `Ok` or an `Error::Env`/`Error::Config` naming it, never a
    /// panic; a value is never truncated or altered silently.
    #[test]
    fn any_string_in_any_variable_is_ok_or_an_error_naming_it() {
        let all = [
            CONFIG,
            OUTPUT,
            RECURSIVE,
            TRACE_ALL,
            ENABLE_TAGS,
            DISABLE,
            AUTO_FINALIZE,
        ];
        let mut values: Vec<String> = [
            "",
            " ",
            "\0",
            "a\0b",
            "\u{fffd}",
            "1\n",
            "true\0",
            ",,,",
            "x.h5\0.json",
            "..",
            "/",
            "\u{202e}gnp.h5",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        values.push("y".repeat(1 << 20));
        values.push(format!("{}.h5", "d/".repeat(1 << 18)));
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200 {
            let len = (state % 40) as usize;
            let s: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    char::from_u32((state % 0x11_0000) as u32).unwrap_or('\u{fffd}')
                })
                .collect();
            values.push(s);
        }
        for variable in all {
            for value in &values {
                match Options::new().with_env(env(&[(variable, value)])) {
                    Ok(_) => {}
                    Err(Error::Env {
                        variable: v,
                        value: got,
                        ..
                    }) => {
                        assert_eq!(v, variable);
                        assert_eq!(&got, value, "the value is reported whole");
                    }
                    Err(Error::Config { path, .. }) => {
                        assert_eq!(variable, CONFIG);
                        assert_eq!(path, Path::new(value));
                    }
                    Err(e) => panic!("{variable}={value:?}: {e}"),
                }
            }
        }
        // A tag list keeps every tag whole, NUL and megabyte ones too.
        let long = "t".repeat(1 << 20);
        let tags = format!("a\0b, {long} ,,\u{2400}");
        let o = Options::new()
            .with_env(env(&[(ENABLE_TAGS, &tags)]))
            .unwrap();
        assert_eq!(read::enable_tags(&o), ["a\0b", long.as_str(), "\u{2400}"]);
    }

    /// A TOML file of any bytes: `Ok` or an `Error::Config` naming it.
    #[cfg(feature = "toml")]
    #[test]
    fn any_bytes_as_a_toml_file_are_ok_or_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("sp-toml-bytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.toml");
        let mut inputs: Vec<Vec<u8>> = vec![
            vec![0xff, 0xfe, 0x00],
            b"[profiling]\nlabel = \"\0\"\n".to_vec(),
            b"[profiling]\nfile_path = \"a\\u0000b.h5\"\n".to_vec(),
            b"[profiling]\nbuffer_limit = 99999999999999999999999\n".to_vec(),
            b"[profiling]\nbuffer_limit = -1\n".to_vec(),
            b"[profiling]\nhdf5_compression_level = 1e308\n".to_vec(),
            b"[profiling]\nenable_tags = [[[[[]]]]]\n".to_vec(),
            format!("[profiling]\nlabel = \"{}\"\n", "x".repeat(1 << 20)).into_bytes(),
            "[".repeat(100_000).into_bytes(),
            "a = [".repeat(50_000).into_bytes(),
            "[profiling]\n".repeat(3).into_bytes(),
        ];
        let base = b"[profiling]\nfile_path = \"run.h5\"\nlabel = \"x\"\nbuffer_limit = 1000\n\
                     enable_tags = [\"a\"]\n[profiling.hdf5]\ncompression = \"gzip\"\n";
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            let mut b = base.to_vec();
            for _ in 0..1 + state % 4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = (state % b.len() as u64) as usize;
                b[at] = (state >> 32) as u8;
            }
            inputs.push(b);
        }
        for bytes in &inputs {
            std::fs::write(&path, bytes).unwrap();
            match Options::from_toml(&path) {
                Ok(_) => {}
                Err(Error::Config { path: p, message }) => {
                    assert_eq!(p, path);
                    assert!(!message.is_empty());
                }
                Err(e) => panic!("{:?}: {e}", String::from_utf8_lossy(bytes)),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
