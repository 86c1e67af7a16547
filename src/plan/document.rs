//! Assembling the plan document from tasks: the shadows it sets up, what
//! each task writes (its dataset's shadow) and reads (the shadow of every
//! upstream the plan rewrites, production for the rest), its validations,
//! the swaps that put the shadows in place, cleanup and rollback.
//!
//! The execution model (docs/plan.md): every shadow starts as a copy of
//! production (empty for a full rebuild), so a downstream task reading it
//! sees restated rows where restated and production's elsewhere; a task
//! replaces exactly its partitions in its shadow, so re-running it is
//! harmless; production is touched only by the swap phase, one transaction
//! where the engine allows it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use rayon::prelude::*;
use serde::Serialize;

use super::sql::{
    DEFAULT_SHADOW, begin, create_copy, drop_shadow, drop_view, partition_filter, quote_ident,
    quote_relation, shadow_relation, swap, transactional_ddl,
};
use super::{PlanError, PlanOptions, PlanTask, Tasks};
use crate::graph::LineageGraph;
use crate::impact::{
    Impact, JobOutput, PartitionColumns, TimeModel, configured_partition, job_output,
};
use crate::project::{Dataset, JobKind};
use crate::sql::SqlDialect;
use crate::time::{Grain, KeyFormat};

/// Tolerance of the built-in row-count check: the shadow's rows within this
/// fraction of production's for the same partitions.
pub const ROW_COUNT_TOLERANCE: f64 = 0.1;

/// A built-in validation, as `--skip-check` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Check {
    /// The shadow is not empty where production is not.
    NonEmpty,
    /// The shadow's row count is within the tolerance of production's.
    RowCount,
    /// No two rows share the unique key.
    UniqueKey,
}

/// One validation of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Validation {
    /// Which check: `custom` (the dataset's `validate` query), `non_empty`,
    /// `row_count`, `unique_key`.
    pub check: String,
    /// A query returning one boolean: true when the check passes.
    pub sql: String,
    /// A query returning one line of text saying what was found, for the
    /// message when the check fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A task as the plan document lists it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DocTask {
    /// The task (id, dataset, range, dependencies).
    #[serde(flatten)]
    pub task: PlanTask,
    /// The relation it writes: always a shadow.
    pub writes: String,
    /// What it reads, by upstream dataset id: the shadow when the plan
    /// rewrites that upstream, production otherwise.
    pub reads: BTreeMap<String, String>,
    /// Checks that must all pass before its dataset is swapped.
    pub validations: Vec<Validation>,
    /// How to run it, per executor that runs its job.
    pub commands: super::executors::Commands,
}

/// The statements that create one dataset's shadow, before any task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Setup {
    /// The dataset.
    pub dataset: String,
    /// Its shadow.
    pub shadow: String,
    /// The statements: a copy of production (empty for a full rebuild).
    pub sql: Vec<String>,
}

/// One dataset's swap, after all of its tasks and validations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Swap {
    /// The dataset.
    pub dataset: String,
    /// Every task of the dataset.
    pub depends_on: Vec<String>,
    /// The statements, in order, without the transaction around them (see
    /// `swap_scripts`).
    pub sql: Vec<String>,
    /// Statements run after every swap of the plan, in reverse plan order:
    /// deleting rows gone from a table foreign keys reference, once the
    /// tables referencing it are swapped; moving its sequences on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finally: Vec<String>,
    /// Triggers on production the swap fires (`name: definition`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fires: Vec<String>,
    /// A materialized view: its swap refreshes production's, after every
    /// table's swap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refreshes: bool,
    /// A query run after the swap, before the cleanup, answering one row:
    /// the restated partitions' rows before the setup, their rows now, and
    /// how many partitions changed (read off the setup's fingerprint; only
    /// where the plan knows the table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PlanDocument {
    /// Changed datasets.
    pub changed: Vec<String>,
    /// Datasets taken as correct inputs.
    pub assumed: Vec<String>,
    /// Shadows to create before any task, one per rewritten dataset.
    pub setup: Vec<Setup>,
    /// Tasks in order.
    pub tasks: Vec<DocTask>,
    /// Swaps, one per dataset, in plan order.
    pub swaps: Vec<Swap>,
    /// The swap phase as scripts, each to run whole in one session, in
    /// order: one script holding every swap between `begin` and `commit`
    /// where the engine has transactional DDL, else one per dataset.
    pub swap_scripts: Vec<Vec<String>>,
    /// Statements that drop the shadows after a successful swap (empty
    /// with `--keep-shadows`).
    pub cleanup: Vec<String>,
    /// Statements that undo the plan before its swap: drop every shadow.
    /// Production is never touched.
    pub rollback: Vec<String>,
    /// The schedule (with `--start`; null otherwise).
    pub schedule: Option<super::schedule::ScheduleSummary>,
    /// What a reviewer should know (the executors' contracts).
    pub warnings: Vec<String>,
    /// The shell lines that build the dbt overlay in `$RIPPLE_DBT_OVERLAY`
    /// (an empty folder) from the dbt project in `${RIPPLE_DBT_PROJECT:-.}`
    /// before any dbt command runs, after the functions of
    /// `dbt_overlay_functions` (docs/plan.md, dbt); absent when no task
    /// has a dbt command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub dbt_overlay: Vec<super::executors::ShellLine>,
    /// The shell functions `dbt_overlay` calls.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dbt_overlay_functions: String,
}

impl PlanDocument {
    /// Each task's position in `tasks`, by task id.
    pub fn positions(&self) -> std::collections::HashMap<&str, usize> {
        self.tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.task.id.as_str(), i))
            .collect()
    }
}

/// Whether a column of type `t` (lowercase) holds instants, which a
/// session's zone cuts into days.
fn instant_type(t: &str) -> bool {
    t.contains("with time zone") || t.starts_with("timestamptz")
}

