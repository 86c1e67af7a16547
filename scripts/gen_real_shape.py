#!/usr/bin/env python3
"""Generate a dbt project shaped like the large real one issue 13 measured.

That project had 2,374 models, 9,805 sources declared in YAML that reuses a few
anchors hundreds of times, about 70 macro files, and about 80 refs naming models
that do not exist (each of which asks for a "did you mean"). The generated
project has the same counts by default; nothing in it is copied from anywhere.

Usage: gen_real_shape.py OUT [--models N] [--sources N] [--macro-files N]
                             [--unknown-refs N] [--seed N]

The output is the same for the same arguments.
"""
import argparse
import os
import random
import shutil


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--models", type=int, default=2374)
    p.add_argument("--sources", type=int, default=9805)
    p.add_argument("--macro-files", type=int, default=70)
    p.add_argument("--unknown-refs", type=int, default=80)
    p.add_argument("--seed", type=int, default=13)
    a = p.parse_args()
    rng = random.Random(a.seed)
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    os.makedirs(os.path.join(a.out, "models", "staging"))
    os.makedirs(os.path.join(a.out, "models", "marts"))
    os.makedirs(os.path.join(a.out, "macros"))

    def write(path, text):
        with open(os.path.join(a.out, path), "w") as f:
            f.write(text)

    write(
        "dbt_project.yml",
        "name: shape\nversion: '1.0'\nprofile: shape\n"
        "models:\n  shape:\n    staging:\n      +materialized: view\n"
        "    marts:\n      +materialized: table\n",
    )

    # Sources: one YAML file per 100 sources (a schema each), every table's
    # freshness, meta and loaded-at settings aliases of a few anchors.
    tables = []
    per_file = 100
    for f in range((a.sources + per_file - 1) // per_file):
        lines = [
            "version: 2",
            "",
            "x-defaults:",
            "  freshness: &fresh",
            "    warn_after: {count: 24, period: hour}",
            "    error_after: {count: 48, period: hour}",
            "  meta: &meta",
            "    owner: data-platform",
            "    tier: bronze",
            "  columns: &cols",
            "    - name: id",
            "      tests: [not_null]",
            "    - name: updated_at",
            "",
            "sources:",
            f"  - name: src_{f:03d}",
            f"    schema: raw_{f:03d}",
            "    freshness: *fresh",
            "    tables:",
        ]
        for t in range(per_file):
            i = f * per_file + t
            if i >= a.sources:
                break
            name = f"t{i:05d}"
            tables.append((f"src_{f:03d}", name))
            lines += [
                f"      - name: {name}",
                "        meta: *meta",
                "        freshness: *fresh",
                "        loaded_at_field: _loaded_at",
                "        columns: *cols",
            ]
        write(f"models/staging/_sources_{f:03d}.yml", "\n".join(lines) + "\n")

    # Macros: helpers that models call, a few dispatched.
    macros = []
    for m in range(a.macro_files):
        name = f"helper_{m:02d}"
        macros.append(name)
        write(
            f"macros/{name}.sql",
            f"{{% macro {name}(col) %}}{{{{ return(adapter.dispatch('{name}', 'shape')(col)) }}}}{{% endmacro %}}\n\n"
            f"{{% macro default__{name}(col) %}}\n"
            f"  {{%- set parts = [] -%}}\n"
            f"  {{%- for p in ['trim', 'lower'] -%}}{{%- do parts.append(p) -%}}{{%- endfor -%}}\n"
            f"  {{{{ parts | join('(') }}}}({{{{ col }}}}{{{{ ')' * (parts | length) }}}}\n"
            f"{{% endmacro %}}\n",
        )

    # Models: the first quarter stage a source each, the rest read earlier
    # models; some refs name models that do not exist.
    staged = a.models // 4
    names = []
    unknown_left = a.unknown_refs
    for i in range(a.models):
        if i < staged:
            src, table = tables[i % len(tables)]
            name = f"stg_{i:05d}"
            body = (
                f"select id, {{{{ {rng.choice(macros)}('name') }}}} as name, updated_at\n"
                f"from {{{{ source('{src}', '{table}') }}}}\n"
            )
            write(f"models/staging/{name}.sql", body)
        else:
            name = f"fct_{i:05d}"
            ups = rng.sample(names, k=min(len(names), rng.randint(1, 3)))
            refs = [f"{{{{ ref('{u}') }}}}" for u in ups]
            if unknown_left > 0 and i % max(1, (a.models - staged) // a.unknown_refs) == 0:
                # A typo of an existing model: the kind of miss a review finds.
                refs.append(f"{{{{ ref('{ups[0]}x') }}}}")
                unknown_left -= 1
            joins = "\n".join(
                f"join {r} as u{k} using (id)" for k, r in enumerate(refs[1:], 1)
            )
            body = (
                "{{ config(materialized='table') }}\n"
                f"select u0.id, {{{{ {rng.choice(macros)}('u0.name') }}}} as name\n"
                f"from {refs[0]} as u0\n{joins}\n"
            )
            write(f"models/marts/{name}.sql", body)
        names.append(name)
    print(
        f"{a.out}: {a.models} models, {len(tables)} sources in "
        f"{(a.sources + per_file - 1) // per_file} YAML files, {a.macro_files} macro files, "
        f"{a.unknown_refs - unknown_left} unknown refs"
    )


if __name__ == "__main__":
    main()
