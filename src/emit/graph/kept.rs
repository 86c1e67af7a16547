//! The whole graph's JSON document kept in the warm cache under the
//! project's lineage digest, and patched for a run whose edited models
//! changed only what they read (docs/cache.md, "The whole graph").
//!
//! Beside the document, an index of what it was made of: its node ids,
//! its edges by place, and the models edited since the snapshot as that
//! lineage had them. A later lineage of the same snapshot whose models
//! differ from those only in reads of datasets the graph already has is
//! the same graph with those models' incoming edges replaced: the kept
//! nodes are copied, the edges written again. Anything else (a read of an
//! unknown model, a relation named in SQL, a cycle, any other change to a
//! model) builds the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use petgraph::visit::EdgeRef;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{ELEMENT_BYTES, JsonEdge, Nodes, Summary, needs_warehouse, write_document, write_json};
use crate::cache::{Cache, Key, KeyBuilder, Snapshot};
use crate::emit::SCHEMA_VERSION;
use crate::emit::pieces::Cut;
use crate::graph::{LineageGraph, first_id};
use crate::project::{JobKind, Lineage, ModelEdit, ModelLineage, Reference, Target};

/// The name the whole graph's JSON document is kept under in the warm
/// cache (docs/cache.md, "Answers").
const KEPT: &str = "graph-json";

/// The name the document's index is kept under.
const INDEX: &str = "graph-index";

/// An edge's evidence as the index keeps it, by place: none, dbt's
/// manifest, a relation named by hand. (Kept as a flag, a hard-coded edge
/// was written back as a manifest one.)
const EVIDENCE: [Option<&str>; 3] = [None, Some("manifest"), Some("hard-coded")];

/// The place of `evidence` in [`EVIDENCE`] (an unknown one as none).
fn evidence_code(evidence: Option<&str>) -> u8 {
    EVIDENCE.iter().position(|e| *e == evidence).unwrap_or(0) as u8
}

/// The key the whole graph's JSON is kept under, for a project whose
/// lineage digest is `lineage` ([`crate::project::Lineage::key`]).
fn kept_key(lineage: Key) -> Key {
    key_of(KEPT, lineage)
}

/// The key the index is kept under: one per snapshot of the project
/// ([`crate::project::Lineage::base`]), whatever models were edited since.
fn index_key(base: Key) -> Key {
    key_of(INDEX, base)
}

/// The key of what is kept as `name` for the digest `digest`.
fn key_of(name: &str, digest: Key) -> Key {
    KeyBuilder::default()
        .str(name)
        .u64(SCHEMA_VERSION.into())
        .key(digest)
        .finish()
}

/// The whole graph's JSON document as [`write_json`] wrote it for a
/// project of the same lineage, kept in `cache`, and how many errors were
/// found reading and building that graph; `None` when none is kept. The
/// document is made of the graph alone, and the graph of what the digest
/// covers, so it is this project's document.
pub fn kept_json(cache: &Cache, lineage: Key) -> Option<KeptJson> {
    let kept = cache.snapshot(KEPT, kept_key(lineage))?;
    let (errors, at) = errors_line(kept.body())?;
    Some(KeptJson { errors, at, kept })
}

/// The error count a kept document's file begins with, and where the
/// document begins.
fn errors_line(body: &[u8]) -> Option<(usize, usize)> {
    let end = memchr::memchr(b'\n', body)?;
    let errors = std::str::from_utf8(&body[..end]).ok()?.parse().ok()?;
    Some((errors, end + 1))
}

/// A whole graph's JSON document kept in the warm cache.
pub struct KeptJson {
    /// The errors found reading and building its graph.
    pub errors: usize,
    at: usize,
    kept: Snapshot,
}

impl KeptJson {
    /// The document.
    pub fn document(&self) -> &[u8] {
        &self.kept.body()[self.at..]
    }
}

/// What a kept document was made of, to patch it.
#[derive(Serialize, Deserialize)]
struct Index {
    /// The lineage digest the document is kept under.
    key: Key,
    /// The models edited since the snapshot, as that lineage had them.
    edits: Vec<ModelEdit>,
    /// The errors found reading and building the graph.
    errors: usize,
    /// How many findings a patch could make or break: cycles, and
    /// datasets or jobs found twice.
    cycles: usize,
    /// The node ids, in the document's order (their ids' order).
    nodes: Vec<String>,
    /// The jobs edges run through: (id, file).
    jobs: Vec<(String, String)>,
    /// The edges, in no order: from, to (places in `nodes`), job (place in
    /// `jobs`), line, and its evidence (a place in [`EVIDENCE`]).
    edges: Vec<(u32, u32, u32, u32, u8)>,
    /// The datasets whose models ask the warehouse.
    needs_warehouse: Vec<String>,
}

