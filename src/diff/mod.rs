//! `ripple diff`: two versions of a project compared model by model. Each
//! job's SQL is compared by meaning (`classify.rs`), dataset settings key
//! by key, and each change carries the downstream datasets it reaches.
//!
//! Input is two lineage graphs (base and head); reading them out of git is
//! [`crate::ingest::revision`]'s job, printing the report [`crate::emit`]'s.

mod classify;
mod config;
mod revisions;

pub use revisions::{DiffError, Sides, diff_sides};

use std::collections::{BTreeMap, BTreeSet, HashMap};

use petgraph::graph::NodeIndex;
use serde::Serialize;

use crate::graph::LineageGraph;
use crate::project::{Job, JobKind, Severity};

use crate::graph::{Reach, Semantics, column_consumers};
use classify::{Verdict, compare_scripts};

/// The kind of a change, most severe first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Rows or shape changed: an output column removed or renamed, a filter,
    /// join, grouping or the set of sources changed. Every descendant is
    /// affected.
    Breaking,
    /// The model or job is gone; what read it is affected.
    Removed,
    /// One side could not be read (render or parse error): never assumed
    /// to be harmless.
    CouldNotCompare,
    /// Existing columns compute something else; only what reads them is
    /// affected.
    Column,
    /// Settings changed (materialization, unique key, grain, time mapping).
    Config,
    /// Only output columns were added (or reordered).
    NonBreaking,
    /// A new model or job.
    Added,
    /// Formatting, comments, case or names inside the query only.
    NoOp,
}

impl ChangeKind {
    /// Every kind, most severe first.
    pub const ALL: [ChangeKind; 8] = [
        ChangeKind::Breaking,
        ChangeKind::Removed,
        ChangeKind::CouldNotCompare,
        ChangeKind::Column,
        ChangeKind::Config,
        ChangeKind::NonBreaking,
        ChangeKind::Added,
        ChangeKind::NoOp,
    ];

    /// The word used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Breaking => "breaking",
            ChangeKind::Removed => "removed",
            ChangeKind::CouldNotCompare => "could-not-compare",
            ChangeKind::Column => "column",
            ChangeKind::Config => "config",
            ChangeKind::NonBreaking => "non-breaking",
            ChangeKind::Added => "added",
            ChangeKind::NoOp => "no-op",
        }
    }

    /// Position in [`ChangeKind::ALL`]: lower is more severe.
    pub(crate) fn rank(self) -> usize {
        self as usize
    }

    /// Whether `--fail-on breaking` fails on it: the kinds that can break
    /// what reads the model, including what could not be checked.
    pub fn is_breaking(self) -> bool {
        matches!(
            self,
            ChangeKind::Breaking | ChangeKind::Removed | ChangeKind::CouldNotCompare
        )
    }
}

/// Which changes make `ripple diff` exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Breaking changes, removed models, and what could not be compared.
    Breaking,
    /// Any change that is not formatting only.
    Any,
    /// Never fail.
    None,
}

impl FailOn {
    /// Whether a change of `kind` fails the check.
    pub fn fails(self, kind: ChangeKind) -> bool {
        match self {
            FailOn::Breaking => kind.is_breaking(),
            FailOn::Any => kind != ChangeKind::NoOp,
            FailOn::None => false,
        }
    }
}

/// One changed model or job.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Change {
    /// The model's node id (`model.orders`) or the job's id
    /// (`sql:jobs/daily.sql`, `airflow:dag.task`).
    pub model: String,
    /// What kind of change.
    pub kind: ChangeKind,
    /// The columns concerned: `removed: a`, `a → b`, `added: c`, a changed
    /// column's name, or a setting as `key: old → new`.
    pub columns: Vec<String>,
    /// Datasets affected downstream, by node id, sorted.
    pub downstream: Vec<String>,
    /// Those of `downstream` reached through a `*` whose columns are not
    /// known: possibly affected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub possibly: Vec<String>,
    /// The file (relative to the project root).
    pub file: String,
    /// 1-based line of the change in that file (1 when not known better).
    pub line: u64,
    /// Why, in a sentence.
    pub reason: String,
    /// The datasets the model or job writes, by node id.
    pub writes: Vec<String>,
    /// A `ripple plan` command to restate the changed data, when the model
    /// is partitioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// The result of comparing two versions of a project.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DiffReport {
    /// Changes, most severe first, then by model.
    pub changes: Vec<Change>,
    /// Lineage edges between the datasets the changes name (changed and
    /// downstream), by node id, for diagrams.
    #[serde(skip)]
    pub edges: Vec<(String, String)>,
}

