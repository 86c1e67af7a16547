//! The plan as JSON (the contract other executors read, with a JSON Schema
//! generated from these types) and Markdown.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Serialize;

use crate::plan::executors::{Executor, ShellLine, command_lines, fallback_note};
use crate::plan::{DocTask, PlanDocument};

/// The version of the plan document's shape: 2 since the plan sets up
/// shadows, validations became objects and the swap phase became scripts.
pub const PLAN_SCHEMA_VERSION: u32 = 2;

/// The JSON document: `schema_version` and the plan.
#[derive(Serialize, JsonSchema)]
pub struct PlanJson<'a> {
    /// Version of this document's shape.
    pub schema_version: u32,
    /// The plan.
    #[serde(flatten)]
    pub plan: &'a PlanDocument,
}

/// The plan as JSON.
pub fn json(plan: &PlanDocument) -> String {
    let mut out = Vec::new();
    let _ = write_json(plan, &mut out);
    // serde_json writes only valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// [`json`] written to `out` as it is made, a window of pieces at a time,
/// so a large plan's text is never held whole.
pub fn write_json(plan: &PlanDocument, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    write_json_by(plan, super::pieces::Cut::for_elements(4096), out)
}

fn write_json_by(
    plan: &PlanDocument,
    cut: super::pieces::Cut,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    // The tasks are most of a large plan's text: they are written on all
    // cores into the rest of the document, written with no tasks.
    let rest = PlanDocument {
        changed: plan.changed.clone(),
        assumed: plan.assumed.clone(),
        setup: plan.setup.clone(),
        tasks: Vec::new(),
        swaps: plan.swaps.clone(),
        swap_scripts: plan.swap_scripts.clone(),
        cleanup: plan.cleanup.clone(),
        rollback: plan.rollback.clone(),
        schedule: plan.schedule.clone(),
        warnings: plan.warnings.clone(),
        dbt_overlay: plan.dbt_overlay.clone(),
        dbt_overlay_functions: plan.dbt_overlay_functions.clone(),
    };
    let mut doc = serde_json::to_string_pretty(&PlanJson {
        schema_version: PLAN_SCHEMA_VERSION,
        plan: &rest,
    })
    .map_err(std::io::Error::other)?;
    doc.push('\n');
    let rest = super::pieces::splice(&doc, "tasks", &plan.tasks, cut, out)?;
    out.write_all(rest.as_bytes())
}

/// [`json`] written in one pass: what its splicing must equal.
#[cfg(test)]
fn json_whole(plan: &PlanDocument) -> String {
    let mut out = serde_json::to_string_pretty(&PlanJson {
        schema_version: PLAN_SCHEMA_VERSION,
        plan,
    })
    .unwrap_or_default();
    out.push('\n');
    out
}

/// The JSON Schema of [`json`]'s output (shipped as `docs/plan.schema.json`).
pub fn schema() -> String {
    let schema = schemars::schema_for!(PlanJson<'static>);
    let mut out = serde_json::to_string_pretty(&schema).unwrap_or_default();
    out.push('\n');
    out
}

/// The plan as Markdown for review. Names are code spans (GitHub links and
/// formats nothing inside one), prose is escaped, SQL is fenced longer
/// than any run of backticks it holds.
pub fn markdown(plan: &PlanDocument) -> String {
    use super::escape::{cell_code, code_block, code_list, markdown_text};
    let mut out = format!(
        "### Backfill plan for {}\n\n{} task{}, {} swap{}; assumed correct: {}.\n\n| task | partitions | after |\n|---|---|---|\n",
        code_list(&plan.changed),
        plan.tasks.len(),
        crate::text::plural(plan.tasks.len()),
        plan.swaps.len(),
        crate::text::plural(plan.swaps.len()),
        if plan.assumed.is_empty() {
            "nothing".to_string()
        } else {
            code_list(&plan.assumed)
        }
    );
    for t in &plan.tasks {
        let after = if t.task.depends_on.is_empty() {
            "-".to_string()
        } else {
            code_list(&t.task.depends_on)
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell_code(&t.task.id),
            t.task.partitions,
            after
        );
    }
    out.push_str("\n<details><summary>Swaps (after every task and validation of their dataset)</summary>\n\n");
    for s in &plan.swaps {
        let _ = writeln!(
            out,
            "- {}:\n\n{}",
            cell_code(&s.dataset),
            code_block("sql", &format!("{};", s.sql.join(";\n")))
        );
    }
    out.push_str("</details>\n\nRollback (drops the shadows; production is never touched):\n\n");
    let rollback: String = plan.rollback.iter().map(|r| format!("{r};\n")).collect();
    out.push_str(&code_block("sql", &rollback));
    for w in &plan.warnings {
        let _ = writeln!(out, "\n> warning: {}", markdown_text(w));
    }
    out
}

/// Every task's commands in plan order, one per line.
pub fn commands(plan: &PlanDocument, executor: Option<Executor>) -> String {
    let mut out = String::new();
    if runs_dbt(plan, executor) {
        out.push_str("# dbt overlay: run these first, with RIPPLE_DBT_OVERLAY set to an empty folder\n# and RIPPLE_DBT_PROJECT to the dbt project (default: the current folder)\n");
        out.push_str(&plan.dbt_overlay_functions);
        for line in &plan.dbt_overlay {
            let _ = writeln!(out, "{line}");
        }
    }
    for t in &plan.tasks {
        let _ = writeln!(out, "{}", ShellLine::comment(&t.task.id));
        if let Some(note) = fallback_note(t, executor) {
            let _ = writeln!(out, "{}", ShellLine::comment(&note));
        }
        for line in command_lines(t, executor) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// A `set -euo pipefail` script: the shadows are set up, the tasks run in
/// order (each task's SQL in one session), every validation runs and the
/// first that fails stops the script before any swap, then the swap phase
/// runs (one session per swap script: one transaction), then cleanup.
/// `bash plan.sh rollback` drops the shadows instead. SQL goes through
/// `$RIPPLE_SQL`, a command that runs a script of statements in one session
/// and prints results without headers (e.g. `psql -X -q -tA -v
/// ON_ERROR_STOP=1 -c`); a passing check prints `t` or `true`.
pub fn shell(plan: &PlanDocument, executor: Option<Executor>) -> String {
    use crate::plan::executors::sql_script;
    let mut out = String::from(
        "#!/usr/bin/env bash\n# Backfill plan written by ripple. Production is touched only by the swap phase.\n# Before the swap, `bash THIS_FILE rollback` drops the shadows; after any failure, fix its cause and run this file again.\nset -euo pipefail\n: \"${RIPPLE_SQL:?set RIPPLE_SQL to a command that runs a script of SQL statements in one session, e.g. psql -X -q -tA -v ON_ERROR_STOP=1 -c}\"\n\nrun_sql() { $RIPPLE_SQL \"$1\"; }\ncheck() {\n  local got\n  got=$(run_sql \"$1\" | tr -d '[:space:]')\n  if [ \"$got\" != t ] && [ \"$got\" != true ]; then\n    echo \"validation $3 failed: $1\" >&2\n    if [ -n \"$2\" ]; then echo \"  $(run_sql \"$2\")\" >&2; fi\n    exit 1\n  fi\n}\n",
    );
    // Every line below the fixed preamble is a comment or a ShellLine: the
    // plan's names and SQL reach the shell only as quoted words.
    let run_sql = |sql: &str| ShellLine::new("run_sql").arg(sql);
    out.push_str("rollback() {\n");
    for r in &plan.rollback {
        let _ = writeln!(out, "  {}", run_sql(r));
    }
    out.push_str("  :\n}\nif [ \"${1:-}\" = rollback ]; then\n  rollback\n  exit 0\nfi\n");
    for s in &plan.setup {
        let _ = writeln!(
            out,
            "\n{}",
            ShellLine::comment(&format!("shadow of {}", s.dataset))
        );
        let _ = writeln!(out, "{}", run_sql(&sql_script(&s.sql)));
    }
    if runs_dbt(plan, executor) {
        out.push_str("\n# dbt runs in an overlay of the project (docs/plan.md, dbt): the project's\n# folder is never written\n");
        out.push_str(&plan.dbt_overlay_functions);
        out.push_str("RIPPLE_DBT_OVERLAY=$(mktemp -d \"${TMPDIR:-/tmp}/ripple-dbt.XXXXXX\")\ntrap 'rm -rf \"$RIPPLE_DBT_OVERLAY\"' EXIT\n");
        for line in &plan.dbt_overlay {
            let _ = writeln!(out, "{line}");
        }
    }
    for t in &plan.tasks {
        let _ = writeln!(
            out,
            "\n{}",
            ShellLine::comment(&format!("task {}", t.task.id))
        );
        // Shown on the terminal that runs the script: inert.
        let running = format!("running {}", crate::text::one_line(&t.task.id));
        let _ = writeln!(out, "{}", ShellLine::new("echo").arg(&running).to_stderr());
        if let Some(note) = fallback_note(t, executor) {
            let _ = writeln!(out, "{}", ShellLine::comment(&note));
        }
        for line in command_lines(t, executor) {
            let _ = writeln!(out, "{line}");
        }
        for v in &t.validations {
            let check = ShellLine::new("check")
                .arg(&v.sql)
                .arg(v.detail.as_deref().unwrap_or(""))
                .arg(&format!("{} of {}", v.check, t.task.id));
            let _ = writeln!(out, "{check}");
        }
    }
    if !plan.swap_scripts.is_empty() {
        out.push_str("\n# swap phase: production changes here, each script in one transaction\n");
        for script in &plan.swap_scripts {
            let _ = writeln!(out, "{}", run_sql(&sql_script(script)));
        }
    }
    if !plan.cleanup.is_empty() {
        out.push_str("\n# cleanup: the shadows are no longer needed\n");
        let _ = writeln!(out, "{}", run_sql(&sql_script(&plan.cleanup)));
    }
    out
}

/// Whether some task of `plan` runs with its dbt command under `executor`.
fn runs_dbt(plan: &PlanDocument, executor: Option<Executor>) -> bool {
    !plan.dbt_overlay.is_empty()
        && plan.tasks.iter().any(|t| {
            t.commands.dbt.is_some()
                && command_lines(t, executor).first() == t.commands.dbt.as_ref()
        })
}

/// The plan in DOT: one cluster per dataset (a stage), batches as nodes.
pub fn dot(plan: &PlanDocument) -> String {
    use super::dot;
    let mut stages: Vec<(String, Vec<&crate::plan::DocTask>)> = Vec::new();
    for t in &plan.tasks {
        match stages.last_mut() {
            Some((d, ts)) if *d == t.task.dataset => ts.push(t),
            _ => stages.push((t.task.dataset.clone(), vec![t])),
        }
    }
    let mut stmts = Vec::new();
    for (n, (dataset, ts)) in stages.iter().enumerate() {
        let nodes = ts
            .iter()
            .map(|t| {
                let label = match (&t.task.from, &t.task.to) {
                    (Some(f), Some(to)) => format!("{f}..{to}"),
                    _ => "full".to_string(),
                };
                dot::node(
                    &t.task.id,
                    vec![dot::attr("label", &label), dot::attr("shape", "box")],
                )
            })
            .collect();
        stmts.push(dot::cluster(n, dataset, nodes));
    }
    for t in &plan.tasks {
        for d in &t.task.depends_on {
            stmts.push(dot::edge(d, &t.task.id, Vec::new()));
        }
    }
    dot::digraph("plan", stmts)
}

/// The plan as a Mermaid flowchart: a subgraph per dataset.
pub fn mermaid(plan: &PlanDocument) -> String {
    use super::mermaid::{Flowchart, Shape};
    let ids = plan.positions();
    let mut f = Flowchart::new();
    let mut current: Option<&str> = None;
    let mut stage = 0;
    for (i, t) in plan.tasks.iter().enumerate() {
        if current != Some(t.task.dataset.as_str()) {
            if current.is_some() {
                f.end();
            }
            f.subgraph(&format!("s{stage}"), &t.task.dataset);
            stage += 1;
            current = Some(&t.task.dataset);
        }
        let label = match (&t.task.from, &t.task.to) {
            (Some(from), Some(to)) => format!("{from}..{to}"),
            _ => "full".to_string(),
        };
        f.node(&format!("t{i}"), Shape::Box, &[&label]);
    }
    if current.is_some() {
        f.end();
    }
    for (i, t) in plan.tasks.iter().enumerate() {
        for d in &t.task.depends_on {
            if let Some(j) = ids.get(d.as_str()) {
                f.edge(&format!("t{j}"), &format!("t{i}"), None);
            }
        }
    }
    f.finish()
}

/// One Airflow DAG file that runs the plan: a task per plan task (its
/// command), a validation task after each, a swap task per dataset after
/// all of its validations, all in one pool sized to `max_concurrency`.
/// It is meant to be read and reviewed before it is deployed.
pub fn airflow_dag(
    plan: &PlanDocument,
    guard: &LiveGuard,
    executor: Option<Executor>,
    max_concurrency: u32,
) -> String {
    // A Python string literal (JSON's is one), with direction marks and
    // overrides escaped too: JSON leaves them raw, and they would reorder
    // the DAG file's text for whoever reviews it.
    let py = |s: &str| {
        let json = serde_json::to_string(s).unwrap_or_default();
        if !json.chars().any(crate::text::acts) {
            return json;
        }
        json.chars()
            .map(|c| match c {
                c if crate::text::acts(c) => format!("\\u{:04x}", c as u32),
                c => c.to_string(),
            })
            .collect()
    };
    let mut out = String::from(
        "\"\"\"Backfill plan written by ripple: review, then deploy.\n\nTasks run the backfill into shadow tables, validations check every batch,\nswaps replace production only after all batches of a dataset passed.\nRollback: before the swap, trigger the DAG ripple_backfill_rollback (in this\nfile), which drops the shadows listed in ROLLBACK; production is never touched.\n\"\"\"\nfrom datetime import datetime\n\nfrom airflow import DAG\n\ntry:  # Airflow 3 (the standard provider); Airflow 2.10 below\n    from airflow.providers.standard.operators.bash import BashOperator as _Bash\nexcept ImportError:\n    from airflow.operators.bash import BashOperator as _Bash\ntry:
    from airflow.sdk.bases.sensor import BaseSensorOperator as _Sensor
except ImportError:
    from airflow.sensors.base import BaseSensorOperator as _Sensor
from airflow.providers.common.sql.operators.sql import SQLCheckOperator as _SQLCheck\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as _SQLExecute\n\n",
    );
    // Airflow renders template fields as Jinja: a `{{ ... }}` in the SQL
    // (a string literal in a plain SQL job, a name) would be evaluated with
    // access to Variables and connections. ripple has already rendered what
    // was meant for Airflow, so these operators render nothing.
    out.push_str(
        "\n# The SQL and commands below run exactly as written: these operators render\n# no Jinja (template_fields is empty), so `{{ ... }}` in them stays text.\nclass SQLExecuteQueryOperator(_SQLExecute):\n    template_fields = ()\n\n\nclass SQLCheckOperator(_SQLCheck):\n    template_fields = ()\n\n    def __init__(self, *, detail=None, **kwargs):\n        super().__init__(**kwargs)\n        self.detail = detail\n\n    # A failed check logs what its detail query finds (the partition and\n    # its counts), as the shell script prints it.\n    def execute(self, context):\n        try:\n            return super().execute(context)\n        except Exception:\n            if self.detail:\n                self.log.error(\"ripple: %s failed; its detail query says: %s\", self.task_id, self.get_db_hook().get_records(self.detail))\n            raise\n\n\nclass BashOperator(_Bash):\n    template_fields = ()\n\n\n",
    );
    if runs_dbt(plan, executor) {
        // The overlay's script grows with the plan (its table of shadows):
        // passed on the command line it overflowed the 128 KiB an argument
        // may hold past about 2,100 models, so a task reads it from a file.
        out.push_str(
            "class DbtOperator(BashOperator):\n    \"\"\"Runs its dbt command in the overlay DBT_OVERLAY builds, read from a file:\n    a command line holds at most 128 KiB.\"\"\"\n\n    def execute(self, context):\n        import os, shlex, tempfile\n        fd, path = tempfile.mkstemp(prefix=\"ripple-overlay-\", suffix=\".sh\")\n        with os.fdopen(fd, \"w\") as f:\n            f.write(DBT_OVERLAY)\n        command = self.bash_command\n        self.bash_command = \". \" + shlex.quote(path) + \" && \" + command\n        try:\n            return super().execute(context)\n        finally:\n            self.bash_command = command\n            os.unlink(path)\n\n\n",
        );
    }
    let _ = writeln!(
        out,
        "POOL = \"ripple_backfill\"  # create it with {max_concurrency} slots"
    );
    let _ = writeln!(out, "CONN_ID = \"warehouse\"\n");
    if guard.guards() {
        let windows: Vec<String> = guard
            .windows
            .iter()
            .map(|(a, b)| format!("({a}, {b})"))
            .collect();
        let dags: Vec<String> = guard.production_dags.iter().map(|d| py(d)).collect();
        let _ = writeln!(
            out,
            "# Allowed windows, [from, to) minutes of the day in UTC (ripple.yml's backfill.windows;\n# empty: any time), and the production DAGs the backfill never runs beside.\nWINDOWS = [{}]\nPRODUCTION_DAGS = [{}]",
            windows.join(", "),
            dags.join(", ")
        );
        out.push_str(PRODUCTION_CLEAR);
    }
    if runs_dbt(plan, executor) {
        // Each dbt task builds its own overlay: tasks may run on other workers.
        let mut prelude = String::from("set -euo pipefail\n");
        prelude.push_str(&plan.dbt_overlay_functions);
        prelude.push_str("cd \"${RIPPLE_DBT_PROJECT:?set RIPPLE_DBT_PROJECT to the dbt project folder}\"\nexport RIPPLE_DBT_OVERLAY=$(mktemp -d \"${TMPDIR:-/tmp}/ripple-dbt.XXXXXX\")\ntrap 'rm -rf \"$RIPPLE_DBT_OVERLAY\"' EXIT\n");
        for line in &plan.dbt_overlay {
            let _ = writeln!(prelude, "{line}");
        }
        let _ = writeln!(
            out,
            "# Builds the dbt overlay each dbt task runs in (docs/plan.md, dbt).\nDBT_OVERLAY = {}\n",
            py(&prelude)
        );
    }
    let ids = task_ids(plan.tasks.iter().map(|t| t.task.id.as_str()));
    let dataset_ids = task_ids(plan.setup.iter().map(|s| s.dataset.as_str()));
    let task_id = |id: &str| {
        ids.get(id)
            .or_else(|| dataset_ids.get(id))
            .cloned()
            .unwrap_or_else(|| task_id(id))
    };
    // A run task's id never takes the setup's or a validation's prefix:
    // the run of `shadow__table.mart.a@full` and the setup of `mart.a_full`
    // were both `shadow__table.mart.a_full`, which Airflow refuses.
    let run_id = |id: &str| {
        let made = task_id(id);
        if ["shadow__", "validate__", "wait__"]
            .iter()
            .any(|p| made.starts_with(p))
        {
            format!("task__{made}")
        } else {
            made
        }
    };
    out.push_str("ROLLBACK = [\n");
    for r in &plan.rollback {
        let _ = writeln!(out, "    {},", py(r));
    }
    out.push_str("]\n\n");
    // Per dataset, what the summary task reports: its tasks' partitions
    // and batches, the validation tasks it counts, its swap, and the query
    // reading its rows before and after.
    let rows_of = |dataset: &str| {
        plan.swaps
            .iter()
            .find(|s| s.dataset == dataset)
            .and_then(|s| s.summary.as_deref())
    };
    out.push_str("# What the summary task reports, per dataset: its partitions, its batches, the\n# validation tasks it counts (by prefix), and the query reading its restated rows\n# before the setup and after the swap (None: no fingerprint kept).\nSUMMARY = [\n");
    let mut seen = std::collections::BTreeSet::new();
    for t in &plan.tasks {
        let d = t.task.dataset.as_str();
        if !seen.insert(d) {
            continue;
        }
        let of: Vec<&DocTask> = plan.tasks.iter().filter(|x| x.task.dataset == d).collect();
        let partitions: u64 = of.iter().map(|x| x.task.partitions).sum();
        let ranges: Vec<String> = of.iter().map(|x| batch_span(&x.task)).collect();
        let validations: Vec<String> = of
            .iter()
            .map(|x| py(&format!("validate__{}_", run_id(&x.task.id))))
            .collect();
        let _ = writeln!(
            out,
            "    {{\"dataset\": {}, \"partitions\": {partitions}, \"ranges\": {}, \"batches\": {}, \"validations\": [{}], \"rows\": {}}},",
            py(d),
            py(&ranges.join(", ")),
            of.len(),
            validations.join(", "),
            rows_of(d).map_or("None".to_string(), py),
        );
    }
    let _ = writeln!(
        out,
        "]\n# The swap tasks, in order: rows after the swap are read once all succeeded.\nSWAPS = [{}]",
        (0..plan.swap_scripts.len())
            .map(|k| format!("\"swap_{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str("# A table to add one row per dataset to, after the summary is logged (created if\n# missing), e.g. \"ops.ripple_backfill_runs\"; None: the task log only.\nSUMMARY_TABLE = None\n");
    out.push_str(SUMMARY_TASK);
    let _ = writeln!(
        out,
        "with DAG(\n    dag_id=\"ripple_backfill\",\n    schedule=None,\n    start_date=datetime(2024, 1, 1),\n    catchup=False,\n    max_active_tasks={max_concurrency},\n    default_args={{\"pool\": POOL, \"retries\": 0}},\n) as dag:"
    );
    let var = |i: usize, kind: &str| format!("{kind}_{i}");
    let index = plan.positions();
    let sql_list = |statements: &[String]| {
        statements
            .iter()
            .map(|q| py(q))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (k, s) in plan.setup.iter().enumerate() {
        let _ = writeln!(
            out,
            "    setup_{k} = SQLExecuteQueryOperator(task_id={}, conn_id=CONN_ID, sql=[{}])",
            py(&format!("shadow__{}", task_id(&s.dataset))),
            sql_list(&s.sql)
        );
    }
    let setup_index: std::collections::HashMap<&str, usize> = plan
        .setup
        .iter()
        .enumerate()
        .map(|(k, s)| (s.dataset.as_str(), k))
        .collect();
    // "batch 2 of 5" per dataset, in the names Airflow's UI shows.
    let mut of_dataset: std::collections::HashMap<&str, (usize, usize)> =
        std::collections::HashMap::new();
    for t in &plan.tasks {
        of_dataset.entry(t.task.dataset.as_str()).or_default().1 += 1;
    }
    for (i, t) in plan.tasks.iter().enumerate() {
        let position = of_dataset.entry(t.task.dataset.as_str()).or_default();
        position.0 += 1;
        let display = py(&format!(
            "{} · batch {} of {} · {}",
            t.task.dataset,
            position.0,
            position.1,
            batch_span(&t.task)
        ));
        // Whatever the shell script would run through `run_sql` runs here
        // through the SQL operator: the DAG file defines no `run_sql` (an
        // Airflow task planned without `--executor` once failed so).
        let wants_sql = executor == Some(Executor::Sql)
            || crate::plan::executors::chosen(t, executor) == Some(Executor::Sql);
        if wants_sql && !t.commands.sql.is_empty() {
            let statements: Vec<String> = t.commands.sql.iter().map(|q| py(q)).collect();
            let _ = writeln!(
                out,
                "    {} = SQLExecuteQueryOperator(task_id={}, task_display_name={display}, conn_id=CONN_ID, sql=[{}])",
                var(i, "run"),
                py(&run_id(&t.task.id)),
                statements.join(", ")
            );
        } else {
            let lines = command_lines(t, executor);
            let command = lines
                .iter()
                .map(ShellLine::as_str)
                .collect::<Vec<_>>()
                .join(" && ");
            let operator = if t.commands.dbt.is_some() && lines.first() == t.commands.dbt.as_ref() {
                "DbtOperator"
            } else {
                "BashOperator"
            };
            let _ = writeln!(
                out,
                "    {} = {operator}(task_id={}, task_display_name={display}, bash_command={})",
                var(i, "run"),
                py(&run_id(&t.task.id)),
                py(&command)
            );
        }
        if guard.guards() {
            let _ = writeln!(
                out,
                "    {} = ProductionClearSensor(task_id={})\n    {} >> {}",
                var(i, "wait"),
                py(&format!("wait__{}", run_id(&t.task.id))),
                var(i, "wait"),
                var(i, "run")
            );
        }
        let checks: Vec<String> = t
            .validations
            .iter()
            .map(|v| {
                let detail = v.detail.as_deref().map_or("None".to_string(), py);
                format!("({}, {detail})", py(&v.sql))
            })
            .collect();
        let _ = writeln!(
            out,
            "    {} = [SQLCheckOperator(task_id={} + f\"_{{n}}\", conn_id=CONN_ID, sql=q, detail=d) for n, (q, d) in enumerate([{}])]",
            var(i, "validate"),
            py(&format!("validate__{}", run_id(&t.task.id))),
            checks.join(", ")
        );
        let _ = writeln!(out, "    {} >> {}", var(i, "run"), var(i, "validate"));
        // A task writes its own shadow and reads its upstreams': all exist first.
        let mut needs: Vec<usize> = std::iter::once(t.task.dataset.as_str())
            .chain(t.reads.keys().map(String::as_str))
            .filter_map(|d| setup_index.get(d).copied())
            .collect();
        needs.sort_unstable();
        needs.dedup();
        for k in needs {
            let _ = writeln!(out, "    setup_{k} >> {}", var(i, "run"));
        }
        // And after its upstreams' batches are validated: a batch read from a
        // shadow that failed its checks is work the swap will never use.
        for d in &t.task.depends_on {
            if let Some(&j) = index.get(d.as_str()) {
                let _ = writeln!(out, "    {} >> {}", var(j, "run"), var(i, "run"));
                let _ = writeln!(out, "    {} >> {}", var(j, "validate"), var(i, "run"));
            }
        }
        // Batches of one model run by dbt share its temporary relations:
        // one after the other.
        if let Some(prev) = i.checked_sub(1)
            && plan.tasks[prev].task.dataset == t.task.dataset
            && t.commands.dbt.is_some()
            && command_lines(t, executor).first() == t.commands.dbt.as_ref()
        {
            let _ = writeln!(out, "    {} >> {}", var(prev, "run"), var(i, "run"));
        }
    }
    // The swap phase: each script one operator (one transaction: the hook
    // commits once, after its last statement), after every validation.
    let strip = |script: &[String]| -> Vec<String> {
        script
            .iter()
            .filter(|s| !matches!(s.as_str(), "begin" | "begin transaction" | "commit"))
            .cloned()
            .collect()
    };
    for (k, script) in plan.swap_scripts.iter().enumerate() {
        let _ = writeln!(
            out,
            "    swap_{k} = SQLExecuteQueryOperator(task_id=\"swap_{k}\", conn_id=CONN_ID, sql=[{}])",
            sql_list(&strip(script))
        );
        if k == 0 {
            // The run too: a task whose checks are all off has no
            // validation to wait for, and `[] >> swap_0` is no edge (the
            // swap once ran before a dimension's task and emptied it).
            let before = if guard.guards() {
                out.push_str(
                    "    wait_swap = ProductionClearSensor(task_id=\"wait_swap\")\n    wait_swap >> swap_0\n",
                );
                "wait_swap"
            } else {
                "swap_0"
            };
            for i in 0..plan.tasks.len() {
                let _ = writeln!(out, "    {} >> {before}", var(i, "run"));
                let _ = writeln!(out, "    {} >> {before}", var(i, "validate"));
            }
        } else {
            let _ = writeln!(out, "    swap_{} >> swap_{k}", k - 1);
        }
    }
    if !plan.cleanup.is_empty() && !plan.swap_scripts.is_empty() {
        let _ = writeln!(
            out,
            "    cleanup = SQLExecuteQueryOperator(task_id=\"cleanup\", conn_id=CONN_ID, sql=[{}])",
            sql_list(&plan.cleanup)
        );
        let _ = writeln!(out, "    swap_{} >> cleanup", plan.swap_scripts.len() - 1);
    }
    // The summary ends the run whatever happened; the cleanup waits for it
    // (it reads the setup's fingerprints), and for the swap.
    out.push_str("    summary = RippleSummary(task_id=\"summary\", conn_id=CONN_ID)\n");
    for i in 0..plan.tasks.len() {
        let _ = writeln!(out, "    {} >> summary", var(i, "run"));
        let _ = writeln!(out, "    {} >> summary", var(i, "validate"));
    }
    for k in 0..plan.swap_scripts.len() {
        let _ = writeln!(out, "    swap_{k} >> summary");
    }
    if !plan.cleanup.is_empty() && !plan.swap_scripts.is_empty() {
        out.push_str("    summary >> cleanup\n");
    }
    // Triggered by hand, never by the backfill: dropping the shadows while
    // it runs would fail its tasks (never production, which the swap alone
    // changes, in one transaction).
    if !plan.rollback.is_empty() {
        out.push_str(
            "\n\n# Trigger by hand to drop the shadows, before the swap (after it, the DAG's\n# cleanup task does): production is never touched. Idempotent.\nwith DAG(\n    dag_id=\"ripple_backfill_rollback\",\n    schedule=None,\n    start_date=datetime(2024, 1, 1),\n    catchup=False,\n) as rollback_dag:\n    SQLExecuteQueryOperator(task_id=\"drop_shadows\", conn_id=CONN_ID, sql=ROLLBACK)\n",
        );
    }
    out
}

/// What the Airflow DAG checks live before each batch and before the swap:
/// the allowed windows and the production DAGs that must not be running.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveGuard {
    /// Allowed windows, `[from, to)` minutes of the day in UTC (`to` below
    /// `from`: past midnight); empty: any time.
    pub windows: Vec<(i64, i64)>,
    /// Production DAG ids: the project's DAGs and `backfill.production`'s.
    pub production_dags: Vec<String>,
}

impl LiveGuard {
    /// The windows and production DAGs of `g`'s project.
    pub fn of(g: &crate::graph::LineageGraph) -> LiveGuard {
        let windows = g
            .config
            .backfill
            .windows
            .iter()
            .filter_map(|w| crate::time::parse_window(w))
            .collect();
        let production_dags: std::collections::BTreeSet<String> = g
            .dags
            .iter()
            .map(|d| d.dag_id.clone())
            .chain(g.config.backfill.production.iter().map(|p| p.dag.clone()))
            .collect();
        LiveGuard {
            windows,
            production_dags: production_dags.into_iter().collect(),
        }
    }

    fn guards(&self) -> bool {
        !self.windows.is_empty() || !self.production_dags.is_empty()
    }
}

/// The task that ends the DAG: a summary per dataset in the task log (and
/// SUMMARY_TABLE), failing when a validation or a swap did not succeed, so
/// that the run's state is the backfill's.
const SUMMARY_TASK: &str = r#"

def _task_states(context):
    ti, run = context["ti"], context["dag_run"]
    if hasattr(ti, "get_task_states"):  # Airflow 3: the task SDK asks the API server
        found = ti.get_task_states(dag_id=run.dag_id, run_ids=[run.run_id])
        states = found.get(run.run_id, found) if isinstance(found, dict) else {}
        return {str(k): str(v) for k, v in states.items()}
    return {t.task_id: str(t.state) for t in run.get_task_instances()}  # Airflow 2.10


class RippleSummary(SQLExecuteQueryOperator):
    """Logs, per dataset, the partitions restated, the validations passed and
    failed, and the restated rows before and after the swap; then fails if the
    backfill did not finish, so that the DAG run's state says so."""

    def __init__(self, **kwargs):
        super().__init__(sql="select 1", trigger_rule="all_done", **kwargs)

    def execute(self, context):
        states = _task_states(context)
        state = lambda t: states.get(t, "none").rsplit(".", 1)[-1].lower()
        swapped = bool(SWAPS) and all(state(s) == "success" for s in SWAPS)
        hook = self.get_db_hook()
        rows, bad = [], []
        for d in SUMMARY:
            checks = [t for t in states if any(t.startswith(p) for p in d["validations"])]
            passed = sum(state(t) == "success" for t in checks)
            failed = sum(state(t) == "failed" for t in checks)
            before = after = changed = None
            if swapped and d["rows"]:
                before, after, changed = hook.get_first(d["rows"])
            rows.append((d["dataset"], d["partitions"], d["batches"], passed, failed, before, after, changed, swapped))
            if failed or not swapped:
                bad.append(d["dataset"])
            self.log.info(
                "ripple summary: %s: %s partition(s) (%s) in %s batch(es); validations %s passed, %s failed, %s not run; %s",
                d["dataset"], d["partitions"], d["ranges"], d["batches"], passed, failed, len(checks) - passed - failed,
                ("rows %s before, %s after, %s partition(s) changed" % (before, after, changed)) if before is not None
                else ("swapped" if swapped else "not swapped: production unchanged"),
            )
        if SUMMARY_TABLE:
            hook.run(
                ["create table if not exists %s (run_id varchar, dataset varchar, partitions bigint, batches bigint, validations_passed bigint, validations_failed bigint, rows_before bigint, rows_after bigint, partitions_changed bigint, swapped boolean)" % SUMMARY_TABLE]
                + ["insert into %s values (%s)" % (SUMMARY_TABLE, ", ".join(["'%s'" % str(context["dag_run"].run_id).replace("'", "''"), "'%s'" % r[0].replace("'", "''")] + ["null" if v is None else str(v).lower() if isinstance(v, bool) else str(int(v)) for v in r[1:]])) for r in rows]
            )
        if bad:
            done = [s for s in SWAPS if state(s) == "success"]
            failed_swaps = [s for s in SWAPS if state(s) == "failed"]
            if done:
                where = "swapped by " + ", ".join(done) + "; not by " + ", ".join(s for s in SWAPS if s not in done)
            elif failed_swaps:
                where = "production unchanged: the swap failed and rolled back whole"
            else:
                where = "production unchanged: the swap did not run"
            raise RuntimeError("ripple: the backfill did not finish for " + ", ".join(bad) + " (see the lines above); " + where)
"#;

/// The sensor the DAG waits in before each batch and before the swap.
const PRODUCTION_CLEAR: &str = r#"
# Before each batch and before the swap: inside an allowed window, and no run
# of a production DAG queued or running (Airflow's own metadata); otherwise the
# task waits, rescheduled (its pool slot freed between checks), up to
# WAIT_TIMEOUT_SECONDS, then fails with production untouched.
POKE_SECONDS = 60
WAIT_TIMEOUT_SECONDS = 24 * 3600


def _active_runs(context, dag_id):
    ti = context["ti"]
    if hasattr(ti, "get_dr_count"):  # Airflow 3: the task SDK asks the API server
        return ti.get_dr_count(dag_id=dag_id, states=["queued", "running"])
    from airflow.models.dagrun import DagRun  # Airflow 2.10: the metadata database
    from airflow.utils.state import DagRunState

    return sum(len(DagRun.find(dag_id=dag_id, state=s)) for s in (DagRunState.QUEUED, DagRunState.RUNNING))


class ProductionClearSensor(_Sensor):
    template_fields = ()

    def __init__(self, **kwargs):
        super().__init__(mode="reschedule", poke_interval=POKE_SECONDS, timeout=WAIT_TIMEOUT_SECONDS, **kwargs)

    def poke(self, context):
        from datetime import datetime, timezone

        now = datetime.now(timezone.utc)
        minute = now.hour * 60 + now.minute
        inside = any(a <= minute < b if a < b else (minute >= a or minute < b) for a, b in WINDOWS)
        if WINDOWS and not inside:
            self.log.info("ripple: %02d:%02d UTC is outside the allowed windows; waiting", now.hour, now.minute)
            return False
        busy = [d for d in PRODUCTION_DAGS if _active_runs(context, d)]
        if busy:
            self.log.info("ripple: production DAG(s) %s running; waiting", ", ".join(busy))
            return False
        return True

"#;

/// The partitions a task restates, as people read them.
fn batch_span(t: &crate::plan::PlanTask) -> String {
    match (&t.from, &t.to) {
        (Some(a), Some(b)) if a == b => a.clone(),
        (Some(a), Some(b)) => format!("{a}..{b}"),
        _ => "all".to_string(),
    }
}

/// A plan id as an Airflow task id (letters, digits, `-`, `_`, `.`).
fn task_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Airflow task ids for `ids` (plan task ids or datasets): [`task_id`],
/// and where two different ids would get the same one (`m|pipe` and
/// `m_pipe`), each of those with a hash of what it was: Airflow refuses a
/// DAG with one task id twice.
fn task_ids<'a>(
    ids: impl IntoIterator<Item = &'a str>,
) -> std::collections::HashMap<&'a str, String> {
    let mut by_id: std::collections::HashMap<String, std::collections::BTreeSet<&'a str>> =
        std::collections::HashMap::new();
    for id in ids {
        by_id.entry(task_id(id)).or_default().insert(id);
    }
    let mut out = std::collections::HashMap::new();
    for (made, from) in by_id {
        let clash = from.len() > 1;
        for id in from {
            let unique = if clash {
                // FNV-1a: stable across runs and builds.
                let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                });
                format!("{made}__{:08x}", hash as u32)
            } else {
                made.clone()
            };
            out.insert(id, unique);
        }
    }
    out
}

/// The plan as a table a person reads at a glance.
pub fn text(plan: &PlanDocument) -> String {
    // Names on one line each: a line break in a name cannot forge a row.
    let l = |s: &str| crate::text::one_line(s).into_owned();
    let ls = |v: &[String]| v.iter().map(|s| l(s)).collect::<Vec<_>>().join(", ");
    let mut out = format!(
        "backfill plan for {}: {} tasks, {} swaps; assumed correct: {}\n",
        ls(&plan.changed),
        plan.tasks.len(),
        plan.swaps.len(),
        if plan.assumed.is_empty() {
            "-".to_string()
        } else {
            ls(&plan.assumed)
        }
    );
    if let Some(s) = &plan.schedule {
        let _ = writeln!(
            out,
            "scheduled {} → {} ({} min, {} window(s), max_concurrency {}, {} production run(s) avoided)",
            s.start, s.end, s.makespan_minutes, s.windows_used, s.max_concurrency, s.blackouts
        );
    }
    out.push('\n');
    for t in &plan.tasks {
        let when = match (&t.task.start, &t.task.end) {
            (Some(s), Some(e)) => format!("  {s} → {e}"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{}  ({} partition{}) writes {}{when}",
            l(&t.task.id),
            t.task.partitions,
            crate::text::plural(t.task.partitions),
            l(&t.writes)
        );
        if !t.task.depends_on.is_empty() {
            let _ = writeln!(out, "    after {}", ls(&t.task.depends_on));
        }
    }
    for s in &plan.swaps {
        let _ = writeln!(
            out,
            "swap {} after {} task(s)",
            l(&s.dataset),
            s.depends_on.len()
        );
    }
    for w in &plan.warnings {
        let _ = writeln!(out, "warning: {}", l(w));
    }
    out
}

/// Output formats of `ripple plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A summary for people.
    Text,
    /// The plan document other executors read (schema: docs/plan.schema.json).
    Json,
    /// Markdown for review.
    Markdown,
    /// Graphviz DOT: datasets as clusters, batches as nodes.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
    /// A `set -euo pipefail` script that stops at the first failed validation.
    Shell,
    /// Every task's command, in order.
    Commands,
    /// One Airflow DAG file running the tasks, validations and swaps.
    AirflowDag,
    /// The datasets to restate as a standalone SVG picture.
    Svg,
    /// One self-contained HTML report: graph, schedule (Gantt), partitions, swaps.
    Html,
}

impl Format {
    /// Whether the output runs tasks (so its executor must write shadows).
    pub fn runs(self) -> bool {
        matches!(self, Format::Shell | Format::Commands | Format::AirflowDag)
    }
}

/// Why a plan cannot be rendered as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// A runnable format with an executor that writes production.
    #[error(
        "--executor {0} runs the production Airflow task, which writes production tables, not the shadows this plan validates and swaps in; use --executor sql (each Airflow SQL task's SQL, rendered per date, into the shadow) or --format json to see the commands"
    )]
    WritesProduction(&'static str),
}

/// `plan` in `format`. `executor` picks whose commands the runnable formats
/// use; `max_concurrency` sizes the Airflow DAG's pool. A runnable format
/// with an executor that does not write shadows is refused.
pub fn render(
    plan: &PlanDocument,
    planned: &Planned<'_>,
    format: Format,
    executor: Option<Executor>,
    max_concurrency: u32,
) -> Result<String, RenderError> {
    if format.runs()
        && let Some(e) = executor.filter(|e| !e.writes_shadows())
    {
        return Err(RenderError::WritesProduction(match e {
            Executor::Airflow2 => "airflow2",
            _ => "airflow3",
        }));
    }
    Ok(render_unchecked(
        plan,
        planned,
        format,
        executor,
        max_concurrency,
    ))
}

fn render_unchecked(
    plan: &PlanDocument,
    planned: &Planned<'_>,
    format: Format,
    executor: Option<Executor>,
    max_concurrency: u32,
) -> String {
    match format {
        Format::Text => crate::text::inert(&text(plan)).into_owned(),
        Format::Json => json(plan),
        Format::Markdown => crate::text::inert(&markdown(plan)).into_owned(),
        Format::Dot => dot(plan),
        Format::Mermaid => mermaid(plan),
        Format::Shell => shell(plan, executor),
        Format::Commands => commands(plan, executor),
        Format::AirflowDag => airflow_dag(
            plan,
            &LiveGuard::of(planned.graph),
            executor,
            max_concurrency,
        ),
        Format::Svg => svg(plan, planned),
        Format::Html => html(plan, planned),
    }
}

/// What a picture of a plan needs beside the plan: the graph and the
/// impact the plan restates (`plan::for_change_with_impact`).
pub struct Planned<'a> {
    /// The lineage graph.
    pub graph: &'a crate::graph::LineageGraph,
    /// Its time model.
    pub model: &'a crate::impact::TimeModel,
    /// The impact planned.
    pub impact: &'a crate::impact::Impact,
}

