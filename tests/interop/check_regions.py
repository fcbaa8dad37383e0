"""Open a file written by examples/regions.rs (HDF5, or the JSON profile for a
.json name) with the Python package's own reader (`load`, which tells the
format by the contents) and CLI (scope-profiler 0.7.5) and check what they
read.

Usage: python check_regions.py FILE
Exit 0 when every check passes; otherwise prints what failed and exits 1.
"""

import subprocess
import sys
import tempfile

import scope_profiler

EXPECTED_CALLS = {
    "solver": 1,
    "solve": 2,
    "regions::pipeline::run_pipeline": 1,
    "rhs_evaluation": 1,
    "state_update": 1,
    "compute": 4,
    "outer": 1,
    "inner": 1,
    "worker": 200,
    "worker_step": 200,
    "handler": 1,
    "parse": 2,
    "mylib.solve": 5,
    "io.load": 5,
    "sampled_step": 3,
}


def main(path):
    failures = []
    results = scope_profiler.load(path)
    names = list(results.region_names)
    if names != list(EXPECTED_CALLS):
        failures.append(f"region names {names} != {list(EXPECTED_CALLS)}")
    for name, calls in EXPECTED_CALLS.items():
        if name in names and results[name].num_calls != calls:
            failures.append(f"{name}: {results[name].num_calls} calls, expected {calls}")

    if "io.load" in names:
        load = results["io.load"].regions[0]
        statuses = [m.get("status") for m in load.event_metadata]
        if statuses != ["ok", "ok", "ok", "error", "ok"]:
            failures.append(f"io.load statuses {statuses}")
        steps = [m.get("step") for m in results["mylib.solve"].regions[0].event_metadata]
        if steps != [0, 1, 2, 3, 4]:
            failures.append(f"mylib.solve steps {steps}")
        if tuple(results["mylib.solve"].tags) != ("mylib",):
            failures.append(f"mylib.solve tags {results['mylib.solve'].tags}")

    graph = {node["call_id"]: node for node in results.call_graph(0)}
    def parents_of(name):
        return {graph[n["parent_id"]]["name"] if n["parent_id"] is not None else None
                for n in graph.values() if n["name"] == name}
    for child, parent in [
        ("inner", "outer"),
        ("worker_step", "worker"),
        ("regions::pipeline::run_pipeline", "solve"),
        ("parse", "handler"),
    ]:
        if parents_of(child) != {parent}:
            failures.append(f"parent of {child}: {parents_of(child)}, expected {{{parent!r}}}")
    for root in ("outer", "handler"):
        if parents_of(root) != {None}:
            failures.append(f"{root} should be a root, parents: {parents_of(root)}")
    threads = results.threads.get(0, [])
    if len(threads) != 3:
        failures.append(f"expected 3 threads (main + 2 workers), got {threads}")

    with tempfile.TemporaryDirectory() as tmp:
        for command in (
            ["inspect", path],
            ["report", path, "-o", f"{tmp}/report.html"],
            ["export", "speedscope", path, "-o", f"{tmp}/speedscope"],
            ["export", "chrome-trace", path, "-o", f"{tmp}/chrome"],
            ["export", "prof", path, "-o", f"{tmp}/prof"],
            ["diff", path, path],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "scope_profiler", *command],
                capture_output=True, text=True,
            )
            status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
            print(f"scope-profiler {command[0]} {command[1]}: {status}")
            if done.returncode != 0:
                failures.append(f"scope-profiler {' '.join(command)}: {done.stderr.strip()[-500:]}")
            if command[0] == "inspect":
                # The async call's tree: `parse` under `handler`.
                lines = [l.strip(" │") for l in done.stdout.splitlines()]
                at = next((i for i, l in enumerate(lines) if l.startswith("handler")), None)
                below = lines[at + 1:at + 4] if at is not None else []
                if not any(l.startswith("└─ parse (2x)") for l in below):
                    failures.append(f"inspect shows no parse under handler: {below}")

    for f in failures:
        print("FAIL:", f)
    print(f"interop: {len(names)} regions, {sum(results[n].num_calls for n in names)} calls, "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
