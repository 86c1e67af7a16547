//! Settings compared dataset by dataset: the dbt config keys that decide how
//! a model is built, and its `ripple.yml` entry (grain, start, time mappings,
//! unique key, partition column).

use std::collections::BTreeMap;

use crate::config::DatasetConfig;
use crate::graph::LineageGraph;
use crate::project::Dataset;

/// dbt config keys compared, and whether a change to each decides which
/// rows the model holds (rather than only how it is stored or run).
const DBT_KEYS: [(&str, bool); 10] = [
    ("materialized", false),
    ("incremental_strategy", true),
    ("unique_key", true),
    ("partition_by", false),
    ("cluster_by", false),
    ("event_time", true),
    ("batch_size", false),
    ("lookback", true),
    ("begin", true),
    ("full_refresh", false),
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
        for (key, changes_rows) in DBT_KEYS {
            let (old, new) = (b.config.get(key), h.config.get(key));
            if old != new {
                changes.push(SettingChange {
                    text: format!("{key}: {} → {}", json(old), json(new)),
                    changes_rows,
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
    fields
        .into_iter()
        .filter(|(_, o, n, _)| o != n)
        .map(|(key, o, n, changes_rows)| SettingChange {
            text: format!("ripple.yml {key}: {o} → {n}"),
            changes_rows,
            in_ripple_yml: true,
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
