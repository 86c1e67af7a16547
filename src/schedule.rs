//! Production schedules: each production DAG's schedule expanded to the
//! times it runs over a horizon; with its expected duration, each run is a
//! blackout window the backfill planner must stay out of.
//!
//! UTC throughout: cron expressions are read in UTC (Airflow's default
//! timezone), and a run occupies `[tick, tick + duration)`, the tick being
//! when the scheduler fires it. Cron expansion is croner's (which speaks
//! jiff 0.2; converted here, at this one boundary).

use serde::Serialize;

use crate::config::Config;
use crate::project::Dag;
use crate::time::{Hour, datetime_of, hour_of_date};

/// Minutes since 1970-01-01T00:00 UTC.
pub type Minute = i64;

/// A UTC instant as the CLI takes it — `2026-02-01`, `2026-02-01T20` or
/// `2026-02-01T20:30` — in minutes since the epoch.
pub fn parse_minute(s: &str) -> Result<Minute, String> {
    let (date, minutes) = match s.split_once(':') {
        Some((head, tail)) if head.contains('T') => (
            head,
            tail.parse::<i64>()
                .ok()
                .filter(|m| (0..60).contains(m))
                .ok_or_else(|| format!("`{s}` is not a time (minutes run from 00 to 59)"))?,
        ),
        _ => (s, 0),
    };
    Ok(crate::time::TimeKey::parse(date)?.start * 60 + minutes)
}

/// Expected duration of a production run when `ripple.yml` gives none.
pub const DEFAULT_DURATION_MINUTES: i64 = 60;

/// Runs of one DAG beyond this many in a horizon are not listed.
const MAX_RUNS: usize = 100_000;

/// Runs listed in all, every DAG together (by DAG id, in order): 1,000
/// DAGs of a minute cron in a 170-byte file once listed 100 million runs
/// (91 s, 20 GB). A DAG past it is listed as far as it goes and truncated,
/// so a plan counts the rest of its horizon as busy.
const MAX_TOTAL_RUNS: usize = 1_000_000;

/// One production run: a blackout window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Run {
    /// When it starts, `2026-01-10T02:00Z`.
    pub start: String,
    /// When it is expected to end.
    pub end: String,
    #[serde(skip)]
    /// Start, in minutes.
    pub start_minute: Minute,
    #[serde(skip)]
    /// End, in minutes.
    pub end_minute: Minute,
}

impl Run {
    /// The run starting at minute `t` and lasting `duration` minutes.
    fn at(t: Minute, duration: Minute) -> Run {
        Run {
            start: display_minute(t),
            end: display_minute(t + duration),
            start_minute: t,
            end_minute: t + duration,
        }
    }
}

/// One DAG's runs in the horizon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DagRuns {
    /// The DAG.
    pub dag_id: String,
    /// The schedule as written.
    pub schedule: String,
    /// Where the schedule comes from (`dags/x.py:12`, `ripple.yml`).
    pub source: String,
    /// Expected duration of a run, in minutes.
    pub duration_minutes: i64,
    /// Where the duration comes from.
    pub duration_source: String,
    /// The runs, in time order.
    pub runs: Vec<Run>,
    /// Set when runs were cut at the listing limit.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// For a DAG started by others (datasets, TriggerDagRunOperator): the
    /// DAGs whose runs start its runs, each as one of theirs ends.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

/// A DAG with no time schedule (`None`, `@once`, dataset-driven), or one
/// ripple cannot read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unscheduled {
    /// The DAG.
    pub dag_id: String,
    /// The schedule as written.
    pub schedule: String,
    /// Why it has no runs here.
    pub why: String,
    /// Its schedule is meant to be time-based but ripple cannot read it
    /// (a bad cron, a computed timedelta): its runs are unknown, not absent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unreadable: bool,
}

