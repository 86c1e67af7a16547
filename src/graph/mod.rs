//! The lineage graph: datasets as nodes, "downstream reads upstream" as
//! edges, each edge naming the job it runs through and where it is written.
//!
//! [`LineageGraph::build`] resolves every reference of every job (dbt refs,
//! sources, relations named in SQL) to a dataset; datasets known only from
//! SQL become `table.<relation>` nodes. The result does not depend on the
//! order the inputs were read in: nodes are added sorted by id, edges sorted
//! by (from, to, job).

mod reach;
mod select;
mod semantics;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;

pub use reach::{Reach, column_consumers};
pub use select::{Selector, SelectorError};
pub use semantics::{Semantics, same};

use crate::project::UNKNOWN_PLACEHOLDER;
use crate::project::{Dataset, DatasetKind, Diagnostic, Job, Project, Target};
use crate::text::Suggestions;
use rustc_hash::FxHashMap;

/// An edge: the downstream dataset reads the upstream one through `via`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    /// The job (node id of a dbt model, `sql:<file>` for a script).
    pub via: String,
    /// The file the read is written in.
    pub file: String,
    /// 1-based line of the read (0 when unknown).
    pub line: u32,
    /// Where the edge comes from when not from reading the job itself:
    /// `manifest` (a dbt `manifest.json`, for what rendering could not see).
    pub evidence: Option<&'static str>,
}

/// Most lineage edges (a job's read or write of one dataset) a graph is
/// built of: real projects have tens of thousands; past this, memory runs
/// out before the graph is made.
pub const MAX_GRAPH_EDGES: usize = 1_000_000;

/// The code of the error a graph past [`MAX_GRAPH_EDGES`] carries.
pub const GRAPH_TOO_LARGE: &str = "graph-too-large";

/// The lineage graph of a project.
#[derive(Debug, Clone)]
pub struct LineageGraph {
    /// Datasets and edges.
    pub graph: DiGraph<Dataset, Edge>,
    /// Node index by dataset id.
    pub index: HashMap<String, NodeIndex>,
    /// Jobs by id, with the datasets they write.
    pub jobs: BTreeMap<String, Job>,
    /// The jobs writing each dataset (by dataset id), in job id order.
    pub writers: BTreeMap<String, Vec<String>>,
    /// Datasets whose job reads the dataset itself (incremental models that
    /// read `{{ this }}`, `INSERT INTO t SELECT ... FROM t`).
    pub self_reads: BTreeSet<String>,
    /// The project's diagnostics, then those found building the graph.
    pub diagnostics: Vec<Diagnostic>,
    /// The project's configuration.
    pub config: crate::config::Config,
    /// The folder the project was read from.
    pub root: std::path::PathBuf,
    /// The project's Airflow DAGs (their schedules are production's).
    pub dags: Vec<crate::project::Dag>,
    /// The root dbt project, as ripple's dbt executor runs it.
    pub dbt_root: Option<crate::project::DbtRoot>,
    /// Answers kept from earlier runs: each job's column lineage and time
    /// facts, looked up before its SQL is parsed.
    pub cache: std::sync::Arc<crate::cache::Cache>,
}

/// A resolved reference: a declared dataset by its place in the sorted
/// datasets, or a `table.`/`path.` dataset no reader declared (its id).
/// Places, not ids: a 10,000-model graph copied, hashed and compared each
/// edge's two id strings, and sorted its edges by them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Declared(usize),
    New(String),
}

/// The id a reference names when some dataset has it: resolving looks no
/// further then (a ref falls back on a model's latest version, a seed or a
/// snapshot only when no model has its name). `None` for a relation named
/// in SQL, which is matched by relation and name.
pub fn first_id(target: &Target) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    match target {
        Target::Node { id } => Some(Cow::Borrowed(id)),
        Target::Ref {
            name,
            version: Some(v),
            ..
        } => Some(Cow::Owned(format!("model.{name}.v{v}"))),
        Target::Ref { name, .. } => Some(Cow::Owned(format!("model.{name}"))),
        Target::Source { source, table } => Some(Cow::Owned(format!("source.{source}.{table}"))),
        Target::Relation { .. } => None,
    }
}

/// Lookup tables for resolving references.
struct Resolver<'a> {
    datasets: &'a [Dataset],
    /// Each id's place (the last of equal ids, as the node index keeps).
    ids: FxHashMap<&'a str, usize>,
    /// Lower-cased relations (borrowed when already lower case: most are),
    /// each to the first dataset with it.
    by_relation: FxHashMap<std::borrow::Cow<'a, str>, usize>,
    by_name: FxHashMap<&'a str, usize>,
    latest: FxHashMap<&'a str, usize>,
    /// "Did you mean" for unknown refs and sources, built when first asked
    /// (most projects never ask).
    model_names: std::sync::OnceLock<Suggestions<'a>>,
    source_names: std::sync::OnceLock<Suggestions<'a>>,
}

