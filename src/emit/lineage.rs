//! Statement lineage as JSON (the contract other tools read) and as a text
//! table (for people).

use std::fmt::Write as _;

use serde::Serialize;

use super::SCHEMA_VERSION;
use crate::sql::{ColumnLineage, ScriptLineage};

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    #[serde(flatten)]
    lineage: &'a ScriptLineage,
}

/// The lineage as pretty-printed JSON with a trailing newline.
pub fn json(lineage: &ScriptLineage) -> String {
    let doc = Document {
        schema_version: SCHEMA_VERSION,
        lineage,
    };
    // Serializing plain strings and numbers cannot fail.
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
    out.push('\n');
    out
}

/// The lineage as a table a person reads at a glance; `label` names the
/// input in error lines (`file:line:col`).
pub fn text(lineage: &ScriptLineage, label: &str) -> String {
    let mut out = String::new();
    // Names on one line each: a line break in a name cannot forge a row.
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter()
                .map(|s| crate::text::one_line(s))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let _ = writeln!(out, "sources        {}", list(&lineage.sources));
    let _ = writeln!(out, "targets        {}", list(&lineage.targets));
    let _ = writeln!(out, "intermediates  {}", list(&lineage.intermediates));
    if !lineage.statements.is_empty() {
        let rows: Vec<[String; 5]> = lineage
            .statements
            .iter()
            .map(|s| {
                let targets: Vec<String> = s
                    .targets
                    .iter()
                    .map(|t| {
                        if s.temporary.contains(t) {
                            format!("{t} (temp)")
                        } else {
                            t.clone()
                        }
                    })
                    .collect();
                [
                    s.index.to_string(),
                    format!("{}:{}", s.line, s.column),
                    s.kind.as_str().to_string(),
                    list(&s.sources),
                    list(&targets),
                ]
            })
            .collect();
        let header = ["#", "at", "kind", "reads", "writes"].map(String::from);
        let mut widths = header.clone().map(|h| h.chars().count());
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        out.push('\n');
        for row in std::iter::once(&header).chain(&rows) {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    crate::text::push_padded(&mut line, cell, w);
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    for s in &lineage.statements {
        if let Some(c) = &s.columns {
            columns_text(&mut out, s.index, c);
        }
    }
    if !lineage.errors.is_empty() {
        let n = lineage.errors.len();
        let _ = writeln!(
            out,
            "\n{n} statement{} could not be parsed:",
            crate::text::plural(n)
        );
        for e in &lineage.errors {
            let _ = writeln!(
                out,
                "  {label}:{}:{}: statement {}: {}",
                e.line,
                e.column,
                e.statement,
                crate::text::one_line(&e.message)
            );
        }
    }
    out
}

/// One statement's column lineage: `output <- relation.column, ...` lines.
fn columns_text(out: &mut String, index: usize, c: &ColumnLineage) {
    let refs = |set: &std::collections::BTreeSet<crate::sql::ColumnRef>| {
        let v: Vec<String> = set
            .iter()
            .map(|r| crate::text::one_line(&format!("{}.{}", r.relation, r.column)).into_owned())
            .collect();
        if v.is_empty() {
            "-".to_string()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(out, "\nstatement {index} columns:");
    let width = c
        .columns
        .iter()
        .map(|o| o.name.chars().count())
        .max()
        .unwrap_or(0);
    for o in &c.columns {
        // Padded by hand: a column named by an 80,000-branch CASE is wider
        // than `{:<width$}` allows, which panicked.
        out.push_str("  ");
        crate::text::push_padded(out, &crate::text::one_line(&o.name), width);
        let _ = writeln!(out, "<- {}", refs(&o.sources));
    }
    if !c.conditions.is_empty() {
        let _ = writeln!(out, "  rows decided by: {}", refs(&c.conditions));
    }
    for rel in &c.unexpanded_stars {
        let _ = writeln!(
            out,
            "  {rel}.* not expanded (its columns are not known): every column possibly used"
        );
    }
    for (column, candidates) in &c.ambiguous {
        let _ = writeln!(
            out,
            "  {column} is ambiguous: it could be {} (give --schema to settle it)",
            candidates.join(" or ")
        );
    }
}
