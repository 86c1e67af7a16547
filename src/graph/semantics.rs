//! What each job of one side computes, read on demand: its statements with
//! canonical text and column lineage, `*` expanded from the columns its
//! upstreams are known to have (computed from the upstream's own query,
//! upstreams first, or else declared in YAML).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use super::LineageGraph;
use crate::project::JobKind;
use crate::sql::{KnownColumns, ScriptLineage, ScriptReading, read_cached};

/// Job semantics and dataset columns of one graph, computed once each.
pub struct Semantics<'g> {
    /// The graph.
    pub g: &'g LineageGraph,
    /// The datasets each job writes.
    written: HashMap<&'g str, Vec<NodeIndex>>,
    jobs: HashMap<String, Option<ScriptLineage>>,
    columns: HashMap<NodeIndex, Option<Vec<String>>>,
    /// Relation names to read as others (old name → new name), so that a
    /// dataset renamed in the other version is not a change in its readers.
    renames: Vec<(String, String)>,
    /// Expand `*` from the upstreams' columns (which parses every
    /// ancestor's query); off, a `*` over an upstream stays a `*`.
    expand_stars: bool,
    /// Read only which column comes from which (no canonical text, no
    /// fingerprints): for exports, not for comparing versions.
    edges_only: bool,
    /// Columns held in `columns` so far (see [`MAX_KNOWN_COLUMNS`]).
    known_total: usize,
}

/// Dataset columns one reading holds at most, all datasets together; past
/// it a dataset's columns are unknown, so a `*` over it stays a `*` (which
/// passes every column through: never short). A thousand chained
/// `select *` models of 9,000 columns each held 9M columns (7 GB).
pub const MAX_KNOWN_COLUMNS: usize = 1_000_000;

impl<'g> Semantics<'g> {
    /// Nothing read yet; jobs and columns are read when first asked for.
    pub fn new(g: &'g LineageGraph) -> Self {
        let mut written: HashMap<&str, Vec<NodeIndex>> = HashMap::new();
        for (dataset, jobs) in &g.writers {
            if let Some(&n) = g.index.get(dataset) {
                for j in jobs {
                    written.entry(j.as_str()).or_default().push(n);
                }
            }
        }
        Semantics {
            g,
            written,
            jobs: HashMap::new(),
            columns: HashMap::new(),
            renames: Vec::new(),
            expand_stars: true,
            edges_only: false,
            known_total: 0,
        }
    }

    /// Jobs read for their column edges only (see
    /// [`crate::sql::script_column_edges`]): what an export needs.
    pub fn edges_only(mut self) -> Self {
        self.edges_only = true;
        self
    }

    /// Reads every job now, on all cores: in waves, each job once the
    /// columns of everything it reads are known (stars expand from them),
    /// so the result is the one [`Semantics::job`] gives one by one.
    pub fn read_all(&mut self) {
        use rayon::prelude::*;
        let g = self.g;
        // Datasets nobody writes: their columns are what is declared.
        for n in g.graph.node_indices() {
            if !g.writers.contains_key(&g.graph[n].id) {
                let cols = self.compute_columns(n);
                self.columns.insert(n, cols);
            }
        }
        let pending: Vec<&str> = g
            .jobs
            .keys()
            .map(String::as_str)
            .filter(|j| !self.jobs.contains_key(*j))
            .collect();
        // Kahn's order over datasets: a job waits for each upstream whose
        // columns are unknown, and each wave is every job waiting for none
        // (what re-testing every pending job per wave found, without the
        // quadratic re-test on deep lineage).
        let mut waits: HashMap<&str, usize> = HashMap::new();
        let mut waiters: HashMap<NodeIndex, Vec<&str>> = HashMap::new();
        let mut ready: Vec<&str> = Vec::new();
        for &j in &pending {
            let mut ups = self.upstreams(j);
            ups.sort_unstable();
            ups.dedup();
            ups.retain(|u| !self.columns.contains_key(u));
            if ups.is_empty() {
                ready.push(j);
            }
            waits.insert(j, ups.len());
            for u in ups {
                waiters.entry(u).or_default().push(j);
            }
        }
        let mut done = 0;
        while !ready.is_empty() {
            // Jobs in the graph's key order, so each wave is the same set in
            // the same order, whatever the hash maps' order.
            ready.sort_unstable();
            let this: &Semantics = self;
            let read: Vec<(&str, Option<ScriptLineage>)> =
                ready.par_iter().map(|&j| (j, this.read_job(j))).collect();
            done += read.len();
            for (j, lineage) in read {
                self.jobs.insert(j.to_string(), lineage);
            }
            let mut next = Vec::new();
            for &j in &ready {
                for n in self.written(j).to_vec() {
                    if self.columns.contains_key(&n) {
                        continue;
                    }
                    let cols = self.compute_columns(n);
                    self.columns.insert(n, cols);
                    for w in waiters.remove(&n).unwrap_or_default() {
                        let left = waits.get_mut(w).expect("every waiter waits");
                        *left -= 1;
                        if *left == 0 {
                            next.push(w);
                        }
                    }
                }
            }
            ready = next;
        }
        if done < pending.len() {
            // A cycle: the rest are read one by one, as asked.
            let mut rest: Vec<&str> = pending
                .into_iter()
                .filter(|j| !self.jobs.contains_key(*j))
                .collect();
            rest.sort_unstable();
            for j in rest {
                self.job(j);
            }
        }
    }

