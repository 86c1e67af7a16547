//! Projects and the lineage graph: each input kind, each selector form, each
//! `check` finding, output formats, and determinism across thread counts.

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use ripple::graph::{LineageGraph, Selector};
use ripple::ingest::{LoadOptions, load_project};

#[path = "../benches/support/dbt_project.rs"]
mod generator;

fn ripple() -> Command {
    Command::cargo_bin("ripple").unwrap()
}

fn graph_of(root: &Path) -> LineageGraph {
    LineageGraph::build(load_project(root, &LoadOptions::default()).unwrap())
}

fn shop() -> LineageGraph {
    graph_of(Path::new("fixtures/shop"))
}

/// (from, to) edges as ids.
fn edges(g: &LineageGraph) -> BTreeSet<(String, String)> {
    g.graph
        .edge_indices()
        .map(|e| {
            let (a, b) = g.graph.edge_endpoints(e).unwrap();
            (g.graph[a].id.clone(), g.graph[b].id.clone())
        })
        .collect()
}

fn has_edge(g: &LineageGraph, from: &str, to: &str) -> bool {
    edges(g).contains(&(from.to_string(), to.to_string()))
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn selected(g: &LineageGraph, sel: &str) -> Vec<String> {
    Selector::parse(sel)
        .unwrap()
        .select(g)
        .unwrap()
        .into_iter()
        .map(|n| g.graph[n].name.clone())
        .collect()
}

// --- dbt projects -------------------------------------------------------

#[test]
fn shop_has_every_kind_of_node_and_the_jinja_only_edges() {
    let g = shop();
    let kinds: BTreeSet<&str> = g.graph.node_weights().map(|d| d.kind.as_str()).collect();
    // `table` nodes come from the Airflow DAGs beside the dbt project.
    assert_eq!(
        kinds,
        ["model", "seed", "snapshot", "source", "table"]
            .into_iter()
            .collect()
    );
    let dbt_nodes = g
        .graph
        .node_weights()
        .filter(|d| d.kind.as_str() != "table")
        .count();
    let dbt_edges = g
        .graph
        .edge_weights()
        .filter(|e| !e.via.starts_with("airflow:"))
        .count();
    assert_eq!(dbt_nodes, 30);
    assert_eq!(dbt_edges, 28);
    // Only a macro's ref() makes this edge.
    assert!(has_edge(&g, "model.stg_refunds", "model.int_orders_net"));
    // Snapshot in, snapshot out; seed in.
    assert!(has_edge(
        &g,
        "model.stg_customers",
        "snapshot.customers_snapshot"
    ));
    assert!(has_edge(
        &g,
        "snapshot.customers_snapshot",
        "model.customer_segments"
    ));
    assert!(has_edge(&g, "seed.country_codes", "model.dim_customers"));
    // is_incremental() renders false: `{{ this }}` is no edge, but it is
    // recorded as a self-read.
    assert!(!has_edge(&g, "model.fct_orders", "model.fct_orders"));
    assert!(g.self_reads.contains("model.fct_orders"));
    assert!(g.self_reads.contains("model.stg_web_events"));
    assert!(!g.self_reads.contains("model.orders_daily"));
    assert!(g.diagnostics.is_empty(), "{:?}", g.diagnostics);
}

#[test]
fn shop_relations_and_configs_follow_dbt() {
    let g = shop();
    let d = |id: &str| g.dataset(id).unwrap().clone();
    // The project's generate_schema_name uses custom schemas as they are.
    assert_eq!(d("model.stg_orders").relation, "staging.stg_orders");
    assert_eq!(d("model.fct_orders").relation, "marts.fct_orders");
    assert_eq!(
        d("snapshot.customers_snapshot").relation,
        "snapshots.customers_snapshot"
    );
    assert_eq!(d("seed.country_codes").relation, "reference.country_codes");
    assert_eq!(d("source.raw.orders").relation, "raw.orders");
    // Configs from dbt_project.yml, YAML and config() merge in dbt's order.
    let orders_daily = d("model.orders_daily");
    assert_eq!(orders_daily.config["materialized"], "incremental");
    assert_eq!(orders_daily.config["event_time"], "order_date");
    assert_eq!(orders_daily.config["batch_size"], "day");
    assert_eq!(
        d("model.stg_web_events").config["incremental_strategy"],
        "microbatch"
    );
    assert_eq!(d("model.fct_orders").config["unique_key"], "order_id");
    assert_eq!(d("model.dim_customers").tags, ["marketing", "pii"]);
    assert_eq!(d("model.stg_web_events").tags, ["events", "staging"]);
    assert_eq!(d("model.fct_orders").columns.len(), 6);
}

#[test]
fn shop_graph_json_snapshot() {
    let out = ripple()
        .args(["graph", "--project", "fixtures/shop", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!("shop_graph_json", String::from_utf8(out).unwrap());
}

#[test]
fn shop_graph_mermaid_and_dot_snapshots() {
    for format in ["mermaid", "dot"] {
        let out = ripple()
            .args([
                "graph",
                "--project",
                "fixtures/shop",
                "--select",
                "+orders_7d",
                "--format",
                format,
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        insta::assert_snapshot!(
            format!("shop_orders_7d_{format}"),
            String::from_utf8(out).unwrap()
        );
    }
}

#[test]
fn macros_of_installed_packages_and_dispatch_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            ("dbt_project.yml", "name: p\nvars:\n  tables: ['a', 'b']\n"),
            ("dbt_packages/util/dbt_project.yml", "name: util\n"),
            (
                "dbt_packages/util/macros/union.sql",
                "{% macro union_refs(names) %}{{ return(adapter.dispatch('union_refs', 'util')(names)) }}{% endmacro %}\n{% macro default__union_refs(names) %}{% for n in names %}select * from {{ ref(n) }}{% if not loop.last %} union all {% endif %}{% endfor %}{% endmacro %}",
            ),
            ("models/a.sql", "select 1 as id"),
            ("models/b.sql", "select 2 as id"),
            ("models/both.sql", "{{ util.union_refs(var('tables')) }}"),
            (
                "models/v.sql",
                "select * from {{ ref('both') }} where x = '{{ some_unknown_macro() }}'",
            ),
        ],
    );
    let g = graph_of(root);
    assert!(has_edge(&g, "model.a", "model.both"));
    assert!(has_edge(&g, "model.b", "model.both"));
    assert!(has_edge(&g, "model.both", "model.v"));
    let warn = g
        .diagnostics
        .iter()
        .find(|d| d.code == "unknown-macro")
        .expect("a warning");
    assert_eq!(warn.file.as_deref(), Some("models/v.sql"));
    assert_eq!(warn.line, 1);
}

#[test]
fn naming_macros_see_the_node_and_only_the_root_project_s_count() {
    // Review round 25: `node.fqn`, `original_file_path` and `config` were
    // empty in naming macros (the schema-from-folder pattern fell back in
    // silence), a package's `generate_schema_name` renamed the root
    // project's models, and `generate_database_name` was never called.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            (
                "dbt_project.yml",
                "name: p\nmodels:\n  p:\n    marts:\n      +materialized: table\n",
            ),
            ("dbt_packages/pk/dbt_project.yml", "name: pk\n"),
            (
                "dbt_packages/pk/macros/m.sql",
                "{% macro generate_schema_name(custom_schema_name, node) %}pkg_override{% endmacro %}",
            ),
            (
                "macros/names.sql",
                "{% macro generate_schema_name(custom_schema_name, node) -%}\n{%- if node.fqn | length > 2 -%}{{ node.fqn[1] }}{%- else -%}{{ target.schema }}{%- endif -%}\n{%- endmacro %}\n{% macro generate_alias_name(custom_alias_name, node) -%}\n{%- if node.original_file_path.endswith('_x.sql') -%}x_{{ node.name }}{%- else -%}{{ node.name }}_{{ node.config.materialized }}{%- endif -%}\n{%- endmacro %}\n{% macro generate_database_name(custom_database_name, node) -%}\n{%- if custom_database_name -%}db_{{ custom_database_name }}{%- else -%}{{ target.database }}{%- endif -%}\n{%- endmacro %}",
            ),
            ("models/marts/finance/f1.sql", "select 1 as id"),
            ("models/top_x.sql", "select 1 as id"),
            (
                "models/o.sql",
                "{{ config(database='other') }}select 1 as id",
            ),
        ],
    );
    let g = graph_of(root);
    let relation = |id: &str| g.dataset(id).unwrap().relation.clone();
    assert!(
        relation("model.f1").ends_with("marts.f1_table"),
        "{}",
        relation("model.f1")
    );
    assert!(
        relation("model.top_x").ends_with(".x_top_x"),
        "{}",
        relation("model.top_x")
    );
    assert!(!relation("model.top_x").contains("pkg_override"));
    assert!(
        relation("model.o").starts_with("db_other."),
        "{}",
        relation("model.o")
    );
}

