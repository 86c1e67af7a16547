//! The project: every dataset and job ripple found in a folder, whatever
//! format each came from, before any graph is built. Readers in
//! [`crate::ingest`] produce it; [`crate::graph`] consumes it.

mod dag;
mod diagnostic;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use dag::{Cosmos, Dag, DagEdge, DbtRun, EdgeKind, SqlTemplate, Task};
pub use diagnostic::{Diagnostic, Severity};

use crate::config::{Config, DatasetConfig};

/// What an unknown macro, method or filter renders as: a plain identifier,
/// so the SQL around it still parses (it is never taken for a table).
pub const UNKNOWN_PLACEHOLDER: &str = "__ripple_unknown__";

/// Everything read from one project folder.
#[derive(Debug, Clone, Default)]
pub struct Project {
    /// The folder the project was read from.
    pub root: PathBuf,
    /// `ripple.yml`, or the defaults when there is none.
    pub config: Config,
    /// Datasets declared by some input (models, sources, seeds, snapshots),
    /// sorted by id. Tables known only because a job reads or writes them
    /// are added when the graph is built.
    pub datasets: Vec<Dataset>,
    /// Jobs: what writes datasets, sorted by id.
    pub jobs: Vec<Job>,
    /// What went wrong or looked suspicious while reading, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// Airflow DAGs read from the DAG folders, sorted by id.
    pub dags: Vec<Dag>,
    /// The root dbt project, as ripple's dbt executor runs it.
    pub dbt_root: Option<DbtRoot>,
    /// Answers kept from earlier runs (off unless the loader was given a
    /// cache folder).
    pub cache: std::sync::Arc<crate::cache::Cache>,
    /// What the lineage graph is made of, when the warm cache could tell
    /// it without reading the project again (a dbt project from its
    /// snapshot, nothing else read).
    pub lineage: Option<Lineage>,
}

/// What a project's lineage graph is made of, as the warm cache tells it:
/// a dbt project's snapshot, and the models edited since it was written
/// (docs/cache.md, "The whole graph").
#[derive(Debug, Clone, PartialEq)]
pub struct Lineage {
    /// A digest of everything the graph is made of but the text of the
    /// jobs' SQL: two projects with the same digest have the same graph,
    /// so an answer made of the graph alone can be kept under it.
    pub key: crate::cache::Key,
    /// The digest of the snapshot alone, before any model was edited.
    pub base: crate::cache::Key,
    /// Each model whose lineage differs from the snapshot's, by place.
    pub edits: Vec<ModelEdit>,
}

/// A model whose lineage differs from what the snapshot holds of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEdit {
    /// Its place among the snapshot's models.
    pub place: usize,
    /// Its lineage now.
    pub now: ModelLineage,
    /// Its lineage as the snapshot holds it.
    pub kept: ModelLineage,
}

/// What a model contributes to the lineage graph: its job, and a digest of
/// the rest (its dataset, configuration, findings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelLineage {
    /// A digest of all of the model but its job's reads.
    pub rest: crate::cache::Key,
    /// Its dataset's id.
    pub node: String,
    /// Whether it is a node at all (`enabled=false` makes none).
    pub enabled: bool,
    /// Its job, without its SQL.
    pub job: Job,
}

/// What one reader found in a project folder: its share of the project.
/// Every reader (dbt, manifest, plain SQL, Airflow) returns one; the
/// project is their sum.
#[derive(Debug, Clone, Default)]
pub struct Part {
    /// Datasets it declares.
    pub datasets: Vec<Dataset>,
    /// Jobs it found.
    pub jobs: Vec<Job>,
    /// What went wrong or looked suspicious.
    pub diagnostics: Vec<Diagnostic>,
    /// Airflow DAGs it read.
    pub dags: Vec<Dag>,
    /// The root dbt project, as ripple's dbt executor runs it.
    pub dbt_root: Option<DbtRoot>,
}

