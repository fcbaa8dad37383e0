//! A lane's oldest samples as one compressed, checksummed block in an
//! unlinked scratch file (the drainer spills them once the samples in
//! memory pass half their bound), read back at the cut.
//!
//! A block is five columns of LEB128 varints: the time's difference from
//! the previous sample's (they are sorted), the zigzagged difference of
//! the address from the previous one, the task plus one (0: none), the
//! call chain's length, and the chains' return addresses as zigzagged
//! differences from the previous frame; sealed as `spill` seals a chunk
//! (LZ4, a checksum and the raw length in front).

#![forbid(unsafe_code)]

use std::io;

use super::{LaneSamples, MAX_FRAMES, NO_TASK};
use crate::spill::{push_varint, read_varint, seal, unseal, unzigzag, zigzag};

/// Most raw bytes a sample takes besides its chain: a u64 varint for its
/// time and one for its address, a u32 varint for its task and one for
/// its chain's length.
const MAX_RAW_PER_SAMPLE: usize = 10 + 10 + 5 + 5;

/// Most raw bytes a frame of a chain takes.
const MAX_RAW_PER_FRAME: usize = 10;

/// Where a spilled block is in the scratch file, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Its first byte in the file.
    pub offset: u64,
    /// Its length in bytes.
    pub bytes: u32,
    /// Samples in it.
    pub samples: u32,
    /// Return addresses of their chains, all told.
    pub frames: u32,
}

/// Reusable buffers of the blocks' encoding and decoding.
#[derive(Default)]
pub struct Buffers {
    raw: Vec<u8>,
    /// The last block encoded, or the block to decode.
    pub block: Vec<u8>,
}

impl Buffers {
    /// The first `n` samples of `lane` as a block, in `self.block`; the
    /// samples and frames it holds.
    pub fn encode(&mut self, lane: &LaneSamples, n: usize) -> (u32, u32) {
        let raw = &mut self.raw;
        raw.clear();
        let mut previous = 0u64;
        for &t in &lane.times[..n] {
            push_varint(raw, t.wrapping_sub(previous));
            previous = t;
        }
        let mut previous = 0u64;
        for &ip in &lane.ips[..n] {
            push_varint(raw, zigzag(ip.wrapping_sub(previous) as i64));
            previous = ip;
        }
        for &task in &lane.tasks[..n] {
            push_varint(raw, u64::from(task.wrapping_add(1)));
        }
        for i in 0..n {
            push_varint(raw, lane.chain(i).len() as u64);
        }
        let frames = n.checked_sub(1).map_or(0, |i| lane.chain_ends[i] as usize);
        let mut previous = 0u64;
        for &f in &lane.chains[..frames] {
            push_varint(raw, zigzag(f.wrapping_sub(previous) as i64));
            previous = f;
        }
        seal(raw, &mut self.block);
        (n as u32, frames as u32)
    }

