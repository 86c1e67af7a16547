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
use rayon::prelude::*;
use serde::Serialize;

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

/// Column fields (`schema` fields plus `columnLineage` outputs) one export
/// writes at most: a thousand chained `select *` models of 9,000 columns
/// each wrote 1.6 GB from 139 KB of SQL. A job whose fields no longer fit,
/// in job id order, gets neither facet (see docs/limits.md).
pub const MAX_COLUMN_FIELDS: usize = 1_000_000;

/// OpenLineage events, and what was left out of them.
#[derive(Debug, Clone, Default)]
pub struct Events {
    /// The events, one JSON object per line.
    pub text: String,
    /// Jobs whose outputs carry no column facets for [`MAX_COLUMN_FIELDS`].
    pub without_columns: usize,
}

/// The events of every job that writes a node of `nodes`, in job id order.
pub fn events(g: &LineageGraph, nodes: &BTreeSet<NodeIndex>, options: &Options) -> Events {
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
    let todo: Vec<(&str, &Job, &BTreeSet<NodeIndex>)> = outputs
        .iter()
        .filter(|(_, written)| written.iter().any(|n| nodes.contains(n)))
        .filter_map(|(&id, written)| Some((id, g.jobs.get(id)?, written)))
        .collect();
    let mut semantics = Semantics::new(g).edges_only();
    // The whole graph is read on all cores at once; a selection reads only
    // the jobs it exports and what their stars need, as asked.
    if nodes.len() == g.graph.node_count() {
        semantics.read_all();
    } else {
        for &(id, _, written) in &todo {
            semantics.job(id);
            for &n in written {
                semantics.columns_of(n);
            }
        }
    }
    // Which jobs get column facets: in job id order, each whose fields
    // still fit the cap (decided before the parallel part, so the answer
    // does not depend on the thread count).
    let mut fields = 0usize;
    let with_columns: Vec<bool> = todo
        .iter()
        .map(|&(id, _, written)| {
            let schema: usize = written
                .iter()
                .map(|&n| semantics.known_columns(n).map_or(0, <[String]>::len))
                .sum();
            let lineage: usize = semantics.read(id).map_or(0, |script| {
                let statements = script.statements.iter();
                statements
                    .map(|s| s.columns.as_ref().map_or(0, |c| c.columns.len()))
                    .sum()
            });
            let fits = fields.saturating_add(schema + lineage) <= MAX_COLUMN_FIELDS;
            if fits {
                fields += schema + lineage;
            }
            fits
        })
        .collect();
    let without_columns = with_columns.iter().filter(|w| !**w).count();
    let time = event_time(options.event_time);
    let semantics = &semantics;
    let schema_url = match options.mode {
        Mode::Static => format!("{SPEC}#/$defs/JobEvent"),
        Mode::Run => format!("{SPEC}#/$defs/RunEvent"),
    };
    // Each job's lines on its own, on all cores; collected in job order.
    let lines: Vec<String> = todo
        .par_iter()
        .zip(&with_columns)
        .map(|(&(job_id, job, written), &with_columns)| {
            let inputs: Vec<DatasetOut> = inputs
                .get(job_id)
                .into_iter()
                .flatten()
                .map(|&n| names.dataset(&g.graph[n], None))
                .collect();
            let mut column_facets = match with_columns {
                true => column_lineage(semantics, &names, job_id),
                false => HashMap::new(),
            };
            let outputs: Vec<DatasetOut> = written
                .iter()
                .map(|&n| {
                    let d = &g.graph[n];
                    let schema = semantics
                        .known_columns(n)
                        .filter(|c| with_columns && !c.is_empty())
                        .map(|columns| {
                            let fields = columns
                                .iter()
                                .zip(1..)
                                .map(|(name, ordinal_position)| SchemaField {
                                    name: names.column(name),
                                    ordinal_position,
                                })
                                .collect();
                            names.facet(SCHEMA_FACET, SchemaFields { fields })
                        });
                    let column_lineage = column_facets
                        .remove(&d.relation)
                        .map(|c| names.facet(COLUMNS_FACET, c));
                    let facets =
                        (schema.is_some() || column_lineage.is_some()).then_some(OutputFacets {
                            column_lineage,
                            schema,
                        });
                    names.dataset(d, facets)
                })
                .collect();
            let job_out = names.job(job, lines.get(job_id).copied());
            let mut event = Event {
                event_time: &time,
                event_type: None,
                inputs: &inputs,
                job: &job_out,
                outputs: &outputs,
                producer: &names.producer,
                run: None,
                schema_url: &schema_url,
            };
            let mut out = String::new();
            match options.mode {
                Mode::Static => push_line(&mut out, &event),
                Mode::Run => {
                    let run = names.run(job);
                    event.run = Some(&run);
                    for t in ["START", "COMPLETE"] {
                        event.event_type = Some(t);
                        push_line(&mut out, &event);
                    }
                }
            }
            out
        })
        .collect();
    Events {
        text: lines.concat(),
        without_columns,
    }
}

