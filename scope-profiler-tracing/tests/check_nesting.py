"""Read a file with the Python package's reader (scope-profiler 0.7.5) and
print one line per call: hex(name) hex(parent name or "-"), then run
`scope-profiler inspect` on it. Exit 1 if the reader or inspect fails."""

import subprocess
import sys

import scope_profiler

path = sys.argv[1]
results = scope_profiler.read_h5(path)
graph = {node["call_id"]: node for node in results.call_graph(0)}
for node in graph.values():
    parent = node["parent_id"]
    parent_name = graph[parent]["name"] if parent is not None else None
    print(node["name"].encode().hex(), parent_name.encode().hex() if parent_name else "-")
done = subprocess.run([sys.executable, "-m", "scope_profiler", "inspect", path],
                      capture_output=True, text=True)
if done.returncode != 0:
    print("inspect failed:", done.stderr[-500:], file=sys.stderr)
    sys.exit(1)
