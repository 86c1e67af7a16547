//! Reading 1,000 generated DAG files of 20 tasks each into the graph:
//! parse (never import), render templates, SQL lineage per task, graph.
//!
//! `cargo bench --bench airflow`

use ripple::graph::LineageGraph;
use ripple::ingest::{LoadOptions, load_project};

#[path = "support/dags.rs"]
mod support;

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10)]
fn read_1000_dag_files_into_the_graph(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    support::generate(dir.path(), 1_000, 20).unwrap();
    bencher.bench(|| {
        let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
        assert_eq!(project.dags.len(), 1_000);
        LineageGraph::build(project)
    });
}
