//! Impact: given datasets that are wrong for a time range, which downstream
//! datasets are affected, and exactly which of their partitions.
//!
//! Propagation runs in topological order over the lineage graph and unions
//! intervals (DESIGN.md, Concepts). Downstream partition `p` is affected iff
//! the upstream time it reads — `[p.start + lo·g, p.end + hi·g)` for a
//! window `[lo, hi]` in the upstream grain `g`, identity being `[0, 0]` —
//! meets the upstream's affected time. Unpartitioned datasets are affected
//! whole; an affected unpartitioned upstream (or an `all` edge) affects
//! every partition of its downstream, from its `start` (or unbounded) up to
//! `--as-of`; a `none` edge stops propagation and is reported.

mod infer;
mod key_expr;
mod partition;
mod time_model;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::Serialize;

pub use partition::{
    JobOutput, PartitionColumn, PartitionColumns, configured as configured_partition, job_output,
    job_output_known, plain_name,
};
pub use time_model::{DatasetTime, EdgeTime, TimeFacts, TimeModel, TimeModelError};

use crate::graph::{LineageGraph, Reach, Semantics, column_consumers};
use crate::text::did_you_mean;
use crate::time::{Grain, Hour, IntervalSet, TimeKey, TimeMapping, UNBOUNDED};

/// What changed.
#[derive(Debug, Clone)]
pub struct ImpactRequest {
    /// Changed datasets, by name, relation or node id.
    pub changed: Vec<String>,
    /// First wrong partition (inclusive).
    pub from: TimeKey,
    /// Last wrong partition (inclusive).
    pub to: TimeKey,
    /// Exclusive upper bound of "all history".
    pub as_of: Hour,
    /// Only these columns of the changed datasets are wrong (empty: all of
    /// them). Downstream datasets that read none of them, as values or to
    /// decide rows, are left out.
    pub columns: Vec<String>,
}

/// Why an impact cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImpactError {
    /// A changed dataset that is not in the project.
    #[error("`{name}` is not a dataset of the project{hint}")]
    UnknownDataset {
        /// As given.
        name: String,
        /// "; did you mean ..." or empty.
        hint: String,
    },
    /// `--from` later than `--to`.
    #[error("--from {from} is after --to {to}")]
    FromAfterTo {
        /// As given.
        from: String,
        /// As given.
        to: String,
    },
    /// Hour keys for a dataset partitioned coarser than hours.
    #[error("`{dataset}` is partitioned by {grain}: give dates (2026-01-10), not hours ({key})")]
    HourOnCoarserGrain {
        /// The dataset.
        dataset: String,
        /// Its grain.
        grain: Grain,
        /// The key given.
        key: String,
    },
    /// `--columns` names a column no changed dataset has.
    #[error(
        "--columns: `{column}` is not a column of {datasets} (its columns: {known}){hint}; name the wrong columns as the dataset has them"
    )]
    UnknownColumn {
        /// As given.
        column: String,
        /// The changed datasets, quoted and joined.
        datasets: String,
        /// Their known columns, joined.
        known: String,
        /// "; did you mean ..." or empty.
        hint: String,
    },
    /// The graph has a cycle.
    #[error("the lineage graph has a cycle through `{0}`; run `ripple check`")]
    Cycle(String),
    /// The declared time facts are wrong.
    #[error(transparent)]
    TimeModel(#[from] TimeModelError),
}