    /// Appends the samples of `self.block`, which is what
    /// [`Buffers::encode`] made of `block`'s samples, to `out`; `out` is
    /// unchanged if the block is not that.
    ///
    /// # Errors
    /// `InvalidData` naming what is wrong with the block (changed on disk).
    pub fn decode(&mut self, block: &Block, out: &mut LaneSamples) -> io::Result<()> {
        let corrupt = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
        let (n, frames) = (block.samples as usize, block.frames as usize);
        if out.chains.len() + frames > u32::MAX as usize {
            return Err(corrupt("more return addresses than a cut holds"));
        }
        unseal(
            &self.block,
            4 * n + frames,
            n * MAX_RAW_PER_SAMPLE + frames * MAX_RAW_PER_FRAME,
            &mut self.raw,
        )?;
        let raw = &self.raw;
        let mut at = 0;
        let mut read = || read_varint(raw, &mut at);
        let mut times = Vec::with_capacity(n);
        let mut t = 0u64;
        for _ in 0..n {
            t = t.wrapping_add(read()?);
            times.push(t);
        }
        let mut ips = Vec::with_capacity(n);
        let mut ip = 0u64;
        for _ in 0..n {
            ip = ip.wrapping_add(unzigzag(read()?) as u64);
            ips.push(ip);
        }
        let mut tasks = Vec::with_capacity(n);
        for _ in 0..n {
            let task = match read()? {
                0 => NO_TASK,
                v => u32::try_from(v - 1).map_err(|_| corrupt("a sample's task out of range"))?,
            };
            tasks.push(task);
        }
        let mut chain_ends = Vec::with_capacity(n);
        let mut end = out.chains.len();
        for _ in 0..n {
            let len = read()?;
            if len > MAX_FRAMES as u64 {
                return Err(corrupt("a sample's chain longer than kept"));
            }
            end += len as usize;
            chain_ends.push(end as u32);
        }
        if end - out.chains.len() != frames {
            return Err(corrupt("a block's chains not of their stated length"));
        }
        let mut chains = Vec::with_capacity(frames);
        let mut f = 0u64;
        for _ in 0..frames {
            f = f.wrapping_add(unzigzag(read()?) as u64);
            chains.push(f);
        }
        if at != raw.len() || !times.is_sorted() {
            return Err(corrupt("a block of samples not as it was written"));
        }
        out.times.extend(times);
        out.ips.extend(ips);
        out.tasks.extend(tasks);
        out.chain_ends.extend(chain_ends);
        out.chains.extend(chains);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane() -> LaneSamples {
        LaneSamples {
            times: vec![10, 20, 20, 35],
            ips: vec![0x5555_0000_1000, 0x5555_0000_0f00, 7, u64::MAX],
            tasks: vec![NO_TASK, 0, 3, NO_TASK],
            chain_ends: vec![2, 2, 5, 6],
            chains: vec![0x5555_0000_2000, 0x5555_0000_1000, 1, 2, 3, 0],
        }
    }

    /// What is encoded comes back, appended after what `out` holds, its
    /// chains' ends shifted.
    #[test]
    fn blocks_round_trip() {
        let l = lane();
        let mut b = Buffers::default();
        let (samples, frames) = b.encode(&l, 3);
        assert_eq!((samples, frames), (3, 5));
        let block = Block {
            offset: 0,
            bytes: b.block.len() as u32,
            samples,
            frames,
        };
        let mut out = LaneSamples::default();
        b.decode(&block, &mut out).unwrap();
        assert_eq!(out.times, l.times[..3]);
        assert_eq!(out.ips, l.ips[..3]);
        assert_eq!(out.tasks, l.tasks[..3]);
        assert_eq!(out.chain(0), l.chain(0));
        assert_eq!(out.chain(2), l.chain(2));
        b.decode(&block, &mut out).unwrap();
        assert_eq!(out.times.len(), 6);
        assert_eq!(out.chain(5), l.chain(2));
        assert_eq!(out.chain_ends.last(), Some(&10));
    }

    /// A changed byte or a wrong count is an error, and leaves `out` as
    /// it was.
    #[test]
    fn a_changed_block_is_an_error() {
        let l = lane();
        let mut b = Buffers::default();
        let (samples, frames) = b.encode(&l, 4);
        let block = Block {
            offset: 0,
            bytes: b.block.len() as u32,
            samples,
            frames,
        };
        let good = b.block.clone();
        for i in 0..good.len() {
            b.block.clone_from(&good);
            b.block[i] ^= 0x10;
            let mut out = LaneSamples::default();
            assert!(b.decode(&block, &mut out).is_err(), "byte {i}");
            assert_eq!(out, LaneSamples::default());
        }
        b.block = good;
        let wrong = Block { frames: 5, ..block };
        assert!(b.decode(&wrong, &mut LaneSamples::default()).is_err());
        let wrong = Block {
            samples: 5,
            ..block
        };
        assert!(b.decode(&wrong, &mut LaneSamples::default()).is_err());
    }
}