impl<'a> Resolver<'a> {
    /// Tables over `datasets`, which come sorted by id: the first of equal
    /// relations or names wins, whatever order the readers ran in.
    fn new(datasets: &'a [Dataset], dialect: crate::sql::SqlDialect) -> Self {
        let n = datasets.len();
        let mut r = Resolver {
            datasets,
            ids: FxHashMap::with_capacity_and_hasher(n, Default::default()),
            by_relation: FxHashMap::with_capacity_and_hasher(n, Default::default()),
            by_name: FxHashMap::with_capacity_and_hasher(n, Default::default()),
            latest: FxHashMap::default(),
            model_names: Default::default(),
            source_names: Default::default(),
        };
        for (at, d) in datasets.iter().enumerate() {
            r.ids.insert(&d.id, at);
            // dbt-postgres quotes what dbt declares: `ORDERS_Tbl` is that
            // table, which SQL names `"ORDERS_Tbl"` (round 28: a job
            // loading it fed another node, and impact missed every model
            // on the source).
            let exact = dialect.dbt_names_exact()
                && matches!(
                    d.kind,
                    DatasetKind::Model
                        | DatasetKind::Source
                        | DatasetKind::Seed
                        | DatasetKind::Snapshot
                );
            let folded = exact
                || (d.relation.is_ascii() && !d.relation.bytes().any(|b| b.is_ascii_uppercase()));
            let relation = match !folded {
                true => std::borrow::Cow::Owned(d.relation.to_lowercase()),
                false => std::borrow::Cow::Borrowed(d.relation.as_str()),
            };
            r.by_relation.entry(relation).or_insert(at);
            if d.kind != DatasetKind::Source {
                r.by_name.entry(d.name.as_str()).or_insert(at);
            }
            if let Some(latest) = d.config.get("latest_version").and_then(|v| v.as_str())
                && d.config.get("version").and_then(|v| v.as_str()) == Some(latest)
            {
                r.latest.insert(d.name.as_str(), at);
            }
        }
        r
    }

    /// The declared dataset with id `id`.
    fn id(&self, id: &str) -> Option<Key> {
        self.ids.get(id).map(|&at| Key::Declared(at))
    }

    /// The place of the dataset `at` points to, by its id (equal ids: the
    /// last, as the node index keeps).
    fn declared(&self, at: usize) -> Key {
        Key::Declared(self.ids[self.datasets[at].id.as_str()])
    }

    /// The dataset `target` names; `Err` with a message when none.
    fn resolve(&self, target: &Target) -> Result<Option<Key>, String> {
        if let Some(k) = first_id(target).and_then(|id| self.id(&id)) {
            return Ok(Some(k));
        }
        match target {
            Target::Node { id } => Err(format!("`{id}` is not in the project")),
            Target::Ref { name, version, .. } => {
                let found = match version {
                    Some(_) => None,
                    None => self
                        .latest
                        .get(name.as_str())
                        .map(|&at| self.declared(at))
                        .or_else(|| self.id(&format!("seed.{name}")))
                        .or_else(|| self.id(&format!("snapshot.{name}"))),
                };
                if let Some(k) = found {
                    return Ok(Some(k));
                }
                let names = self.model_names.get_or_init(|| {
                    Suggestions::new(
                        self.datasets
                            .iter()
                            .filter(|d| d.kind != DatasetKind::Source)
                            .map(|d| d.name.as_str()),
                    )
                });
                let hint = names
                    .best(name)
                    .map(crate::text::mean_hint)
                    .unwrap_or_default();
                Err(format!(
                    "ref('{name}') names no model, seed or snapshot{hint}"
                ))
            }
            Target::Source { source, table } => {
                let names = self.source_names.get_or_init(|| {
                    Suggestions::new(
                        self.datasets
                            .iter()
                            .filter_map(|d| d.id.strip_prefix("source.")),
                    )
                });
                let hint = names
                    .best(&format!("{source}.{table}"))
                    .map(crate::text::mean_hint)
                    .unwrap_or_else(|| "; declare it under `sources:` in a YAML file".to_string());
                Err(format!(
                    "source('{source}', '{table}') is not declared{hint}"
                ))
            }
            Target::Relation { relation } => {
                if relation.contains(UNKNOWN_PLACEHOLDER) {
                    return Ok(None);
                }
                // Relations from SQL come folded the way their engine folds
                // them: a quoted mixed-case name (`mart."Orders"`) keeps its
                // case and is another table than `mart.orders`. Datasets the
                // readers declare (dbt, YAML) are unquoted names: lower case.
                let key = relation.as_str();
                if let Some(&at) = self.by_relation.get(key) {
                    return Ok(Some(self.declared(at)));
                }
                if !key.contains('.')
                    && let Some(&at) = self.by_name.get(key)
                {
                    return Ok(Some(self.declared(at)));
                }
                if crate::sql::is_path(key) {
                    return Ok(Some(Key::New(format!("path.{key}"))));
                }
                Ok(Some(Key::New(format!("table.{key}"))))
            }
        }
    }
}