/// The plan document of `tasks`, or why no safe plan can be written.
pub fn document(
    g: &LineageGraph,
    model: &TimeModel,
    impact: &Impact,
    tasks: Tasks,
    options: &PlanOptions,
) -> Result<PlanDocument, PlanError> {
    let dialect = g.config.dialect;
    let pattern = g
        .config
        .backfill
        .shadow
        .clone()
        .unwrap_or_else(|| DEFAULT_SHADOW.to_string());
    let mut by_dataset: BTreeMap<String, Vec<&PlanTask>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for t in &tasks.tasks {
        if !by_dataset.contains_key(&t.dataset) {
            order.push(&t.dataset);
        }
        by_dataset.entry(t.dataset.clone()).or_default().push(t);
    }
    // An unqualified table's shadow is unqualified too: it lives where the
    // job's session puts the table (its search path), not in dbt's schema.
    // Named once per dataset: every task, setup and swap asks.
    let shadow_names: HashMap<&str, String> = order
        .iter()
        .filter_map(|id| g.dataset(id))
        .map(|d| (d.id.as_str(), shadow_relation(&pattern, &d.relation, "")))
        .collect();
    let shadow_of = |d: &Dataset| match shadow_names.get(d.id.as_str()) {
        Some(s) => s.clone(),
        None => shadow_relation(&pattern, &d.relation, ""),
    };
    check_shadows(g, &order, &shadow_of)?;
    check_name_lengths(g, &order, &shadow_of)?;
    for id in &order {
        if let Some(d) = g.dataset(id)
            && crate::sql::rewrite::has_exact_lower_part(&d.relation, g.config.dialect)
        {
            return Err(PlanError::ExactCaseName {
                dataset: d.name.clone(),
                dialect: g.config.dialect.to_string(),
            });
        }
    }
    for d in order.iter().filter_map(|id| g.dataset(id)) {
        if let Some(v) = d.settings(&g.config).and_then(|c| c.validate.as_deref())
            && let Err(why) = read_only_query(v, dialect)
        {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "its `validate` in ripple.yml {why}: a validation runs before the swap, when nothing may change production; write one query (`select ...`) that returns true when the shadow is right"
                ),
            });
        }
    }
    // A dbt snapshot's history (SCD2) cannot be rebuilt: it is never
    // restated into a shadow.
    if let Some(d) = order
        .iter()
        .filter_map(|id| g.dataset(id))
        .find(|d| d.kind == crate::project::DatasetKind::Snapshot)
    {
        let ups: Vec<String> = g
            .graph
            .neighbors_directed(g.index[&d.id], Direction::Incoming)
            .map(|u| format!("{}: none", g.graph[u].name))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        return Err(PlanError::Table {
            dataset: d.name.clone(),
            reason: format!(
                "it is a dbt snapshot: it keeps history (SCD2) that no rebuild can restore, so ripple never rebuilds it into a shadow. Keep it out of the plan (`upstream: {{ {} }}` under `datasets.{}` in ripple.yml stops the change at it), and run `dbt snapshot --select {}` once the plan's swap is done; what reads it is then restated by a plan of its own",
                ups.join(", "),
                d.name,
                d.name
            ),
        });
    }
    // Production relation → shadow, for every dataset the plan rewrites.
    let shadows: HashMap<String, String> = order
        .iter()
        .filter_map(|id| g.dataset(id))
        .map(|d| (d.relation.clone(), shadow_of(d)))
        .collect();
    // dbt views and ephemeral models, and views SQL jobs make, hold no rows:
    // their shadow is a view the task builds; nothing to copy, validate or
    // swap. Decided once per dataset (it reads the job's SQL).
    let materialized = |id: &str| {
        g.dataset(id)
            .and_then(|d| d.config.get("materialized"))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let rowless: BTreeSet<&str> = order
        .iter()
        .copied()
        .filter(|id| match g.writer(id) {
            Some(j) if j.kind.is_dbt() => {
                !super::executors::holds_rows(materialized(id).as_deref())
            }
            Some(j) if j.kind == JobKind::Sql => j.sql.as_deref().is_some_and(|sql| {
                g.dataset(id)
                    .is_some_and(|d| super::executors::makes_view(sql, dialect, &d.relation))
            }),
            _ => false,
        })
        .collect();
    let holds_rows = |id: &str| !rowless.contains(id);
    // Materialized views a job makes: their shadow is one too, and the swap
    // refreshes production's.
    let matviews: BTreeSet<&str> = if dialect == SqlDialect::Postgres {
        rowless
            .iter()
            .copied()
            .filter(|id| {
                let relation = g.dataset(id).map(|d| d.relation.as_str());
                g.writer(id)
                    .and_then(|j| j.sql.as_deref())
                    .is_some_and(|sql| {
                        crate::sql::tables::facts_from_ddl(sql, dialect, "")
                            .iter()
                            .any(|f| {
                                Some(f.relation.as_str()) == relation
                                    && f.kind == crate::sql::tables::RelationKind::MaterializedView
                            })
                    })
            })
            .collect()
    } else {
        BTreeSet::new()
    };
    let drop_rowless = |id: &str, shadow: &str| {
        if matviews.contains(id) {
            format!(
                "drop materialized view if exists {}",
                quote_relation(dialect, shadow)
            )
        } else {
            drop_view(dialect, shadow)
        }
    };
    // A shadow's parts by the names dbt gives them.
    let parts_of = |relation: &str| -> std::collections::BTreeMap<&'static str, String> {
        let parts = crate::sql::rewrite::relation_parts(relation);
        let names = ["database", "schema", "identifier"];
        names[3 - parts.len().min(3)..]
            .iter()
            .copied()
            .zip(parts.iter().rev().take(3).rev().cloned())
            .collect()
    };
    // The root project's models the plan restates, each with its shadow's
    // parts: dbt names them so through the overlay.
    let dbt_shadows: super::executors::DbtShadows = order
        .iter()
        .filter(|id| {
            g.writer(id).is_some_and(|j| j.kind.is_dbt())
                && materialized(id).as_deref() != Some("ephemeral")
        })
        .filter_map(|id| g.dataset(id))
        .filter(|d| d.package.is_none())
        .map(|d| (d.name.clone(), parts_of(&shadow_of(d))))
        .collect();
    // dbt sources whose table the plan restates (a SQL job or an Airflow
    // task loads it): `source()` must read the shadow too, by the
    // source's `source.table` name.
    let dbt_sources: super::executors::DbtShadows = g
        .graph
        .node_weights()
        .filter(|d| d.kind == crate::project::DatasetKind::Source)
        .filter_map(|d| Some((d.name.clone(), parts_of(shadows.get(&d.relation)?))))
        .collect();
    // A plan restating a dbt Python model cannot mask `statement` (dbt
    // runs the model only from its own).
    let python = order.iter().filter_map(|id| g.dataset(id)).any(|d| {
        g.writer(&d.id).is_some_and(|j| j.kind.is_dbt())
            && d.file.as_deref().is_some_and(|f| f.ends_with(".py"))
    });
    // The overlay dbt runs in, or why there is none.
    type Overlay = (Vec<super::executors::ShellLine>, Vec<String>);
    let dbt_overlay: Result<Overlay, String> = match &g.dbt_root {
        Some(root) => super::executors::dbt_overlay_lines(root, &dbt_shadows, &dbt_sources, python),
        None => Err("the project has no dbt_project.yml ripple read (a manifest alone cannot be run by dbt)".to_string()),
    };
    // What each job's SQL outputs, read once per dataset on all cores (maps:
    // the same whatever order they finish in): the columns a swap names,
    // and, for a dataset no config gives a partition column, the lineage
    // that column is found in (only those are kept: the rest is freed on
    // the core that read it).
    let table_aware = super::table::supported(dialect);
    let tables = if table_aware {
        project_tables(g, &order, options)
    } else {
        Default::default()
    };
    catalog_views_read(g, &order, &tables)?;
    partitions_apart(g, &order, &tables)?;
    type Read<'a> = (
        &'a str,
        NodeIndex,
        Option<Vec<String>>,
        Option<JobOutput>,
        bool,
    );
    let read: Vec<Read> = order
        .par_iter()
        .map(|&id| {
            let n = g.index[id];
            // An insert without a column list names its values after the
            // table's columns, where its facts give them.
            let out = match tables.get(&g.graph[n].relation, dialect) {
                Some(f) if !f.columns.is_empty() => {
                    let names: Vec<String> = f.columns.iter().map(|c| c.name.clone()).collect();
                    let relation = &g.graph[n].relation;
                    let known: crate::sql::KnownColumns = [
                        (relation.clone(), names.clone()),
                        (relation.to_lowercase(), names),
                    ]
                    .into();
                    crate::impact::job_output_known(g, n, &known)
                }
                _ => job_output(g, n),
            };
            let columns = out.as_ref().and_then(|out| {
                if !out.lineage.unexpanded_stars.is_empty() {
                    return None;
                }
                let names: Vec<String> = out
                    .lineage
                    .columns
                    .iter()
                    .map(|c| crate::sql::rewrite::unquote_ident(&c.name))
                    .collect();
                let unique: BTreeSet<&String> = names.iter().collect();
                (!names.is_empty() && unique.len() == names.len()).then_some(names)
            });
            let positional = out.as_ref().is_some_and(|o| o.lineage.positional);
            let out = out.filter(|_| configured_partition(g, n).is_none());
            (id, n, columns, out, positional)
        })
        .collect();
    let mut output_columns: HashMap<&str, Option<Vec<String>>> = HashMap::new();
    let mut outputs: HashMap<NodeIndex, Option<JobOutput>> = HashMap::new();
    let mut positional: BTreeSet<&str> = BTreeSet::new();
    for (id, n, columns, out, by_position) in read {
        if by_position {
            positional.insert(id);
        }
        output_columns.insert(id, columns);
        outputs.insert(n, out);
    }
    let mut columns_of = PartitionColumns::with_outputs(&outputs);
    let mut missing = Vec::new();
    let mut misnamed = Vec::new();
    let mut partition: HashMap<&str, Option<String>> = HashMap::new();
    // Key formats the SQL making a partition column says.
    let mut encoded: HashMap<&str, KeyFormat> = HashMap::new();
    for id in &order {
        let Some(d) = g.dataset(id) else { continue };
        let full = by_dataset[*id].iter().any(|t| t.full);
        let pc = if full || !holds_rows(id) {
            None
        } else {
            match columns_of.of(g, g.index[*id]) {
                Some(p) => {
                    if let Some(f) = p.format {
                        encoded.insert(id, f);
                    }
                    let column = crate::sql::rewrite::unquote_ident(&p.column);
                    // A configured name is checked against the columns the
                    // table is described with, else the job's output (when
                    // its names are the table's): a misspelt one would only
                    // fail when the plan runs.
                    let described = tables
                        .get(&d.relation, dialect)
                        .map(|f| f.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>())
                        .filter(|c| !c.is_empty());
                    let known = described.or_else(|| {
                        output_columns
                            .get(id)
                            .cloned()
                            .flatten()
                            .filter(|_| !positional.contains(id))
                    });
                    if let Some(known) = known
                        && !known.iter().any(|c| c.eq_ignore_ascii_case(&column))
                    {
                        misnamed.push(super::Misnamed {
                            dataset: d.name.clone(),
                            column: column.clone(),
                            evidence: p.evidence.clone(),
                            columns: known,
                        });
                    }
                    Some(column)
                }
                None => {
                    missing.push(d.name.clone());
                    None
                }
            }
        };
        partition.insert(id, pc);
    }
    if !missing.is_empty() {
        return Err(PlanError::NoPartitionColumn(missing));
    }
    if !misnamed.is_empty() {
        return Err(PlanError::UnknownPartitionColumn(misnamed));
    }
    // A routine the project defines (a SQL function, a DuckDB macro) whose
    // body names a restated table: the jobs calling it read that table
    // through it, which the lineage does not follow, so they would not be
    // restated (round 29: a monthly table through `mart.month_revenue()`
    // stayed wrong after a plan that exited 0).
    for job in g.jobs.values() {
        let Some(sql) = job.sql.as_deref() else {
            continue;
        };
        let lower = sql.to_ascii_lowercase();
        if !["function", "macro", "procedure"]
            .iter()
            .any(|w| lower.contains(w))
        {
            continue;
        }
        let script = crate::sql::script_lineage(sql, dialect);
        let Some((_, routine)) = script.defined_routines().next() else {
            continue;
        };
        let named = order.iter().filter_map(|id| g.dataset(id)).find(|d| {
            let last = super::sql::relation_parts(&d.relation)
                .pop()
                .unwrap_or_default()
                .to_ascii_lowercase();
            !last.is_empty()
                && lower.match_indices(&last).any(|(at, _)| {
                    let word = |c: char| c.is_alphanumeric() || c == '_';
                    !lower[..at].ends_with(word) && !lower[at + last.len()..].starts_with(word)
                })
        });
        if let Some(d) = named {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "`{}` defines the routine `{routine}`, whose body may read it: the jobs calling the routine read it through it, which ripple does not follow, so they would not be restated. Write the routine's query in those jobs (or a view), or restate them by hand",
                    job.file
                ),
            });
        }
    }
    // Subtotal rows of `rollup`/`cube`/`grouping sets` over the partition
    // column hold NULL there: they are in no partition, so a partition
    // swap never replaces them (round 29: production kept its wrong
    // totals, exit 0).
    for id in &order {
        let (Some(Some(column)), Some(d)) = (partition.get(id), g.dataset(id)) else {
            continue;
        };
        let Some(sql) = g.writer(id).and_then(|j| j.sql.as_deref()) else {
            continue;
        };
        if let Some(form) = subtotals(sql, dialect, column) {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "its job groups by `{form}` over its partition column `{column}`: the subtotal rows hold NULL there, which is in no partition, so a partition swap never replaces them. Rebuild it whole (`grain: none` under `datasets.{}` in ripple.yml), or keep the subtotals in a table of their own",
                    d.name
                ),
            });
        }
    }
    // The session's zone each restated dataset's job must run in: a job
    // reading an affected upstream's instants (`timestamptz`, from its
    // facts) cuts them into days by the session's zone when it casts them
    // (`cast(ts as date)`), which nothing in its SQL says; the impact took
    // its days to be those of its said zone, so the run checks that first.
    let affected: BTreeSet<&str> = impact.datasets.iter().map(|d| d.id.as_str()).collect();
    let type_of = |relation: &str, column: &str| {
        tables
            .get(relation, dialect)
            .and_then(|f| {
                f.columns
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(column))
            })
            .and_then(|c| c.data_type.as_deref())
            .map(str::to_ascii_lowercase)
    };
    let mut session_zone: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for id in order.iter().filter(|id| holds_rows(id)) {
        let sql = g
            .writer(id)
            .and_then(|j| j.sql.as_deref())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        // What in a job's SQL the session's zone moves: a truncation or a
        // cast of an instant, and a plain timestamp made an instant.
        // As the time facts read it (a cut that names its zone, as
        // `date_trunc('day', ts, 'Asia/Kolkata')`, is no session's); where
        // they read nothing, any word that could cut.
        let cuts = model
            .datasets
            .get(&g.index[*id])
            .and_then(|t| t.session_cut)
            .unwrap_or_else(|| {
                [
                    "date_trunc",
                    "::date",
                    " as date",
                    "date(",
                    "to_char",
                    "date_part",
                    "extract",
                    "strftime",
                    "time_bucket",
                ]
                .iter()
                .any(|w| sql.contains(w))
            });
        // `ts at time zone 'UTC'` makes an instant of a plain timestamp
        // too, which a cast to a date then cuts in the session's zone.
        let makes_instants = sql.contains("timestamptz")
            || sql.contains("with time zone")
            || sql.contains("at time zone")
            || sql.contains("timezone(");
        // Keyed by instants it keeps as they are, it cuts no day: its
        // filters carry offsets.
        let keyed_by_instants = g.dataset(id).is_some_and(|d| {
            partition
                .get(id)
                .and_then(|c| c.as_deref())
                .and_then(|c| type_of(&d.relation, c))
                .is_some_and(|t| instant_type(&t))
        });
        if keyed_by_instants && !cuts && !makes_instants {
            continue;
        }
        let said = model
            .datasets
            .get(&g.index[*id])
            .and_then(|t| t.said_zone.clone());
        let mut read = Vec::new();
        let mut checks = Vec::new();
        for u in g
            .graph
            .neighbors_directed(g.index[*id], Direction::Incoming)
        {
            let ud = &g.graph[u];
            if !affected.contains(ud.id.as_str()) {
                continue;
            }
            // Its partition column; or, where none is known, every column
            // of a time type its facts list that the job's SQL names: the
            // job cuts days from what it reads, declared or not (an
            // upstream without `partition_column` once skipped the check).
            let columns: Vec<(String, String)> = match columns_of.of(g, u) {
                Some(pc) => {
                    let column = crate::sql::rewrite::unquote_ident(&pc.column);
                    type_of(&ud.relation, &column)
                        .map(|ty| (column, ty))
                        .into_iter()
                        .collect()
                }
                None => tables
                    .get(&ud.relation, dialect)
                    .map(|f| {
                        f.columns
                            .iter()
                            .filter_map(|c| {
                                let ty = c.data_type.as_deref()?.to_ascii_lowercase();
                                (ty.starts_with("timestamp") && names_word(&sql, &c.name))
                                    .then(|| (c.name.clone(), ty))
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            for (column, ty) in columns {
                if instant_type(&ty) {
                    read.push(format!("`{}.{column}` ({ty})", ud.relation));
                } else if makes_instants && ty.starts_with("timestamp") {
                    // A plain timestamp made an instant is read in the session's
                    // zone, whatever the job converts it to after: the plan took
                    // it for a time of its dataset's zone.
                    let (zone, whence) = model
                        .datasets
                        .get(&u)
                        .and_then(|t| t.said_zone.clone())
                        .unwrap_or_else(|| ("UTC".to_string(), "no zone said".to_string()));
                    checks.push((
                    zone.clone(),
                    format!(
                        "the plan takes `{}.{column}` ({ty}) to be times of {zone} ({whence}) and the job of `{}` makes instants of it, which a session reads in its own zone",
                        ud.relation,
                        g.dataset(id).map_or("", |d| d.name.as_str())
                    ),
                ));
                }
            }
        }
        if let (false, Some(d), Some((zone, whence))) = (read.is_empty(), g.dataset(id), said) {
            let what = format!(
                "the plan takes the days of `{}` to be {zone}'s ({whence}) and its job reads {} whose casts to a date cut days in the session's zone",
                d.name,
                read.join(", ")
            );
            checks.push((zone, what));
        }
        // A zone the job moves after other statements (or locally, or
        // back) is in force for what follows it: a check before the run
        // would test a zone the job's casts do not cut in.
        if let (false, Some(moved), Some(d)) = (
            checks.is_empty(),
            model
                .datasets
                .get(&g.index[*id])
                .and_then(|t| t.zone_moved.clone()),
            g.dataset(id),
        ) {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "its job cuts times into days in the session's zone and moves that zone where ripple cannot check it before the run ({}): only a `set time zone` that is the job's first statement counts; move it there, or name the zone at each cut (`ts at time zone 'X'`)",
                    crate::text::one_line(&moved)
                ),
            });
        }
        if !checks.is_empty() {
            session_zone.insert(id, checks);
        }
    }
    // An hourly grain only assumed from an upstream (a daily table over
    // hourly events, say) would select its partitions by hour boundaries
    // its rows may not have: swapped in, they would match nothing.
    let assumed_hourly: Vec<String> = order
        .iter()
        .filter(|id| holds_rows(id) && !by_dataset[**id].iter().any(|t| t.full))
        .filter(|id| {
            model
                .datasets
                .get(&g.index[**id])
                .is_some_and(|t| t.grain == Grain::Hour && t.grain_source.starts_with("assumed"))
        })
        .filter_map(|id| g.dataset(id))
        .map(|d| d.name.clone())
        .collect();
    if !assumed_hourly.is_empty() {
        return Err(PlanError::AssumedGrain(assumed_hourly));
    }
    let grain_of = |id: &str| {
        model
            .datasets
            .get(&g.index[id])
            .map_or(Grain::None, |x| x.grain)
    };
    // How each dataset's partition column stores its key: ripple.yml,
    // else the SQL making it.
    let format_of = |id: &str| -> KeyFormat {
        g.dataset(id)
            .and_then(|d| d.settings(&g.config))
            .and_then(|c| c.partition_format)
            .or_else(|| encoded.get(id).copied())
            .unwrap_or_default()
    };
    // The type of each dataset's partition column, when its facts say.
    let column_type = |id: &str| -> Option<String> {
        let d = g.dataset(id)?;
        type_of(&d.relation, partition.get(id)?.as_deref()?)
    };
    // Declared, else the one zone its SQL converts into or its job sets
    // (the days the impact took it to have: bounds in UTC once left a
    // job's `set time zone 'Asia/Tokyo'` day unrestated), else UTC.
    let dataset_zone = |id: &str| -> String {
        g.dataset(id)
            .and_then(|d| g.config.zone_of(d.settings(&g.config)))
            .map(str::to_string)
            .or_else(|| {
                model
                    .datasets
                    .get(&g.index[id])
                    .and_then(|t| t.read_zone.clone())
            })
            .unwrap_or_else(|| "UTC".to_string())
    };
    // The zone a column of instants (`timestamptz`, known from the table's
    // facts) is cut into days in, for grouping it by partition: the
    // dataset's, the project's, or UTC.
    let zone_of = |id: &str| -> Option<String> {
        column_type(id)
            .is_some_and(|t| instant_type(&t))
            .then(|| dataset_zone(id))
    };
    // The zone a filter's bounds are written in, with their offsets: a
    // column of instants', and, where the column's type is not known, when
    // a zone is declared or the job sets its session's (PostgreSQL and
    // DuckDB read the offset of an instant, and leave it off a date or a
    // plain timestamp, so the bounds are right whatever the type is).
    let literal_zone_of = |id: &str| -> Option<String> {
        if let Some(z) = zone_of(id) {
            return Some(z);
        }
        if column_type(id).is_some()
            || !matches!(
                dialect,
                crate::sql::SqlDialect::Postgres | crate::sql::SqlDialect::DuckDb
            )
        {
            return None;
        }
        let declared = g
            .dataset(id)
            .and_then(|d| g.config.zone_of(d.settings(&g.config)))
            .is_some_and(|z| z != "UTC");
        let sets_zone = g
            .writer(id)
            .and_then(|j| j.sql.as_deref())
            .is_some_and(crate::sql::sets_time_zone);
        (declared || sets_zone).then(|| dataset_zone(id))
    };
    // A key stored as a number or text, filtered as a date, matches no row
    // (or fails on the engine mid-plan): refused before anything runs.
    for id in order.iter().filter(|id| holds_rows(id)) {
        if format_of(id) != KeyFormat::Date || by_dataset[*id].iter().any(|t| t.full) {
            continue;
        }
        let Some(t) = column_type(id) else { continue };
        let base = t.split(['(', ' ']).next().unwrap_or_default();
        let encoded = matches!(
            base,
            "integer"
                | "int"
                | "int4"
                | "int8"
                | "bigint"
                | "smallint"
                | "numeric"
                | "decimal"
                | "hugeint"
                | "text"
                | "varchar"
                | "character"
                | "char"
                | "string"
        );
        if encoded && let Some(d) = g.dataset(id) {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "its partition column `{}` is `{t}` (the table's facts), but its bounds would be written as dates; set `partition_format` under `datasets.{}` in ripple.yml (int_yyyymmdd, text_yyyymmdd, text_yyyy_mm_dd, text_yyyy_mm, epoch_seconds, epoch_millis), or partition it by a date column",
                    partition.get(id).cloned().flatten().unwrap_or_default(),
                    d.name
                ),
            });
        }
    }
    let filter_of = |t: &PlanTask| -> Option<String> {
        if t.full {
            return None;
        }
        let column = partition.get(t.dataset.as_str())?.as_deref()?;
        let grain = grain_of(&t.dataset);
        let zone = literal_zone_of(&t.dataset);
        any_of(
            t.ranges
                .iter()
                .map(|&(a, b)| {
                    partition_filter(
                        dialect,
                        column,
                        grain,
                        (a, b),
                        format_of(&t.dataset),
                        zone.as_deref(),
                    )
                })
                .collect(),
        )
    };
    // What the swap replaces: its partitions (all of them for a full
    // rebuild), and the column and grain they are selected by.
    let swap_filter = |id: &str| -> Option<String> {
        let ts = &by_dataset[id];
        if ts.iter().any(|t| t.full) {
            return None;
        }
        any_of(ts.iter().filter_map(|t| filter_of(t)).collect())
    };
    let swap_partition = |id: &str| -> Option<(String, Grain, KeyFormat, Option<String>)> {
        if by_dataset[id].iter().any(|t| t.full) {
            return None;
        }
        partition
            .get(id)
            .and_then(|c| c.clone())
            .map(|c| (c, grain_of(id), format_of(id), zone_of(id)))
    };
    let columns_of_job = |id: &str| output_columns.get(id).and_then(|c| c.as_deref());
    // What each restated table is, for the engines ripple writes
    // table-aware SQL for; a table whose plan cannot be made safe refuses it.
    let mut known: HashMap<&str, super::table::Known> = HashMap::new();
    if table_aware {
        for id in order.iter().filter(|id| holds_rows(id)) {
            let Some(d) = g.dataset(id) else { continue };
            let k = super::table::Known::of(
                &tables,
                &d.relation,
                dialect,
                columns_of_job(id),
                &unique_key(g, d),
            )
            .map_err(|reason| PlanError::Table {
                dataset: d.name.clone(),
                reason,
            })?;
            let mut k = k;
            // An insert by position into a table nothing describes: its
            // columns are taken to be the SELECT's names, in order, and the
            // engine is asked to confirm it before anything runs.
            if k.source == super::table::Source::Assumed
                && positional.contains(*id)
                && let Some(cols) = columns_of_job(id)
            {
                if !cols.iter().all(|c| crate::impact::plain_name(c)) {
                    return Err(PlanError::Table {
                        dataset: d.name.clone(),
                        reason: "its job inserts without a column list, some of its values are expressions with no name, and nothing describes the table's columns: list the insert's columns, or describe the table (`tables:` in ripple.yml, docs/plan.md)".to_string(),
                    });
                }
                k.signature.columns = Some(
                    cols.iter()
                        .map(|c| crate::sql::tables::fold(dialect, c))
                        .collect::<Vec<_>>()
                        .join(","),
                );
            }
            known.insert(id, k);
        }
    }
    // A trigger that changes rows as production stores them is not on the
    // shadow (its function may write anywhere): tasks reading the shadow
    // would read rows the trigger never changed.
    for id in &order {
        let Some(t) = known.get(*id).and_then(|k| k.changing_trigger()) else {
            continue;
        };
        let readers: Vec<String> = g
            .graph
            .neighbors_directed(g.index[*id], Direction::Outgoing)
            .filter(|n| by_dataset.contains_key(&g.graph[*n].id))
            .map(|n| format!("`{}`", g.graph[n].name))
            .collect();
        if let (false, Some(d)) = (readers.is_empty(), g.dataset(id)) {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "its trigger {t} changes rows as production stores them, and its shadow, which {} read{}, is written without it (ripple never copies a trigger: its function may write anywhere); do in the job's SQL what the trigger does, or restate those tables in a plan of their own once this one is swapped",
                    readers.join(", "),
                    if readers.len() == 1 { "s" } else { "" }
                ),
            });
        }
    }
    // A job that reads back the values its table draws (a parent's
    // identity looked up in the table it fills) would read them empty in
    // its work table, where the table's own sequence is not drawn from.
    for id in &order {
        let Some(k) = known.get(*id).filter(|k| !k.drawn.is_empty()) else {
            continue;
        };
        if g.self_reads.contains(*id)
            && let Some(d) = g.dataset(id)
        {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "its job reads the table it writes, and the table draws {} for the rows the job inserts; in the task's work table those values are not drawn (production's sequence is never touched before the swap), so whatever the job looks up by them would be empty: give the values in the job, or restate the table by hand",
                    k.drawn
                        .iter()
                        .map(|(c, _)| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    }
    // A plain SQL job reading the table it writes keeps what earlier runs
    // left (versions an UPDATE closed, rows first seen on a day, a running
    // total): one run into an empty shadow does not rebuild that, unless
    // the project says it does (round 28: an SCD2 job lost every closed
    // version, exit 0).
    for id in &order {
        let Some(d) = g.dataset(id) else { continue };
        let full = by_dataset[*id].iter().any(|t| t.full);
        if full
            && d.kind == crate::project::DatasetKind::Table
            && g.self_reads.contains(*id)
            && !d.settings(&g.config).is_some_and(|c| c.rebuilds_from_empty)
        {
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "its job reads the table it writes, so what the table holds may depend on earlier runs (versions an update closed, rows first seen on a day, a running total), which one run into an empty shadow cannot rebuild. If one run from empty does rebuild it (it reads itself only to skip rows it already holds), set `rebuilds_from_empty: true` under `datasets.{}` in ripple.yml; else stop the change before it (`upstream: {{ <what it reads>: none }}` under `datasets.{}`) and restate it by hand",
                    d.name, d.name
                ),
            });
        }
    }
    // A table matched by key keeps its rows' drawn values: its shadow
    // starts as production's rows even for a full rebuild.
    let keyed = |id: &str| known.get(id).is_some_and(|k| k.key.is_some());
    // A full rebuild runs once: as the last day before --as-of.
    let last_day = crate::time::TimeKey::parse(&impact.as_of)
        .map(|k| Grain::Day.key(k.start - 24))
        .unwrap_or_default();
    let max_active_runs = g.config.backfill.max_concurrency.unwrap_or(1);

    // Shadow views a failed run left go first: they read the shadow tables
    // the setup replaces.
    // Downstream first: a view over another view (or a materialized
    // view) of the plan must go before it.
    let mut setup: Vec<Setup> = order
        .iter()
        .rev()
        .filter(|id| !holds_rows(id))
        .filter_map(|id| g.dataset(id))
        .map(|d| {
            let shadow = shadow_of(d);
            Setup {
                dataset: d.id.clone(),
                sql: vec![drop_rowless(&d.id, &shadow)],
                shadow,
            }
        })
        .collect();
    for id in order.iter().filter(|id| holds_rows(id)) {
        let Some(d) = g.dataset(id) else { continue };
        let full = by_dataset[*id].iter().any(|t| t.full);
        let shadow = shadow_of(d);
        let mut sql = Vec::new();
        // A shadow in a schema of its own needs that schema.
        let schema_of = |r: &str| {
            let mut p = super::sql::relation_parts(r);
            p.pop();
            p
        };
        let shadow_schema = schema_of(&shadow);
        if !shadow_schema.is_empty() && shadow_schema != schema_of(&d.relation) {
            sql.push(format!(
                "create schema if not exists {}",
                shadow_schema
                    .iter()
                    .map(|p| quote_ident(dialect, p))
                    .collect::<Vec<_>>()
                    .join(".")
            ));
        }
        for (zone, what) in session_zone.get(*id).into_iter().flatten().rev() {
            let span = by_dataset[*id]
                .iter()
                .flat_map(|t| t.ranges.iter().copied())
                .fold(None, |acc: Option<(i64, i64)>, (a, b)| {
                    Some(acc.map_or((a, b), |(x, y)| (x.min(a), y.max(b))))
                });
            // Before anything, the shadow's schema included, is made.
            if let Some(check) =
                span.and_then(|span| super::table::session_zone_check(dialect, zone, span, what))
            {
                sql.insert(0, check);
            }
        }
        match known.get(*id) {
            Some(k) => {
                let table = |r: Result<Vec<String>, String>| {
                    r.map_err(|reason| PlanError::Table {
                        dataset: d.name.clone(),
                        reason,
                    })
                };
                // One snapshot: the check, the copy and its fingerprint see
                // production as one moment.
                sql.insert(0, super::table::begin_snapshot(dialect).to_string());
                sql.extend(super::table::check(dialect, &[k], "before the setup"));
                sql.extend(table(super::table::copy(
                    dialect,
                    k,
                    &shadow,
                    full && !keyed(id),
                    false,
                ))?);
                sql.extend(super::table::record_fingerprint(
                    dialect,
                    &d.relation,
                    &shadow,
                    swap_partition(id)
                        .as_ref()
                        .map(|(c, g, f, z)| (c.as_str(), *g, *f, z.as_deref())),
                    swap_filter(id).as_deref(),
                ));
                sql.push("commit".to_string());
            }
            None => sql.extend(create_copy(dialect, &shadow, &d.relation, full)),
        }
        setup.push(Setup {
            dataset: id.to_string(),
            shadow,
            sql,
        });
    }

    // The shadow and production relation each validation counts rows of,
    // quoted once per dataset.
    let quote_both = |d: &Dataset, shadow: &str| {
        (
            quote_relation(dialect, shadow),
            quote_relation(dialect, &d.relation),
        )
    };
    let quoted: HashMap<&str, (String, String)> = order
        .iter()
        .filter(|id| holds_rows(id))
        .filter_map(|id| g.dataset(id))
        .map(|d| (d.id.as_str(), quote_both(d, &shadow_of(d))))
        .collect();
    // Each task's commands and validations on all cores; the warnings are
    // then gathered in task order, as one task after another gives them.
    type Built = (DocTask, Option<String>, Option<String>);
    let built: Vec<Result<Option<Built>, PlanError>> = tasks
        .tasks
        .par_iter()
        .map(|t| -> Result<Option<Built>, PlanError> {
        let Some(d) = g.dataset(&t.dataset) else {
            return Ok(None);
        };
        // A command line is C strings: bash cut `$'...\x00...'` at the NUL,
        // and the client got half the statement.
        if d.relation.contains('\0') || d.name.contains('\0') {
            return Err(PlanError::NoCommand {
                dataset: d.name.replace('\0', "\\0"),
                reason: "its name holds a NUL character, which no command line or SQL client can carry; rename the table".to_string(),
            });
        }
        let node = g.index[&t.dataset];
        let mut reads = BTreeMap::new();
        for up in g.graph.neighbors_directed(node, Direction::Incoming) {
            let u = &g.graph[up];
            let relation = shadows
                .get(&u.relation)
                .cloned()
                .unwrap_or_else(|| u.relation.clone());
            reads.insert(u.id.clone(), relation);
        }
        let filter = filter_of(t);
        let shadow = shadow_of(d);
        let job = g.writer(&t.dataset);
        let (commands, note) = match job {
            Some(job) => super::executors::commands(
                g,
                &super::executors::TaskContext {
                    task: t,
                    dataset: d,
                    job,
                    shadow: &shadow,
                    shadows: &shadows,
                    filter: filter.as_deref(),
                    columns: columns_of_job(&t.dataset),
                    known: known.get(t.dataset.as_str()),
                    max_active_runs,
                    range: (&last_day, &last_day),
                    dbt_shadows: &dbt_shadows,
                    dbt_overlay: dbt_overlay.is_ok(),
                    dbt_target: &g.config.target.name,
                    dbt_vars: &g.config.vars,
                    grain: grain_of(&t.dataset),
                },
            )?,
            None => Default::default(),
        };
        // A body that can write where the overlay cannot check it refuses
        // the plan, whatever else would run the model.
        if job.is_some_and(|j| j.kind.is_dbt())
            && dbt_overlay.is_ok()
            && let Some(reason) = super::executors::dbt_body_refusal(d, job, !python, g.config.dialect)
        {
            return Err(PlanError::NoCommand {
                dataset: d.name.clone(),
                reason,
            });
        }
        let warning = match job.map(|j| j.kind) {
            Some(JobKind::Airflow) => Some(format!(
                "`{}` is an Airflow task: its SQL runs per date into the shadow `{}` (executor sql); the airflow2/airflow3 commands run the production task, which writes production, and are listed for reference only (see docs/plan.md, Executors)",
                d.name, shadow
            )),
            Some(k) if k.is_dbt() => match &dbt_overlay {
                Ok(_) => super::executors::dbt_refusal(d, &dbt_shadows),
                Err(why) => Some(format!(
                    "`{}` is a dbt model, and ripple cannot run its project through an overlay: {why}",
                    d.name
                )),
            },
            _ => None,
        };
        // A task no executor runs into its shadow would stop the plan after
        // the shadows are made (or, run by the Airflow CLIs, write
        // production): refused now, with the reason.
        if commands.sql.is_empty()
            && commands.dbt.is_none()
            && !matviews.contains(t.dataset.as_str())
        {
            return Err(PlanError::NoCommand {
                dataset: d.name.clone(),
                // The executor's own reason first: it says what to change.
                reason: note
                    .clone()
                    .or_else(|| warning.clone())
                    .unwrap_or_else(|| "no executor runs its job into a shadow".to_string()),
            });
        }
        let zone = zone_of(&t.dataset);
        let task = DocTask {
            commands,
            validations: if !holds_rows(&t.dataset) {
                Vec::new()
            } else {
                let computed;
                let relations = match quoted.get(t.dataset.as_str()) {
                    Some(q) => q,
                    None => {
                        computed = quote_both(d, &shadow);
                        &computed
                    }
                };
                validations(
                    g,
                    d,
                    (&relations.0, &relations.1),
                    filter.as_deref(),
                    partition
                        .get(t.dataset.as_str())
                        .and_then(|c| c.as_deref())
                        .map(|c| (c, grain_of(&t.dataset), format_of(&t.dataset), zone.as_deref())),
                    t,
                    options,
                )
                .map_err(|reason| PlanError::Table {
                    dataset: d.name.clone(),
                    reason,
                })?
            },
            writes: shadow,
            reads,
            task: t.clone(),
        };
        // A model's hooks do not run in the overlay (they would run against
        // production): the reviewer is told which.
        let note = note.or_else(|| {
            let hooked = job.is_some_and(|j| j.kind.is_dbt())
                && ["pre-hook", "post-hook", "pre_hook", "post_hook"]
                    .iter()
                    .any(|k| d.config.get(*k).is_some_and(|v| !v.is_null() && v != &serde_json::json!([])));
            hooked.then(|| {
                format!(
                    "`{}` has pre- or post-hooks: they do not run in the backfill, since they would run against production; run what they do beyond the model's own table yourself after the swap",
                    d.name
                )
            })
        });
        Ok(Some((task, note, warning)))
        })
        .collect();
    let mut warnings = Vec::new();
    // Each warning once, in the order tasks first give it (a set to ask, as
    // thousands of tasks may each bring one).
    let mut seen = std::collections::HashSet::new();
    let mut doc_tasks = Vec::with_capacity(built.len());
    for b in built {
        let Some((task, note, warning)) = b? else {
            continue;
        };
        for w in [note, warning].into_iter().flatten() {
            if seen.insert(w.clone()) {
                warnings.push(w);
            }
        }
        doc_tasks.push(task);
    }
    // A dataset named as wrong (the fix went into it) that the plan restates
    // by re-running a job reading no table (a seed or load script the
    // project's folders hold) would be overwritten by that run: said, as
    // the user may have fixed it by hand.
    for named in &impact.changed {
        let Some(job) = g.writer(named) else { continue };
        let restated = doc_tasks.iter().any(|t| &t.task.dataset == named);
        let node = g.index.get(named.as_str());
        let reads_none = node.is_some_and(|&n| {
            g.graph
                .neighbors_directed(n, Direction::Incoming)
                .next()
                .is_none()
        });
        if restated && reads_none {
            let name = g.dataset(named).map_or(named.as_str(), |d| d.name.as_str());
            let w = format!(
                "`{name}` is named as wrong, and the plan restates it by re-running `{}`, which writes it from no table (a load or seed script): if the fix went into `{name}` itself, that run overwrites it. If so, leave the script out of the jobs (`models:` in ripple.yml names the job folders) or plan from the tables it feeds",
                job.file
            );
            if seen.insert(w.clone()) {
                warnings.push(w);
            }
        }
    }

    // Each dataset's swap on all cores, in dataset order.
    let swaps: Vec<Result<Swap, PlanError>> = order
        .par_iter()
        .filter(|id| holds_rows(id) || matviews.contains(**id))
        .filter_map(|id| {
            let d = g.dataset(id)?;
            let ts = &by_dataset[*id];
            let depends_on = ts.iter().map(|t| t.id.clone()).collect();
            if matviews.contains(*id) {
                return Some(Ok(Swap {
                    dataset: id.to_string(),
                    depends_on,
                    sql: vec![super::table::refresh(dialect, &d.relation)],
                    finally: Vec::new(),
                    fires: Vec::new(),
                    refreshes: true,
                    summary: None,
                }));
            }
            let filter = swap_filter(id);
            let shadow = shadow_of(d);
            let Some(k) = known.get(*id) else {
                return Some(Ok(Swap {
                    dataset: id.to_string(),
                    depends_on,
                    sql: swap(
                        dialect,
                        &d.relation,
                        &shadow,
                        filter.as_deref(),
                        columns_of_job(id),
                        g.config.backfill.swap,
                    ),
                    finally: Vec::new(),
                    fires: Vec::new(),
                    refreshes: false,
                    summary: None,
                }));
            };
            let partition = swap_partition(id);
            let partition = partition
                .as_ref()
                .map(|(c, g, f, z)| (c.as_str(), *g, *f, z.as_deref()));
            let mut sql = vec![super::table::check_fingerprint(
                dialect,
                &d.relation,
                &shadow,
                partition,
                filter.as_deref(),
            )];
            let mut finally = Vec::new();
            match super::table::replace(
                dialect,
                k,
                &d.relation,
                &shadow,
                filter.as_deref(),
                super::table::Into::Production,
            ) {
                Some((now, gone)) => {
                    sql.extend(now);
                    finally = gone;
                }
                None => sql.extend(swap(
                    dialect,
                    &d.relation,
                    &shadow,
                    filter.as_deref(),
                    columns_of_job(id),
                    g.config.backfill.swap,
                )),
            }
            Some(Ok(Swap {
                dataset: id.to_string(),
                depends_on,
                sql,
                finally,
                fires: k.triggers(),
                refreshes: false,
                summary: Some(super::table::summary_query(
                    dialect,
                    &d.relation,
                    &shadow,
                    partition,
                    filter.as_deref(),
                )),
            }))
        })
        .collect();
    let swaps: Vec<Swap> = swaps.into_iter().collect::<Result<_, _>>()?;
    for s in &swaps {
        if !s.fires.is_empty()
            && let Some(d) = g.dataset(&s.dataset)
        {
            warnings.push(format!(
                "`{}` has triggers the swap fires on production: {}",
                d.name,
                s.fires.join("; ")
            ));
        }
    }
    // Production is locked against writers before any check; materialized
    // views over restated tables (not themselves in the plan) are
    // refreshed last, after every table they read.
    let locked: Vec<&str> = order
        .iter()
        .filter(|id| known.contains_key(**id))
        .filter_map(|id| g.dataset(id))
        .map(|d| d.relation.as_str())
        .collect();
    let planned: BTreeSet<&str> = order
        .iter()
        .filter_map(|id| g.dataset(id))
        .map(|d| d.relation.as_str())
        .collect();
    // Every materialized view reading a restated table, or reading one of
    // those (a view over a view), until none is left.
    let mut refresh: Vec<String> = Vec::new();
    let mut read: BTreeSet<String> = planned.iter().map(|r| r.to_string()).collect();
    loop {
        let more: Vec<String> = tables
            .all()
            .into_iter()
            .filter(|f| {
                f.kind == crate::sql::tables::RelationKind::MaterializedView
                    && !read.contains(&f.relation)
                    && f.reads.iter().any(|r| read.contains(r))
            })
            .map(|f| f.relation.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        for m in more {
            read.insert(m.clone());
            refresh.push(m);
        }
    }
    let refresh = matview_order(refresh, &tables);
    // Materialized views the plan's jobs make are refreshed after every
    // table's swap (rows gone from a referenced table go last of those),
    // upstream first; then those outside the plan.
    // Every table is checked once, under the lock, before any swap.
    let checked: Vec<&super::table::Known> = order.iter().filter_map(|id| known.get(*id)).collect();
    let extra = SwapExtras {
        lock: super::table::lock(dialect, &locked),
        check: super::table::check(dialect, &checked, "before the swap"),
        refresh: order
            .iter()
            .filter(|id| matviews.contains(**id))
            .filter_map(|id| g.dataset(id))
            .map(|d| d.relation.clone())
            .chain(refresh)
            .map(|m| super::table::refresh(dialect, &m))
            .collect(),
    };
    let swap_scripts = swap_scripts(dialect, &swaps, &extra);
    // Shadow views first: they read the shadow tables dropped after them.
    let mut drops: Vec<String> = order
        .iter()
        .rev()
        .filter(|id| !holds_rows(id))
        .filter_map(|id| g.dataset(id))
        .map(|d| drop_rowless(&d.id, &shadow_of(d)))
        .collect();
    // Fingerprints are the plan's own bookkeeping: dropped even when the
    // shadows are kept.
    let mut fingerprints = Vec::new();
    for id in order.iter().filter(|id| holds_rows(id)) {
        let Some(d) = g.dataset(id) else { continue };
        drops.push(drop_shadow(dialect, &shadow_of(d)));
        if known.contains_key(*id) {
            fingerprints.push(drop_shadow(
                dialect,
                &super::table::fingerprint_table(dialect, &shadow_of(d)),
            ));
        }
    }
    let keep = options.keep_shadows || g.config.backfill.keep_shadows;
    let (dbt_overlay, dbt_overlay_functions) = match dbt_overlay {
        Ok((lines, overlay_warnings)) if doc_tasks.iter().any(|t| t.commands.dbt.is_some()) => {
            warnings.extend(overlay_warnings);
            (lines, super::executors::DBT_OVERLAY_FUNCTIONS.to_string())
        }
        _ => (Vec::new(), String::new()),
    };
    Ok(PlanDocument {
        changed: impact.changed.clone(),
        assumed: tasks.assumed,
        setup,
        tasks: doc_tasks,
        swaps,
        swap_scripts,
        cleanup: if keep {
            fingerprints.clone()
        } else {
            drops.iter().chain(&fingerprints).cloned().collect()
        },
        rollback: drops.into_iter().chain(fingerprints).collect(),
        schedule: None,
        warnings,
        dbt_overlay,
        dbt_overlay_functions,
    })
}