/// Blackout windows over `[from, to)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// Horizon start.
    pub from: String,
    /// Horizon end (exclusive).
    pub to: String,
    /// DAGs that run in the horizon.
    pub dags: Vec<DagRuns>,
    /// DAGs without time-based runs.
    pub not_scheduled: Vec<Unscheduled>,
}

/// Expands every production schedule over `[from, to)`: the DAGs read from
/// Airflow files, and `backfill.production` entries of `ripple.yml` (whose
/// `cron` wins for a DAG both name).
pub fn production_schedule(dags: &[Dag], config: &Config, from: Hour, to: Hour) -> Schedule {
    let (from_m, to_m) = (from * 60, to * 60);
    type Entry = (String, String, String, Option<String>, Option<String>);
    let mut entries: Vec<Entry> = Vec::new();
    for d in dags {
        let configured = config
            .backfill
            .production
            .iter()
            .find(|p| p.dag == d.dag_id);
        let (schedule, source, zone) = match configured {
            Some(p) => (p.cron.clone(), "ripple.yml".to_string(), None),
            None => (
                d.schedule.clone().unwrap_or_else(|| "None".into()),
                format!("{}:{}", d.file, d.line),
                d.schedule_zone.clone(),
            ),
        };
        entries.push((
            d.dag_id.clone(),
            schedule,
            source,
            d.start_date.clone(),
            zone,
        ));
    }
    for p in &config.backfill.production {
        if !dags.iter().any(|d| d.dag_id == p.dag) {
            entries.push((
                p.dag.clone(),
                p.cron.clone(),
                "ripple.yml".to_string(),
                None,
                None,
            ));
        }
    }
    entries.sort();
    let mut out = Schedule {
        from: display_minute(from_m),
        to: display_minute(to_m),
        dags: Vec::new(),
        not_scheduled: Vec::new(),
    };
    // A run that ended before the horizon may have started a DAG whose run
    // (or a chain of them) reaches into it: runs are worked out from as far
    // back as every started DAG's runs together last (capped at 30 days).
    let lookback: i64 = dags
        .iter()
        .filter(|d| d.upstream_dags.iter().any(|e| e.via.starts_run()))
        .map(|d| duration_of(config, &d.dag_id).0)
        .fold(0i64, |a, b| a.saturating_add(b))
        .min(30 * 1440);
    let mut budget = MAX_TOTAL_RUNS;
    for (dag_id, schedule, source, start_date, zone) in entries {
        let (duration, duration_source) = duration_of(config, &dag_id);
        let limit = MAX_RUNS.min(budget);
        // A timetable's own zone, else the start date's (Airflow's rule).
        let clock = zone.as_deref().or(start_date.as_deref());
        match ticks(
            &schedule,
            (start_date.as_deref(), clock),
            from_m - duration - lookback,
            to_m,
            limit,
        ) {
            Ok((ticks, truncated)) => {
                let runs: Vec<Run> = ticks
                    .into_iter()
                    .map(|t| Run::at(t, duration))
                    .filter(|r| r.end_minute > from_m - lookback)
                    .collect();
                budget -= runs.len();
                out.dags.push(DagRuns {
                    dag_id,
                    schedule,
                    source,
                    duration_minutes: duration,
                    duration_source,
                    runs,
                    truncated,
                    after: Vec::new(),
                });
            }
            Err(NoRuns { why, unreadable }) => out.not_scheduled.push(Unscheduled {
                dag_id,
                schedule,
                why,
                unreadable,
            }),
        }
    }
    let starters = starters_of(dags);
    started_by_others(
        &mut out,
        (dags, &starters),
        config,
        (from_m - lookback, to_m),
        budget,
    );
    let placed: usize = out.dags.iter().map(|d| d.runs.len()).sum();
    also_started(
        &mut out,
        &starters,
        (from_m - lookback, to_m),
        MAX_TOTAL_RUNS.saturating_sub(placed),
    );
    // The runs before the horizon were only to start others.
    for d in &mut out.dags {
        d.runs.retain(|r| r.end_minute > from_m);
    }
    out
}

