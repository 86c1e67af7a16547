//! Reading 1,000 generated DAG files of 20 tasks each into the graph:
//! parse (never import), render templates, SQL lineage per task, cross-DAG
//! edges, graph.
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
        // dag_1 runs after dag_0 (its dataset, and a sensor).
        assert_eq!(project.dags[1].upstream_dags.len(), 2);
        LineageGraph::build(project)
    });
}

/// One DAG file of 100,000 tasks in a chain (`t0 >> t1`, one line each):
/// the reader's dependency index and line index keep it near-linear (a
/// scan per `>>` took 4.5 minutes).
#[divan::bench(sample_count = 5)]
fn read_one_dag_of_100_000_tasks(bencher: divan::Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    let mut body = String::from(
        "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nwith DAG('big') as dag:\n",
    );
    for i in 0..n {
        body.push_str(&format!("    t{i} = E(task_id='t{i}')\n"));
    }
    for i in 1..n {
        body.push_str(&format!("    t{} >> t{i}\n", i - 1));
    }
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    std::fs::write(dir.path().join("dags/big.py"), body).unwrap();
    let dirs = [dir.path().join("dags")];
    bencher.bench(|| {
        let dags = ripple::ingest::read_dags(dir.path(), &dirs, ripple::sql::SqlDialect::Postgres);
        assert_eq!(dags.dags[0].tasks.len(), n);
        dags
    });
}
