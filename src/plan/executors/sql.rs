//! SQL: the job's own statements, run so that they can only write shadows.
//!
//! A task's script recomputes the job into a work table (a fresh, empty
//! copy of production's columns), every relation the plan rewrites read
//! from its shadow, then replaces exactly the task's partitions in the
//! dataset's shadow, by column name. Every statement is checked after
//! rewriting: one that would still change a relation other than the work
//! table, the job's own scratch tables or its temporary tables — or one
//! whose effect ripple cannot tell — refuses the plan, naming it.

use std::collections::{BTreeSet, HashMap};

use super::{Commands, TaskContext};
use crate::graph::LineageGraph;
use crate::plan::PlanError;
use crate::plan::sql::{
    begin, create_copy, drop_shadow, drop_view, insert_by_name, quote_relation,
};
use crate::sql::{ScriptLineage, SqlDialect, StatementKind, script_lineage};

/// Fills the SQL of a task of a plain SQL job.
pub(super) fn commands(
    c: &mut Commands,
    g: &LineageGraph,
    cx: &TaskContext,
) -> Result<(), PlanError> {
    if let Some(sql) = &cx.job.sql {
        c.sql = task_script(g, cx, sql, "")?;
    }
    Ok(())
}

/// Fills the SQL of a task of an Airflow SQL task: its SQL rendered for
/// each run (one per partition of the task, with that run's `ds`, `ts`,
/// data interval), then guarded like any SQL job. A template that needs a
/// running Airflow (Variables, XCom) gives no SQL; the reason is returned.
pub(super) fn airflow_commands(
    c: &mut Commands,
    g: &LineageGraph,
    cx: &TaskContext,
) -> Result<Option<String>, PlanError> {
    let Some(template) = cx.job.airflow.as_ref().and_then(|a| a.template.as_ref()) else {
        return Ok(None);
    };
    let instant = |h: crate::time::Hour| {
        let (date, hour) = crate::time::datetime_of(h);
        format!("{date}T{hour:02}:00:00")
    };
    let grain = match cx.grain {
        crate::time::Grain::None => crate::time::Grain::Day,
        g => g,
    };
    if let Some(why) = unaligned_schedule(g, cx, &template.text, grain) {
        return Ok(Some(why));
    }
    let runs: Vec<(crate::time::Hour, crate::time::Hour)> = if cx.task.full {
        // A full rebuild runs once, as the last day before --as-of.
        crate::time::TimeKey::parse(cx.range.0)
            .map(|k| vec![(k.start, k.end())])
            .unwrap_or_default()
    } else {
        let mut runs = Vec::new();
        for &(a, b) in &cx.task.ranges {
            let mut p = a;
            while p < b {
                let next = grain.next(p);
                runs.push((p, next));
                p = next;
            }
        }
        runs
    };
    // A run may restate another day than its own (`macros.ds_add(ds, -1)`:
    // each run closes the day before): the run for the partition is then
    // another run, found from the days its SQL names.
    let shift = match (grain, cx.task.full, runs.first()) {
        (crate::time::Grain::Day, false, Some(&(a, b))) => {
            let days = |h: crate::time::Hour| {
                crate::ingest::airflow::render_for_run(
                    &template.text,
                    template.params.as_ref(),
                    &instant(h),
                    &instant(h + (b - a)),
                )
                .map(|sql| named_days(&sql))
                .unwrap_or_default()
            };
            match day_shift(a.div_euclid(24), &days(a), &days(a + PROBE_DAYS * 24)) {
                Ok(k) => k,
                Err(offsets) => {
                    return Ok(Some(format!(
                        "`{}` (Airflow task {}): the run of a day names other days only ({} days from its `ds`), so no run restates one day: ripple cannot tell which run to make for a partition",
                        cx.dataset.name,
                        cx.job.id.trim_start_matches("airflow:"),
                        offsets
                            .iter()
                            .map(|k| format!("{k:+}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
            }
        }
        _ => 0,
    };
    let runs: Vec<(crate::time::Hour, crate::time::Hour)> = runs
        .into_iter()
        .map(|(a, b)| (a - shift * 24, b - shift * 24))
        .collect();
    let mut script = String::new();
    for (a, b) in runs {
        match crate::ingest::airflow::render_for_run(
            &template.text,
            template.params.as_ref(),
            &instant(a),
            &instant(b),
        ) {
            Ok(sql) => {
                script.push_str(sql.trim_end().trim_end_matches(';'));
                script.push_str(";\n");
            }
            Err(why) => {
                return Ok(Some(format!(
                    "`{}` (Airflow task {}): no SQL command: {why}",
                    cx.dataset.name,
                    cx.job.id.trim_start_matches("airflow:")
                )));
            }
        }
    }
    c.sql = task_script(
        g,
        cx,
        &script,
        " (in its SQL as rendered for the plan's dates)",
    )?;
    Ok(None)
}

/// Why the runs ripple would render for a partition are not the runs the
/// task's DAG makes, if its template reads more of a run than its date: a
/// run covers one partition from its midnight (or its hour), so a DAG
/// scheduled at another time (`30 2 * * *`: data interval 02:30 to 02:30)
/// or at irregular times (weekdays only: `prev_ds` of a Monday is a
/// Friday) would read other rows than production did.
fn unaligned_schedule(
    g: &LineageGraph,
    cx: &TaskContext,
    template: &str,
    grain: crate::time::Grain,
) -> Option<String> {
    const BEYOND_THE_DATE: &[&str] = &[
        "ts",
        "ts_nodash",
        "ts_nodash_with_tz",
        "data_interval_start",
        "data_interval_end",
        "logical_date",
        "execution_date",
        "prev_ds",
        "prev_ds_nodash",
        "next_ds",
        "next_ds_nodash",
        "prev_execution_date",
        "next_execution_date",
    ];
    let airflow = cx.job.airflow.as_ref()?;
    let dag = g.dags.iter().find(|d| d.dag_id == airflow.dag_id)?;
    let schedule = dag.schedule.as_deref()?.trim();
    let aligned: &[&str] = match grain {
        crate::time::Grain::Hour => &["@hourly", "0 * * * *"],
        crate::time::Grain::Day => &["@daily", "@midnight", "0 0 * * *"],
        _ => &[],
    };
    if aligned.contains(&schedule) {
        return None;
    }
    let word = |w: &str| {
        template.match_indices(w).any(|(i, _)| {
            let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
            !template[..i].ends_with(ident) && !template[i + w.len()..].starts_with(ident)
        })
    };
    let read: Vec<&str> = BEYOND_THE_DATE
        .iter()
        .copied()
        .filter(|w| word(w))
        .collect();
    if read.is_empty() {
        return None;
    }
    Some(format!(
        "`{}` (Airflow task {}): its DAG runs on `{schedule}`, not once a {grain} from its start, and its SQL reads {}: a run ripple renders for a partition would not read the rows the DAG's run read. Restate it with the DAG itself (`airflow dags backfill`), or template it on `ds` alone",
        cx.dataset.name,
        cx.job.id.trim_start_matches("airflow:"),
        read.iter()
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(", "),
        grain = grain.as_str(),
    ))
}

/// Whether every statement of the job that creates `own` is a plain
/// `create table if not exists` (no `as select`, no drop before it).
fn creates_only_if_missing(
    lineage: &ScriptLineage,
    rewritten: &[crate::sql::rewrite::Rewritten],
    own: &str,
    dialect: SqlDialect,
) -> bool {
    // Read from the statement, not its text: `if not exists` can be in a
    // default's literal.
    let if_not_exists = |sql: &str| {
        crate::sql::with_statements(sql, dialect, |st| {
            matches!(st.as_slice(), [sqlparser::ast::Statement::CreateTable(ct)] if ct.if_not_exists)
        })
        .unwrap_or(false)
    };
    let mut creates = lineage
        .statements
        .iter()
        .filter(|s| s.targets.iter().any(|t| t == own) || s.dropped.iter().any(|t| t == own))
        .filter(|s| {
            matches!(
                s.kind,
                StatementKind::CreateTable | StatementKind::CreateTableAs | StatementKind::Drop
            )
        })
        .peekable();
    creates.peek().is_some()
        && creates.all(|s| {
            s.kind == StatementKind::CreateTable
                && rewritten
                    .iter()
                    .any(|r| r.index == s.index && if_not_exists(&r.sql))
        })
}

/// Days between the two runs [`day_shift`] compares: far enough apart
/// that a constant date is not taken for one that moves.
const PROBE_DAYS: i64 = 11;

/// How many days after its own a run restates, from the days its SQL
/// names rendered for a run of day `day` (`first`) and for the run
/// [`PROBE_DAYS`] later (`later`): the days that move with the run are its
/// own. None that move, or its own among them: `0`. One other offset (`-1`
/// for `ds_add(ds, -1)`): that offset. Several, none its own: `Err` with them.
fn day_shift(day: i64, first: &BTreeSet<i64>, later: &BTreeSet<i64>) -> Result<i64, Vec<i64>> {
    let moving: BTreeSet<i64> = first
        .iter()
        .filter(|d| later.contains(&(*d + PROBE_DAYS)))
        .map(|d| d - day)
        .collect();
    if moving.is_empty() || moving.contains(&0) {
        return Ok(0);
    }
    match moving.len() {
        1 => Ok(moving.into_iter().next().unwrap_or(0)),
        _ => Err(moving.into_iter().collect()),
    }
}

/// The days `sql` names as `YYYY-MM-DD` or `YYYYMMDD` literals (`ds`,
/// `ds_nodash` as rendered), as day numbers.
fn named_days(sql: &str) -> BTreeSet<i64> {
    let b = sql.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'-') {
            j += 1;
        }
        let token = &sql[i..j];
        let date = match token.len() {
            10 if token.as_bytes()[4] == b'-' && token.as_bytes()[7] == b'-' => {
                Some(token.to_string())
            }
            8 if token.bytes().all(|c| c.is_ascii_digit()) => {
                Some(format!("{}-{}-{}", &token[..4], &token[4..6], &token[6..]))
            }
            _ => None,
        };
        if let Some(d) = date.and_then(|d| d.parse::<jiff::civil::Date>().ok()) {
            out.insert(crate::time::hour_of_date(d).div_euclid(24));
        }
        i = j;
    }
    out
}

/// [`guarded_script`] for the task of `cx`, refusals naming its job; `note`
/// is added to the reason (and lines are dropped: they would be lines of
/// rendered SQL, not of the file).
fn task_script(
    g: &LineageGraph,
    cx: &TaskContext,
    sql: &str,
    note: &str,
) -> Result<Vec<String>, PlanError> {
    guarded_script(
        sql,
        g.config.dialect,
        &ScriptTarget {
            relation: &cx.dataset.relation,
            shadow: cx.shadow,
            shadows: cx.shadows,
            filter: cx.filter,
            columns: cx.columns,
            known: cx.known,
            suffix: &task_suffix(cx.task),
        },
    )
    .map_err(|(line, statement, reason)| PlanError::Unsafe {
        dataset: cx.dataset.name.clone(),
        file: cx.job.file.clone(),
        line: if note.is_empty() { line } else { 0 },
        statement,
        reason: format!("{reason}{note}"),
    })
}

/// The way out of a statement that changes more than its job's own table.
const REWRITE: &str =
    "rewrite the job so that it writes only its own table, or leave the dataset out";

/// What keeps one task's work and scratch tables apart from another's of
/// the same dataset (batches may run at once): its first partition.
pub fn task_suffix(task: &crate::plan::PlanTask) -> String {
    match &task.from {
        Some(from) if !task.full => {
            format!(
                "_{}",
                from.chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>()
            )
        }
        _ => "_full".to_string(),
    }
}

/// Whether `job_sql` makes `relation` a view (`create [or replace] view`):
/// a view holds no rows, so its task builds its shadow view and nothing is
/// copied, validated or swapped.
pub fn makes_view(job_sql: &str, dialect: SqlDialect, relation: &str) -> bool {
    creates_view(&script_lineage(job_sql, dialect), relation)
}

/// Whether a statement of `lineage` creates `relation` as a view.
fn creates_view(lineage: &ScriptLineage, relation: &str) -> bool {
    lineage
        .statements
        .iter()
        .any(|s| s.kind == StatementKind::CreateView && s.targets.iter().any(|t| t == relation))
}

/// Where a task script writes: the dataset, its shadow, and the task's part.
#[derive(Clone, Copy)]
pub struct ScriptTarget<'a> {
    /// The production relation the job writes.
    pub relation: &'a str,
    /// Its shadow.
    pub shadow: &'a str,
    /// Production relation (as ripple prints it) → shadow, for every
    /// restated dataset.
    pub shadows: &'a HashMap<String, String>,
    /// The task's partitions (`None`: all).
    pub filter: Option<&'a str>,
    /// The job's output columns, when known.
    pub columns: Option<&'a [String]>,
    /// What the plan knows of the table (its copies and replaces follow it).
    pub known: Option<&'a crate::plan::table::Known>,
    /// Keeps this task's work tables apart from its sibling batches'.
    pub suffix: &'a str,
}

/// The first statement after which a temporary table's name could reach
/// a production table, and why: a job's temporary tables are never
/// redirected, which is safe only while each name means the temporary
/// table. `discard`, dropping the table and naming it again, `on commit
/// drop` (gone at the next commit), or a `search_path` that puts `pg_temp`
/// after a schema all let the same name denote production's table.
fn temporary_escapes(
    lineage: &ScriptLineage,
    rewritten: &[crate::sql::rewrite::Rewritten],
    temporary: &BTreeSet<String>,
) -> Option<(usize, String)> {
    if temporary.is_empty() {
        return None;
    }
    if let Some((index, why)) = rewritten
        .iter()
        .find_map(|r| Some((r.index, r.unbinds_temporary?)))
    {
        let names = temporary
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ");
        return Some((index, format!("{why} ({names})")));
    }
    // Each name is the temporary table only from its creation to its drop:
    // named outside that span, it is production's table of that name.
    for name in temporary {
        let mut live = false;
        for s in &lineage.statements {
            if s.temporary.contains(name) {
                live = true;
                continue;
            }
            let names = s.sources.contains(name) || s.targets.contains(name);
            let drops = s.dropped.contains(name);
            if (names || drops) && !live {
                return Some((
                    s.index,
                    format!(
                        "it names `{name}` where no temporary table of that name exists (before the job creates it, or after it drops it), so the name would reach production's table: create the temporary table first, and drop it last"
                    ),
                ));
            }
            if drops {
                live = false;
            }
        }
    }
    None
}

/// The task script for `job_sql` writing `relation`: see the module docs.
/// The error is (line, statement number, reason) of the first statement
/// that is not safe.
pub fn guarded_script(
    job_sql: &str,
    dialect: SqlDialect,
    into: &ScriptTarget<'_>,
) -> Result<Vec<String>, (u64, usize, String)> {
    let ScriptTarget {
        relation,
        shadow,
        shadows,
        filter,
        columns,
        known,
        suffix,
    } = *into;
    let known = known.filter(|_| crate::plan::table::supported(dialect));
    if let Some(at) = job_sql.find("{{").or_else(|| job_sql.find("{%")) {
        let line = job_sql[..at].matches('\n').count() as u64 + 1;
        return Err((
            line,
            0,
            "holds a template (`{{ ... }}` or `{% ... %}`) that nothing renders for a plain SQL job; it would run with the braces as text"
                .to_string(),
        ));
    }
    let lineage = script_lineage(job_sql, dialect);
    if let Some(e) = lineage.errors.first() {
        return Err((
            e.line,
            e.statement,
            format!(
                "does not parse ({}); ripple runs only SQL it can check: fix the statement or leave the dataset out",
                e.message
            ),
        ));
    }
    // Rows changed through a view are the table's under it: a view the job
    // makes (a temporary one too, which the task keeps as it is) is never
    // where its changes may go.
    let views: BTreeSet<&String> = lineage
        .statements
        .iter()
        .filter(|s| s.kind == StatementKind::CreateView)
        .flat_map(|s| s.targets.iter())
        .collect();
    if let Some((s, v)) = lineage
        .statements
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                StatementKind::Insert
                    | StatementKind::InsertOverwrite
                    | StatementKind::Merge
                    | StatementKind::Update
                    | StatementKind::Delete
                    | StatementKind::Copy
                    | StatementKind::Truncate
            )
        })
        .find_map(|s| Some((s, s.targets.iter().find(|t| views.contains(t))?)))
    {
        return Err((
            s.line,
            s.index,
            format!(
                "it changes rows through the view `{v}`, which changes the table under it (production's) as soon as the task runs; change the table itself"
            ),
        ));
    }
    let view = creates_view(&lineage, relation);
    // A view is built as its shadow directly: there are no rows to replace.
    let work = if view {
        shadow.to_string()
    } else {
        crate::plan::sql::derived_name(dialect, shadow, &format!("__work{suffix}"))
    };
    let own = relation.to_string();
    // Reads of rewritten upstreams go to their shadows; everything the job
    // writes goes to the work table (its dataset) or a scratch table.
    let mut map: HashMap<String, String> = shadows.clone();
    let mut temporary = BTreeSet::new();
    let mut scratch = Vec::new();
    let mut created = BTreeSet::new();
    for s in &lineage.statements {
        temporary.extend(s.temporary.iter().cloned());
        if matches!(
            s.kind,
            StatementKind::CreateTable | StatementKind::CreateTableAs | StatementKind::CreateView
        ) {
            created.extend(s.targets.iter().cloned());
        }
    }
    // Tables the job fills with rows are its own (its dataset, staging
    // tables): redirected. A table it only drops, truncates or alters is
    // someone else's: left alone, so the check below refuses the job.
    // A table a rename or swap moves rows into is not filled by the job
    // itself: moving production away (`alter table t rename to u`) stays
    // refused.
    let filled: BTreeSet<String> = lineage
        .statements
        .iter()
        .filter(|s| {
            !matches!(
                s.kind,
                StatementKind::Other | StatementKind::Truncate | StatementKind::Drop
            )
        })
        .flat_map(|s| s.targets.iter().cloned())
        .collect();
    for s in &lineage.statements {
        for t in s.targets.iter().chain(&s.dropped) {
            let key = t.clone();
            // A view's task runs only the view's own statements: what the
            // rest of the job fills is read as it is (its shadow, if any).
            if temporary.contains(&key) || !filled.contains(&key) || view {
                continue;
            }
            if key == own {
                map.insert(key, work.clone());
            } else if !scratch.iter().any(|(k, _)| *k == key) {
                let name = crate::plan::sql::derived_name(
                    dialect,
                    shadows.get(&key).map_or(t.as_str(), |s| s),
                    &format!("__scratch{suffix}"),
                );
                map.insert(key.clone(), name.clone());
                scratch.push((key, name));
            }
        }
    }
    map.insert(own.clone(), work.clone());
    let keys = known
        .and_then(|k| k.facts.as_ref())
        .map(|f| crate::plan::table::constraint_columns(f, dialect))
        .unwrap_or_default();
    let rewritten = crate::sql::rewrite::redirect_keyed(job_sql, dialect, &map, &keys).map_err(|e| {
        (
            e.line,
            e.statement,
            format!(
                "does not parse ({}); ripple runs only SQL it can check: fix the statement or leave the dataset out",
                e.message
            ),
        )
    })?;
    let allowed: BTreeSet<String> = std::iter::once(work.clone())
        .chain(scratch.iter().map(|(_, n)| n.clone()))
        .chain(temporary.iter().cloned())
        .collect();
    let line_of = |index: usize| {
        lineage
            .statements
            .iter()
            .find(|s| s.index == index)
            .map_or(0, |s| s.line)
    };
    // A view's task runs only the statements that make that view (and the
    // session's settings); another task of the same job leaves out views it
    // does not read afterwards: views hold no rows to recompute.
    let stmt = |index: usize| lineage.statements.iter().find(|s| s.index == index);
    let makes_view_of = |index: usize| -> Option<&String> {
        stmt(index)
            .filter(|s| s.kind == StatementKind::CreateView)
            .and_then(|s| s.targets.first())
    };
    let read_after = |name: &String, index: usize| {
        lineage
            .statements
            .iter()
            .any(|s| s.index > index && s.sources.contains(name))
    };
    let mut scratch_views = BTreeSet::new();
    let rewritten: Vec<_> = rewritten
        .into_iter()
        .filter(|r| match (view, makes_view_of(r.index)) {
            (true, Some(v)) => *v == own,
            (true, None) => stmt(r.index).is_some_and(|s| s.kind == StatementKind::Session),
            (false, Some(v)) if *v != own => {
                let keep = read_after(v, r.index);
                if keep {
                    scratch_views.insert(v.clone());
                }
                keep
            }
            _ => true,
        })
        .collect();
    if let Some((index, why)) = temporary_escapes(&lineage, &rewritten, &temporary) {
        return Err((line_of(index), index, format!("{why}; {REWRITE}")));
    }
    for r in &rewritten {
        if let Some(why) = &r.opaque {
            return Err((line_of(r.index), r.index, format!("{why}; {REWRITE}")));
        }
        if let Some(bad) = r.changes.iter().find(|c| !allowed.contains(*c)) {
            return Err((
                line_of(r.index),
                r.index,
                format!(
                    "{} ({} statement); {REWRITE}",
                    match map.iter().find(|(_, to)| *to == bad) {
                        Some((from, _)) => format!(
                            "it would change `{from}` (another restated table, whose shadow only its own task writes)"
                        ),
                        None => format!("it would change `{bad}`, a table this job does not fill"),
                    },
                    r.kind.as_str()
                ),
            ));
        }
    }
    // What the job does to its own table, statement by statement.
    let own_changes: Vec<&crate::sql::rewrite::Rewritten> = rewritten
        .iter()
        .filter(|r| r.changes.contains(&work))
        .collect();
    let only = |kinds: &[StatementKind]| own_changes.iter().all(|r| kinds.contains(&r.kind));
    // A job that only updates or deletes rows of its table (a retention
    // `delete`, an enrichment `update`) never fills it: the task's work
    // table starts empty, so the swap would leave the restated partitions
    // empty (a hand-fixed source's rows were deleted so).
    use StatementKind::{Delete, Drop, Truncate, Update};
    if let Some(r) = own_changes
        .iter()
        .find(|r| matches!(r.kind, Update | Delete))
        .filter(|_| !view && only(&[Drop, Truncate, Update, Delete]))
    {
        return Err((
            line_of(r.index),
            r.index,
            format!(
                "it only changes rows `{relation}` already holds ({} statement) and never fills it, while ripple rebuilds a dataset from its job into an empty table: the swap would leave the restated partitions empty. If `{relation}` is filled outside the project (a source, with a retention {} here), run that statement outside the pipeline ripple reads, so that `{relation}` is no job's output and is taken as correct; else put the statements that fill it in this job",
                r.kind.as_str(),
                r.kind.as_str()
            ),
        ));
    }
    if !view && only(&[Drop, Truncate]) {
        // The job writes its table under another name than the plan's (a
        // quoted mixed-case name folded elsewhere, say): the task would
        // replace the shadow's partitions with nothing.
        return Err((
            0,
            0,
            format!(
                "it writes no table named `{relation}` as the plan names it (it writes {}); ripple will not guess which one is meant",
                if filled.is_empty() {
                    "none".to_string()
                } else {
                    filled
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        ));
    }
    // A job that keeps its table's history and rewrites only a recent slice
    // of it (`where day >= current_date - 3`, or past another table's
    // latest day) recomputes that slice whatever the plan restates: into
    // the empty work table, the partitions before it come out empty and
    // the swap would delete them. A job that replaces its table whole
    // holds no more than its slice in production either.
    let replaces_whole = lineage
        .statements
        .iter()
        .any(|s| s.replaced.contains(&own) || s.dropped.contains(&own));
    if !view
        && !replaces_whole
        && let Some(b) = crate::sql::moving_bound(job_sql, dialect, &own)
    {
        let follows = match &b.follows {
            None => "the clock".to_string(),
            Some(t) => format!("the data in `{t}`"),
        };
        return Err((
            b.line,
            b.statement,
            format!(
                "it writes `{relation}` only where `{}`, a bound that moves with {follows}, not with the partitions a plan restates: ripple runs the job into an empty table, so every restated partition outside that bound would come out empty and the swap would delete it from production. Give the job its range as a parameter (an Airflow SQL task templated on `{{{{ ds }}}}`, a dbt microbatch model), or restate `{relation}` outside ripple",
                b.filter
            ),
        ));
    }
    let mut out = Vec::new();
    if view {
        // A materialized view is dropped as one (`drop view` refuses it).
        let materialized = rewritten.iter().any(|r| {
            makes_view_of(r.index) == Some(&own)
                && r.sql
                    .get(..23)
                    .is_some_and(|h| h.eq_ignore_ascii_case("create materialized view"))
        });
        out.push(if materialized {
            format!(
                "drop materialized view if exists {}",
                quote_relation(dialect, &work)
            )
        } else {
            drop_view(dialect, &work)
        });
    } else if created.contains(&own)
        && !(known.is_some() && creates_only_if_missing(&lineage, &rewritten, &own, dialect))
    {
        // The job creates its table itself (a view's is handled above).
        out.push(drop_shadow(dialect, &work));
    } else if let Some(k) = known {
        // A `create table if not exists` of the job's own table does nothing
        // in production, which exists: the work table starts as production's
        // copy too (its keys for an `on conflict`, which the job's DDL,
        // written before a key was added, may lack), and the job's create
        // does nothing to it.
        out.extend(
            crate::plan::table::copy(dialect, k, &work, true, true).map_err(|why| (0, 0, why))?,
        );
    } else {
        out.extend(create_copy(dialect, &work, relation, true));
    }
    // Staging tables the job fills without creating start as empty copies.
    for (key, name) in &scratch {
        if !created.contains(key) {
            out.extend(create_copy(dialect, name, key, true));
            // A staging table's `serial` would draw production's sequence.
            if dialect == SqlDialect::Postgres {
                out.push(crate::plan::sql::own_sequences(name));
            }
        }
    }
    out.extend(rewritten.into_iter().map(|r| r.sql));
    let drop_scratch = |key: &String, name: &String| {
        if scratch_views.contains(key) {
            drop_view(dialect, name)
        } else {
            drop_shadow(dialect, name)
        }
    };
    if view {
        for (key, name) in &scratch {
            if scratch_views.contains(key) {
                out.push(drop_scratch(key, name));
            }
        }
        return Ok(out);
    }
    let f = filter.map(|f| format!(" where {f}")).unwrap_or_default();
    // The shadow's partitions are replaced all at once, or not at all.
    let transactions = !matches!(
        dialect,
        SqlDialect::Hive | SqlDialect::Spark | SqlDialect::Databricks | SqlDialect::ClickHouse
    );
    if transactions {
        out.push(begin(dialect).to_string());
    }
    let replaced = known.and_then(|k| {
        crate::plan::table::replace(
            dialect,
            k,
            shadow,
            &work,
            filter,
            crate::plan::table::Into::Shadow,
        )
    });
    if let Some((now, gone)) = replaced {
        out.extend(now);
        out.extend(gone);
    } else {
        out.push(format!(
            "delete from {}{f}",
            quote_relation(dialect, shadow)
        ));
        out.push(
        insert_by_name(dialect, shadow, &work, columns, filter).ok_or_else(|| {
            (
                0,
                0,
                format!(
                    "its output columns are unknown (a `*` ripple cannot expand) and {dialect} cannot insert by name; list the columns in the job"
                ),
            )
        })?,
    );
    }
    if transactions {
        out.push("commit".to_string());
    }
    out.push(drop_shadow(dialect, &work));
    // Views over scratch tables go before the tables they read.
    let (views, tables): (Vec<_>, Vec<_>) =
        scratch.iter().partition(|(k, _)| scratch_views.contains(k));
    for (key, name) in views.into_iter().chain(tables) {
        out.push(drop_scratch(key, name));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_restates_another_day_is_found_from_the_days_it_names() {
        let days = |sql: &str| named_days(sql);
        let d = |s: &str| hour_of(s).div_euclid(24);
        fn hour_of(s: &str) -> i64 {
            crate::time::hour_of_date(s.parse().unwrap())
        }
        // `ds_add(ds, -1)`: the day before, for runs 11 days apart.
        let first =
            days("delete from t where d = '2026-01-09'; select * from s where d = '2026-01-09'");
        let later = days("delete from t where d = '2026-01-20'");
        assert_eq!(day_shift(d("2026-01-10"), &first, &later), Ok(-1));
        // Its own day among them (a window ending on it), or a constant
        // only: its own run.
        let first = days("where d between '2026-01-03' and '2026-01-10' and since > '2020-01-01'");
        let later = days("where d between '2026-01-14' and '2026-01-21' and since > '2020-01-01'");
        assert_eq!(day_shift(d("2026-01-10"), &first, &later), Ok(0));
        assert_eq!(
            day_shift(
                d("2026-01-10"),
                &days("since > 20200101"),
                &days("since > 20200101")
            ),
            Ok(0)
        );
        // `ds_nodash` counts; two other days and not its own: refused.
        let first = days("where k in (20260108, 20260109)");
        let later = days("where k in (20260119, 20260120)");
        assert_eq!(
            day_shift(d("2026-01-10"), &first, &later),
            Err(vec![-2, -1])
        );
        assert!(days("id = 1234567890 and x = '2026-13-45'").is_empty());
    }

    fn shadows() -> HashMap<String, String> {
        [
            ("mart.daily".to_string(), "mart.daily__backfill".to_string()),
            (
                "mart.events".to_string(),
                "mart.events__backfill".to_string(),
            ),
        ]
        .into()
    }

    fn script(sql: &str) -> Result<Vec<String>, (u64, usize, String)> {
        script_knowing(sql, None)
    }

    /// [`script`] with what the plan knows of `mart.daily`.
    fn script_knowing(
        sql: &str,
        known: Option<&crate::plan::table::Known>,
    ) -> Result<Vec<String>, (u64, usize, String)> {
        guarded_script(
            sql,
            SqlDialect::Postgres,
            &ScriptTarget {
                relation: "mart.daily",
                shadow: "mart.daily__backfill",
                shadows: &shadows(),
                filter: Some("\"d\" >= '2026-01-10' and \"d\" < '2026-01-12'"),
                columns: Some(&["d".to_string(), "n".to_string()]),
                known,
                suffix: "",
            },
        )
    }

    #[test]
    fn only_a_create_if_not_exists_starts_from_production_s_copy() {
        // `if not exists` in a default's literal made a plain `create
        // table` look like one that does nothing when the table exists.
        let known = crate::plan::table::Known {
            relation: "mart.daily".to_string(),
            facts: None,
            source: crate::plan::table::Source::Assumed,
            signature: crate::sql::tables::assumed_signature(SqlDialect::Postgres),
            drawn: Vec::new(),
            key: None,
            referenced_by: Vec::new(),
            matviews: Vec::new(),
            given: Vec::new(),
        };
        let run = |sql: &str| script_knowing(sql, Some(&known)).unwrap();
        let insert = "insert into mart.daily (d, n) select d, count(*) from mart.events group by d";
        let copied = |out: &[String]| out.iter().any(|s| s.contains("including all"));
        assert!(copied(&run(&format!(
            "create table if not exists mart.daily (d date, n bigint);\n{insert}"
        ))));
        assert!(!copied(&run(&format!(
            "create table mart.daily (d date, n bigint, note text default 'if not exists');\n{insert}"
        ))));
    }

    #[test]
    fn drop_and_create_go_to_the_work_table() {
        let out = script(
            "drop table if exists mart.daily;\ncreate table mart.daily as select d, count(*) as n from mart.events group by d",
        )
        .unwrap();
        assert_eq!(
            out[0],
            "drop table if exists \"mart\".\"daily__backfill__work\""
        );
        assert!(out[1].starts_with("DROP TABLE IF EXISTS \"mart\".\"daily__backfill__work\""));
        assert!(
            out[2].contains("\"mart\".\"events__backfill\""),
            "{}",
            out[2]
        );
        assert_eq!(out[3], "begin");
        assert_eq!(
            out[4],
            "delete from \"mart\".\"daily__backfill\" where \"d\" >= '2026-01-10' and \"d\" < '2026-01-12'"
        );
        assert!(out[5].starts_with("insert into \"mart\".\"daily__backfill\" (\"d\", \"n\") select \"d\", \"n\" from \"mart\".\"daily__backfill__work\""));
        assert!(
            out.iter()
                .all(|s| !s.to_lowercase().contains("mart.daily "))
        );
    }

    #[test]
    fn an_append_job_starts_from_an_empty_work_table() {
        let out = script("insert into mart.daily select d, count(*) from mart.events group by d")
            .unwrap();
        assert_eq!(
            out[0],
            "drop table if exists \"mart\".\"daily__backfill__work\""
        );
        assert_eq!(
            out[1],
            "create table \"mart\".\"daily__backfill__work\" (like \"mart\".\"daily\" including all)"
        );
    }

    #[test]
    fn staging_tables_get_scratch_names_and_temp_tables_stay() {
        let out = script(
            "create temp table t as select * from mart.events;\ncreate table stage.x as select * from t;\ninsert into mart.daily select d, 1 from stage.x;\ndrop table stage.x",
        )
        .unwrap();
        assert!(out.iter().any(|s| s.contains("\"stage\".\"x__scratch\"")));
        assert!(
            !out.iter()
                .any(|s| s.contains("stage.x ") || s.ends_with("stage.x"))
        );
        assert_eq!(
            out.last().unwrap(),
            "drop table if exists \"stage\".\"x__scratch\""
        );
    }

    #[test]
    fn rows_are_never_changed_through_a_view_the_job_makes() {
        // A temporary view over production is production's table: a
        // delete, an insert or an update through it change that table,
        // and a task leaving out the view's creation would reach a table
        // of the view's name.
        for (sql, line) in [
            (
                "create temp view tv as select * from raw.sentinel where x > 2;\ndelete from tv;\ninsert into mart.daily select d, 1 from mart.events",
                2,
            ),
            (
                "create temp view tv as select * from raw.sentinel;\ninsert into tv values (99);\ninsert into mart.daily select d, 1 from mart.events",
                2,
            ),
            (
                "create view mart.v as select * from raw.sentinel;\nupdate mart.v set x = 0;\ninsert into mart.daily select d, 1 from mart.events",
                2,
            ),
        ] {
            let (at, _, why) = script(sql).unwrap_err();
            assert_eq!(at, line, "{sql}: {why}");
            assert!(why.contains("changes rows through the view"), "{why}");
        }
        // Reading a view the job makes stays allowed.
        assert!(
            script("create temp view tv as select * from mart.events;\ninsert into mart.daily select d, 1 from tv")
                .is_ok()
        );
    }

    #[test]
    fn a_temporary_tables_name_never_reaches_production() {
        // Kept: the name means the temporary table wherever it is used.
        assert!(
            script("create temp table stage as select * from mart.events;\ninsert into mart.daily select d, 1 from stage;\ndrop table stage")
                .is_ok()
        );
        // Read from the statements, not their text: literals are data.
        assert!(
            script("create temp table stage as select * from mart.events;\ninsert into mart.daily select d, 1 from stage where 'on commit drop, search_path pg_temp' <> ''")
                .is_ok()
        );
        // Refused: after `discard`, a drop, or before the creation, or
        // with `pg_temp` put after a schema, `stage` is production's.
        for (sql, line) in [
            (
                "create temp table stage (d date);\ndiscard temp;\ninsert into stage values ('2026-01-10');\ninsert into mart.daily select d, 1 from mart.events",
                2,
            ),
            (
                "create temp table stage (d date);\ndrop table stage;\ninsert into stage values ('2026-01-10');\ninsert into mart.daily select d, 1 from mart.events",
                3,
            ),
            (
                "drop table if exists stage;\ncreate temp table stage (d date);\ninsert into mart.daily select d, 1 from stage",
                1,
            ),
            (
                "create temp table stage (d date);\nset search_path = public, pg_temp;\ninsert into stage values ('2026-01-10');\ninsert into mart.daily select d, 1 from mart.events",
                2,
            ),
            (
                "create temp table stage (d date) on commit drop;\ninsert into mart.daily select d, 1 from stage",
                1,
            ),
            // A rolled-back transaction takes its temporary tables with it.
            (
                "begin;\ncreate temp table stage (x int);\nrollback;\ndelete from stage;\ninsert into mart.daily select d, 1 from mart.events",
                3,
            ),
        ] {
            let (at, _, why) = script(sql).unwrap_err();
            assert_eq!(at, line, "{sql}: {why}");
            assert!(why.contains("stage"), "{why}");
        }
    }

    #[test]
    fn what_cannot_be_redirected_is_refused_with_its_line() {
        let (line, n, why) =
            script("insert into mart.daily select 1, 1;\n\ndrop schema mart cascade").unwrap_err();
        assert_eq!((line, n), (3, 2));
        assert!(why.contains("DROP SCHEMA"), "{why}");
        let (_, _, why) = script("grant select on all tables in schema mart to r").unwrap_err();
        assert!(why.contains("grant"), "{why}");
    }
}