impl Index {
    /// The index of `g`'s whole document, of the lineage `lineage`.
    fn of(g: &LineageGraph, lineage: &Lineage, errors: usize) -> Index {
        let nodes: BTreeSet<_> = g.graph.node_indices().collect();
        let mut jobs: Vec<(String, String)> = Vec::new();
        let mut job_at: FxHashMap<&str, u32> = FxHashMap::default();
        let edges = g
            .graph
            .edge_references()
            .map(|e| {
                let w = e.weight();
                let job = *job_at.entry(&w.via).or_insert_with(|| {
                    jobs.push((w.via.clone(), w.file.clone()));
                    (jobs.len() - 1) as u32
                });
                let at = |n: petgraph::graph::NodeIndex| n.index() as u32;
                (
                    at(e.source()),
                    at(e.target()),
                    job,
                    w.line,
                    evidence_code(w.evidence),
                )
            })
            .collect();
        Index {
            key: lineage.key,
            edits: lineage.edits.clone(),
            errors,
            cycles: (g.diagnostics.iter())
                .filter(|d| d.code == "cycle" || d.code.starts_with("duplicate"))
                .count(),
            nodes: g.graph.node_weights().map(|d| d.id.clone()).collect(),
            jobs,
            edges,
            needs_warehouse: needs_warehouse(g, &nodes)
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    }
}

/// [`write_json`] of every node of `g` to `out`, kept in its cache as it
/// is written under `lineage`, what the project `g` was built from is made
/// of, with the index that patches it, for the next run of that snapshot.
/// Copied as it goes: the document of a 100,000-model project is 85 MB,
/// never held in memory. A copy that cannot be written costs the next run
/// time, not this one its answer.
pub fn write_json_kept(
    g: &LineageGraph,
    lineage: &Lineage,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let nodes: BTreeSet<_> = g.graph.node_indices().collect();
    let errors = crate::emit::check::counts(&g.diagnostics).0;
    match keep_as_written(&g.cache, lineage.key, errors, out, |w| {
        write_json(g, &nodes, w)
    }) {
        Some(Ok(())) => {
            keep_index(&g.cache, lineage, &Index::of(g, lineage, errors));
            Ok(())
        }
        Some(Err(e)) => Err(e),
        // No cache folder to write to.
        None => write_json(g, &nodes, out),
    }
}

/// Runs `write` on `out`, keeping what it writes in `cache` under the
/// lineage `key` (after the line of `errors`); `None`, having written
/// nothing, when the cache has no folder.
fn keep_as_written(
    cache: &Cache,
    key: Key,
    errors: usize,
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Option<std::io::Result<()>> {
    let mut written = None;
    cache.write_snapshot_unless(KEPT, kept_key(key), |copy| {
        writeln!(copy, "{errors}")?;
        let mut tee = Tee {
            out: &mut *out,
            copy,
            failed: None,
        };
        let w = write(&mut tee);
        let ok = w.is_ok();
        written = Some(w);
        match tee.failed {
            Some(e) => Err(e),
            None => Ok(ok),
        }
    });
    written
}

/// Keeps `index`, for the lineages of `lineage`'s snapshot.
fn keep_index(cache: &Cache, lineage: &Lineage, index: &Index) {
    cache.write_snapshot(INDEX, index_key(lineage.base), |w| {
        serde_json::to_writer(w, index).map_err(std::io::Error::other)
    });
}

/// Writes to `out`, and the same bytes to `copy` until that fails.
struct Tee<'a> {
    out: &'a mut dyn Write,
    copy: &'a mut dyn Write,
    failed: Option<std::io::Error>,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        if self.failed.is_none()
            && let Err(e) = self.copy.write_all(&buf[..n])
        {
            self.failed = Some(e);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A kept document patched to a later lineage, ready to be written.
pub struct Patched {
    /// The document patched, and where its nodes are.
    kept: Snapshot,
    nodes: std::ops::Range<usize>,
    index: Index,
}

/// The top-level key of the nodes in a document, and what follows them.
const NODES: &str = "\n  \"nodes\": ";
const AFTER_NODES: &str = ",\n  \"edges\": ";

/// The kept document of another lineage of `lineage`'s snapshot, patched
/// to `lineage`: when the models whose lineage differs between the two
/// differ only in what they read, each read a model or source the graph
/// already has, and the graph has no cycle (nor a dataset or job found
/// twice) before, nor a cycle after. Otherwise the graph is built.
pub fn patched_json(cache: &Cache, lineage: &Lineage) -> Patch {
    match cache.snapshot(INDEX, index_key(lineage.base)) {
        None => Patch::Unkept,
        Some(index) => match patch(cache, &index, lineage) {
            Some(patched) => Patch::Done(Box::new(patched)),
            None => Patch::Refused,
        },
    }
}

/// What [`patched_json`] found.
pub enum Patch {
    /// No index is kept for the project's snapshot.
    Unkept,
    /// The kept document cannot be patched to the lineage.
    Refused,
    /// The kept document, patched.
    Done(Box<Patched>),
}

/// [`patched_json`] from the index `kept_index`.
fn patch(cache: &Cache, kept_index: &Snapshot, lineage: &Lineage) -> Option<Patched> {
    let mut index: Index = serde_json::from_slice(kept_index.body()).ok()?;
    if index.key == lineage.key || index.cycles > 0 {
        return None;
    }
    // Every place in an edge names a node and a job of the index: an index
    // that says otherwise is not one this build wrote.
    let (nodes, jobs) = (index.nodes.len(), index.jobs.len());
    let fits = |&(a, b, j, ..): &(u32, u32, u32, u32, u8)| {
        (a as usize) < nodes && (b as usize) < nodes && (j as usize) < jobs
    };
    if !index.edges.iter().all(fits) {
        return None;
    }
    let kept = cache.snapshot(KEPT, kept_key(index.key))?;
    let (errors, at) = errors_line(kept.body())?;
    if errors != index.errors {
        return None;
    }
    let doc = &kept.body()[at..];
    let from = memchr::memmem::find(doc, NODES.as_bytes())?;
    let to = from + memchr::memmem::find(&doc[from..], AFTER_NODES.as_bytes())?;
    let nodes = kept.start() + at + from..kept.start() + at + to;
    // Each model whose lineage differs: as the document had it, and now.
    let then: BTreeMap<usize, &ModelEdit> = index.edits.iter().map(|e| (e.place, e)).collect();
    let now: BTreeMap<usize, &ModelEdit> = lineage.edits.iter().map(|e| (e.place, e)).collect();
    let places: BTreeSet<usize> = then.keys().chain(now.keys()).copied().collect();
    let mut changed: Vec<(&ModelLineage, &ModelLineage)> = Vec::new();
    for place in places {
        let before = then.get(&place).map(|e| &e.now);
        let before = before.or_else(|| now.get(&place).map(|e| &e.kept))?;
        let after = now.get(&place).map(|e| &e.now);
        let after = after.or_else(|| then.get(&place).map(|e| &e.kept))?;
        if before == after {
            continue;
        }
        if before.rest != after.rest {
            return None;
        }
        changed.push((before, after));
    }
    let ids: FxHashMap<&str, u32> = (index.nodes.iter())
        .zip(0..)
        .map(|(id, at)| (id.as_str(), at))
        .collect();
    let mut job_at: FxHashMap<String, u32> = (index.jobs.iter())
        .zip(0..)
        .map(|((id, _), at)| (id.clone(), at))
        .collect();
    let mut edges = std::mem::take(&mut index.edges);
    for (before, after) in changed {
        // A model that is no node is in no edge, before or after.
        if !after.enabled {
            continue;
        }
        let job = &after.job;
        let writes_itself = match &job.writes[..] {
            [w] => {
                w.target
                    == Target::Node {
                        id: after.node.clone(),
                    }
            }
            _ => false,
        };
        if job.kind != JobKind::Dbt || !writes_itself {
            return None;
        }
        let model = *ids.get(after.node.as_str())?;
        // Each read's node and line, found as building the graph finds it
        // when the graph has the dataset: a model or a source.
        let reads = |reads: &[Reference]| -> Option<BTreeSet<(u32, u32)>> {
            reads
                .iter()
                .map(|r| {
                    if !matches!(r.target, Target::Ref { .. } | Target::Source { .. }) {
                        return None;
                    }
                    let node = *ids.get(first_id(&r.target)?.as_ref())?;
                    (node != model).then_some((node, r.line))
                })
                .collect()
        };
        let (gone, come) = (reads(&before.job.reads)?, reads(&job.reads)?);
        let via = *job_at.entry(job.id.clone()).or_insert_with(|| {
            index.jobs.push((job.id.clone(), job.file.clone()));
            (index.jobs.len() - 1) as u32
        });
        // The model's edges are its reads as the document had them.
        let mut had = BTreeSet::new();
        edges.retain(|&(a, b, j, line, evidence)| {
            if j != via {
                return true;
            }
            had.insert((a, b, line, evidence));
            false
        });
        let expected: BTreeSet<_> = gone.iter().map(|&(a, l)| (a, model, l, 0)).collect();
        if had != expected {
            return None;
        }
        edges.extend(come.into_iter().map(|(a, line)| (a, model, via, line, 0)));
    }
    // In the graph's order: by from, to, then the edge (job, file, line).
    let jobs = &index.jobs;
    edges.sort_unstable_by(|x, y| {
        let edge = |e: &(u32, u32, u32, u32, u8)| {
            let (id, file) = &jobs[e.2 as usize];
            (e.0, e.1, id.as_str(), file.as_str(), e.3, e.4)
        };
        edge(x).cmp(&edge(y))
    });
    edges.dedup();
    if has_cycle(index.nodes.len(), &edges) {
        return None;
    }
    index.edges = edges;
    index.key = lineage.key;
    index.edits = lineage.edits.clone();
    Some(Patched { kept, nodes, index })
}

/// Whether the edges (from, to, ...) between `n` nodes make a cycle: Kahn's
/// count of the nodes that can be taken in order.
fn has_cycle(n: usize, edges: &[(u32, u32, u32, u32, u8)]) -> bool {
    let mut into = vec![0u32; n];
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b, ..) in edges {
        into[b as usize] += 1;
        out[a as usize].push(b);
    }
    let mut ready: Vec<u32> = (0..n as u32).filter(|&v| into[v as usize] == 0).collect();
    let mut taken = 0;
    while let Some(v) = ready.pop() {
        taken += 1;
        for &w in &out[v as usize] {
            into[w as usize] -= 1;
            if into[w as usize] == 0 {
                ready.push(w);
            }
        }
    }
    taken < n
}

impl Patched {
    /// The errors found reading and building the graph.
    pub fn errors(&self) -> usize {
        self.index.errors
    }

    /// Writes the document to `out`, keeping it (and its index) in `cache`
    /// for the next run of `lineage`.
    pub fn write(
        &self,
        cache: &Cache,
        lineage: &Lineage,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        match keep_as_written(cache, lineage.key, self.index.errors, out, |w| {
            self.write_to(w)
        }) {
            Some(Ok(())) => {
                keep_index(cache, lineage, &self.index);
                Ok(())
            }
            Some(Err(e)) => Err(e),
            None => self.write_to(out),
        }
    }

    /// The document: the kept one's nodes, and the patched edges.
    fn write_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let index = &self.index;
        let edges: Vec<JsonEdge> = index
            .edges
            .iter()
            .map(|&(a, b, j, line, evidence)| {
                let (via, file) = &index.jobs[j as usize];
                JsonEdge {
                    from: &index.nodes[a as usize],
                    to: &index.nodes[b as usize],
                    via,
                    file,
                    line,
                    evidence: EVIDENCE.get(usize::from(evidence)).copied().flatten(),
                }
            })
            .collect();
        let needs_warehouse = index.needs_warehouse.iter().map(String::as_str).collect();
        write_document(
            Summary::of(index.nodes.len(), &edges, needs_warehouse),
            Nodes::Kept(&self.kept.bytes()[self.nodes.clone()]),
            &edges,
            Cut::for_elements(ELEMENT_BYTES),
            out,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Kahn's count says "cycle" exactly when petgraph finds one.
        #[test]
        fn has_cycle_is_petgraphs_answer(
            n in 1usize..12,
            pairs in prop::collection::vec((0u32..12, 0u32..12), 0..30),
        ) {
            let edges: Vec<(u32, u32, u32, u32, u8)> = pairs
                .into_iter()
                .map(|(a, b)| (a % n as u32, b % n as u32, 0, 0, 0))
                .collect();
            let mut g = petgraph::graph::DiGraph::<(), ()>::new();
            let nodes: Vec<_> = (0..n).map(|_| g.add_node(())).collect();
            for &(a, b, ..) in &edges {
                g.add_edge(nodes[a as usize], nodes[b as usize], ());
            }
            prop_assert_eq!(
                has_cycle(n, &edges),
                petgraph::algo::is_cyclic_directed(&g)
            );
        }
    }
}
