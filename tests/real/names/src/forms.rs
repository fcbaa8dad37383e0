//! Inherent methods on a trait object.

pub mod shapes {
    scope_profiler::profile_all_items! {
        always;

        /// A shape.
        pub trait Shape {
            /// Its area.
            fn area(&self) -> f64;
        }

        /// A circle of a radius.
        pub struct Circle(pub f64);

        impl Shape for Circle {
            fn area(&self) -> f64 {
                3.0 * self.0 * self.0
            }
        }

        impl dyn Shape {
            /// The area, through the trait object.
            pub fn dyn_area(&self) -> f64 {
                self.area()
            }
        }
    }
}
