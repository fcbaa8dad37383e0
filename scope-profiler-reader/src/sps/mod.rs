//! The Python package's sample file (`.sps`, its `native_samples.py`): the
//! samples a sampler took, each with the innermost region open at it, the
//! module it fell in and its address, so that `scope-profiler native-lines`
//! prints the hottest source lines of each region. Native byte order:
//!
//! ```text
//! char[8] "SCOPESMP", i32 version (1), i32 rank, i32 rate [Hz],
//! i64 timer ticks in all (in a region or not),
//! i32 regions, per region: i32 name length, name,
//! i32 modules, per module: i32 path length, path, u64 load address,
//! i64 samples, per sample: i32 region (-1: none), i32 module (-1: unknown), u64 address
//! ```
//!
//! Its addresses are raw: where they are in the source is found when the
//! file is read, from the binaries' own debug info (`Symbolizer`, feature
//! `symbols`), so a later reader can redo it; [`region_samples`] counts
//! each region's samples by function and by line.

use std::io;
use std::path::{Path, PathBuf};

mod profile;
mod stacks;
#[cfg(feature = "symbols")]
mod symbols;

pub use profile::{Place, RegionSamples, region_samples};
pub use stacks::{Frame, STACKS_MAGIC, STACKS_VERSION, Stacks, stacks_path};
#[cfg(feature = "symbols")]
pub use symbols::Symbolizer;

/// Where the samples of rank `rank` of the profile at `profile` are written:
/// beside it, `<stem>_rank<NNNNN>.sps` (a `.json.gz` profile loses both
/// extensions).
///
/// ```
/// use std::path::Path;
/// use scope_profiler_reader::sps::path_for;
/// assert_eq!(path_for(Path::new("out/run.h5"), 3), Path::new("out/run_rank00003.sps"));
/// assert_eq!(path_for(Path::new("run.json.gz"), 0), Path::new("run_rank00000.sps"));
/// ```
pub fn path_for(profile: &Path, rank: i32) -> PathBuf {
    profile.with_file_name(format!("{}{rank:05}.sps", rank_prefix(profile)))
}

/// The sample files of the profile at `profile`: every rank's
/// `<stem>_rank<digits>.sps` beside it, in name order (`profile` itself if
/// it is a `.sps` file).
///
/// ```
/// use std::path::Path;
/// use scope_profiler_reader::sps::files_for;
/// assert!(files_for(Path::new("/nonexistent/run.h5")).is_empty());
/// assert_eq!(files_for(Path::new("x.sps")), [Path::new("x.sps")]);
/// ```
pub fn files_for(profile: &Path) -> Vec<PathBuf> {
    if profile.extension().is_some_and(|e| e == "sps") {
        return vec![profile.to_path_buf()];
    }
    let prefix = rank_prefix(profile);
    let dir = match profile.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.as_deref()
                .and_then(|n| n.strip_prefix(&prefix))
                .and_then(|rest| rest.strip_suffix(".sps"))
                .is_some_and(|rank| !rank.is_empty() && rank.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    found.sort();
    found
}

/// `<stem>_rank` of a profile's file name.
fn rank_prefix(profile: &Path) -> String {
    let name = profile
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let stem = match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    };
    format!("{stem}_rank")
}

/// The file's first bytes.
///
/// ```
/// use scope_profiler_reader::sps::{MAGIC, SampleFile};
/// assert!(SampleFile::default().to_bytes().starts_with(MAGIC));
/// ```
pub const MAGIC: &[u8; 8] = b"SCOPESMP";

/// The layout's version this crate writes and reads (the Python
/// package's, 1).
///
/// ```
/// use scope_profiler_reader::sps::{SampleFile, VERSION};
/// let bytes = SampleFile::default().to_bytes();
/// assert_eq!(bytes[8..12], VERSION.to_ne_bytes());
/// ```
pub const VERSION: i32 = 1;

/// One sample: the innermost region open at it and where it fell.
///
/// ```
/// let s = scope_profiler_reader::sps::Sample { region: 0, module: -1, address: 0x1000 };
/// assert_eq!(s.module, -1); // an address in no module known
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Index into [`SampleFile::regions`]; -1 if no region was open.
    pub region: i32,
    /// Index into [`SampleFile::modules`]; -1 if unknown.
    pub module: i32,
    /// The interrupted instruction's address (absolute, in the process).
    pub address: u64,
}

