//! Plan tasks: batches of affected partitions and their wavefront order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use ripple::graph::LineageGraph;
use ripple::impact::{TimeFacts, impact};
use ripple::ingest::{LoadOptions, load_project};
use ripple::plan::{PlanTask, tasks};
use ripple::time::{Grain, Hour, TimeMapping};

#[path = "support/cli.rs"]
mod cli;
#[path = "support/temp_project.rs"]
mod temp_project;
use temp_project::{copy_tree, temp_project};
#[path = "support/random_graph.rs"]
mod random_graph;
use cli::worked_example;
use random_graph::{AS_OF, build, case, day, request};

fn plan_of(g: &LineageGraph, req: &ripple::impact::ImpactRequest) -> ripple::plan::Tasks {
    let facts = TimeFacts::build(g).unwrap();
    let (i, model) = impact(g, &facts, req, false).unwrap();
    tasks(g, &model, &i).unwrap()
}

fn by_id(t: &ripple::plan::Tasks) -> BTreeMap<String, PlanTask> {
    t.tasks.iter().map(|t| (t.id.clone(), t.clone())).collect()
}

#[test]
fn worked_example_tasks_and_wavefront() {
    let g = LineageGraph::build(
        load_project(
            Path::new("fixtures/worked_example/declared"),
            &LoadOptions::default(),
        )
        .unwrap(),
    );
    let plan = plan_of(
        &g,
        &request(&["raw.orders"], "2026-01-10", "2026-01-12", "2026-02-01"),
    );
    assert_eq!(plan.assumed, ["source.raw.orders"]);
    let t = by_id(&plan);
    let deps = |id: &str| t[id].depends_on.clone();
    // dbt models that are not microbatch recompute everything on every run:
    // one task each, covering all their affected partitions.
    assert_eq!(
        deps("stg_orders@2026-01-10..2026-01-12"),
        Vec::<String>::new()
    );
    assert_eq!(
        deps("orders_7d@2026-01-10..2026-01-18"),
        ["stg_orders@2026-01-10..2026-01-12"]
    );
    assert_eq!(t["orders_7d@2026-01-10..2026-01-18"].partitions, 9);
    assert_eq!(
        deps("weekly_revenue@2026-01-05..2026-01-12"),
        ["orders_7d@2026-01-10..2026-01-18"]
    );
    assert_eq!(
        deps("monthly_kpis@2026-01..2026-01"),
        ["weekly_revenue@2026-01-05..2026-01-12"]
    );
    assert_eq!(
        deps("dim_customers@full"),
        ["stg_orders@2026-01-10..2026-01-12"]
    );
    let segments: Vec<&PlanTask> = plan
        .tasks
        .iter()
        .filter(|t| t.dataset == "model.customer_segments")
        .collect();
    assert_eq!(segments.len(), 1, "one run restates all 396 days");
    assert_eq!(segments[0].depends_on, ["dim_customers@full"]);
    assert_eq!(segments[0].partitions, 396);
    assert_eq!(plan.tasks.len(), 6);
}

/// Longest chain of dependencies, in tasks.
fn critical_path(plan: &ripple::plan::Tasks) -> usize {
    let t = by_id(plan);
    let mut memo: BTreeMap<String, usize> = BTreeMap::new();
    fn depth(
        id: &str,
        t: &BTreeMap<String, PlanTask>,
        memo: &mut BTreeMap<String, usize>,
    ) -> usize {
        if let Some(&d) = memo.get(id) {
            return d;
        }
        let d = 1 + t[id]
            .depends_on
            .iter()
            .map(|u| depth(u, t, memo))
            .max()
            .unwrap_or(0);
        memo.insert(id.to_string(), d);
        d
    }
    plan.tasks
        .iter()
        .map(|x| depth(&x.id, &t, &mut memo))
        .max()
        .unwrap_or(0)
}

#[test]
fn a_child_batch_waits_only_for_the_parent_batches_it_reads() {
    // Airflow tasks run for their run's date: the plan batches them.
    let dir = temp_project(&[
        (
            "dags/load.py",
            "from airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\n\nwith DAG(dag_id=\"load\", schedule=\"@daily\") as dag:\n    a = SQLExecuteQueryOperator(task_id=\"a\", sql=\"insert into a select * from src where d = '{{ ds }}'\")\n    b = SQLExecuteQueryOperator(task_id=\"b\", sql=\"insert into b select * from a where d = '{{ ds }}'\")\n    c = SQLExecuteQueryOperator(task_id=\"c\", sql=\"insert into c select * from b where d = '{{ ds }}'\")\n    a >> b >> c\n",
        ),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  a: { grain: day }\n  b: { grain: day }\n  c: { grain: day }\n",
        ),
    ]);
    let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
    let plan = plan_of(
        &g,
        &request(&["src"], "2026-01-01", "2026-01-14", "2026-02-01"),
    );
    let t = by_id(&plan);
    assert_eq!(
        t["b@2026-01-01..2026-01-07"].depends_on,
        ["a@2026-01-01..2026-01-07"]
    );
    assert_eq!(
        t["c@2026-01-08..2026-01-14"].depends_on,
        ["b@2026-01-08..2026-01-14"]
    );
    // Three datasets deep, two batches wide: the longest chain is three
    // tasks, not six as whole-dataset ordering would make it.
    assert_eq!(critical_path(&plan), 3);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_affected_partition_is_in_exactly_one_task(c in case()) {
        let g = build(&c);
        let req = request(&["t0"], &Grain::Day.key(day(c.from)), &Grain::Day.key(day(c.from + c.len)), AS_OF);
        let facts = TimeFacts::build(&g).unwrap();
        let (i, model) = impact(&g, &facts, &req, false).unwrap();
        let plan = tasks(&g, &model, &i).unwrap();
        for d in &i.datasets {
            if plan.assumed.contains(&d.id) {
                continue;
            }
            let mine: Vec<&PlanTask> = plan.tasks.iter().filter(|t| t.dataset == d.id).collect();
            if d.full {
                prop_assert_eq!(mine.len(), 1);
                continue;
            }
            let mut seen = BTreeSet::new();
            for t in &mine {
                for &(a, b) in &t.ranges {
                    let mut p = a;
                    while p < b {
                        prop_assert!(seen.insert(p), "partition twice in {}", d.name);
                        p = d.grain.next(p);
                    }
                }
            }
            prop_assert_eq!(seen.len() as u64, d.partitions, "{}", d.name);
        }
        // The document: shadows only, rewritten upstreams read from their
        // shadows, each swap after every task of its dataset.
        let doc = ripple::plan::document(&g, &model, &i, plan.clone(), &Default::default()).unwrap();
        let rewritten: BTreeSet<&str> = plan.tasks.iter().map(|t| t.dataset.as_str()).collect();
        for t in &doc.tasks {
            prop_assert!(t.writes.ends_with("__backfill"), "{} writes {}", t.task.id, t.writes);
            for (up, relation) in &t.reads {
                prop_assert_eq!(rewritten.contains(up.as_str()), relation.ends_with("__backfill"), "{} reads {} as {}", t.task.id, up, relation);
            }
        }
        for s in &doc.swaps {
            let mine: BTreeSet<&str> = plan.tasks.iter().filter(|t| t.dataset == s.dataset).map(|t| t.id.as_str()).collect();
            prop_assert_eq!(mine, s.depends_on.iter().map(String::as_str).collect::<BTreeSet<_>>());
        }
        // No task starts before the tasks it reads: partition by partition,
        // from the case's own edges, every upstream task whose hours a
        // partition reads is a direct dependency, and nothing else is.
        let index: BTreeMap<&str, usize> = i
            .datasets
            .iter()
            .map(|d| (d.id.as_str(), d.name[1..].parse::<usize>().unwrap()))
            .collect();
        for t in &plan.tasks {
            let me = index[t.dataset.as_str()];
            let grain = c.grains[me];
            let mut want = BTreeSet::new();
            for (up, m) in &c.ups[me] {
                if *m == TimeMapping::None {
                    continue;
                }
                let ug = c.grains[*up];
                for u in plan.tasks.iter().filter(|u| index[u.dataset.as_str()] == *up) {
                    let reads = |p: Hour| match m {
                        TimeMapping::Window(lo, hi) => (ug.shift(p, *lo), ug.shift(grain.next(p), *hi)),
                        _ => (p, grain.next(p)),
                    };
                    let everything = t.full || u.full || grain == Grain::None || ug == Grain::None || *m == TimeMapping::All;
                    let mut hit = everything;
                    let mut p = t.span.0;
                    while !hit && p < t.span.1 {
                        let (a, b) = reads(p);
                        hit = u.span.0 < b && a < u.span.1;
                        p = grain.next(p);
                    }
                    if hit {
                        want.insert(u.id.as_str());
                    }
                }
            }
            prop_assert_eq!(want, t.depends_on.iter().map(String::as_str).collect::<BTreeSet<_>>(), "{}", t.id);
        }
        // Dependencies point only at existing tasks, and never at itself.
        let ids: BTreeSet<&str> = plan.tasks.iter().map(|t| t.id.as_str()).collect();
        prop_assert_eq!(ids.len(), plan.tasks.len(), "task ids are unique");
        for t in &plan.tasks {
            for dep in &t.depends_on {
                prop_assert!(ids.contains(dep.as_str()) && dep != &t.id);
            }
        }
    }
}