/// Moves DAGs without a time schedule that other DAGs start (a dataset
/// they produce, a TriggerDagRunOperator) from `not_scheduled` to `dags`:
/// a run as each run of a starter ends. Conservative for blackouts: a
/// schedule on several datasets runs once all are updated, here after each.
/// A DAG is placed once all its starters are (chains of them in turn); in a
/// cycle of starters none is.
fn started_by_others(
    out: &mut Schedule,
    (dags, starters): (&[Dag], &Starters),
    config: &Config,
    (from_m, to_m): (Minute, Minute),
    mut budget: usize,
) {
    loop {
        let placed: std::collections::BTreeSet<&str> =
            out.dags.iter().map(|d| d.dag_id.as_str()).collect();
        let waiting: std::collections::BTreeSet<&str> = out
            .not_scheduled
            .iter()
            .filter(|u| !u.unreadable && starters.contains_key(u.dag_id.as_str()))
            .map(|u| u.dag_id.as_str())
            .collect();
        let ready = out.not_scheduled.iter().position(|u| {
            let id = u.dag_id.as_str();
            waiting.contains(id)
                && starters[id].iter().all(|s| !waiting.contains(s))
                && starters[id].iter().any(|s| placed.contains(s))
        });
        let Some(i) = ready else {
            let placed: std::collections::BTreeSet<String> =
                placed.iter().map(|s| s.to_string()).collect();
            unknown_cycles(out, starters, &placed);
            break;
        };
        let u = out.not_scheduled.remove(i);
        let (duration, duration_source) = duration_of(config, &u.dag_id);
        let after: Vec<String> = starters[u.dag_id.as_str()]
            .iter()
            .filter(|s| placed.contains(**s))
            .map(|s| s.to_string())
            .collect();
        let mut starts: Vec<Minute> = out
            .dags
            .iter()
            .filter(|d| after.contains(&d.dag_id))
            .flat_map(|d| d.runs.iter().map(|r| r.end_minute))
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let mut runs: Vec<Run> = starts
            .into_iter()
            .map(|t| Run::at(t, duration))
            .filter(|r| r.end_minute > from_m && r.start_minute < to_m)
            .collect();
        let truncated = runs.len() > budget;
        runs.truncate(budget);
        budget -= runs.len();
        let source = dags
            .iter()
            .find(|d| d.dag_id == u.dag_id)
            .map(|d| format!("{}:{}", d.file, d.line))
            .unwrap_or_default();
        out.dags.push(DagRuns {
            dag_id: u.dag_id,
            schedule: u.schedule,
            source,
            duration_minutes: duration,
            duration_source,
            runs,
            truncated,
            after,
        });
    }
    out.dags.sort_by(|a, b| a.dag_id.cmp(&b.dag_id));
}

/// Runs other DAGs start (a dataset or asset they update, a
/// `TriggerDagRunOperator`) of DAGs that also have a time schedule
/// (`AssetOrTimeSchedule`, a cron DAG a trigger starts too), after each
/// starter's run, as for DAGs only others start; repeated while a DAG
/// gains runs, a few levels deep (round 29: `report`'s asset run at 02:30
/// was missing, and a plan was placed on it).
fn also_started(
    out: &mut Schedule,
    starters: &Starters,
    (from_m, to_m): (Minute, Minute),
    mut budget: usize,
) {
    for _ in 0..8 {
        let ends: std::collections::BTreeMap<String, Vec<Minute>> = out
            .dags
            .iter()
            .map(|d| {
                (
                    d.dag_id.clone(),
                    d.runs.iter().map(|r| r.end_minute).collect(),
                )
            })
            .collect();
        let mut changed = false;
        for d in &mut out.dags {
            let Some(by) = starters.get(d.dag_id.as_str()) else {
                continue;
            };
            let mut have: std::collections::BTreeSet<Minute> =
                d.runs.iter().map(|r| r.start_minute).collect();
            for s in by {
                let Some(times) = ends.get(*s).filter(|t| !t.is_empty()) else {
                    continue;
                };
                if !d.after.iter().any(|a| a == s) {
                    d.after.push(s.to_string());
                    d.after.sort();
                }
                for &t in times {
                    let run = Run::at(t, d.duration_minutes);
                    if run.end_minute > from_m && run.start_minute < to_m && have.insert(t) {
                        if budget == 0 {
                            d.truncated = true;
                            continue;
                        }
                        budget -= 1;
                        d.runs.push(run);
                        changed = true;
                    }
                }
            }
            d.runs.sort_by_key(|r| r.start_minute);
        }
        if !changed {
            break;
        }
    }
}