/// Rows matching any of `filters` (none: `None`).
fn any_of(filters: Vec<String>) -> Option<String> {
    match filters.len() {
        0 => None,
        1 => filters.into_iter().next(),
        _ => Some(format!("({})", filters.join(") or ("))),
    }
}

/// What the swap phase does besides each dataset's swap.
struct SwapExtras {
    /// Locks production against writers, before any check.
    lock: Option<String>,
    /// Checks every table is the one the plan was written for.
    check: Option<String>,
    /// Refreshes materialized views outside the plan, after every swap.
    refresh: Vec<String>,
}

/// The swap phase: every swap in one transaction where the engine has
/// transactional DDL (the lock first, each swap's `finally` after every
/// swap in reverse order, materialized views refreshed last); else one
/// transaction per dataset (upstream first); engines without transactions
/// run each swap's single statement as is.
fn swap_scripts(dialect: SqlDialect, swaps: &[Swap], extra: &SwapExtras) -> Vec<Vec<String>> {
    use SqlDialect::*;
    if swaps.is_empty() {
        return Vec::new();
    }
    let wrap = |sql: Vec<String>| {
        let mut out = vec![begin(dialect).to_string()];
        out.extend(sql);
        out.push("commit".to_string());
        out
    };
    if transactional_ddl(dialect) {
        let mut all: Vec<String> = extra.lock.iter().chain(&extra.check).cloned().collect();
        // A materialized view's swap is its refresh, among `extra.refresh`.
        all.extend(
            swaps
                .iter()
                .filter(|s| !s.refreshes)
                .flat_map(|s| s.sql.clone()),
        );
        let mut last: Vec<String> = swaps.iter().rev().flat_map(|s| s.finally.clone()).collect();
        last.extend(extra.refresh.iter().cloned());
        // DuckDB checks a foreign key against the rows the transaction
        // started with: a referenced row cannot go in the transaction that
        // deleted the rows referencing it. It goes in the next one, which
        // finds production consistent either way (docs/plan.md).
        if dialect == DuckDb && !last.is_empty() {
            return vec![wrap(all), wrap(last)];
        }
        all.extend(last);
        return vec![wrap(all)];
    }
    swaps
        .iter()
        .map(|s| match dialect {
            Hive | Spark | Databricks => s.sql.clone(),
            _ if s.sql.len() == 1 => s.sql.clone(),
            _ => wrap(s.sql.clone()),
        })
        .collect()
}