#[test]
fn a_root_model_named_as_a_package_s_is_the_one_refs_reach() {
    // Review round 25: the package's `m` was kept (first by file name) and
    // the root's `ref('m')` pointed at it.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            ("dbt_project.yml", "name: p\n"),
            ("dbt_packages/pk/dbt_project.yml", "name: pk\n"),
            ("dbt_packages/pk/models/m.sql", "select 2 as id"),
            ("models/m.sql", "select 1 as id"),
            ("models/r.sql", "select * from {{ ref('m') }}"),
        ],
    );
    let g = graph_of(root);
    assert_eq!(
        g.dataset("model.m").unwrap().file.as_deref(),
        Some("models/m.sql")
    );
    assert!(has_edge(&g, "model.m", "model.r"));
    let d = g
        .diagnostics
        .iter()
        .find(|d| d.code == "duplicate-dataset")
        .unwrap();
    assert_eq!(d.severity, ripple::project::Severity::Warning);
}

#[test]
fn versioned_models_and_disabled_models() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            (
                "dbt_project.yml",
                "name: p\nmodels:\n  p:\n    old:\n      +enabled: false\n",
            ),
            (
                "models/dim.yml",
                "version: 2\nmodels:\n  - name: dim\n    latest_version: 2\n    versions:\n      - v: 1\n      - v: 2\n",
            ),
            ("models/dim_v1.sql", "select 1 as id"),
            ("models/dim_v2.sql", "select 2 as id"),
            ("models/pinned.sql", "select * from {{ ref('dim', v=1) }}"),
            ("models/latest.sql", "select * from {{ ref('dim') }}"),
            ("models/old/legacy.sql", "select * from {{ ref('dim') }}"),
        ],
    );
    let g = graph_of(root);
    assert!(has_edge(&g, "model.dim.v1", "model.pinned"));
    assert!(has_edge(&g, "model.dim.v2", "model.latest"));
    assert!(g.dataset("model.legacy").is_none());
}

