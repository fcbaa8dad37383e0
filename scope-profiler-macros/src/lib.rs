//! Attribute macros of scope-profiler (placeholder until the macro issue).
