//! A small tokio program instrumented with `tracing` only, profiled by
//! scope-profiler through its `tracing` layer, next to one `#[profile]`
//! function of our own.
//!
//! ```sh
//! cargo run -p scope-profiler-tracing --example tracing -- tracing.h5
//! scope-prof inspect tracing.h5      # or: scope-profiler inspect tracing.h5
//! ```

use scope_profiler::{Options, profile};
use tracing::Instrument;
use tracing_subscriber::prelude::*;

mod db {
    /// One span `tracing::db::query` per enter (each poll), on the worker
    /// thread that polled it.
    #[tracing::instrument]
    pub async fn query(id: u64) -> u64 {
        tokio::task::yield_now().await; // a second poll, maybe on another worker
        super::checksum(id)
    }
}

/// Our own region, nested in the span that calls it.
#[profile]
fn checksum(id: u64) -> u64 {
    (0..1000u64).fold(id, |acc, x| acc.wrapping_mul(31).wrapping_add(x))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tracing.h5".into());
    let _session = scope_profiler::session(Options::new().file_path(&path))?;
    tracing_subscriber::registry()
        .with(scope_profiler_tracing::layer())
        .init();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()?;
    let total = runtime.block_on(
        async {
            let tasks: Vec<_> = (0..8).map(|id| tokio::spawn(db::query(id))).collect();
            let mut total = 0u64;
            for task in tasks {
                total = total.wrapping_add(task.await?);
            }
            Ok::<u64, tokio::task::JoinError>(total)
        }
        .instrument(tracing::info_span!("requests")),
    )?;
    println!("checksum {total}, profile in {path}");
    Ok(())
}