/// What one job contributes to the graph, resolved on its own.
#[derive(Default)]
struct JobLinks {
    diagnostics: Vec<Diagnostic>,
    /// `table.` and `path.` datasets it names that no reader declared:
    /// (id, relation).
    new_tables: Vec<(String, String)>,
    /// The datasets it writes, in its order.
    writes: Vec<Key>,
    /// (upstream, downstream, edge).
    edges: Vec<(Key, Key, Edge)>,
    self_reads: Vec<Key>,
}

/// One read of a job, resolved to its dataset.
struct Read<'a> {
    key: Key,
    line: u32,
    /// The relation the SQL named, when it named one.
    relation: Option<&'a str>,
    /// Known only from dbt's manifest, not from the code.
    manifest: bool,
    /// Through `ref()`: naming the model itself is then a cycle.
    is_ref: bool,
    /// A dbt model's relation named in its SQL, not through `ref()`.
    hard_coded: bool,
}

impl Resolver<'_> {
    /// The id of the dataset `key` names.
    fn id_of<'k>(&'k self, key: &'k Key) -> &'k str {
        match key {
            Key::Declared(at) => &self.datasets[*at].id,
            Key::New(id) => id,
        }
    }

    /// The datasets `job` writes and reads, and the edges between them.
    /// The reads a dbt model's SQL names by relation (`from main.orders`)
    /// of datasets the project declares, that no `ref()`/`source()` of it
    /// made: dbt does not order the run by them, but the rows flow; each is
    /// read, with a warning saying so.
    fn hard_coded_reads(
        &self,
        job: &Job,
        writes: &[(Key, Option<&BTreeSet<String>>)],
        reads: &mut Vec<Read<'_>>,
        out: &mut JobLinks,
    ) {
        let Some(sql) = job.sql.as_deref() else {
            return;
        };
        // `db.schema.table` names `schema.table` where the project keeps no
        // database in its relations.
        let unread = |name: &str, reads: &[Read<'_>]| -> Option<(usize, Key)> {
            if name.contains(UNKNOWN_PLACEHOLDER) {
                return None;
            }
            let found = std::iter::once(name)
                .chain(name.match_indices('.').map(|(i, _)| &name[i + 1..]))
                .filter(|n| n.contains('.'))
                .find_map(|n| self.by_relation.get(n))?;
            let key = self.declared(*found);
            let known = reads.iter().any(|r| r.key == key) || writes.iter().any(|(w, _)| *w == key);
            (!known).then_some((*found, key))
        };
        // Most models name nothing by hand: the careful scan runs only
        // when the quick pass finds a name that is no read of the model's.
        if !crate::sql::hard_coded::any_candidate(sql, |n| unread(n, reads).is_some()) {
            return;
        }
        for (name, line) in crate::sql::hard_coded::qualified_reads(sql) {
            let Some((at, key)) = unread(&name, reads) else {
                continue;
            };
            let d = &self.datasets[at];
            out.diagnostics.push(Diagnostic::warning(
                "hard-coded-relation",
                Some(job.file.clone()),
                line,
                0,
                format!(
                    "`{}` reads `{name}` by name, which is {} `{}`: dbt does not order the run by it; ripple follows it. Write {} instead",
                    job.id.split('.').next_back().unwrap_or(&job.id),
                    match d.kind {
                        DatasetKind::Source => "the source",
                        DatasetKind::Seed => "the seed",
                        DatasetKind::Snapshot => "the snapshot",
                        _ => "the model",
                    },
                    d.name,
                    match d.kind {
                        DatasetKind::Source => {
                            let (s, t) = d.name.split_once('.').unwrap_or(("", &d.name));
                            format!("{{{{ source('{s}', '{t}') }}}}")
                        }
                        _ => format!("{{{{ ref('{}') }}}}", d.name),
                    }
                ),
            ));
            reads.push(Read {
                key,
                line,
                relation: None,
                manifest: false,
                is_ref: false,
                hard_coded: true,
            });
        }
    }

    fn links(&self, job: &Job) -> JobLinks {
        let mut out = JobLinks::default();
        let resolve = |target: &Target, line: u32, out: &mut JobLinks| -> Option<Key> {
            match self.resolve(target) {
                Ok(Some(key)) => {
                    if let (Key::New(id), Target::Relation { relation }) = (&key, target) {
                        out.new_tables.push((id.clone(), relation.clone()));
                    }
                    Some(key)
                }
                Ok(None) => None,
                Err(message) => {
                    out.diagnostics.push(Diagnostic::error(
                        "unknown-ref",
                        Some(job.file.clone()),
                        line,
                        0,
                        message,
                    ));
                    None
                }
            }
        };
        // Each write with the relations that feed it (`None`: all reads).
        let writes: Vec<(Key, Option<&BTreeSet<String>>)> = job
            .writes
            .iter()
            .filter_map(|w| {
                let key = resolve(&w.target, w.line, &mut out)?;
                let fed = match (&job.feeds, &w.target) {
                    (Some(feeds), Target::Relation { relation }) => feeds.get(relation),
                    _ => None,
                };
                Some((key, fed))
            })
            .collect();
        let mut reads: Vec<Read> = job
            .reads
            .iter()
            .filter_map(|r| {
                let relation = match &r.target {
                    Target::Relation { relation } => Some(relation.as_str()),
                    _ => None,
                };
                resolve(&r.target, r.line, &mut out).map(|key| Read {
                    key,
                    line: r.line,
                    relation,
                    manifest: job.from_manifest.contains(&r.target),
                    // A dbt model's `ref()`, not its `{{ this }}`.
                    is_ref: matches!(r.target, Target::Ref { .. }),
                    hard_coded: false,
                })
            })
            .collect();
        if job.kind == crate::project::JobKind::Dbt {
            self.hard_coded_reads(job, &writes, &mut reads, &mut out);
        }
        // A manifest read of a dataset the job itself reads adds nothing.
        if !job.from_manifest.is_empty() {
            let own: BTreeSet<Key> = reads
                .iter()
                .filter(|r| !r.manifest)
                .map(|r| r.key.clone())
                .collect();
            reads.retain(|r| !r.manifest || !own.contains(&r.key));
        }
        for (w, fed) in &writes {
            out.writes.push(w.clone());
            for r in &reads {
                if let (Some(fed), Some(relation)) = (fed, r.relation)
                    && !fed.contains(relation)
                {
                    continue;
                }
                if r.key == *w {
                    // A dbt model's reads are its `ref()`s: one naming the
                    // model itself is a cycle to dbt (`{{ this }}` is how a
                    // model reads itself).
                    if job.kind == crate::project::JobKind::Dbt && r.is_ref {
                        let w = self.id_of(w);
                        out.diagnostics.push(Diagnostic::error(
                            "cycle",
                            Some(job.file.clone()),
                            r.line,
                            0,
                            format!(
                                "`{}` refs itself; dbt reports a cycle: use {{{{ this }}}} to read the model's own table",
                                w.strip_prefix("model.").unwrap_or(w)
                            ),
                        ));
                    }
                    out.self_reads.push(w.clone());
                    continue;
                }
                out.edges.push((
                    r.key.clone(),
                    w.clone(),
                    Edge {
                        via: job.id.clone(),
                        file: job.file.clone(),
                        line: r.line,
                        evidence: if r.manifest {
                            Some("manifest")
                        } else {
                            r.hard_coded.then_some("hard-coded")
                        },
                    },
                ));
            }
        }
        out
    }
}

