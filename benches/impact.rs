//! Impact on a generated 10,000-model project: on a graph already loaded
//! (graph and time facts built), and end to end (load, graph, time facts —
//! SQL inference included —, impact).
//!
//! `cargo bench --bench impact`

use ripple::graph::LineageGraph;
use ripple::impact::{ImpactRequest, TimeFacts, impact};
use ripple::ingest::{LoadOptions, load_project};
use ripple::time::TimeKey;

#[path = "support/dbt_project.rs"]
mod support;

fn main() {
    divan::main();
}

fn request() -> ImpactRequest {
    ImpactRequest {
        changed: vec!["raw.t0".into(), "raw.t1".into()],
        from: TimeKey::parse("2026-01-10").unwrap(),
        to: TimeKey::parse("2026-01-12").unwrap(),
        as_of: TimeKey::parse("2026-02-01").unwrap().start,
        columns: Vec::new(),
    }
}

#[divan::bench(sample_count = 20)]
fn impact_on_loaded_10k_graph(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    support::generate(dir.path(), 10_000).unwrap();
    let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
    let facts = TimeFacts::build(&g).unwrap();
    let req = request();
    let affected = impact(&g, &facts, &req, false).unwrap().0.datasets.len();
    assert!(affected > 100, "only {affected} affected");
    bencher.bench(|| impact(&g, &facts, &req, false).unwrap());
}

#[divan::bench(sample_count = 10)]
fn load_graph_and_impact_10k(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    support::generate(dir.path(), 10_000).unwrap();
    let req = request();
    bencher.bench(|| {
        let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
        let facts = TimeFacts::build(&g).unwrap();
        impact(&g, &facts, &req, false).unwrap()
    });
}

/// The same impact pruned to one wrong column (`--columns amount`): only
/// the models whose columns read it, or whose rows it decides. Prints the
/// affected counts with and without pruning.
#[divan::bench(args = ["amount", "updated_at"], sample_count = 20)]
fn impact_pruned_by_one_column_on_loaded_10k_graph(bencher: divan::Bencher, column: &str) {
    let dir = tempfile::tempdir().unwrap();
    support::generate(dir.path(), 10_000).unwrap();
    let g = LineageGraph::build(load_project(dir.path(), &LoadOptions::default()).unwrap());
    let facts = TimeFacts::build(&g).unwrap();
    let all = impact(&g, &facts, &request(), false)
        .unwrap()
        .0
        .datasets
        .len();
    let req = ImpactRequest {
        columns: vec![column.to_string()],
        ..request()
    };
    let pruned = impact(&g, &facts, &req, false).unwrap().0.datasets.len();
    eprintln!("--columns {column}: {pruned} of {all} datasets affected");
    assert!(pruned <= all);
    bencher.bench(|| impact(&g, &facts, &req, false).unwrap());
}
