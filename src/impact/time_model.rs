//! Where each dataset's grain and start, and each edge's time mapping, come
//! from — in this order: `ripple.yml`; dbt's own configs (microbatch
//! `event_time`/`batch_size`/`begin`/`lookback`, BigQuery-style
//! `partition_by`, partition column names as a reported guess,
//! materialization); inference from the SQL; defaults. Every fact carries
//! its source, which `--explain` prints.

use std::collections::{BTreeSet, HashMap};

use petgraph::Direction;
use petgraph::graph::{EdgeIndex, NodeIndex};
use serde_json::Value;

use super::infer::{Inference, infer};
use crate::graph::LineageGraph;
use crate::project::{Dataset, DatasetKind};
use crate::time::{Grain, Hour, TimeKey, TimeMapping};

/// A dataset's time facts.
#[derive(Debug, Clone)]
pub struct DatasetTime {
    /// Partitioning grain.
    pub grain: Grain,
    /// Where the grain comes from.
    pub grain_source: String,
    /// First partition, when known.
    pub start: Option<Hour>,
    /// Why the dataset cannot be restated partially, if it cannot.
    pub non_idempotent: Option<String>,
    /// The zone its partitions are days of when said (ripple.yml, a dbt
    /// config, the project's; UTC when nothing is said), with whence;
    /// `None` when read off its SQL, which converts instants itself.
    pub said_zone: Option<(String, String)>,
    /// The one zone its SQL converts into or its job's session is set to,
    /// when nothing is said (its days are that zone's); `None` when said,
    /// or when its SQL names several zones.
    pub read_zone: Option<String>,
    /// Whether its job's SQL cuts times into days in the session's zone
    /// (no zone named at the cut); `None` when the time facts read nothing
    /// off its SQL.
    pub session_cut: Option<bool>,
    /// Where its job moves its session's zone past what a check before the
    /// run can see (see [`crate::impact::infer::Inference::zone_moved`]).
    pub zone_moved: Option<String>,
}

/// An edge's time mapping.
#[derive(Debug, Clone)]
pub struct EdgeTime {
    /// The mapping.
    pub mapping: TimeMapping,
    /// Where it comes from.
    pub source: String,
}

/// Time facts for a whole graph, resolved for one request.
#[derive(Debug, Clone)]
pub struct TimeModel {
    /// Per node.
    pub datasets: HashMap<NodeIndex, DatasetTime>,
    /// Per edge.
    pub edges: HashMap<EdgeIndex, EdgeTime>,
}

/// A problem in the declared time facts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TimeModelError(pub String);

/// What is known of one dataset before any request: a grain with its
/// source (when declared, configured or inferred), start, idempotence.
#[derive(Debug, Clone, Default)]
struct NodeFacts {
    grain: Option<(Grain, String)>,
    start: Option<Hour>,
    non_idempotent: Option<String>,
    zone: Zone,
    session_cut: Option<bool>,
    zone_moved: Option<String>,
}

/// The zone a dataset's partitions are cut into days of, and whence.
#[derive(Debug, Clone)]
struct Zone {
    /// `None`: UTC when `declared`, else several zones in its SQL.
    name: Option<String>,
    source: String,
    /// Said in ripple.yml or a dbt config (or nothing said: UTC), rather
    /// than read off SQL, which may convert either way.
    declared: bool,
}

impl Default for Zone {
    fn default() -> Self {
        Zone {
            name: None,
            source: "no zone said".to_string(),
            declared: true,
        }
    }
}

impl Zone {
    fn shown(&self) -> &str {
        match (&self.name, self.declared) {
            (Some(z), _) => z,
            (None, true) => "UTC",
            (None, false) => "several zones",
        }
    }

    /// Its offsets from UTC in minutes; any offset at all when unknown.
    fn offsets(&self) -> (i64, i64) {
        match (&self.name, self.declared) {
            (None, true) => (0, 0),
            (Some(z), _) => crate::time::offset_range(z).unwrap_or((-14 * 60, 14 * 60)),
            (None, false) => (-14 * 60, 14 * 60),
        }
    }

    fn same_as(&self, other: &Zone) -> bool {
        let utc = |z: &Zone| z.declared && z.name.as_deref().is_none_or(|n| n == "UTC");
        (utc(self) && utc(other)) || (self.name.is_some() && self.name == other.name)
    }
}