impl DiffReport {
    /// Changes of `kind`.
    pub fn count(&self, kind: ChangeKind) -> usize {
        self.changes.iter().filter(|c| c.kind == kind).count()
    }

    /// Every downstream dataset of every change, once.
    pub fn downstream(&self) -> BTreeSet<&str> {
        self.changes
            .iter()
            .flat_map(|c| c.downstream.iter().map(String::as_str))
            .collect()
    }
}

/// Compares `base` with `head`.
pub fn diff(base: &LineageGraph, head: &LineageGraph) -> DiffReport {
    diff_with_seeds(base, head, &BTreeSet::new())
}

/// [`diff`], with the seeds (dataset ids) whose files differ between the
/// sides: their rows changed, which their graphs cannot show.
pub fn diff_with_seeds(
    base: &LineageGraph,
    head: &LineageGraph,
    changed_seeds: &BTreeSet<String>,
) -> DiffReport {
    let mut base_sem = Semantics::new(base).with_renames(renamed(base, head));
    let mut head_sem = Semantics::new(head);
    let ids: BTreeSet<&String> = base.jobs.keys().chain(head.jobs.keys()).collect();
    let macros = changed_macros(base, head);
    let (base_errors, head_errors) = (unreadable(base), unreadable(head));
    let mut changes = Vec::new();
    let mut edges = BTreeSet::new();
    for id in ids {
        let (b, h) = (base.jobs.get(id), head.jobs.get(id));
        let (verdict, on_head) = match (b, h) {
            (Some(b), Some(h)) => {
                let same = base_sem.sql(id).as_deref() == h.sql.as_deref();
                let errors = (
                    base_errors.get(b.file.as_str()),
                    head_errors.get(h.file.as_str()),
                );
                // A macro ripple cannot render (a package not installed)
                // prints a placeholder: its arguments may change, or it may
                // render on one side only, and the SQL not show it.
                let placeholder = |s: Option<&str>| {
                    s.is_some_and(|s| s.contains(crate::project::UNKNOWN_PLACEHOLDER))
                };
                let hidden =
                    placeholder(base_sem.sql(id).as_deref()) || placeholder(h.sql.as_deref());
                // Read once, and only where a guard needs it: an unchanged
                // job reads its head file once here, not both sides' files.
                let changed = std::cell::OnceCell::new();
                let file_changed = || {
                    *changed.get_or_init(|| {
                        let read = |g: &LineageGraph, f: &str| std::fs::read(g.root.join(f)).ok();
                        read(base, &b.file) != read(head, &h.file)
                    })
                };
                // `{% if is_incremental() %}` is what production runs; the
                // comparison renders the full refresh.
                // The head file's text, read once for the guards below.
                let head_text = std::cell::OnceCell::new();
                let text = || {
                    head_text
                        .get_or_init(|| std::fs::read_to_string(head.root.join(&h.file)).ok())
                        .as_deref()
                };
                let incremental = || {
                    text().is_some_and(|t| t.contains("is_incremental") || t.contains("execute"))
                };
                // A template's `{% if %}` the run ripple renders does not take:
                // the SQL other run dates get.
                let branch_changed = || {
                    fn template(j: &Job) -> Option<&String> {
                        j.airflow.as_ref()?.template.as_ref().map(|t| &t.text)
                    }
                    match (template(b), template(h)) {
                        (Some(x), Some(y)) => x != y && (x.contains("{%") || y.contains("{%")),
                        _ => false,
                    }
                };
                // A dbt model's `{% if %}` changed where the render took
                // the other branch (`env_var('DEPLOY_ENV', 'dev') ==
                // 'prod'`, `target.name`): production may take it (round 29).
                let dbt_branch_changed = || {
                    b.kind == crate::project::JobKind::Dbt
                        && file_changed()
                        && std::fs::read_to_string(base.root.join(&b.file))
                            .ok()
                            .is_some_and(|old| {
                                crate::ingest::dbt_branch_text(&old)
                                    != crate::ingest::dbt_branch_text(text().unwrap_or_default())
                            })
                };
                // No SQL on either side to compare (a Python model).
                let no_sql = b.sql.is_none() && h.sql.is_none() && h.file.ends_with(".py");
                // A changed macro whose change the rendered SQL cannot show:
                // one the model calls from a hook, or one branching on
                // `execute` (false when ripple renders, true when dbt runs).
                let macro_found = std::cell::OnceCell::new();
                let hidden_macro = || {
                    macro_found
                        .get_or_init(|| macros.hidden_in(head, h, text().unwrap_or_default()))
                        .as_deref()
                };
                let verdict = match errors {
                    (None, None) if same && hidden_macro().is_some() => Verdict::new(
                        ChangeKind::CouldNotCompare,
                        format!(
                            "the macro `{}` it calls changed where its rendered SQL cannot show it (a hook, or an `{{% if execute %}}` branch, which dbt runs and ripple does not render)",
                            hidden_macro().unwrap_or_default()
                        ),
                        1,
                    ),
                    (None, None) if same && branch_changed() => Verdict::new(
                        ChangeKind::CouldNotCompare,
                        "its SQL template changed where it branches (`{% if %}`) but renders the same for the run ripple reads: the SQL of other run dates may have changed",
                        1,
                    ),
                    (None, None) if same && no_sql && file_changed() => Verdict::new(
                        ChangeKind::CouldNotCompare,
                        "its file changed and it has no SQL ripple compares (a Python model): what it computes may have changed",
                        1,
                    ),
                    (None, None) if same && incremental() && file_changed() => Verdict::new(
                        ChangeKind::CouldNotCompare,
                        "its file changed but its SQL reads the same: the change may be in its `{% if is_incremental() %}` or `{% if execute %}` branch, which production runs and ripple does not render for the comparison",
                        1,
                    ),
                    (None, None) if same && dbt_branch_changed() => Verdict::new(
                        ChangeKind::CouldNotCompare,
                        "its file changed inside an `{% if %}` and its SQL reads the same for the branch ripple renders (env_var defaults, ripple.yml's target and vars): the branch production takes may have changed",
                        1,
                    ),
                    (None, None) if same && !(hidden && file_changed()) => continue,
                    // Failing the same way, it may still have changed (a
                    // template value its render lacks on both sides).
                    (Some(x), Some(y)) if same && x == y && !file_changed() => continue,
                    (None, None) if hidden && same => Verdict::new(
                        ChangeKind::CouldNotCompare,
                        "its file changed, but a macro in it does not render here (a package not installed?): its SQL reads the same, though what the macro renders to may not be",
                        1,
                    ),
                    (None, None) if hidden && !file_changed() => Verdict::new(
                        ChangeKind::CouldNotCompare,
                        "the same file renders differently on the two sides: a macro in it renders on one side only (a package installed on one side?)",
                        1,
                    ),
                    (None, None) => match (base_sem.job(id), head_sem.job(id)) {
                        (Some(bs), Some(hs)) => {
                            let v = compare_scripts(bs, hs);
                            if hidden && v.kind != ChangeKind::Breaking {
                                Verdict::new(
                                    ChangeKind::CouldNotCompare,
                                    "it changed, and a macro in it does not render here (a package not installed?): what the macro renders to may have changed too",
                                    v.line,
                                )
                            } else {
                                v
                            }
                        }
                        _ => Verdict::new(ChangeKind::Breaking, "its SQL was added or removed", 1),
                    },
                    (x, y) => {
                        let why = x.map(|w| format!("base: {w}"));
                        let why = why.or(y.map(|w| format!("head: {w}")));
                        Verdict::new(ChangeKind::CouldNotCompare, why.unwrap_or_default(), 1)
                    }
                };
                (verdict, true)
            }
            // Gone from a file that does not read on the other side (a DAG
            // file with a syntax error): unknown, not added or removed.
            (None, Some(h)) => match unread_source(&base_errors, base, h) {
                Some(why) => (
                    Verdict::new(ChangeKind::CouldNotCompare, format!("base: {why}"), 1),
                    true,
                ),
                None => (Verdict::new(ChangeKind::Added, "new", 1), true),
            },
            (Some(b), None) => match unread_source(&head_errors, head, b) {
                Some(why) => (
                    Verdict::new(ChangeKind::CouldNotCompare, format!("head: {why}"), 1),
                    false,
                ),
                None => (Verdict::new(ChangeKind::Removed, "deleted", 1), false),
            },
            (None, None) => continue,
        };
        let (g, sem) = match on_head {
            true => (head, &mut head_sem),
            false => (base, &mut base_sem),
        };
        let job = &g.jobs[id];
        let writes: Vec<NodeIndex> = sem.written(id).to_vec();
        let mut reach = reach(sem, &verdict, &writes);
        // A job that no longer writes a table it wrote (`raw` → `raw_v2`):
        // what reads the old table stops being fed, whatever its verdict
        // says of the rows it now writes elsewhere.
        if on_head && b.is_some() {
            let lost: Vec<NodeIndex> = base_sem
                .written(id)
                .iter()
                .filter_map(|&n| head.index.get(&base.graph[n].id).copied())
                .filter(|n| !writes.contains(n))
                .collect();
            if !lost.is_empty() {
                let below = Reach::all_below(head, &lost);
                reach.affected.extend(lost.iter().copied());
                reach.affected.extend(below.affected);
                for n in &lost {
                    reach.columns.insert(*n, None);
                }
            }
        }
        let line = match (job.airflow.as_ref(), b.zip(h)) {
            // Task SQL is inline or in a template: point at the task.
            (Some(_), _) => job.writes.iter().map(|r| r.line).min().unwrap_or(1).max(1) as u64,
            // The files, not the rendered SQL: Jinja blocks render to
            // fewer lines than they take.
            (None, Some((b, h))) => {
                let read =
                    |g: &LineageGraph, file: &str| std::fs::read_to_string(g.root.join(file)).ok();
                first_difference(
                    read(base, &b.file).as_deref(),
                    read(head, &h.file).as_deref(),
                )
                .or_else(|| first_difference(b.sql.as_deref(), h.sql.as_deref()))
                .unwrap_or(verdict.line)
                .max(1)
            }
            (None, None) => 1,
        };
        changes.push(change(g, id, &job.file, line, verdict, &writes, &reach));
        collect_edges(g, &writes, &reach, &mut edges);
    }
    // A file that read on neither side as a job (a model past the size
    // bound, a DAG file that does not parse) and does not fail the same
    // way on both: what it does is unknown (a 600 MB model deleted once
    // read as "no changes").
    let in_jobs: BTreeSet<&str> = base
        .jobs
        .values()
        .chain(head.jobs.values())
        .map(|j| j.file.as_str())
        .collect();
    let failing: BTreeSet<&str> = base_errors
        .keys()
        .chain(head_errors.keys())
        .copied()
        .collect();
    for file in failing {
        let (b, h) = (base_errors.get(file), head_errors.get(file));
        // A manifest's jobs say so themselves (`unread_source`).
        if in_jobs.contains(file) || b == h || file.ends_with(".json") {
            continue;
        }
        let why = match (b, h) {
            (Some(w), _) => format!("base: {w}"),
            (None, Some(w)) => format!("head: {w}"),
            (None, None) => continue,
        };
        let v = Verdict::new(ChangeKind::CouldNotCompare, why, 1);
        let g = if h.is_some() { head } else { base };
        changes.push(change(g, file, file, 1, v, &[], &Reach::default()));
    }
    // A seed (or source, snapshot) gone from the head — deleted or
    // disabled — is written by no job, yet what read it breaks: removed,
    // reaching what read it in the base (once "no changes", exit 0).
    for n in base.graph.node_indices() {
        let d = &base.graph[n];
        let unwritten = matches!(
            d.kind,
            crate::project::DatasetKind::Seed
                | crate::project::DatasetKind::Source
                | crate::project::DatasetKind::Snapshot
        ) && base.writer(&d.id).is_none();
        if !unwritten || head.index.contains_key(&d.id) {
            continue;
        }
        let writes = [n];
        let reach = Reach::all_below(base, &writes);
        let v = Verdict::new(ChangeKind::Removed, "deleted or disabled", 1);
        let file = d.file.clone().unwrap_or_default();
        let line = u64::from(d.line.unwrap_or(1).max(1));
        changes.push(change(base, &d.id, &file, line, v, &writes, &reach));
        collect_edges(base, &writes, &reach, &mut edges);
    }
    // A seed whose file differs: its rows did, and all below it.
    for id in changed_seeds {
        let Some(&n) = head.index.get(id) else {
            continue;
        };
        let d = &head.graph[n];
        let writes = [n];
        let reach = Reach::all_below(head, &writes);
        let v = Verdict::new(ChangeKind::Breaking, "its rows changed (its file)", 1);
        let file = d.file.clone().unwrap_or_default();
        changes.push(change(head, id, &file, 1, v, &writes, &reach));
        collect_edges(head, &writes, &reach, &mut edges);
    }
    for (id, verdicts) in config::compare(base, head) {
        let n = head.index[&id];
        let d = &head.graph[n];
        // Point at where the settings are written.
        let (file, line) = match (&d.file, verdicts.iter().all(|v| v.in_ripple_yml)) {
            (Some(file), false) => (file.clone(), u64::from(d.line.unwrap_or(1).max(1))),
            _ => (crate::config::CONFIG_FILE.to_string(), 1),
        };
        let c = config_change(head, &id, (&file, line), &[n], verdicts);
        collect_edges(head, &c.1, &c.2, &mut edges);
        changes.push(c.0);
    }
    // dbt's `on-run-start` / `on-run-end` run SQL around every run, which
    // may change any table (a `delete` emptied a model while diff said "no
    // changes"): what they change is unknown, so every model is reached.
    if let Some(why) = project_hooks_changed(base, head) {
        let writes: Vec<NodeIndex> = head
            .jobs
            .values()
            .filter(|j| j.kind.is_dbt())
            .flat_map(|j| head_sem.written(&j.id).to_vec())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut reach = Reach::all_below(head, &writes);
        reach.affected.extend(writes.iter().copied());
        let v = Verdict::new(ChangeKind::CouldNotCompare, why, 1);
        let file = "dbt_project.yml";
        changes.push(change(head, file, file, 1, v, &[], &reach));
        collect_edges(head, &[], &reach, &mut edges);
    }
    // A DAG's schedule, a task's upstream or connection: what lands changes
    // though no SQL did. The change reaches what its tasks write.
    for dc in config::compare_dags(base, head) {
        let mut writes: Vec<NodeIndex> = Vec::new();
        let mut id = format!("airflow:{}", dc.dag);
        for job in head.jobs.values() {
            let Some(a) = job.airflow.as_ref().or(job.built_by.as_ref()) else {
                continue;
            };
            if a.dag_id == dc.dag && dc.task.as_ref().is_none_or(|t| *t == a.task_id) {
                writes.extend(head_sem.written(&job.id).iter().copied());
            }
        }
        if let Some(t) = &dc.task {
            id = format!("{id}.{t}");
        }
        writes.sort();
        writes.dedup();
        let at = (dc.file.as_str(), u64::from(dc.line.max(1)));
        let c = config_change(head, &id, at, &writes, dc.changes);
        collect_edges(head, &c.1, &c.2, &mut edges);
        changes.push(c.0);
    }
    suggest_plans(head, &mut changes);
    changes.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| a.model.cmp(&b.model)));
    DiffReport {
        changes,
        edges: edges.into_iter().collect(),
    }
}

