//! The communicator of an MPI session (feature `mpi`) and the few
//! collectives the writers need, on rsmpi: every MPI call of the crate goes
//! through here.
//!
//! The profiler talks on a duplicate of the application's communicator
//! (`MPI_Comm_dup`), so its messages never match the application's
//! receives. The duplicate is never freed: freeing it after the
//! application's `MPI_Finalize` (an `Options` dropped late) would abort, and
//! `MPI_Finalize` releases it anyway.

use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Root, Source};

use crate::error::Error;
use crate::sync::Lifecycle;

/// A session's communicator: a duplicate of the application's, shared by
/// the clones of its `Options`.
#[derive(Clone)]
pub struct Comm {
    inner: Arc<Handle>,
    rank: i32,
    size: i32,
}

/// The duplicate, never freed.
struct Handle(ManuallyDrop<SimpleCommunicator>);

// SAFETY: the handle is an opaque MPI object id that MPI lets any thread
// use, one call at a time (MPI_THREAD_SERIALIZED). This module makes MPI
// calls on it only through `Serialized` (below: `Comm` itself has no method
// that calls MPI, and the handle is private), and a `Serialized` borrows a
// `sync::Lifecycle`, which exists only while its thread holds the process's
// one lifecycle lock; so no two threads make MPI calls on it at once.
// Nothing else reads or mutates it.
unsafe impl Send for Handle {}
// SAFETY: as for `Send`: a shared reference reaches MPI only through a
// `Serialized`, which holds the lifecycle lock.
unsafe impl Sync for Handle {}

/// A session's communicator while the lifecycle lock is held: the only way
/// to make MPI calls on it.
pub struct Serialized<'a> {
    comm: &'a Comm,
    _lifecycle: &'a Lifecycle,
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Comm {{ rank: {}, size: {} }}", self.rank, self.size)
    }
}

impl Comm {
    /// Duplicates `comm` (collective over `comm`).
    pub(crate) fn duplicate<C: Communicator>(comm: &C) -> Comm {
        let dup = comm.duplicate();
        Comm {
            rank: dup.rank(),
            size: dup.size(),
            inner: Arc::new(Handle(ManuallyDrop::new(dup))),
        }
    }

    /// This process's rank.
    pub(crate) fn rank(&self) -> u32 {
        self.rank as u32
    }

    /// Number of ranks.
    pub(crate) fn size(&self) -> u32 {
        self.size as u32
    }

    /// The communicator for MPI calls while `lifecycle` is held.
    pub fn serialized<'a>(&'a self, lifecycle: &'a Lifecycle) -> Serialized<'a> {
        Serialized {
            comm: self,
            _lifecycle: lifecycle,
        }
    }
}