/// The facts the plan reads: `tables:` and `--tables` first, then the DDL
/// of the project's SQL jobs (those writing a restated table, and any
/// Refuses a plan that restates a table whose rows are also another
/// table's (a partition and the table it is a partition of, or a child of
/// an inheritance) when the project reads or restates that other table:
/// its readers' tasks would read production's rows, wrong until the swap,
/// and the lineage does not follow (a report over the parent was left
/// wrong, exit 0).
fn partitions_apart(
    g: &LineageGraph,
    order: &[&str],
    tables: &crate::sql::tables::Tables,
) -> Result<(), PlanError> {
    let dialect = g.config.dialect;
    let restated: BTreeSet<String> = order
        .iter()
        .filter_map(|id| g.dataset(id))
        .map(|d| crate::sql::tables::fold(dialect, &d.relation))
        .collect();
    let children = |parent: &str| -> Vec<&crate::sql::tables::TableFacts> {
        tables
            .iter()
            .filter(|f| f.parents.iter().any(|p| p == parent))
            .collect()
    };
    for d in order.iter().filter_map(|id| g.dataset(id)) {
        let Some(facts) = tables.get(&crate::sql::tables::fold(dialect, &d.relation), dialect)
        else {
            continue;
        };
        // Every table sharing rows with it: its ancestors and descendants,
        // each with how it is related.
        let mut related: Vec<(String, bool)> = Vec::new();
        let mut up: Vec<String> = facts.parents.clone();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        while let Some(p) = up.pop() {
            if !seen.insert(p.clone()) {
                continue;
            }
            if let Some(f) = tables.get(&p, dialect) {
                up.extend(f.parents.iter().cloned());
            }
            related.push((p, true));
        }
        let mut down: Vec<String> = vec![facts.relation.clone()];
        while let Some(p) = down.pop() {
            for c in children(&p) {
                if seen.insert(c.relation.clone()) {
                    down.push(c.relation.clone());
                    related.push((c.relation.clone(), false));
                }
            }
        }
        for (other, parent) in related {
            let node = g
                .index
                .iter()
                .find(|(_, n)| crate::sql::tables::fold(dialect, &g.graph[**n].relation) == other)
                .map(|(_, n)| *n);
            let reader = node.and_then(|n| {
                g.graph
                    .neighbors_directed(n, Direction::Outgoing)
                    .map(|r| g.graph[r].name.clone())
                    .min()
            });
            let also_restated = restated.contains(&other);
            if reader.is_none() && !also_restated {
                continue;
            }
            let what = match &reader {
                Some(r) => format!("`{r}` reads `{other}`"),
                None => format!("the plan restates `{other}` too"),
            };
            let (how, todo) = if parent {
                (
                    "a partition (or inheriting child) of",
                    format!(
                        "Have the job write its rows through `{other}` (PostgreSQL puts each row in its partition): the plan then restates `{other}` and what reads it"
                    ),
                )
            } else {
                (
                    "the parent of",
                    format!(
                        "Have what reads `{other}` read `{}` instead",
                        facts.relation
                    ),
                )
            };
            return Err(PlanError::Table {
                dataset: d.name.clone(),
                reason: format!(
                    "the catalog ({}) lists `{}` as {how} `{other}`, and {what}: rows of one are rows of the other, which the lineage does not follow, so the plan's tasks would read production's rows of `{other}` from before the swap. {todo}",
                    facts.origin, facts.relation
                ),
            });
        }
    }
    Ok(())
}

