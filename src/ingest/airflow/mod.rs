//! Airflow DAG files, parsed statically with Astral's Python parser — never
//! imported, never executed. What a file declares literally (DAGs, tasks,
//! task groups, mapped tasks, dependencies, SQL, pools, schedules, datasets,
//! cross-DAG sensors and triggers, dbt run from Airflow) is read; what only
//! running it would tell (tasks made in loops, f-strings of unknown
//! variables, values mapped over at runtime) becomes a warning with
//! file:line and a partial result. `dbt.rs` links dbt nodes to the tasks
//! that build them once the project's dbt is read.

mod dbt;
mod parse;
mod template;
mod volatile;

pub(crate) use dbt::link as link_dbt;

pub use template::render_for_run;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::files::{read_error, relative, walk};
use std::collections::BTreeMap;

use crate::project::{
    AirflowTask, Dag, DagEdge, Diagnostic, EdgeKind, Job, JobKind, Part, Reference, Target,
};
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
        dbt_root: None,
    }
}

/// What `.airflowignore` files say of a DAG file.
enum Ignore {
    /// Ignored under both of Airflow's syntaxes: not read, as Airflow
    /// loads nothing of it.
    Both,
    /// Ignored under one syntax only (Airflow 3's default `glob`, Airflow
    /// 2's `regexp`): read, and said why.
    One(String),
}

/// The `.airflowignore` files of a DAG folder, read once each.
#[derive(Default)]
struct Ignores {
    by_dir: std::collections::HashMap<PathBuf, Vec<String>>,
}