/// The DAGs that start each DAG (a dataset or asset they update, a
/// `TriggerDagRunOperator`), by the started DAG's id.
type Starters<'a> = std::collections::BTreeMap<&'a str, std::collections::BTreeSet<&'a str>>;

fn starters_of(dags: &[Dag]) -> Starters<'_> {
    let mut starters = Starters::new();
    for d in dags {
        for e in d.upstream_dags.iter().filter(|e| e.via.starts_run()) {
            starters
                .entry(d.dag_id.as_str())
                .or_default()
                .insert(e.dag_id.as_str());
        }
    }
    starters
}

/// DAGs left waiting once no more can be placed, that a DAG with runs
/// starts through a cycle of starters (or itself, "run until done"): they
/// do run, but when cannot be worked out, so their runs are unknown (a plan
/// with `--start` is refused) rather than absent. One only started by DAGs
/// triggered by hand has none, as they have.
fn unknown_cycles(
    out: &mut Schedule,
    starters: &Starters,
    placed: &std::collections::BTreeSet<String>,
) {
    let mut unknown: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    loop {
        let next: Vec<String> = out
            .not_scheduled
            .iter()
            .filter(|u| !u.unreadable && !unknown.contains(&u.dag_id))
            .filter(|u| {
                starters.get(u.dag_id.as_str()).is_some_and(|s| {
                    s.iter()
                        .any(|s| placed.contains(*s) || unknown.contains(*s))
                })
            })
            .map(|u| u.dag_id.clone())
            .collect();
        if next.is_empty() {
            break;
        }
        unknown.extend(next);
    }
    for u in &mut out.not_scheduled {
        if unknown.contains(&u.dag_id) {
            let by: Vec<&str> = starters[u.dag_id.as_str()].iter().copied().collect();
            u.unreadable = true;
            u.why = format!(
                "started by {} in a cycle of DAGs starting each other (or itself), so when it runs cannot be worked out; give it a cron and duration in ripple.yml (backfill.production)",
                by.join(", ")
            );
        }
    }
}

/// The expected duration of `dag`'s runs, and where it comes from.
fn duration_of(config: &Config, dag: &str) -> (i64, String) {
    match config.backfill.production.iter().find(|p| p.dag == dag) {
        Some(p) if p.duration.is_empty() => (DEFAULT_DURATION_MINUTES, "default".to_string()),
        Some(p) => match crate::time::parse_duration(&p.duration) {
            Some(m) => (m, "ripple.yml".to_string()),
            None => (
                DEFAULT_DURATION_MINUTES,
                format!("default (ripple.yml's `{}` is not a duration)", p.duration),
            ),
        },
        None => (DEFAULT_DURATION_MINUTES, "default".to_string()),
    }
}

/// Why a schedule has no runs to list.
#[derive(Debug)]
struct NoRuns {
    why: String,
    /// Time-based, but not readable (see [`Unscheduled::unreadable`]).
    unreadable: bool,
}