/// What ripple's dbt executor needs of the root dbt project to run it
/// through an overlay that builds shadows (docs/plan.md, dbt), read when the
/// project is: the user's folder is never edited.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DbtRoot {
    /// `dbt_project.yml` as written.
    pub project_file: String,
    /// The project's macro folders, as `dbt_project.yml` names them.
    pub macro_paths: Vec<String>,
    /// The project's macro files that define `generate_schema_name`,
    /// `generate_alias_name` or `generate_database_name`: path relative to
    /// the project, and text as written.
    pub name_macros: Vec<(String, String)>,
}

impl Project {
    /// Adds what one reader found.
    pub fn add(&mut self, part: Part) {
        // The first part is taken as it is: a 10,000-model project's lists
        // are megabytes to copy into empty ones.
        fn append<T>(to: &mut Vec<T>, mut from: Vec<T>) {
            match to.is_empty() {
                true => std::mem::swap(to, &mut from),
                false => to.append(&mut from),
            }
        }
        append(&mut self.datasets, part.datasets);
        append(&mut self.jobs, part.jobs);
        append(&mut self.diagnostics, part.diagnostics);
        append(&mut self.dags, part.dags);
        self.dbt_root = self.dbt_root.take().or(part.dbt_root);
    }

    /// The findings about Airflow DAG files and their tasks: by code, and
    /// any finding on a file of the DAG folders (a file too large or too
    /// deep to read, one that could not be read at all).
    pub fn dag_diagnostics(&self) -> Vec<Diagnostic> {
        let default = [std::path::PathBuf::from(crate::config::DEFAULT_DAGS)];
        let dirs = match self.config.dags.is_empty() {
            true => &default[..],
            false => &self.config.dags[..],
        };
        let dirs: Vec<String> = dirs
            .iter()
            .map(|d| {
                let d = d.to_string_lossy().replace('\\', "/");
                d.trim_start_matches("./").trim_end_matches('/').to_string()
            })
            .collect();
        let in_dags = |file: &str| {
            dirs.iter().any(|d| {
                d.is_empty()
                    || d == "."
                    || file
                        .strip_prefix(d.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
        };
        self.diagnostics
            .iter()
            .filter(|d| {
                d.code.starts_with("airflow")
                    || d.code.starts_with("python")
                    || d.code.contains("task")
                    || d.file
                        .as_deref()
                        .is_some_and(|f| f.ends_with(".py") && in_dags(f))
            })
            .cloned()
            .collect()
    }
}

/// What kind of thing a dataset is, which decides its node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// A dbt model (`model.<name>`).
    Model,
    /// A dbt source table (`source.<source>.<table>`).
    Source,
    /// A dbt seed (`seed.<name>`).
    Seed,
    /// A dbt snapshot (`snapshot.<name>`).
    Snapshot,
    /// A table known from plain SQL or Airflow (`table.<relation>`).
    Table,
    /// Files at a location: a URL, a Snowflake stage or a file path
    /// (`path.s3://lake/x/`, `path.@raw.stage/dir/`); its name is the location.
    Path,
}

impl DatasetKind {
    /// The word used in node ids and output.
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetKind::Model => "model",
            DatasetKind::Source => "source",
            DatasetKind::Seed => "seed",
            DatasetKind::Snapshot => "snapshot",
            DatasetKind::Table => "table",
            DatasetKind::Path => "path",
        }
    }
}

