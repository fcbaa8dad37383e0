//! `Options::from_toml`: the Python package's `[profiling]` table
//! (`profile_config.py`'s `load_profiling_config`), read with toml's
//! spanned document parser (no serde): every key and value keeps its byte
//! range, so an error names the line and column. Feature `toml`.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::Error;
use crate::options::{Compression, Options};

/// The flat settings of the Python package (`ProfilingOptions`' fields, its
/// `_CONFIG_FIELDS`): every key a `[profiling]` table may hold, besides the
/// group tables.
const PYTHON_KEYS: &[&str] = &[
    "file_path",
    "label",
    "use_likwid",
    "perf_events",
    "use_line_profiler",
    "use_memray",
    "memory_profile_path",
    "memray_native_traces",
    "memray_trace_python_allocators",
    "memray_follow_fork",
    "deactivate_profiling",
    "use_nvtx",
    "use_gpu_timing",
    "gpu_timing_backend",
    "deactivate_file_output",
    "recursive_profile",
    "aggregation_mode",
    "profile_mpi_calls",
    "track_threads",
    "track_async",
    "capture_region_source",
    "metadata_detail",
    "buffer_limit",
    "output_mode",
    "hdf5_compression",
    "hdf5_compression_level",
    "hdf5_chunk_size",
    "enable_tags",
    "gpu_sync_on_exit",
    // This crate's own key (not the Python package's): see
    // Options::track_allocations.
    "track_allocations",
    // The live server (Options::live, live_token, start_paused).
    "live",
    "live_token",
    "start_paused",
    // Sampling inside regions (Options::sample_hz; the C library's
    // SCOPE_PROFILER_SAMPLE_HZ).
    "sample_hz",
];

/// The group tables (`[profiling.memray]`, `[profiling.gpu]`,
/// `[profiling.hdf5]`): each key and the flat setting it spells.
const GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "memray",
        &[
            ("enabled", "use_memray"),
            ("path", "memory_profile_path"),
            ("native_traces", "memray_native_traces"),
            ("trace_python_allocators", "memray_trace_python_allocators"),
            ("follow_fork", "memray_follow_fork"),
        ],
    ),
    (
        "gpu",
        &[
            ("timing", "use_gpu_timing"),
            ("backend", "gpu_timing_backend"),
            ("sync_on_exit", "gpu_sync_on_exit"),
            ("nvtx", "use_nvtx"),
        ],
    ),
    (
        "hdf5",
        &[
            ("compression", "hdf5_compression"),
            ("compression_level", "hdf5_compression_level"),
            ("chunk_size", "hdf5_chunk_size"),
        ],
    ),
];

/// Keys a Rust user may expect in the table that the Python package does
/// not accept there (a file with them would not load in Python), with where
/// the setting lives instead.
const NOT_TABLE_KEYS: &[(&str, &str)] = &[
    (
        "verbose",
        "it is an argument of the Python package's finalize()/session(), not a [profiling] setting; use Options::verbose",
    ),
    (
        "output",
        "it is an argument of the Python package's setup() (and SCOPE_PROFILER_OUTPUT), not a [profiling] setting; use file_path",
    ),
    (
        "region_tags",
        "it is an argument of the Python package's setup(), not a [profiling] setting; use Options::region_tags",
    ),
];

/// One setting read from the file: its flat name, how it was spelled
/// (`hdf5.chunk_size` for a group key), and its value.
struct Setting<'a, 'i> {
    name: &'static str,
    spelled: String,
    value: &'a Spanned<DeValue<'i>>,
}

/// The file being read: its path and text, for messages.
struct Source<'t> {
    path: &'t Path,
    text: &'t str,
}

impl Source<'_> {
    /// An [`Error::Config`] at byte range `span` of the file.
    fn error(&self, span: Range<usize>, message: impl std::fmt::Display) -> Error {
        let (line, column) = line_column(self.text, span.start);
        Error::Config {
            path: self.path.to_path_buf(),
            message: format!("line {line}, column {column}: {message}"),
        }
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let mut end = offset;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit_once('\n')
        .map_or(before, |(_, last)| last)
        .chars()
        .count()
        + 1;
    (line, column)
}