/// Refuses a plan when the catalog lists a view (or materialized view)
/// over a restated table that no job of the project makes, and something
/// in the project reads it: the lineage stops at that view, so what reads
/// it is not restated (a report over a DBA's view was left wrong, exit 0).
fn catalog_views_read(
    g: &LineageGraph,
    order: &[&str],
    tables: &crate::sql::tables::Tables,
) -> Result<(), PlanError> {
    use crate::sql::tables::RelationKind;
    let restated: BTreeMap<String, &str> = order
        .iter()
        .filter_map(|id| g.dataset(id))
        .map(|d| (d.relation.to_ascii_lowercase(), d.name.as_str()))
        .collect();
    for f in tables.iter().filter(|f| f.kind != RelationKind::Table) {
        let Some(over) = f
            .reads
            .iter()
            .find_map(|r| restated.get(&r.to_ascii_lowercase()))
        else {
            continue;
        };
        let node = g
            .index
            .iter()
            .find(|(_, n)| g.graph[**n].relation.eq_ignore_ascii_case(&f.relation))
            .map(|(id, n)| (id, *n));
        let Some((id, n)) = node else { continue };
        if g.writer(id).is_some() {
            continue;
        }
        let readers: Vec<&str> = g
            .graph
            .neighbors_directed(n, Direction::Outgoing)
            .map(|r| g.graph[r].name.as_str())
            .collect();
        if let Some(first) = readers.first() {
            return Err(PlanError::Table {
                dataset: (*over).to_string(),
                reason: format!(
                    "the catalog ({}) lists `{}`, a {} over it that no job of the project makes, and `{first}`{} reads that {}: the lineage stops there, so what reads it would not be restated. Add the view's `create view` to a job the project reads (its readers then follow)",
                    f.origin,
                    f.relation,
                    if f.kind == RelationKind::View {
                        "view"
                    } else {
                        "materialized view"
                    },
                    if readers.len() > 1 {
                        format!(" (and {} more)", readers.len() - 1)
                    } else {
                        String::new()
                    },
                    if f.kind == RelationKind::View {
                        "view"
                    } else {
                        "materialized view"
                    },
                ),
            });
        }
    }
    Ok(())
}