/// A table or view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// Node id: `model.orders`, `model.orders.v2`, `source.raw.orders`,
    /// `seed.countries`, `snapshot.customers_snapshot`, `table.mart.daily`,
    /// `path.s3://lake/events/`.
    pub id: String,
    /// What it is.
    pub kind: DatasetKind,
    /// The name people use: the model name, `source.table`, the relation.
    pub name: String,
    /// The relation it lives in (`schema.table` or `db.schema.table`).
    pub relation: String,
    /// The dbt package that defines it, when not the root project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Where it is declared (relative to the project root).
    pub file: Option<String>,
    /// 1-based line of the declaration.
    pub line: Option<u32>,
    /// Tags (dbt `tags`), sorted.
    pub tags: Vec<String>,
    /// Declared columns, in declaration order.
    pub columns: Vec<String>,
    /// The dataset's dbt configuration as read (materialized, event_time,
    /// unique_key, partition_by, ...), for later steps to interpret.
    pub config: BTreeMap<String, serde_json::Value>,
    /// Whether dbt tests it (tests declared in YAML): astronomer-cosmos
    /// names its Airflow tasks differently then.
    #[serde(skip)]
    pub tests: bool,
}

impl Dataset {
    /// A dataset known only by its id, kind, name and relation: no file,
    /// tags, columns or configuration.
    pub fn new(id: String, kind: DatasetKind, name: String, relation: String) -> Dataset {
        Dataset {
            id,
            kind,
            name,
            relation,
            package: None,
            file: None,
            line: None,
            tags: Vec::new(),
            columns: Vec::new(),
            config: BTreeMap::new(),
            tests: false,
        }
    }

    /// Whether a `ripple.yml` key names this dataset (name, relation or id).
    pub fn answers_to(&self, key: &str) -> bool {
        self.name == key || self.relation == key || self.id == key
    }

    /// This dataset's entry under `datasets:` in `ripple.yml`, if any.
    pub fn settings<'c>(&self, config: &'c Config) -> Option<&'c DatasetConfig> {
        // The first key in the map's order that names it (what a scan of
        // every entry finds), by three lookups: a plan asks once per task.
        [&self.name, &self.relation, &self.id]
            .into_iter()
            .filter_map(|k| config.datasets.get_key_value(k.as_str()))
            .min_by(|a, b| a.0.cmp(b.0))
            .map(|(_, c)| c)
    }
}

/// Something that writes datasets: a dbt model, a SQL script, a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Job id: the model's node id for dbt, `sql:<path>` for a script.
    pub id: String,
    /// What kind of job.
    pub kind: JobKind,
    /// The file it comes from (relative to the project root).
    pub file: String,
    /// What it reads.
    pub reads: Vec<Reference>,
    /// What it writes.
    pub writes: Vec<Reference>,
    /// For a SQL job, which reads feed each write (relation → relations
    /// read), from its statements; `None` when every read feeds every
    /// write (a dbt model, a task with declared inlets).
    #[serde(skip)]
    pub feeds: Option<BTreeMap<String, BTreeSet<String>>>,
    /// Its SQL (rendered, for dbt), for time facts read off the query.
    #[serde(skip)]
    pub sql: Option<Sql>,
    /// The Airflow DAG and task that run it, for executors. Boxed, as is
    /// `built_by`: most jobs have neither, and a job is moved several times
    /// on its way into the graph.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub airflow: Option<Box<AirflowTask>>,
    /// For a dbt node: the Airflow task that builds it (an astronomer-cosmos
    /// task, a BashOperator running `dbt run`), for the Airflow executors.
    /// The job stays a dbt job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built_by: Option<Box<AirflowTask>>,
    /// For a dbt model: the calls through which it asks the warehouse
    /// (`run_query`, `dbt_utils.get_column_values`...), so what it reads may
    /// depend on data no static reader sees. Empty for most jobs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_warehouse: Vec<String>,
    /// Reads taken from a dbt `manifest.json` that rendering did not find;
    /// their edges carry `"evidence": "manifest"`.
    #[serde(skip)]
    pub from_manifest: BTreeSet<Target>,
}

/// A job's SQL text: its own, or a span of a cache file a warm run keeps
/// mapped (10,000 models' SQL is 17 MB a run would otherwise copy, and
/// most commands never read it).
#[derive(Clone)]
pub struct Sql(SqlOf);

#[derive(Clone)]
enum SqlOf {
    Own(String),
    Kept(Arc<crate::cache::Bytes>, Range<usize>),
}