/// The optimal string alignment distance of `a` and `b` (Levenshtein with
/// adjacent transpositions: `lable` is one edit from `label`).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The known key closest to `key` (the first of equally close ones).
fn closest<'k>(key: &str, known: impl IntoIterator<Item = &'k str>) -> &'k str {
    // A key the typed one begins (`recursive` for `recursive_profile`)
    // first, then the fewest edits.
    known
        .into_iter()
        .min_by_key(|k| {
            (
                !(key.len() >= 3 && k.starts_with(key)),
                edit_distance(key, k),
            )
        })
        .unwrap_or("")
}

/// The message for an unknown key: the closest known key, and for a key
/// the Python package takes elsewhere, where.
fn unknown_key<'k>(table: &str, key: &str, known: impl IntoIterator<Item = &'k str>) -> String {
    let mut message = format!(
        "unknown key `{key}` in [{table}] (did you mean `{}`?)",
        closest(key, known)
    );
    if let Some((_, why)) = NOT_TABLE_KEYS.iter().find(|(k, _)| *k == key) {
        message.push_str(&format!("; `{key}`: {why}"));
    }
    message
}

fn type_error(expected: &str, value: &DeValue<'_>) -> String {
    format!("expected {expected}, found {}", value.type_str())
}

impl Setting<'_, '_> {
    fn span(&self) -> Range<usize> {
        self.value.span()
    }

    fn get(&self) -> &DeValue<'_> {
        self.value.get_ref()
    }

    fn boolean(&self, src: &Source<'_>) -> Result<bool, Error> {
        self.get().as_bool().ok_or_else(|| {
            src.error(
                self.span(),
                format!(
                    "`{}`: {}",
                    self.spelled,
                    type_error("a boolean", self.get())
                ),
            )
        })
    }

    fn string(&self, src: &Source<'_>) -> Result<&str, Error> {
        self.get().as_str().ok_or_else(|| {
            src.error(
                self.span(),
                format!("`{}`: {}", self.spelled, type_error("a string", self.get())),
            )
        })
    }

    fn integer(&self, src: &Source<'_>) -> Result<i64, Error> {
        let parsed = self
            .get()
            .as_integer()
            .map(|i| i64::from_str_radix(i.as_str(), i.radix()));
        match parsed {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(src.error(self.span(), format!("`{}`: {e}", self.spelled))),
            None => Err(src.error(
                self.span(),
                format!(
                    "`{}`: {}",
                    self.spelled,
                    type_error("an integer", self.get())
                ),
            )),
        }
    }

    /// A string, or an array of strings (the Python package takes both for
    /// `enable_tags`).
    fn strings(&self, src: &Source<'_>) -> Result<Vec<String>, Error> {
        if let Some(s) = self.get().as_str() {
            return Ok(vec![s.to_owned()]);
        }
        let Some(array) = self.get().as_array() else {
            return Err(src.error(
                self.span(),
                format!(
                    "`{}`: {}",
                    self.spelled,
                    type_error("an array of strings", self.get())
                ),
            ));
        };
        array
            .iter()
            .map(|item| {
                item.get_ref().as_str().map(str::to_owned).ok_or_else(|| {
                    src.error(
                        item.span(),
                        format!(
                            "`{}`: {}",
                            self.spelled,
                            type_error("a string", item.get_ref())
                        ),
                    )
                })
            })
            .collect()
    }

    /// Whether the value asks for something other than the Python package's
    /// default (for the settings this crate does not implement).
    fn asks_for_something(&self) -> bool {
        let v = self.get();
        match self.name {
            "gpu_timing_backend" => v.as_str() != Some("auto"),
            "output_mode" => v.as_str() != Some("auto"),
            "buffer_limit" => v.as_integer().is_none_or(|i| i.as_str() != "1024"),
            "memory_profile_path" => true,
            // Always on in this crate: only turning them off asks for
            // something it does not do.
            "track_threads" | "track_async" => v.as_bool() != Some(true),
            _ => v.as_bool() != Some(false),
        }
    }
}

