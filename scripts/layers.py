#!/usr/bin/env python3
"""Checks ripple's module structure: no import cycle between source files, and
no module importing from a layer above its own.

Every `crate::a::b` path (in `use` lines and inline) and every `super::x`
path is resolved to the file that defines the module it names. A parent
module's references to its own children are structure, not imports, and are
left out. Exit 1 with the cycle or the upward import named.
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# Lowest first: a module may import only from its own layer or below, and
# never in a cycle. One flow: ingest -> project -> graph -> impact -> plan -> emit.
LAYERS = [
    ["error", "text", "input", "progress", "timings", "cache", "stack", "leftovers"],
    ["time", "sql"],
    ["config"],
    ["project"],
    ["ingest", "graph"],
    ["schedule", "impact"],
    ["plan", "diff"],
    ["emit"],
    ["commands", "post"],
    ["lib", "main"],
]
LAYER_OF = {m: i for i, layer in enumerate(LAYERS) for m in layer}


def module_files(src):
    """Module path (tuple) -> file path, for every .rs file under src."""
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                mod = ()
            else:
                mod = tuple(rel)
            out.setdefault(mod, path)
    return out


def resolve(mods, path):
    """The longest prefix of `path` that is a module with a file."""
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in mods:
            return tuple(path[:n])
    return None


PATH = re.compile(r"\b(crate|super)((?:::(?:[A-Za-z_][A-Za-z0-9_]*|\{))+)")


def imports(mods, mod, path):
    text = open(path, encoding="utf-8").read()
    # Test modules may use anything; they are not part of the flow.
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
    text = re.sub(r"//[^\n]*", "", text)
    is_mod_rs = path.endswith("mod.rs") or path.endswith("lib.rs") or path.endswith("main.rs")
    found = set()
    for m in PATH.finditer(text):
        head, rest = m.group(1), m.group(2)
        parts = [p for p in rest.split("::") if p and p != "{"]
        if head == "crate":
            base = []
        else:
            base = list(mod) if is_mod_rs else list(mod[:-1])
            # super::super::
            while parts and parts[0] == "super":
                base = base[:-1]
                parts = parts[1:]
            base = base[:-1] if is_mod_rs else base
            if not is_mod_rs:
                pass
        target_path = base + parts
        # `use crate::a::{b, c}`: also each braced name.
        after = text[m.end():m.end() + 400]
        names = [target_path]
        if rest.endswith("{"):
            inner = after.split("}")[0]
            for item in inner.split(","):
                item = item.strip().split(" as ")[0].split("::")
                if item and item[0]:
                    names.append(target_path + [item[0].strip()])
        for n in names:
            t = resolve(mods, n)
            if t is None or t == mod:
                continue
            # A parent's references to its own children are structure.
            if len(t) > len(mod) and t[: len(mod)] == mod:
                continue
            found.add(t)
    return found


def check(src):
    """The layering problems of the crate under `src`."""
    mods = module_files(src)
    graph = {m: imports(mods, m, p) for m, p in mods.items()}
    problems = []
    for m, targets in sorted(graph.items()):
        if not m:
            continue
        for t in sorted(targets):
            if not t:
                continue
            lm, lt = LAYER_OF.get(m[0]), LAYER_OF.get(t[0])
            if lm is None:
                problems.append(f"src/{'/'.join(m)}: top-level module `{m[0]}` has no layer in scripts/layers.py")
            elif lt is not None and lt > lm:
                problems.append(f"upward import: {'::'.join(m)} (layer {lm}) uses {'::'.join(t)} (layer {lt})")
    # Cycles: depth-first search with colours.
    colour = {}
    stack = []

    def visit(m):
        colour[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if colour.get(t) == 1:
                cycle = stack[stack.index(t):] + [t]
                problems.append("import cycle: " + " -> ".join("::".join(c) or "crate" for c in cycle))
            elif colour.get(t) is None:
                visit(t)
        stack.pop()
        colour[m] = 2

    sys.setrecursionlimit(10000)
    for m in sorted(graph):
        if colour.get(m) is None:
            visit(m)
    return mods, problems


def self_test():
    """The checker finds a planted cycle and a planted upward import."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        files = {
            "lib.rs": "pub mod sql; pub mod plan; pub mod emit;",
            "sql/mod.rs": "use crate::plan::Task;",
            "plan/mod.rs": "mod a; mod b; pub use a::Task;",
            "plan/a.rs": "use super::b::x; pub struct Task;",
            "plan/b.rs": "use super::a::Task; pub fn x() {}",
            "emit/mod.rs": "use crate::plan::Task;",
        }
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        _, problems = check(d)
    assert any(p.startswith("upward import: sql") for p in problems), problems
    assert any("import cycle: plan::a -> plan::b -> plan::a" in p for p in problems), problems
    assert not any("emit" in p for p in problems), problems
    print("layers self-test: a planted cycle and an upward import are found")


def main():
    self_test()
    mods, problems = check(SRC)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering problem(s)")
        return 1
    print(f"layers: {len(mods)} modules, no cycle, no upward import")
    return 0


if __name__ == "__main__":
    sys.exit(main())
