//! The lineage graph as JSON, DOT (through graphviz-rust's printer),
//! Mermaid and SVG, restricted to a set of selected nodes.

use std::collections::BTreeSet;

use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use serde::Serialize;

use super::SCHEMA_VERSION;
use super::dot;
use super::pieces::{Cut, around, splice};
use crate::graph::LineageGraph;

mod kept;

pub use kept::{KeptJson, Patch, Patched, kept_json, patched_json, write_json_kept};

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    summary: Summary<'a>,
    nodes: Vec<JsonNode<'a>>,
    edges: Vec<JsonEdge<'a>>,
}

#[derive(Serialize)]
struct JsonNode<'a> {
    id: &'a str,
    kind: &'a str,
    name: &'a str,
    relation: &'a str,
    file: Option<&'a str>,
    line: Option<u32>,
}

#[derive(Serialize)]
struct JsonEdge<'a> {
    from: &'a str,
    to: &'a str,
    via: &'a str,
    file: &'a str,
    line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<&'a str>,
}

/// Counts over the selected subgraph, and the datasets whose inputs no
/// static reader can know (their models ask the warehouse).
#[derive(Serialize)]
struct Summary<'a> {
    datasets: usize,
    edges: usize,
    edges_from_manifest: usize,
    needs_warehouse: Vec<&'a str>,
}

impl<'a> Summary<'a> {
    /// The summary of `datasets` datasets and `edges`.
    fn of(datasets: usize, edges: &[JsonEdge], needs_warehouse: Vec<&'a str>) -> Summary<'a> {
        Summary {
            datasets,
            edges: edges.len(),
            edges_from_manifest: edges
                .iter()
                .filter(|e| e.evidence == Some("manifest"))
                .count(),
            needs_warehouse,
        }
    }
}

/// Edges between selected nodes, sorted by (from, to, via).
fn edges<'a>(
    g: &'a LineageGraph,
    nodes: &BTreeSet<NodeIndex>,
) -> Vec<(NodeIndex, NodeIndex, &'a crate::graph::Edge)> {
    // Every node selected (the usual `ripple graph`): nothing to look up.
    let all = nodes.len() == g.graph.node_count();
    let mut out: Vec<_> = g
        .graph
        .edge_references()
        .filter(|e| all || (nodes.contains(&e.source()) && nodes.contains(&e.target())))
        .map(|e| (e.source(), e.target(), e.weight()))
        .collect();
    out.sort_by(|a, b| {
        (&g.graph[a.0].id, &g.graph[a.1].id, a.2).cmp(&(&g.graph[b.0].id, &g.graph[b.1].id, b.2))
    });
    out
}

/// The selected subgraph as the JSON document `ripple graph` prints.
pub fn json(g: &LineageGraph, nodes: &BTreeSet<NodeIndex>) -> String {
    let mut out = Vec::new();
    let _ = write_json(g, nodes, &mut out);
    // serde_json writes only valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// [`json`] written to `out` as it is made, the nodes and edges on every
/// core.
pub fn write_json(
    g: &LineageGraph,
    nodes: &BTreeSet<NodeIndex>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    write_json_by(g, nodes, Cut::for_elements(ELEMENT_BYTES), out)
}

/// About how many bytes a node's or an edge's text takes.
const ELEMENT_BYTES: usize = 256;

fn write_json_by(
    g: &LineageGraph,
    nodes: &BTreeSet<NodeIndex>,
    cut: Cut,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let doc = document(g, nodes);
    write_document(doc.summary, Nodes::Made(&doc.nodes), &doc.edges, cut, out)
}

/// The nodes a document is written with.
enum Nodes<'a> {
    /// Made now.
    Made(&'a [JsonNode<'a>]),
    /// As a kept document wrote them: its whole `"nodes"` entry, from the
    /// newline before the key to the list's closing bracket.
    Kept(&'a [u8]),
}

