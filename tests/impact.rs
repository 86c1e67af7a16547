//! Impact analysis: DESIGN.md's worked example (declared and inferred),
//! calendar boundaries, bad input, non-idempotent models, and property tests
//! against a partition-by-partition oracle.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use assert_cmd::Command;
use petgraph::Direction;
use petgraph::visit::EdgeRef;
use predicates::prelude::*;
use proptest::prelude::*;
use ripple::graph::LineageGraph;
use ripple::impact::{Impact, ImpactRequest, TimeFacts, impact};
use ripple::ingest::{LoadOptions, load_project};
use ripple::time::{Grain, Hour, TimeMapping};

#[path = "support/cli.rs"]
mod cli;
#[path = "support/temp_project.rs"]
mod temp_project;
use temp_project::temp_project;
#[path = "support/random_graph.rs"]
mod random_graph;
use cli::worked_example;
use random_graph::{AS_OF, Case, build, case, day, key, request};

fn ripple() -> Command {
    Command::cargo_bin("ripple").unwrap()
}

fn run(root: &Path, req: &ImpactRequest) -> Impact {
    let g = LineageGraph::build(load_project(root, &LoadOptions::default()).unwrap());
    impact(&g, &TimeFacts::build(&g).unwrap(), req, true)
        .unwrap()
        .0
}

/// dataset name → (grain, full, unbounded, "from..to" ranges, partitions)
fn summary(i: &Impact) -> BTreeMap<String, (String, bool, bool, Vec<String>, u64)> {
    i.datasets
        .iter()
        .map(|d| {
            let ranges = d
                .intervals
                .iter()
                .map(|r| format!("{}..{}", r.from.clone().unwrap_or_default(), r.to))
                .collect();
            (
                d.name.clone(),
                (
                    d.grain.to_string(),
                    d.full,
                    d.unbounded,
                    ranges,
                    d.partitions,
                ),
            )
        })
        .collect()
}

fn assert_worked_example(i: &Impact) {
    let s = summary(i);
    let r = |g: &str, ranges: &[&str], n: u64| {
        (
            g.to_string(),
            false,
            false,
            ranges.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            n,
        )
    };
    assert_eq!(s["raw.orders"], r("day", &["2026-01-10..2026-01-12"], 3));
    assert_eq!(s["stg_orders"], r("day", &["2026-01-10..2026-01-12"], 3));
    assert_eq!(s["orders_7d"], r("day", &["2026-01-10..2026-01-18"], 9));
    assert_eq!(
        s["weekly_revenue"],
        r("week", &["2026-01-05..2026-01-12"], 2)
    );
    assert_eq!(s["monthly_kpis"], r("month", &["2026-01..2026-01"], 1));
    assert_eq!(
        s["dim_customers"],
        ("none".to_string(), true, false, vec![], 1)
    );
    assert_eq!(
        s["customer_segments"],
        r("day", &["2025-01-01..2026-01-31"], 396)
    );
    assert_eq!(s.len(), 7, "{s:?}");
    assert!(!s.contains_key("order_audit"));
    assert_eq!(i.stopped.len(), 1);
    assert_eq!(i.stopped[0].dataset, "order_audit");
    assert_eq!(i.stopped[0].edge, "stg_orders → order_audit");
    assert_eq!(i.as_of, "2026-02-01");
}

#[test]
fn worked_example_declared_holds_exactly() {
    let req = request(&["raw.orders"], "2026-01-10", "2026-01-12", "2026-02-01");
    assert_worked_example(&run(Path::new("fixtures/worked_example/declared"), &req));
}

#[test]
fn worked_example_inferred_from_sql_holds_exactly() {
    let req = request(&["raw.orders"], "2026-01-10", "2026-01-12", "2026-02-01");
    let i = run(Path::new("fixtures/worked_example/inferred"), &req);
    assert_worked_example(&i);
    // The facts really were inferred, with evidence.
    let explain = |name: &str| {
        i.datasets
            .iter()
            .find(|d| d.name == name)
            .unwrap()
            .explain
            .join("\n")
    };
    assert!(
        explain("orders_7d")
            .contains("window [-6, 0] from inferred from SQL (models/orders_7d.sql"),
        "{}",
        explain("orders_7d")
    );
    assert!(
        explain("weekly_revenue")
            .contains("grain week from inferred from SQL (models/weekly_revenue.sql"),
        "{}",
        explain("weekly_revenue")
    );
    assert!(
        explain("monthly_kpis").contains("grain month from inferred"),
        "{}",
        explain("monthly_kpis")
    );
}

