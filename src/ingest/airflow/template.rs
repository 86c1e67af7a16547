//! Airflow's template variables, rendered to the values of a run so the
//! SQL a task carries can be read: the run's dates (`ds`, `ts`,
//! `data_interval_start` / `_end`, `logical_date`, `prev_ds`, `next_ds`,
//! `yesterday_ds`, ... and their `_nodash` forms), `params.*`,
//! `macros.ds_add(...)`, `macros.ds_format(...)`. Reading the graph
//! renders a fixed run (2026-01-01), so the result never depends on when
//! ripple runs; anything only a running Airflow has (`var`, `conn`, `ti`,
//! `dag`, `run_id`, ...) renders as a placeholder. A plan renders each run
//! it makes with undefined values as errors (Airflow's own
//! `StrictUndefined`), so a value ripple does not know is refused, never
//! printed as nothing.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use jiff::civil::DateTime;
use minijinja::value::Object;
use minijinja::{Environment, Error, ErrorKind, State, UndefinedBehavior, Value, context};

use crate::ingest::dbt::jinja::guard;
use crate::project::UNKNOWN_PLACEHOLDER;

/// A dict value ripple does not know (`Param(5)`, a nested dict): printed,
/// it is a runtime value, never an empty name.
pub(super) const UNKNOWN_VALUE: &str = "\u{0}unknown";

/// A dict key standing for keys ripple does not know (`{**other}`).
pub(super) const UNKNOWN_KEYS: &str = "\u{0}*";

/// The representative run's day, as warnings name it.
pub(super) const REPRESENTATIVE_DAY: &str = "2026-01-01";

/// The representative run: its data interval.
const REPRESENTATIVE: (DateTime, DateTime) = (
    DateTime::constant(2026, 1, 1, 0, 0, 0, 0),
    DateTime::constant(2026, 1, 2, 0, 0, 0, 0),
);

/// A second run unlike the representative one in every part of its date
/// (year, month, day, weekday, day of year): a template whose tables
/// differ between the two names its tables after the run's date.
const ALTERNATE: (DateTime, DateTime) = (
    DateTime::constant(2025, 6, 15, 0, 0, 0, 0),
    DateTime::constant(2025, 6, 16, 0, 0, 0, 0),
);

/// Jinja fuel one template may use.
const RENDER_FUEL: u64 = 1_000_000;

/// Jinja fuel all the templates of one DAG file share: a loop making 1,000
/// tasks whose templates each ran out of their own fuel once took 245 s
/// (a 480-byte file).
pub(super) const FILE_FUEL: u64 = 10_000_000;

/// Airflow's context values that only a running Airflow has.
const RUNTIME_ONLY: &[&str] = &[
    "var",
    "conn",
    "ti",
    "task_instance",
    "task_instance_key_str",
    "dag",
    "task",
    "dag_run",
    "run_id",
    "conf",
    "inlets",
    "outlets",
    "triggering_dataset_events",
    "triggering_asset_events",
    "prev_data_interval_start_success",
    "prev_data_interval_end_success",
    "prev_start_date_success",
    "prev_end_date_success",
    "test_mode",
    "expanded_ti_count",
    "map_index_template",
];

/// The environment reading the graph (printing an undefined value is an
/// error, testing one is false) or rendering a plan's runs (undefined is
/// an error).
fn build_env(undefined: UndefinedBehavior) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(undefined);
    env.set_fuel(Some(RENDER_FUEL));
    env.add_global("macros", Value::from_object(Macros));
    for name in RUNTIME_ONLY {
        env.add_global(*name, Value::from_object(Unknown));
    }
    env.set_unknown_method_callback(|_, value, method, args| {
        // `params.get("t")`, `params.get("t", "x")`: Python's dict.get.
        if method == "get"
            && value.kind() == minijinja::value::ValueKind::Map
            && let [key, rest @ ..] = args
            && rest.len() <= 1
        {
            let default = rest.first().cloned().unwrap_or(Value::from(()));
            let found = value.get_item(key)?;
            return Ok(if found.is_undefined() { default } else { found });
        }
        Ok(Value::from_safe_string(UNKNOWN_PLACEHOLDER.to_string()))
    });
    // What a template prints, and what `~`, `in` and the filters turn
    // into text, is measured before it is built (jinja/guard.rs).
    env.set_formatter(|out, state, value| {
        guard::check_shown(state, "printing a value", std::slice::from_ref(value))?;
        minijinja::escape_formatter(out, state, value)
    });
    crate::ingest::dbt::jinja::filters::add(&mut env);
    guard::install(&mut env, |_| false, &|_| false);
    env
}

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    // Airflow renders with `StrictUndefined`: a value it does not have
    // fails the task. Printed here, it is an error (the task's tables are
    // then named as not read), never empty text in a table's name.
    ENV.get_or_init(|| build_env(UndefinedBehavior::SemiStrict))
}