#[test]
fn shadows_reads_validations_swaps_and_rollback() {
    let dir = temp_project(&[
        ("a.sql", "insert into a select id, d from src"),
        ("b.sql", "create table b as select count(*) as n from a"),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  src: { grain: day }\n  a:\n    grain: day\n    partition_column: d\n    unique_key: [id]\n    validate: \"select count(*) = 0 from {table} where id is null and {partition_filter}\"\n  b: { grain: none }\n",
        ),
    ]);
    let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
    let req = request(&["src"], "2026-01-10", "2026-01-11", "2026-02-01");
    let facts = TimeFacts::build(&g).unwrap();
    let (i, model) = impact(&g, &facts, &req, false).unwrap();
    let doc = ripple::plan::document(
        &g,
        &model,
        &i,
        tasks(&g, &model, &i).unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(doc.assumed, ["table.src"]);
    let a = doc
        .tasks
        .iter()
        .find(|t| t.task.dataset == "table.a")
        .unwrap();
    let b = doc
        .tasks
        .iter()
        .find(|t| t.task.dataset == "table.b")
        .unwrap();
    // Shadows are set up first, in one snapshot: production checked to be the
    // plain table assumed (nothing describes it) with the columns `a`'s
    // insert gives by position, a copy of it (empty for a full rebuild), and
    // the fingerprint of its restated rows. (An unqualified table's shadow is
    // unqualified: it lives where the job's session puts its table.
    // PostgreSQL copies keep constraints and indexes.)
    let setup_a = &doc.setup[0].sql;
    assert_eq!(setup_a[0], "begin isolation level repeatable read");
    assert!(setup_a[1].starts_with("do $ripple$"), "{}", setup_a[1]);
    assert!(
        setup_a[1].contains(
            "('a', cast(null as varchar), 'a', current_schema(), 'a', 'nothing (a plain table was assumed)', 'id,d', "
        ),
        "{}",
        setup_a[1]
    );
    assert_eq!(
        setup_a[2..5],
        [
            "drop table if exists \"a__backfill\"",
            "create table \"a__backfill\" (like \"a\" including all)",
            "insert into \"a__backfill\" select * from \"a\""
        ]
    );
    assert!(setup_a[6].starts_with(
        "create table \"a__backfill__fingerprint\" as select cast(cast(\"d\" as date) as varchar) as k, count(*) as n"
    ));
    assert_eq!(setup_a.last().unwrap(), "commit");
    let setup_b = &doc.setup[1].sql;
    assert_eq!(
        setup_b[3],
        "create table \"b__backfill\" (like \"b\" including all)"
    );
    assert!(
        !setup_b.iter().any(|s| s.starts_with("insert")),
        "a full rebuild's shadow starts empty: {setup_b:?}"
    );
    // Every task writes a shadow; reads of a rewritten upstream go to its shadow.
    assert_eq!(a.writes, "a__backfill");
    assert_eq!(b.writes, "b__backfill");
    assert_eq!(a.reads["table.src"], "src");
    assert_eq!(b.reads["table.a"], "a__backfill");
    let filter = "\"d\" >= '2026-01-10' and \"d\" < '2026-01-12'";
    assert_eq!(a.validations[0].check, "custom");
    assert_eq!(
        a.validations[0].sql,
        format!("select count(*) = 0 from \"a__backfill\" where id is null and {filter}")
    );
    let checks: Vec<&str> = a.validations.iter().map(|v| v.check.as_str()).collect();
    assert_eq!(checks, ["custom", "non_empty", "row_count", "unique_key"]);
    assert!(
        a.validations[3]
            .sql
            .contains("group by \"id\" having count(*) > 1")
    );
    // Row counts compared partition by partition: one empty in production
    // (late data) is left out of the comparison.
    assert!(
        a.validations[2]
            .sql
            .contains("select cast(\"d\" as date) as k, count(*) as n from \"a\" where"),
        "{}",
        a.validations[2].sql
    );
    // The task recomputes into a work table and replaces its partitions in the shadow.
    let script = &a.commands.sql;
    assert!(
        script
            .iter()
            .any(|s| s.starts_with("INSERT INTO \"a__backfill__work_20260110\"")),
        "{script:?}"
    );
    assert!(script.contains(&format!("delete from \"a__backfill\" where {filter}")));
    // One swap per dataset, after all its tasks: partitions for a, the table for b,
    // in place and by column name, all in one transaction on PostgreSQL.
    let swap_a = doc.swaps.iter().find(|s| s.dataset == "table.a").unwrap();
    assert_eq!(swap_a.depends_on, std::slice::from_ref(&a.task.id));
    // Production is checked again, and its restated rows must be those the
    // setup copied, before they are replaced.
    assert!(swap_a.sql[0].contains("changed"));
    assert_eq!(swap_a.sql[1], format!("delete from \"a\" where {filter}"));
    assert_eq!(
        swap_a.sql[2],
        format!(
            "insert into \"a\" (\"id\", \"d\") select \"id\", \"d\" from \"a__backfill\" where {filter}"
        )
    );
    let swap_b = doc.swaps.iter().find(|s| s.dataset == "table.b").unwrap();
    assert_eq!(swap_b.sql[1], "delete from \"b\"");
    assert_eq!(doc.swap_scripts.len(), 1);
    assert_eq!(
        doc.swap_scripts[0].first().map(String::as_str),
        Some("begin")
    );
    assert_eq!(
        doc.swap_scripts[0].last().map(String::as_str),
        Some("commit")
    );
    assert_eq!(
        doc.swap_scripts[0][1],
        "lock table \"a\", \"b\" in share row exclusive mode"
    );
    // Both tables checked in one statement, under the lock, before any swap.
    assert!(
        doc.swap_scripts[0][2]
            .contains("is not the table the plan was written for (before the swap")
    );
    assert!(doc.swap_scripts[0][2].contains(
        "('a', cast(null as varchar), 'a', current_schema(), 'a', 'nothing (a plain table was assumed)', 'id,d', "
    ));
    assert_eq!(
        doc.swap_scripts[0].len(),
        4 + swap_a.sql.len() + swap_b.sql.len()
    );
    assert_eq!(
        doc.rollback,
        [
            "drop table if exists \"a__backfill\"",
            "drop table if exists \"b__backfill\"",
            "drop table if exists \"a__backfill__fingerprint\"",
            "drop table if exists \"b__backfill__fingerprint\""
        ]
    );
    assert_eq!(doc.cleanup, doc.rollback);
}

#[test]
fn a_partial_swap_without_a_partition_column_is_refused() {
    // `a`'s partition column is read off its SQL (a date computed from the
    // source's timestamp); nothing says which of `c`'s columns is its date.
    let dir = temp_project(&[
        (
            "a.sql",
            "insert into a select id, cast(ts as date) as d from src",
        ),
        ("c.sql", "insert into c select id, created from src"),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  a: { grain: day }\n  c: { grain: day }\n",
        ),
    ]);
    let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
    let req = request(&["src"], "2026-01-10", "2026-01-12", "2026-02-01");
    let facts = TimeFacts::build(&g).unwrap();
    let (i, model) = impact(&g, &facts, &req, false).unwrap();
    let err = ripple::plan::document(
        &g,
        &model,
        &i,
        tasks(&g, &model, &i).unwrap(),
        &Default::default(),
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("`c`"), "{message}");
    assert!(!message.contains("`a`"), "{message}");
    assert!(message.contains("set `partition_column`"), "{message}");
    // Declared, the plan is written.
    let fixed = temp_project(&[
        (
            "a.sql",
            "insert into a select id, cast(ts as date) as d from src",
        ),
        ("c.sql", "insert into c select id, created from src"),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  a: { grain: day }\n  c: { grain: day, partition_column: created }\n",
        ),
    ]);
    let g = LineageGraph::build(load_project(fixed.path(), &LoadOptions::default()).unwrap());
    let (i, model) = impact(&g, &TimeFacts::build(&g).unwrap(), &req, false).unwrap();
    let doc = ripple::plan::document(
        &g,
        &model,
        &i,
        tasks(&g, &model, &i).unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(doc.swaps.len(), 2);
    let swap_a = doc.swaps.iter().find(|s| s.dataset == "table.a").unwrap();
    assert!(
        swap_a.sql[0].contains("\"d\" >= '2026-01-10'"),
        "{swap_a:?}"
    );
    // Misspelt where the job names its columns: refused before any run
    // (it once failed only when the shadow's setup ran).
    let misspelt = temp_project(&[
        (
            "c.sql",
            "insert into c (id, created) select id, created from src",
        ),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  c: { grain: day, partition_column: creatd }\n",
        ),
    ]);
    let g = LineageGraph::build(load_project(misspelt.path(), &LoadOptions::default()).unwrap());
    let (i, model) = impact(&g, &TimeFacts::build(&g).unwrap(), &req, false).unwrap();
    let message = ripple::plan::document(
        &g,
        &model,
        &i,
        tasks(&g, &model, &i).unwrap(),
        &Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("`creatd` of `c` (from ripple.yml)") && message.contains("id, created"),
        "{message}"
    );
}

#[test]
fn commands_follow_the_job_that_writes_each_dataset() {
    let g = LineageGraph::build(
        load_project(Path::new("fixtures/shop"), &LoadOptions::default()).unwrap(),
    );
    let req = request(
        &["landing.orders"],
        "2026-01-10",
        "2026-01-11",
        "2026-02-01",
    );
    let facts = TimeFacts::build(&g).unwrap();
    let (i, model) = impact(&g, &facts, &req, false).unwrap();
    let doc = ripple::plan::document(
        &g,
        &model,
        &i,
        tasks(&g, &model, &i).unwrap(),
        &Default::default(),
    )
    .unwrap();
    let task = |dataset: &str| {
        doc.tasks
            .iter()
            .find(|t| t.task.dataset == dataset)
            .unwrap_or_else(|| panic!("no task for {dataset}"))
    };
    // raw.orders is loaded by an Airflow task: backfill that task of that DAG.
    let load = task("source.raw.orders");
    assert_eq!(
        load.commands.airflow2.as_deref(),
        Some(
            "airflow dags backfill -s 2026-01-10 -e 2026-01-11 --reset-dagruns -y -t '^load\\.orders$' shop_daily"
        )
    );
    assert!(load.commands.airflow3.as_deref().unwrap().starts_with(
        "airflow backfill create --dag-id shop_daily --from-date 2026-01-10 --to-date 2026-01-11"
    ));
    // dbt builds shadows through the overlay: every restated model is
    // named in its table of shadows; a microbatch model runs
    // by event time, any other is rebuilt from scratch into its shadow.
    let daily = task("model.orders_daily");
    let command = daily.commands.dbt.as_deref().unwrap();
    assert!(
        command.contains(" --select path:models/marts/finance/orders_daily.sql --event-time-start"),
        "{command}"
    );
    assert!(
        command.ends_with("--event-time-start 2024-01-01 --event-time-end 2024-01-08"),
        "{command}"
    );
    let stg = task("model.stg_orders");
    assert!(
        stg.commands
            .dbt
            .as_deref()
            .unwrap()
            .ends_with("--full-refresh"),
        "{:?}",
        stg.commands
    );
    // Airflow tasks write where they write: the plan says so.
    assert!(
        doc.warnings
            .iter()
            .any(|w| w.starts_with("`raw.orders` is an Airflow task: its SQL runs per date")),
        "{:?}",
        doc.warnings
    );
}