#[test]
fn worked_example_json_through_the_cli() {
    let out = worked_example("impact", "json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["changed"], serde_json::json!(["source.raw.orders"]));
    let seg = doc["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "customer_segments")
        .unwrap();
    assert_eq!(
        seg["intervals"],
        serde_json::json!([{"from": "2025-01-01", "to": "2026-01-31"}])
    );
    assert_eq!(seg["partitions"], 396);
    assert_eq!(doc["stopped"][0]["edge"], "stg_orders → order_audit");
    insta::assert_snapshot!(
        "worked_example_impact_json",
        String::from_utf8(out).unwrap()
    );
}

#[test]
fn other_formats_render_the_affected_subgraph() {
    for format in ["markdown", "dot", "mermaid", "text"] {
        let out = worked_example("impact", format)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        insta::assert_snapshot!(
            format!("worked_example_impact_{format}"),
            String::from_utf8(out).unwrap()
        );
    }
}

/// A tiny SQL project: `edges` are (upstream, downstream) table names.
fn sql_project(dir: &Path, edges: &[(&str, &str)], ripple_yml: &str) {
    let mut writers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (u, d) in edges {
        writers.entry(d).or_default().push(u);
    }
    for (d, ups) in writers {
        let sql = format!("insert into {d} select * from {}", ups.join(" cross join "));
        std::fs::write(dir.join(format!("{d}.sql")), sql).unwrap();
    }
    std::fs::write(dir.join("ripple.yml"), ripple_yml).unwrap();
}

#[test]
fn no_start_means_unbounded() {
    let dir = tempfile::tempdir().unwrap();
    sql_project(
        dir.path(),
        &[("src", "dim"), ("dim", "daily")],
        "datasets:\n  src: { grain: day }\n  dim: { grain: none }\n  daily: { grain: day }\n",
    );
    let i = run(
        dir.path(),
        &request(&["src"], "2026-01-10", "2026-01-10", "2026-02-01"),
    );
    let daily = i.datasets.iter().find(|d| d.name == "daily").unwrap();
    assert!(daily.unbounded);
    assert_eq!(daily.intervals[0].from, None);
    assert_eq!(daily.intervals[0].to, "2026-01-31");
    assert!(
        daily
            .reasons
            .iter()
            .any(|r| r.contains("set one in ripple.yml"))
    );
}

#[test]
fn grains_roll_up_and_fan_out_across_calendar_edges() {
    let dir = tempfile::tempdir().unwrap();
    sql_project(
        dir.path(),
        &[
            ("hourly", "daily"),
            ("daily", "weekly"),
            ("weekly", "yearly"),
            ("daily", "hourly_out"),
            ("daily", "monthly"),
        ],
        "datasets:\n  hourly: { grain: hour }\n  daily: { grain: day }\n  weekly: { grain: week }\n  yearly: { grain: year }\n  hourly_out: { grain: hour }\n  monthly: { grain: month }\n",
    );
    // The last hours of 2020 (a leap year whose ISO week 53 runs to 2021-01-03).
    let i = run(
        dir.path(),
        &request(&["hourly"], "2020-12-31T22", "2020-12-31T23", "2021-06-01"),
    );
    let s = summary(&i);
    assert_eq!(s["hourly"].3, ["2020-12-31T22..2020-12-31T23"]);
    assert_eq!(s["daily"].3, ["2020-12-31..2020-12-31"]);
    assert_eq!(s["weekly"].3, ["2020-12-28..2020-12-28"]);
    // Week 53 of 2020 spans two years: both are affected.
    assert_eq!(s["yearly"].3, ["2020..2021"]);
    assert_eq!(s["hourly_out"].3, ["2020-12-31T00..2020-12-31T23"]);
    assert_eq!(s["hourly_out"].4, 24);
    assert_eq!(s["monthly"].3, ["2020-12..2020-12"]);
    // A leap day rolls into February.
    let i = run(
        dir.path(),
        &request(&["hourly"], "2024-02-29T00", "2024-02-29T00", "2024-06-01"),
    );
    assert_eq!(summary(&i)["monthly"].3, ["2024-02..2024-02"]);
}

#[test]
fn non_idempotent_models_are_widened_to_their_history() {
    let dir = temp_project(&[
        (
            "load.sql",
            "insert into hist select * from src join hist using (id)",
        ),
        (
            "ripple.yml",
            "datasets:\n  src: { grain: day }\n  hist: { grain: day, start: 2025-12-01 }\n",
        ),
    ]);
    let i = run(
        dir.path(),
        &request(&["src"], "2026-01-10", "2026-01-10", "2026-01-20"),
    );
    let hist = i.datasets.iter().find(|d| d.name == "hist").unwrap();
    assert_eq!(hist.intervals[0].from.as_deref(), Some("2025-12-01"));
    assert_eq!(hist.intervals[0].to, "2026-01-19");
    assert!(
        hist.reasons
            .iter()
            .any(|r| r.contains("widened") && r.contains("reads the table it writes"))
    );
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let base = [
        "impact",
        "--project",
        "fixtures/worked_example/declared",
        "--as-of",
        "2026-02-01",
    ];
    let cases: [(&[&str], &str); 5] = [
        (
            &["raw.orders", "--from", "2026-01-12", "--to", "2026-01-10"],
            "is after --to",
        ),
        (
            &["raw.orders", "--from", "2026-13-01", "--to", "2026-01-10"],
            "--from: `2026-13-01` is not a date",
        ),
        (
            &[
                "raw.orders",
                "--from",
                "2026-01-10T05",
                "--to",
                "2026-01-10T06",
            ],
            "partitioned by day: give dates",
        ),
        (
            &["stg_ordrs", "--from", "2026-01-10", "--to", "2026-01-10"],
            "did you mean `stg_orders`?",
        ),
        (
            &["raw.orders", "--from", "2026-01-10", "--to", "soon"],
            "--to: `soon` is not a date",
        ),
    ];
    for (args, want) in cases {
        ripple()
            .args(base)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(want))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
}

// --- property tests against a brute-force oracle ------------------------

/// Every affected partition start, per dataset name; `None` for a full rebuild.
fn expand(i: &Impact) -> HashMap<String, Option<BTreeSet<Hour>>> {
    i.datasets
        .iter()
        .map(|d| {
            if d.full {
                return (d.name.clone(), None);
            }
            let mut set = BTreeSet::new();
            for r in &d.intervals {
                let mut p = parse_key(d.grain, r.from.as_deref().unwrap());
                let last = parse_key(d.grain, &r.to);
                while p <= last {
                    set.insert(p);
                    p = d.grain.next(p);
                }
            }
            (d.name.clone(), Some(set))
        })
        .collect()
}

fn parse_key(g: Grain, k: &str) -> Hour {
    match g {
        Grain::Month => key(&format!("{k}-01")).start,
        Grain::Year => key(&format!("{k}-01-01")).start,
        _ => key(k).start,
    }
}

/// The oracle: DESIGN.md's rule applied to every partition one by one.
fn oracle(
    c: &Case,
    g: &LineageGraph,
    from: Hour,
    to_end: Hour,
) -> HashMap<String, Option<BTreeSet<Hour>>> {
    let as_of = key(AS_OF).start;
    let order = petgraph::algo::toposort(&g.graph, None).unwrap();
    let idx = |name: &str| name[1..].parse::<usize>().unwrap();
    let mut out: HashMap<String, Option<BTreeSet<Hour>>> = HashMap::new();
    // Affected hours of each dataset: the union of its partitions' spans.
    let hours = |grain: Grain, set: &Option<BTreeSet<Hour>>| -> Vec<(Hour, Hour)> {
        match set {
            None => vec![(i64::MIN, i64::MAX)],
            Some(s) => s.iter().map(|&p| (p, grain.next(p))).collect(),
        }
    };
    for n in order {
        let name = g.graph[n].name.clone();
        let i = idx(&name);
        let grain = c.grains[i];
        let start = grain.floor(day(-c.starts[i]));
        let limit = grain.ceil(as_of);
        let partitions = || {
            let mut v = Vec::new();
            let mut p = start;
            while p < limit {
                v.push(p);
                p = grain.next(p);
            }
            v
        };
        if i == 0 {
            let set: BTreeSet<Hour> = if grain == Grain::None {
                out.insert(name, None);
                continue;
            } else {
                let mut s = BTreeSet::new();
                let mut p = grain.floor(from);
                while p < to_end && p < limit {
                    s.insert(p);
                    p = grain.next(p);
                }
                s
            };
            out.insert(name, Some(set));
            continue;
        }
        let mut affected_any = false;
        let mut set = BTreeSet::new();
        for e in g.graph.edges_directed(n, Direction::Incoming) {
            let un = &g.graph[e.source()].name;
            let Some(up_set) = out.get(un) else { continue };
            // An upstream with no affected partition changes nothing.
            if up_set.as_ref().is_some_and(BTreeSet::is_empty) {
                continue;
            }
            let ui = idx(un);
            let (_, m) = c.ups[i].iter().find(|(x, _)| *x == ui).unwrap();
            if *m == TimeMapping::None {
                continue;
            }
            affected_any = true;
            if grain == Grain::None {
                continue;
            }
            let ug = c.grains[ui];
            let up_hours = hours(ug, up_set);
            for p in partitions() {
                let hit = match m {
                    _ if up_set.is_none() || ug == Grain::None => true,
                    TimeMapping::All => true,
                    TimeMapping::Identity | TimeMapping::Window(..) => {
                        let (lo, hi) = match m {
                            TimeMapping::Window(lo, hi) => (*lo, *hi),
                            _ => (0, 0),
                        };
                        let a = ug.shift(p, lo);
                        let b = ug.shift(grain.next(p), hi);
                        up_hours.iter().any(|&(x, y)| x < b && a < y)
                    }
                    TimeMapping::None => false,
                };
                if hit {
                    set.insert(p);
                }
            }
        }
        if !affected_any {
            continue;
        }
        out.insert(
            name,
            if grain == Grain::None {
                None
            } else {
                Some(set)
            },
        );
    }
    // Datasets whose every affecting edge left nothing are not affected.
    out.retain(|_, v| v.as_ref().is_none_or(|s| !s.is_empty()));
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96),
        ..ProptestConfig::default()
    })]

    #[test]
    fn intervals_equal_the_partition_by_partition_oracle(c in case()) {
        let g = build(&c);
        let from_key = Grain::Day.key(day(c.from));
        let to_key = Grain::Day.key(day(c.from + c.len));
        let req = request(&["t0"], &from_key, &to_key, AS_OF);
        let got = impact(&g, &TimeFacts::build(&g).unwrap(), &req, false).unwrap().0;
        let mut got = expand(&got);
        got.retain(|_, v| v.as_ref().is_none_or(|s| !s.is_empty()));
        let want = oracle(&c, &g, day(c.from), day(c.from + c.len + 1));
        prop_assert_eq!(got, want, "case {:?}", c);
    }

    #[test]
    fn facts_read_for_the_request_give_the_whole_graphs_impact(c in case(), pick in 0usize..64) {
        // `impact` and `plan` read SQL only for the changed datasets, their
        // downstream and its upstream: the answer must not change.
        let g = build(&c);
        let names: Vec<String> = g.graph.node_indices().map(|n| g.graph[n].name.clone()).collect();
        let name = names[pick % names.len()].as_str();
        let req = request(&[name], &Grain::Day.key(day(c.from)), &Grain::Day.key(day(c.from + c.len)), AS_OF);
        let whole = impact(&g, &TimeFacts::build(&g).unwrap(), &req, true).unwrap().0;
        let part = impact(&g, &TimeFacts::for_request(&g, &req).unwrap(), &req, true).unwrap().0;
        prop_assert_eq!(serde_json::to_string(&whole).unwrap(), serde_json::to_string(&part).unwrap());
    }

    #[test]
    fn a_larger_range_never_gives_a_smaller_impact(c in case(), more_before in 0i64..10, more_after in 0i64..10) {
        let g = build(&c);
        let small = request(&["t0"], &Grain::Day.key(day(c.from)), &Grain::Day.key(day(c.from + c.len)), AS_OF);
        let large = request(&["t0"], &Grain::Day.key(day(c.from - more_before)), &Grain::Day.key(day(c.from + c.len + more_after)), AS_OF);
        let small = expand(&impact(&g, &TimeFacts::build(&g).unwrap(), &small, false).unwrap().0);
        let large = expand(&impact(&g, &TimeFacts::build(&g).unwrap(), &large, false).unwrap().0);
        for (name, s) in &small {
            let l = large.get(name);
            prop_assert!(l.is_some(), "{} affected by the small range only", name);
            if let (Some(s), Some(Some(l))) = (s, l) {
                prop_assert!(s.is_subset(l), "{}: {:?} not within {:?}", name, s, l);
            }
        }
    }
}

