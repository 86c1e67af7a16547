//! `ripple schedule`: production runs (blackout windows) over a horizon.

use crate::text::one_line;
use std::fmt::Write as _;

use serde::Serialize;

use super::SCHEMA_VERSION;
use crate::schedule::Schedule;

#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    #[serde(flatten)]
    schedule: &'a Schedule,
}

/// The schedule as JSON.
pub fn json(schedule: &Schedule) -> String {
    let mut out = serde_json::to_string_pretty(&Document {
        schema_version: SCHEMA_VERSION,
        schedule,
    })
    .unwrap_or_default();
    out.push('\n');
    out
}

/// The schedule as text: one line per run, grouped by DAG.
pub fn text(schedule: &Schedule) -> String {
    let mut out = format!(
        "production runs from {} to {} (UTC)\n",
        schedule.from, schedule.to
    );
    for d in &schedule.dags {
        let _ = writeln!(
            out,
            "\n{}  schedule {} ({}), {} min per run ({}), {} run{}",
            // Names from DAG files on one line: a line break in an id
            // would print lines of its own.
            one_line(&d.dag_id),
            one_line(&d.schedule),
            one_line(&d.source),
            d.duration_minutes,
            d.duration_source,
            d.runs.len(),
            crate::text::plural(d.runs.len())
        );
        for r in &d.runs {
            let _ = writeln!(out, "  {} → {}", r.start, r.end);
        }
        if d.truncated {
            out.push_str("  … (more runs not listed)\n");
        }
    }
    if !schedule.not_scheduled.is_empty() {
        out.push_str("\nnot time-scheduled:\n");
        for u in &schedule.not_scheduled {
            let _ = writeln!(
                out,
                "  {} ({}): {}",
                one_line(&u.dag_id),
                one_line(&u.schedule),
                one_line(&u.why)
            );
        }
    }
    out
}
