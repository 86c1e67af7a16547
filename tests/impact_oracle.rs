//! The differential oracle: impact is never short.
//!
//! Random small pipelines of plain SQL jobs (daily, weekly and monthly
//! aggregates, joins, self-joins on shifted dates, window functions of every
//! form: `lag`/`lead`, `rows` and `range` frames, running totals,
//! month-to-date, `first_value`, ranks inside a day; keys encoded as
//! integers, text days and months, epoch seconds; hourly clicks kept as
//! instants, and days of other zones, declared or left to the SQL) are run
//! on DuckDB twice:
//! on good data, and on data corrupted for a random range of days. The
//! partitions whose rows really differ between the two runs are the truth;
//! ripple's impact of the corrupted range must contain every one of them.
//! How much wider ripple's answer is (inside the data's span) is printed as
//! the over-approximation ratio. A failing case shrinks to a minimal
//! pipeline. `RIPPLE_ORACLE_CASES` sets how many pipelines run (default 300).

#[path = "support/engines.rs"]
mod engines;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// The data's span: 2026-01-01 .. 2026-03-31.
const DAYS: i64 = 90;

/// One job's form; `up` picks its upstream among the earlier models.
#[derive(Debug, Clone)]
enum Form {
    /// `sum(v)` by day of its upstream.
    DailySum,
    /// `v - lag(v, n)`.
    Lag(i64),
    /// `v + lead(v, n)`.
    Lead(i64),
    /// `rows between n preceding and current row`.
    Rows(i64),
    /// `rows between current row and n following`.
    RowsAhead(i64),
    /// `range between interval 'n days' preceding and current row`.
    RangeDays(i64),
    /// A running total with the default frame.
    Cumulative,
    /// A running total in its month.
    MonthToDate,
    /// `v - first_value(v)` over the month so far.
    FirstOfMonth,
    /// `sum(v)` by week (`date_trunc('week', d)`).
    Weekly,
    /// `sum(v)` by month.
    Monthly,
    /// `a.v - b.v` with `b.d = a.d - interval 'n days'`.
    Shift(i64),
    /// `sum(b.v)` over `b.d between a.d - interval 'n days' and a.d`.
    Between(i64),
    /// The largest raw row of each day, by `row_number()` inside the day.
    TopOfDay,
    /// Two upstreams joined on the day.
    Join,
    /// `lag(v, n)` over a rolling sum of `m` rows, in one job.
    Nested(i64, i64),
    /// `sum(b.v)` over `b.d > a.d and b.d <= a.d + n`: the days ahead.
    Ahead(i64),
    /// `date_diff('day', b.d, a.d) between 0 and n`.
    DateDiff(i64),
    /// `rank() over (order by v desc)`: ordered by a value, not by time.
    RankByValue,
    /// `lag` over monthly sums computed inside the job.
    MonthlyLag,
    /// The day as an integer `yyyymmdd` key.
    IntKey,
    /// The day as a text `yyyymmdd` key, summed.
    TextDayKey,
    /// The month as a text `YYYY-MM` key, summed.
    TextMonth,
    /// The day as epoch seconds.
    EpochKey,
    /// Hourly sums of the hourly clicks (`timestamptz`).
    Hourly,
    /// Daily sums of the clicks in a zone's days (`timezone(zone, ts)`),
    /// the zone declared in ripple.yml or left to the SQL.
    Zoned(usize, bool),
}

/// Zones the zoned form cuts days in: behind UTC with daylight saving,
/// ahead by a half hour, ahead with daylight saving.
const ZONES: [&str; 3] = ["America/New_York", "Asia/Kolkata", "Europe/Paris"];

impl Form {
    /// Whether the form needs a daily upstream of one row per day.
    fn reads_daily(&self) -> bool {
        !matches!(self, Form::TopOfDay | Form::Hourly | Form::Zoned(..))
    }

    /// Whether what it writes is a daily `d date` a later job may read.
    fn writes_daily_d(&self) -> bool {
        self.grain() == "day"
            && !matches!(
                self,
                Form::IntKey | Form::TextDayKey | Form::EpochKey | Form::Hourly
            )
    }