/// The table of shadows the overlay's macro file holds (a Jinja literal
/// that is JSON for ASCII names).
fn overlay_shadows(doc: &ripple::plan::PlanDocument) -> serde_json::Value {
    let line = doc
        .dbt_overlay
        .iter()
        .find(|l| l.contains("ripple_overlay_macros/ripple_overlay.sql"))
        .unwrap();
    let text = &shell_words(line.as_str())[2];
    let start = text.find("{%- do return(").unwrap() + "{%- do return(".len();
    let end = start + text[start..].find(") -%}").unwrap();
    serde_json::from_str(&text[start..end]).unwrap()
}

#[test]
fn a_stock_dbt_project_runs_through_an_overlay_for_any_shadow_pattern() {
    for pattern in [
        "{schema}.{table}__backfill",
        "backfill.{table}",
        "{schema}.shadow_{table}",
        "elsewhere.{schema}.{table}",
    ] {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(Path::new("fixtures/worked_example/declared"), dir.path());
        let yml = dir.path().join("ripple.yml");
        let config = std::fs::read_to_string(&yml).unwrap();
        let config = config.replace(
            "backfill:\n",
            &format!("backfill:\n  shadow: \"{pattern}\"\n"),
        );
        std::fs::write(&yml, config).unwrap();
        let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
        // No macro of ripple's, none of the project's naming macros.
        assert_eq!(g.dbt_root.as_ref().map(|r| r.name_macros.len()), Some(0));
        let req = request(&["raw.orders"], "2026-01-10", "2026-01-12", "2026-02-01");
        let (i, model) = impact(&g, &TimeFacts::build(&g).unwrap(), &req, false).unwrap();
        let doc = ripple::plan::document(
            &g,
            &model,
            &i,
            tasks(&g, &model, &i).unwrap(),
            &Default::default(),
        );
        // dbt cannot write a shadow in another database beside production:
        // refused, never a plan that stops at its first task.
        if pattern.starts_with("elsewhere") {
            let e = doc.unwrap_err().to_string();
            assert!(
                e.contains("another database") && e.contains("backfill.shadow"),
                "{e}"
            );
            continue;
        }
        let doc = doc.unwrap();
        assert!(!doc.tasks.is_empty());
        for t in &doc.tasks {
            let command = t
                .commands
                .dbt
                .as_deref()
                .unwrap_or_else(|| panic!("{pattern}: {t:?}"));
            assert!(
                command.starts_with("dbt build --indirect-selection cautious --project-dir \"$RIPPLE_DBT_OVERLAY\" --target-path \"$RIPPLE_DBT_OVERLAY/target\""),
                "{command}"
            );
            // The overlay's table names each restated model's shadow as
            // the plan's pattern makes it; no command carries it.
            assert!(!command.contains("--vars"), "{command}");
            let shadows = overlay_shadows(&doc);
            let shadows = shadows.as_object().unwrap();
            let d = g.dataset(&t.task.dataset).unwrap();
            let parts: Vec<&str> = t.writes.split('.').collect();
            let named = &shadows[&d.name];
            assert_eq!(
                named["identifier"],
                *parts.last().unwrap(),
                "{pattern}: {named}"
            );
            assert_eq!(
                named["schema"],
                parts[parts.len() - 2],
                "{pattern}: {named}"
            );
            assert_eq!(
                named.get("database").is_some(),
                parts.len() == 3,
                "{pattern}: {named}"
            );
        }
        assert!(
            !doc.dbt_overlay.is_empty()
                && doc.dbt_overlay_functions.contains("ripple_overlay_link()")
        );
        assert!(
            doc.warnings.iter().all(|w| !w.contains("dbt")),
            "{:?}",
            doc.warnings
        );
    }
    // The shop defines generate_schema_name and generate_alias_name: the
    // overlay renames them and calls them for production names.
    let shop = LineageGraph::build(
        load_project(Path::new("fixtures/shop"), &LoadOptions::default()).unwrap(),
    );
    let root = shop.dbt_root.as_ref().unwrap();
    let files: Vec<&str> = root.name_macros.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        files,
        [
            "macros/generate_schema_name.sql",
            "macros/ripple_shadows.sql"
        ]
    );
    let (lines, _) = ripple::plan::executors::dbt_overlay_lines(
        root,
        &Default::default(),
        &Default::default(),
        false,
    )
    .unwrap();
    let text: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
    assert_eq!(text[0], "ripple_overlay_link macros", "{text:?}");
    let overlay_macros = text
        .iter()
        .find(|l| l.contains("ripple_overlay_macros/"))
        .unwrap();
    assert!(
        overlay_macros
            .contains("return(ripple_user__generate_schema_name(custom_schema_name, node))")
    );
    assert!(
        overlay_macros
            .contains("return(ripple_user__generate_alias_name(custom_alias_name, node))")
    );
    assert!(
        overlay_macros
            .contains("adapter.dispatch('\\''generate_database_name'\\'', '\\''dbt'\\'')")
    );
}

/// `line` split into words as the shell would (single quotes only, as
/// ripple quotes).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            '"' if !quoted => started = true,
            '\\' if !quoted => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            ' ' if !quoted => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

fn plan_cli(format: &str) -> String {
    let out = worked_example("plan", format)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn worked_example_plan_snapshots() {
    insta::assert_snapshot!("worked_example_plan_json", plan_cli("json"));
    insta::assert_snapshot!("worked_example_plan_markdown", plan_cli("markdown"));
}

#[test]
fn the_shipped_schema_is_current_and_plans_validate_against_it() {
    let generated = ripple::emit::plan::schema();
    let shipped = std::fs::read_to_string("docs/plan.schema.json").unwrap_or_default();
    if std::env::var_os("RIPPLE_WRITE_SCHEMA").is_some() {
        std::fs::write("docs/plan.schema.json", &generated).unwrap();
    } else {
        assert_eq!(
            shipped, generated,
            "docs/plan.schema.json is stale: run RIPPLE_WRITE_SCHEMA=1 cargo test --test plan"
        );
    }
    let schema: serde_json::Value = serde_json::from_str(&generated).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for (args, name) in [
        (
            vec![
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-12",
                "--as-of",
                "2026-02-01",
                "--project",
                "fixtures/worked_example/declared",
            ],
            "worked example",
        ),
        (
            vec![
                "landing.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-11",
                "--as-of",
                "2026-02-01",
                "--project",
                "fixtures/shop",
                "--start",
                "2026-02-01T20",
            ],
            "shop, scheduled",
        ),
        (
            vec![
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-12",
                "--as-of",
                "2026-02-01",
                "--project",
                "fixtures/worked_example/inferred",
            ],
            "worked example, inferred",
        ),
    ] {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .arg("plan")
            .args(&args)
            .args(["--format", "json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}

#[test]
fn planning_a_job_that_failed_to_read_is_refused() {
    let dir = temp_project(&[
        (
            "a.sql",
            "insert into a select * from src;\nselect (( from broken;",
        ),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  a: { grain: day, partition_column: d }\n",
        ),
    ]);
    let run = |extra: &[&str]| plan_src_one_day(dir.path()).args(extra).assert();
    run(&[])
        .code(2)
        .stderr(predicates::str::contains("a.sql:2:"))
        .stderr(predicates::str::contains("--allow-partial"));
    // Even so, a plain SQL job is run only when every statement can be
    // checked to write nothing but shadows.
    run(&["--allow-partial"])
        .code(2)
        .stderr(predicates::str::contains(
            "a.sql:2: statement 2: does not parse",
        ));
}

#[test]
fn a_file_that_failed_to_read_anywhere_stops_the_plan_unless_allowed() {
    // `b.sql` writes nothing ripple can see: whatever it fills from `src`
    // would be missing from the plan.
    let dir = temp_project(&[
        ("a.sql", "insert into a (id, d) select id, d from src;"),
        (
            "b.sql",
            "insert into b select * from src on conflict (lower(name)) do nothing;",
        ),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  a: { grain: day, partition_column: d }\n",
        ),
    ]);
    let run = |extra: &[&str]| plan_src_one_day(dir.path()).args(extra).assert();
    run(&[])
        .code(2)
        .stderr(predicates::str::contains(
            "1 file of the project failed to read",
        ))
        .stderr(predicates::str::contains("b.sql:1:"))
        .stderr(predicates::str::contains("--allow-partial"));
    run(&["--allow-partial"])
        .success()
        .stderr(predicates::str::contains(
            "warning: 1 file of the project failed to read",
        ));
}

/// `ripple plan src` for one day over a project written in a temp dir.
fn plan_src_one_day(project: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("ripple").unwrap();
    cmd.args([
        "plan",
        "src",
        "--from",
        "2026-01-10",
        "--to",
        "2026-01-10",
        "--as-of",
        "2026-02-01",
        "--project",
    ])
    .arg(project);
    cmd
}

#[test]
fn a_cycle_is_refused_with_where_it_is() {
    let dir = temp_project(&[
        ("a.sql", "insert into a select * from b join src using (id)"),
        ("b.sql", "insert into b select * from a"),
    ]);
    plan_src_one_day(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "the lineage graph has a cycle through",
        ))
        .stderr(predicates::str::contains("run `ripple check`"));
}

#[test]
fn an_unbounded_impact_is_refused() {
    let dir = temp_project(&[
        ("d.sql", "create table dim as select * from src"),
        ("f.sql", "insert into daily select * from dim"),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  dim: { grain: none }\n  daily: { grain: day }\n",
        ),
    ]);
    plan_src_one_day(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "`daily` is affected back to the beginning of time; set its `start`",
        ));
}

