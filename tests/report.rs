//! The HTML reports (`--format html` on impact, plan and diff) and the SVG
//! pictures, loaded in a real headless Chromium (`tests/browser/check.mjs`):
//! boxes per state with the documented colours, timelines, the Gantt chart,
//! a click that opens a dataset's reasons, no console error, no request, a
//! screenshot that is not blank. `RIPPLE_WRITE_SCREENSHOTS=1` refreshes the
//! screenshots in docs/.

#[path = "support/engines.rs"]
mod engines;
#[path = "support/temp_project.rs"]
mod temp_project;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use engines::{browser, require};
use serde_json::Value;
use temp_project::{copy_tree, temp_project};

fn ripple(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "ripple {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const IMPACT: [&str; 9] = [
    "raw.orders",
    "--from",
    "2026-01-10",
    "--to",
    "2026-01-12",
    "--as-of",
    "2026-02-01",
    "--project",
    "fixtures/shop",
];

const PLAN: [&str; 11] = [
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
];

/// `#fecaca` as the browser reports a computed fill: `rgb(254, 202, 202)`.
fn rgb(hex: &str) -> String {
    let v = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap();
    format!("rgb({}, {}, {})", v(1), v(3), v(5))
}

/// Writes `html` to a temp file, checks it in the browser; the screenshot
/// goes to docs/ with `RIPPLE_WRITE_SCREENSHOTS=1`.
fn load(html: &str, name: &str) -> Option<Value> {
    let b = require(browser(), "Chromium with playwright-core")?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.html"));
    std::fs::write(&file, html).unwrap();
    let shot: PathBuf = if std::env::var("RIPPLE_WRITE_SCREENSHOTS").is_ok_and(|v| v == "1") {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/report-{name}.png"))
    } else {
        dir.path().join(format!("{name}.png"))
    };
    let seen = b.check(&file, &shot);
    assert_eq!(seen["console_errors"], Value::Array(vec![]), "{name}");
    assert_eq!(seen["page_errors"], Value::Array(vec![]), "{name}");
    assert_eq!(seen["requests"], Value::Array(vec![]), "{name}: no network");
    assert_eq!(seen["scripts"], 1, "{name}: only ripple's own script");
    assert_eq!(seen["images"], 0, "{name}");
    // Not blank: a blank page has a handful of colours, a report hundreds.
    assert!(
        seen["screenshot_colours"].as_u64().unwrap() > 60,
        "{name}: screenshot looks blank: {}",
        seen["screenshot_colours"]
    );
    Some(seen)
}

/// Every state drawn has its documented fill, and no two states share one.
fn assert_colours(seen: &Value) {
    let fills = seen["fills"].as_object().unwrap();
    assert!(!fills.is_empty());
    let mut by_colour: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (state, got) in fills {
        let documented = ripple::emit::svg::STATES
            .iter()
            .find(|s| s.name == state)
            .unwrap_or_else(|| panic!("undocumented state {state}"));
        assert_eq!(
            got,
            &Value::Array(vec![rgb(documented.fill).into()]),
            "{state}"
        );
        by_colour
            .entry(rgb(documented.fill))
            .or_default()
            .push(state);
    }
    for (colour, states) in by_colour {
        assert_eq!(states.len(), 1, "{colour} is used by {states:?}");
    }
}

/// What the impact JSON says each dataset's state is.
fn states_from_json(impact: &Value) -> BTreeMap<String, &'static str> {
    let changed: Vec<&str> = impact["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    impact["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let id = d["id"].as_str().unwrap();
            let widened = d["reasons"].as_array().unwrap().iter().any(|r| {
                r.as_str()
                    .unwrap()
                    .starts_with("widened to its whole history")
            });
            let state = if changed.contains(&id) {
                "changed"
            } else if d["full"] == true {
                "full"
            } else if widened {
                "widened"
            } else {
                "partitions"
            };
            (id.to_string(), state)
        })
        .collect()
}

fn counts<'a>(states: impl Iterator<Item = &'a str>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for s in states {
        *out.entry(s.to_string()).or_insert(0) += 1;
    }
    out
}