/// One affected dataset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AffectedDataset {
    /// Node id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Relation.
    pub relation: String,
    /// Grain.
    pub grain: Grain,
    /// Rebuilt whole (unpartitioned).
    pub full: bool,
    /// Affected back to the beginning of time (no `start` known).
    pub unbounded: bool,
    /// Affected partitions as inclusive key ranges, coalesced.
    pub intervals: Vec<KeyRange>,
    /// How many partitions (1 for a full rebuild; those after the first
    /// when unbounded).
    pub partitions: u64,
    /// Why it is affected, one line per cause.
    pub reasons: Vec<String>,
    /// With `--explain`: each edge that contributed, with its mapping and
    /// the evidence for it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explain: Vec<String>,
    /// With `--columns`: its affected columns, `*` when all of them (its
    /// rows may change, or ripple cannot tell which columns).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// The affected hours as `[from, to)` spans on partition boundaries
    /// (empty when rebuilt whole), for pictures; `intervals` says the same
    /// in keys.
    #[serde(skip)]
    pub spans: Vec<(Hour, Hour)>,
    /// When widened to its whole history: the spans its upstreams made
    /// wrong, before widening.
    #[serde(skip)]
    pub widened_from: Option<Vec<(Hour, Hour)>>,
}

/// An inclusive range of partition keys; `from` is `None` when unbounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyRange {
    /// First partition key.
    pub from: Option<String>,
    /// Last partition key.
    pub to: String,
}

/// A dataset a `none` edge kept out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stopped {
    /// The dataset not affected.
    pub dataset: String,
    /// The edge, `upstream → downstream`.
    pub edge: String,
    /// Why.
    pub why: String,
}

/// The result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Impact {
    /// Changed datasets (ids).
    pub changed: Vec<String>,
    /// `--as-of`, as a date.
    pub as_of: String,
    /// Affected datasets, changed ones included, in topological order.
    pub datasets: Vec<AffectedDataset>,
    /// Datasets kept out by `none` edges.
    pub stopped: Vec<Stopped>,
    /// With `--columns`: the wrong columns, and how many downstream
    /// datasets were left out because they read none of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pruned: Option<Pruned>,
}

/// What `--columns` left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pruned {
    /// The wrong columns of the changed datasets.
    pub columns: Vec<String>,
    /// Downstream datasets that read the changed datasets but none of the
    /// wrong columns.
    pub left_out: usize,
}

/// Affected time of one dataset while propagating.
#[derive(Debug, Clone, Default)]
struct State {
    time: IntervalSet,
    widened_from: Option<Vec<(Hour, Hour)>>,
    full: bool,
    reasons: Vec<String>,
    explain: Vec<String>,
}

/// Finds the dataset `name` names (name, relation or id).
pub fn find_dataset(g: &LineageGraph, name: &str) -> Result<NodeIndex, ImpactError> {
    if let Some(&n) = g.index.get(name) {
        return Ok(n);
    }
    let lower = name.to_lowercase();
    g.graph
        .node_indices()
        .find(|&n| g.graph[n].answers_to(name) || g.graph[n].answers_to(&lower))
        .ok_or_else(|| {
            let names = g.graph.node_weights().map(|d| d.name.as_str());
            let hint = did_you_mean(name, names)
                .map(crate::text::mean_hint)
                .unwrap_or_default();
            ImpactError::UnknownDataset {
                name: name.to_string(),
                hint,
            }
        })
}

/// The datasets `request` names as changed: each name a dataset, or else a
/// selector (`tag:raw`, `raw.*`); sorted, once each.
pub fn changed_nodes(
    g: &LineageGraph,
    request: &ImpactRequest,
) -> Result<Vec<NodeIndex>, ImpactError> {
    let mut changed: Vec<NodeIndex> = Vec::new();
    for c in &request.changed {
        match find_dataset(g, c) {
            Ok(n) => changed.push(n),
            Err(e) => match crate::graph::Selector::parse(c)
                .ok()
                .and_then(|s| s.select(g).ok())
            {
                Some(set) if !set.is_empty() && c.contains([':', '*', '+', '@', ' ', ',']) => {
                    changed.extend(set)
                }
                _ => return Err(e),
            },
        }
    }
    changed.sort();
    changed.dedup();
    Ok(changed)
}

