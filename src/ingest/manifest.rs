//! A dbt `manifest.json` (schema v10 and later): nodes, sources, their
//! `depends_on`, configs and relations, for teams that already have one.

use std::path::Path;

use serde_json::Value;

use super::files::relative;
use crate::project::{Dataset, DatasetKind, Diagnostic, Job, JobKind, Part, Reference, Target};

/// Reads the manifest at `path`.
pub(crate) fn load(root: &Path, path: &Path) -> Part {
    let mut out = Part::default();
    let file = relative(root, path);
    let doc: Value = match crate::input::read_text(path).map(|t| serde_json::from_str(&t)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            out.diagnostics.push(Diagnostic::error(
                "manifest-error",
                Some(file),
                e.line() as u32,
                e.column() as u32,
                format!("not valid JSON: {e}; regenerate it with `dbt parse`"),
            ));
            return out;
        }
        Err(e) => {
            out.diagnostics.push(Diagnostic::error(
                "read-error",
                Some(file),
                0,
                0,
                e.to_string(),
            ));
            return out;
        }
    };
    let version = doc
        .pointer("/metadata/dbt_schema_version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Some(v) = version
        .rsplit("/v")
        .next()
        .and_then(|v| v.trim_end_matches(".json").parse::<u32>().ok())
        && v < 10
    {
        out.diagnostics.push(Diagnostic::warning(
            "manifest-version",
            Some(file.clone()),
            0,
            0,
            format!("manifest schema v{v} is older than v10; fields may be missing"),
        ));
    }
    // What dbt tests: the nodes its test nodes depend on.
    let tested: std::collections::BTreeSet<&str> = doc
        .get("nodes")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, n)| n.get("resource_type").and_then(Value::as_str) == Some("test"))
        .flat_map(|(_, n)| {
            n.pointer("/depends_on/nodes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
        })
        .collect();
    for section in ["nodes", "sources"] {
        let Some(nodes) = doc.get(section).and_then(Value::as_object) else {
            continue;
        };
        for (unique_id, node) in nodes {
            let Some((kind, id)) = node_id(unique_id) else {
                continue;
            };
            let get = |k: &str| node.get(k).and_then(Value::as_str).map(str::to_string);
            let name = match kind {
                DatasetKind::Source => format!(
                    "{}.{}",
                    get("source_name").unwrap_or_default(),
                    get("name").unwrap_or_default()
                ),
                _ => get("name").unwrap_or_default(),
            };
            let relation = get("relation_name")
                .map(|r| r.replace(['"', '`'], ""))
                .unwrap_or_else(|| {
                    let ident = get("alias")
                        .or(get("identifier"))
                        .unwrap_or_else(|| name.clone());
                    format!("{}.{ident}", get("schema").unwrap_or_default())
                });
            let mut config: std::collections::BTreeMap<String, Value> = node
                .get("config")
                .and_then(Value::as_object)
                .map(|m| m.clone().into_iter().collect())
                .unwrap_or_default();
            let mut tags: Vec<String> = node
                .get("tags")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            tags.sort();
            tags.dedup();
            config.remove("tags");
            let mut columns: Vec<String> = node
                .get("columns")
                .and_then(Value::as_object)
                .map(|c| c.keys().cloned().collect())
                .unwrap_or_default();
            columns.sort();
            let node_file = get("original_file_path");
            out.datasets.push(Dataset {
                id: id.clone(),
                kind,
                name,
                relation: relation.to_lowercase(),
                package: get("package_name"),
                file: node_file.clone(),
                line: None,
                tags,
                columns,
                config,
                tests: tested.contains(unique_id.as_str()),
            });
            if matches!(kind, DatasetKind::Model | DatasetKind::Snapshot) {
                let reads = node
                    .pointer("/depends_on/nodes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter_map(|dep| {
                        node_id(dep).map(|(_, id)| Reference {
                            target: Target::Node { id },
                            line: 0,
                        })
                    })
                    .collect();
                out.jobs.push(Job {
                    id: id.clone(),
                    kind: JobKind::Manifest,
                    file: node_file.unwrap_or_else(|| file.clone()),
                    reads,
                    writes: vec![Reference {
                        target: Target::Node { id },
                        line: 0,
                    }],
                    feeds: None,
                    sql: node
                        .get("compiled_code")
                        .or_else(|| node.get("raw_code"))
                        .and_then(Value::as_str)
                        .map(|s| s.to_string().into()),
                    airflow: None,
                    built_by: None,
                    needs_warehouse: Vec::new(),
                    from_manifest: Default::default(),
                });
            }
        }
    }
    out
}

/// `model.pkg.name[.v2]` → (model, `model.name[.v2]`); tests, analyses and
/// other resources are not datasets.
pub(crate) fn node_id(unique_id: &str) -> Option<(DatasetKind, String)> {
    let parts: Vec<&str> = unique_id.split('.').collect();
    let (kind, rest) = match parts.as_slice() {
        ["model", _pkg, rest @ ..] => (DatasetKind::Model, rest),
        ["seed", _pkg, rest @ ..] => (DatasetKind::Seed, rest),
        ["snapshot", _pkg, rest @ ..] => (DatasetKind::Snapshot, rest),
        ["source", _pkg, rest @ ..] => (DatasetKind::Source, rest),
        _ => return None,
    };
    if rest.is_empty() {
        return None;
    }
    Some((kind, format!("{}.{}", kind.as_str(), rest.join("."))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_ids_lose_their_package() {
        assert_eq!(
            node_id("model.shop.orders"),
            Some((DatasetKind::Model, "model.orders".into()))
        );
        assert_eq!(
            node_id("model.shop.orders.v2"),
            Some((DatasetKind::Model, "model.orders.v2".into()))
        );
        assert_eq!(
            node_id("source.shop.raw.orders"),
            Some((DatasetKind::Source, "source.raw.orders".into()))
        );
        assert_eq!(node_id("test.shop.not_null_x"), None);
    }

    #[test]
    fn a_small_manifest_becomes_datasets_and_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        std::fs::write(
            &path,
            r#"{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
                "nodes": {
                  "model.shop.stg_orders": {"resource_type": "model", "name": "stg_orders", "package_name": "shop",
                    "relation_name": "\"db\".\"analytics\".\"stg_orders\"", "original_file_path": "models/stg_orders.sql",
                    "tags": ["daily"], "config": {"materialized": "view"},
                    "depends_on": {"nodes": ["source.shop.raw.orders"]}},
                  "test.shop.t1": {"resource_type": "test", "name": "t1", "depends_on": {"nodes": ["model.shop.stg_orders"]}}
                },
                "sources": {"source.shop.raw.orders": {"source_name": "raw", "name": "orders", "relation_name": "raw.orders"}}}"#,
        )
        .unwrap();
        let m = load(dir.path(), &path);
        assert!(m.diagnostics.is_empty(), "{:?}", m.diagnostics);
        let ids: Vec<&str> = m.datasets.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["model.stg_orders", "source.raw.orders"]);
        assert_eq!(m.datasets[0].relation, "db.analytics.stg_orders");
        assert_eq!(m.jobs.len(), 1);
        assert_eq!(
            m.jobs[0].reads[0].target,
            Target::Node {
                id: "source.raw.orders".into()
            }
        );
    }
}
