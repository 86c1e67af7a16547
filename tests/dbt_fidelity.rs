//! dbt as large real projects write it (issue 14): each form here once cost
//! edges on a public project. ripple's graph of this small project must
//! equal what `dbt parse` records, checked against dbt itself when it is
//! installed (`bash scripts/engines.sh install dbt`; required under CI).

#[path = "support/engines.rs"]
mod engines;
#[path = "support/temp_project.rs"]
mod temp_project;

use std::collections::BTreeSet;
use std::process::Command;

use engines::{dbt, require};
use temp_project::temp_project;

const FILES: &[(&str, &str)] = &[
    (
        "dbt_project.yml",
        "name: fid\nversion: \"1.0\"\nprofile: fid\nmodel-paths: [\"models\"]\nmacro-paths: [\"macros\"]\nmodels:\n  fid:\n    +post-hook: \"grant select on {{ this }} to role reporter\"\nvars:\n  upstream: \"{{ env_var('RIPPLE_TEST_NO_SUCH_VARIABLE', 'b') }}\"\n  app: \"{{ ref('a') }}\"\n  src: \"{{ source('raw', 'u') }}\"\n  chained: \"{{ var('app') }}\"\n  names: [a]\n  tuva_on: true\n  tuva_off: false\n  scoped_on: false\n  fid:\n    scoped_on: true\n  pkg:\n    pkg_src: b\n  twice: a\n  twice: b\nsources:\n  fid:\n    blk:\n      +enabled: false\n    sub:\n      blk2:\n        off_t:\n          +enabled: false\n    blk2:\n      on_t:\n        +enabled: false\n",
    ),
    ("models/a.sql", "select 1 as id, 'x' as c\n"),
    ("models/b.sql", "select 2 as id\n"),
    // Anchors reused by aliases (real source files reuse a few hundreds of times).
    (
        "models/sources.yml",
        "version: 2\nsources:\n  - name: raw\n    tables:\n      - name: t\n        meta: &owner {owner: data}\n      - name: u\n        meta: *owner\n        columns:\n          - name: id\n            data_type: int\n            data_type: bigint\n",
    ),
    // dbt compiles each macro block alone: text between blocks, even text
    // Jinja2 rejects, is never compiled.
    (
        "macros/blocks.sql",
        "{% macro helper(x) %}{{ x }}{% endmacro %}\n\n{% ######################## %}\n\n{% macro other() %}1{% endmacro %}\n",
    ),
    // A project's own `source`, with an argument dbt's lacks.
    (
        "macros/source.sql",
        "{% macro source(source_name, table_name, database=none) %}{% do return(builtins.source(source_name, table_name)) %}{% endmacro %}\n",
    ),
    // A parameter named `macro`, printed in a set block (dbt_utils' shape).
    (
        "macros/describe.sql",
        "{% macro describe(obj, macro) %}{% set msg %}{{ macro }}{% endset %}{% do return(msg | trim) %}{% endmacro %}\n",
    ),
    // Asks the warehouse when dbt runs, answers nothing while it parses.
    (
        "macros/column_values.sql",
        "{% macro column_values(rel) %}{% if execute %}{% set r = run_query('select c from ' ~ rel) %}{% do return(r.columns[0].values()) %}{% endif %}{% do return([]) %}{% endmacro %}\n",
    ),
    (
        "models/m_blocks.sql",
        "select {{ helper('id') }} from {{ ref('a') }}\n",
    ),
    (
        "models/m_source.sql",
        "select * from {{ source('raw', 't', database='other') }}\n",
    ),
    (
        "models/m_time.sql",
        "{% set last_year = run_started_at.year - 1 %}\nselect {{ last_year }} as y, '{{ run_started_at.strftime('%Y') }}' as s from {{ ref('a') }}\n",
    ),
    // dbt's Python modules: a config and a ref computed with them, after
    // date arithmetic (once a render-error before the ref).
    (
        "models/m_dates.sql",
        "{% set start = (modules.datetime.datetime.strptime('2024-03-01', '%Y-%m-%d') - modules.datetime.timedelta(days=7)).strftime('%Y-%m-%d') %}\n{{ config(enabled=(modules.datetime.date(2024, 3, 1) - modules.datetime.date(2024, 2, 1)).days == 29) }}\nselect '{{ start }}' as s from {{ ref(modules.re.sub('^x_', '', 'x_b')) }}\n",
    ),
    (
        "models/m_dates_off.sql",
        "{{ config(enabled=(modules.datetime.timedelta(days=1) > modules.datetime.timedelta(hours=25))) }}\nselect * from {{ ref('a') }}\n",
    ),
    (
        "models/m_rel.sql",
        "{% set r = ref('b') %}{% if not r %}{{ exceptions.raise_compiler_error('a relation is never falsy') }}{% endif %}\nselect * from {{ ref('a') }} join {{ r }} using (id)\n",
    ),
    (
        "models/m_disabled.sql",
        "{{ config(enabled=false) }}\nselect * from {{ ref('a') }}\n",
    ),
    (
        "models/m_wh.sql",
        "{% set vals = column_values(ref('a')) %}\nselect {% for v in vals %}'{{ v }}' as v{{ loop.index }}, {% endfor %}1 as one from {{ ref('b') }}\n",
    ),
    (
        "models/m_append.sql",
        "{% set cols = [] %}{% for c in ['id', 'c'] %}{% do cols.append(c) %}{% endfor %}\nselect {{ cols | join(', ') }} from {{ ref('a') }}\n",
    ),
    // Jinja in a var's value, and a var as another's default.
    (
        "models/m_var.sql",
        "select * from {{ ref(var('upstream')) }} union all select * from {{ ref(var('missing', var('upstream'))) }}\n",
    ),
    // A var whose value is a `ref()` or `source()` (Fivetran's packages):
    // dbt renders it where the model reads it, and records the edge.
    (
        "models/m_var_ref.sql",
        "select * from {{ var('app') }} join {{ var('src') }} using (id)\n",
    ),
    (
        "models/m_var_chain.sql",
        "select * from {{ var('chained') }}\n",
    ),
    // dbt's type filters (the Tuva project's models open with them).
    (
        "models/m_as_bool.sql",
        "{{ config(enabled=var('tuva_on', false) | as_bool) }}\nselect {{ '3' | as_number }} as n, {{ 'x' | as_text }} as t from {{ ref('a') }}\n",
    ),
    (
        "models/m_as_bool_off.sql",
        "{{ config(enabled=var('tuva_off') | as_bool) }}\nselect * from {{ ref('a') }}\n",
    ),
    // Vars scoped under the root project's own name win over its globals.
    (
        "models/m_scoped.sql",
        "{{ config(enabled=var('scoped_on')) }}\nselect * from {{ ref('b') }}\n",
    ),
    // A package's models see its own vars, under the root's globals and
    // the root's block for the package.
    (
        "dbt_packages/pkg/dbt_project.yml",
        "name: pkg\nversion: \"1.0\"\nconfig-version: 2\nvars:\n  pkg_src: a\n  upstream: a\n  pkg:\n    pkg_flag: true\n",
    ),
    (
        "dbt_packages/pkg/models/pkg_m.sql",
        "{{ config(enabled=var('pkg_flag', false)) }}\nselect * from {{ ref(var('pkg_src')) }} join {{ ref(var('upstream')) }} using (id)\n",
    ),
    (
        "dbt_packages/pkg/models/pkg_off.sql",
        "{{ config(enabled=var('scoped_on')) }}\nselect * from {{ ref('a') }}\n",
    ),
    // A package's node finds its own macro before the root's of the same
    // name (it once took the root's, another ref).
    (
        "dbt_packages/pkg/macros/choose.sql",
        "{% macro choose() %}{{ ref('a') }}{% endmacro %}\n",
    ),
    (
        "macros/choose.sql",
        "{% macro choose() %}{{ ref('b') }}{% endmacro %}\n",
    ),
    (
        "dbt_packages/pkg/models/pkg_pick.sql",
        "select * from {{ choose() }}\n",
    ),
    ("models/m_pick.sql", "select * from {{ choose() }}\n"),
    // An older dbt_utils shim: a package macro named like dbt's, which
    // dispatches to dbt's own (it used to call itself until the depth limit,
    // losing the refs after it).
    (
        "dbt_packages/shim/dbt_project.yml",
        "name: shim\nversion: \"1.0\"\nconfig-version: 2\n",
    ),
    (
        "dbt_packages/shim/macros/datediff.sql",
        "{% macro datediff(first_date, second_date, datepart) %}{{ return(adapter.dispatch('datediff', 'dbt')(first_date, second_date, datepart)) }}{% endmacro %}\n",
    ),
    (
        "models/m_shim.sql",
        "select {{ shim.datediff('x', 'y', 'day') }} as d from {{ ref('a') }} join {{ ref('b') }} using (id)\n",
    ),
    // Jinja2 forms dbt projects write (spellbook): unary plus, a default
    // reading an earlier parameter, `do ... if` without `else`.
    (
        "macros/late.sql",
        "{% macro pick(chain, events = source('raw', chain)) %}{{ events }}{% endmacro %}\n",
    ),
    (
        "models/m_jinja2.sql",
        "{% set step = +1 %}{% set xs = [] %}{% do xs.append(step) if step > 0 %}\nselect {{ xs | join(',') }} as n from {{ pick('t') }} join {{ ref('b') }} using (id)\n",
    ),
    // Lists from a var, `|list` and `.split()` are Python lists in dbt:
    // appended to in place (the appends were dropped).
    (
        "models/m_var_list.sql",
        "{% set xs = var('names') %}{% do xs.append('b') %}select * from {{ ref(xs[-1]) }}\n",
    ),
    (
        "models/m_list_filter.sql",
        "{% set xs = ('a',)|list %}{% do xs.append('b') %}select * from {{ ref(xs|last) }}\n",
    ),
    (
        "models/m_split_list.sql",
        "{% set xs = 'a,x'.split(',') %}{% do xs.insert(0, 'b') %}select * from {{ ref(xs[0]) }}\n",
    ),
    // A var written twice: the last value, as dbt's YAML loader keeps.
    (
        "models/m_twice.sql",
        "select * from {{ ref(var('twice')) }}\n",
    ),
    (
        "models/m_kw.sql",
        "select '{{ describe(1, 'x') }}' as d from {{ ref('b') }}\n",
    ),
    // Python models: read, never run; their refs and sources are edges,
    // `enabled=False` removes one, and SQL models read them by ref.
    (
        "models/m_py.py",
        "import math\n\ndef model(dbt, session):\n    dbt.config(materialized=\"table\", tags=[\"py\"])\n    a = dbt.ref(\"a\").df()\n    t = dbt.source('raw', 't')\n    return a\n",
    ),
    (
        "models/m_py_off.py",
        "def model(dbt, session):\n    dbt.config(enabled=False)\n    return dbt.ref('b')\n",
    ),
    ("models/m_after_py.sql", "select * from {{ ref('m_py') }}\n"),
    // The root project's name is a namespace of its macros.
    (
        "macros/own.sql",
        "{% macro own_table() %}{{ ref('b') }}{% endmacro %}\n",
    ),
    (
        "models/m_own_ns.sql",
        "select * from {{ fid.own_table() }}\n",
    ),
    // Source tables turned off, directly or by a var (Fivetran's packages),
    // and a whole source turned off: no nodes, as in dbt.
    (
        "models/optional.yml",
        "version: 2\nsources:\n  - name: opt\n    tables:\n      - name: on_t\n      - name: off_t\n        config: {enabled: false}\n      - name: var_off\n        config:\n          enabled: \"{{ var('use_var_off', false) }}\"\n  - name: opt_all\n    config: {enabled: false}\n    tables:\n      - name: x\n",
    ),
    // Sources turned off in dbt_project.yml's `sources:` block, by
    // (project, folders of the property file, source, table); a path that
    // skips the folder configures nothing.
    (
        "models/blk.yml",
        "version: 2\nsources:\n  - name: blk\n    tables:\n      - name: t1\n",
    ),
    (
        "models/sub/blk2.yml",
        "version: 2\nsources:\n  - name: blk2\n    tables:\n      - name: on_t\n      - name: off_t\n",
    ),
    (
        "models/m_opt.sql",
        "select * from {{ source('opt', 'on_t') }}\n",
    ),
    // Disabled in its property file, enabled in its own: dbt puts the
    // file's `config()` first (it once vanished, silently).
    (
        "models/m_on.sql",
        "{{ config(enabled=true) }}\nselect * from {{ ref('a') }}\n",
    ),
    // A hook's refs and sources are the model's dependencies (dbt records
    // them); a project hook naming `{{ this }}` is rendered when it runs,
    // not when parsed (once a false render error with no place).
    (
        "models/m_hook.sql",
        "{{ config(pre_hook=\"insert into staging.snap select * from {{ source('raw', 'u') }}\") }}\nselect * from {{ ref('b') }}\n",
    ),
    (
        "models/m_on.yml",
        "version: 2\nmodels:\n  - name: m_on\n    config:\n      enabled: false\n",
    ),
];