/// that declares a key, a foreign key, a materialized view or a trigger).
fn project_tables(
    g: &LineageGraph,
    order: &[&str],
    options: &PlanOptions,
) -> crate::sql::tables::Tables {
    let dialect = g.config.dialect;
    let mut tables = options.tables.clone();
    let restated: BTreeSet<&str> = order
        .iter()
        .filter_map(|id| g.writers.get(*id))
        .flatten()
        .map(String::as_str)
        .collect();
    let wanted = |j: &crate::project::Job, sql: &str| {
        restated.contains(j.id.as_str()) || {
            let lower = sql.to_ascii_lowercase();
            [
                "references",
                "materialized",
                "trigger",
                "unique",
                "primary key",
                "alter table",
            ]
            .iter()
            .any(|w| lower.contains(w))
        }
    };
    let facts: Vec<Vec<crate::sql::tables::TableFacts>> = g
        .jobs
        .values()
        .collect::<Vec<_>>()
        .par_iter()
        .map(|j| match (j.kind, j.sql.as_deref()) {
            (JobKind::Sql, Some(sql)) if wanted(j, sql) => {
                crate::sql::tables::facts_from_ddl(sql, dialect, &j.file)
            }
            _ => Vec::new(),
        })
        .collect();
    for f in facts {
        tables.add_ddl(f);
    }
    tables
}