/// The zone of `n`: ripple.yml's for it, its dbt config's (`time_zone`, or
/// under `meta`), its SQL's, the project's, else UTC.
fn zone_facts(g: &LineageGraph, n: NodeIndex, inferred: Option<&Inference>) -> Zone {
    let d = &g.graph[n];
    let declared = |name: &str, source: &str| Zone {
        name: Some(name.to_string()),
        source: source.to_string(),
        declared: true,
    };
    if let Some(z) = d.settings(&g.config).and_then(|s| s.time_zone.as_deref()) {
        return declared(z, "ripple.yml");
    }
    let dbt = d
        .config
        .get("time_zone")
        .or_else(|| d.config.get("meta").and_then(|m| m.get("time_zone")))
        .and_then(Value::as_str);
    if let Some(z) = dbt {
        return declared(z, "dbt config `time_zone`");
    }
    if let Some((name, source)) = inferred.and_then(|i| i.zone.clone()) {
        return Zone {
            name,
            source,
            declared: false,
        };
    }
    match g.config.time_zone.as_deref() {
        Some(z) => declared(z, "ripple.yml (the project's)"),
        None => Zone::default(),
    }
}

/// How many partitions of `grain` the days of `down` sit off those of `up`,
/// at least and at most: `[lo, hi]` to add to an edge's window. Read off
/// SQL rather than declared, a zone is taken either way.
fn zone_shift(up: &Zone, down: &Zone, grain: Grain) -> (i64, i64) {
    if up.same_as(down) {
        return (0, 0);
    }
    let ((ul, uh), (dl, dh)) = (up.offsets(), down.offsets());
    let (mut lo, mut hi) = (ul - dh, uh - dl);
    if !up.declared || !down.declared {
        let m = lo.abs().max(hi.abs());
        (lo, hi) = (-m, m);
    }
    let floor = |a: i64, b: i64| a.div_euclid(b);
    let ceil = |a: i64, b: i64| -(-a).div_euclid(b);
    let (lo_h, hi_h) = (floor(lo, 60), ceil(hi, 60));
    // The shortest length of the grain: a shift is never under-counted.
    let len = match grain {
        Grain::Hour => 1,
        Grain::Day => 24,
        Grain::Week => 24 * 7,
        Grain::Month => 24 * 28,
        Grain::Year => 24 * 365,
        Grain::None => return (0, 0),
    };
    (floor(lo_h, len), ceil(hi_h, len))
}

/// What is known of one edge before any request.
#[derive(Debug, Clone)]
enum EdgeFacts {
    /// A mapping whatever the grains.
    Fixed(TimeMapping, String),
    /// dbt microbatch `lookback: N`: N batches of the downstream's grain,
    /// converted to the upstream's grain once both are known.
    Lookback(i64, String),
    /// A window read off SQL, in the SQL's unit (converted once the
    /// upstream's grain is known). Shared by the dataset's edges: a copy
    /// each cost n² for n upstreams (2,000 models reading 2,000 others ran
    /// out of memory).
    Inferred(std::sync::Arc<Inference>),
    /// Nothing said: identity.
    Default,
}

/// Every time fact of a graph that does not depend on the request: built
/// once after loading (SQL inference runs here, in parallel), then resolved
/// per request in linear time.
#[derive(Debug, Clone)]
pub struct TimeFacts {
    nodes: HashMap<NodeIndex, NodeFacts>,
    edges: HashMap<EdgeIndex, EdgeFacts>,
    /// A topological order of the graph, or where a cycle is.
    order: Result<Vec<NodeIndex>, NodeIndex>,
    /// Each dataset's grain when no request overrides anything, for
    /// upstreams outside a request's reach.
    base: HashMap<NodeIndex, (Grain, String)>,
}

impl TimeFacts {
    /// Reads `ripple.yml`, dbt configs and the SQL of every job.
    pub fn build(g: &LineageGraph) -> Result<TimeFacts, TimeModelError> {
        Self::build_with_sql_of(g, None)
    }

    /// [`TimeFacts::build`] for questions about `nodes` only: SQL is read
    /// for them and their upstreams (what their grains can come from), not
    /// for the rest of the graph, whose facts are then incomplete.
    pub fn build_for(g: &LineageGraph, nodes: &[NodeIndex]) -> Result<TimeFacts, TimeModelError> {
        let nodes: BTreeSet<NodeIndex> = nodes.iter().copied().collect();
        let mut wanted = g.reachable(&nodes, petgraph::Direction::Incoming);
        wanted.extend(nodes);
        Self::build_with_sql_of(g, Some(&wanted))
    }

