//! Settings compared dataset by dataset: the dbt config keys that decide how
//! a model is built, and its `ripple.yml` entry (grain, start, time mappings,
//! unique key, partition column).

use std::collections::{BTreeMap, BTreeSet};

use crate::config::DatasetConfig;
use crate::graph::LineageGraph;
use crate::project::Dataset;

/// dbt config keys whose change decides which rows a dataset holds (the
/// others only decide how it is stored or run). Hooks and a header run SQL
/// of their own; a snapshot's strategy keys decide which versions it keeps;
/// a seed's types and delimiter decide what its file loads as.
const ROW_KEYS: [&str; 24] = [
    "incremental_strategy",
    "merge_update_columns",
    "merge_exclude_columns",
    "unique_key",
    "event_time",
    "lookback",
    "begin",
    "incremental_predicates",
    "on_schema_change",
    "strategy",
    "check_cols",
    "updated_at",
    "hard_deletes",
    "invalidate_hard_deletes",
    "dbt_valid_to_current",
    "snapshot_meta_column_names",
    "column_types",
    "delimiter",
    "quote_columns",
    "pre_hook",
    "post_hook",
    "pre-hook",
    "post-hook",
    "sql_header",
];

/// dbt config keys not compared: those that only document a dataset, and
/// those the relation (compared as such) already shows the effect of — a
/// `schema` a naming macro ignores moves nothing. Every other key is
/// compared, so a key dbt adds later is reported rather than missed.
const SKIPPED_KEYS: [&str; 12] = [
    "schema",
    "alias",
    "database",
    "enabled",
    "description",
    "docs",
    "meta",
    "persist_docs",
    "group",
    "access",
    "latest_version",
    "version",
];

/// One setting that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SettingChange {
    /// `key: old → new`.
    pub text: String,
    /// Whether it changes which rows the dataset holds.
    pub changes_rows: bool,
    /// Whether it was set in `ripple.yml` (rather than in dbt config).
    pub in_ripple_yml: bool,
}

/// Datasets in both graphs whose settings differ, by node id.
pub(crate) fn compare(
    base: &LineageGraph,
    head: &LineageGraph,
) -> BTreeMap<String, Vec<SettingChange>> {
    let mut out = BTreeMap::new();
    for h in head.graph.node_weights() {
        let Some(b) = base.dataset(&h.id) else {
            continue;
        };
        let mut changes = Vec::new();
        if b.relation != h.relation {
            // `alias`, `schema` or a naming macro moved it: whatever reads
            // the old name (exports, dashboards, other projects) breaks.
            changes.push(SettingChange {
                text: format!("relation: {} → {}", b.relation, h.relation),
                changes_rows: true,
                in_ripple_yml: false,
            });
        }
        let keys: BTreeSet<&String> = b.config.keys().chain(h.config.keys()).collect();
        // Columns' types build the table only under an enforced contract;
        // otherwise they document it.
        let enforced = |d: &Dataset| {
            d.config
                .get("contract")
                .and_then(|c| c.get("enforced"))
                .is_some_and(|e| e == &serde_json::Value::Bool(true))
        };
        for key in keys {
            if SKIPPED_KEYS.contains(&key.as_str()) {
                continue;
            }
            let contract = key == crate::ingest::DBT_CONTRACT_COLUMNS;
            if contract && !enforced(b) && !enforced(h) {
                continue;
            }
            let (old, new) = (b.config.get(key), h.config.get(key));
            if old != new {
                changes.push(SettingChange {
                    text: format!("{key}: {} → {}", json(old), json(new)),
                    changes_rows: contract || ROW_KEYS.contains(&key.as_str()),
                    in_ripple_yml: false,
                });
            }
        }
        let (old, new) = (entry(base, b), entry(head, h));
        if old != new {
            changes.extend(ripple_yml_changes(&old, &new));
        }
        if !changes.is_empty() {
            out.insert(h.id.clone(), changes);
        }
    }
    out
}

fn json(v: Option<&serde_json::Value>) -> String {
    v.map_or_else(|| "unset".to_string(), |v| v.to_string())
}

/// The dataset's `ripple.yml` entry (defaults when it has none).
fn entry(g: &LineageGraph, d: &Dataset) -> DatasetConfig {
    d.settings(&g.config).cloned().unwrap_or_default()
}

fn ripple_yml_changes(old: &DatasetConfig, new: &DatasetConfig) -> Vec<SettingChange> {
    let show = |v: Option<String>| v.unwrap_or_else(|| "unset".to_string());
    let fields: [(&str, String, String, bool); 5] = [
        (
            "grain",
            show(old.grain.map(|g| g.to_string())),
            show(new.grain.map(|g| g.to_string())),
            false,
        ),
        (
            "start",
            show(old.start.clone()),
            show(new.start.clone()),
            false,
        ),
        (
            "upstream",
            mappings(&old.upstream),
            mappings(&new.upstream),
            false,
        ),
        (
            "unique_key",
            old.unique_key.join(", "),
            new.unique_key.join(", "),
            true,
        ),
        (
            "partition_column",
            show(old.partition_column.clone()),
            show(new.partition_column.clone()),
            false,
        ),
    ];
    settings(fields)
        .into_iter()
        .map(|c| SettingChange {
            text: format!("ripple.yml {}", c.text),
            in_ripple_yml: true,
            ..c
        })
        .collect()
}

