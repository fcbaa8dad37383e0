//! A generic trait, and three impls of it (one per argument) spelling its
//! path, and their arguments, three ways.

use std::ops;

/// A configuration source.
pub trait Engine<T> {
    /// The configuration value.
    fn config(&self) -> u32;
}

/// The type implementing it.
pub struct GeneralPurpose;

/// A grid indexed through `ops::IndexMut`.
pub struct Grid(pub Vec<u32>);

#[scope_profiler::profile_all(always)]
mod impls {
    use super::Engine;
    use super::GeneralPurpose;
    use super::{Grid, ops};

    impl Engine<u8> for GeneralPurpose {
        fn config(&self) -> u32 {
            1
        }
    }

    impl super::Engine<u16> for super::GeneralPurpose {
        fn config(&self) -> u32 {
            2
        }
    }

    impl crate::engine::Engine<std::primitive::u32> for crate::engine::GeneralPurpose {
        fn config(&self) -> u32 {
            3
        }
    }

    impl std::ops::Index<usize> for Grid {
        type Output = u32;
        fn index(&self, i: usize) -> &u32 {
            &self.0[i]
        }
    }

    impl ops::IndexMut<usize> for Grid {
        fn index_mut(&mut self, i: usize) -> &mut u32 {
            &mut self.0[i]
        }
    }
}