#[test]
fn files_downstream_are_refused_and_files_upstream_are_sources() {
    let dir = temp_project(&[
        (
            "load.sql",
            "copy src from '/data/src.csv' with (format csv)",
        ),
        ("a.sql", "insert into a select * from src"),
        ("export.sql", "copy (select * from a) to '/exports/a.csv'"),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  src: { grain: day, partition_column: d }\n  a: { grain: day, partition_column: d }\n",
        ),
    ]);
    let graph = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args(["graph", "--format", "json", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let graph: serde_json::Value = serde_json::from_slice(&graph.stdout).unwrap();
    let kinds: BTreeMap<String, String> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["id"].as_str().unwrap().to_string(),
                n["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(kinds["path./data/src.csv"], "path");
    assert_eq!(kinds["path./exports/a.csv"], "path");
    assert_eq!(kinds["table.a"], "table");
    // Nothing can shadow files: the plan names them and their job.
    plan_src_one_day(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "`/exports/a.csv` is files written by `sql:export.sql`",
        ));
    std::fs::remove_file(dir.path().join("export.sql")).unwrap();
    plan_src_one_day(dir.path()).assert().success();
}

#[test]
fn redshift_is_asked_for_the_columns_a_star_hides() {
    // Redshift has no anonymous block to read the catalog with: the plan
    // asks for the columns instead of writing SQL that cannot run.
    let dir = temp_project(&[
        ("a.sql", "insert into a select * from src"),
        (
            "ripple.yml",
            "dialect: redshift\ndatasets:\n  src: { grain: day }\n  a: { grain: day, partition_column: d }\n",
        ),
    ]);
    let out = plan_src_one_day(dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("redshift cannot insert by name; list the columns in the job"),
        "{stderr}"
    );
    assert!(!stderr.contains("rewrite the job"), "{stderr}");
    std::fs::write(
        dir.path().join("a.sql"),
        "insert into a (d, n) select d, n from src",
    )
    .unwrap();
    plan_src_one_day(dir.path()).assert().success();
}

#[test]
fn worked_example_plan_dot_and_mermaid_snapshots() {
    insta::assert_snapshot!("worked_example_plan_dot", plan_cli("dot"));
    let mermaid = plan_cli("mermaid");
    assert!(mermaid.starts_with("flowchart LR\n"));
    insta::assert_snapshot!("worked_example_plan_mermaid", mermaid);
}

#[test]
fn the_shell_script_runs_in_order_and_stops_at_a_failed_validation() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("a.sql"), "insert into a select * from src").unwrap();
    std::fs::write(
        root.join("b.sql"),
        "create table b as select count(*) from a",
    )
    .unwrap();
    std::fs::write(root.join("ripple.yml"), "dialect: postgres\ndatasets:\n  src: { grain: day }\n  a: { grain: day, partition_column: d }\n  b: { grain: none }\n").unwrap();
    let script = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "plan",
            "src",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-10",
            "--as-of",
            "2026-02-01",
            "--format",
            "shell",
            "--project",
        ])
        .arg(root)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    std::fs::write(root.join("plan.sh"), &script).unwrap();
    // A fake SQL client: logs every statement, answers `t` (or `f` for
    // validations when FAIL is set).
    let log = root.join("log.txt");
    let fake = root.join("fake_sql.sh");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> {log:?}\ncase \"$1\" in select*) if [ -n \"$FAIL\" ]; then echo f; else echo t; fi;; esac\n"),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&fake)
        .status()
        .unwrap();
    let run = |fail: bool| {
        let _ = std::fs::remove_file(&log);
        let mut cmd = std::process::Command::new("bash");
        cmd.arg(root.join("plan.sh")).env("RIPPLE_SQL", &fake);
        if fail {
            cmd.env("FAIL", "1");
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            std::fs::read_to_string(&log).unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, log_ok, _) = run(false);
    assert_eq!(code, Some(0));
    let setup = log_ok
        .find("create table \"b__backfill\" (like \"b\" including all)")
        .expect("shadows are set up");
    let a_insert = log_ok
        .find("INSERT INTO \"a__backfill__work_20260110\"")
        .expect("a runs");
    let b_create = log_ok
        .find("CREATE TABLE \"b__backfill__work_full\"")
        .expect("b runs");
    let swap = log_ok
        .find("begin;\nlock table \"a\", \"b\" in share row exclusive mode;\n")
        .expect("a and b are swapped in one transaction, locked first");
    let cleanup = log_ok
        .rfind("drop table if exists \"b__backfill\";")
        .expect("shadows are dropped after the swap");
    assert!(
        setup < a_insert && a_insert < b_create && b_create < swap && swap < cleanup,
        "{log_ok}"
    );
    assert!(log_ok[swap..].contains("delete from \"b\";\ninsert into \"b\""));
    let (code, log_fail, stderr) = run(true);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("validation non_empty of a@2026-01-10..2026-01-10 failed"),
        "{stderr}"
    );
    assert!(
        !log_fail.contains("delete from \"a\""),
        "no swap after a failed validation: {log_fail}"
    );
    assert!(
        !log_fail.contains("b__backfill__work_full"),
        "no later task after a failed validation"
    );
}

#[test]
fn the_airflow_dag_parses_and_encodes_the_task_graph() {
    let text = plan_cli("airflow-dag");
    // Every task runs through Airflow's own operators: `run_sql` exists
    // only in the shell script (planned without `--executor`, the DAG's
    // SQL tasks once called it and failed with "command not found").
    assert!(!text.contains("run_sql"), "{text}");
    for project in ["fixtures/backfill_airflow", "fixtures/shop"] {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-11",
                "--as-of",
                "2026-03-01",
                "--format",
                "airflow-dag",
                "--project",
                project,
            ])
            .output()
            .unwrap();
        let dag = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !dag.contains("run_sql") && dag.contains("SQLExecuteQueryOperator"),
            "{project}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    std::fs::write(dir.path().join("dags/plan.py"), &text).unwrap();
    // Read back with ripple's own (static) Airflow reader.
    let dags = ripple::ingest::read_dags(
        dir.path(),
        &[dir.path().join("dags")],
        ripple::sql::SqlDialect::Postgres,
    );
    assert!(
        dags.warnings
            .iter()
            .all(|w| !w.message.contains("syntax error")),
        "{:?}",
        dags.warnings
    );
    let dag = &dags.dags[0];
    assert_eq!(dag.dag_id, "ripple_backfill");
    let task = |id: &str| {
        dag.tasks
            .iter()
            .find(|t| t.task_id == id)
            .unwrap_or_else(|| panic!("no {id}"))
    };
    let mut up = task("orders_7d_2026-01-10..2026-01-18").upstream.clone();
    up.sort();
    // After the task it reads, and after the shadows it writes and reads
    // exist; and, the project having production DAGs, after its wait for
    // them to be clear.
    assert_eq!(
        up,
        [
            "shadow__model.orders_7d",
            "shadow__model.stg_orders",
            "stg_orders_2026-01-10..2026-01-12",
            "wait__orders_7d_2026-01-10..2026-01-18"
        ]
    );
    assert_eq!(
        task("wait__orders_7d_2026-01-10..2026-01-18").operator,
        "ProductionClearSensor"
    );
    // One swap for the whole plan (PostgreSQL: one transaction), then cleanup.
    assert_eq!(task("swap_0").operator, "SQLExecuteQueryOperator");
    // The swap waits for every task, checks or none.
    for skipped in [
        &[][..],
        &["--skip-check", "non-empty", "--skip-check", "row-count"][..],
    ] {
        let out = worked_example("plan", "airflow-dag")
            .args(skipped)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        std::fs::write(dir.path().join("dags/plan.py"), &out).unwrap();
        let dags = ripple::ingest::read_dags(
            dir.path(),
            &[dir.path().join("dags")],
            ripple::sql::SqlDialect::Postgres,
        );
        let dag = &dags.dags[0];
        let swap = dag.tasks.iter().find(|t| t.task_id == "swap_0").unwrap();
        // Through the wait for production to be clear, when there is one.
        let mut before = swap.upstream.clone();
        if let Some(wait) = dag.tasks.iter().find(|t| t.task_id == "wait_swap") {
            assert_eq!(swap.upstream, ["wait_swap"]);
            before.extend(wait.upstream.iter().cloned());
        }
        for t in &dag.tasks {
            let runs = !t.task_id.starts_with("shadow__")
                && !t.task_id.starts_with("validate__")
                && !t.task_id.starts_with("wait")
                && !t.task_id.starts_with("swap_")
                && t.task_id != "cleanup";
            if runs {
                assert!(
                    before.contains(&t.task_id),
                    "{skipped:?}: swap_0 does not wait for {}: {:?}",
                    t.task_id,
                    swap.upstream
                );
            }
        }
    }
    assert_eq!(task("cleanup").upstream, ["swap_0"]);
    assert_eq!(
        task("dim_customers_full").pool.as_deref(),
        Some("ripple_backfill")
    );
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok()
    {
        let ok = std::process::Command::new("python3")
            .args(["-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())"])
            .arg(dir.path().join("dags/plan.py"))
            .status()
            .unwrap();
        assert!(ok.success(), "python3 cannot parse the DAG");
    }
}

#[test]
fn scheduled_plans_keep_to_windows_and_fail_clearly_past_a_deadline() {
    let run = |extra: &[&str]| {
        worked_example("plan", "json")
            .args(["--start", "2026-02-01T18"])
            .args(extra)
            .assert()
    };
    let out = run(&[]).success().get_output().stdout.clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["schedule"]["max_concurrency"], 4);
    // One run per dataset (their jobs cannot take dates): one night suffices.
    assert_eq!(doc["schedule"]["windows_used"], 1);
    for t in doc["tasks"].as_array().unwrap() {
        let start = t["start"].as_str().unwrap();
        let hour: u32 = start[11..13].parse().unwrap();
        // Inside 20:00-06:00, and clear of the 02:00-03:30 production run.
        assert!(!(6..20).contains(&hour), "{start}");
        assert!(
            !(start[11..16] >= *"02:00" && start[11..16] < *"03:30"),
            "{start}"
        );
    }
    run(&["--deadline", "2026-02-01T21:00"])
        .code(2)
        .stderr(predicates::str::contains(
            "needs 1 window at max_concurrency 4 and ends 2026-02-01T22:15Z",
        ));
}

