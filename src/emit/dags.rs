//! `ripple dags`: what was read from Airflow DAG files, for a person to check.

use std::fmt::Write as _;

use serde::Serialize;

use super::SCHEMA_VERSION;
use crate::project::Dag;
use crate::project::Diagnostic;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    dags: &'a [Dag],
    warnings: Vec<String>,
}

/// DAGs and warnings as JSON.
pub fn json(dags: &[Dag], warnings: &[Diagnostic]) -> String {
    let mut out = serde_json::to_string_pretty(&Document {
        schema_version: SCHEMA_VERSION,
        dags,
        warnings: warnings.iter().map(ToString::to_string).collect(),
    })
    .unwrap_or_default();
    out.push('\n');
    out
}

/// DAGs as an indented listing.
pub fn text(dags: &[Dag], warnings: &[Diagnostic]) -> String {
    let mut out = String::new();
    // Names on one line each: a line break in a DAG or task id would start
    // a line of its own.
    let l = |s: &str| crate::text::one_line(s).into_owned();
    let ls = |v: &[String]| v.iter().map(|s| l(s)).collect::<Vec<_>>().join(", ");
    for d in dags {
        let _ = writeln!(
            out,
            "{} ({}:{}) schedule {}",
            l(&d.dag_id),
            l(&d.file),
            d.line,
            l(d.schedule.as_deref().unwrap_or("-"))
        );
        for e in &d.upstream_dags {
            let from = match e.task_id.as_str() {
                "" => l(&e.dag_id),
                t => format!("{}:{}", l(&e.dag_id), l(t)),
            };
            let via = serde_json::to_value(e.via).unwrap_or_default();
            let _ = write!(
                out,
                "  after DAG {from} ({}",
                via.as_str().unwrap_or_default()
            );
            for detail in [&e.dataset, &e.task].into_iter().filter(|s| !s.is_empty()) {
                let _ = write!(out, " {}", l(detail));
            }
            out.push_str(")\n");
        }
        for t in &d.tasks {
            let _ = write!(out, "  {} [{}]", l(&t.task_id), l(&t.operator));
            if let Some(p) = &t.pool {
                let _ = write!(out, " pool={}", l(p));
            }
            if !t.upstream.is_empty() {
                let _ = write!(out, " after {}", ls(&t.upstream));
            }
            if !t.reads.is_empty() {
                let _ = write!(out, " reads {}", ls(&t.reads));
            }
            if !t.writes.is_empty() {
                let _ = write!(out, " writes {}", ls(&t.writes));
            }
            out.push('\n');
        }
    }
    for w in warnings {
        let _ = writeln!(out, "{w}");
    }
    out
}
