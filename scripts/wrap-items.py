#!/usr/bin/env python3
"""Wraps each given Rust module file's items in
`scope_profiler::profile_all_items! { always; ... }`, as a user instruments a
file module on stable Rust (scripts/real-crate-test.sh,
scripts/real-async-crate-test.sh). `--arguments "always, macro_rules"` as the
first two arguments gives the macro other arguments than `always`.

What must stay outside the macro stays before it: the file's inner
attributes (`#![...]`, over several lines too), `//!` docs and the plain
comments and blank lines among them. Outer docs (`///`) and outer attributes
(`#[...]`) belong to the first item and stay with it inside the macro: left
before it, rustc would report them as doc comments and attributes on
nothing ("unused doc comment").
"""
import sys


def is_outer_doc(line):
    # `///` is an outer doc comment; `////` and longer are plain comments.
    return line.startswith("///") and not line.startswith("////")


def split_head(lines):
    """The file's head (inner attributes, `//!` docs, plain comments, blank
    lines) and the rest, which starts with the first item or its outer docs
    and attributes."""
    i, depth = 0, 0
    while i < len(lines):
        line = lines[i].strip()
        if depth > 0 or line.startswith("#!["):
            depth += line.count("[") - line.count("]")
        elif is_outer_doc(line):
            break
        elif not (line == "" or line.startswith("//")):
            break
        i += 1
    return lines[:i], lines[i:]


def wrap(path, arguments):
    with open(path) as f:
        head, body = split_head(f.read().splitlines(keepends=True))
    with open(path, "w") as f:
        f.writelines(head)
        f.write("scope_profiler::profile_all_items! {\n%s;\n" % arguments)
        f.writelines(body)
        f.write("}\n")


def self_test():
    """The splitting on a file whose first item has docs and attributes."""
    text = [
        "#![allow(\n", "    dead_code\n", ")]\n", "//! Inner docs.\n",
        "// A comment.\n", "\n", "/// Outer docs.\n", "#[derive(Debug)]\n",
        "pub struct A;\n",
    ]
    head, body = split_head(text)
    assert head == text[:6], head
    assert body == text[6:], body
    head, body = split_head(["//! Docs.\n", "//// Plain.\n", "use x;\n"])
    assert body == ["use x;\n"], body


if __name__ == "__main__":
    self_test()
    paths, arguments = sys.argv[1:], "always"
    if paths[:1] == ["--arguments"]:
        arguments, paths = paths[1], paths[2:]
    for path in paths:
        wrap(path, arguments)
