//! The layer end to end: spans read back from the in-memory profile with
//! exact counts, threads and parents.

mod common;

use std::sync::{Arc, Barrier};

use common::{EnterCounter, calls, expect, parent_counts, runtime};
use integration_tests::{calls_per_region, count_map, serial};
use scope_profiler::{self as sp, Options, Profile, profile};
use tracing::{Dispatch, Instrument};
use tracing_subscriber::prelude::*;
use tracing_subscriber::{EnvFilter, Layer};

fn in_memory() -> Options {
    Options::new().in_memory().verbose(false)
}

/// Runs `f` in a fresh in-memory session and returns its profile.
fn recorded(f: impl FnOnce()) -> Profile {
    let run = sp::setup(in_memory()).unwrap();
    f();
    let results = run.finalize().unwrap();
    results.profile().unwrap().clone()
}

#[tracing::instrument]
fn span_fn(n: u32) -> u32 {
    (0..n).map(leaf).sum()
}

#[profile]
fn leaf(i: u32) -> u32 {
    sp::region("inner").run(|| i + 1)
}

#[profile]
fn outer() -> u32 {
    span_fn(3) + span_fn(2)
}

#[test]
fn sync_spans_nest_exactly_with_profile_regions() {
    let _s = serial();
    let dispatch =
        Dispatch::new(tracing_subscriber::registry().with(scope_profiler_tracing::layer()));
    let p = tracing::dispatcher::with_default(&dispatch, || recorded(|| assert_eq!(outer(), 9)));
    assert_eq!(
        parent_counts(&p),
        expect(&[
            ("outer", None, 1),
            ("layer::span_fn", Some("outer"), 2),
            ("leaf", Some("layer::span_fn"), 5),
            ("inner", Some("leaf"), 5),
        ])
    );
    // The span's source location is the span's, not the layer's.
    let row = p
        .rows
        .iter()
        .find(|r| p.region_names[r.region_id as usize] == "layer::span_fn")
        .unwrap();
    assert!(row.source_file.ends_with("layer.rs"), "{}", row.source_file);
    assert_eq!(row.source_line, 27);
    // One thread, no task lane.
    assert!(p.events.task_ids.is_none());
    assert!(calls(&p).iter().all(|c| c.thread == p.events.thread_ids[0]));
}

#[test]
fn spans_of_a_dependency_are_named_by_their_target() {
    let _s = serial();
    let dispatch =
        Dispatch::new(tracing_subscriber::registry().with(scope_profiler_tracing::layer()));
    let p = tracing::dispatcher::with_default(&dispatch, || {
        recorded(|| assert_eq!(tracing_fixture_dep::db::transaction(3), 6))
    });
    assert_eq!(
        parent_counts(&p),
        expect(&[
            ("tracing_fixture_dep::db::transaction", None, 1),
            (
                "tracing_fixture_dep::db::query",
                Some("tracing_fixture_dep::db::transaction"),
                3
            ),
        ])
    );
    assert!(
        p.rows
            .iter()
            .all(|r| r.source_file.ends_with("fixture-dep/src/lib.rs"))
    );

    let plain = Dispatch::new(
        tracing_subscriber::registry().with(scope_profiler_tracing::layer().plain_names(true)),
    );
    let p = tracing::dispatcher::with_default(&plain, || {
        recorded(|| {
            tracing_fixture_dep::db::transaction(2);
        })
    });
    assert_eq!(
        parent_counts(&p),
        expect(&[("transaction", None, 1), ("query", Some("transaction"), 2)])
    );
}

