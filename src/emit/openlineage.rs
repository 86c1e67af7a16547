//! The lineage graph as OpenLineage events (NDJSON, one event per line):
//! one static `JobEvent` per job, or a START and COMPLETE `RunEvent` pair
//! per job for consumers that take only run events. Inputs and outputs are
//! the job's datasets named per the OpenLineage naming spec; jobs carry the
//! `jobType`, `sql` and `sourceCodeLocation` facets, outputs the `schema`
//! facet when their columns are known and `columnLineage` from ripple's
//! column lineage. See docs/openlineage.md.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde_json::{Value, json};

use crate::graph::LineageGraph;
use crate::graph::Semantics;
use crate::project::{Dataset, DatasetKind, Job, JobKind};
use crate::sql::SqlDialect;
use crate::time::{Hour, datetime_of};

/// The OpenLineage spec version the events follow.
const SPEC: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json";
const SQL_FACET: &str =
    "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json#/$defs/SQLJobFacet";
const JOB_TYPE_FACET: &str =
    "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet";
const SOURCE_FACET: &str = "https://openlineage.io/spec/facets/1-1-0/SourceCodeLocationJobFacet.json#/$defs/SourceCodeLocationJobFacet";
const SCHEMA_FACET: &str =
    "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet";
const COLUMNS_FACET: &str = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet";
const PARENT_FACET: &str =
    "https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet";

/// Which events to write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// One static `JobEvent` per job (design-time lineage, OpenLineage 2-0-2).
    #[default]
    Static,
    /// A START and a COMPLETE `RunEvent` per job, with a run id derived from
    /// the job and a `parent` facet for Airflow tasks and dbt models.
    Run,
}

/// What the events are written with besides the graph.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Static or run events.
    pub mode: Mode,
    /// The `eventTime` of every event (an hour, UTC).
    pub event_time: Hour,
}

/// The events of every job that writes a node of `nodes`, in job id order.
pub fn events(g: &LineageGraph, nodes: &BTreeSet<NodeIndex>, options: &Options) -> String {
    let names = Names::new(g);
    let mut inputs: HashMap<&str, BTreeSet<NodeIndex>> = HashMap::new();
    let mut lines: HashMap<&str, u32> = HashMap::new();
    for e in g.graph.edge_references() {
        let w = e.weight();
        inputs.entry(w.via.as_str()).or_default().insert(e.source());
        if w.line > 0 {
            let l = lines.entry(w.via.as_str()).or_insert(w.line);
            *l = (*l).min(w.line);
        }
    }
    let mut outputs: BTreeMap<&str, BTreeSet<NodeIndex>> = BTreeMap::new();
    for (dataset, jobs) in &g.writers {
        if let Some(&n) = g.index.get(dataset) {
            for j in jobs {
                outputs.entry(j.as_str()).or_default().insert(n);
            }
        }
    }
    let mut semantics = Semantics::new(g).edges_only();
    // The whole graph is read on all cores at once; a selection reads only
    // the jobs it exports and what their stars need, as asked.
    if nodes.len() == g.graph.node_count() {
        semantics.read_all();
    }
    let time = event_time(options.event_time);
    let mut out = String::new();
    for (job_id, written) in outputs {
        if !written.iter().any(|n| nodes.contains(n)) {
            continue;
        }
        let Some(job) = g.jobs.get(job_id) else {
            continue;
        };
        let ins: Vec<Value> = inputs
            .get(job_id)
            .into_iter()
            .flatten()
            .map(|&n| names.dataset_json(&g.graph[n], Value::Null))
            .collect();
        let mut column_facets = column_lineage(&mut semantics, &names, job_id);
        let outs: Vec<Value> = written
            .iter()
            .map(|&n| {
                let d = &g.graph[n];
                let mut facets = serde_json::Map::new();
                if let Some(columns) = semantics.columns_of(n).filter(|c| !c.is_empty()) {
                    let fields: Vec<Value> = columns
                        .iter()
                        .zip(1..)
                        .map(|(c, i): (&String, u64)| json!({"name": c, "ordinal_position": i}))
                        .collect();
                    facets.insert(
                        "schema".into(),
                        names.facet(SCHEMA_FACET, json!({"fields": fields})),
                    );
                }
                if let Some(lineage) = column_facets.remove(&d.relation) {
                    facets.insert("columnLineage".into(), names.facet(COLUMNS_FACET, lineage));
                }
                names.dataset_json(d, Value::Object(facets))
            })
            .collect();
        let job_json = names.job_json(job, lines.get(job_id).copied());
        match options.mode {
            Mode::Static => push_line(
                &mut out,
                &json!({
                    "eventTime": time,
                    "producer": names.producer,
                    "schemaURL": format!("{SPEC}#/$defs/JobEvent"),
                    "job": job_json,
                    "inputs": ins,
                    "outputs": outs,
                }),
            ),
            Mode::Run => {
                let run = names.run_json(job);
                for event_type in ["START", "COMPLETE"] {
                    push_line(
                        &mut out,
                        &json!({
                            "eventTime": time,
                            "eventType": event_type,
                            "producer": names.producer,
                            "schemaURL": format!("{SPEC}#/$defs/RunEvent"),
                            "run": run,
                            "job": job_json,
                            "inputs": ins,
                            "outputs": outs,
                        }),
                    );
                }
            }
        }
    }
    out
}

