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
    /// The dbt macro file of ripple's backfill contract, if any.
    pub dbt_shadow_macro: Option<String>,
    /// Answers kept from earlier runs: each job's column lineage and time
    /// facts, looked up before its SQL is parsed.
    pub cache: std::sync::Arc<crate::cache::Cache>,
}

/// Lookup tables for resolving references.
struct Resolver<'a> {
    ids: BTreeSet<&'a str>,
    /// Lower-cased relations (borrowed when already lower case: most are).
    by_relation: HashMap<std::borrow::Cow<'a, str>, &'a str>,
    by_name: HashMap<&'a str, &'a str>,
    latest: HashMap<&'a str, &'a str>,
    /// "Did you mean" for unknown refs and sources, built once.
    model_names: Suggestions<'a>,
    source_names: Suggestions<'a>,
}

impl<'a> Resolver<'a> {
    fn new(datasets: &'a [Dataset]) -> Self {
        let mut r = Resolver {
            ids: datasets.iter().map(|d| d.id.as_str()).collect(),
            by_relation: HashMap::new(),
            by_name: HashMap::new(),
            latest: HashMap::new(),
            model_names: Suggestions::new(
                datasets
                    .iter()
                    .filter(|d| d.kind != DatasetKind::Source)
                    .map(|d| d.name.as_str()),
            ),
            source_names: Suggestions::new(
                datasets.iter().filter_map(|d| d.id.strip_prefix("source.")),
            ),
        };
        // Datasets come sorted by id: the first of equal relations or names
        // wins, whatever order the readers ran in.
        for d in datasets {
            let folded =
                d.relation.is_ascii() && !d.relation.bytes().any(|b| b.is_ascii_uppercase());
            let relation = match !folded {
                true => std::borrow::Cow::Owned(d.relation.to_lowercase()),
                false => std::borrow::Cow::Borrowed(d.relation.as_str()),
            };
            r.by_relation.entry(relation).or_insert(&d.id);
            if d.kind != DatasetKind::Source {
                r.by_name.entry(d.name.as_str()).or_insert(&d.id);
            }
            if let Some(latest) = d.config.get("latest_version").and_then(|v| v.as_str())
                && d.config.get("version").and_then(|v| v.as_str()) == Some(latest)
            {
                r.latest.insert(d.name.as_str(), &d.id);
            }
        }
        r
    }

    /// The dataset id `target` names; `Err` with a message when none.
    fn resolve(&self, target: &Target) -> Result<Option<String>, String> {
        match target {
            Target::Node { id } => match self.ids.contains(id.as_str()) {
                true => Ok(Some(id.clone())),
                false => Err(format!("`{id}` is not in the project")),
            },
            Target::Ref { name, version, .. } => {
                let candidates = match version {
                    Some(v) => vec![format!("model.{name}.v{v}")],
                    None => vec![
                        format!("model.{name}"),
                        self.latest
                            .get(name.as_str())
                            .map(|s| s.to_string())
                            .unwrap_or_default(),
                        format!("seed.{name}"),
                        format!("snapshot.{name}"),
                    ],
                };
                if let Some(id) = candidates.iter().find(|c| self.ids.contains(c.as_str())) {
                    return Ok(Some(id.clone()));
                }
                let hint = self
                    .model_names
                    .best(name)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                Err(format!(
                    "ref('{name}') names no model, seed or snapshot{hint}"
                ))
            }
            Target::Source { source, table } => {
                let id = format!("source.{source}.{table}");
                if self.ids.contains(id.as_str()) {
                    return Ok(Some(id));
                }
                let hint = self
                    .source_names
                    .best(&format!("{source}.{table}"))
                    .map(|s| format!("; did you mean `{s}`?"))
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
                if let Some(id) = self.by_relation.get(key) {
                    return Ok(Some(id.to_string()));
                }
                if !key.contains('.')
                    && let Some(id) = self.by_name.get(key)
                {
                    return Ok(Some(id.to_string()));
                }
                if crate::sql::is_path(key) {
                    return Ok(Some(format!("path.{key}")));
                }
                Ok(Some(format!("table.{key}")))
            }
        }
    }
}

/// What one job contributes to the graph, resolved on its own.
#[derive(Default)]
struct JobLinks {
    diagnostics: Vec<Diagnostic>,
    /// `table.` and `path.` datasets it names that no reader declared.
    new_tables: Vec<(String, String)>,
    /// The datasets it writes, in its order.
    writes: Vec<String>,
    edges: Vec<(String, String, Edge)>,
    self_reads: Vec<String>,
}

/// One read of a job, resolved to its dataset.
struct Read<'a> {
    id: String,
    line: u32,
    /// The relation the SQL named, when it named one.
    relation: Option<&'a str>,
    /// Known only from dbt's manifest, not from the code.
    manifest: bool,
    /// Through `ref()`: naming the model itself is then a cycle.
    is_ref: bool,
}

