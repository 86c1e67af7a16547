#!/usr/bin/env python3
"""Compare `ripple graph --format json` with the edges of a dbt manifest.json.

Usage: compare_manifest.py MANIFEST.json RIPPLE_GRAPH.json [--show N]

dbt's edges are each model's and snapshot's `depends_on.nodes`, keeping
models, seeds, snapshots and sources (tests, macros, metrics are not
datasets). Node ids are mapped to ripple's form by dropping the package:
`model.pkg.name[.vN]` -> `model.name[.vN]`, `source.pkg.s.t` -> `source.s.t`.
Prints node and edge counts, matches, and the mismatches on each side.
"""
import json
import sys

KINDS = ("model", "seed", "snapshot", "source")


def ripple_id(unique_id):
    parts = unique_id.split(".")
    if parts[0] not in KINDS or len(parts) < 3:
        return None
    return ".".join([parts[0]] + parts[2:])


def main(argv):
    show = 20
    if "--show" in argv:
        i = argv.index("--show")
        show = int(argv[i + 1])
        del argv[i : i + 2]
    manifest = json.load(open(argv[0]))
    graph = json.load(open(argv[1]))
    dbt_nodes, dbt_edges = set(), set()
    for section in ("nodes", "sources"):
        for uid, node in manifest.get(section, {}).items():
            rid = ripple_id(uid)
            if rid is None:
                continue
            dbt_nodes.add(rid)
            if node.get("resource_type") in ("model", "snapshot"):
                for dep in node.get("depends_on", {}).get("nodes", []):
                    up = ripple_id(dep)
                    if up is not None:
                        dbt_edges.add((up, rid))
    rip_nodes = {n["id"] for n in graph["nodes"] if n["kind"] != "table"}
    rip_edges = {(e["from"], e["to"]) for e in graph["edges"]}
    print(f"nodes: dbt {len(dbt_nodes)}, ripple {len(rip_nodes)}, both {len(dbt_nodes & rip_nodes)}")
    print(f"edges: dbt {len(dbt_edges)}, ripple {len(rip_edges)}, both {len(dbt_edges & rip_edges)}")
    for label, diff in (
        ("nodes only in dbt", sorted(dbt_nodes - rip_nodes)),
        ("nodes only in ripple", sorted(rip_nodes - dbt_nodes)),
        ("edges only in dbt", sorted(dbt_edges - rip_edges)),
        ("edges only in ripple", sorted(rip_edges - dbt_edges)),
    ):
        print(f"{label}: {len(diff)}")
        for item in diff[:show]:
            print("   ", item)
    same = dbt_nodes == rip_nodes and dbt_edges == rip_edges
    print("identical" if same else "different")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