impl LineageGraph {
    /// Builds the graph of `project`, consuming it.
    /// Builds the graph of `project`. Past [`MAX_GRAPH_EDGES`] it has no
    /// edges and a [`GRAPH_TOO_LARGE`] error: callers refuse it.
    pub fn build(project: Project) -> LineageGraph {
        let Project {
            root,
            config,
            mut datasets,
            jobs,
            mut diagnostics,
            dags,
            dbt_root,
            cache,
            lineage: _,
        } = project;
        // A project keeps its datasets sorted by id; one built by hand may not.
        if !datasets.is_sorted_by(|a, b| a.id <= b.id) {
            datasets.sort_by(|a, b| a.id.cmp(&b.id));
        }
        let resolver = Resolver::new(&datasets, config.dialect);
        // Each job's references are resolved on its own, on all cores, and
        // merged in job order: the same graph as one job after another.
        let mut links: Vec<JobLinks> = {
            use rayon::prelude::*;
            jobs.par_iter().map(|job| resolver.links(job)).collect()
        };
        // Counted before they are merged: 3,200 models each reading all the
        // ones before made 5 million edges and aborted on memory.
        let total: usize = links.iter().map(|l| l.edges.len()).sum();
        if total > MAX_GRAPH_EDGES {
            for l in &mut links {
                l.edges = Vec::new();
            }
            diagnostics.push(crate::project::Diagnostic::error(
                GRAPH_TOO_LARGE,
                None,
                0,
                0,
                format!("the project's jobs read and write {total} times, more than the {MAX_GRAPH_EDGES} lineage edges ripple builds a graph of (docs/limits.md); its lineage is not built. A model reading thousands of others (a macro looping over `ref()`s) is the usual cause: read them through one model, or split the project"),
            ));
        }
        let mut new_tables: BTreeMap<String, String> = BTreeMap::new();
        let mut edges: Vec<(Key, Key, Edge)> = Vec::new();
        // (dataset written, job), in job order.
        let mut writes: Vec<(Key, usize)> = Vec::new();
        let mut self_reads: Vec<Key> = Vec::new();
        for (j, l) in links.into_iter().enumerate() {
            diagnostics.extend(l.diagnostics);
            for (id, relation) in l.new_tables {
                new_tables.entry(id).or_insert(relation);
            }
            writes.extend(l.writes.into_iter().map(|w| (w, j)));
            self_reads.extend(l.self_reads);
            edges.extend(l.edges);
        }
        drop(resolver);
        let nodes = datasets.len() + new_tables.len();
        // Readers never make `table.` or `path.` datasets, so these ids are
        // all new, and in order (a map's): merged with the datasets, every
        // node is added in id order without gathering them in one more list.
        let mut tables = new_tables.into_iter().map(|(id, relation)| {
            let kind = match id.starts_with("path.") {
                true => DatasetKind::Path,
                false => DatasetKind::Table,
            };
            Dataset::new(id, kind, relation.clone(), relation)
        });
        let mut graph = DiGraph::with_capacity(nodes, edges.len());
        let mut index = HashMap::with_capacity(nodes);
        // Each declared dataset's node, by its place.
        let mut declared_node: Vec<NodeIndex> = Vec::with_capacity(datasets.len());
        let mut declared = datasets.into_iter().peekable();
        let mut table = tables.next();
        loop {
            let (d, is_declared) = match (declared.peek(), &table) {
                (Some(d), Some(t)) if t.id < d.id => {
                    (std::mem::replace(&mut table, tables.next()), false)
                }
                (Some(_), _) => (declared.next(), true),
                (None, Some(_)) => (std::mem::replace(&mut table, tables.next()), false),
                (None, None) => (None, false),
            };
            let Some(d) = d else { break };
            let id = d.id.clone();
            let n = graph.add_node(d);
            if is_declared {
                declared_node.push(n);
            }
            index.insert(id, n);
        }
        // Nodes were added in id order, so a node's index orders as its id
        // does: edges sorted by index are sorted by id.
        let node = |k: &Key| match k {
            Key::Declared(at) => declared_node[*at],
            Key::New(id) => index[id],
        };
        let mut edges: Vec<(NodeIndex, NodeIndex, Edge)> = edges
            .into_iter()
            .map(|(a, b, e)| (node(&a), node(&b), e))
            .collect();
        // What a set of edges gave: sorted, each once.
        {
            use rayon::prelude::*;
            edges.par_sort_unstable();
        }
        edges.dedup();
        // The ids written, each with its jobs in job order.
        let mut written: Vec<(NodeIndex, usize)> =
            writes.iter().map(|(k, j)| (node(k), *j)).collect();
        written.sort_by_key(|w| w.0);
        let self_reads: BTreeSet<String> = self_reads
            .iter()
            .map(|k| graph[node(k)].id.clone())
            .collect();
        for (a, b, edge) in edges {
            graph.add_edge(a, b, edge);
        }
        let mut writers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for run in written.chunk_by(|a, b| a.0 == b.0) {
            let jobs = run.iter().map(|&(_, j)| jobs[j].id.clone()).collect();
            writers.insert(graph[run[0].0].id.clone(), jobs);
        }
        let dag_of: HashMap<&str, &str> = jobs
            .iter()
            .filter_map(|j| Some((j.id.as_str(), j.airflow.as_ref()?.dag_id.as_str())))
            .collect();
        for (id, jobs) in &writers {
            // Tasks of one Airflow DAG writing a table in turn (load, then
            // dedupe) are one run of that DAG, not two competing writers.
            let one_dag = jobs
                .iter()
                .map(|j| dag_of.get(j.as_str()).copied())
                .collect::<Option<BTreeSet<_>>>()
                .is_some_and(|dags| dags.len() == 1);
            if jobs.len() > 1 && !one_dag {
                diagnostics.push(Diagnostic::warning(
                    "duplicate-writer",
                    None,
                    0,
                    0,
                    format!(
                        "`{id}` is written by {} jobs: {}; a backfill would run both",
                        jobs.len(),
                        jobs.join(", ")
                    ),
                ));
            }
        }
        let mut g = LineageGraph {
            graph,
            index,
            jobs: jobs.into_iter().map(|j| (j.id.clone(), j)).collect(),
            writers,
            self_reads,
            diagnostics,
            config,
            root,
            dags,
            dbt_root,
            cache,
        };
        for cycle in g.cycles_if_any() {
            g.diagnostics.push(Diagnostic::error(
                "cycle",
                None,
                0,
                0,
                format!(
                    "cycle: {}; break it (a `none` mapping in ripple.yml does not)",
                    cycle.join(" → ")
                ),
            ));
        }
        g.diagnostics.sort();
        g.diagnostics.dedup();
        g
    }