#[test]
fn events_are_marks_only_when_asked() {
    let _s = serial();
    let dispatch =
        Dispatch::new(tracing_subscriber::registry().with(scope_profiler_tracing::layer()));
    let p = tracing::dispatcher::with_default(&dispatch, || {
        recorded(|| {
            tracing_fixture_dep::db::transaction(2);
        })
    });
    assert_eq!(p.events.len(), 3, "events ignored by default");

    let marks = Dispatch::new(
        tracing_subscriber::registry().with(scope_profiler_tracing::layer().events_as_marks(true)),
    );
    let p = tracing::dispatcher::with_default(&marks, || {
        recorded(|| {
            tracing_fixture_dep::db::transaction(2);
            tracing::warn!(target: "app", "outside any span");
        })
    });
    assert_eq!(
        parent_counts(&p),
        expect(&[
            ("tracing_fixture_dep::db::transaction", None, 1),
            (
                "tracing_fixture_dep::db::query",
                Some("tracing_fixture_dep::db::transaction"),
                2
            ),
            (
                "tracing_fixture_dep::db::event",
                Some("tracing_fixture_dep::db::query"),
                2
            ),
            ("app::event", None, 1),
        ])
    );
}

#[test]
fn a_per_layer_env_filter_decides_which_spans_are_regions() {
    let _s = serial();
    for (directives, expected) in [
        (
            "tracing_fixture_dep=debug",
            vec![
                ("tracing_fixture_dep::db::transaction", 1),
                ("tracing_fixture_dep::db::query", 3),
            ],
        ),
        (
            "tracing_fixture_dep=info",
            vec![("tracing_fixture_dep::db::transaction", 1)],
        ),
        ("some_other_crate=trace", vec![]),
    ] {
        // Another layer, unfiltered, still sees every span: the filter is
        // this layer's alone.
        let counter = EnterCounter::default();
        let dispatch = Dispatch::new(
            tracing_subscriber::registry()
                .with(scope_profiler_tracing::layer().with_filter(EnvFilter::new(directives)))
                .with(counter.clone()),
        );
        let p = tracing::dispatcher::with_default(&dispatch, || {
            recorded(|| {
                tracing_fixture_dep::db::transaction(3);
            })
        });
        assert_eq!(calls_per_region(&p), count_map(&expected), "{directives}");
        assert_eq!((counter.get("transaction"), counter.get("query")), (1, 3));
    }
}

#[test]
fn no_session_records_nothing_and_a_new_session_resolves_again() {
    let _s = serial();
    let dispatch =
        Dispatch::new(tracing_subscriber::registry().with(scope_profiler_tracing::layer()));
    tracing::dispatcher::with_default(&dispatch, || {
        // No session: nothing, and no error.
        tracing_fixture_dep::db::transaction(2);
        assert!(sp::get_all_regions().is_empty() || !sp::is_active());
        let first = recorded(|| {
            tracing_fixture_dep::db::transaction(2);
        });
        assert_eq!(first.events.len(), 3);
        // Between sessions: nothing.
        tracing_fixture_dep::db::transaction(5);
        // A span entered during one session and exited after it: not
        // recorded, and the next session is unaffected.
        let open = tracing::info_span!("straddles").entered();
        let run = sp::setup(in_memory()).unwrap();
        // The regions cached per callsite belong to the first session:
        // they are resolved again in this one.
        tracing_fixture_dep::db::transaction(1);
        drop(open);
        let results = run.finalize().unwrap();
        let second = results.profile().unwrap();
        assert_eq!(
            calls_per_region(second),
            count_map(&[
                ("tracing_fixture_dep::db::transaction", 1),
                ("tracing_fixture_dep::db::query", 1),
            ])
        );
    });
}

