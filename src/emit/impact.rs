//! The impact set as JSON, a text table, Markdown, DOT, Mermaid, SVG and an
//! HTML report.

use std::collections::HashSet;
use std::fmt::Write as _;

use petgraph::visit::EdgeRef;
use serde::Serialize;

use super::SCHEMA_VERSION;
use super::dot;
use crate::graph::LineageGraph;
use crate::impact::{AffectedDataset, Impact, TimeModel};

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    #[serde(flatten)]
    impact: &'a Impact,
}

/// The impact as JSON.
pub fn json(impact: &Impact) -> String {
    let mut out = serde_json::to_string_pretty(&Document {
        schema_version: SCHEMA_VERSION,
        impact,
    })
    .unwrap_or_default();
    out.push('\n');
    out
}

/// `2026-01-10..2026-01-12, 2026-02-01`, `full`, `…..2026-01-31`.
pub fn range(d: &AffectedDataset) -> String {
    if d.full {
        return "full".to_string();
    }
    d.intervals
        .iter()
        .map(|r| {
            let from = r.from.as_deref().unwrap_or("…");
            if Some(r.to.as_str()) == r.from.as_deref() {
                r.to.clone()
            } else {
                format!("{from}..{}", r.to)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table a person reads at a glance.
pub fn text(impact: &Impact) -> String {
    let mut rows: Vec<[String; 5]> =
        vec![["dataset", "grain", "affected", "partitions", "why"].map(String::from)];
    // Every cell on one line: a line break in a name would start a line.
    let l = |s: &str| crate::text::one_line(s).into_owned();
    for d in &impact.datasets {
        rows.push([
            l(&d.name),
            d.grain.to_string(),
            range(d),
            if d.unbounded {
                format!("{}+", d.partitions)
            } else {
                d.partitions.to_string()
            },
            l(&d.reasons.join("; ")),
        ]);
    }
    let mut widths = [0usize; 5];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = format!(
        "impact of {} as of {}: {} dataset{} affected\n\n",
        impact.changed.join(", "),
        impact.as_of,
        impact.datasets.len(),
        crate::text::plural(impact.datasets.len())
    );
    for r in &rows {
        let mut line = String::new();
        for (i, (c, w)) in r.iter().zip(widths).enumerate() {
            if i == 4 {
                line.push_str(c);
            } else {
                crate::text::push_padded(&mut line, c, w);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if let Some(p) = &impact.pruned {
        let _ = writeln!(
            out,
            "\naffected columns (wrong: {}; {} downstream dataset{} read{} none of them and {} left out):",
            p.columns.join(", "),
            p.left_out,
            crate::text::plural(p.left_out),
            if p.left_out == 1 { "s" } else { "" },
            if p.left_out == 1 { "is" } else { "are" }
        );
        for d in &impact.datasets {
            let _ = writeln!(out, "  {}: {}", l(&d.name), l(&d.columns.join(", ")));
        }
    }
    for d in &impact.datasets {
        for e in &d.explain {
            let _ = writeln!(out, "  {}: {}", l(&d.name), l(e));
        }
    }
    if !impact.stopped.is_empty() {
        out.push_str("\nnot affected:\n");
        for s in &impact.stopped {
            let _ = writeln!(
                out,
                "  {} — stopped at {}: {}",
                l(&s.dataset),
                l(&s.edge),
                l(&s.why)
            );
        }
    }
    out
}

/// Markdown for a ticket or a PR: names as code spans, prose escaped.
pub fn markdown(impact: &Impact) -> String {
    use super::escape::{cell_code, code_list, markdown_text};
    let mut out = format!(
        "### Impact of {} as of {}\n\n{} dataset{} affected.\n\n| dataset | grain | affected | partitions | why |\n|---|---|---|---|---|\n",
        code_list(&impact.changed),
        impact.as_of,
        impact.datasets.len(),
        crate::text::plural(impact.datasets.len())
    );
    for d in &impact.datasets {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell_code(&d.name),
            d.grain,
            markdown_text(&range(d)),
            if d.unbounded {
                "unbounded".to_string()
            } else {
                d.partitions.to_string()
            },
            markdown_text(&d.reasons.join("; "))
        );
    }
    if let Some(p) = &impact.pruned {
        let _ = writeln!(
            out,
            "\nWrong columns: {}. {} downstream dataset{} read none of them and {} left out. Affected columns:\n",
            code_list(&p.columns),
            p.left_out,
            crate::text::plural(p.left_out),
            if p.left_out == 1 { "is" } else { "are" }
        );
        for d in &impact.datasets {
            let _ = writeln!(out, "- {}: {}", cell_code(&d.name), code_list(&d.columns));
        }
    }
    if !impact.stopped.is_empty() {
        out.push_str("\nNot affected:\n\n");
        for s in &impact.stopped {
            let _ = writeln!(
                out,
                "- {}: stopped at {} ({})",
                cell_code(&s.dataset),
                markdown_text(&s.edge),
                markdown_text(&s.why)
            );
        }
    }
    out
}

/// The affected subgraph in DOT, edges labelled with their mapping.
pub fn dot(g: &LineageGraph, model: &TimeModel, impact: &Impact) -> String {
    let affected: HashSet<&str> = impact.datasets.iter().map(|d| d.id.as_str()).collect();
    let mut stmts = Vec::new();
    for d in &impact.datasets {
        let range = range(d);
        stmts.push(dot::node(
            &d.id,
            vec![
                dot::attr_lines("label", &[&d.name, &range]),
                dot::attr("shape", "box"),
            ],
        ));
    }
    for ((from, to), label) in edges(g, model, &affected) {
        stmts.push(dot::edge(&from, &to, vec![dot::attr("label", &label)]));
    }
    dot::digraph("impact", stmts)
}

/// The affected subgraph as a Mermaid flowchart.
pub fn mermaid(g: &LineageGraph, model: &TimeModel, impact: &Impact) -> String {
    let affected: HashSet<&str> = impact.datasets.iter().map(|d| d.id.as_str()).collect();
    let ids: std::collections::HashMap<&str, usize> = impact
        .datasets
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let mut f = super::mermaid::Flowchart::new();
    for (i, d) in impact.datasets.iter().enumerate() {
        f.node(
            &format!("n{i}"),
            super::mermaid::Shape::Box,
            &[&d.name, &range(d)],
        );
    }
    for ((a, b), label) in edges(g, model, &affected) {
        f.edge(
            &format!("n{}", ids[a.as_str()]),
            &format!("n{}", ids[b.as_str()]),
            Some(&label),
        );
    }
    f.finish()
}

/// Edges between affected datasets with their mapping, sorted.
fn edges(
    g: &LineageGraph,
    model: &TimeModel,
    affected: &HashSet<&str>,
) -> Vec<((String, String), String)> {
    let mut out: Vec<((String, String), String)> = g
        .graph
        .edge_references()
        .filter(|e| {
            affected.contains(g.graph[e.source()].id.as_str())
                && affected.contains(g.graph[e.target()].id.as_str())
        })
        .map(|e| {
            let label = model
                .edges
                .get(&e.id())
                .map(|t| t.mapping.to_string())
                .unwrap_or_default();
            (
                (
                    g.graph[e.source()].id.clone(),
                    g.graph[e.target()].id.clone(),
                ),
                label,
            )
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Output formats of `ripple impact`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people.
    Text,
    /// The impact set as JSON.
    Json,
    /// Markdown for a ticket or PR.
    Markdown,
    /// The affected subgraph in Graphviz DOT.
    Dot,
    /// The affected subgraph as a Mermaid flowchart.
    Mermaid,
    /// The affected subgraph as a standalone SVG picture.
    Svg,
    /// One self-contained HTML report: graph, partition timelines, reasons.
    Html,
}

/// `impact` (computed on `g` with `model`) in `format`.
pub fn render(g: &LineageGraph, model: &TimeModel, impact: &Impact, format: Format) -> String {
    match format {
        Format::Text => crate::text::inert(&text(impact)).into_owned(),
        Format::Json => json(impact),
        Format::Markdown => crate::text::inert(&markdown(impact)).into_owned(),
        Format::Dot => dot(g, model, impact),
        Format::Mermaid => mermaid(g, model, impact),
        Format::Svg => svg(g, model, impact),
        Format::Html => html(g, model, impact),
    }
}

/// How the report colours an affected dataset: `changed`, `full` (rebuilt
/// whole), `widened` (to its whole history) or `partitions`.
pub fn state_of(impact: &Impact, d: &AffectedDataset) -> &'static str {
    if impact.changed.contains(&d.id) {
        "changed"
    } else if d.full {
        "full"
    } else if d.widened_from.is_some() {
        "widened"
    } else {
        "partitions"
    }
}

/// Graphs up to this size are drawn whole, unaffected datasets greyed.
const SMALL_GRAPH: usize = 200;
/// Most boxes a report draws; past it the affected subgraph loses its
/// one-hop context, then its farthest datasets (the timelines list all).
pub const MAX_DRAWN: usize = 1_500;

/// The impact as a diagram: affected datasets coloured by how they are
/// affected, edges labelled with their time mapping, and either the whole
/// (small) graph around them or one hop of unaffected context, with counts
/// of what is folded away.
pub fn diagram(g: &LineageGraph, model: &TimeModel, impact: &Impact) -> super::svg::Diagram {
    use super::svg::{Diagram, Edge, Node};
    use petgraph::graph::NodeIndex;
    use std::collections::{BTreeSet, HashMap};
    let affected: Vec<(NodeIndex, &AffectedDataset)> = impact
        .datasets
        .iter()
        .filter_map(|d| g.index.get(&d.id).map(|&n| (n, d)))
        .collect();
    let is_affected: HashSet<NodeIndex> = affected.iter().map(|a| a.0).collect();
    let mut context: BTreeSet<(&str, NodeIndex)> = BTreeSet::new();
    if g.graph.node_count() <= SMALL_GRAPH {
        for n in g.graph.node_indices() {
            if !is_affected.contains(&n) {
                context.insert((g.graph[n].id.as_str(), n));
            }
        }
    } else {
        for &(n, _) in &affected {
            for m in g.graph.neighbors_undirected(n) {
                if !is_affected.contains(&m) {
                    context.insert((g.graph[m].id.as_str(), m));
                }
            }
        }
    }
    let total = g.graph.node_count();
    let mut context_shown = context.len();
    if affected.len() + context.len() > MAX_DRAWN {
        context_shown = 0;
    }
    let affected_shown = affected.len().min(MAX_DRAWN);
    let mut nodes: Vec<Node> = Vec::with_capacity(affected_shown + context_shown);
    let mut at: HashMap<NodeIndex, usize> = HashMap::new();
    for &(n, d) in affected.iter().take(affected_shown) {
        at.insert(n, nodes.len());
        let mut tip = vec![
            d.name.clone(),
            format!("relation {}", d.relation),
            format!(
                "grain {}, {} partition{}: {}",
                d.grain,
                d.partitions,
                crate::text::plural(d.partitions as usize),
                range(d)
            ),
        ];
        tip.extend(d.reasons.iter().cloned());
        tip.extend(d.explain.iter().cloned());
        // A box's tooltip stays a tooltip: past the cap, a count (a
        // dataset reading 1,700 others once carried 84 KB in each box).
        let cap = super::html::MAX_REASONS;
        if tip.len() > cap {
            let more = tip.len() - cap;
            tip.truncate(cap);
            tip.push(format!("{more} more (the JSON output has every one)"));
        }
        if !d.columns.is_empty() {
            tip.push(format!("columns: {}", d.columns.join(", ")));
        }
        nodes.push(Node {
            id: d.id.clone(),
            title: d.name.clone(),
            detail: Some(if d.full {
                "rebuilt whole".to_string()
            } else {
                range(d)
            }),
            state: state_of(impact, d),
            tooltip: tip.join("\n"),
        });
    }
    for &(_, n) in context.iter().take(context_shown) {
        at.insert(n, nodes.len());
        let d = &g.graph[n];
        let why = impact
            .stopped
            .iter()
            .find(|s| s.dataset == d.name)
            .map_or("not affected".to_string(), |s| {
                format!("not affected: stopped at {} ({})", s.edge, s.why)
            });
        nodes.push(Node {
            id: d.id.clone(),
            title: d.name.clone(),
            detail: None,
            state: "context",
            tooltip: format!("{}\n{why}", d.name),
        });
    }
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let mut edges: Vec<Edge> = Vec::new();
    let mut all: Vec<_> = g
        .graph
        .edge_references()
        .filter_map(|e| Some((*at.get(&e.source())?, *at.get(&e.target())?, e.id())))
        .collect();
    all.sort_by_key(|&(a, b, e)| (a, b, e.index()));
    for (a, b, e) in all {
        if seen.insert((a, b)) {
            edges.push(Edge {
                from: a,
                to: b,
                label: model.edges.get(&e).map(|t| t.mapping.to_string()),
            });
        }
    }
    let hidden_affected = affected.len() - affected_shown;
    let hidden = total.saturating_sub(nodes.len());
    // Said apart: the unaffected ones are left out by design, the affected
    // ones past the cap only for the picture's size.
    let unaffected_hidden = hidden.saturating_sub(hidden_affected);
    let folded = (hidden > 0).then(|| {
        let mut parts = Vec::new();
        if unaffected_hidden > 0 {
            parts.push(format!(
                "{unaffected_hidden} unaffected datasets not drawn (only the affected ones{} are)",
                if context_shown > 0 {
                    " and their unaffected neighbours"
                } else {
                    ""
                }
            ));
        }
        if hidden_affected > 0 {
            parts.push(format!(
                "{hidden_affected} affected datasets past the first {MAX_DRAWN} not drawn: every one is listed by `--format text` or `json` (and in the HTML report's partitions)"
            ));
        }
        format!("{hidden} of {total} datasets not drawn: {}", parts.join("; "))
    });
    Diagram {
        nodes,
        edges,
        folded,
    }
}

/// The affected subgraph as a standalone SVG file.
pub fn svg(g: &LineageGraph, model: &TimeModel, impact: &Impact) -> String {
    super::svg::render(&diagram(g, model, impact), true)
}

/// The partition timelines of the affected datasets (HTML).
pub fn timelines(impact: &Impact) -> String {
    use super::html::{Strip, axis, strips};
    let as_of = crate::time::TimeKey::parse(&impact.as_of).map_or(0, |k| k.start);
    let rows: Vec<Strip<'_>> = impact
        .datasets
        .iter()
        .map(|d| {
            let mut lines: Vec<&str> = d.reasons.iter().map(String::as_str).collect();
            lines.extend(d.explain.iter().map(String::as_str));
            Strip {
                id: &d.id,
                name: &d.name,
                state: state_of(impact, d),
                grain: d.grain,
                spans: &d.spans,
                widened_from: d.widened_from.as_deref(),
                full: d.full,
                range: if d.full {
                    "rebuilt whole".to_string()
                } else {
                    range(d)
                },
                partitions: if d.full {
                    "1 rebuild".to_string()
                } else if d.unbounded {
                    "unbounded: no start known".to_string()
                } else {
                    format!(
                        "{}{} {} partition{}",
                        d.partitions,
                        if d.unbounded { "+" } else { "" },
                        d.grain,
                        crate::text::plural(d.partitions as usize)
                    )
                },
                lines,
            }
        })
        .collect();
    let ax = axis(&rows, as_of);
    strips(&rows, ax, as_of)
}

/// One line per state: how many datasets are in it (the report's summary).
pub fn summary_html(impact: &Impact) -> String {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for d in &impact.datasets {
        let s = state_of(impact, d);
        match counts.iter_mut().find(|c| c.0 == s) {
            Some(c) => c.1 += 1,
            None => counts.push((s, 1)),
        }
    }
    let mut out = String::from("<p>");
    for s in ["changed", "partitions", "widened", "full"] {
        if let Some(&(_, k)) = counts.iter().find(|c| c.0 == s) {
            let legend = super::svg::STATES
                .iter()
                .find(|x| x.name == s)
                .map_or(s, |x| x.legend);
            out.push_str(&super::html::badge(s, &format!("{k} {legend}")));
            out.push(' ');
        }
    }
    let partitions: u64 = impact
        .datasets
        .iter()
        .filter(|d| !d.full)
        .map(|d| d.partitions)
        .sum();
    let whole = impact.datasets.iter().filter(|d| d.full).count();
    let _ = write!(
        out,
        "</p><p>{} dataset{} affected: {partitions} partition{}{} to recompute (changed tables included){}.</p>",
        impact.datasets.len(),
        crate::text::plural(impact.datasets.len()),
        crate::text::plural(partitions as usize),
        if whole > 0 {
            format!(
                " and {whole} table{} to rebuild whole",
                crate::text::plural(whole)
            )
        } else {
            String::new()
        },
        if impact.datasets.iter().any(|d| d.unbounded) {
            "; some are unbounded (no start known)"
        } else {
            ""
        }
    );
    if let Some(p) = &impact.pruned {
        let _ = write!(
            out,
            "<p>Wrong columns: <code>{}</code>; {} downstream dataset{} read none of them and {} left out.</p>",
            super::escape::xml(&p.columns.join(", ")),
            p.left_out,
            crate::text::plural(p.left_out),
            if p.left_out == 1 { "is" } else { "are" }
        );
    }
    out
}

/// The impact as one self-contained HTML page: summary, graph, partition
/// timelines, and what was kept out.
pub fn html(g: &LineageGraph, model: &TimeModel, impact: &Impact) -> String {
    use super::escape::xml;
    use super::html::{graph_section, page, section};
    let mut sections = vec![
        section("rp-summary", "Summary", &summary_html(impact)),
        graph_section(
            "Lineage (click a dataset for its reasons)",
            &super::svg::render(&diagram(g, model, impact), false),
        ),
        section("rp-partitions", "Affected partitions", &timelines(impact)),
    ];
    if !impact.stopped.is_empty() {
        let mut t = String::from("<table><tr><th>dataset</th><th>stopped at</th><th>why</th></tr>");
        for s in &impact.stopped {
            let _ = write!(
                t,
                "<tr><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td>{}</td></tr>",
                xml(&s.dataset),
                xml(&s.edge),
                xml(&s.why)
            );
        }
        t.push_str("</table>");
        sections.push(section("rp-stopped", "Not affected", &t));
    }
    page(
        &format!("Impact of {}", changed_names(impact).join(", ")),
        &subtitle(impact),
        &sections,
    )
}

/// The changed datasets' names.
pub fn changed_names(impact: &Impact) -> Vec<&str> {
    impact
        .datasets
        .iter()
        .filter(|d| impact.changed.contains(&d.id))
        .map(|d| d.name.as_str())
        .collect()
}

/// `raw.orders 2026-01-10..2026-01-12 · as of 2026-02-01`.
pub fn subtitle(impact: &Impact) -> String {
    let changed: Vec<String> = impact
        .datasets
        .iter()
        .filter(|d| impact.changed.contains(&d.id))
        .map(|d| format!("{} {}", d.name, range(d)))
        .collect();
    format!("{} · as of {}", changed.join(", "), impact.as_of)
}