    /// [`TimeFacts::build`] for the impact of `request`: SQL is read for the
    /// changed datasets, what is downstream of them, and everything upstream
    /// of those (where their grains come from); impact looks at nothing else.
    /// A request naming no dataset gets the whole graph's facts, and the
    /// error from impact.
    pub fn for_request(
        g: &LineageGraph,
        request: &super::ImpactRequest,
    ) -> Result<TimeFacts, TimeModelError> {
        match super::changed_nodes(g, request) {
            Ok(changed) => {
                let from: BTreeSet<NodeIndex> = changed.into_iter().collect();
                let mut reach = g.reachable(&from, petgraph::Direction::Outgoing);
                reach.extend(from);
                let nodes: Vec<NodeIndex> = reach.into_iter().collect();
                Self::build_for(g, &nodes)
            }
            Err(_) => Self::build(g),
        }
    }

    fn build_with_sql_of(
        g: &LineageGraph,
        sql_of: Option<&BTreeSet<NodeIndex>>,
    ) -> Result<TimeFacts, TimeModelError> {
        use rayon::prelude::*;
        let configured = configured_datasets(g)?;
        let indices: Vec<NodeIndex> = g.graph.node_indices().collect();
        let inferred: HashMap<NodeIndex, std::sync::Arc<Inference>> = indices
            .par_iter()
            .filter(|n| sql_of.is_none_or(|w| w.contains(n)))
            .filter_map(|&n| infer(g, n).map(|i| (n, std::sync::Arc::new(i))))
            .collect();
        let across = across_columns(g, sql_of, &inferred);
        // Once per dataset, on all cores: each node and each edge into it asks.
        let dbt_of: Vec<DbtFacts> = indices
            .par_iter()
            .map(|&n| dbt_facts(&g.graph[n]))
            .collect();
        let mut nodes = HashMap::with_capacity(indices.len());
        for &n in &indices {
            let d = &g.graph[n];
            let cfg = configured.get(&n).map(|(_, c)| c);
            let dbt = &dbt_of[n.index()];
            let grain = if let Some(gr) = cfg.and_then(|c| c.grain) {
                Some((gr, "ripple.yml".to_string()))
            } else if let Some(known) = dbt.grain.clone() {
                Some(known)
            } else if let Some(why) = dbt.materialized_whole.clone() {
                Some((Grain::None, why))
            } else {
                inferred.get(&n).and_then(|i| i.grain.clone())
            };
            let start = match cfg.and_then(|c| c.start.as_deref()) {
                Some(s) => Some(
                    TimeKey::parse(s)
                        .map_err(|e| {
                            TimeModelError(format!("ripple.yml: datasets.{}.start: {e}", d.name))
                        })?
                        .start,
                ),
                None => dbt.start,
            };
            nodes.insert(
                n,
                NodeFacts {
                    grain,
                    start,
                    non_idempotent: non_idempotent(g, d),
                    zone: zone_facts(g, n, inferred.get(&n).map(|i| &**i)),
                    session_cut: inferred.get(&n).map(|i| i.session_cut),
                    zone_moved: inferred.get(&n).and_then(|i| i.zone_moved.clone()),
                },
            );
        }
        let mut edges = HashMap::with_capacity(g.graph.edge_count());
        for e in g.graph.edge_indices() {
            let Some((up, down)) = g.graph.edge_endpoints(e) else {
                continue;
            };
            let up_d = &g.graph[up];
            let configured_mapping = configured.get(&down).and_then(|(_, c)| {
                c.upstream
                    .iter()
                    .find(|(k, _)| up_d.answers_to(k))
                    .map(|(_, m)| *m)
            });
            let facts = if let Some(m) = configured_mapping {
                EdgeFacts::Fixed(m, "ripple.yml".into())
            } else if let Some(why) = across.get(&e) {
                EdgeFacts::Fixed(TimeMapping::All, why.clone())
            } else if let Some((lookback, why)) = &dbt_of[down.index()].lookback {
                EdgeFacts::Lookback(*lookback, why.clone())
            } else if let Some(i) = inferred
                .get(&down)
                .filter(|i| i.windows.contains_key(&up_d.id))
            {
                EdgeFacts::Inferred(i.clone())
            } else {
                EdgeFacts::Default
            };
            edges.insert(e, facts);
        }
        let order = petgraph::algo::toposort(&g.graph, None).map_err(|c| c.node_id());
        let mut facts = TimeFacts {
            nodes,
            edges,
            order,
            base: HashMap::new(),
        };
        if let Ok(order) = facts.order.clone() {
            let base = facts.resolve(g, &order, &HashMap::new());
            facts.base = base
                .datasets
                .into_iter()
                .map(|(n, t)| (n, (t.grain, t.grain_source)))
                .collect();
        }
        Ok(facts)
    }