    /// SQL giving each written row's partition as text: the day
    /// (`YYYY-MM-DD`, the week's Monday, the month's first day), the month
    /// (`YYYY-MM`) or the hour (`YYYY-MM-DDTHH`).
    fn key_sql(&self) -> &'static str {
        match self {
            Form::IntKey => "strftime(strptime(cast(dk as varchar), '%Y%m%d'), '%Y-%m-%d')",
            Form::TextDayKey => "strftime(strptime(dk, '%Y%m%d'), '%Y-%m-%d')",
            Form::TextMonth => "mk",
            Form::EpochKey => "strftime(make_timestamp(ek * 1000000), '%Y-%m-%d')",
            Form::Hourly => "strftime(timezone('UTC', h), '%Y-%m-%dT%H')",
            _ => "strftime(d, '%Y-%m-%d')",
        }
    }

    /// The grain of what it writes, given its upstream's.
    fn grain(&self) -> &'static str {
        match self {
            Form::Weekly => "week",
            Form::Monthly | Form::MonthlyLag | Form::TextMonth => "month",
            Form::Hourly => "hour",
            _ => "day",
        }
    }

    /// The job's SELECT over `u` (and `w`, for a join).
    fn select(&self, u: &str, w: &str) -> String {
        match self {
            Form::DailySum => format!("select d, sum(v) * 2 as v from {u} group by d"),
            Form::Lag(n) => format!(
                "select d, v - coalesce(lag(v, {n}) over (order by d), 0) as v from {u}"
            ),
            Form::Lead(n) => format!(
                "select d, v + coalesce(lead(v, {n}) over (order by d), 0) as v from {u}"
            ),
            Form::Rows(n) => format!(
                "select d, sum(v) over (order by d rows between {n} preceding and current row) as v from {u}"
            ),
            Form::RowsAhead(n) => format!(
                "select d, sum(v) over (order by d rows between current row and {n} following) as v from {u}"
            ),
            Form::RangeDays(n) => format!(
                "select d, sum(v) over (order by d range between interval '{n} days' preceding and current row) as v from {u}"
            ),
            Form::Cumulative => format!("select d, sum(v) over (order by d) as v from {u}"),
            Form::MonthToDate => format!(
                "select d, sum(v) over (partition by date_trunc('month', d) order by d) as v from {u}"
            ),
            Form::FirstOfMonth => format!(
                "select d, v - first_value(v) over (partition by date_trunc('month', d) order by d) as v from {u}"
            ),
            Form::Weekly => format!(
                "select cast(date_trunc('week', d) as date) as d, sum(v) as v from {u} group by 1"
            ),
            Form::Monthly => format!(
                "select cast(date_trunc('month', d) as date) as d, sum(v) as v from {u} group by 1"
            ),
            Form::Shift(n) => format!(
                "select a.d, a.v - coalesce(b.v, 0) as v from {u} a left join {u} b on b.d = a.d - interval '{n} days'"
            ),
            Form::Between(n) => format!(
                "select a.d, sum(b.v) as v from {u} a join {u} b on b.d between a.d - interval '{n} days' and a.d group by a.d"
            ),
            Form::TopOfDay => "select d, v from (select d, v, row_number() over (partition by d order by v desc, k) as r from raw.events) t where r = 1".to_string(),
            Form::Join => format!(
                "select a.d, a.v + b.v as v from {u} a join {w} b on b.d = a.d"
            ),
            Form::Nested(n, m) => format!(
                "select d, v - coalesce(lag(v, {n}) over (order by d), 0) as v from (select d, sum(v) over (order by d rows between {m} preceding and current row) as v from {u}) t"
            ),
            Form::Ahead(n) => format!(
                "select a.d, coalesce(sum(b.v), 0) as v from {u} a left join {u} b on b.d > a.d and b.d <= a.d + {n} group by a.d"
            ),
            Form::DateDiff(n) => format!(
                "select a.d, sum(b.v) as v from {u} a join {u} b on date_diff('day', b.d, a.d) between 0 and {n} group by a.d"
            ),
            Form::RankByValue => {
                format!("select d, rank() over (order by v desc, d) as v from {u}")
            }
            Form::MonthlyLag => format!(
                "select month_start as d, v - coalesce(lag(v) over (order by month_start), 0) as v from (select cast(date_trunc('month', d) as date) as month_start, sum(v) as v from {u} group by 1) t"
            ),
            Form::IntKey => {
                format!("select cast(strftime(d, '%Y%m%d') as integer) as dk, v from {u}")
            }
            Form::TextDayKey => {
                format!("select strftime(d, '%Y%m%d') as dk, sum(v) as v from {u} group by 1")
            }
            Form::TextMonth => {
                format!("select strftime(d, '%Y-%m') as mk, sum(v) as v from {u} group by 1")
            }
            Form::EpochKey => {
                format!("select cast(epoch(cast(d as timestamp)) as bigint) as ek, v from {u}")
            }
            Form::Hourly => {
                "select date_trunc('hour', ts) as h, sum(v) as v from raw.clicks group by 1"
                    .to_string()
            }
            Form::Zoned(z, _) => format!(
                "select cast(timezone('{}', ts) as date) as d, sum(v) as v from raw.clicks group by 1",
                ZONES[*z]
            ),
        }
    }
}

