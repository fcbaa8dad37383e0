//! A library that knows nothing of scope-profiler: `tracing` spans only.

/// Database-like calls, instrumented with `#[instrument]`.
pub mod db {
    /// Runs `n` queries, each a span `tracing_fixture_dep::db::query`
    /// inside `tracing_fixture_dep::db::transaction`.
    #[tracing::instrument]
    pub fn transaction(n: u32) -> u32 {
        (0..n).map(query).sum()
    }

    /// One query.
    #[tracing::instrument(level = "debug")]
    pub fn query(i: u32) -> u32 {
        tracing::info!(i, "query ran");
        i * 2
    }
}
