//! Async fns that return a future on purpose (a boxed future, a handle to
//! await later): clippy does not check an `async fn`'s body for
//! `async_yields_async`, but the block the instrumented body becomes would
//! make it fire.

use std::future::Future;
use std::pin::Pin;

/// A future to await later.
pub type Later = Pin<Box<dyn Future<Output = u32> + Send>>;

/// Makes the future that `later` will await.
#[scope_profiler::profile]
pub async fn deferred(n: u32) -> Later {
    Box::pin(async move { n + 1 })
}

scope_profiler::profile_all_items! {
    always;

    /// The same, instrumented with its module.
    pub async fn deferred_in_module(n: u32) -> Later {
        Box::pin(async move { n * 2 })
    }
}