// --- manifest.json ---------------------------------------------------

#[test]
fn a_manifest_is_read_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let manifest = r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
        "nodes": {"model.x.b": {"resource_type": "model", "name": "b", "relation_name": "a.b",
                   "depends_on": {"nodes": ["model.x.a"]}},
                  "model.x.a": {"resource_type": "model", "name": "a", "relation_name": "a.a", "depends_on": {"nodes": []}}},
        "sources": {}}"#;
    write(
        root,
        &[
            ("target/manifest.json", manifest),
            ("elsewhere/manifest.json", manifest),
        ],
    );
    // target/ is build output: never read unless asked.
    assert_eq!(graph_of(root).graph.node_count(), 0);
    let out = ripple()
        .args(["graph", "--project"])
        .arg(root)
        .args(["--manifest"])
        .arg(root.join("elsewhere/manifest.json"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["edges"][0]["from"], "model.a");
    assert_eq!(doc["edges"][0]["to"], "model.b");
}

// --- plain SQL folders and mixed projects ------------------------------

#[test]
fn plain_sql_scripts_join_on_table_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            (
                "load/stage.sql",
                "create temp table s as select * from raw.events;\ninsert into mart.events select * from s;",
            ),
            (
                "load/daily.sql",
                "insert into mart.daily select d, count(*) from mart.events group by d;",
            ),
            ("load/report.sql", "select * from mart.daily"),
        ],
    );
    let g = graph_of(root);
    assert!(has_edge(&g, "table.raw.events", "table.mart.events"));
    assert!(has_edge(&g, "table.mart.events", "table.mart.daily"));
    // A file that only selects is a model named after the file.
    assert!(has_edge(&g, "table.mart.daily", "table.report"));
    // The temp table is the script's own business.
    assert!(g.dataset("table.s").is_none());
    let e = g
        .graph
        .edge_weights()
        .find(|e| e.via == "sql:load/daily.sql")
        .unwrap();
    assert_eq!((e.file.as_str(), e.line), ("load/daily.sql", 1));
}

#[test]
fn sql_scripts_beside_a_dbt_project_reach_its_models() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            ("dbt_project.yml", "name: p\n"),
            (
                "ripple.yml",
                "sql: [scripts]\ntarget: { schema: analytics }\n",
            ),
            ("models/orders.sql", "select 1 as id"),
            (
                "scripts/export.sql",
                "insert into export.orders select * from analytics.orders",
            ),
            (
                "scripts/bare.sql",
                "insert into export.bare select * from orders",
            ),
        ],
    );
    let g = graph_of(root);
    assert!(has_edge(&g, "model.orders", "table.export.orders"));
    // A bare name answers to the model of that name.
    assert!(has_edge(&g, "model.orders", "table.export.bare"));
}

// --- ripple.yml ------------------------------------------------------

