//! dbt: `dbt run` of the model, built as its shadow through ripple's
//! backfill contract.
//!
//! The contract (docs/plan.md, *dbt*): the project's `generate_alias_name`
//! macro gives every model named in the `ripple_shadows` variable the alias
//! `<alias>__backfill`. `dbt run --vars '{"ripple_shadows": [...]}'` with
//! every model the plan restates then builds the selected model as its
//! shadow, and each `ref()` to a restated model reads that model's shadow,
//! while refs to the rest read production. Without that macro, or with a
//! shadow pattern other than the default, `dbt run` would write production:
//! no dbt command is written and the plan says why.

use super::{Commands, ShellLine, TaskContext};
use crate::time::{Hour, datetime_of};

/// Fills the dbt command of a task.
pub(super) fn commands(c: &mut Commands, cx: &TaskContext) {
    if !cx.dbt_contract {
        return;
    }
    let d = cx.dataset;
    let microbatch = d
        .config
        .get("incremental_strategy")
        .and_then(|v| v.as_str())
        == Some("microbatch");
    let Ok(select) = selector(d) else { return };
    let vars = serde_json::json!({ "ripple_shadows": cx.dbt_models }).to_string();
    let command = ShellLine::new("dbt")
        .arg("run")
        .arg("--select")
        .arg(&select)
        .arg("--vars")
        .arg(&vars);
    c.dbt = Some(if cx.task.full || !microbatch {
        // Anything but a microbatch model recomputes all it holds: built
        // from scratch into its shadow, whatever its incremental filter
        // (`> max(x) from {{ this }}` would find the shadow's copy of
        // production up to date and restate nothing).
        command.arg("--full-refresh")
    } else {
        let (start, end) = cx.task.span;
        command
            .arg("--event-time-start")
            .arg(&instant(start))
            .arg("--event-time-end")
            .arg(&instant(end))
    });
}

/// The `--select` value that addresses exactly the model `d`: its file
/// (`path:models/orders.sql`). A bare name is dbt selector syntax: in
/// `prod_critical+` the `+` selects production's model and its children,
/// and a name that is also a package's name selects the whole package.
/// A file path is read as one path unless it holds what dbt splits or
/// globs on (spaces, `,`, `*`, `?`, `[`, `]`); such a model, or one of a
/// package (whose path dbt does not read from the project's root), gets
/// no command, and the reason says why.
pub fn selector(d: &crate::project::Dataset) -> Result<String, String> {
    let Some(file) = d.file.as_deref().filter(|_| d.package.is_none()) else {
        return Err(format!(
            "`{}` comes from a dbt package: ripple writes no `dbt run` for it, since no selector names it alone (run it yourself as `{}`)",
            d.name,
            d.package
                .as_deref()
                .map_or(d.name.clone(), |p| format!("fqn:{p}.*.{}", d.name))
        ));
    };
    let unsafe_char = |c: char| c.is_whitespace() || c.is_control() || ",*?[]\\".contains(c);
    if file.is_empty()
        || file.contains(unsafe_char)
        || !file.ends_with(".sql") && !file.ends_with(".py")
    {
        return Err(format!(
            "`{}`: its file `{}` holds what dbt's selectors split or match on (a space, `,`, `*`, `?`, `[`, `]`): ripple writes no `dbt run` that could select other models; rename the file, or run the model yourself",
            d.name, file
        ));
    }
    Ok(format!("path:{file}"))
}

/// An hour as dbt's event-time flags take it: a date at midnight, else a
/// timestamp.
fn instant(h: Hour) -> String {
    let (date, hour) = datetime_of(h);
    if hour == 0 {
        date.to_string()
    } else {
        format!("{date}T{hour:02}:00:00")
    }
}

/// Whether dbt builds `materialized` as a table that holds rows (views and
/// ephemeral models are computed when read: nothing to copy or swap).
pub fn holds_rows(materialized: Option<&str>) -> bool {
    !matches!(materialized, None | Some("view") | Some("ephemeral"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_times_are_dates_or_timestamps() {
        let day = crate::time::TimeKey::parse("2026-02-01").unwrap().start;
        assert_eq!(instant(day), "2026-02-01");
        assert_eq!(instant(day + 5), "2026-02-01T05:00:00");
    }
}