/// Why this crate ignores a setting of the Python package (`None`: it
/// honours it).
fn unsupported(name: &str) -> Option<&'static str> {
    Some(match name {
        "use_likwid" => "LIKWID counters",
        "use_line_profiler" => "line profiling",
        "use_memray"
        | "memory_profile_path"
        | "memray_native_traces"
        | "memray_trace_python_allocators"
        | "memray_follow_fork" => "Memray",
        "use_nvtx" => "NVTX ranges",
        "use_gpu_timing" | "gpu_timing_backend" | "gpu_sync_on_exit" => "GPU timing",
        "profile_mpi_calls" => "MPI call profiling",
        #[cfg(not(feature = "mpi"))]
        "output_mode" => "MPI output modes (build with the `mpi` feature)",
        "buffer_limit" => "per-region buffers (see Options::memory_limit)",
        "track_threads" | "track_async" => "turning thread and task tracking off (always on)",
        _ => return None,
    })
}

impl Options {
    /// Options from a TOML file in the Python package's format: the
    /// `[profiling]` table (or, without one, the top-level table), with the
    /// same key names, including the group tables `[profiling.hdf5]`,
    /// `[profiling.memray]` and `[profiling.gpu]`. Keys not in the file keep
    /// [`Options::new`]'s defaults. The README's "Configuration" section
    /// lists every key.
    ///
    /// - An unknown key, a value of the wrong type or range, a key set both
    ///   flat and in its group, or a malformed file is an [`Error::Config`]
    ///   naming the file, the line and column (and, for an unknown key, the
    ///   closest known one).
    /// - A key of the Python package this crate does not implement
    ///   (`use_likwid`, `use_memray`, `output_mode`, ...)
    ///   asking for something is ignored, with one warning line on stderr
    ///   listing all such keys.
    /// - `hdf5_compression = "lzf"` or `"zstd"`: an `Err` (HDF5's own
    ///   library has neither filter; h5py and hdf5plugin bring them).
    ///
    /// ```
    /// use scope_profiler::{Compression, Options};
    /// use scope_profiler_core::internal::options::MetadataDetail;
    /// let dir = std::env::temp_dir().join(format!("sp-doc-toml-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("profiling.toml");
    /// std::fs::write(&path, r#"
    /// [profiling]
    /// file_path = "run.h5"
    /// label = "baseline"
    /// metadata_detail = "full"
    ///
    /// [profiling.hdf5]
    /// compression = "gzip"
    /// compression_level = 6
    /// "#).unwrap();
    /// let o = Options::from_toml(&path)?;
    /// assert_eq!(scope_profiler_core::internal::options::read::label(&o), "baseline");
    /// assert_eq!(scope_profiler_core::internal::options::read::compression(&o), Compression::Gzip(6));
    /// assert_eq!(scope_profiler_core::internal::options::read::metadata_detail(&o), MetadataDetail::Full);
    ///
    /// std::fs::write(&path, "[profiling]\nlable = \"x\"\n").unwrap();
    /// let err = Options::from_toml(&path).unwrap_err().to_string();
    /// assert!(err.contains("line 2, column 1: unknown key `lable`"), "{err}");
    /// assert!(err.contains("did you mean `label`?"), "{err}");
    /// # Ok::<(), scope_profiler::Error>(())
    /// ```
    pub fn from_toml(path: impl AsRef<Path>) -> Result<Options, Error> {
        Options::new().with_toml(path.as_ref())
    }

