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

use std::io;

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
        if r.take(8)? != MAGIC {
            return Err(invalid(0, "not a scope-profiler sample file".into()));
        }
        let version = r.i32()?;
        if version != VERSION {
            return Err(invalid(
                8,
                format!("sample file version {version} (this reader reads {VERSION})"),
            ));
        }
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
