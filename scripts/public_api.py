#!/usr/bin/env python3
"""The public API of the `scope_profiler` crate as one sorted line per item.

Reads the rustdoc JSON of `scope-profiler` and of the crates whose items it
re-exports (`scope-profiler-core`, `scope-profiler-hdf5`, built with hidden
items, since their modules are `#[doc(hidden)]`), follows every re-export,
and prints each public item: modules, types, fields, variants, functions,
inherent methods, trait implementations, macros and constants, with
signatures. `scripts/check-public-api.sh` builds the JSON and compares the
listing with `api/scope-profiler.txt`, so that a change to the surface is a
visible diff; `--counts` prints the totals issue 38 bounds.

The reader's crate, `scope_profiler_reader`, has a snapshot of its own
(`--root scope_profiler_reader`, compared with
`scope-profiler-reader/public-api.txt`).

`--missing-examples` lists the items (types, functions, methods, macros,
constants) whose docs hold no example.

Usage: public_api.py DOC_DIR [--counts | --missing-examples] [--root CRATE]
"""

import json
import os
import sys

HIDDEN = "hidden"


def load(doc_dir, name):
    with open(os.path.join(doc_dir, name + ".json")) as f:
        return json.load(f)


class Crate:
    def __init__(self, data):
        self.data = data
        self.index = data["index"]
        self.paths = data["paths"]
        self.by_path = {}
        for id_, p in self.paths.items():
            if p["crate_id"] == 0:
                self.by_path[tuple(p["path"])] = id_

    def item(self, id_):
        return self.index.get(str(id_))


def is_hidden(item):
    for a in item.get("attrs", []):
        text = json.dumps(a)
        if "doc" in text and HIDDEN in text:
            return True
    return False