#[test]
fn quoted_columns_templates_and_calls_found_by_a_trial() {
    // A column whose name needs quotes stays one identifier in every
    // statement ripple writes.
    let dir = temp_project(&[
        (
            "d.sql",
            "create table if not exists mart.d (\"Order Date\" date, n int);\ndelete from mart.d;\ninsert into mart.d (\"Order Date\", n) select order_date, count(*) from raw.t group by 1",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  raw.t: { grain: day, start: 2026-01-01 }\n  mart.d: { partition_column: Order Date }\n",
        ),
    ]);
    let out = plan_src_like(dir.path(), "raw.t").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("(\"Order Date\", \"n\")"), "{text}");
    assert!(!text.contains("\"\"\"Order Date\"\"\""), "{text}");
    // A plain SQL job with a template, or one calling a procedure, is refused.
    for (job, what) in [
        (
            "insert into mart.d select * from raw.t where d = '{{ ds }}'",
            "holds a template",
        ),
        (
            "insert into mart.d select * from raw.t;\ncall mart.cleanup()",
            "ripple cannot tell what `CALL mart.cleanup()",
        ),
        (
            "insert into mart.d select * from raw.t;\nalter schema raw rename to raw_old",
            "ALTER SCHEMA",
        ),
    ] {
        let dir = temp_project(&[
            ("d.sql", job),
            (
                "ripple.yml",
                "dialect: postgres\ndatasets:\n  raw.t: { grain: day, start: 2026-01-01 }\n  mart.d: { partition_column: d }\n",
            ),
        ]);
        plan_src_like(dir.path(), "raw.t")
            .assert()
            .code(2)
            .stderr(predicates::str::contains("d.sql:"))
            .stderr(predicates::str::contains(what));
    }
}

/// `ripple plan TABLE` for 2026-01-10 as a shell script.
fn plan_src_like(project: &Path, table: &str) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("ripple").unwrap();
    cmd.args([
        "plan",
        table,
        "--from",
        "2026-01-10",
        "--to",
        "2026-01-10",
        "--as-of",
        "2026-02-01",
        "--format",
        "shell",
        "--project",
    ])
    .arg(project);
    cmd
}

#[test]
fn hostile_names_cannot_run_commands_or_escape_their_shadow() {
    // A table whose quoted name holds a line break and a shell command, and
    // one whose quoted name holds a dot.
    let dir = temp_project(&[
        (
            "evil.sql",
            "create table \"evil\ntouch pwned #\" as select * from src;\ncreate table s.\"a.b\" as select * from src",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  src: { grain: none }\n",
        ),
    ]);
    let plan = |format: &str| {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "src",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-10",
                "--as-of",
                "2026-02-01",
                "--format",
                format,
                "--project",
            ])
            .arg(dir.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    // The script runs under a fake client, and the name never runs.
    for format in ["shell", "commands"] {
        let script = plan(format);
        let run = dir.path().join(format!("run_{format}"));
        std::fs::create_dir_all(&run).unwrap();
        let body = if format == "shell" {
            script
        } else {
            format!("run_sql() {{ :; }}\n{script}")
        };
        std::fs::write(run.join("plan.sh"), body).unwrap();
        std::fs::write(
            run.join("fake.sh"),
            "#!/bin/sh\ncase \"$1\" in select*) echo t;; esac\n",
        )
        .unwrap();
        let status = std::process::Command::new("bash")
            .arg("plan.sh")
            .current_dir(&run)
            .env("RIPPLE_SQL", "sh fake.sh")
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "{format}");
        assert!(
            !run.join("pwned").exists(),
            "{format}: a name ran as a command"
        );
    }
    // The dotted name's shadow stays in its schema, as one quoted part.
    let json: serde_json::Value = serde_json::from_str(&plan("json")).unwrap();
    let writes: Vec<&str> = json["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["writes"].as_str().unwrap())
        .collect();
    assert!(writes.contains(&"s.\"a.b__backfill\""), "{writes:?}");
    // The Airflow DAG parses as Python.
    let dag = plan("airflow-dag");
    if let Ok(out) = std::process::Command::new("python3")
        .args(["-c", "import ast,sys; ast.parse(sys.stdin.read())"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(dag.as_bytes())?;
            c.wait()
        })
    {
        assert!(out.success(), "the DAG does not parse");
    }
}

#[test]
fn a_job_writing_its_table_under_another_name_is_refused() {
    // The graph knows the table by one spelling; the job writes a quoted
    // mixed-case one: the task would fill nothing, so the plan is refused.
    let dir = temp_project(&[
        ("evil.sql", "create table \"Evil\" as select * from src"),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  src: { grain: none }\n",
        ),
    ]);
    let out = plan_src_like(dir.path(), "src").output().unwrap();
    if out.status.success() {
        // Planned: then the task must write the table's work table.
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Evil__backfill__work_full"), "{text}");
    } else {
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("writes no table named"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_shadow_pattern_naming_production_is_refused() {
    for pattern in ["{schema}.{table}", "", "s.fixed", "{table}", "{table}__bf"] {
        let dir = temp_project(&[
            ("a.sql", "create table s.a as select * from src"),
            ("b.sql", "create table s.b as select * from src"),
            (
                "ripple.yml",
                &format!(
                    "datasets:\n  src: {{ grain: none }}\nbackfill:\n  shadow: \"{pattern}\"\n"
                ),
            ),
        ]);
        plan_src_like(dir.path(), "src")
            .assert()
            .code(2)
            .stderr(predicates::str::contains("backfill.shadow"));
    }
}

#[test]
fn views_made_beside_tables_and_assumed_hourly_grains_found_by_a_second_trial() {
    // A job filling a table and making a view over it, and a job making two
    // views: each view's task makes only that view, over the shadows.
    let dir = temp_project(&[
        (
            "jobs/daily.sql",
            "create table if not exists mart.daily (order_date date, n bigint);\ndelete from mart.daily;\ninsert into mart.daily (order_date, n) select order_date, count(*) from raw.t group by 1;\ncreate or replace view mart.v_daily as select order_date, n from mart.daily where n > 0",
        ),
        (
            "jobs/views.sql",
            "create or replace view mart.v_big as select order_date from mart.daily where n > 2;\ncreate or replace view mart.v_small as select order_date from mart.daily where n <= 2",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  raw.t: { grain: day, start: 2026-01-01, partition_column: order_date }\n",
        ),
    ]);
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "plan",
            "raw.t",
            "--from",
            "2026-01-11",
            "--to",
            "2026-01-12",
            "--as-of",
            "2026-02-01",
            "--format",
            "json",
            "--project",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let script = |dataset: &str| -> Vec<String> {
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["dataset"] == dataset)
            .unwrap()["commands"]["sql"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        script("table.mart.v_big"),
        [
            "drop view if exists \"mart\".\"v_big__backfill\"",
            "CREATE OR REPLACE VIEW \"mart\".\"v_big__backfill\" AS SELECT order_date FROM \"mart\".\"daily__backfill\" WHERE n > 2"
        ]
    );
    assert_eq!(script("table.mart.v_daily").len(), 2);
    assert!(
        !script("table.mart.daily")
            .iter()
            .any(|s| s.contains("CREATE OR REPLACE VIEW")),
        "the table's task leaves the view out"
    );
    // Views are neither copied nor swapped.
    let swapped: Vec<&str> = doc["swaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["dataset"].as_str().unwrap())
        .collect();
    assert_eq!(swapped, ["table.mart.daily"]);
    // A daily table over hourly events: its grouped `cast(ts as date)` says
    // day, and its plan restates the whole day.
    let dir = temp_project(&[
        (
            "d.sql",
            "drop table if exists mart.daily;\ncreate table mart.daily as select cast(ts as date) as day, count(*) as n from raw.ev group by 1",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  raw.ev: { grain: hour, start: 2026-01-01T00, partition_column: ts }\n",
        ),
    ]);
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "plan",
            "raw.ev",
            "--from",
            "2026-01-10T05",
            "--to",
            "2026-01-10T07",
            "--as-of",
            "2026-02-01",
            "--format",
            "json",
            "--project",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let daily = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["dataset"] == "table.mart.daily")
        .unwrap();
    assert_eq!(daily["from"], "2026-01-10");
    // One whose grain nothing says is only assumed to be hourly: refused.
    let dir = temp_project(&[
        (
            "d.sql",
            "drop table if exists mart.daily;\ncreate table mart.daily as select ts as day, count(*) as n from raw.ev group by 1",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  raw.ev: { grain: hour, start: 2026-01-01T00, partition_column: ts }\n",
        ),
    ]);
    assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "plan",
            "raw.ev",
            "--from",
            "2026-01-10T05",
            "--to",
            "2026-01-10T07",
            "--as-of",
            "2026-02-01",
            "--project",
        ])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("`mart.daily` is only assumed"));
}

#[test]
fn checks_are_turned_off_or_retuned_on_the_command_line() {
    let dir = temp_project(&[
        ("a.sql", "insert into a select id, d from src"),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  src: { grain: day }\n  a: { grain: day, partition_column: d, unique_key: [id] }\n",
        ),
    ]);
    let checks = |extra: &[&str]| -> Vec<String> {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "src",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-10",
                "--as-of",
                "2026-02-01",
                "--format",
                "json",
                "--project",
            ])
            .arg(dir.path())
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        doc["tasks"][0]["validations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                format!(
                    "{} {}",
                    v["check"].as_str().unwrap(),
                    v["sql"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(checks(&[]).len(), 3);
    let kept = checks(&["--skip-check", "non-empty", "--skip-check", "unique-key"]);
    assert_eq!(kept.len(), 1);
    assert!(kept[0].starts_with("row_count "));
    assert!(kept[0].contains("(1 - 0.1)"), "{}", kept[0]);
    let tuned = checks(&["--row-count-tolerance", "0.5", "--skip-check", "row-count"]);
    assert!(tuned.iter().all(|c| !c.starts_with("row_count")));
    let tuned = checks(&["--row-count-tolerance", "0.5"]);
    assert!(tuned.iter().any(|c| c.contains("(1 - 0.5)")), "{tuned:?}");
    // Nonsense is refused at the edge.
    assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "plan",
            "src",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-10",
            "--row-count-tolerance=-1",
            "--project",
        ])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("fraction from 0 to below 1"));
}

#[test]
fn a_start_with_impossible_minutes_is_refused() {
    for start in [
        "2026-02-01T20:9223372036854775807",
        "2026-02-01T20:60",
        "2026-02-01T20:-5",
    ] {
        worked_example("plan", "json")
            .args(["--start", start])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("is not a time"));
    }
    worked_example("plan", "json")
        .args(["--start", "2026-02-01T20:30"])
        .assert()
        .success();
}