/// Computes the impact of `request` on `g`, whose request-independent time
/// facts are `facts` ([`TimeFacts::build`]); returns the resolved facts too.
pub fn impact(
    g: &LineageGraph,
    facts: &TimeFacts,
    request: &ImpactRequest,
    explain: bool,
) -> Result<(Impact, TimeModel), ImpactError> {
    if request.from.start > request.to.start {
        return Err(ImpactError::FromAfterTo {
            from: crate::time::display(request.from.start),
            to: crate::time::display(request.to.start),
        });
    }
    let changed = changed_nodes(g, request)?;
    let order = facts
        .order()
        .ok_or_else(|| ImpactError::Cycle(facts.cycle_at(g)))?;
    // Only the changed datasets and what is downstream of them can be
    // affected: the rest of the graph is not looked at.
    let mut reach = vec![false; g.graph.node_count()];
    let mut stack: Vec<NodeIndex> = changed.clone();
    while let Some(n) = stack.pop() {
        if !std::mem::replace(&mut reach[n.index()], true) {
            stack.extend(g.graph.neighbors_directed(n, Direction::Outgoing));
        }
    }
    let downstream = reach.iter().filter(|r| **r).count() - changed.len();
    check_columns(g, &changed, &request.columns)?;
    let columns =
        (!request.columns.is_empty()).then(|| column_reach(g, &changed, &request.columns));
    if let Some(c) = &columns {
        // Only what the wrong columns reach.
        reach.iter_mut().for_each(|r| *r = false);
        for &n in changed.iter().chain(&c.affected) {
            reach[n.index()] = true;
        }
    }
    let order: Vec<NodeIndex> = order.iter().copied().filter(|n| reach[n.index()]).collect();
    let key_grain = if request.from.is_hour || request.to.is_hour {
        Grain::Hour
    } else {
        Grain::Day
    };
    let changed_grain: HashMap<NodeIndex, Grain> =
        changed.iter().map(|&n| (n, key_grain)).collect();
    let model = facts.resolve(g, &order, &changed_grain);
    let mut impact = propagate(
        g,
        &model,
        &order,
        &changed,
        request,
        explain,
        columns.as_ref(),
    )?;
    if columns.is_some() {
        impact.pruned = Some(Pruned {
            columns: request.columns.clone(),
            left_out: downstream.saturating_sub(impact.datasets.len() - changed.len()),
        });
    }
    Ok((impact, model))
}

/// Refuses `--columns` naming a column none of the changed datasets has,
/// where all their columns are known (declared, or what their job
/// outputs): a typo would leave every reader out and restate nothing.
fn check_columns(
    g: &LineageGraph,
    changed: &[NodeIndex],
    columns: &[String],
) -> Result<(), ImpactError> {
    if columns.is_empty() {
        return Ok(());
    }
    let mut known: BTreeSet<String> = BTreeSet::new();
    for &n in changed {
        let declared = &g.graph[n].columns;
        if !declared.is_empty() {
            known.extend(declared.iter().map(|c| c.to_lowercase()));
            continue;
        }
        let output = partition::job_output(g, n).filter(|o| o.lineage.unexpanded_stars.is_empty());
        match output {
            Some(o) if !o.lineage.columns.is_empty() => known.extend(
                o.lineage
                    .columns
                    .iter()
                    .map(|c| crate::sql::rewrite::unquote_ident(&c.name).to_lowercase()),
            ),
            // A dataset whose columns are unknown may have any.
            _ => return Ok(()),
        }
    }
    for c in columns {
        if !known.contains(&c.to_lowercase()) {
            let hint = crate::text::did_you_mean(c, known.iter().map(String::as_str))
                .map(crate::text::mean_hint)
                .unwrap_or_default();
            return Err(ImpactError::UnknownColumn {
                column: c.clone(),
                datasets: changed
                    .iter()
                    .map(|&n| format!("`{}`", g.graph[n].name))
                    .collect::<Vec<_>>()
                    .join(", "),
                known: known.iter().cloned().collect::<Vec<_>>().join(", "),
                hint,
            });
        }
    }
    Ok(())
}