impl From<String> for NoRuns {
    fn from(why: String) -> NoRuns {
        NoRuns {
            why,
            unreadable: true,
        }
    }
}

/// Ticks of `schedule` in `[from, to)`, minutes; `Err` says why there are
/// none to compute.
fn ticks(
    schedule: &str,
    (start_date, clock): (Option<&str>, Option<&str>),
    from: Minute,
    to: Minute,
    limit: usize,
) -> Result<(Vec<Minute>, bool), NoRuns> {
    let s = schedule.trim().trim_matches(['"', '\'']);
    let not_timed = |why: &str| {
        Err(NoRuns {
            why: why.to_string(),
            unreadable: false,
        })
    };
    let cron = match s {
        "None" | "" => {
            return not_timed("not scheduled (schedule=None): triggered by hand or by other DAGs");
        }
        "@once" => return not_timed("runs once, at its start date"),
        "datasets" => return not_timed("scheduled by datasets, not by time"),
        "@continuous" => {
            return Err(NoRuns::from(
                "runs continuously; give it a cron in ripple.yml's backfill.production".to_string(),
            ));
        }
        other if other.starts_with("timedelta(") => {
            return timedelta_ticks(other, start_date, from, to, limit).map_err(NoRuns::from);
        }
        other => other,
    };
    // `cfg["schedule"]`, `SCHEDULE`, `get_cron()`: an expression, not a
    // cron of one field.
    let expression = cron.contains(['[', '(', '{', '.'])
        || (!cron.contains(char::is_whitespace)
            && cron.starts_with(|c: char| c.is_alphabetic() || c == '_'));
    if expression {
        return Err(NoRuns::from(format!(
            "`{cron}` is an expression ripple cannot read as a schedule; write the schedule as a literal, or give it in ripple.yml's backfill.production"
        )));
    }
    let parsed = crate::time::parse_cron(cron).map_err(NoRuns::from)?;
    // Airflow reads a cron in the zone of the DAG's start date
    // (`pendulum.datetime(..., tz="America/New_York")`): `0 2 * * *` is
    // 02:00 there, 07:00Z in January. The cron runs over that zone's clock
    // and each tick is taken back to UTC.
    let zone = clock.and_then(start_zone);
    let offset = |m: Minute| -> Minute {
        zone.as_ref()
            .and_then(|tz| {
                jiff::Timestamp::from_second(m * 60)
                    .ok()
                    .map(|t| tz.to_offset(t))
            })
            .map_or(0, |o| Minute::from(o.seconds()) / 60)
    };
    let to_utc = |local: Minute| -> Minute {
        let Some(tz) = zone.as_ref() else {
            return local;
        };
        let (date, hour) = datetime_of(local.div_euclid(60));
        let civil = date.at(hour as i8, local.rem_euclid(60) as i8, 0, 0);
        tz.to_ambiguous_zoned_datetime(civil)
            .compatible()
            .map_or(local, |z| z.timestamp().as_second().div_euclid(60))
    };
    let start = to_jiff02(from + offset(from));
    let mut out = Vec::new();
    let mut truncated = false;
    for dt in parsed.iter_from(start, croner::Direction::Forward) {
        let m = to_utc(from_jiff02(&dt));
        if m < from {
            continue;
        }
        if m >= to {
            break;
        }
        if out.len() >= limit {
            truncated = true;
            break;
        }
        out.push(m);
    }
    Ok((out, truncated))
}