/// `views` ordered so that one reading another of them comes after it.
fn matview_order(mut views: Vec<String>, tables: &crate::sql::tables::Tables) -> Vec<String> {
    views.sort();
    let mut out: Vec<String> = Vec::new();
    while !views.is_empty() {
        let ready = views
            .iter()
            .position(|v| {
                let reads = tables
                    .all()
                    .into_iter()
                    .find(|f| f.relation == *v)
                    .map(|f| f.reads.clone())
                    .unwrap_or_default();
                !reads.iter().any(|r| r != v && views.contains(r))
            })
            .unwrap_or(0);
        out.push(views.remove(ready));
    }
    out
}

/// The key rows are unique by, from ripple.yml or the dbt config.
fn unique_key(g: &LineageGraph, d: &Dataset) -> Vec<String> {
    match d
        .settings(&g.config)
        .map(|c| c.unique_key.clone())
        .filter(|k| !k.is_empty())
    {
        Some(k) => k,
        None => d
            .config
            .get("unique_key")
            .and_then(|v| v.as_str())
            .map(|k| vec![k.to_string()])
            .unwrap_or_default(),
    }
}

/// Refuses shadow names that are production relations: a pattern without
/// `{table}`, or one that names a table of the project.
fn check_shadows(
    g: &LineageGraph,
    order: &[&str],
    shadow_of: &impl Fn(&Dataset) -> String,
) -> Result<(), PlanError> {
    // PostgreSQL keeps `mart."Daily"` and `mart.daily` apart (ripple
    // prints unquoted names folded); elsewhere names are compared folded.
    let key_of = |r: &str| {
        if g.config.dialect == SqlDialect::Postgres {
            r.to_string()
        } else {
            r.to_lowercase()
        }
    };
    let production: BTreeSet<String> = g
        .graph
        .node_weights()
        .map(|d| key_of(&d.relation))
        .collect();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for id in order {
        let Some(d) = g.dataset(id) else { continue };
        let shadow = shadow_of(d);
        let key = key_of(&shadow);
        // A shadow without a schema lands wherever each reader's default
        // is: the plan's SQL in the session's schema, dbt in the model's.
        let parts = crate::sql::rewrite::relation_parts(&shadow).len();
        if parts < 2 && crate::sql::rewrite::relation_parts(&d.relation).len() >= 2 {
            return Err(PlanError::UnqualifiedShadow {
                dataset: d.name.clone(),
                shadow,
            });
        }
        if shadow.trim().is_empty() || production.contains(&key) {
            return Err(PlanError::BadShadow {
                dataset: d.name.clone(),
                shadow,
            });
        }
        if let Some(other) = seen.insert(key, d.name.clone()) {
            return Err(PlanError::BadShadow {
                dataset: format!("{} and {other}", d.name),
                shadow,
            });
        }
    }
    Ok(())
}

/// Refuses a plan that would name a relation longer than the engine keeps:
/// PostgreSQL cut `<55 b>__backfill` to an unrelated production table's
/// name, which the setup dropped, and a 63-byte table's shadow to the table
/// itself, which `rollback` dropped. Checked: each production name, its
/// shadow, and the table a renaming swap moves production to.
fn check_name_lengths(
    g: &LineageGraph,
    order: &[&str],
    shadow_of: &impl Fn(&Dataset) -> String,
) -> Result<(), PlanError> {
    let Some(limit) = super::sql::max_name_bytes(g.config.dialect) else {
        return Ok(());
    };
    let long = |relation: &str| {
        crate::sql::rewrite::relation_parts(relation)
            .into_iter()
            .find(|p| p.len() > limit)
    };
    for id in order {
        let Some(d) = g.dataset(id) else { continue };
        let shadow = shadow_of(d);
        let production = crate::sql::rewrite::relation_parts(&d.relation);
        let last = production.last().cloned().unwrap_or_default();
        // Work, scratch and fingerprint tables are kept short by
        // `derived_name`; the names a person reads must be as written.
        let mut names = vec![d.relation.clone(), shadow];
        if g.config.backfill.swap == crate::config::SwapMode::Rename {
            names.push(format!("{last}__replaced"));
        }
        if let Some(part) = names.iter().find_map(|n| long(n)) {
            return Err(PlanError::NameTooLong {
                dataset: d.name.clone(),
                name: part,
                limit,
            });
        }
    }
    Ok(())
}

/// Whether `sql` (lower-case) names `column` as a word of its own: not as
/// part of a longer name (`ordered_at` in `reordered_at`).
fn names_word(sql: &str, column: &str) -> bool {
    let column = column.to_ascii_lowercase();
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    sql.match_indices(&column).any(|(at, _)| {
        !sql[..at].chars().next_back().is_some_and(word)
            && !sql[at + column.len()..].chars().next().is_some_and(word)
    })
}