/// One event; fields in the order serde_json printed them as a map
/// (sorted), so exports stay byte-identical with earlier versions.
#[derive(Serialize)]
struct Event<'a> {
    #[serde(rename = "eventTime")]
    event_time: &'a str,
    #[serde(rename = "eventType", skip_serializing_if = "Option::is_none")]
    event_type: Option<&'a str>,
    inputs: &'a [DatasetOut<'a>],
    job: &'a JobOut<'a>,
    outputs: &'a [DatasetOut<'a>],
    producer: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a RunOut<'a>>,
    #[serde(rename = "schemaURL")]
    schema_url: &'a str,
}

/// A facet: the spec's `_producer` and `_schemaURL`, then its own fields.
#[derive(Serialize)]
struct Facet<'a, T> {
    #[serde(rename = "_producer")]
    producer: &'a str,
    #[serde(rename = "_schemaURL")]
    schema_url: &'static str,
    #[serde(flatten)]
    fields: T,
}

#[derive(Serialize)]
struct DatasetOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    facets: Option<OutputFacets<'a>>,
    name: String,
    namespace: String,
}

#[derive(Serialize)]
struct OutputFacets<'a> {
    #[serde(rename = "columnLineage", skip_serializing_if = "Option::is_none")]
    column_lineage: Option<Facet<'a, ColumnLineageFields>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<Facet<'a, SchemaFields<'a>>>,
}

#[derive(Serialize)]
struct SchemaFields<'a> {
    fields: Vec<SchemaField<'a>>,
}

#[derive(Serialize)]
struct SchemaField<'a> {
    name: std::borrow::Cow<'a, str>,
    ordinal_position: u64,
}

/// The `columnLineage` facet's fields: the rows' conditions as `dataset`,
/// each output column's inputs under `fields`.
#[derive(Serialize)]
struct ColumnLineageFields {
    dataset: Vec<InputField>,
    fields: BTreeMap<String, InputFields>,
}

#[derive(Serialize)]
struct InputFields {
    #[serde(rename = "inputFields")]
    input_fields: Vec<InputField>,
}

#[derive(Serialize)]
struct InputField {
    field: String,
    name: String,
    namespace: String,
    transformations: [Transformation; 1],
}

#[derive(Serialize)]
struct Transformation {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct JobOut<'a> {
    facets: JobFacets<'a>,
    name: String,
    namespace: &'a str,
}

#[derive(Serialize)]
struct JobFacets<'a> {
    #[serde(rename = "jobType")]
    job_type: Facet<'a, JobType>,
    #[serde(rename = "sourceCodeLocation")]
    source_code_location: Facet<'a, SourceCodeLocation<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sql: Option<Facet<'a, SqlFields<'a>>>,
}

#[derive(Serialize)]
struct JobType {
    integration: &'static str,
    #[serde(rename = "jobType")]
    job_type: &'static str,
    #[serde(rename = "processingType")]
    processing_type: &'static str,
}

