//! `ripple diff` output: a Markdown PR comment (summary, table, Mermaid
//! graph, collapsed details), JSON, GitHub workflow annotations, text.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::diff::{Change, ChangeKind, DiffReport, FailOn};

use super::escape::{code_span, github_message, github_property, markdown_text};
use crate::text::{one_line, plural};

/// How a kind is counted in the summary line.
fn counted(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::CouldNotCompare => "could not compare",
        ChangeKind::Column => "column-level",
        other => other.as_str(),
    }
}

/// "2 breaking, 1 non-breaking; 14 downstream models".
pub fn summary(report: &DiffReport) -> String {
    let parts: Vec<String> = ChangeKind::ALL
        .iter()
        .map(|&k| (k, report.count(k)))
        .filter(|&(_, n)| n > 0)
        .map(|(k, n)| format!("{n} {}", counted(k)))
        .collect();
    if parts.is_empty() {
        return "no changes to models or jobs".to_string();
    }
    let n = report.downstream().len();
    format!("{}; {n} downstream model{}", parts.join(", "), plural(n))
}

/// The result of comparing two versions of a project.
// Named as the report in the schema: the document is the report with its version.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "DiffReport")]
pub struct DiffJson<'a> {
    /// Version of this document's shape.
    pub schema_version: u32,
    /// The report.
    #[serde(flatten)]
    pub report: &'a DiffReport,
}

/// The JSON document (`schema_version` 1).
pub fn json(report: &DiffReport) -> String {
    let doc = DiffJson {
        schema_version: super::SCHEMA_VERSION,
        report,
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("a diff report serializes");
    s.push('\n');
    s
}

/// The JSON Schema of [`json`]'s output (shipped as `docs/diff.schema.json`).
pub fn schema() -> String {
    let schema = schemars::schema_for!(DiffJson<'static>);
    let mut out = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    out.push('\n');
    out
}

/// Plain text for a terminal: each name on its own line only, line breaks
/// in names escaped (a column named with one once forged a report line).
pub fn text(report: &DiffReport) -> String {
    let all = |names: &[String], sep: &str| {
        let names: Vec<_> = names.iter().map(|n| one_line(n)).collect();
        names.join(sep)
    };
    let mut out = String::new();
    for c in &report.changes {
        let _ = writeln!(
            out,
            "{:<17} {}  {}:{}  {}",
            c.kind.as_str(),
            one_line(&c.model),
            one_line(&c.file),
            c.line,
            one_line(&c.reason)
        );
        if !c.columns.is_empty() {
            let _ = writeln!(out, "  columns: {}", all(&c.columns, "; "));
        }
        if !c.downstream.is_empty() {
            let _ = writeln!(
                out,
                "  downstream ({}): {}",
                c.downstream.len(),
                all(&c.downstream, ", ")
            );
        }
        if !c.possibly.is_empty() {
            let _ = writeln!(out, "  possibly (through *): {}", all(&c.possibly, ", "));
        }
        if let Some(plan) = &c.plan {
            let _ = writeln!(out, "  backfill: {}", one_line(plan));
        }
    }
    let _ = writeln!(out, "{}", summary(report));
    out
}

/// GitHub workflow annotations, one per change (no-ops left out): errors
/// for what fails the check, warnings for the rest.
pub fn github(report: &DiffReport, fail_on: FailOn) -> String {
    let mut out = String::new();
    for c in report.changes.iter().filter(|c| c.kind != ChangeKind::NoOp) {
        let level = if fail_on.fails(c.kind) {
            "error"
        } else {
            "warning"
        };
        let mut message = format!("{}: {} — {}", c.model, c.kind.as_str(), c.reason);
        if !c.columns.is_empty() {
            let _ = write!(message, " ({})", c.columns.join("; "));
        }
        let n = c.downstream.len();
        let _ = write!(message, "; {n} downstream model{}", plural(n));
        if let Some(plan) = &c.plan {
            let _ = write!(message, "; backfill: {plan}");
        }
        let _ = writeln!(
            out,
            "::{level} file={},line={},title={}::{}",
            github_property(&one_line(&c.file)),
            c.line,
            github_property(&format!("ripple diff: {}", c.kind.as_str())),
            // A line break GitHub would show as one (`%0A`) is shown as
            // `\n`, as in the text format: a name stays on its line.
            github_message(&one_line(&message))
        );
    }
    out
}

/// Datasets drawn in the Mermaid graph at most: GitHub stops rendering
/// large diagrams, and nobody reads a thousand boxes.
const MAX_DRAWN: usize = 60;
/// Rows of the changes table at most (the most severe come first).
const MAX_ROWS: usize = 200;
/// Names listed per line of details at most.
const MAX_LISTED: usize = 30;
/// GitHub refuses comments over 65,536 characters; details past this are cut.
const MAX_COMMENT: usize = 60_000;

/// The Markdown PR comment.
pub fn markdown(report: &DiffReport) -> String {
    let mut out = String::from("### ripple diff\n\n");
    let _ = writeln!(out, "**{}**\n", markdown_text(&summary(report)));
    if report.changes.is_empty() {
        return out;
    }
    out.push_str("| Model | Change | Columns | Downstream |\n| --- | --- | --- | ---: |\n");
    for c in report.changes.iter().take(MAX_ROWS) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            markdown_text(&c.model),
            c.kind.as_str(),
            markdown_text(&c.columns.join("; ")),
            c.downstream.len()
        );
    }
    if report.changes.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "| …and {} more | | | |",
            report.changes.len() - MAX_ROWS
        );
    }
    let diagram = mermaid(report);
    if !diagram.is_empty() {
        let _ = write!(out, "\n```mermaid\n{diagram}```\n");
    }
    out.push_str("\n<details>\n<summary>Details</summary>\n\n");
    for (i, c) in report.changes.iter().enumerate() {
        let mut block = String::new();
        details(&mut block, c);
        if out.len() + block.len() > MAX_COMMENT {
            let left = report.changes.len() - i;
            let _ = writeln!(
                out,
                "…and {left} more change{} (cut to fit a comment; `--format json` has them all)\n",
                plural(left)
            );
            break;
        }
        out.push_str(&block);
    }
    out.push_str("</details>\n");
    out
}