#[test]
fn the_impact_report_renders_in_a_browser_with_every_dataset_coloured_by_how_it_is_affected() {
    let json: Value = serde_json::from_str(&ripple(
        &[&["impact"][..], &IMPACT, &["--format", "json"]].concat(),
    ))
    .unwrap();
    let graph: Value = serde_json::from_str(&ripple(&[
        "graph",
        "--project",
        "fixtures/shop",
        "--format",
        "json",
    ]))
    .unwrap();
    let html = ripple(&[&["impact"][..], &IMPACT, &["--format", "html"]].concat());
    let Some(seen) = load(&html, "impact") else {
        return;
    };
    let expected = states_from_json(&json);
    let total = graph["nodes"].as_array().unwrap().len();
    // A small graph is drawn whole: the affected datasets and the rest grey.
    assert_eq!(seen["nodes"], total);
    let mut want = counts(expected.values().copied());
    want.insert("context".into(), (total - expected.len()) as u64);
    let got: BTreeMap<String, u64> = serde_json::from_value(seen["states"].clone()).unwrap();
    assert_eq!(got, want);
    // The shop's change widens fct_orders and reaches unpartitioned models:
    // every kind of state is on the page.
    for s in ["changed", "partitions", "widened", "full", "context"] {
        assert!(got.contains_key(s), "{s} missing from {got:?}");
    }
    assert_colours(&seen);
    // One timeline per affected dataset, in the JSON's order and states.
    let strip_states: Vec<&str> = seen["strip_states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let json_order: Vec<&str> = json["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| expected[d["id"].as_str().unwrap()])
        .collect();
    assert_eq!(strip_states, json_order);
    assert!(seen["widened_cells"].as_u64().unwrap() >= 1);
    // Edges carry their time mappings, the 7-day window among them.
    let labels: Vec<&str> = seen["edge_labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"identity") && labels.contains(&"window [-6, 0]"),
        "{labels:?}"
    );
    // A click on a box opens that dataset's reasons.
    assert!(seen["clicked"].is_string());
    assert_eq!(seen["opened"], 1);
    let text = seen["text"].as_str().unwrap();
    assert!(text.contains("raw.orders") && text.contains("762 day partitions"));
}

#[test]
fn the_plan_report_shows_the_schedule_against_production_and_the_cap() {
    let json: Value = serde_json::from_str(&ripple(
        &[&["plan"][..], &PLAN, &["--format", "json"]].concat(),
    ))
    .unwrap();
    let html = ripple(&[&["plan"][..], &PLAN, &["--format", "html"]].concat());
    let Some(seen) = load(&html, "plan") else {
        return;
    };
    let tasks = json["tasks"].as_array().unwrap().len();
    assert!(tasks > 10);
    assert_eq!(seen["bars"], tasks, "one bar per task");
    // The shop's Airflow DAGs run every day: their runs are shaded, and so
    // are the hours outside ripple.yml's window.
    assert!(seen["blackouts"].as_u64().unwrap() > 0);
    assert!(seen["closed"].as_u64().unwrap() > 0);
    assert_eq!(seen["cap_line"], 1);
    assert_colours(&seen);
    assert!(seen["states"]["changed"] == 1);
    assert_eq!(seen["opened"], 1);
    let text = seen["text"].as_str().unwrap();
    for swap in json["swaps"].as_array().unwrap() {
        let id = swap["dataset"].as_str().unwrap();
        let name = id.split_once('.').unwrap().1;
        assert!(text.contains(name), "{name} missing from the swaps table");
    }
    assert!(text.contains("non_empty") && text.contains("row_count"));
}

/// fixtures/shop with three edits: a filter (breaking), a column's
/// expression (column) and a new column (non-breaking).
fn edited_shop() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("fixtures/shop"), dir.path());
    let edit = |file: &str, from: &str, to: &str| {
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
    };
    edit(
        "models/staging/stg_orders.sql",
        "lower(status) as status",
        "upper(status) as status",
    );
    edit(
        "models/staging/stg_payments.sql",
        "    paid_at\n",
        "    paid_at,\n    paid_at as paid_at_utc\n",
    );
    edit(
        "models/staging/stg_refunds.sql",
        "from ",
        "from (select 1 as one) as pad cross join ",
    );
    dir
}

