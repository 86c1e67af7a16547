//! Airflow DAG files, parsed statically with Astral's Python parser — never
//! imported, never executed. What a file declares literally (DAGs, tasks,
//! dependencies, SQL, pools, schedules) is read; what only running it would
//! tell (tasks made in loops, f-strings of unknown variables, dynamic task
//! mapping) becomes a warning with file:line and a partial result.

mod parse;
mod template;

pub use template::render_for_run;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::files::{read_error, relative, walk};
use crate::project::{AirflowTask, Dag, Diagnostic, Job, JobKind, Part, Reference, Target};
use crate::sql::{SqlDialect, script_lineage};

/// Every DAG of a project's DAG folders.
#[derive(Debug, Clone, Default)]
pub struct Dags {
    /// DAGs, sorted by id.
    pub dags: Vec<Dag>,
    /// What could not be read statically.
    pub warnings: Vec<Diagnostic>,
}

/// The Airflow part of a project: the DAGs under `dirs`, their tasks as
/// jobs, and what could not be read.
pub(crate) fn load(root: &Path, dirs: &[PathBuf], dialect: SqlDialect) -> Part {
    let dags = read_dags(root, dirs, dialect);
    let mut diagnostics = dags.check();
    diagnostics.extend(dags.warnings.iter().cloned());
    Part {
        datasets: Vec::new(),
        jobs: dags.jobs(),
        diagnostics,
        dags: dags.dags,
        dbt_shadow_macro: None,
    }
}

/// Reads the `.py` files under `dirs`.
pub fn read_dags(root: &Path, dirs: &[PathBuf], dialect: SqlDialect) -> Dags {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut problems = Vec::new();
    for d in dirs {
        let found = walk(root, d, &[".py"]);
        files.extend(found.files);
        problems.extend(found.problems);
    }
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
                                // Declared inlets and outlets feed all.
                                if task.reads.is_empty() && task.writes.is_empty() {
                                    task.feeds = Some(lineage.feeds());
                                }
                                task.writes.extend(lineage.filled_targets());
                                task.reads.extend(lineage.sources);
                            }
                            task.reads.sort();
                            task.reads.dedup();
                            task.writes.sort();
                            task.writes.dedup();
                        }
                    }
                    (dags, warnings)
                }
                Err(e) => (Vec::new(), vec![read_error(file, &e)]),
            }
        })
        .collect();
    let mut out = Dags {
        warnings: problems,
        ..Dags::default()
    };
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
                    feeds: t.feeds.clone(),
                    sql: t.sql.clone(),
                    airflow: Some(AirflowTask {
                        dag_id: dag.dag_id.clone(),
                        task_id: t.task_id.clone(),
                        template: t.template.clone(),
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
    // `a >> a` is a cycle of one. Kosaraju: petgraph's Tarjan recurses per
    // node of a path and overflowed on long task chains.
    let scc = petgraph::algo::kosaraju_scc(&g)
        .into_iter()
        .find(|c| c.len() > 1 || g.contains_edge(c[0], c[0]))?;
    let mut names: Vec<String> = scc.iter().map(|&n| g[n].to_string()).collect();
    names.sort();
    Some(names)
}
