//! `ripple check` findings as text lines or JSON.

use std::collections::BTreeSet;

use serde::Serialize;

use super::SCHEMA_VERSION;
use crate::project::{Diagnostic, Job, JobKind, Severity};

/// How completely ripple read a project's dbt models, each counted once:
/// failed to render, else needing the warehouse, else with placeholders,
/// else rendered fully.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// dbt models and snapshots read.
    pub models: usize,
    /// Rendered with nothing unknown.
    pub rendered_fully: usize,
    /// Rendered, with unknown macros or methods as placeholders.
    pub with_placeholders: usize,
    /// Rendering stopped at an error (edges before it are kept).
    pub failed: usize,
    /// Their inputs may depend on the warehouse (`needs-warehouse`).
    pub need_warehouse: usize,
    /// Of all of them, Python models: edges from their `dbt.ref` and
    /// `dbt.source` calls, columns unknown.
    pub python: usize,
}

impl Coverage {
    /// Counts the dbt jobs by what rendering them found; `None` when the
    /// project has no dbt models.
    pub fn of<'a>(
        jobs: impl IntoIterator<Item = &'a Job>,
        findings: &[Diagnostic],
    ) -> Option<Self> {
        let files = |code: &str| -> BTreeSet<&str> {
            findings
                .iter()
                .filter(|f| f.code == code)
                .filter_map(|f| f.file.as_deref())
                .collect()
        };
        // A model whose rendered SQL is too long to read failed as much as
        // one that did not render.
        let mut failed = files("render-error");
        failed.extend(files("too-many-statements"));
        failed.extend(files("python-model"));
        failed.extend(files("python-syntax-error"));
        let unknown = files("unknown-macro");
        let mut c = Coverage::default();
        for job in jobs.into_iter().filter(|j| j.kind == JobKind::Dbt) {
            c.models += 1;
            if job.file.ends_with(".py") {
                c.python += 1;
            }
            if failed.contains(job.file.as_str()) {
                c.failed += 1;
            } else if !job.needs_warehouse.is_empty() {
                c.need_warehouse += 1;
            } else if unknown.contains(job.file.as_str()) {
                c.with_placeholders += 1;
            } else {
                c.rendered_fully += 1;
            }
        }
        (c.models > 0).then_some(c)
    }

    /// The one line `ripple check` prints.
    pub fn line(&self) -> String {
        let python = match self.python {
            0 => String::new(),
            n => format!(
                "; {n} Python model{} (edges from dbt.ref and dbt.source, columns unknown)",
                crate::text::plural(n)
            ),
        };
        format!(
            "dbt models: {} read: {} rendered fully, {} with placeholders, {} failed, {} need the warehouse{python}\n",
            self.models,
            self.rendered_fully,
            self.with_placeholders,
            self.failed,
            self.need_warehouse
        )
    }
}

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    errors: usize,
    warnings: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<Coverage>,
    findings: &'a [Diagnostic],
}

/// Findings as JSON, with the dbt coverage when there is one.
pub fn json(findings: &[Diagnostic], coverage: Option<Coverage>) -> String {
    let (errors, warnings) = counts(findings);
    let mut out = serde_json::to_string_pretty(&Document {
        schema_version: SCHEMA_VERSION,
        errors,
        warnings,
        coverage,
        findings,
    })
    .unwrap_or_default();
    out.push('\n');
    out
}

/// Findings as `severity[code]: file:line:col: message` lines, the dbt
/// coverage line when there is one, and a summary.
pub fn text(findings: &[Diagnostic], coverage: Option<Coverage>) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&f.to_string());
        out.push('\n');
    }
    if let Some(c) = coverage {
        out.push_str(&c.line());
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
