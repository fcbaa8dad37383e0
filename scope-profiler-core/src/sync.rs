//! Process-level synchronization: locking that survives a panicking
//! thread, and the fork epoch that tells inherited state from our own.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, going on with the data if a panicking thread poisoned it:
/// every critical section in this crate leaves its data consistent.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The lifecycle lock: `setup`, `checkpoint` and `finalize` run under it,
/// one at a time in the process.
static LIFECYCLE: Mutex<()> = Mutex::new(());

/// Proof that this thread holds the lifecycle lock (the lock is released
/// when it is dropped). MPI calls on the profiler's communicator need one
/// (`comm::Comm::serialized`), so no two threads make them at once.
pub struct Lifecycle(#[allow(dead_code)] MutexGuard<'static, ()>);

/// Takes the lifecycle lock, waiting for the thread that holds it.
pub fn lifecycle() -> Lifecycle {
    Lifecycle(lock(&LIFECYCLE))
}

/// How many times this process is a `fork()` child of a process that used
/// the crate (0 in the original process).
static FORK_EPOCH: AtomicU32 = AtomicU32::new(0);

/// The current fork epoch: state made under another epoch was inherited
/// from a parent process and has no threads behind it here.
pub fn fork_epoch() -> u32 {
    FORK_EPOCH.load(Ordering::Relaxed)
}

/// Called in a `fork()` child (async-signal-safe: one atomic add).
pub fn note_fork() {
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
}
