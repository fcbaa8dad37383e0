//! A lane's oldest samples as one compressed, checksummed block in an
//! unlinked scratch file (the drainer spills them once the samples in
//! memory pass half their bound), read back at the cut.
//!
//! A block is four columns of LEB128 varints: the time's difference from
//! the previous sample's (they are sorted), the zigzagged difference of
//! the address from the previous one, the task plus one (0: none), and
//! the call chain's number plus one (0: none; the chains stay in memory,
//! each once); sealed as `spill` seals a chunk (LZ4, a checksum and the
//! raw length in front).

#![forbid(unsafe_code)]

use std::io;

use super::{LaneSamples, NO_CHAIN, NO_TASK};
use crate::spill::{push_varint, read_varint, seal, unseal, unzigzag, zigzag};

/// Most raw bytes a sample takes: a u64 varint for its time and one for
/// its address, a u32 varint for its task and one for its chain.
const MAX_RAW_PER_SAMPLE: usize = 10 + 10 + 5 + 5;

/// Where a spilled block is in the scratch file, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Its first byte in the file.
    pub offset: u64,
    /// Its length in bytes.
    pub bytes: u32,
    /// Samples in it.
    pub samples: u32,
}

/// Reusable buffers of the blocks' encoding and decoding.
#[derive(Default)]
pub struct Buffers {
    raw: Vec<u8>,
    /// The last block encoded, or the block to decode.
    pub block: Vec<u8>,
}

/// `v` + 1 for a column where `u32::MAX` means none (it becomes 0).
fn plus_one(v: u32) -> u64 {
    u64::from(v.wrapping_add(1))
}

impl Buffers {
    /// The first `n` samples of `lane` as a block, in `self.block`; the
    /// samples it holds.
    pub fn encode(&mut self, lane: &LaneSamples, n: usize) -> u32 {
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
            push_varint(raw, plus_one(task));
        }
        for &chain in &lane.chains[..n] {
            push_varint(raw, plus_one(chain));
        }
        seal(raw, &mut self.block);
        n as u32
    }

    /// Appends the samples of `self.block`, which is what
    /// [`Buffers::encode`] made of `block`'s samples, to `out`, each chain
    /// checked to be one of the `chains` numbered; `out` is unchanged if
    /// the block is not that.
    ///
    /// # Errors
    /// `InvalidData` naming what is wrong with the block (changed on disk).
    pub fn decode(
        &mut self,
        block: &Block,
        chains: usize,
        out: &mut LaneSamples,
    ) -> io::Result<()> {
        let corrupt = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
        let n = block.samples as usize;
        unseal(&self.block, 4 * n, n * MAX_RAW_PER_SAMPLE, &mut self.raw)?;
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
        let mut numbers = |none: u32, below: usize, what: &str| -> io::Result<Vec<u32>> {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let x = match read()? {
                    0 => none,
                    x => u32::try_from(x - 1)
                        .ok()
                        .filter(|&x| (x as usize) < below)
                        .ok_or_else(|| corrupt(&format!("a sample's {what} out of range")))?,
                };
                v.push(x);
            }
            Ok(v)
        };
        let tasks = numbers(NO_TASK, NO_TASK as usize, "task")?;
        let chain_ids = numbers(NO_CHAIN, chains, "chain")?;
        if at != raw.len() || !times.is_sorted() {
            return Err(corrupt("a block of samples not as it was written"));
        }
        out.times.extend(times);
        out.ips.extend(ips);
        out.tasks.extend(tasks);
        out.chains.extend(chain_ids);
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
            chains: vec![1, NO_CHAIN, 0, 1],
        }
    }

    /// What is encoded comes back, appended after what `out` holds.
    #[test]
    fn blocks_round_trip() {
        let l = lane();
        let mut b = Buffers::default();
        let samples = b.encode(&l, 3);
        assert_eq!(samples, 3);
        let block = Block {
            offset: 0,
            bytes: b.block.len() as u32,
            samples,
        };
        let mut out = LaneSamples::default();
        b.decode(&block, 2, &mut out).unwrap();
        assert_eq!(out.times, l.times[..3]);
        assert_eq!(out.ips, l.ips[..3]);
        assert_eq!(out.tasks, l.tasks[..3]);
        assert_eq!(out.chains, l.chains[..3]);
        b.decode(&block, 2, &mut out).unwrap();
        assert_eq!(out.len(), 6);
        assert_eq!(out.chains[3..], l.chains[..3]);
    }

    /// A changed byte, a wrong count or a chain past the table is an
    /// error, and leaves `out` as it was.
    #[test]
    fn a_changed_block_is_an_error() {
        let l = lane();
        let mut b = Buffers::default();
        let samples = b.encode(&l, 4);
        let block = Block {
            offset: 0,
            bytes: b.block.len() as u32,
            samples,
        };
        let good = b.block.clone();
        for i in 0..good.len() {
            b.block.clone_from(&good);
            b.block[i] ^= 0x10;
            let mut out = LaneSamples::default();
            assert!(b.decode(&block, 2, &mut out).is_err(), "byte {i}");
            assert_eq!(out, LaneSamples::default());
        }
        b.block = good;
        let wrong = Block {
            samples: 5,
            ..block
        };
        assert!(b.decode(&wrong, 2, &mut LaneSamples::default()).is_err());
        let err = b
            .decode(&block, 1, &mut LaneSamples::default())
            .unwrap_err();
        assert!(err.to_string().contains("chain out of range"), "{err}");
    }
}