impl Resolver<'_> {
    /// The datasets `job` writes and reads, and the edges between them.
    fn links(&self, job: &Job) -> JobLinks {
        let mut out = JobLinks::default();
        let resolve = |target: &Target, line: u32, out: &mut JobLinks| -> Option<String> {
            match self.resolve(target) {
                Ok(Some(id)) => {
                    let rel = id
                        .strip_prefix("table.")
                        .or_else(|| id.strip_prefix("path."));
                    if let (Some(rel), Target::Relation { relation }) = (rel, target) {
                        debug_assert_eq!(rel, relation);
                        out.new_tables.push((id.clone(), relation.clone()));
                    }
                    Some(id)
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
        let writes: Vec<(String, Option<&BTreeSet<String>>)> = job
            .writes
            .iter()
            .filter_map(|w| {
                let id = resolve(&w.target, w.line, &mut out)?;
                let fed = match (&job.feeds, &w.target) {
                    (Some(feeds), Target::Relation { relation }) => feeds.get(relation),
                    _ => None,
                };
                Some((id, fed))
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
                resolve(&r.target, r.line, &mut out).map(|id| Read {
                    id,
                    line: r.line,
                    relation,
                    manifest: job.from_manifest.contains(&r.target),
                    // A dbt model's `ref()`, not its `{{ this }}`.
                    is_ref: matches!(r.target, Target::Ref { .. }),
                })
            })
            .collect();
        // A manifest read of a dataset the job itself reads adds nothing.
        if !job.from_manifest.is_empty() {
            let own: BTreeSet<String> = reads
                .iter()
                .filter(|r| !r.manifest)
                .map(|r| r.id.clone())
                .collect();
            reads.retain(|r| !r.manifest || !own.contains(&r.id));
        }
        for (w, fed) in &writes {
            out.writes.push(w.clone());
            for r in &reads {
                if let (Some(fed), Some(relation)) = (fed, r.relation)
                    && !fed.contains(relation)
                {
                    continue;
                }
                if r.id == *w {
                    // A dbt model's reads are its `ref()`s: one naming the
                    // model itself is a cycle to dbt (`{{ this }}` is how a
                    // model reads itself).
                    if job.kind == crate::project::JobKind::Dbt && r.is_ref {
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
                    r.id.clone(),
                    w.clone(),
                    Edge {
                        via: job.id.clone(),
                        file: job.file.clone(),
                        line: r.line,
                        evidence: r.manifest.then_some("manifest"),
                    },
                ));
            }
        }
        out
    }
}

impl LineageGraph {
    /// Builds the graph of `project`, consuming it.
    pub fn build(project: Project) -> LineageGraph {
        let Project {
            root,
            config,
            datasets,
            jobs,
            mut diagnostics,
            dags,
            dbt_shadow_macro,
            cache,
        } = project;
        let resolver = Resolver::new(&datasets);
        // Each job's references are resolved on its own, on all cores, and
        // merged in job order: the same graph as one job after another.
        let links: Vec<JobLinks> = {
            use rayon::prelude::*;
            jobs.par_iter().map(|job| resolver.links(job)).collect()
        };
        let mut new_tables: BTreeMap<String, String> = BTreeMap::new();
        let mut edges: Vec<(String, String, Edge)> = Vec::new();
        let mut writers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut self_reads = BTreeSet::new();
        for (job, l) in jobs.iter().zip(links) {
            diagnostics.extend(l.diagnostics);
            for (id, relation) in l.new_tables {
                new_tables.entry(id).or_insert(relation);
            }
            for w in l.writes {
                writers.entry(w).or_default().push(job.id.clone());
            }
            self_reads.extend(l.self_reads);
            edges.extend(l.edges);
        }
        // What a set of edges gave: sorted, each once.
        {
            use rayon::prelude::*;
            edges.par_sort_unstable();
        }
        edges.dedup();
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

        drop(resolver);
        let mut datasets = datasets;
        // A project keeps its datasets sorted by id; one built by hand may not.
        if !datasets.is_sorted_by(|a, b| a.id <= b.id) {
            datasets.sort_by(|a, b| a.id.cmp(&b.id));
        }
        let nodes = datasets.len() + new_tables.len();
        // Readers never make `table.` or `path.` datasets, so these ids are
        // all new, and in order (a map's): merged with the datasets, every
        // node is added in id order without gathering them in one more list.
        let mut tables = new_tables.into_iter().map(|(id, relation)| {
            let kind = match id.starts_with("path.") {
                true => DatasetKind::Path,
                false => DatasetKind::Table,
            };
            Dataset {
                name: relation.clone(),
                relation,
                id,
                kind,
                package: None,
                file: None,
                line: None,
                tags: Vec::new(),
                columns: Vec::new(),
                config: BTreeMap::new(),
                tests: false,
            }
        });
        let mut graph = DiGraph::with_capacity(nodes, edges.len());
        let mut index = HashMap::with_capacity(nodes);
        let mut declared = datasets.into_iter().peekable();
        let mut table = tables.next();
        loop {
            let d = match (declared.peek(), &table) {
                (Some(d), Some(t)) if t.id < d.id => std::mem::replace(&mut table, tables.next()),
                (Some(_), _) => declared.next(),
                (None, Some(_)) => std::mem::replace(&mut table, tables.next()),
                (None, None) => None,
            };
            let Some(d) = d else { break };
            let id = d.id.clone();
            index.insert(id, graph.add_node(d));
        }
        for (from, to, edge) in edges {
            if let (Some(&a), Some(&b)) = (index.get(&from), index.get(&to)) {
                graph.add_edge(a, b, edge);
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
            dbt_shadow_macro,
            cache,
        };
        let cycles = g.cycles();
        for cycle in cycles {
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