/// Whether `validate` (placeholders filled with stand-ins) is one query
/// that only reads: else why not. One once held `delete from` production
/// and `drop table`, run verbatim before the swap.
fn read_only_query(validate: &str, dialect: SqlDialect) -> Result<(), String> {
    use sqlparser::ast::{Query, SetExpr, Statement, Visit, Visitor};
    use std::ops::ControlFlow;
    let sql = validate
        .replace("{table}", "ripple_shadow")
        .replace("{partition_filter}", "1 = 1")
        .replace("{from}", "2000-01-01")
        .replace("{to}", "2000-01-01");
    let statements = sqlparser::parser::Parser::parse_sql(&*dialect.parser_dialect(), &sql)
        .map_err(|e| format!("does not parse ({e})"))?;
    let [Statement::Query(query)] = statements.as_slice() else {
        return Err(match statements.len() {
            1 => "is not a query".to_string(),
            n => format!("holds {n} statements"),
        });
    };
    /// Finds a part of a query that writes: a data-modifying CTE or
    /// `select ... into`, which makes a table.
    struct Writes;
    impl Visitor for Writes {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            // A row lock (`for update`, `for share`) makes production's
            // own writers wait on the validation.
            let writes = !q.locks.is_empty()
                || match &*q.body {
                    SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) => true,
                    SetExpr::Merge(_) => true,
                    SetExpr::Select(s) => s.into.is_some(),
                    _ => false,
                };
            if writes {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    match query.visit(&mut Writes) {
        ControlFlow::Break(()) => Err(
            "writes or locks (a data-modifying CTE, `select into`, `for update` / `for share`)"
                .to_string(),
        ),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// The dataset's own `validate` query (placeholders filled) and the
/// built-in checks not turned off: non-empty where production is
/// non-empty, row count within a tolerance of production (a partition
/// empty in production passes), unique key when one is declared.
#[allow(clippy::too_many_arguments)]
fn validations(
    g: &LineageGraph,
    d: &Dataset,
    (s, p): (&str, &str),
    filter: Option<&str>,
    partition: Option<(&str, Grain, KeyFormat, Option<&str>)>,
    t: &PlanTask,
    options: &PlanOptions,
) -> Result<Vec<Validation>, String> {
    use crate::config::RowCount;
    let dialect = g.config.dialect;
    let f = filter.unwrap_or("1 = 1");
    let cfg = d.settings(&g.config);
    let checks = [&g.config.backfill.checks]
        .into_iter()
        .chain(cfg.map(|c| &c.checks));
    let (mut non_empty, mut row_count, mut unique) = (true, Some(ROW_COUNT_TOLERANCE), true);
    for c in checks {
        non_empty = c.non_empty.unwrap_or(non_empty);
        unique = c.unique_key.unwrap_or(unique);
        match c.row_count {
            Some(RowCount::Enabled(false)) => row_count = None,
            Some(RowCount::Enabled(true)) => {
                row_count = row_count.or(Some(ROW_COUNT_TOLERANCE));
            }
            Some(RowCount::Tolerance(x)) => row_count = Some(x),
            None => {}
        }
    }
    if let Some(x) = options.row_count_tolerance {
        row_count = Some(x);
    }
    let skip = |c: Check| options.skip_checks.contains(&c);
    let span = match (&t.from, &t.to) {
        (Some(a), Some(b)) => format!("partitions {a}..{b}"),
        _ => "the whole table".to_string(),
    };
    let counts = format!(
        "select '{span}: shadow ' || cast((select count(*) from {s} where {f}) as varchar) || ' rows, production ' || cast((select count(*) from {p} where {f}) as varchar) || ' rows'"
    );
    let mut out = Vec::new();
    if let Some(v) = cfg.and_then(|c| c.validate.as_deref()) {
        let sql = super::sql::fill_placeholders(
            v,
            &[
                ("table", s),
                ("partition_filter", f),
                ("from", t.from.as_deref().unwrap_or("")),
                ("to", t.to.as_deref().unwrap_or("")),
            ],
        );
        // Checked again as it will run: a placeholder inside a quoted name
        // (`as "a{partition_filter}"`) puts the filter's quoted column
        // name outside quotes, and a column named `; delete from t; --`
        // once ran as a statement of its own.
        read_only_query(&sql, dialect).map_err(|why| {
            format!(
                "its `validate` in ripple.yml, with its placeholders filled, {why}: put `{{table}}` and `{{partition_filter}}` where a table and a condition go, never inside quotes"
            )
        })?;
        out.push(Validation {
            check: "custom".to_string(),
            sql,
            detail: None,
        });
    }
    if non_empty && !skip(Check::NonEmpty) {
        // Partition by partition too: a partition production has rows in
        // and the shadow has none was emptied (a job that rewrites only "the
        // last 3 days" of its table, run into an empty one, once kept 3 of
        // 31 days with the row count skipped, and the range as a whole had
        // rows).
        let emptied = partition.map(|(column, grain, format, zone)| {
            let k = super::sql::partition_key(dialect, column, grain, format, zone);
            format!(
                "(select p.k from (select distinct {k} as k from {p} where {f}) p where not exists (select 1 from {s} where ({f}) and {k} = p.k)) emptied"
            )
        });
        let sql = match &emptied {
            Some(e) => format!(
                "select (select count(*) from {s} where {f}) > 0 and (select count(*) from {e}) = 0"
            ),
            None => format!("select (select count(*) from {s} where {f}) > 0"),
        };
        let partitions = emptied.as_ref().map_or(String::new(), |e| {
            format!(
                " when (select count(*) from {e}) > 0 then 'partition ' || (select min(cast(k as varchar)) from {e}) || ': shadow 0 rows, production has rows: the rebuild emptied it. Are its source rows there (an upstream that lost them)? Does the job rewrite only part of its table each run? Skip the check (--skip-check non-empty) only if the fix empties it'"
            )
        });
        out.push(Validation {
            check: "non_empty".to_string(),
            // Nothing on either side is a failure too: a filter that matches
            // no row at all (a partition key in a format ripple did not
            // expect) would otherwise restate nothing and pass.
            sql,
            detail: Some(format!(
                "select case when (select count(*) from {p} where {f}) = 0 then '{span}: the partition filter matches no row in the shadow nor in production: check the partition column and its format (docs/plan.md), or skip the check (--skip-check non-empty) if these partitions are truly empty'{partitions} else '{span}: shadow 0 rows, production ' || cast((select count(*) from {p} where {f}) as varchar) || ' rows: are the source rows of these partitions there (an upstream that lost them)?' end"
            )),
        });
    }
    if let Some(tol) = row_count.filter(|_| !skip(Check::RowCount)) {
        out.push(match partition {
            // Partition by partition, rows lost: one empty in production
            // (late data) or grown in the shadow (restored rows) passes, one
            // that lost more than the tolerance of its rows does not.
            Some((column, grain, format, zone)) => {
                let k = super::sql::partition_key(dialect, column, grain, format, zone);
                let off = format!(
                    "(select p.k, p.n as production, coalesce(s.n, 0) as shadow from (select {k} as k, count(*) as n from {p} where {f} group by 1) p left join (select {k} as k, count(*) as n from {s} where {f} group by 1) s on s.k = p.k where coalesce(s.n, 0) < (1 - {tol}) * p.n) off"
                );
                Validation {
                    check: "row_count".to_string(),
                    sql: format!("select count(*) = 0 from {off}"),
                    detail: Some(format!(
                        "select coalesce(min('partition ' || cast(k as varchar) || ': shadow ' || cast(shadow as varchar) || ' rows, production ' || cast(production as varchar) || ' rows (the shadow may lose at most {tol} of them)'), 'no partition lost rows') from {off}"
                    )),
                }
            }
            None => Validation {
                check: "row_count".to_string(),
                sql: format!(
                    "select (select count(*) from {s} where {f}) >= (1 - {tol}) * (select count(*) from {p} where {f})"
                ),
                detail: Some(counts.clone()),
            },
        });
    }
    let key = unique_key(g, d);
    if !key.is_empty() && unique && !skip(Check::UniqueKey) {
        let cols = key
            .iter()
            .map(|c| quote_ident(dialect, c))
            .collect::<Vec<_>>()
            .join(", ");
        let dupes = format!(
            "(select {cols} from {s} where {f} group by {cols} having count(*) > 1) duplicates"
        );
        out.push(Validation {
            check: "unique_key".to_string(),
            sql: format!("select count(*) = 0 from {dupes}"),
            detail: Some(format!(
                "select '{span}: ' || cast(count(*) as varchar) || ' keys appear more than once in the shadow' from {dupes}"
            )),
        });
    }
    Ok(out)
}

/// The subtotal grouping (`rollup`, `cube`, `grouping sets`, `with
/// rollup`) a job's SQL totals `column` over, if any: one naming it, or an
/// expression that may be it under another name.
fn subtotals(sql: &str, dialect: crate::sql::SqlDialect, column: &str) -> Option<&'static str> {
    use sqlparser::ast::{Expr, GroupByExpr, GroupByWithModifier, Select, Visit, Visitor};
    use std::ops::ControlFlow;
    struct Find<'c> {
        column: &'c str,
        found: Option<&'static str>,
    }
    impl Find<'_> {
        fn over<'e>(&mut self, form: &'static str, exprs: impl IntoIterator<Item = &'e Expr>) {
            let totals = |e: &Expr| match e {
                Expr::Identifier(i) => i.value.eq_ignore_ascii_case(self.column),
                Expr::CompoundIdentifier(p) => p
                    .last()
                    .is_some_and(|i| i.value.eq_ignore_ascii_case(self.column)),
                Expr::Value(_) => false,
                _ => true,
            };
            if exprs.into_iter().any(totals) {
                self.found = Some(form);
            }
        }
    }
    impl Visitor for Find<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Rollup(sets) => self.over("rollup", sets.iter().flatten()),
                Expr::Cube(sets) => self.over("cube", sets.iter().flatten()),
                Expr::GroupingSets(sets) => self.over("grouping sets", sets.iter().flatten()),
                _ => {}
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
            if let GroupByExpr::Expressions(exprs, modifiers) = &s.group_by {
                for m in modifiers {
                    match m {
                        GroupByWithModifier::Rollup => self.over("with rollup", exprs),
                        GroupByWithModifier::Cube => self.over("with cube", exprs),
                        _ => {}
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut find = Find {
        column,
        found: None,
    };
    crate::sql::for_each_statement(sql, dialect, |_, s| {
        let _ = s.visit(&mut find);
    });
    find.found
}