class Api:
    def __init__(self, crates, root_name):
        self.crates = crates  # name -> Crate
        self.root = crates[root_name]
        self.lines = set()
        self.counts = {"types": 0, "functions": 0, "methods": 0, "fields": 0,
                       "modules": 0, "macros": 0, "constants": 0}
        self.seen = set()
        # Items (types, functions, methods, macros, constants) whose docs
        # hold no example (no ``` block): issue 38 wants one for each.
        self.no_example = set()

    def example(self, item, path):
        if "```" not in (item.get("docs") or ""):
            self.no_example.add(path)

    # -- resolving ids across crates --------------------------------------
    def resolve(self, crate, id_):
        """(crate, item) for an id of `crate`, following it into the crate
        that defines it when it is external."""
        if id_ is None:
            return None, None
        it = crate.item(id_)
        if it is not None and it.get("crate_id", 0) == 0:
            return crate, it
        p = crate.paths.get(str(id_))
        if p is None:
            return None, None
        ext = crate.data["external_crates"].get(str(p["crate_id"]))
        if ext is None:
            return None, None
        target = self.crates.get(ext["name"])
        if target is None:
            return None, None
        tid = target.by_path.get(tuple(p["path"]))
        if tid is None:
            return None, None
        return target, target.item(tid)

    # -- rendering types ----------------------------------------------------
    def ty(self, t):
        if t is None:
            return "()"
        if isinstance(t, str):
            return t
        (k, v), = t.items()
        if k == "resolved_path":
            name = v["path"].split("::")[-1]
            return name + self.args(v.get("args"))
        if k == "primitive":
            return v
        if k == "generic":
            return v
        if k == "borrowed_ref":
            lt = (v["lifetime"] + " ") if v.get("lifetime") else ""
            mut = "mut " if v["is_mutable"] else ""
            return "&" + lt + mut + self.ty(v["type"])
        if k == "raw_pointer":
            return ("*mut " if v["is_mutable"] else "*const ") + self.ty(v["type"])
        if k == "slice":
            return "[" + self.ty(v) + "]"
        if k == "array":
            return "[" + self.ty(v["type"]) + "; " + str(v["len"]) + "]"
        if k == "tuple":
            return "(" + ", ".join(self.ty(x) for x in v) + ")"
        if k == "impl_trait":
            return "impl " + " + ".join(self.bound(b) for b in v)
        if k == "dyn_trait":
            return "dyn " + " + ".join(
                self.ty({"resolved_path": tr["trait"]}) for tr in v["traits"])
        if k == "qualified_path":
            return self.ty(v["self_type"]) + "::" + v["name"]
        if k == "function_pointer":
            return "fn(..)"
        return k

    def args(self, a):
        if not a:
            return ""
        if "angle_bracketed" in a:
            parts = []
            for x in a["angle_bracketed"]["args"]:
                if isinstance(x, dict) and "type" in x:
                    parts.append(self.ty(x["type"]))
                elif isinstance(x, dict) and "lifetime" in x:
                    parts.append(x["lifetime"])
                elif isinstance(x, dict) and "const" in x:
                    parts.append(str(x["const"].get("expr", "_")))
                else:
                    parts.append(str(x))
            for c in a["angle_bracketed"].get("constraints", []):
                b = c.get("binding", {})
                if "equality" in b:
                    parts.append(c["name"] + " = " + self.ty(b["equality"].get("type")))
                else:
                    parts.append(c["name"])
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in a:
            p = a["parenthesized"]
            out = "(" + ", ".join(self.ty(x) for x in p["inputs"]) + ")"
            if p.get("output"):
                out += " -> " + self.ty(p["output"])
            return out
        return ""

    def bound(self, b):
        if "trait_bound" in b:
            return self.ty({"resolved_path": b["trait_bound"]["trait"]})
        if "outlives" in b:
            return b["outlives"]
        return "?"

    def generics(self, g):
        ps = []
        for p in g.get("params", []):
            kind = p["kind"]
            if "lifetime" in kind:
                ps.append(p["name"])
            elif "type" in kind:
                if kind["type"].get("is_synthetic"):
                    continue
                bounds = kind["type"].get("bounds", [])
                ps.append(p["name"] + (": " + " + ".join(self.bound(b) for b in bounds)
                                       if bounds else ""))
            elif "const" in kind:
                ps.append("const " + p["name"] + ": " + self.ty(kind["const"]["type"]))
        return "<" + ", ".join(ps) + ">" if ps else ""

    def sig(self, f):
        s = f["sig"]
        ins = []
        for name, t in s["inputs"]:
            if name == "self":
                ins.append(self.ty(t).replace("Self", "self") if t != {"generic": "Self"}
                           else "self")
            else:
                ins.append(name + ": " + self.ty(t))
        out = ""
        if s.get("output") is not None:
            out = " -> " + self.ty(s["output"])
        head = f.get("header", {})
        pre = ("const " if head.get("is_const") else "") + \
              ("async " if head.get("is_async") else "") + \
              ("unsafe " if head.get("is_unsafe") else "")
        return pre, self.generics(f.get("generics", {})) + "(" + ", ".join(ins) + ")" + out

    # -- walking ------------------------------------------------------------
    def walk_module(self, crate, item, path):
        self.lines.add("pub mod " + path)
        self.counts["modules"] += 1
        for cid in item["inner"]["module"]["items"]:
            child = crate.item(cid)
            if child is None or child.get("visibility") != "public" or is_hidden(child):
                continue
            self.walk(crate, child, path)

    def walk(self, crate, item, parent):
        (kind, inner), = item["inner"].items()
        name = item.get("name")
        if kind == "use":
            if inner["is_glob"]:
                c2, target = self.resolve(crate, inner["id"])
                if target is not None and "module" in target["inner"]:
                    for cid in target["inner"]["module"]["items"]:
                        ch = c2.item(cid)
                        if ch and ch.get("visibility") == "public" and not is_hidden(ch):
                            self.walk(c2, ch, parent)
                else:
                    self.lines.add("pub use " + parent + "::" + inner["source"] + "::*")
                return
            c2, target = self.resolve(crate, inner["id"])
            if target is None:
                self.lines.add("pub use " + parent + "::" + inner["name"] +
                               " (= " + inner["source"] + ", unresolved)")
                return
            target = dict(target)
            target["name"] = inner["name"]
            self.walk(c2, target, parent)
            return
        path = parent + "::" + name
        if path in self.seen:
            return
        self.seen.add(path)
        if kind == "module":
            self.walk_module(crate, item, path)
        elif kind in ("struct", "enum", "union", "trait", "type_alias"):
            self.counts["types"] += 1
            self.example(item, path)
            g = self.generics(inner.get("generics", {}))
            if kind == "type_alias":
                self.lines.add("pub type " + path + g + " = " + self.ty(inner["type"]))
                return
            self.lines.add("pub " + kind + " " + path + g)
            if kind == "struct":
                k = inner["kind"]
                fields = []
                if isinstance(k, dict) and "plain" in k:
                    fields = k["plain"]["fields"]
                elif isinstance(k, dict) and "tuple" in k:
                    fields = [f for f in k["tuple"] if f is not None]
                for fid in fields:
                    f = crate.item(fid)
                    if f and f.get("visibility") == "public" and not is_hidden(f):
                        self.counts["fields"] += 1
                        self.lines.add("pub " + path + "::" + f["name"] + ": " +
                                       self.ty(f["inner"]["struct_field"]))
            if kind == "enum":
                for vid in inner["variants"]:
                    v = crate.item(vid)
                    if v and not is_hidden(v):
                        self.lines.add(path + "::" + v["name"])
            if kind == "trait":
                for mid in inner["items"]:
                    m = crate.item(mid)
                    if m and "function" in m["inner"]:
                        pre, s = self.sig(m["inner"]["function"])
                        self.lines.add(pre + "fn " + path + "::" + m["name"] + s)
            for iid in inner.get("impls", []):
                imp = crate.item(iid)
                if imp is None:
                    continue
                i = imp["inner"]["impl"]
                if i.get("is_synthetic") or i.get("blanket_impl") is not None:
                    continue
                if i.get("trait") is not None:
                    tr = self.ty({"resolved_path": i["trait"]})
                    self.lines.add("impl " + tr + " for " + path)
                    continue
                for mid in i["items"]:
                    m = crate.item(mid)
                    if m is None or m.get("visibility") != "public" or is_hidden(m):
                        continue
                    mk, mi = next(iter(m["inner"].items()))
                    if mk == "function":
                        self.counts["methods"] += 1
                        self.example(m, path + "::" + m["name"])
                        pre, s = self.sig(mi)
                        self.lines.add("pub " + pre + "fn " + path + "::" + m["name"] + s)
                    elif mk in ("assoc_const", "constant"):
                        self.counts["constants"] += 1
                        self.example(m, path + "::" + m["name"])
                        self.lines.add("pub const " + path + "::" + m["name"])
        elif kind == "function":
            self.counts["functions"] += 1
            self.example(item, path)
            pre, s = self.sig(inner)
            self.lines.add("pub " + pre + "fn " + path + s)
        elif kind in ("macro", "proc_macro"):
            self.counts["macros"] += 1
            self.example(item, path)
            self.lines.add("macro " + path)
        elif kind in ("constant", "static"):
            self.counts["constants"] += 1
            self.example(item, path)
            t = inner.get("type")
            self.lines.add("pub " + ("const " if kind == "constant" else "static ") + path +
                           (": " + self.ty(t) if t else ""))
        else:
            self.lines.add(kind + " " + path)


def main():
    doc_dir = sys.argv[1]
    crates = {}
    root_name = "scope_profiler"
    if "--root" in sys.argv:
        root_name = sys.argv[sys.argv.index("--root") + 1]
    for name in ("scope_profiler", "scope_profiler_core", "scope_profiler_hdf5",
                 "scope_profiler_reader", "scope_profiler_macros"):
        if os.path.exists(os.path.join(doc_dir, name + ".json")):
            crates[name] = Crate(load(doc_dir, name))
    api = Api(crates, root_name)
    root = api.root.item(api.root.data["root"])
    api.walk_module(api.root, root, root_name)
    if "--missing-examples" in sys.argv:
        for path in sorted(api.no_example):
            print(path)
        return
    if "--counts" in sys.argv:
        for k, v in api.counts.items():
            print(f"{k}: {v}")
        return
    for line in sorted(api.lines):
        print(line)


if __name__ == "__main__":
    main()
