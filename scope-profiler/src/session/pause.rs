//! Pausing and resuming recording, and sampling timesteps
//! ([`Sampler`], [`Step`]) on top of them.

#![forbid(unsafe_code)]

use super::{SESSION_REGION, deactivated};
use crate::active::{self, active_generation};
use crate::error::Error;
use crate::thread;

/// Pauses recording in the active session; see [`pause`](crate::pause).
pub(crate) fn pause() -> Result<(), Error> {
    let generation = active_generation();
    if generation == 0 {
        // A deactivated session records nothing anyway: pausing it is not
        // an error (code written for profiled runs works unchanged).
        return match deactivated() {
            Some(_) => Ok(()),
            None => Err(Error::NotActive),
        };
    }
    if active::is_paused() {
        return Ok(());
    }
    // The envelope spans the whole session, paused time included; any other
    // open call would be cut in two by the pause.
    let envelope = crate::registry::lookup(SESSION_REGION).and_then(|e| e.id_in(generation));
    let open = thread::open_calls(generation);
    let blocking = match open {
        (0, _) => None,
        (1, Some(bottom)) if Some(bottom) == envelope => None,
        (n, _) => Some(n),
    };
    if let Some(n) = blocking {
        return Err(Error::Usage(format!(
            "cannot pause while profiling scopes are active: {n} call(s) are open on this thread; \
             pause between regions, not inside one"
        )));
    }
    active::set_paused(generation, true);
    Ok(())
}

/// Resumes recording; see [`resume`](crate::resume).
pub(crate) fn resume() {
    let generation = active_generation();
    if generation != 0 {
        active::set_paused(generation, false);
    }
}

/// Chooses which timesteps of a loop are recorded; made by
/// [`sample_every`](crate::sample_every).
///
/// ```
/// use scope_profiler::{self as sp, Options};
/// sp::setup(Options::new().in_memory().verbose(false))?;
/// let sampler = sp::sample_every(2, 1)?;
/// assert!(!sampler.step(0)?); // before start
/// assert!(sampler.step(1)?);
/// assert!(!sampler.step(2)?);
/// assert!(sampler.step(3)?);
/// drop(sampler);
/// sp::finalize()?;
/// # Ok::<(), sp::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "the previous pause state is restored when the sampler is dropped"]
pub struct Sampler {
    every: u64,
    start: i64,
    /// The session and whether it was paused when the sampler was made.
    before: Option<(u32, bool)>,
}

impl Sampler {
    pub(crate) fn new(every: u64, start: i64) -> Result<Sampler, Error> {
        if every == 0 {
            return Err(Error::Usage(
                "sample_every: `every` must be at least 1".to_owned(),
            ));
        }
        let generation = active_generation();
        Ok(Sampler {
            every,
            start,
            before: (generation != 0).then(|| (generation, active::is_paused())),
        })
    }

    /// Whether `timestep` is one this sampler records.
    ///
    /// ```
    /// let s = scope_profiler::sample_every(5, 2).unwrap();
    /// assert!(s.selects(7) && !s.selects(8) && !s.selects(-3));
    /// ```
    pub fn selects(&self, timestep: i64) -> bool {
        timestep >= self.start && (timestep.abs_diff(self.start)).is_multiple_of(self.every)
    }

    /// Starts timestep `timestep`: resumes recording if it is selected,
    /// pauses it otherwise (an `Err`, as from [`pause`](crate::pause), when
    /// a region is open on this thread), and says whether it is recorded.
    /// The state holds until the next step or until the sampler is dropped.
    ///
    /// ```
    /// let s = scope_profiler::sample_every(3, 0).unwrap();
    /// assert!(s.step(3).unwrap()); // recorded (when a session is active)
    /// ```
    pub fn step(&self, timestep: i64) -> Result<bool, Error> {
        let sampled = self.selects(timestep);
        if active_generation() != 0 {
            if sampled {
                resume();
            } else {
                pause()?;
            }
        }
        Ok(sampled)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if let Some((generation, paused)) = self.before {
            active::set_paused(generation, paused);
        }
    }
}
