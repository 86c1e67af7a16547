//! The plan as JSON (the contract other executors read, with a JSON Schema
//! generated from these types) and Markdown.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Serialize;

use super::SCHEMA_VERSION;
use crate::plan::PlanDocument;

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
    let mut out = serde_json::to_string_pretty(&PlanJson {
        schema_version: SCHEMA_VERSION,
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

/// The plan as Markdown for review.
pub fn markdown(plan: &PlanDocument) -> String {
    let esc = |s: &str| {
        s.replace('|', "\\|")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('\n', " ")
    };
    let mut out = format!(
        "### Backfill plan for `{}`\n\n{} task{}, {} swap{}; assumed correct: {}.\n\n| task | partitions | after |\n|---|---|---|\n",
        esc(&plan.changed.join("`, `")),
        plan.tasks.len(),
        if plan.tasks.len() == 1 { "" } else { "s" },
        plan.swaps.len(),
        if plan.swaps.len() == 1 { "" } else { "s" },
        if plan.assumed.is_empty() {
            "nothing".to_string()
        } else {
            format!("`{}`", esc(&plan.assumed.join("`, `")))
        }
    );
    for t in &plan.tasks {
        let after = if t.task.depends_on.is_empty() {
            "-".to_string()
        } else {
            esc(&t.task.depends_on.join(", "))
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            esc(&t.task.id),
            t.task.partitions,
            after
        );
    }
    out.push_str("\n<details><summary>Swaps (after every task and validation of their dataset)</summary>\n\n");
    for s in &plan.swaps {
        let _ = writeln!(
            out,
            "- `{}`:\n\n```sql\n{};\n```\n",
            esc(&s.dataset),
            s.sql.join(";\n")
        );
    }
    out.push_str(
        "</details>\n\nRollback (drops the shadows; production is never touched):\n\n```sql\n",
    );
    for r in &plan.rollback {
        let _ = writeln!(out, "{r};");
    }
    out.push_str("```\n");
    for w in &plan.warnings {
        let _ = writeln!(out, "\n> warning: {}", esc(w));
    }
    out
}