fn run_env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| build_env(UndefinedBehavior::Strict))
}

/// Airflow's context for the run whose data interval is `[start, end)`
/// (UTC): the previous run's interval is taken to be as long (a fixed
/// schedule: the plan refuses others where the template reads them).
fn run_context(params: Option<&BTreeMap<String, String>>, start: DateTime, end: DateTime) -> Value {
    let day = jiff::Span::new().days(1);
    let iso = |t: DateTime| format!("{}+00:00", t.strftime("%Y-%m-%dT%H:%M:%S"));
    let ds = |t: DateTime| t.date().to_string();
    let nodash = |t: DateTime| t.date().strftime("%Y%m%d").to_string();
    let time = |t: DateTime| Value::from_object(AirflowTime(t));
    let prev = start
        .checked_sub(end.duration_since(start))
        .unwrap_or(start);
    let yesterday = start.checked_sub(day).unwrap_or(start);
    let tomorrow = start.checked_add(day).unwrap_or(start);
    // Params given as something ripple cannot read are a runtime value.
    let params = match params {
        Some(p) => Value::from(
            p.iter()
                .map(|(k, v)| {
                    let v = match v.as_str() {
                        UNKNOWN_VALUE => Value::from_object(Unknown),
                        v => Value::from(v),
                    };
                    (k.clone(), v)
                })
                .collect::<BTreeMap<String, Value>>(),
        ),
        None => Value::from_object(Unknown),
    };
    context! {
        params => params,
        ds => ds(start),
        ds_nodash => nodash(start),
        ts => iso(start),
        ts_nodash => start.strftime("%Y%m%dT%H%M%S").to_string(),
        ts_nodash_with_tz => format!("{}+0000", start.strftime("%Y%m%dT%H%M%S")),
        data_interval_start => time(start),
        data_interval_end => time(end),
        logical_date => time(start),
        execution_date => time(start),
        prev_execution_date => time(prev),
        next_execution_date => time(end),
        prev_ds => ds(prev),
        prev_ds_nodash => nodash(prev),
        next_ds => ds(end),
        next_ds_nodash => nodash(end),
        yesterday_ds => ds(yesterday),
        yesterday_ds_nodash => nodash(yesterday),
        tomorrow_ds => ds(tomorrow),
        tomorrow_ds_nodash => nodash(tomorrow),
    }
}

/// A date of the run as Airflow hands it (a pendulum `DateTime`): printed
/// as pendulum prints it (`2026-01-10 00:00:00+00:00`, as Airflow 2.10
/// renders it), its fields and `strftime` as Python's.
#[derive(Debug)]
struct AirflowTime(DateTime);

impl AirflowTime {
    fn python(&self) -> Value {
        crate::ingest::dbt::jinja::utc_datetime(self.0)
    }
}

impl Object for AirflowTime {
    fn get_value(self: &std::sync::Arc<Self>, key: &Value) -> Option<Value> {
        let found = self.python().get_attr(key.as_str()?).ok()?;
        (!found.is_undefined()).then_some(found)
    }

    fn call_method(
        self: &std::sync::Arc<Self>,
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        self.python().call_method(state, method, args)
    }

    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}+00:00", self.0.strftime("%Y-%m-%d %H:%M:%S"))
    }
}

/// `sql` rendered with `ctx`, its operators guarded, on a stack sized for
/// its longest chain and, when it has statements (loops build values), for
/// the deepest value its fuel allows: `{{ ds }}` maps no stack per run.
fn render(sql: &str, ctx: Value) -> Result<String, Error> {
    render_metered(run_env(), sql, ctx, &Cell::new(RENDER_FUEL))
}

