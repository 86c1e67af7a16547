//! Airflow: the DAG's own task (for a dbt node, the task that builds it),
//! backfilled by the Airflow 2 or 3 CLI.

use super::{Commands, ShellLine};
use crate::project::Job;

/// Fills the Airflow commands of a task of `job` over `(from, to)`.
pub(super) fn commands(
    c: &mut Commands,
    job: &Job,
    (from, to): (&str, &str),
    max_active_runs: u32,
) {
    // An Airflow task's job, or a dbt node an Airflow task builds.
    let Some(a) = job.airflow.as_ref().or(job.built_by.as_ref()) else {
        return;
    };
    let regex = format!("^{}$", regex_escape(&a.task_id));
    c.airflow2 = Some(
        ShellLine::new("airflow")
            .arg("dags")
            .arg("backfill")
            .arg("-s")
            .arg(from)
            .arg("-e")
            .arg(to)
            .arg("--reset-dagruns")
            .arg("-y")
            .arg("-t")
            .arg(&regex)
            .arg(&a.dag_id),
    );
    c.airflow3 = Some(
        ShellLine::new("airflow")
            .arg("backfill")
            .arg("create")
            .arg("--dag-id")
            .arg(&a.dag_id)
            .arg("--from-date")
            .arg(from)
            .arg("--to-date")
            .arg(to)
            .arg("--max-active-runs")
            .arg(&max_active_runs.to_string())
            .arg("--reprocess-behavior")
            .arg("completed"),
    );
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.^$|?*+()[]{}".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_matched_literally() {
        assert_eq!(regex_escape("load.orders"), "load\\.orders");
    }
}