/// One model of a pipeline.
#[derive(Debug, Clone)]
struct Model {
    sql: String,
    grain: &'static str,
    /// SQL giving a row's partition as text (see [`Form::key_sql`]).
    key: &'static str,
    /// Whether it writes a daily `d date` later jobs may read.
    daily: bool,
    /// Its settings in ripple.yml, if any (`time_zone: ...`).
    yml: String,
}

/// A pipeline: each job's form and the models (earlier ones, by index) it
/// reads. Model 0 is always the daily sum of `raw.events`.
#[derive(Debug, Clone)]
struct Pipeline {
    jobs: Vec<(Form, usize, usize)>,
    /// The corrupted days, as offsets from 2026-01-01, inclusive.
    bad: (i64, i64),
}

fn form() -> impl Strategy<Value = Form> {
    prop_oneof![
        Just(Form::DailySum),
        (1..10i64).prop_map(Form::Lag),
        (1..5i64).prop_map(Form::Lead),
        (1..8i64).prop_map(Form::Rows),
        (1..4i64).prop_map(Form::RowsAhead),
        (1..10i64).prop_map(Form::RangeDays),
        Just(Form::Cumulative),
        Just(Form::MonthToDate),
        Just(Form::FirstOfMonth),
        Just(Form::Weekly),
        Just(Form::Monthly),
        (1..10i64).prop_map(Form::Shift),
        (1..7i64).prop_map(Form::Between),
        Just(Form::TopOfDay),
        Just(Form::Join),
        (1..5i64, 1..5i64).prop_map(|(n, m)| Form::Nested(n, m)),
        (1..8i64).prop_map(Form::Ahead),
        (1..10i64).prop_map(Form::DateDiff),
        Just(Form::RankByValue),
        Just(Form::MonthlyLag),
        Just(Form::IntKey),
        Just(Form::TextDayKey),
        Just(Form::TextMonth),
        Just(Form::EpochKey),
        Just(Form::Hourly),
        (0..ZONES.len(), any::<bool>()).prop_map(|(z, declared)| Form::Zoned(z, declared)),
    ]
}

fn pipeline() -> impl Strategy<Value = Pipeline> {
    (
        proptest::collection::vec((form(), any::<usize>(), any::<usize>()), 1..5),
        0..DAYS,
        0..6i64,
    )
        .prop_map(|(jobs, a, len)| Pipeline {
            jobs,
            bad: (a, (a + len).min(DAYS - 1)),
        })
}

fn date(offset: i64) -> String {
    ripple::time::Grain::Day
        .key(ripple::time::TimeKey::parse("2026-01-01").unwrap().start + offset * 24)
}

impl Pipeline {
    /// Each model, upstreams picked among earlier models writing a daily
    /// `d` (model 0, the daily sum of the raw rows, is always one; model 1
    /// always reads the clicks, hourly).
    fn models(&self) -> Vec<Model> {
        let mut out = vec![Model {
            sql: "select d, sum(v) as v from raw.events group by d".to_string(),
            grain: "day",
            key: "strftime(d, '%Y-%m-%d')",
            daily: true,
            yml: String::new(),
        }];
        let first = (Form::Hourly, 0, 0);
        for (f, a, b) in std::iter::once(&first).chain(&self.jobs) {
            let daily: Vec<usize> = (0..out.len()).filter(|&i| out[i].daily).collect();
            let pick = |x: usize| daily[x % daily.len()];
            let (u, w) = (format!("mart.m{}", pick(*a)), format!("mart.m{}", pick(*b)));
            let sql = if f.reads_daily() {
                f.select(&u, &w)
            } else {
                f.select("raw.events", "raw.events")
            };
            let yml = match f {
                Form::Zoned(z, true) => format!("time_zone: {}", ZONES[*z]),
                _ => String::new(),
            };
            out.push(Model {
                sql,
                grain: f.grain(),
                key: f.key_sql(),
                daily: f.writes_daily_d(),
                yml,
            });
        }
        out
    }