#[test]
fn a_dbt_snapshot_is_never_rebuilt_and_the_way_out_works() {
    let dir = tempfile::tempdir().unwrap();
    temp_project::copy_tree(Path::new("fixtures/shop"), dir.path());
    let plan = || {
        assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "stg_customers",
                "--from",
                "2024-03-01",
                "--to",
                "2024-03-02",
                "--as-of",
                "2024-04-01",
                "--no-cache",
                "--format",
                "json",
                "--project",
            ])
            .arg(dir.path())
            .assert()
    };
    plan().code(2).stderr(predicates::str::contains(
        "refusing to plan `customers_snapshot`: it is a dbt snapshot",
    ));
    // What the refusal says to do: stop the change at the snapshot.
    let yml = dir.path().join("ripple.yml");
    let text = std::fs::read_to_string(&yml).unwrap().replacen(
        "datasets:\n",
        "datasets:\n  customers_snapshot: { upstream: { stg_customers: none } }\n",
        1,
    );
    std::fs::write(&yml, text).unwrap();
    let out = plan().success();
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(
        doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !t["dataset"]
                .as_str()
                .unwrap()
                .contains("customers_snapshot")),
        "{doc}"
    );
}

#[test]
fn a_validation_that_could_change_production_is_refused() {
    // Run verbatim before the swap, `validate` once held a `delete` and a
    // `drop table`: on PostgreSQL production lost its rows before any swap.
    let plan_as = |validate: &str, column: &str| {
        let yml = format!(
            "dialect: postgres\ndatasets:\n  src: {{ grain: day }}\n  a:\n    grain: day\n    partition_column: '{column}'\n    validate: '{validate}'\n"
        );
        let dir = temp_project(&[
            ("a.sql", "insert into a select id, d from src"),
            ("ripple.yml", &yml),
        ]);
        let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
        let req = request(&["src"], "2026-01-10", "2026-01-11", "2026-02-01");
        let facts = TimeFacts::build(&g).unwrap();
        let (i, model) = impact(&g, &facts, &req, false).unwrap();
        ripple::plan::document(
            &g,
            &model,
            &i,
            tasks(&g, &model, &i).unwrap(),
            &Default::default(),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let plan_with = |validate: &str| plan_as(validate, "d");
    // A placeholder inside a quoted name: the filter's quoted column name
    // lands outside quotes, and a column named `"; delete ...; --` ran.
    let err = plan_as(
        r#"select count(*) >= 0 from {table} as "a{partition_filter}""#,
        r#"; delete from src; --"#,
    )
    .unwrap_err();
    assert!(
        err.contains("with its placeholders filled") && err.contains("never inside quotes"),
        "{err}"
    );
    for (validate, why) in [
        (
            "select count(*) > 0 from {table}; delete from a; select true",
            "holds 3 statements",
        ),
        ("delete from a", "is not a query"),
        (
            "with x as (delete from a returning *) select true",
            "writes",
        ),
        ("select true into kept from {table}", "writes"),
        // A row lock makes production's writers wait on the validation.
        ("select count(*) > 0 from a for update", "locks"),
        ("select exists (select 1 from a for share)", "locks"),
    ] {
        let err = plan_with(validate).unwrap_err();
        assert!(
            err.contains("`validate`") && err.contains(why),
            "{validate}: {err}"
        );
    }
    plan_with("select count(*) = 0 from {table} where id is null and {partition_filter}").unwrap();
}

#[test]
fn upper_folding_engines_are_addressed_in_their_own_case() {
    // On Snowflake (Oracle, Db2, Exasol) `mart.a` is `MART.A`, and
    // `mart."a"` another, lower-case table: a plan quoting lower-case names
    // addressed that other table (or none) at every step, the swap too.
    for dialect in ["snowflake", "oracle"] {
        let dir = temp_project(&[
            (
                "a.sql",
                "delete from mart.a where d >= '2026-01-01';\ninsert into mart.a (d, n) select d, n from src",
            ),
            (
                "legacy.sql",
                "create table mart.\"a\" as select d from src2",
            ),
            (
                "ripple.yml",
                &format!(
                    "dialect: {dialect}\ndatasets:\n  src: {{ grain: day }}\n  mart.a: {{ grain: day, partition_column: d }}\n"
                ),
            ),
        ]);
        let out = plan_src_one_day(dir.path())
            .args(["--format", "shell"])
            .output()
            .unwrap();
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Every name ripple writes is the upper-case one; none lower-case.
        assert!(script.contains("\"MART\".\"A__BACKFILL\""), "{script}");
        assert!(script.contains("\"MART\".\"A\""), "{script}");
        assert!(script.contains("\"D\""), "{script}");
        assert!(!script.contains("\"mart\""), "{script}");
        assert!(!script.contains("\"d\""), "{script}");
        // Two tables, two datasets: no writer of one is the other's.
        let check = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args(["check", "--no-cache", "--project"])
            .arg(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&check.stdout);
        assert!(!text.contains("duplicate-writer"), "{text}");
        // The lower-case table itself cannot be addressed: refused.
        std::fs::write(
            dir.path().join("ripple.yml"),
            format!(
                "dialect: {dialect}\ndatasets:\n  src2: {{ grain: day }}\n  mart.\"a\": {{ grain: none }}\n"
            ),
        )
        .unwrap();
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "src2",
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
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("named in quotes in lower case"), "{stderr}");
    }
}

#[test]
fn airflow_task_ids_are_unique_whatever_the_dataset_names() {
    // The run of `shadow__table.mart.a@full` and the setup of the shadow of
    // `mart.a_full` were both `shadow__table.mart.a_full`: Airflow refused
    // the DAG (DuplicateTaskIdFound).
    let job = |t: &str| {
        format!(
            "create table if not exists {t} (order_date date, revenue numeric);\ndelete from {t} where true;\ninsert into {t} (order_date, revenue) select cast(ordered_at as date), sum(amount) from raw.orders group by 1;\n"
        )
    };
    let dir = temp_project(&[
        ("jobs/j1.sql", &job("mart.a_full")),
        ("jobs/j2.sql", &job("shadow__table.mart.a")),
        ("jobs/j3.sql", &job("validate__x.y")),
        (
            "ripple.yml",
            "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01, partition_column: ordered_at }\n  mart.a_full: { grain: none }\n  shadow__table.mart.a: { grain: none }\n  validate__x.y: { grain: none }\n",
        ),
    ]);
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
            "--as-of",
            "2026-02-01",
            "--no-cache",
            "--format",
            "airflow-dag",
            "--project",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dag = String::from_utf8_lossy(&out.stdout);
    let ids: Vec<&str> = dag
        .split("task_id=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert!(ids.len() >= 6, "{dag}");
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "a task id twice: {ids:?}");
}

#[test]
fn a_dag_file_that_failed_to_read_stops_a_schedule_even_when_partial() {
    // Its DAG runs every ten minutes; unread, its runs were taken as none
    // and the backfill scheduled over them under `--allow-partial`.
    let dir = temp_project(&[
        (
            "jobs/daily.sql",
            "insert into mart.daily (order_date, n) select cast(ordered_at as date), count(*) from raw.orders group by 1",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndags: [dags]\nsql: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01, partition_column: ordered_at }\n  mart.daily: { grain: day, partition_column: order_date, cost: 30 }\n",
        ),
    ]);
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    // Latin-1 bytes, as a PEP 263 coding line allows: not UTF-8.
    let mut dag = b"# -*- coding: latin-1 -*-\n# Caf".to_vec();
    dag.extend([0xe9]);
    dag.extend_from_slice(b"\nfrom datetime import datetime\nfrom airflow import DAG\nfrom airflow.operators.bash import BashOperator\nwith DAG(\"cafe\", schedule=\"*/10 * * * *\", start_date=datetime(2024, 1, 1)) as d:\n    BashOperator(task_id=\"t\", bash_command=\"echo\")\n");
    std::fs::write(dir.path().join("dags/cafe.py"), dag).unwrap();
    let plan = |extra: &[&str]| {
        assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-10",
                "--as-of",
                "2026-02-01",
                "--no-cache",
                "--allow-partial",
                "--project",
            ])
            .arg(dir.path())
            .args(extra)
            .output()
            .unwrap()
    };
    assert!(
        plan(&[]).status.success(),
        "without --start, partial is allowed"
    );
    let out = plan(&["--start", "2026-02-01T06"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("a DAG file failed to read") && stderr.contains("dags/cafe.py"),
        "{stderr}"
    );
}

#[test]
fn an_incremental_model_dbt_never_fully_refreshes_is_refused() {
    // dbt ignores `--full-refresh` for `full_refresh: false`: the shadow
    // stayed production's copy and the swap put the bad rows back. Computed
    // from what ripple's Jinja does not have, the value may be false to dbt
    // (a placeholder once compared as `true`).
    let never = "`fct_orders` is configured `full_refresh: false`";
    let unknown = "`fct_orders`'s `full_refresh` config is computed from something ripple's Jinja does not have";
    for (file, edit, said) in [
        (
            "models/fct_orders.sql",
            (
                "unique_key='order_id')",
                "unique_key='order_id', full_refresh=false)",
            ),
            never,
        ),
        (
            "dbt_project.yml",
            (
                "macro-paths: [macros]\n",
                "macro-paths: [macros]\nmodels:\n  backfill_dbt:\n    +full_refresh: false\n",
            ),
            never,
        ),
        (
            "models/fct_orders.sql",
            (
                "unique_key='order_id')",
                "unique_key='order_id', full_refresh=(modules.datetime.date.today().year < 1990))",
            ),
            unknown,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(Path::new("fixtures/backfill_dbt"), dir.path());
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(edit.0), "{file}");
        std::fs::write(&path, text.replacen(edit.0, edit.1, 1)).unwrap();
        let out = plan_output(dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        // The views and tables around it rebuild whatever the setting.
        assert!(err.contains(said), "{file}: {err}");
    }
}

/// `ripple plan --format json` on `dir`, parsed, or its stderr.
fn plan_json(dir: &Path) -> Result<serde_json::Value, String> {
    let out = plan_output(dir);
    match out.status.success() {
        true => Ok(serde_json::from_slice(&out.stdout).unwrap()),
        false => Err(String::from_utf8_lossy(&out.stderr).to_string()),
    }
}

/// `ripple plan --format json` of `raw.orders` for 2026-01-10..11 on `dir`.
fn plan_output(dir: &Path) -> std::process::Output {
    assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args([
            "--as-of",
            "2026-02-01",
            "--no-cache",
            "--format",
            "json",
            "--project",
        ])
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn hooks_spelt_past_the_overlays_edit_and_links_out_of_it_are_refused() {
    // `? on-run-start`, an escaped key and a merge key survived the
    // overlay's text edit, and dbt ran the hook against production.
    for form in [
        "? on-run-start\n: [\"insert into audit values (1)\"]\n",
        "\"on\\x2drun\\x2dstart\": [\"insert into audit values (1)\"]\n",
        "h: &h [\"insert into audit values (1)\"]\n<<: {on-run-start: *h}\n",
    ] {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(Path::new("fixtures/backfill_dbt"), dir.path());
        let file = dir.path().join("dbt_project.yml");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}{form}")).unwrap();
        let err = plan_json(dir.path()).unwrap_err();
        assert!(
            err.contains("a top-level key is written in a form ripple does not edit"),
            "{form}: {err}"
        );
    }
    // A project's own `ripple_overlay_macros` linking out of it: the
    // overlay's macro file was written through the link.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    copy_tree(Path::new("fixtures/backfill_dbt"), &project);
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, project.join("ripple_overlay_macros")).unwrap();
    let doc = plan_json(&project).unwrap();
    let lines: Vec<&str> = doc["dbt_overlay"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let overlay = dir.path().join("overlay");
    std::fs::create_dir(&overlay).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -e\n{}\n{}",
            doc["dbt_overlay_functions"].as_str().unwrap(),
            lines.join("\n")
        ))
        .env("RIPPLE_DBT_OVERLAY", &overlay)
        .env("RIPPLE_DBT_PROJECT", &project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    let written = overlay.join("ripple_overlay_macros");
    assert!(!written.is_symlink() && written.join("ripple_overlay.sql").is_file());
}