/// Writes the document of `summary`, `nodes` and `edges` to `out`, its
/// long lists on every core (`cut`).
fn write_document(
    summary: Summary,
    nodes: Nodes,
    edges: &[JsonEdge],
    cut: Cut,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut rest = serde_json::to_string_pretty(&Document {
        schema_version: SCHEMA_VERSION,
        summary,
        nodes: Vec::new(),
        edges: Vec::new(),
    })
    .map_err(std::io::Error::other)?;
    rest.push('\n');
    let rest = match nodes {
        Nodes::Made(nodes) => splice(&rest, "nodes", nodes, cut, out)?,
        Nodes::Kept(text) => {
            let (before, after) = around(&rest, "nodes")?;
            out.write_all(before.as_bytes())?;
            out.write_all(text)?;
            after
        }
    };
    let rest = splice(rest, "edges", edges, cut, out)?;
    out.write_all(rest.as_bytes())
}

/// [`json`] written in one pass: what its splicing must equal.
#[cfg(test)]
fn json_whole(g: &LineageGraph, nodes: &BTreeSet<NodeIndex>) -> String {
    let mut out = serde_json::to_string_pretty(&document(g, nodes)).unwrap_or_default();
    out.push('\n');
    out
}

/// The selected datasets whose models ask the warehouse.
fn needs_warehouse<'a>(g: &'a LineageGraph, nodes: &BTreeSet<NodeIndex>) -> Vec<&'a str> {
    // Few jobs ask the warehouse, and most projects have none: found
    // first, so a node is looked up only when there are some.
    let asking: BTreeSet<&str> = g
        .jobs
        .values()
        .filter(|j| !j.needs_warehouse.is_empty())
        .map(|j| j.id.as_str())
        .collect();
    match asking.is_empty() {
        true => Vec::new(),
        false => nodes
            .iter()
            .map(|&n| g.graph[n].id.as_str())
            .filter(|id| {
                g.writers
                    .get(*id)
                    .is_some_and(|jobs| jobs.iter().any(|j| asking.contains(j.as_str())))
            })
            .collect(),
    }
}

/// The document [`json`] writes.
fn document<'a>(g: &'a LineageGraph, nodes: &BTreeSet<NodeIndex>) -> Document<'a> {
    let edges: Vec<JsonEdge> = edges(g, nodes)
        .into_iter()
        .map(|(a, b, e)| JsonEdge {
            from: &g.graph[a].id,
            to: &g.graph[b].id,
            via: &e.via,
            file: &e.file,
            line: e.line,
            evidence: e.evidence,
        })
        .collect();
    Document {
        schema_version: SCHEMA_VERSION,
        summary: Summary::of(nodes.len(), &edges, needs_warehouse(g, nodes)),
        nodes: nodes
            .iter()
            .map(|&n| {
                let d = &g.graph[n];
                JsonNode {
                    id: &d.id,
                    kind: d.kind.as_str(),
                    name: &d.name,
                    relation: &d.relation,
                    file: d.file.as_deref(),
                    line: d.line,
                }
            })
            .collect(),
        edges,
    }
}

/// The selected subgraph in DOT, one node per dataset (shape by kind).
pub fn dot(g: &LineageGraph, nodes: &BTreeSet<NodeIndex>) -> String {
    let mut stmts = Vec::new();
    for &n in nodes {
        let d = &g.graph[n];
        let shape = match d.kind {
            crate::project::DatasetKind::Source => "cylinder",
            crate::project::DatasetKind::Seed => "note",
            crate::project::DatasetKind::Snapshot => "component",
            crate::project::DatasetKind::Table => "box3d",
            crate::project::DatasetKind::Path => "folder",
            crate::project::DatasetKind::Model => "box",
        };
        stmts.push(dot::node(
            &d.id,
            vec![dot::attr("label", &d.name), dot::attr("shape", shape)],
        ));
    }
    for (a, b, e) in edges(g, nodes) {
        stmts.push(dot::edge(
            &g.graph[a].id,
            &g.graph[b].id,
            vec![dot::attr("tooltip", &e.via)],
        ));
    }
    dot::digraph("lineage", stmts)
}

/// The selected subgraph as a Mermaid flowchart (renders on GitHub).
pub fn mermaid(g: &LineageGraph, nodes: &BTreeSet<NodeIndex>) -> String {
    use super::mermaid::{Flowchart, Shape};
    let mut f = Flowchart::new();
    // Mermaid ids must be plain: number the nodes in output order.
    let ids: std::collections::HashMap<NodeIndex, usize> =
        nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    for (&n, i) in nodes.iter().zip(0..) {
        let d = &g.graph[n];
        let shape = match d.kind {
            crate::project::DatasetKind::Source => Shape::Database,
            crate::project::DatasetKind::Table => Shape::Subroutine,
            _ => Shape::Box,
        };
        f.node(&format!("n{i}"), shape, &[&d.name]);
    }
    for (a, b, _) in edges(g, nodes) {
        f.edge(&format!("n{}", ids[&a]), &format!("n{}", ids[&b]), None);
    }
    f.finish()
}

