//! Configuration as in the Python package: `Options::from_toml`,
//! `Options::from_env`, `setup_from_env`, deactivated sessions, the metadata
//! levels and the chunk size.
//!
//! What depends on the process's environment runs in `sp-child` (the
//! environment is process-wide and these tests run on parallel threads);
//! everything that sets up a session holds `serial()`. The interop test
//! loads the same TOML in the Python package (the venv of `tests/interop.rs`)
//! and compares every shared setting.

use scope_profiler_core::internal::options::read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use integration_tests::{describe_options, made_reader_python, output_ok, serial, temp_dir};
use scope_profiler::{self as sp, Compression, Error, Options, Value, WritePath};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the TOML file");
    path
}

/// `sp-child ARGS` with the `SCOPE_PROFILER_*` variables of this process
/// removed and `env` set.
fn child(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sp-child"));
    for (name, _) in std::env::vars() {
        if name.starts_with("SCOPE_PROFILER_") {
            command.env_remove(name);
        }
    }
    command.args(args).envs(env.iter().copied());
    command.output().expect("run sp-child")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `key=value` lines of a child's description, as a sorted list.
fn lines(out: &str) -> Vec<String> {
    let mut l: Vec<String> = out
        .lines()
        .filter(|l| l.contains('=') && *l != "ok")
        .map(str::to_owned)
        .collect();
    l.sort();
    l
}

fn meta<'a>(profile: &'a sp::Profile, key: &str) -> Option<&'a Value> {
    profile.metadata_value(key)
}

// ---------------------------------------------------------------------------
// A TOML file drives a real run
// ---------------------------------------------------------------------------

#[test]
fn a_toml_file_drives_a_real_run() {
    let _s = serial();
    let dir = temp_dir("config-run");
    let file = dir.join("from-toml.h5");
    let toml = write(
        &dir,
        "profiling.toml",
        &format!(
            r#"
# A file the Python package loads too.
[profiling]
file_path = "{}"
label = "toml-run"
enable_tags = ["solver"]
capture_region_source = true
use_likwid = false        # a Python feature at its default: accepted silently

[profiling.hdf5]
compression = "gzip"
compression_level = 6
chunk_size = 1000
"#,
            file.display()
        ),
    );
    let options = Options::from_toml(&toml).expect("from_toml").verbose(false);
    assert_eq!(read::enable_tags(&options), ["solver"]);
    assert!(read::capture_region_source(&options));
    let run = sp::setup(options).expect("setup");
    for _ in 0..5000 {
        sp::region("step").run(|| ());
    }
    let results = run.finalize().expect("finalize");
    assert_eq!(results.file_path(), Some(file.as_path()));
    assert!(
        matches!(results.write_path(), WritePath::Streamed { .. }),
        "a compressed file goes through buckets: {:?}",
        results.write_path()
    );

    let profile = sp::read_profile(&file).expect("read back");
    assert_eq!(profile.events.len(), 5000);
    assert_eq!(
        meta(&profile, "label"),
        Some(&Value::Str("toml-run".into()))
    );
    let h5 = rust_hdf5::H5File::open(&file).expect("open with rust-hdf5");
    let durations = h5.dataset("events/durations").expect("durations");
    assert_eq!(
        durations.chunk_dims(),
        Some(vec![1000]),
        "hdf5.chunk_size honoured"
    );
    let filters: Vec<(u16, Vec<u32>)> = durations
        .filters()
        .unwrap()
        .into_iter()
        .map(|f| (f.id, f.cd_values))
        .collect();
    // HDF5's filter ids: 2 shuffle (its one value the element size), 1 deflate.
    assert_eq!(
        filters,
        vec![(2, vec![8]), (1, vec![6])],
        "hdf5.compression and compression_level honoured"
    );
}