/// A dbt model whose body can write where the overlay cannot check it
/// (the adapter's own writes, `dbt.statement`, a writing `sql_header`)
/// would change production while dbt compiles it, during its task: the
/// plan is refused, naming the model and the call. A header that only
/// sets the session is a model's business.
#[test]
fn dbt_bodies_that_can_write_unchecked_refuse_the_plan() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backfill_dbt");
    for (body, said) in [
        (
            "{% if execute %}{% do adapter.execute(\"insert into main.audit_log values (3)\") %}{% endif %}\nselect * from {{ ref('stg_orders') }}\n",
            "`m`'s body calls `adapter.execute`",
        ),
        (
            "{% if execute %}{% do adapter.drop_relation(api.Relation.create(schema='main', identifier='victim')) %}{% endif %}\nselect * from {{ ref('stg_orders') }}\n",
            "`m`'s body calls `adapter.drop_relation`",
        ),
        (
            "{% if execute %}{% call dbt.statement('x') %}insert into main.audit_log values (5){% endcall %}{% endif %}\nselect * from {{ ref('stg_orders') }}\n",
            "`m`'s body calls `dbt.statement`",
        ),
        (
            "{{ config(sql_header=\"set threads = 2; insert into main.audit_log values (4)\") }}\nselect * from {{ ref('stg_orders') }}\n",
            "`m`'s `sql_header` runs `insert into main.audit_log values (4)`",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&fixture, dir.path());
        std::fs::write(
            dir.path().join("models/m.sql"),
            format!("{{{{ config(materialized='table') }}}}\n{body}"),
        )
        .unwrap();
        let out = plan_src_like(dir.path(), "raw.orders")
            .args(["--executor", "dbt"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{body}");
        assert!(err.contains(said), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture, dir.path());
    std::fs::write(
        dir.path().join("models/m.sql"),
        "{{ config(materialized='table', sql_header='set threads = 2; create or replace temporary macro two() as 2;') }}\nselect * from {{ ref('stg_orders') }}\n",
    )
    .unwrap();
    let out = plan_src_like(dir.path(), "raw.orders")
        .args(["--executor", "dbt"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_catalog_view_over_a_restated_table_that_a_job_reads_refuses_the_plan() {
    // A DBA's view over `mart.daily`, read by a report job: the lineage
    // stopped at the view, and the report was left wrong after exit 0.
    let view = r#"{"schema" : "rpt", "name" : "v_daily", "kind" : "view", "columns" : [{"name" : "order_date", "type" : "date", "not_null" : false, "default" : null, "generated" : null, "identity" : null}], "keys" : [], "foreign_keys" : [], "triggers" : [], "reads" : [["mart", "daily"]]}"#;
    let dir = temp_project(&[
        (
            "daily.sql",
            "delete from mart.daily;\ninsert into mart.daily (order_date, n) select cast(ordered_at as date), count(*) from src group by 1;\n",
        ),
        (
            "report.sql",
            "drop table if exists mart.report;\ncreate table mart.report as select order_date, n from rpt.v_daily;\n",
        ),
        ("tables.jsonl", &format!("{view}\n")),
        (
            "ripple.yml",
            "dialect: postgres\ntables: [tables.jsonl]\ndatasets:\n  src: { grain: day, start: 2026-01-01, partition_column: ordered_at }\n  mart.daily: { partition_column: order_date }\n",
        ),
    ]);
    let out = plan_src_like(dir.path(), "src").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("lists `rpt.v_daily`, a view over it that no job of the project makes")
            && err.contains("`mart.report` reads that view"),
        "{err}"
    );
    // Made by a job of the project, the view is followed: no refusal.
    std::fs::write(
        dir.path().join("v_daily.sql"),
        "create or replace view rpt.v_daily as select order_date, n from mart.daily;\n",
    )
    .unwrap();
    let out = plan_src_like(dir.path(), "src").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("no job of the project makes"), "{err}");
}

#[test]
fn an_executor_asked_for_that_runs_no_job_says_what_runs_it_instead() {
    // `--executor dbt` on SQL jobs printed their SQL with no word that no
    // dbt command was used.
    let plan = |executor: &str, format: &str| {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-12",
            ])
            .args([
                "--as-of",
                "2026-03-01",
                "--project",
                "fixtures/backfill_demo",
                "--no-cache",
            ])
            .args(["--executor", executor, "--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    for format in ["commands", "shell"] {
        let text = plan("dbt", format);
        assert!(
            text.contains("# --executor dbt does not run this task's job: sql runs it"),
            "{text}"
        );
        // Asked for what runs them, nothing is said.
        assert!(!plan("sql", format).contains("does not run"));
    }
}

#[test]
fn a_table_two_jobs_write_is_refused_naming_both() {
    // One job per channel into one fact table, or a load then an update
    // that enriches it: the task ran one job, and the swap lost the other
    // channel's rows, or left the enriched column empty, exit 0.
    let cases = [
        (
            "delete from mart.orders where source = 'web';\ninsert into mart.orders (order_id, source, day, amount) select id, 'web', cast(ordered_at as date), amount from raw.web;\n",
            "delete from mart.orders where source = 'app';\ninsert into mart.orders (order_id, source, day, amount) select id, 'app', cast(ordered_at as date), amount from raw.app;\n",
        ),
        (
            "delete from mart.orders;\ninsert into mart.orders (order_id, source, day, amount) select id, 'web', cast(ordered_at as date), amount from raw.web;\n",
            "update mart.orders o set amount_usd = o.amount * r.rate from raw.app r where r.id = o.order_id;\n",
        ),
    ];
    for (a, b) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("jobs")).unwrap();
        std::fs::write(dir.path().join("jobs/a.sql"), a).unwrap();
        std::fs::write(dir.path().join("jobs/b.sql"), b).unwrap();
        std::fs::write(
            dir.path().join("ripple.yml"),
            "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.web: { grain: day, start: 2026-01-01 }\n  raw.app: { grain: day, start: 2026-01-01 }\n  mart.orders: { partition_column: day }\n",
        )
        .unwrap();
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args([
                "plan",
                "raw.web",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-12",
            ])
            .args(["--as-of", "2026-02-01", "--no-cache", "--project"])
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "planned: {err}");
        assert!(
            err.contains("refusing to plan `mart.orders`: it is written by 2 jobs"),
            "{err}"
        );
    }
}

/// A model named `stg-orders` (a hyphen, as dbt projects have): its
/// readers rendered `from main.stg-orders`, which does not parse, so they
/// lost their columns and times and the plan was refused for want of a
/// partition column. dbt's adapters quote such a name; so does ripple.
#[test]
fn a_model_whose_name_needs_quotes_is_read_like_any_other() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("fixtures/backfill_dbt"), dir.path());
    std::fs::rename(
        dir.path().join("models/stg_orders.sql"),
        dir.path().join("models/stg-orders.sql"),
    )
    .unwrap();
    for entry in std::fs::read_dir(dir.path().join("models")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("ref('stg_orders')", "ref('stg-orders')"),
        )
        .unwrap();
    }
    let yml = dir.path().join("ripple.yml");
    let text = std::fs::read_to_string(&yml).unwrap();
    std::fs::write(&yml, text.replace("stg_orders:", "stg-orders:")).unwrap();
    let check = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args(["check", "--no-cache", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout).to_string()
        + &String::from_utf8_lossy(&check.stderr);
    assert!(!said.contains("parse"), "{said}");
    let planned = plan_json(dir.path()).unwrap();
    let tasks = planned["tasks"].as_array().unwrap();
    assert!(
        tasks.iter().any(|t| t["dataset"] == "model.stg-orders"),
        "{planned}"
    );
}

