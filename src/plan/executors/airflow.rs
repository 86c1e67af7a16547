//! Airflow: the DAG's own task, backfilled by the Airflow 2 or 3 CLI.

use super::{Commands, shell_quote};
use crate::project::Job;

/// Fills the Airflow commands of a task of `job` over `(from, to)`.
pub(super) fn commands(
    c: &mut Commands,
    job: &Job,
    (from, to): (&str, &str),
    max_active_runs: u32,
) {
    let Some(a) = &job.airflow else {
        return;
    };
    let regex = format!("^{}$", regex_escape(&a.task_id));
    c.airflow2 = Some(format!(
        "airflow dags backfill -s {from} -e {to} --reset-dagruns -y -t {} {}",
        shell_quote(&regex),
        shell_quote(&a.dag_id)
    ));
    c.airflow3 = Some(format!(
        "airflow backfill create --dag-id {} --from-date {from} --to-date {to} --max-active-runs {max_active_runs} --reprocess-behavior completed",
        shell_quote(&a.dag_id)
    ));
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
