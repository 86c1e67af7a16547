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
    for d in dags {
        let _ = writeln!(
            out,
            "{} ({}:{}) schedule {}",
            d.dag_id,
            d.file,
            d.line,
            d.schedule.as_deref().unwrap_or("-")
        );
        for e in &d.upstream_dags {
            let from = match e.task_id.as_str() {
                "" => e.dag_id.clone(),
                t => format!("{}:{t}", e.dag_id),
            };
            let via = serde_json::to_value(e.via).unwrap_or_default();
            let _ = write!(
                out,
                "  after DAG {from} ({}",
                via.as_str().unwrap_or_default()
            );
            for detail in [&e.dataset, &e.task].into_iter().filter(|s| !s.is_empty()) {
                let _ = write!(out, " {detail}");
            }
            out.push_str(")\n");
        }
        for t in &d.tasks {
            let _ = write!(out, "  {} [{}]", t.task_id, t.operator);
            if let Some(p) = &t.pool {
                let _ = write!(out, " pool={p}");
            }
            if !t.upstream.is_empty() {
                let _ = write!(out, " after {}", t.upstream.join(", "));
            }
            if !t.reads.is_empty() {
                let _ = write!(out, " reads {}", t.reads.join(", "));
            }
            if !t.writes.is_empty() {
                let _ = write!(out, " writes {}", t.writes.join(", "));
            }
            out.push('\n');
        }
    }
    for w in warnings {
        let _ = writeln!(out, "{w}");
    }
    out
}
