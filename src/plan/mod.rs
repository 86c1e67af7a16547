//! The backfill plan, step one: tasks and their wavefront order.
//!
//! An impact set becomes one task per (dataset, batch): consecutive affected
//! partitions grouped by the per-grain batch size (`backfill.batch`), oldest
//! first; a dataset rebuilt whole is one task. Datasets no job writes
//! (sources, what was fixed by hand) are not recomputed: they are the plan's
//! assumed-correct inputs.
//!
//! A task depends exactly on the upstream tasks whose partitions overlap the
//! time it reads through the edge's mapping — not on whole upstream
//! datasets — so the first week of a child can run while its parent works
//! on the second.
//!
//! [`document`] turns tasks into the plan document (shadow writes and
//! reads, validations, swaps, rollback, executor commands); [`sql`] holds
//! the SQL it writes; [`schedule`] places tasks in time (`--start`,
//! windows, blackouts, caps); [`executors`] say how each task runs.
//! [`for_change`] is the whole of `ripple plan`.

mod document;
pub mod executors;
pub mod schedule;
pub mod sql;
pub mod table;

pub use document::{
    Check, DocTask, PlanDocument, ROW_COUNT_TOLERANCE, Setup, Swap, Validation, document,
};

use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::Serialize;

use crate::graph::LineageGraph;
use crate::impact::{Impact, TimeModel};
use crate::time::{Grain, Hour, TimeMapping, UNBOUNDED};

/// Partitions per batch when `backfill.batch` says nothing for a grain.
pub fn default_batch(grain: Grain) -> u64 {
    match grain {
        Grain::Hour => 24,
        Grain::Day => 7,
        Grain::Week => 4,
        Grain::Month | Grain::Year | Grain::None => 1,
    }
}

/// One unit of backfill work: a batch of one dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PlanTask {
    /// Stable, readable id: `orders_7d@2026-01-10..2026-01-16`, `dim@full`.
    pub id: String,
    /// The dataset's node id.
    pub dataset: String,
    /// First partition key (inclusive); `None` for a full rebuild.
    pub from: Option<String>,
    /// Last partition key (inclusive); `None` for a full rebuild.
    pub to: Option<String>,
    /// Rebuilt whole.
    pub full: bool,
    /// Partitions in the batch.
    pub partitions: u64,
    /// Ids of the tasks it must wait for.
    pub depends_on: Vec<String>,
    /// When it is scheduled to start (with `--start`; null otherwise).
    pub start: Option<String>,
    /// When it is expected to end (with `--start`; null otherwise).
    pub end: Option<String>,
    /// The time it covers, `[start, end)` in hours (whole history for a full
    /// rebuild).
    #[serde(skip)]
    pub span: (Hour, Hour),
    /// The partitions it restates, as `[start, end)` ranges: its batch, or
    /// every affected range when its job cannot take dates (run once).
    #[serde(skip)]
    pub ranges: Vec<(Hour, Hour)>,
    #[serde(skip)]
    node: NodeIndex,
}

/// A partition column configured for a dataset whose columns are known and
/// do not include it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misnamed {
    /// The dataset.
    pub dataset: String,
    /// The column configured.
    pub column: String,
    /// Where it is configured.
    pub evidence: String,
    /// The dataset's columns.
    pub columns: Vec<String>,
}