/// At most [`MAX_LISTED`] names, escaped, then how many more.
fn listed(names: &[String]) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(MAX_LISTED)
        .map(|d| markdown_text(d))
        .collect();
    if names.len() > MAX_LISTED {
        shown.push(format!("and {} more", names.len() - MAX_LISTED));
    }
    shown.join(", ")
}

fn details(out: &mut String, c: &Change) {
    let _ = writeln!(
        out,
        "**{}**: {} ({}, line {})\n",
        markdown_text(&c.model),
        c.kind.as_str(),
        markdown_text(&c.file),
        c.line
    );
    let _ = writeln!(out, "- {}", markdown_text(&c.reason));
    if !c.columns.is_empty() {
        let _ = writeln!(out, "- columns: {}", markdown_text(&c.columns.join("; ")));
    }
    if !c.downstream.is_empty() {
        let _ = writeln!(
            out,
            "- downstream ({}): {}",
            c.downstream.len(),
            listed(&c.downstream)
        );
    }
    if !c.possibly.is_empty() {
        let _ = writeln!(
            out,
            "- possibly affected (read through a `*` whose columns are unknown): {}",
            listed(&c.possibly)
        );
    }
    if let Some(plan) = &c.plan {
        let _ = writeln!(out, "- backfill: {}", code_span(plan));
    }
    out.push('\n');
}