#[test]
fn bad_ripple_yml_is_exit_2_with_key_path_and_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[("ripple.yml", "datasets:\n  orders:\n    grian: day\n")],
    );
    ripple()
        .args(["graph", "--project"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ripple.yml:3:5"))
        .stderr(predicate::str::contains(
            "datasets.orders: unknown key `grian`; did you mean `grain`?",
        ));
}

// --- selectors -------------------------------------------------------

#[test]
fn every_selector_form() {
    let g = shop();
    assert_eq!(selected(&g, "orders_7d"), ["orders_7d"]);
    // The Airflow export of orders_daily is downstream too.
    assert_eq!(
        selected(&g, "orders_daily+"),
        [
            "kpis_monthly",
            "orders_7d",
            "orders_daily",
            "revenue_weekly",
            "exports.daily_revenue"
        ]
    );
    assert_eq!(
        selected(&g, "orders_daily+1"),
        [
            "orders_7d",
            "orders_daily",
            "revenue_weekly",
            "exports.daily_revenue"
        ]
    );
    assert_eq!(
        selected(&g, "1+orders_daily"),
        ["fct_orders", "orders_daily"]
    );
    assert_eq!(
        selected(&g, "+int_orders_net"),
        [
            "int_order_payments",
            "int_orders_net",
            "stg_payments",
            "stg_refunds",
            "raw.payments",
            "raw.refunds",
            "landing.payments"
        ]
    );
    // @: the node, its descendants, and everything those need.
    let at = selected(&g, "@stg_refunds");
    assert!(at.contains(&"kpis_monthly".to_string()));
    assert!(at.contains(&"stg_orders".to_string()), "{at:?}");
    assert!(at.contains(&"raw.orders".to_string()));
    assert_eq!(selected(&g, "tag:finance,orders_7d"), ["orders_7d"]);
    assert_eq!(
        selected(&g, "kpis_monthly orders_7d"),
        ["kpis_monthly", "orders_7d"]
    );
    assert_eq!(
        selected(&g, "path:models/marts/finance"),
        [
            "fct_orders",
            "kpis_monthly",
            "orders_7d",
            "orders_daily",
            "revenue_weekly"
        ]
    );
    assert_eq!(selected(&g, "source:raw,raw.refunds+1"), ["raw.refunds"]);
    assert_eq!(selected(&g, "stg_o*"), ["stg_order_items", "stg_orders"]);
    assert_eq!(selected(&g, "tag:pii"), ["dim_customers"]);
    let err = Selector::parse("fct_ordres")
        .unwrap()
        .select(&g)
        .unwrap_err()
        .to_string();
    assert!(err.contains("did you mean `fct_orders`?"), "{err}");
}

// --- check ------------------------------------------------------------

#[test]
fn check_reports_each_finding_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            ("dbt_project.yml", "name: p\n"),
            (
                "models/src.yml",
                "version: 2\nsources:\n  - name: raw\n    tables:\n      - name: used\n      - name: unused\n",
            ),
            (
                "models/a.sql",
                "select * from {{ ref('b') }} join {{ source('raw', 'used') }} using (id)",
            ),
            ("models/b.sql", "select * from {{ ref('a') }}"),
            ("models/c.sql", "select * from {{ ref('stg_ordrs') }}"),
            ("models/d.sql", "select 1 from {{ ref('a') }\n"),
            ("models/stg_orders.sql", "select 1 as id"),
            ("jobs/one.sql", "insert into shared.t select 1;"),
            (
                "jobs/two.sql",
                "insert into shared.t select 2;\nselect (( from x;",
            ),
            ("ripple.yml", "sql: [jobs]\n"),
        ],
    );
    let out = ripple()
        .args(["check", "--project"])
        .arg(root)
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("error[cycle]: cycle: model.a → model.b → model.a"),
        "{text}"
    );
    assert!(
        text.contains("error[unknown-ref]: models/c.sql:1:"),
        "{text}"
    );
    assert!(text.contains("did you mean `stg_orders`?"), "{text}");
    assert!(
        text.contains("error[render-error]: models/d.sql:1"),
        "{text}"
    );
    assert!(
        text.contains("error[parse-error]: jobs/two.sql:2:"),
        "{text}"
    );
    assert!(text.contains("warning[duplicate-writer]"), "{text}");
    assert!(
        text.contains("sql:jobs/one.sql, sql:jobs/two.sql"),
        "{text}"
    );
    assert!(
        text.contains("warning[unused-source]: models/src.yml:6: source `raw.unused`"),
        "{text}"
    );

    let json = ripple()
        .args(["check", "--format", "json", "--project"])
        .arg(root)
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["errors"], 4);
}

#[test]
fn check_passes_with_warnings_only() {
    ripple()
        .args(["check", "--project", "fixtures/shop"])
        .assert()
        .success()
        .stdout(predicate::str::contains("0 errors, 1 warning"));
}

// --- output safety and determinism -------------------------------------