    /// These options with the settings of the TOML file at `path` applied.
    pub(super) fn with_toml(self, path: &Path) -> Result<Options, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        let src = Source { path, text: &text };
        let document = DeTable::parse(&text).map_err(|e| {
            let message = format!("invalid TOML: {}", e.message());
            match e.span() {
                Some(span) => src.error(span, message),
                None => Error::Config {
                    path: path.to_path_buf(),
                    message,
                },
            }
        })?;
        let root = document.get_ref();
        let table = match root.get("profiling") {
            Some(v) => match v.get_ref().as_table() {
                Some(t) => t,
                None => {
                    return Err(src.error(
                        v.span(),
                        format!("[profiling]: {}", type_error("a table", v.get_ref())),
                    ));
                }
            },
            None => root,
        };
        let settings = flatten(table, &src)?;
        let mut ignored = Vec::new();
        let mut options = self;
        for setting in &settings {
            if unsupported(setting.name).is_some() {
                if setting.asks_for_something() {
                    ignored.push(setting);
                }
                continue;
            }
            options = options.apply(setting, &settings, &src)?;
        }
        if !ignored.is_empty() {
            let list: Vec<String> = ignored
                .iter()
                .map(|s| format!("{} ({})", s.spelled, unsupported(s.name).unwrap_or("")))
                .collect();
            eprintln!(
                "scope-profiler: {}: ignoring settings of the Python package this crate does not implement: {}",
                path.display(),
                list.join(", ")
            );
        }
        Ok(options)
    }

    /// Applies one supported setting (`all`: every setting of the file, for
    /// the ones read together).
    fn apply(
        self,
        s: &Setting<'_, '_>,
        all: &[Setting<'_, '_>],
        src: &Source<'_>,
    ) -> Result<Options, Error> {
        let find = |name: &str| all.iter().find(|o| o.name == name);
        Ok(match s.name {
            "file_path" => {
                let path = s.string(src)?;
                if path.is_empty() {
                    return Err(src.error(s.span(), "`file_path` is empty"));
                }
                self.file_path(path)
            }
            // An empty label is no label (the file stem), as in Python.
            "label" => match s.string(src)? {
                "" => self,
                label => self.label(label),
            },
            "deactivate_profiling" => self.deactivate(s.boolean(src)?),
            "deactivate_file_output" => match s.boolean(src)? {
                true => self.in_memory(),
                false => self,
            },
            "recursive_profile" => self.trace_all(s.boolean(src)?),
            "capture_region_source" => self.capture_region_source(s.boolean(src)?),
            "aggregation_mode" => self.aggregation(s.boolean(src)?),
            "track_allocations" => self.track_allocations(s.boolean(src)?),
            "live" => match s.string(src)? {
                "" => return Err(src.error(s.span(), "`live` is empty: name an address")),
                addr => self.live(addr),
            },
            "live_token" => self.live_token(s.string(src)?),
            "start_paused" => self.start_paused(s.boolean(src)?),
            "perf_events" => self.perf_events(s.strings(src)?),
            "sample_hz" => {
                let n = s.integer(src)?;
                match u32::try_from(n) {
                    Ok(hz) => self.sample_hz(hz),
                    Err(_) => {
                        return Err(src.error(
                            s.span(),
                            format!("`sample_hz` must be 0 (off) or a rate in Hz, got {n}"),
                        ));
                    }
                }
            }
            "metadata_detail" => match s.string(src)? {
                "minimal" => self.full_metadata(false),
                "full" => self.full_metadata(true),
                other => {
                    return Err(src.error(
                        s.span(),
                        format!("metadata_detail must be \"minimal\" or \"full\", got {other:?}"),
                    ));
                }
            },
            "enable_tags" => self.enable_tags(s.strings(src)?),
            #[cfg(feature = "mpi")]
            "output_mode" => match s.string(src)? {
                "auto" => self.mpi_output(crate::options::MpiOutput::Auto),
                "direct" => self.mpi_output(crate::options::MpiOutput::Direct),
                "parallel" => self.mpi_output(crate::options::MpiOutput::Parallel),
                other => {
                    return Err(src.error(
                        s.span(),
                        format!(
                            "output_mode must be \"auto\", \"direct\" or \"parallel\", got {other:?}"
                        ),
                    ));
                }
            },
            "hdf5_chunk_size" => {
                let n = s.integer(src)?;
                match usize::try_from(n) {
                    Ok(n) if n > 0 => self.chunk_size(n),
                    _ => {
                        return Err(src.error(
                            s.span(),
                            format!("`{}` must be a positive integer, got {n}", s.spelled),
                        ));
                    }
                }
            }
            "hdf5_compression" => {
                let level = match find("hdf5_compression_level") {
                    Some(l) => Some((l.integer(src)?, l)),
                    None => None,
                };
                let compression = compression(s.string(src)?, level.map(|(v, _)| v)).map_err(
                    |(message, at_level)| {
                        let span = match (at_level, level) {
                            (true, Some((_, l))) => l.span(),
                            _ => s.span(),
                        };
                        src.error(span, message)
                    },
                )?;
                self.compression(compression)
            }
            // Read with hdf5_compression; without it the Python package
            // ignores it too, but its type is still checked there.
            "hdf5_compression_level" => {
                s.integer(src)?;
                self
            }
            // Every key is honoured above or ignored before (a unit test
            // checks the lists agree); an error rather than a panic anyway.
            other => {
                return Err(src.error(s.span(), format!("`{other}` is not handled (a bug)")));
            }
        })
    }
}