#[test]
fn a_chunk_size_chunks_an_uncompressed_file() {
    let _s = serial();
    let dir = temp_dir("config-chunk");
    let file = dir.join("chunked.h5");
    let toml = write(
        &dir,
        "p.toml",
        &format!(
            "[profiling]\nfile_path = \"{}\"\nhdf5_compression = \"none\"\nhdf5_chunk_size = 128\n",
            file.display()
        ),
    );
    let options = Options::from_toml(&toml).expect("from_toml").verbose(false);
    assert_eq!(read::compression(&options), Compression::None);
    let run = sp::setup(options).expect("setup");
    for _ in 0..1000 {
        sp::region("outer").run(|| sp::region("inner").run(|| ()));
    }
    let results = run.finalize().expect("finalize");
    // Chunked columns have no contiguous byte range: not the direct path.
    assert_eq!(
        results.write_path(),
        WritePath::Streamed {
            through_scratch: false
        }
    );
    let h5 = rust_hdf5::H5File::open(&file).expect("open");
    for column in [
        "start_deltas",
        "durations",
        "call_ids",
        "parent_ids",
        "thread_ids",
    ] {
        let ds = h5.dataset(&format!("events/{column}")).expect("column");
        assert_eq!(ds.chunk_dims(), Some(vec![128]), "{column}");
        assert!(ds.filters().unwrap().is_empty(), "{column}: no filter");
    }
    let profile = sp::read_profile(&file).expect("read back");
    assert_eq!(profile.events.len(), 2000);
    assert!(profile.events.parent_ids.contains(&-1));

    // The same run uncompressed and unchunked: the same data.
    let plain = dir.join("plain.h5");
    let run = sp::setup(
        Options::new()
            .file_path(&plain)
            .compression(Compression::None)
            .verbose(false),
    )
    .expect("setup");
    for _ in 0..1000 {
        sp::region("outer").run(|| sp::region("inner").run(|| ()));
    }
    assert_eq!(
        run.finalize().expect("finalize").write_path(),
        WritePath::Direct
    );
    let again = sp::read_profile(&plain).expect("read back");
    assert_eq!(again.events.call_ids, profile.events.call_ids);
    assert_eq!(again.events.parent_ids, profile.events.parent_ids);
}

#[test]
fn chunk_sizes_setup_refuses() {
    let _s = serial();
    for n in [0usize, 1 << 40] {
        let err = sp::setup(Options::new().in_memory().chunk_size(n)).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidOption {
                    option: "chunk_size",
                    ..
                }
            ),
            "{n}: {err}"
        );
        assert!(err.to_string().contains(&n.to_string()), "{err}");
    }
    assert!(!sp::is_active());
}

// ---------------------------------------------------------------------------
// The Python package loads the same file
// ---------------------------------------------------------------------------

/// Prints, for the TOML file `sys.argv[1]`, what the Python package makes of
/// it, in `describe_options`' format: through `load_profiling_config` +
/// `ProfilingConfig`, and through `ProfileManager.setup(config_path=...)`
/// (whose run is then finalized, writing the file the TOML names).
const PYTHON_SIDE: &str = r#"
import sys
from scope_profiler.profile_config import ProfilingConfig, load_profiling_config
from scope_profiler.profile_manager import ProfileManager

def describe(c):
    return "\n".join([
        f"file_path={c.file_path}",
        f"label={c.label}",
        f"deactivate_profiling={str(c.deactivate_profiling).lower()}",
        f"deactivate_file_output={str(c.deactivate_file_output).lower()}",
        f"recursive_profile={str(c.recursive_profile).lower()}",
        f"capture_region_source={str(c.capture_region_source).lower()}",
        f"metadata_detail={c.metadata_detail}",
        f"aggregation_mode={str(c.aggregation_mode).lower()}",
        f"hdf5_compression={c.hdf5_compression or 'none'}",
        f"hdf5_compression_level={c.hdf5_compression_level}",
        f"hdf5_chunk_size={c.hdf5_chunk_size}",
        "enable_tags=" + ",".join(c.enable_tags),
    ])

direct = describe(ProfilingConfig(**load_profiling_config(sys.argv[1])))
ProfileManager.setup(config_path=sys.argv[1])
through_setup = describe(ProfileManager.get_config())
ProfileManager.finalize(verbose=False)
assert direct == through_setup, (direct, through_setup)
print(direct)
"#;