#[test]
fn hostile_names_cannot_break_dot_or_mermaid() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[(
            "x.sql",
            "insert into \"we\"\"ird}\".\"a]-->b\" select * from \"q\"\"uote\";",
        )],
    );
    for (format, check) in [("dot", "\\\"ird}"), ("mermaid", "#quot;")] {
        let out = ripple()
            .args(["graph", "--format", format, "--project"])
            .arg(dir.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(check), "{format}: {text}");
        if format == "mermaid" {
            // Every line is a node, an edge or the header: nothing injected.
            for line in text.lines().skip(1) {
                let line = line.trim();
                assert!(line.starts_with('n'), "{line}");
                assert!(!line.contains("\"]-->"), "{line}");
            }
        }
    }
}

#[test]
fn output_is_identical_with_one_thread_or_many() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("gen");
    let generated = generator::generate(&root, 400).unwrap();
    let run = |threads: &str| {
        ripple()
            .env("RAYON_NUM_THREADS", threads)
            .args(["graph", "--project"])
            .arg(&root)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let one = run("1");
    assert_eq!(one, run("8"));
    assert_eq!(one, run("3"));
    let doc: serde_json::Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(doc["edges"].as_array().unwrap().len(), generated.edges);
}

#[test]
fn a_model_that_refs_itself_is_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("models")).unwrap();
    std::fs::write(
        dir.path().join("dbt_project.yml"),
        "name: s\nversion: '1'\nprofile: s\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("models/a.sql"),
        "select * from {{ ref('a') }}",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("models/b.sql"),
        "{{ config(materialized='incremental') }}\nselect * from {{ this }}",
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args(["check", "--project"])
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("error[cycle]: models/a.sql:1: `a` refs itself"),
        "{text}"
    );
    // Reading itself through {{ this }} is how incremental models work.
    assert!(!text.contains("b.sql"), "{text}");
}

#[test]
fn a_script_links_each_write_to_what_feeds_it_not_to_every_read() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            // Two unrelated statements: x feeds a, y feeds b.
            (
                "two.sql",
                "create table a as select * from x;\ncreate table b as select * from y;",
            ),
            // Three tables deduplicated one by one through scratch tables:
            // each is read and rewritten alone, so no cycle between them.
            (
                "dedupe.sql",
                "create temp table c1 as select distinct * from customers;\n\
                 truncate customers;\ninsert into customers select * from c1;\n\
                 create temp table e1 as select distinct * from employees;\n\
                 truncate employees;\ninsert into employees select * from e1;",
            ),
            // Through a staging table: raw feeds stage feeds mart; lookup
            // joins in at the end; an append keeps its earlier rows.
            (
                "chain.sql",
                "create table stage as select * from raw;\n\
                 insert into mart select s.*, l.v from stage s join lookup l using (k);\n\
                 insert into log select * from log2;\ninsert into summary select count(*) from log;",
            ),
        ],
    );
    let g = graph_of(dir.path());
    let got = edges(&g);
    let want: BTreeSet<(String, String)> = [
        ("table.x", "table.a"),
        ("table.y", "table.b"),
        ("table.customers", "table.customers"),
        ("table.employees", "table.employees"),
        ("table.raw", "table.stage"),
        // mart is fed by what fed stage, and by stage itself: stage is
        // published too, and whoever changes it changes mart (and a plan
        // restating both rebuilds stage first).
        ("table.raw", "table.mart"),
        ("table.stage", "table.mart"),
        ("table.lookup", "table.mart"),
        ("table.log2", "table.log"),
        ("table.log", "table.summary"),
        ("table.log2", "table.summary"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .filter(|(a, b)| a != b)
    .collect();
    assert_eq!(got, want);
    // Each table that reads itself back is a self-read, not a cycle.
    assert!(g.cycles().is_empty(), "{:?}", g.cycles());
}

#[test]
fn a_script_that_only_creates_a_table_empty_does_not_produce_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (
                "ddl.sql",
                "create table if not exists mart.t (id int, day date);",
            ),
            (
                "load.sql",
                "insert into mart.t select id, day from raw.src;",
            ),
        ],
    );
    let g = graph_of(dir.path());
    assert_eq!(g.writers["table.mart.t"], ["sql:load.sql"]);
    assert!(
        !g.diagnostics.iter().any(|d| d.code == "duplicate-writer"),
        "{:?}",
        g.diagnostics
    );
}