    /// The graph of the bundled project `fixtures/<name>`, for unit tests.
    #[cfg(test)]
    pub(crate) fn of_fixture(name: &str) -> LineageGraph {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        LineageGraph::build(crate::ingest::load_project(&root, &Default::default()).unwrap())
    }

    /// Links each partition (or inheriting child) the table facts name to
    /// the table whose rows include its own: a job writing
    /// `mart.daily_2026_01` changes what readers of `mart.daily` read
    /// (round 29: impact left them out). How many edges it added.
    pub fn link_partitions(&mut self, tables: &crate::sql::tables::Tables) -> usize {
        let dialect = self.config.dialect;
        let fold = |n: NodeIndex| crate::sql::tables::fold(dialect, &self.graph[n].relation);
        let tables_of = || {
            self.graph
                .node_indices()
                .filter(|&n| self.graph[n].kind == DatasetKind::Table)
        };
        // The first table of each relation, as the facts name it.
        let mut by_relation: HashMap<String, NodeIndex> = HashMap::new();
        for n in tables_of() {
            by_relation.entry(fold(n)).or_insert(n);
        }
        let mut links = Vec::new();
        for n in tables_of() {
            let Some(f) = tables.get(&fold(n), dialect) else {
                continue;
            };
            for parent in &f.parents {
                let Some(&p) = by_relation.get(parent) else {
                    continue;
                };
                if !self.graph.contains_edge(n, p) {
                    links.push((n, p, f.origin.clone(), parent.clone()));
                }
            }
        }
        let count = links.len();
        for (child, parent, origin, name) in links {
            self.graph.add_edge(
                child,
                parent,
                Edge {
                    via: format!("partition-of:{name}"),
                    file: origin,
                    line: 0,
                    evidence: Some("catalog"),
                },
            );
        }
        count
    }

