//! What-if shapes: bench-side mimics of a change to the runtime's guard, to
//! measure what it would give before anyone changes the runtime. NOT the
//! runtime's code path, and labelled so in the report.
//!
//! Today `CallSite::enter` inlines the whole enabled path (TLS recorder,
//! `RefCell`, stack push, `rdtsc`) into the instrumented function, so its
//! prologue saves six registers even when nothing records, and the guard's
//! drop glue is an out-of-line function that does the same before testing
//! `seq != 0`. The mimic keeps only the "is a session active" test inline and
//! moves enter and exit out of line (`#[inline(never)]`): the disabled path
//! becomes a load, a branch, the call and a test.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use scope_profiler::__private::CallSite;
use scope_profiler::Guard;

use crate::common::work;

/// Mirrors "a session is active" (the runtime keeps its generation private).
pub static ACTIVE: AtomicU32 = AtomicU32::new(0);

static SITE: CallSite = CallSite::new("whatif_outlined", file!(), line!());

#[inline(never)]
fn enter_outlined(site: &'static CallSite) -> Guard {
    site.enter()
}

#[inline(never)]
fn exit_outlined(guard: &mut ManuallyDrop<Guard>) {
    // SAFETY: dropped once, here; the wrapper never touches it again.
    unsafe { ManuallyDrop::drop(guard) }
}

/// A guard whose drop tests `is_recording` inline and exits out of line.
struct Outlined(ManuallyDrop<Guard>);

impl Drop for Outlined {
    #[inline(always)]
    fn drop(&mut self) {
        if self.0.is_recording() {
            exit_outlined(&mut self.0);
        }
    }
}

/// The workload behind the out-of-line guard.
#[inline(never)]
pub fn outlined(x: u64) -> u64 {
    let _g = Outlined(ManuallyDrop::new(if ACTIVE.load(Relaxed) != 0 {
        enter_outlined(&SITE)
    } else {
        Guard::inert()
    }));
    work(x)
}
