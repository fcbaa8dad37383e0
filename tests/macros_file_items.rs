//! A module file instrumented whole with the stable form,
//! `profile_all_items! { ... }`. Inner attributes and `//!` docs stay
//! before the macro.

#![allow(clippy::module_inception)]

use scope_profiler::profile;

scope_profiler::profile_all_items! {
    use std::f64::consts::PI;

    pub struct Circle(pub f64);

    pub trait Shape {
        fn area(&self) -> f64;
    }

    impl Shape for Circle {
        fn area(&self) -> f64 {
            PI * self.0 * self.0
        }
    }

    /// One trait, two arguments: two regions.
    pub struct Bits(pub u32);

    impl From<u8> for Bits {
        fn from(v: u8) -> Self {
            Bits(v.into())
        }
    }

    impl From<u16> for Bits {
        fn from(v: u16) -> Self {
            Bits(v.into())
        }
    }

    #[profile("file_entry", recursive)]
    pub fn entry() -> u32 {
        assert_eq!(Bits::from(1u8).0 + Bits::from(2u16).0, 3);
        helper();
        (Circle(1.0).area() + Circle(0.0).area()) as u32 + 3
    }

    pub fn helper() {
        nested::inner();
    }

    pub mod nested {
        pub fn inner() {}
    }

    // A nested module with its own, different mode.
    #[scope_profiler::profile_all(always)]
    pub mod always {
        pub fn tick() {}
    }
}