/// `timedelta(days=1, hours=6)`: every interval, counted from the DAG's
/// `start_date` when it is a literal `datetime(Y, M, D[, h[, m]])`, else
/// from 1970-01-01T00:00Z.
fn timedelta_ticks(
    text: &str,
    start_date: Option<&str>,
    from: Minute,
    to: Minute,
    limit: usize,
) -> Result<(Vec<Minute>, bool), String> {
    let inner = text.trim_start_matches("timedelta(").trim_end_matches(')');
    let mut step = 0i64;
    for part in inner.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!(
                "`{text}`: write timedelta with keywords (days=, hours=, minutes=)"
            ));
        };
        let v: i64 = v
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not a literal timedelta"))?;
        step += v * match k.trim() {
            "weeks" => 10080,
            "days" => 1440,
            "hours" => 60,
            "minutes" => 1,
            other => return Err(format!("`{text}`: `{other}` is not supported")),
        };
    }
    if step <= 0 {
        return Err(format!("`{text}` is not a positive interval"));
    }
    let anchor = start_date.and_then(parse_datetime_call).unwrap_or(0);
    let first = if from <= anchor {
        anchor
    } else {
        anchor + (from - anchor + step - 1) / step * step
    };
    let mut out = Vec::new();
    let mut t = first;
    while t < to && out.len() < limit {
        out.push(t);
        t += step;
    }
    Ok((out, t < to))
}

/// The zone a DAG's start date names (`pendulum.datetime(..., tz="X")`,
/// `datetime(..., tzinfo=ZoneInfo("X"))`, `pendulum.timezone("X")`), when
/// it is one ripple knows; UTC's is none.
fn start_zone(text: &str) -> Option<jiff::tz::TimeZone> {
    let at = ["tz=", "tzinfo=", "timezone(", "timezone="]
        .iter()
        .filter_map(|k| text.find(k))
        .min()?;
    let rest = &text[at..];
    let open = rest.find(['"', '\''])?;
    let quote = rest[open..].chars().next()?;
    let inner = &rest[open + 1..];
    let name = &inner[..inner.find(quote)?];
    let tz = jiff::tz::TimeZone::get(name).ok()?;
    (!matches!(name, "UTC" | "Etc/UTC")).then_some(tz)
}

/// `datetime(2024, 1, 1)` / `pendulum.datetime(2024, 1, 1, tz="UTC")` →
/// minutes.
fn parse_datetime_call(text: &str) -> Option<Minute> {
    let args = text.split_once('(')?.1.trim_end_matches(')');
    let nums: Vec<i64> = args
        .split(',')
        .filter(|a| !a.contains('='))
        .map(|a| a.trim().parse().ok())
        .collect::<Option<_>>()?;
    let (y, m, d) = (*nums.first()?, *nums.get(1)?, *nums.get(2)?);
    let date = jiff::civil::Date::new(
        i16::try_from(y).ok()?,
        i8::try_from(m).ok()?,
        i8::try_from(d).ok()?,
    )
    .ok()?;
    Some(hour_of_date(date) * 60 + nums.get(3).unwrap_or(&0) * 60 + nums.get(4).unwrap_or(&0))
}

fn to_jiff02(m: Minute) -> jiff02::civil::DateTime {
    let (date, hour) = datetime_of(m.div_euclid(60));
    let minute = m.rem_euclid(60);
    jiff02::civil::DateTime::new(
        date.year(),
        date.month(),
        date.day(),
        hour as i8,
        minute as i8,
        0,
        0,
    )
    .unwrap_or(jiff02::civil::DateTime::constant(1970, 1, 1, 0, 0, 0, 0))
}

fn from_jiff02(dt: &jiff02::civil::DateTime) -> Minute {
    let date = jiff::civil::Date::new(dt.year(), dt.month(), dt.day())
        .unwrap_or(jiff::civil::Date::constant(1970, 1, 1));
    hour_of_date(date) * 60 + i64::from(dt.hour()) * 60 + i64::from(dt.minute())
}

