//! What the `.sps` layout (the Python package's) has no room for, in a
//! file beside it, `<stem>_rank<NNNNN>.sps.stacks`: each sample's path of
//! regions (outermost first, its innermost the `.sps` sample's region) and
//! its user call chain, so that a region's samples count inclusively and a
//! flame graph can hang the sampled frames below the regions. Native byte
//! order, as the `.sps`:
//!
//! ```text
//! char[8] "SCOPESTK", i32 version (2), i64 samples (the .sps file's),
//! i32 paths, per path: i32 length, i32 region per step (indices into the .sps regions),
//! i32 chains, per chain: i32 frames, per frame: i32 module (-1: unknown), u64 return address,
//! per sample: i32 path (-1: none), i32 chain (-1: none)
//! ```
//!
//! Each distinct path and chain is stored once: a hot loop's thousands of
//! samples share a few chains.

use std::io;
use std::path::{Path, PathBuf};

use super::{Bytes, invalid};

/// The stacks file's first bytes.
///
/// ```
/// use scope_profiler_reader::sps::{STACKS_MAGIC, Stacks};
/// assert!(Stacks::default().to_bytes().starts_with(STACKS_MAGIC));
/// ```
pub const STACKS_MAGIC: &[u8; 8] = b"SCOPESTK";

/// The stacks layout's version this crate writes and reads.
///
/// ```
/// use scope_profiler_reader::sps::{STACKS_VERSION, Stacks};
/// assert_eq!(Stacks::default().to_bytes()[8..12], STACKS_VERSION.to_ne_bytes());
/// ```
pub const STACKS_VERSION: i32 = 2;

/// One frame of a sampled call chain: the module its return address is in
/// (an index into the `.sps` file's modules, -1: unknown) and the address.
///
/// ```
/// let f = scope_profiler_reader::sps::Frame { module: 0, address: 0x5555_0000_1234 };
/// assert_eq!(f.module, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Index into the `.sps` file's modules; -1 if unknown.
    pub module: i32,
    /// The return address (the call is the instruction before it).
    pub address: u64,
}

/// The paths of regions and call chains of a `.sps` file's samples, in
/// its order.
///
/// ```
/// use scope_profiler_reader::sps::{Frame, Stacks};
/// let stacks = Stacks {
///     paths: vec![vec![0, 1]],
///     chains: vec![vec![Frame { module: 0, address: 0x10 }]],
///     samples: vec![(0, 0), (-1, -1)],
/// };
/// let back = Stacks::parse(&stacks.to_bytes()).unwrap();
/// assert_eq!(back, stacks);
/// assert_eq!(back.path_of(0), Some(&[0, 1][..]));
/// assert_eq!(back.path_of(1), None);
/// assert_eq!(back.chain_of(0), [Frame { module: 0, address: 0x10 }]);
/// assert!(back.chain_of(1).is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stacks {
    /// The paths of regions (indices into the `.sps` file's regions,
    /// outermost first).
    pub paths: Vec<Vec<i32>>,
    /// The call chains, each innermost first.
    pub chains: Vec<Vec<Frame>>,
    /// Per sample: its path (an index into `paths`, -1: no region open)
    /// and its call chain (an index into `chains`, -1: none).
    pub samples: Vec<(i32, i32)>,
}

impl Stacks {
    /// Sample `i`'s path of regions, if it landed in one.
    ///
    /// ```
    /// assert_eq!(scope_profiler_reader::sps::Stacks::default().path_of(0), None);
    /// ```
    pub fn path_of(&self, i: usize) -> Option<&[i32]> {
        let (path, _) = self.samples.get(i)?;
        self.paths
            .get(usize::try_from(*path).ok()?)
            .map(Vec::as_slice)
    }

    /// Sample `i`'s call chain, innermost first (empty if it has none).
    ///
    /// ```
    /// assert!(scope_profiler_reader::sps::Stacks::default().chain_of(0).is_empty());
    /// ```
    pub fn chain_of(&self, i: usize) -> &[Frame] {
        self.samples
            .get(i)
            .and_then(|&(_, chain)| self.chains.get(usize::try_from(chain).ok()?))
            .map_or(&[], Vec::as_slice)
    }