impl Serialized<'_> {
    /// This process's rank.
    pub fn rank(&self) -> u32 {
        self.comm.rank()
    }

    /// Number of ranks.
    pub fn size(&self) -> u32 {
        self.comm.size()
    }

    /// The rsmpi communicator (for the MPI-IO file driver, whose MPI calls
    /// happen while this `Serialized` is borrowed).
    #[cfg(feature = "mpio")]
    pub fn raw(&self) -> &SimpleCommunicator {
        &self.comm.inner.0
    }

    fn world(&self) -> &SimpleCommunicator {
        &self.comm.inner.0
    }

    /// Collective: `local` on every rank if it is `Ok` on every rank; else
    /// on every rank the same `Err`, [`Error::Rank`] of the lowest rank that
    /// failed (an `Error::Rank` it holds keeps the rank it names).
    pub fn agree<T>(&self, local: Result<T, Error>) -> Result<T, Error> {
        let me = self.comm.rank as u64;
        let failing = [if local.is_err() { me } else { u64::MAX }];
        let mut lowest = [u64::MAX];
        self.world()
            .all_reduce_into(&failing[..], &mut lowest[..], SystemOperation::min());
        if lowest[0] == u64::MAX {
            return local;
        }
        let root = lowest[0] as i32;
        let mut message = Vec::new();
        if let Err(e) = &local
            && root == self.comm.rank
        {
            let (rank, text) = match e {
                Error::Rank { rank, message } => (*rank, message.clone()),
                other => (self.rank(), other.to_string()),
            };
            message = encode_strings(&[rank.to_string(), text]);
        }
        let message = self.broadcast(root as u32, message);
        let mut parts = decode_strings(&message).into_iter();
        let rank = parts
            .next()
            .and_then(|r| r.parse().ok())
            .unwrap_or(root as u32);
        Err(Error::Rank {
            rank,
            message: parts.next().unwrap_or_default(),
        })
    }

    /// Collective: the element-wise sum of `values` over the ranks before
    /// this one (zeros on rank 0), and over all ranks.
    pub fn offsets(&self, values: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let mut before = vec![0u64; values.len()];
        self.world()
            .exclusive_scan_into(values, &mut before[..], SystemOperation::sum());
        if self.comm.rank == 0 {
            // MPI leaves rank 0's result undefined.
            before.iter_mut().for_each(|v| *v = 0);
        }
        let mut total = vec![0u64; values.len()];
        self.world()
            .all_reduce_into(values, &mut total[..], SystemOperation::sum());
        (before, total)
    }

    /// Collective: the element-wise maximum of `values` over all ranks.
    pub fn max(&self, values: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; values.len()];
        self.world()
            .all_reduce_into(values, &mut out[..], SystemOperation::max());
        out
    }

    /// Collective: every rank's `bytes`, in rank order.
    pub fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let len = bytes.len() as u64;
        let mut lens = vec![0u64; self.comm.size as usize];
        self.world().all_gather_into(&len, &mut lens[..]);
        let counts: Vec<i32> = lens.iter().map(|&l| l as i32).collect();
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let mut all = vec![0u8; lens.iter().sum::<u64>() as usize];
        {
            let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.world().all_gather_varcount_into(bytes, &mut partition);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
            .collect()
    }

    /// Collective: `root`'s `bytes` on every rank (`bytes` of the others
    /// is ignored).
    pub fn broadcast(&self, root: u32, bytes: Vec<u8>) -> Vec<u8> {
        let process = self.world().process_at_rank(root as i32);
        let mut len = [bytes.len() as u64];
        process.broadcast_into(&mut len[..]);
        let mut buffer = if self.rank() == root {
            bytes
        } else {
            vec![0u8; len[0] as usize]
        };
        process.broadcast_into(&mut buffer[..]);
        buffer
    }

    /// Sends `bytes` to rank `to` (matched by [`Serialized::receive`]).
    pub fn send(&self, to: u32, bytes: &[u8]) {
        self.world().process_at_rank(to as i32).send(bytes);
    }

    /// The next message from rank `from`.
    pub fn receive(&self, from: u32) -> Vec<u8> {
        self.world()
            .process_at_rank(from as i32)
            .receive_vec::<u8>()
            .0
    }
}

/// `strings` as one message: each one's byte length (8 bytes, little
/// endian), then its bytes.
pub fn encode_strings<S: AsRef<str>>(strings: &[S]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in strings {
        let s = s.as_ref().as_bytes();
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }
    out
}

/// The strings of a message [`encode_strings`] made (a truncated tail is
/// dropped).
pub fn decode_strings(mut bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    while bytes.len() >= 8 {
        let (len, rest) = bytes.split_at(8);
        let len = u64::from_le_bytes(len.try_into().unwrap_or_default()) as usize;
        if rest.len() < len {
            break;
        }
        out.push(String::from_utf8_lossy(&rest[..len]).into_owned());
        bytes = &rest[len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{decode_strings, encode_strings};

    #[test]
    fn strings_survive_their_encoding() {
        let strings = ["", "a\0b", "région", "x"];
        assert_eq!(decode_strings(&encode_strings(&strings)), strings);
        assert!(decode_strings(&[]).is_empty());
    }
}
