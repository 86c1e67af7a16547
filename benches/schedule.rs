//! Scheduling a plan of 300,000 tasks (`plan --start`): chains of four
//! batches per dataset, a concurrency cap, a nightly window and a daily
//! production run. Placement uses a step function of running tasks, so the
//! cost grows with the tasks, not with their square.
//!
//! `frequent_production`: one-minute tasks between production runs every
//! two minutes (a DAG on `*/2 * * * *`), where each task used to rescan the
//! runs and tasks before it.
//!
//! `cargo bench --bench schedule`

use ripple::plan::schedule::{Constraints, Job, schedule};

fn main() {
    divan::main();
}

fn jobs(n: usize) -> Vec<Job> {
    (0..n)
        .map(|i| Job {
            id: format!("t{i}"),
            dataset: format!("d{}", i / 4),
            minutes: 5 + (i % 7) as i64,
            // Each dataset's batches run in order; every 40th dataset also
            // waits for the one before it.
            after: if i % 4 != 0 || (i >= 4 && i % 160 == 0) {
                vec![i - 1]
            } else {
                Vec::new()
            },
            dataset_cap: (i % 3 == 0).then_some(1),
        })
        .collect()
}

#[divan::bench(args = [30_000, 300_000], sample_count = 5)]
fn schedule_tasks(bencher: divan::Bencher, n: usize) {
    let jobs = jobs(n);
    let days = 400;
    let c = Constraints {
        start: 0,
        max_concurrency: 64,
        windows: vec![(20 * 60, 6 * 60)],
        blackouts: (0..days)
            .map(|d| (d * 1440 + 120, d * 1440 + 210))
            .collect(),
        deadline: None,
    };
    bencher.bench(|| {
        let (placed, _) = schedule(&jobs, &c).unwrap();
        assert_eq!(placed.len(), n);
        placed
    });
}

/// Hourly one-minute batches (a partition costing under a minute), a
/// production run every two minutes for one, two at a time; every third
/// dataset one at a time.
#[divan::bench(args = [2_000, 20_000], sample_count = 5)]
fn frequent_production(bencher: divan::Bencher, n: usize) {
    let jobs: Vec<Job> = (0..n)
        .map(|i| Job {
            id: format!("t{i}"),
            dataset: format!("d{}", i % 6),
            minutes: 1,
            after: Vec::new(),
            dataset_cap: (i % 6 % 3 == 0).then_some(1),
        })
        .collect();
    let c = Constraints {
        start: 0,
        max_concurrency: 2,
        windows: Vec::new(),
        blackouts: (0..400 * 720).map(|k| (2 * k, 2 * k + 1)).collect(),
        deadline: None,
    };
    bencher.bench(|| {
        let (placed, _) = schedule(&jobs, &c).unwrap();
        assert_eq!(placed.len(), n);
        placed
    });
}