/// One rank's samples, as written beside its profile.
///
/// ```
/// use scope_profiler_reader::sps::{Sample, SampleFile};
/// let file = SampleFile {
///     rank: 0,
///     hz: 1000,
///     ticks: 2,
///     regions: vec!["solve".into()],
///     modules: vec![("/usr/bin/app".into(), 0x5555_0000_0000)],
///     samples: vec![Sample { region: 0, module: 0, address: 0x5555_0000_1234 }],
/// };
/// let back = SampleFile::parse(&file.to_bytes()).unwrap();
/// assert_eq!(back, file);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleFile {
    /// The MPI rank (0 without MPI).
    pub rank: i32,
    /// The sampling rate, per second of a thread's CPU time.
    pub hz: i32,
    /// The timer's ticks in all, whether or not they landed in a region.
    pub ticks: i64,
    /// The regions' names.
    pub regions: Vec<String>,
    /// The modules (executable, shared objects): path and load address.
    pub modules: Vec<(String, u64)>,
    /// The samples, in the order taken.
    pub samples: Vec<Sample>,
}

impl SampleFile {
    /// The file's bytes.
    ///
    /// ```
    /// let bytes = scope_profiler_reader::sps::SampleFile::default().to_bytes();
    /// assert!(bytes.starts_with(b"SCOPESMP"));
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 16 * self.samples.len());
        out.extend_from_slice(MAGIC);
        for v in [VERSION, self.rank, self.hz] {
            out.extend_from_slice(&v.to_ne_bytes());
        }
        out.extend_from_slice(&self.ticks.to_ne_bytes());
        let string = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&count(s.len()).to_ne_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        out.extend_from_slice(&count(self.regions.len()).to_ne_bytes());
        for r in &self.regions {
            string(&mut out, r);
        }
        out.extend_from_slice(&count(self.modules.len()).to_ne_bytes());
        for (path, base) in &self.modules {
            string(&mut out, path);
            out.extend_from_slice(&base.to_ne_bytes());
        }
        out.extend_from_slice(&(self.samples.len() as i64).to_ne_bytes());
        for s in &self.samples {
            out.extend_from_slice(&s.region.to_ne_bytes());
            out.extend_from_slice(&s.module.to_ne_bytes());
            out.extend_from_slice(&s.address.to_ne_bytes());
        }
        out
    }

    /// Reads a file's bytes; an `InvalidData` error names what is wrong
    /// and where (a file from elsewhere is untrusted: every count is
    /// checked against the bytes left before anything is allocated).
    ///
    /// ```
    /// let err = scope_profiler_reader::sps::SampleFile::parse(b"SCOPESMP").unwrap_err();
    /// assert!(err.to_string().contains("truncated"), "{err}");
    /// ```
    pub fn parse(bytes: &[u8]) -> io::Result<SampleFile> {
        let mut r = Bytes { bytes, at: 0 };
        r.header(MAGIC, VERSION, "sample file")?;
        let (rank, hz, ticks) = (r.i32()?, r.i32()?, r.i64()?);
        let n = r.count(4)?;
        let mut regions = Vec::with_capacity(n);
        for _ in 0..n {
            regions.push(r.string()?);
        }
        let n = r.count(12)?;
        let mut modules = Vec::with_capacity(n);
        for _ in 0..n {
            modules.push((r.string()?, r.u64()?));
        }
        let n = usize::try_from(r.i64()?).map_err(|_| invalid(r.at, "a negative count".into()))?;
        if bytes.len() - r.at != n.saturating_mul(16) {
            return Err(invalid(
                r.at,
                format!(
                    "{n} samples take {} bytes, {} are left",
                    n.saturating_mul(16),
                    bytes.len() - r.at
                ),
            ));
        }
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            samples.push(Sample {
                region: r.i32()?,
                module: r.i32()?,
                address: r.u64()?,
            });
        }
        Ok(SampleFile {
            rank,
            hz,
            ticks,
            regions,
            modules,
            samples,
        })
    }
}

/// A length or count as the file's `i32` (a longer one is cut at
/// `i32::MAX`: no name, path or list is that long in practice).
fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn invalid(at: usize, what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("sample file, byte {at}: {what}"),
    )
}