impl Sql {
    /// The text at `range` of `bytes`; `None` when the range is out of
    /// bounds. Its UTF-8 is checked when it is read, not here: a warm run
    /// of `ripple graph` reads none of the 17 MB a 10,000-model project
    /// keeps, and checking it all up front was a twentieth of the run.
    pub fn kept(bytes: &Arc<crate::cache::Bytes>, range: Range<usize>) -> Option<Sql> {
        bytes.get(range.clone())?;
        Some(Sql(SqlOf::Kept(Arc::clone(bytes), range)))
    }
}

impl From<String> for Sql {
    fn from(s: String) -> Sql {
        Sql(SqlOf::Own(s))
    }
}

impl std::ops::Deref for Sql {
    type Target = str;
    fn deref(&self) -> &str {
        match &self.0 {
            SqlOf::Own(s) => s,
            // A cache file is never changed in place, and its lengths are
            // checked when it is read, so this is the text written (empty
            // only if another program wrote into the mapped file, which
            // docs/cache.md warns against).
            SqlOf::Kept(bytes, range) => bytes
                .get(range.clone())
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
        }
    }
}

impl PartialEq for Sql {
    fn eq(&self, other: &Sql) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Sql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// The Airflow task behind a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AirflowTask {
    /// `dag_id`.
    pub dag_id: String,
    /// `task_id` (TaskGroup-prefixed).
    pub task_id: String,
    /// Its SQL before Airflow renders it, with its params: what an executor
    /// renders for each run's dates.
    #[serde(skip)]
    pub template: Option<SqlTemplate>,
}

/// What kind of job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A dbt model, snapshot or seed load.
    Dbt,
    /// A node from a dbt `manifest.json`.
    Manifest,
    /// A plain SQL script.
    Sql,
    /// An Airflow task (`airflow:<dag_id>.<task_id>`).
    Airflow,
}

impl JobKind {
    /// Whether dbt runs the job (a model read from the project or from a
    /// manifest).
    pub fn is_dbt(self) -> bool {
        matches!(self, JobKind::Dbt | JobKind::Manifest)
    }
}

/// A reference from a job to a dataset, as written, resolved when the graph
/// is built.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Reference {
    /// What is referred to.
    pub target: Target,
    /// 1-based line of the reference in the job's file (0 when unknown).
    pub line: u32,
}

/// The thing a [`Reference`] names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Target {
    /// A dataset by node id (the reader already knew which).
    Node {
        /// The node id.
        id: String,
    },
    /// dbt `ref('name')`, `ref('package', 'name')`, `ref('name', v=2)`.
    Ref {
        /// Package, when given.
        package: Option<String>,
        /// Model, seed or snapshot name.
        name: String,
        /// Model version, when given.
        version: Option<String>,
    },
    /// dbt `source('source', 'table')`.
    Source {
        /// The source's name.
        source: String,
        /// The table's name.
        table: String,
    },
    /// A relation named in SQL (`schema.table`).
    Relation {
        /// The relation as printed by the SQL reader.
        relation: String,
    },
}

/// Read by hand, the same JSON the derived form writes (`by` beside the
/// fields, in any order): serde's derive for an internally tagged enum
/// buffers each map before reading it, and a warm run reads every
/// reference of every model.
impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TargetVisitor)
    }
}

struct TargetVisitor;

/// A target's `by`.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum TargetBy {
    Node,
    Ref,
    Source,
    Relation,
}

/// A key of a target's object.
#[derive(Debug, Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum TargetField {
    By,
    Id,
    Package,
    Name,
    Version,
    Source,
    Table,
    Relation,
    #[serde(other)]
    Other,
}

