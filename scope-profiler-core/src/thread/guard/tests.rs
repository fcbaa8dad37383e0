//! The recorder on this thread, with a session of this layer's own
//! making (no `setup`): nesting depths, out-of-order closes, a guard
//! of another session (issue 29, item 5).

use super::*;
use crate::lanemeta::MetaScope;
use crate::thread::test_support::{recorded, recorded_with_metadata};

fn shape(records: &[Record]) -> Vec<(u32, u32)> {
    records.iter().map(|r| (r.region, r.depth())).collect()
}

#[test]
fn nested_calls_are_stored_in_end_order_with_their_depth() {
    let records = recorded(|g| {
        let a = enter(0, g);
        {
            let _b = enter(1, g);
            let _c = enter(2, g);
        }
        drop(enter(3, g));
        drop(a);
    });
    assert_eq!(shape(&records), [(2, 2), (1, 1), (3, 1), (0, 0)]);
    let (c, b, a) = (&records[0], &records[1], &records[3]);
    assert!(a.start <= b.start && b.start <= c.start && c.end <= b.end && b.end <= a.end);
}

#[test]
fn a_guard_dropped_out_of_order_ends_the_calls_inside_it_at_once() {
    let records = recorded(|g| {
        let a = enter(0, g);
        let b = enter(1, g);
        let c = enter(2, g);
        drop(b); // ends c too, at the same instant
        drop(c); // already ended: nothing more
        drop(a);
    });
    assert_eq!(shape(&records), [(2, 2), (1, 1), (0, 0)]);
    assert_eq!(records[0].end, records[1].end, "c and b end together");
    assert!(records[1].end <= records[2].end);
}

#[test]
fn a_guard_of_another_session_records_nothing_here() {
    let records = recorded(|g| {
        let stale = enter(7, g.wrapping_add(1_000));
        assert!(!stale.is_recording(), "no such session");
        drop(enter(0, g));
        drop(stale);
    });
    assert_eq!(shape(&records), [(0, 0)]);
}

#[test]
fn an_ok_outcome_is_a_flag_of_the_record_or_else_an_entry_at_its_depth() {
    let (records, entries, _) = recorded_with_metadata(|g| {
        // The thread's first record has no chunk yet (the slow path): an
        // entry, as for a call that is not the innermost.
        enter(0, g).end_ok();
        let outer = enter(1, g);
        enter(2, g).end_ok(); // the innermost: the flag, nothing else
        let a = enter(3, g);
        let b = enter(4, g);
        a.end_ok(); // b still open: both end, a's outcome an entry
        drop(b); // already ended
        Guard::inert().end_ok(); // records nothing
        drop(outer);
    });
    assert_eq!(shape(&records), [(0, 0), (2, 1), (4, 2), (3, 1), (1, 0)]);
    let ok: Vec<bool> = records.iter().map(Record::ok).collect();
    assert_eq!(ok, [false, true, false, false, false]);
    let (first, a) = (records[0], records[3]);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(
        matches!(entries[0].scope, MetaScope::Call { depth: 0, at } if first.start <= at && at <= first.end),
        "{entries:?}"
    );
    match entries[1].scope {
        // a's own depth (not b's, the innermost), inside a, before its end
        MetaScope::Call { depth, at } => {
            assert_eq!(depth, 1);
            assert!(
                a.start <= at && at < a.end.max(a.start + 1),
                "{at} in {a:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    for e in &entries {
        assert_eq!(
            e.values.as_slice(),
            crate::lanemeta::ok_outcome().as_slice()
        );
    }
}

#[test]
fn without_the_tsc_calls_take_the_slow_paths_and_the_fallback_clock() {
    /// The TSC back as `init` chose it, if the test fails.
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            crate::clock::use_tsc_for_tests(true);
        }
    }
    let _restore = Restore;
    let mut lent = usize::MAX;
    let (mut before, mut after) = (0, 0);
    let records = recorded(|g| {
        crate::clock::use_tsc_for_tests(false);
        let a = enter(0, g); // attaches: the fast paths armed as the clock allows
        lent = super::super::HOT.with(|hot| hot.fast_stack.len());
        before = ticks();
        drop(enter(1, g));
        after = ticks();
        drop(a);
        // Back while the session's lock is held: no other test's session
        // starts without the TSC.
        crate::clock::use_tsc_for_tests(true);
    });
    if cfg!(all(target_arch = "x86_64", target_feature = "sse2")) {
        assert_eq!(lent, 0, "no stack for the fast paths without the TSC");
    }
    assert_eq!(shape(&records), [(1, 1), (0, 0)]);
    let (b, a) = (&records[0], &records[1]);
    assert!(a.start <= before && before <= b.start && b.start <= b.end);
    assert!(
        b.end <= after && after <= a.end,
        "the fallback clock's times"
    );
}