    /// The file's bytes.
    ///
    /// ```
    /// let bytes = scope_profiler_reader::sps::Stacks::default().to_bytes();
    /// assert_eq!(bytes.len(), 8 + 4 + 8 + 4 + 4);
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(STACKS_MAGIC);
        out.extend_from_slice(&STACKS_VERSION.to_ne_bytes());
        out.extend_from_slice(&(self.samples.len() as i64).to_ne_bytes());
        out.extend_from_slice(&(self.paths.len() as i32).to_ne_bytes());
        for path in &self.paths {
            out.extend_from_slice(&(path.len() as i32).to_ne_bytes());
            for r in path {
                out.extend_from_slice(&r.to_ne_bytes());
            }
        }
        out.extend_from_slice(&(self.chains.len() as i32).to_ne_bytes());
        for frames in &self.chains {
            out.extend_from_slice(&(frames.len() as i32).to_ne_bytes());
            for f in frames {
                out.extend_from_slice(&f.module.to_ne_bytes());
                out.extend_from_slice(&f.address.to_ne_bytes());
            }
        }
        for (path, chain) in &self.samples {
            out.extend_from_slice(&path.to_ne_bytes());
            out.extend_from_slice(&chain.to_ne_bytes());
        }
        out
    }

    /// Reads a stacks file's bytes, every count checked against the bytes
    /// left before allocating, every path and chain index against their
    /// tables.
    ///
    /// ```
    /// let err = scope_profiler_reader::sps::Stacks::parse(b"SCOPESTK").unwrap_err();
    /// assert!(err.to_string().contains("truncated"), "{err}");
    /// ```
    pub fn parse(bytes: &[u8]) -> io::Result<Stacks> {
        let mut r = Bytes { bytes, at: 0 };
        r.header(STACKS_MAGIC, STACKS_VERSION, "stacks file")?;
        let at = r.at;
        let n = usize::try_from(r.i64()?).map_err(|_| invalid(at, "a negative count".into()))?;
        // Each sample takes 8 bytes at least.
        if n.saturating_mul(8) > bytes.len() - r.at {
            return Err(invalid(
                at,
                format!("{n} samples cannot fit in the bytes left"),
            ));
        }
        let paths_n = r.count(4)?;
        let mut paths = Vec::with_capacity(paths_n);
        for _ in 0..paths_n {
            let len = r.count(4)?;
            let mut path = Vec::with_capacity(len);
            for _ in 0..len {
                path.push(r.i32()?);
            }
            paths.push(path);
        }
        let chains_n = r.count(4)?;
        let mut chains = Vec::with_capacity(chains_n);
        for _ in 0..chains_n {
            let frames_n = r.count(12)?;
            let mut frames = Vec::with_capacity(frames_n);
            for _ in 0..frames_n {
                frames.push(Frame {
                    module: r.i32()?,
                    address: r.u64()?,
                });
            }
            chains.push(frames);
        }
        if n.saturating_mul(8) != bytes.len() - r.at {
            return Err(invalid(
                r.at,
                format!("{n} samples are not the {} bytes left", bytes.len() - r.at),
            ));
        }
        let mut samples = Vec::with_capacity(n);
        let in_table = |i: i32, len: usize| i == -1 || usize::try_from(i).is_ok_and(|i| i < len);
        for _ in 0..n {
            let at = r.at;
            let (path, chain) = (r.i32()?, r.i32()?);
            if !in_table(path, paths.len()) {
                return Err(invalid(at, format!("path {path} of {} paths", paths.len())));
            }
            if !in_table(chain, chains.len()) {
                return Err(invalid(
                    at,
                    format!("chain {chain} of {} chains", chains.len()),
                ));
            }
            samples.push((path, chain));
        }
        Ok(Stacks {
            paths,
            chains,
            samples,
        })
    }
}

/// The stacks file beside the sample file at `sps`: `<it>.stacks`.
///
/// ```
/// use std::path::Path;
/// use scope_profiler_reader::sps::stacks_path;
/// assert_eq!(stacks_path(Path::new("out/run_rank00000.sps")), Path::new("out/run_rank00000.sps.stacks"));
/// ```
pub fn stacks_path(sps: &Path) -> PathBuf {
    let mut name = sps.as_os_str().to_owned();
    name.push(".stacks");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every truncation and a few hostile counts are errors, not panics or
    /// large allocations.
    #[test]
    fn hostile_stacks_files_are_errors() {
        let frame = |module, address| Frame { module, address };
        let stacks = Stacks {
            paths: vec![vec![0], vec![0, 1, 2]],
            chains: vec![vec![frame(0, 1), frame(-1, 2)], vec![frame(2, 3)]],
            samples: vec![(1, 0), (-1, -1), (0, 1), (1, 0)],
        };
        let bytes = stacks.to_bytes();
        assert_eq!(Stacks::parse(&bytes).unwrap(), stacks);
        for cut in 0..bytes.len() {
            assert!(Stacks::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Stacks::parse(&longer).is_err());
        // A huge sample count, and a path past the table.
        let mut huge = bytes.clone();
        huge[12..20].copy_from_slice(&i64::MAX.to_ne_bytes());
        assert!(Stacks::parse(&huge).is_err());
        let bad_path = Stacks {
            samples: vec![(3, -1)],
            ..Stacks::default()
        };
        let err = Stacks::parse(&bad_path.to_bytes()).unwrap_err();
        assert!(err.to_string().contains("path 3 of 0"), "{err}");
        let bad_chain = Stacks {
            samples: vec![(-1, 0)],
            ..Stacks::default()
        };
        let err = Stacks::parse(&bad_chain.to_bytes()).unwrap_err();
        assert!(err.to_string().contains("chain 0 of 0"), "{err}");
    }
}