#[test]
fn a_span_entered_on_two_threads() {
    let _s = serial();
    for lifetime in [false, true] {
        let layer = if lifetime {
            scope_profiler_tracing::layer().span_lifetime()
        } else {
            scope_profiler_tracing::layer()
        };
        let dispatch = Dispatch::new(tracing_subscriber::registry().with(layer));
        let p = tracing::dispatcher::with_default(&dispatch, || {
            recorded(|| {
                let span = tracing::info_span!(target: "app", "moving");
                span.in_scope(|| sp::region("here").run(|| ()));
                let moved = span.clone();
                let d = dispatch.clone();
                std::thread::spawn(move || {
                    tracing::dispatcher::with_default(&d, || {
                        moved.in_scope(|| sp::region("there").run(|| ()))
                    })
                })
                .join()
                .unwrap();
                drop(span);
            })
        });
        let all = calls(&p);
        let moving: Vec<_> = all.iter().filter(|c| c.name == "app::moving").collect();
        if lifetime {
            // One call from first enter to close, on a task lane.
            assert_eq!(moving.len(), 1);
            assert_eq!(moving[0].task, 0);
            assert_eq!(p.tasks.len(), 1);
            assert_eq!(p.tasks[0].steps, 2);
            assert_eq!(
                parent_counts(&p),
                expect(&[
                    ("app::moving", None, 1),
                    ("here", None, 1),
                    ("there", None, 1)
                ])
            );
        } else {
            // One call per enter, on the thread where it ran.
            assert_eq!(moving.len(), 2);
            assert_ne!(moving[0].thread, moving[1].thread);
            assert!(p.tasks.is_empty());
            assert_eq!(
                parent_counts(&p),
                expect(&[
                    ("app::moving", None, 2),
                    ("here", Some("app::moving"), 1),
                    ("there", Some("app::moving"), 1),
                ])
            );
        }
    }
}

#[profile]
fn on_worker() {
    std::hint::black_box(0);
}

/// A multi-threaded tokio runtime: spans of async tasks entered on every
/// poll, on two workers at once (a barrier holds both), with a
/// `#[profile]` call inside each poll.
#[test]
fn tokio_multi_thread_runtime_both_modes() {
    let _s = serial();
    const TASKS: usize = 8;
    for lifetime in [false, true] {
        let layer = if lifetime {
            scope_profiler_tracing::layer().span_lifetime()
        } else {
            scope_profiler_tracing::layer()
        };
        let counter = EnterCounter::default();
        let dispatch = Dispatch::new(
            tracing_subscriber::registry()
                .with(layer)
                .with(counter.clone()),
        );
        let rt = runtime(2, &dispatch);
        let _default = tracing::dispatcher::set_default(&dispatch);
        let p = recorded(|| {
            let barrier = Arc::new(Barrier::new(2));
            let handles: Vec<_> = (0..TASKS)
                .map(|i| {
                    let barrier = barrier.clone();
                    rt.spawn(
                        async move {
                            on_worker();
                            if i < 2 {
                                // The first two tasks meet: two workers at once.
                                barrier.wait();
                            }
                            tokio::task::yield_now().await;
                            on_worker();
                            tokio::task::yield_now().await;
                            on_worker();
                        }
                        .instrument(tracing::info_span!(target: "app", "task", i)),
                    )
                })
                .collect();
            rt.block_on(async {
                for h in handles {
                    h.await.unwrap();
                }
            });
        });
        drop(rt);
        let enters = counter.get("task");
        // Three polls each, and tracing enters the span to drop the future.
        assert!(enters >= 3 * TASKS as u64, "{enters}");
        let all = calls(&p);
        let tasks: Vec<_> = all.iter().filter(|c| c.name == "app::task").collect();
        let workers: std::collections::BTreeSet<i64> = all
            .iter()
            .filter(|c| c.name == "on_worker")
            .map(|c| c.thread)
            .collect();
        assert_eq!(workers.len(), 2, "two workers ran tasks");
        if lifetime {
            assert_eq!(tasks.len(), TASKS);
            assert_eq!(p.tasks.len(), TASKS);
            assert_eq!(p.tasks.iter().map(|t| t.steps as u64).sum::<u64>(), enters);
            assert_eq!(
                parent_counts(&p),
                expect(&[
                    ("app::task", None, TASKS as u64),
                    ("on_worker", None, 3 * TASKS as u64)
                ])
            );
        } else {
            assert_eq!(tasks.len() as u64, enters, "one call per enter");
            assert!(p.tasks.is_empty());
            let threads: std::collections::BTreeSet<i64> = tasks.iter().map(|c| c.thread).collect();
            assert_eq!(threads.len(), 2, "spans recorded on both workers");
            assert_eq!(
                parent_counts(&p),
                expect(&[
                    ("app::task", None, enters),
                    ("on_worker", Some("app::task"), 3 * TASKS as u64),
                ])
            );
        }
    }
}

