//! dbt: `dbt run` of the model against the backfill target.

use super::{Commands, shell_quote};
use crate::plan::PlanTask;
use crate::project::Dataset;

/// Fills the dbt command of `task`, which rebuilds model `d` over `(from, to)`.
pub(super) fn commands(c: &mut Commands, task: &PlanTask, d: &Dataset, (from, to): (&str, &str)) {
    let microbatch = d
        .config
        .get("incremental_strategy")
        .and_then(|v| v.as_str())
        == Some("microbatch");
    let select = shell_quote(&d.name);
    c.dbt = Some(if microbatch && !task.full {
        format!(
            "dbt run --select {select} --event-time-start {from} --event-time-end {} --target backfill",
            end_key(to)
        )
    } else {
        let vars = serde_json::json!({ "backfill_from": from, "backfill_to": to }).to_string();
        format!(
            "dbt run --select {select} --vars {} --target backfill",
            shell_quote(&vars)
        )
    });
}

/// The day after an inclusive day key, for dbt's exclusive end.
fn end_key(to: &str) -> String {
    crate::time::TimeKey::parse(to).map_or(to.to_string(), |k| crate::time::Grain::Day.key(k.end()))
}