/// The plan's datasets as a standalone SVG: the impact's graph, each box
/// also counting its tasks.
pub fn svg(plan: &PlanDocument, planned: &Planned<'_>) -> String {
    super::svg::render(&plan_diagram(plan, planned), true)
}

/// The plan's tasks grouped by the dataset they write, in plan order: one
/// pass, so pictures of plans with many tasks and datasets stay linear.
fn tasks_by_dataset(plan: &PlanDocument) -> std::collections::HashMap<&str, Vec<&DocTask>> {
    let mut out: std::collections::HashMap<&str, Vec<&DocTask>> = std::collections::HashMap::new();
    for t in &plan.tasks {
        out.entry(t.task.dataset.as_str()).or_default().push(t);
    }
    out
}

fn plan_diagram(plan: &PlanDocument, planned: &Planned<'_>) -> super::svg::Diagram {
    let mut d = super::impact::diagram(planned.graph, planned.model, planned.impact);
    let by_dataset = tasks_by_dataset(plan);
    for n in &mut d.nodes {
        let tasks = by_dataset.get(n.id.as_str()).map_or(0, Vec::len);
        if tasks > 0 {
            n.detail = Some(format!(
                "{} · {tasks} task{}",
                n.detail.take().unwrap_or_default(),
                crate::text::plural(tasks)
            ));
        } else if n.state != "context" && plan.assumed.contains(&n.id) {
            n.detail = Some(format!(
                "{} · assumed correct",
                n.detail.take().unwrap_or_default()
            ));
        }
    }
    d
}