    /// The dataset with id `id`.
    pub fn dataset(&self, id: &str) -> Option<&Dataset> {
        self.index.get(id).map(|&i| &self.graph[i])
    }

    /// The job writing dataset `id` (the first, when several do).
    pub fn writer(&self, id: &str) -> Option<&Job> {
        self.writers.get(id)?.first().and_then(|j| self.jobs.get(j))
    }

    /// Every dataset reachable from `from` along `dir` (downstream with
    /// `Outgoing`), `from` itself left out.
    pub fn reachable(&self, from: &BTreeSet<NodeIndex>, dir: Direction) -> BTreeSet<NodeIndex> {
        select::walk(self, from, dir, select::Depth::All)
    }

    /// [`LineageGraph::cycles`], after one cheap pass that finds most
    /// graphs have none (Kahn's: repeatedly take a node nothing left points
    /// to; a cycle's nodes are never taken). The strongly connected parts
    /// cost two depth-first passes, a tenth of a warm 10,000-model build.
    fn cycles_if_any(&self) -> Vec<Vec<String>> {
        let g = &self.graph;
        let mut waiting: Vec<u32> = vec![0; g.node_count()];
        for e in g.raw_edges() {
            waiting[e.target().index()] += 1;
        }
        let mut free: Vec<NodeIndex> = g
            .node_indices()
            .filter(|n| waiting[n.index()] == 0)
            .collect();
        let mut taken = 0;
        while let Some(n) = free.pop() {
            taken += 1;
            for m in g.neighbors_directed(n, Direction::Outgoing) {
                waiting[m.index()] -= 1;
                if waiting[m.index()] == 0 {
                    free.push(m);
                }
            }
        }
        match taken == g.node_count() {
            true => Vec::new(),
            false => self.cycles(),
        }
    }