/// [`render`] paying from `fuel`, what the file has left: the render gets
/// at most that much, and what it used (all it was given, when it failed)
/// is taken off.
fn render_metered(
    env: &'static Environment<'static>,
    sql: &str,
    ctx: Value,
    fuel: &Cell<u64>,
) -> Result<String, Error> {
    let given = fuel.get().min(RENDER_FUEL);
    if given == 0 {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "not rendered: the file's templates used all the fuel they share ({FILE_FUEL} steps); is a loop repeating a task?"
            ),
        ));
    }
    if let Some((_, message)) = guard::chain_too_long(sql) {
        return Err(Error::new(ErrorKind::InvalidOperation, message));
    }
    let sql = guard::rewrite_operators(sql);
    let loops = sql.contains("{%");
    let lowered;
    let env = if given < RENDER_FUEL {
        let mut e = env.clone();
        e.set_fuel(Some(given));
        lowered = e;
        &lowered
    } else {
        env
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
    params: Option<&BTreeMap<String, String>>,
    start: &str,
    end: &str,
) -> Result<String, String> {
    let instant = |t: &str| {
        t.parse::<DateTime>()
            .map_err(|e| format!("its run's dates do not read ({t}: {e})"))
    };
    let rendered =
        render(sql, run_context(params, instant(start)?, instant(end)?)).map_err(|e| {
            let e = e.to_string();
            let e = crate::text::clipped(&e, crate::text::MESSAGE_QUOTE);
            format!("its template does not render as Airflow would: {e}")
        })?;
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
    params: Option<&BTreeMap<String, String>>,
    fuel: &Cell<u64>,
) -> (String, Option<String>) {
    if !sql.contains("{{") && !sql.contains("{%") {
        return (sql.to_string(), None);
    }
    let (start, end) = REPRESENTATIVE;
    match render_metered(env(), sql, run_context(params, start, end), fuel) {
        Ok(rendered) => (rendered, None),
        Err(e) => (
            sql.to_string(),
            Some(crate::text::clipped(&e.to_string(), crate::text::MESSAGE_QUOTE).into_owned()),
        ),
    }
}

