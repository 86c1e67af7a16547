//! `ripple check` findings as text lines or JSON.

use serde::Serialize;

use super::SCHEMA_VERSION;
use crate::project::{Diagnostic, Severity};

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    errors: usize,
    warnings: usize,
    findings: &'a [Diagnostic],
}

/// Findings as JSON.
pub fn json(findings: &[Diagnostic]) -> String {
    let (errors, warnings) = counts(findings);
    let mut out = serde_json::to_string_pretty(&Document {
        schema_version: SCHEMA_VERSION,
        errors,
        warnings,
        findings,
    })
    .unwrap_or_default();
    out.push('\n');
    out
}

/// Findings as `severity[code]: file:line:col: message` lines and a summary.
pub fn text(findings: &[Diagnostic]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&f.to_string());
        out.push('\n');
    }
    let (errors, warnings) = counts(findings);
    out.push_str(&format!(
        "{errors} error{}, {warnings} warning{}\n",
        crate::text::plural(errors),
        crate::text::plural(warnings)
    ));
    out
}

/// (errors, warnings).
pub fn counts(findings: &[Diagnostic]) -> (usize, usize) {
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    (errors, findings.len() - errors)
}
