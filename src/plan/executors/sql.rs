//! SQL: the job's own statements, every relation the plan rewrites
//! redirected to its shadow.

use std::collections::HashMap;

use super::Commands;
use crate::graph::LineageGraph;
use crate::project::Job;

/// Fills the SQL of a task of `job`; empty when the SQL does not parse (the
/// plan refuses to run a job whose SQL failed to read).
pub(super) fn commands(
    c: &mut Commands,
    g: &LineageGraph,
    job: &Job,
    shadows: &HashMap<String, String>,
) {
    if let Some(sql) = &job.sql {
        c.sql = crate::sql::rewrite::redirect(sql, g.config.dialect, shadows)
            .map(|statements| statements.into_iter().map(|s| s.sql).collect())
            .unwrap_or_default();
    }
}
