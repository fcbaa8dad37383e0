//! A library instrumented with every form a library uses: `#[profile]`,
//! `#[profile_all]`, `scope!` and `region`. It sets up no session: the
//! application that calls it does.

use scope_profiler as sp;

/// Counts the words of `input`.
#[sp::profile]
pub fn parse(input: &str) -> usize {
    // lean-lib-source-marker: scripts/lean-test.sh checks that this line's
    // text is not compiled in without the feature `capture-source`.
    tokenize(input).len()
}

#[sp::profile]
fn tokenize(input: &str) -> Vec<&str> {
    input.split_whitespace().collect()
}

/// The sum of `xs`, in a call-site cached region.
pub fn checksum(xs: &[u64]) -> u64 {
    sp::scope!("lean_lib::checksum");
    xs.iter().sum()
}

/// A region by name.
pub fn by_name() -> u64 {
    sp::region("lean_lib::by_name").run(|| 42)
}

/// A counter with an instrumented method.
pub struct Counter(pub u64);

impl Counter {
    /// Adds one.
    #[sp::profile]
    pub fn bump(&mut self) {
        self.0 += 1;
    }
}

/// `#[profile_all]` traces its methods under an entrypoint or with
/// `Options::trace_all` (compiled here on the lean dependency).
pub struct Traced;

#[sp::profile_all]
impl Traced {
    /// Twice `x`.
    pub fn double(&self, x: u64) -> u64 {
        2 * x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting allocator is in the lean build too (issue 27).
    #[global_allocator]
    static ALLOC: sp::CountingAllocator = sp::CountingAllocator::system();

    /// Allocations are counted per region in the lean build.
    #[test]
    fn counts_allocations_in_the_lean_build() {
        let _s = serial();
        sp::setup(
            sp::Options::new()
                .in_memory()
                .verbose(false)
                .track_allocations(true),
        )
        .unwrap();
        sp::region("alloc").run(|| drop(std::hint::black_box(vec![0u8; 256])));
        let results = sp::finalize().unwrap();
        let c = results.counters_of("alloc").unwrap();
        assert_eq!(c.get("alloc-count"), Some(1));
        assert_eq!(c.get("alloc-bytes"), Some(256));
    }

    /// One session at a time: the tests run on threads of one process.
    fn serial() -> std::sync::MutexGuard<'static, ()> {
        static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A session records the library's regions in memory; in a build
    /// without `hdf5` (this crate built alone, by scripts/lean-test.sh,
    /// which sets `LEAN_EXPECT_NO_HDF5=1`), a file path is refused at
    /// setup, naming the feature.
    #[test]
    fn records_in_memory_and_refuses_a_file_without_hdf5() {
        let _s = serial();
        let run = sp::setup(sp::Options::new().in_memory().verbose(false)).unwrap();
        assert_eq!(parse("a b c"), 3);
        assert_eq!(checksum(&[1, 2]), 3);
        assert_eq!(by_name(), 42);
        let mut c = Counter(0);
        c.bump();
        let results = run.finalize().unwrap();
        let profile = results.profile().unwrap();
        for name in [
            "parse",
            "tokenize",
            "lean_lib::checksum",
            "lean_lib::by_name",
            "bump",
        ] {
            assert!(
                profile.region_names.iter().any(|n| n.ends_with(name)),
                "{name} not in {:?}",
                profile.region_names
            );
        }
        if std::env::var_os("LEAN_EXPECT_NO_HDF5").is_some() {
            for path in ["run.h5", "run.json.gz"] {
                let err = sp::setup(sp::Options::new().file_path(path)).unwrap_err();
                assert!(err.to_string().contains("feature `hdf5`"), "{err}");
                assert!(matches!(sp::finalize(), Err(sp::Error::NotActive)));
            }
        }
    }

    /// In any build (also without `hdf5`), a `.json` path writes the
    /// Python package's JSON profile, read back here (and exported); with
    /// `LEAN_JSON_OUT` set, it is written there for scripts/lean-test.sh,
    /// which has it read by the Python package and by `scope-prof`.
    #[test]
    fn writes_a_json_profile_in_any_build() {
        let _s = serial();
        let path = match std::env::var_os("LEAN_JSON_OUT") {
            Some(path) => std::path::PathBuf::from(path),
            None => std::env::temp_dir().join(format!("lean-lib-{}.json", std::process::id())),
        };
        let run = sp::setup(sp::Options::new().file_path(&path).verbose(false)).unwrap();
        for i in 0..10 {
            parse("a b c");
            checksum(&[i, 1]);
            by_name();
            Counter(i).bump();
        }
        let results = run.finalize().unwrap();
        assert_eq!(
            results
                .statistics_of("lean_lib::by_name")
                .unwrap()
                .num_calls(),
            10
        );
        let profile = sp::read_profile(&path).unwrap();
        assert_eq!(profile.region_names.len(), 5, "{:?}", profile.region_names);
        assert!(profile.rows.iter().all(|r| r.event_count == 10));
        let reader = scope_profiler_reader::ProfileReader::open(&path).unwrap();
        let mut folded = Vec::new();
        reader.folded(&mut folded).unwrap();
        let folded = String::from_utf8(folded).unwrap();
        assert!(
            folded.contains("parse;") && folded.contains("tokenize"),
            "{folded}"
        );
        if std::env::var_os("LEAN_JSON_OUT").is_none() {
            std::fs::remove_file(&path).unwrap();
        }
        // The JSON profile, in any build: LEAN_JSON_OUT names where (the
        // script reads it with the Python package).
        if let Some(path) = std::env::var_os("LEAN_JSON_OUT") {
            let run = sp::setup(sp::Options::new().file_path(&path).verbose(false)).unwrap();
            for _ in 0..10 {
                assert_eq!(parse("a b"), 2);
                assert_eq!(checksum(&[1]), 1);
                by_name();
                Counter(0).bump();
            }
            let results = run.finalize().unwrap();
            assert_eq!(results.file_path(), Some(std::path::Path::new(&path)));
            assert_eq!(
                results.statistics_of("parse").map(|s| s.num_calls()),
                Some(10)
            );
        }
    }
}
