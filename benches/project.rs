//! Loading a generated dbt-style project and building its lineage graph,
//! end to end (read, render Jinja, resolve refs, build the petgraph).
//!
//! `cargo bench --bench project` — sizes 1,000 and 10,000 models. The
//! 100,000-model run is too slow for a benchmark loop; measure it with the
//! shared generator (`python3 ../shared/tools/gen_project.py 100000 --out
//! DIR`) and `/usr/bin/time -v target/release/ripple graph --project DIR`,
//! and against dbt with `scripts/bench_vs_dbt.sh` (see docs/performance.md).

use std::path::PathBuf;

use ripple::graph::LineageGraph;
use ripple::ingest::{LoadOptions, load_project};

#[path = "support/dbt_project.rs"]
mod support;

fn main() {
    divan::main();
}

fn project(models: usize) -> (tempfile::TempDir, PathBuf, usize) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let generated = support::generate(&root, models).unwrap();
    (dir, root, generated.edges)
}

#[divan::bench(args = [1_000, 10_000], sample_count = 10)]
fn load_and_build_graph(bencher: divan::Bencher, models: usize) {
    let (_dir, root, edges) = project(models);
    bencher.bench(|| {
        let project = load_project(&root, &LoadOptions::default()).unwrap();
        let graph = LineageGraph::build(project);
        assert_eq!(graph.graph.edge_count(), edges);
        graph
    });
}

/// OpenLineage export of the whole graph (static events with column
/// lineage): the graph is built once, outside the timing.
#[divan::bench(args = [1_000, 10_000], sample_count = 5)]
fn openlineage_export(bencher: divan::Bencher, models: usize) {
    let (_dir, root, _) = project(models);
    let graph = LineageGraph::build(load_project(&root, &LoadOptions::default()).unwrap());
    let nodes = graph.graph.node_indices().collect();
    let options = ripple::emit::openlineage::Options {
        mode: ripple::emit::openlineage::Mode::Static,
        event_time: 0,
    };
    bencher.bench(|| ripple::emit::openlineage::events(&graph, &nodes, &options));
}