#[test]
fn a_thousand_unknown_refs_among_twenty_thousand_models_are_each_named_with_a_suggestion() {
    use ripple::project::{Dataset, DatasetKind, Job, JobKind, Project, Reference, Target};
    let model = |i: usize| Dataset {
        id: format!("model.model_{i:05}"),
        kind: DatasetKind::Model,
        name: format!("model_{i:05}"),
        relation: format!("analytics.model_{i:05}"),
        package: None,
        file: Some(format!("models/model_{i:05}.sql")),
        line: Some(1),
        tags: Vec::new(),
        columns: Vec::new(),
        config: Default::default(),
        tests: false,
    };
    let datasets: Vec<Dataset> = (0..20_000).map(model).collect();
    // One job per model; a thousand of them ref a misspelt model.
    let jobs: Vec<Job> = (0..20_000)
        .map(|i| Job {
            id: format!("model.model_{i:05}"),
            kind: JobKind::Dbt,
            file: format!("models/model_{i:05}.sql"),
            reads: match i % 20 {
                0 => vec![Reference {
                    target: Target::Ref {
                        package: None,
                        name: format!("modl_{:05}", (i + 1) % 20_000),
                        version: None,
                    },
                    line: 3,
                }],
                _ => Vec::new(),
            },
            writes: vec![Reference {
                target: Target::Node {
                    id: format!("model.model_{i:05}"),
                },
                line: 1,
            }],
            feeds: None,
            sql: None,
            airflow: None,
            built_by: None,
            needs_warehouse: Vec::new(),
            from_manifest: Default::default(),
        })
        .collect();
    let g = LineageGraph::build(Project {
        datasets,
        jobs,
        ..Project::default()
    });
    let unknown: Vec<&ripple::project::Diagnostic> = g
        .diagnostics
        .iter()
        .filter(|d| d.code == "unknown-ref")
        .collect();
    assert_eq!(unknown.len(), 1_000);
    for d in unknown {
        let wanted = d.message.split('\'').nth(1).unwrap();
        let expected = wanted.replacen("modl_", "model_", 1);
        assert!(
            d.message.ends_with(&format!("did you mean `{expected}`?")),
            "{}",
            d.message
        );
    }
}

#[test]
fn timings_go_to_stderr_and_leave_the_output_alone() {
    let plain = ripple()
        .args(["graph", "--project", "fixtures/shop"])
        .output()
        .unwrap();
    for (flag, env) in [(Some("--timings"), None), (None, Some("timings"))] {
        let mut cmd = ripple();
        cmd.args(["graph", "--project", "fixtures/shop"]);
        cmd.args(flag);
        if let Some(v) = env {
            cmd.env("RIPPLE_LOG", v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.stdout, plain.stdout);
        let err = String::from_utf8(out.stderr).unwrap();
        for phase in [
            "ripple.yml",
            "dbt models",
            "airflow dags",
            "graph",
            "output",
            "total",
        ] {
            assert!(
                err.lines()
                    .any(|l| l.trim_start().starts_with(phase) && l.ends_with(" ms")),
                "{phase} in {err}"
            );
        }
    }
    assert!(plain.stderr.is_empty());
}

#[test]
fn a_statement_that_names_no_table_and_does_not_parse_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (
                "job.sql",
                "create user etl password 'x' in group loaders;\ninsert into mart.t select * from raw.s;\nselect (( from broken;",
            ),
            ("ripple.yml", "dialect: redshift\n"),
        ],
    );
    let g = graph_of(dir.path());
    let codes: Vec<(&str, u32)> = g.diagnostics.iter().map(|d| (d.code, d.line)).collect();
    // The user is a warning; the broken select, which could read anything,
    // stays an error.
    assert!(codes.contains(&("unparsed-statement", 1)), "{codes:?}");
    assert!(codes.contains(&("parse-error", 3)), "{codes:?}");
    assert!(has_edge(&g, "table.raw.s", "table.mart.t"));
}