#[test]
fn dbt_configs_give_grains_starts_and_lookback_windows() {
    let g = LineageGraph::build(
        load_project(Path::new("fixtures/shop"), &LoadOptions::default()).unwrap(),
    );
    let facts = TimeFacts::build(&g).unwrap();
    let req = request(
        &["raw.web_events", "tag:raw,raw.orders"],
        "2026-01-10T05",
        "2026-01-10T06",
        "2026-02-01",
    );
    let err = impact(&g, &facts, &req, true).unwrap_err().to_string();
    // raw.orders is declared daily: an hour key is refused for it.
    assert!(err.contains("partitioned by day"), "{err}");
    let req = request(
        &["raw.web_events"],
        "2026-01-10T05",
        "2026-01-10T06",
        "2026-02-01",
    );
    let (i, _) = impact(&g, &facts, &req, true).unwrap();
    let d = |n: &str| {
        i.datasets
            .iter()
            .find(|d| d.name == n)
            .unwrap_or_else(|| panic!("{n} not affected"))
            .clone()
    };
    // Microbatch batch_size=hour: the grain; begin: the start.
    let events = d("stg_web_events");
    assert_eq!(events.grain, Grain::Hour);
    assert_eq!(events.intervals[0].from.as_deref(), Some("2026-01-10T05"));
    assert!(
        events.explain[0].contains("dbt microbatch batch_size='hour'"),
        "{:?}",
        events.explain
    );
    // lookback=1 on a daily model over hourly data: one more day, in hours.
    let sessions = d("fct_sessions");
    assert_eq!(sessions.grain, Grain::Day);
    assert_eq!(sessions.intervals[0].from.as_deref(), Some("2026-01-10"));
    assert_eq!(sessions.intervals[0].to, "2026-01-11");
    assert!(
        sessions
            .explain
            .iter()
            .any(|e| e.contains("window [-24, 0] from dbt microbatch lookback=1")),
        "{:?}",
        sessions.explain
    );

    let req = request(&["raw.orders"], "2026-01-10", "2026-01-12", "2026-02-01");
    let (i, _) = impact(&g, &facts, &req, true).unwrap();
    let d = |n: &str| i.datasets.iter().find(|d| d.name == n).unwrap().clone();
    let weekly = d("revenue_weekly");
    assert_eq!(weekly.grain, Grain::Week);
    assert!(
        weekly.explain[0].contains("dbt partition_by granularity"),
        "{:?}",
        weekly.explain
    );
    assert!(
        d("kpis_monthly").full,
        "materialized='table' is rebuilt whole"
    );
    assert!(
        d("fct_orders")
            .reasons
            .iter()
            .any(|r| r.contains("widened"))
    );
    assert!(
        d("customer_segments")
            .reasons
            .iter()
            .any(|r| r.contains("upsert by key"))
    );
}

#[test]
fn selectors_name_several_changed_datasets() {
    let g = LineageGraph::build(
        load_project(
            Path::new("fixtures/worked_example/declared"),
            &LoadOptions::default(),
        )
        .unwrap(),
    );
    let facts = TimeFacts::build(&g).unwrap();
    let req = request(&["source:raw"], "2026-01-10", "2026-01-12", "2026-02-01");
    let (i, _) = impact(&g, &facts, &req, false).unwrap();
    assert_eq!(i.changed, ["source.raw.orders"]);
    assert_eq!(i.datasets.len(), 7);
}