    /// A topological order of the graph; `None` when it has a cycle.
    pub fn order(&self) -> Option<&[NodeIndex]> {
        self.order.as_deref().ok()
    }

    /// The id of a dataset on a cycle, when there is one.
    pub fn cycle_at(&self, g: &LineageGraph) -> String {
        match &self.order {
            Err(n) => g.graph[*n].id.clone(),
            Ok(_) => String::new(),
        }
    }

    /// The facts of the datasets in `order` (topological, upstreams first)
    /// and of the edges between them, for one request: a dataset of unknown
    /// grain takes its upstreams'; `changed_grain` is the grain implied by
    /// the user's keys for changed datasets of unknown grain.
    pub fn resolve(
        &self,
        g: &LineageGraph,
        order: &[NodeIndex],
        changed_grain: &HashMap<NodeIndex, Grain>,
    ) -> TimeModel {
        let mut datasets: HashMap<NodeIndex, DatasetTime> = HashMap::with_capacity(order.len());
        for &n in order {
            let f = self.nodes.get(&n).cloned().unwrap_or_default();
            let (grain, grain_source) = match (f.grain, changed_grain.get(&n)) {
                (Some(known), _) => known,
                (None, Some(gr)) => (
                    *gr,
                    "the precision of --from/--to (no grain declared)".to_string(),
                ),
                (None, None) => inherit(g, n, &datasets, &self.base),
            };
            datasets.insert(
                n,
                DatasetTime {
                    grain,
                    grain_source,
                    start: f.start,
                    said_zone: f
                        .zone
                        .declared
                        .then(|| (f.zone.shown().to_string(), f.zone.source.clone())),
                    read_zone: (!f.zone.declared).then(|| f.zone.name.clone()).flatten(),
                    non_idempotent: f.non_idempotent,
                    session_cut: f.session_cut,
                    zone_moved: f.zone_moved,
                },
            );
        }
        let mut edges = HashMap::new();
        let incoming = order
            .iter()
            .flat_map(|&n| g.graph.edges_directed(n, petgraph::Direction::Incoming));
        for e in incoming {
            use petgraph::visit::EdgeRef;
            let (e, up) = (e.id(), e.source());
            let Some(facts) = self.edges.get(&e) else {
                continue;
            };
            let Some(up_grain) = datasets.get(&up).map(|t| t.grain) else {
                continue;
            };
            let edge = match facts {
                EdgeFacts::Fixed(m, why) => EdgeTime { mapping: *m, source: why.clone() },
                EdgeFacts::Lookback(n, why) => {
                    let down_grain = datasets.get(&e_down(g, e)).map_or(Grain::None, |t| t.grain);
                    let factor = down_grain.ratio(up_grain).unwrap_or(1);
                    EdgeTime { mapping: TimeMapping::Window(-n * factor, 0), source: why.clone() }
                }
                EdgeFacts::Inferred(i) => match i.window_for(&g.graph[up].id, up_grain) {
                    Some((m, why)) => EdgeTime { mapping: m, source: why },
                    None => EdgeTime {
                        mapping: TimeMapping::Identity,
                        source: "default (a window found in SQL does not convert to the upstream's grain)".into(),
                    },
                },
                EdgeFacts::Default => EdgeTime { mapping: TimeMapping::Identity, source: "default".into() },
            };
            // Days of another time zone than the upstream's start and end
            // some hours off its partitions: the window moves by them.
            let down = e_down(g, e);
            let zone = |n: NodeIndex| {
                self.nodes
                    .get(&n)
                    .map(|f| f.zone.clone())
                    .unwrap_or_default()
            };
            let (zu, zd) = (zone(up), zone(down));
            let (s_lo, s_hi) = zone_shift(&zu, &zd, up_grain);
            let edge = match edge.mapping {
                TimeMapping::Identity | TimeMapping::Window(..) if (s_lo, s_hi) != (0, 0) => {
                    let (lo, hi) = match edge.mapping {
                        TimeMapping::Window(lo, hi) => (lo, hi),
                        _ => (0, 0),
                    };
                    EdgeTime {
                        mapping: TimeMapping::Window(lo + s_lo, hi + s_hi),
                        source: format!(
                            "{}; moved by [{s_lo}, {s_hi}] {up_grain}s: `{}` is cut into days of {} ({}), its upstream into days of {} ({})",
                            edge.source,
                            g.graph[down].name,
                            zd.shown(),
                            zd.source,
                            zu.shown(),
                            zu.source
                        ),
                    }
                }
                _ => edge,
            };
            edges.insert(e, edge);
        }
        TimeModel { datasets, edges }
    }
}