#[test]
fn span_fields_go_into_the_metadata_of_each_call() {
    use scope_profiler::Value;
    let _s = serial();
    let layer = scope_profiler_tracing::layer().record_fields(true);
    let dispatch = Dispatch::new(tracing_subscriber::registry().with(layer));
    let p = tracing::dispatcher::with_default(&dispatch, || {
        recorded(|| {
            let span = tracing::info_span!(target: "app", "query", table = "users", rows = tracing::field::Empty);
            span.in_scope(|| sp::region("inside").run(|| ()));
            span.record("rows", 3u64);
            span.in_scope(|| ());
            tracing::info_span!(target: "app", "plain").in_scope(|| ());
            tracing::info_span!(target: "app", "typed", ok = true, ratio = 0.5, n = -2i64, dbg = ?[1, 2])
                .in_scope(|| ());
        })
    });
    let row = |name: &str| {
        let i = p.region_names.iter().position(|n| n == name).unwrap();
        &p.rows[i]
    };
    let s = |k: &str, v: Value| (k.to_owned(), v);
    assert_eq!(
        row("app::query").event_metadata,
        [
            vec![s("table", Value::from("users"))],
            vec![s("table", Value::from("users")), s("rows", Value::Int(3))],
        ]
    );
    // Only the span's own call carries its fields.
    assert!(row("inside").event_metadata.is_empty());
    assert!(row("app::plain").event_metadata.is_empty());
    assert_eq!(
        row("app::typed").event_metadata,
        [vec![
            s("ok", Value::Bool(true)),
            s("ratio", Value::Float(0.5)),
            s("n", Value::Int(-2)),
            s("dbg", Value::from("[1, 2]")),
        ]]
    );
    // Off by default.
    let plain = Dispatch::new(tracing_subscriber::registry().with(scope_profiler_tracing::layer()));
    let p = tracing::dispatcher::with_default(&plain, || {
        recorded(|| tracing::info_span!(target: "app", "query", table = "users").in_scope(|| ()))
    });
    assert!(p.rows[0].event_metadata.is_empty());
}

/// Enters a span of each of 80 callsites `times` times, interleaved.
fn many_callsites(times: u32) {
    macro_rules! spans {
        ($($name:ident)*) => {
            for _ in 0..times {
                $( tracing::info_span!(stringify!($name)).in_scope(|| ()); )*
            }
        };
    }
    spans!(
        c00 c01 c02 c03 c04 c05 c06 c07 c08 c09 c10 c11 c12 c13 c14 c15 c16 c17 c18 c19
        c20 c21 c22 c23 c24 c25 c26 c27 c28 c29 c30 c31 c32 c33 c34 c35 c36 c37 c38 c39
        c40 c41 c42 c43 c44 c45 c46 c47 c48 c49 c50 c51 c52 c53 c54 c55 c56 c57 c58 c59
        c60 c61 c62 c63 c64 c65 c66 c67 c68 c69 c70 c71 c72 c73 c74 c75 c76 c77 c78 c79
    );
}

#[test]
fn many_callsites_each_record_into_their_own_region_in_every_session() {
    let _s = serial();
    let dispatch =
        Dispatch::new(tracing_subscriber::registry().with(scope_profiler_tracing::layer()));
    let want = |times: u64| -> std::collections::BTreeMap<String, u64> {
        (0..80)
            .map(|i| (format!("layer::c{i:02}"), times))
            .collect()
    };
    tracing::dispatcher::with_default(&dispatch, || {
        let first = recorded(|| many_callsites(3));
        assert_eq!(calls_per_region(&first), want(3));
        // A new session: every region the layer resolved is of the last
        // one, and is resolved again.
        let second = recorded(|| many_callsites(2));
        assert_eq!(calls_per_region(&second), want(2));
    });
}
