//! Executors: how a task is run by the tool that owns its job. Each has a
//! file here (`airflow.rs`: Airflow 2 and 3 CLIs; `dbt.rs`: `dbt build`;
//! `sql.rs`: the job's own SQL redirected to shadows) and an arm of
//! [`Executor`]; the fallback order, used when no executor is asked for,
//! is [`Executor::FALLBACK`].

mod airflow;
mod dbt;
mod sql;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

pub use dbt::{
    OVERLAY_FUNCTIONS as DBT_OVERLAY_FUNCTIONS, OVERLAY_VAR as DBT_OVERLAY_VAR,
    body_refusal as dbt_body_refusal, holds_rows, overlay_lines as dbt_overlay_lines,
    refusal as dbt_refusal, selector as dbt_selector,
};
pub use sql::{ScriptTarget, guarded_script, makes_view, task_suffix};

use serde::Serialize;

use super::PlanTask;
use crate::graph::LineageGraph;
use crate::project::{Dataset, Job, JobKind};

/// Commands for one task, per executor; absent where the executor does not
/// run that kind of job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Commands {
    /// `airflow dags backfill ...` (Airflow 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub airflow2: Option<ShellLine>,
    /// `airflow backfill create ...` (Airflow 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub airflow3: Option<ShellLine>,
    /// `dbt build ...`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub dbt: Option<ShellLine>,
    /// The job's SQL, writing the shadow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sql: Vec<String>,
}

/// Restated dbt models by name, each with its shadow's parts.
pub type DbtShadows = BTreeMap<String, BTreeMap<&'static str, String>>;

/// What an executor needs to know to run one task.
pub struct TaskContext<'a> {
    /// The task.
    pub task: &'a PlanTask,
    /// Its dataset.
    pub dataset: &'a Dataset,
    /// The job writing it.
    pub job: &'a Job,
    /// The dataset's shadow.
    pub shadow: &'a str,
    /// Production relation (as ripple prints it) → shadow, for every
    /// dataset the plan rewrites.
    pub shadows: &'a HashMap<String, String>,
    /// The partitions the task restates (`None`: all of them).
    pub filter: Option<&'a str>,
    /// The job's output columns, when known.
    pub columns: Option<&'a [String]>,
    /// What the plan knows of the dataset's table (PostgreSQL, DuckDB).
    pub known: Option<&'a crate::plan::table::Known>,
    /// Airflow 3's `--max-active-runs`.
    pub max_active_runs: u32,
    /// The dbt models the plan restates, by name, with their shadows'
    /// parts (`database`, `schema`, `identifier`): what `ref` reads.
    pub dbt_shadows: &'a DbtShadows,
    /// Whether the plan has a dbt overlay to run models through.
    pub dbt_overlay: bool,
    /// The dbt target the plan is for (`target.name` in ripple.yml).
    pub dbt_target: &'a str,
    /// `vars` of ripple.yml, passed to dbt as production passes them.
    pub dbt_vars: &'a std::collections::BTreeMap<String, serde_json::Value>,
    /// The dataset's grain (an Airflow task runs once per partition).
    pub grain: crate::time::Grain,
    /// The dates a full rebuild runs as.
    pub range: (&'a str, &'a str),
}

/// The commands of one task, per executor that runs its job, and what a
/// reviewer should know about them; an error when its SQL would change a
/// relation that is not a shadow.
pub fn commands(
    g: &LineageGraph,
    cx: &TaskContext,
) -> Result<(Commands, Option<String>), super::PlanError> {
    let (from, to) = match (&cx.task.from, &cx.task.to) {
        (Some(f), Some(t)) => (f.as_str(), t.as_str()),
        _ => cx.range,
    };
    let mut c = Commands::default();
    let mut note = None;
    match cx.job.kind {
        JobKind::Airflow => {
            airflow::commands(&mut c, cx.job, (from, to), cx.max_active_runs);
            note = sql::airflow_commands(&mut c, g, cx)?;
        }
        JobKind::Dbt | JobKind::Manifest => {
            dbt::commands(&mut c, cx);
            // A model Airflow builds (cosmos, `dbt run` in a task): its task.
            airflow::commands(&mut c, cx.job, (from, to), cx.max_active_runs);
        }
        JobKind::Sql => sql::commands(&mut c, g, cx)?,
    }
    Ok((c, note))
}