/// Why a plan cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// An affected dataset with no first partition.
    #[error(
        "`{0}` is affected back to the beginning of time; set its `start` in ripple.yml (or give --from) to bound the backfill"
    )]
    Unbounded(String),
    /// The time facts of the project do not hold together.
    #[error(transparent)]
    TimeModel(#[from] crate::impact::TimeModelError),
    /// The change itself is wrong (unknown dataset, dates reversed).
    #[error(transparent)]
    Impact(#[from] crate::impact::ImpactError),
    /// Files of the project that failed to read: the plan may be short.
    #[error("{0}; or pass --allow-partial to plan without them")]
    Incomplete(String),
    /// Planned jobs whose SQL or template failed to read.
    #[error(
        "the plan would run {count} job{} that failed to read ({first}); fix them or pass --allow-partial",
        crate::text::plural(*count)
    )]
    Unreadable {
        /// How many diagnostics name a planned job's file.
        count: usize,
        /// The first of them.
        first: String,
    },
    /// The schedule cannot be made.
    #[error(transparent)]
    Schedule(#[from] schedule::ScheduleError),
    /// More SQL than one plan may render for its tasks.
    #[error(
        "the plan would render more than {max} MiB of SQL for its tasks (`{dataset}` alone {megabytes} MiB); a plan that size cannot be reviewed: plan a shorter range at a time (an Airflow task's template is rendered once a partition; for other jobs, larger batches also help: `backfill.batch` in ripple.yml)",
        max = MAX_PLAN_SQL_BYTES >> 20
    )]
    TooMuchSql {
        /// The dataset with the most of it.
        dataset: String,
        /// Its SQL, in MiB.
        megabytes: u64,
    },
    /// More tasks than one plan may hold.
    #[error(
        "the plan would hold more than {max} tasks (`{dataset}` alone has {count} so far); a plan that size cannot be reviewed: plan a shorter range at a time, or make the batches larger (`backfill.batch` in ripple.yml)",
        max = MAX_PLAN_TASKS
    )]
    TooManyTasks {
        /// The dataset whose batches passed the bound.
        dataset: String,
        /// Its tasks when they did.
        count: usize,
    },
    /// Restated datasets whose partitions cannot be selected.
    #[error(
        "no partition column is known for {}, so their restated partitions cannot be swapped in; set `partition_column` under `datasets.<name>` in ripple.yml (the column their partitions are selected by). ripple reads it from the job's SQL where a column of the table carries a time of what it reads; where the job's insert has no column list and selects expressions, listing its columns, or describing the table (`tables:`, docs/plan.md), lets it read that",
        .0.iter().map(|n| format!("`{}`", crate::text::one_line(n))).collect::<Vec<_>>().join(", ")
    )]
    NoPartitionColumn(Vec<String>),
    /// A configured partition column the dataset does not have.
    #[error(
        "the partition column {} is not a column of the dataset ({}); correct `partition_column` under `datasets.<name>` in ripple.yml (or dbt's `event_time` / `partition_by`)",
        .0.iter().map(|m| format!("`{}` of `{}` (from {})", crate::text::one_line(&m.column), crate::text::one_line(&m.dataset), m.evidence)).collect::<Vec<_>>().join(", "),
        .0.iter().map(|m| format!("`{}` has {}", crate::text::one_line(&m.dataset), crate::text::one_line(&m.columns.join(", ")))).collect::<Vec<_>>().join("; ")
    )]
    UnknownPartitionColumn(Vec<Misnamed>),
    /// Restated datasets whose hourly grain is only assumed from upstream.
    #[error(
        "the grain of {} is only assumed to be its upstream's hour, so its partitions would be selected by hour; declare `grain` under `datasets.<name>` in ripple.yml (day, if it holds a row per day)",
        .0.iter().map(|n| format!("`{}`", crate::text::one_line(n))).collect::<Vec<_>>().join(", ")
    )]
    AssumedGrain(Vec<String>),
    /// A job statement that would change a relation that is not a shadow.
    #[error(
        "refusing to plan `{dataset}`: {}: {reason}",
        place(file, *line, *statement)
    )]
    Unsafe {
        /// The dataset whose job it is.
        dataset: String,
        /// The job's file.
        file: String,
        /// 1-based line of the statement (0 when unknown).
        line: u64,
        /// 1-based statement number.
        statement: usize,
        /// What it would do.
        reason: String,
    },
    /// An affected dataset that is files, not a table.
    #[error(
        "refusing to plan: `{path}` is files written by {jobs}, and files cannot be written to a shadow and swapped in atomically; take that job out of the folders ripple.yml reads (`sql:`, `dags:`) and re-run it by hand after the swap"
    )]
    PathOutput {
        /// The location.
        path: String,
        /// The jobs writing it, quoted and joined.
        jobs: String,
    },
    /// A restated table whose facts do not allow a safe copy or swap.
    #[error("refusing to plan `{dataset}`: {reason}")]
    Table {
        /// The dataset.
        dataset: String,
        /// The fact that is missing or in the way, and what to do.
        reason: String,
    },
    /// A shadow pattern that names no schema.
    #[error(
        "the shadow of `{dataset}` would be `{shadow}`, with no schema: the plan's SQL would look for it in the session's schema and dbt would build it in the model's; give `backfill.shadow` a schema, e.g. `{{schema}}.{{table}}__backfill` or `backfill.{{table}}`"
    )]
    UnqualifiedShadow {
        /// The dataset.
        dataset: String,
        /// The shadow it would get.
        shadow: String,
    },
    /// A task that no executor can run into its shadow.
    #[error("refusing to plan: no command can rebuild `{dataset}` into its shadow: {reason}")]
    NoCommand {
        /// The dataset.
        dataset: String,
        /// Why, and what to change.
        reason: String,
    },
    /// A table named in quotes in lower case on an engine that folds
    /// unquoted names to upper case.
    #[error(
        "`{}` is named in quotes in lower case, which on {dialect} is another table than the upper-case one its unquoted name denotes; ripple prints the names it writes in the engine's upper case, so it cannot address this table: rename it to an unquoted name, or leave it out of the plan",
        crate::text::one_line(dataset)
    )]
    ExactCaseName {
        /// The dataset.
        dataset: String,
        /// The engine.
        dialect: String,
    },
    /// A name the plan would give longer than the engine keeps.
    #[error(
        "the plan would name `{}` for `{}`: longer than the {limit} bytes the engine keeps of a name, which it would cut silently, perhaps to another table's name; set `backfill.shadow` to a shorter pattern (e.g. `{{schema}}.{{table}}__bf`), or rename the table",
        crate::text::one_line(name),
        crate::text::one_line(dataset)
    )]
    NameTooLong {
        /// The dataset.
        dataset: String,
        /// The name part that is too long.
        name: String,
        /// The engine's bound, in bytes.
        limit: usize,
    },
    /// A shadow that would be a production relation.
    #[error(
        "the shadow of `{dataset}` would be `{shadow}`, a production relation (or another dataset's shadow); set `backfill.shadow` to a pattern with `{{table}}` that names no table of the project, e.g. `{{schema}}.{{table}}__backfill`"
    )]
    BadShadow {
        /// The dataset.
        dataset: String,
        /// The shadow it would get.
        shadow: String,
    },
}