/// A Mermaid flowchart of the changed datasets and what they reach; empty
/// when no change touches a dataset.
pub fn mermaid(report: &DiffReport) -> String {
    let ranked = ranked_roles(report, class_of, "impacted");
    let hidden = ranked.len().saturating_sub(MAX_DRAWN);
    let roles: BTreeMap<&str, &'static str> = ranked
        .into_iter()
        .take(MAX_DRAWN)
        .map(|(_, k, class)| (k, class))
        .collect();
    if roles.is_empty() {
        return String::new();
    }
    let ids: BTreeMap<&str, usize> = roles.keys().enumerate().map(|(i, k)| (*k, i)).collect();
    let mut f = super::mermaid::Flowchart::new();
    for (name, i) in &ids {
        f.node(&format!("n{i}"), super::mermaid::Shape::Box, &[name]);
    }
    for (from, to) in &report.edges {
        if let (Some(a), Some(b)) = (ids.get(from.as_str()), ids.get(to.as_str())) {
            f.edge(&format!("n{a}"), &format!("n{b}"), None);
        }
    }
    let mut by_class: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (name, class) in &roles {
        by_class
            .entry(class)
            .or_default()
            .push(format!("n{}", ids[name]));
    }
    for (class, nodes) in &by_class {
        f.class(nodes, class);
    }
    for (class, style) in CLASS_STYLES {
        if by_class.contains_key(class) {
            f.class_def(class, style);
        }
    }
    if hidden > 0 {
        f.node(
            &format!("n{}", ids.len()),
            super::mermaid::Shape::Box,
            &[&format!(
                "{hidden} more affected dataset{} not drawn",
                plural(hidden)
            )],
        );
    }
    f.finish()
}

/// Node styles per role.
const CLASS_STYLES: [(&str, &str); 7] = [
    ("breaking", "fill:#f8d7da,stroke:#b02a37"),
    ("column", "fill:#fff3cd,stroke:#b58105"),
    ("config", "fill:#e2e3e5,stroke:#41464b"),
    ("nonbreaking", "fill:#d1e7dd,stroke:#146c43"),
    ("added", "fill:#cfe2ff,stroke:#0a58ca"),
    ("impacted", "fill:#fde2c8,stroke:#ca6510"),
    ("possibly", "fill:#fff,stroke:#ca6510,stroke-dasharray:4 3"),
];

/// The Mermaid class of a changed dataset (class names must be plain words).
fn class_of(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Breaking | ChangeKind::Removed | ChangeKind::CouldNotCompare => "breaking",
        ChangeKind::Column => "column",
        ChangeKind::Config => "config",
        ChangeKind::NonBreaking | ChangeKind::NoOp => "nonbreaking",
        ChangeKind::Added => "added",
    }
}