/// The plan as one self-contained HTML page: summary, graph, the schedule
/// as a Gantt chart, partition timelines, and swaps and validations per
/// dataset.
pub fn html(plan: &PlanDocument, planned: &Planned<'_>) -> String {
    use super::escape::xml;
    use super::html::{Bar, Clock, gantt, graph_section, page, section};
    let impact = planned.impact;
    let state: std::collections::HashMap<&str, (&str, &'static str)> = impact
        .datasets
        .iter()
        .map(|d| {
            (
                d.id.as_str(),
                (d.name.as_str(), super::impact::state_of(impact, d)),
            )
        })
        .collect();
    let name = |id: &str| state.get(id).map_or(id.to_string(), |s| s.0.to_string());

    let datasets: std::collections::BTreeSet<&str> =
        plan.tasks.iter().map(|t| t.task.dataset.as_str()).collect();
    let mut summary = format!(
        "<p>{} task{} on {} dataset{}, {} swap{}.",
        plan.tasks.len(),
        crate::text::plural(plan.tasks.len()),
        datasets.len(),
        crate::text::plural(datasets.len()),
        plan.swaps.len(),
        crate::text::plural(plan.swaps.len())
    );
    if !plan.assumed.is_empty() {
        let names: Vec<String> = plan.assumed.iter().map(|a| name(a)).collect();
        let _ = write!(
            summary,
            " Assumed correct (no job writes them): <code>{}</code>.",
            xml(&names.join(", "))
        );
    }
    summary.push_str("</p>");
    match &plan.schedule {
        Some(s) => {
            let _ = write!(
                summary,
                "<p>Scheduled from {} to {} ({} min) in {} allowed window{}, at most {} tasks at once, clear of {} production run{}.</p>",
                xml(&s.start),
                xml(&s.end),
                s.makespan_minutes,
                s.windows_used,
                crate::text::plural(s.windows_used),
                s.max_concurrency,
                s.blackouts,
                crate::text::plural(s.blackouts)
            );
        }
        None => summary.push_str(
            "<p class=\"rp-muted\">Not scheduled: tasks are shown in wavefront order. Give <code>--start</code> to place them in the allowed windows, clear of production runs.</p>",
        ),
    }
    if !plan.warnings.is_empty() {
        summary.push_str("<ul>");
        for w in &plan.warnings {
            let _ = write!(summary, "<li>{}</li>", xml(w));
        }
        summary.push_str("</ul>");
    }

    // One Gantt row per dataset, in plan order.
    let mut rows: Vec<String> = Vec::new();
    let mut row_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for t in &plan.tasks {
        row_of.entry(t.task.dataset.as_str()).or_insert_with(|| {
            rows.push(name(&t.task.dataset));
            rows.len() - 1
        });
    }
    let waves = waves(plan);
    let tips: Vec<String> = plan
        .tasks
        .iter()
        .map(|t| {
            let when = match (&t.task.start, &t.task.end) {
                (Some(s), Some(e)) => format!("\n{s} → {e}"),
                _ => String::new(),
            };
            format!(
                "{}\n{} partition{}, writes {}{when}",
                t.task.id,
                t.task.partitions,
                crate::text::plural(t.task.partitions as usize),
                t.writes
            )
        })
        .collect();
    let placed = plan.schedule.as_ref().map(|s| &s.placed);
    let bars: Vec<Bar<'_>> = plan
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| Bar {
            row: row_of[t.task.dataset.as_str()],
            span: match placed.and_then(|p| p.get(i)) {
                Some(&span) => span,
                None => (waves[i], waves[i] + 1),
            },
            state: state
                .get(t.task.dataset.as_str())
                .map_or("partitions", |s| s.1),
            tooltip: &tips[i],
            task: &t.task.id,
        })
        .collect();
    let clock = match &plan.schedule {
        Some(s) => Clock::Minutes {
            blackouts: &s.blackout_spans,
            windows: &s.windows,
            cap: s.max_concurrency,
        },
        None => Clock::Waves,
    };
    let legend = "<p class=\"rp-muted\">Bars are tasks, coloured as their dataset in the graph; red bands are production runs, hatched grey is outside the allowed windows; the lower chart counts tasks running at once against the cap.</p>";

    // Swaps and validations, per dataset.
    let mut per = String::from(
        "<table><tr><th>dataset</th><th>shadow</th><th>tasks</th><th>validations before the swap</th><th>swap</th></tr>",
    );
    let by_dataset = tasks_by_dataset(plan);
    let shadows: std::collections::HashMap<&str, &str> = plan
        .setup
        .iter()
        .map(|s| (s.dataset.as_str(), s.shadow.as_str()))
        .collect();
    for sw in &plan.swaps {
        let tasks: &[&DocTask] = by_dataset
            .get(sw.dataset.as_str())
            .map_or(&[], Vec::as_slice);
        let shadow = shadows
            .get(sw.dataset.as_str())
            .map(|s| s.to_string())
            .or_else(|| tasks.first().map(|t| t.writes.clone()))
            .unwrap_or_default();
        let mut checks: Vec<&str> = tasks
            .iter()
            .flat_map(|t| t.validations.iter().map(|v| v.check.as_str()))
            .collect();
        checks.sort_unstable();
        checks.dedup();
        let _ = write!(
            per,
            "<tr data-id=\"{}\"><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td><details><summary>{} statement{}</summary><pre class=\"mono\">{}</pre></details></td></tr>",
            xml(&sw.dataset),
            xml(&name(&sw.dataset)),
            xml(&shadow),
            tasks.len(),
            xml(&checks.join(", ")),
            sw.sql.len(),
            crate::text::plural(sw.sql.len()),
            xml(&sw.sql.join(";\n"))
        );
    }
    per.push_str("</table>");
    let mut more = String::new();
    for (title, sql) in [
        ("Swap scripts, in order", plan.swap_scripts.concat()),
        ("Clean-up after a good swap", plan.cleanup.clone()),
        ("Rollback before the swap", plan.rollback.clone()),
    ] {
        let _ = write!(
            more,
            "<details><summary>{} ({} statement{})</summary><pre class=\"mono\">{}</pre></details>",
            xml(title),
            sql.len(),
            crate::text::plural(sql.len()),
            xml(&sql.join(";\n"))
        );
    }
    let sections = vec![
        section("rp-summary", "Summary", &summary),
        graph_section(
            "Datasets to restate (click one for its reasons)",
            &super::svg::render(&plan_diagram(plan, planned), false),
        ),
        section(
            "rp-schedule",
            if plan.schedule.is_some() {
                "Schedule"
            } else {
                "Order"
            },
            &format!(
                "{legend}<div class=\"rp-scroll\">{}</div>",
                gantt(&rows, &bars, &clock)
            ),
        ),
        section(
            "rp-partitions",
            "Partitions restated",
            &super::impact::timelines(impact),
        ),
        section(
            "rp-swaps",
            "Shadows, validations and swaps",
            &format!("{per}{more}"),
        ),
    ];
    page(
        &format!(
            "Backfill plan for {}",
            super::impact::changed_names(impact).join(", ")
        ),
        &super::impact::subtitle(impact),
        &sections,
    )
}