/// Edges from an upstream whose partition column is declared into a
/// dataset partitioned by a time computed from another of its columns (a
/// table loaded by `updated_at`, read into one by `cast(created_at as
/// date)`): a row of any upstream partition may land in any of its
/// partitions, so such an edge reaches all of them, with the reason.
fn across_columns(
    g: &LineageGraph,
    sql_of: Option<&BTreeSet<NodeIndex>>,
    inferred: &HashMap<NodeIndex, std::sync::Arc<Inference>>,
) -> HashMap<EdgeIndex, String> {
    let mut columns = super::partition::PartitionColumns::default();
    let mut out = HashMap::new();
    for e in g.graph.edge_indices() {
        let Some((up, down)) = g.graph.edge_endpoints(e) else {
            continue;
        };
        if up == down || sql_of.is_some_and(|w| !w.contains(&down)) {
            continue;
        }
        let Some(by) = super::partition::configured(g, up) else {
            continue;
        };
        // Column lineage costs a parse per job: asked only of a job whose
        // key (declared, else any time it selects) is a time of another
        // column than `by`, as the time facts' own parse saw it.
        let Some(times) = inferred.get(&down).map(|i| &i.time_sources) else {
            continue;
        };
        let by_name = by.column.to_ascii_lowercase();
        let suspect = match super::partition::configured(g, down) {
            Some(key) => times
                .get(&key.column.to_ascii_lowercase())
                .is_some_and(|source| *source != by_name),
            None => !times.is_empty() && !times.values().any(|source| *source == by_name),
        };
        if !suspect {
            continue;
        }
        let Some((column, from)) = key_source(g, &mut columns, up, &by.column, down) else {
            continue;
        };
        let relation = &g.graph[up].relation;
        let same = |a: &str, b: &str| {
            let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
            a == b || a.ends_with(&format!(".{b}")) || b.ends_with(&format!(".{a}"))
        };
        if same(&from.relation, relation) && !from.column.eq_ignore_ascii_case(&by.column) {
            out.insert(
                e,
                format!(
                    "every partition: `{}` is partitioned by `{}`, a time of `{}`, but `{}` by `{}` ({}); a row of one of its partitions may land in any, unless `upstream:` in ripple.yml says how far",
                    g.graph[down].name, column, from.column, g.graph[up].name, by.column, by.evidence
                ),
            );
        }
    }
    out
}

/// The column `down` is partitioned by and the upstream column it is made
/// of, when that is a column of `up` other than `up`'s partition column
/// `by` could be: its declared partition column's source; else the time it
/// computes from another column; else, with no partition column found, a
/// time of `up` it selects while nothing it selects keeps `by`.
fn key_source(
    g: &LineageGraph,
    columns: &mut super::partition::PartitionColumns,
    up: NodeIndex,
    by: &str,
    down: NodeIndex,
) -> Option<(String, crate::sql::ColumnRef)> {
    let single = |c: &crate::sql::OutputColumn| {
        let mut s = c.sources.iter();
        match (s.next(), s.next()) {
            (Some(one), None) => Some(one.clone()),
            _ => None,
        }
    };
    if let Some(declared) = super::partition::configured(g, down) {
        let out = super::partition::job_output(g, down)?;
        let c = out
            .lineage
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(&declared.column))?;
        return single(c).map(|s| (declared.column, s));
    }
    if let Some(key) = columns.of(g, down) {
        return key.derived_from.map(|f| (key.column, f));
    }
    let out = super::partition::job_output(g, down)?;
    let relation = g.graph[up].relation.to_ascii_lowercase();
    let of_up = |s: &crate::sql::ColumnRef| {
        let r = s.relation.to_ascii_lowercase();
        r == relation || relation.ends_with(&format!(".{r}"))
    };
    let keeps_by = out
        .lineage
        .columns
        .iter()
        .any(|c| single(c).is_some_and(|s| of_up(&s) && s.column.eq_ignore_ascii_case(by)));
    if keeps_by {
        return None;
    }
    out.lineage.columns.iter().find_map(|c| {
        let s = single(c)?;
        (of_up(&s) && crate::sql::time_like(&c.name)).then(|| (c.name.clone(), s))
    })
}