impl<'de> serde::de::Visitor<'de> for TargetVisitor {
    type Value = Target;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a reference's target: an object with `by`")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Target, A::Error> {
        use serde::de::Error;
        let mut by: Option<TargetBy> = None;
        let [
            mut id,
            mut package,
            mut name,
            mut version,
            mut source,
            mut table,
            mut relation,
        ] = [const { None::<Option<String>> }; 7];
        while let Some(key) = map.next_key::<TargetField>()? {
            let slot = match key {
                TargetField::By => {
                    by = Some(map.next_value()?);
                    continue;
                }
                TargetField::Id => &mut id,
                TargetField::Package => &mut package,
                TargetField::Name => &mut name,
                TargetField::Version => &mut version,
                TargetField::Source => &mut source,
                TargetField::Table => &mut table,
                TargetField::Relation => &mut relation,
                TargetField::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(A::Error::custom(format_args!("duplicate field `{key:?}`")));
            }
            *slot = Some(map.next_value()?);
        }
        let need = |v: Option<Option<String>>, field: &'static str| -> Result<String, A::Error> {
            v.flatten().ok_or_else(|| A::Error::missing_field(field))
        };
        match by.ok_or_else(|| A::Error::missing_field("by"))? {
            TargetBy::Node => Ok(Target::Node {
                id: need(id, "id")?,
            }),
            TargetBy::Ref => Ok(Target::Ref {
                package: package.flatten(),
                name: need(name, "name")?,
                version: version.flatten(),
            }),
            TargetBy::Source => Ok(Target::Source {
                source: need(source, "source")?,
                table: need(table, "table")?,
            }),
            TargetBy::Relation => Ok(Target::Relation {
                relation: need(relation, "relation")?,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DatasetConfig;

    /// A target reads back as it was written, whatever the order of its
    /// keys; what the derived form refused is refused.
    #[test]
    fn targets_read_back_in_any_key_order() {
        let all = [
            Target::Node {
                id: "model.a".into(),
            },
            Target::Ref {
                package: Some("p".into()),
                name: "a".into(),
                version: Some("2".into()),
            },
            Target::Ref {
                package: None,
                name: "a".into(),
                version: None,
            },
            Target::Source {
                source: "raw".into(),
                table: "t".into(),
            },
            Target::Relation {
                relation: "s.t".into(),
            },
        ];
        for t in &all {
            let text = serde_json::to_string(t).unwrap();
            assert_eq!(&serde_json::from_str::<Target>(&text).unwrap(), t, "{text}");
        }
        let read = |text: &str| serde_json::from_str::<Target>(text);
        assert_eq!(
            read(r#"{"name":"a","extra":[1],"by":"ref"}"#).unwrap(),
            all[2]
        );
        assert_eq!(
            read(r#"{"table":"t","source":"raw","by":"source"}"#).unwrap(),
            all[3]
        );
        for bad in [
            r#"{"name":"a"}"#,
            r#"{"by":"ref"}"#,
            r#"{"by":"ref","name":null}"#,
            r#"{"by":"join","name":"a"}"#,
            r#"{"by":"node","id":"a","id":"b"}"#,
            r#"["node","a"]"#,
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    /// Settings found by lookup are those a scan of every entry, in the
    /// map's order, finds first.
    #[test]
    fn settings_are_the_first_entry_that_names_the_dataset() {
        let d = Dataset::new(
            "model.orders".into(),
            DatasetKind::Model,
            "orders".into(),
            "mart.orders".into(),
        );
        let cost = |c: f64| DatasetConfig {
            cost: Some(c),
            ..DatasetConfig::default()
        };
        let keys = ["orders", "mart.orders", "model.orders", "other"];
        // Every subset of the keys, each with its own cost.
        for mask in 0u32..16 {
            let mut config = Config::default();
            for (i, k) in keys.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    config.datasets.insert(k.to_string(), cost(i as f64 + 1.0));
                }
            }
            let scan = config
                .datasets
                .iter()
                .find(|(k, _)| d.answers_to(k))
                .map(|(_, c)| c);
            assert_eq!(d.settings(&config), scan, "keys {mask:04b}");
        }
    }
}