/// Each dataset the changes name, once, with the most severe role it has
/// (`class` of its change, else `impacted` or `possibly` downstream): the
/// most severe first (changed before impacted), then by id.
fn ranked_roles<'a>(
    report: &'a DiffReport,
    class: fn(ChangeKind) -> &'static str,
    impacted: &'static str,
) -> Vec<(usize, &'a str, &'static str)> {
    let mut role_of: BTreeMap<&str, (usize, &'static str)> = BTreeMap::new();
    for c in &report.changes {
        if c.kind == ChangeKind::NoOp {
            continue;
        }
        for w in &c.writes {
            bump(&mut role_of, w, c.kind.rank(), class(c.kind));
        }
        for d in &c.downstream {
            let (rank, class) = match c.possibly.contains(d) {
                true => (ChangeKind::ALL.len() + 1, "possibly"),
                false => (ChangeKind::ALL.len(), impacted),
            };
            bump(&mut role_of, d, rank, class);
        }
    }
    let mut ranked: Vec<(usize, &str, &'static str)> = role_of
        .iter()
        .map(|(k, (rank, class))| (*rank, *k, *class))
        .collect();
    ranked.sort();
    ranked
}

/// Keeps the most severe (lowest rank) role of a node.
fn bump<'a>(
    roles: &mut BTreeMap<&'a str, (usize, &'static str)>,
    id: &'a str,
    rank: usize,
    class: &'static str,
) {
    let entry = roles.entry(id).or_insert((rank, class));
    if rank < entry.0 {
        *entry = (rank, class);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Change;

    #[test]
    fn large_reports_fit_in_a_comment() {
        let downstream: Vec<String> = (0..500).map(|i| format!("model.m_{i:04}")).collect();
        let change = |i: usize| Change {
            model: format!("model.changed_{i}"),
            kind: ChangeKind::Breaking,
            columns: vec!["removed: x".to_string()],
            downstream: downstream.clone(),
            possibly: Vec::new(),
            file: format!("models/changed_{i}.sql"),
            line: 1,
            reason: "output column removed or renamed".to_string(),
            writes: vec![format!("model.changed_{i}")],
            plan: None,
        };
        let report = DiffReport {
            changes: (0..300).map(change).collect(),
            edges: Vec::new(),
        };
        let md = markdown(&report);
        assert!(md.len() < 65_536, "{}", md.len());
        assert!(md.contains("and 470 more"));
        assert!(md.contains("| …and 100 more | | | |"));
        assert!(md.contains("more changes (cut to fit a comment"));
        assert!(md.ends_with("</details>\n"));
        let graph = mermaid(&report);
        let drawn = graph.lines().filter(|l| l.contains("[\"")).count();
        // 60 datasets and the note of how many more.
        assert_eq!(drawn, MAX_DRAWN + 1);
        assert!(graph.contains("740 more affected datasets not drawn"));
        // The changed datasets are drawn before the impacted ones.
        assert!(graph.contains("model.changed_0"));
    }

    #[test]
    fn a_line_break_in_a_name_stays_on_its_annotation_line() {
        let report = DiffReport {
            changes: vec![Change {
                model: "model.a\nb".to_string(),
                kind: ChangeKind::Breaking,
                columns: vec!["removed: x\ny".to_string()],
                downstream: Vec::new(),
                possibly: Vec::new(),
                file: "models/a\nb.sql".to_string(),
                line: 1,
                reason: "output column removed or renamed".to_string(),
                writes: Vec::new(),
                plan: None,
            }],
            edges: Vec::new(),
        };
        let out = github(&report, FailOn::None);
        assert_eq!(out.lines().count(), 1, "{out}");
        // GitHub shows `%0A` as a line break.
        assert!(!out.contains("%0A") && out.contains("model.a\\nb"), "{out}");
    }
}

/// Output formats of `ripple diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A pull-request comment: summary, table, Mermaid graph, details.
    Markdown,
    /// The JSON document other tools read.
    Json,
    /// GitHub Actions workflow annotations.
    Github,
    /// Plain text.
    Text,
    /// One self-contained HTML report (a CI artifact): graph and changes.
    Html,
}

/// Boxes the HTML report's graph draws at most.
const MAX_DRAWN_HTML: usize = 1_500;

/// A dataset id as people name it: `model.orders` → `orders`,
/// `source.raw.orders` → `raw.orders`.
fn short(id: &str) -> &str {
    id.split_once('.').map_or(id, |(_, rest)| rest)
}

/// The changed datasets and what they reach downstream, as a diagram
/// coloured by kind of change.
pub fn diagram(report: &DiffReport) -> super::svg::Diagram {
    use super::svg::{Diagram, Edge, Node};
    let ranked = ranked_roles(report, ChangeKind::as_str, "downstream");
    let hidden = ranked.len().saturating_sub(MAX_DRAWN_HTML);
    let mut nodes = Vec::new();
    let mut at: BTreeMap<&str, usize> = BTreeMap::new();
    for &(_, id, state) in ranked.iter().take(MAX_DRAWN_HTML) {
        at.insert(id, nodes.len());
        let changes: Vec<String> = report
            .changes
            .iter()
            .filter(|c| c.writes.iter().any(|w| w == id))
            .map(|c| format!("{} ({}): {}", c.model, c.kind.as_str(), c.reason))
            .collect();
        let reached: Vec<&str> = report
            .changes
            .iter()
            .filter(|c| c.downstream.iter().any(|d| d == id))
            .map(|c| c.model.as_str())
            .collect();
        let mut tip = vec![id.to_string()];
        tip.extend(changes);
        if !reached.is_empty() {
            tip.push(format!("downstream of {}", reached.join(", ")));
        }
        nodes.push(Node {
            id: id.to_string(),
            title: short(id).to_string(),
            detail: Some(match state {
                "downstream" => "downstream".to_string(),
                "possibly" => "possibly (through *)".to_string(),
                kind => kind.to_string(),
            }),
            state,
            tooltip: tip.join("\n"),
        });
    }
    let mut edges: Vec<Edge> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (from, to) in &report.edges {
        if let (Some(&a), Some(&b)) = (at.get(from.as_str()), at.get(to.as_str()))
            && seen.insert((a, b))
        {
            edges.push(Edge {
                from: a,
                to: b,
                label: None,
            });
        }
    }
    Diagram {
        nodes,
        edges,
        folded: (hidden > 0)
            .then(|| format!("{hidden} more datasets not drawn (the table lists every change)")),
    }
}