    /// The job's statements if they have been read (by [`Semantics::job`]
    /// or [`Semantics::read_all`]): for readers sharing one `&Semantics`
    /// across threads.
    pub fn read(&self, id: &str) -> Option<&ScriptLineage> {
        self.jobs.get(id).and_then(Option::as_ref)
    }

    /// The dataset's columns if they have been worked out (see
    /// [`Semantics::read`]).
    pub fn known_columns(&self, n: NodeIndex) -> Option<&[String]> {
        self.columns.get(&n).and_then(Option::as_deref)
    }

    /// The datasets whose columns `job`'s reading depends on.
    fn upstreams(&self, id: &str) -> Vec<NodeIndex> {
        if !self.expand_stars {
            return Vec::new();
        }
        self.written(id)
            .iter()
            .flat_map(|&n| self.g.graph.edges_directed(n, Direction::Incoming))
            .filter(|e| e.weight().via == id)
            .map(|e| e.source())
            .collect()
    }

    /// Jobs read without their upstreams' columns: each job's own query
    /// only, a `*` over an upstream left as a `*` that passes columns
    /// through by name. What a column walk from one table needs (the
    /// ancestors of every consumer are not parsed); the diff, which
    /// compares output columns, expands.
    pub fn without_star_expansion(mut self) -> Self {
        self.expand_stars = false;
        self
    }

    /// Reads each relation `old` in this side's SQL as `new`.
    pub fn with_renames(mut self, renames: Vec<(String, String)>) -> Self {
        self.renames = renames;
        self
    }