fn push_line(out: &mut String, v: &Value) {
    out.push_str(&serde_json::to_string(v).unwrap_or_default());
    out.push('\n');
}

/// `2026-01-10T00:00:00Z`.
fn event_time(h: Hour) -> String {
    let (date, hour) = datetime_of(h);
    format!("{date}T{hour:02}:00:00Z")
}

/// How datasets and jobs are named in the events.
struct Names {
    namespace: String,
    job_namespace: String,
    producer: String,
    database: Option<String>,
    dialect: SqlDialect,
    /// Datasets by relation, lower-cased, for column lineage's relations.
    by_relation: HashMap<String, NodeIndex>,
    /// The name of the project's dbt run, the parent of its models' runs.
    dbt_parent: String,
}

impl Names {
    fn new(g: &LineageGraph) -> Names {
        let ol = &g.config.openlineage;
        let dialect = g.config.dialect;
        Names {
            namespace: ol
                .namespace
                .clone()
                .unwrap_or_else(|| default_namespace(dialect)),
            job_namespace: ol
                .job_namespace
                .clone()
                .unwrap_or_else(|| "ripple".to_string()),
            producer: ol
                .producer
                .clone()
                .unwrap_or_else(|| format!("urn:ripple:{}", env!("CARGO_PKG_VERSION"))),
            database: g.config.target.database.clone(),
            dialect,
            by_relation: g
                .graph
                .node_indices()
                .map(|n| (g.graph[n].relation.to_lowercase(), n))
                .collect(),
            dbt_parent: g
                .root
                .file_name()
                .and_then(|n| n.to_str())
                .map_or_else(|| "dbt".to_string(), |n| format!("dbt.{n}")),
        }
    }

    /// A facet: its fields with `_producer` and `_schemaURL`.
    fn facet(&self, schema: &str, fields: Value) -> Value {
        let mut v = fields;
        if let Value::Object(m) = &mut v {
            m.insert("_producer".into(), Value::String(self.producer.clone()));
            m.insert("_schemaURL".into(), Value::String(schema.to_string()));
        }
        v
    }

    /// The (namespace, name) of a relation as SQL names it.
    fn of_relation(&self, relation: &str, g: &LineageGraph) -> (String, String) {
        match self.by_relation.get(&relation.to_lowercase()) {
            Some(&n) => self.of_dataset(&g.graph[n]),
            None => self.of_name(relation, crate::sql::is_path(relation)),
        }
    }

    fn of_dataset(&self, d: &Dataset) -> (String, String) {
        self.of_name(&d.relation, d.kind == DatasetKind::Path)
    }

    /// Per the naming spec: `s3://bucket` + key for a URL, `file` + path
    /// for a local file, the warehouse's namespace + `db.schema.table` (or
    /// `@stage/path`) for the rest.
    fn of_name(&self, relation: &str, path: bool) -> (String, String) {
        if path && let Some((scheme, rest)) = relation.split_once("://") {
            let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
            return (format!("{scheme}://{authority}"), key.to_string());
        }
        if path && !relation.starts_with('@') {
            return ("file".to_string(), relation.to_string());
        }
        let parts = crate::sql::rewrite::relation_parts(relation).len();
        match &self.database {
            Some(db) if parts == 2 && !path => (self.namespace.clone(), format!("{db}.{relation}")),
            _ => (self.namespace.clone(), relation.to_string()),
        }
    }

