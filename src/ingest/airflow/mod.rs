//! Airflow DAG files, parsed statically with Astral's Python parser — never
//! imported, never executed. What a file declares literally (DAGs, tasks,
//! dependencies, SQL, pools, schedules) is read; what only running it would
//! tell (tasks made in loops, f-strings of unknown variables, dynamic task
//! mapping) becomes a warning with file:line and a partial result.

mod parse;
mod template;

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::files::{relative, walk};
use crate::project::{AirflowTask, Diagnostic, Job, JobKind, Reference, Target};
use crate::sql::{SqlDialect, script_lineage};

/// A DAG as read from its file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dag {
    /// `dag_id`.
    pub dag_id: String,
    /// The file (relative to the project root).
    pub file: String,
    /// 1-based line of the declaration.
    pub line: u32,
    /// The schedule as written (`"30 2 * * *"`, `"@hourly"`,
    /// `"timedelta(hours=1)"`, `"None"`, `"datasets"`), if any.
    pub schedule: Option<String>,
    /// `start_date` as written, if a literal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
    /// `catchup`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catchup: Option<bool>,
    /// `end_date` as written, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_date: Option<String>,
    /// `max_active_runs`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_active_runs: Option<i64>,
    /// `max_active_tasks`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_active_tasks: Option<i64>,
    /// `tags`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Tasks in declaration order.
    pub tasks: Vec<Task>,
}

/// A task as read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    /// `task_id`, TaskGroup-prefixed (`group.task`).
    pub task_id: String,
    /// Operator class (`SQLExecuteQueryOperator`, `@task`, `@task.sql`).
    pub operator: String,
    /// The effective pool: the task's, else `default_args`'.
    pub pool: Option<String>,
    /// `pool_slots`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_slots: Option<i64>,
    /// `depends_on_past`: the task's, else `default_args`'.
    pub depends_on_past: bool,
    /// Tables its SQL reads (and `inlets`).
    pub reads: Vec<String>,
    /// Tables its SQL writes (and `outlets`).
    pub writes: Vec<String>,
    /// Upstream task ids (in this DAG, or `dag_id:task_id` in another).
    pub upstream: Vec<String>,
    /// DAGs this task triggers (`TriggerDagRunOperator`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<String>,
    /// 1-based line of the task.
    pub line: u32,
    /// The task's SQL after template rendering, when it has SQL.
    #[serde(skip)]
    pub sql: Option<String>,
}

/// Every DAG of a project's DAG folders.
#[derive(Debug, Clone, Default)]
pub struct Dags {
    /// DAGs, sorted by id.
    pub dags: Vec<Dag>,
    /// What could not be read statically.
    pub warnings: Vec<Diagnostic>,
}

/// Reads the `.py` files under `dirs`.
pub fn read_dags(root: &Path, dirs: &[PathBuf], dialect: SqlDialect) -> Dags {
    let files: Vec<PathBuf> = dirs.iter().flat_map(|d| walk(d, &[".py"])).collect();
    let results: Vec<(Vec<Dag>, Vec<Diagnostic>)> = files
        .par_iter()
        .map(|path| {
            let file = relative(root, path);
            match crate::input::read_text(path) {
                Ok(text) => {
                    let (mut dags, warnings) =
                        parse::parse_file(&text, &file, path.parent().unwrap_or(root), root);
                    for dag in &mut dags {
                        for task in &mut dag.tasks {
                            if let Some(sql) = &task.sql {
                                let lineage = script_lineage(sql, dialect);
                                task.reads.extend(lineage.sources);
                                task.writes.extend(lineage.targets);
                            }
                            task.reads.sort();
                            task.reads.dedup();
                            task.writes.sort();
                            task.writes.dedup();
                        }
                    }
                    (dags, warnings)
                }
                Err(e) => (
                    Vec::new(),
                    vec![Diagnostic::error(
                        "read-error",
                        Some(file),
                        0,
                        0,
                        e.to_string(),
                    )],
                ),
            }
        })
        .collect();
    let mut out = Dags::default();
    for (dags, warnings) in results {
        out.dags.extend(dags);
        out.warnings.extend(warnings);
    }
    out.dags
        .sort_by(|a, b| a.dag_id.cmp(&b.dag_id).then(a.file.cmp(&b.file)));
    out
}

impl Dags {
    /// One job per task that reads or writes tables, for the graph.
    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs = Vec::new();
        for dag in &self.dags {
            for t in &dag.tasks {
                if t.reads.is_empty() && t.writes.is_empty() {
                    continue;
                }
                let reference = |r: &String| Reference {
                    target: Target::Relation {
                        relation: r.clone(),
                    },
                    line: t.line,
                };
                jobs.push(Job {
                    id: format!("airflow:{}.{}", dag.dag_id, t.task_id),
                    kind: JobKind::Airflow,
                    file: dag.file.clone(),
                    reads: t.reads.iter().map(reference).collect(),
                    writes: t.writes.iter().map(reference).collect(),
                    sql: t.sql.clone(),
                    airflow: Some(AirflowTask {
                        dag_id: dag.dag_id.clone(),
                        task_id: t.task_id.clone(),
                    }),
                });
            }
        }
        jobs
    }

    /// Task ids used twice in one DAG, dependencies on unknown tasks, and
    /// cycles in task order.
    pub fn check(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for dag in &self.dags {
            let mut seen = std::collections::BTreeMap::new();
            for t in &dag.tasks {
                if let Some(first) = seen.insert(t.task_id.as_str(), t.line) {
                    out.push(Diagnostic::error(
                        "duplicate-task",
                        Some(dag.file.clone()),
                        t.line,
                        0,
                        format!("task id `{}` is used twice in DAG `{}` (first at line {first}); rename one", t.task_id, dag.dag_id),
                    ));
                }
            }
            for t in &dag.tasks {
                for up in &t.upstream {
                    if !up.contains(':') && !seen.contains_key(up.as_str()) {
                        out.push(Diagnostic::error(
                            "unknown-task",
                            Some(dag.file.clone()),
                            t.line,
                            0,
                            format!(
                                "`{}` depends on `{up}`, which is not a task of DAG `{}`",
                                t.task_id, dag.dag_id
                            ),
                        ));
                    }
                }
            }
            if let Some(cycle) = task_cycle(dag) {
                out.push(Diagnostic::error(
                    "task-cycle",
                    Some(dag.file.clone()),
                    dag.line,
                    0,
                    format!(
                        "tasks {} of DAG `{}` depend on each other in a cycle; break it",
                        cycle.join(", "),
                        dag.dag_id
                    ),
                ));
            }
        }
        out
    }
}

/// The tasks of a cycle in a DAG's task order, sorted.
fn task_cycle(dag: &Dag) -> Option<Vec<String>> {
    let mut g = petgraph::graph::DiGraph::<&str, ()>::new();
    let mut idx = std::collections::HashMap::new();
    for t in &dag.tasks {
        idx.entry(t.task_id.as_str())
            .or_insert_with(|| g.add_node(t.task_id.as_str()));
    }
    for t in &dag.tasks {
        for up in &t.upstream {
            if let (Some(&a), Some(&b)) = (idx.get(up.as_str()), idx.get(t.task_id.as_str())) {
                g.add_edge(a, b, ());
            }
        }
    }
    let scc = petgraph::algo::tarjan_scc(&g)
        .into_iter()
        .find(|c| c.len() > 1)?;
    let mut names: Vec<String> = scc.iter().map(|&n| g[n].to_string()).collect();
    names.sort();
    Some(names)
}
