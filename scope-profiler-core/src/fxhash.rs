//! The Fx hash (rustc's), for maps keyed by the program's own names and
//! small integers: fast on short keys, not meant for hostile input.

use std::hash::Hasher;

/// The Fx hash (rustc's): a multiply and rotate per word, fast on short keys.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(K);
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        let word = u64::from_le_bytes(tail) ^ bytes.len() as u64;
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(K);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.0 = (self.0.rotate_left(26) ^ i as u64).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fx_hash_separates_short_keys() {
        use std::hash::Hash;
        let h = |s: &str| {
            let mut f = FxHasher::default();
            s.hash(&mut f);
            f.finish()
        };
        assert_ne!(h("a"), h("b"));
        assert_ne!(h(""), h("\0"));
        assert_ne!(h("abcdefgh"), h("abcdefgh\0"));
    }
}