/// A config entry for `id`, with the datasets it writes and what it reaches:
/// all below them when a setting decides rows, nothing otherwise.
fn config_change(
    g: &LineageGraph,
    id: &str,
    (file, line): (&str, u64),
    writes: &[NodeIndex],
    verdicts: Vec<config::SettingChange>,
) -> (Change, Vec<NodeIndex>, Reach) {
    let rows_change = verdicts.iter().any(|v| v.changes_rows);
    let reach = match rows_change {
        true => Reach::all_below(g, writes),
        false => Reach::default(),
    };
    let reason = match rows_change {
        true => "settings that decide its rows changed",
        false => "settings changed",
    };
    let mut v = Verdict::new(ChangeKind::Config, reason, 1);
    v.columns = verdicts.into_iter().map(|v| v.text).collect();
    let c = change(g, id, file, line, v, writes, &reach);
    (c, writes.to_vec(), reach)
}

/// Why the dbt project's run hooks differ between the sides, if they do.
fn project_hooks_changed(base: &LineageGraph, head: &LineageGraph) -> Option<String> {
    let hooks = |g: &LineageGraph| -> Vec<(String, serde_json::Value)> {
        let Some(root) = &g.dbt_root else {
            return Vec::new();
        };
        let doc: serde_json::Value = serde_saphyr::from_str(&root.project_file).unwrap_or_default();
        ["on-run-start", "on-run-end", "on_run_start", "on_run_end"]
            .iter()
            .filter_map(|k| doc.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect()
    };
    let (b, h) = (hooks(base), hooks(head));
    if b == h {
        return None;
    }
    let keys: BTreeSet<&String> = b.iter().chain(&h).map(|(k, _)| k).collect();
    let keys: Vec<String> = keys.into_iter().map(|k| format!("`{k}`")).collect();
    Some(format!(
        "the project's {} hooks changed: they run SQL around every dbt run, which may change any table; what they change is not compared",
        keys.join(", ")
    ))
}

/// Macros of the dbt project whose files differ between the sides.
#[derive(Default)]
struct ChangedMacros {
    /// Each changed macro's name, and whether either side's body branches
    /// on `execute`.
    names: BTreeMap<String, bool>,
}

impl ChangedMacros {
    /// The changed macro `job` calls where its rendered SQL cannot show
    /// the change: named in a hook of its dataset, or branching on
    /// `execute` and named in its file's `text`.
    fn hidden_in(&self, g: &LineageGraph, job: &Job, text: &str) -> Option<String> {
        if self.names.is_empty() || !job.kind.is_dbt() {
            return None;
        }
        let hooks: String = g
            .dataset(&job.id)
            .map(|d| {
                crate::ingest::DBT_HOOK_KEYS
                    .iter()
                    .filter_map(|k| d.config.get(*k))
                    .map(|v| v.to_string())
                    .collect()
            })
            .unwrap_or_default();
        let calls = |hay: &str, name: &str| {
            hay.match_indices(name).any(|(i, _)| {
                let before = hay[..i].chars().next_back();
                let after = hay[i + name.len()..].trim_start().starts_with('(');
                after && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        };
        self.names
            .iter()
            .find(|(name, execute)| calls(&hooks, name) || (**execute && calls(text, name)))
            .map(|(name, _)| name.clone())
    }
}

/// The macros whose files differ between the two projects' macro folders.
fn changed_macros(base: &LineageGraph, head: &LineageGraph) -> ChangedMacros {
    let mut out = ChangedMacros::default();
    let Some(root) = head.dbt_root.as_ref().or(base.dbt_root.as_ref()) else {
        return out;
    };
    let files = |g: &LineageGraph| -> BTreeMap<std::path::PathBuf, Vec<u8>> {
        let mut found = BTreeMap::new();
        for dir in &root.macro_paths {
            let walked = crate::ingest::files::walk(&g.root, &g.root.join(dir), &[".sql"]);
            for f in walked.files {
                if let (Ok(rel), Ok(bytes)) = (f.strip_prefix(&g.root), std::fs::read(&f)) {
                    found.insert(rel.to_path_buf(), bytes);
                }
            }
        }
        found
    };
    let (b, h) = (files(base), files(head));
    let paths: BTreeSet<&std::path::PathBuf> = b.keys().chain(h.keys()).collect();
    for path in paths {
        let (x, y) = (b.get(path), h.get(path));
        if x == y {
            continue;
        }
        for text in [x, y].into_iter().flatten() {
            let text = String::from_utf8_lossy(text);
            for m in crate::ingest::dbt_macro_blocks(&text) {
                let execute = text[m.body_start..m.body_end].contains("execute");
                *out.names.entry(m.name).or_default() |= execute;
            }
        }
    }
    out
}

/// The first line (1-based) where two texts differ.
fn first_difference(a: Option<&str>, b: Option<&str>) -> Option<u64> {
    let (a, b) = (a?, b?);
    let mut lines = a.lines().zip(b.lines());
    let same = lines.position(|(x, y)| x != y);
    let n = same.unwrap_or_else(|| a.lines().count().min(b.lines().count()));
    Some(n as u64 + 1)
}

/// Datasets whose relation changed between the versions: (old, new).
fn renamed(base: &LineageGraph, head: &LineageGraph) -> Vec<(String, String)> {
    head.graph
        .node_weights()
        .filter_map(|h| {
            let b = base.dataset(&h.id)?;
            (b.relation != h.relation).then(|| (b.relation.clone(), h.relation.clone()))
        })
        .collect()
}

/// Why the other side may lack `job` without it being gone: its file did
/// not read there, or (for a job from a manifest) the manifest did not —
/// a manifest is build output, often not committed.
fn unread_source(
    errors: &HashMap<&str, String>,
    other: &LineageGraph,
    job: &Job,
) -> Option<String> {
    if let Some(why) = errors.get(job.file.as_str()) {
        return Some(why.clone());
    }
    if job.kind != JobKind::Manifest {
        return None;
    }
    other
        .diagnostics
        .iter()
        .find(|d| {
            let json = d.file.as_deref().is_some_and(|f| f.ends_with(".json"));
            d.code == "manifest-error" || (d.code == "read-error" && json)
        })
        .map(|d| format!("{}: {}", d.file.as_deref().unwrap_or("manifest"), d.message))
}

/// Files that could not be read (render, read or Python syntax errors),
/// with the first reason each.
fn unreadable(g: &LineageGraph) -> HashMap<&str, String> {
    let mut files = HashMap::new();
    for d in &g.diagnostics {
        let fatal = d.severity == Severity::Error
            && matches!(
                d.code,
                "render-error" | "read-error" | "python-syntax-error"
            );
        if let (true, Some(file)) = (fatal, d.file.as_deref()) {
            // A revision's copy is read from a scratch folder: its path in
            // a message is the project's own, so both sides compare.
            let root = format!("{}/", g.root.display());
            files.entry(file).or_insert_with(|| {
                let message = d.message.replace(&root, "");
                format!("{file}:{}:{}: {message}", d.line, d.column)
            });
        }
    }
    files
}

/// The datasets a change to the job writing `writes` reaches.
fn reach(sem: &mut Semantics, v: &Verdict, writes: &[NodeIndex]) -> Reach {
    match v.kind {
        ChangeKind::NoOp | ChangeKind::NonBreaking => Reach::default(),
        // One dataset written by one query: follow the changed columns.
        ChangeKind::Column if writes.len() == 1 && v.precise => {
            column_consumers(sem, writes[0], v.changed.clone())
        }
        _ => Reach::all_below(sem.g, writes),
    }
}

fn change(
    g: &LineageGraph,
    id: &str,
    file: &str,
    line: u64,
    v: Verdict,
    writes: &[NodeIndex],
    reach: &Reach,
) -> Change {
    let ids = |set: &BTreeSet<NodeIndex>| -> Vec<String> {
        let mut v: Vec<String> = set.iter().map(|&n| g.graph[n].id.clone()).collect();
        v.sort();
        v
    };
    let mut writes: Vec<String> = writes.iter().map(|&n| g.graph[n].id.clone()).collect();
    writes.sort();
    Change {
        model: id.to_string(),
        kind: v.kind,
        columns: v.columns,
        downstream: ids(&reach.affected),
        possibly: ids(&reach.possibly),
        file: file.to_string(),
        line,
        reason: v.reason,
        writes,
        plan: None,
    }
}

/// Edges among the changed datasets and those they reach.
fn collect_edges(
    g: &LineageGraph,
    writes: &[NodeIndex],
    reach: &Reach,
    edges: &mut BTreeSet<(String, String)>,
) {
    let shown: BTreeSet<NodeIndex> = writes
        .iter()
        .copied()
        .chain(reach.affected.iter().copied())
        .collect();
    for &n in &shown {
        for c in g.graph.neighbors_directed(n, petgraph::Direction::Outgoing) {
            if shown.contains(&c) {
                edges.insert((g.graph[n].id.clone(), g.graph[c].id.clone()));
            }
        }
    }
}

/// Adds a `ripple plan` command to changes of partitioned datasets whose
/// data must be restated.
fn suggest_plans(head: &LineageGraph, changes: &mut [Change]) {
    let restates = |c: &Change| {
        matches!(
            c.kind,
            ChangeKind::Breaking | ChangeKind::Column | ChangeKind::CouldNotCompare
        ) || (c.kind == ChangeKind::Config && !c.downstream.is_empty())
    };
    if !changes.iter().any(restates) {
        return;
    }
    // Grains come from the changed datasets' own facts and their upstreams'.
    let nodes: Vec<NodeIndex> = changes
        .iter()
        .filter(|c| restates(c))
        .flat_map(|c| c.writes.iter().filter_map(|w| head.index.get(w).copied()))
        .collect();
    let Ok(facts) = crate::impact::TimeFacts::build_for(head, &nodes) else {
        return;
    };
    let Some(order) = facts.order() else {
        return;
    };
    let model = facts.resolve(head, order, &HashMap::new());
    let grains: BTreeMap<&str, (crate::time::Grain, Option<crate::time::Hour>)> = model
        .datasets
        .iter()
        .map(|(&n, t)| (head.graph[n].id.as_str(), (t.grain, t.start)))
        .collect();
    for c in changes.iter_mut().filter(|c| restates(c)) {
        let partitioned = c.writes.iter().find_map(|w| match grains.get(w.as_str()) {
            Some(&(g, start)) if g != crate::time::Grain::None => Some((w.as_str(), g, start)),
            _ => None,
        });
        let Some((id, grain, start)) = partitioned else {
            continue;
        };
        let name = head
            .dataset(id)
            .map_or_else(|| id.to_string(), |d| d.name.clone());
        // The name quoted as one word: pasted into a shell, a name like
        // `x$(touch y)` must stay a name.
        let from = match start {
            Some(h) => crate::text::shell_word(&grain.key(h)),
            None => "<first day to restate>".to_string(),
        };
        c.plan = Some(format!(
            "ripple plan {} --from {from} --to <last day to restate>",
            crate::text::shell_word(&name)
        ));
    }
}