/// Minutes as `2026-01-10T02:00Z`.
pub fn display_minute(m: Minute) -> String {
    let (date, hour) = datetime_of(m.div_euclid(60));
    format!("{date}T{hour:02}:{:02}Z", m.rem_euclid(60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeKey;

    fn m(s: &str) -> Minute {
        TimeKey::parse(s).unwrap().start * 60
    }

    #[test]
    fn an_expression_is_named_as_one_not_as_a_cron_of_one_field() {
        for e in [
            "cfg[\"schedule\"]",
            "SCHEDULE",
            "get_cron()",
            "settings.cron",
        ] {
            let Err(no) = ticks(e, (None, None), 0, 60 * 24, MAX_RUNS) else {
                panic!("{e} was read as a schedule");
            };
            assert!(
                no.unreadable && no.why.contains("is an expression"),
                "{e}: {}",
                no.why
            );
        }
        assert!(ticks("0 2 * * *", (None, None), 0, 60 * 24 * 2, MAX_RUNS).is_ok());
    }

    #[test]
    fn a_cron_runs_on_the_clock_of_the_start_date_s_zone() {
        // Airflow's documented way to run at local time: 02:00 New York is
        // 07:00Z in January, 06:00Z in July (it was listed at 02:00Z).
        let at = |start: &str, from: &str, to: &str| -> Vec<String> {
            ticks(
                "0 2 * * *",
                (Some(start), Some(start)),
                m(from),
                m(to),
                MAX_RUNS,
            )
            .unwrap()
            .0
            .into_iter()
            .map(display_minute)
            .collect()
        };
        for start in [
            r#"pendulum.datetime(2026, 1, 1, tz="America/New_York")"#,
            r#"datetime(2026, 1, 1, tzinfo=ZoneInfo('America/New_York'))"#,
        ] {
            assert_eq!(
                at(start, "2026-01-10", "2026-01-12"),
                ["2026-01-10T07:00Z", "2026-01-11T07:00Z"]
            );
            assert_eq!(at(start, "2026-07-10", "2026-07-11"), ["2026-07-10T06:00Z"]);
        }
        let utc = r#"pendulum.datetime(2026, 1, 1, tz="UTC")"#;
        assert_eq!(at(utc, "2026-01-10", "2026-01-11"), ["2026-01-10T02:00Z"]);
    }

    fn run_starts(schedule: &str, from: &str, to: &str) -> Vec<String> {
        ticks(schedule, (None, None), m(from), m(to), MAX_RUNS)
            .unwrap()
            .0
            .into_iter()
            .map(display_minute)
            .collect()
    }

    #[test]
    fn presets_expand_in_utc() {
        assert_eq!(
            run_starts("@daily", "2026-01-10", "2026-01-12"),
            ["2026-01-10T00:00Z", "2026-01-11T00:00Z"]
        );
        assert_eq!(
            run_starts("@hourly", "2026-01-10T22", "2026-01-11T01").len(),
            3
        );
        assert_eq!(
            run_starts("@weekly", "2026-01-01", "2026-01-15"),
            ["2026-01-04T00:00Z", "2026-01-11T00:00Z"]
        );
        assert_eq!(
            run_starts("@monthly", "2026-01-15", "2026-04-01"),
            ["2026-02-01T00:00Z", "2026-03-01T00:00Z"]
        );
        assert_eq!(
            run_starts("@yearly", "2025-06-01", "2027-06-01"),
            ["2026-01-01T00:00Z", "2027-01-01T00:00Z"]
        );
    }

    #[test]
    fn ranges_steps_month_ends_and_leap_days() {
        assert_eq!(
            run_starts("30 2 * * 1-5", "2026-01-09", "2026-01-13"),
            ["2026-01-09T02:30Z", "2026-01-12T02:30Z"]
        );
        assert_eq!(
            run_starts("*/20 3 * * *", "2026-01-10", "2026-01-11"),
            [
                "2026-01-10T03:00Z",
                "2026-01-10T03:20Z",
                "2026-01-10T03:40Z"
            ]
        );
        // The 31st exists in seven months only.
        assert_eq!(
            run_starts("0 0 31 * *", "2026-01-01", "2027-01-01").len(),
            7
        );
        // February 29th: 2028 only, in 2026..2030.
        assert_eq!(
            run_starts("0 0 29 2 *", "2026-01-01", "2030-01-01"),
            ["2028-02-29T00:00Z"]
        );
    }

    #[test]
    fn a_timetable_s_zone_is_the_clock_of_its_cron() {
        // Round 29: `CronTriggerTimetable("0 2 * * *", timezone="America/
        // New_York")` ran at 02:00Z; Airflow runs it at 07:00Z in January.
        let runs = |clock: Option<&str>| {
            ticks(
                "0 2 * * *",
                (Some("datetime(2026, 1, 1)"), clock),
                m("2026-01-10"),
                m("2026-01-11"),
                MAX_RUNS,
            )
            .unwrap()
            .0
        };
        assert_eq!(
            runs(Some("timezone=\"America/New_York\"")),
            [m("2026-01-10") + 7 * 60]
        );
        assert_eq!(runs(Some("timezone=\"UTC\"")), [m("2026-01-10") + 2 * 60]);
        assert_eq!(runs(None), [m("2026-01-10") + 2 * 60]);
    }

    #[test]
    fn timedeltas_count_from_the_start_date() {
        let t = |sd: Option<&str>| {
            ticks(
                "timedelta(hours=6)",
                (sd, sd),
                m("2026-01-10"),
                m("2026-01-11"),
                MAX_RUNS,
            )
            .unwrap()
            .0
        };
        assert_eq!(
            t(Some("datetime(2024, 1, 1, 3)"))
                .into_iter()
                .map(display_minute)
                .collect::<Vec<_>>(),
            [
                "2026-01-10T03:00Z",
                "2026-01-10T09:00Z",
                "2026-01-10T15:00Z",
                "2026-01-10T21:00Z"
            ]
        );
        assert_eq!(t(None).len(), 4);
        assert!(ticks("timedelta(seconds=5)", (None, None), 0, 60, MAX_RUNS).is_err());
    }

    #[test]
    fn unscheduled_and_unreadable_schedules_say_why() {
        let none = ticks("None", (None, None), 0, 60, MAX_RUNS).unwrap_err();
        assert!(none.why.contains("schedule=None") && !none.unreadable);
        let datasets = ticks("datasets", (None, None), 0, 60, MAX_RUNS).unwrap_err();
        assert!(datasets.why.contains("datasets") && !datasets.unreadable);
        let bad = ticks("61 * * * *", (None, None), 0, 60, MAX_RUNS).unwrap_err();
        assert!(bad.why.contains("not a cron expression") && bad.unreadable);
    }

    #[test]
    fn durations_parse() {
        use crate::time::parse_duration;
        assert_eq!(parse_duration("90m"), Some(90));
        assert_eq!(parse_duration("2h"), Some(120));
        assert_eq!(parse_duration("1h30m"), Some(90));
        assert_eq!(parse_duration("45"), Some(45));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("0m"), None);
    }

    #[test]
    fn runs_overlapping_the_horizon_start_are_kept() {
        let mut config = Config::default();
        config
            .backfill
            .production
            .push(crate::config::ProductionRun {
                dag: "daily_etl".into(),
                cron: "0 2 * * *".into(),
                duration: "90m".into(),
            });
        let s = production_schedule(
            &[],
            &config,
            TimeKey::parse("2026-01-10T03").unwrap().start,
            TimeKey::parse("2026-01-11T03").unwrap().start,
        );
        let runs: Vec<(&str, &str)> = s.dags[0]
            .runs
            .iter()
            .map(|r| (r.start.as_str(), r.end.as_str()))
            .collect();
        assert_eq!(
            runs,
            [
                ("2026-01-10T02:00Z", "2026-01-10T03:30Z"),
                ("2026-01-11T02:00Z", "2026-01-11T03:30Z")
            ]
        );
        assert_eq!(s.dags[0].duration_source, "ripple.yml");
    }
}
