//! dbt's `catalog.json` (written by `dbt docs generate`), when ripple.yml
//! names it: the columns the warehouse holds for each model and source, in
//! table order, so that column lineage resolves unqualified names and
//! expands `*` the way the warehouse would.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;

use crate::project::{Dataset, Diagnostic};

#[derive(Deserialize)]
struct Catalog {
    // By unique id, in order: which of two tables of one `schema.name`
    // (in different databases) answers a two-part relation must not
    // depend on hashing.
    #[serde(default)]
    nodes: BTreeMap<String, Table>,
    #[serde(default)]
    sources: BTreeMap<String, Table>,
}

#[derive(Deserialize)]
struct Table {
    metadata: Metadata,
    #[serde(default)]
    columns: HashMap<String, Column>,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    database: Option<String>,
    schema: String,
    name: String,
}

#[derive(Deserialize)]
struct Column {
    name: String,
    index: i64,
}

/// Gives each dataset whose relation the catalog at `path` describes the
/// catalog's columns (the warehouse's truth over what YAML declares); a
/// catalog that cannot be read is a diagnostic, and nothing changes.
pub(crate) fn apply(
    root: &Path,
    path: &Path,
    datasets: &mut [Dataset],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let shown = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    let full = root.join(path);
    let catalog: Catalog = match crate::input::read_text(&full)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(c) => c,
        Err(why) => {
            diagnostics.push(Diagnostic::error(
                "catalog-error",
                Some(shown),
                0,
                0,
                format!("{why}; give the catalog.json `dbt docs generate` writes, or leave `catalog` out of ripple.yml"),
            ));
            return;
        }
    };
    let mut by_relation: HashMap<String, Vec<String>> = HashMap::new();
    for table in catalog
        .nodes
        .into_values()
        .chain(catalog.sources.into_values())
    {
        let mut columns: Vec<Column> = table.columns.into_values().collect();
        columns.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.name.cmp(&b.name)));
        let names: Vec<String> = columns.into_iter().map(|c| c.name.to_lowercase()).collect();
        let m = table.metadata;
        let short = format!("{}.{}", m.schema, m.name).to_lowercase();
        if let Some(db) = &m.database {
            by_relation.insert(format!("{db}.{short}").to_lowercase(), names.clone());
        }
        by_relation.entry(short).or_insert(names);
    }
    for d in datasets.iter_mut() {
        if let Some(columns) = by_relation.get(&d.relation.to_lowercase()) {
            d.columns = columns.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::DatasetKind;

    fn dataset(relation: &str, columns: &[&str]) -> Dataset {
        Dataset {
            id: format!("model.{relation}"),
            kind: DatasetKind::Model,
            name: relation.to_string(),
            relation: relation.to_string(),
            package: None,
            file: None,
            line: None,
            tags: Vec::new(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            config: Default::default(),
            tests: false,
        }
    }

    #[test]
    fn columns_come_in_table_order_and_replace_declared_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("catalog.json"),
            r#"{"nodes": {"model.p.orders": {"metadata": {"database": "DB", "schema": "MART", "name": "ORDERS", "type": "BASE TABLE"},
                 "columns": {"B": {"name": "B", "index": 2, "type": "int"}, "A": {"name": "A", "index": 1, "type": "int"}}}},
               "sources": {"source.p.raw.events": {"metadata": {"schema": "raw", "name": "events"},
                 "columns": {"id": {"name": "id", "index": 1}}}}}"#,
        )
        .unwrap();
        let mut ds = vec![
            dataset("db.mart.orders", &["a"]),
            dataset("raw.events", &[]),
            dataset("other.t", &["x"]),
        ];
        let mut diags = Vec::new();
        apply(dir.path(), Path::new("catalog.json"), &mut ds, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(ds[0].columns, ["a", "b"]);
        assert_eq!(ds[1].columns, ["id"]);
        assert_eq!(ds[2].columns, ["x"]);
        std::fs::write(dir.path().join("catalog.json"), "{").unwrap();
        apply(dir.path(), Path::new("catalog.json"), &mut ds, &mut diags);
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0].to_string().contains("catalog.json"),
            "{}",
            diags[0]
        );
    }
}