    /// The job's SQL, renames applied.
    pub fn sql(&self, id: &str) -> Option<Cow<'g, str>> {
        let sql = self.g.jobs.get(id)?.sql.as_deref()?;
        if self.renames.is_empty() {
            return Some(Cow::Borrowed(sql));
        }
        let mut sql = sql.to_string();
        // Through markers, so that swapped names (a → b, b → a) do not chain.
        for (i, (old, _)) in self.renames.iter().enumerate() {
            sql = replace_name(&sql, old, &format!("\u{1}{i}\u{1}"));
        }
        for (i, (_, new)) in self.renames.iter().enumerate() {
            sql = sql.replace(&format!("\u{1}{i}\u{1}"), new);
        }
        Some(Cow::Owned(sql))
    }

    /// The datasets `job` writes.
    pub fn written(&self, job: &str) -> &[NodeIndex] {
        self.written.get(job).map_or(&[], Vec::as_slice)
    }

    /// The job's statements, read with its upstreams' columns known;
    /// `None` when it has no SQL.
    pub fn job(&mut self, id: &str) -> Option<&ScriptLineage> {
        if !self.jobs.contains_key(id) {
            let computed = self.compute_job(id);
            self.jobs.insert(id.to_string(), computed);
        }
        self.jobs.get(id).and_then(Option::as_ref)
    }

    fn compute_job(&mut self, id: &str) -> Option<ScriptLineage> {
        for u in self.upstreams(id) {
            self.columns_of(u);
        }
        self.read_job(id)
    }

    /// Reads `id` with the upstream columns known so far.
    fn read_job(&self, id: &str) -> Option<ScriptLineage> {
        let sql = self.sql(id)?;
        let mut known = KnownColumns::new();
        for u in self.upstreams(id) {
            if let Some(cols) = self.columns.get(&u).cloned().flatten() {
                let relation = &self.g.graph[u].relation;
                known.insert(relation.to_lowercase(), cols.clone());
                known.insert(relation.clone(), cols);
            }
        }
        // The declared columns of what it writes (`tables:` DDL, a
        // catalog): an INSERT without a column list puts its values there
        // by position, whatever the SELECT calls them.
        for &w in self.written(id) {
            let d = &self.g.graph[w];
            if !d.columns.is_empty() && !known.contains_key(&d.relation) {
                known.insert(d.relation.to_lowercase(), d.columns.clone());
                known.insert(d.relation.clone(), d.columns.clone());
            }
        }
        let reading = match self.edges_only {
            true => ScriptReading::ColumnEdges,
            false => ScriptReading::Semantics,
        };
        Some(read_cached(
            &self.g.cache,
            &sql,
            self.g.config.dialect,
            &known,
            reading,
        ))
    }

    /// The columns of a dataset, when known: computed from the query that
    /// writes it, or else declared (`None` when neither can tell).
    pub fn columns_of(&mut self, n: NodeIndex) -> Option<Vec<String>> {
        // Upstreams first, without recursion: lineage can be deep.
        let mut stack = vec![(n, false)];
        let mut open: HashSet<NodeIndex> = HashSet::new();
        while let Some((x, ready)) = stack.pop() {
            if self.columns.contains_key(&x) {
                continue;
            }
            if ready {
                // Unknown while it is worked out: in a cycle (a reads b,
                // b reads a) reading a job asks for its own columns again,
                // which must not recurse without end.
                self.columns.insert(x, None);
                let cols = self.compute_columns(x);
                self.columns.insert(x, cols);
                continue;
            }
            if !open.insert(x) {
                continue;
            }
            stack.push((x, true));
            for e in self.g.graph.edges_directed(x, Direction::Incoming) {
                if !self.columns.contains_key(&e.source()) {
                    stack.push((e.source(), false));
                }
            }
        }
        self.columns.get(&n).cloned().flatten()
    }

    fn compute_columns(&mut self, n: NodeIndex) -> Option<Vec<String>> {
        // The query's own columns are exact; declared ones (YAML) are often
        // a documented subset, so they only stand in when the query cannot
        // tell.
        let d = &self.g.graph[n];
        let declared = (!d.columns.is_empty()).then(|| d.columns.clone());
        let cols = self.computed_columns(n).or(declared)?;
        let total = self.known_total.saturating_add(cols.len());
        if total > MAX_KNOWN_COLUMNS {
            return None;
        }
        self.known_total = total;
        Some(cols)
    }

    fn computed_columns(&mut self, n: NodeIndex) -> Option<Vec<String>> {
        let d = &self.g.graph[n];
        let relation = d.relation.clone();
        let [writer] = self.g.writers.get(&d.id)?.as_slice() else {
            return None;
        };
        let whole_query = matches!(
            self.g.jobs.get(writer).map(|j| j.kind),
            Some(JobKind::Dbt | JobKind::Manifest)
        );
        let script = self.job(&writer.clone())?;
        let statement = script.statements.iter().rev().find(|s| {
            s.columns.is_some()
                && s.kind.makes_whole_rows()
                && (whole_query || s.targets.iter().any(|t| same(t, &relation)))
        })?;
        let cols = statement.columns.as_ref()?;
        // Values going by position into a table of unknown columns: the
        // names are the SELECT's, not the table's.
        if cols.positional {
            return None;
        }
        // A `*` left in the output (not one inside a CTE) hides columns.
        if cols.columns.iter().any(|c| c.name == "*") {
            return None;
        }
        Some(crate::sql::unique_names(&cols.columns))
    }
}

/// `text` with every whole-name occurrence of `old` replaced by `new` (not
/// inside a longer name: `a.orders` does not match in `a.orders_v2`).
fn replace_name(text: &str, old: &str, new: &str) -> String {
    let name_char = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(old) {
        let before = text[..at].chars().next_back();
        let after = text[at + old.len()..].chars().next();
        let whole =
            !before.is_some_and(|c| name_char(c) || c == '.') && !after.is_some_and(name_char);
        if whole {
            out.push_str(&text[last..at]);
            out.push_str(new);
            last = at + old.len();
        }
    }
    out.push_str(&text[last..]);
    out
}

/// Whether a relation named in SQL is `relation` (case aside; an
/// unqualified name matches the qualified one it ends, and the other way).
pub fn same(named: &str, relation: &str) -> bool {
    let (named, relation) = (named.to_lowercase(), relation.to_lowercase());
    named == relation
        || relation.ends_with(&format!(".{named}"))
        || named.ends_with(&format!(".{relation}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_replace_whole_names_only() {
        let sql = "select * from a.orders join a.orders_v2 using (id) join x.a.orders on 1=1";
        assert_eq!(
            replace_name(sql, "a.orders", "b.orders"),
            "select * from b.orders join a.orders_v2 using (id) join x.a.orders on 1=1"
        );
    }
}
