//! Commands that run a task with the tool that owns its job: Airflow 2 and
//! 3 CLIs for Airflow tasks, dbt for dbt models, and the job's own SQL
//! (rewritten to write the shadow and read rewritten upstreams' shadows) for
//! SQL jobs.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::PlanTask;
use crate::graph::LineageGraph;
use crate::project::{Dataset, Job, JobKind};
use crate::sql::SqlDialect;

/// Commands for one task, per executor; absent where the executor does not
/// run that kind of job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Commands {
    /// `airflow dags backfill ...` (Airflow 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub airflow2: Option<String>,
    /// `airflow backfill create ...` (Airflow 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub airflow3: Option<String>,
    /// `dbt run ...`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dbt: Option<String>,
    /// The job's SQL, writing the shadow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sql: Vec<String>,
}

/// The commands of `task`, whose dataset `d` is written by `job`.
/// `shadows` maps production relations to their shadows (the task's own
/// dataset and every other dataset the plan rewrites).
pub fn commands(
    g: &LineageGraph,
    task: &PlanTask,
    d: &Dataset,
    job: &Job,
    shadows: &HashMap<String, String>,
    max_active_runs: u32,
    range: (&str, &str),
) -> Commands {
    let (from, to) = match (&task.from, &task.to) {
        (Some(f), Some(t)) => (f.as_str(), t.as_str()),
        _ => range,
    };
    let mut c = Commands::default();
    match job.kind {
        JobKind::Airflow => {
            if let Some(a) = &job.airflow {
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
        }
        JobKind::Dbt | JobKind::Manifest => {
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
                let vars =
                    serde_json::json!({ "backfill_from": from, "backfill_to": to }).to_string();
                format!(
                    "dbt run --select {select} --vars {} --target backfill",
                    shell_quote(&vars)
                )
            });
        }
        JobKind::Sql => {
            if let Some(sql) = &job.sql {
                c.sql = rewrite(sql, g.config.dialect, shadows);
            }
        }
    }
    c
}

/// The day after an inclusive day key, for dbt's exclusive end.
fn end_key(to: &str) -> String {
    crate::time::TimeKey::parse(to).map_or(to.to_string(), |k| crate::time::Grain::Day.key(k.end()))
}

/// The statements of `sql` with every relation in `shadows` replaced by its
/// shadow; empty when the SQL does not parse (the plan refuses to run a job
/// whose SQL failed to read).
fn rewrite(sql: &str, dialect: SqlDialect, shadows: &HashMap<String, String>) -> Vec<String> {
    crate::sql::rewrite::redirect(sql, dialect, shadows)
        .map(|statements| statements.into_iter().map(|s| s.sql).collect())
        .unwrap_or_default()
}

/// `s` as one shell word.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
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

/// Which executor's commands the shell script and command list use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Executor {
    /// `airflow dags backfill` (Airflow 2).
    Airflow2,
    /// `airflow backfill create` (Airflow 3).
    Airflow3,
    /// `dbt run`.
    Dbt,
    /// The jobs' own SQL, redirected to shadows.
    Sql,
}

/// The command lines that run `task` with `executor` when its job supports
/// it, else with whatever runs its job (Airflow 2, then dbt, then SQL).
pub fn command_lines(t: &super::DocTask, executor: Option<Executor>) -> Vec<String> {
    let c = &t.commands;
    let sql = || {
        c.sql
            .iter()
            .map(|s| format!("run_sql {}", shell_quote(s)))
            .collect::<Vec<_>>()
    };
    let chosen = match executor {
        Some(Executor::Airflow2) => c.airflow2.clone().map(|x| vec![x]),
        Some(Executor::Airflow3) => c.airflow3.clone().map(|x| vec![x]),
        Some(Executor::Dbt) => c.dbt.clone().map(|x| vec![x]),
        Some(Executor::Sql) => (!c.sql.is_empty()).then(sql),
        None => None,
    };
    chosen
        .or_else(|| c.airflow2.clone().map(|x| vec![x]))
        .or_else(|| c.dbt.clone().map(|x| vec![x]))
        .or_else(|| (!c.sql.is_empty()).then(sql))
        .unwrap_or_else(|| {
            vec![format!(
                "echo {} >&2; exit 1",
                shell_quote(&format!("no command runs {}", t.task.id))
            )]
        })
}

/// Commands by task id.
pub type CommandMap = BTreeMap<String, Commands>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_cannot_break_out() {
        assert_eq!(shell_quote("orders_7d"), "orders_7d");
        assert_eq!(shell_quote("a'; rm -rf / #"), "'a'\\''; rm -rf / #'");
        assert_eq!(regex_escape("load.orders"), "load\\.orders");
    }
}