/// The compression `hdf5_compression = name` (with `level`) asks for, as
/// the Python package validates it; the `Err` says what is wrong and
/// whether it is about the level.
fn compression(name: &str, level: Option<i64>) -> Result<Compression, (String, bool)> {
    let name = name.trim().to_ascii_lowercase();
    match (name.as_str(), level) {
        ("" | "none", _) => Ok(Compression::None),
        // Level 4 is the Python package's "auto" level, which ours matches
        // in size (see `Compression::AUTO_LEVEL`).
        ("auto", None | Some(4)) => Ok(Compression::Auto),
        ("auto", Some(l)) => Err((
            format!(
                "hdf5_compression = \"auto\" compresses at level {} in this crate (the size the Python package's \
                 level 4 gives); level {l} cannot be honoured \
                 (use hdf5_compression = \"gzip\" with hdf5_compression_level = {l})",
                Compression::AUTO_LEVEL
            ),
            true,
        )),
        ("gzip", None) => Ok(Compression::Gzip(4)),
        ("gzip", Some(l @ 0..=9)) => Ok(Compression::Gzip(l as u8)),
        ("gzip", Some(l)) => Err((
            format!("GZIP compression level must be between 0 and 9, got {l}"),
            true,
        )),
        ("lzf", _) => Err((
            "hdf5_compression = \"lzf\" is not available: this crate's HDF5 writer has no LZF \
             filter (h5py registers its own); use \"gzip\""
                .to_owned(),
            false,
        )),
        ("zstd", _) => Err((
            "hdf5_compression = \"zstd\" is not available: this crate's HDF5 writer has no \
             Zstandard filter (the Python package loads it from hdf5plugin); use \"gzip\""
                .to_owned(),
            false,
        )),
        (other, _) => Err((
            format!(
                "hdf5_compression must be \"none\", \"auto\", \"gzip\", \"lzf\" or \"zstd\", got {other:?}"
            ),
            false,
        )),
    }
}