#[test]
fn the_diff_report_names_each_change_and_highlights_what_it_reaches() {
    let head = edited_shop();
    let args = |format: &'static str| {
        vec![
            "diff".to_string(),
            "--base-dir".into(),
            "fixtures/shop".into(),
            "--head-dir".into(),
            head.path().display().to_string(),
            "--format".into(),
            format.into(),
        ]
    };
    let run = |format| {
        let a = args(format);
        ripple(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    let html = run("html");
    let Some(seen) = load(&html, "diff") else {
        return;
    };
    let kinds: Vec<&str> = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    for k in ["breaking", "column", "non-breaking"] {
        assert!(kinds.contains(&k), "{k} not in {kinds:?}");
    }
    assert_eq!(seen["change_rows"], serde_json::json!(kinds));
    let states = seen["states"].as_object().unwrap();
    for k in ["breaking", "column", "non-breaking", "downstream"] {
        assert!(states.contains_key(k), "{k} not drawn: {states:?}");
    }
    assert_colours(&seen);
    let text = seen["text"].as_str().unwrap();
    assert!(
        text.contains("added: paid_at_utc"),
        "the new column is named"
    );
    assert!(text.contains("status"), "the changed column is named");
}

#[test]
fn hostile_names_stay_text_in_every_report() {
    let name = r#"</script><script>document.title='pwned'</script><img src=x onerror="document.title='pwned'">"#;
    let quoted = format!("mart.\"{}\"", name.replace('"', "\"\""));
    let project = temp_project(&[
        (
            "ripple.yml",
            // DuckDB: the name is longer than PostgreSQL's 63 bytes, where
            // the plan is refused (docs/limits.md).
            "dialect: duckdb\nmodels: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n",
        ),
        (
            "jobs/a.sql",
            &format!(
                "create table {quoted} as select order_id, cast(ordered_at as date) as order_date from raw.orders;\n"
            ),
        ),
    ]);
    let dir = project.path().display().to_string();
    let change = [
        "raw.orders",
        "--from",
        "2026-01-10",
        "--to",
        "2026-01-11",
        "--as-of",
        "2026-02-01",
        "--project",
        &dir,
    ];
    let impact = ripple(&[&["impact"][..], &change, &["--format", "html"]].concat());
    let plan = ripple(&[&["plan"][..], &change, &["--format", "html"]].concat());
    let svg = ripple(&[&["impact"][..], &change, &["--format", "svg"]].concat());
    for (what, text) in [("impact", &impact), ("plan", &plan), ("svg", &svg)] {
        assert!(!text.contains("<img"), "{what}");
        assert!(!text.contains("<script>document"), "{what}");
        assert!(text.contains("&lt;/script&gt;&lt;script&gt;"), "{what}");
    }
    for (what, html) in [("hostile-impact", &impact), ("hostile-plan", &plan)] {
        let Some(seen) = load_quietly(html, what) else {
            return;
        };
        assert_ne!(seen["title"], "pwned", "{what}");
        // As SQL prints it: quoted, its quotes doubled.
        let printed = format!("\"{}\"", name.replace('"', "\"\""));
        let text = seen["text"].as_str().unwrap();
        assert!(
            text.contains(&printed),
            "{what}: the name shows as written: {text}"
        );
        assert_eq!(seen["nodes"], 2, "{what}");
    }
}

/// [`load`] without writing docs' screenshots (hostile pages stay out of docs/).
fn load_quietly(html: &str, name: &str) -> Option<Value> {
    let b = require(browser(), "Chromium with playwright-core")?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.html"));
    std::fs::write(&file, html).unwrap();
    let seen = b.check_with(&file, &dir.path().join("shot.png"), false);
    assert_eq!(seen["page_errors"], Value::Array(vec![]), "{name}");
    assert_eq!(seen["requests"], Value::Array(vec![]), "{name}");
    assert_eq!(seen["scripts"], 1, "{name}");
    assert_eq!(seen["images"], 0, "{name}");
    Some(seen)
}

#[test]
fn svg_pictures_are_well_formed_standalone_files() {
    for args in [
        vec!["graph", "--project", "fixtures/shop", "--format", "svg"],
        [&["impact"][..], &IMPACT, &["--format", "svg"]].concat(),
        [&["plan"][..], &PLAN, &["--format", "svg"]].concat(),
    ] {
        let svg = ripple(&args);
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{args:?}"
        );
        assert!(svg.contains("<style>"), "colours travel with the file");
        // Well-formed XML: every element closed (a cheap check: tags balance).
        let opens = svg.matches("<g ").count() + svg.matches("<g>").count();
        assert_eq!(opens, svg.matches("</g>").count(), "{args:?}");
        assert!(!svg.contains("http://") || svg.matches("http://").count() == 1);
    }
    // graph: boxes by dataset kind, one per node.
    let svg = ripple(&["graph", "--project", "fixtures/shop", "--format", "svg"]);
    let graph: Value = serde_json::from_str(&ripple(&[
        "graph",
        "--project",
        "fixtures/shop",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(
        svg.matches("class=\"rp-node ").count(),
        graph["nodes"].as_array().unwrap().len()
    );
    for kind in ["source", "model", "table", "seed", "snapshot"] {
        assert!(svg.contains(&format!("data-state=\"{kind}\"")), "{kind}");
    }
}

#[test]
fn reports_are_byte_identical_run_to_run() {
    let a = ripple(&[&["plan"][..], &PLAN, &["--format", "html"]].concat());
    let b = ripple(&[&["plan"][..], &PLAN, &["--format", "html"]].concat());
    assert_eq!(a, b);
}

#[path = "../benches/support/dbt_project.rs"]
mod generated;

fn request(changed: &str) -> ripple::impact::ImpactRequest {
    let key = |s: &str| ripple::time::TimeKey::parse(s).unwrap();
    ripple::impact::ImpactRequest {
        changed: vec![changed.to_string()],
        from: key("2026-01-10"),
        to: key("2026-01-12"),
        as_of: key("2026-02-01").start,
        columns: Vec::new(),
    }
}

#[test]
fn at_10k_models_the_report_folds_to_the_affected_subgraph_and_one_hop() {
    let dir = tempfile::tempdir().unwrap();
    generated::generate(dir.path(), 10_000).unwrap();
    let g = ripple::graph::LineageGraph::build(
        ripple::ingest::load_project(dir.path(), &ripple::ingest::LoadOptions::default()).unwrap(),
    );
    let total = g.graph.node_count();
    assert!(total > 10_000);
    let facts = ripple::impact::TimeFacts::build(&g).unwrap();
    // A change near the end of the graph: few affected, drawn with the
    // datasets one hop away and nothing else.
    let leafish = g
        .graph
        .node_indices()
        .filter(|&n| g.graph[n].id.starts_with("model.m_"))
        .max_by_key(|&n| {
            g.graph[n]
                .id
                .trim_start_matches("model.m_")
                .parse::<u32>()
                .unwrap()
        })
        .unwrap();
    let upstream = g
        .graph
        .neighbors_directed(leafish, petgraph::Direction::Incoming)
        .next()
        .unwrap();
    let (small, model) =
        ripple::impact::impact(&g, &facts, &request(&g.graph[upstream].id), true).unwrap();
    let affected: std::collections::HashSet<petgraph::graph::NodeIndex> =
        small.datasets.iter().map(|d| g.index[&d.id]).collect();
    let mut hop = std::collections::HashSet::new();
    for &n in &affected {
        for m in g.graph.neighbors_undirected(n) {
            if !affected.contains(&m) {
                hop.insert(m);
            }
        }
    }
    let d = ripple::emit::impact::diagram(&g, &model, &small);
    assert_eq!(d.nodes.len(), affected.len() + hop.len());
    let context = d.nodes.iter().filter(|n| n.state == "context").count();
    assert_eq!(context, hop.len());
    let folded = d.folded.as_deref().unwrap();
    assert!(
        folded.starts_with(&format!(
            "{} of {total} datasets not drawn",
            total - d.nodes.len()
        )),
        "{folded}"
    );

    // A change at the root reaches thousands: at most MAX_DRAWN boxes, every
    // affected dataset still listed, the file well under 5 MB.
    let (big, model) = ripple::impact::impact(&g, &facts, &request("raw.*"), true).unwrap();
    let html = ripple::emit::impact::html(&g, &model, &big);
    assert!(
        big.datasets.len() > ripple::emit::impact::MAX_DRAWN,
        "{}",
        big.datasets.len()
    );
    assert!(html.len() < 5 * 1024 * 1024, "{} bytes", html.len());
    assert_eq!(
        html.matches("class=\"rp-node ").count(),
        ripple::emit::impact::MAX_DRAWN
    );
    let listed =
        html.matches("<details class=\"rp-strip\"").count() + html.matches("<tr data-id=").count();
    assert_eq!(listed, big.datasets.len());
    assert!(html.contains("datasets not drawn"));
    if let Some(seen) = load_quietly(&html, "big-impact") {
        assert_eq!(seen["nodes"], ripple::emit::impact::MAX_DRAWN);
        assert_eq!(seen["console_errors"], Value::Array(vec![]));
    }
}

#[test]
fn a_dataset_reading_many_lists_its_reasons_up_to_a_cap() {
    // Each model reading every earlier one: every row of the HTML report
    // listed every reason, and each SVG box's tooltip every edge (66 MB
    // at 600 models; at 1,700 the report aborted on allocation).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    for i in 1..120 {
        let reads: Vec<String> = (0..i).map(|j| format!("select x from m{j}")).collect();
        std::fs::write(
            dir.path().join(format!("jobs/m{i}.sql")),
            format!("create table m{i} as {};\n", reads.join(" union all ")),
        )
        .unwrap();
    }
    let project = dir.path().to_str().unwrap();
    let args = |format: &'static str| {
        [
            "impact",
            "m0",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-10",
            "--as-of",
            "2026-02-01",
            "--no-cache",
            "--format",
            format,
            "--project",
            project,
        ]
    };
    let html = ripple(&args("html"));
    for row in html.split("<details").skip(1) {
        let row = row.split("</details>").next().unwrap();
        assert!(row.matches("</li>").count() <= 41, "{row}");
    }
    assert!(html.contains("more (the JSON output has every one)"));
    let svg = ripple(&args("svg"));
    for title in svg.split("<title>").skip(1) {
        let title = title.split("</title>").next().unwrap();
        assert!(title.lines().count() <= 43, "{title}");
    }
}