fn mappings(m: &BTreeMap<String, crate::time::TimeMapping>) -> String {
    if m.is_empty() {
        return "unset".to_string();
    }
    m.iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An Airflow DAG, or one of its tasks, whose settings differ.
pub(crate) struct DagChange {
    /// `dag_id`.
    pub dag: String,
    /// `task_id`; `None` for the DAG's own settings.
    pub task: Option<String>,
    /// Where it is declared (head).
    pub file: String,
    /// 1-based line of the declaration.
    pub line: u32,
    /// What changed.
    pub changes: Vec<SettingChange>,
}

/// DAGs and tasks in both graphs whose settings differ: when and how often
/// a DAG runs, and a task's order, operator and connections decide which
/// rows land, though no SQL changed.
pub(crate) fn compare_dags(base: &LineageGraph, head: &LineageGraph) -> Vec<DagChange> {
    let mut out = Vec::new();
    for h in &head.dags {
        let Some(b) = base.dags.iter().find(|b| b.dag_id == h.dag_id) else {
            continue;
        };
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "unset".to_string());
        let dag_fields = [
            ("schedule", show(&b.schedule), show(&h.schedule), true),
            ("start_date", show(&b.start_date), show(&h.start_date), true),
            ("end_date", show(&b.end_date), show(&h.end_date), true),
            (
                "catchup",
                show(&b.catchup.map(|c| c.to_string())),
                show(&h.catchup.map(|c| c.to_string())),
                true,
            ),
            (
                "max_active_runs",
                show(&b.max_active_runs.map(|c| c.to_string())),
                show(&h.max_active_runs.map(|c| c.to_string())),
                false,
            ),
            (
                "schedule datasets",
                b.schedule_datasets.join(", "),
                h.schedule_datasets.join(", "),
                true,
            ),
        ];
        let changes = settings(dag_fields);
        if !changes.is_empty() {
            out.push(DagChange {
                dag: h.dag_id.clone(),
                task: None,
                file: h.file.clone(),
                line: h.line,
                changes,
            });
        }
        for t in &h.tasks {
            let Some(bt) = b.tasks.iter().find(|bt| bt.task_id == t.task_id) else {
                continue;
            };
            let list = |v: &[String]| {
                let mut v = v.to_vec();
                v.sort();
                match v.is_empty() {
                    true => "none".to_string(),
                    false => v.join(", "),
                }
            };
            let task_fields = [
                ("upstream", list(&bt.upstream), list(&t.upstream), true),
                ("operator", bt.operator.clone(), t.operator.clone(), true),
                (
                    "connections",
                    list(&bt.connections),
                    list(&t.connections),
                    true,
                ),
                ("triggers", list(&bt.triggers), list(&t.triggers), true),
                ("mapped", bt.mapped.to_string(), t.mapped.to_string(), true),
                (
                    "depends_on_past",
                    bt.depends_on_past.to_string(),
                    t.depends_on_past.to_string(),
                    false,
                ),
                ("pool", show(&bt.pool), show(&t.pool), false),
                (
                    "trigger_rule",
                    show(&bt.trigger_rule),
                    show(&t.trigger_rule),
                    true,
                ),
                ("dbt", dbt_of(bt), dbt_of(t), true),
            ];
            let changes = settings(task_fields);
            if !changes.is_empty() {
                out.push(DagChange {
                    dag: h.dag_id.clone(),
                    task: Some(t.task_id.clone()),
                    file: h.file.clone(),
                    line: t.line,
                    changes,
                });
            }
        }
    }
    out
}

/// What dbt a task runs, as compared: its command and selection (cosmos's
/// generated tasks compare as their nodes).
fn dbt_of(t: &crate::project::Task) -> String {
    match &t.dbt {
        None => "none".to_string(),
        Some(d) => format!(
            "{} --select {} --exclude {}",
            d.command,
            d.select.join(" "),
            d.exclude.join(" ")
        ),
    }
}

/// `(key, old, new, decides rows)` fields that differ, as changes.
fn settings<const N: usize>(fields: [(&str, String, String, bool); N]) -> Vec<SettingChange> {
    fields
        .into_iter()
        .filter(|(_, o, n, _)| o != n)
        .map(|(key, o, n, changes_rows)| SettingChange {
            text: format!("{key}: {o} → {n}"),
            changes_rows,
            in_ripple_yml: false,
        })
        .collect()
}