/// What a reader of an impact or a plan must know when files of the
/// project failed to read: what they write is not in the graph, so it may
/// be affected and not listed. `None` when every file read.
pub fn unread_warning(g: &LineageGraph) -> Option<String> {
    let broken: std::collections::BTreeSet<String> = g
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::project::Severity::Error)
        .filter_map(|d| d.file.clone())
        .collect();
    let first = g
        .diagnostics
        .iter()
        .find(|d| d.severity == crate::project::Severity::Error && d.file.is_some())?;
    Some(format!(
        "{} file{} of the project failed to read ({first}); what {} may be affected and is not listed: fix {} (`ripple check` lists every one)",
        broken.len(),
        crate::text::plural(broken.len()),
        if broken.len() == 1 {
            "it writes"
        } else {
            "they write"
        },
        if broken.len() == 1 { "it" } else { "them" }
    ))
}

/// The warning an impact carries when statements of the project run or
/// define routines whose tables ripple cannot see (`hidden-tables`): what
/// they read or write may be affected and is not listed.
pub fn hidden_warning(g: &LineageGraph) -> Option<String> {
    let hidden: Vec<&crate::project::Diagnostic> = g
        .diagnostics
        .iter()
        .filter(|d| d.code == "hidden-tables")
        .collect();
    let first = hidden.first()?;
    Some(format!(
        "{} statement{} of the project run or define routines whose tables ripple cannot see ({first}); what {} may be affected and is not listed (`ripple check` lists every one)",
        hidden.len(),
        crate::text::plural(hidden.len()),
        if hidden.len() == 1 {
            "it touches"
        } else {
            "they touch"
        },
    ))
}

/// `file:line: statement N`, leaving out what is not known (0).
fn place(file: &str, line: u64, statement: usize) -> String {
    match (line, statement) {
        (0, 0) => file.to_string(),
        (0, s) => format!("{file}: statement {s}"),
        (l, 0) => format!("{file}:{l}"),
        (l, s) => format!("{file}:{l}: statement {s}"),
    }
}

