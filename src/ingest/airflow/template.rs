//! Airflow's template variables, rendered to representative values so the
//! SQL a task carries can be read: `ds`, `ds_nodash`, `ts`,
//! `data_interval_start` / `_end`, `logical_date`, `params.*`,
//! `macros.ds_add(...)`. The values are fixed (a run on 2026-01-01), so the
//! result never depends on when ripple runs. Anything else renders as a
//! placeholder identifier; a template that fails keeps its raw text.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use minijinja::value::Object;
use minijinja::{Environment, Error, ErrorKind, State, UndefinedBehavior, Value, context};

use crate::ingest::dbt::jinja::guard;
use crate::project::UNKNOWN_PLACEHOLDER;

/// The representative run: its logical date.
const DS: &str = "2026-01-01";

/// Jinja fuel one template may use.
const RENDER_FUEL: u64 = 1_000_000;

/// Jinja fuel all the templates of one DAG file share: a loop making 1,000
/// tasks whose templates each ran out of their own fuel once took 245 s
/// (a 480-byte file).
pub(super) const FILE_FUEL: u64 = 10_000_000;

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Chainable);
        env.set_fuel(Some(RENDER_FUEL));
        env.add_global("ds", DS);
        env.add_global("ds_nodash", DS.replace('-', ""));
        env.add_global("ts", format!("{DS}T00:00:00+00:00"));
        env.add_global("ts_nodash", format!("{}T000000", DS.replace('-', "")));
        for name in ["data_interval_start", "logical_date", "execution_date"] {
            env.add_global(name, format!("{DS}T00:00:00+00:00"));
        }
        env.add_global("data_interval_end", "2026-01-02T00:00:00+00:00");
        env.add_global("prev_ds", "2025-12-31");
        env.add_global("next_ds", "2026-01-02");
        env.add_global("macros", Value::from_object(Macros));
        env.add_global("var", Value::from_object(Unknown));
        env.add_global("conn", Value::from_object(Unknown));
        env.add_global("ti", Value::from_object(Unknown));
        env.set_unknown_method_callback(|_, _, _, _| {
            Ok(Value::from_safe_string(UNKNOWN_PLACEHOLDER.to_string()))
        });
        // What a template prints, and what `~`, `in` and the filters turn
        // into text, is measured before it is built (jinja/guard.rs).
        env.set_formatter(|out, state, value| {
            guard::check_shown(state, "printing a value", std::slice::from_ref(value))?;
            minijinja::escape_formatter(out, state, value)
        });
        guard::install(&mut env, |_| false, &|_| false);
        env
    })
}

/// `sql` rendered with `ctx`, its operators guarded, on a stack sized for
/// its longest chain and, when it has statements (loops build values), for
/// the deepest value its fuel allows: `{{ ds }}` maps no stack per run.
fn render(sql: &str, ctx: Value) -> Result<String, Error> {
    render_metered(sql, ctx, &Cell::new(RENDER_FUEL))
}

/// [`render`] paying from `fuel`, what the file has left: the render gets
/// at most that much, and what it used (all it was given, when it failed)
/// is taken off.
fn render_metered(sql: &str, ctx: Value, fuel: &Cell<u64>) -> Result<String, Error> {
    let given = fuel.get().min(RENDER_FUEL);
    if given == 0 {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "not rendered: the file's templates used all the fuel they share ({FILE_FUEL} steps); is a loop repeating a task?"
            ),
        ));
    }
    let sql = guard::rewrite_operators(sql);
    let loops = sql.contains("{%");
    let lowered;
    let env = if given < RENDER_FUEL {
        let mut e = env().clone();
        e.set_fuel(Some(given));
        lowered = e;
        &lowered
    } else {
        env()
    };
    let result = guard::on_stack(&sql, loops, || {
        let mut captured = env.template_from_str(&sql)?.render_captured(ctx)?;
        let used = captured.with_state_mut(|st| st.fuel_levels().map_or(0, |(used, _)| used));
        Ok((captured.into_output(), used))
    })
    .unwrap_or_else(|no_stack| {
        Err(Error::new(
            ErrorKind::InvalidOperation,
            no_stack.to_string(),
        ))
    });
    let used = result.as_ref().map_or(given, |(_, used)| *used);
    fuel.set(fuel.get().saturating_sub(used));
    result.map(|(out, _)| out)
}