/// The selected subgraph as a standalone SVG picture, boxes coloured by
/// dataset kind (laid out in Rust: no Graphviz needed).
///
/// At most [`super::svg::MAX_BOXES`] boxes, the first in the graph's order;
/// the picture says how many more there are and how to see them.
pub fn svg(g: &LineageGraph, nodes: &BTreeSet<NodeIndex>) -> String {
    use super::svg::{Diagram, Edge, MAX_BOXES, Node, render};
    let drawn: BTreeSet<NodeIndex> = nodes.iter().take(MAX_BOXES).copied().collect();
    let folded = (nodes.len() > drawn.len()).then(|| {
        format!(
            "{} of {} datasets not drawn (a picture holds at most {MAX_BOXES}): draw a part with --select, or list them all with --format json or dot",
            nodes.len() - drawn.len(),
            nodes.len()
        )
    });
    let nodes = &drawn;
    let at: std::collections::HashMap<NodeIndex, usize> =
        nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let boxes = nodes
        .iter()
        .map(|&n| {
            let d = &g.graph[n];
            let mut tip = format!("{} ({})\nrelation {}", d.name, d.kind.as_str(), d.relation);
            if let Some(f) = &d.file {
                tip.push_str(&format!("\n{f}:{}", d.line.unwrap_or(1)));
            }
            Node {
                id: d.id.clone(),
                title: d.name.clone(),
                detail: (d.relation != d.name).then(|| d.relation.clone()),
                state: d.kind.as_str(),
                tooltip: tip,
            }
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let arrows = edges(g, nodes)
        .into_iter()
        .filter(|(a, b, _)| seen.insert((*a, *b)))
        .map(|(a, b, _)| Edge {
            from: at[&a],
            to: at[&b],
            label: None,
        })
        .collect();
    render(
        &Diagram {
            nodes: boxes,
            edges: arrows,
            folded,
        },
        true,
    )
}

/// Output formats of `ripple graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Nodes and edges as JSON.
    Json,
    /// Graphviz DOT.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
    /// OpenLineage events, one JSON object per line (docs/openlineage.md).
    Openlineage,
    /// A standalone SVG picture, laid out by ripple (no Graphviz needed).
    Svg,
}

/// The subgraph of `g` on `nodes` in `format` (OpenLineage events written
/// with `openlineage`).
pub fn render(
    g: &LineageGraph,
    nodes: &BTreeSet<NodeIndex>,
    format: Format,
    openlineage: &super::openlineage::Options,
) -> String {
    match format {
        Format::Json => json(g, nodes),
        Format::Dot => dot(g, nodes),
        Format::Mermaid => mermaid(g, nodes),
        Format::Openlineage => super::openlineage::events(g, nodes, openlineage).text,
        Format::Svg => svg(g, nodes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_written_in_parts_is_the_whole_document() {
        let g = LineageGraph::of_fixture("shop");
        let all: BTreeSet<NodeIndex> = g.graph.node_indices().collect();
        assert!(all.len() > 3 && g.graph.edge_count() > 3);
        let some: BTreeSet<NodeIndex> = all.iter().copied().take(3).collect();
        for nodes in [&all, &some, &BTreeSet::new()] {
            let whole = json_whole(&g, nodes);
            assert_eq!(json(&g, nodes), whole);
            for cut in crate::emit::pieces::cuts_to_test(nodes.len()) {
                let mut out = Vec::new();
                write_json_by(&g, nodes, cut, &mut out).unwrap();
                assert_eq!(String::from_utf8(out).unwrap(), whole, "{cut:?}");
            }
        }
        let parsed: serde_json::Value = serde_json::from_str(&json(&g, &all)).unwrap();
        assert_eq!(parsed["nodes"].as_array().unwrap().len(), all.len());
    }
}