    /// Each cycle as the path `a → b → a`, starting at its smallest id.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        // Kosaraju, not Tarjan: petgraph's Tarjan recurses once per node on
        // a path, and a 100,000-long chain overflowed the stack.
        for scc in petgraph::algo::kosaraju_scc(&self.graph) {
            if scc.len() < 2 {
                continue;
            }
            let members: BTreeSet<NodeIndex> = scc.iter().copied().collect();
            let Some(&start) = scc.iter().min_by_key(|&&n| &self.graph[n].id) else {
                continue;
            };
            out.push(self.cycle_path(start, &members));
        }
        out.sort();
        out
    }

    /// A shortest path from `start` back to itself inside `members`.
    fn cycle_path(&self, start: NodeIndex, members: &BTreeSet<NodeIndex>) -> Vec<String> {
        let mut prev: HashMap<NodeIndex, NodeIndex> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            let mut next: Vec<NodeIndex> = self
                .graph
                .neighbors_directed(n, Direction::Outgoing)
                .filter(|m| members.contains(m))
                .collect();
            next.sort_by_key(|&m| &self.graph[m].id);
            for m in next {
                if m == start {
                    // start → ... → n → start, rebuilt from the predecessors.
                    let mut back = Vec::new();
                    let mut cur = n;
                    while cur != start {
                        back.push(self.graph[cur].id.clone());
                        cur = prev[&cur];
                    }
                    let first = self.graph[start].id.clone();
                    let mut path = vec![first.clone()];
                    path.extend(back.into_iter().rev());
                    path.push(first);
                    return path;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(m) {
                    e.insert(n);
                    queue.push_back(m);
                }
            }
        }
        vec![self.graph[start].id.clone()]
    }

    /// Everything `ripple check` reports: the diagnostics of loading and
    /// building, and sources that nothing reads; sorted.
    pub fn check(&self) -> Vec<Diagnostic> {
        let mut out = self.diagnostics.clone();
        // A dbt model's SQL is parsed only when a command needs its columns
        // or times; `check` says which ripple cannot read (dbt may: it
        // runs the SQL as written), since those are read as `*`.
        let unparsed: Vec<Diagnostic> = {
            use rayon::prelude::*;
            self.jobs
                .par_iter()
                .filter(|(_, j)| j.kind.is_dbt())
                .filter_map(|(_, j)| {
                    let sql = j.sql.as_deref()?;
                    // Parsing alone first: SQL that parses has no error, and
                    // its lineage was most of the pass's cost. What fails is
                    // read as lineage reads it (which recovers some forms).
                    crate::sql::with_statements(sql, self.config.dialect, |_| ()).err()?;
                    let e = crate::sql::script_lineage(sql, self.config.dialect)
                        .errors
                        .into_iter()
                        .next()?;
                    Some(Diagnostic::warning(
                        "parse-error",
                        Some(j.file.clone()),
                        e.line as u32,
                        e.column as u32,
                        format!(
                            "`{}` as ripple renders it does not parse ({}; line and column of the rendered SQL): its columns and times are not read (taken as `*`), so column pruning and time inference cannot narrow what reads it",
                            j.id.rsplit('.').next().unwrap_or(&j.id),
                            e.message
                        ),
                    ))
                })
                .collect()
        };
        out.extend(unparsed);
        out.extend(self.misnamed_partition_columns());
        for s in self.unused_sources() {
            out.push(Diagnostic::warning(
                "unused-source",
                s.file.clone(),
                s.line.unwrap_or(0),
                0,
                format!("source `{}` is declared but nothing reads it", s.name),
            ));
        }
        out.sort();
        out
    }

    /// A `ripple.yml` `partition_column` that is no column of its dataset,
    /// where the dataset's columns are known (declared, or what its job
    /// outputs): a misspelt one once passed `check` and `impact` and
    /// failed the plan with another message.
    fn misnamed_partition_columns(&self) -> Vec<Diagnostic> {
        let configured: Vec<(NodeIndex, &str)> = self
            .graph
            .node_indices()
            .filter_map(|n| {
                let column = self.graph[n]
                    .settings(&self.config)?
                    .partition_column
                    .as_deref()?;
                // A plain name only: anything else is not checked here.
                column
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_')
                    .then_some((n, column))
            })
            .collect();
        if configured.is_empty() {
            return Vec::new();
        }
        let text =
            std::fs::read_to_string(self.root.join(crate::config::CONFIG_FILE)).unwrap_or_default();
        let mut sem = Semantics::new(self).without_star_expansion();
        let mut out = Vec::new();
        for (n, column) in configured {
            let Some(columns) = sem.columns_of(n) else {
                continue;
            };
            if columns.iter().any(|c| c.eq_ignore_ascii_case(column)) {
                continue;
            }
            let d = &self.graph[n];
            let needle = format!("partition_column: {column}");
            let line = text
                .lines()
                .position(|l| l.contains(&needle))
                .map_or(0, |i| i as u32 + 1);
            out.push(Diagnostic::error(
                "config",
                Some(crate::config::CONFIG_FILE.to_string()),
                line,
                0,
                format!(
                    "`{}`'s partition_column `{column}` is not one of its columns ({}); name the column its partitions are selected by",
                    d.name,
                    columns.join(", ")
                ),
            ));
        }
        out
    }

    /// Source datasets that nothing reads.
    pub fn unused_sources(&self) -> Vec<&Dataset> {
        self.graph
            .node_indices()
            .filter(|&n| {
                self.graph[n].kind == DatasetKind::Source
                    && self
                        .graph
                        .neighbors_directed(n, Direction::Outgoing)
                        .next()
                        .is_none()
            })
            .map(|n| &self.graph[n])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{JobKind, Reference};
    use proptest::prelude::*;

    /// A job `j{i}` writing relation `w` and reading relations `reads`.
    fn job(i: usize, w: &str, reads: &[String]) -> Job {
        let reference = |r: &str| Reference {
            target: Target::Relation {
                relation: r.to_string(),
            },
            line: 1,
        };
        Job {
            id: format!("sql:j{i}.sql"),
            kind: JobKind::Sql,
            file: format!("j{i}.sql"),
            reads: reads.iter().map(|r| reference(r)).collect(),
            writes: vec![reference(w)],
            feeds: None,
            sql: None,
            airflow: None,
            built_by: None,
            needs_warehouse: Vec::new(),
            from_manifest: BTreeSet::new(),
        }
    }

    fn dataset(id: &str, relation: &str) -> Dataset {
        Dataset::new(
            id.to_string(),
            DatasetKind::Model,
            id.trim_start_matches("model.").to_string(),
            relation.to_string(),
        )
    }

    /// Relations `r0`..`r5`; datasets declare some of them (two may share
    /// one: the first by id wins), in any order; jobs read and write any.
    /// (dataset number, relation number) pairs, and (relation written,
    /// relations read) per job.
    type Case = (Vec<(usize, usize)>, Vec<(usize, Vec<usize>)>);

    fn case() -> impl Strategy<Value = Case> {
        (
            prop::collection::vec((0..8usize, 0..6usize), 0..6),
            prop::collection::vec((0..6usize, prop::collection::vec(0..6usize, 0..4)), 0..8),
        )
    }

    proptest! {
        /// The graph's nodes, edges and writers, against a plain reading
        /// of the rules: a relation is the first dataset (by id) that lives
        /// in it, else a `table.` node; an edge per read of each write,
        /// sorted by ids then job, each once.
        #[test]
        fn build_resolves_as_the_rules_say((declared, jobs) in case()) {
            // One dataset per id, as a loaded project has.
            let mut ids = BTreeSet::new();
            let datasets: Vec<Dataset> = declared
                .iter()
                .filter(|(d, _)| ids.insert(*d))
                .map(|&(d, r)| dataset(&format!("model.d{d}"), &format!("r{r}")))
                .collect();
            let jobs: Vec<Job> = jobs
                .iter()
                .enumerate()
                .map(|(i, (w, reads))| {
                    let reads: Vec<String> = reads.iter().map(|r| format!("r{r}")).collect();
                    job(i, &format!("r{w}"), &reads)
                })
                .collect();
            let mut sorted = datasets.clone();
            sorted.sort_by(|a, b| a.id.cmp(&b.id));
            let owner = |relation: &str| -> String {
                sorted
                    .iter()
                    .find(|d| d.relation == relation)
                    .map(|d| d.id.clone())
                    .unwrap_or_else(|| format!("table.{relation}"))
            };
            let mut nodes: BTreeSet<String> = sorted.iter().map(|d| d.id.clone()).collect();
            let mut edges = Vec::new();
            let mut writers: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for j in &jobs {
                let w = match &j.writes[0].target {
                    Target::Relation { relation } => owner(relation),
                    _ => unreachable!(),
                };
                nodes.insert(w.clone());
                writers.entry(w.clone()).or_default().push(j.id.clone());
                for r in &j.reads {
                    let Target::Relation { relation } = &r.target else { unreachable!() };
                    let r = owner(relation);
                    nodes.insert(r.clone());
                    if r != w {
                        edges.push((r, w.clone(), j.id.clone()));
                    }
                }
            }
            edges.sort();
            edges.dedup();
            let g = LineageGraph::build(Project { datasets, jobs, ..Project::default() });
            let got_nodes: Vec<String> = g.graph.node_weights().map(|d| d.id.clone()).collect();
            prop_assert_eq!(got_nodes, nodes.into_iter().collect::<Vec<_>>());
            let got_edges: Vec<(String, String, String)> = g
                .graph
                .raw_edges()
                .iter()
                .map(|e| {
                    (
                        g.graph[e.source()].id.clone(),
                        g.graph[e.target()].id.clone(),
                        e.weight.via.clone(),
                    )
                })
                .collect();
            prop_assert_eq!(got_edges, edges);
            prop_assert_eq!(&g.writers, &writers);
            for (id, &n) in &g.index {
                prop_assert_eq!(&g.graph[n].id, id);
            }
        }

        /// The one-pass check finds a cycle exactly when there is one.
        #[test]
        fn cycles_if_any_is_cycles(edges in prop::collection::vec((0..7u32, 0..7u32), 0..14)) {
            let mut g = LineageGraph::build(Project {
                datasets: (0..7).map(|i| dataset(&format!("model.d{i}"), &format!("r{i}"))).collect(),
                ..Project::default()
            });
            for (a, b) in edges {
                if a != b {
                    let e = Edge { via: String::new(), file: String::new(), line: 0, evidence: None };
                    g.graph.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), e);
                }
            }
            prop_assert_eq!(g.cycles_if_any(), g.cycles());
        }
    }
}
