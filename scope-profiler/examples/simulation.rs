//! A small n-body simulation, instrumented whole by one `#[profile_all]`.
//!
//! Every function of the `simulation` module is traced: it records while the
//! recursive entrypoint `run` is running, under its fully-qualified name
//! (`simulation::simulation::World::forces`,
//! `simulation::simulation::<Euler as Integrator>::advance`, ...). Called
//! outside `run`, the same functions record nothing.
//!
//! Run with `cargo run --release -p scope-profiler --example simulation
//! [-- OUTPUT.h5 [STEPS]]`; it writes `simulation.h5` into the system temp dir (or
//! OUTPUT.h5) and prints the summary. With `SCOPE_PROFILER_SAMPLE_HZ=1000`
//! it samples inside the regions too (`simulation_rank00000.sps` beside the
//! file; `scope-prof inspect --samples FILE` shows where each region's time
//! went).

use std::path::PathBuf;

use scope_profiler::{self as sp, Options};

#[sp::profile_all]
mod simulation {
    use scope_profiler::profile;

    /// A 2-D vector.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct Vec2 {
        pub x: f64,
        pub y: f64,
    }

    impl Vec2 {
        /// Not instrumented: a `const fn` runs at compile time too.
        pub const fn new(x: f64, y: f64) -> Vec2 {
            Vec2 { x, y }
        }
    }

    pub struct Particle {
        pub position: Vec2,
        pub velocity: Vec2,
        pub mass: f64,
    }

    pub struct World {
        pub particles: Vec<Particle>,
        pub time: f64,
    }

    impl World {
        /// Particles on a ring, at rest.
        pub fn new(n: usize) -> World {
            let particles = (0..n)
                .map(|i| {
                    let angle = i as f64 / n as f64 * std::f64::consts::TAU;
                    Particle {
                        position: Vec2::new(angle.cos(), angle.sin()),
                        velocity: Vec2::default(),
                        mass: 1.0 + (i % 3) as f64,
                    }
                })
                .collect();
            World {
                particles,
                time: 0.0,
            }
        }

        /// Softened gravity between every pair of particles.
        pub fn forces(&self) -> Vec<Vec2> {
            let mut forces = vec![Vec2::default(); self.particles.len()];
            for (i, a) in self.particles.iter().enumerate() {
                for (j, b) in self.particles.iter().enumerate().skip(i + 1) {
                    let dx = b.position.x - a.position.x;
                    let dy = b.position.y - a.position.y;
                    let r2 = dx * dx + dy * dy + 0.05;
                    let f = a.mass * b.mass / (r2 * r2.sqrt());
                    forces[i].x += f * dx;
                    forces[i].y += f * dy;
                    forces[j].x -= f * dx;
                    forces[j].y -= f * dy;
                }
            }
            forces
        }

        pub fn kinetic_energy(&self) -> f64 {
            self.particles
                .iter()
                .map(|p| 0.5 * p.mass * (p.velocity.x.powi(2) + p.velocity.y.powi(2)))
                .sum()
        }
    }

    /// Advances a world by one time step.
    pub trait Integrator {
        fn advance(&self, world: &mut World, dt: f64);

        /// A default method: instrumented as `Integrator::describe`.
        fn describe(&self) -> String {
            "an integrator".to_owned()
        }
    }

    /// Semi-implicit Euler.
    pub struct Euler;

    impl Integrator for Euler {
        fn advance(&self, world: &mut World, dt: f64) {
            let forces = world.forces();
            for (p, f) in world.particles.iter_mut().zip(&forces) {
                p.velocity.x += dt * f.x / p.mass;
                p.velocity.y += dt * f.y / p.mass;
                p.position.x += dt * p.velocity.x;
                p.position.y += dt * p.velocity.y;
            }
            world.time += dt;
        }
    }

    pub mod diagnostics {
        use super::World;

        /// Kinetic energy, sampled every few steps.
        pub fn sample(world: &World, energies: &mut Vec<f64>) {
            energies.push(world.kinetic_energy());
        }
    }

    /// The recursive entrypoint: everything it reaches in this module records.
    #[profile(recursive)]
    pub fn run(particles: usize, steps: usize) -> Vec<f64> {
        let mut world = World::new(particles);
        let integrator = Euler;
        println!(
            "{} particles, {steps} steps, {}",
            particles,
            integrator.describe()
        );
        let mut energies = Vec::new();
        for step in 0..steps {
            integrator.advance(&mut world, 1e-3);
            if step % 10 == 0 {
                diagnostics::sample(&world, &mut energies);
            }
        }
        energies
    }
}

fn main() -> Result<(), sp::Error> {
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("simulation.h5"));
    // The SCOPE_PROFILER_* variables apply (`SCOPE_PROFILER_SAMPLE_HZ=1000`
    // samples inside the regions); the path given here wins.
    let run = sp::setup(Options::from_env()?.file_path(&path))?;

    // Outside the entrypoint: traced functions record nothing.
    let probe = simulation::World::new(4);
    assert_eq!(probe.kinetic_energy(), 0.0);

    // The steps (a second argument): a few thousand give a sampled run
    // enough time for its samples.
    let steps = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let energies = simulation::run(64, steps);
    println!(
        "kinetic energy: {:.6} -> {:.6}",
        energies[0],
        energies[energies.len() - 1]
    );

    // Finalizing writes the file and prints the summary.
    run.finalize()?;
    println!("wrote {}", path.display());
    Ok(())
}