    fn dataset_json(&self, d: &Dataset, facets: Value) -> Value {
        let (namespace, name) = self.of_dataset(d);
        let mut v = json!({"namespace": namespace, "name": name});
        if let Value::Object(f) = &facets
            && !f.is_empty()
        {
            v["facets"] = facets;
        }
        v
    }

    /// The job's name: `dag.task` for Airflow (as Airflow's integration
    /// names it), the script's path for SQL, the node id for dbt.
    fn job_name(job: &Job) -> String {
        match (&job.airflow, job.kind) {
            (Some(a), _) => format!("{}.{}", a.dag_id, a.task_id),
            (None, JobKind::Sql) => job.file.clone(),
            _ => job.id.clone(),
        }
    }

    fn job_json(&self, job: &Job, line: Option<u32>) -> Value {
        let (integration, job_type) = match job.kind {
            JobKind::Dbt | JobKind::Manifest => ("DBT", "MODEL"),
            JobKind::Airflow => ("AIRFLOW", "TASK"),
            JobKind::Sql => ("SQL", "QUERY"),
        };
        let mut facets = serde_json::Map::new();
        facets.insert(
            "jobType".into(),
            self.facet(
                JOB_TYPE_FACET,
                json!({"processingType": "BATCH", "integration": integration, "jobType": job_type}),
            ),
        );
        if let Some(sql) = &job.sql {
            facets.insert(
                "sql".into(),
                self.facet(
                    SQL_FACET,
                    json!({"query": sql, "dialect": self.dialect.to_string()}),
                ),
            );
        }
        let url = match line {
            Some(l) => format!("file:{}#L{l}", job.file),
            None => format!("file:{}", job.file),
        };
        facets.insert(
            "sourceCodeLocation".into(),
            self.facet(
                SOURCE_FACET,
                json!({"type": "file", "url": url, "path": job.file}),
            ),
        );
        json!({
            "namespace": self.job_namespace,
            "name": Self::job_name(job),
            "facets": facets,
        })
    }

    /// A run of `job` with an id derived from it, and the run of its DAG
    /// (Airflow) or dbt invocation as parent.
    fn run_json(&self, job: &Job) -> Value {
        let name = Self::job_name(job);
        let parent = match (&job.airflow, job.kind) {
            (Some(a), _) => Some(a.dag_id.clone()),
            (None, JobKind::Dbt | JobKind::Manifest) => Some(self.dbt_parent.clone()),
            _ => None,
        };
        let mut run = json!({"runId": stable_uuid(&format!("{}\u{0}{name}", self.job_namespace))});
        if let Some(parent) = parent {
            run["facets"] = json!({
                "parent": self.facet(PARENT_FACET, json!({
                    "run": {"runId": stable_uuid(&format!("{}\u{0}{parent}", self.job_namespace))},
                    "job": {"namespace": self.job_namespace, "name": parent},
                })),
            });
        }
        run
    }
}

/// The dataset namespace when ripple.yml names none: the engine's scheme
/// (BigQuery's namespace is just `bigquery`), with `unknown` for the host
/// it cannot know.
fn default_namespace(dialect: SqlDialect) -> String {
    use SqlDialect::*;
    let scheme = match dialect {
        BigQuery => return "bigquery".to_string(),
        Postgres | Greenplum | Vertica | Materialize => "postgres",
        MsSql => "sqlserver",
        MySql | MariaDb => "mysql",
        Trino => "trino",
        Databricks => "databricks",
        Spark => "spark",
        Hive => "hive",
        other => return format!("{other}://unknown"),
    };
    format!("{scheme}://unknown")
}