/// `sql` rendered for the run whose data interval is `[start, end)` (UTC
/// instants as `YYYY-MM-DDTHH:MM:SS`), as Airflow would: `ds`, `ts`,
/// `data_interval_start`, ... of that run. An error when the template fails
/// or needs a value only a running Airflow has (`var`, `conn`, `ti`, an
/// unknown macro): such SQL cannot be run as is.
pub fn render_for_run(
    sql: &str,
    params: &BTreeMap<String, String>,
    start: &str,
    end: &str,
) -> Result<String, String> {
    let ds = &start[..10];
    let next = &end[..10];
    let rendered = render(
        sql,
        context! {
            params => params,
            ds => ds,
            ds_nodash => ds.replace('-', ""),
            ts => format!("{start}+00:00"),
            ts_nodash => start.replace(['-', ':'], ""),
            data_interval_start => format!("{start}+00:00"),
            logical_date => format!("{start}+00:00"),
            execution_date => format!("{start}+00:00"),
            data_interval_end => format!("{end}+00:00"),
            next_ds => next,
        },
    )
    .map_err(|e| format!("its template does not render: {e}"))?;
    if rendered.contains(UNKNOWN_PLACEHOLDER) {
        return Err(
            "its template uses a value only a running Airflow has (a Variable, a connection, XCom, a macro ripple does not know)".to_string(),
        );
    }
    Ok(rendered)
}

/// `sql` with its templates rendered; `params` are the task's (or DAG's).
/// A template that does not render is kept as written, with the reason
/// (its tables may still be read from it, and the caller says why some
/// may be missing).
pub(super) fn render_sql(
    sql: &str,
    params: &BTreeMap<String, String>,
    fuel: &Cell<u64>,
) -> (String, Option<String>) {
    if !sql.contains("{{") && !sql.contains("{%") {
        return (sql.to_string(), None);
    }
    match render_metered(sql, context! { params => params }, fuel) {
        Ok(rendered) => (rendered, None),
        Err(e) => (sql.to_string(), Some(e.to_string())),
    }
}

/// `macros.ds_add(ds, n)`, `macros.ds_format(...)`, anything else.
#[derive(Debug)]
struct Macros;

impl Object for Macros {
    fn call_method(
        self: &std::sync::Arc<Self>,
        _: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match (method, args) {
            ("ds_add", [ds, days]) => {
                let shifted = ds
                    .as_str()
                    .and_then(|d| d.parse::<jiff::civil::Date>().ok())
                    .zip(i32::try_from(days.as_i64().unwrap_or(0)).ok())
                    .and_then(|(d, n)| d.checked_add(jiff::Span::new().days(n)).ok());
                Ok(Value::from(
                    shifted.map_or(DS.to_string(), |d| d.to_string()),
                ))
            }
            ("ds_format", [ds, ..]) => Ok(ds.clone()),
            _ => Ok(Value::from_safe_string(UNKNOWN_PLACEHOLDER.to_string())),
        }
    }
}

/// `var.value.x`, `conn.x`, `ti.xcom_pull(...)`: runtime values.
#[derive(Debug)]
struct Unknown;

impl Object for Unknown {
    fn get_value(self: &std::sync::Arc<Self>, _key: &Value) -> Option<Value> {
        Some(Value::from_object(Unknown))
    }

    fn call_method(
        self: &std::sync::Arc<Self>,
        _: &mut State<'_, '_>,
        _m: &str,
        _a: &[Value],
    ) -> Result<Value, Error> {
        Ok(Value::from_safe_string(UNKNOWN_PLACEHOLDER.to_string()))
    }

    fn call(
        self: &std::sync::Arc<Self>,
        _: &mut State<'_, '_>,
        _args: &[Value],
    ) -> Result<Value, Error> {
        Ok(Value::from_safe_string(UNKNOWN_PLACEHOLDER.to_string()))
    }

    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(UNKNOWN_PLACEHOLDER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_renders_with_its_own_dates() {
        let params = [("schema".to_string(), "raw".to_string())].into();
        let sql = "delete from {{ params.schema }}.orders where d = '{{ ds }}' and d > '{{ macros.ds_add(ds, -1) }}' and t < '{{ data_interval_end }}'";
        assert_eq!(
            render_for_run(sql, &params, "2026-01-10T00:00:00", "2026-01-11T00:00:00").unwrap(),
            "delete from raw.orders where d = '2026-01-10' and d > '2026-01-09' and t < '2026-01-11T00:00:00+00:00'"
        );
        assert!(
            render_for_run(
                "select '{{ var.value.x }}'",
                &params,
                "2026-01-10T00:00:00",
                "2026-01-11T00:00:00"
            )
            .is_err()
        );
    }

    #[test]
    fn airflow_variables_render_to_a_fixed_run() {
        let params = [("schema".to_string(), "mart".to_string())].into();
        let sql = "insert into {{ params.schema }}.daily_{{ ds_nodash }} select * from raw.events where d = '{{ ds }}' and d > '{{ macros.ds_add(ds, -7) }}' and x = '{{ var.value.flag }}'";
        assert_eq!(
            render_sql(sql, &params, &Cell::new(FILE_FUEL)),
            (
                "insert into mart.daily_20260101 select * from raw.events where d = '2026-01-01' and d > '2025-12-25' and x = '__ripple_unknown__'".to_string(),
                None
            )
        );
        let (kept, why) = render_sql(
            "select {% if x %} 1 {% endfor %}",
            &params,
            &Cell::new(FILE_FUEL),
        );
        assert_eq!(kept, "select {% if x %} 1 {% endfor %}");
        assert!(why.is_some_and(|w| w.contains("endfor")));
    }
}
