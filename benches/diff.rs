//! `ripple diff` on a 10,000-model project with 10 changed models, end to
//! end after the files are on disk: both versions loaded (in parallel, as
//! the CLI does), graphs built, every job compared, downstream followed
//! column by column, Markdown written.
//!
//! `cargo bench --bench diff`

use std::path::Path;

use ripple::graph::LineageGraph;
use ripple::ingest::{LoadOptions, load_project};

#[path = "support/dbt_project.rs"]
mod support;
#[path = "../tests/support/temp_project.rs"]
mod temp_project;

fn main() {
    divan::main();
}

/// Edits 10 models of the head copy: 4 changed expressions, 3 added
/// columns, 2 changed filters, 1 formatting-only.
fn edit(head: &Path) {
    let edits: [(usize, &str, &str); 10] = [
        (2_500, "count(*) as n", "count(*) * 2 as n"),
        (4_000, "count(*) as n", "count(distinct u0.id) as n"),
        (6_000, "count(*) as n", "count(*) + 1 as n"),
        (
            9_000,
            "sum(u0.amount) as amount",
            "sum(u0.amount) * 1.1 as amount",
        ),
        (
            3_000,
            "count(*) as n",
            "count(*) as n, max(u0.amount) as top",
        ),
        (
            5_000,
            "count(*) as n",
            "count(*) as n, min(u0.amount) as low",
        ),
        (8_000, "count(*) as n", "count(*) as n, 1 as one"),
        (3_500, "group by 1", "where u0.amount > 0\ngroup by 1"),
        (7_500, "group by 1", "where u0.id is not null\ngroup by 1"),
        (2_100, "group by 1", "GROUP BY 1 -- by id"),
    ];
    for (m, from, to) in edits {
        let folder = if m * 10 >= 10_000 * 7 {
            "marts"
        } else {
            "intermediate"
        };
        let path = head.join(format!("models/{folder}/m_{m}.sql"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "m_{m}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
}

#[divan::bench(sample_count = 10)]
fn diff_10k_models_10_changed(bencher: divan::Bencher) {
    let base = tempfile::tempdir().unwrap();
    let head = tempfile::tempdir().unwrap();
    support::generate(base.path(), 10_000).unwrap();
    temp_project::copy_tree(base.path(), head.path());
    edit(head.path());
    let load =
        |root: &Path| LineageGraph::build(load_project(root, &LoadOptions::default()).unwrap());
    bencher.bench(|| {
        let (b, h) = rayon::join(|| load(base.path()), || load(head.path()));
        let report = ripple::diff::diff(&b, &h);
        let count = |k| report.count(k);
        use ripple::diff::ChangeKind::*;
        assert_eq!(
            [
                count(Column),
                count(NonBreaking),
                count(Breaking),
                count(NoOp)
            ],
            [4, 3, 2, 1],
            "{}",
            ripple::emit::diff::text(&report)
        );
        if std::env::var_os("RIPPLE_BENCH_SHOW").is_some() {
            eprintln!("{}", ripple::emit::diff::summary(&report));
        }
        ripple::emit::diff::markdown(&report).len()
    });
}