/// Statements as one script (`;`-terminated lines), run in one session.
pub fn sql_script(statements: &[String]) -> String {
    statements
        .iter()
        .map(|s| format!("{s};"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A shell command line built word by word, each word quoted as it is
/// added: the only way ripple writes one, so a name from a project is
/// always exactly one word, whatever it holds (quotes, `$(...)`, newlines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ShellLine(String);

impl ShellLine {
    /// `program`, a word of ripple's own (`dbt`, `run_sql`, `check`).
    pub fn new(program: &'static str) -> ShellLine {
        ShellLine(program.to_string())
    }

    /// The line with `word` added as one quoted word.
    pub fn arg(mut self, word: &str) -> ShellLine {
        self.0.push(' ');
        self.0.push_str(&shell_quote(word));
        self
    }

    /// The line with the value of the shell variable `name` (a name of
    /// ripple's own), then `suffix`, added as one word.
    pub fn var(mut self, name: &'static str, suffix: &'static str) -> ShellLine {
        let _ = write!(self.0, " \"${name}{suffix}\"");
        self
    }

    /// The line with its standard output sent to standard error.
    pub fn to_stderr(mut self) -> ShellLine {
        self.0.push_str(" >&2");
        self
    }

    /// The line, then `exit 1`.
    pub fn then_fail(mut self) -> ShellLine {
        self.0.push_str("; exit 1");
        self
    }

    /// A comment line: `# ` and `text` on one line, every character that
    /// acts on a terminal escaped ([`crate::text::one_line`]), so no part of
    /// it can become a command or act on whoever reads the script.
    pub fn comment(text: &str) -> String {
        format!("# {}", crate::text::one_line(text))
    }

    /// The line as the shell reads it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for ShellLine {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ShellLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    crate::text::shell_word(s)
}

/// Which executor's commands the shell script and command list use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Executor {
    /// `airflow dags backfill` (Airflow 2).
    Airflow2,
    /// `airflow backfill create` (Airflow 3).
    Airflow3,
    /// `dbt build` (of the model and its own tests).
    Dbt,
    /// The jobs' own SQL, redirected to shadows.
    Sql,
}

impl Executor {
    /// Who runs a task when no executor is asked for, or the one asked for
    /// does not run its job: the first of these that does. The Airflow
    /// CLIs are never chosen on their own: they run the production task,
    /// which writes production, not the shadow.
    pub const FALLBACK: [Executor; 2] = [Executor::Sql, Executor::Dbt];

    /// Whether this executor's commands write the shadows the plan swaps
    /// in (the Airflow CLIs run the production task: they do not).
    pub fn writes_shadows(self) -> bool {
        !matches!(self, Executor::Airflow2 | Executor::Airflow3)
    }

    /// The command lines that run a task with these `commands`, if this
    /// executor runs its job.
    fn lines(self, c: &Commands) -> Option<Vec<ShellLine>> {
        match self {
            Executor::Airflow2 => c.airflow2.clone().map(|x| vec![x]),
            Executor::Airflow3 => c.airflow3.clone().map(|x| vec![x]),
            Executor::Dbt => c.dbt.clone().map(|x| vec![x]),
            Executor::Sql => (!c.sql.is_empty())
                .then(|| vec![ShellLine::new("run_sql").arg(&sql_script(&c.sql))]),
        }
    }
}

/// The command lines that run `task` with `executor` when its job supports
/// it, else with whatever runs its job (Airflow 2, then dbt, then SQL).
pub fn command_lines(t: &super::DocTask, executor: Option<Executor>) -> Vec<ShellLine> {
    chosen(t, executor)
        .and_then(|e| e.lines(&t.commands))
        .unwrap_or_else(|| {
            vec![
                ShellLine::new("echo")
                    .arg(&format!("no command runs {}", t.task.id))
                    .to_stderr()
                    .then_fail(),
            ]
        })
}

/// The executor that runs `t`: `executor` when it runs its job, else the
/// first of [`Executor::FALLBACK`] that does; `None` when none does.
pub fn chosen(t: &super::DocTask, executor: Option<Executor>) -> Option<Executor> {
    executor
        .into_iter()
        .chain(Executor::FALLBACK)
        .find(|e| e.lines(&t.commands).is_some())
}

/// When `executor` was asked for and does not run `task`'s job, what runs
/// it instead, said so (`--executor dbt` on a SQL job fell back to its SQL
/// without a word).
pub fn fallback_note(t: &super::DocTask, executor: Option<Executor>) -> Option<String> {
    let asked = executor?;
    if asked.lines(&t.commands).is_some() {
        return None;
    }
    let name = |e: Executor| {
        clap::ValueEnum::to_possible_value(&e)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    };
    let used = Executor::FALLBACK
        .into_iter()
        .find(|e| e.lines(&t.commands).is_some());
    Some(match used {
        Some(e) => format!(
            "--executor {} does not run this task's job: {} runs it",
            name(asked),
            name(e)
        ),
        None => format!("--executor {} does not run this task's job", name(asked)),
    })
}

/// Commands by task id.
pub type CommandMap = BTreeMap<String, Commands>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_are_built_of_quoted_words_and_comments_stay_comments() {
        let line = ShellLine::new("dbt")
            .arg("run")
            .arg("a b")
            .arg("$(rm -rf /)")
            .arg("it's");
        assert_eq!(line.as_str(), "dbt run 'a b' '$(rm -rf /)' 'it'\\''s'");
        assert_eq!(
            ShellLine::comment("task x\nrm -rf /\r\u{202e}"),
            "# task x\\nrm -rf /\\r\\u{202e}"
        );
    }

    #[test]
    fn shell_words_cannot_break_out() {
        assert_eq!(shell_quote("orders_7d"), "orders_7d");
        assert_eq!(shell_quote("a'; rm -rf / #"), "'a'\\''; rm -rf / #'");
    }
}
