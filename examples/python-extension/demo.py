"""A Python program that profiles itself with the Python package and calls two
Rust extension modules, each recording into a session of its own, from two
threads inside Python regions, and once more from the main thread between two
perf_counter_ns() readings. Writes python.h5, ext_a.h5, ext_b.h5 and
stamps.json (perf_counter_ns around each ext_a.stamp() call) in the working
directory."""

import json
import threading
import time

import scope_profiler as sp

import ext_a
import ext_b

sp.setup(file_path="python.h5", track_threads=True)
ext_a.scope_profiler_start("ext_a.h5")
ext_b.scope_profiler_start("ext_b.h5")

stamps = []


def callback():
    with sp.region("python.callback"):
        ext_b.solve(10)


def work(worker):
    for step in range(3):
        with sp.region("python.step"):
            ext_a.kernel(2000 + worker)
            ext_b.solve(500)
            # Rust calling back into Python, which calls Rust again.
            ext_a.map(callback, 2)


threads = [threading.Thread(target=work, args=(w,), name=f"worker-{w}") for w in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()

# The clocks, on the main thread alone (no other thread to switch to between
# the readings): Python's perf_counter_ns right before and after a Rust call.
for _ in range(6):
    with sp.region("python.clock"):
        before = time.perf_counter_ns()
        ext_a.stamp()
        after = time.perf_counter_ns()
        stamps.append((before, after))

print("ext_a wrote", ext_a.scope_profiler_finish())
print("ext_b wrote", ext_b.scope_profiler_finish())
sp.finalize()
with open("stamps.json", "w") as f:
    json.dump(stamps, f)
