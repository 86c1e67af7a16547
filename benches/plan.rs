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
    // The aggregate models hold no date column: rebuilt whole (a plan
    // refuses partitions it cannot select); the microbatch staging models
    // are batched by day.
    let mut yml = String::from("datasets:\n  raw.t0: { grain: day, start: 2024-01-01 }\n");
    let mut stack = vec![dir.path().join("models")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let path = e.path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                stack.push(path);
            } else if name.starts_with("m_") {
                yml.push_str(&format!("  {name}: {{ grain: none }}\n"));
            }
        }
    }
    std::fs::write(dir.path().join("ripple.yml"), yml).unwrap();
    let req = ImpactRequest {
        changed: vec!["raw.t0".into()],
        from: TimeKey::parse("2025-01-01").unwrap(),
        to: TimeKey::parse("2025-12-31").unwrap(),
        as_of: TimeKey::parse("2026-01-01").unwrap().start,
        columns: Vec::new(),
    };
    bencher.bench(|| {
        let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
        let facts = TimeFacts::build(&g).unwrap();
        let (i, model) = impact(&g, &facts, &req, false).unwrap();
        let tasks = ripple::plan::tasks(&g, &model, &i).unwrap();
        let n = tasks.tasks.len();
        let doc = ripple::plan::document(&g, &model, &i, tasks, &Default::default()).unwrap();
        let json = ripple::emit::plan::json(&doc);
        assert!(n > 500, "only {n} tasks");
        json.len()
    });
}