/// Whether `sql` (rendered for the representative run as `rendered`)
/// renders for another run to more than other values: other tables
/// (`raw.t_{{ ds_nodash }}`), other statements (`{% if
/// logical_date.day == 1 %}`). Values (`'{{ ds }}'`, `{{ ds_nodash }}` as
/// a number) may differ; the words and symbols of the SQL may not.
pub(super) fn shaped_by_date(
    sql: &str,
    rendered: &str,
    params: Option<&BTreeMap<String, String>>,
    fuel: &Cell<u64>,
    dialect: crate::sql::SqlDialect,
) -> bool {
    use sqlparser::tokenizer::{Token, Tokenizer};
    if !sql.contains("{{") && !sql.contains("{%") {
        return false;
    }
    let (start, end) = ALTERNATE;
    // Its own budget, as large as what the file has left: the check never
    // starves a later task's own render of the file's fuel.
    let own = Cell::new(fuel.get());
    let Ok(other) = render_metered(env(), sql, run_context(params, start, end), &own) else {
        return false;
    };
    if other == rendered {
        return false;
    }
    let parser = dialect.parser_dialect();
    let words = |s: &str| -> Option<Vec<Token>> {
        let tokens = Tokenizer::new(&*parser, s).tokenize().ok()?;
        Some(
            tokens
                .into_iter()
                .filter(|t| !matches!(t, Token::Whitespace(_)))
                .collect(),
        )
    };
    let value = |t: &Token| {
        matches!(
            t,
            Token::Number(..)
                | Token::SingleQuotedString(_)
                | Token::DoubleQuotedString(_)
                | Token::TripleSingleQuotedString(_)
                | Token::TripleDoubleQuotedString(_)
                | Token::EscapedStringLiteral(_)
                | Token::NationalStringLiteral(_)
                | Token::DollarQuotedString(_)
                | Token::SingleQuotedByteStringLiteral(_)
        )
    };
    // `"2026-01-01"` is a string to BigQuery and MySQL, an identifier to
    // the others: double-quoted words differing only in their digits are
    // taken for values.
    let digits = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_digit() { '0' } else { c })
            .collect()
    };
    let same_but_digits = |x: &Token, y: &Token| match (x, y) {
        (Token::Word(a), Token::Word(b)) => {
            a.quote_style == Some('"')
                && b.quote_style == Some('"')
                && digits(&a.value) == digits(&b.value)
        }
        _ => false,
    };
    match (words(rendered), words(&other)) {
        (Some(a), Some(b)) => {
            a.len() != b.len()
                || a.iter()
                    .zip(&b)
                    .any(|(x, y)| x != y && !(value(x) && value(y)) && !same_but_digits(x, y))
        }
        _ => true,
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
                shifted.map(|d| Value::from(d.to_string())).ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        "macros.ds_add needs a date and a number of days",
                    )
                })
            }
            // Python's strptime then strftime.
            ("ds_format", [ds, input, output]) => {
                let (Some(ds), Some(input), Some(output)) =
                    (ds.as_str(), input.as_str(), output.as_str())
                else {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "macros.ds_format needs three strings",
                    ));
                };
                jiff::fmt::strtime::parse(input, ds)
                    .and_then(|t| t.to_date())
                    .and_then(|d| jiff::fmt::strtime::format(output, d))
                    .map(Value::from)
                    .map_err(|e| {
                        Error::new(
                            ErrorKind::InvalidOperation,
                            format!("macros.ds_format: {e}"),
                        )
                    })
            }
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
            render_for_run(
                sql,
                Some(&params),
                "2026-01-10T00:00:00",
                "2026-01-11T00:00:00"
            )
            .unwrap(),
            "delete from raw.orders where d = '2026-01-10' and d > '2026-01-09' and t < '2026-01-11 00:00:00+00:00'"
        );
        assert!(
            render_for_run(
                "select '{{ var.value.x }}'",
                Some(&params),
                "2026-01-10T00:00:00",
                "2026-01-11T00:00:00"
            )
            .is_err()
        );
    }

    #[test]
    fn a_run_renders_every_date_of_its_own_and_refuses_what_it_does_not_know() {
        let run = |sql: &str| {
            render_for_run(
                sql,
                Some(&BTreeMap::new()),
                "2026-01-10T00:00:00",
                "2026-01-11T00:00:00",
            )
        };
        // `prev_ds` was the fixed run's (2025-12-31) in every run.
        assert_eq!(
            run("{{ prev_ds }} {{ next_ds }} {{ prev_ds_nodash }} {{ next_ds_nodash }} {{ yesterday_ds }} {{ tomorrow_ds_nodash }} {{ ts_nodash_with_tz }}").unwrap(),
            "2026-01-09 2026-01-11 20260109 20260111 2026-01-09 20260111 20260110T000000+0000"
        );
        assert_eq!(
            run("{{ logical_date }} {{ logical_date.year }} {{ data_interval_end.month }} {{ data_interval_end.day }} {{ logical_date.strftime('%Y%m') }} {{ macros.ds_format(ds, '%Y-%m-%d', '%d/%m/%Y') }}").unwrap(),
            "2026-01-10 00:00:00+00:00 2026 1 11 202601 10/01/2026"
        );
        // What ripple does not know is refused, never printed as nothing.
        for unknown in [
            "{{ dag.dag_id }}",
            "{{ run_id }}",
            "{{ dag_run.conf['x'] }}",
            "{{ task_instance_key_str }}",
            "{{ not_a_variable }}",
            "{{ logical_date.format('YYYY') }}",
            "{{ params.missing }}",
        ] {
            assert!(run(unknown).is_err(), "{unknown}: {:?}", run(unknown));
        }
    }

    #[test]
    fn airflow_variables_render_to_a_fixed_run() {
        let params = [("schema".to_string(), "mart".to_string())].into();
        let sql = "insert into {{ params.schema }}.daily_{{ ds_nodash }} select * from raw.events where d = '{{ ds }}' and d > '{{ macros.ds_add(ds, -7) }}' and x = '{{ var.value.flag }}'";
        assert_eq!(
            render_sql(sql, Some(&params), &Cell::new(FILE_FUEL)),
            (
                "insert into mart.daily_20260101 select * from raw.events where d = '2026-01-01' and d > '2025-12-25' and x = '__ripple_unknown__'".to_string(),
                None
            )
        );
        let (kept, why) = render_sql(
            "select {% if x %} 1 {% endfor %}",
            Some(&params),
            &Cell::new(FILE_FUEL),
        );
        assert_eq!(kept, "select {% if x %} 1 {% endfor %}");
        assert!(why.is_some_and(|w| w.contains("endfor")));
    }
}
