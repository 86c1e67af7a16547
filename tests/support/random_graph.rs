//! Random lineage graphs for property tests (impact, plan): node `t{i}`
//! reads one or two earlier nodes (`t1` always reads `t0`), with random
//! grains, starts and edge mappings, built in memory.

#![allow(dead_code)]

use proptest::prelude::*;
use ripple::config::{Config, DatasetConfig};
use ripple::graph::LineageGraph;
use ripple::impact::ImpactRequest;
use ripple::project::{AirflowTask, Job, JobKind, Project, Reference, SqlTemplate, Target};
use ripple::time::{Grain, Hour, TimeKey, TimeMapping};

pub fn key(s: &str) -> TimeKey {
    TimeKey::parse(s).unwrap()
}

pub fn request(changed: &[&str], from: &str, to: &str, as_of: &str) -> ImpactRequest {
    ImpactRequest {
        changed: changed.iter().map(|s| s.to_string()).collect(),
        from: key(from),
        to: key(to),
        as_of: key(as_of).start,
        columns: Vec::new(),
    }
}

/// A random DAG: node i reads 1-2 earlier nodes; node 1 always reads node 0.
#[derive(Debug, Clone)]
pub struct Case {
    pub grains: Vec<Grain>,
    pub starts: Vec<i64>,
    pub ups: Vec<Vec<(usize, TimeMapping)>>,
    pub from: i64,
    pub len: i64,
}

pub fn mapping() -> impl Strategy<Value = TimeMapping> {
    prop_oneof![
        3 => Just(TimeMapping::Identity),
        1 => Just(TimeMapping::All),
        1 => Just(TimeMapping::None),
        3 => (-4i64..=1, 0i64..=2).prop_map(|(lo, w)| TimeMapping::Window(lo, lo + w)),
    ]
}

pub fn case() -> impl Strategy<Value = Case> {
    (3usize..8).prop_flat_map(|n| {
        (
            prop::collection::vec(prop::sample::select(Grain::ALL.to_vec()), n),
            prop::collection::vec(0i64..60, n),
            prop::collection::vec(
                prop::collection::vec((any::<prop::sample::Index>(), mapping()), 1..3),
                n,
            ),
            0i64..40,
            0i64..5,
        )
            .prop_map(move |(mut grains, starts, raw_ups, from, len)| {
                // Hour data far back makes the oracle slow; keep it near.
                grains[0] = if grains[0] == Grain::None {
                    Grain::Day
                } else {
                    grains[0]
                };
                let ups = raw_ups
                    .into_iter()
                    .enumerate()
                    .map(|(i, picks)| {
                        if i == 0 {
                            return Vec::new();
                        }
                        let mut v: Vec<(usize, TimeMapping)> = Vec::new();
                        for (k, (idx, m)) in picks.into_iter().enumerate() {
                            let u = if i == 1 && k == 0 { 0 } else { idx.index(i) };
                            if !v.iter().any(|(x, _)| *x == u) {
                                v.push((u, m));
                            }
                        }
                        v
                    })
                    .collect();
                Case {
                    grains,
                    starts,
                    ups,
                    from,
                    len,
                }
            })
    })
}

pub const BASE: &str = "2025-11-01";
pub const AS_OF: &str = "2026-03-01";

pub fn day(offset: i64) -> Hour {
    key(BASE).start + offset * 24
}

pub fn build(c: &Case) -> LineageGraph {
    let name = |i: usize| format!("t{i}");
    let mut config = Config::default();
    for i in 0..c.grains.len() {
        let start = Grain::Day.key(day(-c.starts[i]));
        let upstream = c.ups[i].iter().map(|(u, m)| (name(*u), *m)).collect();
        config.datasets.insert(
            name(i),
            DatasetConfig {
                grain: Some(c.grains[i]),
                start: Some(start),
                upstream,
                partition_column: Some("d".to_string()),
                ..DatasetConfig::default()
            },
        );
    }
    // A task's SQL, for the plan's sql executor to run per date.
    let sql = |i: usize| {
        format!(
            "insert into {} (d) {}",
            name(i),
            c.ups[i]
                .iter()
                .map(|(u, _)| format!("select d from {} where d = '{{{{ ds }}}}'", name(*u)))
                .collect::<Vec<_>>()
                .join(" union all ")
        )
    };
    let jobs = (1..c.grains.len())
        .filter(|&i| !c.ups[i].is_empty())
        // Airflow tasks take their run's dates, so the plan batches them.
        .map(|i| Job {
            id: format!("airflow:dag.{}", name(i)),
            kind: JobKind::Airflow,
            file: format!("{}.py", name(i)),
            reads: c.ups[i]
                .iter()
                .map(|(u, _)| Reference {
                    target: Target::Relation { relation: name(*u) },
                    line: 1,
                })
                .collect(),
            writes: vec![Reference {
                target: Target::Relation { relation: name(i) },
                line: 1,
            }],
            feeds: None,
            sql: Some(sql(i).into()),
            airflow: Some(Box::new(AirflowTask {
                dag_id: "dag".to_string(),
                task_id: name(i),
                template: Some(SqlTemplate {
                    text: sql(i),
                    params: Default::default(),
                }),
            })),
            built_by: None,
            needs_warehouse: Vec::new(),
            from_manifest: Default::default(),
        })
        .collect();
    LineageGraph::build(Project {
        config,
        jobs,
        ..Project::default()
    })
}