/// A reader of the bytes, front to back.
struct Bytes<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    /// A file's magic and version, `what` it is named in the errors.
    fn header(&mut self, magic: &[u8; 8], version: i32, what: &str) -> io::Result<()> {
        if self.take(8)? != magic {
            return Err(invalid(0, format!("not a scope-profiler {what}")));
        }
        let found = self.i32()?;
        if found != version {
            return Err(invalid(
                8,
                format!("{what} version {found} (this reader reads {version})"),
            ));
        }
        Ok(())
    }

    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(invalid(self.at, "truncated".into()));
        };
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn i32(&mut self) -> io::Result<i32> {
        Ok(i32::from_ne_bytes(self.array()?))
    }

    fn i64(&mut self) -> io::Result<i64> {
        Ok(i64::from_ne_bytes(self.array()?))
    }

    fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_ne_bytes(self.array()?))
    }

    /// A count of items of at least `each` bytes, checked against the
    /// bytes left.
    fn count(&mut self, each: usize) -> io::Result<usize> {
        let at = self.at;
        let n = usize::try_from(self.i32()?).map_err(|_| invalid(at, "a negative count".into()))?;
        if n.saturating_mul(each) > self.bytes.len() - self.at {
            return Err(invalid(
                at,
                format!("{n} items cannot fit in the bytes left"),
            ));
        }
        Ok(n)
    }

    fn string(&mut self) -> io::Result<String> {
        let n = self.count(1)?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_files_of_a_profile_are_its_ranks() {
        for (profile, rank, want) in [
            ("out/run.h5", 0, "out/run_rank00000.sps"),
            ("run.json.gz", 12, "run_rank00012.sps"),
            ("a.b/prof.json", 3, "a.b/prof_rank00003.sps"),
            ("noext", 0, "noext_rank00000.sps"),
            (".hidden", 0, ".hidden_rank00000.sps"),
        ] {
            assert_eq!(path_for(Path::new(profile), rank), Path::new(want));
        }
        let dir = std::env::temp_dir().join(format!("sp-reader-sps-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "run_rank00001.sps",
            "run_rank00000.sps",
            "run_rank.sps",
            "run_rankx.sps",
            "other_rank00000.sps",
            "run_rank00000.sps.tmp",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let names: Vec<String> = files_for(&dir.join("run.h5"))
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["run_rank00000.sps", "run_rank00001.sps"]);
        assert_eq!(files_for(&dir.join("run.json.gz")).len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn file() -> SampleFile {
        SampleFile {
            rank: 3,
            hz: 997,
            ticks: 12345,
            regions: vec!["main".into(), "sölve \"x\"".into(), String::new()],
            modules: vec![("/bin/a".into(), 0x5000), ("/lib/b.so".into(), u64::MAX)],
            samples: vec![
                Sample {
                    region: 1,
                    module: 0,
                    address: 0x5123,
                },
                Sample {
                    region: -1,
                    module: -1,
                    address: 0,
                },
            ],
        }
    }

    #[test]
    fn round_trip() {
        let f = file();
        assert_eq!(SampleFile::parse(&f.to_bytes()).unwrap(), f);
        let empty = SampleFile::default();
        assert_eq!(SampleFile::parse(&empty.to_bytes()).unwrap(), empty);
    }

    #[test]
    fn hostile_files_are_errors_not_allocations() {
        let good = file().to_bytes();
        // Every truncation, and one byte too many.
        for cut in 0..good.len() {
            assert!(SampleFile::parse(&good[..cut]).is_err(), "{cut}");
        }
        let mut long = good.clone();
        long.push(0);
        assert!(SampleFile::parse(&long).is_err());
        // A huge count with few bytes behind it.
        let mut huge = good[..28].to_vec(); // through `ticks`
        huge.extend_from_slice(&i32::MAX.to_ne_bytes());
        let err = SampleFile::parse(&huge).unwrap_err().to_string();
        assert!(err.contains("cannot fit"), "{err}");
        let mut negative = good[..28].to_vec();
        negative.extend_from_slice(&(-1i32).to_ne_bytes());
        assert!(SampleFile::parse(&negative).is_err());
        let mut other = good.clone();
        other[8..12].copy_from_slice(&2i32.to_ne_bytes());
        let err = SampleFile::parse(&other).unwrap_err().to_string();
        assert!(err.contains("version 2"), "{err}");
        assert!(SampleFile::parse(b"NOTSAMPL").is_err());
    }
}