    fn project(&self, dir: &Path) {
        std::fs::create_dir_all(dir.join("jobs")).unwrap();
        let mut yml = "dialect: duckdb\nmodels: [jobs]\ndatasets:\n  raw.events: { grain: day, start: 2026-01-01 }\n  raw.clicks: { grain: hour, start: 2026-01-01 }\n".to_string();
        for (i, m) in self.models().iter().enumerate() {
            std::fs::write(
                dir.join(format!("jobs/m{i}.sql")),
                format!("create or replace table mart.m{i} as\n{};\n", m.sql),
            )
            .unwrap();
            if !m.yml.is_empty() {
                yml.push_str(&format!("  mart.m{i}: {{ {} }}\n", m.yml));
            }
        }
        std::fs::write(dir.join("ripple.yml"), yml).unwrap();
    }

    /// The whole pipeline as one script, on good or corrupted raw rows.
    fn script(&self, bad: bool) -> String {
        let mut s = format!(
            "create schema raw; create schema mart;
create table raw.events as select cast(date '2026-01-01' + to_days(cast(i // 3 as integer)) as date) as d, i % 3 as k, (i * 7919) % 101 as v from range(0, {}) t(i);\n",
            DAYS * 3
        );
        // Two clicks an hour, as instants.
        s.push_str(&format!(
            "create table raw.clicks as select timestamptz '2026-01-01 00:00:00+00' + to_hours(cast(i // 2 as integer)) as ts, i % 2 as k, (i * 7919) % 97 as v from range(0, {}) t(i);\n",
            DAYS * 24 * 2
        ));
        if bad {
            s.push_str(&self.corruption("+"));
        }
        for (i, m) in self.models().iter().enumerate() {
            s.push_str(&format!("create table mart.m{i} as {};\n", m.sql));
        }
        s
    }

    /// The corruption of the raw rows (`+`), or its fix (`-`): the bad
    /// days of events, and the clicks of those UTC days.
    fn corruption(&self, sign: &str) -> String {
        let (from, to) = (date(self.bad.0), date(self.bad.1 + 1));
        format!(
            "update raw.events set v = v {sign} (1000 + k) where d >= date '{from}' and d < date '{to}';
update raw.clicks set v = v {sign} (1000 + k) where ts >= timestamptz '{from} 00:00:00+00' and ts < timestamptz '{to} 00:00:00+00';\n"
        )
    }
}

/// Runs `script` into a new DuckDB file.
fn run_into(duck: &Path, file: &Path, script: &str) -> Result<(), String> {
    let out = Command::new(duck)
        .arg(file)
        .arg("-c")
        .arg(script)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

/// The partition keys of model `i` whose rows differ between the two
/// databases, at its grain.
fn differing(duck: &Path, good: &Path, bad: &Path, models: &[Model]) -> Vec<BTreeSet<String>> {
    let mut q = format!(
        "set TimeZone = 'UTC'; attach '{}' as g (read_only); attach '{}' as b (read_only);\n",
        good.display(),
        bad.display()
    );
    for (i, m) in models.iter().enumerate() {
        q.push_str(&format!(
            "select {i}, {} from ((select * from g.mart.m{i} except all select * from b.mart.m{i}) union all (select * from b.mart.m{i} except all select * from g.mart.m{i})) group by all;\n",
            m.key
        ));
    }
    let models = models.len();
    let out = Command::new(duck)
        .args(["-noheader", "-list", ":memory:", "-c", &q])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut sets = vec![BTreeSet::new(); models];
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        if let Some((i, d)) = line.split_once('|') {
            sets[i.parse::<usize>().unwrap()].insert(d.to_string());
        }
    }
    sets
}

/// ripple's impact, per model: (full, intervals of keys).
fn impact(dir: &Path, from: &str, to: &str) -> BTreeMap<String, (bool, Vec<(String, String)>)> {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "impact",
            "raw.events",
            "raw.clicks",
            "--from",
            from,
            "--to",
            to,
        ])
        .args([
            "--as-of",
            "2026-04-02",
            "--format",
            "json",
            "--no-cache",
            "--project",
        ])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let intervals = d["intervals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    (
                        // No first partition: reaching back to all of history.
                        i["from"].as_str().unwrap_or("0000").to_string(),
                        i["to"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            (
                d["relation"].as_str().unwrap().to_string(),
                (d["full"].as_bool().unwrap(), intervals),
            )
        })
        .collect()
}

/// A partition's key at `grain` from the text a model's key SQL gives:
/// the day, its week's Monday, `YYYY-MM`, or the hour.
fn key_at(day: &str, grain: &str) -> String {
    match grain {
        "month" => day[..7].to_string(),
        _ => day.to_string(),
    }
}

/// Partitions of `grain` inside the data's span that `intervals` hold.
fn count_within(grain: &str, intervals: &[(String, String)], full: bool) -> usize {
    let mut keys = BTreeSet::new();
    if grain == "hour" {
        let start = ripple::time::TimeKey::parse("2026-01-01").unwrap().start;
        return (0..DAYS * 24)
            .map(|h| ripple::time::Grain::Hour.key(start + h))
            .filter(|k| full || intervals.iter().any(|(a, b)| a <= k && k <= b))
            .count();
    }
    for o in 0..DAYS {
        let day = date(o);
        let k = match grain {
            "week" => {
                let t = ripple::time::TimeKey::parse(&day).unwrap().start;
                ripple::time::Grain::Week.key(ripple::time::Grain::Week.floor(t))
            }
            g => key_at(&day, g),
        };
        if full || intervals.iter().any(|(a, b)| *a <= k && k <= *b) {
            keys.insert(k);
        }
    }
    keys.len()
}

/// The DuckDB CLI, how many pipelines to run (`var`, else `default`), and
/// a runner for them that saves no failures (a case shrinks in the log).
fn oracle(var: &str, default: u32) -> Option<(std::path::PathBuf, u32, TestRunner)> {
    let found = std::env::var_os("RIPPLE_TEST_DUCKDB").map(std::path::PathBuf::from);
    let duck = engines::require(found, "the DuckDB CLI")?;
    let cases: u32 = std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    Some((duck, cases, runner))
}

#[test]
fn impact_is_never_short_of_what_really_changed() {
    let Some((duck, cases, mut runner)) = oracle("RIPPLE_ORACLE_CASES", 300) else {
        return;
    };
    // Per grain: partitions that really changed, those ripple claims,
    // datasets.
    let totals = std::cell::RefCell::new(BTreeMap::<&str, (usize, usize, usize)>::new());
    let result = runner.run(&pipeline(), |p| {
        let dir = tempfile::tempdir().unwrap();
        p.project(dir.path());
        let (good, bad) = (dir.path().join("good.db"), dir.path().join("bad.db"));
        run_into(&duck, &good, &p.script(false)).map_err(TestCaseError::fail)?;
        run_into(&duck, &bad, &p.script(true)).map_err(TestCaseError::fail)?;
        let models = p.models();
        let truth = differing(&duck, &good, &bad, &models);
        let got = impact(dir.path(), &date(p.bad.0), &date(p.bad.1));
        for (i, Model { sql, grain, .. }) in models.iter().enumerate() {
            let relation = format!("mart.m{i}");
            let (full, intervals) = got.get(&relation).cloned().unwrap_or_default();
            for day in &truth[i] {
                let k = key_at(day, grain);
                prop_assert!(
                    full || intervals.iter().any(|(a, b)| *a <= k && k <= *b),
                    "{relation} ({grain}) really changed in {k}, but ripple's impact is {intervals:?} (full: {full}); its SQL: {sql}\nthe pipeline: {:#?}",
                    models.iter().map(|m| &m.sql).collect::<Vec<_>>()
                );
            }
            let mut all = totals.borrow_mut();
            let t = all.entry(grain).or_default();
            t.0 += truth[i].len();
            t.1 += count_within(grain, &intervals, full);
            t.2 += 1;
        }
        Ok(())
    });
    let (mut truth, mut claimed, mut datasets) = (0, 0, 0);
    for (grain, (t, c, d)) in totals.borrow().iter() {
        eprintln!(
            "oracle: {grain}: {d} datasets, {t} partitions really changed, ripple's impact holds {c} ({:.2}x)",
            *c as f64 / (*t).max(1) as f64
        );
        (truth, claimed, datasets) = (truth + t, claimed + c, datasets + d);
    }
    eprintln!(
        "oracle: {cases} pipelines, {datasets} datasets: {truth} partitions really changed, ripple's impact holds {claimed} of the data's partitions ({:.2}x)",
        claimed as f64 / truth.max(1) as f64
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn a_plan_restores_exactly_what_a_recompute_gives() {
    let Some((duck, cases, mut runner)) = oracle("RIPPLE_ORACLE_PLANS", 40) else {
        return;
    };
    let counts = std::cell::RefCell::new((0usize, 0usize, String::new()));
    let result = runner.run(&pipeline(), |p| {
        let dir = tempfile::tempdir().unwrap();
        p.project(dir.path());
        // Every model starts with the data (a zone west of UTC has its
        // first clicks on the day before): a window reaching all of time
        // is bounded, as a team would declare it.
        let mut yml = std::fs::read_to_string(dir.path().join("ripple.yml"))
            .unwrap()
            .replace("start: 2026-01-01 }", "start: 2026-01-01, partition_column: d }")
            .replace("grain: hour, start: 2026-01-01, partition_column: d }", "grain: hour, start: 2026-01-01, partition_column: ts }");
        for (i, m) in p.models().iter().enumerate() {
            let zone = m.yml.strip_prefix("time_zone: ");
            let line = format!("  mart.m{i}: {{ {} }}\n", m.yml);
            let start = format!(
                "  mart.m{i}: {{ start: 2025-12-31{} }}\n",
                zone.map(|z| format!(", time_zone: {z}")).unwrap_or_default()
            );
            if m.yml.is_empty() {
                yml.push_str(&start);
            } else {
                yml = yml.replace(&line, &start);
            }
        }
        std::fs::write(dir.path().join("ripple.yml"), yml).unwrap();
        let (good, bad) = (dir.path().join("good.db"), dir.path().join("bad.db"));
        run_into(&duck, &good, &p.script(false)).map_err(TestCaseError::fail)?;
        run_into(&duck, &bad, &p.script(true)).map_err(TestCaseError::fail)?;
        run_into(&duck, &bad, &p.corruption("-")).map_err(TestCaseError::fail)?;
        let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args(["plan", "raw.events", "raw.clicks", "--from", &date(p.bad.0), "--to", &date(p.bad.1)])
            .args(["--as-of", "2026-04-02", "--format", "shell", "--no-cache", "--project"])
            .arg(dir.path())
            .output()
            .unwrap();
        if !out.status.success() {
            // A refusal is an answer (it names what to declare), not a
            // wrong plan; the impact test holds ripple to the truth.
            let err = String::from_utf8_lossy(&out.stderr);
            prop_assert!(err.contains("refusing") || err.contains("no partition column"), "{err}");
            let mut c = counts.borrow_mut();
            c.1 += 1;
            c.2 = err.lines().next().unwrap_or_default().to_string();
            return Ok(());
        }
        let script = dir.path().join("plan.sh");
        std::fs::write(&script, &out.stdout).unwrap();
        let run = Command::new("bash")
            .arg(&script)
            .env(
                "RIPPLE_SQL",
                format!("{} -noheader -list -bail {} -c", duck.display(), bad.display()),
            )
            .output()
            .unwrap();
        prop_assert!(
            run.status.success(),
            "the plan failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let models = p.models();
        let left = differing(&duck, &good, &bad, &models);
        for (i, keys) in left.iter().enumerate() {
            prop_assert!(
                keys.is_empty(),
                "after the plan mart.m{i} still differs from the recompute in {keys:?}; the pipeline: {models:#?}"
            );
        }
        counts.borrow_mut().0 += 1;
        Ok(())
    });
    let (ran, refused, last) = counts.borrow().clone();
    eprintln!(
        "plan oracle: {ran} plans ran and equal the recompute, {refused} refused (last: {last})"
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        ran * 2 >= cases as usize,
        "too few plans ran: {ran} of {cases}; {last}"
    );
}
