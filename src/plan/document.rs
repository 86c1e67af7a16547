//! Assembling the plan document from tasks: what each task writes (its
//! dataset's shadow) and reads (the shadow of every upstream the plan
//! rewrites, production for the rest), its validations, one swap per
//! dataset after all of its tasks, and the rollback.

use std::collections::{BTreeMap, HashSet};

use petgraph::Direction;
use serde::Serialize;

use super::sql::{
    DEFAULT_SHADOW, partition_filter, quote_relation, rollback, shadow_relation, swap,
};
use super::{PlanTask, Tasks};
use crate::graph::LineageGraph;
use crate::impact::{Impact, TimeModel};
use crate::project::Dataset;
use crate::sql::SqlDialect;
use crate::time::Grain;

/// Tolerance of the built-in row-count check: the shadow's rows within this
/// fraction of production's for the same partitions.
pub const ROW_COUNT_TOLERANCE: f64 = 0.1;

/// A task as the plan document lists it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DocTask {
    /// The task (id, dataset, range, dependencies).
    #[serde(flatten)]
    pub task: PlanTask,
    /// The relation it writes: always a shadow.
    pub writes: String,
    /// What it reads, by upstream dataset id: the shadow when the plan
    /// rewrites that upstream, production otherwise.
    pub reads: BTreeMap<String, String>,
    /// Queries that must all return true before its dataset is swapped.
    pub validations: Vec<String>,
    /// How to run it, per executor that runs its job.
    pub commands: super::executors::Commands,
}

/// One swap per dataset, after all of its tasks and validations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Swap {
    /// The dataset.
    pub dataset: String,
    /// Every task of the dataset.
    pub depends_on: Vec<String>,
    /// The statements, in order.
    pub sql: Vec<String>,
}

/// The plan so far (no schedule or executor commands yet).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PlanDocument {
    /// Changed datasets.
    pub changed: Vec<String>,
    /// Datasets taken as correct inputs.
    pub assumed: Vec<String>,
    /// Tasks in order.
    pub tasks: Vec<DocTask>,
    /// Swaps, one per dataset.
    pub swaps: Vec<Swap>,
    /// Statements that undo the plan: drop every shadow.
    pub rollback: Vec<String>,
    /// The schedule (with `--start`; null otherwise).
    pub schedule: Option<super::schedule::ScheduleSummary>,
    /// What keeps a swap from being written (a partition column to set).
    pub warnings: Vec<String>,
}