#[derive(Serialize)]
struct SourceCodeLocation<'a> {
    path: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    url: String,
}

#[derive(Serialize)]
struct SqlFields<'a> {
    dialect: &'a str,
    query: std::borrow::Cow<'a, str>,
}

#[derive(Serialize)]
struct RunOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    facets: Option<RunFacets<'a>>,
    #[serde(rename = "runId")]
    run_id: String,
}

#[derive(Serialize)]
struct RunFacets<'a> {
    parent: Facet<'a, ParentFields<'a>>,
}

#[derive(Serialize)]
struct ParentFields<'a> {
    job: JobRef<'a>,
    run: RunRef,
}

#[derive(Serialize)]
struct JobRef<'a> {
    name: String,
    namespace: &'a str,
}

#[derive(Serialize)]
struct RunRef {
    #[serde(rename = "runId")]
    run_id: String,
}

fn push_line(out: &mut String, v: &Event) {
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
    /// The dialect as the `sql` facet names it, formatted once.
    dialect_name: String,
    /// The dialect the jobs' SQL is written in.
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
            dialect_name: dialect.to_string(),
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

    /// A facet of this producer.
    fn facet<T>(&self, schema_url: &'static str, fields: T) -> Facet<'_, T> {
        Facet {
            producer: &self.producer,
            schema_url,
            fields,
        }
    }

    /// A column's name as the export writes it: an unaliased expression is
    /// named by its text (`dblink('host=db password=pw', ...)`), whose
    /// secrets are masked as the `sql` facet's are.
    fn column<'s>(&self, name: &'s str) -> std::borrow::Cow<'s, str> {
        if name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return std::borrow::Cow::Borrowed(name);
        }
        crate::sql::mask_secrets(name, self.dialect)
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
            // Credentials written into a URL (`s3://KEY:SECRET@bucket`, the
            // secret perhaps holding a `/`) and a signed URL's query
            // (`?sig=`) are no part of the dataset's name, and must not be
            // sent to a lineage server; what a URI cannot hold is encoded.
            let rest = crate::sql::userinfo_end(rest).map_or(rest, |at| &rest[at + 1..]);
            let rest = rest.split(['?', '#']).next().unwrap_or(rest);
            let (host, key) = rest.split_once('/').unwrap_or((rest, ""));
            return (
                format!("{scheme}://{}", uri_authority(host)),
                key.to_string(),
            );
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

    fn dataset<'a>(&self, d: &Dataset, facets: Option<OutputFacets<'a>>) -> DatasetOut<'a> {
        let (namespace, name) = self.of_dataset(d);
        DatasetOut {
            facets,
            name,
            namespace,
        }
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

    fn job<'a>(&'a self, job: &'a Job, line: Option<u32>) -> JobOut<'a> {
        let (integration, job_type) = match job.kind {
            JobKind::Dbt | JobKind::Manifest => ("DBT", "MODEL"),
            JobKind::Airflow => ("AIRFLOW", "TASK"),
            JobKind::Sql => ("SQL", "QUERY"),
        };
        let path = uri_path(&job.file);
        let url = match line {
            Some(l) => format!("file:{path}#L{l}"),
            None => format!("file:{path}"),
        };
        JobOut {
            facets: JobFacets {
                job_type: self.facet(
                    JOB_TYPE_FACET,
                    JobType {
                        integration,
                        job_type,
                        processing_type: "BATCH",
                    },
                ),
                source_code_location: self.facet(
                    SOURCE_FACET,
                    SourceCodeLocation {
                        path: &job.file,
                        kind: "file",
                        url,
                    },
                ),
                // A lineage server has no use for the job's secrets.
                sql: job.sql.as_deref().map(|query| {
                    self.facet(
                        SQL_FACET,
                        SqlFields {
                            dialect: &self.dialect_name,
                            query: crate::sql::mask_secrets(query, self.dialect),
                        },
                    )
                }),
            },
            name: Self::job_name(job),
            namespace: &self.job_namespace,
        }
    }

    /// A run of `job` with an id derived from it, and the run of its DAG
    /// (Airflow) or dbt invocation as parent.
    fn run(&self, job: &Job) -> RunOut<'_> {
        let name = Self::job_name(job);
        let parent = match (&job.airflow, job.kind) {
            (Some(a), _) => Some(a.dag_id.clone()),
            (None, JobKind::Dbt | JobKind::Manifest) => Some(self.dbt_parent.clone()),
            _ => None,
        };
        RunOut {
            facets: parent.map(|parent| RunFacets {
                parent: self.facet(
                    PARENT_FACET,
                    ParentFields {
                        run: RunRef {
                            run_id: stable_uuid(&format!("{}\u{0}{parent}", self.job_namespace)),
                        },
                        job: JobRef {
                            name: parent,
                            namespace: &self.job_namespace,
                        },
                    },
                ),
            }),
            run_id: stable_uuid(&format!("{}\u{0}{name}", self.job_namespace)),
        }
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
fn column_lineage(
    semantics: &Semantics,
    names: &Names,
    job: &str,
) -> HashMap<String, ColumnLineageFields> {
    let g = semantics.g;
    // A model (dbt, or a file that only selects) is its last query: it
    // writes no table by name, the job's one output is its result.
    let model_output = match semantics.written(job) {
        [only] => Some(g.graph[*only].relation.clone()),
        _ => None,
    };
    let Some(script) = semantics.read(job) else {
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
        (namespace, name, names.column(&r.column).into_owned())
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
            let inputs = per_target
                .entry(names.column(&o.name).into_owned())
                .or_default();
            inputs.extend(o.sources.iter().map(&mut field));
        }
        rows.entry(target.clone())
            .or_default()
            .extend(c.conditions.iter().map(&mut field));
    }
    let input = |(namespace, name, field): Field, kind: &'static str| InputField {
        field,
        name,
        namespace,
        transformations: [Transformation { kind }],
    };
    // Keyed by the dataset's relation as the graph prints it.
    let relation_of = |target: &str| match names.by_relation.get(&target.to_lowercase()) {
        Some(&n) => g.graph[n].relation.clone(),
        None => target.to_string(),
    };
    fields
        .into_iter()
        .map(|(target, columns)| {
            let fields = columns
                .into_iter()
                .map(|(name, inputs)| {
                    let input_fields = inputs.into_iter().map(|f| input(f, "DIRECT")).collect();
                    (name, InputFields { input_fields })
                })
                .collect();
            let dataset = rows
                .remove(&target)
                .into_iter()
                .flatten()
                .map(|f| input(f, "INDIRECT"))
                .collect();
            (
                relation_of(&target),
                ColumnLineageFields { dataset, fields },
            )
        })
        .collect()
}

/// A UUID (version 8, RFC 9562) made from `text` alone, so that the same job
/// gets the same run id on every export: two FNV-1a 64-bit hashes.
fn stable_uuid(text: &str) -> String {
    let hi = crate::text::fnv64(text, crate::text::FNV_BASIS);
    let lo = crate::text::fnv64(text, 0x6c62_272e_07bb_0142);
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

/// A file path as the path of a `file:` URI (RFC 3986): every byte but
/// the unreserved ones and `/` percent-encoded, so a space, `#` or `?` in a
/// file name stays part of the path.
fn uri_path(file: &str) -> String {
    let mut out = String::with_capacity(file.len());
    for b in file.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A URI's host (and port) with every byte but the unreserved ones, `:`
/// and IPv6's brackets percent-encoded.
fn uri_authority(host: &str) -> String {
    let mut out = String::with_capacity(host.len());
    for b in host.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:[]".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_url_is_a_uri_whatever_the_file_is_called() {
        assert_eq!(uri_path("models/orders.sql"), "models/orders.sql");
        assert_eq!(
            uri_path("models/my model#2?.sql"),
            "models/my%20model%232%3F.sql"
        );
        assert_eq!(uri_path("models/é.sql"), "models/%C3%A9.sql");
    }

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