/// The edges this project has, as dbt records them.
const EDGES: &[(&str, &str)] = &[
    ("model.a", "model.m_append"),
    ("model.a", "model.m_blocks"),
    ("model.a", "model.m_rel"),
    ("model.a", "model.m_time"),
    ("model.a", "model.m_var_chain"),
    ("model.a", "model.m_var_ref"),
    ("model.a", "model.m_wh"),
    ("model.a", "model.m_as_bool"),
    ("model.b", "model.m_kw"),
    ("model.b", "model.m_scoped"),
    ("model.b", "model.m_twice"),
    ("model.a", "model.m_shim"),
    ("model.b", "model.m_shim"),
    ("model.b", "model.m_jinja2"),
    ("source.raw.t", "model.m_jinja2"),
    ("model.b", "model.pkg_m"),
    ("model.b", "model.m_rel"),
    ("model.b", "model.m_var"),
    ("model.b", "model.m_wh"),
    ("source.raw.t", "model.m_source"),
    ("source.raw.u", "model.m_var_ref"),
    ("model.a", "model.m_py"),
    ("source.raw.t", "model.m_py"),
    ("model.m_py", "model.m_after_py"),
    ("model.b", "model.m_own_ns"),
    ("source.opt.on_t", "model.m_opt"),
    ("model.b", "model.m_dates"),
    ("model.b", "model.m_var_list"),
    ("model.b", "model.m_list_filter"),
    ("model.b", "model.m_split_list"),
    ("model.a", "model.m_on"),
    ("model.b", "model.m_hook"),
    ("model.a", "model.pkg_pick"),
    ("model.b", "model.m_pick"),
    ("source.raw.u", "model.m_hook"),
];