/// The plan document of `tasks`.
pub fn document(
    g: &LineageGraph,
    model: &TimeModel,
    impact: &Impact,
    tasks: Tasks,
) -> PlanDocument {
    let dialect = g.config.dialect;
    let pattern = g
        .config
        .backfill
        .shadow
        .clone()
        .unwrap_or_else(|| DEFAULT_SHADOW.to_string());
    let rewritten: HashSet<&str> = tasks.tasks.iter().map(|t| t.dataset.as_str()).collect();
    let shadow_of = |d: &Dataset| shadow_relation(&pattern, &d.relation, &g.config.target.schema);
    let mut warnings = Vec::new();
    let mut doc_tasks = Vec::new();
    // Production relation → shadow, for every dataset the plan rewrites.
    let shadows: std::collections::HashMap<String, String> = rewritten
        .iter()
        .filter_map(|id| g.dataset(id))
        .map(|d| (d.relation.clone(), shadow_of(d)))
        .collect();
    // A full rebuild runs once: as the last day before --as-of.
    let last_day = crate::time::TimeKey::parse(&impact.as_of)
        .map(|k| Grain::Day.key(k.start - 24))
        .unwrap_or_default();
    let max_active_runs = g.config.backfill.max_concurrency.unwrap_or(1);
    let mut by_dataset: BTreeMap<String, Vec<&PlanTask>> = BTreeMap::new();
    for t in &tasks.tasks {
        by_dataset.entry(t.dataset.clone()).or_default().push(t);
    }
    for t in &tasks.tasks {
        let Some(d) = g.dataset(&t.dataset) else {
            continue;
        };
        let node = g.index[&t.dataset];
        let mut reads = BTreeMap::new();
        for up in g.graph.neighbors_directed(node, Direction::Incoming) {
            let u = &g.graph[up];
            let relation = if rewritten.contains(u.id.as_str()) {
                shadow_of(u)
            } else {
                u.relation.clone()
            };
            reads.insert(u.id.clone(), relation);
        }
        let grain = model.datasets.get(&node).map_or(Grain::None, |x| x.grain);
        let filter = (!t.full)
            .then(|| partition_column(g, d))
            .flatten()
            .map(|c| partition_filter(dialect, &c, grain, t.span.0, t.span.1));
        let commands = g
            .writers
            .get(&t.dataset)
            .and_then(|w| w.first())
            .and_then(|j| g.jobs.get(j))
            .map(|job| {
                super::executors::commands(
                    g,
                    t,
                    d,
                    job,
                    &shadows,
                    max_active_runs,
                    (&last_day, &last_day),
                )
            })
            .unwrap_or_default();
        doc_tasks.push(DocTask {
            commands,
            validations: validations(g, d, &shadow_of(d), filter.as_deref(), t, dialect),
            writes: shadow_of(d),
            reads,
            task: t.clone(),
        });
    }
    let mut swaps = Vec::new();
    let mut rollbacks = Vec::new();
    for (dataset, ts) in &by_dataset {
        let Some(d) = g.dataset(dataset) else {
            continue;
        };
        let shadow = shadow_of(d);
        rollbacks.push(rollback(dialect, &shadow));
        let full = ts.iter().any(|t| t.full);
        let filter = if full {
            None
        } else {
            match partition_column(g, d) {
                Some(c) => {
                    let node = g.index[dataset];
                    let grain = model.datasets.get(&node).map_or(Grain::None, |x| x.grain);
                    let parts: Vec<String> = ts
                        .iter()
                        .map(|t| {
                            format!(
                                "({})",
                                partition_filter(dialect, &c, grain, t.span.0, t.span.1)
                            )
                        })
                        .collect();
                    Some(parts.join(" or "))
                }
                None => {
                    warnings.push(format!(
                        "`{}`: no partition column is known, so its restated partitions cannot be swapped in; set `partition_column` under datasets.{} in ripple.yml",
                        d.name, d.name
                    ));
                    continue;
                }
            }
        };
        swaps.push(Swap {
            dataset: dataset.clone(),
            depends_on: ts.iter().map(|t| t.id.clone()).collect(),
            sql: swap(dialect, &d.relation, &shadow, filter.as_deref()),
        });
    }
    PlanDocument {
        changed: impact.changed.clone(),
        assumed: tasks.assumed,
        tasks: doc_tasks,
        swaps,
        rollback: rollbacks,
        schedule: None,
        warnings,
    }
}

/// The column partitions are selected by: `ripple.yml`, else dbt's
/// `event_time`, else `partition_by.field`.
fn partition_column(g: &LineageGraph, d: &Dataset) -> Option<String> {
    d.settings(&g.config)
        .and_then(|c| c.partition_column.clone())
        .or_else(|| {
            d.config
                .get("event_time")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .or_else(|| {
            d.config
                .get("partition_by")
                .and_then(|p| p.get("field"))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
}

/// The dataset's own `validate` query (placeholders filled) and the
/// built-in checks: non-empty where production is non-empty, row count
/// within a tolerance of production, unique key when one is declared.
fn validations(
    g: &LineageGraph,
    d: &Dataset,
    shadow: &str,
    filter: Option<&str>,
    t: &PlanTask,
    dialect: SqlDialect,
) -> Vec<String> {
    let s = quote_relation(dialect, shadow);
    let p = quote_relation(dialect, &d.relation);
    let f = filter.unwrap_or("true");
    let cfg = d.settings(&g.config);
    let mut out = Vec::new();
    if let Some(v) = cfg.and_then(|c| c.validate.as_deref()) {
        out.push(
            v.replace("{table}", &s)
                .replace("{partition_filter}", f)
                .replace("{from}", t.from.as_deref().unwrap_or(""))
                .replace("{to}", t.to.as_deref().unwrap_or("")),
        );
    }
    out.push(format!("select (select count(*) from {s} where {f}) > 0 or (select count(*) from {p} where {f}) = 0"));
    out.push(format!(
        "select abs((select count(*) from {s} where {f}) - (select count(*) from {p} where {f})) <= {ROW_COUNT_TOLERANCE} * (select count(*) from {p} where {f})"
    ));
    let key: Vec<String> = match cfg.map(|c| c.unique_key.clone()).filter(|k| !k.is_empty()) {
        Some(k) => k,
        None => d
            .config
            .get("unique_key")
            .and_then(|v| v.as_str())
            .map(|k| vec![k.to_string()])
            .unwrap_or_default(),
    };
    if !key.is_empty() {
        let cols = key
            .iter()
            .map(|c| super::sql::quote_ident(dialect, c))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(format!("select count(*) = 0 from (select {cols} from {s} where {f} group by {cols} having count(*) > 1) duplicates"));
    }
    out
}