/// Where the wrong `columns` of each changed dataset reach, merged.
fn column_reach(g: &LineageGraph, changed: &[NodeIndex], columns: &[String]) -> Reach {
    let mut sem = Semantics::new(g).without_star_expansion();
    let wrong: BTreeSet<String> = columns.iter().map(|c| c.to_lowercase()).collect();
    let mut out = Reach::default();
    for &n in changed {
        let r = column_consumers(&mut sem, n, wrong.clone());
        out.affected.extend(r.affected);
        out.possibly.extend(r.possibly);
        out.edges.extend(r.edges);
        for (m, cols) in r.columns {
            match (out.columns.get_mut(&m), cols) {
                (Some(Some(have)), Some(more)) => have.extend(more),
                (Some(have), None) => *have = None,
                (Some(None), Some(_)) => {}
                (None, cols) => {
                    out.columns.insert(m, cols);
                }
            }
        }
        for (m, why) in r.why {
            out.why.entry(m).or_default().extend(why);
        }
    }
    // A changed dataset reached from another is affected whole.
    for &n in changed {
        out.affected.remove(&n);
        out.columns.remove(&n);
    }
    out
}

/// The propagation itself, on resolved time facts (the brute-force oracle in
/// the tests checks this against partition-by-partition evaluation).
pub fn propagate(
    g: &LineageGraph,
    model: &TimeModel,
    order: &[NodeIndex],
    changed: &[NodeIndex],
    request: &ImpactRequest,
    explain: bool,
    columns: Option<&Reach>,
) -> Result<Impact, ImpactError> {
    let as_of = request.as_of;
    let mut states: HashMap<NodeIndex, State> = HashMap::new();
    let mut stopped: BTreeMap<NodeIndex, Stopped> = BTreeMap::new();
    for &n in changed {
        let t = &model.datasets[&n];
        if (request.from.is_hour || request.to.is_hour)
            && !matches!(t.grain, Grain::Hour | Grain::None)
        {
            return Err(ImpactError::HourOnCoarserGrain {
                dataset: g.graph[n].name.clone(),
                grain: t.grain,
                key: crate::time::display(request.from.start),
            });
        }
        let mut s = State::default();
        if t.grain == Grain::None {
            s.full = true;
        } else {
            s.time = IntervalSet::single(request.from.start, request.to.end())
                .align(t.grain)
                .clamp(UNBOUNDED, t.grain.ceil(as_of));
        }
        s.reasons.push("changed".to_string());
        states.insert(n, s);
    }
    for &n in order {
        let t = &model.datasets[&n];
        let mut incoming: Vec<_> = g.graph.edges_directed(n, Direction::Incoming).collect();
        incoming.sort_by(|a, b| g.graph[a.source()].id.cmp(&g.graph[b.source()].id));
        for e in incoming {
            let u = e.source();
            let Some(up) = states.get(&u) else { continue };
            // With --columns, only edges that carry a wrong column.
            if columns.is_some_and(|c| !c.edges.contains(&(u, n))) {
                continue;
            }
            if up.time.is_empty() && !up.full {
                continue;
            }
            let et = &model.edges[&e.id()];
            let up_name = &g.graph[u].name;
            if et.mapping == TimeMapping::None {
                stopped.insert(
                    n,
                    Stopped {
                        dataset: g.graph[n].name.clone(),
                        edge: format!("{up_name} → {}", g.graph[n].name),
                        why: format!("the edge maps time `none` ({})", et.source),
                    },
                );
                continue;
            }
            let up_grain = model.datasets[&u].grain;
            let (contribution, full, how) = contribution(up, up_grain, t, et.mapping, as_of);
            let up_time = up.time.clone();
            let up_full = up.full;
            let s = states.entry(n).or_default();
            s.full |= full;
            s.time.union(&contribution);
            s.reasons
                .push(format!("reads `{up_name}` ({}, {how})", et.mapping));
            if explain {
                let from = describe(up_grain, &up_time, up_full);
                let to = describe(t.grain, &contribution, full);
                s.explain.push(format!(
                    "{up_name} [{from}] → {} [{to}] via {} — mapping {} from {}",
                    g.graph[n].name,
                    g.graph[e.id()].via,
                    et.mapping,
                    et.source
                ));
            }
        }
        if let Some(s) = states.get_mut(&n)
            && let Some(why) = &t.non_idempotent
            && t.grain != Grain::None
        {
            s.widened_from = Some(s.time.align(t.grain).spans().to_vec());
            // Cannot restate part of it: all of its history is affected.
            s.time
                .add(t.start.unwrap_or(UNBOUNDED), t.grain.ceil(as_of));
            s.reasons
                .push(format!("widened to its whole history: {why}"));
        }
    }
    let mut datasets = Vec::new();
    let mut partition_columns = PartitionColumns::default();
    for &n in order {
        let Some(s) = states.remove(&n) else { continue };
        stopped.remove(&n);
        let d = &g.graph[n];
        let t = &model.datasets[&n];
        let full = s.full || t.grain == Grain::None;
        let time = if full { IntervalSet::new() } else { s.time };
        let unbounded = time.spans().first().is_some_and(|&(a, _)| a == UNBOUNDED);
        let intervals = time
            .spans()
            .iter()
            .map(|&(a, b)| KeyRange {
                from: (a != UNBOUNDED).then(|| t.grain.key(a)),
                to: t.grain.key(t.grain.floor(b - 1)),
            })
            .collect();
        let partitions = if full { 1 } else { time.partitions(t.grain) };
        let mut reasons = s.reasons;
        let mut explain_lines = Vec::new();
        if explain {
            explain_lines.push(format!("grain {} from {}", t.grain, t.grain_source));
            if let Some(start) = t.start {
                explain_lines.push(format!("starts {}", t.grain.key(t.grain.floor(start))));
            }
            if !full {
                match partition_columns.of(g, n) {
                    Some(p) => explain_lines.push(format!(
                        "partition column `{}` from {}",
                        p.column, p.evidence
                    )),
                    None => explain_lines.push(
                        "partition column unknown: a plan cannot swap its partitions in; set `partition_column` in ripple.yml".to_string(),
                    ),
                }
            }
            explain_lines.extend(s.explain);
            if let Some(why) = columns.and_then(|c| c.why.get(&n)) {
                explain_lines.extend(why.iter().map(|w| format!("columns: {w}")));
            }
        }
        let affected_columns: Vec<String> = match columns {
            None => Vec::new(),
            Some(_) if changed.contains(&n) => request.columns.clone(),
            Some(c) => match c.columns.get(&n) {
                Some(Some(cols)) => cols.iter().cloned().collect(),
                _ => vec!["*".to_string()],
            },
        };
        if full && t.grain == Grain::None {
            reasons.push(format!("unpartitioned: rebuilt whole ({})", t.grain_source));
        }
        if unbounded {
            reasons.push(
                "unbounded: no `start` is known; set one in ripple.yml to bound the backfill"
                    .to_string(),
            );
        }
        datasets.push(AffectedDataset {
            id: d.id.clone(),
            name: d.name.clone(),
            relation: d.relation.clone(),
            grain: t.grain,
            full,
            unbounded,
            intervals,
            partitions,
            reasons,
            explain: explain_lines,
            columns: affected_columns,
            spans: time.spans().to_vec(),
            widened_from: if full { None } else { s.widened_from },
        });
    }
    Ok(Impact {
        changed: changed.iter().map(|&n| g.graph[n].id.clone()).collect(),
        as_of: Grain::Day.key(as_of),
        datasets,
        stopped: stopped.into_values().collect(),
        pruned: None,
    })
}