/// What `ripple plan` is asked for besides the change.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Keep the shadows after a successful swap.
    pub keep_shadows: bool,
    /// Built-in checks turned off for every dataset.
    pub skip_checks: Vec<Check>,
    /// The row-count check's tolerance for every dataset.
    pub row_count_tolerance: Option<f64>,
    /// Plan even when jobs to be run failed to read.
    pub allow_partial: bool,
    /// Schedule from this minute (UTC, minutes since the epoch).
    pub start: Option<crate::schedule::Minute>,
    /// Fail when the scheduled plan ends after this minute.
    pub deadline: Option<crate::schedule::Minute>,
    /// What production's tables are (`tables:` and `--tables`).
    pub tables: crate::sql::tables::Tables,
}

/// The whole plan for a change: impact, tasks, document and, with a start,
/// the schedule. Refuses to run jobs that failed to read unless allowed.
pub fn for_change(
    g: &LineageGraph,
    request: &crate::impact::ImpactRequest,
    options: &PlanOptions,
) -> Result<PlanDocument, PlanError> {
    Ok(for_change_with_impact(g, request, options, false)?.0)
}

/// [`for_change`], also returning the impact it planned (with `--explain`
/// lines when `explain`) and its time model, for pictures of the plan.
pub fn for_change_with_impact(
    g: &LineageGraph,
    request: &crate::impact::ImpactRequest,
    options: &PlanOptions,
    explain: bool,
) -> Result<(PlanDocument, Impact, TimeModel), PlanError> {
    let facts = crate::impact::TimeFacts::for_request(g, request)?;
    let (result, model) = crate::impact::impact(g, &facts, request, explain)?;
    let tasks = tasks(g, &model, &result)?;
    if !options.allow_partial {
        // A job whose SQL or template failed to read would be run blind.
        let files: std::collections::BTreeSet<&str> = tasks
            .tasks
            .iter()
            .filter_map(|t| g.writers.get(&t.dataset))
            .flatten()
            .filter_map(|j| g.jobs.get(j))
            .map(|j| j.file.as_str())
            .collect();
        let broken: Vec<String> = g
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::project::Severity::Error)
            .filter(|d| d.file.as_deref().is_some_and(|f| files.contains(f)))
            .map(ToString::to_string)
            .collect();
        if let Some(first) = broken.first() {
            return Err(PlanError::Unreadable {
                count: broken.len(),
                first: first.clone(),
            });
        }
        // A file that failed to read is not in the graph: what it writes
        // may be downstream of the change, and the plan would be short.
        if let Some(w) = unread_warning(g) {
            return Err(PlanError::Incomplete(w));
        }
    }
    let mut doc = document(g, &model, &result, tasks, options)?;
    if let Some(w) = unread_warning(g) {
        doc.warnings.push(w);
    }
    if let Some(start) = options.start {
        schedule::apply(&mut doc, g, &g.dags, start, options.deadline)?;
    }
    Ok((doc, result, model))
}

/// The tasks of a plan and the datasets taken as correct, in topological
/// order of datasets, oldest batch first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tasks {
    /// Datasets not recomputed (no job writes them).
    pub assumed: Vec<String>,
    /// The tasks.
    pub tasks: Vec<PlanTask>,
}

/// Tasks one plan holds at most: each is rendered per date, and two
/// centuries of two-day batches over an Airflow task once took 11 s to
/// write 355 MB of plan from 1.5 KB of input (docs/limits.md).
pub const MAX_PLAN_TASKS: usize = 50_000;

