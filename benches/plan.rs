//! A plan for a 10,000-model graph with a year of daily impact, end to end:
//! load, graph, time facts, impact, tasks, document, JSON.
//!
//! `cargo bench --bench plan`

use ripple::graph::LineageGraph;
use ripple::impact::{ImpactRequest, TimeFacts, impact};
use ripple::ingest::{LoadOptions, load_project};
use ripple::time::TimeKey;

#[path = "support/dbt_project.rs"]
mod support;

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10)]
fn plan_10k_models_a_year_of_days(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    support::generate(dir.path(), 10_000).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "datasets:\n  raw.t0: { grain: day, start: 2024-01-01 }\n",
    )
    .unwrap();
    let req = ImpactRequest {
        changed: vec!["raw.t0".into()],
        from: TimeKey::parse("2025-01-01").unwrap(),
        to: TimeKey::parse("2025-12-31").unwrap(),
        as_of: TimeKey::parse("2026-01-01").unwrap().start,
    };
    bencher.bench(|| {
        let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
        let facts = TimeFacts::build(&g).unwrap();
        let (i, model) = impact(&g, &facts, &req, false).unwrap();
        let tasks = ripple::plan::tasks(&g, &model, &i).unwrap();
        let n = tasks.tasks.len();
        let doc = ripple::plan::document(&g, &model, &i, tasks, &Default::default()).unwrap();
        let json = ripple::emit::plan::json(&doc);
        assert!(n > 1000, "only {n} tasks");
        json.len()
    });
}