/// The `columnLineage` facet fields of each relation `job` writes, from
/// its statements' column lineage (outputs by name, the rows' conditions
/// as dataset-level `INDIRECT` inputs).
fn column_lineage(semantics: &mut Semantics, names: &Names, job: &str) -> HashMap<String, Value> {
    let g = semantics.g;
    // A model (dbt, or a file that only selects) is its last query: it
    // writes no table by name, the job's one output is its result.
    let model_output = match semantics.written(job) {
        [only] => Some(g.graph[*only].relation.clone()),
        _ => None,
    };
    let Some(script) = semantics.job(job) else {
        return HashMap::new();
    };
    // (namespace, name) per relation, worked out once.
    let mut named: HashMap<String, (String, String)> = HashMap::new();
    type Field = (String, String, String);
    let mut field = |r: &crate::sql::ColumnRef| -> Field {
        let (namespace, name) = match named.get(&r.relation) {
            Some(n) => n.clone(),
            None => {
                let n = names.of_relation(&r.relation, g);
                named.insert(r.relation.clone(), n.clone());
                n
            }
        };
        (namespace, name, r.column.clone())
    };
    let mut fields: BTreeMap<String, BTreeMap<String, BTreeSet<Field>>> = BTreeMap::new();
    let mut rows: BTreeMap<String, BTreeSet<Field>> = BTreeMap::new();
    let last_query = script
        .statements
        .iter()
        .rposition(|s| s.columns.is_some() && s.targets.is_empty());
    for (i, s) in script.statements.iter().enumerate() {
        let target = match (s.targets.as_slice(), &model_output) {
            ([t], _) => t,
            ([], Some(out)) if Some(i) == last_query => out,
            _ => continue,
        };
        let Some(c) = &s.columns else {
            continue;
        };
        let per_target = fields.entry(target.clone()).or_default();
        for o in &c.columns {
            let inputs = per_target.entry(o.name.clone()).or_default();
            inputs.extend(o.sources.iter().map(&mut field));
        }
        rows.entry(target.clone())
            .or_default()
            .extend(c.conditions.iter().map(&mut field));
    }
    let json_field = |(namespace, name, field): &Field, kind: &str| json!({"namespace": namespace, "name": name, "field": field, "transformations": [{"type": kind}]});
    // Keyed by the dataset's relation as the graph prints it.
    let relation_of = |target: &str| match names.by_relation.get(&target.to_lowercase()) {
        Some(&n) => g.graph[n].relation.clone(),
        None => target.to_string(),
    };
    fields
        .into_iter()
        .map(|(target, columns)| {
            let out_fields: serde_json::Map<String, Value> = columns
                .into_iter()
                .map(|(name, inputs)| {
                    let list: Vec<Value> = inputs.iter().map(|f| json_field(f, "DIRECT")).collect();
                    (name, json!({"inputFields": list}))
                })
                .collect();
            let dataset: Vec<Value> = rows
                .get(&target)
                .into_iter()
                .flatten()
                .map(|f| json_field(f, "INDIRECT"))
                .collect();
            (
                relation_of(&target),
                json!({"fields": out_fields, "dataset": dataset}),
            )
        })
        .collect()
}

/// A UUID (version 8, RFC 9562) made from `text` alone, so that the same job
/// gets the same run id on every export: two FNV-1a 64-bit hashes.
fn stable_uuid(text: &str) -> String {
    let fnv = |basis: u64| {
        text.bytes().fold(basis, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let hi = fnv(0xcbf2_9ce4_8422_2325);
    let lo = fnv(0x6c62_272e_07bb_0142);
    let mut v = (u128::from(hi) << 64) | u128::from(lo);
    // Version 8 in bits 48..52, variant 0b10 in bits 64..66.
    v = (v & !(0xf_u128 << 76)) | (0x8_u128 << 76);
    v = (v & !(0x3_u128 << 62)) | (0x2_u128 << 62);
    let hex = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_stable_uuids() {
        let a = stable_uuid("ripple\u{0}orders");
        assert_eq!(a, stable_uuid("ripple\u{0}orders"));
        assert_ne!(a, stable_uuid("ripple\u{0}orders2"));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "8", "version 8: {a}");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "variant: {a}");
    }

    #[test]
    fn event_times_are_rfc3339() {
        let h = crate::time::TimeKey::parse("2026-01-10T05").unwrap().start;
        assert_eq!(event_time(h), "2026-01-10T05:00:00Z");
    }
}