#[test]
fn a_selection_or_a_range_that_matches_nothing_says_so() {
    // Both printed an empty answer with exit 0 and no word: a typo in a
    // tag, or swapped dates, read like an empty project or good news.
    let out = ripple()
        .args([
            "graph",
            "--project",
            "fixtures/shop",
            "--select",
            "tag:nope",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warning: --select tag:nope matches no dataset of the project")
    );
    let out = ripple()
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args(["--as-of", "2026-01-01", "--project", "fixtures/shop"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "--as-of 2026-01-01 is not after --from 2026-01-10: no partition of the range exists yet"
    ));
}

#[test]
fn a_linked_model_or_dag_file_is_named_not_dropped_in_silence() {
    // dbt and Airflow follow a link; ripple does not, and a linked model or
    // DAG file was missing from the lineage with `check` saying nothing.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in ["models", "dags", "shared"] {
        std::fs::create_dir(root.join(d)).unwrap();
    }
    std::fs::write(
        root.join("dbt_project.yml"),
        "name: p\nversion: '1.0'\nprofile: p\n",
    )
    .unwrap();
    std::fs::write(root.join("models/a.sql"), "select 1 as x").unwrap();
    std::fs::write(root.join("shared/b.sql"), "select x from {{ ref('a') }}").unwrap();
    std::fs::write(
        root.join("shared/d.py"),
        "from airflow import DAG\nwith DAG('d', schedule='@hourly') as dag:\n    pass\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("../shared/b.sql", root.join("models/b.sql")).unwrap();
    std::os::unix::fs::symlink("../shared/d.py", root.join("dags/d.py")).unwrap();
    for cache in [true, true, false] {
        let mut cmd = ripple();
        cmd.args(["check", "--project"]).arg(root);
        if !cache {
            cmd.arg("--no-cache");
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        for f in ["models/b.sql", "dags/d.py"] {
            assert!(
                text.contains(&format!("warning[linked-file]: {f}: is a link")),
                "{f}: {text}"
            );
        }
    }
}

#[test]
fn a_versioned_models_relation_carries_its_version() {
    // dbt names a version's relation `name_v2`, and lets the latest version
    // live in the file named like the model: ripple read it unversioned,
    // as `dim`, and a plan swapped a stale legacy table.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("models")).unwrap();
    std::fs::write(
        root.join("dbt_project.yml"),
        "name: p\nversion: '1.0'\nprofile: p\n",
    )
    .unwrap();
    std::fs::write(root.join("models/dim.sql"), "select 1 as x").unwrap();
    std::fs::write(
        root.join("models/use.sql"),
        "select x from {{ ref('dim') }}",
    )
    .unwrap();
    std::fs::write(
        root.join("models/dim.yml"),
        "version: 2\nmodels:\n  - name: dim\n    versions:\n      - v: 2\n",
    )
    .unwrap();
    let g = graph_of(root);
    let dim = g
        .dataset("model.dim.v2")
        .expect("the version is its own node");
    assert!(dim.relation.ends_with(".dim_v2"), "{}", dim.relation);
    let readers: Vec<String> = g
        .graph
        .neighbors_directed(g.index["model.dim.v2"], petgraph::Direction::Outgoing)
        .map(|n| g.graph[n].id.clone())
        .collect();
    assert_eq!(readers, ["model.use"]);
}

/// A dbt model that reads another model's, a source's or a seed's table by
/// name rather than through `ref()`/`source()`: dbt records no edge, but
/// the rows flow, so ripple follows them (impact would otherwise be short)
/// and says where. Names in comments, strings and CTEs are not reads.
#[test]
fn relations_a_dbt_model_names_by_hand_are_followed_and_named() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("dbt_project.yml", "name: shop\nprofile: shop\n"),
            (
                "models/sources.yml",
                "version: 2\nsources:\n  - name: raw\n    schema: raw\n    tables:\n      - name: orders\n",
            ),
            (
                "models/stg.sql",
                "select * from {{ source('raw', 'orders') }}\n",
            ),
            (
                "models/hard.sql",
                "-- once: from analytics.old_thing\nwith stg as (select 1)\nselect s.*, 'from x.y' as note\nfrom analytics.stg s\njoin RAW.ORDERS o using (id)\n",
            ),
            ("models/clean.sql", "select * from {{ ref('stg') }}\n"),
        ],
    );
    let g = graph_of(dir.path());
    assert!(has_edge(&g, "model.stg", "model.hard"), "{:?}", edges(&g));
    assert!(
        has_edge(&g, "source.raw.orders", "model.hard"),
        "{:?}",
        edges(&g)
    );
    let into_hard: Vec<String> = edges(&g)
        .into_iter()
        .filter(|(_, to)| to == "model.hard")
        .map(|(from, _)| from)
        .collect();
    assert_eq!(into_hard, ["model.stg", "source.raw.orders"]);
    // Nothing else is read by name: the comment, the string and the CTE.
    assert_eq!(edges(&g).len(), 4, "{:?}", edges(&g));
    let out = ripple()
        .args(["check", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("warning[hard-coded-relation]: models/hard.sql:4: `hard` reads `analytics.stg` by name, which is the model `stg`"),
        "{text}"
    );
    assert!(
        text.contains("Write {{ source('raw', 'orders') }} instead"),
        "{text}"
    );
    assert_eq!(text.matches("hard-coded-relation").count(), 2, "{text}");
    // Impact reaches it: a change to the source restates `hard` too.
    let out = ripple()
        .args([
            "impact",
            "raw.orders",
            "--from",
            "2026-01-01",
            "--to",
            "2026-01-01",
        ])
        .args(["--format", "json", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let impact: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = impact["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"model.hard"), "{ids:?}");
}

/// A dbt model whose SQL, as ripple renders it, does not parse is named by
/// `check` (a warning: dbt may run it), where it once said nothing.
#[test]
fn check_names_a_dbt_model_ripple_cannot_parse() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("dbt_project.yml", "name: shop\nprofile: shop\n"),
            ("models/ok.sql", "select 1 as a\n"),
            (
                "models/broken.sql",
                "select a, sum(b) from {{ ref('ok') }} where (a = 'x' group by 1\n",
            ),
        ],
    );
    let out = ripple()
        .args(["check", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("warning[parse-error]: models/broken.sql:1:")
            && text.contains("`broken` as ripple renders it does not parse"),
        "{text}"
    );
    assert_eq!(text.matches("parse-error").count(), 1, "{text}");
}

#[test]
fn a_job_calling_a_procedure_is_warned_at_the_call() {
    // `call mart.refresh_all()` read as writing nothing, silently: what the
    // procedure writes was missing from every impact.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[(
            "jobs/c.sql",
            "insert into mart.c (d, x) select d, x from mart.a;\n  call mart.refresh_all();\nexecute immediate 'delete from mart.c';\n",
        )],
    );
    ripple()
        .args(["check", "--no-cache", "--project"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "warning[hidden-tables]: jobs/c.sql:2:3: statement 2 runs `mart.refresh_all`",
        ))
        .stdout(predicate::str::contains(
            "jobs/c.sql:3:1: statement 3 runs `EXECUTE IMMEDIATE`",
        ));
}

