"""Open a file written by tests/parity.rs (tags, opt-in tags, per-call
metadata, outcomes, sampling, the session envelope, source text) with the
Python package's own reader and CLI (scope-profiler 0.7.5), and check what
they read, exactly.

Usage: python check_features.py FILE
"""

import subprocess
import sys

import scope_profiler

EXPECTED_CALLS = {
    "scope_profiler.session": 1,
    "mylib.solve": 5,
    "io.load": 5,
    "crashy": 2,
    "sampled": 3,
}


def main(path):
    failures = []
    results = scope_profiler.read_h5(path)
    names = list(results.region_names)
    if names != list(EXPECTED_CALLS):
        failures.append(f"region names {names} != {list(EXPECTED_CALLS)}")
    for name, calls in EXPECTED_CALLS.items():
        if name in names and results[name].num_calls != calls:
            failures.append(f"{name}: {results[name].num_calls} calls, expected {calls}")

    def region(name):
        return results[name].regions[0]

    if tuple(results["io.load"].tags) != ("io",):
        failures.append(f"io.load tags {results['io.load'].tags}")
    import h5py, json
    with h5py.File(path) as f:
        index = f["rank_region_index"]
        stored_tags = [json.loads(t) for t in index["tags"].asstr()[()]]
        stored_meta = [json.loads(m) for m in index["event_metadata"].asstr()[()]]
        sources = list(index["source_texts"].asstr()[()])
    if stored_tags != [[], ["mylib"], ["io"], [], []]:
        failures.append(f"tags column {stored_tags}")
    steps = [{"step": i, "phase": "predictor"} for i in range(5)]
    if region("mylib.solve").event_metadata != tuple(steps):
        failures.append(f"mylib.solve metadata {region('mylib.solve').event_metadata}")
    load = [dict(s, status="ok") for s in steps]
    load[3] = dict(steps[3], status="error", exception="core::fmt::Error")
    if list(region("io.load").event_metadata) != load:
        failures.append(f"io.load metadata {region('io.load').event_metadata}")
    if list(region("crashy").event_metadata) != [{"status": "ok"}, {"status": "panic"}]:
        failures.append(f"crashy metadata {region('crashy').event_metadata}")
    if any(region("sampled").event_metadata):
        failures.append(f"sampled has metadata {region('sampled').event_metadata}")
    statuses = [m.get("status") for m in stored_meta[2]]
    if statuses.count("ok") != 4 or statuses.count("error") != 1:
        failures.append(f"io.load statuses {statuses}")
    if "fn solve" not in sources[1] or sources[0] != "":
        failures.append(f"source texts {sources}")

    inspect = subprocess.run(
        [sys.executable, "-m", "scope_profiler", "inspect", path],
        capture_output=True, text=True)
    if inspect.returncode != 0:
        failures.append(f"inspect failed: {inspect.stderr}")
    else:
        row = next((l for l in inspect.stdout.splitlines() if "mylib.solve" in l), "")
        # The "% session" column is numeric once the envelope exists.
        if not any(c.replace(".", "", 1).rstrip("%").isdigit() and "." in c for c in row.split()):
            failures.append(f"inspect row without a % session value: {row!r}")
        print(inspect.stdout)
    source = subprocess.run(
        [sys.executable, "-m", "scope_profiler", "inspect", path, "--source", "io.load"],
        capture_output=True, text=True)
    if source.returncode != 0 or "record_outcome" not in source.stdout:
        failures.append(f"inspect --source io.load: {source.stdout} {source.stderr}")
    else:
        print(source.stdout)

    for failure in failures:
        print("FAIL:", failure)
    print(f"features: {len(names)} regions, {sum(EXPECTED_CALLS.values())} calls, "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
