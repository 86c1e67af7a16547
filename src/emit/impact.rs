//! The impact set as JSON, a text table, Markdown, DOT and Mermaid.

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
    for d in &impact.datasets {
        rows.push([
            d.name.clone(),
            d.grain.to_string(),
            range(d),
            if d.unbounded {
                format!("{}+", d.partitions)
            } else {
                d.partitions.to_string()
            },
            d.reasons.join("; "),
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
            let _ = writeln!(out, "  {}: {}", d.name, d.columns.join(", "));
        }
    }
    for d in &impact.datasets {
        for e in &d.explain {
            let _ = writeln!(out, "  {}: {e}", d.name);
        }
    }
    if !impact.stopped.is_empty() {
        out.push_str("\nnot affected:\n");
        for s in &impact.stopped {
            let _ = writeln!(out, "  {} — stopped at {}: {}", s.dataset, s.edge, s.why);
        }
    }
    out
}

/// Markdown for a ticket or a PR.
pub fn markdown(impact: &Impact) -> String {
    let esc = super::escape::markdown_cell;
    let mut out = format!(
        "### Impact of `{}` as of {}\n\n{} dataset{} affected.\n\n| dataset | grain | affected | partitions | why |\n|---|---|---|---|---|\n",
        esc(&impact.changed.join("`, `")),
        impact.as_of,
        impact.datasets.len(),
        crate::text::plural(impact.datasets.len())
    );
    for d in &impact.datasets {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            esc(&d.name),
            d.grain,
            esc(&range(d)),
            if d.unbounded {
                "unbounded".to_string()
            } else {
                d.partitions.to_string()
            },
            esc(&d.reasons.join("; "))
        );
    }
    if let Some(p) = &impact.pruned {
        let _ = writeln!(
            out,
            "\nWrong columns: {}. {} downstream dataset{} read none of them and {} left out. Affected columns:\n",
            esc(&p.columns.join(", ")),
            p.left_out,
            crate::text::plural(p.left_out),
            if p.left_out == 1 { "is" } else { "are" }
        );
        for d in &impact.datasets {
            let _ = writeln!(out, "- `{}`: {}", esc(&d.name), esc(&d.columns.join(", ")));
        }
    }
    if !impact.stopped.is_empty() {
        out.push_str("\nNot affected:\n\n");
        for s in &impact.stopped {
            let _ = writeln!(
                out,
                "- `{}`: stopped at {} ({})",
                esc(&s.dataset),
                esc(&s.edge),
                esc(&s.why)
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
        let label = format!("{}\n{}", d.name, range(d));
        stmts.push(dot::node(
            &d.id,
            vec![dot::attr("label", &label), dot::attr("shape", "box")],
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
}

/// `impact` (computed on `g` with `model`) in `format`.
pub fn render(g: &LineageGraph, model: &TimeModel, impact: &Impact, format: Format) -> String {
    match format {
        Format::Text => text(impact),
        Format::Json => json(impact),
        Format::Markdown => markdown(impact),
        Format::Dot => dot(g, model, impact),
        Format::Mermaid => mermaid(g, model, impact),
    }
}