#[test]
fn a_prepared_statement_is_read_where_it_is_executed() {
    // Round 28: `prepare p as insert ...; delete ...; execute p` had no
    // lineage at all: impact left the table out, exit 0.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("ripple.yml", "dialect: postgres\n"),
            (
                "jobs/b.sql",
                "prepare load_b as insert into mart.b select day, sum(v) from raw.events group by day;\ndelete from mart.b;\nexecute load_b;\n",
            ),
        ],
    );
    let g = graph_of(dir.path());
    assert!(
        has_edge(&g, "table.raw.events", "table.mart.b"),
        "{:?}",
        edges(&g)
    );
    ripple()
        .args(["check", "--no-cache", "--project"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("hidden-tables").not());
}

#[test]
fn a_dbt_postgres_name_in_mixed_case_is_that_exact_table() {
    // Round 28: dbt-postgres quotes `ORDERS_Tbl` (checked on PostgreSQL:
    // the model reads "erp_raw"."ORDERS_Tbl"); ripple folded it, so the job
    // loading the quoted table fed another node and impact missed the model.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("dbt_project.yml", "name: q\nversion: '1.0'\nprofile: q\n"),
            ("ripple.yml", "dialect: postgres\nsql: [jobs]\n"),
            (
                "models/sources.yml",
                "version: 2\nsources:\n  - name: erp\n    schema: erp_raw\n    tables:\n      - name: orders\n        identifier: ORDERS_Tbl\n",
            ),
            (
                "models/stg_orders.sql",
                "select id, amount from {{ source('erp', 'orders') }}\n",
            ),
            (
                "jobs/load.sql",
                "insert into erp_raw.\"ORDERS_Tbl\" (id, amount) select id, amount from landing.feed;\n",
            ),
            (
                "jobs/other.sql",
                "insert into erp_raw.orders_tbl (id, amount) select id, amount from landing.other;\n",
            ),
        ],
    );
    let g = graph_of(dir.path());
    assert!(
        has_edge(&g, "table.landing.feed", "source.erp.orders"),
        "{:?}",
        edges(&g)
    );
    assert!(
        !has_edge(&g, "table.landing.other", "source.erp.orders"),
        "{:?}",
        edges(&g)
    );
    // No hard-coded read of a folded namesake: the source is read as dbt reads it.
    let into_model: Vec<_> = edges(&g)
        .into_iter()
        .filter(|(_, to)| to == "model.stg_orders")
        .collect();
    assert_eq!(
        into_model,
        [(
            "source.erp.orders".to_string(),
            "model.stg_orders".to_string()
        )]
    );
}

#[test]
fn impact_follows_a_partition_to_the_table_it_is_part_of() {
    // Round 29: a job writing `mart.daily_2026_01` (a partition of
    // `mart.daily`, checked on PostgreSQL) left the readers of `mart.daily`
    // out of impact, exit 0.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (
                "ripple.yml",
                "dialect: postgres\nmodels: [jobs]\ntables: [ddl]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n",
            ),
            (
                "ddl/t.sql",
                "create table mart.daily (d date, revenue numeric) partition by range (d);\ncreate table mart.daily_2026_01 partition of mart.daily for values from ('2026-01-01') to ('2026-02-01');\n",
            ),
            (
                "jobs/load.sql",
                "insert into mart.daily_2026_01 (d, revenue) select d, sum(amount) from raw.orders group by d;\n",
            ),
            (
                "jobs/weekly.sql",
                "insert into mart.weekly (d, revenue) select d, revenue from mart.daily;\n",
            ),
        ],
    );
    ripple()
        .args([
            "impact",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-10",
            "--as-of",
            "2026-02-01",
            "--no-cache",
            "--project",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("mart.weekly"))
        .stdout(predicate::str::contains("mart.daily "));
}
