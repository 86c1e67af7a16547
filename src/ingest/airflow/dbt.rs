//! dbt inside Airflow: which Airflow task builds each dbt node. A
//! BashOperator running `dbt run|build --select ...` (or a cosmos
//! `Dbt*Operator`) builds what it selects; an astronomer-cosmos DbtDag /
//! DbtTaskGroup is one task per node, named as cosmos names them, which
//! replace the task that stood for the group. Each dbt job then carries its
//! Airflow task (`Job::built_by`), so the Airflow executors target it.
//!
//! Cosmos's names (its `airflow/graph.py`): a node's task is
//! `<name>_<suffix>`, the suffix `run` for a model, `seed`, `snapshot`, or
//! `build` for all under `TestBehavior.BUILD`; under the default
//! `AFTER_EACH`, a tested node is a task group `<name>` holding `<suffix>`
//! and `test`. Inside a DbtTaskGroup every id takes the group's prefix.

use std::collections::{BTreeMap, BTreeSet};

use petgraph::Direction;

use crate::graph::{LineageGraph, Selector};
use crate::project::{AirflowTask, DatasetKind, DbtRun, Diagnostic, Project, Task};

/// Links the dbt nodes of `project` to the Airflow tasks that build them.
pub(crate) fn link(project: &mut Project) {
    let runs_dbt = |t: &Task| t.dbt.is_some();
    if !project.dags.iter().any(|d| d.tasks.iter().any(runs_dbt)) {
        return;
    }
    let dbt_jobs: Vec<_> = project
        .jobs
        .iter()
        .filter(|j| j.kind.is_dbt())
        .cloned()
        .collect();
    let mut warnings = Vec::new();
    if dbt_jobs.is_empty() {
        for d in &project.dags {
            for t in d.tasks.iter().filter(|t| runs_dbt(t)) {
                warnings.push(warning(
                    &d.file,
                    t.line,
                    format!("`{}` runs dbt, but this project has no dbt project (dbt_project.yml) or manifest ripple reads: which task builds which model is not known; read the DAGs and the dbt project as one project", t.task_id),
                ));
            }
        }
        project.diagnostics.extend(warnings);
        return;
    }
    // Selection needs the dbt graph only: build it alone.
    let g = LineageGraph::build(Project {
        datasets: project.datasets.clone(),
        jobs: dbt_jobs,
        ..Project::default()
    });
    // dbt node id → (dag_id, task_id) of the first task building it.
    let mut builder: BTreeMap<String, (String, String)> = BTreeMap::new();
    for dag in &mut project.dags {
        let mut i = 0;
        while i < dag.tasks.len() {
            let Some(run) = dag.tasks[i].dbt.clone() else {
                i += 1;
                continue;
            };
            let (file, line, id) = (
                dag.file.clone(),
                dag.tasks[i].line,
                dag.tasks[i].task_id.clone(),
            );
            // `--vars` (a `var()` may choose another source), another target
            // or profile: the project as this task renders it is not the
            // one read (round 26: `--vars '{use_v2: true}'`, silently).
            let target = &project.config.target.name;
            let flags: Vec<String> = run
                .flags
                .iter()
                .filter(|(f, v)| !(matches!(f.as_str(), "--target" | "-t") && v == target))
                .map(|(f, v)| format!("`{f} {v}`"))
                .collect();
            if !flags.is_empty() {
                warnings.push(warning(
                    &file,
                    line,
                    format!("`{id}` runs dbt with {}, which ripple does not apply: it reads the dbt project with ripple.yml's `vars:` and `target:` (`{target}`), so what this task builds may read other tables than shown; set the same in ripple.yml", flags.join(", ")),
                ));
            }
            let nodes = select(&g, &run, &mut |m| {
                warnings.push(warning(&file, line, format!("`{id}`: {m}")))
            });
            if nodes.is_empty() {
                warnings.push(warning(
                    &file,
                    line,
                    format!("`{id}` selects no dbt model of this project"),
                ));
            }
            let Some(cosmos) = &run.cosmos else {
                for n in &nodes {
                    claim(
                        &mut builder,
                        &mut warnings,
                        n,
                        (&dag.dag_id, &id),
                        (&file, line),
                    );
                }
                if let Some(r) = dag.tasks[i].dbt.as_mut() {
                    r.nodes = nodes;
                }
                i += 1;
                continue;
            };
            // The cosmos tasks, by id, replace the stand-in.
            let stand_in = dag.tasks.remove(i);
            let tested_group = |n: &str| {
                cosmos.test_behavior == "after_each" && g.dataset(n).is_some_and(|d| d.tests)
            };
            let suffix = |n: &str| match (cosmos.test_behavior.as_str(), kind(&g, n)) {
                ("build", _) => "build",
                (_, Some(DatasetKind::Seed)) => "seed",
                (_, Some(DatasetKind::Snapshot)) => "snapshot",
                _ => "run",
            };
            let name = |n: &str| g.dataset(n).map_or(n.to_string(), |d| d.name.clone());
            let run_id = |n: &str| match tested_group(n) {
                true => format!("{}{}.{}", cosmos.prefix, name(n), suffix(n)),
                false => format!("{}{}_{}", cosmos.prefix, name(n), suffix(n)),
            };
            let last_id = |n: &str| match tested_group(n) {
                true => format!("{}{}.test", cosmos.prefix, name(n)),
                false => run_id(n),
            };
            let selected: BTreeSet<&str> = nodes.iter().map(String::as_str).collect();
            let parents = |n: &str| -> Vec<&str> {
                let mut out: Vec<&str> = g
                    .index
                    .get(n)
                    .map(|&ix| {
                        g.graph
                            .neighbors_directed(ix, Direction::Incoming)
                            .map(|p| g.graph[p].id.as_str())
                            .filter(|p| selected.contains(p))
                            .collect()
                    })
                    .unwrap_or_default();
                out.sort_unstable();
                out.dedup();
                out
            };
            let mut made = Vec::new();
            let mut followed = BTreeSet::new();
            for n in &nodes {
                let ups = parents(n);
                followed.extend(ups.iter().copied());
                let upstream: Vec<String> = match ups.is_empty() {
                    true => stand_in.upstream.clone(),
                    false => ups.iter().map(|p| last_id(p)).collect(),
                };
                let task = |task_id: String, command: &str, upstream: Vec<String>| Task {
                    task_id,
                    operator: format!("cosmos:{command}"),
                    upstream,
                    dbt: Some(Box::new(DbtRun {
                        command: command.to_string(),
                        select: vec![name(n)],
                        exclude: Vec::new(),
                        cosmos: Some(cosmos.clone()),
                        nodes: vec![n.clone()],
                        flags: Vec::new(),
                    })),
                    ..stand_in.clone()
                };
                made.push(task(run_id(n), suffix(n), upstream));
                if tested_group(n) {
                    made.push(task(last_id(n), "test", vec![run_id(n)]));
                }
                claim(
                    &mut builder,
                    &mut warnings,
                    n,
                    (&dag.dag_id, &run_id(n)),
                    (&file, line),
                );
            }
            let leaves: Vec<String> = nodes
                .iter()
                .filter(|n| !followed.contains(n.as_str()))
                .map(|n| last_id(n))
                .collect();
            made.sort_by(|a, b| a.task_id.cmp(&b.task_id));
            let count = made.len();
            dag.tasks.splice(i..i, made);
            // What ran after the group runs after its last tasks.
            for t in &mut dag.tasks {
                if let Some(at) = t.upstream.iter().position(|u| *u == stand_in.task_id) {
                    t.upstream.splice(at..=at, leaves.iter().cloned());
                }
            }
            i += count;
        }
    }
    for job in &mut project.jobs {
        if let Some((dag_id, task_id)) = builder.get(&job.id)
            && job.kind.is_dbt()
        {
            job.built_by = Some(Box::new(AirflowTask {
                dag_id: dag_id.clone(),
                task_id: task_id.clone(),
                template: None,
            }));
        }
    }
    project.diagnostics.extend(warnings);
}