/// Splits `impact` into tasks and orders them by what each reads.
pub fn tasks(g: &LineageGraph, model: &TimeModel, impact: &Impact) -> Result<Tasks, PlanError> {
    let mut assumed = Vec::new();
    let mut tasks: Vec<PlanTask> = Vec::new();
    for d in &impact.datasets {
        let Some(&node) = g.index.get(&d.id) else {
            continue;
        };
        let Some(writers) = g.writers.get(&d.id) else {
            assumed.push(d.id.clone());
            continue;
        };
        if writers.len() > 1 {
            // A task runs one job: the first writer's rows were swapped in
            // and the others' lost (a channel's orders), or left as
            // production had them (a column an update job enriches), with
            // exit 0.
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "it is written by {} jobs ({}), and a task runs one job: what the others write (their rows, or the columns they update) would be lost from the restated partitions. Put the statements that make it in one job, in the order they run, then plan again",
                    writers.len(),
                    writers
                        .iter()
                        .map(|j| format!("`{j}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        if g.graph[node].kind == crate::project::DatasetKind::Path {
            return Err(PlanError::PathOutput {
                path: g.graph[node].name.clone(),
                jobs: writers
                    .iter()
                    .map(|j| format!("`{j}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        if d.unbounded {
            return Err(PlanError::Unbounded(d.name.clone()));
        }
        let grain = d.grain;
        if d.full {
            tasks.push(PlanTask {
                id: format!("{}@full", d.name),
                dataset: d.id.clone(),
                from: None,
                to: None,
                full: true,
                partitions: 1,
                depends_on: Vec::new(),
                start: None,
                end: None,
                span: (UNBOUNDED, i64::MAX),
                ranges: Vec::new(),
                node,
            });
            continue;
        }
        if !takes_dates(g, &d.id) {
            // The job recomputes all it writes whatever the dates: one run
            // restates every affected partition (batches would each redo it).
            let ranges: Vec<(Hour, Hour)> = d
                .intervals
                .iter()
                .filter_map(|r| {
                    let from = parse_key(grain, r.from.as_ref()?);
                    Some((from, grain.next(parse_key(grain, &r.to))))
                })
                .collect();
            let (Some(first), Some(last)) = (d.intervals.first(), d.intervals.last()) else {
                continue;
            };
            let (Some(from), Some(&(start, _)), Some(&(_, end))) =
                (&first.from, ranges.first(), ranges.last())
            else {
                continue;
            };
            tasks.push(PlanTask {
                id: format!("{}@{from}..{}", d.name, last.to),
                dataset: d.id.clone(),
                from: Some(from.clone()),
                to: Some(last.to.clone()),
                full: false,
                partitions: d.partitions,
                depends_on: Vec::new(),
                start: None,
                end: None,
                span: (start, end),
                ranges,
                node,
            });
            continue;
        }
        let size = g
            .config
            .backfill
            .batch
            .get(&grain)
            .map(|&n| u64::from(n.max(1)))
            .unwrap_or_else(|| default_batch(grain));
        for range in &d.intervals {
            let (Some(from), to) = (&range.from, &range.to) else {
                continue;
            };
            let mut start = parse_key(grain, from);
            let last = parse_key(grain, to);
            while start <= last {
                let mut end = start;
                let mut n = 0;
                while n < size && end <= last {
                    end = grain.next(end);
                    n += 1;
                }
                let (first_key, last_key) = (grain.key(start), grain.key(grain.floor(end - 1)));
                tasks.push(PlanTask {
                    id: format!("{}@{first_key}..{last_key}", d.name),
                    dataset: d.id.clone(),
                    from: Some(first_key),
                    to: Some(last_key),
                    full: false,
                    partitions: n,
                    depends_on: Vec::new(),
                    start: None,
                    end: None,
                    span: (start, end),
                    ranges: vec![(start, end)],
                    node,
                });
                start = end;
                if tasks.len() > MAX_PLAN_TASKS {
                    let count = tasks.iter().filter(|t| t.dataset == d.id).count();
                    return Err(PlanError::TooManyTasks {
                        dataset: crate::text::one_line(&d.name).into_owned(),
                        count,
                    });
                }
            }
        }
    }
    wavefront(g, model, &mut tasks);
    sql_within_bound(g, &tasks)?;
    Ok(Tasks { assumed, tasks })
}

/// Bytes of SQL one plan may render and read for its tasks, all together.
pub const MAX_PLAN_SQL_BYTES: u64 = 64 << 20;

/// Refuses a plan whose tasks would render more SQL than
/// [`MAX_PLAN_SQL_BYTES`], counted from each job's SQL before any is
/// rendered: a task of an Airflow template renders it once a partition.
/// A 300 KB template over a year of days took two minutes to plan (each
/// rendered script is parsed to write into its shadow), and a millennium of
/// small tasks wrote 231 MB.
fn sql_within_bound(g: &LineageGraph, tasks: &[PlanTask]) -> Result<(), PlanError> {
    let mut total = 0u64;
    let mut by_dataset: HashMap<&str, u64> = HashMap::new();
    for t in tasks {
        let Some(job) = g.writer(&t.dataset) else {
            continue;
        };
        let (bytes, per_partition) = match job.airflow.as_ref().and_then(|a| a.template.as_ref()) {
            Some(template) => (template.text.len() as u64, true),
            None => (job.sql.as_deref().map_or(0, str::len) as u64, false),
        };
        let runs = if per_partition && !t.full {
            t.partitions.max(1)
        } else {
            1
        };
        let task_bytes = bytes.saturating_mul(runs);
        total = total.saturating_add(task_bytes);
        *by_dataset.entry(t.dataset.as_str()).or_default() += task_bytes;
        if total > MAX_PLAN_SQL_BYTES {
            let (dataset, bytes) = by_dataset
                .iter()
                .max_by_key(|(id, b)| (**b, std::cmp::Reverse(**id)))
                .map_or((t.dataset.as_str(), task_bytes), |(d, b)| (*d, *b));
            let name = g.dataset(dataset).map_or(dataset, |d| d.name.as_str());
            return Err(PlanError::TooMuchSql {
                dataset: crate::text::one_line(name).into_owned(),
                megabytes: bytes >> 20,
            });
        }
    }
    Ok(())
}

/// Whether the job writing `dataset` restates only the dates it is given
/// (an Airflow task templated on its run's date, a dbt microbatch model),
/// so that batches split the work; any other job recomputes everything it
/// writes on every run.
pub fn takes_dates(g: &LineageGraph, dataset: &str) -> bool {
    let Some(job) = g.writer(dataset) else {
        return false;
    };
    match job.kind {
        crate::project::JobKind::Airflow => true,
        crate::project::JobKind::Dbt | crate::project::JobKind::Manifest => {
            g.dataset(dataset)
                .and_then(|d| d.config.get("incremental_strategy"))
                .and_then(|v| v.as_str())
                == Some("microbatch")
        }
        crate::project::JobKind::Sql => false,
    }
}

/// Sets each task's `depends_on`: the tasks of its upstream datasets whose
/// time meets the time it reads.
fn wavefront(g: &LineageGraph, model: &TimeModel, tasks: &mut [PlanTask]) {
    let mut by_node: HashMap<NodeIndex, Vec<usize>> = HashMap::new();
    for (i, t) in tasks.iter().enumerate() {
        by_node.entry(t.node).or_default().push(i);
    }
    let mut deps: Vec<Vec<String>> = vec![Vec::new(); tasks.len()];
    for (i, t) in tasks.iter().enumerate() {
        let down_grain = model.datasets.get(&t.node).map_or(Grain::None, |d| d.grain);
        for e in g.graph.edges_directed(t.node, Direction::Incoming) {
            let up = e.source();
            let Some(up_tasks) = by_node.get(&up) else {
                continue;
            };
            let mapping = model
                .edges
                .get(&e.id())
                .map_or(TimeMapping::Identity, |m| m.mapping);
            let up_grain = model.datasets.get(&up).map_or(Grain::None, |d| d.grain);
            let reads = match mapping {
                TimeMapping::None => continue,
                _ if t.full || down_grain == Grain::None || up_grain == Grain::None => {
                    (UNBOUNDED, i64::MAX)
                }
                TimeMapping::All => (UNBOUNDED, i64::MAX),
                TimeMapping::Identity => t.span,
                TimeMapping::Window(lo, hi) => {
                    (up_grain.shift(t.span.0, lo), up_grain.shift(t.span.1, hi))
                }
            };
            for &j in up_tasks {
                let u = &tasks[j];
                if u.span.0 < reads.1 && reads.0 < u.span.1 {
                    deps[i].push(u.id.clone());
                }
            }
        }
    }
    for (t, mut d) in tasks.iter_mut().zip(deps) {
        d.sort();
        d.dedup();
        t.depends_on = d;
    }
}

fn parse_key(grain: Grain, key: &str) -> Hour {
    let padded = match grain {
        Grain::Month => format!("{key}-01"),
        Grain::Year => format!("{key}-01-01"),
        _ => key.to_string(),
    };
    crate::time::TimeKey::parse(&padded).map_or(UNBOUNDED, |k| k.start)
}
