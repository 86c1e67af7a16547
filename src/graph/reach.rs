//! What downstream a change reaches: every descendant when the rows or the
//! shape of a dataset changed, only the consumers of the changed columns
//! (followed column by column) when existing columns' values changed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use super::LineageGraph;
use super::semantics::{Semantics, same};

/// The datasets a change reaches.
#[derive(Debug, Default)]
pub struct Reach {
    /// Affected, the changed datasets themselves left out.
    pub affected: BTreeSet<NodeIndex>,
    /// Those of `affected` reached only through a `*` whose columns are
    /// not known: possibly affected.
    pub possibly: BTreeSet<NodeIndex>,
}

impl Reach {
    /// Everything downstream of `changed`.
    pub fn all_below(g: &LineageGraph, changed: &[NodeIndex]) -> Reach {
        Reach {
            affected: g.reachable(&changed.iter().copied().collect(), Direction::Outgoing),
            possibly: BTreeSet::new(),
        }
    }
}

/// How one consumer is touched by changed columns of its upstream.
enum Effect {
    /// Its rows may change (the columns decide which rows), or ripple cannot
    /// tell: it and everything below it.
    All,
    /// These output columns of it changed; `star` when a `*` whose columns
    /// are unknown carried them.
    Columns(BTreeSet<String>, bool),
}

/// The datasets reached when the values of `columns` of `start` change.
pub fn column_consumers(
    sem: &mut Semantics,
    start: NodeIndex,
    columns: BTreeSet<String>,
) -> Reach {
    let g = sem.g;
    let mut changed: BTreeMap<NodeIndex, BTreeSet<String>> = BTreeMap::from([(start, columns)]);
    let mut all: BTreeSet<NodeIndex> = BTreeSet::new();
    let mut possibly: BTreeSet<NodeIndex> = BTreeSet::new();
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        let cols = changed.get(&n).cloned().unwrap_or_default();
        let mut edges: Vec<(NodeIndex, String)> = g
            .graph
            .edges_directed(n, Direction::Outgoing)
            .map(|e| (e.target(), e.weight().via.clone()))
            .collect();
        edges.sort();
        edges.dedup();
        for (c, job) in edges {
            if all.contains(&c) || c == start {
                continue;
            }
            match consume(sem, &job, n, c, &cols) {
                Effect::All => {
                    // What is in `all` has its descendants there too: the
                    // walk stops at it, so the whole reach stays linear.
                    let mut stack = vec![c];
                    while let Some(x) = stack.pop() {
                        if all.insert(x) {
                            stack.extend(g.graph.neighbors_directed(x, Direction::Outgoing));
                        }
                    }
                }
                Effect::Columns(out, star) => {
                    if star {
                        possibly.insert(c);
                    }
                    let entry = changed.entry(c).or_default();
                    let before = entry.len();
                    entry.extend(out);
                    if entry.len() > before {
                        queue.push_back(c);
                    }
                }
            }
        }
    }
    let mut affected: BTreeSet<NodeIndex> = all.clone();
    affected.extend(
        changed
            .iter()
            .filter(|(_, cols)| !cols.is_empty())
            .map(|(n, _)| *n),
    );
    affected.extend(possibly.iter().copied());
    affected.remove(&start);
    possibly.retain(|n| !all.contains(n));
    Reach { affected, possibly }
}

/// What job `job` (writing `c` from `n`) does with the changed `cols` of `n`.
fn consume(
    sem: &mut Semantics,
    job: &str,
    n: NodeIndex,
    c: NodeIndex,
    cols: &BTreeSet<String>,
) -> Effect {
    let g = sem.g;
    let (rel, c_rel) = (g.graph[n].relation.clone(), g.graph[c].relation.clone());
    let Some(script) = sem.job(job) else {
        return Effect::All;
    };
    if !script.errors.is_empty() {
        return Effect::All;
    }
    let hits = |column: &str| column == "*" || cols.contains(column);
    let mut out = BTreeSet::new();
    let mut star = false;
    let mut read = false;
    for s in &script.statements {
        if !s.sources.iter().any(|src| same(src, &rel)) {
            continue;
        }
        read = true;
        // Read into a staging table the script reads back: not followed.
        if s.targets.iter().any(|t| script.intermediates.contains(t)) {
            return Effect::All;
        }
        // Another table the script writes: not this consumer's business.
        if !s.targets.is_empty() && !s.targets.iter().any(|t| same(t, &c_rel)) {
            continue;
        }
        let Some(lineage) = &s.columns else {
            return Effect::All;
        };
        let touched = |r: &crate::sql::ColumnRef| same(&r.relation, &rel) && hits(&r.column);
        if lineage.conditions.iter().any(touched) {
            return Effect::All;
        }
        for col in &lineage.columns {
            let refs: Vec<_> = col.sources.iter().filter(|r| touched(r)).collect();
            if refs.is_empty() {
                continue;
            }
            if col.name == "*" {
                // An unexpanded `*` passes the changed columns through by name.
                star = true;
                out.extend(cols.iter().cloned());
            } else {
                star |= refs.iter().any(|r| r.column == "*");
                out.insert(col.name.clone());
            }
        }
    }
    if !read {
        // The SQL does not name the upstream as the graph does: cannot tell.
        return Effect::All;
    }
    Effect::Columns(out, star)
}