#[test]
fn python_loads_the_same_toml_and_agrees_on_every_shared_key() {
    let Some(python) = made_reader_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let dir = temp_dir("config-interop");
    let file = dir.join("shared.h5");
    let toml = write(
        &dir,
        "shared.toml",
        &format!(
            r#"
[profiling]
file_path = "{}"
label = "shared-run"
recursive_profile = true
capture_region_source = true
metadata_detail = "full"
deactivate_profiling = false
deactivate_file_output = false
enable_tags = ["solver", "io"]
aggregation_mode = true
use_memray = false

[profiling.hdf5]
compression = "gzip"
compression_level = 3
chunk_size = 4096
"#,
            file.display()
        ),
    );
    let rust = describe_options(&Options::from_toml(&toml).expect("from_toml"));
    let out = output_ok(
        Command::new(&python).args(["-c", PYTHON_SIDE]).arg(&toml),
        "run python",
        "the Python package could not load the TOML file",
    );
    let python_side = text(&out.stdout);
    let mut r = lines(&rust);
    let mut p = lines(&python_side);
    r.sort();
    p.sort();
    assert_eq!(
        r,
        p,
        "Rust and Python read {} differently\n--- Rust:\n{rust}\n--- Python:\n{python_side}",
        toml.display()
    );
    assert_eq!(r.len(), 12, "every shared key compared: {r:?}");
    assert!(
        file.exists(),
        "the Python run wrote the file the TOML names"
    );
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

fn toml_error(dir: &Path, name: &str, body: &str) -> String {
    let path = write(dir, name, body);
    let err = Options::from_toml(&path).expect_err(body);
    assert!(matches!(err, Error::Config { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "names the file: {message}"
    );
    message
}

#[test]
fn configuration_errors_name_the_file_the_place_and_the_fix() {
    let dir = temp_dir("config-errors");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "unknown.toml",
            "[profiling]\nlabel = \"a\"\nhdf5_chunksize = 10\n",
            &[
                "line 3, column 1",
                "unknown key `hdf5_chunksize`",
                "did you mean `hdf5_chunk_size`?",
            ],
        ),
        (
            "group.toml",
            "[profiling.hdf5]\ncompresion = \"gzip\"\n",
            &[
                "line 2, column 1",
                "unknown key `compresion` in [profiling.hdf5]",
                "did you mean `compression`?",
            ],
        ),
        (
            "verbose.toml",
            "[profiling]\nverbose = false\n",
            &["unknown key `verbose`", "Options::verbose"],
        ),
        (
            "malformed.toml",
            "[profiling]\nlabel = \"a\"\nfile_path = \"x.h5\n",
            &["line 3, column", "invalid TOML"],
        ),
        (
            "type.toml",
            "[profiling]\n  recursive_profile = \"yes\"\n",
            &[
                "line 2, column 23",
                "`recursive_profile`: expected a boolean, found string",
            ],
        ),
        (
            "both.toml",
            "[profiling]\nhdf5_chunk_size = 10\n[profiling.hdf5]\nchunk_size = 20\n",
            &[
                "line 4, column 14",
                "`hdf5_chunk_size` is set both directly and as `hdf5.chunk_size`",
            ],
        ),
        (
            "lzf.toml",
            "[profiling]\nhdf5_compression = \"lzf\"\n",
            &[
                "line 2, column 20",
                "\"lzf\" is not available",
                "no LZF filter",
            ],
        ),
        (
            "zstd.toml",
            "[profiling.hdf5]\ncompression = \"zstd\"\ncompression_level = 3\n",
            &["line 2, column 15", "\"zstd\" is not available"],
        ),
        (
            "level.toml",
            "[profiling]\nhdf5_compression = \"gzip\"\nhdf5_compression_level = 12\n",
            &["line 3, column 26", "between 0 and 9, got 12"],
        ),
        (
            "detail.toml",
            "[profiling]\nmetadata_detail = \"everything\"\n",
            &["line 2, column 19", "\"minimal\" or \"full\""],
        ),
        (
            "chunk.toml",
            "[profiling]\nhdf5_chunk_size = 0\n",
            &["line 2, column 19", "positive integer, got 0"],
        ),
    ];
    for (name, body, wanted) in cases {
        let message = toml_error(&dir, name, body);
        for w in *wanted {
            assert!(message.contains(w), "{name}: {w:?} not in {message:?}");
        }
    }
    let missing = Options::from_toml(dir.join("absent.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("absent.toml") && missing.contains("cannot read"),
        "{missing}"
    );
}

#[test]
fn python_features_this_crate_lacks_are_one_warning_line() {
    let dir = temp_dir("config-warn");
    let toml = write(
        &dir,
        "p.toml",
        "[profiling]\nlabel = \"w\"\nuse_likwid = true\naggregation_mode = false\noutput_mode = \"direct\"\n\
         [profiling.memray]\nenabled = true\n",
    );
    let out = child(&["from-toml", toml.to_str().unwrap()], &[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("ignoring")).collect();
    assert_eq!(warnings.len(), 1, "one line: {stderr}");
    for key in ["use_likwid", "output_mode", "memray.enabled"] {
        assert!(warnings[0].contains(key), "{key} in {}", warnings[0]);
    }
    assert!(
        !warnings[0].contains("aggregation_mode"),
        "a default asks for nothing: {}",
        warnings[0]
    );
    assert!(text(&out.stdout).contains("label=w"));
}

// ---------------------------------------------------------------------------
// The environment
// ---------------------------------------------------------------------------

#[test]
fn environment_over_toml_over_defaults_and_builder_calls_over_all() {
    let dir = temp_dir("config-env");
    let toml = write(
        &dir,
        "env.toml",
        "[profiling]\nfile_path = \"from-toml.h5\"\nlabel = \"toml-label\"\nrecursive_profile = false\n\
         enable_tags = [\"t\"]\nmetadata_detail = \"full\"\n",
    );
    let toml_path = toml.to_str().unwrap();
    let env = [
        ("SCOPE_PROFILER_CONFIG", toml_path),
        ("SCOPE_PROFILER_OUTPUT", "from-env.h5"),
        ("SCOPE_PROFILER_RECURSIVE", "on"),
        ("SCOPE_PROFILER_ENABLE_TAGS", "e1, t,e2"),
    ];
    let show = |args: &[&str], env: &[(&str, &str)]| {
        let out = child(args, env);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        lines(&text(&out.stdout))
    };
    let has =
        |l: &[String], want: &str| assert!(l.iter().any(|x| x == want), "{want} not in {l:?}");

    // Defaults alone.
    let defaults = show(&["env-options"], &[]);
    has(&defaults, "file_path=profiling_data.h5");
    has(&defaults, "recursive_profile=false");
    // The file alone.
    let file_only = show(&["env-options"], &env[..1]);
    has(&file_only, "file_path=from-toml.h5");
    has(&file_only, "label=toml-label");
    has(&file_only, "metadata_detail=full");
    // The environment over the file; what it does not set stays the file's.
    let both = show(&["env-options"], &env);
    has(&both, "file_path=from-env.h5");
    has(&both, "recursive_profile=true");
    has(&both, "enable_tags=t,e1,e2");
    has(&both, "label=toml-label");
    has(&both, "metadata_detail=full");
    // A builder call after from_env over everything.
    let code = show(&["env-options", "from-code"], &env);
    has(&code, "label=from-code");
    has(&code, "file_path=from-env.h5");
    // SCOPE_PROFILER_TRACE_ALL agrees with RECURSIVE or is an error.
    has(
        &show(&["env-options"], &[("SCOPE_PROFILER_TRACE_ALL", "TRUE")]),
        "recursive_profile=true",
    );
    let out = child(
        &["env-options"],
        &[
            ("SCOPE_PROFILER_TRACE_ALL", "0"),
            ("SCOPE_PROFILER_RECURSIVE", "1"),
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("disagrees"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bad_environment_values_name_the_variable_and_the_value() {
    let dir = temp_dir("config-env-bad");
    let cases: &[(&str, &str, &str)] = &[
        (
            "SCOPE_PROFILER_DISABLE",
            "maybe",
            "expected 1/true/yes/on or 0/false/no/off",
        ),
        ("SCOPE_PROFILER_RECURSIVE", "2", "expected 1/true/yes/on"),
        ("SCOPE_PROFILER_TRACE_ALL", "", "expected 1/true/yes/on"),
        (
            "SCOPE_PROFILER_AUTO_FINALIZE",
            "sometimes",
            "expected 1/true",
        ),
        ("SCOPE_PROFILER_OUTPUT", "report.html", "not HTML reports"),
        ("SCOPE_PROFILER_CONFIG", "", "empty"),
    ];
    for (variable, value, why) in cases {
        let out = child(&["env-options"], &[(variable, value)]);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{variable}={value:?} accepted");
        let named = format!("environment variable {variable}={value:?}");
        assert!(
            stderr.contains(&named) && stderr.contains(why),
            "{named} / {why} not in {stderr}"
        );
    }
    // A configuration file with an error: the file's error, through the variable.
    let bad = write(&dir, "bad.toml", "[profiling]\nlabl = \"x\"\n");
    let out = child(
        &["env-options"],
        &[("SCOPE_PROFILER_CONFIG", bad.to_str().unwrap())],
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("bad.toml: line 2, column 1: unknown key `labl`"),
        "{stderr}"
    );
    // AUTO_FINALIZE=1: accepted, with a warning saying what to do instead.
    let out = child(&["env-options"], &[("SCOPE_PROFILER_AUTO_FINALIZE", "1")]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("scope_profiler::session"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn setup_from_env_records_into_the_file_the_environment_names() {
    let dir = temp_dir("config-setup-env");
    let file = dir.join("env.h5");
    let out = child(
        &["setup-from-env", "25"],
        &[("SCOPE_PROFILER_OUTPUT", file.to_str().unwrap())],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("file={}", file.display())),
        "{stdout}"
    );
    assert!(stdout.contains("calls=25"), "{stdout}");
    assert_eq!(sp::read_profile(&file).expect("read").events.len(), 25);

    // SCOPE_PROFILER_DISABLE=1: the same program records nothing, writes nothing.
    let off = dir.join("off.h5");
    let out = child(
        &["setup-from-env", "25"],
        &[
            ("SCOPE_PROFILER_OUTPUT", off.to_str().unwrap()),
            ("SCOPE_PROFILER_DISABLE", "yes"),
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("write_path=Deactivated"), "{stdout}");
    assert!(stdout.contains("calls=0"), "{stdout}");
    assert!(!off.exists());
}

// ---------------------------------------------------------------------------
// Deactivated sessions
// ---------------------------------------------------------------------------

#[sp::profile]
fn profiled_leaf() -> u32 {
    7
}

#[test]
fn a_deactivated_session_records_nothing_and_writes_nothing() {
    let _s = serial();
    let dir = temp_dir("config-deactivated");
    let toml = write(
        &dir,
        "off.toml",
        &format!(
            "[profiling]\nfile_path = \"{}\"\ndeactivate_profiling = true\n",
            dir.join("off.h5").display()
        ),
    );
    // A session before it: the deactivated one must not show its regions.
    let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    sp::region("earlier").run(|| ());
    run.finalize().unwrap();
    assert!(sp::get_region("earlier").is_some());

    let options = Options::from_toml(&toml).expect("from_toml");
    assert!(read::deactivate(&options));
    let run = sp::setup(options).expect("a deactivated setup succeeds");
    assert!(run.is_active() && !sp::is_active());
    assert!(matches!(
        sp::setup(Options::new().in_memory()),
        Err(Error::AlreadyConfigured)
    ));
    // Code written for profiled runs works unchanged: pausing, sampling
    // and metadata are no errors here.
    sp::pause().expect("pausing a deactivated session is no error");
    sp::resume();
    let sampler = sp::sample_every(2, 0).expect("sampler");
    for t in 0..100 {
        sampler.step(t).expect("a step of a deactivated session");
        let _m = sp::call_metadata([("t", t)]);
        sp::region("off/by-name").run(|| ());
        sp::scope!("off/cached");
        assert_eq!(profiled_leaf(), 7);
    }
    drop(sampler);
    assert!(sp::get_region("off/by-name").is_none_or(|r| r.num_calls() == 0));
    assert!(
        sp::recorded_regions().is_empty(),
        "{:?}",
        sp::recorded_regions()
    );
    assert!(
        sp::get_region("earlier").is_none(),
        "the earlier session is forgotten"
    );
    let checkpoint = sp::checkpoint().expect("checkpoint");
    assert_eq!(checkpoint.write_path(), WritePath::Deactivated);
    let results = run.finalize().expect("finalize");
    assert_eq!(results.write_path(), WritePath::Deactivated);
    let profile = results.profile().expect("an empty profile");
    assert!(profile.events.is_empty() && profile.rows.is_empty());
    assert!(results.file_path().is_none());
    assert_eq!(
        integration_tests::listing(&dir),
        ["off.toml"],
        "no file written"
    );
    assert!(matches!(sp::finalize(), Err(Error::NotActive)));

    // A normal session after it records as usual.
    let run = sp::setup(Options::new().in_memory().verbose(false)).unwrap();
    sp::region("after").run(|| ());
    assert_eq!(run.finalize().unwrap().profile().unwrap().events.len(), 1);
}

// ---------------------------------------------------------------------------
// Metadata levels
// ---------------------------------------------------------------------------

fn hostname() -> String {
    let out = Command::new("hostname").output().expect("run hostname");
    text(&out.stdout).trim().to_owned()
}

/// A file session (with `full` metadata or the minimal) with a region
/// defined at an absolute path.
fn run_at(full: bool, file: &Path) -> sp::Profile {
    let run = sp::setup(
        Options::new()
            .file_path(file)
            .verbose(false)
            .full_metadata(full)
            .metadata("experiment", "mesh-7")
            .metadata("cells", 4096),
    )
    .expect("setup");
    sp::Region::at("abs/region", "/opt/elsewhere/src/abs.rs", 3).run(|| ());
    run.finalize().expect("finalize");
    sp::read_profile(file).expect("read back")
}

#[test]
fn minimal_metadata_names_no_host_user_or_directory_and_full_does() {
    let _s = serial();
    let dir = temp_dir("config-meta");
    let host = hostname();
    assert!(!host.is_empty());

    let minimal_file = dir.join("minimal.h5");
    let minimal = run_at(false, &minimal_file);
    for key in [
        "hostname",
        "uname",
        "user",
        "working_directory",
        "PATH",
        "rustc_version",
    ] {
        assert!(
            meta(&minimal, key).is_none(),
            "minimal has {key}: {:?}",
            minimal.metadata
        );
    }
    assert_eq!(
        meta(&minimal, "metadata_detail"),
        Some(&Value::Str("minimal".into()))
    );
    assert!(meta(&minimal, "platform").is_some() && meta(&minimal, "timestamp").is_some());
    assert_eq!(
        meta(&minimal, "experiment"),
        Some(&Value::Str("mesh-7".into()))
    );
    assert_eq!(meta(&minimal, "cells"), Some(&Value::Int(4096)));
    // From the crate's directory (the one holding `src/`) on.
    assert_eq!(
        minimal.rows[0].source_file, "elsewhere/src/abs.rs",
        "no absolute source path"
    );
    if host.len() >= 4 {
        let bytes = std::fs::read(&minimal_file).unwrap();
        assert!(
            !bytes.windows(host.len()).any(|w| w == host.as_bytes()),
            "the host name {host:?} is nowhere in the minimal file"
        );
    }

    let full = run_at(true, &dir.join("full.h5"));
    assert_eq!(meta(&full, "hostname"), Some(&Value::Str(host.clone())));
    let Some(Value::Str(rustc)) = meta(&full, "rustc_version") else {
        panic!("full has rustc_version: {:?}", full.metadata);
    };
    assert!(rustc.starts_with("rustc "), "{rustc}");
    for key in [
        "uname",
        "user",
        "working_directory",
        "target",
        "build_profile",
        "scope_profiler_features",
    ] {
        assert!(
            meta(&full, key).is_some(),
            "full lacks {key}: {:?}",
            full.metadata
        );
    }
    if std::env::var("PATH").is_ok_and(|p| !p.is_empty()) {
        assert!(meta(&full, "PATH").is_some());
    }
    assert_eq!(full.rows[0].source_file, "/opt/elsewhere/src/abs.rs");
    assert_eq!(
        meta(&full, "experiment"),
        Some(&Value::Str("mesh-7".into()))
    );

    // A user key the run description writes itself: refused at setup.
    for key in ["label", "hostname", "SLURM_JOB_ID", ""] {
        let err = sp::setup(Options::new().in_memory().metadata(key, "x")).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidOption {
                    option: "metadata",
                    ..
                }
            ),
            "{key}: {err}"
        );
    }
    assert!(!sp::is_active());
}

/// The run's metadata takes any [`Value`]: through an HDF5 file an
/// integer, an unsigned integer past `i64::MAX` and a float come back as
/// themselves (int64, uint64 and float64 attributes), a bool, null or JSON
/// value as its JSON text; through a JSON profile every kind comes back as
/// itself.
#[test]
fn metadata_values_of_every_kind_come_back_from_both_files() {
    let _s = serial();
    let dir = temp_dir("config-meta-kinds");
    let entries = [
        ("int", Value::Int(-3)),
        ("uint", Value::UInt(u64::MAX)),
        ("float", Value::Float(0.25)),
        ("text", Value::Str("é \"q\"".into())),
        ("flag", Value::Bool(true)),
        ("none", Value::Null),
        ("list", Value::Json("[1, 2]".into())),
    ];
    for file in ["kinds.h5", "kinds.json"] {
        let path = dir.join(file);
        let mut options = Options::new().file_path(&path).verbose(false);
        for (key, value) in &entries {
            options = options.metadata(*key, value.clone());
        }
        let run = sp::setup(options).expect("setup");
        sp::region("r").run(|| ());
        run.finalize().expect("finalize");
        let profile = sp::read_profile(&path).expect("read back");
        for (key, value) in &entries {
            let expected = match (file.ends_with(".h5"), value) {
                (true, Value::Bool(_) | Value::Null | Value::Json(_)) => {
                    Value::Str(value.to_json())
                }
                _ => value.clone(),
            };
            assert_eq!(meta(&profile, key), Some(&expected), "{file}: {key}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