/// The report as one self-contained HTML page (a CI artifact): summary,
/// the graph with downstream highlighted, every change with its columns.
pub fn html(report: &DiffReport, fail_on: FailOn) -> String {
    use super::escape::xml;
    use super::html::{badge, graph_section, page, section};
    let mut summary_html = String::from("<p>");
    for k in ChangeKind::ALL {
        let n = report.count(k);
        if n > 0 {
            summary_html.push_str(&badge(k.as_str(), &format!("{n} {}", counted(k))));
            summary_html.push(' ');
        }
    }
    let downstream = report.downstream().len();
    let failing = report
        .changes
        .iter()
        .filter(|c| fail_on.fails(c.kind))
        .count();
    let _ = write!(
        summary_html,
        "</p><p>{downstream} downstream dataset{} affected. {}</p>",
        plural(downstream),
        if failing > 0 {
            format!(
                "{failing} change{} fail{} this check.",
                plural(failing),
                if failing == 1 { "s" } else { "" }
            )
        } else {
            "Nothing fails this check.".to_string()
        }
    );
    let mut table = String::from(
        "<table><tr><th>model or job</th><th>change</th><th>columns</th><th>downstream</th><th>where</th><th>why</th></tr>",
    );
    for c in &report.changes {
        let listed: Vec<&str> = c.downstream.iter().map(|d| short(d)).collect();
        let _ = write!(
            table,
            "<tr data-kind=\"{kind}\"><td class=\"mono\">{model}</td><td>{badge}</td><td class=\"mono\">{cols}</td><td><details data-id=\"{first}\"><summary>{n}</summary><span class=\"mono\">{list}</span></details></td><td class=\"mono\">{file}:{line}</td><td>{reason}{plan}</td></tr>",
            kind = c.kind.as_str(),
            first = xml(c.writes.first().map_or("", String::as_str)),
            model = xml(&c.model),
            badge = badge(c.kind.as_str(), c.kind.as_str()),
            cols = xml(&c.columns.join("; ")),
            n = c.downstream.len(),
            list = xml(&listed.join(", ")),
            file = xml(&c.file),
            line = c.line,
            reason = xml(&c.reason),
            plan = c
                .plan
                .as_deref()
                .map_or(String::new(), |p| format!("<br><code>{}</code>", xml(p))),
        );
    }
    table.push_str("</table>");
    let mut sections = vec![section("rp-summary", "Summary", &summary_html)];
    let d = diagram(report);
    if !d.nodes.is_empty() {
        sections.push(graph_section(
            "Changed datasets and what they reach",
            &super::svg::render(&d, false),
        ));
    }
    sections.push(section("rp-changes", "Changes", &table));
    page("ripple diff", &summary(report), &sections)
}

/// `report` in `format`; `fail_on` decides which annotations are errors.
pub fn render(report: &DiffReport, format: Format, fail_on: FailOn) -> String {
    match format {
        Format::Markdown => crate::text::inert(&markdown(report)).into_owned(),
        Format::Json => json(report),
        Format::Github => crate::text::inert(&github(report, fail_on)).into_owned(),
        Format::Text => crate::text::inert(&text(report)).into_owned(),
        Format::Html => html(report, fail_on),
    }
}
