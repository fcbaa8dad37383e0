//! The distinct call chains of a session's samples, each kept once: a
//! sample holds the number of its chain, 4 bytes, whatever its depth (the
//! samples of one loop share a few chains).

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::fxhash::FxHasher;

/// The chain of a sample that has none (no frame pointers above it).
pub const NO_CHAIN: u32 = u32::MAX;

/// Chains by number: their return addresses, innermost first, back to back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainTable {
    frames: Vec<u64>,
    ends: Vec<u32>,
}

impl ChainTable {
    /// Chain `id`'s return addresses, innermost first (empty for
    /// [`NO_CHAIN`] or a number past the table).
    ///
    /// ```
    /// use scope_profiler_core::internal::sampling::{ChainInterner, NO_CHAIN};
    /// let mut chains = ChainInterner::default();
    /// let id = chains.intern(&[7, 8]);
    /// assert_eq!(chains.table().get(id), [7, 8]);
    /// assert!(chains.table().get(NO_CHAIN).is_empty());
    /// ```
    pub fn get(&self, id: u32) -> &[u64] {
        let id = id as usize;
        let start = match id.checked_sub(1) {
            Some(before) => self.ends.get(before).copied().unwrap_or(0) as usize,
            None => 0,
        };
        let end = self.ends.get(id).copied().unwrap_or(0) as usize;
        self.frames.get(start..end).unwrap_or(&[])
    }

    /// Chains in the table.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the table has no chain.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// A [`ChainTable`] that numbers each distinct chain once.
#[derive(Default)]
pub struct ChainInterner {
    table: ChainTable,
    /// The last chain of each hash; `previous` links the earlier ones.
    last: HashMap<u64, u32, BuildHasherDefault<FxHasher>>,
    previous: Vec<u32>,
}

/// Bytes a chain takes besides its frames: its end, its link, its share
/// of the map.
const CHAIN_BYTES: usize = 4 + 4 + 24;

impl ChainInterner {
    /// The number of `chain` (innermost first), added if new; [`NO_CHAIN`]
    /// for an empty one, or past `u32` chains or frames.
    pub fn intern(&mut self, chain: &[u64]) -> u32 {
        if chain.is_empty() {
            return NO_CHAIN;
        }
        let mut h = FxHasher::default();
        for &f in chain {
            h.write_u64(f);
        }
        let hash = h.finish();
        let mut at = self.last.get(&hash).copied().unwrap_or(NO_CHAIN);
        while at != NO_CHAIN {
            if self.table.get(at) == chain {
                return at;
            }
            at = self.previous[at as usize];
        }
        let id = self.table.ends.len();
        let end = self.table.frames.len() + chain.len();
        let (Ok(id), Ok(end)) = (u32::try_from(id), u32::try_from(end)) else {
            return NO_CHAIN;
        };
        if id == NO_CHAIN {
            return NO_CHAIN;
        }
        self.table.frames.extend_from_slice(chain);
        self.table.ends.push(end);
        self.previous
            .push(self.last.insert(hash, id).unwrap_or(NO_CHAIN));
        id
    }

    /// The chains so far.
    pub fn table(&self) -> &ChainTable {
        &self.table
    }

    /// Bytes the chains take (their frames and what numbers them).
    pub fn bytes(&self) -> usize {
        8 * self.table.frames.len() + CHAIN_BYTES * self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain seen again gets its number; distinct chains (also of one
    /// hash) get their own.
    #[test]
    fn each_chain_is_numbered_once() {
        let mut c = ChainInterner::default();
        let a = c.intern(&[1, 2, 3]);
        let b = c.intern(&[1, 2]);
        assert_eq!((a, b), (0, 1));
        assert_eq!(c.intern(&[1, 2, 3]), a);
        assert_eq!(c.intern(&[]), NO_CHAIN);
        assert_eq!(c.table().len(), 2);
        assert_eq!(c.table().get(b), [1, 2]);
        assert!(c.table().get(9).is_empty());
        // Two chains forced into one hash bucket stay apart.
        let hash = *c.last.keys().next().unwrap();
        let first = c.last[&hash];
        let other = c.intern(&[5]);
        c.last.remove(&{
            let mut h = FxHasher::default();
            h.write_u64(5);
            h.finish()
        });
        c.previous[other as usize] = first;
        c.last.insert(hash, other);
        assert_eq!(c.table().get(first), c.table().get(first));
        let again = c.table().get(first).to_vec();
        let mut h = FxHasher::default();
        for &f in &again {
            h.write_u64(f);
        }
        assert_eq!(h.finish(), hash);
        assert_eq!(
            c.intern(&again),
            first,
            "found past another chain of its bucket"
        );
        assert_eq!(c.bytes(), 8 * 6 + CHAIN_BYTES * 3);
    }
}