/// The settings of `table`, group tables expanded to their flat names,
/// every key checked.
fn flatten<'a, 'i>(
    table: &'a DeTable<'i>,
    src: &Source<'_>,
) -> Result<Vec<Setting<'a, 'i>>, Error> {
    let mut out: Vec<Setting<'a, 'i>> = Vec::new();
    for (key, value) in table.iter() {
        let key_str: &str = key.get_ref();
        if let Some((group, fields)) = GROUPS.iter().find(|(g, _)| *g == key_str) {
            let Some(inner) = value.get_ref().as_table() else {
                return Err(src.error(
                    value.span(),
                    format!(
                        "[profiling.{group}]: {}",
                        type_error("a table", value.get_ref())
                    ),
                ));
            };
            for (k, v) in inner.iter() {
                let k_str: &str = k.get_ref();
                let Some((_, flat)) = fields.iter().find(|(f, _)| *f == k_str) else {
                    return Err(src.error(
                        k.span(),
                        unknown_key(
                            &format!("profiling.{group}"),
                            k_str,
                            fields.iter().map(|(f, _)| *f),
                        ),
                    ));
                };
                out.push(Setting {
                    name: flat,
                    spelled: format!("{group}.{k_str}"),
                    value: v,
                });
            }
            continue;
        }
        let Some(name) = PYTHON_KEYS.iter().find(|k| **k == key_str) else {
            let known = PYTHON_KEYS
                .iter()
                .copied()
                .chain(GROUPS.iter().map(|(g, _)| *g));
            return Err(src.error(key.span(), unknown_key("profiling", key_str, known)));
        };
        out.push(Setting {
            name,
            spelled: key_str.to_owned(),
            value,
        });
    }
    // Set both flat and in a group: an error, not a precedence rule (as in
    // the Python package).
    for (i, s) in out.iter().enumerate() {
        if let Some(twin) = out[..i].iter().find(|o| o.name == s.name) {
            let (flat, grouped) = if s.spelled.contains('.') {
                (twin, s)
            } else {
                (s, twin)
            };
            return Err(src.error(
                grouped.span(),
                format!(
                    "`{}` is set both directly and as `{}`; set it in one place",
                    flat.spelled, grouped.spelled
                ),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("label", "label"), 0);
        assert_eq!(edit_distance("lable", "label"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest("hdf5_chunksize", PYTHON_KEYS.iter().copied()),
            "hdf5_chunk_size"
        );
        assert_eq!(
            closest("recursive", PYTHON_KEYS.iter().copied()),
            "recursive_profile"
        );
        assert_eq!(closest("liv", PYTHON_KEYS.iter().copied()), "live");
        assert_eq!(
            closest("start_pause", PYTHON_KEYS.iter().copied()),
            "start_paused"
        );
    }

    #[test]
    fn line_and_column() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, 9), (2, 3)); // after 'b' and 'é' (2 bytes)
    }

    /// Every Python key is either honoured or ignored with a reason.
    #[test]
    fn every_python_key_has_a_fate() {
        let honoured = [
            "file_path",
            "label",
            "deactivate_profiling",
            "deactivate_file_output",
            "recursive_profile",
            "capture_region_source",
            "aggregation_mode",
            "track_allocations",
            "live",
            "live_token",
            "start_paused",
            "perf_events",
            "sample_hz",
            "metadata_detail",
            "enable_tags",
            "hdf5_chunk_size",
            "hdf5_compression",
            "hdf5_compression_level",
            #[cfg(feature = "mpi")]
            "output_mode",
        ];
        for key in PYTHON_KEYS {
            assert!(
                honoured.contains(key) != unsupported(key).is_some(),
                "{key}: honoured and ignored, or neither"
            );
        }
        for (_, fields) in GROUPS {
            for (_, flat) in *fields {
                assert!(PYTHON_KEYS.contains(flat), "{flat}");
            }
        }
    }

    #[test]
    fn compressions() {
        assert_eq!(compression("None", None), Ok(Compression::None));
        assert_eq!(compression("", Some(3)), Ok(Compression::None));
        assert_eq!(compression("auto", None), Ok(Compression::Auto));
        assert_eq!(compression(" GZIP ", None), Ok(Compression::Gzip(4)));
        assert_eq!(compression("gzip", Some(9)), Ok(Compression::Gzip(9)));
        assert!(compression("gzip", Some(10)).unwrap_err().1);
        assert!(compression("auto", Some(7)).is_err());
        assert!(compression("lzf", None).unwrap_err().0.contains("LZF"));
        assert!(
            compression("zstd", Some(3))
                .unwrap_err()
                .0
                .contains("Zstandard")
        );
        assert!(compression("brotli", None).is_err());
    }
}