/// The downstream end of an edge.
fn e_down(g: &LineageGraph, e: EdgeIndex) -> NodeIndex {
    g.graph
        .edge_endpoints(e)
        .map_or(NodeIndex::new(0), |(_, d)| d)
}

/// `ripple.yml` `datasets:` entries by node. A key that would be dropped
/// or would silently win over another is an error naming the file, line and
/// key: a `datasets:` key naming no dataset, two keys naming one dataset
/// (`orders` and its node id), an `upstream:` key naming no dataset the
/// entry's dataset reads directly (its mapping would never be used), two
/// `upstream:` keys naming one upstream. The first in the file is reported.
fn configured_datasets(
    g: &LineageGraph,
) -> Result<HashMap<NodeIndex, (String, crate::config::DatasetConfig)>, TimeModelError> {
    // The first dataset (in graph order) answering to each name, relation
    // or id: what a scan of every dataset for each key would find.
    let mut first: HashMap<&str, NodeIndex> = HashMap::new();
    for n in g.graph.node_indices() {
        let d = &g.graph[n];
        for k in [&d.name, &d.relation, &d.id] {
            first.entry(k.as_str()).or_insert(n);
        }
    }
    let places = &g.config.places;
    let line = |(l, c): (u32, u32)| match l {
        0 => "line unknown".to_string(),
        _ => format!("line {l}, column {c}"),
    };
    // Each problem with the place of its key, to report the first.
    let mut problems: Vec<((u32, u32), String)> = Vec::new();
    let mut out: HashMap<NodeIndex, (String, crate::config::DatasetConfig)> = HashMap::new();
    for (key, cfg) in &g.config.datasets {
        let here = places.line_column(key, None);
        let Some(&n) = first.get(key.as_str()) else {
            let names = g.graph.node_weights().map(|d| d.name.as_str());
            let hint = crate::text::did_you_mean(key, names)
                .map(crate::text::mean_hint)
                .unwrap_or_default();
            problems.push((
                here,
                format!("datasets.{key} names no dataset of the project{hint}"),
            ));
            continue;
        };
        let name = &g.graph[n].name;
        if let Some((other, _)) = out.get(&n) {
            let there = places.line_column(other, None);
            let ((a, at_a), (b, at_b)) = if there <= here {
                ((other, there), (key, here))
            } else {
                ((key, here), (other, there))
            };
            problems.push((
                at_b,
                format!(
                    "datasets.{a} ({}) and datasets.{b} ({}) name the same dataset `{name}`; ripple would take the settings of one and drop the other's: keep one key, with the settings of both",
                    line(at_a),
                    line(at_b)
                ),
            ));
            continue;
        }
        let mut reads: Vec<NodeIndex> =
            g.graph.neighbors_directed(n, Direction::Incoming).collect();
        reads.sort_by(|a, b| (&g.graph[*a].name, a).cmp(&(&g.graph[*b].name, b)));
        reads.dedup();
        let listed = match reads.len() {
            0 => format!("`{name}` reads no dataset ripple knows of"),
            1..=12 => format!(
                "`{name}` reads {}",
                reads
                    .iter()
                    .map(|u| format!("`{}`", g.graph[*u].name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            many => format!(
                "`{name}` reads {many} datasets (`ripple graph --select 1+{name}` lists them)"
            ),
        };
        // The upstream each key names, and the key that named it first.
        let mut named: HashMap<NodeIndex, &String> = HashMap::new();
        for up in cfg.upstream.keys() {
            let at = places.line_column(key, Some(up));
            let mapped: Vec<NodeIndex> = reads
                .iter()
                .copied()
                .filter(|&u| g.graph[u].answers_to(up))
                .collect();
            if mapped.is_empty() {
                let path = format!("datasets.{key}.upstream.{up}");
                let why = match first.get(up.as_str()) {
                    Some(&m) => format!(
                        ": `{}` is a dataset of the project, but not one `{name}` reads directly (no edge runs from it to `{name}`), so its mapping would never be used",
                        g.graph[m].name
                    ),
                    None => {
                        let direct = reads.iter().flat_map(|&u| {
                            let d = &g.graph[u];
                            [d.name.as_str(), d.relation.as_str(), d.id.as_str()]
                        });
                        let hint = crate::text::did_you_mean(up, direct)
                            .or_else(|| {
                                crate::text::did_you_mean(
                                    up,
                                    g.graph.node_weights().map(|d| d.name.as_str()),
                                )
                            })
                            .map(|s| format!(" (did you mean `{}`?)", crate::text::one_line(s)))
                            .unwrap_or_default();
                        format!(" names no dataset of the project{hint}")
                    }
                };
                problems.push((
                    at,
                    format!(
                        "{path}{why}; {listed}: key each mapping by the name, relation or id of a dataset it reads, or remove the key"
                    ),
                ));
                continue;
            }
            for u in mapped {
                match named.get(&u) {
                    Some(&other) => {
                        let there = places.line_column(key, Some(other));
                        let ((a, at_a), (b, at_b)) = if there <= at {
                            ((other, there), (up, at))
                        } else {
                            ((up, at), (other, there))
                        };
                        problems.push((
                            at_b,
                            format!(
                                "datasets.{key}.upstream: `{a}` ({}) and `{b}` ({}) name the same upstream `{}`; ripple would use one mapping and drop the other: keep one key",
                                line(at_a),
                                line(at_b),
                                g.graph[u].name
                            ),
                        ));
                    }
                    None => {
                        named.insert(u, up);
                    }
                }
            }
        }
        out.insert(n, (key.clone(), cfg.clone()));
    }
    problems.sort();
    match problems.first() {
        None => Ok(out),
        Some((at, message)) => {
            let more = match problems.len() - 1 {
                0 => String::new(),
                1 => " (and 1 more such key later in the file)".to_string(),
                n => format!(" (and {n} more such keys later in the file)"),
            };
            Err(TimeModelError(format!(
                "{}: {message}{more}",
                places.at(*at)
            )))
        }
    }
}

/// What dbt's own configuration says about time.
#[derive(Debug, Default)]
struct DbtFacts {
    grain: Option<(Grain, String)>,
    start: Option<Hour>,
    lookback: Option<(i64, String)>,
    materialized_whole: Option<String>,
}

fn dbt_facts(d: &Dataset) -> DbtFacts {
    let mut f = DbtFacts::default();
    let file = d.file.as_deref().unwrap_or("dbt config");
    let get = |k: &str| d.config.get(k);
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    if get("event_time").is_some()
        && let Some(bs) = s(get("batch_size"))
        && let Ok(gr) = bs.parse::<Grain>()
    {
        f.grain = Some((gr, format!("dbt microbatch batch_size='{bs}' ({file})")));
    }
    if f.grain.is_none()
        && let Some(pb) = get("partition_by")
    {
        if let Some(gran) = pb
            .get("granularity")
            .and_then(Value::as_str)
            .and_then(|g| g.parse::<Grain>().ok())
        {
            f.grain = Some((gran, format!("dbt partition_by granularity ({file})")));
        } else if pb
            .get("data_type")
            .and_then(Value::as_str)
            .is_some_and(|t| t == "date")
        {
            f.grain = Some((
                Grain::Day,
                format!("dbt partition_by on a date column ({file})"),
            ));
        } else if let Some(cols) = pb.as_array() {
            // A list of partition columns whose names carry the grain.
            let guess = cols.iter().filter_map(Value::as_str).find_map(|c| {
                ["hour", "date", "day", "week", "month", "year"]
                    .into_iter()
                    .find(|g| c.ends_with(&format!("_{g}")) || c == *g)
                    .map(|g| (c.to_string(), g))
            });
            if let Some((col, g)) = guess {
                let grain = match g {
                    "date" | "day" => Grain::Day,
                    other => other.parse().unwrap_or(Grain::Day),
                };
                f.grain = Some((
                    grain,
                    format!("guessed from partition column `{col}` ({file})"),
                ));
            }
        }
    }
    if let Some(begin) =
        s(get("begin")).and_then(|b| TimeKey::parse(b.get(..10).unwrap_or(&b)).ok())
    {
        f.start = Some(begin.start);
    }
    if let Some(lb) = get("lookback").and_then(Value::as_i64).filter(|n| *n > 0) {
        f.lookback = Some((lb, format!("dbt microbatch lookback={lb} ({file})")));
    }
    if let Some(m) = s(get("materialized")).filter(|m| m == "table" || m == "view") {
        f.materialized_whole = Some(format!("dbt materialized='{m}': rebuilt whole ({file})"));
    }
    if d.kind == DatasetKind::Seed {
        f.materialized_whole = Some("a dbt seed: loaded whole".to_string());
    }
    f
}

/// Unknown grain: the upstreams' grain when they agree, else unpartitioned.
/// Upstreams resolved for this request are in `known`, the others in `base`.
fn inherit(
    g: &LineageGraph,
    n: NodeIndex,
    known: &HashMap<NodeIndex, DatasetTime>,
    base: &HashMap<NodeIndex, (Grain, String)>,
) -> (Grain, String) {
    let mut ups: Vec<(&str, Grain)> = g
        .graph
        .neighbors_directed(n, Direction::Incoming)
        .filter_map(|u| {
            let grain = known
                .get(&u)
                .map(|t| t.grain)
                .or_else(|| base.get(&u).map(|b| b.0))?;
            Some((g.graph[u].name.as_str(), grain))
        })
        .filter(|(_, gr)| *gr != Grain::None)
        .collect();
    ups.sort();
    match ups.first() {
        Some(&(name, gr)) if ups.iter().all(|(_, x)| *x == gr) => (
            gr,
            format!(
                "assumed: same as upstream `{name}` (declare `grain` in ripple.yml to be sure)"
            ),
        ),
        _ => (
            Grain::None,
            "assumed: unpartitioned (no grain declared, found or inherited)".to_string(),
        ),
    }
}

/// Models that cannot be restated partition by partition.
fn non_idempotent(g: &LineageGraph, d: &Dataset) -> Option<String> {
    let get = |k: &str| d.config.get(k).and_then(Value::as_str);
    if d.kind == DatasetKind::Snapshot {
        return Some("a snapshot (SCD2) keeps history it cannot rebuild partially".into());
    }
    let microbatch = get("incremental_strategy") == Some("microbatch");
    if get("materialized") == Some("incremental") && !microbatch {
        if g.self_reads.contains(&d.id) {
            return Some("an incremental model that reads itself (`{{ this }}`)".into());
        }
        if get("unique_key").is_some()
            || matches!(get("incremental_strategy"), Some("merge" | "delete+insert"))
        {
            return Some("an incremental upsert by key".into());
        }
    }
    if d.kind == DatasetKind::Table && g.self_reads.contains(&d.id) {
        return Some("its job reads the table it writes".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str, declared: bool) -> Zone {
        Zone {
            name: Some(name.to_string()),
            source: String::new(),
            declared,
        }
    }

    #[test]
    fn days_of_another_zone_move_by_its_offsets() {
        let utc = Zone::default();
        let ny = zone("America/New_York", true);
        // A New York day is UTC hours 04/05 to 04/05 of the next day.
        assert_eq!(zone_shift(&utc, &ny, Grain::Hour), (4, 5));
        assert_eq!(zone_shift(&utc, &ny, Grain::Day), (0, 1));
        // A UTC day over New York days: that day and the one before.
        assert_eq!(zone_shift(&ny, &utc, Grain::Day), (-1, 0));
        // Half an hour is a whole one: Kolkata is 5:30 ahead.
        assert_eq!(
            zone_shift(&utc, &zone("Asia/Kolkata", true), Grain::Hour),
            (-6, -5)
        );
        assert_eq!(zone_shift(&ny, &ny, Grain::Hour), (0, 0));
        // Read off SQL, a zone may be meant either way.
        assert_eq!(
            zone_shift(&utc, &zone("America/New_York", false), Grain::Hour),
            (-5, 5)
        );
    }
}