/// What an affected upstream does to a downstream through one edge:
/// (affected time, rebuilt whole, how it was computed).
fn contribution(
    up: &State,
    up_grain: Grain,
    down: &DatasetTime,
    mapping: TimeMapping,
    as_of: Hour,
) -> (IntervalSet, bool, &'static str) {
    if down.grain == Grain::None {
        return (IntervalSet::new(), true, "rebuilt whole");
    }
    let limit = down.grain.ceil(as_of);
    let first = down.start.map_or(UNBOUNDED, |s| down.grain.floor(s));
    let everything = IntervalSet::single(first, limit);
    if up.full || up_grain == Grain::None {
        return (everything, false, "upstream rebuilt whole: every partition");
    }
    let (lo, hi) = match mapping {
        TimeMapping::All => return (everything, false, "every partition"),
        TimeMapping::Identity => (0, 0),
        TimeMapping::Window(lo, hi) => (lo, hi),
        TimeMapping::None => return (IntervalSet::new(), false, "stopped"),
    };
    // A window reaching all of time one way (a running total, `unbounded
    // following`) is not walked a million partitions: it ends at the
    // dataset's first partition, or at --as-of.
    let u = infer::UNBOUNDED;
    if lo <= -u && hi >= u {
        return (everything, false, "every partition: it reads all of time");
    }
    let (lo_n, hi_n) = (if lo <= -u { 0 } else { lo }, if hi >= u { 0 } else { hi });
    let mut out = IntervalSet::new();
    for &(a, b) in up.time.spans() {
        if let Some((s0, s1)) = window_range(down.grain, up_grain, lo_n, hi_n, a, b) {
            let from = if hi >= u { first } else { s0 };
            let to = if lo <= -u { limit } else { down.grain.next(s1) };
            out.add(from, to);
        }
    }
    (
        out.clamp(first, limit),
        false,
        "partitions whose reads meet it",
    )
}