/// The nodes `run` builds, sorted by id: its selectors' union less its
/// exclusions (no selector: every node), of the kinds its command builds.
fn select(g: &LineageGraph, run: &DbtRun, warn: &mut dyn FnMut(String)) -> Vec<String> {
    let mut pick = |selectors: &[String]| -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for s in selectors {
            match Selector::parse(s).and_then(|sel| sel.select(g)) {
                Ok(set) => out.extend(set.into_iter().map(|n| g.graph[n].id.clone())),
                Err(e) => warn(format!("{e}; that selector's models are not linked to it")),
            }
        }
        out
    };
    let chosen: BTreeSet<String> = match run.select.is_empty() {
        true => g.graph.node_weights().map(|d| d.id.clone()).collect(),
        false => pick(&run.select),
    };
    let excluded = pick(&run.exclude);
    let builds = |k: DatasetKind| match run.command.as_str() {
        "run" => k == DatasetKind::Model,
        "seed" => k == DatasetKind::Seed,
        "snapshot" => k == DatasetKind::Snapshot,
        _ => matches!(
            k,
            DatasetKind::Model | DatasetKind::Seed | DatasetKind::Snapshot
        ),
    };
    chosen
        .into_iter()
        .filter(|n| !excluded.contains(n) && kind(g, n).is_some_and(builds))
        .collect()
}

fn kind(g: &LineageGraph, id: &str) -> Option<DatasetKind> {
    g.dataset(id).map(|d| d.kind)
}

/// Records `task` as the builder of `node`, unless another task is first.
fn claim(
    builder: &mut BTreeMap<String, (String, String)>,
    warnings: &mut Vec<Diagnostic>,
    node: &str,
    (dag, task): (&str, &str),
    (file, line): (&str, u32),
) {
    match builder.get(node) {
        Some((d, t)) if (d.as_str(), t.as_str()) != (dag, task) => warnings.push(warning(
            file,
            line,
            format!("dbt node `{node}` is built by `{d}:{t}` and by `{dag}:{task}`; a backfill's Airflow commands run the first (by DAG id)"),
        )),
        Some(_) => {}
        None => {
            builder.insert(node.to_string(), (dag.to_string(), task.to_string()));
        }
    }
}

fn warning(file: &str, line: u32, message: String) -> Diagnostic {
    Diagnostic::warning("airflow-dbt", Some(file.to_string()), line, 0, message)
}