#[test]
fn a_job_rewriting_only_a_moving_recent_slice_is_refused() {
    // A job that keeps its table's history and rewrites only its last days
    // (by the clock, or past another table's latest day), run once into an
    // empty work table for a month, fills only those days: the swap would
    // delete the rest of the month from production.
    let refused = [
        (
            "delete from mart.daily where day >= current_date - 2;\n\
             insert into mart.daily select day, sum(amount) as amount from raw.orders where day >= current_date - 2 group by day;",
            "the clock",
        ),
        (
            "delete from mart.daily where day >= (select max(day) - 2 from raw.orders);\n\
             insert into mart.daily select day, sum(amount) as amount from raw.orders\n  where day >= (select max(day) - 2 from raw.orders) group by day;",
            "the data in `raw.orders`",
        ),
        (
            // The slice chosen in a staging table, the table filled from it.
            "create temp table recent as select * from raw.orders where order_date > now() - interval '3 days';\n\
             delete from mart.daily where day in (select order_date from recent);\n\
             insert into mart.daily select order_date as day, sum(amount) as amount from recent group by 1;",
            "the clock",
        ),
        (
            "insert into mart.daily select day, sum(amount) as amount from raw.orders where day = current_date - 1 group by day\n\
             on conflict (day) do update set amount = excluded.amount;",
            "the clock",
        ),
        (
            // Shapes ripple does not order count as bounds.
            "delete from mart.daily where not (day < current_date - 3);\n\
             insert into mart.daily select day, sum(amount) as amount from raw.orders where coalesce(day >= date 'today' - 3, false) group by day;",
            "the clock",
        ),
    ];
    for (job, follows) in refused {
        let dir = temp_project(&[
            ("jobs/daily.sql", job),
            (
                "ripple.yml",
                "dialect: postgres\ndatasets:\n  mart.daily: { partition_column: day, start: 2026-01-01 }\n",
            ),
        ]);
        let out = plan_src_like(dir.path(), "raw.orders").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "planned {job}: {err}");
        assert!(
            err.contains("jobs/daily.sql:")
                && err.contains(&format!("a bound that moves with {follows}"))
                && err.contains("would delete it from production"),
            "{job}: {err}"
        );
    }
    // The same jobs bounded only from above, reading their own high-water
    // mark, or replacing their table whole are planned.
    for job in [
        "delete from mart.daily;\n\
         insert into mart.daily select day, sum(amount) as amount from raw.orders where day >= current_date - 2 group by day;",
        "truncate mart.daily;\n\
         insert into mart.daily select day, sum(amount) as amount from raw.orders where day >= current_date - 2 group by day;",
        "delete from mart.daily where day < current_date;\n\
         insert into mart.daily select day, sum(amount) as amount from raw.orders where day < current_date group by day;",
        "insert into mart.daily select day, sum(amount) as amount from raw.orders\n  where day > (select coalesce(max(day), date '1900-01-01') from mart.daily) group by day;",
    ] {
        let dir = temp_project(&[
            ("jobs/daily.sql", job),
            (
                "ripple.yml",
                "dialect: postgres\ndatasets:\n  mart.daily: { partition_column: day, start: 2026-01-01 }\n",
            ),
        ]);
        let out = plan_src_like(dir.path(), "raw.orders").output().unwrap();
        assert!(
            out.status.success(),
            "{job}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_partition_column_declared_without_quotes_is_carried_downstream() {
    // ripple.yml names the column as people say it (`Order Day`); the SQL
    // quotes it. The job downstream carries it, so its partitions can be
    // swapped in: without it the plan is refused for want of a column.
    let dir = temp_project(&[
        (
            "jobs/stg.sql",
            "delete from mart.stg;\ninsert into mart.stg (id, \"Order Day\", amount) select id, cast(ts as date), amount from raw.events;\n",
        ),
        (
            "jobs/daily.sql",
            "delete from mart.daily;\ninsert into mart.daily (\"day\", revenue) select \"Order Day\", sum(amount) from mart.stg group by \"Order Day\";\n",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  raw.events: { grain: day, start: 2026-01-01, partition_column: ts }\n  mart.stg: { partition_column: Order Day }\n",
        ),
    ]);
    let out = plan_src_like(dir.path(), "raw.events").output().unwrap();
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        script.contains("from \"mart\".\"daily\" as ripple_row where \"day\" >= "),
        "{script}"
    );
}

#[test]
fn an_incremental_model_whose_rebuild_keeps_only_a_recent_slice_is_refused() {
    // A filter outside `is_incremental()` by the clock: every incremental
    // run added its week and kept the rest, but `--full-refresh` rebuilds
    // the last week alone into the shadow, and the swap would delete the
    // restated days before it.
    let edited = |from: &str, to: &str| {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(Path::new("fixtures/backfill_dbt"), dir.path());
        let path = dir.path().join("models/fct_orders.sql");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from));
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        dir
    };
    let dir = edited(
        "from {{ ref('stg_orders') }}\n",
        "from {{ ref('stg_orders') }}\nwhere order_date >= current_date - 7\n",
    );
    let out = plan_output(dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`fct_orders` is incremental and keeps what every run added")
            && err.contains("order_date >= current_date - 7")
            && err.contains("a bound that moves with the clock"),
        "{err}"
    );
    // Inside `is_incremental()` the filter never reaches a rebuild.
    let dir = edited(
        "where order_date > (select max(order_date) from {{ this }})",
        "where order_date >= current_date - 7",
    );
    let out = plan_output(dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A table named as wrong that the plan restates by re-running a load
/// script (a job reading no table) is warned about: a new user's seed
/// script, left among the jobs, overwrote the fix they had put into the
/// table, with no word.
#[test]
fn restating_a_named_table_by_its_load_script_is_warned() {
    let dir = tempfile::tempdir().unwrap();
    let write = |p: &str, text: &str| {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "ripple.yml",
        "dialect: postgres\ndatasets:\n  landing.orders: { grain: day, start: 2026-01-01, partition_column: d }\n  mart.s: { grain: day, partition_column: d }\n",
    );
    write(
        "ddl/seed.sql",
        "insert into landing.orders (d, v) values (date '2026-01-01', 1);",
    );
    write(
        "jobs/s.sql",
        "insert into mart.s (d, v) select d, sum(v) as v from landing.orders group by d;",
    );
    let plan = |named: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args([
                "plan",
                named,
                "--from",
                "2026-01-01",
                "--to",
                "2026-01-02",
                "--as-of",
                "2026-02-01",
                "--format",
                "text",
                "--no-cache",
                "--project",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let text = plan("landing.orders");
    assert!(
        text.contains("re-running `ddl/seed.sql`") && text.contains("overwrites it"),
        "{text}"
    );
    // Named downstream, nothing re-runs the load: no warning.
    let text = plan("mart.s");
    assert!(!text.contains("overwrites it"), "{text}");
}

/// A table whose name holds a NUL character (a quoted identifier can) is
/// refused: bash cut the shell plan's `$'...\x00...'` at it, and the SQL
/// client received half a statement.
#[test]
fn a_name_holding_a_nul_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("jobs")).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "dialect: duckdb\nmodels: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01, partition_column: order_date }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("jobs/j.sql"),
        "delete from mart.\"nul\0b\" where order_date between '2026-01-01' and '2026-01-31';\ninsert into mart.\"nul\0b\" (order_date, amount) select order_date, amount from raw.orders;\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
            "--as-of",
            "2026-02-01",
            "--format",
            "shell",
            "--no-cache",
            "--project",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("NUL character"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_table_whose_job_reads_itself_is_rebuilt_only_when_said_to() {
    // Round 28: an SCD2 job (an update closing versions, an insert of new
    // ones where none is current) was rebuilt from an empty shadow: every
    // closed version lost, exit 0.
    let scd2 = "update hist h set valid_to = c.d, is_current = false from src c \
                where c.id = h.id and h.is_current and c.seg <> h.seg;\n\
                insert into hist (id, seg, valid_from, valid_to, is_current) \
                select c.id, c.seg, c.d, date '9999-12-31', true from src c \
                where not exists (select 1 from hist h where h.id = c.id and h.is_current);\n";
    let yml = "datasets:\n  src: { grain: none }\n  hist: { grain: none }\n";
    let dir = temp_project(&[("hist.sql", scd2), ("ripple.yml", yml)]);
    plan_src_one_day(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "refusing to plan `hist`: its job reads the table it writes",
        ))
        .stderr(predicates::str::contains("rebuilds_from_empty: true"));
    // Said to rebuild from empty (a job that reads itself only to skip
    // what it holds), it is planned.
    let dir = temp_project(&[
        ("hist.sql", scd2),
        (
            "ripple.yml",
            &yml.replace(
                "hist: { grain: none }",
                "hist: { grain: none, rebuilds_from_empty: true }",
            ),
        ),
    ]);
    plan_src_one_day(dir.path()).assert().success();
}

#[test]
fn subtotals_over_the_partition_column_are_refused_and_others_planned() {
    // Round 29: `group by cube (order_date, status)` left its NULL-dated
    // totals stale in production: no partition swap replaces them.
    let yml = "datasets:\n  src: { grain: day, start: 2026-01-01 }\n  cubed: { grain: day, start: 2026-01-01, partition_column: order_date }\n";
    let dir = temp_project(&[
        (
            "cubed.sql",
            "create table cubed as select order_date, status, sum(amount) as revenue from src group by cube (order_date, status)",
        ),
        ("ripple.yml", yml),
    ]);
    plan_src_one_day(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "refusing to plan `cubed`: its job groups by `cube` over its partition column `order_date`",
        ));
    // Totals within each day keep the day: planned.
    let dir = temp_project(&[
        (
            "cubed.sql",
            "create table cubed as select order_date, status, sum(amount) as revenue from src group by order_date, rollup (status)",
        ),
        ("ripple.yml", yml),
    ]);
    plan_src_one_day(dir.path()).assert().success();
}

#[test]
fn a_routine_reading_a_restated_table_is_warned_and_its_plan_refused() {
    // Round 29: a monthly table built through `mart.month_revenue()` (a SQL
    // function over `daily`) was left out of impact and stayed wrong after
    // a plan that exited 0.
    let files: &[(&str, &str)] = &[
        (
            "fn.sql",
            "create function month_revenue(m date) returns numeric language sql as $$ select sum(revenue) from daily where date_trunc('month', d) = m $$",
        ),
        (
            "daily.sql",
            "insert into daily (d, revenue) select d, sum(amount) from src group by d",
        ),
        (
            "monthly.sql",
            "insert into monthly (m, revenue) select m, month_revenue(m) from months",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  src: { grain: day, start: 2026-01-01 }\n  daily: { grain: day, partition_column: d }\n",
        ),
    ];
    let dir = temp_project(files);
    plan_src_one_day(dir.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "refusing to plan `daily`: `fn.sql` defines the routine `month_revenue`",
        ));
    let mut impact = assert_cmd::Command::cargo_bin("ripple").unwrap();
    impact
        .args([
            "impact",
            "src",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-10",
        ])
        .args(["--as-of", "2026-02-01", "--project"])
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicates::str::contains("defines `month_revenue`"));
}