/// Corrections of the first guess, at most: a calendar month moved by a
/// whole number of months is off by at most three days (72 hourly
/// partitions), so this bound is never reached on real calendars.
const STEP_LIMIT: usize = 1024;

/// The first and last downstream partition starts whose read window
/// `[shift(p.start, lo), shift(p.end, hi))` meets `[a, b)`. The window moves
/// monotonically with `p`, so the affected partitions are one run; its ends
/// are found from a guess and corrected a partition at a time (exact for
/// calendar months, whose lengths vary).
fn window_range(dg: Grain, ug: Grain, lo: i64, hi: i64, a: Hour, b: Hour) -> Option<(Hour, Hour)> {
    let reads_from = |s: Hour| ug.shift(s, lo);
    let reads_to = |s: Hour| ug.shift(dg.next(s), hi);
    let prev = |s: Hour| dg.floor(s.saturating_sub(1));
    let first = if a == UNBOUNDED {
        UNBOUNDED
    } else {
        let mut s = dg.floor(ug.shift(a, -hi));
        for _ in 0..STEP_LIMIT {
            if reads_to(prev(s)) > a {
                s = prev(s);
            } else {
                break;
            }
        }
        for _ in 0..STEP_LIMIT {
            if reads_to(s) <= a {
                s = dg.next(s);
            } else {
                break;
            }
        }
        s
    };
    let mut last = dg.floor(ug.shift(b, -lo));
    for _ in 0..STEP_LIMIT {
        if reads_from(dg.next(last)) < b {
            last = dg.next(last);
        } else {
            break;
        }
    }
    for _ in 0..STEP_LIMIT {
        if reads_from(last) >= b {
            last = prev(last);
        } else {
            break;
        }
    }
    (first <= last).then_some((first, last))
}

fn describe(grain: Grain, time: &IntervalSet, full: bool) -> String {
    if full || grain == Grain::None {
        return "whole".to_string();
    }
    time.spans()
        .iter()
        .map(|&(a, b)| {
            let from = if a == UNBOUNDED {
                "…".to_string()
            } else {
                grain.key(a)
            };
            format!("{from}..{}", grain.key(grain.floor(b - 1)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
