"""Checks a merged profile through the Python package's reader: every Rust
call of the extensions has as parent the Python call that ran it, on the same
thread (and a Python callback made by Rust the Rust call that made it); and that the Rust and Python clocks agree (each ext_a.stamp call
starts within a microsecond of the perf_counter_ns readings around it).

Usage: check.py MERGED.h5 EXT_A.h5 STAMPS.json"""

import json
import sys

from scope_profiler import read_h5
from scope_profiler.call_stack import build_call_arrays

merged, ext_a_path, stamps_path = sys.argv[1:4]

results = read_h5(merged)
calls = build_call_arrays(results.get_regions(), 0)
names = [calls.names[r] for r in calls.region_index]
expected_parent = {
    "ext_a.kernel": ("python.step",),
    "ext_b.solve": ("python.step", "python.callback"),
    "ext_a.inner": ("ext_a.kernel",),
    "ext_a.stamp": ("python.clock",),
    "ext_a.map": ("python.step",),
    # A Python call made by Rust, under the Rust call that made it.
    "python.callback": ("ext_a.map",),
}
checked = {name: 0 for name in expected_parent}
lanes = set()
for i, name in enumerate(names):
    if name not in expected_parent:
        continue
    parent = calls.parent[i]
    assert parent >= 0, f"{name} (call {i}) has no parent"
    assert names[parent] in expected_parent[name], (
        f"{name} (call {i}) is under {names[parent]}, not {expected_parent[name]}"
    )
    assert calls.lane[i] == calls.lane[parent], f"{name} (call {i}) on another lane than its parent"
    checked[name] += 1
    if name != "ext_a.stamp":
        lanes.add(int(calls.lane[i]))
# 2 threads x 3 steps: 6 kernels (24 inner calls), 6 solves, 6 maps calling back
# twice each (12 callbacks, 12 more solves); 6 stamps on the main thread.
assert checked == {
    "ext_a.kernel": 6,
    "ext_b.solve": 18,
    "ext_a.inner": 24,
    "ext_a.stamp": 6,
    "ext_a.map": 6,
    "python.callback": 12,
}, checked
under_callback = sum(
    1 for i, n in enumerate(names) if n == "ext_b.solve" and names[calls.parent[i]] == "python.callback"
)
assert under_callback == 12, under_callback
assert len(lanes) == 2, f"the Rust calls ran on {len(lanes)} threads, not 2"

# The clocks: Python's perf_counter_ns (CLOCK_MONOTONIC on Linux) around each
# stamp() call, and the call's start as the Rust runtime recorded it.
stamps = sorted(json.load(open(stamps_path)))
ext_a = read_h5(ext_a_path)
starts = sorted(
    int(s)
    for region in ext_a.get_regions()
    if region.name == "ext_a.stamp"
    for s in region.regions[0].start_times_ns
)
assert len(starts) == len(stamps) == 6, (len(starts), len(stamps))
worst = 0
for start, (before, after) in zip(starts, stamps):
    off = max(before - start, start - after, 0)
    worst = max(worst, off)
    assert off <= 1000, f"a Rust start {start} lies {off} ns outside [{before}, {after}]"
print(f"check.py: {sum(checked.values())} calls under the parents expected (Rust under Python, Python callbacks under Rust) "
      f"on {len(lanes)} threads; Rust starts within {worst} ns of the perf_counter_ns window")