fn ripple(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args(args)
        .arg("--project")
        .arg(dir)
        .output()
        .unwrap()
}

fn graph(dir: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["graph", "--format", "json"];
    args.extend_from_slice(extra);
    let out = ripple(&args, dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn edges(doc: &serde_json::Value) -> BTreeSet<(String, String)> {
    doc["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["from"].as_str().unwrap().into(),
                e["to"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn expected() -> BTreeSet<(String, String)> {
    EDGES
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn every_form_keeps_its_edges() {
    let dir = temp_project(FILES);
    let doc = graph(dir.path(), &[]);
    assert_eq!(edges(&doc), expected());
    let ids: BTreeSet<&str> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    for off in [
        "model.m_disabled",
        "model.m_as_bool_off",
        "model.m_dates_off",
        "model.pkg_off",
        "model.m_py_off",
        "source.opt.off_t",
        "source.opt.var_off",
        "source.opt_all.x",
        "source.blk.t1",
        "source.blk2.off_t",
    ] {
        assert!(
            !ids.contains(off),
            "{off}: config(enabled=false) in the file"
        );
    }
    assert!(
        ids.contains("source.raw.u"),
        "a source declared through an alias"
    );
    assert!(
        ids.contains("source.blk2.on_t"),
        "a `sources:` path without the property file's folder configures nothing"
    );
    assert_eq!(
        doc["summary"]["needs_warehouse"],
        serde_json::json!(["model.m_wh"])
    );
    assert_eq!(doc["summary"]["edges"], EDGES.len());
    assert_eq!(doc["summary"]["edges_from_manifest"], 0);
}

#[test]
fn check_names_the_warehouse_model_and_counts_coverage() {
    let dir = temp_project(FILES);
    let out = ripple(&["check"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    let warehouse: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("needs-warehouse"))
        .collect();
    assert_eq!(warehouse.len(), 1, "{text}");
    assert!(
        warehouse[0].contains("models/m_wh.sql")
            && warehouse[0].contains("`run_query` in macro `column_values`"),
        "{text}"
    );
    assert!(
        !text.contains("render-error") && !text.contains("unknown-macro"),
        "{text}"
    );
    // Keys written twice: used as dbt uses them, each file named with the
    // line of the second key, and nothing of the YAML library's own advice.
    for (file, line) in [
        ("dbt_project.yml:", "twice"),
        ("models/sources.yml:", "data_type"),
    ] {
        assert!(
            text.lines().any(|l| l.contains("yaml-duplicate-key")
                && l.contains(file)
                && l.contains(&format!("`{line}`"))),
            "{text}"
        );
    }
    assert!(!text.contains("DuplicateKeyPolicy"), "{text}");
    // A hook is rendered when dbt runs it: `{{ this }}` in one is no error.
    assert!(!text.contains("grant select"), "{text}");
    assert!(
        text.contains("dbt models: 30 read: 29 rendered fully, 0 with placeholders, 0 failed, 1 need the warehouse; 1 Python model (edges from dbt.ref and dbt.source, columns unknown)"),
        "{text}"
    );
    let json = ripple(&["check", "--format", "json"], dir.path());
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["coverage"]["need_warehouse"], 1);
    assert_eq!(doc["coverage"]["rendered_fully"], 29);
    assert_eq!(doc["coverage"]["python"], 1);
}

#[test]
fn a_manifest_fills_what_only_the_warehouse_knew() {
    let dir = temp_project(FILES);
    // What dbt saw at run time: m_wh also read m_kw (its query named it).
    let manifest = r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
        "nodes": {"model.fid.m_wh": {"resource_type": "model", "name": "m_wh", "relation_name": "main.m_wh",
                   "depends_on": {"nodes": ["model.fid.a", "model.fid.b", "model.fid.m_kw"]}},
                  "model.fid.elsewhere": {"resource_type": "model", "name": "elsewhere", "relation_name": "main.elsewhere",
                   "depends_on": {"nodes": []}}},
        "sources": {}}"#;
    std::fs::write(dir.path().join("manifest.json"), manifest).unwrap();
    let path = dir.path().join("manifest.json");
    let doc = graph(dir.path(), &["--manifest", path.to_str().unwrap()]);
    let mut want = expected();
    want.insert(("model.m_kw".into(), "model.m_wh".into()));
    assert_eq!(edges(&doc), want);
    for e in doc["edges"].as_array().unwrap() {
        let from_manifest = e["from"] == "model.m_kw";
        assert_eq!(
            e.get("evidence").and_then(|v| v.as_str()),
            from_manifest.then_some("manifest"),
            "{e}"
        );
    }
    assert_eq!(doc["summary"]["edges_from_manifest"], 1);
    // The manifest is evidence for the project's models, not more models.
    assert!(
        !doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["id"] == "model.elsewhere")
    );
}

/// `dbt parse` of the project in `dir` against a DuckDB file `w.duckdb`
/// there, with `profile` named and `extra` lines in its output; the
/// manifest it writes.
fn dbt_parse(
    dbt: &std::path::Path,
    dir: &std::path::Path,
    profile: &str,
    extra: &str,
) -> serde_json::Value {
    let profiles = format!(
        "{profile}:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: '{}'\n{extra}      threads: 1\n",
        dir.join("w.duckdb").display()
    );
    std::fs::write(dir.join("profiles.yml"), profiles).unwrap();
    let out = Command::new(dbt)
        .args([
            "parse",
            "--no-partial-parse",
            "--profiles-dir",
            ".",
            "--project-dir",
            ".",
        ])
        .current_dir(dir)
        .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dbt parse failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("target/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn dbt_parse_records_the_same_edges() {
    let Some(dbt) = require(dbt(), "dbt (dbt-core 1.11 with dbt-duckdb)") else {
        return;
    };
    let dir = temp_project(FILES);
    let manifest = dbt_parse(&dbt, dir.path(), "fid", "");
    let id = |unique: &str| {
        let parts: Vec<&str> = unique.split('.').collect();
        format!("{}.{}", parts[0], parts[2..].join("."))
    };
    let mut dbt_edges = BTreeSet::new();
    for (unique, node) in manifest["nodes"].as_object().unwrap() {
        if node["resource_type"] != "model" {
            continue;
        }
        for up in node["depends_on"]["nodes"].as_array().unwrap() {
            dbt_edges.insert((id(up.as_str().unwrap()), id(unique)));
        }
    }
    assert_eq!(dbt_edges, expected(), "dbt's own edges");
    for off in [
        "model.fid.m_disabled",
        "model.fid.m_as_bool_off",
        "model.fid.m_dates_off",
        "model.pkg.pkg_off",
        "model.fid.m_py_off",
        "source.fid.opt.off_t",
        "source.fid.opt.var_off",
        "source.fid.opt_all.x",
    ] {
        assert!(manifest["disabled"].get(off).is_some(), "{off}");
    }
    // The sources dbt keeps are the sources ripple keeps.
    let dbt_sources: BTreeSet<String> = manifest["sources"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| id(k))
        .collect();
    let ripple_sources: BTreeSet<String> = graph(dir.path(), &[])["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["id"].as_str())
        .filter(|i| i.starts_with("source."))
        .map(str::to_string)
        .collect();
    assert_eq!(ripple_sources, dbt_sources);
    assert_eq!(
        edges(&graph(dir.path(), &[])),
        dbt_edges,
        "ripple against dbt"
    );
}

/// Jinja in a source's names, as public projects write it: dbt renders it
/// when it parses, so the relation (and every query that reads the source)
/// is the rendered one.
const SOURCE_NAMES: &[(&str, &str)] = &[
    (
        "dbt_project.yml",
        "name: srcnames\nversion: \"1.0\"\nprofile: srcnames\nmodel-paths: [\"models\"]\nvars:\n  raw_table: events\n",
    ),
    ("ripple.yml", "target:\n  schema: main\n  database: w\n"),
    (
        "models/sources.yml",
        "version: 2\nsources:\n  - name: raw\n    database: \"{{ target.database | default(none) }}\"\n    schema: \"{{ target.schema.replace('main', env_var('RIPPLE_TEST_NO_SUCH_VARIABLE', 'landing')) }}_raw\"\n    tables:\n      - name: ev\n        identifier: \"{{ var('raw_table') }}\"\n      - name: plain\n",
    ),
    ("models/m.sql", "select * from {{ source('raw', 'ev') }}\n"),
];

fn relation_of(doc: &serde_json::Value, id: &str) -> String {
    doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .unwrap_or_else(|| panic!("no node {id}"))["relation"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn jinja_in_a_sources_names_is_rendered() {
    let dir = temp_project(SOURCE_NAMES);
    let doc = graph(dir.path(), &[]);
    assert_eq!(relation_of(&doc, "source.raw.ev"), "w.landing_raw.events");
    assert_eq!(relation_of(&doc, "source.raw.plain"), "w.landing_raw.plain");
    assert_eq!(
        edges(&doc),
        BTreeSet::from([("source.raw.ev".to_string(), "model.m".to_string())])
    );
    let ol = ripple(&["graph", "--format", "openlineage"], dir.path());
    let text = String::from_utf8_lossy(&ol.stdout);
    assert!(text.contains("w.landing_raw.events"), "{text}");
    assert!(!text.contains("{{"), "{text}");
    // With no database in the target, `default(none)` leaves it out.
    std::fs::write(dir.path().join("ripple.yml"), "target:\n  schema: main\n").unwrap();
    let doc = graph(dir.path(), &[]);
    assert_eq!(relation_of(&doc, "source.raw.ev"), "landing_raw.events");
}

#[test]
fn dbt_parse_renders_a_sources_names_the_same() {
    let Some(dbt) = require(dbt(), "dbt (dbt-core 1.11 with dbt-duckdb)") else {
        return;
    };
    let dir = temp_project(SOURCE_NAMES);
    // dbt-duckdb names the database after the file: `w`, as ripple.yml says.
    let manifest = dbt_parse(&dbt, dir.path(), "srcnames", "      schema: main\n");
    let doc = graph(dir.path(), &[]);
    for table in ["ev", "plain"] {
        let dbt_relation =
            manifest["sources"][format!("source.srcnames.raw.{table}")]["relation_name"]
                .as_str()
                .unwrap()
                .replace('"', "");
        assert_eq!(
            relation_of(&doc, &format!("source.raw.{table}")),
            dbt_relation,
            "ripple against dbt for {table}"
        );
    }
}

/// A monorepo as spellbook lays one out: the dbt project in
/// `dbt_subprojects/p` reads models and macros from folders at the
/// repository's top.
const MONOREPO: &[(&str, &str)] = &[
    (".git/HEAD", "ref: refs/heads/main\n"),
    (
        "dbt_subprojects/p/dbt_project.yml",
        "name: mono\nversion: \"1.0\"\nprofile: mono\nmodel-paths: [\"models\", \"../../sources\"]\nmacro-paths: [\"../../macros\"]\n",
    ),
    (
        "dbt_subprojects/p/models/m.sql",
        "select * from {{ ref('shared_src') }} where x = {{ shared_one() }}\n",
    ),
    ("sources/shared_src.sql", "select 1 as x\n"),
    (
        "macros/shared.sql",
        "{% macro shared_one() %}1{% endmacro %}\n",
    ),
];

fn mono_edges() -> BTreeSet<(String, String)> {
    [("model.shared_src".to_string(), "model.m".to_string())].into()
}

#[test]
fn a_monorepo_project_reads_the_repositorys_shared_folders() {
    let repo = temp_project(MONOREPO);
    let project = repo.path().join("dbt_subprojects/p");
    assert_eq!(edges(&graph(&project, &["--no-cache"])), mono_edges());
    let check = ripple(&["check", "--no-cache"], &project);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        !text.contains("path-outside-project") && !text.contains("unknown-macro"),
        "{text}"
    );
    // Out of the repository is still out: a folder beside it.
    let outside = tempfile::tempdir().unwrap();
    let far = outside.path().join("models");
    std::fs::create_dir_all(&far).unwrap();
    std::fs::write(far.join("far.sql"), "select 2 as y\n").unwrap();
    let yml = format!(
        "name: mono\nversion: \"1.0\"\nprofile: mono\nmodel-paths: [\"models\", \"../../sources\", \"{}\"]\nmacro-paths: [\"../../macros\"]\n",
        far.display()
    );
    std::fs::write(project.join("dbt_project.yml"), yml).unwrap();
    let check = ripple(&["check", "--no-cache"], &project);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.lines().any(|l| l.contains("path-outside-project")
            && l.contains("model-paths")
            && l.contains("outside the repository")),
        "{text}"
    );
    // And a link inside the repository that leads out of it.
    std::fs::write(
        project.join("dbt_project.yml"),
        MONOREPO[1]
            .1
            .replace("\"models\", ", "\"models\", \"../../linked\", "),
    )
    .unwrap();
    std::os::unix::fs::symlink(&far, repo.path().join("linked")).unwrap();
    let check = ripple(&["check", "--no-cache"], &project);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.lines()
            .any(|l| l.contains("path-outside-project") && l.contains("../../linked")),
        "{text}"
    );
}

#[test]
fn without_a_repository_the_project_folder_is_the_boundary() {
    let files: Vec<(&str, &str)> = MONOREPO[1..].to_vec();
    let repo = temp_project(&files);
    let project = repo.path().join("dbt_subprojects/p");
    let check = ripple(&["check", "--no-cache"], &project);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.lines().any(|l| l.contains("path-outside-project")
            && l.contains("../../sources")
            && l.contains("in no git repository")),
        "{text}"
    );
}

#[test]
fn dbt_parse_reads_the_monorepo_the_same() {
    let Some(dbt) = require(dbt(), "dbt (dbt-core 1.11 with dbt-duckdb)") else {
        return;
    };
    let repo = temp_project(MONOREPO);
    let project = repo.path().join("dbt_subprojects/p");
    let manifest = dbt_parse(&dbt, &project, "mono", "");
    let mut dbt_edges = BTreeSet::new();
    for (unique, node) in manifest["nodes"].as_object().unwrap() {
        if node["resource_type"] != "model" {
            continue;
        }
        for up in node["depends_on"]["nodes"].as_array().unwrap() {
            let id = |u: &str| {
                let parts: Vec<&str> = u.split('.').collect();
                format!("{}.{}", parts[0], parts[2..].join("."))
            };
            dbt_edges.insert((id(up.as_str().unwrap()), id(unique)));
        }
    }
    assert_eq!(dbt_edges, mono_edges(), "dbt's own edges");
    assert_eq!(edges(&graph(&project, &["--no-cache"])), dbt_edges);
}

#[test]
fn naming_macros_overridden_through_dispatch_name_the_relation() {
    // The root project's `default__generate_schema_name` and
    // `duckdb__generate_alias_name` are what dbt's own naming macros
    // dispatch to: `dbt parse` names the model `marts.dim_tbl` (it was
    // `main_marts.dim`, every relation of such a project wrong).
    let dir = temp_project(&[
        ("dbt_project.yml", "name: p6\nversion: '1.0'\nprofile: p6\n"),
        (
            "ripple.yml",
            "dialect: duckdb\ntarget: { schema: main, name: prod }\n",
        ),
        (
            "macros/naming.sql",
            "{% macro default__generate_schema_name(custom_schema_name, node) -%}\n{%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}\n{%- endmacro %}\n{% macro duckdb__generate_alias_name(custom_alias_name=none, node=none) -%}\n{{ node.name ~ '_tbl' }}\n{%- endmacro %}\n",
        ),
        (
            "models/marts/dim.sql",
            "{{ config(schema='marts') }}\nselect 1 as id\n",
        ),
    ]);
    let doc = graph(dir.path(), &["--no-cache"]);
    assert_eq!(relation_of(&doc, "model.dim"), "marts.dim_tbl");
}