/// Each task's wave: one more than the latest wave it depends on.
fn waves(plan: &PlanDocument) -> Vec<i64> {
    let index = plan.positions();
    let mut wave = vec![0i64; plan.tasks.len()];
    // Tasks are in order: every dependency comes earlier.
    for (i, t) in plan.tasks.iter().enumerate() {
        wave[i] = t
            .task
            .depends_on
            .iter()
            .filter_map(|d| index.get(d.as_str()))
            .filter(|&&j| j < i)
            .map(|&j| wave[j] + 1)
            .max()
            .unwrap_or(0);
    }
    wave
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spliced JSON is the document written whole, byte for byte, for
    /// a plan with several tasks and for one with none.
    #[test]
    fn json_written_in_parts_is_the_whole_document() {
        let g = crate::graph::LineageGraph::of_fixture("shop");
        let key = |s: &str| crate::time::TimeKey::parse(s).unwrap();
        let request = crate::impact::ImpactRequest {
            changed: vec!["landing.orders".to_string()],
            from: key("2026-01-10"),
            to: key("2026-01-11"),
            as_of: key("2026-02-01").start,
            columns: Vec::new(),
        };
        let mut doc =
            crate::plan::for_change(&g, &request, &crate::plan::PlanOptions::default()).unwrap();
        assert!(doc.tasks.len() > 2, "{}", doc.tasks.len());
        assert_eq!(json(&doc), json_whole(&doc));
        for cut in crate::emit::pieces::cuts_to_test(doc.tasks.len()) {
            let mut out = Vec::new();
            write_json_by(&doc, cut, &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), json_whole(&doc), "{cut:?}");
        }
        doc.tasks.clear();
        assert_eq!(json(&doc), json_whole(&doc));
    }
}
