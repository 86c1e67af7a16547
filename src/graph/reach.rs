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
    /// Per affected dataset, its affected columns; `None` when all of them
    /// (its rows may change, or ripple cannot tell which columns).
    pub columns: BTreeMap<NodeIndex, Option<BTreeSet<String>>>,
    /// The edges (upstream, downstream) the change travels along.
    pub edges: BTreeSet<(NodeIndex, NodeIndex)>,
    /// Per affected dataset, why: one line per upstream that reaches it.
    pub why: BTreeMap<NodeIndex, Vec<String>>,
}

impl Reach {
    /// Everything downstream of `changed`.
    pub fn all_below(g: &LineageGraph, changed: &[NodeIndex]) -> Reach {
        Reach {
            affected: g.reachable(&changed.iter().copied().collect(), Direction::Outgoing),
            ..Reach::default()
        }
    }
}

/// How one consumer is touched by changed columns of its upstream.
enum Effect {
    /// Its rows may change (the columns decide which rows), or ripple cannot
    /// tell: it and everything below it. The reason says which.
    All(String),
    /// These output columns of it changed; `star` when a `*` whose columns
    /// are unknown carried them.
    Columns(BTreeSet<String>, bool),
}

/// The datasets reached when the values of `columns` of `start` change.
pub fn column_consumers(sem: &mut Semantics, start: NodeIndex, columns: BTreeSet<String>) -> Reach {
    let g = sem.g;
    let mut changed: BTreeMap<NodeIndex, BTreeSet<String>> = BTreeMap::from([(start, columns)]);
    let mut all: BTreeSet<NodeIndex> = BTreeSet::new();
    let mut possibly: BTreeSet<NodeIndex> = BTreeSet::new();
    let mut carried: BTreeSet<(NodeIndex, NodeIndex)> = BTreeSet::new();
    let mut why: BTreeMap<NodeIndex, Vec<String>> = BTreeMap::new();
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
        let up = &g.graph[n].name;
        for (c, job) in edges {
            if all.contains(&c) || c == start {
                continue;
            }
            match consume(sem, &job, n, c, &cols) {
                Effect::All(reason) => {
                    carried.insert((n, c));
                    why.entry(c).or_default().push(format!("`{up}`: {reason}"));
                    // What is in `all` has its descendants there too: the
                    // walk stops at it, so the whole reach stays linear.
                    let mut stack = vec![c];
                    while let Some(x) = stack.pop() {
                        if all.insert(x) {
                            for y in g.graph.neighbors_directed(x, Direction::Outgoing) {
                                carried.insert((x, y));
                                if !all.contains(&y) {
                                    let from = &g.graph[x].name;
                                    why.entry(y)
                                        .or_default()
                                        .push(format!("`{from}`: all of its columns"));
                                }
                                stack.push(y);
                            }
                        }
                    }
                }
                Effect::Columns(out, star) => {
                    if star {
                        possibly.insert(c);
                    }
                    if !out.is_empty() {
                        carried.insert((n, c));
                        let list: Vec<&str> = out.iter().map(String::as_str).collect();
                        why.entry(c).or_default().push(format!(
                            "`{up}`: its columns {} become {}",
                            join(&cols),
                            list.join(", ")
                        ));
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
    let columns = affected
        .iter()
        .map(|&n| {
            let cols = (!all.contains(&n)).then(|| changed.get(&n).cloned().unwrap_or_default());
            (n, cols)
        })
        .collect();
    why.retain(|n, _| affected.contains(n));
    Reach {
        affected,
        possibly,
        columns,
        edges: carried,
        why,
    }
}

/// `a, b, c`.
fn join(cols: &BTreeSet<String>) -> String {
    cols.iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
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
        return Effect::All(format!("`{job}` has no SQL ripple can read"));
    };
    if !script.errors.is_empty() {
        return Effect::All(format!("`{job}` has SQL that does not parse"));
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
            return Effect::All(format!(
                "read through a staging table in `{job}` (line {})",
                s.line
            ));
        }
        // Another table the script writes: not this consumer's business.
        if !s.targets.is_empty() && !s.targets.iter().any(|t| same(t, &c_rel)) {
            continue;
        }
        let Some(lineage) = &s.columns else {
            return Effect::All(format!(
                "`{job}` line {}: a statement ripple has no column lineage for",
                s.line
            ));
        };
        let touched = |r: &crate::sql::ColumnRef| same(&r.relation, &rel) && hits(&r.column);
        if let Some(r) = lineage.conditions.iter().find(|r| touched(r)) {
            return Effect::All(format!(
                "`{job}` line {}: `{}` decides which rows (filter, join or grouping)",
                s.line, r.column
            ));
        }
        // Values going by position into a table of unknown columns: the
        // names above are the SELECT's, not where the values land.
        if lineage.positional
            && lineage
                .columns
                .iter()
                .any(|col| col.sources.iter().any(&touched))
        {
            return Effect::All(format!(
                "`{job}` line {}: an INSERT without a column list, into a table whose columns ripple does not know, puts the values by position (declare the table under `tables:`)",
                s.line
            ));
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
        return Effect::All(format!("`{job}` does not name it as the graph does"));
    }
    Effect::Columns(out, star)
}
