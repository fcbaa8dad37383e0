#![scope_profiler::profile_all]
//! A module file instrumented by an inner attribute.

pub struct Body {
    pub mass: f64,
    pub velocity: f64,
}

impl Body {
    pub fn new(mass: f64) -> Body {
        Body {
            mass,
            velocity: 0.0,
        }
    }

    pub fn step(&mut self, dt: f64) {
        self.velocity += dt * forces::drag(self.velocity);
        self.velocity += dt;
    }
}

pub trait Energy {
    fn energy(&self) -> f64;
}

impl Energy for Body {
    fn energy(&self) -> f64 {
        0.5 * self.mass * self.velocity * self.velocity
    }
}

pub fn gravity(mass: f64) -> f64 {
    9.81 * mass
}

pub mod forces {
    pub fn drag(v: f64) -> f64 {
        -0.1 * v
    }
}