impl Ignores {
    /// The verdict on `file` of every `.airflowignore` from `top` down to
    /// its folder: each pattern matched against the path below the folder
    /// holding it.
    fn verdict(&mut self, top: &Path, file: &Path) -> Option<Ignore> {
        let mut dir = file.parent()?;
        let mut one = None;
        loop {
            let patterns = self.by_dir.entry(dir.to_path_buf()).or_insert_with(|| {
                crate::input::read_text(&dir.join(".airflowignore"))
                    .map(|t| {
                        t.lines()
                            .map(str::trim)
                            .filter(|l| !l.is_empty() && !l.starts_with('#'))
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default()
            });
            let rel = file
                .strip_prefix(dir)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            for p in patterns.iter() {
                let regexp = regex::Regex::new(p).is_ok_and(|r| r.is_match(&rel));
                let glob = glob_matches(p, &rel);
                match (regexp, glob) {
                    (true, true) => return Some(Ignore::Both),
                    (false, false) => {}
                    (r, _) => {
                        one.get_or_insert_with(|| {
                            Ignore::One(format!(
                                "`.airflowignore` pattern `{p}` ignores it under Airflow's `{}` syntax but not under `{}`: ripple reads it, which Airflow {} does; write a pattern both syntaxes read alike",
                                if r { "regexp" } else { "glob" },
                                if r { "glob" } else { "regexp" },
                                if r { "3 (glob, its default)" } else { "2 (regexp, its default)" },
                            ))
                        });
                    }
                }
            }
            if dir == top {
                return one;
            }
            dir = dir.parent().filter(|p| p.starts_with(top))?;
        }
    }
}

/// Whether gitignore-like `pattern` (Airflow's `glob` syntax) matches the
/// path `rel` (`/`-separated) or a folder on it: a pattern without a `/`
/// but at its end matches any name along the path; one with a `/` is
/// anchored at the ignore file's folder.
fn glob_matches(pattern: &str, rel: &str) -> bool {
    let dir_only = pattern.ends_with('/');
    let p = pattern.trim_end_matches('/');
    let anchored = p.contains('/');
    let p = p.trim_start_matches('/');
    let mut re = String::from("^");
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                re.push_str(".*");
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    let Ok(re) = regex::Regex::new(&re) else {
        return false;
    };
    let parts: Vec<&str> = rel.split('/').collect();
    // Each folder on the path (and the file itself unless `dir/`).
    let last = if dir_only {
        parts.len() - 1
    } else {
        parts.len()
    };
    (0..last).any(|i| {
        if anchored {
            re.is_match(&parts[..=i].join("/"))
        } else {
            re.is_match(parts[i])
        }
    })
}

/// Reads the `.py` files under `dirs`.
pub fn read_dags(root: &Path, dirs: &[PathBuf], dialect: SqlDialect) -> Dags {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut problems = Vec::new();
    let mut ignored = Vec::new();
    for d in dirs {
        let found = walk(root, d, &[".py"]);
        let mut ignores = Ignores::default();
        for f in found.files {
            match ignores.verdict(d, &f) {
                Some(Ignore::Both) => {}
                Some(Ignore::One(why)) => {
                    ignored.push(Diagnostic::warning(
                        "airflow-ignore",
                        Some(relative(root, &f)),
                        0,
                        0,
                        why,
                    ));
                    files.push(f);
                }
                None => files.push(f),
            }
        }
        problems.extend(found.problems);
    }
    // On threads with stacks for the deepest SQL template (jinja/guard.rs).
    let results: Vec<(Vec<Dag>, Vec<Diagnostic>)> =
        crate::ingest::dbt::jinja::guard::on_render_threads(|| {
            files
                .par_iter()
                .map(|path| {
                    let file = relative(root, path);
                    match crate::input::read_text(path) {
                        Ok(text) => {
                            let (mut dags, mut warnings) = parse::parse_file(
                                &text,
                                &file,
                                path.parent().unwrap_or(root),
                                root,
                                dialect,
                            );
                            for dag in &mut dags {
                                for task in &mut dag.tasks {
                                    if let Some(sql) = &task.sql {
                                        let lineage = script_lineage(sql, dialect);
                                        warnings.extend(unparsed(
                                            &file,
                                            &dag.dag_id,
                                            task,
                                            &lineage,
                                        ));
                                        warnings.extend(unnamed(
                                            &file,
                                            &dag.dag_id,
                                            task,
                                            &lineage,
                                        ));
                                        warnings.extend(hidden(&file, &dag.dag_id, task, &lineage));
                                        let declared =
                                            !task.reads.is_empty() || !task.writes.is_empty();
                                        let feeds = lineage.feeds();
                                        task.reads.extend(lineage.job_reads(&feeds));
                                        task.writes.extend(lineage.filled_targets());
                                        // Declared inlets and outlets feed all.
                                        if !declared {
                                            task.feeds = Some(feeds);
                                        }
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
                .collect()
        });
    problems.extend(ignored);
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
    link_dags(&mut out.dags);
    out
}

/// What a task's SQL loses by statements that do not parse: an error when
/// its tables are then missing from the graph (an impact read from it
/// would be short), a warning when the statement names no table or the
/// task declares its inlets or outlets.
fn unparsed(
    file: &str,
    dag_id: &str,
    task: &crate::project::Task,
    lineage: &crate::sql::ScriptLineage,
) -> Vec<Diagnostic> {
    lineage
        .errors
        .iter()
        .map(|e| {
            let declared = !task.reads.is_empty() || !task.writes.is_empty();
            let (code, loses) = if lineage.tableless.contains(&e.statement) {
                ("unparsed-statement", "it names no table, so no lineage is lost")
            } else if declared {
                ("unparsed-statement", "the task's declared inlets and outlets are used")
            } else {
                ("parse-error", "the tables it names are not in the graph")
            };
            let message = format!(
                "task `{}` of DAG `{dag_id}`: statement {} of its SQL does not parse (line {} column {} of the SQL: {}); {loses}. Fix the SQL, or declare the task's inlets and outlets",
                task.task_id, e.statement, e.line, e.column, e.message
            );
            let file = Some(file.to_string());
            if code == "parse-error" {
                Diagnostic::error(code, file, task.line, 0, message)
            } else {
                Diagnostic::warning(code, file, task.line, 0, message)
            }
        })
        .collect()
}

/// A task's SQL running a routine whose tables ripple cannot see (`CALL
/// p()`): a warning unless the task declares its inlets or outlets.
fn hidden(
    file: &str,
    dag_id: &str,
    task: &crate::project::Task,
    lineage: &crate::sql::ScriptLineage,
) -> Vec<Diagnostic> {
    if !task.reads.is_empty() || !task.writes.is_empty() {
        return Vec::new();
    }
    lineage.hidden_routines()
        .map(|(s, routine)| {
            Diagnostic::warning(
                "hidden-tables",
                Some(file.to_string()),
                task.line,
                0,
                format!(
                    "task `{}` of DAG `{dag_id}`: statement {} of its SQL runs `{routine}`, whose tables ripple cannot see: what it reads and writes is not in the graph, so an impact through it may be short; declare the task's inlets and outlets",
                    task.task_id, s.index
                ),
            )
        })
        .collect()
}

/// What a task's SQL loses by naming a table through a value only a
/// running Airflow has (`insert into {{ var.value.target }}`): an error
/// when a table it writes has no name ripple knows (what reads that table
/// is then not downstream of anything, and impacts would be short), a
/// warning when only a read does; none when the task declares outlets.
fn unnamed(
    file: &str,
    dag_id: &str,
    task: &crate::project::Task,
    lineage: &crate::sql::ScriptLineage,
) -> Option<Diagnostic> {
    let unknown = |t: &&String| t.contains(crate::project::UNKNOWN_PLACEHOLDER);
    let writes: Vec<&String> = lineage.targets.iter().filter(unknown).collect();
    let reads: Vec<&String> = lineage.sources.iter().filter(unknown).collect();
    if writes.is_empty() && reads.is_empty() || !task.writes.is_empty() {
        return None;
    }
    let what = if writes.is_empty() { "reads" } else { "writes" };
    let message = format!(
        "task `{}` of DAG `{dag_id}` {what} a table named through a value only a running Airflow has (a Variable, XCom, a connection, an unknown macro), so ripple cannot tell which: {}. Put the name in `params` or the SQL, or declare the task's inlets and outlets",
        task.task_id,
        writes
            .iter()
            .chain(&reads)
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let file = Some(file.to_string());
    Some(if writes.is_empty() {
        Diagnostic::warning("unknown-table", file, task.line, 0, message)
    } else {
        Diagnostic::error("unknown-table", file, task.line, 0, message)
    })
}

/// Each DAG's [`Dag::upstream_dags`], across files: producers of the
/// datasets its schedule waits for (their declared outlets: only those
/// emit dataset events), the tasks its sensors wait for, markers naming
/// its tasks, and the tasks that trigger it.
fn link_dags(dags: &mut [Dag]) {
    let mut producers: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    let mut into: BTreeMap<String, Vec<DagEdge>> = BTreeMap::new();
    for d in dags.iter() {
        for t in &d.tasks {
            for o in &t.outlets {
                producers
                    .entry(o.as_str())
                    .or_default()
                    .push((&d.dag_id, &t.task_id));
            }
            for (other, task) in t.upstream.iter().filter_map(|u| u.split_once(':')) {
                into.entry(d.dag_id.clone()).or_default().push(DagEdge {
                    dag_id: other.to_string(),
                    task_id: task.to_string(),
                    via: EdgeKind::Sensor,
                    task: t.task_id.clone(),
                    dataset: String::new(),
                });
            }
            for (other, task) in t.marks.iter().filter_map(|u| u.split_once(':')) {
                into.entry(other.to_string()).or_default().push(DagEdge {
                    dag_id: d.dag_id.clone(),
                    task_id: t.task_id.clone(),
                    via: EdgeKind::Marker,
                    task: task.to_string(),
                    dataset: String::new(),
                });
            }
            for other in &t.triggers {
                into.entry(other.clone()).or_default().push(DagEdge {
                    dag_id: d.dag_id.clone(),
                    task_id: t.task_id.clone(),
                    via: EdgeKind::Trigger,
                    task: String::new(),
                    dataset: String::new(),
                });
            }
        }
    }
    for d in dags.iter() {
        for u in &d.schedule_datasets {
            for &(dag, task) in producers.get(u.as_str()).into_iter().flatten() {
                if dag != d.dag_id {
                    into.entry(d.dag_id.clone()).or_default().push(DagEdge {
                        dag_id: dag.to_string(),
                        task_id: task.to_string(),
                        via: EdgeKind::Dataset,
                        task: String::new(),
                        dataset: u.clone(),
                    });
                }
            }
        }
    }
    for d in dags.iter_mut() {
        if let Some(edges) = into.get(&d.dag_id) {
            d.upstream_dags = edges.clone();
            d.upstream_dags.sort();
            d.upstream_dags.dedup();
        }
    }
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
                    sql: t.sql.clone().map(Into::into),
                    airflow: Some(Box::new(AirflowTask {
                        dag_id: dag.dag_id.clone(),
                        task_id: t.task_id.clone(),
                        template: t.template.clone(),
                    })),
                    built_by: None,
                    needs_warehouse: Vec::new(),
                    from_manifest: Default::default(),
                });
            }
        }
        jobs
    }

    /// Task ids used twice in one DAG, dependencies on unknown tasks, and
    /// cycles in task order.
    pub fn check(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let dag_ids: std::collections::BTreeSet<&str> =
            self.dags.iter().map(|d| d.dag_id.as_str()).collect();
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
            for t in &dag.tasks {
                let named: std::collections::BTreeSet<&str> = t
                    .upstream
                    .iter()
                    .chain(&t.marks)
                    .filter_map(|u| u.split_once(':').map(|(d, _)| d))
                    .chain(t.triggers.iter().map(String::as_str))
                    .collect();
                for other in named {
                    if !dag_ids.contains(other) {
                        out.push(Diagnostic::warning(
                            "airflow-unknown-dag",
                            Some(dag.file.clone()),
                            t.line,
                            0,
                            format!("`{}` names DAG `{other}`, which no DAG file ripple reads declares; the cross-DAG edge leads nowhere (add its folder to `dags:` in ripple.yml)", t.task_id),
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
